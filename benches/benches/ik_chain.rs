//! Chain IK benches (single thread, fixed targets): CCD, FABRIK and the
//! Jacobian transpose, pseudo-inverse and damped least squares on a 4-joint
//! arm (3 bones + hand) and a 10-joint tail (9 bones + tip), ball joints, no
//! limits. Each solve runs a fixed number of iterations (tolerance 0, a
//! target at 70 % of the reach, so no solver stops early) from the same
//! bent start pose, restored before every solve; the figure is per solve,
//! including the write-back and the FK update of the chain.
//!
//! ```text
//! cargo bench -p sinew-benches --bench ik_chain -- --noplot
//! ```

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use sinew_core::fk::{local_to_model, FkJob};
use sinew_core::ik::jacobian::{self, Damping, Method, Settings};
use sinew_core::ik::{ccd, fabrik, ChainJob, IkPose, IkReport};
use sinew_core::skeleton::JointDef;
use sinew_core::{Error, Mat4, Quat, Transform, Vec3};
use sinew_std::OwnedSkeleton;

/// Iterations per solve.
const ITERATIONS: u32 = 10;

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2))
        .sample_size(30)
}

/// A chain of `joints` joints, bones of 0.3 along X, each joint bent 0.2
/// rad about a different axis.
fn rig(joints: usize) -> OwnedSkeleton {
    let defs: Vec<JointDef<'_>> = (0..joints)
        .map(|i| {
            let t = if i == 0 {
                Vec3::ZERO
            } else {
                Vec3::new(0.3, 0.0, 0.0)
            };
            let axis = [Vec3::Y, Vec3::Z, Vec3::X][i % 3];
            JointDef {
                name: "",
                parent: i.checked_sub(1),
                rest: Transform::from_translation_rotation(t, Quat::from_axis_angle(axis, 0.2)),
            }
        })
        .collect();
    OwnedSkeleton::build(&defs).expect("bench rig builds")
}

type Solve = fn(&mut IkPose<'_, '_>, &ChainJob<'_>) -> Result<IkReport, Error>;

fn bench_chain(c: &mut Criterion) {
    let mut group = c.benchmark_group("ik_chain");
    let solvers: [(&str, Solve); 5] = [
        ("ccd", ccd::solve),
        ("fabrik", fabrik::solve),
        ("jacobian-transpose", |p, j| {
            jacobian::solve(p, j, &Settings::new(Method::Transpose))
        }),
        ("jacobian-pinv", |p, j| {
            jacobian::solve(p, j, &Settings::new(Method::PseudoInverse))
        }),
        ("jacobian-dls", |p, j| {
            let dls = Method::DampedLeastSquares(Damping::Adaptive {
                factor: 0.5,
                min: 1e-3,
            });
            jacobian::solve(p, j, &Settings::new(dls))
        }),
    ];
    for (name, joints) in [("arm-4", 4usize), ("tail-10", 10)] {
        let skel = rig(joints);
        let v = skel.view();
        let rest = v.rest_pose().to_vec();
        let mut models0 = vec![Mat4::IDENTITY; joints];
        local_to_model(&FkJob::new(&v, &rest), &mut models0).unwrap();
        let chain: Vec<u16> = (0..joints as u16).collect();
        let reach = 0.3 * (joints - 1) as f32;
        let target = Vec3::new(0.2, 0.9, -0.4) * (0.7 * reach / 1.004_988);
        let job = ChainJob::new(&chain, target).with_iterations(ITERATIONS, 0.0);
        for (solver, solve) in solvers {
            let mut local = rest.clone();
            let mut models = models0.clone();
            group.bench_function(BenchmarkId::new(name, solver), |b| {
                b.iter(|| {
                    local.copy_from_slice(&rest);
                    models.copy_from_slice(&models0);
                    let mut pose = IkPose::new(&v, &mut local, &mut models, None).unwrap();
                    black_box(solve(&mut pose, black_box(&job)))
                })
            });
        }
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_chain
}
criterion_main!(benches);
