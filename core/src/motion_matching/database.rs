//! The motion-matching database container: a validated, zero-copy view of
//! normalized feature vectors in lane blocks, a tree of bounding boxes over
//! them, and the map from database frames to clips.
//!
//! Layout (little-endian, every section 16-byte aligned):
//!
//! | bytes | content |
//! |---|---|
//! | 64 | header: magic `SINEWMMD`, version, counts, sample rate, root joint, facing axis, mirror axis, searched slots |
//! | 32 × groups | [`FeatureGroup`]s: kind, joint, frames ahead, first feature, width, weight |
//! | 4 × features (padded) | per-feature mean (raw units) |
//! | 4 × features (padded) | per-feature scale: `weight / deviation` of its group |
//! | 16 × ranges | [`FrameRange`]s: clip, first database frame, frames, flags |
//! | 2 × joints (padded) | mirror map (joint → its left/right partner), empty without mirroring |
//! | 4 × slots | per slot 0 (searchable) or +∞ (not, and padding) |
//! | 4 × slots | per slot its frame (`u32::MAX` for padding) |
//! | 4 × frames (padded) | per frame its slot |
//! | 32 × features × slots / 8 | normalized features, blocks of eight slots: per feature lanes 0-3, then 4-7 |
//! | 32 × features × lane groups | the box tree, level 0 first: four boxes in the lanes of a group |
//!
//! Frames are stored in slots, in an order the writer is given (sinew-std
//! gives [`cluster_order`](super::cluster_order)'s, which puts similar
//! frames side by side so that boxes are small); slots are padded to a
//! multiple of 16 with unsearchable zero frames. Searches visit the first
//! "searched slots" (a multiple of 16 past the last searchable frame). Box
//! `b` of level `k` bounds the searchable frames in slots
//! `b·16·4^k .. (b+1)·16·4^k`; its four children are level `k − 1`'s lane
//! group `b`. The top level is one lane group.

use wide::f32x4;

use crate::container::{check_preamble, le_u32};
use crate::error::Error;
use crate::math::Vec3;

/// Magic bytes of a motion-matching database.
pub const DATABASE_MAGIC: [u8; 8] = *b"SINEWMMD";
/// Format version this build reads and writes.
pub const DATABASE_VERSION: u32 = 2;
/// Most features per frame.
pub const MAX_FEATURES: usize = 256;
/// Most feature groups.
pub const MAX_GROUPS: usize = 32;
/// Slots per box of the tree's lowest level (a leaf: two blocks of eight).
pub const SMALL_BOX: usize = 16;
/// Slots are padded to a multiple of this (one leaf).
pub const FRAME_PADDING: usize = SMALL_BOX;
/// Most levels of the box tree (`16 · 4^9` slots exceed [`MAX_FRAMES`]).
pub(crate) const MAX_LEVELS: usize = 10;
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
    /// The frames in the order the container stores them (a permutation of
    /// `0..frames`), or empty for frame order. Any order gives the same
    /// search results; [`cluster_order`](super::cluster_order) gives one
    /// whose boxes prune well.
    pub order: &'a [u32],
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
    frame_of: usize,
    slot_of: usize,
    features: usize,
    boxes: usize,
    total: usize,
    /// Lane groups of the box tree below each level.
    level_offset: [u32; MAX_LEVELS],
    levels: usize,
}

#[derive(Clone, Copy, Debug)]
struct Counts {
    features: usize,
    frames: usize,
    padded: usize,
    searched: usize,
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
        let frame_of = bias.checked_add(self.padded.checked_mul(4)?)?;
        let slot_of = frame_of.checked_add(self.padded.checked_mul(4)?)?;
        let features = slot_of.checked_add(pad16(self.frames.checked_mul(4)?)?)?;
        let boxes = features.checked_add(self.padded.checked_mul(f4)?)?;
        let (level_offset, levels, lane_groups) = tree_shape(self.searched)?;
        let total = boxes.checked_add(lane_groups.checked_mul(f4 * 8)?)?;
        u32::try_from(total).ok()?;
        Some(Layout {
            groups,
            mean,
            scale,
            ranges,
            mirror,
            bias,
            frame_of,
            slot_of,
            features,
            boxes,
            total,
            level_offset,
            levels,
        })
    }
}

/// Lane groups (four boxes each) of tree level `k` over `searched` slots.
fn level_groups(searched: usize, k: usize) -> usize {
    searched.div_ceil((4 * SMALL_BOX) << (2 * k)).max(1)
}

/// The box tree over `searched` slots: each level's first lane group, the
/// levels (the top one a single lane group) and the lane groups in all.
fn tree_shape(searched: usize) -> Option<([u32; MAX_LEVELS], usize, usize)> {
    let mut offset = [0u32; MAX_LEVELS];
    let mut total = 0usize;
    for (k, o) in offset.iter_mut().enumerate() {
        *o = u32::try_from(total).ok()?;
        let groups = level_groups(searched, k);
        total = total.checked_add(groups)?;
        if groups == 1 {
            return Some((offset, k + 1, total));
        }
    }
    None
}

