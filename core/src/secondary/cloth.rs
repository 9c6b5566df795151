//! Mass-spring cloth and ropes (capes, skirts, flags, cables), integrated
//! position-based (XPBD) so stiff springs stay stable at game time steps.
//!
//! # Model
//!
//! A cloth is a set of particles joined by distance constraints
//! ([`Constraint`]): *structural* ones along the edges of a grid or rope,
//! *shear* ones across the diagonals of each grid cell and *bending* ones
//! that skip a particle. Each constraint has a rest length (m) and a
//! compliance (m/N, the inverse of a spring stiffness; 0 is rigid).
//! Particles with inverse mass 0 do not move by themselves: a [`Pin`] ties
//! one to a point fixed in a joint's frame, moved every frame by the joint's
//! model matrix; an unpinned particle of inverse mass 0 stays where the
//! caller puts it. Particles are balls of [`Settings::radius`] that are
//! pushed out of the character's [`Collider`]s.
//!
//! A cloth hanging from pins also wants *tethers* ([`build_tethers`]):
//! one-sided long-range attachments from each free particle to its nearest
//! pin, which cap its distance from the pin at the rest distance. Without
//! them the error of a few Gauss-Seidel sweeps accumulates down a long
//! hanging chain (a 32-particle rope at 4 sub-steps of 4 sweeps stretches
//! by about 12 %); with them it stays under 0.5 %.
//!
//! The immutable part ([`Cloth`]: inverse masses, constraints, pins) is
//! validated once by [`Cloth::new`]; the state that changes every frame
//! ([`ClothState`]: positions, velocities and a per-constraint scratch) is
//! structure-of-arrays in caller slices. [`build_rope`] and [`build_grid`]
//! fill those slices for a rope and a rectangular cape or flag;
//! [`rope_constraint_count`] and [`grid_constraint_count`] tell how many
//! constraints to allocate.
//!
//! # Integration
//!
//! [`step`] cuts the frame's `dt` into equal sub-steps with [`SubSteps`]
//! (a hitch longer than `max_step · max_substeps` is clamped; the dropped
//! time is in the returned [`SubSteps`]). Each sub-step of length `h`:
//!
//! 1. **Predict** (f32x4 lanes over the SoA arrays, scalar tail): the
//!    velocity relaxes towards the wind's, `v ← wind + (v − wind) / (1 +
//!    drag·h)` (implicit, so stable for any drag), gravity adds `g·h`, and
//!    each particle of non-zero inverse mass moves by `v·h`.
//! 2. **Pins**: each pinned particle moves a `1 / remaining` fraction of
//!    the way to its joint target, and lands on it exactly at the frame's
//!    last sub-step, so a fast joint does not jerk the cloth.
//! 3. **Constraints**: `iterations` Gauss-Seidel sweeps of XPBD distance
//!    projections, in the order of the constraint list: for `C = |a − b| −
//!    rest`, `α̃ = compliance / h²`, `Δλ = (−C − α̃·λ) / (w_a + w_b + α̃)`.
//!    The stretch at rest under a load `F` is `compliance · F` whatever the
//!    sub-step and iteration counts (once the sweeps converge). Tethers
//!    are one-sided (their multiplier only pulls). This part is scalar:
//!    Gauss-Seidel reads the positions the previous constraint wrote, which
//!    is what makes it converge quickly on a hanging cape ordered from its
//!    pinned edge down; a graph-coloured Jacobi in lanes would vectorise it
//!    but needs more sweeps for the same strain. Under heavy motion the
//!    sweeps do not fully converge: a 16 × 16 cape whose shoulders run in
//!    1 m circles at 3 m/s stretches its edges by up to about 5 % at 4
//!    sub-steps of 4 sweeps (more sub-steps lower it); hanging, it settles
//!    under 1 %.
//! 4. **Collisions** (scalar), after every sweep: each free particle is
//!    pushed out of every collider in list order ([`Collider::push_out`]),
//!    so the next sweep spreads a push-out over the edges around it; after
//!    the last sweep `friction` of its sliding along the surface during
//!    this sub-step is also removed.
//! 5. **Velocities** (lanes): `v = (x − x_before) / h`, then clamped to
//!    `max_speed`, so a collider that teleports into the cloth cannot fling
//!    it away.
//!
//! The state keeps velocities (m/s) rather than previous positions, so a
//! frame whose sub-step differs from the last frame's keeps the motion
//! right; during a sub-step the velocity arrays hold the positions before
//! it.
//!
//! Everything runs in a fixed order with no data-dependent scheduling, so
//! the same inputs give the same bits on every run. [`reference::step`] is
//! the scalar twin (the predict and velocity passes without lanes); the two
//! agree within 1e-5 (bit for bit where the target fuses no multiply-add).

use wide::f32x4;

use crate::fp::Fp;
use crate::math::{sqrt4, sqrt_f32, Mat4, Vec3};
use crate::secondary::collider::Collider;
use crate::secondary::SubSteps;
use crate::Error;

/// The shortest frame [`step`] accepts, seconds. Shorter (but positive)
/// frames are rejected: `1 / h²` of a shorter sub-step would lose the
/// compliances' precision and, far below it, overflow.
pub const MIN_STEP: f32 = 1e-6;

/// What a constraint models. The solver treats all kinds alike; the kind
/// lets a caller measure or tune one family (e.g. edge strain from the
/// structural constraints only).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum ConstraintKind {
    /// Along a rope or a grid edge: keeps the cloth from stretching.
    Structural = 0,
    /// Across a grid cell's diagonal: keeps cells from shearing.
    Shear = 1,
    /// Between particles two apart: resists folding.
    Bend = 2,
    /// A long-range attachment from a free particle to a pinned one
    /// ([`build_tethers`]): one-sided, it only pulls when the particle is
    /// further than `rest` from the pin, which bounds the stretch of a
    /// hanging cloth whatever the iteration count.
    Tether = 3,
}

