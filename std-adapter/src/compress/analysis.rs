//! The clip's analysis: per joint track whether it is default, constant
//! or animated, its clip range and error budget, and per segment its
//! quantization (range, trend, rate, component drops) decoded with the
//! core's own arithmetic (`sinew_core::compressed::codec`).

use sinew_core::clip::RawClip;
use sinew_core::compressed::codec::{
    drop_w_rotation, smallest_three_rotation, smallest_three_split, trend_curve, trend_factors,
    trend_slope, unit_for_extent, ComponentDecode, CURVE_SCALE, MAX_QUANTIZED_BITS, TREND_SCALE,
};
use sinew_core::compressed::{RotationFormat, RAW_BITS};
use sinew_core::soa::get_joint;
use sinew_core::{Error, Quat, Skeleton, Transform, Vec3};
use wide::f32x8;

use super::measure::{lanes_max, lanes_min, local8, norm, norm8, Affine8};
use super::CompressOptions;

/// A joint track the compressor does not store (identity or rest pose).
pub(super) const JOINT_DEFAULT: u8 = 0;
/// A joint track with one value (a constant lane of its block track).
pub(super) const JOINT_CONSTANT: u8 = 1;
/// A joint track stored per frame (an animated lane of its block track).
pub(super) const JOINT_ANIMATED: u8 = 2;

pub(super) fn sub(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// Accurate angle between two rotations (radians), for any sign.
pub(super) fn angle_between(a: Quat, b: Quat) -> f32 {
    let (v, c) = half_angle_sides(a, b);
    2.0 * atan2(v, c)
}

/// `atan2`: the platform C library's by default; under `deterministic`
/// `libm`'s, the same on every target, so that the error bounds (and with
/// them the chosen bit rates and the container) do not depend on it.
fn atan2(y: f32, x: f32) -> f32 {
    #[cfg(feature = "deterministic")]
    {
        libm::atan2f(y, x)
    }
    #[cfg(not(feature = "deterministic"))]
    {
        y.atan2(x)
    }
}

/// The sides `(|v|, |w|)` of `d = a* b`, whose angle `atan2(|v|, |w|)` is
/// half the angle between the rotations `a` and `b`.
pub(super) fn half_angle_sides(a: Quat, b: Quat) -> (f32, f32) {
    let d = a.conjugate() * b;
    ((d.x * d.x + d.y * d.y + d.z * d.z).sqrt(), d.w.abs())
}

/// Whether the angle of sides `(v, c)` is above that of `(bv, bc)` (all
/// `>= 0`, not NaN): `v / c > bv / bc`, compared exactly (products of two
/// `f32` are exact in `f64`), so the widest of many angles takes one
/// `atan2` (which is monotonic) instead of one each. `(0, 0)` is the angle
/// 0, as `atan2(0, 0)`.
pub(super) fn wider((v, c): (f32, f32), (bv, bc): (f32, f32)) -> bool {
    let c = if v == 0.0 && c == 0.0 { 1.0 } else { c };
    let bc = if bv == 0.0 && bc == 0.0 { 1.0 } else { bc };
    f64::from(v) * f64::from(bc) > f64::from(bv) * f64::from(c)
}

// ---------------------------------------------------------------------------
// Tracks
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Translation,
    Rotation,
    Scale,
}

/// One animated track: per-frame components to quantize and its clip range.
pub(super) struct Track {
    pub(super) joint: usize,
    pub(super) kind: Kind,
    /// Raw values (xyz + 0, or the normalized quaternion).
    pub(super) raw: Vec<[f32; 4]>,
    /// Components to quantize (drop-W xyz or the smallest three).
    pub(super) comp: Vec<[f32; 3]>,
    /// Dropped index per frame (smallest three only).
    pub(super) idx: Vec<u32>,
    /// Clip constants per component: min, unit (extent / 255).
    pub(super) range: [f32; 6],
    /// How a rotation track keeps three components: drop-W or
    /// smallest-three, chosen per track in a per-lane clip (drop-W for
    /// translations and scales, where it means nothing).
    pub(super) format: RotationFormat,
}

/// A track's segment ranges (8-bit minimum and extent per component) and
/// trend bytes (slope and curvature per component).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Shape {
    pub(super) ranges: [u8; 6],
    pub(super) slope: [i8; 3],
    pub(super) curve: [i8; 3],
}

/// How many trend steps, in each byte, [`Track::shape`] searches from the
/// narrowest residual's trend for one that rounds out to fewer units
/// (on the CMU set, searching every byte value instead saves another tenth
/// of a percent of size for a quarter more compression time).
pub(super) const TREND_REACH: i16 = 32;

/// The steps from a trend to its neighbours, slope and curvature byte:
/// the slope alone first.
const TREND_STEPS: [(i16, i16); 8] = [
    (-1, 0),
    (1, 0),
    (0, -1),
    (0, 1),
    (-1, 1),
    (1, -1),
    (-1, -1),
    (1, 1),
];

