//! Skinning: palettes (LBS matrices, DQS dual quaternions) and vertex
//! skinning (linear blend, dual quaternion, and a per-vertex mix of both).
//!
//! The two stages of a frame are:
//! 1. **palette**: one entry per joint from the model-space matrices (FK
//!    output) and the mesh's inverse bind matrices — [`lbs_palette`] writes
//!    `models[j] * inverse_bind[j]` as a row-major [`Mat3x4`], [`dqs_palette`]
//!    the unit [`DualQuat`] of its rigid part;
//! 2. **vertices**: one [`SkinJob`] per mesh and frame, which names
//!    - the [`SkinMethod`]: [`Lbs`](SkinMethod::Lbs) over an LBS palette,
//!      [`Dqs`](SkinMethod::Dqs) over a DQS palette, or
//!      [`Mixed`](SkinMethod::Mixed) over both with a blend factor per
//!      vertex;
//!    - the mesh's [`CheckedInfluences`]: four or eight joint indices and
//!      weights per vertex, checked once, optionally with a DQS pair table;
//!    - the [`SkinAttributes`]: positions and, optionally, normals and
//!      tangents, read and written either as separate arrays
//!      ([`SkinVertices`] / [`SkinOutput`]) or as interleaved buffers
//!      ([`StridedVertices`] / [`StridedVerticesMut`]);
//!
//!    and [`SkinJob::run`] validates the sizes, then skins every vertex.
//!
//! ```text
//! load:   let infl = CheckedInfluences::new(&joints, &weights, joint_count)?;
//!         // DQS, optional: let infl = infl.with_dqs_pairs(&mut buf)?;
//!         // LBS, optional: let mesh = SkinBlocks::new(&infl, vertices, &mut blocks)?;
//!         //                then each frame mesh.lbs(&palette, output)?
//! frame:  lbs_palette(&models, &inverse_binds, &mut palette)?;
//!         SkinJob { method: SkinMethod::Lbs { palette: &palette },
//!                   influences: &infl,
//!                   attributes: SkinAttributes::Arrays { input, output } }.run()?;
//! ```
//!
//! # Validation
//! Influences are checked when their [`CheckedInfluences`] is built, for a
//! joint count: each joint index must be below it, each weight finite and
//! `>= 0`, each vertex's weights must sum to 1. That pass is O(vertices)
//! (branch-free, four vertices' weights per lane group; the precise,
//! vertex-naming error is searched for only when it fails). A mesh skinned
//! every frame builds the handle once, at load time; influences that the
//! caller rewrites between frames (streaming, LOD swaps, editing tools)
//! build a new one before the job — the same check, so there is no
//! separate unchecked entry point. The handle borrows the influences, so
//! they cannot change under it. [`check_influences`] runs the same check
//! without keeping a handle, to report bad meshes early.
//!
//! The job then checks only sizes ([`SkinJob::validate`]): that each
//! palette has exactly the handle's joint count and that the attributes
//! hold one entry per vertex (O(1); the mix weights of
//! [`SkinMethod::Mixed`] are checked too, O(vertices)). On error nothing
//! is written.
//!
//! # Weights
//! Weights must be finite, `>= 0` and sum to 1 within
//! [`WEIGHT_SUM_TOLERANCE`] (1e-3): anything else is an error naming the
//! vertex, not silently renormalised, because a mesh whose weights do not sum
//! to 1 is almost always a pipeline bug (a dropped influence, a wrong
//! accessor). Sums within the tolerance are used as they are (LBS then scales
//! a vertex by its weight sum, at most 1e-3; DQS is unaffected since it
//! normalises). [`normalize_weights`] (and [`normalize_weights8`]) renormalises a mesh offline. Unused
//! slots must still name a valid joint (0 is customary) with weight 0. A
//! slot of weight 0 adds nothing, and the SIMD kernels skip, per block of
//! four vertices, the slots past the last one with a non-zero weight (the
//! scalar twins read all four), so list influences by decreasing weight, as
//! glTF exporters do.
//!
//! # Eight influences
//! [`CheckedInfluences::new8`] takes eight influences per vertex as two
//! sets of four (slots 0-3 and 4-7, the layout of glTF's `JOINTS_0`/
//! `WEIGHTS_0` and `JOINTS_1`/`WEIGHTS_1`); the eight weights sum to 1 and
//! DQS aligns every slot with slot 0. Every [`SkinMethod`] and
//! [`SkinAttributes`] form skins them, with the same results as the
//! scalar twins ([`reference::skin_lbs_checked`] and the others). Each
//! set's trailing zero-weight slots are skipped
//! per block, so vertices that use only slots 0-3 cost one check of the
//! second set per block. Four-influence meshes run code without the second
//! set (the kernels are instantiated for each).
//!
//! # DQS and scale
//! A dual quaternion is a rigid transform. [`dqs_palette`] keeps the rigid
//! part of each skinning matrix: the rotation is the `Q` of a QR
//! (Gram–Schmidt) factorisation of the 3x3 part — x axis normalised, y axis
//! made orthogonal to it and normalised, z = x × y — and the translation is
//! kept. This is exact for any `R · diag(s)` with `s > 0` (scale along the
//! joint's own axes, which is what TRS scale gives), and the vertex
//! positions then come out *without* the scale. Scale, shear and mirroring
//! are dropped: a mirror (negative determinant) becomes the rotation with z
//! reversed. [`dqs_palette_with_scale`] writes the dropped per-axis scale
//! (the diagonal of the triangular factor; negative z for a mirror) so a
//! caller can detect non-rigid joints, e.g. to skin those vertices with LBS
//! through [`SkinMethod::Mixed`].
//!
//! # DQS pair tables
//! DQS negates an influence whose real part has a negative dot product
//! with the vertex's first influence's, and that test is a large share of
//! the AVX2 DQS kernel's time (a smaller one of the portable kernel's).
//! [`CheckedInfluences::with_dqs_pairs`] lists, once per mesh, the
//! distinct pairs of joints its vertices blend (few, since a vertex blends
//! neighbouring joints), ordered as a spanning forest, in a buffer of
//! [`dqs_pair_count`](CheckedInfluences::dqs_pair_count) entries that the
//! caller supplies. Each DQS or mixed job over those influences then
//! negates palette entries (on a copy) along the forest and
//! checks every pair; when all of them are in one hemisphere — every pose
//! in which no cycle of pairs wraps past 180°, as in ordinary character
//! poses, where the joints a vertex blends turn little relative to each
//! other — the blend needs no per-vertex test, and its result is the same,
//! bit for bit. The copy is 8 KiB of stack, so 32-bit targets do without
//! it.
//!
//! # Normals and tangents
//! LBS transforms normals and tangent directions by the blended 3x3 part
//! (exact for rotation and uniform scale; not the inverse transpose) and does
//! not renormalise them: blending shrinks them by up to cos(half the angle
//! between the influences), as it shrinks the geometry. DQS rotates them by
//! the blended, normalised real part only, so they stay unit. The mixed
//! kernel interpolates both results linearly. A tangent's `w` (handedness)
//! is copied.
//!
//! # SIMD
//! Vertices are skinned four at a time: each vertex's palette entries are
//! gathered and blended (LBS: matrix rows, weights broadcast; DQS: the four
//! vertices' dual quaternions transposed into lanes, sign-aligned to the
//! first influence with a mask), the blended transform is transposed into
//! lanes, and positions, normals and tangents are transformed lane-wise.
//! An LBS block whose four vertices name the same joints in the slots they
//! use (most blocks of a mesh ordered by [`influence_order`] and
//! [`group_by_joints`]) skips both steps: each lane entry is the joints'
//! entries broadcast and blended by the four weights in lanes, summed in
//! the same order, so the bits are those of the per-vertex blend. A
//! tail of 1-3 vertices runs through the same block code with padding lanes
//! that are not stored. [`reference`](mod@reference) holds the scalar twins (the readable
//! specification); SIMD and scalar agree within 1e-5.
//!
//! # Prepared blocks
//! A mesh skinned with LBS every frame can be prepared once, at load time,
//! into [`SkinBlocks`]: per block of four vertices, positions, normals and
//! weights already in lanes, each vertex's used slots in joint order, and
//! the block's slot count and whether its vertices share their joints
//! (and the joints of the shared block before it). [`SkinBlocks::lbs`] then
//! only blends and transforms: no de-interleave, no per-block tests, and a
//! run of shared blocks broadcasts its joints' entries once. Order the mesh
//! first ([`influence_order`] and [`group_by_joints`], which groups vertices
//! by their joint set). Its results are the array kernel's on the same
//! influences with each vertex's slots in joint order, bit for bit, on
//! every CPU (the AVX2 + FMA copy of the kernel does not fuse). Four
//! influences, LBS, positions and normals; [`VertexBlock`] is plain data,
//! so prepared blocks can be stored and checked back in with
//! [`SkinBlocks::from_prepared`].
//!
//! On x86-64 CPUs with AVX2 and FMA (asked of CPUID once, at the first
//! call), whole blocks of eight vertices and the palettes run in AVX2 + FMA
//! kernels instead; they agree with the portable ones within 1e-5 but not
//! bit for bit. The `portable` cargo feature turns them off, for
//! skinning that is bit-identical on every x86-64 CPU.
//!
//! NaN in palettes or vertex data propagates to the vertices it touches and
//! never panics (a palette entry that a vertex names only with weight 0 may
//! or may not reach it, as its slot may be skipped). Output entries of attributes that are not requested (an
//! output `None`) are not written; every vertex of every requested output
//! attribute is.

