//! The motion-matching database container: a validated, zero-copy view of
//! normalized feature vectors in lane blocks, their bounding boxes, and the
//! map from database frames to clips.
//!
//! Layout (little-endian, every section 16-byte aligned):
//!
//! | bytes | content |
//! |---|---|
//! | 64 | header: magic `SINEWMMD`, version, counts, sample rate, root joint, facing axis, mirror axis, total size |
//! | 32 × groups | [`FeatureGroup`]s: kind, joint, frames ahead, first feature, width, weight |
//! | 4 × features (padded) | per-feature mean (raw units) |
//! | 4 × features (padded) | per-feature scale: `weight / deviation` of its group |
//! | 16 × ranges | [`FrameRange`]s: clip, first database frame, frames, flags |
//! | 2 × joints (padded) | mirror map (joint → its left/right partner), empty without mirroring |
//! | 4 × padded frames | per frame 0 (searchable) or +∞ (not) |
//! | 16 × features × padded frames / 4 | normalized features, four frames in the lanes of a block |
//! | 32 × features × padded frames / 64 | small boxes (16 frames), four boxes in the lanes |
//! | 32 × features × padded frames / 256 | large boxes (64 frames), four boxes in the lanes |
//!
//! Frames are padded to a multiple of 256 (four large boxes) with
//! unsearchable zero frames, so every loop runs over whole lane blocks.

use wide::f32x4;

use crate::container::{check_preamble, le_u32};
use crate::error::Error;
use crate::math::Vec3;

/// Magic bytes of a motion-matching database.
pub const DATABASE_MAGIC: [u8; 8] = *b"SINEWMMD";
/// Format version this build reads and writes.
pub const DATABASE_VERSION: u32 = 1;
/// Most features per frame.
pub const MAX_FEATURES: usize = 256;
/// Most feature groups.
pub const MAX_GROUPS: usize = 32;
/// Frames per small bounding box.
pub const SMALL_BOX: usize = 16;
/// Frames per large bounding box (four small boxes).
pub const LARGE_BOX: usize = 64;
/// Frames are padded to a multiple of this (four large boxes).
pub const FRAME_PADDING: usize = 256;
/// Most frames in a database (the frame index fits a `u32` and the sizes fit
/// 32-bit targets).
pub const MAX_FRAMES: usize = 1 << 22;

const HEADER: usize = 64;
const GROUP_BYTES: usize = 32;
const RANGE_BYTES: usize = 16;
/// `FrameRange::flags` bit: the range plays its clip mirrored.
pub const RANGE_MIRRORED: u32 = 1;

/// What a feature group measures. Positions and velocities are of one
/// joint, in the character's root frame (the hips projected on the ground,
/// turned to their facing); trajectory samples are the root's own future
/// position and facing, `frames_ahead` frames later, on the ground plane.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum FeatureKind {
    /// A joint's position in the root frame: x, y, z (metres).
    Position = 0,
    /// A joint's velocity in the root frame: x, y, z (metres per second).
    Velocity = 1,
    /// The root's ground position `frames_ahead` frames later, in today's
    /// root frame: x, z (metres).
    TrajectoryPosition = 2,
    /// The root's facing `frames_ahead` frames later, in today's root
    /// frame: x, z of a unit vector.
    TrajectoryDirection = 3,
}

impl FeatureKind {
    /// The kind with this code, if any.
    #[must_use]
    pub fn from_code(code: u32) -> Option<FeatureKind> {
        Some(match code {
            0 => FeatureKind::Position,
            1 => FeatureKind::Velocity,
            2 => FeatureKind::TrajectoryPosition,
            3 => FeatureKind::TrajectoryDirection,
            _ => return None,
        })
    }

    /// Features the group holds: 3 for a joint, 2 for a trajectory sample.
    #[must_use]
    pub fn width(self) -> usize {
        match self {
            FeatureKind::Position | FeatureKind::Velocity => 3,
            FeatureKind::TrajectoryPosition | FeatureKind::TrajectoryDirection => 2,
        }
    }

