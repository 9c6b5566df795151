//! Spring-dampers for floats, vectors and rotations, integrated in closed
//! form.
//!
//! A spring pulls its value `x` towards a target `g(t)` with
//!
//! ```text
//! x'' = −ω² (x − g) − 2ζω (x' − g')
//! ```
//!
//! where `ω` is the angular frequency (rad/s) and `ζ` the damping ratio
//! (`ζ < 1` under-damped, `ζ = 1` critically damped, `ζ > 1` over-damped).
//! For a still target (`g' = 0`) this is the plain spring-damper
//! `x'' = −ω² (x − g) − 2ζω x'`. A moving target moves at a constant
//! velocity over each step (`g(t) = g0 + v t`); damping the velocity
//! relative to the target's lets the spring follow it without lagging.
//!
//! Each step is the exact solution of that equation over `dt` (not a
//! numerical integration), so the curve does not depend on how a span of
//! time is cut into steps: one step of 0.1 s and ten of 0.01 s end in the
//! same state up to `f32` rounding. The solution depends on `(ω, ζ, dt)`
//! only through four coefficients, [`SpringStep`], computed once and then
//! applied to any number of springs (that is what [`advance_lanes`] does
//! four springs at a time).
//!
//! Parameters, [`SpringParams`], are either a **half-life** (critically
//! damped) or a **frequency and damping ratio**; they are validated once, at
//! construction.
//!
//! Rotations ([`QuatSpring`]) spring the rotation error in axis-angle form:
//! the rotation vector `y = log(q · g⁻¹)` along the short arc (angle in
//! `[0, π]`) follows the equation above as a 3-vector, and the new rotation
//! is `exp(y) · g`. The velocity is the rate of change of `y`, in rad/s in
//! the frame the rotations are expressed in (it is the angular velocity for
//! motion about a fixed axis). Stepping is frame-rate independent as long
//! as the error stays below π (an under-damped spring that swings more than
//! half a turn past its target comes back along the then-shorter arc).

use wide::f32x4;

use crate::ik::solve::{exp as rotation_exp, log as rotation_log};
use crate::math::{Quat, Vec3};
use crate::soa::{all_finite, check_len};
use crate::Error;

/// Largest angular frequency `ω` a [`SpringParams`] accepts, rad/s (a
/// frequency of about 159 kHz, a half-life of about 1.4 µs). Bounding it
/// keeps `ω²` and the coefficients finite.
pub const MAX_ANGULAR_FREQUENCY: f32 = 1e6;

/// Largest damping ratio a [`SpringParams`] accepts. Bounding it keeps
/// `(ζω)²` finite.
pub const MAX_DAMPING_RATIO: f32 = 1e4;

/// Validated spring parameters: angular frequency `ω` and damping ratio
/// `ζ`, or a snap (half-life 0).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpringParams {
    /// `ω` in rad/s, `[0, MAX_ANGULAR_FREQUENCY]`; infinite for a snap.
    omega: f32,
    /// `ζ`, `[0, MAX_DAMPING_RATIO]`.
    zeta: f32,
}

impl SpringParams {
    /// A critically damped spring (`ζ = 1`) with `ω = 2 ln 2 / half_life`,
    /// the convention of foot placement and the inertialization spring.
    ///
    /// Precisely: released at rest at distance `d` from a still target, the
    /// distance after `t` seconds is `d (1 + ωt) e^{−ωt}`, which is
    /// `(1 + 2n ln 2) 4^{−n} d` after `n` half-lives: 0.597 d after one,
    /// 0.236 d after two, 0.078 d after three (on average about one halving
    /// per half-life over the first three), never crossing the target. A
    /// half-life of 0 snaps: the value jumps to the target and takes its
    /// velocity.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] when `half_life` is negative, NaN,
    /// infinite, or positive but below `2 ln 2 / MAX_ANGULAR_FREQUENCY`
    /// (about 1.4 µs).
    pub fn half_life(half_life: f32) -> Result<SpringParams, Error> {
        if !(half_life.is_finite() && half_life >= 0.0) {
            return Err(Error::InvalidParameter {
                what: "spring half-life must be finite and >= 0",
            });
        }
        if half_life == 0.0 {
            return Ok(SpringParams {
                omega: f32::INFINITY,
                zeta: 1.0,
            });
        }
        let omega = 2.0 * core::f32::consts::LN_2 / half_life;
        if omega > MAX_ANGULAR_FREQUENCY {
            return Err(Error::InvalidParameter {
                what: "spring half-life must be 0 or at least 2 ln 2 / MAX_ANGULAR_FREQUENCY",
            });
        }
        Ok(SpringParams { omega, zeta: 1.0 })
    }

