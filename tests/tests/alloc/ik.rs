//! IK on the walking humanoid: two-bone (one, in lanes, many at once), aim
//! and look-at, the chain solvers with and without limits, foot placement.

use sinew_core::clip::{RawClip, TimeMode};
use sinew_core::fk::{self, FkJob};
use sinew_core::ik::aim::{
    aim_correction, aim_corrections_x4, aim_corrections_x8, aim_joint, look_at, Aim, LookAtJoint,
};
use sinew_core::ik::foot::{FootLeg, FootPlacement, FootState};
use sinew_core::ik::jacobian::{self, Damping, JointAxes, Method, Settings};
use sinew_core::ik::limits::{Hinge, SwingTwist};
use sinew_core::ik::two_bone::{
    self, solve_lanes4, solve_lanes8, solve_many, Limb, TwoBoneGoal, TwoBoneIk, TwoBoneLanes,
    TwoBoneLanesOut, TwoBoneReport,
};
use sinew_core::ik::{ccd, fabrik, ChainJob, IkPose, JointLimit, MAX_CHAIN};
use sinew_core::soa::get_joint;
use sinew_core::{Error, Mat4, Skeleton, SoaTransform, Vec3};
use sinew_std::Humanoid;

use crate::frames_allocate_nothing;

/// Characters posed together.
const CHARACTERS: usize = 8;

/// Eight humanoids walking out of step: character `k` samples the walk
/// `0.13 k` seconds ahead.
struct Walkers<'a> {
    skel: Skeleton<'a>,
    clip: RawClip<'a>,
    locals: Vec<Vec<SoaTransform>>,
    models: Vec<Vec<Mat4>>,
}

