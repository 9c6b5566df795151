//! Track sets: many float, vector and rotation tracks, raw or quantized,
//! in one validated zero-copy container, sampled one by one or all at
//! once in `f32x4` lanes.
//!
//! A [`TrackSet`] views one 16-byte aligned byte container in place.
//! [`TrackSet::from_bytes`] checks everything once (layout, bounds, key
//! times, values, quantization ranges, names), so sampling afterwards reads
//! only validated sections and cannot panic. [`write_track_set`] writes a
//! container from [`TrackDesc`] descriptions into a caller buffer sized by
//! [`track_set_size`]; nothing here allocates.
//!
//! Each track has a [`TrackKind`] (`f32`, `[f32; 2]`, `[f32; 3]`,
//! `[f32; 4]` or [`Quat`]), an [`Interpolation`] with the meaning of
//! [`super::curve`], an [`Encoding`], a name and an optional target id (a
//! node, a morph target: the caller's).
//!
//! # Sampling
//! - [`TrackSet::track`] gives a [`Track`], [`Track::typed`] a
//!   [`TypedTrack`] with [`TypedTrack::sample`] (binary search, O(log n))
//!   and [`TypedTrack::sample_with`] (a caller-held [`Cursor`], O(1)
//!   amortised). Raw tracks (floats, vectors and rotations) sample through
//!   a [`Curve`] over the container's own slices ([`TypedTrack::curve`]):
//!   the same bits as a curve built from the same keys. Quantized tracks
//!   decode the keys one sample needs (one, two, or four for cardinal
//!   splines) and run the same curve code on them: the same bits as a
//!   curve over all the decoded keys.
//! - [`TrackSet::sample_all`] writes every component of every track at one
//!   time into one flat slice, in track order (a `Vec3` track takes three
//!   entries, a rotation four: x, y, z, w). The component-wise channels go
//!   through the curve lane kernel (four raw float tracks in a row per
//!   call, else one track's components per call); rotations are sampled
//!   one by one. [`reference::sample_all`] is its scalar twin (they agree
//!   within 1e-5 relative).
//!
//! # Quantization
//! A quantized track stores each component of each value as a `u16` code
//! `q` over a per-track, per-component range: the value is
//! `min + scale · q`, `scale = (max − min) / 65535` rounded up so that the
//! codes cover the range. CUBICSPLINE tangents have their own ranges (they
//! are per second, not in the values' units). The writer picks the code
//! whose decoded value is nearest, so every stored component is within
//! [`quantization_bound`]`(min, scale) = scale/2 + 2⁻²¹·max(|min|, |min + 65535·scale|)`
//! of the original (half a step plus the `f32` rounding of the decode).
//!
//! Rotation keys are normalised, quantized component-wise over their own
//! ranges (inside `[−1, 1]`, so `scale ≤ 2/65535`), and normalised again
//! when sampled: a decoded key is within Euclidean distance
//! `4·B + 2⁻²⁰` of the normalised original, `B` the largest component
//! bound ([`KeyError`]): at most `4·(1/65535 + 2⁻²¹) + 2⁻²⁰ ≈ 6.4e-5`
//! (about 1.3e-4 rad) whatever the keys.
//!
//! Between keys, component-wise tracks inherit the key bounds: within
//! `B` for step and linear, `B + Δ/4·T` for CUBICSPLINE (`T` the tangent
//! bound, `Δ` the key interval: `|h10| + |h11| ≤ 1/4`), and
//! `B·(1 + (1 − tension)/2)` for cardinal splines, plus the rounding of the
//! interpolation itself.
//!
//! # Container (version 1, little endian)
//! A 48-byte header: magic `SINEWTRK`, version, track count, total size,
//! then the lengths of the sections below (key times and raw values in
//! `f32`, codes in `u16`, ranges in `f32`, names in bytes) and 8 reserved
//! zero bytes. Then the sections, each on a 16-byte boundary: the track
//! table (40 bytes per track: kind, interpolation, encoding, a reserved
//! zero byte, tension, key count, index of the first key time, of the
//! first value (raw `f32` or `u16` code), of the first range `f32`, the
//! target id ([`NO_TARGET`] for none), the name's offset and length, a
//! reserved zero word), the key times, the raw values, the codes, the
//! ranges (per quantized track: the components' minima, then their
//! scales, then the same for tangents) and the UTF-8 name table. Values
//! are flattened component after component, key after key; CUBICSPLINE
//! keys hold three values each in glTF's order (in-tangent, value,
//! out-tangent).

#[cfg(test)]
mod tests;

use crate::container::{check_preamble, le_u32};
use crate::error::Error;
use crate::math::{sqrt_f32, Quat};

use super::curve::{
    eval_lanes, lane_terms_of, Cursor, Curve, CurveValue, Interpolation, LaneTerms, Loc,
};

/// Magic bytes that open a track set container.
pub const TRACK_SET_MAGIC: [u8; 8] = *b"SINEWTRK";

/// Track set container version written and read by this build.
pub const TRACK_SET_VERSION: u32 = 1;

/// The target id of a track that names none.
pub const NO_TARGET: u32 = u32::MAX;

/// How far a rotation key's length may be from 1 (raw keys are normalised
/// when sampled, quantized ones before they are quantized).
pub const QUAT_UNIT_TOLERANCE: f32 = 1e-3;

const HEADER: usize = 48;
const RECORD: usize = core::mem::size_of::<Record>();
/// The largest `u16` code, as the decoder multiplies it.
const MAX_CODE: f32 = 65535.0;
/// `2⁻²¹`: the decode's rounding allowance per unit of magnitude.
const ROUNDING: f32 = 1.0 / 2_097_152.0;

/// What one key value of a track is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TrackKind {
    /// `f32`.
    Float,
    /// `[f32; 2]`.
    Vec2,
    /// `[f32; 3]`.
    Vec3,
    /// `[f32; 4]`, interpolated component-wise.
    Vec4,
    /// [`Quat`] (x, y, z, w): a rotation, unit length within
    /// [`QUAT_UNIT_TOLERANCE`].
    Quat,
}

impl TrackKind {
    /// Floats per value: 1, 2, 3, 4 or 4.
    #[inline]
    #[must_use]
    pub const fn components(self) -> usize {
        match self {
            TrackKind::Float => 1,
            TrackKind::Vec2 => 2,
            TrackKind::Vec3 => 3,
            TrackKind::Vec4 | TrackKind::Quat => 4,
        }
    }

    const fn code(self) -> u8 {
        match self {
            TrackKind::Float => 0,
            TrackKind::Vec2 => 1,
            TrackKind::Vec3 => 2,
            TrackKind::Vec4 => 3,
            TrackKind::Quat => 4,
        }
    }

