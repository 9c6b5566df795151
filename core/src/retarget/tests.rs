extern crate alloc;

use alloc::vec;
use alloc::vec::Vec;

use proptest::prelude::*;
use wide::f32x4;

use super::*;
use crate::math::{Quat, Transform, Vec3};
use crate::procedural::{self, HUMANOID_SKELETON_BYTES};
use crate::skeleton::NO_PARENT;
use crate::soa::{get_joint, set_joint};
use crate::Align16;

fn humanoid() -> Align16<[u8; HUMANOID_SKELETON_BYTES]> {
    let mut bytes = Align16([0; HUMANOID_SKELETON_BYTES]);
    let n = procedural::write_humanoid_skeleton(&mut bytes.0).expect("humanoid");
    assert_eq!(n, HUMANOID_SKELETON_BYTES);
    bytes
}

/// 16-byte aligned storage of `len` bytes.
fn storage(len: usize) -> Vec<f32x4> {
    vec![f32x4::ZERO; len.div_ceil(16)]
}

fn bytes_of(v: &mut [f32x4]) -> &mut [u8] {
    bytemuck::cast_slice_mut(v)
}

fn build_self(skel: &Skeleton<'_>, options: &MapOptions) -> (Vec<f32x4>, Vec<u16>, MapInfo) {
    let mut corr = vec![0u16; skel.joint_count()];
    let c = correspond(skel, skel, &[], &mut corr).expect("correspond");
    assert_eq!(c.source_convention, Some(Convention::Mannequin));
    assert_eq!(c.dropped, 0);
    let size = map_size(skel, skel, &corr).expect("size");
    let mut buf = storage(size);
    let info = write_map(skel, skel, &corr, options, bytes_of(&mut buf)).expect("write");
    assert_eq!(info.size, size);
    (buf, corr, info)
}

#[test]
fn humanoid_roles_are_found() {
    let b = humanoid();
    let skel = Skeleton::from_bytes(&b.0).expect("skeleton");
    for role in Role::ALL {
        let has_bone = !matches!(role, Role::LeftHipBone | Role::RightHipBone);
        let j = names::joint_with_role(&skel, Some(Convention::Mannequin), role);
        assert_eq!(j.is_some(), has_bone, "{role:?}");
    }
    assert!(names::names_match("mixamorig:LeftUpLeg", "LeftUpLeg"));
    assert!(names::names_match("thigh.l", "THIGH_L"));
    assert!(!names::names_match("spine1", "spine_01"));
}

#[test]
fn self_map_is_identity() {
    let b = humanoid();
    let skel = Skeleton::from_bytes(&b.0).expect("skeleton");
    for align in [false, true] {
        let options = MapOptions {
            align_rest_directions: align,
            ..MapOptions::default()
        };
        let (mut buf, _, info) = build_self(&skel, &options);
        assert!(info.frame_from_roles);
        assert!((info.root_scale - 1.0).abs() < 1e-6);
        let map = RetargetMap::from_bytes(bytes_of(&mut buf)).expect("map");
        map.check_skeletons(&skel, &skel).expect("same skeletons");
        // A pose away from rest: every joint turned.
        let mut pose = skel.rest_pose().to_vec();
        for j in 0..skel.joint_count() {
            let mut t = get_joint(&pose, j).expect("joint");
            t.rotation = (t.rotation
                * Quat::from_axis_angle(
                    Vec3::new(0.3, 1.0, -0.2).try_normalize().expect("axis"),
                    0.1 * j as f32,
                ))
            .normalize();
            t.translation = t.translation + Vec3::new(0.01, 0.02, -0.03);
            set_joint(&mut pose, j, &t).expect("set");
        }
        let mut out = vec![SoaTransform::IDENTITY; pose.len()];
        retarget(&map, &pose, &mut out).expect("retarget");
        for j in 0..skel.joint_count() {
            let rest = get_joint(skel.rest_pose(), j).expect("rest");
            let a = if map.is_mapped(j) {
                get_joint(&pose, j).expect("a")
            } else {
                rest
            };
            let b = get_joint(&out, j).expect("b");
            let same = a.rotation.dot(b.rotation).abs();
            assert!(
                (1.0 - same) < 1e-6,
                "joint {j}: {:?} vs {:?}",
                a.rotation,
                b.rotation
            );
            let expect_t = if j == 0 {
                a.translation
            } else {
                rest.translation
            };
            assert!(
                (b.translation - expect_t).length() < 1e-6,
                "joint {j} translation"
            );
        }
    }
}

