//! The AVX2 + FMA vertex kernels: eight vertices per block, on x86-64 CPUs
//! that have both (detected once at run time, or known at compile time with
//! `-C target-feature=+avx2,+fma`).
//!
//! The work is the portable kernels' (see the [module docs](super)), with
//! three changes that the wider registers and the extra instructions allow:
//!
//! - **LBS** blends each vertex's palette rows 0-1 in one 8-float register
//!   and row 2 in a 4-float one, with the weight broadcast from memory and
//!   the palette rows as fused multiply-add memory operands, then transposes
//!   the eight blended matrices into lanes (an 8x8 and a 4x8 transpose).
//! - **DQS** blends each vertex's whole dual quaternion (8 floats) in one
//!   register and transposes only the blended result: the sign of each
//!   influence against the first is a lane-wise dot product of eight
//!   vertices' real parts reduced with three horizontal adds, applied to
//!   the broadcast weight as a sign-bit `xor`.
//! - **Attributes** are de-interleaved from `xyz xyz …` (and back) with
//!   blends and in-lane permutes, which keeps them off the one shuffle port
//!   that the transposes already load.
//!
//! Everything after the blend (transforming positions, normals and
//! tangents, the DQS scale by the real part's length) is the portable lane
//! math at width 8.
//! Agreement with the portable kernels and the scalar reference (1e-5) is
//! tested in the parent module on every CPU that has AVX2 and FMA.
#![allow(unsafe_code)]

use core::arch::x86_64::*;

use super::kernel::Palettes;
use super::layout::{Block3, Block4, Sink, Source};
use super::pairs::DQS_PAIR_MAX_JOINTS;
use super::{DqsBinds, DualQuat, Influences, LbsBind, Mat3x4};
use crate::math::Mat4;

/// The prepared-block LBS kernel ([`super::SkinBlocks::lbs`]) compiled for
/// AVX2 + FMA: the portable four-wide lane code as it is, whose VEX
/// three-operand forms spare the register copies that SSE's two-operand
/// forms need. The lane math does not fuse (its multiply-adds are written
/// as a product and a sum), so the bits are the portable kernel's.
///
/// # Safety
/// The CPU has AVX2 and FMA, and the contract of
/// [`super::kernel::lbs_blocks`] holds.
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn lbs_blocks<const N: bool>(
    palette: &[Mat3x4],
    blocks: &[super::VertexBlock],
    positions: &mut [[f32; 3]],
    normals: &mut [[f32; 3]],
) {
    // SAFETY: the caller's contract, passed on.
    unsafe { super::kernel::lbs_blocks_lanes::<N>(palette, blocks, positions, normals) }
}

/// Whether this module's kernels run ([`crate::cpu::avx2_kernels`]).
pub(crate) use crate::cpu::avx2_kernels as available;

type F8 = __m256;

#[inline]
#[target_feature(enable = "avx2,fma")]
fn ld8(a: &[f32; 8]) -> F8 {
    // SAFETY: `a` is 8 readable floats; the load is unaligned.
    unsafe { _mm256_loadu_ps(a.as_ptr()) }
}

#[inline]
#[target_feature(enable = "avx2,fma")]
fn ld4(a: &[f32; 4]) -> __m128 {
    // SAFETY: `a` is 4 readable floats; the load is unaligned.
    unsafe { _mm_loadu_ps(a.as_ptr()) }
}

#[inline]
#[target_feature(enable = "avx2,fma")]
fn st4(a: &mut [f32; 4], v: __m128) {
    // SAFETY: `a` is 4 writable floats; the store is unaligned.
    unsafe { _mm_storeu_ps(a.as_mut_ptr(), v) }
}

#[inline]
#[target_feature(enable = "avx2,fma")]
fn store8(a: &mut [f32; 8], v: F8) {
    // SAFETY: `a` is 8 writable floats; the store is unaligned.
    unsafe { _mm256_storeu_ps(a.as_mut_ptr(), v) }
}

/// Stores a dual quaternion `[real | dual]`.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn st8(d: &mut DualQuat, v: F8) {
    store8(bytemuck::cast_mut(d), v);
}

/// `[lo | hi]`.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn pair(lo: __m128, hi: __m128) -> F8 {
    _mm256_insertf128_ps::<1>(_mm256_castps128_ps256(lo), hi)
}

#[inline]
#[target_feature(enable = "avx2,fma")]
fn halves(v: F8) -> (__m128, __m128) {
    (_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v))
}

#[inline]
#[target_feature(enable = "avx2,fma")]
fn splat(x: f32) -> F8 {
    _mm256_set1_ps(x)
}

/// Eight vertices' 3-vectors, one per lane.
#[derive(Clone, Copy)]
struct V8 {
    x: F8,
    y: F8,
    z: F8,
}

#[inline]
#[target_feature(enable = "avx2,fma")]
fn zero3() -> V8 {
    let z = _mm256_setzero_ps();
    V8 { x: z, y: z, z }
}

/// De-interleaves two blocks of four `xyz` vectors: each 128-bit half of
/// `a c d` holds one block's `x0 y0 z0 x1 | y1 z1 x2 y2 | z2 x3 y3 z3`;
/// two blends put each component's four values in place, one in-lane
/// permute orders them.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn from_blocks3(b0: &Block3, b1: &Block3) -> V8 {
    let f0: &[[f32; 4]; 3] = bytemuck::cast_ref(b0);
    let f1: &[[f32; 4]; 3] = bytemuck::cast_ref(b1);
    let a = pair(ld4(&f0[0]), ld4(&f1[0]));
    let c = pair(ld4(&f0[1]), ld4(&f1[1]));
    let d = pair(ld4(&f0[2]), ld4(&f1[2]));
    // [a0 d1 c2 a3] -> [a0 a3 c2 d1]
    let x = _mm256_blend_ps::<0x22>(_mm256_blend_ps::<0x44>(a, c), d);
    let x = _mm256_permute_ps::<0b01_10_11_00>(x);
    // [c0 a1 d2 c3] -> [a1 c0 c3 d2]
    let y = _mm256_blend_ps::<0x44>(_mm256_blend_ps::<0x22>(c, a), d);
    let y = _mm256_permute_ps::<0b10_11_00_01>(y);
    // [d0 c1 a2 d3] -> [a2 c1 d0 d3]
    let z = _mm256_blend_ps::<0x44>(_mm256_blend_ps::<0x22>(d, c), a);
    let z = _mm256_permute_ps::<0b11_00_01_10>(z);
    V8 { x, y, z }
}

/// Eight 4-float vectors (`xyz` and a 4th float that is ignored) into lanes:
/// the interleaved buffers' path, one 16-byte load per vertex.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn from_vec4s(v: &[[f32; 4]; 8]) -> V8 {
    let r = transpose4_halves(core::array::from_fn(|i| pair(ld4(&v[i]), ld4(&v[i + 4]))));
    V8 {
        x: r[0],
        y: r[1],
        z: r[2],
    }
}

/// The inverse of [`from_vec4s`] (the 4th floats are 0).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn to_vec4s(v: V8) -> [[f32; 4]; 8] {
    let r = transpose4_halves([v.x, v.y, v.z, _mm256_setzero_ps()]);
    let mut o = [[0.0f32; 4]; 8];
    for i in 0..4 {
        let (lo, hi) = halves(r[i]);
        st4(&mut o[i], lo);
        st4(&mut o[i + 4], hi);
    }
    o
}

/// The inverse of [`from_blocks3`].
#[inline]
#[target_feature(enable = "avx2,fma")]
fn to_blocks3(v: V8) -> (Block3, Block3) {
    let xp = _mm256_permute_ps::<0b01_10_11_00>(v.x); // x0 x3 x2 x1
    let yp = _mm256_permute_ps::<0b10_11_00_01>(v.y); // y1 y0 y3 y2
    let zp = _mm256_permute_ps::<0b11_00_01_10>(v.z); // z2 z1 z0 z3
    let a = _mm256_blend_ps::<0x44>(_mm256_blend_ps::<0x22>(xp, yp), zp);
    let c = _mm256_blend_ps::<0x44>(_mm256_blend_ps::<0x22>(yp, zp), xp);
    let d = _mm256_blend_ps::<0x44>(_mm256_blend_ps::<0x22>(zp, xp), yp);
    let mut o0 = [[0.0f32; 4]; 3];
    let mut o1 = [[0.0f32; 4]; 3];
    for (k, r) in [a, c, d].into_iter().enumerate() {
        let (lo, hi) = halves(r);
        st4(&mut o0[k], lo);
        st4(&mut o1[k], hi);
    }
    (bytemuck::cast(o0), bytemuck::cast(o1))
}

