//! The weights of driven blend shapes: correctives that read a joint's
//! rotation, and combinations that multiply other shapes' weights.
//!
//! A [`ShapeDrivers`] is a validated, borrowed list of [`Driver`]s over a
//! set of blend shapes (the weight slice of a
//! [`BlendShapes`](super::blend::BlendShapes)). Every frame,
//! [`ShapeDrivers::evaluate`] overwrites the weight of each driven shape
//! and leaves the others (the animated weights) as they are; then
//! [`BlendShapes::apply`](super::blend::BlendShapes::apply) adds the
//! shapes.
//!
//! # Correctives
//!
//! A [`Corrective`] reads joint `joint`'s local rotation `r` from the pose
//! and measures an angle `θ` of its deviation from a reference rotation
//! `r₀` (usually the joint's rest rotation), `d = r₀⁻¹ · r`, with
//! [`swing_twist`] splitting `d = swing · twist` about a unit axis `a`
//! given in the reference frame ([`Angle`]):
//!
//! - **swing**: how far `d` turns `a` away from itself, `[0, π]`;
//! - **twist**: the signed angle of `d` about `a`, `[-π, π]` (for a hinge
//!   such as an elbow or a knee, the bend about its hinge axis, which
//!   tells a bend from an overextension);
//! - **total**: the whole rotation angle of `d`, `[0, π]`.
//!
//! The angle maps to a weight by the ramp `t = clamp((θ − θ0)/(θ1 − θ0),
//! 0, 1)` or its smoothstep `t²(3 − 2t)` ([`Ramp`]). `θ0 > θ1` is allowed
//! and gives a weight that rises as the angle falls (full at `θ1` and
//! below); `θ0 == θ1` is rejected. Angles are radians. Quaternions need not
//! be unit: every angle is an `atan2` of two lengths that scale together.
//!
//! # Combinations
//!
//! A [`Combination`] sets its shape's weight to the product of its inputs'
//! weights (a smile-with-jaw-open fix: `w = w_smile · w_jawOpen`), inputs
//! that may themselves be driven.
//!
//! # Order
//!
//! Drivers run in the order of the slice. Each shape is written by at most
//! one driver, and a combination may read only a shape that neither it nor
//! a later driver writes, so it always reads final weights and no cycle
//! can exist (list drivers in evaluation order, inputs first). Correctives
//! read only the pose. A character has tens of drivers, not thousands, and
//! each one is a quaternion product and an `atan2`: they run one by one
//! (four per lane measured slower than one by one, the gather costing more
//! than the arithmetic it shares).

use crate::ik::limits::{swing_angle, swing_twist, twist_angle};
use crate::math::{Quat, Vec3};
use crate::soa::{check_len, soa_count, SoaTransform, LANES};
use crate::Error;

/// Which angle of a joint's deviation from its reference a [`Corrective`]
/// reads.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Angle {
    /// The swing angle in `[0, π]`: the angle between `axis` and its image
    /// under the deviation.
    Swing {
        /// Unit axis in the reference frame (e.g. the bone's direction).
        axis: Vec3,
    },
    /// The twist angle in `[-π, π]` about `axis` (right-handed). When the
    /// deviation turns by π about an axis perpendicular to `axis` the twist
    /// is undefined and reads 0.
    Twist {
        /// Unit axis in the reference frame.
        axis: Vec3,
    },
    /// The deviation's whole rotation angle, `[0, π]`.
    Total,
}

/// How a [`Corrective`] maps its angle to a weight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ramp {
    /// `t = clamp((θ − θ0)/(θ1 − θ0), 0, 1)`.
    Linear,
    /// `t²(3 − 2t)` of the linear ramp's `t`: zero slope at both ends.
    Smoothstep,
}

/// A corrective shape driven by a joint's rotation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Corrective {
    /// The shape whose weight this writes.
    pub shape: u32,
    /// The joint whose local rotation is read.
    pub joint: u32,
    /// The rotation the angle is measured from (finite, non-zero; e.g. the
    /// joint's rest rotation, or the identity for the parent's frame).
    pub reference: Quat,
    /// Which angle.
    pub angle: Angle,
    /// `θ0`, radians: the angle at which the weight is 0.
    pub from: f32,
    /// `θ1`, radians: the angle at which the weight is 1 (not `θ0`).
    pub to: f32,
    /// Linear or smoothstep.
    pub ramp: Ramp,
}

/// A combination shape: its weight is the product of its inputs' weights.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Combination<'a> {
    /// The shape whose weight this writes.
    pub shape: u32,
    /// The shapes whose weights are multiplied (at least one; a shape may
    /// appear twice, for its square).
    pub inputs: &'a [u32],
}

/// One driver of a [`ShapeDrivers`] list.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Driver<'a> {
    /// Driven by a joint's rotation.
    Corrective(Corrective),
    /// Driven by other shapes' weights.
    Combination(Combination<'a>),
}

