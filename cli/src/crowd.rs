//! `sinew crowd`: many characters with and without LOD, timed per stage.
//!
//! Characters stand on a square grid (`--spacing` metres apart) around a
//! camera at its centre. Each blends three clips (the procedural
//! humanoid's walk, jog and run by default; `--cmu` or files: motion
//! capture), compressed unless `--raw`. The run goes twice over the same
//! frames: every character at every joint every frame, then with LOD:
//! joint level 0 within `--full-radius`, 1 within three times that, 2
//! beyond, and update periods from the distance (1 within `--full-radius`,
//! 2, 4, 8 at 2, 4 and beyond 4 times it) within `--budget` evaluations
//! per frame. It prints each stage's time per frame, the wall time per
//! frame, the share of characters at each level and period, and how far
//! the shown poses are from full evaluation.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Args;
use sinew_core::clip::ClipSource;
use sinew_core::compressed::CompressedClip;
use sinew_core::lod::rate::RateTiers;
use sinew_core::lod::HUMANOID_RULES;
use sinew_core::steer::{self, Agent, Grid, Obstacles, Params};
use sinew_std::compress::{compress, CompressOptions};
use sinew_std::crowd::lod::{
    Locomotion, LodCounts, LodCrowd, LodInputs, LodSettings, LodStageTimes, OwnedLod, PoseError,
    RateSettings,
};
use sinew_std::{Humanoid, OwnedClip, OwnedSkeleton};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// The CMU clips `--cmu` plays: a walk, a jog and a run.
pub const CMU_CLIPS: [&str; 3] = [
    "../shared/data/bvh/cmu/daz-friendly/02_01.bvh",
    "../shared/data/bvh/cmu/daz-friendly/02_03.bvh",
    "../shared/data/bvh/cmu/daz-friendly/09_01.bvh",
];

/// Arguments of `sinew crowd`.
#[derive(Args, Debug, Clone)]
pub struct CrowdArgs {
    /// BVH, glTF or ozz files with three clips of one skeleton (default:
    /// the procedural humanoid).
    pub files: Vec<PathBuf>,
    /// The CMU walk, jog and run from ../shared/data instead of the humanoid.
    #[arg(long, conflicts_with = "files")]
    pub cmu: bool,
    /// Length unit of BVH files, in metres.
    #[arg(long, default_value_t = 0.01)]
    pub scale: f32,
    /// Number of characters.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub characters: u32,
    /// Simulated seconds per run (at 60 Hz).
    #[arg(long, default_value_t = 5.0)]
    pub seconds: f32,
    /// Worker threads (default: every core).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: Option<u32>,
    /// Raw clips instead of compressed ones.
    #[arg(long)]
    pub raw: bool,
    /// Most characters evaluated in one frame with LOD (default: a quarter
    /// of them, at least an eighth).
    #[arg(long)]
    pub budget: Option<usize>,
    /// Distance within which every character is evaluated every frame at
    /// every joint, in metres.
    #[arg(long, default_value_t = 15.0)]
    pub full_radius: f32,
    /// Grid spacing in metres.
    #[arg(long, default_value_t = 2.0)]
    pub spacing: f32,
    /// With LOD, compute only the kept joints' model matrices (the dropped
    /// joints' are not updated), as for far meshes bound to kept joints.
    #[arg(long)]
    pub kept_only: bool,
    /// Steer the characters (`sinew_core::steer`): each walks to the
    /// mirror image of its start across the grid's centre line, the two
    /// halves crossing; its speed and heading drive its blend and facing,
    /// and its distance to the camera its LOD.
    #[arg(long)]
    pub steer: bool,
}

