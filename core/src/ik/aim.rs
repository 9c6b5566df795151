//! Aim and look-at: turn a joint, or a chain of joints, so that an axis of
//! the last one points at a target.
//!
//! The single-joint solver follows ozz-animation's `IKAimJob`: a forward
//! axis and an up vector, both in the joint's own (local) frame, an offset
//! (the point in that frame that should aim, e.g. the eyes above the head
//! joint), a pole vector in model space that the up vector leans towards,
//! a twist about the aim axis and a weight. It returns a correction in the
//! joint's own frame (`local' = local · correction`, see [`super`]).
//!
//! How the correction is built, all in the joint's frame (the target and
//! the pole are brought there with the inverse of the joint's model
//! matrix):
//! 1. *Offset.* The ray from `offset` along `forward` must pass through the
//!    target `t`. Rotations keep distances to the joint, so the point of
//!    that ray at distance `|t|` from the joint is the one to turn onto `t`:
//!    `o + k·f` with `k = √(|t|² − |o|² + (f·o)²) − f·o`. The target is
//!    *reached* when that point exists in front of the offset (`k > 0`):
//!    a target inside the sphere through the offset, or at the joint, is
//!    not, and the correction is the identity.
//! 2. *Aim.* The shortest arc from `o + k·f` to `t`.
//! 3. *Pole.* A turn about the aim axis `t̂` that brings the turned up
//!    vector into the half-plane spanned by `t̂` and the pole (on the
//!    pole's side).
//! 4. *Twist.* A further turn of `twist` radians about `t̂`.
//! 5. *Weight and cone.* The rotation's angle is scaled by the weight
//!    (an exact slerp from the identity: weight ½ turns half the angle)
//!    and, in a look-at chain, clamped to the joint's maximum angle.
//!
//! Degenerate cases: when the turned up vector or the pole is parallel to
//! the aim axis (within about 1e-5 rad) or zero, the plane in step 3 is
//! undefined and that step is skipped (the aim is the shortest arc, plus
//! the twist). A target exactly behind the aiming ray turns it half a turn
//! about an axis perpendicular to it. The result is finite whatever the
//! pose: a singular or non-finite model matrix gives the identity, not
//! reached. Like every solver here, the correction is exact for matrices
//! with uniform scale (see [`super`]).
//!
//! [`aim_corrections_x4`] and [`aim_corrections_x8`] solve one joint of
//! four or eight characters per call, one character per SIMD lane; they
//! match [`aim_correction`] within 1e-5.

use wide::{f32x4, f32x8};

use super::IkPose;
use crate::fp::Fp;
use crate::math::{sqrt_f32, Mat4, Quat, Vec3};
use crate::Error;

/// Below this |determinant| a model matrix is treated as singular.
const DET_MIN: f32 = 1e-12;
/// Below this squared distance (joint-frame units²) the target sits on the
/// joint and has no direction.
const R2_MIN: f32 = 1e-20;
/// Squared sine of the aim arc's angle below which the forward direction
/// and the target's are opposite, and the arc's plane is chosen.
const PERP_MIN: f32 = 1e-12;
/// Squared sine of the angle between the up vector (or the pole) and the
/// aim axis below which the pole plane is undefined (about 1e-5 rad).
const PLANE_EPS: f32 = 1e-10;

/// What a joint should aim at, and how (see the [module](self) docs).
///
/// `forward`, `up` and `offset` are in the aiming joint's local frame (for
/// a [`look_at`] chain: the frame of the chain's last joint); `target` and
/// `pole` are in model space (the space of the model matrices). Angles are
/// radians, lengths the data's unit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aim {
    /// The point to aim at, model space.
    pub target: Vec3,
    /// The axis that should point at the target, joint frame. Any non-zero
    /// length (it is normalised).
    pub forward: Vec3,
    /// The axis kept towards the pole, joint frame. Need not be unit or
    /// perpendicular to `forward`; zero, or parallel to the aim direction,
    /// skips the pole alignment.
    pub up: Vec3,
    /// The point that aims, joint frame (zero: the joint's origin).
    pub offset: Vec3,
    /// The direction `up` leans towards, model space (default +Y). Zero, or
    /// parallel to the aim direction, skips the pole alignment.
    pub pole: Vec3,
    /// A further turn about the aim axis, radians, right-handed about the
    /// joint-to-target direction.
    pub twist: f32,
    /// How much of the correction to apply, `0..=1` (0: none, 1: aim
    /// exactly); the angle scales linearly.
    pub weight: f32,
}

