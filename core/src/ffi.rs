//! The C ABI: `extern "C"` functions over caller-owned memory.
//!
//! These are the implementations behind `include/sinew.h`. They are not
//! exported from this crate (no `#[no_mangle]`): the hosted C library
//! (crate `sinew-capi`, `libsinew.a` / `libsinew.so`) exports each one under
//! the same name inside a panic boundary. A `no_std` user who links the core
//! alone can export them with their own `#[no_mangle]` shims.
//!
//! Conventions (`STYLE.md` rules 10–11):
//! - every function returns a `sinew_status` (`SINEW_STATUS_OK` = 0) except
//!   pure queries (`sinew_version`, `sinew_version_number`, `sinew_status_string`,
//!   `sinew_soa_count`);
//! - every buffer is a pointer followed by its length in elements (a NULL
//!   pointer is accepted for length 0); typed buffers must be aligned for
//!   their type (16 bytes for poses, matrices and containers);
//! - out-parameters are written only on success; output buffers are
//!   untouched on error;
//! - an output buffer that overlaps an input gives
//!   `SINEW_STATUS_OVERLAPPING_BUFFERS` (Rust forbids the aliasing);
//! - handles (`sinew_skeleton`, `sinew_clip`) are caller-owned plain
//!   structs filled by a `_load` function; they borrow the bytes they were
//!   loaded from, which must stay alive and unchanged while the handle is
//!   used. There is nothing to free.
//!
//! Enumerations passed *into* functions are `uint32_t` (an out-of-range
//! value is `SINEW_STATUS_INVALID_ARGUMENT`, never undefined behaviour).
#![allow(non_camel_case_types, unsafe_code)]
#![deny(clippy::undocumented_unsafe_blocks)]

use core::ffi::c_char;
use core::mem::{align_of, size_of};
use core::ptr;

use crate::blend::{BlendJob, BlendLayer, JointWeights};
use crate::clip::{
    checked_clip_container_size, clip_container_size, write_container_with, RawClip, TimeMode,
};
use crate::compressed::{CompressedClip, Defaults};
use crate::fk::{local_to_model, FkJob};
use crate::mesh::SkinnedMesh;
use crate::mix::{self, Decay, InertialBlock, MixInput, MixJob, MixMode, Ramp};
use crate::procedural::{self, Gait};
use crate::skeleton::{build_with, JointDef, Skeleton};
use crate::skin::{
    self, CheckedInfluences, DqsBinds, DualQuat, InfluenceSet, LbsBind, Mat3x4, SkinAttributes,
    SkinInput, SkinJob, SkinMethod, SkinOutput, StridedVertices, StridedVerticesMut,
};
use crate::{Error, Mat4, SoaTransform};
use crate::{Quat, Transform, Vec3};

/// Most normal (and, separately, additive) layers one `sinew_pose_blend` call takes.
pub const SINEW_MAX_BLEND_LAYERS: usize = 16;

/// The blend threshold most callers want (the core's `blend::DEFAULT_THRESHOLD`).
pub const SINEW_DEFAULT_BLEND_THRESHOLD: f32 = 0.1;

/// Bytes of the procedural humanoid's skeleton container.
pub const SINEW_HUMANOID_SKELETON_SIZE: usize = 8_496;

/// Joints of the procedural humanoid.
pub const SINEW_HUMANOID_JOINT_COUNT: usize = 70;

/// Parent index of a root joint in `sinew_skeleton::parents`.
pub const SINEW_NO_PARENT: u16 = 0xFFFF;

/// A `sinew_vertex_layout` attribute offset meaning "absent".
pub const SINEW_NO_ATTRIBUTE: u32 = 0xFFFF_FFFF;

/// Most one-shot units one `sinew_pose_mix` call takes (besides fatigue and idle).
pub const SINEW_MAX_MIX_UNITS: usize = 16;
/// Mix mode: normalised weighted sum of sign-aligned quaternions.
pub const SINEW_MIX_QUATERNION: u32 = 0;
/// Mix mode: ZXY Euler angles (θz, θx, θy) mixed literally.
pub const SINEW_MIX_JOINT_ANGLES: u32 = 1;
/// Frame-weight ramp: weight 1 on every frame.
pub const SINEW_RAMP_NONE: u32 = 0;
/// Frame-weight ramp: linear ramps of `ramp_frames` at both ends.
pub const SINEW_RAMP_LINEAR: u32 = 1;
/// Frame-weight ramp: the linear ramp through smoothstep.
pub const SINEW_RAMP_SMOOTH: u32 = 2;
/// Inertialization decay: the quintic that reaches zero at the duration.
pub const SINEW_DECAY_QUINTIC: u32 = 0;
/// Inertialization decay: a critically damped spring with a half-life.
pub const SINEW_DECAY_SPRING: u32 = 1;

/// Time mode for `sinew_clip_sample`: wrap around (loop).
pub const SINEW_TIME_LOOP: u32 = 0;
/// Time mode for `sinew_clip_sample`: hold the first or last frame.
pub const SINEW_TIME_CLAMP: u32 = 1;

/// Procedural gait: walk (1.1 s cycle).
pub const SINEW_GAIT_WALK: u32 = 0;
/// Procedural gait: jog (0.76 s cycle).
pub const SINEW_GAIT_JOG: u32 = 1;
/// Procedural gait: run.
pub const SINEW_GAIT_RUN: u32 = 2;

/// A decimal version component (`env!("CARGO_PKG_VERSION_MAJOR")` and
/// the like) as a number, at compile time.
const fn version_part(s: &str) -> u32 {
    let b = s.as_bytes();
    let mut v = 0u32;
    let mut i = 0;
    while i < b.len() {
        v = v * 10 + (b[i] - b'0') as u32;
        i += 1;
    }
    v
}

/// This library's version as one number, `major << 16 | minor << 8 |
/// patch` (0.1.0 is `0x000100`): what [`sinew_version_number`] returns and
/// the header's `SINEW_VERSION_NUMBER` states.
pub const SINEW_VERSION_NUMBER: u32 = version_part(env!("CARGO_PKG_VERSION_MAJOR")) << 16
    | version_part(env!("CARGO_PKG_VERSION_MINOR")) << 8
    | version_part(env!("CARGO_PKG_VERSION_PATCH"));

/// Result of every fallible C function.
///
/// `SINEW_STATUS_OK` is 0; failures use their own range (7101–7199) so they
/// cannot be mistaken for another library's codes.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum sinew_status {
    /// Success.
    Ok = 0,
    /// A required pointer was NULL (with a non-zero length, or an out-parameter).
    NullParameter = 7101,
    /// An output buffer is too small; query the size first.
    BufferTooSmall = 7102,
    /// A buffer's length does not match what the call needs (e.g. a pose
    /// that is not `soa_count` blocks).
    BadLength = 7103,
    /// A pointer is not aligned for its type (16 bytes for poses, matrices
    /// and containers).
    Misaligned = 7104,
    /// Bytes are not a valid container: bad magic, truncated, corrupt,
    /// non-finite values, invalid names or parents.
    InvalidData = 7105,
    /// A container has a version this build cannot read.
    UnsupportedVersion = 7106,
    /// An argument is out of its domain: a NaN time, a negative weight, an
    /// unknown enumeration value, a bad sample rate.
    InvalidArgument = 7107,
    /// A joint index or range lies outside the skeleton.
    OutOfRange = 7108,
    /// A mesh's influences are invalid: a joint index past the palette, a
    /// negative or NaN weight, weights not summing to 1.
    InvalidInfluence = 7109,
    /// A transform cannot be inverted.
    SingularTransform = 7110,
    /// The platform is not supported (big-endian).
    UnsupportedPlatform = 7111,
    /// More layers than `SINEW_MAX_BLEND_LAYERS`.
    TooManyLayers = 7112,
    /// An output buffer overlaps an input buffer.
    OverlappingBuffers = 7113,
    /// A lookup (e.g. a joint name) found nothing.
    NotFound = 7114,
    /// A handle was not filled by its `_load` function (or was changed since).
    InvalidHandle = 7115,
    /// A fixed-capacity table or queue is full.
    CapacityExceeded = 7116,
    /// sinew panicked inside the call (a bug: please report it). Outputs
    /// may be partly written.
    Panic = 7199,
}

impl From<Error> for sinew_status {
    fn from(e: Error) -> Self {
        match e {
            Error::BadLength { .. } | Error::InvalidLayout { .. } => sinew_status::BadLength,
            Error::BufferTooSmall { .. } => sinew_status::BufferTooSmall,
            Error::Misaligned => sinew_status::Misaligned,
            Error::InvalidWeight { .. }
            | Error::InvalidJointWeight { .. }
            | Error::InvalidThreshold
            | Error::InvalidSampleRate
            | Error::InvalidMixWeight { .. } => sinew_status::InvalidArgument,
            Error::NonFinite { what: "time" } => sinew_status::InvalidArgument,
            Error::NoJoints
            | Error::TooManyJoints { .. }
            | Error::InvalidParent { .. }
            | Error::NonFinite { .. }
            | Error::InvalidName { .. }
            | Error::BadMagic
            | Error::Truncated { .. }
            | Error::Corrupt { .. } => sinew_status::InvalidData,
            Error::UnsupportedVersion { .. } => sinew_status::UnsupportedVersion,
            Error::JointOutOfRange { .. } => sinew_status::OutOfRange,
            Error::InfluenceOutOfRange { .. }
            | Error::InvalidVertexWeight { .. }
            | Error::VertexWeightSum { .. } => sinew_status::InvalidInfluence,
            Error::SingularTransform { .. } => sinew_status::SingularTransform,
            Error::UnsupportedPlatform => sinew_status::UnsupportedPlatform,
            Error::UnknownClip { .. } => sinew_status::OutOfRange,
            Error::UnknownJoint { .. } => sinew_status::NotFound,
            Error::CapacityExceeded { .. } => sinew_status::CapacityExceeded,
            Error::UnitTooLong { .. }
            | Error::SampleRateMismatch { .. }
            | Error::EmptyBlendSpace
            | Error::DuplicateSample { .. }
            | Error::DegenerateBlendSpace
            | Error::InvalidParameter { .. } => sinew_status::InvalidArgument,
        }
    }
}

impl sinew_status {
    /// Every status, in code order.
    pub const ALL: [sinew_status; 18] = [
        sinew_status::Ok,
        sinew_status::NullParameter,
        sinew_status::BufferTooSmall,
        sinew_status::BadLength,
        sinew_status::Misaligned,
        sinew_status::InvalidData,
        sinew_status::UnsupportedVersion,
        sinew_status::InvalidArgument,
        sinew_status::OutOfRange,
        sinew_status::InvalidInfluence,
        sinew_status::SingularTransform,
        sinew_status::UnsupportedPlatform,
        sinew_status::TooManyLayers,
        sinew_status::OverlappingBuffers,
        sinew_status::NotFound,
        sinew_status::InvalidHandle,
        sinew_status::CapacityExceeded,
        sinew_status::Panic,
    ];

