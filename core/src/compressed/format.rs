//! The container's layout: its constants, the header, the counts the kind
//! bytes imply, the section offsets and the bit reader, shared by the reader
//! ([`super::validate`]), the decoders and the writer ([`super::writer`]).
//! The byte-level description is the module documentation of
//! [`crate::compressed`].

use crate::container::{check_preamble, le_u32};
use crate::error::Error;
use crate::soa::{soa_count, LANES};

/// Magic bytes that open a compressed clip container.
pub const COMPRESSED_MAGIC: [u8; 8] = *b"SINEWCMP";

/// Compressed clip container version written and read by this build.
pub const COMPRESSED_VERSION: u32 = 7;

/// Size of the container header in bytes.
pub const HEADER_BYTES: usize = 64;

/// The bit rate that marks a lane stored as verbatim `f32` values in a
/// segment (3 values for translation and scale, 4 for rotation).
pub const RAW_BITS: u8 = 31;

/// The rate byte's bits below this hold the lane's bit rate (`0..=23`, or
/// [`RAW_BITS`]); the three bits from here are the component *drops*: bit
/// `RATE_DROP_SHIFT + c` set stores component `c` with one bit fewer.
pub(crate) const RATE_DROP_SHIFT: u32 = 5;

/// The largest bit rate whose three codes (and smallest-three index) a lane
/// reads from one 64-bit window; higher rates read one window per component.
pub(crate) const ONE_WINDOW_BITS: u8 = 18;

/// Zero bytes after the bit stream, so the 8-byte reads of the bit reader
/// stay inside the data section.
pub(crate) const READ_PADDING: usize = 8;

/// Bytes of segment metadata per animated lane: 8-bit minimum and extent of
/// each component, the rate byte (bit rate and component drops), the signed
/// trend slope of each component, then its signed trend curvature.
pub(crate) const LANE_META_BYTES: usize = 13;

/// Index of the first trend byte in a lane's segment metadata.
pub(crate) const TREND_BYTE: usize = 7;

/// Index of the first trend curvature byte in a lane's segment metadata.
pub(crate) const CURVE_BYTE: usize = 10;

/// Index of the rate byte (bit rate and component drops, see
/// [`RATE_DROP_SHIFT`]) in a lane's segment metadata.
pub(crate) const RATE_BYTE: usize = 6;

/// Block-track kind byte: not stored, the default value.
pub const KIND_DEFAULT: u8 = 0;
/// Block-track kind bit: stored (animated lanes in bits 4..8).
pub const KIND_STORED: u8 = 1;

/// Constant floats of a stored translation or scale block track with an
/// animated lane: `min` and `unit` of x, y, z, 4 lanes each.
pub(crate) const VEC_PARAM_FLOATS: usize = 24;
/// Constant floats of a stored rotation block track with an animated lane:
/// `min` and `unit` of x, y, z, then the constant lanes' `w`.
pub(crate) const ROT_PARAM_FLOATS: usize = 28;
/// Constant floats of a stored translation or scale block track without an
/// animated lane (stored because its constants are not the defaults): the
/// x, y, z constants, 4 lanes each.
pub(crate) const CONST_VEC_PARAM_FLOATS: usize = 12;
/// Constant floats of a stored rotation block track without an animated
/// lane: the x, y, z and w constants.
pub(crate) const CONST_ROT_PARAM_FLOATS: usize = 16;

/// Constant floats of a stored block track (a rotation or not) whose
/// animated lanes are `mask`: [`VEC_PARAM_FLOATS`] or [`ROT_PARAM_FLOATS`],
/// or with no animated lane [`CONST_VEC_PARAM_FLOATS`] or
/// [`CONST_ROT_PARAM_FLOATS`] (no units, which would all be zero).
#[inline]
#[must_use]
pub(crate) const fn track_param_floats(rotation: bool, mask: u8) -> usize {
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
pub(crate) const fn param_index(
    constant_track: bool,
    c: usize,
    l: usize,
) -> (usize, Option<usize>) {
    match (constant_track, c) {
        (true, _) => (4 * c + l, None),
        (false, 3) => (24 + l, None),
        (false, _) => (8 * c + l, Some(8 * c + 4 + l)),
    }
}

/// How rotations keep three of their four components.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum RotationFormat {
    /// x, y, z of the quaternion made `w ≥ 0`; `w = √(1 − x² − y² − z²)`.
    DropW,
    /// The three smallest components of the quaternion whose largest
    /// component is made positive, plus a 2-bit index of the dropped one.
    SmallestThree,
    /// Each animated rotation lane is drop-W or smallest-three, as its
    /// *format slot* says (the `w` clip constant an animated lane does not
    /// need: `+0.0` drop-W, `1.0` smallest-three): a compressor picks per
    /// track the format that needs fewer bits.
    #[default]
    PerLane,
}

