//! `sinew shapes`: deformation beyond skinning drawn as a three-row strip,
//! each row with a figure that says what the shapes did.
//!
//! - Row 1: RobotExpressive's head (its three parts, the meshes with morph
//!   targets) at evenly spaced times of a clip, its facial targets (Angry,
//!   Surprised, Sad) weighted by the clip's morph-weight float tracks,
//!   added in bind space by [`BlendShapes::apply`] and then skinned. The
//!   file's clips key every weight at 0 throughout, so when no clip moves
//!   one, the `Idle` clip's weight tracks are keyed here with one
//!   expression per cell (neutral, then each target, then a mix) and
//!   played like the file's own.
//! - Row 2: a tube skinned to two joints (an arm) bent at the elbow, with
//!   linear blend skinning alone (the inner elbow collapses) and with a
//!   corrective shape added before skinning. The corrective is sculpted in
//!   the posed space of a [`CORRECTIVE_BEND`] bend (each ring of the tube
//!   made round again, of the rest radius, about its centre), taken back
//!   to bind space by [`posed_deltas_to_bind`], and weighted by a
//!   [`Corrective`] driver on the elbow's bend (its twist about the hinge
//!   axis), smoothstep from [`CORRECTIVE_FROM`] to [`CORRECTIVE_BEND`]
//!   (a lighter bend barely flattens the tube; starting the ramp at rest
//!   would swell it there).
//! - Row 3: the same tube with LBS alone and with delta mush ([`MushRig`])
//!   over the LBS result, up to a [`MUSH_BEND`] bend.
//!
//! Tube figures are the narrowest cross-section (the area of the smallest
//! ring of vertices, as a fraction of the rest ring's) and the volume of
//! the closed tube, as a fraction of the rest volume.

use std::error::Error as StdError;
use std::path::{Path, PathBuf};

use sinew_core::clip::TimeMode;
use sinew_core::fk::{local_to_model, FkJob};
use sinew_core::shape::blend::{pack_sparse, BlendOptions, BlendShapes, Deltas, Target};
use sinew_core::shape::driver::{Angle, Corrective, Driver, Ramp, ShapeDrivers};
use sinew_core::shape::mush::MushSettings;
use sinew_core::shape::rbf::posed_deltas_to_bind;
use sinew_core::skin::{lbs_palette, Mat3x4, SkinOutput, SkinVertices};
use sinew_core::soa::set_joint;
use sinew_core::track::store::TrackSet;
use sinew_core::{soa_count, Mat4, Quat, SoaTransform, SoaVec3, Transform, Vec3};
use sinew_std::import::gltf::{self, GltfOptions};
use sinew_std::mush::MushRig;
use sinew_std::{FloatTrack, Mesh, OwnedClip};
use tiny_skia::{Pixmap, Rect};

use crate::ik::{label_rows, row_pixmap};
use crate::render::{draw_triangles, skin_bind_positions, MeshCamera, LBS_TINT};

type Res<T> = Result<T, Box<dyn StdError>>;

/// The model drawn in row 1 when no `--gltf` is given, relative to the
/// working directory (the repository root).
pub const DEFAULT_GLTF: &str = "../shared/data/gltf/threejs-robotexpressive/RobotExpressive.glb";

/// Cells per row.
pub const CELLS: usize = 5;

/// The elbow bend the corrective is sculpted at (and fully on), degrees.
pub const CORRECTIVE_BEND: f32 = 100.0;

/// The elbow bend at which the corrective starts to come in, degrees.
pub const CORRECTIVE_FROM: f32 = 30.0;

/// The strongest bend of the delta-mush row, degrees.
pub const MUSH_BEND: f32 = 120.0;

/// Delta mush smoothing: iterations and step.
pub const MUSH: MushSettings = MushSettings {
    iterations: 12,
    step: 0.5,
};

/// Tube radius, and its rings and vertices per ring.
const RADIUS: f32 = 0.2;
const RINGS: usize = 41;
const AROUND: usize = 16;
/// Where along the tube (x in [0, 2], the elbow at 1) the lower joint's
/// weight rises from 0 to 1.
const BLEND: (f32, f32) = (0.7, 1.3);

/// Cell tints for [`draw_triangles`].
const CORRECTED_TINT: [f32; 3] = [1.0, 0.62, 0.3];
const MUSH_TINT: [f32; 3] = [0.45, 0.62, 1.0];
const FACE_TINT: [f32; 3] = [0.95, 0.85, 0.7];