/// The figures of one run.
#[derive(Clone, Debug)]
pub struct RunFigures {
    /// Frames stepped.
    pub frames: u64,
    /// Stage times summed over threads.
    pub stages: LodStageTimes,
    /// Wall time of the steps.
    pub wall: Duration,
    /// The process's CPU time (user + system) during the steps, where the
    /// platform reports it (Linux's `/proc/self/stat`).
    pub cpu: Option<Duration>,
    /// Levels, periods, evaluations.
    pub counts: LodCounts,
    /// Distance of the shown poses from full evaluation (every 16th
    /// character, every 30th frame, worst and mean over the checks).
    pub error: PoseError,
    /// Checksum of every character's model matrices.
    pub checksum: u64,
    /// Characters within the full-quality radius not at level 0 and
    /// period 1 at the end.
    pub reduced_near: usize,
    /// With `--steer`: the steering step's wall time over the run, and
    /// the agents at their goals at the end.
    pub steer: Option<(Duration, usize)>,
}

/// Agents for `--steer`, their buffers, and the grid they are placed on.
struct Steering {
    agents: Vec<Agent>,
    next: Vec<Agent>,
    locomotion: Vec<steer::Locomotion>,
    starts: Vec<u32>,
    entries: Vec<u32>,
    keys: Vec<u32>,
    params: Params,
}

impl Steering {
    /// `n` agents on the square grid of `side` columns, `spacing` apart and
    /// centred on the origin, each bound for its mirror image across the
    /// line x = 0, at top speeds spread over the walk and the jog.
    fn new(n: usize, side: usize, spacing: f32) -> Steering {
        let centre = (side as f32 - 1.0) / 2.0;
        let agents: Vec<Agent> = (0..n)
            .map(|i| {
                let (x, y) = (
                    ((i % side) as f32 - centre) * spacing,
                    ((i / side) as f32 - centre) * spacing,
                );
                Agent {
                    position: [x, y],
                    velocity: [0.0, 0.0],
                    goal: [-x, y],
                    heading: if x > 0.0 { std::f32::consts::PI } else { 0.0 },
                    radius: 0.3,
                    max_speed: 1.2 + 1.6 * ((i * 7919 % 101) as f32 / 100.0),
                    max_force: 3.0,
                }
            })
            .collect();
        Steering {
            next: agents.clone(),
            locomotion: vec![steer::Locomotion::default(); n],
            starts: vec![0; Grid::starts_len(n)],
            entries: vec![0; n],
            keys: vec![0; n],
            agents,
            params: Params::default(),
        }
    }

    /// One step over `threads` threads (the same bits for any count), then
    /// each character's locomotion for the crowd and its distance from the
    /// camera at the origin. Steering's heading is counter-clockwise from
    /// +x in its plane, whose (x, y) are the world's (x, z); the crowd's
    /// heading turns +Z about +Y, so it is π/2 minus steering's.
    fn step(
        &mut self,
        dt: f32,
        threads: usize,
        loco: &mut [Locomotion],
        distance: &mut [f32],
    ) -> Res<()> {
        let mut grid = Grid::new(&mut self.starts, &mut self.entries, &mut self.keys)?;
        grid.build(&self.agents, self.params.neighbour_radius)?;
        let none = Obstacles {
            circles: &[],
            segments: &[],
        };
        let chunk = self.agents.len().div_ceil(threads.max(1)).max(1);
        let (agents, grid, params) = (&self.agents, &grid, &self.params);
        std::thread::scope(|scope| -> Res<()> {
            let jobs: Vec<_> = self
                .next
                .chunks_mut(chunk)
                .zip(self.locomotion.chunks_mut(chunk))
                .enumerate()
                .map(|(k, (out, lo))| {
                    let none = &none;
                    scope.spawn(move || {
                        steer::steer_range(agents, k * chunk, out, lo, grid, none, params, dt)
                    })
                })
                .collect();
            for j in jobs {
                j.join().map_err(|_| "a steering thread panicked")??;
            }
            Ok(())
        })?;
        std::mem::swap(&mut self.agents, &mut self.next);
        for ((a, l), (c, d)) in self
            .agents
            .iter()
            .zip(&self.locomotion)
            .zip(loco.iter_mut().zip(distance.iter_mut()))
        {
            *c = Locomotion {
                speed: l.speed,
                heading: std::f32::consts::FRAC_PI_2 - l.heading,
            };
            *d = (a.position[0] * a.position[0] + a.position[1] * a.position[1]).sqrt();
        }
        Ok(())
    }

