//! The clip compressor, the independent error measurement, and `sinew compress`.
//!
//! [`compress`] turns a raw uniform clip into a `sinew_core::compressed`
//! container whose object-space error stays under a bound: virtual vertices
//! at a shell distance around every joint, transformed through the whole
//! hierarchy, never move more than `error` from where the raw clip puts them,
//! at every frame and at every mid-frame.
//!
//! How the bound is guaranteed:
//! 1. Tracks that are exactly default (identity, or the rest pose with
//!    bind-pose stripping) or exactly constant are not stored per frame.
//! 2. An analytic budget per joint: along any root-to-leaf chain the
//!    animated tracks share the bound equally; a rotation error θ at joint
//!    `j` moves a vertex at distance `d ≤ D_j` by at most `2 sin(θ/2) d ≤ θ D_j`,
//!    a translation error `e` moves its subtree by at most `e σ` (σ the
//!    parent's largest column norm), a scale error `e` by at most `√3 e D_j / s_min`.
//!    Summing along a chain keeps the first-order error under the bound.
//! 3. Per segment the budgets are scaled up by the largest multiplier whose
//!    *measured* error (this compressor's own scalar FK over the segment's
//!    frames and mid-frames, decoded with the core's own dequantizer) stays
//!    under the bound; each track takes the lowest bit rate whose local error
//!    fits its scaled budget, or verbatim `f32` when no rate does.
//! 4. Then a greedy descent, leaves first: each track's rate goes down one
//!    bit at a time while the measured error of every joint in its subtree
//!    stays under the bound (the rest of the skeleton does not move, so each
//!    trial re-runs FK over that subtree only).
//! 5. The finished container is sampled through `CompressedClip::sample` at
//!    every frame and mid-frame and checked against the bound; segments that
//!    fail are searched again with a tenth off their target, then with half
//!    of it, and after five misses stored verbatim (exact, so error 0 at
//!    their frames). A bound below what `f32` resolves at the scene's size
//!    (the check's rounding allowance, 16 ε × the scene's extent, is larger)
//!    stores every segment verbatim at once; [`CompressReport::raw_segments`]
//!    counts verbatim segments and `sinew compress` names them.
//!
//! [`measure_error`] is the independent check: separate code that samples
//! both clips through their public samplers, runs the core's SIMD FK and
//! transforms ±shell points along each joint's three axes.

use std::path::{Path, PathBuf};
use std::time::Instant;

use sinew_core::clip::{RawClip, TimeMode};
use sinew_core::compressed::{
    self, component_rates, drop_w_rotation, smallest_three_rotation, smallest_three_split,
    trend_curve, trend_factors, trend_slope, unit_for_extent, ComponentDecode, CompressedClip,
    CompressedParts, Defaults, RotationFormat, KIND_DEFAULT, KIND_STORED, LANE_META_BYTES,
    MAX_QUANTIZED_BITS, RATE_DROP_SHIFT, RAW_BITS,
};
use sinew_core::fk::{local_to_model, FkJob};
use sinew_core::soa::get_joint;
use sinew_core::{Error, Mat4, Quat, Skeleton, SoaTransform, Transform, Vec3};
use wide::f32x8;

use crate::assets::AlignedBytes;

/// A joint track the compressor does not store (identity or rest pose).
const JOINT_DEFAULT: u8 = 0;
/// A joint track with one value (a constant lane of its block track).
const JOINT_CONSTANT: u8 = 1;
/// A joint track stored per frame (an animated lane of its block track).
const JOINT_ANIMATED: u8 = 2;

/// Default segment length in frames.
pub const DEFAULT_SEGMENT_FRAMES: usize = 16;

/// Compression settings; lengths are in the clip's units.
#[derive(Clone, Copy, Debug)]
pub struct CompressOptions {
    /// Largest allowed object-space error of a virtual vertex (clip units).
    pub error: f32,
    /// Distance of the virtual vertices from each joint (clip units).
    pub shell: f32,
    /// Frames per segment (1..=65536).
    pub segment_frames: usize,
    /// Rotation format.
    pub rotation: RotationFormat,
    /// Strip tracks equal to the skeleton's rest pose (else only identity ones).
    pub rest_pose_stripping: bool,
}

impl Default for CompressOptions {
    /// 0.01 cm error and a 3 cm shell for a clip in metres.
    fn default() -> Self {
        CompressOptions {
            error: 0.0001,
            shell: 0.03,
            segment_frames: DEFAULT_SEGMENT_FRAMES,
            rotation: RotationFormat::default(),
            rest_pose_stripping: true,
        }
    }
}

/// A compressed clip container that owns its (aligned) bytes.
#[derive(Clone)]
pub struct OwnedCompressedClip {
    bytes: AlignedBytes,
}

impl OwnedCompressedClip {
    /// Copies and validates container bytes.
    ///
    /// # Errors
    /// As `CompressedClip::from_bytes`.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let bytes = AlignedBytes::copy_from(bytes);
        CompressedClip::from_bytes(bytes.as_slice())?;
        Ok(OwnedCompressedClip { bytes })
    }

    /// The validated view (validation is repeated: take it once, not per frame).
    #[must_use]
    pub fn view(&self) -> CompressedClip<'_> {
        match CompressedClip::from_bytes(self.bytes.as_slice()) {
            Ok(c) => c,
            Err(e) => unreachable!("owned compressed bytes were validated at construction: {e}"),
        }
    }

    /// The container bytes.
    #[must_use]
    pub fn bytes(&self) -> &[u8] {
        self.bytes.as_slice()
    }
}

/// What the compressor found.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CompressReport {
    /// The compressor's own measured max error over frames and mid-frames.
    pub max_error: f32,
    /// Verification passes (1 when the first container met the bound).
    pub passes: usize,
    /// Segments stored verbatim because no quantization met the bound.
    pub raw_segments: usize,
}

/// Error statistics over every virtual vertex of every sample.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ErrorStats {
    /// Largest error.
    pub max: f32,
    /// Mean error.
    pub mean: f32,
    /// 99th percentile.
    pub p99: f32,
    /// Number of vertex errors measured.
    pub count: usize,
}

// ---------------------------------------------------------------------------
// A small affine matrix for the compressor's own FK (independent of the core's).
// ---------------------------------------------------------------------------

/// The scalar affine transform: the reference that [`Affine8`]'s lanes are
/// tested against.
#[cfg(test)]
#[derive(Clone, Copy, Debug)]
struct Affine {
    /// Columns x, y, z (linear part) and translation.
    c: [[f32; 3]; 4],
}

#[cfg(test)]
impl Affine {
    fn from_trs(t: Vec3, q: Quat, s: Vec3) -> Affine {
        let q = q.normalize();
        let (x, y, z, w) = (q.x, q.y, q.z, q.w);
        let c0 = [
            1.0 - 2.0 * (y * y + z * z),
            2.0 * (x * y + w * z),
            2.0 * (x * z - w * y),
        ];
        let c1 = [
            2.0 * (x * y - w * z),
            1.0 - 2.0 * (x * x + z * z),
            2.0 * (y * z + w * x),
        ];
        let c2 = [
            2.0 * (x * z + w * y),
            2.0 * (y * z - w * x),
            1.0 - 2.0 * (x * x + y * y),
        ];
        Affine {
            c: [
                c0.map(|v| v * s.x),
                c1.map(|v| v * s.y),
                c2.map(|v| v * s.z),
                [t.x, t.y, t.z],
            ],
        }
    }

    fn apply_vec(&self, v: [f32; 3]) -> [f32; 3] {
        let mut o = [0.0; 3];
        for (r, x) in o.iter_mut().enumerate() {
            *x = self.c[0][r] * v[0] + self.c[1][r] * v[1] + self.c[2][r] * v[2];
        }
        o
    }

    fn mul(&self, b: &Affine) -> Affine {
        let t = self.apply_vec(b.c[3]);
        Affine {
            c: [
                self.apply_vec(b.c[0]),
                self.apply_vec(b.c[1]),
                self.apply_vec(b.c[2]),
                [
                    t[0] + self.c[3][0],
                    t[1] + self.c[3][1],
                    t[2] + self.c[3][2],
                ],
            ],
        }
    }

    fn max_col_norm(&self) -> f32 {
        (0..3).map(|i| norm(self.c[i])).fold(0.0, f32::max)
    }
}

/// Eight samples of one joint's affine transform, sample `i` in lane `i`:
/// the segment search runs its FK and error checks eight samples at once.
#[derive(Clone, Copy)]
struct Affine8 {
    c: [[f32x8; 3]; 4],
}

/// The smallest lane (NaN lanes ignored, as `f32::min`).
fn lanes_min(v: f32x8) -> f32 {
    v.to_array().into_iter().fold(f32::INFINITY, f32::min)
}

/// The largest lane (NaN lanes ignored, as `f32::max`).
fn lanes_max(v: f32x8) -> f32 {
    v.to_array().into_iter().fold(f32::NEG_INFINITY, f32::max)
}

/// `|v|` per lane, as the scalar `norm`.
fn norm8(v: &[f32x8; 3]) -> f32x8 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