/// A component's trend bytes: slope and curvature.
pub(super) type Trend = (i8, i8);

/// A residual's extremes in fractions of the clip range.
pub(super) type Span = (f32, f32);

/// The whole clip units a segment range `(lo, hi)` (fractions of the clip
/// range) is stored in: its minimum rounded down, its maximum up.
pub(super) fn units((lo, hi): Span) -> f32 {
    -floor(-(hi * 255.0)) - floor(lo * 255.0)
}

/// `x.floor()` without the library call that SSE2 (no `roundps`) makes
/// of it: the unit search rounds two values per trend it visits. Exact
/// for every `f32` (beyond 2^23 every value is whole; non-finite values
/// pass through).
fn floor(x: f32) -> f32 {
    if x.is_nan() || x.abs() >= 8_388_608.0 {
        return x;
    }
    let t = x as i32 as f32;
    if t > x {
        t - 1.0
    } else {
        t
    }
}

/// The least-squares quadratic `a + b·i + c·i²` through `values` at
/// `i = 0, 1, …` (zeros when the system is singular).
pub(super) fn quadratic_fit(values: impl Iterator<Item = f32>) -> [f64; 3] {
    // Normal equations: sums of i^0..i^4 and of v·i^0..v·i^2.
    let (mut p, mut q) = ([0.0f64; 5], [0.0f64; 3]);
    for (i, v) in values.enumerate() {
        let (x, v) = (i as f64, f64::from(v));
        let mut xi = 1.0;
        for (k, pk) in p.iter_mut().enumerate() {
            *pk += xi;
            if k < 3 {
                q[k] += v * xi;
            }
            xi *= x;
        }
    }
    let mut m = [
        [p[0], p[1], p[2], q[0]],
        [p[1], p[2], p[3], q[1]],
        [p[2], p[3], p[4], q[2]],
    ];
    // Gauss–Jordan with partial pivoting.
    for col in 0..3 {
        let piv = (col..3)
            .max_by(|&a, &b| m[a][col].abs().total_cmp(&m[b][col].abs()))
            .unwrap_or(col);
        m.swap(col, piv);
        let d = m[col][col];
        if d.abs() < 1e-12 {
            return [0.0; 3];
        }
        let pivot = m[col];
        for (r, row) in m.iter_mut().enumerate() {
            if r != col {
                let f = row[col] / d;
                for (x, p) in row.iter_mut().zip(pivot).skip(col) {
                    *x -= f * p;
                }
            }
        }
    }
    [m[0][3] / m[0][0], m[1][3] / m[1][1], m[2][3] / m[2][2]]
}

/// One track's encoding in one segment.
#[derive(Clone)]
pub(super) struct SegTrack {
    pub(super) rate: u8,
    pub(super) ranges: [u8; 6],
    /// Per component: the trend slope and curvature bytes (0: none).
    pub(super) trend: [i8; 3],
    pub(super) curve: [i8; 3],
    /// Component drops (bit `c`: component `c` takes one bit less).
    pub(super) drops: u8,
    /// Per frame: codes (and the smallest-three index) or raw f32 bits.
    pub(super) words: Vec<[u32; 4]>,
    /// Per frame: the three decoded components (before the rotation's
    /// rebuild).
    pub(super) parts: Vec<[f32; 3]>,
    /// Per frame: the decoded value exactly as the core decodes it.
    pub(super) decoded: Vec<[f32; 4]>,
    /// Largest local error over the segment's frames.
    pub(super) err: f32,
}

/// One component's quantization in one segment (see [`Track::quantizer`]).
pub(super) struct Quantizer {
    pub(super) dec: ComponentDecode,
    pub(super) max_code: u32,
}

impl Quantizer {
    /// The code of raw value `v` at local frame `li` that decodes closest
    /// to it, and its decoded value (exactly as the core decodes it).
    pub(super) fn code(&self, v: f32, li: f32) -> (u32, f32) {
        let d = &self.dec;
        let max = self.max_code;
        let q = if max == 0 || !(d.step > 0.0 && d.unit > 0.0) {
            0
        } else {
            // The residual in code steps, then the neighbour code that
            // decodes closest.
            let (tl, tl2) = trend_factors(li);
            let u = (v - d.min) / d.unit - d.slope * tl - d.curve * tl2 - d.smin;
            let q = (u / d.step).round().clamp(0.0, max as f32) as u32;
            let best = [q.saturating_sub(1), q, (q + 1).min(max)]
                .into_iter()
                .min_by(|&a, &b| {
                    (d.value(a, li) - v)
                        .abs()
                        .total_cmp(&(d.value(b, li) - v).abs())
                });
            best.unwrap_or(q)
        };
        (q, d.value(q, li))
    }
}

