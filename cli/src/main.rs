//! The `sinew` command-line tool.
//!
//! With no arguments it plays the built-in procedural humanoid: 1000
//! characters for 10 simulated seconds at 60 Hz, each blending walk, jog and
//! run (compressed, unless `--raw`) with its own phase and weights, on every
//! core, and prints per-stage
//! timings and a checksum that is the same for any `--threads` value.
//! Subcommands inspect, play and render glTF/GLB, BVH and ozz files; every
//! failure is one line on stderr and exit status 2.

/// `sinew crowd` (named apart from `sinew_std::crowd`, which the default
/// job uses).
#[path = "crowd.rs"]
mod crowd_lod;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};
use sinew_cli::baseline::GlamBackend;
use sinew_cli::render::{self, FilmstripOptions, MeshOptions, SkinView};
use sinew_cli::{chart, demo};
use sinew_std::crowd::{self, CrowdConfig, CrowdReport, SinewBackend};
use sinew_std::import::load::{load_files, LoadOptions};
use sinew_std::{Asset, Humanoid};

#[derive(Parser, Debug)]
#[command(
    name = "sinew",
    version,
    about = "sinew skeletal animation runtime: play, bench, inspect and render",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    crowd: CrowdArgs,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the per-frame pipeline for a crowd over the files' clips (default: the procedural humanoid).
    Play(PlayArgs),
    /// Run sinew and the glam baseline on the same crowd and report the ratio.
    Bench(BenchArgs),
    /// Print joints (as a tree), clips, meshes and import warnings; for a
    /// .sinewcmp compressed clip, its figures, ratio and block tracks.
    Inspect(InspectArgs),
    /// Draw a clip's poses at evenly spaced times as a filmstrip PNG.
    Render(RenderArgs),
    /// Motion-unit mixer demo: an idle, units added mid-way, fatigue rising.
    Mix(sinew_cli::demo::MixArgs),
    /// Chart one joint's angle across a transition (old, new, cross-fade, inertialization) as a PNG.
    Plot(sinew_cli::demo::PlotArgs),
    /// Foot placement on stairs (off, then on) and a look-at chain following a target, as a three-row PNG; prints one figure per row.
    Ik(sinew_cli::ik::IkArgs),
    /// Motion matching: build a database from mocap clips (default: the CMU clips in ../shared/data), drive a character along scripted paths, print search times and how far it strays from each path; optionally a PNG.
    Match(sinew_cli::matching::MatchArgs),
    /// Secondary motion on the humanoid with a tail: rigid, spring bones, spring bones and a cloth cape, as a three-row PNG; prints one figure per row.
    Secondary(sinew_cli::secondary::SecondaryArgs),
    /// Deformation beyond skinning: RobotExpressive's facial blend shapes, a pose-driven corrective on a bent elbow, delta mush against LBS, as a three-row PNG; prints one figure per row.
    Shapes(sinew_cli::shapes::ShapesArgs),
    /// Print an animation graph (default: the built-in locomotion graph), run a scripted parameter timeline through it, print each state change and chart the state weights as a PNG.
    Graph(sinew_cli::graph::GraphArgs),
    /// Many characters (default 10,000) with and without joint and update-rate LOD: frame time per stage, shares per LOD level and rate, and the error of LOD poses against full evaluation.
    Crowd(crowd_lod::CrowdArgs),
    /// Compress clips under an object-space error bound (default: the procedural humanoid's clips), and write each file's skeleton (.sinewskl) and skinned meshes (.sinewmsh) beside them.
    Compress(CompressArgs),
    /// Bake a skinned mesh's clip to vertex animation files (raw f32, 16-bit position and normal PNGs, JSON sidecar) and print the error against live skinning (default: the Fox from ../shared/data).
    Bake(sinew_cli::bake::BakeArgs),
    /// Retarget clips onto another character: print what was mapped, write the baked clips compressed (with the target's skeleton and meshes beside them) and the map container; optionally a side-by-side PNG.
    Retarget(sinew_cli::retarget::RetargetArgs),
}

