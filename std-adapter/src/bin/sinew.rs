//! The `sinew` command-line tool.
//!
//! With no arguments it plays the built-in procedural humanoid: 1000
//! characters for 10 simulated seconds at 60 Hz, each blending walk, jog and
//! run with its own phase and weights, on every core, and prints per-stage
//! timings and a checksum that is the same for any `--threads` value.

use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use sinew_std::crowd::{self, CrowdConfig, CrowdReport, GlamBackend, SinewBackend};
use sinew_std::Humanoid;

#[derive(Parser, Debug)]
#[command(
    name = "sinew",
    version,
    about = "sinew skeletal animation runtime: play, bench and inspect",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    play: PlayArgs,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Play the procedural humanoid crowd and print per-stage timings (the default).
    Play(PlayArgs),
    /// Run sinew and the glam baseline on the same crowd and report the ratio.
    Bench(BenchArgs),
}

#[derive(Args, Debug, Clone, Copy)]
struct PlayArgs {
    /// Number of characters.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=10_000_000))]
    characters: u32,
    /// Simulated seconds (at 60 Hz).
    #[arg(long, default_value_t = 10.0, value_parser = positive_seconds)]
    seconds: f32,
    /// Worker threads (default: every core).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    threads: Option<u32>,
}

#[derive(Args, Debug, Clone, Copy)]
struct BenchArgs {
    #[command(flatten)]
    play: PlayArgs,
    /// Print the figures as one JSON object.
    #[arg(long)]
    json: bool,
}

fn positive_seconds(s: &str) -> Result<f32, String> {
    let v: f32 = s.parse().map_err(|e| format!("{e}"))?;
    if v.is_finite() && v > 0.0 && v <= 86_400.0 {
        Ok(v)
    } else {
        Err("must be a number of seconds in (0, 86400]".into())
    }
}

impl PlayArgs {
    fn config(&self) -> CrowdConfig {
        CrowdConfig {
            characters: self.characters as usize,
            seconds: self.seconds,
            fps: 60.0,
            threads: self.threads.map(|t| t as usize),
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        None => play(&cli.play),
        Some(Command::Play(p)) => play(&p),
        Some(Command::Bench(b)) => bench(&b),
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

fn play(args: &PlayArgs) -> Res {
    let h = Humanoid::default_rate();
    let cfg = args.config();
    println!(
        "sinew: procedural humanoid ({} joints), walk/jog/run at {} Hz, {} characters x {} frames (60 Hz)",
        h.skeleton.joint_count(),
        h.clips[0].view().sample_rate(),
        cfg.characters,
        cfg.frames()
    );
    let report = crowd::run(&SinewBackend::new(&h), &cfg)?;
    print_table(&report);
    Ok(())
}

fn print_table(r: &CrowdReport) {
    let s = &r.stages;
    println!();
    println!(
        "{:<8} {:>14} {:>10} {:>7}",
        "stage", "ns/char-frame", "ns/joint", "share"
    );
    let total = s.total().as_nanos().max(1) as f64;
    for (name, d) in [
        ("sample", s.sample),
        ("blend", s.blend),
        ("fk", s.fk),
        ("total", s.total()),
    ] {
        println!(
            "{:<8} {:>14.1} {:>10.2} {:>6.1}%",
            name,
            r.ns_per_character_frame(d),
            r.ns_per_joint(d),
            100.0 * d.as_nanos() as f64 / total
        );
    }
    println!();
    println!(
        "threads {}  wall {:.3} s  {:.0} character-frames/s ({:.0} characters at 60 Hz)",
        r.threads,
        r.wall.as_secs_f64(),
        r.character_frames_per_second(),
        r.character_frames_per_second() / 60.0
    );
    println!("checksum {:016x}", r.checksum);
}

fn bench(args: &BenchArgs) -> Res {
    let h = Humanoid::default_rate();
    let cfg = args.play.config();
    let sinew = crowd::run(&SinewBackend::new(&h), &cfg)?;
    let glam = crowd::run(&GlamBackend::new(&h), &cfg)?;
    let ratio = |f: fn(&CrowdReport) -> f64| f(&glam) / f(&sinew).max(1e-9);
    let blend_fk = |r: &CrowdReport| r.ns_per_character_frame(r.stages.blend + r.stages.fk);
    let total = |r: &CrowdReport| r.ns_per_character_frame(r.stages.total());
    if args.json {
        println!(
            "{{\"tool\":\"sinew {}\",\"arch\":\"{}\",\"characters\":{},\"frames\":{},\"joints\":{},\"threads\":{},\"sinew\":{},\"glam_baseline\":{},\"ratio_blend_fk\":{:.3},\"ratio_total\":{:.3}}}",
            env!("CARGO_PKG_VERSION"),
            std::env::consts::ARCH,
            sinew.characters,
            sinew.frames,
            sinew.joints,
            sinew.threads,
            json_figures(&sinew),
            json_figures(&glam),
            ratio(blend_fk),
            ratio(total)
        );
    } else {
        println!("sinew (SoA SIMD):");
        print_table(&sinew);
        println!("\nglam baseline (AoS, slerp, Mat4 per joint):");
        print_table(&glam);
        println!(
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
