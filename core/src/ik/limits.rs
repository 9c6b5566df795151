//! Joint limits every IK solver applies: a hinge (one axis, an angle range)
//! and a swing-twist limit (a cone for the swing, a range for the twist).
//!
//! A limit constrains a joint's *local* rotation `r` (relative to its parent)
//! through its deviation from a reference rotation `r₀` (usually the rest
//! rotation): `d = r₀⁻¹ · r`, so `r = r₀ · d` and `d` is expressed in the
//! joint's reference frame, the frame the joint has at rest. Axes are given
//! in that frame. With `r₀` the identity, the reference frame is the parent's
//! frame.
//!
//! Angles are radians. [`JointLimit::project`] maps any rotation onto the
//! limit set (the nearest allowed rotation in the swing-twist sense) and
//! leaves a rotation that is already inside bit for bit unchanged.

use core::f32::consts::PI;

use crate::fp::Fp;
use crate::math::{Quat, Vec3};
use crate::Error;

/// A joint's limit; [`JointLimit::None`] leaves the joint free.
///
/// Build the constrained variants with [`Hinge::new`] and
/// [`SwingTwist::new`], which validate their parameters once, so that
/// [`JointLimit::project`] needs no checks.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum JointLimit {
    /// No limit.
    #[default]
    None,
    /// One rotational degree of freedom about an axis, within an angle range.
    Hinge(Hinge),
    /// A swing cone about the twist axis and a twist range about it.
    SwingTwist(SwingTwist),
}

/// A hinge: the deviation from the reference must be a rotation about
/// `axis` (reference frame) by an angle in `[min, max]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hinge {
    reference: Quat,
    axis: Vec3,
    min: f32,
    max: f32,
}

/// A swing-twist limit: the deviation `d = swing · twist` (twist about
/// `twist_axis` first, then a swing about an axis perpendicular to it) must
/// have a swing angle of at most `cone` (the angle between the twist axis
/// and its image under `d`) and a twist angle in `[twist_min, twist_max]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SwingTwist {
    reference: Quat,
    twist_axis: Vec3,
    cone: f32,
    twist_min: f32,
    twist_max: f32,
}

fn unit_reference(reference: Quat) -> Result<Quat, Error> {
    let len = reference.length();
    if !reference.is_finite() || len <= 1e-6 {
        return Err(Error::InvalidParameter {
            what: "joint limit: the reference rotation must be a finite, non-zero quaternion",
        });
    }
    Ok(reference.scale(1.0 / len))
}

fn unit_axis(axis: Vec3) -> Result<Vec3, Error> {
    axis.try_normalize().ok_or(Error::InvalidParameter {
        what: "joint limit: the axis must be finite and non-zero",
    })
}

fn check_range(min: f32, max: f32) -> Result<(), Error> {
    if min.is_finite() && max.is_finite() && -PI <= min && min <= max && max <= PI {
        Ok(())
    } else {
        Err(Error::InvalidParameter {
            what: "joint limit: an angle range must satisfy -π <= min <= max <= π",
        })
    }
}

impl Hinge {
    /// A hinge about `axis` (in the reference frame; normalised here) with
    /// angles `min ..= max` radians from the `reference` rotation.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a non-finite or zero `reference` or
    /// `axis`, or unless `-π <= min <= max <= π`.
    pub fn new(reference: Quat, axis: Vec3, min: f32, max: f32) -> Result<Hinge, Error> {
        check_range(min, max)?;
        Ok(Hinge {
            reference: unit_reference(reference)?,
            axis: unit_axis(axis)?,
            min,
            max,
        })
    }

    /// The reference rotation (unit).
    #[inline]
    #[must_use]
    pub fn reference(&self) -> Quat {
        self.reference
    }

    /// The hinge axis in the reference frame (unit).
    #[inline]
    #[must_use]
    pub fn axis(&self) -> Vec3 {
        self.axis
    }

    /// The angle range `(min, max)` in radians.
    #[inline]
    #[must_use]
    pub fn range(&self) -> (f32, f32) {
        (self.min, self.max)
    }
}

