//! ozz-animation archive importer: every malformed-input class gives the
//! right error at the right byte, hand-built archives resample exactly, the
//! real ozz sample files load with the right sizes and plausible poses, and
//! random, truncated and mutated archives never panic nor allocate more than
//! their size justifies.
//!
//! Data tests read `../shared/data/ozz` and skip, saying so, when it is absent.
//! This is its own binary with a global allocator that records the largest
//! allocation made by a thread that asks for it.

#[path = "../support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use sinew_core::clip::RawClip;
use sinew_core::soa::get_joint;
use sinew_core::{Mat4, Quat, SoaTransform, Transform, Vec3};
use sinew_std::import::ozz::{
    self, animation_from_slice, load, load_animation, load_skeleton, skeleton_from_slice,
    OzzOptions, DEFAULT_SAMPLE_RATE,
};
use sinew_std::import::DEFAULT_MEMORY_BUDGET;
use sinew_std::import::{ImportError, Location};
use sinew_std::{OwnedClip, OwnedSkeleton};
use support::peak::{peak_of, PeakAllocator};
use support::*;

// ---------------------------------------------------------------------------
// Largest-allocation probe
// ---------------------------------------------------------------------------

#[global_allocator]
static GLOBAL: PeakAllocator = PeakAllocator;

/// What decoding `input_len` bytes may allocate at once: a small multiple of
/// the input (decoded keys, per-track lists, the skeleton container of at
/// most 1024 joints), or the resampled clip itself.
fn allowed_peak(input_len: usize, clip: Option<&OwnedClip>) -> usize {
    let base = 64 * input_len + (1 << 20);
    let clip_bytes = clip.map_or(0, |c| std::mem::size_of_val(c.keys()));
    base.max(clip_bytes)
}

/// Options resampling at `rate` Hz with the default memory budget.
fn at(rate: f32) -> OzzOptions {
    OzzOptions {
        sample_rate: rate,
        ..OzzOptions::default()
    }
}

// ---------------------------------------------------------------------------
// Data
// ---------------------------------------------------------------------------

fn data_dir() -> Option<PathBuf> {
    support::shared_data("ozz")
}

fn read(dir: &Path, file: &str) -> Vec<u8> {
    std::fs::read(dir.join(file)).unwrap()
}

const SKELETON_OFFSETS: SkelAt = SkelAt {
    version: 14,
    joints: 18,
    chars: 22,
    names: 26,
};

/// Fixed offsets of a skeleton archive's header fields.
struct SkelAt {
    version: usize,
    joints: usize,
    chars: usize,
    names: usize,
}

/// Offsets of an animation archive's fields, computed here from the format
/// description (not by the importer).
#[derive(Debug)]
struct AnimAt {
    timepoints: usize,
    timepoint_count: usize,
    ratio_size: usize,
    /// Per kind (translation, rotation, scale): key count, ratio array, previous array, values.
    kinds: [(usize, usize, usize, usize); 3],
}

/// Offset of an animation's track count.
const TRACKS_AT: usize = 23;

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

fn anim_layout(b: &[u8]) -> AnimAt {
    let c: Vec<usize> = (0..12).map(|i| u32_at(b, 23 + 4 * i) as usize).collect();
    let (tracks, name_len, tps) = (c[0], c[1], c[2]);
    let ratio_size = if tps <= 255 { 1 } else { 2 };
    let mut at = 71 + name_len;
    let timepoints = at;
    at += 4 * tps;
    let mut kinds = [(0, 0, 0, 0); 3];
    for (k, slot) in kinds.iter_mut().enumerate() {
        let n = c[3 + k];
        let (ie, id) = (c[6 + 2 * k], c[7 + 2 * k]);
        let ratios = at;
        let prev = ratios + ratio_size * n;
        let values = prev + 2 * n + ie + 4 * id + 4;
        *slot = (n, ratios, prev, values);
        at = values + 6 * n;
    }
    assert_eq!(at, b.len(), "layout accounts for every byte");
    let _ = tracks;
    AnimAt {
        timepoints,
        timepoint_count: tps,
        ratio_size,
        kinds,
    }
}

/// Half float decoding written independently of the importer.
fn half(h: u16) -> f32 {
    let s = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let e = i32::from((h >> 10) & 31);
    let m = f32::from(h & 1023);
    match e {
        0 => s * m * 2f32.powi(-24),
        31 => f32::NAN,
        _ => s * (1.0 + m / 1024.0) * 2f32.powi(e - 15),
    }
}

/// The error of a result whose success type has no `Debug`.
fn err_of<T>(r: Result<T, ImportError>) -> ImportError {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e,
    }
}

fn byte_at(e: &ImportError) -> u64 {
    match e.location {
        Location::Byte(b) => b,
        ref other => panic!("expected a byte location, got {other:?}: {e}"),
    }
}

fn expect_err_at<T>(r: Result<T, ImportError>, at: usize, words: &str) -> ImportError {
    let Err(e) = r else {
        panic!("expected an error at byte {at} ({words})")
    };
    assert_eq!(
        e.location,
        Location::Byte(at as u64),
        "wrong location for {words}: {e}"
    );
    assert!(
        e.message.contains(words),
        "message should mention {words:?}: {e}"
    );
    e
}

fn joint_of(clip: &RawClip<'_>, frame: usize, j: usize) -> Transform {
    get_joint(clip.frame(frame).unwrap(), j).unwrap()
}

/// Model-space matrices of one frame, by direct recursion over parents.
fn model_space(skel: &OwnedSkeleton, pose: &[SoaTransform]) -> Vec<Mat4> {
    let view = skel.view();
    let mut out: Vec<Mat4> = Vec::with_capacity(view.joint_count());
    for j in 0..view.joint_count() {
        let local = get_joint(pose, j).unwrap().to_matrix();
        let m = match view.parent(j) {
            Some(p) => out[p] * local,
            None => local,
        };
        out.push(m);
    }
    out
}