impl Aim {
    /// Aim `forward` at `target`, `up` towards +Y, from the joint's
    /// origin, no twist, weight 1.
    #[inline]
    #[must_use]
    pub const fn new(target: Vec3, forward: Vec3, up: Vec3) -> Self {
        Aim {
            target,
            forward,
            up,
            offset: Vec3::ZERO,
            pole: Vec3::Y,
            twist: 0.0,
            weight: 1.0,
        }
    }

    /// With the aiming point `offset` (joint frame).
    #[inline]
    #[must_use]
    pub const fn with_offset(self, offset: Vec3) -> Self {
        Aim { offset, ..self }
    }

    /// With the pole vector `pole` (model space).
    #[inline]
    #[must_use]
    pub const fn with_pole(self, pole: Vec3) -> Self {
        Aim { pole, ..self }
    }

    /// With a twist of `twist` radians about the aim axis.
    #[inline]
    #[must_use]
    pub const fn with_twist(self, twist: f32) -> Self {
        Aim { twist, ..self }
    }

    /// With the weight `weight` (`0..=1`).
    #[inline]
    #[must_use]
    pub const fn with_weight(self, weight: f32) -> Self {
        Aim { weight, ..self }
    }

    /// Checks the aim: everything finite, `forward` neither zero (squared
    /// length at most 1e-20) nor so long that its squared length overflows,
    /// `weight` in `0..=1`.
    ///
    /// # Errors
    /// [`Error::NonFinite`] naming the first non-finite field;
    /// [`Error::InvalidParameter`] for a zero (or overflowing) `forward` or a weight outside
    /// `0..=1` (NaN included).
    pub fn validate(&self) -> Result<(), Error> {
        if self.is_valid() {
            return Ok(());
        }
        self.error()
    }

    /// The checks of [`Aim::validate`] at once: the finite test by the
    /// exponent bits of every field, no branch per field.
    #[inline]
    fn is_valid(&self) -> bool {
        let (t, f, u, o, p) = (self.target, self.forward, self.up, self.offset, self.pole);
        let fields = [
            t.x, t.y, t.z, f.x, f.y, f.z, u.x, u.y, u.z, o.x, o.y, o.z, p.x, p.y, p.z, self.twist,
        ];
        let l = f.length_squared();
        crate::soa::all_finite(&fields)
            && self.weight >= 0.0
            && self.weight <= 1.0
            && l > R2_MIN
            && l.is_finite()
    }

    /// The first error of an invalid aim, field by field.
    #[cold]
    fn error(&self) -> Result<(), Error> {
        let fields = [
            (self.target, "aim target"),
            (self.forward, "aim forward axis"),
            (self.up, "aim up vector"),
            (self.offset, "aim offset"),
            (self.pole, "aim pole vector"),
        ];
        for (v, what) in fields {
            if !v.is_finite() {
                return Err(Error::NonFinite { what });
            }
        }
        if !self.twist.is_finite() {
            return Err(Error::NonFinite { what: "aim twist" });
        }
        if !(self.weight >= 0.0 && self.weight <= 1.0) {
            return Err(Error::InvalidParameter {
                what: "aim weight must be in 0..=1",
            });
        }
        let l = self.forward.length_squared();
        let usable = l > R2_MIN && l.is_finite();
        if !usable {
            return Err(Error::InvalidParameter {
                what: "aim forward axis must not be zero",
            });
        }
        Ok(())
    }
}

/// The result of one aim: a rotation for the joint and whether the target
/// could be aimed at.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AimCorrection {
    /// The correction in the joint's own frame, to multiply on the right of
    /// its local rotation (`local' = local · rotation`, as
    /// [`IkPose::rotate_local`] does). Unit length, `w >= 0`; the identity
    /// when `reached` is false or the weight is 0.
    pub rotation: Quat,
    /// False when the target cannot be aimed at: it lies inside the sphere
    /// (centred on the joint) through the offset point, behind it, or on the
    /// joint; or the model matrix is singular or not finite.
    pub reached: bool,
}

impl AimCorrection {
    const UNREACHED: AimCorrection = AimCorrection {
        rotation: Quat::IDENTITY,
        reached: false,
    };
}

