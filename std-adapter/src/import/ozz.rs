//! ozz-animation 0.16 runtime archives: skeletons (version 2) and animations
//! (version 7), for users migrating from ozz.
//!
//! # Format (little endian, as read here)
//!
//! Every archive opens with a 1-byte endianness tag (`1` = little endian; big
//! endian archives, tag `0`, are rejected), a NUL-terminated type tag
//! (`"ozz-skeleton"` or `"ozz-animation"`) and a `u32` version.
//!
//! **Skeleton v2:** `i32` joint count `n` (1 ..= [`MAX_JOINTS`]); `i32` size
//! of the names buffer; the names, each NUL-terminated, concatenated; `n`
//! `i16` parents (`-1` for a root, otherwise an earlier joint: ozz stores
//! joints depth-first); `ceil(n / 4)` SoA rest-pose blocks of 40 `f32` each
//! (translation x, y, z, rotation x, y, z, w, scale x, y, z, four lanes per
//! component).
//!
//! **Animation v7:** `f32` duration (seconds); `u32` track count; `u32`
//! counts of name bytes, timepoints, translation / rotation / scale keys and,
//! for each of the three key kinds, iframe entry bytes and iframe
//! descriptors; the name (no NUL); the timepoints (`f32` ratios of the
//! duration, strictly increasing in `[0, 1]`); then, for translations,
//! rotations and scales in turn: per key a timepoint index (`u8` when there
//! are at most 255 timepoints, else `u16`), per key a `u16` "previous"
//! offset, the iframe entries and descriptors (a seek index this importer
//! skips), an `f32` iframe interval, and per key three `u16` values.
//!
//! Track indices are implicit. Tracks are padded to a multiple of four
//! (`A` tracks); keys `0 .. A` are the first key of tracks `0 .. A` and keys
//! `A .. 2A` their second key; every later key `i` continues the track of key
//! `i - previous[i]`, which must be the latest key of that track so far. So a
//! track's keys appear in time order and its values are those of its chain.
//! Translations and scales are three half floats; a rotation packs the index
//! of its largest component (2 bits), that component's sign (1 bit) and the
//! other three components as 15-bit values in `[-1/√2, 1/√2]`; the largest
//! is restored as `±sqrt(1 - a² - b² - c²)`.
//!
//! # Resampling
//!
//! sinew clips are uniformly sampled, so keys are resampled at `sample_rate`
//! frames per second: `round(duration × rate) + 1` frames at `t = i / rate`
//! (the last frame exactly at the duration). Each track is interpolated as
//! ozz samples it: translations and scales lerp, rotations nlerp, between the
//! two keys that bracket `t / duration`; before a track's first key or after
//! its last, the nearest key holds. Joints without a track keep the rest pose.
//!
//! Nothing here panics on bad input: every count is checked against the bytes
//! left before anything is allocated from it, decoded keys and resampled
//! clips are charged to the import's memory budget
//! ([`OzzOptions::memory_budget`]; one budget for a skeleton and all its
//! animations in [`load`]) before they are allocated, and every failure is
//! an [`ImportError`] at the byte offset of the offending field (the
//! duration, for a clip over the budget).

use std::path::{Path, PathBuf};

use sinew_core::skeleton::{self, JointDef};
use sinew_core::soa::LANES;
use sinew_core::{Quat, SoaTransform, Transform, Vec3, MAX_JOINTS};

use sinew_core::track::curve::{CurveValue, Interpolation};

use super::curves::{CurveData, OwnedCurve};
use super::{
    bytes_of, fmt_count, fmt_keys, read_file, Asset, Budget, ImportError, Location,
    DEFAULT_MEMORY_BUDGET,
};
use crate::assets::{AlignedBytes, OwnedClip, OwnedSkeleton};

/// Skeleton archive version this importer reads.
pub const SKELETON_VERSION: u32 = 2;

/// Animation archive version this importer reads (ozz-animation 0.16).
pub const ANIMATION_VERSION: u32 = 7;

/// Sample rate used when callers have no better one (the ozz sample clips
/// are 30 Hz): the one [`sinew_core::clip::DEFAULT_SAMPLE_RATE`].
pub use sinew_core::clip::DEFAULT_SAMPLE_RATE;

/// Options of the ozz animation importer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OzzOptions {
    /// Rate (frames per second) animations are resampled at, finite and
    /// positive; [`DEFAULT_SAMPLE_RATE`] by default, the rate of the ozz
    /// sample clips.
    pub sample_rate: f32,
    /// Bytes one import may allocate for decoded keys and resampled clips
    /// (a corrupt duration asks for billions of frames);
    /// [`DEFAULT_MEMORY_BUDGET`] by default. [`load`] shares it between
    /// all the animations of one skeleton.
    pub memory_budget: usize,
}

impl Default for OzzOptions {
    fn default() -> Self {
        OzzOptions {
            sample_rate: DEFAULT_SAMPLE_RATE,
            memory_budget: DEFAULT_MEMORY_BUDGET,
        }
    }
}

const SKELETON_TAG: &str = "ozz-skeleton";
const ANIMATION_TAG: &str = "ozz-animation";
const LITTLE_ENDIAN_TAG: u8 = 1;
const MAX_TIMEPOINTS: u32 = u16::MAX as u32;
const SOA_BLOCK_BYTES: usize = 160;

// ---------------------------------------------------------------------------
// Byte reader
// ---------------------------------------------------------------------------

/// A cursor over archive bytes that reports errors at byte offsets.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    file: &'a Path,
}

impl<'a> Reader<'a> {
    fn new(bytes: &'a [u8], file: &'a Path) -> Self {
        Reader {
            bytes,
            pos: 0,
            file,
        }
    }

    fn err(&self, at: usize, message: impl Into<String>) -> ImportError {
        ImportError::new(self.file, Location::Byte(at as u64), message)
    }

    fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    /// The next `n` bytes; a truncation error at the current offset otherwise.
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], ImportError> {
        if n > self.remaining() {
            return Err(self.err(
                self.pos,
                format!(
                    "truncated: {what} needs {n} bytes, only {} left",
                    self.remaining()
                ),
            ));
        }
        let s = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], ImportError> {
        let s = self.take(N, what)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    fn u8(&mut self, what: &str) -> Result<u8, ImportError> {
        Ok(self.array::<1>(what)?[0])
    }

    fn u32(&mut self, what: &str) -> Result<u32, ImportError> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    fn i32(&mut self, what: &str) -> Result<i32, ImportError> {
        Ok(i32::from_le_bytes(self.array(what)?))
    }

    /// A finite `f32`; NaN or infinity is an error at its offset.
    fn finite_f32(&mut self, what: &str) -> Result<f32, ImportError> {
        let at = self.pos;
        let v = f32::from_le_bytes(self.array(what)?);
        if v.is_finite() {
            Ok(v)
        } else {
            Err(self.err(at, format!("{what} is NaN or infinite")))
        }
    }

    /// Checks that `count` elements of `size` bytes fit in what is left;
    /// `at` is the offset of the count field, blamed when they do not.
    fn check_count(
        &self,
        count: u64,
        size: u64,
        at: usize,
        what: &str,
    ) -> Result<usize, ImportError> {
        let needed = count.checked_mul(size);
        match needed {
            Some(n) if n <= self.remaining() as u64 => Ok(count as usize),
            _ => Err(self.err(
                at,
                format!(
                    "{what} {count} needs {} bytes, only {} left",
                    needed.map_or_else(|| "more than 2^64".to_string(), |n| n.to_string()),
                    self.remaining()
                ),
            )),
        }
    }

    /// Endianness tag, type tag and version.
    fn header(&mut self, tag: &str, version: u32) -> Result<(), ImportError> {
        let endian = self.u8("endianness tag")?;
        if endian != LITTLE_ENDIAN_TAG {
            let msg = if endian == 0 {
                "endianness tag is 0 (big endian); only little-endian archives are supported"
                    .to_string()
            } else {
                format!("endianness tag is {endian}, expected 1 (little endian)")
            };
            return Err(self.err(0, msg));
        }
        let at = self.pos;
        let rest = &self.bytes[at..];
        let window = &rest[..rest.len().min(tag.len() + 1)];
        match window.iter().position(|&b| b == 0) {
            Some(end) if &window[..end] == tag.as_bytes() => self.pos += end + 1,
            None if tag.as_bytes().starts_with(window) => {
                return Err(self.err(at, format!("truncated: type tag \"{tag}\" is cut off")));
            }
            _ => {
                let shown = String::from_utf8_lossy(window);
                return Err(self.err(
                    at,
                    format!("type tag is {shown:?}, expected \"{tag}\" (not an {tag} archive)"),
                ));
            }
        }
        let at = self.pos;
        let found = self.u32("version")?;
        if found != version {
            return Err(self.err(
                at,
                format!("unsupported {tag} version {found} (this importer reads version {version}, ozz-animation 0.16)"),
            ));
        }
        Ok(())
    }
}

fn le_u16(b: &[u8], i: usize) -> u16 {
    u16::from_le_bytes([b[2 * i], b[2 * i + 1]])
}

// ---------------------------------------------------------------------------
// Value decoding
// ---------------------------------------------------------------------------

/// IEEE 754 half float to `f32` (exact; infinities and NaNs are kept).
#[must_use]
fn half_to_f32(h: u16) -> f32 {
    let sign = u32::from(h >> 15) << 31;
    let exp = u32::from((h >> 10) & 0x1f);
    let man = u32::from(h & 0x3ff);
    let bits = match exp {
        0 => {
            // Zero or subnormal: man × 2^-24, exactly representable in f32.
            let v = man as f32 * (1.0 / 16_777_216.0);
            return if sign != 0 { -v } else { v };
        }
        31 => sign | 0x7f80_0000 | (man << 13),
        _ => sign | ((exp + 112) << 23) | (man << 13),
    };
    f32::from_bits(bits)
}

/// A v7 quaternion key: largest component index (bits 0-1), its sign (bit
/// 2), then three 15-bit quantised components, little-endian over 48 bits.
#[must_use]
fn decode_quat(v: [u16; 3]) -> Quat {
    let packed = u64::from(v[0]) | (u64::from(v[1]) << 16) | (u64::from(v[2]) << 32);
    let largest = (packed & 3) as usize;
    let negative = (packed >> 2) & 1 == 1;
    let scale = std::f32::consts::SQRT_2 / 32767.0;
    let offset = -std::f32::consts::FRAC_1_SQRT_2;
    let small = [
        ((packed >> 3) & 0x7fff) as f32 * scale + offset,
        ((packed >> 18) & 0x7fff) as f32 * scale + offset,
        ((packed >> 33) & 0x7fff) as f32 * scale + offset,
    ];
    let mut c = [0.0f32; 4];
    let mut k = 0;
    for (i, slot) in c.iter_mut().enumerate() {
        if i != largest {
            *slot = small[k];
            k += 1;
        }
    }
    let rest: f32 = small.iter().map(|x| x * x).sum();
    let w = (1.0 - rest).max(0.0).sqrt();
    c[largest] = if negative { -w } else { w };
    Quat::new(c[0], c[1], c[2], c[3])
}

// ---------------------------------------------------------------------------
// Skeleton
// ---------------------------------------------------------------------------

/// Loads an ozz skeleton archive.
///
/// Returns the sinew skeleton (joints in depth-first pre-order) and, for each
/// ozz joint index, its sinew joint index.
///
/// # Errors
/// The file cannot be read, or any error of [`skeleton_from_slice`].
pub fn load_skeleton(path: &Path) -> Result<(OwnedSkeleton, Vec<u16>), ImportError> {
    skeleton_from_slice(&read_file(path)?, path)
}

/// Parses an ozz skeleton archive held in memory; `name` is the file named in errors.
///
/// Joint names that are not UTF-8 are converted lossily.
///
/// # Errors
/// An [`ImportError`] at the byte offset of the offending field: wrong
/// endianness or type tag, unsupported version, truncation, a joint count of
/// 0 or above [`MAX_JOINTS`], a names size that exceeds the bytes left or
/// does not hold exactly one NUL-terminated name per joint, a parent out of
/// range or not before its child, a NaN or infinite rest value, a zero rest
/// rotation, or a rest transform that cannot be inverted (zero scale).
pub fn skeleton_from_slice(
    bytes: &[u8],
    name: &Path,
) -> Result<(OwnedSkeleton, Vec<u16>), ImportError> {
    let mut r = Reader::new(bytes, name);
    r.header(SKELETON_TAG, SKELETON_VERSION)?;

    let at = r.pos;
    let n = r.i32("joint count")?;
    if n <= 0 || n as usize > MAX_JOINTS {
        return Err(r.err(at, format!("joint count {n} is outside 1 ..= {MAX_JOINTS}")));
    }
    let n = n as usize;
    let at = r.pos;
    let chars = r.i32("names size")?;
    if chars < 0 {
        return Err(r.err(at, format!("names size {chars} is negative")));
    }
    let chars = r.check_count(chars as u64, 1, at, "names size")?;
    let names_at = r.pos;
    let names_buf = r.take(chars, "joint names")?;
    let names = split_names(names_buf, n).map_err(|msg| r.err(names_at, msg))?;

    let parents_at = r.pos;
    let parents_raw = r.take(2 * n, "joint parents")?;
    let mut parents = Vec::with_capacity(n);
    for j in 0..n {
        let p = le_u16(parents_raw, j) as i16;
        let at = parents_at + 2 * j;
        match p {
            -1 => parents.push(None),
            p if p >= 0 && (p as usize) < j => parents.push(Some(p as usize)),
            p if p >= 0 && (p as usize) < n => {
                return Err(r.err(
                    at,
                    format!("parent of joint {j} is joint {p}, which does not come before it"),
                ))
            }
            p => {
                return Err(r.err(
                    at,
                    format!(
                        "parent of joint {j} is {p}, out of range (-1 or 0 ..= {})",
                        n - 1
                    ),
                ))
            }
        }
    }

    let rest_at = r.pos;
    let blocks = n.div_ceil(LANES);
    let rest_raw = r.take(blocks * SOA_BLOCK_BYTES, "rest pose")?;
    let mut rest = Vec::with_capacity(n);
    for (j, joint) in names.iter().enumerate() {
        rest.push(rest_transform(rest_raw, j).map_err(|(off, what, problem)| {
            r.err(
                rest_at + off,
                format!("{what} of joint {j} ({joint:?}) {problem}"),
            )
        })?);
    }

    let defs: Vec<JointDef<'_>> = (0..n)
        .map(|j| JointDef {
            name: &names[j],
            parent: parents[j],
            rest: rest[j],
        })
        .collect();
    let mut remap = vec![0u16; n];
    let mut out = AlignedBytes::zeroed(skeleton::required_size(&defs));
    skeleton::build(&defs, out.as_mut_slice(), Some(&mut remap)).map_err(|e| match e {
        sinew_core::Error::SingularTransform { joint } if joint < n => r.err(
            rest_at + soa_offset(joint, 7),
            format!(
                "rest transform of joint {joint} ({:?}) cannot be inverted (zero or tiny scale)",
                names[joint]
            ),
        ),
        e => ImportError::new(name, Location::File, format!("invalid skeleton: {e}")),
    })?;
    let skeleton = OwnedSkeleton::from_bytes(out.as_slice())
        .map_err(|e| ImportError::new(name, Location::File, format!("invalid skeleton: {e}")))?;
    Ok((skeleton, remap))
}

