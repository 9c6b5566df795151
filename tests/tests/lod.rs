//! Joint LOD and update-rate LOD: validity, every joint kept equals full
//! evaluation bit for bit (sample, blend, FK, raw and compressed), dropped
//! joints follow their parents (closed form), the interpolation kernels
//! against their scalar twins and closed forms, the scheduler's budget and
//! periods, compressed clips reordered without recompression, and the
//! crowd's interpolation error bound and thread-count determinism.

#[path = "../support/mod.rs"]
mod support;

use proptest::prelude::*;
use sinew_core::blend::{self, BlendJob, BlendLayer};
use sinew_core::clip::{ClipSource, TimeMode};
use sinew_core::fk::{self, FkJob};
use sinew_core::lod::rate::{self, RateTiers};
use sinew_core::lod::{self, DropRule, JointLod, HUMANOID_RULES, MAX_LEVELS};
use sinew_core::{Error, Mat4, Quat, SoaTransform, Transform, Vec3, NO_PARENT};
use sinew_std::compress::{compress, CompressOptions, OwnedCompressedClip};
use sinew_std::crowd::lod::{Locomotion, LodCrowd, LodInputs, LodSettings, OwnedLod, RateSettings};
use sinew_std::Humanoid;
use support::*;

fn humanoid() -> Humanoid {
    Humanoid::default_rate()
}

fn humanoid_lod(h: &Humanoid) -> OwnedLod {
    OwnedLod::from_rules(&h.skeleton.view(), &HUMANOID_RULES, 3).unwrap()
}

fn compressed(h: &Humanoid) -> Vec<OwnedCompressedClip> {
    let s = h.skeleton.view();
    h.clips
        .iter()
        .map(|c| {
            compress(&s, &c.view(), &CompressOptions::default())
                .unwrap()
                .0
        })
        .collect()
}

fn bits(p: &[SoaTransform]) -> Vec<u32> {
    bytemuck::cast_slice::<SoaTransform, f32>(p)
        .iter()
        .map(|v| v.to_bits())
        .collect()
}

fn mat_bits(m: &[Mat4]) -> Vec<u32> {
    m.iter()
        .flat_map(|m| m.cols.iter().flatten().map(|v| v.to_bits()))
        .collect()
}

// ---------------------------------------------------------------------------
// Validity
// ---------------------------------------------------------------------------

#[test]
fn invalid_layouts_are_rejected() {
    let rest = [SoaTransform::IDENTITY];
    let ok = JointLod::new(&[0, 1, 2], &[NO_PARENT, 0, 1], &rest, &[3, 1]);
    assert!(ok.is_ok());
    assert_eq!(
        JointLod::new(&[], &[], &[], &[1]).unwrap_err(),
        Error::NoJoints
    );
    assert!(matches!(
        JointLod::new(&[0, 0, 2], &[NO_PARENT, 0, 1], &rest, &[3]),
        Err(Error::Corrupt { .. })
    ));
    assert!(matches!(
        JointLod::new(&[0, 1, 3], &[NO_PARENT, 0, 1], &rest, &[3]),
        Err(Error::Corrupt { .. })
    ));
    assert_eq!(
        JointLod::new(&[0, 1, 2], &[NO_PARENT, 2, 1], &rest, &[3]).unwrap_err(),
        Error::InvalidParent { joint: 1 }
    );
    assert!(matches!(
        JointLod::new(&[0, 1, 2], &[NO_PARENT, 0], &rest, &[3]),
        Err(Error::BadLength {
            buffer: "LOD parents",
            ..
        })
    ));
    assert!(matches!(
        JointLod::new(&[0, 1, 2], &[NO_PARENT, 0, 1], &[], &[3]),
        Err(Error::BadLength {
            buffer: "LOD rest pose",
            ..
        })
    ));
    for levels in [&[][..], &[2], &[3, 4], &[3, 0], &[3; MAX_LEVELS + 1]] {
        assert!(
            JointLod::new(&[0, 1, 2], &[NO_PARENT, 0, 1], &rest, levels).is_err(),
            "levels {levels:?}"
        );
    }
    let mut nan = SoaTransform::IDENTITY;
    nan.set(
        1,
        &Transform::new(
            Vec3::new(f32::NAN, 0.0, 0.0),
            Quat::IDENTITY,
            Vec3::splat(1.0),
        ),
    );
    assert!(matches!(
        JointLod::new(&[0, 1, 2], &[NO_PARENT, 0, 1], &[nan], &[3]),
        Err(Error::NonFinite { .. })
    ));
}

