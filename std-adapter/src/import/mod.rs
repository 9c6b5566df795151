//! Importers: glTF 2.0 / GLB, BVH motion capture and ozz-animation archives.
//!
//! Besides assets, [`curves`] keeps glTF animation channels as keyframe
//! curves (no resampling), and [`ozz::load_tracks`] reads ozz float and
//! quaternion tracks as such curves.
//!
//! Every importer produces an [`Asset`]: a sinew skeleton (joints in
//! depth-first pre-order, with a map from the file's joint order), raw uniform
//! clips in skeleton order, skinned meshes, and warnings. Every failure is an
//! [`ImportError`] that names the file, the position (line, byte offset or
//! glTF JSON path) and what is wrong; importers never panic on bad input.
//!
//! Each import has a memory budget ([`DEFAULT_MEMORY_BUDGET`] unless the
//! options say otherwise): what it would allocate from sizes read in the
//! file is counted before allocating, across all clips, float tracks and
//! meshes, and an import that would exceed it fails with an error naming
//! what did not fit. Allocation failures are errors too, never aborts.

use std::fmt;
use std::path::{Path, PathBuf};

use sinew_core::skin::CheckedInfluences;
use sinew_core::{Error, Mat4};

use crate::assets::{AlignedBytes, OwnedClip, OwnedSkeleton};

mod budget;
pub mod bvh;
pub mod curves;
pub mod gltf;
pub mod load;
pub mod ozz;

pub use budget::DEFAULT_MEMORY_BUDGET;
pub(crate) use budget::{bytes_of, fmt_count, fmt_keys, Budget};

/// Where in a file an import error was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    /// The whole file (e.g. it could not be read).
    File,
    /// A 1-based line (text formats).
    Line(usize),
    /// A byte offset (binary formats).
    Byte(u64),
    /// A JSON path into a glTF document, e.g. `/animations/0/channels/3/sampler`.
    JsonPath(String),
}

/// A failed import: which file, where, and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportError {
    /// The file being imported.
    pub file: PathBuf,
    /// Where in the file.
    pub location: Location,
    /// What is wrong, as one sentence without a trailing period.
    pub message: String,
}

impl ImportError {
    /// An error at `location` of `file`.
    pub fn new(file: impl Into<PathBuf>, location: Location, message: impl Into<String>) -> Self {
        ImportError {
            file: file.into(),
            location,
            message: message.into(),
        }
    }
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = self.file.display();
        match &self.location {
            Location::File => write!(f, "{file}: {}", self.message),
            Location::Line(l) => write!(f, "{file}:{l}: {}", self.message),
            Location::Byte(b) => write!(f, "{file} at byte {b}: {}", self.message),
            Location::JsonPath(p) => write!(f, "{file} at {p}: {}", self.message),
        }
    }
}

impl std::error::Error for ImportError {}

impl From<crate::assets::Humanoid> for Asset {
    fn from(h: crate::assets::Humanoid) -> Asset {
        let n = h.skeleton.joint_count();
        Asset {
            source: PathBuf::from("procedural humanoid"),
            skeleton: h.skeleton,
            joint_map: (0..n as u16).collect(),
            clips: h.clips.to_vec(),
            meshes: Vec::new(),
            warnings: Vec::new(),
            units: "metres",
        }
    }
}

/// A skinned mesh, its vertex data already mapped to the asset's skeleton.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Mesh {
    /// Mesh (or node) name.
    pub name: String,
    /// Bind-space positions.
    pub positions: Vec<[f32; 3]>,
    /// Bind-space normals; empty when the file has none.
    pub normals: Vec<[f32; 3]>,
    /// Bind-space tangents (xyz + handedness w); empty when the file has none.
    pub tangents: Vec<[f32; 4]>,
    /// Influencing joints 0-3 of each vertex, as indices into the asset's
    /// skeleton, largest weight first.
    pub joints: Vec<[u16; 4]>,
    /// Weights of those joints (unused slots 0). Each vertex's weights sum
    /// to 1 together with [`Mesh::weights1`].
    pub weights: Vec<[f32; 4]>,
    /// Influencing joints 4-7 of each vertex: empty unless the mesh was
    /// imported with eight influences and a vertex has more than four.
    pub joints1: Vec<[u16; 4]>,
    /// Weights of joints 4-7 (empty, or one entry per vertex).
    pub weights1: Vec<[f32; 4]>,
    /// Triangle list indices into the vertex arrays.
    pub indices: Vec<u32>,
    /// Inverse bind matrix per skeleton joint, from the file's skin (joints the
    /// skin does not list keep the skeleton's own).
    pub inverse_bind: Vec<Mat4>,
    /// Label of the glTF node the mesh was imported from: its name, or its
    /// index when it has none; empty for other importers. Morph-weight
    /// tracks are named after it: see [`Mesh::morph_track_name`].
    pub node_label: String,
    /// Morph targets (blend shapes), in the file's target order: their
    /// deltas are in bind space, like [`Mesh::positions`], one per vertex in
    /// the same vertex order. Empty when the mesh has none.
    pub morph_targets: Vec<MorphTarget>,
    /// Default weight of each morph target (the glTF mesh's `weights`, zeros
    /// when the file gives none); empty exactly when
    /// [`Mesh::morph_targets`] is.
    pub morph_weights: Vec<f32>,
}

