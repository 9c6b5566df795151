//! `sinew graph`: prints an animation graph (parameters, machines, states,
//! transitions), runs a scripted parameter timeline through it on the
//! procedural humanoid, prints one line per state change and draws the
//! playing states' weights over time as a PNG chart.
//!
//! Without a file it plays the built-in locomotion graph
//! ([`sinew_std::graph::LOCOMOTION_JSON`]) with a built-in script: walk,
//! run, a jump whose fall is cut short by landing, and a stop. A user's
//! JSON graph names the same clips ([`LOCOMOTION_CLIPS`]).

use std::error::Error as StdError;
use std::path::PathBuf;

use plotters::style::RGBColor;
use sinew_core::graph::{
    Condition, Graph, GraphBuffers, GraphContext, GraphEvent, GraphInstance, Motion, Node,
    ParamKind,
};
use sinew_core::mix::InertialBlock;
use sinew_core::player::{Blend, FadeCurve};
use sinew_core::{f32x4, SoaTransform};
use sinew_std::graph::{build_graph, Locomotion, LOCOMOTION_CLIPS};

use crate::chart::{self, Axes, Curve, Key};

type Res<T> = Result<T, Box<dyn StdError>>;

/// The built-in script of the example graph.
pub const EXAMPLE_SCRIPT: &str =
    "0.5:speed=1.5 2:speed=4 3:jump 3:grounded=false 3.75:grounded=true 6.5:speed=0";

/// Seconds the built-in script runs.
pub const EXAMPLE_SECONDS: f32 = 8.5;

/// `sinew graph` arguments.
#[derive(clap::Args, Debug, Clone)]
pub struct GraphArgs {
    /// A JSON graph over the humanoid's clips (idle, walk, jog, run, jump,
    /// fall, land). Default: the built-in locomotion graph.
    pub file: Option<PathBuf>,
    /// Parameter changes, `TIME:NAME=VALUE` or `TIME:TRIGGER`, separated by
    /// spaces or commas (values: numbers, true, false). Default for the
    /// built-in graph: its walk, run, jump and stop script.
    #[arg(long)]
    pub script: Option<String>,
    /// Seconds to run (default 8.5).
    #[arg(long, value_parser = seconds)]
    pub seconds: Option<f32>,
    /// Frames per second.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub rate: u32,
    /// Output PNG.
    #[arg(
        short,
        long = "out",
        visible_alias = "output",
        default_value = "graph.png"
    )]
    pub out: PathBuf,
    /// Also write the compiled graph container (`SINEWGRF`), which a
    /// program that links only the core loads with `Graph::from_bytes`.
    #[arg(long, value_name = "FILE")]
    pub save_graph: Option<PathBuf>,
}

fn seconds(s: &str) -> Result<f32, String> {
    match s.parse::<f32>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 3600.0 => Ok(v),
        Ok(_) => Err("must be a number of seconds in (0, 3600]".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// One scripted change: at `time` seconds set `name` to `value`.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// Seconds from the start.
    pub time: f32,
    /// Parameter name.
    pub name: String,
    /// Value (1 for a trigger, 0 or 1 for a bool).
    pub value: f32,
}

/// Parses a script (see [`GraphArgs::script`]), sorted by time.
///
/// # Errors
/// An item that is not `TIME:NAME=VALUE` or `TIME:NAME`, with the item.
pub fn parse_script(s: &str) -> Res<Vec<Step>> {
    let mut steps = Vec::new();
    for item in s.split([' ', ',', '\n']).filter(|i| !i.is_empty()) {
        let bad = || format!("script item \"{item}\": expected TIME:NAME=VALUE or TIME:TRIGGER");
        let (t, rest) = item.split_once(':').ok_or_else(bad)?;
        let time: f32 = t.parse().map_err(|_| bad())?;
        if !(time.is_finite() && time >= 0.0) {
            return Err(bad().into());
        }
        let (name, value) = match rest.split_once('=') {
            None => (rest, 1.0),
            Some((n, "true")) => (n, 1.0),
            Some((n, "false")) => (n, 0.0),
            Some((n, v)) => (n, v.parse::<f32>().map_err(|_| bad())?),
        };
        if name.is_empty() || !value.is_finite() {
            return Err(bad().into());
        }
        steps.push(Step {
            time,
            name: name.to_string(),
            value,
        });
    }
    steps.sort_by(|a, b| a.time.total_cmp(&b.time));
    Ok(steps)
}

fn curve_name(c: FadeCurve) -> &'static str {
    match c {
        FadeCurve::Linear => "linear",
        FadeCurve::SmoothStep => "smooth-step",
        FadeCurve::EaseIn => "ease-in",
        FadeCurve::EaseOut => "ease-out",
    }
}

