//! Raw and compressed clips: load, write, sample; the procedural gaits.

use core::ffi::c_char;

use sinew_core::clip::{
    checked_clip_container_size, clip_container_size, write_container_with, RawClip, TimeMode,
};
use sinew_core::compressed::{CompressedClip, Defaults, PlaybackCache, PlaybackState};
use sinew_core::procedural::{self, Gait};
use sinew_core::skeleton::Skeleton;

use super::pose::{poses, poses_mut, sinew_soa_transform};
use super::ptr::{
    container, disjoint, handle_check, out_param, read, slice, slice_mut, utf8, write, Span,
};
use super::skeleton::{sinew_skeleton, view_skeleton};
use super::status::sinew_status;

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
    /// Blocks of a playback cache for this clip that decodes ahead (three
    /// decoded frames of its animated tracks; at most `3 * soa_count`).
    pub cache_blocks: u32,
    /// The fewest blocks a playback cache for this clip takes (two frames).
    pub min_cache_blocks: u32,
    /// Frames per second.
    pub sample_rate: f32,
    /// `(frame_count - 1) / sample_rate` seconds.
    pub duration: f32,
    /// Private: lets functions reject a handle that `_load` did not fill.
    pub check: u64,
}

pub(crate) const CLIP_TAG: u64 = 0x5349_4E45_5743_4C50; // "SINEWCLP"

pub(crate) const COMPRESSED_TAG: u64 = 0x5349_4E45_5743_4D50; // "SINEWCMP"

/// The check word of a clip handle: every field `sinew_clip_load` fills.
/// The clip handles' counts and rates mixed into one word for their checks.
pub(crate) fn timing_word(
    soa_count: u32,
    frame_count: u32,
    sample_rate: f32,
    duration: f32,
) -> u64 {
    let shape = u64::from(soa_count) << 32 | u64::from(frame_count);
    let rates = u64::from(sample_rate.to_bits()) << 32 | u64::from(duration.to_bits());
    shape.rotate_left(7) ^ rates.rotate_left(29)
}

pub(crate) fn clip_check(h: &sinew_clip) -> u64 {
    let timing = timing_word(h.soa_count, h.frame_count, h.sample_rate, h.duration);
    handle_check(h.data, h.size, 0, CLIP_TAG ^ timing)
}

/// Re-views a handle's clip (O(1)).
///
/// # Safety
/// As `skeleton`.
pub(crate) unsafe fn view_clip<'a>(handle: *const sinew_clip) -> Result<RawClip<'a>, sinew_status> {
    // SAFETY: this function's `# Safety` contract is the callee's, passed on unchanged.
    let h = unsafe { read(handle)? };
    if h.check != clip_check(&h) {
        return Err(sinew_status::InvalidHandle);
    }
    // SAFETY: the handle's check word proves `_load` validated `data`/`size`; the contract keeps
    // those bytes alive and unchanged while the handle is used.
    let bytes = unsafe { slice(h.data, h.size)? };
    RawClip::from_validated_bytes(bytes).map_err(|_| sinew_status::InvalidHandle)
}

/// A `uint32_t` time mode.
pub(crate) fn time_mode(mode: u32) -> Result<TimeMode, sinew_status> {
    match mode {
        SINEW_TIME_LOOP => Ok(TimeMode::Loop),
        SINEW_TIME_CLAMP => Ok(TimeMode::Clamp),
        _ => Err(sinew_status::InvalidArgument),
    }
}

pub(crate) fn gait(g: u32) -> Result<Gait, sinew_status> {
    match g {
        SINEW_GAIT_WALK => Ok(Gait::Walk),
        SINEW_GAIT_JOG => Ok(Gait::Jog),
        SINEW_GAIT_RUN => Ok(Gait::Run),
        _ => Err(sinew_status::InvalidArgument),
    }
}

