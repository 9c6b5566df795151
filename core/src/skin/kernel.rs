//! The SIMD vertex kernels: four vertices per block.

use wide::f32x4;

use super::blocks::{VertexBlock, REUSE, SHARED, UNIT};
use super::layout::{load, Arrays, ArraysMut, Block3, Block4, Plan, Sink, Source};
use super::pairs::with_aligned;
use super::{DualQuat, Influences, Mat3x4, SkinMethod};
use crate::error::Error;
use crate::fp::Fp;
use crate::soa::check_len;

/// Four vertices' 3-vectors, one per lane.
#[derive(Clone, Copy)]
struct V3 {
    x: f32x4,
    y: f32x4,
    z: f32x4,
}

impl V3 {
    const ZERO: V3 = V3 {
        x: f32x4::ZERO,
        y: f32x4::ZERO,
        z: f32x4::ZERO,
    };

    /// De-interleaves four `xyz` vectors: three 4-float loads and seven
    /// shuffles (the generic version below compiles to twelve scalar loads
    /// and as many inserts on SSE2).
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    #[inline(always)]
    #[allow(unsafe_code)] // SSE intrinsics
    fn from_block3(b: &Block3) -> V3 {
        use core::arch::x86_64::{__m128, _mm_shuffle_ps};
        let f: &[[f32; 4]; 3] = bytemuck::cast_ref(b);
        // a = x0 y0 z0 x1, b = y1 z1 x2 y2, c = z2 x3 y3 z3.
        let [a, b, c]: [__m128; 3] = f.map(bytemuck::cast);
        // SAFETY: SSE is enabled for the whole build (the `cfg` above), so
        // the intrinsics' only requirement, the CPU feature, holds.
        let (x, y, z) = unsafe {
            (
                _mm_shuffle_ps::<0x8C>(a, _mm_shuffle_ps::<0x12>(b, c)),
                _mm_shuffle_ps::<0x88>(_mm_shuffle_ps::<0x01>(a, b), _mm_shuffle_ps::<0x23>(b, c)),
                _mm_shuffle_ps::<0xC8>(_mm_shuffle_ps::<0x12>(a, b), c),
            )
        };
        V3 {
            x: bytemuck::cast(x),
            y: bytemuck::cast(y),
            z: bytemuck::cast(z),
        }
    }

    /// De-interleaves four `xyz` vectors.
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    #[inline(always)]
    fn from_block3(b: &Block3) -> V3 {
        let f: &[f32; 12] = bytemuck::cast_ref(b);
        V3 {
            x: f32x4::new([f[0], f[3], f[6], f[9]]),
            y: f32x4::new([f[1], f[4], f[7], f[10]]),
            z: f32x4::new([f[2], f[5], f[8], f[11]]),
        }
    }

    #[inline(always)]
    fn from_block4(b: &Block4) -> (V3, f32x4) {
        (
            V3 {
                x: f32x4::new([b[0][0], b[1][0], b[2][0], b[3][0]]),
                y: f32x4::new([b[0][1], b[1][1], b[2][1], b[3][1]]),
                z: f32x4::new([b[0][2], b[1][2], b[2][2], b[3][2]]),
            },
            f32x4::new([b[0][3], b[1][3], b[2][3], b[3][3]]),
        )
    }

    /// Interleaves the lanes into four `xyz` vectors: two unpacks and six
    /// shuffles into three 4-float stores (the generic version below
    /// compiles to five stores, two of them single floats, on SSE2).
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    #[inline(always)]
    #[allow(unsafe_code)] // SSE intrinsics
    fn to_block3(self) -> Block3 {
        use core::arch::x86_64::{__m128, _mm_shuffle_ps, _mm_unpackhi_ps, _mm_unpacklo_ps};
        let [x, y, z]: [__m128; 3] = [self.x, self.y, self.z].map(bytemuck::cast);
        // SAFETY: SSE is enabled for the whole build (the `cfg` above), so
        // the intrinsics' only requirement, the CPU feature, holds.
        let out: [__m128; 3] = unsafe {
            let lo = _mm_unpacklo_ps(x, y); // x0 y0 x1 y1
            let hi = _mm_unpackhi_ps(x, y); // x2 y2 x3 y3
            let z0x1 = _mm_shuffle_ps::<0xA0>(z, lo); // z0 z0 x1 x1
            let y1z1 = _mm_shuffle_ps::<0x5F>(lo, z); // y1 y1 z1 z1
            let x3z2 = _mm_shuffle_ps::<0xEE>(hi, z); // x3 y3 z2 z3
            [
                _mm_shuffle_ps::<0x84>(lo, z0x1),   // x0 y0 z0 x1
                _mm_shuffle_ps::<0x48>(y1z1, hi),   // y1 z1 x2 y2
                _mm_shuffle_ps::<0xD2>(x3z2, x3z2), // z2 x3 y3 z3
            ]
        };
        bytemuck::cast(out)
    }

    /// Interleaves the lanes into four `xyz` vectors (three 4-float stores).
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    #[inline(always)]
    fn to_block3(self) -> Block3 {
        let (x, y, z) = (self.x.to_array(), self.y.to_array(), self.z.to_array());
        let a = f32x4::new([x[0], y[0], z[0], x[1]]).to_array();
        let c = f32x4::new([y[1], z[1], x[2], y[2]]).to_array();
        let d = f32x4::new([z[2], x[3], y[3], z[3]]).to_array();
        bytemuck::cast([
            a[0], a[1], a[2], a[3], c[0], c[1], c[2], c[3], d[0], d[1], d[2], d[3],
        ])
    }

    #[inline(always)]
    fn to_block4(self, w: f32x4) -> Block4 {
        let (x, y, z, w) = (
            self.x.to_array(),
            self.y.to_array(),
            self.z.to_array(),
            w.to_array(),
        );
        [
            [x[0], y[0], z[0], w[0]],
            [x[1], y[1], z[1], w[1]],
            [x[2], y[2], z[2], w[2]],
            [x[3], y[3], z[3], w[3]],
        ]
    }

    #[inline(always)]
    fn cross(self, o: V3) -> V3 {
        V3 {
            x: self.y * o.z - self.z * o.y,
            y: self.z * o.x - self.x * o.z,
            z: self.x * o.y - self.y * o.x,
        }
    }

    #[inline(always)]
    fn lerp(self, o: V3, t: f32x4) -> V3 {
        V3 {
            x: (o.x - self.x).madd(t, self.x),
            y: (o.y - self.y).madd(t, self.y),
            z: (o.z - self.z).madd(t, self.z),
        }
    }
}

/// One block's inputs, in lanes.
#[derive(Clone, Copy)]
struct Verts {
    p: V3,
    n: V3,
    t: V3,
}

/// A blended LBS matrix per lane: `m[r][c]`.
#[derive(Clone, Copy)]
struct LaneMat([[f32x4; 4]; 3]);

impl LaneMat {
    #[inline(always)]
    fn point(&self, p: V3) -> V3 {
        let r = |m: &[f32x4; 4]| m[0].madd(p.x, m[1].madd(p.y, m[2].madd(p.z, m[3])));
        V3 {
            x: r(&self.0[0]),
            y: r(&self.0[1]),
            z: r(&self.0[2]),
        }
    }

    #[inline(always)]
    fn vector(&self, v: V3) -> V3 {
        let r = |m: &[f32x4; 4]| m[0].madd(v.x, m[1].madd(v.y, m[2] * v.z));
        V3 {
            x: r(&self.0[0]),
            y: r(&self.0[1]),
            z: r(&self.0[2]),
        }
    }
}

const ZERO_MAT: Mat3x4 = Mat3x4 {
    rows: [[0.0; 4]; 3],
};
const ZERO_DQ: DualQuat = DualQuat {
    real: [0.0; 4],
    dual: [0.0; 4],
};

/// Palette entry `j` (validated in range; the fallback is never taken but
/// keeps the lookup panic-free).
#[inline(always)]
fn entry<'a, T>(palette: &'a [T], j: u16, zero: &'a T) -> &'a T {
    palette.get(usize::from(j)).unwrap_or(zero)
}

/// The LBS palette entries of joints `j` (lookups of slots a block does
/// not use are dead code and vanish).
#[inline(always)]
fn lbs_entries<'a>(palette: &'a [Mat3x4], j: &[u16; 4]) -> [&'a Mat3x4; 4] {
    [
        entry(palette, j[0], &ZERO_MAT),
        entry(palette, j[1], &ZERO_MAT),
        entry(palette, j[2], &ZERO_MAT),
        entry(palette, j[3], &ZERO_MAT),
    ]
}

/// One vertex's blended rows `Σ w_k m_k.rows` over the first `K`
/// influence slots (the others have weight 0 in the whole block), with
/// the vertex's weights `w` broadcast.
#[inline(always)]
fn blend_rows<const K: usize>(m: [&Mat3x4; 4], w: [f32; 4]) -> [f32x4; 3] {
    let w = [
        f32x4::splat(w[0]),
        f32x4::splat(w[1]),
        f32x4::splat(w[2]),
        f32x4::splat(w[3]),
    ];
    let row = |r: usize| {
        let x = |k: usize| f32x4::new(m[k].rows[r]);
        blend::<K>([x(0), x(1), x(2), x(3)], w)
    };
    [row(0), row(1), row(2)]
}

