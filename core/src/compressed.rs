//! Compressed uniformly sampled clips: a zero-copy view and its sampling kernel.
//!
//! A compressed clip stores, per joint, three tracks (translation, rotation,
//! scale), each *default* (not stored: identity, or the skeleton's rest pose
//! for clips compressed with bind-pose stripping), *constant* (one value), or
//! *animated*. Animated tracks are range-reduced per clip (an `f32` minimum
//! and extent per component) and per segment of `segment_frames` frames (an
//! 8-bit minimum and extent inside the clip range), then quantized at a bit
//! rate chosen per track per segment (`0..=23` bits per component, or
//! [`RAW_BITS`]: the `f32` values stored verbatim). Rotations keep three
//! components: x, y, z of the quaternion with `w ≥ 0` ([`RotationFormat::DropW`]),
//! or the three smallest with a 2-bit index of the dropped largest one
//! ([`RotationFormat::SmallestThree`]).
//!
//! Inside a segment the bits are frame-major: frame after frame, each frame
//! the animated tracks in joint order (translation, rotation, scale), so any
//! frame starts at `segment_bit_offset + local_frame * frame_bits` and random
//! access costs exactly what sequential playback costs.
//!
//! # Container (version 1, little endian)
//! A 64-byte header (magic `SINEWCMP`, version, joint count, frame count,
//! sample rate, total size, name length, segment frames, rotation format,
//! defaults, animated track count `A`, constant float count `K`, data bytes,
//! 8 reserved zero bytes), then these sections, each starting on a 16-byte
//! boundary: track kinds (`3 × joints` bytes), constants (`K` `f32`), clip
//! ranges (`6 × A` `f32`: min, extent per component), segment table
//! (per segment: `u32` first bit, `u32` bits per frame), segment bit rates
//! (`A` bytes per segment), segment ranges (`6 × A` bytes per segment), the
//! bit stream (plus [`READ_PADDING`] zero bytes), the name. The layout is
//! fully determined by the header's counts, and [`CompressedClip::from_bytes`]
//! checks every offset, count, bit rate, range and raw value once; sampling
//! then never reads outside the validated sections.

use crate::clip::{interpolate, locate_frames, TimeMode};
use crate::container::{check_preamble, le_u32};
use crate::error::Error;
use crate::math::Quat;
use crate::skeleton::MAX_JOINTS;
use crate::soa::{check_len, soa_count, SoaTransform, LANES};

/// Magic bytes that open a compressed clip container.
pub const COMPRESSED_MAGIC: [u8; 8] = *b"SINEWCMP";

/// Compressed clip container version written and read by this build.
pub const COMPRESSED_VERSION: u32 = 1;

/// Size of the container header in bytes.
pub const HEADER_BYTES: usize = 64;

/// The bit rate that marks a track stored as verbatim `f32` values in a
/// segment (3 values for translation and scale, 4 for rotation).
pub const RAW_BITS: u8 = 32;

/// The largest quantized bit rate per component (codes stay exact in `f32`).
pub const MAX_QUANTIZED_BITS: u8 = 23;

/// Zero bytes after the bit stream, so the 8-byte reads of the bit reader
/// stay inside the data section.
pub const READ_PADDING: usize = 8;

/// Track kind byte: not stored, the default value.
pub const KIND_DEFAULT: u8 = 0;
/// Track kind byte: one stored value.
pub const KIND_CONSTANT: u8 = 1;
/// Track kind byte: stored per frame in the bit stream.
pub const KIND_ANIMATED: u8 = 2;

const INV255: f32 = 1.0 / 255.0;

/// How rotations keep three of their four components.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum RotationFormat {
    /// x, y, z of the quaternion made `w ≥ 0`; `w = √(1 − x² − y² − z²)`.
    #[default]
    DropW,
    /// The three smallest components of the quaternion whose largest
    /// component is made positive, plus a 2-bit index of the dropped one.
    SmallestThree,
}

impl RotationFormat {
    fn code(self) -> u32 {
        match self {
            RotationFormat::DropW => 0,
            RotationFormat::SmallestThree => 1,
        }
    }
}

/// What default (unstored) tracks hold when sampled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Defaults {
    /// Identity: zero translation, identity rotation, unit scale.
    #[default]
    Identity,
    /// The skeleton's rest pose (bind-pose stripping): sample with
    /// [`CompressedClip::sample_with_rest`].
    RestPose,
}

/// Bits one frame of an animated track takes at bit rate `bits`.
#[inline]
#[must_use]
pub const fn track_frame_bits(rotation: bool, format: RotationFormat, bits: u8) -> u32 {
    if bits == RAW_BITS {
        if rotation {
            128
        } else {
            96
        }
    } else {
        let idx = if rotation && matches!(format, RotationFormat::SmallestThree) {
            2
        } else {
            0
        };
        3 * bits as u32 + idx
    }
}

/// Decodes one quantized component: the clip range `min, ext`, the segment
/// range `smin, sext` (in 1/255 of the clip range) and a `bits`-bit code `q`.
///
/// The compressor simulates decoding with this very function, so what it
/// measures is bit for bit what [`CompressedClip::sample`] produces.
#[inline]
#[must_use]
pub fn dequantize(min: f32, ext: f32, smin: u8, sext: u8, bits: u8, q: u32) -> f32 {
    let (lo, step) = dequantize_params(min, ext, smin, sext, bits);
    lo + step * q as f32
}

/// The offset and step of [`dequantize`]: `value = lo + step · q`.
#[inline]
#[must_use]
pub fn dequantize_params(min: f32, ext: f32, smin: u8, sext: u8, bits: u8) -> (f32, f32) {
    let lo = min + ext * (f32::from(smin) * INV255);
    let inv = INV_MAX_CODE.get(usize::from(bits)).copied().unwrap_or(0.0);
    (lo, ext * (f32::from(sext) * INV255) * inv)
}