    /// A NUL-terminated English description.
    #[must_use]
    pub fn message(self) -> &'static str {
        match self {
            sinew_status::Ok => "ok\0",
            sinew_status::NullParameter => "a required pointer is NULL\0",
            sinew_status::BufferTooSmall => "an output buffer is too small\0",
            sinew_status::BadLength => "a buffer does not have the length the call needs\0",
            sinew_status::Misaligned => "a pointer is not aligned for its type (16 bytes for poses, matrices and containers)\0",
            sinew_status::InvalidData => "the bytes are not a valid sinew container\0",
            sinew_status::UnsupportedVersion => "the container's format version is not supported\0",
            sinew_status::InvalidArgument => "an argument is out of its domain (NaN, negative weight, unknown enum value)\0",
            sinew_status::OutOfRange => "a joint index or range lies outside the skeleton\0",
            sinew_status::InvalidInfluence => "a vertex's joint index or weights are invalid\0",
            sinew_status::SingularTransform => "a transform cannot be inverted\0",
            sinew_status::UnsupportedPlatform => "the platform is not supported (big-endian)\0",
            sinew_status::TooManyLayers => "more blend layers than SINEW_MAX_BLEND_LAYERS\0",
            sinew_status::OverlappingBuffers => "an output buffer overlaps an input buffer\0",
            sinew_status::NotFound => "not found\0",
            sinew_status::InvalidHandle => "the handle was not filled by its _load function\0",
            sinew_status::CapacityExceeded => "a fixed-capacity table or queue is full\0",
            sinew_status::Panic => "sinew panicked (a bug; please report it)\0",
        }
    }
}

/// Four joints of a local pose in SoA lanes: lane `k` of every row is
/// joint `4·b + k` of block `b`. 160 bytes, 16-byte aligned; the same
/// layout as the core's `SoaTransform`.
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct sinew_soa_transform {
    /// Translation x, y, z rows.
    pub translation: [[f32; 4]; 3],
    /// Rotation quaternion x, y, z, w rows.
    pub rotation: [[f32; 4]; 4],
    /// Scale x, y, z rows.
    pub scale: [[f32; 4]; 3],
}

/// A column-major 4x4 matrix (`cols[c][r]`), 16-byte aligned; model-space
/// joint matrices and inverse bind matrices.
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct sinew_float4x4 {
    /// The four columns; column 3 holds the translation.
    pub cols: [[f32; 4]; 4],
}

/// A row-major 3x4 affine matrix (an LBS palette entry), 16-byte aligned:
/// a point `p` maps to `rows[r] · (p, 1)`.
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct sinew_float3x4 {
    /// The three rows; column 3 is the translation.
    pub rows: [[f32; 4]; 3],
}

/// A unit dual quaternion (a DQS palette entry), `(x, y, z, w)` order.
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct sinew_dual_quat {
    /// Rotation quaternion.
    pub real: [f32; 4],
    /// Translation part `½ (t, 0) · real`.
    pub dual: [f32; 4],
}

/// One joint's inverse bind matrix laid out for
/// `sinew_skin_lbs_palette_prepared`, written by
/// `sinew_skin_lbs_binds_prepare` once per mesh (the layout is the
/// library's, not to be written by hand). 192 bytes, 32-byte aligned.
#[repr(C, align(32))]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct sinew_lbs_bind {
    /// The matrix's elements, each repeated for the SIMD kernel.
    pub spread: [[f32; 8]; 6],
}

/// Eight joints' inverse bind matrices laid out for
/// `sinew_skin_dqs_palette_prepared` (`sinew_skin_dqs_binds_count` of them
/// per mesh), written by `sinew_skin_dqs_binds_prepare` once per mesh (the
/// layout is the library's). 384 bytes, 32-byte aligned.
#[repr(C, align(32))]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct sinew_dqs_binds {
    /// The eight matrices' elements, transposed into lanes.
    pub lanes: [[[f32; 8]; 3]; 4],
}

const _: () = {
    assert!(size_of::<sinew_lbs_bind>() == size_of::<LbsBind>());
    assert!(align_of::<sinew_lbs_bind>() == align_of::<LbsBind>());
    assert!(size_of::<sinew_dqs_binds>() == size_of::<DqsBinds>());
    assert!(align_of::<sinew_dqs_binds>() == align_of::<DqsBinds>());
    assert!(size_of::<sinew_soa_transform>() == size_of::<SoaTransform>());
    assert!(align_of::<sinew_soa_transform>() == align_of::<SoaTransform>());
    assert!(size_of::<sinew_float4x4>() == size_of::<Mat4>());
    assert!(align_of::<sinew_float4x4>() == align_of::<Mat4>());
    assert!(size_of::<sinew_float3x4>() == size_of::<Mat3x4>());
    assert!(size_of::<sinew_dual_quat>() == size_of::<DualQuat>());
    assert!(SINEW_HUMANOID_SKELETON_SIZE == procedural::HUMANOID_SKELETON_BYTES);
    assert!(SINEW_HUMANOID_JOINT_COUNT == procedural::HUMANOID_JOINT_COUNT);
    assert!(SINEW_DEFAULT_BLEND_THRESHOLD == crate::blend::DEFAULT_THRESHOLD);
    assert!(SINEW_NO_PARENT == crate::NO_PARENT);
};

/// One joint for `sinew_skeleton_build`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sinew_joint_def {
    /// The name: `name_len` UTF-8 bytes (no NUL needed; NULL when `name_len` is 0).
    pub name: *const c_char,
    /// Length of the name in bytes.
    pub name_len: usize,
    /// Index of the parent in the same array, or `SINEW_NO_PARENT` for a root.
    /// Any order is accepted; the container stores joints depth-first.
    pub parent: u16,
    /// Rest translation relative to the parent.
    pub translation: [f32; 3],
    /// Rest rotation quaternion `(x, y, z, w)`, unit length.
    pub rotation: [f32; 4],
    /// Rest scale.
    pub scale: [f32; 3],
}

/// Inertialization state of four joints (one per pose block); its contents
/// are private. 288 bytes, 16-byte aligned.
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct sinew_inertial_block {
    /// Private state (offset directions, decay coefficients).
    pub opaque: [[f32; 4]; 18],
}

const _: () = {
    assert!(size_of::<sinew_inertial_block>() == size_of::<InertialBlock>());
    assert!(align_of::<sinew_inertial_block>() == align_of::<InertialBlock>());
};

/// A loaded skeleton: a caller-owned view of a validated skeleton container.
///
/// Filled by `sinew_skeleton_load`; the pointers point into the
/// container's bytes, which must outlive the handle and stay unchanged.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sinew_skeleton {
    /// The container bytes.
    pub data: *const u8,
    /// Their length in bytes.
    pub size: usize,
    /// Number of joints.
    pub joint_count: u32,
    /// Blocks in a pose of this skeleton: `(joint_count + 3) / 4`.
    pub soa_count: u32,
    /// `joint_count` parent indices (`SINEW_NO_PARENT` for roots);
    /// parents come before their children.
    pub parents: *const u16,
    /// The rest pose, `soa_count` blocks.
    pub rest_pose: *const sinew_soa_transform,
    /// `joint_count` inverse bind matrices.
    pub inverse_bind: *const sinew_float4x4,
    /// Private: lets functions reject a handle that `_load` did not fill.
    pub check: u64,
}

/// A loaded skinned mesh: a caller-owned view of a validated mesh
/// container (`SINEWMSH`, written by `sinew convert`).
///
/// Filled by `sinew_mesh_load`; the pointers point into the container's
/// bytes, which must outlive the handle and stay unchanged. `mesh` is
/// ready to hand to the skinning functions with a palette of
/// `joint_count` entries.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sinew_mesh {
    /// The container bytes.
    pub data: *const u8,
    /// Their length in bytes.
    pub size: usize,
    /// The vertex arrays (normals, tangents, `joints1` and `weights1` are
    /// NULL when the mesh has none).
    pub mesh: sinew_skin_mesh,
    /// Palette entries the influences index (the skeleton's joint count).
    pub joint_count: u32,
    /// Number of triangle-list indices (a multiple of 3).
    pub index_count: u32,
    /// `index_count` indices into the vertices.
    pub indices: *const u32,
    /// `joint_count` inverse bind matrices.
    pub inverse_bind: *const sinew_float4x4,
}

/// A loaded raw clip: a caller-owned view of a validated clip container.
///
/// Filled by `sinew_clip_load`; the bytes must outlive the handle and
/// stay unchanged.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sinew_clip {
    /// The container bytes.
    pub data: *const u8,
    /// Their length in bytes.
    pub size: usize,
    /// Blocks per frame (the pose length a sample writes).
    pub soa_count: u32,
    /// Stored frames.
    pub frame_count: u32,
    /// Frames per second.
    pub sample_rate: f32,
    /// `(frame_count - 1) / sample_rate` seconds.
    pub duration: f32,
    /// Private: lets functions reject a handle that `_load` did not fill.
    pub check: u64,
}

/// A loaded compressed clip: a caller-owned view of a validated `SINEWCMP`
/// container (written by `sinew compress` or `sinew_std::compress`).
///
/// Filled by `sinew_compressed_clip_load`; the bytes must outlive the
/// handle and stay unchanged.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sinew_compressed_clip {
    /// The container bytes.
    pub data: *const u8,
    /// Their length in bytes.
    pub size: usize,
    /// Joints.
    pub joint_count: u32,
    /// Blocks per pose (the pose length a sample writes).
    pub soa_count: u32,
    /// Stored frames.
    pub frame_count: u32,
    /// 1 when default tracks are the skeleton's rest pose (sampling then
    /// needs it), 0 when they are the identity.
    pub needs_rest_pose: u32,
    /// Frames per second.
    pub sample_rate: f32,
    /// `(frame_count - 1) / sample_rate` seconds.
    pub duration: f32,
    /// Private: lets functions reject a handle that `_load` did not fill.
    pub check: u64,
}

/// One input of `sinew_pose_blend`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sinew_blend_layer {
    /// The layer's local pose.
    pub pose: *const sinew_soa_transform,
    /// Its length in blocks (must equal the rest pose's).
    pub pose_len: usize,
    /// Layer weight, finite and `>= 0` (0 skips the layer).
    pub weight: f32,
    /// NULL, or per-joint weights (finite, `>= 0`) multiplied with `weight`:
    /// `4 · pose_len` floats in SoA order (joint `j` at `[j]`), 16-byte aligned.
    pub joint_weights: *const f32,
    /// Length of `joint_weights` in floats (0 when it is NULL).
    pub joint_weights_len: usize,
}

/// A mesh to skin: `vertex_count` entries in every non-NULL array.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sinew_skin_mesh {
    /// Number of vertices.
    pub vertex_count: usize,
    /// Bind-space positions, 3 floats per vertex.
    pub positions: *const f32,
    /// NULL, or bind-space normals, 3 floats per vertex.
    pub normals: *const f32,
    /// NULL, or tangents `(x, y, z, handedness)`, 4 floats per vertex.
    pub tangents: *const f32,
    /// Four palette indices per vertex.
    pub joints: *const u16,
    /// Four weights per vertex: finite, `>= 0`, summing to 1 within 1e-3
    /// (with `weights1`, the eight weights together).
    pub weights: *const f32,
    /// NULL, or four more palette indices per vertex: influence slots 4-7
    /// (glTF's `JOINTS_1`), for eight influences. Set with `weights1`.
    pub joints1: *const u16,
    /// NULL, or the weights of slots 4-7 (set with `joints1`).
    pub weights1: *const f32,
}

/// Where skinned attributes go: `vertex_count` entries each; a NULL array
/// is not computed (positions are required).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sinew_skin_target {
    /// Skinned positions, 3 floats per vertex.
    pub positions: *mut f32,
    /// NULL, or skinned normals, 3 floats per vertex (needs mesh normals).
    pub normals: *mut f32,
    /// NULL, or skinned tangents, 4 floats per vertex (needs mesh tangents).
    pub tangents: *mut f32,
}

/// Where attributes sit in an interleaved vertex buffer, in floats.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sinew_vertex_layout {
    /// Floats per vertex (`> 0`).
    pub stride: u32,
    /// Offset of the position (3 floats) inside a vertex.
    pub position: u32,
    /// Offset of the normal (3 floats), or `SINEW_NO_ATTRIBUTE`.
    pub normal: u32,
    /// Offset of the tangent (4 floats), or `SINEW_NO_ATTRIBUTE`.
    pub tangent: u32,
}