/// Four vertices' blended rows ([`blend_rows`]) transposed into lanes.
#[inline(always)]
fn transpose_rows(b: [[f32x4; 3]; 4]) -> LaneMat {
    let [b0, b1, b2, b3] = b;
    LaneMat([
        f32x4::transpose([b0[0], b1[0], b2[0], b3[0]]),
        f32x4::transpose([b0[1], b1[1], b2[1], b3[1]]),
        f32x4::transpose([b0[2], b1[2], b2[2], b3[2]]),
    ])
}

/// Palette entries broadcast into lanes, `e[slot][row][col]`.
type Broadcast = [[[f32x4; 4]; 3]; 4];

/// Broadcasts the entries of slots `0..K` into `e` (the other slots keep
/// what they hold; the blend of `K` slots does not read them).
#[inline(always)]
fn broadcast<const K: usize>(e: &mut Broadcast, m: [&Mat3x4; 4]) {
    for (e, m) in e.iter_mut().zip(m).take(K) {
        for (er, mr) in e.iter_mut().zip(&m.rows) {
            *er = splat_row(mr);
        }
    }
}

/// Each float of `row` broadcast into a vector of its own. On SSE2 the
/// integer shuffle (`pshufd`) writes a register other than its input, so
/// a row costs one load and four shuffles, where splatting its floats one
/// by one costs four loads and four shuffles. (The float shuffle, whose
/// output overwrites its input, would need a copy per lane instead.)
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(always)]
#[allow(unsafe_code)] // SSE intrinsics
fn splat_row(row: &[f32; 4]) -> [f32x4; 4] {
    use core::arch::x86_64::{__m128i, _mm_shuffle_epi32};
    let v: __m128i = bytemuck::cast(*row);
    // SAFETY: SSE2 is enabled for the whole build (the `cfg` above), so the
    // intrinsics' only requirement, the CPU feature, holds.
    let s = unsafe {
        [
            _mm_shuffle_epi32::<0x00>(v),
            _mm_shuffle_epi32::<0x55>(v),
            _mm_shuffle_epi32::<0xAA>(v),
            _mm_shuffle_epi32::<0xFF>(v),
        ]
    };
    s.map(bytemuck::cast)
}

/// Each float of `row` broadcast into a vector of its own (on NEON, a
/// load-and-replicate each).
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
#[inline(always)]
fn splat_row(row: &[f32; 4]) -> [f32x4; 4] {
    row.map(f32x4::splat)
}

/// Broadcast entries blended in lanes by the four vertices' weights of
/// each slot, `w[slot]` (which needs neither a blend per vertex nor a
/// transpose).
#[inline(always)]
fn blend_broadcast<const K: usize>(e: &Broadcast, w: [f32x4; 4]) -> LaneMat {
    let lane = |r: usize, c: usize| blend::<K>([e[0][r][c], e[1][r][c], e[2][r][c], e[3][r][c]], w);
    let row = |r: usize| [lane(r, 0), lane(r, 1), lane(r, 2), lane(r, 3)];
    LaneMat([row(0), row(1), row(2)])
}

/// `Σ m_k w_k` over slots `0..K`, summed in the one order both LBS
/// block paths use, so that a block gets the same bits either way.
#[inline(always)]
fn blend<const K: usize>(m: [f32x4; 4], w: [f32x4; 4]) -> f32x4 {
    match K {
        1 => m[0] * w[0],
        2 => m[0].madd(w[0], m[1] * w[1]),
        3 => m[0].madd(w[0], m[1] * w[1]) + m[2] * w[2],
        _ => m[0].madd(w[0], m[1] * w[1]) + m[2].madd(w[2], m[3] * w[3]),
    }
}

/// Whether the four vertices of a block name the same joints in slots
/// `0..K`: a mesh sorted by [`super::influence_order`] is mostly made of
/// such blocks.
#[inline(always)]
fn same_joints<const K: usize>(joints: &[[u16; 4]; 4]) -> bool {
    // Slot `s` in bits `16s..16s + 16` on every target (one 8-byte load
    // on little-endian ones).
    let mask = u64::MAX >> (64 - 16 * K);
    let key = |j: &[u16; 4]| {
        let j = j.map(u64::from);
        (j[0] | j[1] << 16 | j[2] << 32 | j[3] << 48) & mask
    };
    let first = key(&joints[0]);
    ((key(&joints[1]) ^ first) | (key(&joints[2]) ^ first) | (key(&joints[3]) ^ first)) == 0
}

/// [`lbs_matrix`] of a block whose vertices share their joints
/// ([`same_joints`]): each lane entry is the joints' entries broadcast and
/// blended by the four vertices' weights, in lanes, which needs neither a
/// blend per vertex nor a transpose. One-influence blocks whose weights are
/// all 1 take the entries as they are (a product by 1 is exact).
#[inline(always)]
fn lbs_matrix_shared<const K: usize>(
    palette: &[Mat3x4],
    joints: &[u16; 4],
    weights: &[[f32; 4]; 4],
) -> LaneMat {
    let mut e = [[[f32x4::ZERO; 4]; 3]; 4];
    broadcast::<K>(&mut e, lbs_entries(palette, joints));
    let w = f32x4::transpose(weights.map(f32x4::new));
    if K == 1 && w[0].simd_eq(f32x4::ONE).all() {
        return LaneMat(e[0]);
    }
    blend_broadcast::<K>(&e, w)
}

/// Slots 4-7 of a block's four vertices (eight influences per vertex).
type Second<'a> = Option<(&'a [[u16; 4]; 4], &'a [[f32; 4]; 4])>;

/// Blends each vertex's palette rows (weights broadcast) over slots
/// `0..K` and, with eight influences, the used slots of the second set,
/// and transposes the four blended matrices into lanes.
#[inline(always)]
fn lbs_matrix<const K: usize>(
    palette: &[Mat3x4],
    joints: &[[u16; 4]; 4],
    weights: &[[f32; 4]; 4],
    second: Second<'_>,
) -> LaneMat {
    if second.is_none() && same_joints::<K>(joints) {
        return lbs_matrix_shared::<K>(palette, &joints[0], weights);
    }
    let rows = |v: usize| blend_rows::<K>(lbs_entries(palette, &joints[v]), weights[v]);
    let mut b = [rows(0), rows(1), rows(2), rows(3)];
    if let Some((j1, w1)) = second {
        for s in 0..slots_used(w1) as usize {
            for (rows, (j, w)) in b.iter_mut().zip(j1.iter().zip(w1)) {
                let m = entry(palette, j[s], &ZERO_MAT);
                let ws = f32x4::splat(w[s]);
                for (row, e) in rows.iter_mut().zip(&m.rows) {
                    *row = f32x4::new(*e).madd(ws, *row);
                }
            }
        }
    }
    transpose_rows(b)
}

/// How many leading influence slots a block uses (1-4): slots past the last
/// one with a non-zero weight in any of the four vertices are skipped (they
/// would add `0 · entry`). Meshes list their influences by decreasing
/// weight, so blocks of 1- and 2-influence vertices are common.
#[inline(always)]
fn slots_used(weights: &[[f32; 4]; 4]) -> u32 {
    let any = f32x4::new(weights[0])
        | f32x4::new(weights[1])
        | f32x4::new(weights[2])
        | f32x4::new(weights[3]);
    let mask = any.simd_ne(f32x4::ZERO).to_bitmask();
    32 - (mask & 0xF).leading_zeros()
}

/// Palette entry `j` of a prepared block, unchecked.
///
/// # Safety
/// `j < palette.len()`: [`SkinBlocks::new`](super::SkinBlocks::new) took the
/// joints from influences checked against the handle's joint count, the
/// handle keeps the blocks borrowed (unchanged), and
/// [`SkinBlocks::lbs`](super::SkinBlocks::lbs) checks that the palette has
/// that many entries.
#[inline(always)]
#[allow(unsafe_code)]
unsafe fn block_entry(palette: &[Mat3x4], j: u16) -> &Mat3x4 {
    debug_assert!(usize::from(j) < palette.len());
    // SAFETY: the caller's contract (above).
    unsafe { palette.get_unchecked(usize::from(j)) }
}

/// The lanes' blended matrix of one prepared block that uses `K` slots:
/// [`lbs_matrix`] of the block's vertices, with the block's kind and the
/// weights' lanes read from the block instead of found per frame. `cache`
/// holds the entries of the last shared block's joints, which the blocks
/// after it that name the same ones ([`REUSE`]) use as they are.
///
/// # Safety
/// The joints of `b` are below `palette.len()` (see [`block_entry`]).
#[inline(always)]
#[allow(unsafe_code)]
unsafe fn block_matrix<const K: usize>(
    palette: &[Mat3x4],
    b: &VertexBlock,
    cache: &mut Broadcast,
) -> LaneMat {
    // SAFETY (every `block_entry` below): the joints are those of `b`,
    // below `palette.len()` by the caller's contract.
    let entries = |j: &[u16; 4]| j.map(|j| unsafe { block_entry(palette, j) });
    if b.kind & SHARED == 0 {
        let mut rows = [[f32x4::ZERO; 3]; 4];
        for (v, rows) in rows.iter_mut().enumerate() {
            *rows = blend_rows::<K>(entries(&b.joints[v]), [0, 1, 2, 3].map(|s| b.weights[s][v]));
        }
        return transpose_rows(rows);
    }
    if b.kind & REUSE == 0 {
        broadcast::<K>(cache, entries(&b.joints[0]));
    }
    if b.kind & UNIT != 0 {
        return LaneMat(cache[0]);
    }
    blend_broadcast::<K>(cache, b.weights.map(f32x4::new))
}

