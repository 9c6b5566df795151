//! Uniformly sampled raw clips and the sampling kernel.
//!
//! A [`RawClip`] is `frame_count` whole poses in SoA blocks, frame after
//! frame, at a fixed sample rate. Sampling at time `t` finds the two
//! bracketing frames in O(1) (`f = t · rate`), then lerps translations and
//! scales and nlerps rotations (sign-aligned to the first frame). Random
//! access costs exactly what sequential playback costs: there is no cursor.

use wide::f32x4;

use crate::compressed::{CompressedClip, Defaults};
use crate::container::{check_preamble, le_u32};
use crate::error::Error;
use crate::skeleton::MAX_JOINTS;
use crate::soa::detail::{dot4, normalize, quat_mul_add, vec_mul_add, vec_scale};
use crate::soa::{check_len, soa_count, SoaQuat, SoaTransform};

/// Magic bytes that open a raw clip container.
pub const CLIP_MAGIC: [u8; 8] = *b"SINEWCLP";

/// The sample rate sinew uses when nothing better is known, in frames per
/// second: the procedural clips' rate, the importers' rate for keys that
/// are not uniformly spaced, and the ozz sample clips' rate.
pub const DEFAULT_SAMPLE_RATE: f32 = 30.0;

/// Raw clip container version written and read by this build.
pub const CLIP_VERSION: u32 = 1;

const CLIP_HEADER: usize = 48;
const BLOCK_BYTES: usize = core::mem::size_of::<SoaTransform>();

/// How times outside `[0, duration]` are mapped into the clip.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TimeMode {
    /// Wrap around: the clip loops (`t mod duration`).
    #[default]
    Loop,
    /// Hold the first or last frame.
    Clamp,
}

/// A validated view of a raw uniformly sampled clip.
#[derive(Clone, Copy, Debug)]
pub struct RawClip<'a> {
    sample_rate: f32,
    frame_count: usize,
    soa_count: usize,
    keys: &'a [SoaTransform],
    name: &'a str,
}

/// Bytes [`RawClip::write`] needs for a clip of this shape and name length (a multiple of 16).
#[must_use]
pub const fn clip_container_size(soa_count: usize, frame_count: usize, name_len: usize) -> usize {
    (CLIP_HEADER + BLOCK_BYTES * soa_count * frame_count + name_len + 15) & !15
}

/// [`clip_container_size`] without overflow, and only when it fits the
/// container's 32-bit size field (`None` otherwise).
#[must_use]
pub fn checked_clip_container_size(
    soa_count: usize,
    frame_count: usize,
    name_len: usize,
) -> Option<usize> {
    soa_count
        .checked_mul(frame_count)?
        .checked_mul(BLOCK_BYTES)?
        .checked_add(CLIP_HEADER + 15)?
        .checked_add(name_len)
        .map(|t| t & !15)
        .filter(|&t| u32::try_from(t).is_ok())
}

