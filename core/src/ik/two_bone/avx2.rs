//! [`super::fast_solve`] with one vector per register: each 3-vector in
//! the low three lanes of an SSE register (the fourth lane is never
//! summed: dot products take lanes 0-2, and the cross product keeps lane
//! 3 in place), compiled for AVX2 + FMA and entered only after
//! `cpu::avx2_kernels()`. The solve keeps about 25 vectors live where the
//! scalar form keeps 75 floats, so far fewer of them spill to the stack
//! (602 instructions a solve against the scalar form's 850 under the same
//! AVX2 encoding); the scalar `fast_solve` is its twin and the tests hold
//! the two within 1e-5.
#![allow(unsafe_code)]
#![deny(clippy::undocumented_unsafe_blocks)]

use core::arch::x86_64::{_mm_fmadd_ps, _mm_mul_ps, _mm_set1_ps, _mm_set_ps};

use super::{Limb, MidAngle, Sizes, TwoBoneGoal, TwoBoneReport};
use crate::ik::aos::{
    cross, dot, finite, load, madd, normalize4, quat, rsqrt, scale, sub, sum3, times, transpose3,
    vec3, with_w, V,
};
use crate::math::{Mat4, Vec3};

/// The solve on a gathered limb.
pub(super) fn fast_solve(limb: &Limb, goal: &TwoBoneGoal) -> Option<TwoBoneReport> {
    // SAFETY: called only after `cpu::avx2_kernels()`, which confirms that
    // this CPU and OS run AVX2 and FMA code.
    unsafe { solve(limb, goal) }
}

/// The solve reading the three model matrices directly: each column is
/// one 16-byte load.
pub(super) fn fast_solve_models(
    start: &Mat4,
    mid: &Mat4,
    end: &Mat4,
    goal: &TwoBoneGoal,
) -> Option<TwoBoneReport> {
    // SAFETY: as in `fast_solve`.
    unsafe { solve(&[start, mid, end], goal) }
}

/// Where the solve reads the limb (lane 3 of each vector is whatever the
/// source holds there).
trait Source {
    /// Position of joint `i`: 0 start, 1 mid, 2 end.
    fn position(&self, i: usize) -> V;
    /// Column `c` of the start (`j = 0`) or mid (`j = 1`) joint's frame.
    fn column(&self, j: usize, c: usize) -> V;
}

impl Source for Limb {
    #[inline(always)]
    fn position(&self, i: usize) -> V {
        vec3([self.start, self.mid, self.end][i])
    }

    #[inline(always)]
    fn column(&self, j: usize, c: usize) -> V {
        vec3([self.start_frame, self.mid_frame][j][c])
    }
}

impl Source for [&Mat4; 3] {
    #[inline(always)]
    fn position(&self, i: usize) -> V {
        load(&self[i].cols[3])
    }

    #[inline(always)]
    fn column(&self, j: usize, c: usize) -> V {
        load(&self[j].cols[c])
    }
}

/// `nlerp(identity, q, weight)` for a unit `q` with `w ≥ 0`, as
/// `super::weigh`.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn weigh(q: V, weight: f32) -> V {
    if weight >= 1.0 {
        return q;
    }
    let q = _mm_fmadd_ps(
        q,
        _mm_set1_ps(weight),
        _mm_set_ps(1.0 - weight, 0.0, 0.0, 0.0),
    );
    normalize4(q)
}

/// `super::Frame` in registers (built by `frame!`).
struct Frame {
    c0: V,
    y: V,
    n: V,
    k: [f32; 3],
}

/// `super::Frame::new` written out in place: as a function LLVM keeps it
/// out of line (it may not force-inline a `target_feature` function), and
/// the `Option<Frame>` then travels through memory.
macro_rules! frame {
    ($c0:expr, $c1:expr) => {{
        let (c0, c1) = ($c0, $c1);
        let (s0sq, c01, c1sq) = (dot(c0, c0), dot(c0, c1), dot(c1, c1));
        let n = cross(c0, c1);
        let d = dot(n, n);
        if !super::Frame::accepts(s0sq, c1sq, d) {
            return None;
        }
        let (i0, i_n) = (rsqrt(s0sq), rsqrt(d));
        Frame {
            c0,
            y: sub(scale(c1, s0sq), scale(c0, c01)),
            n,
            k: [i0, i0 * i_n, i_n],
        }
    }};
}