// ---------------------------------------------------------------------------
// Hand-built archives
// ---------------------------------------------------------------------------

fn header(tag: &str, version: u32) -> Vec<u8> {
    let mut b = vec![1u8];
    b.extend_from_slice(tag.as_bytes());
    b.push(0);
    b.extend_from_slice(&version.to_le_bytes());
    b
}

/// A skeleton archive from `(name, parent, rest)` joints.
fn skeleton_archive(joints: &[(&str, i16, Transform)]) -> Vec<u8> {
    let mut b = header("ozz-skeleton", 2);
    b.extend_from_slice(&(joints.len() as i32).to_le_bytes());
    let names: Vec<u8> = joints
        .iter()
        .flat_map(|(n, _, _)| n.bytes().chain([0]))
        .collect();
    b.extend_from_slice(&(names.len() as i32).to_le_bytes());
    b.extend_from_slice(&names);
    for (_, p, _) in joints {
        b.extend_from_slice(&p.to_le_bytes());
    }
    for block in joints.chunks(4) {
        let lane = |l: usize| block.get(l).map_or(Transform::IDENTITY, |j| j.2);
        let comps: [fn(&Transform) -> f32; 10] = [
            |t| t.translation.x,
            |t| t.translation.y,
            |t| t.translation.z,
            |t| t.rotation.x,
            |t| t.rotation.y,
            |t| t.rotation.z,
            |t| t.rotation.w,
            |t| t.scale.x,
            |t| t.scale.y,
            |t| t.scale.z,
        ];
        for c in comps {
            for l in 0..4 {
                b.extend_from_slice(&c(&lane(l)).to_le_bytes());
            }
        }
    }
    b
}

/// Quantises a unit quaternion the way ozz 0.16 stores it (independent encoder).
fn encode_quat(q: Quat) -> [u16; 3] {
    let c = q.to_array();
    let largest = (0..4)
        .max_by(|&a, &b| c[a].abs().total_cmp(&c[b].abs()))
        .unwrap();
    let sign = u64::from(c[largest] < 0.0);
    let mut packed = largest as u64 | (sign << 2);
    let mut shift = 3;
    for (i, &v) in c.iter().enumerate() {
        if i == largest {
            continue;
        }
        let x = ((v + std::f32::consts::FRAC_1_SQRT_2) * 32767.0 / std::f32::consts::SQRT_2)
            .round()
            .clamp(0.0, 32767.0) as u64;
        packed |= x << shift;
        shift += 15;
    }
    [packed as u16, (packed >> 16) as u16, (packed >> 32) as u16]
}

fn f16(x: f32) -> u16 {
    // Only values exactly representable in a half are used by the tests.
    let table = [
        (0.0, 0x0000),
        (1.0, 0x3c00),
        (2.0, 0x4000),
        (3.0, 0x4200),
        (0.5, 0x3800),
        (-0.25, 0xb400),
        (4.0, 0x4400),
    ];
    table
        .iter()
        .find(|(v, _)| *v == x)
        .map(|&(_, h)| h)
        .unwrap()
}

/// One key kind: for each real track, its keys as (timepoint index, value bits).
type KindKeys = Vec<Vec<(u16, [u16; 3])>>;

/// Lays keys out in ozz v7 order: first keys of all (4-aligned) tracks, then
/// second keys, then the rest ordered by the time of their previous key.
/// Returns (ratios, previous offsets, values).
fn order_keys(tracks: &KindKeys, pad_value: [u16; 3], last_tp: u16) -> Vec<(u16, u16, [u16; 3])> {
    let a = tracks.len().div_ceil(4) * 4;
    let full: Vec<Vec<(u16, [u16; 3])>> = (0..a)
        .map(|t| {
            tracks
                .get(t)
                .cloned()
                .unwrap_or_else(|| vec![(0, pad_value), (last_tp, pad_value)])
        })
        .collect();
    let mut out = Vec::new();
    let mut index_of: Vec<Vec<usize>> = vec![Vec::new(); a];
    for row in 0..2 {
        for (t, keys) in full.iter().enumerate() {
            index_of[t].push(out.len());
            let prev = if row == 0 { 0 } else { a as u16 };
            out.push((keys[row].0, prev, keys[row].1));
        }
    }
    let mut rest: Vec<(u16, usize, usize)> = Vec::new(); // (prev key time, track, key)
    for (t, keys) in full.iter().enumerate() {
        for k in 2..keys.len() {
            rest.push((keys[k - 1].0, t, k));
        }
    }
    rest.sort();
    for (_, t, k) in rest {
        let i = out.len();
        let p = *index_of[t].last().unwrap();
        index_of[t].push(i);
        out.push((full[t][k].0, (i - p) as u16, full[t][k].1));
    }
    out
}

/// An animation archive (version 7) with no iframe data.
fn animation_archive(
    duration: f32,
    name: &str,
    timepoints: &[f32],
    kinds: [&KindKeys; 3],
) -> Vec<u8> {
    let tracks = kinds[0].len();
    let last = (timepoints.len() - 1) as u16;
    let one = f16(1.0);
    let pads = [[0, 0, 0], encode_quat(Quat::IDENTITY), [one, one, one]];
    let ordered: Vec<_> = kinds
        .iter()
        .zip(pads)
        .map(|(k, pad)| order_keys(k, pad, last))
        .collect();
    let mut b = header("ozz-animation", 7);
    b.extend_from_slice(&duration.to_le_bytes());
    let counts = [
        tracks,
        name.len(),
        timepoints.len(),
        ordered[0].len(),
        ordered[1].len(),
        ordered[2].len(),
        0,
        0,
        0,
        0,
        0,
        0,
    ];
    for c in counts {
        b.extend_from_slice(&(c as u32).to_le_bytes());
    }
    b.extend_from_slice(name.as_bytes());
    for t in timepoints {
        b.extend_from_slice(&t.to_le_bytes());
    }
    for keys in &ordered {
        for (r, _, _) in keys {
            if timepoints.len() <= 255 {
                b.push(*r as u8);
            } else {
                b.extend_from_slice(&r.to_le_bytes());
            }
        }
        for (_, p, _) in keys {
            b.extend_from_slice(&p.to_le_bytes());
        }
        b.extend_from_slice(&1.0f32.to_le_bytes()); // iframe interval
        for (_, _, v) in keys {
            for x in v {
                b.extend_from_slice(&x.to_le_bytes());
            }
        }
    }
    b
}