    /// Agents within their arrival distance of their goals.
    fn arrived(&self) -> usize {
        let r = self.params.arrive_distance;
        self.agents
            .iter()
            .filter(|a| {
                let (dx, dy) = (a.goal[0] - a.position[0], a.goal[1] - a.position[1]);
                dx * dx + dy * dy <= r * r
            })
            .count()
    }
}

/// Loads the three clips and their skeleton.
fn assets(args: &CrowdArgs, out: &dyn Fn(&str)) -> Res<(String, OwnedSkeleton, Vec<OwnedClip>)> {
    let files: Vec<PathBuf> = if args.cmu {
        let files: Vec<PathBuf> = CMU_CLIPS.iter().map(PathBuf::from).collect();
        if let Some(missing) = files.iter().find(|f| !Path::new(f).is_file()) {
            return Err(format!(
                "{} not found (run from the repository root)",
                missing.display()
            )
            .into());
        }
        files
    } else {
        args.files.clone()
    };
    if files.is_empty() {
        let h = Humanoid::default_rate();
        let [a, b, c] = h.clips;
        return Ok((
            "procedural humanoid, walk/jog/run".into(),
            h.skeleton,
            vec![a, b, c],
        ));
    }
    let (skeleton, clips, skipped) = sinew_cli::matching::load_clips(&files, args.scale)?;
    for s in skipped {
        out(&format!("skipped {s}"));
    }
    let names: Vec<&str> = clips.iter().take(3).map(|c| c.name.as_str()).collect();
    Ok((names.join(" / "), skeleton, clips))
}