impl Frame {
    /// `R x`: a local vector in model space.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn apply(&self, x: Vec3) -> V {
        let c = scale(self.c0, x.x * self.k[0]);
        let c = madd(self.y, x.y * self.k[1], c);
        madd(self.n, x.z * self.k[2], c)
    }

    /// The columns of `Rᵀ` (the rows of `R` transposed), so that `Rᵀ v`
    /// is three multiply-adds by `v`'s lanes.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn transposed(&self) -> [V; 3] {
        let (x, y, z) = (
            scale(self.c0, self.k[0]),
            scale(self.y, self.k[1]),
            scale(self.n, self.k[2]),
        );
        transpose3(x, y, z)
    }
}

/// `super::fast_solve`, step for step.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn solve<S: Source>(src: &S, goal: &TwoBoneGoal) -> Option<TwoBoneReport> {
    if !finite(src.column(0, 2), 7) || !finite(src.column(1, 2), 7) {
        return None;
    }
    let start = src.position(0);
    let u = sub(src.position(1), start);
    let v = sub(src.position(2), src.position(1));
    let d0 = sub(vec3(goal.target), start);
    let sz = Sizes::new(dot(u, u), dot(v, v), super::sqrt_f32(dot(d0, d0)), goal)?;
    let fm = frame!(src.column(1, 0), src.column(1, 1));

    let a = fm.apply(sz.axis);
    let (ua, av) = (dot(u, a), dot(a, v));
    let axv = cross(a, v);
    let c0 = ua * av;
    let f1 = scale(d0, 1.0 / sz.dist0);
    let pole = vec3(goal.pole);
    let rf = cross(f1, pole);
    let rf2 = dot(rf, rf);
    let planes = (rf2, dot(pole, pole));
    let m = MidAngle::new(dot(u, v) - c0, dot(u, axv), c0, ua + av, &sz, planes)?;
    let (cos_t, sin_t, n2, aw, m2) = (m.cos, m.sin, m.n2, m.aw, m.m2);
    let (p, q) = m.half;
    let inv_h = rsqrt(p * p + q * q);

    let w = madd(v, cos_t, u);
    let w = madd(axv, sin_t, w);
    let w = madd(a, av * (1.0 - cos_t), w);
    // The start frame is needed last; built here, its registers are free
    // until now.
    let fs = frame!(src.column(0, 0), src.column(0, 1)).transposed();
    let g = sub(scale(a, n2), scale(w, aw));
    let h = cross(w, a);
    let (inv_n, inv_m) = (rsqrt(n2), rsqrt(m2));
    let inv_nm = inv_n * inv_m;
    let mut f2 = scale(rf, rsqrt(rf2));
    let mut f3 = cross(f1, f2);
    if goal.twist != 0.0 {
        let (s, c) = libm::sincosf(goal.twist);
        (f2, f3) = (madd(f3, s, scale(f2, c)), sub(scale(f3, c), scale(f2, s)));
    }
    // The three dot products summed lane-wise first, then across lanes
    // once.
    let e_f = _mm_mul_ps(scale(w, inv_n), f1);
    let e_f = _mm_fmadd_ps(scale(g, inv_nm), f2, e_f);
    let e_f = _mm_fmadd_ps(scale(h, inv_m), f3, e_f);
    let tr1 = 1.0 + sum3(e_f);
    if tr1.is_nan() || tr1 <= 0.1 {
        return None;
    }
    let axial = scale(cross(w, f1), inv_n);
    let axial = madd(cross(g, f2), inv_nm, axial);
    let axial = madd(cross(h, f3), inv_m, axial);
    let start = scale(with_w(times(&fs, axial), tr1), 0.5 * rsqrt(tr1));
    let mid = with_w(vec3(sz.axis * (p * inv_h)), q * inv_h);
    let (start, mid) = (weigh(start, goal.weight), weigh(mid, goal.weight));
    // Not `bool::then`: a closure does not inherit the target features, so
    // it would stay a call.
    if finite(start, 15) && finite(mid, 15) {
        Some(TwoBoneReport {
            reached: sz.reached,
            start_correction: quat(start),
            mid_correction: quat(mid),
        })
    } else {
        None
    }
}