/// Validates a raw clip container once (every key finite; linear in its
/// size) and fills `*out` with a zero-copy view of it. Same rules for
/// `bytes` as `sinew_skeleton_load`.
///
/// Errors: NULL_PARAMETER, MISALIGNED, INVALID_DATA, UNSUPPORTED_VERSION,
/// UNSUPPORTED_PLATFORM.
///
/// # Safety
/// As `sinew_skeleton_load`.
#[no_mangle]
pub unsafe extern "C" fn sinew_clip_load(
    bytes: *const u8,
    len: usize,
    out: *mut sinew_clip,
) -> sinew_status {
    boundary! {
        out_param(out)?;
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let data = unsafe { container(bytes, len)? };
        let c = RawClip::from_bytes(data).map_err(sinew_status::of_container)?;
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
    }
}

/// Writes the bytes `sinew_clip_write` needs for a clip of `frame_count`
/// frames of `soa_count` blocks and a `name_len`-byte name.
///
/// Errors: NULL_PARAMETER, INVALID_ARGUMENT (over 4 GiB).
///
/// # Safety
/// `size` is writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_clip_container_size(
    soa_count: usize,
    frame_count: usize,
    name_len: usize,
    size: *mut usize,
) -> sinew_status {
    boundary! {
        out_param(size)?;
        let total = checked_clip_container_size(soa_count, frame_count, name_len)
            .ok_or(sinew_status::InvalidArgument)?;
        // SAFETY: `out_param` checked that the pointer is non-NULL and aligned; the contract makes
        // it writable.
        unsafe { write(size, total) };
        Ok(())
    }
}

/// Writes a raw clip container from `keys_len / soa_count` frames of
/// `soa_count` blocks sampled at `sample_rate` frames per second, named by
/// `name_len` UTF-8 bytes, into `out` (16-byte aligned), and the bytes
/// written to `*written`. For a looping clip the last frame should repeat
/// the first.
///
/// Errors: NULL_PARAMETER, INVALID_ARGUMENT (rate not finite and positive,
/// no keys, name not UTF-8), BAD_LENGTH (`keys_len` not a multiple of
/// `soa_count`), INVALID_DATA (a NaN key, too many joints),
/// BUFFER_TOO_SMALL, MISALIGNED, OVERLAPPING_BUFFERS.
///
/// # Safety
/// `keys` has `keys_len` blocks; `name` has `name_len` bytes; `out` has
/// `out_len` writable bytes; `written` is writable.
#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn sinew_clip_write(
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
    boundary! {
        out_param(written)?;
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
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
    }
}

/// Samples `clip` at `time` seconds into `out` (`clip->soa_count` blocks):
/// the two bracketing frames are found in O(1) (no cursor, so a random seek
/// costs what sequential playback costs), translations and scales are
/// lerped, rotations nlerped with sign alignment. `mode` is
/// `SINEW_TIME_LOOP` or `SINEW_TIME_CLAMP`.
///
/// Errors: NULL_PARAMETER, INVALID_HANDLE, INVALID_ARGUMENT (NaN or
/// infinite time, unknown mode), MISALIGNED, BAD_LENGTH,
/// OVERLAPPING_BUFFERS.
///
/// # Safety
/// `clip` is a loaded handle; `out` has `out_len` writable blocks.
#[no_mangle]
pub unsafe extern "C" fn sinew_clip_sample(
    clip: *const sinew_clip,
    time: f32,
    mode: u32,
    out: *mut sinew_soa_transform,
    out_len: usize,
) -> sinew_status {
    boundary! {
        let mode = time_mode(mode)?;
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let (c, out) = unsafe { (view_clip(clip)?, slice_mut(out, out_len)?) };
        disjoint(Span::of(out), &[keys_span(&c)])?;
        c.sample(time, mode, poses_mut(out))?;
        Ok(())
    }
}

