//! Particle systems: sparks, dust and debris that follow a character.
//!
//! A system is a fixed-capacity structure-of-arrays buffer borrowed from the
//! caller ([`Particles`]), filled by [`emit`] from an [`Emitter`] on a joint
//! and advanced by [`step`]: gravity, linear drag and optional pairwise
//! attraction or repulsion ([`PairForce`], neighbours found through a
//! [`SpatialHash`], never by testing all pairs), semi-implicit Euler over
//! [`SubSteps`], collision with [`Collider`]s, and retirement at the end of
//! each particle's lifetime.
//!
//! Conventions: metres, seconds, and unit mass, so a force is an
//! acceleration (m/s²). Live particles occupy slots `0..live`; retiring the
//! particle in slot `i` moves the last live particle into slot `i` and
//! leaves the other slots in order, so the order, like every result here,
//! depends only on the inputs. Slots from `live` on are never read.
//!
//! A frame: move the colliders with [`super::collider::place`], [`emit`],
//! then [`step`] with the same `dt`.

use core::f32::consts::{PI, TAU};

use wide::f32x4;

use super::collider::Collider;
use super::SubSteps;
use crate::fp::Fp;
use crate::math::{sqrt_f32, Mat4, Vec3};
use crate::Error;

/// Grid cells are this much larger than the cutoff. With cells exactly one
/// cutoff wide, rounding in `x / cell` can put two particles closer than
/// the cutoff two cells apart, outside each other's 27-cell neighbourhood;
/// the margin absorbs that rounding for positions within 2^16 cells of the
/// origin, so the search finds every pair a brute-force search finds.
const CELL_MARGIN: f32 = 1.0 + 1.0 / 64.0;

/// A spawn due within this fraction of a particle is emitted now: frame
/// times are `f32` roundings (of 1/60 s, 1/144 s, ...) that can add up to a
/// hair under a whole second, and a particle must not slip to the next
/// frame because of it.
const EMIT_SLACK: f64 = 1e-4;

/// The caller's storage for a particle system: one slice per attribute,
/// all of the same length (the capacity).
#[derive(Debug)]
pub struct ParticleBuffers<'a> {
    /// Position x, metres (model space of the character).
    pub px: &'a mut [f32],
    /// Position y, metres.
    pub py: &'a mut [f32],
    /// Position z, metres.
    pub pz: &'a mut [f32],
    /// Velocity x, metres per second.
    pub vx: &'a mut [f32],
    /// Velocity y, metres per second.
    pub vy: &'a mut [f32],
    /// Velocity z, metres per second.
    pub vz: &'a mut [f32],
    /// Seconds since the particle was emitted.
    pub age: &'a mut [f32],
    /// Seconds the particle lives; it retires once `age >= lifetime`.
    pub lifetime: &'a mut [f32],
}

/// A fixed-capacity particle buffer: the caller's [`ParticleBuffers`] and
/// the number of live particles, which occupy slots `0..live`.
///
/// The live count is the only state besides the slices; a caller that
/// cannot keep this struct across frames stores [`Particles::live`] and
/// rebuilds it with [`Particles::new`] (constant time).
#[derive(Debug)]
pub struct Particles<'a> {
    b: ParticleBuffers<'a>,
    live: usize,
}

impl<'a> Particles<'a> {
    /// A particle system over `buffers` whose first `live` slots hold
    /// particles.
    ///
    /// # Errors
    /// [`Error::BadLength`] when a slice is not as long as `px` (the
    /// capacity), [`Error::CapacityExceeded`] when `live` exceeds it.
    pub fn new(buffers: ParticleBuffers<'a>, live: usize) -> Result<Self, Error> {
        let capacity = buffers.px.len();
        let others = [
            ("particle py", buffers.py.len()),
            ("particle pz", buffers.pz.len()),
            ("particle vx", buffers.vx.len()),
            ("particle vy", buffers.vy.len()),
            ("particle vz", buffers.vz.len()),
            ("particle age", buffers.age.len()),
            ("particle lifetime", buffers.lifetime.len()),
        ];
        for (buffer, actual) in others {
            if actual != capacity {
                return Err(Error::BadLength {
                    buffer,
                    expected: capacity,
                    actual,
                });
            }
        }
        if live > capacity {
            return Err(Error::CapacityExceeded { capacity });
        }
        Ok(Particles { b: buffers, live })
    }

    /// The number of slots.
    #[inline]
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.b.px.len()
    }

    /// The number of live particles (slots `0..live`).
    #[inline]
    #[must_use]
    pub fn live(&self) -> usize {
        self.live
    }

    /// Whether no particle is live.
    #[inline]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Whether every slot is live.
    #[inline]
    #[must_use]
    pub fn is_full(&self) -> bool {
        self.live == self.capacity()
    }

    /// Retires every particle.
    pub fn clear(&mut self) {
        self.live = 0;
    }

    /// Adds a particle of age 0 in slot `live` and returns the slot.
    /// `lifetime` may be infinite (a particle that never retires).
    ///
    /// # Errors
    /// [`Error::CapacityExceeded`] when the buffer is full,
    /// [`Error::NonFinite`] for a non-finite position or velocity,
    /// [`Error::InvalidParameter`] when `lifetime` is not positive (or NaN).
    pub fn push(&mut self, position: Vec3, velocity: Vec3, lifetime: f32) -> Result<usize, Error> {
        if self.is_full() {
            return Err(Error::CapacityExceeded {
                capacity: self.capacity(),
            });
        }
        if !position.is_finite() || !velocity.is_finite() {
            return Err(Error::NonFinite {
                what: "particle position or velocity",
            });
        }
        if lifetime.is_nan() || lifetime <= 0.0 {
            return Err(Error::InvalidParameter {
                what: "particle lifetime must be positive",
            });
        }
        Ok(self.push_unchecked(position, velocity, lifetime))
    }

    /// Retires the particle in slot `i`: the last live particle moves into
    /// slot `i`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] when `i` is not below [`Particles::live`].
    pub fn retire(&mut self, i: usize) -> Result<(), Error> {
        if i >= self.live {
            return Err(Error::InvalidParameter {
                what: "particle index must be below the live count",
            });
        }
        self.swap_out(i);
        Ok(())
    }

    /// The live positions `[x, y, z]`, each `live` long.
    #[must_use]
    pub fn positions(&self) -> [&[f32]; 3] {
        let n = self.live;
        [&self.b.px[..n], &self.b.py[..n], &self.b.pz[..n]]
    }

    /// The live velocities `[x, y, z]`, each `live` long.
    #[must_use]
    pub fn velocities(&self) -> [&[f32]; 3] {
        let n = self.live;
        [&self.b.vx[..n], &self.b.vy[..n], &self.b.vz[..n]]
    }

    /// The live particles' ages, seconds.
    #[must_use]
    pub fn ages(&self) -> &[f32] {
        &self.b.age[..self.live]
    }

    /// The live particles' lifetimes, seconds.
    #[must_use]
    pub fn lifetimes(&self) -> &[f32] {
        &self.b.lifetime[..self.live]
    }

    /// The position of live particle `i`, or `None` past the live count.
    #[must_use]
    pub fn position(&self, i: usize) -> Option<Vec3> {
        (i < self.live).then(|| Vec3::new(self.b.px[i], self.b.py[i], self.b.pz[i]))
    }

    /// The velocity of live particle `i`, or `None` past the live count.
    #[must_use]
    pub fn velocity(&self, i: usize) -> Option<Vec3> {
        (i < self.live).then(|| Vec3::new(self.b.vx[i], self.b.vy[i], self.b.vz[i]))
    }

    /// Gives the storage back with the live count.
    #[must_use]
    pub fn into_parts(self) -> (ParticleBuffers<'a>, usize) {
        (self.b, self.live)
    }

    fn push_unchecked(&mut self, p: Vec3, v: Vec3, lifetime: f32) -> usize {
        let i = self.live;
        let b = &mut self.b;
        (b.px[i], b.py[i], b.pz[i]) = (p.x, p.y, p.z);
        (b.vx[i], b.vy[i], b.vz[i]) = (v.x, v.y, v.z);
        (b.age[i], b.lifetime[i]) = (0.0, lifetime);
        self.live += 1;
        i
    }

    fn swap_out(&mut self, i: usize) {
        let last = self.live - 1;
        let b = &mut self.b;
        for s in [
            &mut *b.px,
            &mut *b.py,
            &mut *b.pz,
            &mut *b.vx,
            &mut *b.vy,
            &mut *b.vz,
            &mut *b.age,
            &mut *b.lifetime,
        ] {
            s[i] = s[last];
        }
        self.live = last;
    }

    /// Retires every particle whose age has reached its lifetime (or is
    /// NaN), scanning up from slot 0; returns how many.
    fn retire_expired(&mut self) -> usize {
        let mut i = 0;
        let mut gone = 0;
        while i < self.live {
            if self.b.age[i] < self.b.lifetime[i] {
                i += 1;
            } else {
                self.swap_out(i);
                gone += 1;
            }
        }
        gone
    }
}

/// Where and how a stream of particles is born: a rate, a spawn ball in a
/// joint's frame, a cone of directions, and ranges of speed and lifetime.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Emitter {
    /// The joint the emitter follows (an index into the model matrices).
    pub joint: u16,
    /// Particles per second (finite, ≥ 0).
    pub rate: f32,
    /// Centre of the spawn ball in the joint's frame, metres.
    pub offset: Vec3,
    /// Radius of the spawn ball in the joint's frame, metres (finite, ≥ 0);
    /// positions are uniform in the ball. 0 spawns at `offset`.
    pub spawn_radius: f32,
    /// Axis of the cone of initial directions, in the joint's frame
    /// (finite, non-zero; need not be unit length).
    pub direction: Vec3,
    /// Half-angle of the cone, radians, `0..=π`; directions are uniform
    /// over the cone's cap of the unit sphere (π: every direction).
    pub cone_angle: f32,
    /// Initial speed range `[min, max]`, metres per second,
    /// `0 <= min <= max`, finite; uniform.
    pub speed: [f32; 2],
    /// Lifetime range `[min, max]`, seconds, `0 < min <= max`, finite;
    /// uniform.
    pub lifetime: [f32; 2],
}