/// 4x4 transposes inside each 128-bit half.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn transpose4_halves(r: [F8; 4]) -> [F8; 4] {
    let t0 = _mm256_unpacklo_ps(r[0], r[1]);
    let t1 = _mm256_unpackhi_ps(r[0], r[1]);
    let t2 = _mm256_unpacklo_ps(r[2], r[3]);
    let t3 = _mm256_unpackhi_ps(r[2], r[3]);
    [
        _mm256_shuffle_ps::<0b01_00_01_00>(t0, t2),
        _mm256_shuffle_ps::<0b11_10_11_10>(t0, t2),
        _mm256_shuffle_ps::<0b01_00_01_00>(t1, t3),
        _mm256_shuffle_ps::<0b11_10_11_10>(t1, t3),
    ]
}

/// Eight 4-vectors (`v[i]`) into four lanes-of-eight (`out[c][i] = v[i][c]`).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn transpose4x8(v: [__m128; 8]) -> [F8; 4] {
    transpose4_halves([
        pair(v[0], v[4]),
        pair(v[1], v[5]),
        pair(v[2], v[6]),
        pair(v[3], v[7]),
    ])
}

/// Eight 8-vectors into eight lanes-of-eight (`out[c][i] = v[i][c]`).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn transpose8(v: [F8; 8]) -> [F8; 8] {
    let a0 = _mm256_unpacklo_ps(v[0], v[1]);
    let a1 = _mm256_unpackhi_ps(v[0], v[1]);
    let a2 = _mm256_unpacklo_ps(v[2], v[3]);
    let a3 = _mm256_unpackhi_ps(v[2], v[3]);
    let a4 = _mm256_unpacklo_ps(v[4], v[5]);
    let a5 = _mm256_unpackhi_ps(v[4], v[5]);
    let a6 = _mm256_unpacklo_ps(v[6], v[7]);
    let a7 = _mm256_unpackhi_ps(v[6], v[7]);
    let b0 = _mm256_shuffle_ps::<0b01_00_01_00>(a0, a2);
    let b1 = _mm256_shuffle_ps::<0b11_10_11_10>(a0, a2);
    let b2 = _mm256_shuffle_ps::<0b01_00_01_00>(a1, a3);
    let b3 = _mm256_shuffle_ps::<0b11_10_11_10>(a1, a3);
    let b4 = _mm256_shuffle_ps::<0b01_00_01_00>(a4, a6);
    let b5 = _mm256_shuffle_ps::<0b11_10_11_10>(a4, a6);
    let b6 = _mm256_shuffle_ps::<0b01_00_01_00>(a5, a7);
    let b7 = _mm256_shuffle_ps::<0b11_10_11_10>(a5, a7);
    [
        _mm256_permute2f128_ps::<0x20>(b0, b4),
        _mm256_permute2f128_ps::<0x20>(b1, b5),
        _mm256_permute2f128_ps::<0x20>(b2, b6),
        _mm256_permute2f128_ps::<0x20>(b3, b7),
        _mm256_permute2f128_ps::<0x31>(b0, b4),
        _mm256_permute2f128_ps::<0x31>(b1, b5),
        _mm256_permute2f128_ps::<0x31>(b2, b6),
        _mm256_permute2f128_ps::<0x31>(b3, b7),
    ]
}

/// Two blocks of four tangents into lanes: `xyz` and `w`.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn from_blocks4(b0: &Block4, b1: &Block4) -> (V8, F8) {
    let r = transpose4_halves([
        pair(ld4(&b0[0]), ld4(&b1[0])),
        pair(ld4(&b0[1]), ld4(&b1[1])),
        pair(ld4(&b0[2]), ld4(&b1[2])),
        pair(ld4(&b0[3]), ld4(&b1[3])),
    ]);
    (
        V8 {
            x: r[0],
            y: r[1],
            z: r[2],
        },
        r[3],
    )
}

/// The inverse of [`from_blocks4`].
#[inline]
#[target_feature(enable = "avx2,fma")]
fn to_blocks4(v: V8, w: F8) -> (Block4, Block4) {
    let r = transpose4_halves([v.x, v.y, v.z, w]);
    let mut o0 = [[0.0f32; 4]; 4];
    let mut o1 = [[0.0f32; 4]; 4];
    for (k, r) in r.into_iter().enumerate() {
        let (lo, hi) = halves(r);
        st4(&mut o0[k], lo);
        st4(&mut o1[k], hi);
    }
    (o0, o1)
}

#[inline]
#[target_feature(enable = "avx2,fma")]
fn cross(a: V8, b: V8) -> V8 {
    V8 {
        x: _mm256_fmsub_ps(a.y, b.z, _mm256_mul_ps(a.z, b.y)),
        y: _mm256_fmsub_ps(a.z, b.x, _mm256_mul_ps(a.x, b.z)),
        z: _mm256_fmsub_ps(a.x, b.y, _mm256_mul_ps(a.y, b.x)),
    }
}

/// `a + (b - a) t`.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn lerp(a: V8, b: V8, t: F8) -> V8 {
    let l = |a, b| _mm256_fmadd_ps(_mm256_sub_ps(b, a), t, a);
    V8 {
        x: l(a.x, b.x),
        y: l(a.y, b.y),
        z: l(a.z, b.z),
    }
}

/// Palette entry `j`, without a bounds check: [`run`] skins only when every
/// palette it reads has at least `influences.joint_count()` entries, and a
/// [`CheckedInfluences`](super::CheckedInfluences) names only joints below
/// that count (a check at this point would be a large share of each
/// influence's lookup).
///
/// # Safety
/// `j < palette.len()`.
#[inline(always)]
unsafe fn entry<T>(palette: &[T], j: u16) -> &T {
    debug_assert!(usize::from(j) < palette.len());
    // SAFETY: the caller's promise.
    unsafe { palette.get_unchecked(usize::from(j)) }
}

/// A palette entry's rows 0-1 (one 8-float load) and row 2.
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Rows {
    r01: [f32; 8],
    r2: [f32; 4],
}

/// Eight blended LBS matrices in lanes: `m[r][c]`.
struct LaneMat([[F8; 4]; 3]);

/// Slots 4-7 of a block's eight vertices (eight influences per vertex) and
/// how many of them the block uses.
type Second<'a> = Option<(&'a [[u16; 4]; 8], &'a [[f32; 4]; 8], usize)>;

/// A palette entry on a cache line of its own: the entry's 12 floats, then
/// 4 zeros. A 48-byte [`Mat3x4`] palette puts a quarter of its entries'
/// 32-byte row pairs (and half of whole 48-byte entries) across two cache
/// lines, and those split loads are the largest cost of the LBS kernels
/// after the arithmetic; copying the palette to lines first removes them
/// (for the AVX2 kernel's row pairs and even more for the AVX-512 kernel,
/// which loads whole entries).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub(super) struct Line(pub(super) [f32; 16]);

/// The most palette entries the LBS kernels copy to [`Line`]s (16 KiB of
/// stack); larger palettes are read where they are.
pub(super) const LINES: usize = 256;

/// An LBS palette's entries: the palette itself, or its [`Line`]s
/// (`lines`); either way each entry starts with a [`Mat3x4`]'s 12 floats.
#[derive(Clone, Copy)]
pub(super) struct Entries {
    first: *const f32,
    lines: bool,
    len: usize,
}

impl Entries {
    pub(super) fn palette(p: &[Mat3x4]) -> Entries {
        Entries {
            first: p.as_ptr().cast(),
            lines: false,
            len: p.len(),
        }
    }

    pub(super) fn lines(l: &[Line]) -> Entries {
        Entries {
            first: l.as_ptr().cast(),
            lines: true,
            len: l.len(),
        }
    }

    /// Entry `j`, without a bounds check (see [`entry`]), `LINES` saying
    /// whether the entries are [`Line`]s (a compile-time stride: a
    /// run-time one would cost a multiplication per influence).
    ///
    /// # Safety
    /// `j < self.len`, `LINES == self.lines`, and the entries are still
    /// borrowed.
    #[inline(always)]
    unsafe fn rows<const LINES: bool>(&self, j: u16) -> &Rows {
        debug_assert!(usize::from(j) < self.len && LINES == self.lines);
        let stride = if LINES { 16 } else { 12 };
        // SAFETY: the caller's promise; every entry starts with 12 floats,
        // a `Rows` (alignment 4).
        unsafe { &*self.first.add(usize::from(j) * stride).cast::<Rows>() }
    }
}

