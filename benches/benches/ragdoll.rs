//! Powered ragdoll bench (sinew-std's `ragdoll` feature, rapier3d): the
//! procedural humanoid (26 bodies, 25 joint motors) hanging from its
//! kinematic pelvis and driven toward the walk clip, one 60 Hz frame per
//! iteration: `drive` + `step` (two 1/120 s sub-steps) + `write_pose` at
//! weight 1. Group `ragdoll_fall`: the same humanoid unpowered on the
//! ground, `step` + `write_pose` (bodies awake: the fall restarts from the
//! raised bind pose every 60 frames). Divide by the body count (and by 2
//! for a sub-step) for ns per body per step.
//!
//! ```text
//! cargo bench -p sinew-benches --features ragdoll --bench ragdoll -- --noplot
//! ```

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use sinew_core::clip::TimeMode::Loop;
use sinew_core::fk::{local_to_model, FkJob};
use sinew_core::{Mat4, Quat, SoaTransform, Transform, Vec3};
use sinew_std::ragdoll::{Blend, Ragdoll, RagdollDesc};
use sinew_std::Humanoid;

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(30)
}

fn bench_ragdoll(c: &mut Criterion) {
    let humanoid = Humanoid::default_rate();
    let (skeleton, walk) = (humanoid.skeleton.view(), humanoid.clips[0].view());
    let mut models = vec![Mat4::IDENTITY; skeleton.joint_count()];
    local_to_model(&FkJob::new(&skeleton, skeleton.rest_pose()), &mut models).expect("fk");
    // A clip's worth of walk poses, sampled once so the loop times the ragdoll only.
    let dt = 1.0 / 60.0;
    let poses: Vec<Vec<SoaTransform>> = (0..66)
        .map(|f| {
            let mut p = vec![SoaTransform::IDENTITY; skeleton.soa_count()];
            walk.sample(f as f32 * dt, Loop, &mut p).expect("sample");
            p
        })
        .collect();

    let desc = RagdollDesc {
        kinematic_root: true,
        ground: None,
        ..RagdollDesc::humanoid(&skeleton)
    };
    let mut ragdoll = Ragdoll::new(&skeleton, &models, &desc).expect("ragdoll");
    ragdoll.reset(&poses[0]).expect("reset");
    let bodies = ragdoll.body_count() as u64;
    let mut out = poses[0].clone();
    let mut group = c.benchmark_group("ragdoll");
    group.throughput(Throughput::Elements(bodies));
    group.bench_function("powered_walk_frame", |b| {
        let mut f = 0;
        b.iter(|| {
            let pose = &poses[f % poses.len()];
            f += 1;
            ragdoll.drive(pose, 1.0).expect("drive");
            ragdoll.step(black_box(dt)).expect("step");
            out.copy_from_slice(pose);
            ragdoll
                .write_pose(&mut out, Blend::Global(1.0))
                .expect("write");
            black_box(&out);
        });
    });
    group.finish();

    let raised = RagdollDesc {
        placement: Transform::from_translation_rotation(Vec3::new(0.0, 1.0, 0.0), Quat::IDENTITY),
        ..RagdollDesc::humanoid(&skeleton)
    };
    let mut ragdoll = Ragdoll::new(&skeleton, &models, &raised).expect("ragdoll");
    let rest = skeleton.rest_pose().to_vec();
    let mut group = c.benchmark_group("ragdoll_fall");
    group.throughput(Throughput::Elements(bodies));
    group.bench_function("unpowered_frame", |b| {
        let mut f = 0;
        b.iter(|| {
            if f % 60 == 0 {
                ragdoll.reset(&rest).expect("reset");
            }
            f += 1;
            ragdoll.step(black_box(dt)).expect("step");
            out.copy_from_slice(&rest);
            ragdoll
                .write_pose(&mut out, Blend::Global(1.0))
                .expect("write");
            black_box(&out);
        });
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_ragdoll
}
criterion_main!(benches);