    const fn from_code(c: u8) -> Option<Self> {
        Some(match c {
            0 => TrackKind::Float,
            1 => TrackKind::Vec2,
            2 => TrackKind::Vec3,
            3 => TrackKind::Vec4,
            4 => TrackKind::Quat,
            _ => return None,
        })
    }
}

/// How a track's values are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Encoding {
    /// `f32` values as given.
    #[default]
    Raw,
    /// A `u16` code per component over a per-track, per-component range
    /// (see the [module](self) for the error bound).
    Quantized,
}

/// The error bounds of a track's stored values against the values it was
/// written from (0 for raw tracks).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct KeyError {
    /// Key values: the largest component error of [`quantization_bound`];
    /// for rotations the Euclidean distance between the normalised decoded
    /// key and the normalised original, `4·B + 2⁻²⁰`.
    pub value: f32,
    /// CUBICSPLINE tangents, per component (0 for other modes).
    pub tangent: f32,
}

/// The largest error of a quantized component over the range that starts
/// at `min` with step `scale`: `scale/2 + 2⁻²¹·max(|min|, |min + 65535·scale|)`.
///
/// Half a step is the distance to the nearest code; the second term covers
/// the `f32` rounding of the decode `min + scale · q` (at most
/// `1.5·2⁻²³·max` of the magnitudes involved).
#[inline]
#[must_use]
pub fn quantization_bound(min: f32, scale: f32) -> f32 {
    let top = min + scale * MAX_CODE;
    0.5 * scale + min.abs().max(top.abs()) * ROUNDING
}

/// One track for [`write_track_set`].
#[derive(Clone, Copy, Debug)]
pub struct TrackDesc<'a> {
    /// The track's name (UTF-8, may be empty).
    pub name: &'a str,
    /// The caller's target id (a node, a morph target), or `None`; never
    /// [`NO_TARGET`] itself.
    pub target: Option<u32>,
    /// What a value is.
    pub kind: TrackKind,
    /// How values are interpolated (`Slerp` for rotations only).
    pub interpolation: Interpolation,
    /// Key times in seconds: finite, strictly increasing, at least one.
    pub times: &'a [f32],
    /// Values flattened, `kind.components()` floats per value, one value per
    /// key, or three for CUBICSPLINE (in-tangent, value, out-tangent).
    pub values: &'a [f32],
    /// Raw or quantized.
    pub encoding: Encoding,
}

/// One row of the track table, as stored.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
struct Record {
    kind: u8,
    interpolation: u8,
    encoding: u8,
    reserved: u8,
    tension: f32,
    keys: u32,
    times: u32,
    values: u32,
    ranges: u32,
    target: u32,
    name_offset: u32,
    name_len: u32,
    reserved2: u32,
}

fn interpolation_code(i: Interpolation) -> (u8, f32) {
    match i {
        Interpolation::Step => (0, 0.0),
        Interpolation::Linear => (1, 0.0),
        Interpolation::Slerp => (2, 0.0),
        Interpolation::CubicSpline => (3, 0.0),
        Interpolation::Cardinal { tension } => (4, tension),
    }
}

/// The stored interpolation; a tension other than +0 outside cardinal
/// splines is not canonical and refused.
fn interpolation_of(code: u8, tension: f32) -> Option<Interpolation> {
    let plain = tension.to_bits() == 0;
    match code {
        0 if plain => Some(Interpolation::Step),
        1 if plain => Some(Interpolation::Linear),
        2 if plain => Some(Interpolation::Slerp),
        3 if plain => Some(Interpolation::CubicSpline),
        4 => Some(Interpolation::Cardinal { tension }),
        _ => None,
    }
}

/// The section element counts a header states (or a writer computes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Counts {
    tracks: usize,
    times: usize,
    raw: usize,
    codes: usize,
    ranges: usize,
    names: usize,
}

/// Byte ranges of the sections and the total size.
#[derive(Clone, Copy, Debug)]
struct Layout {
    table: (usize, usize),
    times: (usize, usize),
    raw: (usize, usize),
    codes: (usize, usize),
    ranges: (usize, usize),
    names: (usize, usize),
    total: usize,
}

impl Counts {
    /// The layout, or `None` when it overflows or exceeds 4 GiB.
    fn layout(&self) -> Option<Layout> {
        let mut at = HEADER;
        let mut section = |bytes: usize| -> Option<(usize, usize)> {
            let start = at;
            let end = start.checked_add(bytes)?;
            at = end.checked_add(15)? & !15;
            Some((start, end))
        };
        let table = section(self.tracks.checked_mul(RECORD)?)?;
        let times = section(self.times.checked_mul(4)?)?;
        let raw = section(self.raw.checked_mul(4)?)?;
        let codes = section(self.codes.checked_mul(2)?)?;
        let ranges = section(self.ranges.checked_mul(4)?)?;
        let names = section(self.names)?;
        u32::try_from(at).ok()?;
        Some(Layout {
            table,
            times,
            raw,
            codes,
            ranges,
            names,
            total: at,
        })
    }
}

/// Values stored per key: three for CUBICSPLINE, else one.
fn per_key(i: Interpolation) -> usize {
    if i == Interpolation::CubicSpline {
        3
    } else {
        1
    }
}

/// Range floats a quantized track stores: min and scale per component,
/// twice for CUBICSPLINE (values, tangents).
fn range_len(kind: TrackKind, i: Interpolation) -> usize {
    let n = kind.components();
    if i == Interpolation::CubicSpline {
        4 * n
    } else {
        2 * n
    }
}

/// The interpolation fits the kind (slerp is for rotations; the curve
/// checks the tension).
fn check_mode(kind: TrackKind, i: Interpolation) -> Result<(), Error> {
    if i == Interpolation::Slerp && kind != TrackKind::Quat {
        return Err(Error::InvalidParameter {
            what: "slerp needs rotation (Quat) keys",
        });
    }
    Ok(())
}

/// A quaternion key's length is 1 within [`QUAT_UNIT_TOLERANCE`].
fn check_unit(c: &[f32]) -> Result<(), Error> {
    let l2: f32 = c.iter().map(|x| x * x).sum();
    if !l2.is_finite() {
        return Err(Error::NonFinite { what: "key value" });
    }
    if (sqrt_f32(l2) - 1.0).abs() > QUAT_UNIT_TOLERANCE {
        return Err(Error::InvalidParameter {
            what: "rotation keys must have unit length within 1e-3",
        });
    }
    Ok(())
}