/// A distance constraint (a spring when compliance > 0) between two
/// particles.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Constraint {
    /// First particle.
    pub a: u32,
    /// Second particle (≠ `a`).
    pub b: u32,
    /// Rest length, metres (finite, ≥ 0; 0 holds the two particles
    /// together).
    pub rest: f32,
    /// Compliance, metres per newton (finite, ≥ 0): the inverse stiffness;
    /// 0 is rigid.
    pub compliance: f32,
    /// Structural, shear or bend.
    pub kind: ConstraintKind,
}

/// A particle held at a point fixed in a joint's frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pin {
    /// The pinned particle (its inverse mass must be 0).
    pub particle: u32,
    /// The joint whose model matrix moves the point.
    pub joint: u16,
    /// The point in the joint's frame.
    pub offset: Vec3,
}

impl Pin {
    /// A pin that holds `particle` at `position` (model space) as long as
    /// joint `joint` keeps the model matrix `model`: the offset is
    /// `position` in the joint's frame.
    ///
    /// # Errors
    /// [`Error::NonFinite`] for a non-finite position or matrix,
    /// [`Error::SingularTransform`] when `model` cannot be inverted.
    pub fn at(particle: u32, joint: u16, model: &Mat4, position: Vec3) -> Result<Pin, Error> {
        if !position.is_finite() {
            return Err(Error::NonFinite {
                what: "pin position",
            });
        }
        if !model.is_finite() {
            return Err(Error::NonFinite {
                what: "pin joint model matrix",
            });
        }
        let inverse = model.inverse_affine().ok_or(Error::SingularTransform {
            joint: joint.into(),
        })?;
        let offset = inverse.transform_point(position);
        if !offset.is_finite() {
            return Err(Error::SingularTransform {
                joint: joint.into(),
            });
        }
        Ok(Pin {
            particle,
            joint,
            offset,
        })
    }

    /// The pinned point in model space for the joints' model matrices
    /// `models` (`None` when the joint is outside `models`).
    #[inline]
    #[must_use]
    pub fn target(&self, models: &[Mat4]) -> Option<Vec3> {
        models
            .get(usize::from(self.joint))
            .map(|m| m.transform_point(self.offset))
    }
}

/// The immutable part of a cloth, validated once: per-particle inverse
/// masses, the constraint list and the pins.
#[derive(Clone, Copy, Debug)]
pub struct Cloth<'a> {
    inv_mass: &'a [f32],
    constraints: &'a [Constraint],
    pins: &'a [Pin],
}

impl<'a> Cloth<'a> {
    /// Checks and wraps a cloth: `inv_mass[i]` is particle `i`'s inverse
    /// mass (1/kg; 0 = does not move by itself), so the cloth has
    /// `inv_mass.len()` particles.
    ///
    /// # Errors
    /// - [`Error::NonFinite`] for a NaN or infinite inverse mass, rest
    ///   length, compliance or pin offset.
    /// - [`Error::InvalidParameter`] for a negative inverse mass, rest
    ///   length or compliance, a constraint or pin naming a particle outside
    ///   the cloth, a constraint joining a particle to itself, a pinned
    ///   particle whose inverse mass is not 0, or more than `u32::MAX + 1`
    ///   particles.
    pub fn new(
        inv_mass: &'a [f32],
        constraints: &'a [Constraint],
        pins: &'a [Pin],
    ) -> Result<Cloth<'a>, Error> {
        let n = inv_mass.len();
        if u32::try_from(n.saturating_sub(1)).is_err() {
            return Err(Error::InvalidParameter {
                what: "a cloth holds at most 2^32 particles",
            });
        }
        check_inv_masses(inv_mass)?;
        for c in constraints {
            if c.a as usize >= n || c.b as usize >= n {
                return Err(Error::InvalidParameter {
                    what: "constraint names a particle outside the cloth",
                });
            }
            if c.a == c.b {
                return Err(Error::InvalidParameter {
                    what: "constraint joins a particle to itself",
                });
            }
            finite_non_negative(
                c.rest,
                "constraint rest length",
                "constraint rest length must not be negative",
            )?;
            finite_non_negative(
                c.compliance,
                "constraint compliance",
                "constraint compliance must not be negative",
            )?;
        }
        for p in pins {
            let Some(&w) = inv_mass.get(p.particle as usize) else {
                return Err(Error::InvalidParameter {
                    what: "pin names a particle outside the cloth",
                });
            };
            if w != 0.0 {
                return Err(Error::InvalidParameter {
                    what: "a pinned particle must have inverse mass 0",
                });
            }
            if !p.offset.is_finite() {
                return Err(Error::NonFinite { what: "pin offset" });
            }
        }
        Ok(Cloth {
            inv_mass,
            constraints,
            pins,
        })
    }

    /// Number of particles.
    #[inline]
    #[must_use]
    pub fn particle_count(&self) -> usize {
        self.inv_mass.len()
    }

    /// The inverse masses.
    #[inline]
    #[must_use]
    pub fn inv_mass(&self) -> &'a [f32] {
        self.inv_mass
    }

    /// The constraints, in solving order.
    #[inline]
    #[must_use]
    pub fn constraints(&self) -> &'a [Constraint] {
        self.constraints
    }

    /// The pins.
    #[inline]
    #[must_use]
    pub fn pins(&self) -> &'a [Pin] {
        self.pins
    }

    /// The largest strain `| |a − b| − rest | / rest` over the constraints
    /// of `kind` (all kinds for `None`) for positions `x`, `y`, `z`;
    /// constraints of rest length 0 and particles outside the slices are
    /// skipped, and 0 is returned when nothing is measured.
    #[must_use]
    pub fn max_strain(&self, x: &[f32], y: &[f32], z: &[f32], kind: Option<ConstraintKind>) -> f32 {
        let mut worst = 0.0f32;
        for c in self.constraints {
            if kind.is_some_and(|k| k != c.kind) || c.rest <= 0.0 {
                continue;
            }
            let (a, b) = (c.a as usize, c.b as usize);
            let (Some(pa), Some(pb)) = (point(x, y, z, a), point(x, y, z, b)) else {
                continue;
            };
            let strain = ((pa - pb).length() - c.rest).abs() / c.rest;
            // NaN positions must show, not vanish in `max`.
            if strain.is_nan() {
                return f32::NAN;
            }
            worst = worst.max(strain);
        }
        worst
    }
}

