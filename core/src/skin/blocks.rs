//! A mesh prepared for LBS in blocks of four vertices: positions, normals
//! and weights already in lanes, and what each block needs of the kernel
//! (the slots it uses, whether its vertices share their joints) worked out
//! once, when the mesh is loaded.
//!
//! [`SkinJob`](super::SkinJob) over separate arrays de-interleaves each
//! block's positions and normals into lanes, finds the slots its vertices
//! use and tests whether they name the same joints, every frame. The rest
//! pose does not change between frames, so [`SkinBlocks`] does that work
//! once; each frame then only blends the palette entries and transforms.
//! Blocks whose vertices share their joints (most of a mesh ordered by
//! [`influence_order`](super::influence_order) and
//! [`group_by_joints`](super::group_by_joints)) broadcast the joints'
//! entries into lanes once per run of blocks that name the same joints.

use super::{CheckedInfluences, Mat3x4, SkinOutput, SkinVertices};
use crate::error::Error;
use crate::soa::check_len;

/// Four vertices of a mesh prepared by [`SkinBlocks::new`]; opaque storage
/// that the caller allocates ([`SkinBlocks::block_count`] of them) and
/// keeps for as long as it skins the mesh.
///
/// 208 bytes: lanes of positions, normals and weights, the four
/// vertices' joints and the block's kind. The lanes past the last vertex
/// of a mesh whose vertex count is not a multiple of four repeat that
/// block's first vertex and are never written out.
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug, PartialEq, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub struct VertexBlock {
    /// `positions[axis][lane]`.
    pub(crate) positions: [[f32; 4]; 3],
    /// `normals[axis][lane]` (zero when the mesh was prepared without).
    pub(crate) normals: [[f32; 4]; 3],
    /// `weights[slot][lane]`.
    pub(crate) weights: [[f32; 4]; 4],
    /// `joints[lane][slot]`.
    pub(crate) joints: [[u16; 4]; 4],
    /// The slots used (1-4) in bits 0-2, and the flags [`SHARED`],
    /// [`UNIT`] and [`REUSE`].
    pub(crate) kind: u32,
    /// Vertices in the block (1-4).
    pub(crate) lanes: u32,
    _pad: [u32; 2],
}

/// The block's vertices name the same joints in the slots it uses.
pub(crate) const SHARED: u32 = 8;
/// A shared block of one slot whose weights are all 1: the joint's entry
/// is the lanes' matrix as it is.
pub(crate) const UNIT: u32 = 16;
/// A shared block whose slots and joints are those of the shared block
/// before it: the kernel, which walks the blocks in order, has their
/// entries broadcast already.
pub(crate) const REUSE: u32 = 32;

/// A mesh prepared for LBS in blocks of four vertices (see the module
/// documentation): four influences per vertex, positions and optionally
/// normals.
///
/// The handle borrows its blocks immutably, so they cannot change under
/// it; its joint indices were checked against
/// [`joint_count`](Self::joint_count) when the influences were.
///
/// ```
/// use sinew_core::skin::{CheckedInfluences, Mat3x4, SkinBlocks, SkinOutput, SkinVertices, VertexBlock};
///
/// let positions = [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]];
/// let joints = [[0, 0, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0]];
/// let weights = [[1.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.5, 0.5, 0.0, 0.0]];
/// let influences = CheckedInfluences::new(&joints, &weights, 2)?;
/// let mut blocks = vec![VertexBlock::default(); SkinBlocks::block_count(positions.len())];
/// let mesh = SkinBlocks::new(&influences, SkinVertices::positions(&positions), &mut blocks)?;
///
/// // Each frame: the palette, then the vertices.
/// let mut palette = [Mat3x4::IDENTITY; 2];
/// palette[1].rows[1][3] = 2.0; // joint 1 moves up by 2
/// let mut skinned = [[0.0; 3]; 3];
/// mesh.lbs(&palette, SkinOutput::positions(&mut skinned))?;
/// assert_eq!(skinned, [[0.0, 1.0, 0.0], [1.0, 2.0, 0.0], [0.0, 1.0, 1.0]]);
/// # Ok::<(), sinew_core::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct SkinBlocks<'a> {
    blocks: &'a [VertexBlock],
    vertices: usize,
    joint_count: usize,
    normals: bool,
}

