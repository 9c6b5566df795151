//! Analytic two-bone IK: a start joint (hip, shoulder), a mid joint (knee,
//! elbow) and an end joint (ankle, wrist) turned so that the end reaches a
//! target, by the law of cosines.
//!
//! The solve follows ozz-animation's `IKTwoBoneJob` in what it computes
//! (two corrections, start and mid, each in its joint's own frame, to be
//! multiplied into the local rotations) and in its parameters (pole vector,
//! mid-joint axis, weight, soften, twist), but works in model space and
//! without trigonometry: every angle is carried as a (cosine, sine) pair and
//! turned into a quaternion by half-angle formulas, so a solve costs square
//! roots and no `acos`/`sin`.
//!
//! # The solve, step by step
//! With `u = mid − start`, `v = end − mid` (bone lengths `l1`, `l2`), the
//! target distance `D = |target − start|` (after softening, below) and `a`
//! the mid axis in model space:
//! 1. **Mid joint.** Turning `v` about `a` by θ changes the start→end
//!    distance as `|u + R(θ)v|² = l1² + l2² + 2 u·R(θ)v`, and
//!    `u·R(θ)v = C0 + A cos θ + B sin θ` with `C0 = (u·a)(v·a)`,
//!    `A = u·(v − a(v·a))`, `B = u·(a × v)`. Setting it to `D` gives
//!    `cos(θ − α) = (½(D² − l1² − l2²) − C0) / r`, `r = √(A² + B²)`,
//!    `α = atan2(B, A)`: θ = α − arccos(…), the root that bends the joint
//!    to the side the axis prescribes (the right-hand rule about `a` opens
//!    the joint). For an axis perpendicular to both bones (a hinge, as
//!    knees and elbows are) this is the law of cosines; for a tilted axis
//!    it is still exact. The cosine is clamped to [−1, 1]: a target out of
//!    reach leaves the limb fully extended (or fully folded when it is
//!    closer than `|l1 − l2|`).
//! 2. **Start joint, aim.** The shortest arc that turns the new
//!    start→end vector onto start→target.
//! 3. **Start joint, bend plane.** A turn about start→target that brings
//!    the mid axis onto `normalize(start→target × pole)`: the limb's plane
//!    then contains the pole vector and the mid joint lies on the pole's
//!    side of the start→target line. Skipped (the plane the aim leaves is
//!    kept) when the pole is zero or parallel to start→target.
//! 4. **Twist.** A turn by `twist` radians about start→target.
//! 5. **Weight.** Each correction is `nlerp(identity, correction, weight)`
//!    on the `w ≥ 0` hemisphere.
//!
//! # Softening
//! Near full extension the mid angle changes fast for small target moves,
//! so an animated target makes the knee snap straight. With `soften < 1`
//! the chain starts falling behind the target at `Ds = soften · (l1 + l2)`:
//! for a target distance `D > Ds`, with `δ = (l1 + l2) − Ds` and
//! `x = (D − Ds) / δ`, the solver aims at the distance
//! `Ds + δ · (1 − (1 + x/4)⁻⁴)`,
//! which has value `Ds` and slope 1 at `D = Ds` (no kink) and approaches
//! full extension only as `D → ∞` (so the limb never locks straight).
//! The direction is kept. `soften = 1` turns softening off.
//!
//! # One limb
//! [`corrections`] (from a gathered [`Limb`]) and
//! [`corrections_from_models`] (from the three model matrices) solve one
//! limb; [`TwoBoneIk::solve`] runs them on an [`IkPose`]. They compute
//! what [`reference()`], the readable form above, computes (within 1e-5)
//! with a much shorter chain of dependent square roots, on AVX2 with one
//! vector per register, and hand degenerate or ill-conditioned limbs over
//! to it.
//!
//! # Lanes
//! [`solve_lanes4`] and [`solve_lanes8`] run the same solve for 4 or 8
//! limbs at once, one limb per lane of [`TwoBoneLanes`]: `set_lane` packs a
//! [`Limb`] and a [`TwoBoneGoal`] into lane `i` (gather), the kernel fills
//! a [`TwoBoneLanesOut`], and `TwoBoneLanesOut::lane(i)` hands back that
//! lane's [`TwoBoneReport`] (scatter; apply it with
//! [`TwoBoneReport::apply`]). [`solve_many`] does all of that over a slice
//! of [`IkPose`]s.

use wide::{f32x4, f32x8};

use super::lanes::{Lane, Q, V};
use super::IkPose;
use crate::fp::Fp;
use crate::math::{sqrt_f32, Mat4, Quat, Vec3};
use crate::Error;

/// Bones shorter than this (in the data's length unit) are rejected:
/// the solve divides by both bone lengths.
pub const MIN_BONE_LENGTH: f32 = 1e-6;

/// The tolerance of [`TwoBoneReport::reached`], relative to the limb
/// length `l1 + l2`: a target within `REACH_TOLERANCE · (l1 + l2)` of the
/// reachable shell counts as reached (the end joint lands that close).
pub const REACH_TOLERANCE: f32 = 1e-5;

/// Below this fraction of `l1 · l2`, the mid axis is taken as parallel to
/// a bone, and turning about it cannot change the start→end distance.
const HINGE_EPSILON: f32 = 1e-6;

/// Below this fraction of the limb length, the target is taken to sit on
/// the start joint: there is no start→target direction to aim at.
const DIRECTION_EPSILON: f32 = 1e-6;

/// Below this length (relative to the pole's, for start→target × pole), a
/// bend-plane normal is taken as undefined.
const PLANE_EPSILON: f32 = 1e-6;

/// Where a limb is: model-space positions of its three joints and the
/// frames (model-space axes) of the first two.
///
/// A frame is the three columns of the joint's model matrix's 3x3 part:
/// its local X, Y and Z axes in model space, scale included. The solve
/// takes their rotation by Gram-Schmidt (as [`Mat4::rotation`] does), so a
/// frame needs no normalisation, and gathering one from a matrix is a
/// copy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limb {
    /// Start joint position (hip, shoulder).
    pub start: Vec3,
    /// Mid joint position (knee, elbow).
    pub mid: Vec3,
    /// End joint position (ankle, wrist).
    pub end: Vec3,
    /// Start joint's frame: its local X, Y, Z axes in model space.
    pub start_frame: [Vec3; 3],
    /// Mid joint's frame.
    pub mid_frame: [Vec3; 3],
}

impl Limb {
    /// Reads a limb out of a pose: the positions of `start`, `mid` and
    /// `end` and the frames of the first two ([`Limb::from_models`]).
    ///
    /// # Errors
    /// [`Error::JointOutOfRange`] for a joint past the skeleton;
    /// [`Error::InvalidParameter`] unless `mid`'s parent is `start` and
    /// `end`'s parent is `mid`.
    pub fn from_pose(
        pose: &IkPose<'_, '_>,
        start: usize,
        mid: usize,
        end: usize,
    ) -> Result<Limb, Error> {
        let [s, m, e] = Limb::models(pose, start, mid, end)?;
        Ok(Limb::from_models(s, m, e))
    }

