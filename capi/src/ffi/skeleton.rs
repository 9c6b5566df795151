//! Skeletons: load, build, look up joints, local-to-model; the procedural
//! humanoid's skeleton.

use core::ffi::c_char;

use sinew_core::fk::{local_to_model, FkJob};
use sinew_core::procedural;
use sinew_core::skeleton::{build_with, JointDef, Skeleton};
use sinew_core::{Error, Mat4, Quat, Transform, Vec3};

use super::pose::{poses, sinew_float4x4, sinew_soa_transform};
use super::ptr::{
    container, disjoint, handle_check, out_param, read, slice, slice_mut, utf8, write, Span,
};
use super::status::sinew_status;

/// Bytes of the procedural humanoid's skeleton container.
pub const SINEW_HUMANOID_SKELETON_SIZE: usize = 8_496;

/// Joints of the procedural humanoid.
pub const SINEW_HUMANOID_JOINT_COUNT: usize = 70;

/// Parent index of a root joint in `sinew_skeleton::parents`.
pub const SINEW_NO_PARENT: u16 = 0xFFFF;

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
    /// Rest rotation quaternion `(x, y, z, w)`, unit length (squared length
    /// within 1e-3 of 1, else INVALID_ARGUMENT).
    pub rotation: [f32; 4],
    /// Rest scale.
    pub scale: [f32; 3],
}

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

pub(crate) const SKELETON_TAG: u64 = 0x5349_4E45_5753_4B4C; // "SINEWSKL"

/// Re-views a handle's skeleton (O(1): the bytes were validated by `_load`).
///
/// # Safety
/// `handle` is NULL or points to a `sinew_skeleton`; if filled by
/// `sinew_skeleton_load`, its bytes are still alive.
pub(crate) unsafe fn view_skeleton<'a>(
    handle: *const sinew_skeleton,
) -> Result<Skeleton<'a>, sinew_status> {
    // SAFETY: this function's `# Safety` contract is the callee's, passed on unchanged.
    let h = unsafe { read(handle)? };
    if h.check != handle_check(h.data, h.size, h.joint_count, SKELETON_TAG) {
        return Err(sinew_status::InvalidHandle);
    }
    // SAFETY: the handle's check word proves `_load` validated `data`/`size`; the contract keeps
    // those bytes alive and unchanged while the handle is used.
    let bytes = unsafe { slice(h.data, h.size)? };
    let s = Skeleton::from_validated_bytes(bytes).map_err(|_| sinew_status::InvalidHandle)?;
    if s.joint_count() != h.joint_count as usize {
        return Err(sinew_status::InvalidHandle);
    }
    Ok(s)
}

/// Validates a skeleton container once (header, layout, parent order,
/// finite floats, UTF-8 names; linear in its size) and fills `*out` with a
/// zero-copy view of it.
///
/// `bytes` must be 16-byte aligned and stay alive and unchanged while the
/// handle is used; trailing bytes after the container are ignored. Nothing
/// needs freeing.
///
/// Errors: NULL_PARAMETER (`out` or `bytes` NULL, or `len` 0), MISALIGNED,
/// INVALID_DATA (bad magic, truncated, corrupt, bad parents, NaN, bad
/// names), UNSUPPORTED_VERSION, UNSUPPORTED_PLATFORM (big-endian).
///
/// # Safety
/// `bytes` points to `len` readable bytes that outlive the handle;
/// `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_skeleton_load(
    bytes: *const u8,
    len: usize,
    out: *mut sinew_skeleton,
) -> sinew_status {
    boundary! {
        out_param(out)?;
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let data = unsafe { container(bytes, len)? };
        let s = Skeleton::from_bytes(data).map_err(sinew_status::of_container)?;
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
    }
}

