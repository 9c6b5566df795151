//! PD joint controllers: simulated joints that track the animated pose.
//!
//! Each joint's simulated local rotation `q` (state in [`PdState`], owned
//! by the caller) is driven towards the animated local rotation `q_t` by a
//! torque
//!
//! ```text
//! τ = kp · e − kd · ω,    e = log(q_t · q⁻¹)   (short arc, radians)
//! ```
//!
//! where `e` is the rotation error in axis-angle form and `ω` the angular
//! velocity, both 3-vectors in the joint's parent frame (the frame local
//! rotations are expressed in). `|τ|` is clamped to the joint's torque
//! limit. The joint's inertia is that of a uniform rod of the bone's mass
//! `m` and length `L` turning about its end, `I = m L² / 3`, taken the same
//! about every axis (a simplification: a real rod barely resists twisting
//! about its own length). With `kd = 2 √(kp I)` the linearised joint is a
//! critically damped spring: released from an offset it settles onto its
//! target without overshoot.
//!
//! Each frame's `dt` is cut into sub-steps ([`SubSteps`]) of at most the
//! job's `max_step`, shortened further where the stiffest joint needs it
//! (`h √(kp/I) ≤ 0.5` and `h kd / I ≤ 1`, where the semi-implicit step is
//! stable and, with critical gains, does not ring); each sub-step is
//! semi-implicit (symplectic) Euler:
//!
//! ```text
//! ω ← ω + (τ / I) h
//! q ← normalise(exp(ω h) · q)
//! ```
//!
//! The output pose is the animated pose with each joint's rotation
//! replaced by a blend between the animated (weight 0) and the simulated
//! (weight 1) rotation (normalised lerp along the short arc in between).
//! Joints are independent (local rotations only), so the result does not
//! depend on joint order; it is the same bits on every run.

use crate::ik::solve::{exp as rotation_exp, log as rotation_log};
use crate::math::{Quat, Vec3};
use crate::secondary::SubSteps;
use crate::skeleton::Skeleton;
use crate::soa::{check_len, soa_count, SoaTransform, LANES};
use crate::Error;

/// Largest `kp / I` (1/s²) and `kd / I` (1/s) a joint may have: bounds
/// the sub-step count and keeps every product finite.
pub const MAX_GAIN_PER_INERTIA: f32 = 1e12;

/// One joint's controller settings. Plain data (`#[repr(C)]`).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct PdJoint {
    /// Stiffness, torque per radian of error (N·m/rad with SI masses and
    /// lengths), finite and ≥ 0.
    pub kp: f32,
    /// Damping, torque per rad/s (N·m·s/rad), finite and ≥ 0.
    pub kd: f32,
    /// Bone mass (kg), finite and > 0.
    pub mass: f32,
    /// Bone length (m), finite and > 0.
    pub length: f32,
    /// Largest torque magnitude (N·m), ≥ 0; `f32::INFINITY` for none.
    pub torque_limit: f32,
    /// Output blend: 0 the animation, 1 the simulation, in `[0, 1]`.
    pub weight: f32,
}

impl PdJoint {
    /// A fully simulated joint with critically damped gains for stiffness
    /// `kp`: `kd = 2 √(kp I)`, no torque limit, weight 1.
    ///
    /// # Errors
    /// As [`PdJoint::validate`].
    pub fn critical(kp: f32, mass: f32, length: f32) -> Result<PdJoint, Error> {
        let inertia = rod_inertia(mass, length);
        let j = PdJoint {
            kp,
            kd: 2.0 * crate::math::sqrt_f32(kp * inertia),
            mass,
            length,
            torque_limit: f32::INFINITY,
            weight: 1.0,
        };
        j.validate()?;
        Ok(j)
    }

    /// A fully simulated joint whose linearised motion is the critically
    /// damped spring of [`super::spring::SpringParams::half_life`]: `ω0 =
    /// 2 ln 2 / half_life`, `kp = I ω0²`, `kd = 2 I ω0` (released at rest
    /// from an error `e`, the error is about `0.6 e` after one half-life
    /// and `0.24 e` after two). No torque limit, weight 1.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a `half_life` that is not finite and
    /// positive, and as [`PdJoint::validate`].
    pub fn from_half_life(half_life: f32, mass: f32, length: f32) -> Result<PdJoint, Error> {
        if !(half_life.is_finite() && half_life > 0.0) {
            return Err(Error::InvalidParameter {
                what: "PD half-life must be finite and > 0",
            });
        }
        let inertia = rod_inertia(mass, length);
        let w = 2.0 * core::f32::consts::LN_2 / half_life;
        let j = PdJoint {
            kp: inertia * w * w,
            kd: 2.0 * inertia * w,
            mass,
            length,
            torque_limit: f32::INFINITY,
            weight: 1.0,
        };
        j.validate()?;
        Ok(j)
    }