#[derive(Args, Debug, Clone)]
struct CompressArgs {
    #[command(flatten)]
    load: LoadArgs,
    /// Largest object-space error: a length with m, cm or mm, or a bare number in clip units.
    #[arg(long, default_value = "0.01cm", value_parser = sinew_std::compress::Length::parse)]
    error: sinew_std::compress::Length,
    /// Distance of the virtual vertices from each joint (same syntax as --error).
    #[arg(long, default_value = "3cm", value_parser = sinew_std::compress::Length::parse)]
    shell: sinew_std::compress::Length,
    /// Rotation format: per-lane picks drop-W or smallest-three for each
    /// rotation track, whichever needs fewer bits.
    #[arg(long, value_enum, default_value_t = RotationArg::PerLane)]
    rotation: RotationArg,
    /// Frames per segment.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=65536))]
    segment_frames: u32,
    /// Also measure every clip's error independently (frames and mid-frames).
    #[arg(long)]
    verify: bool,
    /// Output directory.
    #[arg(short, long)]
    output: PathBuf,
}

#[derive(ValueEnum, Debug, Clone, Copy)]
enum RotationArg {
    PerLane,
    DropW,
    SmallestThree,
}

#[derive(Args, Debug, Clone, Copy)]
struct CrowdArgs {
    /// Number of characters.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=10_000_000))]
    characters: u32,
    /// Simulated seconds (at 60 Hz).
    #[arg(long, default_value_t = 10.0, value_parser = positive_seconds)]
    seconds: f32,
    /// Worker threads (default: every core).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    threads: Option<u32>,
    /// Play the raw float clips (40 bytes per joint per frame) instead of
    /// compressing them first (0.01 cm bound), as a game ships them.
    #[arg(long)]
    raw: bool,
}

#[derive(Args, Debug, Clone)]
struct LoadArgs {
    /// glTF/GLB, BVH or ozz files (an ozz skeleton followed by its animations).
    files: Vec<PathBuf>,
    /// Resample clips to this rate in Hz (default: the file's rate, else 30).
    #[arg(long, value_parser = positive_rate)]
    rate: Option<f32>,
    /// Scale applied to BVH lengths (CMU BVH is in centimetre-like units).
    #[arg(long, default_value_t = 0.01, value_parser = positive_scale)]
    bvh_scale: f32,
    /// Skip BVH End Sites instead of making each a `<parent>_end` joint
    /// (the file's ROOT and JOINTs only; no channel is lost).
    #[arg(long)]
    bvh_no_end_sites: bool,
    /// Skinning influences kept per glTF vertex: 4, or 8 (a vertex with
    /// more is folded to its largest, with a warning).
    #[arg(long, default_value_t = 4, value_parser = influence_count)]
    influences: u8,
    /// Memory budget of each file's import, in MiB: what its clips, float
    /// tracks, meshes and buffers would take is counted before allocating,
    /// and a file that would exceed it is refused with an error saying what
    /// did not fit (an ozz skeleton and its animations share one budget).
    #[arg(long, value_name = "MIB", default_value_t = demo::DEFAULT_MEMORY_BUDGET_MIB, value_parser = demo::memory_budget_range())]
    memory_budget: u64,
}

#[derive(Args, Debug, Clone)]
struct PlayArgs {
    #[command(flatten)]
    load: LoadArgs,
    #[command(flatten)]
    crowd: CrowdArgs,
}