/// The graph described in lines: parameters, nodes, machines with their
/// states, and transitions with their conditions.
#[must_use]
pub fn describe(g: &Graph<'_>) -> Vec<String> {
    let mut lines = Vec::new();
    let param = |i: usize| g.param(i).map_or("?", |p| p.name);
    let state = |i: usize| g.state(i).map_or("?", |s| s.name);
    let clip = |i: usize| LOCOMOTION_CLIPS.get(i).copied().unwrap_or("?");
    lines.push(format!("parameters: {}", g.param_count()));
    for p in (0..g.param_count()).filter_map(|i| g.param(i)) {
        let kind = match p.kind {
            ParamKind::Float => format!("float = {}", p.default),
            ParamKind::Bool => format!("bool = {}", p.default != 0.0),
            ParamKind::Trigger => "trigger".to_string(),
        };
        lines.push(format!("  {} ({kind})", p.name));
    }
    lines.push(format!("nodes: {}", g.node_count()));
    for (i, n) in (0..g.node_count()).filter_map(|i| g.node(i)).enumerate() {
        let text = match n {
            Node::Clip {
                clip: c,
                speed,
                mode,
            } => format!("clip {} x{speed} {mode:?}", clip(c)),
            Node::BlendSpace1D {
                param: p,
                first,
                count,
                ..
            } => {
                let s: Vec<String> = (first..first + count)
                    .filter_map(|k| g.sample(k))
                    .map(|s| format!("{}@{}", clip(s.clip), s.position))
                    .collect();
                format!("blend space on {}: {}", param(p), s.join(" "))
            }
            Node::Blend2 { a, b, param: p } => format!("blend #{a} #{b} by {}", param(p)),
            Node::Additive {
                base,
                additive,
                param: p,
            } => {
                format!("additive #{additive} on #{base} by {}", param(p))
            }
            Node::Masked {
                base,
                layer,
                param: p,
                count,
                ..
            } => {
                format!(
                    "layer #{layer} on #{base} by {} over {count} joints",
                    param(p)
                )
            }
        };
        lines.push(format!("  #{i} {text}"));
    }
    for m in 0..g.machine_count() {
        let Some(mach) = g.machine(m) else { continue };
        lines.push(format!(
            "machine {} (entry {}): {} states, {} transitions",
            mach.name,
            state(mach.entry),
            mach.state_count,
            mach.transition_count
        ));
        for s in mach.first_state..mach.first_state + mach.state_count {
            let Some(st) = g.state(s) else { continue };
            let motion = match st.motion {
                Motion::Node(n) => format!("node #{n}"),
                Motion::Machine(k) => format!("machine {}", g.machine(k).map_or("?", |x| x.name)),
            };
            lines.push(format!("  state {}: {motion}, speed {}", st.name, st.speed));
        }
        for t in mach.first_transition..mach.first_transition + mach.transition_count {
            let Some(tr) = g.transition(t) else { continue };
            let conds: Vec<String> = (tr.first_condition..tr.first_condition + tr.condition_count)
                .filter_map(|c| g.condition(c))
                .map(|c| match c {
                    Condition::Greater { param: p, value } => format!("{} > {value}", param(p)),
                    Condition::Less { param: p, value } => format!("{} < {value}", param(p)),
                    Condition::Equals { param: p, value } => format!("{} == {value}", param(p)),
                    Condition::Trigger { param: p } => format!("trigger {}", param(p)),
                    Condition::EventId(id) => format!("event #{id}"),
                    Condition::EventName(n) => format!("event {n}"),
                    Condition::ExitTime(x) => format!("exit time {x}"),
                })
                .collect();
            let blend = match tr.transition.blend {
                Blend::Crossfade(c) => curve_name(c).to_string(),
                Blend::Inertialize(d) => format!("inertialized ({d:?})"),
            };
            lines.push(format!(
                "  transition #{t}: {} -> {} when {}; {} s {blend}{}",
                tr.from.map_or("*", state),
                state(tr.to),
                if conds.is_empty() {
                    "always".to_string()
                } else {
                    conds.join(" and ")
                },
                tr.transition.duration,
                if tr.interruptible {
                    ", interruptible"
                } else {
                    ""
                }
            ));
        }
    }
    lines
}