    /// A spring of natural frequency `frequency` Hz (`ω = 2π · frequency`)
    /// and damping ratio `damping_ratio` (`< 1` oscillates, `1` is
    /// critically damped, `> 1` creeps). A frequency of 0 exerts no force:
    /// the value keeps its velocity relative to the target.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] when either is negative, NaN or
    /// infinite, `ω` exceeds [`MAX_ANGULAR_FREQUENCY`] or the damping ratio
    /// exceeds [`MAX_DAMPING_RATIO`].
    pub fn frequency(frequency: f32, damping_ratio: f32) -> Result<SpringParams, Error> {
        if !(frequency.is_finite() && frequency >= 0.0) {
            return Err(Error::InvalidParameter {
                what: "spring frequency must be finite and >= 0",
            });
        }
        if !(damping_ratio.is_finite() && (0.0..=MAX_DAMPING_RATIO).contains(&damping_ratio)) {
            return Err(Error::InvalidParameter {
                what: "spring damping ratio must be in 0..=MAX_DAMPING_RATIO",
            });
        }
        let omega = 2.0 * core::f32::consts::PI * frequency;
        if omega > MAX_ANGULAR_FREQUENCY {
            return Err(Error::InvalidParameter {
                what: "spring frequency must be at most MAX_ANGULAR_FREQUENCY / 2 pi",
            });
        }
        Ok(SpringParams {
            omega,
            zeta: damping_ratio,
        })
    }

    /// A spring of angular frequency `omega` rad/s and damping ratio
    /// `zeta`, the two numbers [`SpringParams::angular_frequency`] and
    /// [`SpringParams::damping_ratio`] return: for parameters stored
    /// elsewhere (a file, a C struct) and rebuilt exactly. `omega =
    /// f32::INFINITY` with `zeta = 1` is the snap of a half-life of 0.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] when `omega` is negative, NaN, or above
    /// [`MAX_ANGULAR_FREQUENCY`] (infinite only with `zeta == 1`), or
    /// `zeta` is negative, NaN or above [`MAX_DAMPING_RATIO`].
    pub fn angular(omega: f32, zeta: f32) -> Result<SpringParams, Error> {
        if !(zeta.is_finite() && (0.0..=MAX_DAMPING_RATIO).contains(&zeta)) {
            return Err(Error::InvalidParameter {
                what: "spring damping ratio must be in 0..=MAX_DAMPING_RATIO",
            });
        }
        if omega == f32::INFINITY && zeta == 1.0 {
            return Ok(SpringParams { omega, zeta });
        }
        if !(omega.is_finite() && (0.0..=MAX_ANGULAR_FREQUENCY).contains(&omega)) {
            return Err(Error::InvalidParameter {
                what: "spring angular frequency must be in 0..=MAX_ANGULAR_FREQUENCY (infinite only with damping ratio 1)",
            });
        }
        Ok(SpringParams { omega, zeta })
    }

    /// `ω`, rad/s (infinite for a half-life of 0).
    #[inline]
    #[must_use]
    pub fn angular_frequency(&self) -> f32 {
        self.omega
    }

    /// `ζ`.
    #[inline]
    #[must_use]
    pub fn damping_ratio(&self) -> f32 {
        self.zeta
    }

    /// The coefficients of a step of `dt` seconds.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] when `dt` is not finite and positive.
    pub fn step(&self, dt: f32) -> Result<SpringStep, Error> {
        if !(dt.is_finite() && dt > 0.0) {
            return Err(Error::InvalidParameter {
                what: "spring time step must be finite and > 0",
            });
        }
        let (w, z) = (self.omega, self.zeta);
        if w.is_infinite() {
            return Ok(SpringStep {
                c: 0.0,
                s: 0.0,
                a: 0.0,
                w2: 0.0,
                dt,
            });
        }
        let a = z * w;
        let (c, s) = if z < 1.0 {
            // e^{−at} (cos ωd t, sin(ωd t) / ωd), ωd = ω √(1 − ζ²).
            let wd = w * crate::math::sqrt_f32((1.0 - z) * (1.0 + z));
            let e = libm::expf(-a * dt);
            let x = wd * dt;
            (e * libm::cosf(x), e * dt * sinc(x))
        } else if z == 1.0 {
            let e = libm::expf(-w * dt);
            (e, dt * e)
        } else {
            // The two decay rates, the slow one without cancellation:
            // ω (ζ ∓ q) = ω / (ζ ± q), q = √(ζ² − 1).
            let q = crate::math::sqrt_f32((z - 1.0) * (z + 1.0));
            let slow = w / (z + q);
            let fast = w * (z + q);
            let e1 = libm::expf(-slow * dt);
            let e2 = libm::expf(-fast * dt);
            // e^{−at} sinh(bt) / b = e1 (1 − e^{−2bt}) / 2b, b = ωq.
            (
                0.5 * (e1 + e2),
                e1 * dt * one_minus_exp_over((fast - slow) * dt),
            )
        };
        Ok(SpringStep {
            c,
            s,
            a,
            w2: w * w,
            dt,
        })
    }
}

/// `sin x / x`, 1 at 0.
#[inline]
fn sinc(x: f32) -> f32 {
    if libm::fabsf(x) < 1e-4 {
        1.0 - x * x * (1.0 / 6.0)
    } else {
        libm::sinf(x) / x
    }
}

/// `(1 − e^{−z}) / z` for `z >= 0`, 1 at 0.
#[inline]
fn one_minus_exp_over(z: f32) -> f32 {
    if z < 1e-4 {
        1.0 - z * 0.5
    } else {
        -libm::expm1f(-z) / z
    }
}

