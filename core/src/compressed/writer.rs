//! Writing a container into a caller-provided buffer.
//!
//! A compressor describes its result in the format's own terms: the
//! header settings ([`Header`]); per block track (four joints' translations,
//! rotations or scales) whether it is stored and its clip constants
//! ([`BlockTrack`]); per segment and animated lane its range, bit rate and
//! trend bytes ([`LaneSegment`]); and per frame each animated lane's codes.
//! [`Writer`] lays out the sections, encodes the kind and metadata bytes,
//! computes the segment table and packs the bit stream. It allocates
//! nothing: [`Writer::size`] tells the caller how large a buffer to provide.
//!
//! The writer checks that the pieces fit together (counts and lengths), not
//! what they hold: view the result with [`super::CompressedClip::from_bytes`],
//! which validates every value. The values a compressor puts in come from
//! the decoder's own arithmetic in [`super::codec`].
//!
//! ```
//! use sinew_core::compressed::writer::{BlockTrack, Header, Writer};
//! use sinew_core::compressed::{CompressedClip, Defaults, RotationFormat};
//!
//! // One joint whose translation is the constant (1, 2, 3): a stored block
//! // track without an animated lane (lanes 1-3 are padding: identity).
//! // Its rotation and scale are the defaults (identity).
//! let translation = BlockTrack::Stored {
//!     animated: 0,
//!     min: [[1.0, 0.0, 0.0, 0.0], [2.0, 0.0, 0.0, 0.0], [3.0, 0.0, 0.0, 0.0]],
//!     unit: [[0.0; 4]; 3],
//!     w: [0.0; 4],
//!     smallest_three: 0,
//! };
//! let tracks = [translation, BlockTrack::Default, BlockTrack::Default];
//! let header = Header {
//!     sample_rate: 30.0,
//!     joint_count: 1,
//!     frame_count: 2,
//!     segment_frames: 16,
//!     rotation: RotationFormat::DropW,
//!     defaults: Defaults::Identity,
//!     name: "still",
//! };
//! // No animated lane: no lane metadata and no codes.
//! let writer = Writer::new(header, &tracks, &[])?;
//! let mut words = vec![0u128; writer.size() / 16]; // 16-byte aligned
//! let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut words);
//! writer.write(|_segment, _frame, _lane| [0; 4], bytes)?;
//! let clip = CompressedClip::from_bytes(bytes)?;
//! assert_eq!((clip.joint_count(), clip.name()), (1, "still"));
//! # Ok::<(), sinew_core::Error>(())
//! ```

use super::format::{
    component_rates, frame_bits, kind_counts, Header as Fields, LaneKind, Layout, KIND_DEFAULT,
    KIND_STORED, LANE_DROP_W, LANE_META_BYTES, LANE_SMALLEST_THREE, RATE_DROP_SHIFT, RAW_BITS,
    READ_PADDING,
};
use super::{Defaults, RotationFormat};
use crate::error::Error;
use crate::math::Transform;
use crate::soa::{check_len, soa_count, SoaTransform, LANES};

/// A container's settings: what its header records besides the counts the
/// writer derives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Header<'a> {
    /// Frames per second (finite, > 0).
    pub sample_rate: f32,
    /// Joints (1..=[`crate::skeleton::MAX_JOINTS`]).
    pub joint_count: usize,
    /// Frames (≥ 1).
    pub frame_count: usize,
    /// Frames per segment (1..=65536).
    pub segment_frames: usize,
    /// How rotations keep three of their components.
    pub rotation: RotationFormat,
    /// What default block tracks hold.
    pub defaults: Defaults,
    /// The clip's name (UTF-8, stored after the bit stream).
    pub name: &'a str,
}

