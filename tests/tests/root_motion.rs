//! Root motion: extraction with loop wrap, in-place clips, accumulation in
//! the facing frame, blending across layers.

#[path = "../support/mod.rs"]
mod support;

use proptest::prelude::*;
use sinew_core::clip::RawClip;
use sinew_core::mix::root_motion::{self, rotate_y, yaw_of, RootAccumulator, RootMotion};
use sinew_core::soa::get_joint;
use sinew_core::{soa_count, Error, Quat, SoaTransform, Transform, Vec3};
use support::*;

const J: usize = 3;
const B: usize = soa_count(J);

/// A straight walk: 1.8 m forward (+z) in 1.2 s at 60 fps, turning `turn`
/// radians over the cycle, with a bobbing height.
fn walk(turn: f32) -> Vec<SoaTransform> {
    let frames = 73;
    (0..frames)
        .flat_map(|f| {
            let s = f as f32 / (frames - 1) as f32;
            let yaw = turn * s;
            // Straight ahead in clip space; the turning variant is only used
            // to check that whole cycles compose.
            let root = Transform::from_translation_rotation(
                Vec3::new(0.0, 0.9 + 0.02 * (s * std::f32::consts::TAU).sin(), 1.8 * s),
                Quat::from_rotation_y(yaw),
            );
            to_soa(&[root, Transform::IDENTITY, Transform::IDENTITY])
        })
        .collect()
}

#[test]
fn worked_example_through_a_clip() {
    let keys = walk(0.0);
    let clip = RawClip::new(60.0, B, &keys).unwrap();
    let mut per_frame = vec![RootMotion::ZERO; clip.frame_count() - 1];
    root_motion::extract(&clip, 0, &[], &mut [], &mut per_frame).unwrap();
    assert!(per_frame
        .iter()
        .all(|m| (m.translation.z - 0.025).abs() < 1e-5 && m.yaw == 0.0));
    let mut acc = RootAccumulator {
        position: Vec3::ZERO,
        yaw: 30f32.to_radians(),
    };
    acc.apply(RootMotion {
        translation: Vec3::new(0.0, 0.0, per_frame[0].translation.z),
        yaw: 0.0,
    });
    assert!((acc.position.x - 0.0125).abs() < 1e-5 && (acc.position.z - 0.0217).abs() < 1e-4);
}

#[test]
fn loops_wrap_and_accumulate_whole_cycles() {
    let keys = walk(0.0);
    let clip = RawClip::new(60.0, B, &keys).unwrap();
    let m = root_motion::root_motion(&clip, 0, 1.0, 1.5, &[], &mut []).unwrap();
    assert!((m.translation.z - 0.75).abs() < 1e-4, "{m:?}");
    assert!(m.translation.y.abs() < 0.05);
    let m = root_motion::root_motion(&clip, 0, 0.0, 3.6, &[], &mut []).unwrap();
    assert!((m.translation.z - 5.4).abs() < 1e-3, "{m:?}");
    let m = root_motion::root_motion(&clip, 0, 0.3, 0.3, &[], &mut []).unwrap();
    assert_eq!(m.translation, Vec3::ZERO);
}

#[test]
fn turning_cycles_compose() {
    let keys = walk(std::f32::consts::FRAC_PI_2);
    let clip = RawClip::new(60.0, B, &keys).unwrap();
    let one = root_motion::root_motion(&clip, 0, 0.0, 1.2, &[], &mut []).unwrap();
    let two = root_motion::root_motion(&clip, 0, 0.0, 2.4, &[], &mut []).unwrap();
    let expect = one.then(one);
    assert!(
        vec_close(two.translation, expect.translation, 1e-4),
        "{two:?} {expect:?}"
    );
    assert!((two.yaw - std::f32::consts::PI).abs() < 1e-4);
}

#[test]
fn in_place_clip_pins_the_root() {
    let mut keys = walk(1.0);
    root_motion::make_in_place(&mut keys, B, 0).unwrap();
    let first = get_joint(&keys[..B], 0).unwrap();
    for f in keys.chunks(B) {
        let r = get_joint(f, 0).unwrap();
        assert!((r.translation.x - first.translation.x).abs() < 1e-6);
        assert!((r.translation.z - first.translation.z).abs() < 1e-6);
        assert!((yaw_of(r.rotation) - yaw_of(first.rotation)).abs() < 1e-5);
    }
    // Height is kept.
    let mid = get_joint(&keys[36 * B..37 * B], 0).unwrap();
    assert!((mid.translation.y - 0.9).abs() < 0.03);
}