/// Splits the names buffer into exactly `n` NUL-terminated names.
fn split_names(buf: &[u8], n: usize) -> Result<Vec<String>, String> {
    let mut names = Vec::with_capacity(n);
    let mut rest = buf;
    while !rest.is_empty() {
        let Some(end) = rest.iter().position(|&b| b == 0) else {
            return Err(format!(
                "joint names: name {} is not NUL-terminated",
                names.len()
            ));
        };
        if names.len() == n {
            return Err(format!(
                "joint names: the buffer holds more than the {n} names of the joints"
            ));
        }
        names.push(String::from_utf8_lossy(&rest[..end]).into_owned());
        rest = &rest[end + 1..];
    }
    if names.len() != n {
        return Err(format!(
            "joint names: the buffer holds {} names, the skeleton has {n} joints",
            names.len()
        ));
    }
    Ok(names)
}

/// Offset inside the rest-pose array of component `c` (0..10: tx ty tz rx ry rz rw sx sy sz) of joint `j`.
fn soa_offset(j: usize, c: usize) -> usize {
    (j / LANES) * SOA_BLOCK_BYTES + c * 16 + (j % LANES) * 4
}

/// Joint `j`'s rest transform from the SoA blocks; `(offset, field, problem)` on a bad value.
fn rest_transform(raw: &[u8], j: usize) -> Result<Transform, (usize, &'static str, &'static str)> {
    let mut v = [0.0f32; 10];
    for (c, slot) in v.iter_mut().enumerate() {
        let off = soa_offset(j, c);
        let x = f32::from_le_bytes([raw[off], raw[off + 1], raw[off + 2], raw[off + 3]]);
        if !x.is_finite() {
            let what = match c {
                0..=2 => "rest translation",
                3..=6 => "rest rotation",
                _ => "rest scale",
            };
            return Err((off, what, "is NaN or infinite"));
        }
        *slot = x;
    }
    // Normalise in f64 (finite f32 squares cannot overflow there).
    let len = v[3..7]
        .iter()
        .map(|&x| f64::from(x) * f64::from(x))
        .sum::<f64>()
        .sqrt();
    if len < 1e-6 {
        return Err((soa_offset(j, 3), "rest rotation", "is zero"));
    }
    let q = |i: usize| (f64::from(v[i]) / len) as f32;
    Ok(Transform::new(
        Vec3::new(v[0], v[1], v[2]),
        // Noise components below `TINY` become zero (see `flush_tiny`).
        Quat::new(q(3), q(4), q(5), q(6)).flush_tiny(),
        Vec3::new(v[7], v[8], v[9]),
    ))
}

// ---------------------------------------------------------------------------
// Animation
// ---------------------------------------------------------------------------

/// Which of the three key kinds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Translation,
    Rotation,
    Scale,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Translation => "translation",
            Kind::Rotation => "rotation",
            Kind::Scale => "scale",
        }
    }
}

/// Counts of one key kind, with the offsets of their fields.
struct KindCounts {
    kind: Kind,
    keys: usize,
    /// Offset of the key count (blamed when the keys exceed the budget).
    keys_at: usize,
    iframe_entries: usize,
    iframe_desc: usize,
}

/// Decoded keys of one kind: per track, key times (ratios) and values in time order.
struct Tracks<V> {
    times: Vec<Vec<f32>>,
    values: Vec<Vec<V>>,
}

/// Decoded animation before resampling.
struct Decoded {
    name: String,
    duration: f32,
    duration_at: usize,
    /// What the decoded keys cost the budget, given back once resampled.
    charged: u64,
    tracks: usize,
    translations: Tracks<Vec3>,
    rotations: Tracks<Quat>,
    scales: Tracks<Vec3>,
}

/// Loads an ozz animation archive and resamples it for `skeleton`.
///
/// `joint_map` maps ozz joint (track) indices to `skeleton`'s joints, as
/// returned by [`load_skeleton`]; `opts` gives the sample rate and the
/// memory budget of this one animation.
///
/// # Errors
/// The file cannot be read, or any error of [`animation_from_slice`].
pub fn load_animation(
    path: &Path,
    skeleton: &OwnedSkeleton,
    joint_map: &[u16],
    opts: &OzzOptions,
) -> Result<OwnedClip, ImportError> {
    animation_from_slice(&read_file(path)?, path, skeleton, joint_map, opts)
}

/// Parses an ozz animation archive held in memory and resamples it; `name`
/// is the file named in errors and gives the clip name when the archive's is empty.
///
/// The clip has `round(duration × opts.sample_rate) + 1` frames (see the
/// module docs); joints without a track hold `skeleton`'s rest pose.
///
/// # Errors
/// [`Location::File`] for a sample rate that is not finite and positive or
/// a `joint_map` that does not fit `skeleton`. Otherwise an [`ImportError`]
/// at the byte offset of the offending field: wrong endianness or type tag,
/// unsupported version, truncation, a NaN, infinite or negative duration,
/// more tracks than `joint_map` has joints, a count that exceeds the bytes
/// left (or more than 65535 timepoints, or fewer keys than two per padded
/// track), timepoints outside `[0, 1]` or out of order, a key whose timepoint
/// index is out of range, whose previous-key offset does not lead to the
/// latest key of a track, or whose time is not after its previous key's, a
/// NaN or infinite value, or decoded keys or a resampled clip that would
/// exceed `opts.memory_budget` (the clip's at the duration's offset).
pub fn animation_from_slice(
    bytes: &[u8],
    name: &Path,
    skeleton: &OwnedSkeleton,
    joint_map: &[u16],
    opts: &OzzOptions,
) -> Result<OwnedClip, ImportError> {
    let mut budget = Budget::new(opts.memory_budget);
    animation_with_warnings(
        bytes,
        name,
        skeleton,
        joint_map,
        opts.sample_rate,
        &mut budget,
    )
    .map(|(c, _)| c)
}