use crate::error::Error;
use crate::math::{Mat4, Quat, Vec3};
use crate::soa::check_len;
use wide::f32x4;

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod avx2;
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod avx512;
pub(crate) mod blocks;
mod job;
mod kernel;
mod layout;
mod order;
mod pairs;
mod palette;
pub mod reference;

pub use blocks::{SkinBlocks, VertexBlock};
pub use job::{SkinAttributes, SkinJob, SkinMethod};
pub use order::{group_by_joints, influence_order, slots_used};
pub use pairs::DQS_PAIR_MAX_JOINTS;
pub use palette::{
    dqs_palette, dqs_palette_prepared, dqs_palette_with_scale, lbs_palette, lbs_palette_prepared,
    prepare_dqs_binds, prepare_lbs_binds,
};

/// Largest allowed distance of a vertex's weight sum from 1.
pub const WEIGHT_SUM_TOLERANCE: f32 = 1e-3;

/// An affine transform as a row-major 3x4 matrix (the LBS palette entry).
///
/// `rows[r] = [m_r0, m_r1, m_r2, m_r3]`: a point `p` maps to
/// `rows[r] · (p, 1)`. 48 bytes, 16-byte aligned and `Pod`, so a palette can
/// be uploaded to a GPU as three `vec4` per joint.
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C, align(16))]
pub struct Mat3x4 {
    /// The three rows; column 3 is the translation.
    pub rows: [[f32; 4]; 3],
}

impl Default for Mat3x4 {
    fn default() -> Self {
        Mat3x4::IDENTITY
    }
}

impl Mat3x4 {
    /// The identity transform.
    pub const IDENTITY: Mat3x4 = Mat3x4 {
        rows: [
            [1.0, 0.0, 0.0, 0.0],
            [0.0, 1.0, 0.0, 0.0],
            [0.0, 0.0, 1.0, 0.0],
        ],
    };