#[test]
fn unmapped_joints_keep_rest_exactly() {
    let b = humanoid();
    let skel = Skeleton::from_bytes(&b.0).expect("skeleton");
    let (_, mut corr, _) = build_self(&skel, &MapOptions::default());
    // Unmapping joints never creates a conflict: paths just grow.
    for j in (1..corr.len()).step_by(2) {
        corr[j] = NO_PARENT;
    }
    let mut buf = storage(map_size(&skel, &skel, &corr).expect("size"));
    write_map(
        &skel,
        &skel,
        &corr,
        &MapOptions::default(),
        bytes_of(&mut buf),
    )
    .expect("write");
    let map = RetargetMap::from_bytes(bytes_of(&mut buf)).expect("map");
    assert!(map.max_path() >= 2);
    let mut pose = skel.rest_pose().to_vec();
    for blk in &mut pose {
        blk.rotation.x = f32x4::splat(0.6);
        blk.rotation.w = f32x4::splat(0.8);
    }
    let mut out = vec![SoaTransform::IDENTITY; pose.len()];
    retarget(&map, &pose, &mut out).expect("retarget");
    let mut unmapped = 0;
    for (j, &s) in corr.iter().enumerate() {
        if s == NO_PARENT {
            unmapped += 1;
            assert!(!map.is_mapped(j));
            let r = get_joint(skel.rest_pose(), j).expect("rest");
            assert_eq!(get_joint(&out, j), Some(r), "joint {j}");
        }
    }
    assert_eq!(unmapped, corr.len() / 2);
}

#[test]
fn invalid_inputs_give_their_errors() {
    let b = humanoid();
    let skel = Skeleton::from_bytes(&b.0).expect("skeleton");
    let (mut buf, corr, _) = build_self(&skel, &MapOptions::default());
    let bytes = bytes_of(&mut buf);
    let map = RetargetMap::from_bytes(bytes).expect("map");
    let n = skel.soa_count();
    let src = vec![SoaTransform::IDENTITY; n];
    let mut out = vec![SoaTransform::IDENTITY; n];
    assert!(matches!(
        retarget(&map, &src[..n - 1], &mut out),
        Err(Error::BadLength {
            buffer: "source pose",
            ..
        })
    ));
    assert!(matches!(
        reference::retarget(&map, &src, &mut out[..n - 1]),
        Err(Error::BadLength {
            buffer: "output pose",
            ..
        })
    ));
    // Map corruptions, one at a time.
    let good = bytes.to_vec();
    let check = |at: usize, v: u8, want: fn(&Error) -> bool| {
        let mut c = storage(good.len());
        let cb = bytes_of(&mut c);
        cb[..good.len()].copy_from_slice(&good);
        cb[at] = v;
        let e = RetargetMap::from_bytes(&cb[..good.len()]).expect_err("corrupt");
        assert!(want(&e), "byte {at}: {e:?}");
    };
    check(0, b'X', |e| matches!(e, Error::BadMagic));
    check(8, 9, |e| matches!(e, Error::UnsupportedVersion { .. }));
    check(20, 200, |e| matches!(e, Error::Corrupt { .. }));
    check(40, 1, |e| matches!(e, Error::Corrupt { .. }));
    let lay = layout(skel.joint_count(), map.max_path()).expect("layout");
    // A mask lane that is neither 0 nor all ones.
    check(lay.mask + 1, 7, |e| matches!(e, Error::Corrupt { .. }));
    // A path entry past the source (joint 0's first step: 0 -> 0x7F00).
    check(lay.path + 1, 0x7f, |e| matches!(e, Error::Corrupt { .. }));
    // A pre constant that is not a unit quaternion (x of lane 0 = 2.0).
    check(lay.pre + 3, 0x40, |e| matches!(e, Error::Corrupt { .. }));
    assert!(matches!(
        RetargetMap::from_bytes(&good[..good.len() - 16]),
        Err(Error::Truncated { .. }) | Err(Error::Misaligned)
    ));
    // Skeleton mismatch and correspondence errors.
    let mut other = skel.rest_pose().to_vec();
    other[0].translation.x = f32x4::splat(1.0);
    let mut short = corr.clone();
    short.pop();
    assert!(matches!(
        map_size(&skel, &skel, &short),
        Err(Error::BadLength {
            buffer: "correspondence",
            ..
        })
    ));
    let mut bad = corr.clone();
    bad[3] = 5000;
    assert!(matches!(
        map_size(&skel, &skel, &bad),
        Err(Error::JointOutOfRange { joint: 5000, .. })
    ));
    // Map a child to the source's root while its parent stays mapped: a conflict.
    let child = (1..corr.len())
        .find(|&j| corr[j] != NO_PARENT)
        .expect("child");
    let mut conflict = corr.clone();
    conflict[child] = 0;
    assert!(matches!(
        map_size(&skel, &skel, &conflict),
        Err(Error::RetargetConflict { joint }) if joint == child
    ));
    let mut small = storage(64);
    assert!(matches!(
        write_map(
            &skel,
            &skel,
            &corr,
            &MapOptions::default(),
            bytes_of(&mut small)
        ),
        Err(Error::BufferTooSmall { .. })
    ));
    let mut full = storage(good.len());
    let opts = MapOptions {
        root_scale: Some(f32::NAN),
        ..MapOptions::default()
    };
    assert!(matches!(
        write_map(&skel, &skel, &corr, &opts, bytes_of(&mut full)),
        Err(Error::InvalidParameter { .. })
    ));
    let mut names = vec![0u16; skel.joint_count()];
    assert!(matches!(
        correspond(&skel, &skel, &[("pelvis", "no such joint")], &mut names),
        Err(Error::UnknownJoint { entry: 0 })
    ));
}

