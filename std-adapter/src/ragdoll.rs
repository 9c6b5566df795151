//! Powered ragdolls: the skeleton as rigid bodies and limited joints,
//! simulated by [rapier3d](https://rapier.rs), with joint motors that track
//! the animation and a pose that blends back with it.
//!
//! A [`Ragdoll`] is built once from a skeleton, its bind-pose model matrices
//! and a [`RagdollDesc`]. Each frame the caller
//!
//! 1. [`Ragdoll::drive`]s the joint motors toward the current animated local
//!    pose (PD motors: stiffness `kp`, damping `kd = 2ζ√(kp·I)`, critically
//!    damped for ζ = 1; strength 0 leaves the joints limp),
//! 2. optionally [`Ragdoll::apply_impulse`]s a hit,
//! 3. [`Ragdoll::step`]s the simulation (the frame cut into sub-steps by
//!    [`SubSteps`], a hitch clamped and reported),
//! 4. [`Ragdoll::write_pose`]s the bodies back into the local pose, blended
//!    with the animation by a global or per-joint weight.
//!
//! Hit reactions keep the motors strong and blend at weight 1 while the
//! bodies swing back; a fall sets the strength to 0; getting up plays the
//! get-up clip while the blend weight fades to 0.
//!
//! # Bodies
//! A joint gets a capsule body from itself to its *bone child* when that bone
//! is at least [`RagdollDesc::min_bone_length`] long. The bone child is the
//! only child, the child that continues the parent bone's direction best, or
//! for a root the child with the largest subtree. Shorter bones and leaf
//! joints ride rigidly on the nearest ancestor that has a body (they keep
//! their animated local transforms), unless [`RagdollDesc::leaf_radius`]
//! gives leaves a sphere or a [`JointDesc`] asks for a shape. A root joint
//! always has a body. A body's frame is its joint's frame, so a body's pose
//! is its joint's model transform placed in the world.
//!
//! # Joints
//! A body is connected to the body of its nearest ancestor by a spherical
//! joint, or a hinge where [`JointDesc::limits`] says so. The joint measures
//! the rotation relative to the bind pose in the *bone frame* (X along the
//! bone, the twist axis; a hinge's X along its axis). A spherical joint
//! limits each of the three components separately: twist within
//! ±`twist` and each swing component within ±`swing` (a swing pyramid, not
//! a cone: rapier's cone limit cannot be combined with its per-axis motors).
//! Contacts between bodies are off (only the ground collides), so limbs may
//! pass through the torso.
//!
//! # Conventions
//! Metres, kilograms, seconds, radians. The world is the skeleton's model
//! space placed by [`RagdollDesc::placement`]; gravity and the ground are
//! given in the world. Scale is ignored: bodies are rigid and the pose's
//! scale passes through [`Ragdoll::write_pose`] unchanged.
//!
//! # Determinism
//! The same inputs in the same order give the same bits on every run (rapier
//! steps serially here). Across targets, build with sinew-std's
//! `deterministic` feature (rapier's `enhanced-determinism`).

use std::fmt;

use rapier3d::dynamics::{
    GenericJointBuilder, ImpulseJointHandle, JointAxesMask, JointAxis, MotorModel,
    RigidBodyBuilder, RigidBodyHandle, RigidBodyType,
};
use rapier3d::geometry::{
    ColliderBuilder, Group, InteractionGroups, InteractionTestMode, SharedShape,
};
use rapier3d::math as rm;
use rapier3d::pipeline::PhysicsWorld;
use sinew_core::secondary::SubSteps;
use sinew_core::soa::get_joint;
use sinew_core::{Mat4, Quat, Skeleton, SoaTransform, Transform, Vec3};

/// Everything that can go wrong building or running a [`Ragdoll`].
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum RagdollError {
    /// A field of [`RagdollDesc`] is out of range (negative density or
    /// radius, zero sub-step budget, ...).
    InvalidDesc {
        /// Which field and what it must be.
        what: &'static str,
    },
    /// An entry of [`RagdollDesc::joints`] is out of range.
    InvalidJointDesc {
        /// The joint the entry belongs to.
        joint: usize,
        /// What is wrong with it.
        what: &'static str,
    },
    /// A value that must be finite is NaN or infinite.
    NonFinite {
        /// What the value was: `"density"`, `"impulse"`, `"pose"`, ...
        what: &'static str,
    },
    /// The skeleton has no bone to build a body from: every joint sits at
    /// its parent's position (a single joint, or all offsets zero).
    NoBones,
    /// A slice does not have the length the call needs.
    BadLength {
        /// Which argument: `"bind models"`, `"pose"`, `"joint weights"`, ...
        buffer: &'static str,
        /// The length needed.
        expected: usize,
        /// The length passed.
        actual: usize,
    },
    /// A joint index lies outside the skeleton.
    JointOutOfRange {
        /// The index passed.
        joint: usize,
        /// Number of joints in the skeleton.
        count: usize,
    },
    /// A time step or strength or blend weight is outside its range
    /// (time steps must be finite and positive, strengths finite and
    /// non-negative, weights in `0..=1`).
    InvalidParameter {
        /// Which parameter and its range.
        what: &'static str,
    },
    /// The simulation produced a non-finite body pose or velocity. The
    /// ragdoll stays unusable until [`Ragdoll::reset`].
    Diverged,
}

impl fmt::Display for RagdollError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RagdollError::InvalidDesc { what } => write!(f, "invalid ragdoll description: {what}"),
            RagdollError::InvalidJointDesc { joint, what } => {
                write!(f, "invalid ragdoll description of joint {joint}: {what}")
            }
            RagdollError::NonFinite { what } => write!(f, "{what} is not finite"),
            RagdollError::NoBones => write!(f, "the skeleton has no bone to build a body from"),
            RagdollError::BadLength {
                buffer,
                expected,
                actual,
            } => write!(f, "{buffer} has length {actual}, expected {expected}"),
            RagdollError::JointOutOfRange { joint, count } => {
                write!(
                    f,
                    "joint {joint} is out of range (skeleton has {count} joints)"
                )
            }
            RagdollError::InvalidParameter { what } => write!(f, "invalid parameter: {what}"),
            RagdollError::Diverged => write!(f, "the ragdoll simulation diverged"),
        }
    }
}

impl std::error::Error for RagdollError {}

/// The collision shape a joint's body gets (see the module docs for `Auto`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum BodyShape {
    /// The rule of the module docs: a capsule along a long enough bone,
    /// otherwise riding the parent's body (a sphere for leaves when
    /// [`RagdollDesc::leaf_radius`] is positive).
    #[default]
    Auto,
    /// No body: the joint rides rigidly on its nearest ancestor's body.
    /// Not allowed for a root joint.
    None,
    /// A capsule from the joint to its bone child, covering the bone
    /// (a sphere at the middle of the bone when the bone is shorter than the
    /// diameter), radius in metres (> 0).
    Capsule {
        /// Radius, metres.
        radius: f32,
    },
    /// A sphere centred on the joint, radius in metres (> 0).
    Sphere {
        /// Radius, metres.
        radius: f32,
    },
}

/// How a body's joint to its parent body rotates.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum JointLimits {
    /// A spherical joint with the description's `swing_limit` and `twist_limit`.
    #[default]
    Default,
    /// A spherical joint with its own limits, radians (≥ 0): twist about the
    /// bone within ±`twist`, each swing component within ±`swing`.
    Spherical {
        /// Largest swing away from the bind pose, radians.
        swing: f32,
        /// Largest twist about the bone, radians.
        twist: f32,
    },
    /// A hinge (knee, elbow) about `axis`, given in the joint's own local
    /// frame at bind, turning from `min` to `max` radians relative to the
    /// bind pose (positive = counter-clockwise about `axis`).
    Hinge {
        /// Hinge axis in the joint's local frame (non-zero; normalised here).
        axis: Vec3,
        /// Smallest angle, radians.
        min: f32,
        /// Largest angle, radians (≥ `min`).
        max: f32,
    },
}

/// Per-joint settings of a [`RagdollDesc`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct JointDesc {
    /// The joint's body.
    pub shape: BodyShape,
    /// The joint to the parent body (ignored for roots and joints without a body).
    pub limits: JointLimits,
    /// Motor stiffness `kp` at strength 1, N·m/rad (≥ 0); `None` takes
    /// [`RagdollDesc::stiffness`].
    pub stiffness: Option<f32>,
}

/// The ground: the half-space `{p : p·normal ≤ height}` is solid.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ground {
    /// Outward (up) normal in the world (non-zero; normalised here).
    pub normal: Vec3,
    /// Signed distance of the plane from the world origin along `normal`, metres.
    pub height: f32,
}