/// `sinew shapes` arguments.
#[derive(clap::Args, Debug, Clone)]
pub struct ShapesArgs {
    /// Output PNG.
    #[arg(
        short,
        long = "out",
        visible_alias = "output",
        default_value = "shapes.png"
    )]
    pub out: PathBuf,
    /// The model of row 1, a glTF/GLB file whose meshes have morph
    /// targets. Default: RobotExpressive from ../shared/data; without it,
    /// rows 2 and 3 only.
    #[arg(long)]
    pub gltf: Option<PathBuf>,
    /// Cell size in pixels.
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(64..=1024))]
    pub cell: u32,
}

// ---------------------------------------------------------------------------
// The tube
// ---------------------------------------------------------------------------

/// A closed tube along x from 0 to 2 of [`RADIUS`], skinned to joint 0
/// (at the origin) and joint 1 (the elbow, at x = 1), its weight rising
/// over [`BLEND`]; capped at both ends so it has a volume. Ring `r` is
/// vertices `r * AROUND ..`, the two cap centres come last.
fn tube() -> Mesh {
    let mut m = Mesh {
        name: "tube".into(),
        inverse_bind: vec![
            Mat4::IDENTITY,
            Mat4::from_translation(Vec3::new(-1.0, 0.0, 0.0)),
        ],
        ..Mesh::default()
    };
    let mut vertex = |p: [f32; 3], w1: f32| {
        m.positions.push(p);
        m.joints.push([0, 1, 0, 0]);
        m.weights.push([1.0 - w1, w1, 0.0, 0.0]);
    };
    for r in 0..RINGS {
        let x = 2.0 * r as f32 / (RINGS - 1) as f32;
        let w1 = ((x - BLEND.0) / (BLEND.1 - BLEND.0)).clamp(0.0, 1.0);
        for a in 0..AROUND {
            let (s, c) = (std::f32::consts::TAU * a as f32 / AROUND as f32).sin_cos();
            vertex([x, RADIUS * c, RADIUS * s], w1);
        }
    }
    vertex([0.0; 3], 0.0);
    vertex([2.0, 0.0, 0.0], 1.0);
    let i = |r: usize, a: usize| (r * AROUND + a % AROUND) as u32;
    let (c0, c1) = ((RINGS * AROUND) as u32, (RINGS * AROUND + 1) as u32);
    for a in 0..AROUND {
        for r in 0..RINGS - 1 {
            let (p, q, s, u) = (i(r, a), i(r, a + 1), i(r + 1, a), i(r + 1, a + 1));
            m.indices.extend_from_slice(&[p, q, u, p, u, s]);
        }
        // Caps wound outwards like the sides.
        m.indices.extend_from_slice(&[
            c0,
            i(0, a + 1),
            i(0, a),
            c1,
            i(RINGS - 1, a),
            i(RINGS - 1, a + 1),
        ]);
    }
    m
}

/// The tube's local pose and model matrices with the elbow bent `degrees`
/// about +Z (the lower arm turning towards +Y).
fn bent(degrees: f32) -> Res<(Vec<SoaTransform>, [Mat4; 2])> {
    let elbow = Transform {
        translation: Vec3::new(1.0, 0.0, 0.0),
        rotation: Quat::from_rotation_z(degrees.to_radians()),
        scale: Vec3::ONE,
    };
    let mut pose = vec![SoaTransform::IDENTITY; soa_count(2)];
    set_joint(&mut pose, 1, &elbow)?;
    let models = [
        Mat4::IDENTITY,
        Mat4::from_trs(elbow.translation, elbow.rotation, elbow.scale),
    ];
    Ok((pose, models))
}

fn sub(a: [f32; 3], b: [f32; 3]) -> Vec3 {
    Vec3::new(a[0] - b[0], a[1] - b[1], a[2] - b[2])
}

/// Ring `r` of the tube's vertices.
fn ring(positions: &[[f32; 3]], r: usize) -> &[[f32; 3]] {
    &positions[r * AROUND..(r + 1) * AROUND]
}

fn centroid(points: &[[f32; 3]]) -> Vec3 {
    let sum = points
        .iter()
        .fold(Vec3::ZERO, |s, p| s + Vec3::new(p[0], p[1], p[2]));
    sum * (1.0 / points.len().max(1) as f32)
}

/// Area of a ring (a closed polygon, not necessarily planar): half the
/// length of the sum of its fan's cross products about the centroid.
fn ring_area(points: &[[f32; 3]]) -> f32 {
    let c = centroid(points);
    let c = [c.x, c.y, c.z];
    let mut sum = Vec3::ZERO;
    for (k, p) in points.iter().enumerate() {
        let q = points[(k + 1) % points.len()];
        sum = sum + sub(*p, c).cross(sub(q, c));
    }
    0.5 * sum.length()
}

