//! Blend shapes (morph targets): `x = x0 + Σ_k w_k Δx_k` for positions,
//! normals and tangents, in bind space, before [`skin`](crate::skin).
//!
//! A [`BlendShapes`] is a validated, borrowed view of a mesh's targets: the
//! caller owns every delta slice, [`BlendShapes::new`] checks each target
//! once (lengths, indices, finite values), and [`BlendShapes::apply`] then
//! writes `base + Σ w_k Δ_k` into caller buffers every frame with O(targets)
//! checks and no allocation. Base and output are the
//! [`SkinVertices`]/[`SkinOutput`] a [`SkinJob`](crate::skin::SkinJob)
//! reads, so the output of one is the input of the other.
//!
//! Each attribute of a [`Target`] is absent (no change), dense (one delta
//! per vertex) or sparse (the sorted vertex indices it moves and their
//! deltas), as glTF stores morph targets (`POSITION`, `NORMAL`, `TANGENT`,
//! sparse accessors). Tangent deltas are 3-vectors (glTF's): they move a
//! tangent's `xyz`, and its handedness `w` is copied from the base.
//!
//! # Sparse deltas: SoA blocks of four
//!
//! A sparse attribute's deltas are [`SoaVec3`] blocks, four moved vertices
//! per block (`deltas[i / 4]` lane `i % 4` belongs to `indices[i]`; pack
//! them with [`pack_sparse`]). The apply is a scatter into the AoS output,
//! whose stores are one vertex at a time whatever the layout; the blocks
//! let the other half of the work, scaling the deltas by the weight, run
//! four vertices per lane instruction on aligned loads, and keep the
//! layout the other SoA kernels of the crate use. The scalar twin reads the
//! same blocks lane by lane, so both paths round the same way.

use wide::f32x4;

use crate::fp::Fp;
use crate::skin::{SkinOutput, SkinVertices};
use crate::soa::{all_finite, check_len, soa_count, SoaVec3, LANES};
use crate::Error;

/// The deltas of one attribute of one target.
#[derive(Clone, Copy, Debug)]
pub enum Deltas<'a> {
    /// One delta per vertex of the mesh.
    Dense(&'a [[f32; 3]]),
    /// Only the vertices the target moves.
    Sparse {
        /// The moved vertices: strictly increasing, each below the vertex
        /// count.
        indices: &'a [u32],
        /// Their deltas, `soa_count(indices.len())` blocks, delta `i` in
        /// block `i / 4`, lane `i % 4` (see [`pack_sparse`]). Every float,
        /// padding lanes included, must be finite.
        deltas: &'a [SoaVec3],
    },
}

/// One blend shape (morph target): the deltas it adds to each attribute,
/// each absent, dense or sparse independently.
#[derive(Clone, Copy, Debug, Default)]
pub struct Target<'a> {
    /// Position deltas (bind-space units), or `None` for a target that
    /// does not move positions.
    pub positions: Option<Deltas<'a>>,
    /// Normal deltas, or `None`.
    pub normals: Option<Deltas<'a>>,
    /// Tangent deltas (`xyz` only: handedness is the base's), or `None`.
    pub tangents: Option<Deltas<'a>>,
}

/// How [`BlendShapes::apply`] treats small weights and the blended normals.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BlendOptions {
    /// Targets with `|w| <= threshold` are skipped (not added at all), so
    /// `0.0` skips exactly the zero weights. Finite and `>= 0`.
    pub threshold: f32,
    /// Scale every output normal and every output tangent's `xyz` to unit
    /// length after the deltas are added, as glTF asks of morphed normals
    /// and tangents. A zero-length result is left as it is (zero). Without
    /// it they are the plain sums, which the skinning may normalise later.
    pub renormalize: bool,
}

impl Default for BlendOptions {
    /// Skip zero weights, renormalise normals and tangents.
    fn default() -> Self {
        BlendOptions {
            threshold: 0.0,
            renormalize: true,
        }
    }
}

/// A mesh's blend shapes: a validated view of caller-owned targets.
#[derive(Clone, Copy, Debug)]
pub struct BlendShapes<'a> {
    vertex_count: usize,
    targets: &'a [Target<'a>],
}

