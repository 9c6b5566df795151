//! glTF 2.0 / GLB importer: skins, animations and skinned meshes.
//!
//! The `gltf` crate deserializes the JSON into typed structs; everything else
//! (buffer resolution, reference checks, accessor bounds, hierarchy checks)
//! is done here, so that every malformed file gives an [`ImportError`] with a
//! JSON path such as `/accessors/3` (or a byte offset for GLB container
//! problems) and never a panic.
//!
//! # What is imported
//! - **Skeleton.** The union of all skins' joints, plus the non-joint nodes
//!   that lie between joints and the ones needed to join several top-level
//!   joints under their lowest common ancestor. Without skins, the animated
//!   nodes (and the nodes connecting them) form the skeleton. The world
//!   transform of the nodes above each skeleton root (e.g. an `Armature` node
//!   with a rotation or a 0.01 scale) is baked into that root's rest pose and
//!   keys, so model space is glTF world space and `fk(rest) * inverse_bind`
//!   is the identity for consistent files. Joints are handed to
//!   `sinew_core::skeleton::build` in node-index order; [`Asset::joint_map`]
//!   maps that order to sinew's depth-first order.
//! - **Clips.** One per animation, resampled at a uniform rate: LINEAR
//!   (slerp for rotations), STEP and CUBICSPLINE (the spec's Hermite form,
//!   tangents scaled by the key interval). Joints without channels hold their
//!   rest value; rotations are normalised and kept on one hemisphere from
//!   frame to frame. Morph-target `weights` channels become float tracks
//!   named `morph/<node name or index>/<target>`
//!   ([`Mesh::morph_track_name`], [`Mesh::morph_tracks`]).
//! - **Meshes.** One [`Mesh`] per triangle primitive of each skinned node,
//!   and of each node without a skin that hangs below a joint (a head or a
//!   limb modelled as a rigid part, as in RobotExpressive): bound with
//!   weight 1 to the nearest joint above it, its vertices taken to model
//!   space by the node's world rest transform, with the skeleton's own
//!   inverse binds. Nodes with a mesh outside the skeleton are not
//!   imported. Skinned meshes have
//!   up to four influences per vertex, or eight with
//!   [`GltfOptions::eight_influences`] (slots 4-7 in [`Mesh::joints1`] /
//!   [`Mesh::weights1`]); the sets of every `JOINTS_n`/`WEIGHTS_n` pair are
//!   merged per joint, and a vertex with more is folded to its largest
//!   and renormalised, with a warning.
//!   Inverse bind matrices authored relative to a node above the skeleton
//!   (a constant "bind shape" `C = fk(rest) * ibm`, as COLLADA converters
//!   write them) are normalised: `C` is folded into the vertices so that
//!   `fk(rest) * ibm` is the identity and skinned results are unchanged.
//!   When no such `C` exists but every joint's `fk(rest) * ibm` carries the
//!   same uniform scale (an Armature scaled by 100 above IBMs in its own
//!   units, with a bind pose that is not the rest pose), that scale alone is
//!   folded into the vertices, so that the palettes are rigid (DQS would
//!   drop the scale). IBMs that disagree with the node rest pose otherwise
//!   are kept as in the file and reported in a warning.
//! - **Morph targets.** Each primitive's `targets` ([`Mesh::morph_targets`]):
//!   POSITION, NORMAL and TANGENT (xyz) deltas, dense or sparse accessors,
//!   one per vertex in the mesh's vertex order, transformed with the
//!   vertices when a bind shape or a node transform is folded into them;
//!   the mesh's `weights` as defaults ([`Mesh::morph_weights`]) and its
//!   `extras.targetNames` (or its node's) as names. A target whose accessor
//!   count differs from the vertex count, whose accessor is not VEC3, that
//!   holds NaN or infinity, or that has normal or tangent deltas the
//!   primitive has no base for, is an error naming the mesh and target.
//!
//! Units: glTF is in metres.
//!
//! # Memory
//! Everything allocated from a size in the file (decoded external and
//! `data:` buffers, accessors, resampled clips and float tracks, mesh
//! attributes, inverse binds) is charged to one budget per import,
//! [`GltfOptions::memory_budget`], before it is allocated. Meshes are
//! imported and every clip's keys are charged before the first clip is
//! resampled, so a file over the budget fails before the slow part.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use base64::Engine as _;
use gltf::json;
use gltf::json::accessor::{ComponentType, Type};
use gltf::json::animation::{Interpolation, Property};
use gltf::json::mesh::{Mode, Semantic};
use gltf::json::validation::Checked;
use sinew_core::fk::{self, FkJob};
use sinew_core::skeleton::{self, JointDef};
use sinew_core::{Error as CoreError, Mat4, Quat, SoaTransform, Transform, Vec3};

use super::{
    bytes_of, fmt_count, fmt_keys, read_file, Asset, Budget, ImportError, Location, Mesh,
    MorphTarget, DEFAULT_MEMORY_BUDGET,
};
use crate::assets::{AlignedBytes, FloatTrack, OwnedClip, OwnedSkeleton};

/// Options of the glTF importer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GltfOptions {
    /// Rate (frames per second) clips are resampled at. `None` uses the
    /// source rate when all of a clip's keys lie on one uniform grid, else
    /// [`DEFAULT_SAMPLE_RATE`].
    pub sample_rate: Option<f32>,
    /// Keep up to eight influences per vertex ([`Mesh::joints1`] /
    /// [`Mesh::weights1`] hold slots 4-7 when a vertex has more than four)
    /// instead of folding every vertex to its four largest.
    pub eight_influences: bool,
    /// Bytes the import may allocate, across all buffers, accessors, clips,
    /// float tracks and meshes; [`DEFAULT_MEMORY_BUDGET`] by default.
    pub memory_budget: usize,
}

impl Default for GltfOptions {
    fn default() -> Self {
        GltfOptions {
            sample_rate: None,
            eight_influences: false,
            memory_budget: DEFAULT_MEMORY_BUDGET,
        }
    }
}

/// Rate used for clips whose keys are not uniformly spaced: the one
/// [`sinew_core::clip::DEFAULT_SAMPLE_RATE`].
pub use sinew_core::clip::DEFAULT_SAMPLE_RATE;

/// Most frames one imported clip may have: key times are `f32`, whose
/// spacing near a million frames' duration (33,333 s at 30 Hz) is already
/// an eighth of a frame. Memory is bounded by
/// [`GltfOptions::memory_budget`].
pub const MAX_FRAMES: usize = 1_000_000;

const GLB_MAGIC: &[u8; 4] = b"glTF";
const CHUNK_JSON: u32 = 0x4E4F_534A;
const CHUNK_BIN: u32 = 0x004E_4942;

/// Loads a `.gltf` or `.glb` file; external buffers are resolved relative
/// to the file's folder.
///
/// # Errors
/// The file cannot be read, or anything [`from_slice`] reports.
pub fn load(path: &Path, opts: &GltfOptions) -> Result<Asset, ImportError> {
    let bytes = read_file(path)?;
    from_slice(&bytes, path, path.parent(), opts)
}

/// Imports a glTF document (JSON text or GLB container) held in memory.
///
/// `name` is the file name used in errors and [`Asset::source`] (a `.glb`
/// extension makes a missing GLB magic an error rather than a JSON parse);
/// `base_dir` is where external buffer URIs are resolved (`None` allows only
/// the GLB binary chunk and `data:` URIs).
///
/// # Errors
/// An [`ImportError`] naming the JSON element at fault (`/accessors/3`,
/// `/animations/0/samplers/2/output`, ...) or the byte offset of a GLB
/// container problem: bad magic, version or lengths; JSON syntax; missing
/// references, buffers or files; accessors out of bounds or of the wrong
/// type; NaN or infinite values; node cycles or nodes with two parents;
/// mismatched counts; bad indices; clips too long to resample; anything
/// that would take the import past `opts.memory_budget` (at the element
/// that asks for it, saying what and how much); and errors of `sinew_core`
/// (too many joints, singular rest transforms).
pub fn from_slice(
    bytes: &[u8],
    name: &Path,
    base_dir: Option<&Path>,
    opts: &GltfOptions,
) -> Result<Asset, ImportError> {
    if let Some(r) = opts.sample_rate {
        if !(r.is_finite() && r > 0.0) {
            return Err(ImportError::new(
                name,
                Location::File,
                format!("sample rate {r} is not a positive finite number"),
            ));
        }
    }
    let mut doc = open(bytes, name, base_dir, opts.memory_budget)?;
    doc.import(opts)
}

/// A parsed document whose buffers load on demand, for readers that take
/// other things from it than [`from_slice`] does (see [`super::curves`]):
/// the container split, the JSON parsed and the asset version checked, with
/// a budget of `memory_budget` bytes.
pub(super) fn open<'a>(
    bytes: &'a [u8],
    name: &Path,
    base_dir: Option<&Path>,
    memory_budget: usize,
) -> Result<Doc<'a>, ImportError> {
    let container = split_container(bytes, name)?;
    let root = parse_json(
        container.json,
        container.json_offset,
        container.is_glb,
        name,
    )?;
    let doc = Doc {
        file: name.to_path_buf(),
        root,
        bin: container.bin,
        base_dir: base_dir.map(Path::to_path_buf),
        buffers: HashMap::new(),
        warnings: Vec::new(),
        budget: Budget::new(memory_budget),
    };
    doc.check_asset()?;
    Ok(doc)
}

// ---------------------------------------------------------------------------
// GLB container and JSON
// ---------------------------------------------------------------------------

struct Container<'a> {
    json: &'a [u8],
    json_offset: u64,
    is_glb: bool,
    bin: Option<&'a [u8]>,
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

fn split_container<'a>(bytes: &'a [u8], name: &Path) -> Result<Container<'a>, ImportError> {
    let at = |b: usize, msg: String| ImportError::new(name, Location::Byte(b as u64), msg);
    let is_glb_name = name
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("glb"));
    if !bytes.starts_with(GLB_MAGIC) {
        if is_glb_name {
            return Err(at(
                0,
                "not a GLB file: wrong magic (expected \"glTF\")".into(),
            ));
        }
        let json = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        return Ok(Container {
            json,
            json_offset: (bytes.len() - json.len()) as u64,
            is_glb: false,
            bin: None,
        });
    }
    if bytes.len() < 12 {
        return Err(at(
            bytes.len(),
            format!("truncated GLB header: {} bytes, 12 needed", bytes.len()),
        ));
    }
    let version = u32_at(bytes, 4).unwrap_or(0);
    if version != 2 {
        return Err(at(
            4,
            format!("unsupported GLB version {version} (expected 2)"),
        ));
    }
    let length = u32_at(bytes, 8).unwrap_or(0) as usize;
    if length > bytes.len() {
        return Err(at(
            8,
            format!(
                "GLB truncated: header says {length} bytes, file has {}",
                bytes.len()
            ),
        ));
    }
    if length < 12 {
        return Err(at(
            8,
            format!("GLB length {length} is smaller than its 12-byte header"),
        ));
    }
    let data = &bytes[..length];
    let mut off = 12usize;
    let mut json = None;
    let mut bin = None;
    while off < length {
        let (Some(chunk_len), Some(kind)) = (u32_at(data, off), u32_at(data, off + 4)) else {
            return Err(at(
                off,
                format!("truncated GLB chunk header ({} bytes left)", length - off),
            ));
        };
        let start = off + 8;
        let end = start as u64 + u64::from(chunk_len);
        if end > length as u64 {
            return Err(at(
                off,
                format!(
                    "GLB chunk of {chunk_len} bytes runs past the end of the file ({length} bytes)"
                ),
            ));
        }
        let body = &data[start..end as usize];
        match kind {
            CHUNK_JSON if json.is_none() && off == 12 => json = Some((body, start)),
            CHUNK_JSON => return Err(at(off, "second GLB JSON chunk".into())),
            _ if json.is_none() => {
                return Err(at(
                    off + 4,
                    format!("first GLB chunk is not JSON (type 0x{kind:08x})"),
                ))
            }
            CHUNK_BIN if bin.is_none() => bin = Some(body),
            CHUNK_BIN => return Err(at(off, "second GLB binary chunk".into())),
            _ => {} // Unknown chunk types are skipped, as the spec asks.
        }
        // Chunks are 4-byte aligned; tolerate a missing final padding.
        off = (end as usize).saturating_add(3) & !3;
    }
    let Some((json, json_start)) = json else {
        return Err(at(12, "GLB has no JSON chunk".into()));
    };
    Ok(Container {
        json,
        json_offset: json_start as u64,
        is_glb: true,
        bin,
    })
}

fn parse_json(
    json: &[u8],
    offset: u64,
    is_glb: bool,
    name: &Path,
) -> Result<json::Root, ImportError> {
    json::Root::from_slice(json).map_err(|e| {
        let location = if is_glb {
            // Byte offset of line/column inside the JSON chunk.
            let mut byte = 0usize;
            if e.line() > 0 {
                for (i, l) in json.split(|&b| b == b'\n').enumerate() {
                    if i + 1 == e.line() {
                        byte += e.column().saturating_sub(1).min(l.len());
                        break;
                    }
                    byte += l.len() + 1;
                }
            } else {
                byte = json.len();
            }
            Location::Byte(offset + byte as u64)
        } else {
            Location::Line(e.line().max(1))
        };
        ImportError::new(name, location, format!("invalid glTF JSON: {e}"))
    })
}