/// Every check [`Curve::new`] makes on `times` and flattened `values` of
/// `kind`, plus unit rotation keys.
fn check_curve(
    kind: TrackKind,
    times: &[f32],
    values: &[f32],
    interpolation: Interpolation,
) -> Result<(), Error> {
    check_mode(kind, interpolation)?;
    let bad_len = Error::BadLength {
        buffer: "key values",
        expected: times
            .len()
            .saturating_mul(per_key(interpolation))
            .saturating_mul(kind.components()),
        actual: values.len(),
    };
    match kind {
        TrackKind::Float => Curve::new(times, values, interpolation).map(drop),
        TrackKind::Vec2 => Curve::new(
            times,
            bytemuck::try_cast_slice::<f32, [f32; 2]>(values).map_err(|_| bad_len)?,
            interpolation,
        )
        .map(drop),
        TrackKind::Vec3 => Curve::new(
            times,
            bytemuck::try_cast_slice::<f32, [f32; 3]>(values).map_err(|_| bad_len)?,
            interpolation,
        )
        .map(drop),
        TrackKind::Vec4 | TrackKind::Quat => {
            let v = bytemuck::try_cast_slice::<f32, [f32; 4]>(values).map_err(|_| bad_len)?;
            // Slerp is a rotation mode: the component-wise curve checks
            // everything else about the keys under Linear.
            let mode = if interpolation == Interpolation::Slerp {
                Interpolation::Linear
            } else {
                interpolation
            };
            Curve::new(times, v, mode)?;
            if kind == TrackKind::Quat {
                let per = per_key(interpolation);
                for key in v.iter().skip(per / 2).step_by(per) {
                    check_unit(key)?;
                }
            }
            Ok(())
        }
    }
}

/// The container's key times alone, as a curve for the key search.
#[inline]
fn keys_curve(times: &[f32]) -> Curve<'_, f32> {
    Curve::from_validated(times, times, Interpolation::Linear)
}

/// `len` elements of `s` from `start`.
fn sub<T>(s: &[T], start: u32, len: usize) -> Option<&[T]> {
    let start = start as usize;
    s.get(start..start.checked_add(len)?)
}

/// A record's name in the table (`None` outside it or splitting a
/// character).
fn name_of<'a>(names: &'a str, r: &Record) -> Option<&'a str> {
    let a = r.name_offset as usize;
    names.get(a..a.checked_add(r.name_len as usize)?)
}

/// A validated view of a track set container.
#[derive(Clone, Copy, Debug)]
pub struct TrackSet<'a> {
    records: &'a [Record],
    times: &'a [f32],
    raw: &'a [f32],
    codes: &'a [u16],
    ranges: &'a [f32],
    names: &'a str,
    components: usize,
}

impl<'a> TrackSet<'a> {
    /// Views a container that [`TrackSet::from_bytes`] accepted before,
    /// checking only its header and layout (O(tracks): no key or value
    /// scan): for views re-created from bytes validated once at load time
    /// (the C library's handles). On bytes that changed since, sampling
    /// computes unspecified values but never reads out of bounds.
    ///
    /// # Errors
    /// As [`TrackSet::from_bytes`], for the header and layout checks, and
    /// [`Error::Corrupt`] for an unknown track kind.
    pub fn from_validated_bytes(bytes: &'a [u8]) -> Result<Self, Error> {
        let (mut set, _) = Self::parse_layout(bytes)?;
        let mut components = 0usize;
        for r in set.records {
            let kind = TrackKind::from_code(r.kind).ok_or(Error::Corrupt {
                what: "unknown track kind",
            })?;
            components += kind.components();
        }
        set.components = components;
        Ok(set)
    }

    /// The header, layout and section checks of [`TrackSet::from_bytes`]:
    /// the view (with no component count yet) and the header's counts.
    fn parse_layout(bytes: &'a [u8]) -> Result<(Self, Counts), Error> {
        check_preamble(bytes, &TRACK_SET_MAGIC, TRACK_SET_VERSION, HEADER)?;
        let w = |at: usize| le_u32(bytes, at) as usize;
        if w(40) != 0 || w(44) != 0 {
            return Err(Error::Corrupt {
                what: "track set reserved header bytes are not zero",
            });
        }
        let counts = Counts {
            tracks: w(12),
            times: w(20),
            raw: w(24),
            codes: w(28),
            ranges: w(32),
            names: w(36),
        };
        let layout = counts.layout().ok_or(Error::Corrupt {
            what: "track set sections exceed 4 GiB",
        })?;
        if layout.total != w(16) {
            return Err(Error::Corrupt {
                what: "track set size does not match its sections",
            });
        }
        if bytes.len() < layout.total {
            return Err(Error::Truncated {
                needed: layout.total,
                actual: bytes.len(),
            });
        }
        let section = |(a, b): (usize, usize)| bytes.get(a..b).unwrap_or(&[]);
        let cast_err = |_| Error::Misaligned;
        let records: &[Record] =
            bytemuck::try_cast_slice(section(layout.table)).map_err(cast_err)?;
        let times: &[f32] = bytemuck::try_cast_slice(section(layout.times)).map_err(cast_err)?;
        let raw: &[f32] = bytemuck::try_cast_slice(section(layout.raw)).map_err(cast_err)?;
        let codes: &[u16] = bytemuck::try_cast_slice(section(layout.codes)).map_err(cast_err)?;
        let ranges: &[f32] = bytemuck::try_cast_slice(section(layout.ranges)).map_err(cast_err)?;
        let names = core::str::from_utf8(section(layout.names)).map_err(|_| Error::Corrupt {
            what: "track name table is not UTF-8",
        })?;
        let set = TrackSet {
            records,
            times,
            raw,
            codes,
            ranges,
            names,
            components: 0,
        };
        Ok((set, counts))
    }

    /// Validates a track set container once and views it in place.
    ///
    /// # Errors
    /// [`Error::UnsupportedPlatform`], [`Error::Truncated`],
    /// [`Error::BadMagic`], [`Error::UnsupportedVersion`],
    /// [`Error::Misaligned`] (the preamble); [`Error::Corrupt`] (reserved
    /// bytes not zero, sizes that overflow or disagree with the total, a
    /// track kind, interpolation or encoding unknown, a track without keys,
    /// a track's keys, values, ranges or name outside their sections, a
    /// quantization range that is not finite or whose decoded values could
    /// overflow, a name table that is not UTF-8, a section longer than its
    /// tracks use); and what [`Curve::new`]
    /// says of a track's keys ([`Error::InvalidParameter`],
    /// [`Error::NonFinite`]), including rotation keys not of unit length
    /// within [`QUAT_UNIT_TOLERANCE`].
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, Error> {
        let (mut set, counts) = Self::parse_layout(bytes)?;
        let records = set.records;
        let mut components = 0usize;
        // How far the tracks reach into each section: a section longer
        // than that is not what the writer makes (and a header count
        // changed within a section's padding would go unnoticed).
        let mut used = Counts {
            tracks: records.len(),
            ..Counts::default()
        };
        for r in records {
            let track = set.check(r)?;
            components += track.kind.components();
            let end = |start: u32, len: usize| start as usize + len;
            used.times = used.times.max(end(r.times, track.times.len()));
            if track.encoding == Encoding::Raw {
                used.raw = used.raw.max(end(r.values, track.raw.len()));
            } else {
                used.codes = used.codes.max(end(r.values, track.codes.len()));
                used.ranges = used.ranges.max(end(r.ranges, track.ranges.len()));
            }
            used.names = used.names.max(end(r.name_offset, track.name.len()));
        }
        if used != counts {
            return Err(Error::Corrupt {
                what: "track set sections are longer than their tracks use",
            });
        }
        set.components = components;
        Ok(set)
    }