#[derive(Args, Debug, Clone, Copy)]
struct BenchArgs {
    #[command(flatten)]
    crowd: CrowdArgs,
    /// Print the figures as one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug, Clone)]
struct InspectArgs {
    #[command(flatten)]
    load: LoadArgs,
}

#[derive(Args, Debug, Clone)]
struct RenderArgs {
    #[command(flatten)]
    load: LoadArgs,
    /// Clip to draw (default: the first clip).
    #[arg(long)]
    clip: Option<String>,
    /// Output PNG.
    #[arg(short, long)]
    output: PathBuf,
    /// Number of poses drawn.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=64))]
    frames: u32,
    /// Cell size in pixels.
    #[arg(long, default_value_t = 220, value_parser = clap::value_parser!(u32).range(16..=2048))]
    cell: u32,
    /// Camera yaw about the vertical axis, in degrees (default 60 for strips, 30 for meshes).
    #[arg(long, allow_negative_numbers = true)]
    yaw: Option<f32>,
    /// Draw the skinned mesh at --time instead of a filmstrip: LBS, DQS or both side by side.
    #[arg(long, value_enum)]
    skin: Option<SkinArg>,
    /// Clip time in seconds for --skin.
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    time: f32,
    /// Panel size in pixels for --skin.
    #[arg(long, default_value_t = 480, value_parser = clap::value_parser!(u32).range(64..=4096))]
    size: u32,
    /// Also draw the clip retargeted onto this character (repeatable): a
    /// row per file and target, source rows first.
    #[arg(long, conflicts_with = "skin")]
    retarget: Vec<PathBuf>,
}

#[derive(ValueEnum, Debug, Clone, Copy)]
enum SkinArg {
    Lbs,
    Dqs,
    Both,
}

fn parse_positive(s: &str, max: f32, what: &str) -> Result<f32, String> {
    let v: f32 = s.parse().map_err(|e| format!("{e}"))?;
    if v.is_finite() && v > 0.0 && v <= max {
        Ok(v)
    } else {
        Err(format!("must be {what} in (0, {max}]"))
    }
}

fn positive_seconds(s: &str) -> Result<f32, String> {
    parse_positive(s, 86_400.0, "a number of seconds")
}

fn positive_rate(s: &str) -> Result<f32, String> {
    parse_positive(s, 10_000.0, "a rate in Hz")
}

fn influence_count(s: &str) -> Result<u8, String> {
    match s {
        "4" => Ok(4),
        "8" => Ok(8),
        _ => Err("must be 4 or 8".into()),
    }
}

fn positive_scale(s: &str) -> Result<f32, String> {
    parse_positive(s, 1.0e6, "a scale")
}

impl CrowdArgs {
    fn config(&self) -> CrowdConfig {
        CrowdConfig {
            characters: self.characters as usize,
            seconds: self.seconds,
            fps: 60.0,
            threads: self.threads.map(|t| t as usize),
        }
    }
}

impl LoadArgs {
    /// The files' assets, or the procedural humanoid when no file is named.
    fn assets(&self) -> Result<Vec<Asset>, Box<dyn std::error::Error>> {
        if self.files.is_empty() {
            return Ok(vec![Asset::from(Humanoid::default_rate())]);
        }
        let opts = LoadOptions {
            sample_rate: self.rate,
            bvh_scale: self.bvh_scale,
            bvh_end_sites: !self.bvh_no_end_sites,
            eight_influences: self.influences == 8,
            memory_budget: demo::memory_budget_bytes(self.memory_budget),
        };
        Ok(load_files(&self.files, &opts)?)
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        None => play_humanoid(&cli.crowd),
        Some(Command::Play(p)) if p.load.files.is_empty() => play_humanoid(&p.crowd),
        Some(Command::Play(p)) => play_files(&p),
        Some(Command::Bench(b)) => bench(&b),
        Some(Command::Inspect(i)) => inspect(&i),
        Some(Command::Render(r)) => render_strip(&r),
        Some(Command::Mix(m)) => sinew_cli::demo::mix_command(&m, &emit),
        Some(Command::Plot(p)) => sinew_cli::demo::plot_command(&p, &emit),
        Some(Command::Ik(a)) => sinew_cli::ik::ik_command(&a, &emit),
        Some(Command::Match(a)) => sinew_cli::matching::match_command(&a, &emit),
        Some(Command::Secondary(a)) => sinew_cli::secondary::secondary_command(&a, &emit),
        Some(Command::Shapes(a)) => sinew_cli::shapes::shapes_command(&a, &emit),
        Some(Command::Graph(a)) => sinew_cli::graph::graph_command(&a, &emit),
        Some(Command::Compress(c)) => compress(&c),
        Some(Command::Bake(a)) => sinew_cli::bake::bake_command(&a, &emit),
        Some(Command::Retarget(a)) => sinew_cli::retarget::retarget_command(&a, &emit),
        Some(Command::Crowd(a)) => crowd_lod::crowd_command(&a, &emit),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sinew: {e}");
            ExitCode::from(2)
        }
    }
}