/// Volume enclosed by a closed triangle mesh (divergence theorem).
fn volume(positions: &[[f32; 3]], indices: &[u32]) -> f32 {
    let v = |i: u32| {
        let p = positions[i as usize];
        Vec3::new(p[0], p[1], p[2])
    };
    indices
        .chunks_exact(3)
        .map(|t| v(t[0]).dot(v(t[1]).cross(v(t[2]))) / 6.0)
        .sum()
}

/// What a posed tube measured, as fractions of the rest tube's.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TubeFigures {
    /// Bend, degrees.
    pub bend: f32,
    /// The narrowest ring's area over the rest ring's.
    pub narrowest: f32,
    /// The widest ring's area over the rest ring's (a corrective too
    /// strong for the bend makes the elbow swell).
    pub widest: f32,
    /// The enclosed volume over the rest volume.
    pub volume: f32,
}

fn measure(rest: &Mesh, posed: &[[f32; 3]], bend: f32) -> TubeFigures {
    let rest_ring = ring_area(ring(&rest.positions, 0));
    let (narrowest, widest) = (0..RINGS)
        .map(|r| ring_area(ring(posed, r)))
        .fold((f32::INFINITY, 0.0f32), |(lo, hi), a| {
            (lo.min(a), hi.max(a))
        });
    TubeFigures {
        bend,
        narrowest: narrowest / rest_ring,
        widest: widest / rest_ring,
        volume: volume(posed, &rest.indices) / volume(&rest.positions, &rest.indices),
    }
}

/// The posed-space sculpt of the corrective: every ring of `posed` made
/// round again, of the rest radius, about its centroid, in the plane its
/// vertices span (the bend flattens the rings in the bend plane; the hinge
/// axis, +Z, stays across them). Returns the shift of each vertex.
fn round_rings(posed: &[[f32; 3]]) -> Vec<[f32; 3]> {
    let mut shift = vec![[0.0; 3]; posed.len()];
    for r in 0..RINGS {
        let points = ring(posed, r);
        let c = centroid(points);
        // The ring's in-plane direction of its angle-0 vertex: the
        // cos-weighted sum of the offsets, with the hinge axis taken out.
        let mut u = Vec3::ZERO;
        for (a, p) in points.iter().enumerate() {
            let cos = (std::f32::consts::TAU * a as f32 / AROUND as f32).cos();
            u = u + sub(*p, [c.x, c.y, c.z]) * cos;
        }
        let Some(u) = (u - Vec3::Z * u.dot(Vec3::Z)).try_normalize() else {
            continue;
        };
        for (a, p) in points.iter().enumerate() {
            let (s, co) = (std::f32::consts::TAU * a as f32 / AROUND as f32).sin_cos();
            let target = c + (u * co + Vec3::Z * s) * RADIUS;
            let d = target - Vec3::new(p[0], p[1], p[2]);
            shift[r * AROUND + a] = [d.x, d.y, d.z];
        }
    }
    shift
}

/// A sparse blend shape's storage: the moved vertices and their deltas in
/// SoA blocks.
struct Sparse {
    indices: Vec<u32>,
    blocks: Vec<SoaVec3>,
}

impl Sparse {
    /// The vertices of `dense` that move, packed.
    fn new(dense: &[[f32; 3]], moved: Vec<u32>) -> Res<Sparse> {
        let deltas: Vec<[f32; 3]> = moved.iter().map(|&v| dense[v as usize]).collect();
        let mut blocks = vec![SoaVec3::ZERO; soa_count(deltas.len())];
        pack_sparse(&deltas, &mut blocks)?;
        Ok(Sparse {
            indices: moved,
            blocks,
        })
    }

    fn target(&self) -> Target<'_> {
        Target {
            positions: Some(Deltas::Sparse {
                indices: &self.indices,
                deltas: &self.blocks,
            }),
            ..Target::default()
        }
    }
}

/// `base` with `shapes` weighted by `weights` added, positions only.
fn blend(shapes: &BlendShapes<'_>, weights: &[f32], base: &[[f32; 3]]) -> Res<Vec<[f32; 3]>> {
    let mut out = vec![[0.0; 3]; base.len()];
    shapes.apply(
        weights,
        BlendOptions::default(),
        SkinVertices::positions(base),
        SkinOutput::positions(&mut out),
    )?;
    Ok(out)
}

/// One drawn tube: its posed positions and tint.
struct TubeCell {
    positions: Vec<[f32; 3]>,
    tint: [f32; 3],
}

