//! C pointers to slices and values: every check (NULL, alignment, size,
//! overlap) the exports make before they touch caller memory.

use core::mem::{align_of, size_of};

use super::status::sinew_status;

pub(crate) type Status = Result<(), sinew_status>;

/// Views `len` elements at `ptr` (NULL is fine for `len == 0`).
///
/// # Safety
/// When `len > 0`, `ptr` must point to `len` initialised `T` that stay
/// valid and unmodified for `'a`.
pub(crate) unsafe fn slice<'a, T>(ptr: *const T, len: usize) -> Result<&'a [T], sinew_status> {
    if len == 0 {
        return Ok(&[]);
    }
    check_ptr(ptr, len)?;
    // SAFETY: non-NULL, aligned and `len * size_of::<T>()` within `isize` (checked above); validity
    // and lifetime are the caller's contract.
    Ok(unsafe { core::slice::from_raw_parts(ptr, len) })
}

/// `slice` of an optional array: NULL views no elements.
///
/// # Safety
/// A non-NULL `ptr` is as for `slice`.
pub(crate) unsafe fn slice_or_empty<'a, T>(
    ptr: *const T,
    len: usize,
) -> Result<&'a [T], sinew_status> {
    if ptr.is_null() {
        return Ok(&[]);
    }
    // SAFETY: the caller's contract for a non-NULL `ptr`.
    unsafe { slice(ptr, len) }
}

/// Mutable twin of `slice`.
///
/// # Safety
/// When `len > 0`, `ptr` must point to `len` writable `T` that nothing
/// else reads or writes for `'a` (overlaps with inputs are checked by the
/// callers with `disjoint`).
pub(crate) unsafe fn slice_mut<'a, T>(
    ptr: *mut T,
    len: usize,
) -> Result<&'a mut [T], sinew_status> {
    if len == 0 {
        return Ok(&mut []);
    }
    check_ptr(ptr, len)?;
    // SAFETY: as in `slice`; the contract also gives this call exclusive access to the range.
    Ok(unsafe { core::slice::from_raw_parts_mut(ptr, len) })
}

pub(crate) fn check_ptr<T>(ptr: *const T, len: usize) -> Status {
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
pub(crate) unsafe fn read<T: Copy>(ptr: *const T) -> Result<T, sinew_status> {
    check_ptr(ptr, 1)?;
    // SAFETY: non-NULL and aligned (checked above); the contract makes `*ptr` an initialised `T`.
    Ok(unsafe { ptr.read() })
}

/// Checks an out-parameter before any work, so that it is written only on success.
pub(crate) fn out_param<T>(ptr: *mut T) -> Status {
    check_ptr(ptr.cast_const(), 1)
}

/// Writes an out-parameter checked by `out_param`.
///
/// # Safety
/// `ptr` must be valid for a write of `T`.
pub(crate) unsafe fn write<T>(ptr: *mut T, value: T) {
    // SAFETY: non-NULL and aligned (checked by `out_param`); the contract makes `*ptr` writable.
    unsafe { ptr.write(value) }
}

/// A byte range of a buffer, for overlap checks.
#[derive(Clone, Copy)]
pub(crate) struct Span(pub(crate) usize, pub(crate) usize);

impl Span {
    pub(crate) fn of<T>(s: &[T]) -> Span {
        let start = s.as_ptr() as usize;
        Span(start, start + core::mem::size_of_val(s))
    }

    /// The bytes of one value at `p` (empty for NULL).
    pub(crate) fn value<T>(p: *const T) -> Span {
        let start = p as usize;
        if p.is_null() {
            Span(0, 0)
        } else {
            Span(start, start + core::mem::size_of::<T>())
        }
    }
}

/// `SINEW_STATUS_OVERLAPPING_BUFFERS` when `out` shares a byte with any input.
pub(crate) fn disjoint(out: Span, inputs: &[Span]) -> Status {
    let hit = inputs
        .iter()
        .any(|i| out.0 < out.1 && i.0 < i.1 && out.0 < i.1 && i.0 < out.1);
    if hit {
        Err(sinew_status::OverlappingBuffers)
    } else {
        Ok(())
    }
}

pub(crate) fn handle_check(data: *const u8, size: usize, count: u32, magic: u64) -> u64 {
    let mut h = magic ^ (data as usize as u64).rotate_left(17);
    h = h.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ size as u64;
    h = h.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ u64::from(count);
    h.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// The bytes a `_load` function is given: NULL or empty is NULL_PARAMETER.
///
/// # Safety
/// As [`fn@slice`].
pub(crate) unsafe fn container<'a>(bytes: *const u8, len: usize) -> Result<&'a [u8], sinew_status> {
    // SAFETY: this function's `# Safety` contract is the callee's, passed on unchanged.
    let data = unsafe { slice(bytes, len)? };
    if data.is_empty() {
        return Err(sinew_status::NullParameter);
    }
    Ok(data)
}

pub(crate) fn utf8(bytes: &[u8]) -> Result<&str, sinew_status> {
    core::str::from_utf8(bytes).map_err(|_| sinew_status::InvalidArgument)
}
