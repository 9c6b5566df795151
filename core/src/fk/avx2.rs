//! The AVX2 + FMA local-to-model: the local matrices of eight joints (two
//! SoA blocks) per step, on x86-64 CPUs that have both (detected once at
//! run time, or known at compile time with `-C target-feature=+avx2,+fma`).
//!
//! The arithmetic is the portable kernel's (see the [module docs](super)),
//! organised around what AVX2 makes cheap:
//!
//! - The local `T R S` to affine conversion runs on eight joints at once
//!   (each 8-lane value one component of two neighbouring blocks) with
//!   fused multiply-adds, into one of two small stack buffers of twelve
//!   8-lane rows: the next pair of blocks is converted before this pair's
//!   joints read theirs, so no read waits for a store in flight.
//! - The parent multiply stays one joint at a time, since a joint's parent
//!   may be the joint just before it: each column is three fused
//!   multiply-adds of the parent's columns with local elements broadcast
//!   straight from the buffer (a broadcast from memory is a plain load with
//!   AVX, where the portable kernel pays a shuffle per element).
//!
//! On CPUs with AVX-512 VL the same kernel is compiled a second time with
//! those features: each broadcast folds into its multiply-add as an
//! embedded-broadcast operand (same operations, same bits).
//!
//! An odd last block goes through the same code with its own values in both
//! halves; only its four joints are stored. The results equal the portable
//! kernel's within 1e-5, not bit for bit (fused and unfused roundings);
//! agreement with it and with the scalar reference is tested in
//! `tests/tests/fk.rs` on every CPU with AVX2 and FMA.
#![allow(unsafe_code)]
#![deny(clippy::undocumented_unsafe_blocks)]

use core::arch::x86_64::*;

use super::FkJob;
use crate::math::Mat4;
use crate::soa::{SoaTransform, LANES};

/// Whether this module's kernels run ([`crate::cpu::avx2_kernels`]).
pub(crate) use crate::cpu::avx2_kernels as available;

type F8 = __m256;

/// The 3x4 affine parts of eight local matrices: row `3 c + r` holds
/// element `r` of column `c` for the eight joints (32-byte aligned, so each
/// row is one aligned store).
#[repr(C, align(32))]
struct Locals([[f32; 8]; 12]);

/// Computes `job`'s model matrices and returns `true` when this CPU has
/// AVX2 and FMA and the `portable` feature is off; `false` (and `models`
/// untouched) otherwise.
///
/// `job` must have passed [`FkJob::validate`] for `models.len()`, with
/// `first < end`.
pub(super) fn local_to_model(job: &FkJob<'_>, models: &mut [Mat4]) -> bool {
    let root = job.root.copied().unwrap_or(Mat4::IDENTITY);
    local_to_model_range(
        job.skeleton.parents(),
        job.local,
        job.first,
        job.end,
        &root,
        models,
    )
}

/// The kernel of [`local_to_model`] over any parent table (the joint LOD's
/// reordered one too): model matrices of joints `first .. end` from the
/// blocks of `local`, roots multiplied by `root`; `true` when it ran
/// (this CPU has AVX2 and FMA, the `portable` feature is off), `false` and
/// `models` untouched otherwise.
///
/// Parents must precede their children (or be out of range: a root).
/// Joints whose block is missing from `local`, or past `parents` or
/// `models`, are not written.
pub(crate) fn local_to_model_range(
    parents: &[u16],
    local: &[SoaTransform],
    first: usize,
    end: usize,
    root: &Mat4,
    models: &mut [Mat4],
) -> bool {
    if !available() {
        return false;
    }
    if crate::cpu::avx512_kernels() {
        // SAFETY: this CPU runs AVX-512 F and VL code as well as AVX2 and
        // FMA (asked above).
        unsafe { run_evex(parents, local, first, end, root, models) };
    } else {
        // SAFETY: this CPU runs AVX2 and FMA code (asked above).
        unsafe { run(parents, local, first, end, root, models) };
    }
    true
}