/// The rotation correction that aims a joint whose model matrix is `model`.
/// Nothing is written; see [`aim_joint`] to apply it.
///
/// # Errors
/// As [`Aim::validate`].
pub fn aim_correction(model: &Mat4, aim: &Aim) -> Result<AimCorrection, Error> {
    let goal = Goal::new(aim)?;
    let Some(frame) = JointFrame::new(model) else {
        return Ok(AimCorrection::UNREACHED);
    };
    let s = solve(
        frame.point(aim.target),
        frame.vector(aim.pole),
        &goal,
        &Limit::NONE,
    );
    Ok(s.correction)
}

/// Aims joint `joint` of `pose`: computes [`aim_correction`] from its
/// current model matrix, multiplies it into its local rotation and updates
/// the model matrices of its subtree. When the correction is the identity
/// (not reached, or weight 0) nothing is written.
///
/// # Errors
/// [`Error::JointOutOfRange`]; as [`Aim::validate`]. On error the pose is
/// untouched.
pub fn aim_joint(
    pose: &mut IkPose<'_, '_>,
    joint: usize,
    aim: &Aim,
) -> Result<AimCorrection, Error> {
    let c = aim_correction(pose.model(joint)?, aim)?;
    if c.rotation != Quat::IDENTITY {
        pose.rotate_local(joint, c.rotation)?;
        pose.update_models(joint)?;
    }
    Ok(c)
}

/// One joint of a [`look_at`] chain: its index, its share of the
/// correction and the largest angle it may turn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LookAtJoint {
    /// Joint index in the skeleton.
    pub joint: usize,
    /// Share of the aim this joint takes, `0..=1`, of what is left after
    /// its ancestors in the chain turned (see [`look_at`]).
    pub weight: f32,
    /// Largest angle of this joint's correction, radians, `>= 0`; `π` or
    /// more (the default is infinity) is no limit.
    pub max_angle: f32,
}

impl LookAtJoint {
    /// Joint `joint` with weight `weight` and no angle limit.
    #[inline]
    #[must_use]
    pub const fn new(joint: usize, weight: f32) -> Self {
        LookAtJoint {
            joint,
            weight,
            max_angle: f32::INFINITY,
        }
    }

    /// With the angle limit `max_angle` (radians).
    #[inline]
    #[must_use]
    pub const fn with_max_angle(self, max_angle: f32) -> Self {
        LookAtJoint { max_angle, ..self }
    }
}

/// What a [`look_at`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LookAtReport {
    /// True when every joint of the chain could aim (see
    /// [`AimCorrection::reached`]); a joint that could not keeps its
    /// rotation.
    pub reached: bool,
    /// How many joints had their correction clamped to their `max_angle`.
    pub clamped: usize,
}

