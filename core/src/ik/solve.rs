//! What the chain solvers (CCD, FABRIK, Jacobian) share: the job
//! description, the report, and the chain's working state.
//!
//! A solver copies the chain out of the pose into a fixed-capacity state
//! (local rotations, model rotations, joint positions and each bone as a
//! vector in its joint's frame), iterates on that copy with a chain-only
//! forward kinematics, and writes the local rotations back and updates the
//! model matrices once at the end. So a solve costs O(chain) per
//! forward-kinematics step however large the subtree below the chain is,
//! and on error nothing has been written.

use super::limits::JointLimit;
use super::IkPose;
use crate::fp::Fp;
use crate::math::{Quat, Vec3};
use crate::Error;

/// The longest chain the solvers take: 32 joints. Their working state lives
/// on the stack: about 2 KB for CCD and FABRIK, about 5 KB for the
/// Jacobian solvers (whose matrix has up to 6 × 96 entries).
pub const MAX_CHAIN: usize = 32;

/// A chain and the goal for its end effector, shared by [`super::ccd`],
/// [`super::fabrik`] and [`super::jacobian`].
///
/// The end effector is the point `offset` in the last chain joint's local
/// space (the joint's origin when `offset` is zero), and the goal is to
/// bring it to `target` (model space, the space of the pose's matrices).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChainJob<'c> {
    /// The joints, root side first, each the parent of the next (as
    /// [`super::chain`] writes them); 1 to [`MAX_CHAIN`] joints. Every joint
    /// of the chain may rotate, the last one too (it moves the effector
    /// only through `offset`).
    pub chain: &'c [u16],
    /// Where the end effector should go, model space.
    pub target: Vec3,
    /// The end effector in the last joint's local space (its unit, scale
    /// included); zero by default.
    pub offset: Vec3,
    /// Limits, one per chain joint, or empty for none.
    pub limits: &'c [JointLimit],
    /// Most iterations (sweeps over the chain) to run; 0 only applies the
    /// limits. 16 by default.
    pub max_iterations: u32,
    /// Stop when the effector is within this distance of the target (model
    /// units, `>= 0`); 1e-3 by default.
    pub tolerance: f32,
}

impl<'c> ChainJob<'c> {
    /// A job for `chain` towards `target`, no offset, no limits, at most 16
    /// iterations, tolerance 1e-3.
    #[inline]
    #[must_use]
    pub fn new(chain: &'c [u16], target: Vec3) -> Self {
        ChainJob {
            chain,
            target,
            offset: Vec3::ZERO,
            limits: &[],
            max_iterations: 16,
            tolerance: 1e-3,
        }
    }

    /// The same job with an end-effector offset (last joint's local space).
    #[inline]
    #[must_use]
    pub fn with_offset(self, offset: Vec3) -> Self {
        ChainJob { offset, ..self }
    }

    /// The same job with per-joint limits (one per chain joint).
    #[inline]
    #[must_use]
    pub fn with_limits(self, limits: &'c [JointLimit]) -> Self {
        ChainJob { limits, ..self }
    }

    /// The same job with another iteration limit and tolerance.
    #[inline]
    #[must_use]
    pub fn with_iterations(self, max_iterations: u32, tolerance: f32) -> Self {
        ChainJob {
            max_iterations,
            tolerance,
            ..self
        }
    }
}

/// What a chain solve did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IkReport {
    /// Iterations run (0 when the effector started within the tolerance).
    pub iterations: u32,
    /// Distance from the end effector to the target after the solve, read
    /// from the updated model matrices (model units).
    pub distance: f32,
    /// True when the solver's stop test passed: the goal met within the
    /// tolerance as measured on the solver's own copy of the chain. That
    /// measure and `distance` agree to float rounding (exactly in real
    /// arithmetic for uniform scale), so right at the tolerance `distance`
    /// may exceed it by a few ulps; under non-uniform scale along the chain
    /// they can differ more.
    pub reached: bool,
}

/// The rotation by the rotation vector `v` (axis × angle, radians).
#[must_use]
pub(crate) fn exp(v: Vec3) -> Quat {
    let angle = v.length();
    if angle < 1e-8 {
        // sin(a/2)/a → 1/2: first order, renormalised.
        return Quat::new(v.x * 0.5, v.y * 0.5, v.z * 0.5, 1.0).normalize();
    }
    let s = libm::sinf(angle * 0.5) / angle;
    Quat::new(v.x * s, v.y * s, v.z * s, libm::cosf(angle * 0.5))
}

/// The rotation vector (axis × angle, angle in `[0, π]`) of a unit rotation.
#[must_use]
pub(crate) fn log(q: Quat) -> Vec3 {
    let q = if q.w < 0.0 { -q } else { q };
    let v = Vec3::new(q.x, q.y, q.z);
    let s = v.length();
    if s < 1e-8 {
        return v * 2.0;
    }
    v * (2.0 * libm::atan2f(s, q.w) / s)
}

