//! The AVX2 + FMA blend, on x86-64 CPUs that have both (detected once at
//! run time, or known at compile time with `-C target-feature=+avx2,+fma`).
//!
//! The arithmetic is the portable kernel's (see the [module docs](super)),
//! with the same weights, sign alignment, rest-pose term and additive
//! formulas, but organised around 256-bit registers, and every layer of a
//! block is summed in registers and stored once, finished (the portable
//! kernel makes a pass over the output per layer):
//!
//! - **Uniform weights** (no masks, no additive layers, total weight at or
//!   above the threshold, the common case): each block's translations,
//!   rotations and scales are read and written as whole 8-float vectors
//!   (`[x | y]`, `[z | w]` for rotations), since one weight serves every
//!   joint; one block per step, its sums in six registers. The first
//!   layer only scales (nothing to align its sign with). Jobs with two to
//!   four layers of positive weight look their weights and poses up once
//!   per call and sum the rotations of the third and fourth layers in
//!   passes of their own (see `uniform_fixed`).
//! - **Any other job**: each 8-lane value is one component of two
//!   neighbouring blocks (the low half from block `b`, the high half from
//!   `b + 1`), since weights differ by joint; two such pairs (sixteen
//!   joints) go through each step, as two independent chains. An odd last
//!   block goes through the same code with its own values in both halves,
//!   and only the low half is stored.
//!
//! Products and sums are fused multiply-adds, and the sign-alignment dot
//! products sum two halves, so that the chain from one layer's sum to the
//! next layer's sign is short. The results equal the portable kernel's
//! within 1e-5, not bit for bit (fused and unfused roundings, another
//! grouping of the dot products); agreement with it and with the scalar
//! reference is tested in `tests/tests/blend.rs` on every CPU with AVX2 and
//! FMA.
#![allow(unsafe_code)]
#![deny(clippy::undocumented_unsafe_blocks)]

use core::arch::x86_64::*;

use super::{BlendJob, BlendLayer};
use crate::fk::avx2::load_blocks as load;
use crate::soa::SoaTransform;

/// Whether this module's kernels run ([`crate::cpu::avx2_kernels`]).
pub(crate) use crate::cpu::avx2_kernels as available;

type F8 = __m256;

/// The ten components of two blocks in `SoaTransform` field order:
/// translation x, y, z; rotation x, y, z, w; scale x, y, z.
type Pair = [F8; 10];

/// Index of the rotation's first component in a [`Pair`].
const Q: usize = 3;
/// Index of the scale's first component in a [`Pair`].
const S: usize = 7;

/// Blends a validated `job` into `out` and returns `true` when this CPU has
/// AVX2 and FMA and the `portable` feature is off; `false` (and `out`
/// untouched) otherwise.
///
/// `job` must have passed [`BlendJob::validate`] for `out.len()`: every
/// pose, mask and the rest pose have `out`'s length.
pub(super) fn blend(job: &BlendJob<'_>, out: &mut [SoaTransform]) -> bool {
    if !available() {
        return false;
    }
    // SAFETY: this CPU runs AVX2 and FMA code (asked above).
    unsafe { run(job, out) };
    true
}

#[target_feature(enable = "avx2,fma")]
fn run(job: &BlendJob<'_>, out: &mut [SoaTransform]) {
    match super::uniform_total(job) {
        Some(total) => uniform(job.layers, 1.0 / total, out),
        None => general(job, out),
    }
}