fn one_joint_skeleton() -> (OwnedSkeleton, Vec<u16>) {
    let rest = Transform::from_translation_rotation(Vec3::new(0.0, 1.0, 0.0), Quat::IDENTITY);
    skeleton_from_slice(
        &skeleton_archive(&[("root", -1, rest)]),
        Path::new("one.ozz"),
    )
    .unwrap()
}

/// A one-track animation over 1 s with timepoints 0, 0.25, 1: translation x
/// 0 → 1 → 3, rotation identity → 90° about y (at 0 and 1), scale 1 → 1 → 2.
fn small_animation() -> Vec<u8> {
    let tp = [0.0, 0.25, 1.0];
    let t: KindKeys = vec![vec![
        (0, [f16(0.0), 0, 0]),
        (1, [f16(1.0), 0, 0]),
        (2, [f16(3.0), 0, 0]),
    ]];
    let r: KindKeys = vec![vec![
        (0, encode_quat(Quat::IDENTITY)),
        (
            2,
            encode_quat(Quat::from_rotation_y(std::f32::consts::FRAC_PI_2)),
        ),
    ]];
    let one = f16(1.0);
    let s: KindKeys = vec![vec![
        (0, [one; 3]),
        (1, [one; 3]),
        (2, [f16(2.0), one, one]),
    ]];
    animation_archive(1.0, "small", &tp, [&t, &r, &s])
}

// ---------------------------------------------------------------------------
// Validity: one broken archive per error class
// ---------------------------------------------------------------------------

#[test]
fn header_errors_are_located() {
    let (skel, map) = one_joint_skeleton();
    let good = small_animation();
    let anim = |b: &[u8]| animation_from_slice(b, Path::new("a.ozz"), &skel, &map, &at(30.0));
    assert!(anim(&good).is_ok());

    let mut b = good.clone();
    b[0] = 0;
    expect_err_at(anim(&b), 0, "big endian");
    b[0] = 7;
    expect_err_at(anim(&b), 0, "endianness tag is 7");

    let s = skeleton_archive(&[("root", -1, Transform::IDENTITY)]);
    expect_err_at(anim(&s), 1, "type tag");
    expect_err_at(
        skeleton_from_slice(&good, Path::new("s.ozz")),
        1,
        "type tag",
    );
    expect_err_at(anim(&b"\x01ozz-anim"[..]), 1, "truncated");
    expect_err_at(anim(&[]), 0, "truncated");

    let mut b = good.clone();
    b[15..19].copy_from_slice(&6u32.to_le_bytes());
    expect_err_at(anim(&b), 15, "version 6");
    let mut s2 = s.clone();
    s2[SKELETON_OFFSETS.version..SKELETON_OFFSETS.version + 4].copy_from_slice(&3u32.to_le_bytes());
    expect_err_at(
        skeleton_from_slice(&s2, Path::new("s.ozz")),
        SKELETON_OFFSETS.version,
        "version 3",
    );
}

#[test]
fn skeleton_errors_are_located() {
    let rest = Transform::IDENTITY;
    let good = skeleton_archive(&[("a", -1, rest), ("b", 0, rest), ("c", 1, rest)]);
    let parse = |b: &[u8]| skeleton_from_slice(b, Path::new("s.ozz"));
    let (s, map) = parse(&good).unwrap();
    assert_eq!(s.joint_count(), 3);
    assert_eq!(map, vec![0, 1, 2]);
    let parents_at = SKELETON_OFFSETS.names + 6;
    let rest_at = parents_at + 6;

    // Counts: zero, above MAX_JOINTS, overflowing, more names than bytes.
    for bad in [0i32, 1025, i32::MAX, -3] {
        let mut b = good.clone();
        b[18..22].copy_from_slice(&bad.to_le_bytes());
        expect_err_at(parse(&b), SKELETON_OFFSETS.joints, "joint count");
    }
    for bad in [i32::MAX, -1, 10_000] {
        let mut b = good.clone();
        b[22..26].copy_from_slice(&bad.to_le_bytes());
        expect_err_at(parse(&b), SKELETON_OFFSETS.chars, "names size");
    }
    // Names: a NUL replaced so there are only two names.
    let mut b = good.clone();
    b[SKELETON_OFFSETS.names + 1] = b'x';
    expect_err_at(parse(&b), SKELETON_OFFSETS.names, "names");

    // Parents: after the child, itself, out of range.
    for (joint, bad, words) in [
        (1usize, 2i16, "does not come before"),
        (1, 1, "does not come before"),
        (2, 3, "out of range"),
        (2, -2, "out of range"),
    ] {
        let mut b = good.clone();
        let at = parents_at + 2 * joint;
        b[at..at + 2].copy_from_slice(&bad.to_le_bytes());
        expect_err_at(parse(&b), at, words);
    }

    // Rest values: NaN translation of joint 1 (lane 1 of tx), infinite scale
    // z of joint 2, zero rotation and zero scale of joint 0.
    let mut b = good.clone();
    b[rest_at + 4..rest_at + 8].copy_from_slice(&f32::NAN.to_le_bytes());
    expect_err_at(parse(&b), rest_at + 4, "rest translation");
    let mut b = good.clone();
    let at = rest_at + 9 * 16 + 2 * 4;
    b[at..at + 4].copy_from_slice(&f32::INFINITY.to_le_bytes());
    expect_err_at(parse(&b), at, "rest scale");
    let mut b = good.clone();
    b[rest_at + 6 * 16..rest_at + 6 * 16 + 4].copy_from_slice(&0f32.to_le_bytes());
    expect_err_at(parse(&b), rest_at + 3 * 16, "is zero");
    let mut b = good.clone();
    for c in 7..10 {
        b[rest_at + c * 16..rest_at + c * 16 + 4].copy_from_slice(&0f32.to_le_bytes());
    }
    expect_err_at(parse(&b), rest_at + 7 * 16, "cannot be inverted");

    // Truncated in the rest pose.
    expect_err_at(parse(&good[..good.len() - 1]), rest_at, "truncated");
}

