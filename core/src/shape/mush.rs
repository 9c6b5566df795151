//! Delta mush: smooth the skinned mesh, then add back each vertex's detail
//! in the frame of the smoothed surface, which removes the collapse and
//! candy-wrapper artefacts of linear blend skinning around bent joints
//! while keeping the mesh's detail.
//!
//! # Adjacency
//! [`build_adjacency`] turns a triangle list into compressed rows (CSR):
//! vertex `v`'s neighbours are `neighbours[offsets[v]..offsets[v + 1]]`,
//! each vertex it shares a triangle edge with, once, in increasing order
//! (a vertex is never its own neighbour). [`MushAdjacency`] is the checked
//! view of the two arrays, from [`build_adjacency`] or loaded from storage.
//!
//! # Smoothing
//! One iteration moves every vertex towards the mean of its neighbours'
//! positions of the previous iteration (Jacobi, not in place):
//! `p' = p + s (mean(neighbours) − p)` with the step `s` in `(0, 1]`
//! ([`MushSettings`]); `s = 1` is the plain Laplacian average. A vertex
//! without neighbours does not move. The iterations ping-pong between the
//! two halves of a caller scratch buffer.
//!
//! # Frames and deltas
//! After smoothing, each vertex's normal is the sum of the (area-weighted)
//! normals `(b − a) × (c − a)` of the triangles around it, normalised; its
//! tangent is the direction to its first neighbour with the normal's
//! component removed, normalised; the bitangent is `normal × tangent`.
//! [`rest_deltas`] (offline) smooths the rest mesh and stores, per vertex,
//! `rest − smoothed` in that frame (tangent, bitangent, normal components)
//! and a weight `w`: 1, or 0 when the frame is degenerate (no triangles,
//! a zero normal, or a first neighbour along the normal). At run time
//! [`DeltaMush::deform`] smooths the skinned positions with the same
//! settings, rebuilds the frames there and writes
//!
//! ```text
//! x = skinned + w (smoothed + t d_t + b d_b + n d_n − skinned)
//! ```
//!
//! so `w` doubles as a painted per-vertex strength in `[0, 1]`; a vertex
//! whose run-time frame is degenerate keeps its skinned position. The
//! rest pose comes back as the rest mesh, and a rigidly moved mesh as the
//! rigidly moved rest mesh (smoothing, normals and tangents all commute
//! with rotations and translations).
//!
//! # Cost and lanes
//! Per frame: `iterations` passes over the adjacency (one gather and add
//! per neighbour), one over the triangles and one over the vertices;
//! allocation-free. Positions live in the scratch as `[x, y, z, 0]`, so the
//! smoothing gathers and adds a whole position in one `f32x4`;
//! [`reference::deform`] is the scalar twin, written from the formulas
//! with [`Vec3`]. The two agree within 1e-5. NaN in the skinned positions
//! spreads to the neighbours it is averaged into (one ring per iteration)
//! and never panics.

use wide::f32x4;

use crate::error::Error;
use crate::math::Vec3;
use crate::soa::check_len;

pub mod reference;

/// The `neighbours` capacity [`build_adjacency`] needs for a triangle list
/// of `index_count` indices: two entries per index, before duplicates are
/// removed (saturating).
#[inline]
#[must_use]
pub const fn neighbour_capacity(index_count: usize) -> usize {
    index_count.saturating_mul(2)
}

fn corrupt(what: &'static str) -> Error {
    Error::Corrupt { what }
}

/// Checks a triangle list against `vertex_count` vertices.
fn check_triangles(triangles: &[u32], vertex_count: usize) -> Result<(), Error> {
    if !triangles.len().is_multiple_of(3) {
        return Err(corrupt(
            "delta mush: the triangle index count is not a multiple of 3",
        ));
    }
    if !triangles.iter().all(|&i| (i as usize) < vertex_count) {
        return Err(corrupt("delta mush: a triangle index is past the vertices"));
    }
    Ok(())
}