#[test]
fn invalid_calls_are_rejected() {
    let h = humanoid();
    let s = h.skeleton.view();
    let n = s.joint_count();
    let (mut order, mut parents) = (vec![0u16; n], vec![0u16; n]);
    let mut rest = vec![SoaTransform::IDENTITY; s.soa_count()];
    let mut levels = vec![0u16; MAX_LEVELS];
    assert!(matches!(
        lod::build(
            &s,
            &vec![0; n - 1],
            &mut order,
            &mut parents,
            &mut rest,
            &mut levels
        ),
        Err(Error::BadLength { .. })
    ));
    assert!(matches!(
        lod::build(
            &s,
            &vec![MAX_LEVELS as u8; n],
            &mut order,
            &mut parents,
            &mut rest,
            &mut levels
        ),
        Err(Error::InvalidParameter { .. })
    ));
    assert!(matches!(
        lod::build(
            &s,
            &vec![3; n],
            &mut order,
            &mut parents,
            &mut rest,
            &mut levels[..2]
        ),
        Err(Error::BadLength {
            buffer: "LOD levels",
            ..
        })
    ));
    let mut coarsest = vec![0u8; n];
    let bad_rule = [DropRule {
        pattern: "hand",
        drop_at: 0,
    }];
    assert!(lod::coarsest_by_names(&s, &bad_rule, 3, &mut coarsest).is_err());
    assert!(lod::coarsest_by_names(&s, &HUMANOID_RULES, 0, &mut coarsest).is_err());
    assert!(lod::drop_short_bones(&s, f32::NAN, 1, &mut coarsest).is_err());
    assert!(lod::drop_by_depth(&s, 3, 0, &mut coarsest).is_err());

    let owned = humanoid_lod(&h);
    let l = owned.view();
    assert!(l.kept(3).is_err());
    let local = vec![SoaTransform::IDENTITY; l.soa_count()];
    let mut models = vec![Mat4::IDENTITY; n];
    assert!(matches!(
        lod::local_to_model(&l, 9, &local, None, &mut models),
        Err(Error::InvalidParameter { .. })
    ));
    assert!(matches!(
        lod::local_to_model(&l, 0, &local[..1], None, &mut models),
        Err(Error::BadLength {
            buffer: "local pose",
            ..
        })
    ));
    let before = models.clone();
    assert!(matches!(
        lod::local_to_model(&l, 0, &local, None, &mut models[..n - 1]),
        Err(Error::BadLength {
            buffer: "model matrices",
            ..
        })
    ));
    assert_eq!(models, before, "output written on error");
    let clip = h.clips[0].view();
    let mut long = vec![SoaTransform::IDENTITY; clip.soa_count() + 1];
    assert!(matches!(
        clip.sample_prefix(0.1, TimeMode::Loop, &mut long),
        Err(Error::BadLength {
            buffer: "output",
            ..
        })
    ));
    assert!(matches!(
        clip.sample_prefix(f32::NAN, TimeMode::Loop, &mut long[..2]),
        Err(Error::NonFinite { .. })
    ));
    let c = &compressed(&h)[0];
    assert!(matches!(
        c.view()
            .sample_prefix(0.1, TimeMode::Loop, s.rest_pose(), &mut long),
        Err(Error::BadLength { .. })
    ));
    assert!(matches!(
        c.view()
            .sample_prefix(0.1, TimeMode::Loop, &[], &mut long[..2]),
        Err(Error::BadLength {
            buffer: "rest pose",
            ..
        })
    ));

    // Rate kernels.
    let tiers = RateTiers {
        full: 3.0,
        half: 2.0,
        quarter: 1.0,
    };
    let imp = [1.0f32; 16];
    let (mut order, mut periods) = ([0u32; 16], [0u8; 16]);
    assert!(matches!(
        rate::plan(&imp, &tiers, 1, &mut order, &mut periods),
        Err(Error::InvalidParameter { .. })
    ));
    assert!(matches!(
        rate::plan(&[f32::NAN; 16], &tiers, 2, &mut order, &mut periods),
        Err(Error::NonFinite { .. })
    ));
    let unordered = RateTiers {
        full: 1.0,
        half: 2.0,
        quarter: 0.0,
    };
    assert!(matches!(
        rate::plan(&imp, &unordered, 4, &mut order, &mut periods),
        Err(Error::InvalidParameter { .. })
    ));
    assert!(matches!(
        rate::plan(&imp, &tiers, 4, &mut order[..3], &mut periods),
        Err(Error::BadLength { .. })
    ));
    let mut out = [0u32; 1];
    assert!(matches!(
        rate::due(0, &[1, 1], &mut out),
        Err(Error::BufferTooSmall { .. })
    ));
    let p = [SoaTransform::IDENTITY; 2];
    let mut o = [SoaTransform::IDENTITY; 2];
    for alpha in [-0.1, 1.1, f32::NAN] {
        assert!(rate::interpolate_poses(&p, &p, alpha, &mut o).is_err());
        assert!(rate::reference::interpolate_poses(&p, &p, alpha, &mut o).is_err());
        assert!(rate::interpolate_models(
            &[Mat4::IDENTITY],
            &[Mat4::IDENTITY],
            alpha,
            &mut [Mat4::IDENTITY]
        )
        .is_err());
    }
    assert!(rate::interpolate_poses(&p, &p[..1], 0.5, &mut o).is_err());
    assert!(rate::interpolate_poses(&p, &p, 0.5, &mut o[..1]).is_err());

    // Compressed reordering.
    let (nt, nl) = c.view().remap_scratch_len();
    let mut tracks = vec![sinew_core::compressed::writer::BlockTrack::Default; nt];
    let mut lanes = vec![sinew_core::compressed::writer::LaneSegment::default(); nl];
    let mut bytes = sinew_std::AlignedBytes::zeroed(c.bytes().len());
    let mut bad: Vec<u16> = (0..n as u16).collect();
    bad[1] = 0;
    assert!(matches!(
        c.view().remap_joints(
            &bad,
            l.rest_pose(),
            &mut tracks,
            &mut lanes,
            bytes.as_mut_slice()
        ),
        Err(Error::Corrupt { .. })
    ));
    assert!(matches!(
        c.view().remap_joints(
            &bad[1..],
            l.rest_pose(),
            &mut tracks,
            &mut lanes,
            bytes.as_mut_slice()
        ),
        Err(Error::BadLength { .. })
    ));

    // The crowd's inputs.
    let raw: Vec<_> = h
        .clips
        .iter()
        .map(|c| owned.remap_clip(&c.view()).unwrap())
        .collect();
    let views: Vec<_> = raw.iter().map(|c| c.view()).collect();
    let settings = LodSettings {
        rate: Some(RateSettings {
            tiers,
            budget: 1,
            replan_every: 8,
        }),
        ..LodSettings::default()
    };
    assert!(
        LodCrowd::new(l, &views, 16, Some(1), settings).is_err(),
        "budget below n / 8"
    );
    let mut crowd = LodCrowd::new(l, &views, 16, Some(1), LodSettings::default()).unwrap();
    assert!(matches!(
        crowd.step(
            1.0 / 60.0,
            false,
            &LodInputs {
                levels: Some(&[0; 15]),
                ..LodInputs::default()
            }
        ),
        Err(Error::BadLength { .. })
    ));
    assert!(matches!(
        crowd.step(
            1.0 / 60.0,
            false,
            &LodInputs {
                levels: Some(&[3; 16]),
                ..LodInputs::default()
            }
        ),
        Err(Error::InvalidParameter { .. })
    ));
    assert!(LodCrowd::new(l, &views[..0], 16, Some(1), LodSettings::default()).is_err());
}