fn animation_with_warnings(
    bytes: &[u8],
    name: &Path,
    skeleton: &OwnedSkeleton,
    joint_map: &[u16],
    sample_rate: f32,
    budget: &mut Budget,
) -> Result<(OwnedClip, Vec<String>), ImportError> {
    let file_err = |msg: String| ImportError::new(name, Location::File, msg);
    if !(sample_rate.is_finite() && sample_rate > 0.0) {
        return Err(file_err(format!(
            "sample rate {sample_rate} is not finite and positive"
        )));
    }
    let joints = skeleton.joint_count();
    if joint_map.len() != joints {
        return Err(file_err(format!(
            "joint map has {} entries, the skeleton has {joints} joints",
            joint_map.len()
        )));
    }
    if let Some(bad) = joint_map.iter().find(|&&j| j as usize >= joints) {
        return Err(file_err(format!(
            "joint map names joint {bad}, the skeleton has {joints} joints"
        )));
    }

    let decoded = decode_animation(bytes, name, joints, budget)?;
    let mut warnings = Vec::new();
    if decoded.tracks < joints {
        warnings.push(format!(
            "{}: {} tracks for {joints} joints; joints without a track hold the rest pose",
            name.display(),
            decoded.tracks
        ));
    }

    // Frame count, charged to the budget before allocating: a patched
    // duration asks for billions of frames.
    let view = skeleton.view();
    let soa = view.soa_count();
    // Saturates for durations near f32::MAX; the budget refuses those.
    let frames_u = ((f64::from(decoded.duration) * f64::from(sample_rate)).round() + 1.0) as u64;
    let frame_bytes = (soa * SOA_BLOCK_BYTES) as u64;
    budget
        .take(
            frames_u.saturating_mul(frame_bytes),
            format_args!(
                "clip {:?}: duration {} s at {sample_rate} Hz, {}",
                decoded.name,
                decoded.duration,
                fmt_keys(frames_u, joints, soa)
            ),
        )
        .map_err(|m| ImportError::new(name, Location::Byte(decoded.duration_at as u64), m))?;
    // Within the budget, so within `usize`.
    let frames = usize::try_from(frames_u).unwrap_or(usize::MAX);
    let mut keys = Vec::new();
    keys.try_reserve_exact(frames.saturating_mul(soa))
        .map_err(|e| file_err(format!("cannot allocate the clip's keys: {e}")))?;
    let resampled_end = (frames - 1) as f64 / f64::from(sample_rate);
    if (resampled_end - f64::from(decoded.duration)).abs() > 1e-4 {
        warnings.push(format!(
            "{}: duration {} s is not a whole number of frames at {sample_rate} Hz; {frames} frames, the last one at the duration",
            name.display(),
            decoded.duration
        ));
    }

    resample(
        &decoded,
        view.rest_pose(),
        joint_map,
        sample_rate,
        frames,
        &mut keys,
    );
    budget.release(decoded.charged);
    let clip = OwnedClip::new(decoded.name, sample_rate, soa, keys)
        .map_err(|e| file_err(format!("invalid clip: {e}")))?;
    Ok((clip, warnings))
}

/// Parses and validates the archive into per-track key lists, charged to `budget`.
fn decode_animation(
    bytes: &[u8],
    name: &Path,
    joints: usize,
    budget: &mut Budget,
) -> Result<Decoded, ImportError> {
    let mut r = Reader::new(bytes, name);
    r.header(ANIMATION_TAG, ANIMATION_VERSION)?;

    let duration_at = r.pos;
    let duration = r.finite_f32("duration")?;
    if duration < 0.0 {
        return Err(r.err(duration_at, format!("duration {duration} is negative")));
    }
    let tracks_at = r.pos;
    let tracks = r.u32("track count")? as usize;
    if tracks > joints {
        return Err(r.err(
            tracks_at,
            format!("track count {tracks} exceeds the skeleton's {joints} joints"),
        ));
    }
    let aligned = tracks.div_ceil(LANES) * LANES;

    let mut fields = [0u32; 11];
    let mut field_at = [0usize; 11];
    for (f, at) in fields.iter_mut().zip(field_at.iter_mut()) {
        *at = r.pos;
        *f = r.u32("animation counts")?;
    }
    let [name_len, timepoints, t_keys, r_keys, s_keys, t_ie, t_id, r_ie, r_id, s_ie, s_id] = fields;
    let [name_at, tp_at, tk_at, rk_at, sk_at, tie_at, tid_at, rie_at, rid_at, sie_at, sid_at] =
        field_at;

    if timepoints > MAX_TIMEPOINTS {
        return Err(r.err(
            tp_at,
            format!("timepoint count {timepoints} exceeds {MAX_TIMEPOINTS}"),
        ));
    }
    let ratio_size: u64 = if timepoints <= u32::from(u8::MAX) {
        1
    } else {
        2
    };
    // Each count alone must fit in what is left (no allocation happens from a
    // count that fails this); truncation inside the arrays is reported where
    // the data runs out.
    let name_len = r.check_count(name_len.into(), 1, name_at, "name length")?;
    let timepoints = r.check_count(timepoints.into(), 4, tp_at, "timepoint count")?;
    let mut kinds = Vec::with_capacity(3);
    for (kind, keys, keys_at, ie, ie_at, id, id_at) in [
        (Kind::Translation, t_keys, tk_at, t_ie, tie_at, t_id, tid_at),
        (Kind::Rotation, r_keys, rk_at, r_ie, rie_at, r_id, rid_at),
        (Kind::Scale, s_keys, sk_at, s_ie, sie_at, s_id, sid_at),
    ] {
        let label = format!("{} key count", kind.name());
        let keys = r.check_count(keys.into(), ratio_size + 2 + 6, keys_at, &label)?;
        if keys < 2 * aligned {
            return Err(r.err(
                keys_at,
                format!(
                    "{label} {keys} is less than 2 keys for each of the {aligned} (4-aligned) tracks"
                ),
            ));
        }
        let label = format!("{} iframe entry count", kind.name());
        let iframe_entries = r.check_count(ie.into(), 1, ie_at, &label)?;
        let label = format!("{} iframe descriptor count", kind.name());
        let iframe_desc = r.check_count(id.into(), 4, id_at, &label)?;
        kinds.push(KindCounts {
            kind,
            keys,
            keys_at,
            iframe_entries,
            iframe_desc,
        });
    }

    let name_bytes = r.take(name_len, "animation name")?;
    let clip_name = if name_bytes.is_empty() {
        name.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    } else {
        String::from_utf8_lossy(name_bytes).into_owned()
    };

    let tp_start = r.pos;
    let tp_raw = r.take(4 * timepoints, "timepoints")?;
    let mut times = Vec::with_capacity(timepoints);
    for i in 0..timepoints {
        let at = tp_start + 4 * i;
        let t = f32::from_le_bytes([
            tp_raw[4 * i],
            tp_raw[4 * i + 1],
            tp_raw[4 * i + 2],
            tp_raw[4 * i + 3],
        ]);
        if !t.is_finite() {
            return Err(r.err(at, format!("timepoint {i} is NaN or infinite")));
        }
        if !(0.0..=1.0).contains(&t) {
            return Err(r.err(at, format!("timepoint {i} ({t}) is outside [0, 1]")));
        }
        if let Some(&prev) = times.last() {
            if t <= prev {
                return Err(r.err(
                    at,
                    format!(
                        "timepoints out of order: timepoint {i} ({t}) is not after timepoint {} ({prev})",
                        i - 1
                    ),
                ));
            }
        }
        times.push(t);
    }

    let ctx = KeyContext {
        times: &times,
        ratio_size: ratio_size as usize,
        aligned,
        tracks,
    };
    let mut translations = None;
    let mut rotations = None;
    let mut scales = None;
    let mut charged = 0u64;
    for counts in &kinds {
        // Per key: its track and time while reading, then its time and value
        // in its track's lists.
        let value_size = match counts.kind {
            Kind::Rotation => std::mem::size_of::<Quat>(),
            Kind::Translation | Kind::Scale => std::mem::size_of::<Vec3>(),
        };
        let per_key = (2 + 4 + 4 + value_size) as u64;
        let bytes = (counts.keys as u64).saturating_mul(per_key);
        budget
            .take(
                bytes,
                format_args!(
                    "{} keys: {} keys × {per_key} bytes decoded",
                    counts.kind.name(),
                    fmt_count(counts.keys as u64)
                ),
            )
            .map_err(|m| r.err(counts.keys_at, m))?;
        charged += bytes;
        let raw = read_kind(&mut r, counts, &ctx)?;
        match counts.kind {
            Kind::Translation => translations = Some(float3_tracks(&r, &raw, counts, &ctx)?),
            Kind::Scale => scales = Some(float3_tracks(&r, &raw, counts, &ctx)?),
            Kind::Rotation => {
                rotations = Some(collect_tracks(&r, &raw, &ctx, |i| {
                    Ok(decode_quat(raw.value(i)))
                })?);
            }
        }
    }
    let (Some(translations), Some(rotations), Some(scales)) = (translations, rotations, scales)
    else {
        return Err(r.err(r.pos, "internal: key kinds missing"));
    };
    Ok(Decoded {
        name: clip_name,
        duration,
        duration_at,
        charged,
        tracks,
        translations,
        rotations,
        scales,
    })
}