    /// The model matrices of `start`, `mid` and `end`, checked as
    /// [`Limb::from_pose`] checks them.
    fn models<'p>(
        pose: &'p IkPose<'_, '_>,
        start: usize,
        mid: usize,
        end: usize,
    ) -> Result<[&'p Mat4; 3], Error> {
        let s = pose.skeleton();
        let n = s.joint_count();
        for j in [start, mid, end] {
            if j >= n {
                return Err(Error::JointOutOfRange { joint: j, count: n });
            }
        }
        if s.parent(mid) != Some(start) || s.parent(end) != Some(mid) {
            return Err(Error::InvalidParameter {
                what: "two-bone IK: mid must be a child of start and end a child of mid",
            });
        }
        Ok([pose.model(start)?, pose.model(mid)?, pose.model(end)?])
    }

    /// A limb from the three joints' model matrices: their translations
    /// and the 3x3 columns of the first two (copies, no arithmetic). What a
    /// caller gathering lanes from its own matrices calls.
    #[must_use]
    #[inline(always)]
    pub fn from_models(start: &Mat4, mid: &Mat4, end: &Mat4) -> Limb {
        let frame = |m: &Mat4| {
            let c = |i: usize| Vec3::new(m.cols[i][0], m.cols[i][1], m.cols[i][2]);
            [c(0), c(1), c(2)]
        };
        Limb {
            start: start.translation(),
            mid: mid.translation(),
            end: end.translation(),
            start_frame: frame(start),
            mid_frame: frame(mid),
        }
    }

    /// A limb from positions and model-space rotations (unit quaternions)
    /// of the start and mid joints.
    #[must_use]
    pub fn from_rotations(
        start: Vec3,
        mid: Vec3,
        end: Vec3,
        start_rotation: Quat,
        mid_rotation: Quat,
    ) -> Limb {
        let frame = |q: Quat| [q.rotate(Vec3::X), q.rotate(Vec3::Y), q.rotate(Vec3::Z)];
        Limb {
            start,
            mid,
            end,
            start_frame: frame(start_rotation),
            mid_frame: frame(mid_rotation),
        }
    }
}

/// What a two-bone solve aims for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TwoBoneGoal {
    /// Where the end joint should be, in model space.
    pub target: Vec3,
    /// Model-space direction the mid joint should bend towards; it and the
    /// start→target line span the limb's plane. Any length up to 1e18;
    /// zero (or parallel to start→target) keeps the plane the aim leaves.
    pub pole: Vec3,
    /// The mid joint's hinge axis in its own (local) frame, any non-zero
    /// length. Turning about it by a positive angle (right-hand rule) opens
    /// the joint; folding swings the end joint towards
    /// `(mid − start) × axis` (axis in model space), and that is the side
    /// the solve bends to. For exact pole-plane placement it should be
    /// perpendicular to both bones, as knee and elbow axes are.
    pub mid_axis: Vec3,
    /// Blend between no correction (0) and the full solve (1), in `[0, 1]`.
    pub weight: f32,
    /// Fraction of the limb length where softening starts, in `[0, 1]`;
    /// 1 = no softening (see the [module docs](self)).
    pub soften: f32,
    /// Turn of the whole limb about start→target, radians.
    pub twist: f32,
}

impl TwoBoneGoal {
    /// A goal at `target` with the defaults: pole +Z and mid axis −X (a
    /// knee of sinew's procedural humanoid: +Y up, +Z forward, the shin
    /// folding backwards), weight 1, no softening, no twist.
    #[must_use]
    pub const fn new(target: Vec3) -> Self {
        TwoBoneGoal {
            target,
            pole: Vec3::Z,
            mid_axis: Vec3::new(-1.0, 0.0, 0.0),
            weight: 1.0,
            soften: 1.0,
            twist: 0.0,
        }
    }

    /// The same goal with another pole vector.
    #[must_use]
    pub const fn with_pole(mut self, pole: Vec3) -> Self {
        self.pole = pole;
        self
    }

    /// The same goal with another mid-joint axis (local frame).
    #[must_use]
    pub const fn with_mid_axis(mut self, axis: Vec3) -> Self {
        self.mid_axis = axis;
        self
    }

    /// The same goal with another weight.
    #[must_use]
    pub const fn with_weight(mut self, weight: f32) -> Self {
        self.weight = weight;
        self
    }

    /// The same goal with another soften ratio.
    #[must_use]
    pub const fn with_soften(mut self, soften: f32) -> Self {
        self.soften = soften;
        self
    }

    /// The same goal with another twist angle (radians).
    #[must_use]
    pub const fn with_twist(mut self, twist: f32) -> Self {
        self.twist = twist;
        self
    }
}

/// The result of a two-bone solve.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TwoBoneReport {
    /// True when the weight is 1 and the end joint lands on the target
    /// (within [`REACH_TOLERANCE`] of the limb length): the target lies
    /// between `|l1 − l2|` and the softening start `soften · (l1 + l2)`
    /// from the start joint.
    pub reached: bool,
    /// Correction of the start joint's local rotation
    /// (`local' = local · start_correction`), unit, `w ≥ 0`.
    pub start_correction: Quat,
    /// Correction of the mid joint's local rotation, a turn about the mid
    /// axis, unit, `w ≥ 0`.
    pub mid_correction: Quat,
}

impl TwoBoneReport {
    /// No correction, not reached.
    pub const IDENTITY: TwoBoneReport = TwoBoneReport {
        reached: false,
        start_correction: Quat::IDENTITY,
        mid_correction: Quat::IDENTITY,
    };

    /// Multiplies the corrections into `start`'s and `mid`'s local
    /// rotations and recomputes the model matrices of `start`'s subtree.
    ///
    /// # Errors
    /// [`Error::JointOutOfRange`]; [`Error::NonFinite`] for non-finite
    /// corrections (nothing is written).
    pub fn apply(&self, pose: &mut IkPose<'_, '_>, start: usize, mid: usize) -> Result<(), Error> {
        if !self.start_correction.is_finite() || !self.mid_correction.is_finite() {
            return Err(Error::NonFinite {
                what: "two-bone IK correction",
            });
        }
        pose.local(mid)?;
        pose.rotate_local(start, self.start_correction)?;
        pose.rotate_local(mid, self.mid_correction)?;
        pose.update_models(start)
    }
}

/// A two-bone IK job on an [`IkPose`]: the three joints and the goal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TwoBoneIk {
    /// Start joint (hip, shoulder).
    pub start: usize,
    /// Mid joint, a child of `start`.
    pub mid: usize,
    /// End joint, a child of `mid`.
    pub end: usize,
    /// What to reach.
    pub goal: TwoBoneGoal,
}

impl TwoBoneIk {
    /// A job for the limb `start → mid → end`.
    #[must_use]
    pub const fn new(start: usize, mid: usize, end: usize, goal: TwoBoneGoal) -> Self {
        TwoBoneIk {
            start,
            mid,
            end,
            goal,
        }
    }

    /// Solves and writes the corrections into the pose's local rotations
    /// (`local' = local · correction`), then recomputes the model
    /// matrices of `start`'s subtree. With weight 0 nothing is written.
    ///
    /// # Errors
    /// As [`Limb::from_pose`] and [`reference()`]; on error the pose is
    /// untouched.
    pub fn solve(&self, pose: &mut IkPose<'_, '_>) -> Result<TwoBoneReport, Error> {
        let [s, m, e] = Limb::models(pose, self.start, self.mid, self.end)?;
        let report = corrections_from_models(s, m, e, &self.goal)?;
        if self.goal.weight > 0.0 {
            report.apply(pose, self.start, self.mid)?;
        }
        Ok(report)
    }
}

/// The rotation of a frame by Gram-Schmidt (x from column 0, y from
/// column 1 made orthogonal to it, z = x × y), or `None` when a column
/// it divides by is shorter than 1e-12 (or not finite).
#[inline(always)]
pub(crate) fn orthonormal(f: &[Vec3; 3]) -> Option<[Vec3; 3]> {
    let s0 = f[0].length();
    let x = f[0] * (1.0 / s0);
    let y1 = f[1] - x * x.dot(f[1]);
    let s1 = y1.length();
    let y = y1 * (1.0 / s1);
    let ok = s0.is_finite() && s0 > 1e-12 && s1.is_finite() && s1 > 1e-12;
    ok.then(|| [x, y, x.cross(y)])
}

/// What validation hands on: the unit mid axis (local) and the start and
/// mid rotations.
pub(crate) struct Checked {
    pub(crate) axis: Vec3,
    pub(crate) start: [Vec3; 3],
    pub(crate) mid: [Vec3; 3],
}

