//! Multi-effector FABRIK (`ik::fabrik_tree`): validity first, then planar Y
//! trees worked out by hand, conflicting targets and agreement with the
//! chain solver for a single branch, then convergence, limits and what is
//! written as properties over random Y trees.

#[path = "../support/mod.rs"]
mod support;

use std::f32::consts::PI;

use proptest::prelude::*;
use sinew_core::fk::{local_to_model, FkJob};
use sinew_core::ik::fabrik_tree::{self, Branch, TreeJob, TreeReport, MAX_BRANCHES};
use sinew_core::ik::limits::{Hinge, SwingTwist};
use sinew_core::ik::{fabrik, ChainJob, IkPose, IkReport, JointLimit, MAX_CHAIN};
use sinew_core::procedural;
use sinew_core::skeleton::JointDef;
use sinew_core::{Error, Mat4, Quat, SoaTransform, Transform, Vec3};
use sinew_std::OwnedSkeleton;
use support::*;

// ---------------------------------------------------------------------------
// Rigs
// ---------------------------------------------------------------------------

/// A joint of a test skeleton: parent, rest translation, rest rotation.
type Def = (Option<usize>, Vec3, Quat);

fn skeleton(defs: &[Def]) -> OwnedSkeleton {
    let defs: Vec<JointDef<'_>> = defs
        .iter()
        .map(|&(parent, t, r)| JointDef {
            name: "",
            parent,
            rest: Transform::from_translation_rotation(t, r),
        })
        .collect();
    OwnedSkeleton::build(&defs).expect("test skeleton builds")
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

    /// A rig in the rest pose with the local rotations of `joints` set to
    /// `rotations` (matrices from FK).
    fn posed(skel: OwnedSkeleton, joints: &[u16], rotations: &[Quat]) -> Rig {
        let n = skel.joint_count();
        let mut t = to_transforms(skel.view().rest_pose(), n);
        for (&j, &q) in joints.iter().zip(rotations) {
            t[usize::from(j)].rotation = q;
        }
        let mut rig = Rig::new(skel);
        rig.local = to_soa(&t);
        let v = rig.skel.view();
        local_to_model(&FkJob::new(&v, &rig.local), &mut rig.models).unwrap();
        rig
    }

    fn tree(&mut self, job: &TreeJob<'_>) -> Result<TreeReport, Error> {
        let v = self.skel.view();
        let mut pose = IkPose::new(&v, &mut self.local, &mut self.models, None).unwrap();
        fabrik_tree::solve(&mut pose, job)
    }

    fn chain(&mut self, job: &ChainJob<'_>) -> Result<IkReport, Error> {
        let v = self.skel.view();
        let mut pose = IkPose::new(&v, &mut self.local, &mut self.models, None).unwrap();
        fabrik::solve(&mut pose, job)
    }

    fn transforms(&self) -> Vec<Transform> {
        to_transforms(&self.local, self.skel.joint_count())
    }

    fn rotation(&self, j: usize) -> Quat {
        self.transforms()[j].rotation
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

fn angle_z(q: Quat) -> f32 {
    signed_angle_about(q, Vec3::Z)
}

fn assert_near(got: f32, want: f32, tol: f32, what: &str) {
    assert!((got - want).abs() <= tol, "{what}: {got} vs {want}");
}

fn v2(x: f32, y: f32) -> Vec3 {
    Vec3::new(x, y, 0.0)
}

// ---------------------------------------------------------------------------
// Y trees
// ---------------------------------------------------------------------------

/// A Y tree in a skeleton with joints outside it: a `world` joint above the
/// tree's root, a trunk from the root to the sub-base, two arms hanging off
/// the sub-base (each from a shoulder joint at a rigid offset in the
/// sub-base's frame to a tip), a `neck` off the sub-base and a `finger`
/// below the first arm's tip that are not in the tree.
#[derive(Clone, Debug)]
struct YTree {
    defs: Vec<Def>,
    /// Root to sub-base.
    trunk: Vec<u16>,
    /// Shoulder to tip, each arm.
    arms: [Vec<u16>; 2],
    outside: Vec<u16>,
}

/// One bone: its length along the child's parent X axis and the rest
/// rotation of the joint it ends at.
type Bone = (f32, Quat);

impl YTree {
    fn build(trunk: &[Bone], offsets: [Vec3; 2], arms: [&[Bone]; 2], root_rot: Quat) -> YTree {
        let mut defs: Vec<Def> = vec![(
            None,
            Vec3::new(0.3, -0.2, 0.1),
            Quat::from_axis_angle(Vec3::new(0.6, 0.0, 0.8), 0.5),
        )];
        let mut outside = vec![0u16];
        let add = |defs: &mut Vec<Def>, parent: usize, t: Vec3, r: Quat| -> u16 {
            defs.push((Some(parent), t, r));
            (defs.len() - 1) as u16
        };
        let root = add(&mut defs, 0, Vec3::new(0.2, 0.1, 0.0), root_rot);
        let mut trunk_joints = vec![root];
        for &(len, rot) in trunk {
            let j = add(
                &mut defs,
                usize::from(*trunk_joints.last().unwrap()),
                v2(len, 0.0),
                rot,
            );
            trunk_joints.push(j);
        }
        let sub = usize::from(*trunk_joints.last().unwrap());
        let mut arm_joints: [Vec<u16>; 2] = [vec![], vec![]];
        for (side, bones) in arms.iter().enumerate() {
            let shoulder = add(&mut defs, sub, offsets[side], Quat::IDENTITY);
            let mut joints = vec![shoulder];
            for &(len, rot) in bones.iter() {
                let j = add(
                    &mut defs,
                    usize::from(*joints.last().unwrap()),
                    v2(len, 0.0),
                    rot,
                );
                joints.push(j);
            }
            arm_joints[side] = joints;
            if side == 0 {
                // Added in depth-first order, so that the skeleton keeps
                // these indices.
                let tip = usize::from(*arm_joints[0].last().unwrap());
                outside.push(add(&mut defs, tip, v2(0.1, 0.0), Quat::IDENTITY));
            }
        }
        outside.push(add(
            &mut defs,
            sub,
            Vec3::new(0.0, 0.3, 0.0),
            Quat::IDENTITY,
        ));
        YTree {
            defs,
            trunk: trunk_joints,
            arms: arm_joints,
            outside,
        }
    }

    fn skeleton(&self) -> OwnedSkeleton {
        skeleton(&self.defs)
    }

    fn sub_base(&self) -> usize {
        usize::from(*self.trunk.last().unwrap())
    }

    fn tip(&self, side: usize) -> usize {
        usize::from(*self.arms[side].last().unwrap())
    }

    /// Branch 0 (root to the first tip) and branch 1 (sub-base to the
    /// second tip).
    fn branch_joints(&self) -> [Vec<u16>; 2] {
        let mut b0 = self.trunk.clone();
        b0.extend(&self.arms[0]);
        let mut b1 = vec![*self.trunk.last().unwrap()];
        b1.extend(&self.arms[1]);
        [b0, b1]
    }

    /// The reach of arm `side` past its shoulder and of the whole path from
    /// the root, the effector `offset` from the tip included.
    fn reaches(&self, side: usize, offset: Vec3) -> (f32, f32) {
        let len = |joints: &[u16]| -> f32 {
            joints
                .iter()
                .skip(1)
                .map(|&j| self.defs[usize::from(j)].1.length())
                .sum()
        };
        let arm = len(&self.arms[side]) + offset.length();
        let shoulder = self.defs[usize::from(self.arms[side][0])].1.length();
        (arm, len(&self.trunk) + shoulder + arm)
    }

    /// The tree's joints in tree order.
    fn tree_joints(&self) -> Vec<u16> {
        let [b0, b1] = self.branch_joints();
        b0.into_iter().chain(b1.into_iter().skip(1)).collect()
    }
}

fn bones(n: std::ops::RangeInclusive<usize>) -> impl Strategy<Value = Vec<Bone>> {
    prop::collection::vec((0.5f32..1.5, small_rotation(0.6)), n)
}

/// A random Y tree: `trunk` bones from the root to the sub-base, each arm
/// a shoulder at a random offset (0 to 0.6) from the sub-base and `arms`
/// bones from it; bones 0.5 to 1.5 long, rest bends up to 0.6 rad, the
/// root turned anyhow.
fn y_tree(
    trunk: std::ops::RangeInclusive<usize>,
    arms: std::ops::RangeInclusive<usize>,
) -> impl Strategy<Value = YTree> {
    (
        bones(trunk),
        [unit_axis(), unit_axis()],
        [0.0f32..0.6, 0.0f32..0.6],
        bones(arms.clone()),
        bones(arms),
        small_rotation(PI),
    )
        .prop_map(|(trunk, dirs, lens, a, b, root)| {
            YTree::build(
                &trunk,
                [dirs[0] * lens[0], dirs[1] * lens[1]],
                [&a, &b],
                root,
            )
        })
}

/// The effector positions of `y` in the pose whose tree joints turn by
/// `turns` from their rest rotations, each effector `offsets` in its tip's
/// frame; `None` when an effector there is beyond 90 % of its arm's reach
/// from its shoulder or of its path's reach from the root. Near full
/// extension FABRIK converges slowly, for a tree as for a chain (the chain
/// properties in ik_chain.rs keep to 90 % of the reach too): a target that
/// needs a branch all but straight can take thousands of iterations.
fn goal_targets(y: &YTree, turns: &[Quat], offsets: [Vec3; 2]) -> Option<[Vec3; 2]> {
    let joints = y.tree_joints();
    let rest = to_transforms(y.skeleton().view().rest_pose(), y.defs.len());
    let rotations: Vec<Quat> = joints
        .iter()
        .zip(turns)
        .map(|(&j, &q)| rest[usize::from(j)].rotation * q)
        .collect();
    let goal = Rig::posed(y.skeleton(), &joints, &rotations);
    let targets = [0, 1].map(|k| goal.models[y.tip(k)].transform_point(offsets[k]));
    let root = goal.position(usize::from(y.trunk[0]));
    for (k, &t) in targets.iter().enumerate() {
        let (arm, path) = y.reaches(k, offsets[k]);
        let shoulder = goal.position(usize::from(y.arms[k][0]));
        if (t - shoulder).length() > 0.9 * arm || (t - root).length() > 0.9 * path {
            return None;
        }
    }
    Some(targets)
}

// ---------------------------------------------------------------------------
// Validity: every bad input gives its error and leaves the pose untouched
// ---------------------------------------------------------------------------

fn expect_error(rig: &mut Rig, job: &TreeJob<'_>, want: Error) {
    let local: Vec<u8> = bytemuck::cast_slice(&rig.local).to_vec();
    let models: Vec<u8> = bytemuck::cast_slice(&rig.models).to_vec();
    assert_eq!(rig.tree(job), Err(want), "{job:?}");
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

/// The planar Y of the hand-computed cases: root at the origin, a chest
/// two units up (joint 1), shoulders half a unit to either side of it
/// (joints 2 and 4), each with a unit arm to its tip (joints 3 and 5).
fn planar_y() -> OwnedSkeleton {
    skeleton(&[
        (None, Vec3::ZERO, Quat::IDENTITY),
        (Some(0), v2(0.0, 2.0), Quat::IDENTITY),
        (Some(1), v2(-0.5, 0.0), Quat::IDENTITY),
        (Some(2), v2(-1.0, 0.0), Quat::IDENTITY),
        (Some(1), v2(0.5, 0.0), Quat::IDENTITY),
        (Some(4), v2(1.0, 0.0), Quat::IDENTITY),
    ])
}

const LEFT: [u16; 4] = [0, 1, 2, 3];
const RIGHT: [u16; 3] = [1, 4, 5];

#[test]
fn rejects_bad_jobs_without_writing() {
    let mut rig = Rig::new(planar_y());
    let t = v2(1.0, 2.5);
    let ok = [Branch::new(&LEFT, t), Branch::new(&RIGHT, t)];
    rig.tree(&TreeJob::new(&ok)).unwrap();
    let mut rig = Rig::new(planar_y());
    let invalid = |what| Error::InvalidParameter { what };

    expect_error(
        &mut rig,
        &TreeJob::new(&[]),
        invalid("IK tree: the tree has no branches"),
    );
    let nine = [Branch::new(&LEFT, t); MAX_BRANCHES + 1];
    expect_error(
        &mut rig,
        &TreeJob::new(&nine),
        Error::CapacityExceeded {
            capacity: MAX_BRANCHES,
        },
    );
    expect_error(
        &mut rig,
        &TreeJob::new(&[Branch::new(&LEFT, t), Branch::new(&[], t)]),
        invalid("IK tree: a branch has no joints"),
    );
    expect_error(
        &mut rig,
        &TreeJob::new(&[
            Branch::new(&LEFT, t),
            Branch::new(&RIGHT, v2(f32::NAN, 0.0)),
        ]),
        Error::NonFinite { what: "IK target" },
    );
    expect_error(
        &mut rig,
        &TreeJob::new(&[
            Branch::new(&LEFT, t).with_offset(Vec3::new(0.0, f32::INFINITY, 0.0)),
            Branch::new(&RIGHT, t),
        ]),
        Error::NonFinite {
            what: "IK effector offset",
        },
    );
    for w in [-1.0, f32::NAN, f32::INFINITY] {
        expect_error(
            &mut rig,
            &TreeJob::new(&[Branch::new(&LEFT, t), Branch::new(&RIGHT, t).with_weight(w)]),
            invalid("IK tree: a branch weight must be finite and >= 0"),
        );
    }
    for tol in [-1e-3, f32::NAN, f32::INFINITY] {
        expect_error(
            &mut rig,
            &TreeJob::new(&ok).with_iterations(8, tol),
            invalid("IK tolerance must be finite and >= 0"),
        );
    }
    let limits = [JointLimit::None; 5];
    expect_error(
        &mut rig,
        &TreeJob::new(&ok).with_limits(&limits),
        Error::BadLength {
            buffer: "joint limits",
            expected: 6,
            actual: 5,
        },
    );
    expect_error(
        &mut rig,
        &TreeJob::new(&[Branch::new(&LEFT, t), Branch::new(&[1, 4, 99], t)]),
        Error::JointOutOfRange {
            joint: 99,
            count: 6,
        },
    );
    let not_parent = invalid("IK chain: each joint must be the parent of the next");
    for bad in [&[0u16, 2, 3][..], &[3, 2], &[0, 1, 4, 3]] {
        expect_error(&mut rig, &TreeJob::new(&[Branch::new(bad, t)]), not_parent);
    }
    expect_error(
        &mut rig,
        &TreeJob::new(&[Branch::new(&LEFT, t), Branch::new(&[2, 4], t)]),
        not_parent,
    );
    // The right arm's sub-base (joint 1) is on no earlier branch: not on
    // the first one (which starts at the shoulder), nor before its own.
    let off_tree = invalid("IK tree: a branch must start at a joint of an earlier branch");
    expect_error(
        &mut rig,
        &TreeJob::new(&[Branch::new(&[2, 3], t), Branch::new(&RIGHT, t)]),
        off_tree,
    );
    expect_error(
        &mut rig,
        &TreeJob::new(&[
            Branch::new(&[0, 1], t),
            Branch::new(&[4, 5], t),
            Branch::new(&[1, 4], t),
        ]),
        off_tree,
    );
    expect_error(
        &mut rig,
        &TreeJob::new(&[Branch::new(&LEFT, t), Branch::new(&[1, 2, 3], t)]),
        invalid("IK tree: a joint is on two branches"),
    );

    // Zero-length bones and offsets throughout.
    let mut flat = Rig::new(skeleton(&[
        (None, Vec3::ZERO, Quat::IDENTITY),
        (Some(0), Vec3::ZERO, Quat::IDENTITY),
        (Some(0), Vec3::ZERO, Quat::IDENTITY),
    ]));
    let (a, b) = ([0u16, 1], [0u16, 2]);
    expect_error(
        &mut flat,
        &TreeJob::new(&[Branch::new(&a, t), Branch::new(&b, t)]),
        invalid("IK tree: the bones and the effector offsets have zero total length"),
    );
    // An offset gives the same tree a lever: then it solves.
    let lever = [Branch::new(&a, t), Branch::new(&b, t).with_offset(Vec3::X)];
    assert!(flat
        .tree(&TreeJob::new(&lever))
        .unwrap()
        .max_distance()
        .is_finite());

    // A NaN in the matrices along the tree.
    let mut nan = Rig::new(planar_y());
    nan.models[4].cols[3][0] = f32::NAN;
    expect_error(
        &mut nan,
        &TreeJob::new(&ok),
        Error::NonFinite {
            what: "IK tree pose",
        },
    );
}

/// The capacities: MAX_BRANCHES branches and MAX_CHAIN joints solve, one
/// more of either is refused.
#[test]
fn capacities_are_exact() {
    // A root with MAX_BRANCHES arms of 3 joints (the last arm one shorter
    // on the first branch's root): 1 + 8 · 3 = 25 joints, then a tail.
    let mut defs: Vec<Def> = vec![(None, Vec3::ZERO, Quat::IDENTITY)];
    let mut arms = vec![];
    for k in 0..MAX_BRANCHES {
        let dir = Quat::from_rotation_z(k as f32).rotate(Vec3::X);
        let mut arm = vec![0u16];
        let mut parent = 0;
        for i in 0..3 {
            defs.push((
                Some(parent),
                if i == 0 { dir * 0.3 } else { v2(0.4, 0.0) },
                Quat::IDENTITY,
            ));
            parent = defs.len() - 1;
            arm.push(parent as u16);
        }
        arms.push(arm);
    }
    let rig0 = Rig::new(skeleton(&defs));
    let branches: Vec<Branch<'_>> = arms
        .iter()
        .map(|a| Branch::new(a, rig0.position(usize::from(a[3])) + v2(0.0, 0.1)))
        .collect();
    let mut rig = Rig::new(skeleton(&defs));
    let r = rig.tree(&TreeJob::new(&branches)).unwrap();
    assert_eq!(r.effectors, MAX_BRANCHES);
    assert_eq!(r.distances().len(), MAX_BRANCHES);

    let mut nine = branches.clone();
    nine.push(branches[0]);
    expect_error(
        &mut rig,
        &TreeJob::new(&nine),
        Error::CapacityExceeded {
            capacity: MAX_BRANCHES,
        },
    );

    // One chain of MAX_CHAIN joints and a second branch off it: the
    // second branch's joints are one too many.
    let mut defs: Vec<Def> = vec![(None, Vec3::ZERO, Quat::IDENTITY)];
    for i in 1..MAX_CHAIN {
        defs.push((Some(i - 1), v2(0.1, 0.0), Quat::IDENTITY));
    }
    defs.push((Some(3), Vec3::new(0.0, 0.1, 0.0), Quat::IDENTITY));
    let chain: Vec<u16> = (0..MAX_CHAIN as u16).collect();
    let extra = [3u16, MAX_CHAIN as u16];
    let mut rig = Rig::new(skeleton(&defs));
    let t = v2(1.0, 1.0);
    rig.tree(&TreeJob::new(&[
        Branch::new(&chain, t),
        Branch::new(&extra[..1], t),
    ]))
    .unwrap();
    expect_error(
        &mut rig,
        &TreeJob::new(&[Branch::new(&chain, t), Branch::new(&extra, t)]),
        Error::CapacityExceeded {
            capacity: MAX_CHAIN,
        },
    );
}

// ---------------------------------------------------------------------------
// Planar Y trees worked out by hand (angles about +Z, radians)
// ---------------------------------------------------------------------------

/// The planar Y, targets (−1.1, 2.8) and (1.1, 2.8). Each shoulder is
/// already one arm's length from its target (the right one at (0.5, 2):
/// (1.1, 2.8) − (0.5, 2) = (0.6, 0.8)), so the backward pass leaves the
/// shoulders, the chest and the trunk where they are; the forward pass
/// turns each arm by the shortest arc onto its target, from (∓1, 0) to
/// (∓0.6, 0.8): ∓atan2(0.8, 0.6) = ∓0.927295. Both targets are met after
/// one iteration, nothing else turns.
#[test]
fn y_tree_whose_shoulders_are_in_place_turns_only_the_arms() {
    let mut rig = Rig::new(planar_y());
    let targets = [v2(-1.1, 2.8), v2(1.1, 2.8)];
    let branches = [
        Branch::new(&LEFT, targets[0]),
        Branch::new(&RIGHT, targets[1]),
    ];
    let r = rig.tree(&TreeJob::new(&branches)).unwrap();
    assert_eq!(r.iterations, 1);
    assert!(r.reached && r.max_distance() < 1e-5, "{r:?}");
    for (j, want) in [(0, 0.0), (1, 0.0), (2, -0.927295), (4, 0.927295)] {
        assert_near(angle_z(rig.rotation(j)), want, 1e-5, "joint angle");
    }
    assert!(vec_close(rig.position(3), targets[0], 1e-5));
    assert!(vec_close(rig.position(5), targets[1], 1e-5));
    rig.assert_models_consistent();
}

/// The planar Y and the targets of the pose in which the trunk leans by
/// α = 0.3, the chest turns back by β = −0.3 (so its shoulders are level
/// again), the left arm points up-left at (−0.6, 0.8) and the right one
/// stays level: chest (−2 sin 0.3, 2 cos 0.3) = (−0.591040, 1.910673),
/// shoulders ∓0.5 along X from it, tips (−1.691040, 2.710673) and
/// (0.908960, 1.910673). Neither arm reaches its target unless the chest
/// moves. For this tree the tips fix (α, β) up to two solutions, this one
/// and one near (0.21, −0.95); the solver finds the one next to the rest
/// pose, and both targets to 1e-3.
#[test]
fn y_tree_leans_its_chest_to_reach_both_targets() {
    let mut rig = Rig::new(planar_y());
    let targets = [v2(-1.69104, 2.710673), v2(0.908960, 1.910673)];
    let branches = [
        Branch::new(&LEFT, targets[0]),
        Branch::new(&RIGHT, targets[1]),
    ];
    let r = rig
        .tree(&TreeJob::new(&branches).with_iterations(64, 1e-3))
        .unwrap();
    assert!(r.reached, "{r:?}");
    assert!(r.distances().iter().all(|&d| d <= 1e-3 + 1e-6), "{r:?}");
    // The chest, its shoulders and the arms as in the pose the targets
    // came from (to what the tolerance on the tips leaves free).
    assert!(
        vec_close(rig.position(1), v2(-0.591040, 1.910673), 1e-2),
        "{:?}",
        rig.position(1)
    );
    assert_near(angle_z(rig.rotation(0)), 0.3, 1e-2, "trunk");
    assert_near(angle_z(rig.rotation(1)), -0.3, 1e-2, "chest");
    assert_near(angle_z(rig.rotation(2)), -0.927295, 1e-2, "left arm");
    assert_near(angle_z(rig.rotation(4)), 0.0, 1e-2, "right arm");
    for j in 0..6 {
        assert!(rig.position(j).z.abs() < 1e-5, "joint {j} left the plane");
    }
    rig.assert_models_consistent();
}

// ---------------------------------------------------------------------------
// Weights and conflicting targets
// ---------------------------------------------------------------------------

/// Targets ten units out to either side of the planar Y, at the chest's
/// height: no pose meets both. With equal weights the tree stays
/// symmetric: the chest on the trunk's line, between the targets, the arms
/// stretched towards them. With the left branch three times as heavy the
/// chest leans left, still between them. Nothing is NaN.
#[test]
fn conflicting_targets_give_a_finite_compromise_between_them() {
    let targets = [v2(-10.0, 2.0), v2(10.0, 2.0)];
    for (weights, lean) in [([1.0, 1.0], 0.0), ([3.0, 1.0], -1.0)] {
        let mut rig = Rig::new(planar_y());
        let branches = [
            Branch::new(&LEFT, targets[0]).with_weight(weights[0]),
            Branch::new(&RIGHT, targets[1]).with_weight(weights[1]),
        ];
        let r = rig
            .tree(&TreeJob::new(&branches).with_iterations(100, 1e-3))
            .unwrap();
        assert!(!r.reached);
        assert!(r.distances().iter().all(|d| d.is_finite()));
        assert!(rig.models.iter().all(|m| m.is_finite()));
        assert!(rig.transforms().iter().all(|t| t.is_finite()));
        let chest = rig.position(1);
        assert!(chest.x > -10.0 && chest.x < 10.0, "{chest:?}");
        if lean == 0.0 {
            assert!(chest.x.abs() < 1e-3, "{chest:?}");
            assert!(vec_close(rig.position(3), v2(-1.5, 2.0), 1e-3));
            assert!(vec_close(rig.position(5), v2(1.5, 2.0), 1e-3));
        } else {
            assert!(chest.x < -0.1, "{chest:?}");
        }
        rig.assert_models_consistent();
    }
}

/// A branch of weight 0 does not pull the chest: the left target (where
/// the left tip of the leaning pose above goes) is reached whatever the
/// right target asks, here a point far out of reach; the right arm
/// stretches towards it from where the chest ends.
#[test]
fn a_branch_of_weight_zero_reaches_with_its_own_joints_only() {
    let left = v2(-1.69104, 2.710673);
    let far = Vec3::new(20.0, -5.0, 3.0);
    let mut rig = Rig::new(planar_y());
    let branches = [
        Branch::new(&LEFT, left),
        Branch::new(&RIGHT, far).with_weight(0.0),
    ];
    let r = rig
        .tree(&TreeJob::new(&branches).with_iterations(64, 1e-3))
        .unwrap();
    assert!(r.distance[0] <= 1e-3 + 1e-6, "{r:?}");
    let shoulder = rig.position(4);
    let along = (rig.position(5) - shoulder).try_normalize().unwrap();
    let want = (far - shoulder).try_normalize().unwrap();
    assert!(along.dot(want) > 1.0 - 1e-4, "{along:?} vs {want:?}");
}

// ---------------------------------------------------------------------------
// One branch is a chain: the same answer as fabrik::solve
// ---------------------------------------------------------------------------

/// A random 3D chain: `bones` bones of length 0.5..1.5 (along X in their
/// parent), small random rest bends, and the tip joint.
fn random_chain(bones: std::ops::RangeInclusive<usize>) -> impl Strategy<Value = Vec<Def>> {
    bones
        .prop_flat_map(|n| prop::collection::vec((0.5f32..1.5, small_rotation(0.6)), n + 1))
        .prop_map(|v| {
            let n = v.len();
            (0..n)
                .map(|i| {
                    let t = if i == 0 {
                        Vec3::ZERO
                    } else {
                        v2(v[i - 1].0, 0.0)
                    };
                    let q = if i + 1 == n { Quat::IDENTITY } else { v[i].1 };
                    (i.checked_sub(1), t, q)
                })
                .collect()
        })
}

fn assert_same_as_chain(defs: &[Def], chain: &[u16], job: &ChainJob<'_>, what: &str) {
    let mut a = Rig::new(skeleton(defs));
    let mut b = Rig::new(skeleton(defs));
    let want = a.chain(job).unwrap();
    let branch = [Branch::new(chain, job.target).with_offset(job.offset)];
    let tree_job = TreeJob::new(&branch)
        .with_limits(job.limits)
        .with_iterations(job.max_iterations, job.tolerance);
    let got = b.tree(&tree_job).unwrap();
    assert_eq!(
        got.iterations, want.iterations,
        "{what}: {got:?} vs {want:?}"
    );
    assert_eq!(got.reached, want.reached, "{what}");
    assert_eq!(got.effectors, 1);
    assert_near(got.distance[0], want.distance, 1e-5, what);
    for (j, (x, y)) in a.transforms().iter().zip(&b.transforms()).enumerate() {
        assert!(
            transform_close(x, y, 1e-5),
            "{what}: joint {j}: {x:?} vs {y:?}"
        );
    }
    for (j, (x, y)) in a.models.iter().zip(&b.models).enumerate() {
        assert!(mat_close(x, y, 1e-5), "{what}: joint {j}");
    }
}

/// The chain cases worked out by hand in ik_chain.rs, a target beyond the
/// reach, and straight chains stuck on the line to their target (which
/// both solvers bend out of the same way).
#[test]
fn one_branch_gives_the_chain_solution_on_worked_cases() {
    let straight = |lengths: &[f32]| -> Vec<Def> {
        let mut d = vec![(None, Vec3::ZERO, Quat::IDENTITY)];
        d.extend(
            lengths
                .iter()
                .enumerate()
                .map(|(i, &l)| (Some(i), v2(l, 0.0), Quat::IDENTITY)),
        );
        d
    };
    let three = straight(&[1.0, 1.0, 1.0]);
    let chain = [0u16, 1, 2, 3];
    for (target, iterations) in [
        (v2(1.0, 1.5), 1),
        (v2(1.0, 1.5), 2),
        (v2(0.0, 8.0), 200),
        (v2(1.5, 0.0), 64),
        (v2(-0.5, 0.0), 64),
        (v2(3.0, 0.0), 64),
    ] {
        let job = ChainJob::new(&chain, target).with_iterations(iterations, 1e-4);
        assert_same_as_chain(&three, &chain, &job, &format!("{target:?} x{iterations}"));
    }
    let limits = [JointLimit::Hinge(Hinge::new(Quat::IDENTITY, Vec3::Z, -0.5, 0.5).unwrap()); 4];
    let job = ChainJob::new(&chain, v2(0.5, 2.0))
        .with_limits(&limits)
        .with_offset(v2(0.2, 0.1))
        .with_iterations(30, 1e-4);
    assert_same_as_chain(&three, &chain, &job, "hinges and an offset");
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
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A tree of one branch is solved as `fabrik::solve` solves the chain:
    /// the same iterations, rotations and matrices (to 1e-5), for random
    /// chains, targets near and far, offsets and limits.
    #[test]
    fn one_branch_gives_the_chain_solution(
        defs in random_chain(1..=6),
        target in vec3_in(-7.0, 7.0),
        offset in prop_oneof![Just(Vec3::ZERO), vec3_in(-0.5, 0.5)],
        limits in prop::collection::vec(limit(), 7),
        limited in any::<bool>(),
        iterations in 0u32..40,
    ) {
        let chain: Vec<u16> = (0..defs.len() as u16).collect();
        let limits = if limited { &limits[..chain.len()] } else { &[][..] };
        let job = ChainJob::new(&chain, target)
            .with_offset(offset)
            .with_limits(limits)
            .with_iterations(iterations, 1e-3);
        assert_same_as_chain(&defs, &chain, &job, "random chain");
    }
}

// ---------------------------------------------------------------------------
// Random Y trees (properties)
// ---------------------------------------------------------------------------

/// Iterations the convergence property allows: over 56 000 such random
/// trees none needed more than about 60 (half need 3 or 4, 99 % at most
/// 15).
const Y_ITERATIONS: u32 = 200;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Y trees (one to three bones from the root to the sub-base and in
    /// each arm past its shoulder) and targets that a random pose of the
    /// same tree meets (each joint turned up to 1 rad from rest, effectors
    /// at random offsets from the tips, none beyond 90 % of its reach; see
    /// `goal_targets`): every effector within 1e-3 of its target within
    /// `Y_ITERATIONS` iterations, the report's distances those of the
    /// matrices, the matrices FK of the written local pose, and the joints
    /// outside the tree untouched.
    #[test]
    fn y_trees_reach_targets_a_pose_of_theirs_meets(
        y in y_tree(1..=3, 1..=3),
        turns in prop::collection::vec(small_rotation(1.0), 12),
        offsets in [vec3_in(-0.3, 0.3), vec3_in(-0.3, 0.3)],
    ) {
        let Some(targets) = goal_targets(&y, &turns, offsets) else {
            return Err(TestCaseError::reject("an effector near full extension"));
        };
        let [b0, b1] = y.branch_joints();
        let branches = [
            Branch::new(&b0, targets[0]).with_offset(offsets[0]),
            Branch::new(&b1, targets[1]).with_offset(offsets[1]),
        ];
        let mut rig = Rig::new(y.skeleton());
        let before = rig.transforms();
        let world = rig.models[0];
        let r = rig
            .tree(&TreeJob::new(&branches).with_iterations(Y_ITERATIONS, 1e-3))
            .unwrap();
        prop_assert!(r.reached, "{:?}", r);
        for k in 0..2 {
            let d = (rig.models[y.tip(k)].transform_point(offsets[k]) - targets[k]).length();
            prop_assert!(d <= 1e-3 + 1e-5 && (d - r.distance[k]).abs() <= 1e-5, "{} vs {:?}", d, r);
        }
        rig.assert_models_consistent();
        let after = rig.transforms();
        for &j in &y.outside {
            prop_assert_eq!(before[usize::from(j)], after[usize::from(j)]);
        }
        prop_assert_eq!(rig.models[0], world);
    }

    /// Any Y tree (one to three bones each), random limits on every tree
    /// joint and random targets, reachable or not: every limited joint
    /// ends within its limit, everything finite, the matrices FK of the
    /// written pose.
    #[test]
    fn y_trees_never_violate_the_limits(
        y in y_tree(1..=3, 1..=3),
        limits in prop::collection::vec(limit(), 12),
        targets in [vec3_in(-6.0, 6.0), vec3_in(-6.0, 6.0)],
        weights in [0.0f32..2.0, 0.0f32..2.0],
    ) {
        let [b0, b1] = y.branch_joints();
        let joints = y.tree_joints();
        let limits = &limits[..joints.len()];
        let branches = [
            Branch::new(&b0, targets[0]).with_weight(weights[0]),
            Branch::new(&b1, targets[1]).with_weight(weights[1]),
        ];
        let mut rig = Rig::new(y.skeleton());
        let r = rig
            .tree(&TreeJob::new(&branches).with_limits(limits).with_iterations(20, 1e-3))
            .unwrap();
        prop_assert!(r.distances().iter().all(|d| d.is_finite()), "{:?}", r);
        for (&j, l) in joints.iter().zip(limits) {
            let q = rig.rotation(usize::from(j));
            prop_assert!(l.contains(q, 2e-3), "joint {} {:?} outside {:?}", j, q, l);
        }
        rig.assert_models_consistent();
    }

    /// Targets on opposite sides of the root, each three times the tree's
    /// whole length away: no pose meets both. The result is finite and the
    /// sub-base ends between the targets (its projection on the segment
    /// joining them inside it).
    #[test]
    fn y_trees_with_conflicting_targets_stay_finite(
        y in y_tree(1..=3, 1..=3),
        dir in unit_axis(),
        weights in [0.0f32..2.0, 0.0f32..2.0],
    ) {
        let rig0 = Rig::new(y.skeleton());
        let root = rig0.position(usize::from(y.trunk[0]));
        let length: f32 = y.defs.iter().skip(2).map(|d| d.1.length()).sum();
        let targets = [root + dir * (3.0 * length), root - dir * (3.0 * length)];
        let [b0, b1] = y.branch_joints();
        let branches = [
            Branch::new(&b0, targets[0]).with_weight(weights[0]),
            Branch::new(&b1, targets[1]).with_weight(weights[1]),
        ];
        let mut rig = Rig::new(y.skeleton());
        let r = rig.tree(&TreeJob::new(&branches).with_iterations(50, 1e-3)).unwrap();
        prop_assert!(!r.reached);
        prop_assert!(r.distances().iter().all(|d| d.is_finite()), "{:?}", r);
        prop_assert!(rig.models.iter().all(|m| m.is_finite()));
        let sub = rig.position(y.sub_base());
        let span = targets[1] - targets[0];
        let t = (sub - targets[0]).dot(span) / span.dot(span);
        prop_assert!(t > 0.0 && t < 1.0, "{}", t);
        rig.assert_models_consistent();
    }
}

// ---------------------------------------------------------------------------
// The humanoid
// ---------------------------------------------------------------------------

/// The procedural humanoid's spine (spine_01 to spine_03) and both arms
/// (clavicle to hand), the hands' targets from FK of a pose that bends the
/// spine and both arms: both hands reach them; no joint outside the tree is
/// written.
#[test]
fn humanoid_spine_and_arms_reach_two_hand_targets() {
    let skel = OwnedSkeleton::build(&procedural::humanoid_joints()).unwrap();
    let v = skel.view();
    let find = |name: &str| v.find_joint(name).unwrap();
    let mut buf = [0u16; MAX_CHAIN];
    let left = sinew_core::ik::chain(&v, find("spine_01"), find("hand_l"), &mut buf)
        .unwrap()
        .to_vec();
    let right = sinew_core::ik::chain(&v, find("spine_03"), find("hand_r"), &mut buf)
        .unwrap()
        .to_vec();
    let joints: Vec<u16> = left.iter().chain(&right[1..]).copied().collect();
    let rest = to_transforms(v.rest_pose(), v.joint_count());
    let turns: Vec<Quat> = joints
        .iter()
        .enumerate()
        .map(|(i, &j)| {
            let axis = [Vec3::X, Vec3::Y, Vec3::Z][i % 3];
            rest[usize::from(j)].rotation * Quat::from_axis_angle(axis, 0.25)
        })
        .collect();
    let goal = Rig::posed(skel.clone(), &joints, &turns);
    let targets = [goal.position(find("hand_l")), goal.position(find("hand_r"))];
    let branches = [
        Branch::new(&left, targets[0]),
        Branch::new(&right, targets[1]),
    ];
    let mut rig = Rig::new(skel.clone());
    let before = rig.transforms();
    let r = rig
        .tree(&TreeJob::new(&branches).with_iterations(64, 1e-3))
        .unwrap();
    assert!(r.reached, "{r:?}");
    rig.assert_models_consistent();
    let after = rig.transforms();
    for j in 0..v.joint_count() {
        if !joints.contains(&(j as u16)) {
            assert_eq!(before[j], after[j], "joint {j} written");
        }
    }
}

/// A hand with five fingertips: the forearm and hand, then each finger
/// from the hand (thumb_01..03, index_00..03, ...), fingertip targets from
/// FK of a curled pose: all five reached.
#[test]
fn humanoid_hand_reaches_five_fingertip_targets() {
    let skel = OwnedSkeleton::build(&procedural::humanoid_joints()).unwrap();
    let v = skel.view();
    let find = |name: &str| v.find_joint(name).unwrap();
    let hand = find("hand_l");
    let mut buf = [0u16; MAX_CHAIN];
    let mut branches_joints: Vec<Vec<u16>> = vec![];
    for (k, tip) in [
        "index_03_l",
        "thumb_03_l",
        "middle_03_l",
        "ring_03_l",
        "pinky_03_l",
    ]
    .iter()
    .enumerate()
    {
        let start = if k == 0 { find("lower_arm_l") } else { hand };
        branches_joints.push(
            sinew_core::ik::chain(&v, start, find(tip), &mut buf)
                .unwrap()
                .to_vec(),
        );
    }
    let joints: Vec<u16> = branches_joints
        .iter()
        .enumerate()
        .flat_map(|(k, b)| {
            b.iter()
                .skip(usize::from(k > 0))
                .copied()
                .collect::<Vec<_>>()
        })
        .collect();
    let rest = to_transforms(v.rest_pose(), v.joint_count());
    let curl: Vec<Quat> = joints
        .iter()
        .map(|&j| rest[usize::from(j)].rotation * Quat::from_axis_angle(Vec3::Z, -0.3))
        .collect();
    let goal = Rig::posed(skel.clone(), &joints, &curl);
    let tips: Vec<Vec3> = branches_joints
        .iter()
        .map(|b| goal.position(usize::from(*b.last().unwrap())))
        .collect();
    let branches: Vec<Branch<'_>> = branches_joints
        .iter()
        .zip(&tips)
        .map(|(b, &t)| Branch::new(b, t))
        .collect();
    let mut rig = Rig::new(skel.clone());
    let r = rig
        .tree(&TreeJob::new(&branches).with_iterations(64, 1e-3))
        .unwrap();
    assert_eq!(r.effectors, 5);
    assert!(r.reached, "{r:?}");
    rig.assert_models_consistent();
}
