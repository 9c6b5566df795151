//! `sinew plot --curve`: keyframe curves as a PNG chart — a glTF channel
//! or an ozz track as the file holds it (no resampling), its keys as dots,
//! CUBICSPLINE tangents as short segments, and the curve sampled densely,
//! one line per component.

use std::error::Error as StdError;
use std::path::{Path, PathBuf};

use plotters::style::RGBColor;
use sinew_core::track::curve::Interpolation;
use sinew_std::import::curves::{load_gltf_curves, CurveData, OwnedCurve};
use sinew_std::import::ozz::{load_tracks, TrackOptions};
use tiny_skia::Pixmap;

use crate::chart::{self, Axes, Curve, Key, Marks};

type Res<T> = Result<T, Box<dyn StdError>>;

/// `(time, value)` points of a line.
type Points = Vec<(f32, f32)>;

/// Samples drawn across the chart.
const SAMPLES: usize = 600;

/// Most channel names an error lists before pointing at `--list`.
const LISTED: usize = 24;

/// One curve that can be drawn: where it comes from and its keys.
#[derive(Clone, Debug)]
pub struct NamedCurve {
    /// `<node name>/<path>` (glTF) or the track name (ozz).
    pub label: String,
    /// `<node index>/<path>` (glTF) or the track index (ozz): the other
    /// name `--channel` accepts.
    pub alias: String,
    /// The glTF animation it belongs to: index and name (`None` for ozz
    /// tracks and the example).
    pub animation: Option<(usize, String)>,
    /// What it belongs to, for people: `animation 0 "Walk"`, `ozz tracks`.
    pub group: String,
    /// The keys.
    pub curve: CurveData,
}

/// Every curve of `path`: the channels of every glTF animation, or the
/// tracks of an ozz track archive (key times as ratios of the track).
///
/// # Errors
/// The file's import error.
pub fn curves_of(path: &Path) -> Res<Vec<NamedCurve>> {
    let ozz = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("ozz"));
    if ozz {
        let tracks = load_tracks(path, &TrackOptions::default())?;
        return Ok(tracks
            .into_iter()
            .enumerate()
            .map(|(i, t)| NamedCurve {
                label: if t.name.is_empty() {
                    i.to_string()
                } else {
                    t.name
                },
                alias: i.to_string(),
                animation: None,
                group: "ozz tracks".into(),
                curve: t.curve,
            })
            .collect());
    }
    let mut out = Vec::new();
    for a in load_gltf_curves(path)? {
        for c in a.channels {
            out.push(NamedCurve {
                label: c.label(),
                alias: format!("{}/{}", c.node, c.path),
                animation: Some((a.index, a.name.clone())),
                group: format!("animation {} {:?}", a.index, a.name),
                curve: c.curve,
            });
        }
    }
    Ok(out)
}

/// The built-in example: a CUBICSPLINE curve with uneven key times and
/// tangents, and a STEP curve over the same span.
#[must_use]
pub fn example() -> Vec<NamedCurve> {
    let times = vec![0.0, 0.5, 1.25, 2.0];
    // In-tangent, value, out-tangent per key (per second).
    let cubic = vec![
        0.0, 0.0, 2.0, //
        1.0, 1.0, -1.0, //
        -2.0, -0.5, 0.5, //
        1.5, 0.75, 0.0,
    ];
    let curve = |values: Vec<f32>, interpolation| {
        OwnedCurve::new(times.clone(), values, interpolation)
            .map(CurveData::Float)
            .map_err(|e| e.to_string())
    };
    let built = [
        ("example/cubic", curve(cubic, Interpolation::CubicSpline)),
        (
            "example/step",
            curve(vec![-0.25, 0.5, 0.25, -0.5], Interpolation::Step),
        ),
    ];
    built
        .into_iter()
        .enumerate()
        .filter_map(|(i, (label, c))| {
            c.ok().map(|curve| NamedCurve {
                label: label.into(),
                alias: i.to_string(),
                animation: None,
                group: "built-in example".into(),
                curve,
            })
        })
        .collect()
}

/// Component names of an `n`-component curve.
fn component_names(n: usize) -> &'static [&'static str] {
    match n {
        1 => &["value"],
        2 => &["x", "y"],
        3 => &["x", "y", "z"],
        _ => &["x", "y", "z", "w"],
    }
}