/// Turns a chain of joints (e.g. spine → neck → head) so that the last
/// one's `aim.forward` axis, from `aim.offset`, points at `aim.target`.
///
/// `chain` lists joints root side first, each a strict ancestor of the
/// next (intermediate joints may be skipped). `aim.forward`, `aim.up` and
/// `aim.offset` are in the frame of the last joint; every other joint aims
/// the same ray, expressed in its own frame. The joints are solved in
/// order: joint `i` computes its full aim correction *after* its
/// ancestors in the chain turned, and takes `aim.weight · chain[i].weight`
/// of its angle, clamped to `chain[i].max_angle`. So a last joint of
/// weight 1 (with `aim.weight` 1 and no clamp) points exactly at the
/// target, whatever the earlier weights; those decide how the turn is
/// shared out. Then the model matrices of the first turned joint's subtree
/// are recomputed ([`IkPose::update_models`]).
///
/// Between joints the chain's matrices are carried by the rigid change of
/// the turned subtree, not by running FK, so the work besides the final
/// update is a few matrix products per joint.
///
/// # Errors
/// As [`Aim::validate`]; [`Error::InvalidParameter`] for an empty chain, a
/// chain with more joints than the skeleton, a joint weight outside
/// `0..=1`, a NaN or negative `max_angle`, or a joint that is not a strict
/// ancestor of the next; [`Error::JointOutOfRange`] for a joint past the
/// skeleton. Everything is checked before anything is written: on error
/// the pose is untouched.
pub fn look_at(
    pose: &mut IkPose<'_, '_>,
    chain: &[LookAtJoint],
    aim: &Aim,
) -> Result<LookAtReport, Error> {
    let goal = Goal::new(aim)?;
    validate_chain(pose.skeleton(), chain)?;
    let Some((last, ancestors)) = chain.split_last() else {
        return Err(Error::InvalidParameter {
            what: "look-at chain is empty",
        });
    };
    let tip = last.joint;
    let mut report = LookAtReport {
        reached: true,
        clamped: 0,
    };
    // The model-space change of every joint below the turned ones so far:
    // current = delta · stored. Each chain joint lies below all earlier ones.
    let mut delta = Mat4::IDENTITY;
    let mut first_turned = None;
    for (i, cj) in chain.iter().enumerate() {
        let j = cj.joint;
        let model = current(pose, &delta, j);
        let Some(frame) = JointFrame::new(&model) else {
            report.reached = false;
            continue;
        };
        let mut g = goal;
        g.weight = aim.weight * cj.weight;
        if i < ancestors.len() {
            // The tip's ray, in this joint's frame.
            let tip_model = current(pose, &delta, tip);
            let Some(forward) = frame
                .vector(tip_model.transform_vector(goal.forward))
                .try_normalize()
            else {
                report.reached = false;
                continue;
            };
            g.forward = forward;
            g.up = frame.vector(tip_model.transform_vector(goal.up));
            g.offset = frame.point(tip_model.transform_point(goal.offset));
        }
        let limit = Limit::new(cj.max_angle);
        let s = solve(frame.point(aim.target), frame.vector(aim.pole), &g, &limit);
        report.reached &= s.correction.reached;
        report.clamped += usize::from(s.clamped);
        if s.correction.rotation == Quat::IDENTITY {
            continue;
        }
        pose.rotate_local(j, s.correction.rotation)?;
        first_turned.get_or_insert(j);
        if i < ancestors.len() {
            let parent = match pose.skeleton.parent(j) {
                Some(p) => current(pose, &delta, p),
                None => pose.root.copied().unwrap_or(Mat4::IDENTITY),
            };
            let turned = parent * pose.local(j)?.to_matrix();
            delta = turned * frame.inverse() * delta;
        }
    }
    if let Some(j) = first_turned {
        pose.update_models(j)?;
    }
    Ok(report)
}

/// The current model matrix of `j`, below the chain joints turned so far.
#[inline]
fn current(pose: &IkPose<'_, '_>, delta: &Mat4, j: usize) -> Mat4 {
    // `j` was checked against the skeleton, whose joint count is the
    // matrices' length.
    let m = pose.models.get(j).copied().unwrap_or(Mat4::IDENTITY);
    if *delta == Mat4::IDENTITY {
        m
    } else {
        *delta * m
    }
}

fn validate_chain(skeleton: &crate::Skeleton<'_>, chain: &[LookAtJoint]) -> Result<(), Error> {
    let n = skeleton.joint_count();
    if chain.is_empty() {
        return Err(Error::InvalidParameter {
            what: "look-at chain is empty",
        });
    }
    if chain.len() > n {
        return Err(Error::InvalidParameter {
            what: "look-at chain has more joints than the skeleton",
        });
    }
    for cj in chain {
        if cj.joint >= n {
            return Err(Error::JointOutOfRange {
                joint: cj.joint,
                count: n,
            });
        }
        if !(cj.weight >= 0.0 && cj.weight <= 1.0) {
            return Err(Error::InvalidParameter {
                what: "look-at joint weight must be in 0..=1",
            });
        }
        if cj.max_angle.is_nan() || cj.max_angle < 0.0 {
            return Err(Error::InvalidParameter {
                what: "look-at max_angle must be >= 0 (radians)",
            });
        }
    }
    for pair in chain.windows(2) {
        let (a, b) = (pair[0].joint, pair[1].joint);
        // Parents come before children, so walking up from `b` either meets
        // `a` or passes below its index.
        let mut k = skeleton.parent(b);
        while let Some(p) = k {
            if p <= a {
                break;
            }
            k = skeleton.parent(p);
        }
        if k != Some(a) {
            return Err(Error::InvalidParameter {
                what: "look-at chain: each joint must be a strict ancestor of the next",
            });
        }
    }
    Ok(())
}

/// A validated aim with its forward axis normalised and the half twist's
/// cosine and sine.
#[derive(Clone, Copy, Debug)]
struct Goal {
    forward: Vec3,
    up: Vec3,
    offset: Vec3,
    twist_cos: f32,
    twist_sin: f32,
    weight: f32,
}