/// The bytes of a clip's keys.
pub(crate) fn keys_span(c: &RawClip<'_>) -> Span {
    match (c.frame(0), c.frame(c.frame_count().saturating_sub(1))) {
        (Some(first), Some(last)) => Span(Span::of(first).0, Span::of(last).1),
        _ => Span(0, 0),
    }
}

/// The rest pose a compressed clip may need: `None` for NULL, else the
/// checked slice.
///
/// # Safety
/// `rest` is NULL or valid for `rest_len` blocks.
unsafe fn optional_rest<'a>(
    rest: *const sinew_soa_transform,
    rest_len: usize,
) -> Result<Option<&'a [sinew_soa_transform]>, sinew_status> {
    if rest.is_null() {
        return Ok(None);
    }
    // SAFETY: the contract; `slice` checks alignment and size.
    Ok(Some(unsafe { slice(rest, rest_len)? }))
}

pub(crate) fn compressed_check(h: &sinew_compressed_clip) -> u64 {
    let timing = timing_word(h.soa_count, h.frame_count, h.sample_rate, h.duration);
    let flags = u64::from(h.needs_rest_pose) << 32 | u64::from(h.joint_count);
    let cache = u64::from(h.cache_blocks) << 32 | u64::from(h.min_cache_blocks);
    handle_check(
        h.data,
        h.size,
        0,
        COMPRESSED_TAG ^ timing ^ flags.rotate_left(43) ^ cache.rotate_left(17),
    )
}

/// Re-views a handle's compressed clip (O(1): `_load` validated the bytes).
///
/// # Safety
/// `handle` is NULL or points to a `sinew_compressed_clip`; if filled by
/// `sinew_compressed_clip_load`, its bytes are still alive.
pub(crate) unsafe fn view_compressed<'a>(
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
    let c = CompressedClip::from_validated_bytes(bytes).map_err(|_| sinew_status::InvalidHandle)?;
    Ok((c, Span::of(bytes)))
}

/// Validates a compressed clip container (`SINEWCMP`, written by
/// `sinew compress`) once (linear in its segments times animated joints)
/// and fills `*out` with a zero-copy view of it. Same rules for `bytes` as
/// `sinew_skeleton_load`.
///
/// Errors: NULL_PARAMETER, MISALIGNED, INVALID_DATA, UNSUPPORTED_VERSION,
/// UNSUPPORTED_PLATFORM.
///
/// # Safety
/// As `sinew_skeleton_load`.
#[no_mangle]
pub unsafe extern "C" fn sinew_compressed_clip_load(
    bytes: *const u8,
    len: usize,
    out: *mut sinew_compressed_clip,
) -> sinew_status {
    boundary! {
        out_param(out)?;
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let data = unsafe { container(bytes, len)? };
        let c = CompressedClip::from_bytes(data).map_err(sinew_status::of_container)?;
        let mut handle = sinew_compressed_clip {
            data: data.as_ptr(),
            size: data.len(),
            joint_count: c.joint_count() as u32,
            soa_count: c.soa_count() as u32,
            frame_count: c.frame_count() as u32,
            needs_rest_pose: u32::from(c.defaults() == Defaults::RestPose),
            cache_blocks: c.cache_blocks() as u32,
            min_cache_blocks: c.min_cache_blocks() as u32,
            sample_rate: c.sample_rate(),
            duration: c.duration(),
            check: 0,
        };
        handle.check = compressed_check(&handle);
        // SAFETY: `out_param` checked that the pointer is non-NULL and aligned; the contract makes
        // it writable.
        unsafe { write(out, handle) };
        Ok(())
    }
}