impl Affine8 {
    /// The largest length of the three linear columns, per lane (as the
    /// scalar fold from 0).
    fn max_col_norm(&self) -> f32x8 {
        f32x8::ZERO
            .max(norm8(&self.c[0]))
            .max(norm8(&self.c[1]))
            .max(norm8(&self.c[2]))
    }

    const IDENTITY: Affine8 = Affine8 {
        c: [
            [f32x8::ONE, f32x8::ZERO, f32x8::ZERO],
            [f32x8::ZERO, f32x8::ONE, f32x8::ZERO],
            [f32x8::ZERO, f32x8::ZERO, f32x8::ONE],
            [f32x8::ZERO; 3],
        ],
    };

    /// [`Affine::from_trs`] of each lane, with the same operations in the
    /// same order (so every lane has the scalar function's bits).
    fn from_trs(trs: &Trs8) -> Affine8 {
        let [x, y, z, w] = normalize8(&trs.q);
        let (two, one) = (f32x8::splat(2.0), f32x8::ONE);
        let c0 = [
            one - two * (y * y + z * z),
            two * (x * y + w * z),
            two * (x * z - w * y),
        ];
        let c1 = [
            two * (x * y - w * z),
            one - two * (x * x + z * z),
            two * (y * z + w * x),
        ];
        let c2 = [
            two * (x * z + w * y),
            two * (y * z - w * x),
            one - two * (x * x + y * y),
        ];
        let s = &trs.s;
        Affine8 {
            c: [
                c0.map(|v| v * s[0]),
                c1.map(|v| v * s[1]),
                c2.map(|v| v * s[2]),
                trs.t,
            ],
        }
    }

    fn apply_vec(&self, v: &[f32x8; 3]) -> [f32x8; 3] {
        core::array::from_fn(|r| self.c[0][r] * v[0] + self.c[1][r] * v[1] + self.c[2][r] * v[2])
    }

    fn mul(&self, b: &Affine8) -> Affine8 {
        let t = self.apply_vec(&b.c[3]);
        Affine8 {
            c: [
                self.apply_vec(&b.c[0]),
                self.apply_vec(&b.c[1]),
                self.apply_vec(&b.c[2]),
                core::array::from_fn(|r| t[r] + self.c[3][r]),
            ],
        }
    }
}

/// The square of the largest error of the 6 shell vertices `±shell` along
/// the columns, for eight samples at once: `|dt ± shell·dc|` is largest for
/// the sign that matches `dt · dc`.
fn shell_error_sq8(raw: &Affine8, dec: &Affine8, shell: f32) -> f32x8 {
    let sub =
        |a: &[f32x8; 3], b: &[f32x8; 3]| -> [f32x8; 3] { core::array::from_fn(|r| a[r] - b[r]) };
    let dot = |a: &[f32x8; 3], b: &[f32x8; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    let dt = sub(&dec.c[3], &raw.c[3]);
    let t2 = dot(&dt, &dt);
    let (s2, s) = (f32x8::splat(shell * shell), f32x8::splat(2.0 * shell));
    let mut worst = t2;
    for i in 0..3 {
        let dc = sub(&dec.c[i], &raw.c[i]);
        worst = worst.max(t2 + s2 * dot(&dc, &dc) + s * dot(&dt, &dc).abs());
    }
    worst
}

/// Whether every sample of `dec` is within the bound (squared: `bound2`) of
/// `raw` (NaN is not).
fn fits8(raw: &Affine8, dec: &Affine8, shell: f32, bound2: f32) -> bool {
    shell_error_sq8(raw, dec, shell)
        .simd_le(f32x8::splat(bound2))
        .all()
}

/// Blocks of eight for `samples` samples (at least one).
fn sample_blocks(samples: usize) -> usize {
    samples.div_ceil(8).max(1)
}

/// Per joint and block of eight samples, `[joint][block]`: the models (FK)
/// of the samples of a segment of `len` frames, from the joints' frames
/// `frame(j, f)` ([`local8`]); the locals too when `locals` is given. One
/// pass: parents come before their children.
fn pose8<'t>(
    parents: &[Option<usize>],
    len: usize,
    frame: impl Fn(usize, usize) -> &'t Transform,
    mut locals: Option<&mut Vec<Vec<Affine8>>>,
) -> Vec<Vec<Affine8>> {
    let samples = sample_count(len);
    let blocks = sample_blocks(samples);
    let mut models: Vec<Vec<Affine8>> = Vec::with_capacity(parents.len());
    for (j, parent) in parents.iter().enumerate() {
        let joint_locals: Vec<Affine8> = (0..blocks)
            .map(|b| {
                local8(
                    |f| frame(j, f),
                    len,
                    b,
                    samples.saturating_sub(8 * b).min(8),
                )
            })
            .collect();
        let joint_models = match *parent {
            Some(p) => models[p]
                .iter()
                .zip(&joint_locals)
                .map(|(m, l)| m.mul(l))
                .collect(),
            None => joint_locals.clone(),
        };
        models.push(joint_models);
        if let Some(l) = locals.as_deref_mut() {
            l.push(joint_locals);
        }
    }
    models
}

fn norm(v: [f32; 3]) -> f32 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

fn sub(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// Accurate angle between two rotations (radians), for any sign.
fn angle_between(a: Quat, b: Quat) -> f32 {
    let (v, c) = half_angle_sides(a, b);
    2.0 * v.atan2(c)
}

/// The sides `(|v|, |w|)` of `d = a* b`, whose angle `atan2(|v|, |w|)` is
/// half the angle between the rotations `a` and `b`.
fn half_angle_sides(a: Quat, b: Quat) -> (f32, f32) {
    let d = a.conjugate() * b;
    ((d.x * d.x + d.y * d.y + d.z * d.z).sqrt(), d.w.abs())
}

/// Whether the angle of sides `(v, c)` is above that of `(bv, bc)` (all
/// `>= 0`, not NaN): `v / c > bv / bc`, compared exactly (products of two
/// `f32` are exact in `f64`), so the widest of many angles takes one
/// `atan2` (which is monotonic) instead of one each. `(0, 0)` is the angle
/// 0, as `atan2(0, 0)`.
fn wider((v, c): (f32, f32), (bv, bc): (f32, f32)) -> bool {
    let c = if v == 0.0 && c == 0.0 { 1.0 } else { c };
    let bc = if bv == 0.0 && bc == 0.0 { 1.0 } else { bc };
    f64::from(v) * f64::from(bc) > f64::from(bv) * f64::from(c)
}

// ---------------------------------------------------------------------------
// Tracks
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Translation,
    Rotation,
    Scale,
}

/// One animated track: per-frame components to quantize and its clip range.
struct Track {
    joint: usize,
    kind: Kind,
    /// Raw values (xyz + 0, or the normalized quaternion).
    raw: Vec<[f32; 4]>,
    /// Components to quantize (drop-W xyz or the smallest three).
    comp: Vec<[f32; 3]>,
    /// Dropped index per frame (smallest three only).
    idx: Vec<u32>,
    /// Clip constants per component: min, unit (extent / 255).
    range: [f32; 6],
}

/// A track's segment ranges (8-bit minimum and extent per component) and
/// trend bytes (slope and curvature per component).
#[derive(Clone, Copy, Debug, Default)]
struct Shape {
    ranges: [u8; 6],
    slope: [i8; 3],
    curve: [i8; 3],
}