/// How a [`Ragdoll`] is built from a skeleton.
#[derive(Clone, Debug, PartialEq)]
pub struct RagdollDesc {
    /// Body density, kg/m³ (> 0). Default 1000 (water; a human body is close).
    pub density: f32,
    /// Automatic capsule radius as a fraction of the bone length (> 0). Default 0.2.
    pub radius_fraction: f32,
    /// Smallest automatic radius, metres (> 0). Default 0.02.
    pub min_radius: f32,
    /// Bones shorter than this, metres, get no automatic body (≥ 0).
    /// Default 0.055: finger phalanges (≤ 5 cm) ride their hand.
    pub min_bone_length: f32,
    /// Sphere radius of automatic leaf bodies, metres (≥ 0); 0 lets leaves
    /// ride their parent's body. Default 0.
    pub leaf_radius: f32,
    /// Motor stiffness `kp` at strength 1, N·m/rad (≥ 0). Default 600.
    pub stiffness: f32,
    /// Damping ratio ζ of the motors (≥ 0): `kd = 2ζ√(kp·I)` with `I` the
    /// body's moment of inertia about its joint. Default 1 (critical).
    pub damping_ratio: f32,
    /// Largest motor torque per axis, N·m (> 0, may be infinite). Default infinite.
    pub max_torque: f32,
    /// Default swing limit of spherical joints, radians (≥ 0). Default 1.2.
    pub swing_limit: f32,
    /// Default twist limit of spherical joints, radians (≥ 0). Default 0.6.
    pub twist_limit: f32,
    /// Per-joint settings: empty (all default) or one per skeleton joint.
    pub joints: Vec<JointDesc>,
    /// Gravity in the world, m/s². Default `(0, -9.81, 0)`.
    pub gravity: Vec3,
    /// The ground plane, if any. Default `y = 0`, up `+Y`.
    pub ground: Option<Ground>,
    /// Friction coefficient of bodies and ground (≥ 0). Default 0.8.
    pub friction: f32,
    /// Linear and angular velocity damping of the bodies, 1/s (≥ 0). Default 0.05.
    pub body_damping: f32,
    /// Where the skeleton's model space sits in the world (scale ignored).
    /// Default identity.
    pub placement: Transform,
    /// Whether root bodies start kinematic (follow the animated root,
    /// unaffected by forces) instead of dynamic. Default false.
    pub kinematic_root: bool,
    /// Longest sub-step, seconds (> 0). Default 1/120.
    pub max_sub_step: f32,
    /// Most sub-steps per [`Ragdoll::step`] (≥ 1). Default 8.
    pub max_sub_steps: u32,
    /// Solver iterations per sub-step (≥ 1). Default 4.
    pub solver_iterations: u32,
}

impl Default for RagdollDesc {
    fn default() -> Self {
        RagdollDesc {
            density: 1000.0,
            radius_fraction: 0.2,
            min_radius: 0.02,
            min_bone_length: 0.055,
            leaf_radius: 0.0,
            stiffness: 600.0,
            damping_ratio: 1.0,
            max_torque: f32::INFINITY,
            swing_limit: 1.2,
            twist_limit: 0.6,
            joints: Vec::new(),
            gravity: Vec3::new(0.0, -9.81, 0.0),
            ground: Some(Ground {
                normal: Vec3::Y,
                height: 0.0,
            }),
            friction: 0.8,
            body_damping: 0.05,
            placement: Transform::IDENTITY,
            kinematic_root: false,
            max_sub_step: 1.0 / 120.0,
            max_sub_steps: 8,
            solver_iterations: 4,
        }
    }
}

impl RagdollDesc {
    /// The default description with body radii, hinges (knees, elbows) and
    /// limits for the procedural humanoid ([`crate::Humanoid`]), matched by
    /// joint name; joints with other names keep the defaults.
    #[must_use]
    pub fn humanoid(skeleton: &Skeleton<'_>) -> RagdollDesc {
        let mut joints = vec![JointDesc::default(); skeleton.joint_count()];
        let capsule = |radius: f32| BodyShape::Capsule { radius };
        let spherical = |swing: f32, twist: f32| JointLimits::Spherical { swing, twist };
        for (j, d) in joints.iter_mut().enumerate() {
            let Some(name) = skeleton.joint_name(j) else {
                continue;
            };
            let (base, side) = match name.strip_suffix("_l") {
                Some(b) => (b, 1.0f32),
                None => (name.strip_suffix("_r").unwrap_or(name), -1.0f32),
            };
            let (shape, limits) = match base {
                "pelvis" => (capsule(0.11), JointLimits::Default),
                "spine_01" | "spine_02" | "spine_03" => (capsule(0.1), spherical(0.35, 0.3)),
                "neck_01" => (capsule(0.05), spherical(0.6, 0.5)),
                "head" => (capsule(0.09), spherical(0.5, 0.6)),
                "clavicle" => (capsule(0.04), spherical(0.3, 0.2)),
                "upper_arm" => (capsule(0.05), spherical(1.5, 0.8)),
                "upper_arm_twist" => (capsule(0.05), spherical(0.1, 0.8)),
                // The elbow bends the lower arm about its own ∓Y (see the walk clip).
                "lower_arm" => (
                    capsule(0.04),
                    JointLimits::Hinge {
                        axis: Vec3::new(0.0, -side, 0.0),
                        min: -0.05,
                        max: 2.5,
                    },
                ),
                "lower_arm_twist" => (capsule(0.04), spherical(0.1, 0.8)),
                "hand" => (capsule(0.035), spherical(0.8, 0.3)),
                "thigh" => (capsule(0.075), spherical(1.4, 0.5)),
                // The knee bends the calf about its own +X.
                "calf" => (
                    capsule(0.055),
                    JointLimits::Hinge {
                        axis: Vec3::X,
                        min: -0.05,
                        max: 2.5,
                    },
                ),
                "foot" => (capsule(0.045), spherical(0.7, 0.3)),
                "ball" => (capsule(0.03), spherical(0.5, 0.1)),
                _ => continue,
            };
            d.shape = shape;
            d.limits = limits;
        }
        RagdollDesc {
            joints,
            ..RagdollDesc::default()
        }
    }

    fn validate(&self, joint_count: usize) -> Result<(), RagdollError> {
        let finite = |v: f32, what| {
            if v.is_finite() {
                Ok(())
            } else {
                Err(RagdollError::NonFinite { what })
            }
        };
        let desc = |ok: bool, what| {
            if ok {
                Ok(())
            } else {
                Err(RagdollError::InvalidDesc { what })
            }
        };
        finite(self.density, "density")?;
        desc(self.density > 0.0, "density must be positive")?;
        finite(self.radius_fraction, "radius fraction")?;
        desc(
            self.radius_fraction > 0.0,
            "radius fraction must be positive",
        )?;
        finite(self.min_radius, "minimum radius")?;
        desc(self.min_radius > 0.0, "minimum radius must be positive")?;
        finite(self.min_bone_length, "minimum bone length")?;
        desc(
            self.min_bone_length >= 0.0,
            "minimum bone length must not be negative",
        )?;
        finite(self.leaf_radius, "leaf radius")?;
        desc(self.leaf_radius >= 0.0, "leaf radius must not be negative")?;
        finite(self.stiffness, "stiffness")?;
        desc(self.stiffness >= 0.0, "stiffness must not be negative")?;
        finite(self.damping_ratio, "damping ratio")?;
        desc(
            self.damping_ratio >= 0.0,
            "damping ratio must not be negative",
        )?;
        desc(
            self.max_torque > 0.0,
            "maximum torque must be positive (it may be infinite)",
        )?;
        finite(self.swing_limit, "swing limit")?;
        desc(self.swing_limit >= 0.0, "swing limit must not be negative")?;
        finite(self.twist_limit, "twist limit")?;
        desc(self.twist_limit >= 0.0, "twist limit must not be negative")?;
        if !self.gravity.is_finite() {
            return Err(RagdollError::NonFinite { what: "gravity" });
        }
        if let Some(g) = &self.ground {
            if !(g.normal.is_finite() && g.height.is_finite()) {
                return Err(RagdollError::NonFinite { what: "ground" });
            }
            desc(
                g.normal.try_normalize().is_some(),
                "ground normal must not be zero",
            )?;
        }
        finite(self.friction, "friction")?;
        desc(self.friction >= 0.0, "friction must not be negative")?;
        finite(self.body_damping, "body damping")?;
        desc(
            self.body_damping >= 0.0,
            "body damping must not be negative",
        )?;
        if !(self.placement.translation.is_finite() && self.placement.rotation.is_finite()) {
            return Err(RagdollError::NonFinite { what: "placement" });
        }
        desc(
            self.placement.rotation.length() > 0.5,
            "placement rotation must be a unit quaternion",
        )?;
        finite(self.max_sub_step, "maximum sub-step")?;
        desc(self.max_sub_step > 0.0, "maximum sub-step must be positive")?;
        desc(
            self.max_sub_steps >= 1,
            "maximum sub-step count must be at least 1",
        )?;
        desc(
            self.solver_iterations >= 1,
            "solver iterations must be at least 1",
        )?;
        if !self.joints.is_empty() && self.joints.len() != joint_count {
            return Err(RagdollError::BadLength {
                buffer: "joint descriptions",
                expected: joint_count,
                actual: self.joints.len(),
            });
        }
        for (joint, d) in self.joints.iter().enumerate() {
            let bad = |what| Err(RagdollError::InvalidJointDesc { joint, what });
            match d.shape {
                BodyShape::Capsule { radius } | BodyShape::Sphere { radius } => {
                    if !(radius.is_finite() && radius > 0.0) {
                        return bad("radius must be finite and positive");
                    }
                }
                BodyShape::Auto | BodyShape::None => {}
            }
            match d.limits {
                JointLimits::Default => {}
                JointLimits::Spherical { swing, twist } => {
                    if !(swing.is_finite() && twist.is_finite() && swing >= 0.0 && twist >= 0.0) {
                        return bad("swing and twist limits must be finite and non-negative");
                    }
                }
                JointLimits::Hinge { axis, min, max } => {
                    if !(axis.is_finite() && axis.try_normalize().is_some()) {
                        return bad("hinge axis must be finite and non-zero");
                    }
                    if !(min.is_finite() && max.is_finite() && min <= max) {
                        return bad("hinge limits must be finite with min <= max");
                    }
                }
            }
            if let Some(k) = d.stiffness {
                if !(k.is_finite() && k >= 0.0) {
                    return bad("stiffness must be finite and non-negative");
                }
            }
        }
        Ok(())
    }

