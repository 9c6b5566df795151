//! The AVX-512 LBS vertex kernel: positions and normals of eight vertices
//! per block, on x86-64 CPUs with AVX-512 Foundation (asked once at run
//! time, see [`crate::cpu::avx512`]).
//!
//! The AVX2 kernel blends each vertex's palette entry as an 8-float and a
//! 4-float register (rows 0-1, row 2) and transposes the eight blends into
//! lanes with an 8x8 and a 4x8 transpose. Here one 16-float register holds
//! a whole entry (the palette copied one entry per cache line, see
//! [`Line`]), so each influence is one load and one fused
//! multiply-add with the weight broadcast from memory, and the rest is
//! narrower:
//!
//! - two 4x4 transposes inside the 128-bit quarters and eight two-source
//!   permutes give each column's rows 0 and 1 as `[row 0 | row 1]` (8
//!   vertices each) and row 2 twice;
//! - positions and normals are spread from `xyz xyz …` with one permute per
//!   component, transformed two rows per instruction (row 2 of positions
//!   and normals in one register), and gathered back with two permutes per
//!   attribute.
//!
//! The arithmetic is the AVX2 kernel's (the same products and sums in the
//! same order); agreement with the portable kernels (1e-5) is tested in the
//! parent module on every CPU that has AVX-512F. Tangents, eight
//! influences, interleaved buffers and DQS take the AVX2 kernels.
#![allow(unsafe_code)]

use core::arch::x86_64::*;

use super::avx2::Line;
use super::layout::{Sink, Source};
use super::Influences;

/// Whether this module's kernels run ([`crate::cpu::avx512_kernels`]).
pub(crate) use crate::cpu::avx512_kernels as available;

type F16 = __m512;

/// Input and output normals, when skinned.
type Normals<'a> = Option<(&'a [[f32; 3]], &'a mut [[f32; 3]])>;

#[inline]
#[target_feature(enable = "avx512f,avx2,fma")]
fn mul(a: F16, b: F16) -> F16 {
    _mm512_mul_ps(a, b)
}

/// `a b + c`.
#[inline]
#[target_feature(enable = "avx512f,avx2,fma")]
fn fma(a: F16, b: F16, c: F16) -> F16 {
    _mm512_fmadd_ps(a, b, c)
}

/// 4x4 transposes inside each 128-bit quarter.
#[inline]
#[target_feature(enable = "avx512f,avx2,fma")]
fn transpose4_quarters(r: [F16; 4]) -> [F16; 4] {
    let t0 = _mm512_unpacklo_ps(r[0], r[1]);
    let t1 = _mm512_unpackhi_ps(r[0], r[1]);
    let t2 = _mm512_unpacklo_ps(r[2], r[3]);
    let t3 = _mm512_unpackhi_ps(r[2], r[3]);
    [
        _mm512_shuffle_ps::<0b01_00_01_00>(t0, t2),
        _mm512_shuffle_ps::<0b11_10_11_10>(t0, t2),
        _mm512_shuffle_ps::<0b01_00_01_00>(t1, t3),
        _mm512_shuffle_ps::<0b11_10_11_10>(t1, t3),
    ]
}

/// A two-source permute's index table (`vpermt2ps`: 0-15 pick from the
/// first source, 16-31 from the second).
type Idx = [i32; 16];

/// Rows 0 and 1 of the eight blended matrices, column `c`:
/// `[row 0 of vertices 0-3 | row 0 of 4-7 | row 1 of 0-3 | row 1 of 4-7]`
/// from the quarter transposes `t` (vertices 0-3) and `u` (4-7).
const ROWS01: Idx = [0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23];
/// Row 2, twice.
const ROW22: Idx = [8, 9, 10, 11, 24, 25, 26, 27, 8, 9, 10, 11, 24, 25, 26, 27];

/// `[c of vertices 0-7 | c of vertices 0-7]` from 24 floats `xyz xyz …`
/// (floats 0-15 in the first source, 16-23 in the second).
const fn spread(c: i32) -> Idx {
    let mut t = [0; 16];
    let mut l = 0;
    while l < 16 {
        t[l] = 3 * (l as i32 % 8) + c;
        l += 1;
    }
    t
}