/// A row of tubes, all through one camera (fitted to the straight and the
/// most bent tubes), a bar in each cell's tint along its bottom.
fn draw_tubes(mesh: &Mesh, cells: &[TubeCell], cell: u32) -> Res<Pixmap> {
    let mut p = row_pixmap(cells.len(), cell)?;
    let size = cell as f32;
    let camera = MeshCamera::fit(
        0.0,
        cells.iter().flat_map(|c| &c.positions),
        size,
        (0.5 * size, 0.5 * size),
    )
    .ok_or("no tube to draw")?;
    for (i, c) in cells.iter().enumerate() {
        let ox = i as f32 * size;
        let camera = camera.at((ox + 0.5 * size, 0.5 * size));
        draw_triangles(&mut p, &camera, &[(&c.positions, &mesh.indices)], c.tint);
        tint_bar(&mut p, ox, size, c.tint);
    }
    Ok(p)
}

fn tint_bar(p: &mut Pixmap, ox: f32, size: f32, tint: [f32; 3]) {
    if let Some(rect) = Rect::from_xywh(ox + 8.0, size - 6.0, size - 16.0, 4.0) {
        let mut paint = tiny_skia::Paint::default();
        let [r, g, b] = tint.map(|k| (k * 170.0) as u8);
        paint.set_color_rgba8(r, g, b, 255);
        p.fill_rect(rect, &paint, tiny_skia::Transform::identity(), None);
    }
}

/// What the corrective row measured.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CorrectiveFigures {
    /// Vertices the corrective moves.
    pub moved: usize,
    /// For each bent cell pair: the driver's weight, LBS alone, LBS with
    /// the corrective.
    pub bends: Vec<(f32, TubeFigures, TubeFigures)>,
}

fn corrective_row(cell: u32) -> Res<(Pixmap, CorrectiveFigures)> {
    let mesh = tube();
    let n = mesh.positions.len();
    let lbs = |models: &[Mat4], bind: &[[f32; 3]]| skin_bind_positions(&mesh, bind, models, false);
    // The sculpt, in the posed space of the full bend, back to bind space.
    let (_, models) = bent(CORRECTIVE_BEND)?;
    let posed = lbs(&models, &mesh.positions)?;
    let shift = round_rings(&posed);
    let mut palette = [Mat3x4::IDENTITY; 2];
    lbs_palette(&models, &mesh.inverse_bind, &mut palette)?;
    let mut bind = vec![[0.0; 3]; n];
    posed_deltas_to_bind(0, &palette, &mesh.influences(2)?, &shift, &mut bind)?;
    let moved: Vec<u32> = (0..n as u32)
        .filter(|&v| bind[v as usize].iter().any(|d| d.abs() > 1e-6))
        .collect();
    let sparse = Sparse::new(&bind, moved)?;
    let targets = [sparse.target()];
    let shapes = BlendShapes::new(n, &targets)?;
    let drivers = [Driver::Corrective(Corrective {
        shape: 0,
        joint: 1,
        reference: Quat::IDENTITY,
        angle: Angle::Twist { axis: Vec3::Z },
        from: CORRECTIVE_FROM.to_radians(),
        to: CORRECTIVE_BEND.to_radians(),
        ramp: Ramp::Smoothstep,
    })];
    let drivers = ShapeDrivers::new(1, 2, &drivers)?;

    let mut cells = vec![TubeCell {
        positions: mesh.positions.clone(),
        tint: LBS_TINT,
    }];
    let mut figures = CorrectiveFigures {
        moved: sparse.indices.len(),
        bends: Vec::new(),
    };
    for bend in [0.5 * CORRECTIVE_BEND, CORRECTIVE_BEND] {
        let (pose, models) = bent(bend)?;
        let mut weights = [0.0f32];
        drivers.evaluate(&pose, &mut weights)?;
        let plain = lbs(&models, &mesh.positions)?;
        let corrected = lbs(&models, &blend(&shapes, &weights, &mesh.positions)?)?;
        figures.bends.push((
            weights[0],
            measure(&mesh, &plain, bend),
            measure(&mesh, &corrected, bend),
        ));
        cells.push(TubeCell {
            positions: plain,
            tint: LBS_TINT,
        });
        cells.push(TubeCell {
            positions: corrected,
            tint: CORRECTED_TINT,
        });
    }
    Ok((draw_tubes(&mesh, &cells, cell)?, figures))
}

/// What the delta-mush row measured.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MushFigures {
    /// For each bent cell pair: LBS alone, delta mush, and the largest
    /// distance between their vertices (units of the tube, radius 0.2).
    pub bends: Vec<(TubeFigures, TubeFigures, f32)>,
}

