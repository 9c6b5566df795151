//! Two-bone IK: validity (every bad input gives its error and leaves the
//! pose untouched), closed-form answers (a hand-computed case, reachable,
//! boundary, unreachable and too-close targets, the pole plane), weight,
//! soften and twist, and the 4- and 8-lane kernels and the batch against
//! the scalar reference.

#[path = "../support/mod.rs"]
mod support;

use proptest::prelude::*;
use sinew_core::fk::{local_to_model, FkJob};
use sinew_core::ik::two_bone::{
    self, solve_lanes4, solve_lanes8, solve_many, Limb, TwoBoneGoal, TwoBoneIk, TwoBoneLanes,
    TwoBoneLanesOut, TwoBoneReport, REACH_TOLERANCE,
};
use sinew_core::ik::IkPose;
use sinew_core::skeleton::JointDef;
use sinew_core::{Error, Mat4, Quat, SoaTransform, Transform, Vec3};
use sinew_std::OwnedSkeleton;
use support::*;

const ROOT: usize = 0;
const HIP: usize = 1;
const KNEE: usize = 2;
const ANKLE: usize = 3;
const TOE: usize = 4;
const L1: f32 = 0.5;
const L2: f32 = 0.4;
const HIP_POS: Vec3 = Vec3::new(0.0, 1.0, 0.0);

/// root → hip (1 m up) → knee (0.5 m below) → ankle (0.4 m below) → toe,
/// plus a second child of the root (a joint that is no leg's ancestor).
fn leg_skeleton(knee_offset: Vec3) -> OwnedSkeleton {
    let t = |x: Vec3| Transform::from_translation_rotation(x, Quat::IDENTITY);
    let defs = [
        JointDef {
            name: "root",
            parent: None,
            rest: t(Vec3::ZERO),
        },
        JointDef {
            name: "hip",
            parent: Some(ROOT),
            rest: t(HIP_POS),
        },
        JointDef {
            name: "knee",
            parent: Some(HIP),
            rest: t(knee_offset),
        },
        JointDef {
            name: "ankle",
            parent: Some(KNEE),
            rest: t(Vec3::new(0.0, -L2, 0.0)),
        },
        JointDef {
            name: "toe",
            parent: Some(ANKLE),
            rest: t(Vec3::new(0.0, -0.05, 0.1)),
        },
        JointDef {
            name: "other",
            parent: Some(ROOT),
            rest: t(Vec3::X),
        },
    ];
    OwnedSkeleton::build(&defs).unwrap()
}

/// A leg and its pose: the local pose (optionally with some rotations
/// applied) and its model matrices.
struct Leg {
    skel: OwnedSkeleton,
    local: Vec<SoaTransform>,
    models: Vec<Mat4>,
}

impl Leg {
    fn new() -> Leg {
        Leg::with(leg_skeleton(Vec3::new(0.0, -L1, 0.0)), &[])
    }

    /// The leg with local rotations `(joint, rotation)` set.
    fn with(skel: OwnedSkeleton, rotations: &[(usize, Quat)]) -> Leg {
        let view = skel.view();
        let mut local = view.rest_pose().to_vec();
        for &(j, q) in rotations {
            let mut t = sinew_core::soa::get_joint(&local, j).unwrap();
            t.rotation = q;
            sinew_core::soa::set_joint(&mut local, j, &t).unwrap();
        }
        let mut models = vec![Mat4::IDENTITY; view.joint_count()];
        local_to_model(&FkJob::new(&view, &local), &mut models).unwrap();
        Leg {
            skel,
            local,
            models,
        }
    }

    fn solve(&mut self, ik: &TwoBoneIk) -> Result<TwoBoneReport, Error> {
        let view = self.skel.view();
        let mut pose = IkPose::new(&view, &mut self.local, &mut self.models, None).unwrap();
        ik.solve(&mut pose)
    }

    fn pos(&self, j: usize) -> Vec3 {
        self.models[j].translation()
    }

    fn limb(&mut self) -> Limb {
        let view = self.skel.view();
        let pose = IkPose::new(&view, &mut self.local, &mut self.models, None).unwrap();
        Limb::from_pose(&pose, HIP, KNEE, ANKLE).unwrap()
    }

    /// The local pose and model matrices as bytes, to check "untouched".
    fn snapshot(&self) -> (Vec<u8>, Vec<u8>) {
        (
            bytemuck::cast_slice(&self.local).to_vec(),
            bytemuck::cast_slice(&self.models).to_vec(),
        )
    }
}

/// Runs `f` over IkPoses of `legs` (which all have the standard leg skeleton).
fn with_poses<R>(legs: &mut [Leg], f: impl FnOnce(&mut [IkPose<'_, '_>]) -> R) -> R {
    let skel = leg_skeleton(Vec3::new(0.0, -L1, 0.0));
    let view = skel.view();
    let mut poses: Vec<IkPose> = legs
        .iter_mut()
        .map(|l| IkPose::new(&view, &mut l.local, &mut l.models, None).unwrap())
        .collect();
    f(&mut poses)
}

fn leg_ik(goal: TwoBoneGoal) -> TwoBoneIk {
    TwoBoneIk::new(HIP, KNEE, ANKLE, goal)
}