/// One block track: the translations, rotations or scales of four joints
/// (a block of [`crate::soa::LANES`] lanes).
///
/// A container lists them block by block, each block's translation, then
/// rotation, then scale.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BlockTrack {
    /// Not stored: every lane holds the default (identity, or the rest pose
    /// with [`Defaults::RestPose`]).
    Default,
    /// Stored: each lane is animated (stored per frame) or constant.
    Stored {
        /// The animated lanes, bit `l` for lane `l` (bits 0..4; padding
        /// lanes past the joint count are never animated).
        animated: u8,
        /// Per component x, y, z and lane: the clip minimum of an animated
        /// lane, the value of a constant lane (identity in padding lanes).
        min: [[f32; 4]; 3],
        /// Per component and lane: the clip unit (extent / 255, see
        /// [`super::codec::unit_for_extent`]) of an animated lane, 0 for a
        /// constant lane. Not stored when no lane is animated.
        unit: [[f32; 4]; 3],
        /// Rotation tracks only: the `w` of each constant lane (the value
        /// given for an animated lane is not read: the container stores
        /// the lane's format there). Ignored for translations and scales.
        w: [f32; 4],
        /// Rotation tracks of a [`RotationFormat::PerLane`] container only:
        /// the animated lanes stored smallest-three (bit `l` for lane `l`);
        /// the other animated lanes are drop-W. Ignored otherwise (the
        /// header's format applies to every lane).
        smallest_three: u8,
    },
}

impl BlockTrack {
    /// Its kind byte: [`KIND_DEFAULT`], or [`KIND_STORED`] with the animated
    /// mask in bits 4..8.
    fn kind(&self) -> u8 {
        match self {
            BlockTrack::Default => KIND_DEFAULT,
            BlockTrack::Stored { animated, .. } => KIND_STORED | (animated & 15) << 4,
        }
    }

    /// The smallest-three lanes among its animated lanes in a container
    /// of rotation format `format` (for a rotation track).
    fn s3_lanes(&self, format: RotationFormat) -> u8 {
        match (self, format) {
            (BlockTrack::Default, _) | (_, RotationFormat::DropW) => 0,
            (BlockTrack::Stored { animated, .. }, RotationFormat::SmallestThree) => animated & 15,
            (
                BlockTrack::Stored {
                    animated,
                    smallest_three,
                    ..
                },
                RotationFormat::PerLane,
            ) => animated & smallest_three & 15,
        }
    }
}

/// Per animated lane of `tracks` in stream order, its [`LaneKind`] in a
/// container of rotation format `format`.
fn lane_kinds_of(
    tracks: &[BlockTrack],
    format: RotationFormat,
) -> impl Iterator<Item = LaneKind> + '_ {
    tracks.iter().enumerate().flat_map(move |(i, t)| {
        let mask = t.kind() >> 4;
        let s3 = t.s3_lanes(format);
        (0..4).filter(move |l| mask & (1 << l) != 0).map(move |l| {
            match (i % 3 == 1, s3 & (1 << l) != 0) {
                (false, _) => LaneKind::Vector,
                (true, false) => LaneKind::DropW,
                (true, true) => LaneKind::SmallestThree,
            }
        })
    })
}

/// Where one animated lane goes in the container: it is the `slot`-th
/// lane of the packed track of type `t` (0 translation, 1 rotation, 2
/// scale) in packed block `v`, and comes from lane `lane` of joint block
/// `block`, the `index`-th animated lane of the caller's order (block by
/// block, translation, rotation, scale, then lane).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Packed {
    v: usize,
    t: usize,
    slot: usize,
    block: usize,
    lane: usize,
    index: usize,
}

impl Packed {
    /// The joint the lane belongs to.
    fn joint(&self) -> usize {
        self.block * LANES + self.lane
    }
}

/// The animated lanes of one track type in the caller's order, with their
/// index in that order.
#[derive(Clone, Copy, Debug)]
struct TypeCursor {
    t: usize,
    block: usize,
    bits: u8,
    /// The caller's index of block `block`'s first animated lane.
    before: usize,
}

fn animated_mask(tracks: &[BlockTrack], i: usize) -> u8 {
    tracks.get(i).map_or(0, |t| (t.kind() >> 4) & 15)
}

impl TypeCursor {
    fn new(tracks: &[BlockTrack], t: usize) -> Self {
        TypeCursor {
            t,
            block: 0,
            bits: animated_mask(tracks, t),
            before: 0,
        }
    }