#[test]
fn validity() {
    let keys = walk(0.0);
    let clip = RawClip::new(60.0, B, &keys).unwrap();
    assert!(matches!(
        root_motion::root_motion(&clip, 0, 1.0, 0.5, &[], &mut []),
        Err(Error::InvalidParameter { .. })
    ));
    assert!(matches!(
        root_motion::root_motion(&clip, 0, f32::NAN, 0.5, &[], &mut []),
        Err(Error::NonFinite { .. })
    ));
    assert_eq!(
        root_motion::root_motion(&clip, 9, 0.0, 0.5, &[], &mut []),
        Err(Error::JointOutOfRange { joint: 9, count: 4 })
    );
    let mut out = vec![RootMotion::ZERO; 3];
    assert!(matches!(
        root_motion::extract(&clip, 0, &[], &mut [], &mut out),
        Err(Error::BadLength { .. })
    ));
    let mut k = keys.clone();
    assert!(matches!(
        root_motion::make_in_place(&mut k, 0, 0),
        Err(Error::BadLength { .. })
    ));
    assert!(matches!(
        root_motion::make_in_place(&mut k[..B * 2], B, 7),
        Err(Error::JointOutOfRange { .. })
    ));
    assert_eq!(
        RootMotion::blend(&[(RootMotion::ZERO, -1.0)]),
        Err(Error::InvalidWeight { layer: 0 })
    );
    assert_eq!(
        RootMotion::blend(&[(RootMotion::ZERO, 1.0), (RootMotion::ZERO, f32::NAN)]),
        Err(Error::InvalidWeight { layer: 1 })
    );
    assert_eq!(RootMotion::blend(&[]), Ok(RootMotion::ZERO));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Blending is the weighted mean; accumulating rotates into the facing frame.
    #[test]
    fn blend_and_accumulate(a in vec3_in(-1.0, 1.0), b in vec3_in(-1.0, 1.0), ya in -0.5f32..0.5, yb in -0.5f32..0.5, w in 0.01f32..1.0, facing in -3.0f32..3.0) {
        let (ma, mb) = (RootMotion { translation: a, yaw: ya }, RootMotion { translation: b, yaw: yb });
        let m = RootMotion::blend(&[(ma, w), (mb, 1.0 - w)]).unwrap();
        prop_assert!(vec_close(m.translation, a * w + b * (1.0 - w), 1e-5));
        prop_assert!((m.yaw - (ya * w + yb * (1.0 - w))).abs() < 1e-5);
        let mut acc = RootAccumulator { position: Vec3::ZERO, yaw: facing };
        acc.apply(m);
        prop_assert!(vec_close(acc.position, rotate_y(m.translation, facing), 1e-5));
        prop_assert!((acc.position.length() - m.translation.length()).abs() < 1e-4);
    }
}

/// Root motion of the compressed humanoid walk (per frame and over loops)
/// matches the raw walk's within the compressor's bound: positions within
/// twice the object-space error, yaw within twice the rotation error the
/// bound allows at the shell distance. Without the rest pose it needs, a
/// rest-pose-stripped clip says so; without scratch, too.
#[test]
fn compressed_clip_gives_the_raw_root_motion() {
    let h = humanoid();
    let skel = h.skeleton.view();
    let rest = skel.rest_pose();
    let (owned, opts) = humanoid_compressed();
    let (raw, packed) = (h.clips[0].view(), owned[0].view());
    let mut scratch = vec![SoaTransform::IDENTITY; skel.soa_count()];
    let d = raw.duration();
    let (pos_tol, yaw_tol) = (2.0 * opts.error, 2.0 * opts.error / opts.shell + 1e-5);
    let close_motion = |a: RootMotion, b: RootMotion| {
        assert!(
            vec_close(a.translation, b.translation, pos_tol),
            "{a:?} {b:?}"
        );
        assert!((a.yaw - b.yaw).abs() <= yaw_tol, "{a:?} {b:?}");
    };
    for (t0, t1) in [(0.0, d), (0.1, 0.4), (0.3, 2.5 * d)] {
        let a = root_motion::root_motion(&raw, 0, t0, t1, &[], &mut []).unwrap();
        let b = root_motion::root_motion(&packed, 0, t0, t1, rest, &mut scratch).unwrap();
        close_motion(a, b);
    }
    let mut a = vec![RootMotion::ZERO; raw.frame_count() - 1];
    let mut b = a.clone();
    root_motion::extract(&raw, 0, &[], &mut [], &mut a).unwrap();
    root_motion::extract(&packed, 0, rest, &mut scratch, &mut b).unwrap();
    for (x, y) in a.iter().zip(&b) {
        close_motion(*x, *y);
    }
    assert_eq!(
        root_motion::root_motion(&packed, 0, 0.0, d, &[], &mut scratch),
        Err(Error::BadLength {
            buffer: "rest pose",
            expected: skel.soa_count(),
            actual: 0
        })
    );
    assert_eq!(
        root_motion::root_motion(&packed, 0, 0.0, d, rest, &mut []),
        Err(Error::BadLength {
            buffer: "clip scratch",
            expected: skel.soa_count(),
            actual: 0
        })
    );
}
