//! `sinew ik`: foot placement and a look-at chain drawn as a three-row strip,
//! each row with a figure that says how well the solver did.
//!
//! - Row 1: a walk (a CMU BVH clip, or the procedural humanoid's walk moved
//!   forward at its stride speed) over a procedural staircase, seen from
//!   the side, with the character's root following the steps through a
//!   spring (a character controller, tracking the ground under the point
//!   between the animated ankles) and no foot placement: feet float above
//!   lower steps and sink into higher ones.
//! - Row 2: the same frames with [`FootPlacement`] on the staircase's
//!   [`Ground`], its springs carried from frame to frame.
//! - Row 3: the procedural humanoid walking in place while a [`look_at`]
//!   chain (spine, neck, head) keeps its eyes on a target moving on a
//!   figure-eight in front of it.
//!
//! Feet are measured at their soles: the ankle minus the walk's foot height
//! (its lowest ankle over the clip, the floor it was captured on).
//! Penetration is how far a sole goes below the ground; a planted foot's
//! float is how far above the ground a sole stands on frames where the
//! animation has it on the floor (within 1 cm).

use std::error::Error as StdError;
use std::path::{Path, PathBuf};

use sinew_core::clip::{RawClip, TimeMode};
use sinew_core::fk::{local_to_model, FkJob};
use sinew_core::ik::aim::{look_at, Aim, LookAtJoint};
use sinew_core::ik::foot::{FootLeg, FootPlacement, FootState, Ground, Spring};
use sinew_core::ik::IkPose;
use sinew_core::{Mat4, Skeleton, SoaTransform, Vec3};
use sinew_std::import::bvh::{self, BvhOptions};
use sinew_std::{Humanoid, OwnedClip, OwnedSkeleton};
use tiny_skia::{Color, Pixmap};

use crate::chart;
use crate::render::{dot, fill_polygon, polyline, BonePainter};

type Res<T> = Result<T, Box<dyn StdError>>;

/// The walk drawn when no `--bvh` is given, relative to the working
/// directory (the repository root): the CMU clip `tests/ik_foot.rs` walks
/// over stairs.
pub const DEFAULT_BVH: &str = "../shared/data/bvh/cmu/mb-friendly/02_01.bvh";

/// Length unit of CMU's MotionBuilder-friendly BVH conversions, in metres
/// (1/0.45 inch): the default `--bvh-scale`.
pub const CMU_UNIT: f32 = 0.0254 / 0.45;

/// Rise and run of every step of the staircase, metres.
pub const STAIR_RISE: f32 = 0.12;
/// See [`STAIR_RISE`].
pub const STAIR_RUN: f32 = 0.3;

/// Half-life of the character controller's spring (the root's height
/// following the ground under the hips), seconds.
const ROOT_HALF_LIFE: f32 = 0.15;

/// Half-life of the foot placement springs, seconds.
const FOOT_HALF_LIFE: f32 = 0.12;

/// Seconds of the procedural walk (about three cycles).
const PROCEDURAL_SECONDS: f32 = 3.3;

/// Period of the look-at target's figure-eight, seconds.
const EIGHT_PERIOD: f32 = 4.0;

/// Rate at which the procedural walk and the look-at are stepped, Hz.
const STEP_RATE: f32 = 60.0;

/// A sole counts as planted when the animation has it within this height
/// of its floor, metres.
const PLANTED: f32 = 0.01;

/// `sinew ik` arguments.
#[derive(clap::Args, Debug, Clone)]
pub struct IkArgs {
    /// Output PNG.
    #[arg(
        short,
        long = "out",
        visible_alias = "output",
        default_value = "ik.png"
    )]
    pub out: PathBuf,
    /// The walk, a BVH clip. Default: CMU 02_01 from ../shared/data, or the
    /// procedural humanoid's walk when that file is absent.
    #[arg(long)]
    pub bvh: Option<PathBuf>,
    /// Scale of the BVH's lengths to metres (default: CMU's
    /// MotionBuilder-friendly unit, 0.0254 / 0.45).
    #[arg(long, value_parser = positive_scale)]
    pub bvh_scale: Option<f32>,
    /// Poses per row.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub frames: u32,
    /// Cell size in pixels.
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(64..=1024))]
    pub cell: u32,
}