/// Layers without masks whose weights sum to `1 / inv >= threshold`: the
/// weighted sum with pre-normalised weights, block by block.
///
/// With one weight for every joint, a block's floats need not be paired
/// lane for lane with another block's: its translations (12 floats), its
/// scales (12) and its rotations (16) are read and written as whole 8-float
/// vectors (and one 4-float vector each for translations and scales), half
/// the loads and stores of two blocks' components paired into registers.
/// The rotation vectors hold `[x | y]` and `[z | w]`, so a dot product is
/// two products summed, then its two halves.
#[target_feature(enable = "avx2,fma")]
fn uniform(layers: &[BlendLayer<'_>], inv: f32, out: &mut [SoaTransform]) {
    // Two to four layers with a positive weight (the common jobs) take a
    // kernel unrolled over a fixed count of layers, with the weights and
    // poses looked up once per call rather than once per block and layer:
    // on three layers the general loop spends two fifths of its
    // instructions on that bookkeeping.
    if let Some((w, p)) = super::positive_layers::<2>(layers, inv) {
        return uniform_fixed(w, p, out);
    }
    if let Some((w, p)) = super::positive_layers::<3>(layers, inv) {
        return uniform_fixed(w, p, out);
    }
    if let Some((w, p)) = super::positive_layers::<4>(layers, inv) {
        return uniform_fixed(w, p, out);
    }
    // One block per step: its sums take six registers, so nothing spills
    // (two blocks' sums and loads do not fit in sixteen, and the spills
    // cost more than the second chain gains), and the blocks are
    // independent, so the CPU overlaps one block's chain of sign
    // alignments (each layer's waits on the sum before it) with the next
    // block's.
    for (b, o) in out.chunks_exact_mut(1).enumerate() {
        uniform_blocks::<1>(layers, inv, b, o);
    }
}

/// [`uniform_blocks`] for `N` (2 to 4) layers, all with a positive weight
/// `w`: one pass over the blocks sums every layer's translations and
/// scales and the first two layers' rotations in registers; each further
/// layer's rotation takes a pass of its own over the output. A layer's sign
/// alignment waits for the rotation sum before it: within a pass the
/// blocks' chains are independent and the CPU overlaps many of them, where
/// the whole chain summed block by block in registers runs about a tenth
/// slower on three layers. Per element the operations and their order are
/// [`uniform_blocks`]'s, so the bits are the same.
#[target_feature(enable = "avx2,fma")]
fn uniform_fixed<const N: usize>(
    w: [f32; N],
    poses: [&[SoaTransform]; N],
    out: &mut [SoaTransform],
) {
    const T: usize = 0;
    const QXY: usize = 12;
    const QZW: usize = 20;
    const SC: usize = 28;
    let w4 = w.map(|w| _mm_set1_ps(w));
    let w8s = w.map(|w| _mm256_set1_ps(w));
    let sign = |acc: (F8, F8), xy: F8, zw: F8, w8: F8| {
        let d = dot8(acc.0, acc.1, xy, zw);
        let negative = _mm256_cmp_ps::<_CMP_LT_OQ>(d, _mm256_setzero_ps());
        _mm256_xor_ps(w8, _mm256_and_ps(negative, _mm256_set1_ps(-0.0)))
    };
    let finish = |o: &mut [f32], qxy: F8, qzw: F8, last: bool| {
        if last {
            let n8 = _mm256_div_ps(
                _mm256_set1_ps(1.0),
                _mm256_sqrt_ps(dot8(qxy, qzw, qxy, qzw)),
            );
            st8(o, QXY, _mm256_mul_ps(qxy, n8));
            st8(o, QZW, _mm256_mul_ps(qzw, n8));
        } else {
            st8(o, QXY, qxy);
            st8(o, QZW, qzw);
        }
    };
    for (b, o) in out.iter_mut().enumerate() {
        let zero = _mm256_setzero_ps();
        let (mut t8, mut s8) = (zero, zero);
        let (mut t4, mut s4) = (_mm_setzero_ps(), _mm_setzero_ps());
        for i in 0..N {
            let Some(pose) = poses[i].get(b) else {
                return;
            };
            let x: &[f32] = bytemuck::cast_slice(core::slice::from_ref(pose));
            let (w4, w8) = (w4[i], w8s[i]);
            t8 = _mm256_fmadd_ps(ld8(x, T), w8, t8);
            t4 = _mm_fmadd_ps(ld4(x, T + 8), w4, t4);
            s8 = _mm256_fmadd_ps(ld8(x, SC), w8, s8);
            s4 = _mm_fmadd_ps(ld4(x, SC + 8), w4, s4);
        }
        let (Some(p0), Some(p1)) = (poses[0].get(b), poses.get(1).and_then(|p| p.get(b))) else {
            return;
        };
        let x0: &[f32] = bytemuck::cast_slice(core::slice::from_ref(p0));
        let x1: &[f32] = bytemuck::cast_slice(core::slice::from_ref(p1));
        let w0 = w8s[0];
        let qxy = _mm256_fmadd_ps(ld8(x0, QXY), w0, zero);
        let qzw = _mm256_fmadd_ps(ld8(x0, QZW), w0, zero);
        let (xy, zw) = (ld8(x1, QXY), ld8(x1, QZW));
        let wq = sign((qxy, qzw), xy, zw, w8s[1]);
        let qxy = _mm256_fmadd_ps(xy, wq, qxy);
        let qzw = _mm256_fmadd_ps(zw, wq, qzw);
        let o: &mut [f32] = bytemuck::cast_slice_mut(core::slice::from_mut(o));
        st8(o, T, t8);
        st4(o, T + 8, t4);
        st8(o, SC, s8);
        st4(o, SC + 8, s4);
        finish(o, qxy, qzw, N == 2);
    }
    for i in 2..N {
        for (o, p) in out.iter_mut().zip(poses[i]) {
            let x: &[f32] = bytemuck::cast_slice(core::slice::from_ref(p));
            let o: &mut [f32] = bytemuck::cast_slice_mut(core::slice::from_mut(o));
            let (qxy, qzw) = (ld8(o, QXY), ld8(o, QZW));
            let (xy, zw) = (ld8(x, QXY), ld8(x, QZW));
            let wq = sign((qxy, qzw), xy, zw, w8s[i]);
            let qxy = _mm256_fmadd_ps(xy, wq, qxy);
            let qzw = _mm256_fmadd_ps(zw, wq, qzw);
            finish(o, qxy, qzw, i + 1 == N);
        }
    }
}

/// [`uniform`] of the `K` blocks `out`, the first of which is block `b`
/// (none when `out` is shorter than `K`). Called with `K = 1`: the same
/// code written for one block without the arrays compiles to more
/// instructions and measurably slower code.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn uniform_blocks<const K: usize>(
    layers: &[BlendLayer<'_>],
    inv: f32,
    b: usize,
    out: &mut [SoaTransform],
) {
    // Float offsets in a block: translation, rotation, scale.
    const T: usize = 0;
    const QXY: usize = 12;
    const QZW: usize = 20;
    const SC: usize = 28;
    let Ok(out) = <&mut [SoaTransform; K]>::try_from(out) else {
        return;
    };
    let zero = _mm256_setzero_ps();
    let (mut t8, mut s8, mut qxy, mut qzw) = ([zero; K], [zero; K], [zero; K], [zero; K]);
    let (mut t4, mut s4) = ([_mm_setzero_ps(); K], [_mm_setzero_ps(); K]);
    let mut first = true;
    for layer in layers {
        if layer.weight <= 0.0 {
            continue;
        }
        let w4 = _mm_set1_ps(layer.weight * inv);
        let w8 = _mm256_set_m128(w4, w4);
        let Some(pose) = layer.pose.get(b..b + K) else {
            continue;
        };
        for k in 0..K {
            let x: &[f32] = bytemuck::cast_slice(core::slice::from_ref(&pose[k]));
            t8[k] = _mm256_fmadd_ps(ld8(x, T), w8, t8[k]);
            t4[k] = _mm_fmadd_ps(ld4(x, T + 8), w4, t4[k]);
            s8[k] = _mm256_fmadd_ps(ld8(x, SC), w8, s8[k]);
            s4[k] = _mm_fmadd_ps(ld4(x, SC + 8), w4, s4[k]);
            let (xy, zw) = (ld8(x, QXY), ld8(x, QZW));
            // The first layer needs no sign alignment (the sum before it
            // is zero, and a zero dot product flips nothing).
            let wq = if first {
                w8
            } else {
                let d = dot_halves(qxy[k], qzw[k], xy, zw);
                let negative = _mm_cmplt_ps(d, _mm_setzero_ps());
                let f = _mm_xor_ps(w4, _mm_and_ps(negative, _mm_set1_ps(-0.0)));
                _mm256_set_m128(f, f)
            };
            qxy[k] = _mm256_fmadd_ps(xy, wq, qxy[k]);
            qzw[k] = _mm256_fmadd_ps(zw, wq, qzw[k]);
        }
        first = false;
    }
    for (k, o) in out.iter_mut().enumerate() {
        let n4 = _mm_div_ps(
            _mm_set1_ps(1.0),
            _mm_sqrt_ps(dot_halves(qxy[k], qzw[k], qxy[k], qzw[k])),
        );
        let n8 = _mm256_set_m128(n4, n4);
        let o: &mut [f32] = bytemuck::cast_slice_mut(core::slice::from_mut(o));
        st8(o, T, t8[k]);
        st4(o, T + 8, t4[k]);
        st8(o, QXY, _mm256_mul_ps(qxy[k], n8));
        st8(o, QZW, _mm256_mul_ps(qzw[k], n8));
        st8(o, SC, s8[k]);
        st4(o, SC + 8, s4[k]);
    }
}

/// [`dot_halves`] in both halves of a register, with the same bits (each
/// half adds the same two products). The sign and the normalisation that
/// use it then stay eight lanes wide, with a swap of halves on each
/// block's chain where a four-lane dot product needs an extract and an
/// insert.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn dot8(axy: F8, azw: F8, bxy: F8, bzw: F8) -> F8 {
    let p = _mm256_fmadd_ps(axy, bxy, _mm256_mul_ps(azw, bzw));
    _mm256_add_ps(p, _mm256_permute2f128_ps::<1>(p, p))
}