/// Which attribute a message is about.
#[derive(Clone, Copy)]
enum Attr {
    Position,
    Normal,
    Tangent,
}

/// What is wrong with an attribute's deltas.
#[derive(Clone, Copy)]
enum Fault {
    DenseLength,
    BlockCount,
    NotIncreasing,
    OutOfRange,
    NonFinite,
}

macro_rules! messages {
    ($name:literal) => {
        [
            concat!(
                "dense ",
                $name,
                " deltas: length differs from the vertex count"
            ),
            concat!(
                "sparse ",
                $name,
                " deltas: block count is not soa_count(indices)"
            ),
            concat!("sparse ", $name, " indices are not strictly increasing"),
            concat!("sparse ", $name, " index is not below the vertex count"),
            concat!($name, " deltas hold a NaN or infinite value"),
        ]
    };
}

fn message(attr: Attr, fault: Fault) -> &'static str {
    const POSITION: [&str; 5] = messages!("position");
    const NORMAL: [&str; 5] = messages!("normal");
    const TANGENT: [&str; 5] = messages!("tangent");
    let table = match attr {
        Attr::Position => &POSITION,
        Attr::Normal => &NORMAL,
        Attr::Tangent => &TANGENT,
    };
    table[fault as usize]
}

/// `k` as the `u32` an error names (saturating: a set that large is
/// reported at `u32::MAX`).
#[inline]
fn name(k: usize) -> u32 {
    u32::try_from(k).unwrap_or(u32::MAX)
}

fn check_deltas(vertex_count: usize, deltas: &Deltas<'_>) -> Result<(), Fault> {
    match *deltas {
        Deltas::Dense(d) => {
            if d.len() != vertex_count {
                return Err(Fault::DenseLength);
            }
            if !all_finite(d.as_flattened()) {
                return Err(Fault::NonFinite);
            }
        }
        Deltas::Sparse { indices, deltas } => {
            if deltas.len() != soa_count(indices.len()) {
                return Err(Fault::BlockCount);
            }
            if indices.windows(2).any(|p| p[0] >= p[1]) {
                return Err(Fault::NotIncreasing);
            }
            if indices.last().is_some_and(|&i| i as usize >= vertex_count) {
                return Err(Fault::OutOfRange);
            }
            if !all_finite(bytemuck::cast_slice(deltas)) {
                return Err(Fault::NonFinite);
            }
        }
    }
    Ok(())
}