/// The least-squares quadratic `a + b·i + c·i²` through `values` at
/// `i = 0, 1, …` (zeros when the system is singular).
fn quadratic_fit(values: impl Iterator<Item = f32>) -> [f64; 3] {
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
struct SegTrack {
    rate: u8,
    ranges: [u8; 6],
    /// Per component: the trend slope and curvature bytes (0: none).
    trend: [i8; 3],
    curve: [i8; 3],
    /// Component drops (bit `c`: component `c` takes one bit less).
    drops: u8,
    /// Per frame: codes (and the smallest-three index) or raw f32 bits.
    words: Vec<[u32; 4]>,
    /// Per frame: the three decoded components (before the rotation's
    /// rebuild).
    parts: Vec<[f32; 3]>,
    /// Per frame: the decoded value exactly as the core decodes it.
    decoded: Vec<[f32; 4]>,
    /// Largest local error over the segment's frames.
    err: f32,
}

/// One component's quantization in one segment (see [`Track::quantizer`]).
struct Quantizer {
    dec: ComponentDecode,
    max_code: u32,
}

impl Quantizer {
    /// The code of raw value `v` at local frame `li` that decodes closest
    /// to it, and its decoded value (exactly as the core decodes it).
    fn code(&self, v: f32, li: f32) -> (u32, f32) {
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
    /// Encodes `frames` as one segment at `rate`; with `trend`, components
    /// whose segment chord fits a trend byte are stored as residuals from it
    /// when that shrinks their range.
    fn encode(
        &self,
        frames: std::ops::Range<usize>,
        rate: u8,
        format: RotationFormat,
        trend: bool,
    ) -> SegTrack {
        self.encode_shaped(frames, rate, format, trend, None)
    }

    /// The segment ranges and trends of `frames` (they do not depend on the
    /// bit rate, so a segment search computes them once per track).
    ///
    /// Per component the trend (slope and curvature bytes) is the one that
    /// makes the residual narrowest: the least-squares quadratic, rounded
    /// to the bytes' grid, then a descent over neighbouring bytes (the
    /// residual's width is convex in both). It is kept when the residual
    /// stays inside the clip range and is at least one step narrower than
    /// the component's own range.
    fn shape(&self, frames: std::ops::Range<usize>, trend: bool) -> Shape {
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
        // The range of component `c` (in 0..1 of the clip range) after
        // removing the trend with bytes `d` and `k`: the scalar
        // `v − slope·i − curve·i²` per frame, in lanes.
        let span = |c: usize, d: i8, k: i8| -> (f32, f32) {
            let (min, unit) = (self.range[2 * c], self.range[2 * c + 1]);
            let ext = 255.0 * unit;
            let (slope, curve) = (trend_slope(unit, d), trend_curve(unit, k));
            let (s8, c8) = (f32x8::splat(slope), f32x8::splat(curve));
            let (mut lo8, mut hi8) = (f32x8::splat(f32::INFINITY), f32x8::splat(f32::NEG_INFINITY));
            for (v, i) in vals[c].iter().zip(&idx) {
                let r = *v - s8 * *i - c8 * (*i * *i);
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
                    (
                        byte(s1, compressed::TREND_SCALE),
                        byte(s2, compressed::CURVE_SCALE),
                    )
                } else {
                    (byte(s1 + s2 * (n - 1) as f64, compressed::TREND_SCALE), 0)
                };
                let mut best_w = width(best);
                // Descend to the narrowest neighbour until none is narrower.
                for _ in 0..16 {
                    let (d, k) = best;
                    let mut moved = false;
                    for (dd, dk) in [
                        (-1, 0),
                        (1, 0),
                        (0, -1),
                        (0, 1),
                        (-1, 1),
                        (1, -1),
                        (-1, -1),
                        (1, 1),
                    ] {
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
                if best != (0, 0) {
                    let (tl, th) = span(c, best.0, best.1);
                    // Inside the clip range, and at least one step narrower.
                    if tl >= 0.0 && th <= 1.0 && (th - tl) * 255.0 + 1.0 < (hi - lo) * 255.0 {
                        (lo, hi) = (tl, th);
                        (shape.slope[c], shape.curve[c]) = best;
                    }
                }
            }
            let smin = (lo * 255.0).floor().clamp(0.0, 255.0) as u8;
            let smax = ((hi * 255.0).ceil().clamp(0.0, 255.0) as u8).max(smin);
            shape.ranges[2 * c] = smin;
            shape.ranges[2 * c + 1] = smax - smin;
        }
        shape
    }

    /// [`Track::encode`] with the segment shape given (or computed).
    fn encode_shaped(
        &self,
        frames: std::ops::Range<usize>,
        rate: u8,
        format: RotationFormat,
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
        self.rebuild(&mut t, first, format, true);
        t
    }

    /// The track with component `c` one bit coarser than in `base` (a
    /// quantized encoding of the same frames with `c` not yet dropped).
    fn with_drop(
        &self,
        base: &SegTrack,
        first: usize,
        c: usize,
        format: RotationFormat,
    ) -> SegTrack {
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
        self.rebuild(&mut t, first, format, false);
        t
    }

    /// Component `c`'s quantizer at `rate` bits in the segment of `t`'s
    /// ranges and trend.
    fn quantizer(&self, t: &SegTrack, c: usize, rate: u8) -> Quantizer {
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
    fn rebuild(&self, t: &mut SegTrack, first: usize, format: RotationFormat, measure: bool) {
        t.decoded.clear();
        let mut err = 0.0f32;
        // The rotation error's widest angle, by its sides.
        let mut widest: Option<(f32, f32)> = None;
        for (i, (d, w)) in t.parts.iter().zip(t.words.iter_mut()).enumerate() {
            let f = first + i;
            let raw = self.raw[f];
            let (dec, e) = match self.kind {
                Kind::Rotation => {
                    let q = match format {
                        RotationFormat::DropW => drop_w_rotation(d[0], d[1], d[2]),
                        RotationFormat::SmallestThree => {
                            w[3] = self.idx[f];
                            smallest_three_rotation(self.idx[f], d[0], d[1], d[2])
                        }
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
            err = err.max(2.0 * v.atan2(c));
        }
        t.err = err;
    }
}

/// The clip as per-joint scalar tracks, classified.
struct Analysis {
    joints: usize,
    frames: usize,
    parents: Vec<Option<usize>>,
    /// Per joint: the kind bytes.
    kinds: Vec<[u8; 3]>,
    /// Per joint: the value used for non-animated tracks (default or constant).
    fixed: Vec<Transform>,
    /// Raw local transforms, `[frame * joints + joint]`, rotations normalized.
    raw: Vec<Transform>,
    tracks: Vec<Track>,
    /// Largest distance of a virtual vertex from the origin (for f32 noise).
    extent: f32,
    /// Local error budget of each animated track at multiplier 1.
    budget: Vec<f32>,
}

fn analyse(
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
            };
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
                        match opts.rotation {
                            RotationFormat::DropW => {
                                let q = if q.w < 0.0 { -q } else { q };
                                tr.comp.push([q.x, q.y, q.z]);
                            }
                            RotationFormat::SmallestThree => {
                                let (i, kept) = smallest_three_split(q);
                                tr.idx.push(i);
                                tr.comp.push(kept);
                            }
                        }
                    }
                }
            }
            for c in 0..3 {
                let lo = tr.comp.iter().map(|v| v[c]).fold(f32::INFINITY, f32::min);
                let hi = tr
                    .comp
                    .iter()
                    .map(|v| v[c])
                    .fold(f32::NEG_INFINITY, f32::max);
                tr.range[2 * c] = lo;
                tr.range[2 * c + 1] = unit_for_extent(lo, (hi - lo).max(0.0));
            }
            if !tr.range.iter().all(|v| v.is_finite())
                || !tr
                    .range
                    .chunks_exact(2)
                    .all(|p| (p[0] + 255.0 * p[1]).is_finite())
            {
                return Err(Error::NonFinite {
                    what: "clip track range",
                });
            }
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
            extent = extent.max(norm8(at) + reach);
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
    let quiet: Vec<bool> = tracks
        .iter()
        .zip(&b0)
        .map(|(t, &b)| t.encode(0..frames, 0, opts.rotation, false).err <= 0.05 * b)
        .collect();
    // Quiet tracks whose 0-bit value fits their share at every frame become
    // constants: no per-segment rate and ranges at all.
    let mut keep = vec![true; tracks.len()];
    for (k, t) in tracks.iter().enumerate() {
        if !quiet[k] {
            continue;
        }
        let v = t.encode(0..1, 0, opts.rotation, false).decoded[0];
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

/// Searches one segment: returns the chosen encodings.
struct SegmentSearch<'a> {
    a: &'a Analysis,
    opts: &'a CompressOptions,
    frames: std::ops::Range<usize>,
    /// memo[track][rate index] (0..=23 then RAW at 24).
    memo: Vec<Vec<Option<SegTrack>>>,
    /// Per track: the segment's ranges and trends (rate-independent).
    shapes: Vec<Option<Shape>>,
    /// Raw models at the segment's samples (frames, then mid-frames), in
    /// blocks of eight samples: `[joint][block]`.
    raw_models: Vec<Vec<Affine8>>,
}

fn rate_slot(r: u8) -> usize {
    if r == RAW_BITS {
        MAX_QUANTIZED_BITS as usize + 1
    } else {
        r as usize
    }
}

/// The scalar reference of [`Trs8::halfway`] (with `alpha` 0.5).
#[cfg(test)]
fn lerp_t(a: &Transform, b: &Transform, alpha: f32) -> Transform {
    Transform::new(
        a.translation.lerp(b.translation, alpha),
        a.rotation.nlerp(b.rotation, alpha),
        a.scale.lerp(b.scale, alpha),
    )
}

/// Frames, then the mid-frames between them.
fn sample_count(frames: usize) -> usize {
    frames + frames.saturating_sub(1)
}

/// Eight transforms, one per lane.
struct Trs8 {
    t: [f32x8; 3],
    q: [f32x8; 4],
    s: [f32x8; 3],
}

impl Trs8 {
    /// Lane `i` from `get(i)`.
    fn gather<'t>(get: impl Fn(usize) -> &'t Transform) -> Trs8 {
        let ts: [&Transform; 8] = core::array::from_fn(get);
        let lanes = |f: fn(&Transform) -> f32| f32x8::from(ts.map(f));
        Trs8 {
            t: [
                lanes(|t| t.translation.x),
                lanes(|t| t.translation.y),
                lanes(|t| t.translation.z),
            ],
            q: [
                lanes(|t| t.rotation.x),
                lanes(|t| t.rotation.y),
                lanes(|t| t.rotation.z),
                lanes(|t| t.rotation.w),
            ],
            s: [
                lanes(|t| t.scale.x),
                lanes(|t| t.scale.y),
                lanes(|t| t.scale.z),
            ],
        }
    }

    /// `lerp_t(self, b, 0.5)` per lane, with the same operations in the
    /// same order.
    fn halfway(&self, b: &Trs8) -> Trs8 {
        let half = f32x8::splat(0.5);
        let lerp = |a: &[f32x8; 3], o: &[f32x8; 3]| -> [f32x8; 3] {
            core::array::from_fn(|r| a[r] + (o[r] - a[r]) * half)
        };
        let flip = dot8(&self.q, &b.q).simd_lt(f32x8::ZERO);
        let o = b.q.map(|c| flip.select(-c, c));
        let keep = f32x8::splat(1.0 - 0.5);
        let q: [f32x8; 4] = core::array::from_fn(|c| self.q[c] * keep + o[c] * half);
        Trs8 {
            t: lerp(&self.t, &b.t),
            q: normalize8(&q),
            s: lerp(&self.s, &b.s),
        }
    }

    /// Lane by lane: `self` where `mask` is set, else `other`.
    fn select(&self, mask: f32x8, other: &Trs8) -> Trs8 {
        let pick = |a: &[f32x8; 3], b: &[f32x8; 3]| -> [f32x8; 3] {
            core::array::from_fn(|c| mask.select(a[c], b[c]))
        };
        Trs8 {
            t: pick(&self.t, &other.t),
            q: core::array::from_fn(|c| mask.select(self.q[c], other.q[c])),
            s: pick(&self.s, &other.s),
        }
    }
}

/// [`Quat::dot`] per lane, in its order.
fn dot8(a: &[f32x8; 4], b: &[f32x8; 4]) -> f32x8 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]
}

/// [`Quat::normalize`] per lane, in its order.
fn normalize8(q: &[f32x8; 4]) -> [f32x8; 4] {
    let inv = f32x8::ONE / dot8(q, q).sqrt();
    q.map(|c| c * inv)
}

/// A joint's local transforms at samples `8 b + i` (`i < count`; the last
/// one fills the lanes from `count` on, so that padding lanes repeat a
/// real sample and never fail a check) of a segment of `len` frames
/// (frames, then mid-frames), from its decoded frames `dec(f)`. Each lane
/// has the bits of the scalar `Affine::from_trs` of the frame, or of
/// `lerp_t` halfway between two frames.
fn local8<'t>(dec: impl Fn(usize) -> &'t Transform, len: usize, b: usize, count: usize) -> Affine8 {
    let last = count.max(1) - 1;
    let sample = |i: usize| 8 * b + i.min(last);
    let a = Trs8::gather(|i| {
        let s = sample(i);
        dec(if s < len { s } else { s - len })
    });
    if sample(last) < len {
        return Affine8::from_trs(&a);
    }
    let next = Trs8::gather(|i| {
        let s = sample(i);
        dec(if s < len { s } else { s - len + 1 })
    });
    let frame = f32x8::from(core::array::from_fn::<f32, 8, _>(|i| {
        if sample(i) < len {
            f32::from_bits(u32::MAX)
        } else {
            0.0
        }
    }));
    Affine8::from_trs(&a.select(frame, &a.halfway(&next)))
}

