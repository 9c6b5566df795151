//! Transitions between two animations: cross-fade and inertialization.
//!
//! **Inertialization** switches to the new animation at once and adds a
//! decaying offset so the output stays continuous in value and velocity. At
//! the switch, per joint: the translation offset `o = t_old − t_new` becomes
//! a magnitude `x0 = |o|` along a fixed direction; the rotation offset
//! `q0 = q_old · q_new⁻¹` becomes an angle `x0` about a fixed axis. Offset
//! velocities `v0` come from the previous frames (`(x0 − x_prev) / dt`,
//! projected on the same direction/axis) and are clamped to 0 when they move
//! away from zero. Each frame the offset is added back:
//! `t = t_new + dir · x(t)`, `q = axis_angle(axis, x(t)) · q_new`, with
//!
//! - [`Decay::Quintic`]: `x(s) = x0 + V s − (10 x0 + 6V) s³ + (15 x0 + 8V) s⁴ − (6 x0 + 3V) s⁵`,
//!   `s = min(t / T, 1)`, `V = v0 · T`, reaching 0 with zero velocity and
//!   acceleration at `T`. Per joint `T` is clamped to `−2.5 x0 / v0` so the
//!   offset cannot overshoot zero: `x(s) = (1−s)³ [x0 (1 + 3s + 6s²) + V s (1 + 3s)]`
//!   keeps the sign of `x0` on `[0, 1]` exactly when `V >= −2.5 x0` (the
//!   often-quoted `−5 x0 / v0` only keeps the initial acceleration's sign and
//!   lets the tail dip past zero);
//! - [`Decay::Spring`]: the critically damped spring
//!   `x(t) = e^{−yt} (x0 + (v0 + y x0) t)`, `y = 2 ln 2 / half_life`.
//!
//! The state is one [`InertialBlock`] per SoA block, in memory the caller
//! owns; [`Inertializer`] is the per-character clock, a plain value.

use wide::f32x4;

use crate::error::Error;
use crate::fp::Fp;
use crate::math::{Quat, Vec3};
use crate::soa::detail::quat_mul;
use crate::soa::{check_len, SoaQuat, SoaTransform, SoaVec3, LANES};

/// Cross-fades two poses: `(1 − alpha) from + alpha to` (nlerp for rotations).
///
/// # Errors
/// [`Error::InvalidParameter`] (`alpha` not in `0..=1`), [`Error::BadLength`].
pub fn crossfade(
    from: &[SoaTransform],
    to: &[SoaTransform],
    alpha: f32,
    out: &mut [SoaTransform],
) -> Result<(), Error> {
    if !(0.0..=1.0).contains(&alpha) {
        return Err(Error::InvalidParameter {
            what: "cross-fade alpha must be in 0..=1",
        });
    }
    check_len("cross-fade target", from.len(), to.len())?;
    check_len("output", from.len(), out.len())?;
    crate::clip::interpolate(from, to, alpha, out);
    Ok(())
}

/// How an inertialization offset decays.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Decay {
    /// The quintic that reaches zero at the (clamped) duration.
    Quintic,
    /// A critically damped spring; the offset halves about every `half_life` seconds.
    Spring {
        /// Seconds, finite and `> 0`.
        half_life: f32,
    },
}

/// Inertialization state of four joints: per channel the offset `x0`, the
/// quintic's coefficients and `1 / T`.
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct InertialBlock {
    /// Unit direction of the translation offset.
    pub t_dir: SoaVec3,
    /// Translation channel `[x0, V, −(10x0+6V), 15x0+8V, −(6x0+3V), 1/T]`.
    pub t: [f32x4; 6],
    /// Unit axis of the rotation offset.
    pub r_axis: SoaVec3,
    /// Rotation channel (angle in radians), same layout as `t`.
    pub r: [f32x4; 6],
}