#[test]
fn animation_errors_are_located() {
    let (skel, map) = one_joint_skeleton();
    let good = small_animation();
    let l = anim_layout(&good);
    let anim = |b: &[u8]| animation_from_slice(b, Path::new("a.ozz"), &skel, &map, &at(30.0));
    let put32 =
        |b: &mut Vec<u8>, at: usize, v: u32| b[at..at + 4].copy_from_slice(&v.to_le_bytes());

    // Duration: NaN, infinite, negative; too long to resample.
    for (bad, words) in [
        (f32::NAN, "NaN"),
        (f32::INFINITY, "NaN or infinite"),
        (-1.0, "negative"),
        (1e30, "frames"),
    ] {
        let mut b = good.clone();
        put32(&mut b, 19, bad.to_bits());
        expect_err_at(anim(&b), 19, words);
    }
    // More tracks than joints.
    let mut b = good.clone();
    put32(&mut b, TRACKS_AT, 2);
    expect_err_at(anim(&b), TRACKS_AT, "exceeds the skeleton");

    // Counts: each oversized count is blamed at its own field.
    for (i, words) in [
        (1usize, "name length"),
        (2, "timepoint count"),
        (3, "translation key count"),
        (4, "rotation key count"),
        (5, "scale key count"),
        (6, "translation iframe entry count"),
        (9, "rotation iframe descriptor count"),
    ] {
        let at = 23 + 4 * i;
        for bad in [u32::MAX, 100_000] {
            let mut b = good.clone();
            put32(&mut b, at, bad);
            expect_err_at(anim(&b), at, words);
        }
    }
    // Fewer keys than two per padded track.
    let mut b = good.clone();
    put32(&mut b, 23 + 4 * 4, 7);
    expect_err_at(anim(&b), 23 + 4 * 4, "less than 2 keys");

    // Timepoints: NaN, outside [0, 1], out of order.
    let tp = l.timepoints;
    for (i, bad, words) in [
        (1usize, f32::NAN, "NaN"),
        (2, 1.5, "outside [0, 1]"),
        (2, 0.25, "out of order"),
    ] {
        let mut b = good.clone();
        put32(&mut b, tp + 4 * i, bad.to_bits());
        expect_err_at(anim(&b), tp + 4 * i, words);
    }

    let (_, t_ratios, t_prev, t_values) = l.kinds[0];
    assert_eq!(l.ratio_size, 1);
    // A key's timepoint index out of range.
    let mut b = good.clone();
    b[t_ratios + 8] = 3;
    expect_err_at(anim(&b), t_ratios + 8, "out of range");
    // Keys out of time order within a track (key 8 of track 0 at 0.25 after 0.25).
    let mut b = good.clone();
    b[t_ratios + 8] = 1;
    expect_err_at(anim(&b), t_ratios + 8, "out of order");
    let mut b = good.clone();
    b[t_ratios + 4] = 0; // second key of track 0 at the same time as its first
    expect_err_at(anim(&b), t_ratios + 4, "out of order");
    // ozz v7 keys carry no track index: a key's track is that of the key its
    // previous-key offset points to. An offset pointing outside the keys, or
    // to a key that is not the latest of its track, is the v7 form of a key
    // whose track does not exist.
    for (bad, words) in [
        (0u16, "does not point"),
        (9, "does not point"),
        (5, "not the latest"),
    ] {
        let mut b = good.clone();
        b[t_prev + 16..t_prev + 18].copy_from_slice(&bad.to_le_bytes());
        expect_err_at(anim(&b), t_prev + 16, words);
    }
    // NaN and infinite half values.
    for bad in [0x7e00u16, 0xfc00] {
        let mut b = good.clone();
        b[t_values + 6 * 8 + 2..t_values + 6 * 8 + 4].copy_from_slice(&bad.to_le_bytes());
        expect_err_at(anim(&b), t_values + 6 * 8 + 2, "NaN or infinite");
    }
    let (_, _, _, s_values) = l.kinds[2];
    let mut b = good.clone();
    b[s_values..s_values + 2].copy_from_slice(&0x7c00u16.to_le_bytes());
    expect_err_at(anim(&b), s_values, "scale key 0");
    // Truncated inside the scale values.
    expect_err_at(anim(&good[..good.len() - 3]), s_values, "truncated");

    // Caller errors are about the call, not a byte.
    for rate in [0.0, -30.0, f32::NAN, f32::INFINITY] {
        let e = err_of(animation_from_slice(
            &good,
            Path::new("a.ozz"),
            &skel,
            &map,
            &at(rate),
        ));
        assert_eq!(e.location, Location::File, "{e}");
    }
    let e = err_of(animation_from_slice(
        &good,
        Path::new("a.ozz"),
        &skel,
        &[5],
        &at(30.0),
    ));
    assert_eq!(e.location, Location::File, "{e}");
    let e = err_of(animation_from_slice(
        &good,
        Path::new("a.ozz"),
        &skel,
        &[],
        &at(30.0),
    ));
    assert_eq!(e.location, Location::File, "{e}");
    assert!(e.to_string().starts_with("a.ozz: "), "{e}");
}

