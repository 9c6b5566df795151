//! `sinew match`: a motion-matching database built from mocap clips (by
//! default the CMU clips of one skeleton in `../shared/data`, else the
//! procedural humanoid's locomotion with root motion), a character
//! driven along scripted paths (straight, circle, zig-zag with sharp turns,
//! stop and go) by the [`Matcher`], and per path the search time, the
//! searches per second and how far the played root stays from the path.
//!
//! The path is followed closed-loop, as a player's stick would: the desired
//! velocity is the path's own velocity plus a pull towards the path point
//! of the moment, so the distance measured is the controller's tracking
//! error, not drift that nothing corrects.

use std::error::Error as StdError;
use std::path::{Path, PathBuf};
use std::time::Instant;

use sinew_core::clip::RawClip;
use sinew_core::fk::{local_to_model, FkJob};
use sinew_core::mix::root_motion::rotate_y;
use sinew_core::mix::transition::InertialBlock;
use sinew_core::motion_matching::{Database, Desired, MatchBuffers, Matcher, MatcherConfig};
use sinew_core::{Mat4, Quat, Skeleton, SoaTransform, Vec3};
use sinew_std::import::load::{load_files, LoadOptions};
use sinew_std::matching::{self, BuildOptions, OwnedDatabase};
use sinew_std::{OwnedClip, OwnedSkeleton};
use tiny_skia::{Color, Pixmap};

use crate::chart;
use crate::render::{dot, polyline, BonePainter};

type Res<T> = Result<T, Box<dyn StdError>>;

/// The clips used when no files are given, relative to the working
/// directory (the repository root).
pub const DEFAULT_DIR: &str = "../shared/data/bvh/cmu/daz-friendly";

/// Frame rate of the simulation, Hz.
const RATE: f32 = 60.0;

/// Walking speed asked for, metres per second.
const SPEED: f32 = 1.4;

/// Gain of the pull towards the path point of the moment, 1/s.
const PULL: f32 = 1.5;

/// `sinew match` arguments.
#[derive(clap::Args, Debug, Clone)]
pub struct MatchArgs {
    /// Clips of one skeleton: BVH or glTF files, or an ozz skeleton archive and its
    /// animations (default: every BVH in ../shared/data/bvh/cmu/daz-friendly with the
    /// first file's skeleton; clips of other skeletons are retargeted onto it).
    pub files: Vec<PathBuf>,
    /// Length unit of BVH files, in metres.
    #[arg(long, default_value_t = 0.01)]
    pub scale: f32,
    /// Add a mirrored copy of every clip.
    #[arg(long)]
    pub mirror: bool,
    /// Seconds each path is driven.
    #[arg(long, default_value_t = 20.0)]
    pub seconds: f32,
    /// Seconds between searches.
    #[arg(long, default_value_t = 0.1)]
    pub interval: f32,
    /// Draw the paths (asked for and played) and a strip of poses to this PNG.
    #[arg(long)]
    pub png: Option<PathBuf>,
    /// Grow the database to this many frames by repeating its frames with
    /// noise (for timing searches at scale; the paths still play the clips).
    #[arg(long)]
    pub grow: Option<usize>,
    /// Write the database container to this file.
    #[arg(long)]
    pub save_db: Option<PathBuf>,
    /// Write the normalized features and the queries the paths made, for
    /// timing other searches on the same data (format in docs/motion-matching.md).
    #[arg(long)]
    pub export_features: Option<PathBuf>,
}

/// One scripted path: where the character is asked to be at time `t`, and
/// how fast that point moves.
#[derive(Clone, Copy, Debug)]
pub enum Path2 {
    /// Straight ahead along +Z.
    Straight,
    /// A circle of 3 m radius, anticlockwise seen from above.
    Circle,
    /// 4 m legs alternating ±45° off +Z: 90° turns.
    ZigZag,
    /// Straight ahead, walking 3 s then standing 2 s.
    StopAndGo,
}

