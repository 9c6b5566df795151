//! Mixer, blend-space, additive and transition benches (single thread,
//! 67-joint synthetic rig, fixed seeds). One group per kernel; the `mix`
//! group runs the motion-unit mixer and the 4-layer blend side by side so
//! their ratio comes from one run.
//!
//! ```text
//! cargo bench -p sinew-benches --bench mix -- --noplot
//! ```

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use sinew_benches::config;
use sinew_benches::{Character, WEIGHTS};
use sinew_core::blend::{self, BlendJob, BlendLayer, JointWeights};
use sinew_core::clip::RawClip;
use sinew_core::mix::additive;
use sinew_core::mix::mixer::{self, bspline_smooth};
use sinew_core::mix::transition::{self, start, SwitchJob};
use sinew_core::mix::{
    BlendSpace1D, BlendSpace2D, Decay, InertialBlock, MixInput, MixJob, MixMode, Mixer, MotionUnit,
    Ramp, Sample1D,
};
use sinew_core::SoaTransform;
use sinew_std::blend_space::build_2d;
use sinew_std::synthetic;

fn rig() -> Character {
    Character::new("67", synthetic::skeleton(67, 2024), "clavicle_l_00")
}

/// `mix`: the mixer with 4 running units (per-joint priorities, ramps) next
/// to the 4-layer blend of the same poses.
fn bench_mix(c: &mut Criterion) {
    let ch = rig();
    let skel = ch.skeleton.view();
    let n = skel.soa_count();
    let rest = skel.rest_pose();
    let mut out = vec![SoaTransform::IDENTITY; n];
    let mut group = c.benchmark_group("mix");
    group.throughput(Throughput::Elements(ch.joints() as u64));
    let id = |v: &str| BenchmarkId::new("67", v);

    let layers: Vec<_> = ch
        .poses
        .iter()
        .zip(WEIGHTS)
        .map(|(p, w)| BlendLayer::new(p, w))
        .collect();
    let job = BlendJob::new(&layers, &[], rest);
    group.bench_function(id("blend-4"), |b| {
        b.iter(|| blend::blend(black_box(&job), black_box(&mut out)))
    });
    let masks: Vec<Vec<_>> = (0..4).map(|i| synthetic::mask(&skel, 900 + i)).collect();
    let jw: Vec<JointWeights<'_>> = masks
        .iter()
        .map(|m| JointWeights::new(m).unwrap())
        .collect();
    let masked: Vec<_> = ch
        .poses
        .iter()
        .zip(WEIGHTS)
        .zip(&jw)
        .map(|((p, w), m)| BlendLayer::masked(p, w, *m))
        .collect();
    let job = BlendJob::new(&masked, &[], rest);
    group.bench_function(id("blend-4-masked"), |b| {
        b.iter(|| blend::blend(black_box(&job), black_box(&mut out)))
    });

    // Four clips of 16 frames each (frames are the four poses in turn).
    let keys: Vec<Vec<SoaTransform>> = (0..4)
        .map(|k| {
            (0..16)
                .flat_map(|f| ch.poses[(k + f) % 4].clone())
                .collect()
        })
        .collect();
    let clips: Vec<RawClip<'_>> = keys
        .iter()
        .map(|k| RawClip::new(30.0, n, k).unwrap())
        .collect();
    let mut mx: Mixer<4> = Mixer::new(n, MixMode::Quaternion);
    for k in 0..jw.len() {
        let unit = MotionUnit::new(k, 16)
            .with_ramp(Ramp::Linear { frames: 4 })
            .with_joint_weights(k);
        mx.add(unit, &clips, &jw).unwrap();
        mx.advance(); // started at different frames: different ramp weights
    }
    group.bench_function(id("mixer-4"), |b| {
        b.iter(|| {
            black_box(&mx).evaluate(black_box(&clips), &jw, rest, &mut [], black_box(&mut out))
        })
    });
    let mut full = mx.clone();
    full.set_idle(Some(MotionUnit::new(0, 16)), &clips, &jw)
        .unwrap();
    full.set_fatigue_unit(Some(MotionUnit::new(1, 16)), &clips, &jw)
        .unwrap();
    full.set_fatigue(0.4).unwrap();
    group.bench_function(id("mixer-4+idle+fatigue"), |b| {
        b.iter(|| {
            black_box(&full).evaluate(black_box(&clips), &jw, rest, &mut [], black_box(&mut out))
        })
    });
    let inputs: Vec<MixInput<'_>> = (0..4)
        .map(|k| MixInput {
            pose: &ch.poses[k],
            weight: WEIGHTS[k],
            joint_weights: Some(jw[k]),
        })
        .collect();
    let job = MixJob {
        units: &inputs,
        fatigue: None,
        idle: None,
        rest,
        mode: MixMode::Quaternion,
    };
    group.bench_function(id("mix-kernel-4"), |b| {
        b.iter(|| mixer::mix(black_box(&job), black_box(&mut out)))
    });
    group.bench_function(id("mix-kernel-4-reference"), |b| {
        b.iter(|| mixer::reference::mix(black_box(&job), black_box(&mut out)))
    });
    let angles = MixJob {
        mode: MixMode::JointAngles,
        ..job
    };
    group.bench_function(id("mix-kernel-4-angles"), |b| {
        b.iter(|| mixer::mix(black_box(&angles), black_box(&mut out)))
    });
    let mut history = [ch.poses[0].clone(), ch.poses[1].clone()].concat();
    let mut pose = ch.poses[2].clone();
    group.bench_function(id("bspline-smoothing"), |b| {
        b.iter(|| bspline_smooth(black_box(&mut history), black_box(&mut pose)))
    });
    group.finish();
}