impl sinew_vertex_layout {
    fn attr(offset: u32) -> Option<usize> {
        (offset != SINEW_NO_ATTRIBUTE).then_some(offset as usize)
    }
}

type Status = Result<(), sinew_status>;

#[inline]
fn finish(r: Status) -> sinew_status {
    match r {
        Ok(()) => sinew_status::Ok,
        Err(s) => s,
    }
}

/// Views `len` elements at `ptr` (NULL is fine for `len == 0`).
///
/// # Safety
/// When `len > 0`, `ptr` must point to `len` initialised `T` that stay
/// valid and unmodified for `'a`.
unsafe fn slice<'a, T>(ptr: *const T, len: usize) -> Result<&'a [T], sinew_status> {
    if len == 0 {
        return Ok(&[]);
    }
    check_ptr(ptr, len)?;
    // SAFETY: non-NULL, aligned and `len * size_of::<T>()` within `isize` (checked above); validity
    // and lifetime are the caller's contract.
    Ok(unsafe { core::slice::from_raw_parts(ptr, len) })
}

/// Mutable twin of `slice`.
///
/// # Safety
/// When `len > 0`, `ptr` must point to `len` writable `T` that nothing
/// else reads or writes for `'a` (overlaps with inputs are checked by the
/// callers with `disjoint`).
unsafe fn slice_mut<'a, T>(ptr: *mut T, len: usize) -> Result<&'a mut [T], sinew_status> {
    if len == 0 {
        return Ok(&mut []);
    }
    check_ptr(ptr, len)?;
    // SAFETY: as in `slice`; the contract also gives this call exclusive access to the range.
    Ok(unsafe { core::slice::from_raw_parts_mut(ptr, len) })
}

fn check_ptr<T>(ptr: *const T, len: usize) -> Status {
    if ptr.is_null() {
        return Err(sinew_status::NullParameter);
    }
    if !(ptr as usize).is_multiple_of(align_of::<T>()) {
        return Err(sinew_status::Misaligned);
    }
    match len.checked_mul(size_of::<T>()) {
        Some(bytes) if bytes <= isize::MAX as usize => Ok(()),
        _ => Err(sinew_status::BadLength),
    }
}

/// Reads `*ptr`.
///
/// # Safety
/// A non-NULL `ptr` must point to an initialised `T`.
unsafe fn read<T: Copy>(ptr: *const T) -> Result<T, sinew_status> {
    check_ptr(ptr, 1)?;
    // SAFETY: non-NULL and aligned (checked above); the contract makes `*ptr` an initialised `T`.
    Ok(unsafe { ptr.read() })
}

/// Checks an out-parameter before any work, so that it is written only on success.
fn out_param<T>(ptr: *mut T) -> Status {
    check_ptr(ptr.cast_const(), 1)
}

/// Writes an out-parameter checked by `out_param`.
///
/// # Safety
/// `ptr` must be valid for a write of `T`.
unsafe fn write<T>(ptr: *mut T, value: T) {
    // SAFETY: non-NULL and aligned (checked by `out_param`); the contract makes `*ptr` writable.
    unsafe { ptr.write(value) }
}

/// A byte range of a buffer, for overlap checks.
#[derive(Clone, Copy)]
struct Span(usize, usize);

impl Span {
    fn of<T>(s: &[T]) -> Span {
        let start = s.as_ptr() as usize;
        Span(start, start + core::mem::size_of_val(s))
    }
}

/// `SINEW_STATUS_OVERLAPPING_BUFFERS` when `out` shares a byte with any input.
fn disjoint(out: Span, inputs: &[Span]) -> Status {
    let hit = inputs
        .iter()
        .any(|i| out.0 < out.1 && i.0 < i.1 && out.0 < i.1 && i.0 < out.1);
    if hit {
        Err(sinew_status::OverlappingBuffers)
    } else {
        Ok(())
    }
}

fn handle_check(data: *const u8, size: usize, count: u32, magic: u64) -> u64 {
    let mut h = magic ^ (data as usize as u64).rotate_left(17);
    h = h.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ size as u64;
    h = h.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ u64::from(count);
    h.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

const SKELETON_TAG: u64 = 0x5349_4E45_5753_4B4C; // "SINEWSKL"
const CLIP_TAG: u64 = 0x5349_4E45_5743_4C50; // "SINEWCLP"
const COMPRESSED_TAG: u64 = 0x5349_4E45_5743_4D50; // "SINEWCMP"

/// Re-views a handle's skeleton (O(1): the bytes were validated by `_load`).
///
/// # Safety
/// `handle` is NULL or points to a `sinew_skeleton`; if filled by
/// `sinew_skeleton_load`, its bytes are still alive.
unsafe fn skeleton<'a>(handle: *const sinew_skeleton) -> Result<Skeleton<'a>, sinew_status> {
    // SAFETY: this function's `# Safety` contract is the callee's, passed on unchanged.
    let h = unsafe { read(handle)? };
    if h.check != handle_check(h.data, h.size, h.joint_count, SKELETON_TAG) {
        return Err(sinew_status::InvalidHandle);
    }
    // SAFETY: the handle's check word proves `_load` validated `data`/`size`; the contract keeps
    // those bytes alive and unchanged while the handle is used.
    let bytes = unsafe { slice(h.data, h.size)? };
    let s = Skeleton::view_trusted(bytes).map_err(|_| sinew_status::InvalidHandle)?;
    if s.joint_count() != h.joint_count as usize {
        return Err(sinew_status::InvalidHandle);
    }
    Ok(s)
}

/// Re-views a handle's clip (O(1)).
///
/// # Safety
/// As `skeleton`.
unsafe fn clip<'a>(handle: *const sinew_clip) -> Result<RawClip<'a>, sinew_status> {
    // SAFETY: this function's `# Safety` contract is the callee's, passed on unchanged.
    let h = unsafe { read(handle)? };
    if h.check != clip_check(&h) {
        return Err(sinew_status::InvalidHandle);
    }
    // The check covers every field, so they are what `_load` read from the
    // header: view the keys directly (O(1), no header parse).
    let (blocks, frames) = (h.soa_count as usize, h.frame_count as usize);
    let keys_end = blocks
        .checked_mul(frames)
        .and_then(|k| k.checked_mul(size_of::<SoaTransform>()))
        .and_then(|k| k.checked_add(RawClip::KEYS_OFFSET))
        .filter(|&end| end <= h.size)
        .ok_or(sinew_status::InvalidHandle)?;
    // SAFETY: as in `skeleton`: the check word covers `data` and the counts, and the contract keeps
    // the bytes alive.
    let bytes = unsafe { slice(h.data, keys_end)? };
    let keys = bytemuck::try_cast_slice(&bytes[RawClip::KEYS_OFFSET..])
        .map_err(|_| sinew_status::InvalidHandle)?;
    RawClip::from_trusted_parts(h.sample_rate, blocks, keys)
        .map_err(|_| sinew_status::InvalidHandle)
}

/// The check word of a clip handle: every field `sinew_clip_load` fills.
/// The clip handles' counts and rates mixed into one word for their checks.
fn timing_word(soa_count: u32, frame_count: u32, sample_rate: f32, duration: f32) -> u64 {
    let shape = u64::from(soa_count) << 32 | u64::from(frame_count);
    let rates = u64::from(sample_rate.to_bits()) << 32 | u64::from(duration.to_bits());
    shape.rotate_left(7) ^ rates.rotate_left(29)
}

fn clip_check(h: &sinew_clip) -> u64 {
    let timing = timing_word(h.soa_count, h.frame_count, h.sample_rate, h.duration);
    handle_check(h.data, h.size, 0, CLIP_TAG ^ timing)
}

/// A `uint32_t` time mode.
fn time_mode(mode: u32) -> Result<TimeMode, sinew_status> {
    match mode {
        SINEW_TIME_LOOP => Ok(TimeMode::Loop),
        SINEW_TIME_CLAMP => Ok(TimeMode::Clamp),
        _ => Err(sinew_status::InvalidArgument),
    }
}

/// The bytes a `_load` function is given: NULL or empty is NULL_PARAMETER.
///
/// # Safety
/// As [`fn@slice`].
unsafe fn container<'a>(bytes: *const u8, len: usize) -> Result<&'a [u8], sinew_status> {
    // SAFETY: this function's `# Safety` contract is the callee's, passed on unchanged.
    let data = unsafe { slice(bytes, len)? };
    if data.is_empty() {
        return Err(sinew_status::NullParameter);
    }
    Ok(data)
}

fn poses(s: &[sinew_soa_transform]) -> &[SoaTransform] {
    bytemuck::cast_slice(s)
}

fn poses_mut(s: &mut [sinew_soa_transform]) -> &mut [SoaTransform] {
    bytemuck::cast_slice_mut(s)
}

fn utf8(bytes: &[u8]) -> Result<&str, sinew_status> {
    core::str::from_utf8(bytes).map_err(|_| sinew_status::InvalidArgument)
}

fn gait(g: u32) -> Result<Gait, sinew_status> {
    match g {
        SINEW_GAIT_WALK => Ok(Gait::Walk),
        SINEW_GAIT_JOG => Ok(Gait::Jog),
        SINEW_GAIT_RUN => Ok(Gait::Run),
        _ => Err(sinew_status::InvalidArgument),
    }
}

// ---------------------------------------------------------------- queries

/// The library version, NUL-terminated (e.g. `"0.1.0"`).
#[must_use]
pub extern "C-unwind" fn sinew_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// The library version as [`SINEW_VERSION_NUMBER`] states it.
#[must_use]
pub extern "C-unwind" fn sinew_version_number() -> u32 {
    SINEW_VERSION_NUMBER
}

/// A static NUL-terminated description of a status code (unknown codes get
/// `"unknown status"`).
#[must_use]
pub extern "C-unwind" fn sinew_status_string(status: u32) -> *const c_char {
    sinew_status::ALL
        .iter()
        .find(|s| **s as u32 == status)
        .map_or("unknown status\0", |s| s.message())
        .as_ptr()
        .cast()
}

/// Blocks in a pose of `joint_count` joints: `(joint_count + 3) / 4`.
#[must_use]
pub extern "C-unwind" fn sinew_soa_count(joint_count: usize) -> usize {
    joint_count / 4 + usize::from(!joint_count.is_multiple_of(4))
}

// ---------------------------------------------------------------- skeleton

/// Implements `sinew_skeleton_load`.
///
/// # Safety
/// `bytes` points to `len` readable bytes that outlive the handle;
/// `out` is NULL or writable.
pub unsafe extern "C-unwind" fn sinew_skeleton_load(
    bytes: *const u8,
    len: usize,
    out: *mut sinew_skeleton,
) -> sinew_status {
    finish((|| {
        out_param(out)?;
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the callNone; the helpers check NULL, alignment and size.
        let data = unsafe { container(bytes, len)? };
        let s = Skeleton::from_bytes(data)?;
        let joint_count = s.joint_count() as u32;
        let handle = sinew_skeleton {
            data: data.as_ptr(),
            size: data.len(),
            joint_count,
            soa_count: s.soa_count() as u32,
            parents: s.parents().as_ptr(),
            rest_pose: s.rest_pose().as_ptr().cast(),
            inverse_bind: s.inverse_bind().as_ptr().cast(),
            check: handle_check(data.as_ptr(), data.len(), joint_count, SKELETON_TAG),
        };
        // SAFETY: `out_param` checked that the pointer is non-NULL and aligned; the contract makes
        // it writable.
        unsafe { write(out, handle) };
        Ok(())
    })())
}

/// Implements `sinew_mesh_load`.
///
/// # Safety
/// `bytes` points to `len` readable bytes that outlive the handle;
/// `out` is NULL or writable.
pub unsafe extern "C-unwind" fn sinew_mesh_load(
    bytes: *const u8,
    len: usize,
    out: *mut sinew_mesh,
) -> sinew_status {
    fn or_null<T>(s: &[T]) -> *const T {
        if s.is_empty() {
            ptr::null()
        } else {
            s.as_ptr()
        }
    }
    finish((|| {
        out_param(out)?;
        // SAFETY: the caller guarantees `len` readable bytes at `bytes`.
        let data = unsafe { container(bytes, len)? };
        // Influence errors here are errors of the stored bytes.
        let m = SkinnedMesh::from_bytes(data).map_err(|e| match sinew_status::from(e) {
            sinew_status::InvalidInfluence | sinew_status::BadLength => sinew_status::InvalidData,
            s => s,
        })?;
        let influences = m.influences();
        let (joints1, weights1) = influences.second_set().unwrap_or((&[], &[]));
        let handle = sinew_mesh {
            data: data.as_ptr(),
            size: data.len(),
            mesh: sinew_skin_mesh {
                vertex_count: m.vertex_count(),
                positions: m.positions().as_ptr().cast(),
                normals: or_null(m.normals()).cast(),
                tangents: or_null(m.tangents()).cast(),
                joints: influences.joints().as_ptr().cast(),
                weights: influences.weights().as_ptr().cast(),
                joints1: or_null(joints1).cast(),
                weights1: or_null(weights1).cast(),
            },
            joint_count: m.joint_count() as u32,
            index_count: m.indices().len() as u32,
            indices: or_null(m.indices()),
            inverse_bind: m.inverse_binds().as_ptr().cast(),
        };
        // SAFETY: `out_param` checked that `out` is non-NULL and aligned.
        unsafe { write(out, handle) };
        Ok(())
    })())
}

/// Checks the joint array (pointers, UTF-8 names, no name overlapping
/// `out`) so that [`joint_def`] cannot fail afterwards.
///
/// # Safety
/// `joints` entries' name pointers are valid for their lengths.
unsafe fn check_joint_defs(joints: &[sinew_joint_def], out: Span) -> Result<usize, sinew_status> {
    if joints.is_empty() || joints.len() > crate::MAX_JOINTS {
        return Err(sinew_status::InvalidArgument);
    }
    let mut names = 0usize;
    for d in joints {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the callNone; the helpers check NULL, alignment and size.
        let name = unsafe { slice(d.name.cast::<u8>(), d.name_len)? };
        disjoint(out, &[Span::of(name)])?;
        utf8(name)?;
        names = names
            .checked_add(name.len())
            .ok_or(sinew_status::InvalidArgument)?;
    }
    if u32::try_from(names).is_err() {
        return Err(sinew_status::InvalidArgument);
    }
    Ok(names)
}

/// A joint of an array checked by [`check_joint_defs`].
///
/// # Safety
/// As [`check_joint_defs`], which must have accepted `d`.
unsafe fn joint_def<'a>(d: &sinew_joint_def) -> JointDef<'a> {
    // SAFETY: `check_joint_defs` accepted this entry's name pointer and length under the same
    // contract.
    let name = unsafe { slice(d.name.cast::<u8>(), d.name_len) }.unwrap_or(&[]);
    let [tx, ty, tz] = d.translation;
    let [rx, ry, rz, rw] = d.rotation;
    let [sx, sy, sz] = d.scale;
    JointDef {
        name: core::str::from_utf8(name).unwrap_or(""),
        parent: (d.parent != crate::NO_PARENT).then_some(usize::from(d.parent)),
        rest: Transform {
            translation: Vec3::new(tx, ty, tz),
            rotation: Quat::new(rx, ry, rz, rw),
            scale: Vec3::new(sx, sy, sz),
        },
    }
}

/// Builder errors are the caller's arguments, not stored data.
fn build_status(e: Error) -> sinew_status {
    match sinew_status::from(e) {
        sinew_status::InvalidData => sinew_status::InvalidArgument,
        s => s,
    }
}

/// Implements `sinew_skeleton_build_size`.
///
/// # Safety
/// `joints` has `count` entries whose names are valid; `size` is writable.
pub unsafe extern "C-unwind" fn sinew_skeleton_build_size(
    joints: *const sinew_joint_def,
    count: usize,
    size: *mut usize,
) -> sinew_status {
    finish((|| {
        out_param(size)?;
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the callNone; the helpers check NULL, alignment and size.
        let defs = unsafe { slice(joints, count)? };
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the callNone; the helpers check NULL, alignment and size.
        let names = unsafe { check_joint_defs(defs, Span(0, 0))? };
        let total = crate::skeleton::container_size(defs.len(), names);
        // SAFETY: `out_param` checked that the pointer is non-NULL and aligned; the contract makes
        // it writable.
        unsafe { write(size, total) };
        Ok(())
    })())
}

/// Implements `sinew_skeleton_build`.
///
/// # Safety
/// `joints` has `count` entries whose names are valid; `out` has `out_len`
/// writable bytes; `remap` is NULL or has `remap_len` writable entries;
/// `written` is writable.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C-unwind" fn sinew_skeleton_build(
    joints: *const sinew_joint_def,
    count: usize,
    out: *mut u8,
    out_len: usize,
    remap: *mut u16,
    remap_len: usize,
    written: *mut usize,
) -> sinew_status {
    finish((|| {
        out_param(written)?;
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the callNone; the helpers check NULL, alignment and size.
        let (defs, out) = unsafe { (slice(joints, count)?, slice_mut(out, out_len)?) };
        let o = Span::of(out);
        disjoint(o, &[Span::of(defs)])?;
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the callNone; the helpers check NULL, alignment and size.
        unsafe { check_joint_defs(defs, o)? };
        let remap = if remap.is_null() && remap_len == 0 {
            None
        } else {
            // SAFETY: this function's `# Safety` contract makes each pointer valid for its
            // length during the callNone; the helpers check NULL, alignment and size.
            let r = unsafe { slice_mut(remap, remap_len)? };
            let rs = Span::of(r);
            disjoint(rs, &[o, Span::of(defs)])?;
            for d in defs {
                disjoint(rs, &[Span(d.name as usize, d.name as usize + d.name_len)])?;
            }
            Some(r)
        };
        let n = build_with(
            defs.len(),
            // SAFETY: every entry was accepted by `check_joint_defs` under this function's
            // contract.
            |j| unsafe { joint_def(&defs[j]) },
            out,
            remap,
        )
        .map_err(build_status)?;
        // SAFETY: `out_param` checked that the pointer is non-NULL and aligned; the contract makes
        // it writable.
        unsafe { write(written, n) };
        Ok(())
    })())
}