/// Runs `sinew crowd`.
///
/// # Errors
/// Bad arguments, files that do not load, kernel errors.
pub fn crowd_command(args: &CrowdArgs, out: &dyn Fn(&str)) -> Res<()> {
    if !(args.seconds.is_finite() && args.seconds > 0.0 && args.seconds <= 3600.0) {
        return Err("--seconds must be in (0, 3600]".into());
    }
    for (name, v) in [
        ("--full-radius", args.full_radius),
        ("--spacing", args.spacing),
        ("--scale", args.scale),
    ] {
        if !(v.is_finite() && v > 0.0) {
            return Err(format!("{name} must be finite and > 0").into());
        }
    }
    let n = args.characters as usize;
    let budget = args.budget.unwrap_or(n.div_ceil(4)).max(n.div_ceil(8));
    if args.budget.is_some_and(|b| b < n.div_ceil(8)) {
        return Err(format!(
            "--budget must be at least ceil(characters / 8) = {}",
            n.div_ceil(8)
        )
        .into());
    }
    let (what, skeleton, clips) = assets(args, out)?;
    let s = skeleton.view();
    let lod = OwnedLod::from_rules(&s, &HUMANOID_RULES, 3)?;
    let l = lod.view();
    let levels: Vec<usize> = (0..l.level_count())
        .map(|k| l.kept(k))
        .collect::<Result<_, _>>()?;
    out(&format!(
        "sinew crowd: {what}; {} joints, kept per level {levels:?}; {n} characters, {} clips",
        s.joint_count(),
        if args.raw { "raw" } else { "compressed" }
    ));
    let raw: Vec<OwnedClip> = clips
        .iter()
        .take(3)
        .map(|c| lod.remap_clip(&c.view()))
        .collect::<Result<_, _>>()?;

    // Distances on a square grid around the camera at its centre.
    let side = (n as f64).sqrt().ceil() as usize;
    let centre = (side as f32 - 1.0) / 2.0;
    let distance: Vec<f32> = (0..n)
        .map(|i| {
            let (x, z) = ((i % side) as f32 - centre, (i / side) as f32 - centre);
            args.spacing * (x * x + z * z).sqrt()
        })
        .collect();
    let r = args.full_radius;
    let level_of: Vec<u8> = distance.iter().map(|&d| level_at(d, r)).collect();
    let importance: Vec<f32> = distance.iter().map(|&d| -d).collect();
    let rate = RateSettings {
        tiers: RateTiers {
            full: -r,
            half: -2.0 * r,
            quarter: -4.0 * r,
        },
        budget,
        replan_every: 8,
    };
    let frames = ((args.seconds * 60.0).round() as u64).max(1);
    let steer_scene = args.steer.then_some(SteerScene {
        side,
        spacing: args.spacing,
        full_radius: r,
    });
    let threads = args.threads.map(|t| t as usize);
    let runs = if args.raw {
        let views: Vec<_> = raw.iter().map(OwnedClip::view).collect();
        both(
            l,
            &views,
            n,
            threads,
            frames,
            &level_of,
            &importance,
            rate,
            args.kept_only,
            steer_scene,
        )?
    } else {
        let clock = Instant::now();
        let comp: Vec<_> = clips
            .iter()
            .take(3)
            .map(|c| -> Res<_> {
                let (c, _) = compress(&s, &c.view(), &CompressOptions::default())?;
                Ok(lod.remap_compressed(&c.view())?)
            })
            .collect::<Res<_>>()?;
        let bytes: usize = comp.iter().map(|c| c.bytes().len()).sum();
        out(&format!(
            "compressed the clips to {:.1} KiB in {:.1} s (0.01 cm bound), reordered for LOD",
            bytes as f64 / 1024.0,
            clock.elapsed().as_secs_f64()
        ));
        let views: Vec<CompressedClip<'_>> = comp.iter().map(|c| c.view()).collect();
        both(
            l,
            &views,
            n,
            threads,
            frames,
            &level_of,
            &importance,
            rate,
            args.kept_only,
            steer_scene,
        )?
    };
    let [full, with] = &runs;
    out(&format!(
        "{frames} frames at 60 Hz on {} threads; times per frame in ms (stages: CPU summed over threads)",
        threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
    ));
    out("run        sample   blend      FK  interp  schedule  stage sum  process CPU   wall  evals/frame  checksum");
    for (name, f) in [("no LOD", full), ("LOD", with)] {
        let per = |d: Duration| d.as_secs_f64() * 1e3 / f.frames as f64;
        out(&format!(
            "{name:<8} {:>8.2} {:>7.2} {:>7.2} {:>7.2} {:>9.2} {:>10.2} {:>12} {:>6.2} {:>12.0}  {:016x}",
            per(f.stages.sample),
            per(f.stages.blend),
            per(f.stages.fk),
            per(f.stages.interpolate),
            per(f.stages.schedule),
            per(f.stages.total()),
            f.cpu.map_or_else(|| "-".to_string(), |c| format!("{:.2}", per(c))),
            per(f.wall),
            f.counts.evaluations as f64 / f.frames as f64,
            f.checksum
        ));
    }
    let c = &with.counts;
    let cf = (n as u64 * with.frames).max(1) as f64;
    let share = |v: u64| 100.0 * v as f64 / cf;
    out(&format!(
        "LOD shares: joint level 0/1/2 {:.1}% / {:.1}% / {:.1}%; period 1/2/4/8 {:.1}% / {:.1}% / {:.1}% / {:.1}%",
        share(c.levels[0]),
        share(c.levels[1]),
        share(c.levels[2]),
        share(c.periods[0]),
        share(c.periods[1]),
        share(c.periods[2]),
        share(c.periods[3])
    ));
    out(&format!(
        "budget {budget} evaluations per frame: peak {}, longest gap {} frames, {} characters demoted by the last plan",
        c.peak_evaluations, c.longest_gap, c.plan.demoted
    ));
    out(&if with.reduced_near == 0 {
        format!("every character within {r} m: every joint, every frame")
    } else {
        format!(
            "{} characters within {r} m were not at full quality (the budget is too small for them)",
            with.reduced_near
        )
    });
    let e = &with.error;
    out(&format!(
        "shown vs full evaluation (local rotations, {} checks): evaluated joints max {:.2}° mean {:.3}° (by period 1/2/4/8: {:.3}° / {:.2}° / {:.2}° / {:.2}°); dropped joints max {:.1}° mean {:.2}°",
        e.characters,
        e.max_interpolated,
        e.mean_interpolated,
        e.max_by_period[0],
        e.max_by_period[1],
        e.max_by_period[2],
        e.max_by_period[3],
        e.max_dropped,
        e.mean_dropped
    ));
    out("(stage times are wall clock inside each thread, so a busy machine that preempts the threads inflates them; process CPU is what the run used)");
    if let (Some(a), Some(b)) = (full.cpu, with.cpu) {
        let per = |d: Duration, f: u64| d.as_secs_f64() * 1e3 / f as f64;
        out(&format!(
            "process CPU per frame: {:.2} ms without LOD, {:.2} ms with ({:.2}x less); on two free cores that is {:.2} ms per frame with LOD",
            per(a, full.frames),
            per(b, with.frames),
            a.as_secs_f64() / b.as_secs_f64().max(1e-9),
            per(b, with.frames) / 2.0
        ));
    }
    if e.across_seam > 0 {
        out(&format!(
            "left out above: {} checks interpolating across the loop point of clips whose last frame is not their first: worst {:.1}°",
            e.across_seam, e.max_across_seam
        ));
    }
    if let Some((t, arrived)) = with.steer {
        out(&format!(
            "steering ({} agents crossing to their mirror images, speed and heading driving the blend and facing): {:.2} ms per frame (in the process CPU and wall times above); {arrived} at their goals after {:.1} s",
            n,
            t.as_secs_f64() * 1e3 / with.frames as f64,
            with.frames as f64 / 60.0
        ));
    }
    let ms = |f: &RunFigures| f.wall.as_secs_f64() * 1e3 / f.frames as f64;
    let (a, b) = (ms(full), ms(with));
    out(&format!(
        "wall time per frame: {a:.2} ms without LOD, {b:.2} ms with ({:.2}x faster); one 60 Hz frame is 16.67 ms: {}",
        a / b.max(1e-9),
        if b <= 1000.0 / 60.0 { "within" } else { "over" }
    ));
    Ok(())
}