// ---------------------------------------------------------------------------
// Math helpers
// ---------------------------------------------------------------------------

/// Rotation matrix (3x3, row `r` column `c` = `m[r][c]`) to a unit quaternion.
fn quat_from_rows(m: [[f64; 3]; 3]) -> Quat {
    let tr = m[0][0] + m[1][1] + m[2][2];
    let (x, y, z, w);
    if tr > 0.0 {
        let s = (tr + 1.0).sqrt() * 2.0;
        w = 0.25 * s;
        x = (m[2][1] - m[1][2]) / s;
        y = (m[0][2] - m[2][0]) / s;
        z = (m[1][0] - m[0][1]) / s;
    } else if m[0][0] > m[1][1] && m[0][0] > m[2][2] {
        let s = (1.0 + m[0][0] - m[1][1] - m[2][2]).sqrt() * 2.0;
        w = (m[2][1] - m[1][2]) / s;
        x = 0.25 * s;
        y = (m[0][1] + m[1][0]) / s;
        z = (m[0][2] + m[2][0]) / s;
    } else if m[1][1] > m[2][2] {
        let s = (1.0 + m[1][1] - m[0][0] - m[2][2]).sqrt() * 2.0;
        w = (m[0][2] - m[2][0]) / s;
        x = (m[0][1] + m[1][0]) / s;
        y = 0.25 * s;
        z = (m[1][2] + m[2][1]) / s;
    } else {
        let s = (1.0 + m[2][2] - m[0][0] - m[1][1]).sqrt() * 2.0;
        w = (m[1][0] - m[0][1]) / s;
        x = (m[0][2] + m[2][0]) / s;
        y = (m[1][2] + m[2][1]) / s;
        z = 0.25 * s;
    }
    let n = (x * x + y * y + z * z + w * w).sqrt();
    Quat::new(
        (x / n) as f32,
        (y / n) as f32,
        (z / n) as f32,
        (w / n) as f32,
    )
}

/// Decomposes an affine matrix into TRS. Returns the transform and the
/// largest element difference between the matrix and the TRS rebuilt from
/// it (non-zero for shear), or `None` when the matrix is singular or not finite.
fn decompose(m: &Mat4) -> Option<(Transform, f32)> {
    if !m.is_finite() {
        return None;
    }
    let col = |c: usize| {
        [
            f64::from(m.cols[c][0]),
            f64::from(m.cols[c][1]),
            f64::from(m.cols[c][2]),
        ]
    };
    let (c0, c1, c2) = (col(0), col(1), col(2));
    let len = |c: [f64; 3]| (c[0] * c[0] + c[1] * c[1] + c[2] * c[2]).sqrt();
    let cross = [
        c1[1] * c2[2] - c1[2] * c2[1],
        c1[2] * c2[0] - c1[0] * c2[2],
        c1[0] * c2[1] - c1[1] * c2[0],
    ];
    let det = c0[0] * cross[0] + c0[1] * cross[1] + c0[2] * cross[2];
    let (mut sx, sy, sz) = (len(c0), len(c1), len(c2));
    if !(sx > 1e-12 && sy > 1e-12 && sz > 1e-12) || det.abs() < 1e-30 {
        return None;
    }
    if det < 0.0 {
        sx = -sx;
    }
    let rows = [
        [c0[0] / sx, c1[0] / sy, c2[0] / sz],
        [c0[1] / sx, c1[1] / sy, c2[1] / sz],
        [c0[2] / sx, c1[2] / sy, c2[2] / sz],
    ];
    let rotation = quat_from_rows(rows);
    let t = Transform::new(
        m.translation(),
        rotation,
        Vec3::new(sx as f32, sy as f32, sz as f32),
    );
    if !t.is_finite() {
        return None;
    }
    let scale = m.cols.iter().flatten().fold(1.0f32, |a, v| a.max(v.abs()));
    let err = t.to_matrix().max_abs_diff(m) / scale;
    Some((t, err))
}

fn qdot(a: [f32; 4], b: [f32; 4]) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]
}

/// Shortest-arc spherical interpolation (nlerp when nearly parallel).
fn slerp(a: [f32; 4], b: [f32; 4], t: f32) -> [f32; 4] {
    let mut d = qdot(a, b);
    let b = if d < 0.0 {
        d = -d;
        [-b[0], -b[1], -b[2], -b[3]]
    } else {
        b
    };
    let (wa, wb) = if d > 0.9995 {
        (1.0 - t, t)
    } else {
        let theta = d.min(1.0).acos();
        let s = theta.sin();
        (((1.0 - t) * theta).sin() / s, (t * theta).sin() / s)
    };
    std::array::from_fn(|i| a[i] * wa + b[i] * wb)
}

fn normalize4(q: [f32; 4]) -> Option<[f32; 4]> {
    let l = qdot(q, q).sqrt();
    (l.is_finite() && l > 1e-12).then(|| q.map(|v| v / l))
}

// ---------------------------------------------------------------------------
// Document
// ---------------------------------------------------------------------------

/// Path of an element in the JSON, `/a/0/b` style.
fn jp(parts: std::fmt::Arguments<'_>) -> String {
    parts.to_string()
}

pub(super) struct Doc<'a> {
    file: PathBuf,
    pub(super) root: json::Root,
    bin: Option<&'a [u8]>,
    base_dir: Option<PathBuf>,
    /// Loaded buffers: the GLB binary chunk borrowed, the others decoded or read.
    buffers: HashMap<usize, Cow<'a, [u8]>>,
    warnings: Vec<String>,
    budget: Budget,
}

/// An accessor read into `f64` components (exact for every glTF component type).
struct Raw {
    component: ComponentType,
    normalized: bool,
    comps: usize,
    /// Elements the accessor declares.
    count: usize,
    /// The components of its first `min(count, limit)` elements.
    values: Vec<f64>,
}

/// A bounds-checked byte range of a loaded buffer.
struct ViewRef {
    buffer: usize,
    start: usize,
    end: usize,
    stride: Option<usize>,
}

/// A skin resolved against the sinew skeleton.
#[derive(Clone)]
struct Binding {
    /// Inverse bind matrix per sinew joint.
    ibm: Vec<Mat4>,
    /// Sinew joint of each of the skin's joints.
    joint_of: Vec<u16>,
    /// Bind-shape matrix folded into the vertices, if any.
    shape: Option<Mat4>,
}

/// Warnings that differ only in their `skin N: ` prefix (several skins of
/// one skeleton, as in RobotExpressive) become one `skins 0, 1, 2: …`
/// line, where the first of them stood; the rest keep their order.
fn merge_skin_warnings(warnings: Vec<String>) -> Vec<String> {
    let split = |w: &str| -> Option<(usize, String)> {
        let rest = w.strip_prefix("skin ")?;
        let (n, text) = rest.split_once(": ")?;
        Some((n.parse().ok()?, text.to_string()))
    };
    // (text, skins) per merged line, or a plain line.
    let mut out: Vec<Result<(String, Vec<usize>), String>> = Vec::new();
    for w in warnings {
        match split(&w) {
            Some((n, text)) => {
                match out
                    .iter_mut()
                    .find_map(|o| o.as_mut().ok().filter(|(t, _)| *t == text))
                {
                    Some((_, skins)) => skins.push(n),
                    None => out.push(Ok((text, vec![n]))),
                }
            }
            None => out.push(Err(w)),
        }
    }
    out.into_iter()
        .map(|o| match o {
            Ok((text, skins)) if skins.len() == 1 => format!("skin {}: {text}", skins[0]),
            Ok((text, skins)) => {
                let list: Vec<String> = skins.iter().map(usize::to_string).collect();
                format!("skins {}: {text}", list.join(", "))
            }
            Err(w) => w,
        })
        .collect()
}

/// The uniform scale shared by every matrix of `m` (each column of each
/// 3x3 part within 1e-4 relative of the first matrix's first column), when
/// it is not 1 (off by more than 1e-4); `None` otherwise or for no matrices.
fn common_uniform_scale(mut m: impl Iterator<Item = Mat4>) -> Option<f32> {
    let norms = |a: &Mat4| {
        let n = |c: usize| Vec3::new(a.cols[c][0], a.cols[c][1], a.cols[c][2]).length();
        [n(0), n(1), n(2)]
    };
    let first = m.next()?;
    let s = norms(&first)[0];
    let close = |v: f32| (v - s).abs() <= 1e-4 * s;
    let uniform =
        norms(&first).into_iter().all(close) && m.all(|a| norms(&a).into_iter().all(close));
    (s.is_finite() && s > 0.0 && uniform && (s - 1.0).abs() > 1e-4).then_some(s)
}

/// Transforms a mesh's bind-space vertex data by `c` (positions as points,
/// normals by the inverse transpose, tangents as vectors; handedness flips
/// with a mirroring `c`).
fn apply_bind_shape(mesh: &mut Mesh, c: &Mat4) {
    morph_bind_shape(mesh, c);
    for p in &mut mesh.positions {
        *p = c.transform_point(Vec3::new(p[0], p[1], p[2])).to_array();
    }
    let unit = |v: Vec3| {
        let l = v.length();
        if l > 0.0 && l.is_finite() {
            v * (1.0 / l)
        } else {
            v
        }
    };
    if let Some(inv) = c.inverse_affine() {
        let col = |i: usize| Vec3::new(inv.cols[i][0], inv.cols[i][1], inv.cols[i][2]);
        for n in &mut mesh.normals {
            let v = Vec3::new(n[0], n[1], n[2]);
            *n = unit(Vec3::new(col(0).dot(v), col(1).dot(v), col(2).dot(v))).to_array();
        }
    }
    let c0 = Vec3::new(c.cols[0][0], c.cols[0][1], c.cols[0][2]);
    let c1 = Vec3::new(c.cols[1][0], c.cols[1][1], c.cols[1][2]);
    let c2 = Vec3::new(c.cols[2][0], c.cols[2][1], c.cols[2][2]);
    let flip = if c0.dot(c1.cross(c2)) < 0.0 {
        -1.0
    } else {
        1.0
    };
    for t in &mut mesh.tangents {
        let v = unit(c.transform_vector(Vec3::new(t[0], t[1], t[2])));
        *t = [v.x, v.y, v.z, t[3] * flip];
    }
}

/// Transforms a mesh's morph-target deltas by `c` as [`apply_bind_shape`]
/// transforms its vertices, before it does (the base normals and tangents
/// scale the deltas): position deltas as vectors; normal deltas by the
/// inverse transpose and tangent deltas by `c`, each divided by the length
/// its vertex's base normal or tangent takes under the same map, which is
/// the derivative of the renormalisation at the base vector for a
/// similarity `c` (rotation, uniform scale), the transforms bind shapes and
/// node attachments hold in practice.
fn morph_bind_shape(mesh: &mut Mesh, c: &Mat4) {
    let col = |m: &Mat4, i: usize| Vec3::new(m.cols[i][0], m.cols[i][1], m.cols[i][2]);
    let inv = c.inverse_affine();
    let normal_map = |v: Vec3| {
        inv.map(|inv| {
            Vec3::new(
                col(&inv, 0).dot(v),
                col(&inv, 1).dot(v),
                col(&inv, 2).dot(v),
            )
        })
    };
    // 1 / |map(base)|, or 1 when the base is missing or degenerate.
    let scale = |mapped: Option<Vec3>| {
        let l = mapped.map_or(1.0, Vec3::length);
        if l > 0.0 && l.is_finite() {
            1.0 / l
        } else {
            1.0
        }
    };
    let v3 = |a: &[f32]| Vec3::new(a[0], a[1], a[2]);
    for t in &mut mesh.morph_targets {
        for d in &mut t.positions {
            *d = c.transform_vector(v3(d)).to_array();
        }
        if inv.is_some() {
            for (v, d) in t.normals.iter_mut().enumerate() {
                let s = scale(mesh.normals.get(v).and_then(|n| normal_map(v3(n))));
                if let Some(m) = normal_map(v3(d)) {
                    *d = (m * s).to_array();
                }
            }
        }
        for (v, d) in t.tangents.iter_mut().enumerate() {
            let s = scale(mesh.tangents.get(v).map(|b| c.transform_vector(v3(b))));
            *d = (c.transform_vector(v3(d)) * s).to_array();
        }
    }
}

/// An animation whose channels are read and whose keys are charged to the
/// budget, ready to be resampled.
struct PreparedClip {
    /// Index in `/animations`.
    a: usize,
    name: String,
    tracks: Vec<Track>,
    /// What `tracks` hold, given back to the budget once resampled.
    track_bytes: u64,
    /// Label and target count of each morph-weights channel, in float-track order.
    weights: Vec<(String, usize)>,
    float_count: usize,
    start: f64,
    end: f64,
    rate: f64,
    frames: usize,
}