/// Everything [`start`] needs at the switch.
#[derive(Clone, Copy, Debug)]
pub struct SwitchJob<'a> {
    /// The old animation's pose now.
    pub old: &'a [SoaTransform],
    /// The old animation's pose `dt` earlier.
    pub old_prev: &'a [SoaTransform],
    /// The new animation's pose now.
    pub new: &'a [SoaTransform],
    /// The new animation's pose `dt` earlier (pass `new` if unknown).
    pub new_prev: &'a [SoaTransform],
    /// Seconds between the two frames, `> 0`.
    pub dt: f32,
    /// Blend time `T` in seconds, `> 0` (per joint it may be shortened).
    pub duration: f32,
}

impl<'a> SwitchJob<'a> {
    /// The job from its fields, in the order they are declared: the old
    /// animation's pose now and `dt` earlier, the new animation's pose now
    /// and `dt` earlier (pass `new` again if unknown), `dt`, and the blend
    /// time `duration`. Nothing is checked here; [`start`] checks.
    ///
    /// ```
    /// use sinew_core::mix::transition::SwitchJob;
    /// use sinew_core::SoaTransform;
    ///
    /// let pose = [SoaTransform::IDENTITY; 2];
    /// let (old, old_prev, new) = (pose, pose, pose);
    /// let job = SwitchJob::new(&old, &old_prev, &new, &new, 1.0 / 60.0, 0.3);
    /// assert_eq!((job.dt, job.duration), (1.0 / 60.0, 0.3));
    /// assert!(core::ptr::eq(job.new_prev, &new[..]));
    /// ```
    #[inline]
    #[must_use]
    pub fn new(
        old: &'a [SoaTransform],
        old_prev: &'a [SoaTransform],
        new: &'a [SoaTransform],
        new_prev: &'a [SoaTransform],
        dt: f32,
        duration: f32,
    ) -> Self {
        SwitchJob {
            old,
            old_prev,
            new,
            new_prev,
            dt,
            duration,
        }
    }
}

/// One channel of one joint: `(x0, v0, T)` after the clamps.
///
/// The channel is signed: a velocity moving the offset away from zero
/// (same sign as `x0`) is clamped to 0, and a velocity towards zero shortens
/// `T` to `−2.5 x0 / v0` so the offset cannot overshoot. A zero offset gives
/// nothing to decay: `(0, 0, duration)`.
#[must_use]
pub fn clamp_channel(x0: f32, v0: f32, duration: f32) -> (f32, f32, f32) {
    if x0 == 0.0 {
        return (0.0, 0.0, duration);
    }
    // Moving away from zero: clamp to 0.
    let v0 = if x0 > 0.0 {
        v0.min_num(0.0)
    } else {
        v0.max_num(0.0)
    };
    let t = if v0 != 0.0 {
        duration.min_num(-2.5 * x0 / v0)
    } else {
        duration
    };
    (x0, v0, t.max_num(1e-6))
}

/// The quintic coefficients `[x0, V, a, b, c, 1/T]` of a channel.
#[must_use]
pub fn quintic_coefficients(x0: f32, v0: f32, duration: f32) -> [f32; 6] {
    let v = v0 * duration;
    [
        x0,
        v,
        -(10.0 * x0 + 6.0 * v),
        15.0 * x0 + 8.0 * v,
        -(6.0 * x0 + 3.0 * v),
        1.0 / duration,
    ]
}

/// The quintic offset `x(s)` with `s = min(t / T, 1)`.
#[inline]
#[must_use]
pub fn quintic(c: &[f32; 6], t: f32) -> f32 {
    let s = (t * c[5]).clamp(0.0, 1.0);
    c[0] + s * (c[1] + s * s * (c[2] + s * (c[3] + s * c[4])))
}

/// The spring offset at `t` for decay rate `y = 2 ln 2 / half_life`.
#[inline]
#[must_use]
pub fn spring(c: &[f32; 6], y: f32, t: f32) -> f32 {
    let v0 = c[1] * c[5];
    libm::expf(-y * t) * (c[0] + (v0 + y * c[0]) * t)
}