    /// The checks of one record; the view of its track.
    fn check(&self, r: &Record) -> Result<Track<'a>, Error> {
        let corrupt = |what| Err(Error::Corrupt { what });
        if r.reserved != 0 || r.reserved2 != 0 {
            return corrupt("track record reserved bytes are not zero");
        }
        let Some(kind) = TrackKind::from_code(r.kind) else {
            return corrupt("unknown track kind");
        };
        let Some(interpolation) = interpolation_of(r.interpolation, r.tension) else {
            return corrupt("unknown track interpolation");
        };
        let encoding = match r.encoding {
            0 => Encoding::Raw,
            1 => Encoding::Quantized,
            _ => return corrupt("unknown track encoding"),
        };
        if r.keys == 0 {
            return corrupt("a track has no keys");
        }
        let keys = r.keys as usize;
        let n = kind.components();
        let Some(count) = keys
            .checked_mul(per_key(interpolation))
            .and_then(|c| c.checked_mul(n))
        else {
            return corrupt("track values exceed the address space");
        };
        let Some(times) = sub(self.times, r.times, keys) else {
            return corrupt("track key times lie outside their section");
        };
        let Some(name) = name_of(self.names, r) else {
            return corrupt("track name lies outside the name table or splits a character");
        };
        let (raw, codes, ranges): (&[f32], &[u16], &[f32]) = match encoding {
            Encoding::Raw => {
                if r.ranges != 0 {
                    return corrupt("a raw track names quantization ranges");
                }
                let Some(raw) = sub(self.raw, r.values, count) else {
                    return corrupt("track values lie outside their section");
                };
                check_curve(kind, times, raw, interpolation)?;
                (raw, &[], &[])
            }
            Encoding::Quantized => {
                let Some(codes) = sub(self.codes, r.values, count) else {
                    return corrupt("track codes lie outside their section");
                };
                let Some(ranges) = sub(self.ranges, r.ranges, range_len(kind, interpolation))
                else {
                    return corrupt("track ranges lie outside their section");
                };
                for pair in ranges.chunks_exact(2 * n) {
                    let (mins, scales) = pair.split_at(n);
                    for (&min, &scale) in mins.iter().zip(scales) {
                        // Every decoded value then stays finite, and so do
                        // sums of a few of them.
                        let ok = min.is_finite()
                            && scale.is_finite()
                            && scale >= 0.0
                            && min.abs() + scale * MAX_CODE <= f32::MAX * 0.25;
                        if !ok {
                            return corrupt("track quantization range is not finite and bounded");
                        }
                    }
                }
                check_mode(kind, interpolation)?;
                // The key times (and the tension), as a curve checks them.
                Curve::new(times, times, interpolation_times(interpolation))?;
                (&[], codes, ranges)
            }
        };
        let track = Track {
            kind,
            interpolation,
            encoding,
            target: r.target,
            times,
            raw,
            codes,
            ranges,
            name,
        };
        if kind == TrackKind::Quat && encoding == Encoding::Quantized {
            let per = per_key(interpolation);
            for k in 0..keys {
                let s = k * per + per / 2;
                check_unit(&core::array::from_fn::<f32, 4, _>(|c| track.value(s, c)))?;
            }
        }
        Ok(track)
    }

    /// Number of tracks.
    #[inline]
    #[must_use]
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether the set has no tracks.
    #[inline]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Components of all tracks together: the length of
    /// [`TrackSet::sample_all`]'s output.
    #[inline]
    #[must_use]
    pub fn component_count(&self) -> usize {
        self.components
    }

    /// Track `i`, or `None` past the end.
    #[must_use]
    pub fn track(&self, i: usize) -> Option<Track<'a>> {
        let r = self.records.get(i)?;
        // Every record passed `check`, so every lookup below succeeds; a
        // failed one would give an empty slice, never a panic.
        let kind = TrackKind::from_code(r.kind)?;
        let interpolation = interpolation_of(r.interpolation, r.tension)?;
        let keys = r.keys as usize;
        let count = keys
            .saturating_mul(per_key(interpolation))
            .saturating_mul(kind.components());
        let quantized = r.encoding == 1;
        Some(Track {
            kind,
            interpolation,
            encoding: if quantized {
                Encoding::Quantized
            } else {
                Encoding::Raw
            },
            target: r.target,
            times: sub(self.times, r.times, keys).unwrap_or(&[]),
            raw: if quantized {
                &[]
            } else {
                sub(self.raw, r.values, count).unwrap_or(&[])
            },
            codes: if quantized {
                sub(self.codes, r.values, count).unwrap_or(&[])
            } else {
                &[]
            },
            ranges: if quantized {
                sub(self.ranges, r.ranges, range_len(kind, interpolation)).unwrap_or(&[])
            } else {
                &[]
            },
            name: name_of(self.names, r).unwrap_or(""),
        })
    }

    /// Index of the first track named `name` (linear: for set-up).
    #[must_use]
    pub fn find(&self, name: &str) -> Option<usize> {
        (0..self.len()).find(|&i| self.track(i).map(|t| t.name) == Some(name))
    }

    /// Every component of every track at time `t` into `out`, in track
    /// order (track `i`'s components follow those of tracks `0..i`; a
    /// rotation writes x, y, z, w), moving `cursors[i]` as
    /// [`TypedTrack::sample_with`] does.
    ///
    /// Component-wise tracks go through the curve lane kernel
    /// ([`super::curve::sample4`]'s): four raw float tracks in a row take
    /// one lane each, any other component-wise track its components in
    /// the lanes of one call; rotations are sampled one by one. Agrees with [`reference::sample_all`]
    /// within 1e-5 relative; steps, clamped times and exact keys give the
    /// key's bits.
    ///
    /// # Errors
    /// [`Error::BadLength`] when `cursors` (`"cursors"`) is not one per
    /// track or `out` (`"output"`) not [`TrackSet::component_count`] long;
    /// nothing is written then.
    pub fn sample_all(&self, t: f32, cursors: &mut [Cursor], out: &mut [f32]) -> Result<(), Error> {
        self.check_lengths(cursors.len(), out.len())?;
        let tracks = self.records.len();
        let (mut i, mut o) = (0, 0);
        while i < tracks {
            // Four raw float tracks in a row: one lane each, fixed lane
            // indices (the terms stay in registers), one 16-byte write.
            let four = (
                self.records
                    .get(i..i + 4)
                    .and_then(|r| <&[Record; 4]>::try_from(r).ok()),
                cursors
                    .get_mut(i..i + 4)
                    .and_then(|k| <&mut [Cursor; 4]>::try_from(k).ok()),
                out.get_mut(o..o + 4),
            );
            if let (Some(rs), Some(ks), Some(dst)) = four {
                if let Some(curves) = self.raw_floats(rs) {
                    let terms: [LaneTerms; 4] =
                        core::array::from_fn(|l| curves[l].lane_terms(&mut ks[l], t));
                    dst.copy_from_slice(&eval_lanes(&terms).to_array());
                    (i, o) = (i + 4, o + 4);
                    continue;
                }
            }
            let (Some(track), Some(cursor)) = (self.track(i), cursors.get_mut(i)) else {
                break;
            };
            let n = track.kind.components();
            let dst = out.get_mut(o..o + n).unwrap_or(&mut []);
            if track.kind == TrackKind::Quat {
                let q = track.sampler::<Quat>().sample_with(cursor, t);
                for (d, v) in dst.iter_mut().zip(q.to_array()) {
                    *d = v;
                }
            } else {
                // One track's components in the lanes (spare lanes repeat
                // the last component and are not written).
                let loc = keys_curve(track.times).locate(cursor, t);
                let decoder = track.decoder();
                let mut terms = [LaneTerms::default(); 4];
                for c in 0..4 {
                    terms[c] = if c < n {
                        lane_terms_of(track.times, track.interpolation, loc, |s| {
                            decoder.value(s, c)
                        })
                    } else {
                        terms[c - 1]
                    };
                }
                for (d, v) in dst.iter_mut().zip(eval_lanes(&terms).to_array()) {
                    *d = v;
                }
            }
            (i, o) = (i + 1, o + n);
        }
        Ok(())
    }

    /// The curves of four raw float tracks, or `None` when one is not.
    #[inline]
    fn raw_floats(&self, rs: &[Record; 4]) -> Option<[Curve<'a, f32>; 4]> {
        if rs.iter().any(|r| r.kind != 0 || r.encoding != 0) {
            return None;
        }
        // Records passed `check`: every lookup succeeds.
        let curve = |r: &Record| -> Option<Curve<'a, f32>> {
            let interpolation = interpolation_of(r.interpolation, r.tension)?;
            let keys = r.keys as usize;
            let times = sub(self.times, r.times, keys)?;
            let values = sub(self.raw, r.values, keys * per_key(interpolation))?;
            Some(Curve::from_validated(times, values, interpolation))
        };
        Some([
            curve(&rs[0])?,
            curve(&rs[1])?,
            curve(&rs[2])?,
            curve(&rs[3])?,
        ])
    }

    fn check_lengths(&self, cursors: usize, out: usize) -> Result<(), Error> {
        if cursors != self.len() {
            return Err(Error::BadLength {
                buffer: "cursors",
                expected: self.len(),
                actual: cursors,
            });
        }
        if out != self.components {
            return Err(Error::BadLength {
                buffer: "output",
                expected: self.components,
                actual: out,
            });
        }
        Ok(())
    }
}