impl Path2 {
    /// Every path, in the order they are reported.
    pub const ALL: [Path2; 4] = [
        Path2::Straight,
        Path2::Circle,
        Path2::ZigZag,
        Path2::StopAndGo,
    ];

    /// The path's name.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Path2::Straight => "straight",
            Path2::Circle => "circle",
            Path2::ZigZag => "zig-zag",
            Path2::StopAndGo => "stop and go",
        }
    }

    /// Position and velocity of the path point at time `t` (ground plane).
    #[must_use]
    pub fn at(self, t: f32) -> (Vec3, Vec3) {
        match self {
            Path2::Straight => (Vec3::new(0.0, 0.0, SPEED * t), Vec3::new(0.0, 0.0, SPEED)),
            Path2::Circle => {
                let r = 3.0;
                let a = SPEED * t / r;
                (
                    Vec3::new(r - r * a.cos(), 0.0, r * a.sin()),
                    Vec3::new(SPEED * a.sin(), 0.0, SPEED * a.cos()),
                )
            }
            Path2::ZigZag => {
                let leg = 4.0 / SPEED;
                let k = (t / leg).floor();
                let s = t - k * leg;
                let d = std::f32::consts::FRAC_1_SQRT_2;
                let dir = |i: f32| {
                    if (i as i64) % 2 == 0 {
                        Vec3::new(d, 0.0, d)
                    } else {
                        Vec3::new(-d, 0.0, d)
                    }
                };
                // Whole legs: x returns to 0 every two legs, z advances.
                let pairs = (k / 2.0).floor();
                let mut p = Vec3::new(0.0, 0.0, pairs * 2.0 * 4.0 * d);
                if (k as i64) % 2 == 1 {
                    p = p + dir(0.0) * 4.0;
                }
                (p + dir(k) * (s * SPEED), dir(k) * SPEED)
            }
            Path2::StopAndGo => {
                let cycle = (t / 5.0).floor();
                let s = t - cycle * 5.0;
                let walked = cycle * 3.0 + s.min(3.0);
                let v = if s < 3.0 { SPEED } else { 0.0 };
                (Vec3::new(0.0, 0.0, SPEED * walked), Vec3::new(0.0, 0.0, v))
            }
        }
    }
}

/// What one path run measured.
#[derive(Clone, Debug, Default)]
pub struct PathReport {
    /// Searches made.
    pub searches: usize,
    /// Transitions started.
    pub transitions: usize,
    /// Mean and max seconds of one pruned search of the controller's
    /// queries, unbounded.
    pub search_mean: f64,
    /// Mean seconds of one brute-force search of the same queries.
    pub brute_mean: f64,
    /// See [`Self::search_mean`].
    pub search_max: f64,
    /// Mean and max distance (metres) between the path point and the played root.
    pub mean_distance: f32,
    /// See [`Self::mean_distance`].
    pub max_distance: f32,
    /// Asked-for and played ground positions, one per frame.
    pub asked: Vec<Vec3>,
    /// See [`Self::asked`].
    pub played: Vec<Vec3>,
    /// Model-space joint positions (world) every 0.5 s, for the strip.
    pub poses: Vec<Vec<Vec3>>,
    /// The queries of every search (normalized).
    pub queries: Vec<Vec<f32>>,
    /// The bound each of those searches used (see
    /// [`sinew_core::motion_matching::MatchStep::bound`]).
    pub bounds: Vec<f32>,
}

/// Joints a retarget onto the database's skeleton must map before its
/// clips are used (a humanoid's hips, spine, head and limbs).
const MIN_MAPPED_JOINTS: usize = 12;