/// The exact solution of a spring over one step, for any number of
/// springs with the same parameters and `dt`: from the offset `y0 = x − g`
/// and relative velocity `u0 = x' − g'` at the start,
///
/// ```text
/// y = c y0 + s (u0 + a y0)
/// u = c u0 − s (a u0 + w2 y0)
/// ```
///
/// at the end (`a = ζω`, `w2 = ω²`; `c` and `s` are `e^{−ζωt}` times
/// `cos`/`sin`, `1`/`t` or `cosh`/`sinh` terms by damping regime; all zero
/// for a snap).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SpringStep {
    /// Weight of the initial offset (and relative velocity) at the end.
    pub c: f32,
    /// Weight of the initial rate terms, seconds.
    pub s: f32,
    /// `ζω`, 1/s.
    pub a: f32,
    /// `ω²`, 1/s².
    pub w2: f32,
    /// The step, seconds.
    pub dt: f32,
}

impl SpringStep {
    /// The offset and relative velocity at the end of the step, from those
    /// at its start.
    #[inline]
    #[must_use]
    pub fn apply(&self, y0: f32, u0: f32) -> (f32, f32) {
        (
            self.c * y0 + self.s * (u0 + self.a * y0),
            self.c * u0 - self.s * (self.a * u0 + self.w2 * y0),
        )
    }

    /// [`SpringStep::apply`] per component.
    #[inline]
    #[must_use]
    pub fn apply3(&self, y0: Vec3, u0: Vec3) -> (Vec3, Vec3) {
        let (x, ux) = self.apply(y0.x, u0.x);
        let (y, uy) = self.apply(y0.y, u0.y);
        let (z, uz) = self.apply(y0.z, u0.z);
        (Vec3::new(x, y, z), Vec3::new(ux, uy, uz))
    }

    /// [`SpringStep::apply`] per lane; the same operations, so the same
    /// bits as the scalar one.
    #[inline]
    #[must_use]
    pub fn apply4(&self, y0: f32x4, u0: f32x4) -> (f32x4, f32x4) {
        let c = f32x4::splat(self.c);
        let s = f32x4::splat(self.s);
        let a = f32x4::splat(self.a);
        let w2 = f32x4::splat(self.w2);
        (c * y0 + s * (u0 + a * y0), c * u0 - s * (a * u0 + w2 * y0))
    }
}

/// A spring-damped `f32`: plain data, owned by the caller.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Spring {
    /// Current value.
    pub value: f32,
    /// Current velocity, value units per second.
    pub velocity: f32,
}

impl Spring {
    /// A spring at rest at `value`.
    #[inline]
    #[must_use]
    pub const fn at(value: f32) -> Spring {
        Spring {
            value,
            velocity: 0.0,
        }
    }

    /// The critically damped shorthand foot placement uses: advances by `dt`
    /// seconds (≥ 0) towards a still `target` with `ω = 2 ln 2 / half_life`
    /// (see [`SpringParams::half_life`]) and returns the new value. A
    /// `half_life` of 0 or less, or one below [`SpringParams::half_life`]'s
    /// minimum, snaps to the target with zero velocity. Never fails; finite
    /// inputs give finite outputs.
    pub fn update(&mut self, target: f32, half_life: f32, dt: f32) -> f32 {
        let k = 2.0 * core::f32::consts::LN_2 / half_life;
        if !(half_life > 0.0 && k <= MAX_ANGULAR_FREQUENCY) {
            *self = Spring::at(target);
            return target;
        }
        let j0 = self.value - target;
        let j1 = self.velocity + j0 * k;
        let e = libm::expf(-k * dt);
        self.value = e * (j0 + j1 * dt) + target;
        self.velocity = e * (self.velocity - j1 * k * dt);
        self.value
    }

    /// Advances by `dt` seconds towards a still `target`; returns the new
    /// value.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a `dt` that is not finite and
    /// positive, [`Error::NonFinite`] for a non-finite target or state. On
    /// error the spring is untouched.
    pub fn advance(&mut self, target: f32, params: &SpringParams, dt: f32) -> Result<f32, Error> {
        self.advance_moving(target, 0.0, params, dt)
    }

    /// Advances by `dt` seconds towards a target that is at `target` at the
    /// start of the step and moves at `target_velocity` (units per second)
    /// during it; returns the new value.
    ///
    /// # Errors
    /// As [`Spring::advance`].
    pub fn advance_moving(
        &mut self,
        target: f32,
        target_velocity: f32,
        params: &SpringParams,
        dt: f32,
    ) -> Result<f32, Error> {
        let step = params.step(dt)?;
        if !all_finite(&[target, target_velocity, self.value, self.velocity]) {
            return Err(Error::NonFinite {
                what: "spring target or state",
            });
        }
        self.apply(&step, target, target_velocity);
        Ok(self.value)
    }

    #[inline]
    fn apply(&mut self, step: &SpringStep, target: f32, target_velocity: f32) {
        let (y, u) = step.apply(self.value - target, self.velocity - target_velocity);
        self.value = target + target_velocity * step.dt + y;
        self.velocity = target_velocity + u;
    }
}

/// A spring-damped [`Vec3`] (each component an independent spring with the
/// same parameters): plain data, owned by the caller.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Vec3Spring {
    /// Current value.
    pub value: Vec3,
    /// Current velocity, units per second.
    pub velocity: Vec3,
}