/// The four lanes' dot products of rotations held as `[x | y]`, `[z | w]`.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn dot_halves(axy: F8, azw: F8, bxy: F8, bzw: F8) -> __m128 {
    let p = _mm256_fmadd_ps(axy, bxy, _mm256_mul_ps(azw, bzw));
    _mm_add_ps(_mm256_castps256_ps128(p), _mm256_extractf128_ps::<1>(p))
}

/// The 8 floats of `a` (one block's 40) from `at`, a constant at every
/// call that leaves them inside the block.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn ld8(a: &[f32], at: usize) -> F8 {
    let mut v = [0.0f32; 8];
    if let Some(s) = a.get(at..at + 8) {
        v.copy_from_slice(s);
    }
    bytemuck::cast(v)
}

/// The 4 floats of `a` from `at`.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn ld4(a: &[f32], at: usize) -> __m128 {
    let mut v = [0.0f32; 4];
    if let Some(s) = a.get(at..at + 4) {
        v.copy_from_slice(s);
    }
    bytemuck::cast(v)
}

/// Writes `v` to the 8 floats of `a` from `at`.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn st8(a: &mut [f32], at: usize, v: F8) {
    if let Some(s) = a.get_mut(at..at + 8) {
        s.copy_from_slice(&bytemuck::cast::<F8, [f32; 8]>(v));
    }
}