    /// This joint with torque limit `limit` (N·m, ≥ 0; checked by
    /// [`PdJoint::validate`]).
    #[inline]
    #[must_use]
    pub const fn with_torque_limit(self, limit: f32) -> PdJoint {
        PdJoint {
            torque_limit: limit,
            ..self
        }
    }

    /// This joint with output weight `weight` (in `[0, 1]`; checked by
    /// [`PdJoint::validate`]).
    #[inline]
    #[must_use]
    pub const fn with_weight(self, weight: f32) -> PdJoint {
        PdJoint { weight, ..self }
    }

    /// The moment of inertia, `mass · length² / 3` (a uniform rod about
    /// its end), kg·m².
    #[inline]
    #[must_use]
    pub fn inertia(&self) -> f32 {
        rod_inertia(self.mass, self.length)
    }

    /// Checks the settings.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] when `kp` or `kd` is negative or not
    /// finite, `mass` or `length` is not finite and positive (a zero-length
    /// bone has no inertia), the inertia is not a finite positive number,
    /// `kp / I` or `kd / I` exceeds [`MAX_GAIN_PER_INERTIA`],
    /// `torque_limit` is negative or NaN, or `weight` is outside `[0, 1]`.
    pub fn validate(&self) -> Result<(), Error> {
        let gain = |g: f32| g.is_finite() && g >= 0.0;
        if !(gain(self.kp) && gain(self.kd)) {
            return Err(Error::InvalidParameter {
                what: "PD gains kp and kd must be finite and >= 0",
            });
        }
        let positive = |x: f32| x.is_finite() && x > 0.0;
        if !(positive(self.mass) && positive(self.length)) {
            return Err(Error::InvalidParameter {
                what: "PD joint mass and bone length must be finite and > 0",
            });
        }
        let inertia = self.inertia();
        if !positive(inertia) {
            return Err(Error::InvalidParameter {
                what: "PD joint inertia (mass * length^2 / 3) must be finite and > 0",
            });
        }
        if !(self.kp / inertia <= MAX_GAIN_PER_INERTIA && self.kd / inertia <= MAX_GAIN_PER_INERTIA)
        {
            return Err(Error::InvalidParameter {
                what: "PD gains per inertia must be at most MAX_GAIN_PER_INERTIA",
            });
        }
        if self.torque_limit.is_nan() || self.torque_limit < 0.0 {
            return Err(Error::InvalidParameter {
                what: "PD torque limit must be >= 0",
            });
        }
        if !(0.0..=1.0).contains(&self.weight) {
            return Err(Error::InvalidParameter {
                what: "PD weight must be in 0..=1",
            });
        }
        Ok(())
    }

    /// The longest stable sub-step for this joint, seconds (infinite when
    /// it has no gains).
    fn stable_step(&self) -> f32 {
        let inertia = self.inertia();
        let stiff = 0.5 / crate::math::sqrt_f32(self.kp / inertia);
        let damp = inertia / self.kd;
        stiff.min(damp)
    }
}

#[inline]
fn rod_inertia(mass: f32, length: f32) -> f32 {
    mass * length * length * (1.0 / 3.0)
}

/// One joint's simulated state: plain data in a caller slice, one per
/// joint, carried from frame to frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct PdState {
    /// Simulated local rotation (unit quaternion).
    pub rotation: Quat,
    /// Angular velocity in the parent's frame, rad/s.
    pub angular_velocity: Vec3,
}

impl PdState {
    /// A joint at rest at `rotation`.
    #[inline]
    #[must_use]
    pub const fn at(rotation: Quat) -> PdState {
        PdState {
            rotation,
            angular_velocity: Vec3::ZERO,
        }
    }
}