type Res = Result<(), Box<dyn std::error::Error>>;

/// Prints a line to stdout. A closed pipe (`sinew inspect big.glb | head`)
/// ends the program quietly with status 0; any other write error is one line
/// on stderr and status 2 — never a panic.
macro_rules! out {
    ($($t:tt)*) => { emit(&format!($($t)*)) };
}

fn emit(line: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = writeln!(stdout, "{line}") {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("sinew: cannot write output: {e}");
        std::process::exit(2);
    }
}

fn play_humanoid(args: &CrowdArgs) -> Res {
    let h = Humanoid::default_rate();
    let cfg = args.config();
    out!(
        "sinew: procedural humanoid ({} joints), walk/jog/run at {} Hz, {} characters x {} frames (60 Hz)",
        h.skeleton.joint_count(),
        h.clips[0].sample_rate(),
        cfg.characters,
        cfg.frames()
    );
    let (report, clips) = run_crowd(&h.skeleton, &h.clips, args.raw, &cfg)?;
    out!("{clips}");
    print_table(&report);
    Ok(())
}

/// The crowd over `skeleton` and the first three of `clips`: compressed
/// first with the default options unless `raw` (printing the size and the
/// ratio in the line returned beside the report), since compressed clips
/// are what a game ships.
fn run_crowd(
    skeleton: &sinew_std::OwnedSkeleton,
    clips: &[sinew_std::OwnedClip],
    raw: bool,
    cfg: &CrowdConfig,
) -> Result<(CrowdReport, String), Box<dyn std::error::Error>> {
    if raw {
        let report = crowd::run(&SinewBackend::from_clips(skeleton, clips)?, cfg)?;
        return Ok((report, "clips raw (floats)".into()));
    }
    let opts = sinew_std::compress::CompressOptions::default();
    let view = skeleton.view();
    let packed = clips
        .iter()
        .take(3)
        .map(|c| Ok(sinew_std::compress::compress(&view, &c.view(), &opts)?.0))
        .collect::<Result<Vec<_>, sinew_core::Error>>()?;
    let views: Vec<_> = packed.iter().map(|c| c.view()).collect();
    let bytes: usize = views.iter().map(|c| c.size_bytes()).sum();
    let raw_bytes: usize = views
        .iter()
        .map(|c| sinew_std::compress::raw_clip_bytes(c.joint_count(), c.frame_count()))
        .sum();
    let line = format!(
        "clips compressed at {:.2} cm: {:.1} KiB against {:.1} KiB raw ({:.1}:1)",
        opts.error * 100.0,
        bytes as f64 / 1024.0,
        raw_bytes as f64 / 1024.0,
        raw_bytes as f64 / bytes.max(1) as f64
    );
    let report = crowd::run(&SinewBackend::with_clips(view, &views)?, cfg)?;
    Ok((report, line))
}

fn play_files(args: &PlayArgs) -> Res {
    let cfg = args.crowd.config();
    for asset in args.load.assets()? {
        if asset.clips.is_empty() {
            out!("{}: no clips, nothing to play", asset.source.display());
            continue;
        }
        let names: Vec<&str> = asset
            .clips
            .iter()
            .take(3)
            .map(|c| c.name.as_str())
            .collect();
        out!(
            "sinew: {} ({} joints), clips {}, {} characters x {} frames (60 Hz)",
            asset.source.display(),
            asset.skeleton.joint_count(),
            names.join(" / "),
            cfg.characters,
            cfg.frames()
        );
        let (report, clips) = run_crowd(&asset.skeleton, &asset.clips, args.crowd.raw, &cfg)?;
        out!("{clips}");
        print_table(&report);
        out!("");
    }
    Ok(())
}

