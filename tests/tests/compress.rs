//! Compressed clips: container validity (truncated, bit-flipped and random
//! bytes are errors, never panics), the smallest-three worked example, time
//! edge cases, and the error bound measured independently on random
//! skeletons and clips and on the CMU BVH data.

#[path = "../support/mod.rs"]
mod support;

use proptest::prelude::*;
use sinew_core::clip::{RawClip, TimeMode};
use sinew_core::compressed::{
    self, CompressedClip, Defaults, PlaybackCache, PlaybackState, RotationFormat, COMPRESSED_MAGIC,
    HEADER_BYTES,
};
use sinew_core::soa::{get_joint, set_joint};
use sinew_core::{Error, Quat, Skeleton, SoaTransform, Transform, Vec3};
use sinew_std::compress::{compress, measure_error, CompressOptions, OwnedCompressedClip};
use sinew_std::{AlignedBytes, OwnedClip, OwnedSkeleton};
use support::*;

fn humanoid_compressed(rotation: RotationFormat) -> OwnedCompressedClip {
    let h = humanoid();
    let opts = CompressOptions {
        rotation,
        ..CompressOptions::default()
    };
    compress(&h.skeleton.view(), &h.clips[0].view(), &opts)
        .unwrap()
        .0
}

fn sample_ok(c: &CompressedClip<'_>, rest: &[SoaTransform], t: f32) -> Vec<SoaTransform> {
    let mut out = sentinel_pose(c.soa_count(), 7.0);
    c.sample_with_rest(t, TimeMode::Loop, rest, &mut out)
        .unwrap();
    out
}

// ---------------------------------------------------------------------------
// Validity
// ---------------------------------------------------------------------------

#[test]
fn validity_header() {
    let c = humanoid_compressed(RotationFormat::DropW);
    let good = c.bytes();
    assert!(CompressedClip::from_bytes(good).is_ok());
    let err = |f: &dyn Fn(&mut [u8])| {
        let mut b = AlignedBytes::copy_from(good);
        f(b.as_mut_slice());
        CompressedClip::from_bytes(b.as_slice()).map(|_| ())
    };
    assert_eq!(err(&|b| b[0] = b'X'), Err(Error::BadMagic));
    // v1 and v2 containers (no curvature bytes), v3 (no component drops),
    // v4 (units stored for tracks without an animated lane), v5 (one
    // rotation format per clip), v6 (animated lanes in their joints'
    // blocks) and a future version.
    for v in [1u8, 2, 3, 4, 5, 6, 8] {
        assert_eq!(
            err(&|b| b[8] = v),
            Err(Error::UnsupportedVersion {
                found: u32::from(v)
            })
        );
    }
    assert_eq!(err(&|b| b[12..16].fill(0)), Err(Error::NoJoints));
    assert_eq!(err(&|b| b[16..20].fill(0)), Err(Error::InvalidSampleRate));
    for bad in [f32::NAN, f32::from_bits(1)] {
        // NaN, and a rate so small that the duration overflows (a bit flip
        // the fuzz test found: sampling then saw an infinite time).
        assert_eq!(
            err(&|b| b[20..24].copy_from_slice(&bad.to_le_bytes())),
            Err(Error::InvalidSampleRate)
        );
    }
    assert!(matches!(err(&|b| b[36] = 7), Err(Error::Corrupt { .. })));
    assert!(matches!(err(&|b| b[60] = 1), Err(Error::Corrupt { .. })));
    assert!(matches!(err(&|b| b[24] ^= 16), Err(Error::Corrupt { .. })));
    // Misaligned view.
    let mut shifted = AlignedBytes::zeroed(good.len() + 4);
    shifted.as_mut_slice()[4..].copy_from_slice(good);
    assert_eq!(
        CompressedClip::from_bytes(&shifted.as_slice()[4..]).map(|_| ()),
        Err(Error::Misaligned)
    );
}

#[test]
fn validity_every_truncation_is_an_error() {
    let c = humanoid_compressed(RotationFormat::SmallestThree);
    let good = c.bytes();
    for len in 0..good.len() {
        let b = AlignedBytes::copy_from(&good[..len]);
        let r = CompressedClip::from_bytes(b.as_slice());
        assert!(
            matches!(r, Err(Error::Truncated { .. })),
            "{len}: {:?}",
            r.map(|_| ())
        );
    }
}

#[test]
fn rest_pose_clip_needs_the_rest_pose() {
    let c = humanoid_compressed(RotationFormat::DropW);
    let v = c.view();
    assert_eq!(v.defaults(), Defaults::RestPose);
    let mut out = vec![SoaTransform::IDENTITY; v.soa_count()];
    assert!(matches!(
        v.sample(0.0, TimeMode::Loop, &mut out),
        Err(Error::BadLength {
            buffer: "rest pose",
            ..
        })
    ));
    assert!(matches!(
        v.sample_with_rest(0.0, TimeMode::Loop, &[], &mut out),
        Err(Error::BadLength { .. })
    ));
    let rest = humanoid().skeleton.view().rest_pose().to_vec();
    assert!(matches!(
        v.sample_with_rest(0.0, TimeMode::Loop, &rest, &mut out[1..]),
        Err(Error::BadLength { .. })
    ));
}