// ---------------------------------------------------------------------------
// Every joint kept: full evaluation, bit for bit
// ---------------------------------------------------------------------------

/// A layout that keeps every joint at one level is the skeleton's own
/// order, and sampling, blending and FK through it are the full
/// pipeline's, bit for bit, for raw and compressed clips.
#[test]
fn every_joint_kept_is_full_evaluation_bit_for_bit() {
    let h = humanoid();
    let s = h.skeleton.view();
    let owned = OwnedLod::build(&s, &vec![0; s.joint_count()]).unwrap();
    let l = owned.view();
    assert_eq!(l.level_count(), 1);
    assert_eq!(
        l.order(),
        (0..s.joint_count() as u16).collect::<Vec<_>>().as_slice()
    );
    l.check_skeleton(&s).unwrap();
    let comp = compressed(&h);
    let raw: Vec<_> = h.clips.iter().map(|c| c.view()).collect();
    let cv: Vec<_> = comp.iter().map(|c| c.view()).collect();
    let n = s.soa_count();
    for (i, t) in [0.0f32, 0.37, 0.81, 1.9].iter().enumerate() {
        let w = [0.2 + 0.1 * i as f32, 0.5, 0.3 - 0.05 * i as f32];
        let full = |sampled: &[Vec<SoaTransform>]| -> (Vec<SoaTransform>, Vec<Mat4>) {
            let layers: Vec<_> = sampled
                .iter()
                .zip(w)
                .map(|(p, w)| BlendLayer::new(p, w))
                .collect();
            let mut local = vec![SoaTransform::IDENTITY; n];
            blend::blend(&BlendJob::new(&layers, &[], s.rest_pose()), &mut local).unwrap();
            let mut models = vec![Mat4::IDENTITY; s.joint_count()];
            fk::local_to_model(&FkJob::new(&s, &local), &mut models).unwrap();
            (local, models)
        };
        let via_lod = |sampled: &[Vec<SoaTransform>]| -> (Vec<SoaTransform>, Vec<Mat4>) {
            let b = l.kept_blocks(0).unwrap();
            let layers: Vec<_> = sampled
                .iter()
                .zip(w)
                .map(|(p, w)| BlendLayer::new(&p[..b], w))
                .collect();
            let mut local = vec![SoaTransform::IDENTITY; n];
            blend::blend(
                &BlendJob::new(&layers, &[], &l.rest_pose()[..b]),
                &mut local[..b],
            )
            .unwrap();
            let mut models = vec![Mat4::IDENTITY; s.joint_count()];
            lod::local_to_model(&l, 0, &local, None, &mut models).unwrap();
            (local, models)
        };
        fn sample_all<C: ClipSource>(
            clips: &[C],
            rest: &[SoaTransform],
            t: f32,
            lod: Option<&JointLod<'_>>,
        ) -> Vec<Vec<SoaTransform>> {
            clips
                .iter()
                .map(|c| {
                    let mut out = vec![SoaTransform::IDENTITY; c.soa_count()];
                    match lod {
                        Some(l) => lod::sample(l, 0, c, t, TimeMode::Loop, &mut out).unwrap(),
                        None => c.sample(t, TimeMode::Loop, rest, &mut out).unwrap(),
                    }
                    out
                })
                .collect()
        }
        for (kind, a, b) in [
            (
                "raw",
                sample_all(&raw, s.rest_pose(), *t, None),
                sample_all(&raw, s.rest_pose(), *t, Some(&l)),
            ),
            (
                "compressed",
                sample_all(&cv, s.rest_pose(), *t, None),
                sample_all(&cv, s.rest_pose(), *t, Some(&l)),
            ),
        ] {
            for (x, y) in a.iter().zip(&b) {
                assert_eq!(bits(x), bits(y), "{kind} sample at {t}");
            }
            let (fl, fm) = full(&a);
            let (ll, lm) = via_lod(&b);
            assert_eq!(bits(&fl), bits(&ll), "{kind} blend at {t}");
            assert_eq!(mat_bits(&fm), mat_bits(&lm), "{kind} FK at {t}");
        }
    }
}