impl SwingTwist {
    /// A swing cone of half-angle `cone` radians (`0 ..= π`) about
    /// `twist_axis` (reference frame; normalised here) and a twist range
    /// `twist_min ..= twist_max` radians, from the `reference` rotation.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a non-finite or zero `reference` or
    /// axis, a `cone` outside `0 ..= π`, or unless
    /// `-π <= twist_min <= twist_max <= π`.
    pub fn new(
        reference: Quat,
        twist_axis: Vec3,
        cone: f32,
        twist_min: f32,
        twist_max: f32,
    ) -> Result<SwingTwist, Error> {
        if !(0.0..=PI).contains(&cone) {
            return Err(Error::InvalidParameter {
                what: "joint limit: the cone half-angle must be in 0..=π",
            });
        }
        check_range(twist_min, twist_max)?;
        Ok(SwingTwist {
            reference: unit_reference(reference)?,
            twist_axis: unit_axis(twist_axis)?,
            cone,
            twist_min,
            twist_max,
        })
    }

    /// The reference rotation (unit).
    #[inline]
    #[must_use]
    pub fn reference(&self) -> Quat {
        self.reference
    }

    /// The twist axis in the reference frame (unit).
    #[inline]
    #[must_use]
    pub fn twist_axis(&self) -> Vec3 {
        self.twist_axis
    }

    /// The swing cone's half-angle in radians.
    #[inline]
    #[must_use]
    pub fn cone(&self) -> f32 {
        self.cone
    }

    /// The twist range `(min, max)` in radians.
    #[inline]
    #[must_use]
    pub fn twist_range(&self) -> (f32, f32) {
        (self.twist_min, self.twist_max)
    }
}

impl JointLimit {
    /// The limit's reference rotation (identity for [`JointLimit::None`]).
    #[must_use]
    pub fn reference(&self) -> Quat {
        match self {
            JointLimit::None => Quat::IDENTITY,
            JointLimit::Hinge(h) => h.reference,
            JointLimit::SwingTwist(s) => s.reference,
        }
    }

    /// The nearest rotation to `rotation` (a local rotation, unit) that the
    /// limit allows: the deviation from the reference is split into swing
    /// and twist; a hinge keeps only the twist about its axis, clamped to its
    /// range; a swing-twist limit scales the swing's angle down to the cone
    /// (keeping its axis) and clamps the twist. Out-of-range angles go to the
    /// nearer bound on the circle. A rotation that is already inside is
    /// returned unchanged; the result is on `rotation`'s hemisphere
    /// (`dot >= 0`). A non-finite rotation comes back non-finite.
    #[must_use]
    pub fn project(&self, rotation: Quat) -> Quat {
        let (reference, axis) = match self {
            JointLimit::None => return rotation,
            JointLimit::Hinge(h) => (h.reference, h.axis),
            JointLimit::SwingTwist(s) => (s.reference, s.twist_axis),
        };
        let d = reference.conjugate() * rotation;
        if self.deviation_within(d, 0.0) {
            return rotation;
        }
        let (swing, twist) = swing_twist(d, axis);
        let angle = twist_angle(twist, axis);
        let d = match self {
            JointLimit::None => d,
            JointLimit::Hinge(h) => Quat::from_axis_angle(axis, clamp_angle(angle, h.min, h.max)),
            JointLimit::SwingTwist(s) => {
                let twist =
                    Quat::from_axis_angle(axis, clamp_angle(angle, s.twist_min, s.twist_max));
                clamp_swing(swing, s.cone) * twist
            }
        };
        let q = (reference * d).normalize();
        if q.dot(rotation) < 0.0 {
            -q
        } else {
            q
        }
    }

    /// True when `rotation` (a local rotation, unit) is within the limit,
    /// each angle allowed `tolerance` radians beyond its bound (a hinge's
    /// swing must be at most `tolerance`). False for a non-finite rotation.
    #[must_use]
    pub fn contains(&self, rotation: Quat, tolerance: f32) -> bool {
        let d = self.reference().conjugate() * rotation;
        self.deviation_within(d, tolerance)
    }

    fn deviation_within(&self, d: Quat, tol: f32) -> bool {
        if !d.is_finite() {
            return false;
        }
        let (axis, cone, min, max) = match self {
            JointLimit::None => return true,
            JointLimit::Hinge(h) => (h.axis, 0.0, h.min, h.max),
            JointLimit::SwingTwist(s) => (s.twist_axis, s.cone, s.twist_min, s.twist_max),
        };
        let (swing, twist) = swing_twist(d, axis);
        let angle = twist_angle(twist, axis);
        swing_angle(swing) <= cone + tol && angle >= min - tol && angle <= max + tol
    }
}