/// A resolved animation channel.
struct Track {
    target: Target,
    interpolation: Interpolation,
    times: Vec<f32>,
    /// `keys × width` values, or `keys × 3 × width` for cubic splines
    /// (in-tangent, value, out-tangent per key).
    values: Vec<f32>,
    width: usize,
}

#[derive(Clone, Copy, PartialEq)]
enum Target {
    Translation(usize),
    Rotation(usize),
    Scale(usize),
    /// Node index, first float track.
    Weights(usize, usize),
}

struct SkeletonInfo {
    skeleton: OwnedSkeleton,
    /// Sinew index of each node in the skeleton.
    node_to_joint: HashMap<usize, usize>,
    joint_map: Vec<u16>,
    /// Per sinew joint: world matrix of the nodes above it that are baked
    /// into its rest pose and keys (only for roots, when not identity).
    bake: Vec<Option<Mat4>>,
    /// Per sinew joint: the node's own rest transform, before any baking.
    rest: Vec<Transform>,
}

impl<'a> Doc<'a> {
    pub(super) fn err(&self, path: impl Into<String>, msg: impl Into<String>) -> ImportError {
        ImportError::new(&self.file, Location::JsonPath(path.into()), msg)
    }

    /// Charges `bytes` for `what` to the budget; over it, an error at `path`.
    fn charge(
        &mut self,
        bytes: u64,
        what: std::fmt::Arguments<'_>,
        path: &str,
    ) -> Result<(), ImportError> {
        let r = self.budget.take(bytes, what);
        r.map_err(|m| self.err(path, m))
    }

    /// An empty vector with room for `count` values, charged to the budget.
    pub(super) fn alloc<T>(
        &mut self,
        count: usize,
        what: std::fmt::Arguments<'_>,
        path: &str,
    ) -> Result<Vec<T>, ImportError> {
        let r = self.budget.vec(count, what);
        r.map_err(|m| self.err(path, m))
    }

    /// The asset of a document [`open`] checked.
    fn import(&mut self, opts: &GltfOptions) -> Result<Asset, ImportError> {
        let parents = self.node_parents()?;
        let locals = self.node_locals()?;
        let info = self.build_skeleton(&parents, &locals)?;
        self.check_skins()?;
        // Meshes first and every clip charged before any is resampled: the
        // resampling is the one step whose time grows with the budget, so a
        // file over the budget fails before it. Warnings keep the order of
        // the steps as a reader expects them: clips, then meshes.
        let before = std::mem::take(&mut self.warnings);
        let slots = if opts.eight_influences { 8 } else { 4 };
        let meshes = self.import_meshes(&info, slots, &parents, &locals)?;
        let mesh_warnings = std::mem::take(&mut self.warnings);
        let mut prepared = Vec::new();
        for a in 0..self.root.animations.len() {
            if let Some(p) = self.prepare_clip(a, &info, opts)? {
                prepared.push(p);
            }
        }
        let mut clips = Vec::with_capacity(prepared.len());
        for p in prepared {
            clips.push(self.resample_clip(p, &info)?);
        }
        let mut warnings = before;
        warnings.append(&mut self.warnings);
        warnings.extend(mesh_warnings);
        Ok(Asset {
            source: self.file.clone(),
            skeleton: info.skeleton,
            joint_map: info.joint_map,
            clips,
            meshes,
            warnings: merge_skin_warnings(warnings),
            units: "metres",
        })
    }

    /// Checks every skin's inverse-bind accessor, whether a mesh uses the
    /// skin or not: its type, its bounds and that it has a matrix per joint.
    /// Nothing is decoded here; [`Doc::skin_binding`] decodes the matrices of
    /// the skin's joints only, however many the accessor declares.
    fn check_skins(&mut self) -> Result<(), ImportError> {
        for s in 0..self.root.skins.len() {
            let Some(acc) = self.root.skins[s].inverse_bind_matrices else {
                continue;
            };
            let joints = self.root.skins[s].joints.len();
            let from = jp(format_args!("/skins/{s}/inverseBindMatrices"));
            let (_, _, count) =
                self.read_floats_upto(acc.value(), &from, &[Type::Mat4], false, 0)?;
            if count < joints {
                return Err(self.err(
                    from,
                    format!("{count} inverse bind matrices for {joints} joints"),
                ));
            }
        }
        Ok(())
    }

    fn check_asset(&self) -> Result<(), ImportError> {
        let major = |v: &str| {
            v.split('.')
                .next()
                .and_then(|m| m.trim().parse::<u32>().ok())
        };
        let v = &self.root.asset.version;
        if major(v) != Some(2) {
            return Err(self.err(
                "/asset/version",
                format!("unsupported glTF version \"{v}\" (expected 2.x)"),
            ));
        }
        if let Some(min) = &self.root.asset.min_version {
            if major(min) != Some(2) || min.trim() != "2.0" {
                return Err(self.err(
                    "/asset/minVersion",
                    format!("unsupported glTF minVersion \"{min}\" (2.0 is supported)"),
                ));
            }
        }
        for (i, ext) in self.root.extensions_required.iter().enumerate() {
            // Extensions that change nothing this importer reads are fine;
            // KHR_mesh_quantization only widens accessor types, which the
            // accessor reader converts anyway.
            let harmless = [
                "KHR_materials_",
                "KHR_texture_",
                "EXT_texture_",
                "MSFT_texture_",
            ]
            .iter()
            .any(|p| ext.starts_with(p))
                || ext == "KHR_lights_punctual"
                || ext == "KHR_mesh_quantization";
            if !harmless {
                return Err(self.err(
                    jp(format_args!("/extensionsRequired/{i}")),
                    format!("required extension {ext} is not supported"),
                ));
            }
        }
        Ok(())
    }

    /// Parent of each node; rejects bad child references, nodes with two
    /// parents and cycles.
    fn node_parents(&self) -> Result<Vec<Option<usize>>, ImportError> {
        let n = self.root.nodes.len();
        let mut parent: Vec<Option<usize>> = vec![None; n];
        for (i, node) in self.root.nodes.iter().enumerate() {
            for (k, c) in node.children.iter().flatten().enumerate() {
                let c = c.value();
                let path = jp(format_args!("/nodes/{i}/children/{k}"));
                if c >= n {
                    return Err(self.err(path, format!("child refers to missing node {c}")));
                }
                if c == i {
                    return Err(self.err(path, format!("cycle: node {i} is its own child")));
                }
                if let Some(p) = parent[c] {
                    return Err(self.err(
                        path,
                        format!("node {c} has two parents (nodes {p} and {i})"),
                    ));
                }
                parent[c] = Some(i);
            }
        }
        // 0 = unvisited, 1 = on the current walk, 2 = reaches a root.
        let mut state = vec![0u8; n];
        let mut walk = Vec::new();
        for start in 0..n {
            let mut j = start;
            walk.clear();
            loop {
                match state[j] {
                    2 => break,
                    1 => {
                        return Err(self.err(
                            jp(format_args!("/nodes/{j}/children")),
                            format!("cycle in the node hierarchy through node {j}"),
                        ))
                    }
                    _ => {}
                }
                state[j] = 1;
                walk.push(j);
                match parent[j] {
                    Some(p) => j = p,
                    None => break,
                }
            }
            for &w in &walk {
                state[w] = 2;
            }
        }
        Ok(parent)
    }

    /// Local transform of every node (matrix decomposed), validated.
    fn node_locals(&mut self) -> Result<Vec<Transform>, ImportError> {
        let mut out = Vec::with_capacity(self.root.nodes.len());
        let mut sheared = Vec::new();
        for (i, node) in self.root.nodes.iter().enumerate() {
            let path = |f: &str| jp(format_args!("/nodes/{i}/{f}"));
            if let Some(m) = node.matrix {
                if !m.iter().all(|v| v.is_finite()) {
                    return Err(self.err(path("matrix"), "matrix holds NaN or infinity"));
                }
                if m[3].abs() > 1e-6
                    || m[7].abs() > 1e-6
                    || m[11].abs() > 1e-6
                    || (m[15] - 1.0).abs() > 1e-6
                {
                    return Err(self.err(
                        path("matrix"),
                        "matrix is not affine (last row is not 0 0 0 1)",
                    ));
                }
                let mat = Mat4 {
                    cols: [
                        [m[0], m[1], m[2], 0.0],
                        [m[4], m[5], m[6], 0.0],
                        [m[8], m[9], m[10], 0.0],
                        [m[12], m[13], m[14], 1.0],
                    ],
                };
                let Some((t, e)) = decompose(&mat) else {
                    return Err(self.err(path("matrix"), "matrix is singular (zero scale)"));
                };
                if e > 1e-4 {
                    sheared.push((i, e));
                }
                out.push(t);
                continue;
            }
            let tr = node.translation.unwrap_or([0.0; 3]);
            let sc = node.scale.unwrap_or([1.0; 3]);
            let q = node.rotation.as_ref().map_or([0.0, 0.0, 0.0, 1.0], |r| r.0);
            if !tr.iter().all(|v| v.is_finite()) {
                return Err(self.err(path("translation"), "translation holds NaN or infinity"));
            }
            if !sc.iter().all(|v| v.is_finite()) {
                return Err(self.err(path("scale"), "scale holds NaN or infinity"));
            }
            if !q.iter().all(|v| v.is_finite()) {
                return Err(self.err(path("rotation"), "rotation holds NaN or infinity"));
            }
            let l = qdot(q, q).sqrt();
            if (l - 1.0).abs() > 1e-2 {
                return Err(self.err(
                    path("rotation"),
                    format!("rotation is not a unit quaternion (length {l})"),
                ));
            }
            let q = q.map(|v| v / l);
            out.push(Transform::new(
                Vec3::new(tr[0], tr[1], tr[2]),
                Quat::new(q[0], q[1], q[2], q[3]),
                Vec3::new(sc[0], sc[1], sc[2]),
            ));
        }
        for (i, e) in sheared {
            self.warnings.push(format!(
                "node {i}: matrix has shear that TRS cannot hold (relative error {e:.2e}); approximated"
            ));
        }
        Ok(out)
    }

    /// How morph-weight tracks name node `i`: its name, or its index when
    /// it has none (`morph/<label>/<target>`).
    fn morph_label(&self, i: usize) -> String {
        match self.root.nodes.get(i).and_then(|n| n.name.as_deref()) {
            Some(s) if !s.is_empty() => s.to_string(),
            _ => i.to_string(),
        }
    }

    fn node_name(&self, i: usize) -> String {
        match self.root.nodes.get(i).and_then(|n| n.name.as_deref()) {
            Some(s) if !s.is_empty() => s.to_string(),
            _ => format!("node{i}"),
        }
    }

    pub(super) fn node_ref(&self, i: usize, path: String) -> Result<usize, ImportError> {
        if i < self.root.nodes.len() {
            Ok(i)
        } else {
            Err(self.err(path, format!("refers to missing node {i}")))
        }
    }