/// What every key kind shares.
struct KeyContext<'t> {
    times: &'t [f32],
    ratio_size: usize,
    aligned: usize,
    tracks: usize,
}

/// One kind's raw arrays, validated: per key its track and time.
struct RawKeys<'a> {
    values: &'a [u8],
    values_at: usize,
    track: Vec<u16>,
    time: Vec<f32>,
}

impl RawKeys<'_> {
    fn value(&self, i: usize) -> [u16; 3] {
        let v = &self.values[6 * i..6 * i + 6];
        [le_u16(v, 0), le_u16(v, 1), le_u16(v, 2)]
    }
}

/// Reads one kind's control arrays and values, and resolves each key's track.
fn read_kind<'a>(
    r: &mut Reader<'a>,
    counts: &KindCounts,
    ctx: &KeyContext<'_>,
) -> Result<RawKeys<'a>, ImportError> {
    let kind = counts.kind.name();
    let n = counts.keys;
    let ratios_at = r.pos;
    let ratios = r.take(n * ctx.ratio_size, &format!("{kind} key timepoint indices"))?;
    let prev_at = r.pos;
    let previous = r.take(2 * n, &format!("{kind} previous-key offsets"))?;
    r.take(counts.iframe_entries, &format!("{kind} iframe entries"))?;
    r.take(
        4 * counts.iframe_desc,
        &format!("{kind} iframe descriptors"),
    )?;
    r.finite_f32(&format!("{kind} iframe interval"))?;
    let values_at = r.pos;
    let values = r.take(6 * n, &format!("{kind} key values"))?;

    let a = ctx.aligned;
    let alloc_err = |e| r.err(counts.keys_at, format!("cannot allocate {kind} keys: {e}"));
    let mut track = Vec::new();
    track.try_reserve_exact(n).map_err(alloc_err)?;
    let mut time = Vec::new();
    time.try_reserve_exact(n).map_err(alloc_err)?;
    let mut last = vec![0usize; a];
    for i in 0..n {
        let ratio_at = ratios_at + ctx.ratio_size * i;
        let tp = if ctx.ratio_size == 1 {
            usize::from(ratios[i])
        } else {
            usize::from(le_u16(ratios, i))
        };
        let Some(&t) = ctx.times.get(tp) else {
            return Err(r.err(
                ratio_at,
                format!(
                    "{kind} key {i} has timepoint index {tp}, out of range ({} timepoints)",
                    ctx.times.len()
                ),
            ));
        };
        let (tr, before) = if i < 2 * a {
            // The first two rows: key i is key i / a of track i % a.
            let tr = i % a;
            (tr, (i >= a).then(|| i - a))
        } else {
            let off = usize::from(le_u16(previous, i));
            if off == 0 || off > i {
                return Err(r.err(
                    prev_at + 2 * i,
                    format!(
                        "{kind} key {i} has previous-key offset {off}, which does not point to an earlier key (its track cannot be found)"
                    ),
                ));
            }
            let p = i - off;
            let tr = usize::from(track[p]);
            if last[tr] != p {
                return Err(r.err(
                    prev_at + 2 * i,
                    format!(
                        "{kind} key {i} follows key {p}, which is not the latest key of track {tr} (key {})",
                        last[tr]
                    ),
                ));
            }
            (tr, Some(p))
        };
        if let Some(p) = before {
            let tp_prev: f32 = time[p];
            if t <= tp_prev {
                return Err(r.err(
                    ratio_at,
                    format!(
                        "timepoints out of order: {kind} key {i} of track {tr} is at ratio {t}, not after its previous key {p} at {tp_prev}"
                    ),
                ));
            }
        }
        last[tr] = i;
        track.push(tr as u16);
        time.push(t);
    }
    Ok(RawKeys {
        values,
        values_at,
        track,
        time,
    })
}