/// Checks a limb and goal.
#[inline]
pub(crate) fn validate(limb: &Limb, goal: &TwoBoneGoal) -> Result<Checked, Error> {
    let frame_finite = |f: &[Vec3; 3]| f.iter().all(|c| c.is_finite());
    let finite = limb.start.is_finite()
        && limb.mid.is_finite()
        && limb.end.is_finite()
        && frame_finite(&limb.start_frame)
        && frame_finite(&limb.mid_frame);
    if !finite {
        return Err(Error::NonFinite {
            what: "two-bone IK joint position or frame",
        });
    }
    if !goal.target.is_finite() {
        return Err(Error::NonFinite {
            what: "two-bone IK target",
        });
    }
    if !goal.pole.is_finite() {
        return Err(Error::NonFinite {
            what: "two-bone IK pole vector",
        });
    }
    if !goal.twist.is_finite() {
        return Err(Error::NonFinite {
            what: "two-bone IK twist",
        });
    }
    if !(0.0..=1.0).contains(&goal.weight) {
        return Err(Error::InvalidParameter {
            what: "two-bone IK weight must be in [0, 1]",
        });
    }
    if !(0.0..=1.0).contains(&goal.soften) {
        return Err(Error::InvalidParameter {
            what: "two-bone IK soften must be in [0, 1]",
        });
    }
    let axis = goal
        .mid_axis
        .try_normalize()
        .ok_or(Error::InvalidParameter {
            what: "two-bone IK mid axis must be finite and non-zero",
        })?;
    let (l1, l2) = (
        (limb.mid - limb.start).length(),
        (limb.end - limb.mid).length(),
    );
    if !(l1 > MIN_BONE_LENGTH && l2 > MIN_BONE_LENGTH) {
        return Err(Error::InvalidParameter {
            what: "two-bone IK bones must be longer than MIN_BONE_LENGTH",
        });
    }
    match (orthonormal(&limb.start_frame), orthonormal(&limb.mid_frame)) {
        (Some(start), Some(mid)) => Ok(Checked { axis, start, mid }),
        _ => Err(Error::InvalidParameter {
            what: "two-bone IK: a start or mid frame is singular",
        }),
    }
}

/// The two corrections for `limb` to reach `goal`: the readable scalar
/// solve that [`corrections`] and the lane kernels are tested against
/// (see the [module docs](self) for the method).
///
/// # Errors
/// [`Error::NonFinite`] for a non-finite position, frame, target, pole
/// or twist, or finite coordinates so large that the solve's lengths
/// overflow; [`Error::InvalidParameter`] for a weight or soften outside
/// `[0, 1]` (or NaN), a zero mid axis, a bone shorter than
/// [`MIN_BONE_LENGTH`], or a singular frame (a zero first column, or a
/// second column along the first).
pub fn reference(limb: &Limb, goal: &TwoBoneGoal) -> Result<TwoBoneReport, Error> {
    let Checked {
        axis,
        start: rs,
        mid: rm,
    } = validate(limb, goal)?;
    if goal.weight <= 0.0 {
        return Ok(TwoBoneReport::IDENTITY);
    }
    let u = limb.mid - limb.start;
    let v = limb.end - limb.mid;
    let (l1s, l2s) = (u.length_squared(), v.length_squared());
    let (l1, l2) = (sqrt_f32(l1s), sqrt_f32(l2s));
    let chain = l1 + l2;

    // Softening: the distance aimed at, along the start→target direction.
    let d0 = goal.target - limb.start;
    let dist0 = d0.length();
    let soft_start = chain * goal.soften;
    let soft_span = chain - soft_start;
    let (d, dist) = if dist0 > soft_start && soft_span > 0.0 {
        // t = 1 / (1 + x/4), x = (dist0 − soft_start) / soft_span.
        let t = 4.0 * soft_span / (dist0 - soft_start + 4.0 * soft_span);
        let t2 = t * t;
        let dist = soft_start + soft_span * (1.0 - t2 * t2);
        (d0 * (dist / dist0), dist)
    } else {
        (d0, dist0)
    };
    let tol = REACH_TOLERANCE * chain;
    let reached = goal.weight >= 1.0 && dist0 <= soft_start + tol && dist0 + tol >= (l1 - l2).abs();

    // 1. Mid joint: θ = α − β about the model-space axis `a`.
    let a = rm[0] * axis.x + rm[1] * axis.y + rm[2] * axis.z;
    let av = a.dot(v);
    let big_a = u.dot(v - a * av);
    let big_b = u.dot(a.cross(v));
    let c0 = u.dot(a) * av;
    let r = sqrt_f32(big_a * big_a + big_b * big_b);
    let k = 0.5 * (dist * dist - l1s - l2s);
    let (cos_t, sin_t) = if r > HINGE_EPSILON * l1 * l2 {
        let inv_r = 1.0 / r;
        let (ca, sa) = (big_a * inv_r, big_b * inv_r);
        let cb = ((k - c0) * inv_r).clamp(-1.0, 1.0);
        let sb = sqrt_f32((1.0 - cb * cb).max_num(0.0));
        (ca * cb + sa * sb, sa * cb - ca * sb)
    } else {
        (1.0, 0.0)
    };
    let (hs, hc) = half_angle(cos_t, sin_t);
    let mid_local = Quat::new(axis.x * hs, axis.y * hs, axis.z * hs, hc);
    let mid_model = Quat::new(a.x * hs, a.y * hs, a.z * hs, hc);

    // 2.-4. Start joint: aim, bend plane, twist.
    let w = u + mid_model.rotate(v);
    let mut delta = arc(w, d);
    if dist > DIRECTION_EPSILON * chain {
        let dn = d * (1.0 / dist);
        let n = delta.rotate(a);
        let np = n - dn * n.dot(dn);
        // Compared squared and against the pole's length, so the pole
        // needs no normalising.
        let rf = dn.cross(goal.pole);
        let (np2, rf2) = (np.length_squared(), rf.length_squared());
        let eps2 = PLANE_EPSILON * PLANE_EPSILON;
        if np2 > eps2 && rf2 > eps2 * goal.pole.length_squared() {
            let inv = 1.0 / sqrt_f32(np2 * rf2);
            let (hs, hc) = half_angle(np.dot(rf) * inv, np.cross(rf).dot(dn) * inv);
            delta = Quat::new(dn.x * hs, dn.y * hs, dn.z * hs, hc) * delta;
        }
        if goal.twist != 0.0 {
            delta = Quat::from_axis_angle(dn, goal.twist) * delta;
        }
    }
    // The model-space turn `delta` about the start joint, as a local
    // correction R⁻¹ · delta · R: its axis taken into the start frame.
    let dv = Vec3::new(delta.x, delta.y, delta.z);
    let start_local = Quat::new(rs[0].dot(dv), rs[1].dot(dv), rs[2].dot(dv), delta.w);

    let report = TwoBoneReport {
        reached,
        start_correction: weigh(start_local, goal.weight),
        mid_correction: weigh(mid_local, goal.weight),
    };
    if !report.start_correction.is_finite() || !report.mid_correction.is_finite() {
        return Err(Error::NonFinite {
            what: "two-bone IK correction (finite input whose lengths overflow f32)",
        });
    }
    Ok(report)
}