impl Driver<'_> {
    /// The shape the driver writes.
    #[inline]
    #[must_use]
    pub fn shape(&self) -> u32 {
        match self {
            Driver::Corrective(c) => c.shape,
            Driver::Combination(c) => c.shape,
        }
    }
}

impl Corrective {
    /// The angle this corrective reads from joint rotation `rotation`
    /// (radians; the scalar specification of the lane path).
    #[must_use]
    pub fn measure(&self, rotation: Quat) -> f32 {
        let d = self.reference.conjugate() * rotation;
        match self.angle {
            Angle::Swing { axis } => swing_angle(swing_twist(d, axis).0),
            Angle::Twist { axis } => twist_angle(swing_twist(d, axis).1, axis),
            Angle::Total => swing_angle(d),
        }
    }

    /// The weight for angle `theta` (radians): the ramp, in `[0, 1]`.
    #[must_use]
    pub fn ramp(&self, theta: f32) -> f32 {
        let t = ((theta - self.from) / (self.to - self.from)).clamp(0.0, 1.0);
        match self.ramp {
            Ramp::Linear => t,
            Ramp::Smoothstep => t * t * (3.0 - 2.0 * t),
        }
    }

    /// The weight for joint rotation `rotation`: `ramp(measure(rotation))`.
    #[inline]
    #[must_use]
    pub fn weight(&self, rotation: Quat) -> f32 {
        self.ramp(self.measure(rotation))
    }
}

/// A validated list of shape drivers.
#[derive(Clone, Copy, Debug)]
pub struct ShapeDrivers<'a> {
    shape_count: usize,
    joint_count: usize,
    drivers: &'a [Driver<'a>],
}

/// `k` as the `u32` an error names (saturating).
#[inline]
fn name(k: usize) -> u32 {
    u32::try_from(k).unwrap_or(u32::MAX)
}

fn unit(axis: Vec3) -> bool {
    axis.is_finite() && libm::fabsf(axis.length_squared() - 1.0) <= 1e-4
}

fn check_corrective(c: &Corrective, joint_count: usize) -> Result<(), &'static str> {
    if c.joint as usize >= joint_count {
        return Err("joint index is not below the joint count");
    }
    if !c.reference.is_finite() || c.reference.dot(c.reference) == 0.0 {
        return Err("reference rotation must be a finite, non-zero quaternion");
    }
    if let Angle::Swing { axis } | Angle::Twist { axis } = c.angle {
        if !unit(axis) {
            return Err("axis must be a finite unit vector");
        }
    }
    if !(c.from.is_finite() && c.to.is_finite()) {
        return Err("angle range is NaN or infinite");
    }
    if c.from == c.to {
        return Err("angle range is empty (θ0 == θ1)");
    }
    Ok(())
}

