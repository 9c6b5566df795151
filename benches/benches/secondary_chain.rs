//! Spring-bone benches (single thread): four characters, each with an
//! 8-joint tail (7 spring bones) behind a pelvis, stepped one 60 Hz frame
//! (two 1/120 s sub-steps) from a mid-swing state restored before every
//! frame, the characters moving. Gravity, stiffness 0.1, drag 0.05, an
//! angle limit of 1 rad.
//!
//! Group `secondary_chain`: the simulation alone, the four chains one
//! after another with the scalar `simulate` vs together with
//! `simulate_lanes` (one chain per `f32x4` lane); without colliders (one
//! constraint pass) and with four (two leg capsules, a sphere, the floor;
//! particle radius 3 cm, up to 4 passes). Throughput is spring bones ×
//! sub-steps, so criterion's time per element is the time per spring bone
//! per sub-step.
//!
//! Group `secondary_chain_write_back`: `write_back` of one 7-bone chain
//! (the local rotations and the FK update of the tail's subtree), per
//! chain.
//!
//! ```text
//! cargo bench -p sinew-benches --bench secondary_chain -- --noplot
//! ```

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use sinew_benches::config;
use sinew_core::fk::{local_to_model, FkJob};
use sinew_core::ik::IkPose;
use sinew_core::secondary::chain::{
    self, ChainJob, ChainSettings, ChainState, LaneChain, SpringChain, LANES,
};
use sinew_core::secondary::collider::Collider;
use sinew_core::skeleton::JointDef;
use sinew_core::{Mat4, Quat, Transform, Vec3};
use sinew_std::OwnedSkeleton;

/// Joints in the tail (its root and 7 particles).
const TAIL: usize = 8;
/// Sub-steps per frame (1/60 s in steps of at most 1/120 s).
const SUB_STEPS: u64 = 2;
const DT: f32 = 1.0 / 60.0;

/// root, pelvis 1 m up, a tail of `TAIL` joints 0.1 apart going back and
/// slightly down.
fn rig() -> OwnedSkeleton {
    let mut defs = vec![
        JointDef {
            name: "root",
            parent: None,
            rest: Transform::IDENTITY,
        },
        JointDef {
            name: "pelvis",
            parent: Some(0),
            rest: Transform::from_translation_rotation(Vec3::new(0.0, 1.0, 0.0), Quat::IDENTITY),
        },
    ];
    for i in 0..TAIL {
        defs.push(JointDef {
            name: "",
            parent: Some(defs.len() - 1),
            rest: Transform::from_translation_rotation(
                Vec3::new(0.0, -0.02, -0.1),
                Quat::from_axis_angle(Vec3::X, 0.05 * i as f32),
            ),
        });
    }
    OwnedSkeleton::build(&defs).expect("bench rig builds")
}

/// Character `c`'s placement at time `t`: running loops, four abreast.
fn world(c: usize, t: f32) -> Mat4 {
    let phase = t + c as f32 * 0.37;
    let p = Vec3::new(
        c as f32 * 2.0 + 0.5 * (6.0 * phase).sin(),
        0.05 * (12.0 * phase).sin(),
        0.4 * (4.0 * phase).sin(),
    );
    Mat4::from_trs(
        p,
        Quat::from_axis_angle(Vec3::Y, 0.6 * phase.sin()),
        Vec3::ONE,
    )
}