/// `asset`'s clips baked onto `target`, and how many target joints the
/// map drives.
fn retarget_onto(asset: &sinew_std::Asset, target: &OwnedSkeleton) -> Res<(Vec<OwnedClip>, usize)> {
    use sinew_std::retarget::{bake, BakeOptions, OwnedMap};
    let (s, t) = (asset.skeleton.view(), target.view());
    let options = sinew_core::retarget::MapOptions {
        align_rest_directions: true,
        ..sinew_core::retarget::MapOptions::default()
    };
    let map = OwnedMap::build(&s, &t, &[], &options)?;
    let mapped = map.report.mapped.len();
    if mapped < MIN_MAPPED_JOINTS {
        return Err(format!("only {mapped} joints in common").into());
    }
    let clips = asset
        .clips
        .iter()
        .map(|c| Ok(bake(&map, &s, &t, c, &BakeOptions::default())?.0))
        .collect::<Res<Vec<_>>>()?;
    Ok((clips, mapped))
}

/// The clips of `files` (BVH files, each its own asset with lengths times
/// `scale` to metres; glTF files; or an ozz skeleton archive and its
/// animations) on the first asset's skeleton: clips of another skeleton
/// retargeted onto it; and a line per asset retargeted or skipped.
///
/// # Errors
/// A file that cannot be read or imported; no clip at all.
pub fn load_clips(
    files: &[PathBuf],
    scale: f32,
) -> Res<(OwnedSkeleton, Vec<OwnedClip>, Vec<String>)> {
    let opts = LoadOptions {
        bvh_scale: scale,
        bvh_end_sites: false,
        ..LoadOptions::default()
    };
    let mut skeleton: Option<OwnedSkeleton> = None;
    let mut clips = Vec::new();
    let mut skipped = Vec::new();
    // Each BVH file is its own asset; other files load together (an ozz
    // skeleton archive and its animations).
    let (bvh, other): (Vec<PathBuf>, Vec<PathBuf>) = files
        .iter()
        .cloned()
        .partition(|f| f.extension().is_some_and(|x| x.eq_ignore_ascii_case("bvh")));
    let mut assets = Vec::new();
    for f in &bvh {
        assets.extend(load_files(std::slice::from_ref(f), &opts)?);
    }
    if !other.is_empty() {
        assets.extend(load_files(&other, &opts)?);
    }
    for asset in assets {
        let same = match &skeleton {
            None => true,
            Some(s) => {
                let (a, b) = (s.view(), asset.skeleton.view());
                a.joint_count() == b.joint_count()
                    && (0..a.joint_count()).all(|j| a.joint_name(j) == b.joint_name(j))
            }
        };
        if !same {
            // Another skeleton: its clips retargeted onto the first one's
            // (name tables, rest directions aligned, planted feet kept),
            // or listed as skipped when the skeletons have too little in
            // common.
            let Some(target) = &skeleton else { continue };
            match retarget_onto(&asset, target) {
                Ok((baked, mapped)) => {
                    skipped.push(format!(
                        "{} ({} joints, another skeleton): retargeted, {mapped} of {} joints mapped",
                        asset.source.display(),
                        asset.skeleton.joint_count(),
                        target.joint_count()
                    ));
                    clips.extend(baked);
                }
                Err(e) => skipped.push(format!(
                    "{} ({} joints, another skeleton): not retargeted: {e}",
                    asset.source.display(),
                    asset.skeleton.joint_count()
                )),
            }
            continue;
        }
        if skeleton.is_none() {
            skeleton = Some(asset.skeleton.clone());
        }
        clips.extend(asset.clips);
    }
    let skeleton = skeleton.ok_or("no clips to build a database from")?;
    if clips.is_empty() {
        return Err("the files hold no clips".into());
    }
    Ok((skeleton, clips, skipped))
}

/// The BVH files of `dir` (sorted by name).
///
/// # Errors
/// `dir` cannot be read.
pub fn bvh_files(dir: &Path) -> Res<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read {} ({e}); give BVH files", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x.eq_ignore_ascii_case("bvh")))
        .collect();
    files.sort();
    Ok(files)
}

