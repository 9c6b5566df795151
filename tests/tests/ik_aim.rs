//! Aim and look-at IK: validity (every bad input gives its error and leaves
//! the pose untouched), closed-form answers, hand-computed cases, the
//! look-at chain on the procedural humanoid, and the 4- and 8-lane solvers
//! against the scalar one.

#[path = "../support/mod.rs"]
mod support;

use std::f32::consts::{FRAC_1_SQRT_2, FRAC_PI_2, PI};

use proptest::prelude::*;
use sinew_core::clip::TimeMode;
use sinew_core::fk::{local_to_model, FkJob};
use sinew_core::ik::aim::{
    aim_correction, aim_corrections_x4, aim_corrections_x8, aim_joint, look_at, Aim, AimCorrection,
    LookAtJoint,
};
use sinew_core::ik::IkPose;
use sinew_core::{Error, Mat4, Quat, Skeleton, SoaTransform, Transform, Vec3};
use support::*;

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/// The humanoid's skeleton, a pose (rest, or the walk at `t` seconds) and
/// its model matrices under `root`.
struct Rig {
    local: Vec<SoaTransform>,
    models: Vec<Mat4>,
    root: Option<Mat4>,
}

fn skeleton() -> Skeleton<'static> {
    humanoid().skeleton.view()
}

fn joint(name: &str) -> usize {
    skeleton().find_joint(name).unwrap()
}

fn rig(walk_time: Option<f32>, root: Option<Mat4>) -> Rig {
    let s = skeleton();
    let mut local = s.rest_pose().to_vec();
    if let Some(t) = walk_time {
        humanoid().clips[0]
            .view()
            .sample(t, TimeMode::Loop, &mut local)
            .unwrap();
    }
    let mut models = vec![Mat4::IDENTITY; s.joint_count()];
    let mut job = FkJob::new(&s, &local);
    if let Some(r) = root.as_ref() {
        job = job.with_root(r);
    }
    local_to_model(&job, &mut models).unwrap();
    Rig {
        local,
        models,
        root,
    }
}

impl Rig {
    fn pose(&mut self) -> IkPose<'_, 'static> {
        static SKEL: std::sync::OnceLock<Skeleton<'static>> = std::sync::OnceLock::new();
        let s = SKEL.get_or_init(skeleton);
        IkPose::new(s, &mut self.local, &mut self.models, self.root.as_ref()).unwrap()
    }

    fn look_at(
        &mut self,
        chain: &[LookAtJoint],
        aim: &Aim,
    ) -> Result<sinew_core::ik::aim::LookAtReport, Error> {
        let mut pose = self.pose();
        look_at(&mut pose, chain, aim)
    }

    fn aim_joint(&mut self, j: usize, aim: &Aim) -> Result<AimCorrection, Error> {
        let mut pose = self.pose();
        aim_joint(&mut pose, j, aim)
    }

    fn local_rotation(&self, j: usize) -> Quat {
        sinew_core::soa::get_joint(&self.local, j).unwrap().rotation
    }

    /// The model matrices recomputed from the local pose by a full FK.
    fn fresh_models(&self) -> Vec<Mat4> {
        let s = skeleton();
        let mut m = vec![Mat4::IDENTITY; s.joint_count()];
        let mut job = FkJob::new(&s, &self.local);
        if let Some(r) = self.root.as_ref() {
            job = job.with_root(r);
        }
        local_to_model(&job, &mut m).unwrap();
        m
    }
}

/// Distance from `target` to the ray from `origin` along `dir`, and
/// whether the target lies in front.
fn ray_miss(origin: Vec3, dir: Vec3, target: Vec3) -> (f32, bool) {
    let d = dir.try_normalize().unwrap();
    let v = target - origin;
    let along = v.dot(d);
    ((v - d * along).length(), along > 0.0)
}

/// The ray a joint aims: its offset point and forward axis, model space.
fn aimed_ray(m: &Mat4, aim: &Aim) -> (Vec3, Vec3) {
    (
        m.transform_point(aim.offset),
        m.transform_vector(aim.forward),
    )
}

/// `model` turned by a joint-frame correction (exact for uniform scale).
fn corrected(model: &Mat4, q: Quat) -> Mat4 {
    *model * Transform::from_translation_rotation(Vec3::ZERO, q).to_matrix()
}

/// The rotation angle of `q` in `[0, π]`, by `atan2` (precise for small
/// angles, where `acos(w)` is not).
fn angle(q: Quat) -> f32 {
    let v = Vec3::new(q.x, q.y, q.z).length();
    2.0 * v.atan2(q.w.abs())
}