/// A vertex's influences with its used slots (up to the last weighted
/// one) in increasing joint order, so that vertices blending the same
/// joints name them in the same slots (the order
/// [`group_by_joints`](super::group_by_joints) groups them by). LBS sums
/// the same products in another order: a rounding difference, no more.
pub(crate) fn canonical_slots(joints: &[u16; 4], weights: &[f32; 4]) -> ([u16; 4], [f32; 4]) {
    let used = super::slots_used(weights, None);
    let mut pairs = [0, 1, 2, 3].map(|s| (joints[s], weights[s]));
    // A stable insertion sort of at most four pairs (no allocation).
    for i in 1..used {
        let mut k = i;
        while k > 0 && pairs[k - 1].0 > pairs[k].0 {
            pairs.swap(k - 1, k);
            k -= 1;
        }
    }
    (pairs.map(|p| p.0), pairs.map(|p| p.1))
}

/// The slots a block's weights (`weights[slot][lane]`) use over its four
/// lanes (1-4; a block whose weights are all zero uses one), as the array
/// kernels count them.
fn block_slots(weights: &[[f32; 4]; 4]) -> u32 {
    let any = |s: usize| weights[s].iter().any(|&w| w != 0.0);
    (1..4).rev().find(|&s| any(s)).map_or(1, |s| s as u32 + 1)
}

impl<'a> SkinBlocks<'a> {
    /// Blocks needed for `vertices` vertices: `ceil(vertices / 4)`.
    #[inline]
    #[must_use]
    pub const fn block_count(vertices: usize) -> usize {
        vertices.div_ceil(4)
    }

    /// Prepares a mesh: `vertices` (positions, optionally normals; one per
    /// influence) and its four-influence `influences`, into `blocks`
    /// ([`block_count`](Self::block_count) of the vertex count). Order the
    /// mesh first (`Mesh::sort_by_influence_count` in sinew-std, or
    /// [`influence_order`](super::influence_order) and
    /// [`group_by_joints`](super::group_by_joints)): blocks of the same
    /// slot count and joints are what makes the prepared layout fast. The
    /// skinned output is in the prepared (the input's) vertex order.
    ///
    /// # Errors
    /// [`Error::InvalidLayout`] for eight influences per vertex or for
    /// tangents (the prepared layout holds four influences, positions and
    /// normals); [`Error::BadLength`] when the positions or normals do not
    /// hold one entry per influence or `blocks` is not
    /// [`block_count`](Self::block_count) long. Nothing is written then.
    pub fn new(
        influences: &CheckedInfluences<'_>,
        vertices: SkinVertices<'_>,
        blocks: &'a mut [VertexBlock],
    ) -> Result<Self, Error> {
        if influences.is_eight() {
            return Err(Error::InvalidLayout {
                what: "prepared blocks hold four influences per vertex",
            });
        }
        if vertices.tangents.is_some() {
            return Err(Error::InvalidLayout {
                what: "prepared blocks hold positions and normals, not tangents",
            });
        }
        let n = influences.len();
        check_len("positions", n, vertices.positions.len())?;
        if let Some(normals) = vertices.normals {
            check_len("normals", n, normals.len())?;
        }
        check_len("blocks", Self::block_count(n), blocks.len())?;
        let mut previous = None;
        for (b, block) in blocks.iter_mut().enumerate() {
            let first = 4 * b;
            let lanes = (n - first).min(4);
            // Lanes past the mesh repeat its first vertex: they then share
            // its joints and weights and change neither the slot count nor
            // the kind.
            let v = |lane: usize| first + if lane < lanes { lane } else { 0 };
            let mut out = VertexBlock {
                lanes: lanes as u32,
                ..VertexBlock::default()
            };
            for lane in 0..4 {
                let p = vertices.positions[v(lane)];
                let nrm = vertices.normals.map_or([0.0; 3], |ns| ns[v(lane)]);
                let (j, w) =
                    canonical_slots(&influences.joints[v(lane)], &influences.weights[v(lane)]);
                for axis in 0..3 {
                    out.positions[axis][lane] = p[axis];
                    out.normals[axis][lane] = nrm[axis];
                }
                for (slot, &ws) in w.iter().enumerate() {
                    out.weights[slot][lane] = ws;
                }
                out.joints[lane] = j;
            }
            let slots = block_slots(&out.weights);
            let used = slots as usize;
            let joints = &out.joints[0][..used];
            let shared = out.joints.iter().all(|j| &j[..used] == joints);
            let unit = shared && slots == 1 && out.weights[0].iter().all(|&w| w == 1.0);
            // A shared block after one of the same slots and joints finds
            // their entries already broadcast: blocks that do not share
            // their joints in between leave the broadcast entries as they
            // are.
            let this = shared.then(|| {
                let mut joints = out.joints[0];
                joints[used..].fill(0);
                (slots, joints)
            });
            let reuse = this.is_some() && this == previous;
            out.kind = slots
                | if shared { SHARED } else { 0 }
                | if unit { UNIT } else { 0 }
                | if reuse { REUSE } else { 0 };
            if this.is_some() {
                previous = this;
            }
            *block = out;
        }
        Ok(SkinBlocks {
            blocks,
            vertices: n,
            joint_count: influences.joint_count(),
            normals: vertices.normals.is_some(),
        })
    }