impl Emitter {
    /// Checks every field's range (see the field docs).
    ///
    /// # Errors
    /// [`Error::NonFinite`] for a non-finite offset or direction,
    /// [`Error::InvalidParameter`] naming the first other field out of its
    /// range.
    pub fn validate(&self) -> Result<(), Error> {
        let bad = |what| Err(Error::InvalidParameter { what });
        if !self.offset.is_finite() || !self.direction.is_finite() {
            return Err(Error::NonFinite {
                what: "emitter offset or direction",
            });
        }
        if !(self.rate.is_finite() && self.rate >= 0.0) {
            return bad("emission rate must be finite and not negative");
        }
        if !(self.spawn_radius.is_finite() && self.spawn_radius >= 0.0) {
            return bad("emitter spawn radius must be finite and not negative");
        }
        if self.direction.try_normalize().is_none() {
            return bad("emitter direction must be non-zero");
        }
        if !(0.0..=PI).contains(&self.cone_angle) {
            return bad("emitter cone angle must be in 0..=pi");
        }
        let [s0, s1] = self.speed;
        if !(s0.is_finite() && s1.is_finite() && 0.0 <= s0 && s0 <= s1) {
            return bad("emitter speed range must be finite with 0 <= min <= max");
        }
        let [l0, l1] = self.lifetime;
        if !(l0.is_finite() && l1.is_finite() && 0.0 < l0 && l0 <= l1) {
            return bad("emitter lifetime range must be finite with 0 < min <= max");
        }
        Ok(())
    }
}

/// What an emitter carries from frame to frame: the fraction of a particle
/// owed by the frames so far and its random-number generator.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EmitterState {
    carry: f64,
    rng: Pcg32,
}

impl EmitterState {
    /// A fresh state: nothing owed, the generator seeded with `seed` (the
    /// same seed gives the same particles).
    #[must_use]
    pub fn new(seed: u64) -> Self {
        EmitterState {
            carry: 0.0,
            rng: Pcg32::new(seed),
        }
    }
}

/// What one call to [`emit`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Emission {
    /// Particles added.
    pub emitted: usize,
    /// Particles that were due but found the buffer full. They are not
    /// owed to later frames, so a buffer that frees up does not burst.
    pub not_emitted: usize,
}

/// Emits the particles due over `dt` seconds at `emitter.rate` per second.
///
/// The count is `floor(carry + rate · dt)`, the fraction carried to the
/// next call, so the total over a second does not depend on the frame rate.
/// Each particle spawns uniformly in the spawn ball moved by the joint's
/// model matrix `models[emitter.joint]`, with a direction uniform in the
/// cone (rotated by that matrix's rotation), a speed and a lifetime uniform
/// in their ranges, and age 0; it takes seven numbers from the state's
/// generator whatever the settings. New particles fill slots `live..`; when
/// the buffer fills, the rest are reported in [`Emission::not_emitted`].
///
/// # Errors
/// What [`Emitter::validate`] reports, [`Error::InvalidParameter`] when
/// `dt` is not finite and positive, [`Error::JointOutOfRange`] when the
/// joint is outside `models`, [`Error::NonFinite`] for a non-finite model
/// matrix. Nothing is emitted and the state is unchanged on error.
pub fn emit(
    emitter: &Emitter,
    state: &mut EmitterState,
    models: &[Mat4],
    dt: f32,
    particles: &mut Particles<'_>,
) -> Result<Emission, Error> {
    emitter.validate()?;
    if !(dt.is_finite() && dt > 0.0) {
        return Err(Error::InvalidParameter {
            what: "time step must be finite and positive",
        });
    }
    let m = models
        .get(usize::from(emitter.joint))
        .ok_or(Error::JointOutOfRange {
            joint: emitter.joint.into(),
            count: models.len(),
        })?;
    if !m.is_finite() {
        return Err(Error::NonFinite {
            what: "emitter joint model matrix",
        });
    }

    let owed = state.carry + f64::from(emitter.rate) * f64::from(dt);
    let due = libm::floor(owed + EMIT_SLACK);
    // Slightly negative when the slack brought a particle forward; the
    // next frame owes that much less.
    state.carry = owed - due;
    // Float-to-int casts saturate, so an enormous `rate · dt` cannot wrap.
    let due = usize::try_from(due as u64).unwrap_or(usize::MAX);
    let emitted = due.min(particles.capacity() - particles.live);
    let not_emitted = due - emitted;

    let rotation = m.rotation();
    let axis = emitter.direction.try_normalize().unwrap_or(Vec3::Y);
    let (tangent, bitangent) = basis(axis);
    let cos_max = libm::cosf(emitter.cone_angle);
    let lerp = |r: [f32; 2], u: f32| r[0] + (r[1] - r[0]) * u;
    for _ in 0..emitted {
        let u: [f32; 7] = core::array::from_fn(|_| state.rng.next_f32());
        let ball = unit_sphere(u[1], u[2]) * (emitter.spawn_radius * libm::cbrtf(u[0]));
        let position = m.transform_point(emitter.offset + ball);
        let cos_t = 1.0 - u[3] * (1.0 - cos_max);
        let sin_t = sqrt_f32((1.0 - cos_t * cos_t).max_gt(0.0));
        let phi = TAU * u[4];
        let local = tangent * (sin_t * libm::cosf(phi))
            + bitangent * (sin_t * libm::sinf(phi))
            + axis * cos_t;
        let velocity = rotation.rotate(local) * lerp(emitter.speed, u[5]);
        particles.push_unchecked(position, velocity, lerp(emitter.lifetime, u[6]));
    }
    Ok(Emission {
        emitted,
        not_emitted,
    })
}

/// A point on the unit sphere from two uniform numbers in `[0, 1)`.
fn unit_sphere(u: f32, v: f32) -> Vec3 {
    let z = 1.0 - 2.0 * u;
    let r = sqrt_f32((1.0 - z * z).max_gt(0.0));
    let phi = TAU * v;
    Vec3::new(r * libm::cosf(phi), r * libm::sinf(phi), z)
}

/// Two unit vectors that make a right-handed orthonormal basis with the
/// unit vector `n` (Duff et al., "Building an orthonormal basis,
/// revisited", 2017): no branch on a threshold, so no direction flips.
fn basis(n: Vec3) -> (Vec3, Vec3) {
    let sign = libm::copysignf(1.0, n.z);
    let a = -1.0 / (sign + n.z);
    let b = n.x * n.y * a;
    (
        Vec3::new(1.0 + sign * n.x * n.x * a, sign * b, -sign * n.x),
        Vec3::new(b, sign + n.y * n.y * a, -n.y),
    )
}

/// PCG32 (O'Neill, XSH-RR): 64-bit state, 32-bit output. Small, fast, and
/// the same sequence on every target.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Pcg32 {
    state: u64,
}

impl Pcg32 {
    const MUL: u64 = 6_364_136_223_846_793_005;
    const INC: u64 = 1_442_695_040_888_963_407;

    fn new(seed: u64) -> Self {
        let mut r = Pcg32 { state: 0 };
        r.next_u32();
        r.state = r.state.wrapping_add(seed);
        r.next_u32();
        r
    }

    fn next_u32(&mut self) -> u32 {
        let old = self.state;
        self.state = old.wrapping_mul(Self::MUL).wrapping_add(Self::INC);
        let xorshifted = (((old >> 18) ^ old) >> 27) as u32;
        xorshifted.rotate_right((old >> 59) as u32)
    }

    /// Uniform in `[0, 1)`: the top 24 bits, exactly representable.
    fn next_f32(&mut self) -> f32 {
        (self.next_u32() >> 8) as f32 * (1.0 / 16_777_216.0)
    }
}

/// Pairwise attraction or repulsion between particles closer than
/// `cutoff`: the force on particle `i` from particle `j` is
/// `strength · (x_j − x_i) / (|x_j − x_i|² + softening²)^{3/2}`,
/// and `j` feels the opposite force (momentum is conserved).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairForce {
    /// `k`: positive attracts, negative repels (m⁴/s², with unit mass).
    pub strength: f32,
    /// `ε`, metres (finite, > 0): the force peaks at distance `ε/√2`
    /// instead of growing without bound as two particles meet.
    pub softening: f32,
    /// Pairs at this distance or farther do not interact, metres
    /// (finite, positive). It is also the spatial hash's cell size (within a small
    /// margin), so it sets the cost: the search visits the particles of 27
    /// cells around each particle.
    pub cutoff: f32,
}

impl PairForce {
    /// Checks the ranges of the fields.
    ///
    /// # Errors
    /// [`Error::NonFinite`] for a non-finite strength,
    /// [`Error::InvalidParameter`] for a softening or cutoff that is not
    /// finite and positive, a cutoff whose inverse overflows, or a peak force `|strength| / softening³` that
    /// is not a finite `f32`.
    pub fn validate(&self) -> Result<(), Error> {
        if !self.strength.is_finite() {
            return Err(Error::NonFinite {
                what: "pair strength",
            });
        }
        if !(self.softening.is_finite() && self.softening > 0.0) {
            return Err(Error::InvalidParameter {
                what: "pair softening must be finite and positive",
            });
        }
        if !(self.cutoff.is_finite() && self.cutoff > 0.0) {
            return Err(Error::InvalidParameter {
                what: "pair cutoff must be finite and positive",
            });
        }
        if !(1.0 / (self.cutoff * CELL_MARGIN)).is_finite() {
            return Err(Error::InvalidParameter {
                what: "pair cutoff is too small or too large for f32 cells",
            });
        }
        let e3 = self.softening * self.softening * self.softening;
        if !(e3.is_normal() && (self.strength / e3).is_finite()) {
            return Err(Error::InvalidParameter {
                what: "pair strength / softening^3 must be a finite f32",
            });
        }
        Ok(())
    }