fn positive_scale(s: &str) -> Result<f32, String> {
    match s.parse::<f32>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 1.0e6 => Ok(v),
        Ok(_) => Err("must be a scale in (0, 1000000]".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// A staircase climbing along `dir` (horizontal, unit) from `origin`: flat
/// at height 0 before it, then a step of [`STAIR_RISE`] every [`STAIR_RUN`].
#[derive(Clone, Copy, Debug)]
pub struct Stairs {
    /// Where the first step's run begins (its height is ignored).
    pub origin: Vec3,
    /// Horizontal unit direction the stairs climb.
    pub dir: Vec3,
}

impl Stairs {
    /// Distance along the stairs of the point `(x, z)`.
    #[must_use]
    pub fn along(&self, x: f32, z: f32) -> f32 {
        (x - self.origin.x) * self.dir.x + (z - self.origin.z) * self.dir.z
    }

    /// Ground height at distance `s` along the stairs.
    #[must_use]
    pub fn height_along(s: f32) -> f32 {
        STAIR_RISE * (s / STAIR_RUN).floor().max(0.0)
    }

    /// Ground height under `(x, z)`.
    #[must_use]
    pub fn height(&self, x: f32, z: f32) -> f32 {
        Self::height_along(self.along(x, z))
    }

    /// The ground's side profile between distances `s0 < s1`: `(s, height)`
    /// corners, risers vertical.
    #[must_use]
    pub fn profile(s0: f32, s1: f32) -> Vec<(f32, f32)> {
        let mut out = vec![(s0, Self::height_along(s0))];
        let mut k = (s0 / STAIR_RUN).floor().max(0.0) + 1.0;
        while k * STAIR_RUN < s1 {
            let s = k * STAIR_RUN;
            out.push((s, STAIR_RISE * (k - 1.0)));
            out.push((s, STAIR_RISE * k));
            k += 1.0;
        }
        out.push((s1, Self::height_along(s1)));
        out
    }
}

impl Ground for Stairs {
    fn probe(&self, x: f32, z: f32) -> Option<(f32, Vec3)> {
        Some((self.height(x, z), Vec3::Y))
    }
}

/// A walk to put on the stairs: a skeleton, a clip and how to play it.
struct Walk {
    skeleton: OwnedSkeleton,
    clip: OwnedClip,
    /// What it is, for the figures' lines.
    name: String,
    /// Frames stepped and the step, seconds.
    frames: usize,
    dt: f32,
    /// Loop (an in-place cycle) or clamp (a capture).
    mode: TimeMode,
    /// Horizontal root velocity added to the clip, m/s (zero for a capture
    /// whose hips carry the walk).
    velocity: Vec3,
    /// The root joint of the legs (moved up and down) and the legs.
    pelvis: usize,
    legs: [FootLeg; 2],
    /// The lowest ankle height over the clip: the capture's floor.
    foot_height: f32,
}

/// Leg joint names by naming convention: (thigh, shin, foot) with `{}` for
/// the side, and the side words.
const LEG_NAMES: [([&str; 3], [&str; 2]); 3] = [
    (["{}UpLeg", "{}Leg", "{}Foot"], ["Left", "Right"]),
    (["{}Thigh", "{}Shin", "{}Foot"], ["l", "r"]),
    (["thigh_{}", "calf_{}", "foot_{}"], ["l", "r"]),
];

/// The two legs of `s` by name, and the root joint above them.
fn find_legs(s: &Skeleton<'_>) -> Res<(usize, [FootLeg; 2])> {
    for (pattern, sides) in LEG_NAMES {
        let leg = |side: &str| -> Option<FootLeg> {
            let j = |p: &str| s.find_joint(&p.replace("{}", side));
            Some(FootLeg {
                hip: j(pattern[0])?,
                knee: j(pattern[1])?,
                ankle: j(pattern[2])?,
                knee_axis: Vec3::new(-1.0, 0.0, 0.0),
            })
        };
        if let (Some(l), Some(r)) = (leg(sides[0]), leg(sides[1])) {
            let mut pelvis = l.hip;
            while let Some(p) = s.parent(pelvis) {
                pelvis = p;
            }
            if pelvis == l.hip {
                return Err("the legs have no joint above them to move".into());
            }
            return Ok((pelvis, [l, r]));
        }
    }
    Err("no legs found: expected LeftUpLeg/LeftLeg/LeftFoot, lThigh/lShin/lFoot or thigh_l/calf_l/foot_l and the right side's".into())
}

impl Walk {
    /// A BVH capture of a walk.
    fn from_bvh(path: &Path, scale: f32) -> Res<Walk> {
        let asset = bvh::load(
            path,
            &BvhOptions {
                scale,
                end_sites: false,
                ..BvhOptions::default()
            },
        )?;
        for w in &asset.warnings {
            eprintln!("sinew: warning: {}: {w}", path.display());
        }
        let clip = asset
            .clips
            .into_iter()
            .next()
            .ok_or_else(|| format!("{}: no motion", path.display()))?;
        if clip.frame_count() < 2 {
            return Err(format!("{}: a walk needs at least two frames", path.display()).into());
        }
        let (pelvis, legs) =
            find_legs(&asset.skeleton.view()).map_err(|e| format!("{}: {e}", path.display()))?;
        let name = path.file_stem().map_or_else(
            || path.display().to_string(),
            |s| s.to_string_lossy().into_owned(),
        );
        let mut walk = Walk {
            frames: clip.frame_count(),
            dt: 1.0 / clip.sample_rate(),
            skeleton: asset.skeleton,
            clip,
            name: format!("{name} ({})", path.display()),
            mode: TimeMode::Clamp,
            velocity: Vec3::ZERO,
            pelvis,
            legs,
            foot_height: 0.0,
        };
        walk.foot_height = walk.lowest_ankle()?;
        Ok(walk)
    }

    /// The procedural humanoid's walk cycle, its root moved forward (+Z) at
    /// the speed its stance foot slides back, so the feet do not skate.
    fn procedural() -> Res<Walk> {
        let h = Humanoid::default_rate();
        let [walk, _, _] = h.clips;
        let (pelvis, legs) = find_legs(&h.skeleton.view())?;
        let mut w = Walk {
            skeleton: h.skeleton,
            name: "the procedural humanoid's walk".into(),
            frames: (PROCEDURAL_SECONDS * STEP_RATE).round() as usize,
            dt: 1.0 / STEP_RATE,
            mode: TimeMode::Loop,
            velocity: Vec3::ZERO,
            clip: walk,
            pelvis,
            legs,
            foot_height: 0.0,
        };
        w.foot_height = w.lowest_ankle()?;
        w.velocity = Vec3::new(0.0, 0.0, w.stance_speed()?);
        Ok(w)
    }

    /// The local pose of frame `f` into `out`.
    fn pose(&self, f: usize, out: &mut [SoaTransform]) -> Res<()> {
        self.clip
            .view()
            .sample(f as f32 * self.dt, self.mode, out)?;
        Ok(())
    }

    /// Model matrices of frame `f`'s pose `local` under `root`.
    fn fk(&self, local: &[SoaTransform], root: &Mat4, models: &mut [Mat4]) -> Res<()> {
        let s = self.skeleton.view();
        local_to_model(&FkJob::new(&s, local).with_root(root), models)?;
        Ok(())
    }

    /// The root translation of frame `f` on a flat floor at height `floor`.
    fn root(&self, f: usize, floor: f32) -> Mat4 {
        let o = self.velocity * (f as f32 * self.dt);
        Mat4::from_translation(Vec3::new(o.x, floor, o.z))
    }

    /// Ankle heights over the frames, on the flat floor.
    fn ankle_track(&self) -> Res<Vec<[Vec3; 2]>> {
        let s = self.skeleton.view();
        let mut local = vec![SoaTransform::IDENTITY; s.soa_count()];
        let mut models = vec![Mat4::IDENTITY; s.joint_count()];
        (0..self.frames)
            .map(|f| {
                self.pose(f, &mut local)?;
                self.fk(&local, &Mat4::IDENTITY, &mut models)?;
                Ok(self.legs.map(|l| models[l.ankle].translation()))
            })
            .collect()
    }

    fn lowest_ankle(&self) -> Res<f32> {
        let low = self
            .ankle_track()?
            .iter()
            .flatten()
            .fold(f32::INFINITY, |m, a| m.min(a.y));
        if low.is_finite() && low >= 0.0 {
            Ok(low)
        } else {
            Err(format!("{}: an ankle goes below the floor ({low} m)", self.name).into())
        }
    }

    /// The mean backward speed of the lower (stance) foot, m/s.
    fn stance_speed(&self) -> Res<f32> {
        let track = self.ankle_track()?;
        let mut sum = 0.0;
        for w in track.windows(2) {
            let k = usize::from(w[0][1].y < w[0][0].y);
            sum += (w[0][k].z - w[1][k].z) / self.dt;
        }
        Ok((sum / (track.len().max(2) - 1) as f32).max(0.0))
    }
}

/// What a walk over the stairs measured.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FootFigures {
    /// Frames walked.
    pub frames: usize,
    /// Deepest a sole went below the ground, metres (0 when none did).
    pub penetration: f32,
    /// Highest a planted sole stood above the ground, metres.
    pub float: f32,
    /// Leg solves that reached their target, and leg solves.
    pub reached: (usize, usize),
}

/// One walk over the stairs, with or without foot placement: the figures
/// and, for each frame in `cells`, the joints' positions, the root height
/// and the soles' depths below the ground.
struct StairWalk {
    figures: FootFigures,
    cells: Vec<(Vec<Vec3>, f32, [f32; 2])>,
}

fn walk_stairs(walk: &Walk, stairs: &Stairs, feet: bool, cells: &[usize]) -> Res<StairWalk> {
    let s = walk.skeleton.view();
    let mut local = vec![SoaTransform::IDENTITY; s.soa_count()];
    let mut models = vec![Mat4::IDENTITY; s.joint_count()];
    let placement = FootPlacement {
        pelvis: walk.pelvis,
        legs: walk.legs,
        foot_height: walk.foot_height,
        max_tilt: 0.6,
        max_pelvis_offset: 0.4,
        half_life: FOOT_HALF_LIFE,
        soften: 0.97,
    };
    let mut state = FootState::new();
    let mut controller = Spring::default();
    let mut figures = FootFigures {
        frames: walk.frames,
        ..FootFigures::default()
    };
    let mut drawn = Vec::with_capacity(cells.len());
    for f in 0..walk.frames {
        walk.pose(f, &mut local)?;
        // The character controller: the root follows the ground under the
        // point between the animated ankles (where the walk carries its
        // weight; the procedural walk's feet trail its hips) through a
        // spring, so a step's edge is no jump.
        walk.fk(&local, &walk.root(f, 0.0), &mut models)?;
        let [l, r] = walk.legs.map(|l| models[l.ankle].translation());
        let support = (l + r) * 0.5;
        let half_life = if f == 0 { 0.0 } else { ROOT_HALF_LIFE };
        let floor = controller.update(stairs.height(support.x, support.z), half_life, walk.dt);
        let root = walk.root(f, floor);
        walk.fk(&local, &root, &mut models)?;
        let planted = walk
            .legs
            .map(|l| models[l.ankle].translation().y - floor - walk.foot_height < PLANTED);
        if feet {
            let mut pose = IkPose::new(&s, &mut local, &mut models, Some(&root))?;
            let r = placement.solve(&mut pose, stairs, floor, walk.dt, &mut state)?;
            figures.reached.0 += r.reached.iter().filter(|&&x| x).count();
            figures.reached.1 += 2;
        }
        let mut depths = [0.0; 2];
        for ((leg, planted), depth) in walk.legs.iter().zip(planted).zip(&mut depths) {
            let a = models[leg.ankle].translation();
            *depth = stairs.height(a.x, a.z) - (a.y - walk.foot_height);
            figures.penetration = figures.penetration.max(*depth);
            if planted {
                figures.float = figures.float.max(-*depth);
            }
        }
        if cells.contains(&f) {
            drawn.push((
                models.iter().map(Mat4::translation).collect(),
                floor,
                depths,
            ));
        }
    }
    Ok(StairWalk {
        figures,
        cells: drawn,
    })
}

/// What the look-at measured.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LookFigures {
    /// Steps solved.
    pub steps: usize,
    /// Largest angle between the eyes' ray and the target with the
    /// look-at, degrees.
    pub error: f32,
    /// The same for the animation alone (how far the solver had to turn).
    pub free: f32,
}