fn check_job(job: &SwitchJob<'_>, n: usize) -> Result<(), Error> {
    if !(job.dt.is_finite() && job.dt > 0.0) {
        return Err(Error::InvalidParameter {
            what: "inertialization dt must be finite and > 0",
        });
    }
    if !(job.duration.is_finite() && job.duration > 0.0) {
        return Err(Error::InvalidParameter {
            what: "inertialization duration must be finite and > 0",
        });
    }
    check_len("old pose", n, job.old.len())?;
    check_len("old previous pose", n, job.old_prev.len())?;
    check_len("new pose", n, job.new.len())?;
    check_len("new previous pose", n, job.new_prev.len())
}

/// Records the offsets at a switch into `state` (one block per pose block)
/// and returns the longest per-joint duration. Runs once per switch, one
/// joint at a time.
///
/// # Errors
/// [`Error::InvalidParameter`] (`dt` or `duration` not finite and positive),
/// [`Error::BadLength`].
pub fn start(state: &mut [InertialBlock], job: &SwitchJob<'_>) -> Result<f32, Error> {
    check_job(job, state.len())?;
    let mut longest = 0.0f32;
    for (b, st) in state.iter_mut().enumerate() {
        let mut t_dir = [Vec3::X; LANES];
        let mut r_axis = [Vec3::X; LANES];
        let mut tc = [[0.0f32; 6]; LANES];
        let mut rc = [[0.0f32; 6]; LANES];
        for l in 0..LANES {
            let (old, oldp) = (job.old[b].get(l), job.old_prev[b].get(l));
            let (new, newp) = (job.new[b].get(l), job.new_prev[b].get(l));
            // Translation: magnitude along a fixed direction.
            let o = old.translation - new.translation;
            let op = oldp.translation - newp.translation;
            let x0 = o.length();
            let dir = if x0 > 1e-9 { o * (1.0 / x0) } else { Vec3::X };
            let v0 = (x0 - op.dot(dir)) / job.dt;
            let (x0, v0, dur) = clamp_channel(x0, v0, job.duration);
            tc[l] = quintic_coefficients(x0, v0, dur);
            t_dir[l] = dir;
            longest = longest.max_num(dur);
            // Rotation: angle about a fixed axis.
            let (axis, angle) = axis_angle(old.rotation * new.rotation.conjugate());
            let qp = oldp.rotation * newp.rotation.conjugate();
            let prev = twist_angle(qp, axis);
            let v0 = super::root_motion::wrap_angle(angle - prev) / job.dt;
            let (x0, v0, dur) = clamp_channel(angle, v0, job.duration);
            rc[l] = quintic_coefficients(x0, v0, dur);
            r_axis[l] = axis;
            longest = longest.max_num(dur);
        }
        let vec = |v: &[Vec3; LANES]| SoaVec3 {
            x: f32x4::new(v.map(|v| v.x)),
            y: f32x4::new(v.map(|v| v.y)),
            z: f32x4::new(v.map(|v| v.z)),
        };
        *st = InertialBlock {
            t_dir: vec(&t_dir),
            t: core::array::from_fn(|k| f32x4::new(tc.map(|c| c[k]))),
            r_axis: vec(&r_axis),
            r: core::array::from_fn(|k| f32x4::new(rc.map(|c| c[k]))),
        };
    }
    Ok(longest)
}

/// Unit axis and angle in `[0, π]` of `q` (taken with `w >= 0`); axis X for no rotation.
#[must_use]
pub fn axis_angle(q: Quat) -> (Vec3, f32) {
    let q = if q.w < 0.0 { -q } else { q };
    let v = Vec3::new(q.x, q.y, q.z);
    let s = v.length();
    if s < 1e-9 {
        (Vec3::X, 0.0)
    } else {
        (v * (1.0 / s), 2.0 * libm::atan2f(s, q.w))
    }
}

/// Angle of `q`'s rotation about `axis` (its twist), in `(−π, π]`.
#[must_use]
pub fn twist_angle(q: Quat, axis: Vec3) -> f32 {
    let p = Vec3::new(q.x, q.y, q.z).dot(axis);
    super::root_motion::wrap_angle(2.0 * libm::atan2f(p, q.w))
}