/// Groups keys by track (array order is time order within a track) for the
/// `tracks` real tracks; padding tracks are dropped.
fn collect_tracks<V>(
    r: &Reader<'_>,
    raw: &RawKeys<'_>,
    ctx: &KeyContext<'_>,
    mut value: impl FnMut(usize) -> Result<V, ImportError>,
) -> Result<Tracks<V>, ImportError> {
    let mut per_track = vec![0usize; ctx.tracks];
    for &tr in &raw.track {
        if let Some(c) = per_track.get_mut(usize::from(tr)) {
            *c += 1;
        }
    }
    let alloc_err = |e| r.err(raw.values_at, format!("cannot allocate keys: {e}"));
    let mut times: Vec<Vec<f32>> = Vec::with_capacity(ctx.tracks);
    let mut values: Vec<Vec<V>> = Vec::with_capacity(ctx.tracks);
    for &c in &per_track {
        let (mut t, mut v) = (Vec::new(), Vec::new());
        t.try_reserve_exact(c).map_err(alloc_err)?;
        v.try_reserve_exact(c).map_err(alloc_err)?;
        times.push(t);
        values.push(v);
    }
    for i in 0..raw.track.len() {
        let tr = usize::from(raw.track[i]);
        if tr < ctx.tracks {
            times[tr].push(raw.time[i]);
            values[tr].push(value(i)?);
        }
    }
    Ok(Tracks { times, values })
}

/// Translation or scale keys: three half floats each, which must be finite.
fn float3_tracks(
    r: &Reader<'_>,
    raw: &RawKeys<'_>,
    counts: &KindCounts,
    ctx: &KeyContext<'_>,
) -> Result<Tracks<Vec3>, ImportError> {
    collect_tracks(r, raw, ctx, |i| {
        let h = raw.value(i);
        let v = h.map(half_to_f32);
        match v.iter().position(|x| !x.is_finite()) {
            None => Ok(Vec3::new(v[0], v[1], v[2])),
            Some(c) => Err(r.err(
                raw.values_at + 6 * i + 2 * c,
                format!(
                    "{} key {i} value is NaN or infinite (half 0x{:04x})",
                    counts.kind.name(),
                    h[c]
                ),
            )),
        }
    })
}

/// Per-track cursor state for monotonic sampling.
fn bracket(times: &[f32], cursor: &mut usize, ratio: f32) -> (usize, usize, f32) {
    let last = times.len() - 1;
    while *cursor + 1 < last && times[*cursor + 1] <= ratio {
        *cursor += 1;
    }
    let (a, b) = (*cursor, (*cursor + 1).min(last));
    if a == b {
        return (a, b, 0.0);
    }
    let alpha = ((ratio - times[a]) / (times[b] - times[a])).clamp(0.0, 1.0);
    (a, b, alpha)
}

/// Resamples every track at `frames` uniform times into `keys` (empty,
/// with room for `frames` × the rest pose's blocks).
fn resample(
    d: &Decoded,
    rest: &[SoaTransform],
    joint_map: &[u16],
    rate: f32,
    frames: usize,
    keys: &mut Vec<SoaTransform>,
) {
    let mut cursors = vec![[0usize; 3]; d.tracks];
    for f in 0..frames {
        let ratio = if f + 1 == frames || d.duration <= 0.0 {
            if d.duration > 0.0 {
                1.0
            } else {
                0.0
            }
        } else {
            ((f as f64 / f64::from(rate)) / f64::from(d.duration)).min(1.0) as f32
        };
        let start = keys.len();
        keys.extend_from_slice(rest);
        let frame = &mut keys[start..];
        for (j, cur) in cursors.iter_mut().enumerate() {
            let (ta, tb, tw) = bracket(&d.translations.times[j], &mut cur[0], ratio);
            let (ra, rb, rw) = bracket(&d.rotations.times[j], &mut cur[1], ratio);
            let (sa, sb, sw) = bracket(&d.scales.times[j], &mut cur[2], ratio);
            let tv = &d.translations.values[j];
            let rv = &d.rotations.values[j];
            let sv = &d.scales.values[j];
            let t = Transform::new(
                tv[ta].lerp(tv[tb], tw),
                rv[ra].nlerp(rv[rb], rw),
                sv[sa].lerp(sv[sb], sw),
            );
            let target = usize::from(joint_map[j]);
            frame[target / LANES].set(target % LANES, &t);
        }
    }
}

// ---------------------------------------------------------------------------
// Whole asset
// ---------------------------------------------------------------------------

/// Loads an ozz skeleton and its animations as one [`Asset`].
///
/// Clips are resampled at `opts.sample_rate` frames per second, in
/// `animations` order; all of them share one memory budget,
/// `opts.memory_budget`. ozz archives carry no unit, so `units` is
/// `"file units"` (the ozz sample data is authored in metres). No meshes.
///
/// # Errors
/// The first error of [`load_skeleton`] or [`load_animation`]; an
/// animation that would take the budget past its limit is reported at its
/// own file.
pub fn load(
    skeleton: &Path,
    animations: &[&Path],
    opts: &OzzOptions,
) -> Result<Asset, ImportError> {
    let (owned, joint_map) = load_skeleton(skeleton)?;
    let mut budget = Budget::new(opts.memory_budget);
    let mut clips = Vec::with_capacity(animations.len());
    let mut warnings = Vec::new();
    for &path in animations {
        let bytes = read_file(path)?;
        let (clip, w) = animation_with_warnings(
            &bytes,
            path,
            &owned,
            &joint_map,
            opts.sample_rate,
            &mut budget,
        )?;
        clips.push(clip);
        warnings.extend(w);
    }
    Ok(Asset {
        source: PathBuf::from(skeleton),
        skeleton: owned,
        joint_map,
        clips,
        meshes: Vec::new(),
        warnings,
        units: "file units",
    })
}

// ---------------------------------------------------------------------------
// Tracks
// ---------------------------------------------------------------------------

/// Track archive version this importer reads (every track type of
/// ozz-animation 0.16).
pub const TRACK_VERSION: u32 = 1;

/// The five track types of an ozz archive, by their type tags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrackKind {
    /// `ozz-float_track`: one `f32` per key.
    Float,
    /// `ozz-float2_track`: two.
    Float2,
    /// `ozz-float3_track`: three.
    Float3,
    /// `ozz-float4_track`: four, interpolated component-wise.
    Float4,
    /// `ozz-quat_track`: a quaternion `x, y, z, w`, nlerped.
    Quaternion,
}

impl TrackKind {
    const ALL: [TrackKind; 5] = [
        TrackKind::Float,
        TrackKind::Float2,
        TrackKind::Float3,
        TrackKind::Float4,
        TrackKind::Quaternion,
    ];

