//! Filmstrips: a clip's poses drawn side by side, so a person can see at a
//! glance whether an import or a blend is right.
//!
//! Each cell shows the skeleton at one of `frames` evenly spaced times,
//! projected orthographically from a camera turned `yaw` degrees about the
//! vertical axis (+Y up). Every cell uses the same scale and is centred on the
//! root joint's horizontal position at that time, so a clip with root motion
//! stays in frame. Bones are lines from each joint to its parent, shaded from
//! dark (roots) to light (leaves); joints on the character's left side
//! (names ending in `_l`, `l`, `Left`, `.L`) are drawn in orange, right in blue.

use sinew_core::clip::{RawClip, TimeMode};
use sinew_core::fk::{self, FkJob};
use sinew_core::{Error, Mat4, Skeleton, SoaTransform, Vec3};
use tiny_skia::{Color, LineCap, Paint, PathBuilder, Pixmap, Stroke, Transform};

/// How to draw a filmstrip.
#[derive(Clone, Copy, Debug)]
pub struct FilmstripOptions {
    /// Number of cells (times), at least 1.
    pub frames: usize,
    /// Cell width and height in pixels (16 ..= 2048).
    pub cell: u32,
    /// Camera yaw about +Y in degrees (0 looks along -Z at the character's front).
    pub yaw_degrees: f32,
}

impl Default for FilmstripOptions {
    fn default() -> Self {
        FilmstripOptions {
            frames: 8,
            cell: 220,
            yaw_degrees: 60.0,
        }
    }
}

/// Which side of the character a joint is on, from its name: +1 left, -1
/// right, 0 centre. Knows `hand_l`, `Hand.L`, `LeftHand`, `mixamorig:LeftHand`
/// and daz-style `lHand`.
fn side(name: &str) -> i8 {
    let lower = name.to_ascii_lowercase();
    // daz-style: a lower-case side letter followed by an upper-case letter.
    let prefixed = |c: char| {
        let mut it = name.chars();
        it.next() == Some(c) && it.next().is_some_and(|n| n.is_ascii_uppercase())
    };
    // RobotExpressive-style: an upper-case side letter after a lower-case
    // letter or digit (`UpperArmL`, `Palm2L`).
    let suffixed = |c: char| {
        let mut it = name.chars().rev();
        it.next() == Some(c)
            && it
                .next()
                .is_some_and(|p| p.is_ascii_lowercase() || p.is_ascii_digit())
    };
    if lower.ends_with("_l")
        || lower.ends_with(".l")
        || lower.contains("left")
        || prefixed('l')
        || suffixed('L')
    {
        1
    } else if lower.ends_with("_r")
        || lower.ends_with(".r")
        || lower.contains("right")
        || prefixed('r')
        || suffixed('R')
    {
        -1
    } else {
        0
    }
}

/// How a skeleton's bones are drawn: a line from each joint to its parent,
/// shaded from dark (roots) to light (leaves), the character's left side in
/// orange, its right side in blue (sides from the joints' names).
#[derive(Clone, Debug)]
pub struct BonePainter {
    parents: Vec<Option<usize>>,
    depth: Vec<usize>,
    sides: Vec<i8>,
    max_depth: f32,
}

impl BonePainter {
    /// The painter of `skeleton`'s bones.
    #[must_use]
    pub fn new(skeleton: &Skeleton<'_>) -> Self {
        let n = skeleton.joint_count();
        let depth: Vec<usize> = (0..n).map(|j| skeleton.depth(j)).collect();
        let max_depth = depth.iter().copied().max().unwrap_or(0).max(1) as f32;
        BonePainter {
            parents: (0..n).map(|j| skeleton.parent(j)).collect(),
            depth,
            sides: (0..n)
                .map(|j| side(skeleton.joint_name(j).unwrap_or("")))
                .collect(),
            max_depth,
        }
    }