impl Vec3Spring {
    /// A spring at rest at `value`.
    #[inline]
    #[must_use]
    pub const fn at(value: Vec3) -> Vec3Spring {
        Vec3Spring {
            value,
            velocity: Vec3::ZERO,
        }
    }

    /// Advances by `dt` seconds towards a still `target`; returns the new
    /// value.
    ///
    /// # Errors
    /// As [`Spring::advance`].
    pub fn advance(&mut self, target: Vec3, params: &SpringParams, dt: f32) -> Result<Vec3, Error> {
        self.advance_moving(target, Vec3::ZERO, params, dt)
    }

    /// Advances by `dt` seconds towards a target that is at `target` at the
    /// start of the step and moves at `target_velocity` during it; returns
    /// the new value.
    ///
    /// # Errors
    /// As [`Spring::advance`].
    pub fn advance_moving(
        &mut self,
        target: Vec3,
        target_velocity: Vec3,
        params: &SpringParams,
        dt: f32,
    ) -> Result<Vec3, Error> {
        let step = params.step(dt)?;
        if !(target.is_finite()
            && target_velocity.is_finite()
            && self.value.is_finite()
            && self.velocity.is_finite())
        {
            return Err(Error::NonFinite {
                what: "vector spring target or state",
            });
        }
        let (y, u) = step.apply3(self.value - target, self.velocity - target_velocity);
        self.value = target + target_velocity * step.dt + y;
        self.velocity = target_velocity + u;
        Ok(self.value)
    }
}

/// A spring-damped rotation: plain data, owned by the caller.
///
/// The spring acts on the rotation vector `log(value · target⁻¹)` (short
/// arc); `velocity` is that vector's rate of change (rad/s, in the frame
/// of the rotations: the parent's frame for local joint rotations).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct QuatSpring {
    /// Current rotation (unit quaternion).
    pub value: Quat,
    /// Current angular velocity, rad/s.
    pub velocity: Vec3,
}

impl QuatSpring {
    /// A spring at rest at `value`.
    #[inline]
    #[must_use]
    pub const fn at(value: Quat) -> QuatSpring {
        QuatSpring {
            value,
            velocity: Vec3::ZERO,
        }
    }

    /// Advances by `dt` seconds towards a still `target`; returns the new
    /// rotation (unit length).
    ///
    /// # Errors
    /// As [`QuatSpring::advance_moving`].
    pub fn advance(&mut self, target: Quat, params: &SpringParams, dt: f32) -> Result<Quat, Error> {
        self.advance_moving(target, Vec3::ZERO, params, dt)
    }

    /// Advances by `dt` seconds towards a target rotation that is `target`
    /// at the start of the step and turns at the angular velocity
    /// `target_velocity` (rad/s, `g(t) = exp(v t) · g0`) during it; returns
    /// the new rotation (unit length). `value` and `target` need not be
    /// unit length (they are normalised); `q` and `−q` are the same
    /// rotation.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a `dt` that is not finite and
    /// positive or a zero-length `value` or `target`,
    /// [`Error::NonFinite`] for a non-finite target or state. On error the
    /// spring is untouched.
    pub fn advance_moving(
        &mut self,
        target: Quat,
        target_velocity: Vec3,
        params: &SpringParams,
        dt: f32,
    ) -> Result<Quat, Error> {
        let step = params.step(dt)?;
        if !(target.is_finite()
            && target_velocity.is_finite()
            && self.value.is_finite()
            && self.velocity.is_finite())
        {
            return Err(Error::NonFinite {
                what: "rotation spring target or state",
            });
        }
        let (Some(q), Some(g)) = (unit(self.value), unit(target)) else {
            return Err(Error::InvalidParameter {
                what: "rotation spring value and target must be non-zero quaternions",
            });
        };
        let y0 = rotation_log(q * g.conjugate());
        let (y, u) = step.apply3(y0, self.velocity - target_velocity);
        let g1 = rotation_exp(target_velocity * step.dt) * g;
        self.value = (rotation_exp(y) * g1).normalize();
        self.velocity = target_velocity + u;
        Ok(self.value)
    }
}

/// `q` at unit length, or `None` for a (nearly) zero quaternion.
#[inline]
fn unit(q: Quat) -> Option<Quat> {
    let len = q.length();
    (len > 1e-12 && len.is_finite()).then(|| q.scale(1.0 / len))
}

/// Four `f32` springs, one per lane.
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct SpringLanes {
    /// Current values.
    pub value: f32x4,
    /// Current velocities, units per second.
    pub velocity: f32x4,
}

impl SpringLanes {
    /// Spring `i` (lane `i % 4`).
    #[inline]
    #[must_use]
    pub fn get(&self, i: usize) -> Spring {
        Spring {
            value: self.value.as_array()[i & 3],
            velocity: self.velocity.as_array()[i & 3],
        }
    }

    /// Sets spring `i` (lane `i % 4`).
    #[inline]
    pub fn set(&mut self, i: usize, s: Spring) {
        let (mut v, mut u) = (self.value.to_array(), self.velocity.to_array());
        v[i & 3] = s.value;
        u[i & 3] = s.velocity;
        *self = SpringLanes {
            value: f32x4::new(v),
            velocity: f32x4::new(u),
        };
    }
}