/// Writes a raw clip container into `out` whose keys `fill` produces in
/// place (no second copy of the keys: a generator writes straight into the
/// container), and returns the bytes written ([`clip_container_size`]).
///
/// `fill` gets `frame_count * soa_count` blocks, frame after frame; the
/// keys it leaves must be finite.
///
/// # Errors
/// [`Error::InvalidSampleRate`] (rate not finite and positive, or so small
/// that the duration overflows; no blocks or
/// frames), [`Error::TooManyJoints`], [`Error::InvalidName`] (name over 4
/// GiB), [`Error::Corrupt`] (more than 4 GiB of keys),
/// [`Error::BufferTooSmall`], [`Error::Misaligned`], any error of `fill`,
/// and [`Error::NonFinite`] when `fill` left a NaN or infinite key (the
/// container is then incomplete: do not read it).
pub fn write_container_with(
    out: &mut [u8],
    sample_rate: f32,
    soa_count: usize,
    frame_count: usize,
    name: &str,
    fill: impl FnOnce(&mut [SoaTransform]) -> Result<(), Error>,
) -> Result<usize, Error> {
    if !rate_is_valid(frame_count, sample_rate) || soa_count == 0 || frame_count == 0 {
        return Err(Error::InvalidSampleRate);
    }
    if soa_count > crate::soa::soa_count(MAX_JOINTS) {
        return Err(Error::TooManyJoints {
            count: soa_count * 4,
        });
    }
    let keys_bytes = frame_count
        .checked_mul(soa_count * BLOCK_BYTES)
        .filter(|&k| u32::try_from(k).is_ok())
        .ok_or(Error::Corrupt {
            what: "clip keys exceed 4 GiB",
        })?;
    let total = clip_container_size(soa_count, frame_count, name.len());
    let (Ok(total32), Ok(name_len)) = (u32::try_from(total), u32::try_from(name.len())) else {
        return Err(Error::InvalidName { joint: 0 });
    };
    if out.len() < total {
        return Err(Error::BufferTooSmall {
            needed: total,
            actual: out.len(),
        });
    }
    if out.as_ptr().align_offset(16) != 0 {
        return Err(Error::Misaligned);
    }
    let out = &mut out[..total];
    out.fill(0);
    let keys_end = CLIP_HEADER + keys_bytes;
    let keys: &mut [SoaTransform] = bytemuck::try_cast_slice_mut(&mut out[CLIP_HEADER..keys_end])
        .map_err(|_| Error::Misaligned)?;
    fill(keys)?;
    if !keys.iter().all(SoaTransform::is_finite) {
        return Err(Error::NonFinite { what: "clip key" });
    }
    out[..8].copy_from_slice(&CLIP_MAGIC);
    out[8..12].copy_from_slice(&CLIP_VERSION.to_le_bytes());
    out[12..16].copy_from_slice(&(soa_count as u32).to_le_bytes());
    out[16..20].copy_from_slice(&(frame_count as u32).to_le_bytes());
    out[20..24].copy_from_slice(&sample_rate.to_le_bytes());
    out[24..28].copy_from_slice(&total32.to_le_bytes());
    out[28..32].copy_from_slice(&name_len.to_le_bytes());
    out[keys_end..keys_end + name.len()].copy_from_slice(name.as_bytes());
    Ok(total)
}

impl<'a> RawClip<'a> {
    /// Views `keys` as `keys.len() / soa_count` frames of `soa_count` blocks.
    ///
    /// For a looping clip the last frame should equal the first: the clip's
    /// duration is `(frame_count - 1) / sample_rate` and time `duration`
    /// wraps to 0.
    ///
    /// # Errors
    /// [`Error::InvalidSampleRate`] (rate not finite and positive, or so small
    /// that the duration overflows; no frames),
    /// [`Error::BadLength`] (`keys.len()` not a multiple of `soa_count`),
    /// [`Error::NonFinite`] (a key holds NaN or infinity).
    pub fn new(
        sample_rate: f32,
        soa_count: usize,
        keys: &'a [SoaTransform],
    ) -> Result<Self, Error> {
        if soa_count == 0 || keys.is_empty() {
            return Err(Error::InvalidSampleRate);
        }
        let frame_count = keys.len() / soa_count;
        if !rate_is_valid(frame_count, sample_rate) {
            return Err(Error::InvalidSampleRate);
        }
        check_len("clip keys", frame_count * soa_count, keys.len())?;
        if !keys.iter().all(SoaTransform::is_finite) {
            return Err(Error::NonFinite { what: "clip key" });
        }
        Ok(RawClip {
            sample_rate,
            frame_count,
            soa_count,
            keys,
            name: "",
        })
    }

    /// The same clip with a name (for tooling; not used by sampling).
    #[inline]
    #[must_use]
    pub fn with_name(self, name: &'a str) -> Self {
        RawClip { name, ..self }
    }