    /// Draws the bones between `points` (one pixel position per joint, in
    /// skeleton order; extra joints are ignored) with lines `width` pixels wide.
    pub fn draw(&self, pixmap: &mut Pixmap, points: &[(f32, f32)], width: f32) {
        let stroke = Stroke {
            width,
            line_cap: LineCap::Round,
            ..Stroke::default()
        };
        let mut paint = Paint {
            anti_alias: true,
            ..Paint::default()
        };
        for (j, parent) in self.parents.iter().enumerate() {
            let (Some(a), Some(b)) = (parent.and_then(|p| points.get(p)), points.get(j)) else {
                continue;
            };
            let mut pb = PathBuilder::new();
            pb.move_to(a.0, a.1);
            pb.line_to(b.0, b.1);
            let Some(path) = pb.finish() else { continue };
            let shade = (40.0 + 140.0 * self.depth[j] as f32 / self.max_depth) as u8;
            match self.sides[j] {
                1 => paint.set_color_rgba8(230, shade.saturating_add(40), 40, 255),
                -1 => paint.set_color_rgba8(40, shade.saturating_add(40), 220, 255),
                _ => paint.set_color_rgba8(shade / 2, shade / 2, shade / 2 + 20, 255),
            }
            pixmap.stroke_path(&path, &paint, &stroke, Transform::identity(), None);
        }
    }
}

fn path_through(points: &[(f32, f32)]) -> Option<tiny_skia::Path> {
    let (first, rest) = points.split_first()?;
    let mut pb = PathBuilder::new();
    pb.move_to(first.0, first.1);
    for p in rest {
        pb.line_to(p.0, p.1);
    }
    pb.finish()
}

fn paint(rgba: [u8; 4]) -> Paint<'static> {
    let mut paint = Paint {
        anti_alias: true,
        ..Paint::default()
    };
    paint.set_color_rgba8(rgba[0], rgba[1], rgba[2], rgba[3]);
    paint
}

/// Strokes the open polyline through `points` (pixels) in colour `rgba`,
/// `width` pixels wide; fewer than two points draw nothing.
pub fn polyline(pixmap: &mut Pixmap, points: &[(f32, f32)], rgba: [u8; 4], width: f32) {
    if let Some(path) = path_through(points) {
        let stroke = Stroke {
            width,
            line_cap: LineCap::Round,
            ..Stroke::default()
        };
        pixmap.stroke_path(&path, &paint(rgba), &stroke, Transform::identity(), None);
    }
}

/// Fills the polygon through `points` (pixels, closed) in colour `rgba`.
pub fn fill_polygon(pixmap: &mut Pixmap, points: &[(f32, f32)], rgba: [u8; 4]) {
    let Some((first, rest)) = points.split_first() else {
        return;
    };
    let mut pb = PathBuilder::new();
    pb.move_to(first.0, first.1);
    for p in rest {
        pb.line_to(p.0, p.1);
    }
    pb.close();
    if let Some(path) = pb.finish() {
        pixmap.fill_path(
            &path,
            &paint(rgba),
            tiny_skia::FillRule::Winding,
            Transform::identity(),
            None,
        );
    }
}

/// Fills a disc of `radius` pixels centred on `centre` in colour `rgba`.
pub fn dot(pixmap: &mut Pixmap, centre: (f32, f32), radius: f32, rgba: [u8; 4]) {
    if let Some(path) = PathBuilder::from_circle(centre.0, centre.1, radius) {
        pixmap.fill_path(
            &path,
            &paint(rgba),
            tiny_skia::FillRule::Winding,
            Transform::identity(),
            None,
        );
    }
}

