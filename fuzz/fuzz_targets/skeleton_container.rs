//! A skeleton container (`SINEWSKL`): `Skeleton::from_bytes` returns an
//! error, or a view whose parents, names, subtrees and depths agree with
//! one another, and that forward kinematics accepts over its rest pose
//! (whole skeleton and one subtree). The same bytes one byte off 16-byte
//! alignment are an error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sinew_core::fk::{local_to_model, FkJob};
use sinew_core::{Mat4, Skeleton, NO_PARENT};

/// `find_joint` is linear per call: look up only the first joints' names.
const NAME_LOOKUPS: usize = 64;

fuzz_target!(|data: &[u8]| {
    let bytes = sinew_fuzz::aligned(data);
    let bytes = bytes.as_slice();
    if bytes.len() > 1 {
        assert!(
            Skeleton::from_bytes(&bytes[1..]).is_err(),
            "misaligned bytes accepted"
        );
    }
    let Ok(s) = Skeleton::from_bytes(bytes) else {
        return;
    };
    let n = s.joint_count();
    assert!((1..=sinew_core::MAX_JOINTS).contains(&n));
    assert_eq!(s.soa_count(), sinew_core::soa_count(n));
    assert_eq!(s.rest_pose().len(), s.soa_count());
    assert_eq!(s.inverse_bind().len(), n);
    assert_eq!(s.parents().len(), n);
    let again = Skeleton::from_validated_bytes(bytes).expect("validated bytes view again");
    assert_eq!(again.joint_count(), n);

    // Depth-first pre-order: a parent comes first, and each subtree is the
    // run of joints deeper than its root.
    let mut depth = vec![0usize; n];
    for j in 0..n {
        let p = s.parents()[j];
        if p != NO_PARENT {
            let p = usize::from(p);
            assert!(p < j, "joint {j}: parent {p} does not come first");
            assert_eq!(s.parent(j), Some(p));
            depth[j] = depth[p] + 1;
        } else {
            assert_eq!(s.parent(j), None);
        }
        assert_eq!(s.depth(j), depth[j], "joint {j}: depth");
    }
    for j in 0..n {
        let end = (j + 1..n).find(|&k| depth[k] <= depth[j]).unwrap_or(n);
        assert_eq!(s.subtree_end(j), end, "joint {j}: subtree end");
    }
    assert_eq!(s.subtree_end(n), n);
    assert_eq!(s.depth(n), 0);

    for j in 0..n {
        let name = s.joint_name(j).expect("every joint has a UTF-8 name");
        if j < NAME_LOOKUPS {
            let found = s.find_joint(name).expect("a joint's own name is found");
            assert!(found <= j && s.joint_name(found) == Some(name));
        }
    }
    assert!(s.joint_name(n).is_none());

    let mut models = vec![Mat4::IDENTITY; n];
    local_to_model(&FkJob::new(&s, s.rest_pose()), &mut models).expect("FK of the rest pose");
    let first = n / 2;
    let job = FkJob::new(&s, s.rest_pose()).range(first, s.subtree_end(first));
    local_to_model(&job, &mut models).expect("FK of a subtree");
    let root = Mat4::IDENTITY;
    local_to_model(&FkJob::new(&s, s.rest_pose()).with_root(&root), &mut models)
        .expect("FK under a root matrix");
    assert!(
        local_to_model(&FkJob::new(&s, s.rest_pose()), &mut models[..n - 1]).is_err(),
        "FK into too few matrices"
    );
});
