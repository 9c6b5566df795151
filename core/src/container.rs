//! What the three containers (skeleton, raw clip, compressed clip) check
//! and read the same way: the 16-byte header preamble and little-endian
//! words.

use crate::error::Error;

/// `T` placed at a 16-byte aligned address: the storage a container
/// (skeleton, clip, compressed clip, mesh) is viewed from, since views read
/// it in place and return [`Error::Misaligned`] otherwise.
///
/// On the stack or in a `static`, around a byte array:
///
/// ```
/// use sinew_core::procedural::{self, HUMANOID_SKELETON_BYTES};
/// use sinew_core::{Align16, Skeleton};
///
/// let mut bytes = Align16([0; HUMANOID_SKELETON_BYTES]);
/// let len = procedural::write_humanoid_skeleton(&mut bytes.0)?;
/// let skeleton = Skeleton::from_bytes(&bytes.0[..len])?;
/// assert_eq!(skeleton.joint_count(), procedural::HUMANOID_JOINT_COUNT);
///
/// // A container in flash or read-only data keeps its alignment the same way,
/// // e.g. `&Align16(*include_bytes!("humanoid.sinewskl"))`; the unsized form
/// // `Align16<[u8]>` takes any length.
/// static ZEROS: &Align16<[u8]> = &Align16([0; 64]);
/// assert_eq!(ZEROS.0.as_ptr().align_offset(16), 0);
/// # Ok::<(), sinew_core::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C, align(16))]
pub struct Align16<T: ?Sized>(pub T);

/// The little-endian `u32` at byte `at` (0 when it lies outside `bytes`;
/// callers read only inside a header whose length they checked).
#[inline]
pub(crate) fn le_u32(bytes: &[u8], at: usize) -> u32 {
    match bytes.get(at..at + 4) {
        Some(&[a, b, c, d]) => u32::from_le_bytes([a, b, c, d]),
        _ => 0,
    }
}

/// [`Error::Misaligned`] unless `ptr` is 16-byte aligned.
pub(crate) fn check_aligned(ptr: *const u8) -> Result<(), Error> {
    if ptr.align_offset(16) == 0 {
        Ok(())
    } else {
        Err(Error::Misaligned)
    }
}

/// The checks every container opens with, in this order: a little-endian
/// platform, at least `header` bytes, the magic, the version (at byte 8),
/// 16-byte alignment.
///
/// # Errors
/// [`Error::UnsupportedPlatform`], [`Error::Truncated`], [`Error::BadMagic`],
/// [`Error::UnsupportedVersion`], [`Error::Misaligned`].
pub(crate) fn check_preamble(
    bytes: &[u8],
    magic: &[u8; 8],
    version: u32,
    header: usize,
) -> Result<(), Error> {
    if cfg!(target_endian = "big") {
        return Err(Error::UnsupportedPlatform);
    }
    if bytes.len() < header {
        return Err(Error::Truncated {
            needed: header,
            actual: bytes.len(),
        });
    }
    if bytes.get(..8) != Some(magic.as_slice()) {
        return Err(Error::BadMagic);
    }
    let found = le_u32(bytes, 8);
    if found != version {
        return Err(Error::UnsupportedVersion { found });
    }
    check_aligned(bytes.as_ptr())
}