impl Track {
    /// A rotation track's components and dropped indices in `format`
    /// from its normalized rotations `qs` (the clip range is then
    /// [`Track::set_range`]'s).
    pub(super) fn set_format(&mut self, qs: &[Quat], format: RotationFormat) {
        self.format = format;
        self.comp.clear();
        self.idx.clear();
        for &q in qs {
            match format {
                RotationFormat::SmallestThree => {
                    let (i, kept) = smallest_three_split(q);
                    self.idx.push(i);
                    self.comp.push(kept);
                }
                _ => {
                    let q = if q.w < 0.0 { -q } else { q };
                    self.comp.push([q.x, q.y, q.z]);
                }
            }
        }
    }

    /// The clip constants (minimum and unit per component) of its
    /// components.
    ///
    /// # Errors
    /// [`Error::NonFinite`] when the range is not finite.
    pub(super) fn set_range(&mut self) -> Result<(), Error> {
        for c in 0..3 {
            let lo = self.comp.iter().map(|v| v[c]).fold(f32::INFINITY, f32::min);
            let hi = self
                .comp
                .iter()
                .map(|v| v[c])
                .fold(f32::NEG_INFINITY, f32::max);
            self.range[2 * c] = lo;
            self.range[2 * c + 1] = unit_for_extent(lo, (hi - lo).max(0.0));
        }
        if !self.range.iter().all(|v| v.is_finite())
            || !self
                .range
                .chunks_exact(2)
                .all(|p| (p[0] + 255.0 * p[1]).is_finite())
        {
            return Err(Error::NonFinite {
                what: "clip track range",
            });
        }
        Ok(())
    }

    /// The bits its segments of `segment_frames` frames take when each
    /// has the lowest rate whose local error fits `budget` (verbatim when
    /// none does): what picks a rotation track's format in a per-lane clip.
    pub(super) fn estimate_bits(&self, budget: f32, segment_frames: usize) -> u64 {
        let frames = self.comp.len();
        let index = if self.format == RotationFormat::SmallestThree {
            2
        } else {
            0
        };
        let mut bits = 0u64;
        let mut start = 0;
        while start < frames {
            let range = start..(start + segment_frames).min(frames);
            let n = range.len() as u64;
            let shape = self.shape_as(range.clone(), true, 0);
            let fits =
                |r: u8| self.encode_shaped(range.clone(), r, true, Some(shape)).err <= budget;
            // The error falls with the rate: the lowest rate that fits by
            // bisection.
            let per_frame = if fits(MAX_QUANTIZED_BITS) {
                let (mut lo, mut hi) = (0u8, MAX_QUANTIZED_BITS);
                while lo < hi {
                    let mid = (lo + hi) / 2;
                    if fits(mid) {
                        hi = mid;
                    } else {
                        lo = mid + 1;
                    }
                }
                3 * u64::from(lo) + index
            } else {
                128
            };
            bits += n * per_frame;
            start = range.end;
        }
        bits
    }

    /// Encodes `frames` as one segment at `rate`; with `trend`, components
    /// whose segment chord fits a trend byte are stored as residuals from it
    /// when that shrinks their range.
    pub(super) fn encode(&self, frames: std::ops::Range<usize>, rate: u8, trend: bool) -> SegTrack {
        self.encode_shaped(frames, rate, trend, None)
    }

    /// The segment ranges and trends of `frames` (they do not depend on the
    /// bit rate, so a segment search computes them once per track).
    ///
    /// Per component the trend (slope and curvature bytes) is the one that
    /// makes the residual narrowest: the least-squares quadratic, rounded
    /// to the bytes' grid, then a descent over neighbouring bytes (the
    /// residual's width is convex in both); then, near it, the one whose
    /// residual rounds out to the fewest whole clip units
    /// ([`Track::fewest_units`]). It is kept when the residual stays inside
    /// the clip range and takes fewer units than the component's own range.
    pub(super) fn shape(&self, frames: std::ops::Range<usize>, trend: bool) -> Shape {
        self.shape_as(frames, trend, TREND_REACH)
    }