    /// True for the groups a controller fills from its predicted trajectory.
    #[must_use]
    pub fn is_trajectory(self) -> bool {
        matches!(
            self,
            FeatureKind::TrajectoryPosition | FeatureKind::TrajectoryDirection
        )
    }
}

/// One group of features as the container stores it.
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct FeatureGroup {
    /// [`FeatureKind`] code.
    pub kind: u32,
    /// The joint of a position or velocity group (`u32::MAX` for trajectory groups).
    pub joint: u32,
    /// Frames ahead of a trajectory group (0 for joint groups).
    pub frames_ahead: u32,
    /// Index of the group's first feature.
    pub first: u32,
    /// Number of features: [`FeatureKind::width`].
    pub width: u32,
    /// The group's weight (finite, `> 0`), already folded into the scale.
    pub weight: f32,
    /// Zero.
    pub reserved: [u32; 2],
}

impl FeatureGroup {
    /// A group of `kind` starting at feature `first`, its width from the
    /// kind; `joint` is `u32::MAX` and `frames_ahead` > 0 for trajectory
    /// groups, `frames_ahead` 0 for joint groups (the writer checks).
    #[must_use]
    pub fn new(kind: FeatureKind, joint: u32, frames_ahead: u32, first: u32, weight: f32) -> Self {
        FeatureGroup {
            kind: kind as u32,
            joint,
            frames_ahead,
            first,
            width: kind.width() as u32,
            weight,
            reserved: [0; 2],
        }
    }

    /// The group's kind (groups of a validated database always have one).
    #[must_use]
    pub fn feature_kind(&self) -> FeatureKind {
        FeatureKind::from_code(self.kind).unwrap_or(FeatureKind::Position)
    }
}

/// The frames of one clip (or its mirrored copy) in the database.
#[derive(Clone, Copy, Debug, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct FrameRange {
    /// Index of the clip in the set the database was built from.
    pub clip: u32,
    /// The range's first database frame.
    pub start: u32,
    /// Frames in the range; database frame `start + i` is the clip at time
    /// `i / sample_rate`.
    pub len: u32,
    /// [`RANGE_MIRRORED`] or 0.
    pub flags: u32,
}

impl FrameRange {
    /// True when the range plays its clip mirrored.
    #[must_use]
    pub fn mirrored(&self) -> bool {
        self.flags & RANGE_MIRRORED != 0
    }
}

/// The best frame a search found and its cost (weighted squared distance).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Match {
    /// Database frame.
    pub frame: u32,
    /// Weighted squared distance of the frame's features to the query.
    pub cost: f32,
}

/// Everything [`write_database`] stores. Features are given normalized
/// (`(raw − mean) × scale`), row-major: `features[frame × F + f]`.
#[derive(Clone, Copy, Debug)]
pub struct DatabaseDesc<'a> {
    /// Frames per second of every range.
    pub sample_rate: f32,
    /// The joint whose ground projection and facing define the root frame.
    pub root: u32,
    /// The root joint's local axis that points forward.
    pub facing_axis: Vec3,
    /// The horizontal axis that mirroring negates: 0 (x) or 2 (z).
    pub mirror_axis: u32,
    /// Feature groups, contiguous and in order of their features.
    pub groups: &'a [FeatureGroup],
    /// Per-feature mean of the raw features.
    pub mean: &'a [f32],
    /// Per-feature scale (`weight / deviation`).
    pub scale: &'a [f32],
    /// Frame ranges, contiguous and in order, covering every frame.
    pub ranges: &'a [FrameRange],
    /// Left/right partner of every joint (empty when no range is mirrored).
    pub mirror: &'a [u16],
    /// Normalized features, row-major.
    pub features: &'a [f32],
    /// Per frame: may a search return it?
    pub searchable: &'a [bool],
}

/// Byte offsets of the sections, from the counts.
#[derive(Clone, Copy, Debug)]
struct Layout {
    groups: usize,
    mean: usize,
    scale: usize,
    ranges: usize,
    mirror: usize,
    bias: usize,
    features: usize,
    small: usize,
    large: usize,
    total: usize,
}