/// Drives one path for `seconds` and measures it.
///
/// # Errors
/// What the controller returns.
pub fn drive(
    skeleton: &Skeleton<'_>,
    db: &Database<'_>,
    clips: &[RawClip<'_>],
    path: Path2,
    seconds: f32,
    config: MatcherConfig,
) -> Res<PathReport> {
    let n = skeleton.soa_count();
    let mut pose = vec![SoaTransform::IDENTITY; n];
    let mut previous = pose.clone();
    let mut target = pose.clone();
    let mut target_previous = pose.clone();
    let mut inertial = vec![InertialBlock::default(); n];
    let mut query = vec![0.0f32; db.feature_count()];
    let mut models = vec![Mat4::IDENTITY; skeleton.joint_count()];
    let (start, v0) = path.at(0.0);
    let mut matcher = Matcher::new(config, start, v0.x.atan2(v0.z))?;
    let mut report = PathReport::default();
    let dt = 1.0 / RATE;
    let frames = (seconds * RATE) as usize;
    let mut yaw = v0.x.atan2(v0.z);
    let mut total = 0.0f64;
    let mut brute_total = 0.0f64;
    let mut distance = 0.0f64;
    for i in 0..frames {
        let t = (i + 1) as f32 * dt;
        let (p, v) = path.at(t);
        if v.length() > 1e-3 {
            yaw = v.x.atan2(v.z);
        }
        let pull = (p - matcher.character.position) * PULL;
        let desired = Desired {
            velocity: v + pull,
            yaw,
        };
        let mut buffers = MatchBuffers {
            rest: &[],
            pose: &mut pose,
            previous: &mut previous,
            target: &mut target,
            target_previous: &mut target_previous,
            scratch: &mut [],
            inertial: &mut inertial,
            query: &mut query,
        };
        let step = matcher.update(db, clips, &desired, dt, &mut buffers)?;
        if step.searched {
            // The query again, searched with no bound (the worst case of
            // the controller's bounded search), pruned and brute force.
            let clock = Instant::now();
            let pruned = db.search(&query, f32::INFINITY)?;
            let took = clock.elapsed().as_secs_f64();
            let clock = Instant::now();
            let brute = db.search_brute(&query, f32::INFINITY)?;
            brute_total += clock.elapsed().as_secs_f64();
            if pruned != brute {
                return Err(format!(
                    "pruned and brute-force searches differ: {pruned:?} {brute:?}"
                )
                .into());
            }
            report.searches += 1;
            total += took;
            report.search_max = report.search_max.max(took);
            report.queries.push(query.clone());
            report.bounds.push(step.bound);
        }
        report.transitions += usize::from(step.transitioned);
        let c = matcher.character.position;
        let d = (Vec3::new(c.x, 0.0, c.z) - p).length();
        distance += f64::from(d);
        report.max_distance = report.max_distance.max(d);
        report.asked.push(p);
        report.played.push(c);
        if i % (RATE as usize / 2) == 0 {
            local_to_model(&FkJob::new(skeleton, &pose), &mut models)?;
            let face = Quat::from_rotation_y(matcher.character.yaw);
            report.poses.push(
                models
                    .iter()
                    .map(|m| face.rotate(m.translation()) + c)
                    .collect(),
            );
        }
    }
    report.search_mean = total / report.searches.max(1) as f64;
    report.brute_mean = brute_total / report.searches.max(1) as f64;
    report.mean_distance = (distance / frames.max(1) as f64) as f32;
    Ok(report)
}

/// Top-down panels of the paths (asked grey, played orange) above a strip
/// of poses along the zig-zag, seen from the side.
fn draw(reports: &[(Path2, PathReport)], skeleton: &Skeleton<'_>) -> Res<Pixmap> {
    let (panel, height) = (360u32, 360u32);
    let strip_h = 220u32;
    let mut pix = Pixmap::new(panel * reports.len() as u32, height + strip_h).ok_or("pixmap")?;
    pix.fill(Color::WHITE);
    for (k, (_, r)) in reports.iter().enumerate() {
        let all = r.asked.iter().chain(&r.played);
        let (mut lo, mut hi) = (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
        for p in all {
            lo = Vec3::new(lo.x.min(p.x), 0.0, lo.z.min(p.z));
            hi = Vec3::new(hi.x.max(p.x), 0.0, hi.z.max(p.z));
        }
        let span = (hi.x - lo.x).max(hi.z - lo.z).max(1.0);
        let s = (panel as f32 - 40.0) / span;
        let ox = k as f32 * panel as f32 + 20.0;
        let px = |p: &Vec3| {
            (
                ox + (p.x - lo.x) * s,
                height as f32 - 20.0 - (p.z - lo.z) * s,
            )
        };
        let asked: Vec<_> = r.asked.iter().map(px).collect();
        let played: Vec<_> = r.played.iter().map(px).collect();
        polyline(&mut pix, &asked, [150, 150, 150, 255], 5.0);
        polyline(&mut pix, &played, [230, 110, 20, 255], 2.0);
        if let Some(&s0) = played.first() {
            dot(&mut pix, s0, 4.0, [30, 30, 30, 255]);
        }
    }
    // Pose strip: the zig-zag's poses, side view (x across, y up), spaced out.
    if let Some((_, r)) = reports.iter().find(|(p, _)| matches!(p, Path2::ZigZag)) {
        let painter = BonePainter::new(skeleton);
        let count = r.poses.len().min(16);
        let cell = pix.width() as f32 / count.max(1) as f32;
        for (i, pose) in r.poses.iter().take(count).enumerate() {
            let root = pose[0];
            let pts: Vec<(f32, f32)> = pose
                .iter()
                .map(|p| {
                    let q = rotate_y(*p - Vec3::new(root.x, 0.0, root.z), 0.0);
                    (
                        cell * (i as f32 + 0.5) + q.x * 90.0,
                        (height + strip_h) as f32 - 15.0 - q.y * 100.0 - q.z * 20.0,
                    )
                })
                .collect();
            painter.draw(&mut pix, &pts, 2.0);
        }
    }
    let captions: Vec<String> = reports
        .iter()
        .map(|(p, r)| {
            format!(
                "{}: mean {:.2} m, max {:.2} m",
                p.name(),
                r.mean_distance,
                r.max_distance
            )
        })
        .collect();
    let caps: Vec<&str> = captions.iter().map(String::as_str).collect();
    chart::label_panels(
        &pix,
        "motion matching: asked-for path (grey) and played root (orange), top view; zig-zag poses below",
        &caps,
    )
}

/// Writes the normalized features (padded frames excluded) and the
/// queries: `"SMMF"`, u32 version 1, u32 frames, u32 features, u32 ranges,
/// per range u32 start and length, u8 per frame (1 searchable), the
/// features row-major (f32), u32 queries and the queries (f32).
fn export(path: &Path, db: &Database<'_>, queries: &[Vec<f32>]) -> Res<()> {
    let mut out = Vec::new();
    let u = |out: &mut Vec<u8>, v: u32| out.extend_from_slice(&v.to_le_bytes());
    out.extend_from_slice(b"SMMF");
    u(&mut out, 1);
    u(&mut out, db.frame_count() as u32);
    u(&mut out, db.feature_count() as u32);
    u(&mut out, db.ranges().len() as u32);
    for r in db.ranges() {
        u(&mut out, r.start);
        u(&mut out, r.len);
    }
    out.extend((0..db.frame_count()).map(|i| u8::from(db.is_searchable(i))));
    let mut row = vec![0.0f32; db.feature_count()];
    for i in 0..db.frame_count() {
        db.frame_features(i, &mut row)?;
        for x in &row {
            out.extend_from_slice(&x.to_le_bytes());
        }
    }
    u(&mut out, queries.len() as u32);
    for q in queries {
        for x in q {
            out.extend_from_slice(&x.to_le_bytes());
        }
    }
    std::fs::write(path, out).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(())
}

/// Runs `sinew match`.
///
/// # Errors
/// Unreadable files, a database that cannot be built, a controller error.
pub fn match_command(args: &MatchArgs, out: &dyn Fn(&str)) -> Res<()> {
    if !(args.seconds.is_finite() && args.seconds > 0.0) {
        return Err(format!("--seconds must be finite and > 0, got {}", args.seconds).into());
    }
    if !(args.scale.is_finite() && args.scale > 0.0) {
        return Err(format!("--scale must be finite and > 0, got {}", args.scale).into());
    }
    let (skeleton, clips, skipped) = if !args.files.is_empty() {
        load_clips(&args.files, args.scale)?
    } else if Path::new(DEFAULT_DIR).is_dir() {
        load_clips(&bvh_files(Path::new(DEFAULT_DIR))?, args.scale)?
    } else {
        out(&format!(
            "{DEFAULT_DIR} not found: using the procedural humanoid's locomotion clips"
        ));
        let h = sinew_std::Humanoid::new(30.0)?;
        let clips = matching::procedural_locomotion(&h)?;
        (h.skeleton, clips, Vec::new())
    };
    for s in &skipped {
        out(s);
    }
    let sk = skeleton.view();
    let mut opts = BuildOptions::standard(&sk)?;
    opts.mirror = args.mirror;
    let views: Vec<RawClip<'_>> = clips.iter().map(OwnedClip::view).collect();
    let clock = Instant::now();
    let mut owned: OwnedDatabase = matching::build(&sk, &views, &opts)?;
    if let Some(frames) = args.grow {
        owned = matching::grow(&owned.view(), frames, 0.05, 0x2545_f491)?;
    }
    let db = owned.view();
    let searchable = (0..db.frame_count())
        .filter(|&i| db.is_searchable(i))
        .count();
    out(&format!(
        "database: {} clips{}, {} frames at {} Hz ({} searchable), {} features, {} KiB, built in {:.2} s",
        clips.len(),
        if args.mirror { " and their mirrors" } else { "" },
        db.frame_count(),
        db.sample_rate(),
        searchable,
        db.feature_count(),
        owned.bytes().len() / 1024,
        clock.elapsed().as_secs_f64()
    ));
    if let Some(p) = &args.save_db {
        std::fs::write(p, owned.bytes())
            .map_err(|e| format!("cannot write {}: {e}", p.display()))?;
        out(&format!("wrote {}", p.display()));
    }
    let config = MatcherConfig {
        search_interval: args.interval,
        ..MatcherConfig::default()
    };
    let mut reports = Vec::new();
    for path in Path2::ALL {
        let r = drive(&sk, &db, &views, path, args.seconds, config)?;
        out(&format!(
            "{:<12} {} searches ({:.1}/s), {} transitions; pruned search mean {:.1} us, max {:.1} us (brute force {:.1} us); distance to path mean {:.3} m, max {:.3} m",
            path.name(),
            r.searches,
            r.searches as f32 / args.seconds,
            r.transitions,
            r.search_mean * 1e6,
            r.search_max * 1e6,
            r.brute_mean * 1e6,
            r.mean_distance,
            r.max_distance
        ));
        reports.push((path, r));
    }
    if let Some(p) = &args.export_features {
        let queries: Vec<Vec<f32>> = reports
            .iter()
            .flat_map(|(_, r)| r.queries.iter().cloned())
            .collect();
        export(p, &db, &queries)?;
        out(&format!(
            "wrote {} ({} queries)",
            p.display(),
            queries.len()
        ));
    }
    if let Some(p) = &args.png {
        let png = draw(&reports, &sk)?;
        png.save_png(p)
            .map_err(|e| format!("cannot write {}: {e}", p.display()))?;
        out(&format!(
            "wrote {} ({}x{} px)",
            p.display(),
            png.width(),
            png.height()
        ));
    }
    Ok(())
}