/// Sets every joint's state to rest at its rotation in `pose` (the first
/// frame, or a teleport). `state.len()` is the joint count.
///
/// # Errors
/// [`Error::BadLength`] unless `pose.len() == soa_count(state.len())`.
pub fn reset(pose: &[SoaTransform], state: &mut [PdState]) -> Result<(), Error> {
    check_len("PD pose", soa_count(state.len()), pose.len())?;
    for (j, s) in state.iter_mut().enumerate() {
        *s = PdState::at(pose[j / LANES].rotation.get(j));
    }
    Ok(())
}

/// Bone lengths from a skeleton's rest pose, for [`PdJoint::length`]:
/// `out[j]` is the longest rest offset of `j`'s children from `j`, or for
/// a joint without a child at a non-zero distance (a leaf) its own rest
/// offset from its parent. Scale is ignored. A lone root gets 0.
///
/// # Errors
/// [`Error::BadLength`] unless `out.len()` is the joint count.
pub fn rest_bone_lengths(skeleton: &Skeleton<'_>, out: &mut [f32]) -> Result<(), Error> {
    let n = skeleton.joint_count();
    check_len("bone lengths", n, out.len())?;
    let rest = skeleton.rest_pose();
    let offset = |j: usize| rest[j / LANES].translation.get(j).length();
    out.fill(0.0);
    for c in 0..n {
        if let Some(p) = skeleton.parent(c) {
            out[p] = out[p].max(offset(c));
        }
    }
    for (j, l) in out.iter_mut().enumerate() {
        if *l == 0.0 && skeleton.parent(j).is_some() {
            *l = offset(j);
        }
    }
    Ok(())
}

/// One frame of PD control.
#[derive(Clone, Copy, Debug)]
pub struct PdJob<'a> {
    /// Per-joint settings; its length is the joint count.
    pub joints: &'a [PdJoint],
    /// The animated local pose, `soa_count(joints.len())` blocks: the
    /// targets, and the translations and scales of the output.
    pub animated: &'a [SoaTransform],
    /// The frame's time step, seconds (finite, > 0).
    pub dt: f32,
    /// Longest sub-step, seconds (finite, > 0).
    pub max_step: f32,
    /// Most sub-steps per frame (≥ 1); a longer frame is clamped and the
    /// dropped time reported.
    pub max_substeps: u32,
}

impl<'a> PdJob<'a> {
    /// A job with sub-steps of at most 1/240 s, at most 16 of them (a
    /// frame of up to 1/15 s is simulated in full).
    #[must_use]
    pub fn new(joints: &'a [PdJoint], animated: &'a [SoaTransform], dt: f32) -> PdJob<'a> {
        PdJob {
            joints,
            animated,
            dt,
            max_step: 1.0 / 240.0,
            max_substeps: 16,
        }
    }
}