    fn build_skeleton(
        &mut self,
        parents: &[Option<usize>],
        locals: &[Transform],
    ) -> Result<SkeletonInfo, ImportError> {
        let n = self.root.nodes.len();
        let mut member = vec![false; n];
        let from_skins = !self.root.skins.is_empty();
        for (s, skin) in self.root.skins.iter().enumerate() {
            if skin.joints.is_empty() {
                return Err(self.err(jp(format_args!("/skins/{s}/joints")), "skin has no joints"));
            }
            for (k, j) in skin.joints.iter().enumerate() {
                let j = self.node_ref(j.value(), jp(format_args!("/skins/{s}/joints/{k}")))?;
                member[j] = true;
            }
            if let Some(r) = skin.skeleton {
                self.node_ref(r.value(), jp(format_args!("/skins/{s}/skeleton")))?;
            }
        }
        if !from_skins {
            for (a, anim) in self.root.animations.iter().enumerate() {
                for (c, ch) in anim.channels.iter().enumerate() {
                    let j = self.node_ref(
                        ch.target.node.value(),
                        jp(format_args!("/animations/{a}/channels/{c}/target/node")),
                    )?;
                    if matches!(
                        ch.target.path,
                        Checked::Valid(
                            Property::Translation | Property::Rotation | Property::Scale
                        )
                    ) {
                        member[j] = true;
                    }
                }
            }
            if !member.iter().any(|&m| m) {
                return Err(self.err(
                    "/skins",
                    "the file has no skins and no animated nodes: no skeleton to import",
                ));
            }
        }
        // Nodes between a member and its nearest member ancestor.
        for start in 0..n {
            if !member[start] {
                continue;
            }
            let mut chain = Vec::new();
            let mut p = parents[start];
            while let Some(q) = p {
                if member[q] {
                    for &c in &chain {
                        member[c] = true;
                    }
                    break;
                }
                chain.push(q);
                p = parents[q];
            }
        }
        // Top-level members that share a scene root are joined under their
        // lowest common ancestor.
        let top_of = |j: usize| {
            let mut r = j;
            while let Some(p) = parents[r] {
                r = p;
            }
            r
        };
        let tops: Vec<usize> = (0..n)
            .filter(|&j| member[j] && parents[j].is_none_or(|p| !member[p]))
            .collect();
        let mut groups: HashMap<usize, Vec<usize>> = HashMap::new();
        for &t in &tops {
            groups.entry(top_of(t)).or_default().push(t);
        }
        let mut group_keys: Vec<usize> = groups.keys().copied().collect();
        group_keys.sort_unstable();
        for g in group_keys {
            let group = &groups[&g];
            if group.len() < 2 {
                continue;
            }
            let chain = |j: usize| {
                let mut v = Vec::new();
                let mut p = parents[j];
                while let Some(q) = p {
                    v.push(q);
                    p = parents[q];
                }
                v
            };
            // Ancestors common to every top, deepest first.
            let first = chain(group[0]);
            let others: Vec<Vec<usize>> = group[1..].iter().map(|&t| chain(t)).collect();
            let Some(&lca) = first.iter().find(|a| others.iter().all(|o| o.contains(a))) else {
                continue;
            };
            for &t in group {
                let mut p = parents[t];
                while let Some(q) = p {
                    member[q] = true;
                    if q == lca {
                        break;
                    }
                    p = parents[q];
                }
            }
        }

        let joint_nodes: Vec<usize> = (0..n).filter(|&j| member[j]).collect();
        let input_of: HashMap<usize, usize> = joint_nodes
            .iter()
            .enumerate()
            .map(|(k, &j)| (j, k))
            .collect();
        let names: Vec<String> = joint_nodes.iter().map(|&j| self.node_name(j)).collect();
        let mut defs = Vec::with_capacity(joint_nodes.len());
        let mut bakes = Vec::with_capacity(joint_nodes.len());
        let mut approx = Vec::new();
        for (k, &j) in joint_nodes.iter().enumerate() {
            let parent = parents[j].and_then(|p| input_of.get(&p).copied());
            let mut rest = locals[j];
            let mut bake = None;
            if parent.is_none() {
                if let Some(p) = parents[j] {
                    // World matrix of the nodes above this root.
                    let mut w = locals[p].to_matrix();
                    let mut q = parents[p];
                    while let Some(a) = q {
                        w = locals[a].to_matrix() * w;
                        q = parents[a];
                    }
                    if w.max_abs_diff(&Mat4::IDENTITY) > 1e-7 {
                        let Some((t, e)) = decompose(&(w * rest.to_matrix())) else {
                            return Err(self.err(
                                jp(format_args!("/nodes/{p}")),
                                format!(
                                    "the nodes above skeleton root {j} have a singular transform"
                                ),
                            ));
                        };
                        if e > 1e-4 {
                            approx.push((j, e));
                        }
                        rest = t;
                        bake = Some(w);
                    }
                }
            }
            rest.rotation = rest.rotation.flush_tiny();
            defs.push(JointDef {
                name: &names[k],
                parent,
                rest,
            });
            bakes.push(bake);
        }
        for (j, e) in approx {
            self.warnings.push(format!(
                "node {j}: the non-uniform scale above this skeleton root cannot be baked exactly into TRS (relative error {e:.2e})"
            ));
        }
        let mut remap = vec![0u16; defs.len()];
        let mut bytes = AlignedBytes::zeroed(skeleton::required_size(&defs));
        let written = skeleton::build(&defs, bytes.as_mut_slice(), Some(&mut remap))
            .map_err(|e| self.core_err(e, &joint_nodes, from_skins))?;
        let skeleton = OwnedSkeleton::from_bytes(&bytes.as_slice()[..written])
            .map_err(|e| self.core_err(e, &joint_nodes, from_skins))?;
        let count = joint_nodes.len();
        let mut bake = vec![None; count];
        let mut rest = vec![Transform::IDENTITY; count];
        let mut node_to_joint = HashMap::new();
        for (k, &j) in joint_nodes.iter().enumerate() {
            let s = remap[k] as usize;
            bake[s] = bakes[k];
            // The node's own rest: clip keys start from it and are baked
            // afterwards like the animated values (the skeleton's rest of a
            // baked root already holds the nodes above it).
            rest[s] = locals[j];
            node_to_joint.insert(j, s);
        }
        Ok(SkeletonInfo {
            skeleton,
            node_to_joint,
            joint_map: remap,
            bake,
            rest,
        })
    }

    fn core_err(&self, e: CoreError, joint_nodes: &[usize], from_skins: bool) -> ImportError {
        let node = |j: usize| joint_nodes.get(j).copied().unwrap_or(j);
        match e {
            CoreError::TooManyJoints { .. } | CoreError::NoJoints => self.err(
                if from_skins { "/skins" } else { "/animations" },
                format!("skeleton: {e}"),
            ),
            CoreError::SingularTransform { joint } => self.err(
                jp(format_args!("/nodes/{}", node(joint))),
                "rest transform is not invertible (zero scale)",
            ),
            CoreError::InvalidParent { joint } => self.err(
                jp(format_args!("/nodes/{}", node(joint))),
                format!("skeleton: {e}"),
            ),
            _ => ImportError::new(&self.file, Location::File, format!("skeleton: {e}")),
        }
    }

    // -----------------------------------------------------------------------
    // Buffers and accessors
    // -----------------------------------------------------------------------