/// Writes one decoded track value into a joint's transform.
fn set_track(t: &mut Transform, kind: Kind, v: &[f32; 4]) {
    match kind {
        Kind::Translation => t.translation = Vec3::new(v[0], v[1], v[2]),
        Kind::Rotation => t.rotation = Quat::new(v[0], v[1], v[2], v[3]).normalize(),
        Kind::Scale => t.scale = Vec3::new(v[0], v[1], v[2]),
    }
}

/// Per joint: its subtree in joint order, each joint with the position of
/// its parent in that list (`None` for the subtree's root).
fn subtrees(parents: &[Option<usize>]) -> Vec<Vec<(usize, Option<usize>)>> {
    let n = parents.len();
    (0..n)
        .map(|j| {
            let mut pos = vec![None; n];
            let mut sub = vec![(j, None)];
            pos[j] = Some(0);
            for c in j + 1..n {
                if let Some(pp) = parents[c].and_then(|p| pos[p]) {
                    pos[c] = Some(sub.len());
                    sub.push((c, Some(pp)));
                }
            }
            sub
        })
        .collect()
}

/// What a refinement trial is measured against.
struct Trial<'t> {
    a: &'t Analysis,
    /// The segment search's raw models (`[joint][block]`).
    raw_models: &'t [Vec<Affine8>],
    shell: f32,
    /// The square of the error bound.
    target2: f32,
}

/// A segment's decoded frames and their FK at every sample (frames, then
/// mid-frames, in blocks of eight), kept up to date while a refinement
/// lowers rates.
struct Posed {
    len: usize,
    blocks: usize,
    /// Decoded local transforms, `[frame * joints + joint]`.
    dec: Vec<Transform>,
    /// Local and model transforms, `[joint][block]`.
    locals: Vec<Vec<Affine8>>,
    models: Vec<Vec<Affine8>>,
    /// Scratch of a trial: the joint's frames, its locals per block, and
    /// its subtree's models per block (`[position in the subtree][block]`).
    /// A trial that passes swaps its vectors in rather than copying them.
    joint_dec: Vec<Transform>,
    joint_locals: Vec<Affine8>,
    trial: Vec<Vec<Affine8>>,
    /// Per joint: the block at which a trial on it last failed, tried
    /// first next time (a failing trial then usually stops there).
    hot: Vec<usize>,
}

impl Posed {
    fn new(a: &Analysis, dec: Vec<Transform>, len: usize) -> Posed {
        let n = a.joints;
        let mut locals = Vec::with_capacity(n);
        let models = pose8(&a.parents, len, |j, f| &dec[f * n + j], Some(&mut locals));
        let blocks = sample_blocks(sample_count(len));
        Posed {
            len,
            blocks,
            dec,
            locals,
            models,
            joint_dec: vec![Transform::IDENTITY; len],
            joint_locals: vec![Affine8::IDENTITY; blocks],
            trial: vec![vec![Affine8::IDENTITY; blocks]; n],
            hot: vec![0; n],
        }
    }

    /// Tries `track` decoded as `values` (per frame): when every virtual
    /// vertex of its joint's subtree `sub` stays within the target at every
    /// sample, keeps it and returns `true`. Only that subtree moves, so the
    /// trial runs FK over it alone against the cached models of the rest.
    fn try_track(
        &mut self,
        t: &Trial<'_>,
        sub: &[(usize, Option<usize>)],
        track: &Track,
        values: &[[f32; 4]],
    ) -> bool {
        let (n, len, blocks, j) = (t.a.joints, self.len, self.blocks, track.joint);
        for (i, (d, v)) in self.joint_dec.iter_mut().zip(values).enumerate() {
            *d = self.dec[i * n + j];
            set_track(d, track.kind, v);
        }
        let samples = sample_count(len);
        for (b, l) in self.joint_locals.iter_mut().enumerate() {
            let count = samples.saturating_sub(8 * b).min(8);
            *l = local8(|f| &self.joint_dec[f], len, b, count);
        }
        let hot = self.hot[j];
        for i in 0..blocks {
            let b = (i + hot) % blocks;
            for (pos, &(c, parent_pos)) in sub.iter().enumerate() {
                let local = if c == j {
                    &self.joint_locals[b]
                } else {
                    &self.locals[c][b]
                };
                let m = match (parent_pos, t.a.parents[c]) {
                    (Some(pp), _) => self.trial[pp][b].mul(local),
                    (None, Some(p)) => self.models[p][b].mul(local),
                    (None, None) => *local,
                };
                if !fits8(&t.raw_models[c][b], &m, t.shell, t.target2) {
                    self.hot[j] = b;
                    return false;
                }
                self.trial[pos][b] = m;
            }
        }
        for (pos, &(c, _)) in sub.iter().enumerate() {
            core::mem::swap(&mut self.models[c], &mut self.trial[pos]);
        }
        core::mem::swap(&mut self.locals[j], &mut self.joint_locals);
        for (i, d) in self.joint_dec.iter().enumerate() {
            self.dec[i * n + j] = *d;
        }
        true
    }
}

impl<'a> SegmentSearch<'a> {
    fn new(a: &'a Analysis, opts: &'a CompressOptions, frames: std::ops::Range<usize>) -> Self {
        let n = a.joints;
        let (first, len) = (frames.start, frames.len());
        let raw = |f: usize, j: usize| &a.raw[(first + f) * n + j];
        let raw_models = pose8(&a.parents, len, |j, f| raw(f, j), None);
        SegmentSearch {
            a,
            opts,
            memo: vec![vec![None; MAX_QUANTIZED_BITS as usize + 2]; a.tracks.len()],
            shapes: vec![None; a.tracks.len()],
            frames,
            raw_models,
        }
    }

    fn get(&mut self, k: usize, r: u8) -> &SegTrack {
        let slot = rate_slot(r);
        if self.memo[k][slot].is_none() {
            let t = &self.a.tracks[k];
            let shape = *self.shapes[k].get_or_insert_with(|| t.shape(self.frames.clone(), true));
            let enc = t.encode_shaped(
                self.frames.clone(),
                r,
                self.opts.rotation,
                true,
                Some(shape),
            );
            self.memo[k][slot] = Some(enc);
        }
        match &self.memo[k][slot] {
            Some(e) => e,
            None => unreachable!("memo slot filled above"),
        }
    }