fn bent_leg() -> Leg {
    Leg::with(
        leg_skeleton(Vec3::new(0.0, -L1, 0.0)),
        &[
            (HIP, Quat::from_rotation_x(-0.3)),
            (KNEE, Quat::from_rotation_x(0.6)),
        ],
    )
}

// ---------------------------------------------------------------------------
// Validity
// ---------------------------------------------------------------------------

fn expect_error(ik: TwoBoneIk, want: fn(&Error) -> bool) {
    let mut leg = bent_leg();
    let before = leg.snapshot();
    let got = leg.solve(&ik);
    assert!(
        matches!(&got, Err(e) if want(e)),
        "{ik:?}: unexpected {got:?}"
    );
    assert_eq!(leg.snapshot(), before, "{ik:?}: pose written on error");
}

#[test]
fn every_invalid_input_gives_its_error_and_leaves_the_pose_untouched() {
    let goal = TwoBoneGoal::new(Vec3::new(0.0, 0.3, 0.2));
    let oob = |e: &Error| matches!(e, Error::JointOutOfRange { .. });
    let param = |e: &Error| matches!(e, Error::InvalidParameter { .. });
    let non_finite = |e: &Error| matches!(e, Error::NonFinite { .. });
    // Joints out of range, each position.
    expect_error(TwoBoneIk::new(99, KNEE, ANKLE, goal), oob);
    expect_error(TwoBoneIk::new(HIP, 99, ANKLE, goal), oob);
    expect_error(TwoBoneIk::new(HIP, KNEE, 6, goal), oob);
    // Not a parent → child → child chain.
    expect_error(TwoBoneIk::new(ROOT, KNEE, ANKLE, goal), param);
    expect_error(TwoBoneIk::new(HIP, KNEE, TOE, goal), param);
    expect_error(TwoBoneIk::new(HIP, HIP, KNEE, goal), param);
    expect_error(TwoBoneIk::new(ANKLE, KNEE, HIP, goal), param);
    expect_error(TwoBoneIk::new(ROOT, HIP, 5, goal), param);
    // Non-finite target, pole, twist.
    for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        let mut g = goal;
        g.target.y = bad;
        expect_error(leg_ik(g), non_finite);
        expect_error(leg_ik(goal.with_pole(Vec3::new(0.0, bad, 1.0))), non_finite);
        expect_error(leg_ik(goal.with_twist(bad)), non_finite);
    }
    // Weight and soften outside [0, 1].
    for bad in [-0.01, 1.01, f32::NAN, f32::INFINITY, -f32::INFINITY] {
        expect_error(leg_ik(goal.with_weight(bad)), param);
        expect_error(leg_ik(goal.with_soften(bad)), param);
    }
    // Zero or non-finite mid axis.
    expect_error(leg_ik(goal.with_mid_axis(Vec3::ZERO)), param);
    expect_error(
        leg_ik(goal.with_mid_axis(Vec3::new(f32::NAN, 0.0, 0.0))),
        param,
    );
}

#[test]
fn zero_length_bones_are_rejected() {
    let ik = leg_ik(TwoBoneGoal::new(Vec3::new(0.0, 0.5, 0.0)));
    // A knee on the hip: the first bone has length zero.
    let mut leg = Leg::with(leg_skeleton(Vec3::ZERO), &[]);
    let before = leg.snapshot();
    let got = leg.solve(&ik);
    assert!(
        matches!(got, Err(Error::InvalidParameter { .. })),
        "{got:?}"
    );
    assert_eq!(leg.snapshot(), before);
    // The second bone, through the reference.
    let mut limb = Leg::new().limb();
    limb.end = limb.mid;
    assert!(matches!(
        two_bone::reference(&limb, &ik.goal),
        Err(Error::InvalidParameter { .. })
    ));
}

#[test]
fn the_reference_rejects_non_finite_limbs() {
    let mut leg = Leg::new();
    let limb = leg.limb();
    let goal = TwoBoneGoal::new(Vec3::new(0.0, 0.3, 0.2));
    let mut bad = [limb; 5];
    bad[0].start.x = f32::NAN;
    bad[1].mid.y = f32::INFINITY;
    bad[2].end.z = f32::NAN;
    bad[3].start_frame[0].x = f32::NAN;
    bad[4].mid_frame[2].y = f32::INFINITY;
    for l in bad {
        assert!(
            matches!(two_bone::reference(&l, &goal), Err(Error::NonFinite { .. })),
            "{l:?}"
        );
    }
}

#[test]
fn singular_frames_are_rejected() {
    let limb = Leg::new().limb();
    let goal = TwoBoneGoal::new(Vec3::new(0.0, 0.3, 0.2));
    let mut zero = limb;
    zero.start_frame = [Vec3::ZERO; 3];
    let mut flat = limb;
    flat.mid_frame[1] = flat.mid_frame[0] * -3.0;
    for l in [zero, flat] {
        assert!(matches!(
            two_bone::reference(&l, &goal),
            Err(Error::InvalidParameter { .. })
        ));
    }
    // Scaled frames are fine: only their rotation counts.
    let mut scaled = limb;
    scaled.start_frame = scaled.start_frame.map(|c| c * 2.5);
    scaled.mid_frame = scaled.mid_frame.map(|c| c * 0.1);
    let a = two_bone::reference(&limb, &goal).unwrap();
    let b = two_bone::reference(&scaled, &goal).unwrap();
    assert!(quat_close(a.start_correction, b.start_correction, 1e-6));
    assert!(quat_close(a.mid_correction, b.mid_correction, 1e-6));
}