#[test]
fn io_errors_name_the_file() {
    let missing = Path::new("/definitely/not/here.ozz");
    let e = err_of(load_skeleton(missing));
    assert_eq!(e.location, Location::File);
    assert_eq!(e.file, missing);
}

// ---------------------------------------------------------------------------
// Correctness on hand-built archives (independent reference: the lerp by hand)
// ---------------------------------------------------------------------------

#[test]
fn small_animation_resamples_exactly() {
    let (skel, map) = one_joint_skeleton();
    let clip = animation_from_slice(
        &small_animation(),
        Path::new("x.ozz"),
        &skel,
        &map,
        &at(4.0),
    )
    .unwrap();
    let view = clip.view();
    assert_eq!(clip.name, "small");
    assert_eq!(clip.frame_count(), 5, "round(1 s × 4 Hz) + 1");
    assert!((clip.duration() - 1.0).abs() < 1e-6);
    let xs = [0.0, 1.0, 1.0 + 2.0 / 3.0, 1.0 + 4.0 / 3.0, 3.0];
    let sx = [1.0, 1.0, 1.0 + 1.0 / 3.0, 1.0 + 2.0 / 3.0, 2.0];
    for f in 0..5 {
        let t = joint_of(&view, f, 0);
        assert!((t.translation.x - xs[f]).abs() < 1e-5, "frame {f}: {t:?}");
        assert!((t.scale.x - sx[f]).abs() < 1e-5, "frame {f}: {t:?}");
        // nlerp from identity to 90° about y at alpha = f / 4.
        let a = f as f32 / 4.0;
        let end = Quat::from_rotation_y(std::f32::consts::FRAC_PI_2);
        let expect = Quat::IDENTITY.nlerp(end, a);
        assert!(
            quat_close(t.rotation, expect, 2e-4),
            "frame {f}: {:?} vs {expect:?}",
            t.rotation
        );
        assert!((t.rotation.length() - 1.0).abs() < 1e-5);
    }
}

#[test]
fn non_integral_frames_hold_the_last_key_and_empty_name_uses_stem() {
    let (skel, map) = one_joint_skeleton();
    // An empty archive name: the clip is named after the file.
    let t: KindKeys = vec![vec![(0, [f16(0.0), 0, 0]), (1, [f16(4.0), 0, 0])]];
    let r: KindKeys = vec![vec![
        (0, encode_quat(Quat::IDENTITY)),
        (1, encode_quat(Quat::IDENTITY)),
    ]];
    let one = f16(1.0);
    let s: KindKeys = vec![vec![(0, [one; 3]), (1, [one; 3])]];
    let b = animation_archive(0.9, "", &[0.0, 1.0], [&t, &r, &s]);
    let clip =
        animation_from_slice(&b, Path::new("dir/walk_fast.ozz"), &skel, &map, &at(10.0)).unwrap();
    let view = clip.view();
    assert_eq!(clip.name, "walk_fast");
    assert_eq!(clip.frame_count(), 10, "round(0.9 × 10) + 1");
    // Frame 8 at t = 0.8 s is ratio 0.8/0.9; the last frame is exactly the end.
    let x8 = joint_of(&view, 8, 0).translation.x;
    assert!((x8 - 4.0 * 0.8 / 0.9).abs() < 1e-4, "{x8}");
    assert!((joint_of(&view, 9, 0).translation.x - 4.0).abs() < 1e-6);
}

#[test]
fn sixteen_bit_timepoint_indices_are_read() {
    // 300 timepoints forces u16 key ratios; a key at timepoint 299 (ratio 1).
    let tps: Vec<f32> = (0..300).map(|i| i as f32 / 299.0).collect();
    let t: KindKeys = vec![vec![
        (0, [f16(0.0), 0, 0]),
        (150, [f16(2.0), 0, 0]),
        (299, [f16(4.0), 0, 0]),
    ]];
    let r: KindKeys = vec![vec![
        (0, encode_quat(Quat::IDENTITY)),
        (299, encode_quat(Quat::IDENTITY)),
    ]];
    let one = f16(1.0);
    let s: KindKeys = vec![vec![(0, [one; 3]), (299, [one; 3])]];
    let b = animation_archive(2.0, "long", &tps, [&t, &r, &s]);
    assert_eq!(anim_layout(&b).ratio_size, 2);
    let (skel, map) = one_joint_skeleton();
    let clip = animation_from_slice(&b, Path::new("l.ozz"), &skel, &map, &at(2.0)).unwrap();
    let view = clip.view();
    let xs: Vec<f32> = (0..5)
        .map(|f| joint_of(&view, f, 0).translation.x)
        .collect();
    // Key times 0, 150/299, 1 of 2 s.
    let k1 = 150.0 / 299.0;
    let at = |r: f32| {
        if r <= k1 {
            2.0 * r / k1
        } else {
            2.0 + 2.0 * (r - k1) / (1.0 - k1)
        }
    };
    for (f, x) in xs.iter().enumerate() {
        assert!((x - at(f as f32 / 4.0)).abs() < 1e-4, "frame {f}: {x}");
    }
}