/// What a run produced: each leaf's weight per frame, and the changes.
pub struct GraphRun {
    /// Frame times, seconds.
    pub times: Vec<f32>,
    /// Per leaf state that ever played: its name and weight per frame.
    pub weights: Vec<(String, Vec<f32>)>,
    /// One line per state change.
    pub changes: Vec<String>,
}

/// Runs `steps` through the graph for `seconds` at `rate` Hz.
///
/// # Errors
/// A script naming an unknown parameter, or a kernel error.
pub fn run(
    l: &Locomotion,
    g: &Graph<'_>,
    steps: &[Step],
    seconds: f32,
    rate: u32,
) -> Res<GraphRun> {
    let skel = l.humanoid.skeleton.view();
    let n = skel.soa_count();
    let clips: Vec<_> = l.clips.iter().map(|c| c.view()).collect();
    let tracks = l.tracks();
    let ctx = GraphContext {
        graph: g,
        clips: &clips,
        events: &tracks,
        rest: skel.rest_pose(),
    };
    let mut inst = GraphInstance::new(g)?;
    let mut scratch = vec![SoaTransform::IDENTITY; g.scratch_poses() * n];
    let mut history = vec![SoaTransform::IDENTITY; 2 * n];
    let mut inertial = vec![InertialBlock::default(); n];
    let mut mask = vec![f32x4::ZERO; 2 * n];
    let mut out = vec![SoaTransform::IDENTITY; n];
    let mut events = [GraphEvent::default(); 32];
    let dt = 1.0 / rate as f32;
    let frames = (seconds * rate as f32).round() as usize;
    let path_name = |p: &[u16]| -> String {
        p.iter()
            .map(|&s| g.state(usize::from(s)).map_or("?", |s| s.name))
            .collect::<Vec<_>>()
            .join("/")
    };
    let mut result = GraphRun {
        times: Vec::with_capacity(frames),
        weights: Vec::new(),
        changes: Vec::new(),
    };
    let mut leaves: Vec<usize> = Vec::new();
    let mut next = 0;
    let mut path = path_name(inst.path());
    result
        .changes
        .push(format!("{:6.3} s  start in {path}", 0.0));
    for f in 0..frames {
        let t = f as f32 * dt;
        while next < steps.len() && steps[next].time <= t + dt * 0.5 {
            let s = &steps[next];
            inst.set_named(g, &s.name, s.value)
                .map_err(|e| format!("script: parameter \"{}\": {e}", s.name))?;
            next += 1;
        }
        let mut bufs = GraphBuffers {
            scratch: &mut scratch,
            history: &mut history,
            inertial: &mut inertial,
            mask: &mut mask,
        };
        let report = inst.update(dt, &ctx, &mut bufs, &mut out, &mut events)?;
        if let Some(tr) = report.transition.and_then(|k| g.transition(k)) {
            let to = path_name(report.path());
            let how = match tr.transition.blend {
                Blend::Crossfade(c) => format!("{} s {}", tr.transition.duration, curve_name(c)),
                Blend::Inertialize(_) => format!("{} s inertialized", tr.transition.duration),
            };
            result
                .changes
                .push(format!("{t:6.3} s  {path} -> {to} ({how})"));
            path = to;
        }
        for (s, _) in inst.active() {
            if !leaves.contains(&s) {
                leaves.push(s);
                result.weights.push((
                    g.state(s).map_or("?", |x| x.name).to_string(),
                    vec![0.0; frames],
                ));
            }
        }
        for (s, w) in inst.active() {
            if let Some(k) = leaves.iter().position(|&x| x == s) {
                result.weights[k].1[f] += w;
            }
        }
        result.times.push(t);
    }
    Ok(result)
}

