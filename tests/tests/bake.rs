//! Vertex animation bakes: validity (no skin, no vertices, bad rates, a
//! memory budget, mismatched inverse binds, corrupted raw files), then the
//! bake against live skinning recomputed here by hand (LBS as a weighted
//! sum of `model · inverse_bind` matrices), the raw file and the 16-bit
//! PNGs round-tripped, and the Fox from `../shared/data` when present.

#![allow(clippy::needless_range_loop)] // x, y, z by index reads as the formulas do

#[path = "../support/mod.rs"]
mod support;

use std::io::Cursor;

use sinew_core::clip::{RawClip, TimeMode};
use sinew_core::fk::{local_to_model, FkJob};
use sinew_core::{Mat4, Skeleton, SoaTransform, Vec3};
use sinew_std::bake::{
    self, bake, measure, Bake, BakeError, BakeOptions, Channel, LiveSkin, NormalSource,
    PNG_BOUNDS_KEY, RAW_HEADER_BYTES,
};
use sinew_std::import::gltf::{load, GltfOptions};
use sinew_std::{Humanoid, Mesh};

// ---------------------------------------------------------------------------
// A skinned mesh on the procedural humanoid (which has none of its own)
// ---------------------------------------------------------------------------

/// Six vertices around every joint of the humanoid at rest, each bound
/// 70 % to its joint and 30 % to the parent (roots 100 %), with outward
/// normals; inverse binds from the rest pose.
fn humanoid_mesh(h: &Humanoid) -> Mesh {
    let s = h.skeleton.view();
    let rest = rest_models(&s);
    let mut m = Mesh {
        name: "boxes".into(),
        inverse_bind: rest.iter().map(|r| r.inverse_affine().unwrap()).collect(),
        ..Mesh::default()
    };
    let dirs = [
        [1.0, 0.0, 0.0],
        [-1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [0.0, -1.0, 0.0],
        [0.0, 0.0, 1.0],
        [0.0, 0.0, -1.0],
    ];
    for (j, r) in rest.iter().enumerate() {
        let c = r.translation();
        for d in dirs {
            m.positions
                .push([c.x + 0.06 * d[0], c.y + 0.06 * d[1], c.z + 0.06 * d[2]]);
            m.normals.push(d);
            match s.parent(j) {
                Some(p) => {
                    m.joints.push([j as u16, p as u16, 0, 0]);
                    m.weights.push([0.7, 0.3, 0.0, 0.0]);
                }
                None => {
                    m.joints.push([j as u16, 0, 0, 0]);
                    m.weights.push([1.0, 0.0, 0.0, 0.0]);
                }
            }
        }
    }
    m
}

fn rest_models(s: &Skeleton<'_>) -> Vec<Mat4> {
    let mut models = vec![Mat4::IDENTITY; s.joint_count()];
    local_to_model(&FkJob::new(s, s.rest_pose()), &mut models).unwrap();
    models
}

/// Live skinning written out: sample, FK, then per vertex
/// `Σ w_i (M_i · B_i) p` and the same for normals (normalised).
fn hand_skin(
    s: &Skeleton<'_>,
    clip: &RawClip<'_>,
    mesh: &Mesh,
    normals: &[[f32; 3]],
    t: f32,
) -> (Vec<[f32; 3]>, Vec<[f32; 3]>) {
    let mut local = vec![SoaTransform::IDENTITY; s.soa_count()];
    clip.sample(t, TimeMode::Clamp, &mut local).unwrap();
    let mut models = vec![Mat4::IDENTITY; s.joint_count()];
    local_to_model(&FkJob::new(s, &local), &mut models).unwrap();
    let skin: Vec<Mat4> = models
        .iter()
        .zip(&mesh.inverse_bind)
        .map(|(m, b)| *m * *b)
        .collect();
    let mut ps = Vec::new();
    let mut ns = Vec::new();
    for v in 0..mesh.positions.len() {
        let (mut p, mut n) = (Vec3::ZERO, Vec3::ZERO);
        for k in 0..4 {
            let w = mesh.weights[v][k];
            let m = skin[mesh.joints[v][k] as usize];
            p = p + m.transform_point(v3(mesh.positions[v])) * w;
            if let Some(nv) = normals.get(v) {
                n = n + m.transform_vector(v3(*nv)) * w;
            }
        }
        ps.push([p.x, p.y, p.z]);
        if !normals.is_empty() {
            let l = n.length();
            ns.push(if l > 0.0 {
                [n.x / l, n.y / l, n.z / l]
            } else {
                [0.0; 3]
            });
        }
    }
    (ps, ns)
}

fn v3(a: [f32; 3]) -> Vec3 {
    Vec3::new(a[0], a[1], a[2])
}

fn dist(a: [f32; 3], b: [f32; 3]) -> f32 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

fn angle_deg(a: [f32; 3], b: [f32; 3]) -> f32 {
    let d = (a[0] * b[0] + a[1] * b[1] + a[2] * b[2]).clamp(-1.0, 1.0);
    // f64 acos: accurate enough here, and independent of the module's atan2.
    f64::from(d).acos().to_degrees() as f32
}

fn opts(rate: f32) -> BakeOptions {
    BakeOptions {
        rate,
        ..BakeOptions::default()
    }
}

// ---------------------------------------------------------------------------
// Validity
// ---------------------------------------------------------------------------

#[test]
fn bad_input_gives_errors() {
    let h = Humanoid::default_rate();
    let s = h.skeleton.view();
    let clip = h.clips[0].view();
    let mesh = humanoid_mesh(&h);

    let mut unskinned = mesh.clone();
    unskinned.joints.clear();
    unskinned.weights.clear();
    assert_eq!(
        bake(&s, &clip, "walk", &unskinned, &opts(30.0)),
        Err(BakeError::NoSkin {
            mesh: "boxes".into()
        })
    );
    let empty = Mesh {
        name: "empty".into(),
        ..Mesh::default()
    };
    assert!(matches!(
        bake(&s, &clip, "walk", &empty, &opts(30.0)),
        Err(BakeError::NoVertices { .. })
    ));
    for rate in [0.0, -30.0, f32::NAN, f32::INFINITY, bake::MAX_RATE * 2.0] {
        let e = bake(&s, &clip, "walk", &mesh, &opts(rate)).unwrap_err();
        assert!(matches!(e, BakeError::BadRate(_)), "rate {rate}: {e}");
    }
    // Rows of 222 vertices: a budget below one frame's rows fails before
    // allocating, naming the sizes.
    let tiny = BakeOptions {
        memory_budget: 1000,
        ..opts(30.0)
    };
    let e = bake(&s, &clip, "walk", &mesh, &tiny).unwrap_err();
    assert!(matches!(e, BakeError::TooLarge { budget: 1000, .. }), "{e}");
    assert!(e.to_string().contains("vertices"), "{e}");
    // A huge rate on a long clip is refused by the default budget too.
    let long = BakeOptions {
        rate: bake::MAX_RATE,
        memory_budget: 1 << 20,
        ..BakeOptions::default()
    };
    assert!(matches!(
        bake(&s, &clip, "walk", &mesh, &long),
        Err(BakeError::TooLarge { .. })
    ));
    let mut short_binds = mesh.clone();
    short_binds.inverse_bind.pop();
    assert!(matches!(
        bake(&s, &clip, "walk", &short_binds, &opts(30.0)),
        Err(BakeError::Core(sinew_core::Error::BadLength { .. }))
    ));
    let mut out_of_range = mesh.clone();
    out_of_range.joints[0][0] = 999;
    assert!(matches!(
        bake(&s, &clip, "walk", &out_of_range, &opts(30.0)),
        Err(BakeError::Core(_))
    ));
}

#[test]
fn corrupted_raw_files_are_refused() {
    let h = Humanoid::default_rate();
    let s = h.skeleton.view();
    let clip = h.clips[0].view();
    let b = bake(&s, &clip, "walk", &humanoid_mesh(&h), &opts(10.0)).unwrap();
    let raw = b.to_raw();
    let bad = |bytes: &[u8]| matches!(Bake::from_raw(bytes), Err(BakeError::BadFile(_)));
    assert!(bad(&raw[..RAW_HEADER_BYTES - 1]));
    assert!(bad(&raw[..raw.len() - 4]));
    let mut magic = raw.clone();
    magic[0] = b'X';
    assert!(bad(&magic));
    let mut version = raw.clone();
    version[8] = 9;
    assert!(bad(&version));
    let mut frames = raw.clone();
    frames[16] = frames[16].wrapping_add(1);
    assert!(bad(&frames));
    let mut nan = raw.clone();
    nan[RAW_HEADER_BYTES..RAW_HEADER_BYTES + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    assert!(bad(&nan));
}

// ---------------------------------------------------------------------------
// Against live skinning
// ---------------------------------------------------------------------------

/// Checks a bake row by row and at every mid-frame against [`hand_skin`],
/// and the report's figures against the same quantities recomputed here.
fn check_against_live(s: &Skeleton<'_>, clip: &RawClip<'_>, mesh: &Mesh, rate: f32, tol: f32) {
    let b = bake(s, clip, "clip", mesh, &opts(rate)).unwrap();
    let normals = if mesh.normals.len() == mesh.positions.len() {
        mesh.normals.clone()
    } else {
        bake::triangle_normals(&mesh.positions, &mesh.indices)
    };
    assert_eq!(b.vertices, mesh.positions.len());
    assert_eq!(b.frames, (clip.duration() * rate).round() as usize + 1);
    assert_eq!(b.row_time(b.frames - 1), clip.duration());
    let q = b.quantize();
    let deq = q.dequantize(&b);
    let mut live = LiveSkin::new(s, clip, mesh, true).unwrap();
    let r = measure(&b, &q, &mut live).unwrap();

    let scale = b
        .bounds
        .min
        .iter()
        .chain(&b.bounds.max)
        .fold(1.0f32, |m, x| m.max(x.abs()));
    let step = b.bounds.step();
    let half_diag = 0.5 * (step[0].powi(2) + step[1].powi(2) + step[2].powi(2)).sqrt();
    let (mut quant, mut mid, mut mid_q, mut mid_n) = (0.0f32, 0.0f32, 0.0f32, 0.0f32);
    for f in 0..b.frames {
        let t = f as f32 * clip.duration() / (b.frames - 1) as f32;
        assert!((b.row_time(f) - t).abs() <= 1e-5 * t.max(1.0));
        let (ps, ns) = hand_skin(s, clip, mesh, &normals, b.row_time(f));
        for (v, p) in ps.iter().enumerate() {
            let i = f * b.vertices + v;
            assert!(
                dist(*p, b.positions[i]) <= tol * scale,
                "frame {f} vertex {v}: {p:?} vs {:?}",
                b.positions[i]
            );
            assert!(angle_deg(ns[v], b.normals[i]) < 0.05, "normal {f}/{v}");
            // Per axis the PNG rounds to the nearest code.
            for k in 0..3 {
                let e = (deq.positions[i][k] - b.positions[i][k]).abs();
                assert!(e <= 0.5 * step[k] + 1e-6 * scale, "axis {k}: {e}");
            }
            quant = quant.max(dist(deq.positions[i], b.positions[i]));
        }
        if f + 1 < b.frames {
            let t = 0.5 * (b.row_time(f) + b.row_time(f + 1));
            let (ps, ns) = hand_skin(s, clip, mesh, &normals, t);
            for v in 0..b.vertices {
                let (i, j) = (f * b.vertices + v, (f + 1) * b.vertices + v);
                let lerp = |a: [f32; 3], c: [f32; 3]| -> [f32; 3] {
                    std::array::from_fn(|k| 0.5 * (a[k] + c[k]))
                };
                mid = mid.max(dist(ps[v], lerp(b.positions[i], b.positions[j])));
                mid_q = mid_q.max(dist(ps[v], lerp(deq.positions[i], deq.positions[j])));
                let n = lerp(b.normals[i], b.normals[j]);
                let l = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
                mid_n = mid_n.max(angle_deg(ns[v], n.map(|x| x / l)));
            }
        }
    }
    let near = |a: f32, b: f32, what: &str| {
        assert!(
            (a - b).abs() <= tol * scale + 1e-3 * a.abs(),
            "{what}: report {a} vs recomputed {b}"
        );
    };
    assert!(r.frame_position <= tol * scale, "{}", r.frame_position);
    near(r.quantization_position, quant, "quantization");
    assert!(r.quantization_position <= half_diag * 1.001 + 1e-6 * scale);
    assert!((r.half_step - half_diag).abs() <= 1e-6 * scale);
    near(r.mid_position, mid, "mid-frame");
    near(r.mid_position_quantized, mid_q, "mid-frame, PNG");
    assert!(
        (r.mid_normal_deg - mid_n).abs() < 0.05,
        "{} vs {mid_n}",
        r.mid_normal_deg
    );
    // The quantized playback is the f32 playback plus at most the
    // quantization error (the lerp of two rounded rows).
    assert!(r.mid_position_quantized <= r.mid_position + r.quantization_position + tol * scale);
}

#[test]
fn a_bake_reproduces_live_skinning_within_the_reported_error() {
    let h = Humanoid::default_rate();
    let s = h.skeleton.view();
    let mesh = humanoid_mesh(&h);
    for (c, rate) in h.clips.iter().zip([30.0, 24.0, 60.0]) {
        check_against_live(&s, &c.view(), &mesh, rate, 1e-5);
    }
}

#[test]
fn baking_at_the_clip_rate_leaves_no_mid_frame_error_on_rigid_vertices() {
    // The humanoid's clips are sampled at 30 Hz; a root-only mesh (weight 1
    // on the root, which only translates along its path) is moved by
    // linearly interpolated translations, so lerped rows equal live
    // skinning at mid-frames up to rounding.
    let h = Humanoid::default_rate();
    let s = h.skeleton.view();
    let mut mesh = humanoid_mesh(&h);
    let root_vertices = 6;
    mesh.positions.truncate(root_vertices);
    mesh.normals.truncate(root_vertices);
    mesh.joints.truncate(root_vertices);
    mesh.weights.truncate(root_vertices);
    let clip = h.clips[0].view();
    let b = bake(&s, &clip, "walk", &mesh, &opts(clip.sample_rate())).unwrap();
    let mut live = LiveSkin::new(&s, &clip, &mesh, true).unwrap();
    let r = measure(&b, &b.quantize(), &mut live).unwrap();
    assert!(r.mid_position < 1e-5, "{}", r.mid_position);
}

#[test]
fn normals_are_computed_from_triangles_when_the_mesh_has_none() {
    // A unit right triangle in z = 0 facing +z.
    let p = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
    let n = bake::triangle_normals(&p, &[0, 1, 2]);
    assert_eq!(n, vec![[0.0, 0.0, 1.0]; 3]);
    // Reversed winding, an out-of-range index skipped, a lone vertex zero.
    let q = [p[0], p[1], p[2], [5.0, 5.0, 5.0]];
    let n = bake::triangle_normals(&q, &[0, 2, 1, 0, 1, 99]);
    assert_eq!(&n[..3], &[[0.0, 0.0, -1.0]; 3]);
    assert_eq!(n[3], [0.0; 3]);

    let h = Humanoid::default_rate();
    let mut mesh = humanoid_mesh(&h);
    mesh.normals.clear();
    // Each joint's six vertices as the eight faces of an octahedron.
    for j in 0..mesh.positions.len() as u32 / 6 {
        let v = |k: u32| 6 * j + k;
        for (a, b) in [(0, 2), (2, 1), (1, 3), (3, 0)] {
            mesh.indices.extend([v(a), v(b), v(4)]);
            mesh.indices.extend([v(b), v(a), v(5)]);
        }
    }
    let s = h.skeleton.view();
    let clip = h.clips[1].view();
    let b = bake(&s, &clip, "jog", &mesh, &opts(30.0)).unwrap();
    assert_eq!(b.normal_source, NormalSource::Computed);
    check_against_live(&s, &clip, &mesh, 30.0, 1e-5);
    let none = BakeOptions {
        normals: false,
        ..opts(30.0)
    };
    let b = bake(&s, &clip, "jog", &mesh, &none).unwrap();
    assert!(b.normals.is_empty() && b.normal_source == NormalSource::None);
}

// ---------------------------------------------------------------------------
// Files
// ---------------------------------------------------------------------------

fn read_png16(bytes: &[u8]) -> (u32, u32, Vec<[u16; 3]>, Option<String>) {
    let decoder = png::Decoder::new(Cursor::new(bytes));
    let mut reader = decoder.read_info().unwrap();
    let info = reader.info();
    assert_eq!(info.color_type, png::ColorType::Rgb);
    assert_eq!(info.bit_depth, png::BitDepth::Sixteen);
    let bounds = info
        .uncompressed_latin1_text
        .iter()
        .find(|t| t.keyword == PNG_BOUNDS_KEY)
        .map(|t| t.text.clone());
    let (w, h) = (info.width, info.height);
    let mut buf = vec![0u8; reader.output_buffer_size().unwrap()];
    reader.next_frame(&mut buf).unwrap();
    let texels = buf
        .chunks_exact(6)
        .map(|c| {
            [
                u16::from_be_bytes([c[0], c[1]]),
                u16::from_be_bytes([c[2], c[3]]),
                u16::from_be_bytes([c[4], c[5]]),
            ]
        })
        .collect();
    (w, h, texels, bounds)
}

#[test]
fn the_png_round_trips_within_the_quantization_step() {
    let h = Humanoid::default_rate();
    let s = h.skeleton.view();
    let clip = h.clips[2].view();
    let b = bake(&s, &clip, "run", &humanoid_mesh(&h), &opts(30.0)).unwrap();
    let q = b.quantize();
    let mut bytes = Vec::new();
    q.write_png(Channel::Positions, &mut bytes).unwrap();
    let (w, hgt, codes, text) = read_png16(&bytes);
    assert_eq!((w as usize, hgt as usize), (b.vertices, b.frames));
    assert!(codes == q.positions);
    // The bounds as the shader reads them from the tEXt chunk.
    let nums: Vec<f32> = text
        .expect("bounds chunk")
        .split(' ')
        .map(|x| x.parse().unwrap())
        .collect();
    assert_eq!(nums, [b.bounds.min, b.bounds.max].concat());
    let step = b.bounds.step();
    for (c, p) in codes.iter().zip(&b.positions) {
        for k in 0..3 {
            // De-quantized the way a shader does it, from the file alone.
            let x = nums[k] + (nums[3 + k] - nums[k]) * (f32::from(c[k]) / 65535.0);
            // f32 rounding of the two conversions adds a few units in the
            // last place.
            assert!((x - p[k]).abs() <= 0.5 * step[k] + 1e-6, "{x} vs {}", p[k]);
        }
    }
    let mut nbytes = Vec::new();
    q.write_png(Channel::Normals, &mut nbytes).unwrap();
    let (_, _, ncodes, ntext) = read_png16(&nbytes);
    assert!(ntext.is_none());
    assert!(ncodes == q.normals);
    for (c, n) in ncodes.iter().zip(&b.normals) {
        for k in 0..3 {
            let x = f32::from(c[k]) / 65535.0 * 2.0 - 1.0;
            assert!((x - n[k]).abs() <= 1.0 / 65535.0 + 1e-6, "{x} vs {}", n[k]);
        }
    }
    // Without normals there is no normal PNG to write.
    let none = BakeOptions {
        normals: false,
        ..opts(30.0)
    };
    let b = bake(&s, &clip, "run", &humanoid_mesh(&h), &none).unwrap();
    assert!(b
        .quantize()
        .write_png(Channel::Normals, &mut Vec::new())
        .is_err());
}

#[test]
fn the_raw_file_round_trips_exactly() {
    let h = Humanoid::default_rate();
    let s = h.skeleton.view();
    let clip = h.clips[0].view();
    let b = bake(&s, &clip, "walk", &humanoid_mesh(&h), &opts(20.0)).unwrap();
    let raw = b.to_raw();
    assert_eq!(raw.len(), RAW_HEADER_BYTES + 2 * 12 * b.frames * b.vertices);
    assert_eq!(&raw[..8], b"SINEWVAT");
    let back = Bake::from_raw(&raw).unwrap();
    assert!(back.positions == b.positions && back.normals == b.normals);
    assert_eq!((back.frames, back.vertices), (b.frames, b.vertices));
    assert_eq!(
        (back.rate, back.duration, back.bounds),
        (b.rate, b.duration, b.bounds)
    );
    // The first texel is where the header says: byte 64, x y z little endian.
    let x = f32::from_le_bytes(raw[64..68].try_into().unwrap());
    assert_eq!(x, b.positions[0][0]);
}

#[test]
fn playback_between_rows_interpolates_linearly() {
    let h = Humanoid::default_rate();
    let s = h.skeleton.view();
    let clip = h.clips[0].view();
    let b = bake(&s, &clip, "walk", &humanoid_mesh(&h), &opts(15.0)).unwrap();
    let mut out = vec![[0.0f32; 3]; b.vertices];
    let same = |a: &[[f32; 3]], c: &[[f32; 3]]| {
        a.len() == c.len() && a.iter().zip(c).all(|(p, q)| dist(*p, *q) <= 1e-5)
    };
    b.sample(b.row_time(3), &mut out, None);
    assert!(same(&out, b.row(3)));
    let t = 0.25 * b.row_time(3) + 0.75 * b.row_time(4);
    b.sample(t, &mut out, None);
    for (v, o) in out.iter().enumerate() {
        let (p, q) = (b.row(3)[v], b.row(4)[v]);
        for k in 0..3 {
            let want = p[k] + 0.75 * (q[k] - p[k]);
            assert!((o[k] - want).abs() <= 1e-5 * want.abs().max(1.0));
        }
    }
    // Past either end: the end rows.
    b.sample(-1.0, &mut out, None);
    assert!(out.as_slice() == b.row(0));
    b.sample(1e6, &mut out, None);
    assert!(out.as_slice() == b.row(b.frames - 1));
}

// ---------------------------------------------------------------------------
// Real data
// ---------------------------------------------------------------------------

#[test]
fn fox_bakes_reproduce_live_skinning() {
    let Some(dir) = support::shared_data("gltf/khronos-gltf-samples") else {
        return;
    };
    let f = dir.join("Fox.glb");
    if !f.exists() {
        eprintln!("skipped: {} not found", f.display());
        return;
    }
    let a = load(&f, &GltfOptions::default()).unwrap();
    let s = a.skeleton.view();
    let mesh = &a.meshes[0];
    assert!(mesh.normals.is_empty(), "the Fox has no normals of its own");
    for c in &a.clips {
        check_against_live(&s, &c.view(), mesh, 30.0, 1e-5);
    }
}