    /// The next lane: its block, lane and index.
    fn next(&mut self, tracks: &[BlockTrack], blocks: usize) -> Option<(usize, usize, usize)> {
        while self.bits == 0 {
            let block_lanes: u32 = (0..3)
                .map(|t| animated_mask(tracks, 3 * self.block + t).count_ones())
                .sum();
            self.before += block_lanes as usize;
            self.block += 1;
            if self.block >= blocks {
                return None;
            }
            self.bits = animated_mask(tracks, 3 * self.block + self.t);
        }
        let lane = self.bits.trailing_zeros() as usize;
        self.bits &= self.bits - 1;
        let b = self.block;
        let earlier: u32 = (0..self.t)
            .map(|t| animated_mask(tracks, 3 * b + t).count_ones())
            .sum();
        let mask = animated_mask(tracks, 3 * b + self.t);
        let in_track = (mask & ((1u8 << lane) - 1)).count_ones();
        Some((b, lane, self.before + (earlier + in_track) as usize))
    }
}

/// The animated lanes of `tracks` (`blocks` joint blocks) in packed
/// order: packed block by packed block, its translation, rotation and
/// scale track, then slot; each type's lanes fill its packed tracks in the
/// caller's order.
fn packed_lanes(
    tracks: &[BlockTrack],
    blocks: usize,
    counts: [usize; 3],
) -> impl Iterator<Item = Packed> + '_ {
    let packed_blocks = packed_block_count(counts);
    let mut cursors = [0, 1, 2].map(|t| TypeCursor::new(tracks, t));
    (0..packed_blocks).flat_map(move |v| {
        let mut out = [None; 12];
        for t in 0..3 {
            for slot in 0..LANES {
                if v * LANES + slot < counts[t] {
                    if let Some((block, lane, index)) = cursors[t].next(tracks, blocks) {
                        out[t * LANES + slot] = Some(Packed {
                            v,
                            t,
                            slot,
                            block,
                            lane,
                            index,
                        });
                    }
                }
            }
        }
        out.into_iter().flatten()
    })
}

/// Packed blocks of a container whose track types have `counts` animated
/// lanes.
fn packed_block_count(counts: [usize; 3]) -> usize {
    counts.iter().map(|n| n.div_ceil(LANES)).max().unwrap_or(0)
}

/// What decides where each track goes: the caller's tracks, the joint
/// blocks, the animated lanes per type and what default lanes hold.
#[derive(Clone, Copy, Debug)]
struct Packing<'a> {
    tracks: &'a [BlockTrack],
    blocks: usize,
    counts: [usize; 3],
    defaults: Defaults,
    rest: Option<&'a [SoaTransform]>,
}

impl Packing<'_> {
    /// Whether every lane of joint block `b`'s track `t` that is not
    /// `animated` holds, bit for bit, what a default track decodes to (the
    /// rest pose's lane with [`Defaults::RestPose`], identity otherwise):
    /// then the joint block need not store the track at all, its animated
    /// lanes being in the packed blocks.
    fn constant_lanes_default(
        &self,
        b: usize,
        t: usize,
        animated: u8,
        min: &[[f32; 4]; 3],
        w: &[f32; 4],
    ) -> bool {
        (0..LANES).filter(|l| animated & (1 << l) == 0).all(|l| {
            let default = match (self.defaults, self.rest.and_then(|r| r.get(b))) {
                (Defaults::RestPose, Some(r)) => r.get(l),
                _ => Transform::IDENTITY,
            };
            let want: [f32; 4] = match t {
                0 => [
                    default.translation.x,
                    default.translation.y,
                    default.translation.z,
                    0.0,
                ],
                1 => default.rotation.to_array(),
                _ => [default.scale.x, default.scale.y, default.scale.z, 0.0],
            };
            let have = [
                min[0][l],
                min[1][l],
                min[2][l],
                if t == 1 { w[l] } else { 0.0 },
            ];
            have.iter()
                .zip(want)
                .all(|(a, b)| a.to_bits() == b.to_bits())
        })
    }
}