impl<'a> BlendShapes<'a> {
    /// Checks every target of a mesh of `vertex_count` vertices once.
    ///
    /// # Errors
    /// [`Error::InvalidShape`] naming the first bad target (its index in
    /// `targets`) and the fault: dense deltas whose length is not
    /// `vertex_count`; sparse deltas whose block count is not
    /// `soa_count(indices.len())`, whose indices are not strictly
    /// increasing or not below `vertex_count`; a NaN or infinite delta
    /// (padding lanes of sparse blocks included).
    pub fn new(vertex_count: usize, targets: &'a [Target<'a>]) -> Result<Self, Error> {
        for (k, t) in targets.iter().enumerate() {
            let attrs = [
                (t.positions, Attr::Position),
                (t.normals, Attr::Normal),
                (t.tangents, Attr::Tangent),
            ];
            for (d, attr) in attrs {
                if let Some(d) = d {
                    check_deltas(vertex_count, &d).map_err(|f| Error::InvalidShape {
                        shape: name(k),
                        what: message(attr, f),
                    })?;
                }
            }
        }
        Ok(BlendShapes {
            vertex_count,
            targets,
        })
    }

    /// Vertices of the mesh the targets were checked against.
    #[inline]
    #[must_use]
    pub fn vertex_count(&self) -> usize {
        self.vertex_count
    }

    /// Number of targets: the length [`apply`](Self::apply) wants of its
    /// weights.
    #[inline]
    #[must_use]
    pub fn target_count(&self) -> usize {
        self.targets.len()
    }

    /// The targets.
    #[inline]
    #[must_use]
    pub fn targets(&self) -> &'a [Target<'a>] {
        self.targets
    }

    /// Writes `base + Σ_k weights[k] Δ_k` into `out`, lane path.
    ///
    /// Positions are always written; normals and tangents when `out` names
    /// them (then `base` must have them). Every vertex of every written
    /// attribute is set: first to the base, then each target whose
    /// `|w| > options.threshold` adds `w Δ`, in target order (a sparse
    /// target adds only to its vertices; a tangent's `w` stays the base's).
    /// With `options.renormalize`, normals and tangent directions are then
    /// scaled to unit length. Dense deltas are added four floats per lane
    /// instruction over the flattened arrays, up to four targets in one pass
    /// over the output. Equals [`apply_scalar`](Self::apply_scalar) within
    /// the rounding of a fused multiply-add.
    ///
    /// # Errors
    /// [`Error::BadLength`] for `weights` (`"blend shape weights"`, not one
    /// per target), a base or output attribute that is not one per vertex,
    /// or an output attribute the base lacks (`"normals"`, `"tangents"`,
    /// expected length the vertex count, actual 0);
    /// [`Error::InvalidShape`] naming the first target whose weight is NaN
    /// or infinite; [`Error::InvalidParameter`] for a threshold that is
    /// negative or not finite. Nothing is written on error.
    pub fn apply(
        &self,
        weights: &[f32],
        options: BlendOptions,
        base: SkinVertices<'_>,
        out: SkinOutput<'_>,
    ) -> Result<(), Error> {
        self.run(weights, options, base, out, Path::Lanes)
    }

    /// The scalar twin of [`apply`](Self::apply): the formula, one float
    /// and one target at a time (`out = out + w * Δ`). Same contract and
    /// errors.
    ///
    /// # Errors
    /// As [`apply`](Self::apply).
    pub fn apply_scalar(
        &self,
        weights: &[f32],
        options: BlendOptions,
        base: SkinVertices<'_>,
        out: SkinOutput<'_>,
    ) -> Result<(), Error> {
        self.run(weights, options, base, out, Path::Scalar)
    }

    fn run(
        &self,
        weights: &[f32],
        options: BlendOptions,
        base: SkinVertices<'_>,
        out: SkinOutput<'_>,
        path: Path,
    ) -> Result<(), Error> {
        let n = self.vertex_count;
        check_len("blend shape weights", self.targets.len(), weights.len())?;
        if let Some(k) = weights.iter().position(|w| !w.is_finite()) {
            return Err(Error::InvalidShape {
                shape: name(k),
                what: "weight is NaN or infinite",
            });
        }
        let threshold = options.threshold;
        if !(threshold.is_finite() && threshold >= 0.0) {
            return Err(Error::InvalidParameter {
                what: "blend shape threshold must be finite and >= 0",
            });
        }
        check_len("positions", n, base.positions.len())?;
        check_len("output positions", n, out.positions.len())?;
        if let Some(o) = &out.normals {
            check_len("normals", n, base.normals.map_or(0, <[_]>::len))?;
            check_len("output normals", n, o.len())?;
        }
        if let Some(o) = &out.tangents {
            check_len("tangents", n, base.tangents.map_or(0, <[_]>::len))?;
            check_len("output tangents", n, o.len())?;
        }

        let active = |k: usize| weights.get(k).copied().filter(|w| w.abs() > threshold);
        out.positions.copy_from_slice(base.positions);
        add3(out.positions, self.targets, &active, |t| t.positions, path);
        if let (Some(o), Some(b)) = (out.normals, base.normals) {
            o.copy_from_slice(b);
            add3(o, self.targets, &active, |t| t.normals, path);
            if options.renormalize {
                o.iter_mut().for_each(renormalize);
            }
        }
        if let (Some(o), Some(b)) = (out.tangents, base.tangents) {
            o.copy_from_slice(b);
            add_tangents(o, self.targets, &active, path);
            if options.renormalize {
                for v in o.iter_mut() {
                    let mut xyz = [v[0], v[1], v[2]];
                    renormalize(&mut xyz);
                    v[..3].copy_from_slice(&xyz);
                }
            }
        }
        Ok(())
    }
}