/// The eyes of the humanoid's head: forward +Z, up +Y, 8 cm above and in
/// front of the head joint.
fn head_aim(target: Vec3) -> Aim {
    Aim::new(target, Vec3::Z, Vec3::Y)
        .with_offset(Vec3::new(0.0, 0.08, 0.08))
        .with_pole(Vec3::Y)
}

/// The look-at target at time `t`: a figure-eight 1.2 m in front of the
/// character, at eye height.
fn eight(t: f32) -> Vec3 {
    let w = std::f32::consts::TAU * t / EIGHT_PERIOD;
    Vec3::new(0.7 * w.sin(), 1.55 + 0.3 * (2.0 * w).sin(), 1.2)
}

/// Angle in degrees between the ray `model` aims (`aim`'s offset and
/// forward axis) and `aim.target`.
fn aim_error(model: &Mat4, aim: &Aim) -> f32 {
    let o = model.transform_point(aim.offset);
    let f = model.transform_vector(aim.forward);
    let t = aim.target - o;
    f.cross(t).length().atan2(f.dot(t)).to_degrees()
}

/// One look-at row: the figures, and for each time in `cells` the joints'
/// positions, the eyes and the target.
struct LookRow {
    figures: LookFigures,
    cells: Vec<(Vec<Vec3>, Vec3, Vec3)>,
}