/// Skins one prepared block: positions, and normals when `N`.
///
/// # Safety
/// The joints of `b` are below `palette.len()` (see [`block_entry`]).
#[inline(always)]
#[allow(unsafe_code)]
unsafe fn lbs_block<const N: bool>(
    palette: &[Mat3x4],
    b: &VertexBlock,
    cache: &mut Broadcast,
) -> (V3, V3) {
    // SAFETY: the caller's contract, passed on.
    let m = unsafe {
        match b.kind & 7 {
            0 | 1 => block_matrix::<1>(palette, b, cache),
            2 => block_matrix::<2>(palette, b, cache),
            3 => block_matrix::<3>(palette, b, cache),
            _ => block_matrix::<4>(palette, b, cache),
        }
    };
    let v3 = |a: &[[f32; 4]; 3]| V3 {
        x: f32x4::new(a[0]),
        y: f32x4::new(a[1]),
        z: f32x4::new(a[2]),
    };
    let p = m.point(v3(&b.positions));
    let n = if N {
        m.vector(v3(&b.normals))
    } else {
        V3::ZERO
    };
    (p, n)
}

/// Skins prepared blocks into `positions` and, when `N`, `normals` (one
/// entry per vertex of the blocks, checked by the caller; a shorter array
/// leaves the vertices past it unwritten).
///
/// # Safety
/// Every joint of `blocks` is below `palette.len()` (see [`block_entry`]).
#[allow(unsafe_code)]
pub(super) unsafe fn lbs_blocks<const N: bool>(
    palette: &[Mat3x4],
    blocks: &[VertexBlock],
    positions: &mut [[f32; 3]],
    normals: &mut [[f32; 3]],
) {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    if super::avx2::available() {
        // SAFETY: the CPU has AVX2 and FMA (just asked); the joints'
        // contract is the caller's.
        unsafe { super::avx2::lbs_blocks::<N>(palette, blocks, positions, normals) };
        return;
    }
    // SAFETY: the caller's contract, passed on.
    unsafe { lbs_blocks_lanes::<N>(palette, blocks, positions, normals) }
}

/// [`lbs_blocks`]' body, inlined into each instruction set's copy.
///
/// # Safety
/// As [`lbs_blocks`].
#[inline(always)]
#[allow(unsafe_code)]
pub(super) unsafe fn lbs_blocks_lanes<const N: bool>(
    palette: &[Mat3x4],
    blocks: &[VertexBlock],
    positions: &mut [[f32; 3]],
    normals: &mut [[f32; 3]],
) {
    let mut cache = [[[f32x4::ZERO; 4]; 3]; 4];
    let (pb, _) = positions.as_chunks_mut::<4>();
    let full = pb.len();
    // SAFETY (each `lbs_block`): the blocks' joints are below
    // `palette.len()` by the caller's contract.
    if N {
        let (nb, _) = normals.as_chunks_mut::<4>();
        for (b, (op, on)) in blocks.iter().zip(pb.iter_mut().zip(nb)) {
            let (p, n) = unsafe { lbs_block::<true>(palette, b, &mut cache) };
            (*op, *on) = (p.to_block3(), n.to_block3());
        }
    } else {
        for (b, op) in blocks.iter().zip(pb.iter_mut()) {
            *op = unsafe { lbs_block::<false>(palette, b, &mut cache) }
                .0
                .to_block3();
        }
    }
    // The last block of a mesh whose vertex count is not a multiple of 4.
    if let Some(b) = blocks.get(full) {
        let (p, n) = unsafe { lbs_block::<N>(palette, b, &mut cache) };
        let first = 4 * full;
        let lanes = (b.lanes as usize).min(4);
        let store = |out: &mut [[f32; 3]], v: &Block3| {
            for (o, v) in out.iter_mut().skip(first).zip(&v[..lanes]) {
                *o = *v;
            }
        };
        store(positions, &p.to_block3());
        if N {
            store(normals, &n.to_block3());
        }
    }
}

/// A blended dual quaternion per lane: the real part `(u, w)`, not
/// normalised, `s = 2 / |(u, w)|²`, and the translation `t`.
#[derive(Clone, Copy)]
struct LaneDq {
    u: V3,
    w: f32x4,
    s: f32x4,
    t: V3,
}

impl LaneDq {
    /// `v + s u × (u × v + w v)`: rotation by the unit real part
    /// `(u, w) / |(u, w)|`.
    #[inline(always)]
    fn rotate(&self, v: V3) -> V3 {
        let a = self.u.cross(v);
        let a = V3 {
            x: self.w.madd(v.x, a.x),
            y: self.w.madd(v.y, a.y),
            z: self.w.madd(v.z, a.z),
        };
        let b = self.u.cross(a);
        V3 {
            x: b.x.madd(self.s, v.x),
            y: b.y.madd(self.s, v.y),
            z: b.z.madd(self.s, v.z),
        }
    }

    #[inline(always)]
    fn point(&self, p: V3) -> V3 {
        let r = self.rotate(p);
        V3 {
            x: r.x + self.t.x,
            y: r.y + self.t.y,
            z: r.z + self.t.z,
        }
    }
}

#[inline(always)]
fn gather_dq(palette: &[DualQuat], joints: &[[u16; 4]; 4], k: usize) -> ([f32x4; 4], [f32x4; 4]) {
    let d0 = entry(palette, joints[0][k], &ZERO_DQ);
    let d1 = entry(palette, joints[1][k], &ZERO_DQ);
    let d2 = entry(palette, joints[2][k], &ZERO_DQ);
    let d3 = entry(palette, joints[3][k], &ZERO_DQ);
    let real = f32x4::transpose([
        f32x4::new(d0.real),
        f32x4::new(d1.real),
        f32x4::new(d2.real),
        f32x4::new(d3.real),
    ]);
    let dual = f32x4::transpose([
        f32x4::new(d0.dual),
        f32x4::new(d1.dual),
        f32x4::new(d2.dual),
        f32x4::new(d3.dual),
    ]);
    (real, dual)
}

/// Sign-aligns each influence's dual quaternion with the first one, blends
/// (slots `0..K` and, with eight influences, the used slots of the second
/// set), and keeps the blend with `2 / |real|²`, from which rotation and
/// translation come out as if normalised (see below).
#[inline(always)]
fn dqs_transform<const K: usize>(
    palette: &[DualQuat],
    aligned: bool,
    joints: &[[u16; 4]; 4],
    weights: &[[f32; 4]; 4],
    second: Second<'_>,
) -> LaneDq {
    let w = f32x4::transpose(weights.map(f32x4::new));
    let (r0, d0) = gather_dq(palette, joints, 0);
    let mut br = r0.map(|c| c * w[0]);
    let mut bd = d0.map(|c| c * w[0]);
    // Adds slot `k` of `joints` with weights `wk`, sign-aligned with slot 0.
    // (A macro: as a function, the same code costs the portable kernel more
    // instructions, whichever way the blend is passed.)
    macro_rules! add_aligned {
        ($joints:expr, $k:expr, $wk:expr) => {
            let (r, d) = gather_dq(palette, $joints, $k);
            // An aligned palette (see `Dqs`) needs no test.
            let s = if aligned {
                $wk
            } else {
                let dot = r[0].madd(r0[0], r[1].madd(r0[1], r[2].madd(r0[2], r[3] * r0[3])));
                $wk.flip_signs(dot.simd_lt(f32x4::ZERO))
            };
            for i in 0..4 {
                br[i] = r[i].madd(s, br[i]);
                bd[i] = d[i].madd(s, bd[i]);
            }
        };
    }
    for (k, &wk) in w.iter().enumerate().take(K).skip(1) {
        add_aligned!(joints, k, wk);
    }
    if let Some((j1, w1)) = second {
        let wt = f32x4::transpose(w1.map(f32x4::new));
        for (k, &wk) in wt.iter().enumerate().take(slots_used(w1) as usize) {
            add_aligned!(j1, k, wk);
        }
    }
    // Not normalised: with `s = 2 / |r|²`, the rotation by the unit real
    // part is `v + s r × (r × v + r_w v)` and the translation is
    // `s (r_w d - d_w r + r × d)`: one division instead of a square root,
    // a division and eight products.
    let len2 = br[0].madd(br[0], br[1] * br[1]) + br[2].madd(br[2], br[3] * br[3]);
    let s = f32x4::splat(2.0) / len2;
    let u = V3 {
        x: br[0],
        y: br[1],
        z: br[2],
    };
    let du = V3 {
        x: bd[0],
        y: bd[1],
        z: bd[2],
    };
    let c = u.cross(du);
    let t = |a: f32x4, b: f32x4, c: f32x4| s * (br[3].madd(a, c) - bd[3] * b);
    LaneDq {
        u,
        w: br[3],
        s,
        t: V3 {
            x: t(du.x, u.x, c.x),
            y: t(du.y, u.y, c.y),
            z: t(du.z, u.z, c.z),
        },
    }
}