fn mush_row(cell: u32) -> Res<(Pixmap, MushFigures)> {
    let mesh = tube();
    let mut rig = MushRig::new(&mesh.positions, &mesh.indices, MUSH)?;
    let mut cells = vec![TubeCell {
        positions: mesh.positions.clone(),
        tint: LBS_TINT,
    }];
    let mut figures = MushFigures::default();
    for bend in [0.5 * MUSH_BEND, MUSH_BEND] {
        let (_, models) = bent(bend)?;
        let plain = skin_bind_positions(&mesh, &mesh.positions, &models, false)?;
        let mut mushed = vec![[0.0; 3]; plain.len()];
        rig.deform(&plain, &mut mushed)?;
        let apart = plain
            .iter()
            .zip(&mushed)
            .map(|(a, b)| sub(*a, *b).length())
            .fold(0.0f32, f32::max);
        figures.bends.push((
            measure(&mesh, &plain, bend),
            measure(&mesh, &mushed, bend),
            apart,
        ));
        cells.push(TubeCell {
            positions: plain,
            tint: LBS_TINT,
        });
        cells.push(TubeCell {
            positions: mushed,
            tint: MUSH_TINT,
        });
    }
    Ok((draw_tubes(&mesh, &cells, cell)?, figures))
}

// ---------------------------------------------------------------------------
// The face
// ---------------------------------------------------------------------------

/// Expression keys of the keyed clip, one per cell: neutral, then each of
/// the first three targets alone, then the first and third half each.
fn expression(cell: usize, targets: usize) -> Vec<f32> {
    let mut w = vec![0.0; targets];
    match cell {
        1..=3 => {
            if let Some(x) = w.get_mut(cell - 1) {
                *x = 1.0;
            }
        }
        4 => {
            for k in [0, 2] {
                if let Some(x) = w.get_mut(k) {
                    *x = 0.5;
                }
            }
        }
        _ => {}
    }
    w
}

/// Whether `clip` moves any morph weight of `meshes`.
fn moves_weights(clip: &OwnedClip, meshes: &[&Mesh]) -> bool {
    meshes.iter().any(|m| {
        m.morph_tracks(clip).iter().flatten().any(|&i| {
            let v = &clip.float_tracks()[i].values;
            let (lo, hi) = v
                .iter()
                .fold((f32::MAX, f32::MIN), |(l, h), &x| (l.min(x), h.max(x)));
            hi - lo > 1e-4
        })
    })
}

/// `clip` with the morph-weight tracks of `meshes` keyed to
/// [`expression`]: cell `i`'s keys at `i / CELLS` of the clip, linear in
/// between, back to neutral at its end.
fn keyed(clip: &OwnedClip, meshes: &[&Mesh]) -> Res<OwnedClip> {
    let frames = clip.frame_count();
    let last = frames.saturating_sub(1).max(1) as f32;
    let mut tracks: Vec<FloatTrack> = clip.float_tracks().to_vec();
    for m in meshes {
        let count = m.morph_targets.len();
        for k in 0..count {
            let key = |c: usize| expression(c % CELLS, count)[k];
            let values = (0..frames)
                .map(|f| {
                    let u = CELLS as f32 * f as f32 / last;
                    let c = (u.floor() as usize).min(CELLS);
                    let t = u - c as f32;
                    key(c) * (1.0 - t) + key(c + 1) * t
                })
                .collect();
            let name = m.morph_track_name(k);
            match tracks.iter_mut().find(|t| t.name == name) {
                Some(t) => t.values = values,
                None => tracks.push(FloatTrack { name, values }),
            }
        }
    }
    Ok(clip.clone().with_float_tracks(tracks)?)
}

/// What the face row measured.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FaceFigures {
    /// The file.
    pub file: String,
    /// The clip played, and whether its weight tracks were keyed here.
    pub clip: String,
    /// See [`FaceFigures::clip`].
    pub keyed: bool,
    /// The meshes with morph targets: name, and per target its name and
    /// moved vertices.
    pub meshes: Vec<(String, Vec<(String, usize)>)>,
    /// Per cell: the time, the weights of the mesh whose targets move
    /// most, and the largest distance a skinned vertex moved because of
    /// the shapes (model units).
    pub cells: Vec<(f32, Vec<f32>, f32)>,
    /// Height of the head (the meshes' extent along +Y) in the first cell,
    /// model units.
    pub head: f32,
    /// The file's length unit.
    pub units: &'static str,
}