#[derive(Clone, Copy, Debug)]
struct Counts {
    features: usize,
    frames: usize,
    padded: usize,
    groups: usize,
    ranges: usize,
    joints: usize,
}

fn pad16(n: usize) -> Option<usize> {
    n.checked_add(15).map(|n| n & !15)
}

impl Counts {
    fn layout(&self) -> Option<Layout> {
        let f4 = self.features.checked_mul(4)?;
        let groups = HEADER;
        let mean = groups.checked_add(self.groups.checked_mul(GROUP_BYTES)?)?;
        let scale = mean.checked_add(pad16(f4)?)?;
        let ranges = scale.checked_add(pad16(f4)?)?;
        let mirror = ranges.checked_add(self.ranges.checked_mul(RANGE_BYTES)?)?;
        let bias = mirror.checked_add(pad16(self.joints.checked_mul(2)?)?)?;
        let features = bias.checked_add(self.padded.checked_mul(4)?)?;
        let small = features.checked_add(self.padded.checked_mul(f4)?)?;
        let large = small.checked_add((self.padded / SMALL_BOX).checked_mul(f4 * 2)?)?;
        let total = large.checked_add((self.padded / LARGE_BOX).checked_mul(f4 * 2)?)?;
        u32::try_from(total).ok()?;
        Some(Layout {
            groups,
            mean,
            scale,
            ranges,
            mirror,
            bias,
            features,
            small,
            large,
            total,
        })
    }
}

/// Frames padded to whole groups of four large boxes.
fn padded_frames(frames: usize) -> Option<usize> {
    frames
        .checked_add(FRAME_PADDING - 1)
        .map(|n| n / FRAME_PADDING * FRAME_PADDING)
}

/// A validated view of a motion-matching database container.
#[derive(Clone, Copy, Debug)]
pub struct Database<'a> {
    pub(crate) groups: &'a [FeatureGroup],
    pub(crate) mean: &'a [f32],
    pub(crate) scale: &'a [f32],
    pub(crate) ranges: &'a [FrameRange],
    pub(crate) mirror: &'a [u16],
    pub(crate) bias: &'a [f32x4],
    pub(crate) features: &'a [f32x4],
    pub(crate) small: &'a [f32x4],
    pub(crate) large: &'a [f32x4],
    pub(crate) feature_count: usize,
    pub(crate) frame_count: usize,
    pub(crate) sample_rate: f32,
    pub(crate) root: u32,
    pub(crate) facing_axis: Vec3,
    pub(crate) mirror_axis: u32,
}

fn corrupt<T>(what: &'static str) -> Result<T, Error> {
    Err(Error::Corrupt { what })
}

impl<'a> Database<'a> {
    /// Validates a database container and views it in place.
    ///
    /// Checks everything a search relies on for its exactness: the counts
    /// and section sizes, every group, mean, scale and range, the mirror
    /// map (a joint's partner's partner is the joint), every feature finite,
    /// each frame's flag 0 or +∞ (padding frames +∞), and every bounding box
    /// equal to the minimum and maximum of the searchable frames it covers.
    /// The scan is O(frames × features), done once at load.
    ///
    /// # Errors
    /// [`Error::UnsupportedPlatform`], [`Error::Truncated`],
    /// [`Error::BadMagic`], [`Error::UnsupportedVersion`],
    /// [`Error::Misaligned`] (the preamble); [`Error::Corrupt`] naming the
    /// first inconsistency.
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, Error> {
        let db = Self::parse(bytes)?;
        db.check_contents()?;
        Ok(db)
    }

    /// Views a container that [`Database::from_bytes`] accepted before,
    /// checking only its header and section sizes (O(1): no scan of the
    /// features or boxes): for views re-created from bytes validated once at
    /// load time (the C library's handles). On bytes that changed since, a
    /// search returns unspecified frames but never reads out of bounds or
    /// panics.
    ///
    /// # Errors
    /// As [`Database::from_bytes`] for the header and section checks.
    pub fn from_validated_bytes(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::parse(bytes)
    }

