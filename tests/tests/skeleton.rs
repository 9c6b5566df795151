//! Skeleton builder and container: validity, reordering and remap, brute-force
//! tree queries, exact `from_bytes` errors, and fuzzing of untrusted bytes.

#[path = "../support/mod.rs"]
mod support;

use proptest::prelude::*;
use sinew_core::fk::{self, FkJob};
use sinew_core::procedural::{humanoid_joints, HUMANOID_JOINT_COUNT, HUMANOID_SKELETON_BYTES};
use sinew_core::skeleton::{self, required_size, JointDef, SKELETON_MAGIC, SKELETON_VERSION};
use sinew_core::{soa_count, Error, Mat4, Quat, Skeleton, Transform, Vec3, MAX_JOINTS, NO_PARENT};
use sinew_std::AlignedBytes;
use support::*;

/// Builds `defs` into a fresh aligned buffer of exactly the required size.
fn build_bytes(defs: &[JointDef<'_>], remap: Option<&mut [u16]>) -> Result<AlignedBytes, Error> {
    let mut bytes = AlignedBytes::zeroed(required_size(defs));
    let written = skeleton::build(defs, bytes.as_mut_slice(), remap)?;
    assert_eq!(
        written,
        bytes.len(),
        "build writes exactly required_size bytes"
    );
    Ok(bytes)
}

fn build_err(defs: &[JointDef<'_>]) -> Error {
    build_bytes(defs, None).map(|_| ()).unwrap_err()
}

fn def(name: &str, parent: Option<usize>) -> JointDef<'_> {
    JointDef {
        name,
        parent,
        rest: Transform::from_translation_rotation(Vec3::new(0.0, 0.1, 0.0), Quat::IDENTITY),
    }
}

fn humanoid_bytes() -> AlignedBytes {
    build_bytes(&humanoid_joints(), None).unwrap()
}

/// Section offsets of a container, recomputed from the format table in the
/// skeleton module's docs (not from the core's code).
#[derive(Debug)]
struct Layout {
    parents: usize,
    rest: usize,
    inverse_bind: usize,
    name_offsets: usize,
    names: usize,
    total: usize,
}

fn layout(n: usize, names_size: usize) -> Layout {
    let a16 = |x: usize| x.div_ceil(16) * 16;
    let parents = 48;
    let rest = a16(parents + 2 * n);
    let inverse_bind = rest + 160 * n.div_ceil(4);
    let name_offsets = inverse_bind + 64 * n;
    let names = a16(name_offsets + 4 * (n + 1));
    let total = a16(names + names_size);
    Layout {
        parents,
        rest,
        inverse_bind,
        name_offsets,
        names,
        total,
    }
}

fn put_u32(bytes: &mut [u8], at: usize, v: u32) {
    bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn put_u16(bytes: &mut [u8], at: usize, v: u16) {
    bytes[at..at + 2].copy_from_slice(&v.to_le_bytes());
}

fn names_size_of(defs: &[JointDef<'_>]) -> usize {
    defs.iter().map(|d| d.name.len()).sum()
}

/// Humanoid bytes after `edit`, validated.
fn humanoid_edited(edit: impl FnOnce(&mut [u8], &Layout)) -> Result<(), Error> {
    let defs = humanoid_joints();
    let l = layout(defs.len(), names_size_of(&defs));
    let mut bytes = humanoid_bytes();
    edit(bytes.as_mut_slice(), &l);
    Skeleton::from_bytes(bytes.as_slice()).map(|_| ())
}

// ---------------------------------------------------------------------------
// Builder validity
// ---------------------------------------------------------------------------

#[test]
fn builder_no_joints() {
    let mut buf = AlignedBytes::zeroed(1024);
    assert_eq!(
        skeleton::build(&[], buf.as_mut_slice(), None),
        Err(Error::NoJoints)
    );
}

#[test]
fn builder_too_many_joints() {
    let names: Vec<String> = (0..=MAX_JOINTS).map(|j| format!("j{j}")).collect();
    let defs: Vec<JointDef<'_>> = names.iter().map(|n| def(n, None)).collect();
    assert_eq!(defs.len(), MAX_JOINTS + 1);
    assert_eq!(
        build_err(&defs),
        Error::TooManyJoints {
            count: MAX_JOINTS + 1
        }
    );
    // The count is checked before the buffer.
    assert_eq!(
        skeleton::build(&defs, &mut [], None),
        Err(Error::TooManyJoints {
            count: MAX_JOINTS + 1
        })
    );
}

#[test]
fn builder_max_joints_chain_works() {
    // Exactly MAX_JOINTS joints in one chain: the deepest possible skeleton.
    let names: Vec<String> = (0..MAX_JOINTS).map(|j| format!("j{j}")).collect();
    let defs: Vec<JointDef<'_>> = names
        .iter()
        .enumerate()
        .map(|(j, n)| def(n, j.checked_sub(1)))
        .collect();
    let bytes = build_bytes(&defs, None).unwrap();
    let skel = Skeleton::from_bytes(bytes.as_slice()).unwrap();
    assert_eq!(skel.joint_count(), MAX_JOINTS);
    assert_eq!(skel.subtree_end(0), MAX_JOINTS);
    assert_eq!(skel.subtree_end(MAX_JOINTS / 2), MAX_JOINTS);
    assert_eq!(skel.depth(MAX_JOINTS - 1), MAX_JOINTS - 1);
    let mut models = vec![Mat4::IDENTITY; MAX_JOINTS];
    fk::local_to_model(&FkJob::new(&skel, skel.rest_pose()), &mut models).unwrap();
    let tip = models[MAX_JOINTS - 1].translation();
    assert!((tip.y - 0.1 * MAX_JOINTS as f32).abs() < 1e-2, "{tip:?}");
}

#[test]
fn builder_parent_out_of_range_or_self() {
    for bad in [3, 4, 1000, usize::MAX] {
        let defs = [def("a", None), def("b", Some(0)), def("c", Some(bad))];
        assert_eq!(
            build_err(&defs),
            Error::InvalidParent { joint: 2 },
            "parent {bad}"
        );
    }
    let defs = [def("a", None), def("b", Some(1)), def("c", Some(0))];
    assert_eq!(build_err(&defs), Error::InvalidParent { joint: 1 });
    let defs = [def("a", Some(0))];
    assert_eq!(build_err(&defs), Error::InvalidParent { joint: 0 });
}

#[test]
fn builder_cycles() {
    // 2-cycle next to a valid root.
    let defs = [def("r", None), def("a", Some(2)), def("b", Some(1))];
    assert_eq!(build_err(&defs), Error::InvalidParent { joint: 2 });
    // 3-cycle 1 -> 3 -> 2 -> 1 with a child hanging off it, after valid joints.
    let defs = [
        def("r", None),
        def("a", Some(3)),
        def("b", Some(1)),
        def("c", Some(2)),
        def("d", Some(3)),
        def("e", Some(0)),
    ];
    assert_eq!(build_err(&defs), Error::InvalidParent { joint: 1 });
    // Nothing but a cycle: no root at all.
    let defs = [def("a", Some(1)), def("b", Some(0))];
    assert_eq!(build_err(&defs), Error::InvalidParent { joint: 0 });
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Re-parenting a random joint onto one of its own descendants (or itself
    /// through a chain) always makes a cycle, which the builder rejects with
    /// `InvalidParent` naming a joint on the cycle.
    #[test]
    fn builder_rejects_random_cycles(
        parents in forest(40),
        a in any::<prop::sample::Index>(),
        b in any::<prop::sample::Index>(),
    ) {
        let n = parents.len();
        let j = a.index(n);
        // Descendants of j (including j): parent of j becomes one of them.
        let desc: Vec<usize> = (0..n).filter(|&k| k == j || ancestors(&parents, k).contains(&j)).collect();
        let target = desc[b.index(desc.len())];
        let mut cyclic = parents.clone();
        if target != j {
            cyclic[j] = Some(target);
        } else if n > 1 {
            // j is a leaf: make a 2-cycle with another joint instead.
            let k = (j + 1 + b.index(n - 1)) % n;
            cyclic[j] = Some(k);
            cyclic[k] = Some(j);
        } else {
            return Ok(()); // one joint: only a self parent, tested separately
        }
        let names: Vec<String> = (0..n).map(|k| format!("j{k}")).collect();
        let defs: Vec<JointDef<'_>> = names.iter().zip(&cyclic).map(|(nm, &p)| def(nm, p)).collect();
        // Brute force: joints whose parent chain never reaches a root.
        let unreachable: Vec<usize> = (0..n)
            .filter(|&k| {
                let mut cur = k;
                for _ in 0..=n {
                    match cyclic[cur] {
                        None => return false,
                        Some(p) => cur = p,
                    }
                }
                true
            })
            .collect();
        prop_assert!(unreachable.contains(&j));
        // The reported joint must lie on the cycle itself: its parent chain
        // comes back to it.
        let on_cycle = |k: usize| {
            let mut cur = k;
            for _ in 0..n {
                match cyclic[cur] {
                    Some(p) if p == k => return true,
                    Some(p) => cur = p,
                    None => return false,
                }
            }
            false
        };
        match build_err(&defs) {
            Error::InvalidParent { joint } => prop_assert!(
                unreachable.contains(&joint) && on_cycle(joint),
                "joint {} reported, unreachable {:?}", joint, unreachable
            ),
            e => prop_assert!(false, "unexpected {:?}", e),
        }
    }
}

#[test]
fn builder_non_finite_rest() {
    let bad_transforms = [
        Transform::new(Vec3::new(f32::NAN, 0.0, 0.0), Quat::IDENTITY, Vec3::ONE),
        Transform::new(Vec3::ZERO, Quat::new(0.0, f32::NAN, 0.0, 1.0), Vec3::ONE),
        Transform::new(
            Vec3::ZERO,
            Quat::IDENTITY,
            Vec3::new(1.0, 1.0, f32::INFINITY),
        ),
        Transform::new(
            Vec3::new(0.0, f32::NEG_INFINITY, 0.0),
            Quat::IDENTITY,
            Vec3::ONE,
        ),
    ];
    for bad in bad_transforms {
        let mut defs = [def("a", None), def("b", Some(0)), def("c", Some(1))];
        defs[2].rest = bad;
        assert_eq!(
            build_err(&defs),
            Error::NonFinite {
                what: "rest transform"
            },
            "{bad:?}"
        );
    }
}

#[test]
fn builder_zero_scale_is_singular() {
    for scale in [
        Vec3::ZERO,
        Vec3::new(1.0, 0.0, 1.0),
        Vec3::new(1.0, 1.0, -0.0),
    ] {
        let mut defs = [
            def("a", None),
            def("b", Some(0)),
            def("c", Some(1)),
            def("d", Some(0)),
        ];
        defs[1].rest.scale = scale;
        assert_eq!(
            build_err(&defs),
            Error::SingularTransform { joint: 1 },
            "{scale:?}"
        );
    }
    // The joint is named by its index in the builder's input, even when the
    // input is reordered (children first here: input 0 ends up last).
    let mut defs = [def("leaf", Some(1)), def("mid", Some(2)), def("root", None)];
    defs[0].rest.scale = Vec3::new(0.0, 1.0, 1.0);
    assert_eq!(build_err(&defs), Error::SingularTransform { joint: 0 });
}

#[test]
fn builder_buffer_too_small() {
    let defs = humanoid_joints();
    let needed = required_size(&defs);
    assert_eq!(needed, HUMANOID_SKELETON_BYTES);
    for actual in [0, 16, 48, needed - 16, needed - 1] {
        let mut buf = AlignedBytes::zeroed(actual);
        assert_eq!(
            skeleton::build(&defs, buf.as_mut_slice(), None),
            Err(Error::BufferTooSmall { needed, actual })
        );
    }
    // Larger buffers are fine; only the first `needed` bytes are the container.
    let mut buf = AlignedBytes::zeroed(needed + 100);
    assert_eq!(skeleton::build(&defs, buf.as_mut_slice(), None), Ok(needed));
}

#[test]
fn builder_misaligned_buffer() {
    let defs = humanoid_joints();
    let needed = required_size(&defs);
    let mut buf = AlignedBytes::zeroed(needed + 16);
    for offset in [1, 4, 8, 15] {
        let out = &mut buf.as_mut_slice()[offset..offset + needed];
        assert_eq!(
            skeleton::build(&defs, out, None),
            Err(Error::Misaligned),
            "offset {offset}"
        );
    }
    let out = &mut buf.as_mut_slice()[16..16 + needed];
    assert_eq!(skeleton::build(&defs, out, None), Ok(needed));
}

#[test]
fn builder_remap_wrong_length() {
    let defs = [def("a", None), def("b", Some(0)), def("c", Some(0))];
    for len in [0, 2, 4] {
        let mut remap = vec![0u16; len];
        assert_eq!(
            build_bytes(&defs, Some(&mut remap)).map(|_| ()),
            Err(Error::BadLength {
                buffer: "remap",
                expected: 3,
                actual: len
            })
        );
    }
}

// ---------------------------------------------------------------------------
// Builder correctness
// ---------------------------------------------------------------------------

#[test]
fn children_before_parents_are_reordered() {
    // Input: hand, forearm, upper arm, root, head (children first).
    let defs = [
        def("hand", Some(1)),
        def("forearm", Some(2)),
        def("upper", Some(3)),
        def("root", None),
        def("head", Some(3)),
    ];
    let mut remap = [0u16; 5];
    let bytes = build_bytes(&defs, Some(&mut remap)).unwrap();
    let skel = Skeleton::from_bytes(bytes.as_slice()).unwrap();
    // Depth-first pre-order, children in input order: root, upper, forearm, hand, head.
    assert_eq!(remap, [3, 2, 1, 0, 4]);
    let names: Vec<&str> = (0..5).map(|j| skel.joint_name(j).unwrap()).collect();
    assert_eq!(names, ["root", "upper", "forearm", "hand", "head"]);
    assert_eq!(skel.parents(), &[NO_PARENT, 0, 1, 2, 0]);
    assert_eq!(skel.find_joint("hand"), Some(3));
    assert_eq!(skel.find_joint("nope"), None);
    assert_eq!(
        (0..5).map(|j| skel.subtree_end(j)).collect::<Vec<_>>(),
        [5, 4, 4, 4, 5]
    );
    assert_eq!(
        (0..5).map(|j| skel.depth(j)).collect::<Vec<_>>(),
        [0, 1, 2, 3, 1]
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Random forests in arbitrary order: the built skeleton is the
    /// depth-first pre-order (computed independently here), `remap` maps input
    /// to built indices, and names, parents, rest transforms and inverse binds
    /// follow their joints.
    #[test]
    fn builder_reorders_and_remaps(joints in random_joints(70, 0.9, 1.1)) {
        let defs = joints.defs();
        let n = defs.len();
        let mut remap = vec![u16::MAX; n];
        let bytes = build_bytes(&defs, Some(&mut remap)).unwrap();
        let skel = Skeleton::from_bytes(bytes.as_slice()).unwrap();
        prop_assert_eq!(skel.joint_count(), n);
        prop_assert_eq!(skel.soa_count(), soa_count(n));
        let order = preorder(&joints.parents);
        for (new, &old) in order.iter().enumerate() {
            prop_assert_eq!(remap[old] as usize, new, "remap of input joint {}", old);
        }
        for old in 0..n {
            let new = remap[old] as usize;
            prop_assert_eq!(skel.joint_name(new), Some(joints.names[old].as_str()));
            prop_assert_eq!(skel.parent(new), joints.parents[old].map(|p| remap[p] as usize));
            let rest = sinew_core::soa::get_joint(skel.rest_pose(), new).unwrap();
            prop_assert_eq!(rest, joints.rest[old]);
            // Inverse bind: the inverse of the model-space rest matrix walked in input order.
            let mut model = joints.rest[old].to_matrix();
            for a in ancestors(&joints.parents, old) {
                model = joints.rest[a].to_matrix() * model;
            }
            prop_assert!(mat_close(&(model * skel.inverse_bind()[new]), &Mat4::IDENTITY, 1e-4), "joint {}", old);
        }
        // Padding lanes of the rest pose are identity.
        for j in n..skel.soa_count() * 4 {
            prop_assert_eq!(sinew_core::soa::get_joint(skel.rest_pose(), j).unwrap(), Transform::IDENTITY);
        }
        // Out-of-range queries.
        prop_assert_eq!(skel.joint_name(n), None);
        prop_assert_eq!(skel.parent(n), None);
        prop_assert_eq!(skel.subtree_end(n), n);
        prop_assert_eq!(skel.depth(n), 0);
        // Trailing bytes after the container are ignored.
        let mut longer = AlignedBytes::zeroed(bytes.len() + 32);
        longer.as_mut_slice()[..bytes.len()].copy_from_slice(bytes.as_slice());
        prop_assert_eq!(Skeleton::from_bytes(longer.as_slice()).unwrap().parents(), skel.parents());
    }

    /// `subtree_end` and `depth` agree with brute force over the parent array.
    #[test]
    fn subtree_end_and_depth_match_brute_force(parents in forest(70)) {
        let names: Vec<String> = (0..parents.len()).map(|k| format!("j{k}")).collect();
        let defs: Vec<JointDef<'_>> = names.iter().zip(&parents).map(|(nm, &p)| def(nm, p)).collect();
        let bytes = build_bytes(&defs, None).unwrap();
        let skel = Skeleton::from_bytes(bytes.as_slice()).unwrap();
        let built = parents_of(&skel);
        let n = built.len();
        for j in 0..n {
            let desc: Vec<usize> = (0..n).filter(|&k| k == j || ancestors(&built, k).contains(&j)).collect();
            let end = skel.subtree_end(j);
            prop_assert_eq!(desc, (j..end).collect::<Vec<_>>(), "subtree of {}", j);
            prop_assert_eq!(skel.depth(j), ancestors(&built, j).len());
            if let Some(p) = built[j] {
                prop_assert!(p < j, "parent {} of {} does not come first", p, j);
            }
        }
    }
}

// ---------------------------------------------------------------------------
// from_bytes: exact errors
// ---------------------------------------------------------------------------

#[test]
fn from_bytes_accepts_the_humanoid() {
    let bytes = humanoid_bytes();
    let skel = Skeleton::from_bytes(bytes.as_slice()).unwrap();
    assert_eq!(skel.joint_count(), HUMANOID_JOINT_COUNT);
    let defs = humanoid_joints();
    let l = layout(defs.len(), names_size_of(&defs));
    assert_eq!(l.total, bytes.len());
    assert_eq!(&bytes.as_slice()[..8], &SKELETON_MAGIC);
}

#[test]
fn from_bytes_truncated_at_every_length() {
    let bytes = humanoid_bytes();
    let total = bytes.len();
    for len in 0..total {
        let needed = if len < 48 { 48 } else { total };
        assert_eq!(
            Skeleton::from_bytes(&bytes.as_slice()[..len]).map(|_| ()),
            Err(Error::Truncated {
                needed,
                actual: len
            }),
            "length {len}"
        );
    }
    assert!(Skeleton::from_bytes(bytes.as_slice()).is_ok());
}

#[test]
fn from_bytes_bad_magic() {
    for i in 0..8 {
        for v in [0u8, b'x', 0xFF] {
            let r = humanoid_edited(|b, _| {
                if b[i] != v {
                    b[i] = v;
                } else {
                    b[i] ^= 1;
                }
            });
            assert_eq!(r, Err(Error::BadMagic), "byte {i} = {v}");
        }
    }
}

#[test]
fn from_bytes_unsupported_version() {
    for found in [0, SKELETON_VERSION + 1, 0x0100_0000, u32::MAX] {
        let r = humanoid_edited(|b, _| put_u32(b, 8, found));
        assert_eq!(r, Err(Error::UnsupportedVersion { found }));
    }
}

#[test]
fn from_bytes_misaligned() {
    let bytes = humanoid_bytes();
    let mut buf = AlignedBytes::zeroed(bytes.len() + 16);
    for offset in [1, 2, 8, 15] {
        buf.as_mut_slice()[offset..offset + bytes.len()].copy_from_slice(bytes.as_slice());
        let view = &buf.as_slice()[offset..offset + bytes.len()];
        assert_eq!(
            Skeleton::from_bytes(view).map(|_| ()),
            Err(Error::Misaligned),
            "offset {offset}"
        );
    }
}

#[test]
fn from_bytes_bad_header_fields() {
    let defs = humanoid_joints();
    let n = defs.len() as u32;
    assert_eq!(
        humanoid_edited(|b, _| put_u32(b, 12, 0)),
        Err(Error::NoJoints)
    );
    assert_eq!(
        humanoid_edited(|b, _| put_u32(b, 12, MAX_JOINTS as u32 + 1)),
        Err(Error::TooManyJoints {
            count: MAX_JOINTS + 1
        })
    );
    // A joint count that disagrees with the total size.
    for count in [1, n - 1, n + 1, MAX_JOINTS as u32] {
        assert!(
            matches!(
                humanoid_edited(|b, _| put_u32(b, 12, count)),
                Err(Error::Corrupt { .. })
            ),
            "count {count}"
        );
    }
    // Total size or names size off.
    assert!(matches!(
        humanoid_edited(|b, l| put_u32(b, 16, l.total as u32 + 16)),
        Err(Error::Corrupt { .. })
    ));
    assert!(matches!(
        humanoid_edited(|b, l| put_u32(b, 16, l.total as u32 - 16)),
        Err(Error::Corrupt { .. })
    ));
    assert!(matches!(
        humanoid_edited(|b, _| put_u32(b, 20, u32::MAX)),
        Err(Error::Corrupt { .. })
    ));
    // Consistent header that claims more bytes than there are.
    let r = humanoid_edited(|b, l| {
        let names_size = u32::from_le_bytes(b[20..24].try_into().unwrap()) as usize;
        let bigger = layout(n as usize, names_size + 64);
        put_u32(b, 20, (names_size + 64) as u32);
        put_u32(b, 16, bigger.total as u32);
        assert!(bigger.total > l.total);
    });
    assert!(matches!(r, Err(Error::Truncated { .. })), "{r:?}");
    // Reserved bytes must be zero.
    for at in [24, 31, 47] {
        assert!(
            matches!(
                humanoid_edited(|b, _| b[at] = 1),
                Err(Error::Corrupt { .. })
            ),
            "byte {at}"
        );
    }
}

#[test]
fn from_bytes_bad_parents() {
    // Joint 0 must be a root; a parent must be an ancestor-or-self of the previous joint.
    assert_eq!(
        humanoid_edited(|b, l| put_u16(b, l.parents, 0)),
        Err(Error::InvalidParent { joint: 0 })
    );
    assert_eq!(
        humanoid_edited(|b, l| put_u16(b, l.parents + 2 * 5, 5)),
        Err(Error::InvalidParent { joint: 5 })
    );
    assert_eq!(
        humanoid_edited(|b, l| put_u16(b, l.parents + 2 * 5, 6)),
        Err(Error::InvalidParent { joint: 5 })
    );
    assert_eq!(
        humanoid_edited(|b, l| put_u16(b, l.parents + 2 * 9, 1000)),
        Err(Error::InvalidParent { joint: 9 })
    );
    // Joint 8 (eye_r, a child of head) re-parented onto joint 7 (eye_l, a
    // leaf sibling before it) is still pre-order: accepted.
    let skel_ok = humanoid_edited(|b, l| put_u16(b, l.parents + 2 * 8, 7));
    assert_eq!(skel_ok, Ok(()));
    // But re-parenting joint 9 onto joint 7 is not (7's subtree ended at 8).
    assert_eq!(
        humanoid_edited(|b, l| put_u16(b, l.parents + 2 * 9, 7)),
        Err(Error::InvalidParent { joint: 9 })
    );
    // Making the last top-level subtree (the right leg) a second root is
    // fine: a forest in pre-order.
    let thigh_r = {
        let bytes = humanoid_bytes();
        Skeleton::from_bytes(bytes.as_slice())
            .unwrap()
            .find_joint("thigh_r")
            .unwrap()
    };
    assert_eq!(
        humanoid_edited(|b, l| put_u16(b, l.parents + 2 * thigh_r, NO_PARENT)),
        Ok(())
    );
    // But cutting the left clavicle loose breaks the order: the right
    // clavicle's parent (spine_03) is no longer an ancestor of the joint before it.
    let (clav_l, clav_r) = {
        let bytes = humanoid_bytes();
        let skel = Skeleton::from_bytes(bytes.as_slice()).unwrap();
        (
            skel.find_joint("clavicle_l").unwrap(),
            skel.find_joint("clavicle_r").unwrap(),
        )
    };
    assert_eq!(
        humanoid_edited(|b, l| put_u16(b, l.parents + 2 * clav_l, NO_PARENT)),
        Err(Error::InvalidParent { joint: clav_r })
    );
}

#[test]
fn from_bytes_non_finite_floats() {
    for v in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        for at in [0, 17, 639] {
            let r = humanoid_edited(|b, l| {
                b[l.rest + 4 * at..l.rest + 4 * at + 4].copy_from_slice(&v.to_le_bytes())
            });
            assert_eq!(
                r,
                Err(Error::NonFinite { what: "rest pose" }),
                "rest float {at}"
            );
        }
        for at in [0, 15, 70 * 16 - 1] {
            let r = humanoid_edited(|b, l| {
                b[l.inverse_bind + 4 * at..l.inverse_bind + 4 * at + 4]
                    .copy_from_slice(&v.to_le_bytes())
            });
            assert_eq!(
                r,
                Err(Error::NonFinite {
                    what: "inverse bind matrix"
                }),
                "inverse bind float {at}"
            );
        }
    }
}

#[test]
fn from_bytes_bad_names() {
    let defs = humanoid_joints();
    let n = defs.len();
    let names_size = names_size_of(&defs);
    let name0 = defs[0].name.len(); // "pelvis"
                                    // Invalid UTF-8 inside joint 0's name.
    assert_eq!(
        humanoid_edited(|b, l| b[l.names + 1] = 0xFF),
        Err(Error::InvalidName { joint: 0 })
    );
    // Offsets that do not start at 0 or do not end at the names size.
    for (at, v) in [
        (0usize, 1u32),
        (n, names_size as u32 - 1),
        (n, names_size as u32 + 1),
        (n, u32::MAX),
    ] {
        let r = humanoid_edited(|b, l| put_u32(b, l.name_offsets + 4 * at, v));
        assert!(
            matches!(r, Err(Error::Corrupt { .. })),
            "offset[{at}] = {v}: {r:?}"
        );
    }
    // Decreasing offsets: joint 1's name would end before it starts.
    let r = humanoid_edited(|b, l| put_u32(b, l.name_offsets + 4 * 2, name0 as u32 - 1));
    assert_eq!(r, Err(Error::InvalidName { joint: 1 }));
    // An inner offset past the end of the names section must be an error, not a panic.
    // (Offset `at` is where name `at` starts and name `at - 1` ends.)
    for v in [names_size as u32 + 1, names_size as u32 + 1000, u32::MAX] {
        for at in [1usize, 5, n - 1] {
            let r = humanoid_edited(|b, l| put_u32(b, l.name_offsets + 4 * at, v));
            assert_eq!(
                r,
                Err(Error::InvalidName { joint: at - 1 }),
                "offset[{at}] = {v}"
            );
        }
    }
    // Offsets that split a multi-byte UTF-8 character.
    let names = ["\u{e9}t\u{e9}", "b"];
    let defs = [def(names[0], None), def(names[1], Some(0))];
    let mut bytes = build_bytes(&defs, None).unwrap();
    let l = layout(2, names_size_of(&defs));
    put_u32(bytes.as_mut_slice(), l.name_offsets + 4, 1);
    assert_eq!(
        Skeleton::from_bytes(bytes.as_slice()).map(|_| ()),
        Err(Error::InvalidName { joint: 0 })
    );
}

// ---------------------------------------------------------------------------
// from_bytes: fuzzing (never panics; an accepted view is consistent)
// ---------------------------------------------------------------------------

/// Everything a caller may do with an accepted view: none of it may panic,
/// and the structural guarantees of the container must hold.
fn exercise(bytes: &[u8]) -> Result<(), TestCaseError> {
    let Ok(skel) = Skeleton::from_bytes(bytes) else {
        return Ok(());
    };
    let n = skel.joint_count();
    prop_assert!((1..=MAX_JOINTS).contains(&n));
    prop_assert_eq!(skel.soa_count(), soa_count(n));
    prop_assert_eq!(skel.rest_pose().len(), soa_count(n));
    prop_assert_eq!(skel.inverse_bind().len(), n);
    let parents = parents_of(&skel);
    for j in 0..n {
        let name = skel.joint_name(j);
        prop_assert!(name.is_some(), "joint {} has no name", j);
        if let Some(name) = name {
            let found = skel.find_joint(name);
            prop_assert!(found.is_some_and(|k| k <= j));
        }
        // Depth-first pre-order: the parent is an ancestor-or-self of j - 1.
        if let Some(p) = parents[j] {
            prop_assert!(p < j);
            prop_assert!(
                p == j - 1 || ancestors(&parents, j - 1).contains(&p),
                "joint {} parent {}",
                j,
                p
            );
        }
        let end = skel.subtree_end(j);
        prop_assert!(end > j && end <= n);
        prop_assert_eq!(skel.depth(j), ancestors(&parents, j).len());
    }
    for j in [n, n + 1, usize::MAX - 1] {
        prop_assert_eq!(skel.joint_name(j), None);
        prop_assert_eq!(skel.parent(j), None);
        prop_assert_eq!(skel.subtree_end(j), n);
        prop_assert_eq!(skel.depth(j), 0);
    }
    let mut models = vec![Mat4::IDENTITY; n];
    let job = FkJob::new(&skel, skel.rest_pose());
    prop_assert_eq!(fk::local_to_model(&job, &mut models), Ok(()));
    prop_assert_eq!(fk::reference::local_to_model(&job, &mut models), Ok(()));
    prop_assert_eq!(
        fk::local_to_model(&job.range(n / 2, n), &mut models),
        Ok(())
    );
    Ok(())
}

#[derive(Clone, Debug)]
enum Mutation {
    Flip { at: usize, bit: u8 },
    Set { at: usize, value: u8 },
    SetU32 { at: usize, value: u32 },
}

/// Mutation positions: half anywhere, half in the structural sections
/// (header, parents, name offsets and names) where they matter most.
fn mutation(len: usize, structural: Vec<(usize, usize)>) -> impl Strategy<Value = Mutation> {
    let pos = prop_oneof![
        (0..len).boxed(),
        prop::sample::select(structural)
            .prop_flat_map(|(a, b)| a..b)
            .boxed(),
    ];
    (pos, 0u8..3, any::<u8>(), any::<u32>(), 0u8..8).prop_map(move |(at, kind, byte, word, bit)| {
        match kind {
            0 => Mutation::Flip { at, bit },
            1 => Mutation::Set { at, value: byte },
            _ => Mutation::SetU32 {
                at: at.min(len - 4),
                value: match word % 4 {
                    0 => word,
                    1 => word % 64,
                    2 => word % 16384,
                    _ => u32::MAX - word % 4,
                },
            },
        }
    })
}

fn apply(bytes: &mut [u8], m: &Mutation) {
    match *m {
        Mutation::Flip { at, bit } => bytes[at] ^= 1 << bit,
        Mutation::Set { at, value } => bytes[at] = value,
        Mutation::SetU32 { at, value } => put_u32(bytes, at, value),
    }
}

fn humanoid_structural() -> (AlignedBytes, Vec<(usize, usize)>) {
    let defs = humanoid_joints();
    let l = layout(defs.len(), names_size_of(&defs));
    let bytes = humanoid_bytes();
    let regions = vec![(0, 48), (l.parents, l.rest), (l.name_offsets, l.total)];
    (bytes, regions)
}

/// Random header fields: valid magic, mostly the right version, any counts and
/// sizes (often self-consistent so validation gets past the header), and a
/// body with plausible sections (parents mostly chains, floats mostly finite,
/// offsets mostly increasing).
#[derive(Clone, Debug)]
struct HeaderCase {
    version: u32,
    joints: u32,
    names_size: u32,
    consistent_total: bool,
    total: u32,
    reserved: u8,
    parents: Vec<(u8, u16)>,
    float: (u8, f32),
    offsets: Vec<(u8, u32)>,
    name_bytes: Vec<u8>,
    extra: usize,
}

fn header_case() -> impl Strategy<Value = HeaderCase> {
    (
        prop_oneof![8 => Just(SKELETON_VERSION), 1 => any::<u32>()],
        prop_oneof![
            1 => Just(0u32),
            8 => 1u32..12,
            2 => 12u32..200,
            1 => (MAX_JOINTS as u32 - 2)..(MAX_JOINTS as u32 + 3),
            1 => any::<u32>(),
        ],
        prop_oneof![4 => 0u32..64, 1 => any::<u32>()],
        prop::bool::weighted(0.8),
        any::<u32>(),
        prop_oneof![6 => Just(0u8), 1 => any::<u8>()],
        prop::collection::vec((0u8..20, any::<u16>()), 0..32),
        (0u8..20, any::<f32>()),
        prop::collection::vec((0u8..20, any::<u32>()), 0..32),
        prop::collection::vec(any::<u8>(), 0..64),
        0usize..4,
    )
        .prop_map(
            |(
                version,
                joints,
                names_size,
                consistent_total,
                total,
                reserved,
                parents,
                float,
                offsets,
                name_bytes,
                extra,
            )| {
                HeaderCase {
                    version,
                    joints,
                    names_size,
                    consistent_total,
                    total,
                    reserved,
                    parents,
                    float,
                    offsets,
                    name_bytes,
                    extra,
                }
            },
        )
}

fn header_bytes(c: &HeaderCase) -> AlignedBytes {
    let n = c.joints as usize;
    let names_size = c.names_size as usize;
    // Body sections follow the declared counts when they are small enough to allocate.
    let body_n = n.min(MAX_JOINTS + 4);
    let l = layout(body_n, names_size.min(4096));
    let total = if c.consistent_total && n <= MAX_JOINTS + 4 && names_size <= 4096 {
        l.total as u32
    } else {
        c.total
    };
    let len = match c.extra {
        0 | 1 => l.total,
        2 => l.total + 16,
        _ => l.total.saturating_sub(16),
    };
    let mut bytes = AlignedBytes::zeroed(len.max(48));
    let b = bytes.as_mut_slice();
    b[..8].copy_from_slice(&SKELETON_MAGIC);
    put_u32(b, 8, c.version);
    put_u32(b, 12, c.joints);
    put_u32(b, 16, total);
    put_u32(b, 20, c.names_size);
    b[24 + (c.reserved as usize % 24)] = c.reserved;
    // Parents: mostly a chain or roots, sometimes anything.
    for j in 0..body_n {
        let (mode, v) = c
            .parents
            .get(j % c.parents.len().max(1))
            .copied()
            .unwrap_or((0, 0));
        let p = match mode {
            0..=11 if j > 0 => (j - 1) as u16,
            12..=14 => NO_PARENT,
            15..=17 if j > 0 => v % j as u16,
            _ if j == 0 => NO_PARENT,
            _ => v,
        };
        let at = l.parents + 2 * j;
        if at + 2 <= b.len() {
            put_u16(b, at, p);
        }
    }
    // Floats: rest pose identity-ish and inverse binds, sometimes a random value.
    let (fmode, fv) = c.float;
    let end = l.name_offsets.min(b.len());
    let mut k = 0usize;
    let mut at = l.rest;
    while at + 4 <= end {
        let v = match (fmode, k % 97) {
            (0, 13) => fv,
            _ => {
                if k.is_multiple_of(5) {
                    1.0
                } else {
                    0.0
                }
            }
        };
        b[at..at + 4].copy_from_slice(&v.to_le_bytes());
        at += 4;
        k += 1;
    }
    // Name offsets: 0, then mostly increasing, ending at the names size.
    let mut off = 0u32;
    for j in 0..=body_n {
        let (mode, v) = c
            .offsets
            .get(j % c.offsets.len().max(1))
            .copied()
            .unwrap_or((0, 0));
        let value = if j == 0 {
            0
        } else if j == body_n {
            c.names_size
        } else {
            match mode {
                0..=16 => {
                    off = off.saturating_add(v % 4);
                    off
                }
                17 => v,
                18 => c.names_size.saturating_add(v % 8),
                _ => off,
            }
        };
        let at = l.name_offsets + 4 * j;
        if at + 4 <= b.len() {
            put_u32(b, at, value);
        }
    }
    // Names: mostly ASCII, sometimes arbitrary bytes.
    for (i, &v) in c.name_bytes.iter().enumerate() {
        let at = l.names + i;
        if at < b.len() && at < l.names + names_size {
            b[at] = if v < 250 { b'a' + v % 26 } else { v };
        }
    }
    bytes
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    /// (a) Random bytes, often behind a valid magic and version.
    #[test]
    fn fuzz_random_bytes(
        prefix in 0u8..3,
        body in prop::collection::vec(any::<u8>(), 0..700),
    ) {
        let mut bytes = Vec::with_capacity(body.len() + 12);
        if prefix > 0 {
            bytes.extend_from_slice(&SKELETON_MAGIC);
        }
        if prefix > 1 {
            bytes.extend_from_slice(&SKELETON_VERSION.to_le_bytes());
        }
        bytes.extend_from_slice(&body);
        let aligned = AlignedBytes::copy_from(&bytes);
        exercise(aligned.as_slice())?;
    }

    /// (b) The humanoid's valid bytes with bit flips, byte and word overwrites,
    /// and truncation.
    #[test]
    fn fuzz_mutated_humanoid(
        (mutations, cut) in {
            let (bytes, regions) = humanoid_structural();
            let len = bytes.len();
            (
                prop::collection::vec(mutation(len, regions), 1..6),
                prop_oneof![4 => Just(None), 1 => (0..len).prop_map(Some)],
            )
        }
    ) {
        let mut bytes = humanoid_bytes();
        for m in &mutations {
            apply(bytes.as_mut_slice(), m);
        }
        let len = cut.unwrap_or(bytes.len());
        exercise(&bytes.as_slice()[..len])?;
    }

    /// (c) Random header fields over plausible bodies.
    #[test]
    fn fuzz_random_headers(case in header_case()) {
        let bytes = header_bytes(&case);
        exercise(bytes.as_slice())?;
    }
}

/// Finite rest values whose model-space matrix or its inverse overflow (found
/// by the ozz fuzz test in CI) are refused by the builder, instead of writing
/// a container that `from_bytes` would then reject.
#[test]
fn builder_rejects_rest_poses_whose_bind_matrices_overflow() {
    let huge = Transform::new(Vec3::new(3.0e38, 0.0, 0.0), Quat::IDENTITY, Vec3::ONE);
    let defs = [
        JointDef {
            name: "a",
            parent: None,
            rest: huge,
        },
        JointDef {
            name: "b",
            parent: Some(0),
            rest: huge,
        },
    ];
    assert_eq!(build_err(&defs), Error::SingularTransform { joint: 1 });
    let tiny_scale = Transform::new(Vec3::ZERO, Quat::IDENTITY, Vec3::splat(1.0e-13));
    let defs = [JointDef {
        name: "a",
        parent: None,
        rest: tiny_scale,
    }];
    assert_eq!(build_err(&defs), Error::SingularTransform { joint: 0 });
    let big_scale = Transform::new(
        Vec3::new(1.0e30, 0.0, 0.0),
        Quat::IDENTITY,
        Vec3::splat(1.0e-20),
    );
    let defs = [JointDef {
        name: "a",
        parent: None,
        rest: big_scale,
    }];
    assert!(matches!(
        build_err(&defs),
        Error::SingularTransform { joint: 0 }
    ));
}