fn decay_rate(decay: Decay) -> Result<f32, Error> {
    match decay {
        Decay::Quintic => Ok(0.0),
        Decay::Spring { half_life } if half_life.is_finite() && half_life > 0.0 => {
            Ok(2.0 * core::f32::consts::LN_2 / half_life)
        }
        Decay::Spring { .. } => Err(Error::InvalidParameter {
            what: "spring half-life must be finite and > 0",
        }),
    }
}

fn check_apply(state: usize, pose: usize, t: f32, decay: Decay) -> Result<f32, Error> {
    if !(t.is_finite() && t >= 0.0) {
        return Err(Error::NonFinite { what: "time" });
    }
    check_len("pose", state, pose)?;
    decay_rate(decay)
}

/// `(sin x, cos x)` lane-wise for `|x| <= π/2` (half of an offset angle in
/// `[−π, π]`): minimax polynomials, error below 6e-7 on that range,
/// with no range reduction (inputs are clamped to it).
#[inline(always)]
fn sin_cos_half_turn(x: f32x4) -> (f32x4, f32x4) {
    let k = |v: f32| f32x4::splat(v);
    let lim = k(core::f32::consts::FRAC_PI_2);
    // Operand order keeps NaN: `min_lt`/`max_gt` return the second operand on NaN.
    let x = lim.min_lt((-lim).max_gt(x));
    // Minimax polynomials on [-π/2, π/2] (fitted offline by iteratively
    // reweighted least squares): sin to x⁷, max error 5.9e-7; cos to x⁸,
    // max error 4.7e-8. Estrin's scheme in y = x² keeps the chains short.
    let y = x * x;
    let y2 = y * y;
    let s01 = y.madd(k(-0.166_648_28), k(0.999_996_6));
    let s23 = y.madd(k(-0.000_183_636_54), k(0.008_306_325));
    let s = y2.madd(s23, s01) * x;
    let c01 = y.madd(k(-0.499_999_05), k(0.999_999_95));
    let c23 = y.madd(k(-0.001_385_370_4), k(0.041_663_585));
    let c4 = k(0.000_023_153_932);
    let c = y2.madd(y2.madd(c4, c23), c01);
    (s, c)
}

#[inline(always)]
fn channel(c: &[f32x4; 6], t: f32, y: f32, e: f32, quintic: bool) -> f32x4 {
    if quintic {
        // x = (c0 + c1 s) + s³ ((c2 + c3 s) + c4 s²), Estrin form.
        let s = f32x4::ONE.min_lt(f32x4::splat(t) * c[5]);
        let s2 = s * s;
        let s3 = s2 * s;
        let lo = s.madd(c[1], c[0]);
        let hi = s2.madd(c[4], s.madd(c[3], c[2]));
        s3.madd(hi, lo)
    } else {
        let v0 = c[1] * c[5];
        let y = f32x4::splat(y);
        f32x4::splat(e) * (v0 + y * c[0]).madd(f32x4::splat(t), c[0])
    }
}

/// Adds the offsets at `t` seconds after the switch to `pose` (the new
/// animation's pose), in place (SIMD).
///
/// # Errors
/// [`Error::NonFinite`] (`t` NaN, infinite or negative), [`Error::BadLength`],
/// [`Error::InvalidParameter`] (bad half-life).
pub fn apply(
    state: &[InertialBlock],
    t: f32,
    decay: Decay,
    pose: &mut [SoaTransform],
) -> Result<(), Error> {
    let y = check_apply(state.len(), pose.len(), t, decay)?;
    let quintic = decay == Decay::Quintic;
    let e = libm::expf(-y * t);
    let half = f32x4::splat(0.5);
    for (st, p) in state.iter().zip(pose.iter_mut()) {
        // Blocks whose offsets are all zero (joints the two animations agree
        // on, e.g. constant bone lengths) skip that channel: one compare.
        if !channel_is_zero(&st.t) {
            let xt = channel(&st.t, t, y, e, quintic);
            p.translation.x = st.t_dir.x.madd(xt, p.translation.x);
            p.translation.y = st.t_dir.y.madd(xt, p.translation.y);
            p.translation.z = st.t_dir.z.madd(xt, p.translation.z);
        }
        if !channel_is_zero(&st.r) {
            let xr = channel(&st.r, t, y, e, quintic);
            let (s, c) = sin_cos_half_turn(xr * half);
            let off = SoaQuat {
                x: st.r_axis.x * s,
                y: st.r_axis.y * s,
                z: st.r_axis.z * s,
                w: c,
            };
            p.rotation = quat_mul(&off, &p.rotation);
        }
    }
    Ok(())
}

