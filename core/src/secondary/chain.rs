//! Spring bones: chains of joints (hair, tails, antennas, loose gear) that
//! follow the animation with inertia, simulated as particles.
//!
//! A chain is a path of joints, each the parent of the next
//! ([`SpringChain`]). Its first joint (the chain root) keeps its animated
//! position and drives the rest; every other joint is a particle. Each
//! frame the particles are stepped with position-based Verlet integration
//! over equal sub-steps ([`SubSteps`]): inertia with drag, gravity and wind,
//! and a pull towards the animated pose (stiffness). Then constraint passes
//! run from the root to the tip: each particle is put back at its bone's
//! length from its parent, within an angle of the animated bone direction,
//! and, when it is inside a collider, slid along that sphere of bone length
//! out past the collider's tangent plane at the contact (so one collider is
//! resolved in one pass without breaking the length; a particle wedged
//! between several takes more passes). Bone lengths and angle limits are
//! exact after every pass; collisions are the best the passes reach
//! ([`ChainReport::penetration`]). [`write_back`] turns the result into
//! local rotations of the chain's joints (through [`IkPose`], as the IK
//! solvers do), so FK and skinning see it.
//!
//! **Space.** Particles live in world space: the point `m` of the model
//! matrices is `world · m` ([`ChainJob::world`], the character's placement).
//! Moving the character moves the animated pose under the particles, so its
//! acceleration swings the chain with no extra input. When the model
//! matrices already include the placement (FK run with a root matrix), pass
//! the identity. Gravity, wind and colliders are world space too
//! ([`place_world`] places joint-attached shapes there).
//!
//! **Rates.** Stiffness and drag are fractions per 1/60 s
//! ([`REFERENCE_STEP`]): a sub-step of `h` seconds applies
//! `1 - (1 - s)^(60 h)`, so how the frame is cut does not change how fast
//! a particle is pulled or damped. The motion stays close across frame
//! rates (a tail on a fast, turning character stays within 1 cm at 30, 60
//! and 144 Hz in the tests); very soft chains whipped hard are chaotic, and
//! any change, the frame rate's too, moves them more.
//!
//! **State.** The caller owns it: per chain, `current` and `previous`
//! particle positions ([`ChainState`], one entry per chain joint; entry 0 is
//! the chain root's position at the end of the last step, from which the
//! root moves linearly to its new animated position over the frame's
//! sub-steps). Start it (and restart it after a teleport) with [`reset`].
//!
//! **Batches.** [`simulate_lanes`] steps four chains at once, one per
//! `f32x4` lane (chains of different lengths and settings, each with its
//! own pose, world and colliders); [`simulate`] is its scalar twin and the
//! specification. The lanes do the scalar operations in the same order
//! (no fused multiply-adds), so they agree to rounding (the tests require
//! 1e-5). Both are deterministic: the same inputs give the same bits.
//! [`write_back`] is scalar, one chain at a time.

use core::ops::{Add, Mul, Sub};

use wide::f32x4;

use crate::fp::Fp;
use crate::ik::IkPose;
use crate::math::{sqrt4, sqrt_f32, Mat4, Quat, Vec3};
use crate::secondary::collider::{self, Collider, JointCollider};
use crate::secondary::SubSteps;
use crate::skeleton::Skeleton;
use crate::soa::check_len;
use crate::Error;

/// The most joints a spring chain has (its root and up to 31 particles).
/// The working state of a step lives on the stack: about 2 KB for
/// [`simulate`] and [`write_back`], about 17 KB for [`simulate_lanes`].
pub const MAX_CHAIN: usize = 32;

/// The most colliders one chain collides with in a step (2.5 KB of stack
/// in [`simulate_lanes`]).
pub const MAX_COLLIDERS: usize = 16;

/// Chains per [`simulate_lanes`] call: the width of `f32x4`.
pub const LANES: usize = 4;

/// The step length stiffness and drag are expressed per: 1/60 s.
pub const REFERENCE_STEP: f32 = 1.0 / 60.0;

/// Directions shorter than this are treated as zero (the same threshold as
/// [`Vec3::try_normalize`]).
const TINY_LEN: f32 = 1e-12;

/// A bone shorter than this fraction of its joint's distance from the
/// origin (or than this, near the origin) is float noise: zero length.
const ZERO_BONE: f32 = 1e-6;

/// A validated spring chain: joints of a skeleton, root side first, each
/// the parent of the next, with no zero-length bone in the rest pose.
///
/// Joint 0 is the chain root (animated); joints `1..` are particles, and the
/// bone from joint `k` to joint `k + 1` is turned by joint `k`'s rotation.
/// The last joint is simulated as a particle but not rotated (it has no bone
/// in the chain). [`crate::ik::chain`] writes such a path from a start and
/// an end joint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpringChain<'c> {
    joints: &'c [u16],
}

impl<'c> SpringChain<'c> {
    /// Checks `joints` against `skeleton`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for fewer than 2 joints, a joint that is
    /// not the parent of the next, or a zero-length bone in the rest pose;
    /// [`Error::CapacityExceeded`] for more than [`MAX_CHAIN`] joints;
    /// [`Error::JointOutOfRange`] for a joint outside the skeleton.
    pub fn new(skeleton: &Skeleton<'_>, joints: &'c [u16]) -> Result<Self, Error> {
        if joints.len() < 2 {
            return Err(Error::InvalidParameter {
                what: "spring chain: at least 2 joints (one bone) are needed",
            });
        }
        if joints.len() > MAX_CHAIN {
            return Err(Error::CapacityExceeded {
                capacity: MAX_CHAIN,
            });
        }
        let count = skeleton.joint_count();
        for (i, &j) in joints.iter().enumerate() {
            let j = usize::from(j);
            if j >= count {
                return Err(Error::JointOutOfRange { joint: j, count });
            }
            if i > 0 && skeleton.parent(j) != Some(usize::from(joints[i - 1])) {
                return Err(Error::InvalidParameter {
                    what: "spring chain: each joint must be the parent of the next",
                });
            }
        }
        let rest = skeleton.rest_pose();
        for w in joints.windows(2) {
            let (parent, child) = (usize::from(w[0]), usize::from(w[1]));
            let (Some(p), Some(c)) = (
                crate::soa::get_joint(rest, parent),
                crate::soa::get_joint(rest, child),
            ) else {
                return Err(Error::JointOutOfRange {
                    joint: child,
                    count,
                });
            };
            // The child's offset in the parent's frame, with the parent's scale.
            let length = p.scale.mul_elem(c.translation).length();
            if length.is_nan() || length <= ZERO_BONE {
                return Err(Error::InvalidParameter {
                    what: "spring chain: zero-length bone in the rest pose",
                });
            }
        }
        Ok(SpringChain { joints })
    }