/// The palette copied to `buf`, one entry per line, when it is worth it:
/// at most [`LINES`] entries and at least 8 vertices per entry (copying an
/// entry costs a small fraction of skinning 8 vertices, so the copy stays a
/// small share of the call, and a smaller one the more vertices each entry
/// serves).
pub(super) fn copy_to_lines<'a>(
    palette: &[Mat3x4],
    vertices: usize,
    buf: &'a mut [core::mem::MaybeUninit<Line>; LINES],
) -> Option<&'a [Line]> {
    let n = palette.len();
    if n > LINES || vertices < 8 * n {
        return None;
    }
    for (d, e) in buf.iter_mut().zip(palette) {
        let mut l = [0.0f32; 16];
        l[..12].copy_from_slice(bytemuck::cast_ref::<Mat3x4, [f32; 12]>(e));
        d.write(Line(l));
    }
    // SAFETY: the first `n` lines were written just above.
    Some(unsafe { core::slice::from_raw_parts(buf.as_ptr().cast::<Line>(), n) })
}

/// Blends the eight vertices' palette rows (slots `0..k`, `1 <= k <= 4`,
/// then the used slots of the `second` set) and transposes them into
/// lanes. The slot loop is outside the vertex loop: one copy of the code
/// serves every slot count, with one branch per slot per block
/// (specialising on the slot count saves no instructions, and four copies
/// are too large to inline).
///
/// # Safety
/// Every joint index of the first `k` slots of `joints`, and of the used
/// slots of `second`, is below `palette.len`, whose entries are borrowed;
/// `LINES == palette.lines`.
#[inline]
#[target_feature(enable = "avx2,fma")]
#[allow(clippy::extra_unused_type_parameters)] // `Site`: one copy per caller
unsafe fn lbs_matrix<Site, const LINES: bool>(
    palette: Entries,
    joints: &[[u16; 4]; 8],
    weights: &[[f32; 4]; 8],
    k: usize,
    second: Second<'_>,
) -> LaneMat {
    // SAFETY: the caller's promise.
    let rows = |j: u16| -> &Rows { unsafe { palette.rows::<LINES>(j) } };
    let mut r01 = [_mm256_setzero_ps(); 8];
    let mut r2 = [_mm_setzero_ps(); 8];
    for i in 0..8 {
        let e = rows(joints[i][0]);
        let w = _mm256_broadcast_ss(&weights[i][0]);
        r01[i] = _mm256_mul_ps(w, ld8(&e.r01));
        r2[i] = _mm_mul_ps(_mm_broadcast_ss(&weights[i][0]), ld4(&e.r2));
    }
    // Slots 1.. of the first set, then the used slots of the second.
    let slots = (1..k.min(4)).map(|s| (joints, weights, s));
    let more = second
        .into_iter()
        .flat_map(|(j, w, k1)| (0..k1.min(4)).map(move |s| (j, w, s)));
    for (joints, weights, s) in slots.chain(more) {
        for i in 0..8 {
            let e = rows(joints[i][s]);
            let w = _mm256_broadcast_ss(&weights[i][s]);
            r01[i] = _mm256_fmadd_ps(w, ld8(&e.r01), r01[i]);
            r2[i] = _mm_fmadd_ps(_mm_broadcast_ss(&weights[i][s]), ld4(&e.r2), r2[i]);
        }
    }
    let a = transpose8(r01);
    let b = transpose4x8(r2);
    LaneMat([[a[0], a[1], a[2], a[3]], [a[4], a[5], a[6], a[7]], b])
}

#[inline]
#[target_feature(enable = "avx2,fma")]
fn mat_point(m: &LaneMat, p: V8) -> V8 {
    let r = |m: &[F8; 4]| {
        _mm256_fmadd_ps(
            m[0],
            p.x,
            _mm256_fmadd_ps(m[1], p.y, _mm256_fmadd_ps(m[2], p.z, m[3])),
        )
    };
    V8 {
        x: r(&m.0[0]),
        y: r(&m.0[1]),
        z: r(&m.0[2]),
    }
}

#[inline]
#[target_feature(enable = "avx2,fma")]
fn mat_vector(m: &LaneMat, v: V8) -> V8 {
    let r = |m: &[F8; 4]| {
        _mm256_fmadd_ps(
            m[0],
            v.x,
            _mm256_fmadd_ps(m[1], v.y, _mm256_mul_ps(m[2], v.z)),
        )
    };
    V8 {
        x: r(&m.0[0]),
        y: r(&m.0[1]),
        z: r(&m.0[2]),
    }
}

/// Eight blended dual quaternions in lanes: the real part `(u, w)`, not
/// normalised, `s = 2 / |(u, w)|²`, and the translation `t`.
struct LaneDq {
    u: V8,
    w: F8,
    s: F8,
    t: V8,
}

/// `[r(i) | r(i + 4)]`: the real parts of two vertices' entries.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn reals(e: &[&DualQuat; 8], i: usize) -> F8 {
    pair(ld4(&e[i].real), ld4(&e[i + 4].real))
}

/// Eight vertices' four weights in lanes: slot `k` of vertex `i` in lane
/// `i` of `out[k]`.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn weight_lanes(w: &[[f32; 4]; 8]) -> [F8; 4] {
    transpose4_halves(core::array::from_fn(|j| pair(ld4(&w[j]), ld4(&w[j + 4]))))
}

/// Each of the eight floats of `x` in all eight lanes of its own register,
/// each loaded with one `vbroadcastss` from memory. With the intrinsic,
/// LLVM forwards a just-stored vector's lanes through registers instead (a
/// lane extract and a register broadcast: two shuffle uops per vertex and
/// slot, on the ports the transposes load); the assembly keeps them the
/// loads they are written as.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn broadcast8(x: &[f32; 8]) -> [F8; 8] {
    macro_rules! load {
        ($off:literal) => {{
            let v: F8;
            // SAFETY: reads 4 bytes at offset `$off` < 32 of `x`, a valid
            // reference to 32 bytes; no stack use, no flags.
            unsafe {
                core::arch::asm!(
                    concat!("vbroadcastss {v}, dword ptr [{p} + ", $off, "]"),
                    v = out(ymm_reg) v,
                    p = in(reg) x,
                    options(pure, readonly, nostack, preserves_flags),
                );
            }
            v
        }};
    }
    [
        load!(0),
        load!(4),
        load!(8),
        load!(12),
        load!(16),
        load!(20),
        load!(24),
        load!(28),
    ]
}