/// Builds the deduplicated mesh adjacency of a triangle list into caller
/// buffers (no allocation): `offsets` of `vertex_count + 1` entries and
/// `neighbours` of at least [`neighbour_capacity`]`(triangles.len())`.
/// Returns the number of neighbour entries used: the adjacency is
/// `offsets` with `neighbours[..count]` (see [`MushAdjacency`]).
/// Degenerate triangles add only their distinct edges. O(indices + Σ d log
/// d) for vertex degrees `d`.
///
/// # Errors
/// [`Error::BadLength`] (`"adjacency offsets"` not `vertex_count + 1`
/// long); [`Error::BufferTooSmall`] (`neighbours` below the capacity);
/// [`Error::Corrupt`] (an index count that is not a multiple of 3, an index
/// past the vertices, more than `u32::MAX` vertices or neighbours). On
/// error the buffers are untouched.
pub fn build_adjacency(
    triangles: &[u32],
    vertex_count: usize,
    offsets: &mut [u32],
    neighbours: &mut [u32],
) -> Result<usize, Error> {
    check_len(
        "adjacency offsets",
        vertex_count.saturating_add(1),
        offsets.len(),
    )?;
    let needed = neighbour_capacity(triangles.len());
    if neighbours.len() < needed {
        return Err(Error::BufferTooSmall {
            needed,
            actual: neighbours.len(),
        });
    }
    if u32::try_from(vertex_count).is_err() || u32::try_from(needed).is_err() {
        return Err(corrupt(
            "delta mush: more than u32::MAX vertices or neighbours",
        ));
    }
    check_triangles(triangles, vertex_count)?;

    // Counts (self-edges of degenerate triangles skipped) into offsets[v + 1].
    offsets.fill(0);
    let edges = |t: &[u32]| {
        let (a, b, c) = (t[0] as usize, t[1] as usize, t[2] as usize);
        [(a, b), (a, c), (b, a), (b, c), (c, a), (c, b)]
    };
    for t in triangles.chunks_exact(3) {
        for (v, w) in edges(t) {
            if v != w {
                offsets[v + 1] += 1;
            }
        }
    }
    for v in 0..vertex_count {
        offsets[v + 1] += offsets[v];
    }
    // Fill, with offsets[v] as v's cursor: afterwards it is v's end.
    for t in triangles.chunks_exact(3) {
        for (v, w) in edges(t) {
            if v != w {
                neighbours[offsets[v] as usize] = w as u32;
                offsets[v] += 1;
            }
        }
    }
    for v in (1..=vertex_count).rev() {
        offsets[v] = offsets[v - 1];
    }
    offsets[0] = 0;
    // Sort and deduplicate each row, compacting the rows to the front.
    let mut write = 0usize;
    let mut start = 0usize;
    for v in 0..vertex_count {
        let end = offsets[v + 1] as usize;
        offsets[v] = write as u32;
        let row = &mut neighbours[start..end];
        row.sort_unstable();
        let mut last = None;
        for r in start..end {
            let x = neighbours[r];
            if last != Some(x) {
                neighbours[write] = x;
                write += 1;
                last = Some(x);
            }
        }
        start = end;
    }
    offsets[vertex_count] = write as u32;
    Ok(write)
}

/// A checked mesh adjacency in compressed rows: vertex `v`'s neighbours are
/// `neighbours[offsets[v]..offsets[v + 1]]`.
#[derive(Clone, Copy, Debug)]
pub struct MushAdjacency<'a> {
    offsets: &'a [u32],
    neighbours: &'a [u32],
}

impl<'a> MushAdjacency<'a> {
    /// Checks the arrays: `offsets` has `vertex_count + 1 >= 1` entries,
    /// starts at 0, never decreases and ends at `neighbours.len()`; every
    /// neighbour is below `vertex_count`. O(vertices + neighbours).
    ///
    /// # Errors
    /// [`Error::Corrupt`] naming what is wrong.
    pub fn new(offsets: &'a [u32], neighbours: &'a [u32]) -> Result<Self, Error> {
        let vertex_count = offsets.len().saturating_sub(1);
        match (offsets.first(), offsets.last()) {
            (Some(0), Some(&last)) if last as usize == neighbours.len() => {}
            _ => {
                return Err(corrupt(
                    "delta mush adjacency: offsets do not run from 0 to the neighbour count",
                ))
            }
        }
        if !offsets.windows(2).all(|w| w[0] <= w[1]) {
            return Err(corrupt("delta mush adjacency: offsets decrease"));
        }
        if !neighbours.iter().all(|&j| (j as usize) < vertex_count) {
            return Err(corrupt(
                "delta mush adjacency: a neighbour index is past the vertices",
            ));
        }
        Ok(MushAdjacency {
            offsets,
            neighbours,
        })
    }