impl RotationFormat {
    pub(crate) fn code(self) -> u32 {
        match self {
            RotationFormat::DropW => 0,
            RotationFormat::SmallestThree => 1,
            RotationFormat::PerLane => 2,
        }
    }
}

/// The lane format slot of a drop-W animated rotation lane: the `w` float
/// a constant lane stores, which an animated lane does not need, holds
/// this value (`+0.0`), or [`LANE_SMALLEST_THREE`].
pub(crate) const LANE_DROP_W: f32 = 0.0;
/// The lane format slot of a smallest-three animated rotation lane (`1.0`).
pub(crate) const LANE_SMALLEST_THREE: f32 = 1.0;

/// Index of the `f32x4` holding the `w` of the constant lanes and the
/// format slots of the animated lanes, in a rotation track with an
/// animated lane.
pub(crate) const LANE_FORMAT_VECTOR: usize = 6;

/// Track-level decoder instances (the `F` / `T` parameter of the track
/// decoders): every animated lane drop-W, every one smallest-three, or a
/// mix (the smallest-three lanes given at run time).
pub(crate) const TRACK_DROP_W: u8 = 0;
/// See [`TRACK_DROP_W`].
pub(crate) const TRACK_S3: u8 = 1;
/// See [`TRACK_DROP_W`].
pub(crate) const TRACK_MIXED: u8 = 2;

/// What default (unstored) tracks hold when sampled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Defaults {
    /// Identity: zero translation, identity rotation, unit scale.
    #[default]
    Identity,
    /// The skeleton's rest pose (bind-pose stripping): sample with
    /// [`super::CompressedClip::sample_with_rest`].
    RestPose,
}

/// Bits one frame of an animated lane takes with component bit rates
/// `rates` (see [`component_rates`]; `[RAW_BITS; 3]` for a verbatim lane);
/// `s3` for a smallest-three rotation lane (its 2-bit index).
#[inline]
#[must_use]
pub(crate) const fn lane_frame_bits(rotation: bool, s3: bool, rates: [u8; 3]) -> u32 {
    if rates[0] == RAW_BITS {
        if rotation {
            128
        } else {
            96
        }
    } else {
        let idx = if rotation && s3 { 2 } else { 0 };
        rates[0] as u32 + rates[1] as u32 + rates[2] as u32 + idx
    }
}

/// The bit rates of a lane's three components from its rate byte: the
/// lane's rate, less one for each component whose drop bit is set (see
/// [`RATE_DROP_SHIFT`]; never below 0). A verbatim lane gives
/// `[RAW_BITS; 3]`.
#[inline]
#[must_use]
pub(crate) const fn component_rates(rate_byte: u8) -> [u8; 3] {
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
pub(crate) fn lane_rates(lane: &[u8]) -> [u8; 3] {
    component_rates(lane.get(RATE_BYTE).copied().unwrap_or(0))
}

/// The byte offsets of a container's sections (each 16-byte aligned) and
/// its total size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    pub(crate) kinds: usize,
    pub(crate) params: usize,
    pub(crate) dest: usize,
    pub(crate) seg_table: usize,
    pub(crate) meta: usize,
    pub(crate) data: usize,
    pub(crate) name: usize,
    pub(crate) total: usize,
}

fn align16(x: usize) -> Option<usize> {
    x.checked_add(15).map(|v| v & !15)
}

impl Layout {
    /// The canonical layout for these counts (`blocks` counts the joints'
    /// blocks and the packed ones), or `None` on overflow.
    pub(crate) fn new(
        blocks: usize,
        params: usize,
        animated: usize,
        segments: usize,
        data_bytes: usize,
        name_len: usize,
    ) -> Option<Layout> {
        let kinds = HEADER_BYTES;
        let params_at = align16(kinds + 3 * blocks)?;
        let dest = align16(params_at.checked_add(params.checked_mul(4)?)?)?;
        let seg_table = align16(dest.checked_add(animated.checked_mul(2)?)?)?;
        let meta = align16(seg_table.checked_add(segments.checked_mul(8)?)?)?;
        let per_seg = animated.checked_mul(LANE_META_BYTES)?;
        let data = align16(meta.checked_add(segments.checked_mul(per_seg)?)?)?;
        let name = align16(data.checked_add(data_bytes)?)?;
        let total = align16(name.checked_add(name_len)?)?;
        u32::try_from(total).ok()?;
        Some(Layout {
            kinds,
            params: params_at,
            dest,
            seg_table,
            meta,
            data,
            name,
            total,
        })
    }
}