    /// The top three rows of an affine column-major matrix.
    #[inline]
    #[must_use]
    pub fn from_mat4(m: &Mat4) -> Self {
        let c = &m.cols;
        let row = |r: usize| [c[0][r], c[1][r], c[2][r], c[3][r]];
        Mat3x4 {
            rows: [row(0), row(1), row(2)],
        }
    }

    /// The column-major 4x4 matrix with last row `0 0 0 1`.
    #[inline]
    #[must_use]
    pub fn to_mat4(&self) -> Mat4 {
        let r = &self.rows;
        let col = |c: usize, w: f32| [r[0][c], r[1][c], r[2][c], w];
        Mat4 {
            cols: [col(0, 0.0), col(1, 0.0), col(2, 0.0), col(3, 1.0)],
        }
    }

    /// Transforms a point (w = 1).
    #[inline]
    #[must_use]
    pub fn transform_point(&self, p: Vec3) -> Vec3 {
        let r = |i: usize| {
            let m = &self.rows[i];
            m[0] * p.x + m[1] * p.y + m[2] * p.z + m[3]
        };
        Vec3::new(r(0), r(1), r(2))
    }

    /// Transforms a direction (w = 0).
    #[inline]
    #[must_use]
    pub fn transform_vector(&self, v: Vec3) -> Vec3 {
        let r = |i: usize| {
            let m = &self.rows[i];
            m[0] * v.x + m[1] * v.y + m[2] * v.z
        };
        Vec3::new(r(0), r(1), r(2))
    }
}

/// An inverse bind matrix laid out for [`lbs_palette_prepared`]: build one
/// per joint when the mesh is loaded ([`LbsBind::new`] or
/// [`prepare_lbs_binds`]), then pass the slice every frame instead of the
/// matrices.
///
/// It holds the matrix's rows 0-2 (the affine part; row 3 is taken as
/// `0 0 0 1`) with each element repeated four times, in the order the
/// AVX2 kernel multiplies them, so that kernel spends no instructions on
/// the constant side of the product. 192 bytes, 32-byte aligned, `Pod`;
/// [`LbsBind::to_mat4`] reads the matrix back.
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C, align(32))]
pub struct LbsBind {
    /// `[b_k0 ×4 | b_k2 ×4]` for k = 0, 1, 2, then `[b_k1 ×4 | b_k3 ×4]`
    /// (`b_rc` = row `r`, column `c`).
    pub(crate) spread: [[f32; 8]; 6],
}

impl Default for LbsBind {
    fn default() -> Self {
        LbsBind::new(&Mat4::IDENTITY)
    }
}

impl LbsBind {
    /// Lays out an affine inverse bind matrix (its last row is ignored).
    #[must_use]
    pub fn new(inverse_bind: &Mat4) -> Self {
        let e = |r: usize, c: usize| inverse_bind.cols[c][r];
        let half = |r: usize, lo: usize, hi: usize| {
            let (a, b) = (e(r, lo), e(r, hi));
            [a, a, a, a, b, b, b, b]
        };
        LbsBind {
            spread: [
                half(0, 0, 2),
                half(1, 0, 2),
                half(2, 0, 2),
                half(0, 1, 3),
                half(1, 1, 3),
                half(2, 1, 3),
            ],
        }
    }

    /// Element (row `r` < 3, column `c` < 4) of the matrix.
    #[inline]
    #[must_use]
    pub(crate) fn get(&self, r: usize, c: usize) -> f32 {
        let (i, lane) = match c {
            0 => (r, 0),
            1 => (3 + r, 0),
            2 => (r, 4),
            _ => (3 + r, 4),
        };
        self.spread[i][lane]
    }

    /// The inverse bind matrix it was built from, with last row `0 0 0 1`.
    #[must_use]
    pub fn to_mat4(&self) -> Mat4 {
        affine(|r, c| self.get(r, c))
    }
}

/// Eight inverse bind matrices laid out for [`dqs_palette_prepared`]:
/// block `i` holds joints `8 i .. 8 i + 8` of a mesh, one joint per lane.
/// Build the blocks when the mesh is loaded ([`prepare_dqs_binds`];
/// [`DqsBinds::count`] of them), then pass them every frame instead of the
/// matrices.
///
/// Element (row `r` < 3, column `c`) of lane `l`'s matrix is at
/// `[c][r][l]` (row 3 is taken as `0 0 0 1`), which is what the AVX2 kernel
/// would otherwise transpose every frame. Lanes past the mesh's last joint
/// hold the identity. 384 bytes, 32-byte aligned, `Pod`.
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C, align(32))]
pub struct DqsBinds {
    /// `lanes[c][r][l]`: element (r, c) of lane `l`'s matrix.
    pub(crate) lanes: [[[f32; 8]; 3]; 4],
}

impl Default for DqsBinds {
    fn default() -> Self {
        DqsBinds::new(&[])
    }
}

impl DqsBinds {
    /// Joints per block.
    pub const LANES: usize = 8;

    /// How many blocks a mesh of `joint_count` joints needs.
    #[inline]
    #[must_use]
    pub const fn count(joint_count: usize) -> usize {
        joint_count.div_ceil(Self::LANES)
    }

    /// Lays out up to eight affine matrices (their last rows are ignored;
    /// matrices past the eighth too); the lanes after them hold the
    /// identity.
    #[must_use]
    pub fn new(inverse_binds: &[Mat4]) -> Self {
        let mut lanes = [[[0.0; 8]; 3]; 4];
        for (l, m) in (0..Self::LANES).map(|l| (l, inverse_binds.get(l).unwrap_or(&Mat4::IDENTITY)))
        {
            for (c, col) in lanes.iter_mut().enumerate() {
                for (r, row) in col.iter_mut().enumerate() {
                    if let Some(x) = row.get_mut(l) {
                        *x = m.cols[c][r];
                    }
                }
            }
        }
        DqsBinds { lanes }
    }

