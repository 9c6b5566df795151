//! Demonstrations of the mixer and transitions for the `sinew` tool:
//! `sinew mix` (an idle, units added mid-way, fatigue rising) and
//! `sinew plot` (one joint's angle across a transition, as a PNG chart).

use std::error::Error as StdError;

use plotters::style::RGBColor;
use sinew_core::blend::JointWeights;
use sinew_core::clip::{RawClip, TimeMode};
use sinew_core::mix::mixer::MixMode;
use sinew_core::mix::root_motion;
use sinew_core::mix::transition::{self, SwitchJob};
use sinew_core::mix::{
    build_mask, crossfade, euler_zxy_from_quat, BSplineSmoother, Decay, InertialBlock, MaskOp,
    Mixer, MotionUnit, Ramp,
};
use sinew_core::soa::{get_joint, pack, unpack};
use sinew_core::{f32x4, Quat, Skeleton, SoaTransform, Transform};
use tiny_skia::Pixmap;

use crate::chart::{self, Axes, Curve, Key};

use sinew_std::{Humanoid, OwnedClip, OwnedSkeleton};

type Res<T> = Result<T, Box<dyn StdError>>;

/// Capacity of the demo's unit queue.
pub const DEMO_UNITS: usize = 4;

/// A unit the demo starts at a given frame.
#[derive(Clone, Debug)]
pub struct PlannedUnit {
    /// Label in the report.
    pub name: String,
    /// Clip index.
    pub clip: usize,
    /// Frame of the demo at which it is added.
    pub at: usize,
    /// Frames it plays.
    pub length: usize,
    /// Ramp.
    pub ramp: Ramp,
    /// Per-joint priorities (one `f32x4` per block), or `None` for 1 everywhere.
    pub priorities: Option<Vec<f32x4>>,
}

/// What `sinew mix` plays.
#[derive(Clone, Debug)]
pub struct MixPlan {
    /// Clip looping as the idle.
    pub idle: usize,
    /// Clip looping as the fatigue unit.
    pub fatigue: usize,
    /// Units added along the way.
    pub units: Vec<PlannedUnit>,
    /// Frames to run.
    pub frames: usize,
    /// Joints whose angle the report follows.
    pub tracked: Vec<usize>,
}

/// One row of the report.
#[derive(Clone, Debug)]
pub struct MixRow {
    /// Demo frame.
    pub frame: usize,
    /// Fatigue factor at that frame.
    pub fatigue: f32,
    /// `(name, cursor, length, wF)` of every running unit.
    pub units: Vec<(String, usize, usize, f32)>,
    /// ZXY pitch (θx) of each tracked joint, in degrees.
    pub angles: Vec<f32>,
}

/// Everything `sinew mix` prints or draws.
pub struct MixReport {
    /// One row per frame.
    pub rows: Vec<MixRow>,
    /// The mixed output as a clip (for a filmstrip).
    pub output: OwnedClip,
}

/// ZXY pitch θx of a local rotation, in degrees.
#[must_use]
pub fn pitch_degrees(q: Quat) -> f32 {
    euler_zxy_from_quat(q).y.to_degrees()
}

/// Runs a plan: idle and fatigue loop, fatigue rises linearly from 0 to 1,
/// units start at their frames; the mixed pose of every frame is recorded.
///
/// # Errors
/// Any core error (the plan's units are validated by the mixer).
pub fn run_mix(
    skeleton: &OwnedSkeleton,
    clips: &[OwnedClip],
    plan: &MixPlan,
    mode: MixMode,
    smooth: bool,
) -> Res<MixReport> {
    let skel = skeleton.view();
    let n = skel.soa_count();
    let views: Vec<RawClip<'_>> = clips.iter().map(OwnedClip::view).collect();
    let mut mixer: Mixer<DEMO_UNITS> = Mixer::new(n, mode);
    let looping = |c: usize| -> Res<MotionUnit> {
        let clip = views.get(c).ok_or("no such clip")?;
        // A loop's last frame repeats its first: play one frame less.
        Ok(MotionUnit::new(c, (clip.frame_count() - 1).max(1)))
    };
    mixer
        .set_idle(Some(looping(plan.idle)?), &views, &[])
        .map_err(|r| r.error)?;
    mixer
        .set_fatigue_unit(Some(looping(plan.fatigue)?), &views, &[])
        .map_err(|r| r.error)?;
    let masks: Vec<JointWeights<'_>> = plan
        .units
        .iter()
        .filter_map(|u| u.priorities.as_deref().map(JointWeights::new))
        .collect::<Result<_, _>>()?;
    let mut next_mask = 0..;
    let mask_of: Vec<Option<usize>> = plan
        .units
        .iter()
        .map(|u| u.priorities.as_ref().and_then(|_| next_mask.next()))
        .collect();
    let mut names: Vec<(sinew_core::mix::UnitId, String)> = Vec::new();
    let mut history = vec![SoaTransform::IDENTITY; 2 * n];
    let mut smoother = BSplineSmoother::new();
    let mut pose = vec![SoaTransform::IDENTITY; n];
    let mut keys = Vec::with_capacity(plan.frames * n);
    let mut rows = Vec::with_capacity(plan.frames);
    for frame in 0..plan.frames {
        for (u, mask) in plan.units.iter().zip(&mask_of) {
            if u.at == frame {
                let mut unit = MotionUnit::new(u.clip, u.length).with_ramp(u.ramp);
                if let Some(m) = mask {
                    unit = unit.with_joint_weights(*m);
                }
                let id = mixer.add(unit, &views, &masks).map_err(|r| r.error)?;
                names.push((id, u.name.clone()));
            }
        }
        let fatigue = if plan.frames > 1 {
            frame as f32 / (plan.frames - 1) as f32
        } else {
            0.0
        };
        mixer.set_fatigue(fatigue)?;
        mixer.evaluate(&views, &masks, skel.rest_pose(), &mut [], &mut pose)?;
        if smooth {
            smoother.apply(&mut history, &mut pose)?;
        }
        let units = mixer
            .units()
            .map(|u| {
                let name = names
                    .iter()
                    .find(|(i, _)| *i == u.id)
                    .map_or("?", |(_, s)| s.as_str());
                (name.to_string(), u.cursor, u.length, u.weight)
            })
            .collect();
        let angles = plan
            .tracked
            .iter()
            .map(|&j| get_joint(&pose, j).map_or(0.0, |t| pitch_degrees(t.rotation)))
            .collect();
        rows.push(MixRow {
            frame,
            fatigue,
            units,
            angles,
        });
        keys.extend_from_slice(&pose);
        mixer.advance();
    }
    let rate = views.first().map_or(30.0, RawClip::sample_rate);
    let output = OwnedClip::new("mix", rate, n, keys)?;
    Ok(MixReport { rows, output })
}

