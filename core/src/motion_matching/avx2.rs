//! The leaf scan on AVX2: a block of eight slots per register,
//! entered only after `cpu::avx2_kernels()`. Each lane runs the same f32
//! operations in the same order as the four-lane scan (`d = q − x;
//! c = c + d·d`, no fused multiply-add), so the sums are bit-identical.
#![allow(unsafe_code)]

use core::arch::x86_64::{
    __m256, _mm256_add_ps, _mm256_castps256_ps128, _mm256_cmp_ps, _mm256_extractf128_ps,
    _mm256_min_ps, _mm256_movemask_ps, _mm256_mul_ps, _mm256_set1_ps, _mm256_setzero_ps,
    _mm256_sub_ps, _CMP_LE_OQ,
};

use wide::f32x4;

/// The sums of squared differences of leaf `rows` (two blocks of eight
/// slots, `2 fc` vectors each) to `query`, slots 0-3, 4-7, 8-11 and 12-15
/// in the four results; with `cut`, `None` as soon as half the
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

/// A feature's eight lanes of a block (its lanes 0-3 and 4-7).
#[inline]
#[target_feature(enable = "avx2")]
fn lanes(pair: &[f32x4]) -> __m256 {
    bytemuck::cast::<[f32x4; 2], __m256>([pair[0], pair[1]])
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
    let (r0, r1) = rows.split_at(2 * fc);
    // Per feature: its query value and its lanes in both blocks.
    let features = || query.iter().zip(r0.chunks_exact(2)).zip(r1.chunks_exact(2));
    let (mut a, mut b) = (_mm256_setzero_ps(), _mm256_setzero_ps());
    let half = if cut.is_some() { fc / 2 } else { fc };
    for ((&x, x0), x1) in features().take(half) {
        let q = _mm256_set1_ps(x);
        a = add_square(a, q, lanes(x0));
        b = add_square(b, q, lanes(x1));
    }
    if let Some(cut) = cut {
        let le = _mm256_cmp_ps::<_CMP_LE_OQ>(_mm256_min_ps(a, b), _mm256_set1_ps(cut));
        if _mm256_movemask_ps(le) == 0 {
            return None;
        }
        for ((&x, x0), x1) in features().skip(half) {
            let q = _mm256_set1_ps(x);
            a = add_square(a, q, lanes(x0));
            b = add_square(b, q, lanes(x1));
        }
    }
    let quarter = |v: __m256, high: bool| -> f32x4 {
        bytemuck::cast(if high {
            _mm256_extractf128_ps::<1>(v)
        } else {
            _mm256_castps256_ps128(v)
        })
    };
    Some([
        quarter(a, false),
        quarter(a, true),
        quarter(b, false),
        quarter(b, true),
    ])
}