    /// Lane `l`'s matrix with last row `0 0 0 1` (`None` past lane 7).
    #[must_use]
    pub fn get(&self, l: usize) -> Option<Mat4> {
        (l < Self::LANES).then(|| affine(|r, c| self.lanes[c][r][l]))
    }
}

/// The affine matrix with element (row `r` < 3, column `c`) `e(r, c)` and
/// last row `0 0 0 1`.
fn affine(e: impl Fn(usize, usize) -> f32) -> Mat4 {
    let col = |c: usize, w: f32| [e(0, c), e(1, c), e(2, c), w];
    Mat4 {
        cols: [col(0, 0.0), col(1, 0.0), col(2, 0.0), col(3, 1.0)],
    }
}

/// A rigid transform as a unit dual quaternion (the DQS palette entry).
///
/// Components are stored `(x, y, z, w)` like [`Quat`]. `real` is the
/// rotation `q`; `dual` is `½ (t, 0) q` for the translation `t`. Palettes
/// written by sinew have `real.w >= 0`. 32 bytes, 16-byte aligned, `Pod`.
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C, align(16))]
pub struct DualQuat {
    /// Rotation quaternion `(x, y, z, w)`.
    pub real: [f32; 4],
    /// Translation part `½ (t, 0) · real`, `(x, y, z, w)`.
    pub dual: [f32; 4],
}

impl Default for DualQuat {
    fn default() -> Self {
        DualQuat::IDENTITY
    }
}

impl DualQuat {
    /// The identity transform.
    pub const IDENTITY: DualQuat = DualQuat {
        real: [0.0, 0.0, 0.0, 1.0],
        dual: [0.0; 4],
    };

    /// Rotation `q` (unit, used with its sign as given) followed by translation `t`.
    #[inline]
    #[must_use]
    pub fn from_rotation_translation(q: Quat, t: Vec3) -> Self {
        let d = (Quat::new(t.x, t.y, t.z, 0.0) * q).scale(0.5);
        DualQuat {
            real: q.to_array(),
            dual: d.to_array(),
        }
    }

    /// The rotation (real part).
    #[inline]
    #[must_use]
    pub fn rotation(&self) -> Quat {
        let r = self.real;
        Quat::new(r[0], r[1], r[2], r[3])
    }

    /// The translation `2 · dual · real*` (vector part), for a unit dual quaternion.
    #[inline]
    #[must_use]
    pub fn translation(&self) -> Vec3 {
        let d = self.dual;
        let t = (Quat::new(d[0], d[1], d[2], d[3]) * self.rotation().conjugate()).scale(2.0);
        Vec3::new(t.x, t.y, t.z)
    }

    /// Transforms a point: rotate, then translate.
    #[inline]
    #[must_use]
    pub fn transform_point(&self, p: Vec3) -> Vec3 {
        self.rotation().rotate(p) + self.translation()
    }

    /// Rotates a direction.
    #[inline]
    #[must_use]
    pub fn transform_vector(&self, v: Vec3) -> Vec3 {
        self.rotation().rotate(v)
    }

    /// The rigid transform as a column-major matrix.
    #[inline]
    #[must_use]
    pub fn to_mat4(&self) -> Mat4 {
        Mat4::from_trs(self.translation(), self.rotation(), Vec3::ONE)
    }
}

/// Checks a mesh's influences for a palette of `joint_count` entries, as
/// [`CheckedInfluences::new`] does, without keeping the handle (use it at
/// load time to report bad meshes early).
///
/// Vertices are checked in order; for each, the joint indices first, then
/// the weights, then their sum.
///
/// # Errors
/// [`Error::BadLength`] (`"weights"` not as long as `joints`),
/// [`Error::InfluenceOutOfRange`] (an index `>= joint_count`, even with
/// weight 0), [`Error::InvalidVertexWeight`] (negative, NaN or infinite),
/// [`Error::VertexWeightSum`] (sum off 1 by more than 1e-3).
pub fn check_influences(
    joints: &[[u16; 4]],
    weights: &[[f32; 4]],
    joint_count: usize,
) -> Result<(), Error> {
    CheckedInfluences::new(joints, weights, joint_count).map(|_| ())
}

/// [`check_influences`] for eight influences per vertex, as
/// [`CheckedInfluences::new8`] checks them.
///
/// # Errors
/// Those of [`CheckedInfluences::new8`].
pub fn check_influences8(
    joints: &[[u16; 4]],
    weights: &[[f32; 4]],
    joints1: &[[u16; 4]],
    weights1: &[[f32; 4]],
    joint_count: usize,
) -> Result<(), Error> {
    CheckedInfluences::new8(joints, weights, joints1, weights1, joint_count).map(|_| ())
}

/// A mesh's influences (four or eight joint indices and weights per
/// vertex), checked once against a palette size: build it when the mesh is
/// loaded and name it in a [`SkinJob`] every frame; the job then checks
/// only that the palettes have [`CheckedInfluences::joint_count`] entries
/// (O(1)) instead of every vertex (O(vertices)).
///
/// [`CheckedInfluences::new`] takes four influences per vertex;
/// [`CheckedInfluences::new8`] takes eight, as two sets of four (glTF's
/// `JOINTS_0`/`WEIGHTS_0` and `JOINTS_1`/`WEIGHTS_1`): slots 0-3, then
/// slots 4-7. The kernels blend all eight slots of a vertex (DQS aligns
/// every one with slot 0), skipping, per block of vertices, the slots of
/// each set past the last one with a non-zero weight, so a second set
/// that is mostly zero costs little more than four influences.
///
/// The handle borrows the slices immutably, so they cannot change while it
/// lives; a mesh whose influences are rewritten (streaming, LOD swaps,
/// editing) builds a new handle (an O(vertices) check) before its next job.
///
/// For DQS, [`with_dqs_pairs`](Self::with_dqs_pairs) adds the mesh's pair
/// table to the handle in one call.
#[derive(Clone, Copy, Debug)]
pub struct CheckedInfluences<'a> {
    pub(crate) joints: &'a [[u16; 4]],
    pub(crate) weights: &'a [[f32; 4]],
    /// Slots 4-7 (empty with four influences per vertex).
    pub(crate) joints1: &'a [[u16; 4]],
    pub(crate) weights1: &'a [[f32; 4]],
    pub(crate) joint_count: usize,
    /// The DQS pair table (empty without one): `tree` forest edges
    /// `[child, parent]`, then the other pairs (see [`pairs`]).
    pub(crate) pairs: &'a [[u16; 2]],
    pub(crate) tree: usize,
}

