//! Compressed uniformly sampled clips: a zero-copy view and its sampling kernel.
//!
//! The data is laid out for the SoA pose: joints come in blocks of four
//! ([`crate::soa::LANES`]), and each block has three *block tracks*
//! (translation, rotation, scale) of four lanes each. A block track is
//! *default* (not stored: identity, or the skeleton's rest pose for clips
//! compressed with bind-pose stripping) or *stored*. A stored block track has
//! clip constants per lane and component, `min` and `unit` (as [`f32x4`]
//! vectors, so a lane-wise multiply-add dequantizes four joints at once), and
//! a 4-bit mask of its *animated* lanes; the other lanes are constant (their
//! value is `min`, `unit = 0`; a constant rotation lane also stores its `w`).
//! A stored block track without an animated lane (stored because its
//! constants are not the defaults) keeps only its constants, no units.
//!
//! Animated lanes are range-reduced per clip (`min`, `unit` = extent / 255)
//! and per segment of `segment_frames` frames (an 8-bit minimum and extent
//! in units), optionally minus a per-segment quadratic *trend* per component
//! (signed bytes `d` and `k`), then quantized at a bit rate chosen per lane
//! per segment
//! (`0..=23` bits per component, or [`RAW_BITS`]: the `f32` values stored
//! verbatim), less one bit for each component whose *drop* bit is set
//! ([`component_rates`]). A component's code `q` at local frame `i` of its
//! segment decodes to `min + unit · (((smin + step · q) + d · i/8) + k ·
//! i²/256)` ([`ComponentDecode::value`]). Rotations keep three components: x, y, z of the quaternion with
//! `w ≥ 0` ([`RotationFormat::DropW`]), or the three smallest with a 2-bit
//! index of the dropped largest one ([`RotationFormat::SmallestThree`]).
//!
//! Inside a segment the bits are frame-major: frame after frame, each frame
//! the animated lanes in block-track order (block, then translation, rotation,
//! scale, then lane), each lane's three codes next to each other (then the
//! smallest-three index). A frame starts at `segment_bit + local_frame ×
//! frame_bits`, so random access costs exactly what sequential playback
//! costs, and a lane's codes sit in one 64-bit window when its rate is at most
//! [`ONE_WINDOW_BITS`]: the sampler reads one window per lane, splits it into
//! three codes, assembles them into `u32x4` lanes and dequantizes each
//! component of four joints with one multiply-add (plus the trend's). On
//! x86-64 CPUs with AVX2 a faster decoder (`avx2`) with the same results
//! bit for bit takes over.
//!
//! # Container (version 5, little endian)
//! A 64-byte header (magic `SINEWCMP`, version, joint count, frame count,
//! sample rate, total size, name length, segment frames, rotation format,
//! defaults, clip constant floats `P`, animated lanes `A`, data bytes,
//! 8 reserved zero bytes), then these sections, each starting on a 16-byte
//! boundary: block-track kinds (`3 × blocks` bytes: 0 = default, or
//! `1 | animated_mask << 4`), clip constants (`P` `f32`: per stored block
//! track `min` and `unit` vectors of x, y, z, plus the `w` vector of
//! constant rotation lanes; a track without an animated lane stores only
//! its x, y, z and `w` vectors, [`track_param_floats`]), segment table (per
//! segment: `u32` first bit, `u32` bits per frame), segment metadata (per segment, per animated lane,
//! [`LANE_META_BYTES`] = 13 bytes: 8-bit minimum and extent of each
//! component, the rate byte (the bit rate in its low 5 bits, the three
//! components' drop bits above, see [`RATE_DROP_SHIFT`]), the signed trend
//! slope of each component, then its signed trend curvature), the
//! bit stream (plus [`READ_PADDING`] zero bytes), the name. The layout is
//! fully determined by the header's counts, and [`CompressedClip::from_bytes`]
//! checks every offset, count, constant, bit rate, range and raw value once;
//! sampling then never reads outside the validated sections.

use wide::{f32x4, i32x4, u32x4};

use crate::clip::{locate_frames, TimeMode};
use crate::container::{check_preamble, le_u32};
use crate::error::Error;
use crate::math::Quat;
use crate::skeleton::MAX_JOINTS;
use crate::soa::detail::{dot4, normalize, quat_mul_add, vec_mul_add, vec_scale};
use crate::soa::{check_len, soa_count, SoaQuat, SoaTransform, SoaVec3, LANES};

/// Magic bytes that open a compressed clip container.
pub const COMPRESSED_MAGIC: [u8; 8] = *b"SINEWCMP";

/// Compressed clip container version written and read by this build.
pub const COMPRESSED_VERSION: u32 = 5;

/// Size of the container header in bytes.
pub const HEADER_BYTES: usize = 64;

/// The bit rate that marks a lane stored as verbatim `f32` values in a
/// segment (3 values for translation and scale, 4 for rotation).
pub const RAW_BITS: u8 = 31;

/// The rate byte's bits below this hold the lane's bit rate (`0..=23`, or
/// [`RAW_BITS`]); the three bits from here are the component *drops*: bit
/// `RATE_DROP_SHIFT + c` set stores component `c` with one bit fewer.
pub const RATE_DROP_SHIFT: u32 = 5;

/// The largest quantized bit rate per component (codes stay exact in `f32`).
pub const MAX_QUANTIZED_BITS: u8 = 23;

/// The largest bit rate whose three codes (and smallest-three index) a lane
/// reads from one 64-bit window; higher rates read one window per component.
pub const ONE_WINDOW_BITS: u8 = 18;

/// Zero bytes after the bit stream, so the 8-byte reads of the bit reader
/// stay inside the data section.
pub const READ_PADDING: usize = 8;

/// Bytes of segment metadata per animated lane: 8-bit minimum and extent of
/// each component, the rate byte (bit rate and component drops), the signed
/// trend slope of each component, then its signed trend curvature.
pub const LANE_META_BYTES: usize = 13;

/// Index of the first trend byte in a lane's segment metadata.
pub const TREND_BYTE: usize = 7;

/// Trend slope per frame in clip units per trend step: a lane's component
/// at local frame `i` of its segment is `dequantize(..) + trend_slope · i`
/// with `trend_slope = trend · unit · TREND_SCALE`.
pub const TREND_SCALE: f32 = 0.125;

/// Index of the first trend curvature byte in a lane's segment metadata.
pub const CURVE_BYTE: usize = 10;

/// Trend curvature per frame² in clip units per curvature step (see
/// [`trend_curve`]).
pub const CURVE_SCALE: f32 = 1.0 / 256.0;

/// Index of the rate byte (bit rate and component drops, see
/// [`RATE_DROP_SHIFT`]) in a lane's segment metadata.
pub const RATE_BYTE: usize = 6;

/// Block-track kind byte: not stored, the default value.
pub const KIND_DEFAULT: u8 = 0;
/// Block-track kind bit: stored (animated lanes in bits 4..8).
pub const KIND_STORED: u8 = 1;

/// Constant floats of a stored translation or scale block track with an
/// animated lane: `min` and `unit` of x, y, z, 4 lanes each.
pub const VEC_PARAM_FLOATS: usize = 24;
/// Constant floats of a stored rotation block track with an animated lane:
/// `min` and `unit` of x, y, z, then the constant lanes' `w`.
pub const ROT_PARAM_FLOATS: usize = 28;
/// Constant floats of a stored translation or scale block track without an
/// animated lane (stored because its constants are not the defaults): the
/// x, y, z constants, 4 lanes each.
pub const CONST_VEC_PARAM_FLOATS: usize = 12;
/// Constant floats of a stored rotation block track without an animated
/// lane: the x, y, z and w constants.
pub const CONST_ROT_PARAM_FLOATS: usize = 16;

/// Constant floats of a stored block track (a rotation or not) whose
/// animated lanes are `mask`: [`VEC_PARAM_FLOATS`] or [`ROT_PARAM_FLOATS`],
/// or with no animated lane [`CONST_VEC_PARAM_FLOATS`] or
/// [`CONST_ROT_PARAM_FLOATS`] (no units, which would all be zero).
#[inline]
#[must_use]
pub const fn track_param_floats(rotation: bool, mask: u8) -> usize {
    match (rotation, mask & 15 == 0) {
        (true, false) => ROT_PARAM_FLOATS,
        (false, false) => VEC_PARAM_FLOATS,
        (true, true) => CONST_ROT_PARAM_FLOATS,
        (false, true) => CONST_VEC_PARAM_FLOATS,
    }
}

/// Index of lane `l`'s `min` of component `c` (0-2, or 3 for a rotation's
/// `w`, which only constant lanes store) among a stored block track's
/// constants, and of its `unit` (`None` in a track without an animated
/// lane, which stores no units; `w` has none either).
#[inline]
const fn param_index(constant_track: bool, c: usize, l: usize) -> (usize, Option<usize>) {
    match (constant_track, c) {
        (true, _) => (4 * c + l, None),
        (false, 3) => (24 + l, None),
        (false, _) => (8 * c + l, Some(8 * c + 4 + l)),
    }
}

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