#[test]
fn quaternion_encoding_round_trips_through_the_importer() {
    // Rotations of every largest component and sign, decoded via a 1-frame clip.
    let qs = [
        Quat::new(0.9, 0.1, -0.3, 0.2).normalize(),
        Quat::new(-0.2, -0.8, 0.1, 0.3).normalize(),
        Quat::new(0.1, 0.3, 0.7, -0.4).normalize(),
        Quat::new(-0.5, 0.5, -0.5, -0.5),
    ];
    let (skel, map) = one_joint_skeleton();
    for q in qs {
        let t: KindKeys = vec![vec![(0, [0; 3]), (1, [0; 3])]];
        let r: KindKeys = vec![vec![(0, encode_quat(q)), (1, encode_quat(q))]];
        let one = f16(1.0);
        let s: KindKeys = vec![vec![(0, [one; 3]), (1, [one; 3])]];
        let b = animation_archive(0.0, "q", &[0.0, 1.0], [&t, &r, &s]);
        let clip = animation_from_slice(&b, Path::new("q.ozz"), &skel, &map, &at(30.0)).unwrap();
        let view = clip.view();
        assert_eq!(clip.frame_count(), 1);
        let got = joint_of(&view, 0, 0).rotation;
        assert!(quat_close(got, q, 1e-4), "{got:?} vs {q:?}");
    }
}

// ---------------------------------------------------------------------------
// The real ozz sample files
// ---------------------------------------------------------------------------

/// Rest rotation components below `TINY` (float noise; their products are
/// subnormal, which x86 handles in microcode) import as zero; the others
/// keep their values, and so do tiny translations.
#[test]
fn noise_rest_rotation_components_import_as_zero() {
    let rest = Transform::from_translation_rotation(
        Vec3::new(1e-20, 1.0, 0.0),
        Quat::new(3e-21, -6e-39, 0.6, 0.8),
    );
    let (skel, _) =
        skeleton_from_slice(&skeleton_archive(&[("root", -1, rest)]), Path::new("n.ozz")).unwrap();
    let got = get_joint(skel.view().rest_pose(), 0).unwrap();
    assert_eq!(got.rotation, Quat::new(0.0, 0.0, 0.6, 0.8));
    assert_eq!(got.translation, Vec3::new(1e-20, 1.0, 0.0));
}

#[test]
fn skeletons_have_the_documented_joints() {
    let Some(dir) = data_dir() else { return };
    for (file, joints) in [
        ("pab_skeleton.ozz", 67),
        ("ruby_skeleton.ozz", 368),
        ("baked_skeleton.ozz", 1007),
    ] {
        let (skel, map) = load_skeleton(&dir.join(file)).unwrap();
        let view = skel.view();
        assert_eq!(view.joint_count(), joints, "{file}");
        assert_eq!(map.len(), joints);
        let mut seen = vec![false; joints];
        for &m in &map {
            assert!(
                !std::mem::replace(&mut seen[m as usize], true),
                "map is a permutation"
            );
        }
        let first: Vec<_> = (0..4).map(|j| view.joint_name(j).unwrap()).collect();
        println!("{file}: {joints} joints, first {first:?}");
    }
    let (skel, map) = load_skeleton(&dir.join("pab_skeleton.ozz")).unwrap();
    let view = skel.view();
    assert_eq!(view.joint_name(map[0] as usize), Some("Hips"));
    assert_eq!(view.parent(map[0] as usize), None);
    for name in ["Head", "LeftFoot", "RightHand", "Bip01 R Toe0Nub"] {
        assert!(view.find_joint(name).is_some(), "{name}");
    }
    // ozz already stores joints depth-first: the map is the identity here.
    assert!(map.iter().enumerate().all(|(i, &m)| i == m as usize));
}

#[test]
fn every_animation_loads_with_its_duration() {
    let Some(dir) = data_dir() else { return };
    let cases = [
        ("pab_skeleton.ozz", "pab_walk.ozz", 1.333, "walk"),
        ("pab_skeleton.ozz", "pab_jog.ozz", 0.800, "jog"),
        ("pab_skeleton.ozz", "pab_run.ozz", 0.667, "run"),
        ("pab_skeleton.ozz", "pab_crossarms.ozz", 8.6, "crossarms"),
        ("ruby_skeleton.ozz", "ruby_animation.ozz", 4.0, "Take 001"),
        (
            "baked_skeleton.ozz",
            "baked_animation.ozz",
            19.125,
            "Take 001",
        ),
    ];
    for (skel_file, file, duration, name) in cases {
        let (skel, map) = load_skeleton(&dir.join(skel_file)).unwrap();
        let bytes = read(&dir, file);
        let stored = f32::from_le_bytes(bytes[19..23].try_into().unwrap());
        assert!((stored - duration).abs() < 1e-3, "{file}: {stored}");
        let clip = load_animation(&dir.join(file), &skel, &map, &at(DEFAULT_SAMPLE_RATE)).unwrap();
        let view = clip.view();
        let frames = (f64::from(stored) * 30.0).round() as usize + 1;
        assert_eq!(clip.frame_count(), frames, "{file}");
        assert_eq!(clip.name, name);
        assert!((clip.duration() - duration).abs() < 0.034, "{file}");
        let tracks = u32_at(&bytes, 23);
        assert_eq!(tracks as usize, skel.joint_count());
        for f in [0, frames / 2, frames - 1] {
            for j in 0..skel.joint_count() {
                let t = joint_of(&view, f, j);
                assert!(t.is_finite());
                assert!((t.rotation.length() - 1.0).abs() < 1e-4, "{file} {f} {j}");
            }
        }
        println!(
            "{file}: {} joints, {tracks} tracks, {stored} s, {frames} frames at 30 Hz",
            skel.joint_count()
        );
    }
}

