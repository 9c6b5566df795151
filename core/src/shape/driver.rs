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
//! read only the pose, so [`ShapeDrivers::evaluate`] runs them all first,
//! four per lane instruction, then the combinations in order: the same
//! result as running the slice in order.

use wide::f32x4;

use crate::fp::{Fp, Trig};
use crate::ik::limits::{swing_angle, swing_twist, twist_angle};
use crate::math::{Quat, Vec3};
use crate::soa::{check_len, detail, soa_count, SoaQuat, SoaTransform, SoaVec3, LANES};
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

    /// Overwrites the weight of every driven shape, lane path: correctives
    /// four at a time (angles from the closed forms of swing and twist,
    /// one lane `atan2`), then combinations in order. Weights of shapes no
    /// driver writes are left as they are; a combination reading a NaN
    /// weight writes NaN, which [`BlendShapes::apply`] then rejects.
    /// Equals [`evaluate_scalar`](Self::evaluate_scalar) within 1e-5.
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
        let mut block = Block::new();
        for d in self.drivers {
            if let Driver::Corrective(c) = d {
                if block.push(c, rotation(pose, c.joint)) {
                    block.flush(weights);
                }
            }
        }
        block.flush(weights);
        self.combinations(weights);
        Ok(())
    }

    /// The scalar twin of [`evaluate`](Self::evaluate): each driver in
    /// order, correctives by [`Corrective::weight`] (which splits the
    /// rotation with [`swing_twist`]). Same contract and errors.
    ///
    /// # Errors
    /// As [`evaluate`](Self::evaluate).
    pub fn evaluate_scalar(&self, pose: &[SoaTransform], weights: &mut [f32]) -> Result<(), Error> {
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

    fn combinations(&self, weights: &mut [f32]) {
        for d in self.drivers {
            if let Driver::Combination(c) = d {
                let w = product(c, weights);
                if let Some(x) = weights.get_mut(c.shape as usize) {
                    *x = w;
                }
            }
        }
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

/// Up to four correctives gathered into lanes.
struct Block {
    /// Joint rotations.
    rotation: SoaQuat,
    /// References.
    reference: SoaQuat,
    /// Axes (zero for [`Angle::Total`]).
    axis: SoaVec3,
    /// Lanes reading the swing, the twist, and through the smoothstep
    /// (1.0 or 0.0).
    swing: [f32; LANES],
    twist: [f32; LANES],
    smooth: [f32; LANES],
    /// `θ0` and `1/(θ1 − θ0)`.
    from: [f32; LANES],
    inv_span: [f32; LANES],
    shape: [u32; LANES],
    n: usize,
}

impl Block {
    fn new() -> Self {
        Block {
            rotation: SoaQuat::IDENTITY,
            reference: SoaQuat::IDENTITY,
            axis: SoaVec3::ZERO,
            swing: [0.0; LANES],
            twist: [0.0; LANES],
            smooth: [0.0; LANES],
            from: [0.0; LANES],
            inv_span: [1.0; LANES],
            shape: [0; LANES],
            n: 0,
        }
    }

    /// Adds a corrective; true when the block is full.
    fn push(&mut self, c: &Corrective, r: Quat) -> bool {
        let l = self.n;
        if l >= LANES {
            return true;
        }
        self.rotation.set(l, r);
        self.reference.set(l, c.reference);
        let (axis, swing, twist) = match c.angle {
            Angle::Swing { axis } => (axis, 1.0, 0.0),
            Angle::Twist { axis } => (axis, 0.0, 1.0),
            Angle::Total => (Vec3::ZERO, 0.0, 0.0),
        };
        self.axis.set(l, axis);
        self.swing[l] = swing;
        self.twist[l] = twist;
        self.smooth[l] = if c.ramp == Ramp::Smoothstep { 1.0 } else { 0.0 };
        self.from[l] = c.from;
        self.inv_span[l] = 1.0 / (c.to - c.from);
        self.shape[l] = c.shape;
        self.n += 1;
        self.n == LANES
    }

    /// Evaluates the gathered lanes into `weights` and empties the block.
    fn flush(&mut self, weights: &mut [f32]) {
        if self.n == 0 {
            return;
        }
        let w = corrective_lanes(self).to_array();
        for (&s, &w) in self.shape.iter().zip(&w).take(self.n) {
            if let Some(x) = weights.get_mut(s as usize) {
                *x = w;
            }
        }
        self.n = 0;
    }
}

/// The weights of four correctives. With `d = r₀⁻¹ r = (v, w)` and unit
/// axis `a`, `v_a = v · a`: the swing is `2 atan2(|v − v_a a|, √(w² +
/// v_a²))` (the swing part of [`swing_twist`] has vector length
/// `|v − v_a a|` and scalar `±√(w² + v_a²)`), the twist `2 atan2(±v_a,
/// |w|)` (sign of `w`, as the twist quaternion is taken to `w >= 0`), the
/// total `2 atan2(|v|, |w|)`.
fn corrective_lanes(b: &Block) -> f32x4 {
    let mask = |flags: [f32; LANES]| f32x4::new(flags).simd_gt(f32x4::ZERO);
    let conj = SoaQuat {
        x: -b.reference.x,
        y: -b.reference.y,
        z: -b.reference.z,
        w: b.reference.w,
    };
    let d = detail::quat_mul(&conj, &b.rotation);
    let a = &b.axis;
    let va = d.x.madd(a.x, d.y.madd(a.y, d.z * a.z));
    let (px, py, pz) = (d.x - va * a.x, d.y - va * a.y, d.z - va * a.z);
    let perp = crate::math::sqrt4(px.madd(px, py.madd(py, pz * pz)));
    let v = crate::math::sqrt4(d.x.madd(d.x, d.y.madd(d.y, d.z * d.z)));
    let aw = d.w.abs();
    let swing_x = crate::math::sqrt4(d.w.madd(d.w, va * va));
    let twist_y = d.w.simd_lt(f32x4::ZERO).bitselect(-va, va);
    let (swing, twist) = (mask(b.swing), mask(b.twist));
    let y = swing.bitselect(perp, twist.bitselect(twist_y, v));
    let x = swing.bitselect(swing_x, aw);
    let theta = f32x4::splat(2.0) * y.arctan2(x);
    let t = ((theta - f32x4::new(b.from)) * f32x4::new(b.inv_span))
        .max_num(f32x4::ZERO)
        .min_num(f32x4::ONE);
    let smooth = t * t * (f32x4::splat(3.0) - f32x4::splat(2.0) * t);
    mask(b.smooth).bitselect(smooth, t)
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use crate::math::Transform;
    use core::f32::consts::{FRAC_PI_2, PI};
    use proptest::prelude::*;
    use std::vec;
    use std::vec::Vec;

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

    proptest! {
        #[test]
        fn lanes_equal_scalar(cases in prop::collection::vec(corrective(), 1..11)) {
            let rotations: Vec<Quat> = cases.iter().map(|c| c.1).collect();
            let pose = pose_of(&rotations);
            // Corrective k reads joint k and writes shape 2k; a combination
            // of every pair after them.
            let pairs: Vec<[u32; 2]> = (0..cases.len() as u32).map(|k| [2 * k, (2 * k + 2) % (2 * cases.len() as u32)]).collect();
            let mut drivers: Vec<Driver<'_>> = cases
                .iter()
                .enumerate()
                .map(|(k, (c, _))| Driver::Corrective(Corrective { shape: 2 * k as u32, joint: k as u32, ..*c }))
                .collect();
            drivers.extend(pairs.iter().enumerate().map(|(k, p)| Driver::Combination(Combination { shape: 2 * k as u32 + 1, inputs: p })));
            let set = ShapeDrivers::new(2 * cases.len(), cases.len(), &drivers).unwrap();
            let mut a = vec![0.5; 2 * cases.len()];
            let mut b = a.clone();
            set.evaluate(&pose, &mut a).unwrap();
            set.evaluate_scalar(&pose, &mut b).unwrap();
            for (x, y) in a.iter().zip(&b) {
                prop_assert!((x - y).abs() <= 1e-5, "{a:?} vs {b:?}");
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
