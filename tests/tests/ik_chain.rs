//! Chain IK (CCD, FABRIK, Jacobian methods) and joint limits: validity
//! first, then planar cases whose answers are worked out by hand, then
//! convergence, unreachable targets, singular poses and limits as
//! properties over random chains.

#[path = "../support/mod.rs"]
mod support;

use std::f32::consts::{FRAC_PI_2, PI};

use proptest::prelude::*;
use sinew_core::fk::{local_to_model, FkJob};
use sinew_core::ik::jacobian::{self, Damping, JointAxes, Method, Settings};
use sinew_core::ik::limits::{swing_twist, Hinge, SwingTwist};
use sinew_core::ik::{ccd, fabrik, ChainJob, IkPose, IkReport, JointLimit, MAX_CHAIN};
use sinew_core::procedural;
use sinew_core::skeleton::JointDef;
use sinew_core::{Error, Mat4, Quat, SoaTransform, Transform, Vec3};
use sinew_std::OwnedSkeleton;
use support::*;

// ---------------------------------------------------------------------------
// Rigs and solvers
// ---------------------------------------------------------------------------

/// A chain skeleton: joint `i` is the parent of joint `i + 1`, with the
/// given rest translation and rotation.
fn chain_skeleton(joints: &[(Vec3, Quat)]) -> OwnedSkeleton {
    let defs: Vec<JointDef<'_>> = joints
        .iter()
        .enumerate()
        .map(|(i, &(t, r))| JointDef {
            name: "",
            parent: i.checked_sub(1),
            rest: Transform::from_translation_rotation(t, r),
        })
        .collect();
    OwnedSkeleton::build(&defs).expect("chain skeleton builds")
}

/// A straight planar chain along +X from the origin: bones of the given
/// lengths, one joint more than bones (the last is the tip), identity
/// rest rotations.
fn planar(lengths: &[f32]) -> OwnedSkeleton {
    let mut joints = vec![(Vec3::ZERO, Quat::IDENTITY)];
    joints.extend(
        lengths
            .iter()
            .map(|&l| (Vec3::new(l, 0.0, 0.0), Quat::IDENTITY)),
    );
    chain_skeleton(&joints)
}

struct Rig {
    skel: OwnedSkeleton,
    local: Vec<SoaTransform>,
    models: Vec<Mat4>,
}

impl Rig {
    fn new(skel: OwnedSkeleton) -> Rig {
        let v = skel.view();
        let local = v.rest_pose().to_vec();
        let mut models = vec![Mat4::IDENTITY; v.joint_count()];
        local_to_model(&FkJob::new(&v, &local), &mut models).unwrap();
        Rig {
            skel,
            local,
            models,
        }
    }

    fn solve(
        &mut self,
        f: impl FnOnce(&mut IkPose<'_, '_>) -> Result<IkReport, Error>,
    ) -> Result<IkReport, Error> {
        let v = self.skel.view();
        let mut pose = IkPose::new(&v, &mut self.local, &mut self.models, None).unwrap();
        f(&mut pose)
    }

    fn run(&mut self, solver: Solver, job: &ChainJob<'_>) -> Result<IkReport, Error> {
        self.solve(|p| solver.run(p, job))
    }

    fn rotation(&self, j: usize) -> Quat {
        to_transforms(&self.local, self.skel.joint_count())[j].rotation
    }

    fn position(&self, j: usize) -> Vec3 {
        self.models[j].translation()
    }