impl Goal {
    fn new(aim: &Aim) -> Result<Goal, Error> {
        aim.validate()?;
        let forward = aim.forward * (1.0 / aim.forward.length());
        let (twist_sin, twist_cos) = if aim.twist == 0.0 {
            (0.0, 1.0)
        } else {
            (libm::sinf(aim.twist * 0.5), libm::cosf(aim.twist * 0.5))
        };
        Ok(Goal {
            forward,
            up: aim.up,
            offset: aim.offset,
            twist_cos,
            twist_sin,
            weight: aim.weight,
        })
    }
}

/// The cone limit of a correction, as its half angle.
#[derive(Clone, Copy, Debug)]
struct Limit {
    half: f32,
    cos: f32,
    sin: f32,
}

impl Limit {
    /// A half angle of π/2 (a full turn of π): every correction fits, since
    /// corrections are kept with `w >= 0`.
    const NONE: Limit = Limit {
        half: core::f32::consts::FRAC_PI_2,
        cos: 0.0,
        sin: 1.0,
    };

    fn new(max_angle: f32) -> Limit {
        if max_angle >= core::f32::consts::PI {
            return Limit::NONE;
        }
        let half = max_angle * 0.5;
        Limit {
            half,
            cos: libm::cosf(half),
            sin: libm::sinf(half),
        }
    }
}

/// The inverse of a model matrix's linear part (its rows: the cross
/// products of the columns over the determinant) and its origin.
struct JointFrame {
    rows: [Vec3; 3],
    origin: Vec3,
}

impl JointFrame {
    #[inline]
    fn new(m: &Mat4) -> Option<JointFrame> {
        let col = |c: usize| Vec3::new(m.cols[c][0], m.cols[c][1], m.cols[c][2]);
        let (c0, c1, c2) = (col(0), col(1), col(2));
        let (r0, r1, r2) = (c1.cross(c2), c2.cross(c0), c0.cross(c1));
        let det = c0.dot(r0);
        // Also false for a NaN determinant.
        if !(libm::fabsf(det) >= DET_MIN && det.is_finite()) {
            return None;
        }
        let inv = 1.0 / det;
        Some(JointFrame {
            rows: [r0 * inv, r1 * inv, r2 * inv],
            origin: col(3),
        })
    }

    /// A model-space direction in the joint's frame.
    #[inline]
    fn vector(&self, v: Vec3) -> Vec3 {
        Vec3::new(
            self.rows[0].dot(v),
            self.rows[1].dot(v),
            self.rows[2].dot(v),
        )
    }

    /// A model-space point in the joint's frame.
    #[inline]
    fn point(&self, p: Vec3) -> Vec3 {
        self.vector(p - self.origin)
    }

    /// The inverse matrix (model space to joint frame).
    fn inverse(&self) -> Mat4 {
        let [r0, r1, r2] = self.rows;
        let t = -self.vector(self.origin);
        Mat4 {
            cols: [
                [r0.x, r1.x, r2.x, 0.0],
                [r0.y, r1.y, r2.y, 0.0],
                [r0.z, r1.z, r2.z, 0.0],
                [t.x, t.y, t.z, 1.0],
            ],
        }
    }
}

/// The rotation from unit `a` to unit `b`, at most a quarter turn apart,
/// unnormalised: `(a × b, 1 + a · b)`, which is `2 cos(θ/2)` (between √2
/// and 2) times the unit quaternion.
#[inline]
fn arc(a: Vec3, b: Vec3) -> Quat {
    let c = a.cross(b);
    Quat::new(c.x, c.y, c.z, 1.0 + a.dot(b))
}

/// `q v q*` for any quaternion `q`: `v` turned by `q`'s rotation and
/// scaled by `|q|²`.
#[inline]
fn rotate_scaled(q: Quat, v: Vec3) -> Vec3 {
    let u = Vec3::new(q.x, q.y, q.z);
    v * (q.w * q.w - u.dot(u)) + u * (2.0 * u.dot(v)) + u.cross(v) * (2.0 * q.w)
}

struct Solved {
    correction: AimCorrection,
    clamped: bool,
}