/// Times-only validation mode: the tension still checked, the key count
/// one per time.
fn interpolation_times(i: Interpolation) -> Interpolation {
    match i {
        Interpolation::Cardinal { .. } => i,
        _ => Interpolation::Linear,
    }
}

/// One track of a [`TrackSet`]: what it is, its keys, and typed sampling.
#[derive(Clone, Copy, Debug)]
pub struct Track<'a> {
    kind: TrackKind,
    interpolation: Interpolation,
    encoding: Encoding,
    target: u32,
    times: &'a [f32],
    raw: &'a [f32],
    codes: &'a [u16],
    ranges: &'a [f32],
    name: &'a str,
}

/// A track's stored values as [`Track::value`] decodes them, with the
/// per-track ranges read once: the same bits.
#[derive(Clone, Copy)]
struct Decoder<'a> {
    n: usize,
    quantized: bool,
    cubic: bool,
    raw: &'a [f32],
    codes: &'a [u16],
    /// Minima and scales of the key values, per component.
    values: [[f32; 4]; 2],
    /// The same for CUBICSPLINE tangents.
    tangents: [[f32; 4]; 2],
}

impl Decoder<'_> {
    /// Component `c` (below the kind's count) of stored value `s`.
    #[inline]
    fn value(&self, s: usize, c: usize) -> f32 {
        let at = s * self.n + c;
        if !self.quantized {
            return self.raw.get(at).copied().unwrap_or(0.0);
        }
        let [min, scale] = if self.cubic && s % 3 != 1 {
            &self.tangents
        } else {
            &self.values
        };
        let q = self.codes.get(at).copied().unwrap_or(0);
        let c = c & 3;
        min[c] + scale[c] * f32::from(q)
    }
}

/// The keys one sample needs, decoded: at most four keys of three values.
struct Window<V> {
    times: [f32; 4],
    values: [V; 12],
    keys: usize,
    per: usize,
    /// The sample's location on the window's keys.
    loc: Loc,
}

impl<V: CurveValue> Window<V> {
    #[inline]
    fn curve(&self, interpolation: Interpolation) -> Curve<'_, V> {
        let times = self.times.get(..self.keys).unwrap_or(&[]);
        let values = self.values.get(..self.keys * self.per).unwrap_or(&[]);
        Curve::from_validated(times, values, interpolation)
    }
}

impl<'a> Track<'a> {
    /// What a value is.
    #[inline]
    #[must_use]
    pub fn kind(&self) -> TrackKind {
        self.kind
    }

    /// How values are interpolated.
    #[inline]
    #[must_use]
    pub fn interpolation(&self) -> Interpolation {
        self.interpolation
    }