/// Joint LOD level at distance `d` from the camera: 0 within the
/// full-quality radius `r`, 1 within `3 r`, 2 beyond.
fn level_at(d: f32, r: f32) -> u8 {
    if d < r {
        0
    } else if d < 3.0 * r {
        1
    } else {
        2
    }
}

/// Where `--steer` places its agents: the grid's columns and spacing, and
/// the full-quality radius its LOD levels follow.
#[derive(Clone, Copy)]
struct SteerScene {
    side: usize,
    spacing: f32,
    full_radius: f32,
}

/// The two runs (no LOD, LOD) over the same frames.
#[allow(clippy::too_many_arguments)]
fn both<C: ClipSource + Copy + Sync>(
    l: sinew_core::lod::JointLod<'_>,
    clips: &[C],
    n: usize,
    threads: Option<usize>,
    frames: u64,
    levels: &[u8],
    importance: &[f32],
    rate: RateSettings,
    kept_only: bool,
    steer: Option<SteerScene>,
) -> Res<[RunFigures; 2]> {
    let near: Vec<bool> = levels
        .iter()
        .zip(importance)
        .map(|(&l, &i)| l == 0 && i >= rate.tiers.full)
        .collect();
    let full = run(
        l,
        &near,
        clips,
        n,
        threads,
        frames,
        LodSettings::default(),
        &LodInputs::default(),
        steer,
    )?;
    let settings = LodSettings {
        rate: Some(rate),
        follow_dropped: !kept_only,
        ..LodSettings::default()
    };
    let inputs = LodInputs {
        levels: Some(levels),
        importance: Some(importance),
        locomotion: None,
    };
    let with = run(
        l, &near, clips, n, threads, frames, settings, &inputs, steer,
    )?;
    Ok([full, with])
}