/// The angle between two rotations, as [`angle`] of the relative one.
fn angle_between(a: Quat, b: Quat) -> f32 {
    angle(a.conjugate() * b)
}

fn axis(q: Quat) -> Vec3 {
    let q = if q.w < 0.0 { -q } else { q };
    Vec3::new(q.x, q.y, q.z).try_normalize().unwrap()
}

fn assert_untouched(r: &Rig, before: &Rig, what: &str) {
    assert_eq!(r.local, before.local, "{what}: local pose written");
    assert_eq!(r.models, before.models, "{what}: model matrices written");
}

fn clone(r: &Rig) -> Rig {
    Rig {
        local: r.local.clone(),
        models: r.models.clone(),
        root: r.root,
    }
}

/// A look-at on the head: eyes forward (+Z) and up (+Y), a target ahead.
fn head_aim(target: Vec3) -> Aim {
    Aim::new(target, Vec3::Z, Vec3::Y).with_offset(Vec3::new(0.0, 0.08, 0.08))
}

fn spine_neck_head(weights: [f32; 3]) -> [LookAtJoint; 3] {
    [
        LookAtJoint::new(joint("spine_03"), weights[0]),
        LookAtJoint::new(joint("neck_01"), weights[1]),
        LookAtJoint::new(joint("head"), weights[2]),
    ]
}

// ---------------------------------------------------------------------------
// Validity
// ---------------------------------------------------------------------------

#[test]
fn invalid_aims_give_their_error_and_leave_the_pose_untouched() {
    let good = head_aim(Vec3::new(0.3, 1.6, 1.0));
    let nan = f32::NAN;
    let cases: [(Aim, Error); 11] = [
        (
            Aim {
                target: Vec3::new(nan, 0.0, 0.0),
                ..good
            },
            Error::NonFinite { what: "aim target" },
        ),
        (
            Aim {
                target: Vec3::new(0.0, f32::INFINITY, 0.0),
                ..good
            },
            Error::NonFinite { what: "aim target" },
        ),
        (
            Aim {
                forward: Vec3::new(0.0, 0.0, nan),
                ..good
            },
            Error::NonFinite {
                what: "aim forward axis",
            },
        ),
        (
            Aim {
                up: Vec3::new(nan, 1.0, 0.0),
                ..good
            },
            Error::NonFinite {
                what: "aim up vector",
            },
        ),
        (
            good.with_offset(Vec3::new(0.0, nan, 0.0)),
            Error::NonFinite { what: "aim offset" },
        ),
        (
            good.with_pole(Vec3::new(0.0, 0.0, f32::NEG_INFINITY)),
            Error::NonFinite {
                what: "aim pole vector",
            },
        ),
        (good.with_twist(nan), Error::NonFinite { what: "aim twist" }),
        (
            Aim {
                forward: Vec3::ZERO,
                ..good
            },
            Error::InvalidParameter {
                what: "aim forward axis must not be zero",
            },
        ),
        (
            good.with_weight(1.5),
            Error::InvalidParameter {
                what: "aim weight must be in 0..=1",
            },
        ),
        (
            good.with_weight(-0.01),
            Error::InvalidParameter {
                what: "aim weight must be in 0..=1",
            },
        ),
        (
            good.with_weight(nan),
            Error::InvalidParameter {
                what: "aim weight must be in 0..=1",
            },
        ),
    ];
    let head = joint("head");
    let chain = spine_neck_head([0.3, 0.5, 1.0]);
    for (aim, err) in cases {
        assert_eq!(aim.validate(), Err(err));
        assert_eq!(aim_correction(&Mat4::IDENTITY, &aim), Err(err));
        let mut r = rig(Some(0.4), None);
        let before = clone(&r);
        assert_eq!(r.aim_joint(head, &aim), Err(err));
        assert_untouched(&r, &before, "aim_joint");
        assert_eq!(r.look_at(&chain, &aim), Err(err));
        assert_untouched(&r, &before, "look_at");
        let mut lanes = [good; 8];
        lanes[5] = aim;
        assert_eq!(aim_corrections_x8([&Mat4::IDENTITY; 8], &lanes), Err(err));
        let four: [Aim; 4] = [good, good, good, aim];
        assert_eq!(aim_corrections_x4([&Mat4::IDENTITY; 4], &four), Err(err));
    }
    // A zero twist, weight 0 and weight 1 are valid.
    assert!(good.with_weight(0.0).validate().is_ok());
    assert!(good.with_weight(1.0).with_twist(-7.0).validate().is_ok());
}

