//! Owned delta-mush data: the adjacency, triangles and rest deltas of
//! [`sinew_core::shape::mush`] built once from a rest mesh, with the
//! scratch a frame needs, so a caller holds one value per mesh.
//!
//! ```
//! use sinew_core::shape::mush::MushSettings;
//! use sinew_std::mush::MushRig;
//!
//! let rest = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.1]];
//! let triangles = [0, 1, 3, 0, 3, 2];
//! let settings = MushSettings { iterations: 4, step: 1.0 };
//! let mut rig = MushRig::new(&rest, &triangles, settings)?;
//! let mut out = [[0.0; 3]; 4];
//! rig.deform(&rest, &mut out)?; // the rest pose comes back
//! assert!((out[3][2] - 0.1).abs() < 1e-5);
//! # Ok::<(), sinew_core::Error>(())
//! ```

use sinew_core::shape::mush::{
    build_adjacency, neighbour_capacity, rest_deltas, DeltaMush, MushAdjacency, MushSettings,
};
use sinew_core::Error;

/// A mesh's delta-mush data and its per-frame scratch, owned.
#[derive(Clone, Debug)]
pub struct MushRig {
    offsets: Vec<u32>,
    neighbours: Vec<u32>,
    triangles: Vec<u32>,
    deltas: Vec<[f32; 4]>,
    /// Whether each vertex had a frame at rest (its weight was 1).
    framed: Vec<bool>,
    settings: MushSettings,
    scratch: Vec<[f32; 4]>,
}

impl MushRig {
    /// Builds the adjacency of `triangles` (a triangle list over `rest`)
    /// and the rest deltas for `settings`.
    ///
    /// # Errors
    /// Those of [`build_adjacency`] and [`rest_deltas`].
    pub fn new(
        rest: &[[f32; 3]],
        triangles: &[u32],
        settings: MushSettings,
    ) -> Result<MushRig, Error> {
        let n = rest.len();
        let mut offsets = vec![0u32; n + 1];
        let mut neighbours = vec![0u32; neighbour_capacity(triangles.len())];
        let used = build_adjacency(triangles, n, &mut offsets, &mut neighbours)?;
        neighbours.truncate(used);
        neighbours.shrink_to_fit();
        let mut scratch = vec![[0.0f32; 4]; 2 * n];
        let mut deltas = vec![[0.0f32; 4]; n];
        let adj = MushAdjacency::new(&offsets, &neighbours)?;
        rest_deltas(&adj, triangles, settings, rest, &mut scratch, &mut deltas)?;
        let framed = deltas.iter().map(|d| d[3] > 0.0).collect();
        Ok(MushRig {
            framed,
            offsets,
            neighbours,
            triangles: triangles.to_vec(),
            deltas,
            settings,
            scratch,
        })
    }

    /// The core deformer over this rig's data (checked again: O(vertices
    /// + indices)).
    ///
    /// # Errors
    /// None for a rig built by [`new`](Self::new) unless its deltas were
    /// edited out of range ([`set_weights`](Self::set_weights) checks them).
    pub fn mush(&self) -> Result<DeltaMush<'_>, Error> {
        let adj = MushAdjacency::new(&self.offsets, &self.neighbours)?;
        DeltaMush::new(adj, &self.triangles, &self.deltas, self.settings)
    }

    /// Deforms skinned positions into `out` with the rig's own scratch.
    ///
    /// # Errors
    /// Those of [`DeltaMush::deform`] (lengths).
    pub fn deform(&mut self, skinned: &[[f32; 3]], out: &mut [[f32; 3]]) -> Result<(), Error> {
        let adj = MushAdjacency::new(&self.offsets, &self.neighbours)?;
        let mush = DeltaMush::new(adj, &self.triangles, &self.deltas, self.settings)?;
        mush.deform(skinned, &mut self.scratch, out)
    }

    /// Scales each vertex's mush weight (1 where it has a frame at rest,
    /// 0 elsewhere) by a painted strength in `[0, 1]`, one per vertex.
    ///
    /// # Errors
    /// [`Error::BadLength`] (`"mush strength"` not one per vertex),
    /// [`Error::InvalidParameter`] (a strength outside `[0, 1]`). On error
    /// nothing changes.
    pub fn set_weights(&mut self, strength: &[f32]) -> Result<(), Error> {
        if strength.len() != self.deltas.len() {
            return Err(Error::BadLength {
                buffer: "mush strength",
                expected: self.deltas.len(),
                actual: strength.len(),
            });
        }
        if !strength.iter().all(|s| (0.0..=1.0).contains(s)) {
            return Err(Error::InvalidParameter {
                what: "delta mush strength must be in [0, 1]",
            });
        }
        for ((d, &s), &f) in self.deltas.iter_mut().zip(strength).zip(&self.framed) {
            d[3] = if f { s } else { 0.0 };
        }
        Ok(())
    }

    /// Number of vertices.
    #[must_use]
    pub fn vertex_count(&self) -> usize {
        self.deltas.len()
    }

    /// The CSR row offsets (`vertex_count + 1`).
    #[must_use]
    pub fn offsets(&self) -> &[u32] {
        &self.offsets
    }

    /// The neighbour indices, row after row.
    #[must_use]
    pub fn neighbours(&self) -> &[u32] {
        &self.neighbours
    }

    /// The per-vertex deltas `[d_t, d_b, d_n, w]`.
    #[must_use]
    pub fn deltas(&self) -> &[[f32; 4]] {
        &self.deltas
    }
}