/// Which twin runs.
#[derive(Clone, Copy, PartialEq)]
enum Path {
    Lanes,
    Scalar,
}

/// Dense targets one pass over the output adds at most.
const GROUP: usize = 4;

/// Consecutive active dense targets of one attribute, added in one pass.
struct Group<'d, T> {
    w: [f32; GROUP],
    d: [&'d [T]; GROUP],
    n: usize,
}

impl<'d, T> Group<'d, T> {
    fn new() -> Self {
        Group {
            w: [0.0; GROUP],
            d: [&[]; GROUP],
            n: 0,
        }
    }

    /// Adds a target; true when the group is full.
    fn push(&mut self, w: f32, d: &'d [T]) -> bool {
        if let (Some(ws), Some(ds)) = (self.w.get_mut(self.n), self.d.get_mut(self.n)) {
            *ws = w;
            *ds = d;
            self.n += 1;
        }
        self.n == GROUP
    }
}

/// Adds the active targets' deltas of one 3-vector attribute to `out`.
fn add3<'t>(
    out: &mut [[f32; 3]],
    targets: &'t [Target<'t>],
    active: &impl Fn(usize) -> Option<f32>,
    pick: impl Fn(&Target<'t>) -> Option<Deltas<'t>>,
    path: Path,
) {
    let mut group = Group::new();
    for (k, t) in targets.iter().enumerate() {
        let (Some(w), Some(d)) = (active(k), pick(t)) else {
            continue;
        };
        match (d, path) {
            (Deltas::Dense(d), Path::Scalar) => dense3_scalar(out, w, d),
            (Deltas::Dense(d), Path::Lanes) => {
                if group.push(w, d) {
                    dense_lanes(out.as_flattened_mut(), &group);
                    group.n = 0;
                }
            }
            (Deltas::Sparse { indices, deltas }, Path::Scalar) => {
                sparse_scalar(out, w, indices, deltas);
            }
            (Deltas::Sparse { indices, deltas }, Path::Lanes) => {
                // Targets add in order, so the dense ones before it go first.
                dense_lanes(out.as_flattened_mut(), &group);
                group.n = 0;
                sparse_lanes(out, w, indices, deltas);
            }
        }
    }
    dense_lanes(out.as_flattened_mut(), &group);
}

/// Adds the active targets' tangent deltas to `out` (`xyz` only).
fn add_tangents<'t>(
    out: &mut [[f32; 4]],
    targets: &'t [Target<'t>],
    active: &impl Fn(usize) -> Option<f32>,
    path: Path,
) {
    let mut group = Group::new();
    for (k, t) in targets.iter().enumerate() {
        let (Some(w), Some(d)) = (active(k), t.tangents) else {
            continue;
        };
        match (d, path) {
            (Deltas::Dense(d), Path::Scalar) => dense4_scalar(out, w, d),
            (Deltas::Dense(d), Path::Lanes) => {
                if group.push(w, d) {
                    tangent_lanes(out, &group);
                    group.n = 0;
                }
            }
            (Deltas::Sparse { indices, deltas }, Path::Scalar) => {
                sparse_scalar(out, w, indices, deltas);
            }
            (Deltas::Sparse { indices, deltas }, Path::Lanes) => {
                tangent_lanes(out, &group);
                group.n = 0;
                sparse_lanes(out, w, indices, deltas);
            }
        }
    }
    tangent_lanes(out, &group);
}

/// Scalar: `out[v] = out[v] + w * d[v]`, component by component.
fn dense3_scalar(out: &mut [[f32; 3]], w: f32, d: &[[f32; 3]]) {
    for (o, d) in out.iter_mut().zip(d) {
        for (o, d) in o.iter_mut().zip(d) {
            *o += w * d;
        }
    }
}

/// Scalar, tangents: `xyz` of `out[v]` plus `w * d[v]`.
fn dense4_scalar(out: &mut [[f32; 4]], w: f32, d: &[[f32; 3]]) {
    for (o, d) in out.iter_mut().zip(d) {
        for (o, d) in o.iter_mut().zip(d) {
            *o += w * d;
        }
    }
}