/// Bits one frame of an animated lane takes with component bit rates
/// `rates` (see [`component_rates`]; `[RAW_BITS; 3]` for a verbatim lane).
#[inline]
#[must_use]
pub const fn lane_frame_bits(rotation: bool, format: RotationFormat, rates: [u8; 3]) -> u32 {
    if rates[0] == RAW_BITS {
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
        rates[0] as u32 + rates[1] as u32 + rates[2] as u32 + idx
    }
}

/// The bit rates of a lane's three components from its rate byte: the
/// lane's rate, less one for each component whose drop bit is set (see
/// [`RATE_DROP_SHIFT`]; never below 0). A verbatim lane gives
/// `[RAW_BITS; 3]`.
#[inline]
#[must_use]
pub const fn component_rates(rate_byte: u8) -> [u8; 3] {
    let rate = rate_byte & ((1 << RATE_DROP_SHIFT) - 1);
    if rate == RAW_BITS {
        return [RAW_BITS; 3];
    }
    let drops = rate_byte >> RATE_DROP_SHIFT;
    [
        rate.saturating_sub(drops & 1),
        rate.saturating_sub((drops >> 1) & 1),
        rate.saturating_sub(drops >> 2),
    ]
}

/// [`component_rates`] of one lane's segment metadata (its
/// [`LANE_META_BYTES`] bytes; 0 bits when shorter).
#[inline]
#[must_use]
pub fn lane_rates(lane: &[u8]) -> [u8; 3] {
    component_rates(lane.get(RATE_BYTE).copied().unwrap_or(0))
}

/// One lane component's decoding constants in one segment: the clip
/// constants `min, unit` (unit = clip extent / 255), and in units the
/// segment minimum `smin`, the code step `step = sext / (2^bits − 1)` and the
/// trend bytes `slope` and `curve` as floats.
///
/// [`ComponentDecode::value`] is the decoding formula. The compressor
/// simulates decoding with it, and both samplers perform the same IEEE
/// operations in the same order lane-wise, so what the compressor measures
/// is bit for bit what [`CompressedClip::sample`] produces.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ComponentDecode {
    /// Clip minimum.
    pub min: f32,
    /// Clip unit (extent / 255).
    pub unit: f32,
    /// Segment minimum, in units.
    pub smin: f32,
    /// Code step, in units (0 at 0 bits).
    pub step: f32,
    /// Trend slope byte.
    pub slope: f32,
    /// Trend curvature byte.
    pub curve: f32,
}

impl ComponentDecode {
    /// The constants of a component with clip constants `min, unit`,
    /// segment range bytes `smin, sext`, `bits` bits per code and trend
    /// bytes `d` (slope) and `k` (curvature).
    #[inline]
    #[must_use]
    pub fn new(min: f32, unit: f32, smin: u8, sext: u8, bits: u8, d: i8, k: i8) -> Self {
        ComponentDecode {
            min,
            unit,
            smin: f32::from(smin),
            step: f32::from(sext) * inv_max_code(bits),
            slope: f32::from(d),
            curve: f32::from(k),
        }
    }

    /// The value of code `q` at local frame `i` of the segment:
    /// `min + unit · (((smin + step · q) + slope · i/8) + curve · i²/256)`,
    /// in this order, with the trend factors of [`trend_factors`].
    #[inline]
    #[must_use]
    pub fn value(&self, q: u32, i: f32) -> f32 {
        let (tl, tl2) = trend_factors(i);
        self.min
            + self.unit
                * (((self.smin + self.step * q as f32) + self.slope * tl) + self.curve * tl2)
    }
}

/// The trend's factors at local frame `i`: `(i · TREND_SCALE, i² ·
/// CURVE_SCALE)`, each rounded once as every decoder computes them.
#[inline]
#[must_use]
pub fn trend_factors(i: f32) -> (f32, f32) {
    (TREND_SCALE * i, CURVE_SCALE * (i * i))
}

/// The per-frame slope in clip units of a component's trend slope byte `d`
/// in a clip with unit `unit` (for range searches; decoding uses
/// [`ComponentDecode::value`]).
#[inline]
#[must_use]
pub fn trend_slope(unit: f32, d: i8) -> f32 {
    f32::from(d) * unit * TREND_SCALE
}

/// The per-frame² curvature in clip units of a component's trend curvature
/// byte `k` (see [`trend_slope`]).
#[inline]
#[must_use]
pub fn trend_curve(unit: f32, k: i8) -> f32 {
    f32::from(k) * unit * CURVE_SCALE
}

/// `1 / (2^bits − 1)` for `bits` in `0..=23` (0 otherwise, and for 0 bits).
#[inline(always)]
fn inv_max_code(bits: u8) -> f32 {
    INV_MAX_CODE.get(usize::from(bits)).copied().unwrap_or(0.0)
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

/// The clip unit for a component spanning `ext ≥ 0`: `ext / 255`, rounded
/// up so that `min + 255 · unit ≥ min + ext`.
#[must_use]
pub fn unit_for_extent(min: f32, ext: f32) -> f32 {
    let mut u = ext * INV255;
    while u.is_finite() && min + 255.0 * u < min + ext {
        u = f32::from_bits(u.to_bits() + 1);
    }
    u
}

/// Rebuilds a rotation from x, y, z with `w = √max(0, 1 − x² − y² − z²)`.
#[inline]
#[must_use]
pub fn drop_w_rotation(x: f32, y: f32, z: f32) -> Quat {
    let w = crate::math::sqrt_f32((1.0 - (x * x + y * y + z * z)).max(0.0));
    Quat::new(x, y, z, w)
}

/// Rebuilds a rotation from the three kept components (in component order)
/// and the index `dropped` (0..=3, taken modulo 4) of the dropped largest one.
#[inline]
#[must_use]
pub fn smallest_three_rotation(dropped: u32, a: f32, b: f32, c: f32) -> Quat {
    let big = crate::math::sqrt_f32((1.0 - (a * a + b * b + c * c)).max(0.0));
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
    /// What default block tracks hold.
    pub defaults: Defaults,
    /// `3 × soa_count(joint_count)` kind bytes, translation, rotation, scale
    /// per block: [`KIND_DEFAULT`], or [`KIND_STORED`] `| animated_mask << 4`.
    pub kinds: &'a [u8],
    /// Per stored block track, in order: `min` and `unit` vectors of
    /// component x, y, z (4 lanes each), then for rotations the `w` vector
    /// of its constant lanes ([`VEC_PARAM_FLOATS`] or [`ROT_PARAM_FLOATS`]);
    /// a track without an animated lane stores only its x, y, z (and w)
    /// vectors ([`track_param_floats`]).
    pub params: &'a [f32],
    /// Per segment, per animated lane: 8-bit minimum and extent of each
    /// component, the bit rate, then the signed trend of each component
    /// ([`LANE_META_BYTES`]).
    pub meta: &'a [u8],
    /// The bit stream (without padding), segment after segment.
    pub data: &'a [u8],
    /// Clip name.
    pub name: &'a str,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Layout {
    kinds: usize,
    params: usize,
    seg_table: usize,
    meta: usize,
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
        blocks: usize,
        params: usize,
        animated: usize,
        segments: usize,
        data_bytes: usize,
        name_len: usize,
    ) -> Option<Layout> {
        let kinds = HEADER_BYTES;
        let params_at = align16(kinds + 3 * blocks)?;
        let seg_table = align16(params_at.checked_add(params.checked_mul(4)?)?)?;
        let meta = align16(seg_table.checked_add(segments.checked_mul(8)?)?)?;
        let per_seg = animated.checked_mul(LANE_META_BYTES)?;
        let data = align16(meta.checked_add(segments.checked_mul(per_seg)?)?)?;
        let name = align16(data.checked_add(data_bytes)?)?;
        let total = align16(name.checked_add(name_len)?)?;
        u32::try_from(total).ok()?;
        Some(Layout {
            kinds,
            params: params_at,
            seg_table,
            meta,
            data,
            name,
            total,
        })
    }
}

fn corrupt(what: &'static str) -> Error {
    Error::Corrupt { what }
}

/// What the kind bytes imply: stored block tracks' constant floats, animated
/// lanes, or an error for an unknown kind or an animated padding lane.
fn kind_counts(kinds: &[u8], joints: usize) -> Result<(usize, usize), Error> {
    let (mut params, mut animated) = (0usize, 0usize);
    for (i, &k) in kinds.iter().enumerate() {
        if k == KIND_DEFAULT {
            continue;
        }
        if k & 0x0f != KIND_STORED {
            return Err(corrupt("unknown track kind"));
        }
        let mask = u32::from(k >> 4);
        let lanes = joints.saturating_sub((i / 3) * LANES).min(LANES);
        if mask >> lanes != 0 {
            return Err(corrupt("animated padding lane"));
        }
        params += track_param_floats(i % 3 == 1, k >> 4);
        animated += mask.count_ones() as usize;
    }
    Ok((params, animated))
}

/// Per animated lane in order, whether it is a rotation.
fn lane_is_rotation(kinds: &[u8]) -> impl Iterator<Item = bool> + '_ {
    kinds.iter().enumerate().flat_map(|(i, &k)| {
        let n = if k & 0x0f == KIND_STORED {
            (k >> 4).count_ones() as usize
        } else {
            0
        };
        core::iter::repeat_n(i % 3 == 1, n)
    })
}