    fn load_buffer(&mut self, b: usize) -> Result<(), ImportError> {
        if self.buffers.contains_key(&b) {
            return Ok(());
        }
        let path = jp(format_args!("/buffers/{b}"));
        let Some(buffer) = self.root.buffers.get(b) else {
            return Err(self.err(path, format!("buffer {b} does not exist")));
        };
        let declared = buffer.byte_length.0;
        let uri = buffer.uri.clone();
        let data: Cow<'a, [u8]> = match uri.as_deref() {
            None => match self.bin {
                Some(bin) if b == 0 => Cow::Borrowed(bin),
                _ => {
                    return Err(self.err(
                        path,
                        "buffer has no uri and the file has no GLB binary chunk for it",
                    ))
                }
            },
            Some(uri) if uri.starts_with("data:") => {
                let Some((_, payload)) = uri.split_once(";base64,") else {
                    return Err(self.err(path, "data URI is not base64-encoded"));
                };
                let payload = payload.trim();
                // What the decoder allocates: 3 bytes per 4 characters.
                let decoded = (payload.len() as u64).div_ceil(4) * 3;
                self.charge(
                    decoded,
                    format_args!(
                        "buffer {b}: a data URI of {} base64 characters, decoded",
                        fmt_count(payload.len() as u64)
                    ),
                    &path,
                )?;
                let data = base64::engine::general_purpose::STANDARD
                    .decode(payload)
                    .map_err(|e| self.err(path.clone(), format!("bad base64 in data URI: {e}")))?;
                Cow::Owned(data)
            }
            Some(uri) if uri.contains("://") => {
                return Err(self.err(
                    path,
                    format!("external URL {uri:?} is not supported (only files and data URIs)"),
                ))
            }
            Some(uri) => {
                let Some(dir) = &self.base_dir else {
                    return Err(self.err(
                        path,
                        format!("external buffer {uri:?} needs a base directory"),
                    ));
                };
                let file = dir.join(percent_decode(uri));
                // `byteLength` bytes at most are read, charged first: a
                // buffer that names a device or a huge file costs what the
                // document declares, not what the file holds.
                self.charge(
                    declared,
                    format_args!(
                        "buffer {b} ({}): byteLength {}",
                        file.display(),
                        fmt_count(declared)
                    ),
                    &path,
                )?;
                let cannot = |e: &dyn std::fmt::Display| {
                    self.err(
                        path.clone(),
                        format!("missing buffer file {}: {e}", file.display()),
                    )
                };
                let f = std::fs::File::open(&file).map_err(|e| cannot(&e))?;
                let mut data = Vec::new();
                // Charged above, so within `usize`.
                data.try_reserve_exact(usize::try_from(declared).unwrap_or(usize::MAX))
                    .map_err(|e| cannot(&e))?;
                f.take(declared)
                    .read_to_end(&mut data)
                    .map_err(|e| cannot(&e))?;
                Cow::Owned(data)
            }
        };
        if (data.len() as u64) < declared {
            return Err(self.err(
                path,
                format!(
                    "buffer holds {} bytes but byteLength says {declared}",
                    data.len()
                ),
            ));
        }
        // `declared` is at most the length, so within `usize`.
        let data = match data {
            Cow::Borrowed(d) => Cow::Borrowed(&d[..declared as usize]),
            Cow::Owned(mut d) => {
                d.truncate(declared as usize);
                Cow::Owned(d)
            }
        };
        self.buffers.insert(b, data);
        Ok(())
    }

    /// Bytes `[offset, offset + len)` of buffer view `v`, bounds-checked.
    fn view_bytes(&mut self, v: usize, path: &str) -> Result<ViewRef, ImportError> {
        let Some(view) = self.root.buffer_views.get(v) else {
            return Err(self.err(path, format!("refers to missing buffer view {v}")));
        };
        let b = view.buffer.value();
        let off = view.byte_offset.map_or(0, |o| o.0);
        let len = view.byte_length.0;
        let stride = view.byte_stride.as_ref().map(|s| s.0);
        let vpath = jp(format_args!("/bufferViews/{v}"));
        if b >= self.root.buffers.len() {
            return Err(self.err(vpath + "/buffer", format!("refers to missing buffer {b}")));
        }
        if let Some(s) = stride {
            if !(4..=252).contains(&s) || !s.is_multiple_of(4) {
                return Err(self.err(
                    vpath + "/byteStride",
                    format!("byteStride {s} is not a multiple of 4 in 4..=252"),
                ));
            }
        }
        self.load_buffer(b)?;
        let data = self.buffers.get(&b).map_or(&[][..], |d| &d[..]);
        let end = off.checked_add(len);
        match end {
            Some(end) if end <= data.len() as u64 => Ok(ViewRef {
                buffer: b,
                start: off as usize,
                end: end as usize,
                stride,
            }),
            _ => Err(self.err(
                vpath,
                format!(
                    "byteOffset {off} + byteLength {len} runs past the end of buffer {b} ({} bytes)",
                    data.len()
                ),
            )),
        }
    }

    fn view_slice(&self, v: &ViewRef) -> &[u8] {
        self.buffers
            .get(&v.buffer)
            .and_then(|b| b.get(v.start..v.end))
            .unwrap_or(&[])
    }

    /// Reads accessor `a` (referenced from `from`) after checking that its
    /// type is one of `types`: every check of the whole accessor (type,
    /// bounds, sparse indices and values), but only its first `limit`
    /// elements are decoded, charged to the budget as `f64` components.
    fn read_raw(
        &mut self,
        a: usize,
        from: &str,
        types: &[Type],
        limit: usize,
    ) -> Result<Raw, ImportError> {
        let path = jp(format_args!("/accessors/{a}"));
        let Some(acc) = self.root.accessors.get(a) else {
            return Err(self.err(from, format!("refers to missing accessor {a}")));
        };
        let Checked::Valid(json::accessor::GenericComponentType(component)) = acc.component_type
        else {
            return Err(self.err(path + "/componentType", "invalid componentType"));
        };
        let Checked::Valid(ty) = acc.type_ else {
            return Err(self.err(path + "/type", "invalid accessor type"));
        };
        if !types.contains(&ty) {
            return Err(self.err(
                path + "/type",
                format!("accessor type {ty:?} is not what {from} needs ({types:?})"),
            ));
        }
        let normalized = acc.normalized;
        let count64 = acc.count.0;
        let comps = ty.multiplicity();
        let csize = component.size();
        let elem = comps * csize;
        let view = acc.buffer_view.map(|v| v.value());
        let acc_off = acc.byte_offset.map_or(0, |o| o.0);
        let sparse = acc.sparse.clone();
        if normalized && matches!(component, ComponentType::U32 | ComponentType::F32) {
            return Err(self.err(
                path + "/normalized",
                format!("{component:?} components cannot be normalized"),
            ));
        }
        // Elements decoded: the accessor's, up to `limit`. An accessor
        // without a buffer view is all zeros, so nothing but the budget
        // bounds its count.
        let kept64 = count64.min(limit as u64);
        let kept = usize::try_from(kept64).unwrap_or(usize::MAX);
        let decoded = format_args!(
            "accessor {a}: {} {ty:?} elements of {comps} components, decoded as f64",
            fmt_count(kept64)
        );
        let mut values;
        let view_ref = match view {
            Some(v) => {
                let vr = self.view_bytes(v, &jp(format_args!("{path}/bufferView")))?;
                let view_len = (vr.end - vr.start) as u64;
                let stride = vr.stride.unwrap_or(elem) as u64;
                if stride < elem as u64 {
                    return Err(self.err(
                        path,
                        format!(
                            "buffer view stride {stride} is smaller than the element size {elem}"
                        ),
                    ));
                }
                let need = if count64 == 0 {
                    Some(0)
                } else {
                    (count64 - 1)
                        .checked_mul(stride)
                        .and_then(|x| x.checked_add(elem as u64))
                        .and_then(|x| x.checked_add(acc_off))
                };
                match need {
                    Some(need) if need <= view_len => {}
                    _ => {
                        return Err(self.err(
                            path,
                            format!(
                                "accessor out of bounds: {count64} elements of {elem} bytes at byteOffset {acc_off} (stride {stride}) do not fit buffer view {v} ({view_len} bytes)"
                            ),
                        ))
                    }
                }
                values = self.alloc::<f64>(kept.saturating_mul(comps), decoded, &path)?;
                Some((vr, stride as usize))
            }
            None => {
                values = self.alloc::<f64>(kept.saturating_mul(comps), decoded, &path)?;
                values.resize(kept * comps, 0.0);
                None
            }
        };
        if let Some((vr, stride)) = view_ref {
            let bytes = self.view_slice(&vr);
            for e in 0..kept {
                let base = acc_off as usize + e * stride;
                for c in 0..comps {
                    let at = base + c * csize;
                    let x = read_component(bytes, at, component)
                        .ok_or_else(|| self.err(path.clone(), "accessor out of bounds"))?;
                    values.push(x);
                }
            }
        }
        // Saturated where `usize` is narrower: only compared with indices.
        let count = usize::try_from(count64).unwrap_or(usize::MAX);
        if let Some(sp) = sparse {
            let spath = jp(format_args!("{path}/sparse"));
            let n = sp.count.0;
            if n == 0 || n > count64 {
                return Err(self.err(
                    spath + "/count",
                    format!("sparse count {n} is not in 1..={count64}"),
                ));
            }
            let Checked::Valid(json::accessor::IndexComponentType(icomp)) =
                sp.indices.component_type
            else {
                return Err(self.err(spath + "/indices/componentType", "invalid componentType"));
            };
            let ivr = self.view_bytes(
                sp.indices.buffer_view.value(),
                &jp(format_args!("{spath}/indices/bufferView")),
            )?;
            let vvr = self.view_bytes(
                sp.values.buffer_view.value(),
                &jp(format_args!("{spath}/values/bufferView")),
            )?;
            // Every index and value must lie in its view, which bounds `n`.
            let (ilen, vlen) = ((ivr.end - ivr.start) as u64, (vvr.end - vvr.start) as u64);
            let ioff = sp.indices.byte_offset.0;
            let voff = sp.values.byte_offset.0;
            if n.saturating_mul(icomp.size() as u64).saturating_add(ioff) > ilen {
                return Err(self.err(spath + "/indices", "sparse indices out of bounds"));
            }
            if n.saturating_mul(elem as u64).saturating_add(voff) > vlen {
                return Err(self.err(spath + "/values", "sparse values out of bounds"));
            }
            let (n, ioff, voff) = (n as usize, ioff as usize, voff as usize);
            let mut last: Option<usize> = None;
            for k in 0..n {
                let at = ioff + k * icomp.size();
                let idx = read_component(self.view_slice(&ivr), at, icomp);
                let Some(idx) = idx else {
                    return Err(self.err(spath + "/indices", "sparse indices out of bounds"));
                };
                let idx = idx as usize;
                if idx >= count || last.is_some_and(|l| idx <= l) {
                    return Err(self.err(
                        spath + "/indices",
                        format!("sparse index {idx} is out of range or not increasing"),
                    ));
                }
                last = Some(idx);
                for c in 0..comps {
                    let at = voff + (k * comps + c) * csize;
                    let Some(x) = read_component(self.view_slice(&vvr), at, component) else {
                        return Err(self.err(spath + "/values", "sparse values out of bounds"));
                    };
                    if idx < kept {
                        values[idx * comps + c] = x;
                    }
                }
            }
        }
        if component == ComponentType::F32 {
            if let Some(k) = values.iter().position(|v| !v.is_finite()) {
                return Err(self.err(
                    path,
                    format!("element {} holds NaN or infinity", k / comps.max(1)),
                ));
            }
        }
        Ok(Raw {
            component,
            normalized,
            comps,
            count,
            values,
        })
    }

    /// Reads float data: `F32`, or normalized integers mapped per the spec
    /// (`allow_ints` also accepts unnormalized integers, as
    /// KHR_mesh_quantization does).
    pub(super) fn read_floats(
        &mut self,
        a: usize,
        from: &str,
        types: &[Type],
        allow_ints: bool,
    ) -> Result<(Vec<f32>, usize, usize), ImportError> {
        self.read_floats_upto(a, from, types, allow_ints, usize::MAX)
    }

    /// [`Doc::read_floats`] of the first `limit` elements only (the count
    /// returned is the accessor's own); the `f64` components decoded on the
    /// way are given back to the budget.
    fn read_floats_upto(
        &mut self,
        a: usize,
        from: &str,
        types: &[Type],
        allow_ints: bool,
        limit: usize,
    ) -> Result<(Vec<f32>, usize, usize), ImportError> {
        let raw = self.read_raw(a, from, types, limit)?;
        let div = match raw.component {
            ComponentType::F32 => None,
            _ if raw.normalized => Some(match raw.component {
                ComponentType::I8 => 127.0,
                ComponentType::U8 => 255.0,
                ComponentType::I16 => 32767.0,
                _ => 65535.0,
            }),
            _ if allow_ints => Some(1.0),
            c => {
                return Err(self.err(
                    jp(format_args!("/accessors/{a}/componentType")),
                    format!("{c:?} components must be normalized for {from}"),
                ))
            }
        };
        let mut v = self.alloc::<f32>(
            raw.values.len(),
            format_args!(
                "accessor {a}: {} float components",
                fmt_count(raw.values.len() as u64)
            ),
            &jp(format_args!("/accessors/{a}")),
        )?;
        match div {
            Some(d) if raw.normalized => {
                v.extend(raw.values.iter().map(|&x| ((x / d) as f32).max(-1.0)));
            }
            _ => v.extend(raw.values.iter().map(|&x| x as f32)),
        }
        self.budget.release(bytes_of::<f64>(raw.values.len()));
        Ok((v, raw.comps, raw.count))
    }

    /// Reads unsigned integer data (`U8`, `U16`, `U32`, not normalized).
    fn read_uints(
        &mut self,
        a: usize,
        from: &str,
        types: &[Type],
    ) -> Result<(Vec<u32>, usize, usize), ImportError> {
        let raw = self.read_raw(a, from, types, usize::MAX)?;
        if !matches!(
            raw.component,
            ComponentType::U8 | ComponentType::U16 | ComponentType::U32
        ) || raw.normalized
        {
            return Err(self.err(
                jp(format_args!("/accessors/{a}/componentType")),
                format!(
                    "{from} needs unsigned integer components, found {:?}{}",
                    raw.component,
                    if raw.normalized { " (normalized)" } else { "" }
                ),
            ));
        }
        let mut v = self.alloc::<u32>(
            raw.values.len(),
            format_args!(
                "accessor {a}: {} integer components",
                fmt_count(raw.values.len() as u64)
            ),
            &jp(format_args!("/accessors/{a}")),
        )?;
        v.extend(raw.values.iter().map(|&x| x as u32));
        self.budget.release(bytes_of::<f64>(raw.values.len()));
        Ok((v, raw.comps, raw.count))
    }

    // -----------------------------------------------------------------------
    // Animations
    // -----------------------------------------------------------------------

    pub(super) fn morph_target_count(&self, node: usize, path: &str) -> Result<usize, ImportError> {
        let Some(m) = self.root.nodes.get(node).and_then(|n| n.mesh) else {
            return Err(self.err(path, format!("node {node} has no mesh for morph weights")));
        };
        let Some(mesh) = self.root.meshes.get(m.value()) else {
            return Err(self.err(
                jp(format_args!("/nodes/{node}/mesh")),
                format!("refers to missing mesh {}", m.value()),
            ));
        };
        let n = mesh.weights.as_ref().map_or_else(
            || {
                mesh.primitives
                    .first()
                    .and_then(|p| p.targets.as_ref())
                    .map_or(0, Vec::len)
            },
            Vec::len,
        );
        if n == 0 {
            return Err(self.err(path, format!("node {node} has no morph targets")));
        }
        Ok(n)
    }

    /// Reads animation `a`'s channels, works out its rate and frame count,
    /// and charges its keys and float tracks to the budget; `None` (with a
    /// warning) when no channel animates the skeleton.
    fn prepare_clip(
        &mut self,
        a: usize,
        info: &SkeletonInfo,
        opts: &GltfOptions,
    ) -> Result<Option<PreparedClip>, ImportError> {
        let anim = &self.root.animations[a];
        let name = anim
            .name
            .clone()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| format!("animation{a}"));
        let channels: Vec<(usize, usize, Checked<Property>)> = anim
            .channels
            .iter()
            .map(|c| (c.sampler.value(), c.target.node.value(), c.target.path))
            .collect();
        let samplers: Vec<(usize, usize, Checked<Interpolation>)> = anim
            .samplers
            .iter()
            .map(|s| (s.input.value(), s.output.value(), s.interpolation))
            .collect();
        let mut tracks = Vec::new();
        let mut weights = Vec::new();
        let mut float_count = 0usize;
        let mut track_bytes = 0u64;
        let mut ignored = 0usize;
        for (c, &(s, node, prop)) in channels.iter().enumerate() {
            let cpath = jp(format_args!("/animations/{a}/channels/{c}"));
            let node = self.node_ref(node, format!("{cpath}/target/node"))?;
            let Checked::Valid(prop) = prop else {
                return Err(self.err(
                    format!("{cpath}/target/path"),
                    "unknown animation target path",
                ));
            };
            let Some(&(input, output, interp)) = samplers.get(s) else {
                return Err(self.err(
                    format!("{cpath}/sampler"),
                    format!("refers to missing sampler {s}"),
                ));
            };
            let spath = jp(format_args!("/animations/{a}/samplers/{s}"));
            let Checked::Valid(interpolation) = interp else {
                return Err(self.err(format!("{spath}/interpolation"), "unknown interpolation"));
            };
            let joint = info.node_to_joint.get(&node).copied();
            let (target, width, ty) = match (prop, joint) {
                (Property::MorphTargetWeights, _) => {
                    let n = self.morph_target_count(node, &format!("{cpath}/target/node"))?;
                    let label = self.morph_label(node);
                    let first = float_count;
                    float_count = float_count.saturating_add(n);
                    weights.push((label, n));
                    (Target::Weights(node, first), n, Type::Scalar)
                }
                (_, None) => {
                    ignored += 1;
                    continue;
                }
                (Property::Translation, Some(j)) => (Target::Translation(j), 3, Type::Vec3),
                (Property::Rotation, Some(j)) => (Target::Rotation(j), 4, Type::Vec4),
                (Property::Scale, Some(j)) => (Target::Scale(j), 3, Type::Vec3),
            };
            let (times, _, keys) =
                self.read_floats(input, &format!("{spath}/input"), &[Type::Scalar], false)?;
            if keys == 0 {
                return Err(self.err(format!("{spath}/input"), "sampler has no keyframes"));
            }
            if let Some(k) = times.windows(2).position(|w| w[1] < w[0]) {
                return Err(self.err(
                    jp(format_args!("/accessors/{input}")),
                    format!("keyframe times decrease at key {}", k + 1),
                ));
            }
            let allow_ints = false;
            let (values, _, vcount) =
                self.read_floats(output, &format!("{spath}/output"), &[ty], allow_ints)?;
            let per_key = if interpolation == Interpolation::CubicSpline {
                3
            } else {
                1
            };
            let expected =
                keys as u64 * per_key * if ty == Type::Scalar { width as u64 } else { 1 };
            if vcount as u64 != expected {
                return Err(self.err(
                    format!("{spath}/output"),
                    format!(
                        "output has {vcount} elements, expected {expected} for {keys} {interpolation:?} keys{}",
                        if ty == Type::Scalar { format!(" of {width} morph weights") } else { String::new() }
                    ),
                ));
            }
            if let Target::Rotation(_) = target {
                let stride = 4;
                for k in 0..keys {
                    let at = (k * per_key as usize + usize::from(per_key == 3)) * stride;
                    let q = [values[at], values[at + 1], values[at + 2], values[at + 3]];
                    if qdot(q, q) < 1e-12 {
                        return Err(self.err(
                            jp(format_args!("/accessors/{output}")),
                            format!("rotation key {k} is a zero quaternion"),
                        ));
                    }
                }
            }
            track_bytes += bytes_of::<f32>(times.len()) + bytes_of::<f32>(values.len());
            tracks.push(Track {
                target,
                interpolation,
                times,
                values,
                width,
            });
        }
        if ignored > 0 {
            self.warnings.push(format!(
                "clip {name:?}: {ignored} channel(s) animate nodes outside the skeleton and were ignored"
            ));
        }
        if tracks.is_empty() {
            self.warnings.push(format!(
                "clip {name:?}: no channel animates the skeleton; skipped"
            ));
            return Ok(None);
        }
        let start = tracks
            .iter()
            .map(|t| f64::from(t.times[0]))
            .fold(f64::INFINITY, f64::min);
        let end = tracks
            .iter()
            .map(|t| f64::from(t.times[t.times.len() - 1]))
            .fold(f64::NEG_INFINITY, f64::max);
        let rate = match opts.sample_rate {
            Some(r) => f64::from(r),
            None => detect_rate(&tracks, start).unwrap_or(f64::from(DEFAULT_SAMPLE_RATE)),
        };
        let span = ((end - start) * rate - 1e-3).ceil().max(0.0);
        let clip_path = jp(format_args!("/animations/{a}"));
        if span.is_nan() || span >= MAX_FRAMES as f64 {
            return Err(self.err(
                clip_path,
                format!(
                    "clip {name:?} lasts {:.3} s: {span} frames at {rate} Hz exceed the import limit of {} frames",
                    end - start,
                    fmt_count(MAX_FRAMES as u64)
                ),
            ));
        }
        let frames = span as usize + 1;
        let joints = info.rest.len();
        let soa = info.skeleton.view().soa_count();
        self.charge(
            bytes_of::<SoaTransform>(frames.saturating_mul(soa)),
            format_args!("clip {name:?}: {}", fmt_keys(frames as u64, joints, soa)),
            &clip_path,
        )?;
        if float_count > 0 {
            // Values, plus each track's name (`morph/<label>/<index>`).
            let names: u64 = weights
                .iter()
                .map(|(label, n)| (*n as u64).saturating_mul(label.len() as u64 + 7 + 20))
                .fold(0, u64::saturating_add);
            let per_track = bytes_of::<f32>(frames) + bytes_of::<FloatTrack>(1);
            self.charge(
                (float_count as u64)
                    .saturating_mul(per_track)
                    .saturating_add(names),
                format_args!(
                    "clip {name:?}: {} morph-weight tracks × {} frames",
                    fmt_count(float_count as u64),
                    fmt_count(frames as u64)
                ),
                &clip_path,
            )?;
        }
        Ok(Some(PreparedClip {
            a,
            name,
            tracks,
            track_bytes,
            weights,
            float_count,
            start,
            end,
            rate,
            frames,
        }))
    }

    /// Resamples a prepared clip (its keys and float tracks were charged by
    /// [`Doc::prepare_clip`]) and gives its channels' keys back to the budget.
    fn resample_clip(
        &mut self,
        p: PreparedClip,
        info: &SkeletonInfo,
    ) -> Result<OwnedClip, ImportError> {
        let PreparedClip {
            a,
            name,
            tracks,
            track_bytes,
            weights,
            float_count,
            start,
            end,
            rate,
            frames,
        } = p;
        let clip_path = jp(format_args!("/animations/{a}"));
        let alloc_err = |this: &Self, e: std::collections::TryReserveError| {
            this.err(
                clip_path.clone(),
                format!("clip {name:?}: cannot allocate: {e}"),
            )
        };
        let joints = info.rest.len();
        let soa = info.skeleton.view().soa_count();
        let mut keys = Vec::new();
        keys.try_reserve_exact(frames * soa)
            .map_err(|e| alloc_err(self, e))?;
        keys.resize(frames * soa, SoaTransform::IDENTITY);
        let mut floats: Vec<FloatTrack> = Vec::new();
        floats
            .try_reserve_exact(float_count)
            .map_err(|e| alloc_err(self, e))?;
        for (label, n) in &weights {
            for t in 0..*n {
                let mut values = Vec::new();
                values
                    .try_reserve_exact(frames)
                    .map_err(|e| alloc_err(self, e))?;
                values.resize(frames, 0.0);
                floats.push(FloatTrack {
                    name: format!("morph/{label}/{t}"),
                    values,
                });
            }
        }
        let mut prev: Vec<Option<[f32; 4]>> = vec![None; joints];
        let mut pose = info.rest.clone();
        let mut scratch = Vec::new();
        for f in 0..frames {
            let t = if f + 1 == frames && frames > 1 {
                end
            } else {
                (start + f as f64 / rate).min(end)
            } as f32;
            pose.copy_from_slice(&info.rest);
            for tr in &tracks {
                scratch.clear();
                evaluate(tr, t, &mut scratch);
                match tr.target {
                    Target::Translation(j) => {
                        pose[j].translation = Vec3::new(scratch[0], scratch[1], scratch[2]);
                    }
                    Target::Scale(j) => {
                        pose[j].scale = Vec3::new(scratch[0], scratch[1], scratch[2]);
                    }
                    Target::Rotation(j) => {
                        let q = [scratch[0], scratch[1], scratch[2], scratch[3]];
                        let q = normalize4(q).or(prev[j]).unwrap_or([0.0, 0.0, 0.0, 1.0]);
                        pose[j].rotation = Quat::new(q[0], q[1], q[2], q[3]);
                    }
                    Target::Weights(_, first) => {
                        for (k, v) in scratch.iter().enumerate() {
                            floats[first + k].values[f] = *v;
                        }
                    }
                }
            }
            for (j, p) in pose.iter_mut().enumerate() {
                if let Some(w) = &info.bake[j] {
                    if let Some((t, _)) = decompose(&(*w * p.to_matrix())) {
                        *p = t;
                    }
                }
                let mut q = p.rotation.to_array();
                if let Some(pq) = prev[j] {
                    if qdot(pq, q) < 0.0 {
                        q = q.map(|v| -v);
                    }
                }
                prev[j] = Some(q);
                // Components below `TINY` (float noise) become zero: their
                // products are subnormal, which x86 handles in microcode.
                p.rotation = Quat::new(q[0], q[1], q[2], q[3]).flush_tiny();
                keys[f * soa + j / 4].set(j % 4, p);
            }
        }
        drop(tracks);
        self.budget.release(track_bytes);
        let clip = OwnedClip::new(name.clone(), rate as f32, soa, keys)
            .and_then(|c| c.with_float_tracks(floats))
            .map_err(|e| self.err(clip_path, format!("clip {name:?}: {e}")))?;
        Ok(clip)
    }

    // -----------------------------------------------------------------------
    // Meshes
    // -----------------------------------------------------------------------

    /// The meshes of skinned nodes, with up to `slots` (4 or 8) influences
    /// per vertex, and the meshes of nodes without a skin that hang below a
    /// joint (`parents`, `locals`: the node hierarchy and its local rest
    /// transforms), bound rigidly to that joint, in node order.
    fn import_meshes(
        &mut self,
        info: &SkeletonInfo,
        slots: usize,
        parents: &[Option<usize>],
        locals: &[Transform],
    ) -> Result<Vec<Mesh>, ImportError> {
        let mut out = Vec::new();
        let with_mesh: Vec<(usize, Option<usize>, Option<usize>)> = self
            .root
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.skin.is_some() || n.mesh.is_some())
            .map(|(i, n)| (i, n.mesh.map(|m| m.value()), n.skin.map(|s| s.value())))
            .collect();
        // IBMs of each skin, per sinew joint, shared by the nodes using it.
        let mut skin_cache: HashMap<usize, Rc<Binding>> = HashMap::new();
        for (node, mesh, skin) in with_mesh {
            let rigid = skin.is_none();
            let binding = match skin {
                Some(skin) => {
                    if skin >= self.root.skins.len() {
                        return Err(self.err(
                            jp(format_args!("/nodes/{node}/skin")),
                            format!("refers to missing skin {skin}"),
                        ));
                    }
                    if mesh.is_none() {
                        self.warnings
                            .push(format!("node {node} has a skin but no mesh; ignored"));
                        continue;
                    }
                    match skin_cache.get(&skin) {
                        Some(b) => Rc::clone(b),
                        None => {
                            let b = Rc::new(self.skin_binding(skin, info)?);
                            skin_cache.insert(skin, Rc::clone(&b));
                            b
                        }
                    }
                }
                None => match self.rigid_binding(node, info, parents, locals)? {
                    Some(b) => Rc::new(b),
                    // A mesh outside the character (a prop, the ground).
                    None => continue,
                },
            };
            let Some(m) = mesh else { continue };
            if m >= self.root.meshes.len() {
                return Err(self.err(
                    jp(format_args!("/nodes/{node}/mesh")),
                    format!("refers to missing mesh {m}"),
                ));
            }
            let prims = self.root.meshes[m].primitives.len();
            let mesh_name = match self.root.meshes[m].name.as_deref() {
                Some(s) if !s.is_empty() => s.to_string(),
                _ => self.node_name(node),
            };
            for p in 0..prims {
                let name = if prims > 1 {
                    format!("{mesh_name}/{p}")
                } else {
                    mesh_name.clone()
                };
                if let Some(mut mesh) =
                    self.import_primitive(m, p, node, &binding.joint_of, name, slots, rigid)?
                {
                    if let Some(c) = &binding.shape {
                        apply_bind_shape(&mut mesh, c);
                    }
                    let mut ibm = self.alloc(
                        binding.ibm.len(),
                        format_args!(
                            "mesh {:?}: {} inverse bind matrices",
                            mesh.name,
                            binding.ibm.len()
                        ),
                        &jp(format_args!("/meshes/{m}/primitives/{p}")),
                    )?;
                    ibm.extend_from_slice(&binding.ibm);
                    mesh.inverse_bind = ibm;
                    out.push(mesh);
                }
            }
        }
        Ok(out)
    }

    /// The binding of a node without a skin: its mesh follows the nearest
    /// joint at or above it rigidly. The vertices are taken to model space
    /// (glTF world space, as the skeleton's) by the node's world rest
    /// transform, and the inverse binds are the skeleton's own, so that at
    /// rest every palette is the identity and, posed, the mesh moves with
    /// its joint as the node hierarchy moves it. `None` when no joint lies
    /// above the node.
    fn rigid_binding(
        &mut self,
        node: usize,
        info: &SkeletonInfo,
        parents: &[Option<usize>],
        locals: &[Transform],
    ) -> Result<Option<Binding>, ImportError> {
        let mut at = Some(node);
        let joint = loop {
            match at {
                None => return Ok(None),
                Some(x) => match info.node_to_joint.get(&x) {
                    Some(&j) => break j,
                    None => at = parents.get(x).copied().flatten(),
                },
            }
        };
        let mut world = locals
            .get(node)
            .map_or(Mat4::IDENTITY, Transform::to_matrix);
        let mut up = parents.get(node).copied().flatten();
        while let Some(p) = up {
            world = locals.get(p).map_or(Mat4::IDENTITY, Transform::to_matrix) * world;
            up = parents.get(p).copied().flatten();
        }
        let view = info.skeleton.view();
        let mut ibm: Vec<Mat4> = self.alloc(
            view.joint_count(),
            format_args!("node {node}: {} inverse bind matrices", view.joint_count()),
            &jp(format_args!("/nodes/{node}")),
        )?;
        ibm.extend_from_slice(view.inverse_bind());
        let shape = (world.max_abs_diff(&Mat4::IDENTITY) > 1e-7).then_some(world);
        Ok(Some(Binding {
            ibm,
            joint_of: vec![joint as u16],
            shape,
        }))
    }

    /// Per-sinew-joint inverse bind matrices of a skin and the sinew index of
    /// each of its joints.
    fn skin_binding(&mut self, s: usize, info: &SkeletonInfo) -> Result<Binding, ImportError> {
        let view = info.skeleton.view();
        let mut ibm: Vec<Mat4> = self.alloc(
            view.joint_count(),
            format_args!("skin {s}: {} inverse bind matrices", view.joint_count()),
            &jp(format_args!("/skins/{s}")),
        )?;
        ibm.extend_from_slice(view.inverse_bind());
        let joints: Vec<usize> = self.root.skins[s]
            .joints
            .iter()
            .map(|j| j.value())
            .collect();
        let joint_of: Vec<u16> = joints
            .iter()
            .map(|j| info.node_to_joint.get(j).map_or(0, |&x| x as u16))
            .collect();
        if let Some(acc) = self.root.skins[s].inverse_bind_matrices {
            let from = jp(format_args!("/skins/{s}/inverseBindMatrices"));
            // The matrices of the skin's joints only (an accessor may declare more).
            let (m, _, count) =
                self.read_floats_upto(acc.value(), &from, &[Type::Mat4], false, joints.len())?;
            if count < joints.len() {
                return Err(self.err(
                    from,
                    format!("{count} inverse bind matrices for {} joints", joints.len()),
                ));
            }
            for (k, &j) in joint_of.iter().enumerate() {
                let v = &m[k * 16..k * 16 + 16];
                ibm[j as usize] = Mat4 {
                    cols: [
                        [v[0], v[1], v[2], v[3]],
                        [v[4], v[5], v[6], v[7]],
                        [v[8], v[9], v[10], v[11]],
                        [v[12], v[13], v[14], v[15]],
                    ],
                };
            }
            self.free(m);
        } else {
            for &j in &joint_of {
                ibm[j as usize] = Mat4::IDENTITY;
            }
        }
        let shape = self.fold_bind_shape(s, info, &mut ibm, &joint_of);
        Ok(Binding {
            ibm,
            joint_of,
            shape,
        })
    }

    /// Normalises a skin so that `fk(rest) * ibm` is the identity where the
    /// file allows it.
    ///
    /// `C = fk(rest) * ibm` of the skin's root-most joint is the skin's "bind
    /// shape": IBMs authored relative to a node above the skeleton (as
    /// COLLADA converters write them) give the same `C` for every joint.
    /// When `C` is not the identity it is folded into the mesh: the IBMs
    /// become `ibm * C⁻¹` and the vertices are transformed by `C`. That
    /// leaves every skinned result exactly as the file defines it. Joints
    /// whose `fk(rest) * ibm` still differs from the identity afterwards have
    /// IBMs that disagree with the node rest pose; they are kept as in the
    /// file and named in a warning. Returns `C` when folded.
    fn fold_bind_shape(
        &mut self,
        s: usize,
        info: &SkeletonInfo,
        ibm: &mut [Mat4],
        joint_of: &[u16],
    ) -> Option<Mat4> {
        let view = info.skeleton.view();
        let mut model = vec![Mat4::IDENTITY; view.joint_count()];
        fk::local_to_model(&FkJob::new(&view, view.rest_pose()), &mut model).ok()?;
        let mut joints: Vec<usize> = joint_of.iter().map(|&j| j as usize).collect();
        joints.sort_unstable();
        joints.dedup();
        let root = *joints.first()?;
        let c0 = model[root] * ibm[root];
        let rel = |a: &Mat4| {
            let scale = a.cols.iter().flatten().fold(1.0f32, |m, v| m.max(v.abs()));
            a.max_abs_diff(&Mat4::IDENTITY) / scale
        };
        let affine = c0.cols[0][3] == 0.0 && c0.cols[1][3] == 0.0 && c0.cols[2][3] == 0.0;
        let count_off = |ibm: &[Mat4]| {
            joints
                .iter()
                .filter(|&&j| rel(&(model[j] * ibm[j])) > 1e-4)
                .count()
        };
        let mut folded = None;
        if affine && rel(&c0) > 1e-5 {
            if let Some(inv) = c0.inverse_affine() {
                let mut trial = ibm.to_vec();
                for &j in &joints {
                    trial[j] = ibm[j] * inv;
                }
                // Only a bind shape when it makes most joints consistent.
                if count_off(&trial) * 2 <= joints.len() {
                    ibm.copy_from_slice(&trial);
                    self.warnings.push(format!(
                        "skin {s}: inverse bind matrices are relative to a bind-shape transform (fk(rest) * ibm = C != identity); C was folded into the mesh vertices, skinned results are unchanged"
                    ));
                    folded = Some(c0);
                }
            }
        }
        if folded.is_none() {
            if let Some(scale) = common_uniform_scale(joints.iter().map(|&j| model[j] * ibm[j])) {
                // Not a whole bind shape (the rest pose differs from the bind
                // pose), but every joint's `fk(rest) * ibm` carries the same
                // uniform scale, e.g. an armature scaled by 100 above IBMs in
                // its own units. Folding it into the vertices leaves every
                // skinned result as it was and makes the palettes rigid, which
                // DQS needs (it drops any scale it finds).
                let c = Mat4::from_trs(Vec3::ZERO, Quat::IDENTITY, Vec3::splat(scale));
                let inv = Mat4::from_trs(Vec3::ZERO, Quat::IDENTITY, Vec3::splat(1.0 / scale));
                for &j in &joints {
                    ibm[j] = ibm[j] * inv;
                }
                self.warnings.push(format!(
                    "skin {s}: fk(rest) * ibm scales every joint uniformly by {scale}; the scale was folded into the mesh vertices, skinned results are unchanged"
                ));
                folded = Some(c);
            }
        }
        let off: Vec<(f32, usize)> = joints
            .iter()
            .map(|&j| (rel(&(model[j] * ibm[j])), j))
            .filter(|&(e, _)| e > 1e-4)
            .collect();
        if let Some(&(worst, j)) = off.iter().max_by(|a, b| a.0.total_cmp(&b.0)) {
            self.warnings.push(format!(
                "skin {s}: the inverse bind matrices of {} of its {} joints disagree with the node rest pose (fk(rest) * ibm is off identity by up to {worst:.3} relative, at joint {:?}); kept as in the file",
                off.len(),
                joints.len(),
                view.joint_name(j).unwrap_or("")
            ));
        }
        folded
    }

    /// Primitive `p` of mesh `m` on node `node`: skinned by the skin whose
    /// joints are `joint_of`, or, when `rigid`, bound with weight 1 to
    /// `joint_of[0]` (`JOINTS_n`/`WEIGHTS_n` are ignored, as the spec asks
    /// of a node without a skin).
    #[allow(clippy::too_many_arguments)]
    fn import_primitive(
        &mut self,
        m: usize,
        p: usize,
        node: usize,
        joint_of: &[u16],
        name: String,
        slots: usize,
        rigid: bool,
    ) -> Result<Option<Mesh>, ImportError> {
        let ppath = jp(format_args!("/meshes/{m}/primitives/{p}"));
        let prim = &self.root.meshes[m].primitives[p];
        let prim_indices = prim.indices.map(|i| i.value());
        let attributes: HashMap<Semantic, usize> = prim
            .attributes
            .iter()
            .filter_map(|(k, v)| match k {
                Checked::Valid(s) => Some((s.clone(), v.value())),
                Checked::Invalid => None,
            })
            .collect();
        let Checked::Valid(mode) = prim.mode else {
            return Err(self.err(format!("{ppath}/mode"), "invalid primitive mode"));
        };
        if !matches!(
            mode,
            Mode::Triangles | Mode::TriangleStrip | Mode::TriangleFan
        ) {
            self.warnings.push(format!(
                "{ppath}: {mode:?} primitive of mesh {name:?} is not triangles; skipped"
            ));
            return Ok(None);
        }
        let attr = |s: Semantic| attributes.get(&s).copied();
        let pos = attr(Semantic::Positions);
        let normal = attr(Semantic::Normals);
        let tangent = attr(Semantic::Tangents);
        let mut sets = Vec::new();
        for k in 0.. {
            match (attr(Semantic::Joints(k)), attr(Semantic::Weights(k))) {
                (Some(j), Some(w)) => sets.push((k, j, w)),
                (None, None) => break,
                (Some(_), None) => {
                    return Err(self.err(
                        format!("{ppath}/attributes/JOINTS_{k}"),
                        format!("JOINTS_{k} without WEIGHTS_{k}"),
                    ))
                }
                (None, Some(_)) => {
                    return Err(self.err(
                        format!("{ppath}/attributes/WEIGHTS_{k}"),
                        format!("WEIGHTS_{k} without JOINTS_{k}"),
                    ))
                }
            }
        }
        let indices = prim_indices;
        let Some(pos) = pos else {
            return Err(self.err(
                format!("{ppath}/attributes"),
                "primitive has no POSITION attribute",
            ));
        };
        if rigid {
            sets.clear();
        } else if sets.is_empty() {
            return Err(self.err(
                format!("{ppath}/attributes"),
                "skinned primitive has no JOINTS_0/WEIGHTS_0 attributes",
            ));
        }
        // Everything below is charged as it is allocated, and temporaries
        // are given back when freed.
        let apath = |s: &str| format!("{ppath}/attributes/{s}");
        let (pv, _, n) = self.read_floats(pos, &apath("POSITION"), &[Type::Vec3], true)?;
        let positions: Vec<[f32; 3]> = self.rows(&pv, &name, "positions", &ppath)?;
        self.free(pv);
        let count_check = |this: &Self, what: &str, c: usize| {
            if c == n {
                Ok(())
            } else {
                Err(this.err(
                    apath(what),
                    format!("{what} has {c} elements, POSITION has {n}"),
                ))
            }
        };
        let normals = match normal {
            Some(a) => {
                let (v, _, c) = self.read_floats(a, &apath("NORMAL"), &[Type::Vec3], false)?;
                count_check(self, "NORMAL", c)?;
                let rows = self.rows(&v, &name, "normals", &ppath)?;
                self.free(v);
                rows
            }
            None => Vec::new(),
        };
        let tangents = match tangent {
            Some(a) => {
                let (v, _, c) = self.read_floats(a, &apath("TANGENT"), &[Type::Vec4], false)?;
                count_check(self, "TANGENT", c)?;
                let rows = self.rows(&v, &name, "tangents", &ppath)?;
                self.free(v);
                rows
            }
            None => Vec::new(),
        };
        let (morph_targets, morph_weights) = self.import_targets(
            m,
            p,
            node,
            n,
            [!normals.is_empty(), !tangents.is_empty()],
            &name,
        )?;
        // (sinew joint, weight) candidates per vertex over every set.
        let per_vertex = 4 * sets.len();
        let cand_bytes = bytes_of::<(u16, f32)>(n.saturating_mul(per_vertex));
        self.charge(
            cand_bytes,
            format_args!(
                "mesh {name:?}: {} vertices × {per_vertex} influence candidates",
                fmt_count(n as u64)
            ),
            &ppath,
        )?;
        let mut cands: Vec<Vec<(u16, f32)>> = self.alloc(
            n,
            format_args!("mesh {name:?}: {} vertices", fmt_count(n as u64)),
            &ppath,
        )?;
        for _ in 0..n {
            cands.push(Vec::with_capacity(per_vertex));
        }
        for &(k, ja, wa) in &sets {
            let jname = format!("JOINTS_{k}");
            let wname = format!("WEIGHTS_{k}");
            let (jv, _, jc) = self.read_uints(ja, &apath(&jname), &[Type::Vec4])?;
            count_check(self, &jname, jc)?;
            let (wv, _, wc) = self.read_floats(wa, &apath(&wname), &[Type::Vec4], false)?;
            count_check(self, &wname, wc)?;
            for v in 0..n {
                for c in 0..4 {
                    let (j, w) = (jv[v * 4 + c] as usize, wv[v * 4 + c]);
                    if w < 0.0 {
                        return Err(self.err(
                            jp(format_args!("/accessors/{wa}")),
                            format!("negative weight {w} at vertex {v}"),
                        ));
                    }
                    if w == 0.0 {
                        continue;
                    }
                    let Some(&s) = joint_of.get(j) else {
                        return Err(self.err(
                            jp(format_args!("/accessors/{ja}")),
                            format!(
                                "joint index {j} at vertex {v} is past the skin's {} joints",
                                joint_of.len()
                            ),
                        ));
                    };
                    match cands[v].iter_mut().find(|(x, _)| *x == s) {
                        Some(e) => e.1 += w,
                        None => cands[v].push((s, w)),
                    }
                }
            }
            self.free(jv);
            self.free(wv);
        }
        let fallback = joint_of.first().copied().unwrap_or(0);
        let (mut lost, mut unweighted) = (0usize, 0usize);
        let n1 = if slots > 4 { n } else { 0 };
        let what = format_args!("mesh {name:?}: {} influences", fmt_count(n as u64));
        let mut joints: Vec<[u16; 4]> = self.alloc(n, what, &ppath)?;
        let mut weights: Vec<[f32; 4]> = self.alloc(n, what, &ppath)?;
        let mut joints1: Vec<[u16; 4]> = self.alloc(n1, what, &ppath)?;
        let mut weights1: Vec<[f32; 4]> = self.alloc(n1, what, &ppath)?;
        let mut more_than_four = false;
        for c in &mut cands {
            c.sort_by(|a, b| b.1.total_cmp(&a.1));
            let kept: f32 = c.iter().take(slots).map(|x| x.1).sum();
            if c.len() > slots && c[slots..].iter().any(|x| x.1 > 0.0) {
                lost += 1;
            }
            let (mut jj, mut ww) = ([0u16; 8], [0f32; 8]);
            if kept > 0.0 && kept.is_finite() {
                for (s, &(j, w)) in c.iter().take(slots).enumerate() {
                    jj[s] = j;
                    ww[s] = w / kept;
                }
            } else {
                unweighted += 1;
                jj[0] = fallback;
                ww[0] = 1.0;
            }
            more_than_four |= ww[4] > 0.0;
            joints.push([jj[0], jj[1], jj[2], jj[3]]);
            weights.push([ww[0], ww[1], ww[2], ww[3]]);
            if slots > 4 {
                joints1.push([jj[4], jj[5], jj[6], jj[7]]);
                weights1.push([ww[4], ww[5], ww[6], ww[7]]);
            }
        }
        self.free(cands);
        self.budget.release(cand_bytes);
        if !more_than_four {
            self.free(std::mem::take(&mut joints1));
            self.free(std::mem::take(&mut weights1));
        }
        if lost > 0 {
            self.warnings.push(format!(
                "mesh {name:?}: {lost} vertices had more than {slots} influences and lost weight (kept the {slots} largest, renormalised)"
            ));
        }
        if unweighted > 0 && !rigid {
            self.warnings.push(format!(
                "mesh {name:?}: {unweighted} vertices had no weight; bound to the skin's first joint"
            ));
        }
        let raw_indices: Vec<u32> = match indices {
            Some(a) => {
                let (v, _, _) = self.read_uints(a, &format!("{ppath}/indices"), &[Type::Scalar])?;
                if let Some(k) = v.iter().position(|&i| i as usize >= n) {
                    return Err(self.err(
                        jp(format_args!("/accessors/{a}")),
                        format!("index {} at position {k} is past the {n} vertices", v[k]),
                    ));
                }
                v
            }
            None => {
                let mut v = self.alloc(
                    n,
                    format_args!("mesh {name:?}: {} indices", fmt_count(n as u64)),
                    &ppath,
                )?;
                v.extend(0..n as u32);
                v
            }
        };
        let triangles = match mode {
            Mode::TriangleStrip | Mode::TriangleFan => raw_indices.len().saturating_sub(2),
            _ => 0,
        };
        let mut expanded: Vec<u32> = self.alloc(
            3 * triangles,
            format_args!(
                "mesh {name:?}: {} triangles of a {mode:?}",
                fmt_count(triangles as u64)
            ),
            &ppath,
        )?;
        let indices = match mode {
            Mode::TriangleStrip => {
                expanded.extend((2..raw_indices.len()).flat_map(|i| {
                    let (a, b, c) = (raw_indices[i - 2], raw_indices[i - 1], raw_indices[i]);
                    if i % 2 == 0 {
                        [a, b, c]
                    } else {
                        [b, a, c]
                    }
                }));
                self.free(raw_indices);
                expanded
            }
            Mode::TriangleFan => {
                expanded.extend(
                    (2..raw_indices.len())
                        .flat_map(|i| [raw_indices[0], raw_indices[i - 1], raw_indices[i]]),
                );
                self.free(raw_indices);
                expanded
            }
            _ => {
                if !raw_indices.len().is_multiple_of(3) {
                    let at = match prim_indices {
                        Some(_) => format!("{ppath}/indices"),
                        None => apath("POSITION"),
                    };
                    return Err(self.err(
                        at,
                        format!(
                            "{} triangle-list indices is not a multiple of 3",
                            raw_indices.len()
                        ),
                    ));
                }
                raw_indices
            }
        };
        let mesh = Mesh {
            name,
            positions,
            normals,
            tangents,
            joints,
            weights,
            joints1,
            weights1,
            indices,
            inverse_bind: Vec::new(),
            node_label: self.morph_label(node),
            morph_targets,
            morph_weights,
        };
        Ok(Some(mesh))
    }

    /// The morph targets of primitive `p` of mesh `m` (on node `node`, of
    /// `n` vertices; `base` says whether it has normals and tangents, which
    /// normal and tangent deltas need) and the mesh's default weights.
    /// Every error names the mesh and the target.
    fn import_targets(
        &mut self,
        m: usize,
        p: usize,
        node: usize,
        n: usize,
        base: [bool; 2],
        mesh_name: &str,
    ) -> Result<(Vec<MorphTarget>, Vec<f32>), ImportError> {
        let mesh = &self.root.meshes[m];
        let accessors = |p: &json::mesh::Primitive| -> Vec<[Option<usize>; 3]> {
            p.targets
                .iter()
                .flatten()
                .map(|t| [t.positions, t.normals, t.tangents].map(|a| a.map(|a| a.value())))
                .collect()
        };
        let targets = accessors(&mesh.primitives[p]);
        let first = mesh.primitives.first().map_or(0, |f| accessors(f).len());
        let defaults = mesh.weights.clone();
        let count = targets.len();
        let ppath = jp(format_args!("/meshes/{m}/primitives/{p}"));
        if count != first {
            return Err(self.err(
                format!("{ppath}/targets"),
                format!(
                    "mesh {mesh_name:?}: primitive {p} has {count} morph targets, primitive 0 has {first} (glTF asks for the same number)"
                ),
            ));
        }
        if let Some(w) = &defaults {
            if w.len() != count {
                return Err(self.err(
                    jp(format_args!("/meshes/{m}/weights")),
                    format!(
                        "mesh {mesh_name:?}: {} default morph weights for {count} morph targets",
                        w.len()
                    ),
                ));
            }
            if let Some(k) = w.iter().position(|x| !x.is_finite()) {
                return Err(self.err(
                    jp(format_args!("/meshes/{m}/weights/{k}")),
                    format!("mesh {mesh_name:?}: default weight of morph target {k} is not finite"),
                ));
            }
        }
        if count == 0 {
            return Ok((Vec::new(), Vec::new()));
        }
        let names = self.target_names(m, node, count, mesh_name);
        let mut out: Vec<MorphTarget> = self.alloc(
            count,
            format_args!("mesh {mesh_name:?}: {count} morph targets"),
            &ppath,
        )?;
        for (k, attrs) in targets.iter().enumerate() {
            let name = names.get(k).cloned().unwrap_or_default();
            let label = if name.is_empty() {
                format!("mesh {mesh_name:?}, morph target {k}")
            } else {
                format!("mesh {mesh_name:?}, morph target {k} ({name:?})")
            };
            let tpath = format!("{ppath}/targets/{k}");
            let mut target = MorphTarget {
                name,
                ..MorphTarget::default()
            };
            for (slot, sem) in ["POSITION", "NORMAL", "TANGENT"].into_iter().enumerate() {
                let Some(a) = attrs[slot] else { continue };
                let apath = format!("{tpath}/{sem}");
                if slot > 0 && !base[slot - 1] {
                    return Err(self.err(
                        apath,
                        format!("{label}: {sem} deltas, but the primitive has no {sem} attribute"),
                    ));
                }
                // Quantized (integer) position deltas are allowed as for
                // POSITION itself (KHR_mesh_quantization).
                let (v, _, c) = self
                    .read_floats(a, &apath, &[Type::Vec3], slot == 0)
                    .map_err(|e| ImportError {
                        message: format!("{label}: {}", e.message),
                        ..e
                    })?;
                if c != n {
                    return Err(self.err(
                        apath,
                        format!("{label}: {sem} has {c} deltas, the primitive has {n} vertices"),
                    ));
                }
                let what = format!("morph target {k} {sem} deltas");
                let rows = self.rows(&v, mesh_name, &what, &apath)?;
                self.free(v);
                match slot {
                    0 => target.positions = rows,
                    1 => target.normals = rows,
                    _ => target.tangents = rows,
                }
            }
            out.push(target);
        }
        let mut weights: Vec<f32> = self.alloc(
            count,
            format_args!("mesh {mesh_name:?}: {count} morph weights"),
            &ppath,
        )?;
        match defaults {
            Some(w) => weights.extend(w),
            None => weights.resize(count, 0.0),
        }
        Ok((out, weights))
    }

    /// The names of a mesh's `count` morph targets from `extras.targetNames`
    /// of the mesh (or of its node, where some exporters put it): empty
    /// strings when the file names none; a warning when the names are not
    /// `count` strings (the extras are free-form, so this does not fail the
    /// import).
    fn target_names(
        &mut self,
        m: usize,
        node: usize,
        count: usize,
        mesh_name: &str,
    ) -> Vec<String> {
        let read = |extras: Option<&json::extras::RawValue>| {
            let v: serde_json::Value = serde_json::from_str(extras?.get()).ok()?;
            v.get("targetNames").cloned()
        };
        let mesh_extras = self.root.meshes[m].extras.as_deref();
        let node_extras = self.root.nodes.get(node).and_then(|n| n.extras.as_deref());
        let Some(names) = read(mesh_extras).or_else(|| read(node_extras)) else {
            return Vec::new();
        };
        let list: Option<Vec<String>> = names.as_array().and_then(|a| {
            a.iter()
                .map(|s| s.as_str().map(str::to_string))
                .collect::<Option<Vec<String>>>()
        });
        match list {
            Some(l) if l.len() == count => l,
            _ => {
                self.warnings.push(format!(
                    "mesh {mesh_name:?}: extras.targetNames is not a list of {count} strings; its morph targets are unnamed"
                ));
                Vec::new()
            }
        }
    }

    /// Frees a temporary vector charged for its length and gives the bytes back.
    pub(super) fn free<T>(&mut self, v: Vec<T>) {
        self.budget.release(bytes_of::<T>(v.len()));
    }

    /// `flat` (from an accessor of `N`-component elements) as rows, charged.
    fn rows<const N: usize>(
        &mut self,
        flat: &[f32],
        mesh: &str,
        what: &str,
        path: &str,
    ) -> Result<Vec<[f32; N]>, ImportError> {
        let count = flat.len() / N;
        let mut out = self.alloc(
            count,
            format_args!("mesh {mesh:?}: {} {what}", fmt_count(count as u64)),
            path,
        )?;
        out.extend(flat.chunks_exact(N).map(|c| std::array::from_fn(|i| c[i])));
        Ok(out)
    }
}