    /// Number of vertices.
    #[inline]
    #[must_use]
    pub fn vertex_count(&self) -> usize {
        self.offsets.len() - 1
    }

    /// The neighbours of vertex `v` (empty past the vertices).
    #[inline]
    #[must_use]
    pub fn neighbours(&self, v: usize) -> &'a [u32] {
        let range = |v: usize| {
            Some((
                *self.offsets.get(v)? as usize,
                *self.offsets.get(v + 1)? as usize,
            ))
        };
        range(v)
            .and_then(|(a, b)| self.neighbours.get(a..b))
            .unwrap_or(&[])
    }

    /// The row offsets (`vertex_count + 1` entries).
    #[inline]
    #[must_use]
    pub fn offsets(&self) -> &'a [u32] {
        self.offsets
    }

    /// All neighbour indices, row after row.
    #[inline]
    #[must_use]
    pub fn indices(&self) -> &'a [u32] {
        self.neighbours
    }
}

/// How a delta mush smooths: the same at rest ([`rest_deltas`]) and at run
/// time ([`DeltaMush`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MushSettings {
    /// Smoothing iterations (each costs one pass over the adjacency).
    pub iterations: u32,
    /// The step `s` towards the neighbours' mean, in `(0, 1]`.
    pub step: f32,
}

impl MushSettings {
    fn check(&self) -> Result<(), Error> {
        if self.step > 0.0 && self.step <= 1.0 {
            Ok(())
        } else {
            Err(Error::InvalidParameter {
                what: "delta mush step must be in (0, 1]",
            })
        }
    }
}

/// One smoothing iteration from `src` into `dst` (both `[x, y, z, 0]`,
/// one per vertex of `adj`), a position per `f32x4`.
fn smooth_once(adj: &MushAdjacency<'_>, step: f32, src: &[[f32; 4]], dst: &mut [[f32; 4]]) {
    let s = f32x4::splat(step);
    let rows = adj.offsets.windows(2);
    for ((d, &p), w) in dst.iter_mut().zip(src).zip(rows) {
        let nb = adj
            .neighbours
            .get(w[0] as usize..w[1] as usize)
            .unwrap_or(&[]);
        if nb.is_empty() {
            *d = p;
            continue;
        }
        let mut sum = f32x4::ZERO;
        for &j in nb {
            sum += f32x4::new(src.get(j as usize).copied().unwrap_or_default());
        }
        let p = f32x4::new(p);
        let mean = sum * f32x4::splat(1.0 / nb.len() as f32);
        *d = (p + s * (mean - p)).to_array();
    }
}

/// Copies `input` into the first half of `scratch` and smooths it; returns
/// the half holding the result and the other (free) half.
fn smooth<'s>(
    adj: &MushAdjacency<'_>,
    settings: MushSettings,
    input: &[[f32; 3]],
    scratch: &'s mut [[f32; 4]],
) -> (&'s [[f32; 4]], &'s mut [[f32; 4]]) {
    let (mut a, mut b) = scratch.split_at_mut(input.len());
    for (d, s) in a.iter_mut().zip(input) {
        *d = [s[0], s[1], s[2], 0.0];
    }
    for _ in 0..settings.iterations {
        smooth_once(adj, settings.step, a, b);
        core::mem::swap(&mut a, &mut b);
    }
    (a, b)
}

fn v3(p: [f32; 4]) -> Vec3 {
    Vec3::new(p[0], p[1], p[2])
}

/// Sums the triangle normals `(b − a) × (c − a)` of positions `p` into
/// each corner's entry of `nrm` (zeroed first).
fn normals(triangles: &[u32], p: &[[f32; 4]], nrm: &mut [[f32; 4]]) {
    nrm.fill([0.0; 4]);
    let at = |i: u32| v3(p.get(i as usize).copied().unwrap_or_default());
    for t in triangles.chunks_exact(3) {
        let (a, b, c) = (at(t[0]), at(t[1]), at(t[2]));
        let f = (b - a).cross(c - a);
        for &i in t {
            if let Some(n) = nrm.get_mut(i as usize) {
                *n = [n[0] + f.x, n[1] + f.y, n[2] + f.z, 0.0];
            }
        }
    }
}

