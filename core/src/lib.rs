//! # sinew-core
//!
//! Data-oriented skeletal animation kernels for constrained hardware.
//!
//! Guarantees of this crate:
//! - `#![no_std]`, no allocator needed: every kernel works on caller-provided
//!   slices, sized once at set-up.
//! - No panics on caller data: sizes, indices, weights and serialized bytes
//!   are validated and bad input returns [`Error`]. Validation happens once per
//!   call (cheap, O(layers)) or once per asset (`from_bytes`), not per joint.
//! - NaN policy: NaN or infinite *weights, times and serialized data* are
//!   rejected; NaN inside a pose handed to a kernel propagates to the joints
//!   it touches and never panics.
//! - Poses are structure-of-arrays blocks of four joints ([`SoaTransform`]);
//!   every SIMD kernel has a scalar twin in a `reference` module that is its
//!   readable specification, and the two agree within 1e-5.
//!
//! The per-frame pipeline is: sample clips ([`clip`], or [`compressed`] ones) → [`blend`] layers →
//! local-to-model ([`fk`]) → skinning.
//! Above it, [`mix`] holds the motion-unit mixer, blend spaces, additive
//! clips and masks, root motion and transitions (cross-fade, inertialization).
//! [`retarget`] plays one skeleton's poses on another.
#![no_std]
#![deny(missing_docs)]
#![deny(unsafe_code)]

pub mod blend;
pub mod clip;
pub mod compressed;
mod container;
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod cpu;
mod error;
pub mod fk;
mod fp;
pub mod graph;
pub mod ik;
pub mod lod;
pub mod math;
pub mod mesh;
pub mod mix;
pub mod motion_matching;
pub mod player;
pub mod prelude;
pub mod procedural;
pub mod retarget;
pub mod secondary;
pub mod shape;
pub mod skeleton;
pub mod skin;
pub mod soa;
pub mod steer;
pub mod track;

pub use container::Align16;
pub use error::Error;
pub use math::{Mat4, Quat, Transform, Vec3};
pub use skeleton::{JointDef, Skeleton, MAX_JOINTS, NO_PARENT};
pub use soa::{soa_count, SoaQuat, SoaTransform, SoaVec3};

/// The SIMD lane type used by poses (re-exported from `wide`).
pub use wide::f32x4;

/// The README's embedding example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctest;