    /// The clip's name (empty unless set or read from a container).
    #[inline]
    #[must_use]
    pub fn name(&self) -> &'a str {
        self.name
    }

    /// Writes this clip as a container into `out` (16-byte aligned) and
    /// returns the bytes written ([`clip_container_size`]).
    ///
    /// # Errors
    /// [`Error::BufferTooSmall`], [`Error::Misaligned`], [`Error::TooManyJoints`]
    /// (more blocks per frame than `MAX_JOINTS / 4`), [`Error::InvalidName`]
    /// (name over 4 GiB), [`Error::Corrupt`] (more than 4 GiB of keys).
    pub fn write(&self, out: &mut [u8]) -> Result<usize, Error> {
        write_container_with(
            out,
            self.sample_rate,
            self.soa_count,
            self.frame_count,
            self.name,
            |keys| {
                keys.copy_from_slice(self.keys);
                Ok(())
            },
        )
    }

    /// Views a container that [`RawClip::from_bytes`] accepted before,
    /// checking only its header and layout (O(1): no finiteness scan): for
    /// views re-created from bytes validated once at load time (the C
    /// library's handles). On bytes that changed since, sampling computes
    /// unspecified values but never reads out of bounds.
    ///
    /// # Errors
    /// As [`RawClip::from_bytes`], for the header and layout checks only.
    pub fn from_validated_bytes(bytes: &'a [u8]) -> Result<Self, Error> {
        let clip = RawClip::parse_layout(bytes)?;
        // `parse_layout` checked that the name fits inside `bytes`.
        let keys_end = CLIP_HEADER + BLOCK_BYTES * clip.keys.len();
        let name_len = le_u32(bytes, 28) as usize;
        let name = core::str::from_utf8(&bytes[keys_end..keys_end + name_len]).unwrap_or("");
        Ok(clip.with_name(name))
    }

    /// The O(1) header and layout checks of [`RawClip::from_bytes`], before
    /// its name check and finiteness scan (the view's name is empty).
    fn parse_layout(bytes: &'a [u8]) -> Result<Self, Error> {
        check_preamble(bytes, &CLIP_MAGIC, CLIP_VERSION, CLIP_HEADER)?;
        let blocks = le_u32(bytes, 12) as usize;
        let frames = le_u32(bytes, 16) as usize;
        let rate = f32::from_le_bytes([bytes[20], bytes[21], bytes[22], bytes[23]]);
        let name_len = le_u32(bytes, 28) as usize;
        if blocks > soa_count(MAX_JOINTS) {
            return Err(Error::TooManyJoints { count: blocks * 4 });
        }
        if blocks == 0 || frames == 0 || !rate_is_valid(frames, rate) {
            return Err(Error::InvalidSampleRate);
        }
        // blocks <= 256, so only frames * blocks * 160 can overflow on 32-bit targets.
        let total = frames
            .checked_mul(blocks * BLOCK_BYTES)
            .and_then(|k| k.checked_add(CLIP_HEADER + name_len + 15))
            .map(|t| t & !15)
            .ok_or(Error::Corrupt {
                what: "clip size overflows",
            })?;
        if le_u32(bytes, 24) as usize != total {
            return Err(Error::Corrupt {
                what: "total size does not match blocks, frames and name length",
            });
        }
        if bytes.len() < total {
            return Err(Error::Truncated {
                needed: total,
                actual: bytes.len(),
            });
        }
        if bytes[32..CLIP_HEADER].iter().any(|&b| b != 0) {
            return Err(Error::Corrupt {
                what: "reserved header bytes are not zero",
            });
        }
        let keys_end = CLIP_HEADER + frames * blocks * BLOCK_BYTES;
        let keys: &[SoaTransform] = bytemuck::try_cast_slice(&bytes[CLIP_HEADER..keys_end])
            .map_err(|_| Error::Corrupt {
                what: "key section size",
            })?;
        // The name is not needed to sample; `from_bytes` checks and sets it.
        let _ = name_len;
        Ok(RawClip {
            sample_rate: rate,
            frame_count: frames,
            soa_count: blocks,
            keys,
            name: "",
        })
    }

    /// Validates a raw clip container once and views it in place (zero copy).
    ///
    /// `bytes` must be 16-byte aligned; trailing bytes are ignored. Every key
    /// is checked to be finite, so the cost is linear in the clip's size.
    ///
    /// # Errors
    /// [`Error::Truncated`], [`Error::BadMagic`], [`Error::UnsupportedVersion`],
    /// [`Error::Misaligned`], [`Error::TooManyJoints`], [`Error::InvalidSampleRate`],
    /// [`Error::Corrupt`], [`Error::NonFinite`], [`Error::InvalidName`],
    /// [`Error::UnsupportedPlatform`].
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, Error> {
        let clip = RawClip::parse_layout(bytes)?;
        // `parse_layout` checked that the name fits inside `bytes`.
        let keys_end = CLIP_HEADER + BLOCK_BYTES * clip.keys.len();
        let name_len = le_u32(bytes, 28) as usize;
        let name = core::str::from_utf8(&bytes[keys_end..keys_end + name_len])
            .map_err(|_| Error::InvalidName { joint: 0 })?;
        if !clip.keys.iter().all(SoaTransform::is_finite) {
            return Err(Error::NonFinite { what: "clip key" });
        }
        Ok(clip.with_name(name))
    }

    /// Frames per second.
    #[inline]
    #[must_use]
    pub fn sample_rate(&self) -> f32 {
        self.sample_rate
    }

    /// Number of stored frames.
    #[inline]
    #[must_use]
    pub fn frame_count(&self) -> usize {
        self.frame_count
    }

    /// SoA blocks per frame.
    #[inline]
    #[must_use]
    pub fn soa_count(&self) -> usize {
        self.soa_count
    }

    /// Duration in seconds: `(frame_count - 1) / sample_rate`.
    #[inline]
    #[must_use]
    pub fn duration(&self) -> f32 {
        (self.frame_count - 1) as f32 / self.sample_rate
    }

    /// Frame `i` (all its blocks), or `None` when out of range.
    #[inline]
    #[must_use]
    pub fn frame(&self, i: usize) -> Option<&'a [SoaTransform]> {
        self.keys.get(i * self.soa_count..(i + 1) * self.soa_count)
    }

    /// The two bracketing frames and the interpolation factor for time `t`.
    ///
    /// # Errors
    /// [`Error::NonFinite`] when `t` is NaN or infinite.
    pub fn locate(&self, t: f32, mode: TimeMode) -> Result<Bracket, Error> {
        locate_frames(self.frame_count, self.sample_rate, t, mode)
    }

    /// Samples the clip at time `t` (seconds) into `out` (SIMD).
    ///
    /// NaN or infinite `t` is an error; negative and past-the-end times follow `mode`.
    ///
    /// # Errors
    /// [`Error::BadLength`] unless `out.len() == soa_count()`,
    /// [`Error::NonFinite`] for a non-finite `t`.
    pub fn sample(&self, t: f32, mode: TimeMode, out: &mut [SoaTransform]) -> Result<(), Error> {
        check_len("output", self.soa_count, out.len())?;
        let Bracket {
            before: i0,
            after: i1,
            alpha,
        } = self.locate(t, mode)?;
        let n = self.soa_count;
        let a = &self.keys[i0 * n..(i0 + 1) * n];
        let b = &self.keys[i1 * n..(i1 + 1) * n];
        interpolate(a, b, alpha, out);
        Ok(())
    }

    /// Samples the first `out.len()` blocks at time `t` (see
    /// [`ClipSource::sample_prefix`]): each is what [`RawClip::sample`]
    /// writes there, bit for bit.
    ///
    /// # Errors
    /// [`Error::BadLength`] when `out` has more than `soa_count()` blocks,
    /// [`Error::NonFinite`] for a non-finite `t`.
    pub fn sample_prefix(
        &self,
        t: f32,
        mode: TimeMode,
        out: &mut [SoaTransform],
    ) -> Result<(), Error> {
        let (n, m) = (self.soa_count, out.len());
        if m > n {
            return Err(Error::BadLength {
                buffer: "output",
                expected: n,
                actual: m,
            });
        }
        let Bracket {
            before: i0,
            after: i1,
            alpha,
        } = self.locate(t, mode)?;
        let a = &self.keys[i0 * n..i0 * n + m];
        let b = &self.keys[i1 * n..i1 * n + m];
        interpolate(a, b, alpha, out);
        Ok(())
    }
}

