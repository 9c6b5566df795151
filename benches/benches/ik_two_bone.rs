//! Two-bone IK and foot placement benches: one solve (corrections from model matrices, as
//! ozz-animation's `IKTwoBoneJob` computes them; from a gathered limb; the
//! readable reference), the full solve on an
//! `IkPose` (corrections written, subtree FK), the 4- and 8-lane kernels,
//! the batch over many poses, and foot placement per character. Throughput is in solves (limbs), so
//! criterion's "thrpt" line inverts to ns per solve.
//!
//! Data: the procedural humanoid's left leg (thigh → calf → foot) in 64
//! random poses (hip any small rotation, knee hinge bent 0–1.2 rad) with
//! targets within ±0.4 m of the foot, fixed seed.
//!
//! ```text
//! cargo bench -p sinew-benches --bench ik_two_bone -- --noplot
//! ```

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use sinew_benches::config;
use sinew_core::fk::{local_to_model, FkJob};
use sinew_core::ik::foot::{FootLeg, FootPlacement, FootState};
use sinew_core::ik::two_bone::{
    self, solve_lanes4, solve_lanes8, solve_many, Limb, TwoBoneGoal, TwoBoneIk, TwoBoneLanes,
    TwoBoneLanesOut, TwoBoneReport,
};
use sinew_core::ik::IkPose;
use sinew_core::soa::{get_joint, set_joint};
use sinew_core::{procedural, Mat4, Quat, Skeleton, SoaTransform, Vec3};

const COUNT: usize = 64;

/// A small xorshift generator: the same data every run.
struct Rng(u32);

impl Rng {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 17;
        self.0 ^= self.0 << 5;
        (self.0 >> 8) as f32 / (1u32 << 24) as f32
    }
    fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.next()
    }
}

struct Data {
    locals: Vec<Vec<SoaTransform>>,
    models: Vec<Vec<Mat4>>,
    iks: Vec<TwoBoneIk>,
}

fn data(skel: &Skeleton<'_>) -> Data {
    let (thigh, calf, foot) = (
        skel.find_joint("thigh_l").unwrap(),
        skel.find_joint("calf_l").unwrap(),
        skel.find_joint("foot_l").unwrap(),
    );
    let mut rng = Rng(0x2545_F491);
    let mut d = Data {
        locals: Vec::new(),
        models: Vec::new(),
        iks: Vec::new(),
    };
    for _ in 0..COUNT {
        let mut local = skel.rest_pose().to_vec();
        let hip = Quat::from_rotation_x(rng.range(-0.6, 0.6))
            * Quat::from_rotation_z(rng.range(-0.3, 0.3));
        for (j, q) in [
            (thigh, hip),
            (calf, Quat::from_rotation_x(rng.range(0.0, 1.2))),
        ] {
            let mut t = get_joint(&local, j).unwrap();
            t.rotation = q;
            set_joint(&mut local, j, &t).unwrap();
        }
        let mut models = vec![Mat4::IDENTITY; skel.joint_count()];
        local_to_model(&FkJob::new(skel, &local), &mut models).unwrap();
        let off = Vec3::new(
            rng.range(-0.4, 0.4),
            rng.range(-0.4, 0.4),
            rng.range(-0.4, 0.4),
        );
        let goal = TwoBoneGoal::new(models[foot].translation() + off).with_soften(0.97);
        d.iks.push(TwoBoneIk::new(thigh, calf, foot, goal));
        d.locals.push(local);
        d.models.push(models);
    }
    d
}