#[test]
fn invalid_chains_give_their_error_and_leave_the_pose_untouched() {
    let s = skeleton();
    let n = s.joint_count();
    let aim = head_aim(Vec3::new(0.3, 1.6, 1.0));
    let (spine, neck, head, eye_l, eye_r) = (
        joint("spine_03"),
        joint("neck_01"),
        joint("head"),
        joint("eye_l"),
        joint("eye_r"),
    );
    let not_ancestor = Error::InvalidParameter {
        what: "look-at chain: each joint must be a strict ancestor of the next",
    };
    let long: Vec<LookAtJoint> = (0..=n).map(|j| LookAtJoint::new(j % n, 1.0)).collect();
    let cases: Vec<(Vec<LookAtJoint>, Error)> = vec![
        (
            vec![],
            Error::InvalidParameter {
                what: "look-at chain is empty",
            },
        ),
        (
            long,
            Error::InvalidParameter {
                what: "look-at chain has more joints than the skeleton",
            },
        ),
        (
            vec![LookAtJoint::new(spine, 0.5), LookAtJoint::new(n + 3, 1.0)],
            Error::JointOutOfRange {
                joint: n + 3,
                count: n,
            },
        ),
        (
            vec![LookAtJoint::new(head, 0.5), LookAtJoint::new(neck, 1.0)],
            not_ancestor,
        ),
        (
            vec![LookAtJoint::new(eye_l, 0.5), LookAtJoint::new(eye_r, 1.0)],
            not_ancestor,
        ),
        (
            vec![LookAtJoint::new(head, 0.5), LookAtJoint::new(head, 1.0)],
            not_ancestor,
        ),
        (
            vec![
                LookAtJoint::new(neck, 0.5),
                LookAtJoint::new(joint("hand_l"), 1.0),
            ],
            Error::InvalidParameter {
                what: "look-at chain: each joint must be a strict ancestor of the next",
            },
        ),
        (
            vec![LookAtJoint::new(spine, 1.2), LookAtJoint::new(head, 1.0)],
            Error::InvalidParameter {
                what: "look-at joint weight must be in 0..=1",
            },
        ),
        (
            vec![
                LookAtJoint::new(spine, f32::NAN),
                LookAtJoint::new(head, 1.0),
            ],
            Error::InvalidParameter {
                what: "look-at joint weight must be in 0..=1",
            },
        ),
        (
            vec![
                LookAtJoint::new(spine, 0.5).with_max_angle(-0.1),
                LookAtJoint::new(head, 1.0),
            ],
            Error::InvalidParameter {
                what: "look-at max_angle must be >= 0 (radians)",
            },
        ),
        (
            vec![
                LookAtJoint::new(spine, 0.5),
                LookAtJoint::new(head, 1.0).with_max_angle(f32::NAN),
            ],
            Error::InvalidParameter {
                what: "look-at max_angle must be >= 0 (radians)",
            },
        ),
    ];
    for (chain, err) in cases {
        let mut r = rig(Some(0.2), None);
        let before = clone(&r);
        assert_eq!(r.look_at(&chain, &aim), Err(err), "{chain:?}");
        assert_untouched(&r, &before, "look_at");
    }
    // Single aim: a joint past the skeleton.
    let mut r = rig(None, None);
    let before = clone(&r);
    assert_eq!(
        r.aim_joint(n, &aim),
        Err(Error::JointOutOfRange { joint: n, count: n })
    );
    assert_untouched(&r, &before, "aim_joint");
    // Skipping joints of the path is fine, and so is a zero max angle.
    assert!(r
        .look_at(
            &[
                LookAtJoint::new(spine, 0.5).with_max_angle(0.0),
                LookAtJoint::new(eye_l, 1.0)
            ],
            &aim
        )
        .is_ok());
}

// ---------------------------------------------------------------------------
// Hand-computed cases
// ---------------------------------------------------------------------------