    /// The force on a particle from one at offset `d = x_j − x_i`, by the
    /// formula above, ignoring the cutoff.
    #[inline]
    #[must_use]
    pub fn force(&self, d: Vec3) -> Vec3 {
        d * self.scale(norm2(d))
    }

    /// `strength / (d2 + softening²)^{3/2}`.
    #[inline(always)]
    fn scale(&self, d2: f32) -> f32 {
        let q = d2 + self.softening * self.softening;
        self.strength / (q * sqrt_f32(q))
    }
}

#[inline(always)]
fn norm2(d: Vec3) -> f32 {
    d.x * d.x + d.y * d.y + d.z * d.z
}

/// A uniform grid hashed into a caller-provided table: finds every pair of
/// points closer than a cutoff in time proportional to the points and
/// their neighbours, not to the square of their number.
///
/// Cells are cubes a little larger than the cutoff; each cell hashes to
/// one of `table.len() − 1` buckets. [`SpatialHash::build`] sorts the
/// point indices by bucket (a counting sort: bucket counts, prefix sums,
/// scatter; ascending indices within a bucket).
/// [`SpatialHash::for_each_pair`] looks, for each point, at the buckets of
/// the 27 cells around its own, each distinct bucket once, and tests the
/// distance of every point there: two cells sharing a bucket cost time,
/// never a wrong or a repeated pair. A table of about twice the point
/// count keeps collisions rare; any size from one bucket up is correct.
#[derive(Debug)]
pub struct SpatialHash<'a> {
    /// `table[b]..table[b + 1]` is bucket `b`'s range of `entries`.
    table: &'a mut [u32],
    /// Point indices sorted by bucket.
    entries: &'a mut [u32],
    /// The bucket of each point.
    keys: &'a mut [u32],
    inv_cell: f32,
    cutoff2: f32,
    count: usize,
}

impl<'a> SpatialHash<'a> {
    /// A hash over caller memory: `table` holds `table.len() − 1` buckets
    /// (plus one end marker); `entries` and `keys`, of equal length, bound
    /// the number of points.
    ///
    /// # Errors
    /// [`Error::BufferTooSmall`] when `table` has fewer than 2 entries,
    /// [`Error::BadLength`] when `keys` is not as long as `entries`,
    /// [`Error::InvalidParameter`] when either count does not fit a `u32`.
    pub fn new(
        table: &'a mut [u32],
        entries: &'a mut [u32],
        keys: &'a mut [u32],
    ) -> Result<Self, Error> {
        if table.len() < 2 {
            return Err(Error::BufferTooSmall {
                needed: 2,
                actual: table.len(),
            });
        }
        if keys.len() != entries.len() {
            return Err(Error::BadLength {
                buffer: "hash keys",
                expected: entries.len(),
                actual: keys.len(),
            });
        }
        if u32::try_from(table.len() - 1).is_err() || u32::try_from(entries.len()).is_err() {
            return Err(Error::InvalidParameter {
                what: "hash table and entries must hold at most u32::MAX items",
            });
        }
        Ok(SpatialHash {
            table,
            entries,
            keys,
            inv_cell: 0.0,
            cutoff2: 0.0,
            count: 0,
        })
    }

    /// The most points it can hold.
    #[inline]
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.entries.len()
    }

    /// The number of buckets (`table.len() − 1`).
    #[inline]
    #[must_use]
    pub fn buckets(&self) -> usize {
        self.table.len() - 1
    }

    /// The number of points of the last build (0 before any).
    #[inline]
    #[must_use]
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether the last build had no points.
    #[inline]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Sorts the points `positions = [x, y, z]` into the grid for pairs
    /// closer than `cutoff` metres.
    ///
    /// Positions must be finite for their pairs to be found (a NaN
    /// coordinate pairs with nothing). Beyond 2^16 cells of the origin
    /// `f32` cannot place points in cells reliably and pairs may be missed,
    /// never invented.
    ///
    /// # Errors
    /// [`Error::BadLength`] when `y` or `z` is not as long as `x`,
    /// [`Error::BufferTooSmall`] for more points than
    /// [`SpatialHash::capacity`], [`Error::InvalidParameter`] when `cutoff`
    /// is not finite and positive (or so small that its inverse
    /// overflows). The hash is empty after an error.
    pub fn build(&mut self, positions: [&[f32]; 3], cutoff: f32) -> Result<(), Error> {
        self.count = 0;
        let n = check_positions(positions)?;
        if n > self.entries.len() {
            return Err(Error::BufferTooSmall {
                needed: n,
                actual: self.entries.len(),
            });
        }
        if !(cutoff.is_finite() && cutoff > 0.0) {
            return Err(Error::InvalidParameter {
                what: "pair cutoff must be finite and positive",
            });
        }
        let inv = 1.0 / (cutoff * CELL_MARGIN);
        if !(inv.is_finite() && inv > 0.0) {
            return Err(Error::InvalidParameter {
                what: "pair cutoff is too small or too large for f32 cells",
            });
        }
        let [x, y, z] = positions;
        let buckets = self.buckets();
        let nb = buckets as u32;
        let table = &mut *self.table;
        table.fill(0);
        for (i, key) in self.keys[..n].iter_mut().enumerate() {
            let k = bucket(cell_of(x[i], y[i], z[i], inv), nb);
            *key = k;
            table[k as usize] += 1;
        }
        // Inclusive prefix sums: table[b] is the end of bucket b.
        let mut end = 0u32;
        for t in &mut table[..buckets] {
            end += *t;
            *t = end;
        }
        table[buckets] = n as u32;
        // Scatter from the last point down, so each bucket lists its points
        // in ascending order and table[b] ends at the bucket's start.
        for i in (0..n).rev() {
            let k = self.keys[i] as usize;
            table[k] -= 1;
            self.entries[table[k] as usize] = i as u32;
        }
        self.inv_cell = inv;
        self.cutoff2 = cutoff * cutoff;
        self.count = n;
        Ok(())
    }

    /// Calls `f(i, j, d, d2)` once for every pair `i < j` of the built
    /// points closer than the cutoff (`d2 < cutoff²`), where
    /// `d = x_j − x_i` and `d2 = d.x² + d.y² + d.z²` (summed in that
    /// order), and returns the number of pairs. `positions` must be the
    /// ones the hash was built from.
    ///
    /// Points are visited bucket by bucket, so the order of the calls
    /// depends only on the positions and the table size.
    ///
    /// # Errors
    /// [`Error::BadLength`] when a slice of `positions` is not as long as
    /// the build's.
    pub fn for_each_pair(
        &self,
        positions: [&[f32]; 3],
        mut f: impl FnMut(usize, usize, Vec3, f32),
    ) -> Result<usize, Error> {
        let n = check_positions(positions)?;
        if n != self.count {
            return Err(Error::BadLength {
                buffer: "hashed positions",
                expected: self.count,
                actual: n,
            });
        }
        let [x, y, z] = positions;
        let nb = self.buckets() as u32;
        let inv = self.inv_cell;
        let entries = &self.entries[..n];
        let mut near = [0u32; 27];
        let mut found = 0;
        let mut g0 = 0;
        // Points of one cell share a bucket, so they are consecutive in
        // `entries` unless another cell's points in the same bucket come
        // between; each run of one cell (a group) shares its neighbour
        // buckets and walks them once for all its points.
        while g0 < n {
            let first = entries[g0] as usize;
            let c = cell_of(x[first], y[first], z[first], inv);
            let mut g1 = g0 + 1;
            while g1 < n {
                let k = entries[g1] as usize;
                if cell_of(x[k], y[k], z[k], inv) != c {
                    break;
                }
                g1 += 1;
            }
            let group = &entries[g0..g1];
            g0 = g1;
            let mut near_len = 0;
            for dz in -1..=1 {
                for dy in -1..=1 {
                    for dx in -1..=1 {
                        let b = bucket(
                            [
                                c[0].wrapping_add(dx),
                                c[1].wrapping_add(dy),
                                c[2].wrapping_add(dz),
                            ],
                            nb,
                        );
                        if !near[..near_len].contains(&b) {
                            near[near_len] = b;
                            near_len += 1;
                        }
                    }
                }
            }
            for &b in &near[..near_len] {
                let b = b as usize;
                for &je in &self.entries[self.table[b] as usize..self.table[b + 1] as usize] {
                    let j = je as usize;
                    let (xj, yj, zj) = (x[j], y[j], z[j]);
                    // The group is ascending: its points below j are a prefix.
                    for &ie in group {
                        if ie >= je {
                            break;
                        }
                        let i = ie as usize;
                        let d = Vec3::new(xj - x[i], yj - y[i], zj - z[i]);
                        let d2 = norm2(d);
                        if d2 < self.cutoff2 {
                            f(i, j, d, d2);
                            found += 1;
                        }
                    }
                }
            }
        }
        Ok(found)
    }
}

fn check_positions(p: [&[f32]; 3]) -> Result<usize, Error> {
    let n = p[0].len();
    for (buffer, s) in [("position y", p[1]), ("position z", p[2])] {
        if s.len() != n {
            return Err(Error::BadLength {
                buffer,
                expected: n,
                actual: s.len(),
            });
        }
    }
    Ok(n)
}

/// `floor(v)` as an `i32`, saturating (NaN gives 0), without `libm`'s
/// general rounding.
#[inline(always)]
fn floor_i32(v: f32) -> i32 {
    let t = v as i32;
    if (t as f32) > v {
        t.saturating_sub(1)
    } else {
        t
    }
}

#[inline(always)]
fn cell_of(x: f32, y: f32, z: f32, inv: f32) -> [i32; 3] {
    [floor_i32(x * inv), floor_i32(y * inv), floor_i32(z * inv)]
}