/// `inertialization`: the per-frame update of a whole 67-joint pose, and the switch.
fn bench_inertialization(c: &mut Criterion) {
    let ch = rig();
    let n = ch.skeleton.view().soa_count();
    let mut state = vec![InertialBlock::default(); n];
    let job = SwitchJob {
        old: &ch.poses[0],
        old_prev: &ch.poses[1],
        new: &ch.poses[2],
        new_prev: &ch.poses[3],
        dt: 1.0 / 60.0,
        duration: 0.3,
    };
    start(&mut state, &job).unwrap();
    let mut pose = ch.poses[2].clone();
    let mut group = c.benchmark_group("inertialization");
    group.throughput(Throughput::Elements(ch.joints() as u64));
    let id = |v: &str| BenchmarkId::new("67", v);
    group.bench_function(id("update-quintic"), |b| {
        b.iter(|| {
            transition::apply(
                black_box(&state),
                black_box(0.1),
                Decay::Quintic,
                black_box(&mut pose),
            )
        })
    });
    let spring = Decay::Spring { half_life: 0.1 };
    group.bench_function(id("update-spring"), |b| {
        b.iter(|| {
            transition::apply(
                black_box(&state),
                black_box(0.1),
                spring,
                black_box(&mut pose),
            )
        })
    });
    group.bench_function(id("update-quintic-reference"), |b| {
        b.iter(|| {
            transition::reference::apply(
                black_box(&state),
                black_box(0.1),
                Decay::Quintic,
                black_box(&mut pose),
            )
        })
    });
    group.bench_function(id("switch"), |b| {
        b.iter(|| start(black_box(&mut state), black_box(&job)))
    });
    // Typical mocap: both animations keep the bone lengths, only rotations differ.
    let rest = ch.skeleton.view().rest_pose();
    let poses: Vec<Vec<SoaTransform>> = ch
        .poses
        .iter()
        .map(|p| {
            p.iter()
                .zip(rest)
                .map(|(p, r)| SoaTransform {
                    translation: r.translation,
                    ..*p
                })
                .collect()
        })
        .collect();
    let job = SwitchJob {
        old: &poses[0],
        old_prev: &poses[1],
        new: &poses[2],
        new_prev: &poses[3],
        ..job
    };
    start(&mut state, &job).unwrap();
    group.bench_function(id("update-quintic-rotations-only"), |b| {
        b.iter(|| {
            transition::apply(
                black_box(&state),
                black_box(0.1),
                Decay::Quintic,
                black_box(&mut pose),
            )
        })
    });
    group.finish();
}