/// The crate-internal name the kernels use.
pub(crate) use CheckedInfluences as Influences;

/// One set of four influences per vertex: joint indices and weights.
pub type InfluenceSet<'a> = (&'a [[u16; 4]], &'a [[f32; 4]]);

/// `(w0 + w1) + (w2 + w3)`: one set's weight sum, in the order every check
/// adds it.
#[inline]
fn sum4(ws: &[f32; 4]) -> f32 {
    (ws[0] + ws[1]) + (ws[2] + ws[3])
}

/// A weight is finite and `>= 0` (`0 <= w <= MAX` is false for NaN,
/// infinities and negatives).
#[inline]
fn weight_ok(w: f32) -> bool {
    (0.0..=f32::MAX).contains(&w)
}

/// One set's joint indices are below `joint_count` and its weights pass
/// [`weight_ok`].
#[inline]
fn set_ok(js: &[u16; 4], ws: &[f32; 4], joint_count: usize) -> bool {
    let index_ok = js
        .iter()
        .fold(true, |ok, &j| ok & (usize::from(j) < joint_count));
    index_ok & ws.iter().fold(true, |ok, &w| ok & weight_ok(w))
}

/// A vertex passes: both sets (`second` is the eight-influence form's slots
/// 4-7) pass [`set_ok`] and the weights sum to 1 within the tolerance.
#[inline]
fn vertex_ok(
    js: &[u16; 4],
    ws: &[f32; 4],
    second: Option<(&[u16; 4], &[f32; 4])>,
    joint_count: usize,
) -> bool {
    let (ok, sum) = match second {
        None => (true, sum4(ws)),
        Some((j1, w1)) => (set_ok(j1, w1, joint_count), sum4(ws) + sum4(w1)),
    };
    ok & set_ok(js, ws, joint_count) & (libm::fabsf(sum - 1.0) <= WEIGHT_SUM_TOLERANCE)
}

/// Whether every joint index is below `joint_count` (through the maximum).
fn indices_ok(joints: &[[u16; 4]], joint_count: usize) -> bool {
    let flat: &[u16] = bytemuck::cast_slice(joints);
    let max = flat.iter().fold(0u16, |m, &j| m.max(j));
    flat.is_empty() || usize::from(max) < joint_count
}

/// Four vertices' weights of one set: the lane mask of all of them being
/// finite and `>= 0`, and the four per-vertex sums ([`sum4`]'s order).
#[inline]
fn block_weights(b: &[[f32; 4]; 4]) -> (f32x4, f32x4) {
    let (zero, big) = (f32x4::ZERO, f32x4::splat(f32::MAX));
    let v = b.map(f32x4::new);
    let ok = v
        .iter()
        .fold(f32x4::splat(f32::from_bits(u32::MAX)), |ok, &x| {
            ok & x.simd_ge(zero) & x.simd_le(big)
        });
    let t = f32x4::transpose(v);
    (ok, (t[0] + t[1]) + (t[2] + t[3]))
}

/// The fast pass of the check: true when every vertex passes
/// [`vertex_ok`] (`weights1` is empty with four influences). Indices are
/// checked through their maximum, weights four vertices at a time in lanes
/// (the sums are computed in the same order as [`vertex_ok`], so both
/// accept exactly the same vertices).
fn all_ok(
    joints: &[[u16; 4]],
    weights: &[[f32; 4]],
    joints1: &[[u16; 4]],
    weights1: &[[f32; 4]],
    joint_count: usize,
) -> bool {
    let index_ok = indices_ok(joints, joint_count) & indices_ok(joints1, joint_count);
    let (blocks, rest) = weights.as_chunks::<4>();
    let (blocks1, rest1) = weights1.as_chunks::<4>();
    let one = f32x4::ONE;
    let tol = f32x4::splat(WEIGHT_SUM_TOLERANCE);
    let mut ok = f32x4::splat(f32::from_bits(u32::MAX));
    for (i, b) in blocks.iter().enumerate() {
        let (ok0, mut sum) = block_weights(b);
        ok &= ok0;
        // Four influences: `weights1` is empty, so there is no `b1`.
        if let Some(b1) = blocks1.get(i) {
            let (ok1, sum1) = block_weights(b1);
            ok &= ok1;
            sum += sum1;
        }
        ok &= (sum - one).abs().simd_le(tol);
    }
    let rest_ok = rest.iter().enumerate().fold(true, |ok, (i, ws)| {
        let second = rest1.get(i).map(|w1| (&[0; 4], w1));
        ok & vertex_ok(&[0; 4], ws, second, 1)
    });
    index_ok & rest_ok & ok.all()
}

impl<'a> CheckedInfluences<'a> {
    /// Checks four influences per vertex for a palette of `joint_count`
    /// entries (see [`check_influences`] for what is checked and in which
    /// order).
    ///
    /// # Errors
    /// Those of [`check_influences`].
    pub fn new(
        joints: &'a [[u16; 4]],
        weights: &'a [[f32; 4]],
        joint_count: usize,
    ) -> Result<Self, Error> {
        check_len("weights", joints.len(), weights.len())?;
        Self::checked(joints, weights, &[], &[], joint_count)
    }