/// A bone shorter than this fraction of its joint's distance from the
/// origin (or than this, near the origin) is float noise: zero length.
const ZERO_BONE: f32 = 1e-6;

/// The chain copied out of the pose.
pub(crate) struct ChainState {
    pub n: usize,
    pub joints: [u16; MAX_CHAIN],
    /// Model rotation of the first joint's parent frame.
    pub parent: Quat,
    /// Local rotations `r_i`.
    pub local: [Quat; MAX_CHAIN],
    /// Model rotations `R_i = R_{i-1} · r_i`.
    pub rot: [Quat; MAX_CHAIN],
    /// Bone `i` (joint `i` to joint `i + 1`, the last one to the effector)
    /// in joint `i`'s rotated frame: `p_{i+1} = p_i + R_i · bone_i`.
    pub bone: [Vec3; MAX_CHAIN],
    /// Bone lengths (0 for a zero-length bone).
    pub len: [f32; MAX_CHAIN],
    /// Joint positions, `pos[n]` the end effector.
    pub pos: [Vec3; MAX_CHAIN + 1],
    /// How many times [`ChainState::unstall`] has bent the chain: each time
    /// it turns the next joint, so that a dead end one joint cannot leave
    /// is left by another.
    pub unstalls: u32,
}

impl ChainState {
    /// Validates the job against the pose and copies the chain out, with
    /// the limits applied to its local rotations.
    pub fn new(pose: &IkPose<'_, '_>, job: &ChainJob<'_>) -> Result<ChainState, Error> {
        let chain = job.chain;
        let n = chain.len();
        if n == 0 {
            return Err(Error::InvalidParameter {
                what: "IK chain: the chain has no joints",
            });
        }
        if n > MAX_CHAIN {
            return Err(Error::CapacityExceeded {
                capacity: MAX_CHAIN,
            });
        }
        check_goal(job.target, job.offset)?;
        check_tolerance(job.tolerance)?;
        if !job.limits.is_empty() && job.limits.len() != n {
            return Err(Error::BadLength {
                buffer: "joint limits",
                expected: n,
                actual: job.limits.len(),
            });
        }
        check_links(pose, chain)?;

        let mut s = ChainState {
            n,
            joints: [0; MAX_CHAIN],
            parent: Quat::IDENTITY,
            local: [Quat::IDENTITY; MAX_CHAIN],
            rot: [Quat::IDENTITY; MAX_CHAIN],
            bone: [Vec3::ZERO; MAX_CHAIN],
            len: [0.0; MAX_CHAIN],
            pos: [Vec3::ZERO; MAX_CHAIN + 1],
            unstalls: 0,
        };
        s.joints[..n].copy_from_slice(chain);
        for (i, &j) in chain.iter().enumerate() {
            let j = usize::from(j);
            s.local[i] = pose.local(j)?.rotation.normalize();
            s.pos[i] = pose.models[j].translation();
        }
        let last = usize::from(chain[n - 1]);
        s.pos[n] = pose.models[last].transform_point(job.offset);
        // The parent frame from the first joint's matrix, so that the
        // chain's own FK reproduces the matrices' positions exactly.
        s.parent =
            (pose.models[usize::from(chain[0])].rotation() * s.local[0].conjugate()).normalize();
        let mut parent = s.parent;
        let mut total = 0.0;
        for i in 0..n {
            s.rot[i] = parent * s.local[i];
            parent = s.rot[i];
            let b = s.pos[i + 1] - s.pos[i];
            s.len[i] = bone_length(b, s.pos[i]);
            s.bone[i] = s.rot[i].conjugate().rotate(b);
            total += s.len[i];
        }
        let finite = s.parent.is_finite()
            && s.pos[..=n].iter().all(|p| p.is_finite())
            && s.rot[..n].iter().all(|q| q.is_finite());
        if !finite {
            return Err(Error::NonFinite {
                what: "IK chain pose",
            });
        }
        if total == 0.0 {
            return Err(Error::InvalidParameter {
                what: "IK chain: the bones and the effector offset have zero total length",
            });
        }
        if !job.limits.is_empty() {
            for i in 0..n {
                s.local[i] = job.limits[i].project(s.local[i]);
            }
            s.fk_from(0);
        }
        Ok(s)
    }

    /// The sum of the bone lengths (the chain's reach from its first joint).
    pub fn reach(&self) -> f32 {
        self.len[..self.n].iter().sum()
    }