    /// The lowest rate whose local error fits `budget` (binary search over
    /// 0..=23; verbatim when even 23 bits do not fit).
    fn rate_for(&mut self, k: usize, budget: f32) -> u8 {
        if self.get(k, MAX_QUANTIZED_BITS).err > budget {
            return RAW_BITS;
        }
        let (mut lo, mut hi) = (0u8, MAX_QUANTIZED_BITS);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.get(k, mid).err <= budget {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        lo
    }

    fn rates(&mut self, mult: f32) -> Vec<u8> {
        (0..self.a.tracks.len())
            .map(|k| {
                if mult <= 0.0 {
                    RAW_BITS
                } else {
                    self.rate_for(k, self.a.budget[k] * mult)
                }
            })
            .collect()
    }

    /// The segment's decoded local transforms at `rates`, `[frame * joints + joint]`.
    fn decode_frames(&mut self, rates: &[u8]) -> Vec<Transform> {
        let a = self.a;
        let n = a.joints;
        let len = self.frames.len();
        let mut dec: Vec<Transform> = Vec::with_capacity(len * n);
        for _ in 0..len {
            dec.extend_from_slice(&a.fixed);
        }
        for (k, &r) in rates.iter().enumerate() {
            let (joint, kind) = (a.tracks[k].joint, a.tracks[k].kind);
            for (i, v) in self.get(k, r).decoded.iter().enumerate() {
                set_track(&mut dec[i * n + joint], kind, v);
            }
        }
        dec
    }

    /// Whether the segment decoded at `rates` keeps every virtual vertex
    /// within `target` at its frames and inner mid-frames.
    fn fits(&mut self, rates: &[u8], target: f32) -> bool {
        let a = self.a;
        let n = a.joints;
        let len = self.frames.len();
        let dec = self.decode_frames(rates);
        let samples = sample_count(len);
        let blocks = sample_blocks(samples);
        let (shell, target2) = (self.opts.shell, target * target);
        // FK joint by joint, stopping at the first vertex out of bounds.
        let mut models: Vec<Affine8> = Vec::with_capacity(n * blocks);
        for j in 0..n {
            for b in 0..blocks {
                let count = samples.saturating_sub(8 * b).min(8);
                let local = local8(|f| &dec[f * n + j], len, b, count);
                let m = match a.parents[j] {
                    Some(p) => models[p * blocks + b].mul(&local),
                    None => local,
                };
                if !fits8(&self.raw_models[j][b], &m, shell, target2) {
                    return false;
                }
                models.push(m);
            }
        }
        true
    }

    /// Greedy descent after the multiplier search, in two steps that each
    /// keep every virtual vertex within `target` at every frame and
    /// mid-frame of the segment: first each track's rate goes down one bit
    /// at a time (two rounds, leaves first: a leaf's error depends on its
    /// own tracks and its ancestors only, so it goes lowest before its
    /// ancestors take what is left of the bound; the second round takes
    /// what later changes freed, since quantization errors do not simply
    /// add), then each component of each track tries one bit less on its
    /// own, and the components that failed try once more after all the
    /// other drops (a drop further down a chain can leave room for one that
    /// did not fit before it). Returns the chosen encodings.
    fn refine(&mut self, mut rates: Vec<u8>, target: f32) -> Vec<SegTrack> {
        let a = self.a;
        let n = a.joints;
        let dec = self.decode_frames(&rates);
        let mut posed = Posed::new(a, dec, self.frames.len());
        let subtrees = subtrees(&a.parents);
        // Borrowed out of `self` while `self.get` fills the memo.
        let raw_models = std::mem::take(&mut self.raw_models);
        let trial = Trial {
            a,
            raw_models: &raw_models,
            shell: self.opts.shell,
            target2: target * target,
        };
        // A failed trial can only pass later if a joint it depends on (its
        // ancestors and its subtree) changed since.
        let mut epoch = 0u32;
        let mut changed = vec![0u32; n];
        let mut failed_at: Vec<Option<u32>> = vec![None; rates.len()];
        for k in (0..rates.len()).rev().chain((0..rates.len()).rev()) {
            let j = a.tracks[k].joint;
            let sub = &subtrees[j];
            if let Some(f) = failed_at[k] {
                let mut anc = a.parents[j];
                let mut stale = sub.iter().any(|&(c, _)| changed[c] > f);
                while let (false, Some(p)) = (stale, anc) {
                    stale = changed[p] > f;
                    anc = a.parents[p];
                }
                if !stale {
                    continue;
                }
            }
            while rates[k] != RAW_BITS && rates[k] > 0 {
                let cand = rates[k] - 1;
                let values = &self.get(k, cand).decoded;
                if !posed.try_track(&trial, sub, &a.tracks[k], values) {
                    failed_at[k] = Some(epoch);
                    break;
                }
                epoch += 1;
                changed[j] = epoch;
                rates[k] = cand;
            }
        }
        let mut chosen: Vec<SegTrack> = rates
            .iter()
            .enumerate()
            .map(|(k, &r)| self.get(k, r).clone())
            .collect();
        let first = self.frames.start;
        let mut failed = Vec::new();
        for (k, t) in chosen.iter_mut().enumerate().rev() {
            if t.rate == RAW_BITS || t.rate == 0 {
                continue;
            }
            let track = &a.tracks[k];
            for c in 0..3 {
                let cand = track.with_drop(t, first, c, self.opts.rotation);
                if posed.try_track(&trial, &subtrees[track.joint], track, &cand.decoded) {
                    *t = cand;
                } else {
                    failed.push((k, c));
                }
            }
        }
        for (k, c) in failed {
            let track = &a.tracks[k];
            let cand = track.with_drop(&chosen[k], first, c, self.opts.rotation);
            if posed.try_track(&trial, &subtrees[track.joint], track, &cand.decoded) {
                chosen[k] = cand;
            }
        }
        self.raw_models = raw_models;
        chosen
    }

    /// The rates of the largest budget multiplier whose measured error stays
    /// under `target`, and that multiplier's index. The search starts at
    /// index `hint` (the previous segment's, as neighbouring segments are
    /// alike) and walks up or down from there.
    fn search(&mut self, target: f32, scale: f32, hint: usize) -> (Vec<u8>, usize) {
        const MULTS: [f32; 12] = [
            0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 24.0, 32.0,
        ];
        let at = |s: &mut Self, i: usize| -> Option<Vec<u8>> {
            let rates = s.rates(MULTS[i] * scale);
            s.fits(&rates, target).then_some(rates)
        };
        let mut i = hint.min(MULTS.len() - 1);
        if let Some(mut best) = at(self, i) {
            while i + 1 < MULTS.len() {
                match at(self, i + 1) {
                    Some(r) => (best, i) = (r, i + 1),
                    None => break,
                }
            }
            return (best, i);
        }
        while i > 0 {
            i -= 1;
            if let Some(r) = at(self, i) {
                return (r, i);
            }
        }
        for m in [0.25, 0.1, 0.03] {
            let rates = self.rates(m * scale);
            if self.fits(&rates, target) {
                return (rates, 0);
            }
        }
        (vec![RAW_BITS; self.a.tracks.len()], 0)
    }
}

/// Bit writer, little-endian bit order (matches the core's reader).
#[derive(Default)]
struct BitWriter {
    bytes: Vec<u8>,
    bit: u64,
}

impl BitWriter {
    fn push(&mut self, v: u32, n: u32) {
        for i in 0..n {
            let byte = (self.bit >> 3) as usize;
            if byte >= self.bytes.len() {
                self.bytes.push(0);
            }
            if (v >> i) & 1 == 1 {
                self.bytes[byte] |= 1 << (self.bit & 7);
            }
            self.bit += 1;
        }
    }
}

/// The block-track order of the animated tracks: block, then translation,
/// rotation, scale, then lane (the order of their lanes in the container).
fn lane_order(a: &Analysis) -> Vec<usize> {
    let mut order: Vec<usize> = (0..a.tracks.len()).collect();
    order.sort_by_key(|&k| {
        let t = &a.tracks[k];
        (t.joint / 4, kind_slot(t.kind), t.joint % 4)
    });
    order
}

fn kind_slot(k: Kind) -> usize {
    match k {
        Kind::Translation => 0,
        Kind::Rotation => 1,
        Kind::Scale => 2,
    }
}

// `slot` (translation, rotation, scale) indexes several per-joint tables.
#[allow(clippy::needless_range_loop)]
fn build_container(
    a: &Analysis,
    clip: &RawClip<'_>,
    opts: &CompressOptions,
    segs: &[Vec<SegTrack>],
) -> Result<OwnedCompressedClip, Error> {
    let blocks = a.joints.div_ceil(4);
    let mut track_of = vec![[None::<usize>; 3]; a.joints];
    for (k, t) in a.tracks.iter().enumerate() {
        track_of[t.joint][kind_slot(t.kind)] = Some(k);
    }
    let mut kinds = Vec::with_capacity(3 * blocks);
    let mut params: Vec<f32> = Vec::new();
    for b in 0..blocks {
        for slot in 0..3 {
            let lanes: Vec<Option<usize>> = (0..4)
                .map(|l| Some(4 * b + l).filter(|&j| j < a.joints))
                .collect();
            let stored = lanes
                .iter()
                .flatten()
                .any(|&j| a.kinds[j][slot] != JOINT_DEFAULT);
            if !stored {
                kinds.push(KIND_DEFAULT);
                continue;
            }
            let mut mask = 0u8;
            let mut min = [[0.0f32; 4]; 3];
            let mut unit = [[0.0f32; 4]; 3];
            let mut w = [1.0f32; 4];
            for (l, j) in lanes.iter().enumerate() {
                let fixed: [f32; 4] = match j {
                    Some(j) => {
                        let f = &a.fixed[*j];
                        match slot {
                            0 => [f.translation.x, f.translation.y, f.translation.z, 0.0],
                            1 => f.rotation.to_array(),
                            _ => [f.scale.x, f.scale.y, f.scale.z, 0.0],
                        }
                    }
                    None => match slot {
                        1 => [0.0, 0.0, 0.0, 1.0],
                        0 => [0.0; 4],
                        _ => [1.0, 1.0, 1.0, 0.0],
                    },
                };
                match j.and_then(|j| track_of[j][slot]) {
                    Some(k) => {
                        mask |= 1 << l;
                        for c in 0..3 {
                            min[c][l] = a.tracks[k].range[2 * c];
                            unit[c][l] = a.tracks[k].range[2 * c + 1];
                        }
                        w[l] = 0.0;
                    }
                    None => {
                        for c in 0..3 {
                            min[c][l] = fixed[c];
                        }
                        w[l] = fixed[3];
                    }
                }
            }
            kinds.push(KIND_STORED | mask << 4);
            // Without an animated lane the units (all zero) are not stored.
            for c in 0..3 {
                params.extend_from_slice(&min[c]);
                if mask != 0 {
                    params.extend_from_slice(&unit[c]);
                }
            }
            if slot == 1 {
                params.extend_from_slice(&w);
            }
        }
    }
    let order = lane_order(a);
    let mut meta = Vec::new();
    let mut w = BitWriter::default();
    for seg in segs {
        for &k in &order {
            let t = &seg[k];
            meta.extend_from_slice(&t.ranges);
            meta.push(t.rate | t.drops << RATE_DROP_SHIFT);
            meta.extend(t.trend.map(|d| d as u8));
            meta.extend(t.curve.map(|k| k as u8));
        }
        debug_assert_eq!(meta.len() % LANE_META_BYTES, 0);
        let len = seg.first().map_or(0, |t| t.words.len());
        for f in 0..len {
            for &k in &order {
                let t = &seg[k];
                let word = t.words[f];
                let rot = a.tracks[k].kind == Kind::Rotation;
                if t.rate == RAW_BITS {
                    let m = if rot { 4 } else { 3 };
                    for &x in &word[..m] {
                        w.push(x, 32);
                    }
                } else {
                    for (&x, r) in word[..3]
                        .iter()
                        .zip(component_rates(t.rate | t.drops << RATE_DROP_SHIFT))
                    {
                        w.push(x, u32::from(r));
                    }
                    if rot && opts.rotation == RotationFormat::SmallestThree {
                        w.push(word[3], 2);
                    }
                }
            }
        }
    }
    let parts = CompressedParts {
        sample_rate: clip.sample_rate(),
        joint_count: a.joints,
        frame_count: a.frames,
        segment_frames: opts.segment_frames,
        rotation: opts.rotation,
        defaults: if opts.rest_pose_stripping {
            Defaults::RestPose
        } else {
            Defaults::Identity
        },
        kinds: &kinds,
        params: &params,
        meta: &meta,
        data: &w.bytes,
        name: clip.name(),
    };
    let size = compressed::compressed_size(&parts).ok_or(Error::Corrupt {
        what: "compressed clip exceeds 4 GiB",
    })?;
    let mut bytes = AlignedBytes::zeroed(size);
    compressed::write_compressed(&parts, bytes.as_mut_slice())?;
    CompressedClip::from_bytes(bytes.as_slice())?;
    Ok(OwnedCompressedClip { bytes })
}

/// Per sample (frames, then mid-frames) the compressor's own max shell error
/// of the finished container, sampled through the core's samplers: eight
/// samples at a time, their joints' affines and FK in lanes (the scalar
/// `from_trs`, FK and shell error's bits, lane by lane); a sample with a
/// NaN error is infinitely far off.
fn container_errors(
    skeleton: &Skeleton<'_>,
    clip: &RawClip<'_>,
    comp: &CompressedClip<'_>,
    shell: f32,
) -> Result<Vec<f32>, Error> {
    let n = skeleton.joint_count();
    let parents: Vec<Option<usize>> = (0..n).map(|j| skeleton.parent(j)).collect();
    let frames = clip.frame_count();
    let rate = clip.sample_rate();
    let rest = skeleton.rest_pose();
    let soa = clip.soa_count();
    let mut pr = vec![SoaTransform::IDENTITY; 8 * soa];
    let mut pc = pr.clone();
    let mut mr = vec![Affine8::IDENTITY; n];
    let mut mc = mr.clone();
    let times: Vec<f32> = (0..frames)
        .map(|f| f as f32 / rate)
        .chain((0..frames.saturating_sub(1)).map(|f| (f as f32 + 0.5) / rate))
        .collect();
    let mut out = Vec::with_capacity(times.len());
    for chunk in times.chunks(8) {
        for ((t, r), c) in chunk.iter().zip(pr.chunks_mut(soa)).zip(pc.chunks_mut(soa)) {
            clip.sample(*t, TimeMode::Clamp, r)?;
            comp.sample_with_rest(*t, TimeMode::Clamp, rest, c)?;
        }
        // Lanes past the chunk repeat its last sample.
        let last = chunk.len() - 1;
        let lanes = |poses: &[SoaTransform], j: usize| -> Affine8 {
            let ts: [Transform; 8] = core::array::from_fn(|i| {
                let at = soa * i.min(last);
                get_joint(&poses[at..at + soa], j).unwrap_or_default()
            });
            Affine8::from_trs(&Trs8::gather(|i| &ts[i]))
        };
        let mut worst = f32x8::ZERO;
        let mut nan = f32x8::ZERO;
        for j in 0..n {
            let (lr, lc) = (lanes(&pr, j), lanes(&pc, j));
            (mr[j], mc[j]) = match parents[j] {
                Some(p) => (mr[p].mul(&lr), mc[p].mul(&lc)),
                None => (lr, lc),
            };
            let e2 = shell_error_sq8(&mr[j], &mc[j], shell);
            nan |= e2.simd_ne(e2);
            worst = worst.max(e2);
        }
        let (worst, nan) = (worst.to_array(), nan.to_array());
        out.extend((0..chunk.len()).map(|i| {
            if nan[i] != 0.0 {
                f32::INFINITY
            } else {
                worst[i].sqrt()
            }
        }));
    }
    Ok(out)
}

/// Compresses `clip` (poses of `skeleton`) under the object-space error bound of `opts`.
///
/// # Errors
/// [`Error::BadLength`] when the clip's pose size is not the skeleton's,
/// [`Error::NonFinite`] for a non-positive or non-finite error or shell, or a
/// zero-length rotation in the clip, [`Error::Corrupt`] when the result would
/// not fit the format (over 4 GiB), [`Error::InvalidSampleRate`] for a
/// segment length of 0.
pub fn compress(
    skeleton: &Skeleton<'_>,
    clip: &RawClip<'_>,
    opts: &CompressOptions,
) -> Result<(OwnedCompressedClip, CompressReport), Error> {
    crate::assets::check_clip(skeleton, clip)?;
    if !(opts.error.is_finite() && opts.error > 0.0 && opts.shell.is_finite() && opts.shell > 0.0) {
        return Err(Error::NonFinite {
            what: "error bound or shell distance",
        });
    }
    if opts.segment_frames == 0 || opts.segment_frames > 65536 {
        return Err(Error::InvalidSampleRate);
    }
    let a = analyse(skeleton, clip, opts)?;
    let sf = opts.segment_frames;
    let nseg = a.frames.div_ceil(sf);
    // The final check leaves room for the f32 rounding of the SIMD sampler
    // and FK that the independent measurement uses (relative to the size of
    // the scene), so a container that passes here also passes there, and
    // 0.1% of the bound besides (the two measurements of the CMU set differ
    // by at most 0.2% of that allowance).
    let accept = opts.error * 0.999 - 16.0 * f32::EPSILON * a.extent;
    // Segments are searched against a slightly tighter target than that, so
    // the SIMD-vs-scalar rounding of the real sampler keeps under it.
    let target = accept - opts.error * 0.003;
    let mut scale = vec![1.0f32; nseg];
    // A bound below what f32 resolves at this scene's size: no quantized
    // segment can be proven to meet it, so store everything verbatim.
    let mut halvings = vec![if target > 0.0 { 0u32 } else { 5 }; nseg];
    let mut segs: Vec<Vec<SegTrack>> = vec![Vec::new(); nseg];
    let mut todo: Vec<usize> = (0..nseg).collect();
    let mut passes = 0;
    loop {
        passes += 1;
        let mut hint = 4;
        for &s in &todo {
            let range = s * sf..((s + 1) * sf).min(a.frames);
            let mut search = SegmentSearch::new(&a, opts, range);
            segs[s] = if halvings[s] >= 5 {
                (0..a.tracks.len())
                    .map(|k| search.get(k, RAW_BITS).clone())
                    .collect()
            } else {
                let (rates, used) = search.search(target * scale[s], scale[s], hint);
                hint = used;
                search.refine(rates, target * scale[s])
            };
        }
        let out = build_container(&a, clip, opts, &segs)?;
        let errs = container_errors(skeleton, clip, &out.view(), opts.shell)?;
        let mut failing = Vec::new();
        for (i, &e) in errs.iter().enumerate() {
            if e > accept {
                let (f0, f1) = if i < a.frames {
                    (i, i)
                } else {
                    (i - a.frames, i - a.frames + 1)
                };
                failing.push(f0 / sf);
                failing.push(f1 / sf);
            }
        }
        failing.sort_unstable();
        failing.dedup();
        // Verbatim segments are exact already: nothing left to try there
        // (what remains is the sampler's and FK's own f32 rounding).
        failing.retain(|&s| halvings[s] < 5);
        let max_error = errs.iter().copied().fold(0.0f32, f32::max);
        if failing.is_empty() || passes > 6 {
            let raw_segments = segs
                .iter()
                .filter(|s| !s.is_empty() && s.iter().all(|t| t.rate == RAW_BITS))
                .count();
            return Ok((
                out,
                CompressReport {
                    max_error,
                    passes,
                    raw_segments,
                },
            ));
        }
        for &s in &failing {
            // A first miss is a rounding-sized one (the search measures the
            // same decoded values): a tenth off the target is enough. Then halve.
            scale[s] *= if halvings[s] == 0 { 0.9 } else { 0.5 };
            halvings[s] += 1;
        }
        todo = failing;
    }
}

/// Measures the object-space error of `compressed` against `raw`,
/// independently of the compressor: both clips are sampled through their
/// public samplers (clamped) at every frame and every mid-frame, posed with
/// the core's SIMD FK, and 6 virtual vertices per joint (±`shell` along the
/// joint's model-space x, y, z axes) are compared.
///
/// # Errors
/// [`Error::BadLength`] when the clips' pose sizes or frame counts differ
/// from each other or the skeleton's, and errors of the samplers.
pub fn measure_error(
    skeleton: &Skeleton<'_>,
    raw: &RawClip<'_>,
    compressed: &CompressedClip<'_>,
    shell: f32,
) -> Result<ErrorStats, Error> {
    crate::assets::check_clip(skeleton, raw)?;
    if compressed.joint_count() != skeleton.joint_count()
        || compressed.frame_count() != raw.frame_count()
    {
        return Err(Error::BadLength {
            buffer: "compressed clip",
            expected: raw.frame_count(),
            actual: compressed.frame_count(),
        });
    }
    let n = skeleton.joint_count();
    let rest = skeleton.rest_pose();
    let mut pr = vec![SoaTransform::IDENTITY; skeleton.soa_count()];
    let mut pc = pr.clone();
    let mut mr = vec![Mat4::IDENTITY; n];
    let mut mc = mr.clone();
    let frames = raw.frame_count();
    let rate = raw.sample_rate();
    let mut errs: Vec<f32> = Vec::with_capacity(frames * 2 * n * 6);
    let offsets = [
        Vec3::new(shell, 0.0, 0.0),
        Vec3::new(-shell, 0.0, 0.0),
        Vec3::new(0.0, shell, 0.0),
        Vec3::new(0.0, -shell, 0.0),
        Vec3::new(0.0, 0.0, shell),
        Vec3::new(0.0, 0.0, -shell),
    ];
    for i in 0..(2 * frames).saturating_sub(1) {
        let t = (i as f64 * 0.5 / f64::from(rate)) as f32;
        raw.sample(t, TimeMode::Clamp, &mut pr)?;
        compressed.sample_with_rest(t, TimeMode::Clamp, rest, &mut pc)?;
        local_to_model(&FkJob::new(skeleton, &pr), &mut mr)?;
        local_to_model(&FkJob::new(skeleton, &pc), &mut mc)?;
        for (a, b) in mr.iter().zip(&mc) {
            for &o in &offsets {
                let d = a.transform_point(o) - b.transform_point(o);
                let e = d.length();
                errs.push(if e.is_nan() { f32::INFINITY } else { e });
            }
        }
    }
    if errs.is_empty() {
        return Ok(ErrorStats::default());
    }
    let count = errs.len();
    let mean = (errs.iter().map(|&e| f64::from(e)).sum::<f64>() / count as f64) as f32;
    let max = errs.iter().copied().fold(0.0f32, f32::max);
    let k = ((count as f64 * 0.99).ceil() as usize).clamp(1, count) - 1;
    let (_, p99, _) = errs.select_nth_unstable_by(k, f32::total_cmp);
    Ok(ErrorStats {
        max,
        mean,
        p99: *p99,
        count,
    })
}

// ---------------------------------------------------------------------------
// `sinew compress`
// ---------------------------------------------------------------------------

/// A length given on the command line, e.g. `0.01cm`, `3cm`, `1mm`, `0.0001m`,
/// or a bare number in the clip's own units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Length {
    /// The number as written.
    pub value: f32,
    /// Metres per unit of `value`, or `None` for the clip's own units.
    pub metres_per_unit: Option<f32>,
}

