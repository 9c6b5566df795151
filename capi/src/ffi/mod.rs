//! The C ABI, one file per object. Every export is written once, here:
//! `#[no_mangle] pub unsafe extern "C"`, its C contract in its doc comment
//! (cbindgen copies it into `include/sinew.h`), its body inside
//! `boundary!` (in `status.rs`) so that no panic unwinds into C.
//!
//! Conventions (`STYLE.md` rules 10–11):
//! - every function returns a `sinew_status` (`SINEW_STATUS_OK` = 0) except
//!   pure queries (`sinew_version`, `sinew_version_number`,
//!   `sinew_status_string`, `sinew_soa_count`, `sinew_skin_dqs_binds_count`);
//! - every buffer is a pointer followed by its length in elements (a NULL
//!   pointer is accepted for length 0); typed buffers must be aligned for
//!   their type (16 bytes for poses, matrices and containers);
//! - out-parameters are written only on success; output buffers are
//!   untouched on error;
//! - an output buffer that overlaps an input gives
//!   `SINEW_STATUS_OVERLAPPING_BUFFERS` (Rust forbids the aliasing);
//! - handles (`sinew_skeleton`, `sinew_clip`, `sinew_compressed_clip`,
//!   `sinew_mesh`, `sinew_mm_database`) are caller-owned plain structs filled by a `_load`
//!   function; they borrow the bytes they were loaded from, which must stay
//!   alive and unchanged while the handle is used; the shape handles
//!   (`sinew_blend_shapes`, `sinew_shape_drivers`, `sinew_rbf_drivers`,
//!   `sinew_delta_mush`) are filled by an `_init` function into caller
//!   storage, under the same rule for that storage and the arrays they
//!   borrow. There is nothing to free;
//! - enumerations passed *into* functions are `uint32_t` (an out-of-range
//!   value is `SINEW_STATUS_INVALID_ARGUMENT`, never undefined behaviour).
#![allow(non_camel_case_types)]

#[macro_use]
pub(crate) mod status;
pub(crate) mod ptr;

pub mod clip;
pub mod ik;
pub mod lod;
pub mod mix;
pub mod motion_matching;
pub mod mush;
pub mod player;
pub mod pose;
pub mod rbf;
pub mod retarget;
pub mod secondary;
pub mod shape;
pub mod skeleton;
pub mod skin;
pub mod track;

pub use clip::*;
pub use ik::*;
pub use lod::*;
pub use mix::*;
pub use motion_matching::*;
pub use mush::*;
pub use player::*;
pub use pose::*;
pub use rbf::*;
pub use retarget::*;
pub use secondary::*;
pub use shape::*;
pub use skeleton::*;
pub use skin::*;
pub use status::{
    sinew_status, sinew_status_string, sinew_version, sinew_version_number, SINEW_VERSION_MAJOR,
    SINEW_VERSION_MINOR, SINEW_VERSION_NUMBER, SINEW_VERSION_PATCH,
};
pub use track::*;