/// `1 / (2^bits − 1)` for `bits` in `0..=23` (0 for 0 bits: one value).
const INV_MAX_CODE: [f32; MAX_QUANTIZED_BITS as usize + 1] = {
    let mut t = [0.0f32; MAX_QUANTIZED_BITS as usize + 1];
    let mut b = 1;
    while b < t.len() {
        t[b] = 1.0 / ((1u32 << b) - 1) as f32;
        b += 1;
    }
    t
};

/// Rebuilds a rotation from x, y, z with `w = √max(0, 1 − x² − y² − z²)`.
#[inline]
#[must_use]
pub fn drop_w_rotation(x: f32, y: f32, z: f32) -> Quat {
    let w = libm::sqrtf((1.0 - (x * x + y * y + z * z)).max(0.0));
    Quat::new(x, y, z, w)
}

/// Rebuilds a rotation from the three kept components (in component order)
/// and the index `dropped` (0..=3, taken modulo 4) of the dropped largest one.
#[inline]
#[must_use]
pub fn smallest_three_rotation(dropped: u32, a: f32, b: f32, c: f32) -> Quat {
    let big = libm::sqrtf((1.0 - (a * a + b * b + c * c)).max(0.0));
    match dropped & 3 {
        0 => Quat::new(big, a, b, c),
        1 => Quat::new(a, big, b, c),
        2 => Quat::new(a, b, big, c),
        _ => Quat::new(a, b, c, big),
    }
}

/// The smallest-three split of `q`: the index of the largest-magnitude
/// component and the other three (in component order) of the quaternion
/// whose largest component is positive.
#[must_use]
pub fn smallest_three_split(q: Quat) -> (u32, [f32; 3]) {
    let c = q.to_array();
    let mut big = 0;
    for i in 1..4 {
        if c[i].abs() > c[big].abs() {
            big = i;
        }
    }
    let sign = if c[big] < 0.0 { -1.0 } else { 1.0 };
    let mut kept = [0.0; 3];
    let mut n = 0;
    for (i, v) in c.iter().enumerate() {
        if i != big {
            kept[n] = v * sign;
            n += 1;
        }
    }
    (big as u32, kept)
}

/// Quantizes a kept smallest-three component over the fixed range
/// `[−1/√2, 1/√2]` at `bits` bits: `round((c + 1/√2) / √2 · (2^bits − 1))`
/// (no range reduction; the documented worked example).
#[must_use]
pub fn smallest_three_code(c: f32, bits: u8) -> u32 {
    let max = ((1u64 << bits.min(31)) - 1) as f32;
    let h = core::f32::consts::FRAC_1_SQRT_2;
    libm::roundf(((c + h) / core::f32::consts::SQRT_2 * max).clamp(0.0, max)) as u32
}

/// The value of a code made by [`smallest_three_code`].
#[must_use]
pub fn smallest_three_decode(code: u32, bits: u8) -> f32 {
    let max = ((1u64 << bits.min(31)) - 1) as f32;
    code as f32 / max * core::f32::consts::SQRT_2 - core::f32::consts::FRAC_1_SQRT_2
}

/// The sections of a compressed clip, as the compressor produced them.
#[derive(Clone, Copy, Debug)]
pub struct CompressedParts<'a> {
    /// Frames per second (finite, > 0).
    pub sample_rate: f32,
    /// Joints (1..=`MAX_JOINTS`).
    pub joint_count: usize,
    /// Frames (≥ 1).
    pub frame_count: usize,
    /// Frames per segment (1..=65536).
    pub segment_frames: usize,
    /// Rotation format.
    pub rotation: RotationFormat,
    /// What default tracks hold.
    pub defaults: Defaults,
    /// `3 × joint_count` kind bytes (`KIND_*`), translation, rotation, scale per joint.
    pub kinds: &'a [u8],
    /// Constant values in track order (3 floats for translation and scale, 4 for rotation).
    pub constants: &'a [f32],
    /// Per animated track, min and extent of each of its 3 components.
    pub clip_ranges: &'a [f32],
    /// Per segment, per animated track, its bit rate.
    pub rates: &'a [u8],
    /// Per segment, per animated track, 8-bit min and extent of each component.
    pub segment_ranges: &'a [u8],
    /// The bit stream (without padding), segment after segment.
    pub data: &'a [u8],
    /// Clip name.
    pub name: &'a str,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Layout {
    kinds: usize,
    constants: usize,
    clip_ranges: usize,
    seg_table: usize,
    rates: usize,
    seg_ranges: usize,
    data: usize,
    name: usize,
    total: usize,
}

fn align16(x: usize) -> Option<usize> {
    x.checked_add(15).map(|v| v & !15)
}

impl Layout {
    /// The canonical layout for these counts, or `None` on overflow.
    fn new(
        joints: usize,
        constants: usize,
        animated: usize,
        segments: usize,
        data_bytes: usize,
        name_len: usize,
    ) -> Option<Layout> {
        let kinds = HEADER_BYTES;
        let constants_at = align16(kinds + 3 * joints)?;
        let clip_ranges = align16(constants_at.checked_add(constants.checked_mul(4)?)?)?;
        let seg_table = align16(clip_ranges.checked_add(animated.checked_mul(24)?)?)?;
        let rates = align16(seg_table.checked_add(segments.checked_mul(8)?)?)?;
        let per_seg = segments.checked_mul(animated)?;
        let seg_ranges = align16(rates.checked_add(per_seg)?)?;
        let data = align16(seg_ranges.checked_add(per_seg.checked_mul(6)?)?)?;
        let name = align16(data.checked_add(data_bytes)?)?;
        let total = align16(name.checked_add(name_len)?)?;
        u32::try_from(total).ok()?;
        Some(Layout {
            kinds,
            constants: constants_at,
            clip_ranges,
            seg_table,
            rates,
            seg_ranges,
            data,
            name,
            total,
        })
    }
}

fn corrupt(what: &'static str) -> Error {
    Error::Corrupt { what }
}