    /// [`Track::shape`], searching `reach` steps around the narrowest trend
    /// for the one of fewest units: [`TREND_REACH`], or 0 (the narrowest
    /// trend alone) for the estimate of a rotation format's bits, where the
    /// search would cost a fifth of the compression time for a choice it
    /// seldom changes.
    fn shape_as(&self, frames: std::ops::Range<usize>, trend: bool, reach: i16) -> Shape {
        let n = frames.len();
        // Per component, the segment's values and local frame indices eight
        // per vector (the last frame repeated as padding, which changes no
        // extreme).
        let chunks = n.div_ceil(8);
        let lanes = |f: &dyn Fn(usize) -> f32| -> Vec<f32x8> {
            (0..chunks)
                .map(|b| f32x8::from(core::array::from_fn(|i| f((8 * b + i).min(n - 1)))))
                .collect()
        };
        let seg = &self.comp[frames.clone()];
        let vals: [Vec<f32x8>; 3] = core::array::from_fn(|c| lanes(&|i| seg[i][c]));
        let idx = lanes(&|i| i as f32);
        let idx2: Vec<f32x8> = idx.iter().map(|i| *i * *i).collect();
        // The range of component `c` (in 0..1 of the clip range) after
        // removing the trend with bytes `d` and `k`: the scalar
        // `v − slope·i − curve·i²` per frame, in lanes.
        let span = |c: usize, d: i8, k: i8| -> (f32, f32) {
            let (min, unit) = (self.range[2 * c], self.range[2 * c + 1]);
            let ext = 255.0 * unit;
            let (slope, curve) = (trend_slope(unit, d), trend_curve(unit, k));
            let (s8, c8) = (f32x8::splat(slope), f32x8::splat(curve));
            let (mut lo8, mut hi8) = (f32x8::splat(f32::INFINITY), f32x8::splat(f32::NEG_INFINITY));
            for ((v, i), i2) in vals[c].iter().zip(&idx).zip(&idx2) {
                let r = *v - s8 * *i - c8 * *i2;
                lo8 = lo8.min(r);
                hi8 = hi8.max(r);
            }
            let (lo, hi) = (lanes_min(lo8), lanes_max(hi8));
            // `(r − min) / ext` is monotonic in `r`: map the extremes only.
            let t = |r: f32| if ext > 0.0 { (r - min) / ext } else { 0.0 };
            (t(lo), t(hi))
        };
        let mut shape = Shape::default();
        for c in 0..3 {
            let (mut lo, mut hi) = span(c, 0, 0);
            let unit = self.range[2 * c + 1];
            if trend && n >= 3 && unit > 0.0 {
                let width = |(d, k): (i8, i8)| {
                    let (l, h) = span(c, d, k);
                    h - l
                };
                let [_, s1, s2] = quadratic_fit(self.comp[frames.clone()].iter().map(|v| v[c]));
                let byte = |x: f64, scale: f32| -> i8 {
                    (x / f64::from(unit * scale)).round().clamp(-127.0, 127.0) as i8
                };
                let mut best = if n >= 4 {
                    (byte(s1, TREND_SCALE), byte(s2, CURVE_SCALE))
                } else {
                    (byte(s1 + s2 * (n - 1) as f64, TREND_SCALE), 0)
                };
                let mut best_w = width(best);
                // Descend to the narrowest neighbour until none is narrower.
                for _ in 0..16 {
                    let (d, k) = best;
                    let mut moved = false;
                    for (dd, dk) in TREND_STEPS {
                        let cand = (
                            (i16::from(d) + dd).clamp(-127, 127) as i8,
                            if n >= 4 {
                                (i16::from(k) + dk).clamp(-127, 127) as i8
                            } else {
                                0
                            },
                        );
                        let w = width(cand);
                        if w < best_w {
                            (best, best_w, moved) = (cand, w, true);
                        }
                    }
                    if !moved {
                        break;
                    }
                }
                let plain = units((lo, hi));
                if let Some((cand, (tl, th))) =
                    Self::fewest_units(best, plain, n >= 4, reach, |d, k| span(c, d, k))
                {
                    (lo, hi) = (tl, th);
                    (shape.slope[c], shape.curve[c]) = cand;
                }
            }
            let smin = (lo * 255.0).floor().clamp(0.0, 255.0) as u8;
            let smax = ((hi * 255.0).ceil().clamp(0.0, 255.0) as u8).max(smin);
            shape.ranges[2 * c] = smin;
            shape.ranges[2 * c + 1] = smax - smin;
        }
        shape
    }

    /// The trend bytes near `best` (those of the narrowest residual) whose
    /// residual the stored range covers in the fewest whole clip units,
    /// the narrowest of those, with its span; `None` unless that is fewer
    /// units than `plain` (the component's units without a trend).
    ///
    /// The stored range is whole units, so aligning a residual to them
    /// widens it by up to two units, which on a component a few units wide
    /// costs as much as a bit of its rate. A trend's units are at least its
    /// width, so the search floods out from `best` only through trends
    /// narrower than the fewest units found so far (the width is convex in
    /// both bytes), at most `reach` steps in each byte (up to
    /// [`TREND_REACH`]; with 0, `best` alone).
    pub(super) fn fewest_units(
        best: Trend,
        plain: f32,
        curved: bool,
        reach: i16,
        span: impl Fn(i8, i8) -> Span,
    ) -> Option<(Trend, Span)> {
        const SIDE: usize = 2 * TREND_REACH as usize + 1;
        let reach = reach.clamp(0, TREND_REACH);
        let start = (i16::from(best.0), i16::from(best.1));
        // Visited trends, one bit per step from `best`.
        let mut seen = [0u64; (SIDE * SIDE).div_ceil(64)];
        let mut visit = |(d, k): (i16, i16)| -> bool {
            let (dd, dk) = (d - start.0, k - start.1);
            let fits = |b: i16| (-127..=127).contains(&b);
            if dd.abs() > reach || dk.abs() > reach || !fits(d) || !fits(k) {
                return false;
            }
            let at = (dd + TREND_REACH) as usize * SIDE + (dk + TREND_REACH) as usize;
            let (word, bit) = (at / 64, 1u64 << (at % 64));
            let fresh = seen[word] & bit == 0;
            seen[word] |= bit;
            fresh
        };
        // Without curvature, slope steps only (the first two).
        let steps = &TREND_STEPS[..if curved { 8 } else { 2 }];
        let mut limit = plain;
        let mut pick: Option<(Trend, Span, f32)> = None;
        visit(start);
        let mut queue = vec![start];
        while let Some((d, k)) = queue.pop() {
            let cand = (d as i8, k as i8);
            let sp = span(cand.0, cand.1);
            let width = (sp.1 - sp.0) * 255.0;
            if width >= limit {
                continue;
            }
            let stored = units(sp);
            if cand != (0, 0) && sp.0 >= 0.0 && sp.1 <= 1.0 {
                let better = match pick {
                    _ if stored < limit => true,
                    Some((_, _, w)) => stored == limit && width < w,
                    None => false,
                };
                if better {
                    limit = stored;
                    pick = Some((cand, sp, width));
                }
            }
            for &(sd, sk) in steps {
                let next = (d + sd, k + sk);
                if visit(next) {
                    queue.push(next);
                }
            }
        }
        pick.map(|(cand, sp, _)| (cand, sp))
    }