/// The scalar solver (the reference the lane kernel is tested against):
/// the aim of `g` at `t` with pole `p`, everything in the joint's frame.
///
/// Quaternions stay unnormalised until the end (each step scales them by
/// a bounded factor), so the chain of dependent square roots and divisions
/// is short: the division of the frame, the sphere's square root, `1/|t|`,
/// one square root for the pole's angle and the final normalisation.
fn solve(t: Vec3, p: Vec3, g: &Goal, limit: &Limit) -> Solved {
    const NOT: Solved = Solved {
        correction: AimCorrection::UNREACHED,
        clamped: false,
    };
    let (f, o, u) = (g.forward, g.offset, g.up);
    // 1. The point of the offset ray at the target's distance.
    let r2 = t.length_squared();
    let fo = f.dot(o);
    let disc = r2 - (o.length_squared() - fo * fo);
    let k = sqrt_f32(disc.max_num(0.0)) - fo;
    if !(disc >= 0.0 && k > 0.0 && r2 > R2_MIN) {
        return NOT;
    }
    // Only directions matter from here: scale by 1/|t| (both unit).
    let inv_len = 1.0 / sqrt_f32(r2);
    let tn = t * inv_len;
    let from = (o + f * k) * inv_len;
    // 2. The shortest arc from `from` onto `tn`: up to a quarter turn
    // directly; beyond, through the direction `m` a quarter turn from
    // `from` towards `tn`. Each arc is then well conditioned, so `from`
    // lands on `tn` to rounding even when the two are nearly opposite
    // (where `1 + cos` alone would have lost the digits).
    let d = from.dot(tn);
    let q1 = if d >= 0.0 {
        arc(from, tn)
    } else {
        let perp = tn - from * d;
        let lp = perp.length_squared();
        let m = if lp > PERP_MIN {
            perp * (1.0 / sqrt_f32(lp))
        } else {
            // Opposite: any direction perpendicular to `from`.
            let e = if libm::fabsf(from.x) < libm::fabsf(from.y) {
                Vec3::X
            } else {
                Vec3::Y
            };
            let c = from.cross(e);
            c * (1.0 / sqrt_f32(c.length_squared()))
        };
        arc(m, tn) * arc(from, m)
    };
    // 3. The turn θ about the aim axis that brings the up vector into the
    // pole's half-plane: the angle between the normals n = u1 × t̂ and
    // nr = p × t̂, with |n| |nr| cos θ = n · nr and |n| |nr| sin θ =
    // (n × nr) · t̂ = u1 · nr. Its half angle's cosine and sine are
    // proportional to (R + C, S), or to (S, R − C) past a quarter turn,
    // where the first loses digits (R = √(C² + S²)).
    let u1 = rotate_scaled(q1, u);
    let n = u1.cross(tn);
    let nr = p.cross(tn);
    let (mut hc, mut hs) = (1.0, 0.0);
    if n.length_squared() > PLANE_EPS * u1.length_squared()
        && nr.length_squared() > PLANE_EPS * p.length_squared()
    {
        let (c, s) = (n.dot(nr), u1.dot(nr));
        let r = sqrt_f32(c * c + s * s);
        (hc, hs) = if c >= 0.0 { (r + c, s) } else { (s, r - c) };
    }
    // 4. Plus the twist: the half angles add.
    let (tc, ts) = (g.twist_cos, g.twist_sin);
    let (cw, sw) = (hc * tc - hs * ts, hs * tc + hc * ts);
    let axis = tn * sw;
    let q = Quat::new(axis.x, axis.y, axis.z, cw) * q1;
    // Unit, with w >= 0.
    let inv = 1.0 / q.length();
    let mut q = q.scale(if q.w < 0.0 { -inv } else { inv });
    // 5. Weight, then the cone.
    let v = Vec3::new(q.x, q.y, q.z);
    let mut clamped = false;
    if g.weight == 1.0 {
        if q.w < limit.cos {
            clamped = true;
            let lv = v.length();
            let s = if lv > 0.0 { limit.sin / lv } else { 0.0 };
            q = Quat::new(v.x * s, v.y * s, v.z * s, limit.cos);
        }
    } else {
        let lv = v.length();
        let h = g.weight * libm::atan2f(lv, q.w);
        clamped = h > limit.half;
        let h = h.min_num(limit.half);
        let s = if lv > 0.0 { libm::sinf(h) / lv } else { 0.0 };
        q = Quat::new(v.x * s, v.y * s, v.z * s, libm::cosf(h));
    }
    if !q.is_finite() {
        return NOT;
    }
    Solved {
        correction: AimCorrection {
            rotation: q,
            reached: true,
        },
        clamped,
    }
}