/// Sampling a clip that passed validation never panics and gives finite poses.
fn exercise(bytes: &[u8]) {
    let Ok(c) = CompressedClip::from_bytes(bytes) else {
        return;
    };
    let rest = vec![SoaTransform::IDENTITY; c.soa_count()];
    let mut out = vec![SoaTransform::IDENTITY; c.soa_count()];
    let d = c.duration();
    for t in [0.0, d * 0.37, d, -1.3, d * 5.1] {
        for mode in [TimeMode::Loop, TimeMode::Clamp] {
            c.sample_with_rest(t, mode, &rest, &mut out).unwrap();
            assert!(out.iter().all(SoaTransform::is_finite), "t {t}");
        }
    }
    for f in [0, c.frame_count() - 1] {
        c.decode_frame(f, &rest, &mut out).unwrap();
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn bit_flips_are_errors_or_valid(
        format in 0u8..3,
        flips in prop::collection::vec((any::<prop::sample::Index>(), 0u8..8), 1..4),
    ) {
        let rot = FORMATS[usize::from(format)];
        let c = humanoid_compressed_cached(rot);
        let mut b = AlignedBytes::copy_from(c.bytes());
        let len = b.len();
        for (i, bit) in &flips {
            b.as_mut_slice()[i.index(len)] ^= 1 << bit;
        }
        exercise(b.as_slice());
    }

    #[test]
    fn random_bytes_after_a_valid_header_are_errors_or_valid(
        body in prop::collection::vec(any::<u8>(), 0..2048),
        keep in 0usize..=HEADER_BYTES,
    ) {
        let c = humanoid_compressed_cached(RotationFormat::DropW);
        let mut bytes = c.bytes()[..keep].to_vec();
        bytes.extend_from_slice(&body);
        let b = AlignedBytes::copy_from(&bytes);
        exercise(b.as_slice());
    }

    #[test]
    fn random_bytes_are_errors(body in prop::collection::vec(any::<u8>(), 0..512)) {
        let mut bytes = COMPRESSED_MAGIC.to_vec();
        bytes.extend_from_slice(&body);
        let b = AlignedBytes::copy_from(&bytes);
        exercise(b.as_slice());
        let b = AlignedBytes::copy_from(&body);
        exercise(b.as_slice());
    }
}

fn humanoid_compressed_cached(rot: RotationFormat) -> &'static OwnedCompressedClip {
    use std::sync::OnceLock;
    static A: OnceLock<OwnedCompressedClip> = OnceLock::new();
    static B: OnceLock<OwnedCompressedClip> = OnceLock::new();
    static C: OnceLock<OwnedCompressedClip> = OnceLock::new();
    match rot {
        RotationFormat::DropW => A.get_or_init(|| humanoid_compressed(rot)),
        RotationFormat::SmallestThree => B.get_or_init(|| humanoid_compressed(rot)),
        RotationFormat::PerLane => C.get_or_init(|| humanoid_compressed(rot)),
    }
}

// ---------------------------------------------------------------------------
// Worked example and time edge cases
// ---------------------------------------------------------------------------

#[test]
fn smallest_three_worked_example() {
    // docs: q = (0.9659, 0, 0, 0.2588) as (w, x, y, z): 30° about z.
    let q = Quat::from_rotation_z(30f32.to_radians());
    let (dropped, kept) = compressed::codec::smallest_three_split(q);
    assert_eq!(dropped, 3, "w is the largest component");
    let codes = kept.map(|c| compressed::codec::smallest_three_code(c, 10));
    assert_eq!(codes, [512, 512, 699]);
    let dec = codes.map(|c| compressed::codec::smallest_three_decode(c, 10));
    assert!(close(dec[2], 0.2592, 1e-4), "{dec:?}");
    assert!(close(dec[0], 0.0007, 1e-4), "{dec:?}");
    let r = compressed::codec::smallest_three_rotation(dropped, dec[0], dec[1], dec[2]);
    assert!(close(r.w, 0.9658, 1e-4), "{r:?}");
    // The angle between them, in f64: 0.12°.
    let dot = f64::from(q.x) * f64::from(r.x)
        + f64::from(q.y) * f64::from(r.y)
        + f64::from(q.z) * f64::from(r.z)
        + f64::from(q.w) * f64::from(r.w);
    let n = (f64::from(r.dot(r))).sqrt();
    let deg = (2.0 * (dot / n).min(1.0).acos()).to_degrees();
    assert!((deg - 0.12).abs() < 0.01, "{deg}");
}

#[test]
fn time_edge_cases() {
    let h = humanoid();
    let c = humanoid_compressed(RotationFormat::DropW);
    let v = c.view();
    let raw = h.clips[0].view();
    let rest = h.skeleton.view().rest_pose().to_vec();
    let mut out = vec![SoaTransform::IDENTITY; v.soa_count()];
    for t in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        for mode in [TimeMode::Loop, TimeMode::Clamp] {
            assert_eq!(
                v.sample_with_rest(t, mode, &rest, &mut out),
                Err(Error::NonFinite { what: "time" })
            );
        }
    }
    // Negative and past-the-end times map exactly as the raw clip maps them.
    for t in [-0.01, -1.0, -123.4, raw.duration() + 0.3, 1e6] {
        for mode in [TimeMode::Loop, TimeMode::Clamp] {
            assert_eq!(v.locate(t, mode), raw.locate(t, mode), "t {t} {mode:?}");
            v.sample_with_rest(t, mode, &rest, &mut out).unwrap();
            assert!(out.iter().all(SoaTransform::is_finite));
        }
    }
    // Loop: t and t + duration sample the same pose.
    let a = sample_ok(&v, &rest, 0.1);
    let b = sample_ok(&v, &rest, 0.1 - raw.duration());
    assert_poses_close(&a, &b, h.skeleton.joint_count(), 1e-4);
}