/// Writes `v` to the 4 floats of `a` from `at`.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn st4(a: &mut [f32], at: usize, v: __m128) {
    if let Some(s) = a.get_mut(at..at + 4) {
        s.copy_from_slice(&bytemuck::cast::<__m128, [f32; 4]>(v));
    }
}

/// Any job (masks, additive layers, weights below the threshold): every
/// block of `out`, four at a time (two independent pairs of blocks with
/// their components paired lane for lane, since weights differ by joint),
/// then the one to three blocks left as one or two pairs.
///
/// A pair's sum is a chain (each layer's sign alignment waits for the sum
/// of the layers before it, the normalisation for the last), and one pair
/// is about as much work as the out-of-order window holds; two pairs per
/// step give the CPU two chains to overlap.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn general(job: &BlendJob<'_>, out: &mut [SoaTransform]) {
    let n = out.len();
    let mut b = 0;
    while b + 4 <= n {
        let [p, q] = group::<2>(job, [(b, b + 1), (b + 2, b + 3)]);
        store(out, b, b + 1, &p);
        store(out, b + 2, b + 3, &q);
        b += 4;
    }
    while b < n {
        let hi = (b + 1).min(n - 1);
        let [p] = group::<1>(job, [(b, hi)]);
        store(out, b, hi, &p);
        b += 2;
    }
}