/// The two corrections for `limb` to reach `goal`, as [`reference()`]
/// computes them (within 1e-5), with about a third of its instructions
/// and a much shorter chain of dependent square roots and divisions: what
/// [`TwoBoneIk::solve`] runs.
///
/// The same method, rearranged so that few operations wait on a square
/// root:
/// - a frame's Gram-Schmidt rotation is kept as unnormalised columns
///   `c0`, `|c0|² c1 − (c0·c1) c0`, `c0 × c1` with three scale factors,
///   all known as soon as the columns are;
/// - the mid angle is carried as `r² cos θ` and `r² sin θ`, and the new
///   start→end vector `w` is turned by Rodrigues' formula with the
///   `a × v` and `a · v` the angle already needed; its length is the
///   target distance (`l1² + l2² + 2(c0 + kc)` when out of reach) and
///   `a · w = a · u + a · v`, so neither waits for `w`;
/// - the start joint's aim, bend plane and twist are one rotation between
///   two orthonormal frames, `(ŵ, mid axis ⊥ ŵ, …)` onto
///   `(start→target, start→target × pole, …)`, whose quaternion is
///   `(Σ eᵢ × fᵢ, 1 + Σ eᵢ · fᵢ)` normalised; the `eᵢ` enter unnormalised
///   with their scale factors.
///
/// Input checks fold into the solve: wherever a value leaves the range
/// where this arithmetic keeps its digits (non-finite values, nearly
/// parallel frame columns, a hinge nearly along a bone, a start→end line
/// nearly along the mid axis or shorter than a tenth of the limb, a pole
/// nearly along start→target, a start turn near a half turn, zero
/// weight), the call hands over to [`reference()`] and returns its answer
/// or error.
///
/// # Errors
/// As [`reference()`].
pub fn corrections(limb: &Limb, goal: &TwoBoneGoal) -> Result<TwoBoneReport, Error> {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    if crate::cpu::avx2_kernels() {
        return fast_or_reference(avx2::fast_solve(limb, goal), limb, goal);
    }
    fast_or_reference(fast_solve(limb, goal), limb, goal)
}

/// [`corrections`] of the limb whose joints have the model matrices
/// `start`, `mid` and `end` (what [`Limb::from_models`] gathers): the
/// matrices in, two corrections out, as ozz-animation's `IKTwoBoneJob`
/// takes them. Reading the matrices inside the solve, rather than a
/// [`Limb`] just written, spares the loads that wait on that write.
///
/// # Errors
/// As [`reference()`].
pub fn corrections_from_models(
    start: &Mat4,
    mid: &Mat4,
    end: &Mat4,
    goal: &TwoBoneGoal,
) -> Result<TwoBoneReport, Error> {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    if crate::cpu::avx2_kernels() {
        let fast = avx2::fast_solve_models(start, mid, end, goal);
        return fast_or_reference(fast, &Limb::from_models(start, mid, end), goal);
    }
    let limb = Limb::from_models(start, mid, end);
    fast_or_reference(fast_solve(&limb, goal), &limb, goal)
}