    /// The archive's type tag, e.g. `"ozz-float_track"`.
    #[must_use]
    pub fn tag(self) -> &'static str {
        match self {
            TrackKind::Float => "ozz-float_track",
            TrackKind::Float2 => "ozz-float2_track",
            TrackKind::Float3 => "ozz-float3_track",
            TrackKind::Float4 => "ozz-float4_track",
            TrackKind::Quaternion => "ozz-quat_track",
        }
    }

    /// Floats per key.
    #[must_use]
    pub fn components(self) -> usize {
        match self {
            TrackKind::Float => 1,
            TrackKind::Float2 => 2,
            TrackKind::Float3 => 3,
            TrackKind::Float4 | TrackKind::Quaternion => 4,
        }
    }
}

/// Options of [`load_tracks`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TrackOptions {
    /// Seconds that ratio 1 stands for: key times become `ratio × duration`.
    /// `None` keeps ozz's ratios, in `[0, 1]`, as the key times (ozz
    /// samples a track by ratio; the animation the track goes with knows
    /// the duration).
    pub duration: Option<f32>,
    /// Bytes the import may allocate for the curves;
    /// [`DEFAULT_MEMORY_BUDGET`] by default.
    pub memory_budget: usize,
}

impl Default for TrackOptions {
    fn default() -> Self {
        TrackOptions {
            duration: None,
            memory_budget: DEFAULT_MEMORY_BUDGET,
        }
    }
}

/// One ozz track read as a curve.
#[derive(Clone, Debug, PartialEq)]
pub struct OzzTrack {
    /// The track's name (empty when it has none).
    pub name: String,
    /// Its type.
    pub kind: TrackKind,
    /// Keys in the archive.
    pub keys: usize,
    /// The keys as a curve: [`CurveData::Float`] to
    /// [`CurveData::Float4`], or [`CurveData::Rotation`]; times are ratios
    /// or seconds (see [`TrackOptions::duration`]).
    ///
    /// ozz gives each key a step bit: set, the key's value holds until the
    /// next key; clear, it is interpolated linearly towards it (quaternions
    /// by nlerp). A track whose keys are all step (the last key's bit plays
    /// no part) becomes [`Interpolation::Step`], one with none
    /// [`Interpolation::Linear`]. A track that mixes them becomes
    /// [`Interpolation::Linear`] with one key added before the key that
    /// follows each step key, at the largest `f32` time below it and with
    /// the step key's value: no `f32` time lies between the two, so the
    /// curve gives ozz's value at every time. A track without keys (ozz
    /// samples it as the identity) becomes one key at time 0 holding 0 or
    /// the identity rotation.
    pub curve: CurveData,
}

/// Reads every track of an ozz track archive (one or more tracks, each
/// with its type tag and version, after the archive's endianness tag).
///
/// # Errors
/// The file cannot be read, or any error of [`tracks_from_slice`].
pub fn load_tracks(path: &Path, opts: &TrackOptions) -> Result<Vec<OzzTrack>, ImportError> {
    tracks_from_slice(&read_file(path)?, path, opts)
}

/// [`load_tracks`] of an archive held in memory; `name` is the file named
/// in errors.
///
/// The format (little endian), per track after the archive's 1-byte
/// endianness tag: the NUL-terminated type tag ([`TrackKind::tag`]), `u32`
/// version [`TRACK_VERSION`], `u32` key count `n`, `i32` name length, `n`
/// `f32` ratios (strictly increasing in `[0, 1]`), `n` values of
/// [`TrackKind::components`] `f32` each, `ceil(n / 8)` bytes of step bits
/// (key `i` is bit `i % 8` of byte `i / 8`), and the name (no NUL).
///
/// # Errors
/// [`Location::File`] for a duration that is not finite and positive, or
/// key times that collide once scaled by it. Otherwise an [`ImportError`]
/// at the byte offset of the offending field: wrong endianness tag, an
/// unknown type tag, an unsupported version, truncation, a key count or
/// name length that exceeds the bytes left (or a negative name length),
/// a ratio that is NaN, outside `[0, 1]` or not after the previous one, a
/// NaN or infinite value, a zero quaternion, an archive without tracks, or
/// curves that would exceed `opts.memory_budget`.
pub fn tracks_from_slice(
    bytes: &[u8],
    name: &Path,
    opts: &TrackOptions,
) -> Result<Vec<OzzTrack>, ImportError> {
    if let Some(d) = opts.duration {
        if !(d.is_finite() && d > 0.0) {
            return Err(ImportError::new(
                name,
                Location::File,
                format!("track duration {d} is not finite and positive"),
            ));
        }
    }
    let mut budget = Budget::new(opts.memory_budget);
    let mut r = Reader::new(bytes, name);
    let endian = r.u8("endianness tag")?;
    if endian != LITTLE_ENDIAN_TAG {
        return Err(r.err(
            0,
            format!("endianness tag is {endian}, expected 1 (little endian)"),
        ));
    }
    let mut tracks = Vec::new();
    while r.remaining() > 0 || tracks.is_empty() {
        tracks.push(read_track(&mut r, opts.duration, &mut budget)?);
    }
    Ok(tracks)
}

/// The type tag at the reader's position.
fn track_kind(r: &mut Reader<'_>) -> Result<TrackKind, ImportError> {
    let at = r.pos;
    let rest = &r.bytes[at..];
    // The longest tag and its NUL.
    let window = &rest[..rest.len().min(17)];
    let Some(end) = window.iter().position(|&b| b == 0) else {
        if window.is_empty() {
            return Err(r.err(at, "truncated: no track in the archive"));
        }
        let shown = String::from_utf8_lossy(window);
        return Err(r.err(
            at,
            format!("type tag {shown:?}... is not an ozz track tag (or is cut off)"),
        ));
    };
    let tag = &window[..end];
    let Some(kind) = TrackKind::ALL
        .into_iter()
        .find(|k| k.tag().as_bytes() == tag)
    else {
        let shown = String::from_utf8_lossy(tag);
        return Err(r.err(
            at,
            format!("type tag is {shown:?}, not an ozz track (ozz-float_track, ozz-float2_track, ozz-float3_track, ozz-float4_track or ozz-quat_track)"),
        ));
    };
    r.pos += end + 1;
    Ok(kind)
}

