//! Foot placement: legs planted on uneven ground under an animated pose.
//!
//! Per frame, on a pose whose model matrices are up to date (+Y up):
//! 1. **Probe.** Each leg's animated ankle `a` is probed at `(a.x, a.z)`
//!    through a caller-supplied [`Ground`]. The animation is taken as
//!    authored on a flat floor at height `floor` (0, or the height of the
//!    character's root), so the ankle's target height is
//!    `h + max(a.y − floor, foot_height)`: its animated clearance, carried
//!    over onto the ground height `h`, and never less than `foot_height`.
//! 2. **Pelvis.** The pelvis moves vertically by the smallest of the legs'
//!    offsets (target − animated height), so the leg that must reach
//!    lowest can; the other legs bend. The offset is clamped to
//!    `±max_pelvis_offset`.
//! 3. **Smoothing.** The pelvis offset, each foot's offset and each
//!    ground normal follow their targets through critically damped
//!    springs ([`Spring`], state in [`FootState`]), so steps, edges and
//!    contact changes do not pop. A smoothed foot target is then raised to
//!    `h + foot_height` if it lags below it: feet never sink into the
//!    ground.
//! 4. **Legs.** Two-bone IK ([`super::two_bone`], four legs per call of
//!    [`solve_lanes4`]) moves each grounded ankle
//!    to its target, bending in the plane the animated leg bends in: the
//!    knee's hinge axis is `shin × thigh` of the current pose (the
//!    configured [`FootLeg::knee_axis`] when the leg is straight), the
//!    pole is the knee's offset from the hip→ankle line.
//! 5. **Feet.** Each grounded ankle turns by the arc from +Y to the
//!    smoothed ground normal, limited to `max_tilt` radians.
//!
//! Legs with no ground under them ([`Ground::probe`] returns `None`) keep
//! their animated pose relative to the pelvis.

use super::two_bone::{self, solve_lanes4, Limb, TwoBoneGoal, TwoBoneLanes, TwoBoneLanesOut};
use super::IkPose;
use crate::fp::Fp;
use crate::math::{Mat4, Quat, Vec3};
use crate::Error;

/// A height field queried at model-space `(x, z)` (the space of the pose's
/// matrices: world space when the pose carries the character's root).
///
/// Any `Fn(f32, f32) -> Option<(f32, Vec3)>` closure is a `Ground`.
pub trait Ground {
    /// The ground height `y` under `(x, z)` and its normal (any non-zero
    /// length, pointing up), or `None` where there is no ground.
    fn probe(&self, x: f32, z: f32) -> Option<(f32, Vec3)>;
}

impl<F: Fn(f32, f32) -> Option<(f32, Vec3)>> Ground for F {
    #[inline]
    fn probe(&self, x: f32, z: f32) -> Option<(f32, Vec3)> {
        self(x, z)
    }
}

/// The critically damped spring foot placement smooths with (its
/// [`Spring::update`] shorthand), kept here under the name foot placement
/// has always exported.
pub use crate::secondary::spring::Spring;

/// One leg: hip → knee → ankle (each the parent of the next).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FootLeg {
    /// Hip (thigh) joint; the pelvis must be one of its ancestors.
    pub hip: usize,
    /// Knee joint, a child of `hip`.
    pub knee: usize,
    /// Ankle (foot) joint, a child of `knee`.
    pub ankle: usize,
    /// The knee's hinge axis in its local frame (see
    /// [`TwoBoneGoal::mid_axis`]), used only when the leg is straight.
    pub knee_axis: Vec3,
}

/// Foot placement settings for a character with `N` legs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FootPlacement<const N: usize> {
    /// The joint moved up and down (hips / pelvis).
    pub pelvis: usize,
    /// The legs.
    pub legs: [FootLeg; N],
    /// Height of the ankle above the ground when the foot is flat on it,
    /// length units (≥ 0).
    pub foot_height: f32,
    /// Largest tilt of a foot towards the ground normal, radians in
    /// `[0, π]`.
    pub max_tilt: f32,
    /// Largest vertical pelvis offset, length units (≥ 0).
    pub max_pelvis_offset: f32,
    /// Half-life of the smoothing springs, seconds (≥ 0; 0 = no smoothing).
    pub half_life: f32,
    /// Soften ratio of the leg solves ([`TwoBoneGoal::soften`]).
    pub soften: f32,
}

/// What persists between frames: the springs. Plain data, owned by the
/// caller, one per character; [`FootState::new`] (or a state whose
/// `primed` is false) snaps to the first frame's targets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FootState<const N: usize> {
    /// Pelvis vertical offset.
    pub pelvis: Spring,
    /// Each foot's vertical offset from its animated height.
    pub feet: [Spring; N],
    /// Each foot's ground normal, per component.
    pub normals: [[Spring; 3]; N],
    /// False until the first solve.
    pub primed: bool,
}