/// One morph target of a [`Mesh`]: per-vertex displacements in bind space,
/// added as `x = x0 + Σ w_k Δx_k`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MorphTarget {
    /// Target name (from the glTF mesh's `extras.targetNames`); empty when
    /// the file names none.
    pub name: String,
    /// Position delta of every vertex (bind-space units, metres for glTF);
    /// empty when the target moves no positions.
    pub positions: Vec<[f32; 3]>,
    /// Normal delta of every vertex; empty when the target has none.
    pub normals: Vec<[f32; 3]>,
    /// Tangent delta (xyz; the handedness does not morph) of every vertex;
    /// empty when the target has none.
    pub tangents: Vec<[f32; 3]>,
}

impl MorphTarget {
    /// Indices of the vertices this target moves: those with a non-zero
    /// position, normal or tangent delta, increasing. What a sparse blend
    /// shape stores; a dense one stores every vertex.
    #[must_use]
    pub fn moved_vertices(&self) -> Vec<u32> {
        let n = self
            .positions
            .len()
            .max(self.normals.len())
            .max(self.tangents.len());
        let moves =
            |a: &[[f32; 3]], v: usize| a.get(v).is_some_and(|d| d.iter().any(|&x| x != 0.0));
        (0..n)
            .filter(|&v| {
                moves(&self.positions, v) || moves(&self.normals, v) || moves(&self.tangents, v)
            })
            .map(|v| v as u32)
            .collect()
    }
}

impl Mesh {
    /// The mesh's influences checked for a palette of `joint_count`
    /// entries: four per vertex, or eight when [`Mesh::joints1`] is filled.
    ///
    /// # Errors
    /// Those of [`CheckedInfluences::new`] / [`CheckedInfluences::new8`].
    pub fn influences(&self, joint_count: usize) -> Result<CheckedInfluences<'_>, Error> {
        if self.joints1.is_empty() && self.weights1.is_empty() {
            CheckedInfluences::new(&self.joints, &self.weights, joint_count)
        } else {
            CheckedInfluences::new8(
                &self.joints,
                &self.weights,
                &self.joints1,
                &self.weights1,
                joint_count,
            )
        }
    }

    /// Reorders the vertices by the number of influence slots they use,
    /// fewest first, and within a count by the joints they name: the split
    /// layout of [`sinew_core::skin::influence_order`] grouped by
    /// [`sinew_core::skin::group_by_joints`], under which the skinning
    /// kernels blend fewer slots per block of vertices and skin blocks of
    /// vertices with the same joints without a per-vertex blend. Every
    /// per-vertex array moves (positions, normals, tangents, both influence
    /// sets, each morph target's deltas) and the triangle indices follow,
    /// so the mesh renders and skins as before. Returns the order: new vertex `i` was
    /// vertex `order[i]`, for the caller's own attributes (UVs, colours).
    ///
    /// # Errors
    /// [`Error::BadLength`] when an attribute (or a morph target's deltas)
    /// is neither empty nor one entry per vertex, and [`Error::Corrupt`]
    /// for a triangle index past the vertices. The mesh is unchanged then.
    pub fn sort_by_influence_count(&mut self) -> Result<Vec<u32>, Error> {
        let n = self.weights.len();
        let check_len = sinew_core::soa::check_len;
        let optional = |name: &'static str, len: usize| {
            if len == 0 {
                Ok(())
            } else {
                check_len(name, n, len)
            }
        };
        check_len("positions", n, self.positions.len())?;
        check_len("joints", n, self.joints.len())?;
        optional("normals", self.normals.len())?;
        optional("tangents", self.tangents.len())?;
        optional("joints1", self.joints1.len())?;
        optional("weights1", self.weights1.len())?;
        for t in &self.morph_targets {
            optional("morph target positions", t.positions.len())?;
            optional("morph target normals", t.normals.len())?;
            optional("morph target tangents", t.tangents.len())?;
        }
        if self.indices.iter().any(|&i| i as usize >= n) {
            return Err(Error::Corrupt {
                what: "a triangle index is past the vertices",
            });
        }
        let mut order = vec![0u32; n];
        let counts = sinew_core::skin::influence_order(&self.weights, &self.weights1, &mut order)?;
        sinew_core::skin::group_by_joints(&self.joints, &self.joints1, &mut order, &counts)?;
        fn permute<T: Copy>(a: &mut Vec<T>, order: &[u32]) {
            if !a.is_empty() {
                *a = order.iter().map(|&v| a[v as usize]).collect();
            }
        }
        permute(&mut self.positions, &order);
        permute(&mut self.normals, &order);
        permute(&mut self.tangents, &order);
        permute(&mut self.joints, &order);
        permute(&mut self.weights, &order);
        permute(&mut self.joints1, &order);
        permute(&mut self.weights1, &order);
        for t in &mut self.morph_targets {
            permute(&mut t.positions, &order);
            permute(&mut t.normals, &order);
            permute(&mut t.tangents, &order);
        }
        let mut new_index = vec![0u32; n];
        for (new, &old) in order.iter().enumerate() {
            new_index[old as usize] = new as u32;
        }
        for i in &mut self.indices {
            *i = new_index[*i as usize];
        }
        Ok(order)
    }

    /// The mesh as a `SINEWMSH` container ([`sinew_core::mesh`]): what a
    /// C program or firmware loads with `SkinnedMesh::from_bytes` to skin
    /// it without an importer. Triangle indices, normals, tangents and the
    /// second influence set are kept when the mesh has them.
    ///
    /// # Errors
    /// Those of [`sinew_core::mesh::build`] (non-finite data, influences
    /// that do not check against the inverse binds' joint count, an index
    /// past the vertices).
    pub fn to_container(&self) -> Result<AlignedBytes, Error> {
        let parts = sinew_core::mesh::MeshParts {
            positions: &self.positions,
            normals: &self.normals,
            tangents: &self.tangents,
            joints: &self.joints,
            weights: &self.weights,
            joints1: &self.joints1,
            weights1: &self.weights1,
            indices: &self.indices,
            inverse_binds: &self.inverse_bind,
        };
        let mut bytes = AlignedBytes::zeroed(sinew_core::mesh::required_size(&parts)?);
        sinew_core::mesh::build(&parts, bytes.as_mut_slice())?;
        Ok(bytes)
    }

    /// Name of the float track that animates morph target `target` of this
    /// mesh: `morph/<node label>/<target>`, as the glTF importer names the
    /// tracks of a node's `weights` channel ([`crate::OwnedClip::float_tracks`]).
    #[must_use]
    pub fn morph_track_name(&self, target: usize) -> String {
        format!("morph/{}/{target}", self.node_label)
    }

    /// For each morph target, the index in `clip`'s float tracks of the
    /// track that animates its weight, or `None` when the clip does not
    /// animate it (the target then keeps its [`Mesh::morph_weights`] default).
    #[must_use]
    pub fn morph_tracks(&self, clip: &OwnedClip) -> Vec<Option<usize>> {
        let tracks = clip.float_tracks();
        (0..self.morph_targets.len())
            .map(|k| {
                let name = self.morph_track_name(k);
                tracks.iter().position(|t| t.name == name)
            })
            .collect()
    }

    /// Most influences with a non-zero weight on one vertex.
    #[must_use]
    pub fn max_influences(&self) -> usize {
        let used = |w: &[f32; 4]| w.iter().filter(|&&x| x > 0.0).count();
        let second = |v: usize| self.weights1.get(v).map_or(0, used);
        (0..self.weights.len())
            .map(|v| used(&self.weights[v]) + second(v))
            .max()
            .unwrap_or(0)
    }
}