/// Sign-aligns and blends the eight vertices' dual quaternions (slots
/// `0..slots`, then the used slots of the `second` set), with `2 / |real|²`
/// in place of normalising them.
///
/// # Safety
/// Every joint index of the first `slots` slots of `joints`, and of the
/// used slots of `second`, is below `palette.len()`.
#[inline]
#[target_feature(enable = "avx2,fma")]
#[allow(clippy::extra_unused_type_parameters)] // `Site`: one copy per caller
unsafe fn dqs_transform<Site>(
    palette: &[DualQuat],
    aligned: bool,
    joints: &[[u16; 4]; 8],
    weights: &[[f32; 4]; 8],
    slots: usize,
    second: Second<'_>,
) -> LaneDq {
    // SAFETY (both lookups): the caller's promise.
    let e0: [&DualQuat; 8] = core::array::from_fn(|i| unsafe { entry(palette, joints[i][0]) });
    let mut acc: [F8; 8] = core::array::from_fn(|i| {
        let d: &[f32; 8] = bytemuck::cast_ref(e0[i]);
        _mm256_mul_ps(_mm256_broadcast_ss(&weights[i][0]), ld8(d))
    });
    let entries = |joints: &[[u16; 4]; 8], k: usize| -> [&DualQuat; 8] {
        // SAFETY: the caller's promise: every joint of the block is below
        // `palette.len()`.
        core::array::from_fn(|i| unsafe { entry(palette, joints[i][k]) })
    };
    let mut fma_all = |ek: &[&DualQuat; 8], w: [F8; 8]| {
        for i in 0..8 {
            let d: &[f32; 8] = bytemuck::cast_ref(ek[i]);
            acc[i] = _mm256_fmadd_ps(w[i], ld8(d), acc[i]);
        }
    };
    if aligned {
        // Every pair the block blends is in the same hemisphere already
        // (see `Palettes::dqs_aligned`): slot `k` of the eight vertices is
        // added with its weight as it is.
        let mut add = |joints: &[[u16; 4]; 8], weights: &[[f32; 4]; 8], k: usize| {
            let w = core::array::from_fn(|i| _mm256_broadcast_ss(&weights[i][k]));
            fma_all(&entries(joints, k), w);
        };
        for k in 1..slots.min(4) {
            add(joints, weights, k);
        }
        if let Some((j1, w1, k1)) = second {
            for k in 0..k1.min(4) {
                add(j1, w1, k);
            }
        }
    } else {
        let r0 = [reals(&e0, 0), reals(&e0, 1), reals(&e0, 2), reals(&e0, 3)];
        let sign = _mm256_set1_ps(-0.0);
        // Adds slot `k` of the eight vertices, sign-aligned with slot 0
        // (`lanes`: the set's weights, slot `k` of the eight vertices in
        // `lanes[k]`).
        let mut add = |joints: &[[u16; 4]; 8], lanes: &[F8; 4], k: usize| {
            let ek = entries(joints, k);
            // dot(r_k, r_0) of the eight vertices, in vertex order: the
            // hadd tree reduces [v_i | v_(i+4)] products into lanes i and
            // i + 4.
            let p = |i: usize| _mm256_mul_ps(reals(&ek, i), r0[i]);
            let dots = _mm256_hadd_ps(_mm256_hadd_ps(p(0), p(1)), _mm256_hadd_ps(p(2), p(3)));
            // The weights, negated where the influence is in the other
            // hemisphere, through memory: each vertex's is then one
            // broadcast load (see `broadcast8`).
            let flip = _mm256_and_ps(_mm256_cmp_ps::<_CMP_LT_OQ>(dots, _mm256_setzero_ps()), sign);
            let mut signed = [0.0f32; 8];
            store8(&mut signed, _mm256_xor_ps(lanes[k], flip));
            fma_all(&ek, broadcast8(&signed));
        };
        if slots > 1 {
            let lanes = weight_lanes(weights);
            for k in 1..slots.min(4) {
                add(joints, &lanes, k);
            }
        }
        if let Some((j1, w1, k1)) = second {
            let lanes = weight_lanes(w1);
            for k in 0..k1.min(4) {
                add(j1, &lanes, k);
            }
        }
    }
    let q = transpose8(acc);
    // Not normalised: with `s = 2 / |r|²`, the rotation of `v` by the
    // unit real part is `v + s r × (r × v + r_w v)` and the translation
    // `s (r_w d - d_w r + r × d)`, so one division (off the critical path
    // of the rotation) replaces a square root, a division and eight
    // products.
    let len2 = _mm256_add_ps(
        _mm256_fmadd_ps(q[0], q[0], _mm256_mul_ps(q[1], q[1])),
        _mm256_fmadd_ps(q[2], q[2], _mm256_mul_ps(q[3], q[3])),
    );
    let s = _mm256_div_ps(splat(2.0), len2);
    let u = V8 {
        x: q[0],
        y: q[1],
        z: q[2],
    };
    let du = V8 {
        x: q[4],
        y: q[5],
        z: q[6],
    };
    let c = cross(u, du);
    let t = |a: F8, b: F8, c: F8| {
        _mm256_mul_ps(
            s,
            _mm256_sub_ps(_mm256_fmadd_ps(q[3], a, c), _mm256_mul_ps(q[7], b)),
        )
    };
    LaneDq {
        u,
        w: q[3],
        s,
        t: V8 {
            x: t(du.x, u.x, c.x),
            y: t(du.y, u.y, c.y),
            z: t(du.z, u.z, c.z),
        },
    }
}

/// `v + s r × (r × v + r_w v)`: rotation by the real part `(r, r_w)`,
/// `s = 2 / |(r, r_w)|²`.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn dq_rotate(q: &LaneDq, v: V8) -> V8 {
    let a = cross(q.u, v);
    let a = V8 {
        x: _mm256_fmadd_ps(q.w, v.x, a.x),
        y: _mm256_fmadd_ps(q.w, v.y, a.y),
        z: _mm256_fmadd_ps(q.w, v.z, a.z),
    };
    let b = cross(q.u, a);
    V8 {
        x: _mm256_fmadd_ps(b.x, q.s, v.x),
        y: _mm256_fmadd_ps(b.y, q.s, v.y),
        z: _mm256_fmadd_ps(b.z, q.s, v.z),
    }
}

#[inline]
#[target_feature(enable = "avx2,fma")]
fn dq_point(q: &LaneDq, p: V8) -> V8 {
    let r = dq_rotate(q, p);
    V8 {
        x: _mm256_add_ps(r.x, q.t.x),
        y: _mm256_add_ps(r.y, q.t.y),
        z: _mm256_add_ps(r.z, q.t.z),
    }
}

/// Room for an aligned copy of a DQS palette (8 KiB of stack), on 64-byte
/// lines so that no entry's 32-byte load straddles two.
#[repr(C, align(64))]
pub(super) struct AlignedCopy([core::mem::MaybeUninit<DualQuat>; DQS_PAIR_MAX_JOINTS]);

impl AlignedCopy {
    pub(super) fn new() -> Self {
        AlignedCopy([const { core::mem::MaybeUninit::uninit() }; DQS_PAIR_MAX_JOINTS])
    }
}

/// `palette` copied to `buf` and signed by the influences' pair table (see
/// [`super::pairs`]), when this CPU has AVX2 and FMA, the palette fits and
/// the signs agree; `None` otherwise.
pub(super) fn aligned_copy<'a>(
    palette: &[DualQuat],
    infl: &Influences<'_>,
    buf: &'a mut AlignedCopy,
) -> Option<&'a [DualQuat]> {
    let n = palette.len();
    if !available() || n > DQS_PAIR_MAX_JOINTS {
        return None;
    }
    for (d, e) in buf.0.iter_mut().zip(palette) {
        d.write(*e);
    }
    // SAFETY: the first `n` entries were written just above.
    let copy = unsafe { core::slice::from_raw_parts_mut(buf.0.as_mut_ptr().cast::<DualQuat>(), n) };
    let (rest, margin) = super::pairs::sign_forest(copy, infl)?;
    // SAFETY: the CPU has AVX2 (asked above), and `sign_forest`
    // returned `Some`, so every pair's joints are below `copy.len()` (see
    // there).
    unsafe { pairs_positive(copy, rest, margin) }.then_some(copy)
}

/// [`super::pairs::pairs_positive`] eight pairs at a time, in the same
/// order of operations (so with the same answer): the two real parts of
/// pairs `i` and `i + 4` multiplied in one register, the products reduced
/// by two rounds of horizontal adds.
///
/// # Safety
/// The CPU has AVX2 and FMA; every joint of `pairs` is below
/// `palette.len()`.
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn pairs_positive(palette: &[DualQuat], pairs: &[[u16; 2]], margin: f32) -> bool {
    let (chunks, tail) = pairs.as_chunks::<8>();
    let m = splat(margin);
    let mut ok = _mm256_cmp_ps::<_CMP_EQ_OQ>(m, m);
    for c in chunks {
        // SAFETY (both): the caller's promise.
        let a: [&DualQuat; 8] = core::array::from_fn(|i| unsafe { entry(palette, c[i][0]) });
        let b: [&DualQuat; 8] = core::array::from_fn(|i| unsafe { entry(palette, c[i][1]) });
        let p = |i: usize| _mm256_mul_ps(reals(&a, i), reals(&b, i));
        let dots = _mm256_hadd_ps(_mm256_hadd_ps(p(0), p(1)), _mm256_hadd_ps(p(2), p(3)));
        ok = _mm256_and_ps(ok, _mm256_cmp_ps::<_CMP_GT_OQ>(dots, m));
    }
    _mm256_movemask_ps(ok) == 0xFF && super::pairs::pairs_positive(palette, tail, margin)
}

/// One block's attributes, in lanes.
#[derive(Clone, Copy)]
struct Verts {
    p: V8,
    n: V8,
    t: V8,
}

/// A distinct type per instantiation of [`run_avx2`]: the helpers it calls
/// take it as a type parameter, so each of their copies has one caller and
/// is inlined into it (shared between a dozen callers they would not be,
/// and every block would pay a call and its spills).
struct Site<P, S, D, const N: bool, const T: bool, const E: bool>(
    core::marker::PhantomData<(P, S, D)>,
);