/// The kind byte the container stores at track position `i` (joint
/// blocks first, then packed blocks): a joint block's track keeps only
/// constants, and is default when its other lanes hold the defaults (all
/// four animated, or the rest animated), which the packed lanes overwrite;
/// a packed track stores its animated slots.
fn stored_kind(p: &Packing<'_>, i: usize) -> u8 {
    let (tracks, blocks, counts) = (p.tracks, p.blocks, p.counts);
    let (b, t) = (i / 3, i % 3);
    if b < blocks {
        return match tracks.get(i) {
            Some(BlockTrack::Stored {
                animated, min, w, ..
            }) if !p.constant_lanes_default(b, t, *animated, min, w) => KIND_STORED,
            _ => KIND_DEFAULT,
        };
    }
    let first = (b - blocks) * LANES;
    let n = counts[t].saturating_sub(first).min(LANES);
    if n == 0 {
        KIND_DEFAULT
    } else {
        KIND_STORED | (((1u8 << n) - 1) << 4)
    }
}

/// One animated lane's encoding in one segment: its segment range inside
/// the clip range, its bit rate and its trend.
///
/// A component's code `q` at local frame `i` of the segment decodes to
/// [`super::codec::ComponentDecode::value`] of these bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LaneSegment {
    /// Per component x, y, z: the segment minimum and extent, in clip units
    /// (`min + extent ≤ 255`).
    pub range: [u8; 6],
    /// Bits per component code, `0..=`[`super::codec::MAX_QUANTIZED_BITS`], or
    /// [`super::RAW_BITS`] for a lane stored as verbatim `f32` values.
    pub rate: u8,
    /// Bit `c` set stores component `c` with one bit fewer than `rate`
    /// (never on a 0-bit or verbatim lane).
    pub drops: u8,
    /// Per component: the signed trend slope byte
    /// (see [`super::codec::trend_slope`]).
    pub trend: [i8; 3],
    /// Per component: the signed trend curvature byte
    /// (see [`super::codec::trend_curve`]).
    pub curve: [i8; 3],
}

impl LaneSegment {
    /// The rate byte: the rate, with the drops above it.
    fn rate_byte(&self) -> u8 {
        self.rate | self.drops << RATE_DROP_SHIFT
    }

    /// The metadata bytes the container stores for it.
    fn bytes(&self) -> [u8; LANE_META_BYTES] {
        let mut b = [0u8; LANE_META_BYTES];
        b[..6].copy_from_slice(&self.range);
        b[6] = self.rate_byte();
        for c in 0..3 {
            b[7 + c] = self.trend[c] as u8;
            b[10 + c] = self.curve[c] as u8;
        }
        b
    }
}

/// A container ready to be written: the pieces checked against each other
/// and the layout computed.
#[derive(Clone, Copy, Debug)]
pub struct Writer<'a> {
    pieces: Pieces<'a>,
    layout: Layout,
    params: usize,
    data_bytes: usize,
}

/// The caller's pieces and the counts they imply.
#[derive(Clone, Copy, Debug)]
struct Pieces<'a> {
    header: Header<'a>,
    tracks: &'a [BlockTrack],
    lanes: &'a [LaneSegment],
    animated: usize,
    segments: usize,
    /// Joint blocks.
    blocks: usize,
    /// Animated lanes per track type.
    counts: [usize; 3],
    /// The rest pose, for clips with [`Defaults::RestPose`].
    rest: Option<&'a [SoaTransform]>,
}

impl<'a> Pieces<'a> {
    fn packing(&self) -> Packing<'a> {
        Packing {
            tracks: self.tracks,
            blocks: self.blocks,
            counts: self.counts,
            defaults: self.header.defaults,
            rest: self.rest,
        }
    }
}

impl<'a> Writer<'a> {
    /// Checks that the pieces fit together and lays the container out.
    ///
    /// `tracks` holds `3 × soa_count(joint_count)` block tracks (block by
    /// block: translation, rotation, scale). `lanes` holds, segment after
    /// segment, one [`LaneSegment`] per animated lane in container order:
    /// block by block, translation, rotation, scale, then lane.
    ///
    /// # Errors
    /// [`Error::BadLength`] when `tracks` or `lanes` do not have those
    /// lengths, [`Error::InvalidSampleRate`] for zero frames or segment
    /// frames, [`Error::Corrupt`] for an animated padding lane or a
    /// container that exceeds the format's 32-bit sizes.
    pub fn new(
        header: Header<'a>,
        tracks: &'a [BlockTrack],
        lanes: &'a [LaneSegment],
    ) -> Result<Self, Error> {
        Self::build(header, tracks, lanes, None)
    }