    /// The joints, root side first.
    #[inline]
    #[must_use]
    pub fn joints(&self) -> &'c [u16] {
        self.joints
    }

    /// Number of joints (2 to [`MAX_CHAIN`]); the state slices have this
    /// length.
    #[inline]
    #[must_use]
    pub fn joint_count(&self) -> usize {
        self.joints.len()
    }

    /// Number of simulated bones (spring bones): `joint_count() - 1`.
    #[inline]
    #[must_use]
    pub fn bone_count(&self) -> usize {
        self.joints.len() - 1
    }
}

/// How a chain moves. Lengths are the model's unit (metres for the defaults'
/// gravity), times in seconds, angles in radians.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChainSettings {
    /// Pull towards the animated pose, in `[0, 1]`: the fraction of the way
    /// to its animated position a particle moves per [`REFERENCE_STEP`].
    /// 0 is free (only the bones hold it), 1 rigid (the animated pose).
    pub stiffness: f32,
    /// Damping, in `[0, 1]`: the fraction of its velocity a particle loses
    /// per [`REFERENCE_STEP`]. 0 keeps all, 1 stops it every step.
    pub drag: f32,
    /// Gravity, world space, units/s².
    pub gravity: Vec3,
    /// Any other acceleration on every particle (wind), world space,
    /// units/s².
    pub wind: Vec3,
    /// Particle radius for collisions, `>= 0`.
    pub radius: f32,
    /// The largest angle between a simulated bone and its animated
    /// direction, in `[0, π]` (π: no limit), for every bone unless the job
    /// gives one per bone ([`ChainJob::angle_limits`]).
    pub max_angle: f32,
    /// Longest sub-step, seconds (> 0); see [`SubSteps::split`].
    pub max_step: f32,
    /// Most sub-steps per frame (>= 1); a longer frame is clamped.
    pub max_substeps: u32,
    /// Most constraint passes per sub-step (>= 1). A pass pushes every
    /// particle out of the colliders and projects it onto its bone length and
    /// angle limit; without colliders one pass solves exactly, so only one
    /// runs.
    pub iterations: u32,
    /// Passes stop when no particle moved more than this in the last one
    /// (units, `>= 0`).
    pub tolerance: f32,
}

impl Default for ChainSettings {
    /// Stiffness 0.1, drag 0.05, gravity 9.81 down −Y, no wind, radius 0, no
    /// angle limit, sub-steps of at most 1/120 s (at most 8), 4 passes,
    /// tolerance 1e-4.
    fn default() -> Self {
        ChainSettings {
            stiffness: 0.1,
            drag: 0.05,
            gravity: Vec3::new(0.0, -9.81, 0.0),
            wind: Vec3::ZERO,
            radius: 0.0,
            max_angle: core::f32::consts::PI,
            max_step: 1.0 / 120.0,
            max_substeps: 8,
            iterations: 4,
            tolerance: 1e-4,
        }
    }
}

impl ChainSettings {
    /// Checks every field's range.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a stiffness or drag outside `[0, 1]`
    /// (or NaN), a negative or non-finite radius, tolerance or maximum step,
    /// an angle outside `[0, π]`, zero iterations or sub-steps;
    /// [`Error::NonFinite`] for a non-finite gravity or wind.
    pub fn validate(&self) -> Result<(), Error> {
        let unit = |v: f32| (0.0..=1.0).contains(&v);
        if !unit(self.stiffness) {
            return Err(Error::InvalidParameter {
                what: "spring chain: stiffness must be in [0, 1]",
            });
        }
        if !unit(self.drag) {
            return Err(Error::InvalidParameter {
                what: "spring chain: drag must be in [0, 1]",
            });
        }
        if !self.gravity.is_finite() {
            return Err(Error::NonFinite {
                what: "spring chain gravity",
            });
        }
        if !self.wind.is_finite() {
            return Err(Error::NonFinite {
                what: "spring chain wind",
            });
        }
        if !(self.radius >= 0.0 && self.radius.is_finite()) {
            return Err(Error::InvalidParameter {
                what: "spring chain: particle radius must be finite and >= 0",
            });
        }
        if !(0.0..=core::f32::consts::PI).contains(&self.max_angle) {
            return Err(Error::InvalidParameter {
                what: "spring chain: angle limit must be in [0, pi]",
            });
        }
        if !(self.max_step > 0.0 && self.max_step.is_finite()) || self.max_substeps == 0 {
            return Err(Error::InvalidParameter {
                what: "spring chain: sub-steps must be positive",
            });
        }
        if self.iterations == 0 {
            return Err(Error::InvalidParameter {
                what: "spring chain: at least 1 constraint pass",
            });
        }
        if !(self.tolerance >= 0.0 && self.tolerance.is_finite()) {
            return Err(Error::InvalidParameter {
                what: "spring chain: tolerance must be finite and >= 0",
            });
        }
        Ok(())
    }
}

/// One chain's step: the chain, its settings, where the character is and
/// what it collides with.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChainJob<'a> {
    /// The chain.
    pub chain: SpringChain<'a>,
    /// How it moves.
    pub settings: ChainSettings,
    /// The character's placement: world = `world` · model space. Must be
    /// finite and invertible.
    pub world: Mat4,
    /// Shapes in world space, at most [`MAX_COLLIDERS`] (see
    /// [`place_world`]).
    pub colliders: &'a [Collider],
    /// Per-bone angle limits, radians in `[0, π]`, entry `k` for the bone
    /// from chain joint `k` to `k + 1`; empty (the default) for
    /// [`ChainSettings::max_angle`] on every bone.
    pub angle_limits: &'a [f32],
}

