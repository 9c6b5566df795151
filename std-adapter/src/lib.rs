//! # sinew-std
//!
//! The hosted side of sinew: owned, aligned storage for the core's zero-copy
//! views, the embedded procedural humanoid as ready-made assets, synthetic
//! skeletons for benches, many characters across threads, the `sinew`
//! command-line tool, and the glam baseline that figures are compared with.
#![deny(missing_docs)]

pub mod assets;
pub mod baseline;
pub mod blend_space;
pub mod compress;
pub mod crowd;
pub mod demo;
pub mod export;
pub mod import;
pub mod render;
pub mod synthetic;

pub use assets::{AlignedBytes, FloatTrack, Humanoid, OwnedClip, OwnedSkeleton};
pub use import::{Asset, ImportError, Location, Mesh};