    /// The header and section checks: the view, without the O(frames)
    /// content scan.
    fn parse(bytes: &'a [u8]) -> Result<Self, Error> {
        check_preamble(bytes, &DATABASE_MAGIC, DATABASE_VERSION, HEADER)?;
        let w = |at: usize| le_u32(bytes, at) as usize;
        let f = |at: usize| f32::from_bits(le_u32(bytes, at));
        let counts = Counts {
            features: w(12),
            frames: w(16),
            padded: w(20),
            groups: w(24),
            ranges: w(28),
            joints: w(36),
        };
        let sample_rate = f(32);
        let facing_axis = Vec3::new(f(44), f(48), f(52));
        let mirror_axis = le_u32(bytes, 56);
        check_header(&counts, sample_rate, facing_axis, mirror_axis)?;
        if le_u32(bytes, 60) != 0 {
            return corrupt("database reserved header bytes are not zero");
        }
        let layout = counts.layout().ok_or(Error::Corrupt {
            what: "database sections exceed 4 GiB",
        })?;
        if w(40) >= u16::MAX as usize {
            return corrupt("database root joint is out of range");
        }
        if bytes.len() < layout.total {
            return Err(Error::Truncated {
                needed: layout.total,
                actual: bytes.len(),
            });
        }
        let section = |a: usize, b: usize| bytes.get(a..b).unwrap_or(&[]);
        let cast = |_| Error::Misaligned;
        let f4 = counts.features * 4;
        let groups: &[FeatureGroup] = bytemuck::try_cast_slice(section(
            layout.groups,
            layout.groups + counts.groups * GROUP_BYTES,
        ))
        .map_err(cast)?;
        let mean: &[f32] =
            bytemuck::try_cast_slice(section(layout.mean, layout.mean + f4)).map_err(cast)?;
        let scale: &[f32] =
            bytemuck::try_cast_slice(section(layout.scale, layout.scale + f4)).map_err(cast)?;
        let ranges: &[FrameRange] = bytemuck::try_cast_slice(section(
            layout.ranges,
            layout.ranges + counts.ranges * RANGE_BYTES,
        ))
        .map_err(cast)?;
        let mirror: &[u16] =
            bytemuck::try_cast_slice(section(layout.mirror, layout.mirror + counts.joints * 2))
                .map_err(cast)?;
        let lanes = |a: usize, b: usize| -> Result<&'a [f32x4], Error> {
            bytemuck::try_cast_slice(section(a, b)).map_err(cast)
        };
        let db = Database {
            groups,
            mean,
            scale,
            ranges,
            mirror,
            bias: lanes(layout.bias, layout.features)?,
            features: lanes(layout.features, layout.small)?,
            small: lanes(layout.small, layout.large)?,
            large: lanes(layout.large, layout.total)?,
            feature_count: counts.features,
            frame_count: counts.frames,
            sample_rate,
            root: w(40) as u32,
            facing_axis,
            mirror_axis,
        };
        Ok(db)
    }

    fn check_contents(&self) -> Result<(), Error> {
        let fc = self.feature_count;
        check_tables(&Tables {
            features: fc,
            frames: self.frame_count,
            groups: self.groups,
            mean: self.mean,
            scale: self.scale,
            ranges: self.ranges,
            mirror: self.mirror,
        })?;
        let padded = self.bias.len() * 4;
        for i in 0..padded {
            let b = self.bias[i / 4].as_array()[i % 4];
            let ok = if i < self.frame_count {
                b == 0.0 || b == f32::INFINITY
            } else {
                b == f32::INFINITY
            };
            if !ok {
                return corrupt("database frame flag is neither 0 nor +inf (padding +inf)");
            }
        }
        if self.features.iter().any(|v| !v.is_finite().all()) {
            return corrupt("database feature is not finite");
        }
        for s in 0..padded / SMALL_BOX {
            let (lo, hi) = self.box_of(s * SMALL_BOX, SMALL_BOX);
            for f in 0..fc {
                let (slo, shi) = self.small_bounds(s, f);
                if slo.to_bits() != lo[f].to_bits() || shi.to_bits() != hi[f].to_bits() {
                    return corrupt("database small box does not bound its frames");
                }
            }
        }
        for l in 0..padded / LARGE_BOX {
            for f in 0..fc {
                let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
                for s in 0..4 {
                    let (a, b) = self.small_bounds(l * 4 + s, f);
                    lo = lo.min(a);
                    hi = hi.max(b);
                }
                let (llo, lhi) = self.large_bounds(l, f);
                if llo.to_bits() != lo.to_bits() || lhi.to_bits() != hi.to_bits() {
                    return corrupt("database large box does not bound its small boxes");
                }
            }
        }
        Ok(())
    }

    /// Minimum and maximum per feature of the searchable frames in
    /// `first .. first + count` (empty: +∞, −∞).
    fn box_of(&self, first: usize, count: usize) -> ([f32; MAX_FEATURES], [f32; MAX_FEATURES]) {
        let mut lo = [f32::INFINITY; MAX_FEATURES];
        let mut hi = [f32::NEG_INFINITY; MAX_FEATURES];
        for i in first..first + count {
            if !self.is_searchable(i) {
                continue;
            }
            for f in 0..self.feature_count {
                let x = self.feature(i, f);
                lo[f] = lo[f].min(x);
                hi[f] = hi[f].max(x);
            }
        }
        (lo, hi)
    }

    /// Small box `s`'s bounds of feature `f`.
    fn small_bounds(&self, s: usize, f: usize) -> (f32, f32) {
        let base = (s / 4) * 2 * self.feature_count;
        let lane = s % 4;
        (
            self.small[base + f].as_array()[lane],
            self.small[base + self.feature_count + f].as_array()[lane],
        )
    }

    /// Large box `l`'s bounds of feature `f`.
    fn large_bounds(&self, l: usize, f: usize) -> (f32, f32) {
        let base = (l / 4) * 2 * self.feature_count;
        let lane = l % 4;
        (
            self.large[base + f].as_array()[lane],
            self.large[base + self.feature_count + f].as_array()[lane],
        )
    }

    /// Normalized feature `f` of frame `i` (any frame below the padded count).
    #[inline]
    pub(crate) fn feature(&self, i: usize, f: usize) -> f32 {
        self.features[(i / 4) * self.feature_count + f].as_array()[i % 4]
    }

    /// Features per frame.
    #[must_use]
    pub fn feature_count(&self) -> usize {
        self.feature_count
    }

    /// Frames in the database (without padding).
    #[must_use]
    pub fn frame_count(&self) -> usize {
        self.frame_count
    }

    /// Frames per second of every range.
    #[must_use]
    pub fn sample_rate(&self) -> f32 {
        self.sample_rate
    }

    /// The joint that defines the root frame.
    #[must_use]
    pub fn root_joint(&self) -> usize {
        self.root as usize
    }

    /// The root joint's local forward axis.
    #[must_use]
    pub fn facing_axis(&self) -> Vec3 {
        self.facing_axis
    }

    /// The horizontal axis mirroring negates: 0 (x) or 2 (z).
    #[must_use]
    pub fn mirror_axis(&self) -> u32 {
        self.mirror_axis
    }

    /// The feature groups.
    #[must_use]
    pub fn groups(&self) -> &'a [FeatureGroup] {
        self.groups
    }

    /// The frame ranges (one per clip or mirrored clip).
    #[must_use]
    pub fn ranges(&self) -> &'a [FrameRange] {
        self.ranges
    }

    /// The mirror map (empty when the database has no mirrored ranges).
    #[must_use]
    pub fn mirror_map(&self) -> &'a [u16] {
        self.mirror
    }

    /// Per-feature mean of the raw features.
    #[must_use]
    pub fn mean(&self) -> &'a [f32] {
        self.mean
    }

    /// Per-feature scale (`weight / deviation`).
    #[must_use]
    pub fn scale(&self) -> &'a [f32] {
        self.scale
    }

    /// True when a search may return frame `i` (false past the end).
    #[must_use]
    pub fn is_searchable(&self, i: usize) -> bool {
        i < self.frame_count && self.bias[i / 4].as_array()[i % 4] == 0.0
    }

    /// The range holding frame `i` and the frame's index inside it.
    #[must_use]
    pub fn locate(&self, i: usize) -> Option<(usize, usize)> {
        if i >= self.frame_count {
            return None;
        }
        let r = self
            .ranges
            .partition_point(|r| (r.start as usize) <= i)
            .checked_sub(1)?;
        Some((r, i - self.ranges[r].start as usize))
    }

    /// Copies frame `i`'s normalized features into `out`.
    ///
    /// # Errors
    /// [`Error::BadLength`] unless `out` has [`Self::feature_count`] values;
    /// [`Error::InvalidParameter`] for a frame past the end.
    pub fn frame_features(&self, i: usize, out: &mut [f32]) -> Result<(), Error> {
        crate::soa::check_len("features", self.feature_count, out.len())?;
        if i >= self.frame_count {
            return Err(Error::InvalidParameter {
                what: "database frame is past the last frame",
            });
        }
        for (f, o) in out.iter_mut().enumerate() {
            *o = self.feature(i, f);
        }
        Ok(())
    }

    /// Normalizes raw features: `out[f] = (raw[f] − mean[f]) × scale[f]`.
    /// `raw` and `out` may cover any run of features starting at `first`.
    ///
    /// # Errors
    /// [`Error::BadLength`] when `raw` and `out` differ in length or run past
    /// the features; [`Error::NonFinite`] for a raw value that is not finite.
    pub fn normalize(&self, first: usize, raw: &[f32], out: &mut [f32]) -> Result<(), Error> {
        crate::soa::check_len("normalized features", raw.len(), out.len())?;
        if first
            .checked_add(raw.len())
            .is_none_or(|e| e > self.feature_count)
        {
            return Err(Error::BadLength {
                buffer: "raw features",
                expected: self.feature_count.saturating_sub(first),
                actual: raw.len(),
            });
        }
        for (k, (o, &r)) in out.iter_mut().zip(raw).enumerate() {
            if !r.is_finite() {
                return Err(Error::NonFinite {
                    what: "raw feature",
                });
            }
            *o = (r - self.mean[first + k]) * self.scale[first + k];
        }
        Ok(())
    }
}