    /// [`Writer::new`] for a clip with [`Defaults::RestPose`] of a skeleton
    /// whose rest pose is `rest` (its SoA blocks): a block track whose
    /// lanes are all animated or hold the rest pose's values, bit for bit,
    /// is left to the defaults, as [`Writer::new`] does with identity.
    ///
    /// # Errors
    /// As [`Writer::new`], and [`Error::BadLength`] when `rest` does not
    /// have the joints' block count.
    pub fn with_rest(
        header: Header<'a>,
        tracks: &'a [BlockTrack],
        lanes: &'a [LaneSegment],
        rest: &'a [SoaTransform],
    ) -> Result<Self, Error> {
        check_len("rest pose", soa_count(header.joint_count), rest.len())?;
        Self::build(header, tracks, lanes, Some(rest))
    }

    fn build(
        header: Header<'a>,
        tracks: &'a [BlockTrack],
        lanes: &'a [LaneSegment],
        rest: Option<&'a [SoaTransform]>,
    ) -> Result<Self, Error> {
        let blocks = soa_count(header.joint_count);
        check_len("block tracks", 3 * blocks, tracks.len())?;
        if header.segment_frames == 0 || header.frame_count == 0 {
            return Err(Error::InvalidSampleRate);
        }
        let kinds = tracks.iter().map(BlockTrack::kind);
        let (_, animated) = kind_counts(kinds, header.joint_count)?;
        let counts = [0, 1, 2].map(|t| {
            (0..blocks)
                .map(|b| animated_mask(tracks, 3 * b + t).count_ones() as usize)
                .sum::<usize>()
        });
        let packed = packed_block_count(counts);
        let packing = Packing {
            tracks,
            blocks,
            counts,
            defaults: header.defaults,
            rest,
        };
        let stored = (0..3 * (blocks + packed)).map(|i| stored_kind(&packing, i));
        let (params, _) = kind_counts(stored, header.joint_count)?;
        let segments = header.frame_count.div_ceil(header.segment_frames);
        check_len("lane segments", segments * animated, lanes.len())?;
        let pieces = Pieces {
            header,
            tracks,
            lanes,
            animated,
            segments,
            blocks,
            counts,
            rest,
        };
        let too_large = Error::Corrupt {
            what: "compressed clip exceeds 4 GiB",
        };
        let mut bit = 0u64;
        for s in 0..segments {
            let fb = pieces.frame_bits(s);
            // The segment table stores both in 32 bits.
            if u32::try_from(bit).is_err() || u32::try_from(fb).is_err() {
                return Err(Error::Corrupt {
                    what: "bit stream exceeds 4 Gbit",
                });
            }
            bit += pieces.frames(s) as u64 * fb;
        }
        let data_bytes = usize::try_from(bit.div_ceil(8))
            .ok()
            .and_then(|b| b.checked_add(READ_PADDING))
            .ok_or(too_large)?;
        let name_len = header.name.len();
        let layout = Layout::new(
            blocks + packed,
            params,
            animated,
            segments,
            data_bytes,
            name_len,
        )
        .ok_or(too_large)?;
        Ok(Writer {
            pieces,
            layout,
            params,
            data_bytes,
        })
    }

    /// Bytes [`Writer::write`] writes: the container's size, a multiple of 16.
    #[inline]
    #[must_use]
    pub fn size(&self) -> usize {
        self.layout.total
    }