/// True when every lane has `x0 = 0` and `V = 0` (then `x(t) = 0` for both decays).
#[inline(always)]
fn channel_is_zero(c: &[f32x4; 6]) -> bool {
    (c[0].simd_eq(f32x4::ZERO) & c[1].simd_eq(f32x4::ZERO)).all()
}

/// Per-character inertialization clock: the time since the switch, the
/// longest per-joint duration and the decay.
///
/// A plain value (`Copy`, `'static`, no borrow): it lives in any struct or
/// ECS component. The offsets themselves are one [`InertialBlock`] per pose
/// block in a buffer the caller owns and passes to [`Self::switch`] and
/// [`Self::update`]; pass the same buffer to both.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Inertializer {
    pub(crate) elapsed: f32,
    pub(crate) longest: f32,
    pub(crate) decay: Decay,
}

impl Inertializer {
    /// An idle inertializer.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] (bad half-life).
    pub fn new(decay: Decay) -> Result<Self, Error> {
        decay_rate(decay)?;
        Ok(Inertializer {
            elapsed: 0.0,
            longest: 0.0,
            decay,
        })
    }

    /// Records a switch into `state` (one block per pose block, see
    /// [`start`]); the next [`Self::update`] outputs the old pose.
    ///
    /// # Errors
    /// As [`start`]; on error the previous transition carries on.
    pub fn switch(
        &mut self,
        state: &mut [InertialBlock],
        job: &SwitchJob<'_>,
    ) -> Result<(), Error> {
        self.longest = start(state, job)?;
        self.elapsed = 0.0;
        Ok(())
    }

    /// True while an offset is still being added.
    #[must_use]
    pub fn is_active(&self) -> bool {
        match self.decay {
            Decay::Quintic => self.elapsed < self.longest,
            // 2^-20 of the offset left.
            Decay::Spring { half_life } => self.longest > 0.0 && self.elapsed < 20.0 * half_life,
        }
    }

    /// Seconds since the switch.
    #[must_use]
    pub fn elapsed(&self) -> f32 {
        self.elapsed
    }

    /// Adds the current offsets in `state` (written by [`Self::switch`]) to
    /// `pose` (the new animation's pose), then advances the clock by `dt`.
    /// Does nothing to `pose` once the transition is over.
    ///
    /// # Errors
    /// [`Error::NonFinite`] (`dt` negative or not finite), [`Error::BadLength`]
    /// unless `state` and `pose` have the same length.
    pub fn update(
        &mut self,
        state: &[InertialBlock],
        dt: f32,
        pose: &mut [SoaTransform],
    ) -> Result<(), Error> {
        if !(dt.is_finite() && dt >= 0.0) {
            return Err(Error::NonFinite { what: "dt" });
        }
        check_len("pose", state.len(), pose.len())?;
        if self.is_active() {
            apply(state, self.elapsed, self.decay, pose)?;
        }
        self.elapsed += dt;
        Ok(())
    }
}

/// Scalar reference implementations: the readable specification.
pub mod reference {
    use super::{check_apply, quintic, spring, Decay, Error, InertialBlock};
    use crate::math::{Quat, Transform, Vec3};
    use crate::soa::{SoaTransform, LANES};