    /// [`Track::encode`] with the segment shape given (or computed).
    pub(super) fn encode_shaped(
        &self,
        frames: std::ops::Range<usize>,
        rate: u8,
        trend: bool,
        shape: Option<Shape>,
    ) -> SegTrack {
        let n = frames.len();
        if rate == RAW_BITS {
            let words = self.raw[frames.clone()]
                .iter()
                .map(|v| v.map(f32::to_bits))
                .collect();
            return SegTrack {
                rate,
                drops: 0,
                ranges: [0; 6],
                trend: [0; 3],
                curve: [0; 3],
                words,
                parts: Vec::new(),
                decoded: self.raw[frames].to_vec(),
                err: 0.0,
            };
        }
        let Shape {
            ranges,
            slope: trends,
            curve: curves,
        } = match shape {
            Some(sh) => sh,
            None => self.shape(frames.clone(), trend),
        };
        let first = frames.start;
        let mut t = SegTrack {
            rate,
            drops: 0,
            ranges,
            trend: trends,
            curve: curves,
            words: Vec::with_capacity(n),
            parts: Vec::with_capacity(n),
            decoded: Vec::with_capacity(n),
            err: 0.0,
        };
        let quantizers: [Quantizer; 3] = core::array::from_fn(|c| self.quantizer(&t, c, rate));
        for f in frames {
            let mut w = [0u32; 4];
            let mut d = [0.0f32; 3];
            for (c, q) in quantizers.iter().enumerate() {
                (w[c], d[c]) = q.code(self.comp[f][c], (f - first) as f32);
            }
            t.words.push(w);
            t.parts.push(d);
        }
        self.rebuild(&mut t, first, true);
        t
    }

    /// The track with component `c` one bit coarser than in `base` (a
    /// quantized encoding of the same frames with `c` not yet dropped).
    pub(super) fn with_drop(&self, base: &SegTrack, first: usize, c: usize) -> SegTrack {
        let mut t = SegTrack {
            drops: base.drops | 1 << c,
            words: base.words.clone(),
            parts: base.parts.clone(),
            decoded: Vec::with_capacity(base.decoded.len()),
            err: 0.0,
            ..*base
        };
        let rate = base.rate - 1;
        let q = self.quantizer(base, c, rate);
        for (i, (w, d)) in t.words.iter_mut().zip(t.parts.iter_mut()).enumerate() {
            (w[c], d[c]) = q.code(self.comp[first + i][c], i as f32);
        }
        // The refinement measures the object-space error itself.
        self.rebuild(&mut t, first, false);
        t
    }

    /// Component `c`'s quantizer at `rate` bits in the segment of `t`'s
    /// ranges and trend.
    pub(super) fn quantizer(&self, t: &SegTrack, c: usize, rate: u8) -> Quantizer {
        Quantizer {
            dec: ComponentDecode::new(
                self.range[2 * c],
                self.range[2 * c + 1],
                t.ranges[2 * c],
                t.ranges[2 * c + 1],
                rate,
                t.trend[c],
                t.curve[c],
            ),
            max_code: if rate == 0 { 0 } else { (1u32 << rate) - 1 },
        }
    }