    /// Views blocks that [`new`](Self::new) prepared earlier (kept in a
    /// file, handed over from C: [`VertexBlock`] is plain data) as a mesh
    /// of `vertices` vertices whose influences index a palette of
    /// `joint_count` entries, prepared with normals when `normals`. Every
    /// block is checked (O(blocks)): its joints below `joint_count`, its
    /// slot count 1-4, and its vertex count (4, and the rest in the last
    /// block). Blocks altered in other ways skin to other numbers, never to
    /// a read out of bounds.
    ///
    /// # Errors
    /// [`Error::BadLength`] when `blocks` is not
    /// [`block_count`](Self::block_count) long;
    /// [`Error::InfluenceOutOfRange`] for a joint past `joint_count` (the
    /// vertex is the lane's); [`Error::Corrupt`] for a slot or vertex count
    /// that [`new`](Self::new) does not write.
    pub fn from_prepared(
        blocks: &'a [VertexBlock],
        vertices: usize,
        joint_count: usize,
        normals: bool,
    ) -> Result<Self, Error> {
        check_len("blocks", Self::block_count(vertices), blocks.len())?;
        for (b, block) in blocks.iter().enumerate() {
            let lanes = (vertices - 4 * b).min(4);
            if block.lanes as usize != lanes || !(1..=4).contains(&(block.kind & 7)) {
                return Err(Error::Corrupt {
                    what: "a prepared block's vertex or slot count",
                });
            }
            for (lane, joints) in block.joints.iter().enumerate() {
                if let Some(&j) = joints.iter().find(|&&j| usize::from(j) >= joint_count) {
                    return Err(Error::InfluenceOutOfRange {
                        vertex: 4 * b + lane.min(lanes - 1),
                        joint: usize::from(j),
                        count: joint_count,
                    });
                }
            }
        }
        Ok(SkinBlocks {
            blocks,
            vertices,
            joint_count,
            normals,
        })
    }

