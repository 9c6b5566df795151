//! Additive clips and masks: validity, SIMD vs scalar, round trips, masks
//! from named subtrees with a falloff.

#[path = "../support/mod.rs"]
mod support;

use proptest::prelude::*;
use sinew_core::blend::JointWeights;
use sinew_core::clip::RawClip;
use sinew_core::mix::additive::{self, reference};
use sinew_core::mix::{build_mask, MaskOp};
use sinew_core::{f32x4, soa_count, Error, Quat, SoaTransform, Transform, Vec3};
use support::*;

const J: usize = 9;
const B: usize = soa_count(J);

#[test]
fn validity() {
    let mut base = vec![SoaTransform::IDENTITY; B];
    let add = vec![SoaTransform::IDENTITY; B];
    for w in [f32::NAN, -0.5, f32::INFINITY] {
        assert_eq!(
            additive::apply_additive(&mut base, &add, w, None),
            Err(Error::InvalidWeight { layer: 0 })
        );
        assert_eq!(
            reference::apply_additive(&mut base, &add, w, None),
            Err(Error::InvalidWeight { layer: 0 })
        );
    }
    assert!(matches!(
        additive::apply_additive(&mut base, &add[..1], 1.0, None),
        Err(Error::BadLength { .. })
    ));
    let m = [f32x4::ONE];
    assert!(matches!(
        additive::apply_additive(&mut base, &add, 1.0, Some(JointWeights::new(&m).unwrap())),
        Err(Error::BadLength {
            buffer: "joint weights",
            ..
        })
    ));
    let mut out = vec![SoaTransform::IDENTITY; B - 1];
    assert!(matches!(
        additive::make_additive(&add, &add, &mut out),
        Err(Error::BadLength { .. })
    ));
    let keys = vec![SoaTransform::IDENTITY; B * 3];
    let clip = RawClip::new(30.0, B, &keys).unwrap();
    let mut out = vec![SoaTransform::IDENTITY; B * 2];
    assert!(matches!(
        additive::make_additive_clip(&clip, &add, &[], &mut out),
        Err(Error::BadLength { .. })
    ));
}

#[test]
fn additive_clip_of_a_clip_on_its_reference_gives_the_clip_back() {
    let h = humanoid();
    let walk = h.clips[0].view();
    let n = walk.soa_count();
    let reference_pose = h.skeleton.view().rest_pose();
    let mut add = vec![SoaTransform::IDENTITY; n * walk.frame_count()];
    additive::make_additive_clip(&walk, reference_pose, &[], &mut add).unwrap();
    let joints = h.skeleton.joint_count();
    for f in [0, 7, walk.frame_count() - 1] {
        let mut pose = reference_pose.to_vec();
        additive::apply_additive(&mut pose, &add[f * n..(f + 1) * n], 1.0, None).unwrap();
        assert_poses_close(&pose, walk.frame(f).unwrap(), joints, 1e-4);
    }
}

/// The additive clip of a compressed walk, applied on the rest pose, puts
/// every joint where the raw walk's additive clip does, within the
/// compressor's object-space bound; a rest-pose-stripped clip without the
/// rest pose is refused, naming it.
#[test]
fn additive_clip_of_a_compressed_clip_agrees_with_the_raw_one() {
    let h = humanoid();
    let skel = h.skeleton.view();
    let (compressed, opts) = humanoid_compressed();
    let (raw, packed) = (h.clips[0].view(), compressed[0].view());
    let n = raw.soa_count();
    let rest = skel.rest_pose();
    let mut a = vec![SoaTransform::IDENTITY; n * raw.frame_count()];
    let mut b = a.clone();
    additive::make_additive_clip(&raw, rest, &[], &mut a).unwrap();
    assert!(matches!(
        additive::make_additive_clip(&packed, rest, &[], &mut b),
        Err(Error::BadLength {
            buffer: "rest pose",
            actual: 0,
            ..
        })
    ));
    additive::make_additive_clip(&packed, rest, rest, &mut b).unwrap();
    for f in 0..raw.frame_count() {
        let (mut x, mut y) = (rest.to_vec(), rest.to_vec());
        additive::apply_additive(&mut x, &a[f * n..(f + 1) * n], 1.0, None).unwrap();
        additive::apply_additive(&mut y, &b[f * n..(f + 1) * n], 1.0, None).unwrap();
        assert_model_close(&skel, &x, &y, opts.error * 1.5);
    }
}