/// Per-joint priorities: `high` on the subtrees of `roots`, `low` elsewhere.
///
/// # Errors
/// A root name the skeleton does not have.
pub fn priorities(skel: &Skeleton<'_>, roots: &[&str], high: f32, low: f32) -> Res<Vec<f32x4>> {
    let ops: Vec<MaskOp<'_>> = roots
        .iter()
        .map(|r| MaskOp::Subtree {
            root: r,
            weight: high,
        })
        .collect();
    let mut out = vec![f32x4::ZERO; skel.soa_count()];
    build_mask(skel, &ops, low, &mut out).map_err(|e| match e {
        sinew_core::Error::UnknownJoint { entry } => {
            format!("no joint named {:?}", roots.get(entry).unwrap_or(&"?")).into()
        }
        e => Box::<dyn StdError>::from(e),
    })?;
    Ok(out)
}

/// A looping clip made from the rest pose: each `(joint, axis, base, amplitude)`
/// is rotated `base + amplitude · sin(2π k t / T)` degrees about its local axis.
fn rest_loop(
    skel: &Skeleton<'_>,
    name: &str,
    rate: f32,
    seconds: f32,
    moves: &[(&str, char, f32, f32, f32)],
) -> Res<OwnedClip> {
    let joints = skel.joint_count();
    let mut rest = vec![Transform::IDENTITY; joints];
    unpack(skel.rest_pose(), &mut rest)?;
    let frames = (seconds * rate).round() as usize + 1;
    let mut keys = Vec::with_capacity(frames * skel.soa_count());
    for f in 0..frames {
        let t = f as f32 / (frames - 1) as f32;
        let mut pose = rest.clone();
        for &(joint, axis, base, amp, cycles) in moves {
            let j = skel
                .find_joint(joint)
                .ok_or_else(|| format!("no joint named {joint:?}"))?;
            let a = (base + amp * (std::f32::consts::TAU * cycles * t).sin()).to_radians();
            let q = match axis {
                'x' => Quat::from_rotation_x(a),
                'y' => Quat::from_rotation_y(a),
                _ => Quat::from_rotation_z(a),
            };
            pose[j].rotation = (pose[j].rotation * q).normalize();
        }
        let mut block = vec![SoaTransform::IDENTITY; skel.soa_count()];
        pack(&pose, &mut block)?;
        keys.extend_from_slice(&block);
    }
    Ok(OwnedClip::new(name, rate, skel.soa_count(), keys)?)
}