    /// Chain-only FK from joint `i`: model rotations of `i..n` and
    /// positions of `i + 1 ..= n`.
    pub fn fk_from(&mut self, i: usize) {
        let mut parent = if i == 0 { self.parent } else { self.rot[i - 1] };
        for k in i..self.n {
            self.rot[k] = parent * self.local[k];
            self.pos[k + 1] = self.pos[k] + self.rot[k].rotate(self.bone[k]);
            parent = self.rot[k];
        }
    }

    /// Turns joint `i` by `delta` (model space, about the joint), applies
    /// its limit and updates the chain below it.
    pub fn rotate_model(&mut self, i: usize, delta: Quat, limit: Option<&JointLimit>) {
        let r = self.rot[i];
        self.set_local(i, self.local[i] * (r.conjugate() * delta * r), limit);
        self.fk_from(i);
    }

    /// Sets joint `i`'s local rotation (normalised, limited); the caller
    /// updates the FK.
    pub fn set_local(&mut self, i: usize, local: Quat, limit: Option<&JointLimit>) {
        self.local[i] = limited(local, limit);
    }

    /// The distance of the end effector (`pos[end]`) to `target` after an
    /// iteration that started at distance `last`: when the iteration gained
    /// no more than `stalled` or a thousandth of the distance, the chain is
    /// first moved off a collinear dead end
    /// ([`ChainState::unstall`]).
    pub fn distance_after_step(
        &mut self,
        end: usize,
        last: f32,
        stalled: f32,
        target: Vec3,
        limits: &[JointLimit],
    ) -> f32 {
        let distance = (self.pos[end] - target).length();
        if gained_little(last, distance, stalled) && self.unstall(target, limits) {
            return (self.pos[end] - target).length();
        }
        distance
    }

    /// Bends the chain out of a collinear dead end: when every bone lies
    /// within about a degree of the line from the first joint to the
    /// target, no joint's shortest arc (nor any Jacobian column along that
    /// line) moves the effector along it, and the solvers stall folded, or
    /// straight past a target inside the reach. Then one joint with a bone
    /// (short of the last) turns by 0.1 rad about an axis perpendicular to
    /// the line, which moves a joint off the line; returns whether it did.
    /// The first bend turns the middle such joint and each later one the
    /// next, because a zigzag fold can be a dead end for all but one joint
    /// (CCD cannot shorten a folded chain whose first bone points at the
    /// target by turning the joints after it). The straight chain pointing
    /// at a target beyond its reach is the answer, not a dead end, and is
    /// left alone.
    pub fn unstall(&mut self, target: Vec3, limits: &[JointLimit]) -> bool {
        let n = self.n;
        let bones = (0..n)
            .filter(|&i| self.len[i] != 0.0)
            .map(|i| (i, self.rot[i].rotate(self.bone[i]) * (1.0 / self.len[i])));
        let bend = dead_end_bend(
            self.pos[0],
            self.pos[n],
            target,
            self.reach(),
            bones,
            self.unstalls,
        );
        let Some((k, delta)) = bend else {
            return false;
        };
        self.unstalls = self.unstalls.wrapping_add(1);
        self.rotate_model(k, delta, limit_of(limits, k));
        true
    }

    /// Writes the local rotations into the pose, updates the model matrices
    /// of the chain's subtree and reports the effector's distance from the
    /// matrices.
    pub fn commit(
        &self,
        pose: &mut IkPose<'_, '_>,
        job: &ChainJob<'_>,
        iterations: u32,
    ) -> Result<IkReport, Error> {
        let n = self.n;
        write_back(pose, &self.joints[..n], &self.local[..n])?;
        let end = pose.models[usize::from(self.joints[n - 1])].transform_point(job.offset);
        Ok(IkReport {
            iterations,
            distance: (end - job.target).length(),
            reached: (self.pos[n] - job.target).length() <= job.tolerance,
        })
    }
}

/// The limit of chain joint `i`, if the job has limits.
#[inline]
pub(crate) fn limit_of(limits: &[JointLimit], i: usize) -> Option<&JointLimit> {
    limits.get(i)
}

/// True when an iteration that took the effector from `last` to `distance`
/// from its target gained no more than `stalled` or a thousandth of the
/// distance: a sign that the solver may be stuck in a dead end.
#[inline]
pub(crate) fn gained_little(last: f32, distance: f32, stalled: f32) -> bool {
    last - distance <= stalled.max_num(1e-3 * distance)
}

/// `local` normalised and, with a limit, projected onto it.
#[inline]
pub(crate) fn limited(local: Quat, limit: Option<&JointLimit>) -> Quat {
    let q = local.normalize();
    match limit {
        Some(l) => l.project(q),
        None => q,
    }
}

/// Validates an effector goal: a finite target and offset.
pub(crate) fn check_goal(target: Vec3, offset: Vec3) -> Result<(), Error> {
    if !target.is_finite() {
        return Err(Error::NonFinite { what: "IK target" });
    }
    if !offset.is_finite() {
        return Err(Error::NonFinite {
            what: "IK effector offset",
        });
    }
    Ok(())
}

