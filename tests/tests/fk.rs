//! Local-to-model (FK): validity, SIMD vs scalar reference, an independent FK,
//! bind-pose consistency, range updates and the root matrix.

#[path = "../support/mod.rs"]
mod support;

use proptest::prelude::*;
use sinew_core::fk::{self, FkJob};
use sinew_core::{Error, Mat4, Quat, Skeleton, SoaTransform, Transform, Vec3};
use sinew_std::OwnedSkeleton;
use support::*;

type FkFn = fn(&FkJob<'_>, &mut [Mat4]) -> Result<(), Error>;

/// The SIMD product (eight-wide conversion on x86-64 CPUs with AVX2 and
/// FMA), the portable four-wide kernel and the scalar twin.
const KERNELS: [(&str, FkFn); 3] = [
    ("simd", fk::local_to_model),
    ("portable", fk::local_to_model_portable),
    ("reference", fk::reference::local_to_model),
];

/// Whether `fk::local_to_model` may run a kernel other than the portable
/// one here (x86-64 with AVX2 and FMA; the `portable` feature is not
/// visible from this crate, and under it both run the portable kernel,
/// which the comparison below then checks against itself).
fn wide_kernel_possible() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

fn run(kernel: FkFn, job: &FkJob<'_>) -> Vec<Mat4> {
    let mut out = vec![sentinel_mat(7.0); job.skeleton.joint_count()];
    kernel(job, &mut out).unwrap();
    out
}

fn expect_error(job: &FkJob<'_>, out_len: usize, expected: Error) {
    for (name, kernel) in KERNELS {
        let mut out = vec![sentinel_mat(7.0); out_len];
        let before = out.clone();
        assert_eq!(kernel(job, &mut out), Err(expected), "{name}");
        assert_eq!(out, before, "{name}: output written on error");
    }
}

/// FK written from scratch: for each joint walk its parent chain explicitly
/// and multiply the local matrices from the joint up (right to left), then
/// apply the root matrix. No use of the core's FK code.
fn independent_fk(parents: &[Option<usize>], local: &[Transform], root: &Mat4) -> Vec<Mat4> {
    (0..parents.len())
        .map(|j| {
            let mut m = local[j].to_matrix();
            for a in ancestors(parents, j) {
                m = local[a].to_matrix() * m;
            }
            *root * m
        })
        .collect()
}

fn build(joints: &Joints) -> OwnedSkeleton {
    OwnedSkeleton::build(&joints.defs()).expect("random skeleton builds")
}

fn root_matrix() -> impl Strategy<Value = Mat4> {
    transform(0.5, 2.0).prop_map(|t| t.to_matrix())
}

// ---------------------------------------------------------------------------
// Validity
// ---------------------------------------------------------------------------

#[test]
fn validity_local_pose_length() {
    let h = humanoid();
    let skel = h.skeleton.view();
    let (n, blocks) = (skel.joint_count(), skel.soa_count());
    for len in [0, 1, blocks - 1, blocks + 1] {
        let local = vec![SoaTransform::IDENTITY; len];
        expect_error(
            &FkJob::new(&skel, &local),
            n,
            Error::BadLength {
                buffer: "local pose",
                expected: blocks,
                actual: len,
            },
        );
    }
}

#[test]
fn validity_output_length() {
    let h = humanoid();
    let skel = h.skeleton.view();
    let n = skel.joint_count();
    for len in [0, 1, n - 1, n + 1, skel.soa_count()] {
        expect_error(
            &FkJob::new(&skel, skel.rest_pose()),
            len,
            Error::BadLength {
                buffer: "model matrices",
                expected: n,
                actual: len,
            },
        );
    }
}

#[test]
fn validity_range() {
    let h = humanoid();
    let skel = h.skeleton.view();
    let n = skel.joint_count();
    let job = FkJob::new(&skel, skel.rest_pose());
    for end in [n + 1, n + 4, usize::MAX] {
        expect_error(
            &job.range(0, end),
            n,
            Error::JointOutOfRange {
                joint: end,
                count: n,
            },
        );
    }
    // end > count is reported even when first is also past it.
    expect_error(
        &job.range(n + 1, n + 1),
        n,
        Error::JointOutOfRange {
            joint: n + 1,
            count: n,
        },
    );
    for (first, end) in [(1, 0), (10, 5), (n, n - 1), (usize::MAX, n)] {
        expect_error(
            &job.range(first, end),
            n,
            Error::JointOutOfRange {
                joint: first,
                count: n,
            },
        );
    }
    // Empty ranges are valid and write nothing.
    for first in [0, 17, n] {
        for (name, kernel) in KERNELS {
            let mut out = vec![sentinel_mat(7.0); n];
            assert_eq!(kernel(&job.range(first, first), &mut out), Ok(()), "{name}");
            assert!(out.iter().all(|m| *m == sentinel_mat(7.0)), "{name}");
        }
    }
}

#[test]
fn range_writes_only_its_joints() {
    let h = humanoid();
    let skel = h.skeleton.view();
    let n = skel.joint_count();
    let full = run(fk::local_to_model, &FkJob::new(&skel, skel.rest_pose()));
    for (first, end) in [(0, 1), (3, 9), (5, n), (n - 1, n)] {
        for (name, kernel) in KERNELS {
            // Parents before `first` must hold valid matrices; everything else is a sentinel.
            let mut out: Vec<Mat4> = (0..n)
                .map(|j| {
                    if j < first {
                        full[j]
                    } else {
                        sentinel_mat(7.0)
                    }
                })
                .collect();
            kernel(
                &FkJob::new(&skel, skel.rest_pose()).range(first, end),
                &mut out,
            )
            .unwrap();
            for j in 0..n {
                if (first..end).contains(&j) {
                    assert!(
                        mat_close(&out[j], &full[j], TOL),
                        "{name} {first}..{end}: joint {j}"
                    );
                } else if j >= end {
                    assert_eq!(
                        out[j],
                        sentinel_mat(7.0),
                        "{name} {first}..{end}: joint {j} written"
                    );
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Correctness
// ---------------------------------------------------------------------------

#[test]
fn to_matrix_matches_quaternion_rotation() {
    // The scalar building block of the independent FK: T R S applied to a
    // point equals t + q (s ⊙ p) computed with quaternion rotation.
    let t = Transform::new(
        Vec3::new(0.3, -1.0, 2.0),
        Quat::from_axis_angle(Vec3::new(0.0, 0.6, 0.8), 1.1),
        Vec3::new(2.0, 0.5, 1.5),
    );
    for p in [Vec3::X, Vec3::Y, Vec3::Z, Vec3::new(-0.4, 0.7, 1.9)] {
        let via_matrix = t.to_matrix().transform_point(p);
        let via_quat = t.translation + t.rotation.rotate(p.mul_elem(t.scale));
        assert!(
            vec_close(via_matrix, via_quat, 1e-6),
            "{via_matrix:?} vs {via_quat:?}"
        );
    }
}

#[test]
fn hand_computed_chain_and_root_matrix() {
    // Two roots; root 0 has a child and a grandchild. Root matrix = translate (10, 0, 0).
    let defs = Joints {
        names: ["a", "b", "c", "d"].map(String::from).to_vec(),
        parents: vec![None, Some(0), Some(1), None],
        rest: vec![Transform::IDENTITY; 4],
    };
    let owned = build(&defs);
    let skel = owned.view();
    let local = to_soa(&[
        Transform::from_translation_rotation(
            Vec3::new(1.0, 0.0, 0.0),
            Quat::from_rotation_z(90f32.to_radians()),
        ),
        Transform::from_translation_rotation(Vec3::new(2.0, 0.0, 0.0), Quat::IDENTITY),
        Transform::new(Vec3::new(0.0, 1.0, 0.0), Quat::IDENTITY, Vec3::splat(3.0)),
        Transform::from_translation_rotation(Vec3::new(0.0, 0.0, 5.0), Quat::IDENTITY),
    ]);
    let root = Mat4::from_translation(Vec3::new(10.0, 0.0, 0.0));
    let job = FkJob::new(&skel, &local).with_root(&root);
    // a at (11, 0, 0) rotated 90° about z: its +x is world +y.
    // b = a * (2, 0, 0) -> (11, 2, 0); c = b * (0, 1, 0) -> (10, 2, 0).
    // d is a root: (10, 0, 5). The root matrix is applied once, not per level.
    let expect = [
        Vec3::new(11.0, 0.0, 0.0),
        Vec3::new(11.0, 2.0, 0.0),
        Vec3::new(10.0, 2.0, 0.0),
        Vec3::new(10.0, 0.0, 5.0),
    ];
    for (name, kernel) in KERNELS {
        let models = run(kernel, &job);
        for (j, e) in expect.iter().enumerate() {
            assert!(
                vec_close(models[j].translation(), *e, 1e-6),
                "{name} joint {j}: {:?}",
                models[j].translation()
            );
        }
        // Scale 3 on c: its x axis maps to world -y * 3... length 3.
        let cx = models[2].transform_vector(Vec3::X);
        assert!((cx.length() - 3.0).abs() < 1e-5, "{name}: {cx:?}");
        assert!(
            vec_close(cx, Vec3::new(0.0, 3.0, 0.0), 1e-5),
            "{name}: {cx:?}"
        );
    }
}

/// FK of the rest pose is the bind pose: each model matrix is the inverse of
/// the joint's inverse-bind matrix.
fn assert_rest_fk_is_bind(skel: &Skeleton<'_>, tol: f32) {
    for (name, kernel) in KERNELS {
        let models = run(kernel, &FkJob::new(skel, skel.rest_pose()));
        for (j, (m, ib)) in models.iter().zip(skel.inverse_bind()).enumerate() {
            let bind = ib.inverse_affine().expect("inverse bind is invertible");
            assert!(
                mat_close(m, &bind, tol),
                "{name} joint {j}:\n  {m:?}\n  {bind:?}"
            );
            assert!(
                mat_close(&(*m * *ib), &Mat4::IDENTITY, tol),
                "{name} joint {j}: model * inverse bind is not identity"
            );
        }
    }
}

#[test]
fn humanoid_rest_fk_is_bind_pose() {
    let h = humanoid();
    assert_rest_fk_is_bind(&h.skeleton.view(), TOL);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(160))]

    /// The SIMD kernel equals its scalar twin on random skeletons and poses
    /// (non-uniform scale, optional root matrix).
    #[test]
    fn simd_matches_reference(
        (joints, local) in random_joints(70, 0.9, 1.1).prop_flat_map(|j| {
            let n = j.len();
            (Just(j), transforms(n, 0.5, 2.0))
        }),
        root in prop::option::of(root_matrix()),
    ) {
        let owned = build(&joints);
        let skel = owned.view();
        let local = to_soa(&local);
        let mut job = FkJob::new(&skel, &local);
        if let Some(r) = root.as_ref() {
            job = job.with_root(r);
        }
        let simd = run(fk::local_to_model, &job);
        let scalar = run(fk::reference::local_to_model, &job);
        for (j, (a, b)) in simd.iter().zip(&scalar).enumerate() {
            prop_assert!(mat_close(a, b, TOL), "joint {}:\n  {:?}\n  {:?}", j, a, b);
        }
    }

    /// The AVX2 kernel equals the portable one and the scalar reference, on
    /// the whole skeleton and on a random joint range (odd and even block
    /// counts, ranges starting and ending inside a block), with and without
    /// a root matrix; skipped on CPUs without AVX2 and FMA, where
    /// `local_to_model` is the portable kernel.
    #[test]
    fn wide_matches_portable_and_reference(
        (joints, local, a, b) in random_joints(70, 0.9, 1.1).prop_flat_map(|j| {
            let n = j.len();
            (Just(j), transforms(n, 0.5, 2.0), 0..=n, 0..=n)
        }),
        root in prop::option::of(root_matrix()),
    ) {
        if !wide_kernel_possible() {
            return Ok(());
        }
        let owned = build(&joints);
        let skel = owned.view();
        let local = to_soa(&local);
        let mut job = FkJob::new(&skel, &local);
        if let Some(r) = root.as_ref() {
            job = job.with_root(r);
        }
        let (first, end) = (a.min(b), a.max(b));
        for job in [job, job.range(first, end)] {
            // The range reads parents before `first` from the output: start
            // every kernel from the same full pass.
            let start = run(fk::reference::local_to_model, &FkJob { first: 0, end: skel.joint_count(), ..job });
            let go = |kernel: FkFn| {
                let mut out = start.clone();
                kernel(&job, &mut out).unwrap();
                out
            };
            let (wide, portable, scalar) = (
                go(fk::local_to_model),
                go(fk::local_to_model_portable),
                go(fk::reference::local_to_model),
            );
            for j in 0..skel.joint_count() {
                prop_assert!(mat_close(&wide[j], &portable[j], TOL), "joint {} of {}..{}:\n  wide     {:?}\n  portable {:?}", j, job.first, job.end, wide[j], portable[j]);
                prop_assert!(mat_close(&wide[j], &scalar[j], TOL), "joint {} of {}..{}:\n  wide {:?}\n  ref  {:?}", j, job.first, job.end, wide[j], scalar[j]);
                if !(job.first..job.end).contains(&j) {
                    prop_assert_eq!(wide[j], start[j], "joint {} outside {}..{} written", j, job.first, job.end);
                }
            }
        }
    }

    /// Both kernels agree with an FK written from scratch in this file.
    #[test]
    fn matches_independent_fk(
        (joints, local) in random_joints(40, 0.9, 1.1).prop_flat_map(|j| {
            let n = j.len();
            (Just(j), transforms(n, 0.5, 2.0))
        }),
        root in root_matrix(),
    ) {
        let owned = build(&joints);
        let skel = owned.view();
        // Locals are given in input order; the skeleton stores joints
        // reordered. Its names ("j{old}") say which input joint each one is.
        let order: Vec<usize> = (0..skel.joint_count())
            .map(|new| skel.joint_name(new).unwrap()[1..].parse().unwrap())
            .collect();
        let local_built: Vec<Transform> = order.iter().map(|&old| local[old]).collect();
        let soa_built = to_soa(&local_built);
        let expect = independent_fk(&parents_of(&skel), &local_built, &root);
        let job = FkJob::new(&skel, &soa_built).with_root(&root);
        for (name, kernel) in KERNELS {
            let got = run(kernel, &job);
            for (j, (a, b)) in got.iter().zip(&expect).enumerate() {
                prop_assert!(mat_close(a, b, 1e-5), "{} joint {}:\n  {:?}\n  {:?}", name, j, a, b);
            }
        }
        // The same FK over the input-order parent array gives each input
        // joint's model matrix where the skeleton put that joint.
        let expect_input = independent_fk(&joints.parents, &local, &root);
        let got = run(fk::local_to_model, &job);
        for (new, &old) in order.iter().enumerate() {
            prop_assert!(mat_close(&got[new], &expect_input[old], 1e-5), "input joint {}", old);
        }
    }

    /// FK of the rest pose equals the inverse of each inverse-bind matrix.
    #[test]
    fn random_rest_fk_is_bind_pose(joints in random_joints(70, 0.9, 1.1)) {
        let owned = build(&joints);
        assert_rest_fk_is_bind(&owned.view(), 1e-4);
    }

    /// Changing one joint and recomputing only its subtree gives exactly what a
    /// full recompute gives; joints outside the subtree are not written.
    #[test]
    fn subtree_update_equals_full_recompute(
        (joints, local, pick, new_local) in random_joints(70, 0.9, 1.1).prop_flat_map(|j| {
            let n = j.len();
            (Just(j), transforms(n, 0.5, 2.0), 0..n, transform(0.5, 2.0))
        }),
        root in prop::option::of(root_matrix()),
    ) {
        let owned = build(&joints);
        let skel = owned.view();
        let n = skel.joint_count();
        let pose = to_soa(&local);
        for (name, kernel) in KERNELS {
            let mut job = FkJob::new(&skel, &pose);
            if let Some(r) = root.as_ref() {
                job = job.with_root(r);
            }
            let before = run(kernel, &job);

            let mut changed = pose.clone();
            sinew_core::soa::set_joint(&mut changed, pick, &new_local).unwrap();
            let mut job = FkJob::new(&skel, &changed);
            if let Some(r) = root.as_ref() {
                job = job.with_root(r);
            }
            let full = run(kernel, &job);
            let end = skel.subtree_end(pick);
            prop_assert!(end > pick && end <= n);
            let mut partial = before.clone();
            kernel(&job.range(pick, end), &mut partial).unwrap();
            for j in 0..n {
                prop_assert_eq!(partial[j], full[j], "{} joint {} (subtree {}..{})", name, j, pick, end);
                if !(pick..end).contains(&j) {
                    prop_assert_eq!(partial[j], before[j], "{} joint {} outside the subtree changed", name, j);
                }
            }
            // The change is visible inside the subtree (unless it was a no-op).
            if !transform_close(&local[pick], &new_local, 1e-3) {
                prop_assert!(partial[pick] != before[pick], "{}: joint {} did not change", name, pick);
            }
        }
    }

    /// The root matrix multiplies roots only: every model matrix with a root
    /// matrix R equals R times the model matrix without it (a root matrix
    /// applied at every level would give R^depth instead).
    #[test]
    fn root_matrix_applies_once(
        (joints, local) in random_joints(40, 0.9, 1.1).prop_flat_map(|j| {
            let n = j.len();
            (Just(j), transforms(n, 0.8, 1.25))
        }),
        root in root_matrix(),
    ) {
        let owned = build(&joints);
        let skel = owned.view();
        let local = to_soa(&local);
        for (name, kernel) in KERNELS {
            let plain = run(kernel, &FkJob::new(&skel, &local));
            let rooted = run(kernel, &FkJob::new(&skel, &local).with_root(&root));
            for j in 0..skel.joint_count() {
                let expect = root * plain[j];
                prop_assert!(mat_close(&rooted[j], &expect, 1e-4), "{} joint {}:\n  {:?}\n  {:?}", name, j, rooted[j], expect);
                if skel.parent(j).is_none() {
                    let l = sinew_core::soa::get_joint(&local, j).unwrap().to_matrix();
                    prop_assert!(mat_close(&rooted[j], &(root * l), 1e-5), "{} root {}", name, j);
                }
            }
        }
    }
}