/// The procedural humanoid's demo: clips walk, jog, run plus a generated
/// idle (breathing, looking around) and a tired slump; the idle loops, an
/// arm swing (jog, arms priority 1, others 0.1) starts at frame 10, a leg
/// swing (walk, legs priority 1) starts half-way through it, and fatigue
/// rises from 0 to 1.
///
/// # Errors
/// Any core error.
pub fn humanoid_plan(h: &Humanoid, frames: usize) -> Res<(Vec<OwnedClip>, MixPlan)> {
    let skel = h.skeleton.view();
    let rate = h.clips[0].sample_rate();
    let idle = rest_loop(
        &skel,
        "idle",
        rate,
        2.0,
        &[
            ("spine_01", 'x', 0.0, 2.0, 1.0),
            ("spine_03", 'x', 0.0, 1.5, 1.0),
            ("head", 'y', 0.0, 12.0, 1.0),
            ("upper_arm_l", 'x', 0.0, 3.0, 1.0),
            ("upper_arm_r", 'x', 0.0, -3.0, 1.0),
        ],
    )?;
    let tired = rest_loop(
        &skel,
        "tired",
        rate,
        2.0,
        &[
            ("spine_01", 'x', 10.0, 2.0, 2.0),
            ("spine_02", 'x', 10.0, 2.0, 2.0),
            ("spine_03", 'x', 8.0, 2.0, 2.0),
            ("neck_01", 'x', 12.0, 0.0, 1.0),
            ("head", 'x', 10.0, 2.0, 2.0),
        ],
    )?;
    let mut clips: Vec<OwnedClip> = h.clips.to_vec();
    clips.push(idle);
    clips.push(tired);
    let arms = priorities(&skel, &["clavicle_l", "clavicle_r"], 1.0, 0.1)?;
    let legs = priorities(&skel, &["thigh_l", "thigh_r"], 1.0, 0.1)?;
    let jog = clips[1].frame_count() - 1;
    let walk = clips[0].frame_count() - 1;
    let tracked = ["spine_02", "upper_arm_l", "thigh_l"]
        .iter()
        .filter_map(|n| skel.find_joint(n))
        .collect();
    let plan = MixPlan {
        idle: 3,
        fatigue: 4,
        units: vec![
            PlannedUnit {
                name: "arms(jog)".into(),
                clip: 1,
                at: 10.min(frames),
                length: jog,
                ramp: Ramp::Linear { frames: 5 },
                priorities: Some(arms),
            },
            PlannedUnit {
                name: "legs(walk)".into(),
                clip: 0,
                at: (10 + jog / 2).min(frames),
                length: walk,
                ramp: Ramp::Smooth { frames: 6 },
                priorities: Some(legs),
            },
        ],
        frames,
        tracked,
    };
    Ok((clips, plan))
}

/// A plan for imported clips: clip 0 is the idle, the second clip (or the
/// first) is added a quarter of the way in, the third (or the last) is the
/// fatigue loop; units get priority 1 on the subtree of `focus` (0.1
/// elsewhere) when it is given.
///
/// # Errors
/// No clips, or a `focus` joint the skeleton does not have.
pub fn file_plan(
    skel: &Skeleton<'_>,
    clips: &[OwnedClip],
    frames: usize,
    focus: Option<&str>,
) -> Res<MixPlan> {
    if clips.is_empty() {
        return Err("no clips to mix".into());
    }
    let unit = 1.min(clips.len() - 1);
    let fatigue = 2.min(clips.len() - 1);
    let length = (clips[unit].frame_count() - 1).clamp(1, frames.max(1));
    let ramp = Ramp::Linear {
        frames: (length / 6).min(15),
    };
    let pri = focus
        .map(|f| priorities(skel, &[f], 1.0, 0.1))
        .transpose()?;
    let wanted = ["spine", "arm", "upleg", "thigh", "leg"];
    let mut tracked: Vec<usize> = Vec::new();
    for w in wanted {
        if tracked.len() >= 3 {
            break;
        }
        if let Some(j) = (0..skel.joint_count()).find(|&j| {
            skel.joint_name(j)
                .is_some_and(|n| n.to_ascii_lowercase().contains(w))
                && !tracked.contains(&j)
        }) {
            tracked.push(j);
        }
    }
    if tracked.is_empty() {
        tracked = (1..skel.joint_count().min(4)).collect();
    }
    Ok(MixPlan {
        idle: 0,
        fatigue,
        units: vec![PlannedUnit {
            name: clips[unit].name.clone(),
            clip: unit,
            at: frames / 4,
            length,
            ramp,
            priorities: pri,
        }],
        frames,
        tracked,
    })
}

/// Options of [`transition_curves`] and [`draw_curves`].
#[derive(Clone, Copy, Debug)]
pub struct PlotOptions {
    /// Time of the switch in seconds.
    pub switch: f32,
    /// Cross-fade and inertialization time `T` in seconds.
    pub blend: f32,
    /// Length of the chart in seconds.
    pub seconds: f32,
    /// Curve sampling rate in Hz.
    pub rate: f32,
    /// Image size in pixels.
    pub width: u32,
    /// Image height in pixels.
    pub height: u32,
}

impl Default for PlotOptions {
    fn default() -> Self {
        PlotOptions {
            switch: 0.3,
            blend: 0.3,
            seconds: 1.5,
            rate: 120.0,
            width: 1000,
            height: 460,
        }
    }
}

/// The four curves of a transition chart (degrees, one value per sample).
#[derive(Clone, Debug, Default)]
pub struct TransitionCurves {
    /// Sample times in seconds.
    pub times: Vec<f32>,
    /// The old clip kept playing.
    pub old: Vec<f32>,
    /// The new clip (started at the switch).
    pub new: Vec<f32>,
    /// Cross-fade over `T`.
    pub crossfade: Vec<f32>,
    /// Quintic inertialization over `T`.
    pub inertialized: Vec<f32>,
}

/// Largest change of slope (deg/s) between two consecutive samples of `v`
/// from the switch sample on: a jump in velocity shows as a spike.
#[must_use]
pub fn max_slope_jump(times: &[f32], v: &[f32], from: f32) -> f32 {
    let i0 = times.iter().position(|&t| t >= from).unwrap_or(0).max(1);
    (i0..v.len().saturating_sub(1))
        .map(|i| {
            let a = (v[i] - v[i - 1]) / (times[i] - times[i - 1]);
            let b = (v[i + 1] - v[i]) / (times[i + 1] - times[i]);
            (b - a).abs()
        })
        .take(3)
        .fold(0.0, f32::max)
}