#[test]
fn a_batch_with_one_bad_job_touches_no_pose() {
    let mut legs: Vec<Leg> = (0..11).map(|_| bent_leg()).collect();
    let before: Vec<_> = legs.iter().map(Leg::snapshot).collect();
    let mut iks = vec![leg_ik(TwoBoneGoal::new(Vec3::new(0.1, 0.3, 0.2))); 11];
    iks[9].goal.weight = 2.0;
    let mut reports = vec![TwoBoneReport::IDENTITY; 11];
    with_poses(&mut legs, |poses| {
        assert!(matches!(
            solve_many(poses, &iks, &mut reports),
            Err(Error::InvalidParameter { .. })
        ));
        assert!(matches!(
            solve_many(poses, &iks[..10], &mut reports),
            Err(Error::BadLength { .. })
        ));
        assert!(matches!(
            solve_many(poses, &iks, &mut reports[..3]),
            Err(Error::BadLength { .. })
        ));
    });
    for (l, b) in legs.iter().zip(before) {
        assert_eq!(l.snapshot(), b);
    }
}

// ---------------------------------------------------------------------------
// Closed-form answers
// ---------------------------------------------------------------------------

/// Straight leg, hip at y = 1, target 0.6 m straight below the hip.
/// Law of cosines by hand: at the hip cos A = (0.5² + 0.6² − 0.4²) /
/// (2 · 0.5 · 0.6) = 0.75, so the knee is at
/// hip + 0.5 · (0, −0.75, √(1 − 0.75²)) = (0, 0.625, 0.330719) (forward, the
/// pole's side); the thigh turns by −A about X: (sin(−A/2), 0, 0,
/// cos(A/2)) = (−0.353553, 0, 0, 0.935414). At the knee cos C = (0.5² +
/// 0.4² − 0.6²) / (2 · 0.5 · 0.4) = 0.125; from straight it folds by
/// π − C about −X, i.e. turns by +(π − C) about X, whose half-angle
/// sine and cosine are √((1 + 0.125)/2) = 0.75 and √((1 − 0.125)/2) =
/// 0.661438.
#[test]
fn hand_computed_planar_case() {
    let mut leg = Leg::new();
    let target = Vec3::new(0.0, 0.4, 0.0);
    let r = leg.solve(&leg_ik(TwoBoneGoal::new(target))).unwrap();
    assert!(r.reached);
    let tol = 1e-5;
    assert!(
        quat_close(
            r.start_correction,
            Quat::new(-0.353_553_4, 0.0, 0.0, 0.935_414_3),
            tol
        ),
        "{:?}",
        r.start_correction
    );
    assert!(
        quat_close(
            r.mid_correction,
            Quat::new(0.75, 0.0, 0.0, 0.661_437_8),
            tol
        ),
        "{:?}",
        r.mid_correction
    );
    assert!(vec_close(
        leg.pos(KNEE),
        Vec3::new(0.0, 0.625, 0.330_718_9),
        tol
    ));
    assert!(vec_close(leg.pos(ANKLE), target, tol));
    // The toe followed its ankle (the subtree was recomputed).
    let toe_offset = leg.models[ANKLE].transform_vector(Vec3::new(0.0, -0.05, 0.1));
    assert!(vec_close(leg.pos(TOE), target + toe_offset, tol));
}

/// The knee is a hinge about its local X axis: `knee` radians about it.
fn knee_hinge() -> impl Strategy<Value = Quat> {
    (-2.5f32..2.5).prop_map(Quat::from_rotation_x)
}

fn random_leg(hip: Quat, knee: Quat) -> Leg {
    Leg::with(
        leg_skeleton(Vec3::new(0.0, -L1, 0.0)),
        &[(HIP, hip), (KNEE, knee)],
    )
}