    /// Scalar twin of [`super::apply`].
    ///
    /// # Errors
    /// As [`super::apply`].
    pub fn apply(
        state: &[InertialBlock],
        t: f32,
        decay: Decay,
        pose: &mut [SoaTransform],
    ) -> Result<(), Error> {
        let y = check_apply(state.len(), pose.len(), t, decay)?;
        for j in 0..pose.len() * LANES {
            let (b, l) = (j / LANES, j % LANES);
            let st = &state[b];
            let tc: [f32; 6] = core::array::from_fn(|k| st.t[k].as_array()[l]);
            let rc: [f32; 6] = core::array::from_fn(|k| st.r[k].as_array()[l]);
            let (xt, xr) = match decay {
                Decay::Quintic => (quintic(&tc, t), quintic(&rc, t)),
                Decay::Spring { .. } => (spring(&tc, y, t), spring(&rc, y, t)),
            };
            let p = pose[b].get(l);
            let dir = st.t_dir.get(l);
            let axis: Vec3 = st.r_axis.get(l);
            let xr = xr.clamp(-core::f32::consts::PI, core::f32::consts::PI);
            let off = Quat::from_axis_angle(axis, xr);
            let out = Transform::new(p.translation + dir * xt, off * p.rotation, p.scale);
            pose[b].set(l, &out);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Worked example: old elbow at 30° moving −45°/s, new at 10° moving
    /// +15°/s: x0 = 20°, v0 = −60°/s, T = 0.3 s; x(0.5) = 7.19°, elbow 19.44°.
    #[test]
    fn worked_example_elbow() {
        let (x0, v0, dur) = clamp_channel(20.0, -60.0, 0.3);
        assert_eq!((x0, v0, dur), (20.0, -60.0, 0.3));
        let c = quintic_coefficients(x0, v0, dur);
        assert!((c[1] + 18.0).abs() < 1e-4);
        let x = quintic(&c, 0.15);
        assert!((x - 7.1875).abs() < 1e-3, "{x}");
        assert!((10.0 + 15.0 * 0.15 + x - 19.44).abs() < 0.01);
        assert!(quintic(&c, 0.3).abs() < 1e-4);
        // Through the pose kernel: rotations about x, angles in radians.
        let deg = core::f32::consts::PI / 180.0;
        let dt = 1.0 / 60.0;
        let pose = |a: f32| {
            let mut p = [SoaTransform::IDENTITY];
            for l in 0..4 {
                p[0].rotation.set(l, Quat::from_rotation_x(a * deg));
            }
            p
        };
        let (old, oldp) = (pose(30.0), pose(30.0 + 45.0 * dt));
        let (new, newp) = (pose(10.0), pose(10.0 - 15.0 * dt));
        let mut state = [InertialBlock::default()];
        let job = SwitchJob {
            old: &old,
            old_prev: &oldp,
            new: &new,
            new_prev: &newp,
            dt,
            duration: 0.3,
        };
        start(&mut state, &job).unwrap();
        let mut out = pose(10.0 + 15.0 * 0.15);
        let mut scalar = out;
        apply(&state, 0.15, Decay::Quintic, &mut out).unwrap();
        reference::apply(&state, 0.15, Decay::Quintic, &mut scalar).unwrap();
        for p in [out, scalar] {
            let a = p[0].rotation.get(0).angle() / deg;
            assert!((a - 19.44).abs() < 0.02, "{a}");
        }
    }

    #[test]
    fn clamps() {
        // Moving away from zero: velocity clamped.
        assert_eq!(clamp_channel(1.0, 3.0, 0.5), (1.0, 0.0, 0.5));
        assert_eq!(clamp_channel(-1.0, -3.0, 0.5), (-1.0, 0.0, 0.5));
        // A negative offset moving towards zero keeps its velocity.
        let (x0, v0, t) = clamp_channel(-1.0, 50.0, 0.5);
        assert_eq!((x0, v0), (-1.0, 50.0));
        assert!((t - 0.05).abs() < 1e-6);
        // Fast approach: duration shortened so it cannot overshoot.
        let (_, _, t) = clamp_channel(1.0, -50.0, 0.5);
        assert!((t - 0.05).abs() < 1e-6);
        // At the bound the curve touches zero only at s = 1.
        let c = quintic_coefficients(1.0, -50.0, t);
        for i in 0..=100 {
            assert!(quintic(&c, t * i as f32 / 100.0) >= -1e-6);
        }
    }
}
