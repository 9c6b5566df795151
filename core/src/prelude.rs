//! The names a frame of animation uses, in one import:
//! `use sinew_core::prelude::*;`.
//!
//! Containers, their views and the aligned storage they are viewed from,
//! the per-frame jobs (sample, blend, local-to-model, palettes, skinning)
//! and the per-character state (mixer, inertializer and the job that
//! starts a transition). Everything here is also reachable at its own
//! module path; the prelude adds no names of its own.

pub use crate::blend::{blend, BlendJob, BlendLayer, JointWeights};
pub use crate::clip::{ClipSource, RawClip, TimeMode};
pub use crate::compressed::CompressedClip;
pub use crate::fk::{local_to_model, FkJob};
pub use crate::mesh::SkinnedMesh;
pub use crate::mix::{crossfade, Decay, InertialBlock, Inertializer, Mixer, MotionUnit, SwitchJob};
pub use crate::retarget::{retarget, RetargetMap};
pub use crate::skin::{
    dqs_palette, lbs_palette, CheckedInfluences, DualQuat, Mat3x4, SkinAttributes, SkinJob,
    SkinMethod, SkinOutput, SkinVertices,
};
pub use crate::{soa_count, Align16, Error, Mat4, Quat, Skeleton, SoaTransform, Transform, Vec3};
