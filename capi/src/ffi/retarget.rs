//! Retargeting: build a retarget map from two loaded skeletons with the
//! built-in name tables (into caller bytes), load a `SINEWRTM` container
//! once, then per frame turn a source pose into a target pose.

use sinew_core::retarget::{self, correspond, MapOptions, RetargetMap};
use sinew_core::{Error, MAX_JOINTS, NO_PARENT};

use super::pose::{poses, poses_mut, sinew_soa_transform};
use super::ptr::{
    container, disjoint, handle_check, out_param, read, slice, slice_mut, write, Span,
};
use super::skeleton::{sinew_skeleton, view_skeleton};
use super::status::sinew_status;

const MAP_TAG: u64 = 0x5349_4E45_5752_544D; // "SINEWRTM"

/// A loaded retarget map: a caller-owned view of a validated `SINEWRTM`
/// container (written by `sinew_retarget_map_build` or
/// `sinew_core::retarget::write_map`). Filled by `sinew_retarget_map_load`;
/// the bytes must outlive the handle and stay unchanged.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sinew_retarget_map {
    /// The container bytes.
    pub data: *const u8,
    /// Their length in bytes.
    pub size: usize,
    /// Joints of the source skeleton (source poses have
    /// `(source_joint_count + 3) / 4` blocks).
    pub source_joint_count: u32,
    /// Joints of the target skeleton (output poses have
    /// `(target_joint_count + 3) / 4` blocks).
    pub target_joint_count: u32,
    /// Private: lets functions reject a handle that `_load` did not fill.
    pub check: u64,
}

fn map_check(h: &sinew_retarget_map) -> u64 {
    handle_check(
        h.data,
        h.size,
        h.target_joint_count,
        MAP_TAG ^ u64::from(h.source_joint_count).rotate_left(29),
    )
}

/// Re-views a handle's map (O(1): `_load` validated the bytes).
///
/// # Safety
/// `handle` is NULL or points to a `sinew_retarget_map`; if filled by
/// `sinew_retarget_map_load`, its bytes are still alive.
unsafe fn view_map<'a>(
    handle: *const sinew_retarget_map,
) -> Result<(RetargetMap<'a>, Span), sinew_status> {
    // SAFETY: this function's `# Safety` contract is the callee's, passed on unchanged.
    let h = unsafe { read(handle)? };
    if h.check != map_check(&h) {
        return Err(sinew_status::InvalidHandle);
    }
    // SAFETY: the check word proves `_load` validated `data`/`size`; the contract keeps those
    // bytes alive and unchanged while the handle is used.
    let bytes = unsafe { slice(h.data, h.size)? };
    let map = RetargetMap::from_validated_bytes(bytes).map_err(|_| sinew_status::InvalidHandle)?;
    if map.source_joint_count() != h.source_joint_count as usize
        || map.target_joint_count() != h.target_joint_count as usize
    {
        return Err(sinew_status::InvalidHandle);
    }
    Ok((map, Span::of(bytes)))
}

/// The correspondence of two skeletons by the built-in tables and equal
/// names, in a stack buffer of `MAX_JOINTS` entries.
fn correspondence(
    source: &sinew_core::Skeleton<'_>,
    target: &sinew_core::Skeleton<'_>,
) -> Result<([u16; MAX_JOINTS], usize), sinew_status> {
    let mut buf = [NO_PARENT; MAX_JOINTS];
    let n = target.joint_count();
    let slot = buf.get_mut(..n).ok_or(sinew_status::InvalidHandle)?;
    correspond(source, target, &[], slot)?;
    Ok((buf, n))
}

fn build_status(e: Error) -> sinew_status {
    match e {
        Error::CapacityExceeded { .. } => sinew_status::CapacityExceeded,
        e => e.into(),
    }
}

