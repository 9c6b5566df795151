//! Per-joint masks (weights for [`crate::blend::JointWeights`]) built from
//! named subtrees and chains with a falloff.
//!
//! Operations apply in order, later ones overwriting earlier ones:
//!
//! ```text
//! upper body = [Subtree("spine_01", 1.0), Chain("spine_03", [0.25, 0.5, 0.75, 1.0])]
//! ```
//!
//! gives the whole upper body weight 1 except the last four joints up to
//! `spine_03` (pelvis, spine_01, spine_02, spine_03), which ramp 0.25, 0.5,
//! 0.75, 1 going up the spine.

use wide::f32x4;

use crate::error::Error;
use crate::skeleton::Skeleton;
use crate::soa::{check_len, LANES};

/// One step of a mask recipe.
#[derive(Clone, Copy, Debug)]
pub enum MaskOp<'n> {
    /// The named joint and all its descendants get `weight`.
    Subtree {
        /// Root joint name.
        root: &'n str,
        /// Weight, finite and `>= 0`.
        weight: f32,
    },
    /// Only the named joint gets `weight`.
    Joint {
        /// Joint name.
        name: &'n str,
        /// Weight, finite and `>= 0`.
        weight: f32,
    },
    /// A falloff along a chain: `top` gets the last weight, its parent the
    /// one before, and so on up the list (weights listed from the chain's
    /// base to `top`).
    Chain {
        /// Topmost joint of the chain.
        top: &'n str,
        /// Weights from the base of the chain to `top`.
        weights: &'n [f32],
    },
}

/// Writes a mask for `skeleton` into `out` (one `f32x4` per SoA block):
/// every joint starts at `default`, then each op applies in order; padding
/// lanes are 0. Wrap the result in [`crate::blend::JointWeights::new`].
///
/// # Errors
/// [`Error::BadLength`] (`out` not `skeleton.soa_count()` long),
/// [`Error::InvalidJointWeight`] (a weight is negative or not finite; `joint`
/// is the joint it would have been written to, or 0 for `default`),
/// [`Error::UnknownJoint`] (op index), [`Error::InvalidParameter`] (a chain
/// longer than the joint's ancestry).
pub fn build_mask(
    skeleton: &Skeleton<'_>,
    ops: &[MaskOp<'_>],
    default: f32,
    out: &mut [f32x4],
) -> Result<(), Error> {
    check_len("mask", skeleton.soa_count(), out.len())?;
    let ok = |w: f32| w.is_finite() && w >= 0.0;
    if !ok(default) {
        return Err(Error::InvalidJointWeight { joint: 0 });
    }
    // Validate every op before writing anything.
    for (i, op) in ops.iter().enumerate() {
        let (name, weights): (&str, &[f32]) = match op {
            MaskOp::Subtree { root, weight } => (root, core::slice::from_ref(weight)),
            MaskOp::Joint { name, weight } => (name, core::slice::from_ref(weight)),
            MaskOp::Chain { top, weights } => (top, weights),
        };
        let j = skeleton
            .find_joint(name)
            .ok_or(Error::UnknownJoint { entry: i })?;
        if let Some(w) = weights.iter().find(|w| !ok(**w)) {
            let _ = w;
            return Err(Error::InvalidJointWeight { joint: j });
        }
        if let MaskOp::Chain { weights, .. } = op {
            if weights.len() > skeleton.depth(j) + 1 {
                return Err(Error::InvalidParameter {
                    what: "mask chain is longer than the joint's ancestry",
                });
            }
        }
    }
    let n = skeleton.joint_count();
    let set = |out: &mut [f32x4], j: usize, w: f32| {
        if let Some(block) = out.get_mut(j / LANES) {
            let mut a = block.to_array();
            a[j % LANES] = w;
            *block = f32x4::new(a);
        }
    };
    for j in 0..out.len() * LANES {
        set(out, j, if j < n { default } else { 0.0 });
    }
    for op in ops {
        match *op {
            MaskOp::Subtree { root, weight } => {
                if let Some(j) = skeleton.find_joint(root) {
                    for k in j..skeleton.subtree_end(j) {
                        set(out, k, weight);
                    }
                }
            }
            MaskOp::Joint { name, weight } => {
                if let Some(j) = skeleton.find_joint(name) {
                    set(out, j, weight);
                }
            }
            MaskOp::Chain { top, weights } => {
                let mut joint = skeleton.find_joint(top);
                for &w in weights.iter().rev() {
                    let Some(j) = joint else { break };
                    set(out, j, w);
                    joint = skeleton.parent(j);
                }
            }
        }
    }
    Ok(())
}