#[inline(always)]
fn fast_or_reference(
    fast: Option<TwoBoneReport>,
    limb: &Limb,
    goal: &TwoBoneGoal,
) -> Result<TwoBoneReport, Error> {
    match fast {
        Some(report) => Ok(report),
        None => reference(limb, goal),
    }
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod avx2;

/// [`orthonormal`]'s rotation without its chain of normalisations: the
/// axes are `X = c0 · k[0]`, `Y = y · k[1]`, `Z = n · k[2]` with
/// `y = |c0|² c1 − (c0·c1) c0` (the second column made orthogonal to the
/// first, scaled by `|c0|²`) and `n = c0 × c1`, so that `|y| = |c0| |n|`.
struct Frame {
    c0: Vec3,
    y: Vec3,
    n: Vec3,
    k: [f32; 3],
}

impl Frame {
    /// Whether columns with squared lengths `s0sq`, `c1sq` and
    /// `d = |c0 × c1|²` make a frame [`Frame::new`] takes.
    #[inline(always)]
    fn accepts(s0sq: f32, c1sq: f32, d: f32) -> bool {
        d.is_finite()
            && (s0sq * c1sq).is_finite()
            && s0sq > 4e-24
            && d > 4e-24 * s0sq
            && d > 1e-2 * s0sq * c1sq
    }

    /// `None` unless the columns are finite, [`orthonormal`] accepts them
    /// (with a factor 2 to spare) and they are at least 0.1 rad from
    /// parallel, where the two constructions agree to rounding.
    #[inline(always)]
    fn new(f: &[Vec3; 3]) -> Option<Frame> {
        let (c0, c1) = (f[0], f[1]);
        let (s0sq, c01, c1sq) = (c0.dot(c0), c0.dot(c1), c1.dot(c1));
        let n = c0.cross(c1);
        let d = n.dot(n);
        if !Frame::accepts(s0sq, c1sq, d) {
            return None;
        }
        let (i0, i_n) = (1.0 / sqrt_f32(s0sq), 1.0 / sqrt_f32(d));
        Some(Frame {
            c0,
            y: c1 * s0sq - c0 * c01,
            n,
            k: [i0, i0 * i_n, i_n],
        })
    }

    /// `R x`: a local vector in model space.
    #[inline(always)]
    fn apply(&self, x: Vec3) -> Vec3 {
        self.c0 * (x.x * self.k[0]) + self.y * (x.y * self.k[1]) + self.n * (x.z * self.k[2])
    }

    /// `Rᵀ v`: a model-space vector in the frame.
    #[inline(always)]
    fn apply_transpose(&self, v: Vec3) -> Vec3 {
        Vec3::new(
            self.c0.dot(v) * self.k[0],
            self.y.dot(v) * self.k[1],
            self.n.dot(v) * self.k[2],
        )
    }
}

/// The scalar quantities both fast paths share, from the squared bone
/// lengths and the target distance: the size and parameter checks,
/// softening and `reached`.
struct Sizes {
    l1s: f32,
    l2s: f32,
    chain: f32,
    dist0: f32,
    /// The softened target distance.
    dist: f32,
    reached: bool,
    /// The unit mid axis, local.
    axis: Vec3,
}

impl Sizes {
    #[inline(always)]
    fn new(l1s: f32, l2s: f32, dist0: f32, goal: &TwoBoneGoal) -> Option<Sizes> {
        let (weight, soften) = (goal.weight, goal.soften);
        let in_range = weight > 0.0
            && weight <= 1.0
            && (0.0..=1.0).contains(&soften)
            && goal.twist.is_finite();
        let (l1, l2) = (sqrt_f32(l1s), sqrt_f32(l2s));
        let chain = l1 + l2;
        let axis_len = goal.mid_axis.length();
        let ok = in_range
            && chain.is_finite()
            && dist0.is_finite()
            && l1 > MIN_BONE_LENGTH
            && l2 > MIN_BONE_LENGTH
            && axis_len.is_finite()
            && axis_len > 2e-12;
        if !ok {
            return None;
        }
        let soft_start = chain * soften;
        let soft_span = chain - soft_start;
        let dist = if dist0 > soft_start && soft_span > 0.0 {
            let t = 4.0 * soft_span / (dist0 - soft_start + 4.0 * soft_span);
            let t2 = t * t;
            soft_start + soft_span * (1.0 - t2 * t2)
        } else {
            dist0
        };
        let tol = REACH_TOLERANCE * chain;
        Some(Sizes {
            l1s,
            l2s,
            chain,
            dist0,
            dist,
            reached: weight >= 1.0 && dist0 <= soft_start + tol && dist0 + tol >= (l1 - l2).abs(),
            axis: goal.mid_axis * (1.0 / axis_len),
        })
    }
}

/// The mid angle θ and what the start joint needs of it, from the
/// reference's `A`, `B`, `C0` and `a · w = a · u + a · v`; `None` where
/// the arithmetic after it would lose digits (a hinge nearly along a bone,
/// start→end shorter than a tenth of the limb or nearly along the axis,
/// `planes = (|start→target × pole|², |pole|²)` nearly parallel, the
/// target nearly on the start joint).
struct MidAngle {
    cos: f32,
    sin: f32,
    /// `(sin θ/2, cos θ/2)`, unnormalised: `∝ (sin θ, 1 + cos θ)`, or
    /// `±(1 − cos θ, |sin θ|)` when `1 + cos θ` would lose digits.
    half: (f32, f32),
    /// `|w|²`: the target distance unless out of reach.
    n2: f32,
    aw: f32,
    /// `|w × a|²`.
    m2: f32,
}

impl MidAngle {
    #[inline(always)]
    fn new(
        big_a: f32,
        big_b: f32,
        c0: f32,
        aw: f32,
        sz: &Sizes,
        planes: (f32, f32),
    ) -> Option<MidAngle> {
        let (l1s, l2s, dist, chain) = (sz.l1s, sz.l2s, sz.dist, sz.chain);
        let r2 = big_a * big_a + big_b * big_b;
        let kk = 0.5 * (dist * dist - l1s - l2s) - c0;
        let r = sqrt_f32(r2);
        let kc = kk.max(-r).min(r);
        // r sin(θ − α): exactly 0 where the clamp holds.
        let sq = sqrt_f32((r2 - kk * kk).max(0.0));
        let n2 = if kk == kc {
            dist * dist
        } else {
            l1s + l2s + 2.0 * (c0 + kc)
        };
        let m2 = n2 - aw * aw;
        let (rf2, pole2) = planes;
        let conditioned = r2 > 1e-2 * l1s * l2s
            && n2 > 1e-2 * chain * chain
            && m2 > 0.1 * n2
            && rf2.is_finite()
            && rf2 > 1e-3 * pole2
            && dist > 2.0 * DIRECTION_EPSILON * chain;
        if !conditioned {
            return None;
        }
        let inv_r2 = 1.0 / r2;
        let cos = (big_a * kc + big_b * sq) * inv_r2;
        let sin = (big_b * kc - big_a * sq) * inv_r2;
        let half = if cos >= 0.0 {
            (sin, 1.0 + cos)
        } else {
            ((1.0 - cos).copysign(sin), sin.abs())
        };
        Some(MidAngle {
            cos,
            sin,
            half,
            n2,
            aw,
            m2,
        })
    }
}

/// [`corrections`]' arithmetic, `None` wherever [`reference()`] must
/// decide.
#[inline(always)]
fn fast_solve(limb: &Limb, goal: &TwoBoneGoal) -> Option<TwoBoneReport> {
    // The inputs the solve never reads; every other one reaches a guard
    // that a non-finite value fails.
    if !limb.start_frame[2].is_finite() || !limb.mid_frame[2].is_finite() {
        return None;
    }
    let u = limb.mid - limb.start;
    let v = limb.end - limb.mid;
    let d0 = goal.target - limb.start;
    let sz = Sizes::new(u.length_squared(), v.length_squared(), d0.length(), goal)?;
    let (fm, fs) = (Frame::new(&limb.mid_frame)?, Frame::new(&limb.start_frame)?);

    // Mid joint: θ from the reference's A, B, C0.
    let a = fm.apply(sz.axis);
    let (ua, av) = (u.dot(a), a.dot(v));
    let axv = a.cross(v);
    let c0 = ua * av;
    let f1 = d0 * (1.0 / sz.dist0);
    let rf = f1.cross(goal.pole);
    let rf2 = rf.length_squared();
    let planes = (rf2, goal.pole.length_squared());
    let m = MidAngle::new(u.dot(v) - c0, u.dot(axv), c0, ua + av, &sz, planes)?;
    let (cos_t, sin_t, n2, aw, m2) = (m.cos, m.sin, m.n2, m.aw, m.m2);
    let inv_h = 1.0 / sqrt_f32(m.half.0 * m.half.0 + m.half.1 * m.half.1);
    let (hs, hc) = (m.half.0 * inv_h, m.half.1 * inv_h);

    // Start joint: e1 = w / n, e2 = g / (n m), e3 = h / m onto f1, f2, f3.
    let w = u + v * cos_t + axv * sin_t + a * (av * (1.0 - cos_t));
    let g = a * n2 - w * aw;
    let h = w.cross(a);
    let (inv_n, inv_m) = (1.0 / sqrt_f32(n2), 1.0 / sqrt_f32(m2));
    let inv_nm = inv_n * inv_m;
    let mut f2 = rf * (1.0 / sqrt_f32(rf2));
    let mut f3 = f1.cross(f2);
    if goal.twist != 0.0 {
        let (s, c) = libm::sincosf(goal.twist);
        (f2, f3) = (f2 * c + f3 * s, f3 * c - f2 * s);
    }
    let tr1 = 1.0 + w.dot(f1) * inv_n + g.dot(f2) * inv_nm + h.dot(f3) * inv_m;
    // 4 cos²(φ/2) for a turn φ: below 0.1 (φ past about 162°) the sum
    // has lost too many digits.
    if tr1.is_nan() || tr1 <= 0.1 {
        return None;
    }
    // |(axial, tr1)|² = 4 tr1 for orthonormal frames: the length needs
    // no wait for the axial part.
    let inv_q = 0.5 / sqrt_f32(tr1);
    let axial = w.cross(f1) * inv_n + g.cross(f2) * inv_nm + h.cross(f3) * inv_m;
    let local = fs.apply_transpose(axial);
    let start = Quat::new(
        local.x * inv_q,
        local.y * inv_q,
        local.z * inv_q,
        tr1 * inv_q,
    );
    let axis = sz.axis;
    let mid = Quat::new(axis.x * hs, axis.y * hs, axis.z * hs, hc);
    let report = TwoBoneReport {
        reached: sz.reached,
        start_correction: weigh(start, goal.weight),
        mid_correction: weigh(mid, goal.weight),
    };
    (report.start_correction.is_finite() && report.mid_correction.is_finite()).then_some(report)
}

/// `(sin θ/2, cos θ/2)` from `(cos θ, sin θ)`, θ in (−π, π], by whichever
/// half-angle formula is well conditioned: `cos θ/2 = √((1 + cos θ)/2)` for
/// `cos θ ≥ 0`, `|sin θ/2| = √((1 − cos θ)/2)` otherwise, the other from
/// `sin θ = 2 sin θ/2 cos θ/2` (the square-root form of a small angle would
/// lose half its digits).
#[inline]
fn half_angle(c: f32, s: f32) -> (f32, f32) {
    if c >= 0.0 {
        let hc = sqrt_f32((1.0 + c) * 0.5);
        (s / (2.0 * hc), hc)
    } else {
        let hs = libm::copysignf(sqrt_f32((1.0 - c) * 0.5), s);
        (hs, s / (2.0 * hs))
    }
}

/// A rotation turning the direction of `from` onto that of `to` (any
/// lengths; identity when either is zero). For an acute or right angle it
/// is the shortest arc, `(from × to, |from||to| + from·to)` normalised.
/// For an obtuse angle that formula loses its digits (both parts shrink
/// towards zero near opposite vectors), so it turns by π about an axis
/// `p ⊥ from` first, then by the short, well-conditioned arc from that
/// image onto `to`: `p` is `from × to` (the shortest arc again) unless that
/// is too short to give a direction, then `from × X` (or `× Y`).
#[inline]
fn arc(from: Vec3, to: Vec3) -> Quat {
    let m = sqrt_f32(from.length_squared() * to.length_squared());
    if m.is_nan() || m <= 0.0 {
        return Quat::IDENTITY;
    }
    let dot = from.dot(to);
    if dot >= 0.0 {
        return short_arc(from, to, m);
    }
    let c = from.cross(to);
    let lc = c.length();
    let p = if lc > ARC_AXIS_EPSILON * m {
        c * (1.0 / lc)
    } else {
        let other = if libm::fabsf(from.x) < 0.9 * sqrt_f32(from.length_squared()) {
            Vec3::X
        } else {
            Vec3::Y
        };
        let c = from.cross(other);
        c * (1.0 / c.length())
    };
    let image = p * (2.0 * p.dot(from)) - from;
    let half = Quat::new(p.x, p.y, p.z, 0.0);
    short_arc(
        image,
        to,
        sqrt_f32(image.length_squared() * to.length_squared()),
    ) * half
}

/// Below this fraction of `|from||to|`, `from × to` is too short to be
/// the axis of [`arc`]'s half turn.
const ARC_AXIS_EPSILON: f32 = 1e-3;

/// `(from × to, m + from·to)` normalised, `m = |from||to|`: the shortest
/// arc for vectors at most a right angle apart.
#[inline]
fn short_arc(from: Vec3, to: Vec3, m: f32) -> Quat {
    let c = from.cross(to);
    Quat::new(c.x, c.y, c.z, m + from.dot(to)).normalize()
}

/// `nlerp(identity, q, weight)` on the `w ≥ 0` hemisphere (`q` itself,
/// already unit, at full weight).
#[inline(always)]
fn weigh(q: Quat, weight: f32) -> Quat {
    let q = if q.w < 0.0 { -q } else { q };
    if weight >= 1.0 {
        return q;
    }
    Quat::new(
        q.x * weight,
        q.y * weight,
        q.z * weight,
        1.0 - weight + q.w * weight,
    )
    .normalize()
}

// ---------------------------------------------------------------------------
// Lanes
// ---------------------------------------------------------------------------

/// `N` limbs and goals, one per lane (structure of arrays): component `c`
/// of lane `i` is `field[c][i]`. Fill lanes with [`TwoBoneLanes::set_lane`]
/// (or write the arrays directly); unused lanes may stay at
/// [`TwoBoneLanes::EMPTY`] (they come out invalid, with identity
/// corrections).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct TwoBoneLanes<const N: usize> {
    /// Start joint positions, `[x, y, z][lane]`.
    pub start: [[f32; N]; 3],
    /// Mid joint positions.
    pub mid: [[f32; N]; 3],
    /// End joint positions.
    pub end: [[f32; N]; 3],
    /// Start joint frames, column-major `[x0, y0, z0, x1, …, z2][lane]`
    /// ([`Limb::start_frame`]).
    pub start_frame: [[f32; N]; 9],
    /// Mid joint frames.
    pub mid_frame: [[f32; N]; 9],
    /// Targets.
    pub target: [[f32; N]; 3],
    /// Pole vectors.
    pub pole: [[f32; N]; 3],
    /// Mid axes (mid joint's local frame).
    pub mid_axis: [[f32; N]; 3],
    /// Weights.
    pub weight: [f32; N],
    /// Soften ratios.
    pub soften: [f32; N],
    /// Twist angles, radians.
    pub twist: [f32; N],
}