    /// Raw or quantized.
    #[inline]
    #[must_use]
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// The track's name (empty when unnamed).
    #[inline]
    #[must_use]
    pub fn name(&self) -> &'a str {
        self.name
    }

    /// The caller's target id, if the track names one.
    #[inline]
    #[must_use]
    pub fn target(&self) -> Option<u32> {
        (self.target != NO_TARGET).then_some(self.target)
    }

    /// Key times, seconds.
    #[inline]
    #[must_use]
    pub fn times(&self) -> &'a [f32] {
        self.times
    }

    /// Number of keys (at least 1).
    #[inline]
    #[must_use]
    pub fn len(&self) -> usize {
        self.times.len()
    }

    /// Always false: a track has at least one key.
    #[inline]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }

    /// A raw track's values, flattened as [`TrackDesc::values`]; `None`
    /// for quantized tracks.
    #[inline]
    #[must_use]
    pub fn raw_values(&self) -> Option<&'a [f32]> {
        (self.encoding == Encoding::Raw).then_some(self.raw)
    }

    /// Component `c` of stored value `s` (key `s / 3` for CUBICSPLINE),
    /// decoded: what every sampler of this track reads.
    #[inline]
    #[must_use]
    pub fn value(&self, s: usize, c: usize) -> f32 {
        let n = self.kind.components();
        let at = s * n + c;
        match self.encoding {
            Encoding::Raw => self.raw.get(at).copied().unwrap_or(0.0),
            Encoding::Quantized => {
                let tangent = self.interpolation == Interpolation::CubicSpline && s % 3 != 1;
                let base = if tangent { 2 * n + c } else { c };
                let min = self.ranges.get(base).copied().unwrap_or(0.0);
                let scale = self.ranges.get(base + n).copied().unwrap_or(0.0);
                let q = self.codes.get(at).copied().unwrap_or(0);
                min + scale * f32::from(q)
            }
        }
    }

    /// [`Track::value`]'s per-track constants read once, for the
    /// samplers that decode several values.
    #[inline]
    fn decoder(&self) -> Decoder<'a> {
        let n = self.kind.components();
        let quantized = self.encoding == Encoding::Quantized;
        let range = |at: usize| -> [f32; 4] {
            core::array::from_fn(|c| {
                if c < n {
                    self.ranges.get(at + c).copied().unwrap_or(0.0)
                } else {
                    0.0
                }
            })
        };
        Decoder {
            n,
            quantized,
            cubic: self.interpolation == Interpolation::CubicSpline,
            raw: self.raw,
            codes: self.codes,
            values: [range(0), range(n)],
            tangents: [range(2 * n), range(3 * n)],
        }
    }

    /// The bounds of the stored values against the written ones (zero for
    /// raw tracks); see the [module](self).
    #[must_use]
    pub fn error_bound(&self) -> KeyError {
        if self.encoding == Encoding::Raw {
            return KeyError::default();
        }
        let n = self.kind.components();
        let bound = |base: usize| {
            (0..n).fold(0.0f32, |m, c| {
                let min = self.ranges.get(base + c).copied().unwrap_or(0.0);
                let scale = self.ranges.get(base + n + c).copied().unwrap_or(0.0);
                m.max(quantization_bound(min, scale))
            })
        };
        let value = bound(0);
        let tangent = if self.ranges.len() == 4 * n {
            bound(2 * n)
        } else {
            0.0
        };
        KeyError {
            value: if self.kind == TrackKind::Quat {
                4.0 * value + 1.0 / 1_048_576.0
            } else {
                value
            },
            tangent,
        }
    }

    /// The typed view for sampling.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] when `V` is not the track's kind.
    pub fn typed<V: TrackValue>(&self) -> Result<TypedTrack<'a, V>, Error> {
        if V::KIND != self.kind {
            return Err(Error::InvalidParameter {
                what: "the value type does not match the track kind",
            });
        }
        Ok(self.sampler())
    }

    /// [`Track::typed`] for a kind already checked.
    #[inline]
    fn sampler<V: TrackValue>(&self) -> TypedTrack<'a, V> {
        let curve = match self.encoding {
            Encoding::Raw => V::view(self.raw)
                .map(|values| Curve::from_validated(self.times, values, self.interpolation)),
            Encoding::Quantized => None,
        };
        TypedTrack {
            track: *self,
            curve,
        }
    }

    /// The keys around `loc` (a location on the track's keys), decoded by
    /// `value` (stored value index to `V`).
    #[inline]
    fn window<V: Copy>(&self, loc: Loc, value: impl Fn(usize) -> V) -> Window<V> {
        let last = self.times.len().saturating_sub(1);
        let (first, keys, local) = match loc {
            Loc::Key(k) => (k, 1, Loc::Key(0)),
            Loc::Segment(i, u) => match self.interpolation {
                Interpolation::Step => (i, 1, Loc::Key(0)),
                Interpolation::Cardinal { .. } => {
                    let first = i.saturating_sub(1);
                    let end = (i + 2).min(last);
                    (first, end + 1 - first, Loc::Segment(i - first, u))
                }
                _ => (i, 2, Loc::Segment(0, u)),
            },
        };
        let per = per_key(self.interpolation);
        // Only the keys the sample reads are decoded; spare entries repeat
        // the first and are not part of the window's curve.
        let mut times = [self.times.get(first).copied().unwrap_or(0.0); 4];
        for (j, t) in times.iter_mut().enumerate().take(keys).skip(1) {
            *t = self.times.get(first + j).copied().unwrap_or(0.0);
        }
        let base = first * per;
        let mut values = [value(base); 12];
        for (j, v) in values.iter_mut().enumerate().take(keys * per).skip(1) {
            *v = value(base + j);
        }
        Window {
            times,
            values,
            keys,
            per,
            loc: local,
        }
    }
}

/// A track viewed with its value type: `f32`, `[f32; 2]`, `[f32; 3]`,
/// `[f32; 4]` or [`Quat`].
#[derive(Clone, Copy, Debug)]
pub struct TypedTrack<'a, V: TrackValue> {
    track: Track<'a>,
    curve: Option<Curve<'a, V>>,
}

impl<'a, V: TrackValue> TypedTrack<'a, V> {
    /// The untyped track.
    #[inline]
    #[must_use]
    pub fn track(&self) -> Track<'a> {
        self.track
    }

    /// The [`Curve`] over the container's own slices, for raw tracks
    /// (`None` for quantized tracks).
    #[inline]
    #[must_use]
    pub fn curve(&self) -> Option<Curve<'a, V>> {
        self.curve
    }

    /// The value at time `t` by binary search, O(log n); clamping as
    /// [`super::curve`] says.
    #[inline]
    #[must_use]
    pub fn sample(&self, t: f32) -> V {
        match &self.curve {
            Some(c) => c.sample(t),
            None => self.eval(keys_curve(self.track.times).find(t)),
        }
    }

    /// The value at time `t` from a caller-held cursor, O(1) amortised
    /// for playback; the same bits as [`TypedTrack::sample`].
    #[inline]
    #[must_use]
    pub fn sample_with(&self, cursor: &mut Cursor, t: f32) -> V {
        match &self.curve {
            Some(c) => c.sample_with(cursor, t),
            None => self.eval(keys_curve(self.track.times).locate(cursor, t)),
        }
    }

    #[inline]
    fn eval(&self, loc: Loc) -> V {
        let d = self.track.decoder();
        let value = |s: usize| V::from_components(|c| d.value(s, c));
        // Step and linear read one or two keys: decoded straight into the
        // curve's arithmetic (what `Curve::eval` runs on them). The other
        // modes run the curve over a window of the keys they read.
        match (loc, self.track.interpolation) {
            (Loc::Key(k), Interpolation::Step | Interpolation::Linear) => value(k).key(),
            (Loc::Segment(i, _), Interpolation::Step) => value(i).key(),
            (Loc::Segment(i, u), Interpolation::Linear) => V::linear(value(i), value(i + 1), u),
            _ => {
                let w = self.track.window(loc, value);
                w.curve(self.track.interpolation).eval(w.loc)
            }
        }
    }
}

