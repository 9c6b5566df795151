//! Motion-unit mixer: validity, the kernel against its scalar twin,
//! single-unit identity, idle / fatigue / asynchronous units, smoothing.

#[path = "../support/mod.rs"]
mod support;

use proptest::prelude::*;
use sinew_core::blend::JointWeights;
use sinew_core::clip::{ClipSource, RawClip};
use sinew_core::mix::mixer::{self, bspline_smooth, reference, BSPLINE_WEIGHTS};
use sinew_core::mix::{BSplineSmoother, MixInput, MixJob, MixMode, Mixer, MotionUnit, Ramp};
use sinew_core::{f32x4, soa_count, Error, Quat, SoaTransform, Transform, Vec3};
use support::*;

const J: usize = 10; // joints
const B: usize = soa_count(J);

/// A clip whose frame `f` rotates every joint by `base + step·f` about x
/// and translates it by the same number along x.
fn ramp_clip(frames: usize, base: f32, step: f32) -> Vec<SoaTransform> {
    (0..frames)
        .flat_map(|f| {
            let a = base + step * f as f32;
            let t = Transform::from_translation_rotation(
                Vec3::new(a, 0.0, 0.0),
                Quat::from_rotation_x(a),
            );
            to_soa(&vec![t; J])
        })
        .collect()
}

fn mask(weights: &[f32]) -> Vec<f32x4> {
    weights
        .chunks(4)
        .map(|c| {
            let mut a = [0.0f32; 4];
            a[..c.len()].copy_from_slice(c);
            f32x4::new(a)
        })
        .collect()
}

