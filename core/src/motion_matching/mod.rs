//! Motion matching: every few frames, find the database frame whose
//! features (future root trajectory, foot positions and velocities, hip
//! velocity) best match what the player asks for, and inertialize into it.
//!
//! - [`database`]: the validated zero-copy container (features in lane
//!   blocks, a tree of bounding boxes, the frame → clip map) and its
//!   writer; `sinew-std` builds one from clips.
//! - [`cluster`]: the slot order that keeps the tree's boxes small.
//! - [`search`]: the brute-force lane search, the exact pruned search that
//!   returns the same frame, and their scalar reference.
//! - [`trajectory`]: spring-predicted future positions and headings.
//! - [`controller`]: the per-character [`Matcher`].
//!
//! Nothing here allocates; every search and update works in the database's
//! bytes and buffers the caller owns.

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod avx2;
pub mod cluster;
pub mod controller;
pub mod database;
pub mod search;
pub mod trajectory;

#[cfg(test)]
mod tests;

pub use cluster::cluster_order;
pub use controller::{
    ground_of, mirror_pose, Ground, MatchBuffers, MatchStep, Matcher, MatcherConfig,
};
pub use database::{
    database_size, write_database, Database, DatabaseDesc, FeatureGroup, FeatureKind, FrameRange,
    Match, RANGE_MIRRORED,
};
pub use trajectory::{Desired, Trajectory, TrajectoryParams};