mod sealed {
    use super::TrackKind;

    /// How a value type maps to a track's flattened components.
    pub trait Components: Copy {
        const KIND: TrackKind;
        /// The value with component `c` from `f(c)`.
        fn from_components(f: impl Fn(usize) -> f32) -> Self;
        /// The flattened values viewed as `Self`, where that is possible.
        fn view(values: &[f32]) -> Option<&[Self]>;
    }
}

/// A value type a track holds: `f32`, `[f32; 2]`, `[f32; 3]`, `[f32; 4]`
/// or [`Quat`]. Sealed.
pub trait TrackValue: CurveValue + sealed::Components {}

impl sealed::Components for f32 {
    const KIND: TrackKind = TrackKind::Float;
    #[inline]
    fn from_components(f: impl Fn(usize) -> f32) -> Self {
        f(0)
    }
    #[inline]
    fn view(values: &[f32]) -> Option<&[Self]> {
        Some(values)
    }
}

macro_rules! array_value {
    ($n:literal, $kind:ident) => {
        impl sealed::Components for [f32; $n] {
            const KIND: TrackKind = TrackKind::$kind;
            #[inline]
            fn from_components(f: impl Fn(usize) -> f32) -> Self {
                core::array::from_fn(f)
            }
            #[inline]
            fn view(values: &[f32]) -> Option<&[Self]> {
                bytemuck::try_cast_slice(values).ok()
            }
        }
        impl TrackValue for [f32; $n] {}
    };
}

array_value!(2, Vec2);
array_value!(3, Vec3);
array_value!(4, Vec4);

impl sealed::Components for Quat {
    const KIND: TrackKind = TrackKind::Quat;
    #[inline]
    fn from_components(f: impl Fn(usize) -> f32) -> Self {
        Quat::new(f(0), f(1), f(2), f(3))
    }
    #[inline]
    fn view(values: &[f32]) -> Option<&[Self]> {
        bytemuck::try_cast_slice(values).ok()
    }
}

impl TrackValue for f32 {}
impl TrackValue for Quat {}