/// Joint positions of the skeleton at each of `opts.frames` evenly spaced times.
///
/// # Errors
/// [`Error::BadLength`] when the clip does not fit the skeleton, or any kernel error.
pub fn sample_positions(
    skeleton: &Skeleton<'_>,
    clip: &RawClip<'_>,
    frames: usize,
) -> Result<Vec<Vec<Vec3>>, Error> {
    sinew_std::assets::check_clip(skeleton, clip)?;
    let mut local = vec![SoaTransform::IDENTITY; skeleton.soa_count()];
    let mut models = vec![Mat4::IDENTITY; skeleton.joint_count()];
    let frames = frames.max(1);
    (0..frames)
        .map(|i| {
            // Loops: frames evenly over [0, duration) so the seam is not drawn twice.
            let t = clip.duration() * i as f32 / frames as f32;
            clip.sample(t, TimeMode::Clamp, &mut local)?;
            fk::local_to_model(&FkJob::new(skeleton, &local), &mut models)?;
            Ok(models.iter().map(Mat4::translation).collect())
        })
        .collect()
}

/// Draws a filmstrip of `clip` on `skeleton`.
///
/// # Errors
/// [`Error::BadLength`] for a clip that does not fit the skeleton or a cell
/// size out of range, and any kernel error.
pub fn filmstrip(
    skeleton: &Skeleton<'_>,
    clip: &RawClip<'_>,
    opts: &FilmstripOptions,
) -> Result<Pixmap, Error> {
    filmstrip_centred(skeleton, clip, opts, 0)
}

/// [`filmstrip`] with each cell centred on joint `centre` (the hips of a
/// rig whose joint 0 stays at the origin) instead of joint 0.
///
/// # Errors
/// As [`filmstrip`]; [`Error::JointOutOfRange`] for `centre` past the skeleton.
pub fn filmstrip_centred(
    skeleton: &Skeleton<'_>,
    clip: &RawClip<'_>,
    opts: &FilmstripOptions,
    centre: usize,
) -> Result<Pixmap, Error> {
    if centre >= skeleton.joint_count() {
        return Err(Error::JointOutOfRange {
            joint: centre,
            count: skeleton.joint_count(),
        });
    }
    if !(16..=2048).contains(&opts.cell) || opts.frames == 0 || opts.frames > 64 {
        return Err(Error::BadLength {
            buffer: "filmstrip cells",
            expected: 8,
            actual: opts.frames,
        });
    }
    let poses = sample_positions(skeleton, clip, opts.frames)?;
    let (s, c) = opts.yaw_degrees.to_radians().sin_cos();
    // Camera right = (c, 0, -s) rotated; screen x = p·right, screen y = -p.y.
    let project = |p: Vec3| (p.x * c - p.z * s, -p.y);
    let mut half_w = 1e-6f32;
    let (mut top, mut bottom) = (f32::MAX, f32::MIN);
    for pose in &poses {
        let (cx, _) = project(pose[centre]);
        for &p in pose {
            let (x, y) = project(p);
            half_w = half_w.max((x - cx).abs());
            top = top.min(y);
            bottom = bottom.max(y);
        }
    }
    let cell = opts.cell as f32;
    let height = (bottom - top).max(1e-6);
    let scale = (0.86 * cell / height).min(0.86 * cell / (2.0 * half_w));
    let width = opts.cell * opts.frames as u32;
    let mut pixmap = Pixmap::new(width, opts.cell).ok_or(Error::BadLength {
        buffer: "filmstrip pixels",
        expected: 1,
        actual: 0,
    })?;
    pixmap.fill(Color::from_rgba8(250, 250, 247, 255));

    let bones = BonePainter::new(skeleton);
    let width = (cell / 90.0).max(1.5);
    for (i, pose) in poses.iter().enumerate() {
        let (cx, _) = project(pose[centre]);
        let ox = i as f32 * cell + 0.5 * cell;
        // Centre the strip's common vertical extent in the cell.
        let oy = 0.5 * (cell - height * scale) - top * scale;
        let to_px = |p: Vec3| {
            let (x, y) = project(p);
            (ox + (x - cx) * scale, oy + y * scale)
        };
        // Ground line at the lowest point of the whole strip, and a cell divider.
        let ground = oy + bottom * scale;
        let grey = [200, 200, 195, 255];
        polyline(
            &mut pixmap,
            &[
                (i as f32 * cell + 4.0, ground),
                ((i + 1) as f32 * cell - 4.0, ground),
            ],
            grey,
            1.0,
        );
        if i > 0 {
            polyline(
                &mut pixmap,
                &[(i as f32 * cell, 0.0), (i as f32 * cell, cell)],
                grey,
                1.0,
            );
        }
        let points: Vec<(f32, f32)> = pose.iter().map(|&p| to_px(p)).collect();
        bones.draw(&mut pixmap, &points, width);
    }
    Ok(pixmap)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sides_from_names() {
        for l in [
            "hand_l",
            "Hand.L",
            "LeftHand",
            "mixamorig:LeftHand",
            "lShldr",
            "UpperArmL",
            "Palm2L",
        ] {
            assert_eq!(side(l), 1, "{l}");
        }
        for r in ["hand_r", "Hand.R", "RightHand", "rThigh", "FootR"] {
            assert_eq!(side(r), -1, "{r}");
        }
        for c in ["hip", "head", "lowerback", "root", "TORSO", "Bone"] {
            assert_eq!(side(c), 0, "{c}");
        }
    }

    #[test]
    fn humanoid_walk_strip_has_ink_in_every_cell() {
        let h = sinew_std::Humanoid::default_rate();
        let opts = FilmstripOptions::default();
        let png = filmstrip(&h.skeleton.view(), &h.clips[0].view(), &opts).unwrap();
        assert_eq!(png.width(), opts.cell * opts.frames as u32);
        for cell in 0..opts.frames as u32 {
            let dark = (0..opts.cell)
                .flat_map(|y| (0..opts.cell).map(move |x| (x, y)))
                .filter(|&(x, y)| {
                    png.pixel(cell * opts.cell + x, y).is_some_and(|p| {
                        u32::from(p.red()) + u32::from(p.green()) + u32::from(p.blue()) < 450
                    })
                })
                .count();
            assert!(dark > 200, "cell {cell} has only {dark} drawn pixels");
        }
    }

    #[test]
    fn rejects_bad_options() {
        let h = sinew_std::Humanoid::default_rate();
        let bad = FilmstripOptions {
            frames: 0,
            ..FilmstripOptions::default()
        };
        assert!(filmstrip(&h.skeleton.view(), &h.clips[0].view(), &bad).is_err());
        let bad = FilmstripOptions {
            cell: 4,
            ..FilmstripOptions::default()
        };
        assert!(filmstrip(&h.skeleton.view(), &h.clips[0].view(), &bad).is_err());
    }
}