/// Skins eight vertices with the first `slots` influence slots (1-4) and
/// the used slots of the `second` set.
///
/// # Safety
/// Every joint index in `joints` is below the length of each palette of `m`
/// that `P` reads.
#[inline]
#[target_feature(enable = "avx2,fma")]
#[allow(clippy::too_many_arguments)]
unsafe fn block<P: Palettes, const N: bool, const T: bool, Site>(
    m: &P,
    lbs: Entries,
    first: usize,
    joints: &[[u16; 4]; 8],
    weights: &[[f32; 4]; 8],
    slots: usize,
    second: Second<'_>,
    v: &Verts,
) -> Verts {
    let z = zero3();
    let lbs = if P::LBS {
        // SAFETY: the caller's promise.
        let m = unsafe {
            if lbs.lines {
                lbs_matrix::<Site, true>(lbs, joints, weights, slots, second)
            } else {
                lbs_matrix::<Site, false>(lbs, joints, weights, slots, second)
            }
        };
        Verts {
            p: mat_point(&m, v.p),
            n: if N { mat_vector(&m, v.n) } else { z },
            t: if T { mat_vector(&m, v.t) } else { z },
        }
    } else {
        Verts { p: z, n: z, t: z }
    };
    if !P::DQS {
        return lbs;
    }
    // SAFETY: the caller's promise.
    let q =
        unsafe { dqs_transform::<Site>(m.dqs(), m.dqs_aligned(), joints, weights, slots, second) };
    let dqs = Verts {
        p: dq_point(&q, v.p),
        n: if N { dq_rotate(&q, v.n) } else { z },
        t: if T { dq_rotate(&q, v.t) } else { z },
    };
    if !P::LBS {
        return dqs;
    }
    let mix = m
        .mix()
        .get(first..)
        .and_then(|s| s.first_chunk::<8>())
        .map_or(_mm256_setzero_ps(), |c| ld8(c));
    Verts {
        p: lerp(lbs.p, dqs.p, mix),
        n: if N { lerp(lbs.n, dqs.n, mix) } else { z },
        t: if T { lerp(lbs.t, dqs.t, mix) } else { z },
    }
}

/// How many leading influence slots the eight vertices use (0-4; 0 and 1
/// both skin with slot 0).
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn slots_used(weights: &[[f32; 4]; 8]) -> u32 {
    let mut any = _mm_setzero_ps();
    for w in weights {
        any = _mm_or_ps(any, ld4(w));
    }
    let mask = _mm_movemask_ps(_mm_cmpneq_ps(any, _mm_setzero_ps())) as u32;
    32 - mask.leading_zeros()
}

/// Skins the vertices in whole blocks of eight if this CPU has AVX2 and
/// FMA, and returns how many it skinned (a multiple of 8, or 0 without
/// them); the caller's portable kernel does the rest.
#[inline]
pub(crate) fn run<P: Palettes, S: Source, D: Sink, const N: bool, const T: bool, const E: bool>(
    m: &P,
    infl: &Influences<'_>,
    src: &S,
    dst: &mut D,
) -> usize {
    // Every palette read must cover the influences' joints (the unchecked
    // lookups of `entry` rely on it); the public kernels check this before.
    let n = infl.joint_count;
    let covered = (!P::LBS || m.lbs().len() >= n) && (!P::DQS || m.dqs().len() >= n);
    if available() && covered {
        let mut buf = [const { core::mem::MaybeUninit::uninit() }; LINES];
        let lines = if P::LBS {
            (m.lbs().get(..n)).and_then(|p| copy_to_lines(p, infl.joints.len(), &mut buf))
        } else {
            None
        };
        // Plain LBS of positions and normals over arrays on AVX-512 CPUs
        // (over interleaved buffers, an AVX-512 kernel that reads vertices
        // as 4-float vectors is no faster than this AVX2 one).
        if let (Some(lines), true) = (
            lines,
            P::LBS && !P::DQS && !T && !E && !S::INTERLEAVED && !D::INTERLEAVED,
        ) {
            let done = super::avx512::lbs_run::<S, D, N>(lines, infl, src, dst);
            if done > 0 {
                return done;
            }
        }
        let lbs = lines.map_or(Entries::palette(m.lbs()), Entries::lines);
        // SAFETY: the CPU has AVX2 and FMA, and the OS saves their
        // registers; the palettes cover every joint index (see `entry`),
        // and `lbs` has the LBS palette's first `n` entries at least.
        unsafe { run_avx2::<P, S, D, N, T, E>(m, lbs, infl, src, dst) }
    } else {
        0
    }
}

/// # Safety
/// The CPU has AVX2 and FMA; every palette of `m` that `P` reads has at
/// least `infl.joint_count` entries.
#[target_feature(enable = "avx2,fma")]
///
/// `E`: the influences have eight slots per vertex.
unsafe fn run_avx2<P: Palettes, S: Source, D: Sink, const N: bool, const T: bool, const E: bool>(
    m: &P,
    lbs: Entries,
    infl: &Influences<'_>,
    src: &S,
    dst: &mut D,
) -> usize {
    let (jb, _) = infl.joints.as_chunks::<8>();
    let (wb, _) = infl.weights.as_chunks::<8>();
    let (jb1, _) = infl.joints1.as_chunks::<8>();
    let (wb1, _) = infl.weights1.as_chunks::<8>();
    let z = zero3();
    // Bounded by the attribute arrays too (validated to be as long as the
    // influences), which is the block accessors' contract.
    let len = src.len_bound().min(dst.len_bound());
    let blocks = jb.len().min(wb.len()).min(len / 8);
    for b in 0..blocks {
        let (j, w) = (&jb[b], &wb[b]);
        let second = (if E { jb1.get(b) } else { None })
            .zip(wb1.get(b))
            .map(|(j1, w1)| (j1, w1, slots_used(w1) as usize));
        // The `block_*` and `…4` accessors below need `4 b1 + 4 = 8b + 8
        // <= len` (true for `b < blocks`) and `first + i < 8b + 8`.
        let (b0, b1) = (2 * b, 2 * b + 1);
        let first = b * 8;
        let p = if S::INTERLEAVED {
            // SAFETY: `first + i < 8b + 8 <= len`, the source's bound.
            from_vec4s(&core::array::from_fn(|i| unsafe {
                src.position4(first + i)
            }))
        } else {
            // SAFETY: `8b + 8 <= len`, the source's bound.
            let (p0, p1) = unsafe { src.block8_positions(b) };
            from_blocks3(&p0, &p1)
        };
        let n = if !N {
            z
        } else if S::INTERLEAVED {
            // SAFETY: `first + i < 8b + 8 <= len`, the source's bound.
            from_vec4s(&core::array::from_fn(|i| unsafe { src.normal4(first + i) }))
        } else {
            // SAFETY: `8b + 8 <= len`, the source's bound.
            let (n0, n1) = unsafe { src.block8_normals(b) };
            from_blocks3(&n0, &n1)
        };
        let (t, tw) = if T {
            // SAFETY: `4 b1 + 4 = 8b + 8 <= len`, the source's bound.
            unsafe { from_blocks4(&src.block_tangents(b0), &src.block_tangents(b1)) }
        } else {
            (z, _mm256_setzero_ps())
        };
        let v = Verts { p, n, t };
        // SAFETY: `infl` is checked, so its joints are below
        // `joint_count`, which the palettes cover (the caller's promise).
        let out = unsafe {
            block::<P, N, T, Site<P, S, D, N, T, E>>(
                m,
                lbs,
                first,
                j,
                w,
                slots_used(w) as usize,
                second,
                &v,
            )
        };
        if D::INTERLEAVED {
            for (i, p) in to_vec4s(out.p).iter().enumerate() {
                // SAFETY: `first + i < 8b + 8 <= len`, the sink's bound.
                unsafe { dst.set_position4(first + i, p) };
            }
        } else {
            let (p0, p1) = to_blocks3(out.p);
            // SAFETY: `4 b1 + 4 = 8b + 8 <= len`, the sink's bound.
            unsafe {
                dst.set_block_positions(b0, &p0);
                dst.set_block_positions(b1, &p1);
            }
        }
        if N && D::INTERLEAVED {
            for (i, n) in to_vec4s(out.n).iter().enumerate() {
                // SAFETY: `first + i < 8b + 8 <= len`, the sink's bound.
                unsafe { dst.set_normal4(first + i, n) };
            }
        } else if N {
            let (n0, n1) = to_blocks3(out.n);
            // SAFETY: `4 b1 + 4 = 8b + 8 <= len`, the sink's bound.
            unsafe {
                dst.set_block_normals(b0, &n0);
                dst.set_block_normals(b1, &n1);
            }
        }
        if T {
            let (t0, t1) = to_blocks4(out.t, tw);
            // SAFETY: `4 b1 + 4 = 8b + 8 <= len`, the sink's bound.
            unsafe {
                dst.set_block_tangents(b0, &t0);
                dst.set_block_tangents(b1, &t1);
            }
        }
    }
    blocks * 8
}

// ---------------------------------------------------------------------------
// Palettes: eight joints per block, one joint per lane.