/// `blend_space`: weight lookup in a 3x3 grid of 9 samples (inside and
/// clamped from outside the hull), and a 1D space of 3.
fn bench_blend_space(c: &mut Criterion) {
    let pts: Vec<[f32; 2]> = (0..9)
        .map(|i| [(i % 3) as f32 * 2.0 - 2.0, (i / 3) as f32 * 3.0 - 1.5])
        .collect();
    let clips: Vec<usize> = (0..9).collect();
    let space: BlendSpace2D<16, 32> = build_2d(&pts, &clips).unwrap();
    // Fixed pseudo-random inputs (seeded LCG).
    let mut seed = 12345u32;
    let mut next = || {
        seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (seed >> 8) as f32 / (1u32 << 24) as f32
    };
    let inside: Vec<[f32; 2]> = (0..64)
        .map(|_| [next() * 4.0 - 2.0, next() * 6.0 - 3.0])
        .collect();
    let outside: Vec<[f32; 2]> = (0..64)
        .map(|_| [next() * 12.0 - 6.0, 4.0 + next() * 3.0])
        .collect();
    let mut group = c.benchmark_group("blend_space");
    let mut k = 0usize;
    group.bench_function("2d-9/weights-inside", |b| {
        b.iter(|| {
            k = (k + 1) & 63;
            space.weights(black_box(inside[k]))
        })
    });
    group.bench_function("2d-9/weights-outside", |b| {
        b.iter(|| {
            k = (k + 1) & 63;
            space.weights(black_box(outside[k]))
        })
    });
    let s1 = [
        Sample1D {
            position: 1.4,
            clip: 0,
            duration: 1.1,
            markers: &[0.0, 0.5],
        },
        Sample1D {
            position: 3.0,
            clip: 1,
            duration: 0.77,
            markers: &[0.0, 0.5],
        },
        Sample1D {
            position: 5.5,
            clip: 2,
            duration: 0.63,
            markers: &[0.0, 0.5],
        },
    ];
    let space1: BlendSpace1D<'_, 4> = BlendSpace1D::new(&s1).unwrap();
    group.bench_function("1d-3/weights-for-speed", |b| {
        b.iter(|| {
            k = (k + 1) & 63;
            space1.weights_for_speed(black_box(inside[k][1] + 3.0))
        })
    });
    group.finish();
}

/// `additive`: apply a 67-joint additive pose with a weight and a mask.
fn bench_additive(c: &mut Criterion) {
    let ch = rig();
    let skel = ch.skeleton.view();
    let mask = JointWeights::new(&ch.masks[0]).unwrap();
    let mut pose = ch.poses[0].clone();
    let mut group = c.benchmark_group("additive");
    group.throughput(Throughput::Elements(ch.joints() as u64));
    group.bench_function("67/apply-masked", |b| {
        b.iter(|| {
            additive::apply_additive(
                black_box(&mut pose),
                black_box(&ch.additive),
                0.6,
                Some(mask),
            )
        })
    });
    group.bench_function("67/apply-masked-reference", |b| {
        b.iter(|| {
            additive::reference::apply_additive(
                black_box(&mut pose),
                black_box(&ch.additive),
                0.6,
                Some(mask),
            )
        })
    });
    let mut out = vec![SoaTransform::IDENTITY; skel.soa_count()];
    group.bench_function("67/make", |b| {
        b.iter(|| {
            additive::make_additive(
                black_box(skel.rest_pose()),
                black_box(&ch.poses[1]),
                black_box(&mut out),
            )
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_mix, bench_inertialization, bench_blend_space, bench_additive
}
criterion_main!(benches);