pub(crate) fn corrupt(what: &'static str) -> Error {
    Error::Corrupt { what }
}

/// What the kind bytes imply: stored block tracks' constant floats, animated
/// lanes, or an error for an unknown kind or an animated padding lane.
pub(crate) fn kind_counts(
    kinds: impl IntoIterator<Item = u8>,
    joints: usize,
) -> Result<(usize, usize), Error> {
    let (mut params, mut animated) = (0usize, 0usize);
    for (i, k) in kinds.into_iter().enumerate() {
        if k == KIND_DEFAULT {
            continue;
        }
        if k & 0x0f != KIND_STORED {
            return Err(corrupt("unknown track kind"));
        }
        let mask = u32::from(k >> 4);
        // A packed block (past the joints' blocks) has four lanes.
        let lanes = if i / 3 >= soa_count(joints) {
            LANES
        } else {
            joints.saturating_sub((i / 3) * LANES).min(LANES)
        };
        if mask >> lanes != 0 {
            return Err(corrupt("animated padding lane"));
        }
        params += track_param_floats(i % 3 == 1, k >> 4);
        animated += mask.count_ones() as usize;
    }
    Ok((params, animated))
}

/// The format of an animated lane: a translation or scale, or a rotation
/// stored drop-W or smallest-three.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LaneKind {
    Vector,
    DropW,
    SmallestThree,
}

impl LaneKind {
    /// Whether it is a rotation.
    #[inline]
    pub(crate) fn rotation(self) -> bool {
        self != LaneKind::Vector
    }

    /// Whether it stores a smallest-three index.
    #[inline]
    pub(crate) fn s3(self) -> bool {
        self == LaneKind::SmallestThree
    }

    /// Bits of one frame at component rates `rates`.
    #[inline]
    pub(crate) fn frame_bits(self, rates: [u8; 3]) -> u32 {
        lane_frame_bits(self.rotation(), self.s3(), rates)
    }
}

/// The lane format of an animated rotation lane from its format slot
/// (`None` for a value that is neither code).
#[inline]
pub(crate) fn lane_format_of(slot: f32) -> Option<LaneKind> {
    if slot.to_bits() == LANE_DROP_W.to_bits() {
        Some(LaneKind::DropW)
    } else if slot.to_bits() == LANE_SMALLEST_THREE.to_bits() {
        Some(LaneKind::SmallestThree)
    } else {
        None
    }
}

/// Per animated lane in stream order, its [`LaneKind`], from the kind
/// bytes and the clip constants `params` (the lane format slots; a value
/// that is neither code reads as drop-W here, [`super::validate`] refuses
/// it).
pub(crate) fn lane_kinds<'p>(
    kinds: impl IntoIterator<Item = u8> + 'p,
    params: &'p [f32],
) -> impl Iterator<Item = LaneKind> + 'p {
    let mut p = 0usize;
    kinds.into_iter().enumerate().flat_map(move |(i, k)| {
        let stored = k & 0x0f == KIND_STORED;
        let mask = if stored { k >> 4 } else { 0 };
        let rot = i % 3 == 1;
        let at = p;
        if stored {
            p += track_param_floats(rot, mask);
        }
        (0..LANES)
            .filter(move |l| mask & (1 << l) != 0)
            .map(move |l| {
                if !rot {
                    return LaneKind::Vector;
                }
                let slot = params.get(at + 4 * LANE_FORMAT_VECTOR + l).copied();
                slot.and_then(lane_format_of).unwrap_or(LaneKind::DropW)
            })
    })
}

/// Bits per frame of segment `s`, from the lanes' kinds (the kind bytes
/// and the clip constants `params`) and their rates in `meta`.
pub(crate) fn segment_frame_bits(
    kinds: &[u8],
    params: &[f32],
    meta: &[u8],
    animated: usize,
    s: usize,
) -> u64 {
    let m = meta
        .get(s * animated * LANE_META_BYTES..(s + 1) * animated * LANE_META_BYTES)
        .unwrap_or(&[]);
    frame_bits(
        lane_kinds(kinds.iter().copied(), params),
        m.chunks_exact(LANE_META_BYTES).map(|lm| lm[RATE_BYTE]),
    )
}