/// Implements `sinew_skeleton_find_joint`.
///
/// # Safety
/// `skeleton` is a loaded handle; `name` points to `name_len` bytes;
/// `joint` is writable.
pub unsafe extern "C-unwind" fn sinew_skeleton_find_joint(
    skeleton: *const sinew_skeleton,
    name: *const c_char,
    name_len: usize,
    joint: *mut usize,
) -> sinew_status {
    finish((|| {
        out_param(joint)?;
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the callNone; the helpers check NULL, alignment and size.
        let s = unsafe { self::skeleton(skeleton)? };
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the callNone; the helpers check NULL, alignment and size.
        let name = utf8(unsafe { slice(name.cast::<u8>(), name_len)? })?;
        let j = s.find_joint(name).ok_or(sinew_status::NotFound)?;
        // SAFETY: `out_param` checked that the pointer is non-NULL and aligned; the contract makes
        // it writable.
        unsafe { write(joint, j) };
        Ok(())
    })())
}

/// Implements `sinew_skeleton_joint_name`.
///
/// # Safety
/// `skeleton` is a loaded handle; `name` and `name_len` are writable.
pub unsafe extern "C-unwind" fn sinew_skeleton_joint_name(
    skeleton: *const sinew_skeleton,
    joint: usize,
    name: *mut *const c_char,
    name_len: *mut usize,
) -> sinew_status {
    finish((|| {
        out_param(name)?;
        out_param(name_len)?;
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the callNone; the helpers check NULL, alignment and size.
        let s = unsafe { self::skeleton(skeleton)? };
        let n = s.joint_name(joint).ok_or(sinew_status::OutOfRange)?;
        // SAFETY: `out_param` checked that the pointer is non-NULL and aligned; the contract makes
        // it writable.
        unsafe {
            write(name, n.as_ptr().cast());
            write(name_len, n.len());
        }
        Ok(())
    })())
}

/// Implements `sinew_skeleton_local_to_model`.
///
/// # Safety
/// As `sinew_skeleton_local_to_model_range`.
pub unsafe extern "C-unwind" fn sinew_skeleton_local_to_model(
    skeleton: *const sinew_skeleton,
    local: *const sinew_soa_transform,
    local_len: usize,
    root: *const sinew_float4x4,
    out: *mut sinew_float4x4,
    out_len: usize,
) -> sinew_status {
    // SAFETY: the callee's contract, passed on unchanged; a bad handle is reported by the callee.
    let end = unsafe { read(skeleton) }.map_or(0, |h| h.joint_count as usize);
    // SAFETY: this function's `# Safety` contract is the callee's, passed on unchanged.
    unsafe {
        sinew_skeleton_local_to_model_range(skeleton, local, local_len, root, 0, end, out, out_len)
    }
}

/// Implements `sinew_skeleton_local_to_model_range`.
///
/// # Safety
/// `skeleton` is a loaded handle; `local` has `local_len` blocks; `root` is
/// NULL or one matrix; `out` has `out_len` writable matrices.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C-unwind" fn sinew_skeleton_local_to_model_range(
    skeleton: *const sinew_skeleton,
    local: *const sinew_soa_transform,
    local_len: usize,
    root: *const sinew_float4x4,
    first: usize,
    end: usize,
    out: *mut sinew_float4x4,
    out_len: usize,
) -> sinew_status {
    finish((|| {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the callNone; the helpers check NULL, alignment and size.
        let (s, local, out) = unsafe {
            (
                self::skeleton(skeleton)?,
                slice(local, local_len)?,
                slice_mut(out, out_len)?,
            )
        };
        let root: Option<Mat4> = if root.is_null() {
            None
        } else {
            // SAFETY: this function's `# Safety` contract makes each pointer valid for its
            // length during the callNone; the helpers check NULL, alignment and size.
            Some(bytemuck::cast(unsafe { read(root)? }))
        };
        disjoint(Span::of(out), &[Span::of(local), Span::of(s.parents())])?;
        let mut job = FkJob::new(&s, poses(local)).range(first, end);
        if let Some(r) = root.as_ref() {
            job = job.with_root(r);
        }
        local_to_model(&job, bytemuck::cast_slice_mut(out))?;
        Ok(())
    })())
}

// ---------------------------------------------------------------- clips

/// Implements `sinew_clip_load`.
///
/// # Safety
/// As `sinew_skeleton_load`.
pub unsafe extern "C-unwind" fn sinew_clip_load(
    bytes: *const u8,
    len: usize,
    out: *mut sinew_clip,
) -> sinew_status {
    finish((|| {
        out_param(out)?;
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the callNone; the helpers check NULL, alignment and size.
        let data = unsafe { container(bytes, len)? };
        let c = RawClip::from_bytes(data)?;
        let frame_count = c.frame_count() as u32;
        let mut handle = sinew_clip {
            data: data.as_ptr(),
            size: data.len(),
            soa_count: c.soa_count() as u32,
            frame_count,
            sample_rate: c.sample_rate(),
            duration: c.duration(),
            check: 0,
        };
        handle.check = clip_check(&handle);
        // SAFETY: `out_param` checked that the pointer is non-NULL and aligned; the contract makes
        // it writable.
        unsafe { write(out, handle) };
        Ok(())
    })())
}