/// [`aim_correction`] for the same joint of four characters, one per
/// SIMD lane (`models[i]` and `aims[i]` are character `i`'s).
///
/// # Errors
/// As [`Aim::validate`], for the first invalid lane; nothing is computed
/// then.
pub fn aim_corrections_x4(
    models: [&Mat4; 4],
    aims: &[Aim; 4],
) -> Result<[AimCorrection; 4], Error> {
    lanes::solve::<f32x4, 4>(&models, aims)
}

/// [`aim_correction`] for the same joint of eight characters, one per lane
/// of `f32x8` (AVX registers where the build enables AVX; two 4-lane
/// halves otherwise, with the same results).
///
/// # Errors
/// As [`aim_corrections_x4`].
pub fn aim_corrections_x8(
    models: [&Mat4; 8],
    aims: &[Aim; 8],
) -> Result<[AimCorrection; 8], Error> {
    lanes::solve::<f32x8, 8>(&models, aims)
}

/// The lane kernel: [`solve`] without branches on the data, one character
/// per lane, written once for any lane width.
mod lanes {
    use super::*;

    use crate::ik::lanes::{Lane, Q, V};

    /// `super::arc` in lanes.
    #[inline(always)]
    fn arc<F: Lane<N>, const N: usize>(a: V<F>, b: V<F>) -> Q<F> {
        Q::new(a.cross(b), F::splat(1.0) + a.dot(b))
    }

    /// `super::rotate_scaled` in lanes.
    #[inline(always)]
    fn rotate_scaled<F: Lane<N>, const N: usize>(q: Q<F>, v: V<F>) -> V<F> {
        let two = F::splat(2.0);
        let u = q.v();
        v.scale(q.w * q.w - u.dot(u))
            .add(u.scale(two * u.dot(v)))
            .add(u.cross(v).scale(two * q.w))
    }