impl<'a> ChainJob<'a> {
    /// A job with the default settings, the identity placement and no
    /// colliders.
    #[inline]
    #[must_use]
    pub fn new(chain: SpringChain<'a>) -> Self {
        ChainJob {
            chain,
            settings: ChainSettings::default(),
            world: Mat4::IDENTITY,
            colliders: &[],
            angle_limits: &[],
        }
    }

    /// The same job with other settings.
    #[inline]
    #[must_use]
    pub fn with_settings(self, settings: ChainSettings) -> Self {
        ChainJob { settings, ..self }
    }

    /// The same job with another placement.
    #[inline]
    #[must_use]
    pub fn with_world(self, world: Mat4) -> Self {
        ChainJob { world, ..self }
    }

    /// The same job with colliders (world space).
    #[inline]
    #[must_use]
    pub fn with_colliders(self, colliders: &'a [Collider]) -> Self {
        ChainJob { colliders, ..self }
    }

    /// The same job with one angle limit per bone (`chain.bone_count()`
    /// entries).
    #[inline]
    #[must_use]
    pub fn with_angle_limits(self, angle_limits: &'a [f32]) -> Self {
        ChainJob {
            angle_limits,
            ..self
        }
    }
}

/// A chain's particles, owned by the caller and kept across frames: one
/// world-space position per chain joint in each slice.
#[derive(Debug)]
pub struct ChainState<'s> {
    /// Positions at the end of the last step (entry 0: the chain root's).
    pub current: &'s mut [Vec3],
    /// Positions one sub-step earlier (Verlet's velocity is the difference;
    /// entry 0 is kept equal to `current[0]`).
    pub previous: &'s mut [Vec3],
}

/// What a step did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChainReport {
    /// How the frame was cut; `steps.dropped > 0` when a long frame was
    /// clamped (only `max_step · max_substeps` seconds were simulated).
    pub steps: SubSteps,
    /// The most constraint passes a sub-step ran.
    pub passes: u32,
    /// The deepest a particle was left inside a collider after the step
    /// (units; 0 when none touches). Non-zero when the constraints conflict
    /// (two shapes wedge a particle, a collider lies beyond a bone's reach,
    /// the angle limit points into a shape) or the passes ran out.
    pub penetration: f32,
}

/// Places joint-attached shapes in world space: [`collider::place`] with
/// the model matrices, then each shape moved by `world`.
///
/// # Errors
/// As [`collider::place`]; [`Error::NonFinite`] for a non-finite `world`.
pub fn place_world(
    colliders: &[JointCollider],
    models: &[Mat4],
    world: &Mat4,
    out: &mut [Collider],
) -> Result<(), Error> {
    if !world.is_finite() {
        return Err(Error::NonFinite {
            what: "spring chain world matrix",
        });
    }
    collider::place(colliders, models, out)?;
    for c in out.iter_mut().take(colliders.len()) {
        *c = c.transformed(world);
    }
    Ok(())
}

/// Puts the particles on the animated pose with zero velocity: both state
/// slices get the world-space positions of the chain's joints.
///
/// # Errors
/// [`Error::BadLength`] unless both slices have `chain.joint_count()`
/// entries; [`Error::JointOutOfRange`] for a chain joint outside `models`;
/// [`Error::NonFinite`] for a non-finite position or `world`.
pub fn reset(
    chain: &SpringChain<'_>,
    models: &[Mat4],
    world: &Mat4,
    state: ChainState<'_>,
) -> Result<(), Error> {
    let n = chain.joint_count();
    check_len("spring chain current", n, state.current.len())?;
    check_len("spring chain previous", n, state.previous.len())?;
    let mut pos = [Vec3::ZERO; MAX_CHAIN];
    for (p, &j) in pos.iter_mut().zip(chain.joints) {
        *p = world.transform_point(model_of(models, usize::from(j))?.translation());
        if !p.is_finite() {
            return Err(Error::NonFinite {
                what: "spring chain animated pose",
            });
        }
    }
    state.current.copy_from_slice(&pos[..n]);
    state.previous.copy_from_slice(&pos[..n]);
    Ok(())
}

/// Steps one chain by `dt` seconds against the animated pose `models` (the
/// model matrices, as FK wrote them), updating `state`. The pose is not
/// changed; [`write_back`] applies the result (or use [`step`]).
///
/// # Errors
/// Nothing is written on error. [`Error::InvalidParameter`] for a `dt`
/// that is not finite and positive, bad settings
/// ([`ChainSettings::validate`]), a singular `world`, or a bone of zero
/// length in the animated pose; [`Error::NonFinite`] for a non-finite
/// state, pose, `world`, gravity or wind; [`Error::BadLength`] for state
/// slices that are not `chain.joint_count()` long or angle limits that are
/// neither empty nor `chain.bone_count()` long (an angle outside `[0, π]`
/// is [`Error::InvalidParameter`]);
/// [`Error::JointOutOfRange`] for a chain joint outside `models`;
/// [`Error::CapacityExceeded`] for more than [`MAX_COLLIDERS`] colliders,
/// and what [`Collider::validate`] reports.
pub fn simulate(
    job: &ChainJob<'_>,
    models: &[Mat4],
    state: ChainState<'_>,
    dt: f32,
) -> Result<ChainReport, Error> {
    let frame = Frame::new(
        job,
        |j| model_of(models, j),
        state.current,
        state.previous,
        dt,
    )?;
    Ok(run_scalar(
        &frame,
        job.colliders,
        state.current,
        state.previous,
    ))
}

/// Steps one chain ([`simulate`] with the pose's matrices) and writes the
/// result into the pose ([`write_back`]).
///
/// # Errors
/// As [`simulate`]; on error neither the state nor the pose is changed.
pub fn step(
    job: &ChainJob<'_>,
    pose: &mut IkPose<'_, '_>,
    state: ChainState<'_>,
    dt: f32,
) -> Result<ChainReport, Error> {
    let frame = Frame::new(
        job,
        |j| pose.model(j).copied(),
        state.current,
        state.previous,
        dt,
    )?;
    let report = run_scalar(&frame, job.colliders, state.current, state.previous);
    write_back(&job.chain, pose, &job.world, state.current)?;
    Ok(report)
}