/// The bucket of a cell: the coordinates mixed into 32 bits (the
/// `murmur3` finaliser), then mapped onto `0..buckets` by a multiply
/// (Lemire's range reduction), so any bucket count works without a
/// division.
#[inline(always)]
fn bucket(c: [i32; 3], buckets: u32) -> u32 {
    let mut h = (c[0] as u32).wrapping_mul(0x9E37_79B1)
        ^ (c[1] as u32).wrapping_mul(0x85EB_CA77)
        ^ (c[2] as u32).wrapping_mul(0xC2B2_AE3D);
    h ^= h >> 16;
    h = h.wrapping_mul(0x85EB_CA6B);
    h ^= h >> 13;
    h = h.wrapping_mul(0xC2B2_AE35);
    h ^= h >> 16;
    ((u64::from(h) * u64::from(buckets)) >> 32) as u32
}

/// The pair accelerations of the points `positions`: builds `hash` with
/// `force.cutoff`, then writes into `acc = [ax, ay, az]` (the first
/// `positions` length of each) the sum of [`PairForce::force`] over every
/// neighbour closer than the cutoff. Returns the number of pairs.
///
/// Each pair adds its force to one particle and subtracts the same numbers
/// from the other, so the forces sum to zero up to the rounding of the
/// sums.
///
/// # Errors
/// What [`PairForce::validate`] and [`SpatialHash::build`] report,
/// [`Error::BadLength`] when an acceleration slice is shorter than the
/// positions.
pub fn pair_accelerations(
    hash: &mut SpatialHash<'_>,
    positions: [&[f32]; 3],
    force: &PairForce,
    acc: [&mut [f32]; 3],
) -> Result<usize, Error> {
    force.validate()?;
    let n = check_positions(positions)?;
    for (buffer, a) in ["acceleration x", "acceleration y", "acceleration z"]
        .into_iter()
        .zip(&acc)
    {
        if a.len() < n {
            return Err(Error::BadLength {
                buffer,
                expected: n,
                actual: a.len(),
            });
        }
    }
    hash.build(positions, force.cutoff)?;
    let [ax, ay, az] = acc;
    for a in [&mut *ax, &mut *ay, &mut *az] {
        a[..n].fill(0.0);
    }
    hash.for_each_pair(positions, |i, j, d, d2| {
        let s = force.scale(d2);
        let (fx, fy, fz) = (d.x * s, d.y * s, d.z * s);
        ax[i] += fx;
        ay[i] += fy;
        az[i] += fz;
        ax[j] -= fx;
        ay[j] -= fy;
        az[j] -= fz;
    })
}

/// How [`step`] moves particles.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings {
    /// Gravity, m/s² (finite).
    pub gravity: Vec3,
    /// Linear drag, 1/s (finite, ≥ 0): `dv/dt = −drag · v`, integrated
    /// implicitly (`v / (1 + drag · h)` per sub-step), so any drag is stable.
    pub drag: f32,
    /// Particle radius for collisions, metres (finite, ≥ 0).
    pub radius: f32,
    /// Share of the normal speed kept, reversed, by a particle that hits a
    /// collider: 0 stops it, 1 bounces it back at full speed. `0..=1`.
    pub restitution: f32,
    /// Share of the tangential speed a hit removes: 0 slides freely, 1
    /// sticks. `0..=1`.
    pub friction: f32,
    /// Pairwise attraction or repulsion, or `None` for independent
    /// particles (no [`PairScratch`] needed then).
    pub pair: Option<PairForce>,
    /// The longest sub-step, seconds (see [`SubSteps::split`]).
    pub max_step: f32,
    /// The most sub-steps per call (see [`SubSteps::split`]).
    pub max_substeps: u32,
}

impl Settings {
    /// Earth gravity along −Y, no drag, radius 0, no bounce, no friction,
    /// no pair forces, sub-steps of at most 1/120 s, at most 8 of them.
    pub const DEFAULT: Settings = Settings {
        gravity: Vec3::new(0.0, -9.81, 0.0),
        drag: 0.0,
        radius: 0.0,
        restitution: 0.0,
        friction: 0.0,
        pair: None,
        max_step: 1.0 / 120.0,
        max_substeps: 8,
    };

    /// Checks the ranges of the fields (the sub-step fields are checked by
    /// [`SubSteps::split`] in [`step`]).
    ///
    /// # Errors
    /// [`Error::NonFinite`] for non-finite gravity, [`Error::InvalidParameter`]
    /// naming a drag, radius, restitution or friction out of range, and what
    /// [`PairForce::validate`] reports.
    pub fn validate(&self) -> Result<(), Error> {
        let bad = |what| Err(Error::InvalidParameter { what });
        if !self.gravity.is_finite() {
            return Err(Error::NonFinite { what: "gravity" });
        }
        if !(self.drag.is_finite() && self.drag >= 0.0) {
            return bad("drag must be finite and not negative");
        }
        if !(self.radius.is_finite() && self.radius >= 0.0) {
            return bad("particle radius must be finite and not negative");
        }
        if !(0.0..=1.0).contains(&self.restitution) {
            return bad("restitution must be in 0..=1");
        }
        if !(0.0..=1.0).contains(&self.friction) {
            return bad("friction must be in 0..=1");
        }
        match &self.pair {
            Some(p) => p.validate(),
            None => Ok(()),
        }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings::DEFAULT
    }
}

/// Caller memory for pair forces: per-particle accelerations and the
/// spatial hash, each at least the particle buffer's capacity.
#[derive(Debug)]
pub struct PairScratch<'a> {
    /// Pair acceleration x, one per particle slot.
    pub ax: &'a mut [f32],
    /// Pair acceleration y.
    pub ay: &'a mut [f32],
    /// Pair acceleration z.
    pub az: &'a mut [f32],
    /// The neighbour search; its capacity must cover the particle slots.
    pub hash: SpatialHash<'a>,
}

impl PairScratch<'_> {
    fn check(&self, capacity: usize) -> Result<(), Error> {
        for (buffer, actual) in [
            ("pair acceleration x", self.ax.len()),
            ("pair acceleration y", self.ay.len()),
            ("pair acceleration z", self.az.len()),
            ("hash entries", self.hash.capacity()),
        ] {
            if actual < capacity {
                return Err(Error::BadLength {
                    buffer,
                    expected: capacity,
                    actual,
                });
            }
        }
        Ok(())
    }
}

/// What one call to [`step`] did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepReport {
    /// How `dt` was cut; [`SubSteps::dropped`] is the time not simulated
    /// after a hitch.
    pub steps: SubSteps,
    /// Particles retired at the end of their lifetime.
    pub retired: usize,
    /// Pair interactions evaluated, summed over the sub-steps.
    pub pairs: usize,
}

/// Advances the live particles by `dt` seconds, cut into [`SubSteps`] by
/// `settings.max_step` and `settings.max_substeps`.
///
/// Each sub-step of `h` seconds: pair accelerations `a` (when
/// `settings.pair` is set, through `pair`'s hash), then semi-implicit
/// Euler with implicit drag, `v ← (v + (g + a)·h) / (1 + drag·h)`,
/// `x ← x + v·h`, `age ← age + h` (in `f32x4` lanes; [`reference::step`]
/// is the scalar twin), then each collider in turn pushes the particle out
/// ([`Collider::push_out`] with `settings.radius`) and, if it was moving
/// into the surface, its normal velocity is reversed and scaled by the
/// restitution and its tangential velocity scaled by `1 − friction`;
/// last, particles with `age >= lifetime` retire (see the module docs for
/// the slot order).
///
/// # Errors
/// What [`Settings::validate`], [`Collider::validate`] and
/// [`SubSteps::split`] report (a zero, negative or NaN `dt` among them);
/// [`Error::InvalidParameter`] when `settings.pair` is set without a
/// `pair` scratch; [`Error::BadLength`] when a scratch slice is shorter
/// than the particle capacity. The particles are unchanged on error.
pub fn step(
    particles: &mut Particles<'_>,
    settings: &Settings,
    colliders: &[Collider],
    pair: Option<&mut PairScratch<'_>>,
    dt: f32,
) -> Result<StepReport, Error> {
    run(particles, settings, colliders, pair, dt, integrate_lanes)
}

/// One sub-step's constants.
struct Kick {
    g: [f32; 3],
    damp: f32,
    h: f32,
}