impl<const N: usize> FootState<N> {
    /// A state that snaps to the first frame.
    #[must_use]
    pub const fn new() -> Self {
        const Z: Spring = Spring {
            value: 0.0,
            velocity: 0.0,
        };
        FootState {
            pelvis: Z,
            feet: [Z; N],
            normals: [[Z; 3]; N],
            primed: false,
        }
    }
}

impl<const N: usize> Default for FootState<N> {
    fn default() -> Self {
        FootState::new()
    }
}

/// The result of a foot placement.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FootReport<const N: usize> {
    /// The (smoothed) vertical offset applied to the pelvis.
    pub pelvis_offset: f32,
    /// Whether each leg found ground (and was solved).
    pub grounded: [bool; N],
    /// Whether each leg's ankle reached its target.
    pub reached: [bool; N],
}

impl<const N: usize> FootPlacement<N> {
    fn check(&self, pose: &IkPose<'_, '_>, floor: f32, dt: f32) -> Result<(), Error> {
        let finite_nonneg = |x: f32| x.is_finite() && x >= 0.0;
        if !(finite_nonneg(dt)
            && finite_nonneg(self.half_life)
            && finite_nonneg(self.foot_height)
            && finite_nonneg(self.max_pelvis_offset)
            && (0.0..=core::f32::consts::PI).contains(&self.max_tilt)
            && (0.0..=1.0).contains(&self.soften))
        {
            return Err(Error::InvalidParameter {
                what: "foot placement: dt, half_life, foot_height, max_pelvis_offset must be finite and >= 0, max_tilt in [0, pi], soften in [0, 1]",
            });
        }
        if !floor.is_finite() {
            return Err(Error::NonFinite {
                what: "foot placement floor",
            });
        }
        let s = pose.skeleton();
        let n = s.joint_count();
        if self.pelvis >= n {
            return Err(Error::JointOutOfRange {
                joint: self.pelvis,
                count: n,
            });
        }
        for leg in &self.legs {
            let limb = Limb::from_pose(pose, leg.hip, leg.knee, leg.ankle)?;
            two_bone::validate(
                &limb,
                &TwoBoneGoal::new(limb.end).with_mid_axis(leg.knee_axis),
            )?;
            // The pelvis must be a strict ancestor of the hip.
            let mut k = leg.hip;
            loop {
                match s.parent(k) {
                    Some(p) if p == self.pelvis => break,
                    Some(p) => k = p,
                    None => {
                        return Err(Error::InvalidParameter {
                            what: "foot placement: the pelvis must be an ancestor of every hip",
                        })
                    }
                }
            }
        }
        Ok(())
    }