/// Which skinning method(s) [`skinned_mesh`] draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SkinView {
    /// Linear blend skinning only.
    Lbs,
    /// Dual-quaternion skinning only.
    Dqs,
    /// LBS on the left, DQS on the right, same camera and scale.
    Both,
}

/// How to draw a skinned mesh.
#[derive(Clone, Copy, Debug)]
pub struct MeshOptions {
    /// Panel width and height in pixels (64 ..= 4096).
    pub size: u32,
    /// Camera yaw about +Y in degrees.
    pub yaw_degrees: f32,
    /// Clip time in seconds.
    pub time: f32,
}

impl Default for MeshOptions {
    fn default() -> Self {
        MeshOptions {
            size: 480,
            yaw_degrees: 30.0,
            time: 0.0,
        }
    }
}

/// A mesh's skinned positions and its triangles.
struct Posed<'m> {
    positions: Vec<[f32; 3]>,
    indices: &'m [u32],
}

/// A projected triangle: summed view depth (larger is nearer), pixel corners, shade in 0..1.
struct ScreenTriangle {
    depth: f32,
    corners: [(f32, f32); 3],
    shade: f32,
}

/// An orthographic camera for flat-shaded meshes: turned `yaw` about the
/// vertical axis (+Y up; yaw 0 looks along −Z at a character's front),
/// `scale` pixels per unit, the view-space point `centre` drawn at pixel
/// `origin`.
#[derive(Clone, Copy, Debug)]
pub struct MeshCamera {
    sin: f32,
    cos: f32,
    scale: f32,
    centre: [f32; 2],
    origin: (f32, f32),
}