/// Box `b` of tree level `k` over `searched` slots, one feature: the
/// minimum and maximum of `leaf(slot)` (the feature of a searchable slot,
/// `None` otherwise) over its slots at level 0, of its four children's
/// bounds (`child(c)`, level `k − 1`) above; empty: +∞, −∞. The writer
/// and the validator both compute boxes with it.
fn box_bound(
    searched: usize,
    k: usize,
    b: usize,
    leaf: impl Fn(usize) -> Option<f32>,
    child: impl Fn(usize) -> (f32, f32),
) -> (f32, f32) {
    let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
    if k == 0 {
        let first = (b * SMALL_BOX).min(searched);
        for x in (first..(first + SMALL_BOX).min(searched)).filter_map(leaf) {
            lo = lo.min(x);
            hi = hi.max(x);
        }
    } else if b < level_groups(searched, k - 1) {
        for (a, z) in (4 * b..4 * b + 4).map(child) {
            lo = lo.min(a);
            hi = hi.max(z);
        }
    }
    (lo, hi)
}

/// Frames padded to whole leaves.
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
    pub(crate) frame_of: &'a [u32],
    pub(crate) slot_of: &'a [u32],
    pub(crate) features: &'a [f32x4],
    pub(crate) boxes: &'a [f32x4],
    pub(crate) level_offset: [u32; MAX_LEVELS],
    pub(crate) levels: usize,
    pub(crate) searched: usize,
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
            searched: w(60),
            groups: w(24),
            ranges: w(28),
            joints: w(36),
        };
        let sample_rate = f(32);
        let facing_axis = Vec3::new(f(44), f(48), f(52));
        let mirror_axis = le_u32(bytes, 56);
        check_header(&counts, sample_rate, facing_axis, mirror_axis)?;
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
        let words = |a: usize, n: usize| -> Result<&'a [u32], Error> {
            bytemuck::try_cast_slice(section(a, a + 4 * n)).map_err(cast)
        };
        let db = Database {
            groups,
            mean,
            scale,
            ranges,
            mirror,
            bias: lanes(layout.bias, layout.frame_of)?,
            frame_of: words(layout.frame_of, counts.padded)?,
            slot_of: words(layout.slot_of, counts.frames)?,
            features: lanes(layout.features, layout.boxes)?,
            boxes: lanes(layout.boxes, layout.total)?,
            level_offset: layout.level_offset,
            levels: layout.levels,
            searched: counts.searched,
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
        for slot in 0..padded {
            let b = self.slot_flag(slot);
            let ok = if slot < self.frame_count.min(self.searched) {
                b == 0.0 || b == f32::INFINITY
            } else {
                b == f32::INFINITY
            };
            if !ok {
                return corrupt(
                    "database slot flag is neither 0 nor +inf (+inf for padding and past the searched slots)",
                );
            }
            let frame = self.frame_of[slot];
            let paired = if slot < self.frame_count {
                (frame as usize) < self.frame_count && self.slot_of[frame as usize] as usize == slot
            } else {
                frame == u32::MAX
            };
            if !paired {
                return corrupt("database slot and frame tables are not inverse permutations");
            }
        }
        if self.features.iter().any(|v| !v.is_finite().all()) {
            return corrupt("database feature is not finite");
        }
        for k in 0..self.levels {
            for b in 0..4 * level_groups(self.searched, k) {
                for f in 0..fc {
                    let (lo, hi) = box_bound(
                        self.searched,
                        k,
                        b,
                        |slot| (self.slot_flag(slot) == 0.0).then(|| self.slot_feature(slot, f)),
                        |c| self.box_bounds_of(k - 1, c, f),
                    );
                    let (blo, bhi) = self.box_bounds_of(k, b, f);
                    if blo.to_bits() != lo.to_bits() || bhi.to_bits() != hi.to_bits() {
                        return corrupt("database box does not bound its frames or children");
                    }
                }
            }
        }
        Ok(())
    }

    /// Box `b` of level `k`: its bounds of feature `f`.
    fn box_bounds_of(&self, k: usize, b: usize, f: usize) -> (f32, f32) {
        let base = (self.level_offset[k] as usize + b / 4) * 2 * self.feature_count;
        let lane = b % 4;
        (
            self.boxes[base + f].as_array()[lane],
            self.boxes[base + self.feature_count + f].as_array()[lane],
        )
    }

    /// Normalized feature `f` of the frame in `slot`.
    #[inline]
    pub(crate) fn slot_feature(&self, slot: usize, f: usize) -> f32 {
        self.features[(slot / 8) * 2 * self.feature_count + 2 * f + (slot % 8) / 4].as_array()
            [slot % 4]
    }

    /// The slot of frame `i` (any slot for a frame past the end, or for
    /// bytes that changed since validation: never out of bounds).
    #[inline]
    pub(crate) fn slot(&self, i: usize) -> usize {
        let last = self.bias.len() * 4 - 1;
        self.slot_of
            .get(i)
            .map_or(last, |&s| (s as usize).min(last))
    }

    /// The frame in `slot` (`u32::MAX` for padding).
    #[inline]
    pub(crate) fn frame_in(&self, slot: usize) -> u32 {
        self.frame_of.get(slot).copied().unwrap_or(u32::MAX)
    }

    /// Normalized feature `f` of frame `i`.
    #[inline]
    pub(crate) fn feature(&self, i: usize, f: usize) -> f32 {
        self.slot_feature(self.slot(i), f)
    }

    /// The flag of the frame in `slot`: 0 (searchable) or +∞.
    #[inline]
    fn slot_flag(&self, slot: usize) -> f32 {
        self.bias[slot / 4].as_array()[slot % 4]
    }

    /// Frame `i`'s flag: 0 (searchable) or +∞.
    #[inline]
    pub(crate) fn flag(&self, i: usize) -> f32 {
        self.slot_flag(self.slot(i))
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
        i < self.frame_count && self.flag(i) == 0.0
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
        return corrupt("database padded frame count is not the frames rounded up to 16");
    }
    if counts.searched > counts.padded || !counts.searched.is_multiple_of(SMALL_BOX) {
        return corrupt("database searched slots are not a multiple of 16 within its slots");
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
    if !desc.order.is_empty() {
        crate::soa::check_len("order", frames, desc.order.len())?;
    }
    let padded = padded_frames(frames).ok_or(Error::InvalidParameter {
        what: "database has too many frames",
    })?;
    let mut searched = 0;
    for slot in 0..frames {
        let frame = slot_frame(desc.order, slot);
        let Some(&searchable) = desc.searchable.get(frame) else {
            return Err(Error::InvalidParameter {
                what: "database order names a frame past the last frame",
            });
        };
        if searchable {
            searched = slot + 1;
        }
    }
    let counts = Counts {
        features,
        frames,
        padded,
        searched: searched.next_multiple_of(SMALL_BOX),
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
/// features into blocks of eight slots, flags slots and computes the
/// box tree; [`Database::from_bytes`] accepts what it writes for any
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
    put(out, 60, counts.searched as u32);
    let fc = counts.features;
    let fput =
        |out: &mut [u8], at: usize, v: f32| out[at..at + 4].copy_from_slice(&v.to_le_bytes());
    let fget =
        |out: &[u8], at: usize| f32::from_le_bytes(out[at..at + 4].try_into().unwrap_or([0; 4]));
    // The slot of every frame, unset until the order names it once.
    for i in 0..counts.frames {
        put(out, layout.slot_of + 4 * i, u32::MAX);
    }
    for slot in 0..counts.padded {
        let searchable = if slot < counts.frames {
            let frame = slot_frame(desc.order, slot);
            let at = layout.slot_of + 4 * frame;
            if out[at..at + 4] != u32::MAX.to_le_bytes() {
                return Err(Error::InvalidParameter {
                    what: "database order names a frame twice",
                });
            }
            put(out, at, slot as u32);
            put(out, layout.frame_of + 4 * slot, frame as u32);
            for f in 0..fc {
                let at = layout.features + 4 * ((slot / 8) * fc * 8 + f * 8 + slot % 8);
                fput(out, at, desc.features[frame * fc + f]);
            }
            desc.searchable[frame]
        } else {
            put(out, layout.frame_of + 4 * slot, u32::MAX);
            false
        };
        let flag = if searchable { 0.0 } else { f32::INFINITY };
        fput(out, layout.bias + 4 * slot, flag);
    }
    // Box `b` of level `k`, feature `f`: the byte of its lower bound (the
    // upper one is `4 × 4 × fc` bytes on).
    let box_at = |k: usize, b: usize, f: usize| {
        layout.boxes + 4 * ((layout.level_offset[k] as usize + b / 4) * 2 * fc * 4 + f * 4 + b % 4)
    };
    let upper = 4 * fc * 4;
    for k in 0..layout.levels {
        for b in 0..4 * level_groups(counts.searched, k) {
            for f in 0..fc {
                let (lo, hi) = box_bound(
                    counts.searched,
                    k,
                    b,
                    |slot| {
                        // Slots past the frames are padding (no frame).
                        let frame = slot_frame(desc.order, slot);
                        (desc.searchable.get(frame) == Some(&true))
                            .then(|| desc.features[frame * fc + f])
                    },
                    |c| {
                        let at = box_at(k - 1, c, f);
                        (fget(out, at), fget(out, at + upper))
                    },
                );
                fput(out, box_at(k, b, f), lo);
                fput(out, box_at(k, b, f) + upper, hi);
            }
        }
    }
    Ok(layout.total)
}

/// The frame in `slot` of `order` (frame order when it is empty).
fn slot_frame(order: &[u32], slot: usize) -> usize {
    order.get(slot).map_or(slot, |&f| f as usize)
}