type MixFn = fn(&MixJob<'_>, &mut [SoaTransform]) -> Result<(), Error>;
const KERNELS: [(&str, MixFn); 2] = [("simd", mixer::mix), ("reference", reference::mix)];

#[test]
fn validity_of_the_kernel() {
    let rest = vec![SoaTransform::IDENTITY; B];
    let pose = vec![SoaTransform::IDENTITY; B];
    let short = vec![SoaTransform::IDENTITY; B - 1];
    let cases: Vec<(Vec<MixInput<'_>>, usize, Error)> = vec![
        (
            vec![MixInput {
                pose: &pose,
                weight: f32::NAN,
                joint_weights: None,
            }],
            B,
            Error::InvalidWeight { layer: 0 },
        ),
        (
            vec![
                MixInput {
                    pose: &pose,
                    weight: 1.0,
                    joint_weights: None,
                },
                MixInput {
                    pose: &pose,
                    weight: -1.0,
                    joint_weights: None,
                },
            ],
            B,
            Error::InvalidWeight { layer: 1 },
        ),
        (
            vec![MixInput {
                pose: &short,
                weight: 1.0,
                joint_weights: None,
            }],
            B,
            Error::BadLength {
                buffer: "unit pose",
                expected: B,
                actual: B - 1,
            },
        ),
        (
            vec![],
            B + 1,
            Error::BadLength {
                buffer: "output",
                expected: B,
                actual: B + 1,
            },
        ),
    ];
    for (inputs, out_len, expected) in cases {
        for (name, k) in KERNELS {
            let job = MixJob {
                units: &inputs,
                fatigue: None,
                idle: None,
                rest: &rest,
                mode: MixMode::Quaternion,
            };
            let mut out = sentinel_pose(out_len, 7.0);
            let before = out.clone();
            assert_eq!(k(&job, &mut out), Err(expected), "{name}");
            assert_eq!(out, before, "{name}: output touched on error");
        }
    }
}

#[test]
fn negative_joint_weight_is_refused_when_the_mask_is_made() {
    let m = mask(&[1.0, -0.5, 1.0]);
    assert_eq!(
        JointWeights::new(&m).err(),
        Some(Error::InvalidJointWeight { joint: 1 })
    );
    let m = mask(&[1.0, 1.0, f32::NAN]);
    assert_eq!(
        JointWeights::new(&m).err(),
        Some(Error::InvalidJointWeight { joint: 2 })
    );
}

#[test]
fn validity_of_the_queue() {
    let keys = ramp_clip(20, 0.0, 0.01);
    let clips = [RawClip::new(30.0, B, &keys).unwrap()];
    let m = mask(&[1.0; 4]);
    let mut mixer: Mixer<2> = Mixer::new(B, MixMode::Quaternion);
    // Unknown clip.
    let r = mixer.add(MotionUnit::new(3, 5), &clips, &[]).unwrap_err();
    assert_eq!(r.error, Error::UnknownClip { clip: 3, count: 1 });
    assert_eq!(r.item.clip, 3, "the unit is handed back");
    // Unit longer than its clip.
    let r = mixer
        .add(MotionUnit::new(0, 15).with_start(10), &clips, &[])
        .unwrap_err();
    assert_eq!(
        r.error,
        Error::UnitTooLong {
            frames: 25,
            clip_frames: 20
        }
    );
    // Ramp longer than half the unit, zero length.
    let r = mixer
        .add(
            MotionUnit::new(0, 6).with_ramp(Ramp::Linear { frames: 4 }),
            &clips,
            &[],
        )
        .unwrap_err();
    assert!(matches!(r.error, Error::InvalidParameter { .. }));
    assert!(matches!(
        mixer
            .add(MotionUnit::new(0, 0), &clips, &[])
            .unwrap_err()
            .error,
        Error::InvalidParameter { .. }
    ));
    // Joint weights of the wrong length.
    let masks = [JointWeights::new(&m).unwrap()];
    let r = mixer
        .add(MotionUnit::new(0, 5).with_joint_weights(0), &clips, &masks)
        .unwrap_err();
    assert_eq!(
        r.error,
        Error::BadLength {
            buffer: "joint weights",
            expected: B,
            actual: 1
        }
    );
    // Full queue hands the unit back.
    mixer.add(MotionUnit::new(0, 5), &clips, &[]).unwrap();
    mixer.add(MotionUnit::new(0, 6), &clips, &[]).unwrap();
    let r = mixer.add(MotionUnit::new(0, 7), &clips, &[]).unwrap_err();
    assert_eq!(r.error, Error::CapacityExceeded { capacity: 2 });
    assert_eq!(r.item.length, 7);
    assert_eq!(Error::from(r).to_string(), "capacity of 2 exceeded");
    // Fatigue factor.
    for bad in [f32::NAN, -0.1, 1.5] {
        assert!(matches!(
            mixer.set_fatigue(bad),
            Err(Error::InvalidParameter { .. })
        ));
    }
    // Evaluating against a different table is checked again.
    let mut out = vec![SoaTransform::IDENTITY; B];
    let rest = vec![SoaTransform::IDENTITY; B];
    assert_eq!(
        mixer.evaluate::<RawClip>(&[], &[], &rest, &mut [], &mut out),
        Err(Error::UnknownClip { clip: 0, count: 0 })
    );
}

#[test]
fn units_run_their_length_and_are_removed() {
    let keys = ramp_clip(30, 0.0, 0.01);
    let clips = [RawClip::new(30.0, B, &keys).unwrap()];
    let mut mixer: Mixer<4> = Mixer::new(B, MixMode::Quaternion);
    let a = mixer
        .add(
            MotionUnit::new(0, 10).with_ramp(Ramp::Linear { frames: 2 }),
            &clips,
            &[],
        )
        .unwrap();
    for _ in 0..4 {
        mixer.advance();
    }
    // Added mid-way through `a`.
    let b = mixer
        .add(MotionUnit::new(0, 10).with_start(5), &clips, &[])
        .unwrap();
    let cursors: Vec<usize> = mixer.units().map(|u| u.cursor).collect();
    assert_eq!(cursors, [4, 0]);
    for _ in 0..6 {
        mixer.advance();
    }
    assert!(!mixer.is_running(a) && mixer.is_running(b));
    assert!(mixer.remove(b) && !mixer.remove(b));
    assert!(mixer.is_empty());
}

#[test]
fn idle_takes_over_and_fatigue_weighs_in() {
    let idle_keys = ramp_clip(8, 0.1, 0.0);
    let unit_keys = ramp_clip(8, 0.5, 0.0);
    let tired_keys = ramp_clip(8, -0.3, 0.0);
    let clips = [
        RawClip::new(30.0, B, &idle_keys).unwrap(),
        RawClip::new(30.0, B, &unit_keys).unwrap(),
        RawClip::new(30.0, B, &tired_keys).unwrap(),
    ];
    let rest = vec![SoaTransform::IDENTITY; B];
    let mut out = vec![SoaTransform::IDENTITY; B];
    let x = |out: &[SoaTransform]| to_transforms(out, J)[0].translation.x;
    let mut mixer: Mixer<4> = Mixer::new(B, MixMode::Quaternion);
    // Nothing at all: rest pose.
    mixer
        .evaluate(&clips, &[], &rest, &mut [], &mut out)
        .unwrap();
    assert_eq!(x(&out), 0.0);
    mixer
        .set_idle(Some(MotionUnit::new(0, 8)), &clips, &[])
        .unwrap();
    mixer
        .evaluate(&clips, &[], &rest, &mut [], &mut out)
        .unwrap();
    assert!(close(x(&out), 0.1, 1e-6));
    // A full-weight unit leaves nothing to the idle.
    mixer.add(MotionUnit::new(1, 4), &clips, &[]).unwrap();
    mixer
        .evaluate(&clips, &[], &rest, &mut [], &mut out)
        .unwrap();
    assert!(close(x(&out), 0.5, 1e-6));
    // Fatigue 0.5: (1·0.5 + 0.5·(−0.3)) / 1.5.
    mixer
        .set_fatigue_unit(Some(MotionUnit::new(2, 8)), &clips, &[])
        .unwrap();
    mixer.set_fatigue(0.5).unwrap();
    mixer
        .evaluate(&clips, &[], &rest, &mut [], &mut out)
        .unwrap();
    assert!(close(x(&out), (0.5 - 0.15) / 1.5, 1e-6));
    // The unit ends: idle fills what fatigue leaves: (0.5·(−0.3) + 0.5·0.1) / 1.
    for _ in 0..4 {
        mixer.advance();
    }
    assert!(mixer.is_empty());
    mixer
        .evaluate(&clips, &[], &rest, &mut [], &mut out)
        .unwrap();
    assert!(close(x(&out), -0.15 + 0.05, 1e-6), "{}", x(&out));
    // Loops keep running.
    for _ in 0..100 {
        mixer.advance();
    }
    mixer
        .evaluate(&clips, &[], &rest, &mut [], &mut out)
        .unwrap();
    assert!(close(x(&out), -0.1, 1e-6));
}

#[test]
fn smoother_primes_then_follows_the_bspline() {
    let frames: Vec<Vec<SoaTransform>> = (0..4)
        .map(|f| ramp_clip(1, 0.1 * f as f32 * f as f32, 0.0))
        .collect();
    let mut history = vec![SoaTransform::IDENTITY; 2 * B];
    let mut s = BSplineSmoother::new();
    let mut out = Vec::new();
    for f in &frames {
        let mut p = f.clone();
        s.apply(&mut history, &mut p).unwrap();
        out.push(to_transforms(&p, J)[0].translation.x);
    }
    let v: Vec<f32> = (0..4).map(|f| 0.1 * (f * f) as f32).collect();
    assert!(close(out[0], v[0], 1e-6));
    let expect = BSPLINE_WEIGHTS[0] * v[1] + BSPLINE_WEIGHTS[1] * v[2] + BSPLINE_WEIGHTS[2] * v[3];
    assert!(close(out[3], expect, 1e-6), "{} {}", out[3], expect);
    let mut bad = vec![SoaTransform::IDENTITY; B + 1];
    assert!(matches!(
        s.apply(&mut history, &mut bad),
        Err(Error::BadLength { .. })
    ));
}

fn pose(n: usize) -> impl Strategy<Value = Vec<SoaTransform>> {
    transforms(n, 0.5, 2.0).prop_map(|t| to_soa(&t))
}

fn mask_strategy(n: usize) -> impl Strategy<Value = Vec<f32>> {
    prop::collection::vec(weight(1.0), n)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// SIMD == scalar within 1e-5, both modes, with idle and fatigue.
    #[test]
    fn simd_matches_reference(
        poses in prop::collection::vec(pose(J), 5),
        masks in prop::collection::vec(mask_strategy(J), 5),
        weights in prop::collection::vec(weight(1.0), 5),
        angles in any::<bool>(),
    ) {
        let m: Vec<Vec<f32x4>> = masks.iter().map(|w| mask(w)).collect();
        let inputs: Vec<MixInput<'_>> = (0..5)
            .map(|i| MixInput { pose: &poses[i], weight: weights[i], joint_weights: Some(JointWeights::new(&m[i]).unwrap()) })
            .collect();
        let rest = to_soa(&vec![Transform::IDENTITY; J]);
        let mode = if angles { MixMode::JointAngles } else { MixMode::Quaternion };
        let job = MixJob { units: &inputs[..3], fatigue: Some(inputs[3]), idle: Some(inputs[4]), rest: &rest, mode };
        let (mut a, mut b) = (vec![SoaTransform::IDENTITY; B], vec![SoaTransform::IDENTITY; B]);
        mixer::mix(&job, &mut a).unwrap();
        reference::mix(&job, &mut b).unwrap();
        let tol = if angles { 1e-4 } else { TOL };
        assert_poses_close(&a, &b, J, tol);
    }

    /// One unit running alone gives exactly that unit's frame, whatever its
    /// ramp and per-joint weights (they cancel in the ratio).
    #[test]
    fn single_unit_is_passed_through(
        keys in pose(J * 12).prop_map(|p| p),
        ws in prop::collection::vec(0.05f32..1.0, J),
        nr in 0usize..5,
        steps in 0usize..10,
        start in 0usize..2,
        angles in any::<bool>(),
    ) {
        // 12 frames of J joints, packed frame after frame.
        let keys: Vec<SoaTransform> = (0..12)
            .flat_map(|f| {
                let t = to_transforms(&keys, J * 12);
                to_soa(&t[f * J..(f + 1) * J])
            })
            .collect();
        let clips = [RawClip::new(30.0, B, &keys).unwrap()];
        let m = mask(&ws);
        let mode = if angles { MixMode::JointAngles } else { MixMode::Quaternion };
        let mut mixer: Mixer<4> = Mixer::new(B, mode);
        let unit = MotionUnit::new(0, 10).with_start(start).with_ramp(Ramp::Smooth { frames: nr })
            .with_joint_weights(0);
        let masks = [JointWeights::new(&m).unwrap()];
        mixer.add(unit, &clips, &masks).unwrap();
        for _ in 0..steps { mixer.advance(); }
        let rest = vec![SoaTransform::IDENTITY; B];
        let mut out = vec![SoaTransform::IDENTITY; B];
        mixer.evaluate(&clips, &masks, &rest, &mut [], &mut out).unwrap();
        let frame = clips[0].frame(start + steps).unwrap();
        // Angle mode goes through Euler angles: the same rotation.
        let expect = to_transforms(frame, J);
        let got = to_transforms(&out, J);
        for (g, e) in got.iter().zip(&expect) {
            prop_assert!(vec_close(g.translation, e.translation, 1e-5));
            prop_assert!(quat_close(g.rotation, e.rotation.normalize(), 1e-4), "{g:?} {e:?}");
            prop_assert!(vec_close(g.scale, e.scale, 1e-5));
        }
    }

    /// Smoothing: SIMD == scalar.
    #[test]
    fn smoothing_simd_matches_reference(h in pose(J * 2), p in pose(J)) {
        let hist: Vec<SoaTransform> = [to_soa(&to_transforms(&h, 2 * J)[..J]), to_soa(&to_transforms(&h, 2 * J)[J..])].concat();
        let (mut h1, mut h2) = (hist.clone(), hist.clone());
        let (mut p1, mut p2) = (p.clone(), p.clone());
        bspline_smooth(&mut h1, &mut p1).unwrap();
        reference::bspline_smooth(&mut h2, &mut p2).unwrap();
        assert_poses_close(&p1, &p2, J, TOL);
        assert_poses_close(&h1, &h2, 2 * J, TOL);
    }
}

/// Idle walk, fatigue run and a ramped, masked jog unit.
fn walk_jog_run<C: ClipSource>(
    clips: &[C],
    masks: &[JointWeights<'_>],
    n: usize,
    frames: usize,
) -> Mixer<4> {
    let mut mixer: Mixer<4> = Mixer::new(n, MixMode::Quaternion);
    let unit = |c| MotionUnit::new(c, frames);
    mixer.set_idle(Some(unit(0)), clips, masks).unwrap();
    mixer.set_fatigue_unit(Some(unit(2)), clips, masks).unwrap();
    let jog = MotionUnit::new(1, frames - 2)
        .with_start(2)
        .with_ramp(Ramp::Smooth { frames: 4 })
        .with_joint_weights(0);
    mixer.add(jog, clips, masks).unwrap();
    mixer.set_fatigue(0.3).unwrap();
    mixer
}

/// The humanoid's walk, jog and run through the mixer (ramped, masked
/// units, idle and fatigue), raw and compressed: every joint lands within
/// the compressor's object-space bound of the raw mix, frame after frame.
#[test]
fn compressed_clips_mix_like_raw_ones() {
    let h = humanoid();
    let skel = h.skeleton.view();
    let n = skel.soa_count();
    let rest = skel.rest_pose();
    let raw: Vec<RawClip<'_>> = h.clips.iter().map(|c| c.view()).collect();
    let (owned, opts) = humanoid_compressed();
    let packed: Vec<_> = owned.iter().map(|c| c.view()).collect();
    let weights: Vec<f32> = (0..skel.joint_count())
        .map(|j| 0.2 + 0.8 * (j % 3) as f32 / 2.0)
        .collect();
    let m = mask(&weights);
    let masks = [JointWeights::new(&m).unwrap()];
    let frames = raw.iter().map(|c| c.frame_count() - 1).min().unwrap();
    let (mut a, mut b) = (
        walk_jog_run(&raw, &masks, n, frames),
        walk_jog_run(&packed, &masks, n, frames),
    );
    let mut scratch = vec![SoaTransform::IDENTITY; Mixer::<4>::scratch_len(n)];
    let (mut x, mut y) = (rest.to_vec(), rest.to_vec());
    // Compressed clips decode into scratch: too little is refused, naming it.
    assert_eq!(
        b.evaluate(&packed, &masks, rest, &mut scratch[1..], &mut y),
        Err(Error::BadLength {
            buffer: "mixer scratch",
            expected: 6 * n,
            actual: 6 * n - 1
        })
    );
    for _ in 0..frames + 3 {
        a.evaluate(&raw, &masks, rest, &mut [], &mut x).unwrap();
        b.evaluate(&packed, &masks, rest, &mut scratch, &mut y)
            .unwrap();
        assert_model_close(&skel, &x, &y, opts.error * 1.5);
        a.advance();
        b.advance();
    }
}

/// Units play one clip frame per mixer frame, so clips of another sample
/// rate (e.g. a 24 Hz walk next to a 30 Hz run) are refused, naming both.
#[test]
fn clips_of_another_sample_rate_are_refused() {
    let keys = ramp_clip(20, 0.0, 0.01);
    let clips = [
        RawClip::new(24.0, B, &keys).unwrap(),
        RawClip::new(30.0, B, &keys).unwrap(),
        RawClip::new(24.0, B, &keys).unwrap(),
    ];
    let mut mixer: Mixer<4> = Mixer::new(B, MixMode::Quaternion);
    mixer.add(MotionUnit::new(0, 10), &clips, &[]).unwrap();
    let mismatch = Error::SampleRateMismatch {
        clip: 1,
        playing: 0,
    };
    let r = mixer.add(MotionUnit::new(1, 10), &clips, &[]).unwrap_err();
    assert_eq!(r.error, mismatch);
    let r = mixer
        .set_idle(Some(MotionUnit::new(1, 10)), &clips, &[])
        .unwrap_err();
    assert_eq!(r.error, mismatch);
    mixer.add(MotionUnit::new(2, 10), &clips, &[]).unwrap();
    // A table whose rates changed since is checked again.
    let changed = [clips[0], clips[1], clips[1]];
    let rest = vec![SoaTransform::IDENTITY; B];
    let mut out = rest.clone();
    assert_eq!(
        mixer.evaluate(&changed, &[], &rest, &mut [], &mut out),
        Err(Error::SampleRateMismatch {
            clip: 2,
            playing: 0
        })
    );
    assert!(mixer.set_idle(None, &clips, &[]).is_ok());
    assert_eq!(clips[1].sample_rate(), 30.0);
}

/// Per-character state lives anywhere: a mixer and a smoother sit in
/// `static`s (built by const fns) and run from there.
#[test]
fn mixer_and_smoother_live_in_statics() {
    use std::sync::Mutex;
    fn assert_static_send<T: 'static + Send>() {}
    assert_static_send::<Mixer<4>>();
    assert_static_send::<BSplineSmoother>();
    assert_static_send::<MotionUnit>();
    static MIXER: Mutex<Mixer<4>> = Mutex::new(Mixer::new(B, MixMode::Quaternion));
    static SMOOTHER: Mutex<BSplineSmoother> = Mutex::new(BSplineSmoother::new());
    let keys = ramp_clip(8, 0.5, 0.0);
    let clips = [RawClip::new(30.0, B, &keys).unwrap()];
    let rest = vec![SoaTransform::IDENTITY; B];
    let mut out = rest.clone();
    let mut history = vec![SoaTransform::IDENTITY; 2 * B];
    let mut mixer = MIXER.lock().unwrap();
    mixer.add(MotionUnit::new(0, 8), &clips, &[]).unwrap();
    mixer
        .evaluate(&clips, &[], &rest, &mut [], &mut out)
        .unwrap();
    SMOOTHER
        .lock()
        .unwrap()
        .apply(&mut history, &mut out)
        .unwrap();
    assert!(close(to_transforms(&out, J)[0].translation.x, 0.5, 1e-6));
}