/// The header's counts and values, as both the writer and the view check them.
fn check_header(
    counts: &Counts,
    sample_rate: f32,
    facing_axis: Vec3,
    mirror_axis: u32,
) -> Result<(), Error> {
    if counts.features == 0 || counts.features > MAX_FEATURES {
        return corrupt("database feature count is 0 or above 256");
    }
    if counts.frames == 0 || counts.frames > MAX_FRAMES {
        return corrupt("database frame count is 0 or above 2^22");
    }
    if padded_frames(counts.frames) != Some(counts.padded) {
        return corrupt("database padded frame count is not the frames rounded up to 256");
    }
    if counts.groups == 0 || counts.groups > MAX_GROUPS {
        return corrupt("database group count is 0 or above 32");
    }
    if counts.ranges == 0 || counts.ranges > counts.frames {
        return corrupt("database range count is 0 or above its frames");
    }
    if !(sample_rate.is_finite() && sample_rate > 0.0) {
        return Err(Error::InvalidSampleRate);
    }
    let len = facing_axis.length();
    if !(len.is_finite() && (len - 1.0).abs() < 1e-3 && facing_axis.y.abs() < 0.999) {
        return corrupt("database facing axis is not a unit vector off the vertical");
    }
    if mirror_axis != 0 && mirror_axis != 2 {
        return corrupt("database mirror axis is neither x (0) nor z (2)");
    }
    Ok(())
}