#[test]
fn fingerprint_tells_skeletons_apart() {
    let b = humanoid();
    let skel = Skeleton::from_bytes(&b.0).expect("skeleton");
    let (mut buf, _, _) = build_self(&skel, &MapOptions::default());
    let map = RetargetMap::from_bytes(bytes_of(&mut buf)).expect("map");
    let joints = procedural::humanoid_with_tail_joints();
    let mut other = storage(crate::skeleton::required_size(&joints));
    let n = crate::skeleton::build(&joints, bytes_of(&mut other), None).expect("tail");
    let other_bytes = bytes_of(&mut other);
    let with_tail = Skeleton::from_bytes(&other_bytes[..n]).expect("tail skeleton");
    assert_eq!(
        map.check_skeletons(&with_tail, &skel),
        Err(Error::SkeletonMismatch { which: "source" })
    );
    assert_eq!(
        map.check_skeletons(&skel, &with_tail),
        Err(Error::SkeletonMismatch { which: "target" })
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// The lane kernel agrees with its scalar twin on random poses.
    #[test]
    fn simd_matches_reference(seed in any::<u64>(), align in any::<bool>()) {
        let b = humanoid();
        let skel = Skeleton::from_bytes(&b.0).expect("skeleton");
        let options = MapOptions { align_rest_directions: align, ..MapOptions::default() };
        let (mut buf, _, _) = build_self(&skel, &options);
        let map = RetargetMap::from_bytes(bytes_of(&mut buf)).expect("map");
        let mut rng = seed | 1;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            (rng >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
        };
        let mut pose = skel.rest_pose().to_vec();
        for j in 0..skel.joint_count() {
            let q = Quat::new(next(), next(), next(), next() + 1.5).normalize();
            let t = Transform::from_translation_rotation(Vec3::new(next(), next(), next()), q);
            set_joint(&mut pose, j, &t).expect("set");
        }
        let mut a = vec![SoaTransform::IDENTITY; pose.len()];
        let mut r = vec![SoaTransform::IDENTITY; pose.len()];
        retarget(&map, &pose, &mut a).expect("simd");
        reference::retarget(&map, &pose, &mut r).expect("scalar");
        for j in 0..pose.len() * 4 {
            let (x, y) = (get_joint(&a, j).expect("a"), get_joint(&r, j).expect("r"));
            for (u, v) in x.rotation.to_array().iter().zip(y.rotation.to_array()) {
                prop_assert!((u - v).abs() <= 1e-5, "joint {} {:?} {:?}", j, x, y);
            }
            prop_assert!((x.translation - y.translation).length() <= 1e-5);
            prop_assert_eq!(x.scale, y.scale);
        }
    }
}