#[test]
fn mask_from_named_subtrees_with_a_spine_falloff() {
    let h = humanoid();
    let skel = h.skeleton.view();
    let mut m = vec![f32x4::ZERO; skel.soa_count()];
    let ops = [
        MaskOp::Subtree {
            root: "spine_01",
            weight: 1.0,
        },
        MaskOp::Chain {
            top: "spine_03",
            weights: &[0.25, 0.5, 0.75, 1.0],
        },
    ];
    build_mask(&skel, &ops, 0.0, &mut m).unwrap();
    let jw = JointWeights::new(&m).unwrap();
    let w = |name: &str| jw.get(skel.find_joint(name).unwrap());
    assert_eq!(
        [w("pelvis"), w("spine_01"), w("spine_02"), w("spine_03")],
        [0.25, 0.5, 0.75, 1.0]
    );
    assert_eq!(w("head"), 1.0);
    assert_eq!(w("hand_l"), 1.0);
    assert_eq!(w("thigh_l"), 0.0);
    // Padding lanes are 0.
    assert_eq!(jw.get(skel.joint_count()), 0.0);
    // Errors: unknown name (with the op's index), bad weight, chain too long, length.
    let bad = [
        MaskOp::Joint {
            name: "head",
            weight: 1.0,
        },
        MaskOp::Subtree {
            root: "tail",
            weight: 1.0,
        },
    ];
    assert_eq!(
        build_mask(&skel, &bad, 0.0, &mut m),
        Err(Error::UnknownJoint { entry: 1 })
    );
    let bad = [MaskOp::Joint {
        name: "head",
        weight: f32::NAN,
    }];
    assert!(matches!(
        build_mask(&skel, &bad, 0.0, &mut m),
        Err(Error::InvalidJointWeight { .. })
    ));
    assert!(matches!(
        build_mask(&skel, &[], -1.0, &mut m),
        Err(Error::InvalidJointWeight { .. })
    ));
    let long = [0.5f32; 12];
    let bad = [MaskOp::Chain {
        top: "spine_01",
        weights: &long,
    }];
    assert!(matches!(
        build_mask(&skel, &bad, 0.0, &mut m),
        Err(Error::InvalidParameter { .. })
    ));
    let mut short = vec![f32x4::ZERO; 2];
    assert!(matches!(
        build_mask(&skel, &[], 0.0, &mut short),
        Err(Error::BadLength { .. })
    ));
}

fn pose(n: usize) -> impl Strategy<Value = Vec<SoaTransform>> {
    transforms(n, 0.5, 2.0).prop_map(|t| to_soa(&t))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// SIMD == scalar within 1e-5 for building and applying, with masks and
    /// opposite-sign and identity quaternions among the inputs.
    #[test]
    fn simd_matches_reference(r in pose(J), p in pose(J), base in pose(J), w in weight(1.5), mask in prop::collection::vec(weight(1.0), J), flip in any::<bool>()) {
        let mut p = p;
        if flip {
            // -q is the same rotation: exercise the short-arc handling.
            let mut t = to_transforms(&p, J);
            t[0].rotation = -t[0].rotation;
            t[1].rotation = to_transforms(&r, J)[1].rotation;
            p = to_soa(&t);
        }
        let (mut a1, mut a2) = (vec![SoaTransform::IDENTITY; B], vec![SoaTransform::IDENTITY; B]);
        additive::make_additive(&r, &p, &mut a1).unwrap();
        reference::make_additive(&r, &p, &mut a2).unwrap();
        assert_poses_close(&a1, &a2, J, TOL);
        let m: Vec<f32x4> = mask.chunks(4).map(|c| { let mut a = [0.0; 4]; a[..c.len()].copy_from_slice(c); f32x4::new(a) }).collect();
        let jw = JointWeights::new(&m).unwrap();
        let (mut b1, mut b2) = (base.clone(), base.clone());
        additive::apply_additive(&mut b1, &a1, w, Some(jw)).unwrap();
        reference::apply_additive(&mut b2, &a1, w, Some(jw)).unwrap();
        assert_poses_close(&b1, &b2, J, TOL);
    }

    /// Weight w about one axis adds exactly w times the angle (slerp, not nlerp).
    #[test]
    fn weight_scales_the_angle(axis in unit_axis(), angle in -3.0f32..3.0, w in 0.0f32..1.0) {
        let add = to_soa(&[Transform::from_translation_rotation(Vec3::new(1.0, 0.0, 0.0), Quat::from_axis_angle(axis, angle))]);
        let mut base = to_soa(&[Transform::IDENTITY]);
        additive::apply_additive(&mut base, &add, w, None).unwrap();
        let t = to_transforms(&base, 1)[0];
        prop_assert!(quat_close(t.rotation, Quat::from_axis_angle(axis, angle * w), 1e-4));
        prop_assert!((t.translation.x - w).abs() < 1e-6);
    }
}