fn look_row(h: &Humanoid, cells: &[usize]) -> Res<LookRow> {
    let s = h.skeleton.view();
    let clip: RawClip<'_> = h.clips[0].view();
    let j = |n: &str| s.find_joint(n).ok_or_else(|| format!("no joint {n}"));
    let head = j("head")?;
    let chain = [
        LookAtJoint::new(j("spine_03")?, 0.3).with_max_angle(0.35),
        LookAtJoint::new(j("neck_01")?, 0.5).with_max_angle(0.6),
        LookAtJoint::new(head, 1.0),
    ];
    let mut local = vec![SoaTransform::IDENTITY; s.soa_count()];
    let mut models = vec![Mat4::IDENTITY; s.joint_count()];
    let steps = (EIGHT_PERIOD * STEP_RATE).round() as usize;
    let mut figures = LookFigures {
        steps,
        ..LookFigures::default()
    };
    let mut drawn = Vec::with_capacity(cells.len());
    for i in 0..steps {
        let t = i as f32 / STEP_RATE;
        clip.sample(t, TimeMode::Loop, &mut local)?;
        local_to_model(&FkJob::new(&s, &local), &mut models)?;
        let aim = head_aim(eight(t));
        figures.free = figures.free.max(aim_error(&models[head], &aim));
        let mut pose = IkPose::new(&s, &mut local, &mut models, None)?;
        look_at(&mut pose, &chain, &aim)?;
        figures.error = figures.error.max(aim_error(&models[head], &aim));
        if cells.contains(&i) {
            let eyes = models[head].transform_point(aim.offset);
            drawn.push((
                models.iter().map(Mat4::translation).collect(),
                eyes,
                aim.target,
            ));
        }
    }
    Ok(LookRow {
        figures,
        cells: drawn,
    })
}