/// The knee's distance from the plane spanned by hip→target and the pole,
/// and its offset towards the pole's side (positive = that side).
fn plane_check(leg: &Leg, target: Vec3, pole: Vec3) -> (f32, f32) {
    let hip = leg.pos(HIP);
    let d = (target - hip).try_normalize().unwrap();
    let n = d.cross(pole).try_normalize().unwrap();
    let k = leg.pos(KNEE) - hip;
    let off_line = k - d * k.dot(d);
    (k.dot(n), off_line.dot(pole))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Any start pose, any reachable target: the ankle lands on it
    /// (within 1e-5 of the limb length), the knee in the pole plane on the
    /// pole's side.
    #[test]
    fn reachable_targets_are_reached_exactly_in_the_pole_plane(
        hip in unit_quat(),
        knee in knee_hinge(),
        dir in unit_axis(),
        frac in 0.15f32..0.999,
        pole in unit_axis(),
    ) {
        // Leave the pole a margin from start→target (the plane needs it).
        prop_assume!(dir.cross(pole).length() > 0.05);
        let dist = (L1 - L2) + frac * (2.0 * L2);
        let target = HIP_POS + dir * dist;
        let mut leg = random_leg(hip, knee);
        let r = leg.solve(&leg_ik(TwoBoneGoal::new(target).with_pole(pole))).unwrap();
        prop_assert!(r.reached);
        let err = (leg.pos(ANKLE) - target).length();
        prop_assert!(err <= REACH_TOLERANCE * (L1 + L2), "err {err}");
        // Bone lengths unchanged.
        prop_assert!(((leg.pos(KNEE) - leg.pos(HIP)).length() - L1).abs() < 1e-5);
        prop_assert!(((leg.pos(ANKLE) - leg.pos(KNEE)).length() - L2).abs() < 1e-5);
        let (out_of_plane, towards_pole) = plane_check(&leg, target, pole);
        prop_assert!(out_of_plane.abs() < 1e-4, "knee {out_of_plane} off the pole plane");
        prop_assert!(towards_pole > 0.0, "knee on the far side of the pole");
    }

    /// Out of reach: the leg is fully extended along hip→target.
    #[test]
    fn unreachable_targets_get_a_fully_extended_limb(
        hip in unit_quat(),
        knee in knee_hinge(),
        dir in unit_axis(),
        over in 1.001f32..5.0,
    ) {
        let target = HIP_POS + dir * ((L1 + L2) * over);
        let mut leg = random_leg(hip, knee);
        let r = leg.solve(&leg_ik(TwoBoneGoal::new(target))).unwrap();
        prop_assert!(!r.reached);
        let want_ankle = HIP_POS + dir * (L1 + L2);
        let want_knee = HIP_POS + dir * L1;
        prop_assert!((leg.pos(ANKLE) - want_ankle).length() < 1e-5 * (L1 + L2) * 2.0);
        prop_assert!((leg.pos(KNEE) - want_knee).length() < 2e-3, "knee off the line");
    }
}

#[test]
fn boundary_targets_are_reached_at_full_extension() {
    for (i, dir) in [
        Vec3::new(0.0, -1.0, 0.0),
        Vec3::new(0.6, -0.8, 0.0),
        Vec3::new(0.0, 0.0, 1.0),
        Vec3::new(-0.48, 0.6, 0.64),
    ]
    .into_iter()
    .enumerate()
    {
        let target = HIP_POS + dir * (L1 + L2);
        let mut leg = random_leg(
            Quat::from_rotation_z(0.3 * i as f32),
            Quat::from_rotation_x(0.8),
        );
        let r = leg.solve(&leg_ik(TwoBoneGoal::new(target))).unwrap();
        assert!(r.reached, "{dir:?}");
        assert!((leg.pos(ANKLE) - target).length() < REACH_TOLERANCE * (L1 + L2));
        // Straight: the knee on the hip→ankle line at L1.
        assert!((leg.pos(KNEE) - (HIP_POS + dir * L1)).length() < 2e-3);
    }
}

#[test]
fn targets_closer_than_the_bone_difference_fold_the_limb() {
    let target = HIP_POS + Vec3::new(0.0, -0.05, 0.0);
    let mut leg = bent_leg();
    let r = leg.solve(&leg_ik(TwoBoneGoal::new(target))).unwrap();
    assert!(!r.reached);
    let ankle = leg.pos(ANKLE);
    assert!(((ankle - HIP_POS).length() - (L1 - L2)).abs() < 1e-5);
    // Folded towards the target.
    assert!(vec_close(
        ankle,
        HIP_POS + Vec3::new(0.0, -(L1 - L2), 0.0),
        1e-5
    ));
    // A target exactly at |l1 − l2| is still reached.
    let target = HIP_POS + Vec3::new(0.0, 0.0, L1 - L2);
    let mut leg = bent_leg();
    assert!(
        leg.solve(&leg_ik(TwoBoneGoal::new(target)))
            .unwrap()
            .reached
    );
    assert!((leg.pos(ANKLE) - target).length() < 1e-5);
}

#[test]
fn the_pole_chooses_the_knee_side() {
    let target = Vec3::new(0.0, 0.35, 0.1);
    for pole in [Vec3::Z, -Vec3::Z, Vec3::X, Vec3::new(-1.0, 0.2, 0.3)] {
        let mut leg = bent_leg();
        leg.solve(&leg_ik(TwoBoneGoal::new(target).with_pole(pole)))
            .unwrap();
        let (off, side) = plane_check(&leg, target, pole);
        assert!(off.abs() < 1e-5 && side > 0.1, "{pole:?}: {off} {side}");
        assert!((leg.pos(ANKLE) - target).length() < 1e-5);
    }
    // A pole along hip→target keeps the plane the aim leaves.
    let mut leg = bent_leg();
    let r = leg
        .solve(&leg_ik(
            TwoBoneGoal::new(target).with_pole(target - HIP_POS),
        ))
        .unwrap();
    assert!(r.reached && (leg.pos(ANKLE) - target).length() < 1e-5);
    let mut leg = bent_leg();
    let r = leg
        .solve(&leg_ik(TwoBoneGoal::new(target).with_pole(Vec3::ZERO)))
        .unwrap();
    assert!(r.reached && (leg.pos(ANKLE) - target).length() < 1e-5);
}