    fn joint(&self, j: usize) -> JointDesc {
        self.joints.get(j).copied().unwrap_or_default()
    }
}

/// A blend weight for [`Ragdoll::write_pose`]: how much of the bodies
/// (1) versus the animation (0) the output holds.
#[derive(Clone, Copy, Debug)]
pub enum Blend<'a> {
    /// One weight for every joint, in `0..=1`.
    Global(f32),
    /// One weight per skeleton joint, each in `0..=1`.
    PerJoint(&'a [f32]),
}

/// The state of one body, in the world.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BodyState {
    /// The skeleton joint the body belongs to.
    pub joint: usize,
    /// The joint's position (the body's origin), metres.
    pub position: Vec3,
    /// The joint's orientation.
    pub rotation: Quat,
    /// Linear velocity of the body's centre of mass, m/s.
    pub linear_velocity: Vec3,
    /// Angular velocity, rad/s.
    pub angular_velocity: Vec3,
    /// Mass, kg.
    pub mass: f32,
    /// Radius of the body's capsule or sphere, metres.
    pub radius: f32,
    /// Ends of the capsule's axis (equal for a sphere), world, metres.
    pub segment: [Vec3; 2],
}

/// A rigid transform (rotation, then translation).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Iso {
    r: Quat,
    t: Vec3,
}

impl Iso {
    const IDENTITY: Iso = Iso {
        r: Quat::IDENTITY,
        t: Vec3::ZERO,
    };

    fn mul(&self, o: &Iso) -> Iso {
        Iso {
            r: self.r * o.r,
            t: self.t + self.r.rotate(o.t),
        }
    }

    fn inverse(&self) -> Iso {
        let r = self.r.conjugate();
        Iso {
            r,
            t: -r.rotate(self.t),
        }
    }

    fn apply(&self, p: Vec3) -> Vec3 {
        self.t + self.r.rotate(p)
    }

    fn from_local(t: &Transform) -> Iso {
        Iso {
            r: t.rotation,
            t: t.translation,
        }
    }
}

fn to_rvec(v: Vec3) -> rm::Vector {
    rm::Vector::new(v.x, v.y, v.z)
}

fn to_rrot(q: Quat) -> rm::Rotation {
    rm::Rotation::from_xyzw(q.x, q.y, q.z, q.w)
}

fn to_pose(i: &Iso) -> rm::Pose {
    rm::Pose::from_parts(to_rvec(i.t), to_rrot(i.r))
}

fn from_rvec(v: rm::Vector) -> Vec3 {
    Vec3::new(v.x, v.y, v.z)
}

fn from_pose(p: &rm::Pose) -> Iso {
    let q = p.rotation;
    Iso {
        r: Quat::new(q.x, q.y, q.z, q.w),
        t: from_rvec(p.translation),
    }
}

/// Ragdoll colliders collide with the ground group only.
const BODY_GROUPS: InteractionGroups =
    InteractionGroups::new(Group::GROUP_1, Group::GROUP_2, InteractionTestMode::And);
const GROUND_GROUPS: InteractionGroups =
    InteractionGroups::new(Group::GROUP_2, Group::GROUP_1, InteractionTestMode::And);

/// One rigid body of the ragdoll.
#[derive(Clone, Debug)]
struct Body {
    joint: usize,
    handle: RigidBodyHandle,
    radius: f32,
    /// Capsule axis ends in the body's frame (equal for a sphere).
    segment: [Vec3; 2],
    /// The joint to the parent body; `None` for a root.
    link: Option<Link>,
    /// Where a kinematic root is driven to (world), set by `drive`.
    root_target: Option<Iso>,
}

/// The physics joint between a body and its parent body.
#[derive(Clone, Copy, Debug)]
struct Link {
    handle: ImpulseJointHandle,
    /// The joint of the parent body.
    parent_joint: usize,
    /// The bind rotation of the body relative to the parent body.
    bind_rel: Quat,
    /// The bone frame in the body's frame (X = twist or hinge axis).
    frame: Quat,
    hinge: Option<(f32, f32)>,
    swing: f32,
    twist: f32,
    /// `kp` at strength 1, N·m/rad.
    stiffness: f32,
    /// Moment of inertia of the body about its joint, kg·m².
    inertia: f32,
}

/// A skeleton as rigid bodies and motorised joints (see the module docs).
pub struct Ragdoll {
    world: PhysicsWorld,
    joint_count: usize,
    soa_count: usize,
    parents: Vec<Option<usize>>,
    /// Per joint: the body it owns or rides on.
    owner: Vec<usize>,
    /// Per joint: whether the body `owner[j]` is its own.
    has_body: Vec<bool>,
    bodies: Vec<Body>,
    placement: Iso,
    max_sub_step: f32,
    max_sub_steps: u32,
    max_torque: f32,
    damping_ratio: f32,
    /// Scratch: model transforms, one per joint.
    models: Vec<Iso>,
    /// Scratch: start and target of each kinematic root over a step.
    root_starts: Vec<Option<(Iso, Iso)>>,
}

impl fmt::Debug for Ragdoll {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ragdoll")
            .field("joint_count", &self.joint_count)
            .field("bodies", &self.bodies.len())
            .finish_non_exhaustive()
    }
}