/// Checks the joint array (pointers, UTF-8 names, no name overlapping
/// `out`) so that [`joint_def`] cannot fail afterwards.
///
/// # Safety
/// `joints` entries' name pointers are valid for their lengths.
pub(crate) unsafe fn check_joint_defs(
    joints: &[sinew_joint_def],
    out: Span,
) -> Result<usize, sinew_status> {
    if joints.is_empty() || joints.len() > sinew_core::MAX_JOINTS {
        return Err(sinew_status::InvalidArgument);
    }
    let mut names = 0usize;
    for d in joints {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let name = unsafe { slice(d.name.cast::<u8>(), d.name_len)? };
        disjoint(out, &[Span::of(name)])?;
        utf8(name)?;
        // The header promises unit rest rotations; within 1e-3 of unit
        // squared length leaves room for authoring rounding, and a zero or
        // NaN quaternion (which no normalisation can mend) is refused.
        let n2: f32 = d.rotation.iter().map(|c| c * c).sum();
        let unit = (n2 - 1.0).abs() <= 1e-3;
        if !unit {
            return Err(sinew_status::InvalidArgument);
        }
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
pub(crate) unsafe fn joint_def<'a>(d: &sinew_joint_def) -> JointDef<'a> {
    // SAFETY: `check_joint_defs` accepted this entry's name pointer and length under the same
    // contract.
    let name = unsafe { slice(d.name.cast::<u8>(), d.name_len) }.unwrap_or(&[]);
    let [tx, ty, tz] = d.translation;
    let [rx, ry, rz, rw] = d.rotation;
    let [sx, sy, sz] = d.scale;
    JointDef {
        name: core::str::from_utf8(name).unwrap_or(""),
        parent: (d.parent != sinew_core::NO_PARENT).then_some(usize::from(d.parent)),
        rest: Transform {
            translation: Vec3::new(tx, ty, tz),
            rotation: Quat::new(rx, ry, rz, rw),
            scale: Vec3::new(sx, sy, sz),
        },
    }
}

/// Builder errors are the caller's arguments, not stored data.
pub(crate) fn build_status(e: Error) -> sinew_status {
    match sinew_status::from(e) {
        sinew_status::InvalidData => sinew_status::InvalidArgument,
        s => s,
    }
}

/// Writes the bytes `sinew_skeleton_build` needs for these `count` joints.
///
/// Errors: NULL_PARAMETER, INVALID_ARGUMENT (no joints, more than 1024,
/// a name that is not UTF-8).
///
/// # Safety
/// `joints` has `count` entries whose names are valid; `size` is writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_skeleton_build_size(
    joints: *const sinew_joint_def,
    count: usize,
    size: *mut usize,
) -> sinew_status {
    boundary! {
        out_param(size)?;
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let defs = unsafe { slice(joints, count)? };
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let names = unsafe { check_joint_defs(defs, Span(0, 0))? };
        let total = sinew_core::skeleton::container_size(defs.len(), names);
        // SAFETY: `out_param` checked that the pointer is non-NULL and aligned; the contract makes
        // it writable.
        unsafe { write(size, total) };
        Ok(())
    }
}

/// Builds a skeleton container from `count` joints in any order (each
/// parent an index into the same array, or `SINEW_NO_PARENT`) into `out`
/// (16-byte aligned, `sinew_skeleton_build_size` bytes); the container
/// stores joints depth-first, parents before children, with inverse bind
/// matrices from the rest pose. When `remap` is not NULL it receives, for
/// each input joint, its index in the container (`remap_len == count`).
/// Load the result with `sinew_skeleton_load`.
///
/// Errors: NULL_PARAMETER, INVALID_ARGUMENT (no joints, too many, a parent
/// out of range, on itself or in a cycle, a NaN rest value, a name that is
/// not UTF-8), SINGULAR_TRANSFORM (a zero scale; `out` then holds a partial
/// container: discard it), BAD_LENGTH (`remap_len`), BUFFER_TOO_SMALL,
/// MISALIGNED, OVERLAPPING_BUFFERS.
///
/// # Safety
/// `joints` has `count` entries whose names are valid; `out` has `out_len`
/// writable bytes; `remap` is NULL or has `remap_len` writable entries;
/// `written` is writable.
#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn sinew_skeleton_build(
    joints: *const sinew_joint_def,
    count: usize,
    out: *mut u8,
    out_len: usize,
    remap: *mut u16,
    remap_len: usize,
    written: *mut usize,
) -> sinew_status {
    boundary! {
        out_param(written)?;
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let (defs, out) = unsafe { (slice(joints, count)?, slice_mut(out, out_len)?) };
        let o = Span::of(out);
        disjoint(o, &[Span::of(defs)])?;
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        unsafe { check_joint_defs(defs, o)? };
        let remap = if remap.is_null() && remap_len == 0 {
            None
        } else {
            // SAFETY: this function's `# Safety` contract makes each pointer valid for its
            // length during the call; the helpers check NULL, alignment and size.
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
    }
}

/// Finds the first joint whose name is the `name_len` UTF-8 bytes at
/// `name` (no NUL needed) and writes its index to `*joint`.
///
/// Errors: NULL_PARAMETER, INVALID_HANDLE, INVALID_ARGUMENT (not UTF-8),
/// NOT_FOUND.
///
/// # Safety
/// `skeleton` is a loaded handle; `name` points to `name_len` bytes;
/// `joint` is writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_skeleton_find_joint(
    skeleton: *const sinew_skeleton,
    name: *const c_char,
    name_len: usize,
    joint: *mut usize,
) -> sinew_status {
    boundary! {
        out_param(joint)?;
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let s = unsafe { view_skeleton(skeleton)? };
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let name = utf8(unsafe { slice(name.cast::<u8>(), name_len)? })?;
        let j = s.find_joint(name).ok_or(sinew_status::NotFound)?;
        // SAFETY: `out_param` checked that the pointer is non-NULL and aligned; the contract makes
        // it writable.
        unsafe { write(joint, j) };
        Ok(())
    }
}