/// Samples one joint's pitch across a transition from `from` to `to`.
///
/// # Errors
/// Any core error (clips not fitting the skeleton, joint out of range).
pub fn transition_curves(
    skel: &Skeleton<'_>,
    from: &RawClip<'_>,
    to: &RawClip<'_>,
    joint: usize,
    opts: &PlotOptions,
) -> Res<TransitionCurves> {
    let n = skel.soa_count();
    if from.soa_count() != n || to.soa_count() != n {
        return Err("clips do not fit the skeleton".into());
    }
    if joint >= skel.joint_count() {
        return Err(format!("joint {joint} is out of range").into());
    }
    if !(opts.rate > 0.0 && opts.seconds > 0.0 && opts.blend > 0.0) {
        return Err("plot rate, length and blend time must be > 0".into());
    }
    let dt = 1.0 / opts.rate;
    let steps = (opts.seconds * opts.rate).round() as usize + 1;
    let (mut a, mut a_prev, mut b, mut b_prev, mut out) = (
        vec![SoaTransform::IDENTITY; n],
        vec![SoaTransform::IDENTITY; n],
        vec![SoaTransform::IDENTITY; n],
        vec![SoaTransform::IDENTITY; n],
        vec![SoaTransform::IDENTITY; n],
    );
    let mut state = vec![InertialBlock::default(); n];
    let mut started = false;
    let angle = |p: &[SoaTransform]| get_joint(p, joint).map_or(0.0, |t| pitch_degrees(t.rotation));
    let mut c = TransitionCurves::default();
    for i in 0..steps {
        let t = i as f32 * dt;
        let tn = t - opts.switch;
        from.sample(t, TimeMode::Loop, &mut a)?;
        to.sample(tn, TimeMode::Loop, &mut b)?;
        c.times.push(t);
        c.old.push(angle(&a));
        c.new.push(angle(&b));
        // Cross-fade.
        let alpha = (tn / opts.blend).clamp(0.0, 1.0);
        crossfade(&a, &b, alpha, &mut out)?;
        c.crossfade.push(angle(&out));
        // Inertialization: the old clip until the switch, then the new clip plus a decaying offset.
        if tn < 0.0 {
            c.inertialized.push(angle(&a));
        } else {
            if !started {
                from.sample(t - dt, TimeMode::Loop, &mut a_prev)?;
                to.sample(tn - dt, TimeMode::Loop, &mut b_prev)?;
                transition::start(
                    &mut state,
                    &SwitchJob {
                        old: &a,
                        old_prev: &a_prev,
                        new: &b,
                        new_prev: &b_prev,
                        dt,
                        duration: opts.blend,
                    },
                )?;
                started = true;
            }
            out.copy_from_slice(&b);
            transition::apply(&state, tn, Decay::Quintic, &mut out)?;
            c.inertialized.push(angle(&out));
        }
    }
    Ok(c)
}

/// Colours of the chart's curves: old, new, cross-fade, inertialization.
pub const CURVE_COLOURS: [(&str, [u8; 3]); 4] = [
    ("old clip (grey, dashed)", [150, 150, 150]),
    ("new clip (blue, dashed)", [60, 110, 220]),
    ("cross-fade (orange)", [235, 140, 30]),
    ("inertialization (green)", [30, 150, 70]),
];

/// Draws the curves as a PNG chart titled `title`: time in seconds across,
/// the joint's pitch in degrees up, both with tick values and a light grid;
/// the switch and switch + T as vertical red lines; a legend naming every line.
///
/// # Errors
/// A drawing error.
pub fn draw_curves(c: &TransitionCurves, opts: &PlotOptions, title: &str) -> Res<Pixmap> {
    let (w, h) = (opts.width.clamp(400, 4096), opts.height.clamp(200, 4096));
    let all = c
        .old
        .iter()
        .chain(&c.new)
        .chain(&c.crossfade)
        .chain(&c.inertialized);
    let (mut lo, mut hi) = all.fold((f32::MAX, f32::MIN), |(l, h), &v| (l.min(v), h.max(v)));
    if !(lo.is_finite() && hi.is_finite()) || hi - lo < 1.0 {
        let m = if lo.is_finite() { (lo + hi) * 0.5 } else { 0.0 };
        (lo, hi) = (m - 1.0, m + 1.0);
    }
    let pad = (hi - lo) * 0.08;
    let (lo, hi) = (lo - pad, hi + pad);
    let t_end = c.times.last().copied().unwrap_or(1.0).max(1e-3);
    let series = [&c.old, &c.new, &c.crossfade, &c.inertialized];
    let mut curves: Vec<Curve<'_>> = CURVE_COLOURS
        .iter()
        .zip(series)
        .enumerate()
        .map(|(k, (&(text, [r, g, b]), values))| Curve {
            key: Key {
                text,
                colour: RGBColor(r, g, b),
                dashed: k < 2,
            },
            points: c
                .times
                .iter()
                .copied()
                .zip(values.iter().copied())
                .collect(),
            width: if k < 2 { 2 } else { 3 },
        })
        .collect();
    for (t, text) in [
        (opts.switch, "switch (new clip starts)"),
        (opts.switch + opts.blend, "switch + T (blend ends)"),
    ] {
        curves.push(Curve {
            key: Key {
                text,
                colour: RGBColor(200, 60, 60),
                dashed: false,
            },
            points: vec![(t, lo), (t, hi)],
            width: 1,
        });
    }
    let axes = Axes {
        title,
        x_name: "time (s)",
        y_name: "pitch θx (degrees)",
        x: 0.0..t_end,
        y: lo..hi,
        decimals: (1, 0),
    };
    chart::canvas(w, h, &[], |root| chart::line_chart(root, &axes, &curves))
}

