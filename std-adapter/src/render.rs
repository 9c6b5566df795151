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
    if lower.ends_with("_l") || lower.ends_with(".l") || lower.contains("left") || prefixed('l') {
        1
    } else if lower.ends_with("_r")
        || lower.ends_with(".r")
        || lower.contains("right")
        || prefixed('r')
    {
        -1
    } else {
        0
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
    crate::assets::check_clip(skeleton, clip)?;
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
        let (cx, _) = project(pose[0]);
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

    let n = skeleton.joint_count();
    let depth: Vec<usize> = (0..n).map(|j| skeleton.depth(j)).collect();
    let max_depth = depth.iter().copied().max().unwrap_or(0).max(1) as f32;
    let sides: Vec<i8> = (0..n)
        .map(|j| side(skeleton.joint_name(j).unwrap_or("")))
        .collect();
    let stroke = Stroke {
        width: (cell / 90.0).max(1.5),
        line_cap: LineCap::Round,
        ..Stroke::default()
    };
    let mut paint = Paint {
        anti_alias: true,
        ..Paint::default()
    };
    for (i, pose) in poses.iter().enumerate() {
        let (cx, _) = project(pose[0]);
        let ox = i as f32 * cell + 0.5 * cell;
        // Centre the strip's common vertical extent in the cell.
        let oy = 0.5 * (cell - height * scale) - top * scale;
        let to_px = |p: Vec3| {
            let (x, y) = project(p);
            (ox + (x - cx) * scale, oy + y * scale)
        };
        // Ground line at the lowest point of the whole strip, and a cell divider.
        let mut pb = PathBuilder::new();
        pb.move_to(i as f32 * cell + 4.0, oy + bottom * scale);
        pb.line_to((i + 1) as f32 * cell - 4.0, oy + bottom * scale);
        if i > 0 {
            pb.move_to(i as f32 * cell, 0.0);
            pb.line_to(i as f32 * cell, cell);
        }
        if let Some(path) = pb.finish() {
            paint.set_color_rgba8(200, 200, 195, 255);
            pixmap.stroke_path(
                &path,
                &paint,
                &Stroke::default(),
                Transform::identity(),
                None,
            );
        }
        for j in 0..n {
            let Some(p) = skeleton.parent(j) else {
                continue;
            };
            let (a, b) = (to_px(pose[p]), to_px(pose[j]));
            let mut pb = PathBuilder::new();
            pb.move_to(a.0, a.1);
            pb.line_to(b.0, b.1);
            let Some(path) = pb.finish() else { continue };
            let shade = (40.0 + 140.0 * depth[j] as f32 / max_depth) as u8;
            match sides[j] {
                1 => paint.set_color_rgba8(230, shade.saturating_add(40), 40, 255),
                -1 => paint.set_color_rgba8(40, shade.saturating_add(40), 220, 255),
                _ => paint.set_color_rgba8(shade / 2, shade / 2, shade / 2 + 20, 255),
            }
            pixmap.stroke_path(&path, &paint, &stroke, Transform::identity(), None);
        }
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
        ] {
            assert_eq!(side(l), 1, "{l}");
        }
        for r in ["hand_r", "Hand.R", "RightHand", "rThigh"] {
            assert_eq!(side(r), -1, "{r}");
        }
        for c in ["hip", "head", "lowerback", "root"] {
            assert_eq!(side(c), 0, "{c}");
        }
    }

    #[test]
    fn humanoid_walk_strip_has_ink_in_every_cell() {
        let h = crate::Humanoid::default_rate();
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
        let h = crate::Humanoid::default_rate();
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