/// Bytes [`write_compressed`] needs for these parts (a multiple of 16), or
/// `None` when the counts overflow the format.
#[must_use]
pub fn compressed_size(parts: &CompressedParts<'_>) -> Option<usize> {
    let segments = parts.frame_count.div_ceil(parts.segment_frames.max(1));
    let animated = parts.clip_ranges.len() / 6;
    Layout::new(
        parts.joint_count,
        parts.constants.len(),
        animated,
        segments,
        parts.data.len() + READ_PADDING,
        parts.name.len(),
    )
    .map(|l| l.total)
}

/// Writes a compressed clip container into `out` (16-byte aligned) and
/// returns the bytes written. The segment table is computed from the rates.
/// The result is not validated here: view it with [`CompressedClip::from_bytes`].
///
/// # Errors
/// [`Error::BadLength`] when a section's length does not match the counts,
/// [`Error::Corrupt`] when the counts overflow the format, [`Error::BufferTooSmall`],
/// [`Error::Misaligned`].
pub fn write_compressed(parts: &CompressedParts<'_>, out: &mut [u8]) -> Result<usize, Error> {
    let p = parts;
    check_len("kinds", 3 * p.joint_count, p.kinds.len())?;
    if p.segment_frames == 0 || p.frame_count == 0 {
        return Err(Error::InvalidSampleRate);
    }
    let animated = p.kinds.iter().filter(|&&k| k == KIND_ANIMATED).count();
    check_len("clip ranges", 6 * animated, p.clip_ranges.len())?;
    let segments = p.frame_count.div_ceil(p.segment_frames);
    check_len("rates", segments * animated, p.rates.len())?;
    check_len(
        "segment ranges",
        segments * animated * 6,
        p.segment_ranges.len(),
    )?;
    let data_bytes = p.data.len() + READ_PADDING;
    let l = Layout::new(
        p.joint_count,
        p.constants.len(),
        animated,
        segments,
        data_bytes,
        p.name.len(),
    )
    .ok_or(corrupt("compressed clip exceeds 4 GiB"))?;
    if out.len() < l.total {
        return Err(Error::BufferTooSmall {
            needed: l.total,
            actual: out.len(),
        });
    }
    if out.as_ptr().align_offset(16) != 0 {
        return Err(Error::Misaligned);
    }
    let out = &mut out[..l.total];
    out.fill(0);
    let mut put = |at: usize, v: u32| out[at..at + 4].copy_from_slice(&v.to_le_bytes());
    put(8, COMPRESSED_VERSION);
    put(12, p.joint_count as u32);
    put(16, p.frame_count as u32);
    put(20, p.sample_rate.to_bits());
    put(24, l.total as u32);
    put(28, p.name.len() as u32);
    put(32, p.segment_frames as u32);
    put(36, p.rotation.code());
    put(40, matches!(p.defaults, Defaults::RestPose) as u32);
    put(44, animated as u32);
    put(48, p.constants.len() as u32);
    put(52, data_bytes as u32);
    out[..8].copy_from_slice(&COMPRESSED_MAGIC);
    out[l.kinds..l.kinds + p.kinds.len()].copy_from_slice(p.kinds);
    for (i, v) in p.constants.iter().enumerate() {
        let at = l.constants + 4 * i;
        out[at..at + 4].copy_from_slice(&v.to_le_bytes());
    }
    for (i, v) in p.clip_ranges.iter().enumerate() {
        let at = l.clip_ranges + 4 * i;
        out[at..at + 4].copy_from_slice(&v.to_le_bytes());
    }
    // Segment table from the rates.
    let kinds_rot: heapless::Vec<bool, { 3 * MAX_JOINTS }> = p
        .kinds
        .iter()
        .enumerate()
        .filter(|(_, &k)| k == KIND_ANIMATED)
        .map(|(i, _)| i % 3 == 1)
        .collect();
    let mut bit = 0u64;
    for s in 0..segments {
        let rates = &p.rates[s * animated..(s + 1) * animated];
        let fb: u64 = rates
            .iter()
            .zip(&kinds_rot)
            .map(|(&r, &rot)| u64::from(track_frame_bits(rot, p.rotation, r)))
            .sum();
        let frames = (p.frame_count - s * p.segment_frames).min(p.segment_frames) as u64;
        let at = l.seg_table + 8 * s;
        let (Ok(b32), Ok(fb32)) = (u32::try_from(bit), u32::try_from(fb)) else {
            return Err(corrupt("bit stream exceeds 4 Gbit"));
        };
        out[at..at + 4].copy_from_slice(&b32.to_le_bytes());
        out[at + 4..at + 8].copy_from_slice(&fb32.to_le_bytes());
        bit += frames * fb;
    }
    out[l.rates..l.rates + p.rates.len()].copy_from_slice(p.rates);
    out[l.seg_ranges..l.seg_ranges + p.segment_ranges.len()].copy_from_slice(p.segment_ranges);
    out[l.data..l.data + p.data.len()].copy_from_slice(p.data);
    out[l.name..l.name + p.name.len()].copy_from_slice(p.name.as_bytes());
    Ok(l.total)
}

/// A validated view of a compressed clip container.
#[derive(Clone, Copy, Debug)]
pub struct CompressedClip<'a> {
    sample_rate: f32,
    joint_count: usize,
    frame_count: usize,
    segment_frames: usize,
    rotation: RotationFormat,
    defaults: Defaults,
    animated: usize,
    total: usize,
    kinds: &'a [u8],
    constants: &'a [f32],
    clip_ranges: &'a [f32],
    seg_table: &'a [u32],
    rates: &'a [u8],
    seg_ranges: &'a [u8],
    data: &'a [u8],
    name: &'a str,
}

/// Reads `n ≤ 32` bits at bit `bit` (little-endian bit order).
#[inline(always)]
fn read_bits(data: &[u8], bit: u64, n: u32) -> u32 {
    let byte = (bit >> 3) as usize;
    let word = match data.get(byte..byte + 8) {
        Some(&[a, b, c, d, e, f, g, h]) => u64::from_le_bytes([a, b, c, d, e, f, g, h]),
        _ => 0,
    };
    ((word >> (bit & 7)) & ((1u64 << n) - 1)) as u32
}

