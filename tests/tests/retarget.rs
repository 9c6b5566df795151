//! Retargeting: the map's validity, identity on a skeleton's own clips,
//! bone directions kept across differing rest orientations (proptest),
//! root speed scaling with leg length, the kernel against its scalar twin,
//! and CMU mocap onto the glTF characters (skipped without the data).

#[path = "../support/mod.rs"]
mod support;

use proptest::prelude::*;
use sinew_core::fk::{local_to_model, FkJob};
use sinew_core::retarget::names::Convention;
use sinew_core::retarget::Role;
use sinew_core::retarget::{self, reference, MapOptions, RetargetMap};
use sinew_core::skeleton::JointDef;
use sinew_core::soa::{get_joint, set_joint};
use sinew_core::{Error, Mat4, Quat, Skeleton, SoaTransform, Transform, Vec3, NO_PARENT};
use sinew_std::import::load::{load_files, LoadOptions};
use sinew_std::retarget::{bake, bind_pose_skeleton, BakeOptions, How, OwnedMap};
use sinew_std::{OwnedClip, OwnedSkeleton};

fn joints_of(s: &Skeleton<'_>) -> Vec<(String, Option<usize>, Transform)> {
    (0..s.joint_count())
        .map(|j| {
            (
                s.joint_name(j).unwrap().to_string(),
                s.parent(j),
                get_joint(s.rest_pose(), j).unwrap(),
            )
        })
        .collect()
}

fn build(joints: &[(String, Option<usize>, Transform)]) -> OwnedSkeleton {
    let defs: Vec<JointDef<'_>> = joints
        .iter()
        .map(|(n, p, r)| JointDef {
            name: n,
            parent: *p,
            rest: *r,
        })
        .collect();
    OwnedSkeleton::build(&defs).unwrap()
}

/// The skeleton with every joint's rest frame turned by `turns[j]` and its
/// children's offsets compensated, so every rest position stays put.
fn turned(s: &Skeleton<'_>, turns: &[Quat]) -> OwnedSkeleton {
    // Model rotation R'_j = R_j q_j: the local becomes q_parent⁻¹ r_j q_j,
    // and a child's offset q_parent⁻¹ t_c keeps its model position.
    let mut joints = joints_of(s);
    let turn = |j: usize| turns[j % turns.len()];
    for (j, (_, parent, rest)) in joints.iter_mut().enumerate() {
        let qp = parent.map_or(Quat::IDENTITY, turn);
        rest.rotation = (qp.conjugate() * rest.rotation * turn(j)).normalize();
        rest.translation = qp.conjugate().rotate(rest.translation);
    }
    build(&joints)
}

/// The skeleton with every length scaled by `k`.
fn scaled(s: &Skeleton<'_>, k: f32) -> OwnedSkeleton {
    let mut joints = joints_of(s);
    for j in &mut joints {
        j.2.translation = j.2.translation * k;
    }
    build(&joints)
}

fn models(s: &Skeleton<'_>, pose: &[SoaTransform]) -> Vec<Mat4> {
    let mut m = vec![Mat4::IDENTITY; s.joint_count()];
    local_to_model(&FkJob::new(s, pose), &mut m).unwrap();
    m
}

fn map_of(source: &Skeleton<'_>, target: &Skeleton<'_>, align: bool) -> OwnedMap {
    let options = MapOptions {
        align_rest_directions: align,
        ..MapOptions::default()
    };
    OwnedMap::build(source, target, &[], &options).unwrap()
}

/// A pose of the humanoid: each joint's rest rotation times a rotation of up to `angle`.
fn random_pose(s: &Skeleton<'_>, rotations: &[Quat], root_move: Vec3) -> Vec<SoaTransform> {
    let mut pose = s.rest_pose().to_vec();
    for j in 0..s.joint_count() {
        let mut t = get_joint(&pose, j).unwrap();
        t.rotation = (t.rotation * rotations[j % rotations.len()]).normalize();
        if j == 0 {
            t.translation = t.translation + root_move;
        }
        set_joint(&mut pose, j, &t).unwrap();
    }
    pose
}

