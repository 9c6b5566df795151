//! The embedded procedural humanoid and its gait clips: structure, rest-pose
//! proportions, clip durations and left/right phase of the legs.

#[path = "../support/mod.rs"]
mod support;

use sinew_core::clip::TimeMode;
use sinew_core::fk::{self, FkJob};
use sinew_core::procedural::{
    self, gait_frame_count, Gait, DEFAULT_SAMPLE_RATE, HUMANOID_JOINT_COUNT,
    HUMANOID_SKELETON_BYTES,
};
use sinew_core::{Error, Mat4, Skeleton, SoaTransform, Vec3};
use sinew_std::{AlignedBytes, Humanoid};
use support::*;

fn joint(skel: &Skeleton<'_>, name: &str) -> usize {
    skel.find_joint(name)
        .unwrap_or_else(|| panic!("the humanoid has no joint {name:?}"))
}

/// True when `ancestor` is on `j`'s parent chain.
fn descends_from(skel: &Skeleton<'_>, j: usize, ancestor: usize) -> bool {
    ancestors(&parents_of(skel), j).contains(&ancestor)
}

fn rest_models(skel: &Skeleton<'_>) -> Vec<Mat4> {
    let mut models = vec![Mat4::IDENTITY; skel.joint_count()];
    fk::local_to_model(&FkJob::new(skel, skel.rest_pose()), &mut models).unwrap();
    models
}

#[test]
fn humanoid_has_the_named_parts() {
    let h = humanoid();
    let skel = h.skeleton.view();
    assert!(skel.joint_count() >= 60, "{} joints", skel.joint_count());
    assert_eq!(skel.joint_count(), HUMANOID_JOINT_COUNT);

    let pelvis = joint(&skel, "pelvis");
    assert_eq!(skel.parent(pelvis), None, "the pelvis is the root");
    let roots = (0..skel.joint_count())
        .filter(|&j| skel.parent(j).is_none())
        .count();
    assert_eq!(roots, 1, "one root");

    // Torso and head: a chain pelvis -> spine -> neck -> head.
    let spine: Vec<usize> = ["spine_01", "spine_02", "spine_03"]
        .iter()
        .map(|n| joint(&skel, n))
        .collect();
    let neck = joint(&skel, "neck_01");
    let head = joint(&skel, "head");
    assert_eq!(skel.parent(spine[0]), Some(pelvis));
    assert_eq!(skel.parent(spine[1]), Some(spine[0]));
    assert_eq!(skel.parent(spine[2]), Some(spine[1]));
    assert!(descends_from(&skel, neck, spine[2]));
    assert_eq!(skel.parent(head), Some(neck));

    for side in ["l", "r"] {
        let name = |base: &str| format!("{base}_{side}");
        // Arms hang off the upper spine through the clavicle, fingers off the hand.
        let clavicle = joint(&skel, &name("clavicle"));
        let upper = joint(&skel, &name("upper_arm"));
        let lower = joint(&skel, &name("lower_arm"));
        let hand = joint(&skel, &name("hand"));
        assert!(descends_from(&skel, clavicle, spine[2]), "{side}");
        assert!(descends_from(&skel, upper, clavicle), "{side}");
        assert!(descends_from(&skel, lower, upper), "{side}");
        assert!(descends_from(&skel, hand, lower), "{side}");
        for k in 1..=3 {
            let t = joint(&skel, &format!("thumb_0{k}_{side}"));
            assert!(descends_from(&skel, t, hand), "thumb {k} {side}");
        }
        for finger in ["index", "middle", "ring", "pinky"] {
            let mut prev = hand;
            for k in 0..=3 {
                let f = joint(&skel, &format!("{finger}_0{k}_{side}"));
                assert_eq!(skel.parent(f), Some(prev), "{finger} {k} {side}");
                prev = f;
            }
        }
        // Legs from the pelvis down to the toes.
        let thigh = joint(&skel, &name("thigh"));
        let calf = joint(&skel, &name("calf"));
        let foot = joint(&skel, &name("foot"));
        let toe = joint(&skel, &name("toe_end"));
        assert_eq!(skel.parent(thigh), Some(pelvis), "{side}");
        assert_eq!(skel.parent(calf), Some(thigh), "{side}");
        assert_eq!(skel.parent(foot), Some(calf), "{side}");
        assert!(descends_from(&skel, toe, foot), "{side}");
        // The legs are not under the spine, the arms are not under the legs.
        assert!(!descends_from(&skel, thigh, spine[0]));
        assert!(!descends_from(&skel, hand, thigh));
    }
    // Names are unique.
    for j in 0..skel.joint_count() {
        let name = skel.joint_name(j).unwrap();
        assert!(!name.is_empty(), "joint {j} has no name");
        assert_eq!(skel.find_joint(name), Some(j), "{name} is not unique");
    }
}