/// Level 0 of a reordered layout (3 levels) gives every joint the full
/// pipeline's values bit for bit, in the layout's order: per-joint
/// arithmetic does not depend on where a joint sits.
#[test]
fn level_zero_of_a_reordered_layout_is_full_evaluation_bit_for_bit() {
    let h = humanoid();
    let s = h.skeleton.view();
    let owned = humanoid_lod(&h);
    let l = owned.view();
    l.check_skeleton(&s).unwrap();
    assert_eq!(l.level_count(), 3);
    assert!(
        l.order().iter().enumerate().any(|(k, &j)| k != j as usize),
        "a real reordering"
    );
    let clip = h.clips[1].view();
    let remapped = owned.remap_clip(&clip).unwrap();
    for t in [0.0f32, 0.21, 0.66] {
        let mut full = vec![SoaTransform::IDENTITY; s.soa_count()];
        clip.sample(t, TimeMode::Loop, &mut full).unwrap();
        let mut models = vec![Mat4::IDENTITY; s.joint_count()];
        fk::local_to_model(&FkJob::new(&s, &full), &mut models).unwrap();
        let mut local = vec![SoaTransform::IDENTITY; l.soa_count()];
        lod::sample(&l, 0, &remapped.view(), t, TimeMode::Loop, &mut local).unwrap();
        let mut expected = vec![SoaTransform::IDENTITY; l.soa_count()];
        lod::remap_pose(&l, &full, &mut expected).unwrap();
        assert_eq!(bits(&local), bits(&expected), "sample at {t}");
        let mut lm = vec![Mat4::IDENTITY; l.joint_count()];
        lod::local_to_model(&l, 0, &local, None, &mut lm).unwrap();
        let mut back = vec![Mat4::IDENTITY; l.joint_count()];
        lod::to_skeleton_order(&l, &lm, &mut back).unwrap();
        assert_eq!(mat_bits(&back), mat_bits(&models), "FK at {t}");
    }
}

/// A prefix sample is the first blocks of a whole sample, bit for bit
/// (raw and compressed, with the AVX2 decoder where the CPU has it).
#[test]
fn prefix_samples_are_the_first_blocks_of_whole_samples() {
    let h = humanoid();
    let s = h.skeleton.view();
    let comp = compressed(&h);
    for m in [0, 1, 5, 9, s.soa_count()] {
        for t in [0.0f32, 0.3, 1.234] {
            let raw = h.clips[2].view();
            let mut whole = vec![SoaTransform::IDENTITY; s.soa_count()];
            raw.sample(t, TimeMode::Loop, &mut whole).unwrap();
            let mut part = vec![SoaTransform::IDENTITY; m];
            raw.sample_prefix(t, TimeMode::Loop, &mut part).unwrap();
            assert_eq!(bits(&part), bits(&whole[..m]), "raw, {m} blocks at {t}");
            let c = comp[2].view();
            c.sample_with_rest(t, TimeMode::Loop, s.rest_pose(), &mut whole)
                .unwrap();
            c.sample_prefix(t, TimeMode::Loop, s.rest_pose(), &mut part)
                .unwrap();
            assert_eq!(
                bits(&part),
                bits(&whole[..m]),
                "compressed, {m} blocks at {t}"
            );
        }
    }
}

// ---------------------------------------------------------------------------
// Levels and dropped joints
// ---------------------------------------------------------------------------

#[test]
fn humanoid_levels_keep_the_body_and_drop_fingers_face_and_hands() {
    let h = humanoid();
    let s = h.skeleton.view();
    let l = humanoid_lod(&h);
    let l = l.view();
    let kept = |level: usize| -> Vec<&str> {
        l.order()[..l.kept(level).unwrap()]
            .iter()
            .map(|&j| s.joint_name(j as usize).unwrap())
            .collect()
    };
    let (k1, k2) = (kept(1), kept(2));
    for name in ["pelvis", "head", "hand_l", "foot_r", "lower_arm_twist_l"] {
        assert!(k1.contains(&name), "level 1 keeps {name}");
    }
    for name in ["index_01_l", "thumb_02_r", "jaw", "eye_l", "toe_end_l"] {
        assert!(s.find_joint(name).is_some(), "{name} exists");
        assert!(!k1.contains(&name), "level 1 drops {name}");
    }
    for name in ["pelvis", "head", "lower_arm_l", "foot_r", "calf_l"] {
        assert!(k2.contains(&name), "level 2 keeps {name}");
    }
    for name in ["hand_l", "hand_r", "ball_l", "lower_arm_twist_r"] {
        assert!(!k2.contains(&name), "level 2 drops {name}");
    }
    // Every kept set is closed under parents.
    for level in 0..3 {
        let k = l.kept(level).unwrap();
        for (j, &p) in l.parents()[..k].iter().enumerate() {
            assert!(p == NO_PARENT || (p as usize) < j);
        }
    }
    assert!(l.kept(1).unwrap() < l.joint_count() && l.kept(2).unwrap() < l.kept(1).unwrap());
}