// --- validity --------------------------------------------------------------

#[test]
fn every_invalid_input_gives_its_error() {
    let h = support::humanoid();
    let s = h.skeleton.view();
    let map = map_of(&s, &s, true);
    let view = map.view().unwrap();
    let n = s.soa_count();
    let src = s.rest_pose().to_vec();
    let mut out = vec![SoaTransform::IDENTITY; n];
    // Pose sizes.
    assert!(matches!(
        retarget::retarget(&view, &src[..n - 1], &mut out),
        Err(Error::BadLength { buffer: "source pose", expected, .. }) if expected == n
    ));
    assert!(matches!(
        retarget::retarget(&view, &src, &mut out[..n - 1]),
        Err(Error::BadLength {
            buffer: "output pose",
            ..
        })
    ));
    assert!(matches!(
        reference::retarget(&view, &src, &mut vec![SoaTransform::IDENTITY; n + 1]),
        Err(Error::BadLength {
            buffer: "output pose",
            ..
        })
    ));
    // Skeleton mismatch.
    let tail = sinew_std::Humanoid::with_tail(30.0).unwrap();
    assert_eq!(
        view.check_skeletons(&tail.skeleton.view(), &s),
        Err(Error::SkeletonMismatch { which: "source" })
    );
    assert_eq!(
        view.check_skeletons(&s, &tail.skeleton.view()),
        Err(Error::SkeletonMismatch { which: "target" })
    );
    let clip = &tail.clips[0];
    assert!(matches!(
        bake(
            &map,
            &tail.skeleton.view(),
            &s,
            clip,
            &BakeOptions::default()
        ),
        Err(Error::SkeletonMismatch { which: "source" })
    ));
    // Corrupt containers: every byte of the header flipped in turn is
    // either rejected or (reserved-free fields) gives a map that still
    // validates; none panics. Specific corruptions give their variants.
    let good = map.bytes().to_vec();
    let mut bytes = sinew_std::AlignedBytes::copy_from(&good);
    for at in 0..128 {
        bytes.as_mut_slice()[at] ^= 0x5a;
        let _ = RetargetMap::from_bytes(bytes.as_slice());
        bytes.as_mut_slice()[at] ^= 0x5a;
    }
    let corrupt = |at: usize, v: u8| {
        let mut b = sinew_std::AlignedBytes::copy_from(&good);
        b.as_mut_slice()[at] = v;
        RetargetMap::from_bytes(b.as_slice()).unwrap_err()
    };
    assert_eq!(corrupt(0, b'x'), Error::BadMagic);
    assert_eq!(corrupt(8, 2), Error::UnsupportedVersion { found: 2 });
    assert!(matches!(corrupt(12, 0), Error::Corrupt { .. }));
    assert!(matches!(corrupt(44, 1), Error::Corrupt { .. }));
    assert!(
        matches!(corrupt(48 + 3, 0x7f), Error::Corrupt { .. }),
        "NaN in the root map"
    );
    assert!(matches!(
        RetargetMap::from_bytes(&good[..good.len() - 16]),
        Err(Error::Truncated { .. })
    ));
    // Correspondence errors.
    let mut corr = map.correspondence.clone();
    corr.pop();
    assert!(matches!(
        retarget::map_size(&s, &s, &corr),
        Err(Error::BadLength {
            buffer: "correspondence",
            ..
        })
    ));
    let pairs = [("pelvis".to_string(), "nope".to_string())];
    assert_eq!(
        OwnedMap::build(&s, &s, &pairs, &MapOptions::default()).err(),
        Some(Error::UnknownJoint { entry: 0 })
    );
    let opts = MapOptions {
        frame: Some(Quat::new(0.0, 0.0, 0.0, 2.0)),
        ..MapOptions::default()
    };
    assert!(matches!(
        OwnedMap::build(&s, &s, &[], &opts),
        Err(Error::InvalidParameter { .. })
    ));
}