/// Builds the retarget map from `source` to `target` (loaded skeletons):
/// joints paired through the built-in name tables (CMU BVH, Mixamo, the
/// glTF sample characters, sinew's humanoid) and equal names, constants
/// derived from both rest poses, rest bone directions aligned when
/// `align_rest_directions` is not 0. Writes the container into `out`
/// (16-byte aligned) and its size to `*written`; with `out` NULL and
/// `out_len` 0 only `*written` is set (the size to allocate).
///
/// Errors: NULL_PARAMETER, INVALID_HANDLE, MISALIGNED, BUFFER_TOO_SMALL
/// (`*written` untouched), CAPACITY_EXCEEDED (a source path longer than
/// the core's `MAX_PATH`). Nothing is written on error.
///
/// # Safety
/// `source` and `target` are loaded handles; `out` is NULL or points to
/// `out_len` writable bytes; `written` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_retarget_map_build(
    source: *const sinew_skeleton,
    target: *const sinew_skeleton,
    align_rest_directions: u32,
    out: *mut u8,
    out_len: usize,
    written: *mut usize,
) -> sinew_status {
    boundary! {
        out_param(written)?;
        // SAFETY: this function's `# Safety` contract.
        let (s, t) = unsafe { (view_skeleton(source)?, view_skeleton(target)?) };
        let (buf, n) = correspondence(&s, &t)?;
        let corr = buf.get(..n).ok_or(sinew_status::InvalidHandle)?;
        let size = retarget::map_size(&s, &t, corr).map_err(build_status)?;
        if out.is_null() && out_len == 0 {
            // SAFETY: `out_param` checked the pointer; the contract makes it writable.
            unsafe { write(written, size) };
            return Ok(());
        }
        if out_len < size {
            return Err(sinew_status::BufferTooSmall);
        }
        // SAFETY: the contract makes `out` valid for `out_len` bytes; the helper checks NULL.
        let bytes = unsafe { slice_mut(out, out_len)? };
        let options = MapOptions {
            align_rest_directions: align_rest_directions != 0,
            ..MapOptions::default()
        };
        let info = retarget::write_map(&s, &t, corr, &options, bytes).map_err(build_status)?;
        // SAFETY: as above.
        unsafe { write(written, info.size) };
        Ok(())
    }
}

/// Validates a retarget map container once (counts, constants, paths,
/// masks) and fills `*out` with a zero-copy view of it. Same rules for
/// `bytes` as `sinew_skeleton_load`.
///
/// Errors: NULL_PARAMETER, MISALIGNED, INVALID_DATA, UNSUPPORTED_VERSION,
/// UNSUPPORTED_PLATFORM. `*out` is untouched on error.
///
/// # Safety
/// `bytes` points to `len` readable bytes that outlive the handle; `out`
/// is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_retarget_map_load(
    bytes: *const u8,
    len: usize,
    out: *mut sinew_retarget_map,
) -> sinew_status {
    boundary! {
        out_param(out)?;
        // SAFETY: this function's `# Safety` contract; the helper checks NULL, alignment, size.
        let data = unsafe { container(bytes, len)? };
        let map = RetargetMap::from_bytes(data).map_err(sinew_status::of_container)?;
        // Joint counts are at most MAX_JOINTS (checked by the view).
        let mut h = sinew_retarget_map {
            data: data.as_ptr(),
            size: data.len(),
            source_joint_count: map.source_joint_count() as u32,
            target_joint_count: map.target_joint_count() as u32,
            check: 0,
        };
        h.check = map_check(&h);
        // SAFETY: `out_param` checked the pointer; the contract makes it writable.
        unsafe { write(out, h) };
        Ok(())
    }
}

/// Checks that `source` and `target` are the skeletons `map` was built for
/// (joint counts, parents and names).
///
/// Errors: NULL_PARAMETER, INVALID_HANDLE, INVALID_ARGUMENT (a skeleton
/// that is not the map's).
///
/// # Safety
/// `map`, `source` and `target` are loaded handles.
#[no_mangle]
pub unsafe extern "C" fn sinew_retarget_map_check_skeletons(
    map: *const sinew_retarget_map,
    source: *const sinew_skeleton,
    target: *const sinew_skeleton,
) -> sinew_status {
    boundary! {
        // SAFETY: this function's `# Safety` contract.
        let ((m, _), s, t) = unsafe { (view_map(map)?, view_skeleton(source)?, view_skeleton(target)?) };
        m.check_skeletons(&s, &t)?;
        Ok(())
    }
}

/// Retargets one source pose (`source_len` blocks of the map's source
/// skeleton) into `out` (`out_len` blocks of its target skeleton): mapped
/// joints follow the source, unmapped ones keep the target's rest pose,
/// the root's translation is the source root's scaled by the hip-height
/// ratio. Allocation-free; every block of `out` is written.
///
/// Errors: NULL_PARAMETER, INVALID_HANDLE, BAD_LENGTH, OVERLAPPING_BUFFERS.
/// `out` is untouched on error.
///
/// # Safety
/// `map` is a loaded handle; `source` points to `source_len` readable
/// blocks and `out` to `out_len` writable ones.
#[no_mangle]
pub unsafe extern "C" fn sinew_retarget(
    map: *const sinew_retarget_map,
    source: *const sinew_soa_transform,
    source_len: usize,
    out: *mut sinew_soa_transform,
    out_len: usize,
) -> sinew_status {
    boundary! {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its length;
        // the helpers check NULL, alignment and size.
        let ((m, span), src, dst) =
            unsafe { (view_map(map)?, slice(source, source_len)?, slice_mut(out, out_len)?) };
        disjoint(Span::of(dst), &[Span::of(src), span])?;
        retarget::retarget(&m, poses(src), poses_mut(dst))?;
        Ok(())
    }
}