/// A skinning method: maps one block of vertices.
trait Method {
    fn block<const N: bool, const T: bool, const K: usize>(
        &self,
        first: usize,
        count: usize,
        joints: &[[u16; 4]; 4],
        weights: &[[f32; 4]; 4],
        second: Second<'_>,
        v: &Verts,
    ) -> Verts;
}

struct Lbs<'a>(&'a [Mat3x4]);
/// A DQS palette, and whether every pair of joints the influences blend
/// is in one hemisphere in it (`aligned`, a copy signed by the influences'
/// pair table: see [`super::pairs::with_aligned`]), so that the blend
/// needs no per-vertex sign test.
struct Dqs<'a> {
    palette: &'a [DualQuat],
    aligned: bool,
}
struct Mixed<'a> {
    lbs: &'a [Mat3x4],
    dqs: Dqs<'a>,
    mix: &'a [f32],
}

impl Method for Lbs<'_> {
    #[inline(always)]
    fn block<const N: bool, const T: bool, const K: usize>(
        &self,
        _first: usize,
        _count: usize,
        joints: &[[u16; 4]; 4],
        weights: &[[f32; 4]; 4],
        second: Second<'_>,
        v: &Verts,
    ) -> Verts {
        let m = lbs_matrix::<K>(self.0, joints, weights, second);
        Verts {
            p: m.point(v.p),
            n: if N { m.vector(v.n) } else { V3::ZERO },
            t: if T { m.vector(v.t) } else { V3::ZERO },
        }
    }
}

impl Method for Dqs<'_> {
    #[inline(always)]
    fn block<const N: bool, const T: bool, const K: usize>(
        &self,
        _first: usize,
        _count: usize,
        joints: &[[u16; 4]; 4],
        weights: &[[f32; 4]; 4],
        second: Second<'_>,
        v: &Verts,
    ) -> Verts {
        let q = dqs_transform::<K>(self.palette, self.aligned, joints, weights, second);
        Verts {
            p: q.point(v.p),
            n: if N { q.rotate(v.n) } else { V3::ZERO },
            t: if T { q.rotate(v.t) } else { V3::ZERO },
        }
    }
}

impl Method for Mixed<'_> {
    #[inline(always)]
    fn block<const N: bool, const T: bool, const K: usize>(
        &self,
        first: usize,
        count: usize,
        joints: &[[u16; 4]; 4],
        weights: &[[f32; 4]; 4],
        second: Second<'_>,
        v: &Verts,
    ) -> Verts {
        let a = Lbs(self.lbs).block::<N, T, K>(first, count, joints, weights, second, v);
        let b = self
            .dqs
            .block::<N, T, K>(first, count, joints, weights, second, v);
        let mix = load::<f32, 1>(bytemuck::cast_slice(self.mix), first, count);
        let s = f32x4::new(mix.map(|m| m[0]));
        Verts {
            p: a.p.lerp(b.p, s),
            n: if N { a.n.lerp(b.n, s) } else { V3::ZERO },
            t: if T { a.t.lerp(b.t, s) } else { V3::ZERO },
        }
    }
}

/// Skins one block: `joints`/`weights` and the attributes read are those
/// of vertices `first .. first + count` (zero-padded past `count`).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn compute<M: Method, const N: bool, const T: bool>(
    m: &M,
    first: usize,
    count: usize,
    joints: &[[u16; 4]; 4],
    weights: &[[f32; 4]; 4],
    second: Second<'_>,
    p: &Block3,
    n: &Block3,
    t: &Block4,
) -> (Block3, Block3, Block4) {
    let p = V3::from_block3(p);
    let n = if N { V3::from_block3(n) } else { V3::ZERO };
    let (t, tw) = if T {
        V3::from_block4(t)
    } else {
        (V3::ZERO, f32x4::ZERO)
    };
    let v = Verts { p, n, t };
    let out = match slots_used(weights) {
        0 | 1 => m.block::<N, T, 1>(first, count, joints, weights, second, &v),
        2 => m.block::<N, T, 2>(first, count, joints, weights, second, &v),
        3 => m.block::<N, T, 3>(first, count, joints, weights, second, &v),
        _ => m.block::<N, T, 4>(first, count, joints, weights, second, &v),
    };
    (
        out.p.to_block3(),
        if N { out.n.to_block3() } else { [[0.0; 3]; 4] },
        if T {
            out.t.to_block4(tw)
        } else {
            [[0.0; 4]; 4]
        },
    )
}

/// Which palettes a method reads (what the AVX2 kernels need of a [`Method`]).
#[cfg_attr(
    not(all(target_arch = "x86_64", target_feature = "sse2")),
    allow(dead_code)
)]
pub(crate) trait Palettes {
    /// Linear blend skinning, alone or as the mix's first operand.
    const LBS: bool;
    /// Dual quaternion skinning, alone or as the mix's second operand.
    const DQS: bool;
    fn lbs(&self) -> &[Mat3x4];
    fn dqs(&self) -> &[DualQuat];
    /// Whether the DQS palette is aligned (see [`Dqs`]).
    fn dqs_aligned(&self) -> bool;
    /// Per-vertex mix weights (used when both `LBS` and `DQS`).
    fn mix(&self) -> &[f32];
}

impl Palettes for Lbs<'_> {
    const LBS: bool = true;
    const DQS: bool = false;
    fn lbs(&self) -> &[Mat3x4] {
        self.0
    }
    fn dqs(&self) -> &[DualQuat] {
        &[]
    }
    fn dqs_aligned(&self) -> bool {
        false
    }
    fn mix(&self) -> &[f32] {
        &[]
    }
}

impl Palettes for Dqs<'_> {
    const LBS: bool = false;
    const DQS: bool = true;
    fn lbs(&self) -> &[Mat3x4] {
        &[]
    }
    fn dqs(&self) -> &[DualQuat] {
        self.palette
    }
    fn dqs_aligned(&self) -> bool {
        self.aligned
    }
    fn mix(&self) -> &[f32] {
        &[]
    }
}

impl Palettes for Mixed<'_> {
    const LBS: bool = true;
    const DQS: bool = true;
    fn lbs(&self) -> &[Mat3x4] {
        self.lbs
    }
    fn dqs(&self) -> &[DualQuat] {
        self.dqs.palette
    }
    fn dqs_aligned(&self) -> bool {
        self.dqs.aligned
    }
    fn mix(&self) -> &[f32] {
        self.mix
    }
}

/// Which kernels run: the portable 4-wide ones only, or the AVX2 + FMA
/// ones for whole blocks of eight first when the CPU has them (they check,
/// once per process, and skin nothing otherwise).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Path {
    // Only the tests pick it on x86-64 (the public kernels take the AVX2
    // path, which falls back to this one by itself).
    #[cfg_attr(
        all(all(target_arch = "x86_64", target_feature = "sse2"), not(test)),
        allow(dead_code)
    )]
    Portable,
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    Avx2,
}

/// The path the public kernels take.
const DEFAULT_PATH: Path = {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    let path = Path::Avx2;
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    let path = Path::Portable;
    path
};

/// Joints and weights of whole blocks of four vertices.
type BlockInfluences<'a> = (&'a [[[u16; 4]; 4]], &'a [[[f32; 4]; 4]]);

/// The full blocks from block `start` on, of attributes in separate arrays
/// (positions, normals when `N`), four influences per vertex and no
/// tangents: the common case, walked by zipped chunks so that no block
/// tests the arrays' options or bounds. Returns the block after the last
/// one skinned (`start` when `N` and either side lacks normals, which a
/// validated job does not).
fn array_blocks<M: Method, const N: bool>(
    m: &M,
    (jb, wb): BlockInfluences<'_>,
    (pos, nrm): Arrays<'_>,
    (out_pos, out_nrm): ArraysMut<'_>,
    start: usize,
) -> usize {
    let none = [[0.0; 4]; 4];
    let (pb, _) = pos.as_chunks::<4>();
    let (opb, _) = out_pos.as_chunks_mut::<4>();
    let influences = jb.iter().zip(wb).skip(start);
    let mut done = start;
    if N {
        let (Some(nrm), Some(out_nrm)) = (nrm, out_nrm) else {
            return start;
        };
        let (nb, _) = nrm.as_chunks::<4>();
        let (onb, _) = out_nrm.as_chunks_mut::<4>();
        let attrs = pb.iter().zip(nb).zip(opb.iter_mut().zip(onb.iter_mut()));
        for ((j, w), ((p, n), (op, on))) in influences.zip(attrs.skip(start)) {
            let (p, n, _) = compute::<M, true, false>(m, done * 4, 4, j, w, None, p, n, &none);
            (*op, *on) = (p, n);
            done += 1;
        }
    } else {
        let zero = [[0.0; 3]; 4];
        for ((j, w), (p, op)) in influences.zip(pb.iter().zip(opb.iter_mut()).skip(start)) {
            (*op, _, _) = compute::<M, false, false>(m, done * 4, 4, j, w, None, p, &zero, &none);
            done += 1;
        }
    }
    done
}