/// Scalar sparse: vertex `indices[i]` plus `w` times lane `i % 4` of block
/// `i / 4` (the first three components of `out`'s entries).
fn sparse_scalar<const N: usize>(
    out: &mut [[f32; N]],
    w: f32,
    indices: &[u32],
    deltas: &[SoaVec3],
) {
    for (i, &v) in indices.iter().enumerate() {
        let (Some(o), Some(b)) = (out.get_mut(v as usize), deltas.get(i / LANES)) else {
            continue;
        };
        let d = b.get(i % LANES);
        for (o, d) in o.iter_mut().zip([d.x, d.y, d.z]) {
            *o += w * d;
        }
    }
}

/// Lanes sparse: each block's deltas scaled by `w` four vertices at a
/// time, then scattered to the vertices (first three components).
fn sparse_lanes<const N: usize>(out: &mut [[f32; N]], w: f32, indices: &[u32], deltas: &[SoaVec3]) {
    let wv = f32x4::splat(w);
    for (idx, b) in indices.chunks(LANES).zip(deltas) {
        let (x, y, z) = (
            (b.x * wv).to_array(),
            (b.y * wv).to_array(),
            (b.z * wv).to_array(),
        );
        for (l, &v) in idx.iter().enumerate() {
            let (Some(o), Some(&x), Some(&y), Some(&z)) =
                (out.get_mut(v as usize), x.get(l), y.get(l), z.get(l))
            else {
                continue;
            };
            if let [ox, oy, oz, ..] = o.as_mut_slice() {
                *ox += x;
                *oy += y;
                *oz += z;
            }
        }
    }
}

/// Lanes dense: `out + Σ_j w_j d_j` over the flattened floats, four per
/// lane instruction, every target of the group in one pass (the output is
/// read and written once per group, not once per target).
fn dense_lanes(out: &mut [f32], g: &Group<'_, [f32; 3]>) {
    match g.n {
        1 => dense_lanes_n::<1>(out, g),
        2 => dense_lanes_n::<2>(out, g),
        3 => dense_lanes_n::<3>(out, g),
        4 => dense_lanes_n::<4>(out, g),
        _ => {}
    }
}

fn dense_lanes_n<const N: usize>(out: &mut [f32], g: &Group<'_, [f32; 3]>) {
    let len = out.len();
    let mut w = [f32x4::ZERO; N];
    let mut d: [&[f32]; N] = [&[]; N];
    for ((w, d), (&gw, gd)) in w.iter_mut().zip(&mut d).zip(g.w.iter().zip(&g.d)) {
        *w = f32x4::splat(gw);
        *d = gd.as_flattened();
        // Validated to one delta per vertex; a short one is skipped rather
        // than read past its end.
        if d.len() != len {
            return;
        }
    }
    let (blocks, tail) = out.as_chunks_mut::<4>();
    let split = blocks.len() * 4;
    let mut rows = d.map(|s| s.as_chunks::<4>().0.iter());
    for o in blocks.iter_mut() {
        let mut acc = f32x4::from(*o);
        for (w, row) in w.iter().zip(&mut rows) {
            if let Some(&x) = row.next() {
                acc = f32x4::from(x).madd(*w, acc);
            }
        }
        *o = acc.to_array();
    }
    for (i, o) in tail.iter_mut().enumerate() {
        for (&w, d) in g.w.iter().zip(&d) {
            if let Some(&x) = d.get(split + i) {
                *o = x.madd(w, *o);
            }
        }
    }
}

/// Lanes dense tangents: one vertex per lane instruction, `w` lane added
/// a zero and then not stored, so the handedness stays the base's bits.
fn tangent_lanes(out: &mut [[f32; 4]], g: &Group<'_, [f32; 3]>) {
    let n = g.n.min(GROUP);
    let (w, d) = (&g.w[..n], &g.d[..n]);
    if n == 0 || d.iter().any(|d| d.len() != out.len()) {
        return;
    }
    for (i, o) in out.iter_mut().enumerate() {
        let mut acc = f32x4::from(*o);
        for (&w, d) in w.iter().zip(d) {
            if let Some(&[x, y, z]) = d.get(i) {
                acc = f32x4::new([x, y, z, 0.0]).madd(f32x4::splat(w), acc);
            }
        }
        let [x, y, z, _] = acc.to_array();
        o[0] = x;
        o[1] = y;
        o[2] = z;
    }
}