/// A clip the animation features can play: a [`RawClip`] or a
/// [`CompressedClip`].
///
/// # Design
///
/// One trait rather than an enum of clip kinds: the mixer, root motion,
/// additive building, blend-space playback and the crowd are generic over
/// `C: ClipSource`, so each is monomorphised per clip kind. A raw clip's
/// frame is then a borrowed slice with no copy and no per-call `match`, and
/// a compressed clip's is a decode into caller scratch; neither pays for the
/// other. No `dyn`, no allocation: the trait is `no_std` like the rest of
/// the core. The cost is that a table mixes one kind (`&[RawClip]` or
/// `&[CompressedClip]`); a character that needs both keeps two tables.
///
/// # Rest pose
///
/// A clip compressed with rest-pose stripping
/// ([`Defaults::RestPose`]) does not
/// store tracks equal to the skeleton's rest pose, so sampling it needs that
/// pose. Every sampling method takes `rest`: the skeleton's rest pose
/// (`soa_count()` blocks), or `&[]` when the caller has none. A clip that
/// needs it ([`ClipSource::needs_rest_pose`]) and gets `&[]` (or a pose of
/// another length) fails with [`Error::BadLength`] naming the `"rest pose"`
/// and the blocks it needs; clips that do not need it ignore `rest`.
pub trait ClipSource {
    /// `true` when [`ClipSource::frame`] returns stored frames without
    /// writing `scratch` (raw clips): callers may then pass empty scratch.
    const BORROWS_FRAMES: bool;