impl<'a> Walkers<'a> {
    fn new(h: &'a Humanoid) -> Walkers<'a> {
        let skel = h.skeleton.view();
        Walkers {
            locals: vec![vec![SoaTransform::IDENTITY; skel.soa_count()]; CHARACTERS],
            models: vec![vec![Mat4::IDENTITY; skel.joint_count()]; CHARACTERS],
            clip: h.clips[0].view(),
            skel,
        }
    }

    fn joint(&self, name: &str) -> usize {
        self.skel.find_joint(name).expect("a humanoid joint")
    }

    /// Samples and poses every character at `t` seconds.
    fn pose(&mut self, t: f32) -> Result<(), Error> {
        (0..CHARACTERS).try_for_each(|k| self.pose_one(k, t))
    }

    /// Samples and poses character `k` at `t` seconds.
    fn pose_one(&mut self, k: usize, t: f32) -> Result<(), Error> {
        let local = &mut self.locals[k];
        self.clip
            .sample(t + 0.13 * k as f32, TimeMode::Loop, local)?;
        fk::local_to_model(&FkJob::new(&self.skel, local), &mut self.models[k])
    }

    /// Character `k`'s pose for the solvers.
    fn ik_pose(&mut self, k: usize) -> Result<IkPose<'_, 'a>, Error> {
        IkPose::new(&self.skel, &mut self.locals[k], &mut self.models[k], None)
    }
}

/// A target circling the ankle's position by `radius`, different per
/// character and frame.
fn circling(base: Vec3, frame: usize, k: usize, radius: f32) -> Vec3 {
    let a = frame as f32 * 0.05 + k as f32;
    base + Vec3::new(
        radius * a.cos(),
        0.5 * radius * (1.3 * a).sin(),
        radius * a.sin(),
    )
}

/// Two-bone IK each frame: one character's legs solved on its pose, the
/// eight characters' left legs in 4 and 8 lanes and through `solve_many`,
/// and the scalar reference.
pub fn two_bone_allocates_nothing() {
    let h = Humanoid::default_rate();
    let mut w = Walkers::new(&h);
    let legs = [
        (w.joint("thigh_l"), w.joint("calf_l"), w.joint("foot_l")),
        (w.joint("thigh_r"), w.joint("calf_r"), w.joint("foot_r")),
    ];
    let (thigh, calf, foot) = legs[0];
    let mut out4 = TwoBoneLanesOut::<4>::EMPTY;
    let mut out8 = TwoBoneLanesOut::<8>::EMPTY;
    let mut lanes4 = TwoBoneLanes::<4>::EMPTY;
    let mut lanes8 = TwoBoneLanes::<8>::EMPTY;
    let mut reports = [TwoBoneReport::IDENTITY; CHARACTERS];

    frames_allocate_nothing("two-bone IK", 300, |frame| {
        w.pose(frame as f32 / 60.0)?;
        let mut sum = 0.0;
        let goal = |models: &[Mat4], k: usize| {
            TwoBoneGoal::new(circling(models[foot].translation(), frame, k, 0.2))
                .with_pole(Vec3::new(0.0, 0.0, 1.0))
                .with_soften(0.97)
                .with_weight(if k == 3 { 0.5 } else { 1.0 })
        };
        let iks: [TwoBoneIk; CHARACTERS] =
            core::array::from_fn(|k| TwoBoneIk::new(thigh, calf, foot, goal(&w.models[k], k)));
        for (k, ik) in iks.iter().enumerate() {
            let m = &w.models[k];
            let limb = Limb::from_models(&m[thigh], &m[calf], &m[foot]);
            lanes8.set_lane(k, &limb, &ik.goal);
            if k < 4 {
                lanes4.set_lane(k, &limb, &ik.goal);
            }
            if k == 0 {
                let r = two_bone::reference(&limb, &ik.goal)?;
                sum += r.start_correction.w;
                let r = two_bone::corrections(&limb, &ik.goal)?;
                sum += r.start_correction.w;
                let r = two_bone::corrections_from_models(&m[thigh], &m[calf], &m[foot], &ik.goal)?;
                sum += r.mid_correction.w;
            }
        }
        solve_lanes4(&lanes4, &mut out4);
        solve_lanes8(&lanes8, &mut out8);
        sum += out4.start_correction[3][1] + out8.start_correction[3][7];
        // Character 0's legs, one at a time.
        {
            let mut pose = w.ik_pose(0)?;
            for (hip, knee, ankle) in legs {
                let target = circling(pose.position(ankle)?, frame, 9, 0.1);
                let ik = TwoBoneIk::new(hip, knee, ankle, TwoBoneGoal::new(target));
                sum += ik.solve(&mut pose)?.mid_correction.w;
            }
        }
        // Every character at once.
        let skel = w.skel;
        let mut chars = w.locals.iter_mut().zip(w.models.iter_mut());
        let mut poses: [IkPose<'_, '_>; CHARACTERS] = core::array::from_fn(|_| {
            let (local, models) = chars.next().expect("one pose per character");
            IkPose::new(&skel, local, models, None).expect("the buffers fit the skeleton")
        });
        solve_many(&mut poses, &iks, &mut reports)?;
        sum += reports[CHARACTERS - 1].start_correction.w;
        Ok::<f32, Error>(sum + poses[2].position(foot)?.y)
    });
}

/// Aim and look-at each frame: one correction, the head aimed on a pose, a
/// four-joint look-at chain with limits, and the head of four and eight
/// characters in SIMD lanes.
pub fn aim_and_look_at_allocate_nothing() {
    let h = Humanoid::default_rate();
    let mut w = Walkers::new(&h);
    let head = w.joint("head");
    let chain = [
        LookAtJoint::new(w.joint("spine_03"), 0.3).with_max_angle(0.3),
        LookAtJoint::new(w.joint("neck_01"), 0.5).with_max_angle(0.6),
        LookAtJoint::new(head, 0.8),
        LookAtJoint::new(w.joint("eye_l"), 1.0).with_max_angle(0.5),
    ];

    frames_allocate_nothing("aim and look-at", 300, |frame| {
        w.pose(frame as f32 / 60.0)?;
        let a = frame as f32 * 0.03;
        let target = Vec3::new(1.5 * a.cos(), 1.6 + 0.3 * a.sin(), 1.5 * a.sin() + 0.5);
        let aim = Aim::new(target, Vec3::Z, Vec3::Y)
            .with_offset(Vec3::new(0.0, 0.08, 0.08))
            .with_pole(Vec3::Y)
            .with_twist(0.1);
        let mut sum = 0.0;
        let aims: [Aim; CHARACTERS] =
            core::array::from_fn(|k| aim.with_weight(if k % 3 == 0 { 0.5 } else { 1.0 }));
        let heads: [&Mat4; CHARACTERS] = core::array::from_fn(|k| &w.models[k][head]);
        let x8 = aim_corrections_x8(heads, &aims)?;
        let x4 = aim_corrections_x4(
            [heads[0], heads[1], heads[2], heads[3]],
            &[aims[0], aims[1], aims[2], aims[3]],
        )?;
        sum += x8[7].rotation.w + x4[3].rotation.x;
        sum += aim_correction(heads[1], &aim)?.rotation.y;
        {
            let mut pose = w.ik_pose(0)?;
            sum += aim_joint(&mut pose, head, &aim)?.rotation.w;
        }
        let mut pose = w.ik_pose(1)?;
        let r = look_at(&mut pose, &chain, &aim)?;
        Ok::<f32, Error>(sum + r.clamped as f32 + pose.position(head)?.z)
    });
}

/// CCD, FABRIK and the Jacobian transpose, pseudo-inverse and damped
/// least squares on the left arm (clavicle to hand), each on the frame's
/// pose, with and without joint limits, the Jacobian also with per-joint
/// axes and an orientation goal.
pub fn chain_solvers_allocate_nothing() {
    let h = Humanoid::default_rate();
    let mut w = Walkers::new(&h);
    let mut buf = [0u16; MAX_CHAIN];
    let chain = sinew_core::ik::chain(&w.skel, w.joint("clavicle_l"), w.joint("hand_l"), &mut buf)
        .unwrap()
        .to_vec();
    let hand = w.joint("hand_l");
    let rest = w.skel.rest_pose();
    let elbow = w.joint("lower_arm_l");
    let limits: Vec<JointLimit> = chain
        .iter()
        .map(|&j| {
            let r = get_joint(rest, usize::from(j)).unwrap().rotation;
            if usize::from(j) == elbow {
                JointLimit::Hinge(Hinge::new(r, Vec3::Z, -0.2, 2.4).unwrap())
            } else {
                JointLimit::SwingTwist(SwingTwist::new(r, Vec3::X, 1.2, -0.6, 0.6).unwrap())
            }
        })
        .collect();
    let axes: Vec<JointAxes> = chain
        .iter()
        .map(|&j| {
            if usize::from(j) == elbow {
                JointAxes::hinge(Vec3::Z).unwrap()
            } else {
                JointAxes::BALL
            }
        })
        .collect();
    let dls = Method::DampedLeastSquares(Damping::Adaptive {
        factor: 0.5,
        min: 1e-3,
    });
    let fixed = Method::DampedLeastSquares(Damping::Fixed(0.05));
    let methods = [Method::Transpose, Method::PseudoInverse, dls, fixed];

    frames_allocate_nothing("chain IK", 150, |frame| {
        let t = frame as f32 / 60.0;
        let mut sum = 0.0;
        for solver in 0..2 + 2 * methods.len() {
            w.pose_one(0, t)?;
            let mut pose = w.ik_pose(0)?;
            let target = circling(pose.position(hand)?, frame, solver, 0.15);
            let job = ChainJob::new(&chain, target).with_iterations(8, 0.0);
            let job = if solver % 2 == 1 {
                job.with_limits(&limits)
            } else {
                job
            };
            let report = match solver {
                0 | 1 => ccd::solve(&mut pose, &job)?,
                2 | 3 => fabrik::solve(&mut pose, &job)?,
                s => {
                    let method = methods[(s - 4) / 2];
                    let settings = Settings::new(method);
                    let settings = if s % 2 == 1 {
                        settings
                            .with_axes(&axes)
                            .with_orientation(sinew_core::Quat::from_rotation_y(0.3), 0.2)
                    } else {
                        settings
                    };
                    jacobian::solve(&mut pose, &job, &settings)?
                }
            };
            sum += report.distance + pose.position(hand)?.y;
        }
        Ok::<f32, Error>(sum)
    });
}

/// Foot placement each frame for eight walkers on a 20° slope with a step,
/// each with its own springs.
pub fn foot_placement_allocates_nothing() {
    let h = Humanoid::default_rate();
    let mut w = Walkers::new(&h);
    let leg = |side: &str| FootLeg {
        hip: w.joint(&format!("thigh_{side}")),
        knee: w.joint(&format!("calf_{side}")),
        ankle: w.joint(&format!("foot_{side}")),
        knee_axis: Vec3::new(-1.0, 0.0, 0.0),
    };
    let placement = FootPlacement {
        pelvis: w.joint("pelvis"),
        legs: [leg("l"), leg("r")],
        foot_height: 0.02,
        max_tilt: 0.5,
        max_pelvis_offset: 0.3,
        half_life: 0.1,
        soften: 0.97,
    };
    let grade = 20f32.to_radians().tan();
    let normal = Vec3::new(0.0, 1.0, -grade);
    let ground = move |x: f32, z: f32| {
        let step = if x > 0.05 { 0.08 } else { 0.0 };
        Some((grade * z + step, normal))
    };
    let mut states = [FootState::<2>::new(); CHARACTERS];

    frames_allocate_nothing("foot placement", 300, |frame| {
        w.pose(frame as f32 / 60.0)?;
        let mut sum = 0.0;
        for (k, state) in states.iter_mut().enumerate() {
            let mut pose = w.ik_pose(k)?;
            let r = placement.solve(&mut pose, &ground, 0.0, 1.0 / 60.0, state)?;
            sum += r.pelvis_offset + pose.position(placement.legs[0].ankle)?.y;
        }
        Ok::<f32, Error>(sum)
    });
}
