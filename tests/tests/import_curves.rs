//! Curves kept as curves: glTF animation channels (`sinew_std::import::curves`)
//! and ozz float / quaternion tracks (`sinew_std::import::ozz::load_tracks`).
//! Validity first (every malformed input gives a precise error at the right
//! place), then the values against an independent evaluation of the glTF
//! specification's formulas and against ozz's own sampler, then the real
//! files under `../shared/data/gltf`.

// Key `k`, target `t` and component `c` index several tables at once.
#![allow(clippy::needless_range_loop)]

#[path = "../support/mod.rs"]
mod support;
use support::gltf::Doc;

use std::path::{Path, PathBuf};

use sinew_core::track::curve::Interpolation;
use sinew_core::Quat;
use sinew_std::import::curves::{
    gltf_curves_from_slice, load_gltf_curves, AnimationCurves, ChannelCurve, ChannelPath,
    CurveData, CurveOptions,
};
use sinew_std::import::ozz::{tracks_from_slice, OzzTrack, TrackKind, TrackOptions};
use sinew_std::{ImportError, Location};

fn import(json: &str) -> Result<Vec<AnimationCurves>, ImportError> {
    gltf_curves_from_slice(
        json.as_bytes(),
        Path::new("test.gltf"),
        None,
        &CurveOptions::default(),
    )
}

fn import_ok(json: &str) -> Vec<AnimationCurves> {
    import(json).unwrap_or_else(|e| panic!("import failed: {e}\n{json}"))
}

fn assert_err(json: &str, location: &str, words: &[&str]) {
    let e = match import(json) {
        Ok(_) => panic!("import unexpectedly succeeded:\n{json}"),
        Err(e) => e,
    };
    assert_eq!(
        e.location,
        Location::JsonPath(location.to_string()),
        "wrong location for: {e}"
    );
    for w in words {
        assert!(
            e.message.to_lowercase().contains(&w.to_lowercase()),
            "message {:?} does not mention {w:?}",
            e.message
        );
    }
    assert_eq!(e.file, PathBuf::from("test.gltf"));
}

/// A sampler and its channel: input and output accessors, interpolation,
/// target node and path.
type Sampler<'a> = (usize, usize, &'a str, usize, &'a str);