/// Everything `sinew ik` measured.
#[derive(Clone, Debug)]
pub struct IkFigures {
    /// The walk used in rows 1 and 2.
    pub walk: String,
    /// Row 1: no foot placement.
    pub off: FootFigures,
    /// Row 2: foot placement.
    pub on: FootFigures,
    /// Row 3: the look-at.
    pub look: LookFigures,
}

/// `count` indices spread evenly over `0..n`.
pub(crate) fn spread(n: usize, count: usize) -> Vec<usize> {
    (0..count).map(|i| i * n / count.max(1)).collect()
}

pub(crate) const BACKGROUND: [u8; 4] = [250, 250, 247, 255];
pub(crate) const GROUND_FILL: [u8; 4] = [222, 218, 208, 255];
pub(crate) const GROUND_EDGE: [u8; 4] = [120, 112, 100, 255];
pub(crate) const DIVIDER: [u8; 4] = [200, 200, 195, 255];
const SUNK: [u8; 4] = [215, 30, 30, 255];
const ON_GROUND: [u8; 4] = [30, 150, 60, 255];
const TARGET: [u8; 4] = [200, 30, 120, 255];

pub(crate) fn row_pixmap(cells: usize, cell: u32) -> Res<Pixmap> {
    let mut p = Pixmap::new(cell * cells as u32, cell).ok_or("bad row size")?;
    p.fill(Color::from_rgba8(
        BACKGROUND[0],
        BACKGROUND[1],
        BACKGROUND[2],
        255,
    ));
    for i in 1..cells {
        let x = (i as u32 * cell) as f32;
        polyline(&mut p, &[(x, 0.0), (x, cell as f32)], DIVIDER, 1.0);
    }
    Ok(p)
}