/// Bits per frame of each segment, from the lanes' rates in `meta`.
fn segment_frame_bits(
    kinds: &[u8],
    meta: &[u8],
    animated: usize,
    format: RotationFormat,
    s: usize,
) -> u64 {
    let m = meta
        .get(s * animated * LANE_META_BYTES..(s + 1) * animated * LANE_META_BYTES)
        .unwrap_or(&[]);
    lane_is_rotation(kinds)
        .zip(m.chunks_exact(LANE_META_BYTES))
        .map(|(rot, lm)| u64::from(lane_frame_bits(rot, format, lane_rates(lm))))
        .sum()
}

/// Bytes [`write_compressed`] needs for these parts (a multiple of 16), or
/// `None` when the counts overflow the format.
#[must_use]
pub fn compressed_size(parts: &CompressedParts<'_>) -> Option<usize> {
    let segments = parts.frame_count.div_ceil(parts.segment_frames.max(1));
    let (_, animated) = kind_counts(parts.kinds, parts.joint_count).ok()?;
    Layout::new(
        soa_count(parts.joint_count),
        parts.params.len(),
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
/// [`Error::Corrupt`] for a bad kind byte or counts that overflow the format,
/// [`Error::InvalidSampleRate`] for zero frames or segment frames,
/// [`Error::BufferTooSmall`], [`Error::Misaligned`].
pub fn write_compressed(parts: &CompressedParts<'_>, out: &mut [u8]) -> Result<usize, Error> {
    let p = parts;
    let blocks = soa_count(p.joint_count);
    check_len("kinds", 3 * blocks, p.kinds.len())?;
    if p.segment_frames == 0 || p.frame_count == 0 {
        return Err(Error::InvalidSampleRate);
    }
    let (params, animated) = kind_counts(p.kinds, p.joint_count)?;
    check_len("params", params, p.params.len())?;
    let segments = p.frame_count.div_ceil(p.segment_frames);
    check_len(
        "segment metadata",
        segments * animated * LANE_META_BYTES,
        p.meta.len(),
    )?;
    let data_bytes = p.data.len() + READ_PADDING;
    let l = Layout::new(blocks, params, animated, segments, data_bytes, p.name.len())
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
    put(44, params as u32);
    put(48, animated as u32);
    put(52, data_bytes as u32);
    out[..8].copy_from_slice(&COMPRESSED_MAGIC);
    out[l.kinds..l.kinds + p.kinds.len()].copy_from_slice(p.kinds);
    for (i, v) in p.params.iter().enumerate() {
        let at = l.params + 4 * i;
        out[at..at + 4].copy_from_slice(&v.to_le_bytes());
    }
    let mut bit = 0u64;
    for s in 0..segments {
        let fb = segment_frame_bits(p.kinds, p.meta, animated, p.rotation, s);
        let frames = (p.frame_count - s * p.segment_frames).min(p.segment_frames) as u64;
        let at = l.seg_table + 8 * s;
        let (Ok(b32), Ok(fb32)) = (u32::try_from(bit), u32::try_from(fb)) else {
            return Err(corrupt("bit stream exceeds 4 Gbit"));
        };
        out[at..at + 4].copy_from_slice(&b32.to_le_bytes());
        out[at + 4..at + 8].copy_from_slice(&fb32.to_le_bytes());
        bit += frames * fb;
    }
    if bit.div_ceil(8) != p.data.len() as u64 {
        return Err(Error::BadLength {
            buffer: "bit stream",
            expected: bit.div_ceil(8) as usize,
            actual: p.data.len(),
        });
    }
    out[l.meta..l.meta + p.meta.len()].copy_from_slice(p.meta);
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
    params: &'a [f32x4],
    seg_table: &'a [u32],
    meta: &'a [u8],
    /// The container from the metadata section to its end: what the AVX2
    /// decoder's 16-byte metadata loads may touch.
    #[cfg_attr(
        not(all(target_arch = "x86_64", target_feature = "sse2")),
        allow(dead_code)
    )]
    meta_ext: &'a [u8],
    data: &'a [u8],
    name: &'a str,
}

/// The 8 bytes at `byte` as a little-endian word (0 outside `data`).
#[inline(always)]
fn read_u64(data: &[u8], byte: usize) -> u64 {
    match data.get(byte..byte + 8) {
        Some(&[a, b, c, d, e, f, g, h]) => u64::from_le_bytes([a, b, c, d, e, f, g, h]),
        _ => 0,
    }
}

/// Reads `n ≤ 32` bits at bit `bit` (little-endian bit order).
#[inline(always)]
fn read_bits(data: &[u8], bit: u64, n: u32) -> u32 {
    let word = read_u64(data, (bit >> 3) as usize);
    ((word >> (bit & 7)) & ((1u64 << n) - 1)) as u32
}

/// Lane masks for `select`, by 4-bit lane mask.
const LANE_MASKS: [[u32; 4]; 16] = {
    let mut t = [[0u32; 4]; 16];
    let mut m = 0;
    while m < 16 {
        let mut l = 0;
        while l < 4 {
            if m & (1 << l) != 0 {
                t[m][l] = u32::MAX;
            }
            l += 1;
        }
        m += 1;
    }
    t
};

#[inline(always)]
fn lane_mask(mask: u32) -> f32x4 {
    let m = LANE_MASKS
        .get(mask as usize & 15)
        .copied()
        .unwrap_or([0; 4]);
    bytemuck::cast(m)
}

#[inline(always)]
fn to_f32(v: u32x4) -> f32x4 {
    // Codes are below 2^23 (verbatim lanes are patched afterwards), so the
    // signed conversion is exact.
    f32x4::from_i32x4(bytemuck::cast(v))
}

/// A lane's four metadata words: bytes 0..4, 3..7, 6..10 and 9..13 (0
/// outside `meta`), so the ranges, rate and trends of four lanes come out
/// of four `u32x4` with uniform shifts and masks.
#[inline(always)]
fn meta_words(meta: &[u8], at: usize) -> [u32; 4] {
    // Two overlapping 8-byte loads: bytes 0..8 and 5..13.
    let (Some(a), Some(b)) = (meta.get(at..at + 8), meta.get(at + 5..at + 13)) else {
        return [0; 4];
    };
    let le = |x: &[u8]| u64::from_le_bytes(x.try_into().unwrap_or([0; 8]));
    let (a, b) = (le(a), le(b));
    [
        a as u32,
        (a >> 24) as u32,
        ((a >> 48) | ((b >> 24) & 0xffff) << 16) as u32,
        (b >> 32) as u32,
    ]
}

/// Lane `l`'s three codes of `r[c] ≤ 32` bits and its smallest-three index
/// at bit `pos`, one read each.
#[inline(never)]
fn reads(data: &[u8], pos: u64, r: [u32; 3], l: usize, c: &mut [[u32; 4]; 4]) {
    let r = r.map(|x| x.min(32));
    let (r0, r1, r2) = (u64::from(r[0]), u64::from(r[1]), u64::from(r[2]));
    c[0][l] = read_bits(data, pos, r[0]);
    c[1][l] = read_bits(data, pos + r0, r[1]);
    c[2][l] = read_bits(data, pos + r0 + r1, r[2]);
    c[3][l] = read_bits(data, pos + r0 + r1 + r2, 2);
}

/// Splits the 64-bit window at bit `pos` into lane `l`'s three codes of
/// `r[c]` bits (unmasked) and, with `S3`, its smallest-three index.
#[inline(always)]
fn window<const S3: bool>(data: &[u8], pos: u64, r: [u32; 3], l: usize, c: &mut [[u32; 4]; 4]) {
    let w = read_u64(data, (pos >> 3) as usize) >> (pos & 7);
    let s1 = r[0] & 63;
    let s2 = (s1 + r[1]) & 63;
    c[0][l] = w as u32;
    c[1][l] = (w >> s1) as u32;
    c[2][l] = (w >> s2) as u32;
    if S3 {
        c[3][l] = (w >> ((s2 + r[2]) & 63)) as u32;
    }
}

/// The component bit rates of four lanes ([`component_rates`], lane-wise)
/// from the rate bytes in the low byte of their third metadata word
/// (verbatim lanes come out as 31 bits and are patched after decoding).
#[inline(always)]
fn rates_x4(d2: [u32; 4]) -> [u32x4; 3] {
    let byte = u32x4::from(d2);
    let rate = byte & u32x4::splat(31);
    let one = u32x4::ONE;
    [5u32, 6, 7].map(|b| {
        let drop = (byte >> b) & one;
        rate.max(drop) - drop
    })
}

/// Per-segment constants of four lanes per component (the fields of
/// [`ComponentDecode`], lane-wise) and the code masks.
struct Dequant {
    min: [f32x4; 3],
    unit: [f32x4; 3],
    smin: [f32x4; 3],
    step: [f32x4; 3],
    slope: [f32x4; 3],
    curve: [f32x4; 3],
    mask: [u32x4; 3],
}