impl<const N: usize> TwoBoneLanes<N> {
    /// Every lane zero (an invalid limb).
    pub const EMPTY: Self = TwoBoneLanes {
        start: [[0.0; N]; 3],
        mid: [[0.0; N]; 3],
        end: [[0.0; N]; 3],
        start_frame: [[0.0; N]; 9],
        mid_frame: [[0.0; N]; 9],
        target: [[0.0; N]; 3],
        pole: [[0.0; N]; 3],
        mid_axis: [[0.0; N]; 3],
        weight: [0.0; N],
        soften: [0.0; N],
        twist: [0.0; N],
    };

    /// Writes `limb` and `goal` into lane `lane` (gather). Lanes past `N`
    /// are ignored.
    pub fn set_lane(&mut self, lane: usize, limb: &Limb, goal: &TwoBoneGoal) {
        if lane >= N {
            return;
        }
        let v3 = |dst: &mut [[f32; N]; 3], v: Vec3| {
            dst[0][lane] = v.x;
            dst[1][lane] = v.y;
            dst[2][lane] = v.z;
        };
        let f9 = |dst: &mut [[f32; N]; 9], f: &[Vec3; 3]| {
            for (c, col) in f.iter().enumerate() {
                dst[3 * c][lane] = col.x;
                dst[3 * c + 1][lane] = col.y;
                dst[3 * c + 2][lane] = col.z;
            }
        };
        v3(&mut self.start, limb.start);
        v3(&mut self.mid, limb.mid);
        v3(&mut self.end, limb.end);
        f9(&mut self.start_frame, &limb.start_frame);
        f9(&mut self.mid_frame, &limb.mid_frame);
        v3(&mut self.target, goal.target);
        v3(&mut self.pole, goal.pole);
        v3(&mut self.mid_axis, goal.mid_axis);
        self.weight[lane] = goal.weight;
        self.soften[lane] = goal.soften;
        self.twist[lane] = goal.twist;
    }
}

/// The results of a lane solve.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct TwoBoneLanesOut<const N: usize> {
    /// Start corrections, `[x, y, z, w][lane]` (identity in invalid lanes).
    pub start_correction: [[f32; N]; 4],
    /// Mid corrections (identity in invalid lanes).
    pub mid_correction: [[f32; N]; 4],
    /// Bit `i` set when lane `i` reached its target.
    pub reached: u32,
    /// Bit `i` set when lane `i`'s input was valid (what [`reference()`]
    /// would accept).
    pub valid: u32,
}

impl<const N: usize> TwoBoneLanesOut<N> {
    /// All lanes invalid, identity corrections.
    pub const EMPTY: Self = {
        let mut id = [[0.0; N]; 4];
        id[3] = [1.0; N];
        TwoBoneLanesOut {
            start_correction: id,
            mid_correction: id,
            reached: 0,
            valid: 0,
        }
    };

    /// Lane `lane`'s report (scatter), or `None` when the lane was invalid
    /// or `lane >= N`.
    #[must_use]
    pub fn lane(&self, lane: usize) -> Option<TwoBoneReport> {
        if lane >= N || self.valid & (1 << lane) == 0 {
            return None;
        }
        let q =
            |src: &[[f32; N]; 4]| Quat::new(src[0][lane], src[1][lane], src[2][lane], src[3][lane]);
        Some(TwoBoneReport {
            reached: self.reached & (1 << lane) != 0,
            start_correction: q(&self.start_correction),
            mid_correction: q(&self.mid_correction),
        })
    }
}

/// Solves 4 limbs, one per lane of `f32x4`: lane by lane the result of
/// [`reference()`] (within float rounding, about 1e-6), with invalid lanes
/// (inputs [`reference()`] rejects) left at identity and cleared in
/// [`TwoBoneLanesOut::valid`]. No branches on the data.
pub fn solve_lanes4(input: &TwoBoneLanes<4>, out: &mut TwoBoneLanesOut<4>) {
    kernel::<f32x4, 4>(input, out);
}

/// Solves 8 limbs in `f32x8` lanes (two SSE halves, or one AVX register
/// in builds with AVX); otherwise as [`solve_lanes4`].
pub fn solve_lanes8(input: &TwoBoneLanes<8>, out: &mut TwoBoneLanesOut<8>) {
    kernel::<f32x8, 8>(input, out);
}