/// Writes a pointer to joint `joint`'s name (UTF-8, not NUL-terminated,
/// inside the container's bytes) and its length in bytes.
///
/// Errors: NULL_PARAMETER, INVALID_HANDLE, OUT_OF_RANGE.
///
/// # Safety
/// `skeleton` is a loaded handle; `name` and `name_len` are writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_skeleton_joint_name(
    skeleton: *const sinew_skeleton,
    joint: usize,
    name: *mut *const c_char,
    name_len: *mut usize,
) -> sinew_status {
    boundary! {
        out_param(name)?;
        out_param(name_len)?;
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let s = unsafe { view_skeleton(skeleton)? };
        let n = s.joint_name(joint).ok_or(sinew_status::OutOfRange)?;
        // SAFETY: `out_param` checked that the pointer is non-NULL and aligned; the contract makes
        // it writable.
        unsafe {
            write(name, n.as_ptr().cast());
            write(name_len, n.len());
        }
        Ok(())
    }
}

/// Forward kinematics: writes `out[j] = out[parent(j)] * local(j)` for every
/// joint (roots: `root * local(j)`, identity when `root` is NULL).
///
/// `local` is `skeleton->soa_count` blocks; `out` holds
/// `skeleton->joint_count` column-major matrices.
///
/// Errors: NULL_PARAMETER, INVALID_HANDLE, MISALIGNED, BAD_LENGTH,
/// OVERLAPPING_BUFFERS. `out` is untouched on error.
///
/// # Safety
/// As `sinew_skeleton_local_to_model_range`.
#[no_mangle]
pub unsafe extern "C" fn sinew_skeleton_local_to_model(
    skeleton: *const sinew_skeleton,
    local: *const sinew_soa_transform,
    local_len: usize,
    root: *const sinew_float4x4,
    out: *mut sinew_float4x4,
    out_len: usize,
) -> sinew_status {
    boundary!(or sinew_status::Panic => {
        // SAFETY: the callee's contract, passed on unchanged; a bad handle is reported by the callee.
        let end = unsafe { read(skeleton) }.map_or(0, |h| h.joint_count as usize);
        // SAFETY: this function's `# Safety` contract is the callee's, passed on unchanged.
        unsafe {
            sinew_skeleton_local_to_model_range(skeleton, local, local_len, root, 0, end, out, out_len)
        }
    })
}

/// Forward kinematics over joints `first .. end` only (e.g. a subtree after
/// IK): joints before `first` are read from `out` as already computed,
/// joints from `end` on are not written.
///
/// Errors: as `sinew_skeleton_local_to_model`, plus OUT_OF_RANGE
/// (`first > end` or `end > joint_count`).
///
/// # Safety
/// `skeleton` is a loaded handle; `local` has `local_len` blocks; `root` is
/// NULL or one matrix; `out` has `out_len` writable matrices.
#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn sinew_skeleton_local_to_model_range(
    skeleton: *const sinew_skeleton,
    local: *const sinew_soa_transform,
    local_len: usize,
    root: *const sinew_float4x4,
    first: usize,
    end: usize,
    out: *mut sinew_float4x4,
    out_len: usize,
) -> sinew_status {
    boundary! {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let (s, local, out) = unsafe {
            (
                view_skeleton(skeleton)?,
                slice(local, local_len)?,
                slice_mut(out, out_len)?,
            )
        };
        let root_span = Span::value(root);
        let root: Option<Mat4> = if root.is_null() {
            None
        } else {
            // SAFETY: this function's `# Safety` contract makes each pointer valid for its
            // length during the call; the helpers check NULL, alignment and size.
            Some(bytemuck::cast(unsafe { read(root)? }))
        };
        disjoint(
            Span::of(out),
            &[Span::of(local), Span::of(s.parents()), root_span],
        )?;
        let mut job = FkJob::new(&s, poses(local)).range(first, end);
        if let Some(r) = root.as_ref() {
            job = job.with_root(r);
        }
        local_to_model(&job, bytemuck::cast_slice_mut(out))?;
        Ok(())
    }
}

/// Writes the procedural 70-joint humanoid's skeleton container
/// (`SINEW_HUMANOID_SKELETON_SIZE` bytes, 16-byte aligned) into `out` and
/// the bytes written to `*written`; load it with `sinew_skeleton_load`.
///
/// Errors: NULL_PARAMETER, BUFFER_TOO_SMALL, MISALIGNED.
///
/// # Safety
/// `out` has `out_len` writable bytes; `written` is writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_humanoid_skeleton_write(
    out: *mut u8,
    out_len: usize,
    written: *mut usize,
) -> sinew_status {
    boundary! {
        out_param(written)?;
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let out = unsafe { slice_mut(out, out_len)? };
        let n = procedural::write_humanoid_skeleton(out)?;
        // SAFETY: `out_param` checked that the pointer is non-NULL and aligned; the contract makes
        // it writable.
        unsafe { write(written, n) };
        Ok(())
    }
}

const _: () = {
    assert!(SINEW_HUMANOID_SKELETON_SIZE == procedural::HUMANOID_SKELETON_BYTES);
    assert!(SINEW_HUMANOID_JOINT_COUNT == procedural::HUMANOID_JOINT_COUNT);
    assert!(SINEW_NO_PARENT == sinew_core::NO_PARENT);
};