/// One track's bit rate and dequantization constants in one segment.
#[derive(Clone, Copy)]
struct Params {
    bits: u8,
    lo: [f32; 3],
    step: [f32; 3],
}

/// Where one frame's bits start, and that segment's rates and ranges.
#[derive(Clone, Copy)]
struct Cursor<'a> {
    bit: u64,
    rates: &'a [u8],
    ranges: &'a [u8],
}

impl<'a> CompressedClip<'a> {
    /// Validates a compressed clip container once and views it in place (zero copy).
    ///
    /// `bytes` must be 16-byte aligned; trailing bytes are ignored. Checks the
    /// header, the canonical layout, every kind byte, constant, clip range,
    /// segment offset, bit rate and segment range, and every raw (`RAW_BITS`)
    /// value, so sampling cannot read out of bounds or produce NaN from data.
    /// Cost is linear in the number of segments times animated tracks (plus
    /// the raw values).
    ///
    /// # Errors
    /// [`Error::Truncated`], [`Error::BadMagic`], [`Error::UnsupportedVersion`],
    /// [`Error::Misaligned`], [`Error::TooManyJoints`], [`Error::NoJoints`],
    /// [`Error::InvalidSampleRate`], [`Error::Corrupt`], [`Error::NonFinite`],
    /// [`Error::InvalidName`], [`Error::UnsupportedPlatform`].
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, Error> {
        check_preamble(bytes, &COMPRESSED_MAGIC, COMPRESSED_VERSION, HEADER_BYTES)?;
        let joints = le_u32(bytes, 12) as usize;
        let frames = le_u32(bytes, 16) as usize;
        let rate = f32::from_bits(le_u32(bytes, 20));
        let total = le_u32(bytes, 24) as usize;
        let name_len = le_u32(bytes, 28) as usize;
        let seg_frames = le_u32(bytes, 32) as usize;
        let rotation = match le_u32(bytes, 36) {
            0 => RotationFormat::DropW,
            1 => RotationFormat::SmallestThree,
            _ => return Err(corrupt("unknown rotation format")),
        };
        let defaults = match le_u32(bytes, 40) {
            0 => Defaults::Identity,
            1 => Defaults::RestPose,
            _ => return Err(corrupt("unknown defaults mode")),
        };
        let animated = le_u32(bytes, 44) as usize;
        let n_constants = le_u32(bytes, 48) as usize;
        let data_bytes = le_u32(bytes, 52) as usize;
        if bytes[56..HEADER_BYTES].iter().any(|&b| b != 0) {
            return Err(corrupt("reserved header bytes are not zero"));
        }
        if joints == 0 {
            return Err(Error::NoJoints);
        }
        if joints > MAX_JOINTS {
            return Err(Error::TooManyJoints { count: joints });
        }
        if frames == 0 || !(rate.is_finite() && rate > 0.0) {
            return Err(Error::InvalidSampleRate);
        }
        if seg_frames == 0 || seg_frames > 65536 {
            return Err(corrupt("segment frames out of range"));
        }
        if animated > 3 * joints || n_constants > 10 * joints {
            return Err(corrupt("track counts exceed the joints"));
        }
        let segments = frames.div_ceil(seg_frames);
        let l = Layout::new(
            joints,
            n_constants,
            animated,
            segments,
            data_bytes,
            name_len,
        )
        .ok_or(corrupt("compressed clip size overflows"))?;
        if total != l.total {
            return Err(corrupt("total size does not match the counts"));
        }
        if bytes.len() < total {
            return Err(Error::Truncated {
                needed: total,
                actual: bytes.len(),
            });
        }
        let kinds = &bytes[l.kinds..l.kinds + 3 * joints];
        let (mut n_anim, mut n_const) = (0usize, 0usize);
        for (i, &k) in kinds.iter().enumerate() {
            let width = if i % 3 == 1 { 4 } else { 3 };
            match k {
                KIND_DEFAULT => {}
                KIND_CONSTANT => n_const += width,
                KIND_ANIMATED => n_anim += 1,
                _ => return Err(corrupt("unknown track kind")),
            }
        }
        if n_anim != animated || n_const != n_constants {
            return Err(corrupt("track kinds do not match the header's counts"));
        }
        let cast_f32 = |at: usize, n: usize| -> Result<&'a [f32], Error> {
            bytemuck::try_cast_slice(&bytes[at..at + 4 * n]).map_err(|_| corrupt("section cast"))
        };
        let constants = cast_f32(l.constants, n_constants)?;
        let clip_ranges = cast_f32(l.clip_ranges, 6 * animated)?;
        let seg_table: &[u32] =
            bytemuck::try_cast_slice(&bytes[l.seg_table..l.seg_table + 8 * segments])
                .map_err(|_| corrupt("section cast"))?;
        let rates = &bytes[l.rates..l.rates + segments * animated];
        let seg_ranges = &bytes[l.seg_ranges..l.seg_ranges + segments * animated * 6];
        let data = &bytes[l.data..l.data + data_bytes];
        let name = core::str::from_utf8(&bytes[l.name..l.name + name_len])
            .map_err(|_| Error::InvalidName { joint: 0 })?;
        // Constants: finite; rotations of sane length.
        if !crate::soa::all_finite(constants) {
            return Err(Error::NonFinite {
                what: "constant track value",
            });
        }
        let mut c = 0;
        for (i, &k) in kinds.iter().enumerate() {
            if k == KIND_CONSTANT {
                let width = if i % 3 == 1 { 4 } else { 3 };
                if width == 4 {
                    let q = constants.get(c..c + 4).unwrap_or(&[]);
                    let n2: f32 = q.iter().map(|v| v * v).sum();
                    if !(0.25..=4.0).contains(&n2) {
                        return Err(corrupt("constant rotation is not near unit length"));
                    }
                }
                c += width;
            }
        }
        // Clip ranges: finite, extent >= 0, rotations inside [-2, 2].
        if !crate::soa::all_finite(clip_ranges) {
            return Err(Error::NonFinite { what: "clip range" });
        }
        let mut track = 0;
        for (i, &k) in kinds.iter().enumerate() {
            if k != KIND_ANIMATED {
                continue;
            }
            let r = clip_ranges.get(6 * track..6 * track + 6).unwrap_or(&[]);
            for pair in r.chunks_exact(2) {
                let (min, ext) = (pair[0], pair[1]);
                let max = min + ext;
                if !(ext >= 0.0 && max.is_finite()) {
                    return Err(corrupt("clip range extent"));
                }
                if i % 3 == 1 && !(min >= -2.0 && max <= 2.0) {
                    return Err(corrupt("rotation range outside [-2, 2]"));
                }
            }
            track += 1;
        }
        // Segment ranges stay inside the clip range; rates are valid.
        if seg_ranges
            .chunks_exact(2)
            .any(|p| u16::from(p[0]) + u16::from(p[1]) > 255)
        {
            return Err(corrupt("segment range exceeds the clip range"));
        }
        if rates
            .iter()
            .any(|&r| r > MAX_QUANTIZED_BITS && r != RAW_BITS)
        {
            return Err(corrupt("bit rate out of range"));
        }
        // Segment table: canonical offsets and frame sizes; the stream fits.
        let is_rot: heapless::Vec<bool, { 3 * MAX_JOINTS }> = kinds
            .iter()
            .enumerate()
            .filter(|(_, &k)| k == KIND_ANIMATED)
            .map(|(i, _)| i % 3 == 1)
            .collect();
        let mut bit = 0u64;
        for s in 0..segments {
            let r = rates.get(s * animated..(s + 1) * animated).unwrap_or(&[]);
            let fb: u64 = r
                .iter()
                .zip(&is_rot)
                .map(|(&r, &rot)| u64::from(track_frame_bits(rot, rotation, r)))
                .sum();
            let first = seg_table.get(2 * s).copied().unwrap_or(u32::MAX);
            let stored_fb = seg_table.get(2 * s + 1).copied().unwrap_or(u32::MAX);
            if u64::from(first) != bit || u64::from(stored_fb) != fb {
                return Err(corrupt("segment table does not match the bit rates"));
            }
            let n = (frames - s * seg_frames).min(seg_frames) as u64;
            bit += n * fb;
        }
        if bit.div_ceil(8) + READ_PADDING as u64 != data_bytes as u64 {
            return Err(corrupt("bit stream size does not match the segments"));
        }
        let clip = CompressedClip {
            sample_rate: rate,
            joint_count: joints,
            frame_count: frames,
            segment_frames: seg_frames,
            rotation,
            defaults,
            animated,
            total,
            kinds,
            constants,
            clip_ranges,
            seg_table,
            rates,
            seg_ranges,
            data,
            name,
        };
        if rates.contains(&RAW_BITS) {
            clip.check_raw_values()?;
        }
        Ok(clip)
    }

    /// Checks every verbatim value: finite, rotations near unit length.
    fn check_raw_values(&self) -> Result<(), Error> {
        for f in 0..self.frame_count {
            let mut cur = self.cursor(f);
            let mut k = 0;
            for (i, &kind) in self.kinds.iter().enumerate() {
                if kind != KIND_ANIMATED {
                    continue;
                }
                let rot = i % 3 == 1;
                let r = cur.rates.get(k).copied().unwrap_or(0);
                if r == RAW_BITS {
                    let n = if rot { 4 } else { 3 };
                    let mut v = [0.0f32; 4];
                    for x in v.iter_mut().take(n) {
                        *x = f32::from_bits(read_bits(self.data, cur.bit, 32));
                        cur.bit += 32;
                    }
                    if !crate::soa::all_finite(&v) {
                        return Err(Error::NonFinite {
                            what: "raw track value",
                        });
                    }
                    let n2: f32 = v.iter().map(|x| x * x).sum();
                    if rot && !(0.25..=4.0).contains(&n2) {
                        return Err(corrupt("raw rotation is not near unit length"));
                    }
                } else {
                    cur.bit += u64::from(track_frame_bits(rot, self.rotation, r));
                }
                k += 1;
            }
        }
        Ok(())
    }

    /// The cursor at the start of frame `f` (validated: `f < frame_count`).
    #[inline]
    fn cursor(&self, f: usize) -> Cursor<'a> {
        let s = f / self.segment_frames;
        let local = (f - s * self.segment_frames) as u64;
        let first = u64::from(self.seg_table.get(2 * s).copied().unwrap_or(0));
        let fb = u64::from(self.seg_table.get(2 * s + 1).copied().unwrap_or(0));
        let a = self.animated;
        Cursor {
            bit: first + local * fb,
            rates: self.rates.get(s * a..(s + 1) * a).unwrap_or(&[]),
            ranges: self
                .seg_ranges
                .get(6 * s * a..6 * (s + 1) * a)
                .unwrap_or(&[]),
        }
    }

    /// The rate and dequantization constants of animated track `k` in the
    /// segment of `cur`.
    #[inline(always)]
    fn params(&self, cur: &Cursor<'_>, k: usize) -> Params {
        let bits = cur.rates.get(k).copied().unwrap_or(0);
        let cr = match self.clip_ranges.get(6 * k..6 * k + 6) {
            Some(&[a, b, c, d, e, f]) => [a, b, c, d, e, f],
            _ => [0.0; 6],
        };
        let sr = match cur.ranges.get(6 * k..6 * k + 6) {
            Some(&[a, b, c, d, e, f]) => [a, b, c, d, e, f],
            _ => [0; 6],
        };
        let mut p = Params {
            bits,
            lo: [0.0; 3],
            step: [0.0; 3],
        };
        for i in 0..3 {
            (p.lo[i], p.step[i]) =
                dequantize_params(cr[2 * i], cr[2 * i + 1], sr[2 * i], sr[2 * i + 1], bits);
        }
        p
    }

    /// The constants of track `k` for both cursors (shared when both frames
    /// lie in one segment, which is 15 times in 16 for 16-frame segments).
    #[inline(always)]
    fn params_pair(&self, ca: &Cursor<'_>, cb: &Cursor<'_>, k: usize) -> (Params, Params) {
        let pa = self.params(ca, k);
        if core::ptr::eq(ca.rates, cb.rates) {
            (pa, pa)
        } else {
            (pa, self.params(cb, k))
        }
    }

    /// Reads 3 (or, verbatim, `raw` ≤ 4) components at `cur`, advancing it.
    #[inline(always)]
    fn read(&self, cur: &mut Cursor<'_>, p: &Params, raw: usize) -> [f32; 4] {
        let mut v = [0.0f32; 4];
        if p.bits == RAW_BITS {
            for x in v.iter_mut().take(raw) {
                *x = f32::from_bits(read_bits(self.data, cur.bit, 32));
                cur.bit += 32;
            }
            return v;
        }
        let n = u32::from(p.bits);
        for ((x, lo), step) in v.iter_mut().zip(p.lo).zip(p.step) {
            let q = read_bits(self.data, cur.bit, n);
            cur.bit += u64::from(n);
            *x = lo + step * q as f32;
        }
        v
    }

    /// Decodes animated translation or scale track `k` at both cursors.
    #[inline(always)]
    fn decode3_pair(
        &self,
        ca: &mut Cursor<'_>,
        cb: &mut Cursor<'_>,
        k: usize,
    ) -> ([f32; 4], [f32; 4]) {
        let (pa, pb) = self.params_pair(ca, cb, k);
        (self.read(ca, &pa, 3), self.read(cb, &pb, 3))
    }

    /// Decodes animated rotation track `k` at both cursors.
    #[inline(always)]
    fn rotation_pair(
        &self,
        ca: &mut Cursor<'_>,
        cb: &mut Cursor<'_>,
        k: usize,
    ) -> ([f32; 4], [f32; 4]) {
        let (pa, pb) = self.params_pair(ca, cb, k);
        (self.read_rotation(ca, &pa), self.read_rotation(cb, &pb))
    }

    #[inline(always)]
    fn read_rotation(&self, cur: &mut Cursor<'_>, p: &Params) -> [f32; 4] {
        if p.bits == RAW_BITS {
            return self.read(cur, p, 4);
        }
        match self.rotation {
            RotationFormat::DropW => {
                let [x, y, z, _] = self.read(cur, p, 3);
                drop_w_rotation(x, y, z).to_array()
            }
            RotationFormat::SmallestThree => {
                let idx = read_bits(self.data, cur.bit, 2);
                cur.bit += 2;
                let [a, b, c, _] = self.read(cur, p, 3);
                smallest_three_rotation(idx, a, b, c).to_array()
            }
        }
    }

    /// Samples at time `t` (seconds) into `out`; default tracks are identity.
    ///
    /// Semantics match [`crate::clip::RawClip::sample`]: the two bracketing
    /// frames are found in O(1), translations and scales are lerped and
    /// rotations nlerped with sign alignment. NaN or infinite `t` is an error;
    /// negative and past-the-end times follow `mode`. Padding lanes are
    /// identity.
    ///
    /// # Errors
    /// [`Error::BadLength`] unless `out.len() == soa_count()`, or naming the
    /// `"rest pose"` when the clip was compressed with [`Defaults::RestPose`]
    /// (use [`CompressedClip::sample_with_rest`]); [`Error::NonFinite`] for a
    /// non-finite `t`.
    pub fn sample(&self, t: f32, mode: TimeMode, out: &mut [SoaTransform]) -> Result<(), Error> {
        if self.defaults == Defaults::RestPose {
            return Err(Error::BadLength {
                buffer: "rest pose",
                expected: self.soa_count(),
                actual: 0,
            });
        }
        self.sample_impl(t, mode, None, out)
    }

    /// Samples at time `t` like [`CompressedClip::sample`], taking default
    /// tracks from `rest` (the skeleton's rest pose, `soa_count()` blocks)
    /// when the clip was compressed with [`Defaults::RestPose`].
    ///
    /// # Errors
    /// [`Error::BadLength`] unless `out` and `rest` have `soa_count()` blocks,
    /// [`Error::NonFinite`] for a non-finite `t`.
    pub fn sample_with_rest(
        &self,
        t: f32,
        mode: TimeMode,
        rest: &[SoaTransform],
        out: &mut [SoaTransform],
    ) -> Result<(), Error> {
        check_len("rest pose", self.soa_count(), rest.len())?;
        let rest = match self.defaults {
            Defaults::RestPose => Some(rest),
            Defaults::Identity => None,
        };
        self.sample_impl(t, mode, rest, out)
    }

    /// The two bracketing frames and the interpolation factor for time `t`
    /// (as [`crate::clip::RawClip::locate`]).
    ///
    /// # Errors
    /// [`Error::NonFinite`] when `t` is NaN or infinite.
    pub fn locate(&self, t: f32, mode: TimeMode) -> Result<(usize, usize, f32), Error> {
        locate_frames(self.frame_count, self.sample_rate, t, mode)
    }

    fn sample_impl(
        &self,
        t: f32,
        mode: TimeMode,
        rest: Option<&[SoaTransform]>,
        out: &mut [SoaTransform],
    ) -> Result<(), Error> {
        check_len("output", self.soa_count(), out.len())?;
        let (i0, i1, alpha) = self.locate(t, mode)?;
        self.decode_blend(i0, i1, alpha, rest, out);
        Ok(())
    }

    /// Decodes frames `i0` and `i1` (validated indices) block by block
    /// straight into SoA lanes and interpolates them by `alpha`.
    fn decode_blend(
        &self,
        i0: usize,
        i1: usize,
        alpha: f32,
        rest: Option<&[SoaTransform]>,
        out: &mut [SoaTransform],
    ) {
        let mut ca = self.cursor(i0);
        let mut cb = self.cursor(i1);
        let (mut k, mut c) = (0usize, 0usize);
        let identity: [[f32; 4]; 10] = bytemuck::cast(SoaTransform::IDENTITY);
        for (b, o) in out.iter_mut().enumerate() {
            // Component-major lanes of frames a and b (t xyz, r xyzw, s xyz),
            // starting from the defaults: the rest block or identity.
            let base = match rest.and_then(|r| r.get(b)) {
                Some(r) => bytemuck::cast(*r),
                None => identity,
            };
            let mut fa: [[f32; 4]; 10] = base;
            let mut fb = base;
            let kinds = self.kinds.get(3 * LANES * b..).unwrap_or(&[]);
            for (lane, kj) in kinds.chunks_exact(3).take(LANES).enumerate() {
                let &[kt, kr, ks] = kj else { continue };
                if kt | kr | ks == KIND_DEFAULT {
                    continue;
                }
                for (first, kind) in [(0usize, kt), (3, kr), (7, ks)] {
                    match kind {
                        KIND_CONSTANT if first == 3 => {
                            let v = match self.constants.get(c..c + 4) {
                                Some(&[x, y, z, w]) => [x, y, z, w],
                                _ => [0.0, 0.0, 0.0, 1.0],
                            };
                            c += 4;
                            put(&mut fa, &mut fb, first, lane, &v, &v);
                        }
                        KIND_CONSTANT => {
                            let v = match self.constants.get(c..c + 3) {
                                Some(&[x, y, z]) => [x, y, z],
                                _ => [0.0; 3],
                            };
                            c += 3;
                            put(&mut fa, &mut fb, first, lane, &v, &v);
                        }
                        KIND_ANIMATED if first == 3 => {
                            let (qa, qb) = self.rotation_pair(&mut ca, &mut cb, k);
                            k += 1;
                            put(&mut fa, &mut fb, first, lane, &qa, &qb);
                        }
                        KIND_ANIMATED => {
                            let (va, vb) = self.decode3_pair(&mut ca, &mut cb, k);
                            k += 1;
                            put(&mut fa, &mut fb, first, lane, &va[..3], &vb[..3]);
                        }
                        _ => {}
                    }
                }
            }
            let a: SoaTransform = bytemuck::cast(fa);
            let bb: SoaTransform = bytemuck::cast(fb);
            interpolate(
                core::slice::from_ref(&a),
                core::slice::from_ref(&bb),
                alpha,
                core::slice::from_mut(o),
            );
        }
    }

    /// Decodes stored frame `f` exactly (no interpolation) into `out`.
    ///
    /// `rest` is only read when the clip was compressed with
    /// [`Defaults::RestPose`] (pass `&[]` otherwise).
    ///
    /// # Errors
    /// [`Error::JointOutOfRange`] naming `f` when `f >= frame_count()`,
    /// [`Error::BadLength`] for `out`, or for `rest` when it is needed.
    pub fn decode_frame(
        &self,
        f: usize,
        rest: &[SoaTransform],
        out: &mut [SoaTransform],
    ) -> Result<(), Error> {
        if f >= self.frame_count {
            return Err(Error::JointOutOfRange {
                joint: f,
                count: self.frame_count,
            });
        }
        check_len("output", self.soa_count(), out.len())?;
        let rest = match self.defaults {
            Defaults::RestPose => {
                check_len("rest pose", self.soa_count(), rest.len())?;
                Some(rest)
            }
            Defaults::Identity => None,
        };
        self.decode_blend(f, f, 0.0, rest, out);
        Ok(())
    }

    /// Frames per second.
    #[inline]
    #[must_use]
    pub fn sample_rate(&self) -> f32 {
        self.sample_rate
    }

    /// Number of joints.
    #[inline]
    #[must_use]
    pub fn joint_count(&self) -> usize {
        self.joint_count
    }

    /// SoA blocks per pose.
    #[inline]
    #[must_use]
    pub fn soa_count(&self) -> usize {
        soa_count(self.joint_count)
    }

    /// Number of stored frames.
    #[inline]
    #[must_use]
    pub fn frame_count(&self) -> usize {
        self.frame_count
    }

    /// Duration in seconds: `(frame_count - 1) / sample_rate`.
    #[inline]
    #[must_use]
    pub fn duration(&self) -> f32 {
        (self.frame_count - 1) as f32 / self.sample_rate
    }

    /// Frames per segment.
    #[inline]
    #[must_use]
    pub fn segment_frames(&self) -> usize {
        self.segment_frames
    }

    /// Number of segments.
    #[inline]
    #[must_use]
    pub fn segment_count(&self) -> usize {
        self.frame_count.div_ceil(self.segment_frames)
    }

    /// Rotation format.
    #[inline]
    #[must_use]
    pub fn rotation_format(&self) -> RotationFormat {
        self.rotation
    }

    /// What default tracks hold.
    #[inline]
    #[must_use]
    pub fn defaults(&self) -> Defaults {
        self.defaults
    }

    /// Number of animated tracks.
    #[inline]
    #[must_use]
    pub fn animated_track_count(&self) -> usize {
        self.animated
    }

    /// The kind bytes (`KIND_*`) of joint `j`'s translation, rotation and scale tracks.
    #[inline]
    #[must_use]
    pub fn track_kinds(&self, j: usize) -> Option<[u8; 3]> {
        match self.kinds.get(3 * j..3 * j + 3) {
            Some(&[a, b, c]) => Some([a, b, c]),
            _ => None,
        }
    }

    /// The bit rates of every animated track in segment `s`.
    #[inline]
    #[must_use]
    pub fn segment_rates(&self, s: usize) -> Option<&'a [u8]> {
        self.rates.get(s * self.animated..(s + 1) * self.animated)
    }

    /// Size of the container in bytes.
    #[inline]
    #[must_use]
    pub fn size_bytes(&self) -> usize {
        self.total
    }

    /// The clip's name.
    #[inline]
    #[must_use]
    pub fn name(&self) -> &'a str {
        self.name
    }
}

