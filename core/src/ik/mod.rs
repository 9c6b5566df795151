//! Inverse kinematics over a local pose and its model matrices.
//!
//! Every solver reads the model-space matrices that
//! [`local_to_model`] wrote, computes a rotation
//! correction per joint, multiplies it into the joint's local rotation
//! (`local' = local · correction`, so the correction is expressed in the
//! joint's own frame, as ozz-animation's IK jobs do) and recomputes the model
//! matrices of the affected subtree, so that skinning sees the result. The
//! shared plumbing is [`IkPose`]; chains of joints come from [`chain`].
//! Solvers: [`aim`] (single-joint aim and look-at chains).
//!
//! Chain solvers: [`ccd`], [`fabrik`] and [`jacobian`] take a [`ChainJob`]
//! (a chain, a target, an optional effector offset and [`limits`]) and
//! return an [`IkReport`]; chains hold up to [`MAX_CHAIN`] joints.
//! [`fabrik_tree`] solves trees of chains with one effector per branch
//! (a spine and two arms, a hand and its fingertips) from a
//! [`fabrik_tree::TreeJob`].
//!
//! Conventions: positions and directions are model space (the space of the
//! matrices); rotations are unit quaternions; lengths are the data's unit.
//! Model matrices may carry scale; a correction is computed from their
//! rotation part ([`Mat4::rotation`]) and is exact for uniform scale.
//! On error nothing is written: the pose and the matrices are untouched.

pub mod aim;
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod aos;
pub mod ccd;
pub mod fabrik;
pub mod fabrik_tree;
pub mod foot;
pub mod jacobian;
mod lanes;
pub mod limits;
pub(crate) mod solve;
pub mod two_bone;

pub use limits::JointLimit;
pub use solve::{ChainJob, IkReport, MAX_CHAIN};

use crate::fk::{local_to_model, FkJob};
use crate::math::{Mat4, Quat, Vec3};
use crate::skeleton::Skeleton;
use crate::soa::SoaTransform;
use crate::Error;

/// The pose IK works on: a skeleton, its local pose (SoA blocks) and the
/// model matrices computed from that pose (optionally under a root matrix).
///
/// Solvers change joints' local rotations through [`IkPose::rotate_model`]
/// and bring the matrices up to date with [`IkPose::update_models`].
#[derive(Debug)]
pub struct IkPose<'a, 's> {
    skeleton: &'a Skeleton<'s>,
    local: &'a mut [SoaTransform],
    models: &'a mut [Mat4],
    root: Option<&'a Mat4>,
}

impl<'a, 's> IkPose<'a, 's> {
    /// Wraps a pose and its model matrices (which must be up to date, as
    /// [`local_to_model`] wrote them with the same `root`).
    ///
    /// # Errors
    /// [`Error::BadLength`] unless `local` has `skeleton.soa_count()` blocks
    /// and `models` `skeleton.joint_count()` matrices.
    pub fn new(
        skeleton: &'a Skeleton<'s>,
        local: &'a mut [SoaTransform],
        models: &'a mut [Mat4],
        root: Option<&'a Mat4>,
    ) -> Result<Self, Error> {
        crate::soa::check_len("local pose", skeleton.soa_count(), local.len())?;
        crate::soa::check_len("model matrices", skeleton.joint_count(), models.len())?;
        Ok(IkPose {
            skeleton,
            local,
            models,
            root,
        })
    }

    /// The skeleton.
    #[inline]
    #[must_use]
    pub fn skeleton(&self) -> &'a Skeleton<'s> {
        self.skeleton
    }

    /// The model matrix of joint `j`.
    ///
    /// # Errors
    /// [`Error::JointOutOfRange`] for `j >= joint_count`.
    pub fn model(&self, j: usize) -> Result<&Mat4, Error> {
        self.models.get(j).ok_or(Error::JointOutOfRange {
            joint: j,
            count: self.models.len(),
        })
    }

    /// The model-space position of joint `j` (its matrix's translation).
    ///
    /// # Errors
    /// As [`IkPose::model`].
    pub fn position(&self, j: usize) -> Result<Vec3, Error> {
        Ok(self.model(j)?.translation())
    }

    /// The local transform of joint `j`.
    ///
    /// # Errors
    /// As [`IkPose::model`].
    pub fn local(&self, j: usize) -> Result<crate::Transform, Error> {
        crate::soa::get_joint(self.local, j).ok_or(Error::JointOutOfRange {
            joint: j,
            count: self.models.len(),
        })
    }

    /// Turns joint `j` by `delta`, a rotation in model space about the
    /// joint's origin: its local rotation becomes `r · (R⁻¹ · delta · R)`
    /// where `R` is the rotation of its model matrix. Only the local pose
    /// changes; call [`IkPose::update_models`] before reading matrices of
    /// `j`'s subtree again.
    ///
    /// # Errors
    /// [`Error::JointOutOfRange`]; [`Error::NonFinite`] for a non-finite
    /// `delta` (nothing is written).
    pub fn rotate_model(&mut self, j: usize, delta: Quat) -> Result<(), Error> {
        if !delta.is_finite() {
            return Err(Error::NonFinite {
                what: "IK rotation",
            });
        }
        let r = self.model(j)?.rotation();
        self.rotate_local(j, r.conjugate() * delta * r)
    }