/// Turns the chain's joints so that its bones point at the simulated
/// particles `current` (world space, as a step left them; `world` the
/// placement the step used).
///
/// Parent first, joint `k` gets the shortest rotation that turns its bone's
/// direction (with its parents' new rotations) onto the simulated one,
/// applied in the joint's own frame (`local' = local · correction`, as
/// [`IkPose::rotate_local`]); then the model matrices of the chain root's
/// subtree are updated. Bone lengths come from the pose, so the joints land
/// on the particles when the pose's lengths are the ones the step used.
/// The last joint is not rotated. Exact for rotation and uniform scale.
///
/// # Errors
/// Nothing is written on error. [`Error::BadLength`] unless `current` has
/// `chain.joint_count()` entries; [`Error::InvalidParameter`] for a
/// singular `world` or a zero-length bone in the pose;
/// [`Error::NonFinite`] for non-finite input; [`Error::JointOutOfRange`]
/// for a chain joint outside the pose.
pub fn write_back(
    chain: &SpringChain<'_>,
    pose: &mut IkPose<'_, '_>,
    world: &Mat4,
    current: &[Vec3],
) -> Result<(), Error> {
    let n = chain.joint_count();
    check_len("spring chain current", n, current.len())?;
    let inverse = inverse_world(world)?;
    let joints = chain.joints;
    let mut correction = [Quat::IDENTITY; MAX_CHAIN];
    // The model-space rotation the corrections so far added to everything
    // below the last corrected joint.
    let mut added = Quat::IDENTITY;
    for k in 0..n - 1 {
        let m = *pose.model(usize::from(joints[k]))?;
        let child = pose.model(usize::from(joints[k + 1]))?.translation();
        let animated =
            (child - m.translation())
                .try_normalize()
                .ok_or(Error::InvalidParameter {
                    what: "spring chain: zero-length bone in the animated pose",
                })?;
        let from = added.rotate(animated);
        let to = inverse
            .transform_vector(current[k + 1] - current[k])
            .try_normalize()
            .unwrap_or(from);
        let turn = Quat::from_rotation_arc(from, to);
        // The joint's model rotation with its parents' corrections: the
        // model-space turn in that frame is the local correction.
        let frame = (added * m.rotation()).normalize();
        correction[k] = frame.conjugate() * turn * frame;
        added = (turn * added).normalize();
    }
    if !correction[..n - 1].iter().all(|q| q.is_finite()) {
        return Err(Error::NonFinite {
            what: "spring chain result",
        });
    }
    for (&j, &q) in joints.iter().zip(&correction[..n - 1]) {
        pose.rotate_local(usize::from(j), q)?;
    }
    pose.update_models(usize::from(joints[0]))
}

/// One chain of a [`simulate_lanes`] batch.
#[derive(Debug)]
pub struct LaneChain<'a, 's> {
    /// The chain, its settings, placement and colliders.
    pub job: ChainJob<'a>,
    /// Its animated pose's model matrices.
    pub models: &'a [Mat4],
    /// Its particles.
    pub state: ChainState<'s>,
}

/// Steps up to four chains at once, one per `f32x4` lane: the batched
/// [`simulate`] (same results to float rounding), for crowds with many
/// chains. Chains may differ in length, settings, pose, placement and
/// colliders; `None` lanes are skipped. Reports come back per lane.
///
/// # Errors
/// What [`simulate`] reports for any lane; then nothing is written in any
/// lane.
pub fn simulate_lanes(
    lanes: &mut [Option<LaneChain<'_, '_>>; LANES],
    dt: f32,
) -> Result<[Option<ChainReport>; LANES], Error> {
    let mut frames: [Option<Frame>; LANES] = [None, None, None, None];
    for (f, lane) in frames.iter_mut().zip(lanes.iter()) {
        if let Some(l) = lane {
            let models = l.models;
            *f = Some(Frame::new(
                &l.job,
                |j| model_of(models, j),
                l.state.current,
                l.state.previous,
                dt,
            )?);
        }
    }
    let colliders: [&[Collider]; LANES] =
        core::array::from_fn(|l| lanes[l].as_ref().map_or(&[][..], |c| c.job.colliders));
    let mut x = [V4::ZERO; MAX_CHAIN];
    let mut y = [V4::ZERO; MAX_CHAIN];
    let n = frames.iter().flatten().map(|f| f.n).max().unwrap_or(0);
    for i in 0..n {
        x[i] = V4::gather(|l| match (&lanes[l], &frames[l]) {
            (Some(c), Some(f)) if i < f.n => c.state.current[i],
            _ => Vec3::ZERO,
        });
        y[i] = V4::gather(|l| match (&lanes[l], &frames[l]) {
            (Some(c), Some(f)) if i < f.n => c.state.previous[i],
            _ => Vec3::ZERO,
        });
    }
    let out = run_lanes(&frames, colliders, &mut x, &mut y);
    let mut reports = [None; LANES];
    for l in 0..LANES {
        let (Some(lane), Some(f)) = (&mut lanes[l], &frames[l]) else {
            continue;
        };
        let (passes, penetration) = out[l];
        for i in 0..f.n {
            lane.state.current[i] = x[i].lane(l);
            lane.state.previous[i] = y[i].lane(l);
        }
        reports[l] = Some(ChainReport {
            steps: f.steps,
            passes,
            penetration,
        });
    }
    Ok(reports)
}

/// `models[j]`, or [`Error::JointOutOfRange`].
fn model_of(models: &[Mat4], j: usize) -> Result<Mat4, Error> {
    models.get(j).copied().ok_or(Error::JointOutOfRange {
        joint: j,
        count: models.len(),
    })
}

fn inverse_world(world: &Mat4) -> Result<Mat4, Error> {
    if !world.is_finite() {
        return Err(Error::NonFinite {
            what: "spring chain world matrix",
        });
    }
    world.inverse_affine().ok_or(Error::InvalidParameter {
        what: "spring chain: world matrix must be invertible",
    })
}