/// Bits per frame of a segment whose animated lanes (of kinds `lanes`, in
/// order) have the rate bytes `rate_bytes`.
pub(crate) fn frame_bits(
    lanes: impl IntoIterator<Item = LaneKind>,
    rate_bytes: impl Iterator<Item = u8>,
) -> u64 {
    lanes
        .into_iter()
        .zip(rate_bytes)
        .map(|(k, r)| u64::from(k.frame_bits(component_rates(r))))
        .sum()
}

/// The 8 bytes at `byte` as a little-endian word (0 outside `data`).
#[inline(always)]
pub(crate) fn read_u64(data: &[u8], byte: usize) -> u64 {
    match data.get(byte..byte + 8) {
        Some(&[a, b, c, d, e, f, g, h]) => u64::from_le_bytes([a, b, c, d, e, f, g, h]),
        _ => 0,
    }
}

/// Reads `n ≤ 32` bits at bit `bit` (little-endian bit order).
#[inline(always)]
pub(crate) fn read_bits(data: &[u8], bit: u64, n: u32) -> u32 {
    let word = read_u64(data, (bit >> 3) as usize);
    ((word >> (bit & 7)) & ((1u64 << n) - 1)) as u32
}

/// The header's fields, decoded but not yet checked against each other or
/// the buffer (that is [`super::validate`]'s work).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Header {
    pub(crate) joints: usize,
    pub(crate) frames: usize,
    pub(crate) sample_rate: f32,
    pub(crate) total: usize,
    pub(crate) name_len: usize,
    pub(crate) segment_frames: usize,
    pub(crate) rotation: RotationFormat,
    pub(crate) defaults: Defaults,
    /// Clip constant floats.
    pub(crate) params: usize,
    /// Animated lanes.
    pub(crate) animated: usize,
    /// Bytes of the bit stream with its [`READ_PADDING`].
    pub(crate) data_bytes: usize,
    /// Packed blocks after the joints' blocks (see [`super`]'s module docs).
    pub(crate) packed_blocks: usize,
}

impl Header {
    /// Reads the first [`HEADER_BYTES`] of `bytes`, checking the magic, the
    /// version, the alignment, the two enumerations and the reserved bytes.
    pub(crate) fn read(bytes: &[u8]) -> Result<Header, Error> {
        check_preamble(bytes, &COMPRESSED_MAGIC, COMPRESSED_VERSION, HEADER_BYTES)?;
        let word = |at: usize| le_u32(bytes, at) as usize;
        let rotation = match le_u32(bytes, 36) {
            0 => RotationFormat::DropW,
            1 => RotationFormat::SmallestThree,
            2 => RotationFormat::PerLane,
            _ => return Err(corrupt("unknown rotation format")),
        };
        let defaults = match le_u32(bytes, 40) {
            0 => Defaults::Identity,
            1 => Defaults::RestPose,
            _ => return Err(corrupt("unknown defaults mode")),
        };
        if bytes
            .get(60..HEADER_BYTES)
            .is_none_or(|r| r.iter().any(|&b| b != 0))
        {
            return Err(corrupt("reserved header bytes are not zero"));
        }
        Ok(Header {
            joints: word(12),
            frames: word(16),
            sample_rate: f32::from_bits(le_u32(bytes, 20)),
            total: word(24),
            name_len: word(28),
            segment_frames: word(32),
            rotation,
            defaults,
            params: word(44),
            animated: word(48),
            data_bytes: word(52),
            packed_blocks: word(56),
        })
    }

    /// Writes the header into the first [`HEADER_BYTES`] of `out` (zeroed by
    /// the caller, so the reserved bytes stay zero). Counts wider than 32
    /// bits are the caller's to refuse ([`Layout::new`] bounds the sizes).
    pub(crate) fn write(&self, out: &mut [u8]) {
        let mut put = |at: usize, v: u32| {
            if let Some(w) = out.get_mut(at..at + 4) {
                w.copy_from_slice(&v.to_le_bytes());
            }
        };
        put(8, COMPRESSED_VERSION);
        put(12, self.joints as u32);
        put(16, self.frames as u32);
        put(20, self.sample_rate.to_bits());
        put(24, self.total as u32);
        put(28, self.name_len as u32);
        put(32, self.segment_frames as u32);
        put(36, self.rotation.code());
        put(40, matches!(self.defaults, Defaults::RestPose) as u32);
        put(44, self.params as u32);
        put(48, self.animated as u32);
        put(52, self.data_bytes as u32);
        put(56, self.packed_blocks as u32);
        if let Some(m) = out.get_mut(..8) {
            m.copy_from_slice(&COMPRESSED_MAGIC);
        }
    }
}