/// `v` scaled to unit length; a zero or non-finite length leaves it as is.
#[inline]
fn renormalize(v: &mut [f32; 3]) {
    let len2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    if len2 > 0.0 && len2.is_finite() {
        let inv = 1.0 / crate::math::sqrt_f32(len2);
        for c in v.iter_mut() {
            *c *= inv;
        }
    }
}

/// Packs sparse deltas (AoS, one per moved vertex, in the order of the
/// target's indices) into the [`SoaVec3`] blocks [`Deltas::Sparse`] reads:
/// delta `i` into block `i / 4`, lane `i % 4`; padding lanes of the last
/// block are zero.
///
/// # Errors
/// [`Error::BadLength`] (`"sparse delta blocks"`) unless
/// `out.len() == soa_count(deltas.len())`.
pub fn pack_sparse(deltas: &[[f32; 3]], out: &mut [SoaVec3]) -> Result<(), Error> {
    check_len("sparse delta blocks", soa_count(deltas.len()), out.len())?;
    for (b, chunk) in out.iter_mut().zip(deltas.chunks(LANES)) {
        *b = SoaVec3::ZERO;
        for (l, &[x, y, z]) in chunk.iter().enumerate() {
            b.set(l, crate::math::Vec3::new(x, y, z));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;
    use alloc::vec::Vec;
    use proptest::prelude::*;

    extern crate alloc;

    type Mesh<'m> = (&'m [[f32; 3]], &'m [[f32; 3]], &'m [[f32; 4]]);
    type Owned = (Vec<[f32; 3]>, Vec<[f32; 3]>, Vec<[f32; 4]>);

    fn run(
        shapes: &BlendShapes<'_>,
        weights: &[f32],
        options: BlendOptions,
        base: Mesh<'_>,
        scalar: bool,
    ) -> Result<Owned, Error> {
        let n = base.0.len();
        let (mut p, mut nn, mut t) = (vec![[0.0; 3]; n], vec![[0.0; 3]; n], vec![[0.0; 4]; n]);
        let b = SkinVertices {
            positions: base.0,
            normals: Some(base.1),
            tangents: Some(base.2),
        };
        let o = SkinOutput {
            positions: &mut p,
            normals: Some(&mut nn),
            tangents: Some(&mut t),
        };
        if scalar {
            shapes.apply_scalar(weights, options, b, o)?;
        } else {
            shapes.apply(weights, options, b, o)?;
        }
        Ok((p, nn, t))
    }

    fn close(a: &[f32], b: &[f32], tol: f32) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= tol)
    }

    /// Mesh, targets (dense and sparse), weights: every combination the
    /// lane path groups or flushes (runs of dense targets longer than a
    /// group, sparse targets between them, vertex counts off the lane
    /// width).
    /// Vertex count, dense deltas per target, which targets are sparse,
    /// weights.
    type Case = (usize, Vec<Vec<[f32; 3]>>, Vec<bool>, Vec<f32>);

    fn case() -> impl Strategy<Value = Case> {
        (1usize..23, 1usize..11).prop_flat_map(|(n, k)| {
            (
                Just(n),
                prop::collection::vec(
                    prop::collection::vec(prop::array::uniform3(-2.0f32..2.0), n),
                    k,
                ),
                prop::collection::vec(any::<bool>(), k),
                prop::collection::vec(-1.5f32..1.5, k),
            )
        })
    }

    /// Dense deltas made sparse: the vertices whose delta is not zero.
    fn sparsify(d: &[[f32; 3]]) -> (Vec<u32>, Vec<SoaVec3>) {
        let idx: Vec<u32> = (0..d.len() as u32)
            .filter(|&i| d[i as usize] != [0.0; 3])
            .collect();
        let moved: Vec<[f32; 3]> = idx.iter().map(|&i| d[i as usize]).collect();
        let mut blocks = vec![SoaVec3::ZERO; soa_count(moved.len())];
        pack_sparse(&moved, &mut blocks).unwrap();
        (idx, blocks)
    }

    proptest! {
        #[test]
        fn lanes_equal_scalar_and_sparse_equals_dense((n, dense, is_sparse, weights) in case(), zero_every in 2usize..5) {
            // Zero some deltas so the sparse targets are sparse.
            let dense: Vec<Vec<[f32; 3]>> = dense
                .into_iter()
                .map(|d| d.into_iter().enumerate().map(|(i, v)| if i % zero_every == 0 { [0.0; 3] } else { v }).collect())
                .collect();
            let sparse: Vec<(Vec<u32>, Vec<SoaVec3>)> = dense.iter().map(|d| sparsify(d)).collect();
            let deltas = |k: usize| if is_sparse[k] {
                Deltas::Sparse { indices: &sparse[k].0, deltas: &sparse[k].1 }
            } else {
                Deltas::Dense(&dense[k])
            };
            let mixed: Vec<Target<'_>> = (0..dense.len())
                .map(|k| Target { positions: Some(deltas(k)), normals: Some(deltas(k)), tangents: Some(deltas(k)) })
                .collect();
            let all_dense: Vec<Target<'_>> = dense
                .iter()
                .map(|d| Target { positions: Some(Deltas::Dense(d)), normals: Some(Deltas::Dense(d)), tangents: Some(Deltas::Dense(d)) })
                .collect();
            let p: Vec<[f32; 3]> = (0..n).map(|i| [i as f32, 1.0 - i as f32, 0.5]).collect();
            let nr: Vec<[f32; 3]> = (0..n).map(|i| [0.0, 1.0, i as f32 * 0.1]).collect();
            let t: Vec<[f32; 4]> = (0..n).map(|i| [1.0, 0.0, i as f32 * -0.1, if i % 2 == 0 { 1.0 } else { -1.0 }]).collect();
            let base = (&p[..], &nr[..], &t[..]);
            let mixed = BlendShapes::new(n, &mixed).unwrap();
            let all_dense = BlendShapes::new(n, &all_dense).unwrap();
            for renormalize in [false, true] {
                let options = BlendOptions { threshold: 0.1, renormalize };
                let s = run(&mixed, &weights, options, base, true).unwrap();
                let l = run(&mixed, &weights, options, base, false).unwrap();
                let d = run(&all_dense, &weights, options, base, true).unwrap();
                for (a, b) in [(&s, &l), (&s, &d)] {
                    prop_assert!(close(a.0.as_flattened(), b.0.as_flattened(), 1e-5));
                    prop_assert!(close(a.1.as_flattened(), b.1.as_flattened(), 1e-5));
                    prop_assert!(close(a.2.as_flattened(), b.2.as_flattened(), 1e-5));
                }
                // Sparse targets written densely: the scalar twins add the
                // same products in the same order, so they agree exactly.
                prop_assert_eq!(&s.0, &d.0);
                // Handedness is the base's, bit for bit, on both paths.
                for (a, b) in l.2.iter().zip(&t) {
                    prop_assert_eq!(a[3].to_bits(), b[3].to_bits());
                }
            }
        }
    }

    #[test]
    fn pack_sparse_places_lanes_and_zero_pads() {
        let d = [
            [1.0, 2.0, 3.0],
            [4.0, 5.0, 6.0],
            [7.0, 8.0, 9.0],
            [1.5, 2.5, 3.5],
            [-1.0, -2.0, -3.0],
        ];
        let mut blocks = [SoaVec3::splat(crate::math::Vec3::ONE); 2];
        pack_sparse(&d, &mut blocks).unwrap();
        assert_eq!(blocks[1].get(0), crate::math::Vec3::new(-1.0, -2.0, -3.0));
        assert_eq!(blocks[0].get(3), crate::math::Vec3::new(1.5, 2.5, 3.5));
        assert_eq!(blocks[1].get(3), crate::math::Vec3::ZERO);
        assert!(pack_sparse(&d, &mut blocks[..1]).is_err());
    }
}