/// The kernel, as a function compiled for the target features `$features`.
macro_rules! kernel {
    ($(#[$doc:meta])* $name:ident, $features:literal) => {
        $(#[$doc])*
        #[target_feature(enable = $features)]
        fn $name(
            parents: &[u16],
            local: &[SoaTransform],
            first: usize,
            end: usize,
            root: &Mat4,
            models: &mut [Mat4],
        ) {
            let root: [__m128; 4] = root.cols.map(bytemuck::cast);
            let end = end.min(parents.len()).min(models.len());
            let blocks = end.div_ceil(LANES).min(local.len());
            let end = end.min(blocks * LANES);
            // The local matrices of two pairs of blocks: the next pair's
            // are computed before this pair's joints are multiplied, so
            // that their stores have reached the cache when the broadcasts
            // read them (a 4-byte load inside a 32-byte store still in
            // flight waits for it, on the chain of every joint).
            let mut bufs = [Locals([[0.0; 8]; 12]), Locals([[0.0; 8]; 12])];
            let pair = |lo: usize, out: &mut Locals| {
                let hi = (lo + 1).min(blocks.saturating_sub(1));
                if let (Some(a), Some(b)) = (local.get(lo), local.get(hi)) {
                    affine(a, b, out);
                }
            };
            // The model matrix of joint `j - 1` once this call has
            // computed it: a child that follows its parent (most joints of
            // a chain) takes the parent from registers instead of waiting
            // for the store to forward. The bits are the stored ones
            // either way.
            let mut prev: Option<[__m128; 4]> = None;
            let mut lo = first / LANES;
            if lo < blocks {
                pair(lo, &mut bufs[0]);
            }
            let mut cur = 0;
            while lo < blocks {
                if lo + 2 < blocks {
                    pair(lo + 2, &mut bufs[cur ^ 1]);
                }
                let locals = &bufs[cur];
                cur ^= 1;
                let base = lo * LANES;
                let (from, to) = (first.max(base), end.min(base + 2 * LANES));
                let (done, todo) = models.split_at_mut(from.min(models.len()));
                let ps = parents.get(from..to).unwrap_or_default();
                for k in 0..ps.len().min(todo.len()) {
                    let j = from + k;
                    let p = ps[k] as usize;
                    let parent = match prev {
                        Some(m) if p + 1 == j => m,
                        // Parents precede children: in `done`, or written
                        // to `todo` earlier in this loop. NO_PARENT (and
                        // only it) is out of range of both.
                        _ => match done.get(p).or_else(|| todo.get(p.wrapping_sub(from))) {
                            Some(p) => p.cols.map(bytemuck::cast),
                            None => root,
                        },
                    };
                    let m = mul_affine(&parent, locals, (j - base) & (2 * LANES - 1));
                    todo[k].cols = m.map(bytemuck::cast);
                    prev = Some(m);
                }
                lo += 2;
            }
        }
    };
}

kernel!(
    /// The kernel on AVX2 and FMA.
    run,
    "avx2,fma"
);

kernel!(
    /// The same kernel where AVX-512 VL encodings exist: each broadcast of
    /// a local element folds into its multiply-add as an embedded-broadcast
    /// operand, a dozen fewer instructions per joint. The operations, and
    /// so the bits, are [`run`]'s.
    run_evex,
    "avx2,fma,avx512f,avx512vl"
);

/// Blocks `lo` and `hi` as eight lanes per component, in `SoaTransform`
/// field order (`lo` in the low halves); blending loads its pairs of
/// blocks with it too.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(crate) fn load_blocks(lo: &SoaTransform, hi: &SoaTransform) -> [F8; 10] {
    let lo: &[[f32; 4]; 10] = bytemuck::cast_ref(lo);
    let hi: &[[f32; 4]; 10] = bytemuck::cast_ref(hi);
    let mut v = [_mm256_setzero_ps(); 10];
    for i in 0..10 {
        v[i] = _mm256_set_m128(bytemuck::cast(hi[i]), bytemuck::cast(lo[i]));
    }
    v
}

/// The affine matrices `T R S` of blocks `lo` and `hi` into `out` (the
/// portable kernel's formulas, eight lanes wide).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn affine(lo: &SoaTransform, hi: &SoaTransform, out: &mut Locals) {
    let [tx, ty, tz, qx, qy, qz, qw, sx, sy, sz] = load_blocks(lo, hi);
    let two = _mm256_set1_ps(2.0);
    let one = _mm256_set1_ps(1.0);
    let (x2, y2, z2) = (
        _mm256_mul_ps(qx, two),
        _mm256_mul_ps(qy, two),
        _mm256_mul_ps(qz, two),
    );
    let (xx, yy, zz) = (
        _mm256_mul_ps(qx, x2),
        _mm256_mul_ps(qy, y2),
        _mm256_mul_ps(qz, z2),
    );
    let (xy, xz, yz) = (
        _mm256_mul_ps(qx, y2),
        _mm256_mul_ps(qx, z2),
        _mm256_mul_ps(qy, z2),
    );
    // `xy ± w z2` and the like as one fused multiply-add each.
    let m = |a: F8, b: F8| _mm256_mul_ps(a, b);
    let rows = [
        m(_mm256_sub_ps(one, _mm256_add_ps(yy, zz)), sx),
        m(_mm256_fmadd_ps(qw, z2, xy), sx),
        m(_mm256_fnmadd_ps(qw, y2, xz), sx),
        m(_mm256_fnmadd_ps(qw, z2, xy), sy),
        m(_mm256_sub_ps(one, _mm256_add_ps(xx, zz)), sy),
        m(_mm256_fmadd_ps(qw, x2, yz), sy),
        m(_mm256_fmadd_ps(qw, y2, xz), sz),
        m(_mm256_fnmadd_ps(qw, x2, yz), sz),
        m(_mm256_sub_ps(one, _mm256_add_ps(xx, yy)), sz),
        tx,
        ty,
        tz,
    ];
    for (o, r) in out.0.iter_mut().zip(rows) {
        *o = bytemuck::cast(r);
    }
}