/// Column `c` of eight affine matrices in lanes (rows 0-2). Each column is
/// a 4x4 transpose inside the 128-bit halves of `[m_i | m_(i+4)]` (a load
/// and a load-insert per pair, off the shuffle port), not an 8x8 transpose;
/// row 3, which affine products never read, is dead code.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn mat4_col_lanes(m: &[Mat4; 8], c: usize) -> [F8; 3] {
    let t = transpose4_halves(core::array::from_fn(|i| {
        pair(ld4(&m[i].cols[c]), ld4(&m[i + 4].cols[c]))
    }));
    [t[0], t[1], t[2]]
}

/// The LBS palette if this CPU has AVX2 and FMA; returns how many entries
/// it wrote (all, or 0). The slices have equal lengths (checked by the
/// caller).
///
/// One joint at a time, not in lanes: the product's columns are twelve
/// fused multiply-adds of the model matrix's columns by inverse bind
/// elements broadcast straight from memory (load-port work only), and one
/// 3-row transpose (7 shuffles) turns them into rows. The lane-wise form
/// (eight joints transposed in, multiplied, transposed out) takes fewer
/// instructions but many more shuffles per joint, all on the one shuffle
/// port, so it is no faster than the portable kernel; the other forms
/// without a prepared layout are slower (see [`lbs_prepared`]).
/// [`lbs_palette_prepared`](super::lbs_palette_prepared) does less work per
/// joint by laying out the inverse binds once per mesh.
pub(crate) fn lbs_palette(models: &[Mat4], ibm: &[Mat4], out: &mut [Mat3x4]) -> usize {
    if !available() {
        return 0;
    }
    // SAFETY: the CPU has AVX2 and FMA.
    unsafe { lbs_palette_avx2(models, ibm, out) }
}

#[target_feature(enable = "avx2,fma")]
fn lbs_palette_avx2(models: &[Mat4], ibm: &[Mat4], out: &mut [Mat3x4]) -> usize {
    let mut done = 0;
    for ((m, b), o) in models.iter().zip(ibm).zip(out.iter_mut()) {
        let mc = [
            ld4(&m.cols[0]),
            ld4(&m.cols[1]),
            ld4(&m.cols[2]),
            ld4(&m.cols[3]),
        ];
        let e = |c: usize, r: usize| _mm_broadcast_ss(&b.cols[c][r]);
        let col = |c: usize| {
            let t = if c == 3 {
                _mm_fmadd_ps(mc[2], e(c, 2), mc[3])
            } else {
                _mm_mul_ps(mc[2], e(c, 2))
            };
            _mm_fmadd_ps(mc[0], e(c, 0), _mm_fmadd_ps(mc[1], e(c, 1), t))
        };
        let (c0, c1, c2, c3) = (col(0), col(1), col(2), col(3));
        let t0 = _mm_unpacklo_ps(c0, c1); // c0r0 c1r0 c0r1 c1r1
        let t1 = _mm_unpacklo_ps(c2, c3);
        let t2 = _mm_unpackhi_ps(c0, c1); // c0r2 c1r2 c0r3 c1r3
        let t3 = _mm_unpackhi_ps(c2, c3);
        st4(&mut o.rows[0], _mm_movelh_ps(t0, t1));
        st4(&mut o.rows[1], _mm_movehl_ps(t1, t0));
        st4(&mut o.rows[2], _mm_movelh_ps(t2, t3));
        done += 1;
    }
    done
}
/// [`lbs_palette`] from prepared inverse binds ([`LbsBind`]); returns how
/// many entries it wrote (all, or 0 without AVX2 and FMA).
///
/// The product's columns two per register, `[c0 | c2]` and `[c1 | c3]`:
/// six fused multiply-adds of `[m col k | m col k]` (a 128-bit broadcast
/// load; column 3 of `m`, in the high half, is the second sum's addend) by
/// the prepared `[b_k0 ×4 | b_k2 ×4]` and `[b_k1 ×4 | b_k3 ×4]` as memory
/// operands, then two unpacks and two 64-bit permutes give rows 0-1 and
/// row 2. The pairing `[c0 | c1]`, `[c3 | c2]` would need three 32-bit
/// lane permutes and two blends per joint more, and the FMA pipes, which
/// also take the permutes, are the limit. Without the preparation the
/// spread elements cost two broadcasts and a blend each, which makes it
/// slower than [`lbs_palette`]; computing rows directly needs `m`'s
/// elements spread over each half instead, a shuffle each, which the
/// shuffle port makes slower too.
pub(crate) fn lbs_prepared(models: &[Mat4], binds: &[LbsBind], out: &mut [Mat3x4]) -> usize {
    if !available() {
        return 0;
    }
    // SAFETY: the CPU has AVX2 and FMA.
    unsafe { lbs_prepared_avx2(models, binds, out) }
}

/// `[a | a]` (a 128-bit broadcast load).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn ld4x2(a: &[f32; 4]) -> F8 {
    let v = ld4(a);
    pair(v, v)
}

/// `[c0 | c2]` and `[c1 | c3]` of `m * b`, given `s` = `b`'s elements
/// spread as in [`LbsBind`].
#[inline]
#[target_feature(enable = "avx2,fma")]
fn lbs_cols(m: &Mat4, s: &[F8; 6]) -> (F8, F8) {
    let c: [F8; 3] = core::array::from_fn(|k| ld4x2(&m.cols[k]));
    // `m`'s translation is the addend of column 3 only: the high half.
    let t = _mm256_insertf128_ps::<1>(_mm256_setzero_ps(), ld4(&m.cols[3]));
    let a = _mm256_fmadd_ps(
        c[0],
        s[0],
        _mm256_fmadd_ps(c[1], s[1], _mm256_mul_ps(c[2], s[2])),
    );
    let b = _mm256_fmadd_ps(
        c[0],
        s[3],
        _mm256_fmadd_ps(c[1], s[4], _mm256_fmadd_ps(c[2], s[5], t)),
    );
    (a, b)
}

/// `[row 0 | row 1]` and `[row 2 | row 3]` of the columns `a = [c0 | c2]`,
/// `b = [c1 | c3]`: two unpacks and two 64-bit lane permutes.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn lbs_rows(a: F8, b: F8) -> (F8, F8) {
    // unpacklo = [c0r0 c1r0 c0r1 c1r1 | c2r0 c3r0 c2r1 c3r1], unpackhi the
    // same for rows 2 and 3; 64-bit elements 0 2 1 3 are rows in order.
    let order =
        |v: F8| _mm256_castpd_ps(_mm256_permute4x64_pd::<0b11_01_10_00>(_mm256_castps_pd(v)));
    (
        order(_mm256_unpacklo_ps(a, b)),
        order(_mm256_unpackhi_ps(a, b)),
    )
}

/// Writes a palette from the columns that `cols` yields per joint (see
/// [`lbs_cols`]; at most `out.len()` are taken): rows 0-1 as one 32-byte
/// store, row 2 as a 16-byte one (left to itself the compiler splits the
/// first into two 16-byte stores, which costs one more permute). Row 2 is
/// not written as a whole `[row 2 | row 3]` into the next entry (which
/// would then overwrite it): that is much slower.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn lbs_store_all(out: &mut [Mat3x4], cols: impl Iterator<Item = (F8, F8)>) -> usize {
    let mut done = 0;
    for (o, (a, b)) in out.iter_mut().zip(cols) {
        let (r01, r23) = lbs_rows(a, b);
        let rows: &mut Rows = bytemuck::cast_mut(o);
        store8(&mut rows.r01, r01);
        st4(&mut rows.r2, _mm256_castps256_ps128(r23));
        done += 1;
    }
    done
}

#[target_feature(enable = "avx2,fma")]
fn lbs_prepared_avx2(models: &[Mat4], binds: &[LbsBind], out: &mut [Mat3x4]) -> usize {
    let cols = models.iter().zip(binds).map(|(m, b)| {
        let s: [F8; 6] = core::array::from_fn(|i| ld8(&b.spread[i]));
        lbs_cols(m, &s)
    });
    lbs_store_all(out, cols)
}

// ---------------------------------------------------------------------------
// The DQS palette.

#[inline]
#[target_feature(enable = "avx2,fma")]
fn mul(a: F8, b: F8) -> F8 {
    _mm256_mul_ps(a, b)
}

/// `a b + c`.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn fma(a: F8, b: F8, c: F8) -> F8 {
    _mm256_fmadd_ps(a, b, c)
}

/// `c - a b`.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn fnma(a: F8, b: F8, c: F8) -> F8 {
    _mm256_fnmadd_ps(a, b, c)
}