/// The blended pairs of blocks `(lo, hi)` of `blocks` (`hi == lo` for an
/// odd last block): the weighted sum, the rest pose where the summed weight
/// is below the threshold, the division by the summed weight, then every
/// additive layer.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn group<const K: usize>(job: &BlendJob<'_>, blocks: [(usize, usize); K]) -> [Pair; K] {
    let zero = _mm256_setzero_ps();
    let mut acc = [[zero; 10]; K];
    let mut total = [zero; K];
    // The first layer needs no sign alignment (the sum before it is zero,
    // and a zero dot product flips nothing), so it only scales.
    let mut layers = job.layers.iter().filter(|l| l.weight > 0.0);
    if let Some(layer) = layers.next() {
        for ((acc, total), &(lo, hi)) in acc.iter_mut().zip(&mut total).zip(&blocks) {
            let w = weight(layer, lo, hi);
            let v = load(&layer.pose[lo], &layer.pose[hi]);
            for i in 0..10 {
                acc[i] = _mm256_mul_ps(v[i], w);
            }
            *total = w;
        }
    }
    for layer in layers {
        for ((acc, total), &(lo, hi)) in acc.iter_mut().zip(&mut total).zip(&blocks) {
            let w = weight(layer, lo, hi);
            accumulate(acc, &load(&layer.pose[lo], &layer.pose[hi]), w);
            *total = _mm256_add_ps(*total, w);
        }
    }
    let threshold = _mm256_set1_ps(job.threshold);
    for ((acc, total), &(lo, hi)) in acc.iter_mut().zip(&total).zip(&blocks) {
        let rw = _mm256_max_ps(_mm256_sub_ps(threshold, *total), zero);
        accumulate(acc, &load(&job.rest[lo], &job.rest[hi]), rw);
        let inv = _mm256_div_ps(_mm256_set1_ps(1.0), _mm256_add_ps(*total, rw));
        for i in 0..3 {
            acc[i] = _mm256_mul_ps(acc[i], inv);
            acc[S + i] = _mm256_mul_ps(acc[S + i], inv);
        }
        normalize_rotation(acc);
    }
    for layer in job.additive {
        if layer.weight > 0.0 {
            for (acc, &(lo, hi)) in acc.iter_mut().zip(&blocks) {
                let w = weight(layer, lo, hi);
                apply_additive(acc, &load(&layer.pose[lo], &layer.pose[hi]), w);
            }
        }
    }
    acc
}

/// The layer's weight times its mask's weights of blocks `lo` and `hi`.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn weight(layer: &BlendLayer<'_>, lo: usize, hi: usize) -> F8 {
    let w = _mm256_set1_ps(layer.weight);
    match layer.joint_weights {
        Some(jw) => {
            let m = _mm256_set_m128(
                bytemuck::cast(jw.weights[hi]),
                bytemuck::cast(jw.weights[lo]),
            );
            _mm256_mul_ps(w, m)
        }
        None => w,
    }
}

/// Stores the low half of `v` to block `lo` and, when `hi` is another
/// block, the high half to `hi`.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn store(out: &mut [SoaTransform], lo: usize, hi: usize, v: &Pair) {
    let o: &mut [[f32; 4]; 10] = bytemuck::cast_mut(&mut out[lo]);
    for i in 0..10 {
        o[i] = bytemuck::cast(_mm256_castps256_ps128(v[i]));
    }
    if hi != lo {
        let o: &mut [[f32; 4]; 10] = bytemuck::cast_mut(&mut out[hi]);
        for i in 0..10 {
            o[i] = bytemuck::cast(_mm256_extractf128_ps::<1>(v[i]));
        }
    }
}

/// `w` with its sign flipped in the lanes where `x < 0` (`-0.0` counts as
/// non-negative, NaN too, as in the portable kernel).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn flip_where_negative(w: F8, x: F8) -> F8 {
    let negative = _mm256_cmp_ps::<_CMP_LT_OQ>(x, _mm256_setzero_ps());
    _mm256_xor_ps(w, _mm256_and_ps(negative, _mm256_set1_ps(-0.0)))
}

/// Lane-wise dot product of two quaternions (`a[Q..]`, `b[Q..]`).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn dot(a: &[F8], b: &[F8]) -> F8 {
    // Two halves summed: the sign alignment of each layer waits for this
    // dot product, so its depth (three operations, not four) is on the
    // pair's critical path.
    let xy = _mm256_fmadd_ps(a[0], b[0], _mm256_mul_ps(a[1], b[1]));
    let zw = _mm256_fmadd_ps(a[2], b[2], _mm256_mul_ps(a[3], b[3]));
    _mm256_add_ps(xy, zw)
}

/// `acc += w x`, the rotation's weight sign-aligned with the sum so far.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn accumulate(acc: &mut Pair, x: &Pair, w: F8) {
    for i in 0..3 {
        acc[i] = _mm256_fmadd_ps(x[i], w, acc[i]);
        acc[S + i] = _mm256_fmadd_ps(x[S + i], w, acc[S + i]);
    }
    let wq = flip_where_negative(w, dot(&acc[Q..S], &x[Q..S]));
    for i in Q..S {
        acc[i] = _mm256_fmadd_ps(x[i], wq, acc[i]);
    }
}

