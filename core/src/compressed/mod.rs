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
//! (`component_rates`). A component's code `q` at local frame `i` of its
//! segment decodes to `min + unit · (((smin + step · q) + d · i/8) + k ·
//! i²/256)` ([`codec::ComponentDecode::value`]). Rotations keep three
//! components: x, y, z of the quaternion with `w ≥ 0`
//! ([`RotationFormat::DropW`]), or the three smallest with a 2-bit index
//! of the dropped largest one ([`RotationFormat::SmallestThree`]), each
//! animated rotation lane in its own format in a
//! [`RotationFormat::PerLane`] clip (the default), named by its *format
//! slot*: the `w` constant an animated lane does not need.
//!
//! The animated lanes are not stored in their joints' blocks but *packed*:
//! after the joints' blocks come packed blocks whose translation,
//! rotation and scale tracks hold every animated lane of that type, in
//! joint order, four to a track (every packed track full but each type's
//! last). A decode costs per animated track, whether one lane of it or
//! four are animated, so packing cuts the tracks a pose decodes (pab's
//! walk: 12 to 7), and the joints' blocks keep only constants; a joint
//! block's track whose other lanes hold the defaults is not stored at all.
//! Each packed lane names its joint (`u16`), and the decoders write the
//! interpolated lanes there after copying the joints' constants.
//!
//! Inside a segment the bits are frame-major: frame after frame, each frame
//! the animated lanes in stream order (packed block, then translation,
//! rotation, scale, then lane), each lane's three codes next to each other
//! (then the smallest-three index of a smallest-three lane). A frame starts at `segment_bit + local_frame ×
//! frame_bits`, so random access costs exactly what sequential playback
//! costs, and a lane's codes sit in one 64-bit window when its rate is at most
//! `ONE_WINDOW_BITS` (18), in two up to 23 bits: the sampler reads one window per lane, splits it into
//! three codes, assembles them into `u32x4` lanes and dequantizes each
//! component of four joints with one multiply-add (plus the trend's). On
//! x86-64 CPUs with AVX2 a faster decoder (`avx2`) with the same results
//! bit for bit takes over, unless the `portable` feature is on.
//!
//! # Container (version 7, little endian)
//! A 64-byte header (magic `SINEWCMP`, version, joint count, frame count,
//! sample rate, total size, name length, segment frames, rotation format
//! (0 drop-W, 1 smallest-three, 2 per lane),
//! defaults, clip constant floats `P`, animated lanes `A`, data bytes,
//! packed blocks `K` (at most the joint blocks), 4 reserved zero bytes),
//! then these sections, each starting on a 16-byte boundary: block-track
//! kinds (`3 × (blocks + K)` bytes, the joints' blocks then the packed
//! ones: 0 = default, or `1 | animated_mask << 4`; a joint block's mask is
//! always 0, a packed track's lanes are the first ones), clip constants
//! (`P` `f32`: per stored block track `min` and `unit` vectors of x, y, z,
//! plus for rotations the `w` vector of the constant lanes holding the
//! animated lanes' format slots, `+0.0` drop-W or `1.0` smallest-three; a
//! track without an animated lane stores only its x, y, z and `w`
//! vectors), the packed lanes' joints (`A` `u16`, in stream order;
//! strictly increasing within each type), segment table (per
//! segment: `u32` first bit, `u32` bits per frame), segment metadata (per segment, per animated lane,
//! 13 bytes: 8-bit minimum and extent of each
//! component, the rate byte (the bit rate in its low 5 bits, the three
//! components' drop bits above, bit `5 + c` for component `c`), the signed trend
//! slope of each component, then its signed trend curvature), the
//! bit stream (plus 8 zero bytes), the name. The layout is
//! fully determined by the header's counts, and [`CompressedClip::from_bytes`]
//! checks every offset, count, constant, bit rate, range and raw value once;
//! sampling then never reads outside the validated sections.
//!
//! # Where the code is
//! This module holds the view ([`CompressedClip`]) and its sampling API.
//! `format` holds the layout constants, the header and the section
//! offsets; `validate` the checks of [`CompressedClip::from_bytes`];
//! `decode` the portable decoder and `avx2` its AVX2 twin; [`reference`](mod@reference)
//! the scalar reference decoder, the readable specification; [`codec`] the
//! decoding arithmetic the compressor shares; [`writer`] the container
//! writer.

use wide::f32x4;

use crate::clip::{locate_frames, TimeMode};
use crate::error::Error;
use crate::soa::{check_len, soa_count, SoaTransform, LANES};

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod avx2;
mod cache;
pub mod codec;
mod decode;
mod format;
pub mod reference;
mod remap;
#[cfg(test)]
mod tests;
mod validate;
pub mod writer;