    /// Writes the container into `out` (16-byte aligned, at least
    /// [`Writer::size`] bytes) and returns the bytes written.
    ///
    /// `codes(segment, frame, lane)` gives animated lane `lane` (its index
    /// among the segment's [`LaneSegment`]s) at local frame `frame` of
    /// segment `segment`: its three component codes and, for a
    /// smallest-three rotation, the dropped component's index; for a
    /// verbatim lane, the bits of its three `f32` values (four for a
    /// rotation: x, y, z, w). Only each code's low bits (its component's
    /// rate) are stored. It is called once per lane and frame, in stream
    /// order.
    ///
    /// # Errors
    /// [`Error::BufferTooSmall`], [`Error::Misaligned`].
    pub fn write(
        &self,
        mut codes: impl FnMut(usize, usize, usize) -> [u32; 4],
        out: &mut [u8],
    ) -> Result<usize, Error> {
        let l = &self.layout;
        let p = &self.pieces;
        let h = &p.header;
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
        Fields {
            joints: h.joint_count,
            frames: h.frame_count,
            sample_rate: h.sample_rate,
            total: l.total,
            name_len: h.name.len(),
            segment_frames: h.segment_frames,
            rotation: h.rotation,
            defaults: h.defaults,
            params: self.params,
            animated: p.animated,
            data_bytes: self.data_bytes,
            packed_blocks: packed_block_count(p.counts),
        }
        .write(out);
        let mut put = |at: usize, bytes: &[u8]| {
            if let Some(o) = out.get_mut(at..at + bytes.len()) {
                o.copy_from_slice(bytes);
            }
        };
        let packing = p.packing();
        let positions = 3 * (p.blocks + packed_block_count(p.counts));
        for i in 0..positions {
            put(l.kinds + i, &[stored_kind(&packing, i)]);
        }
        let mut at = l.params;
        let mut floats = |v: &[f32; 4]| {
            for x in v {
                put(at, &x.to_le_bytes());
                at += 4;
            }
        };
        let mut packed = packed_lanes(p.tracks, p.blocks, p.counts).peekable();
        for i in 0..positions {
            let kind = stored_kind(&packing, i);
            if kind == KIND_DEFAULT {
                continue;
            }
            let (b, t) = (i / 3, i % 3);
            // Identity in the lanes a track does not hold: the animated
            // lanes of a joint block's track (the packed lanes overwrite
            // them) and a packed track's unused slots.
            let identity = |c: usize| {
                if t == 2 || (t == 1 && c == 3) {
                    1.0
                } else {
                    0.0
                }
            };
            if b < p.blocks {
                let Some(BlockTrack::Stored {
                    animated, min, w, ..
                }) = p.tracks.get(i)
                else {
                    continue;
                };
                let keep = |c: usize, l: usize, v: f32| {
                    if animated & (1 << l) != 0 {
                        identity(c)
                    } else {
                        v
                    }
                };
                for (c, m) in min.iter().enumerate() {
                    floats(&core::array::from_fn(|l| keep(c, l, m[l])));
                }
                if t == 1 {
                    floats(&core::array::from_fn(|l| keep(3, l, w[l])));
                }
                continue;
            }
            // A packed track: its lanes' clip constants, units and (for
            // rotations) format slots, gathered from their joint blocks.
            let mut mins = [[0.0f32; 4]; 3];
            let mut units = [[0.0f32; 4]; 3];
            let mut ws = [1.0f32; 4];
            for (c, m) in mins.iter_mut().enumerate() {
                *m = [identity(c); 4];
            }
            while let Some(q) = packed.next_if(|q| q.v == b - p.blocks && q.t == t) {
                let Some(track @ BlockTrack::Stored { min, unit, .. }) =
                    p.tracks.get(3 * q.block + t)
                else {
                    continue;
                };
                for c in 0..3 {
                    mins[c][q.slot] = min[c][q.lane];
                    units[c][q.slot] = unit[c][q.lane];
                }
                ws[q.slot] = if track.s3_lanes(h.rotation) & (1 << q.lane) != 0 {
                    LANE_SMALLEST_THREE
                } else {
                    LANE_DROP_W
                };
            }
            for c in 0..3 {
                floats(&mins[c]);
                floats(&units[c]);
            }
            if t == 1 {
                floats(&ws);
            }
        }
        for (k, q) in packed_lanes(p.tracks, p.blocks, p.counts).enumerate() {
            put(l.dest + 2 * k, &(q.joint() as u16).to_le_bytes());
        }
        for s in 0..p.segments {
            let lanes = p.lanes_of(s);
            for (k, q) in packed_lanes(p.tracks, p.blocks, p.counts).enumerate() {
                if let Some(lane) = lanes.get(q.index) {
                    put(
                        l.meta + (s * p.animated + k) * LANE_META_BYTES,
                        &lane.bytes(),
                    );
                }
            }
        }
        let mut bit = 0u64;
        for s in 0..p.segments {
            let fb = p.frame_bits(s);
            // `new` checked that both fit 32 bits.
            put(l.seg_table + 8 * s, &(bit as u32).to_le_bytes());
            put(l.seg_table + 8 * s + 4, &(fb as u32).to_le_bytes());
            bit += p.frames(s) as u64 * fb;
        }
        put(l.name, h.name.as_bytes());
        let data = out
            .get_mut(l.data..l.data + self.data_bytes)
            .unwrap_or(&mut []);
        p.write_stream(&mut codes, data);
        Ok(l.total)
    }
}