fn print_table(r: &CrowdReport) {
    let s = &r.stages;
    out!("");
    out!(
        "{:<8} {:>14} {:>10} {:>7}",
        "stage",
        "ns/char-frame",
        "ns/joint",
        "share"
    );
    let total = s.total().as_nanos().max(1) as f64;
    for (name, d) in [
        ("sample", s.sample),
        ("blend", s.blend),
        ("fk", s.fk),
        ("total", s.total()),
    ] {
        out!(
            "{:<8} {:>14.1} {:>10.2} {:>6.1}%",
            name,
            r.ns_per_character_frame(d),
            r.ns_per_joint(d),
            100.0 * d.as_nanos() as f64 / total
        );
    }
    out!("");
    out!(
        "threads {}  wall {:.3} s  {:.0} character-frames/s ({:.0} characters at 60 Hz)",
        r.threads,
        r.wall.as_secs_f64(),
        r.character_frames_per_second(),
        r.character_frames_per_second() / 60.0
    );
    out!("checksum {:016x}", r.checksum);
}

fn bench(args: &BenchArgs) -> Res {
    let h = Humanoid::default_rate();
    let cfg = args.crowd.config();
    let (sinew, clips) = run_crowd(&h.skeleton, &h.clips, args.crowd.raw, &cfg)?;
    let glam = crowd::run(&GlamBackend::new(&h), &cfg)?;
    let ratio = |f: fn(&CrowdReport) -> f64| f(&glam) / f(&sinew).max(1e-9);
    let blend_fk = |r: &CrowdReport| r.ns_per_character_frame(r.stages.blend + r.stages.fk);
    let total = |r: &CrowdReport| r.ns_per_character_frame(r.stages.total());
    if args.json {
        out!(
            "{{\"tool\":\"sinew {}\",\"arch\":\"{}\",\"characters\":{},\"frames\":{},\"joints\":{},\"threads\":{},\"sinew_clips\":\"{}\",\"sinew\":{},\"glam_baseline\":{},\"ratio_blend_fk\":{:.3},\"ratio_total\":{:.3}}}",
            env!("CARGO_PKG_VERSION"),
            std::env::consts::ARCH,
            sinew.characters,
            sinew.frames,
            sinew.joints,
            sinew.threads,
            if args.crowd.raw { "raw" } else { "compressed" },
            json_figures(&sinew),
            json_figures(&glam),
            ratio(blend_fk),
            ratio(total)
        );
    } else {
        out!("sinew (SoA SIMD), {clips}:");
        print_table(&sinew);
        out!("\nglam baseline (AoS, slerp, Mat4 per joint), raw clips:");
        print_table(&glam);
        out!(
            "\nblend+fk: sinew {:.1} ns, glam {:.1} ns per character-frame: {:.2}x; whole pipeline {:.2}x",
            blend_fk(&sinew),
            blend_fk(&glam),
            ratio(blend_fk),
            ratio(total)
        );
    }
    Ok(())
}

fn json_figures(r: &CrowdReport) -> String {
    let s = &r.stages;
    let f = |d| format!("{:.2}", r.ns_per_character_frame(d));
    let j = |d| format!("{:.3}", r.ns_per_joint(d));
    format!(
        "{{\"sample_ns_per_character_frame\":{},\"blend_ns_per_character_frame\":{},\"fk_ns_per_character_frame\":{},\"total_ns_per_character_frame\":{},\"sample_ns_per_joint\":{},\"blend_ns_per_joint\":{},\"fk_ns_per_joint\":{},\"character_frames_per_second\":{:.0},\"wall_seconds\":{:.4},\"checksum\":\"{:016x}\"}}",
        f(s.sample),
        f(s.blend),
        f(s.fk),
        f(s.total()),
        j(s.sample),
        j(s.blend),
        j(s.fk),
        r.character_frames_per_second(),
        r.wall.as_secs_f64(),
        r.checksum
    )
}