    /// Fills `t.decoded` (the values exactly as the core decodes them) and,
    /// with `measure`, `t.err` (the largest local error; infinite
    /// otherwise) from `t.parts`, for the segment starting at frame `first`.
    pub(super) fn rebuild(&self, t: &mut SegTrack, first: usize, measure: bool) {
        t.decoded.clear();
        let mut err = 0.0f32;
        // The rotation error's widest angle, by its sides.
        let mut widest: Option<(f32, f32)> = None;
        for (i, (d, w)) in t.parts.iter().zip(t.words.iter_mut()).enumerate() {
            let f = first + i;
            let raw = self.raw[f];
            let (dec, e) = match self.kind {
                Kind::Rotation => {
                    let q = match self.format {
                        RotationFormat::SmallestThree => {
                            w[3] = self.idx[f];
                            smallest_three_rotation(self.idx[f], d[0], d[1], d[2])
                        }
                        _ => drop_w_rotation(d[0], d[1], d[2]),
                    };
                    let raw = Quat::new(raw[0], raw[1], raw[2], raw[3]);
                    let e = if !measure {
                        f32::INFINITY
                    } else {
                        let sides = half_angle_sides(raw, q.normalize());
                        if sides.0.is_nan() || sides.1.is_nan() {
                            f32::NAN
                        } else {
                            if widest.is_none_or(|b| wider(sides, b)) {
                                widest = Some(sides);
                            }
                            0.0
                        }
                    };
                    (q.to_array(), e)
                }
                _ => (
                    [d[0], d[1], d[2], 0.0],
                    norm(sub([d[0], d[1], d[2]], [raw[0], raw[1], raw[2]])),
                ),
            };
            err = err.max(if e.is_nan() { f32::INFINITY } else { e });
            t.decoded.push(dec);
        }
        if let Some((v, c)) = widest {
            err = err.max(2.0 * atan2(v, c));
        }
        t.err = err;
    }
}

/// The clip as per-joint scalar tracks, classified.
pub(super) struct Analysis {
    pub(super) joints: usize,
    pub(super) frames: usize,
    pub(super) parents: Vec<Option<usize>>,
    /// Per joint: the kind bytes.
    pub(super) kinds: Vec<[u8; 3]>,
    /// Per joint: the value used for non-animated tracks (default or constant).
    pub(super) fixed: Vec<Transform>,
    /// Raw local transforms, `[frame * joints + joint]`, rotations normalized.
    pub(super) raw: Vec<Transform>,
    pub(super) tracks: Vec<Track>,
    /// Largest distance of a virtual vertex from its root joint (for f32
    /// noise).
    pub(super) extent: f32,
    /// Local error budget of each animated track at multiplier 1.
    pub(super) budget: Vec<f32>,
}

impl Analysis {
    /// [`super::CompressReport::root_resolution`]: half the f32 spacing at
    /// the largest root translation coordinate.
    pub(super) fn root_resolution(&self) -> f32 {
        let n = self.joints.max(1);
        let largest = self
            .raw
            .iter()
            .enumerate()
            .filter(|(i, _)| self.parents.get(i % n).is_some_and(Option::is_none))
            .flat_map(|(_, t)| [t.translation.x, t.translation.y, t.translation.z])
            .map(f32::abs)
            .filter(|v| v.is_finite())
            .fold(0.0f32, f32::max);
        (f32::from_bits(largest.to_bits() + 1) - largest) * 0.5
    }
}