/// Solves `iks[i]` on `poses[i]` for every `i`, eight at a time in
/// [`solve_lanes8`], and writes the corrections and updated model matrices
/// as [`TwoBoneIk::solve`] does; `reports[i]` receives the report.
///
/// Every input is validated before anything is written, so the limbs are
/// read from the matrices twice (validation, then gather).
///
/// # Errors
/// [`Error::BadLength`] unless the three slices have the same length;
/// otherwise the first error [`TwoBoneIk::solve`] would give, and then no
/// pose is touched.
pub fn solve_many(
    poses: &mut [IkPose<'_, '_>],
    iks: &[TwoBoneIk],
    reports: &mut [TwoBoneReport],
) -> Result<(), Error> {
    crate::soa::check_len("two-bone jobs", poses.len(), iks.len())?;
    crate::soa::check_len("two-bone reports", poses.len(), reports.len())?;
    for (pose, ik) in poses.iter().zip(iks) {
        validate(&Limb::from_pose(pose, ik.start, ik.mid, ik.end)?, &ik.goal)?;
    }
    let mut lanes = TwoBoneLanes::<8>::EMPTY;
    let mut out = TwoBoneLanesOut::<8>::EMPTY;
    for ((poses, iks), reports) in poses
        .chunks_mut(8)
        .zip(iks.chunks(8))
        .zip(reports.chunks_mut(8))
    {
        lanes.weight = [0.0; 8];
        for (i, (pose, ik)) in poses.iter().zip(iks).enumerate() {
            lanes.set_lane(
                i,
                &Limb::from_pose(pose, ik.start, ik.mid, ik.end)?,
                &ik.goal,
            );
        }
        solve_lanes8(&lanes, &mut out);
        for (i, ((pose, ik), report)) in poses.iter_mut().zip(iks).zip(reports).enumerate() {
            // Every lane was validated above, so `lane` is `Some`.
            *report = out.lane(i).unwrap_or(TwoBoneReport::IDENTITY);
            if ik.goal.weight > 0.0 {
                report.apply(pose, ik.start, ik.mid)?;
            }
        }
    }
    Ok(())
}

#[inline(always)]
fn length<F: Lane<N>, const N: usize>(v: V<F>) -> F {
    v.dot(v).sqrt()
}

/// `x` with the sign of `s`.
#[inline(always)]
fn copysign<F: Lane<N>, const N: usize>(x: F, s: F) -> F {
    let sign = F::splat(-0.0);
    x.abs() | (s & sign)
}

/// Lane version of [`orthonormal`]: the rotation and a mask of the lanes
/// whose frame is finite and non-singular.
#[inline(always)]
fn orthonormal_l<F: Lane<N>, const N: usize>(f: &[[f32; N]; 9]) -> ([V<F>; 3], F) {
    let one = F::splat(1.0);
    let tiny = F::splat(1e-12);
    let c = |i: usize| V {
        x: F::load(f[3 * i]),
        y: F::load(f[3 * i + 1]),
        z: F::load(f[3 * i + 2]),
    };
    let (c0, c1, c2) = (c(0), c(1), c(2));
    let s0 = length(c0);
    let x = c0.scale(one / s0);
    let y1 = c1.sub(x.scale(x.dot(c1)));
    let s1 = length(y1);
    let y = y1.scale(one / s1);
    // Column 2 only has to be finite (as in the scalar check).
    let ok = s0.finite() & s0.gt(tiny) & s1.finite() & s1.gt(tiny) & c2.finite();
    ([x, y, x.cross(y)], ok)
}

/// Lane version of [`half_angle`].
#[inline(always)]
fn half_angle_l<F: Lane<N>, const N: usize>(c: F, s: F) -> (F, F) {
    // One square root and one division for both branches: `root` is
    // cos θ/2 (c ≥ 0) or |sin θ/2| (c < 0), `q = s / 2·root` the other
    // (its magnitude, for c < 0, as `s / 2·hs` gives in the scalar twin).
    let pos = c.ge(F::splat(0.0));
    let one = F::splat(1.0);
    let root = (pos.select(one + c, one - c) * F::splat(0.5)).sqrt();
    let q = s / (F::splat(2.0) * root);
    let hs = pos.select(q, copysign(root, s));
    let hc = pos.select(root, q.abs());
    (hs, hc)
}

/// Lane version of [`weigh`].
#[inline(always)]
fn weigh_l<F: Lane<N>, const N: usize>(q: Q<F>, weight: F) -> Q<F> {
    let zero = F::splat(0.0);
    let one = F::splat(1.0);
    let flip = q.w.lt(zero) & F::splat(-0.0);
    let q = Q {
        x: q.x ^ flip,
        y: q.y ^ flip,
        z: q.z ^ flip,
        w: q.w ^ flip,
    };
    let full = weight.ge(one);
    // Most calls run every lane at full weight: skip the blend then.
    if full.bitmask() == (1 << N) - 1 {
        return q;
    }
    let r = Q {
        x: q.x * weight,
        y: q.y * weight,
        z: q.z * weight,
        w: one - weight + q.w * weight,
    };
    let inv = one / (r.x * r.x + r.y * r.y + r.z * r.z + r.w * r.w).sqrt();
    let blended = Q {
        x: r.x * inv,
        y: r.y * inv,
        z: r.z * inv,
        w: r.w * inv,
    };
    Q::select(full, q, blended)
}

/// Lane version of [`short_arc`].
#[inline(always)]
fn short_arc_l<F: Lane<N>, const N: usize>(from: V<F>, to: V<F>, m: F) -> Q<F> {
    let c = from.cross(to);
    let w = m + from.dot(to);
    let inv = F::splat(1.0) / (c.x * c.x + c.y * c.y + c.z * c.z + w * w).sqrt();
    Q {
        x: c.x * inv,
        y: c.y * inv,
        z: c.z * inv,
        w: w * inv,
    }
}

/// Lane version of [`arc`].
#[inline(always)]
fn arc_l<F: Lane<N>, const N: usize>(from: V<F>, to: V<F>) -> Q<F> {
    let zero = F::splat(0.0);
    let one = F::splat(1.0);
    let ff = from.dot(from);
    let m = (ff * to.dot(to)).sqrt();
    let dot = from.dot(to);
    let acute = short_arc_l::<F, N>(from, to, m);
    let identity = Q {
        x: zero,
        y: zero,
        z: zero,
        w: one,
    };
    let obtuse_mask = dot.lt(zero);
    if obtuse_mask.bitmask() == 0 {
        return Q::select(m.gt(zero), acute, identity);
    }
    // Obtuse: a half turn about `p`, then the short arc.
    let c = from.cross(to);
    let lc = length(c);
    let use_x = from.x.abs().lt(F::splat(0.9) * ff.sqrt());
    let other = V {
        x: use_x.select(one, zero),
        y: use_x.select(zero, one),
        z: zero,
    };
    let cp = from.cross(other);
    let p = V::select(
        lc.gt(F::splat(ARC_AXIS_EPSILON) * m),
        c.scale(one / lc),
        cp.scale(one / length(cp)),
    );
    let image = p.scale(F::splat(2.0) * p.dot(from)).sub(from);
    let mi = (image.dot(image) * to.dot(to)).sqrt();
    let half = Q {
        x: p.x,
        y: p.y,
        z: p.z,
        w: zero,
    };
    let obtuse = short_arc_l::<F, N>(image, to, mi).mul(half);
    let q = Q::select(obtuse_mask, obtuse, acute);
    Q::select(m.gt(zero), q, identity)
}

