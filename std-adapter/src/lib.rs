//! # sinew-std
//!
//! The hosted side of sinew: owned, aligned storage for the core's zero-copy
//! views, importers (glTF, BVH, ozz), the embedded procedural humanoid as
//! ready-made assets, synthetic skeletons for benches and tests, the clip
//! compressor, the 2D blend-space builder, and many characters across
//! threads. The `sinew` tool and the glam baseline live in the `sinew-cli`
//! crate, so a library user builds none of their dependencies.
#![deny(missing_docs)]

pub mod assets;
pub mod bake;
pub mod blend_space;
pub mod compress;
pub mod crowd;
pub mod export;
pub mod graph;
pub mod import;
pub mod matching;
pub mod mush;
mod pool;
#[cfg(feature = "ragdoll")]
pub mod ragdoll;
pub mod retarget;
pub mod shape_solve;
pub mod synthetic;

pub use assets::{AlignedBytes, FloatTrack, Humanoid, OwnedClip, OwnedSkeleton};
pub use import::{Asset, ImportError, Location, Mesh, MorphTarget};
