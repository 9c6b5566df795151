//! The character's desired trajectory: critically damped springs that carry
//! the ground velocity and the heading towards what the player asks for,
//! solved in closed form so that a prediction any time ahead costs the same
//! as one step.
//!
//! With `y = 2 ln 2 / half_life`, the velocity `v` approaches the desired
//! `v*` as `v(t) = v* + e^{−yt} (j0 + j1 t)` where `j0 = v(0) − v*` and
//! `j1 = a(0) + y j0`; position and acceleration are its integral and
//! derivative. The heading follows the same law with the angle to the
//! desired heading (wrapped to `(−π, π]`) in place of `j0`.

use core::f32::consts::LN_2;

use crate::error::Error;
use crate::math::Vec3;
use crate::mix::root_motion::wrap_angle;

/// How fast the springs follow the input.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TrajectoryParams {
    /// Seconds for half of a velocity change to happen; finite, `> 0`.
    pub velocity_half_life: f32,
    /// Seconds for half of a heading change to happen; finite, `> 0`.
    pub rotation_half_life: f32,
}

impl Default for TrajectoryParams {
    fn default() -> Self {
        TrajectoryParams {
            velocity_half_life: 0.27,
            rotation_half_life: 0.27,
        }
    }
}

impl TrajectoryParams {
    /// Checks both half-lives.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a half-life not finite and positive.
    pub fn check(&self) -> Result<(), Error> {
        let ok = |h: f32| h.is_finite() && h > 0.0;
        if ok(self.velocity_half_life) && ok(self.rotation_half_life) {
            Ok(())
        } else {
            Err(Error::InvalidParameter {
                what: "trajectory half-life must be finite and > 0",
            })
        }
    }
}

/// What the player asks for: a ground velocity and a heading (world frame).
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Desired {
    /// Ground velocity, metres per second (`y` is ignored).
    pub velocity: Vec3,
    /// Heading about +Y, radians (`atan2(x, z)` of the facing).
    pub yaw: f32,
}

impl Desired {
    /// Checks that both are finite.
    ///
    /// # Errors
    /// [`Error::NonFinite`].
    pub fn check(&self) -> Result<(), Error> {
        let v = self.velocity;
        if v.x.is_finite() && v.z.is_finite() && self.yaw.is_finite() {
            Ok(())
        } else {
            Err(Error::NonFinite {
                what: "desired velocity or heading",
            })
        }
    }
}

/// The simulated character: ground position, velocity, acceleration,
/// heading and turn rate.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Trajectory {
    /// Ground position (metres; `y` stays 0).
    pub position: Vec3,
    /// Ground velocity (metres per second).
    pub velocity: Vec3,
    /// Ground acceleration (metres per second²).
    pub acceleration: Vec3,
    /// Heading about +Y, radians in `(−π, π]`.
    pub yaw: f32,
    /// Turn rate, radians per second.
    pub yaw_rate: f32,
}

/// One axis of the velocity spring after `t` seconds: (position, velocity, acceleration).
#[inline]
fn axis(p: f32, v: f32, a: f32, target: f32, y: f32, e: f32, t: f32) -> (f32, f32, f32) {
    let j0 = v - target;
    let j1 = a + j0 * y;
    let p = e * (-j1 / (y * y) + (-j0 - j1 * t) / y) + j1 / (y * y) + j0 / y + target * t + p;
    let v = e * (j0 + j1 * t) + target;
    let a = e * (a - j1 * y * t);
    (p, v, a)
}

impl Trajectory {
    /// The state `t` seconds ahead (`t >= 0`) under a constant input; the
    /// state itself for `t = 0`. Any `t` costs the same: the springs are
    /// solved in closed form.
    ///
    /// # Errors
    /// [`Error::NonFinite`] (`t` negative or not finite, or the input),
    /// [`Error::InvalidParameter`] (a half-life).
    pub fn predict(
        &self,
        desired: &Desired,
        params: &TrajectoryParams,
        t: f32,
    ) -> Result<Trajectory, Error> {
        if !(t.is_finite() && t >= 0.0) {
            return Err(Error::NonFinite {
                what: "prediction time",
            });
        }
        desired.check()?;
        params.check()?;
        let y = 2.0 * LN_2 / params.velocity_half_life;
        let e = libm::expf(-y * t);
        let (px, vx, ax) = axis(
            self.position.x,
            self.velocity.x,
            self.acceleration.x,
            desired.velocity.x,
            y,
            e,
            t,
        );
        let (pz, vz, az) = axis(
            self.position.z,
            self.velocity.z,
            self.acceleration.z,
            desired.velocity.z,
            y,
            e,
            t,
        );
        let yr = 2.0 * LN_2 / params.rotation_half_life;
        let er = libm::expf(-yr * t);
        let j0 = wrap_angle(self.yaw - desired.yaw);
        let j1 = self.yaw_rate + j0 * yr;
        Ok(Trajectory {
            position: Vec3::new(px, 0.0, pz),
            velocity: Vec3::new(vx, 0.0, vz),
            acceleration: Vec3::new(ax, 0.0, az),
            yaw: wrap_angle(desired.yaw + er * (j0 + j1 * t)),
            yaw_rate: er * (self.yaw_rate - j1 * yr * t),
        })
    }

    /// Advances the state by `dt` seconds ([`Self::predict`] in place).
    ///
    /// # Errors
    /// As [`Self::predict`]; on error the state is unchanged.
    pub fn advance(
        &mut self,
        desired: &Desired,
        params: &TrajectoryParams,
        dt: f32,
    ) -> Result<(), Error> {
        *self = self.predict(desired, params, dt)?;
        Ok(())
    }
}