impl<'a> ShapeDrivers<'a> {
    /// Checks `drivers` against `shape_count` shapes and a skeleton of
    /// `joint_count` joints, once (O(drivers²), at load time).
    ///
    /// # Errors
    /// [`Error::InvalidDriver`] naming the first bad driver (its index in
    /// `drivers`): a shape index not below `shape_count`; a shape an earlier
    /// driver writes; a corrective whose joint is not below `joint_count`,
    /// whose reference is not a finite non-zero quaternion, whose axis is
    /// not a finite unit vector (`|‖a‖² − 1| <= 1e-4`), whose angles are
    /// not finite or are equal; a combination with no inputs, an input not
    /// below `shape_count`, or an input that it or a later driver writes.
    pub fn new(
        shape_count: usize,
        joint_count: usize,
        drivers: &'a [Driver<'a>],
    ) -> Result<Self, Error> {
        for (p, d) in drivers.iter().enumerate() {
            let fail = |what| Error::InvalidDriver {
                driver: name(p),
                what,
            };
            let shape = d.shape();
            if shape as usize >= shape_count {
                return Err(fail("shape index is not below the shape count"));
            }
            if drivers[..p].iter().any(|e| e.shape() == shape) {
                return Err(fail("writes a shape an earlier driver writes"));
            }
            match d {
                Driver::Corrective(c) => check_corrective(c, joint_count).map_err(fail)?,
                Driver::Combination(c) => {
                    if c.inputs.is_empty() {
                        return Err(fail("combination has no inputs"));
                    }
                    for &i in c.inputs {
                        if i as usize >= shape_count {
                            return Err(fail("input shape index is not below the shape count"));
                        }
                        if drivers[p..].iter().any(|e| e.shape() == i) {
                            return Err(fail(
                                "reads a shape that it or a later driver writes (list inputs first)",
                            ));
                        }
                    }
                }
            }
        }
        Ok(ShapeDrivers {
            shape_count,
            joint_count,
            drivers,
        })
    }

    /// Shapes the weight slice holds.
    #[inline]
    #[must_use]
    pub fn shape_count(&self) -> usize {
        self.shape_count
    }

    /// Joints of the pose the correctives read.
    #[inline]
    #[must_use]
    pub fn joint_count(&self) -> usize {
        self.joint_count
    }

    /// The drivers.
    #[inline]
    #[must_use]
    pub fn drivers(&self) -> &'a [Driver<'a>] {
        self.drivers
    }

    /// Overwrites the weight of every driven shape: each driver in slice
    /// order, correctives by [`Corrective::weight`], combinations by the
    /// product of their inputs. Weights of shapes no driver writes are left
    /// as they are; a combination reading a NaN weight writes NaN, which
    /// [`BlendShapes::apply`] then rejects.
    ///
    /// [`BlendShapes::apply`]: super::blend::BlendShapes::apply
    ///
    /// # Errors
    /// [`Error::BadLength`] unless `pose.len() == soa_count(joint_count)`
    /// (`"pose"`) and `weights.len() == shape_count` (`"shape weights"`);
    /// [`Error::InvalidDriver`] naming the first corrective whose joint
    /// rotation is NaN or infinite. Nothing is written on error.
    pub fn evaluate(&self, pose: &[SoaTransform], weights: &mut [f32]) -> Result<(), Error> {
        self.check(pose, weights)?;
        for d in self.drivers {
            let (shape, w) = match d {
                Driver::Corrective(c) => (c.shape, c.weight(rotation(pose, c.joint))),
                Driver::Combination(c) => (c.shape, product(c, weights)),
            };
            if let Some(x) = weights.get_mut(shape as usize) {
                *x = w;
            }
        }
        Ok(())
    }

    fn check(&self, pose: &[SoaTransform], weights: &[f32]) -> Result<(), Error> {
        check_len("pose", soa_count(self.joint_count), pose.len())?;
        check_len("shape weights", self.shape_count, weights.len())?;
        for (p, d) in self.drivers.iter().enumerate() {
            if let Driver::Corrective(c) = d {
                if !rotation(pose, c.joint).is_finite() {
                    return Err(Error::InvalidDriver {
                        driver: name(p),
                        what: "joint rotation is NaN or infinite",
                    });
                }
            }
        }
        Ok(())
    }
}

/// Joint `j`'s local rotation (validated in range; NaN past the pose,
/// which the finiteness check then reports).
#[inline]
fn rotation(pose: &[SoaTransform], j: u32) -> Quat {
    let j = j as usize;
    pose.get(j / LANES)
        .map_or(Quat::new(f32::NAN, 0.0, 0.0, 0.0), |b| {
            b.rotation.get(j % LANES)
        })
}

/// The product of a combination's input weights, in input order.
#[inline]
fn product(c: &Combination<'_>, weights: &[f32]) -> f32 {
    c.inputs.iter().fold(1.0, |p, &i| {
        p * weights.get(i as usize).copied().unwrap_or(0.0)
    })
}

#[cfg(test)]
mod tests {
    extern crate alloc;

    use super::*;
    use crate::math::Transform;
    use alloc::vec;
    use alloc::vec::Vec;
    use core::f32::consts::{FRAC_PI_2, PI};
    use proptest::prelude::*;

    fn pose_of(rotations: &[Quat]) -> Vec<SoaTransform> {
        let mut pose = vec![SoaTransform::IDENTITY; soa_count(rotations.len())];
        for (j, &r) in rotations.iter().enumerate() {
            pose[j / 4].set(j % 4, &Transform::new(Vec3::ZERO, r, Vec3::ONE));
        }
        pose
    }

    fn quat() -> impl Strategy<Value = Quat> {
        (
            prop::array::uniform3(-1.0f32..1.0),
            -PI..PI,
            0.2f32..3.0,
            any::<bool>(),
        )
            .prop_map(|(a, angle, scale, flip)| {
                let axis = Vec3::new(a[0], a[1], a[2])
                    .try_normalize()
                    .unwrap_or(Vec3::Y);
                let q = Quat::from_axis_angle(axis, angle).scale(scale);
                if flip {
                    -q
                } else {
                    q
                }
            })
    }

    fn axis() -> impl Strategy<Value = Vec3> {
        prop::array::uniform3(-1.0f32..1.0).prop_map(|a| {
            Vec3::new(a[0], a[1], a[2])
                .try_normalize()
                .unwrap_or(Vec3::Z)
        })
    }