/// A stairs row, side view: each cell centred on the hips, the ground's
/// profile filled, each sole a dot (red below the ground by more than 5 mm).
fn draw_stairs_row(
    walk: &Walk,
    stairs: &Stairs,
    row: &StairWalk,
    height: f32,
    cell: u32,
) -> Res<Pixmap> {
    let mut p = row_pixmap(row.cells.len(), cell)?;
    let size = cell as f32;
    // Metres shown: the character's height and room for a step below.
    let span = height + 0.55;
    let scale = size / span;
    let bones = BonePainter::new(&walk.skeleton.view());
    for (i, (joints, floor, depths)) in row.cells.iter().enumerate() {
        let ox = i as f32 * size;
        let hips = joints[walk.pelvis];
        let sc = stairs.along(hips.x, hips.z);
        let top = floor + height + 0.2;
        let to_px = |s: f32, y: f32| (ox + 0.5 * size + (s - sc) * scale, (top - y) * scale);
        let half = 0.5 * span - 0.02;
        let mut ground: Vec<(f32, f32)> = Stairs::profile(sc - half, sc + half)
            .into_iter()
            .map(|(s, h)| to_px(s, h))
            .collect();
        let edge = ground.clone();
        ground.push((ox + size - 1.0, size));
        ground.push((ox + 1.0, size));
        fill_polygon(&mut p, &ground, GROUND_FILL);
        polyline(&mut p, &edge, GROUND_EDGE, 1.5);
        let points: Vec<(f32, f32)> = joints
            .iter()
            .map(|&q| to_px(stairs.along(q.x, q.z), q.y))
            .collect();
        bones.draw(&mut p, &points, (size / 90.0).max(1.5));
        for (leg, depth) in walk.legs.iter().zip(depths) {
            let a = joints[leg.ankle];
            let sole = to_px(stairs.along(a.x, a.z), a.y - walk.foot_height);
            let colour = if *depth > 0.005 { SUNK } else { ON_GROUND };
            dot(&mut p, sole, (size / 60.0).max(2.0), colour);
        }
    }
    Ok(p)
}