/// Colours of the mixer chart's unit curves, in order of first appearance.
const UNIT_COLOURS: [RGBColor; 6] = [
    RGBColor(60, 110, 220),
    RGBColor(235, 140, 30),
    RGBColor(30, 150, 70),
    RGBColor(150, 80, 190),
    RGBColor(20, 160, 170),
    RGBColor(190, 150, 20),
];

/// The picture `sinew mix -o` writes: the mixed output as a labelled
/// filmstrip (`strip`, cells at `times` seconds) over a chart of the fatigue
/// factor and every unit's weight wF against time (`rate` frames per second).
///
/// # Errors
/// A drawing error.
pub fn draw_mix(
    strip: &Pixmap,
    times: &[f32],
    title: &str,
    report: &MixReport,
    rate: f32,
) -> Res<Pixmap> {
    let labelled = chart::label_filmstrip(strip, title, times)?;
    let t = |frame: usize| frame as f32 / rate;
    let mut names: Vec<&str> = Vec::new();
    for r in &report.rows {
        for (n, ..) in &r.units {
            if !names.contains(&n.as_str()) {
                names.push(n);
            }
        }
    }
    let mut curves = vec![Curve {
        key: Key {
            text: "fatigue (weight of the tired clip)",
            colour: RGBColor(200, 60, 60),
            dashed: true,
        },
        points: report
            .rows
            .iter()
            .map(|r| (t(r.frame), r.fatigue))
            .collect(),
        width: 2,
    }];
    let labels: Vec<String> = names.iter().map(|n| format!("unit {n}, wF")).collect();
    for (i, (name, text)) in names.iter().zip(&labels).enumerate() {
        curves.push(Curve {
            key: Key {
                text,
                colour: UNIT_COLOURS[i % UNIT_COLOURS.len()],
                dashed: false,
            },
            points: report
                .rows
                .iter()
                .map(|r| {
                    let w = r.units.iter().find(|u| u.0 == *name).map_or(0.0, |u| u.3);
                    (t(r.frame), w)
                })
                .collect(),
            width: 3,
        });
    }
    let top = curves
        .iter()
        .flat_map(|c| c.points.iter().map(|p| p.1))
        .fold(1.0f32, f32::max);
    let t_end = report.rows.last().map_or(1.0, |r| t(r.frame)).max(1e-3);
    let axes = Axes {
        title: "mixer weights",
        x_name: "time (s)",
        y_name: "weight (0 to 1)",
        x: 0.0..t_end,
        y: 0.0..top * 1.05,
        decimals: (1, 1),
    };
    let chart_height = 320;
    let (w, h) = (labelled.width(), labelled.height() + chart_height);
    chart::canvas(w, h, &[(&labelled, (0, 0))], |root| {
        let (_, below) = root.split_vertically(labelled.height());
        chart::line_chart(&below, &axes, &curves)
    })
}

/// Arguments of `sinew mix`.
#[derive(clap::Args, Debug, Clone)]
pub struct MixArgs {
    /// glTF/GLB, BVH or ozz files (clips of one skeleton); none: the procedural humanoid.
    pub files: Vec<std::path::PathBuf>,
    /// Resample clips to this rate in Hz (the mixer steps one frame per clip frame).
    #[arg(long)]
    pub rate: Option<f32>,
    /// Scale applied to BVH lengths.
    #[arg(long, default_value_t = 0.01)]
    pub bvh_scale: f32,
    /// Memory budget of each file's import, in MiB (see `sinew inspect --help`).
    #[arg(long, value_name = "MIB", default_value_t = DEFAULT_MEMORY_BUDGET_MIB, value_parser = memory_budget_range())]
    pub memory_budget: u64,
    /// Frames to run.
    #[arg(long, default_value_t = 90, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub frames: u32,
    /// Print every Nth frame.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub every: u32,
    /// Mix rotations as ZXY joint angles instead of quaternions.
    #[arg(long)]
    pub angles: bool,
    /// Smooth the output with the quadratic B-spline at u = 0.75.
    #[arg(long)]
    pub smooth: bool,
    /// Joint whose subtree gets priority 1 in the added unit (0.1 elsewhere); files only.
    #[arg(long)]
    pub focus: Option<String>,
    /// Also draw the mixed output as a filmstrip PNG.
    #[arg(short, long)]
    pub output: Option<std::path::PathBuf>,
    /// Cells of the filmstrip.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub cells: u32,
}