/// The orthonormal frame `[tangent, bitangent, normal]` at a smoothed
/// vertex `p` from its summed normal and its first neighbour, or `None`
/// when degenerate (no neighbour, a zero normal, a neighbour along the
/// normal).
#[inline]
fn frame(p: Vec3, first: Option<Vec3>, normal: Vec3) -> Option<[Vec3; 3]> {
    let n = normal.try_normalize()?;
    let e = first? - p;
    let t = e - n * e.dot(n);
    let len2 = t.length_squared();
    if len2.is_nan() || len2 <= 1e-12 * e.length_squared() {
        return None;
    }
    let t = t * (1.0 / crate::math::sqrt_f32(len2));
    Some([t, n.cross(t), n])
}

/// The frame of vertex `v` of the smoothed positions `p` with summed
/// normals `nrm`.
fn vertex_frame(
    adj: &MushAdjacency<'_>,
    p: &[[f32; 4]],
    nrm: &[[f32; 4]],
    v: usize,
) -> Option<[Vec3; 3]> {
    let first = adj.neighbours(v).first().and_then(|&j| p.get(j as usize));
    frame(v3(*p.get(v)?), first.map(|&q| v3(q)), v3(*nrm.get(v)?))
}

/// Writes each vertex's delta from its smoothed rest position, in the
/// smoothed frame, with its weight (1, or 0 when the rest frame is
/// degenerate): `deltas[v] = [d_t, d_b, d_n, w]`. Offline, but in the core
/// and allocation-free: `scratch` holds `2 * rest.len()` entries.
///
/// # Errors
/// [`Error::BadLength`] (`"rest positions"` not one per adjacency vertex,
/// `"mush scratch"` not twice that, `"mush deltas"` not one per vertex);
/// [`Error::InvalidParameter`] (step outside `(0, 1]`);
/// [`Error::Corrupt`] (triangles: a count that is not a multiple of 3, an
/// index past the vertices); [`Error::NonFinite`] (`"rest position"`). On
/// error `deltas` is untouched.
pub fn rest_deltas(
    adjacency: &MushAdjacency<'_>,
    triangles: &[u32],
    settings: MushSettings,
    rest: &[[f32; 3]],
    scratch: &mut [[f32; 4]],
    deltas: &mut [[f32; 4]],
) -> Result<(), Error> {
    let n = adjacency.vertex_count();
    check_len("rest positions", n, rest.len())?;
    check_len("mush scratch", n.saturating_mul(2), scratch.len())?;
    check_len("mush deltas", n, deltas.len())?;
    settings.check()?;
    check_triangles(triangles, n)?;
    if !rest.iter().flatten().all(|x| x.is_finite()) {
        return Err(Error::NonFinite {
            what: "rest position",
        });
    }
    let (p, nrm) = smooth(adjacency, settings, rest, scratch);
    normals(triangles, p, nrm);
    for (v, (d, r)) in deltas.iter_mut().zip(rest).enumerate() {
        *d = match (vertex_frame(adjacency, p, nrm, v), p.get(v)) {
            (Some([t, b, nn]), Some(&s)) => {
                let e = Vec3::new(r[0], r[1], r[2]) - v3(s);
                [e.dot(t), e.dot(b), e.dot(nn), 1.0]
            }
            _ => [0.0; 4],
        };
    }
    Ok(())
}

/// A delta mush deformer over borrowed, checked data: the adjacency, the
/// triangles, the per-vertex deltas of [`rest_deltas`] and the settings
/// they were made with.
#[derive(Clone, Copy, Debug)]
pub struct DeltaMush<'a> {
    adjacency: MushAdjacency<'a>,
    triangles: &'a [u32],
    deltas: &'a [[f32; 4]],
    settings: MushSettings,
}