fn read_component(bytes: &[u8], at: usize, c: ComponentType) -> Option<f64> {
    let b = |n: usize| bytes.get(at..at.checked_add(n)?);
    Some(match c {
        ComponentType::I8 => f64::from(b(1)?[0] as i8),
        ComponentType::U8 => f64::from(b(1)?[0]),
        ComponentType::I16 => {
            let x = b(2)?;
            f64::from(i16::from_le_bytes([x[0], x[1]]))
        }
        ComponentType::U16 => {
            let x = b(2)?;
            f64::from(u16::from_le_bytes([x[0], x[1]]))
        }
        ComponentType::U32 => {
            let x = b(4)?;
            f64::from(u32::from_le_bytes([x[0], x[1], x[2], x[3]]))
        }
        ComponentType::F32 => {
            let x = b(4)?;
            f64::from(f32::from_le_bytes([x[0], x[1], x[2], x[3]]))
        }
    })
}

/// Decodes `%XX` escapes of a relative URI (invalid escapes are kept as is).
fn percent_decode(uri: &str) -> PathBuf {
    let bytes = uri.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    PathBuf::from(String::from_utf8_lossy(&out).into_owned())
}

/// The common key interval's rate when every track's keys lie on one grid
/// starting at `start`; `None` otherwise (or when no track has two keys).
fn detect_rate(tracks: &[Track], start: f64) -> Option<f64> {
    let mut dt: Option<f64> = None;
    for t in tracks {
        let n = t.times.len();
        if n < 2 {
            continue;
        }
        let d = (f64::from(t.times[n - 1]) - f64::from(t.times[0])) / (n - 1) as f64;
        if d.is_nan() || d <= 0.0 {
            return None;
        }
        match dt {
            None => dt = Some(d),
            Some(x) if (x - d).abs() <= 1e-3 * x => {}
            Some(_) => return None,
        }
    }
    let dt = dt?;
    for t in tracks {
        for (k, &x) in t.times.iter().enumerate() {
            let x = f64::from(x) - start;
            let tol = 1e-3 * dt + 1e-6 * x.abs();
            if (x - (x / dt).round() * dt).abs() > tol {
                return None;
            }
            if k > 0 && t.times.len() > 1 {
                let step = f64::from(t.times[k]) - f64::from(t.times[k - 1]);
                if (step - dt).abs() > tol {
                    return None;
                }
            }
        }
    }
    let mut rate = 1.0 / dt;
    if (rate - rate.round()).abs() < 1e-3 * rate {
        rate = rate.round();
    }
    (rate.is_finite() && rate > 0.0 && rate <= 1000.0).then_some(rate)
}