fn point(x: &[f32], y: &[f32], z: &[f32], i: usize) -> Option<Vec3> {
    Some(Vec3::new(*x.get(i)?, *y.get(i)?, *z.get(i)?))
}

/// The per-frame state of a cloth, structure of arrays in caller slices.
/// Each particle slice holds at least [`Cloth::particle_count`] entries
/// (entries past it are neither read nor written).
#[derive(Debug)]
pub struct ClothState<'a> {
    /// Positions, x (model space, metres).
    pub x: &'a mut [f32],
    /// Positions, y.
    pub y: &'a mut [f32],
    /// Positions, z.
    pub z: &'a mut [f32],
    /// Velocities, x (metres per second).
    pub vx: &'a mut [f32],
    /// Velocities, y.
    pub vy: &'a mut [f32],
    /// Velocities, z.
    pub vz: &'a mut [f32],
    /// Scratch for the solver, one entry per constraint (at least the
    /// constraint count); its contents between steps mean nothing.
    pub lambda: &'a mut [f32],
}

/// The forces and solver budget of a step. These may change every frame
/// (gusts of wind, a character entering water) and are checked by every
/// [`step`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings {
    /// Acceleration of gravity, m/s² (finite).
    pub gravity: Vec3,
    /// Velocity of the air, m/s (finite); with `drag` it pulls the cloth
    /// along.
    pub wind: Vec3,
    /// Air drag, 1/s (finite, ≥ 0): the rate at which a particle's velocity
    /// relaxes to the wind's.
    pub drag: f32,
    /// Particle radius for collisions, metres (finite, ≥ 0): the cloth's
    /// thickness.
    pub radius: f32,
    /// Share of the sliding along a collider removed per contact (0 =
    /// frictionless, 1 = sticks), in 0..=1.
    pub friction: f32,
    /// Largest speed a particle keeps after a sub-step, m/s (> 0; infinity
    /// for no limit).
    pub max_speed: f32,
    /// Longest sub-step, seconds (finite, ≥ [`MIN_STEP`]).
    pub max_step: f32,
    /// Most sub-steps per frame (≥ 1); a longer frame is clamped.
    pub max_substeps: u32,
    /// Constraint sweeps per sub-step (≥ 1).
    pub iterations: u32,
}

impl Default for Settings {
    /// Earth gravity along −Y, still air, drag 0.5/s, 1 cm particles,
    /// friction 0.3, at most 50 m/s, sub-steps of at most 1/120 s, at most 8
    /// of them, 4 sweeps each.
    fn default() -> Self {
        Settings {
            gravity: Vec3::new(0.0, -9.81, 0.0),
            wind: Vec3::ZERO,
            drag: 0.5,
            radius: 0.01,
            friction: 0.3,
            max_speed: 50.0,
            max_step: 1.0 / 120.0,
            max_substeps: 8,
            iterations: 4,
        }
    }
}

impl Settings {
    /// Checks every field against its documented range.
    ///
    /// # Errors
    /// [`Error::NonFinite`] for a NaN or infinite gravity, wind, drag,
    /// radius or friction (or a NaN maximum speed),
    /// [`Error::InvalidParameter`] for a value outside its range.
    pub fn validate(&self) -> Result<(), Error> {
        if !self.gravity.is_finite() {
            return Err(Error::NonFinite { what: "gravity" });
        }
        if !self.wind.is_finite() {
            return Err(Error::NonFinite { what: "wind" });
        }
        for (v, what) in [
            (self.drag, "drag"),
            (self.radius, "particle radius"),
            (self.friction, "friction"),
        ] {
            if !v.is_finite() {
                return Err(Error::NonFinite { what });
            }
        }
        if self.max_speed.is_nan() {
            return Err(Error::NonFinite { what: "max speed" });
        }
        if self.drag < 0.0 {
            return Err(Error::InvalidParameter {
                what: "drag must not be negative",
            });
        }
        if self.radius < 0.0 {
            return Err(Error::InvalidParameter {
                what: "particle radius must not be negative",
            });
        }
        if !(0.0..=1.0).contains(&self.friction) {
            return Err(Error::InvalidParameter {
                what: "friction must be in 0..=1",
            });
        }
        if self.max_speed <= 0.0 {
            return Err(Error::InvalidParameter {
                what: "max speed must be positive",
            });
        }
        if !(self.max_step.is_finite() && self.max_step >= MIN_STEP) {
            return Err(Error::InvalidParameter {
                what: "max sub-step must be finite and at least MIN_STEP",
            });
        }
        if self.max_substeps == 0 {
            return Err(Error::InvalidParameter {
                what: "max sub-step count must be at least 1",
            });
        }
        if self.iterations == 0 {
            return Err(Error::InvalidParameter {
                what: "iterations must be at least 1",
            });
        }
        Ok(())
    }
}

/// Compliances (m/N, finite, ≥ 0) the builders give each kind of
/// constraint.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Compliance {
    /// Along the edges.
    pub structural: f32,
    /// Across the cells' diagonals (grids only).
    pub shear: f32,
    /// Between particles two apart.
    pub bend: f32,
}

/// What a builder wrote: the first `particles` entries of the particle
/// slices and the first `constraints` entries of the constraint slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Built {
    /// Particles written.
    pub particles: usize,
    /// Constraints written.
    pub constraints: usize,
}