#[test]
fn depth_and_bone_length_rules_drop_what_they_say() {
    let h = humanoid();
    let s = h.skeleton.view();
    let n = s.joint_count();
    let mut c = vec![1u8; n];
    lod::drop_by_depth(&s, 2, 1, &mut c).unwrap();
    for (j, &level) in c.iter().enumerate() {
        assert_eq!(level == 0, s.depth(j) > 2, "joint {j}");
    }
    let mut c = vec![1u8; n];
    lod::drop_short_bones(&s, 0.05, 1, &mut c).unwrap();
    let short = s.find_joint("index_02_l").unwrap();
    assert_eq!(c[short], 0, "a finger bone is short");
    assert_eq!(c[s.find_joint("calf_l").unwrap()], 1, "a shin is not");
    assert_eq!(c[0], 1, "roots stay");
}

/// Dropped joints follow their parents: `model = parent model · rest
/// local`, checked against a product written out here, at every level.
#[test]
fn dropped_joints_follow_their_parents_at_rest() {
    let h = humanoid();
    let owned = humanoid_lod(&h);
    let l = owned.view();
    let clip = owned.remap_clip(&h.clips[0].view()).unwrap();
    let root = Mat4::from_trs(
        Vec3::new(1.0, 0.0, -2.0),
        Quat::from_rotation_y(0.7),
        Vec3::splat(1.0),
    );
    for level in 0..l.level_count() {
        let mut local = vec![SoaTransform::IDENTITY; l.soa_count()];
        lod::sample(&l, level, &clip.view(), 0.4, TimeMode::Loop, &mut local).unwrap();
        let mut models = vec![sentinel_mat(9.0); l.joint_count()];
        lod::local_to_model(&l, level, &local, Some(&root), &mut models).unwrap();
        let mut scalar = vec![sentinel_mat(9.0); l.joint_count()];
        lod::reference::local_to_model(&l, level, &local, Some(&root), &mut scalar).unwrap();
        let kept = l.kept(level).unwrap();
        for k in 0..l.joint_count() {
            let pose = if k < kept { &local } else { l.rest_pose() };
            let t = pose[k / 4].get(k % 4);
            let p = l.parents()[k];
            let parent = if p == NO_PARENT {
                root
            } else {
                models[p as usize]
            };
            let m = Mat4::from_trs(t.translation, t.rotation, t.scale);
            let expected = parent * m;
            assert!(
                mat_close(&models[k], &expected, 1e-5),
                "level {level}, joint {k}"
            );
            assert!(
                mat_close(&models[k], &scalar[k], TOL),
                "level {level}, joint {k}: SIMD vs scalar"
            );
        }
        // Only the kept joints when the output is that long.
        let mut short = vec![sentinel_mat(9.0); kept];
        lod::local_to_model(&l, level, &local, Some(&root), &mut short).unwrap();
        assert_eq!(mat_bits(&short), mat_bits(&models[..kept]));
    }
}

// ---------------------------------------------------------------------------
// Compressed clips reordered
// ---------------------------------------------------------------------------

/// A compressed clip reordered into the LOD order decodes to the original
/// clip's values at every joint: bit for bit where a joint's track kind is
/// unchanged, within 1e-6 everywhere; and the identity order writes the
/// same container.
#[test]
fn compressed_clips_reorder_without_recompression() {
    let h = humanoid();
    let s = h.skeleton.view();
    let owned = humanoid_lod(&h);
    let l = owned.view();
    let same = OwnedLod::build(&s, &vec![0; s.joint_count()]).unwrap();
    for c in compressed(&h) {
        let identity = same.remap_compressed(&c.view()).unwrap();
        assert_eq!(
            identity.bytes(),
            c.bytes(),
            "the identity order changes nothing"
        );
        let re = owned.remap_compressed(&c.view()).unwrap();
        let re = re.view();
        for t in [0.0f32, 0.13, 0.5, 0.77, 2.0] {
            let mut whole = vec![SoaTransform::IDENTITY; s.soa_count()];
            c.view()
                .sample_with_rest(t, TimeMode::Loop, s.rest_pose(), &mut whole)
                .unwrap();
            let mut expected = vec![SoaTransform::IDENTITY; l.soa_count()];
            lod::remap_pose(&l, &whole, &mut expected).unwrap();
            let mut got = vec![SoaTransform::IDENTITY; l.soa_count()];
            re.sample_with_rest(t, TimeMode::Loop, l.rest_pose(), &mut got)
                .unwrap();
            assert_poses_close(&got, &expected, l.joint_count(), 1e-6);
        }
    }
}

// ---------------------------------------------------------------------------
// Interpolation kernels
// ---------------------------------------------------------------------------