impl<'a> Pieces<'a> {
    /// Packs every segment's frames into `data` (zeroed): frame after
    /// frame, each frame the animated lanes in order, each lane's codes at
    /// their rates (then a smallest-three index) or its verbatim values.
    fn write_stream(
        &self,
        codes: &mut impl FnMut(usize, usize, usize) -> [u32; 4],
        data: &mut [u8],
    ) {
        let mut bit = 0u64;
        let mut push = |v: u32, n: u32| {
            put_bits(data, bit, v, n);
            bit += u64::from(n);
        };
        for s in 0..self.segments {
            let lanes = self.lanes_of(s);
            for f in 0..self.frames(s) {
                for q in packed_lanes(self.tracks, self.blocks, self.counts) {
                    let Some(lane) = lanes.get(q.index) else {
                        continue;
                    };
                    let kind = self.lane_kind(&q);
                    let word = codes(s, f, q.index);
                    let rot = kind.rotation();
                    if lane.rate == RAW_BITS {
                        let n = if rot { 4 } else { 3 };
                        for &x in &word[..n] {
                            push(x, 32);
                        }
                    } else {
                        for (&x, r) in word[..3].iter().zip(component_rates(lane.rate_byte())) {
                            push(x, u32::from(r));
                        }
                        if kind.s3() {
                            push(word[3], 2);
                        }
                    }
                }
            }
        }
    }

    /// The format of a packed lane.
    fn lane_kind(&self, q: &Packed) -> LaneKind {
        let track = self.tracks.get(3 * q.block + q.t);
        let s3 = track.map_or(0, |t| t.s3_lanes(self.header.rotation));
        match (q.t == 1, s3 & (1 << q.lane) != 0) {
            (false, _) => LaneKind::Vector,
            (true, false) => LaneKind::DropW,
            (true, true) => LaneKind::SmallestThree,
        }
    }

    /// Segment `s`'s lanes.
    fn lanes_of(&self, s: usize) -> &'a [LaneSegment] {
        let n = self.animated;
        self.lanes.get(s * n..(s + 1) * n).unwrap_or(&[])
    }

    /// Frames in segment `s` (the last one may be short).
    fn frames(&self, s: usize) -> usize {
        let h = &self.header;
        (h.frame_count - s * h.segment_frames).min(h.segment_frames)
    }

    /// Bits per frame of segment `s`.
    fn frame_bits(&self, s: usize) -> u64 {
        frame_bits(
            lane_kinds_of(self.tracks, self.header.rotation),
            self.lanes_of(s).iter().map(LaneSegment::rate_byte),
        )
    }
}

/// ORs the low `n ≤ 32` bits of `v` into `data` (zeroed there) at bit `bit`,
/// in the bit reader's order (little endian).
fn put_bits(data: &mut [u8], bit: u64, v: u32, n: u32) {
    let mut x = (u64::from(v) & ((1u64 << n) - 1)) << (bit & 7);
    let mut i = (bit >> 3) as usize;
    while x != 0 {
        if let Some(b) = data.get_mut(i) {
            *b |= x as u8;
        }
        x >>= 8;
        i += 1;
    }
}