/// The small tables a database holds beside its features.
struct Tables<'t> {
    features: usize,
    frames: usize,
    groups: &'t [FeatureGroup],
    mean: &'t [f32],
    scale: &'t [f32],
    ranges: &'t [FrameRange],
    mirror: &'t [u16],
}

/// The checks of the groups, normalization, ranges and mirror map that
/// both the writer and the view make.
fn check_tables(t: &Tables<'_>) -> Result<(), Error> {
    let mut next = 0usize;
    for g in t.groups {
        let Some(kind) = FeatureKind::from_code(g.kind) else {
            return corrupt("database feature group has an unknown kind");
        };
        if g.first as usize != next || g.width as usize != kind.width() {
            return corrupt("database feature groups are not contiguous with their widths");
        }
        if !(g.weight.is_finite() && g.weight > 0.0) || g.reserved != [0, 0] {
            return corrupt("database feature group weight is not finite and positive");
        }
        if kind.is_trajectory() != (g.joint == u32::MAX)
            || (kind.is_trajectory() && g.frames_ahead == 0)
        {
            return corrupt("database feature group joint or frames ahead do not fit its kind");
        }
        next += kind.width();
    }
    if next != t.features {
        return corrupt("database feature groups do not cover its features");
    }
    if t.mean.iter().any(|m| !m.is_finite()) || t.scale.iter().any(|s| !(s.is_finite() && *s > 0.0))
    {
        return corrupt("database mean or scale is not finite (scale > 0)");
    }
    let mut start = 0usize;
    for r in t.ranges {
        if r.start as usize != start || r.len == 0 || r.flags & !RANGE_MIRRORED != 0 {
            return corrupt("database frame ranges are not contiguous, non-empty and in order");
        }
        if r.mirrored() && t.mirror.is_empty() {
            return corrupt("database range is mirrored but it has no mirror map");
        }
        start += r.len as usize;
    }
    if start != t.frames {
        return corrupt("database frame ranges do not cover its frames");
    }
    let joints = t.mirror.len();
    for (j, &m) in t.mirror.iter().enumerate() {
        if m as usize >= joints || t.mirror[m as usize] as usize != j {
            return corrupt("database mirror map is not a pairing of its joints");
        }
    }
    Ok(())
}