fn bench_two_bone(c: &mut Criterion) {
    let bytes = procedural::humanoid_skeleton_bytes().unwrap();
    let skel = Skeleton::from_bytes(&bytes.0).unwrap();
    let mut d = data(&skel);
    let limbs: Vec<Limb> = d
        .iks
        .iter()
        .zip(&d.models)
        .map(|(ik, m)| Limb::from_models(&m[ik.start], &m[ik.mid], &m[ik.end]))
        .collect();
    let mut group = c.benchmark_group("ik_two_bone");
    group.throughput(Throughput::Elements(COUNT as u64));

    // Matrices in, corrections out: what IKTwoBoneJob::Run does.
    group.bench_function("corrections", |b| {
        b.iter(|| {
            for (ik, m) in d.iks.iter().zip(&d.models) {
                let (s, mid, e) = (&m[ik.start], &m[ik.mid], &m[ik.end]);
                black_box(
                    two_bone::corrections_from_models(black_box(s), mid, e, &ik.goal).unwrap(),
                );
            }
        })
    });
    // The same solve from a gathered limb.
    group.bench_function("corrections_limb", |b| {
        b.iter(|| {
            for (ik, limb) in d.iks.iter().zip(&limbs) {
                black_box(two_bone::corrections(black_box(limb), &ik.goal).unwrap());
            }
        })
    });
    // The readable reference solve, from a gathered limb.
    group.bench_function("reference", |b| {
        b.iter(|| {
            for (ik, limb) in d.iks.iter().zip(&limbs) {
                black_box(two_bone::reference(black_box(limb), &ik.goal).unwrap());
            }
        })
    });

    // The lane kernels on gathered lanes.
    let lanes4: Vec<TwoBoneLanes<4>> = limbs
        .chunks(4)
        .zip(d.iks.chunks(4))
        .map(|(l, k)| {
            let mut x = TwoBoneLanes::EMPTY;
            for i in 0..4 {
                x.set_lane(i, &l[i], &k[i].goal);
            }
            x
        })
        .collect();
    let lanes8: Vec<TwoBoneLanes<8>> = limbs
        .chunks(8)
        .zip(d.iks.chunks(8))
        .map(|(l, k)| {
            let mut x = TwoBoneLanes::EMPTY;
            for i in 0..8 {
                x.set_lane(i, &l[i], &k[i].goal);
            }
            x
        })
        .collect();
    let mut out4 = TwoBoneLanesOut::<4>::EMPTY;
    let mut out8 = TwoBoneLanesOut::<8>::EMPTY;
    group.bench_function("lanes4", |b| {
        b.iter(|| {
            for l in &lanes4 {
                solve_lanes4(black_box(l), &mut out4);
                black_box(&out4);
            }
        })
    });
    group.bench_function("lanes8", |b| {
        b.iter(|| {
            for l in &lanes8 {
                solve_lanes8(black_box(l), &mut out8);
                black_box(&out8);
            }
        })
    });
    // Gather from matrices + kernel, 8 at a time.
    group.bench_function("gather+lanes8", |b| {
        let mut x = TwoBoneLanes::<8>::EMPTY;
        b.iter(|| {
            for (ms, ks) in d.models.chunks(8).zip(d.iks.chunks(8)) {
                for (i, (m, ik)) in ms.iter().zip(ks).enumerate() {
                    x.set_lane(
                        i,
                        &Limb::from_models(&m[ik.start], &m[ik.mid], &m[ik.end]),
                        &ik.goal,
                    );
                }
                solve_lanes8(black_box(&x), &mut out8);
                black_box(&out8);
            }
        })
    });

    // Full solves on IkPoses: corrections written and the leg's FK redone.
    // Each iteration starts from the same pose (copied back), so the copy
    // is part of the figure (about 1 µs for 64 humanoid poses).
    let base_local = d.locals.clone();
    let base_models = d.models.clone();
    group.bench_function("solve", |b| {
        b.iter(|| {
            for (((local, models), ik), (bl, bm)) in d
                .locals
                .iter_mut()
                .zip(d.models.iter_mut())
                .zip(&d.iks)
                .zip(base_local.iter().zip(&base_models))
            {
                local.copy_from_slice(bl);
                models.copy_from_slice(bm);
                let mut pose = IkPose::new(&skel, local, models, None).unwrap();
                black_box(ik.solve(&mut pose).unwrap());
            }
        })
    });
    let mut reports = vec![TwoBoneReport::IDENTITY; COUNT];
    group.bench_function("solve_many", |b| {
        b.iter(|| {
            for ((local, models), (bl, bm)) in d
                .locals
                .iter_mut()
                .zip(d.models.iter_mut())
                .zip(base_local.iter().zip(&base_models))
            {
                local.copy_from_slice(bl);
                models.copy_from_slice(bm);
            }
            let mut poses: Vec<IkPose> = d
                .locals
                .iter_mut()
                .zip(d.models.iter_mut())
                .map(|(l, m)| IkPose::new(&skel, l, m, None).unwrap())
                .collect();
            solve_many(&mut poses, &d.iks, &mut reports).unwrap();
            black_box(&reports);
        })
    });
    group.finish();
}

/// Foot placement per character: the humanoid (70 joints) with bent
/// knees, on a 20° slope, both legs, springs running; each iteration
/// restores the animated pose first (as a new frame would), so the figure
/// includes that copy and the FK of the pelvis's subtree (the whole body).
fn bench_foot(c: &mut Criterion) {
    let bytes = procedural::humanoid_skeleton_bytes().unwrap();
    let skel = Skeleton::from_bytes(&bytes.0).unwrap();
    let d = data(&skel);
    let j = |n: &str| skel.find_joint(n).unwrap();
    let leg = |side: &str| FootLeg {
        hip: j(&format!("thigh_{side}")),
        knee: j(&format!("calf_{side}")),
        ankle: j(&format!("foot_{side}")),
        knee_axis: Vec3::new(-1.0, 0.0, 0.0),
    };
    let placement = FootPlacement {
        pelvis: j("pelvis"),
        legs: [leg("l"), leg("r")],
        foot_height: 0.02,
        max_tilt: 0.5,
        max_pelvis_offset: 0.3,
        half_life: 0.1,
        soften: 0.97,
    };
    let grade = 20f32.to_radians().tan();
    let normal = Vec3::new(0.0, 1.0, -grade).try_normalize().unwrap();
    let slope = move |_x: f32, z: f32| Some((grade * z, normal));
    let mut locals = d.locals.clone();
    let mut models = d.models.clone();
    let mut states = vec![FootState::<2>::new(); COUNT];
    let mut group = c.benchmark_group("ik_foot");
    group.throughput(Throughput::Elements(COUNT as u64));
    group.bench_function("humanoid_slope", |b| {
        b.iter(|| {
            for (((local, model), state), (bl, bm)) in locals
                .iter_mut()
                .zip(models.iter_mut())
                .zip(states.iter_mut())
                .zip(d.locals.iter().zip(&d.models))
            {
                local.copy_from_slice(bl);
                model.copy_from_slice(bm);
                let mut pose = IkPose::new(&skel, local, model, None).unwrap();
                black_box(
                    placement
                        .solve(&mut pose, &slope, 0.0, 1.0 / 60.0, state)
                        .unwrap(),
                );
            }
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_two_bone, bench_foot
}
criterion_main!(benches);