impl<'a> DeltaMush<'a> {
    /// Checks the parts (O(vertices + indices)). `settings` must be those
    /// the deltas were made with, or the rest pose will not come back.
    ///
    /// # Errors
    /// [`Error::BadLength`] (`"mush deltas"` not one per adjacency vertex);
    /// [`Error::InvalidParameter`] (step outside `(0, 1]`, a delta weight
    /// outside `[0, 1]`); [`Error::Corrupt`] (the triangles, as in
    /// [`rest_deltas`]); [`Error::NonFinite`] (`"mush delta"`).
    pub fn new(
        adjacency: MushAdjacency<'a>,
        triangles: &'a [u32],
        deltas: &'a [[f32; 4]],
        settings: MushSettings,
    ) -> Result<Self, Error> {
        let n = adjacency.vertex_count();
        check_len("mush deltas", n, deltas.len())?;
        settings.check()?;
        check_triangles(triangles, n)?;
        if !deltas.iter().flatten().all(|x| x.is_finite()) {
            return Err(Error::NonFinite { what: "mush delta" });
        }
        if !deltas.iter().all(|d| (0.0..=1.0).contains(&d[3])) {
            return Err(Error::InvalidParameter {
                what: "delta mush weight must be in [0, 1]",
            });
        }
        Ok(DeltaMush {
            adjacency,
            triangles,
            deltas,
            settings,
        })
    }

    /// Number of vertices.
    #[inline]
    #[must_use]
    pub fn vertex_count(&self) -> usize {
        self.adjacency.vertex_count()
    }

    /// The scratch [`deform`](Self::deform) needs: `2 * vertex_count`.
    #[inline]
    #[must_use]
    pub fn scratch_len(&self) -> usize {
        self.vertex_count().saturating_mul(2)
    }

    /// The adjacency.
    #[inline]
    #[must_use]
    pub fn adjacency(&self) -> &MushAdjacency<'a> {
        &self.adjacency
    }

    /// The triangle list.
    #[inline]
    #[must_use]
    pub fn triangles(&self) -> &'a [u32] {
        self.triangles
    }

    /// The per-vertex deltas `[d_t, d_b, d_n, w]`.
    #[inline]
    #[must_use]
    pub fn deltas(&self) -> &'a [[f32; 4]] {
        self.deltas
    }

    /// The smoothing settings.
    #[inline]
    #[must_use]
    pub fn settings(&self) -> MushSettings {
        self.settings
    }

    /// Deforms skinned positions (one per vertex) into `out`: smooths them
    /// in `scratch` ([`scratch_len`](Self::scratch_len) entries, contents
    /// on return unspecified), rebuilds the frames and adds the deltas back
    /// (see the [module](self)). Allocation-free; every `out` entry is
    /// written.
    ///
    /// # Errors
    /// [`Error::BadLength`] (`"skinned positions"` or `"mushed positions"`
    /// not one per vertex, `"mush scratch"` not twice that). On error
    /// nothing is written.
    pub fn deform(
        &self,
        skinned: &[[f32; 3]],
        scratch: &mut [[f32; 4]],
        out: &mut [[f32; 3]],
    ) -> Result<(), Error> {
        self.check_buffers(skinned, scratch, out)?;
        let adj = &self.adjacency;
        let (p, nrm) = smooth(adj, self.settings, skinned, scratch);
        normals(self.triangles, p, nrm);
        for (v, ((o, s), d)) in out.iter_mut().zip(skinned).zip(self.deltas).enumerate() {
            let s = Vec3::new(s[0], s[1], s[2]);
            let x = match (vertex_frame(adj, p, nrm, v), p.get(v)) {
                (Some([t, b, n]), Some(&m)) if d[3] > 0.0 => {
                    let mushed = v3(m) + t * d[0] + b * d[1] + n * d[2];
                    s + (mushed - s) * d[3]
                }
                _ => s,
            };
            *o = x.to_array();
        }
        Ok(())
    }

    fn check_buffers(
        &self,
        skinned: &[[f32; 3]],
        scratch: &[[f32; 4]],
        out: &[[f32; 3]],
    ) -> Result<(), Error> {
        let n = self.vertex_count();
        check_len("skinned positions", n, skinned.len())?;
        check_len("mush scratch", self.scratch_len(), scratch.len())?;
        check_len("mushed positions", n, out.len())
    }
}

#[cfg(test)]
mod tests;