/// Samples `clip` at `time` seconds into `out` (`clip->soa_count` blocks),
/// decoding the two bracketing frames straight into SoA lanes: a random
/// seek costs what sequential playback costs. `mode` is `SINEW_TIME_LOOP`
/// or `SINEW_TIME_CLAMP`. `rest` is the skeleton's rest pose
/// (`clip->soa_count` blocks) when `clip->needs_rest_pose` is 1, and may be
/// NULL (and is not read) when it is 0.
///
/// Errors: NULL_PARAMETER (also: no `rest` for a clip that needs it),
/// INVALID_HANDLE, INVALID_ARGUMENT (NaN or infinite time, unknown mode),
/// MISALIGNED, BAD_LENGTH (`out_len` or `rest_len` not `clip->soa_count`),
/// OVERLAPPING_BUFFERS.
///
/// # Safety
/// `clip` is a loaded handle; `rest` is NULL or has `rest_len` blocks;
/// `out` has `out_len` writable blocks.
#[no_mangle]
pub unsafe extern "C" fn sinew_compressed_clip_sample(
    clip: *const sinew_compressed_clip,
    time: f32,
    mode: u32,
    rest: *const sinew_soa_transform,
    rest_len: usize,
    out: *mut sinew_soa_transform,
    out_len: usize,
) -> sinew_status {
    boundary! {
        let mode = time_mode(mode)?;
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let ((c, bytes), out) = unsafe { (view_compressed(clip)?, slice_mut(out, out_len)?) };
        // SAFETY: this function's `# Safety` contract makes `rest` NULL or valid for
        // `rest_len` blocks during the call.
        let rest = unsafe { optional_rest(rest, rest_len)? };
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
    }
}

/// What a playback cache remembers between `sinew_compressed_clip_sample_cached`
/// calls (private words). Zero-initialise it (`sinew_playback_cache c = {0};`):
/// zeros are an empty cache. One per playing instance, next to its buffer of
/// `clip->cache_blocks` blocks (at least `clip->min_cache_blocks`;
/// `3 * clip->soa_count` fit any clip of the skeleton).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct sinew_playback_cache {
    /// Private state.
    pub words: [u64; 8],
}

// The header spells the word count out (cbindgen cannot evaluate the core's
// constant).
const _: () = assert!(PlaybackState::WORDS == 8);

/// Samples `clip` at `time` seconds into `out` as
/// `sinew_compressed_clip_sample` does (the same bits), decoding only the
/// key frames the cache does not already hold: at 60 Hz on a 30 Hz clip,
/// sequential playback decodes each key frame once. `blocks` is the
/// cache's memory, `blocks_len >= clip->min_cache_blocks` blocks kept with
/// `*cache` between calls (`clip->cache_blocks` let sequential playback
/// decode two key frames per pass of the decoder); `*cache` is updated. A
/// cache used with another clip, or with other memory, starts over (exact,
/// merely uncached).
///
/// Errors: those of `sinew_compressed_clip_sample`; NULL_PARAMETER for
/// `cache` or `blocks`; BAD_LENGTH for `blocks_len` below
/// `clip->min_cache_blocks`; OVERLAPPING_BUFFERS when `out`, `blocks` and
/// `*cache` share a byte with each other, the clip or `rest`. On error
/// neither `out` nor the cache changes.
///
/// # Safety
/// As `sinew_compressed_clip_sample`; `cache` points to a
/// `sinew_playback_cache`; `blocks` has `blocks_len` writable blocks.
#[no_mangle]
pub unsafe extern "C" fn sinew_compressed_clip_sample_cached(
    clip: *const sinew_compressed_clip,
    time: f32,
    mode: u32,
    rest: *const sinew_soa_transform,
    rest_len: usize,
    cache: *mut sinew_playback_cache,
    blocks: *mut sinew_soa_transform,
    blocks_len: usize,
    out: *mut sinew_soa_transform,
    out_len: usize,
) -> sinew_status {
    boundary! {
        let mode = time_mode(mode)?;
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let ((c, bytes), out, slots) = unsafe {
            (view_compressed(clip)?, slice_mut(out, out_len)?, slice_mut(blocks, blocks_len)?)
        };
        // SAFETY: as above: `cache` points to an initialised `sinew_playback_cache`.
        let state = unsafe { read(cache.cast_const())? };
        // SAFETY: this function's `# Safety` contract makes `rest` NULL or valid for
        // `rest_len` blocks during the call.
        let rest = unsafe { optional_rest(rest, rest_len)? };
        let rest_span = rest.map_or(Span(0, 0), Span::of);
        let state_span = Span::value(cache.cast_const());
        disjoint(Span::of(out), &[bytes, rest_span, Span::of(slots), state_span])?;
        disjoint(Span::of(slots), &[bytes, rest_span, state_span])?;
        disjoint(state_span, &[bytes, rest_span])?;
        let rest = match (c.defaults(), rest) {
            (Defaults::RestPose, None) => return Err(sinew_status::NullParameter),
            (Defaults::RestPose, Some(r)) => poses(r),
            (Defaults::Identity, _) => &[],
        };
        let mut pc = PlaybackCache::resume(poses_mut(slots), &PlaybackState::from_words(&state.words));
        c.sample_cached(time, mode, rest, &mut pc, poses_mut(out))?;
        let words = pc.state().to_words();
        // SAFETY: `cache` was read above (non-NULL, aligned) and the contract makes it writable;
        // it shares no byte with the slices still borrowed (checked above).
        unsafe { write(cache, sinew_playback_cache { words }) };
        Ok(())
    }
}