/// Whether `path` names a compressed clip container (`.sinewcmp`, as
/// `sinew compress` writes them).
fn is_compressed_clip(path: &std::path::Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("sinewcmp"))
}

fn inspect(args: &InspectArgs) -> Res {
    let (compressed, files): (Vec<_>, Vec<_>) = args
        .load
        .files
        .iter()
        .cloned()
        .partition(|p| is_compressed_clip(p));
    for path in &compressed {
        inspect_compressed(path)?;
    }
    if !compressed.is_empty() && files.is_empty() {
        return Ok(());
    }
    let load = LoadArgs {
        files,
        ..args.load.clone()
    };
    for asset in load.assets()? {
        let skel = asset.skeleton.view();
        let n = skel.joint_count();
        let max_depth = (0..n).map(|j| skel.depth(j)).max().unwrap_or(0);
        out!("{} ({})", asset.source.display(), asset.units);
        out!(
            "skeleton: {n} joints, depth {}, {} SoA blocks, {} byte container",
            max_depth + 1,
            skel.soa_count(),
            asset.skeleton.bytes().len()
        );
        for j in 0..n {
            out!(
                "  {j:>4} {}{}",
                "  ".repeat(skel.depth(j)),
                skel.joint_name(j)
                    .filter(|s| !s.is_empty())
                    .unwrap_or("(unnamed)")
            );
        }
        out!("clips: {}", asset.clips.len());
        for c in &asset.clips {
            out!(
                "  {:<24} {:>8.3} s {:>7.2} Hz {:>6} frames {:>4} float tracks",
                c.name,
                c.duration(),
                c.sample_rate(),
                c.frame_count(),
                c.float_tracks().len()
            );
        }
        out!("meshes: {}", asset.meshes.len());
        for m in &asset.meshes {
            let influences = m.max_influences();
            out!(
                "  {:<24} {:>7} vertices {:>7} triangles, up to {influences} influences{}{}",
                m.name,
                m.positions.len(),
                m.indices.len() / 3,
                if m.normals.is_empty() {
                    ""
                } else {
                    ", normals"
                },
                if m.tangents.is_empty() {
                    ""
                } else {
                    ", tangents"
                }
            );
        }
        if !asset.warnings.is_empty() {
            out!("warnings: {}", asset.warnings.len());
            for w in &asset.warnings {
                out!("  {w}");
            }
        }
        out!("");
    }
    Ok(())
}