/// Splits a unit rotation `q` into `(swing, twist)` with `q = swing · twist`:
/// `twist` turns about unit `axis`, `swing` about an axis perpendicular to
/// it. When `q` turns by π about an axis perpendicular to `axis` the twist is
/// undefined and comes back as the identity.
#[must_use]
pub fn swing_twist(q: Quat, axis: Vec3) -> (Quat, Quat) {
    let p = axis * Vec3::new(q.x, q.y, q.z).dot(axis);
    let t = Quat::new(p.x, p.y, p.z, q.w);
    let len = t.length();
    let twist = if len > 1e-9 {
        t.scale(1.0 / len)
    } else {
        Quat::IDENTITY
    };
    (q * twist.conjugate(), twist)
}

/// The signed angle in `[-π, π]` of a rotation about unit `axis`.
pub(crate) fn twist_angle(twist: Quat, axis: Vec3) -> f32 {
    let s = Vec3::new(twist.x, twist.y, twist.z).dot(axis);
    let (s, w) = if twist.w < 0.0 {
        (-s, -twist.w)
    } else {
        (s, twist.w)
    };
    2.0 * libm::atan2f(s, w)
}

/// The angle of a rotation in `[0, π]`, from `atan2` (accurate near zero,
/// where `acos` of `w` loses half the digits).
pub(crate) fn swing_angle(q: Quat) -> f32 {
    let v = Vec3::new(q.x, q.y, q.z).length();
    2.0 * libm::atan2f(v, libm::fabsf(q.w))
}

/// The swing turned by at most `cone` about its own axis.
fn clamp_swing(swing: Quat, cone: f32) -> Quat {
    if swing_angle(swing) <= cone {
        return swing;
    }
    let s = if swing.w < 0.0 { -swing } else { swing };
    match Vec3::new(s.x, s.y, s.z).try_normalize() {
        Some(axis) => Quat::from_axis_angle(axis, cone),
        None => Quat::IDENTITY,
    }
}

/// `a` (in `[-π, π]`) clamped to `[min, max]`, going to the bound nearer on
/// the circle when outside.
fn clamp_angle(a: f32, min: f32, max: f32) -> f32 {
    if a >= min && a <= max {
        return a;
    }
    let circ = |b: f32| {
        let d = libm::fabsf(a - b);
        d.min_num(2.0 * PI - d)
    };
    if circ(min) <= circ(max) {
        min
    } else {
        max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hinge_clamps_to_the_nearer_bound_and_drops_swing() {
        let h = JointLimit::Hinge(Hinge::new(Quat::IDENTITY, Vec3::Z, -0.5, 1.0).unwrap());
        let inside = Quat::from_rotation_z(0.3);
        assert_eq!(h.project(inside), inside);
        let q = h.project(Quat::from_rotation_z(1.5));
        assert!(q.angle_between(Quat::from_rotation_z(1.0)) < 1e-5);
        // 3.0 is 2.0 past max and 2.78 (around the circle) past min.
        let q = h.project(Quat::from_rotation_z(3.0));
        assert!(q.angle_between(Quat::from_rotation_z(1.0)) < 1e-5);
        let q = h.project(Quat::from_rotation_x(0.4) * Quat::from_rotation_z(0.2));
        assert!(h.contains(q, 1e-5), "{q:?}");
    }

    #[test]
    fn swing_twist_reassembles() {
        let q = (Quat::from_rotation_x(0.7) * Quat::from_rotation_y(-1.2)).normalize();
        let (s, t) = swing_twist(q, Vec3::Y);
        assert!((s * t).angle_between(q) < 1e-5);
        // The swing turns Y away from itself, about an axis perpendicular to Y.
        assert!(s.y.abs() < 1e-6);
    }

    #[test]
    fn constructors_reject_bad_parameters() {
        assert!(Hinge::new(Quat::IDENTITY, Vec3::ZERO, 0.0, 1.0).is_err());
        assert!(Hinge::new(Quat::IDENTITY, Vec3::X, 1.0, 0.0).is_err());
        assert!(Hinge::new(Quat::IDENTITY, Vec3::X, -4.0, 0.0).is_err());
        assert!(Hinge::new(Quat::new(0.0, 0.0, 0.0, 0.0), Vec3::X, 0.0, 1.0).is_err());
        assert!(SwingTwist::new(Quat::IDENTITY, Vec3::X, -0.1, 0.0, 0.0).is_err());
        assert!(SwingTwist::new(Quat::IDENTITY, Vec3::X, f32::NAN, 0.0, 0.0).is_err());
        assert!(SwingTwist::new(Quat::IDENTITY, Vec3::X, 0.5, 0.0, f32::INFINITY).is_err());
    }
}