/// Arguments of `sinew plot`.
#[derive(clap::Args, Debug, Clone)]
pub struct PlotArgs {
    /// glTF/GLB, BVH or ozz files; none: the procedural humanoid.
    pub files: Vec<std::path::PathBuf>,
    /// Resample clips to this rate in Hz.
    #[arg(long)]
    pub rate: Option<f32>,
    /// Scale applied to BVH lengths.
    #[arg(long, default_value_t = 0.01)]
    pub bvh_scale: f32,
    /// Memory budget of each file's import, in MiB (see `sinew inspect --help`).
    #[arg(long, value_name = "MIB", default_value_t = DEFAULT_MEMORY_BUDGET_MIB, value_parser = memory_budget_range())]
    pub memory_budget: u64,
    /// Clip playing before the switch (default: walk, or the first clip).
    #[arg(long)]
    pub from: Option<String>,
    /// Clip after the switch (default: run, or the second clip).
    #[arg(long)]
    pub to: Option<String>,
    /// Joint whose pitch (ZXY θx) is charted (default: the left thigh).
    #[arg(long)]
    pub joint: Option<String>,
    /// Time of the switch in seconds.
    #[arg(long, default_value_t = 0.3)]
    pub switch: f32,
    /// Cross-fade / inertialization time T in seconds.
    #[arg(long, default_value_t = 0.3)]
    pub blend: f32,
    /// Chart length in seconds.
    #[arg(long, default_value_t = 1.5)]
    pub seconds: f32,
    /// Output PNG.
    #[arg(short, long, required_unless_present = "list")]
    pub output: Option<std::path::PathBuf>,
    /// Chart keyframe curves instead of a transition: the animation
    /// channels of a glTF/GLB file or the tracks of an ozz track archive,
    /// as the file holds them (keys, CUBICSPLINE tangents, the curve
    /// sampled densely). Without FILE: a built-in CUBICSPLINE and STEP
    /// example.
    #[arg(long, value_name = "FILE", num_args = 0..=1)]
    pub curve: Option<Option<std::path::PathBuf>>,
    /// With --curve FILE: the curve to draw, `<node name or index>/<path>`
    /// (path: translation, rotation, scale, `weights/<target>`) or an ozz
    /// track's name or index, optionally `/<component>` (x, y, z, w or an index).
    #[arg(long, requires = "curve")]
    pub channel: Option<String>,
    /// With --curve FILE: the glTF animation (name or index) to take the
    /// channel from (default: the first that has it).
    #[arg(long, requires = "curve")]
    pub animation: Option<String>,
    /// With --curve: list the curves (per animation) instead of drawing.
    #[arg(long, requires = "curve")]
    pub list: bool,
}

/// `--memory-budget`'s default, in MiB: the importers' own
/// ([`sinew_std::import::DEFAULT_MEMORY_BUDGET`]).
pub const DEFAULT_MEMORY_BUDGET_MIB: u64 = (sinew_std::import::DEFAULT_MEMORY_BUDGET >> 20) as u64;

/// The values `--memory-budget` accepts, in MiB: 1 MiB to 16 TiB.
#[must_use]
pub fn memory_budget_range() -> clap::builder::RangedU64ValueParser<u64> {
    clap::value_parser!(u64).range(1..=1 << 24)
}

/// A `--memory-budget` in MiB as bytes (saturating where `usize` is narrower).
#[must_use]
pub fn memory_budget_bytes(mib: u64) -> usize {
    usize::try_from(mib.saturating_mul(1 << 20)).unwrap_or(usize::MAX)
}

fn load(
    files: &[std::path::PathBuf],
    rate: Option<f32>,
    bvh_scale: f32,
    memory_budget: u64,
) -> Res<(OwnedSkeleton, Vec<OwnedClip>, String, Vec<String>)> {
    if let Some(r) = rate {
        if !(r.is_finite() && r > 0.0 && r <= 10_000.0) {
            return Err("--rate must be a rate in Hz in (0, 10000]".into());
        }
    }
    if !(bvh_scale.is_finite() && bvh_scale > 0.0) {
        return Err("--bvh-scale must be > 0".into());
    }
    if files.is_empty() {
        let h = match rate {
            Some(r) => Humanoid::new(r)?,
            None => Humanoid::default_rate(),
        };
        return Ok((
            h.skeleton,
            h.clips.to_vec(),
            "procedural humanoid".into(),
            Vec::new(),
        ));
    }
    let opts = sinew_std::import::load::LoadOptions {
        sample_rate: rate,
        bvh_scale,
        memory_budget: memory_budget_bytes(memory_budget),
        ..Default::default()
    };
    let assets = sinew_std::import::load::load_files(files, &opts)?;
    let first = assets.first().ok_or("no asset loaded")?;
    let skeleton = first.skeleton.clone();
    let mut clips = Vec::new();
    let mut notes = Vec::new();
    for a in &assets {
        if a.skeleton.bytes() == skeleton.bytes() {
            clips.extend(a.clips.iter().cloned());
        } else {
            notes.push(format!(
                "{}: skeleton differs from {}, its clips are skipped",
                a.source.display(),
                first.source.display()
            ));
        }
    }
    if clips.is_empty() {
        return Err(format!("{}: no clips", first.source.display()).into());
    }
    // The mixer steps one clip frame per frame: bring every clip to one rate
    // (BVH keeps its own rate on import).
    let target = rate.unwrap_or(clips[0].sample_rate());
    for c in &mut clips {
        if (c.sample_rate() - target).abs() > 1e-3 * target {
            *c = resample(c, target)?;
        }
    }
    Ok((skeleton, clips, first.source.display().to_string(), notes))
}