    /// Places the feet on `ground` and writes the result into `pose`
    /// (pelvis translation, leg and ankle rotations, model matrices of the
    /// pelvis's subtree), advancing `state` by `dt` seconds. `floor` is the
    /// height of the animation's flat floor in the pose's model space.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for settings outside their ranges, a
    /// pelvis that is not an ancestor of every hip, a leg that is not a
    /// parent → child → child chain or has a zero-length bone or knee axis;
    /// [`Error::JointOutOfRange`]; [`Error::NonFinite`] for a non-finite
    /// `floor`, ground height or normal (or a zero normal);
    /// [`Error::SingularTransform`] when the pelvis's parent frame cannot be
    /// inverted. On error the pose and `state` are untouched.
    pub fn solve<G: Ground + ?Sized>(
        &self,
        pose: &mut IkPose<'_, '_>,
        ground: &G,
        floor: f32,
        dt: f32,
        state: &mut FootState<N>,
    ) -> Result<FootReport<N>, Error> {
        self.check(pose, floor, dt)?;
        let to_parent = parent_inverse(pose, self.pelvis)?;
        // 1. Probe every leg before writing anything.
        let mut anim = [Vec3::ZERO; N];
        let mut hits: [Option<(f32, Vec3)>; N] = [None; N];
        let mut offsets = [0.0f32; N];
        for (i, leg) in self.legs.iter().enumerate() {
            let a = pose.position(leg.ankle)?;
            anim[i] = a;
            if let Some((h, n)) = ground.probe(a.x, a.z) {
                let n = match n.try_normalize() {
                    Some(n) if h.is_finite() => n,
                    _ => {
                        return Err(Error::NonFinite {
                            what: "foot placement ground height or normal",
                        })
                    }
                };
                let target = h + (a.y - floor).max_num(self.foot_height);
                offsets[i] = target - a.y;
                hits[i] = Some((h, n));
            }
        }
        // 2. Pelvis target: the lowest leg's offset.
        let mut pelvis_target = f32::INFINITY;
        for (o, hit) in offsets.iter().zip(&hits) {
            if hit.is_some() {
                pelvis_target = pelvis_target.min_num(*o);
            }
        }
        if !pelvis_target.is_finite() {
            pelvis_target = 0.0;
        }
        let pelvis_target = pelvis_target.clamp(-self.max_pelvis_offset, self.max_pelvis_offset);

        // 3. Springs.
        let dt = if state.primed { dt } else { 0.0 };
        let hl = if state.primed { self.half_life } else { 0.0 };
        state.primed = true;
        let pelvis_offset = state.pelvis.update(pelvis_target, hl, dt);
        let mut normals = [Vec3::Y; N];
        for i in 0..N {
            let n = hits[i].map_or(Vec3::Y, |(_, n)| n);
            let s = &mut state.normals[i];
            let sm = Vec3::new(
                s[0].update(n.x, hl, dt),
                s[1].update(n.y, hl, dt),
                s[2].update(n.z, hl, dt),
            );
            normals[i] = sm.try_normalize().unwrap_or(Vec3::Y);
            state.feet[i].update(offsets[i], hl, dt);
        }

        // 4. Pelvis: a model-space vertical move, in its parent's frame.
        let delta = Vec3::new(0.0, pelvis_offset, 0.0);
        let delta = to_parent.map_or(delta, |m| m.transform_vector(delta));
        let mut t = pose.local(self.pelvis)?;
        t.translation = t.translation + delta;
        crate::soa::set_joint(pose.local, self.pelvis, &t)?;
        pose.update_models(self.pelvis)?;

        // 5. Legs and feet.
        let mut report = FootReport {
            pelvis_offset,
            grounded: [false; N],
            reached: [false; N],
        };
        // The legs are solved four at a time in the lane kernel; each
        // leg's subtree is disjoint from the others', so they can be read
        // together and written one by one.
        let mut lanes = TwoBoneLanes::<4>::EMPTY;
        let mut out = TwoBoneLanesOut::<4>::EMPTY;
        let mut first = 0;
        while first < N {
            let end = (first + 4).min(N);
            lanes.weight = [0.0; 4];
            for i in first..end {
                let Some((h, _)) = hits[i] else { continue };
                let leg = &self.legs[i];
                let limb = Limb::from_pose(pose, leg.hip, leg.knee, leg.ankle)?;
                let y = (anim[i].y + state.feet[i].value).max_num(h + self.foot_height);
                let target = Vec3::new(limb.end.x, y, limb.end.z);
                // The bend plane of the animated leg: hinge `shin × thigh`,
                // pole the knee's offset from the hip→ankle line.
                let (u, v) = (limb.mid - limb.start, limb.end - limb.mid);
                let bent = v.cross(u);
                // Validated above, so the mid frame is not singular.
                let rm =
                    two_bone::orthonormal(&limb.mid_frame).unwrap_or([Vec3::X, Vec3::Y, Vec3::Z]);
                let axis = if bent.length() > 1e-3 * u.length() * v.length() {
                    Vec3::new(rm[0].dot(bent), rm[1].dot(bent), rm[2].dot(bent))
                } else {
                    leg.knee_axis
                };
                let w = (limb.end - limb.start)
                    .try_normalize()
                    .unwrap_or(Vec3::ZERO);
                let goal = TwoBoneGoal::new(target)
                    .with_pole(u - w * u.dot(w))
                    .with_mid_axis(axis)
                    .with_soften(self.soften);
                lanes.set_lane(i - first, &limb, &goal);
            }
            solve_lanes4(&lanes, &mut out);
            for i in first..end {
                let Some(r) = out.lane(i - first) else {
                    continue;
                };
                if hits[i].is_none() {
                    continue;
                }
                let leg = &self.legs[i];
                r.apply(pose, leg.hip, leg.knee)?;
                report.grounded[i] = true;
                report.reached[i] = r.reached;
                // Foot on the ground normal, at most `max_tilt`.
                let n = normals[i];
                let c = Vec3::Y.cross(n);
                let sin = c.length();
                let angle = libm::atan2f(sin, n.y).min_num(self.max_tilt);
                if sin > 1e-7 && angle > 0.0 {
                    pose.rotate_model(leg.ankle, Quat::from_axis_angle(c * (1.0 / sin), angle))?;
                    pose.update_models(leg.ankle)?;
                }
            }
            first = end;
        }
        Ok(report)
    }
}

/// The inverse of joint `j`'s parent frame (its parent's model matrix,
/// or the pose's root matrix for a root joint; `None` for identity), which
/// takes model-space offsets into `j`'s local translation.
fn parent_inverse(pose: &IkPose<'_, '_>, j: usize) -> Result<Option<Mat4>, Error> {
    let parent = match pose.skeleton().parent(j) {
        Some(p) => Some(*pose.model(p)?),
        None => pose.root.copied(),
    };
    parent
        .map(|m| {
            m.inverse_affine()
                .ok_or(Error::SingularTransform { joint: j })
        })
        .transpose()
}