/// The look-at row: a three-quarter front view, the target's figure-eight,
/// the target and the eyes' line of sight.
fn draw_look_row(h: &Humanoid, row: &LookRow, cell: u32) -> Res<Pixmap> {
    let mut p = row_pixmap(row.cells.len(), cell)?;
    let size = cell as f32;
    let (sn, cs) = (-55f32).to_radians().sin_cos();
    let project = |q: Vec3| (q.x * cs - q.z * sn, -q.y);
    let path: Vec<Vec3> = (0..=64)
        .map(|i| eight(EIGHT_PERIOD * i as f32 / 64.0))
        .collect();
    // One scale for every cell: the body and the whole figure-eight fit.
    let (mut lo, mut hi) = ([f32::MAX; 2], [f32::MIN; 2]);
    for q in row.cells.iter().flat_map(|c| c.0.iter()).chain(&path) {
        let (x, y) = project(*q);
        lo = [lo[0].min(x), lo[1].min(y)];
        hi = [hi[0].max(x), hi[1].max(y)];
    }
    let scale = 0.9 * size / (hi[0] - lo[0]).max(hi[1] - lo[1]).max(1e-3);
    let centre = [0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1])];
    let bones = BonePainter::new(&h.skeleton.view());
    for (i, (joints, eyes, target)) in row.cells.iter().enumerate() {
        let ox = i as f32 * size + 0.5 * size;
        let to_px = |q: Vec3| {
            let (x, y) = project(q);
            (
                ox + (x - centre[0]) * scale,
                0.5 * size + (y - centre[1]) * scale,
            )
        };
        let curve: Vec<(f32, f32)> = path.iter().map(|&q| to_px(q)).collect();
        polyline(&mut p, &curve, DIVIDER, 1.0);
        let points: Vec<(f32, f32)> = joints.iter().map(|&q| to_px(q)).collect();
        bones.draw(&mut p, &points, (size / 90.0).max(1.5));
        polyline(&mut p, &[to_px(*eyes), to_px(*target)], TARGET, 1.0);
        dot(&mut p, to_px(*target), (size / 40.0).max(2.5), TARGET);
    }
    Ok(p)
}

/// The walk for rows 1 and 2: `--bvh`, else [`DEFAULT_BVH`] when it
/// exists, else the procedural walk (said on stderr).
fn choose_walk(args: &IkArgs) -> Res<Walk> {
    let scale = args.bvh_scale.unwrap_or(CMU_UNIT);
    match &args.bvh {
        Some(path) => Walk::from_bvh(path, scale),
        None if Path::new(DEFAULT_BVH).is_file() => Walk::from_bvh(Path::new(DEFAULT_BVH), scale),
        None => {
            eprintln!(
                "sinew: {DEFAULT_BVH} not found (run from the repository root with ../shared/data beside it, or pass --bvh); using the procedural humanoid's walk"
            );
            Walk::procedural()
        }
    }
}

/// Runs the three rows and draws them: the picture and the figures.
///
/// # Errors
/// A BVH that cannot be read or has no legs, a kernel error, or a drawing error.
pub fn ik_strip(args: &IkArgs) -> Res<(Pixmap, IkFigures)> {
    let walk = choose_walk(args)?;
    let cells = spread(walk.frames, args.frames as usize);
    // The stairs climb the way the walk goes, from where it starts.
    let first = {
        let s = walk.skeleton.view();
        let mut local = vec![SoaTransform::IDENTITY; s.soa_count()];
        let mut models = vec![Mat4::IDENTITY; s.joint_count()];
        let mut hips = [Vec3::ZERO; 2];
        for (k, f) in [0, walk.frames - 1].into_iter().enumerate() {
            walk.pose(f, &mut local)?;
            walk.fk(&local, &walk.root(f, 0.0), &mut models)?;
            hips[k] = models[walk.pelvis].translation();
        }
        hips
    };
    let dir = Vec3::new(first[1].x - first[0].x, 0.0, first[1].z - first[0].z)
        .try_normalize()
        .ok_or_else(|| format!("{}: the hips do not move; not a walk", walk.name))?;
    let stairs = Stairs {
        origin: first[0],
        dir,
    };
    let off = walk_stairs(&walk, &stairs, false, &cells)?;
    let on = walk_stairs(&walk, &stairs, true, &cells)?;
    // The character's height: its tallest joint above the soles.
    let height = off
        .cells
        .iter()
        .map(|(j, floor, _)| j.iter().fold(0.0f32, |m, q| m.max(q.y - floor)))
        .fold(1.0f32, f32::max);
    let h = Humanoid::default_rate();
    let look_cells = spread(
        (EIGHT_PERIOD * STEP_RATE).round() as usize,
        args.frames as usize,
    );
    let look = look_row(&h, &look_cells)?;
    let rows = [
        draw_stairs_row(&walk, &stairs, &off, height, args.cell)?,
        draw_stairs_row(&walk, &stairs, &on, height, args.cell)?,
        draw_look_row(&h, &look, args.cell)?,
    ];
    let figures = IkFigures {
        walk: walk.name.clone(),
        off: off.figures,
        on: on.figures,
        look: look.figures,
    };
    let captions = [
        format!(
            "1. foot placement off: soles up to {:.0} mm into the steps, planted soles up to {:.0} mm above them (red: sunk)",
            figures.off.penetration * 1e3,
            figures.off.float * 1e3
        ),
        format!(
            "2. foot placement on: soles at most {:.1} mm into the steps, planted soles up to {:.0} mm above them",
            figures.on.penetration.max(0.0) * 1e3,
            figures.on.float * 1e3
        ),
        format!(
            "3. look-at over spine, neck and head: the eyes within {:.2}° of the target (the walk alone: up to {:.0}°)",
            figures.look.error, figures.look.free
        ),
    ];
    let title = format!(
        "IK: {} over stairs ({:.0} mm rise, {:.0} mm run), side view; the procedural humanoid looking at a moving target",
        figures.walk,
        STAIR_RISE * 1e3,
        STAIR_RUN * 1e3
    );
    let png = label_rows(&rows, &title, &captions)?;
    Ok((png, figures))
}

