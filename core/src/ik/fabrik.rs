//! FABRIK (forward and backward reaching inverse kinematics) on the chain's
//! joint positions.
//!
//! One iteration is a backward pass (put the effector on the target, then
//! pull each joint towards its child, keeping bone lengths) and a forward
//! pass (put the first joint back at its base and pull each joint towards
//! the backward pass's positions). The forward pass works in rotations: it
//! turns each bone from its current direction to the new one by the
//! shortest arc (so each joint keeps as much of its twist as it can), root
//! side first, applies the joint's limit (hinge or swing cone and twist),
//! and places the next joint where the limited bone ends; the solved
//! positions and the local rotations are therefore always consistent and
//! within the limits. A target beyond the chain's reach gives the straight
//! chain pointing at it (one iteration, then limited). A chain stuck on the
//! line to its target (folded, or straight past a nearer target, where the
//! passes reproduce the same collinear positions) gets a small bend so that
//! the next iteration can make progress.

use super::solve::{limit_of, ChainJob, ChainState, IkReport, MAX_CHAIN};
use super::IkPose;
use crate::math::{Quat, Vec3};
use crate::Error;

/// Solves `job` by FABRIK on `pose`: a reachability test (the distance from
/// the first joint to the target against the sum of the bone lengths,
/// offset included), then iterations until the effector is within
/// `job.tolerance` of the target or `job.max_iterations` have run; writes
/// the chain's local rotations and updates the model matrices of the subtree
/// under the chain's first joint. Joints outside the chain are not written.
/// Joints with limits end within them, even when no iteration runs.
/// Zero-length bones (joints at their parent's position) keep their
/// rotation, limited.
///
/// # Errors
/// As [`super::ccd::solve`]; nothing is written on error.
pub fn solve(pose: &mut IkPose<'_, '_>, job: &ChainJob<'_>) -> Result<IkReport, Error> {
    let mut s = ChainState::new(pose, job)?;
    let n = s.n;
    let target = job.target;
    let base = s.pos[0];
    let mut p = s.pos;
    let mut iterations = 0;
    // `p` holds the pass's positions; each backward pass starts from the
    // chain as the last forward pass left it.
    if job.max_iterations > 0 && (target - base).length() >= s.reach() {
        // Unreachable (or just reachable): the straight chain. `reach > 0`
        // (checked when the state was made), so the direction exists.
        let dir = (target - base).try_normalize().unwrap_or(Vec3::X);
        for i in 0..n {
            p[i + 1] = p[i] + dir * s.len[i];
        }
        forward(&mut s, &p, job);
        iterations = 1;
    } else {
        let mut distance = (s.pos[n] - target).length();
        let stalled = 1e-6 * s.reach();
        while iterations < job.max_iterations && distance > job.tolerance {
            p = s.pos;
            backward(&s, &mut p, target);
            forward(&mut s, &p, job);
            iterations += 1;
            distance = s.distance_after_step(n, distance, stalled, target, job.limits);
        }
    }
    s.commit(pose, job, iterations)
}

/// The backward pass: the effector on the target, then each joint on the
/// line to its (new) child at its bone's length. A joint that lands on its
/// child keeps its bone's current direction.
fn backward(s: &ChainState, p: &mut [Vec3; MAX_CHAIN + 1], target: Vec3) {
    p[s.n] = target;
    for i in (0..s.n).rev() {
        p[i] = pull(p[i], p[i + 1], s.len[i], || s.rot[i].rotate(s.bone[i]));
    }
}

/// One step of a backward pass: where a joint now at `at` goes when its
/// child has moved to `child`, a bone of `len` away on the line between
/// them. A joint that lands on its child keeps the bone's direction, `bone()`
/// (the bone in model space, joint to child).
#[inline]
pub(crate) fn pull(at: Vec3, child: Vec3, len: f32, bone: impl FnOnce() -> Vec3) -> Vec3 {
    let dir = (at - child)
        .try_normalize()
        .or_else(|| (-bone()).try_normalize())
        .unwrap_or(Vec3::ZERO);
    child + dir * len
}

/// One joint of a forward pass: the local rotation `r` (under a parent of
/// model rotation `parent`) turned by the shortest arc that points its bone
/// (`bone` in the joint's frame, of length `len`) from the joint at `at`
/// towards `towards`; `r` itself when the bone has no length or no
/// direction.
#[inline]
pub(crate) fn aim_bone(
    parent: Quat,
    r: Quat,
    bone: Vec3,
    len: f32,
    at: Vec3,
    towards: Vec3,
) -> Quat {
    if len > 0.0 {
        let rot = parent * r;
        let from = rot.rotate(bone) * (1.0 / len);
        if let (Some(from), Some(to)) = (from.try_normalize(), (towards - at).try_normalize()) {
            let delta = Quat::from_rotation_arc(from, to);
            return r * (rot.conjugate() * delta * rot);
        }
    }
    r
}

/// The forward pass in rotations: from the base, turn each bone towards
/// `p[i + 1]` by the shortest arc, limit the joint, and place the next
/// joint at the end of the limited bone.
fn forward(s: &mut ChainState, p: &[Vec3; MAX_CHAIN + 1], job: &ChainJob<'_>) {
    let mut parent = s.parent;
    for i in 0..s.n {
        let local = aim_bone(parent, s.local[i], s.bone[i], s.len[i], s.pos[i], p[i + 1]);
        s.set_local(i, local, limit_of(job.limits, i));
        s.rot[i] = parent * s.local[i];
        s.pos[i + 1] = s.pos[i] + s.rot[i].rotate(s.bone[i]);
        parent = s.rot[i];
    }
}