fn read_track(
    r: &mut Reader<'_>,
    duration: Option<f32>,
    budget: &mut Budget,
) -> Result<OzzTrack, ImportError> {
    let track_at = r.pos;
    let kind = track_kind(r)?;
    let at = r.pos;
    let version = r.u32("version")?;
    if version != TRACK_VERSION {
        return Err(r.err(
            at,
            format!(
                "unsupported {} version {version} (this importer reads version {TRACK_VERSION}, ozz-animation 0.16)",
                kind.tag()
            ),
        ));
    }
    let comps = kind.components();
    let count_at = r.pos;
    let n = r.u32("key count")?;
    let name_at = r.pos;
    let name_len = r.i32("name length")?;
    // Each key takes a ratio, a value and a step bit: the count must fit
    // in what is left before anything is allocated from it.
    let n = r.check_count(u64::from(n), 4 + 4 * comps as u64, count_at, "key count")?;
    if name_len < 0 {
        return Err(r.err(name_at, format!("name length {name_len} is negative")));
    }
    let ratios_at = r.pos;
    let raw = r.take(4 * n, "key ratios")?;
    let f32_at = |b: &[u8], i: usize| {
        f32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]])
    };
    let mut ratios = budget
        .vec::<f32>(n, format_args!("track: {} key ratios", fmt_count(n as u64)))
        .map_err(|m| r.err(count_at, m))?;
    for i in 0..n {
        let t = f32_at(raw, i);
        let off = ratios_at + 4 * i;
        if !(0.0..=1.0).contains(&t) {
            return Err(r.err(off, format!("key {i}: ratio {t} is not in [0, 1]")));
        }
        if let Some(&prev) = ratios.last() {
            if t <= prev {
                return Err(r.err(
                    off,
                    format!("key {i}: ratio {t} is not after the previous key's {prev}"),
                ));
            }
        }
        ratios.push(t);
    }
    let values_at = r.pos;
    let raw = r.take(4 * comps * n, "key values")?;
    let mut flat = budget
        .vec::<f32>(
            comps * n,
            format_args!("track: {} key values", fmt_count(n as u64)),
        )
        .map_err(|m| r.err(count_at, m))?;
    for i in 0..comps * n {
        let v = f32_at(raw, i);
        if !v.is_finite() {
            return Err(r.err(
                values_at + 4 * i,
                format!("key {}: value is NaN or infinite", i / comps),
            ));
        }
        flat.push(v);
    }
    if kind == TrackKind::Quaternion {
        if let Some(k) = flat
            .chunks_exact(4)
            .position(|q| q.iter().map(|c| c * c).sum::<f32>() < 1e-12)
        {
            return Err(r.err(
                values_at + 16 * k,
                format!("key {k}: the quaternion is zero"),
            ));
        }
    }
    let steps = r.take(n.div_ceil(8), "key step bits")?;
    let name_len = r.check_count(name_len as u64, 1, name_at, "name length")?;
    let name = String::from_utf8_lossy(r.take(name_len, "track name")?).into_owned();

    let step = |i: usize| steps[i / 8] & (1 << (i % 8)) != 0;
    let keys = Keys {
        ratios: &ratios,
        duration,
        step: &step,
    };
    let at_track = |m: String| r.err(track_at, m);
    let pick = |c: &[f32], i: usize| c[i];
    let curve = match kind {
        TrackKind::Float => CurveData::Float(
            keys.curve(budget, 0.0, |i| pick(&flat, i))
                .map_err(at_track)?,
        ),
        TrackKind::Float2 => CurveData::Float2(
            keys.curve(budget, [0.0; 2], |i| [flat[2 * i], flat[2 * i + 1]])
                .map_err(at_track)?,
        ),
        TrackKind::Float3 => CurveData::Float3(
            keys.curve(budget, [0.0; 3], |i| {
                [flat[3 * i], flat[3 * i + 1], flat[3 * i + 2]]
            })
            .map_err(at_track)?,
        ),
        TrackKind::Float4 => CurveData::Float4(
            keys.curve(budget, [0.0; 4], |i| {
                [
                    flat[4 * i],
                    flat[4 * i + 1],
                    flat[4 * i + 2],
                    flat[4 * i + 3],
                ]
            })
            .map_err(at_track)?,
        ),
        TrackKind::Quaternion => CurveData::Rotation(
            keys.curve(budget, Quat::IDENTITY, |i| {
                Quat::new(
                    flat[4 * i],
                    flat[4 * i + 1],
                    flat[4 * i + 2],
                    flat[4 * i + 3],
                )
            })
            .map_err(at_track)?,
        ),
    };
    budget.release(bytes_of::<f32>(ratios.len()) + bytes_of::<f32>(flat.len()));
    Ok(OzzTrack {
        name,
        kind,
        keys: n,
        curve,
    })
}

/// A track's checked ratios and step bits, turned into curves.
struct Keys<'a> {
    ratios: &'a [f32],
    duration: Option<f32>,
    step: &'a dyn Fn(usize) -> bool,
}

impl Keys<'_> {
    /// The curve of values `value(i)` (see [`OzzTrack::curve`] for the
    /// step bits), its keys charged to `budget`.
    fn curve<V: CurveValue>(
        &self,
        budget: &mut Budget,
        identity: V,
        value: impl Fn(usize) -> V,
    ) -> Result<OwnedCurve<V>, String> {
        let n = self.ratios.len();
        let time = |i: usize| self.ratios[i] * self.duration.unwrap_or(1.0);
        if n == 0 {
            let mut times = budget.vec(1, "track: 1 key")?;
            times.push(0.0);
            let mut values = budget.vec(1, "track: 1 key")?;
            values.push(identity);
            return OwnedCurve::new(times, values, Interpolation::Linear)
                .map_err(|e| format!("track: {e}"));
        }
        // Segments are keys 0 .. n - 1; the last key's bit plays no part.
        let steps = (0..n - 1).filter(|&i| (self.step)(i)).count();
        let (interpolation, holds) = match steps {
            0 => (Interpolation::Linear, 0),
            s if s == n - 1 => (Interpolation::Step, 0),
            s => (Interpolation::Linear, s),
        };
        let len = n + holds;
        let what = format_args!("track: {} keys", fmt_count(len as u64));
        let mut times = budget.vec::<f32>(len, what)?;
        let mut values =
            budget.vec::<V>(len, format_args!("track: {} keys", fmt_count(len as u64)))?;
        for i in 0..n {
            times.push(time(i));
            values.push(value(i));
            if holds > 0 && i + 1 < n && (self.step)(i) {
                let hold = time(i + 1).next_down();
                if hold > time(i) {
                    times.push(hold);
                    values.push(value(i));
                }
            }
        }
        OwnedCurve::new(times, values, interpolation).map_err(|e| {
            format!(
                "track: {e}{}",
                if self.duration.is_some() {
                    " (key times scaled by the duration)"
                } else {
                    ""
                }
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves() {
        assert_eq!(half_to_f32(0x3c00), 1.0);
        assert_eq!(half_to_f32(0xc000), -2.0);
        assert_eq!(half_to_f32(0x0001), 5.960_464_5e-8);
        assert_eq!(half_to_f32(0x7bff), 65504.0);
        assert!(half_to_f32(0x7c00).is_infinite());
        assert!(half_to_f32(0x7e00).is_nan());
        assert_eq!(half_to_f32(0x8000).to_bits(), (-0.0f32).to_bits());
    }

    #[test]
    fn identity_quaternion() {
        // Largest = w (3), positive; the three others at the quantised zero 16383.5 ≈ 16384.
        let mid = 16384u64;
        let packed = 3 | (mid << 3) | (mid << 18) | (mid << 33);
        let v = [packed as u16, (packed >> 16) as u16, (packed >> 32) as u16];
        let q = decode_quat(v);
        assert!((q.w - 1.0).abs() < 1e-4 && q.x.abs() < 1e-4, "{q:?}");
    }
}