impl Ragdoll {
    /// Builds the bodies and joints of `skeleton` at its bind pose,
    /// `models_at_bind[j]` being joint `j`'s model-space matrix (e.g.
    /// [`sinew_core::fk::local_to_model`] of the rest pose; scale and shear
    /// are dropped), placed in the world by `desc.placement`.
    ///
    /// # Errors
    /// [`RagdollError::BadLength`] when `models_at_bind` does not hold one
    /// matrix per joint; [`RagdollError::NonFinite`] for a non-finite
    /// matrix or description value; [`RagdollError::InvalidDesc`] /
    /// [`RagdollError::InvalidJointDesc`] for out-of-range values (e.g. a
    /// negative density or radius, a root joint without a body);
    /// [`RagdollError::NoBones`] when every joint sits at its parent's
    /// position.
    pub fn new(
        skeleton: &Skeleton<'_>,
        models_at_bind: &[Mat4],
        desc: &RagdollDesc,
    ) -> Result<Ragdoll, RagdollError> {
        let n = skeleton.joint_count();
        desc.validate(n)?;
        if models_at_bind.len() != n {
            return Err(RagdollError::BadLength {
                buffer: "bind models",
                expected: n,
                actual: models_at_bind.len(),
            });
        }
        let mut bind = Vec::with_capacity(n);
        for m in models_at_bind {
            if !m.is_finite() {
                return Err(RagdollError::NonFinite {
                    what: "bind model matrix",
                });
            }
            let (r, _) = m.rotation_and_scale();
            if !r.is_finite() {
                return Err(RagdollError::NonFinite {
                    what: "bind rotation (zero scale)",
                });
            }
            bind.push(Iso {
                r: r.normalize(),
                t: m.translation(),
            });
        }
        let parents: Vec<Option<usize>> = (0..n).map(|j| skeleton.parent(j)).collect();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (j, p) in parents.iter().enumerate() {
            if let Some(p) = *p {
                children[p].push(j);
            }
        }
        if !(0..n).any(|j| parents[j].is_some_and(|p| (bind[j].t - bind[p].t).length() > 0.0)) {
            return Err(RagdollError::NoBones);
        }

        // The bone of each joint: the vector to its bone child, in the joint's frame.
        let bone: Vec<Vec3> = (0..n)
            .map(|j| {
                let to = |c: usize| bind[c].t - bind[j].t;
                let child = match (children[j].as_slice(), parents[j]) {
                    ([], _) => None,
                    ([c], _) => Some(*c),
                    (cs, None) => cs
                        .iter()
                        .copied()
                        .max_by_key(|&c| (skeleton.subtree_end(c) - c, usize::MAX - c)),
                    (cs, Some(p)) => {
                        let dir = (bind[j].t - bind[p].t).try_normalize();
                        let score = |c: usize| match (dir, to(c).try_normalize()) {
                            (Some(d), Some(v)) => d.dot(v),
                            _ => -2.0,
                        };
                        cs.iter()
                            .copied()
                            .fold(None, |best: Option<usize>, c| match best {
                                Some(b) if score(b) >= score(c) => Some(b),
                                _ => Some(c),
                            })
                    }
                };
                child.map_or(Vec3::ZERO, |c| bind[j].r.conjugate().rotate(to(c)))
            })
            .collect();

        // Which joints get a body, and its shape (radius, capsule ends in the joint's frame).
        let mut shapes: Vec<Option<(f32, [Vec3; 2])>> = vec![None; n];
        for j in 0..n {
            let d = desc.joint(j);
            let len = bone[j].length();
            let auto_radius = (desc.radius_fraction * len).max(desc.min_radius);
            let capsule = |r: f32| {
                if len > 2.0 * r {
                    let dir = bone[j] * (1.0 / len);
                    (r, [dir * r, dir * (len - r)])
                } else {
                    let mid = bone[j] * 0.5;
                    (r, [mid, mid])
                }
            };
            let is_root = parents[j].is_none();
            shapes[j] = match d.shape {
                BodyShape::None if is_root => {
                    return Err(RagdollError::InvalidJointDesc {
                        joint: j,
                        what: "a root joint needs a body",
                    })
                }
                BodyShape::None => None,
                BodyShape::Capsule { radius } => Some(capsule(radius)),
                BodyShape::Sphere { radius } => Some((radius, [Vec3::ZERO; 2])),
                BodyShape::Auto => {
                    if is_root || len >= desc.min_bone_length && len > 0.0 {
                        Some(capsule(auto_radius))
                    } else if children[j].is_empty() && desc.leaf_radius > 0.0 {
                        Some((desc.leaf_radius, [Vec3::ZERO; 2]))
                    } else {
                        None
                    }
                }
            };
        }

        let mut world = PhysicsWorld::new();
        world.gravity = to_rvec(desc.gravity);
        world.integration_parameters.num_solver_iterations = desc.solver_iterations as usize;
        world.integration_parameters.warmstart_joints = true;
        let placement = Iso::from_local(&desc.placement);
        let placement = Iso {
            r: placement.r.normalize(),
            ..placement
        };
        if let Some(g) = &desc.ground {
            let normal = g.normal.try_normalize().unwrap_or(Vec3::Y);
            let ground = world.bodies.insert(RigidBodyBuilder::fixed());
            let collider = ColliderBuilder::new(SharedShape::halfspace(to_rvec(normal)))
                .translation(to_rvec(normal * g.height))
                .friction(desc.friction)
                .collision_groups(GROUND_GROUPS);
            world
                .colliders
                .insert_with_parent(collider, ground, &mut world.bodies);
        }

        let mut owner = vec![0usize; n];
        let mut has_body = vec![false; n];
        let mut bodies: Vec<Body> = Vec::new();
        for j in 0..n {
            let Some((radius, segment)) = shapes[j] else {
                // Parents come first, so the parent's owner is known.
                owner[j] = parents[j].map_or(0, |p| owner[p]);
                continue;
            };
            let kind = if parents[j].is_none() && desc.kinematic_root {
                RigidBodyType::KinematicPositionBased
            } else {
                RigidBodyType::Dynamic
            };
            let rb = RigidBodyBuilder::new(kind)
                .pose(to_pose(&placement.mul(&bind[j])))
                .linear_damping(desc.body_damping)
                .angular_damping(desc.body_damping);
            let handle = world.bodies.insert(rb);
            let collider = if segment[0] == segment[1] {
                ColliderBuilder::ball(radius).translation(to_rvec(segment[0]))
            } else {
                ColliderBuilder::capsule_from_endpoints(
                    to_rvec(segment[0]),
                    to_rvec(segment[1]),
                    radius,
                )
            }
            .density(desc.density)
            .friction(desc.friction)
            .collision_groups(BODY_GROUPS);
            world
                .colliders
                .insert_with_parent(collider, handle, &mut world.bodies);
            let inertia = match world.bodies.get_mut(handle) {
                Some(rb) => {
                    rb.recompute_mass_properties_from_colliders(&world.colliders);
                    let mp = rb.mass_properties().local_mprops;
                    let pi = mp.principal_inertia();
                    pi.x.max(pi.y).max(pi.z) + mp.mass() * mp.local_com.length_squared()
                }
                None => 0.0,
            };
            let index = bodies.len();
            owner[j] = index;
            has_body[j] = true;
            let link = match parents[j] {
                None => None,
                Some(p) => {
                    let parent = owner[p];
                    let pj = bodies[parent].joint;
                    let d = desc.joint(j);
                    let bind_rel = bind[pj].r.conjugate() * bind[j].r;
                    let anchor = bind[pj].inverse().apply(bind[j].t);
                    let (axis, hinge, swing, twist) = match d.limits {
                        JointLimits::Hinge { axis, min, max } => (
                            axis.try_normalize().unwrap_or(Vec3::X),
                            Some((min, max)),
                            0.0,
                            0.0,
                        ),
                        JointLimits::Spherical { swing, twist } => {
                            (twist_axis(&bone, &bind, j, pj), None, swing, twist)
                        }
                        JointLimits::Default => (
                            twist_axis(&bone, &bind, j, pj),
                            None,
                            desc.swing_limit,
                            desc.twist_limit,
                        ),
                    };
                    let frame = Quat::from_rotation_arc(Vec3::X, axis);
                    let mask = if hinge.is_some() {
                        JointAxesMask::LOCKED_REVOLUTE_AXES
                    } else {
                        JointAxesMask::LOCKED_SPHERICAL_AXES
                    };
                    let mut b = GenericJointBuilder::new(mask)
                        .local_frame1(rm::Pose::from_parts(
                            to_rvec(anchor),
                            to_rrot(bind_rel * frame),
                        ))
                        .local_frame2(rm::Pose::from_parts(rm::Vector::ZERO, to_rrot(frame)))
                        .contacts_enabled(false);
                    match hinge {
                        Some((min, max)) => {
                            b = b.limits(JointAxis::AngX, [min, max]);
                        }
                        None => {
                            b = b
                                .limits(JointAxis::AngX, [-twist, twist])
                                .limits(JointAxis::AngY, [-swing, swing])
                                .limits(JointAxis::AngZ, [-swing, swing]);
                        }
                    }
                    for axis in [JointAxis::AngX, JointAxis::AngY, JointAxis::AngZ] {
                        b = b.motor_model(axis, MotorModel::ForceBased);
                    }
                    let parent_handle = bodies[parent].handle;
                    let jh = world
                        .impulse_joints
                        .insert(parent_handle, handle, b.build(), true);
                    Some(Link {
                        handle: jh,
                        parent_joint: pj,
                        bind_rel,
                        frame,
                        hinge,
                        swing,
                        twist,
                        stiffness: d.stiffness.unwrap_or(desc.stiffness),
                        inertia,
                    })
                }
            };
            bodies.push(Body {
                joint: j,
                handle,
                radius,
                segment,
                link,
                root_target: None,
            });
        }

        Ok(Ragdoll {
            world,
            joint_count: n,
            soa_count: skeleton.soa_count(),
            parents,
            owner,
            has_body,
            bodies,
            placement,
            max_sub_step: desc.max_sub_step,
            max_sub_steps: desc.max_sub_steps,
            max_torque: desc.max_torque,
            damping_ratio: desc.damping_ratio,
            models: vec![Iso::IDENTITY; n],
            root_starts: Vec::new(),
        })
    }

    /// Number of rigid bodies (joints with a body of their own).
    #[must_use]
    pub fn body_count(&self) -> usize {
        self.bodies.len()
    }

    /// Number of skeleton joints.
    #[must_use]
    pub fn joint_count(&self) -> usize {
        self.joint_count
    }

    /// The index of joint `j`'s own body, or `None` when the joint rides on
    /// an ancestor's body (or is out of range).
    #[must_use]
    pub fn body_of(&self, j: usize) -> Option<usize> {
        (j < self.joint_count && self.has_body[j]).then(|| self.owner[j])
    }

    /// The state of body `b` (`0..body_count()`), or `None` past the end.
    #[must_use]
    pub fn body(&self, b: usize) -> Option<BodyState> {
        let body = self.bodies.get(b)?;
        let rb = self.world.bodies.get(body.handle)?;
        let pose = from_pose(rb.position());
        Some(BodyState {
            joint: body.joint,
            position: pose.t,
            rotation: pose.r,
            linear_velocity: from_rvec(rb.linvel()),
            angular_velocity: from_rvec(rb.angvel()),
            mass: rb.mass(),
            radius: body.radius,
            segment: [pose.apply(body.segment[0]), pose.apply(body.segment[1])],
        })
    }

    /// Where the skeleton's model space sits in the world.
    #[must_use]
    pub fn placement(&self) -> Transform {
        Transform::from_translation_rotation(self.placement.t, self.placement.r)
    }