#[inline]
#[target_feature(enable = "avx2,fma")]
fn dot3(a: [F8; 3], b: [F8; 3]) -> F8 {
    fma(a[0], b[0], fma(a[1], b[1], mul(a[2], b[2])))
}

/// `a × b`.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn cross3(a: [F8; 3], b: [F8; 3]) -> [F8; 3] {
    [
        fnma(a[2], b[1], mul(a[1], b[2])),
        fnma(a[0], b[2], mul(a[2], b[0])),
        fnma(a[1], b[0], mul(a[0], b[1])),
    ]
}

/// `k / √a` as `√a · (k / a)`: the square root and the division run side
/// by side instead of one after the other (they are the chain's slowest
/// steps). Both are correctly rounded, so the result is the same on every
/// CPU; it differs from `k / √a` by at most an ulp or so.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn inv_sqrt(a: F8, k: F8) -> F8 {
    mul(_mm256_sqrt_ps(a), _mm256_div_ps(k, a))
}

/// The first half of eight joints' DQS entries (see [`dqs_first`]).
#[derive(Clone, Copy)]
struct Half {
    /// The unnormalised rotation quaternion, `(x, y, z, w)`.
    v: [F8; 4],
    /// The translation.
    t: [F8; 3],
    /// The dropped scale (only computed when asked for).
    s: [F8; 3],
}

/// Up to the unnormalised rotation: the product `m * b` in lanes, the
/// Gram–Schmidt rotation and the sum of its quaternion candidates (and, if
/// `S`, the dropped scale). Numerically the portable `palette::detail::rigid`,
/// arranged for a short dependency chain:
///
/// - The axes come from `w = c0 × c1`, which needs no square root:
///   `z = w / |w|` and `y = z × x = (w × c0) / (|w| |c0|)`, with
///   `w × c0 = |c0|² c1 - (c0·c1) c0`. The candidates are computed times
///   `|c0| |w|`, so the only square roots are `|c0|` and `|w|`, side by
///   side, and no division is needed (the final normalisation removes the
///   factor).
/// - The rotation matrix is never formed: each diagonal sum and off-diagonal
///   sum or difference the candidates need is one multiply-add of terms
///   computed before it (e.g. `|c0| |w| (m11 + m22) = y'1 + |c0| w2`).
/// - The four Shepperd candidates are each `4 q_k q`; instead of selecting
///   the largest (twelve blends), they are added up, each with the sign of
///   the sum's own component `k` so far (that component is `4 q_k` times
///   the sum's factor, so the sign is right unless the candidate or the
///   sum so far is about zero, when it does not matter). The sum is
///   `4 (|q_w| + |q_x| + |q_y| + |q_z|) q`, at least 4 long, so it is as
///   well conditioned as the best candidate.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn dqs_first<const S: bool>(m: &[Mat4; 8], b: &Lanes, h: &mut Half) {
    // p[c][r] = element (r, c) of m * b (column 2 only for the scale),
    // summed over m's columns k as each is transposed, so that only one
    // of them is live at a time.
    let cols: &[usize] = if S { &[0, 1, 2, 3] } else { &[0, 1, 3] };
    let mut p = [[_mm256_setzero_ps(); 3]; 4];
    for k in 0..4 {
        let mk = mat4_col_lanes(m, k);
        for &c in cols {
            let bk = ld8(&b[c][k.min(2)]);
            for r in 0..3 {
                p[c][r] = match k {
                    0 => mul(mk[r], bk),
                    3 if c == 3 => _mm256_add_ps(p[c][r], mk[r]),
                    3 => p[c][r],
                    _ => fma(mk[r], bk, p[c][r]),
                };
            }
        }
    }
    // Stored now rather than kept in registers until the end.
    h.t = p[3];
    let one = splat(1.0);
    let (c0, c1) = (p[0], p[1]);
    let n0 = dot3(c0, c0);
    let d01 = dot3(c0, c1);
    let w = cross3(c0, c1);
    let nw = dot3(w, w);
    // y' = |c0|² c1 - (c0·c1) c0 = w × c0 = |c0| |w| y.
    let yu: [F8; 3] = core::array::from_fn(|i| fnma(d01, c0[i], mul(c1[i], n0)));
    // The candidates below are the Shepperd ones times |c0| |w| (> 0; the
    // sum is normalised at the end anyway): in those units x = c0 and
    // yi = y' need no reciprocal, the unit terms become |c0|, and w's
    // terms are scaled by |c0|. Two square roots side by side and no
    // division on the chain (a reciprocal of |c0| would cost a division,
    // which shares the divider with the square roots).
    let s0 = _mm256_sqrt_ps(n0);
    let sw = _mm256_sqrt_ps(nw);
    let (x, yi) = (c0, yu);
    let ws: [F8; 3] = core::array::from_fn(|i| mul(w[i], s0));
    // |c0| |w| (m11 ± m22) = y'1 ± |c0| w2.
    let (a, b) = (_mm256_add_ps(yi[1], ws[2]), _mm256_sub_ps(yi[1], ws[2]));
    let (pw, py) = (_mm256_add_ps(s0, x[0]), _mm256_sub_ps(s0, x[0]));
    let tw = fma(pw, sw, a);
    let tx = _mm256_fmsub_ps(pw, sw, a);
    let ty = fma(py, sw, b);
    let tz = _mm256_fmsub_ps(py, sw, b);
    let m21_m12 = _mm256_sub_ps(yi[2], ws[1]);
    let m02_m20 = fnma(x[2], sw, ws[0]);
    let m10_m01 = _mm256_fmsub_ps(x[1], sw, yi[0]);
    let m01_m10 = fma(x[1], sw, yi[0]);
    let m02_m20p = fma(x[2], sw, ws[0]);
    let m12_m21 = _mm256_add_ps(ws[1], yi[2]);
    let vx = [tx, m01_m10, m02_m20p, m21_m12];
    let vy = [m01_m10, ty, m12_m21, m02_m20];
    let vz = [m02_m20p, m12_m21, tz, m10_m01];
    let mut v = [m21_m12, m02_m20, m10_m01, tw];
    for (k, c) in [vx, vy, vz].into_iter().enumerate() {
        // ±1 with the sign of v[k].
        let sign = _mm256_or_ps(_mm256_and_ps(v[k], splat(-0.0)), one);
        v = core::array::from_fn(|i| fma(c[i], sign, v[i]));
    }
    if S {
        // s0 = |c0|, s1 = |w| / |c0|, s2 = z·c2 = (w·c2) / |w|.
        h.s = [s0, _mm256_div_ps(sw, s0), _mm256_div_ps(dot3(w, p[2]), sw)];
    }
    h.v = v;
}

/// The second half: the quaternion normalised with `w >= 0`, the dual part
/// `½ (t, 0) q`, and one 32-byte store `[real | dual]` per joint.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn dqs_second(h: &Half, o: &mut [DualQuat; 8]) {
    let v = h.v;
    let n = _mm256_add_ps(
        fma(v[0], v[0], mul(v[1], v[1])),
        fma(v[2], v[2], mul(v[3], v[3])),
    );
    // ±1 / |v|, the sign making w >= 0, and ±1 / (2 |v|).
    let sign = _mm256_or_ps(_mm256_and_ps(v[3], splat(-0.0)), splat(1.0));
    let inv = inv_sqrt(n, sign);
    let half = mul(inv, splat(0.5));
    let q: [F8; 4] = core::array::from_fn(|i| mul(v[i], inv));
    // ½ (t, 0) q, from the quaternion before it is normalised.
    let t = h.t;
    let dual = [
        mul(fma(t[0], v[3], fnma(t[2], v[1], mul(t[1], v[2]))), half),
        mul(fma(t[1], v[3], fnma(t[0], v[2], mul(t[2], v[0]))), half),
        mul(fma(t[2], v[3], fnma(t[1], v[0], mul(t[0], v[1]))), half),
        mul(dot3(t, [v[0], v[1], v[2]]), mul(splat(-1.0), half)),
    ];
    let real = transpose4_halves(q);
    let dual = transpose4_halves(dual);
    for i in 0..4 {
        // `[real | dual]` of joints i and i + 4: one 32-byte store each.
        st8(&mut o[i], _mm256_permute2f128_ps::<0x20>(real[i], dual[i]));
        st8(
            &mut o[i + 4],
            _mm256_permute2f128_ps::<0x31>(real[i], dual[i]),
        );
    }
}