/// Writes `va`/`vb` into lane `lane` of components `first..` of two blocks.
#[inline(always)]
fn put(
    fa: &mut [[f32; 4]; 10],
    fb: &mut [[f32; 4]; 10],
    first: usize,
    lane: usize,
    va: &[f32],
    vb: &[f32],
) {
    for (i, (&a, &b)) in va.iter().zip(vb).enumerate() {
        if let Some(x) = fa.get_mut(first + i) {
            x[lane & 3] = a;
        }
        if let Some(x) = fb.get_mut(first + i) {
            x[lane & 3] = b;
        }
    }
}

/// Scalar reference implementations: the readable specification.
pub mod reference {
    use super::{CompressedClip, Defaults};
    use crate::clip::TimeMode;
    use crate::error::Error;
    use crate::math::{Quat, Transform, Vec3};
    use crate::soa::{check_len, get_joint, SoaTransform, LANES};

    impl CompressedClip<'_> {
        /// Joint `j`'s transform at frame `f` (validated indices), decoded one
        /// value at a time by walking the frame's bits from its start.
        fn joint_at(&self, f: usize, j: usize, rest: Option<&[SoaTransform]>) -> Transform {
            let mut t = match rest.and_then(|r| get_joint(r, j)) {
                Some(d) => d,
                None => Transform::IDENTITY,
            };
            let mut cur = self.cursor(f);
            let (mut k, mut c) = (0usize, 0usize);
            for (i, &kind) in self.kinds.iter().enumerate().take(3 * j + 3) {
                let width = if i % 3 == 1 { 4 } else { 3 };
                let mine = i / 3 == j;
                match kind {
                    super::KIND_CONSTANT => {
                        if mine {
                            let v = self.constants.get(c..c + width).unwrap_or(&[0.0; 4]);
                            set(&mut t, i % 3, v);
                        }
                        c += width;
                    }
                    super::KIND_ANIMATED => {
                        let p = self.params(&cur, k);
                        let v = if i % 3 == 1 {
                            self.read_rotation(&mut cur, &p)
                        } else {
                            self.read(&mut cur, &p, 3)
                        };
                        if mine {
                            set(&mut t, i % 3, &v);
                        }
                        k += 1;
                    }
                    _ => {}
                }
            }
            t
        }
    }

    fn set(t: &mut Transform, track: usize, v: &[f32]) {
        let g = |i: usize| v.get(i).copied().unwrap_or(0.0);
        match track {
            0 => t.translation = Vec3::new(g(0), g(1), g(2)),
            1 => t.rotation = Quat::new(g(0), g(1), g(2), g(3)),
            _ => t.scale = Vec3::new(g(0), g(1), g(2)),
        }
    }

    /// Scalar twin of [`CompressedClip::sample_with_rest`]: every joint of
    /// both bracketing frames decoded on its own, then lerp / nlerp.
    ///
    /// # Errors
    /// As [`CompressedClip::sample_with_rest`].
    pub fn sample(
        clip: &CompressedClip<'_>,
        t: f32,
        mode: TimeMode,
        rest: &[SoaTransform],
        out: &mut [SoaTransform],
    ) -> Result<(), Error> {
        check_len("rest pose", clip.soa_count(), rest.len())?;
        check_len("output", clip.soa_count(), out.len())?;
        let (i0, i1, alpha) = clip.locate(t, mode)?;
        let rest = (clip.defaults() == Defaults::RestPose).then_some(rest);
        for j in 0..out.len() * LANES {
            let (b, l) = (j / LANES, j % LANES);
            let tr = if j < clip.joint_count() {
                let x = clip.joint_at(i0, j, rest);
                let y = clip.joint_at(i1, j, rest);
                Transform {
                    translation: x.translation.lerp(y.translation, alpha),
                    rotation: x.rotation.nlerp(y.rotation, alpha),
                    scale: x.scale.lerp(y.scale, alpha),
                }
            } else {
                Transform::IDENTITY
            };
            if let Some(o) = out.get_mut(b) {
                o.set(l, &tr);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smallest_three_worked_example() {
        // 30° about z: q = (0, 0, 0.2588, 0.9659); w is dropped.
        let q = Quat::new(0.0, 0.0, 0.258_819, 0.965_926);
        let (idx, kept) = smallest_three_split(q);
        assert_eq!(idx, 3);
        let codes = kept.map(|c| smallest_three_code(c, 10));
        assert_eq!(codes, [512, 512, 699]);
        let dec = codes.map(|c| smallest_three_decode(c, 10));
        assert!((dec[2] - 0.2592).abs() < 1e-4, "{dec:?}");
        assert!((dec[0] - 0.0007).abs() < 1e-4, "{dec:?}");
        let r = smallest_three_rotation(idx, dec[0], dec[1], dec[2]);
        assert!((r.w - 0.9658).abs() < 1e-4, "{r:?}");
        // Accurate small angle: 2·atan2(|v|, |w|) of the relative rotation.
        let d = q.conjugate() * r;
        let v = libm::sqrtf(d.x * d.x + d.y * d.y + d.z * d.z);
        let deg = (2.0 * libm::atan2f(v, libm::fabsf(d.w))).to_degrees();
        assert!((deg - 0.12).abs() < 0.01, "{deg}");
    }

    #[test]
    fn bit_reader_reads_across_bytes() {
        let data = [0b1010_1100u8, 0b0000_0011, 0, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(read_bits(&data, 2, 4), 0b1011);
        assert_eq!(read_bits(&data, 6, 4), 0b1110);
        assert_eq!(read_bits(&data, 0, 0), 0);
        // Past the end: zero, never a panic.
        assert_eq!(read_bits(&data, 80, 8), 0);
    }
}