/// One chain's frame, validated and precomputed: the animated pose in world
/// space and the per-sub-step constants.
#[derive(Clone, Copy)]
struct Frame {
    n: usize,
    steps: SubSteps,
    /// Animated joint positions, world space (entry 0: the root's goal).
    target: [Vec3; MAX_CHAIN],
    /// `dir[i]`: unit animated direction of the bone ending at particle `i`.
    dir: [Vec3; MAX_CHAIN],
    /// A unit vector perpendicular to `dir[i]`, for the angle limit of a
    /// bone pointing straight against its animated direction.
    side: [Vec3; MAX_CHAIN],
    /// `len[i]`: length of the bone ending at particle `i`.
    len: [f32; MAX_CHAIN],
    /// The root's position at the end of the last step.
    root_from: Vec3,
    /// Velocity kept per sub-step.
    keep: f32,
    /// Fraction of the way to the animated position per sub-step.
    pull: f32,
    /// Gravity and wind over one sub-step: `a · h²`.
    acc: Vec3,
    radius: f32,
    /// Cosine and sine of the angle limit of the bone ending at particle `i`.
    cos: [f32; MAX_CHAIN],
    sin: [f32; MAX_CHAIN],
    /// Most constraint passes.
    passes: u32,
    /// Squared tolerance.
    tol2: f32,
}

impl Frame {
    fn new(
        job: &ChainJob<'_>,
        model: impl Fn(usize) -> Result<Mat4, Error>,
        current: &[Vec3],
        previous: &[Vec3],
        dt: f32,
    ) -> Result<Frame, Error> {
        let s = &job.settings;
        s.validate()?;
        let steps = SubSteps::split(dt, s.max_step, s.max_substeps)?;
        let n = job.chain.joint_count();
        check_len("spring chain current", n, current.len())?;
        check_len("spring chain previous", n, previous.len())?;
        if !current.iter().chain(previous).all(|p| p.is_finite()) {
            return Err(Error::NonFinite {
                what: "spring chain state",
            });
        }
        let limits = job.angle_limits;
        if !limits.is_empty() {
            check_len("spring chain angle limits", n - 1, limits.len())?;
            if !limits
                .iter()
                .all(|a| (0.0..=core::f32::consts::PI).contains(a))
            {
                return Err(Error::InvalidParameter {
                    what: "spring chain: angle limit must be in [0, pi]",
                });
            }
        }
        if job.colliders.len() > MAX_COLLIDERS {
            return Err(Error::CapacityExceeded {
                capacity: MAX_COLLIDERS,
            });
        }
        for c in job.colliders {
            c.validate()?;
        }
        inverse_world(&job.world)?;

        let mut f = Frame {
            n,
            steps,
            target: [Vec3::ZERO; MAX_CHAIN],
            dir: [Vec3::X; MAX_CHAIN],
            side: [Vec3::Y; MAX_CHAIN],
            len: [0.0; MAX_CHAIN],
            root_from: current[0],
            keep: libm::powf(1.0 - s.drag, steps.step / REFERENCE_STEP),
            pull: 1.0 - libm::powf(1.0 - s.stiffness, steps.step / REFERENCE_STEP),
            acc: (s.gravity + s.wind) * (steps.step * steps.step),
            radius: s.radius,
            cos: [-1.0; MAX_CHAIN],
            sin: [0.0; MAX_CHAIN],
            passes: if job.colliders.is_empty() {
                1
            } else {
                s.iterations
            },
            tol2: s.tolerance * s.tolerance,
        };
        for (t, &j) in f.target.iter_mut().zip(job.chain.joints) {
            *t = job
                .world
                .transform_point(model(usize::from(j))?.translation());
            if !t.is_finite() {
                return Err(Error::NonFinite {
                    what: "spring chain animated pose",
                });
            }
        }
        if !f.acc.is_finite() {
            return Err(Error::NonFinite {
                what: "spring chain gravity and wind",
            });
        }
        for i in 1..n {
            let bone = f.target[i] - f.target[i - 1];
            let len = bone.length();
            let noise = ZERO_BONE * (1.0f32).max_num(f.target[i - 1].length());
            if len.is_nan() || len <= noise {
                return Err(Error::InvalidParameter {
                    what: "spring chain: zero-length bone in the animated pose",
                });
            }
            let limit = limits.get(i - 1).copied().unwrap_or(s.max_angle);
            f.cos[i] = libm::cosf(limit);
            f.sin[i] = libm::sinf(limit);
            f.dir[i] = bone * (1.0 / len);
            f.side[i] = perpendicular(f.dir[i]);
            f.len[i] = len;
        }
        Ok(f)
    }

    /// The sub-step `s`'s fraction of the frame, exactly 1 at the last one.
    #[inline]
    fn fraction(&self, s: u32) -> f32 {
        (s + 1) as f32 / self.steps.count as f32
    }
}

/// `p` moved to `len` from `prev`, within the angle limit (`cos`, `sin`)
/// of the animated direction `dir` (`side` perpendicular to it).
#[inline]
fn project(prev: Vec3, p: Vec3, dir: Vec3, side: Vec3, len: f32, cos: f32, sin: f32) -> Vec3 {
    let d = p - prev;
    let l = sqrt_f32(d.dot(d));
    // A non-finite length (a particle flung past f32 range) falls back to
    // the animated direction too, so the result stays finite.
    let mut u = if l > TINY_LEN && l < f32::INFINITY {
        d * (1.0 / l)
    } else {
        dir
    };
    let c = u.dot(dir);
    if c < cos {
        let perp = u - dir * c;
        let pl = sqrt_f32(perp.dot(perp));
        let w = if pl > TINY_LEN {
            perp * (1.0 / pl)
        } else {
            side
        };
        u = dir * cos + w * sin;
    }
    prev + u * len
}