// ---------------------------------------------------------------------------
// The bound, measured independently
// ---------------------------------------------------------------------------

/// How one joint moves in a random clip.
#[derive(Clone, Debug)]
enum Motion {
    /// Exactly the rest pose (a default track under bind-pose stripping).
    Rest,
    /// One constant transform.
    Constant(Transform),
    /// A smooth random walk from a start transform.
    Smooth(Transform, Vec3, Vec3, f32),
    /// Every frame flips to the near-opposite quaternion (same rotation, or
    /// nearly), with jumps in translation.
    Flipping(Transform, f32),
}

/// A transform with unit scale.
fn unscaled() -> impl Strategy<Value = Transform> {
    transform(0.5, 2.0).prop_map(|t| Transform::new(t.translation, t.rotation, Vec3::ONE))
}

fn motion() -> impl Strategy<Value = Motion> {
    prop_oneof![
        2 => Just(Motion::Rest),
        1 => transform(0.5, 2.0).prop_map(Motion::Constant),
        3 => (unscaled(), unit_axis(), vec3_in(-1.0, 1.0), 0.0f32..0.3)
            .prop_map(|(t, a, v, w)| Motion::Smooth(t, a, v, w)),
        1 => (transform(0.8, 1.25), unit_axis(), vec3_in(-1.0, 1.0), 0.0f32..0.3)
            .prop_map(|(t, a, v, w)| Motion::Smooth(t, a, v, w)),
        1 => (unscaled(), 0.0f32..0.02).prop_map(|(t, e)| Motion::Flipping(t, e)),
    ]
}

fn key(m: &Motion, rest: &Transform, f: usize, big: f32) -> Transform {
    let f32f = f as f32;
    match m {
        Motion::Rest => *rest,
        Motion::Constant(t) => *t,
        Motion::Smooth(t, axis, vel, w) => Transform::new(
            t.translation * big + *vel * (0.05 * f32f),
            (Quat::from_axis_angle(*axis, w * f32f) * t.rotation).normalize(),
            // Unit scales stay exactly 1; others breathe by up to 2%.
            if t.scale == Vec3::ONE {
                t.scale
            } else {
                t.scale * (1.0 + 0.02 * (0.3 * f32f).sin())
            },
        ),
        Motion::Flipping(t, e) => {
            let q = (Quat::from_rotation_x(e * f32f) * t.rotation).normalize();
            let q = if f % 2 == 1 { -q } else { q };
            Transform::new(t.translation * big, q, t.scale)
        }
    }
}

/// The rotation formats a random case picks from (by index).
const FORMATS: [RotationFormat; 3] = [
    RotationFormat::DropW,
    RotationFormat::SmallestThree,
    RotationFormat::PerLane,
];

fn random_case() -> impl Strategy<Value = (Joints, Vec<Motion>, usize, f32, u8)> {
    random_joints(10, 0.8, 1.25).prop_flat_map(|j| {
        let n = j.len();
        (
            Just(j),
            prop::collection::vec(motion(), n),
            prop_oneof![1 => Just(1usize), 1 => Just(2usize), 3 => 3usize..40],
            prop_oneof![3 => Just(1.0f32), 1 => Just(50.0f32)],
            0u8..3,
        )
    })
}

fn build_case(
    joints: &Joints,
    motions: &[Motion],
    frames: usize,
    big: f32,
) -> (OwnedSkeleton, OwnedClip) {
    let skel = OwnedSkeleton::build(&joints.defs()).unwrap();
    let view = skel.view();
    // Skeleton order differs from input order: map by name.
    let n = view.joint_count();
    let mut keys = Vec::new();
    for f in 0..frames {
        let mut pose = vec![Transform::IDENTITY; n];
        for (i, m) in motions.iter().enumerate() {
            let j = view.find_joint(&joints.names[i]).unwrap();
            pose[j] = key(m, &joints.rest[i], f, big);
        }
        keys.extend(to_soa(&pose));
    }
    let clip = OwnedClip::new("random", 30.0, view.soa_count(), keys).unwrap();
    (skel, clip)
}

fn check_bound(skel: &Skeleton<'_>, clip: &RawClip<'_>, opts: &CompressOptions) -> f32 {
    let (c, report) = compress(skel, clip, opts).unwrap();
    let stats = measure_error(skel, clip, &c.view(), opts.shell).unwrap();
    assert!(
        stats.max <= opts.error,
        "verified max {} > bound {} (compressor said {}, {} passes)",
        stats.max,
        opts.error,
        report.max_error,
        report.passes
    );
    assert!(stats.mean <= stats.p99.max(stats.mean) && stats.p99 <= stats.max);
    stats.max
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn measured_error_stays_under_the_bound(
        (joints, motions, frames, big, format) in random_case(),
        strip in any::<bool>(),
    ) {
        let (skel, clip) = build_case(&joints, &motions, frames, big);
        let opts = CompressOptions {
            error: 1e-3,
            shell: 0.05,
            segment_frames: 8,
            rotation: FORMATS[usize::from(format)],
            rest_pose_stripping: strip,
        };
        check_bound(&skel.view(), &clip.view(), &opts);
    }
}