#[test]
fn walk_decodes_known_keys() {
    let Some(dir) = data_dir() else { return };
    let (skel, map) = load_skeleton(&dir.join("pab_skeleton.ozz")).unwrap();
    let bytes = read(&dir, "pab_walk.ozz");
    let l = anim_layout(&bytes);
    assert_eq!((l.timepoint_count, l.ratio_size), (41, 1));
    let clip =
        animation_from_slice(&bytes, Path::new("pab_walk.ozz"), &skel, &map, &at(30.0)).unwrap();
    let view = clip.view();
    let hips = map[0] as usize;
    let t0 = joint_of(&view, 0, hips);

    // Key 0 of each kind is track 0's first key, at time 0: decode its
    // translation halves here, straight from the bytes.
    let (_, _, _, tv) = l.kinds[0];
    let h = |i: usize| {
        half(u16::from_le_bytes([
            bytes[tv + 2 * i],
            bytes[tv + 2 * i + 1],
        ]))
    };
    assert_eq!(t0.translation, Vec3::new(h(0), h(1), h(2)));
    // The same, as printed by an independent script: the hips 1.01 m up.
    assert!(vec_close(
        t0.translation,
        Vec3::new(0.029_998_78, 1.013_671_9, -0.000_699_997),
        1e-7
    ));
    // Rotation key 0 (u16s 0xad46 0x4108 0xd538): largest = z, negative.
    let expect = Quat::new(-0.467_829_5, -0.527_476_2, -0.530_325_2, 0.470_807_5);
    assert!(
        quat_close(t0.rotation, expect.normalize(), 1e-5),
        "{:?}",
        t0.rotation
    );
    // The walk runs at 30 Hz with a key at every frame: resampling at 30 Hz
    // reproduces the stored timepoints.
    assert_eq!(clip.frame_count(), l.timepoint_count);
}

#[test]
fn walk_poses_are_unit_varied_and_loop() {
    let Some(dir) = data_dir() else { return };
    let (skel, map) = load_skeleton(&dir.join("pab_skeleton.ozz")).unwrap();
    let clip = load_animation(&dir.join("pab_walk.ozz"), &skel, &map, &at(30.0)).unwrap();
    let view = clip.view();
    let n = skel.joint_count();
    let frames = clip.frame_count();
    for f in 0..frames {
        for j in 0..n {
            let q = joint_of(&view, f, j).rotation;
            assert!((q.length() - 1.0).abs() < 1e-5, "frame {f} joint {j}");
        }
    }
    for f in 1..frames {
        let moved = (0..n)
            .map(|j| {
                joint_of(&view, f, j)
                    .rotation
                    .angle_between(joint_of(&view, f - 1, j).rotation)
            })
            .fold(0.0f32, f32::max);
        assert!(moved > 1e-3, "frame {f} equals frame {}", f - 1);
    }
    // The walk travels: the root (hips) moves about 1.4 m along +z over the
    // loop and comes back to the same pose; every other joint and every
    // rotation must match across the seam.
    let last = frames - 1;
    let root = map[0] as usize;
    let travel = joint_of(&view, last, root).translation - joint_of(&view, 0, root).translation;
    println!("pab_walk root travel over the loop: {travel:?}");
    assert!(travel.x.abs() < 0.02 && travel.y.abs() < 0.02 && travel.z > 1.0);
    let mut worst = 0.0f32;
    for j in 0..n {
        let (a, b) = (joint_of(&view, 0, j), joint_of(&view, last, j));
        worst = worst.max(a.rotation.angle_between(b.rotation));
        if j == root {
            continue;
        }
        let d = a.translation - b.translation;
        assert!(d.length() < 0.02, "joint {j} translation {d:?}");
    }
    assert!(worst < 0.05, "loop seam rotation error {worst} rad");
}

#[test]
fn walk_frame_zero_stands_upright() {
    let Some(dir) = data_dir() else { return };
    let (skel, map) = load_skeleton(&dir.join("pab_skeleton.ozz")).unwrap();
    let clip = load_animation(&dir.join("pab_walk.ozz"), &skel, &map, &at(30.0)).unwrap();
    let view = skel.view();
    let models = model_space(&skel, clip.view().frame(0).unwrap());
    let y = |name: &str| models[view.find_joint(name).unwrap()].translation().y;
    let (lowest, _) = (0..view.joint_count())
        .map(|j| (j, models[j].translation().y))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap();
    let (highest, _) = (0..view.joint_count())
        .map(|j| (j, models[j].translation().y))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap();
    let low = view.joint_name(lowest).unwrap();
    let high = view.joint_name(highest).unwrap();
    println!(
        "pab_walk frame 0: lowest {low} at {:.3}, highest {high} at {:.3}, hips {:.3}",
        models[lowest].translation().y,
        models[highest].translation().y,
        y("Hips")
    );
    assert!(
        low.contains("Foot") || low.contains("Toe"),
        "lowest is {low}"
    );
    assert!(high.contains("Head"), "highest is {high}");
    assert!(y("Head") > y("Neck") && y("Neck") > y("Hips"));
    assert!(y("Hips") > y("LeftLeg") && y("LeftLeg") > y("LeftFoot"));
    // A human-sized character in metres: head 1.4–2 m above the feet.
    let height = models[highest].translation().y - models[lowest].translation().y;
    assert!((1.4..2.0).contains(&height), "height {height}");
}