fn face_row(path: &Path, cell: u32) -> Res<(Pixmap, FaceFigures)> {
    let asset = gltf::load(path, &GltfOptions::default())?;
    for w in &asset.warnings {
        eprintln!("sinew: warning: {}: {w}", path.display());
    }
    let heads: Vec<&Mesh> = asset
        .meshes
        .iter()
        .filter(|m| !m.morph_targets.is_empty() && !m.indices.is_empty())
        .collect();
    if heads.is_empty() {
        return Err(format!("{}: no mesh has morph targets", path.display()).into());
    }
    let first = asset
        .clips
        .first()
        .ok_or_else(|| format!("{}: no clip", path.display()))?;
    let (clip, keyed_here) = match asset.clips.iter().find(|c| moves_weights(c, &heads)) {
        Some(c) => (c.clone(), false),
        None => {
            let idle = asset
                .clips
                .iter()
                .find(|c| c.name == "Idle")
                .unwrap_or(first);
            (keyed(idle, &heads)?, true)
        }
    };
    // The weight tracks as the runtime plays them.
    let set_bytes = sinew_std::export::float_track_set(&clip)?.ok_or("no float tracks")?;
    let set = TrackSet::from_bytes(set_bytes.as_slice())?;
    // Each mesh's targets as sparse blend shapes.
    let sparse: Vec<Vec<Sparse>> = heads
        .iter()
        .map(|m| {
            m.morph_targets
                .iter()
                .map(|t| Sparse::new(&t.positions, t.moved_vertices()))
                .collect::<Res<Vec<_>>>()
        })
        .collect::<Res<_>>()?;
    let targets: Vec<Vec<Target<'_>>> = sparse
        .iter()
        .map(|s| s.iter().map(Sparse::target).collect())
        .collect();
    let shapes: Vec<BlendShapes<'_>> = heads
        .iter()
        .zip(&targets)
        .map(|(m, t)| BlendShapes::new(m.positions.len(), t))
        .collect::<Result<_, _>>()?;
    let main = (0..heads.len())
        .max_by_key(|&i| sparse[i].iter().map(|s| s.indices.len()).sum::<usize>())
        .unwrap_or(0);

    let s = asset.skeleton.view();
    let mut local = vec![SoaTransform::IDENTITY; s.soa_count()];
    let mut models = vec![Mat4::IDENTITY; s.joint_count()];
    let mut figures = FaceFigures {
        file: path.display().to_string(),
        clip: clip.name.clone(),
        keyed: keyed_here,
        meshes: heads
            .iter()
            .zip(&sparse)
            .map(|(m, sp)| {
                let t = m
                    .morph_targets
                    .iter()
                    .zip(sp)
                    .map(|(t, s)| (t.name.clone(), s.indices.len()))
                    .collect();
                (m.name.clone(), t)
            })
            .collect(),
        cells: Vec::new(),
        head: 0.0,
        units: asset.units,
    };
    let mut drawn: Vec<Vec<Vec<[f32; 3]>>> = Vec::new();
    for i in 0..CELLS {
        let t = clip.duration() * i as f32 / CELLS as f32;
        clip.view().sample(t, TimeMode::Clamp, &mut local)?;
        local_to_model(&FkJob::new(&s, &local), &mut models)?;
        let mut posed = Vec::with_capacity(heads.len());
        let mut moved = 0.0f32;
        let mut main_weights = Vec::new();
        for (k, (m, shapes)) in heads.iter().zip(&shapes).enumerate() {
            let weights: Vec<f32> = (0..m.morph_targets.len())
                .map(|j| {
                    set.find(&m.morph_track_name(j))
                        .and_then(|i| set.track(i))
                        .and_then(|tr| tr.typed::<f32>().ok())
                        .map_or(m.morph_weights[j], |tr| tr.sample(t))
                })
                .collect();
            let base = skin_bind_positions(m, &m.positions, &models, false)?;
            let shaped =
                skin_bind_positions(m, &blend(shapes, &weights, &m.positions)?, &models, false)?;
            moved = base
                .iter()
                .zip(&shaped)
                .map(|(a, b)| sub(*a, *b).length())
                .fold(moved, f32::max);
            if k == main {
                main_weights = weights;
            }
            posed.push(shaped);
        }
        figures.cells.push((t, main_weights, moved));
        drawn.push(posed);
    }

    let (lo, hi) = drawn[0]
        .iter()
        .flatten()
        .fold((f32::MAX, f32::MIN), |(l, h), p| (l.min(p[1]), h.max(p[1])));
    figures.head = (hi - lo).max(0.0);
    // One scale for every cell (the first cell's head fills it), each cell
    // centred on its own head.
    let mut p = row_pixmap(CELLS, cell)?;
    let size = cell as f32;
    let fit = |posed: &[Vec<[f32; 3]>], origin| {
        MeshCamera::fit(0.0, posed.iter().flatten(), size, origin).ok_or("no head to draw")
    };
    let scale_of = fit(&drawn[0], (0.0, 0.0))?;
    for (i, posed) in drawn.iter().enumerate() {
        let origin = (i as f32 * size + 0.5 * size, 0.5 * size);
        let camera = scale_of.centred_like(&fit(posed, origin)?);
        let meshes: Vec<(&[[f32; 3]], &[u32])> = posed
            .iter()
            .zip(&heads)
            .map(|(p, m)| (p.as_slice(), m.indices.as_slice()))
            .collect();
        draw_triangles(&mut p, &camera, &meshes, FACE_TINT);
    }
    Ok((p, figures))
}