#[test]
fn humanoid_every_rotation_format_meets_the_bound() {
    let h = humanoid();
    for rotation in FORMATS {
        for clip in &h.clips {
            let opts = CompressOptions {
                rotation,
                ..CompressOptions::default()
            };
            check_bound(&h.skeleton.view(), &clip.view(), &opts);
            let (c, _) = compress(&h.skeleton.view(), &clip.view(), &opts).unwrap();
            let raw = h.skeleton.joint_count() * clip.frame_count() * 40;
            assert!(
                c.bytes().len() * 5 < raw,
                "{rotation:?}: {} of {raw}",
                c.bytes().len()
            );
        }
    }
}

#[test]
fn constant_clip_is_tiny_and_exact() {
    let h = humanoid();
    let view = h.skeleton.view();
    let rest = view.rest_pose().to_vec();
    let keys: Vec<SoaTransform> = (0..50).flat_map(|_| rest.iter().copied()).collect();
    let clip = OwnedClip::new("still", 30.0, view.soa_count(), keys).unwrap();
    let (c, _) = compress(&view, &clip.view(), &CompressOptions::default()).unwrap();
    let cv = c.view();
    assert_eq!(cv.animated_lane_count(), 0);
    let stats = measure_error(&view, &clip.view(), &cv, 0.03).unwrap();
    assert_eq!(stats.max, 0.0);
    assert!(c.bytes().len() < 512, "{}", c.bytes().len());
}

/// Clip components below `TINY` (float noise whose products are subnormal,
/// which costs x86 a microcode assist per operation) compress as zero: an
/// animated and a constant rotation with 6e-39 and 3.4e-21 components,
/// and a 1e-20 translation, decode without any component in (0, `TINY`)
/// at frames and between them, within the bound of the original keys.
#[test]
fn tiny_components_compress_as_zero() {
    let h = humanoid();
    let view = h.skeleton.view();
    let rest = view.rest_pose().to_vec();
    let frames = 40;
    let mut keys = Vec::new();
    for f in 0..frames {
        let mut pose = rest.clone();
        for j in 0..view.joint_count() {
            let mut t = get_joint(&rest, j).unwrap();
            let a = 0.3 + 0.05 * f as f32 + 0.1 * j as f32;
            match j % 3 {
                0 => t.rotation = Quat::new(-6e-39, 3.4e-21, (a * 0.5).sin(), (a * 0.5).cos()),
                1 => {
                    t.rotation = Quat::new(-6e-39, 3.4e-21, 0.6, 0.8);
                    t.translation.x = 1e-20;
                }
                _ => {}
            }
            set_joint(&mut pose, j, &t).unwrap();
        }
        keys.extend(pose);
    }
    let clip = OwnedClip::new("noise", 30.0, view.soa_count(), keys).unwrap();
    let tiny = sinew_core::math::TINY;
    for rotation in FORMATS {
        let opts = CompressOptions {
            rotation,
            ..CompressOptions::default()
        };
        check_bound(&view, &clip.view(), &opts);
        let (c, _) = compress(&view, &clip.view(), &opts).unwrap();
        let cv = c.view();
        for i in 0..=4 * frames {
            let t = cv.duration() * i as f32 / (4 * frames) as f32;
            let out = sample_ok(&cv, &rest, t);
            let floats: &[f32] = bytemuck::cast_slice(&out);
            for (k, v) in floats.iter().enumerate() {
                assert!(
                    *v == 0.0 || v.abs() >= tiny,
                    "{rotation:?}, t {t}: float {k} is {v:e}"
                );
            }
        }
    }
}

#[test]
fn cmu_bvh_meets_the_bound() {
    let Some(dir) = shared_data("bvh/cmu") else {
        return;
    };
    // A few clips in debug builds (the full set is measured in README figures).
    let files: Vec<_> = files_with_extension(&dir, &["bvh"])
        .into_iter()
        .filter(|p| {
            let s = p.to_string_lossy();
            s.ends_with("daz-friendly/09_01.bvh") || s.ends_with("mb-friendly/02_01.bvh")
        })
        .collect();
    assert_eq!(files.len(), 2, "{files:?}");
    let assets = sinew_std::import::load::load_files(
        &files,
        &sinew_std::import::load::LoadOptions::default(),
    )
    .unwrap();
    for a in &assets {
        assert_eq!(a.units, "metres");
        let skel = a.skeleton.view();
        let clip = a.clips[0].view();
        let opts = CompressOptions::default();
        let (c, _) = compress(&skel, &clip, &opts).unwrap();
        let stats = measure_error(&skel, &clip, &c.view(), opts.shell).unwrap();
        assert!(stats.max <= 1e-4, "{}: {stats:?}", a.source.display());
        let raw = skel.joint_count() * clip.frame_count() * 40;
        let ratio = raw as f64 / c.bytes().len() as f64;
        assert!(ratio > 12.0, "{}: ratio {ratio}", a.source.display());
    }
}