/// `q` (at `len` from `prev`, inside a collider) moved to the nearest point
/// at `len` from `prev` on the outer side of the collider's tangent plane
/// at the contact (`on`, unit normal `n`), so the bone keeps its length.
/// The tangent plane of a convex shape bounds it, so that point is outside
/// the shape. When the plane is `len` or more above `prev`, no point at
/// `len` is outside: the particle goes as far out as it can, `prev + n·len`.
#[inline]
fn slide(prev: Vec3, q: Vec3, len: f32, on: Vec3, n: Vec3) -> Vec3 {
    let h = n.dot(on - prev);
    let rel = q - prev;
    let t = rel - n * n.dot(rel);
    let tl = sqrt_f32(t.dot(t));
    let along = if tl > TINY_LEN {
        t * (1.0 / tl)
    } else {
        perpendicular(n)
    };
    let rho = sqrt_f32((len * len - h * h).max_num(0.0));
    let slid = prev + n * h + along * rho;
    if h < len {
        slid
    } else {
        prev + n * len
    }
}

/// A unit vector perpendicular to unit `n`.
#[inline]
fn perpendicular(n: Vec3) -> Vec3 {
    let other = if libm::fabsf(n.x) < 0.9 {
        Vec3::X
    } else {
        Vec3::Y
    };
    let side = n.cross(other);
    side * (1.0 / sqrt_f32(side.dot(side)))
}

/// The constraint pass for particle `i`: onto its bone length and angle
/// limit, then out of each collider it touches along the length sphere, then
/// (if it touched one) onto the angle limit again.
#[inline]
fn constrain(f: &Frame, colliders: &[Collider], prev: Vec3, p: Vec3, i: usize) -> Vec3 {
    let (dir, side, len) = (f.dir[i], f.side[i], f.len[i]);
    let (cos, sin) = (f.cos[i], f.sin[i]);
    let mut p = project(prev, p, dir, side, len, cos, sin);
    let mut touched = false;
    for c in colliders {
        if let Some(k) = c.push_out(p, f.radius) {
            p = slide(prev, p, len, k.position, k.normal);
            touched = true;
        }
    }
    if touched {
        p = project(prev, p, dir, side, len, cos, sin);
    }
    p
}

/// The scalar step.
fn run_scalar(f: &Frame, colliders: &[Collider], x: &mut [Vec3], y: &mut [Vec3]) -> ChainReport {
    let n = f.n;
    let root_to = f.target[0];
    let mut passes = 0;
    for s in 0..f.steps.count {
        let t = f.fraction(s);
        let root = f.root_from * (1.0 - t) + root_to * t;
        let shift = root - root_to;
        x[0] = root;
        y[0] = root;
        for i in 1..n {
            let v = (x[i] - y[i]) * f.keep;
            y[i] = x[i];
            let p = x[i] + v + f.acc;
            x[i] = p + ((f.target[i] + shift) - p) * f.pull;
        }
        let mut pass = 0;
        loop {
            pass += 1;
            let mut moved = 0.0f32;
            for i in 1..n {
                let p = constrain(f, colliders, x[i - 1], x[i], i);
                let d = p - x[i];
                moved = moved.max_num(d.dot(d));
                x[i] = p;
            }
            if moved <= f.tol2 || pass >= f.passes {
                break;
            }
        }
        passes = passes.max(pass);
    }
    let mut penetration = 0.0f32;
    for p in &x[1..n] {
        for c in colliders {
            if let Some(k) = c.push_out(*p, f.radius) {
                penetration = penetration.max_num(k.depth);
            }
        }
    }
    ChainReport {
        steps: f.steps,
        passes,
        penetration,
    }
}

/// A vector per lane; operations in the scalar `Vec3` order so the lanes
/// give the scalar bits.
#[derive(Clone, Copy)]
struct V4 {
    x: f32x4,
    y: f32x4,
    z: f32x4,
}

impl V4 {
    const ZERO: V4 = V4 {
        x: f32x4::ZERO,
        y: f32x4::ZERO,
        z: f32x4::ZERO,
    };

    #[inline(always)]
    fn gather(f: impl Fn(usize) -> Vec3) -> V4 {
        let v: [Vec3; LANES] = core::array::from_fn(f);
        V4 {
            x: f32x4::new(v.map(|v| v.x)),
            y: f32x4::new(v.map(|v| v.y)),
            z: f32x4::new(v.map(|v| v.z)),
        }
    }

    #[inline(always)]
    fn lane(&self, l: usize) -> Vec3 {
        Vec3::new(
            self.x.to_array()[l],
            self.y.to_array()[l],
            self.z.to_array()[l],
        )
    }

    #[inline(always)]
    fn dot(self, o: V4) -> f32x4 {
        self.x * o.x + self.y * o.y + self.z * o.z
    }

    #[inline(always)]
    fn cross(self, o: V4) -> V4 {
        V4 {
            x: self.y * o.z - self.z * o.y,
            y: self.z * o.x - self.x * o.z,
            z: self.x * o.y - self.y * o.x,
        }
    }

    /// `mask`: `t` where set, `f` elsewhere.
    #[inline(always)]
    fn select(mask: f32x4, t: V4, f: V4) -> V4 {
        V4 {
            x: mask.bitselect(t.x, f.x),
            y: mask.bitselect(t.y, f.y),
            z: mask.bitselect(t.z, f.z),
        }
    }
}

impl Add for V4 {
    type Output = V4;
    #[inline(always)]
    fn add(self, o: V4) -> V4 {
        V4 {
            x: self.x + o.x,
            y: self.y + o.y,
            z: self.z + o.z,
        }
    }
}

impl Sub for V4 {
    type Output = V4;
    #[inline(always)]
    fn sub(self, o: V4) -> V4 {
        V4 {
            x: self.x - o.x,
            y: self.y - o.y,
            z: self.z - o.z,
        }
    }
}

impl Mul<f32x4> for V4 {
    type Output = V4;
    #[inline(always)]
    fn mul(self, s: f32x4) -> V4 {
        V4 {
            x: self.x * s,
            y: self.y * s,
            z: self.z * s,
        }
    }
}

/// A per-lane scalar from `f(lane)`.
#[inline(always)]
fn gather(f: impl Fn(usize) -> f32) -> f32x4 {
    f32x4::new(core::array::from_fn(f))
}

/// All-ones where `f(lane)`.
#[inline(always)]
fn mask(f: impl Fn(usize) -> bool) -> f32x4 {
    gather(|l| if f(l) { 1.0 } else { 0.0 }).simd_eq(f32x4::ONE)
}