/// Constraints a rope of `particles` particles needs: `particles − 1`
/// structural and `particles − 2` bending ones (none below 2 particles).
#[inline]
#[must_use]
pub const fn rope_constraint_count(particles: usize) -> usize {
    particles.saturating_sub(1) + particles.saturating_sub(2)
}

/// Constraints a grid of `columns × rows` particles needs: structural
/// `(c − 1)·r + c·(r − 1)`, shear `2·(c − 1)·(r − 1)` and bending `(c −
/// 2)·r + c·(r − 2)` (each term 0 where a count would be negative;
/// saturates at `usize::MAX`, far beyond any grid that fits in memory).
#[inline]
#[must_use]
pub const fn grid_constraint_count(columns: usize, rows: usize) -> usize {
    let (c, r) = (columns, rows);
    let (c1, r1) = (c.saturating_sub(1), r.saturating_sub(1));
    let (c2, r2) = (c.saturating_sub(2), r.saturating_sub(2));
    let structural = c1.saturating_mul(r).saturating_add(c.saturating_mul(r1));
    let shear = c1.saturating_mul(r1).saturating_mul(2);
    let bend = c2.saturating_mul(r).saturating_add(c.saturating_mul(r2));
    structural.saturating_add(shear).saturating_add(bend)
}

/// A straight rope for [`build_rope`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rope {
    /// Number of particles (≥ 2).
    pub particles: usize,
    /// Position of particle 0, model space.
    pub start: Vec3,
    /// Position of the last particle (≠ `start`).
    pub end: Vec3,
    /// Mass of each particle, kg (finite, > 0).
    pub particle_mass: f32,
    /// Structural and bending compliances (shear is unused).
    pub compliance: Compliance,
}

/// A rectangular grid (cape, skirt panel, flag) for [`build_grid`]:
/// particle `(column, row)` is index `row · columns + column`, at
/// `origin + across · column + down · row`. Row 0 is the edge one usually
/// pins.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Grid {
    /// Particles along a row (≥ 1).
    pub columns: usize,
    /// Rows (≥ 1).
    pub rows: usize,
    /// Position of particle (0, 0), model space.
    pub origin: Vec3,
    /// Step from one column to the next, metres (finite, non-zero).
    pub across: Vec3,
    /// Step from one row to the next, metres (finite, non-zero, not
    /// parallel to `across`).
    pub down: Vec3,
    /// Mass of each particle, kg (finite, > 0).
    pub particle_mass: f32,
    /// Compliances of the three kinds.
    pub compliance: Compliance,
}

/// `v` finite (else [`Error::NonFinite`] naming `what`) and not negative
/// (else [`Error::InvalidParameter`] with `negative`).
fn finite_non_negative(v: f32, what: &'static str, negative: &'static str) -> Result<(), Error> {
    if !v.is_finite() {
        return Err(Error::NonFinite { what });
    }
    if v < 0.0 {
        return Err(Error::InvalidParameter { what: negative });
    }
    Ok(())
}

/// Every inverse mass finite and not negative.
fn check_inv_masses(inv_mass: &[f32]) -> Result<(), Error> {
    for &w in inv_mass {
        finite_non_negative(
            w,
            "particle inverse mass",
            "particle inverse mass must not be negative",
        )?;
    }
    Ok(())
}

fn check_compliance(c: &Compliance) -> Result<(), Error> {
    for v in [c.structural, c.shear, c.bend] {
        finite_non_negative(
            v,
            "constraint compliance",
            "constraint compliance must not be negative",
        )?;
    }
    Ok(())
}

fn check_mass(mass: f32) -> Result<f32, Error> {
    if !mass.is_finite() {
        return Err(Error::NonFinite {
            what: "particle mass",
        });
    }
    let inv = 1.0 / mass;
    if !(mass > 0.0 && inv.is_finite()) {
        return Err(Error::InvalidParameter {
            what: "particle mass must be positive",
        });
    }
    Ok(inv)
}

fn check_outputs(
    state: &ClothState<'_>,
    inv_mass: &[f32],
    constraints: &[Constraint],
    particles: usize,
    needed: usize,
) -> Result<(), Error> {
    for (buffer, len) in [
        ("x", state.x.len()),
        ("y", state.y.len()),
        ("z", state.z.len()),
        ("vx", state.vx.len()),
        ("vy", state.vy.len()),
        ("vz", state.vz.len()),
        ("inverse masses", inv_mass.len()),
    ] {
        if len < particles {
            return Err(Error::BadLength {
                buffer,
                expected: particles,
                actual: len,
            });
        }
    }
    if constraints.len() < needed {
        return Err(Error::BadLength {
            buffer: "constraints",
            expected: needed,
            actual: constraints.len(),
        });
    }
    Ok(())
}

fn put(state: &mut ClothState<'_>, i: usize, p: Vec3) {
    state.x[i] = p.x;
    state.y[i] = p.y;
    state.z[i] = p.z;
    state.vx[i] = 0.0;
    state.vy[i] = 0.0;
    state.vz[i] = 0.0;
}