/// `parent * local[lane]`, the local matrix affine.
///
/// The parent's columns come from the previous joint's store, so the
/// latency of this function is the critical path of FK down a chain: each
/// column is a chain of three fused multiply-adds.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn mul_affine(p: &[__m128; 4], local: &Locals, lane: usize) -> [__m128; 4] {
    let e = |c: usize, r: usize| _mm_broadcast_ss(&local.0[3 * c + r][lane]);
    let col = |c: usize| {
        let v = _mm_mul_ps(p[0], e(c, 0));
        let v = _mm_fmadd_ps(p[1], e(c, 1), v);
        _mm_fmadd_ps(p[2], e(c, 2), v)
    };
    let t = _mm_fmadd_ps(p[0], e(3, 0), p[3]);
    let t = _mm_fmadd_ps(p[1], e(3, 1), t);
    let t = _mm_fmadd_ps(p[2], e(3, 2), t);
    [col(0), col(1), col(2), t]
}

#[cfg(test)]
mod tests {
    //! The AVX-512 VL instance against the AVX2 one, bit for bit (the
    //! comparisons with the portable kernel and the scalar reference in
    //! `tests/tests/fk.rs` run whichever this CPU dispatches to).
    extern crate alloc;

    use alloc::vec;
    use alloc::vec::Vec;

    use proptest::prelude::*;

    use super::*;
    use crate::skeleton::NO_PARENT;

    /// A parent table of `n` joints: each joint's parent is an earlier
    /// joint, often the one just before it (a chain), or none (a root).
    fn parents(n: usize) -> impl Strategy<Value = Vec<u16>> {
        prop::collection::vec((0u8..4, any::<prop::sample::Index>()), n).prop_map(|v| {
            v.iter()
                .enumerate()
                .map(|(j, &(kind, at))| match (j, kind) {
                    (0, _) | (_, 0) => NO_PARENT,
                    (j, 1) => at.index(j) as u16,
                    (j, _) => (j - 1) as u16,
                })
                .collect()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn the_evex_instance_has_the_avx2_bits(
            (parents, values, first, end) in (1usize..40).prop_flat_map(|n| (
                parents(n),
                prop::collection::vec(-2.0f32..2.0, 40 * n.div_ceil(LANES)),
                0..=n,
                0..=n,
            )),
        ) {
            if !crate::cpu::avx512() {
                return Ok(()); // nothing to compare without AVX-512 VL
            }
            let local: Vec<SoaTransform> = values
                .chunks_exact(40)
                .map(|c| {
                    let mut t = SoaTransform::IDENTITY;
                    bytemuck::cast_slice_mut(core::slice::from_mut(&mut t)).copy_from_slice(c);
                    t
                })
                .collect();
            let (first, end) = (first.min(end), first.max(end));
            let root = Mat4::from_translation(crate::math::Vec3::new(1.0, -2.0, 0.5));
            let n = parents.len();
            let mut a = vec![Mat4::IDENTITY; n];
            let mut b = a.clone();
            // SAFETY: this CPU runs AVX-512 F and VL, AVX2 and FMA code
            // (asked above).
            unsafe {
                run(&parents, &local, first, end, &root, &mut a);
                run_evex(&parents, &local, first, end, &root, &mut b);
            }
            let bits = |m: &[Mat4]| -> Vec<u32> {
                m.iter().flat_map(|m| m.cols.as_flattened().iter().map(|x| x.to_bits())).collect()
            };
            prop_assert_eq!(bits(&a), bits(&b));
        }
    }
}