/// Normalises the rotation of `v` (exact square root and division, as the
/// portable kernel's).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn normalize_rotation(v: &mut Pair) {
    let q = &mut v[Q..S];
    let inv = _mm256_div_ps(_mm256_set1_ps(1.0), _mm256_sqrt_ps(dot(q, q)));
    for c in q {
        *c = _mm256_mul_ps(*c, inv);
    }
}

/// `o = o · nlerp(identity, add, w)` for rotations, `t += w t_add`,
/// `s *= 1 + w (s_add - 1)`.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn apply_additive(o: &mut Pair, add: &Pair, w: F8) {
    let one = _mm256_set1_ps(1.0);
    // nlerp(identity, q_add, w), q_add taken with w >= 0 (short arc).
    let wq = flip_where_negative(w, add[S - 1]);
    let mut p = [
        _mm256_mul_ps(add[Q], wq),
        _mm256_mul_ps(add[Q + 1], wq),
        _mm256_mul_ps(add[Q + 2], wq),
        _mm256_setzero_ps(),
    ];
    let aw = flip_where_negative(add[Q + 3], add[Q + 3]);
    p[3] = _mm256_fmadd_ps(_mm256_sub_ps(aw, one), w, one);
    let inv = _mm256_div_ps(one, _mm256_sqrt_ps(dot(&p, &p)));
    for c in &mut p {
        *c = _mm256_mul_ps(*c, inv);
    }
    let [bx, by, bz, bw] = p;
    let [ax, ay, az, aw] = [o[Q], o[Q + 1], o[Q + 2], o[Q + 3]];
    // Hamilton product `a * b`; both factors are unit, so the product is
    // unit to rounding.
    o[Q] = _mm256_fmadd_ps(
        aw,
        bx,
        _mm256_fmadd_ps(ax, bw, _mm256_fmsub_ps(ay, bz, _mm256_mul_ps(az, by))),
    );
    o[Q + 1] = _mm256_fmadd_ps(
        aw,
        by,
        _mm256_fmadd_ps(ay, bw, _mm256_fmsub_ps(az, bx, _mm256_mul_ps(ax, bz))),
    );
    o[Q + 2] = _mm256_fmadd_ps(
        aw,
        bz,
        _mm256_fmadd_ps(az, bw, _mm256_fmsub_ps(ax, by, _mm256_mul_ps(ay, bx))),
    );
    o[Q + 3] = _mm256_fmsub_ps(
        aw,
        bw,
        _mm256_fmadd_ps(ax, bx, _mm256_fmadd_ps(ay, by, _mm256_mul_ps(az, bz))),
    );
    for i in 0..3 {
        o[i] = _mm256_fmadd_ps(add[i], w, o[i]);
        let f = _mm256_fmadd_ps(_mm256_sub_ps(add[S + i], one), w, one);
        o[S + i] = _mm256_mul_ps(o[S + i], f);
    }
}

#[cfg(test)]
mod tests {
    //! The unrolled uniform kernel against the general uniform loop, bit
    //! for bit (blending picks only one of them).
    extern crate alloc;

    use alloc::vec::Vec;

    use proptest::prelude::*;

    use super::*;
    use crate::blend::tests::uniform_case;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn unrolled_uniform_kernel_has_the_general_loops_bits((poses, weights) in uniform_case()) {
            if !available() {
                return Ok(());
            }
            let n = poses[0].len();
            let layers: Vec<BlendLayer<'_>> =
                poses.iter().zip(&weights).map(|(p, &w)| BlendLayer::new(p, w)).collect();
            let inv = 1.0 / weights[..layers.len()].iter().sum::<f32>();
            let mut fixed = alloc::vec![SoaTransform::IDENTITY; n];
            let mut general = fixed.clone();
            // SAFETY: this CPU runs AVX2 and FMA code (asked above).
            unsafe { uniform(&layers, inv, &mut fixed) };
            for (b, o) in general.chunks_exact_mut(1).enumerate() {
                // SAFETY: as above.
                unsafe { uniform_blocks::<1>(&layers, inv, b, o) };
            }
            let bits = |v: &[SoaTransform]| -> Vec<u32> {
                bytemuck::cast_slice::<SoaTransform, f32>(v).iter().map(|x| x.to_bits()).collect()
            };
            prop_assert_eq!(bits(&fixed), bits(&general));
        }
    }
}