#[test]
fn a_tilted_mid_axis_still_reaches_the_target() {
    // The knee hinge tilted 30° off the leg's normal: the law of cosines
    // would miss; the general hinge equation does not.
    let axis = Vec3::new(-1.0, 0.0, 0.0) * 0.866 + Vec3::new(0.0, 0.5, 0.0);
    let target = Vec3::new(0.1, 0.45, 0.2);
    let mut leg = bent_leg();
    let r = leg
        .solve(&leg_ik(TwoBoneGoal::new(target).with_mid_axis(axis)))
        .unwrap();
    assert!(r.reached);
    assert!((leg.pos(ANKLE) - target).length() < 1e-5);
}

// ---------------------------------------------------------------------------
// Weight, soften, twist
// ---------------------------------------------------------------------------

#[test]
fn weight_zero_leaves_the_pose_unchanged() {
    let mut leg = bent_leg();
    let before = leg.snapshot();
    let r = leg
        .solve(&leg_ik(
            TwoBoneGoal::new(Vec3::new(0.3, 0.4, 0.1)).with_weight(0.0),
        ))
        .unwrap();
    assert_eq!(r, TwoBoneReport::IDENTITY);
    assert_eq!(leg.snapshot(), before);
}

#[test]
fn partial_weight_nlerps_each_correction_from_identity() {
    let goal = TwoBoneGoal::new(Vec3::new(0.3, 0.4, 0.1));
    let mut leg = bent_leg();
    let limb = leg.limb();
    let full = two_bone::reference(&limb, &goal).unwrap();
    for w in [0.25f32, 0.5, 0.9] {
        let part = two_bone::reference(&limb, &goal.with_weight(w)).unwrap();
        assert!(!part.reached);
        for (p, f) in [
            (part.start_correction, full.start_correction),
            (part.mid_correction, full.mid_correction),
        ] {
            let want = Quat::IDENTITY.nlerp(f, w);
            assert!(quat_close(p, want, 1e-6), "{w}: {p:?} vs {want:?}");
        }
    }
}

/// The softening curve written out: aim distance for a target at `d`.
fn soft_distance(d: f32, soften: f32) -> f32 {
    let chain = L1 + L2;
    let (ds, span) = (soften * chain, (1.0 - soften) * chain);
    if d <= ds {
        return d;
    }
    let x = (d - ds) / span;
    ds + span * (1.0 - (1.0 + x / 4.0).powi(-4))
}

#[test]
fn soften_pulls_the_end_short_of_far_targets_smoothly() {
    let soften = 0.8;
    let dir = Vec3::new(0.3, -0.9, 0.2).try_normalize().unwrap();
    let mut prev = 0.0;
    for i in 0..=60 {
        let d = 0.6 + 0.01 * i as f32;
        let target = HIP_POS + dir * d;
        let mut leg = bent_leg();
        let r = leg
            .solve(&leg_ik(TwoBoneGoal::new(target).with_soften(soften)))
            .unwrap();
        let reach = (leg.pos(ANKLE) - HIP_POS).length();
        let want = soft_distance(d, soften);
        assert!((reach - want).abs() < 1e-5, "{d}: {reach} vs {want}");
        // Along the target direction, never past full extension, and
        // reached only below the softening start.
        assert!(((leg.pos(ANKLE) - HIP_POS) * (1.0 / reach) - dir).length() < 1e-4);
        assert!(reach < L1 + L2);
        assert_eq!(r.reached, d <= soften * (L1 + L2) + 1e-5, "{d}");
        // Monotone and with slope at most 1 (no jump at the softening start).
        if i > 0 {
            assert!(reach >= prev && reach - prev <= 0.01 + 1e-5, "{d}");
        }
        prev = reach;
    }
    // Slope 1 at the softening start: the curve is C1 there.
    let ds = soften * (L1 + L2);
    let slope = (soft_distance(ds + 1e-3, soften) - ds) / 1e-3;
    assert!((slope - 1.0).abs() < 0.01, "{slope}");
}

#[test]
fn twist_turns_the_limb_about_the_target_line() {
    let target = Vec3::new(0.1, 0.35, 0.15);
    let mut base = bent_leg();
    base.solve(&leg_ik(TwoBoneGoal::new(target))).unwrap();
    let angle = 0.7;
    let mut twisted = bent_leg();
    let r = twisted
        .solve(&leg_ik(TwoBoneGoal::new(target).with_twist(angle)))
        .unwrap();
    assert!(r.reached);
    assert!((twisted.pos(ANKLE) - target).length() < 1e-5);
    let axis = (target - HIP_POS).try_normalize().unwrap();
    let want = HIP_POS + Quat::from_axis_angle(axis, angle).rotate(base.pos(KNEE) - HIP_POS);
    assert!(vec_close(twisted.pos(KNEE), want, 1e-5));
}

// ---------------------------------------------------------------------------
// Lanes and batch against the reference
// ---------------------------------------------------------------------------