    /// Moves the model space in the world without moving the bodies: the
    /// next [`Ragdoll::write_pose`] expresses the bodies relative to the new
    /// placement (e.g. after a fall, move the character to where the
    /// ragdoll's root lies, then blend into a get-up clip).
    ///
    /// # Errors
    /// [`RagdollError::NonFinite`] for a non-finite placement,
    /// [`RagdollError::InvalidParameter`] for a zero rotation.
    pub fn set_placement(&mut self, placement: &Transform) -> Result<(), RagdollError> {
        if !(placement.translation.is_finite() && placement.rotation.is_finite()) {
            return Err(RagdollError::NonFinite { what: "placement" });
        }
        if placement.rotation.length() <= 0.5 {
            return Err(RagdollError::InvalidParameter {
                what: "placement rotation must be a unit quaternion",
            });
        }
        self.placement = Iso {
            r: placement.rotation.normalize(),
            t: placement.translation,
        };
        Ok(())
    }

    /// Makes the root bodies kinematic (they follow the animated root given
    /// to [`Ragdoll::drive`], unaffected by forces) or dynamic (they fall).
    pub fn set_kinematic_root(&mut self, kinematic: bool) {
        let kind = if kinematic {
            RigidBodyType::KinematicPositionBased
        } else {
            RigidBodyType::Dynamic
        };
        for b in self.bodies.iter_mut().filter(|b| b.link.is_none()) {
            if let Some(rb) = self.world.bodies.get_mut(b.handle) {
                rb.set_body_type(kind, true);
            }
            b.root_target = None;
        }
    }

    /// Computes rigid model transforms of `pose` (a local pose) into `self.models`.
    fn animated_models(&mut self, pose: &[SoaTransform]) -> Result<(), RagdollError> {
        if pose.len() != self.soa_count {
            return Err(RagdollError::BadLength {
                buffer: "pose",
                expected: self.soa_count,
                actual: pose.len(),
            });
        }
        for j in 0..self.joint_count {
            let Some(t) = get_joint(pose, j) else {
                return Err(RagdollError::BadLength {
                    buffer: "pose",
                    expected: self.soa_count,
                    actual: pose.len(),
                });
            };
            if !(t.translation.is_finite() && t.rotation.is_finite()) || t.rotation.length() < 0.5 {
                return Err(RagdollError::NonFinite { what: "pose" });
            }
            let local = Iso {
                r: t.rotation.normalize(),
                t: t.translation,
            };
            self.models[j] = match self.parents[j] {
                Some(p) => self.models[p].mul(&local),
                None => local,
            };
        }
        Ok(())
    }

    /// Sets every joint motor's target to the rotation the animated local
    /// `pose` (one block per 4 joints, as the skeleton's poses) gives
    /// between the two bodies it connects, with stiffness `strength · kp`
    /// and damping `2ζ√(strength · kp · I)`; strength 0 switches the motors
    /// off (limp). Targets outside a joint's limits are clamped into them.
    /// Kinematic roots are sent to the pose's root (reached over the next
    /// [`Ragdoll::step`]).
    ///
    /// # Errors
    /// [`RagdollError::BadLength`] for a pose of the wrong block count,
    /// [`RagdollError::NonFinite`] for a non-finite or zero-rotation joint,
    /// [`RagdollError::InvalidParameter`] for a negative or non-finite strength.
    pub fn drive(&mut self, pose: &[SoaTransform], strength: f32) -> Result<(), RagdollError> {
        if !(strength.is_finite() && strength >= 0.0) {
            return Err(RagdollError::InvalidParameter {
                what: "strength must be finite and non-negative",
            });
        }
        self.animated_models(pose)?;
        let axes = [JointAxis::AngX, JointAxis::AngY, JointAxis::AngZ];
        for b in &mut self.bodies {
            let Some(link) = b.link else {
                if self
                    .world
                    .bodies
                    .get(b.handle)
                    .is_some_and(|rb| rb.is_kinematic())
                {
                    b.root_target = Some(self.placement.mul(&self.models[b.joint]));
                }
                continue;
            };
            let Some(joint) = self.world.impulse_joints.get_mut(link.handle, true) else {
                continue;
            };
            let data = &mut joint.data;
            if strength == 0.0 || link.stiffness == 0.0 {
                // Zero gains would make rapier's motor a rigid velocity lock.
                data.motor_axes = JointAxesMask::empty();
                continue;
            }
            let rel = self.models[link.parent_joint].r.conjugate() * self.models[b.joint].r;
            let mut q = link.frame.conjugate() * link.bind_rel.conjugate() * rel * link.frame;
            if q.w < 0.0 {
                q = -q;
            }
            let kp = strength * link.stiffness;
            let kd = 2.0 * self.damping_ratio * (kp * link.inertia).sqrt();
            match link.hinge {
                Some((min, max)) => {
                    let target = (2.0 * q.x.atan2(q.w)).clamp(min, max);
                    data.set_motor(JointAxis::AngX, target, 0.0, kp, kd);
                    data.set_motor_max_force(JointAxis::AngX, self.max_torque);
                }
                None => {
                    let half =
                        |v: f32, lim: f32| (2.0 * v.clamp(-1.0, 1.0).asin()).clamp(-lim, lim);
                    let targets = [
                        half(q.x, link.twist),
                        half(q.y, link.swing),
                        half(q.z, link.swing),
                    ];
                    for (axis, target) in axes.into_iter().zip(targets) {
                        data.set_motor(axis, target, 0.0, kp, kd);
                        data.set_motor_max_force(axis, self.max_torque);
                    }
                }
            }
        }
        Ok(())
    }

    /// Applies an impulse (N·s, world) at a world point to the body joint
    /// `joint` owns or rides on (a hit reaction).
    ///
    /// # Errors
    /// [`RagdollError::JointOutOfRange`] for a joint past the skeleton,
    /// [`RagdollError::NonFinite`] for a non-finite impulse or point.
    pub fn apply_impulse(
        &mut self,
        joint: usize,
        impulse: Vec3,
        point: Vec3,
    ) -> Result<(), RagdollError> {
        if joint >= self.joint_count {
            return Err(RagdollError::JointOutOfRange {
                joint,
                count: self.joint_count,
            });
        }
        if !(impulse.is_finite() && point.is_finite()) {
            return Err(RagdollError::NonFinite { what: "impulse" });
        }
        let handle = self.bodies[self.owner[joint]].handle;
        if let Some(rb) = self.world.bodies.get_mut(handle) {
            rb.apply_impulse_at_point(to_rvec(impulse), to_rvec(point), true);
        }
        Ok(())
    }

    /// Advances the simulation by `dt` seconds in equal sub-steps of at most
    /// [`RagdollDesc::max_sub_step`]; a frame needing more than
    /// [`RagdollDesc::max_sub_steps`] is simulated for `max_sub_step ·
    /// max_sub_steps` only, and the returned [`SubSteps::dropped`] says how
    /// much time was dropped.
    ///
    /// # Errors
    /// [`RagdollError::InvalidParameter`] for a zero, negative or non-finite
    /// `dt` (nothing is simulated); [`RagdollError::Diverged`] when a body's
    /// pose or velocity became non-finite (then [`Ragdoll::reset`]).
    pub fn step(&mut self, dt: f32) -> Result<SubSteps, RagdollError> {
        let steps = SubSteps::split(dt, self.max_sub_step, self.max_sub_steps).map_err(|_| {
            RagdollError::InvalidParameter {
                what: "time step must be finite and positive",
            }
        })?;
        // Kinematic roots move to their target in equal parts over the sub-steps.
        let mut starts = std::mem::take(&mut self.root_starts);
        starts.clear();
        starts.extend(self.bodies.iter().map(|b| {
            let target = b.root_target?;
            let rb = self.world.bodies.get(b.handle)?;
            Some((from_pose(rb.position()), target))
        }));
        self.world.integration_parameters.dt = steps.step;
        for k in 0..steps.count {
            let s = (k + 1) as f32 / steps.count as f32;
            for (b, start) in self.bodies.iter().zip(&starts) {
                let Some((from, to)) = start else { continue };
                if let Some(rb) = self.world.bodies.get_mut(b.handle) {
                    let next = Iso {
                        r: from.r.nlerp(to.r, s),
                        t: from.t.lerp(to.t, s),
                    };
                    rb.set_next_kinematic_position(to_pose(&next));
                }
            }
            self.world.step();
        }
        self.root_starts = starts;
        let finite = self.bodies.iter().all(|b| {
            self.world.bodies.get(b.handle).is_some_and(|rb| {
                let p = rb.position();
                p.translation.is_finite()
                    && p.rotation.is_finite()
                    && rb.linvel().is_finite()
                    && rb.angvel().is_finite()
            })
        });
        if finite {
            Ok(steps)
        } else {
            Err(RagdollError::Diverged)
        }
    }