// ---------------------------------------------------------------------------
// SIMD sampler against its scalar twin
// ---------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn simd_matches_reference(
        (joints, motions, frames, big, format) in random_case(),
        strip in any::<bool>(),
        times in prop::collection::vec(-3.0f32..6.0, 4),
    ) {
        let (skel, clip) = build_case(&joints, &motions, frames, big);
        let view = skel.view();
        let opts = CompressOptions {
            error: 1e-3,
            shell: 0.05,
            segment_frames: 8,
            rotation: FORMATS[usize::from(format)],
            rest_pose_stripping: strip,
        };
        let (c, _) = compress(&view, &clip.view(), &opts).unwrap();
        let cv = c.view();
        let rest = view.rest_pose();
        let mut a = sentinel_pose(cv.soa_count(), 7.0);
        let mut b = sentinel_pose(cv.soa_count(), 9.0);
        for t in times {
            for mode in [TimeMode::Loop, TimeMode::Clamp] {
                cv.sample_with_rest(t, mode, rest, &mut a).unwrap();
                compressed::reference::sample(&cv, t, mode, rest, &mut b).unwrap();
                // Translations scale with `big`: compare relative to it.
                assert_poses_close(&a, &b, cv.soa_count() * 4, TOL * big);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Tight bounds push lanes to wide rates (one read per component) and
    /// verbatim segments; random segment lengths give 1- and 2-frame
    /// segments and long trends. The lane-wise decoder still equals the
    /// joint-by-joint reference within 1e-5 (relative to the clip's size).
    #[test]
    fn simd_matches_reference_at_every_rate(
        (joints, motions, frames, big, format) in random_case(),
        error in prop_oneof![Just(1e-7f32), Just(1e-5f32), Just(1e-3f32)],
        segment_frames in 1usize..24,
        times in prop::collection::vec(-1.0f32..3.0, 3),
    ) {
        let (skel, clip) = build_case(&joints, &motions, frames, big);
        let view = skel.view();
        let opts = CompressOptions {
            error: error * big,
            shell: 0.05,
            segment_frames,
            rotation: FORMATS[usize::from(format)],
            rest_pose_stripping: true,
        };
        let (c, _) = compress(&view, &clip.view(), &opts).unwrap();
        let cv = c.view();
        let rest = view.rest_pose();
        let mut a = sentinel_pose(cv.soa_count(), 7.0);
        let mut b = sentinel_pose(cv.soa_count(), 9.0);
        let d = cv.duration();
        let stored = (0..cv.frame_count()).map(|f| f as f32 / clip.view().sample_rate());
        for t in times.into_iter().map(|t| t * d.max(0.1)).chain(stored) {
            cv.sample_with_rest(t, TimeMode::Clamp, rest, &mut a).unwrap();
            compressed::reference::sample(&cv, t, TimeMode::Clamp, rest, &mut b).unwrap();
            assert_poses_close(&a, &b, cv.soa_count() * 4, TOL * big);
        }
    }
}

/// The compressor's last refinement stores single components one bit
/// coarser where the bound allows it; such lanes decode as the reference
/// decodes them, and the independently measured error stays under the bound.
#[test]
fn component_drops_are_used_and_decode_like_the_reference() {
    let h = humanoid();
    let view = h.skeleton.view();
    let raw = h.clips[0].view();
    for rotation in FORMATS {
        let opts = CompressOptions {
            rotation,
            ..CompressOptions::default()
        };
        let (c, _) = compress(&view, &raw, &opts).unwrap();
        let cv = c.view();
        let uneven = (0..cv.segment_count())
            .flat_map(|s| cv.segment_rates(s))
            .filter(|r| r[0] != r[1] || r[1] != r[2])
            .count();
        assert!(uneven > 0, "{rotation:?}: no lane with a dropped component");
        let rest = view.rest_pose();
        let mut a = sentinel_pose(cv.soa_count(), 7.0);
        let mut b = sentinel_pose(cv.soa_count(), 9.0);
        for f in 0..2 * cv.frame_count() {
            let t = f as f32 * 0.5 / raw.sample_rate();
            cv.sample_with_rest(t, TimeMode::Clamp, rest, &mut a)
                .unwrap();
            compressed::reference::sample(&cv, t, TimeMode::Clamp, rest, &mut b).unwrap();
            assert_poses_close(&a, &b, cv.soa_count() * 4, TOL);
        }
        let stats = measure_error(&view, &raw, &cv, opts.shell).unwrap();
        assert!(stats.max <= opts.error, "{rotation:?}: {stats:?}");
    }
}

/// Every rate class appears in the high-rate cases above: a clip with a
/// bound far below f32 resolution stores verbatim lanes, and the decoder
/// reproduces its keys exactly.
#[test]
fn verbatim_lanes_decode_exactly() {
    let h = humanoid();
    let view = h.skeleton.view();
    let raw = h.clips[0].view();
    let opts = CompressOptions {
        error: 1e-9,
        ..CompressOptions::default()
    };
    let (c, report) = compress(&view, &raw, &opts).unwrap();
    let cv = c.view();
    // A bound below f32 resolution at the scene's size: every segment is
    // stored verbatim at once (one pass, no search), and the report says so.
    assert_eq!(report.raw_segments, cv.segment_count());
    assert_eq!(report.passes, 1);
    let rates: Vec<[u8; 3]> = (0..cv.segment_count())
        .flat_map(|s| cv.segment_rates(s))
        .collect();
    assert!(rates.contains(&[compressed::RAW_BITS; 3]), "{rates:?}");
    let stats = measure_error(&view, &raw, &cv, 0.03).unwrap();
    assert!(stats.max <= 1e-9, "{stats:?}");
}

/// `clip` with every root joint's translation moved by `offset` (metres).
fn moved(skel: &Skeleton<'_>, clip: &RawClip<'_>, offset: Vec3) -> OwnedClip {
    let roots: Vec<usize> = (0..skel.joint_count())
        .filter(|&j| skel.parent(j).is_none())
        .collect();
    let mut keys = Vec::new();
    for f in 0..clip.frame_count() {
        let mut pose = clip.frame(f).unwrap().to_vec();
        for &j in &roots {
            let mut t = get_joint(&pose, j).unwrap();
            t.translation = t.translation + offset;
            set_joint(&mut pose, j, &t).unwrap();
        }
        keys.extend(pose);
    }
    OwnedClip::new("moved", clip.sample_rate(), clip.soa_count(), keys).unwrap()
}

/// The bound is about the figure, wherever it stands: the same clip 40 m
/// and 60 m from the origin compresses to within 3% of its size at the
/// origin with no verbatim segment, and 3 km out (where f32 steps are
/// 0.24 mm, coarser than the 0.1 mm bound) it still meets the bound and
/// the report says that the keys themselves are coarser than the bound.
#[test]
fn a_figure_far_from_the_origin_compresses_as_at_the_origin() {
    let h = humanoid();
    let skel = h.skeleton.view();
    let opts = CompressOptions::default();
    let at_origin = compress(&skel, &h.clips[0].view(), &opts).unwrap().0;
    for d in [40.0f32, 60.0, 3000.0] {
        let clip = moved(&skel, &h.clips[0].view(), Vec3::new(d, 0.0, -0.5 * d));
        let (c, report) = compress(&skel, &clip.view(), &opts).unwrap();
        let stats = measure_error(&skel, &clip.view(), &c.view(), opts.shell).unwrap();
        assert!(stats.max <= opts.error, "{d} m: {stats:?}");
        assert_eq!(
            report.root_resolution > opts.error,
            d > 100.0,
            "{d} m: {report:?}"
        );
        if d < 100.0 {
            assert_eq!(report.raw_segments, 0, "{d} m");
            let (far, near) = (c.bytes().len(), at_origin.bytes().len());
            assert!(
                far * 100 <= near * 103,
                "{d} m: {far} bytes, {near} at the origin"
            );
        }
    }
}

// ---------------------------------------------------------------------------
// Playback cache
// ---------------------------------------------------------------------------

fn bits(p: &[SoaTransform]) -> &[u32] {
    bytemuck::cast_slice(p)
}

/// Samples `times` through one cache and without, and checks that every
/// output has the same bits; returns the frames the cache decoded.
/// With a cache of the least memory and with one that decodes ahead, each
/// over a buffer of NaNs.
fn cached_equals_uncached(
    c: &CompressedClip<'_>,
    rest: &[SoaTransform],
    times: &[(f32, TimeMode)],
) -> [u64; 2] {
    let n = c.soa_count();
    [
        PlaybackCache::min_blocks_for(n),
        PlaybackCache::blocks_for(n),
    ]
    .map(|blocks| {
        // NaN in every slot: a value the cache did not write would show.
        let mut buf = sentinel_pose(blocks, f32::NAN);
        let mut cache = PlaybackCache::new(&mut buf);
        let mut want = sentinel_pose(n, 7.0);
        let mut got = sentinel_pose(n, 9.0);
        for &(t, mode) in times {
            c.sample_with_rest(t, mode, rest, &mut want).unwrap();
            c.sample_cached(t, mode, rest, &mut cache, &mut got)
                .unwrap();
            assert_eq!(
                bits(&got),
                bits(&want),
                "t = {t} ({mode:?}), {blocks} blocks"
            );
        }
        cache.frames_decoded()
    })
}

/// Forward at 60 Hz over a 30 Hz clip decodes each key frame once; going
/// backwards, seeking, exact key times, looping and clamping past either
/// end all give the uncached sampler's bits; in every rotation format and
/// with bound-sized verbatim lanes.
#[test]
fn playback_cache_matches_the_uncached_sampler_bit_for_bit() {
    let h = humanoid();
    let skel = h.skeleton.view();
    let rest = skel.rest_pose();
    for (rotation, error) in [
        (RotationFormat::DropW, 1e-4),
        (RotationFormat::SmallestThree, 1e-4),
        (RotationFormat::PerLane, 1e-4),
        (RotationFormat::DropW, 1e-9),
        (RotationFormat::PerLane, 1e-9),
    ] {
        let opts = CompressOptions {
            rotation,
            error,
            ..CompressOptions::default()
        };
        let raw = h.clips[0].view();
        let c = compress(&skel, &raw, &opts).unwrap().0;
        let c = c.view();
        let (rate, frames) = (c.sample_rate(), c.frame_count());
        let ticks = 2 * frames - 2; // the clip's duration at twice its rate
        let forward: Vec<_> = (0..=ticks)
            .map(|i| (i as f32 * 0.5 / rate, TimeMode::Clamp))
            .collect();
        let decoded = cached_equals_uncached(&c, rest, &forward);
        assert_eq!(
            decoded, [frames as u64; 2],
            "{rotation:?} {error}: each frame once"
        );
        let backward: Vec<_> = forward.iter().rev().copied().collect();
        let decoded = cached_equals_uncached(&c, rest, &backward);
        assert_eq!(
            decoded, [frames as u64; 2],
            "{rotation:?} {error}: each frame once, backward"
        );
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 40) as f32 / (1u64 << 24) as f32
        };
        let d = c.duration();
        let mut mixed: Vec<(f32, TimeMode)> = (0..200)
            .map(|i| {
                let mode = if i % 3 == 0 {
                    TimeMode::Loop
                } else {
                    TimeMode::Clamp
                };
                ((next() * 3.0 - 1.0) * d, mode)
            })
            .collect();
        mixed.extend((0..frames).map(|f| (f as f32 / rate, TimeMode::Clamp)));
        mixed.extend([
            (-0.0, TimeMode::Clamp),
            (d, TimeMode::Loop),
            (1e9, TimeMode::Clamp),
        ]);
        cached_equals_uncached(&c, rest, &mixed);
    }
}