/// `sinew inspect` of a compressed clip container: validated once, then its
/// header figures, its size against the raw clip, and its block tracks.
fn inspect_compressed(path: &std::path::Path) -> Res {
    use sinew_core::compressed::{Defaults, RotationFormat, COMPRESSED_VERSION, KIND_DEFAULT};
    let bytes = std::fs::read(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let clip = sinew_std::compress::OwnedCompressedClip::from_bytes(&bytes)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let c = clip.view();
    let raw = sinew_std::compress::raw_clip_bytes(c.joint_count(), c.frame_count());
    out!(
        "{} (compressed clip, container v{COMPRESSED_VERSION})",
        path.display()
    );
    out!(
        "clip: {:?}, {} joints, {} frames at {:.3} Hz ({:.3} s), {} rotations, {} defaults",
        c.name(),
        c.joint_count(),
        c.frame_count(),
        c.sample_rate(),
        c.duration(),
        match c.rotation_format() {
            RotationFormat::DropW => "drop-W",
            RotationFormat::SmallestThree => "smallest-three",
            RotationFormat::PerLane => "per-lane",
        },
        match c.defaults() {
            Defaults::Identity => "identity",
            Defaults::RestPose => "rest-pose",
        },
    );
    out!(
        "size: {} bytes ({} bytes of bit stream), raw {raw} bytes (joints x frames x 40): {:.2}:1",
        c.size_bytes(),
        c.data_bytes(),
        raw as f64 / c.size_bytes() as f64
    );
    out!(
        "segments: {} of {} frames",
        c.segment_count(),
        c.segment_frames()
    );
    // Block tracks: translation, rotation, scale of each block of 4 joints.
    // counts[track][kind], kind: default, constant (stored, no animated
    // lane), animated.
    let mut counts = [[0usize; 3]; 3];
    for b in 0..c.soa_count() {
        for (t, row) in counts.iter_mut().enumerate() {
            let k = c.block_track_kind(b, t).unwrap_or(KIND_DEFAULT);
            let kind = match (k == KIND_DEFAULT, k >> 4) {
                (true, _) => 0,
                (false, 0) => 1,
                _ => 2,
            };
            row[kind] += 1;
        }
    }
    out!(
        "block tracks (translation / rotation / scale): default {} / {} / {}, constant {} / {} / {}, animated {} / {} / {} ({} animated lanes)",
        counts[0][0],
        counts[1][0],
        counts[2][0],
        counts[0][1],
        counts[1][1],
        counts[2][1],
        counts[0][2],
        counts[1][2],
        counts[2][2],
        c.animated_lane_count()
    );
    // Animated rotation lanes by format, and the lanes' bit rates over
    // every segment (a lane's rate: its widest component).
    let formats: Vec<Option<RotationFormat>> = c.animated_lane_formats().collect();
    let count = |f: RotationFormat| formats.iter().filter(|&&x| x == Some(f)).count();
    out!(
        "rotation lanes: drop-W {}, smallest-three {}",
        count(RotationFormat::DropW),
        count(RotationFormat::SmallestThree)
    );
    // hist[rotation][rate]: rates 0..=23, then verbatim.
    let mut hist = [[0usize; 25]; 2];
    for s in 0..c.segment_count() {
        for (r, f) in c.segment_rates(s).zip(&formats) {
            let rate = if r[0] == sinew_core::compressed::RAW_BITS {
                24
            } else {
                usize::from(r[0].max(r[1]).max(r[2])).min(23)
            };
            hist[usize::from(f.is_some())][rate] += 1;
        }
    }
    for (name, row) in ["translation/scale", "rotation"].iter().zip(&hist) {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .filter(|&(_, &n)| n > 0)
            .map(|(r, n)| match r {
                24 => format!("verbatim:{n}"),
                _ => format!("{r}:{n}"),
            })
            .collect();
        out!(
            "{name} lane bit rates (bits: lane-segments): {}",
            if cells.is_empty() {
                "none".to_string()
            } else {
                cells.join(" ")
            }
        );
    }
    out!("");
    Ok(())
}

fn render_strip(args: &RenderArgs) -> Res {
    let assets = args.load.assets()?;
    if !args.retarget.is_empty() {
        let opts = FilmstripOptions {
            frames: args.frames as usize,
            cell: args.cell,
            yaw_degrees: args.yaw.unwrap_or(60.0),
        };
        let (png, lines) = sinew_cli::retarget::render_retargeted(
            &assets,
            &args.retarget,
            args.clip.as_deref(),
            args.load.bvh_scale,
            &opts,
        )?;
        for line in lines {
            out!("{line}");
        }
        png.save_png(&args.output)
            .map_err(|e| format!("cannot write {}: {e}", args.output.display()))?;
        out!("wrote {}", args.output.display());
        return Ok(());
    }
    let (asset, clip) = assets
        .iter()
        .find_map(|a| {
            let c = match &args.clip {
                Some(name) => a.clips.iter().find(|c| &c.name == name),
                None => a.clips.first(),
            };
            c.map(|c| (a, c))
        })
        .ok_or_else(|| match &args.clip {
            Some(name) => {
                let known: Vec<&str> = assets
                    .iter()
                    .flat_map(|a| a.clips.iter().map(|c| c.name.as_str()))
                    .collect();
                format!("no clip named {name:?} (clips: {})", known.join(", "))
            }
            None => "no clip to render".to_string(),
        })?;
    let png = match args.skin {
        None => {
            let opts = FilmstripOptions {
                frames: args.frames as usize,
                cell: args.cell,
                yaw_degrees: args.yaw.unwrap_or(60.0),
            };
            let strip = render::filmstrip(&asset.skeleton.view(), &clip.view(), &opts)?;
            let title = format!(
                "{:?} from {}: {} poses over {:.2} s, camera yaw {}°",
                clip.name,
                asset.source.display(),
                opts.frames,
                clip.duration(),
                opts.yaw_degrees
            );
            let times = chart::cell_times(clip.duration(), opts.frames);
            chart::label_filmstrip(&strip, &title, &times)?
        }
        Some(skin) => {
            if asset.meshes.is_empty() {
                return Err(
                    format!("{} has no skinned mesh to draw", asset.source.display()).into(),
                );
            }
            let view = match skin {
                SkinArg::Lbs => SkinView::Lbs,
                SkinArg::Dqs => SkinView::Dqs,
                SkinArg::Both => SkinView::Both,
            };
            let opts = MeshOptions {
                size: args.size,
                yaw_degrees: args.yaw.unwrap_or(30.0),
                time: args.time,
            };
            let panels = render::skinned_mesh(
                &asset.skeleton.view(),
                &clip.view(),
                &asset.meshes,
                view,
                &opts,
            )?;
            let (lbs, dqs) = (
                "linear blend skinning (LBS)",
                "dual-quaternion skinning (DQS)",
            );
            let captions: &[&str] = match skin {
                SkinArg::Lbs => &[lbs],
                SkinArg::Dqs => &[dqs],
                SkinArg::Both => &[lbs, dqs],
            };
            let title = format!(
                "{:?} from {} at t = {} s, camera yaw {}°",
                clip.name,
                asset.source.display(),
                opts.time,
                opts.yaw_degrees
            );
            chart::label_panels(&panels, &title, captions)?
        }
    };
    png.save_png(&args.output)
        .map_err(|e| format!("cannot write {}: {e}", args.output.display()))?;
    out!(
        "wrote {} ({} of {:?} from {}, {}x{} px)",
        args.output.display(),
        match args.skin {
            None => format!("{} poses", args.frames),
            Some(s) => format!("{s:?} skinning at {} s", args.time),
        },
        clip.name,
        asset.source.display(),
        png.width(),
        png.height()
    );
    Ok(())
}

fn compress(args: &CompressArgs) -> Res {
    use sinew_core::compressed::RotationFormat;
    let opts = sinew_std::compress::CliOptions {
        error: args.error,
        shell: args.shell,
        rotation: match args.rotation {
            RotationArg::PerLane => RotationFormat::PerLane,
            RotationArg::DropW => RotationFormat::DropW,
            RotationArg::SmallestThree => RotationFormat::SmallestThree,
        },
        segment_frames: args.segment_frames as usize,
        verify: args.verify,
        out_dir: args.output.clone(),
    };
    let assets = args.load.assets()?;
    // The bound and shell are lengths: a file read in the wrong unit
    // (the importers' size warnings) would be compressed at the wrong one.
    for a in &assets {
        for w in &a.warnings {
            eprintln!("sinew: warning: {}: {w}", a.source.display());
        }
    }
    sinew_std::compress::run_cli(&assets, &opts, &mut |line| out!("{line}"))?;
    // The skeleton and meshes beside the clips: what a C program or
    // firmware needs to play and skin them without an importer.
    let stems = sinew_std::export::asset_stems(&assets);
    for (a, stem) in assets.iter().zip(&stems) {
        for path in sinew_std::export::write_containers(a, &opts.out_dir, stem)? {
            out!("wrote {}", path.display());
        }
    }
    Ok(())
}