/// Floats `16 h .. 16 h + 16` of `xyz xyz …` from `[x | y]` (first source)
/// and `z` (second source, lanes `8 z8 ..`).
const fn gather_xyz(h: i32, z8: i32) -> Idx {
    let mut t = [0; 16];
    let mut l = 0;
    while l < 16 {
        let f = 16 * h + l as i32;
        let (v, c) = (f / 3, f % 3);
        t[l] = match c {
            0 => v,
            1 => 8 + v,
            _ => 16 + 8 * z8 + v,
        };
        l += 1;
    }
    t
}

#[inline]
#[target_feature(enable = "avx512f,avx2,fma")]
fn index(t: &Idx) -> __m512i {
    // SAFETY: the table is 16 readable `i32`.
    unsafe { _mm512_loadu_si512(t.as_ptr().cast()) }
}

/// Vertices `8b .. 8b + 8` of `a` as 24 floats `xyz xyz …`: floats
/// 0-15, and 16-23 in the low half of the second register.
///
/// # Safety
/// `8b + 8 <= a.len()`.
#[inline]
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn load24(a: &[[f32; 3]], b: usize) -> (F16, F16) {
    debug_assert!(8 * b + 8 <= a.len());
    // SAFETY: the caller's promise; the loads are unaligned.
    unsafe {
        let p = a.as_ptr().add(8 * b).cast::<f32>();
        (
            _mm512_loadu_ps(p),
            _mm512_castps256_ps512(_mm256_loadu_ps(p.add(16))),
        )
    }
}

/// Writes vertices `8b .. 8b + 8` of `a` from [`load24`]'s layout.
///
/// # Safety
/// `8b + 8 <= a.len()`.
#[inline]
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn store24(a: &mut [[f32; 3]], b: usize, lo: F16, hi: F16) {
    debug_assert!(8 * b + 8 <= a.len());
    // SAFETY: the caller's promise; the stores are unaligned.
    unsafe {
        let p = a.as_mut_ptr().add(8 * b).cast::<f32>();
        _mm512_storeu_ps(p, lo);
        _mm256_storeu_ps(p.add(16), _mm512_castps512_ps256(hi));
    }
}

/// The eight vertices' blended matrices (slots `0..k`, `1 <= k <= 4`),
/// one per register: `[row 0 | row 1 | row 2 | 0]`.
///
/// # Safety
/// Every joint index of the first `k` slots is below `lines.len()`.
#[inline]
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn blend(
    lines: &[Line],
    joints: &[[u16; 4]; 8],
    weights: &[[f32; 4]; 8],
    k: usize,
) -> [F16; 8] {
    let entry = |j: u16| -> F16 {
        debug_assert!(usize::from(j) < lines.len());
        // SAFETY: the caller's promise; lines are 64-byte aligned.
        unsafe { _mm512_load_ps(lines.get_unchecked(usize::from(j)).0.as_ptr()) }
    };
    let mut m: [F16; 8] =
        core::array::from_fn(|i| mul(_mm512_set1_ps(weights[i][0]), entry(joints[i][0])));
    for s in 1..k.min(4) {
        for (i, m) in m.iter_mut().enumerate() {
            *m = fma(_mm512_set1_ps(weights[i][s]), entry(joints[i][s]), *m);
        }
    }
    m
}

/// Eight vertices' skinned attributes: positions' rows 0-1 `[x' | y']`, row
/// 2 `[z' of the positions | z' of the normals]` (the positions' twice
/// without normals), and the normals' rows 0-1.
struct Skinned {
    p01: F16,
    z: F16,
    n01: Option<F16>,
}

/// Skins eight vertices whose positions (and normals) come spread as
/// `[c of vertices 0-7 | c of vertices 0-7]` per component `c`.
///
/// # Safety
/// As [`blend`].
#[inline]
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn lbs8(
    palette: &[Line],
    joints: &[[u16; 4]; 8],
    weights: &[[f32; 4]; 8],
    k: usize,
    ps: [F16; 3],
    ns: Option<[F16; 3]>,
) -> Skinned {
    // SAFETY: the caller's promise.
    let m = unsafe { blend(palette, joints, weights, k) };
    let t = transpose4_quarters([m[0], m[1], m[2], m[3]]);
    let u = transpose4_quarters([m[4], m[5], m[6], m[7]]);
    let (i01, i22) = (index(&ROWS01), index(&ROW22));
    let r01: [F16; 4] = core::array::from_fn(|c| _mm512_permutex2var_ps(t[c], i01, u[c]));
    let r22: [F16; 4] = core::array::from_fn(|c| _mm512_permutex2var_ps(t[c], i22, u[c]));
    let p01 = fma(
        r01[0],
        ps[0],
        fma(r01[1], ps[1], fma(r01[2], ps[2], r01[3])),
    );
    match ns {
        Some(ns) => {
            let n01 = fma(r01[0], ns[0], fma(r01[1], ns[1], mul(r01[2], ns[2])));
            let pn: [F16; 3] = core::array::from_fn(|c| _mm512_mask_blend_ps(0xff00, ps[c], ns[c]));
            let t3 = _mm512_maskz_mov_ps(0x00ff, r22[3]);
            let z = fma(r22[0], pn[0], fma(r22[1], pn[1], fma(r22[2], pn[2], t3)));
            Skinned {
                p01,
                z,
                n01: Some(n01),
            }
        }
        None => {
            let z = fma(
                r22[0],
                ps[0],
                fma(r22[1], ps[1], fma(r22[2], ps[2], r22[3])),
            );
            Skinned { p01, z, n01: None }
        }
    }
}

