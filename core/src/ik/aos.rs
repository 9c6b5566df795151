//! One 3-vector per SSE register, for the single-solve AVX2 path of the
//! IK solvers (`two_bone::avx2`): `x, y, z` in lanes 0-2;
//! lane 3 is never summed (dot products take lanes 0-2 and the cross
//! product keeps lane 3 in place), so it may hold anything a loaded matrix
//! column holds. Every arithmetic function is compiled for AVX2 + FMA;
//! callers enter them only after `cpu::avx2_kernels()`.

use core::arch::x86_64::{
    __m128, _mm_add_ss, _mm_andnot_ps, _mm_blend_ps, _mm_cmplt_ps, _mm_cvtss_f32, _mm_dp_ps,
    _mm_fmadd_ps, _mm_fmsub_ps, _mm_movehl_ps, _mm_movelh_ps, _mm_movemask_ps, _mm_mul_ps,
    _mm_rsqrt_ss, _mm_set1_ps, _mm_set_ss, _mm_shuffle_ps, _mm_sub_ps, _mm_unpackhi_ps,
    _mm_unpacklo_ps,
};

use crate::math::{Quat, Vec3};

/// A 3-vector (lanes 0-2) or a quaternion (`x, y, z, w`).
pub(crate) type V = __m128;

/// Four floats, as they lie (a `Mat4` column).
#[inline(always)]
pub(crate) fn load(a: &[f32; 4]) -> V {
    bytemuck::cast(*a)
}

/// `v` in lanes 0-2, zero in lane 3.
#[inline(always)]
pub(crate) fn vec3(v: Vec3) -> V {
    bytemuck::cast([v.x, v.y, v.z, 0.0])
}

#[inline]
#[target_feature(enable = "avx2,fma")]
pub(crate) fn sub(a: V, b: V) -> V {
    _mm_sub_ps(a, b)
}

#[inline]
#[target_feature(enable = "avx2,fma")]
pub(crate) fn scale(a: V, s: f32) -> V {
    _mm_mul_ps(a, _mm_set1_ps(s))
}

/// `a · s + c`, fused.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(crate) fn madd(a: V, s: f32, c: V) -> V {
    _mm_fmadd_ps(a, _mm_set1_ps(s), c)
}

/// Lanes 0-2 dotted.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(crate) fn dot(a: V, b: V) -> f32 {
    _mm_cvtss_f32(_mm_dp_ps::<0x71>(a, b))
}

/// Lanes 0-2 added.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(crate) fn sum3(v: V) -> f32 {
    let y = _mm_shuffle_ps::<0b01_01_01_01>(v, v);
    let z = _mm_movehl_ps(v, v);
    _mm_cvtss_f32(_mm_add_ss(_mm_add_ss(v, y), z))
}

/// `a × b` in lanes 0-2, lane 3 kept in place.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(crate) fn cross(a: V, b: V) -> V {
    const YZX: i32 = 0b11_00_10_01;
    let a_yzx = _mm_shuffle_ps::<YZX>(a, a);
    let b_yzx = _mm_shuffle_ps::<YZX>(b, b);
    // (a_x b_y − a_y b_x, a_y b_z − a_z b_y, a_z b_x − a_x b_z): the
    // cross product's z, x, y.
    let c = _mm_fmsub_ps(a, b_yzx, _mm_mul_ps(a_yzx, b));
    _mm_shuffle_ps::<YZX>(c, c)
}

/// `1/√x` for a positive normal `x`: the hardware estimate (relative
/// error below 1.5 · 2⁻¹²) and one Newton-Raphson step, which leaves a few
/// units in the last place: shorter than a square root and a division in
/// a row, and it leaves the divider to the square roots a solve needs.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(crate) fn rsqrt(x: f32) -> f32 {
    let y = _mm_cvtss_f32(_mm_rsqrt_ss(_mm_set_ss(x)));
    y * (1.5 - 0.5 * x * y * y)
}

/// Lanes 0-2 (`mask` 7) or all four (`mask` 15) finite.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(crate) fn finite(v: V, mask: i32) -> bool {
    let abs = _mm_andnot_ps(_mm_set1_ps(-0.0), v);
    _mm_movemask_ps(_mm_cmplt_ps(abs, _mm_set1_ps(f32::INFINITY))) & mask == mask
}

/// `v` in lanes 0-2 and `w` in lane 3.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(crate) fn with_w(v: V, w: f32) -> V {
    _mm_blend_ps::<0b1000>(v, _mm_set1_ps(w))
}

#[inline]
#[target_feature(enable = "avx2,fma")]
pub(crate) fn quat(q: V) -> Quat {
    bytemuck::cast(q)
}

/// `t[0] v.x + t[1] v.y + t[2] v.z`: a 3x3 matrix (its columns) times
/// `v` (lane 3 unspecified).
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(crate) fn times(t: &[V; 3], v: V) -> V {
    let vx = _mm_shuffle_ps::<0b00_00_00_00>(v, v);
    let vy = _mm_shuffle_ps::<0b01_01_01_01>(v, v);
    let vz = _mm_shuffle_ps::<0b10_10_10_10>(v, v);
    _mm_fmadd_ps(t[2], vz, _mm_fmadd_ps(t[1], vy, _mm_mul_ps(t[0], vx)))
}

/// The rows `x`, `y`, `z` of a 3x3 matrix as its columns (lane 3 of each
/// unspecified).
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(crate) fn transpose3(x: V, y: V, z: V) -> [V; 3] {
    let xy_lo = _mm_unpacklo_ps(x, y); // x0 y0 x1 y1
    let xy_hi = _mm_unpackhi_ps(x, y); // x2 y2 x3 y3
    let zz_lo = _mm_unpacklo_ps(z, z); // z0 z0 z1 z1
    let zz_hi = _mm_unpackhi_ps(z, z); // z2 z2 z3 z3
    [
        _mm_movelh_ps(xy_lo, zz_lo),                   // x0 y0 z0 z0
        _mm_movehl_ps(zz_lo, xy_lo),                   // x1 y1 z1 z1
        _mm_shuffle_ps::<0b01_00_01_00>(xy_hi, zz_hi), // x2 y2 z2 z2
    ]
}

/// `q` scaled to unit length by `rsqrt` of its four lanes' squares.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(crate) fn normalize4(q: V) -> V {
    _mm_mul_ps(
        q,
        _mm_set1_ps(rsqrt(_mm_cvtss_f32(_mm_dp_ps::<0xF1>(q, q)))),
    )
}