/// Implements `sinew_clip_container_size`.
///
/// # Safety
/// `size` is writable.
pub unsafe extern "C-unwind" fn sinew_clip_container_size(
    soa_count: usize,
    frame_count: usize,
    name_len: usize,
    size: *mut usize,
) -> sinew_status {
    finish((|| {
        out_param(size)?;
        let total = checked_clip_container_size(soa_count, frame_count, name_len)
            .ok_or(sinew_status::InvalidArgument)?;
        // SAFETY: `out_param` checked that the pointer is non-NULL and aligned; the contract makes
        // it writable.
        unsafe { write(size, total) };
        Ok(())
    })())
}

/// Implements `sinew_clip_write`.
///
/// # Safety
/// `keys` has `keys_len` blocks; `name` has `name_len` bytes; `out` has
/// `out_len` writable bytes; `written` is writable.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C-unwind" fn sinew_clip_write(
    keys: *const sinew_soa_transform,
    keys_len: usize,
    soa_count: usize,
    sample_rate: f32,
    name: *const c_char,
    name_len: usize,
    out: *mut u8,
    out_len: usize,
    written: *mut usize,
) -> sinew_status {
    finish((|| {
        out_param(written)?;
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the callNone; the helpers check NULL, alignment and size.
        let (keys, name, out) = unsafe {
            (
                slice(keys, keys_len)?,
                slice(name.cast::<u8>(), name_len)?,
                slice_mut(out, out_len)?,
            )
        };
        disjoint(Span::of(out), &[Span::of(keys), Span::of(name)])?;
        let name = utf8(name)?;
        let clip = RawClip::new(sample_rate, soa_count, poses(keys))?.with_name(name);
        let n = clip.write(out)?;
        // SAFETY: `out_param` checked that the pointer is non-NULL and aligned; the contract makes
        // it writable.
        unsafe { write(written, n) };
        Ok(())
    })())
}

/// Implements `sinew_clip_sample`.
///
/// # Safety
/// `clip` is a loaded handle; `out` has `out_len` writable blocks.
pub unsafe extern "C-unwind" fn sinew_clip_sample(
    clip: *const sinew_clip,
    time: f32,
    mode: u32,
    out: *mut sinew_soa_transform,
    out_len: usize,
) -> sinew_status {
    finish((|| {
        let mode = time_mode(mode)?;
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the callNone; the helpers check NULL, alignment and size.
        let (c, out) = unsafe { (self::clip(clip)?, slice_mut(out, out_len)?) };
        disjoint(Span::of(out), &[keys_span(&c)])?;
        c.sample(time, mode, poses_mut(out))?;
        Ok(())
    })())
}

/// The bytes of a clip's keys.
fn keys_span(c: &RawClip<'_>) -> Span {
    match (c.frame(0), c.frame(c.frame_count().saturating_sub(1))) {
        (Some(first), Some(last)) => Span(Span::of(first).0, Span::of(last).1),
        _ => Span(0, 0),
    }
}

// ---------------------------------------------------------------- compressed clips

fn compressed_check(h: &sinew_compressed_clip) -> u64 {
    let timing = timing_word(h.soa_count, h.frame_count, h.sample_rate, h.duration);
    let flags = u64::from(h.needs_rest_pose) << 32 | u64::from(h.joint_count);
    handle_check(
        h.data,
        h.size,
        0,
        COMPRESSED_TAG ^ timing ^ flags.rotate_left(43),
    )
}

/// Re-views a handle's compressed clip (O(1): `_load` validated the bytes).
///
/// # Safety
/// `handle` is NULL or points to a `sinew_compressed_clip`; if filled by
/// `sinew_compressed_clip_load`, its bytes are still alive.
unsafe fn compressed<'a>(
    handle: *const sinew_compressed_clip,
) -> Result<(CompressedClip<'a>, Span), sinew_status> {
    // SAFETY: this function's `# Safety` contract is the callee's, passed on unchanged.
    let h = unsafe { read(handle)? };
    if h.check != compressed_check(&h) {
        return Err(sinew_status::InvalidHandle);
    }
    // SAFETY: the handle's check word proves `_load` validated `data`/`size`; the contract keeps
    // those bytes alive and unchanged while the handle is used.
    let bytes = unsafe { slice(h.data, h.size)? };
    let c = CompressedClip::view_trusted(bytes).map_err(|_| sinew_status::InvalidHandle)?;
    Ok((c, Span::of(bytes)))
}

/// Implements `sinew_compressed_clip_load`.
///
/// # Safety
/// As `sinew_skeleton_load`.
pub unsafe extern "C-unwind" fn sinew_compressed_clip_load(
    bytes: *const u8,
    len: usize,
    out: *mut sinew_compressed_clip,
) -> sinew_status {
    finish((|| {
        out_param(out)?;
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the callNone; the helpers check NULL, alignment and size.
        let data = unsafe { container(bytes, len)? };
        let c = CompressedClip::from_bytes(data)?;
        let mut handle = sinew_compressed_clip {
            data: data.as_ptr(),
            size: data.len(),
            joint_count: c.joint_count() as u32,
            soa_count: c.soa_count() as u32,
            frame_count: c.frame_count() as u32,
            needs_rest_pose: u32::from(c.defaults() == Defaults::RestPose),
            sample_rate: c.sample_rate(),
            duration: c.duration(),
            check: 0,
        };
        handle.check = compressed_check(&handle);
        // SAFETY: `out_param` checked that the pointer is non-NULL and aligned; the contract makes
        // it writable.
        unsafe { write(out, handle) };
        Ok(())
    })())
}

/// Implements `sinew_compressed_clip_sample`.
///
/// # Safety
/// `clip` is a loaded handle; `rest` is NULL or has `rest_len` blocks;
/// `out` has `out_len` writable blocks.
pub unsafe extern "C-unwind" fn sinew_compressed_clip_sample(
    clip: *const sinew_compressed_clip,
    time: f32,
    mode: u32,
    rest: *const sinew_soa_transform,
    rest_len: usize,
    out: *mut sinew_soa_transform,
    out_len: usize,
) -> sinew_status {
    finish((|| {
        let mode = time_mode(mode)?;
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the callNone; the helpers check NULL, alignment and size.
        let ((c, bytes), out) = unsafe { (self::compressed(clip)?, slice_mut(out, out_len)?) };
        let rest = if rest.is_null() {
            None
        } else {
            // SAFETY: this function's `# Safety` contract makes each pointer valid for its
            // length during the callNone; the helpers check NULL, alignment and size.
            Some(unsafe { slice(rest, rest_len)? })
        };
        let inputs = [bytes, rest.map_or(Span(0, 0), Span::of)];
        disjoint(Span::of(out), &inputs)?;
        match (c.defaults(), rest) {
            (Defaults::RestPose, None) => return Err(sinew_status::NullParameter),
            (Defaults::RestPose, Some(r)) => {
                c.sample_with_rest(time, mode, poses(r), poses_mut(out))?
            }
            (Defaults::Identity, _) => c.sample(time, mode, poses_mut(out))?,
        }
        Ok(())
    })())
}

// ---------------------------------------------------------------- procedural

/// Implements `sinew_humanoid_skeleton_write`.
///
/// # Safety
/// `out` has `out_len` writable bytes; `written` is writable.
pub unsafe extern "C-unwind" fn sinew_humanoid_skeleton_write(
    out: *mut u8,
    out_len: usize,
    written: *mut usize,
) -> sinew_status {
    finish((|| {
        out_param(written)?;
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the callNone; the helpers check NULL, alignment and size.
        let out = unsafe { slice_mut(out, out_len)? };
        let n = procedural::write_humanoid_skeleton(out)?;
        // SAFETY: `out_param` checked that the pointer is non-NULL and aligned; the contract makes
        // it writable.
        unsafe { write(written, n) };
        Ok(())
    })())
}

fn humanoid_clip_shape(
    s: &Skeleton<'_>,
    g: Gait,
    rate: f32,
) -> Result<(usize, usize), sinew_status> {
    if !(rate.is_finite() && rate > 0.0 && rate <= 10_000.0) {
        return Err(sinew_status::InvalidArgument);
    }
    let frames = procedural::gait_frame_count(g, rate);
    Ok((
        frames,
        clip_container_size(s.soa_count(), frames, g.name().len()),
    ))
}

/// Implements `sinew_humanoid_clip_size`.
///
/// # Safety
/// `skeleton` is a loaded handle; `size` is writable.
pub unsafe extern "C-unwind" fn sinew_humanoid_clip_size(
    skeleton: *const sinew_skeleton,
    gait: u32,
    sample_rate: f32,
    size: *mut usize,
) -> sinew_status {
    finish((|| {
        out_param(size)?;
        let g = self::gait(gait)?;
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the callNone; the helpers check NULL, alignment and size.
        let s = unsafe { self::skeleton(skeleton)? };
        let (_, total) = humanoid_clip_shape(&s, g, sample_rate)?;
        // SAFETY: `out_param` checked that the pointer is non-NULL and aligned; the contract makes
        // it writable.
        unsafe { write(size, total) };
        Ok(())
    })())
}

/// Implements `sinew_humanoid_clip_write`.
///
/// # Safety
/// `skeleton` is a loaded handle; `out` has `out_len` writable bytes;
/// `written` is writable.
pub unsafe extern "C-unwind" fn sinew_humanoid_clip_write(
    skeleton: *const sinew_skeleton,
    gait: u32,
    sample_rate: f32,
    out: *mut u8,
    out_len: usize,
    written: *mut usize,
) -> sinew_status {
    finish((|| {
        out_param(written)?;
        let g = self::gait(gait)?;
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the callNone; the helpers check NULL, alignment and size.
        let (s, out) = unsafe { (self::skeleton(skeleton)?, slice_mut(out, out_len)?) };
        disjoint(Span::of(out), &[Span::of(s.parents())])?;
        let (frames, _) = humanoid_clip_shape(&s, g, sample_rate)?;
        let n = write_container_with(out, sample_rate, s.soa_count(), frames, g.name(), |keys| {
            procedural::write_gait_clip(g, &s, sample_rate, keys).map(|_| ())
        })?;
        // SAFETY: `out_param` checked that the pointer is non-NULL and aligned; the contract makes
        // it writable.
        unsafe { write(written, n) };
        Ok(())
    })())
}

// ---------------------------------------------------------------- blend

/// Views one C layer as the core's layer (pose, weight, joint weights),
/// checking that none of it overlaps `out`.
///
/// # Safety
/// The layer's pointers are valid for their lengths.
unsafe fn layer<'a>(l: &sinew_blend_layer, out: Span) -> Result<BlendLayer<'a>, sinew_status> {
    // SAFETY: this function's `# Safety` contract makes each pointer valid for its
    // length during the callNone; the helpers check NULL, alignment and size.
    let pose = unsafe { slice(l.pose, l.pose_len)? };
    disjoint(out, &[Span::of(pose)])?;
    let pose = poses(pose);
    if l.joint_weights.is_null() && l.joint_weights_len == 0 {
        return Ok(BlendLayer::new(pose, l.weight));
    }
    // SAFETY: this function's `# Safety` contract makes each pointer valid for its
    // length during the callNone; the helpers check NULL, alignment and size.
    let w = unsafe { slice(l.joint_weights, l.joint_weights_len)? };
    disjoint(out, &[Span::of(w)])?;
    let lanes = bytemuck::try_cast_slice(w).map_err(|_| {
        if w.len().is_multiple_of(4) {
            sinew_status::Misaligned
        } else {
            sinew_status::BadLength
        }
    })?;
    Ok(BlendLayer::masked(
        pose,
        l.weight,
        JointWeights::new(lanes)?,
    ))
}