/// The curves `channel` names among `all` (in `animation` when given), and
/// the component it asks for: `<label or alias>[/<component>]`, the
/// component `x`, `y`, `z`, `w` or its index.
///
/// # Errors
/// No such curve or component: one line naming what is available.
pub fn select<'a>(
    all: &'a [NamedCurve],
    channel: &str,
    animation: Option<&str>,
    file: &Path,
) -> Res<(&'a NamedCurve, Option<usize>)> {
    let in_group = |c: &&NamedCurve| match (animation, &c.animation) {
        (None, _) => true,
        (Some(a), Some((i, name))) => a == name || a.parse::<usize>().ok() == Some(*i),
        (Some(_), None) => false,
    };
    let candidates: Vec<&NamedCurve> = all.iter().filter(in_group).collect();
    if candidates.is_empty() {
        return Err(format!(
            "no animation {:?} in {} with curves",
            animation.unwrap_or_default(),
            file.display()
        )
        .into());
    }
    for c in &candidates {
        for name in [&c.label, &c.alias] {
            if channel == name {
                return Ok((c, None));
            }
            let Some(rest) = channel
                .strip_prefix(name.as_str())
                .and_then(|r| r.strip_prefix('/'))
            else {
                continue;
            };
            let names = component_names(c.curve.components());
            let k = names
                .iter()
                .position(|n| *n == rest)
                .or_else(|| rest.parse::<usize>().ok().filter(|&k| k < names.len()));
            return match k {
                Some(k) => Ok((c, Some(k))),
                None => Err(format!(
                    "{name} has no component {rest:?} (components: {})",
                    names.join(", ")
                )
                .into()),
            };
        }
    }
    Err(format!(
        "no curve {channel:?} in {} (channels: {})",
        file.display(),
        channel_list(&candidates)
    )
    .into())
}

/// The distinct labels of `curves`, comma-separated, the first [`LISTED`]
/// of them.
fn channel_list(curves: &[&NamedCurve]) -> String {
    let mut labels: Vec<&str> = Vec::new();
    for c in curves {
        if !labels.contains(&c.label.as_str()) {
            labels.push(&c.label);
        }
    }
    let more = labels.len().saturating_sub(LISTED);
    labels.truncate(LISTED);
    let tail = if more > 0 {
        format!(", and {more} more; --list shows them all")
    } else {
        String::new()
    };
    format!("{}{tail}", labels.join(", "))
}

/// Line colours of components x, y, z, w (or a single value).
const COLOURS: [RGBColor; 4] = [
    RGBColor(210, 60, 50),
    RGBColor(40, 150, 70),
    RGBColor(50, 100, 220),
    RGBColor(120, 90, 160),
];

/// Colours of the second curve's components (the example's STEP curve).
const SECOND: [RGBColor; 4] = [
    RGBColor(235, 140, 30),
    RGBColor(20, 160, 170),
    RGBColor(190, 150, 20),
    RGBColor(90, 90, 90),
];

/// One curve's component to draw.
pub struct Drawn<'a> {
    /// Which curve.
    pub curve: &'a NamedCurve,
    /// Which components (indices).
    pub components: Vec<usize>,
}

/// Draws the components of `drawn` over their common key span as a
/// `width` x `height` PNG titled `title`: each sampled densely as a line,
/// its keys as dots, and CUBICSPLINE tangents as segments a third of the
/// neighbouring key interval long (the Bézier handles of the Hermite
/// segment).
///
/// # Errors
/// Nothing to draw, or a drawing error.
pub fn draw(drawn: &[Drawn<'_>], title: &str, (width, height): (u32, u32)) -> Res<Pixmap> {
    let (mut t0, mut t1) = (f32::MAX, f32::MIN);
    for d in drawn {
        let times = d.curve.curve.times();
        t0 = t0.min(times[0]);
        t1 = t1.max(times[times.len() - 1]);
    }
    if !(t0.is_finite() && t1.is_finite()) {
        return Err("no curve to draw".into());
    }
    let span = (t1 - t0).max(1e-3);
    let (x0, x1) = (t0 - 0.04 * span, t1 + 0.04 * span);
    let mut texts: Vec<String> = Vec::new();
    // Per drawn component: its legend text's index, colour and points.
    let mut lines: Vec<(usize, RGBColor, Points)> = Vec::new();
    let mut dots = Vec::new();
    let mut handles = Vec::new();
    for (i, d) in drawn.iter().enumerate() {
        let c = &d.curve.curve;
        let names = component_names(c.components());
        let palette = if i == 0 { COLOURS } else { SECOND };
        let times = c.times();
        let samples: Vec<(f32, [f32; 4])> = (0..=SAMPLES)
            .map(|s| {
                let t = x0 + (x1 - x0) * s as f32 / SAMPLES as f32;
                (t, c.sample(t))
            })
            .collect();
        for &k in &d.components {
            let colour = palette[k % 4];
            let name = names.get(k).copied().unwrap_or("?");
            let text = if drawn.len() > 1 || c.components() > 1 {
                format!("{} {name} ({:?})", d.curve.label, c.interpolation())
            } else {
                format!("{} ({:?})", d.curve.label, c.interpolation())
            };
            texts.push(text);
            lines.push((
                texts.len() - 1,
                colour,
                samples.iter().map(|(t, v)| (*t, v[k])).collect(),
            ));
            for (j, &t) in times.iter().enumerate() {
                let Some(v) = c.key(j) else { continue };
                dots.push((t, v[k]));
                if let Some((a, b)) = c.tangents(j) {
                    let before = j
                        .checked_sub(1)
                        .map_or(span / 20.0, |p| (t - times[p]) / 3.0);
                    let after = times.get(j + 1).map_or(span / 20.0, |n| (n - t) / 3.0);
                    handles.push([(t - before, v[k] - before * a[k]), (t, v[k])]);
                    handles.push([(t, v[k]), (t + after, v[k] + after * b[k])]);
                }
            }
        }
    }
    let ys = lines
        .iter()
        .flat_map(|(_, _, p)| p.iter().map(|q| q.1))
        .chain(dots.iter().map(|d| d.1))
        .chain(handles.iter().flat_map(|h| [h[0].1, h[1].1]));
    let (mut lo, mut hi) = ys.fold((f32::MAX, f32::MIN), |(l, h), v| (l.min(v), h.max(v)));
    if !(lo.is_finite() && hi.is_finite()) || hi - lo < 1e-3 {
        let m = if lo.is_finite() { (lo + hi) * 0.5 } else { 0.0 };
        (lo, hi) = (m - 0.5, m + 0.5);
    }
    let pad = (hi - lo) * 0.08;
    let curves: Vec<Curve<'_>> = lines
        .into_iter()
        .map(|(i, colour, points)| Curve {
            key: Key {
                text: &texts[i],
                colour,
                dashed: false,
            },
            points,
            width: 2,
        })
        .collect();
    let ink = chart::INK;
    let mut marks = vec![Marks {
        key: Key {
            text: "keys",
            colour: ink,
            dashed: false,
        },
        points: dots,
        segments: Vec::new(),
    }];
    if !handles.is_empty() {
        marks.push(Marks {
            key: Key {
                text: "tangents (in, out; ⅓ interval)",
                colour: RGBColor(150, 150, 150),
                dashed: false,
            },
            points: Vec::new(),
            segments: handles,
        });
    }
    let axes = Axes {
        title,
        x_name: "time (s; ratio for ozz tracks)",
        y_name: "value",
        x: x0..x1,
        y: lo - pad..hi + pad,
        decimals: (2, 2),
    };
    let (w, h) = (width.clamp(400, 4096), height.clamp(200, 4096));
    chart::canvas(w, h, &[], |root| {
        chart::line_chart_with_marks(root, &axes, &curves, &marks)
    })
}

/// What `sinew plot --curve` was asked.
pub struct CurveRequest<'a> {
    /// The file, or `None` for the built-in example.
    pub file: Option<&'a Path>,
    /// `--channel`.
    pub channel: Option<&'a str>,
    /// `--animation`.
    pub animation: Option<&'a str>,
    /// `--list`.
    pub list: bool,
    /// `-o`.
    pub output: Option<&'a PathBuf>,
}