    #[inline(always)]
    pub(super) fn solve<F: Lane<N>, const N: usize>(
        models: &[&Mat4; N],
        aims: &[Aim; N],
    ) -> Result<[AimCorrection; N], Error> {
        let zero = F::splat(0.0);
        let one = F::splat(1.0);
        let half = F::splat(0.5);
        let target = V::gather::<N>(|i| aims[i].target);
        let pole = V::gather::<N>(|i| aims[i].pole);
        let f = V::<F>::gather::<N>(|i| aims[i].forward);
        let o = V::<F>::gather::<N>(|i| aims[i].offset);
        let u = V::<F>::gather::<N>(|i| aims[i].up);
        let weight = F::gather(|i| aims[i].weight);
        let twist = F::gather(|i| aims[i].twist);
        // `Aim::validate` on the lanes: `x · 0` is zero for finite `x`
        // and NaN otherwise. The precise error comes from the scalar check.
        let probe = |v: V<F>| v.x * zero + v.y * zero + v.z * zero;
        let finite =
            ((probe(target) + probe(pole)) + (probe(f) + probe(o))) + (probe(u) + twist * zero);
        let fl = f.dot(f);
        let valid = finite.eq(zero)
            & weight.ge(zero)
            & weight.le(one)
            & fl.gt(F::splat(R2_MIN))
            & fl.finite();
        if !valid.all() {
            for a in aims {
                a.validate()?;
            }
        }
        let f = f.scale(one / fl.sqrt());
        let col = |c: usize| {
            V::<F>::gather::<N>(|i| {
                Vec3::new(
                    models[i].cols[c][0],
                    models[i].cols[c][1],
                    models[i].cols[c][2],
                )
            })
        };
        let (c0, c1, c2, c3) = (col(0), col(1), col(2), col(3));
        // The joint frame: the inverse of the linear part, by cofactors.
        let (r0, r1, r2) = (c1.cross(c2), c2.cross(c0), c0.cross(c1));
        let det = c0.dot(r0);
        let mut ok = det.abs().ge(F::splat(DET_MIN)) & det.finite();
        let inv = one / det;
        let (r0, r1, r2) = (r0.scale(inv), r1.scale(inv), r2.scale(inv));
        let to_joint = |v: V<F>| V {
            x: r0.dot(v),
            y: r1.dot(v),
            z: r2.dot(v),
        };
        let t = to_joint(target.sub(c3));
        let p = to_joint(pole);

        // 1. The offset ray, then directions only.
        let rr = t.dot(t);
        let fo = f.dot(o);
        let disc = rr - (o.dot(o) - fo * fo);
        let k = disc.max(zero).sqrt() - fo;
        ok = ok & disc.ge(zero) & k.gt(zero) & rr.gt(F::splat(R2_MIN));
        let inv_len = one / rr.sqrt();
        let tn = t.scale(inv_len);
        let from = o.add(f.scale(k)).scale(inv_len);
        // 2. Shortest arc, as `solve` (`arc` directly, or through `m`).
        let d = from.dot(tn);
        let mut q1 = arc(from, tn);
        let obtuse = d.lt(zero);
        if obtuse.any() {
            let perp = tn.sub(from.scale(d));
            let lp = perp.dot(perp);
            let x_smaller = from.x.abs().lt(from.y.abs());
            let e = V {
                x: x_smaller.select(one, zero),
                y: x_smaller.select(zero, one),
                z: zero,
            };
            let c = from.cross(e);
            let side = lp.gt(F::splat(PERP_MIN));
            let m = V::select(
                side,
                perp.scale(one / lp.sqrt()),
                c.scale(one / c.dot(c).sqrt()),
            );
            let q = arc(m, tn).mul(arc(from, m));
            q1 = Q::new(V::select(obtuse, q.v(), q1.v()), obtuse.select(q.w, q1.w));
        }
        // 3. Pole plane.
        let u1 = rotate_scaled(q1, u);
        let n = u1.cross(tn);
        let nr = p.cross(tn);
        let eps = F::splat(PLANE_EPS);
        let plane = n.dot(n).gt(eps * u1.dot(u1)) & nr.dot(nr).gt(eps * p.dot(p));
        let (c, s) = (n.dot(nr), u1.dot(nr));
        let r = (c * c + s * s).sqrt();
        let positive = c.ge(zero);
        let hc = plane.select(positive.select(r + c, s), one);
        let hs = plane.select(positive.select(s, r - c), zero);
        // 4. Twist.
        let (ts, tc) = if twist.eq(zero).all() {
            (zero, one)
        } else {
            (twist * half).sin_cos()
        };
        let (cw, sw) = (hc * tc - hs * ts, hs * tc + hc * ts);
        let q = Q::new(tn.scale(sw), cw).mul(q1);
        let inv = one / (q.v().dot(q.v()) + q.w * q.w).sqrt();
        let inv = q.w.lt(zero).select(-inv, inv);
        let mut q = Q::new(q.v().scale(inv), q.w * inv);
        // 5. Weight (no cone for a single aim).
        let full = weight.eq(one);
        if !full.all() {
            let lv = q.v().dot(q.v()).sqrt();
            let h = weight * lv.atan2(q.w);
            let (sin, cos) = h.sin_cos();
            let s = lv.gt(zero).select(sin / lv, zero);
            q = Q::new(
                V::select(full, q.v(), q.v().scale(s)),
                full.select(q.w, cos),
            );
        }
        ok = ok & q.x.finite() & q.y.finite() & q.z.finite() & q.w.finite();
        let q = Q::new(
            V::select(
                ok,
                q.v(),
                V {
                    x: zero,
                    y: zero,
                    z: zero,
                },
            ),
            ok.select(q.w, one),
        );
        Ok(core::array::from_fn(|i| AimCorrection {
            rotation: Quat::new(q.x.lane(i), q.y.lane(i), q.z.lane(i), q.w.lane(i)),
            reached: ok.lane(i).to_bits() != 0,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aims_forward_at_the_target_from_an_identity_joint() {
        let aim = Aim::new(Vec3::new(1.0, 0.0, 0.0), Vec3::Z, Vec3::Y);
        let c = aim_correction(&Mat4::IDENTITY, &aim).unwrap();
        assert!(c.reached);
        let f = c.rotation.rotate(Vec3::Z);
        assert!((f - Vec3::X).length() < 1e-6, "{f:?}");
        let lanes = aim_corrections_x4([&Mat4::IDENTITY; 4], &[aim; 4]).unwrap();
        for l in lanes {
            assert!(l.reached);
            assert!((l.rotation.rotate(Vec3::Z) - Vec3::X).length() < 1e-6);
        }
    }
}