    /// Puts every body at the animated local `pose` (placed in the world)
    /// with zero velocity: the start of a ragdoll from the current frame,
    /// and the way back from [`RagdollError::Diverged`].
    ///
    /// # Errors
    /// As [`Ragdoll::drive`]'s pose checks.
    pub fn reset(&mut self, pose: &[SoaTransform]) -> Result<(), RagdollError> {
        self.animated_models(pose)?;
        for b in &mut self.bodies {
            if let Some(rb) = self.world.bodies.get_mut(b.handle) {
                rb.set_position(to_pose(&self.placement.mul(&self.models[b.joint])), true);
                rb.set_linvel(rm::Vector::ZERO, true);
                rb.set_angvel(rm::Vector::ZERO, true);
            }
            b.root_target = None;
        }
        Ok(())
    }

    /// Writes the bodies into `pose` as local (parent-relative) joint
    /// transforms blended with what `pose` holds (the animation):
    /// rotations by normalised lerp (shorter arc), translations by lerp,
    /// scale unchanged. Weight 0 leaves a joint's transform bit-identical,
    /// weight 1 writes the bodies' transform exactly. Joints that ride on
    /// another joint's body keep their transform (they move with their
    /// parent). A root's local transform is its body relative to the
    /// placement, so the ragdoll's root moves the character's root.
    /// Padding lanes are not touched.
    ///
    /// # Errors
    /// [`RagdollError::BadLength`] for a pose or per-joint weights of the
    /// wrong length, [`RagdollError::InvalidParameter`] for a weight outside
    /// `0..=1` or NaN, [`RagdollError::NonFinite`] as [`Ragdoll::drive`].
    pub fn write_pose(
        &mut self,
        pose: &mut [SoaTransform],
        blend: Blend<'_>,
    ) -> Result<(), RagdollError> {
        let bad_weight = RagdollError::InvalidParameter {
            what: "blend weights must be in 0..=1",
        };
        match blend {
            Blend::Global(w) => {
                if !(0.0..=1.0).contains(&w) {
                    return Err(bad_weight);
                }
            }
            Blend::PerJoint(ws) => {
                if ws.len() != self.joint_count {
                    return Err(RagdollError::BadLength {
                        buffer: "joint weights",
                        expected: self.joint_count,
                        actual: ws.len(),
                    });
                }
                if !ws.iter().all(|w| (0.0..=1.0).contains(w)) {
                    return Err(bad_weight);
                }
            }
        }
        self.animated_models(pose)?;
        // Model transforms of the physical pose: bodies where they are, the
        // joints riding on them at their animated local transforms.
        let to_model = self.placement.inverse();
        for j in 0..self.joint_count {
            if self.has_body[j] {
                let handle = self.bodies[self.owner[j]].handle;
                if let Some(rb) = self.world.bodies.get(handle) {
                    self.models[j] = to_model.mul(&from_pose(rb.position()));
                }
            } else if let Some(p) = self.parents[j] {
                // self.models[j] holds the animated model; rebuild it on the
                // physical parent from the animated local.
                let local = get_joint(pose, j).map_or(Iso::IDENTITY, |t| Iso {
                    r: t.rotation.normalize(),
                    t: t.translation,
                });
                self.models[j] = self.models[p].mul(&local);
            }
        }
        for j in 0..self.joint_count {
            if !self.has_body[j] {
                continue;
            }
            let w = match blend {
                Blend::Global(w) => w,
                Blend::PerJoint(ws) => ws[j],
            };
            if w == 0.0 {
                continue;
            }
            let phys = match self.parents[j] {
                Some(p) => self.models[p].inverse().mul(&self.models[j]),
                None => self.models[j],
            };
            let block = &mut pose[j / 4];
            let mut t = block.get(j % 4);
            if w == 1.0 {
                t.rotation = phys.r;
                t.translation = phys.t;
            } else {
                t.rotation = t.rotation.nlerp(phys.r, w);
                t.translation = t.translation.lerp(phys.t, w);
            }
            block.set(j % 4, &t);
        }
        Ok(())
    }
}