/// `sinew plot --curve`: lists or draws curves; see [`CurveRequest`].
///
/// # Errors
/// Loading, an unknown channel or component (one line naming the
/// available ones), a missing `-o`, writing the PNG.
pub fn plot_curve_command(req: &CurveRequest<'_>, out: &dyn Fn(&str)) -> Res<()> {
    let (all, source) = match req.file {
        Some(f) => (curves_of(f)?, f.display().to_string()),
        None => (example(), "built-in example".to_string()),
    };
    if req.list {
        let mut group = "";
        for c in &all {
            if c.group != group {
                group = &c.group;
                out(group);
            }
            out(&format!(
                "  {:<32} {:>6} keys  {:?}, {} component{}",
                c.label,
                c.curve.times().len(),
                c.curve.interpolation(),
                c.curve.components(),
                if c.curve.components() == 1 { "" } else { "s" }
            ));
        }
        if all.is_empty() {
            out(&format!("{source}: no curves"));
        }
        return Ok(());
    }
    let output = req.output.ok_or("plot needs -o/--output for the PNG")?;
    let file = req.file.unwrap_or(Path::new("built-in example"));
    let drawn: Vec<Drawn<'_>> = match (req.channel, req.file) {
        (Some(ch), _) => {
            let (c, k) = select(&all, ch, req.animation, file)?;
            vec![Drawn {
                curve: c,
                components: k.map_or_else(|| (0..c.curve.components()).collect(), |k| vec![k]),
            }]
        }
        (None, None) => all
            .iter()
            .map(|c| Drawn {
                curve: c,
                components: (0..c.curve.components()).collect(),
            })
            .collect(),
        (None, Some(_)) => {
            let all: Vec<&NamedCurve> = all.iter().collect();
            return Err(format!(
                "--curve {} needs --channel (channels: {})",
                file.display(),
                channel_list(&all)
            )
            .into());
        }
    };
    let first = drawn.first().ok_or("no curve to draw")?;
    let title = if drawn.len() == 1 {
        format!(
            "{} ({}) from {source}: {} keys, {:?}",
            first.curve.label,
            first.curve.group,
            first.curve.curve.times().len(),
            first.curve.curve.interpolation()
        )
    } else {
        format!("{source}: a CUBICSPLINE and a STEP curve, keys and tangents")
    };
    let png = draw(&drawn, &title, (1000, 460))?;
    png.save_png(output)
        .map_err(|e| format!("cannot write {}: {e}", output.display()))?;
    let labels: Vec<&str> = drawn.iter().map(|d| d.curve.label.as_str()).collect();
    out(&format!(
        "wrote {} ({source}: {}, {}x{} px)",
        output.display(),
        labels.join(" and "),
        png.width(),
        png.height()
    ));
    Ok(())
}