    /// Multiplies joint `j`'s local rotation by `correction` on the right
    /// (`local' = local · correction`, the correction in the joint's own
    /// frame), renormalised. Only the local pose changes.
    ///
    /// # Errors
    /// [`Error::JointOutOfRange`]; [`Error::NonFinite`] for a non-finite
    /// `correction`.
    pub fn rotate_local(&mut self, j: usize, correction: Quat) -> Result<(), Error> {
        if !correction.is_finite() {
            return Err(Error::NonFinite {
                what: "IK rotation",
            });
        }
        let mut t = self.local(j)?;
        t.rotation = (t.rotation * correction).normalize();
        crate::soa::set_joint(self.local, j, &t)
    }

    /// Sets joint `j`'s local rotation (normalised).
    ///
    /// # Errors
    /// As [`IkPose::rotate_local`].
    pub fn set_local_rotation(&mut self, j: usize, rotation: Quat) -> Result<(), Error> {
        if !rotation.is_finite() {
            return Err(Error::NonFinite {
                what: "IK rotation",
            });
        }
        let mut t = self.local(j)?;
        t.rotation = rotation.normalize();
        crate::soa::set_joint(self.local, j, &t)
    }

    /// Recomputes the model matrices of `first`'s subtree
    /// (`first .. skeleton.subtree_end(first)`) from the local pose; the
    /// matrices of `first`'s ancestors are read as they are.
    ///
    /// # Errors
    /// [`Error::JointOutOfRange`] for `first >= joint_count`.
    pub fn update_models(&mut self, first: usize) -> Result<(), Error> {
        let n = self.skeleton.joint_count();
        if first >= n {
            return Err(Error::JointOutOfRange {
                joint: first,
                count: n,
            });
        }
        let end = self.skeleton.subtree_end(first);
        let mut job = FkJob::new(self.skeleton, self.local).range(first, end);
        if let Some(r) = self.root {
            job = job.with_root(r);
        }
        local_to_model(&job, self.models)
    }
}

/// The joints from `start` down to `end` (both included), root side
/// first, written into `out`; returns the filled prefix.
///
/// # Errors
/// [`Error::JointOutOfRange`] for a joint past the skeleton;
/// [`Error::InvalidParameter`] when `start` is not an ancestor of (or
/// equal to) `end`; [`Error::CapacityExceeded`] when the chain is longer
/// than `out`.
pub fn chain<'o>(
    skeleton: &Skeleton<'_>,
    start: usize,
    end: usize,
    out: &'o mut [u16],
) -> Result<&'o [u16], Error> {
    let n = skeleton.joint_count();
    for j in [start, end] {
        if j >= n {
            return Err(Error::JointOutOfRange { joint: j, count: n });
        }
    }
    // Walk up from `end`, counting, then fill from the tip backwards.
    let mut len = 1;
    let mut k = end;
    while k != start {
        k = skeleton.parent(k).ok_or(Error::InvalidParameter {
            what: "IK chain: the start joint must be an ancestor of the end joint",
        })?;
        len += 1;
    }
    let out = out
        .get_mut(..len)
        .ok_or(Error::CapacityExceeded { capacity: len })?;
    let mut k = end;
    for slot in out.iter_mut().rev() {
        // `len` is the number of joints on the path, so every parent exists.
        *slot = k as u16;
        k = skeleton.parent(k).unwrap_or(start);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::procedural;

    fn humanoid() -> (crate::Align16<[u8; procedural::HUMANOID_SKELETON_BYTES]>,) {
        (procedural::humanoid_skeleton_bytes().unwrap(),)
    }

    #[test]
    fn chain_runs_root_side_first_and_rejects_non_ancestors() {
        let (bytes,) = humanoid();
        let s = Skeleton::from_bytes(&bytes.0).unwrap();
        let hand = s.find_joint("hand_l").unwrap();
        let arm = s.find_joint("upper_arm_l").unwrap();
        let mut buf = [0u16; 8];
        let c = chain(&s, arm, hand, &mut buf).unwrap();
        assert_eq!(c[0] as usize, arm);
        assert_eq!(*c.last().unwrap() as usize, hand);
        for w in c.windows(2) {
            assert_eq!(s.parent(w[1] as usize), Some(w[0] as usize));
        }
        assert!(matches!(
            chain(&s, hand, arm, &mut buf),
            Err(Error::InvalidParameter { .. })
        ));
        assert!(matches!(
            chain(&s, arm, hand, &mut buf[..1]),
            Err(Error::CapacityExceeded { .. })
        ));
        assert!(matches!(
            chain(&s, arm, 9999, &mut buf),
            Err(Error::JointOutOfRange { .. })
        ));
    }

    #[test]
    fn rotate_model_turns_the_joint_in_model_space() {
        let (bytes,) = humanoid();
        let s = Skeleton::from_bytes(&bytes.0).unwrap();
        let mut local = s.rest_pose().to_vec();
        let mut models = [Mat4::IDENTITY; procedural::HUMANOID_JOINT_COUNT];
        local_to_model(&FkJob::new(&s, &local), &mut models).unwrap();
        let arm = s.find_joint("upper_arm_l").unwrap();
        let hand = s.find_joint("hand_l").unwrap();
        let (p_arm, p_hand) = (models[arm].translation(), models[hand].translation());
        let delta = Quat::from_axis_angle(Vec3::Z, 0.7);
        let mut pose = IkPose::new(&s, &mut local, &mut models, None).unwrap();
        pose.rotate_model(arm, delta).unwrap();
        pose.update_models(arm).unwrap();
        let want = p_arm + delta.rotate(p_hand - p_arm);
        let got = pose.position(hand).unwrap();
        assert!((got - want).length() < 1e-5, "{got:?} vs {want:?}");
        assert!(matches!(
            pose.rotate_model(arm, Quat::new(f32::NAN, 0.0, 0.0, 1.0)),
            Err(Error::NonFinite { .. })
        ));
    }
}