const COLOURS: [RGBColor; 8] = [
    RGBColor(60, 110, 220),
    RGBColor(235, 140, 30),
    RGBColor(30, 150, 70),
    RGBColor(200, 60, 60),
    RGBColor(150, 80, 190),
    RGBColor(20, 160, 170),
    RGBColor(190, 150, 20),
    RGBColor(100, 100, 100),
];

/// The chart: each leaf state's fader weight against time.
///
/// # Errors
/// A drawing error.
pub fn draw(r: &GraphRun, title: &str) -> Res<tiny_skia::Pixmap> {
    let curves: Vec<Curve<'_>> = r
        .weights
        .iter()
        .enumerate()
        .map(|(k, (name, w))| Curve {
            key: Key {
                text: name,
                colour: COLOURS[k % COLOURS.len()],
                dashed: false,
            },
            points: r.times.iter().copied().zip(w.iter().copied()).collect(),
            width: 3,
        })
        .collect();
    let axes = Axes {
        title,
        x_name: "time (s)",
        y_name: "state weight",
        x: 0.0..r.times.last().copied().unwrap_or(1.0).max(1e-3),
        y: -0.05..1.05,
        decimals: (1, 1),
    };
    chart::canvas(1000, 420, &[], |root| {
        chart::line_chart(root, &axes, &curves)
    })
}

/// `sinew graph`: prints the graph and one line per state change, writes the chart.
///
/// # Errors
/// An unreadable or invalid graph file (the bad field named), a bad
/// script, a kernel error, or the PNG cannot be written.
pub fn graph_command(args: &GraphArgs, out: &dyn Fn(&str)) -> Res<()> {
    let l = Locomotion::new()?;
    let user = match &args.file {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            Some(
                build_graph(&text, &LOCOMOTION_CLIPS)
                    .map_err(|e| format!("{}: {e}", path.display()))?,
            )
        }
        None => None,
    };
    let asset = user.as_ref().unwrap_or(&l.graph);
    let g = asset.view();
    if let Some(path) = &args.save_graph {
        std::fs::write(path, asset.bytes())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        out(&format!(
            "wrote {} ({} bytes, the compiled graph)",
            path.display(),
            asset.bytes().len()
        ));
    }
    for line in describe(&g) {
        out(&line);
    }
    let script = match (&args.script, &args.file) {
        (Some(s), _) => s.as_str(),
        (None, None) => EXAMPLE_SCRIPT,
        (None, Some(_)) => "",
    };
    let steps = parse_script(script)?;
    let seconds = args.seconds.unwrap_or(EXAMPLE_SECONDS);
    let r = run(&l, &g, &steps, seconds, args.rate)?;
    out(&format!(
        "run: {} frames at {} Hz, script \"{script}\"",
        r.times.len(),
        args.rate
    ));
    for c in &r.changes {
        out(c);
    }
    let name = args.file.as_ref().map_or_else(
        || "the built-in locomotion graph".to_string(),
        |p| p.display().to_string(),
    );
    let png = draw(&r, &format!("State weights of {name} over the script"))?;
    png.save_png(&args.out)
        .map_err(|e| format!("cannot write {}: {e}", args.out.display()))?;
    out(&format!(
        "wrote {} ({}x{} px)",
        args.out.display(),
        png.width(),
        png.height()
    ));
    Ok(())
}