    fn corrective() -> impl Strategy<Value = (Corrective, Quat)> {
        (
            quat(),
            quat(),
            axis(),
            0u8..3,
            -3.0f32..3.0,
            -3.0f32..3.0,
            any::<bool>(),
        )
            .prop_filter("non-empty range", |c| (c.4 - c.5).abs() > 1e-2)
            .prop_map(|(r, reference, axis, kind, from, to, smooth)| {
                let angle = match kind {
                    0 => Angle::Swing { axis },
                    1 => Angle::Twist { axis },
                    _ => Angle::Total,
                };
                let ramp = if smooth {
                    Ramp::Smoothstep
                } else {
                    Ramp::Linear
                };
                let c = Corrective {
                    shape: 0,
                    joint: 0,
                    reference,
                    angle,
                    from,
                    to,
                    ramp,
                };
                (c, r)
            })
    }

    /// The angle a corrective measures, from closed forms instead of a
    /// swing-twist split: with `d = r₀⁻¹ r = (v, w)`, unit axis `a` and
    /// `v_a = v · a`, the swing is `2 atan2(|v − v_a a|, √(w² + v_a²))`,
    /// the twist `2 atan2(±v_a, |w|)` (the sign of `w`: the twist
    /// quaternion is taken to `w >= 0`) and the total `2 atan2(|v|, |w|)`.
    fn closed_form(c: &Corrective, r: Quat) -> f32 {
        let d = c.reference.conjugate() * r;
        let v = Vec3::new(d.x, d.y, d.z);
        let (axis, kind) = match c.angle {
            Angle::Swing { axis } => (axis, 0),
            Angle::Twist { axis } => (axis, 1),
            Angle::Total => (Vec3::ZERO, 2),
        };
        let va = v.dot(axis);
        let (y, x) = match kind {
            0 => ((v - axis * va).length(), (d.w * d.w + va * va).sqrt()),
            1 => (if d.w < 0.0 { -va } else { va }, d.w.abs()),
            _ => (v.length(), d.w.abs()),
        };
        2.0 * y.atan2(x)
    }

    proptest! {
        #[test]
        fn evaluate_matches_the_closed_forms(cases in prop::collection::vec(corrective(), 1..11)) {
            let rotations: Vec<Quat> = cases.iter().map(|c| c.1).collect();
            let pose = pose_of(&rotations);
            // Corrective k reads joint k and writes shape 2k; shape 2k + 1
            // is the product of shapes 2k and 2k + 2 (wrapping).
            let n = cases.len() as u32;
            let pairs: Vec<[u32; 2]> = (0..n).map(|k| [2 * k, (2 * k + 2) % (2 * n)]).collect();
            let mut drivers: Vec<Driver<'_>> = cases
                .iter()
                .enumerate()
                .map(|(k, (c, _))| Driver::Corrective(Corrective { shape: 2 * k as u32, joint: k as u32, ..*c }))
                .collect();
            drivers.extend(pairs.iter().enumerate().map(|(k, p)| Driver::Combination(Combination { shape: 2 * k as u32 + 1, inputs: p })));
            let set = ShapeDrivers::new(2 * cases.len(), cases.len(), &drivers).unwrap();
            let mut got = vec![0.5; 2 * cases.len()];
            set.evaluate(&pose, &mut got).unwrap();
            let want: Vec<f32> = cases.iter().map(|(c, r)| {
                let t = ((closed_form(c, *r) - c.from) / (c.to - c.from)).clamp(0.0, 1.0);
                if c.ramp == Ramp::Smoothstep { t * t * (3.0 - 2.0 * t) } else { t }
            }).collect();
            for (k, w) in want.iter().enumerate() {
                prop_assert!((got[2 * k] - w).abs() <= 1e-4, "corrective {k}: {} vs {w}", got[2 * k]);
                let product = w * want[(k + 1) % want.len()];
                prop_assert!((got[2 * k + 1] - product).abs() <= 2e-4, "combination {k}");
            }
        }
    }

    #[test]
    fn ninety_degree_elbow_bends() {
        // Elbow hinge about X: bent 90° of a 0..120° linear ramp is 0.75,
        // its smoothstep 0.75² (3 − 1.5) = 0.84375.
        let c = Corrective {
            shape: 0,
            joint: 0,
            reference: Quat::IDENTITY,
            angle: Angle::Twist { axis: Vec3::X },
            from: 0.0,
            to: 2.0 * PI / 3.0,
            ramp: Ramp::Linear,
        };
        let bent = Quat::from_rotation_x(FRAC_PI_2);
        assert!((c.weight(bent) - 0.75).abs() < 1e-6);
        let s = Corrective {
            ramp: Ramp::Smoothstep,
            ..c
        };
        assert!((s.weight(bent) - 0.843_75).abs() < 1e-6);
        // Overextended (−90°) reads −π/2: weight 0.
        assert_eq!(c.weight(Quat::from_rotation_x(-FRAC_PI_2)), 0.0);
        assert!((c.measure(Quat::from_rotation_x(-FRAC_PI_2)) + FRAC_PI_2).abs() < 1e-6);
    }
}