/// Collider slot `k` of every lane: spheres and capsules as capsules `a`–`b`
/// of radius `r` (a sphere's `a` and `b` are its centre, which
/// [`collider::closest_on_segment`] returns for a degenerate axis), planes
/// as normal `a` and offset `r`.
#[derive(Clone, Copy)]
struct LaneCollider {
    a: V4,
    b: V4,
    r: f32x4,
    /// Lanes holding a sphere or capsule.
    round: f32x4,
    /// Lanes holding a plane.
    plane: f32x4,
    any_round: bool,
    any_plane: bool,
}

impl LaneCollider {
    const NONE: LaneCollider = LaneCollider {
        a: V4::ZERO,
        b: V4::ZERO,
        r: f32x4::ZERO,
        round: f32x4::ZERO,
        plane: f32x4::ZERO,
        any_round: false,
        any_plane: false,
    };

    fn gather(colliders: &[&[Collider]; LANES], k: usize) -> LaneCollider {
        let shape = |l: usize| colliders[l].get(k).copied();
        let parts = |l: usize| match shape(l) {
            Some(Collider::Sphere { center, radius }) => (center, center, radius),
            Some(Collider::Capsule { a, b, radius }) => (a, b, radius),
            Some(Collider::Plane { normal, offset }) => (normal, Vec3::ZERO, offset),
            None => (Vec3::ZERO, Vec3::ZERO, 0.0),
        };
        let is_plane = |l: usize| matches!(shape(l), Some(Collider::Plane { .. }));
        let is_round = |l: usize| shape(l).is_some() && !is_plane(l);
        LaneCollider {
            a: V4::gather(|l| parts(l).0),
            b: V4::gather(|l| parts(l).1),
            r: gather(|l| parts(l).2),
            round: mask(is_round),
            plane: mask(is_plane),
            any_round: (0..LANES).any(is_round),
            any_plane: (0..LANES).any(is_plane),
        }
    }

    /// The lanes of [`Collider::push_out`] for particles `p` of radius
    /// `radius`.
    #[inline(always)]
    fn push_out(&self, p: V4, radius: f32x4) -> LaneContact {
        let zero = f32x4::ZERO;
        let mut k = LaneContact {
            hit: zero,
            position: p,
            normal: V4::ZERO,
            depth: zero,
        };
        if self.any_round {
            let ab = self.b - self.a;
            let len2 = ab.dot(ab);
            let t = ((p - self.a).dot(ab) / len2)
                .max_num(zero)
                .min_num(f32x4::ONE);
            let on_axis = self.a + ab * t;
            let degenerate = len2.simd_le(f32x4::splat(f32::MIN_POSITIVE));
            let q = V4::select(degenerate, self.a, on_axis);
            let reach = self.r + radius;
            let d = p - q;
            let dist2 = d.dot(d);
            // As the scalar test `dist2 >= reach²` for "no contact".
            let hit = !dist2.simd_ge(reach * reach) & self.round;
            // Most particles touch nothing: skip the contact then.
            if hit.any() {
                let dist = sqrt4(dist2);
                let inv = f32x4::ONE / dist;
                let up = V4 {
                    x: zero,
                    y: f32x4::ONE,
                    z: zero,
                };
                let normal = V4::select(dist.simd_gt(f32x4::splat(1e-12)), d * inv, up);
                k.position = V4::select(hit, q + normal * reach, k.position);
                k.normal = V4::select(hit, normal, k.normal);
                k.depth = hit.bitselect(reach - dist, k.depth);
                k.hit = hit;
            }
        }
        if self.any_plane {
            let d = (self.r + radius) - self.a.dot(p);
            let hit = d.simd_gt(zero) & self.plane;
            if hit.any() {
                k.position = V4::select(hit, p + self.a * d, k.position);
                k.normal = V4::select(hit, self.a, k.normal);
                k.depth = hit.bitselect(d, k.depth);
                k.hit |= hit;
            }
        }
        k
    }
}

/// The lanes of a [`collider::Contact`], with the lanes that touch.
#[derive(Clone, Copy)]
struct LaneContact {
    hit: f32x4,
    position: V4,
    normal: V4,
    depth: f32x4,
}

/// The lanes of [`slide`].
#[inline(always)]
fn slide4(prev: V4, q: V4, len: f32x4, on: V4, n: V4) -> V4 {
    let tiny = f32x4::splat(TINY_LEN);
    let h = n.dot(on - prev);
    let rel = q - prev;
    let t = rel - n * n.dot(rel);
    let tl = sqrt4(t.dot(t));
    let tangent = tl.simd_gt(tiny);
    let mut along = t * (f32x4::ONE / tl);
    if !tangent.all() {
        along = V4::select(tangent, along, perpendicular4(n));
    }
    let rho = sqrt4((len * len - h * h).max_num(f32x4::ZERO));
    let slid = prev + n * h + along * rho;
    V4::select(h.simd_lt(len), slid, prev + n * len)
}

/// The lanes of [`perpendicular`].
#[inline(always)]
fn perpendicular4(n: V4) -> V4 {
    let near_x = n.x.abs().simd_lt(f32x4::splat(0.9));
    let other = V4 {
        x: near_x.bitselect(f32x4::ONE, f32x4::ZERO),
        y: near_x.bitselect(f32x4::ZERO, f32x4::ONE),
        z: f32x4::ZERO,
    };
    let side = n.cross(other);
    side * (f32x4::ONE / sqrt4(side.dot(side)))
}