/// Advances every joint's state by `job.dt` and writes the blended local
/// pose into `out` (every block: the animated pose with each joint's
/// rotation blended; padding lanes are copied from the animated pose).
/// Returns how the frame was cut ([`SubSteps::dropped`] > 0 when it was
/// longer than `max_substeps` stable sub-steps and was clamped).
///
/// # Errors
/// [`Error::BadLength`] unless `state.len() == job.joints.len()` and
/// `job.animated` and `out` have `soa_count(job.joints.len())` blocks;
/// what [`PdJoint::validate`] reports for any joint; [`Error::NonFinite`]
/// for a non-finite animated rotation or state; [`Error::InvalidParameter`]
/// for a zero animated or state rotation, or a `dt`, `max_step` or
/// `max_substeps` that [`SubSteps::split`] rejects. On error neither
/// `state` nor `out` is written.
pub fn step(
    job: &PdJob<'_>,
    state: &mut [PdState],
    out: &mut [SoaTransform],
) -> Result<SubSteps, Error> {
    let n = job.joints.len();
    check_len("PD state", n, state.len())?;
    check_len("PD animated pose", soa_count(n), job.animated.len())?;
    check_len("PD output pose", soa_count(n), out.len())?;
    // Checked here, not only by `SubSteps::split`: the stability bound
    // below is a `min`, which would let a NaN `max_step` through.
    if !(job.max_step.is_finite() && job.max_step > 0.0) {
        return Err(Error::InvalidParameter {
            what: "maximum sub-step must be finite and positive",
        });
    }
    let mut max_step = job.max_step;
    for (j, (joint, s)) in job.joints.iter().zip(state.iter()).enumerate() {
        joint.validate()?;
        max_step = max_step.min(joint.stable_step());
        let target = job.animated[j / LANES].rotation.get(j);
        if !(target.is_finite() && s.rotation.is_finite() && s.angular_velocity.is_finite()) {
            return Err(Error::NonFinite {
                what: "PD animated rotation or joint state",
            });
        }
        if !(target.length() > 1e-6 && s.rotation.length() > 1e-6) {
            return Err(Error::InvalidParameter {
                what: "PD animated and state rotations must be non-zero quaternions",
            });
        }
    }
    let sub = SubSteps::split(job.dt, max_step, job.max_substeps)?;
    out.copy_from_slice(job.animated);
    let h = sub.step;
    for (j, (joint, s)) in job.joints.iter().zip(state.iter_mut()).enumerate() {
        let target = job.animated[j / LANES].rotation.get(j);
        let target = target.scale(1.0 / target.length());
        let inv_inertia = 1.0 / joint.inertia();
        let mut q = s.rotation.scale(1.0 / s.rotation.length());
        let mut w = s.angular_velocity;
        for _ in 0..sub.count {
            let e = rotation_log(target * q.conjugate());
            let mut tau = e * joint.kp - w * joint.kd;
            let mag = tau.length();
            if mag > joint.torque_limit {
                tau = tau * (joint.torque_limit / mag);
            }
            w = w + tau * (inv_inertia * h);
            q = (rotation_exp(w * h) * q).normalize();
        }
        *s = PdState {
            rotation: q,
            angular_velocity: w,
        };
        let blended = if joint.weight == 0.0 {
            job.animated[j / LANES].rotation.get(j)
        } else if joint.weight == 1.0 {
            q
        } else {
            target.nlerp(q, joint.weight)
        };
        out[j / LANES].rotation.set(j, blended);
    }
    Ok(sub)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::Transform;

    const MASS: f32 = 2.0;
    const LENGTH: f32 = 0.4;

    /// One joint animated at `target`, simulated from `start` at rest.
    fn single(target: Quat) -> [SoaTransform; 1] {
        let mut pose = [SoaTransform::IDENTITY];
        pose[0].set(0, &Transform::from_translation_rotation(Vec3::X, target));
        pose
    }

    /// The angle between two rotations, accurate near zero (unlike
    /// `acos` of their dot product).
    fn error_angle(a: Quat, b: Quat) -> f32 {
        rotation_log(b * a.conjugate()).length()
    }

    /// Runs `frames` frames of `dt`; returns each frame's error angle.
    fn settle(joint: PdJoint, start: Quat, target: Quat, frames: usize, dt: f32) -> [f32; 256] {
        let anim = single(target);
        let mut state = [PdState::at(start)];
        let mut out = [SoaTransform::IDENTITY];
        let joints = [joint];
        let job = PdJob::new(&joints, &anim, dt);
        let mut angles = [0.0; 256];
        for a in angles.iter_mut().take(frames) {
            step(&job, &mut state, &mut out).unwrap();
            *a = error_angle(state[0].rotation, target);
        }
        angles
    }

    #[test]
    fn critical_gains_settle_without_overshoot() {
        let axis = Vec3::new(1.0, 2.0, -2.0).try_normalize().unwrap();
        let target = Quat::from_axis_angle(Vec3::Y, 0.4);
        for (joint, offset) in [
            (PdJoint::critical(50.0, MASS, LENGTH).unwrap(), 1.2),
            (PdJoint::critical(5.0, MASS, LENGTH).unwrap(), 0.3),
            (PdJoint::from_half_life(0.1, MASS, LENGTH).unwrap(), 2.5),
        ] {
            let start = Quat::from_axis_angle(axis, offset) * target;
            let a = settle(joint, start, target, 240, 1.0 / 60.0);
            let mut prev = error_angle(start, target);
            for (f, &x) in a.iter().take(240).enumerate() {
                assert!(x <= prev + 1e-4, "frame {f}: {x} > {prev}");
                prev = x;
            }
            assert!(prev < 2e-3, "{joint:?}: {prev}");
        }
    }

    #[test]
    fn the_half_life_joint_follows_the_critical_spring() {
        // Small errors: the joint is the linear spring of the same
        // half-life (0.597 of the error left after one half-life).
        let j = PdJoint::from_half_life(0.2, MASS, LENGTH).unwrap();
        let a = settle(
            j,
            Quat::from_rotation_z(0.01),
            Quat::IDENTITY,
            12,
            1.0 / 60.0,
        );
        assert!((a[11] / 0.01 - 0.597).abs() < 0.01, "{}", a[11] / 0.01);
    }

    #[test]
    fn under_damped_gains_overshoot() {
        // The same check fails when damping is too weak: the error angle
        // grows again after passing through the target.
        let j = PdJoint {
            kd: 0.1 * PdJoint::critical(50.0, MASS, LENGTH).unwrap().kd,
            ..PdJoint::critical(50.0, MASS, LENGTH).unwrap()
        };
        let a = settle(
            j,
            Quat::from_rotation_x(1.0),
            Quat::IDENTITY,
            120,
            1.0 / 60.0,
        );
        assert!(a.windows(2).take(119).any(|w| w[1] > w[0] + 1e-3));
    }

    #[test]
    fn torque_limit_bounds_the_acceleration() {
        let limit = 0.5;
        let j = PdJoint::critical(400.0, MASS, LENGTH)
            .unwrap()
            .with_torque_limit(limit);
        let alpha = limit / j.inertia();
        let anim = single(Quat::IDENTITY);
        let mut state = [PdState::at(Quat::from_rotation_x(2.0))];
        let mut out = [SoaTransform::IDENTITY];
        let joints = [j];
        let dt = 1.0 / 60.0;
        let job = PdJob::new(&joints, &anim, dt);
        let mut prev = Vec3::ZERO;
        for f in 0..30 {
            step(&job, &mut state, &mut out).unwrap();
            let w = state[0].angular_velocity;
            let acc = (w - prev).length() / dt;
            assert!(acc <= alpha * (1.0 + 1e-4), "frame {f}: {acc} > {alpha}");
            if f == 0 {
                // Far from the target the limit is what drives it.
                assert!(acc > 0.99 * alpha);
            }
            prev = w;
        }
        // Without the limit the same start accelerates much harder.
        let free = [PdJoint::critical(400.0, MASS, LENGTH).unwrap()];
        let mut state = [PdState::at(Quat::from_rotation_x(2.0))];
        step(&PdJob::new(&free, &anim, dt), &mut state, &mut out).unwrap();
        assert!(state[0].angular_velocity.length() / dt > 10.0 * alpha);
    }

    #[test]
    fn weight_blends_animation_and_simulation() {
        let targets = [
            Quat::from_rotation_y(0.3),
            Quat::from_rotation_x(-0.2),
            Quat::new(-0.0, 0.0, -0.0, -1.0),
            Quat::from_rotation_z(1.0),
            Quat::from_rotation_y(-0.7),
        ];
        let mut anim = [SoaTransform::IDENTITY; 2];
        for (j, &q) in targets.iter().enumerate() {
            let t = Transform::new(Vec3::new(j as f32, 1.0, 2.0), q, Vec3::splat(1.5));
            anim[j / 4].set(j, &t);
        }
        let base = PdJoint::critical(30.0, MASS, LENGTH).unwrap();
        let joints = targets.map(|_| base.with_weight(0.0));
        let start = [PdState::at(Quat::from_rotation_z(0.5)); 5];
        let mut state = start;
        let mut out = [SoaTransform::IDENTITY; 2];
        let job = PdJob::new(&joints, &anim, 1.0 / 30.0);
        step(&job, &mut state, &mut out).unwrap();
        // Weight 0: the animation, bit for bit (padding lanes too).
        let bits = |p: &[SoaTransform]| -> [u32; 80] {
            let f: &[f32] = bytemuck::cast_slice(p);
            core::array::from_fn(|i| f[i].to_bits())
        };
        assert_eq!(bits(&out), bits(&anim));
        // Weight 1: the simulated rotation exactly; translation and scale
        // from the animation.
        let joints = targets.map(|_| base.with_weight(1.0));
        let mut state = start;
        step(
            &PdJob {
                joints: &joints,
                ..job
            },
            &mut state,
            &mut out,
        )
        .unwrap();
        for (j, s) in state.iter().enumerate() {
            let t = out[j / 4].get(j);
            assert_eq!(t.rotation.to_array(), s.rotation.to_array());
            assert_eq!(t.translation, anim[j / 4].get(j).translation);
            assert_eq!(t.scale, Vec3::splat(1.5));
        }
        // In between: between the two.
        let joints = targets.map(|_| base.with_weight(0.5));
        let mut half = start;
        step(
            &PdJob {
                joints: &joints,
                ..job
            },
            &mut half,
            &mut out,
        )
        .unwrap();
        for (j, s) in half.iter().enumerate() {
            let r = out[j / 4].get(j).rotation;
            let (a, b) = (r.angle_between(targets[j]), r.angle_between(s.rotation));
            assert!((a - b).abs() < 1e-3, "{j}: {a} {b}");
        }
    }

    #[test]
    fn runs_are_bit_identical() {
        let targets = [
            Quat::from_rotation_y(0.3),
            Quat::from_axis_angle(Vec3::new(0.6, 0.8, 0.0), 2.9),
            Quat::from_rotation_z(-1.0),
        ];
        let mut anim = [SoaTransform::IDENTITY];
        for (j, &q) in targets.iter().enumerate() {
            anim[0].set(j, &Transform::from_translation_rotation(Vec3::ZERO, q));
        }
        let joints = [
            PdJoint::critical(20.0, 1.0, 0.3).unwrap(),
            PdJoint::from_half_life(0.05, 3.0, 0.5)
                .unwrap()
                .with_torque_limit(2.0)
                .with_weight(0.7),
            PdJoint {
                kd: 0.01,
                ..PdJoint::critical(80.0, 0.5, 0.2).unwrap()
            },
        ];
        let run = || {
            let mut state = [PdState::at(Quat::IDENTITY); 3];
            let mut out = [SoaTransform::IDENTITY];
            for f in 0..100 {
                let dt = [1.0 / 60.0, 1.0 / 30.0, 0.2][f % 3];
                step(&PdJob::new(&joints, &anim, dt), &mut state, &mut out).unwrap();
            }
            (state, out)
        };
        let (a, b) = (run(), run());
        let bits = |s: &[PdState; 3]| s.map(|s| s.rotation.to_array().map(f32::to_bits));
        assert_eq!(bits(&a.0), bits(&b.0));
        assert_eq!(
            bytemuck::cast_slice::<_, u32>(&a.1),
            bytemuck::cast_slice::<_, u32>(&b.1)
        );
    }

    #[test]
    fn a_hitch_is_clamped_reported_and_stays_finite() {
        let joints = [PdJoint::critical(1000.0, MASS, LENGTH).unwrap()];
        let anim = single(Quat::IDENTITY);
        let mut state = [PdState::at(Quat::from_rotation_x(3.0))];
        let mut out = [SoaTransform::IDENTITY];
        let sub = step(&PdJob::new(&joints, &anim, 5.0), &mut state, &mut out).unwrap();
        assert!(sub.clamped() && sub.count == 16);
        assert!(sub.dropped > 4.0);
        // The stiff joint shortened the sub-step below 1/240 s.
        let w0 = libm::sqrtf(1000.0 / joints[0].inertia());
        assert!(sub.step * w0 <= 0.5 + 1e-6);
        assert!(state[0].rotation.is_finite() && state[0].angular_velocity.is_finite());
        assert!(out[0].is_finite());
        // An ordinary frame is not clamped.
        let soft = [PdJoint::critical(1.0, MASS, LENGTH).unwrap()];
        let sub = step(&PdJob::new(&soft, &anim, 1.0 / 60.0), &mut state, &mut out).unwrap();
        assert!(!sub.clamped() && sub.count == 4);
    }

    #[test]
    fn bad_input_is_an_error_and_writes_nothing() {
        let good = PdJoint::critical(10.0, MASS, LENGTH).unwrap();
        let bad = [
            PdJoint { kp: -1.0, ..good },
            PdJoint {
                kp: f32::NAN,
                ..good
            },
            PdJoint { kd: -1.0, ..good },
            PdJoint {
                kd: f32::INFINITY,
                ..good
            },
            PdJoint { mass: -1.0, ..good },
            PdJoint { mass: 0.0, ..good },
            PdJoint {
                mass: f32::NAN,
                ..good
            },
            PdJoint {
                length: 0.0,
                ..good
            },
            PdJoint {
                length: -0.1,
                ..good
            },
            PdJoint {
                length: f32::NAN,
                ..good
            },
            PdJoint { kp: 1e30, ..good },
            good.with_torque_limit(-1.0),
            good.with_torque_limit(f32::NAN),
            good.with_weight(1.5),
            good.with_weight(-0.1),
            good.with_weight(f32::NAN),
        ];
        let anim = single(Quat::from_rotation_x(0.5));
        let start = [PdState::at(Quat::IDENTITY)];
        let sentinel = [SoaTransform::default()];
        for j in bad {
            assert!(j.validate().is_err(), "{j:?}");
            let (mut state, mut out) = (start, sentinel);
            let joints = [j];
            assert!(matches!(
                step(&PdJob::new(&joints, &anim, 0.1), &mut state, &mut out),
                Err(Error::InvalidParameter { .. })
            ));
            assert_eq!((state, out), (start, sentinel));
        }
        assert!(PdJoint::critical(1.0, 1.0, 0.0).is_err());
        assert!(PdJoint::critical(-1.0, 1.0, 1.0).is_err());
        assert!(PdJoint::from_half_life(0.0, 1.0, 1.0).is_err());
        assert!(PdJoint::from_half_life(f32::NAN, 1.0, 1.0).is_err());
        assert!(good.with_torque_limit(f32::INFINITY).validate().is_ok());

        let joints = [good];
        let check = |job: PdJob<'_>, state: &mut [PdState], out: &mut [SoaTransform]| {
            let (s0, o0) = (state[0], out[0]);
            let r = step(&job, state, out);
            assert_eq!((state[0], out[0]), (s0, o0));
            r
        };
        let (mut state, mut out) = (start, sentinel);
        for dt in [0.0, -1.0, f32::NAN, f32::INFINITY] {
            let r = check(PdJob::new(&joints, &anim, dt), &mut state, &mut out);
            assert!(matches!(r, Err(Error::InvalidParameter { .. })), "{dt}");
        }
        let job = PdJob::new(&joints, &anim, 0.1);
        assert!(check(
            PdJob {
                max_substeps: 0,
                ..job
            },
            &mut state,
            &mut out
        )
        .is_err());
        for max_step in [0.0, -1.0, f32::NAN, f32::INFINITY] {
            let r = check(PdJob { max_step, ..job }, &mut state, &mut out);
            assert!(
                matches!(r, Err(Error::InvalidParameter { .. })),
                "{max_step}"
            );
        }
        // Lengths.
        let two = [good; 2];
        assert!(matches!(
            check(PdJob::new(&two, &anim, 0.1), &mut state, &mut out),
            Err(Error::BadLength { .. })
        ));
        assert!(matches!(
            check(PdJob::new(&joints, &[], 0.1), &mut state, &mut out),
            Err(Error::BadLength { .. })
        ));
        assert!(matches!(
            step(&job, &mut state, &mut []),
            Err(Error::BadLength { .. })
        ));
        // Non-finite or zero rotations.
        let nan = single(Quat::new(f32::NAN, 0.0, 0.0, 1.0));
        assert!(matches!(
            check(PdJob::new(&joints, &nan, 0.1), &mut state, &mut out),
            Err(Error::NonFinite { .. })
        ));
        let zero = single(Quat::new(0.0, 0.0, 0.0, 0.0));
        assert!(matches!(
            check(PdJob::new(&joints, &zero, 0.1), &mut state, &mut out),
            Err(Error::InvalidParameter { .. })
        ));
        let mut moving = [PdState {
            angular_velocity: Vec3::new(0.0, f32::NAN, 0.0),
            ..start[0]
        }];
        assert!(matches!(
            step(&job, &mut moving, &mut out),
            Err(Error::NonFinite { .. })
        ));
        assert_eq!(out, sentinel);
    }

    #[test]
    fn reset_and_bone_lengths() {
        let anim = single(Quat::from_rotation_y(0.25));
        let mut state = [PdState::default()];
        reset(&anim, &mut state).unwrap();
        assert_eq!(state[0], PdState::at(Quat::from_rotation_y(0.25)));
        assert!(reset(&anim, &mut []).is_err());

        let bytes = crate::procedural::humanoid_skeleton_bytes().unwrap();
        let skel = Skeleton::from_bytes(&bytes.0).unwrap();
        let mut lengths = [0.0; crate::procedural::HUMANOID_JOINT_COUNT];
        rest_bone_lengths(&skel, &mut lengths).unwrap();
        for (j, &l) in lengths.iter().enumerate() {
            assert!(l.is_finite() && l >= 0.0);
            if skel.parent(j).is_some() {
                assert!(l > 0.0, "{j}");
            }
        }
        assert!(rest_bone_lengths(&skel, &mut lengths[1..]).is_err());
    }
}