proptest! {
    #[test]
    fn pose_interpolation_matches_its_scalar_twin(a in pose_strategy(3), b in pose_strategy(3), alpha in 0.0f32..=1.0) {
        let mut x = vec![SoaTransform::IDENTITY; 3];
        let mut y = vec![SoaTransform::IDENTITY; 3];
        rate::interpolate_poses(&a, &b, alpha, &mut x).unwrap();
        rate::reference::interpolate_poses(&a, &b, alpha, &mut y).unwrap();
        assert_poses_close(&x, &y, 12, TOL);
    }

    #[test]
    fn model_interpolation_matches_its_scalar_twin(v in proptest::collection::vec(-10.0f32..10.0, 32), alpha in 0.0f32..=1.0) {
        let m = |o: usize| Mat4 { cols: core::array::from_fn(|c| core::array::from_fn(|r| v[o + 4 * c + r])) };
        let (a, b) = ([m(0)], [m(16)]);
        let (mut x, mut y) = ([Mat4::IDENTITY], [Mat4::IDENTITY]);
        rate::interpolate_models(&a, &b, alpha, &mut x).unwrap();
        rate::reference::interpolate_models(&a, &b, alpha, &mut y).unwrap();
        prop_assert!(mat_close(&x[0], &y[0], TOL));
    }
}

fn pose_strategy(blocks: usize) -> impl Strategy<Value = Vec<SoaTransform>> {
    transforms(blocks * 4, 0.5, 2.0).prop_map(move |ts| {
        let mut p = vec![SoaTransform::IDENTITY; blocks];
        for (j, t) in ts.iter().enumerate() {
            p[j / 4].set(j % 4, t);
        }
        p
    })
}

/// Closed forms: two rotations about one axis interpolate to the angle in
/// between (nlerp of angles θ0, θ1 at α: atan2 of the weighted sines and
/// cosines of the half angles); translations lerp; α = 0 and 1 give the
/// ends.
#[test]
fn pose_interpolation_closed_forms() {
    let axis = Vec3::new(0.0, 0.6, 0.8);
    let (t0, t1) = (0.3f32, 1.4f32);
    let mut a = [SoaTransform::IDENTITY];
    let mut b = [SoaTransform::IDENTITY];
    a[0].set(
        2,
        &Transform::new(
            Vec3::new(1.0, 2.0, 3.0),
            Quat::from_axis_angle(axis, t0),
            Vec3::splat(1.0),
        ),
    );
    b[0].set(
        2,
        &Transform::new(
            Vec3::new(3.0, -2.0, 5.0),
            Quat::from_axis_angle(axis, t1),
            Vec3::splat(2.0),
        ),
    );
    for alpha in [0.0f32, 0.25, 0.5, 0.9, 1.0] {
        let mut o = [SoaTransform::IDENTITY];
        rate::interpolate_poses(&a, &b, alpha, &mut o).unwrap();
        let t = o[0].get(2);
        let (s, c) = (
            (1.0 - alpha) * (t0 / 2.0).sin() + alpha * (t1 / 2.0).sin(),
            (1.0 - alpha) * (t0 / 2.0).cos() + alpha * (t1 / 2.0).cos(),
        );
        let angle = 2.0 * s.atan2(c);
        assert!(
            quat_close(t.rotation, Quat::from_axis_angle(axis, angle), 1e-6),
            "alpha {alpha}"
        );
        let lerp = |x: f32, y: f32| x + (y - x) * alpha;
        assert!(vec_close(
            t.translation,
            Vec3::new(lerp(1.0, 3.0), lerp(2.0, -2.0), lerp(3.0, 5.0)),
            1e-6
        ));
        assert!(vec_close(t.scale, Vec3::splat(lerp(1.0, 2.0)), 1e-6));
    }
    let (m0, m1) = (
        Mat4::from_translation(Vec3::new(2.0, 0.0, 0.0)),
        Mat4::from_translation(Vec3::new(4.0, 8.0, 0.0)),
    );
    let mut o = [Mat4::IDENTITY];
    rate::interpolate_models(&[m0], &[m1], 0.25, &mut o).unwrap();
    assert_eq!(o[0].translation(), Vec3::new(2.5, 2.0, 0.0));
}

// ---------------------------------------------------------------------------
// Scheduler
// ---------------------------------------------------------------------------

fn importances(n: usize, seed: u64) -> Vec<f32> {
    let mut z = seed;
    (0..n)
        .map(|_| {
            z = z
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (z >> 40) as f32 / (1u64 << 24) as f32 * 100.0
        })
        .collect()
}

