//! The leaf scan on AVX2: two lane blocks (eight slots) per register,
//! entered only after `cpu::avx2_kernels()`. Each lane runs the same f32
//! operations in the same order as the four-lane scan (`d = q − x;
//! c = c + d·d`, no fused multiply-add), so the sums are bit-identical.
#![allow(unsafe_code)]

use core::arch::x86_64::{
    __m128, __m256, _mm256_add_ps, _mm256_castps256_ps128, _mm256_cmp_ps, _mm256_extractf128_ps,
    _mm256_min_ps, _mm256_movemask_ps, _mm256_mul_ps, _mm256_set1_ps, _mm256_set_m128,
    _mm256_setzero_ps, _mm256_sub_ps, _CMP_LE_OQ,
};

use wide::f32x4;

/// The sums of squared differences of the four lane blocks in `rows`
/// (`fc` vectors each) to `query`; with `cut`, `None` as soon as half the
/// features already sum above `cut` in every lane.
pub(super) fn leaf_sums(
    rows: &[f32x4],
    query: &[f32],
    fc: usize,
    cut: Option<f32>,
) -> Option<[f32x4; 4]> {
    // SAFETY: called only after `cpu::avx2_kernels()`, which confirms that
    // this CPU and OS run AVX2 code.
    unsafe { sums(rows, query, fc, cut) }
}

/// Blocks `a` and `b`'s vectors in the low and high halves.
#[inline]
#[target_feature(enable = "avx2")]
fn pair(a: f32x4, b: f32x4) -> __m256 {
    _mm256_set_m128(bytemuck::cast::<f32x4, __m128>(b), bytemuck::cast(a))
}

/// `acc + (q − x)²`, lane by lane, unfused.
#[inline]
#[target_feature(enable = "avx2")]
fn add_square(acc: __m256, q: __m256, x: __m256) -> __m256 {
    let d = _mm256_sub_ps(q, x);
    _mm256_add_ps(acc, _mm256_mul_ps(d, d))
}

#[target_feature(enable = "avx2")]
fn sums(rows: &[f32x4], query: &[f32], fc: usize, cut: Option<f32>) -> Option<[f32x4; 4]> {
    let (r0, rest) = rows.split_at(fc);
    let (r1, rest) = rest.split_at(fc);
    let (r2, r3) = rest.split_at(fc);
    let (r3, query) = (&r3[..fc], &query[..fc]);
    let (mut a, mut b) = (_mm256_setzero_ps(), _mm256_setzero_ps());
    let half = if cut.is_some() { fc / 2 } else { fc };
    for f in 0..half {
        let q = _mm256_set1_ps(query[f]);
        a = add_square(a, q, pair(r0[f], r1[f]));
        b = add_square(b, q, pair(r2[f], r3[f]));
    }
    if let Some(cut) = cut {
        let le = _mm256_cmp_ps::<_CMP_LE_OQ>(_mm256_min_ps(a, b), _mm256_set1_ps(cut));
        if _mm256_movemask_ps(le) == 0 {
            return None;
        }
        for f in half..fc {
            let q = _mm256_set1_ps(query[f]);
            a = add_square(a, q, pair(r0[f], r1[f]));
            b = add_square(b, q, pair(r2[f], r3[f]));
        }
    }
    let half = |v: __m256, high: bool| -> f32x4 {
        bytemuck::cast(if high {
            _mm256_extractf128_ps::<1>(v)
        } else {
            _mm256_castps256_ps128(v)
        })
    };
    Some([half(a, false), half(a, true), half(b, false), half(b, true)])
}