/// The lane kernel: [`reference()`] with every branch computed and selected.
#[inline(always)]
fn kernel<F: Lane<N>, const N: usize>(inp: &TwoBoneLanes<N>, out: &mut TwoBoneLanesOut<N>) {
    let zero = F::splat(0.0);
    let one = F::splat(1.0);
    let start = V::<F>::load::<N>(&inp.start);
    let mid = V::<F>::load::<N>(&inp.mid);
    let end = V::<F>::load::<N>(&inp.end);
    let (rs, rs_ok) = orthonormal_l::<F, N>(&inp.start_frame);
    let (rm, rm_ok) = orthonormal_l::<F, N>(&inp.mid_frame);
    let target = V::<F>::load::<N>(&inp.target);
    let pole = V::<F>::load::<N>(&inp.pole);
    let axis_raw = V::<F>::load::<N>(&inp.mid_axis);
    let weight = F::load(inp.weight);
    let soften = F::load(inp.soften);
    let twist = F::load(inp.twist);

    let u = mid.sub(start);
    let v = end.sub(mid);
    let (l1s, l2s) = (u.dot(u), v.dot(v));
    let (l1, l2) = (l1s.sqrt(), l2s.sqrt());
    let axis_len = length(axis_raw);
    let axis = axis_raw.scale(one / axis_len);

    // Validity, as `validate`.
    let min_bone = F::splat(MIN_BONE_LENGTH);
    let valid = start.finite()
        & mid.finite()
        & end.finite()
        & rs_ok
        & rm_ok
        & target.finite()
        & pole.finite()
        & twist.finite()
        & weight.ge(zero)
        & weight.le(one)
        & soften.ge(zero)
        & soften.le(one)
        & axis_len.finite()
        & axis_len.gt(F::splat(1e-12))
        & l1.gt(min_bone)
        & l2.gt(min_bone);
    let positive = weight.gt(zero);

    let chain = l1 + l2;
    let d0 = target.sub(start);
    let dist0 = length(d0);
    let soft_start = chain * soften;
    let soft_span = chain - soft_start;
    let softened = dist0.gt(soft_start) & soft_span.gt(zero);
    let four_span = F::splat(4.0) * soft_span;
    let t = four_span / (dist0 - soft_start + four_span);
    let t2 = t * t;
    let dist_soft = soft_start + soft_span * (one - t2 * t2);
    let dist = softened.select(dist_soft, dist0);
    let d = V::select(softened, d0.scale(dist_soft / dist0), d0);
    let tol = F::splat(REACH_TOLERANCE) * chain;
    let reached = weight.ge(one) & dist0.le(soft_start + tol) & (dist0 + tol).ge((l1 - l2).abs());

    // 1. Mid joint.
    let a = rm[0]
        .scale(axis.x)
        .add(rm[1].scale(axis.y))
        .add(rm[2].scale(axis.z));
    let av = a.dot(v);
    let big_a = u.dot(v.sub(a.scale(av)));
    let big_b = u.dot(a.cross(v));
    let c0 = u.dot(a) * av;
    let r = (big_a * big_a + big_b * big_b).sqrt();
    let k = F::splat(0.5) * (dist * dist - l1s - l2s);
    let hinge = r.gt(F::splat(HINGE_EPSILON) * l1 * l2);
    let inv_r = one / r;
    let (ca, sa) = (big_a * inv_r, big_b * inv_r);
    let cb = ((k - c0) * inv_r).max(-one).min(one);
    let sb = (one - cb * cb).max(zero).sqrt();
    let cos_t = hinge.select(ca * cb + sa * sb, one);
    let sin_t = hinge.select(sa * cb - ca * sb, zero);
    let (hs, hc) = half_angle_l::<F, N>(cos_t, sin_t);
    let mid_local = Q::from_axis(axis, hs, hc);
    let mid_model = Q::from_axis(a, hs, hc);

    // 2.-4. Start joint.
    let w = u.add(mid_model.rotate(v));
    let aim = arc_l::<F, N>(w, d);
    let has_dir = dist.gt(F::splat(DIRECTION_EPSILON) * chain);
    let dn = d.scale(one / dist);
    let n = aim.rotate(a);
    let np = n.sub(dn.scale(n.dot(dn)));
    let rf = dn.cross(pole);
    let (np2, rf2) = (np.dot(np), rf.dot(rf));
    let eps2 = F::splat(PLANE_EPSILON * PLANE_EPSILON);
    let plane_ok = has_dir & np2.gt(eps2) & rf2.gt(eps2 * pole.dot(pole));
    let inv = one / (np2 * rf2).sqrt();
    let (phs, phc) = half_angle_l::<F, N>(np.dot(rf) * inv, np.cross(rf).dot(dn) * inv);
    let planed = Q::from_axis(dn, phs, phc).mul(aim);
    let delta = Q::select(plane_ok, planed, aim);
    // The twist's sine and cosine are the kernel's most expensive step:
    // skipped when no lane twists.
    let twisting = has_dir & (twist.gt(zero) | twist.lt(zero));
    let delta = if twisting.bitmask() != 0 {
        let (ts, tc) = (twist * F::splat(0.5)).sin_cos();
        let twisted = Q::from_axis(dn, ts, tc).mul(delta);
        Q::select(twisting, twisted, delta)
    } else {
        delta
    };
    let dv = delta.v();
    let start_local = Q {
        x: rs[0].dot(dv),
        y: rs[1].dot(dv),
        z: rs[2].dot(dv),
        w: delta.w,
    };

    let sc = weigh_l::<F, N>(start_local, weight);
    let mc = weigh_l::<F, N>(mid_local, weight);
    let identity = Q {
        x: zero,
        y: zero,
        z: zero,
        w: one,
    };
    // Finite inputs whose lengths overflow on the way are invalid, as in
    // `reference`.
    let finite = sc.v().finite() & sc.w.finite() & mc.v().finite() & mc.w.finite();
    let valid = valid & (finite | weight.le(zero));
    let active = valid & positive;
    let sc = Q::select(active, sc, identity);
    let mc = Q::select(active, mc, identity);
    out.start_correction = [sc.x.store(), sc.y.store(), sc.z.store(), sc.w.store()];
    out.mid_correction = [mc.x.store(), mc.y.store(), mc.z.store(), mc.w.store()];
    out.reached = (reached & active).bitmask();
    out.valid = valid.bitmask();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast path answers the ordinary cases itself (a test comparing
    /// `corrections` with `reference` would also pass if it always
    /// handed over) and hands the degenerate ones over.
    #[test]
    fn the_fast_path_solves_ordinary_limbs_and_hands_over_degenerate_ones() {
        let limb = Limb::from_rotations(
            Vec3::new(0.0, 1.0, 0.0),
            Vec3::new(0.0, 0.5, 0.05),
            Vec3::new(0.0, 0.1, 0.0),
            Quat::IDENTITY,
            Quat::IDENTITY,
        );
        let mut solved = 0;
        for i in 0..64 {
            let f = i as f32 / 64.0;
            let goal = TwoBoneGoal::new(Vec3::new(0.4 * f - 0.2, 0.2 + 0.5 * f, 0.3 - 0.4 * f))
                .with_soften(0.9)
                .with_weight(if i % 3 == 0 { 0.5 } else { 1.0 })
                .with_twist(if i % 4 == 0 { 0.3 } else { 0.0 });
            let fast = fast_solve(&limb, &goal).expect("an ordinary limb takes the fast path");
            let want = reference(&limb, &goal).unwrap();
            // The AVX2 twin answers too where it runs (the scalar answer
            // stands in for it elsewhere).
            #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
            let twin = if crate::cpu::avx2_kernels() {
                avx2::fast_solve(&limb, &goal).expect("and so does the AVX2 one")
            } else {
                fast
            };
            #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
            let twin = fast;
            for fast in [fast, twin] {
                assert_eq!(fast.reached, want.reached);
                for (a, b) in [
                    (fast.start_correction, want.start_correction),
                    (fast.mid_correction, want.mid_correction),
                ] {
                    assert!((a.dot(b).abs() - 1.0).abs() < 1e-6, "{a:?} vs {b:?}");
                }
            }
            solved += 1;
        }
        assert_eq!(solved, 64);
        for goal in [
            TwoBoneGoal::new(limb.start),
            TwoBoneGoal::new(Vec3::new(0.0, 2.0, 0.0)),
            TwoBoneGoal::new(Vec3::new(0.0, 0.5, 0.5)).with_pole(Vec3::ZERO),
            TwoBoneGoal::new(Vec3::new(0.0, 0.5, 0.5)).with_weight(0.0),
        ] {
            assert!(fast_solve(&limb, &goal).is_none(), "{goal:?}");
            #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
            if crate::cpu::avx2_kernels() {
                assert!(avx2::fast_solve(&limb, &goal).is_none(), "{goal:?}");
            }
            assert!(corrections(&limb, &goal).is_ok());
        }
    }
}