/// The twist axis of body `j` in its own frame: along its bone, or for a
/// bone-less body along the segment from its parent body's joint `pj`.
fn twist_axis(bone: &[Vec3], bind: &[Iso], j: usize, pj: usize) -> Vec3 {
    bone[j]
        .try_normalize()
        .or_else(|| {
            bind[j]
                .r
                .conjugate()
                .rotate(bind[j].t - bind[pj].t)
                .try_normalize()
        })
        .unwrap_or(Vec3::X)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Humanoid;
    use sinew_core::fk::{local_to_model, FkJob};

    /// The humanoid, its bind-pose model matrices and a walk-clip frame.
    fn humanoid() -> (Humanoid, Vec<Mat4>) {
        let h = Humanoid::default_rate();
        let view = h.skeleton.view();
        let mut models = vec![Mat4::IDENTITY; view.joint_count()];
        local_to_model(&FkJob::new(&view, view.rest_pose()), &mut models).unwrap();
        (h, models)
    }

    fn walk_frame(h: &Humanoid, frame: usize) -> Vec<SoaTransform> {
        let n = h.skeleton.view().soa_count();
        let keys = h.clips[0].keys();
        keys[frame * n..(frame + 1) * n].to_vec()
    }

    fn raised(desc: RagdollDesc, height: f32) -> RagdollDesc {
        RagdollDesc {
            placement: Transform::from_translation_rotation(
                Vec3::new(0.0, height, 0.0),
                Quat::IDENTITY,
            ),
            ..desc
        }
    }

    /// Lowest point of any body, largest linear and angular speed.
    fn extent(r: &Ragdoll) -> (f32, f32, f32) {
        (0..r.body_count()).fold((f32::MAX, 0.0f32, 0.0f32), |(y, v, w), b| {
            let s = r.body(b).unwrap();
            (
                y.min(s.segment[0].y.min(s.segment[1].y) - s.radius),
                v.max(s.linear_velocity.length()),
                w.max(s.angular_velocity.length()),
            )
        })
    }

    /// A powered humanoid hanging from its kinematic pelvis (no ground: the
    /// in-place walk's feet reach below y = 0, where the ground would push
    /// them), started at `pose`.
    fn powered(h: &Humanoid, models: &[Mat4], pose: &[SoaTransform], kp: f32) -> Ragdoll {
        let view = h.skeleton.view();
        let desc = RagdollDesc {
            kinematic_root: true,
            stiffness: kp,
            ground: None,
            ..RagdollDesc::humanoid(&view)
        };
        let mut r = Ragdoll::new(&view, models, &desc).unwrap();
        r.reset(pose).unwrap();
        r
    }

    /// Largest angle, degrees, between the local rotations of `a` and `b`
    /// over the joints with a body, and that joint.
    fn worst_angle(r: &Ragdoll, a: &[SoaTransform], b: &[SoaTransform]) -> (f32, usize) {
        (0..r.joint_count())
            .filter(|&j| r.body_of(j).is_some())
            .map(|j| {
                let qa = get_joint(a, j).unwrap().rotation;
                let qb = get_joint(b, j).unwrap().rotation;
                (qa.angle_between(qb).to_degrees(), j)
            })
            .fold((0.0, 0), |m, e| if e.0 > m.0 { e } else { m })
    }

    const DT: f32 = 1.0 / 60.0;

    #[test]
    fn ragdoll_humanoid_bodies() {
        let (h, models) = humanoid();
        let view = h.skeleton.view();
        let r = Ragdoll::new(&view, &models, &RagdollDesc::humanoid(&view)).unwrap();
        // Trunk 6, arms 2 × 6 (clavicle to hand), legs 2 × 4; fingers,
        // eyes, jaw and end joints ride on their parents.
        assert_eq!(r.body_count(), 26);
        let mass: f32 = (0..r.body_count()).map(|b| r.body(b).unwrap().mass).sum();
        assert!((40.0..80.0).contains(&mass), "{mass} kg");
        let finger = view.find_joint("index_01_l").unwrap();
        assert_eq!(r.body_of(finger), None);
        assert!(r.body_of(view.find_joint("hand_l").unwrap()).is_some());
        // Without the table, the hands' 4 cm bones are too short for a body:
        // they ride on the forearms.
        let r = Ragdoll::new(&view, &models, &RagdollDesc::default()).unwrap();
        assert_eq!(r.body_count(), 24);
        assert_eq!(r.body_of(view.find_joint("hand_l").unwrap()), None);
    }

    #[test]
    fn ragdoll_unpowered_falls_and_rests_on_the_ground() {
        let (h, models) = humanoid();
        let view = h.skeleton.view();
        let desc = raised(RagdollDesc::humanoid(&view), 1.0);
        let mut r = Ragdoll::new(&view, &models, &desc).unwrap();
        let pelvis_start = r.body(0).unwrap().position.y;
        let (start_low, _, _) = extent(&r);
        assert!(start_low > 0.8, "{start_low}");
        // The fall itself is chaotic (the last bit of a starting matrix
        // changes where a limb lands), so the body gets 6 s to fall and
        // then up to 6 s more to come to rest.
        for _ in 0..(6.0 / DT) as usize {
            r.step(DT).unwrap();
        }
        let still = |r: &Ragdoll| {
            let (_, v, w) = extent(r);
            v < 0.01 && w < 0.05
        };
        for _ in 0..(6.0 / DT) as usize {
            if still(&r) {
                break;
            }
            r.step(DT).unwrap();
        }
        let (low, v, w) = extent(&r);
        let pelvis = r.body(0).unwrap().position.y;
        assert!(
            pelvis < pelvis_start - 1.0,
            "fell: {pelvis_start} -> {pelvis}"
        );
        // Every body rests on the ground (a few mm of contact slop), still.
        assert!(low > -0.005, "lowest point {low}");
        assert!(low < 0.01, "lowest point {low} touches the ground");
        assert!(v < 0.01 && w < 0.05, "still: {v} m/s, {w} rad/s");
        let mut out = walk_frame(&h, 0);
        r.write_pose(&mut out, Blend::Global(1.0)).unwrap();
        assert!(out.iter().all(SoaTransform::is_finite));
    }

    #[test]
    fn ragdoll_strong_motors_track_the_walk_pose() {
        let (h, models) = humanoid();
        let view = h.skeleton.view();
        for frame in [0, 8, 20] {
            let pose = walk_frame(&h, frame);
            let mut r = powered(&h, &models, &pose, 3000.0);
            for _ in 0..(2.0 / DT) as usize {
                r.drive(&pose, 1.0).unwrap();
                r.step(DT).unwrap();
            }
            let mut out = pose.clone();
            r.write_pose(&mut out, Blend::Global(1.0)).unwrap();
            let (deg, j) = worst_angle(&r, &pose, &out);
            // Gravity sags the arms a little against kp = 3000 N·m/rad.
            assert!(
                deg < 4.0,
                "frame {frame}: {deg}° at {:?}",
                view.joint_name(j)
            );
        }
    }

    #[test]
    fn ragdoll_limp_motors_let_the_limbs_hang() {
        let (h, models) = humanoid();
        let pose = walk_frame(&h, 8);
        let mut r = powered(&h, &models, &pose, 3000.0);
        for _ in 0..(1.0 / DT) as usize {
            r.drive(&pose, 0.0).unwrap();
            r.step(DT).unwrap();
        }
        let mut out = pose.clone();
        r.write_pose(&mut out, Blend::Global(1.0)).unwrap();
        let (deg, _) = worst_angle(&r, &pose, &out);
        assert!(deg > 10.0, "{deg}°");
    }

    /// Chest (spine_03) distance from where the animation puts it, metres.
    fn chest_error(r: &mut Ragdoll, h: &Humanoid, pose: &[SoaTransform]) -> f32 {
        let view = h.skeleton.view();
        let chest = view.find_joint("spine_03").unwrap();
        let mut m = vec![Mat4::IDENTITY; view.joint_count()];
        local_to_model(&FkJob::new(&view, pose), &mut m).unwrap();
        let target = m[chest].translation() + r.placement().translation;
        let body = r.body(r.body_of(chest).unwrap()).unwrap();
        (body.position - target).length()
    }

    #[test]
    fn ragdoll_hit_on_the_chest_deviates_then_recovers() {
        let (h, models) = humanoid();
        let view = h.skeleton.view();
        let chest = view.find_joint("spine_03").unwrap();
        let pose = walk_frame(&h, 8);
        let mut r = powered(&h, &models, &pose, 1500.0);
        for _ in 0..(0.5 / DT) as usize {
            r.drive(&pose, 1.0).unwrap();
            r.step(DT).unwrap();
        }
        let before = chest_error(&mut r, &h, &pose);
        let at = r.body(r.body_of(chest).unwrap()).unwrap().position;
        r.apply_impulse(chest, Vec3::new(0.0, 0.0, -60.0), at)
            .unwrap();
        let mut peak = 0.0f32;
        let mut after = 0.0;
        for f in 0..(2.0 / DT) as usize {
            r.drive(&pose, 1.0).unwrap();
            r.step(DT).unwrap();
            let e = chest_error(&mut r, &h, &pose);
            peak = peak.max(e);
            if f < 10 {
                continue;
            }
            after = e;
        }
        println!("chest error: {before} m before the hit, peak {peak} m, {after} m 2 s later");
        assert!(before < 0.01, "settled before the hit: {before} m");
        assert!(peak > 0.05, "the hit moves the chest: {peak} m");
        assert!(
            after < 0.2 * peak && after < 0.01,
            "recovers: {peak} -> {after} m"
        );
    }

    #[test]
    fn ragdoll_write_pose_weight_0_is_the_animation_and_1_the_bodies() {
        let (h, models) = humanoid();
        let view = h.skeleton.view();
        let desc = raised(RagdollDesc::humanoid(&view), 0.5);
        let mut r = Ragdoll::new(&view, &models, &desc).unwrap();
        for _ in 0..30 {
            r.step(DT).unwrap();
        }
        let anim = walk_frame(&h, 5);
        let mut out = anim.clone();
        r.write_pose(&mut out, Blend::Global(0.0)).unwrap();
        assert_eq!(
            bytemuck::cast_slice::<_, u8>(&out),
            bytemuck::cast_slice::<_, u8>(&anim)
        );
        let zeros = vec![0.0; view.joint_count()];
        r.write_pose(&mut out, Blend::PerJoint(&zeros)).unwrap();
        assert_eq!(
            bytemuck::cast_slice::<_, u8>(&out),
            bytemuck::cast_slice::<_, u8>(&anim)
        );

        r.write_pose(&mut out, Blend::Global(1.0)).unwrap();
        let mut m = vec![Mat4::IDENTITY; view.joint_count()];
        local_to_model(&FkJob::new(&view, &out), &mut m).unwrap();
        let place = Iso::from_local(&r.placement());
        for b in 0..r.body_count() {
            let s = r.body(b).unwrap();
            let p = place.apply(m[s.joint].translation());
            let q = place.r * m[s.joint].rotation();
            assert!((p - s.position).length() < 1e-5, "joint {}", s.joint);
            assert!(q.angle_between(s.rotation) < 1e-3, "joint {}", s.joint);
        }
        // Joints without a body keep the animation.
        let finger = view.find_joint("index_01_l").unwrap();
        assert_eq!(get_joint(&out, finger), get_joint(&anim, finger));

        // Half way lies between the two, per joint.
        let full = out.clone();
        let mut half = anim.clone();
        r.write_pose(&mut half, Blend::Global(0.5)).unwrap();
        let pelvis = |p: &[SoaTransform]| get_joint(p, 0).unwrap();
        let (a, f, m) = (pelvis(&anim), pelvis(&full), pelvis(&half));
        let d = a.rotation.angle_between(f.rotation);
        assert!(d > 0.01);
        assert!((m.rotation.angle_between(a.rotation) - 0.5 * d).abs() < 0.02 * d + 1e-4);
        assert!((m.translation - (a.translation + f.translation) * 0.5).length() < 1e-5);
    }

    /// Falling and getting up: the ragdoll falls and comes to rest, then the
    /// pose blends back to the animation (a standing frame of the walk) as
    /// the weight eases from 1 to 0 over one second: every frame's joints
    /// turn by a bounded angle (no pop), and the last frame is the
    /// animation bit for bit.
    #[test]
    fn ragdoll_falls_then_blends_back_up_to_the_animation() {
        let (h, models) = humanoid();
        let view = h.skeleton.view();
        let desc = raised(RagdollDesc::humanoid(&view), 1.0);
        let mut r = Ragdoll::new(&view, &models, &desc).unwrap();
        let anim = walk_frame(&h, 0);
        for _ in 0..(3.0 / DT) as usize {
            r.step(DT).unwrap();
        }
        let mut previous = anim.clone();
        r.write_pose(&mut previous, Blend::Global(1.0)).unwrap();
        let lying = get_joint(&previous, 0).unwrap();
        assert!(lying.translation.y < 0.5, "fell: {:?}", lying.translation);
        let frames = (1.0 / DT) as usize;
        let mut worst = 0.0f32;
        for f in 1..=frames {
            r.step(DT).unwrap();
            let u = f as f32 / frames as f32;
            let weight = 1.0 - u * u * (3.0 - 2.0 * u);
            let mut out = anim.clone();
            r.write_pose(&mut out, Blend::Global(weight)).unwrap();
            for j in 0..view.joint_count() {
                let (a, b) = (
                    get_joint(&previous, j).unwrap(),
                    get_joint(&out, j).unwrap(),
                );
                worst = worst.max(a.rotation.angle_between(b.rotation));
            }
            previous = out;
        }
        // A smoothstep over 60 frames turns a joint by at most 1.5 / 60 of
        // its lying-to-standing angle (at most pi) per frame, plus the
        // bodies' own settling.
        assert!(worst < 0.1, "largest turn in one frame: {worst} rad");
        assert_eq!(
            bytemuck::cast_slice::<_, u8>(&previous),
            bytemuck::cast_slice::<_, u8>(&anim)
        );
    }

    /// Falls, is driven, is hit: the final pose's bits.
    fn scripted_run(h: &Humanoid, models: &[Mat4]) -> Vec<u32> {
        let view = h.skeleton.view();
        let desc = raised(RagdollDesc::humanoid(&view), 0.3);
        let mut r = Ragdoll::new(&view, models, &desc).unwrap();
        let mut out = Vec::new();
        for f in 0..60 {
            let pose = walk_frame(h, f % 30);
            r.drive(&pose, if f < 30 { 1.0 } else { 0.2 }).unwrap();
            if f == 20 {
                r.apply_impulse(3, Vec3::new(10.0, 0.0, -20.0), Vec3::new(0.0, 1.5, 0.0))
                    .unwrap();
            }
            r.step(DT).unwrap();
            out = pose.clone();
            r.write_pose(&mut out, Blend::Global(0.7)).unwrap();
        }
        bytemuck::cast_slice::<_, u32>(&out).to_vec()
    }

    #[test]
    fn ragdoll_two_runs_are_bit_identical() {
        let (h, models) = humanoid();
        assert_eq!(scripted_run(&h, &models), scripted_run(&h, &models));
    }

    #[test]
    fn ragdoll_bad_descriptions_are_rejected() {
        let (h, models) = humanoid();
        let view = h.skeleton.view();
        let build = |d: RagdollDesc| Ragdoll::new(&view, &models, &d).map(|_| ());
        let d = RagdollDesc::default;
        let invalid =
            |r: Result<(), RagdollError>| matches!(r, Err(RagdollError::InvalidDesc { .. }));
        let nonfinite =
            |r: Result<(), RagdollError>| matches!(r, Err(RagdollError::NonFinite { .. }));
        assert!(invalid(build(RagdollDesc {
            density: -1.0,
            ..d()
        })));
        assert!(invalid(build(RagdollDesc {
            density: 0.0,
            ..d()
        })));
        assert!(nonfinite(build(RagdollDesc {
            density: f32::NAN,
            ..d()
        })));
        assert!(invalid(build(RagdollDesc {
            min_radius: -0.01,
            ..d()
        })));
        assert!(nonfinite(build(RagdollDesc {
            radius_fraction: f32::NAN,
            ..d()
        })));
        assert!(invalid(build(RagdollDesc {
            leaf_radius: -0.1,
            ..d()
        })));
        assert!(invalid(build(RagdollDesc {
            stiffness: -1.0,
            ..d()
        })));
        assert!(invalid(build(RagdollDesc {
            max_torque: 0.0,
            ..d()
        })));
        assert!(invalid(build(RagdollDesc {
            max_torque: f32::NAN,
            ..d()
        })));
        assert!(invalid(build(RagdollDesc {
            swing_limit: -0.1,
            ..d()
        })));
        assert!(nonfinite(build(RagdollDesc {
            gravity: Vec3::new(0.0, f32::NAN, 0.0),
            ..d()
        })));
        let ground = Some(Ground {
            normal: Vec3::ZERO,
            height: 0.0,
        });
        assert!(invalid(build(RagdollDesc { ground, ..d() })));
        assert!(invalid(build(RagdollDesc {
            max_sub_step: 0.0,
            ..d()
        })));
        assert!(invalid(build(RagdollDesc {
            max_sub_steps: 0,
            ..d()
        })));
        assert!(invalid(build(RagdollDesc {
            solver_iterations: 0,
            ..d()
        })));
        assert_eq!(
            build(RagdollDesc {
                joints: vec![JointDesc::default(); 3],
                ..d()
            }),
            Err(RagdollError::BadLength {
                buffer: "joint descriptions",
                expected: 70,
                actual: 3
            })
        );
        let with = |j: usize, jd: JointDesc| {
            let mut joints = vec![JointDesc::default(); view.joint_count()];
            joints[j] = jd;
            build(RagdollDesc { joints, ..d() })
        };
        let bad_joint = |r: Result<(), RagdollError>, j: usize| matches!(r, Err(RagdollError::InvalidJointDesc { joint, .. }) if joint == j);
        let capsule = |radius| JointDesc {
            shape: BodyShape::Capsule { radius },
            ..JointDesc::default()
        };
        assert!(bad_joint(with(5, capsule(-0.1)), 5));
        assert!(bad_joint(with(5, capsule(f32::NAN)), 5));
        let hinge = |axis, min, max| JointDesc {
            limits: JointLimits::Hinge { axis, min, max },
            ..JointDesc::default()
        };
        assert!(bad_joint(with(61, hinge(Vec3::ZERO, 0.0, 1.0)), 61));
        assert!(bad_joint(with(61, hinge(Vec3::X, 1.0, 0.0)), 61));
        let stiff = JointDesc {
            stiffness: Some(-5.0),
            ..JointDesc::default()
        };
        assert!(bad_joint(with(61, stiff), 61));
        let none = JointDesc {
            shape: BodyShape::None,
            ..JointDesc::default()
        };
        assert!(bad_joint(with(0, none), 0));
        assert!(with(61, none).is_ok());

        assert_eq!(
            Ragdoll::new(&view, &models[1..], &d()).map(|_| ()),
            Err(RagdollError::BadLength {
                buffer: "bind models",
                expected: 70,
                actual: 69
            })
        );
        let mut nan = models.clone();
        nan[7].cols[3][1] = f32::NAN;
        assert!(nonfinite(Ragdoll::new(&view, &nan, &d()).map(|_| ())));
    }

    #[test]
    fn ragdoll_a_skeleton_without_bones_is_rejected() {
        use crate::OwnedSkeleton;
        use sinew_core::JointDef;
        let one = OwnedSkeleton::build(&[JointDef {
            name: "root",
            parent: None,
            rest: Transform::IDENTITY,
        }])
        .unwrap();
        let r = Ragdoll::new(&one.view(), &[Mat4::IDENTITY], &RagdollDesc::default());
        assert_eq!(r.map(|_| ()), Err(RagdollError::NoBones));
        let stacked = OwnedSkeleton::build(&[
            JointDef {
                name: "a",
                parent: None,
                rest: Transform::IDENTITY,
            },
            JointDef {
                name: "b",
                parent: Some(0),
                rest: Transform::IDENTITY,
            },
        ])
        .unwrap();
        let r = Ragdoll::new(
            &stacked.view(),
            &[Mat4::IDENTITY; 2],
            &RagdollDesc::default(),
        );
        assert_eq!(r.map(|_| ()), Err(RagdollError::NoBones));
    }

    #[test]
    fn ragdoll_bad_calls_are_rejected_and_a_hitch_is_clamped() {
        let (h, models) = humanoid();
        let view = h.skeleton.view();
        let mut r = Ragdoll::new(&view, &models, &RagdollDesc::humanoid(&view)).unwrap();
        for dt in [0.0, -0.1, f32::NAN, f32::INFINITY] {
            assert!(
                matches!(r.step(dt), Err(RagdollError::InvalidParameter { .. })),
                "{dt}"
            );
        }
        let s = r.step(10.0).unwrap();
        assert_eq!((s.count, s.step), (8, 1.0 / 120.0));
        assert!(s.clamped() && (s.dropped - (10.0 - 8.0 / 120.0)).abs() < 1e-4);
        assert_eq!(
            r.apply_impulse(70, Vec3::X, Vec3::ZERO),
            Err(RagdollError::JointOutOfRange {
                joint: 70,
                count: 70
            })
        );
        assert_eq!(
            r.apply_impulse(3, Vec3::new(f32::NAN, 0.0, 0.0), Vec3::ZERO),
            Err(RagdollError::NonFinite { what: "impulse" })
        );
        let pose = walk_frame(&h, 0);
        assert!(matches!(
            r.drive(&pose[1..], 1.0),
            Err(RagdollError::BadLength { .. })
        ));
        assert!(matches!(
            r.drive(&pose, -1.0),
            Err(RagdollError::InvalidParameter { .. })
        ));
        assert!(matches!(
            r.drive(&pose, f32::NAN),
            Err(RagdollError::InvalidParameter { .. })
        ));
        let mut nan = pose.clone();
        nan[2].translation.x = wide::f32x4::splat(f32::NAN);
        assert_eq!(
            r.drive(&nan, 1.0),
            Err(RagdollError::NonFinite { what: "pose" })
        );
        assert_eq!(r.reset(&nan), Err(RagdollError::NonFinite { what: "pose" }));
        let mut out = pose.clone();
        for w in [-0.1, 1.1, f32::NAN] {
            assert!(matches!(
                r.write_pose(&mut out, Blend::Global(w)),
                Err(RagdollError::InvalidParameter { .. })
            ));
        }
        assert!(matches!(
            r.write_pose(&mut out, Blend::PerJoint(&[0.5; 3])),
            Err(RagdollError::BadLength {
                buffer: "joint weights",
                ..
            })
        ));
        assert!(matches!(
            r.write_pose(&mut out[1..], Blend::Global(1.0)),
            Err(RagdollError::BadLength { .. })
        ));
        let bad_place =
            Transform::from_translation_rotation(Vec3::ZERO, Quat::new(0.0, 0.0, 0.0, 0.0));
        assert!(r.set_placement(&bad_place).is_err());
        // Nothing above changed the pose.
        assert_eq!(
            bytemuck::cast_slice::<_, u8>(&out),
            bytemuck::cast_slice::<_, u8>(&pose)
        );
    }
}