#[test]
fn pairs_override_and_unmap() {
    let h = support::humanoid();
    let s = h.skeleton.view();
    let pairs = [
        ("hand_l".to_string(), String::new()),
        ("head".to_string(), "neck_01".to_string()),
    ];
    let map = OwnedMap::build(&s, &s, &pairs, &MapOptions::default()).unwrap();
    let hand = s.find_joint("hand_l").unwrap();
    let head = s.find_joint("head").unwrap();
    assert_eq!(map.correspondence[hand], NO_PARENT);
    assert!(map.report.unmapped.contains(&"hand_l".to_string()));
    // head <- neck_01 conflicts with neck_01 <- neck_01 (not below it): dropped.
    assert_eq!(map.correspondence[head], NO_PARENT);
    assert_eq!(map.report.dropped, 1);
    assert_eq!(map.report.source_convention, Some(Convention::Mannequin));
}

// --- identity --------------------------------------------------------------

#[test]
fn own_skeleton_is_identity() {
    let h = support::humanoid();
    let s = h.skeleton.view();
    for align in [false, true] {
        let map = map_of(&s, &s, align);
        assert_eq!(map.report.mapped.len(), s.joint_count());
        for clip in &h.clips {
            let no_ik = BakeOptions {
                foot_contacts: false,
                ..BakeOptions::default()
            };
            let (baked, report) = bake(&map, &s, &s, clip, &no_ik).unwrap();
            assert_eq!(baked.frame_count(), clip.frame_count());
            for (a, b) in clip.keys().iter().zip(baked.keys()) {
                for l in 0..4 {
                    let (x, y) = (a.get(l), b.get(l));
                    assert!(
                        support::quat_close(x.rotation, y.rotation, 1e-6),
                        "{:?} vs {:?}",
                        x.rotation,
                        y.rotation
                    );
                    assert!((x.translation - y.translation).length() <= 1e-6);
                    assert_eq!(x.scale, y.scale);
                }
            }
            assert!((report.source_root_speed - report.target_root_speed).abs() < 1e-4);
        }
    }
}

// --- differing rest orientations -------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Onto a copy of the skeleton whose joints' rest frames are turned at
    /// random (children's offsets compensated, so the rest shape is the
    /// same), every mapped bone points the same way in model space.
    #[test]
    fn bone_directions_survive_turned_rest_frames(
        turns in proptest::collection::vec(support::unit_quat(), 7),
        rotations in proptest::collection::vec(support::small_rotation(1.2), 11),
        root_move in support::vec3_in(-1.0, 1.0),
        align in any::<bool>(),
    ) {
        let h = support::humanoid();
        let s = h.skeleton.view();
        let t_owned = turned(&s, &turns);
        let t = t_owned.view();
        let map = map_of(&s, &t, align);
        let view = map.view().unwrap();
        let src = random_pose(&s, &rotations, root_move);
        let mut out = vec![SoaTransform::IDENTITY; t.soa_count()];
        retarget::retarget(&view, &src, &mut out).unwrap();
        let (ms, mt) = (models(&s, &src), models(&t, &out));
        for c in 0..s.joint_count() {
            let Some(j) = s.parent(c) else { continue };
            let ds = (ms[c].translation() - ms[j].translation()).try_normalize();
            let dt = (mt[c].translation() - mt[j].translation()).try_normalize();
            if let (Some(ds), Some(dt)) = (ds, dt) {
                prop_assert!((ds - dt).length() <= 1e-4, "bone {} -> {}: {:?} vs {:?}", j, c, ds, dt);
            }
        }
        prop_assert!((ms[0].translation() - mt[0].translation()).length() <= 1e-4);
        // The lane kernel and its scalar twin agree.
        let mut r = vec![SoaTransform::IDENTITY; t.soa_count()];
        reference::retarget(&view, &src, &mut r).unwrap();
        for j in 0..t.joint_count() {
            let (a, b) = (get_joint(&out, j).unwrap(), get_joint(&r, j).unwrap());
            prop_assert!(support::quat_close(a.rotation, b.rotation, 1e-5));
            prop_assert!((a.translation - b.translation).length() <= 1e-5);
        }
    }
}