/// Everything imported from one source (one file, or an ozz skeleton with its animations).
#[derive(Clone)]
pub struct Asset {
    /// The file(s) it came from.
    pub source: PathBuf,
    /// The skeleton, joints in depth-first pre-order.
    pub skeleton: OwnedSkeleton,
    /// For each joint in the file's own order, its index in `skeleton`.
    pub joint_map: Vec<u16>,
    /// Clips, in skeleton joint order.
    pub clips: Vec<OwnedClip>,
    /// Skinned meshes.
    pub meshes: Vec<Mesh>,
    /// Things the importer changed or dropped, one sentence each.
    pub warnings: Vec<String>,
    /// Length unit of the skeleton and clips, e.g. `"metres"`.
    pub units: &'static str,
}

impl Asset {
    /// The first clip called `name` (names compare exactly, case included).
    ///
    /// ```
    /// let asset = sinew_std::import::Asset::from(sinew_std::Humanoid::default_rate());
    /// assert_eq!(asset.clip("run")?.name, "run");
    /// let Err(missing) = asset.clip("Run") else { panic!("names compare exactly") };
    /// assert_eq!(missing.message, r#"no clip named "Run" (clips: "walk", "jog", "run")"#);
    /// # Ok::<(), sinew_std::ImportError>(())
    /// ```
    ///
    /// # Errors
    /// An [`ImportError`] at [`Location::File`] of [`Asset::source`] that
    /// lists the clip names, when no clip has that name.
    pub fn clip(&self, name: &str) -> Result<&OwnedClip, ImportError> {
        self.clips.iter().find(|c| c.name == name).ok_or_else(|| {
            let names: Vec<String> = self.clips.iter().map(|c| format!("{:?}", c.name)).collect();
            let message = format!("no clip named {name:?} (clips: {})", names.join(", "));
            ImportError::new(&self.source, Location::File, message)
        })
    }
}

/// Reads a whole file, mapping IO errors to an [`ImportError`].
///
/// # Errors
/// The file cannot be read.
pub fn read_file(path: &Path) -> Result<Vec<u8>, ImportError> {
    std::fs::read(path)
        .map_err(|e| ImportError::new(path, Location::File, format!("cannot read: {e}")))
}