impl MeshCamera {
    /// A camera turned `yaw_degrees`, `scale` pixels per unit, view-space
    /// `centre` (right, down) at pixel `origin`.
    #[must_use]
    pub fn new(yaw_degrees: f32, scale: f32, centre: [f32; 2], origin: (f32, f32)) -> Self {
        let (sin, cos) = yaw_degrees.to_radians().sin_cos();
        MeshCamera {
            sin,
            cos,
            scale,
            centre,
            origin,
        }
    }

    /// The camera turned `yaw_degrees` whose square of `size` pixels
    /// centred on `origin` holds every point of `points` in its middle
    /// 90 %; `None` without points.
    #[must_use]
    pub fn fit<'p>(
        yaw_degrees: f32,
        points: impl IntoIterator<Item = &'p [f32; 3]>,
        size: f32,
        origin: (f32, f32),
    ) -> Option<Self> {
        let mut camera = MeshCamera::new(yaw_degrees, 1.0, [0.0; 2], origin);
        let (mut lo, mut hi) = ([f32::MAX; 2], [f32::MIN; 2]);
        for &p in points {
            let (x, y, _) = camera.view(p);
            lo = [lo[0].min(x), lo[1].min(y)];
            hi = [hi[0].max(x), hi[1].max(y)];
        }
        if lo[0] > hi[0] {
            return None;
        }
        let extent = (hi[0] - lo[0]).max(hi[1] - lo[1]).max(1e-6);
        camera.scale = 0.9 * size / extent;
        camera.centre = [(lo[0] + hi[0]) * 0.5, (lo[1] + hi[1]) * 0.5];
        Some(camera)
    }

    /// The same camera drawing its centre at pixel `origin`.
    #[must_use]
    pub fn at(self, origin: (f32, f32)) -> Self {
        MeshCamera { origin, ..self }
    }

    /// This camera's yaw and scale with `other`'s centre and origin.
    #[must_use]
    pub fn centred_like(self, other: &MeshCamera) -> Self {
        MeshCamera {
            centre: other.centre,
            origin: other.origin,
            ..self
        }
    }

    /// View space of `p`: right, down, and depth (larger is nearer).
    #[must_use]
    pub fn view(&self, p: [f32; 3]) -> (f32, f32, f32) {
        let (s, c) = (self.sin, self.cos);
        (p[0] * c - p[2] * s, -p[1], p[0] * s + p[2] * c)
    }

    /// The pixel `p` is drawn at.
    #[must_use]
    pub fn pixel(&self, p: [f32; 3]) -> (f32, f32) {
        let (x, y, _) = self.view(p);
        (
            self.origin.0 + (x - self.centre[0]) * self.scale,
            self.origin.1 + (y - self.centre[1]) * self.scale,
        )
    }
}