    /// Checks eight influences per vertex for a palette of `joint_count`
    /// entries: slots 0-3 in `joints`/`weights`, slots 4-7 in
    /// `joints1`/`weights1` (glTF's `JOINTS_1`/`WEIGHTS_1`). The eight
    /// weights of a vertex must sum to 1; otherwise the checks are those
    /// of [`check_influences`], slots 0-3 before slots 4-7.
    ///
    /// # Errors
    /// [`Error::BadLength`] (`"weights"`, `"joints1"`, `"weights1"` not as
    /// long as `joints`), then the influence errors of [`check_influences`].
    pub fn new8(
        joints: &'a [[u16; 4]],
        weights: &'a [[f32; 4]],
        joints1: &'a [[u16; 4]],
        weights1: &'a [[f32; 4]],
        joint_count: usize,
    ) -> Result<Self, Error> {
        check_len("weights", joints.len(), weights.len())?;
        check_len("joints1", joints.len(), joints1.len())?;
        check_len("weights1", joints.len(), weights1.len())?;
        Self::checked(joints, weights, joints1, weights1, joint_count)
    }

    /// The check of [`new`](Self::new) and [`new8`](Self::new8) after the
    /// lengths (`joints1` and `weights1` empty, or as long as `joints`).
    fn checked(
        joints: &'a [[u16; 4]],
        weights: &'a [[f32; 4]],
        joints1: &'a [[u16; 4]],
        weights1: &'a [[f32; 4]],
        joint_count: usize,
    ) -> Result<Self, Error> {
        // Branch-free pass; the vertex is searched for only when it fails.
        if !all_ok(joints, weights, joints1, weights1, joint_count) {
            for (vertex, (js, ws)) in joints.iter().zip(weights).enumerate() {
                let second = joints1.get(vertex).zip(weights1.get(vertex));
                let all_j = js.iter().chain(second.iter().flat_map(|s| s.0));
                if let Some(&j) = all_j.clone().find(|&&j| usize::from(j) >= joint_count) {
                    return Err(Error::InfluenceOutOfRange {
                        vertex,
                        joint: usize::from(j),
                        count: joint_count,
                    });
                }
                let mut all_w = ws.iter().chain(second.iter().flat_map(|s| s.1));
                if !all_w.all(|&w| weight_ok(w)) {
                    return Err(Error::InvalidVertexWeight { vertex });
                }
                if !vertex_ok(js, ws, second, joint_count) {
                    return Err(Error::VertexWeightSum { vertex });
                }
            }
        }
        Ok(CheckedInfluences {
            joints,
            weights,
            joints1,
            weights1,
            joint_count,
            pairs: &[],
            tree: 0,
        })
    }

    /// These influences with their DQS pair table: the one call that
    /// builds it, once per mesh, returning the handle that DQS and mixed
    /// [`SkinJob`]s then read it from.
    ///
    /// The core does not allocate, so the caller supplies the table's
    /// storage: `buf` of at least
    /// [`dqs_pair_count`](Self::dqs_pair_count) entries (the exact size;
    /// [`dqs_pair_bound`](Self::dqs_pair_bound) is an O(1) upper bound),
    /// which the returned handle borrows:
    ///
    /// ```
    /// # use sinew_core::skin::CheckedInfluences;
    /// # let (joints, weights) = ([[0u16, 1, 2, 0]; 3], [[0.5f32, 0.25, 0.25, 0.0]; 3]);
    /// let influences = CheckedInfluences::new(&joints, &weights, 3)?;
    /// let mut buf = vec![[0u16; 2]; influences.dqs_pair_count()?];
    /// let influences = influences.with_dqs_pairs(&mut buf)?;
    /// assert_eq!(influences.dqs_pairs().len(), 2); // joints 0-1 and 0-2
    /// # Ok::<(), sinew_core::Error>(())
    /// ```
    ///
    /// The table lists the distinct pairs of joints that a vertex blends
    /// (its slot 0 and each other slot of non-zero weight). With it, a
    /// DQS or mixed job first tries to give the palette's
    /// entries signs under which every pair's real parts have a positive
    /// dot product — O(pairs + joints) per call, on an 8 KiB stack copy of
    /// the palette — and if that succeeds it blends without the
    /// per-vertex sign test (a large share of the AVX2 DQS kernel's time,
    /// a smaller one of the portable kernel's). 32-bit targets
    /// (microcontrollers, whose stacks are small) ignore the table. The
    /// result is the same, bit for bit (an entry and its negation are the
    /// same transform, and negation commutes with rounding; at most the
    /// sign of an exact zero differs). Poses in which the signs cannot
    /// agree (a cycle of pairs whose rotations wrap around) take the
    /// per-vertex test, as without a table.
    ///
    /// # Errors
    /// [`Error::CapacityExceeded`] (more than [`DQS_PAIR_MAX_JOINTS`]
    /// joints), [`Error::BufferTooSmall`] (more distinct pairs than `buf`
    /// holds; `needed` is their number).
    pub fn with_dqs_pairs(mut self, buf: &'a mut [[u16; 2]]) -> Result<Self, Error> {
        let (count, tree) = pairs::build(&self, buf)?;
        let buf: &'a [[u16; 2]] = buf;
        self.pairs = &buf[..count];
        self.tree = tree;
        Ok(self)
    }

    /// A pair table size that always suffices for
    /// [`with_dqs_pairs`](Self::with_dqs_pairs), in O(1): 3 pairs per
    /// vertex (7 with eight influences), at most `n (n - 1) / 2` for `n`
    /// joints.
    #[must_use]
    pub fn dqs_pair_bound(&self) -> usize {
        pairs::bound(self)
    }