// ---------------------------------------------------------------------------
// The strip
// ---------------------------------------------------------------------------

/// Everything `sinew shapes` measured.
#[derive(Clone, Debug, PartialEq)]
pub struct ShapesFigures {
    /// Row 1, or why it was skipped.
    pub face: Result<FaceFigures, String>,
    /// Row 2.
    pub corrective: CorrectiveFigures,
    /// Row 3.
    pub mush: MushFigures,
}

fn pct(x: f32) -> f32 {
    100.0 * x
}

fn weights_text(w: &[f32]) -> String {
    let w: Vec<String> = w.iter().map(|x| format!("{x:.2}")).collect();
    w.join(" ")
}

/// The model of row 1: `--gltf`, else [`DEFAULT_GLTF`] when it exists,
/// else none (said on stderr).
fn choose_gltf(args: &ShapesArgs) -> Result<PathBuf, String> {
    match &args.gltf {
        Some(p) => Ok(p.clone()),
        None if Path::new(DEFAULT_GLTF).is_file() => Ok(PathBuf::from(DEFAULT_GLTF)),
        None => {
            eprintln!(
                "sinew: {DEFAULT_GLTF} not found (run from the repository root with ../shared/data beside it, or pass --gltf); drawing rows 2 and 3 only"
            );
            Err(format!("{DEFAULT_GLTF} not found"))
        }
    }
}

/// Runs the rows and draws them: the picture and the figures.
///
/// # Errors
/// A `--gltf` file that cannot be read or has no morph targets, a kernel
/// error, or a drawing error.
pub fn shapes_strip(args: &ShapesArgs) -> Res<(Pixmap, ShapesFigures)> {
    let mut rows = Vec::new();
    let mut captions = Vec::new();
    let face = match choose_gltf(args) {
        Ok(path) => {
            let (row, f) = face_row(&path, args.cell)?;
            rows.push(row);
            let mut list: Vec<String> = Vec::new();
            for (_, targets) in f.meshes.iter().filter(|(_, t)| t.iter().any(|x| x.1 > 0)) {
                for (name, _) in targets {
                    list.push(name.clone());
                }
            }
            captions.push(format!(
                "1. facial morph targets {} on the clip \"{}\"{}: vertices move up to {:.0}% of the head's height",
                list.join(", "),
                f.clip,
                if f.keyed {
                    " (weights keyed here: none, each alone, first and last half each)"
                } else {
                    ""
                },
                pct(f.cells.iter().fold(0.0f32, |m, c| m.max(c.2)) / f.head.max(1e-6))
            ));
            Ok(f)
        }
        Err(why) => Err(why),
    };
    let (row, corrective) = corrective_row(args.cell)?;
    rows.push(row);
    let sections = |pairs: Vec<(f32, f32, f32)>| {
        let text: Vec<String> = pairs
            .iter()
            .map(|(bend, before, after)| {
                format!("{:.0}% -> {:.0}% at {bend:.0}°", pct(*before), pct(*after))
            })
            .collect();
        text.join(", ")
    };
    captions.push(format!(
        "{}. LBS (grey) and LBS + a corrective driven by the elbow's bend (orange): narrowest section of rest {}",
        rows.len(),
        sections(
            corrective
                .bends
                .iter()
                .map(|(_, l, c)| (l.bend, l.narrowest, c.narrowest))
                .collect()
        )
    ));
    let (row, mush) = mush_row(args.cell)?;
    rows.push(row);
    captions.push(format!(
        "{}. LBS (grey) and delta mush over it (blue, {} iterations): narrowest section of rest {}",
        rows.len(),
        MUSH.iterations,
        sections(
            mush.bends
                .iter()
                .map(|(l, m, _)| (l.bend, l.narrowest, m.narrowest))
                .collect()
        )
    ));
    let title = "Shapes: blend shapes and correctives added in bind space before LBS, delta mush after it; a tube bent at the elbow, front view, first at rest";
    let png = label_rows(&rows, title, &captions)?;
    Ok((
        png,
        ShapesFigures {
            face,
            corrective,
            mush,
        },
    ))
}