/// Draws the triangles of `meshes` (positions and a triangle list each)
/// flat shaded, back to front, through `camera`: each triangle's colour is
/// `tint` (RGB in 0..1) times its shade, a light fixed relative to the
/// camera. Triangles with an index past their positions or no area are
/// skipped.
pub fn draw_triangles(
    pixmap: &mut Pixmap,
    camera: &MeshCamera,
    meshes: &[(&[[f32; 3]], &[u32])],
    tint: [f32; 3],
) {
    let light = Vec3::new(-0.4, 0.6, 0.7);
    let light = light * (1.0 / light.length());
    let (s, c) = (camera.sin, camera.cos);
    let mut tris: Vec<ScreenTriangle> = Vec::new();
    for (pos, indices) in meshes {
        for t in indices.chunks_exact(3) {
            let Some(v) = t
                .iter()
                .map(|&i| pos.get(i as usize).copied())
                .collect::<Option<Vec<[f32; 3]>>>()
            else {
                continue;
            };
            let a = Vec3::new(v[0][0], v[0][1], v[0][2]);
            let b = Vec3::new(v[1][0], v[1][1], v[1][2]);
            let cc = Vec3::new(v[2][0], v[2][1], v[2][2]);
            let n = (b - a).cross(cc - a);
            let len = n.length();
            if len.is_nan() || len <= 0.0 {
                continue;
            }
            // View-space normal: light is fixed relative to the camera.
            let nv = Vec3::new(n.x * c - n.z * s, n.y, n.x * s + n.z * c) * (1.0 / len);
            tris.push(ScreenTriangle {
                depth: v.iter().map(|&p| camera.view(p).2).sum::<f32>(),
                corners: [0, 1, 2].map(|i| camera.pixel(v[i])),
                shade: 0.25 + 0.75 * nv.dot(light).abs(),
            });
        }
    }
    tris.sort_by(|a, b| a.depth.total_cmp(&b.depth));
    let mut paint = Paint {
        anti_alias: true,
        ..Paint::default()
    };
    for ScreenTriangle {
        corners: scr,
        shade,
        ..
    } in &tris
    {
        let mut pb = PathBuilder::new();
        pb.move_to(scr[0].0, scr[0].1);
        pb.line_to(scr[1].0, scr[1].1);
        pb.line_to(scr[2].0, scr[2].1);
        pb.close();
        let Some(path) = pb.finish() else { continue };
        let g = shade * 235.0;
        let [r, gr, bl] = tint.map(|k| (k.clamp(0.0, 1.0) * g) as u8);
        paint.set_color_rgba8(r, gr, bl, 255);
        pixmap.fill_path(
            &path,
            &paint,
            tiny_skia::FillRule::Winding,
            Transform::identity(),
            None,
        );
    }
}

/// Colour of LBS panels for [`draw_triangles`]: grey.
pub const LBS_TINT: [f32; 3] = [1.0, 1.0, 1.0];
/// Colour of DQS panels for [`draw_triangles`]: teal.
pub const DQS_TINT: [f32; 3] = [1.0 / 3.0, 1.0, 0.9];

/// Skins `mesh` (LBS, or DQS when `dqs`) at the pose `models`: posed positions.
fn skin_positions(
    mesh: &sinew_std::Mesh,
    models: &[Mat4],
    dqs: bool,
) -> Result<Vec<[f32; 3]>, Error> {
    skin_bind_positions(mesh, &mesh.positions, models, dqs)
}

/// Skins `bind` (bind-space positions of `mesh`'s vertices, e.g. its
/// positions with blend shapes added) with `mesh`'s influences and inverse
/// binds (LBS, or DQS when `dqs`) at the pose `models`: posed positions.
///
/// # Errors
/// Kernel errors: influences that do not fit `models`, `bind` not one per
/// vertex.
pub fn skin_bind_positions(
    mesh: &sinew_std::Mesh,
    bind: &[[f32; 3]],
    models: &[Mat4],
    dqs: bool,
) -> Result<Vec<[f32; 3]>, Error> {
    use sinew_core::skin::{
        self, DualQuat, Mat3x4, SkinAttributes, SkinJob, SkinMethod, SkinOutput, SkinVertices,
    };
    let influences = mesh.influences(models.len())?;
    let input = SkinVertices {
        positions: bind,
        normals: None,
        tangents: None,
    };
    let mut positions = vec![[0.0f32; 3]; bind.len()];
    let output = SkinOutput {
        positions: &mut positions,
        normals: None,
        tangents: None,
    };
    let attributes = SkinAttributes::Arrays { input, output };
    if dqs {
        let mut palette = vec![DualQuat::IDENTITY; models.len()];
        skin::dqs_palette(models, &mesh.inverse_bind, &mut palette)?;
        // With the mesh's DQS pair table, as a game skinning it every frame
        // would (the same numbers; skeletons over 256 joints go without).
        let mut pairs = Vec::new();
        let influences = if models.len() <= skin::DQS_PAIR_MAX_JOINTS {
            pairs.resize(influences.dqs_pair_count()?, [0u16; 2]);
            influences.with_dqs_pairs(&mut pairs)?
        } else {
            influences
        };
        let method = SkinMethod::Dqs { palette: &palette };
        SkinJob {
            method,
            influences: &influences,
            attributes,
        }
        .run()?;
    } else {
        let mut palette = vec![Mat3x4::IDENTITY; models.len()];
        skin::lbs_palette(models, &mesh.inverse_bind, &mut palette)?;
        let method = SkinMethod::Lbs { palette: &palette };
        SkinJob {
            method,
            influences: &influences,
            attributes,
        }
        .run()?;
    }
    Ok(positions)
}