#[test]
fn hand_computed_corrections() {
    let s = FRAC_1_SQRT_2;
    let id = Mat4::IDENTITY;
    let check = |model: &Mat4, aim: Aim, want: Quat| {
        let c = aim_correction(model, &aim).unwrap();
        assert!(c.reached);
        assert!(
            quat_close(c.rotation, want, 1e-6),
            "{:?} vs {want:?}",
            c.rotation
        );
    };
    // Forward +Z onto a target on +X: a quarter turn about +Y.
    check(
        &id,
        Aim::new(Vec3::new(3.0, 0.0, 0.0), Vec3::Z, Vec3::Y),
        Quat::new(0.0, s, 0.0, s),
    );
    // Half the weight: an eighth of a turn (sin, cos of 22.5°).
    check(
        &id,
        Aim::new(Vec3::new(3.0, 0.0, 0.0), Vec3::Z, Vec3::Y).with_weight(0.5),
        Quat::new(0.0, 0.382_683_43, 0.0, 0.923_879_5),
    );
    // A joint at (0, 1, 0) turned a quarter about +Y (its +Z looks along
    // model +X) aiming at (0, 1, 5) (model +Z): in its frame the target is
    // on -X, so a quarter turn about -Y.
    let m = Transform::from_translation_rotation(
        Vec3::new(0.0, 1.0, 0.0),
        Quat::from_rotation_y(FRAC_PI_2),
    )
    .to_matrix();
    check(
        &m,
        Aim::new(Vec3::new(0.0, 1.0, 5.0), Vec3::Z, Vec3::Y),
        Quat::new(0.0, -s, 0.0, s),
    );
    // The same with uniform scale 2: the frame's units change, not the angle.
    let m2 = Transform::new(
        Vec3::new(0.0, 1.0, 0.0),
        Quat::from_rotation_y(FRAC_PI_2),
        Vec3::splat(2.0),
    )
    .to_matrix();
    check(
        &m2,
        Aim::new(Vec3::new(0.0, 1.0, 5.0), Vec3::Z, Vec3::Y),
        Quat::new(0.0, -s, 0.0, s),
    );
    // Eyes 0.1 above the joint looking along +Z at (0, 0, 1): the ray from
    // (0, 0.1, 0) meets the unit sphere at (0, 0.1, √0.99), which turns onto
    // the target about +X by asin(0.1) = 0.100167421 rad.
    check(
        &id,
        Aim::new(Vec3::Z, Vec3::Z, Vec3::Y).with_offset(Vec3::new(0.0, 0.1, 0.0)),
        Quat::new(0.050_062_775, 0.0, 0.0, 0.998_746_1),
    );
    // Already aimed; the pole on +X rolls the up vector from +Y to +X: a
    // quarter turn about -Z.
    check(
        &id,
        Aim::new(Vec3::Z, Vec3::Z, Vec3::Y).with_pole(Vec3::X),
        Quat::new(0.0, 0.0, -s, s),
    );
    // A pole behind the up vector: half a turn about the aim axis.
    check(
        &id,
        Aim::new(Vec3::Z, Vec3::Z, Vec3::Y).with_pole(-Vec3::Y),
        Quat::new(0.0, 0.0, 1.0, 0.0),
    );
    // Quarter turn about +Y, then a twist of a quarter turn about the aim
    // axis (+X): up +Y ends on +Z. (0, s, 0, s) then (s, 0, 0, s):
    // (s, 0, 0, s)·(0, s, 0, s) = (½, ½, ½, ½).
    check(
        &id,
        Aim::new(Vec3::new(2.0, 0.0, 0.0), Vec3::Z, Vec3::Y).with_twist(FRAC_PI_2),
        Quat::new(0.5, 0.5, 0.5, 0.5),
    );
    // Weight 0: the identity.
    check(
        &id,
        Aim::new(Vec3::X, Vec3::Z, Vec3::Y).with_weight(0.0),
        Quat::IDENTITY,
    );
}