/// Under any plan the budget holds at every frame, each character is
/// evaluated exactly every `period` frames while the plan stands, the
/// most important keep their wished periods when the budget allows, and
/// a changing plan never leaves a character more than 8 frames without
/// an evaluation.
#[test]
fn schedule_meets_the_budget_and_the_periods() {
    let tiers = RateTiers {
        full: 90.0,
        half: 70.0,
        quarter: 40.0,
    };
    let n = 1000;
    for (seed, budget) in [(1u64, 125usize), (2, 200), (3, 400), (4, 1000)] {
        let imp = importances(n, seed);
        let (mut order, mut periods) = (vec![0u32; n], vec![0u8; n]);
        let report = rate::plan(&imp, &tiers, budget, &mut order, &mut periods).unwrap();
        assert!(
            report.peak() <= budget,
            "seed {seed}: peak {} > {budget}",
            report.peak()
        );
        let wished: Vec<u8> = imp.iter().map(|&i| tiers.period(i)).collect();
        let wished_load = (0..8)
            .map(|r| {
                (0..n)
                    .filter(|&i| {
                        r % wished[i] as usize == rate::home_slot(i) as usize % wished[i] as usize
                    })
                    .count()
            })
            .max()
            .unwrap();
        if wished_load <= budget {
            assert_eq!(
                periods, wished,
                "seed {seed}: nothing demoted when the wish fits"
            );
            assert_eq!(report.demoted, 0);
        } else {
            assert!(report.demoted > 0);
        }
        for (i, (&p, &w)) in periods.iter().zip(&wished).enumerate() {
            assert!(p >= w && [1, 2, 4, 8].contains(&p), "character {i}");
        }
        let mut due = vec![0u32; n];
        let mut last = vec![None::<u64>; n];
        for frame in 0..64u64 {
            let k = rate::due(frame, &periods, &mut due).unwrap();
            assert!(k <= budget, "seed {seed}, frame {frame}: {k} > {budget}");
            assert_eq!(k, report.loads[(frame % 8) as usize]);
            for &i in &due[..k] {
                let i = i as usize;
                if let Some(l) = last[i] {
                    assert_eq!(frame - l, u64::from(periods[i]), "character {i}");
                }
                last[i] = Some(frame);
                assert_eq!(rate::frames_since_due(frame, i, periods[i]), 0);
            }
        }
    }
    // Plans changing every frame: the budget holds and gaps stay within 8.
    let budget = 200;
    let mut last = vec![0u64; n];
    let (mut order, mut periods) = (vec![0u32; n], vec![0u8; n]);
    let mut due = vec![0u32; n];
    for frame in 0..200u64 {
        let imp = importances(n, 100 + frame);
        rate::plan(&imp, &tiers, budget, &mut order, &mut periods).unwrap();
        let k = rate::due(frame, &periods, &mut due).unwrap();
        assert!(k <= budget);
        for &i in &due[..k] {
            last[i as usize] = frame;
        }
        for (i, &l) in last.iter().enumerate() {
            assert!(
                frame - l < 8,
                "character {i} not evaluated since frame {l} at {frame}"
            );
        }
    }
}

// ---------------------------------------------------------------------------
// The crowd
// ---------------------------------------------------------------------------

fn rate_settings(budget: usize) -> LodSettings {
    LodSettings {
        rate: Some(RateSettings {
            tiers: RateTiers {
                full: -10.0,
                half: -30.0,
                quarter: -60.0,
            },
            budget,
            replan_every: 8,
        }),
        ..LodSettings::default()
    }
}

/// Characters on a line, 2 m apart, the camera at the first.
fn crowd_inputs(n: usize) -> (Vec<u8>, Vec<f32>) {
    let d: Vec<f32> = (0..n).map(|i| 2.0 * i as f32).collect();
    let levels = d
        .iter()
        .map(|&d| {
            if d < 15.0 {
                0
            } else if d < 40.0 {
                1
            } else {
                2
            }
        })
        .collect();
    (levels, d.iter().map(|&d| -d).collect())
}

/// Largest angle, in degrees, between an interpolated local rotation and
/// full evaluation at periods 1, 2, 4 and 8 (measured worst on the
/// procedural clips, compressed: 0, 1.1, 2.6 and 11.4; docs/crowds.md).
const BOUNDS: [f64; 4] = [1e-3, 2.0, 4.0, 15.0];

/// The interpolated poses stay within [`BOUNDS`] of full evaluation at
/// every evaluated joint, per period.
#[test]
fn interpolated_poses_stay_within_the_stated_angle() {
    let h = humanoid();
    let owned = humanoid_lod(&h);
    let comp: Vec<_> = compressed(&h)
        .iter()
        .map(|c| owned.remap_compressed(&c.view()).unwrap())
        .collect();
    let views: Vec<_> = comp.iter().map(|c| c.view()).collect();
    let n = 64;
    let (levels, importance) = crowd_inputs(n);
    let mut crowd = LodCrowd::new(owned.view(), &views, n, Some(2), rate_settings(n / 4)).unwrap();
    let inputs = LodInputs {
        levels: Some(&levels),
        importance: Some(&importance),
        locomotion: None,
    };
    let mut worst = [0.0f64; 4];
    for f in 0..240 {
        crowd.step(1.0 / 60.0, false, &inputs).unwrap();
        if f > 16 {
            let e = crowd.pose_error(1).unwrap();
            for (w, x) in worst.iter_mut().zip(e.max_by_period) {
                *w = w.max(x);
            }
        }
    }
    eprintln!("worst angle by period 1, 2, 4, 8: {worst:?}");
    for (w, bound) in worst.iter().zip(BOUNDS) {
        assert!(
            *w < bound,
            "worst interpolated angle {worst:?} past {BOUNDS:?}"
        );
    }
    let counts = crowd.counts();
    assert!(counts.periods[3] > 0, "some characters at period 8");
    assert!(counts.peak_evaluations <= n / 4);
    assert!(counts.longest_gap <= 8);
    assert!(worst[3] > 1.0, "period 8 does interpolate: {worst:?}");
}