/// Validates a stop tolerance: finite and `>= 0`.
pub(crate) fn check_tolerance(tolerance: f32) -> Result<(), Error> {
    if tolerance >= 0.0 && tolerance.is_finite() {
        Ok(())
    } else {
        Err(Error::InvalidParameter {
            what: "IK tolerance must be finite and >= 0",
        })
    }
}

/// Validates a chain of joints: each within the skeleton and the parent of
/// the next.
pub(crate) fn check_links(pose: &IkPose<'_, '_>, chain: &[u16]) -> Result<(), Error> {
    let count = pose.skeleton.joint_count();
    for (i, &j) in chain.iter().enumerate() {
        let j = usize::from(j);
        if j >= count {
            return Err(Error::JointOutOfRange { joint: j, count });
        }
        if i > 0 && pose.skeleton.parent(j) != Some(usize::from(chain[i - 1])) {
            return Err(Error::InvalidParameter {
                what: "IK chain: each joint must be the parent of the next",
            });
        }
    }
    Ok(())
}

/// The length of bone `b` from a joint at `from`, or 0 when it is float
/// noise ([`ZERO_BONE`]).
#[inline]
pub(crate) fn bone_length(b: Vec3, from: Vec3) -> f32 {
    let len = b.length();
    let noise = ZERO_BONE * (1.0f32).max_num(from.length());
    if len > noise {
        len
    } else {
        0.0
    }
}

/// Writes the solved local rotations of `joints` (validated, root side
/// first) into the pose and updates the model matrices of the first
/// joint's subtree. A non-finite rotation is an error before anything is
/// written.
pub(crate) fn write_back(
    pose: &mut IkPose<'_, '_>,
    joints: &[u16],
    local: &[Quat],
) -> Result<(), Error> {
    if !local.iter().all(|q| q.is_finite()) {
        return Err(Error::NonFinite {
            what: "IK solution",
        });
    }
    for (&j, &q) in joints.iter().zip(local) {
        pose.set_local_rotation(usize::from(j), q)?;
    }
    match joints.first() {
        Some(&first) => pose.update_models(usize::from(first)),
        None => Ok(()),
    }
}

/// The bend that moves a path of bones out of a collinear dead end (see
/// [`ChainState::unstall`]), or `None` when the path is no dead end.
///
/// The path runs from the joint at `first` to the effector at `effector`
/// and reaches `reach`; `bones` lists, root side first, each bone of
/// non-zero length as the index of the joint that turns it and its unit
/// model-space direction (at most [`MAX_CHAIN`] bones). `bends` is how many
/// bends the solve has made so far. Returns the joint to turn and the
/// model-space rotation to turn it by.
pub(crate) fn dead_end_bend(
    first: Vec3,
    effector: Vec3,
    target: Vec3,
    reach: f32,
    bones: impl Iterator<Item = (usize, Vec3)>,
    bends: u32,
) -> Option<(usize, Quat)> {
    let line = (target - first)
        .try_normalize()
        .or_else(|| (effector - first).try_normalize())?;
    let mut forward = true;
    let mut joints = [0u8; MAX_CHAIN];
    let mut count = 0;
    for (i, dir) in bones {
        if dir.cross(line).length() > 2e-2 {
            return None;
        }
        forward &= dir.dot(line) > 0.0;
        // Callers pass at most MAX_CHAIN bones of joints below MAX_CHAIN.
        if let Some(slot) = joints.get_mut(count) {
            *slot = i as u8;
            count += 1;
        }
    }
    let beyond = (target - first).length() >= reach * (1.0 - 1e-6);
    if count < 2 || (forward && beyond) {
        return None;
    }
    // Not the last joint with a bone: turning it would move only the
    // effector, which FABRIK's backward pass puts back on the line.
    let turnable = count - 1;
    let k = usize::from(joints[((count - 1) / 2 + bends as usize) % turnable]);
    let other = if libm::fabsf(line.x) < 0.9 {
        Vec3::X
    } else {
        Vec3::Y
    };
    let axis = line.cross(other).try_normalize()?;
    Some((k, Quat::from_axis_angle(axis, 0.1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_and_log_are_inverse() {
        for v in [
            Vec3::ZERO,
            Vec3::new(1e-9, 0.0, 0.0),
            Vec3::new(0.3, -0.2, 0.1),
            Vec3::new(0.0, 3.0, 0.0),
        ] {
            let back = log(exp(v));
            assert!((back - v).length() < 1e-5, "{v:?} -> {back:?}");
        }
        let q = Quat::from_axis_angle(Vec3::Z, 1.0);
        assert!((log(q) - Vec3::new(0.0, 0.0, 1.0)).length() < 1e-6);
    }
}