    /// The prepared blocks (to store them, for
    /// [`from_prepared`](Self::from_prepared)).
    #[inline]
    #[must_use]
    pub fn blocks(&self) -> &'a [VertexBlock] {
        self.blocks
    }

    /// Vertices in the mesh.
    #[inline]
    #[must_use]
    pub fn len(&self) -> usize {
        self.vertices
    }

    /// Whether the mesh has no vertices.
    #[inline]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.vertices == 0
    }

    /// The palette length the influences were checked against.
    #[inline]
    #[must_use]
    pub fn joint_count(&self) -> usize {
        self.joint_count
    }

    /// Whether the mesh was prepared with normals.
    #[inline]
    #[must_use]
    pub fn has_normals(&self) -> bool {
        self.normals
    }

    /// Skins every vertex with linear blend skinning over `palette`
    /// ([`lbs_palette`](super::lbs_palette)'s output): positions, and
    /// normals when `output` asks for them. The results are those of a
    /// [`SkinJob`](super::SkinJob) with [`SkinMethod::Lbs`](super::SkinMethod::Lbs)
    /// through the portable kernels on the same vertices with each vertex's
    /// used slots in joint order, bit for bit, on every CPU of a target; a
    /// vertex whose slots the mesh lists in another order gets the same
    /// products summed in joint order (a difference of rounding; the tests
    /// hold it within 1e-5 of the scalar reference).
    ///
    /// # Errors
    /// [`Error::BadLength`] when `palette` does not hold
    /// [`joint_count`](Self::joint_count) entries or an output array does
    /// not hold one entry per vertex; [`Error::InvalidLayout`] when the
    /// output asks for tangents, or for normals of a mesh prepared without
    /// them. Nothing is written then.
    #[allow(unsafe_code)] // the kernel's unchecked palette lookups
    pub fn lbs(&self, palette: &[Mat3x4], output: SkinOutput<'_>) -> Result<(), Error> {
        check_len("palette", self.joint_count, palette.len())?;
        check_len("positions", self.vertices, output.positions.len())?;
        if output.tangents.is_some() {
            return Err(Error::InvalidLayout {
                what: "prepared blocks hold positions and normals, not tangents",
            });
        }
        match output.normals {
            Some(normals) => {
                if !self.normals {
                    return Err(Error::InvalidLayout {
                        what: "normals asked of blocks prepared without them",
                    });
                }
                check_len("normals", self.vertices, normals.len())?;
                // SAFETY: the blocks' joints are below `joint_count` (checked
                // influences, blocks borrowed since), `palette.len()` above.
                unsafe {
                    super::kernel::lbs_blocks::<true>(
                        palette,
                        self.blocks,
                        output.positions,
                        normals,
                    );
                }
            }
            None => {
                // SAFETY: as above.
                unsafe {
                    super::kernel::lbs_blocks::<false>(
                        palette,
                        self.blocks,
                        output.positions,
                        &mut [],
                    );
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const JOINTS: [[u16; 4]; 5] = [
        [0, 0, 0, 0],
        [1, 0, 0, 0],
        [2, 1, 0, 0],
        [1, 2, 0, 0],
        [0; 4],
    ];
    const WEIGHTS: [[f32; 4]; 5] = [
        [1.0, 0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0, 0.0],
        [0.25, 0.75, 0.0, 0.0],
        [0.5, 0.5, 0.0, 0.0],
        [1.0, 0.0, 0.0, 0.0],
    ];
    const POSITIONS: [[f32; 3]; 5] = [[1.0, 2.0, 3.0]; 5];

    fn palette() -> [Mat3x4; 3] {
        let mut p = [Mat3x4::IDENTITY; 3];
        p[1].rows[0][3] = 1.0;
        p[2].rows[1][3] = 4.0;
        p
    }

    #[test]
    fn blocks_hold_slots_in_joint_order_and_the_kind() {
        let infl = CheckedInfluences::new(&JOINTS, &WEIGHTS, 3).unwrap();
        let mut buf = [VertexBlock::default(); 2];
        SkinBlocks::new(&infl, SkinVertices::positions(&POSITIONS), &mut buf).unwrap();
        // Vertex 2 names joints 2 and 1: its slots are swapped, so that
        // vertices 2 and 3 name the same joints in the same slots.
        assert_eq!(buf[0].joints[2], [1, 2, 0, 0]);
        assert_eq!(buf[0].weights[0][2], 0.75);
        assert_eq!(buf[0].kind, 2);
        // The tail block: one vertex, its lanes repeat it (shared, unit).
        assert_eq!(buf[1].lanes, 1);
        assert_eq!(buf[1].kind, 1 | SHARED | UNIT);
        assert_eq!(buf[1].positions[2], [3.0; 4]);
    }

    #[test]
    fn skins_every_vertex_and_the_tail() {
        let infl = CheckedInfluences::new(&JOINTS, &WEIGHTS, 3).unwrap();
        let mut buf = [VertexBlock::default(); 2];
        let normals = [[0.0, 0.0, 1.0]; 5];
        let vertices = SkinVertices {
            positions: &POSITIONS,
            normals: Some(&normals),
            tangents: None,
        };
        let mesh = SkinBlocks::new(&infl, vertices, &mut buf).unwrap();
        assert_eq!(
            (mesh.len(), mesh.joint_count(), mesh.has_normals()),
            (5, 3, true)
        );
        let (mut p, mut n) = ([[f32::NAN; 3]; 5], [[f32::NAN; 3]; 5]);
        let out = SkinOutput {
            positions: &mut p,
            normals: Some(&mut n),
            tangents: None,
        };
        mesh.lbs(&palette(), out).unwrap();
        assert_eq!(
            p,
            [
                [1.0, 2.0, 3.0],
                [2.0, 2.0, 3.0],
                [1.75, 3.0, 3.0],
                [1.5, 4.0, 3.0],
                [1.0, 2.0, 3.0]
            ]
        );
        assert_eq!(n, [[0.0, 0.0, 1.0]; 5]);
    }

    #[test]
    fn a_shared_block_reuses_entries_across_an_unshared_one() {
        // Blocks 0 and 2 name joints 0 and 1; block 1 names others per
        // vertex. Block 2 keeps the entries block 0 broadcast.
        let joints: [[u16; 4]; 12] = core::array::from_fn(|v| match v / 4 {
            1 => [v as u16 % 3, 2, 0, 0],
            _ => [0, 1, 0, 0],
        });
        let weights: [[f32; 4]; 12] = core::array::from_fn(|v| {
            let w = 0.125 * (v % 4) as f32 + 0.25;
            [w, 1.0 - w, 0.0, 0.0]
        });
        let positions: [[f32; 3]; 12] =
            core::array::from_fn(|v| [v as f32 * 0.5, 1.0 - v as f32, 2.0 + 0.25 * v as f32]);
        let infl = CheckedInfluences::new(&joints, &weights, 3).unwrap();
        let mut buf = [VertexBlock::default(); 3];
        let mesh = SkinBlocks::new(&infl, SkinVertices::positions(&positions), &mut buf).unwrap();
        assert_eq!(mesh.blocks()[1].kind & SHARED, 0);
        assert_eq!(mesh.blocks()[2].kind, 2 | SHARED | REUSE);
        let mut palette = [Mat3x4::IDENTITY; 3];
        for (j, m) in palette.iter_mut().enumerate() {
            for (r, row) in m.rows.iter_mut().enumerate() {
                for (c, e) in row.iter_mut().enumerate() {
                    *e += 0.1 * (j + 1) as f32 * (r as f32 - c as f32 + 0.5);
                }
            }
        }
        let mut skinned = [[f32::NAN; 3]; 12];
        mesh.lbs(&palette, SkinOutput::positions(&mut skinned))
            .unwrap();
        for (v, out) in skinned.iter().enumerate() {
            let m = super::super::reference::lbs_matrix(&palette, joints[v], weights[v]);
            let [x, y, z] = positions[v];
            let want = m.transform_point(crate::math::Vec3::new(x, y, z));
            for (r, want) in [want.x, want.y, want.z].into_iter().enumerate() {
                assert!(
                    (out[r] - want).abs() <= 1e-5 * want.abs().max(1.0),
                    "vertex {v}"
                );
            }
        }
    }

    #[test]
    fn bad_input_is_a_precise_error_and_writes_nothing() {
        let infl = CheckedInfluences::new(&JOINTS, &WEIGHTS, 3).unwrap();
        let positions = SkinVertices::positions(&POSITIONS);
        let layout = |what| Err(Error::InvalidLayout { what });
        let len = |buffer, expected, actual| {
            Err(Error::BadLength {
                buffer,
                expected,
                actual,
            })
        };
        let mut buf = [VertexBlock::default(); 3];
        assert_eq!(
            SkinBlocks::new(&infl, positions, &mut buf[..1]).map(|_| ()),
            len("blocks", 2, 1)
        );
        assert_eq!(
            SkinBlocks::new(&infl, positions, &mut buf).map(|_| ()),
            len("blocks", 2, 3)
        );
        let short = SkinVertices::positions(&POSITIONS[..4]);
        assert_eq!(
            SkinBlocks::new(&infl, short, &mut buf[..2]).map(|_| ()),
            len("positions", 5, 4)
        );
        let normals = [[0.0; 3]; 6];
        let long = SkinVertices {
            normals: Some(&normals),
            ..positions
        };
        assert_eq!(
            SkinBlocks::new(&infl, long, &mut buf[..2]).map(|_| ()),
            len("normals", 5, 6)
        );
        let tangents = [[0.0; 4]; 5];
        let with_tangents = SkinVertices {
            tangents: Some(&tangents),
            ..positions
        };
        assert_eq!(
            SkinBlocks::new(&infl, with_tangents, &mut buf[..2]).map(|_| ()),
            layout("prepared blocks hold positions and normals, not tangents")
        );
        let eight =
            CheckedInfluences::new8(&JOINTS, &WEIGHTS, &[[0; 4]; 5], &[[0.0; 4]; 5], 3).unwrap();
        assert_eq!(
            SkinBlocks::new(&eight, positions, &mut buf[..2]).map(|_| ()),
            layout("prepared blocks hold four influences per vertex")
        );
        assert_eq!(buf, [VertexBlock::default(); 3], "nothing written");

        let mesh = SkinBlocks::new(&infl, positions, &mut buf[..2]).unwrap();
        let mut p = [[f32::NAN; 3]; 5];
        let mut n = [[f32::NAN; 3]; 5];
        let mut t = [[f32::NAN; 4]; 5];
        let untouched = |p: &[[f32; 3]]| p.iter().flatten().all(|x| x.is_nan());
        assert_eq!(
            mesh.lbs(&palette()[..2], SkinOutput::positions(&mut p)),
            len("palette", 3, 2)
        );
        assert_eq!(
            mesh.lbs(&palette(), SkinOutput::positions(&mut p[..4])),
            len("positions", 5, 4)
        );
        let out = SkinOutput {
            positions: &mut p,
            normals: Some(&mut n),
            tangents: None,
        };
        assert_eq!(
            mesh.lbs(&palette(), out),
            layout("normals asked of blocks prepared without them")
        );
        let out = SkinOutput {
            positions: &mut p,
            normals: None,
            tangents: Some(&mut t),
        };
        assert_eq!(
            mesh.lbs(&palette(), out),
            layout("prepared blocks hold positions and normals, not tangents")
        );
        assert!(untouched(&p) && untouched(&n));
        // Blocks handed back: checked, then skinned as before.
        let again = SkinBlocks::from_prepared(mesh.blocks(), 5, 3, false).unwrap();
        let mut q = [[0.0; 3]; 5];
        again
            .lbs(&palette(), SkinOutput::positions(&mut q))
            .unwrap();
        mesh.lbs(&palette(), SkinOutput::positions(&mut p)).unwrap();
        assert_eq!(p, q);
        let from = |b: &[VertexBlock], n, joints| {
            SkinBlocks::from_prepared(b, n, joints, false).map(|_| ())
        };
        assert_eq!(
            from(&buf[..2], 5, 2),
            Err(Error::InfluenceOutOfRange {
                vertex: 2,
                joint: 2,
                count: 2
            })
        );
        assert_eq!(from(&buf[..2], 9, 3), len("blocks", 3, 2));
        assert_eq!(
            from(&buf[..2], 6, 3),
            Err(Error::Corrupt {
                what: "a prepared block's vertex or slot count"
            })
        );
        let mut bad = [buf[0], buf[1]];
        bad[1].kind = 5;
        assert_eq!(
            from(&bad, 5, 3),
            Err(Error::Corrupt {
                what: "a prepared block's vertex or slot count"
            })
        );
        bad[1].kind = 1;
        bad[1].joints[3][2] = 7;
        // A padding lane names its block's last vertex.
        assert_eq!(
            from(&bad, 5, 3),
            Err(Error::InfluenceOutOfRange {
                vertex: 4,
                joint: 7,
                count: 3
            })
        );

        let empty = CheckedInfluences::new(&[], &[], 3).unwrap();
        let mesh = SkinBlocks::new(&empty, SkinVertices::positions(&[]), &mut []).unwrap();
        assert!(mesh.is_empty());
        mesh.lbs(&palette(), SkinOutput::positions(&mut []))
            .unwrap();
    }
}