    /// SoA blocks per pose.
    fn soa_count(&self) -> usize;

    /// Number of stored frames (`>= 1`).
    fn frame_count(&self) -> usize;

    /// Frames per second (finite, `> 0`).
    fn sample_rate(&self) -> f32;

    /// Duration in seconds: `(frame_count - 1) / sample_rate`.
    #[inline]
    fn duration(&self) -> f32 {
        self.frame_count().saturating_sub(1) as f32 / self.sample_rate()
    }

    /// The clip's name (empty when it has none).
    fn name(&self) -> &str;

    /// `true` when sampling needs the skeleton's rest pose (see the trait docs).
    fn needs_rest_pose(&self) -> bool;

    /// Samples at time `t` (seconds) into `out` (`soa_count()` blocks), as
    /// [`RawClip::sample`].
    ///
    /// # Errors
    /// [`Error::BadLength`] for `out`, or for a missing `"rest pose"`;
    /// [`Error::NonFinite`] for a non-finite `t`.
    fn sample(
        &self,
        t: f32,
        mode: TimeMode,
        rest: &[SoaTransform],
        out: &mut [SoaTransform],
    ) -> Result<(), Error>;

    /// Samples only the first `out.len()` SoA blocks at time `t`: the
    /// joint-count prefix that joint LOD evaluates ([`crate::lod`]). Each
    /// block gets exactly the values [`ClipSource::sample`] gives it, bit
    /// for bit; the blocks past `out` are not computed.
    ///
    /// The provided implementation supports only the whole pose (`out`
    /// of `soa_count()` blocks); raw and compressed clips override it.
    ///
    /// # Errors
    /// [`Error::BadLength`] when `out` has more than `soa_count()` blocks
    /// (or, for the provided implementation, fewer), or for a missing
    /// `"rest pose"`; [`Error::NonFinite`] for a non-finite `t`.
    fn sample_prefix(
        &self,
        t: f32,
        mode: TimeMode,
        rest: &[SoaTransform],
        out: &mut [SoaTransform],
    ) -> Result<(), Error> {
        self.sample(t, mode, rest, out)
    }

    /// Stored frame `i`: borrowed from the clip when
    /// [`ClipSource::BORROWS_FRAMES`], else decoded into `scratch` (at least
    /// `soa_count()` blocks; its first `soa_count()` are returned).
    ///
    /// # Errors
    /// [`Error::Corrupt`] ("frame index past the clip's end") when
    /// `i >= frame_count()`, [`Error::BadLength`] for short
    /// `scratch` or a missing `"rest pose"`.
    fn frame<'s>(
        &'s self,
        i: usize,
        rest: &[SoaTransform],
        scratch: &'s mut [SoaTransform],
    ) -> Result<&'s [SoaTransform], Error>;
}

const FRAME_OUT_OF_RANGE: Error = Error::Corrupt {
    what: "frame index past the clip's end",
};