/// Converts C layers into core layers in `store` (at most
/// [`SINEW_MAX_BLEND_LAYERS`], on the caller's stack, filled in place),
/// checking that none overlaps `out`.
///
/// # Safety
/// Every layer's pointers are valid for their lengths.
unsafe fn layers<'a>(
    src: &[sinew_blend_layer],
    out: Span,
    store: &mut heapless::Vec<BlendLayer<'a>, SINEW_MAX_BLEND_LAYERS>,
) -> Status {
    for l in src {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the callNone; the helpers check NULL, alignment and size.
        let layer = unsafe { layer(l, out)? };
        store.push(layer).map_err(|_| sinew_status::TooManyLayers)?;
    }
    Ok(())
}

/// Implements `sinew_pose_blend`.
///
/// # Safety
/// `layers`/`additive` have `layer_count`/`additive_count` entries whose
/// pointers are valid; `rest` has `rest_len` blocks; `out` has `out_len`
/// writable blocks.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C-unwind" fn sinew_pose_blend(
    layers: *const sinew_blend_layer,
    layer_count: usize,
    additive: *const sinew_blend_layer,
    additive_count: usize,
    rest: *const sinew_soa_transform,
    rest_len: usize,
    threshold: f32,
    out: *mut sinew_soa_transform,
    out_len: usize,
) -> sinew_status {
    finish((|| {
        if layer_count > SINEW_MAX_BLEND_LAYERS || additive_count > SINEW_MAX_BLEND_LAYERS {
            return Err(sinew_status::TooManyLayers);
        }
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the callNone; the helpers check NULL, alignment and size.
        let (normal, add, rest, out) = unsafe {
            (
                slice(layers, layer_count)?,
                slice(additive, additive_count)?,
                slice(rest, rest_len)?,
                slice_mut(out, out_len)?,
            )
        };
        let o = Span::of(out);
        disjoint(o, &[Span::of(rest)])?;
        let mut normal_store = heapless::Vec::new();
        let mut add_store = heapless::Vec::new();
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the callNone; the helpers check NULL, alignment and size.
        unsafe {
            self::layers(normal, o, &mut normal_store)?;
            self::layers(add, o, &mut add_store)?;
        }
        let job = BlendJob {
            layers: &normal_store,
            additive: &add_store,
            rest: poses(rest),
            threshold,
        };
        crate::blend::blend(&job, poses_mut(out))?;
        Ok(())
    })())
}

// ---------------------------------------------------------------- skinning

/// A palette call's shape: `models` and a per-joint (or per-block) input
/// array in, `out` written by `f` after the views and the overlap check.
///
/// # Safety
/// Each pointer has the count that follows it; `out` is writable.
unsafe fn palette_call<B, O, BR, OR>(
    models: *const sinew_float4x4,
    model_count: usize,
    input: *const B,
    input_count: usize,
    out: *mut O,
    out_len: usize,
    f: impl FnOnce(&[Mat4], &[BR], &mut [OR]) -> Result<(), Error>,
) -> sinew_status
where
    B: bytemuck::Pod,
    O: bytemuck::Pod,
    BR: bytemuck::Pod,
    OR: bytemuck::Pod,
{
    finish((|| {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the callNone; the helpers check NULL, alignment and size.
        let (m, b, out) = unsafe {
            (
                slice(models, model_count)?,
                slice(input, input_count)?,
                slice_mut(out, out_len)?,
            )
        };
        disjoint(Span::of(out), &[Span::of(m), Span::of(b)])?;
        f(
            bytemuck::cast_slice(m),
            bytemuck::cast_slice(b),
            bytemuck::cast_slice_mut(out),
        )?;
        Ok(())
    })())
}

/// A bind preparation's shape: the inverse binds in, `out` written by `f`.
///
/// # Safety
/// Each pointer has the count that follows it; `out` is writable.
unsafe fn prepare_call<O, OR>(
    inverse_bind: *const sinew_float4x4,
    inverse_bind_count: usize,
    out: *mut O,
    out_len: usize,
    f: impl FnOnce(&[Mat4], &mut [OR]) -> Result<(), Error>,
) -> sinew_status
where
    O: bytemuck::Pod,
    OR: bytemuck::Pod,
{
    finish((|| {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the callNone; the helpers check NULL, alignment and size.
        let (b, out) = unsafe {
            (
                slice(inverse_bind, inverse_bind_count)?,
                slice_mut(out, out_len)?,
            )
        };
        disjoint(Span::of(out), &[Span::of(b)])?;
        f(bytemuck::cast_slice(b), bytemuck::cast_slice_mut(out))?;
        Ok(())
    })())
}

/// Implements `sinew_skin_lbs_palette`.
///
/// # Safety
/// Each pointer has the count that follows it; `out` is writable.
pub unsafe extern "C-unwind" fn sinew_skin_lbs_palette(
    models: *const sinew_float4x4,
    model_count: usize,
    inverse_bind: *const sinew_float4x4,
    inverse_bind_count: usize,
    out: *mut sinew_float3x4,
    out_len: usize,
) -> sinew_status {
    // SAFETY: this function's `# Safety` contract is the callee's, passed on unchanged.
    unsafe {
        palette_call(
            models,
            model_count,
            inverse_bind,
            inverse_bind_count,
            out,
            out_len,
            skin::lbs_palette,
        )
    }
}

/// Implements `sinew_skin_dqs_palette`.
///
/// # Safety
/// As `sinew_skin_lbs_palette`.
pub unsafe extern "C-unwind" fn sinew_skin_dqs_palette(
    models: *const sinew_float4x4,
    model_count: usize,
    inverse_bind: *const sinew_float4x4,
    inverse_bind_count: usize,
    out: *mut sinew_dual_quat,
    out_len: usize,
) -> sinew_status {
    // SAFETY: this function's `# Safety` contract is the callee's, passed on unchanged.
    unsafe {
        palette_call(
            models,
            model_count,
            inverse_bind,
            inverse_bind_count,
            out,
            out_len,
            skin::dqs_palette,
        )
    }
}

/// Implements `sinew_skin_lbs_binds_prepare`.
///
/// # Safety
/// Each pointer has the count that follows it; `out` is writable.
pub unsafe extern "C-unwind" fn sinew_skin_lbs_binds_prepare(
    inverse_bind: *const sinew_float4x4,
    inverse_bind_count: usize,
    out: *mut sinew_lbs_bind,
    out_len: usize,
) -> sinew_status {
    // SAFETY: this function's `# Safety` contract is the callee's, passed on unchanged.
    unsafe {
        prepare_call(
            inverse_bind,
            inverse_bind_count,
            out,
            out_len,
            skin::prepare_lbs_binds,
        )
    }
}

/// Implements `sinew_skin_lbs_palette_prepared`.
///
/// # Safety
/// Each pointer has the count that follows it; `out` is writable.
pub unsafe extern "C-unwind" fn sinew_skin_lbs_palette_prepared(
    models: *const sinew_float4x4,
    model_count: usize,
    binds: *const sinew_lbs_bind,
    bind_count: usize,
    out: *mut sinew_float3x4,
    out_len: usize,
) -> sinew_status {
    // SAFETY: this function's `# Safety` contract is the callee's, passed on unchanged.
    unsafe {
        palette_call(
            models,
            model_count,
            binds,
            bind_count,
            out,
            out_len,
            skin::lbs_palette_prepared,
        )
    }
}

/// Implements `sinew_skin_dqs_binds_count`.
#[must_use]
pub extern "C-unwind" fn sinew_skin_dqs_binds_count(joint_count: usize) -> usize {
    DqsBinds::count(joint_count)
}

/// Implements `sinew_skin_dqs_binds_prepare`.
///
/// # Safety
/// Each pointer has the count that follows it; `out` is writable.
pub unsafe extern "C-unwind" fn sinew_skin_dqs_binds_prepare(
    inverse_bind: *const sinew_float4x4,
    inverse_bind_count: usize,
    out: *mut sinew_dqs_binds,
    out_len: usize,
) -> sinew_status {
    // SAFETY: this function's `# Safety` contract is the callee's, passed on unchanged.
    unsafe {
        prepare_call(
            inverse_bind,
            inverse_bind_count,
            out,
            out_len,
            skin::prepare_dqs_binds,
        )
    }
}

/// Implements `sinew_skin_dqs_palette_prepared`.
///
/// # Safety
/// Each pointer has the count that follows it; `out` is writable.
pub unsafe extern "C-unwind" fn sinew_skin_dqs_palette_prepared(
    models: *const sinew_float4x4,
    model_count: usize,
    binds: *const sinew_dqs_binds,
    binds_len: usize,
    out: *mut sinew_dual_quat,
    out_len: usize,
) -> sinew_status {
    // SAFETY: this function's `# Safety` contract is the callee's, passed on unchanged.
    unsafe {
        palette_call(
            models,
            model_count,
            binds,
            binds_len,
            out,
            out_len,
            skin::dqs_palette_prepared,
        )
    }
}

/// The mesh's arrays, viewed (`None` for NULL optional arrays).
struct MeshView<'a> {
    positions: &'a [[f32; 3]],
    normals: Option<&'a [[f32; 3]]>,
    tangents: Option<&'a [[f32; 4]]>,
    joints: &'a [[u16; 4]],
    weights: &'a [[f32; 4]],
    /// Slots 4-7, when the mesh has eight influences.
    second: Option<InfluenceSet<'a>>,
}

/// # Safety
/// Non-NULL arrays of `m` have `m.vertex_count` entries.
unsafe fn mesh_view<'a>(m: &sinew_skin_mesh) -> Result<MeshView<'a>, sinew_status> {
    let n = m.vertex_count;
    let opt3 = |p: *const f32| -> Result<Option<&'a [[f32; 3]]>, sinew_status> {
        if p.is_null() {
            Ok(None)
        } else {
            // SAFETY: this function's `# Safety` contract makes each pointer valid for its
            // length during the callNone; the helpers check NULL, alignment and size.
            Ok(Some(unsafe { slice(p.cast::<[f32; 3]>(), n)? }))
        }
    };
    let tangents = if m.tangents.is_null() {
        None
    } else {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the callNone; the helpers check NULL, alignment and size.
        Some(unsafe { slice(m.tangents.cast::<[f32; 4]>(), n)? })
    };
    Ok(MeshView {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call (all four below); the helpers check NULL, alignment and size.
        positions: unsafe { slice(m.positions.cast::<[f32; 3]>(), n)? },
        normals: opt3(m.normals)?,
        tangents,
        // SAFETY: as for `positions`: `n` entries by this function's contract.
        joints: unsafe { slice(m.joints.cast::<[u16; 4]>(), n)? },
        // SAFETY: as for `positions`: `n` entries by this function's contract.
        weights: unsafe { slice(m.weights.cast::<[f32; 4]>(), n)? },
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the callNone; the helpers check NULL, alignment and size.
        second: unsafe { second_set(m.joints1, m.weights1, n)? },
    })
}

/// Slots 4-7 of `n` vertices: `None` when both pointers are NULL,
/// NULL_PARAMETER when only one is.
///
/// # Safety
/// Non-NULL, `joints1` and `weights1` have `4 · n` entries.
unsafe fn second_set<'a>(
    joints1: *const u16,
    weights1: *const f32,
    n: usize,
) -> Result<Option<InfluenceSet<'a>>, sinew_status> {
    match (joints1.is_null(), weights1.is_null()) {
        (true, true) => Ok(None),
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call (both); the helpers check NULL, alignment and size.
        (false, false) => Ok(Some(unsafe {
            (
                slice(joints1.cast::<[u16; 4]>(), n)?,
                slice(weights1.cast::<[f32; 4]>(), n)?,
            )
        })),
        _ => Err(sinew_status::NullParameter),
    }
}