/// The rows stacked under `title`, each with its caption above it.
pub(crate) fn label_rows(rows: &[Pixmap], title: &str, captions: &[String]) -> Res<Pixmap> {
    let width = rows.iter().map(Pixmap::width).max().unwrap_or(1);
    let size = 14;
    let header = 2 * size + 10;
    let band = size + 12;
    let mut y = header;
    let mut placed = Vec::with_capacity(rows.len());
    for r in rows {
        placed.push((r, (0, y + band)));
        y += band + r.height();
    }
    canvas_rows(width, y + 6, &placed, title, captions, size, band)
}

fn canvas_rows(
    width: u32,
    height: u32,
    placed: &[(&Pixmap, (u32, u32))],
    title: &str,
    captions: &[String],
    size: u32,
    band: u32,
) -> Res<Pixmap> {
    chart::canvas(width, height, placed, |root| {
        chart::text(root, title, (8, 8), size + 2)?;
        for ((_, (_, y)), c) in placed.iter().zip(captions) {
            chart::text(root, c, (8, (*y - band + 5) as i32), size)?;
        }
        Ok(())
    })
}

/// `sinew ik`: writes the strip and prints one line per row.
///
/// # Errors
/// As [`ik_strip`], or the PNG cannot be written.
pub fn ik_command(args: &IkArgs, out: &dyn Fn(&str)) -> Res<()> {
    let (png, f) = ik_strip(args)?;
    png.save_png(&args.out)
        .map_err(|e| format!("cannot write {}: {e}", args.out.display()))?;
    out(&format!(
        "row 1, foot placement off: {} over stairs, {} frames: max foot penetration {:.1} mm, max planted-foot float {:.1} mm",
        f.walk,
        f.off.frames,
        f.off.penetration.max(0.0) * 1e3,
        f.off.float.max(0.0) * 1e3
    ));
    out(&format!(
        "row 2, foot placement on: max foot penetration {:.1} mm, max planted-foot float {:.1} mm, {} of {} leg solves reached",
        f.on.penetration.max(0.0) * 1e3,
        f.on.float.max(0.0) * 1e3,
        f.on.reached.0,
        f.on.reached.1
    ));
    out(&format!(
        "row 3, look-at (spine_03, neck_01, head) on a figure-eight target, {} steps: max look-at angle error {:.3} deg (walk alone: {:.1} deg)",
        f.look.steps, f.look.error, f.look.free
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
    fn stairs_profile_has_vertical_risers() {
        let p = Stairs::profile(-0.1, 0.65);
        assert_eq!(
            p,
            vec![
                (-0.1, 0.0),
                (0.3, 0.0),
                (0.3, STAIR_RISE),
                (0.6, STAIR_RISE),
                (0.6, 2.0 * STAIR_RISE),
                (0.65, 2.0 * STAIR_RISE)
            ]
        );
    }

    #[test]
    fn procedural_walk_moves_forward_at_a_walking_speed() {
        let w = Walk::procedural().unwrap();
        assert!((0.5..2.0).contains(&w.velocity.z), "{:?}", w.velocity);
        assert!((0.0..0.2).contains(&w.foot_height), "{}", w.foot_height);
    }
}