impl ClipSource for RawClip<'_> {
    const BORROWS_FRAMES: bool = true;

    #[inline]
    fn soa_count(&self) -> usize {
        self.soa_count
    }

    #[inline]
    fn frame_count(&self) -> usize {
        self.frame_count
    }

    #[inline]
    fn sample_rate(&self) -> f32 {
        self.sample_rate
    }

    #[inline]
    fn name(&self) -> &str {
        self.name
    }

    #[inline]
    fn needs_rest_pose(&self) -> bool {
        false
    }

    #[inline]
    fn sample(
        &self,
        t: f32,
        mode: TimeMode,
        _rest: &[SoaTransform],
        out: &mut [SoaTransform],
    ) -> Result<(), Error> {
        RawClip::sample(self, t, mode, out)
    }

    #[inline]
    fn sample_prefix(
        &self,
        t: f32,
        mode: TimeMode,
        _rest: &[SoaTransform],
        out: &mut [SoaTransform],
    ) -> Result<(), Error> {
        RawClip::sample_prefix(self, t, mode, out)
    }

    #[inline]
    fn frame<'s>(
        &'s self,
        i: usize,
        _rest: &[SoaTransform],
        _scratch: &'s mut [SoaTransform],
    ) -> Result<&'s [SoaTransform], Error> {
        RawClip::frame(self, i).ok_or(FRAME_OUT_OF_RANGE)
    }
}

impl ClipSource for CompressedClip<'_> {
    const BORROWS_FRAMES: bool = false;

    #[inline]
    fn soa_count(&self) -> usize {
        CompressedClip::soa_count(self)
    }

    #[inline]
    fn frame_count(&self) -> usize {
        CompressedClip::frame_count(self)
    }

    #[inline]
    fn sample_rate(&self) -> f32 {
        CompressedClip::sample_rate(self)
    }

    #[inline]
    fn name(&self) -> &str {
        CompressedClip::name(self)
    }

    #[inline]
    fn needs_rest_pose(&self) -> bool {
        self.defaults() == Defaults::RestPose
    }

    #[inline]
    fn sample(
        &self,
        t: f32,
        mode: TimeMode,
        rest: &[SoaTransform],
        out: &mut [SoaTransform],
    ) -> Result<(), Error> {
        if self.needs_rest_pose() {
            self.sample_with_rest(t, mode, rest, out)
        } else {
            CompressedClip::sample(self, t, mode, out)
        }
    }

    #[inline]
    fn sample_prefix(
        &self,
        t: f32,
        mode: TimeMode,
        rest: &[SoaTransform],
        out: &mut [SoaTransform],
    ) -> Result<(), Error> {
        CompressedClip::sample_prefix(self, t, mode, rest, out)
    }

    #[inline]
    fn frame<'s>(
        &'s self,
        i: usize,
        rest: &[SoaTransform],
        scratch: &'s mut [SoaTransform],
    ) -> Result<&'s [SoaTransform], Error> {
        if i >= CompressedClip::frame_count(self) {
            return Err(FRAME_OUT_OF_RANGE);
        }
        let n = CompressedClip::soa_count(self);
        let actual = scratch.len();
        let Some(out) = scratch.get_mut(..n) else {
            return Err(Error::BadLength {
                buffer: "clip scratch",
                expected: n,
                actual,
            });
        };
        self.decode_frame(i, rest, out)?;
        Ok(out)
    }
}

/// The two bracketing frames and the interpolation factor for time `t` in a
/// clip of `frame_count ≥ 1` frames at `sample_rate` (shared by raw and
/// compressed clips, so both sample at exactly the same frames).
/// A sample rate the samplers can use for `frame_count` frames: finite,
/// positive, and not so small that the duration `(frame_count − 1) / rate`
/// overflows to infinity.
pub(crate) fn rate_is_valid(frame_count: usize, rate: f32) -> bool {
    rate.is_finite() && rate > 0.0 && (frame_count.saturating_sub(1) as f32 / rate).is_finite()
}

/// Where a time falls in a uniformly sampled clip: the stored frames
/// before and after it and the interpolation factor between them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bracket {
    /// The frame at or before the time.
    pub before: usize,
    /// The next frame (`before` itself at the last frame).
    pub after: usize,
    /// The weight of `after`, in `[0, 1)`.
    pub alpha: f32,
}