/// `clip` sampled at `rate` Hz over its whole duration.
///
/// # Errors
/// Any core error.
pub fn resample(clip: &OwnedClip, rate: f32) -> Res<OwnedClip> {
    let view = clip.view();
    let n = view.soa_count();
    let frames = (view.duration() * rate).round() as usize + 1;
    let mut keys = vec![SoaTransform::IDENTITY; frames * n];
    for (f, out) in keys.chunks_exact_mut(n).enumerate() {
        let t = (f as f32 / rate).min(view.duration());
        view.sample(t, TimeMode::Clamp, out)?;
    }
    Ok(OwnedClip::new(clip.name.clone(), rate, n, keys)?)
}

/// `sinew mix`: runs the mixer demo and prints a table (and a filmstrip with `-o`).
///
/// # Errors
/// Loading, an unknown `--focus` joint, any core error, writing the PNG.
pub fn mix_command(args: &MixArgs, out: &dyn Fn(&str)) -> Res<()> {
    let frames = args.frames as usize;
    let (skeleton, mut clips, source, notes) =
        load(&args.files, args.rate, args.bvh_scale, args.memory_budget)?;
    for n in &notes {
        out(&format!("note: {n}"));
    }
    let mut root_lines = Vec::new();
    let plan = if args.files.is_empty() {
        let h = Humanoid {
            skeleton: skeleton.clone(),
            clips: [clips[0].clone(), clips[1].clone(), clips[2].clone()],
        };
        let (c, plan) = humanoid_plan(&h, frames)?;
        clips = c;
        plan
    } else {
        // Mix in place: strip each clip's root motion (reported), so the
        // clips' different paths through the world do not fight.
        for c in &mut clips {
            let view = c.view();
            let m = root_motion::root_motion(&view, 0, 0.0, view.duration(), &[], &mut [])?;
            root_lines.push(format!(
                "  root motion of {}: {:.2} m forward, {:.2} m sideways, {:.0}° turn over {:.2} s (removed: clips mix in place)",
                c.name,
                m.translation.z,
                m.translation.x,
                m.yaw.to_degrees(),
                view.duration()
            ));
            let mut keys = c.keys().to_vec();
            root_motion::make_in_place(&mut keys, view.soa_count(), 0)?;
            *c = OwnedClip::new(c.name.clone(), c.sample_rate(), view.soa_count(), keys)?;
        }
        file_plan(&skeleton.view(), &clips, frames, args.focus.as_deref())?
    };
    let mode = if args.angles {
        MixMode::JointAngles
    } else {
        MixMode::Quaternion
    };
    let skel = skeleton.view();
    out(&format!(
        "sinew mix: {source} ({} joints), {frames} frames at {:.1} Hz, {} mixing{}",
        skel.joint_count(),
        clips[0].sample_rate(),
        if args.angles {
            "joint-angle"
        } else {
            "quaternion"
        },
        if args.smooth {
            ", B-spline smoothing"
        } else {
            ""
        }
    ));
    out(&format!(
        "  idle: {} (loops, lowest priority)   fatigue: {} (loops, weight rises 0 -> 1)",
        clips[plan.idle].name, clips[plan.fatigue].name
    ));
    for u in &plan.units {
        out(&format!(
            "  unit: {} from frame {} for {} frames, ramp {:?}{}",
            u.name,
            u.at,
            u.length,
            u.ramp,
            if u.priorities.is_some() {
                ", per-joint priorities"
            } else {
                ""
            }
        ));
    }
    for l in &root_lines {
        out(l);
    }
    let report = run_mix(&skeleton, &clips, &plan, mode, args.smooth)?;
    let names: Vec<String> = plan
        .tracked
        .iter()
        .map(|&j| skel.joint_name(j).unwrap_or("?").to_string())
        .collect();
    out("");
    out(&format!(
        "{:>6} {:>7}  {:<44} {}",
        "frame",
        "fatigue",
        "running units (cursor/length wF)",
        names
            .iter()
            .map(|n| format!("{:>13}", format!("{n} θx")))
            .collect::<Vec<_>>()
            .join(" ")
    ));
    for r in report
        .rows
        .iter()
        .filter(|r| r.frame % args.every as usize == 0 || r.frame + 1 == frames)
    {
        let units = if r.units.is_empty() {
            "(idle)".to_string()
        } else {
            r.units
                .iter()
                .map(|(n, c, l, w)| format!("{n} {c}/{l} {w:.2}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        out(&format!(
            "{:>6} {:>7.2}  {:<44} {}",
            r.frame,
            r.fatigue,
            units,
            r.angles
                .iter()
                .map(|a| format!("{a:>12.1}°"))
                .collect::<Vec<_>>()
                .join(" ")
        ));
    }
    if let Some(path) = &args.output {
        let opts = crate::render::FilmstripOptions {
            frames: args.cells as usize,
            ..crate::render::FilmstripOptions::default()
        };
        let output = report.output.view();
        let strip = crate::render::filmstrip(&skel, &output, &opts)?;
        let title = format!(
            "sinew mix: {source}, {} mixing, {frames} frames at {:.0} Hz",
            if args.angles {
                "joint-angle"
            } else {
                "quaternion"
            },
            clips[0].sample_rate()
        );
        let times = chart::cell_times(output.duration(), opts.frames);
        let png = draw_mix(&strip, &times, &title, &report, clips[0].sample_rate())?;
        png.save_png(path)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        out(&format!(
            "wrote {} ({} poses of the mixed output and its weights, {}x{} px)",
            path.display(),
            args.cells,
            png.width(),
            png.height()
        ));
    }
    Ok(())
}

/// `sinew plot`: charts one joint across a transition and writes a PNG.
///
/// # Errors
/// Loading, unknown clip or joint names, any core error, writing the PNG.
pub fn plot_command(args: &PlotArgs, out: &dyn Fn(&str)) -> Res<()> {
    if let Some(file) = &args.curve {
        let req = crate::curves::CurveRequest {
            file: file.as_deref(),
            channel: args.channel.as_deref(),
            animation: args.animation.as_deref(),
            list: args.list,
            output: args.output.as_ref(),
        };
        return crate::curves::plot_curve_command(&req, out);
    }
    let output = args
        .output
        .as_ref()
        .ok_or("plot needs -o/--output for the PNG")?;
    let (skeleton, clips, source, _) =
        load(&args.files, args.rate, args.bvh_scale, args.memory_budget)?;
    let skel = skeleton.view();
    let find = |name: &Option<String>, default: &str, fallback: usize| -> Res<usize> {
        let known = || {
            clips
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        match name {
            Some(n) => clips
                .iter()
                .position(|c| &c.name == n)
                .ok_or_else(|| format!("no clip named {n:?} (clips: {})", known()).into()),
            None => Ok(clips
                .iter()
                .position(|c| c.name == default)
                .unwrap_or(fallback.min(clips.len() - 1))),
        }
    };
    let from = find(&args.from, "walk", 0)?;
    let to = find(&args.to, "run", 1)?;
    let joint = match &args.joint {
        Some(n) => skel
            .find_joint(n)
            .ok_or_else(|| format!("no joint named {n:?}"))?,
        None => ["thigh_l", "LeftUpLeg", "LeftHip", "lThigh"]
            .iter()
            .find_map(|n| skel.find_joint(n))
            .or_else(|| {
                (0..skel.joint_count()).find(|&j| {
                    skel.joint_name(j).is_some_and(|n| {
                        let n = n.to_ascii_lowercase();
                        n.contains("thigh") || n.contains("upleg") || n.contains("leg")
                    })
                })
            })
            .unwrap_or(1.min(skel.joint_count() - 1)),
    };
    for (v, what) in [
        (args.switch, "--switch"),
        (args.blend, "--blend"),
        (args.seconds, "--seconds"),
    ] {
        if !(v.is_finite() && v > 0.0 && v <= 3600.0) {
            return Err(format!("{what} must be a number of seconds in (0, 3600]").into());
        }
    }
    let opts = PlotOptions {
        switch: args.switch,
        blend: args.blend,
        seconds: args.seconds,
        ..PlotOptions::default()
    };
    let c = transition_curves(&skel, &clips[from].view(), &clips[to].view(), joint, &opts)?;
    let jn = skel.joint_name(joint).unwrap_or("?");
    let title = format!(
        "{jn} pitch, {:?} to {:?} at {} s, T = {} s ({source})",
        clips[from].name, clips[to].name, args.switch, args.blend
    );
    let png = draw_curves(&c, &opts, &title)?;
    png.save_png(output)
        .map_err(|e| format!("cannot write {}: {e}", output.display()))?;
    out(&format!(
        "wrote {} ({source}: {jn} pitch, {:?} -> {:?} at {} s, T = {} s, {}x{} px)",
        output.display(),
        clips[from].name,
        clips[to].name,
        args.switch,
        args.blend,
        png.width(),
        png.height()
    ));
    out(&format!(
        "curves: {}",
        CURVE_COLOURS.map(|(n, _)| n).join(", ")
    ));
    out(&format!(
        "slope change at the switch: hard cut {:.0} deg/s, cross-fade {:.0} deg/s, inertialization {:.0} deg/s",
        jump_at(&c.times, &c.old, &c.new, args.switch),
        max_slope_jump(&c.times, &c.crossfade, args.switch),
        max_slope_jump(&c.times, &c.inertialized, args.switch)
    ));
    Ok(())
}

/// Slope change at the switch if the output cut straight from `old` to `new`.
fn jump_at(times: &[f32], old: &[f32], new: &[f32], switch: f32) -> f32 {
    let cut: Vec<f32> = times
        .iter()
        .zip(old.iter().zip(new))
        .map(|(&t, (&o, &n))| if t < switch { o } else { n })
        .collect();
    max_slope_jump(times, &cut, switch)
}