#[test]
fn unreachable_and_degenerate_targets_give_the_identity() {
    let id = Mat4::IDENTITY;
    let eyes = Vec3::new(0.0, 0.1, 0.0);
    let not = |model: &Mat4, aim: Aim| {
        let c = aim_correction(model, &aim).unwrap();
        assert_eq!(
            c,
            AimCorrection {
                rotation: Quat::IDENTITY,
                reached: false
            },
            "{aim:?}"
        );
        let lanes = aim_corrections_x4([model; 4], &[aim; 4]).unwrap();
        assert_eq!(lanes, [c; 4]);
    };
    // Inside the sphere through the eyes.
    not(
        &id,
        Aim::new(Vec3::new(0.0, 0.0, 0.05), Vec3::Z, Vec3::Y).with_offset(eyes),
    );
    // On the joint.
    not(&id, Aim::new(Vec3::ZERO, Vec3::Z, Vec3::Y));
    // Behind the aiming point along forward: offset ahead of the joint,
    // target closer than it.
    not(
        &id,
        Aim::new(Vec3::new(0.0, 0.0, 0.5), Vec3::Z, Vec3::Y).with_offset(Vec3::new(0.0, 0.0, 1.0)),
    );
    // A singular or non-finite model matrix.
    not(
        &Mat4 {
            cols: [[0.0; 4]; 4],
        },
        Aim::new(Vec3::X, Vec3::Z, Vec3::Y),
    );
    let mut m = Mat4::IDENTITY;
    m.cols[1][2] = f32::NAN;
    not(&m, Aim::new(Vec3::X, Vec3::Z, Vec3::Y));
    // On the sphere's edge, in front: reached.
    let c = aim_correction(
        &id,
        &Aim::new(Vec3::new(0.0, 0.0, 0.2), Vec3::Z, Vec3::Y).with_offset(eyes),
    )
    .unwrap();
    assert!(c.reached);
    // An offset behind the joint reaches a target inside its sphere.
    let c = aim_correction(
        &id,
        &Aim::new(Vec3::new(0.1, 0.0, 0.0), Vec3::Z, Vec3::Y)
            .with_offset(Vec3::new(0.0, 0.0, -1.0)),
    )
    .unwrap();
    assert!(c.reached);
    let f = c.rotation.rotate(Vec3::Z);
    let o = c.rotation.rotate(Vec3::new(0.0, 0.0, -1.0));
    let (miss, ahead) = ray_miss(o, f, Vec3::new(0.1, 0.0, 0.0));
    assert!(miss < 1e-5 && ahead, "{miss}");
}

// ---------------------------------------------------------------------------
// Closed-form properties
// ---------------------------------------------------------------------------

fn uniform_model() -> impl Strategy<Value = Mat4> {
    (vec3_in(-2.0, 2.0), unit_quat(), 0.5f32..2.0)
        .prop_map(|(t, q, s)| Transform::new(t, q, Vec3::splat(s)).to_matrix())
}