pub(crate) fn locate_frames(
    frame_count: usize,
    sample_rate: f32,
    t: f32,
    mode: TimeMode,
) -> Result<Bracket, Error> {
    if !t.is_finite() {
        return Err(Error::NonFinite { what: "time" });
    }
    let last = frame_count - 1;
    if last == 0 {
        return Ok(Bracket {
            before: 0,
            after: 0,
            alpha: 0.0,
        });
    }
    let d = (frame_count - 1) as f32 / sample_rate;
    let t = match mode {
        // A time already inside the loop (what a caller stepping its own
        // clock passes) is its own remainder: `%` is exact, and it is a
        // library call that costs a tenth of a cached sample.
        TimeMode::Loop if (0.0..d).contains(&t) => t,
        TimeMode::Loop => {
            let r = t % d;
            if r < 0.0 {
                r + d
            } else {
                r
            }
        }
        TimeMode::Clamp => t.clamp(0.0, d),
    };
    let f = (t * sample_rate).clamp(0.0, last as f32);
    let i0 = (f as usize).min(last);
    let i1 = (i0 + 1).min(last);
    Ok(Bracket {
        before: i0,
        after: i1,
        alpha: f - i0 as f32,
    })
}

/// Lerps translations/scales and nlerps rotations between two poses of equal length.
#[inline]
pub(crate) fn interpolate(
    a: &[SoaTransform],
    b: &[SoaTransform],
    alpha: f32,
    out: &mut [SoaTransform],
) {
    let wb = f32x4::splat(alpha);
    let wa = f32x4::splat(1.0 - alpha);
    for ((o, a), b) in out.iter_mut().zip(a).zip(b) {
        let mut t = vec_scale(&a.translation, wa);
        vec_mul_add(&mut t, &b.translation, wb);
        let mut s = vec_scale(&a.scale, wa);
        vec_mul_add(&mut s, &b.scale, wb);
        let mut q = SoaQuat {
            x: a.rotation.x * wa,
            y: a.rotation.y * wa,
            z: a.rotation.z * wa,
            w: a.rotation.w * wa,
        };
        let flip = dot4(&a.rotation, &b.rotation).simd_lt(f32x4::ZERO);
        quat_mul_add(&mut q, &b.rotation, wb.flip_signs(flip));
        *o = SoaTransform {
            translation: t,
            rotation: normalize(&q),
            scale: s,
        };
    }
}

/// Scalar reference implementations: the readable specification.
pub mod reference {
    use super::{Error, RawClip, TimeMode};
    use crate::math::Transform;
    use crate::soa::{check_len, SoaTransform, LANES};

    /// Scalar twin of [`RawClip::sample`].
    ///
    /// # Errors
    /// As [`RawClip::sample`].
    pub fn sample(
        clip: &RawClip<'_>,
        t: f32,
        mode: TimeMode,
        out: &mut [SoaTransform],
    ) -> Result<(), Error> {
        check_len("output", clip.soa_count(), out.len())?;
        let crate::clip::Bracket {
            before: i0,
            after: i1,
            alpha,
        } = clip.locate(t, mode)?;
        let (fa, fb) = match (clip.frame(i0), clip.frame(i1)) {
            (Some(a), Some(b)) => (a, b),
            _ => {
                return Err(Error::Corrupt {
                    what: "frame index",
                })
            }
        };
        for j in 0..out.len() * LANES {
            let (b, l) = (j / LANES, j % LANES);
            let (x, y) = (fa[b].get(l), fb[b].get(l));
            let tr = Transform {
                translation: x.translation.lerp(y.translation, alpha),
                rotation: x.rotation.nlerp(y.rotation, alpha),
                scale: x.scale.lerp(y.scale, alpha),
            };
            out[b].set(l, &tr);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Looping times inside the loop skip the remainder; every time gets
    /// the bracket the remainder gives it, at the edges of the loop too.
    #[test]
    fn looping_times_inside_the_loop_need_no_remainder() {
        let (frames, rate) = (31, 30.0);
        let d = (frames - 1) as f32 / rate;
        let by_remainder = |t: f32| {
            let r = t % d;
            let r = if r < 0.0 { r + d } else { r };
            locate_frames(frames, rate, r, TimeMode::Clamp).ok()
        };
        let below_d = f32::from_bits(d.to_bits() - 1);
        for t in [
            0.0, -0.0, 1e-30, 0.4, below_d, d, -1e-7, -below_d, 3.5, -7.25, 1e6,
        ] {
            let got = locate_frames(frames, rate, t, TimeMode::Loop).ok();
            assert_eq!(got, by_remainder(t), "t = {t}");
        }
    }
}