/// Draws the skinned `meshes` of a skeleton at `opts.time` of `clip`: flat
/// shaded triangles, back to front, LBS and/or DQS panels side by side with a
/// shared camera and scale. A thin bar under each panel names the method by
/// colour: grey for LBS, teal for DQS.
///
/// # Errors
/// Kernel errors (a mesh whose influences do not fit the skeleton, a clip of
/// another skeleton), [`Error::BadLength`] for a panel size out of range or no
/// triangles to draw.
pub fn skinned_mesh(
    skeleton: &Skeleton<'_>,
    clip: &RawClip<'_>,
    meshes: &[sinew_std::Mesh],
    view: SkinView,
    opts: &MeshOptions,
) -> Result<Pixmap, Error> {
    let bad = |actual| Error::BadLength {
        buffer: "mesh panel",
        expected: 1,
        actual,
    };
    if !(64..=4096).contains(&opts.size) || !opts.time.is_finite() {
        return Err(bad(opts.size as usize));
    }
    sinew_std::assets::check_clip(skeleton, clip)?;
    let mut local = vec![SoaTransform::IDENTITY; skeleton.soa_count()];
    let mut models = vec![Mat4::IDENTITY; skeleton.joint_count()];
    clip.sample(opts.time, TimeMode::Clamp, &mut local)?;
    fk::local_to_model(&FkJob::new(skeleton, &local), &mut models)?;
    let methods: &[bool] = match view {
        SkinView::Lbs => &[false],
        SkinView::Dqs => &[true],
        SkinView::Both => &[false, true],
    };
    // Skin every mesh with every method; one shared projection for all panels.
    let mut panels: Vec<Vec<Posed<'_>>> = Vec::new();
    for &dqs in methods {
        let mut panel = Vec::new();
        for m in meshes.iter().filter(|m| !m.indices.is_empty()) {
            panel.push(Posed {
                positions: skin_positions(m, &models, dqs)?,
                indices: &m.indices,
            });
        }
        panels.push(panel);
    }
    let size = opts.size as f32;
    let points = panels.iter().flatten().flat_map(|p| &p.positions);
    let camera =
        MeshCamera::fit(opts.yaw_degrees, points, size, (0.5 * size, 0.5 * size)).ok_or(bad(0))?;
    let mut pixmap = Pixmap::new(opts.size * panels.len() as u32, opts.size + 8).ok_or(bad(0))?;
    pixmap.fill(Color::from_rgba8(250, 250, 247, 255));
    let mut paint = Paint {
        anti_alias: true,
        ..Paint::default()
    };
    for (k, panel) in panels.iter().enumerate() {
        let dqs = methods[k];
        let camera = camera.at((k as f32 * size + 0.5 * size, 0.5 * size));
        let meshes: Vec<(&[[f32; 3]], &[u32])> = panel
            .iter()
            .map(|p| (p.positions.as_slice(), p.indices))
            .collect();
        draw_triangles(
            &mut pixmap,
            &camera,
            &meshes,
            if dqs { DQS_TINT } else { LBS_TINT },
        );
        // Method bar: grey = LBS, teal = DQS.
        if let Some(rect) =
            tiny_skia::Rect::from_xywh(k as f32 * size + 8.0, size + 2.0, size - 16.0, 4.0)
        {
            if dqs {
                paint.set_color_rgba8(20, 160, 150, 255);
            } else {
                paint.set_color_rgba8(120, 120, 120, 255);
            }
            pixmap.fill_rect(rect, &paint, Transform::identity(), None);
        }
    }
    Ok(pixmap)
}
