//! Cyclic coordinate descent: turn one joint at a time, from the tip of the
//! chain to its root, so that the end effector points at the target as seen
//! from that joint.
//!
//! Each joint step is the shortest arc from `effector - joint` to
//! `target - joint` ([`Quat::from_rotation_arc`]), then the joint's limit;
//! one iteration is one sweep over the chain, last joint first. CCD handles
//! any chain length and limits at every step, converges quickly near the
//! target, and tends to curl the joints near the tip first. An unreachable
//! target makes the chain stretch out towards it. A chain stuck on the line
//! to its target (straight past a nearer target, or folded) gets a small
//! bend so that the next sweep can make progress.

use super::solve::{limit_of, ChainJob, ChainState, IkReport};
use super::IkPose;
use crate::math::Quat;
use crate::Error;

/// Solves `job` by CCD on `pose`: runs sweeps until the effector is within
/// `job.tolerance` of the target or `job.max_iterations` sweeps have run,
/// writes the chain's local rotations and updates the model matrices of the
/// subtree under the chain's first joint. Joints outside the chain are not
/// written. Joints with limits end within them, even when no sweep runs.
///
/// # Errors
/// Nothing is written on error.
/// [`Error::InvalidParameter`] for an empty chain, a chain in which a joint
/// is not the parent of the next, a negative or non-finite tolerance, or a
/// chain whose bones and offset have zero total length;
/// [`Error::CapacityExceeded`] for a chain longer than
/// [`super::MAX_CHAIN`]; [`Error::JointOutOfRange`] for a joint past the
/// skeleton; [`Error::NonFinite`] for a non-finite target or offset (or
/// non-finite matrices along the chain); [`Error::BadLength`] when
/// `job.limits` is neither empty nor one per chain joint.
pub fn solve(pose: &mut IkPose<'_, '_>, job: &ChainJob<'_>) -> Result<IkReport, Error> {
    let mut s = ChainState::new(pose, job)?;
    let n = s.n;
    let target = job.target;
    let mut iterations = 0;
    let mut distance = (s.pos[n] - target).length();
    let stalled = 1e-6 * s.reach();
    while iterations < job.max_iterations && distance > job.tolerance {
        for i in (0..n).rev() {
            let joint = s.pos[i];
            let (Some(from), Some(to)) = (
                (s.pos[n] - joint).try_normalize(),
                (target - joint).try_normalize(),
            ) else {
                continue;
            };
            let delta = Quat::from_rotation_arc(from, to);
            s.rotate_model(i, delta, limit_of(job.limits, i));
        }
        iterations += 1;
        distance = s.distance_after_step(n, distance, stalled, target, job.limits);
    }
    s.commit(pose, job, iterations)
}
