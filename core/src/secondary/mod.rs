//! Secondary motion: what follows the body rather than drives it.
//!
//! - [`collider`]: spheres, capsules and planes attached to joints, which
//!   the simulations below push their particles out of.
//! - [`spring`]: critically damped (and general) spring-dampers for floats,
//!   vectors and rotations, integrated in closed form.
//! - [`pd`]: PD joint controllers that track the animated rotations.
//! - [`chain`]: spring-bone chains (hair, tails, gear) with colliders.
//! - [`cloth`]: mass-spring cloth and ropes pinned to joints.
//! - [`particles`]: fixed-capacity particle systems with a spatial hash.
//!
//! Every simulation here steps at a fixed time step (the frame's `dt` cut
//! into equal sub-steps by [`SubSteps`]), is deterministic (the same inputs
//! give the same bits on every run and thread count), writes into
//! caller-provided memory, and rejects bad input (a zero time step, negative
//! stiffness, NaN forces) with an [`Error`] instead of producing NaN.

pub mod chain;
pub mod cloth;
pub mod collider;
pub mod particles;
pub mod pd;
pub mod spring;

use crate::Error;

/// How a frame's time step is cut into sub-steps: `count` equal steps of
/// `step` seconds.
///
/// A frame longer than `max_step · max_count` (a hitch, a debugger pause)
/// would need more sub-steps than the budget allows; it is simulated for
/// `max_step · max_count` seconds only, so the simulation stays stable, and
/// [`SubSteps::dropped`] reports the time that was not simulated.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SubSteps {
    /// Number of sub-steps (≥ 1).
    pub count: u32,
    /// Length of each sub-step, seconds (> 0, ≤ the `max_step` asked for).
    pub step: f32,
    /// Seconds of the frame that were not simulated because the frame
    /// needed more than `max_count` sub-steps (0 when nothing was clamped).
    pub dropped: f32,
}

impl SubSteps {
    /// Cuts `dt` into the fewest equal sub-steps no longer than `max_step`,
    /// at most `max_count` of them.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] when `dt` or `max_step` is not finite and
    /// positive, or `max_count` is 0.
    pub fn split(dt: f32, max_step: f32, max_count: u32) -> Result<SubSteps, Error> {
        if !(dt.is_finite() && dt > 0.0) {
            return Err(Error::InvalidParameter {
                what: "time step must be finite and positive",
            });
        }
        if !(max_step.is_finite() && max_step > 0.0) {
            return Err(Error::InvalidParameter {
                what: "maximum sub-step must be finite and positive",
            });
        }
        if max_count == 0 {
            return Err(Error::InvalidParameter {
                what: "maximum sub-step count must be at least 1",
            });
        }
        // dt / max_step can be huge (or overflow to infinity); compare in
        // f32 before converting so the count never wraps.
        let wanted = libm::ceilf(dt / max_step);
        if wanted > max_count as f32 {
            let simulated = max_step * max_count as f32;
            return Ok(SubSteps {
                count: max_count,
                step: max_step,
                dropped: dt - simulated,
            });
        }
        let count = (wanted as u32).max(1);
        Ok(SubSteps {
            count,
            step: dt / count as f32,
            dropped: 0.0,
        })
    }

    /// Whether part of the frame was dropped.
    pub fn clamped(&self) -> bool {
        self.dropped > 0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_into_the_fewest_equal_steps() {
        let s = SubSteps::split(1.0 / 30.0, 1.0 / 120.0, 8).unwrap();
        assert_eq!(s.count, 4);
        assert!((s.step - 1.0 / 120.0).abs() < 1e-7);
        assert!(!s.clamped());
        let s = SubSteps::split(0.001, 1.0 / 120.0, 8).unwrap();
        assert_eq!((s.count, s.step), (1, 0.001));
    }

    #[test]
    fn a_hitch_is_clamped_and_reported() {
        let s = SubSteps::split(2.0, 0.01, 10).unwrap();
        assert_eq!((s.count, s.step), (10, 0.01));
        assert!(s.clamped());
        assert!((s.dropped - 1.9).abs() < 1e-5);
        let s = SubSteps::split(f32::MAX, 1e-30, u32::MAX).unwrap();
        assert!(s.clamped() && s.step > 0.0);
    }

    #[test]
    fn rejects_zero_negative_and_nan_steps() {
        for (dt, max, n) in [
            (0.0, 0.01, 4),
            (-0.1, 0.01, 4),
            (f32::NAN, 0.01, 4),
            (f32::INFINITY, 0.01, 4),
            (0.1, 0.0, 4),
            (0.1, f32::NAN, 4),
            (0.1, 0.01, 0),
        ] {
            assert!(SubSteps::split(dt, max, n).is_err(), "{dt} {max} {n}");
        }
    }
}