/// Vertices `8b .. 8b + 8` of `a`, spread per component (see [`lbs8`]).
///
/// # Safety
/// `8b + 8 <= a.len()`.
#[inline]
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn spread_array(a: &[[f32; 3]], b: usize) -> [F16; 3] {
    // SAFETY: the caller's promise.
    let (lo, hi) = unsafe { load24(a, b) };
    core::array::from_fn(|c| _mm512_permutex2var_ps(lo, index(&spread(c as i32)), hi))
}

/// Writes one attribute of [`lbs8`]'s result (`xy` its rows 0-1, `z8` the
/// half of `z` that holds its row 2) to vertices `8b .. 8b + 8` of `a`.
///
/// # Safety
/// `8b + 8 <= a.len()`.
#[inline]
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn store_array(a: &mut [[f32; 3]], b: usize, xy: F16, z: F16, z8: i32) {
    let lo = _mm512_permutex2var_ps(xy, index(&gather_xyz(0, z8)), z);
    let hi = _mm512_permutex2var_ps(xy, index(&gather_xyz(1, z8)), z);
    // SAFETY: the caller's promise.
    unsafe { store24(a, b, lo, hi) };
}

/// LBS positions (and normals, `N`) of the whole blocks of eight vertices
/// if this CPU has AVX-512F and both sides are plain arrays; returns how
/// many vertices it skinned (a multiple of 8, or 0). `lines` is the
/// palette copied to cache lines and covers every joint of `infl` (the
/// caller checked).
pub(crate) fn lbs_run<S: Source, D: Sink, const N: bool>(
    lines: &[Line],
    infl: &Influences<'_>,
    src: &S,
    dst: &mut D,
) -> usize {
    if !available() || lines.len() < infl.joint_count {
        return 0;
    }
    let (Some((pi, ni)), Some((po, no))) = (src.arrays(), dst.arrays_mut()) else {
        return 0;
    };
    let normals = match (N, ni, no) {
        (false, _, _) => None,
        (true, Some(ni), Some(no)) => Some((ni, no)),
        // Normals asked for but missing on a side: the AVX2 kernel's
        // accessors handle it.
        (true, _, _) => return 0,
    };
    // SAFETY: the CPU has AVX-512F, AVX2 and FMA; the lines cover every
    // joint index of the checked influences.
    unsafe { lbs_run_avx512(lines, infl, pi, po, normals) }
}

/// # Safety
/// The CPU has AVX-512F, AVX2 and FMA; `lines` covers every joint index of
/// `infl`.
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn lbs_run_avx512(
    lines: &[Line],
    infl: &Influences<'_>,
    pi: &[[f32; 3]],
    po: &mut [[f32; 3]],
    mut normals: Normals<'_>,
) -> usize {
    let (jb, _) = infl.joints.as_chunks::<8>();
    let (wb, _) = infl.weights.as_chunks::<8>();
    let mut len = pi.len().min(po.len());
    if let Some((ni, no)) = &normals {
        len = len.min(ni.len()).min(no.len());
    }
    let blocks = jb.len().min(wb.len()).min(len / 8);
    for b in 0..blocks {
        let (j, w) = (&jb[b], &wb[b]);
        let k = super::avx2::slots_used(w) as usize;
        // SAFETY: `8b + 8 <= len <= pi.len()`.
        let ps = unsafe { spread_array(pi, b) };
        let ns = normals
            .as_ref()
            // SAFETY: `8b + 8 <= len <= ni.len()`.
            .map(|(ni, _)| unsafe { spread_array(ni, b) });
        // SAFETY: the checked influences' joints are below `joint_count`,
        // at most the number of lines.
        let r = unsafe { lbs8(lines, j, w, k, ps, ns) };
        // SAFETY: `8b + 8 <= len <= po.len()`.
        unsafe { store_array(po, b, r.p01, r.z, 0) };
        if let (Some((_, no)), Some(n01)) = (normals.as_mut(), r.n01) {
            // SAFETY: `8b + 8 <= len <= no.len()`.
            unsafe { store_array(no, b, n01, r.z, 1) };
        }
    }
    blocks * 8
}