type Integrate = fn(&mut ParticleBuffers<'_>, usize, &Kick, Option<[&[f32]; 3]>);

fn run(
    particles: &mut Particles<'_>,
    settings: &Settings,
    colliders: &[Collider],
    pair: Option<&mut PairScratch<'_>>,
    dt: f32,
    integrate: Integrate,
) -> Result<StepReport, Error> {
    settings.validate()?;
    for c in colliders {
        c.validate()?;
    }
    let mut pair = match (settings.pair, pair) {
        (Some(force), Some(scratch)) => {
            scratch.check(particles.capacity())?;
            Some((force, scratch))
        }
        (Some(_), None) => {
            return Err(Error::InvalidParameter {
                what: "pair forces need a PairScratch",
            })
        }
        (None, _) => None,
    };
    let steps = SubSteps::split(dt, settings.max_step, settings.max_substeps)?;
    let h = steps.step;
    let kick = Kick {
        g: settings.gravity.to_array(),
        damp: 1.0 / (1.0 + settings.drag * h),
        h,
    };
    let mut retired = 0;
    let mut pairs = 0;
    for _ in 0..steps.count {
        let n = particles.live;
        let b = &mut particles.b;
        match pair.as_mut() {
            Some((force, s)) => {
                let PairScratch { ax, ay, az, hash } = &mut **s;
                let positions = [&b.px[..n], &b.py[..n], &b.pz[..n]];
                pairs += pair_accelerations(hash, positions, force, [ax, ay, az])?;
                integrate(b, n, &kick, Some([&ax[..n], &ay[..n], &az[..n]]));
            }
            None => integrate(b, n, &kick, None),
        }
        if !colliders.is_empty() {
            collide(b, n, colliders, settings);
        }
        retired += particles.retire_expired();
    }
    Ok(StepReport {
        steps,
        retired,
        pairs,
    })
}

#[inline(always)]
fn load(s: &[f32], i: usize) -> f32x4 {
    f32x4::new(
        s.get(i..i + 4)
            .and_then(|c| c.try_into().ok())
            .unwrap_or([0.0; 4]),
    )
}

#[inline(always)]
fn store(s: &mut [f32], i: usize, v: f32x4) {
    if let Some(c) = s.get_mut(i..i + 4) {
        c.copy_from_slice(&v.to_array());
    }
}

/// The integration of [`step`] four particles at a time. Lanes use a
/// multiply, then an add (no fused multiply-add), in the scalar twin's
/// order, so they give the twin's bits and the tail of fewer than four
/// particles can use the twin itself.
fn integrate_lanes(b: &mut ParticleBuffers<'_>, n: usize, k: &Kick, acc: Option<[&[f32]; 3]>) {
    let lanes = n - n % 4;
    let h = f32x4::splat(k.h);
    let damp = f32x4::splat(k.damp);
    let [gx, gy, gz] = k.g.map(f32x4::splat);
    let mut i = 0;
    while i < lanes {
        let [ax, ay, az] = match acc {
            Some([x, y, z]) => [load(x, i), load(y, i), load(z, i)],
            None => [f32x4::ZERO; 3],
        };
        let vx = (load(b.vx, i) + (gx + ax) * h) * damp;
        let vy = (load(b.vy, i) + (gy + ay) * h) * damp;
        let vz = (load(b.vz, i) + (gz + az) * h) * damp;
        store(b.px, i, load(b.px, i) + vx * h);
        store(b.py, i, load(b.py, i) + vy * h);
        store(b.pz, i, load(b.pz, i) + vz * h);
        store(b.vx, i, vx);
        store(b.vy, i, vy);
        store(b.vz, i, vz);
        store(b.age, i, load(b.age, i) + h);
        i += 4;
    }
    reference::integrate_range(b, lanes..n, k, acc);
}

/// Pushes particles out of the colliders and applies restitution and
/// friction to the ones moving into a surface.
fn collide(b: &mut ParticleBuffers<'_>, n: usize, colliders: &[Collider], s: &Settings) {
    let keep = 1.0 - s.friction;
    for i in 0..n {
        let mut p = Vec3::new(b.px[i], b.py[i], b.pz[i]);
        let mut v = Vec3::new(b.vx[i], b.vy[i], b.vz[i]);
        let mut hit = false;
        for c in colliders {
            if let Some(k) = c.push_out(p, s.radius) {
                p = k.position;
                let vn = v.dot(k.normal);
                if vn < 0.0 {
                    let tangential = v - k.normal * vn;
                    v = tangential * keep - k.normal * (vn * s.restitution);
                }
                hit = true;
            }
        }
        if hit {
            (b.px[i], b.py[i], b.pz[i]) = (p.x, p.y, p.z);
            (b.vx[i], b.vy[i], b.vz[i]) = (v.x, v.y, v.z);
        }
    }
}

/// Scalar reference implementations: the readable specification.
pub mod reference {
    use super::{
        run, Collider, Error, Kick, PairScratch, ParticleBuffers, Particles, Settings, StepReport,
    };

    /// Scalar twin of [`super::step`]: same contract, the integration one
    /// particle at a time.
    ///
    /// # Errors
    /// As [`super::step`].
    pub fn step(
        particles: &mut Particles<'_>,
        settings: &Settings,
        colliders: &[Collider],
        pair: Option<&mut PairScratch<'_>>,
        dt: f32,
    ) -> Result<StepReport, Error> {
        run(particles, settings, colliders, pair, dt, |b, n, k, acc| {
            integrate_range(b, 0..n, k, acc)
        })
    }

    /// Semi-implicit Euler with implicit drag for the particles in `range`.
    pub(super) fn integrate_range(
        b: &mut ParticleBuffers<'_>,
        range: core::ops::Range<usize>,
        k: &Kick,
        acc: Option<[&[f32]; 3]>,
    ) {
        let h = k.h;
        for i in range {
            let [ax, ay, az] = match acc {
                Some([x, y, z]) => [x[i], y[i], z[i]],
                None => [0.0; 3],
            };
            let vx = (b.vx[i] + (k.g[0] + ax) * h) * k.damp;
            let vy = (b.vy[i] + (k.g[1] + ay) * h) * k.damp;
            let vz = (b.vz[i] + (k.g[2] + az) * h) * k.damp;
            b.px[i] += vx * h;
            b.py[i] += vy * h;
            b.pz[i] += vz * h;
            (b.vx[i], b.vy[i], b.vz[i]) = (vx, vy, vz);
            b.age[i] += h;
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate alloc;

    use alloc::collections::BTreeSet;
    use alloc::vec;
    use alloc::vec::Vec;

    use proptest::prelude::*;

    use super::*;
    use crate::math::Quat;

    /// Owned storage for a particle buffer.
    struct Store {
        a: [Vec<f32>; 8],
    }

    impl Store {
        fn new(capacity: usize) -> Self {
            Store {
                a: core::array::from_fn(|_| vec![0.0; capacity]),
            }
        }

        fn view(&mut self, live: usize) -> Particles<'_> {
            let [px, py, pz, vx, vy, vz, age, lifetime] = &mut self.a;
            Particles::new(
                ParticleBuffers {
                    px,
                    py,
                    pz,
                    vx,
                    vy,
                    vz,
                    age,
                    lifetime,
                },
                live,
            )
            .unwrap()
        }
    }

    /// Owned storage for pair forces.
    struct PairStore {
        acc: [Vec<f32>; 3],
        table: Vec<u32>,
        entries: Vec<u32>,
        keys: Vec<u32>,
    }

    impl PairStore {
        fn new(capacity: usize, buckets: usize) -> Self {
            PairStore {
                acc: core::array::from_fn(|_| vec![0.0; capacity]),
                table: vec![0; buckets + 1],
                entries: vec![0; capacity],
                keys: vec![0; capacity],
            }
        }

        fn scratch(&mut self) -> PairScratch<'_> {
            let [ax, ay, az] = &mut self.acc;
            PairScratch {
                ax,
                ay,
                az,
                hash: SpatialHash::new(&mut self.table, &mut self.entries, &mut self.keys).unwrap(),
            }
        }
    }

    /// A reproducible stream of numbers in `[0, 1)` for test data.
    struct Lcg(u64);

    impl Lcg {
        fn next(&mut self) -> f32 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (self.0 >> 40) as f32 / (1u64 << 24) as f32
        }

        fn range(&mut self, lo: f32, hi: f32) -> f32 {
            lo + (hi - lo) * self.next()
        }
    }

    fn brute_force_pairs(x: &[f32], y: &[f32], z: &[f32], cutoff: f32) -> BTreeSet<(usize, usize)> {
        let mut out = BTreeSet::new();
        for i in 0..x.len() {
            for j in i + 1..x.len() {
                let d = Vec3::new(x[j] - x[i], y[j] - y[i], z[j] - z[i]);
                if norm2(d) < cutoff * cutoff {
                    out.insert((i, j));
                }
            }
        }
        out
    }

    fn hash_pairs(
        x: &[f32],
        y: &[f32],
        z: &[f32],
        cutoff: f32,
        buckets: usize,
    ) -> Vec<(usize, usize)> {
        let n = x.len();
        let (mut table, mut entries, mut keys) = (vec![0; buckets + 1], vec![0; n], vec![0; n]);
        let mut hash = SpatialHash::new(&mut table, &mut entries, &mut keys).unwrap();
        hash.build([x, y, z], cutoff).unwrap();
        let mut pairs = Vec::new();
        let found = hash
            .for_each_pair([x, y, z], |i, j, d, d2| {
                assert!(i < j);
                assert_eq!(d, Vec3::new(x[j] - x[i], y[j] - y[i], z[j] - z[i]));
                assert_eq!(d2.to_bits(), norm2(d).to_bits());
                pairs.push((i, j));
            })
            .unwrap();
        assert_eq!(found, pairs.len());
        pairs
    }

    fn close(a: f32, b: f32, tol: f32) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn pair_forces_match_hand_computed_pairs() {
        // 0–1 at d = (0.3, −0.4, 1.2), |d|² = 1.69; 1–3 at d = (1, 0, 0);
        // 0–3 at |d| = √3.29 ≈ 1.81 and particle 2 are beyond the cutoff.
        let x = [0.0, 0.3, 5.0, 1.3];
        let y = [0.0, -0.4, 5.0, -0.4];
        let z = [0.0, 1.2, 5.0, 1.2];
        // F = k d / (|d|² + ε²)^{3/2} with ε = 0.5:
        //   (1.69 + 0.25)^{3/2} = 2.702 110 ..., (1 + 0.25)^{3/2} = 1.397 542 ...
        // k = −1 (repulsion): F01 = −(0.3, −0.4, 1.2) / 2.702 110
        //                         = (−0.111 024 5, 0.148 032 6, −0.444 097 8)
        //                     F13 = −(1, 0, 0) / 1.397 542 = (−0.715 541 8, 0, 0)
        // k = 2 (attraction): twice the negated values.
        for (k, f01, f13) in [
            (
                -1.0,
                [-0.111_024_5, 0.148_032_6, -0.444_097_8],
                -0.715_541_8,
            ),
            (2.0, [0.222_049, -0.296_065_2, 0.888_195_7], 1.431_083_5),
        ] {
            let force = PairForce {
                strength: k,
                softening: 0.5,
                cutoff: 1.5,
            };
            let want = [
                [f01[0], f01[1], f01[2]],
                [-f01[0] + f13, -f01[1], -f01[2]],
                [0.0, 0.0, 0.0],
                [-f13, 0.0, 0.0],
            ];
            let mut store = PairStore::new(4, 8);
            let [ax, ay, az] = &mut store.acc;
            let mut hash =
                SpatialHash::new(&mut store.table, &mut store.entries, &mut store.keys).unwrap();
            let pairs = pair_accelerations(&mut hash, [&x, &y, &z], &force, [ax, ay, az]).unwrap();
            assert_eq!(pairs, 2);
            for (p, w) in want.iter().enumerate() {
                let got = [store.acc[0][p], store.acc[1][p], store.acc[2][p]];
                for c in 0..3 {
                    assert!(
                        close(got[c], w[c], 1e-5),
                        "k {k} particle {p}: {got:?} {w:?}"
                    );
                }
            }
            let f = force.force(Vec3::X);
            assert!(close(f.x, f13, 1e-5) && f.y == 0.0 && f.z == 0.0);
        }
    }

    #[test]
    fn pair_forces_conserve_momentum() {
        let mut rng = Lcg(11);
        let n = 400;
        let mut pos: [Vec<f32>; 3] = core::array::from_fn(|_| Vec::new());
        for _ in 0..n {
            for p in &mut pos {
                p.push(rng.range(-0.5, 0.5));
            }
        }
        for strength in [0.7, -1.3] {
            let force = PairForce {
                strength,
                softening: 0.02,
                cutoff: 0.15,
            };
            let mut store = PairStore::new(n, 2 * n);
            let [ax, ay, az] = &mut store.acc;
            let mut hash =
                SpatialHash::new(&mut store.table, &mut store.entries, &mut store.keys).unwrap();
            let pairs =
                pair_accelerations(&mut hash, [&pos[0], &pos[1], &pos[2]], &force, [ax, ay, az])
                    .unwrap();
            assert!(pairs > n, "a dense cloud: {pairs} pairs");
            for a in &store.acc {
                let sum: f64 = a.iter().map(|&v| f64::from(v)).sum();
                let scale: f64 = a.iter().map(|&v| f64::from(v.abs())).sum();
                assert!(sum.abs() <= 1e-5 * scale, "{sum} of {scale}");
            }
        }
    }

    #[test]
    fn one_bucket_still_gives_exactly_the_pairs() {
        // Every cell collides in a one-bucket table.
        let mut rng = Lcg(3);
        let n = 150;
        let v: [Vec<f32>; 3] =
            core::array::from_fn(|_| (0..n).map(|_| rng.range(-1.0, 1.0)).collect());
        for buckets in [1, 2, 3, 1000] {
            let got = hash_pairs(&v[0], &v[1], &v[2], 0.2, buckets);
            let set: BTreeSet<_> = got.iter().copied().collect();
            assert_eq!(set.len(), got.len(), "a pair twice");
            assert_eq!(set, brute_force_pairs(&v[0], &v[1], &v[2], 0.2));
        }
    }

    #[test]
    fn rounding_cannot_hide_a_pair_two_cells_apart() {
        // 512 cells out, cells exactly one cutoff wide would put these two
        // points (0.394333 apart, under the cutoff) in cells 511 and 513:
        // x / cutoff rounds up past 512 for the second, down below 512 for
        // the first.
        let cutoff = 0.394_335_42;
        let x = [201.899_72, 202.294_05];
        let zero = [0.0; 2];
        let got = hash_pairs(&x, &zero, &zero, cutoff, 64);
        assert_eq!(got, [(0, 1)]);
    }

    proptest! {
        #[test]
        fn spatial_hash_finds_exactly_the_brute_force_pairs(
            seed in any::<u64>(),
            n in 0usize..250,
            mode in 0u32..4,
            cutoff in 0.02f32..1.0,
            buckets in 1usize..80,
        ) {
            let mut rng = Lcg(seed);
            let centre = [rng.range(-50.0, 50.0), rng.range(-50.0, 50.0), rng.range(-50.0, 50.0)];
            let mut v: [Vec<f32>; 3] = core::array::from_fn(|_| Vec::with_capacity(n));
            for k in 0..n {
                for (a, c) in v.iter_mut().zip(centre) {
                    let p = match mode {
                        // A loose cloud.
                        0 => rng.range(-3.0, 3.0),
                        // Many particles in one cell.
                        1 => c + rng.range(0.0, cutoff * 0.9),
                        // On cell boundaries and at exactly the cutoff.
                        2 => (rng.next() * 8.0) as i32 as f32 * cutoff * [1.0, CELL_MARGIN][k % 2],
                        // Clusters of a few cells.
                        _ => c + (k % 5) as f32 * 3.0 * cutoff + rng.range(0.0, 2.0 * cutoff),
                    };
                    a.push(p);
                }
            }
            let got = hash_pairs(&v[0], &v[1], &v[2], cutoff, buckets);
            let set: BTreeSet<_> = got.iter().copied().collect();
            prop_assert_eq!(set.len(), got.len());
            prop_assert_eq!(set, brute_force_pairs(&v[0], &v[1], &v[2], cutoff));
        }

        #[test]
        fn lanes_agree_with_the_scalar_twin(
            seed in any::<u64>(),
            n in 0usize..70,
            drag in 0.0f32..5.0,
            pair in any::<bool>(),
        ) {
            let mut rng = Lcg(seed);
            let settings = Settings {
                drag,
                radius: 0.02,
                restitution: 0.4,
                friction: 0.3,
                pair: pair.then_some(PairForce { strength: -0.01, softening: 0.05, cutoff: 0.3 }),
                ..Settings::DEFAULT
            };
            let floor = [Collider::plane(Vec3::ZERO, Vec3::Y).unwrap()];
            let mut a = Store::new(n);
            let live = {
                let mut p = a.view(0);
                for _ in 0..n {
                    let pos = Vec3::new(rng.range(-1.0, 1.0), rng.range(0.0, 1.0), rng.range(-1.0, 1.0));
                    let vel = Vec3::new(rng.range(-1.0, 1.0), rng.range(-3.0, 1.0), rng.range(-1.0, 1.0));
                    p.push(pos, vel, rng.range(0.05, 0.6)).unwrap();
                }
                p.live()
            };
            let mut b = Store { a: a.a.clone() };
            let (mut la, mut lb) = (live, live);
            let (mut sa, mut sb) = (PairStore::new(n, 2 * n + 1), PairStore::new(n, 2 * n + 1));
            for _ in 0..40 {
                let mut pa = a.view(la);
                let mut pb = b.view(lb);
                let ra = step(&mut pa, &settings, &floor, Some(&mut sa.scratch()), 1.0 / 60.0).unwrap();
                let rb = reference::step(&mut pb, &settings, &floor, Some(&mut sb.scratch()), 1.0 / 60.0).unwrap();
                prop_assert_eq!(ra.retired, rb.retired);
                (la, lb) = (pa.live(), pb.live());
            }
            prop_assert_eq!(la, lb);
            for (x, y) in a.a.iter().zip(&b.a) {
                for (u, v) in x[..la].iter().zip(&y[..lb]) {
                    prop_assert!(close(*u, *v, 1e-5), "{} {}", u, v);
                }
            }
        }
    }

    fn sparks() -> Emitter {
        Emitter {
            joint: 1,
            rate: 100.0,
            offset: Vec3::new(0.5, 0.0, 0.0),
            spawn_radius: 0.1,
            direction: Vec3::new(2.0, 0.0, 0.0),
            cone_angle: 0.3,
            speed: [2.0, 3.0],
            lifetime: [0.5, 1.5],
        }
    }

    fn joint_models() -> [Mat4; 2] {
        let q = Quat::from_axis_angle(Vec3::Z, core::f32::consts::FRAC_PI_2);
        [
            Mat4::IDENTITY,
            Mat4::from_trs(Vec3::new(1.0, 2.0, 3.0), q, Vec3::ONE),
        ]
    }

    #[test]
    fn emission_count_does_not_depend_on_the_frame_rate() {
        for (rate, seconds, want) in [(100.0, 1, 100), (37.5, 1, 37), (37.5, 2, 75), (7.0, 3, 21)] {
            for hz in [30u32, 60, 144] {
                let mut store = Store::new(1000);
                let mut p = store.view(0);
                let mut state = EmitterState::new(5);
                let e = Emitter { rate, ..sparks() };
                let mut total = 0;
                for _ in 0..hz * seconds {
                    let r = emit(&e, &mut state, &joint_models(), 1.0 / hz as f32, &mut p).unwrap();
                    assert_eq!(r.not_emitted, 0);
                    total += r.emitted;
                }
                assert_eq!(total, want, "rate {rate} at {hz} Hz over {seconds} s");
                assert_eq!(p.live(), want);
            }
        }
    }

    #[test]
    fn emitted_particles_follow_the_joint_and_the_ranges() {
        let mut store = Store::new(500);
        let mut p = store.view(0);
        let mut state = EmitterState::new(99);
        let models = joint_models();
        let r = emit(&sparks(), &mut state, &models, 4.0, &mut p).unwrap();
        assert_eq!((r.emitted, r.not_emitted), (400, 0));
        // The joint turns local +X to model +Y; the offset lands at (1, 2.5, 3).
        let centre = models[1].transform_point(sparks().offset);
        assert!((centre - Vec3::new(1.0, 2.5, 3.0)).length() < 1e-5);
        let (mut min_r, mut max_r) = (f32::MAX, 0.0f32);
        for i in 0..p.live() {
            let d = p.position(i).unwrap() - centre;
            assert!(d.length() <= 0.1 + 1e-5);
            let v = p.velocity(i).unwrap();
            let speed = v.length();
            assert!((2.0 - 1e-5..=3.0 + 1e-5).contains(&speed));
            let angle = libm::acosf((v.y / speed).clamp(-1.0, 1.0));
            assert!(angle <= 0.3 + 1e-4, "{angle}");
            let life = p.lifetimes()[i];
            assert!((0.5..=1.5).contains(&life) && p.ages()[i] == 0.0);
            min_r = min_r.min(d.length());
            max_r = max_r.max(d.length());
        }
        // The ranges are used, not just respected.
        assert!(min_r < 0.05 && max_r > 0.09);
        // A zero cone shoots exactly along the axis.
        let mut p = store.view(0);
        let e = Emitter {
            cone_angle: 0.0,
            ..sparks()
        };
        emit(&e, &mut state, &models, 0.1, &mut p).unwrap();
        for i in 0..p.live() {
            let v = p.velocity(i).unwrap();
            assert!(v.x.abs() < 1e-5 && v.z.abs() < 1e-5 && v.y > 0.0);
        }
    }

    #[test]
    fn a_full_buffer_stops_emission_and_reports_the_rest() {
        let mut store = Store::new(10);
        let mut p = store.view(0);
        let mut state = EmitterState::new(1);
        let r = emit(&sparks(), &mut state, &joint_models(), 0.5, &mut p).unwrap();
        assert_eq!((r.emitted, r.not_emitted), (10, 40));
        assert!(p.is_full());
        // What was not emitted is not owed later.
        p.clear();
        let r = emit(&sparks(), &mut state, &joint_models(), 0.05, &mut p).unwrap();
        assert_eq!((r.emitted, r.not_emitted), (5, 0));
        // An absurd frame saturates instead of wrapping.
        let e = Emitter {
            rate: f32::MAX,
            ..sparks()
        };
        let r = emit(&e, &mut state, &joint_models(), 1e30, &mut p).unwrap();
        assert_eq!(r.emitted, 5);
        assert!(r.not_emitted > 1 << 30);
    }

    #[test]
    fn particles_retire_at_their_lifetime() {
        let lifetimes = [0.25, 0.5, 0.75, 1.0, f32::INFINITY];
        let mut store = Store::new(8);
        let mut live = {
            let mut p = store.view(0);
            for (i, &l) in lifetimes.iter().enumerate() {
                p.push(Vec3::new(i as f32, 0.0, 0.0), Vec3::ZERO, l)
                    .unwrap();
            }
            p.live()
        };
        let settings = Settings {
            gravity: Vec3::ZERO,
            max_step: 0.125,
            ..Settings::DEFAULT
        };
        // Sub-steps of 0.125 s add up exactly, so ages are exact.
        for k in 1..=10 {
            let mut p = store.view(live);
            let r = step(&mut p, &settings, &[], None, 0.125).unwrap();
            let age = 0.125 * k as f32;
            let want = lifetimes.iter().filter(|&&l| l > age).count();
            assert_eq!(p.live(), want, "after {age} s");
            assert_eq!(r.retired, live - want);
            assert!(p.ages().iter().all(|&a| a == age));
            assert!(p.ages().iter().zip(p.lifetimes()).all(|(a, l)| a < l));
            live = p.live();
        }
        assert_eq!(live, 1);
    }

    #[test]
    fn retiring_moves_the_last_particle_into_the_hole() {
        let mut store = Store::new(4);
        let mut p = store.view(0);
        for (i, l) in [0.1, 1.0, 1.0, 1.0].into_iter().enumerate() {
            p.push(Vec3::new(i as f32, 0.0, 0.0), Vec3::ZERO, l)
                .unwrap();
        }
        let settings = Settings {
            gravity: Vec3::ZERO,
            max_step: 0.125,
            ..Settings::DEFAULT
        };
        let r = step(&mut p, &settings, &[], None, 0.125).unwrap();
        assert_eq!(r.retired, 1);
        assert_eq!(p.positions()[0], &[3.0, 1.0, 2.0]);
        p.retire(1).unwrap();
        assert_eq!(p.positions()[0], &[3.0, 2.0]);
        assert!(p.retire(2).is_err());
        let (buffers, live) = p.into_parts();
        assert_eq!((buffers.px[..live].len(), buffers.px.len()), (2, 4));
    }

    #[test]
    fn collisions_keep_particles_out_of_planes_and_capsules() {
        let mut rng = Lcg(8);
        let mut store = Store::new(300);
        let mut p = store.view(0);
        for _ in 0..300 {
            let pos = Vec3::new(
                rng.range(-1.0, 1.0),
                rng.range(0.1, 2.0),
                rng.range(-1.0, 1.0),
            );
            let vel = Vec3::new(
                rng.range(-1.0, 1.0),
                rng.range(-8.0, 0.0),
                rng.range(-1.0, 1.0),
            );
            p.push(pos, vel, 100.0).unwrap();
        }
        let capsule = Collider::Capsule {
            a: Vec3::new(-1.0, 0.5, 0.0),
            b: Vec3::new(1.0, 0.5, 0.0),
            radius: 0.2,
        };
        let colliders = [Collider::plane(Vec3::ZERO, Vec3::Y).unwrap(), capsule];
        let settings = Settings {
            radius: 0.05,
            restitution: 0.3,
            friction: 0.2,
            ..Settings::DEFAULT
        };
        for _ in 0..120 {
            step(&mut p, &settings, &colliders, None, 1.0 / 60.0).unwrap();
            let [_, y, _] = p.positions();
            assert!(y.iter().all(|&y| y >= 0.05 - 1e-6));
        }
        for i in 0..p.live() {
            let q = p.position(i).unwrap();
            // The last collider applied wins: off the capsule, or on the floor.
            let axis = super::super::collider::closest_on_segment(
                q,
                Vec3::new(-1.0, 0.5, 0.0),
                Vec3::new(1.0, 0.5, 0.0),
            );
            assert!((q - axis).length() >= 0.25 - 1e-4 || q.y < 0.3, "{q:?}");
        }
    }

    #[test]
    fn restitution_and_friction_act_on_the_velocity() {
        let mut store = Store::new(1);
        let mut p = store.view(0);
        p.push(Vec3::new(0.0, 0.01, 0.0), Vec3::new(1.0, -2.0, 0.0), 10.0)
            .unwrap();
        let settings = Settings {
            gravity: Vec3::ZERO,
            restitution: 0.3,
            friction: 0.2,
            max_step: 0.01,
            ..Settings::DEFAULT
        };
        let floor = [Collider::plane(Vec3::ZERO, Vec3::Y).unwrap()];
        step(&mut p, &settings, &floor, None, 0.01).unwrap();
        // Moved to (0.01, −0.01), pushed up to y = 0; the normal speed 2
        // comes back as 0.3 · 2, the tangential 1 keeps 1 − 0.2.
        let (q, v) = (p.position(0).unwrap(), p.velocity(0).unwrap());
        assert!(close(q.y, 0.0, 1e-7) && close(q.x, 0.01, 1e-7));
        assert!(close(v.x, 0.8, 1e-6) && close(v.y, 0.6, 1e-6) && v.z == 0.0);
    }

    #[test]
    fn drag_is_implicit_and_gravity_accelerates() {
        let mut store = Store::new(1);
        let mut p = store.view(0);
        p.push(Vec3::ZERO, Vec3::new(4.0, 0.0, 0.0), 10.0).unwrap();
        let settings = Settings {
            drag: 3.0,
            max_step: 0.5,
            ..Settings::DEFAULT
        };
        step(&mut p, &settings, &[], None, 0.5).unwrap();
        // v = (v0 + g h) / (1 + c h) with h = 0.5, c = 3: divided by 2.5.
        let v = p.velocity(0).unwrap();
        assert!(close(v.x, 1.6, 1e-6) && close(v.y, -9.81 * 0.5 / 2.5, 1e-6));
        let q = p.position(0).unwrap();
        assert!(close(q.x, 0.8, 1e-6) && close(q.y, v.y * 0.5, 1e-6));
    }

    /// A frame of everything: emission, pair forces, drag, colliders.
    fn run_scene(frames: usize) -> (Store, usize) {
        let mut store = Store::new(256);
        let mut pair = PairStore::new(256, 300);
        let mut state = EmitterState::new(2024);
        let settings = Settings {
            drag: 0.5,
            radius: 0.01,
            restitution: 0.5,
            friction: 0.1,
            pair: Some(PairForce {
                strength: -0.002,
                softening: 0.02,
                cutoff: 0.1,
            }),
            ..Settings::DEFAULT
        };
        let floor = [Collider::plane(Vec3::ZERO, Vec3::Y).unwrap()];
        let mut live = 0;
        for f in 0..frames {
            let mut p = store.view(live);
            let dt = [1.0 / 60.0, 1.0 / 30.0, 0.021][f % 3];
            emit(&sparks(), &mut state, &joint_models(), dt, &mut p).unwrap();
            step(&mut p, &settings, &floor, Some(&mut pair.scratch()), dt).unwrap();
            live = p.live();
        }
        (store, live)
    }

    #[test]
    fn two_runs_are_bit_identical() {
        let (a, la) = run_scene(90);
        let (b, lb) = run_scene(90);
        assert_eq!(la, lb);
        assert!(la > 50, "{la} live");
        for (x, y) in a.a.iter().zip(&b.a) {
            let bits = |s: &[f32]| s[..la].iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(x), bits(y));
            assert!(x[..la].iter().all(|v| v.is_finite()));
        }
    }

    #[test]
    fn a_hitch_is_clamped_and_reported() {
        let mut store = Store::new(2);
        let mut p = store.view(0);
        p.push(Vec3::new(0.0, 1.0, 0.0), Vec3::ZERO, 1e9).unwrap();
        let r = step(&mut p, &Settings::DEFAULT, &[], None, 10.0).unwrap();
        assert!(r.steps.clamped());
        assert_eq!(r.steps.count, 8);
        assert!(close(r.steps.dropped, 10.0 - 8.0 / 120.0, 1e-5));
        assert!(close(p.ages()[0], 8.0 / 120.0, 1e-6));
        assert!(p.position(0).unwrap().is_finite());
    }

    #[test]
    fn bad_buffers_are_rejected() {
        let mut a: [Vec<f32>; 8] = core::array::from_fn(|_| vec![0.0; 4]);
        a[6].pop();
        let [px, py, pz, vx, vy, vz, age, lifetime] = &mut a;
        let b = ParticleBuffers {
            px,
            py,
            pz,
            vx,
            vy,
            vz,
            age,
            lifetime,
        };
        assert_eq!(
            Particles::new(b, 0).unwrap_err(),
            Error::BadLength {
                buffer: "particle age",
                expected: 4,
                actual: 3
            }
        );
        let mut store = Store::new(2);
        let [px, py, pz, vx, vy, vz, age, lifetime] = &mut store.a;
        let b = ParticleBuffers {
            px,
            py,
            pz,
            vx,
            vy,
            vz,
            age,
            lifetime,
        };
        assert_eq!(
            Particles::new(b, 3).unwrap_err(),
            Error::CapacityExceeded { capacity: 2 }
        );
        let mut p = store.view(0);
        let nan = Vec3::new(f32::NAN, 0.0, 0.0);
        assert!(matches!(
            p.push(nan, Vec3::ZERO, 1.0),
            Err(Error::NonFinite { .. })
        ));
        assert!(matches!(
            p.push(Vec3::ZERO, nan, 1.0),
            Err(Error::NonFinite { .. })
        ));
        for l in [0.0, -1.0, f32::NAN] {
            assert!(matches!(
                p.push(Vec3::ZERO, Vec3::ZERO, l),
                Err(Error::InvalidParameter { .. })
            ));
        }
        p.push(Vec3::ZERO, Vec3::ZERO, 1.0).unwrap();
        p.push(Vec3::ZERO, Vec3::ZERO, 1.0).unwrap();
        assert_eq!(
            p.push(Vec3::ZERO, Vec3::ZERO, 1.0),
            Err(Error::CapacityExceeded { capacity: 2 })
        );
    }

    #[test]
    fn bad_settings_are_rejected() {
        let invalid = |s: Settings| {
            let mut store = Store::new(1);
            let mut p = store.view(0);
            p.push(Vec3::ZERO, Vec3::X, 1.0).unwrap();
            let mut pair = PairStore::new(1, 1);
            let r = step(&mut p, &s, &[], Some(&mut pair.scratch()), 0.01);
            // Nothing moved.
            assert_eq!(p.position(0), Some(Vec3::ZERO));
            r.unwrap_err()
        };
        let pair = |strength, softening, cutoff| Settings {
            pair: Some(PairForce {
                strength,
                softening,
                cutoff,
            }),
            ..Settings::DEFAULT
        };
        let d = Settings::DEFAULT;
        for s in [
            Settings { drag: -1.0, ..d },
            Settings {
                drag: f32::NAN,
                ..d
            },
            Settings {
                drag: f32::INFINITY,
                ..d
            },
            Settings { radius: -0.1, ..d },
            Settings {
                restitution: 1.5,
                ..d
            },
            Settings {
                friction: f32::NAN,
                ..d
            },
            Settings { max_step: 0.0, ..d },
            Settings {
                max_substeps: 0,
                ..d
            },
            pair(1.0, 0.0, 1.0),
            pair(1.0, -0.1, 1.0),
            pair(1.0, f32::NAN, 1.0),
            pair(1.0, 0.1, 0.0),
            pair(1.0, 0.1, -1.0),
            pair(1.0, 0.1, f32::INFINITY),
            pair(1.0, 0.1, 1e-45),
            pair(1e30, 1e-5, 1.0),
        ] {
            assert!(
                matches!(invalid(s), Error::InvalidParameter { .. }),
                "{s:?}"
            );
        }
        for s in [
            Settings {
                gravity: Vec3::new(0.0, f32::NAN, 0.0),
                ..d
            },
            pair(f32::NAN, 0.1, 1.0),
            pair(f32::INFINITY, 0.1, 1.0),
        ] {
            assert!(matches!(invalid(s), Error::NonFinite { .. }), "{s:?}");
        }
    }

    #[test]
    fn bad_steps_are_rejected() {
        let mut store = Store::new(4);
        let mut p = store.view(0);
        p.push(Vec3::ZERO, Vec3::X, 1.0).unwrap();
        let d = Settings::DEFAULT;
        for dt in [0.0, -0.01, f32::NAN, f32::INFINITY] {
            assert!(matches!(
                step(&mut p, &d, &[], None, dt),
                Err(Error::InvalidParameter { .. })
            ));
        }
        let with_pair = Settings {
            pair: Some(PairForce {
                strength: 1.0,
                softening: 0.1,
                cutoff: 0.5,
            }),
            ..d
        };
        assert!(matches!(
            step(&mut p, &with_pair, &[], None, 0.01),
            Err(Error::InvalidParameter { .. })
        ));
        // Scratch shorter than the capacity (4), not just the live count.
        let mut short = PairStore::new(3, 8);
        assert_eq!(
            step(&mut p, &with_pair, &[], Some(&mut short.scratch()), 0.01),
            Err(Error::BadLength {
                buffer: "pair acceleration x",
                expected: 4,
                actual: 3
            })
        );
        let mut short = PairStore::new(4, 8);
        short.entries.pop();
        short.keys.pop();
        assert_eq!(
            step(&mut p, &with_pair, &[], Some(&mut short.scratch()), 0.01),
            Err(Error::BadLength {
                buffer: "hash entries",
                expected: 4,
                actual: 3
            })
        );
        let bad = [Collider::Sphere {
            center: Vec3::ZERO,
            radius: -1.0,
        }];
        assert!(step(&mut p, &d, &bad, None, 0.01).is_err());
        let nan = [Collider::Plane {
            normal: Vec3::Y,
            offset: f32::NAN,
        }];
        assert!(matches!(
            step(&mut p, &d, &nan, None, 0.01),
            Err(Error::NonFinite { .. })
        ));
        assert_eq!(p.position(0), Some(Vec3::ZERO));
    }

    #[test]
    fn bad_hash_input_is_rejected() {
        let (mut t, mut e, mut k) = (vec![0u32; 1], vec![0u32; 4], vec![0u32; 4]);
        assert_eq!(
            SpatialHash::new(&mut t, &mut e, &mut k).unwrap_err(),
            Error::BufferTooSmall {
                needed: 2,
                actual: 1
            }
        );
        let (mut t, mut k3) = (vec![0u32; 2], vec![0u32; 3]);
        assert!(matches!(
            SpatialHash::new(&mut t, &mut e, &mut k3),
            Err(Error::BadLength {
                buffer: "hash keys",
                ..
            })
        ));
        let mut h = SpatialHash::new(&mut t, &mut e, &mut k).unwrap();
        let x = [0.0f32; 5];
        assert_eq!(
            h.build([&x, &x, &x], 1.0),
            Err(Error::BufferTooSmall {
                needed: 5,
                actual: 4
            })
        );
        assert!(matches!(
            h.build([&x[..3], &x[..2], &x[..3]], 1.0),
            Err(Error::BadLength {
                buffer: "position y",
                ..
            })
        ));
        for c in [0.0, -1.0, f32::NAN, f32::INFINITY, 1e-45] {
            assert!(matches!(
                h.build([&x[..3], &x[..3], &x[..3]], c),
                Err(Error::InvalidParameter { .. })
            ));
        }
        h.build([&x[..3], &x[..3], &x[..3]], 1.0).unwrap();
        assert_eq!(
            h.for_each_pair([&x[..3], &x[..3], &x[..3]], |_, _, _, _| {}),
            Ok(3)
        );
        assert!(matches!(
            h.for_each_pair([&x[..2], &x[..2], &x[..2]], |_, _, _, _| {}),
            Err(Error::BadLength { .. })
        ));
        let force = PairForce {
            strength: 1.0,
            softening: 0.1,
            cutoff: 1.0,
        };
        let (mut ax, mut ay, mut az) = ([0.0f32; 3], [0.0f32; 2], [0.0f32; 3]);
        assert!(matches!(
            pair_accelerations(
                &mut h,
                [&x[..3], &x[..3], &x[..3]],
                &force,
                [&mut ax, &mut ay, &mut az]
            ),
            Err(Error::BadLength {
                buffer: "acceleration y",
                ..
            })
        ));
    }

    #[test]
    fn bad_emitters_are_rejected_and_change_nothing() {
        let mut store = Store::new(8);
        let mut p = store.view(0);
        let models = joint_models();
        let s = sparks();
        let mut state = EmitterState::new(4);
        let before = state;
        let invalid = [
            Emitter { rate: -1.0, ..s },
            Emitter {
                rate: f32::NAN,
                ..s
            },
            Emitter {
                spawn_radius: -0.1,
                ..s
            },
            Emitter {
                direction: Vec3::ZERO,
                ..s
            },
            Emitter {
                cone_angle: -0.1,
                ..s
            },
            Emitter {
                cone_angle: 4.0,
                ..s
            },
            Emitter {
                speed: [3.0, 2.0],
                ..s
            },
            Emitter {
                speed: [-1.0, 2.0],
                ..s
            },
            Emitter {
                lifetime: [0.0, 1.0],
                ..s
            },
            Emitter {
                lifetime: [1.0, f32::INFINITY],
                ..s
            },
        ];
        for e in invalid {
            assert!(
                matches!(
                    emit(&e, &mut state, &models, 0.1, &mut p),
                    Err(Error::InvalidParameter { .. })
                ),
                "{e:?}"
            );
        }
        for e in [
            Emitter {
                offset: Vec3::new(f32::NAN, 0.0, 0.0),
                ..s
            },
            Emitter {
                direction: Vec3::new(0.0, f32::INFINITY, 0.0),
                ..s
            },
        ] {
            assert!(matches!(
                emit(&e, &mut state, &models, 0.1, &mut p),
                Err(Error::NonFinite { .. })
            ));
        }
        for dt in [0.0, -1.0, f32::NAN] {
            assert!(matches!(
                emit(&s, &mut state, &models, dt, &mut p),
                Err(Error::InvalidParameter { .. })
            ));
        }
        assert_eq!(
            emit(&s, &mut state, &models[..1], 0.1, &mut p),
            Err(Error::JointOutOfRange { joint: 1, count: 1 })
        );
        let mut nan = models;
        nan[1] = Mat4::from_translation(Vec3::new(f32::NAN, 0.0, 0.0));
        assert!(matches!(
            emit(&s, &mut state, &nan, 0.1, &mut p),
            Err(Error::NonFinite { .. })
        ));
        assert_eq!(state, before);
        assert!(p.is_empty());
    }
}