/// A cache rebuilt from its state before every sample (as a crowd's
/// per-character record or the C ABI keeps it) decodes what one long-lived
/// cache decodes and gives the same bits; state taken over other memory
/// resumes empty.
#[test]
fn playback_cache_resumes_from_its_state() {
    let h = humanoid();
    let skel = h.skeleton.view();
    let rest = skel.rest_pose();
    let c = compress(&skel, &h.clips[1].view(), &CompressOptions::default())
        .unwrap()
        .0;
    let c = c.view();
    let n = c.soa_count();
    let mut buf = vec![SoaTransform::IDENTITY; PlaybackCache::blocks_for(n)];
    let mut state = PlaybackState::EMPTY;
    let (mut want, mut got) = (sentinel_pose(n, 7.0), sentinel_pose(n, 9.0));
    let ticks = 2 * c.frame_count() - 2;
    for i in 0..=ticks {
        let t = i as f32 * 0.5 / c.sample_rate();
        c.sample_with_rest(t, TimeMode::Clamp, rest, &mut want)
            .unwrap();
        let mut cache = PlaybackCache::resume(&mut buf, &state);
        c.sample_cached(t, TimeMode::Clamp, rest, &mut cache, &mut got)
            .unwrap();
        state = cache.state();
        assert_eq!(bits(&got), bits(&want), "t = {t}");
    }
    let decoded = PlaybackCache::resume(&mut buf, &state).frames_decoded();
    assert_eq!(decoded, c.frame_count() as u64, "each frame once");
    // The same state over another buffer holds nothing: the next sample
    // decodes both frames (and is still exact).
    let mut other = sentinel_pose(PlaybackCache::blocks_for(n), f32::NAN);
    let mut cache = PlaybackCache::resume(&mut other, &state);
    let t = 0.3 / c.sample_rate();
    c.sample_cached(t, TimeMode::Clamp, rest, &mut cache, &mut got)
        .unwrap();
    c.sample_with_rest(t, TimeMode::Clamp, rest, &mut want)
        .unwrap();
    assert_eq!(bits(&got), bits(&want));
    assert_eq!(cache.frames_decoded(), decoded + 2);
    assert_eq!(PlaybackState::default(), PlaybackState::EMPTY);
}