#[cfg(test)]
mod tests {
    extern crate alloc;

    use alloc::vec;
    use alloc::vec::Vec;

    use super::*;
    use crate::math::{Mat4, Quat, Vec3};
    use crate::skin::{reference, Mat3x4, SkinInput, SkinOutput};

    /// The kernel runs where the CPU has AVX-512F (so that the parent
    /// module's comparisons against the portable kernel exercise it, not
    /// the AVX2 fallback), skins every whole block of 8 and no more, and
    /// agrees with the scalar reference within 1e-5.
    #[test]
    fn skins_whole_blocks_like_the_reference() {
        if !available() {
            return; // nothing to test without AVX-512F
        }
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut f = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 40) as f32 / (1u64 << 24) as f32
        };
        let joints = 20;
        let palette: Vec<Mat3x4> = (0..joints)
            .map(|_| {
                let q = Quat::new(f() - 0.5, f() - 0.5, f() - 0.5, f()).normalize();
                let t = Vec3::new(f(), f(), f());
                Mat3x4::from_mat4(&Mat4::from_trs(t, q, Vec3::new(1.0 + f(), 1.0, 2.0 - f())))
            })
            .collect();
        let n = 8 * joints + 5;
        let pos: Vec<[f32; 3]> = (0..n).map(|_| [f(), f(), f()]).collect();
        let nrm: Vec<[f32; 3]> = (0..n).map(|_| [f(), f(), f()]).collect();
        let js: Vec<[u16; 4]> = (0..n)
            .map(|_| [0; 4].map(|_| (f() * joints as f32) as u16 % joints as u16))
            .collect();
        let ws: Vec<[f32; 4]> = (0..n)
            .map(|v| {
                // 1 to 4 influences.
                let w = [1.0, f(), f(), f()].map(|x| x + 0.1);
                let k = 1 + v % 4;
                let w: [f32; 4] = core::array::from_fn(|i| if i < k { w[i] } else { 0.0 });
                let s: f32 = w.iter().sum();
                w.map(|x| x / s)
            })
            .collect();
        let infl = Influences::new(&js, &ws, joints).unwrap();
        let mut buf = [const { core::mem::MaybeUninit::uninit() }; super::super::avx2::LINES];
        let lines = super::super::avx2::copy_to_lines(&palette, n, &mut buf).unwrap();
        let input = SkinInput {
            positions: &pos,
            normals: Some(&nrm),
            tangents: None,
            joints: &js,
            weights: &ws,
        };
        let (mut p, mut q) = (vec![[9.0f32; 3]; n], vec![[9.0f32; 3]; n]);
        let mut out = SkinOutput {
            positions: &mut p,
            normals: Some(&mut q),
            tangents: None,
        };
        let done = lbs_run::<_, _, true>(lines, &infl, &input.vertices(), &mut out);
        assert_eq!(done, n / 8 * 8);
        let (mut rp, mut rq) = (vec![[0.0f32; 3]; n], vec![[0.0f32; 3]; n]);
        let mut rout = SkinOutput {
            positions: &mut rp,
            normals: Some(&mut rq),
            tangents: None,
        };
        reference::skin_lbs(&palette, &input, &mut rout).unwrap();
        // Whole blocks as the reference; the tail is the caller's, left
        // alone.
        let check = |what: &str, got: &[[f32; 3]], want: &[[f32; 3]]| {
            for (v, (g, w)) in got.iter().zip(want).enumerate() {
                let w = if v < done { *w } else { [9.0; 3] };
                for (a, b) in g.iter().zip(w) {
                    assert!(
                        (a - b).abs() <= 1e-5 * (1.0 + b.abs()),
                        "{what} {v}: {g:?} vs {w:?}"
                    );
                }
            }
        };
        check("position", &p, &rp);
        check("normal", &q, &rq);
    }
}