    /// The exact size of [`with_dqs_pairs`](Self::with_dqs_pairs)'s table:
    /// the number of distinct pairs of joints the vertices blend (usually
    /// far below [`dqs_pair_bound`](Self::dqs_pair_bound), since vertices
    /// blend neighbouring joints). One pass over the influences, with 4 KiB
    /// of stack.
    ///
    /// # Errors
    /// [`Error::CapacityExceeded`] (more than [`DQS_PAIR_MAX_JOINTS`]
    /// joints).
    pub fn dqs_pair_count(&self) -> Result<usize, Error> {
        pairs::count(self)
    }

    /// The DQS pair table (empty unless built by
    /// [`with_dqs_pairs`](Self::with_dqs_pairs)): each pair of joints once,
    /// the edges of a spanning forest first as `[child, parent]`.
    #[inline]
    #[must_use]
    pub fn dqs_pairs(&self) -> &'a [[u16; 2]] {
        self.pairs
    }

    /// Number of vertices.
    #[inline]
    #[must_use]
    pub fn len(&self) -> usize {
        self.joints.len()
    }

    /// True when there are no vertices.
    #[inline]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.joints.is_empty()
    }

    /// The palette size the influences were checked against; a
    /// [`SkinJob`] requires palettes of exactly this length.
    #[inline]
    #[must_use]
    pub fn joint_count(&self) -> usize {
        self.joint_count
    }

    /// The joint indices of slots 0-3.
    #[inline]
    #[must_use]
    pub fn joints(&self) -> &'a [[u16; 4]] {
        self.joints
    }

    /// The weights of slots 0-3.
    #[inline]
    #[must_use]
    pub fn weights(&self) -> &'a [[f32; 4]] {
        self.weights
    }

    /// The joint indices and weights of slots 4-7, for influences built
    /// with [`new8`](Self::new8) (`None` for [`new`](Self::new)).
    #[inline]
    #[must_use]
    pub fn second_set(&self) -> Option<InfluenceSet<'a>> {
        self.is_eight().then_some((self.joints1, self.weights1))
    }

    /// Whether the influences have eight slots per vertex (a mesh of no
    /// vertices has four).
    #[inline]
    pub(crate) fn is_eight(&self) -> bool {
        !self.joints1.is_empty()
    }

    /// `Ok` when `palette_len` is the checked joint count.
    #[inline]
    pub(crate) fn check_palette(&self, palette_len: usize) -> Result<(), Error> {
        check_len("palette", self.joint_count, palette_len)
    }
}

/// Renormalises each vertex's weights to sum to exactly 1 (an offline
/// helper for meshes that fail [`check_influences`] with
/// [`Error::VertexWeightSum`]).
///
/// # Errors
/// [`Error::InvalidVertexWeight`] (negative, NaN or infinite weight) or
/// [`Error::VertexWeightSum`] (all weights 0); the slice is untouched on error.
pub fn normalize_weights(weights: &mut [[f32; 4]]) -> Result<(), Error> {
    normalize_sets(weights, &mut [])
}

/// [`normalize_weights`] for eight influences per vertex: slots 0-3 in
/// `weights`, slots 4-7 in `weights1`, all eight scaled so that they sum
/// to 1 (what [`check_influences8`] asks).
///
/// # Errors
/// [`Error::BadLength`] (`"weights1"` not as long as `weights`), then those
/// of [`normalize_weights`] over a vertex's eight weights; both slices are
/// untouched on error.
pub fn normalize_weights8(
    weights: &mut [[f32; 4]],
    weights1: &mut [[f32; 4]],
) -> Result<(), Error> {
    check_len("weights1", weights.len(), weights1.len())?;
    normalize_sets(weights, weights1)
}

/// Renormalises each vertex's weights in `w0` and, when it is not empty,
/// `w1` (as long as `w0`): every check first, then the scaling.
fn normalize_sets(w0: &mut [[f32; 4]], w1: &mut [[f32; 4]]) -> Result<(), Error> {
    let sum = |w0: &[f32; 4], w1: Option<&[f32; 4]>| {
        // In slot order from 0, so four weights sum as `w0 + w1 + w2 + w3`.
        w0.iter()
            .chain(w1.into_iter().flatten())
            .fold(0.0f32, |s, w| s + w)
    };
    for (vertex, ws) in w0.iter().enumerate() {
        let more = w1.get(vertex);
        let mut all = ws.iter().chain(more.into_iter().flatten());
        if !all.all(|&w| weight_ok(w)) {
            return Err(Error::InvalidVertexWeight { vertex });
        }
        let s = sum(ws, more);
        if !(s > 0.0 && s.is_finite()) {
            return Err(Error::VertexWeightSum { vertex });
        }
    }
    for (vertex, ws) in w0.iter_mut().enumerate() {
        let mut more = w1.get_mut(vertex);
        let inv = 1.0 / sum(ws, more.as_deref());
        for w in ws
            .iter_mut()
            .chain(more.iter_mut().flat_map(|m| m.iter_mut()))
        {
            *w *= inv;
        }
    }
    Ok(())
}

/// Bind-space vertex attributes, one array per attribute (the layout of
/// glTF accessors and of `sinew_std::import::Mesh`).
///
/// The vertex count is `joints.len()`; every present array has one entry
/// per vertex. A [`SkinJob`] takes the two halves apart:
/// [`vertices`](Self::vertices) and a [`CheckedInfluences`] of `joints`
/// and `weights`.
#[derive(Clone, Copy, Debug)]
pub struct SkinInput<'a> {
    /// Positions.
    pub positions: &'a [[f32; 3]],
    /// Normals, if the mesh has them (needed only when the output asks for them).
    pub normals: Option<&'a [[f32; 3]]>,
    /// Tangents `(x, y, z, handedness)` (needed only when the output asks for them).
    pub tangents: Option<&'a [[f32; 4]]>,
    /// Four joint indices per vertex (palette indices; unused slots name any
    /// valid joint, 0 by custom, with weight 0).
    pub joints: &'a [[u16; 4]],
    /// Four weights per vertex: finite, `>= 0`, summing to 1 within 1e-3.
    pub weights: &'a [[f32; 4]],
}