/// Stores eight joints' dropped scales.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn store_scale(s: [F8; 3], o: &mut [[f32; 3]; 8]) {
    let r = transpose4_halves([s[0], s[1], s[2], _mm256_setzero_ps()]);
    let mut tmp = [[0.0f32; 4]; 8];
    for i in 0..4 {
        let (lo, hi) = halves(r[i]);
        st4(&mut tmp[i], lo);
        st4(&mut tmp[i + 4], hi);
    }
    for (o, t) in o.iter_mut().zip(tmp) {
        *o = [t[0], t[1], t[2]];
    }
}

/// Blocks whose first halves run before their second halves.
///
/// A block's dependency chain (transposes, product, Gram–Schmidt, two
/// reciprocal square roots, the candidates' sum, a third, the stores) is
/// about twice as long as its work, and one block after another leaves the
/// scheduler full of instructions waiting on it: the first halves of four
/// blocks, then their second halves, are two shorter chains each with
/// independent neighbours. (Four whole blocks side by side would not fit
/// in the registers, and their spills cost more than they save.)
const CHUNK: usize = 4;

/// Runs `first` on blocks `k .. k + CHUNK`, then `second` on them, for
/// `k = 0, CHUNK, …` below `blocks`.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn chunked(
    blocks: usize,
    mut first: impl FnMut(usize, &mut Half),
    mut second: impl FnMut(usize, &Half),
) {
    let zero = _mm256_setzero_ps();
    let mut h = [Half {
        v: [zero; 4],
        t: [zero; 3],
        s: [zero; 3],
    }; CHUNK];
    for k in (0..blocks).step_by(CHUNK) {
        let n = (blocks - k).min(CHUNK);
        for (i, h) in h.iter_mut().take(n).enumerate() {
            first(k + i, h);
        }
        for (i, h) in h.iter().take(n).enumerate() {
            second(k + i, h);
        }
    }
}

/// Eight affine matrices' elements (rows 0-2) in lanes, as
/// [`DqsBinds`] stores them: `e[c][r][lane]`.
type Lanes = [[[f32; 8]; 3]; 4];

/// `b`'s elements in lanes ([`mat4_col_lanes`], stored).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn lanes_of(b: &[Mat4; 8]) -> Lanes {
    let e: [[F8; 3]; 4] = core::array::from_fn(|c| mat4_col_lanes(b, c));
    let mut out = [[[0.0; 8]; 3]; 4];
    for (o, e) in out.iter_mut().zip(e) {
        for (o, e) in o.iter_mut().zip(e) {
            store8(o, e);
        }
    }
    out
}

/// Fewer than eight joints: padded with identities, written through copies.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn dqs_padded<const S: bool>(
    models: &[Mat4],
    b: &Lanes,
    out: &mut [DualQuat],
    scale: Option<&mut [[f32; 3]]>,
) {
    let mut m = [Mat4::IDENTITY; 8];
    for (d, s) in m.iter_mut().zip(models) {
        *d = *s;
    }
    let zero = _mm256_setzero_ps();
    let mut h = Half {
        v: [zero; 4],
        t: [zero; 3],
        s: [zero; 3],
    };
    dqs_first::<S>(&m, b, &mut h);
    let mut o = [DualQuat::IDENTITY; 8];
    dqs_second(&h, &mut o);
    for (d, s) in out.iter_mut().zip(o) {
        *d = s;
    }
    if let (true, Some(scale)) = (S, scale) {
        let mut sc = [[0.0f32; 3]; 8];
        store_scale(h.s, &mut sc);
        for (d, s) in scale.iter_mut().zip(sc) {
            *d = s;
        }
    }
}

/// The DQS palette (and the dropped scales, if asked) if this CPU has AVX2
/// and FMA; returns how many entries it wrote (all, or 0 without them).
/// The slices have equal lengths (checked by the caller).
///
/// Blocks of 8 joints ([`dqs_first`], [`dqs_second`], [`chunked`]), each
/// block's inverse binds transposed into lanes first (as [`DqsBinds`]
/// holds them); a remainder of 1-7 joints is one more block over the last
/// 8 joints, which rewrites some entries with the values they already have
/// (every joint's result depends on its own matrices only), and fewer than
/// 8 joints are padded with identities.
pub(crate) fn dqs_palette(
    models: &[Mat4],
    ibm: &[Mat4],
    out: &mut [DualQuat],
    scale: Option<&mut [[f32; 3]]>,
) -> usize {
    if !available() {
        return 0;
    }
    // SAFETY: the CPU has AVX2 and FMA.
    unsafe {
        match scale {
            None => dqs_palette_avx2::<false>(models, ibm, out, None),
            Some(s) => dqs_palette_avx2::<true>(models, ibm, out, Some(s)),
        }
    }
}

#[target_feature(enable = "avx2,fma")]
fn dqs_palette_avx2<const S: bool>(
    models: &[Mat4],
    ibm: &[Mat4],
    out: &mut [DualQuat],
    scale: Option<&mut [[f32; 3]]>,
) -> usize {
    let n = out.len();
    if n < 8 {
        dqs_padded::<S>(models, &DqsBinds::new(ibm).lanes, out, scale);
        return n;
    }
    // Block k < n / 8 is joints 8 k .. 8 k + 8; a last one, if n is not a
    // multiple of 8, is the last 8 joints.
    let blocks = n.div_ceil(8);
    let (models, ibm) = (Blocks::of(models), Blocks::of(ibm));
    let first = |k: usize, h: &mut Half| {
        if let (Some(m), Some(b)) = (models.get(k), ibm.get(k)) {
            dqs_first::<S>(m, &lanes_of(b), h);
        }
    };
    let mut scale = scale;
    let second = |k: usize, h: &Half| {
        if let Some(o) = block_of_mut(out, k) {
            dqs_second(h, o);
        }
        if S {
            if let Some(s) = scale.as_deref_mut().and_then(|s| block_of_mut(s, k)) {
                store_scale(h.s, s);
            }
        }
    };
    chunked(blocks, first, second);
    n
}

/// A palette's joints in blocks of eight: block `k` is joints
/// `8 k .. 8 k + 8` for `k < len / 8`, else the last 8 (overlapping the
/// block before when `len` is not a multiple of 8); `None` when there are
/// fewer than 8. The split is made once, outside the block loop.
struct Blocks<'a, T> {
    whole: &'a [[T; 8]],
    last: Option<&'a [T; 8]>,
}

impl<'a, T> Blocks<'a, T> {
    fn of(s: &'a [T]) -> Self {
        Blocks {
            whole: s.as_chunks::<8>().0,
            last: s.last_chunk::<8>(),
        }
    }

    fn get(&self, k: usize) -> Option<&'a [T; 8]> {
        if k < self.whole.len() {
            self.whole.get(k)
        } else {
            self.last
        }
    }
}

/// Block `k` of `s` for writing, as [`Blocks::get`] picks it.
fn block_of_mut<T>(s: &mut [T], k: usize) -> Option<&mut [T; 8]> {
    if k < s.len() / 8 {
        s.as_chunks_mut::<8>().0.get_mut(k)
    } else {
        s.last_chunk_mut::<8>()
    }
}

/// [`dqs_palette`] from prepared inverse binds: `binds` as
/// [`prepare_dqs_binds`](super::prepare_dqs_binds) lays them out (block
/// `k` of `n / 8` is joints `8 k .. 8 k + 8`, and a last one, if `n` is
/// not a multiple of 8, the last 8 joints; `binds.len() ==
/// models.len().div_ceil(8)`, checked by the caller), so only the model
/// matrices are transposed, and the blocks are the plain palette's.
pub(crate) fn dqs_prepared(models: &[Mat4], binds: &[DqsBinds], out: &mut [DualQuat]) -> usize {
    if !available() {
        return 0;
    }
    // SAFETY: the CPU has AVX2 and FMA.
    unsafe { dqs_prepared_avx2(models, binds, out) }
}

#[target_feature(enable = "avx2,fma")]
fn dqs_prepared_avx2(models: &[Mat4], binds: &[DqsBinds], out: &mut [DualQuat]) -> usize {
    let n = out.len();
    if n < 8 {
        if let Some(b) = binds.first() {
            dqs_padded::<false>(models, &b.lanes, out, None);
        }
        return n;
    }
    let models = Blocks::of(models);
    let first = |k: usize, h: &mut Half| {
        if let (Some(m), Some(b)) = (models.get(k), binds.get(k)) {
            dqs_first::<false>(m, &b.lanes, h);
        }
    };
    let second = |k: usize, h: &Half| {
        if let Some(o) = block_of_mut(out, k) {
            dqs_second(h, o);
        }
    };
    chunked(n.div_ceil(8), first, second);
    n
}