pub(crate) fn humanoid_clip_shape(
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

/// Writes the bytes `sinew_humanoid_clip_write` needs for `gait`
/// (`SINEW_GAIT_*`) at `sample_rate` frames per second (0 < rate <= 10000).
///
/// Errors: NULL_PARAMETER, INVALID_HANDLE, INVALID_ARGUMENT.
///
/// # Safety
/// `skeleton` is a loaded handle; `size` is writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_humanoid_clip_size(
    skeleton: *const sinew_skeleton,
    gait: u32,
    sample_rate: f32,
    size: *mut usize,
) -> sinew_status {
    boundary! {
        out_param(size)?;
        let g = self::gait(gait)?;
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let s = unsafe { view_skeleton(skeleton)? };
        let (_, total) = humanoid_clip_shape(&s, g, sample_rate)?;
        // SAFETY: `out_param` checked that the pointer is non-NULL and aligned; the contract makes
        // it writable.
        unsafe { write(size, total) };
        Ok(())
    }
}

/// Generates a looping procedural gait clip for `skeleton` (joints are
/// matched by the humanoid's names; others hold their rest pose) as a raw
/// clip container in `out` (16-byte aligned), written in place; load it
/// with `sinew_clip_load`.
///
/// Errors: NULL_PARAMETER, INVALID_HANDLE, INVALID_ARGUMENT,
/// BUFFER_TOO_SMALL, MISALIGNED, OVERLAPPING_BUFFERS.
///
/// # Safety
/// `skeleton` is a loaded handle; `out` has `out_len` writable bytes;
/// `written` is writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_humanoid_clip_write(
    skeleton: *const sinew_skeleton,
    gait: u32,
    sample_rate: f32,
    out: *mut u8,
    out_len: usize,
    written: *mut usize,
) -> sinew_status {
    boundary! {
        out_param(written)?;
        let g = self::gait(gait)?;
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let (s, out) = unsafe { (view_skeleton(skeleton)?, slice_mut(out, out_len)?) };
        disjoint(Span::of(out), &[Span::of(s.parents())])?;
        let (frames, _) = humanoid_clip_shape(&s, g, sample_rate)?;
        let n = write_container_with(out, sample_rate, s.soa_count(), frames, g.name(), |keys| {
            procedural::write_gait_clip(g, &s, sample_rate, keys).map(|_| ())
        })?;
        // SAFETY: `out_param` checked that the pointer is non-NULL and aligned; the contract makes
        // it writable.
        unsafe { write(written, n) };
        Ok(())
    }
}