/// Checks four influences, or eight when `second` holds slots 4-7,
/// against `joint_count`.
fn checked_influences<'a>(
    (joints, weights): InfluenceSet<'a>,
    second: Option<InfluenceSet<'a>>,
    joint_count: usize,
) -> Result<CheckedInfluences<'a>, Error> {
    match second {
        None => CheckedInfluences::new(joints, weights, joint_count),
        Some((j1, w1)) => CheckedInfluences::new8(joints, weights, j1, w1, joint_count),
    }
}

/// Skins the viewed mesh by `method` (palettes of `joint_count` entries)
/// with its four influences, or eight when `second` holds slots 4-7.
fn skin_mesh(
    method: SkinMethod<'_>,
    joint_count: usize,
    input: &SkinInput<'_>,
    second: Option<InfluenceSet<'_>>,
    out: &mut SkinOutput<'_>,
) -> Result<(), Error> {
    let influences = checked_influences((input.joints, input.weights), second, joint_count)?;
    SkinJob {
        method,
        influences: &influences,
        attributes: SkinAttributes::Arrays {
            input: input.vertices(),
            output: out.reborrow(),
        },
    }
    .run()
}

/// Runs `f` on the viewed mesh and target after the overlap checks.
///
/// # Safety
/// `mesh` and `target` point to structs whose arrays have
/// `mesh.vertex_count` entries.
unsafe fn with_mesh(
    mesh: *const sinew_skin_mesh,
    target: *const sinew_skin_target,
    extra_inputs: &[Span],
    f: impl FnOnce(&SkinInput<'_>, Option<InfluenceSet<'_>>, &mut SkinOutput<'_>) -> Result<(), Error>,
) -> Status {
    // SAFETY: this function's `# Safety` contract makes each pointer valid for its
    // length during the callNone; the helpers check NULL, alignment and size.
    let (m, t) = unsafe { (read(mesh)?, read(target)?) };
    // SAFETY: this function's `# Safety` contract makes each pointer valid for its
    // length during the callNone; the helpers check NULL, alignment and size.
    let v = unsafe { mesh_view(&m)? };
    let n = m.vertex_count;
    if t.positions.is_null() {
        return Err(sinew_status::NullParameter);
    }
    // SAFETY: this function's `# Safety` contract makes each pointer valid for its
    // length during the call (the three outputs); the helpers check NULL, alignment and size.
    let positions = unsafe { slice_mut(t.positions.cast::<[f32; 3]>(), n)? };
    let mut normals = match t.normals.is_null() {
        true => None,
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the callNone; the helpers check NULL, alignment and size.
        false => Some(unsafe { slice_mut(t.normals.cast::<[f32; 3]>(), n)? }),
    };
    let mut tangents = match t.tangents.is_null() {
        true => None,
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the callNone; the helpers check NULL, alignment and size.
        false => Some(unsafe { slice_mut(t.tangents.cast::<[f32; 4]>(), n)? }),
    };
    let inputs = [
        Span::of(v.positions),
        v.normals.map_or(Span(0, 0), Span::of),
        v.tangents.map_or(Span(0, 0), Span::of),
        Span::of(v.joints),
        Span::of(v.weights),
        v.second.map_or(Span(0, 0), |s| Span::of(s.0)),
        v.second.map_or(Span(0, 0), |s| Span::of(s.1)),
    ];
    let outs = [
        Span::of(positions),
        normals.as_deref().map_or(Span(0, 0), Span::of),
        tangents.as_deref().map_or(Span(0, 0), Span::of),
    ];
    for (i, o) in outs.iter().enumerate() {
        disjoint(*o, &inputs)?;
        disjoint(*o, extra_inputs)?;
        disjoint(*o, &outs[i + 1..])?;
    }
    if normals.is_some() && v.normals.is_none() || tangents.is_some() && v.tangents.is_none() {
        return Err(sinew_status::NullParameter);
    }
    let input = SkinInput {
        positions: v.positions,
        normals: v.normals,
        tangents: v.tangents,
        joints: v.joints,
        weights: v.weights,
    };
    let mut output = SkinOutput {
        positions,
        normals: normals.take(),
        tangents: tangents.take(),
    };
    f(&input, v.second, &mut output)?;
    Ok(())
}

/// Implements `sinew_skin_lbs`.
///
/// # Safety
/// `palette` has `palette_len` entries; `mesh` and `target` as documented
/// on `sinew_skin_mesh` / `sinew_skin_target`.
pub unsafe extern "C-unwind" fn sinew_skin_lbs(
    palette: *const sinew_float3x4,
    palette_len: usize,
    mesh: *const sinew_skin_mesh,
    target: *const sinew_skin_target,
) -> sinew_status {
    finish((|| {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the callNone; the helpers check NULL, alignment and size.
        let p = unsafe { slice(palette, palette_len)? };
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the callNone; the helpers check NULL, alignment and size.
        unsafe {
            with_mesh(mesh, target, &[Span::of(p)], |i, second, o| {
                let palette: &[Mat3x4] = bytemuck::cast_slice(p);
                skin_mesh(SkinMethod::Lbs { palette }, palette.len(), i, second, o)
            })
        }
    })())
}

/// Implements `sinew_skin_dqs`.
///
/// # Safety
/// As `sinew_skin_lbs`.
pub unsafe extern "C-unwind" fn sinew_skin_dqs(
    palette: *const sinew_dual_quat,
    palette_len: usize,
    mesh: *const sinew_skin_mesh,
    target: *const sinew_skin_target,
) -> sinew_status {
    finish((|| {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the callNone; the helpers check NULL, alignment and size.
        let p = unsafe { slice(palette, palette_len)? };
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the callNone; the helpers check NULL, alignment and size.
        unsafe {
            with_mesh(mesh, target, &[Span::of(p)], |i, second, o| {
                let palette: &[DualQuat] = bytemuck::cast_slice(p);
                skin_mesh(SkinMethod::Dqs { palette }, palette.len(), i, second, o)
            })
        }
    })())
}

/// Implements `sinew_skin_mixed`.
///
/// # Safety
/// `lbs` and `dqs` have `palette_len` entries, `mix` has `mix_len`
/// floats; `mesh` and `target` as for `sinew_skin_lbs`.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C-unwind" fn sinew_skin_mixed(
    lbs: *const sinew_float3x4,
    dqs: *const sinew_dual_quat,
    palette_len: usize,
    mix: *const f32,
    mix_len: usize,
    mesh: *const sinew_skin_mesh,
    target: *const sinew_skin_target,
) -> sinew_status {
    finish((|| {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the callNone; the helpers check NULL, alignment and size.
        let (l, d, mix) = unsafe {
            (
                slice(lbs, palette_len)?,
                slice(dqs, palette_len)?,
                slice(mix, mix_len)?,
            )
        };
        let extra = [Span::of(l), Span::of(d), Span::of(mix)];
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the callNone; the helpers check NULL, alignment and size.
        unsafe {
            with_mesh(mesh, target, &extra, |i, second, o| {
                let (lbs, dqs): (&[Mat3x4], &[DualQuat]) =
                    (bytemuck::cast_slice(l), bytemuck::cast_slice(d));
                let method = SkinMethod::Mixed { lbs, dqs, mix };
                skin_mesh(method, lbs.len(), i, second, o)
            })
        }
    })())
}

/// Implements `sinew_skin_check_influences`.
///
/// # Safety
/// `joints` has `4 · vertex_count` indices and `weights` as many floats.
pub unsafe extern "C-unwind" fn sinew_skin_check_influences(
    joints: *const u16,
    weights: *const f32,
    vertex_count: usize,
    joint_count: usize,
) -> sinew_status {
    finish((|| {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the callNone; the helpers check NULL, alignment and size.
        let (j, w) = unsafe {
            (
                slice(joints.cast::<[u16; 4]>(), vertex_count)?,
                slice(weights.cast::<[f32; 4]>(), vertex_count)?,
            )
        };
        skin::check_influences(j, w, joint_count)?;
        Ok(())
    })())
}

/// Implements `sinew_skin_check_influences8`.
///
/// # Safety
/// `joints` and `joints1` have `4 · vertex_count` indices, `weights` and
/// `weights1` as many floats.
pub unsafe extern "C-unwind" fn sinew_skin_check_influences8(
    joints: *const u16,
    weights: *const f32,
    joints1: *const u16,
    weights1: *const f32,
    vertex_count: usize,
    joint_count: usize,
) -> sinew_status {
    finish((|| {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call (all four); the helpers check NULL, alignment and size.
        let (j, w, j1, w1) = unsafe {
            (
                slice(joints.cast::<[u16; 4]>(), vertex_count)?,
                slice(weights.cast::<[f32; 4]>(), vertex_count)?,
                slice(joints1.cast::<[u16; 4]>(), vertex_count)?,
                slice(weights1.cast::<[f32; 4]>(), vertex_count)?,
            )
        };
        skin::check_influences8(j, w, j1, w1, joint_count)?;
        Ok(())
    })())
}

/// A strided export's skinning method, made from its palette.
type StridedKernel<T> = fn(&[T]) -> SkinMethod<'_>;

const LBS_STRIDED: StridedKernel<Mat3x4> = |palette| SkinMethod::Lbs { palette };

const DQS_STRIDED: StridedKernel<DualQuat> = |palette| SkinMethod::Dqs { palette };

/// Runs a strided kernel after viewing and overlap-checking its buffers:
/// with the four influences of `(joints, weights)`, or eight when
/// `(joints1, weights1)` holds slots 4-7 (two NULLs: none; checked against
/// the palette's length first).
///
/// # Safety
/// `palette` has `palette_len` entries, the influence arrays
/// `4 · vertex_count` (slots 4-7: when not NULL), `src` / `dst` have
/// `src_len` / `dst_len` floats, the layouts are readable.
#[allow(clippy::too_many_arguments)]
unsafe fn with_strided<C: bytemuck::Pod, T: bytemuck::Pod>(
    kernel: StridedKernel<T>,
    palette: *const C,
    palette_len: usize,
    (joints, weights): (*const u16, *const f32),
    (joints1, weights1): (*const u16, *const f32),
    vertex_count: usize,
    (src, src_len, src_layout): (*const f32, usize, *const sinew_vertex_layout),
    (dst, dst_len, dst_layout): (*mut f32, usize, *const sinew_vertex_layout),
) -> sinew_status {
    finish((|| {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call (all views below); the helpers check NULL, alignment and size.
        let (sl, dl) = unsafe { (read(src_layout)?, read(dst_layout)?) };
        // SAFETY: as above; the layouts just read give the strided buffers' lengths.
        let (p, j, w, second, src, dst) = unsafe {
            (
                slice(palette, palette_len)?,
                slice(joints.cast::<[u16; 4]>(), vertex_count)?,
                slice(weights.cast::<[f32; 4]>(), vertex_count)?,
                second_set(joints1, weights1, vertex_count)?,
                slice(src, src_len)?,
                slice_mut(dst, dst_len)?,
            )
        };
        let d = Span::of(dst);
        disjoint(d, &[Span::of(j), Span::of(w), Span::of(src), Span::of(p)])?;
        if let Some((j1, w1)) = second {
            disjoint(d, &[Span::of(j1), Span::of(w1)])?;
        }
        let palette: &[T] = bytemuck::cast_slice(p);
        let src = StridedVertices {
            data: src,
            stride: sl.stride as usize,
            position: sl.position as usize,
            normal: sinew_vertex_layout::attr(sl.normal),
            tangent: sinew_vertex_layout::attr(sl.tangent),
        };
        let dst = StridedVerticesMut {
            data: dst,
            stride: dl.stride as usize,
            position: dl.position as usize,
            normal: sinew_vertex_layout::attr(dl.normal),
            tangent: sinew_vertex_layout::attr(dl.tangent),
        };
        let influences = checked_influences((j, w), second, palette.len())?;
        SkinJob {
            method: kernel(palette),
            influences: &influences,
            attributes: SkinAttributes::Strided {
                input: src,
                output: dst,
            },
        }
        .run()?;
        Ok(())
    })())
}