/// The lanes of [`run_scalar`] (without the finite check, which the caller
/// makes per lane): returns each lane's (passes, penetration).
fn run_lanes(
    frames: &[Option<Frame>; LANES],
    colliders: [&[Collider]; LANES],
    x: &mut [V4; MAX_CHAIN],
    y: &mut [V4; MAX_CHAIN],
) -> [(u32, f32); LANES] {
    let n_of = |l: usize| frames[l].as_ref().map_or(0, |f| f.n);
    let n = (0..LANES).map(n_of).max().unwrap_or(0);
    let count_of = |l: usize| frames[l].as_ref().map_or(0, |f| f.steps.count);
    let counts = (0..LANES).map(count_of).max().unwrap_or(0);
    let with = |g: &dyn Fn(&Frame) -> f32, pad: f32| -> f32x4 {
        gather(|l| frames[l].as_ref().map_or(pad, g))
    };
    let with_v = |g: &dyn Fn(&Frame) -> Vec3, pad: Vec3| -> V4 {
        V4::gather(|l| frames[l].as_ref().map_or(pad, g))
    };
    // Padding lanes and particles get a unit bone along X so that every
    // lane computes finite numbers; their results are never stored.
    let mut target = [V4::ZERO; MAX_CHAIN];
    let mut dir = [V4::ZERO; MAX_CHAIN];
    let mut side = [V4::ZERO; MAX_CHAIN];
    let mut len = [f32x4::ZERO; MAX_CHAIN];
    let mut cos = [f32x4::ZERO; MAX_CHAIN];
    let mut sin = [f32x4::ZERO; MAX_CHAIN];
    let mut valid = [f32x4::ZERO; MAX_CHAIN];
    for i in 0..n {
        let live = |f: &Frame| i < f.n;
        target[i] = with_v(
            &|f| if live(f) { f.target[i] } else { Vec3::ZERO },
            Vec3::ZERO,
        );
        dir[i] = with_v(&|f| if live(f) { f.dir[i] } else { Vec3::X }, Vec3::X);
        side[i] = with_v(&|f| if live(f) { f.side[i] } else { Vec3::Y }, Vec3::Y);
        len[i] = with(&|f| if live(f) { f.len[i] } else { 1.0 }, 1.0);
        cos[i] = with(&|f| if live(f) { f.cos[i] } else { -1.0 }, -1.0);
        sin[i] = with(&|f| if live(f) { f.sin[i] } else { 0.0 }, 0.0);
        valid[i] = mask(|l| i < n_of(l));
    }
    let root_from = with_v(&|f| f.root_from, Vec3::ZERO);
    let root_to = target[0];
    let keep = with(&|f| f.keep, 0.0);
    let pull = with(&|f| f.pull, 0.0);
    let acc = with_v(&|f| f.acc, Vec3::ZERO);
    let radius = with(&|f| f.radius, 0.0);
    let max_passes = with(&|f| f.passes as f32, 0.0);
    let tol2 = with(&|f| f.tol2, 0.0);
    let mut lane_colliders = [LaneCollider::NONE; MAX_COLLIDERS];
    let k_count = colliders.iter().map(|c| c.len()).max().unwrap_or(0);
    for (k, c) in lane_colliders.iter_mut().enumerate().take(k_count) {
        *c = LaneCollider::gather(&colliders, k);
    }
    let lane_colliders = &lane_colliders[..k_count.min(MAX_COLLIDERS)];

    let mut passes = [0u32; LANES];
    for s in 0..counts {
        let active = mask(|l| s < count_of(l));
        let t = with(
            &|f| {
                if s < f.steps.count {
                    f.fraction(s)
                } else {
                    1.0
                }
            },
            1.0,
        );
        let root = root_from * (f32x4::ONE - t) + root_to * t;
        let shift = root - root_to;
        x[0] = V4::select(active, root, x[0]);
        y[0] = V4::select(active, root, y[0]);
        for i in 1..n {
            let v = (x[i] - y[i]) * keep;
            let p = x[i] + v + acc;
            let q = p + ((target[i] + shift) - p) * pull;
            y[i] = V4::select(active, x[i], y[i]);
            x[i] = V4::select(active, q, x[i]);
        }
        let mut going = active;
        let mut pass = 0u32;
        while going.any() {
            pass += 1;
            let mut moved = f32x4::ZERO;
            for i in 1..n {
                let prev = x[i - 1];
                let (c, s) = (cos[i], sin[i]);
                let mut p = project4(prev, x[i], dir[i], side[i], len[i], c, s);
                let mut touched = f32x4::ZERO;
                for c in lane_colliders {
                    let k = c.push_out(p, radius);
                    if k.hit.any() {
                        let slid = slide4(prev, p, len[i], k.position, k.normal);
                        p = V4::select(k.hit, slid, p);
                        touched |= k.hit;
                    }
                }
                if touched.any() {
                    let again = project4(prev, p, dir[i], side[i], len[i], c, s);
                    p = V4::select(touched, again, p);
                }
                let d = p - x[i];
                moved = moved.max_num(valid[i].bitselect(d.dot(d), f32x4::ZERO));
                x[i] = V4::select(going, p, x[i]);
            }
            let ran = going.to_bitmask();
            for (l, p) in passes.iter_mut().enumerate() {
                if ran & (1 << l) != 0 {
                    *p = (*p).max(pass);
                }
            }
            let done = moved.simd_le(tol2) | f32x4::splat(pass as f32).simd_ge(max_passes);
            going &= !done;
        }
    }
    let mut penetration = f32x4::ZERO;
    for i in 1..n {
        for c in lane_colliders {
            let k = c.push_out(x[i], radius);
            let depth = (k.hit & valid[i]).bitselect(k.depth, f32x4::ZERO);
            penetration = penetration.max_num(depth);
        }
    }
    let penetration = penetration.to_array();
    core::array::from_fn(|l| (passes[l], penetration[l]))
}

/// The lanes of [`project`].
#[inline(always)]
fn project4(prev: V4, p: V4, dir: V4, side: V4, len: f32x4, cos: f32x4, sin: f32x4) -> V4 {
    let tiny = f32x4::splat(TINY_LEN);
    let d = p - prev;
    let l = sqrt4(d.dot(d));
    let usable = l.simd_gt(tiny) & l.simd_lt(f32x4::splat(f32::INFINITY));
    let mut u = V4::select(usable, d * (f32x4::ONE / l), dir);
    let c = u.dot(dir);
    let limit = c.simd_lt(cos);
    if limit.any() {
        let perp = u - dir * c;
        let pl = sqrt4(perp.dot(perp));
        let w = V4::select(pl.simd_gt(tiny), perp * (f32x4::ONE / pl), side);
        u = V4::select(limit, dir * cos + w * sin, u);
    }
    prev + u * len
}

#[cfg(test)]
mod tests;
