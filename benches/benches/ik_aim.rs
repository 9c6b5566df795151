//! Aim and look-at IK benches (single thread, fixed seeds). One group,
//! `ik_aim`, per joint:
//!
//! - `correction` / `correction-w0.5`: [`aim_correction`] over 64 joints
//!   (random model matrices and targets, eyes offset, pole +Y) at weight 1
//!   and 0.5; the same cases as the ozz-animation harness described in
//!   `docs/performance.md`, so the two compare per joint.
//! - `x4` / `x8`: the same 64 cases, four or eight characters per call.
//! - `aim_joint`: the humanoid's head aimed, written into the pose, its
//!   subtree's matrices updated.
//! - `look_at-4`: spine_03 → neck_01 → head → eye_l, written and updated.
//!
//! ```text
//! cargo bench -p sinew-benches --bench ik_aim -- --noplot
//! ```

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use sinew_benches::config;
use sinew_core::fk::{local_to_model, FkJob};
use sinew_core::ik::aim::{
    aim_correction, aim_corrections_x4, aim_corrections_x8, aim_joint, look_at, Aim, LookAtJoint,
};
use sinew_core::ik::IkPose;
use sinew_core::{Mat4, Quat, Vec3};
use sinew_std::Humanoid;

const CASES: usize = 64;

/// A 32-bit LCG (Numerical Recipes constants): uniform floats the C++
/// harness reproduces exactly.
struct Lcg(u32);

impl Lcg {
    fn next(&mut self, lo: f32, hi: f32) -> f32 {
        self.0 = self.0.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        lo + (hi - lo) * ((self.0 >> 8) as f32 / (1u32 << 24) as f32)
    }
}

/// 64 joints: a random rotation (a normalised 4-vector), a translation in
/// [-1, 1]³, a target in [-3, 3]³ at least 0.5 from the joint; forward +Z,
/// up +Y, the eyes at (0, 0.08, 0.08), pole +Y, no twist.
fn cases(weight: f32) -> (Vec<Mat4>, Vec<Aim>) {
    let mut rng = Lcg(2024);
    let mut models = Vec::with_capacity(CASES);
    let mut aims = Vec::with_capacity(CASES);
    while models.len() < CASES {
        let q = Quat::new(
            rng.next(-1.0, 1.0),
            rng.next(-1.0, 1.0),
            rng.next(-1.0, 1.0),
            rng.next(-1.0, 1.0),
        );
        let t = Vec3::new(
            rng.next(-1.0, 1.0),
            rng.next(-1.0, 1.0),
            rng.next(-1.0, 1.0),
        );
        let target = Vec3::new(
            rng.next(-3.0, 3.0),
            rng.next(-3.0, 3.0),
            rng.next(-3.0, 3.0),
        );
        if q.length() < 0.1 || (target - t).length() < 0.5 {
            continue;
        }
        models.push(Mat4::from_trs(t, q.normalize(), Vec3::ONE));
        aims.push(
            Aim::new(target, Vec3::Z, Vec3::Y)
                .with_offset(Vec3::new(0.0, 0.08, 0.08))
                .with_weight(weight),
        );
    }
    (models, aims)
}

fn bench_aim(c: &mut Criterion) {
    let mut group = c.benchmark_group("ik_aim");
    group.throughput(Throughput::Elements(CASES as u64));
    let id = |v: &str| BenchmarkId::new("64", v);
    for (name, weight) in [("correction", 1.0), ("correction-w0.5", 0.5)] {
        let (models, aims) = cases(weight);
        group.bench_function(id(name), |b| {
            b.iter(|| {
                for (m, a) in models.iter().zip(&aims) {
                    black_box(aim_correction(black_box(m), black_box(a)).unwrap());
                }
            })
        });
    }
    let (models, aims) = cases(1.0);
    let m4: Vec<[&Mat4; 4]> = models
        .chunks_exact(4)
        .map(|c| std::array::from_fn(|i| &c[i]))
        .collect();
    let a4: Vec<[Aim; 4]> = aims
        .chunks_exact(4)
        .map(|c| std::array::from_fn(|i| c[i]))
        .collect();
    group.bench_function(id("x4"), |b| {
        b.iter(|| {
            for (m, a) in m4.iter().zip(&a4) {
                black_box(aim_corrections_x4(black_box(*m), black_box(a)).unwrap());
            }
        })
    });
    let m8: Vec<[&Mat4; 8]> = models
        .chunks_exact(8)
        .map(|c| std::array::from_fn(|i| &c[i]))
        .collect();
    let a8: Vec<[Aim; 8]> = aims
        .chunks_exact(8)
        .map(|c| std::array::from_fn(|i| c[i]))
        .collect();
    group.bench_function(id("x8"), |b| {
        b.iter(|| {
            for (m, a) in m8.iter().zip(&a8) {
                black_box(aim_corrections_x8(black_box(*m), black_box(a)).unwrap());
            }
        })
    });
    group.finish();
}

/// Aim on a pose: the humanoid's head alone, and a 4-joint look-at chain.
/// Each iteration restores the pose and matrices first (a copy of 18
/// blocks and 70 matrices, also timed as `restore`).
fn bench_pose(c: &mut Criterion) {
    let h = Humanoid::default_rate();
    let s = h.skeleton.view();
    let rest = s.rest_pose().to_vec();
    let mut rest_models = vec![Mat4::IDENTITY; s.joint_count()];
    local_to_model(&FkJob::new(&s, &rest), &mut rest_models).unwrap();
    let j = |n: &str| s.find_joint(n).unwrap();
    let target = Vec3::new(0.6, 1.8, 1.0);
    let head_aim = Aim::new(target, Vec3::Z, Vec3::Y).with_offset(Vec3::new(0.0, 0.08, 0.08));
    let chain = [
        LookAtJoint::new(j("spine_03"), 0.3).with_max_angle(0.3),
        LookAtJoint::new(j("neck_01"), 0.5).with_max_angle(0.6),
        LookAtJoint::new(j("head"), 0.8),
        LookAtJoint::new(j("eye_l"), 1.0).with_max_angle(0.5),
    ];
    let eye_aim = Aim::new(target, Vec3::Z, Vec3::Y);
    let mut local = rest.clone();
    let mut models = rest_models.clone();
    let mut group = c.benchmark_group("ik_aim_pose");
    group.bench_function("restore", |b| {
        b.iter(|| {
            local.copy_from_slice(&rest);
            models.copy_from_slice(&rest_models);
            black_box((&local, &models));
        })
    });
    let head = j("head");
    group.bench_function("aim_joint", |b| {
        b.iter(|| {
            local.copy_from_slice(&rest);
            models.copy_from_slice(&rest_models);
            let mut pose = IkPose::new(&s, &mut local, &mut models, None).unwrap();
            black_box(aim_joint(&mut pose, head, black_box(&head_aim)).unwrap());
        })
    });
    group.bench_function("look_at-4", |b| {
        b.iter(|| {
            local.copy_from_slice(&rest);
            models.copy_from_slice(&rest_models);
            let mut pose = IkPose::new(&s, &mut local, &mut models, None).unwrap();
            black_box(look_at(&mut pose, &chain, black_box(&eye_aim)).unwrap());
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_aim, bench_pose
}
criterion_main!(benches);