/// Bytes [`write_database`] needs for `desc`.
///
/// # Errors
/// As [`write_database`]'s checks of the counts.
pub fn database_size(desc: &DatabaseDesc<'_>) -> Result<usize, Error> {
    Ok(desc_counts(desc)?.layout().map(|l| l.total).unwrap_or(0))
}

fn desc_counts(desc: &DatabaseDesc<'_>) -> Result<Counts, Error> {
    let features = desc.mean.len();
    let frames = desc.searchable.len();
    crate::soa::check_len("scale", features, desc.scale.len())?;
    crate::soa::check_len(
        "features",
        features.saturating_mul(frames),
        desc.features.len(),
    )?;
    let padded = padded_frames(frames).ok_or(Error::InvalidParameter {
        what: "database has too many frames",
    })?;
    let counts = Counts {
        features,
        frames,
        padded,
        groups: desc.groups.len(),
        ranges: desc.ranges.len(),
        joints: desc.mirror.len(),
    };
    check_header(
        &counts,
        desc.sample_rate,
        desc.facing_axis,
        desc.mirror_axis,
    )?;
    if counts.layout().is_none() {
        return Err(Error::InvalidParameter {
            what: "database exceeds 4 GiB",
        });
    }
    Ok(counts)
}

/// Writes a database container into `out` (16-byte aligned for the view
/// to read it in place) and returns its length. The writer transposes the
/// features into lane blocks, flags frames and computes both levels of
/// bounding boxes; [`Database::from_bytes`] accepts what it writes for any
/// `desc` that passes its checks.
///
/// # Errors
/// [`Error::BadLength`] (scale or features not sized by the mean and
/// the frames), [`Error::InvalidParameter`] (too many frames),
/// [`Error::BufferTooSmall`] (`out`), and the [`Error::Corrupt`] that
/// [`Database::from_bytes`] would give for the groups, ranges, mirror map,
/// or a feature that is not finite.
pub fn write_database(desc: &DatabaseDesc<'_>, out: &mut [u8]) -> Result<usize, Error> {
    let counts = desc_counts(desc)?;
    let layout = counts.layout().ok_or(Error::InvalidParameter {
        what: "database exceeds 4 GiB",
    })?;
    if out.len() < layout.total {
        return Err(Error::BufferTooSmall {
            needed: layout.total,
            actual: out.len(),
        });
    }
    check_tables(&Tables {
        features: counts.features,
        frames: counts.frames,
        groups: desc.groups,
        mean: desc.mean,
        scale: desc.scale,
        ranges: desc.ranges,
        mirror: desc.mirror,
    })?;
    if desc.features.iter().any(|x| !x.is_finite()) {
        return corrupt("database feature is not finite");
    }
    let out = &mut out[..layout.total];
    out.fill(0);
    let put = |out: &mut [u8], at: usize, v: u32| out[at..at + 4].copy_from_slice(&v.to_le_bytes());
    out[..8].copy_from_slice(&DATABASE_MAGIC);
    put(out, 8, DATABASE_VERSION);
    put(out, 12, counts.features as u32);
    put(out, 16, counts.frames as u32);
    put(out, 20, counts.padded as u32);
    put(out, 24, counts.groups as u32);
    put(out, 28, counts.ranges as u32);
    put(out, 32, desc.sample_rate.to_bits());
    put(out, 36, counts.joints as u32);
    put(out, 40, desc.root);
    put(out, 44, desc.facing_axis.x.to_bits());
    put(out, 48, desc.facing_axis.y.to_bits());
    put(out, 52, desc.facing_axis.z.to_bits());
    put(out, 56, desc.mirror_axis);
    let bytes =
        |out: &mut [u8], at: usize, src: &[u8]| out[at..at + src.len()].copy_from_slice(src);
    bytes(out, layout.groups, bytemuck::cast_slice(desc.groups));
    bytes(out, layout.mean, bytemuck::cast_slice(desc.mean));
    bytes(out, layout.scale, bytemuck::cast_slice(desc.scale));
    bytes(out, layout.ranges, bytemuck::cast_slice(desc.ranges));
    bytes(out, layout.mirror, bytemuck::cast_slice(desc.mirror));
    let fc = counts.features;
    let fput =
        |out: &mut [u8], at: usize, v: f32| out[at..at + 4].copy_from_slice(&v.to_le_bytes());
    for i in 0..counts.padded {
        let searchable = desc.searchable.get(i).copied().unwrap_or(false);
        let flag = if searchable { 0.0 } else { f32::INFINITY };
        fput(out, layout.bias + 4 * i, flag);
        if i < counts.frames {
            for f in 0..fc {
                let at = layout.features + 4 * ((i / 4) * fc * 4 + f * 4 + i % 4);
                fput(out, at, desc.features[i * fc + f]);
            }
        }
    }
    for s in 0..counts.padded / SMALL_BOX {
        for f in 0..fc {
            let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
            for i in s * SMALL_BOX..(s + 1) * SMALL_BOX {
                if desc.searchable.get(i).copied().unwrap_or(false) {
                    let x = desc.features[i * fc + f];
                    lo = lo.min(x);
                    hi = hi.max(x);
                }
            }
            let base = layout.small + 4 * ((s / 4) * 2 * fc * 4 + f * 4 + s % 4);
            fput(out, base, lo);
            fput(out, base + 4 * fc * 4, hi);
        }
    }
    for l in 0..counts.padded / LARGE_BOX {
        for f in 0..fc {
            let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
            for s in l * 4..l * 4 + 4 {
                let base = layout.small + 4 * ((s / 4) * 2 * fc * 4 + f * 4 + s % 4);
                lo = lo.min(f32::from_le_bytes(
                    out[base..base + 4].try_into().unwrap_or([0; 4]),
                ));
                let h = base + 4 * fc * 4;
                hi = hi.max(f32::from_le_bytes(
                    out[h..h + 4].try_into().unwrap_or([0; 4]),
                ));
            }
            let base = layout.large + 4 * ((l / 4) * 2 * fc * 4 + f * 4 + l % 4);
            fput(out, base, lo);
            fput(out, base + 4 * fc * 4, hi);
        }
    }
    Ok(layout.total)
}