impl Length {
    /// Parses `<number>[m|cm|mm]`; the number must be finite and > 0.
    ///
    /// # Errors
    /// A one-line message for anything else.
    pub fn parse(s: &str) -> Result<Length, String> {
        let t = s.trim();
        let (num, unit) = if let Some(n) = t.strip_suffix("mm") {
            (n, Some(0.001))
        } else if let Some(n) = t.strip_suffix("cm") {
            (n, Some(0.01))
        } else if let Some(n) = t.strip_suffix('m') {
            (n, Some(1.0))
        } else {
            (t, None)
        };
        let value: f32 = num
            .trim()
            .parse()
            .map_err(|_| format!("'{s}' is not a length (e.g. 0.01cm, 3cm, 1mm, 0.0001m)"))?;
        if !(value.is_finite() && value > 0.0) {
            return Err(format!("'{s}' must be a finite length > 0"));
        }
        Ok(Length {
            value,
            metres_per_unit: unit,
        })
    }

    /// The length in the units of an asset (`"metres"`, or anything else for
    /// unknown file units, which only bare numbers may be given in).
    ///
    /// # Errors
    /// A unit was given but the asset's units are unknown.
    pub fn in_units(&self, units: &str) -> Result<f32, String> {
        match (self.metres_per_unit, units) {
            (None, _) => Ok(self.value),
            (Some(m), "metres") => Ok(self.value * m),
            (Some(_), other) => Err(format!(
                "the clip is in {other}, so lengths must be bare numbers in those units"
            )),
        }
    }
}