/// Writes a straight rope: particle positions (at rest, velocity 0),
/// inverse masses `1 / particle_mass` (zero the ones you pin), then the
/// constraints: all structural ones from particle 0 on, then the bending
/// ones, rest lengths from the positions. `state.lambda` is not touched.
///
/// # Errors
/// [`Error::InvalidParameter`] for fewer than 2 or more than 2^32
/// particles, `start == end`, or a bad mass or compliance;
/// [`Error::NonFinite`] for a non-finite end, mass or compliance;
/// [`Error::BadLength`] when a slice is too short (nothing is written
/// then).
pub fn build_rope(
    rope: &Rope,
    state: &mut ClothState<'_>,
    inv_mass: &mut [f32],
    constraints: &mut [Constraint],
) -> Result<Built, Error> {
    let n = rope.particles;
    if n < 2 || u32::try_from(n - 1).is_err() {
        return Err(Error::InvalidParameter {
            what: "a rope has 2 to 2^32 particles",
        });
    }
    if !(rope.start.is_finite() && rope.end.is_finite()) {
        return Err(Error::NonFinite { what: "rope end" });
    }
    let span = rope.end - rope.start;
    if span.length_squared() <= 0.0 {
        return Err(Error::InvalidParameter {
            what: "rope start and end must differ",
        });
    }
    let inv = check_mass(rope.particle_mass)?;
    check_compliance(&rope.compliance)?;
    let needed = rope_constraint_count(n);
    check_outputs(state, inv_mass, constraints, n, needed)?;
    let last = (n - 1) as f32;
    let at = |i: usize| rope.start + span * (i as f32 / last);
    for (i, w) in inv_mass[..n].iter_mut().enumerate() {
        put(state, i, at(i));
        *w = inv;
    }
    let mut k = 0;
    let mut link = |a: usize, b: usize, compliance: f32, kind: ConstraintKind| {
        constraints[k] = Constraint {
            a: a as u32,
            b: b as u32,
            rest: (at(a) - at(b)).length(),
            compliance,
            kind,
        };
        k += 1;
    };
    for i in 1..n {
        link(
            i - 1,
            i,
            rope.compliance.structural,
            ConstraintKind::Structural,
        );
    }
    for i in 2..n {
        link(i - 2, i, rope.compliance.bend, ConstraintKind::Bend);
    }
    debug_assert_eq!(k, needed);
    Ok(Built {
        particles: n,
        constraints: needed,
    })
}

/// Writes a rectangular grid: particle positions (at rest, velocity 0),
/// inverse masses `1 / particle_mass` (zero the ones you pin, usually row
/// 0), then the constraints row by row from row 0 (the row's structural
/// edges, the structural edges down to the next row, the two diagonals of
/// each cell below), then the bending ones (along rows, then down
/// columns), rest lengths from the positions. The count is
/// [`grid_constraint_count`]. `state.lambda` is not touched.
///
/// # Errors
/// [`Error::InvalidParameter`] for a zero dimension, more than 2^32
/// particles, a zero or parallel `across` / `down`, or a bad mass or
/// compliance; [`Error::NonFinite`] for non-finite vectors, mass or
/// compliance; [`Error::BadLength`] when a slice is too short (nothing is
/// written then).
pub fn build_grid(
    grid: &Grid,
    state: &mut ClothState<'_>,
    inv_mass: &mut [f32],
    constraints: &mut [Constraint],
) -> Result<Built, Error> {
    let (cols, rows) = (grid.columns, grid.rows);
    let n = cols.saturating_mul(rows);
    if n == 0 || u32::try_from(n - 1).is_err() {
        return Err(Error::InvalidParameter {
            what: "a grid has 1 to 2^32 particles",
        });
    }
    if !(grid.origin.is_finite() && grid.across.is_finite() && grid.down.is_finite()) {
        return Err(Error::NonFinite {
            what: "grid origin or step",
        });
    }
    let area2 = grid.across.cross(grid.down).length_squared();
    if area2.is_nan() || area2 <= 0.0 {
        return Err(Error::InvalidParameter {
            what: "grid steps must be non-zero and not parallel",
        });
    }
    let inv = check_mass(grid.particle_mass)?;
    check_compliance(&grid.compliance)?;
    let needed = grid_constraint_count(cols, rows);
    check_outputs(state, inv_mass, constraints, n, needed)?;
    let at = |c: usize, r: usize| grid.origin + grid.across * c as f32 + grid.down * r as f32;
    for r in 0..rows {
        for c in 0..cols {
            put(state, r * cols + c, at(c, r));
            inv_mass[r * cols + c] = inv;
        }
    }
    let cc = grid.compliance;
    let mut k = 0;
    let mut link = |(c0, r0): (usize, usize), (c1, r1): (usize, usize), kind: ConstraintKind| {
        let compliance = match kind {
            ConstraintKind::Structural => cc.structural,
            ConstraintKind::Shear => cc.shear,
            ConstraintKind::Bend | ConstraintKind::Tether => cc.bend,
        };
        constraints[k] = Constraint {
            a: (r0 * cols + c0) as u32,
            b: (r1 * cols + c1) as u32,
            rest: (at(c0, r0) - at(c1, r1)).length(),
            compliance,
            kind,
        };
        k += 1;
    };
    use ConstraintKind::{Bend, Shear, Structural};
    for r in 0..rows {
        for c in 1..cols {
            link((c - 1, r), (c, r), Structural);
        }
        if r + 1 < rows {
            for c in 0..cols {
                link((c, r), (c, r + 1), Structural);
            }
            for c in 1..cols {
                link((c - 1, r), (c, r + 1), Shear);
                link((c, r), (c - 1, r + 1), Shear);
            }
        }
    }
    for r in 0..rows {
        for c in 2..cols {
            link((c - 2, r), (c, r), Bend);
        }
    }
    for r in 2..rows {
        for c in 0..cols {
            link((c, r - 2), (c, r), Bend);
        }
    }
    debug_assert_eq!(k, needed);
    Ok(Built {
        particles: n,
        constraints: needed,
    })
}

/// Tethers [`build_tethers`] writes for these inverse masses: one per
/// free particle (inverse mass > 0) when at least one particle is fixed,
/// otherwise none.
#[must_use]
pub fn tether_count(inv_mass: &[f32]) -> usize {
    if inv_mass.contains(&0.0) {
        inv_mass.iter().filter(|&&w| w > 0.0).count()
    } else {
        0
    }
}