#[test]
fn load_gathers_an_asset() {
    let Some(dir) = data_dir() else { return };
    let walk = dir.join("pab_walk.ozz");
    let run = dir.join("pab_run.ozz");
    let asset = load(&dir.join("pab_skeleton.ozz"), &[&walk, &run], &at(30.0)).unwrap();
    assert_eq!(asset.skeleton.joint_count(), 67);
    assert_eq!(asset.clips.len(), 2);
    assert_eq!(asset.clips[1].name, "run");
    assert_eq!(asset.units, "file units");
    assert!(asset.meshes.is_empty());
    assert!(asset.warnings.is_empty(), "{:?}", asset.warnings);

    let baked = dir.join("baked_animation.ozz");
    let asset = load(&dir.join("baked_skeleton.ozz"), &[&baked], &at(30.0)).unwrap();
    assert_eq!(asset.clips[0].frame_count(), 575, "round(19.125 × 30) + 1");
    assert_eq!(asset.warnings.len(), 1, "{:?}", asset.warnings);
    println!("warning: {}", asset.warnings[0]);

    // An animation against the wrong skeleton is refused at its track count.
    let e = err_of(load(&dir.join("pab_skeleton.ozz"), &[&baked], &at(30.0)));
    assert_eq!(e.location, Location::Byte(23));
    assert_eq!(e.file, baked);
}

#[test]
fn truncations_of_the_real_files_are_errors() {
    let Some(dir) = data_dir() else { return };
    let s = read(&dir, "pab_skeleton.ozz");
    for len in 0..s.len() {
        let e = skeleton_from_slice(&s[..len], Path::new("s")).err();
        let e = e.unwrap_or_else(|| panic!("prefix of {len} bytes accepted"));
        assert!(byte_at(&e) <= len as u64, "{e}");
    }
    let (skel, map) = skeleton_from_slice(&s, Path::new("s")).unwrap();
    let w = read(&dir, "pab_walk.ozz");
    for len in (0..w.len()).step_by(7).chain(w.len() - 8..w.len()) {
        let e = animation_from_slice(&w[..len], Path::new("w"), &skel, &map, &at(30.0)).err();
        let e = e.unwrap_or_else(|| panic!("prefix of {len} bytes accepted"));
        assert!(byte_at(&e) <= len as u64, "{e}");
    }
}

// ---------------------------------------------------------------------------
// Properties: never a panic, never an allocation the input does not justify
// ---------------------------------------------------------------------------

fn fuzz_skeleton(bytes: &[u8]) -> Option<(OwnedSkeleton, Vec<u16>)> {
    let (r, peak) = peak_of(|| skeleton_from_slice(bytes, Path::new("fuzz")));
    assert!(peak <= allowed_peak(bytes.len(), None), "peak {peak}");
    match r {
        Ok(v) => Some(v),
        Err(e) => {
            assert!(
                byte_at(&e) <= bytes.len() as u64 || e.location == Location::File,
                "{e}"
            );
            None
        }
    }
}

fn fuzz_animation(bytes: &[u8], skel: &OwnedSkeleton, map: &[u16]) {
    let (r, peak) =
        peak_of(|| animation_from_slice(bytes, Path::new("fuzz"), skel, map, &at(30.0)));
    assert!(
        peak <= allowed_peak(bytes.len(), r.as_ref().ok()),
        "peak {peak}"
    );
    match r {
        Ok(clip) => {
            let bytes = std::mem::size_of_val(clip.keys());
            assert!(bytes <= DEFAULT_MEMORY_BUDGET);
            assert!(clip.keys().iter().all(SoaTransform::is_finite));
        }
        Err(e) => {
            if let Location::Byte(b) = e.location {
                assert!(b <= bytes.len() as u64, "{e}");
            }
        }
    }
}

fn pab() -> Option<(Vec<u8>, Vec<u8>)> {
    let dir = data_dir()?;
    Some((
        std::fs::read(dir.join("pab_skeleton.ozz")).ok()?,
        std::fs::read(dir.join("pab_walk.ozz")).ok()?,
    ))
}

fn mutate(bytes: &mut [u8], edits: &[(usize, u8)]) {
    for &(at, v) in edits {
        let i = at % bytes.len();
        bytes[i] = v;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        fuzz_skeleton(&bytes);
        let (skel, map) = one_joint_skeleton();
        fuzz_animation(&bytes, &skel, &map);
    }

    #[test]
    fn random_bodies_after_valid_headers_never_panic(
        body in proptest::collection::vec(any::<u8>(), 0..512),
        counts in proptest::collection::vec(0u32..40, 14),
    ) {
        let mut s = header("ozz-skeleton", 2);
        s.extend_from_slice(&counts[0].to_le_bytes());
        s.extend_from_slice(&body);
        fuzz_skeleton(&s);
        let mut a = header("ozz-animation", 7);
        a.extend_from_slice(&1.0f32.to_le_bytes());
        a.extend_from_slice(&(counts[1] % 2).to_le_bytes());
        for c in &counts[2..] {
            a.extend_from_slice(&c.to_le_bytes());
        }
        a.extend_from_slice(&body);
        let (skel, map) = one_joint_skeleton();
        fuzz_animation(&a, &skel, &map);
    }

    #[test]
    fn mutated_small_archives_never_panic(
        edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6),
    ) {
        let (skel, map) = one_joint_skeleton();
        let mut a = small_animation();
        mutate(&mut a, &edits);
        fuzz_animation(&a, &skel, &map);
    }

    #[test]
    fn mutated_pab_skeleton_never_panics(
        edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8),
    ) {
        let Some((mut s, _)) = pab() else { return Ok(()) };
        mutate(&mut s, &edits);
        fuzz_skeleton(&s);
    }

    #[test]
    fn mutated_pab_walk_never_panics(
        edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8),
    ) {
        let Some((s, mut w)) = pab() else { return Ok(()) };
        let (skel, map) = skeleton_from_slice(&s, Path::new("s")).unwrap();
        mutate(&mut w, &edits);
        fuzz_animation(&w, &skel, &map);
    }
}

#[test]
fn public_constants() {
    assert_eq!(ozz::SKELETON_VERSION, 2);
    assert_eq!(ozz::ANIMATION_VERSION, 7);
    assert!((DEFAULT_SAMPLE_RATE - 30.0).abs() < f32::EPSILON);
}