fn bench_chain(c: &mut Criterion) {
    let skel = rig();
    let v = skel.view();
    let mut models = vec![Mat4::IDENTITY; v.joint_count()];
    local_to_model(&FkJob::new(&v, v.rest_pose()), &mut models).unwrap();
    let joints: Vec<u16> = (2..2 + TAIL as u16).collect();
    let chain = SpringChain::new(&v, &joints).unwrap();
    let settings = ChainSettings {
        stiffness: 0.1,
        drag: 0.05,
        max_angle: 1.0,
        radius: 0.03,
        ..ChainSettings::default()
    };
    // Leg capsules, a sphere at the hip and the floor, per character in
    // world space at the frame's placement.
    let body = [
        Collider::Capsule {
            a: Vec3::new(0.12, 0.95, -0.05),
            b: Vec3::new(0.12, 0.1, -0.05),
            radius: 0.07,
        },
        Collider::Capsule {
            a: Vec3::new(-0.12, 0.95, -0.05),
            b: Vec3::new(-0.12, 0.1, -0.05),
            radius: 0.07,
        },
        Collider::Sphere {
            center: Vec3::new(0.0, 0.9, -0.3),
            radius: 0.12,
        },
        Collider::Plane {
            normal: Vec3::Y,
            offset: 0.0,
        },
    ];
    let t0 = 0.5;
    let worlds: [Mat4; LANES] = std::array::from_fn(|k| world(k, t0));
    let placed: [Vec<Collider>; LANES] =
        std::array::from_fn(|k| body.iter().map(|s| s.transformed(&worlds[k])).collect());
    // Mid-swing states: 30 frames of running with colliders.
    let mut start: Vec<(Vec<Vec3>, Vec<Vec3>)> = Vec::new();
    for k in 0..LANES {
        let mut cur = vec![Vec3::ZERO; TAIL];
        let mut prev = vec![Vec3::ZERO; TAIL];
        let w0 = world(k, 0.0);
        let state = ChainState {
            current: &mut cur,
            previous: &mut prev,
        };
        chain::reset(&chain, &models, &w0, state).unwrap();
        for f in 1..=30 {
            let w = world(k, t0 * f as f32 / 30.0);
            let shapes: Vec<Collider> = body.iter().map(|s| s.transformed(&w)).collect();
            let job = ChainJob::new(chain)
                .with_settings(settings)
                .with_world(w)
                .with_colliders(&shapes);
            let state = ChainState {
                current: &mut cur,
                previous: &mut prev,
            };
            chain::simulate(&job, &models, state, DT).unwrap();
        }
        start.push((cur, prev));
    }

    let mut group = c.benchmark_group("secondary_chain");
    group.throughput(Throughput::Elements(
        LANES as u64 * (TAIL as u64 - 1) * SUB_STEPS,
    ));
    for with_colliders in [false, true] {
        let case = if with_colliders {
            "4-chains-7-bones/4-colliders"
        } else {
            "4-chains-7-bones/free"
        };
        let jobs: [ChainJob<'_>; LANES] = std::array::from_fn(|k| {
            let job = ChainJob::new(chain)
                .with_settings(settings)
                .with_world(worlds[k]);
            if with_colliders {
                job.with_colliders(&placed[k])
            } else {
                job
            }
        });
        let mut states = start.clone();
        group.bench_function(BenchmarkId::new(case, "scalar"), |b| {
            b.iter(|| {
                for (k, (cur, prev)) in states.iter_mut().enumerate() {
                    cur.copy_from_slice(&start[k].0);
                    prev.copy_from_slice(&start[k].1);
                    let state = ChainState {
                        current: cur,
                        previous: prev,
                    };
                    black_box(chain::simulate(black_box(&jobs[k]), &models, state, DT)).ok();
                }
            })
        });
        let mut states = start.clone();
        group.bench_function(BenchmarkId::new(case, "lanes"), |b| {
            b.iter(|| {
                let mut it = states.iter_mut();
                let mut batch: [Option<LaneChain<'_, '_>>; LANES] = std::array::from_fn(|k| {
                    let (cur, prev) = it.next()?;
                    cur.copy_from_slice(&start[k].0);
                    prev.copy_from_slice(&start[k].1);
                    Some(LaneChain {
                        job: jobs[k],
                        models: &models,
                        state: ChainState {
                            current: cur,
                            previous: prev,
                        },
                    })
                });
                black_box(chain::simulate_lanes(black_box(&mut batch), DT)).ok();
            })
        });
    }
    group.finish();

    let mut group = c.benchmark_group("secondary_chain_write_back");
    group.throughput(Throughput::Elements(TAIL as u64 - 1));
    let rest = v.rest_pose().to_vec();
    let mut local = rest.clone();
    let mut pose_models = models.clone();
    group.bench_function("1-chain-7-bones", |b| {
        b.iter(|| {
            local.copy_from_slice(&rest);
            pose_models.copy_from_slice(&models);
            let mut pose = IkPose::new(&v, &mut local, &mut pose_models, None).unwrap();
            black_box(chain::write_back(
                &chain,
                &mut pose,
                &worlds[0],
                black_box(&start[0].0),
            ))
            .ok();
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_chain
}
criterion_main!(benches);