/// One cache handed two clips in turn starts over on each: results stay
/// exact. Bad input is an error that leaves the output and cache as
/// they were.
#[test]
fn playback_cache_errors_and_clip_changes() {
    let h = humanoid();
    let skel = h.skeleton.view();
    let rest = skel.rest_pose();
    let opts = CompressOptions::default();
    let a = compress(&skel, &h.clips[0].view(), &opts).unwrap().0;
    let b = compress(&skel, &h.clips[1].view(), &opts).unwrap().0;
    let (a, b) = (a.view(), b.view());
    let n = a.soa_count();
    let mut buf = vec![SoaTransform::IDENTITY; PlaybackCache::blocks_for(n)];
    let mut cache = PlaybackCache::new(&mut buf);
    let mut want = sentinel_pose(n, 7.0);
    let mut got = sentinel_pose(n, 9.0);
    for i in 0..40 {
        let c = if i % 2 == 0 { &a } else { &b };
        let t = i as f32 * 0.013;
        c.sample_with_rest(t, TimeMode::Loop, rest, &mut want)
            .unwrap();
        c.sample_cached(t, TimeMode::Loop, rest, &mut cache, &mut got)
            .unwrap();
        assert_eq!(bits(&got), bits(&want), "{i}");
    }
    let before = got.clone();
    let decoded = cache.frames_decoded();
    let e = a.sample_cached(f32::NAN, TimeMode::Loop, rest, &mut cache, &mut got);
    assert!(matches!(e, Err(Error::NonFinite { .. })), "{e:?}");
    let e = a.sample_cached(0.1, TimeMode::Loop, &rest[..1], &mut cache, &mut got);
    assert!(
        matches!(
            e,
            Err(Error::BadLength {
                buffer: "rest pose",
                ..
            })
        ),
        "{e:?}"
    );
    let e = a.sample_cached(0.1, TimeMode::Loop, rest, &mut cache, &mut got[..n - 1]);
    assert!(
        matches!(
            e,
            Err(Error::BadLength {
                buffer: "output",
                ..
            })
        ),
        "{e:?}"
    );
    assert_eq!(bits(&got), bits(&before));
    assert_eq!(cache.frames_decoded(), decoded);
    // A clip's cache holds its animated tracks only: less than poses.
    let need = a.min_cache_blocks();
    assert!(
        need < PlaybackCache::min_blocks_for(n) && a.cache_blocks() < PlaybackCache::blocks_for(n)
    );
    let mut small = vec![SoaTransform::IDENTITY; need - 1];
    let e = a.sample_cached(
        0.1,
        TimeMode::Loop,
        rest,
        &mut PlaybackCache::new(&mut small),
        &mut got,
    );
    assert!(
        matches!(e, Err(Error::BadLength { buffer: "playback cache", expected, actual })
            if expected == need && actual == need - 1),
        "{e:?}"
    );
    assert_eq!(bits(&got), bits(&before));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// On random skeletons and clips (identity and rest-pose defaults, both
    /// rotation formats), any sequence of times sampled through a cache
    /// gives the uncached sampler's bits.
    #[test]
    fn playback_cache_is_exact_on_random_clips(
        (joints, motions, frames, big, format) in random_case(),
        strip in any::<bool>(),
        times in prop::collection::vec((-2.0f32..4.0, any::<bool>()), 1..60),
        steps in prop::collection::vec(-1.5f32..1.5, 0..60),
    ) {
        let (skel, clip) = build_case(&joints, &motions, frames, big);
        let opts = CompressOptions {
            error: 1e-3,
            shell: 0.05,
            segment_frames: 8,
            rotation: FORMATS[usize::from(format)],
            rest_pose_stripping: strip,
        };
        let (c, _) = compress(&skel.view(), &clip.view(), &opts).unwrap();
        let mut times: Vec<_> = times
            .into_iter()
            .map(|(t, looped)| (t, if looped { TimeMode::Loop } else { TimeMode::Clamp }))
            .collect();
        // Then a walk in steps of up to a frame and a half either way,
        // which moves on to neighbouring frames (and decodes ahead) in both
        // directions, turns, and crosses the loop point.
        let mut t = 0.5 * c.view().duration();
        let rate = c.view().sample_rate();
        times.extend(steps.into_iter().map(|s| {
            t += s / rate;
            (t, TimeMode::Loop)
        }));
        cached_equals_uncached(&c.view(), skel.view().rest_pose(), &times);
    }
}