/// Settings of `sinew compress`.
#[derive(Clone, Debug)]
pub struct CliOptions {
    /// Error bound.
    pub error: Length,
    /// Shell distance.
    pub shell: Length,
    /// Rotation format.
    pub rotation: RotationFormat,
    /// Frames per segment.
    pub segment_frames: usize,
    /// Also run [`measure_error`] on every clip.
    pub verify: bool,
    /// Output directory (created if missing).
    pub out_dir: PathBuf,
}

/// The raw size a compression ratio is taken against: `joints × frames × 40`
/// bytes (translation, rotation and scale as 10 `f32` per joint and frame).
#[must_use]
pub fn raw_clip_bytes(joints: usize, frames: usize) -> usize {
    joints * frames * 40
}

/// One row of the `sinew compress` table.
#[derive(Clone, Debug)]
pub struct Row {
    /// Output file name.
    pub clip: String,
    /// Joints.
    pub joints: usize,
    /// Frames.
    pub frames: usize,
    /// Raw size ([`raw_clip_bytes`]).
    pub raw_bytes: usize,
    /// Container size.
    pub compressed_bytes: usize,
    /// The bound, in clip units.
    pub bound: f32,
    /// The compressor's measured max error, in clip units.
    pub max_error: f32,
    /// Metres per clip unit, when known.
    pub metres_per_unit: Option<f32>,
    /// Compression time.
    pub seconds: f64,
    /// The independent measurement, with `--verify`.
    pub verified: Option<ErrorStats>,
}