/// Writes a [`ConstraintKind::Tether`] (compliance 0) from every free
/// particle to the nearest fixed one (inverse mass 0; the lowest index on
/// a tie), rest length `(1 + slack)` times their distance now, so call it
/// on the rest shape (a flat grid's straight distances are the shortest
/// paths through the cloth, so the tethers never hold a fold or a drape
/// back). Returns how many it wrote ([`tether_count`]); append them after
/// the other constraints, so each sweep ends by pulling overstretched
/// particles back within reach of their pins. Costs one pass over the
/// fixed particles per free particle, once, at set-up.
///
/// # Errors
/// [`Error::BadLength`] when `y`, `z` or `x` is shorter than `inv_mass`,
/// or `out` shorter than [`tether_count`]; [`Error::NonFinite`] for a
/// non-finite position, inverse mass or slack; [`Error::InvalidParameter`]
/// for a negative slack or inverse mass, or more than 2^32 particles.
pub fn build_tethers(
    x: &[f32],
    y: &[f32],
    z: &[f32],
    inv_mass: &[f32],
    slack: f32,
    out: &mut [Constraint],
) -> Result<usize, Error> {
    let n = inv_mass.len();
    if u32::try_from(n.saturating_sub(1)).is_err() {
        return Err(Error::InvalidParameter {
            what: "a cloth holds at most 2^32 particles",
        });
    }
    for (buffer, len) in [("x", x.len()), ("y", y.len()), ("z", z.len())] {
        if len < n {
            return Err(Error::BadLength {
                buffer,
                expected: n,
                actual: len,
            });
        }
    }
    finite_non_negative(slack, "tether slack", "tether slack must not be negative")?;
    check_inv_masses(inv_mass)?;
    if !(all_finite(&x[..n]) && all_finite(&y[..n]) && all_finite(&z[..n])) {
        return Err(Error::NonFinite {
            what: "particle position",
        });
    }
    let count = tether_count(inv_mass);
    if out.len() < count {
        return Err(Error::BadLength {
            buffer: "tethers",
            expected: count,
            actual: out.len(),
        });
    }
    if count == 0 {
        return Ok(0);
    }
    let mut k = 0;
    for i in (0..n).filter(|&i| inv_mass[i] > 0.0) {
        let p = Vec3::new(x[i], y[i], z[i]);
        let mut best = (f32::INFINITY, 0);
        for j in (0..n).filter(|&j| inv_mass[j] == 0.0) {
            let d = (Vec3::new(x[j], y[j], z[j]) - p).length();
            if d < best.0 {
                best = (d, j);
            }
        }
        out[k] = Constraint {
            a: best.1 as u32,
            b: i as u32,
            rest: best.0 * (1.0 + slack),
            compliance: 0.0,
            kind: ConstraintKind::Tether,
        };
        k += 1;
    }
    Ok(k)
}

/// Puts every pinned particle on its joint target with velocity 0: for a
/// cloth's first frame, or after the character teleports (otherwise
/// [`step`] slides pinned particles to their targets over one frame).
///
/// # Errors
/// As [`step`] for the state's lengths, the pins' joints and their model
/// matrices; nothing is written on error.
pub fn snap_pins(
    cloth: &Cloth<'_>,
    state: &mut ClothState<'_>,
    models: &[Mat4],
) -> Result<(), Error> {
    check_state(cloth, state)?;
    check_pins(cloth, models)?;
    for pin in cloth.pins {
        if let Some(t) = pin.target(models) {
            put(state, pin.particle as usize, t);
        }
    }
    Ok(())
}

/// Advances the cloth by one frame of `dt` seconds: sub-steps as
/// [`SubSteps::split`]`(dt, settings.max_step, settings.max_substeps)`,
/// each as the [module docs](self) describe. `models` are the joints'
/// model matrices at the end of the frame (for the pins); `colliders` are
/// in model space (see [`crate::secondary::collider::place`]).
///
/// Returns the sub-steps taken; [`SubSteps::dropped`] is the time not
/// simulated when `dt` was clamped.
///
/// # Errors
/// Checked before anything is written:
/// - [`Error::InvalidParameter`] for `dt` not finite or below
///   [`MIN_STEP`], and what [`Settings::validate`] reports;
/// - [`Error::BadLength`] for a state slice shorter than the particle
///   count, or `lambda` shorter than the constraint count;
/// - [`Error::JointOutOfRange`] for a pin's joint outside `models`;
/// - [`Error::NonFinite`] for a non-finite model matrix of a pinned joint,
///   position or velocity, and what [`Collider::validate`] reports.
pub fn step(
    cloth: &Cloth<'_>,
    state: &mut ClothState<'_>,
    settings: &Settings,
    models: &[Mat4],
    colliders: &[Collider],
    dt: f32,
) -> Result<SubSteps, Error> {
    run(cloth, state, settings, models, colliders, dt, true)
}

/// Scalar reference implementations: the readable specification.
pub mod reference {
    use super::{run, Cloth, ClothState, Collider, Error, Mat4, Settings, SubSteps};

    /// Scalar twin of [`super::step`]: same contract, the predict and
    /// velocity passes one particle at a time.
    ///
    /// # Errors
    /// As [`super::step`].
    pub fn step(
        cloth: &Cloth<'_>,
        state: &mut ClothState<'_>,
        settings: &Settings,
        models: &[Mat4],
        colliders: &[Collider],
        dt: f32,
    ) -> Result<SubSteps, Error> {
        run(cloth, state, settings, models, colliders, dt, false)
    }
}

fn check_state(cloth: &Cloth<'_>, state: &ClothState<'_>) -> Result<(), Error> {
    let n = cloth.particle_count();
    for (buffer, len) in [
        ("x", state.x.len()),
        ("y", state.y.len()),
        ("z", state.z.len()),
        ("vx", state.vx.len()),
        ("vy", state.vy.len()),
        ("vz", state.vz.len()),
    ] {
        if len < n {
            return Err(Error::BadLength {
                buffer,
                expected: n,
                actual: len,
            });
        }
    }
    Ok(())
}