impl<'a> SkinInput<'a> {
    /// The vertex attributes without the influences.
    #[inline]
    #[must_use]
    pub fn vertices(&self) -> SkinVertices<'a> {
        SkinVertices {
            positions: self.positions,
            normals: self.normals,
            tangents: self.tangents,
        }
    }
}

/// Bind-space vertex attributes without influences: the input of a
/// [`SkinJob`] over separate arrays ([`SkinAttributes::Arrays`]), whose
/// influences come in a [`CheckedInfluences`].
///
/// The vertex count is the influences' length; every present array has one
/// entry per vertex.
#[derive(Clone, Copy, Debug)]
pub struct SkinVertices<'a> {
    /// Positions.
    pub positions: &'a [[f32; 3]],
    /// Normals, if the mesh has them (needed only when the output asks for them).
    pub normals: Option<&'a [[f32; 3]]>,
    /// Tangents `(x, y, z, handedness)` (needed only when the output asks for them).
    pub tangents: Option<&'a [[f32; 4]]>,
}

impl<'a> SkinVertices<'a> {
    /// Positions only: no normals, no tangents.
    ///
    /// ```
    /// use sinew_core::skin::SkinVertices;
    ///
    /// let positions = [[0.0, 1.0, 0.0]; 3];
    /// let input = SkinVertices::positions(&positions);
    /// assert!(input.normals.is_none() && input.tangents.is_none());
    /// ```
    #[inline]
    #[must_use]
    pub fn positions(positions: &'a [[f32; 3]]) -> Self {
        SkinVertices {
            positions,
            normals: None,
            tangents: None,
        }
    }
}

/// Skinned vertex attributes; `None` attributes are not computed.
#[derive(Debug)]
pub struct SkinOutput<'a> {
    /// Skinned positions, one per vertex.
    pub positions: &'a mut [[f32; 3]],
    /// Skinned normals, one per vertex (requires input normals).
    pub normals: Option<&'a mut [[f32; 3]]>,
    /// Skinned tangents, one per vertex (requires input tangents).
    pub tangents: Option<&'a mut [[f32; 4]]>,
}

impl<'a> SkinOutput<'a> {
    /// Positions only: normals and tangents are not computed.
    ///
    /// ```
    /// use sinew_core::skin::SkinOutput;
    ///
    /// let mut skinned = [[0.0; 3]; 3];
    /// let output = SkinOutput::positions(&mut skinned);
    /// assert!(output.normals.is_none() && output.tangents.is_none());
    /// ```
    #[inline]
    #[must_use]
    pub fn positions(positions: &'a mut [[f32; 3]]) -> Self {
        SkinOutput {
            positions,
            normals: None,
            tangents: None,
        }
    }
}

impl SkinOutput<'_> {
    /// The same arrays, borrowed for a shorter time (e.g. to hand to a
    /// [`SkinJob`] while keeping `self` for the next frame).
    #[inline]
    #[must_use]
    pub fn reborrow(&mut self) -> SkinOutput<'_> {
        SkinOutput {
            positions: self.positions,
            normals: self.normals.as_deref_mut(),
            tangents: self.tangents.as_deref_mut(),
        }
    }
}

/// An interleaved (strided) vertex buffer to read: `stride` floats per
/// vertex, each attribute at a fixed float offset inside the vertex. The
/// influences stay in their own arrays (they are integers and floats, and
/// often a separate stream anyway).
///
/// Vertex `v`'s position is `data[v * stride + position ..][..3]`, its
/// normal `data[v * stride + normal ..][..3]`, its tangent
/// `data[v * stride + tangent ..][..4]`. `data.len()` must be exactly
/// `vertices * stride`. Other floats of a vertex (UVs, colours) are ignored.
#[derive(Clone, Copy, Debug)]
pub struct StridedVertices<'a> {
    /// The buffer.
    pub data: &'a [f32],
    /// Floats per vertex (`> 0`).
    pub stride: usize,
    /// Float offset of the position (3 floats) inside a vertex.
    pub position: usize,
    /// Float offset of the normal (3 floats), if present.
    pub normal: Option<usize>,
    /// Float offset of the tangent (4 floats), if present.
    pub tangent: Option<usize>,
}

/// An interleaved (strided) vertex buffer to write; see [`StridedVertices`].
///
/// Only the floats of the requested attributes are written, so skinning
/// into a render buffer leaves its UVs and colours alone. The attributes
/// must not overlap.
#[derive(Debug)]
pub struct StridedVerticesMut<'a> {
    /// The buffer, exactly `vertices * stride` floats.
    pub data: &'a mut [f32],
    /// Floats per vertex (`> 0`).
    pub stride: usize,
    /// Float offset of the position (3 floats).
    pub position: usize,
    /// Float offset of the normal (3 floats), if it is to be written.
    pub normal: Option<usize>,
    /// Float offset of the tangent (4 floats), if it is to be written.
    pub tangent: Option<usize>,
}

impl StridedVerticesMut<'_> {
    /// The same buffer and layout, borrowed for a shorter time (e.g. to
    /// hand to a [`SkinJob`] while keeping `self` for the next frame).
    #[inline]
    #[must_use]
    pub fn reborrow(&mut self) -> StridedVerticesMut<'_> {
        StridedVerticesMut {
            data: self.data,
            stride: self.stride,
            position: self.position,
            normal: self.normal,
            tangent: self.tangent,
        }
    }
}