#[test]
fn rest_pose_proportions() {
    let h = humanoid();
    let skel = h.skeleton.view();
    let m = rest_models(&skel);
    let pos = |name: &str| m[joint(&skel, name)].translation();

    // Feet on the ground (y up, metres).
    for part in ["foot", "ball", "toe_end"] {
        for side in ["l", "r"] {
            let p = pos(&format!("{part}_{side}"));
            assert!(p.y.abs() < 0.1, "{part}_{side} at {p:?}");
        }
    }
    // Head at a plausible height, above the pelvis and the shoulders.
    let head = pos("head");
    let top = pos("head_end");
    assert!(head.y > 1.4 && head.y < 1.9, "head at {head:?}");
    assert!(
        top.y > 1.55 && top.y < 2.0 && top.y > head.y,
        "head_end at {top:?}"
    );
    let pelvis = pos("pelvis");
    assert!(pelvis.y > 0.8 && pelvis.y < 1.1, "pelvis at {pelvis:?}");
    assert!(pos("upper_arm_l").y > pelvis.y && pos("upper_arm_l").y < head.y);
    // A-pose: hands below the shoulders, out to the side, above the knees.
    for (side, sign) in [("l", 1.0f32), ("r", -1.0f32)] {
        let hand = pos(&format!("hand_{side}"));
        let shoulder = pos(&format!("upper_arm_{side}"));
        let knee = pos(&format!("calf_{side}"));
        assert!(
            hand.y < shoulder.y && hand.y > knee.y,
            "hand_{side} at {hand:?}"
        );
        assert!(hand.x * sign > shoulder.x * sign, "hand_{side} at {hand:?}");
        assert!(pos(&format!("foot_{side}")).x * sign > 0.0);
    }
    // Left and right mirror each other in x.
    for (j, model) in m.iter().enumerate() {
        let name = skel.joint_name(j).unwrap();
        if let Some(base) = name.strip_suffix("_l") {
            let l = model.translation();
            let r = pos(&format!("{base}_r"));
            assert!(
                vec_close(l, Vec3::new(-r.x, r.y, r.z), 1e-5),
                "{name}: {l:?} vs {r:?}"
            );
        }
    }
}

#[test]
fn core_builder_and_std_assets_agree() {
    let mut buf = AlignedBytes::zeroed(HUMANOID_SKELETON_BYTES);
    let written = procedural::write_humanoid_skeleton(buf.as_mut_slice()).unwrap();
    assert_eq!(written, HUMANOID_SKELETON_BYTES);
    assert_eq!(buf.as_slice(), humanoid().skeleton.bytes());
    let mut small = AlignedBytes::zeroed(HUMANOID_SKELETON_BYTES - 16);
    assert_eq!(
        procedural::write_humanoid_skeleton(small.as_mut_slice()),
        Err(Error::BufferTooSmall {
            needed: HUMANOID_SKELETON_BYTES,
            actual: HUMANOID_SKELETON_BYTES - 16
        })
    );
}

#[test]
fn clip_durations_are_ordered() {
    let h = humanoid();
    let names: Vec<&str> = h.clips.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["walk", "jog", "run"]);
    let d: Vec<f32> = h.clips.iter().map(|c| c.view().duration()).collect();
    assert!(d[0] > d[1] && d[1] > d[2], "walk > jog > run: {d:?}");
    for (gait, clip) in Gait::ALL.iter().zip(&h.clips) {
        let c = clip.view();
        assert_eq!(c.sample_rate(), DEFAULT_SAMPLE_RATE);
        assert_eq!(
            c.frame_count(),
            gait_frame_count(*gait, DEFAULT_SAMPLE_RATE)
        );
        // Whole frames: within half a frame of the nominal period.
        assert!(
            (c.duration() - gait.period()).abs() <= 0.5 / DEFAULT_SAMPLE_RATE,
            "{}",
            gait.name()
        );
    }
    // Other rates give the same cycle lengths (to a frame) and bad rates are rejected.
    let h60 = Humanoid::new(60.0).unwrap();
    for ((a, b), gait) in h.clips.iter().zip(&h60.clips).zip(Gait::ALL) {
        assert!(
            (a.view().duration() - b.view().duration()).abs() <= 1.0 / 30.0,
            "{}",
            gait.name()
        );
        assert_eq!(
            b.view().frame_count(),
            gait_frame_count(gait, 60.0),
            "{}",
            gait.name()
        );
        assert_eq!(b.view().sample_rate(), 60.0);
    }
    for rate in [0.0, -30.0, f32::NAN, f32::INFINITY] {
        assert_eq!(
            Humanoid::new(rate).map(|_| ()),
            Err(Error::InvalidSampleRate),
            "rate {rate}"
        );
    }
}

#[test]
fn gait_clip_rejects_wrong_buffer() {
    let h = humanoid();
    let skel = h.skeleton.view();
    let frames = gait_frame_count(Gait::Run, 30.0);
    let mut keys = vec![SoaTransform::IDENTITY; frames * skel.soa_count() - 1];
    assert_eq!(
        procedural::write_gait_clip(Gait::Run, &skel, 30.0, &mut keys).map(|_| ()),
        Err(Error::BadLength {
            buffer: "clip keys",
            expected: frames * skel.soa_count(),
            actual: frames * skel.soa_count() - 1
        })
    );
    let mut keys = vec![SoaTransform::IDENTITY; frames * skel.soa_count()];
    assert_eq!(
        procedural::write_gait_clip(Gait::Run, &skel, f32::NAN, &mut keys).map(|_| ()),
        Err(Error::InvalidSampleRate)
    );
}