/// [`Dequant`] from the lanes' metadata words (`d[0]`: bytes 0..4,
/// `d[1]`: 3..7, `d[2]`: 6..10, `d[3]`: 9..13), their component bit rates
/// and clip constants (`min`, `unit` per component).
#[inline(always)]
fn dequant_params(d: &[[u32; 4]; 4], rates: &[u32x4; 3], clip: &[f32x4; 6]) -> Dequant {
    let [d0, d1, d2, d3] = d.map(u32x4::from);
    let byte = u32x4::splat(0xff);
    let smin = [d0 & byte, (d0 >> 16u32) & byte, (d1 >> 8u32) & byte];
    let sext = [(d0 >> 8u32) & byte, d0 >> 24u32, (d1 >> 16u32) & byte];
    // Signed trend bytes 7, 8, 9: shift each to the top, then back down
    // arithmetically.
    let sign =
        |v: u32x4| -> f32x4 { f32x4::from_i32x4(bytemuck::cast::<u32x4, i32x4>(v) >> 24u32) };
    let slope = [sign(d2 << 16u32), sign(d2 << 8u32), sign(d2)];
    // Signed curvature bytes 10, 11, 12.
    let curve = [sign(d3 << 16u32), sign(d3 << 8u32), sign(d3)];
    let mut q = Dequant {
        min: [clip[0], clip[2], clip[4]],
        unit: [clip[1], clip[3], clip[5]],
        smin: smin.map(to_f32),
        step: [f32x4::ZERO; 3],
        slope,
        curve,
        mask: [u32x4::ZERO; 3],
    };
    for c in 0..3 {
        // 2^rate as an f32 built from its exponent gives the code mask;
        // 1 / (2^rate − 1) is looked up (a division per component was the
        // slowest operation of the track setup, on NEON most of all).
        // (Verbatim lanes are patched after decoding: clamp them.)
        let r = rates[c].min(u32x4::splat(u32::from(MAX_QUANTIZED_BITS)));
        let pow2: f32x4 = bytemuck::cast((r + u32x4::splat(127)) << 23u32);
        q.mask[c] = bytemuck::cast(pow2.round_int() - i32x4::ONE);
        let inv = f32x4::new(r.to_array().map(|k| inv_max_code(k as u8)));
        q.step[c] = to_f32(sext[c]) * inv;
    }
    q
}

/// [`ComponentDecode::value`] of the codes `c & mask` for components x, y,
/// z of four lanes.
#[inline(always)]
fn dequant(q: &Dequant, c: &[[u32; 4]; 4], local: f32) -> [f32x4; 3] {
    let (tl, tl2) = trend_factors(local);
    let (tl, tl2) = (f32x4::splat(tl), f32x4::splat(tl2));
    let mut v = [f32x4::ZERO; 3];
    for i in 0..3 {
        let code = to_f32(u32x4::from(c[i]) & q.mask[i]);
        let u = ((q.smin[i] + q.step[i] * code) + q.slope[i] * tl) + q.curve[i] * tl2;
        v[i] = q.min[i] + q.unit[i] * u;
    }
    v
}

/// The value of a stored block track none of whose lanes is animated
/// (stored because its constants are not the defaults), the same in every
/// frame: its x, y, z (and for rotations w) constants as stored ([`CONST_VEC_PARAM_FLOATS`],
/// [`CONST_ROT_PARAM_FLOATS`]), without metadata, bit-stream or
/// dequantization work; such a track has no metadata and no bits, so the
/// running offsets do not move.
#[inline(always)]
fn constant_value<const ROT: bool>(cv: &[f32x4]) -> SoaQuat {
    let g = |i: usize| cv.get(i).copied().unwrap_or(f32x4::ZERO);
    SoaQuat {
        x: g(0),
        y: g(1),
        z: g(2),
        w: if ROT { g(3) } else { f32x4::ZERO },
    }
}

