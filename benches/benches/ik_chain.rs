//! Chain IK benches (single thread, fixed targets): CCD, FABRIK and the
//! Jacobian transpose, pseudo-inverse and damped least squares on a 4-joint
//! arm (3 bones + hand) and a 10-joint tail (9 bones + tip), ball joints, no
//! limits. Each solve runs a fixed number of iterations (tolerance 0, a
//! target at 70 % of the reach, so no solver stops early) from the same
//! bent start pose, restored before every solve; the figure is per solve,
//! including the write-back and the FK update of the chain.
//!
//! Group `ik_fabrik_tree`: multi-effector FABRIK on the procedural
//! humanoid, the same fixed iteration count from the rest pose: the spine
//! (spine_01 to spine_03) and both arms (clavicle to hand, 15 joints) to
//! two hand targets, and the left forearm, hand and five fingers (22
//! joints) to five fingertip targets; targets from FK of a pose that turns
//! every tree joint by 0.25 rad. The FK update covers the tree root's
//! subtree (the upper body, or the hand).
//!
//! ```text
//! cargo bench -p sinew-benches --bench ik_chain -- --noplot
//! ```

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use sinew_benches::config;
use sinew_core::fk::{local_to_model, FkJob};
use sinew_core::ik::fabrik_tree::{self, Branch, TreeJob};
use sinew_core::ik::jacobian::{self, Damping, Method, Settings};
use sinew_core::ik::{ccd, fabrik, ChainJob, IkPose, IkReport, MAX_CHAIN};
use sinew_core::skeleton::JointDef;
use sinew_core::soa::{get_joint, set_joint};
use sinew_core::{procedural, Error, Mat4, Quat, Transform, Vec3};
use sinew_std::OwnedSkeleton;

/// Iterations per solve.
const ITERATIONS: u32 = 10;

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

fn bench_tree(c: &mut Criterion) {
    let mut group = c.benchmark_group("ik_fabrik_tree");
    let skel = OwnedSkeleton::build(&procedural::humanoid_joints()).expect("humanoid builds");
    let v = skel.view();
    let find = |name: &str| v.find_joint(name).expect("humanoid joint");
    let path = |from: &str, to: &str| -> Vec<u16> {
        let mut buf = [0u16; MAX_CHAIN];
        sinew_core::ik::chain(&v, find(from), find(to), &mut buf)
            .expect("humanoid chain")
            .to_vec()
    };
    let trees: [(&str, Vec<Vec<u16>>); 2] = [
        (
            "humanoid-spine-arms/2-hands",
            vec![path("spine_01", "hand_l"), path("spine_03", "hand_r")],
        ),
        (
            "humanoid-hand/5-tips",
            vec![
                path("lower_arm_twist_l", "index_03_l"),
                path("hand_l", "thumb_03_l"),
                path("hand_l", "middle_03_l"),
                path("hand_l", "ring_03_l"),
                path("hand_l", "pinky_03_l"),
            ],
        ),
    ];
    let rest = v.rest_pose().to_vec();
    let mut models0 = vec![Mat4::IDENTITY; v.joint_count()];
    local_to_model(&FkJob::new(&v, &rest), &mut models0).unwrap();
    for (name, branches) in &trees {
        // The targets: the branch ends in a pose that turns every tree
        // joint by 0.25 rad about X, Y or Z in turn.
        let mut goal = rest.clone();
        let joints = branches
            .iter()
            .enumerate()
            .flat_map(|(k, b)| b.iter().skip(usize::from(k > 0)));
        for (i, &j) in joints.enumerate() {
            let mut t = get_joint(&goal, usize::from(j)).unwrap();
            let axis = [Vec3::X, Vec3::Y, Vec3::Z][i % 3];
            t.rotation = t.rotation * Quat::from_axis_angle(axis, 0.25);
            set_joint(&mut goal, usize::from(j), &t).unwrap();
        }
        let mut goal_models = vec![Mat4::IDENTITY; v.joint_count()];
        local_to_model(&FkJob::new(&v, &goal), &mut goal_models).unwrap();
        let tree: Vec<Branch<'_>> = branches
            .iter()
            .map(|b| {
                let end = usize::from(*b.last().unwrap());
                Branch::new(b, goal_models[end].translation())
            })
            .collect();
        let job = TreeJob::new(&tree).with_iterations(ITERATIONS, 0.0);
        let mut local = rest.clone();
        let mut models = models0.clone();
        group.bench_function(*name, |b| {
            b.iter(|| {
                local.copy_from_slice(&rest);
                models.copy_from_slice(&models0);
                let mut pose = IkPose::new(&v, &mut local, &mut models, None).unwrap();
                black_box(fabrik_tree::solve(&mut pose, black_box(&job)))
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_chain, bench_tree
}
criterion_main!(benches);