// --- root speed ------------------------------------------------------------

/// The clip with its root moving at `velocity` (the procedural clips play in place).
fn with_root_motion(s: &Skeleton<'_>, clip: &OwnedClip, velocity: Vec3) -> OwnedClip {
    let n = s.soa_count();
    let mut keys = clip.keys().to_vec();
    for (f, pose) in keys.chunks_mut(n).enumerate() {
        let mut t = get_joint(pose, 0).unwrap();
        t.translation = t.translation + velocity * (f as f32 / clip.sample_rate());
        set_joint(pose, 0, &t).unwrap();
    }
    OwnedClip::new(clip.name.clone(), clip.sample_rate(), n, keys).unwrap()
}

#[test]
fn root_speed_scales_with_leg_length() {
    let h = support::humanoid();
    let s = h.skeleton.view();
    for k in [0.5f32, 1.7] {
        let big = scaled(&s, k);
        let t = big.view();
        let map = map_of(&s, &t, true);
        assert!(
            (map.report.info.root_scale - k).abs() < 1e-4,
            "{}",
            map.report.info.root_scale
        );
        for clip in &h.clips {
            let clip = &with_root_motion(&s, clip, Vec3::new(0.3, 0.0, 1.4));
            let (_, report) = bake(&map, &s, &t, clip, &BakeOptions::default()).unwrap();
            assert!(report.source_root_speed > 0.1, "{} moves", clip.name);
            let ratio = report.target_root_speed / report.source_root_speed;
            assert!(
                (ratio - k).abs() < 1e-3,
                "{}: ratio {ratio}, legs {k}",
                clip.name
            );
        }
    }
}

// --- real data ---------------------------------------------------------------

fn load(path: &std::path::Path) -> sinew_std::Asset {
    load_files(&[path.to_path_buf()], &LoadOptions::default())
        .unwrap()
        .remove(0)
}

/// The heights of the two feet (Y) per frame.
fn foot_heights(s: &Skeleton<'_>, clip: &OwnedClip, feet: [usize; 2]) -> Vec<[f32; 2]> {
    clip.keys()
        .chunks(s.soa_count())
        .map(|pose| {
            let m = models(s, pose);
            feet.map(|f| m[f].translation().y)
        })
        .collect()
}