/// The process's user + system CPU time from `/proc/self/stat` (clock
/// ticks of 1/100 s, Linux's USER_HZ), `None` elsewhere.
fn process_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may hold spaces, in parentheses).
    let rest = stat.get(stat.rfind(')')? + 2..)?;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// One run; the pose checks are outside the timed steps.
#[allow(clippy::too_many_arguments)]
fn run<C: ClipSource + Copy + Sync>(
    l: sinew_core::lod::JointLod<'_>,
    near: &[bool],
    clips: &[C],
    n: usize,
    threads: Option<usize>,
    frames: u64,
    settings: LodSettings,
    inputs: &LodInputs<'_>,
    steer: Option<SteerScene>,
) -> Res<RunFigures> {
    let mut crowd = LodCrowd::new(l, clips, n, threads, settings)?;
    let mut steering = steer.map(|sc| Steering::new(n, sc.side, sc.spacing));
    let workers =
        threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let mut loco = vec![
        Locomotion {
            speed: 0.0,
            heading: 0.0,
        };
        n
    ];
    let mut distance = vec![0.0f32; n];
    let (mut levels, mut importance) = (vec![0u8; n], vec![0.0f32; n]);
    let mut steer_time = Duration::ZERO;
    let mut wall = Duration::ZERO;
    let mut cpu = Some(Duration::ZERO);
    let mut error = PoseError::default();
    let (mut sum, mut sum_dropped, mut checks) = (0.0, 0.0, 0usize);
    for f in 0..frames {
        let (t0, c0) = (Instant::now(), process_cpu());
        if let (Some(st), Some(sc)) = (steering.as_mut(), steer) {
            st.step(1.0 / 60.0, workers, &mut loco, &mut distance)?;
            steer_time += t0.elapsed();
            for ((lv, im), &d) in levels.iter_mut().zip(importance.iter_mut()).zip(&distance) {
                *lv = level_at(d, sc.full_radius);
                *im = -d;
            }
            let steered = LodInputs {
                levels: inputs.levels.map(|_| levels.as_slice()),
                importance: inputs.importance.map(|_| importance.as_slice()),
                locomotion: Some(&loco),
            };
            crowd.step(1.0 / 60.0, f + 1 == frames, &steered)?;
        } else {
            crowd.step(1.0 / 60.0, f + 1 == frames, inputs)?;
        }
        wall += t0.elapsed();
        cpu = match (cpu, c0, process_cpu()) {
            (Some(sum), Some(a), Some(b)) => Some(sum + b.saturating_sub(a)),
            _ => None,
        };
        if f % 30 == 29 {
            let e = crowd.pose_error(16)?;
            error.characters += e.characters;
            error.across_seam += e.across_seam;
            error.max_across_seam = error.max_across_seam.max(e.max_across_seam);
            error.max_interpolated = error.max_interpolated.max(e.max_interpolated);
            error.max_dropped = error.max_dropped.max(e.max_dropped);
            for (a, b) in error.max_by_period.iter_mut().zip(e.max_by_period) {
                *a = a.max(b);
            }
            sum += e.mean_interpolated;
            sum_dropped += e.mean_dropped;
            checks += 1;
        }
    }
    error.mean_interpolated = sum / checks.max(1) as f64;
    error.mean_dropped = sum_dropped / checks.max(1) as f64;
    Ok(RunFigures {
        frames,
        stages: crowd.stages(),
        wall,
        cpu,
        counts: crowd.counts(),
        error,
        checksum: crowd.checksum(),
        reduced_near: crowd
            .periods()
            .zip(crowd.levels())
            .zip(near)
            .filter(|&((p, l), &near)| near && (p != 1 || l != 0))
            .count(),
        steer: steering.map(|st| (steer_time, st.arrived())),
    })
}
