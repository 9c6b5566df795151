//! Spring-damper and PD joint controller benches (single thread).
//!
//! Group `secondary_spring`: one step of 1024 springs towards still
//! targets, 1/60 s, frequency 2 Hz and damping ratio 0.5 (under-damped:
//! the dearest closed form); throughput in springs, so criterion's
//! elements/s gives the ns per spring update.
//! - `f32-scalar`: [`advance_scalar`] (coefficients computed once per
//!   batch);
//! - `f32-lanes`: [`advance_lanes`], four springs per `f32x4`;
//! - `f32-single`: [`Spring::advance`], which computes the coefficients
//!   (an `exp`, a `sin`, a `cos`) for every spring;
//! - `vec3`, `quat`: [`Vec3Spring::advance`] and [`QuatSpring::advance`]
//!   one by one (the rotation spring adds a quaternion log and exp).
//!
//! Group `secondary_pd`: one 1/60 s frame of [`pd::step`] over the
//! procedural humanoid (every joint simulated, critically damped gains
//! from a 0.1 s half-life, bone lengths from the rest pose, 1 kg bones;
//! four sub-steps of 1/240 s), the animated pose the rest pose with every
//! joint turned 0.3 rad; throughput in joints (ns per joint per frame).
//!
//! ```text
//! cargo bench -p sinew-benches --bench secondary_spring -- --noplot
//! ```

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use sinew_benches::{config, noise};
use sinew_core::secondary::pd::{self, PdJob, PdJoint, PdState};
use sinew_core::secondary::spring::{
    advance_lanes, advance_scalar, QuatSpring, Spring, SpringLanes, SpringParams, Vec3Spring,
};
use sinew_core::soa::set_joint;
use sinew_core::{f32x4, procedural, Quat, SoaTransform, Vec3};
use sinew_std::OwnedSkeleton;

const SPRINGS: usize = 1024;
const DT: f32 = 1.0 / 60.0;

fn bench_springs(c: &mut Criterion) {
    let mut group = c.benchmark_group("secondary_spring");
    group.throughput(Throughput::Elements(SPRINGS as u64));
    let params = SpringParams::frequency(2.0, 0.5).expect("valid spring");
    let step = params.step(DT).expect("valid step");
    let mut seed = 0x9e37_79b9;
    let springs: Vec<Spring> = (0..SPRINGS)
        .map(|_| Spring {
            value: noise(&mut seed),
            velocity: noise(&mut seed),
        })
        .collect();
    let targets: Vec<f32> = (0..SPRINGS).map(|_| noise(&mut seed)).collect();

    let mut scalar = springs.clone();
    group.bench_function(BenchmarkId::new("f32-scalar", SPRINGS), |b| {
        b.iter(|| advance_scalar(&mut scalar, black_box(&targets), black_box(&step)))
    });

    let mut lanes = vec![SpringLanes::default(); SPRINGS / 4];
    let mut lane_targets = vec![f32x4::ZERO; SPRINGS / 4];
    for (i, s) in springs.iter().enumerate() {
        lanes[i / 4].set(i, *s);
        let mut t = lane_targets[i / 4].to_array();
        t[i % 4] = targets[i];
        lane_targets[i / 4] = f32x4::new(t);
    }
    group.bench_function(BenchmarkId::new("f32-lanes", SPRINGS), |b| {
        b.iter(|| advance_lanes(&mut lanes, black_box(&lane_targets), black_box(&step)))
    });

    let mut single = springs.clone();
    group.bench_function(BenchmarkId::new("f32-single", SPRINGS), |b| {
        b.iter(|| {
            for (s, &t) in single.iter_mut().zip(&targets) {
                black_box(s.advance(t, black_box(&params), DT)).ok();
            }
        })
    });

    let mut vec3: Vec<Vec3Spring> = (0..SPRINGS)
        .map(|_| Vec3Spring {
            value: Vec3::new(noise(&mut seed), noise(&mut seed), noise(&mut seed)),
            velocity: Vec3::new(noise(&mut seed), noise(&mut seed), noise(&mut seed)),
        })
        .collect();
    let vec3_targets: Vec<Vec3> = (0..SPRINGS)
        .map(|_| Vec3::new(noise(&mut seed), noise(&mut seed), noise(&mut seed)))
        .collect();
    group.bench_function(BenchmarkId::new("vec3", SPRINGS), |b| {
        b.iter(|| {
            for (s, &t) in vec3.iter_mut().zip(&vec3_targets) {
                black_box(s.advance(t, black_box(&params), DT)).ok();
            }
        })
    });

    let rotation = |seed: &mut u32| {
        let axis = Vec3::new(noise(seed), noise(seed), noise(seed))
            .try_normalize()
            .unwrap_or(Vec3::X);
        Quat::from_axis_angle(axis, 2.0 * noise(seed))
    };
    let mut quat: Vec<QuatSpring> = (0..SPRINGS)
        .map(|_| QuatSpring::at(rotation(&mut seed)))
        .collect();
    let quat_targets: Vec<Quat> = (0..SPRINGS).map(|_| rotation(&mut seed)).collect();
    group.bench_function(BenchmarkId::new("quat", SPRINGS), |b| {
        b.iter(|| {
            for (s, &t) in quat.iter_mut().zip(&quat_targets) {
                black_box(s.advance(t, black_box(&params), DT)).ok();
            }
        })
    });
    group.finish();
}

fn bench_pd(c: &mut Criterion) {
    let mut group = c.benchmark_group("secondary_pd");
    let skel = OwnedSkeleton::build(&procedural::humanoid_joints()).expect("humanoid builds");
    let v = skel.view();
    let n = v.joint_count();
    group.throughput(Throughput::Elements(n as u64));
    let mut lengths = vec![0.0; n];
    pd::rest_bone_lengths(&v, &mut lengths).expect("bone lengths");
    let joints: Vec<PdJoint> = lengths
        .iter()
        // The root has no bone: give it one of 10 cm.
        .map(|&l| PdJoint::from_half_life(0.1, 1.0, if l > 0.0 { l } else { 0.1 }))
        .collect::<Result<_, _>>()
        .expect("valid joints");
    let mut animated = v.rest_pose().to_vec();
    for j in 0..n {
        let mut t = sinew_core::soa::get_joint(&animated, j).expect("joint");
        let axis = [Vec3::X, Vec3::Y, Vec3::Z][j % 3];
        t.rotation = Quat::from_axis_angle(axis, 0.3) * t.rotation;
        set_joint(&mut animated, j, &t).expect("joint");
    }
    let mut state = vec![PdState::default(); n];
    pd::reset(v.rest_pose(), &mut state).expect("reset");
    let mut out = vec![SoaTransform::IDENTITY; animated.len()];
    let job = PdJob::new(&joints, &animated, DT);
    group.bench_function(BenchmarkId::new("humanoid", n), |b| {
        b.iter(|| pd::step(black_box(&job), &mut state, &mut out))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_springs, bench_pd
}
criterion_main!(benches);