/// Skins every vertex: normals when `N`, tangents when `T`, eight
/// influences per vertex when `E` (a copy of its own, so that four
/// influences pay nothing for the second set).
#[allow(unsafe_code)] // the unchecked block accessors, within the loop bound
fn run_with<
    M: Method + Palettes,
    S: Source,
    D: Sink,
    const N: bool,
    const T: bool,
    const E: bool,
>(
    m: &M,
    infl: &Influences<'_>,
    src: &S,
    dst: &mut D,
    path: Path,
) {
    let done = match path {
        Path::Portable => 0,
        // Skins nothing on a CPU without AVX2 and FMA.
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        Path::Avx2 => super::avx2::run::<M, S, D, N, T, E>(m, infl, src, dst),
    };
    // Full blocks: influences by reference straight from the slices (no
    // copies, no padding path), attributes through the block accessors,
    // bounded by the attribute arrays too (validated to be as long as the
    // influences), which is the accessors' contract.
    let (jb, _) = infl.joints.as_chunks::<4>();
    let (wb, _) = infl.weights.as_chunks::<4>();
    let (jb1, _) = infl.joints1.as_chunks::<4>();
    let (wb1, _) = infl.weights1.as_chunks::<4>();
    let blocks = jb
        .len()
        .min(wb.len())
        .min(src.len_bound().min(dst.len_bound()) / 4);
    let mut start = done / 4;
    if !T && !E {
        if let (Some(input), Some(output)) = (src.arrays(), dst.arrays_mut()) {
            start = array_blocks::<M, N>(m, (jb, wb), input, output, start);
        }
    }
    for b in start..blocks {
        let (j, w) = (&jb[b], &wb[b]);
        let second = if E { jb1.get(b).zip(wb1.get(b)) } else { None };
        // The `block_*` accessors need `4b + 4 <= len_bound()`: `b <
        // blocks`, so `4b + 4 <= 4 blocks`, at most both length bounds.
        // SAFETY: `4b + 4 <= src.len_bound()` (above).
        let p = unsafe { src.block_positions(b) };
        let n = if N {
            // SAFETY: `4b + 4 <= src.len_bound()` (above).
            unsafe { src.block_normals(b) }
        } else {
            [[0.0; 3]; 4]
        };
        let t = if T {
            // SAFETY: `4b + 4 <= src.len_bound()` (above).
            unsafe { src.block_tangents(b) }
        } else {
            [[0.0; 4]; 4]
        };
        let (p, n, t) = compute::<M, N, T>(m, b * 4, 4, j, w, second, &p, &n, &t);
        // SAFETY: `4b + 4 <= dst.len_bound()` (above).
        unsafe { dst.set_block_positions(b, &p) };
        if N {
            // SAFETY: `4b + 4 <= dst.len_bound()` (above).
            unsafe { dst.set_block_normals(b, &n) };
        }
        if T {
            // SAFETY: `4b + 4 <= dst.len_bound()` (above).
            unsafe { dst.set_block_tangents(b, &t) };
        }
    }
    // The rest, up to 4 vertices at a time (after validation, a tail of
    // 1-3), zero-padded (joint 0 of an empty palette reads as a zero entry;
    // padding lanes are not stored).
    let mut first = blocks.max(start) * 4;
    while first < infl.len() {
        let count = (infl.len() - first).min(4);
        let j = load(infl.joints, first, count);
        let w = load(infl.weights, first, count);
        let (j1, w1) = (
            load(infl.joints1, first, count),
            load(infl.weights1, first, count),
        );
        let second = E.then_some((&j1, &w1));
        let p = src.positions(first, count);
        let n = src.normals(first, count);
        let t = src.tangents(first, count);
        let (p, n, t) = compute::<M, N, T>(m, first, count, &j, &w, second, &p, &n, &t);
        dst.set_positions(first, count, &p);
        if N {
            dst.set_normals(first, count, &n);
        }
        if T {
            dst.set_tangents(first, count, &t);
        }
        first += count;
    }
}

fn run<M: Method + Palettes, S: Source, D: Sink>(
    m: &M,
    infl: &Influences<'_>,
    src: &S,
    dst: &mut D,
    plan: Plan,
) {
    run_on(m, infl, src, dst, plan, DEFAULT_PATH);
}

/// [`run`] of DQS, reading the palette aligned by the influences' pair
/// table when it can be (see [`with_aligned`]).
fn run_dqs<S: Source, D: Sink>(
    palette: &[DualQuat],
    infl: &Influences<'_>,
    src: &S,
    dst: &mut D,
    plan: Plan,
) {
    with_aligned(palette, infl, |palette, aligned| {
        run(&Dqs { palette, aligned }, infl, src, dst, plan);
    });
}

/// [`run`] of the LBS/DQS mix, with the DQS palette as in [`run_dqs`].
fn run_mixed<S: Source, D: Sink>(
    lbs: &[Mat3x4],
    dqs: &[DualQuat],
    mix: &[f32],
    infl: &Influences<'_>,
    src: &S,
    dst: &mut D,
    plan: Plan,
) {
    with_aligned(dqs, infl, |palette, aligned| {
        let dqs = Dqs { palette, aligned };
        run(&Mixed { lbs, dqs, mix }, infl, src, dst, plan);
    });
}

fn run_on<M: Method + Palettes, S: Source, D: Sink>(
    m: &M,
    infl: &Influences<'_>,
    src: &S,
    dst: &mut D,
    plan: Plan,
    path: Path,
) {
    debug_assert_eq!(plan.vertices, infl.len());
    match (plan.normals, plan.tangents, infl.is_eight()) {
        (false, false, false) => run_with::<M, S, D, false, false, false>(m, infl, src, dst, path),
        (true, false, false) => run_with::<M, S, D, true, false, false>(m, infl, src, dst, path),
        (false, true, false) => run_with::<M, S, D, false, true, false>(m, infl, src, dst, path),
        (true, true, false) => run_with::<M, S, D, true, true, false>(m, infl, src, dst, path),
        (false, false, true) => run_with::<M, S, D, false, false, true>(m, infl, src, dst, path),
        (true, false, true) => run_with::<M, S, D, true, false, true>(m, infl, src, dst, path),
        (false, true, true) => run_with::<M, S, D, false, true, true>(m, infl, src, dst, path),
        (true, true, true) => run_with::<M, S, D, true, true, true>(m, infl, src, dst, path),
    }
}

/// Checks per-vertex mix weights: `n` of them, each in `0..=1`.
pub(crate) fn check_mix(n: usize, mix: &[f32]) -> Result<(), Error> {
    check_len("mix", n, mix.len())?;
    // Branch-free scan first; find the vertex only on failure.
    let bad = mix.iter().fold(false, |b, m| b | !(0.0..=1.0).contains(m));
    if bad {
        if let Some(vertex) = mix.iter().position(|m| !(0.0..=1.0).contains(m)) {
            return Err(Error::InvalidMixWeight { vertex });
        }
    }
    Ok(())
}

/// Skins every vertex of a validated job by `method` (the dispatch of
/// [`super::SkinJob::run`]).
pub(crate) fn dispatch<S: Source, D: Sink>(
    method: &SkinMethod<'_>,
    infl: &Influences<'_>,
    src: &S,
    dst: &mut D,
    plan: Plan,
) {
    match *method {
        SkinMethod::Lbs { palette } => run(&Lbs(palette), infl, src, dst, plan),
        SkinMethod::Dqs { palette } => run_dqs(palette, infl, src, dst, plan),
        SkinMethod::Mixed { lbs, dqs, mix } => run_mixed(lbs, dqs, mix, infl, src, dst, plan),
    }
}

#[cfg(test)]
mod tests {
    //! The AVX2 + FMA kernels against the portable ones (the public kernels
    //! run only the faster of the two, so both are called here directly).
    extern crate alloc;

    use alloc::vec::Vec;

    use proptest::prelude::*;

    use super::*;
    use crate::math::{Mat4, Quat, Vec3};
    use crate::skin::{
        layout, DqsBinds, LbsBind, SkinOutput, SkinVertices, StridedVertices, StridedVerticesMut,
    };