#[test]
fn cmu_walk_and_run_onto_the_glb_characters() {
    let Some(data) = support::shared_data("") else {
        return;
    };
    let cmu = data.join("bvh/cmu/daz-friendly");
    let targets = [
        (
            "gltf/gdquest-mannequiny/mannequiny-0.3.0.glb",
            ["foot.l", "foot.r"],
        ),
        (
            "gltf/threejs-robotexpressive/RobotExpressive.glb",
            ["FootL", "FootR"],
        ),
    ];
    for (file, feet) in targets {
        let mut target = load(&data.join(file));
        if let Some(bind) = bind_pose_skeleton(&target).unwrap() {
            target.skeleton = bind;
        }
        let t = target.skeleton.view();
        for clip in ["02_01", "02_03"] {
            let source = load(&cmu.join(format!("{clip}.bvh")));
            let s = source.skeleton.view();
            let map = map_of(&s, &t, true);
            assert!(map.report.mapped.len() >= 15, "{file}: {}", map.report);
            let (baked, report) =
                bake(&map, &s, &t, &source.clips[0], &BakeOptions::default()).unwrap();
            for k in baked.keys() {
                assert!(k.is_finite(), "{file} {clip}: NaN in the baked clip");
            }
            // Root speed follows the hip-height ratio.
            let k = map.report.info.root_scale;
            let ratio = report.target_root_speed / report.source_root_speed;
            assert!(
                (ratio - k).abs() < 0.05 * k,
                "{file} {clip}: speed ratio {ratio}, hips {k}"
            );
            // Feet alternate: each is the lower one for a good share of the frames.
            let fj = feet.map(|n| t.find_joint(n).unwrap());
            let h = foot_heights(&t, &baked, fj);
            let left_lower = h.iter().filter(|f| f[0] < f[1]).count() as f32 / h.len() as f32;
            assert!(
                (0.2..=0.8).contains(&left_lower),
                "{file} {clip}: left foot lower in {left_lower} of frames"
            );
            // And they stay near the ground (a tenth of the hip height) at their lowest.
            let hips = map
                .report
                .mapped
                .iter()
                .find(|m| m.how == How::Table(Role::Hips))
                .unwrap()
                .target;
            let hip_h = models(&t, t.rest_pose())[hips].translation().y;
            let lowest = h
                .iter()
                .map(|f| f[0].min(f[1]))
                .fold(f32::INFINITY, f32::min);
            assert!(
                lowest.abs() < 0.25 * hip_h,
                "{file} {clip}: feet lowest at {lowest}"
            );
            eprintln!("{file} {clip}: {report}");
        }
    }
}

/// CMU's ASF-named captures (16_01: `lfemur`, `ltibia`, `lhumerus`) onto the
/// Daz-named skeleton of 02_01: the names are recognised, and every upper
/// and lower leg and arm points where the source's does within 6 degrees
/// at every frame (2.7 measured: the two captures' rests differ, and the
/// frame between them is derived from the rests).
#[test]
fn cmu_asf_names_retarget_onto_the_daz_skeleton() {
    let Some(cmu) = support::shared_data("bvh/cmu/daz-friendly") else {
        return;
    };
    let source = load(&cmu.join("16_01.bvh"));
    let target = load(&cmu.join("02_01.bvh"));
    let (s, t) = (source.skeleton.view(), target.skeleton.view());
    let map = map_of(&s, &t, true);
    assert_eq!(map.report.source_convention, Some(Convention::CmuAsf));
    assert_eq!(map.report.target_convention, Some(Convention::CmuDaz));
    assert!(map.report.mapped.len() >= 20, "{}", map.report);
    let (baked, _) = bake(&map, &s, &t, &source.clips[0], &BakeOptions::default()).unwrap();
    let bones = [
        (("lfemur", "ltibia"), ("lThigh", "lShin")),
        (("rtibia", "rfoot"), ("rShin", "rFoot")),
        (("lhumerus", "lradius"), ("lShldr", "lForeArm")),
        (("rradius", "rwrist"), ("rForeArm", "rHand")),
    ];
    let joint = |k: &Skeleton<'_>, n: &str| k.find_joint(n).unwrap();
    let mut worst = 0.0f32;
    for (sp, tp) in source.clips[0]
        .keys()
        .chunks(s.soa_count())
        .zip(baked.keys().chunks(t.soa_count()))
    {
        let (ms, mt) = (models(&s, sp), models(&t, tp));
        for ((sa, sb), (ta, tb)) in bones {
            let ds = ms[joint(&s, sb)].translation() - ms[joint(&s, sa)].translation();
            let dt = mt[joint(&t, tb)].translation() - mt[joint(&t, ta)].translation();
            let cos = (ds.dot(dt) / (ds.length() * dt.length())).clamp(-1.0, 1.0);
            worst = worst.max(cos.acos().to_degrees());
        }
    }
    assert!(
        worst < 6.0,
        "worst bone direction difference {worst:.2} degrees"
    );
}