/// The counts of a set of descriptions, each checked.
fn counts_of(tracks: &[TrackDesc<'_>]) -> Result<Counts, Error> {
    let too_many = Error::CapacityExceeded {
        capacity: u32::MAX as usize,
    };
    let mut c = Counts {
        tracks: tracks.len(),
        ..Counts::default()
    };
    let add = |a: usize, b: usize| a.checked_add(b).ok_or(too_many);
    for d in tracks {
        check_desc(d)?;
        c.times = add(c.times, d.times.len())?;
        c.names = add(c.names, d.name.len())?;
        match d.encoding {
            Encoding::Raw => c.raw = add(c.raw, d.values.len())?,
            Encoding::Quantized => {
                c.codes = add(c.codes, d.values.len())?;
                c.ranges = add(c.ranges, range_len(d.kind, d.interpolation))?;
            }
        }
    }
    // Every index stored in a record is a u32.
    for n in [c.tracks, c.times, c.raw, c.codes, c.ranges, c.names] {
        if u32::try_from(n).is_err() {
            return Err(too_many);
        }
    }
    Ok(c)
}

/// The checks of one description.
fn check_desc(d: &TrackDesc<'_>) -> Result<(), Error> {
    if d.target == Some(NO_TARGET) {
        return Err(Error::InvalidParameter {
            what: "a track target must not be NO_TARGET (use None)",
        });
    }
    let expected = d
        .times
        .len()
        .saturating_mul(per_key(d.interpolation))
        .saturating_mul(d.kind.components());
    if d.values.len() != expected {
        return Err(Error::BadLength {
            buffer: "key values",
            expected,
            actual: d.values.len(),
        });
    }
    check_curve(d.kind, d.times, d.values, d.interpolation)?;
    if d.encoding == Encoding::Quantized {
        let limit = f32::MAX / 16.0;
        if d.values.iter().any(|v| v.abs() > limit) {
            return Err(Error::InvalidParameter {
                what: "quantized values must lie within ±f32::MAX/16",
            });
        }
    }
    Ok(())
}

/// Bytes [`write_track_set`] needs for these tracks (a multiple of 16).
///
/// # Errors
/// As [`write_track_set`], except the buffer's.
pub fn track_set_size(tracks: &[TrackDesc<'_>]) -> Result<usize, Error> {
    counts_of(tracks)?
        .layout()
        .map(|l| l.total)
        .ok_or(Error::CapacityExceeded {
            capacity: u32::MAX as usize,
        })
}

/// Writes a track set container of `tracks` into `out` (16-byte aligned)
/// and returns the bytes written ([`track_set_size`]).
///
/// Quantized tracks get, per component, the range of their values (and of
/// their tangents) and the nearest code of each value; rotation keys are
/// normalised first. Every stored component is then within
/// [`quantization_bound`] of its original (the writer checks it).
///
/// # Errors
/// - [`Error::BadLength`]: a track's values are not
///   `components × (1 or 3) × keys` floats.
/// - [`Error::InvalidParameter`], [`Error::NonFinite`]: what
///   [`Curve::new`] refuses; slerp on other than rotations; a rotation key
///   not of unit length within [`QUAT_UNIT_TOLERANCE`]; a target of
///   [`NO_TARGET`]; a quantized value beyond `±f32::MAX/16`.
/// - [`Error::CapacityExceeded`]: the container would exceed 4 GiB.
/// - [`Error::BufferTooSmall`], [`Error::Misaligned`]: `out`.
pub fn write_track_set(tracks: &[TrackDesc<'_>], out: &mut [u8]) -> Result<usize, Error> {
    let counts = counts_of(tracks)?;
    let layout = counts.layout().ok_or(Error::CapacityExceeded {
        capacity: u32::MAX as usize,
    })?;
    let total = layout.total;
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
    out[..8].copy_from_slice(&TRACK_SET_MAGIC);
    let header = [
        TRACK_SET_VERSION as usize,
        counts.tracks,
        total,
        counts.times,
        counts.raw,
        counts.codes,
        counts.ranges,
        counts.names,
    ];
    for (i, v) in header.into_iter().enumerate() {
        put(out, 8 + 4 * i, &(v as u32).to_le_bytes());
    }
    let mut at = Counts::default();
    for (i, d) in tracks.iter().enumerate() {
        let (interpolation, tension) = interpolation_code(d.interpolation);
        let mut record = Record {
            kind: d.kind.code(),
            interpolation,
            tension,
            keys: d.times.len() as u32,
            times: at.times as u32,
            target: d.target.unwrap_or(NO_TARGET),
            name_offset: at.names as u32,
            name_len: d.name.len() as u32,
            ..Record::default()
        };
        for (k, t) in d.times.iter().enumerate() {
            put(out, layout.times.0 + 4 * (at.times + k), &t.to_le_bytes());
        }
        at.times += d.times.len();
        put(out, layout.names.0 + at.names, d.name.as_bytes());
        at.names += d.name.len();
        match d.encoding {
            Encoding::Raw => {
                record.values = at.raw as u32;
                for (k, v) in d.values.iter().enumerate() {
                    put(out, layout.raw.0 + 4 * (at.raw + k), &v.to_le_bytes());
                }
                at.raw += d.values.len();
            }
            Encoding::Quantized => {
                record.encoding = 1;
                record.values = at.codes as u32;
                record.ranges = at.ranges as u32;
                quantize(d, out, &layout, &at)?;
                at.codes += d.values.len();
                at.ranges += range_len(d.kind, d.interpolation);
            }
        }
        put(
            out,
            layout.table.0 + RECORD * i,
            bytemuck::bytes_of(&record),
        );
    }
    Ok(total)
}

/// `bytes` at `at` of `out` (inside the layout, so always in range).
fn put(out: &mut [u8], at: usize, bytes: &[u8]) {
    if let Some(dst) = out.get_mut(at..at + bytes.len()) {
        dst.copy_from_slice(bytes);
    }
}

/// The step of a range `[lo, hi]`: `(hi − lo)/65535` rounded up until the
/// top code reaches `hi` as the decoder computes it.
fn step_for(lo: f32, hi: f32) -> f32 {
    if hi <= lo {
        return 0.0;
    }
    let (lo, hi) = (f64::from(lo), f64::from(hi));
    let mut s = ((hi - lo) / 65535.0) as f32;
    // The codes' real span must reach `hi`: then the nearest code is
    // within half a step of every value (the decode's rounding is the
    // bound's second term).
    while lo + f64::from(s) * 65535.0 < hi {
        s = f32::from_bits(s.to_bits() + 1);
    }
    s
}

/// The code whose decoded value is nearest `v`.
fn encode(v: f32, lo: f32, s: f32) -> u16 {
    if s == 0.0 {
        return 0;
    }
    let q = libm::round((f64::from(v) - f64::from(lo)) / f64::from(s)).clamp(0.0, 65535.0) as i32;
    let err = |q: i32| (lo + s * q as f32 - v).abs();
    let mut best = q;
    for c in [q - 1, q + 1] {
        if (0..=65535).contains(&c) && err(c) < err(best) {
            best = c;
        }
    }
    best as u16
}

/// Writes the codes and ranges of quantized track `d`.
fn quantize(d: &TrackDesc<'_>, out: &mut [u8], layout: &Layout, at: &Counts) -> Result<(), Error> {
    let n = d.kind.components();
    let per = per_key(d.interpolation);
    let stored = d.values.len() / n;
    // Rotation keys (not tangents) are normalised before quantizing.
    let value = |s: usize, c: usize| -> f32 {
        let v = d.values.get(s * n + c).copied().unwrap_or(0.0);
        if d.kind == TrackKind::Quat && s % per == per / 2 {
            let key = d.values.get(s * n..s * n + 4).unwrap_or(&[]);
            v / sqrt_f32(key.iter().map(|x| x * x).sum())
        } else {
            v
        }
    };
    // Group 0: key values; group 1: CUBICSPLINE tangents.
    for group in 0..per.min(2) {
        let in_group = |s: usize| (per == 1 || s % 3 == 1) == (group == 0);
        for c in 0..n {
            let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
            for s in (0..stored).filter(|&s| in_group(s)) {
                lo = lo.min(value(s, c));
                hi = hi.max(value(s, c));
            }
            let scale = step_for(lo, hi);
            let bound = quantization_bound(lo, scale);
            let r = layout.ranges.0 + 4 * (at.ranges + 2 * n * group);
            put(out, r + 4 * c, &lo.to_le_bytes());
            put(out, r + 4 * (n + c), &scale.to_le_bytes());
            for s in (0..stored).filter(|&s| in_group(s)) {
                let v = value(s, c);
                let q = encode(v, lo, scale);
                // The bound is proven for the nearest code; checked anyway
                // so that no container leaves here breaking it.
                if (lo + scale * f32::from(q) - v).abs() > bound {
                    return Err(Error::InvalidParameter {
                        what: "a quantized value misses its error bound",
                    });
                }
                put(
                    out,
                    layout.codes.0 + 2 * (at.codes + s * n + c),
                    &q.to_le_bytes(),
                );
            }
        }
    }
    Ok(())
}

/// Scalar twins of the lane samplers: the readable specification.
pub mod reference {
    use super::{Cursor, Error, Quat, TrackKind, TrackSet, TrackValue};

    /// Scalar twin of [`TrackSet::sample_all`]: each track by
    /// [`super::TypedTrack::sample_with`], its components in order.
    ///
    /// # Errors
    /// As [`TrackSet::sample_all`].
    pub fn sample_all(
        set: &TrackSet<'_>,
        t: f32,
        cursors: &mut [Cursor],
        out: &mut [f32],
    ) -> Result<(), Error> {
        set.check_lengths(cursors.len(), out.len())?;
        let mut o = 0;
        for (i, cursor) in cursors.iter_mut().enumerate() {
            let Some(track) = set.track(i) else { break };
            let n = track.kind().components();
            let dst = out.get_mut(o..o + n).unwrap_or(&mut []);
            match track.kind() {
                TrackKind::Float => write(&track, cursor, t, dst, |v: f32| [v]),
                TrackKind::Vec2 => write(&track, cursor, t, dst, |v: [f32; 2]| v),
                TrackKind::Vec3 => write(&track, cursor, t, dst, |v: [f32; 3]| v),
                TrackKind::Vec4 => write(&track, cursor, t, dst, |v: [f32; 4]| v),
                TrackKind::Quat => write(&track, cursor, t, dst, |q: Quat| q.to_array()),
            }
            o += n;
        }
        Ok(())
    }

    fn write<V: TrackValue, const N: usize>(
        track: &super::Track<'_>,
        cursor: &mut Cursor,
        t: f32,
        dst: &mut [f32],
        flat: impl Fn(V) -> [f32; N],
    ) {
        if let Ok(typed) = track.typed::<V>() {
            let v = flat(typed.sample_with(cursor, t));
            for (d, v) in dst.iter_mut().zip(v) {
                *d = v;
            }
        }
    }
}