/// Rotations from their three kept components (and the smallest-three
/// index), with the constant lanes (outside `anim`) taken from `constant`.
#[inline(always)]
fn rebuild<const S3: bool>(
    v: [f32x4; 3],
    idx: u32x4,
    constant: &[f32x4; 4],
    anim: f32x4,
) -> SoaQuat {
    let [a, b, d] = v;
    let big = crate::math::sqrt4((f32x4::ONE - (a * a + b * b + d * d)).max(f32x4::ZERO));
    if !S3 {
        // Constant lanes decode x, y, z exactly to their `min` (step 0), so
        // drop-W only has to put back their w.
        return SoaQuat {
            x: a,
            y: b,
            z: d,
            w: anim.bitselect(big, constant[3]),
        };
    }
    let is = |k: u32| -> f32x4 { bytemuck::cast(idx.simd_eq(u32x4::splat(k))) };
    let (i0, i1, i2, i3) = (is(0), is(1), is(2), is(3));
    SoaQuat {
        x: anim.bitselect(i0.bitselect(big, a), constant[0]),
        y: anim.bitselect(i0.bitselect(a, i1.bitselect(big, b)), constant[1]),
        z: anim.bitselect(i3.bitselect(d, i2.bitselect(big, b)), constant[2]),
        w: anim.bitselect(i3.bitselect(big, d), constant[3]),
    }
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod avx2;

/// Where one of a sample's two frames is (see `CompressedClip::frame_at`).
#[derive(Clone, Copy)]
struct FrameAt {
    /// Its first bit.
    first: u64,
    /// Its segment.
    segment: usize,
    /// Its index inside the segment.
    local: f32,
}

/// Blocks decoded before their rotations are interpolated (see
/// `CompressedClip::decode_blend_as`).
const NLERP_CHUNK: usize = 16;

/// The x, y, z of a decoded translation or scale track.
#[inline(always)]
fn xyz(q: &SoaQuat) -> SoaVec3 {
    SoaVec3 {
        x: q.x,
        y: q.y,
        z: q.z,
    }
}

/// The interpolation of one sample between its two decoded frames, shared
/// by both decoders (same operations, same order).
#[derive(Clone, Copy)]
struct Blend {
    wa: f32x4,
    wb: f32x4,
}

impl Blend {
    fn new(alpha: f32) -> Blend {
        Blend {
            wa: f32x4::splat(1.0 - alpha),
            wb: f32x4::splat(alpha),
        }
    }

    /// Lerp of two decoded translation or scale tracks (their x, y, z).
    #[inline(always)]
    fn lerp(&self, a: &SoaQuat, b: &SoaQuat) -> SoaVec3 {
        let mut v = vec_scale(&xyz(a), self.wa);
        vec_mul_add(&mut v, &xyz(b), self.wb);
        v
    }

    /// Nlerp of two decoded rotation tracks, `b` sign-aligned to `a`.
    #[inline(always)]
    fn nlerp(&self, qa: &SoaQuat, qb: &SoaQuat) -> SoaQuat {
        let wa = self.wa;
        let mut q = SoaQuat {
            x: qa.x * wa,
            y: qa.y * wa,
            z: qa.z * wa,
            w: qa.w * wa,
        };
        let flip = dot4(qa, qb).simd_lt(f32x4::ZERO);
        quat_mul_add(&mut q, qb, self.wb.flip_signs(flip));
        normalize(&q)
    }
}

/// The block loop of both decoders: `out` block by block, in chunks of
/// [`NLERP_CHUNK`]. `block` fills one block from its three kind bytes and
/// its default transform (the rest pose's, or identity), and returns
/// whether its rotation waits in its `pending` slot; `chunk` then
/// interpolates the chunk's waiting rotations (bit `k` of `waiting` for its
/// block `k`).
#[inline(always)]
fn in_chunks<P>(
    kinds: &[u8],
    rest: Option<&[SoaTransform]>,
    out: &mut [SoaTransform],
    pending: &mut [P; NLERP_CHUNK],
    mut block: impl FnMut(&mut SoaTransform, [u8; 3], &SoaTransform, &mut P) -> bool,
    mut chunk: impl FnMut(&mut [SoaTransform], &[P; NLERP_CHUNK], u32),
) {
    let identity = SoaTransform::IDENTITY;
    for (c, (outs, kindss)) in out
        .chunks_mut(NLERP_CHUNK)
        .zip(kinds.chunks(3 * NLERP_CHUNK))
        .enumerate()
    {
        let mut waiting = 0u32;
        for (k, ((o, kinds), slot)) in outs
            .iter_mut()
            .zip(kindss.chunks_exact(3))
            .zip(pending.iter_mut())
            .enumerate()
        {
            let base = rest
                .and_then(|r| r.get(c * NLERP_CHUNK + k))
                .unwrap_or(&identity);
            let kinds = [0, 1, 2].map(|i| kinds.get(i).copied().unwrap_or(KIND_DEFAULT));
            if block(o, kinds, base, slot) {
                waiting |= 1 << k;
            }
        }
        chunk(outs, pending, waiting);
    }
}

impl<'a> CompressedClip<'a> {
    /// Validates a compressed clip container once and views it in place (zero copy).
    ///
    /// `bytes` must be 16-byte aligned; trailing bytes are ignored. Checks the
    /// header, the canonical layout, every kind byte, clip constant, segment
    /// offset, bit rate and segment range, and every raw (`RAW_BITS`) value,
    /// so sampling cannot read out of bounds or produce NaN from data. Cost
    /// is linear in the number of segments times animated lanes (plus the
    /// raw values).
    ///
    /// # Errors
    /// [`Error::Truncated`], [`Error::BadMagic`], [`Error::UnsupportedVersion`],
    /// [`Error::Misaligned`], [`Error::TooManyJoints`], [`Error::NoJoints`],
    /// [`Error::InvalidSampleRate`], [`Error::Corrupt`], [`Error::NonFinite`],
    /// [`Error::InvalidName`], [`Error::UnsupportedPlatform`].
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::open(bytes, true)
    }

    /// Views a container that [`CompressedClip::from_bytes`] accepted before
    /// and that has not changed since: the header and the layout are read
    /// again (O(1)), the per-segment and per-value checks are not. For the C
    /// ABI's handles, whose contract is that the bytes stay unchanged; on
    /// bytes that did change, sampling stays memory-safe (every read is
    /// bounds-checked) but its results are unspecified.
    pub(crate) fn view_trusted(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::open(bytes, false)
    }

    /// The header and layout always; with `validate`, also every section's
    /// contents (see [`CompressedClip::from_bytes`]).
    fn open(bytes: &'a [u8], validate: bool) -> Result<Self, Error> {
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
        let n_params = le_u32(bytes, 44) as usize;
        let animated = le_u32(bytes, 48) as usize;
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
        if frames == 0 || !crate::clip::rate_is_valid(frames, rate) {
            return Err(Error::InvalidSampleRate);
        }
        if seg_frames == 0 || seg_frames > 65536 {
            return Err(corrupt("segment frames out of range"));
        }
        let blocks = soa_count(joints);
        if animated > blocks * 3 * LANES || n_params > blocks * 3 * ROT_PARAM_FLOATS {
            return Err(corrupt("track counts exceed the joints"));
        }
        let segments = frames.div_ceil(seg_frames);
        let l = Layout::new(blocks, n_params, animated, segments, data_bytes, name_len)
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
        let kinds = &bytes[l.kinds..l.kinds + 3 * blocks];
        if kind_counts(kinds, joints)? != (n_params, animated) {
            return Err(corrupt("track kinds do not match the header's counts"));
        }
        let params_f: &[f32] = bytemuck::try_cast_slice(&bytes[l.params..l.params + 4 * n_params])
            .map_err(|_| corrupt("section cast"))?;
        let params: &[f32x4] =
            bytemuck::try_cast_slice(params_f).map_err(|_| corrupt("section cast"))?;
        let seg_table: &[u32] =
            bytemuck::try_cast_slice(&bytes[l.seg_table..l.seg_table + 8 * segments])
                .map_err(|_| corrupt("section cast"))?;
        let meta = &bytes[l.meta..l.meta + segments * animated * LANE_META_BYTES];
        let data = &bytes[l.data..l.data + data_bytes];
        let name = core::str::from_utf8(&bytes[l.name..l.name + name_len])
            .map_err(|_| Error::InvalidName { joint: 0 })?;
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
            params,
            seg_table,
            meta,
            meta_ext: &bytes[l.meta..total],
            data,
            name,
        };
        if !validate {
            return Ok(clip);
        }
        check_params(kinds, params_f, joints, seg_frames)?;
        // Segment metadata: ranges stay inside the clip range; rates are valid.
        for lm in meta.chunks_exact(LANE_META_BYTES) {
            let (r, drops) = (lm[RATE_BYTE] & 31, lm[RATE_BYTE] >> RATE_DROP_SHIFT);
            if r > MAX_QUANTIZED_BITS && r != RAW_BITS {
                return Err(corrupt("bit rate out of range"));
            }
            if drops != 0 && (r == 0 || r == RAW_BITS) {
                return Err(corrupt("component drops on a 0-bit or verbatim lane"));
            }
            if lm[..RATE_BYTE]
                .chunks_exact(2)
                .any(|p| u16::from(p[0]) + u16::from(p[1]) > 255)
            {
                return Err(corrupt("segment range exceeds the clip range"));
            }
        }
        // Segment table: canonical offsets and frame sizes; the stream fits.
        let mut bit = 0u64;
        for s in 0..segments {
            let fb = segment_frame_bits(kinds, meta, animated, rotation, s);
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
        if meta
            .chunks_exact(LANE_META_BYTES)
            .any(|lm| lm[RATE_BYTE] & 31 == RAW_BITS)
        {
            clip.check_raw_values()?;
        }
        Ok(clip)
    }

    /// Checks every verbatim value: finite, rotations near unit length.
    fn check_raw_values(&self) -> Result<(), Error> {
        for f in 0..self.frame_count {
            let (mut bit, meta, _) = self.frame_start(f);
            for (rot, lm) in lane_is_rotation(self.kinds).zip(meta.chunks_exact(LANE_META_BYTES)) {
                let r = lane_rates(lm);
                if r[0] == RAW_BITS {
                    let n = if rot { 4 } else { 3 };
                    let mut v = [0.0f32; 4];
                    for (c, x) in v.iter_mut().take(n).enumerate() {
                        *x = f32::from_bits(read_bits(self.data, bit + 32 * c as u64, 32));
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
                }
                bit += u64::from(lane_frame_bits(rot, self.rotation, r));
            }
        }
        Ok(())
    }

    /// Where frame `f` is: its first bit, its segment and its local index
    /// in the segment.
    #[inline(always)]
    fn frame_at(&self, f: usize) -> FrameAt {
        let s = f / self.segment_frames;
        let local = f - s * self.segment_frames;
        let first = u64::from(self.seg_table.get(2 * s).copied().unwrap_or(0));
        let fb = u64::from(self.seg_table.get(2 * s + 1).copied().unwrap_or(0));
        FrameAt {
            first: first + local as u64 * fb,
            segment: s,
            local: local as f32,
        }
    }

    /// The first bit of frame `f`, its segment's metadata (validated
    /// index; empty metadata otherwise) and its local index in the segment.
    #[inline(always)]
    fn frame_start(&self, f: usize) -> (u64, &'a [u8], f32) {
        let at = self.frame_at(f);
        let meta = self.segment_meta(at.segment).unwrap_or(&[]);
        (at.first, meta, at.local)
    }

    /// Both frames of one stored block track, decoded in one pass over its
    /// animated lanes: per lane its metadata words and, per frame, one
    /// 64-bit window (rates up to [`ONE_WINDOW_BITS`]) or one read per
    /// component, then lane-wise dequantization, trend and (for rotations)
    /// the rebuild. Translations and scales come back in x, y, z.
    /// `frames` holds each frame's first bit and local index in its segment.
    /// Only for tracks with an animated lane (`cv` laid out with units; the
    /// block loop takes the others as [`constant_value`]s).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn track_pair<const S3: bool, const ROT: bool>(
        &self,
        (ma, mb): (&[u8], &[u8]),
        same: bool,
        m: usize,
        mask: u32,
        (oa, ob): (&mut u32, &mut u32),
        frames: [(u64, f32); 2],
        cv: &[f32x4],
    ) -> (SoaQuat, SoaQuat) {
        let [(fa, la), (fb, lb)] = frames;
        let mut da = [[0u32; 4]; 4];
        let mut db = [[0u32; 4]; 4];
        let mut ca = [[0u32; 4]; 4];
        let mut cb = [[0u32; 4]; 4];
        let (mut pa, mut pb) = (*oa, *ob);
        // Verbatim lanes (bit per lane) and their first bits per frame.
        let mut raw = 0u32;
        let mut raw_at = [(0u64, 0u64); 4];
        let mut at = m;
        let mut bits = mask;
        while bits != 0 {
            let l = bits.trailing_zeros() as usize & 3;
            bits &= bits - 1;
            for (d, w) in da.iter_mut().zip(meta_words(ma, at)) {
                d[l] = w;
            }
            if !same {
                for (d, w) in db.iter_mut().zip(meta_words(mb, at)) {
                    d[l] = w;
                }
            }
            at += LANE_META_BYTES;
        }
        // The four lanes' component rates at once, then per lane its
        // position and codes.
        let rates_a = rates_x4(da[2]);
        let rates_b = if same { rates_a } else { rates_x4(db[2]) };
        let (ka, kb) = (rates_a.map(u32x4::to_array), rates_b.map(u32x4::to_array));
        let lane_bits = |r: u32, k: [u32; 3]| -> u32 {
            if r == u32::from(RAW_BITS) {
                if ROT {
                    128
                } else {
                    96
                }
            } else if S3 && ROT {
                k[0] + k[1] + k[2] + 2
            } else {
                k[0] + k[1] + k[2]
            }
        };
        let mut bits = mask;
        while bits != 0 {
            let l = bits.trailing_zeros() as usize & 3;
            bits &= bits - 1;
            let ra = da[2][l] & 31;
            let rb = if same { ra } else { db[2][l] & 31 };
            let (ka, kb) = (
                [ka[0][l], ka[1][l], ka[2][l]],
                [kb[0][l], kb[1][l], kb[2][l]],
            );
            let (qa, qb) = (fa + u64::from(pa), fb + u64::from(pb));
            pa += lane_bits(ra, ka);
            pb += lane_bits(rb, kb);
            if (ra | rb) <= u32::from(ONE_WINDOW_BITS) {
                window::<S3>(self.data, qa, ka, l, &mut ca);
                window::<S3>(self.data, qb, kb, l, &mut cb);
            } else {
                reads(self.data, qa, ka, l, &mut ca);
                reads(self.data, qb, kb, l, &mut cb);
                if ra == u32::from(RAW_BITS) || rb == u32::from(RAW_BITS) {
                    raw |= 1 << l;
                    raw_at[l] = (qa, qb);
                }
            }
        }
        *oa = pa;
        *ob = pb;
        let g = |i: usize| cv.get(i).copied().unwrap_or(f32x4::ZERO);
        let clip = [g(0), g(1), g(2), g(3), g(4), g(5)];
        let pa_ = dequant_params(&da, &rates_a, &clip);
        let va = dequant(&pa_, &ca, la);
        let vb = if same {
            dequant(&pa_, &cb, lb)
        } else {
            dequant(&dequant_params(&db, &rates_b, &clip), &cb, lb)
        };
        let (mut qa, mut qb) = if ROT {
            let constant = [g(0), g(2), g(4), g(6)];
            let anim = lane_mask(mask);
            let idx = |c: &[[u32; 4]; 4]| u32x4::from(c[3]) & u32x4::splat(3);
            (
                rebuild::<S3>(va, idx(&ca), &constant, anim),
                rebuild::<S3>(vb, idx(&cb), &constant, anim),
            )
        } else {
            let v = |x: [f32x4; 3]| SoaQuat {
                x: x[0],
                y: x[1],
                z: x[2],
                w: f32x4::ZERO,
            };
            (v(va), v(vb))
        };
        if raw != 0 {
            let (ra, rb) = (&da, if same { &da } else { &db });
            self.patch_raw(raw, &raw_at, (ra, rb), ROT, &mut qa, &mut qb);
        }
        (qa, qb)
    }

    /// Overwrites the verbatim lanes of both frames with their stored `f32`
    /// values (x, y, z, and w for rotations).
    #[cold]
    #[inline(never)]
    fn patch_raw(
        &self,
        raw: u32,
        raw_at: &[(u64, u64); 4],
        (da, db): (&[[u32; 4]; 4], &[[u32; 4]; 4]),
        rot: bool,
        qa: &mut SoaQuat,
        qb: &mut SoaQuat,
    ) {
        let n = if rot { 4 } else { 3 };
        for (l, &(pa, pb)) in raw_at.iter().enumerate() {
            if raw & (1 << l) == 0 {
                continue;
            }
            for (q, d, pos) in [(&mut *qa, da, pa), (&mut *qb, db, pb)] {
                if d[2][l] & 0xff != u32::from(RAW_BITS) {
                    continue;
                }
                let mut c = [q.x, q.y, q.z, q.w].map(|v| v.to_array());
                for (i, v) in c.iter_mut().take(n).enumerate() {
                    v[l] = f32::from_bits(read_bits(self.data, pos + 32 * i as u64, 32));
                }
                let [x, y, z, w] = c.map(f32x4::from);
                *q = SoaQuat { x, y, z, w };
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
    /// straight into SoA lanes and interpolates them by `alpha`, with the
    /// rotation format as a compile-time choice.
    fn decode_blend(
        &self,
        i0: usize,
        i1: usize,
        alpha: f32,
        rest: Option<&[SoaTransform]>,
        out: &mut [SoaTransform],
    ) {
        let at = [self.frame_at(i0), self.frame_at(i1)];
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        if avx2::decode_blend(self, &at, alpha, rest, out) {
            return;
        }
        match self.rotation {
            RotationFormat::DropW => self.decode_blend_as::<false>(&at, alpha, rest, out),
            RotationFormat::SmallestThree => self.decode_blend_as::<true>(&at, alpha, rest, out),
        }
    }

    /// [`Self::decode_blend`] for drop-W (`S3 = false`) or smallest-three.
    ///
    /// Default tracks and stored tracks without an animated lane are the
    /// same in both frames: their values are copied, exactly, with no
    /// interpolation arithmetic. The other tracks are decoded in both
    /// frames and interpolated.
    ///
    /// Blocks go in chunks of [`NLERP_CHUNK`]: a chunk's tracks are decoded
    /// before its rotations are interpolated, because decoding and
    /// interpolating one block is one long dependency chain and splitting
    /// it lets the CPU overlap consecutive blocks.
    #[inline(always)]
    fn decode_blend_as<const S3: bool>(
        &self,
        [a, b]: &[FrameAt; 2],
        alpha: f32,
        rest: Option<&[SoaTransform]>,
        out: &mut [SoaTransform],
    ) {
        let ma = self.segment_meta(a.segment).unwrap_or(&[]);
        let mb = self.segment_meta(b.segment).unwrap_or(&[]);
        let same = a.segment == b.segment;
        let frames = [(a.first, a.local), (b.first, b.local)];
        // Running positions: clip constants (vectors), metadata bytes, and
        // bit offsets inside frames a and b.
        let (mut p, mut m, mut oa, mut ob) = (0usize, 0usize, 0u32, 0u32);
        let blend = Blend::new(alpha);
        // Frame b's rotation of each block of a chunk whose rotation is
        // animated (frame a's waits in `out`).
        let mut pending = [SoaQuat::IDENTITY; NLERP_CHUNK];
        let block = |o: &mut SoaTransform,
                     [kt, kr, ks]: [u8; 3],
                     base: &SoaTransform,
                     rb_slot: &mut SoaQuat| {
            // One stored track of this block (kind byte `kind`; the `ROT`
            // instance for rotations), in stream order: its value when no
            // lane is animated, else both frames.
            macro_rules! track {
                ($kind:expr, $rot:literal) => {{
                    let mask = u32::from($kind >> 4);
                    // The clip constants: without an animated lane no
                    // units ([`track_param_floats`] of mask 0; any other
                    // mask gives the full size), and no decoding.
                    let n = track_param_floats($rot, if mask == 0 { 0 } else { 1 }) / LANES;
                    let cv = self.params.get(p..p + n).unwrap_or(&[]);
                    p += n;
                    if mask == 0 {
                        Err(constant_value::<$rot>(cv))
                    } else {
                        let pair = self.track_pair::<S3, $rot>(
                            (ma, mb),
                            same,
                            m,
                            mask,
                            (&mut oa, &mut ob),
                            frames,
                            cv,
                        );
                        m += LANE_META_BYTES * mask.count_ones() as usize;
                        Ok(pair)
                    }
                }};
            }
            let mut waits = false;
            o.translation = if kt == KIND_DEFAULT {
                base.translation
            } else {
                match track!(kt, false) {
                    Ok((qa, qb)) => blend.lerp(&qa, &qb),
                    Err(q) => xyz(&q),
                }
            };
            o.rotation = if kr == KIND_DEFAULT {
                base.rotation
            } else {
                match track!(kr, true) {
                    Ok((ra, rb)) => {
                        *rb_slot = rb;
                        waits = true;
                        ra
                    }
                    Err(q) => q,
                }
            };
            o.scale = if ks == KIND_DEFAULT {
                base.scale
            } else {
                match track!(ks, false) {
                    Ok((qa, qb)) => blend.lerp(&qa, &qb),
                    Err(q) => xyz(&q),
                }
            };
            waits
        };
        let chunk = |outs: &mut [SoaTransform], pending: &[SoaQuat; NLERP_CHUNK], waiting: u32| {
            for (k, (o, qb)) in outs.iter_mut().zip(pending).enumerate() {
                if waiting & (1 << k) != 0 {
                    o.rotation = blend.nlerp(&o.rotation, qb);
                }
            }
        };
        in_chunks(self.kinds, rest, out, &mut pending, block, chunk);
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

    /// Number of animated lanes (animated joint tracks).
    #[inline]
    #[must_use]
    pub fn animated_lane_count(&self) -> usize {
        self.animated
    }

    /// The kind byte of block `b`'s translation (`track` 0), rotation (1)
    /// or scale (2) block track: [`KIND_DEFAULT`], or [`KIND_STORED`] with
    /// the mask of its animated lanes in bits 4..8.
    #[inline]
    #[must_use]
    pub fn block_track_kind(&self, b: usize, track: usize) -> Option<u8> {
        if track > 2 {
            return None;
        }
        self.kinds.get(3 * b + track).copied()
    }

    /// The metadata of segment `s`: per animated lane, [`LANE_META_BYTES`]
    /// bytes (minimum and extent of each component, the bit rate, then the
    /// signed trend of each component).
    #[inline]
    #[must_use]
    pub fn segment_meta(&self, s: usize) -> Option<&'a [u8]> {
        let n = self.animated * LANE_META_BYTES;
        self.meta.get(s * n..(s + 1) * n)
    }

    /// The component bit rates of every animated lane in segment `s`
    /// ([`component_rates`]).
    pub fn segment_rates(&self, s: usize) -> impl Iterator<Item = [u8; 3]> + 'a {
        self.segment_meta(s)
            .unwrap_or(&[])
            .chunks_exact(LANE_META_BYTES)
            .map(lane_rates)
    }

    /// Bytes of the bit stream (with its padding).
    #[inline]
    #[must_use]
    pub fn data_bytes(&self) -> usize {
        self.data.len()
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

/// Checks the clip constants of every stored block track: finite, units
/// `≥ 0` with a finite top and bottom however far a trend drifts, animated rotation components inside `[−2, 2]`,
/// constant rotation lanes near unit length, padding lanes identity.
fn check_params(
    kinds: &[u8],
    params: &[f32],
    joints: usize,
    segment_frames: usize,
) -> Result<(), Error> {
    // The largest trend offset inside a segment, in units.
    let n = segment_frames as f32;
    let drift = 128.0 * TREND_SCALE * n + 128.0 * CURVE_SCALE * n * n;
    if !crate::soa::all_finite(params) {
        return Err(Error::NonFinite {
            what: "clip constant",
        });
    }
    let mut p = 0usize;
    for (i, &k) in kinds.iter().enumerate() {
        if k == KIND_DEFAULT {
            continue;
        }
        let rot = i % 3 == 1;
        let mask = k >> 4;
        let n = track_param_floats(rot, mask);
        let v = params.get(p..p + n).unwrap_or(&[]);
        p += n;
        let g = |i: usize| v.get(i).copied().unwrap_or(f32::NAN);
        let at = |c: usize, l: usize| {
            let (m, u) = param_index(mask == 0, c, l);
            (g(m), u.map_or(0.0, g))
        };
        let lanes = joints.saturating_sub((i / 3) * LANES).min(LANES);
        for l in 0..LANES {
            let animated = mask & (1 << l) != 0;
            let mut n2 = 0.0f32;
            for c in 0..3 {
                let (min, unit) = at(c, l);
                let top = min + 255.0 * unit;
                if !(unit >= 0.0
                    && (top + drift * unit).is_finite()
                    && (min - drift * unit).is_finite())
                {
                    return Err(corrupt("clip range extent"));
                }
                if rot && animated && !(min >= -2.0 && top <= 2.0) {
                    return Err(corrupt("rotation range outside [-2, 2]"));
                }
                n2 += min * min;
                if l >= lanes {
                    let identity = if i % 3 == 2 { 1.0 } else { 0.0 };
                    if min != identity || unit != 0.0 {
                        return Err(corrupt("padding lane is not identity"));
                    }
                }
            }
            if rot && !animated {
                let w = at(3, l).0;
                n2 += w * w;
                if !(0.25..=4.0).contains(&n2) || (l >= lanes && w != 1.0) {
                    return Err(corrupt("constant rotation is not near unit length"));
                }
            }
        }
    }
    Ok(())
}

/// Scalar reference implementations: the readable specification.
pub mod reference {
    use super::{
        drop_w_rotation, lane_frame_bits, lane_rates, param_index, read_bits,
        smallest_three_rotation, track_param_floats, ComponentDecode, CompressedClip, Defaults,
        RotationFormat, CURVE_BYTE, KIND_DEFAULT, LANE_META_BYTES, RAW_BITS, TREND_BYTE,
    };
    use crate::clip::TimeMode;
    use crate::error::Error;
    use crate::math::{Quat, Transform, Vec3};
    use crate::soa::{check_len, get_joint, SoaTransform, LANES};

    impl CompressedClip<'_> {
        /// The clip constant `i` of the stored block track whose constants
        /// start at float `p` (0 outside the section).
        fn param(&self, p: usize, i: usize) -> f32 {
            let v = p + i;
            self.params.get(v / 4).map_or(0.0, |x| x.to_array()[v % 4])
        }

        /// Joint `j`'s track `track` (0 translation, 1 rotation, 2 scale) at
        /// frame `f` (validated indices), decoded one value at a time by
        /// walking the container from its start; `None` for a default track.
        fn track_at(&self, f: usize, j: usize, track: usize) -> Option<[f32; 4]> {
            let (b, l) = (j / LANES, j % LANES);
            let me = 3 * b + track;
            // Constants and animated lanes before this block track.
            let (mut p, mut k) = (0usize, 0usize);
            for (i, &kind) in self.kinds.iter().enumerate().take(me) {
                if kind != KIND_DEFAULT {
                    p += track_param_floats(i % 3 == 1, kind >> 4);
                    k += (kind >> 4).count_ones() as usize;
                }
            }
            let kind = self.kinds.get(me).copied().unwrap_or(KIND_DEFAULT);
            if kind == KIND_DEFAULT {
                return None;
            }
            let rot = track == 1;
            let mask = kind >> 4;
            let min = |c: usize| self.param(p, param_index(mask == 0, c, l).0);
            let unit = |c: usize| {
                param_index(mask == 0, c, l)
                    .1
                    .map_or(0.0, |u| self.param(p, u))
            };
            if mask & (1 << l) == 0 {
                let w = if rot { min(3) } else { 0.0 };
                return Some([min(0), min(1), min(2), w]);
            }
            k += (mask & ((1 << l) - 1)).count_ones() as usize;
            // The frame's first bit, then the lanes before this one.
            let s = f / self.segment_frames;
            let local = (f - s * self.segment_frames) as u64;
            let first = u64::from(self.seg_table.get(2 * s).copied().unwrap_or(0));
            let fb = u64::from(self.seg_table.get(2 * s + 1).copied().unwrap_or(0));
            let meta = self.segment_meta(s).unwrap_or(&[]);
            let rates = |i: usize| lane_rates(meta.get(LANE_META_BYTES * i..).unwrap_or(&[]));
            let mut bit = first + local * fb;
            for (i, r) in super::lane_is_rotation(self.kinds).take(k).enumerate() {
                bit += u64::from(lane_frame_bits(r, self.rotation, rates(i)));
            }
            let bits = rates(k);
            if bits[0] == RAW_BITS {
                let mut v = [0.0f32; 4];
                for (c, x) in v.iter_mut().take(if rot { 4 } else { 3 }).enumerate() {
                    *x = f32::from_bits(read_bits(self.data, bit + 32 * c as u64, 32));
                }
                return Some(v);
            }
            let range = |i: usize| meta.get(LANE_META_BYTES * k + i).copied().unwrap_or(0);
            let mut d = [0.0f32; 3];
            for (c, x) in d.iter_mut().enumerate() {
                let q = read_bits(self.data, bit, u32::from(bits[c]));
                bit += u64::from(bits[c]);
                let dec = ComponentDecode::new(
                    min(c),
                    unit(c),
                    range(2 * c),
                    range(2 * c + 1),
                    bits[c],
                    range(TREND_BYTE + c) as i8,
                    range(CURVE_BYTE + c) as i8,
                );
                *x = dec.value(q, local as f32);
            }
            if !rot {
                return Some([d[0], d[1], d[2], 0.0]);
            }
            let q = match self.rotation {
                RotationFormat::DropW => drop_w_rotation(d[0], d[1], d[2]),
                RotationFormat::SmallestThree => {
                    smallest_three_rotation(read_bits(self.data, bit, 2), d[0], d[1], d[2])
                }
            };
            Some(q.to_array())
        }

        /// Joint `j`'s transform at frame `f` (validated indices).
        fn joint_at(&self, f: usize, j: usize, rest: Option<&[SoaTransform]>) -> Transform {
            let mut t = match rest.and_then(|r| get_joint(r, j)) {
                Some(d) => d,
                None => Transform::IDENTITY,
            };
            if let Some(v) = self.track_at(f, j, 0) {
                t.translation = Vec3::new(v[0], v[1], v[2]);
            }
            if let Some(v) = self.track_at(f, j, 1) {
                t.rotation = Quat::new(v[0], v[1], v[2], v[3]);
            }
            if let Some(v) = self.track_at(f, j, 2) {
                t.scale = Vec3::new(v[0], v[1], v[2]);
            }
            t
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
    extern crate alloc;

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
        let v = crate::math::sqrt_f32(d.x * d.x + d.y * d.y + d.z * d.z);
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

    #[test]
    fn component_rates_take_one_bit_off_dropped_components() {
        let drops = |d: u8| d << RATE_DROP_SHIFT;
        assert_eq!(component_rates(10), [10, 10, 10]);
        assert_eq!(component_rates(10 | drops(0b101)), [9, 10, 9]);
        assert_eq!(component_rates(1 | drops(0b111)), [0, 0, 0]);
        assert_eq!(component_rates(23 | drops(0b010)), [23, 22, 23]);
        assert_eq!(component_rates(RAW_BITS), [RAW_BITS; 3]);
        assert_eq!(
            lane_frame_bits(true, RotationFormat::SmallestThree, [9, 10, 9]),
            30
        );
        assert_eq!(
            lane_frame_bits(false, RotationFormat::DropW, [RAW_BITS; 3]),
            96
        );
        // The lane-wise decoder's rates equal the reference's for every
        // valid rate byte.
        for byte in 0..=255u8 {
            let (rate, d) = (byte & 31, byte >> RATE_DROP_SHIFT);
            if (rate > MAX_QUANTIZED_BITS && rate != RAW_BITS)
                || (d != 0 && (rate == 0 || rate == RAW_BITS))
            {
                continue;
            }
            let x4 = rates_x4([u32::from(byte) | 0xab00; 4]);
            let want = component_rates(byte).map(u32::from);
            assert_eq!(x4.map(|v| v.to_array()[2]), want, "byte {byte:#x}");
        }
    }

    /// `parts` written into a 16-byte aligned buffer of exactly its size.
    fn written(parts: &CompressedParts<'_>) -> alloc::vec::Vec<u128> {
        let mut words = alloc::vec![0u128; compressed_size(parts).unwrap() / 16];
        write_compressed(parts, bytemuck::cast_slice_mut(&mut words)).unwrap();
        words
    }

    /// A block of three joints whose stored tracks have no animated lane
    /// (translation, rotation and scale constants that are not the
    /// defaults, one of them -0), over 40 frames, in the compact layout
    /// ([`CONST_VEC_PARAM_FLOATS`] / [`CONST_ROT_PARAM_FLOATS`]).
    fn constant_block(rotation: RotationFormat) -> alloc::vec::Vec<u128> {
        let kinds = [KIND_STORED, KIND_STORED, KIND_STORED];
        let mut params = alloc::vec::Vec::new();
        // Translation x, y, z of lanes 0-3 (lane 3 is padding: identity).
        params.extend_from_slice(&[
            1.5, -0.0, 2.0, 0.0, -3.0, 0.25, 7.0, 0.0, 0.5, 1.0, -0.0, 0.0,
        ]);
        // Rotation x, y, z, w: 90° about x, about y, and the identity.
        let h = core::f32::consts::FRAC_1_SQRT_2;
        params.extend_from_slice(&[h, 0.0, -0.0, 0.0, 0.0, h, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
        params.extend_from_slice(&[h, h, 1.0, 1.0]);
        // Scale.
        params.extend_from_slice(&[2.0, 1.0, 1.0, 1.0, 2.0, 0.5, 1.0, 1.0, 2.0, 1.0, 3.0, 1.0]);
        let parts = CompressedParts {
            sample_rate: 30.0,
            joint_count: 3,
            frame_count: 40,
            segment_frames: 16,
            rotation,
            defaults: Defaults::Identity,
            kinds: &kinds,
            params: &params,
            meta: &[],
            data: &[],
            name: "still",
        };
        written(&parts)
    }

    /// Stored tracks without an animated lane keep only their constants
    /// and decode to exactly those, -0 included, rotations too (no nlerp
    /// rounding), at any time, with either rotation format, through the
    /// sampler (the AVX2 decoder where the CPU has it) and the portable
    /// decoder; the scalar reference, which interpolates them, agrees
    /// within rounding. The layout with units is corrupt for them.
    #[test]
    fn constant_tracks_store_and_decode_their_constants() {
        let h = core::f32::consts::FRAC_1_SQRT_2;
        let want = SoaTransform {
            translation: SoaVec3 {
                x: f32x4::new([1.5, -0.0, 2.0, 0.0]),
                y: f32x4::new([-3.0, 0.25, 7.0, 0.0]),
                z: f32x4::new([0.5, 1.0, -0.0, 0.0]),
            },
            rotation: SoaQuat {
                x: f32x4::new([h, 0.0, -0.0, 0.0]),
                y: f32x4::new([0.0, h, 0.0, 0.0]),
                z: f32x4::new([0.0; 4]),
                w: f32x4::new([h, h, 1.0, 1.0]),
            },
            scale: SoaVec3 {
                x: f32x4::new([2.0, 1.0, 1.0, 1.0]),
                y: f32x4::new([2.0, 0.5, 1.0, 1.0]),
                z: f32x4::new([2.0, 1.0, 3.0, 1.0]),
            },
        };
        let bits = |t: &SoaTransform| -> [[u32; 4]; 10] { bytemuck::cast(*t) };
        // The scalar reference nlerps rotations, which may round: compared apart.
        let near = |a: &SoaQuat, b: &SoaQuat| {
            let d = dot4(a, b).to_array();
            d.iter().all(|d| (d - 1.0).abs() < 1e-6)
        };
        for rotation in [RotationFormat::DropW, RotationFormat::SmallestThree] {
            let words = constant_block(rotation);
            let clip = CompressedClip::from_bytes(bytemuck::cast_slice(&words)).unwrap();
            assert_eq!(clip.animated_lane_count(), 0);
            for t in [0.0, 0.4, 1.0 / 3.0, 1.3] {
                let mut out = [SoaTransform::IDENTITY];
                clip.sample(t, crate::clip::TimeMode::Clamp, &mut out)
                    .unwrap();
                assert_eq!(bits(&out[0]), bits(&want), "{rotation:?} t {t}");
                let (i0, i1, alpha) = clip.locate(t, crate::clip::TimeMode::Clamp).unwrap();
                let mut portable = [SoaTransform::IDENTITY];
                let at = [clip.frame_at(i0), clip.frame_at(i1)];
                match rotation {
                    RotationFormat::DropW => {
                        clip.decode_blend_as::<false>(&at, alpha, None, &mut portable);
                    }
                    RotationFormat::SmallestThree => {
                        clip.decode_blend_as::<true>(&at, alpha, None, &mut portable);
                    }
                }
                assert_eq!(bits(&portable[0]), bits(&want), "{rotation:?} t {t}");
            }
            let mut out = [SoaTransform::IDENTITY];
            clip.decode_frame(5, &[], &mut out).unwrap();
            assert_eq!(bits(&out[0]), bits(&want));
            let mut reference = [SoaTransform::IDENTITY];
            let rest = [SoaTransform::IDENTITY];
            reference::sample(
                &clip,
                0.3,
                crate::clip::TimeMode::Clamp,
                &rest,
                &mut reference,
            )
            .unwrap();
            let mut r = reference[0];
            assert!(near(&r.rotation, &want.rotation), "{rotation:?}");
            r.rotation = want.rotation;
            // Its lerp (a + (b - a) t) turns -0 into +0: compared as numbers.
            let floats = |t: &SoaTransform| -> [[f32; 4]; 10] { bytemuck::cast(*t) };
            assert_eq!(floats(&r), floats(&want), "{rotation:?}");
        }
        // Units stored as if a lane were animated do not match the kinds:
        // refused by the writer, and by the reader when a kind byte is
        // edited to claim no animated lane.
        let mut long = alloc::vec![0u128; 64];
        let params = [0.0f32; VEC_PARAM_FLOATS];
        let parts = CompressedParts {
            sample_rate: 30.0,
            joint_count: 3,
            frame_count: 40,
            segment_frames: 16,
            rotation: RotationFormat::DropW,
            defaults: Defaults::Identity,
            kinds: &[KIND_STORED, KIND_DEFAULT, KIND_DEFAULT],
            params: &params,
            meta: &[],
            data: &[],
            name: "",
        };
        assert!(matches!(
            write_compressed(&parts, bytemuck::cast_slice_mut(&mut long)),
            Err(Error::BadLength { .. })
        ));
        let mut words = one_lane(7);
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut words);
        assert_eq!(bytes[HEADER_BYTES + 1], KIND_STORED | 1 << 4);
        bytes[HEADER_BYTES + 1] = KIND_STORED;
        let e = CompressedClip::from_bytes(bytes).map(|_| ());
        let what = "track kinds do not match the header's counts";
        assert_eq!(e, Err(Error::Corrupt { what }));
        assert_eq!(track_param_floats(true, 0), CONST_ROT_PARAM_FLOATS);
        assert_eq!(
            track_param_floats(false, 0b0100_0000),
            CONST_VEC_PARAM_FLOATS
        );
        assert_eq!(track_param_floats(true, 0b0001), ROT_PARAM_FLOATS);
        assert_eq!(track_param_floats(false, 0b1000), VEC_PARAM_FLOATS);
    }

    /// A one-joint, one-frame container whose rotation lane has rate byte
    /// `rate_byte` (and as many stream bytes as that rate needs).
    fn one_lane(rate_byte: u8) -> alloc::vec::Vec<u128> {
        let kinds = [KIND_DEFAULT, KIND_STORED | 1 << 4, KIND_DEFAULT];
        let mut params = [0.0f32; ROT_PARAM_FLOATS];
        params[4] = 0.001; // x unit of lane 0
        params[24..].fill(1.0); // w of the constant lanes
        let mut meta = [0u8; LANE_META_BYTES];
        meta[1] = 10;
        meta[RATE_BYTE] = rate_byte;
        let bits = lane_frame_bits(true, RotationFormat::DropW, lane_rates(&meta));
        let data = alloc::vec![0u8; (bits as usize).div_ceil(8)];
        let parts = CompressedParts {
            sample_rate: 30.0,
            joint_count: 1,
            frame_count: 1,
            segment_frames: 16,
            rotation: RotationFormat::DropW,
            defaults: Defaults::Identity,
            kinds: &kinds,
            params: &params,
            meta: &meta,
            data: &data,
            name: "",
        };
        written(&parts)
    }

    #[test]
    fn invalid_rate_bytes_are_corrupt() {
        let open = |b: u8| {
            let w = one_lane(b);
            CompressedClip::from_bytes(bytemuck::cast_slice(&w)).map(|_| ())
        };
        assert_eq!(open(7 | 0b011 << RATE_DROP_SHIFT), Ok(()));
        assert_eq!(open(MAX_QUANTIZED_BITS), Ok(()));
        for (byte, what) in [
            (24, "bit rate out of range"),
            (30, "bit rate out of range"),
            (
                0b100 << RATE_DROP_SHIFT,
                "component drops on a 0-bit or verbatim lane",
            ),
            (
                RAW_BITS | 1 << RATE_DROP_SHIFT,
                "component drops on a 0-bit or verbatim lane",
            ),
        ] {
            assert_eq!(open(byte), Err(Error::Corrupt { what }), "byte {byte:#x}");
        }
    }

    #[test]
    fn unit_covers_the_extent() {
        for (min, ext) in [(0.0f32, 1.0f32), (-0.7, 1.3), (123.4, 0.001), (-2.0, 4.0)] {
            let u = unit_for_extent(min, ext);
            assert!(min + 255.0 * u >= min + ext, "{min} {ext}");
        }
        assert_eq!(unit_for_extent(5.0, 0.0), 0.0);
    }
}