/// Evaluates track `tr` at time `t` into `out` (`tr.width` values).
fn evaluate(tr: &Track, t: f32, out: &mut Vec<f32>) {
    let w = tr.width;
    let n = tr.times.len();
    let cubic = tr.interpolation == Interpolation::CubicSpline;
    // Value k, component c.
    let val = |k: usize, c: usize| {
        if cubic {
            tr.values[(k * 3 + 1) * w + c]
        } else {
            tr.values[k * w + c]
        }
    };
    // Key k such that times[k] <= t < times[k + 1].
    let k = tr.times.partition_point(|&x| x <= t);
    if k == 0 || n == 1 {
        out.extend((0..w).map(|c| val(0, c)));
        return;
    }
    if k >= n {
        out.extend((0..w).map(|c| val(n - 1, c)));
        return;
    }
    let (k0, k1) = (k - 1, k);
    let td = tr.times[k1] - tr.times[k0];
    let s = if td > 0.0 {
        (t - tr.times[k0]) / td
    } else {
        0.0
    };
    let rotation = matches!(tr.target, Target::Rotation(_));
    match tr.interpolation {
        Interpolation::Step => out.extend((0..w).map(|c| val(k0, c))),
        Interpolation::Linear if rotation => {
            let a = [val(k0, 0), val(k0, 1), val(k0, 2), val(k0, 3)];
            let b = [val(k1, 0), val(k1, 1), val(k1, 2), val(k1, 3)];
            out.extend(slerp(a, b, s));
        }
        Interpolation::Linear => {
            out.extend((0..w).map(|c| val(k0, c) + (val(k1, c) - val(k0, c)) * s));
        }
        Interpolation::CubicSpline => {
            let (s2, s3) = (s * s, s * s * s);
            let h00 = 2.0 * s3 - 3.0 * s2 + 1.0;
            let h10 = s3 - 2.0 * s2 + s;
            let h01 = -2.0 * s3 + 3.0 * s2;
            let h11 = s3 - s2;
            out.extend((0..w).map(|c| {
                let b0 = tr.values[(k0 * 3 + 2) * w + c]; // out-tangent of k0
                let a1 = tr.values[(k1 * 3) * w + c]; // in-tangent of k1
                h00 * val(k0, c) + h10 * td * b0 + h01 * val(k1, c) + h11 * td * a1
            }));
        }
    }
}