/// Implements `sinew_skin_lbs_strided`.
///
/// # Safety
/// As `with_strided`.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C-unwind" fn sinew_skin_lbs_strided(
    palette: *const sinew_float3x4,
    palette_len: usize,
    joints: *const u16,
    weights: *const f32,
    vertex_count: usize,
    src: *const f32,
    src_len: usize,
    src_layout: *const sinew_vertex_layout,
    dst: *mut f32,
    dst_len: usize,
    dst_layout: *const sinew_vertex_layout,
) -> sinew_status {
    let (s, d) = ((src, src_len, src_layout), (dst, dst_len, dst_layout));
    let (four, none) = ((joints, weights), (ptr::null(), ptr::null()));
    // SAFETY: this function's `# Safety` contract makes each pointer valid for its
    // length during the callNone; the helpers check NULL, alignment and size.
    unsafe {
        with_strided(
            LBS_STRIDED,
            palette,
            palette_len,
            four,
            none,
            vertex_count,
            s,
            d,
        )
    }
}

/// Implements `sinew_skin_lbs_strided8`.
///
/// # Safety
/// As `with_strided`.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C-unwind" fn sinew_skin_lbs_strided8(
    palette: *const sinew_float3x4,
    palette_len: usize,
    joints: *const u16,
    weights: *const f32,
    joints1: *const u16,
    weights1: *const f32,
    vertex_count: usize,
    src: *const f32,
    src_len: usize,
    src_layout: *const sinew_vertex_layout,
    dst: *mut f32,
    dst_len: usize,
    dst_layout: *const sinew_vertex_layout,
) -> sinew_status {
    let (s, d) = ((src, src_len, src_layout), (dst, dst_len, dst_layout));
    let (first, second) = ((joints, weights), (joints1, weights1));
    // SAFETY: this function's `# Safety` contract makes each pointer valid for its
    // length during the callNone; the helpers check NULL, alignment and size.
    unsafe {
        with_strided(
            LBS_STRIDED,
            palette,
            palette_len,
            first,
            second,
            vertex_count,
            s,
            d,
        )
    }
}

/// Implements `sinew_skin_dqs_strided`.
///
/// # Safety
/// As `with_strided`.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C-unwind" fn sinew_skin_dqs_strided(
    palette: *const sinew_dual_quat,
    palette_len: usize,
    joints: *const u16,
    weights: *const f32,
    vertex_count: usize,
    src: *const f32,
    src_len: usize,
    src_layout: *const sinew_vertex_layout,
    dst: *mut f32,
    dst_len: usize,
    dst_layout: *const sinew_vertex_layout,
) -> sinew_status {
    let (s, d) = ((src, src_len, src_layout), (dst, dst_len, dst_layout));
    let (four, none) = ((joints, weights), (ptr::null(), ptr::null()));
    // SAFETY: this function's `# Safety` contract makes each pointer valid for its
    // length during the callNone; the helpers check NULL, alignment and size.
    unsafe {
        with_strided(
            DQS_STRIDED,
            palette,
            palette_len,
            four,
            none,
            vertex_count,
            s,
            d,
        )
    }
}

/// Implements `sinew_skin_dqs_strided8`.
///
/// # Safety
/// As `with_strided`.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C-unwind" fn sinew_skin_dqs_strided8(
    palette: *const sinew_dual_quat,
    palette_len: usize,
    joints: *const u16,
    weights: *const f32,
    joints1: *const u16,
    weights1: *const f32,
    vertex_count: usize,
    src: *const f32,
    src_len: usize,
    src_layout: *const sinew_vertex_layout,
    dst: *mut f32,
    dst_len: usize,
    dst_layout: *const sinew_vertex_layout,
) -> sinew_status {
    let (s, d) = ((src, src_len, src_layout), (dst, dst_len, dst_layout));
    let (first, second) = ((joints, weights), (joints1, weights1));
    // SAFETY: this function's `# Safety` contract makes each pointer valid for its
    // length during the callNone; the helpers check NULL, alignment and size.
    unsafe {
        with_strided(
            DQS_STRIDED,
            palette,
            palette_len,
            first,
            second,
            vertex_count,
            s,
            d,
        )
    }
}

// ---------------------------------------------------------------- mixing and transitions

fn mix_input(l: BlendLayer<'_>) -> MixInput<'_> {
    MixInput {
        pose: l.pose,
        weight: l.weight,
        joint_weights: l.joint_weights,
    }
}

/// Implements `sinew_pose_mix`.
///
/// # Safety
/// `units` has `unit_count` entries; `fatigue` and `idle` are NULL or one
/// entry; their pointers, `rest` and `out` are valid for their lengths.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C-unwind" fn sinew_pose_mix(
    units: *const sinew_blend_layer,
    unit_count: usize,
    fatigue: *const sinew_blend_layer,
    idle: *const sinew_blend_layer,
    rest: *const sinew_soa_transform,
    rest_len: usize,
    mode: u32,
    out: *mut sinew_soa_transform,
    out_len: usize,
) -> sinew_status {
    finish((|| {
        let mode = match mode {
            SINEW_MIX_QUATERNION => MixMode::Quaternion,
            SINEW_MIX_JOINT_ANGLES => MixMode::JointAngles,
            _ => return Err(sinew_status::InvalidArgument),
        };
        if unit_count > SINEW_MAX_MIX_UNITS {
            return Err(sinew_status::TooManyLayers);
        }
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the callNone; the helpers check NULL, alignment and size.
        let (src, rest, out) = unsafe {
            (
                slice(units, unit_count)?,
                slice(rest, rest_len)?,
                slice_mut(out, out_len)?,
            )
        };
        let o = Span::of(out);
        disjoint(o, &[Span::of(rest)])?;
        let mut inputs: heapless::Vec<MixInput<'_>, SINEW_MAX_MIX_UNITS> = heapless::Vec::new();
        for l in src {
            // SAFETY: this function's `# Safety` contract makes each pointer valid for its
            // length during the callNone; the helpers check NULL, alignment and size.
            let input = mix_input(unsafe { layer(l, o)? });
            inputs
                .push(input)
                .map_err(|_| sinew_status::TooManyLayers)?;
        }
        let optional = |p: *const sinew_blend_layer| -> Result<Option<MixInput<'_>>, sinew_status> {
            if p.is_null() {
                return Ok(None);
            }
            // SAFETY: the contract makes a non-NULL `p` point to one readable entry whose pointers
            // are valid for their lengths; `read` checks alignment.
            let l = unsafe { read(p)? };
            // SAFETY: the entry `read` above, under the same contract.
            Ok(Some(mix_input(unsafe { layer(&l, o)? })))
        };
        let job = MixJob {
            units: &inputs,
            fatigue: optional(fatigue)?,
            idle: optional(idle)?,
            rest: poses(rest),
            mode,
        };
        mix::mix(&job, poses_mut(out))?;
        Ok(())
    })())
}

/// Implements `sinew_mix_ramp_weight`.
///
/// # Safety
/// `weight` is writable.
pub unsafe extern "C-unwind" fn sinew_mix_ramp_weight(
    ramp: u32,
    ramp_frames: usize,
    frame: usize,
    length: usize,
    weight: *mut f32,
) -> sinew_status {
    finish((|| {
        out_param(weight)?;
        let r = match ramp {
            SINEW_RAMP_NONE => Ramp::None,
            SINEW_RAMP_LINEAR => Ramp::Linear {
                frames: ramp_frames,
            },
            SINEW_RAMP_SMOOTH => Ramp::Smooth {
                frames: ramp_frames,
            },
            _ => return Err(sinew_status::InvalidArgument),
        };
        if length == 0 || ramp_frames.saturating_mul(2) > length {
            return Err(sinew_status::InvalidArgument);
        }
        // SAFETY: `out_param` checked that the pointer is non-NULL and aligned; the contract makes
        // it writable.
        unsafe { write(weight, r.weight(frame, length)) };
        Ok(())
    })())
}

/// Implements `sinew_pose_crossfade`.
///
/// # Safety
/// Each pointer is valid for the length that follows it.
pub unsafe extern "C-unwind" fn sinew_pose_crossfade(
    from: *const sinew_soa_transform,
    to: *const sinew_soa_transform,
    len: usize,
    alpha: f32,
    out: *mut sinew_soa_transform,
    out_len: usize,
) -> sinew_status {
    finish((|| {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the callNone; the helpers check NULL, alignment and size.
        let (a, b, out) = unsafe { (slice(from, len)?, slice(to, len)?, slice_mut(out, out_len)?) };
        disjoint(Span::of(out), &[Span::of(a), Span::of(b)])?;
        mix::crossfade(poses(a), poses(b), alpha, poses_mut(out))?;
        Ok(())
    })())
}

/// Implements `sinew_inertialize_start`.
///
/// # Safety
/// `state` has `pose_len` writable blocks; the four poses have `pose_len`
/// blocks each; `longest` is NULL or writable.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C-unwind" fn sinew_inertialize_start(
    state: *mut sinew_inertial_block,
    old: *const sinew_soa_transform,
    old_prev: *const sinew_soa_transform,
    new: *const sinew_soa_transform,
    new_prev: *const sinew_soa_transform,
    pose_len: usize,
    dt: f32,
    duration: f32,
    longest: *mut f32,
) -> sinew_status {
    finish((|| {
        if !longest.is_null() {
            out_param(longest)?;
        }
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the callNone; the helpers check NULL, alignment and size.
        let (st, o, op, n, np) = unsafe {
            (
                slice_mut(state, pose_len)?,
                slice(old, pose_len)?,
                slice(old_prev, pose_len)?,
                slice(new, pose_len)?,
                slice(new_prev, pose_len)?,
            )
        };
        disjoint(
            Span::of(st),
            &[Span::of(o), Span::of(op), Span::of(n), Span::of(np)],
        )?;
        let job = mix::transition::SwitchJob {
            old: poses(o),
            old_prev: poses(op),
            new: poses(n),
            new_prev: poses(np),
            dt,
            duration,
        };
        let t = mix::transition::start(bytemuck::cast_slice_mut(st), &job)?;
        if !longest.is_null() {
            // SAFETY: `out_param` checked that the pointer is non-NULL and aligned; the contract
            // makes it writable.
            unsafe { write(longest, t) };
        }
        Ok(())
    })())
}

/// Implements `sinew_inertialize_apply`.
///
/// # Safety
/// `state` and `pose` have `pose_len` blocks each (`pose` writable).
pub unsafe extern "C-unwind" fn sinew_inertialize_apply(
    state: *const sinew_inertial_block,
    time: f32,
    decay: u32,
    half_life: f32,
    pose: *mut sinew_soa_transform,
    pose_len: usize,
) -> sinew_status {
    finish((|| {
        let decay = match decay {
            SINEW_DECAY_QUINTIC => Decay::Quintic,
            SINEW_DECAY_SPRING => Decay::Spring { half_life },
            _ => return Err(sinew_status::InvalidArgument),
        };
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the callNone; the helpers check NULL, alignment and size.
        let (st, p) = unsafe { (slice(state, pose_len)?, slice_mut(pose, pose_len)?) };
        disjoint(Span::of(p), &[Span::of(st)])?;
        mix::transition::apply(bytemuck::cast_slice(st), time, decay, poses_mut(p))?;
        Ok(())
    })())
}