/// Node 0 `mover`, node 1 `face` (a mesh with two morph targets), and one
/// animation per `(name, [(sampler input, output, interpolation, node, path)])`.
fn document(doc: &mut Doc, animations: &[(&str, Vec<Sampler<'_>>)]) -> String {
    let position = doc.f32s(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0], "VEC3");
    let anims: Vec<String> = animations
        .iter()
        .map(|(name, channels)| {
            let samplers: Vec<String> = channels
                .iter()
                .map(|(i, o, interp, _, _)| {
                    format!(r#"{{"input":{i},"output":{o},"interpolation":"{interp}"}}"#)
                })
                .collect();
            let chans: Vec<String> = channels
                .iter()
                .enumerate()
                .map(|(s, (_, _, _, node, path))| {
                    format!(r#"{{"sampler":{s},"target":{{"node":{node},"path":"{path}"}}}}"#)
                })
                .collect();
            format!(
                r#"{{"name":"{name}","channels":[{}],"samplers":[{}]}}"#,
                chans.join(","),
                samplers.join(",")
            )
        })
        .collect();
    doc.json(&format!(
        r#""nodes":[{{"name":"mover"}},{{"name":"face","mesh":0}}],
"meshes":[{{"weights":[0,0],"primitives":[{{"attributes":{{"POSITION":{position}}}}}]}}],
"animations":[{}]"#,
        anims.join(",")
    ))
}

/// A document with one animation `a` of one channel: key `times`, values
/// of glTF type `ty` interpolated as `interp`, on `path` of node `node`.
/// The JSON and the indices of the times' and the values' accessors.
fn one_channel(
    times: &[f32],
    values: &[f32],
    ty: &str,
    interp: &str,
    node: usize,
    path: &str,
) -> (String, usize, usize) {
    let mut doc = Doc::default();
    let t = doc.f32s(times, "SCALAR");
    let v = doc.f32s(values, ty);
    let json = document(&mut doc, &[("a", vec![(t, v, interp, node, path)])]);
    (json, t, v)
}

// Keys shared by the three interpolations: non-uniform times.
const TIMES: [f32; 4] = [0.0, 0.4, 1.0, 1.5];
const TRANSLATIONS: [[f32; 3]; 4] = [
    [0.0, 1.0, -0.5],
    [0.5, 0.25, 0.0],
    [-0.75, 0.5, 1.0],
    [0.25, -1.0, 0.5],
];
const ROTATIONS: [[f32; 4]; 4] = [
    [0.0, 0.0, 0.0, 1.0],
    [0.0, 0.382_683_43, 0.0, 0.923_879_5],
    [0.5, 0.5, -0.5, 0.5],
    [
        -0.270_598_05,
        0.0,
        0.653_281_5,
        std::f32::consts::FRAC_1_SQRT_2,
    ],
];
/// Two morph weights per key.
const WEIGHTS: [[f32; 2]; 4] = [[0.0, 1.0], [0.5, 0.25], [1.0, 0.0], [0.25, 0.75]];

/// `keys` as CUBICSPLINE triplets: in-tangent, value, out-tangent per key,
/// with tangents that differ from key to key and between in and out.
fn triplets<const N: usize>(keys: &[[f32; N]]) -> Vec<[f32; N]> {
    let mut out = Vec::new();
    for (k, v) in keys.iter().enumerate() {
        let a: [f32; N] = std::array::from_fn(|i| 0.3 * (k as f32 + 1.0) - 0.2 * i as f32);
        let b: [f32; N] = std::array::from_fn(|i| -0.4 + 0.25 * (k + i) as f32);
        out.extend([a, *v, b]);
    }
    out
}

fn flat<const N: usize>(rows: &[[f32; N]]) -> Vec<f32> {
    rows.iter().flatten().copied().collect()
}

/// Animations "cubic", "linear" and "step", each with a translation and a
/// rotation channel on `mover` and a weights channel on `face`.
fn three_interpolations() -> String {
    let mut doc = Doc::default();
    let times = doc.f32s(&TIMES, "SCALAR");
    let mut anims = Vec::new();
    for (name, interp) in [
        ("cubic", "CUBICSPLINE"),
        ("linear", "LINEAR"),
        ("step", "STEP"),
    ] {
        let cubic = interp == "CUBICSPLINE";
        let (t, r, w) = if cubic {
            (
                flat(&triplets(&TRANSLATIONS)),
                flat(&triplets(&ROTATIONS)),
                flat(&triplets(&WEIGHTS)),
            )
        } else {
            (flat(&TRANSLATIONS), flat(&ROTATIONS), flat(&WEIGHTS))
        };
        let t = doc.f32s(&t, "VEC3");
        let r = doc.f32s(&r, "VEC4");
        let w = doc.f32s(&w, "SCALAR");
        anims.push((
            name,
            vec![
                (times, t, interp, 0, "translation"),
                (times, r, interp, 0, "rotation"),
                (times, w, interp, 1, "weights"),
            ],
        ));
    }
    document(&mut doc, &anims)
}

fn find(a: &AnimationCurves, path: ChannelPath) -> &ChannelCurve {
    a.channels
        .iter()
        .find(|c| c.path == path)
        .unwrap_or_else(|| panic!("no {path} curve in {:?}", a.name))
}

/// The glTF specification's CUBICSPLINE formula, in f64:
/// `p(t) = (2s³−3s²+1)p0 + (s³−2s²+s)·td·b0 + (−2s³+3s²)p1 + (s³−s²)·td·a1`.
fn spec_hermite(t0: f32, t1: f32, t: f32, p0: f32, b0: f32, p1: f32, a1: f32) -> f64 {
    let td = f64::from(t1) - f64::from(t0);
    let s = (f64::from(t) - f64::from(t0)) / td;
    let (s2, s3) = (s * s, s * s * s);
    (2.0 * s3 - 3.0 * s2 + 1.0) * f64::from(p0)
        + (s3 - 2.0 * s2 + s) * td * f64::from(b0)
        + (-2.0 * s3 + 3.0 * s2) * f64::from(p1)
        + (s3 - s2) * td * f64::from(a1)
}

/// Times strictly inside each key interval.
fn between() -> Vec<(usize, f32)> {
    let mut out = Vec::new();
    for k in 0..TIMES.len() - 1 {
        for f in [0.1f32, 0.37, 0.5, 0.81, 0.99] {
            out.push((k, TIMES[k] + f * (TIMES[k + 1] - TIMES[k])));
        }
    }
    out
}

// ---------------------------------------------------------------------------
// glTF: validity
// ---------------------------------------------------------------------------

#[test]
fn key_times_that_do_not_increase_strictly_are_refused() {
    let (json, times, _) = one_channel(
        &[0.0, 0.5, 0.5],
        &[0.0; 9],
        "VEC3",
        "LINEAR",
        0,
        "translation",
    );
    assert_err(
        &json,
        &format!("/accessors/{times}"),
        &["increase strictly", "key 2 at 0.5 s follows key 1 at 0.5 s"],
    );
}

#[test]
fn a_cubic_spline_count_not_a_multiple_of_3_is_refused() {
    let (json, _, _) = one_channel(
        &[0.0, 1.0],
        &[0.0; 15],
        "VEC3",
        "CUBICSPLINE",
        0,
        "translation",
    );
    assert_err(
        &json,
        "/animations/0/samplers/0/output",
        &["CUBICSPLINE output has 5 elements, not a multiple of 3"],
    );
    // A multiple of 3, but not 3 per key.
    let (json, _, _) = one_channel(
        &[0.0, 1.0],
        &[0.0; 9],
        "VEC3",
        "CUBICSPLINE",
        0,
        "translation",
    );
    assert_err(
        &json,
        "/animations/0/samplers/0/output",
        &["3 elements, expected 6 for 2 CubicSpline keys"],
    );
}

#[test]
fn weights_need_one_value_per_target_and_key() {
    let (json, _, _) = one_channel(&[0.0, 1.0], &[0.0; 3], "SCALAR", "LINEAR", 1, "weights");
    assert_err(
        &json,
        "/animations/0/samplers/0/output",
        &["3 elements, expected 4", "of 2 morph weights"],
    );
    // And a mesh to weigh.
    let (json, _, _) = one_channel(&[0.0, 1.0], &[0.0; 4], "SCALAR", "LINEAR", 0, "weights");
    assert_err(
        &json,
        "/animations/0/channels/0/target/node",
        &["node 0 has no mesh"],
    );
}

#[test]
fn nan_values_and_times_are_refused() {
    let (json, _, values) = one_channel(
        &[0.0, 1.0],
        &[0.0, 0.0, 0.0, 1.0, f32::NAN, 0.0],
        "VEC3",
        "LINEAR",
        0,
        "translation",
    );
    assert_err(
        &json,
        &format!("/accessors/{values}"),
        &["element 1 holds NaN"],
    );
    let (json, times, _) = one_channel(
        &[0.0, f32::INFINITY],
        &[0.0; 6],
        "VEC3",
        "LINEAR",
        0,
        "translation",
    );
    assert_err(&json, &format!("/accessors/{times}"), &["infinity"]);
}

#[test]
fn bad_accessors_are_refused() {
    // Out of bounds: 3 keys declared, 2 stored.
    let mut doc = Doc::default();
    let bytes: Vec<u8> = [0.0f32, 1.0].iter().flat_map(|v| v.to_le_bytes()).collect();
    let times = doc.raw(&bytes, 5126, "SCALAR", 3, "");
    let values = doc.f32s(&[0.0; 9], "VEC3");
    let json = document(
        &mut doc,
        &[("a", vec![(times, values, "LINEAR", 0, "translation")])],
    );
    assert_err(&json, &format!("/accessors/{times}"), &["out of bounds"]);
    // Key times must be floats.
    let mut doc = Doc::default();
    let times = doc.raw(&[0, 255], 5121, "SCALAR", 2, r#","normalized":true"#);
    let values = doc.f32s(&[0.0; 6], "VEC3");
    let json = document(
        &mut doc,
        &[("a", vec![(times, values, "LINEAR", 0, "translation")])],
    );
    assert_err(
        &json,
        &format!("/accessors/{times}/componentType"),
        &["key times must be FLOAT"],
    );
    // The wrong type for the path.
    let (json, _, values) = one_channel(&[0.0, 1.0], &[0.0; 6], "VEC3", "LINEAR", 0, "rotation");
    assert_err(&json, &format!("/accessors/{values}/type"), &["Vec3"]);
    // Integer rotations must be normalised.
    let mut doc = Doc::default();
    let times = doc.f32s(&[0.0, 1.0], "SCALAR");
    let values = doc.raw(&[0, 0, 0, 127, 0, 0, 0, 127], 5120, "VEC4", 2, "");
    let json = document(
        &mut doc,
        &[("a", vec![(times, values, "LINEAR", 0, "rotation")])],
    );
    assert_err(
        &json,
        &format!("/accessors/{values}/componentType"),
        &["must be normalized"],
    );
    // A missing accessor and a missing sampler.
    let mut doc = Doc::default();
    let times = doc.f32s(&[0.0, 1.0], "SCALAR");
    let json = document(
        &mut doc,
        &[("a", vec![(times, 7, "LINEAR", 0, "translation")])],
    );
    assert_err(
        &json,
        "/animations/0/samplers/0/output",
        &["missing accessor 7"],
    );
    let json = json.replace(r#""sampler":0"#, r#""sampler":3"#);
    assert_err(
        &json,
        "/animations/0/channels/0/sampler",
        &["missing sampler 3"],
    );
}

#[test]
fn zero_rotation_keys_are_refused() {
    let (json, _, values) = one_channel(
        &[0.0, 1.0],
        &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0],
        "VEC4",
        "LINEAR",
        0,
        "rotation",
    );
    assert_err(
        &json,
        &format!("/accessors/{values}"),
        &["rotation key 1 is a zero quaternion"],
    );
}

#[test]
fn a_small_memory_budget_is_an_error_not_an_allocation() {
    let json = three_interpolations();
    let e = gltf_curves_from_slice(
        json.as_bytes(),
        Path::new("test.gltf"),
        None,
        &CurveOptions { memory_budget: 600 },
    )
    .unwrap_err();
    assert!(
        e.message.contains("exceeds the memory budget of 600 bytes"),
        "{e}"
    );
}

// ---------------------------------------------------------------------------
// glTF: values
// ---------------------------------------------------------------------------

#[test]
fn channels_import_with_their_nodes_paths_and_modes() {
    let anims = import_ok(&three_interpolations());
    let names: Vec<&str> = anims.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["cubic", "linear", "step"]);
    for a in &anims {
        let labels: Vec<String> = a.channels.iter().map(ChannelCurve::label).collect();
        assert_eq!(
            labels,
            [
                "mover/translation",
                "mover/rotation",
                "face/weights/0",
                "face/weights/1"
            ]
        );
        assert_eq!(a.channels[2].channel, 2);
        assert_eq!(a.channels[3].node, 1);
        for c in &a.channels {
            assert_eq!(c.curve.times(), TIMES);
            let expected = match (a.name.as_str(), c.path) {
                ("cubic", _) => Interpolation::CubicSpline,
                ("step", _) => Interpolation::Step,
                (_, ChannelPath::Rotation) => Interpolation::Slerp,
                _ => Interpolation::Linear,
            };
            assert_eq!(c.curve.interpolation(), expected, "{}", c.label());
        }
        assert!(matches!(a.channels[0].curve, CurveData::Float3(_)));
        assert!(matches!(a.channels[1].curve, CurveData::Rotation(_)));
        assert!(matches!(a.channels[2].curve, CurveData::Float(_)));
    }
}

#[test]
fn sampled_at_their_keys_the_curves_give_the_keys() {
    for a in import_ok(&three_interpolations()) {
        for (k, &t) in TIMES.iter().enumerate() {
            let tr = find(&a, ChannelPath::Translation).curve.sample(t);
            assert_eq!(&tr[..3], &TRANSLATIONS[k], "{} at key {k}", a.name);
            let CurveData::Rotation(r) = &find(&a, ChannelPath::Rotation).curve else {
                unreachable!()
            };
            // Rotation keys come out normalised: within rounding of the
            // stored (unit to f32 precision) key, which reads back exactly.
            let q = r.curve().sample(t).to_array();
            for (c, e) in q.iter().zip(ROTATIONS[k]) {
                assert!((c - e).abs() <= 2e-7, "{} key {k}: {q:?}", a.name);
            }
            assert_eq!(
                find(&a, ChannelPath::Rotation).curve.key(k),
                Some(ROTATIONS[k])
            );
            for target in 0..2 {
                let w = find(&a, ChannelPath::Weight { target }).curve.sample(t);
                assert_eq!(w[0], WEIGHTS[k][target], "{} key {k}", a.name);
            }
            // Keys (and for cubic splines tangents) read back as stored.
            let c = &find(&a, ChannelPath::Translation).curve;
            assert_eq!(&c.key(k).unwrap()[..3], &TRANSLATIONS[k]);
            if a.name == "cubic" {
                let tri = triplets(&TRANSLATIONS);
                let (i, o) = c.tangents(k).unwrap();
                assert_eq!((&i[..3], &o[..3]), (&tri[3 * k][..], &tri[3 * k + 2][..]));
            } else {
                assert!(c.tangents(k).is_none());
            }
        }
    }
}

#[test]
fn cubic_splines_match_the_specification_between_keys() {
    let anims = import_ok(&three_interpolations());
    let a = &anims[0];
    let tri_t = triplets(&TRANSLATIONS);
    let tri_r = triplets(&ROTATIONS);
    let tri_w = triplets(&WEIGHTS);
    for (k, t) in between() {
        let (t0, t1) = (TIMES[k], TIMES[k + 1]);
        let got = find(a, ChannelPath::Translation).curve.sample(t);
        for c in 0..3 {
            let p = spec_hermite(
                t0,
                t1,
                t,
                tri_t[3 * k + 1][c],
                tri_t[3 * k + 2][c],
                tri_t[3 * k + 4][c],
                tri_t[3 * k + 3][c],
            );
            assert!(
                (f64::from(got[c]) - p).abs() <= 1e-6,
                "translation at {t}: {} vs {p}",
                got[c]
            );
        }
        // Rotations: the same formula per component, then normalised.
        let raw: Vec<f64> = (0..4)
            .map(|c| {
                spec_hermite(
                    t0,
                    t1,
                    t,
                    tri_r[3 * k + 1][c],
                    tri_r[3 * k + 2][c],
                    tri_r[3 * k + 4][c],
                    tri_r[3 * k + 3][c],
                )
            })
            .collect();
        let len = raw.iter().map(|x| x * x).sum::<f64>().sqrt();
        let got = find(a, ChannelPath::Rotation).curve.sample(t);
        for c in 0..4 {
            assert!(
                (f64::from(got[c]) - raw[c] / len).abs() <= 1e-6,
                "rotation at {t}: {got:?}"
            );
        }
        for target in 0..2 {
            let p = spec_hermite(
                t0,
                t1,
                t,
                tri_w[3 * k + 1][target],
                tri_w[3 * k + 2][target],
                tri_w[3 * k + 4][target],
                tri_w[3 * k + 3][target],
            );
            let got = find(a, ChannelPath::Weight { target }).curve.sample(t)[0];
            assert!((f64::from(got) - p).abs() <= 1e-6, "weight at {t}");
        }
    }
}

#[test]
fn linear_lerps_and_slerps_and_step_holds_between_keys() {
    let anims = import_ok(&three_interpolations());
    for (k, t) in between() {
        let s = f64::from(t - TIMES[k]) / f64::from(TIMES[k + 1] - TIMES[k]);
        let lerp = |a: f32, b: f32| f64::from(a) + (f64::from(b) - f64::from(a)) * s;
        let got = find(&anims[1], ChannelPath::Translation).curve.sample(t);
        for c in 0..3 {
            let e = lerp(TRANSLATIONS[k][c], TRANSLATIONS[k + 1][c]);
            assert!((f64::from(got[c]) - e).abs() <= 1e-6, "lerp at {t}");
        }
        // Slerp: the angle to each end grows in proportion to s.
        let q = find(&anims[1], ChannelPath::Rotation).curve.sample(t);
        let dot = |a: [f32; 4], b: [f32; 4]| {
            a.iter()
                .zip(b)
                .map(|(x, y)| f64::from(*x) * f64::from(y))
                .sum::<f64>()
                .abs()
                .min(1.0)
        };
        let whole = dot(ROTATIONS[k], ROTATIONS[k + 1]).acos();
        let part = dot(ROTATIONS[k], q).acos();
        assert!((part - s * whole).abs() <= 1e-5, "slerp at {t}");
        for target in 0..2 {
            let w = find(&anims[1], ChannelPath::Weight { target })
                .curve
                .sample(t)[0];
            let e = lerp(WEIGHTS[k][target], WEIGHTS[k + 1][target]);
            assert!((f64::from(w) - e).abs() <= 1e-6);
        }
        // Step holds the key before.
        let a = &anims[2];
        assert_eq!(
            &find(a, ChannelPath::Translation).curve.sample(t)[..3],
            &TRANSLATIONS[k]
        );
        let q = find(a, ChannelPath::Rotation).curve.sample(t);
        assert!(dot(q, ROTATIONS[k]) > 1.0 - 1e-7);
        for target in 0..2 {
            let w = find(a, ChannelPath::Weight { target }).curve.sample(t)[0];
            assert_eq!(w, WEIGHTS[k][target]);
        }
    }
}

#[test]
fn normalised_integer_keys_are_decoded_as_the_specification_says() {
    let mut doc = Doc::default();
    let times = doc.f32s(&[0.0, 1.0], "SCALAR");
    let q: [i16; 8] = [0, 0, 0, 32767, -32768, 16384, 0, 16384];
    let qb: Vec<u8> = q.iter().flat_map(|v| v.to_le_bytes()).collect();
    let rot = doc.raw(&qb, 5122, "VEC4", 2, r#","normalized":true"#);
    let w = doc.raw(
        &[0, 255, 51, 128],
        5121,
        "SCALAR",
        4,
        r#","normalized":true"#,
    );
    let json = document(
        &mut doc,
        &[(
            "q",
            vec![
                (times, rot, "LINEAR", 0, "rotation"),
                (times, w, "STEP", 1, "weights"),
            ],
        )],
    );
    let a = &import_ok(&json)[0];
    let CurveData::Rotation(r) = &find(a, ChannelPath::Rotation).curve else {
        unreachable!()
    };
    let expected: Vec<Quat> = q
        .chunks(4)
        .map(|c| {
            let f = |x: i16| ((f64::from(x) / 32767.0) as f32).max(-1.0);
            Quat::new(f(c[0]), f(c[1]), f(c[2]), f(c[3]))
        })
        .collect();
    assert_eq!(r.values(), expected);
    assert_eq!(r.values()[1].x, -1.0);
    for (target, keys) in [[0u8, 51], [255, 128]].iter().enumerate() {
        let CurveData::Float(c) = &find(a, ChannelPath::Weight { target }).curve else {
            unreachable!()
        };
        let e: Vec<f32> = keys
            .iter()
            .map(|&b| (f64::from(b) / 255.0) as f32)
            .collect();
        assert_eq!(c.values(), e);
    }
}

// ---------------------------------------------------------------------------
// glTF: real data
// ---------------------------------------------------------------------------

#[test]
fn robot_expressive_weights_and_fox_channels_import_as_curves() {
    let Some(dir) = support::shared_data("gltf") else {
        return;
    };
    let robot = load_gltf_curves(&dir.join("threejs-robotexpressive/RobotExpressive.glb"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(robot.len(), 14);
    let weights: Vec<&ChannelCurve> = robot
        .iter()
        .flat_map(|a| &a.channels)
        .filter(|c| matches!(c.path, ChannelPath::Weight { .. }))
        .collect();
    assert!(!weights.is_empty(), "RobotExpressive has morph weights");
    // Each weights channel is split into one curve per morph target.
    let channels: std::collections::BTreeSet<(usize, usize)> = robot
        .iter()
        .flat_map(|a| a.channels.iter().map(move |c| (a.index, c)))
        .filter(|(_, c)| matches!(c.path, ChannelPath::Weight { .. }))
        .map(|(a, c)| (a, c.channel))
        .collect();
    let root = glb_json(&dir.join("threejs-robotexpressive/RobotExpressive.glb"));
    let mut targets = 0;
    for &(a, ch) in &channels {
        let anim = &root.animations[a];
        let output = anim.samplers[anim.channels[ch].sampler.value()]
            .output
            .value();
        let acc = &root.accessors[output];
        let bound = |v: &Option<gltf::json::Value>| {
            v.as_ref().and_then(|v| v[0].as_f64()).expect("min and max") as f32
        };
        let (lo, hi) = (bound(&acc.min), bound(&acc.max));
        for c in robot[a].channels.iter().filter(|c| c.channel == ch) {
            let CurveData::Float(f) = &c.curve else {
                panic!("{} is not a float curve", c.label())
            };
            assert!(
                f.values().iter().all(|v| (lo..=hi).contains(v)),
                "{} outside [{lo}, {hi}]",
                c.label()
            );
            targets += 1;
        }
    }
    assert_eq!(targets, weights.len());
    eprintln!(
        "RobotExpressive: {} weights channels, {targets} morph-target curves",
        channels.len()
    );
    let fox = load_gltf_curves(&dir.join("khronos-gltf-samples/Fox.glb"))
        .unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<&str> = fox.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["Survey", "Walk", "Run"]);
    for a in &fox {
        for c in &a.channels {
            assert!(
                matches!(
                    c.curve.interpolation(),
                    Interpolation::Linear | Interpolation::Slerp
                ),
                "{}",
                c.label()
            );
            let times = c.curve.times();
            for k in [0, times.len() / 2, times.len() - 1] {
                let got = c.curve.sample(times[k]);
                let key = c.curve.key(k).unwrap();
                let n = c.curve.components();
                if matches!(c.curve, CurveData::Rotation(_)) {
                    // Keys come out normalised.
                    let len = key.iter().map(|x| x * x).sum::<f32>().sqrt();
                    for i in 0..4 {
                        assert!((got[i] - key[i] / len).abs() <= 1e-6, "{}", c.label());
                    }
                } else {
                    assert_eq!(&got[..n], &key[..n], "{} key {k}", c.label());
                }
            }
        }
    }
}

/// The JSON of a GLB file, parsed.
fn glb_json(path: &Path) -> gltf::json::Root {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let len = u32::from_le_bytes([bytes[12], bytes[13], bytes[14], bytes[15]]) as usize;
    gltf::json::Root::from_slice(&bytes[20..20 + len]).expect("the GLB's JSON parses")
}

// ---------------------------------------------------------------------------
// ozz tracks: an archive writer following the format
// ---------------------------------------------------------------------------

/// One track: type tag, version 1, key count, name length, ratios, values,
/// step bits, name.
fn track_bytes(tag: &str, keys: &[(f32, &[f32], bool)], name: &str) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(tag.as_bytes());
    b.push(0);
    b.extend_from_slice(&1u32.to_le_bytes());
    b.extend_from_slice(&(keys.len() as u32).to_le_bytes());
    b.extend_from_slice(&(name.len() as i32).to_le_bytes());
    for (r, _, _) in keys {
        b.extend_from_slice(&r.to_le_bytes());
    }
    for (_, v, _) in keys {
        for c in *v {
            b.extend_from_slice(&c.to_le_bytes());
        }
    }
    let mut steps = vec![0u8; keys.len().div_ceil(8)];
    for (i, (_, _, s)) in keys.iter().enumerate() {
        if *s {
            steps[i / 8] |= 1 << (i % 8);
        }
    }
    b.extend_from_slice(&steps);
    b.extend_from_slice(name.as_bytes());
    b
}

/// An archive: the endianness tag, then the tracks.
fn archive(tracks: &[Vec<u8>]) -> Vec<u8> {
    let mut b = vec![1u8];
    for t in tracks {
        b.extend_from_slice(t);
    }
    b
}

fn read(bytes: &[u8], duration: Option<f32>) -> Result<Vec<OzzTrack>, ImportError> {
    tracks_from_slice(
        bytes,
        Path::new("track.ozz"),
        &TrackOptions {
            duration,
            ..TrackOptions::default()
        },
    )
}

fn read_err(bytes: &[u8], at: u64, words: &[&str]) {
    let e = read(bytes, None).expect_err("the archive is invalid");
    assert_eq!(e.location, Location::Byte(at), "{e}");
    for w in words {
        assert!(e.message.contains(w), "{e} does not mention {w:?}");
    }
}

/// The keys ozz's TrackBuilder makes of a raw float track with a linear key
/// at 0.1 (0.5), a step key at 0.3 (2), linear keys at 0.6 (-1.25) and 0.9
/// (3): the same values added at ratios 0 and 1.
fn jaw_open() -> Vec<u8> {
    track_bytes(
        "ozz-float_track",
        &[
            (0.0, &[0.5], false),
            (0.1, &[0.5], false),
            (0.3, &[2.0], true),
            (0.6, &[-1.25], false),
            (0.9, &[3.0], false),
            (1.0, &[3.0], false),
        ],
        "jaw_open",
    )
}

// ---------------------------------------------------------------------------
// ozz tracks: validity
// ---------------------------------------------------------------------------

#[test]
fn malformed_track_archives_are_reported_at_their_byte() {
    let good = archive(&[jaw_open()]);
    // Offsets: tag 1..17, version 17, count 21, name length 25, ratios 29.
    read_err(&[0u8], 0, &["endianness tag is 0"]);
    read_err(&[1u8], 1, &["no track in the archive"]);
    let mut b = good.clone();
    b[5] = b'X';
    read_err(&b, 1, &["not an ozz track"]);
    read_err(
        &archive(&[track_bytes("ozz-animation", &[], "")]),
        1,
        &["\"ozz-animation\", not an ozz track"],
    );
    let mut b = good.clone();
    b[17] = 2;
    read_err(&b, 17, &["unsupported ozz-float_track version 2"]);
    let mut b = good.clone();
    b[21..25].copy_from_slice(&100_000_000u32.to_le_bytes());
    read_err(&b, 21, &["key count 100000000 needs 800000000 bytes"]);
    let mut b = good.clone();
    b[25..29].copy_from_slice(&(-3i32).to_le_bytes());
    read_err(&b, 25, &["name length -3 is negative"]);
    let mut b = good.clone();
    b[25..29].copy_from_slice(&9i32.to_le_bytes());
    read_err(&b, 25, &["name length 9 needs 9 bytes, only 8 left"]);
    // Ratios: out of [0, 1], NaN, not increasing.
    let mut b = good.clone();
    b[33..37].copy_from_slice(&1.5f32.to_le_bytes());
    read_err(&b, 33, &["key 1: ratio 1.5 is not in [0, 1]"]);
    b[33..37].copy_from_slice(&f32::NAN.to_le_bytes());
    read_err(&b, 33, &["key 1: ratio NaN is not in [0, 1]"]);
    b[33..37].copy_from_slice(&0.0f32.to_le_bytes());
    read_err(
        &b,
        33,
        &["key 1: ratio 0 is not after the previous key's 0"],
    );
    // Values: after 6 ratios, at 53.
    let mut b = good.clone();
    b[57..61].copy_from_slice(&f32::INFINITY.to_le_bytes());
    read_err(&b, 57, &["key 1: value is NaN or infinite"]);
    // Truncated in the step bits and the name.
    read_err(&good[..77], 77, &["truncated: key step bits"]);
    read_err(
        &good[..80],
        25,
        &["name length 8 needs 8 bytes, only 2 left"],
    );
    // A zero quaternion.
    let q = archive(&[track_bytes(
        "ozz-quat_track",
        &[(0.0, &[0.0, 0.0, 0.0, 1.0], false), (1.0, &[0.0; 4], false)],
        "",
    )]);
    read_err(&q, 1 + 15 + 12 + 8 + 16, &["key 1: the quaternion is zero"]);
    // A duration that is not a number of seconds.
    for d in [0.0, -1.0, f32::NAN] {
        let e = read(&good, Some(d)).unwrap_err();
        assert_eq!(e.location, Location::File, "{e}");
        assert!(e.message.contains("not finite and positive"), "{e}");
    }
    let e = tracks_from_slice(
        &good,
        Path::new("track.ozz"),
        &TrackOptions {
            duration: None,
            memory_budget: 16,
        },
    )
    .unwrap_err();
    assert!(e.message.contains("exceeds the memory budget"), "{e}");
}

// ---------------------------------------------------------------------------
// ozz tracks: values
// ---------------------------------------------------------------------------

#[test]
fn a_float_track_samples_as_ozz_samples_it() {
    let tracks = read(&archive(&[jaw_open()]), None).unwrap();
    let [t] = &tracks[..] else {
        panic!("one track")
    };
    assert_eq!(
        (t.name.as_str(), t.kind, t.keys),
        ("jaw_open", TrackKind::Float, 6)
    );
    // Step and linear keys mixed: linear, with a hold key before 0.3's successor.
    assert_eq!(t.curve.interpolation(), Interpolation::Linear);
    assert_eq!(t.curve.times().len(), 7);
    assert_eq!(t.curve.times()[3], 0.6f32.next_down());
    // Values ozz's FloatTrackSamplingJob gives for this track.
    for (ratio, ozz) in [
        (0.0, 0.5),
        (0.05, 0.5),
        (0.15, 0.875),
        (0.25, 1.624_999_9),
        (0.3f32.next_down(), 1.999_999_8),
        (0.3, 2.0),
        (0.45, 2.0),
        (0.6f32.next_down(), 2.0),
        (0.6, -1.25),
        (0.65, -0.541_667_2),
        (0.8, 1.583_333_7),
        (0.95, 3.0),
        (1.0, 3.0),
    ] {
        let got = t.curve.sample(ratio)[0];
        assert!((got - ozz).abs() <= 1e-6, "at {ratio}: {got} vs {ozz}");
    }
    // In seconds.
    let t = &read(&archive(&[jaw_open()]), Some(2.0)).unwrap()[0];
    assert_eq!(t.curve.times()[2], 0.6);
    assert!((t.curve.sample(1.3)[0] - (-0.541_667_2)).abs() <= 1e-6);
    assert!((t.curve.sample(0.9)[0] - 2.0).abs() <= 1e-6);
}

#[test]
fn every_track_type_reads_and_several_tracks_share_an_archive() {
    let bytes = archive(&[
        track_bytes(
            "ozz-float2_track",
            &[
                (0.0, &[1.0, 2.0], true),
                (0.5, &[3.0, 4.0], true),
                (1.0, &[5.0, 6.0], false),
            ],
            "uv",
        ),
        track_bytes(
            "ozz-float3_track",
            &[
                (0.0, &[1.0, 2.0, 3.0], false),
                (1.0, &[3.0, 2.0, 1.0], false),
            ],
            "",
        ),
        track_bytes(
            "ozz-float4_track",
            &[(0.25, &[1.0, 0.0, 0.5, 1.0], false)],
            "colour",
        ),
        track_bytes(
            "ozz-quat_track",
            &[
                (0.0, &[0.0, 0.0, 0.0, 1.0], false),
                (1.0, &[0.0, 0.0, 1.0, 0.0], false),
            ],
            "look",
        ),
        track_bytes("ozz-float_track", &[], "empty"),
        track_bytes("ozz-quat_track", &[], ""),
    ]);
    let tracks = read(&bytes, None).unwrap();
    let kinds: Vec<TrackKind> = tracks.iter().map(|t| t.kind).collect();
    assert_eq!(
        kinds,
        [
            TrackKind::Float2,
            TrackKind::Float3,
            TrackKind::Float4,
            TrackKind::Quaternion,
            TrackKind::Float,
            TrackKind::Quaternion
        ]
    );
    // All segments step (the last key's bit plays no part).
    assert_eq!(tracks[0].curve.interpolation(), Interpolation::Step);
    assert_eq!(&tracks[0].curve.sample(0.99)[..2], &[3.0, 4.0]);
    assert_eq!(&tracks[0].curve.sample(1.0)[..2], &[5.0, 6.0]);
    assert_eq!(&tracks[1].curve.sample(0.25)[..3], &[1.5, 2.0, 2.5]);
    assert_eq!(tracks[2].curve.sample(0.0), [1.0, 0.0, 0.5, 1.0]);
    assert_eq!(tracks[2].name, "colour");
    // Quaternions nlerp: half-way between identity and z by 180° is 90° about z.
    let q = tracks[3].curve.sample(0.5);
    let h = std::f32::consts::FRAC_1_SQRT_2;
    assert!((q[2] - h).abs() < 1e-6 && (q[3] - h).abs() < 1e-6, "{q:?}");
    // Tracks without keys sample as the identity, as in ozz.
    assert_eq!((tracks[4].keys, tracks[4].curve.sample(0.5)[0]), (0, 0.0));
    assert_eq!(tracks[5].curve.sample(0.5), [0.0, 0.0, 0.0, 1.0]);
}