/// Advances many springs with the same parameters by one step towards
/// still targets, four at a time: `springs[b]` lane `l` follows
/// `targets[b]` lane `l`. [`advance_scalar`] is its readable twin (same
/// bits).
///
/// # Errors
/// [`Error::BadLength`] unless `targets.len() == springs.len()`,
/// [`Error::NonFinite`] for a non-finite target or state (nothing is
/// written then).
pub fn advance_lanes(
    springs: &mut [SpringLanes],
    targets: &[f32x4],
    step: &SpringStep,
) -> Result<(), Error> {
    check_len("spring targets", springs.len(), targets.len())?;
    if !(all_finite(bytemuck::cast_slice(targets)) && all_finite(bytemuck::cast_slice(springs))) {
        return Err(Error::NonFinite {
            what: "spring lanes target or state",
        });
    }
    for (s, &g) in springs.iter_mut().zip(targets) {
        let (y, u) = step.apply4(s.value - g, s.velocity);
        s.value = g + y;
        s.velocity = u;
    }
    Ok(())
}

/// The scalar twin of [`advance_lanes`]: `springs[i]` follows `targets[i]`.
///
/// # Errors
/// As [`advance_lanes`].
pub fn advance_scalar(
    springs: &mut [Spring],
    targets: &[f32],
    step: &SpringStep,
) -> Result<(), Error> {
    check_len("spring targets", springs.len(), targets.len())?;
    let state_ok = springs
        .iter()
        .fold(true, |ok, s| ok & all_finite(&[s.value, s.velocity]));
    if !(all_finite(targets) && state_ok) {
        return Err(Error::NonFinite {
            what: "spring target or state",
        });
    }
    for (s, &g) in springs.iter_mut().zip(targets) {
        s.apply(step, g, 0.0);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Fine-step RK4 of `x'' = −ω²(x − g) − 2ζω(x' − v)`, `g = g0 + v t`,
    /// in f64: the independent reference.
    fn rk4(x: f64, xv: f64, g0: f64, v: f64, w: f64, z: f64, t: f64) -> (f64, f64) {
        let n = 20_000;
        let h = t / n as f64;
        let f = |t: f64, x: f64, xv: f64| -> (f64, f64) {
            let g = g0 + v * t;
            (xv, -w * w * (x - g) - 2.0 * z * w * (xv - v))
        };
        let (mut x, mut xv) = (x, xv);
        for i in 0..n {
            let t0 = i as f64 * h;
            let k1 = f(t0, x, xv);
            let k2 = f(t0 + h / 2.0, x + h / 2.0 * k1.0, xv + h / 2.0 * k1.1);
            let k3 = f(t0 + h / 2.0, x + h / 2.0 * k2.0, xv + h / 2.0 * k2.1);
            let k4 = f(t0 + h, x + h * k3.0, xv + h * k3.1);
            x += h / 6.0 * (k1.0 + 2.0 * k2.0 + 2.0 * k3.0 + k4.0);
            xv += h / 6.0 * (k1.1 + 2.0 * k2.1 + 2.0 * k3.1 + k4.1);
        }
        (x, xv)
    }

    #[test]
    fn every_regime_matches_an_independent_integration() {
        // (frequency Hz, ζ): undamped, under, barely under, critical,
        // barely over, over, heavily over.
        for (hz, zeta) in [
            (2.0f32, 0.0f32),
            (2.0, 0.3),
            (1.5, 0.999),
            (1.5, 1.0),
            (1.5, 1.001),
            (3.0, 2.5),
            (0.5, 40.0),
        ] {
            let p = SpringParams::frequency(hz, zeta).unwrap();
            for (x0, v0, g, gv, t) in [
                (1.0f32, 0.0f32, 0.0f32, 0.0f32, 0.35f32),
                (-0.5, 3.0, 2.0, 0.0, 0.8),
                (0.25, -1.0, 1.0, 1.5, 0.6),
            ] {
                let mut s = Spring {
                    value: x0,
                    velocity: v0,
                };
                s.advance_moving(g, gv, &p, t).unwrap();
                let w = f64::from(p.angular_frequency());
                let (rx, rv) = rk4(
                    x0.into(),
                    v0.into(),
                    g.into(),
                    gv.into(),
                    w,
                    zeta.into(),
                    t.into(),
                );
                let scale = 1.0 + w;
                assert!(
                    (f64::from(s.value) - rx).abs() < 2e-6 * (1.0 + rx.abs()),
                    "{hz} Hz ζ {zeta}: {} vs {rx}",
                    s.value
                );
                assert!(
                    (f64::from(s.velocity) - rv).abs() < 4e-6 * scale * (1.0 + rv.abs()),
                    "{hz} Hz ζ {zeta}: v {} vs {rv}",
                    s.velocity
                );
            }
        }
    }

    #[test]
    fn half_life_follows_its_documented_curve() {
        let h = 0.2;
        let p = SpringParams::half_life(h).unwrap();
        for n in 1..=3 {
            let mut s = Spring::at(1.0);
            s.advance(0.0, &p, h * n as f32).unwrap();
            let n = n as f32;
            let want = (1.0 + 2.0 * n * core::f32::consts::LN_2) * libm::powf(4.0, -n);
            assert!((s.value - want).abs() < 1e-6, "{n}: {} vs {want}", s.value);
        }
        // The documented figures.
        let mut s = Spring::at(1.0);
        s.advance(0.0, &p, h).unwrap();
        assert!((s.value - 0.597).abs() < 1e-3);
        // A half-life of 0 snaps, taking the target's velocity.
        let snap = SpringParams::half_life(0.0).unwrap();
        let mut s = Spring {
            value: 5.0,
            velocity: 9.0,
        };
        assert_eq!(s.advance_moving(1.0, 2.0, &snap, 0.5).unwrap(), 2.0);
        assert_eq!(s.velocity, 2.0);
    }

    #[test]
    fn the_shorthand_is_the_half_life_spring() {
        let p = SpringParams::half_life(0.1).unwrap();
        let (mut a, mut b) = (Spring::at(0.3), Spring::at(0.3));
        for _ in 0..50 {
            let x = a.update(2.0, 0.1, 1.0 / 60.0);
            let y = b.advance(2.0, &p, 1.0 / 60.0).unwrap();
            assert!((x - y).abs() < 1e-6);
        }
        assert_eq!(Spring::default().update(3.0, 0.0, 0.01), 3.0);
        assert_eq!(Spring::default().update(3.0, 1e-9, 0.01), 3.0);
    }

    /// Steps `span` seconds of a moving target at `hz` steps per second.
    fn run(params: &SpringParams, hz: u32, span: f32) -> Spring {
        let mut s = Spring {
            value: 2.0,
            velocity: -1.0,
        };
        let dt = span / hz as f32;
        for i in 0..hz {
            let t = i as f32 * dt;
            s.advance_moving(0.5 + 0.75 * t, 0.75, params, dt).unwrap();
        }
        s
    }

    #[test]
    fn frame_rate_does_not_change_the_motion() {
        // One second at 30, 60 and 144 Hz ends in the same state within
        // 2e-5 (f32 rounding accumulated over up to 144 steps).
        for p in [
            SpringParams::half_life(0.15).unwrap(),
            SpringParams::frequency(2.0, 0.2).unwrap(),
            SpringParams::frequency(1.0, 3.0).unwrap(),
        ] {
            let a = run(&p, 30, 1.0);
            for hz in [60, 144] {
                let b = run(&p, hz, 1.0);
                assert!((a.value - b.value).abs() < 2e-5, "{p:?} {hz}: {a:?} {b:?}");
                assert!(
                    (a.velocity - b.velocity).abs() < 2e-4,
                    "{p:?} {hz}: {a:?} {b:?}"
                );
            }
        }
    }

    proptest! {
        #[test]
        fn critical_damping_never_overshoots_a_still_target(
            half_life in 0.01f32..2.0,
            x0 in -10.0f32..10.0,
            target in -10.0f32..10.0,
            dt in 0.001f32..0.1,
        ) {
            let p = SpringParams::half_life(half_life).unwrap();
            let mut s = Spring::at(x0);
            let side = x0 - target;
            let mut prev = side.abs();
            for _ in 0..200 {
                s.advance(target, &p, dt).unwrap();
                let d = s.value - target;
                // Never crosses the target, never moves away from it.
                prop_assert!(d * side >= 0.0, "crossed: {d} from {side}");
                prop_assert!(d.abs() <= prev + 1e-6 * (1.0 + prev));
                prev = d.abs();
            }
        }
    }

    #[test]
    fn under_damped_does_overshoot() {
        // The overshoot test above can fail: an oscillating spring crosses.
        let p = SpringParams::frequency(1.0, 0.2).unwrap();
        let mut s = Spring::at(1.0);
        let crossed = (0..60).any(|_| s.advance(0.0, &p, 1.0 / 60.0).unwrap() < 0.0);
        assert!(crossed);
    }

    #[test]
    fn vector_spring_is_three_float_springs() {
        let p = SpringParams::frequency(1.7, 0.6).unwrap();
        let mut v = Vec3Spring {
            value: Vec3::new(1.0, -2.0, 0.5),
            velocity: Vec3::new(0.0, 1.0, -3.0),
        };
        let mut f = [(1.0, 0.0), (-2.0, 1.0), (0.5, -3.0)]
            .map(|(value, velocity)| Spring { value, velocity });
        let g = Vec3::new(0.1, 0.2, 0.3);
        let gv = Vec3::new(1.0, 0.0, -1.0);
        let r = v.advance_moving(g, gv, &p, 0.05).unwrap();
        for (i, (g, gv)) in [(g.x, gv.x), (g.y, gv.y), (g.z, gv.z)]
            .into_iter()
            .enumerate()
        {
            f[i].advance_moving(g, gv, &p, 0.05).unwrap();
        }
        assert_eq!(r.to_array(), f.map(|s| s.value));
        assert_eq!(v.velocity.to_array(), f.map(|s| s.velocity));
    }

    #[test]
    fn rotation_spring_takes_the_short_arc() {
        let p = SpringParams::half_life(0.1).unwrap();
        let target = Quat::from_rotation_y(0.3);
        // 300° about +Y from the target is 60° the other way round: the
        // spring must turn back through +60°, never through 0°→300°.
        let start = Quat::from_rotation_y(0.3 + 300f32.to_radians());
        for start in [start, -start] {
            let mut s = QuatSpring::at(start);
            let mut prev = start.angle_between(target);
            assert!((prev - 60f32.to_radians()).abs() < 1e-4);
            for _ in 0..120 {
                let q = s.advance(target, &p, 1.0 / 60.0).unwrap();
                assert!(q.is_finite() && (q.length() - 1.0).abs() < 1e-5);
                let a = q.angle_between(target);
                assert!(a <= prev + 1e-5, "{a} > {prev}");
                // Stays in the plane of the short arc (about Y).
                assert!(q.x.abs() < 1e-5 && q.z.abs() < 1e-5);
                prev = a;
            }
            assert!(prev < 1e-3, "{prev}");
        }
    }

    #[test]
    fn rotation_spring_never_nans() {
        let p = SpringParams::frequency(2.0, 0.5).unwrap();
        let q = Quat::from_axis_angle(Vec3::new(0.6, 0.0, 0.8), 1.0);
        let half_turn = Quat::from_rotation_x(core::f32::consts::PI);
        for (start, target) in [
            (q, -q),
            (Quat::IDENTITY, half_turn),
            (half_turn, Quat::IDENTITY),
            (Quat::IDENTITY, Quat::new(0.0, 0.0, 0.0, -1.0)),
        ] {
            let mut s = QuatSpring::at(start);
            for _ in 0..200 {
                let r = s.advance(target, &p, 1.0 / 30.0).unwrap();
                assert!(r.is_finite() && s.velocity.is_finite());
            }
            assert!(s.value.angle_between(target) < 1e-3);
        }
        // q and −q are the same rotation: no motion at all.
        let mut s = QuatSpring::at(q);
        s.advance(-q, &p, 0.1).unwrap();
        assert!(s.velocity.length() < 1e-6 && s.value.angle_between(q) < 1e-3);
    }

    #[test]
    fn rotation_spring_is_frame_rate_independent_and_exact_about_an_axis() {
        let p = SpringParams::frequency(1.2, 0.4).unwrap();
        let axis = Vec3::new(2.0, -1.0, 2.0).try_normalize().unwrap();
        let spin = axis * 0.5;
        let start = Quat::from_axis_angle(axis, 1.0);
        let go = |hz: u32| {
            let mut s = QuatSpring {
                value: start,
                velocity: axis * -2.0,
            };
            let dt = 1.0 / hz as f32;
            for i in 0..hz {
                let g = Quat::from_axis_angle(axis, 0.5 * i as f32 * dt);
                s.advance_moving(g, spin, &p, dt).unwrap();
            }
            s
        };
        let a = go(30);
        for hz in [60, 144] {
            let b = go(hz);
            assert!(a.value.angle_between(b.value) < 1e-3, "{hz}");
            assert!((a.velocity - b.velocity).length() < 1e-3, "{hz}");
        }
        // About one axis the error is an angle that follows the float
        // spring exactly.
        let mut f = Spring {
            value: 1.0,
            velocity: -2.0,
        };
        f.advance_moving(0.0, 0.5, &p, 1.0).unwrap();
        let want = Quat::from_axis_angle(axis, f.value);
        assert!(a.value.angle_between(want) < 1e-3);
    }

    #[test]
    fn lanes_agree_with_their_scalar_twin() {
        let mut rng = 0x2545_f491u32;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 17;
            rng ^= rng << 5;
            (rng as f32 / u32::MAX as f32) * 20.0 - 10.0
        };
        const N: usize = 37;
        const BLOCKS: usize = N.div_ceil(4);
        let mut scalar = [Spring::default(); N];
        let mut targets = [0.0f32; N];
        for (s, t) in scalar.iter_mut().zip(&mut targets) {
            *s = Spring {
                value: next(),
                velocity: next(),
            };
            *t = next();
        }
        let mut lanes = [SpringLanes::default(); BLOCKS];
        let mut lane_targets = [f32x4::ZERO; BLOCKS];
        for i in 0..N {
            lanes[i / 4].set(i, scalar[i]);
            let mut t = lane_targets[i / 4].to_array();
            t[i % 4] = targets[i];
            lane_targets[i / 4] = f32x4::new(t);
        }
        for p in [
            SpringParams::half_life(0.2).unwrap(),
            SpringParams::frequency(3.0, 0.1).unwrap(),
            SpringParams::frequency(0.7, 5.0).unwrap(),
            SpringParams::half_life(0.0).unwrap(),
        ] {
            for dt in [1.0 / 144.0, 1.0 / 30.0, 0.5] {
                let step = p.step(dt).unwrap();
                advance_scalar(&mut scalar, &targets, &step).unwrap();
                advance_lanes(&mut lanes, &lane_targets, &step).unwrap();
                for (i, s) in scalar.iter().enumerate() {
                    let l = lanes[i / 4].get(i);
                    assert!((l.value - s.value).abs() <= 1e-5 * (1.0 + s.value.abs()));
                    assert!((l.velocity - s.velocity).abs() <= 1e-5 * (1.0 + s.velocity.abs()));
                }
            }
        }
    }

    #[test]
    fn bad_input_is_an_error_and_leaves_the_spring_alone() {
        for h in [-1.0, f32::NAN, f32::INFINITY, 1e-9] {
            assert!(SpringParams::half_life(h).is_err(), "{h}");
        }
        for (f, z) in [
            (-1.0, 1.0),
            (f32::NAN, 1.0),
            (1.0, -0.1),
            (1.0, f32::NAN),
            (f32::INFINITY, 1.0),
            (1.0, f32::INFINITY),
            (1e6, 1.0),
            (1.0, 2e4),
        ] {
            assert!(SpringParams::frequency(f, z).is_err(), "{f} {z}");
        }
        let p = SpringParams::half_life(0.1).unwrap();
        for dt in [0.0, -0.01, f32::NAN, f32::INFINITY] {
            assert!(p.step(dt).is_err());
            let mut s = Spring::at(1.0);
            assert!(s.advance(0.0, &p, dt).is_err());
            assert_eq!(s, Spring::at(1.0));
        }
        let mut s = Spring::at(1.0);
        assert!(matches!(
            s.advance(f32::NAN, &p, 0.1),
            Err(Error::NonFinite { .. })
        ));
        assert!(s.advance_moving(0.0, f32::INFINITY, &p, 0.1).is_err());
        assert_eq!(s, Spring::at(1.0));
        let mut v = Vec3Spring::at(Vec3::ONE);
        assert!(v.advance(Vec3::new(0.0, f32::NAN, 0.0), &p, 0.1).is_err());
        assert_eq!(v, Vec3Spring::at(Vec3::ONE));
        let mut q = QuatSpring::at(Quat::IDENTITY);
        assert!(matches!(
            q.advance(Quat::new(0.0, 0.0, 0.0, 0.0), &p, 0.1),
            Err(Error::InvalidParameter { .. })
        ));
        assert!(q
            .advance(Quat::new(f32::NAN, 0.0, 0.0, 1.0), &p, 0.1)
            .is_err());
        assert_eq!(q, QuatSpring::at(Quat::IDENTITY));
        let step = p.step(0.1).unwrap();
        let mut lanes = [SpringLanes::default(); 2];
        assert!(matches!(
            advance_lanes(&mut lanes, &[f32x4::ZERO], &step),
            Err(Error::BadLength { .. })
        ));
        assert!(advance_lanes(
            &mut lanes,
            &[f32x4::ZERO, f32x4::new([0.0, f32::NAN, 0.0, 0.0])],
            &step
        )
        .is_err());
        let mut scalar = [Spring::default(); 2];
        assert!(advance_scalar(&mut scalar, &[0.0], &step).is_err());
        assert!(advance_scalar(&mut scalar, &[0.0, f32::NAN], &step).is_err());
    }

    #[test]
    fn angular_rebuilds_every_params_exactly_and_rejects_the_rest() {
        for p in [
            SpringParams::half_life(0.2).unwrap(),
            SpringParams::half_life(0.0).unwrap(),
            SpringParams::frequency(3.0, 0.1).unwrap(),
            SpringParams::frequency(0.0, 0.0).unwrap(),
            SpringParams::frequency(MAX_ANGULAR_FREQUENCY / 7.0, MAX_DAMPING_RATIO).unwrap(),
        ] {
            let q = SpringParams::angular(p.angular_frequency(), p.damping_ratio()).unwrap();
            assert_eq!(q, p);
            assert_eq!(q.step(0.01), p.step(0.01));
        }
        assert!(SpringParams::angular(MAX_ANGULAR_FREQUENCY, 0.5).is_ok());
        for (w, z) in [
            (-1.0, 1.0),
            (f32::NAN, 1.0),
            (MAX_ANGULAR_FREQUENCY * 1.01, 1.0),
            (f32::INFINITY, 0.5),
            (f32::INFINITY, f32::NAN),
            (f32::NEG_INFINITY, 1.0),
            (1.0, -0.1),
            (1.0, f32::NAN),
            (1.0, f32::INFINITY),
            (1.0, MAX_DAMPING_RATIO * 1.01),
        ] {
            assert!(
                matches!(
                    SpringParams::angular(w, z),
                    Err(Error::InvalidParameter { .. })
                ),
                "{w} {z}"
            );
        }
    }

    #[test]
    fn extreme_valid_parameters_stay_finite() {
        for p in [
            SpringParams::frequency(MAX_ANGULAR_FREQUENCY / 7.0, MAX_DAMPING_RATIO).unwrap(),
            SpringParams::frequency(MAX_ANGULAR_FREQUENCY / 7.0, 0.0).unwrap(),
            SpringParams::frequency(0.0, 0.0).unwrap(),
            SpringParams::frequency(1e-30, 0.5).unwrap(),
            SpringParams::frequency(1.0, 1.0 + 1e-7).unwrap(),
            SpringParams::frequency(1.0, 1.0 - 1e-7).unwrap(),
        ] {
            for dt in [1e-6, 1.0 / 60.0, 100.0] {
                let mut s = Spring {
                    value: 1e3,
                    velocity: -1e3,
                };
                s.advance(0.0, &p, dt).unwrap();
                assert!(s.value.is_finite() && s.velocity.is_finite(), "{p:?} {dt}");
            }
        }
    }
}