fn limb_strategy() -> impl Strategy<Value = Limb> {
    (
        vec3_in(-2.0, 2.0),
        unit_axis(),
        0.05f32..1.0,
        unit_axis(),
        0.05f32..1.0,
        unit_quat(),
        unit_quat(),
    )
        .prop_map(|(start, d1, l1, d2, l2, qs, qm)| {
            let mid = start + d1 * l1;
            Limb::from_rotations(start, mid, mid + d2 * l2, qs, qm)
        })
}

fn goal_strategy() -> impl Strategy<Value = TwoBoneGoal> {
    (
        vec3_in(-3.0, 3.0),
        vec3_in(-1.0, 1.0),
        unit_axis(),
        prop_oneof![Just(1.0f32), Just(0.0), 0.0f32..1.0],
        prop_oneof![Just(1.0f32), 0.0f32..1.0],
        prop_oneof![Just(0.0f32), -3.0f32..3.0],
    )
        .prop_map(|(target, pole, axis, weight, soften, twist)| TwoBoneGoal {
            target,
            pole,
            mid_axis: axis,
            weight,
            soften,
            twist,
        })
}

/// A lane input, sometimes made invalid in one of the ways `reference`
/// rejects.
fn lane_strategy() -> impl Strategy<Value = (Limb, TwoBoneGoal)> {
    (limb_strategy(), goal_strategy(), 0u8..14).prop_map(|(mut l, mut g, bad)| {
        match bad {
            0 => g.weight = 1.5,
            1 => g.target.x = f32::NAN,
            2 => l.end = l.mid,
            3 => g.mid_axis = Vec3::ZERO,
            4 => g.soften = -0.5,
            5 => l.mid_frame[1].z = f32::INFINITY,
            6 => l.start_frame[1] = l.start_frame[0] * 2.0,
            _ => {}
        }
        (l, g)
    })
}