pub use cache::{PlaybackCache, PlaybackState};
use format::{lane_rates, LANE_META_BYTES};
pub use format::{
    Defaults, RotationFormat, COMPRESSED_MAGIC, COMPRESSED_VERSION, HEADER_BYTES, KIND_DEFAULT,
    KIND_STORED, RAW_BITS,
};

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
    /// `f32x4` vectors of one playback-cache slot: 3 per packed
    /// translation or scale track, 4 per packed rotation track.
    slot_vectors: usize,
    total: usize,
    /// Kind bytes of the joint blocks, then of the packed blocks.
    kinds: &'a [u8],
    /// Per animated lane in stream order (the packed blocks' lanes), the
    /// joint it belongs to.
    dest: &'a [u16],
    /// The `f32x4` index in `params` of the packed blocks' first constant.
    packed_at: usize,
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

    /// Views a container that [`CompressedClip::from_bytes`] accepted
    /// before and that has not changed since: the header and the layout are
    /// read again (O(1)), the per-segment and per-value checks are not. For
    /// views re-created from bytes validated once at load time (the C
    /// library's handles); on bytes that did change, sampling stays
    /// memory-safe (every read is bounds-checked) but its results are
    /// unspecified.
    ///
    /// # Errors
    /// As [`CompressedClip::from_bytes`], for the header and layout checks
    /// only.
    pub fn from_validated_bytes(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::open(bytes, false)
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

    /// Samples only the first `out.len()` SoA blocks at time `t` (the
    /// joint-count prefix of joint LOD, [`crate::lod`]): each block gets
    /// exactly what [`CompressedClip::sample_with_rest`] writes there, bit
    /// for bit, and the bit stream is read no further than the last of
    /// them. `rest` is read only when the clip was compressed with
    /// [`Defaults::RestPose`] (pass `&[]` otherwise).
    ///
    /// # Errors
    /// [`Error::BadLength`] when `out` has more than `soa_count()` blocks,
    /// or for `rest` when it is needed and does not have `soa_count()`
    /// blocks; [`Error::NonFinite`] for a non-finite `t`.
    pub fn sample_prefix(
        &self,
        t: f32,
        mode: TimeMode,
        rest: &[SoaTransform],
        out: &mut [SoaTransform],
    ) -> Result<(), Error> {
        let n = self.soa_count();
        if out.len() > n {
            return Err(Error::BadLength {
                buffer: "output",
                expected: n,
                actual: out.len(),
            });
        }
        let rest = match self.defaults {
            Defaults::RestPose => {
                check_len("rest pose", n, rest.len())?;
                Some(rest)
            }
            Defaults::Identity => None,
        };
        let crate::clip::Bracket {
            before: i0,
            after: i1,
            alpha,
        } = self.locate(t, mode)?;
        self.decode_blend(i0, i1, alpha, rest, out);
        Ok(())
    }

    /// The two bracketing frames and the interpolation factor for time `t`
    /// (as [`crate::clip::RawClip::locate`]).
    ///
    /// # Errors
    /// [`Error::NonFinite`] when `t` is NaN or infinite.
    pub fn locate(&self, t: f32, mode: TimeMode) -> Result<crate::clip::Bracket, Error> {
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
        let crate::clip::Bracket {
            before: i0,
            after: i1,
            alpha,
        } = self.locate(t, mode)?;
        self.decode_blend(i0, i1, alpha, rest, out);
        Ok(())
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

    /// The kind of block `b`'s translation (`track` 0), rotation (1) or
    /// scale (2) block track: [`KIND_DEFAULT`], or [`KIND_STORED`] with the
    /// mask of its animated lanes in bits 4..8 (lanes the container stores
    /// in its packed blocks; see the module docs). `None` past the joints'
    /// blocks.
    #[must_use]
    pub fn block_track_kind(&self, b: usize, track: usize) -> Option<u8> {
        if track > 2 || b >= self.soa_count() {
            return None;
        }
        let own = self.kinds.get(3 * b + track).copied()?;
        let mut mask = 0u8;
        let mut dest = self.dest;
        for (i, &kind) in self.packed_kinds().iter().enumerate() {
            let joints = decode::next_joints(&mut dest, kind);
            if i % 3 == track {
                for &j in joints {
                    if usize::from(j) / LANES == b {
                        mask |= 1 << (usize::from(j) % LANES);
                    }
                }
            }
        }
        Some(if mask == 0 {
            own
        } else {
            KIND_STORED | mask << 4
        })
    }

    /// The metadata of segment `s`: per animated lane, [`LANE_META_BYTES`]
    /// bytes (minimum and extent of each component, the bit rate, then the
    /// signed trend of each component).
    #[inline]
    #[must_use]
    pub(crate) fn segment_meta(&self, s: usize) -> Option<&'a [u8]> {
        let n = self.animated * LANE_META_BYTES;
        self.meta.get(s * n..(s + 1) * n)
    }

    /// The component bit rates of every animated lane in segment `s`, in
    /// container order: `0..=23` bits each (a lane's components differ by
    /// at most one bit), or `[RAW_BITS; 3]` for a lane stored verbatim.
    pub fn segment_rates(&self, s: usize) -> impl Iterator<Item = [u8; 3]> + 'a {
        self.segment_meta(s)
            .unwrap_or(&[])
            .chunks_exact(LANE_META_BYTES)
            .map(lane_rates)
    }

    /// Per animated lane in container order (as [`Self::segment_rates`]):
    /// `None` for a translation or scale lane, the format of a rotation
    /// lane ([`RotationFormat::DropW`] or [`RotationFormat::SmallestThree`];
    /// in a [`RotationFormat::PerLane`] clip each lane's own).
    pub fn animated_lane_formats(&self) -> impl Iterator<Item = Option<RotationFormat>> + 'a {
        let params: &'a [f32] = bytemuck::cast_slice(self.params);
        format::lane_kinds(self.kinds.iter().copied(), params).map(|k| match k {
            format::LaneKind::Vector => None,
            format::LaneKind::DropW => Some(RotationFormat::DropW),
            format::LaneKind::SmallestThree => Some(RotationFormat::SmallestThree),
        })
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