pub(super) fn analyse(
    skeleton: &Skeleton<'_>,
    clip: &RawClip<'_>,
    opts: &CompressOptions,
) -> Result<Analysis, Error> {
    let n = skeleton.joint_count();
    let frames = clip.frame_count();
    let parents: Vec<Option<usize>> = (0..n).map(|j| skeleton.parent(j)).collect();
    let mut raw = Vec::with_capacity(n * frames);
    for f in 0..frames {
        let keys = clip.frame(f).ok_or(Error::Corrupt { what: "clip frame" })?;
        for j in 0..n {
            // Components below `TINY` are noise whose products are
            // subnormal (slow to decode on x86): they compress as zero.
            let t = get_joint(keys, j)
                .ok_or(Error::Corrupt { what: "clip frame" })?
                .flush_tiny();
            // Rotations stay as stored (verbatim segments then decode to
            // exactly the raw keys); only their normalized copies are compared.
            if !t.rotation.normalize().is_finite() {
                return Err(Error::NonFinite {
                    what: "clip rotation (zero length)",
                });
            }
            raw.push(t);
        }
    }
    let rest = skeleton.rest_pose();
    let mut kinds = Vec::with_capacity(n);
    let mut fixed = Vec::with_capacity(n);
    let mut tracks = Vec::new();
    // The normalized rotations of each rotation track, in track order.
    let mut rotations: Vec<Vec<Quat>> = Vec::new();
    for j in 0..n {
        let def = if opts.rest_pose_stripping {
            let mut d = get_joint(rest, j).unwrap_or(Transform::IDENTITY);
            d.rotation = d.rotation.normalize();
            d
        } else {
            Transform::IDENTITY
        };
        let col = |f: usize| {
            let mut t = raw[f * n + j];
            t.rotation = t.rotation.normalize();
            t
        };
        let first = col(0);
        let same_q = |a: Quat, b: Quat| a == b || a == -b;
        let all = |p: &dyn Fn(&Transform) -> bool| (0..frames).all(|f| p(&col(f)));
        let mut k = [JOINT_ANIMATED; 3];
        let mut fx = first;
        // Translation.
        if all(&|t| t.translation == def.translation) {
            k[0] = JOINT_DEFAULT;
            fx.translation = def.translation;
        } else if all(&|t| t.translation == first.translation) {
            k[0] = JOINT_CONSTANT;
        }
        if all(&|t| same_q(t.rotation, def.rotation)) {
            k[1] = JOINT_DEFAULT;
            fx.rotation = def.rotation;
        } else if all(&|t| same_q(t.rotation, first.rotation)) {
            k[1] = JOINT_CONSTANT;
        }
        if all(&|t| t.scale == def.scale) {
            k[2] = JOINT_DEFAULT;
            fx.scale = def.scale;
        } else if all(&|t| t.scale == first.scale) {
            k[2] = JOINT_CONSTANT;
        }
        for (i, kind) in [Kind::Translation, Kind::Rotation, Kind::Scale]
            .into_iter()
            .enumerate()
        {
            if k[i] != JOINT_ANIMATED {
                continue;
            }
            let mut tr = Track {
                joint: j,
                kind,
                raw: Vec::with_capacity(frames),
                comp: Vec::with_capacity(frames),
                idx: Vec::new(),
                range: [0.0; 6],
                format: RotationFormat::DropW,
            };
            let mut qs = Vec::new();
            for f in 0..frames {
                let t = col(f);
                match kind {
                    Kind::Translation | Kind::Scale => {
                        let v = if kind == Kind::Scale {
                            t.scale
                        } else {
                            t.translation
                        };
                        tr.raw.push([v.x, v.y, v.z, 0.0]);
                        tr.comp.push([v.x, v.y, v.z]);
                    }
                    Kind::Rotation => {
                        let q = t.rotation;
                        let stored = raw[f * n + j].rotation;
                        let len2 = stored.dot(stored);
                        // Verbatim rotations must pass the container's length check.
                        let stored = if (0.5..=2.0).contains(&len2) {
                            stored
                        } else {
                            q
                        };
                        tr.raw.push(stored.to_array());
                        qs.push(q);
                    }
                }
            }
            if kind == Kind::Rotation {
                // A per-lane clip starts drop-W; the choice comes once the
                // budgets are known.
                let format = match opts.rotation {
                    RotationFormat::SmallestThree => RotationFormat::SmallestThree,
                    _ => RotationFormat::DropW,
                };
                tr.set_format(&qs, format);
                rotations.push(qs);
            }
            tr.set_range()?;
            tracks.push(tr);
        }
        kinds.push(k);
        fixed.push(fx);
    }
    // Analytic budgets from the raw hierarchy: maxima over the frames, eight
    // frames per lane group (the scalar formulas lane by lane; the padding
    // lanes repeat the last frame), then over the lanes.
    let mut smin = vec![f32::INFINITY; n];
    for (i, t) in raw.iter().enumerate() {
        let s = t.scale;
        smin[i % n] = smin[i % n].min(s.x.abs().min(s.y.abs()).min(s.z.abs()));
    }
    let shell = f32x8::splat(opts.shell);
    // The figure's size about its root, not its distance from the origin:
    // the error measurements subtract the root's translation (see
    // `measure::Origins`), so f32 noise scales with the figure alone.
    let root: Vec<usize> = {
        let mut root = vec![0; n];
        for j in 0..n {
            root[j] = parents[j].map_or(j, |p| root[p]);
        }
        root
    };
    let mut extent = shell;
    let mut d = vec![shell; n];
    let mut sigma_parent = vec![f32x8::ONE; n];
    let mut models = vec![Affine8::IDENTITY; n];
    for b in 0..frames.div_ceil(8) {
        for j in 0..n {
            // Frames only: the whole clip as one segment, `b` below its
            // frame blocks, so no lane is a mid-frame.
            let local = local8(|f| &raw[f * n + j], frames, b, (frames - 8 * b).min(8));
            models[j] = match parents[j] {
                Some(p) => models[p].mul(&local),
                None => local,
            };
        }
        for k in 0..n {
            let at = &models[k].c[3];
            let reach = shell * models[k].max_col_norm();
            let from_root: [f32x8; 3] = core::array::from_fn(|r| at[r] - models[root[k]].c[3][r]);
            extent = extent.max(norm8(&from_root) + reach);
            let mut a = Some(k);
            while let Some(p) = a {
                let dist = norm8(&core::array::from_fn(|r| at[r] - models[p].c[3][r])) + reach;
                d[p] = d[p].max(dist);
                a = parents[p];
            }
            if let Some(p) = parents[k] {
                sigma_parent[k] = sigma_parent[k].max(models[p].max_col_norm());
            }
        }
    }
    let extent = lanes_max(extent);
    let d: Vec<f32> = d.into_iter().map(lanes_max).collect();
    let sigma_parent: Vec<f32> = sigma_parent.into_iter().map(lanes_max).collect();
    // Chains share the bound among their animated tracks. Quiet tracks
    // (whose error stays under 5% of their first share even at 0 bits over
    // the whole clip) take that small share; the rest split 95% of the bound.
    let share = |counts: &[usize], frac: f32| -> Vec<f32> {
        let mut up = vec![0usize; n];
        for j in 0..n {
            up[j] = counts[j] + parents[j].map_or(0, |p| up[p]);
        }
        let mut down = counts.to_vec();
        for j in (0..n).rev() {
            if let Some(p) = parents[j] {
                down[p] = down[p].max(counts[p] + down[j]);
            }
        }
        (0..n)
            .map(|j| opts.error * frac / (up[j] + down[j] - counts[j]).max(1) as f32)
            .collect()
    };
    let local = |t: &Track, e: f32| match t.kind {
        Kind::Rotation => e / d[t.joint],
        Kind::Translation => e / sigma_parent[t.joint].max(1e-6),
        Kind::Scale => e * smin[t.joint].max(1e-6) / (3f32.sqrt() * d[t.joint]),
    };
    let mut anim = vec![0usize; n];
    for t in &tracks {
        anim[t.joint] += 1;
    }
    let first = share(&anim, 1.0);
    let b0: Vec<f32> = tracks.iter().map(|t| local(t, first[t.joint])).collect();
    if opts.rotation == RotationFormat::PerLane {
        // Each rotation track takes the format whose segments need fewer
        // bits under its first budget.
        let rots = tracks
            .iter_mut()
            .zip(&b0)
            .filter(|(t, _)| t.kind == Kind::Rotation);
        for ((t, &b), qs) in rots.zip(&rotations) {
            // A component error e moves a drop-W rotation by up to e / |w|
            // (through the rebuilt w), a smallest-three one by up to e √2:
            // while |w| stays above 1/√2 drop-W is never worse and saves
            // the index bits, so only the other tracks are measured.
            if qs
                .iter()
                .all(|q| q.w.abs() >= core::f32::consts::FRAC_1_SQRT_2)
            {
                continue;
            }
            let drop_w = t.estimate_bits(b, opts.segment_frames);
            let mut s3 = Track {
                comp: Vec::with_capacity(frames),
                idx: Vec::with_capacity(frames),
                raw: Vec::new(),
                ..*t
            };
            s3.raw = std::mem::take(&mut t.raw);
            s3.set_format(qs, RotationFormat::SmallestThree);
            s3.set_range()?;
            if s3.estimate_bits(b, opts.segment_frames) < drop_w {
                *t = s3;
            } else {
                t.raw = s3.raw;
            }
        }
    }
    drop(rotations);
    let quiet: Vec<bool> = tracks
        .iter()
        .zip(&b0)
        .map(|(t, &b)| t.encode(0..frames, 0, false).err <= 0.05 * b)
        .collect();
    // Quiet tracks whose 0-bit value fits their share at every frame become
    // constants: no per-segment rate and ranges at all.
    let mut keep = vec![true; tracks.len()];
    for (k, t) in tracks.iter().enumerate() {
        if !quiet[k] {
            continue;
        }
        let v = t.encode(0..1, 0, false).decoded[0];
        let fits = t.raw.iter().all(|r| {
            let e = match t.kind {
                Kind::Rotation => angle_between(
                    Quat::new(r[0], r[1], r[2], r[3]),
                    Quat::new(v[0], v[1], v[2], v[3]).normalize(),
                ),
                _ => norm(sub([v[0], v[1], v[2]], [r[0], r[1], r[2]])),
            };
            e <= 0.05 * b0[k]
        });
        if !fits {
            continue;
        }
        let f = &mut fixed[t.joint];
        let slot = match t.kind {
            Kind::Translation => {
                f.translation = Vec3::new(v[0], v[1], v[2]);
                0
            }
            Kind::Rotation => {
                f.rotation = Quat::new(v[0], v[1], v[2], v[3]).normalize();
                1
            }
            Kind::Scale => {
                f.scale = Vec3::new(v[0], v[1], v[2]);
                2
            }
        };
        kinds[t.joint][slot] = JOINT_CONSTANT;
        keep[k] = false;
    }
    let mut loud = vec![0usize; n];
    for (t, &q) in tracks.iter().zip(&quiet) {
        if !q {
            loud[t.joint] += 1;
        }
    }
    let second = share(&loud, 0.95);
    let budget = tracks
        .iter()
        .zip(&quiet)
        .zip(&b0)
        .map(|((t, &q), &b)| {
            if q {
                0.05 * b
            } else {
                local(t, second[t.joint])
            }
        })
        .zip(&keep)
        .filter_map(|(b, &k)| k.then_some(b))
        .collect();
    let tracks: Vec<Track> = tracks
        .into_iter()
        .zip(&keep)
        .filter_map(|(t, &k)| k.then_some(t))
        .collect();
    Ok(Analysis {
        joints: n,
        frames,
        parents,
        kinds,
        fixed,
        raw,
        tracks,
        extent,
        budget,
    })
}