/// Signed swing angle (about x) of both thighs through one cycle of `clip`.
fn thigh_angles(h: &Humanoid, clip: usize, samples: usize) -> (Vec<f32>, Vec<f32>) {
    let skel = h.skeleton.view();
    let c = h.clips[clip].view();
    let (l, r) = (joint(&skel, "thigh_l"), joint(&skel, "thigh_r"));
    let mut out = vec![SoaTransform::IDENTITY; c.soa_count()];
    let mut left = Vec::new();
    let mut right = Vec::new();
    for i in 0..samples {
        let t = c.duration() * i as f32 / samples as f32;
        c.sample(t, TimeMode::Loop, &mut out).unwrap();
        let pose = to_transforms(&out, skel.joint_count());
        left.push(signed_angle_about(pose[l].rotation, Vec3::X));
        right.push(signed_angle_about(pose[r].rotation, Vec3::X));
    }
    (left, right)
}

#[test]
fn thighs_swing_in_opposite_phase() {
    let h = humanoid();
    for (clip, owned) in h.clips.iter().enumerate() {
        let samples = 64;
        let (left, right) = thigh_angles(h, clip, samples);
        let mean = |v: &[f32]| v.iter().sum::<f32>() / v.len() as f32;
        let (ml, mr) = (mean(&left), mean(&right));
        let dl: Vec<f32> = left.iter().map(|a| a - ml).collect();
        let dr: Vec<f32> = right.iter().map(|a| a - mr).collect();
        // Both legs really swing (the walk's hip amplitude is 0.42 rad).
        let range = |v: &[f32]| {
            v.iter().cloned().fold(f32::MIN, f32::max) - v.iter().cloned().fold(f32::MAX, f32::min)
        };
        assert!(
            range(&left) > 0.5 && range(&right) > 0.5,
            "{}: {} {}",
            owned.name,
            range(&left),
            range(&right)
        );
        // Opposite phase: strongly negative correlation ...
        let dot: f32 = dl.iter().zip(&dr).map(|(a, b)| a * b).sum();
        let norm = |v: &[f32]| v.iter().map(|a| a * a).sum::<f32>().sqrt();
        let corr = dot / (norm(&dl) * norm(&dr));
        assert!(corr < -0.95, "{}: correlation {corr}", owned.name);
        // ... and half a cycle later the right thigh does what the left did.
        for (i, l) in left.iter().enumerate() {
            let r = right[(i + samples / 2) % samples];
            assert!(
                (l - r).abs() < 0.02,
                "{} sample {i}: {l} vs {r}",
                owned.name
            );
        }
        // Mid-stance (a quarter and three quarters through the cycle): the
        // deviations from the mean have opposite signs and swap.
        let (q1, q3) = (samples / 4, 3 * samples / 4);
        assert!(
            dl[q1] * dr[q1] < 0.0 && dl[q3] * dr[q3] < 0.0,
            "{}",
            owned.name
        );
        assert!(
            dl[q1] * dl[q3] < 0.0,
            "{}: left thigh does not swing back",
            owned.name
        );
        assert!(dl[q1].abs() > 0.2 && dr[q1].abs() > 0.2, "{}", owned.name);
    }
}

#[test]
fn knees_are_on_opposite_sides_mid_stride() {
    // In model space: a quarter of the way through the walk one knee is in
    // front of the pelvis and the other behind it; at three quarters they swap.
    let h = humanoid();
    let skel = h.skeleton.view();
    let c = h.clips[0].view();
    let (pelvis, kl, kr) = (
        joint(&skel, "pelvis"),
        joint(&skel, "calf_l"),
        joint(&skel, "calf_r"),
    );
    let mut pose = vec![SoaTransform::IDENTITY; c.soa_count()];
    let mut models = vec![Mat4::IDENTITY; skel.joint_count()];
    let mut side = Vec::new();
    for frac in [0.25f32, 0.75] {
        c.sample(c.duration() * frac, TimeMode::Loop, &mut pose)
            .unwrap();
        fk::local_to_model(&FkJob::new(&skel, &pose), &mut models).unwrap();
        // Forward is the pelvis's own +z (the pelvis yaws a little during the cycle).
        let fwd = models[pelvis].transform_vector(Vec3::Z);
        let p = models[pelvis].translation();
        let zl = (models[kl].translation() - p).dot(fwd);
        let zr = (models[kr].translation() - p).dot(fwd);
        assert!(zl * zr < 0.0, "at {frac}: left {zl}, right {zr}");
        assert!(
            zl.abs() > 0.05 && zr.abs() > 0.05,
            "at {frac}: left {zl}, right {zr}"
        );
        side.push(zl.signum());
    }
    assert_eq!(
        side[0], -side[1],
        "the legs swap between a quarter and three quarters"
    );
}