    /// SplitMix64 uniforms in `[-1, 1)`.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> f32 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        }
        fn index(&mut self, n: usize) -> u16 {
            ((self.next() + 1.0) * 0.5 * n as f32).min(n as f32 - 1.0) as u16
        }
    }

    struct Mesh {
        pos: Vec<[f32; 3]>,
        nrm: Vec<[f32; 3]>,
        tan: Vec<[f32; 4]>,
        joints: Vec<[u16; 4]>,
        weights: Vec<[f32; 4]>,
        /// Slots 4-7 (empty with four influences).
        joints1: Vec<[u16; 4]>,
        weights1: Vec<[f32; 4]>,
        mix: Vec<f32>,
        lbs: Vec<Mat3x4>,
        dqs: Vec<DualQuat>,
        /// A DQS pair table and its forest edge count (empty: none).
        pairs: Vec<[u16; 2]>,
        tree: usize,
    }

    /// A random mesh with four influences per vertex, or eight (`eight`).
    fn mesh(seed: u64, vertices: usize, palette: usize, eight: bool) -> Mesh {
        let mut r = Rng(seed);
        let v3 = |r: &mut Rng| [r.next() * 2.0, r.next() * 2.0, r.next() * 2.0];
        let pos = (0..vertices).map(|_| v3(&mut r)).collect();
        let nrm = (0..vertices).map(|_| v3(&mut r)).collect();
        let tan = (0..vertices)
            .map(|_| [r.next(), r.next(), r.next(), r.next().signum()])
            .collect();
        let (mut joints, mut weights) = (Vec::new(), Vec::new());
        let (mut joints1, mut weights1) = (Vec::new(), Vec::new());
        let slots = if eight { 8 } else { 4 };
        for _ in 0..vertices {
            // 1-4 (or 1-8) influences, the rest weight 0 (slot skipping is
            // exercised).
            let used = 1 + r.index(slots) as usize;
            let mut w = [0.0f32; 8];
            for x in w.iter_mut().take(used) {
                *x = r.next() + 1.0 + 1e-3;
            }
            let s: f32 = w.iter().sum();
            let w = w.map(|x| x / s);
            let j = [0; 8].map(|_| r.index(palette));
            joints.push([j[0], j[1], j[2], j[3]]);
            weights.push([w[0], w[1], w[2], w[3]]);
            if eight {
                joints1.push([j[4], j[5], j[6], j[7]]);
                weights1.push([w[4], w[5], w[6], w[7]]);
            }
        }
        let mix = (0..vertices).map(|_| (r.next() + 1.0) * 0.5).collect();
        let mut lbs = Vec::new();
        let mut dqs = Vec::new();
        for _ in 0..palette {
            let q = Quat::new(r.next(), r.next(), r.next(), r.next() + 0.01).normalize();
            let t = v3(&mut r);
            let t = Vec3::new(t[0], t[1], t[2]);
            let s = Vec3::new(r.next() + 1.5, r.next() + 1.5, r.next() + 1.5);
            lbs.push(Mat3x4::from_mat4(&Mat4::from_trs(t, q, s)));
            dqs.push(DualQuat::from_rotation_translation(q, t));
        }
        Mesh {
            pos,
            nrm,
            tan,
            joints,
            weights,
            joints1,
            weights1,
            mix,
            lbs,
            dqs,
            pairs: Vec::new(),
            tree: 0,
        }
    }

    impl Mesh {
        fn influences(&self) -> Influences<'_> {
            let mut infl = self.checked();
            infl.pairs = &self.pairs;
            infl.tree = self.tree;
            infl
        }

        /// Builds the mesh's DQS pair table.
        fn with_pairs(mut self) -> Mesh {
            let infl = self.checked();
            let mut buf = alloc::vec![[0u16; 2]; infl.dqs_pair_bound()];
            let (count, tree) = {
                let t = infl.with_dqs_pairs(&mut buf).unwrap();
                (t.pairs.len(), t.tree)
            };
            buf.truncate(count);
            self.pairs = buf;
            self.tree = tree;
            self
        }

        fn checked(&self) -> Influences<'_> {
            let n = self.lbs.len();
            if self.joints1.is_empty() {
                Influences::new(&self.joints, &self.weights, n).unwrap()
            } else {
                Influences::new8(
                    &self.joints,
                    &self.weights,
                    &self.joints1,
                    &self.weights1,
                    n,
                )
                .unwrap()
            }
        }
    }

    /// The AVX2 path when this CPU runs it, else the portable one.
    fn best_path() -> Path {
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        if super::super::avx2::available() {
            return Path::Avx2;
        }
        Path::Portable
    }

    /// Runs method 0 (LBS), 1 (DQS) or 2 (mixed) of the mesh's palettes.
    fn run_method<S: Source, D: Sink>(
        m: &Mesh,
        method: u8,
        src: &S,
        dst: &mut D,
        plan: Plan,
        path: Path,
    ) {
        let infl = m.influences();
        let (lbs, dqs, mix) = (&m.lbs[..], &m.dqs[..], &m.mix[..]);
        match method {
            0 => run_on(&Lbs(lbs), &infl, src, dst, plan, path),
            1 => with_aligned(dqs, &infl, |palette, aligned| {
                run_on(&Dqs { palette, aligned }, &infl, src, dst, plan, path);
            }),
            _ => with_aligned(dqs, &infl, |palette, aligned| {
                let dqs = Dqs { palette, aligned };
                run_on(&Mixed { lbs, dqs, mix }, &infl, src, dst, plan, path);
            }),
        }
    }

    type Out = (Vec<[f32; 3]>, Vec<[f32; 3]>, Vec<[f32; 4]>);

    /// Skins `m` with method 0-2 on `path`, or with the scalar reference
    /// (`None`).
    fn skin_on(m: &Mesh, method: u8, path: Option<Path>, normals: bool, tangents: bool) -> Out {
        let n = m.pos.len();
        let src = SkinVertices {
            positions: &m.pos,
            normals: Some(&m.nrm),
            tangents: Some(&m.tan),
        };
        let (mut p, mut nn, mut t) = (
            alloc::vec![[9.0; 3]; n],
            alloc::vec![[9.0; 3]; n],
            alloc::vec![[9.0; 4]; n],
        );
        let mut out = SkinOutput {
            positions: &mut p,
            normals: normals.then_some(&mut nn[..]),
            tangents: tangents.then_some(&mut t[..]),
        };
        let plan = layout::check_arrays(n, &src, &out).unwrap();
        let Some(path) = path else {
            use super::super::reference as r;
            let infl = m.influences();
            match method {
                0 => r::skin_lbs_checked(&m.lbs, &infl, &src, &mut out),
                1 => r::skin_dqs_checked(&m.dqs, &infl, &src, &mut out),
                _ => r::skin_mixed_checked(&m.lbs, &m.dqs, &m.mix, &infl, &src, &mut out),
            }
            .unwrap();
            return (p, nn, t);
        };
        run_method(m, method, &src, &mut out, plan, path);
        (p, nn, t)
    }

    fn skin(m: &Mesh, method: u8, path: Path, normals: bool, tangents: bool) -> Out {
        skin_on(m, method, Some(path), normals, tangents)
    }

    /// As [`skin`] over one interleaved buffer per side: stride 11, the
    /// normal at 0, a filler float, the tangent at 4, the position at 8 (so
    /// the last vertex's position ends the buffer); the output's other
    /// floats start at 7 and must stay 7.
    fn skin_strided(m: &Mesh, method: u8, path: Path, normals: bool, tangents: bool) -> Vec<f32> {
        const STRIDE: usize = 11;
        let n = m.pos.len();
        let mut data = alloc::vec![-5.0f32; n * STRIDE];
        for v in 0..n {
            let d = &mut data[v * STRIDE..][..STRIDE];
            d[0..3].copy_from_slice(&m.nrm[v]);
            d[4..8].copy_from_slice(&m.tan[v]);
            d[8..11].copy_from_slice(&m.pos[v]);
        }
        let src = StridedVertices {
            data: &data,
            stride: STRIDE,
            position: 8,
            normal: Some(0),
            tangent: Some(4),
        };
        let mut out = alloc::vec![7.0f32; n * STRIDE];
        let mut dst = StridedVerticesMut {
            data: &mut out,
            stride: STRIDE,
            position: 8,
            normal: normals.then_some(0),
            tangent: tangents.then_some(4),
        };
        let plan = layout::check_strided(n, &src, &dst).unwrap();
        run_method(m, method, &src, &mut dst, plan, path);
        out
    }

    fn close<const W: usize>(a: &[[f32; W]], b: &[[f32; W]]) -> Result<(), TestCaseError> {
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            for c in 0..W {
                let tol = 1e-5 * (1.0 + x[c].abs());
                prop_assert!(
                    (x[c] - y[c]).abs() <= tol,
                    "vertex {i}[{c}]: {x:?} vs {y:?}"
                );
            }
        }
        Ok(())
    }

    /// The x86-64 LBS kernels read the palette from a copy with one entry
    /// per cache line when it has at most 256 entries and the mesh at least
    /// 8 vertices per entry (and then take the AVX-512 kernel where the CPU
    /// has it), and from the palette itself otherwise: each way agrees with
    /// the portable kernel, for every method, with and without normals and
    /// tangents, four and eight influences, over arrays and interleaved
    /// buffers.
    #[test]
    fn palette_copies_to_cache_lines_agree() -> Result<(), TestCaseError> {
        // (vertices, palette entries): copied; too few vertices; too many
        // entries.
        for (case, (vertices, palette)) in
            [(413, 40), (70, 40), (2061, 257)].into_iter().enumerate()
        {
            for eight in [false, true] {
                let m = mesh(case as u64 + 11, vertices, palette, eight);
                for method in 0..3 {
                    for (normals, tangents) in [(true, false), (false, false), (true, true)] {
                        let a = skin(&m, method, Path::Portable, normals, tangents);
                        let b = skin(&m, method, best_path(), normals, tangents);
                        close(&a.0, &b.0)?;
                        close(&a.1, &b.1)?;
                        close(&a.2, &b.2)?;
                        // Interleaved: the same numbers, the filler float
                        // (7) and attributes not asked for left alone.
                        let sb = skin_strided(&m, method, best_path(), normals, tangents);
                        let pick = |at: usize| -> Vec<[f32; 3]> {
                            sb.chunks(11)
                                .map(|v| [v[at], v[at + 1], v[at + 2]])
                                .collect()
                        };
                        close(&pick(8), &a.0)?;
                        if normals {
                            close(&pick(0), &a.1)?;
                        }
                        for v in sb.chunks(11) {
                            prop_assert_eq!(v[3], 7.0);
                            if !normals {
                                prop_assert_eq!(&v[0..3], &[7.0; 3][..]);
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }

    proptest! {
        #[test]
        fn avx2_matches_portable(
            seed in any::<u64>(),
            vertices in 0usize..70,
            palette in 1usize..40,
            method in 0u8..3,
            normals in any::<bool>(),
            tangents in any::<bool>(),
            eight in any::<bool>(),
        ) {
            let best = best_path();
            if best == Path::Portable {
                return Ok(()); // nothing but the portable kernels here
            }
            let m = mesh(seed, vertices, palette, eight);
            let a = skin(&m, method, Path::Portable, normals, tangents);
            let b = skin(&m, method, best, normals, tangents);
            close(&a.0, &b.0)?;
            close(&a.1, &b.1)?;
            close(&a.2, &b.2)?;
            // Interleaved buffers: the same numbers, and the floats of
            // attributes not written are left alone.
            let sa = skin_strided(&m, method, Path::Portable, normals, tangents);
            let sb = skin_strided(&m, method, best, normals, tangents);
            let pick = |s: &[f32], at: usize| -> Vec<[f32; 3]> {
                s.chunks(11).map(|v| [v[at], v[at + 1], v[at + 2]]).collect()
            };
            close(&pick(&sb, 8), &b.0)?;
            close(&pick(&sa, 8), &a.0)?;
            if normals {
                close(&pick(&sb, 0), &b.1)?;
            }
            for v in sb.chunks(11) {
                prop_assert_eq!(v[3], 7.0);
                if !normals {
                    prop_assert_eq!(&v[0..3], &[7.0; 3][..]);
                }
                if !tangents {
                    prop_assert_eq!(&v[4..8], &[7.0; 4][..]);
                }
            }
        }

        /// A DQS pair table changes no number the kernels write (DQS and
        /// mixed, portable and AVX2, arrays and interleaved, four and
        /// eight influences),
        /// whether the palette's signs can be aligned (`spread` 0: every
        /// rotation within 20° of the identity, with random signs; the
        /// aligned kernel must then run) or not always (1: within 90°; 2:
        /// any rotation). Influences name nearby joints, as a real mesh's
        /// do (few distinct pairs); `==` takes -0 for 0.
        #[test]
        fn dqs_pair_tables_change_nothing(
            seed in any::<u64>(),
            vertices in 0usize..300,
            palette in 1usize..30,
            method in 1u8..3,
            normals in any::<bool>(),
            tangents in any::<bool>(),
            eight in any::<bool>(),
            spread in 0u8..3,
        ) {
            let mut m = mesh(seed, vertices, palette, eight);
            let mut r = Rng(seed ^ 0x5EED);
            let n = palette as u16;
            for v in 0..vertices {
                let base = r.index(palette);
                m.joints[v] = core::array::from_fn(|k| (base + k as u16) % n);
                if eight {
                    m.joints1[v] = core::array::from_fn(|k| (base + 4 + k as u16) % n);
                }
            }
            if spread < 2 {
                let max = if spread == 0 { 20.0f32 } else { 90.0 }.to_radians();
                for d in &mut m.dqs {
                    let axis = Vec3::new(r.next(), r.next(), r.next() + 1e-3);
                    let axis = axis * (1.0 / axis.length());
                    let q = Quat::from_axis_angle(axis, max * r.next());
                    let q = if r.next() < 0.0 { Quat::new(-q.x, -q.y, -q.z, -q.w) } else { q };
                    *d = DualQuat::from_rotation_translation(q, Vec3::new(r.next(), r.next(), 1.0));
                }
            }
            let m = m.with_pairs();
            if spread == 0 && super::super::pairs::worth_aligning(m.dqs.len(), &m.influences()) {
                // The aligned kernels run (on x86-64 with AVX2, and on
                // 64-bit targets).
                let mut copy = m.dqs.clone();
                prop_assert!(super::super::pairs::align(&mut copy, &m.influences()));
            }
            let table = m.pairs.clone();
            let mut m = m;
            for path in [Path::Portable, best_path()] {
                m.pairs = table.clone();
                let with = skin(&m, method, path, normals, tangents);
                let with_strided = skin_strided(&m, method, path, normals, tangents);
                m.pairs.clear();
                prop_assert!(with == skin(&m, method, path, normals, tangents));
                prop_assert!(with_strided == skin_strided(&m, method, path, normals, tangents));
            }
        }

        /// The AVX2 pair test (eight pairs per step, then a scalar tail)
        /// answers as the scalar one, for dot products on both sides of
        /// the margin and NaN.
        #[test]
        #[allow(unsafe_code)] // the AVX2 test's promises, kept below
        fn avx2_pair_test_matches_scalar(
            seed in any::<u64>(),
            joints in 1usize..20,
            pairs in 0usize..24,
            margin in prop_oneof![Just(0.0f32), Just(1e-5), 0.0f32..0.9],
            spread in prop_oneof![Just(0.3f32), Just(1.5)],
            nan in any::<bool>(),
        ) {
            #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
            if best_path() == Path::Avx2 {
                let mut r = Rng(seed);
                let mut palette: Vec<DualQuat> = (0..joints)
                    .map(|_| {
                        // Near +w or -w (`spread` 0.3: most pairs well
                        // clear of the margin, so that all-positive tables
                        // occur), or anywhere (1.5: dots across the
                        // margin).
                        let s = if r.next() < -0.8 { -1.0 } else { 1.0 };
                        let q = Quat::new(r.next() * spread, r.next() * spread, r.next() * spread, s)
                            .normalize();
                        DualQuat::from_rotation_translation(q, Vec3::new(1.0, 2.0, 3.0))
                    })
                    .collect();
                if nan {
                    let j = r.index(joints) as usize;
                    palette[j].real[2] = f32::NAN;
                }
                let table: Vec<[u16; 2]> =
                    (0..pairs).map(|_| [r.index(joints), r.index(joints)]).collect();
                let want = super::super::pairs::pairs_positive(&palette, &table, margin);
                // SAFETY: this CPU has AVX2 and FMA; every joint is below
                // `joints`.
                let got = unsafe { super::super::avx2::pairs_positive(&palette, &table, margin) };
                prop_assert_eq!(got, want);
            }
            let _ = (seed, joints, pairs, margin, spread, nan);
        }

        /// Blocks whose four vertices share their joints (the layout
        /// [`super::super::group_by_joints`] makes) take the broadcast
        /// path: it matches the scalar reference for every method and
        /// attribute set, and gives LBS the same bits as the per-vertex
        /// blend gives the same vertices in blocks of mixed joints (every
        /// vertex uses `used` slots, so each block blends as many; one-slot
        /// meshes weigh 1 or not, `unit`).
        #[test]
        fn blocks_of_shared_joints_match(
            seed in any::<u64>(),
            vertices in 0usize..60,
            palette in 1usize..20,
            used in 1usize..5,
            unit in any::<bool>(),
            method in 0u8..3,
            normals in any::<bool>(),
            tangents in any::<bool>(),
        ) {
            let mut m = mesh(seed, vertices, palette, false);
            let mut r = Rng(seed ^ 0xB10C);
            for v in 0..vertices {
                // Runs of 4-12 vertices with one joint set.
                if v % 4 != 0 || r.next() < -0.5 {
                    m.joints[v] = m.joints[v.saturating_sub(1)];
                }
                let mut w = [0.0f32; 4];
                for x in w.iter_mut().take(used) {
                    *x = r.next() + 1.0 + 1e-3;
                }
                let sum: f32 = w.iter().sum();
                m.weights[v] = if used == 1 && unit { [1.0, 0.0, 0.0, 0.0] } else { w.map(|x| x / sum) };
            }
            let (p, nn, t) = skin_on(&m, method, None, normals, tangents);
            for path in [Path::Portable, best_path()] {
                let a = skin(&m, method, path, normals, tangents);
                close(&a.0, &p)?;
                if normals {
                    close(&a.1, &nn)?;
                }
                if tangents {
                    close(&a.2, &t)?;
                }
            }
            // The same vertices moved by one place: blocks of mixed joints.
            let a = skin(&m, 0, Path::Portable, normals, tangents);
            if vertices == 0 {
                return Ok(());
            }
            let mut b = m;
            b.pos.rotate_right(1);
            b.nrm.rotate_right(1);
            b.tan.rotate_right(1);
            b.joints.rotate_right(1);
            b.weights.rotate_right(1);
            let mut b = skin(&b, 0, Path::Portable, normals, tangents);
            b.0.rotate_left(1);
            b.1.rotate_left(1);
            prop_assert!(a.0 == b.0 && a.1 == b.1);
        }

        /// Prepared blocks ([`SkinBlocks`](crate::skin::SkinBlocks)) give
        /// the array kernel's bits on the same influences with each
        /// vertex's slots in joint order (which is what the blocks hold),
        /// through the public call, the portable body and, where the CPU
        /// has them, the AVX2 copy; and agree with the scalar reference on
        /// the influences as given. Runs of vertices name one joint set
        /// in shuffled slot orders (shared blocks, reused broadcasts), with
        /// 1-4 used slots, unit weights or not.
        #[test]
        #[allow(unsafe_code)] // the kernels' unchecked lookups, joints checked
        fn prepared_blocks_match_array_kernel(
            seed in any::<u64>(),
            vertices in 0usize..60,
            palette in 1usize..20,
            unit in any::<bool>(),
            normals in any::<bool>(),
        ) {
            use crate::skin::{blocks::canonical_slots, SkinBlocks, VertexBlock};
            let mut m = mesh(seed, vertices, palette, false);
            let mut r = Rng(seed ^ 0x5EED);
            let mut used = 1;
            for v in 0..vertices {
                if v % 3 == 0 && r.next() < 0.0 {
                    used = 1 + r.index(4) as usize;
                } else if v > 0 {
                    m.joints[v] = m.joints[v - 1];
                }
                let mut w = [0.0f32; 4];
                for x in w.iter_mut().take(used) {
                    *x = r.next() + 1.0 + 1e-3;
                }
                let sum: f32 = w.iter().sum();
                m.weights[v] = if used == 1 && unit { [1.0, 0.0, 0.0, 0.0] } else { w.map(|x| x / sum) };
                // The same set in another slot order.
                let (j, w) = (&mut m.joints[v], &mut m.weights[v]);
                for s in (1..used).rev() {
                    let k = r.index(s + 1) as usize;
                    j.swap(s, k);
                    w.swap(s, k);
                }
            }
            let reference = skin_on(&m, 0, None, normals, false);
            let infl = m.checked();
            let src = SkinVertices { positions: &m.pos, normals: Some(&m.nrm), tangents: None };
            let mut buf = alloc::vec![VertexBlock::default(); SkinBlocks::block_count(vertices)];
            let prepared = SkinBlocks::new(&infl, src, &mut buf).unwrap();
            let mut public = (alloc::vec![[9.0; 3]; vertices], alloc::vec![[9.0; 3]; vertices]);
            let out = SkinOutput {
                positions: &mut public.0,
                normals: normals.then_some(&mut public.1[..]),
                tangents: None,
            };
            prepared.lbs(&m.lbs, out).unwrap();
            close(&public.0, &reference.0)?;
            if normals {
                close(&public.1, &reference.1)?;
            }
            let mut canonical = m;
            for (j, w) in canonical.joints.iter_mut().zip(canonical.weights.iter_mut()) {
                (*j, *w) = canonical_slots(j, w);
            }
            let arrays = skin(&canonical, 0, Path::Portable, normals, false);
            let mut bodies = alloc::vec![(
                alloc::vec![[9.0; 3]; vertices],
                alloc::vec![[9.0; 3]; vertices],
            )];
            let blocks = &buf[..];
            let call = |out: &mut (Vec<[f32; 3]>, Vec<[f32; 3]>), avx2: bool| {
                let (p, n) = (&mut out.0[..], &mut out.1[..]);
                // SAFETY: the blocks' joints are below the palette's length
                // (checked influences); AVX2 only where the CPU has it.
                unsafe {
                    match (normals, avx2) {
                        (true, false) => lbs_blocks_lanes::<true>(&canonical.lbs, blocks, p, n),
                        (false, false) => lbs_blocks_lanes::<false>(&canonical.lbs, blocks, p, n),
                        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
                        (true, true) => super::super::avx2::lbs_blocks::<true>(&canonical.lbs, blocks, p, n),
                        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
                        (false, true) => super::super::avx2::lbs_blocks::<false>(&canonical.lbs, blocks, p, n),
                        #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
                        (_, true) => unreachable!(),
                    }
                }
            };
            call(&mut bodies[0], false);
            if best_path() != Path::Portable {
                bodies.push((alloc::vec![[9.0; 3]; vertices], alloc::vec![[9.0; 3]; vertices]));
                call(&mut bodies[1], true);
            }
            let bits = |a: &[[f32; 3]]| a.iter().flatten().map(|x| x.to_bits()).collect::<Vec<_>>();
            for got in bodies.iter().map(|b| (&b.0, &b.1)).chain([(&public.0, &public.1)]) {
                prop_assert_eq!(bits(got.0), bits(&arrays.0));
                if normals {
                    prop_assert_eq!(bits(got.1), bits(&arrays.1));
                }
            }
        }

        /// Both paths against the scalar reference, four and eight
        /// influences (the reference blends all slots of every vertex).
        #[test]
        fn kernels_match_reference(
            seed in any::<u64>(),
            vertices in 0usize..40,
            palette in 1usize..30,
            method in 0u8..3,
            eight in any::<bool>(),
        ) {
            let m = mesh(seed, vertices, palette, eight);
            let (p, nn, t) = skin_on(&m, method, None, true, true);
            for path in [Path::Portable, best_path()] {
                let a = skin(&m, method, path, true, true);
                close(&a.0, &p)?;
                close(&a.1, &nn)?;
                close(&a.2, &t)?;
            }
        }

        #[test]
        fn avx2_palettes_match_portable(seed in any::<u64>(), joints in 0usize..72) {
            if best_path() == Path::Portable {
                return Ok(());
            }
            let mut r = Rng(seed);
            let mat = |r: &mut Rng| {
                // Rotation, translation, positive or mirrored non-uniform scale.
                let q = Quat::new(r.next(), r.next(), r.next(), r.next() + 0.01).normalize();
                let t = Vec3::new(r.next() * 3.0, r.next() * 3.0, r.next() * 3.0);
                let s = Vec3::new(r.next() + 1.5, r.next() + 1.5, (r.next() + 1.5) * r.next().signum());
                Mat4::from_trs(t, q, s)
            };
            let models: Vec<Mat4> = (0..joints).map(|_| mat(&mut r)).collect();
            let ibm: Vec<Mat4> = (0..joints).map(|_| mat(&mut r)).collect();
            let mut a = alloc::vec![Mat3x4::IDENTITY; joints];
            let mut b = a.clone();
            super::super::palette::lbs_portable(&models, &ibm, &mut a, 0);
            super::super::lbs_palette(&models, &ibm, &mut b).unwrap();
            let rows = |m: &[Mat3x4]| m.iter().flat_map(|m| m.rows).collect::<Vec<_>>();
            close(&rows(&a), &rows(&b))?;
            // Prepared binds: portable and AVX2 against the plain palette.
            let binds: Vec<LbsBind> = ibm.iter().map(LbsBind::new).collect();
            let mut c = alloc::vec![Mat3x4 { rows: [[9.0; 4]; 3] }; joints];
            let mut d = c.clone();
            super::super::palette::lbs_prepared_portable(&models, &binds, &mut c, 0);
            super::super::lbs_palette_prepared(&models, &binds, &mut d).unwrap();
            close(&rows(&a), &rows(&c))?;
            close(&rows(&a), &rows(&d))?;
            let mut a = alloc::vec![DualQuat::IDENTITY; joints];
            let mut b = a.clone();
            let mut sa = alloc::vec![[0.0; 3]; joints];
            let mut sb = sa.clone();
            super::super::palette::dqs_portable(&models, &ibm, &mut a, Some(&mut sa), 0);
            super::super::dqs_palette_with_scale(&models, &ibm, &mut b, &mut sb).unwrap();
            let parts = |d: &[DualQuat]| d.iter().flat_map(|d| [d.real, d.dual]).collect::<Vec<_>>();
            close(&parts(&a), &parts(&b))?;
            close(&sa, &sb)?;
            // Without the scales, and from prepared binds (AVX2 and portable).
            let mut c = alloc::vec![DualQuat { real: [9.0; 4], dual: [9.0; 4] }; joints];
            super::super::dqs_palette(&models, &ibm, &mut c).unwrap();
            close(&parts(&a), &parts(&c))?;
            let mut binds = alloc::vec![DqsBinds::default(); DqsBinds::count(joints)];
            super::super::prepare_dqs_binds(&ibm, &mut binds).unwrap();
            let mut d = alloc::vec![DualQuat { real: [9.0; 4], dual: [9.0; 4] }; joints];
            super::super::dqs_palette_prepared(&models, &binds, &mut d).unwrap();
            close(&parts(&a), &parts(&d))?;
            let mut e = alloc::vec![DualQuat { real: [9.0; 4], dual: [9.0; 4] }; joints];
            super::super::palette::dqs_prepared_portable(&models, &binds, &mut e);
            close(&parts(&a), &parts(&e))?;
        }
    }
}