fn check_pins(cloth: &Cloth<'_>, models: &[Mat4]) -> Result<(), Error> {
    for pin in cloth.pins {
        let Some(m) = models.get(usize::from(pin.joint)) else {
            return Err(Error::JointOutOfRange {
                joint: pin.joint.into(),
                count: models.len(),
            });
        };
        if !m.is_finite() || !m.transform_point(pin.offset).is_finite() {
            return Err(Error::NonFinite {
                what: "pinned joint's model matrix",
            });
        }
    }
    Ok(())
}

fn all_finite(v: &[f32]) -> bool {
    // A fold without early exit vectorises; the arrays are short.
    v.iter().fold(true, |ok, v| ok & v.is_finite())
}

fn run(
    cloth: &Cloth<'_>,
    state: &mut ClothState<'_>,
    settings: &Settings,
    models: &[Mat4],
    colliders: &[Collider],
    dt: f32,
    lanes: bool,
) -> Result<SubSteps, Error> {
    if !(dt.is_finite() && dt >= MIN_STEP) {
        return Err(Error::InvalidParameter {
            what: "time step must be finite and at least MIN_STEP",
        });
    }
    settings.validate()?;
    let steps = SubSteps::split(dt, settings.max_step, settings.max_substeps)?;
    check_state(cloth, state)?;
    let n = cloth.particle_count();
    let m = cloth.constraints.len();
    if state.lambda.len() < m {
        return Err(Error::BadLength {
            buffer: "lambda",
            expected: m,
            actual: state.lambda.len(),
        });
    }
    check_pins(cloth, models)?;
    for c in colliders {
        c.validate()?;
    }
    if !(all_finite(&state.x[..n]) && all_finite(&state.y[..n]) && all_finite(&state.z[..n])) {
        return Err(Error::NonFinite {
            what: "particle position",
        });
    }
    if !(all_finite(&state.vx[..n]) && all_finite(&state.vy[..n]) && all_finite(&state.vz[..n])) {
        return Err(Error::NonFinite {
            what: "particle velocity",
        });
    }

    let h = steps.step;
    let keep = 1.0 / (1.0 + settings.drag * h);
    let pull = 1.0 - keep;
    let gain = Vec3::new(
        settings.wind.x * pull + settings.gravity.x * h,
        settings.wind.y * pull + settings.gravity.y * h,
        settings.wind.z * pull + settings.gravity.z * h,
    );
    let inv_h = 1.0 / h;
    let inv_h2 = inv_h * inv_h;
    let w = cloth.inv_mass;
    let ClothState {
        x,
        y,
        z,
        vx,
        vy,
        vz,
        lambda,
    } = state;
    let (x, y, z) = (&mut x[..n], &mut y[..n], &mut z[..n]);
    let (vx, vy, vz) = (&mut vx[..n], &mut vy[..n], &mut vz[..n]);
    let lambda = &mut lambda[..m];
    for k in 0..steps.count {
        let axes = [
            (&mut *x, &mut *vx, gain.x),
            (&mut *y, &mut *vy, gain.y),
            (&mut *z, &mut *vz, gain.z),
        ];
        for (p, v, g) in axes {
            if lanes {
                predict_lanes(p, v, w, keep, g, h);
            } else {
                predict_scalar(p, v, w, keep, g, h);
            }
        }
        let remaining = steps.count - k;
        for pin in cloth.pins {
            let Some(target) = pin.target(models) else {
                continue;
            };
            let i = pin.particle as usize;
            let p = if remaining == 1 {
                target
            } else {
                let now = Vec3::new(x[i], y[i], z[i]);
                now + (target - now) * (1.0 / remaining as f32)
            };
            x[i] = p.x;
            y[i] = p.y;
            z[i] = p.z;
        }
        lambda.fill(0.0);
        for sweep in 0..settings.iterations {
            project(cloth.constraints, w, x, y, z, lambda, inv_h2);
            // Collisions close every sweep, so the next sweep's
            // constraints see (and spread) each push-out instead of one
            // final push leaving the edges around it stretched; friction
            // acts once, after the last sweep.
            if !colliders.is_empty() {
                let last = sweep + 1 == settings.iterations;
                collide(
                    colliders,
                    settings.radius,
                    if last { settings.friction } else { 0.0 },
                    w,
                    [&mut *x, &mut *y, &mut *z],
                    [&mut *vx, &mut *vy, &mut *vz],
                );
            }
        }
        if lanes {
            velocity_lanes(
                [&mut *x, &mut *y, &mut *z],
                [&mut *vx, &mut *vy, &mut *vz],
                inv_h,
                settings.max_speed,
            );
        } else {
            velocity_scalar(
                [&mut *x, &mut *y, &mut *z],
                [&mut *vx, &mut *vy, &mut *vz],
                inv_h,
                settings.max_speed,
            );
        }
    }
    Ok(steps)
}

/// One axis of the predict pass: `v ← v·keep + gain`, `slot ← x`, and
/// `x ← x + v·h` for particles of non-zero inverse mass (the velocity slot
/// then holds the position before the sub-step).
fn predict_scalar(x: &mut [f32], v: &mut [f32], w: &[f32], keep: f32, gain: f32, h: f32) {
    for ((x, v), &w) in x.iter_mut().zip(v.iter_mut()).zip(w) {
        let vel = *v * keep + gain;
        let old = *x;
        if w > 0.0 {
            *x = vel * h + old;
        }
        *v = old;
    }
}

fn load(s: &[f32]) -> f32x4 {
    f32x4::new([s[0], s[1], s[2], s[3]])
}