fn any_aim() -> impl Strategy<Value = Aim> {
    (
        vec3_in(-3.0, 3.0),
        unit_axis(),
        unit_axis(),
        vec3_in(-0.15, 0.15),
        unit_axis(),
        -PI..PI,
        prop_oneof![Just(1.0f32), Just(0.0f32), 0.0f32..=1.0],
    )
        .prop_map(|(target, forward, up, offset, pole, twist, weight)| Aim {
            target,
            forward: forward * 1.7,
            up,
            offset,
            pole,
            twist,
            weight,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Weight 1 puts the offset ray through the target, and the up vector
    /// in the half-plane of the aim axis and the pole.
    #[test]
    fn full_weight_aims_exactly_with_up_in_the_pole_plane(m in uniform_model(), aim in any_aim()) {
        let aim = aim.with_twist(0.0).with_weight(1.0);
        let c = aim_correction(&m, &aim).unwrap();
        prop_assume!(c.reached);
        let q = c.rotation;
        prop_assert!((q.length() - 1.0).abs() < 1e-5 && q.w >= 0.0);
        let m2 = corrected(&m, q);
        let (o, f) = aimed_ray(&m2, &aim);
        let (miss, ahead) = ray_miss(o, f, aim.target);
        let dist = (aim.target - m.translation()).length();
        prop_assert!(miss < 2e-5 * dist.max(1.0) && ahead, "miss {miss}");
        // Up in the plane of the aim axis and the pole, on the pole's side
        // (where both are defined).
        let a = (aim.target - m.translation()).try_normalize().unwrap();
        let up = m2.transform_vector(aim.up).try_normalize().unwrap();
        let pole_perp = aim.pole - a * aim.pole.dot(a);
        let up_perp = up - a * up.dot(a);
        prop_assume!(pole_perp.length() > 0.05 && up_perp.length() > 0.05);
        let normal = a.cross(aim.pole).try_normalize().unwrap();
        prop_assert!(up.dot(normal).abs() < 1e-4, "off the plane by {}", up.dot(normal));
        prop_assert!(up_perp.dot(pole_perp) > 0.0);
    }

    /// A weight scales the angle of the full correction about the same axis;
    /// a twist turns the full correction about the aim axis.
    #[test]
    fn weight_scales_the_angle_and_twist_turns_about_the_aim_axis(
        m in uniform_model(), aim in any_aim(), w in 0.0f32..1.0, twist in -3.0f32..3.0,
    ) {
        let full = aim_correction(&m, &aim.with_weight(1.0)).unwrap();
        prop_assume!(full.reached && angle(full.rotation) > 1e-3);
        let part = aim_correction(&m, &aim.with_weight(w)).unwrap();
        prop_assert!((angle(part.rotation) - w * angle(full.rotation)).abs() < 2e-5,
            "{} vs {} x {w}", angle(part.rotation), angle(full.rotation));
        if w > 0.01 {
            prop_assert!(vec_close(axis(part.rotation), axis(full.rotation), 1e-3));
        }
        let base = aim_correction(&m, &aim.with_weight(1.0).with_twist(0.0)).unwrap();
        let twisted = aim_correction(&m, &aim.with_weight(1.0).with_twist(twist)).unwrap();
        let frame = m.inverse_affine().unwrap();
        let a = frame.transform_point(aim.target).try_normalize().unwrap();
        let want = Quat::from_axis_angle(a, twist) * base.rotation;
        prop_assert!(quat_close(twisted.rotation, want, 2e-5), "{:?} vs {want:?}", twisted.rotation);
    }

    /// Whatever the up vector and the pole (zero, parallel to forward, to
    /// the aim direction, or to each other), the result is finite and unit,
    /// and weight 1 still aims.
    #[test]
    fn degenerate_up_vectors_give_finite_results(m in uniform_model(), aim in any_aim(), pick in 0usize..6) {
        let frame = m.inverse_affine().unwrap();
        let a_js = frame.transform_point(aim.target);
        let a_ms = aim.target - m.translation();
        let (up, pole) = match pick {
            0 => (aim.forward, aim.pole),
            1 => (a_js, aim.pole),
            2 => (aim.up, a_ms),
            3 => (Vec3::ZERO, aim.pole),
            4 => (aim.up, Vec3::ZERO),
            _ => (a_js * -3.0, -a_ms),
        };
        let aim = Aim { up, pole, ..aim.with_weight(1.0) };
        let c = aim_correction(&m, &aim).unwrap();
        prop_assert!(c.rotation.is_finite() && (c.rotation.length() - 1.0).abs() < 1e-5);
        let lanes = aim_corrections_x4([&m; 4], &[aim; 4]).unwrap();
        prop_assert!(lanes.iter().all(|l| l.rotation.is_finite() && l.reached == c.reached));
        if c.reached {
            let (o, f) = aimed_ray(&corrected(&m, c.rotation), &aim);
            let (miss, ahead) = ray_miss(o, f, aim.target);
            prop_assert!(miss < 2e-5 * a_ms.length().max(1.0) && ahead, "miss {miss}");
        }
    }

    /// The 4- and 8-lane solvers give the scalar solver's answer in every
    /// lane (within 1e-5), including lanes with a singular matrix.
    #[test]
    fn lanes_match_the_scalar_solver(
        models in proptest::collection::vec(
            prop_oneof![8 => uniform_model(), 1 => Just(Mat4 { cols: [[0.0; 4]; 4] })], 8),
        aims in proptest::collection::vec(any_aim(), 8),
        same_twist in any::<bool>(),
    ) {
        let mut aims: [Aim; 8] = aims.try_into().unwrap();
        if same_twist {
            // The all-zero twist path.
            for a in &mut aims { a.twist = 0.0; }
        }
        let refs: [&Mat4; 8] = std::array::from_fn(|i| &models[i]);
        let x8 = aim_corrections_x8(refs, &aims).unwrap();
        let lo = aim_corrections_x4(std::array::from_fn(|i| refs[i]), &std::array::from_fn(|i| aims[i])).unwrap();
        let hi = aim_corrections_x4(std::array::from_fn(|i| refs[i + 4]), &std::array::from_fn(|i| aims[i + 4])).unwrap();
        for i in 0..8 {
            let want = aim_correction(refs[i], &aims[i]).unwrap();
            let x4 = if i < 4 { lo[i] } else { hi[i - 4] };
            for (name, got) in [("x8", x8[i]), ("x4", x4)] {
                prop_assert_eq!(got.reached, want.reached, "{} lane {}", name, i);
                prop_assert!(quat_close(got.rotation, want.rotation, 1e-5),
                    "{} lane {}: {:?} vs {:?}", name, i, got.rotation, want.rotation);
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Single joint on a pose
// ---------------------------------------------------------------------------

#[test]
fn aim_joint_turns_the_joint_and_updates_its_subtree() {
    let head = joint("head");
    let eye = joint("eye_l");
    let foot = joint("foot_l");
    let target = Vec3::new(0.8, 1.9, 1.2);
    let aim = head_aim(target);
    let mut r = rig(Some(0.3), None);
    let before = clone(&r);
    let c = r.aim_joint(head, &aim).unwrap();
    assert!(c.reached);
    let (o, f) = aimed_ray(&r.models[head], &aim);
    let (miss, ahead) = ray_miss(o, f, target);
    assert!(miss < 1e-5 && ahead, "{miss}");
    // The subtree follows, the rest of the body does not move.
    for (a, b) in r.fresh_models().iter().zip(&r.models) {
        assert!(mat_close(a, b, 1e-6));
    }
    assert_ne!(r.models[eye], before.models[eye]);
    assert_eq!(r.models[foot], before.models[foot]);
    // Weight 0 writes nothing.
    let mut r = rig(Some(0.3), None);
    r.aim_joint(head, &aim.with_weight(0.0)).unwrap();
    assert_untouched(&r, &before, "weight 0");
    // Unreachable writes nothing.
    let c = r
        .aim_joint(head, &aim.with_offset(Vec3::new(0.0, 5.0, 0.0)))
        .unwrap();
    assert!(!c.reached);
    assert_untouched(&r, &before, "unreachable");
}

// ---------------------------------------------------------------------------
// Look-at chains on the procedural humanoid
// ---------------------------------------------------------------------------

#[test]
fn look_at_chain_puts_the_eyes_on_the_target() {
    let head = joint("head");
    let root = Transform::new(
        Vec3::new(1.0, 0.0, -2.0),
        Quat::from_rotation_y(0.7),
        Vec3::splat(1.3),
    )
    .to_matrix();
    for (walk, root) in [(None, None), (Some(0.5), None), (Some(0.9), Some(root))] {
        for target in [
            Vec3::new(0.8, 1.9, 1.2),
            Vec3::new(-1.5, 0.5, 0.6),
            Vec3::new(0.2, 3.0, -0.5),
        ] {
            let target = root.map_or(target, |m| m.transform_point(target));
            let aim = head_aim(target).with_pole(Vec3::new(0.1, 1.0, 0.0));
            let mut r = rig(walk, root);
            let before = clone(&r);
            let report = r.look_at(&spine_neck_head([0.3, 0.5, 1.0]), &aim).unwrap();
            assert!(report.reached && report.clamped == 0, "{report:?}");
            let (o, f) = aimed_ray(&r.models[head], &aim);
            let (miss, ahead) = ray_miss(o, f, target);
            assert!(miss < 1e-4 && ahead, "{walk:?} {target:?}: miss {miss}");
            // The matrices are FK of the pose written.
            for (a, b) in r.fresh_models().iter().zip(&r.models) {
                assert!(mat_close(a, b, 1e-6));
            }
            // Joints outside the chain's subtree keep their matrices.
            let spine = joint("spine_03");
            let end = skeleton().subtree_end(spine);
            for j in (0..spine).chain(end..skeleton().joint_count()) {
                assert_eq!(r.models[j], before.models[j], "joint {j}");
            }
        }
    }
}

#[test]
fn look_at_chain_ending_at_an_eye_aims_the_eye() {
    let eye = joint("eye_l");
    let target = Vec3::new(0.5, 1.4, 0.9);
    let aim = Aim::new(target, Vec3::Z, Vec3::Y);
    let mut chain = spine_neck_head([0.2, 0.4, 0.6]).to_vec();
    chain.push(LookAtJoint::new(eye, 1.0));
    let mut r = rig(Some(0.1), None);
    let report = r.look_at(&chain, &aim).unwrap();
    assert!(report.reached);
    let (o, f) = aimed_ray(&r.models[eye], &aim);
    let (miss, ahead) = ray_miss(o, f, target);
    assert!(miss < 1e-4 && ahead, "miss {miss}");
}

#[test]
fn look_at_shares_the_turn_by_the_weights() {
    let [spine, neck, head] = spine_neck_head([0.0; 3]).map(|c| c.joint);
    let aim = head_aim(Vec3::new(1.2, 2.2, 0.7));
    let turned = |r: &Rig, before: &Rig, j: usize| {
        angle_between(before.local_rotation(j), r.local_rotation(j))
    };
    // The spine alone (the head at weight 0) aims the head's ray fully.
    let mut alone = rig(Some(0.2), None);
    let before = clone(&alone);
    alone
        .look_at(
            &[LookAtJoint::new(spine, 1.0), LookAtJoint::new(head, 0.0)],
            &aim,
        )
        .unwrap();
    let spine_full = turned(&alone, &before, spine);
    assert!(spine_full > 0.3, "{spine_full}");
    let (o, f) = aimed_ray(&alone.models[head], &aim);
    assert!(ray_miss(o, f, aim.target).0 < 1e-4);
    // With weight 0.3 it takes 0.3 of that angle; the neck and the head
    // take their shares of what is left.
    let mut r = rig(Some(0.2), None);
    r.look_at(&spine_neck_head([0.3, 0.5, 1.0]), &aim).unwrap();
    assert!((turned(&r, &before, spine) - 0.3 * spine_full).abs() < 1e-4);
    let (n, h) = (turned(&r, &before, neck), turned(&r, &before, head));
    assert!(n > 0.05 && h > 0.05, "{n} {h}");
    // The chain weight scales every joint; half of it leaves the eyes off
    // the target.
    let mut half = rig(Some(0.2), None);
    half.look_at(&spine_neck_head([0.3, 0.5, 1.0]), &aim.with_weight(0.5))
        .unwrap();
    assert!((turned(&half, &before, spine) - 0.15 * spine_full).abs() < 1e-4);
    let (o, f) = aimed_ray(&half.models[head], &aim);
    assert!(ray_miss(o, f, aim.target).0 > 1e-2);
    // All weights 0: nothing is written.
    let mut zero = rig(Some(0.2), None);
    let report = zero.look_at(&spine_neck_head([0.0; 3]), &aim).unwrap();
    assert!(report.reached);
    assert_untouched(&zero, &before, "weights 0");
}

#[test]
fn look_at_clamps_each_joint_to_its_cone() {
    let [spine, neck, head] = spine_neck_head([0.0; 3]).map(|c| c.joint);
    let aim = head_aim(Vec3::new(-1.5, 0.8, 0.3));
    let turned = |r: &Rig, before: &Rig, j: usize| {
        angle_between(before.local_rotation(j), r.local_rotation(j))
    };
    // Tight cones on the spine and neck; the head is free and ends on target.
    let chain = [
        LookAtJoint::new(spine, 0.5).with_max_angle(0.1),
        LookAtJoint::new(neck, 0.7).with_max_angle(0.2),
        LookAtJoint::new(head, 1.0),
    ];
    let mut r = rig(Some(0.6), None);
    let before = clone(&r);
    let report = r.look_at(&chain, &aim).unwrap();
    assert_eq!(report.clamped, 2);
    assert!(
        (turned(&r, &before, spine) - 0.1).abs() < 1e-5,
        "{}",
        turned(&r, &before, spine)
    );
    assert!(
        (turned(&r, &before, neck) - 0.2).abs() < 1e-5,
        "{}",
        turned(&r, &before, neck)
    );
    let (o, f) = aimed_ray(&r.models[head], &aim);
    assert!(ray_miss(o, f, aim.target).0 < 1e-4);
    // The clamped correction keeps the unclamped one's axis.
    let mut free = rig(Some(0.6), None);
    free.look_at(
        &[LookAtJoint::new(spine, 0.5), LookAtJoint::new(head, 0.0)],
        &aim,
    )
    .unwrap();
    let mut clamped = rig(Some(0.6), None);
    clamped
        .look_at(
            &[
                LookAtJoint::new(spine, 0.5).with_max_angle(0.1),
                LookAtJoint::new(head, 0.0),
            ],
            &aim,
        )
        .unwrap();
    let delta = |x: &Rig| before.local_rotation(spine).conjugate() * x.local_rotation(spine);
    assert!(vec_close(axis(delta(&free)), axis(delta(&clamped)), 1e-4));
    assert!((angle(delta(&clamped)) - 0.1).abs() < 1e-5);
    // A cone on the head too: it stops short, exactly at its limit.
    let chain = [
        LookAtJoint::new(neck, 0.0),
        LookAtJoint::new(head, 1.0).with_max_angle(0.05),
    ];
    let mut r = rig(Some(0.6), None);
    let report = r.look_at(&chain, &aim).unwrap();
    assert_eq!(report.clamped, 1);
    assert!(
        (turned(&r, &before, head) - 0.05).abs() < 1e-5,
        "{}",
        turned(&r, &before, head)
    );
    let (o, f) = aimed_ray(&r.models[head], &aim);
    assert!(ray_miss(o, f, aim.target).0 > 1e-2);
}

#[test]
fn a_single_joint_chain_is_aim_joint() {
    let head = joint("head");
    let aim = head_aim(Vec3::new(0.4, 1.2, 1.5))
        .with_twist(0.3)
        .with_weight(0.7);
    let mut a = rig(Some(0.8), None);
    let mut b = rig(Some(0.8), None);
    a.aim_joint(head, &aim).unwrap();
    b.look_at(&[LookAtJoint::new(head, 1.0)], &aim).unwrap();
    assert_poses_close(&a.local, &b.local, skeleton().joint_count(), 1e-6);
}