/// A cache of three poses decodes the frame it moves on to together with
/// the next one in the direction of play, forward and backward; a cache of
/// two decodes the one frame. A seek decodes the two bracketing frames.
#[test]
fn playback_cache_decodes_ahead_with_three_poses() {
    let h = humanoid();
    let skel = h.skeleton.view();
    let rest = skel.rest_pose();
    let c = compress(&skel, &h.clips[0].view(), &CompressOptions::default())
        .unwrap()
        .0;
    let c = c.view();
    let n = c.soa_count();
    assert!(c.frame_count() >= 8);
    let frame = |f: f32| f / c.sample_rate();
    for (blocks, ahead) in [
        (c.min_cache_blocks(), 0),
        (c.cache_blocks(), 1),
        (PlaybackCache::blocks_for(n), 1),
    ] {
        let mut buf = vec![SoaTransform::IDENTITY; blocks];
        let mut cache = PlaybackCache::new(&mut buf);
        let mut out = sentinel_pose(n, 9.0);
        let mut step = |f: f32, want: u64| {
            let before = cache.frames_decoded();
            c.sample_cached(frame(f), TimeMode::Clamp, rest, &mut cache, &mut out)
                .unwrap();
            assert_eq!(
                cache.frames_decoded() - before,
                want,
                "frame {f}, {blocks} blocks"
            );
        };
        step(2.5, 2); // a seek: frames 2 and 3
        step(3.5, 1 + ahead); // frame 4 (and 5)
        step(4.5, 1 - ahead); // frame 5, unless held
        step(4.25, 0);
        step(1.5, 2); // a seek: frames 1 and 2
        step(0.5, 1); // backward: frame 0, the first
        step(5.5, 2); // a seek: frames 5 and 6
        step(4.5, 1 + ahead); // backward: frame 4 (and 3)
        step(3.5, 1 - ahead);
    }
}

/// On ozz's pab walk drop-W needs 20 bits or more, or verbatim floats, for
/// the up-leg rotations (they cross `w = 0`, where making `w` positive
/// flips x, y, z); per lane, the compressor gives such tracks
/// smallest-three, the other rotation lanes stay drop-W, every lane fits
/// one 64-bit window of the decoders, the bound holds and the clip is
/// no larger.
#[test]
fn per_lane_rotations_keep_pab_lanes_narrow() {
    let Some(dir) = support::shared_data("ozz") else {
        return;
    };
    let opts = sinew_std::import::ozz::OzzOptions::default();
    let clips = [dir.join("pab_walk.ozz")];
    let refs: Vec<&std::path::Path> = clips.iter().map(|p| p.as_path()).collect();
    let asset = sinew_std::import::ozz::load(&dir.join("pab_skeleton.ozz"), &refs, &opts).unwrap();
    let skel = asset.skeleton.view();
    let raw = asset.clips[0].view();
    let widest = |c: &CompressedClip<'_>| -> u8 {
        let rot: Vec<bool> = c.animated_lane_formats().map(|f| f.is_some()).collect();
        (0..c.segment_count())
            .flat_map(|s| c.segment_rates(s).zip(rot.clone()).collect::<Vec<_>>())
            .filter(|&(_, r)| r)
            .map(|(k, _)| k[0].max(k[1]).max(k[2]))
            .max()
            .unwrap_or(0)
    };
    let run = |rotation| {
        let o = CompressOptions {
            rotation,
            ..CompressOptions::default()
        };
        let (c, _) = compress(&skel, &raw, &o).unwrap();
        let stats = measure_error(&skel, &raw, &c.view(), o.shell).unwrap();
        assert!(stats.max <= o.error, "{rotation:?}: {stats:?}");
        c
    };
    let drop_w = run(RotationFormat::DropW);
    assert!(
        widest(&drop_w.view()) >= 20,
        "drop-W: {}",
        widest(&drop_w.view())
    );
    let per_lane = run(RotationFormat::PerLane);
    let v = per_lane.view();
    assert_eq!(v.rotation_format(), RotationFormat::PerLane);
    assert!(widest(&v) <= 18, "per lane: {}", widest(&v));
    let formats: Vec<_> = v.animated_lane_formats().flatten().collect();
    assert!(formats.contains(&RotationFormat::DropW), "{formats:?}");
    assert!(
        formats.contains(&RotationFormat::SmallestThree),
        "{formats:?}"
    );
    assert!(v.size_bytes() <= drop_w.view().size_bytes());
}