fn predict_lanes(x: &mut [f32], v: &mut [f32], w: &[f32], keep: f32, gain: f32, h: f32) {
    let full = x.len() / 4 * 4;
    let (keep4, gain4, h4, zero) = (
        f32x4::splat(keep),
        f32x4::splat(gain),
        f32x4::splat(h),
        f32x4::ZERO,
    );
    let (xh, xt) = x.split_at_mut(full);
    let (vh, vt) = v.split_at_mut(full);
    let (wh, wt) = w.split_at(full);
    for ((xc, vc), wc) in xh
        .chunks_exact_mut(4)
        .zip(vh.chunks_exact_mut(4))
        .zip(wh.chunks_exact(4))
    {
        let old = load(xc);
        let vel = load(vc).madd(keep4, gain4);
        let moved = vel.madd(h4, old);
        let free = load(wc).simd_gt(zero);
        xc.copy_from_slice(&free.bitselect(moved, old).to_array());
        vc.copy_from_slice(&old.to_array());
    }
    predict_scalar(xt, vt, wt, keep, gain, h);
}

/// The velocity pass: `v = (x − slot) / h`, scaled down to `max_speed`
/// when faster.
fn velocity_scalar(p: [&mut [f32]; 3], v: [&mut [f32]; 3], inv_h: f32, max_speed: f32) {
    let [x, y, z] = p;
    let [vx, vy, vz] = v;
    let max2 = max_speed * max_speed;
    for i in 0..x.len() {
        let a = (x[i] - vx[i]) * inv_h;
        let b = (y[i] - vy[i]) * inv_h;
        let c = (z[i] - vz[i]) * inv_h;
        let s2 = a * a + b * b + c * c;
        let scale = if s2 > max2 {
            max_speed / sqrt_f32(s2)
        } else {
            1.0
        };
        vx[i] = a * scale;
        vy[i] = b * scale;
        vz[i] = c * scale;
    }
}

fn velocity_lanes(p: [&mut [f32]; 3], v: [&mut [f32]; 3], inv_h: f32, max_speed: f32) {
    let [x, y, z] = p;
    let [vx, vy, vz] = v;
    let full = x.len() / 4 * 4;
    let (inv_h4, max4, max2, one) = (
        f32x4::splat(inv_h),
        f32x4::splat(max_speed),
        f32x4::splat(max_speed * max_speed),
        f32x4::ONE,
    );
    for s in (0..full).step_by(4) {
        let e = s + 4;
        let a = (load(&x[s..e]) - load(&vx[s..e])) * inv_h4;
        let b = (load(&y[s..e]) - load(&vy[s..e])) * inv_h4;
        let c = (load(&z[s..e]) - load(&vz[s..e])) * inv_h4;
        let s2 = a * a + b * b + c * c;
        let fast = s2.simd_gt(max2);
        // Slow lanes divide by sqrt(1) so no lane sees 0 / 0.
        let scale = fast.bitselect(max4 / sqrt4(fast.bitselect(s2, one)), one);
        vx[s..e].copy_from_slice(&(a * scale).to_array());
        vy[s..e].copy_from_slice(&(b * scale).to_array());
        vz[s..e].copy_from_slice(&(c * scale).to_array());
    }
    velocity_scalar(
        [&mut x[full..], &mut y[full..], &mut z[full..]],
        [&mut vx[full..], &mut vy[full..], &mut vz[full..]],
        inv_h,
        max_speed,
    );
}

/// One Gauss-Seidel sweep of XPBD distance projections.
fn project(
    constraints: &[Constraint],
    w: &[f32],
    x: &mut [f32],
    y: &mut [f32],
    z: &mut [f32],
    lambda: &mut [f32],
    inv_h2: f32,
) {
    for (c, l) in constraints.iter().zip(lambda.iter_mut()) {
        let (a, b) = (c.a as usize, c.b as usize);
        let (wa, wb) = (w[a], w[b]);
        let soft = c.compliance * inv_h2;
        let denom = wa + wb + soft;
        // Two fixed particles of a rigid constraint cannot move; an
        // overflowing compliance is a constraint too soft to act.
        if !(denom > 0.0 && denom.is_finite()) {
            continue;
        }
        let (dx, dy, dz) = (x[a] - x[b], y[a] - y[b], z[a] - z[b]);
        let len2 = dx * dx + dy * dy + dz * dz;
        // Coincident particles have no direction to separate along.
        if len2.is_nan() || len2 <= f32::MIN_POSITIVE {
            continue;
        }
        let len = sqrt_f32(len2);
        let mut dl = (c.rest - len - soft * *l) / denom;
        if c.kind == ConstraintKind::Tether {
            // One-sided: the accumulated multiplier may only pull (≤ 0).
            let total = (*l + dl).min(0.0);
            dl = total - *l;
        }
        *l += dl;
        let s = dl / len;
        let (sa, sb) = (wa * s, wb * s);
        x[a] += dx * sa;
        y[a] += dy * sa;
        z[a] += dz * sa;
        x[b] -= dx * sb;
        y[b] -= dy * sb;
        z[b] -= dz * sb;
    }
}

/// Pushes free particles out of the colliders; `before` holds the
/// positions at the start of the sub-step (for friction).
fn collide(
    colliders: &[Collider],
    radius: f32,
    friction: f32,
    w: &[f32],
    p: [&mut [f32]; 3],
    before: [&mut [f32]; 3],
) {
    let [x, y, z] = p;
    let [bx, by, bz] = before;
    for i in 0..x.len() {
        if w[i] <= 0.0 {
            continue;
        }
        let mut q = Vec3::new(x[i], y[i], z[i]);
        let mut hit = false;
        for c in colliders {
            if let Some(contact) = c.push_out(q, radius) {
                q = contact.position;
                if friction > 0.0 {
                    let moved = q - Vec3::new(bx[i], by[i], bz[i]);
                    let n = contact.normal;
                    let slide = moved - n * moved.dot(n);
                    q = q - slide * friction;
                }
                hit = true;
            }
        }
        if hit {
            x[i] = q.x;
            y[i] = q.y;
            z[i] = q.z;
        }
    }
}

#[cfg(test)]
mod tests;