fn check_lane(
    got: Option<TwoBoneReport>,
    limb: &Limb,
    goal: &TwoBoneGoal,
) -> Result<(), TestCaseError> {
    match two_bone::reference(limb, goal) {
        Err(_) => prop_assert!(got.is_none()),
        Ok(want) => {
            let got = got.ok_or_else(|| TestCaseError::fail("valid lane reported invalid"))?;
            prop_assert_eq!(got.reached, want.reached);
            prop_assert!(
                quat_close(got.start_correction, want.start_correction, 1e-5),
                "start {:?} vs {:?}",
                got.start_correction,
                want.start_correction
            );
            prop_assert!(
                quat_close(got.mid_correction, want.mid_correction, 1e-5),
                "mid {:?} vs {:?}",
                got.mid_correction,
                want.mid_correction
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn four_lanes_equal_the_reference(lanes in proptest::collection::vec(lane_strategy(), 4)) {
        let mut input = TwoBoneLanes::<4>::EMPTY;
        for (i, (l, g)) in lanes.iter().enumerate() {
            input.set_lane(i, l, g);
        }
        let mut out = TwoBoneLanesOut::<4>::EMPTY;
        solve_lanes4(&input, &mut out);
        for (i, (l, g)) in lanes.iter().enumerate() {
            check_lane(out.lane(i), l, g)?;
        }
    }

    #[test]
    fn eight_lanes_equal_the_reference(
        lanes in proptest::collection::vec(lane_strategy(), 1..=8),
    ) {
        let mut input = TwoBoneLanes::<8>::EMPTY;
        for (i, (l, g)) in lanes.iter().enumerate() {
            input.set_lane(i, l, g);
        }
        let mut out = TwoBoneLanesOut::<8>::EMPTY;
        solve_lanes8(&input, &mut out);
        for (i, (l, g)) in lanes.iter().enumerate() {
            check_lane(out.lane(i), l, g)?;
        }
        // Unused lanes are invalid, with identity corrections.
        for i in lanes.len()..8 {
            prop_assert!(out.lane(i).is_none());
            prop_assert_eq!(out.start_correction[3][i], 1.0);
        }
    }

    /// `solve_many` over 1..20 poses gives what the reference solve,
    /// applied to each pose, gives (the lanes mirror the reference step
    /// for step; `TwoBoneIk::solve` runs the fast path, compared with the
    /// reference above).
    #[test]
    fn the_batch_equals_one_solve_per_pose(
        jobs in proptest::collection::vec(
            (unit_quat(), knee_hinge(), vec3_in(-1.0, 1.0), unit_axis(), 0.0f32..=1.0),
            1..20,
        ),
    ) {
        let mut one: Vec<Leg> = jobs.iter().map(|j| random_leg(j.0, j.1)).collect();
        let mut many: Vec<Leg> = jobs.iter().map(|j| random_leg(j.0, j.1)).collect();
        let iks: Vec<TwoBoneIk> = jobs
            .iter()
            .map(|j| leg_ik(TwoBoneGoal::new(HIP_POS + j.2).with_pole(j.3).with_weight(j.4)))
            .collect();
        let want: Vec<TwoBoneReport> = one
            .iter_mut()
            .zip(&iks)
            .map(|(l, ik)| {
                let r = two_bone::reference(&l.limb(), &ik.goal).unwrap();
                if ik.goal.weight > 0.0 {
                    with_poses(std::slice::from_mut(l), |p| r.apply(&mut p[0], HIP, KNEE))
                        .unwrap();
                }
                r
            })
            .collect();
        let mut got = vec![TwoBoneReport::IDENTITY; jobs.len()];
        with_poses(&mut many, |poses| solve_many(poses, &iks, &mut got)).unwrap();
        for i in 0..jobs.len() {
            prop_assert_eq!(got[i].reached, want[i].reached);
            for j in 0..6 {
                prop_assert!(mat_close(&many[i].models[j], &one[i].models[j], 1e-5));
            }
        }
    }
}

/// The largest component change of either correction between two
/// reports (sign-aligned).
fn report_distance(a: &TwoBoneReport, b: &TwoBoneReport) -> f32 {
    let d = |p: Quat, q: Quat| {
        let q = if p.dot(q) < 0.0 { -q } else { q };
        [p.x - q.x, p.y - q.y, p.z - q.z, p.w - q.w]
            .iter()
            .fold(0.0f32, |m, c| m.max(c.abs()))
    };
    d(a.start_correction, b.start_correction).max(d(a.mid_correction, b.mid_correction))
}

/// `corrections` against `reference`: the same error, or the same
/// `reached` and corrections within 1e-5 plus four times what the
/// reference itself moves when the lower bone grows or shrinks, or the
/// target moves along an axis, by 1e-6 of the limb length and the
/// coordinates' size (above their float spacing). Near full extension
/// the mid angle's cosine is within rounding of ±1 and the angle takes
/// the square root of that rounding (the problem is ill-conditioned there,
/// for any solver); the second term is that sensitivity, measured, and a
/// few 1e-6 where the problem is well conditioned.
fn check_corrections(limb: &Limb, goal: &TwoBoneGoal) -> Result<(), TestCaseError> {
    match (
        two_bone::corrections(limb, goal),
        two_bone::reference(limb, goal),
    ) {
        (Err(got), Err(want)) => prop_assert_eq!(got, want),
        (Ok(got), Ok(want)) => {
            prop_assert_eq!(got.reached, want.reached);
            let chain = (limb.mid - limb.start).length() + (limb.end - limb.mid).length();
            // The reference's own sensitivity: the lower bone grown and
            // shrunk, the target moved along each axis.
            let step = 1e-6 * (chain + limb.end.length() + goal.target.length());
            let along = (limb.end - limb.mid).try_normalize().unwrap_or(Vec3::X);
            let mut moved = Vec::new();
            for d in [along, Vec3::X, Vec3::Y, Vec3::Z] {
                for s in [-step, step] {
                    if d == along {
                        moved.push((
                            Limb {
                                end: limb.end + d * s,
                                ..*limb
                            },
                            *goal,
                        ));
                    } else {
                        moved.push((
                            *limb,
                            TwoBoneGoal {
                                target: goal.target + d * s,
                                ..*goal
                            },
                        ));
                    }
                }
            }
            let slack = moved
                .iter()
                .filter_map(|(l, g)| two_bone::reference(l, g).ok())
                .fold(0.0f32, |m, r| m.max(report_distance(&r, &want)));
            // Rounding enters the ill-conditioned steps a little
            // differently in each; four times the measured sensitivity
            // covers it.
            let off = report_distance(&got, &want);
            prop_assert!(
                off <= 1e-5 + 4.0 * slack,
                "off {} (slack {}): {:?} vs {:?}",
                off,
                slack,
                got,
                want
            );
        }
        (got, want) => prop_assert!(false, "{:?} vs {:?}", got, want),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn corrections_equal_the_reference((limb, goal) in lane_strategy()) {
        check_corrections(&limb, &goal)?;
    }

    /// Far from the origin, at large and small scales, with scaled frames.
    #[test]
    fn corrections_equal_the_reference_at_any_scale(
        (limb, goal) in lane_strategy(),
        scale in prop_oneof![Just(1e-3f32), Just(1e3f32), 0.01f32..100.0],
        offset in vec3_in(-500.0, 500.0),
        frame_scale in 0.1f32..10.0,
    ) {
        let at = |p: Vec3| p * scale + offset;
        let limb = Limb {
            start: at(limb.start),
            mid: at(limb.mid),
            end: at(limb.end),
            start_frame: limb.start_frame.map(|c| c * frame_scale),
            mid_frame: limb.mid_frame.map(|c| c * frame_scale),
        };
        let goal = TwoBoneGoal { target: at(goal.target), ..goal };
        check_corrections(&limb, &goal)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Reading the matrices gives the same bits as reading the limb
    /// gathered from them.
    #[test]
    fn corrections_from_models_equal_corrections_of_the_gathered_limb(
        (limb, goal) in lane_strategy(),
        w in prop_oneof![Just(0.0f32), Just(f32::NAN), -2.0f32..2.0],
    ) {
        let matrix = |p: Vec3, f: Option<&[Vec3; 3]>| {
            let f = f.copied().unwrap_or([Vec3::X, Vec3::Y, Vec3::Z]);
            // Junk in the last row: the solve reads only x, y, z.
            Mat4 {
                cols: [
                    [f[0].x, f[0].y, f[0].z, w],
                    [f[1].x, f[1].y, f[1].z, w],
                    [f[2].x, f[2].y, f[2].z, w],
                    [p.x, p.y, p.z, 1.0],
                ],
            }
        };
        let (s, m, e) = (
            matrix(limb.start, Some(&limb.start_frame)),
            matrix(limb.mid, Some(&limb.mid_frame)),
            matrix(limb.end, None),
        );
        let gathered = Limb::from_models(&s, &m, &e);
        prop_assert_eq!(gathered, limb);
        prop_assert_eq!(
            two_bone::corrections_from_models(&s, &m, &e, &goal),
            two_bone::corrections(&limb, &goal)
        );
    }
}

/// Goals on the degenerate geometry of the test leg.
fn degenerate_goals() -> [TwoBoneGoal; 4] {
    [
        // Target on the start joint.
        TwoBoneGoal::new(HIP_POS),
        // Target straight along the (straight) leg, pole along it.
        TwoBoneGoal::new(HIP_POS + Vec3::new(0.0, -0.9, 0.0)).with_pole(Vec3::Y),
        // Target straight up (opposite the leg: the aim is a half turn).
        TwoBoneGoal::new(HIP_POS + Vec3::new(0.0, 0.9, 0.0)),
        // Mid axis along the thigh: the knee cannot change the distance.
        TwoBoneGoal::new(Vec3::new(0.2, 0.3, 0.0)).with_mid_axis(Vec3::Y),
    ]
}

#[test]
fn corrections_agree_with_the_reference_on_degenerate_and_bad_input() {
    let mut leg = Leg::new();
    let limb = leg.limb();
    let goals = [
        TwoBoneGoal::new(HIP_POS + Vec3::new(0.0, -0.3, -0.5)).with_pole(Vec3::ZERO),
        TwoBoneGoal::new(Vec3::new(0.2, 0.3, 0.0)).with_weight(0.0),
        TwoBoneGoal::new(Vec3::new(0.2, 0.3, 0.0)).with_weight(f32::NAN),
        TwoBoneGoal::new(Vec3::new(0.2, 0.3, 0.0)).with_soften(1.5),
        TwoBoneGoal::new(Vec3::new(0.2, 0.3, 0.0)).with_twist(f32::INFINITY),
        TwoBoneGoal::new(Vec3::new(0.2, 0.3, 0.0)).with_pole(Vec3::splat(f32::INFINITY)),
        TwoBoneGoal::new(Vec3::new(f32::NAN, 0.3, 0.0)),
        TwoBoneGoal::new(Vec3::new(1e30, 0.3, 0.0)),
        TwoBoneGoal::new(Vec3::new(0.2, 0.3, 0.0)).with_mid_axis(Vec3::splat(1.5e-12)),
    ];
    let mut bad_limbs = Vec::new();
    for i in 0..3 {
        for c in 0..3 {
            let mut l = limb;
            l.start_frame[i] = Vec3::splat(f32::NAN);
            bad_limbs.push(l);
            l = limb;
            l.mid_frame[c] = Vec3::new(0.0, f32::INFINITY, 0.0);
            bad_limbs.push(l);
        }
    }
    for (p, at) in [
        (0usize, f32::INFINITY),
        (1, f32::NAN),
        (2, -f32::INFINITY),
        (0, 3e38),
    ] {
        let mut l = limb;
        [&mut l.start, &mut l.mid, &mut l.end][p].y = at;
        bad_limbs.push(l);
    }
    let mut l = limb;
    l.end = l.mid;
    bad_limbs.push(l);
    for goal in degenerate_goals().iter().chain(&goals) {
        check_corrections(&limb, goal).unwrap();
        for l in &bad_limbs {
            check_corrections(l, goal).unwrap();
        }
    }
}

#[test]
fn lanes_handle_degenerate_geometry_like_the_reference() {
    let mut leg = Leg::new();
    let limb = leg.limb();
    let cases = degenerate_goals();
    let mut input = TwoBoneLanes::<4>::EMPTY;
    for (i, g) in cases.iter().enumerate() {
        input.set_lane(i, &limb, g);
    }
    let mut out = TwoBoneLanesOut::<4>::EMPTY;
    solve_lanes4(&input, &mut out);
    for (i, g) in cases.iter().enumerate() {
        let want = two_bone::reference(&limb, g).unwrap();
        let got = out.lane(i).unwrap();
        assert!(want.start_correction.is_finite() && want.mid_correction.is_finite());
        assert_eq!(got.reached, want.reached, "{i}");
        assert!(
            quat_close(got.start_correction, want.start_correction, 1e-5),
            "{i}"
        );
        assert!(
            quat_close(got.mid_correction, want.mid_correction, 1e-5),
            "{i}"
        );
    }
    // Straight up is opposite: the ankle ends straight above the hip.
    leg.solve(&leg_ik(cases[2])).unwrap();
    assert!((leg.pos(ANKLE) - (HIP_POS + Vec3::new(0.0, 0.9, 0.0))).length() < 1e-5);
}