/// `sinew shapes`: writes the strip and prints one line per row.
///
/// # Errors
/// As [`shapes_strip`], or the PNG cannot be written.
pub fn shapes_command(args: &ShapesArgs, out: &dyn Fn(&str)) -> Res<()> {
    let (png, f) = shapes_strip(args)?;
    png.save_png(&args.out)
        .map_err(|e| format!("cannot write {}: {e}", args.out.display()))?;
    match &f.face {
        Ok(face) => {
            let meshes: Vec<String> = face
                .meshes
                .iter()
                .map(|(m, t)| {
                    let t: Vec<String> = t.iter().map(|(n, v)| format!("{n} {v}")).collect();
                    format!("{m} ({})", t.join(", "))
                })
                .collect();
            let cells: Vec<String> = face
                .cells
                .iter()
                .map(|(t, w, d)| {
                    format!(
                        "t {t:.2} s weights [{}] moves {:.3} {}",
                        weights_text(w),
                        d,
                        face.units
                    )
                })
                .collect();
            let most = face.cells.iter().fold(0.0f32, |m, c| m.max(c.2));
            out(&format!(
                "row 1, facial morph targets of {}: vertices moved per target: {}; clip {}{}; {}; max shape displacement {:.3} {} ({:.1}% of the head's height, {:.3} {})",
                face.file,
                meshes.join(", "),
                face.clip,
                if face.keyed {
                    " (its weight tracks are flat in the file: keyed here, one expression per cell)"
                } else {
                    ""
                },
                cells.join("; "),
                most,
                face.units,
                pct(most / face.head.max(1e-6)),
                face.head,
                face.units
            ));
        }
        Err(why) => out(&format!("row 1, facial morph targets: skipped, {why}")),
    }
    let bends: Vec<String> = f
        .corrective
        .bends
        .iter()
        .map(|(w, lbs, fixed)| {
            format!(
                "at {:.0} deg driver weight {w:.2}: LBS sections {:.1}% to {:.1}% of rest, volume {:+.1}%; with the corrective {:.1}% to {:.1}%, volume {:+.1}%",
                lbs.bend,
                pct(lbs.narrowest),
                pct(lbs.widest),
                pct(lbs.volume - 1.0),
                pct(fixed.narrowest),
                pct(fixed.widest),
                pct(fixed.volume - 1.0)
            )
        })
        .collect();
    out(&format!(
        "row 2, corrective (sculpted at {CORRECTIVE_BEND:.0} deg, {} vertices, smoothstep on the elbow's bend from {CORRECTIVE_FROM:.0} deg): {}",
        f.corrective.moved,
        bends.join("; ")
    ));
    let bends: Vec<String> = f
        .mush
        .bends
        .iter()
        .map(|(lbs, mush, apart)| {
            format!(
                "at {:.0} deg LBS sections {:.1}% to {:.1}% of rest, volume {:+.1}%; delta mush {:.1}% to {:.1}%, volume {:+.1}%, up to {:.3} from LBS (tube radius {RADIUS})",
                lbs.bend,
                pct(lbs.narrowest),
                pct(lbs.widest),
                pct(lbs.volume - 1.0),
                pct(mush.narrowest),
                pct(mush.widest),
                pct(mush.volume - 1.0),
                apart
            )
        })
        .collect();
    out(&format!(
        "row 3, delta mush ({} iterations, step {}) over LBS: {}",
        MUSH.iterations,
        MUSH.step,
        bends.join("; ")
    ));
    out(&format!(
        "wrote {} ({}x{} px)",
        args.out.display(),
        png.width(),
        png.height()
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rest_tube_measures_as_a_prism() {
        let m = tube();
        let n = AROUND as f32;
        let polygon = 0.5 * n * RADIUS * RADIUS * (std::f32::consts::TAU / n).sin();
        assert!((ring_area(ring(&m.positions, 0)) - polygon).abs() < 1e-5);
        assert!((volume(&m.positions, &m.indices) - 2.0 * polygon).abs() < 1e-4);
        let f = measure(&m, &m.positions, 0.0);
        for x in [f.narrowest, f.widest, f.volume] {
            assert!((x - 1.0).abs() < 1e-5, "{f:?}");
        }
    }

    #[test]
    fn round_rings_leaves_the_rest_tube_alone() {
        let m = tube();
        let shift = round_rings(&m.positions);
        assert!(shift.iter().flatten().all(|d| d.abs() < 1e-5));
    }
}