/// The same crowd gives the same checksum on 1 and 2 threads, with joint
/// and rate LOD and caller locomotion.
#[test]
fn crowd_checksum_does_not_depend_on_threads() {
    let h = humanoid();
    let owned = humanoid_lod(&h);
    let raw: Vec<_> = h
        .clips
        .iter()
        .map(|c| owned.remap_clip(&c.view()).unwrap())
        .collect();
    let views: Vec<_> = raw.iter().map(|c| c.view()).collect();
    let n = 40;
    let (levels, importance) = crowd_inputs(n);
    let loco: Vec<Locomotion> = (0..n)
        .map(|i| Locomotion {
            speed: 0.5 * i as f32 % 6.0,
            heading: 0.1 * i as f32,
        })
        .collect();
    let run = |threads: usize, with_loco: bool| -> u64 {
        let mut crowd =
            LodCrowd::new(owned.view(), &views, n, Some(threads), rate_settings(10)).unwrap();
        let inputs = LodInputs {
            levels: Some(&levels),
            importance: Some(&importance),
            locomotion: with_loco.then_some(loco.as_slice()),
        };
        for f in 0..50 {
            crowd.step(1.0 / 60.0, f == 49, &inputs).unwrap();
        }
        crowd.checksum()
    };
    assert_eq!(run(1, false), run(2, false));
    assert_eq!(run(1, true), run(2, true));
    assert_ne!(run(1, true), run(1, false), "locomotion reaches the poses");
}

/// Without rate LOD and with every joint, the crowd's model matrices are
/// the plain pipeline's at the characters' clip times and weights.
#[test]
fn crowd_without_lod_is_the_plain_pipeline() {
    let h = humanoid();
    let s = h.skeleton.view();
    let owned = OwnedLod::build(&s, &vec![0; s.joint_count()]).unwrap();
    let views: Vec<_> = h.clips.iter().map(|c| c.view()).collect();
    let mut crowd =
        LodCrowd::new(owned.view(), &views, 3, Some(1), LodSettings::default()).unwrap();
    crowd
        .step(1.0 / 60.0, false, &LodInputs::default())
        .unwrap();
    let e = crowd.pose_error(1).unwrap();
    assert_eq!(e.characters, 3);
    assert!(e.max_interpolated < 1e-4, "{e:?}");
}

/// On the CMU walk, jog and run (compressed, reordered): away from the
/// clips' loop points (the last frame is not the first; those windows are
/// reported apart) an interpolated joint is off by at most what the clips
/// themselves turn a joint in one period (the chord of a window cannot be
/// further from the arc than the arc's own length), measured here from the
/// clips' frames at 60 Hz. Skipped without ../shared/data.
#[test]
fn cmu_interpolation_stays_within_the_clips_own_motion() {
    use sinew_std::import::bvh::{self, BvhOptions};
    let Some(dir) = shared_data("bvh/cmu/daz-friendly") else {
        return;
    };
    let opts = BvhOptions {
        end_sites: false,
        ..BvhOptions::default()
    };
    let assets: Vec<_> = ["02_01", "02_03", "09_01"]
        .iter()
        .map(|n| bvh::load(&dir.join(format!("{n}.bvh")), &opts).unwrap())
        .collect();
    let s = assets[0].skeleton.view();
    let owned = OwnedLod::from_rules(&s, &HUMANOID_RULES, 3).unwrap();
    let l = owned.view();
    // The most any joint turns in 1/60 s, over every clip and frame.
    let mut step = 0.0f64;
    let mut comp = Vec::new();
    for a in &assets {
        let clip = a.clips[0].view();
        assert_eq!(clip.soa_count(), s.soa_count(), "one skeleton");
        let k = ((clip.sample_rate() / 60.0).round() as usize).max(1);
        for f in 0..clip.frame_count().saturating_sub(k) {
            let (x, y) = (clip.frame(f).unwrap(), clip.frame(f + k).unwrap());
            for j in 0..s.joint_count() {
                let (p, q) = (x[j / 4].rotation.get(j % 4), y[j / 4].rotation.get(j % 4));
                step = step.max(f64::from(
                    p.normalize().angle_between(q.normalize()).to_degrees(),
                ));
            }
        }
        let (c, _) = compress(&s, &clip, &CompressOptions::default()).unwrap();
        comp.push(owned.remap_compressed(&c.view()).unwrap());
    }
    let views: Vec<_> = comp.iter().map(|c| c.view()).collect();
    let n = 64;
    let (levels, importance) = crowd_inputs(n);
    let mut crowd = LodCrowd::new(l, &views, n, Some(2), rate_settings(n / 4)).unwrap();
    let inputs = LodInputs {
        levels: Some(&levels),
        importance: Some(&importance),
        locomotion: None,
    };
    let mut worst = [0.0f64; 4];
    let mut seams = 0;
    for f in 0..240 {
        crowd.step(1.0 / 60.0, false, &inputs).unwrap();
        if f > 16 {
            let e = crowd.pose_error(1).unwrap();
            seams += e.across_seam;
            for (w, x) in worst.iter_mut().zip(e.max_by_period) {
                *w = w.max(x);
            }
        }
    }
    eprintln!("CMU: largest turn in 1/60 s {step:.1}°, worst by period 1, 2, 4, 8 {worst:?}, {seams} seam checks");
    assert!(worst[0] < 1e-3, "period 1 is the evaluation: {worst:?}");
    for (w, p) in worst.iter().zip([1.0, 2.0, 4.0, 8.0]).skip(1) {
        assert!(*w <= p * step, "period {p}: {w}° past {p} x {step}°");
    }
}