    /// The matrices are what FK of the written local pose gives.
    fn assert_models_consistent(&self) {
        let v = self.skel.view();
        let mut fresh = vec![Mat4::IDENTITY; v.joint_count()];
        local_to_model(&FkJob::new(&v, &self.local), &mut fresh).unwrap();
        for (j, (a, b)) in self.models.iter().zip(&fresh).enumerate() {
            assert!(mat_close(a, b, 1e-5), "joint {j}: {a:?} vs {b:?}");
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Solver {
    Ccd,
    Fabrik,
    Jacobian(Method),
}

const DLS: Method = Method::DampedLeastSquares(Damping::Adaptive {
    factor: 0.5,
    min: 1e-3,
});

const SOLVERS: [Solver; 5] = [
    Solver::Ccd,
    Solver::Fabrik,
    Solver::Jacobian(Method::Transpose),
    Solver::Jacobian(Method::PseudoInverse),
    Solver::Jacobian(DLS),
];

impl Solver {
    fn run(self, pose: &mut IkPose<'_, '_>, job: &ChainJob<'_>) -> Result<IkReport, Error> {
        match self {
            Solver::Ccd => ccd::solve(pose, job),
            Solver::Fabrik => fabrik::solve(pose, job),
            Solver::Jacobian(m) => jacobian::solve(pose, job, &Settings::new(m)),
        }
    }
}

fn angle_z(q: Quat) -> f32 {
    signed_angle_about(q, Vec3::Z)
}

/// The angle of a unit rotation, accurate near zero (where `acos` of `w`
/// resolves only about 5e-4 rad in f32).
fn rotation_angle(q: Quat) -> f32 {
    2.0 * Vec3::new(q.x, q.y, q.z).length().atan2(q.w.abs())
}

fn assert_near(got: f32, want: f32, tol: f32, what: &str) {
    assert!((got - want).abs() <= tol, "{what}: {got} vs {want}");
}

// ---------------------------------------------------------------------------
// Validity: every bad input gives its error and leaves the pose untouched
// ---------------------------------------------------------------------------

fn expect_error(
    rig: &mut Rig,
    f: impl Fn(&mut IkPose<'_, '_>) -> Result<IkReport, Error>,
    want: Error,
) {
    let local: Vec<u8> = bytemuck::cast_slice(&rig.local).to_vec();
    let models: Vec<u8> = bytemuck::cast_slice(&rig.models).to_vec();
    assert_eq!(rig.solve(&f), Err(want));
    assert_eq!(
        bytemuck::cast_slice::<_, u8>(&rig.local),
        &local[..],
        "pose written on error"
    );
    assert_eq!(
        bytemuck::cast_slice::<_, u8>(&rig.models),
        &models[..],
        "matrices written on error"
    );
}

#[test]
fn every_solver_rejects_bad_jobs_without_writing() {
    let chain = [0u16, 1, 2, 3];
    let target = Vec3::new(1.0, 1.0, 0.0);
    let nonancestor = Error::InvalidParameter {
        what: "IK chain: each joint must be the parent of the next",
    };
    for solver in SOLVERS {
        let mut rig = Rig::new(planar(&[1.0, 1.0, 1.0]));
        let run = |job: ChainJob<'static>| move |p: &mut IkPose<'_, '_>| solver.run(p, &job);
        let job = |c: &'static [u16]| ChainJob::new(c, target);
        let chain: &'static [u16] = Box::leak(Box::new(chain));
        expect_error(
            &mut rig,
            run(ChainJob::new(chain, Vec3::new(f32::NAN, 0.0, 0.0))),
            Error::NonFinite { what: "IK target" },
        );
        expect_error(
            &mut rig,
            run(job(chain).with_offset(Vec3::new(0.0, f32::INFINITY, 0.0))),
            Error::NonFinite {
                what: "IK effector offset",
            },
        );
        expect_error(&mut rig, run(job(&[0, 2, 3])), nonancestor);
        expect_error(&mut rig, run(job(&[3, 2])), nonancestor);
        expect_error(
            &mut rig,
            run(job(&[])),
            Error::InvalidParameter {
                what: "IK chain: the chain has no joints",
            },
        );
        expect_error(
            &mut rig,
            run(job(&[0, 1, 2, 99])),
            Error::JointOutOfRange {
                joint: 99,
                count: 4,
            },
        );
        let limits: &'static [JointLimit] = &[JointLimit::None, JointLimit::None];
        expect_error(
            &mut rig,
            run(job(chain).with_limits(limits)),
            Error::BadLength {
                buffer: "joint limits",
                expected: 4,
                actual: 2,
            },
        );
        for tol in [-1e-3, f32::NAN, f32::INFINITY] {
            expect_error(
                &mut rig,
                run(job(chain).with_iterations(8, tol)),
                Error::InvalidParameter {
                    what: "IK tolerance must be finite and >= 0",
                },
            );
        }

        // Zero-length bones: every joint at the same place.
        let mut rig0 = Rig::new(planar(&[0.0, 0.0, 0.0]));
        expect_error(
            &mut rig0,
            run(job(chain)),
            Error::InvalidParameter {
                what: "IK chain: the bones and the effector offset have zero total length",
            },
        );
        // An offset gives the same chain a lever: then it solves.
        let report = rig0
            .run(solver, &job(chain).with_offset(Vec3::new(1.0, 0.0, 0.0)))
            .unwrap();
        assert!(report.distance.is_finite(), "{solver:?}");

        // A NaN in the matrices along the chain.
        let mut rig_nan = Rig::new(planar(&[1.0, 1.0, 1.0]));
        rig_nan.models[2].cols[3][0] = f32::NAN;
        expect_error(
            &mut rig_nan,
            run(job(chain)),
            Error::NonFinite {
                what: "IK chain pose",
            },
        );

        // Longer than the capacity: a precise error; at the capacity: solves.
        let long: Vec<u16> = (0..=MAX_CHAIN as u16).collect();
        let long: &'static [u16] = Box::leak(long.into_boxed_slice());
        let mut rig_long = Rig::new(planar(&[0.1; MAX_CHAIN]));
        expect_error(
            &mut rig_long,
            run(ChainJob::new(long, Vec3::new(1.0, 1.0, 0.0))),
            Error::CapacityExceeded {
                capacity: MAX_CHAIN,
            },
        );
        let report = rig_long
            .run(
                solver,
                &ChainJob::new(&long[..MAX_CHAIN], Vec3::new(1.0, 1.0, 0.0)),
            )
            .unwrap();
        assert!(report.distance.is_finite(), "{solver:?}");
    }
}

#[test]
fn jacobian_settings_are_validated() {
    let chain = [0u16, 1, 2, 3];
    let job = ChainJob::new(&chain, Vec3::new(1.0, 1.0, 0.0));
    let mut rig = Rig::new(planar(&[1.0, 1.0, 1.0]));
    let axes = [JointAxes::BALL; 2];
    let cases = [
        (
            Settings::new(Method::Transpose).with_axes(&axes),
            Error::BadLength {
                buffer: "joint axes",
                expected: 4,
                actual: 2,
            },
        ),
        (
            Settings {
                max_step: 0.0,
                ..Settings::new(Method::Transpose)
            },
            Error::InvalidParameter {
                what: "IK Jacobian: max_step must be finite and > 0",
            },
        ),
        (
            Settings::new(Method::DampedLeastSquares(Damping::Fixed(0.0))),
            Error::InvalidParameter {
                what: "IK Jacobian: a fixed damping must be finite and > 0",
            },
        ),
        (
            Settings::new(Method::DampedLeastSquares(Damping::Adaptive {
                factor: f32::NAN,
                min: 0.0,
            })),
            Error::InvalidParameter {
                what: "IK Jacobian: adaptive damping needs a finite factor > 0 and min >= 0",
            },
        ),
        (
            Settings::new(Method::PseudoInverse)
                .with_orientation(Quat::new(f32::NAN, 0.0, 0.0, 1.0), 1.0),
            Error::NonFinite {
                what: "IK orientation target",
            },
        ),
        (
            Settings::new(Method::PseudoInverse).with_orientation(Quat::IDENTITY, -1.0),
            Error::InvalidParameter {
                what: "IK Jacobian: orientation_weight must be finite and >= 0",
            },
        ),
    ];
    for (settings, want) in cases {
        expect_error(&mut rig, |p| jacobian::solve(p, &job, &settings), want);
    }
    assert!(JointAxes::new(&[Vec3::X; 4]).is_err());
    assert!(JointAxes::hinge(Vec3::ZERO).is_err());
    assert!(JointAxes::hinge(Vec3::new(f32::NAN, 0.0, 0.0)).is_err());
}

// ---------------------------------------------------------------------------
// Planar cases worked out by hand (angles about +Z, radians)
// ---------------------------------------------------------------------------

/// Two unit bones along X, target (1, 1): the elbow at (1, 0) turns the
/// effector (2, 0) onto the target by +90°, then the shoulder sees the
/// effector on the target and stays. One sweep, exact.
#[test]
fn ccd_two_links_turns_only_the_elbow() {
    let mut rig = Rig::new(planar(&[1.0, 1.0]));
    let chain = [0u16, 1, 2];
    let r = rig
        .run(
            Solver::Ccd,
            &ChainJob::new(&chain, Vec3::new(1.0, 1.0, 0.0)),
        )
        .unwrap();
    assert_eq!(r.iterations, 1);
    assert!(r.reached && r.distance < 1e-5, "{r:?}");
    assert_near(angle_z(rig.rotation(0)), 0.0, 1e-5, "shoulder");
    assert_near(angle_z(rig.rotation(1)), FRAC_PI_2, 1e-5, "elbow");
    rig.assert_models_consistent();
}

/// Three unit bones along X, target (1, 2). One sweep:
/// - joint 2 at (2, 0): effector (3, 0) → direction (−1, 2)/√5, a turn of
///   atan2(2, −1) = 2.034444; effector (1.552786, 0.894427);
/// - joint 1 at (1, 0): from atan2(0.894427, 0.552786) = 1.017222 to π/2,
///   a turn of 0.553574; effector (1, 1.051462);
/// - joint 0: from atan2(1.051462, 1) = 0.810449 to atan2(2, 1) = 1.107149,
///   a turn of 0.296670; effector 1.451022 · (1, 2)/√5 = (0.648933, 1.297867).
///
/// A second sweep gives (0.318878, 0.602087, 1.292925), effector
/// (0.954966, 1.909931) (the same steps, repeated).
#[test]
fn ccd_three_links_one_and_two_sweeps() {
    let chain = [0u16, 1, 2, 3];
    for (sweeps, want, effector) in [
        (1, [0.296670, 0.553574, 2.034444], (0.648933, 1.297867)),
        (2, [0.318878, 0.602087, 1.292925], (0.954966, 1.909931)),
    ] {
        let mut rig = Rig::new(planar(&[1.0, 1.0, 1.0]));
        let job = ChainJob::new(&chain, Vec3::new(1.0, 2.0, 0.0)).with_iterations(sweeps, 1e-6);
        let r = rig.run(Solver::Ccd, &job).unwrap();
        assert_eq!(r.iterations, sweeps);
        assert!(!r.reached);
        for (j, w) in want.iter().enumerate() {
            assert_near(angle_z(rig.rotation(j)), *w, 2e-5, "joint angle");
        }
        let p = rig.position(3);
        assert_near(p.x, effector.0, 2e-5, "effector x");
        assert_near(p.y, effector.1, 2e-5, "effector y");
        assert_near(p.z, 0.0, 1e-6, "effector z");
    }
}

/// Two unit bones along X, target (0, 1.5), one FABRIK iteration.
/// Backward: p2 = (0, 1.5); p1 = p2 + (1, −1.5)/√3.25 = (0.554700, 0.667949);
/// p0 = p1 − p1/|p1| (|p1| = 0.868243) = (−0.084170, −0.101356).
/// Forward: p0 = 0; p1 = (p1 − p0)/|p1 − p0| = (0.638875, 0.769310), angle
/// 0.877761; p2 = p1 + unit((0, 1.5) − p1) = (−0.019350, 1.522131), bone
/// angle 2.289256, so the elbow turns 1.411495.
#[test]
fn fabrik_two_links_one_iteration() {
    let mut rig = Rig::new(planar(&[1.0, 1.0]));
    let chain = [0u16, 1, 2];
    let job = ChainJob::new(&chain, Vec3::new(0.0, 1.5, 0.0)).with_iterations(1, 1e-6);
    let r = rig.run(Solver::Fabrik, &job).unwrap();
    assert_eq!(r.iterations, 1);
    assert_near(angle_z(rig.rotation(0)), 0.877761, 2e-5, "shoulder");
    assert_near(angle_z(rig.rotation(1)), 1.411495, 2e-5, "elbow");
    assert_near(rig.position(1).x, 0.638875, 2e-5, "p1 x");
    assert_near(rig.position(1).y, 0.769310, 2e-5, "p1 y");
    assert_near(rig.position(2).x, -0.019350, 2e-5, "p2 x");
    assert_near(rig.position(2).y, 1.522131, 2e-5, "p2 y");
    rig.assert_models_consistent();
}

/// Three unit bones along X, target (1, 1.5). The same two passes as above
/// give, after one iteration, the relative angles (−0.110228, 1.056458,
/// 1.251509) and effector (0.992005, 1.511037); after a second,
/// (−0.113860, 1.048919, 1.263681) and (0.999813, 1.500257).
#[test]
fn fabrik_three_links_one_and_two_iterations() {
    let chain = [0u16, 1, 2, 3];
    for (iterations, want, effector) in [
        (1, [-0.110228, 1.056458, 1.251509], (0.992005, 1.511037)),
        (2, [-0.113860, 1.048919, 1.263681], (0.999813, 1.500257)),
    ] {
        let mut rig = Rig::new(planar(&[1.0, 1.0, 1.0]));
        let job = ChainJob::new(&chain, Vec3::new(1.0, 1.5, 0.0)).with_iterations(iterations, 1e-6);
        let r = rig.run(Solver::Fabrik, &job).unwrap();
        assert_eq!(r.iterations, iterations);
        for (j, w) in want.iter().enumerate() {
            assert_near(angle_z(rig.rotation(j)), *w, 5e-5, "joint angle");
        }
        assert_near(rig.position(3).x, effector.0, 5e-5, "effector x");
        assert_near(rig.position(3).y, effector.1, 5e-5, "effector y");
    }
}

/// Bones 1, 2, 1 along X, target (0, 8) beyond the reach of 4: the straight
/// chain up +Y, i.e. the first joint turned +90°, the others unchanged;
/// joints at (0, 1), (0, 3), (0, 4), distance 4.
#[test]
fn unreachable_targets_give_the_straight_chain() {
    let chain = [0u16, 1, 2, 3];
    let job = ChainJob::new(&chain, Vec3::new(0.0, 8.0, 0.0)).with_iterations(200, 1e-4);
    for solver in [Solver::Fabrik, Solver::Ccd] {
        let mut rig = Rig::new(planar(&[1.0, 2.0, 1.0]));
        let r = rig.run(solver, &job).unwrap();
        assert!(!r.reached);
        assert_near(r.distance, 4.0, 1e-4, "distance");
        assert_near(angle_z(rig.rotation(0)), FRAC_PI_2, 1e-3, "first joint");
        for j in 1..3 {
            assert_near(angle_z(rig.rotation(j)), 0.0, 1e-3, "other joints");
        }
        for (j, y) in [(1, 1.0), (2, 3.0), (3, 4.0)] {
            let p = rig.position(j);
            assert!(
                vec_close(p, Vec3::new(0.0, y, 0.0), 1e-3),
                "{solver:?}: joint {j} at {p:?}"
            );
        }
        if let Solver::Fabrik = solver {
            assert_eq!(r.iterations, 1);
        }
    }
}

/// Two unit bones, the elbow bent +90°: joints (0, 0), (1, 0), effector
/// (1, 1); target (1, 1.1), hinges about Z, one step. J's columns (x, y)
/// are z × (effector − joint): shoulder (−1, 1), elbow (−1, 0); e = (0, 0.1).
/// - pseudo-inverse: J is invertible, Δθ = J⁻¹ e = (0.1, −0.1);
/// - transpose: Jᵀe = (0.1, 0), J Jᵀ e = (−0.1, 0.1), α = 0.01 / 0.02 =
///   0.5, Δθ = (0.05, 0);
/// - DLS, λ = 1: J Jᵀ + I = [[3, −1], [−1, 2]], y = (0.02, 0.06),
///   Δθ = Jᵀ y = (0.04, −0.02).
#[test]
fn jacobian_first_steps_by_hand() {
    let skel = chain_skeleton(&[
        (Vec3::ZERO, Quat::IDENTITY),
        (Vec3::new(1.0, 0.0, 0.0), Quat::from_rotation_z(FRAC_PI_2)),
        (Vec3::new(1.0, 0.0, 0.0), Quat::IDENTITY),
    ]);
    let chain = [0u16, 1, 2];
    let hinge = JointAxes::hinge(Vec3::Z).unwrap();
    let axes = [hinge; 3];
    let job = ChainJob::new(&chain, Vec3::new(1.0, 1.1, 0.0)).with_iterations(1, 1e-6);
    for (method, want) in [
        (Method::PseudoInverse, [0.1, -0.1]),
        (Method::Transpose, [0.05, 0.0]),
        (
            Method::DampedLeastSquares(Damping::Fixed(1.0)),
            [0.04, -0.02],
        ),
    ] {
        let mut rig = Rig::new(skel.clone());
        let settings = Settings::new(method).with_axes(&axes);
        let r = rig.solve(|p| jacobian::solve(p, &job, &settings)).unwrap();
        assert_eq!(r.iterations, 1);
        assert_near(angle_z(rig.rotation(0)), want[0], 1e-5, "shoulder");
        assert_near(angle_z(rig.rotation(1)), FRAC_PI_2 + want[1], 1e-5, "elbow");
        assert!(quat_close(rig.rotation(2), Quat::IDENTITY, 1e-6));
    }
}

/// A chain that starts below the root, in the humanoid: joints outside the
/// chain keep their local transforms, the matrices follow FK, and the hand
/// reaches a point in front of the shoulder.
#[test]
fn solvers_write_only_the_chain_and_keep_matrices_consistent() {
    let skel = OwnedSkeleton::build(&procedural::humanoid_joints()).unwrap();
    let v = skel.view();
    let (arm, hand) = (
        v.find_joint("upper_arm_l").unwrap(),
        v.find_joint("hand_l").unwrap(),
    );
    let mut buf = [0u16; 8];
    let chain = sinew_core::ik::chain(&v, arm, hand, &mut buf)
        .unwrap()
        .to_vec();
    for solver in SOLVERS {
        let mut rig = Rig::new(skel.clone());
        let before = to_transforms(&rig.local, v.joint_count());
        let shoulder = rig.position(arm);
        let reach = (rig.position(hand) - shoulder).length();
        // A direction of length 1/√2, scaled to 80 % of the arm's reach.
        let dir = Vec3::new(0.3, -0.4, 0.5);
        let target = shoulder + dir * (0.8 * reach / dir.length());
        let job = ChainJob::new(&chain, target).with_iterations(300, 1e-3);
        let r = rig.run(solver, &job).unwrap();
        assert!(r.reached, "{solver:?}: {r:?}");
        rig.assert_models_consistent();
        let after = to_transforms(&rig.local, v.joint_count());
        for j in 0..v.joint_count() {
            if !chain.contains(&(j as u16)) {
                assert_eq!(before[j], after[j], "{solver:?}: joint {j} written");
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Convergence, singular poses, limits (properties)
// ---------------------------------------------------------------------------

/// A random 3D chain: `bones` bones of length 0.5..1.5 (along X in their
/// parent), small random rest bends, and the tip joint.
fn random_chain(
    bones: std::ops::RangeInclusive<usize>,
) -> impl Strategy<Value = Vec<(Vec3, Quat)>> {
    bones
        .prop_flat_map(|n| prop::collection::vec((0.5f32..1.5, small_rotation(0.6)), n + 1))
        .prop_map(|v| {
            let n = v.len();
            (0..n)
                .map(|i| {
                    let t = match i {
                        0 => Vec3::ZERO,
                        _ => Vec3::new(v[i - 1].0, 0.0, 0.0),
                    };
                    let q = if i + 1 == n { Quat::IDENTITY } else { v[i].1 };
                    (t, q)
                })
                .collect()
        })
}

fn lengths(joints: &[(Vec3, Quat)]) -> Vec<f32> {
    joints[1..].iter().map(|(t, _)| t.length()).collect()
}

/// A target at a fraction `f` of the way from the chain's shortest reach
/// (plus a quarter of its length) to `outer` times its longest, in direction
/// `dir`. Both CCD and FABRIK slow down near the shortest reach, where the
/// chain must fold nearly flat (FABRIK needs over a hundred iterations to
/// swing a folded two-bone chain round to a target just past its shortest
/// reach).
fn reachable_target(joints: &[(Vec3, Quat)], dir: Vec3, f: f32, outer: f32) -> Vec3 {
    let l = lengths(joints);
    let total: f32 = l.iter().sum();
    let longest = l.iter().copied().fold(0.0, f32::max);
    let shortest = (2.0 * longest - total).max(0.0);
    let lo = shortest + 0.25 * total;
    dir * (lo + f * (outer * total - lo))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Ball joints, no limits: CCD within 256 sweeps reaches targets out to
    /// 80 % of the chain's length that are not behind it, FABRIK within 256
    /// iterations any target out to 90 %, to 1e-3. Most take a few dozen;
    /// both slow down where a chain must unfold from a zigzag on the
    /// target's line. (CCD also slows down as the chain nears full
    /// extension, where each joint corrects a little of what the joint
    /// before undid, and when a nearly straight chain must turn round to a
    /// target behind it, where from the first joint the effector and the
    /// target look nearly aligned.)
    #[test]
    fn ccd_and_fabrik_converge_on_reachable_targets(
        joints in random_chain(2..=6),
        dir in unit_axis(),
        f in 0.0f32..1.0,
    ) {
        let chain: Vec<u16> = (0..joints.len() as u16).collect();
        for (solver, iterations, outer) in [(Solver::Ccd, 256, 0.8), (Solver::Fabrik, 256, 0.9)] {
            let target = reachable_target(&joints, dir, f, outer);
            let rest = Rig::new(chain_skeleton(&joints));
            let along = (rest.position(chain.len() - 1) - rest.position(0)).try_normalize();
            if matches!(solver, Solver::Ccd) && along.is_some_and(|a| a.dot(dir) < -0.5) {
                continue;
            }
            let mut rig = Rig::new(chain_skeleton(&joints));
            let job = ChainJob::new(&chain, target).with_iterations(iterations, 1e-3);
            let r = rig.run(solver, &job).unwrap();
            prop_assert!(r.reached, "{:?}: {:?}", solver, r);
            prop_assert!(r.iterations <= iterations);
            // The matrices agree with the solver's own measure to rounding
            // (the FK of a chain a few units long, in f32).
            let d = (rig.position(chain.len() - 1) - target).length();
            prop_assert!(d <= 1e-3 + 1e-5 && (d - r.distance).abs() <= 1e-5, "{} vs {:?}", d, r);
        }
    }

    /// Damped least squares and the pseudo-inverse reach position and
    /// orientation goals that a pose of the chain meets (three ball joints,
    /// effector one unit past the last joint), within 200 iterations.
    #[test]
    fn jacobian_reaches_position_and_orientation_goals(
        rots in prop::collection::vec(small_rotation(1.2), 3),
    ) {
        let joints = [
            (Vec3::ZERO, Quat::IDENTITY),
            (Vec3::new(1.0, 0.0, 0.0), Quat::IDENTITY),
            (Vec3::new(1.0, 0.0, 0.0), Quat::IDENTITY),
        ];
        // The goal: FK of the chain in pose `rots`.
        let goal_skel = chain_skeleton(&[
            (joints[0].0, rots[0]),
            (joints[1].0, rots[1]),
            (joints[2].0, rots[2]),
        ]);
        let goal = Rig::new(goal_skel);
        let offset = Vec3::new(1.0, 0.0, 0.0);
        let target = goal.models[2].transform_point(offset);
        let orientation = goal.models[2].rotation();
        let chain = [0u16, 1, 2];
        let job = ChainJob::new(&chain, target).with_offset(offset).with_iterations(200, 1e-3);
        for method in [Method::PseudoInverse, DLS] {
            let mut rig = Rig::new(chain_skeleton(&joints));
            let settings = Settings::new(method).with_orientation(orientation, 1.0);
            let r = rig.solve(|p| jacobian::solve(p, &job, &settings)).unwrap();
            prop_assert!(r.reached, "{:?}: {:?}", method, r);
            let angle = rotation_angle(rig.models[2].rotation().conjugate() * orientation);
            prop_assert!(angle <= 1.001e-3, "{:?}: {}", method, angle);
        }
    }

    /// A straight chain and targets past its reach (on its line, just off it,
    /// behind it): every Jacobian method gives finite rotations and each
    /// step turns a joint by at most `max_step`; with error-adaptive damping
    /// the error does not grow (a fixed small damping and the
    /// pseudo-inverse may swing from side to side there, bounded).
    #[test]
    fn jacobian_is_bounded_at_singular_poses(
        bones in 2usize..=8,
        far in 1.0f32..100.0,
        off in prop_oneof![Just(0.0f32), -1e-3f32..1e-3, -0.5f32..0.5],
        behind in any::<bool>(),
    ) {
        let skel = planar(&vec![1.0; bones]);
        let chain: Vec<u16> = (0..=bones as u16).collect();
        let x = if behind { -(bones as f32) * far } else { bones as f32 * (1.0 + far) };
        let target = Vec3::new(x, off, 0.0);
        for method in [
            Method::Transpose,
            Method::PseudoInverse,
            DLS,
            Method::DampedLeastSquares(Damping::Fixed(0.1)),
        ] {
            let settings = Settings::new(method);
            let mut rig = Rig::new(skel.clone());
            let start = (rig.position(bones) - target).length();
            let one = ChainJob::new(&chain, target).with_iterations(1, 1e-6);
            rig.solve(|p| jacobian::solve(p, &one, &settings)).unwrap();
            for j in 0..bones {
                let q = rig.rotation(j);
                prop_assert!(q.is_finite());
                prop_assert!(q.angle_between(Quat::IDENTITY) <= settings.max_step + 1e-4,
                    "{:?}: joint {} turned {}", method, j, q.angle_between(Quat::IDENTITY));
            }
            let many = ChainJob::new(&chain, target).with_iterations(100, 1e-6);
            let r = rig.solve(|p| jacobian::solve(p, &many, &settings)).unwrap();
            prop_assert!(r.distance.is_finite());
            if method == DLS {
                prop_assert!(r.distance <= start + 1e-4 * start.max(1.0), "{:?}: {} > {}", method, r.distance, start);
            }
            for m in &rig.models {
                prop_assert!(m.is_finite());
            }
        }
    }
}

/// A random limit: none, a hinge or a swing-twist limit with a random
/// reference, axis and ranges.
fn limit() -> impl Strategy<Value = JointLimit> {
    let range = (-PI..=PI, -PI..=PI).prop_map(|(a, b): (f32, f32)| (a.min(b), a.max(b)));
    prop_oneof![
        1 => Just(JointLimit::None),
        2 => (small_rotation(0.5), unit_axis(), range.clone())
            .prop_map(|(r, a, (lo, hi))| JointLimit::Hinge(Hinge::new(r, a, lo, hi).unwrap())),
        3 => (small_rotation(0.5), unit_axis(), 0.0f32..=PI, range)
            .prop_map(|(r, a, cone, (lo, hi))| {
                JointLimit::SwingTwist(SwingTwist::new(r, a, cone, lo, hi).unwrap())
            }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Projection lands inside the limit; a rotation that is inside comes
    /// back bit for bit.
    #[test]
    fn projection_lands_inside_and_keeps_inside_rotations(l in limit(), q in unit_quat()) {
        let p = l.project(q);
        prop_assert!(l.contains(p, 1e-4), "{:?} -> {:?}", q, p);
        prop_assert!(p.dot(q) >= 0.0);
        if l.contains(q, 0.0) {
            prop_assert_eq!(p, q);
        }
        // Projecting twice changes nothing more.
        prop_assert!(quat_close(l.project(p), p, 1e-4));
    }

    /// Rotations built inside a swing-twist limit (swing within the cone,
    /// twist within the range) are inside and left alone.
    #[test]
    fn rotations_built_inside_are_unchanged(
        r in small_rotation(0.5),
        axis in unit_axis(),
        perp in unit_axis(),
        cone in 0.0f32..=PI,
        (lo, hi) in (-PI..=PI, -PI..=PI).prop_map(|(a, b): (f32, f32)| (a.min(b), a.max(b))),
        (s, t) in (0.0f32..=1.0, 0.0f32..=1.0),
    ) {
        let Some(swing_axis) = axis.cross(perp).try_normalize() else { return Ok(()) };
        let l = JointLimit::SwingTwist(SwingTwist::new(r, axis, cone, lo, hi).unwrap());
        let d = Quat::from_axis_angle(swing_axis, s * cone) * Quat::from_axis_angle(axis, lo + t * (hi - lo));
        let q = r * d;
        prop_assert!(l.contains(q, 1e-4));
        prop_assert!(quat_close(l.project(q), q, 1e-4));
        let (sw, tw) = swing_twist(d, axis);
        prop_assert!(quat_close(sw * tw, d, 1e-5));
        let h = JointLimit::Hinge(Hinge::new(r, axis, lo, hi).unwrap());
        let q = r * Quat::from_axis_angle(axis, lo + t * (hi - lo));
        prop_assert!(quat_close(h.project(q), q, 1e-4));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Every solver leaves every limited joint within its limit, for random
    /// chains, limits and targets (reachable or not).
    #[test]
    fn no_solver_violates_the_limits(
        joints in random_chain(1..=6),
        limits in prop::collection::vec(limit(), 7),
        target in vec3_in(-6.0, 6.0),
    ) {
        let chain: Vec<u16> = (0..joints.len() as u16).collect();
        let limits = &limits[..chain.len()];
        let job = ChainJob::new(&chain, target).with_limits(limits).with_iterations(20, 1e-3);
        for solver in SOLVERS {
            let mut rig = Rig::new(chain_skeleton(&joints));
            let r = rig.run(solver, &job).unwrap();
            prop_assert!(r.distance.is_finite());
            for (j, l) in limits.iter().enumerate() {
                let q = rig.rotation(j);
                prop_assert!(l.contains(q, 2e-3), "{:?}: joint {} {:?} outside {:?}", solver, j, q, l);
            }
        }
    }
}