fn file_stem(p: &Path) -> String {
    p.file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("clip")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn fmt_len(v: f32, mpu: Option<f32>) -> String {
    match mpu {
        Some(m) => format!("{:.5} cm", v * m * 100.0),
        None => format!("{v:.6}"),
    }
}

/// Compresses every clip of `assets` into `opts.out_dir` (one `.sinewcmp`
/// file per clip), reporting progress and the table through `emit`, and
/// returns the rows.
///
/// # Errors
/// A length in units the asset does not have, a core error (named with the
/// clip), an output file that cannot be written, or (with `verify`) a clip
/// whose independently measured error exceeds the bound.
pub fn run_cli(
    assets: &[crate::Asset],
    opts: &CliOptions,
    emit: &mut dyn FnMut(&str),
) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    std::fs::create_dir_all(&opts.out_dir)
        .map_err(|e| format!("cannot create {}: {e}", opts.out_dir.display()))?;
    let total: usize = assets.iter().map(|a| a.clips.len()).sum();
    let mut rows = Vec::new();
    let mut done = 0;
    for asset in assets {
        let skel = asset.skeleton.view();
        let mpu = (asset.units == "metres").then_some(1.0f32);
        let copts = CompressOptions {
            error: opts.error.in_units(asset.units)?,
            shell: opts.shell.in_units(asset.units)?,
            segment_frames: opts.segment_frames,
            rotation: opts.rotation,
            rest_pose_stripping: true,
        };
        let stem = file_stem(&asset.source);
        for (ci, clip) in asset.clips.iter().enumerate() {
            done += 1;
            let name = if asset.clips.len() == 1 {
                stem.clone()
            } else {
                format!("{stem}_{ci}_{}", file_stem(Path::new(&clip.name)))
            };
            let view = clip.view().with_name(&clip.name);
            let start = Instant::now();
            let (out, report) = compress(&skel, &view, &copts)
                .map_err(|e| format!("{}: clip '{}': {e}", asset.source.display(), clip.name))?;
            let seconds = start.elapsed().as_secs_f64();
            let path = opts.out_dir.join(format!("{name}.sinewcmp"));
            std::fs::write(&path, out.bytes())
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            let verified = if opts.verify {
                let stats = measure_error(&skel, &view, &out.view(), copts.shell)?;
                if stats.max > copts.error {
                    return Err(format!(
                        "{name}: verified max error {} exceeds the bound {}",
                        fmt_len(stats.max, mpu),
                        fmt_len(copts.error, mpu)
                    )
                    .into());
                }
                Some(stats)
            } else {
                None
            };
            let row = Row {
                clip: name,
                joints: skel.joint_count(),
                frames: view.frame_count(),
                raw_bytes: raw_clip_bytes(skel.joint_count(), view.frame_count()),
                compressed_bytes: out.bytes().len(),
                bound: copts.error,
                max_error: report.max_error,
                metres_per_unit: mpu,
                seconds,
                verified,
            };
            let verbatim = if report.raw_segments > 0 {
                format!(
                    " ({} of {} segments verbatim: no bit rate met the bound, which is \
                     close to f32 resolution at this scene's size)",
                    report.raw_segments,
                    view.frame_count().div_ceil(copts.segment_frames)
                )
            } else {
                String::new()
            };
            emit(&format!(
                "[{done}/{total}] {} {:.1}:1 max {} in {:.0} ms{verbatim}",
                row.clip,
                row.raw_bytes as f64 / row.compressed_bytes as f64,
                fmt_len(row.max_error, mpu),
                seconds * 1e3
            ));
            rows.push(row);
        }
    }
    emit(&table(&rows));
    Ok(rows)
}

/// The table of rows plus totals (ratio of the sums, worst error, total time, MB/s).
#[must_use]
pub fn table(rows: &[Row]) -> String {
    use std::fmt::Write;
    let verify = rows.iter().any(|r| r.verified.is_some());
    let mut s = String::new();
    let _ = write!(
        s,
        "{:<28} {:>6} {:>7} {:>11} {:>10} {:>7} {:>13} {:>9}",
        "clip", "joints", "frames", "raw bytes", "compressed", "ratio", "max error", "time ms"
    );
    if verify {
        let _ = write!(s, " {:>13} {:>13} {:>13}", "verified max", "mean", "p99");
    }
    s.push('\n');
    for r in rows {
        let _ = write!(
            s,
            "{:<28} {:>6} {:>7} {:>11} {:>10} {:>6.2}: {:>13} {:>9.1}",
            r.clip,
            r.joints,
            r.frames,
            r.raw_bytes,
            r.compressed_bytes,
            r.raw_bytes as f64 / r.compressed_bytes as f64,
            fmt_len(r.max_error, r.metres_per_unit),
            r.seconds * 1e3
        );
        if let Some(v) = r.verified {
            let _ = write!(
                s,
                " {:>13} {:>13} {:>13}",
                fmt_len(v.max, r.metres_per_unit),
                fmt_len(v.mean, r.metres_per_unit),
                fmt_len(v.p99, r.metres_per_unit)
            );
        }
        s.push('\n');
    }
    let raw: usize = rows.iter().map(|r| r.raw_bytes).sum();
    let comp: usize = rows.iter().map(|r| r.compressed_bytes).sum();
    let secs: f64 = rows.iter().map(|r| r.seconds).sum();
    let worst = rows
        .iter()
        .max_by(|a, b| a.max_error.total_cmp(&b.max_error));
    let _ = write!(
        s,
        "{:<28} {:>6} {:>7} {:>11} {:>10} {:>6.2}: {:>13} {:>9.1}",
        format!("total ({} clips)", rows.len()),
        "",
        rows.iter().map(|r| r.frames).sum::<usize>(),
        raw,
        comp,
        raw as f64 / comp.max(1) as f64,
        worst.map_or_else(String::new, |r| fmt_len(r.max_error, r.metres_per_unit)),
        secs * 1e3
    );
    if verify {
        let vworst = rows
            .iter()
            .filter_map(|r| r.verified.map(|v| (v.max, r.metres_per_unit)))
            .max_by(|a, b| a.0.total_cmp(&b.0));
        if let Some((m, mpu)) = vworst {
            let _ = write!(s, " {:>13}", fmt_len(m, mpu));
        }
    }
    let _ = write!(
        s,
        "\ncompression speed: {:.1} MB/s of raw clip per thread",
        raw as f64 / 1e6 / secs.max(1e-9)
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (xorshift64*).
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }

        fn f(&mut self, scale: f32) -> f32 {
            ((self.next() >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * scale
        }

        fn transform(&mut self, near: Option<&Transform>) -> Transform {
            let q = match (near, self.next() % 4) {
                // Near-opposite to the previous frame's rotation (the nlerp
                // sign flip), or the same one negated exactly.
                (Some(p), 0) => -p.rotation,
                (Some(p), 1) => Quat::new(
                    -p.rotation.x + self.f(1e-3),
                    -p.rotation.y,
                    -p.rotation.z,
                    -p.rotation.w,
                ),
                // Unnormalised, as decoded tracks are before `set_track`.
                _ => Quat::new(self.f(1.0), self.f(1.0), self.f(1.0), self.f(1.0)),
            };
            let s = if self.next().is_multiple_of(3) {
                Vec3::ONE
            } else {
                Vec3::new(self.f(3.0), self.f(3.0), self.f(3.0))
            };
            Transform::new(Vec3::new(self.f(500.0), self.f(0.1), self.f(50.0)), q, s)
        }
    }

    /// `wider` orders angles as `atan2` does, including equal ones, zero
    /// sides and `(0, 0)`.
    #[test]
    fn wider_orders_as_atan2() {
        let mut rng = Rng(0x0dd_ba11);
        let mut sides = vec![(0.0, 0.0), (0.0, 1.0), (1.0, 0.0), (0.0, 0.5), (1e-30, 1.0)];
        for _ in 0..300 {
            let v = rng.f(1.0).abs();
            // Many near-equal angles: scaled copies and one-ulp neighbours.
            let c = rng.f(1.0).abs();
            sides.push((v, c));
            sides.push((v * 0.5, c * 0.5));
            sides.push((f32::from_bits(v.to_bits() + 1), c));
        }
        for &a in &sides {
            for &b in &sides {
                let (ta, tb) = (a.0.atan2(a.1), b.0.atan2(b.1));
                if wider(a, b) {
                    assert!(ta >= tb, "{a:?} {b:?}");
                }
                if ta > tb {
                    assert!(wider(a, b), "{a:?} {b:?}");
                }
            }
        }
    }

    fn lane(m: &Affine8, i: usize) -> [[u32; 3]; 4] {
        m.c.map(|col| col.map(|v| v.to_array()[i].to_bits()))
    }

    /// The eight-lane sampler gives every lane the bits of the scalar
    /// `Affine::from_trs` of the frame (or of `lerp_t` halfway between two
    /// frames), for every segment length and block, padding included: the
    /// compressor's choices, and so its output, do not depend on it.
    #[test]
    fn local8_has_the_scalar_bits_in_every_lane() {
        let mut rng = Rng(0x5eed_1234_abcd_0001);
        for case in 0..400 {
            let len = 1 + case % 23;
            let mut frames: Vec<Transform> = Vec::with_capacity(len);
            for f in 0..len {
                let t = rng.transform(if f > 0 { frames.last() } else { None });
                frames.push(t);
            }
            let samples = sample_count(len);
            for b in 0..sample_blocks(samples) {
                let count = samples.saturating_sub(8 * b).min(8);
                let got = local8(|f| &frames[f], len, b, count);
                for i in 0..8 {
                    let s = 8 * b + i.min(count.max(1) - 1);
                    let t = if s < len {
                        frames[s]
                    } else {
                        lerp_t(&frames[s - len], &frames[s - len + 1], 0.5)
                    };
                    let want = Affine::from_trs(t.translation, t.rotation, t.scale);
                    let bits = |a: &Affine| a.c.map(|col| col.map(f32::to_bits));
                    assert_eq!(lane(&got, i), bits(&want), "len {len}, block {b}, lane {i}");
                    // The lane-wise product (FK) and column norms, too.
                    let (prod, wprod) = (got.mul(&got), want.mul(&want));
                    assert_eq!(lane(&prod, i), bits(&wprod), "product, len {len}");
                    let norms = got.max_col_norm().to_array()[i];
                    assert_eq!(norms.to_bits(), want.max_col_norm().to_bits());
                }
            }
        }
    }
}
