//! Inverse kinematics on a caller's pose: two-bone limbs, look-at chains
//! and foot placement with caller-owned spring state.
//!
//! Every call takes a `sinew_ik_pose` (skeleton, local pose, optional root
//! matrix, model matrices up to date with the pose) and writes the
//! corrected local rotations and the model matrices of the subtree it
//! changed, as the core's solvers do. The checks a C caller can act on run
//! here, before the solver, so that each gets its own status: joint
//! indices (OUT_OF_RANGE), joint links (NOT_A_CHAIN), argument domains
//! (INVALID_ARGUMENT), fixed capacities (CAPACITY_EXCEEDED). What the
//! solver then finds in the pose itself is a NaN (INVALID_ARGUMENT), a bone
//! of zero length (ZERO_LENGTH_BONE) or a singular joint frame
//! (SINGULAR_TRANSFORM). The core writes nothing when it fails, so on every
//! error the pose, the matrices and the foot state are untouched.

use core::cell::Cell;
use core::ffi::c_void;

use sinew_core::ik::aim::{look_at, Aim, LookAtJoint};
use sinew_core::ik::foot::{FootLeg, FootPlacement, FootState, Spring};
use sinew_core::ik::two_bone::{TwoBoneGoal, TwoBoneIk, MIN_BONE_LENGTH};
use sinew_core::ik::IkPose;
use sinew_core::{Error, Mat4, Quat, Skeleton, SoaTransform, Vec3};

use super::pose::{poses_mut, sinew_float4x4, sinew_soa_transform};
use super::ptr::{disjoint, out_param, read, slice, slice_mut, write, Span, Status};
use super::skeleton::{sinew_skeleton, view_skeleton};
use super::status::sinew_status;

/// Bones shorter than this (in the data's length unit) make a two-bone
/// limb or a leg unsolvable: `SINEW_STATUS_ZERO_LENGTH_BONE`.
pub const SINEW_IK_MIN_BONE_LENGTH: f32 = 1e-6;

/// Most joints in one `sinew_look_at_solve` chain.
pub const SINEW_MAX_LOOK_AT_JOINTS: usize = 32;

/// Most legs one foot placement solves (`sinew_foot_placement::leg_count`,
/// and the size of the arrays in `sinew_foot_state` and
/// `sinew_foot_report`).
pub const SINEW_MAX_FOOT_LEGS: usize = 4;

/// The pose an IK call works on. The model matrices must be up to date
/// with the local pose, as `sinew_skeleton_local_to_model` wrote them with
/// the same `root`; a solve writes the local rotations it corrects and
/// recomputes the model matrices of the subtree it changed, so the
/// matrices stay up to date for the next solve and for skinning.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sinew_ik_pose {
    /// A loaded skeleton handle.
    pub skeleton: *const sinew_skeleton,
    /// The local pose, `skeleton->soa_count` blocks; read and written.
    pub local: *mut sinew_soa_transform,
    /// Length of `local` in blocks.
    pub local_len: usize,
    /// NULL, or the root matrix the model matrices were computed under.
    pub root: *const sinew_float4x4,
    /// The model matrices, `skeleton->joint_count`; read and written.
    pub models: *mut sinew_float4x4,
    /// Length of `models` in matrices.
    pub models_len: usize,
}

/// A two-bone IK job for `sinew_two_bone_solve`: a start joint (hip,
/// shoulder), its child the mid joint (knee, elbow) and its child the end
/// joint (ankle, wrist), turned so that the end joint reaches `target`.
/// Positions and directions are model space (the space of the matrices).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sinew_two_bone {
    /// Start joint index.
    pub start: usize,
    /// Mid joint index, a child of `start`.
    pub mid: usize,
    /// End joint index, a child of `mid`.
    pub end: usize,
    /// Where the end joint should be, model space.
    pub target: [f32; 3],
    /// Model-space direction the mid joint bends towards (any length);
    /// zero, or parallel to start→target, keeps the bend plane the aim
    /// leaves.
    pub pole: [f32; 3],
    /// The mid joint's hinge axis in its own (local) frame, non-zero:
    /// turning about it by a positive angle opens the joint (the
    /// procedural humanoid's knees: `{-1, 0, 0}`).
    pub mid_axis: [f32; 3],
    /// Share of the correction applied, 0..1 (0 writes nothing).
    pub weight: f32,
    /// Fraction of the limb's length where it starts lagging behind a
    /// target that pulls it straight, 0..1; 1 turns softening off.
    pub soften: f32,
    /// A turn of the whole limb about start→target, radians.
    pub twist: f32,
}

/// What `sinew_two_bone_solve` did.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct sinew_two_bone_report {
    /// 1 when the weight is 1 and the end joint lands on the target
    /// (within 1e-5 of the limb's length); 0 otherwise (out of reach,
    /// softened, or a partial weight).
    pub reached: u32,
    /// The correction multiplied into the start joint's local rotation
    /// (`local' = local * correction`), quaternion `(x, y, z, w)`.
    pub start_correction: [f32; 4],
    /// The correction multiplied into the mid joint's local rotation.
    pub mid_correction: [f32; 4],
}

/// One joint of a look-at chain.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sinew_look_at_joint {
    /// Joint index.
    pub joint: usize,
    /// Share, 0..1, of the turn still missing when this joint's turn comes
    /// (its ancestors in the chain turn first).
    pub weight: f32,
    /// Largest angle this joint turns, radians, `>= 0`; `INFINITY` (or
    /// anything from pi up) is no limit.
    pub max_angle: f32,
}

/// What a look-at chain aims, and how. `forward`, `up` and `offset` are in
/// the frame of the chain's last joint; `target` and `pole` are model
/// space.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sinew_aim {
    /// The point to look at, model space.
    pub target: [f32; 3],
    /// The axis that should point at the target (non-zero; normalised).
    pub forward: [f32; 3],
    /// The axis kept towards `pole` (zero: no pole alignment).
    pub up: [f32; 3],
    /// The point that looks (e.g. the eyes above the head joint); zero is
    /// the joint's origin.
    pub offset: [f32; 3],
    /// The direction `up` leans towards, model space (zero: no pole
    /// alignment); `{0, 1, 0}` keeps the head upright.
    pub pole: [f32; 3],
    /// A further turn about the aim axis, radians.
    pub twist: f32,
    /// Share of the whole correction, 0..1, multiplied into every joint's.
    pub weight: f32,
}

/// What `sinew_look_at_solve` did.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct sinew_look_at_report {
    /// 1 when every joint could aim; 0 when a joint could not (a target
    /// inside the sphere through the offset point, or on the joint) and
    /// kept its rotation.
    pub reached: u32,
    /// How many joints were held to their `max_angle`.
    pub clamped: u32,
}

/// One leg for foot placement: hip → knee → ankle, each the parent of the
/// next.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sinew_foot_leg {
    /// Hip (thigh) joint; the pelvis must be one of its ancestors.
    pub hip: usize,
    /// Knee joint, a child of `hip`.
    pub knee: usize,
    /// Ankle (foot) joint, a child of `knee`.
    pub ankle: usize,
    /// The knee's hinge axis in its local frame (non-zero), used when the
    /// leg is straight (see `sinew_two_bone::mid_axis`).
    pub knee_axis: [f32; 3],
}

/// Foot placement settings of a character (+Y up): the ankles are put
/// on the ground under them, the pelvis lowered (or raised) so that the
/// lowest leg reaches, each foot turned to its ground normal.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sinew_foot_placement {
    /// The joint moved up and down (pelvis / hips).
    pub pelvis: usize,
    /// `leg_count` legs.
    pub legs: *const sinew_foot_leg,
    /// 1 to `SINEW_MAX_FOOT_LEGS`.
    pub leg_count: usize,
    /// Height of the ankle above the ground when the foot is flat, `>= 0`.
    pub foot_height: f32,
    /// Largest tilt of a foot towards the ground normal, radians in 0..pi.
    pub max_tilt: f32,
    /// Largest vertical pelvis offset, `>= 0`.
    pub max_pelvis_offset: f32,
    /// Half-life of the smoothing springs, seconds, `>= 0` (0: none).
    pub half_life: f32,
    /// Soften ratio of the leg solves, 0..1 (see `sinew_two_bone::soften`).
    pub soften: f32,
}

/// A spring-damped float: the state of `sinew_spring_advance` and
/// `sinew_spring_advance_batch`, and of each spring of `sinew_foot_state`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct sinew_spring {
    /// Current value.
    pub value: f32,
    /// Current velocity, value units per second.
    pub velocity: f32,
}

/// What foot placement keeps between frames, one per character, owned by
/// the caller: zero it before the first frame (the first solve then snaps
/// to its targets) and pass the same one every frame. Legs use the first
/// `leg_count` entries; the others are left alone.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct sinew_foot_state {
    /// Pelvis vertical offset.
    pub pelvis: sinew_spring,
    /// Each foot's vertical offset from its animated height.
    pub feet: [sinew_spring; SINEW_MAX_FOOT_LEGS],
    /// Each foot's ground normal, per component.
    pub normals: [[sinew_spring; 3]; SINEW_MAX_FOOT_LEGS],
    /// 0 before the first solve, 1 after (other values are rejected).
    pub primed: u32,
}

/// The ground under a point: what a `sinew_ground_fn` writes, or one entry
/// per leg of `sinew_foot_placement_solve_probed`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct sinew_ground_hit {
    /// 1 when there is ground, 0 when there is none (the leg keeps its
    /// animated pose relative to the pelvis); other values are rejected.
    pub hit: u32,
    /// Ground height `y` (finite when `hit` is 1).
    pub height: f32,
    /// Ground normal, model space, pointing up, any non-zero length
    /// (when `hit` is 1).
    pub normal: [f32; 3],
}

/// What a foot placement did.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct sinew_foot_report {
    /// The smoothed vertical offset applied to the pelvis.
    pub pelvis_offset: f32,
    /// Per leg: 1 when it found ground and was solved.
    pub grounded: [u32; SINEW_MAX_FOOT_LEGS],
    /// Per leg: 1 when its ankle reached its target.
    pub reached: [u32; SINEW_MAX_FOOT_LEGS],
}

/// The ground, asked by `sinew_foot_placement_solve` once per leg, in leg
/// order, before anything is written: the ground under model-space
/// `(x, z)` (the leg's animated ankle). `hit` arrives as "no ground"
/// (`hit` 0, height 0, normal +Y); write it and return 0
/// (`SINEW_STATUS_OK`). Any other return value is an error: the call then
/// returns `SINEW_STATUS_CALLBACK_FAILED` with nothing written, and asks
/// no further leg. `user` is the pointer given to the call. The callback
/// may read, but must not write, the buffers of the call (pose, matrices,
/// settings, legs, state), and must not unwind (C++ exceptions, `longjmp`)
/// through it.
pub type sinew_ground_fn = Option<
    unsafe extern "C" fn(user: *mut c_void, x: f32, z: f32, hit: *mut sinew_ground_hit) -> u32,
>;

const _: () = {
    assert!(SINEW_IK_MIN_BONE_LENGTH == MIN_BONE_LENGTH);
};

fn vec3([x, y, z]: [f32; 3]) -> Vec3 {
    Vec3::new(x, y, z)
}

fn quat(q: Quat) -> [f32; 4] {
    [q.x, q.y, q.z, q.w]
}

/// The buffers of a `sinew_ik_pose`, checked (NULL, alignment, lengths,
/// overlaps) through shared views; the mutable views are made only for the
/// solve, so that a ground callback may read the buffers before it.
pub(crate) struct PoseBuffers<'a> {
    pub(crate) skeleton: Skeleton<'a>,
    pub(crate) root: Option<Mat4>,
    local: (*mut sinew_soa_transform, usize),
    models: (*mut sinew_float4x4, usize),
}

impl<'a> PoseBuffers<'a> {
    /// # Safety
    /// `pose` is NULL or points to a `sinew_ik_pose` whose skeleton is a
    /// loaded handle and whose buffers are valid for their lengths during
    /// the call. `others` are the byte ranges of the call's other buffers.
    pub(crate) unsafe fn new(
        pose: *const sinew_ik_pose,
        others: &[Span],
    ) -> Result<Self, sinew_status> {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let (p, skeleton) = unsafe {
            let p = read(pose)?;
            (p, view_skeleton(p.skeleton)?)
        };
        // SAFETY: `view_skeleton` read the same handle.
        let handle = unsafe { read(p.skeleton)? };
        let container = Span(handle.data as usize, handle.data as usize + handle.size);
        // SAFETY: as above.
        let (local, models) = unsafe {
            (
                slice(p.local.cast_const(), p.local_len)?,
                slice(p.models.cast_const(), p.models_len)?,
            )
        };
        if local.len() != skeleton.soa_count() || models.len() != skeleton.joint_count() {
            return Err(sinew_status::BadLength);
        }
        let (l, m) = (Span::of(local), Span::of(models));
        disjoint(m, &[l, container])?;
        disjoint(l, &[container])?;
        for o in others {
            disjoint(*o, &[l, m])?;
        }
        let root = if p.root.is_null() {
            None
        } else {
            // SAFETY: as above (a non-NULL root is one matrix).
            Some(bytemuck::cast(unsafe { read(p.root)? }))
        };
        Ok(PoseBuffers {
            skeleton,
            root,
            local: (p.local, p.local_len),
            models: (p.models, p.models_len),
        })
    }

    /// The model matrices, read-only.
    ///
    /// # Safety
    /// As [`PoseBuffers::new`]; no mutable view of the matrices is alive.
    pub(crate) unsafe fn models(&self) -> Result<&'a [Mat4], sinew_status> {
        // SAFETY: checked by `new` under the same contract.
        let m = unsafe { slice(self.models.0.cast_const(), self.models.1)? };
        Ok(bytemuck::cast_slice(m))
    }

    /// The local pose and model matrices, mutable, for the solve.
    ///
    /// # Safety
    /// As [`PoseBuffers::new`]; called once, with no other view of the
    /// buffers alive (`new` checked that they do not overlap each other,
    /// the skeleton or the call's other buffers).
    pub(crate) unsafe fn mutable(
        &self,
    ) -> Result<(&'a mut [SoaTransform], &'a mut [Mat4]), sinew_status> {
        // SAFETY: checked by `new` under the same contract; this is the only view.
        let (l, m) = unsafe {
            (
                slice_mut(self.local.0, self.local.1)?,
                slice_mut(self.models.0, self.models.1)?,
            )
        };
        Ok((poses_mut(l), bytemuck::cast_slice_mut(m)))
    }
}

pub(crate) fn in_range(s: &Skeleton<'_>, joints: &[usize]) -> Status {
    if joints.iter().all(|&j| j < s.joint_count()) {
        Ok(())
    } else {
        Err(sinew_status::OutOfRange)
    }
}

/// Whether `a` is a strict ancestor of `b` (both in range).
fn is_ancestor(s: &Skeleton<'_>, a: usize, b: usize) -> bool {
    // Parents come before their children: once the walk passes below
    // `a`'s index it cannot meet `a`.
    let mut k = s.parent(b);
    while let Some(p) = k {
        if p <= a {
            return p == a;
        }
        k = s.parent(p);
    }
    false
}

/// A core error of an IK solve whose arguments and joint links were
/// checked before it: NaN and out-of-domain values are INVALID_ARGUMENT.
fn ik_status(e: Error) -> sinew_status {
    match e {
        Error::NonFinite { .. } | Error::InvalidParameter { .. } => sinew_status::InvalidArgument,
        e => sinew_status::from(e),
    }
}

/// [`ik_status`] for two-bone limbs (`(start, mid, end)` each): with the
/// arguments and links checked, an invalid parameter is the pose's
/// geometry, a bone of zero length or else a singular joint frame.
fn limb_status(e: Error, pose: &IkPose<'_, '_>, limbs: &[(usize, usize, usize)]) -> sinew_status {
    if !matches!(e, Error::InvalidParameter { .. }) {
        return ik_status(e);
    }
    let bone = |a: usize, b: usize| match (pose.position(a), pose.position(b)) {
        (Ok(a), Ok(b)) => (b - a).length(),
        _ => 0.0,
    };
    let short = limbs
        .iter()
        .any(|&(s, m, e)| !(bone(s, m) > MIN_BONE_LENGTH && bone(m, e) > MIN_BONE_LENGTH));
    if short {
        sinew_status::ZeroLengthBone
    } else {
        sinew_status::SingularTransform
    }
}

/// The domain checks of a two-bone goal (the core's own, made here so that
/// a later invalid parameter can only be the pose's geometry).
fn check_goal(g: &TwoBoneGoal) -> Status {
    let unit = |x: f32| (0.0..=1.0).contains(&x);
    let ok = g.target.is_finite()
        && g.pole.is_finite()
        && g.twist.is_finite()
        && unit(g.weight)
        && unit(g.soften)
        && g.mid_axis.try_normalize().is_some();
    if ok {
        Ok(())
    } else {
        Err(sinew_status::InvalidArgument)
    }
}

/// Two-bone IK: turns `ik->start` and `ik->mid` so that `ik->end` reaches
/// `ik->target` (by the law of cosines, exactly when it is in reach), the
/// mid joint bending about `ik->mid_axis` towards `ik->pole`; then blends
/// by `ik->weight`. Writes the two corrected local rotations and the model
/// matrices of `ik->start`'s subtree (nothing with weight 0). A target out
/// of reach leaves the limb straight towards it (fully folded when it is
/// closer than the difference of the bone lengths), with `reached` 0.
/// `report` may be NULL.
///
/// Errors: NULL_PARAMETER, MISALIGNED, INVALID_HANDLE, BAD_LENGTH (a pose
/// or matrix count not the skeleton's), OVERLAPPING_BUFFERS, OUT_OF_RANGE
/// (a joint index past the skeleton), NOT_A_CHAIN (`mid` not a child of
/// `start` or `end` not a child of `mid`), INVALID_ARGUMENT (a NaN or
/// infinite target, pole or twist, a weight or soften outside 0..1, a zero
/// mid axis, a NaN in the pose), ZERO_LENGTH_BONE (a bone shorter than
/// `SINEW_IK_MIN_BONE_LENGTH`), SINGULAR_TRANSFORM (a start or mid joint
/// with a zero scale). The pose, the matrices and `report` are untouched
/// on error.
///
/// # Safety
/// `pose` points to a `sinew_ik_pose` whose skeleton is a loaded handle
/// and whose buffers are valid for their lengths; `ik` points to a
/// `sinew_two_bone`; `report` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_two_bone_solve(
    pose: *const sinew_ik_pose,
    ik: *const sinew_two_bone,
    report: *mut sinew_two_bone_report,
) -> sinew_status {
    boundary! {
        if !report.is_null() {
            out_param(report)?;
        }
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let (job, buffers) = unsafe {
            (
                read(ik)?,
                PoseBuffers::new(pose, &[Span::value(report.cast_const())])?,
            )
        };
        let s = &buffers.skeleton;
        in_range(s, &[job.start, job.mid, job.end])?;
        if s.parent(job.mid) != Some(job.start) || s.parent(job.end) != Some(job.mid) {
            return Err(sinew_status::NotAChain);
        }
        let goal = TwoBoneGoal {
            target: vec3(job.target),
            pole: vec3(job.pole),
            mid_axis: vec3(job.mid_axis),
            weight: job.weight,
            soften: job.soften,
            twist: job.twist,
        };
        check_goal(&goal)?;
        // SAFETY: the buffers checked by `PoseBuffers::new`; no other view of them is alive.
        let (local, models) = unsafe { buffers.mutable()? };
        let mut pose = IkPose::new(s, local, models, buffers.root.as_ref())?;
        let limb = (job.start, job.mid, job.end);
        let r = TwoBoneIk::new(job.start, job.mid, job.end, goal)
            .solve(&mut pose)
            .map_err(|e| limb_status(e, &pose, &[limb]))?;
        if !report.is_null() {
            let out = sinew_two_bone_report {
                reached: u32::from(r.reached),
                start_correction: quat(r.start_correction),
                mid_correction: quat(r.mid_correction),
            };
            // SAFETY: `out_param` checked that the pointer is non-NULL and aligned; the contract
            // makes it writable.
            unsafe { write(report, out) };
        }
        Ok(())
    }
}

/// Look-at: turns a chain of joints (e.g. spine, neck, head) so that the
/// last one's `aim->forward` axis, from `aim->offset`, points at
/// `aim->target`, its `aim->up` axis towards `aim->pole`. `chain` lists
/// `chain_len` joints root side first, each an ancestor of the next
/// (joints in between may be skipped). The joints turn in order, each by
/// `aim->weight * weight` of the turn still missing, at most its
/// `max_angle`: a last joint of weight 1 (with `aim->weight` 1, no limit)
/// looks exactly at the target, the earlier weights share the turn out.
/// Writes the turned joints' local rotations and the model matrices of the
/// first turned joint's subtree. `report` may be NULL.
///
/// Errors: NULL_PARAMETER, MISALIGNED, INVALID_HANDLE, BAD_LENGTH (an
/// empty chain; a pose or matrix count not the skeleton's),
/// CAPACITY_EXCEEDED (more than `SINEW_MAX_LOOK_AT_JOINTS` joints),
/// OVERLAPPING_BUFFERS, OUT_OF_RANGE (a joint index past the skeleton),
/// NOT_A_CHAIN (a joint that is not an ancestor of the next),
/// INVALID_ARGUMENT (a NaN or infinite target, axis, offset, pole or
/// twist, a zero forward axis, a weight outside 0..1, a NaN or negative
/// `max_angle`). The pose, the matrices and `report` are untouched on
/// error.
///
/// # Safety
/// `pose` points to a `sinew_ik_pose` whose skeleton is a loaded handle
/// and whose buffers are valid for their lengths; `chain` has `chain_len`
/// entries; `aim` points to a `sinew_aim`; `report` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_look_at_solve(
    pose: *const sinew_ik_pose,
    chain: *const sinew_look_at_joint,
    chain_len: usize,
    aim: *const sinew_aim,
    report: *mut sinew_look_at_report,
) -> sinew_status {
    boundary! {
        if chain_len > SINEW_MAX_LOOK_AT_JOINTS {
            return Err(sinew_status::CapacityExceeded);
        }
        if !report.is_null() {
            out_param(report)?;
        }
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let (c, a) = unsafe { (slice(chain, chain_len)?, read(aim)?) };
        if c.is_empty() {
            return Err(sinew_status::BadLength);
        }
        // SAFETY: as above.
        let buffers =
            unsafe { PoseBuffers::new(pose, &[Span::of(c), Span::value(report.cast_const())])? };
        let s = &buffers.skeleton;
        let mut joints: heapless::Vec<LookAtJoint, SINEW_MAX_LOOK_AT_JOINTS> = heapless::Vec::new();
        for j in c {
            in_range(s, &[j.joint])?;
            let joint = LookAtJoint {
                joint: j.joint,
                weight: j.weight,
                max_angle: j.max_angle,
            };
            joints
                .push(joint)
                .map_err(|_| sinew_status::CapacityExceeded)?;
        }
        if c.windows(2).any(|w| !is_ancestor(s, w[0].joint, w[1].joint)) {
            return Err(sinew_status::NotAChain);
        }
        let aim = Aim {
            target: vec3(a.target),
            forward: vec3(a.forward),
            up: vec3(a.up),
            offset: vec3(a.offset),
            pole: vec3(a.pole),
            twist: a.twist,
            weight: a.weight,
        };
        // SAFETY: the buffers checked by `PoseBuffers::new`; no other view of them is alive.
        let (local, models) = unsafe { buffers.mutable()? };
        let mut pose = IkPose::new(s, local, models, buffers.root.as_ref())?;
        let r = look_at(&mut pose, &joints, &aim).map_err(ik_status)?;
        if !report.is_null() {
            let out = sinew_look_at_report {
                reached: u32::from(r.reached),
                clamped: r.clamped as u32,
            };
            // SAFETY: `out_param` checked that the pointer is non-NULL and aligned; the contract
            // makes it writable.
            unsafe { write(report, out) };
        }
        Ok(())
    }
}

/// Where a foot placement gets the ground from.
#[derive(Clone, Copy)]
enum Probe<'a> {
    /// The caller's callback and its user pointer.
    Callback(
        unsafe extern "C" fn(*mut c_void, f32, f32, *mut sinew_ground_hit) -> u32,
        *mut c_void,
    ),
    /// One hit per leg, probed by the caller.
    Hits(&'a [sinew_ground_hit]),
}

const NO_HIT: sinew_ground_hit = sinew_ground_hit {
    hit: 0,
    height: 0.0,
    normal: [0.0, 1.0, 0.0],
};

fn check_hit(h: &sinew_ground_hit) -> Status {
    let ok = match h.hit {
        0 => true,
        1 => h.height.is_finite() && vec3(h.normal).try_normalize().is_some(),
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(sinew_status::InvalidArgument)
    }
}

/// The core's domain checks of the settings, `floor`, `dt` and the state
/// (made here so that a later invalid parameter can only be the pose's
/// geometry).
fn check_feet(
    f: &sinew_foot_placement,
    legs: &[sinew_foot_leg],
    floor: f32,
    dt: f32,
    state: &sinew_foot_state,
) -> Status {
    let finite_nonneg = |x: f32| x.is_finite() && x >= 0.0;
    let spring = |s: &sinew_spring| s.value.is_finite() && s.velocity.is_finite();
    let n = legs.len();
    let ok = finite_nonneg(dt)
        && finite_nonneg(f.half_life)
        && finite_nonneg(f.foot_height)
        && finite_nonneg(f.max_pelvis_offset)
        && (0.0..=core::f32::consts::PI).contains(&f.max_tilt)
        && (0.0..=1.0).contains(&f.soften)
        && floor.is_finite()
        && legs
            .iter()
            .all(|l| vec3(l.knee_axis).try_normalize().is_some())
        && state.primed <= 1
        && spring(&state.pelvis)
        && state.feet.iter().take(n).all(spring)
        && state.normals.iter().take(n).flatten().all(spring);
    if ok {
        Ok(())
    } else {
        Err(sinew_status::InvalidArgument)
    }
}

/// The body of both foot placement exports.
///
/// # Safety
/// As `sinew_foot_placement_solve`; `probe`'s hits lie at `hits`.
#[allow(clippy::too_many_arguments)]
unsafe fn place_feet(
    pose: *const sinew_ik_pose,
    feet: *const sinew_foot_placement,
    probe: Probe<'_>,
    hits: Span,
    floor: f32,
    dt: f32,
    state: *mut sinew_foot_state,
    report: *mut sinew_foot_report,
) -> Status {
    out_param(state)?;
    if !report.is_null() {
        out_param(report)?;
    }
    // SAFETY: this function's `# Safety` contract makes each pointer valid for its
    // length during the call; the helpers check NULL, alignment and size.
    let f = unsafe { read(feet)? };
    if f.leg_count > SINEW_MAX_FOOT_LEGS {
        return Err(sinew_status::CapacityExceeded);
    }
    // SAFETY: as above.
    let (legs, st) = unsafe { (slice(f.legs, f.leg_count)?, read(state.cast_const())?) };
    let n = legs.len();
    if n == 0 {
        return Err(sinew_status::BadLength);
    }
    if let Probe::Hits(h) = probe {
        if h.len() != n {
            return Err(sinew_status::BadLength);
        }
    }
    let others = [
        Span::of(legs),
        hits,
        Span::value(state.cast_const()),
        Span::value(report.cast_const()),
    ];
    // SAFETY: as above.
    let buffers = unsafe { PoseBuffers::new(pose, &others)? };
    check_feet(&f, legs, floor, dt, &st)?;
    let s = &buffers.skeleton;
    in_range(s, &[f.pelvis])?;
    for l in legs {
        in_range(s, &[l.hip, l.knee, l.ankle])?;
    }
    for l in legs {
        let linked = s.parent(l.knee) == Some(l.hip)
            && s.parent(l.ankle) == Some(l.knee)
            && is_ancestor(s, f.pelvis, l.hip);
        if !linked {
            return Err(sinew_status::NotAChain);
        }
    }
    // The animated ankles, read before the callback runs (it may read the
    // buffers too) and before any mutable view exists.
    let mut ankles = [Vec3::ZERO; SINEW_MAX_FOOT_LEGS];
    {
        // SAFETY: the buffers checked by `PoseBuffers::new`; no mutable view exists yet.
        let models = unsafe { buffers.models()? };
        for (a, l) in ankles.iter_mut().zip(legs) {
            let m = models.get(l.ankle).ok_or(sinew_status::OutOfRange)?;
            *a = m.translation();
            if !a.is_finite() {
                return Err(sinew_status::InvalidArgument);
            }
        }
    }
    let mut ground = [NO_HIT; SINEW_MAX_FOOT_LEGS];
    for (i, (g, a)) in ground.iter_mut().zip(&ankles).take(n).enumerate() {
        *g = match probe {
            Probe::Callback(call, user) => {
                let mut h = NO_HIT;
                // SAFETY: the contract of `sinew_ground_fn`: a callable function that writes at
                // most the one `sinew_ground_hit` it is given (a local here).
                if unsafe { call(user, a.x, a.z, &mut h) } != 0 {
                    return Err(sinew_status::CallbackFailed);
                }
                h
            }
            Probe::Hits(h) => h.get(i).copied().ok_or(sinew_status::BadLength)?,
        };
        check_hit(g)?;
    }
    // SAFETY: the buffers checked by `PoseBuffers::new`; the shared view above is gone.
    let (local, models) = unsafe { buffers.mutable()? };
    let mut pose = IkPose::new(s, local, models, buffers.root.as_ref())?;
    let job = FeetJob {
        f: &f,
        legs,
        ankles: &ankles,
        ground: &ground,
        floor,
        dt,
    };
    let (new_state, r) = match n {
        1 => job.solve::<1>(&mut pose, &st),
        2 => job.solve::<2>(&mut pose, &st),
        3 => job.solve::<3>(&mut pose, &st),
        _ => job.solve::<4>(&mut pose, &st),
    }?;
    // SAFETY: `out_param` checked both pointers (non-NULL, aligned); the contract makes them
    // writable; the pose's views are no longer used.
    unsafe {
        write(state, new_state);
        if !report.is_null() {
            write(report, r);
        }
    }
    Ok(())
}

/// A foot placement with its legs and ground gathered, for `N` legs.
struct FeetJob<'a> {
    f: &'a sinew_foot_placement,
    legs: &'a [sinew_foot_leg],
    ankles: &'a [Vec3; SINEW_MAX_FOOT_LEGS],
    ground: &'a [sinew_ground_hit; SINEW_MAX_FOOT_LEGS],
    floor: f32,
    dt: f32,
}

impl FeetJob<'_> {
    /// Runs the core's `FootPlacement<N>` (`N` = `legs.len()`, at most
    /// `SINEW_MAX_FOOT_LEGS`) and returns the advanced state and the report.
    fn solve<const N: usize>(
        &self,
        pose: &mut IkPose<'_, '_>,
        st: &sinew_foot_state,
    ) -> Result<(sinew_foot_state, sinew_foot_report), sinew_status> {
        let mut legs = [FootLeg {
            hip: 0,
            knee: 0,
            ankle: 0,
            knee_axis: Vec3::ZERO,
        }; N];
        for (d, l) in legs.iter_mut().zip(self.legs) {
            *d = FootLeg {
                hip: l.hip,
                knee: l.knee,
                ankle: l.ankle,
                knee_axis: vec3(l.knee_axis),
            };
        }
        let placement = FootPlacement {
            pelvis: self.f.pelvis,
            legs,
            foot_height: self.f.foot_height,
            max_tilt: self.f.max_tilt,
            max_pelvis_offset: self.f.max_pelvis_offset,
            half_life: self.f.half_life,
            soften: self.f.soften,
        };
        let to_core = |s: &sinew_spring| Spring {
            value: s.value,
            velocity: s.velocity,
        };
        let mut state = FootState::<N>::new();
        state.pelvis = to_core(&st.pelvis);
        for i in 0..N {
            state.feet[i] = to_core(&st.feet[i]);
            state.normals[i] = st.normals[i].each_ref().map(to_core);
        }
        state.primed = st.primed == 1;
        // The core probes each leg once, at its animated ankle's (x, z),
        // before it writes anything: answer with the hit gathered for the
        // leg whose ankle that is. A probe that matches no leg would be a
        // sinew bug; a NaN height makes the core stop before writing.
        let answered = Cell::new([false; SINEW_MAX_FOOT_LEGS]);
        let lost = Cell::new(false);
        let ground = |x: f32, z: f32| -> Option<(f32, Vec3)> {
            let mut done = answered.get();
            for i in 0..N {
                let a = self.ankles[i];
                if !done[i] && a.x.to_bits() == x.to_bits() && a.z.to_bits() == z.to_bits() {
                    done[i] = true;
                    answered.set(done);
                    let h = &self.ground[i];
                    return (h.hit == 1).then(|| (h.height, vec3(h.normal)));
                }
            }
            lost.set(true);
            Some((f32::NAN, Vec3::Y))
        };
        let r = placement
            .solve(pose, &ground, self.floor, self.dt, &mut state)
            .map_err(|e| {
                if lost.get() {
                    sinew_status::Panic
                } else {
                    let limbs = placement.legs.map(|l| (l.hip, l.knee, l.ankle));
                    limb_status(e, pose, &limbs)
                }
            })?;
        let from_core = |s: &Spring| sinew_spring {
            value: s.value,
            velocity: s.velocity,
        };
        let mut out = *st;
        out.pelvis = from_core(&state.pelvis);
        let mut report = sinew_foot_report {
            pelvis_offset: r.pelvis_offset,
            ..sinew_foot_report::default()
        };
        for i in 0..N {
            out.feet[i] = from_core(&state.feet[i]);
            out.normals[i] = state.normals[i].each_ref().map(from_core);
            report.grounded[i] = u32::from(r.grounded[i]);
            report.reached[i] = u32::from(r.reached[i]);
        }
        out.primed = u32::from(state.primed);
        Ok((out, report))
    }
}

/// Foot placement (+Y up) with the ground from a callback: each leg's
/// animated ankle is probed at its model-space `(x, z)` through `ground`
/// (called once per leg, in leg order, with `user`, before anything is
/// written). The animation is taken as authored on a flat floor at height
/// `floor`, so an ankle's target is the ground height plus its animated
/// clearance over `floor`, never less than `foot_height`. The pelvis moves
/// vertically by the lowest leg's offset (within `max_pelvis_offset`), each
/// grounded leg is solved as a two-bone limb in its animated bend plane,
/// each grounded foot turns towards its ground normal (at most
/// `max_tilt`); offsets and normals follow their targets through springs
/// whose state `state` carries from frame to frame (advanced by `dt`
/// seconds). A leg without ground keeps its animated pose relative to the
/// pelvis. Writes the pelvis translation, the leg and ankle rotations, the
/// model matrices of the pelvis's subtree and `state`; `report` may be
/// NULL.
///
/// Errors: NULL_PARAMETER (also: a NULL `ground` or `state`), MISALIGNED,
/// INVALID_HANDLE, BAD_LENGTH (no legs; a pose or matrix count not the
/// skeleton's), CAPACITY_EXCEEDED (more than `SINEW_MAX_FOOT_LEGS` legs),
/// OVERLAPPING_BUFFERS, OUT_OF_RANGE (a joint index past the skeleton),
/// NOT_A_CHAIN (a knee not a child of its hip, an ankle not a child of its
/// knee, a pelvis not an ancestor of every hip), INVALID_ARGUMENT (a
/// setting outside its range, a NaN `floor`, a negative or NaN `dt`, a
/// zero knee axis, a state with a NaN or a `primed` other than 0 or 1, a
/// hit other than 0 or 1 or with a NaN height or a zero normal, a NaN in
/// the pose), ZERO_LENGTH_BONE (a leg bone shorter than
/// `SINEW_IK_MIN_BONE_LENGTH`), SINGULAR_TRANSFORM (a hip or knee with a
/// zero scale, a pelvis whose parent frame cannot be inverted),
/// CALLBACK_FAILED (`ground` returned non-zero). The pose, the matrices,
/// `state` and `report` are untouched on error (the callback may have been
/// called).
///
/// # Safety
/// `pose` points to a `sinew_ik_pose` whose skeleton is a loaded handle
/// and whose buffers are valid for their lengths; `feet` points to a
/// `sinew_foot_placement` whose `legs` has `leg_count` entries; `ground`
/// is NULL or a function with the contract of `sinew_ground_fn`; `state`
/// is readable and writable; `report` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_foot_placement_solve(
    pose: *const sinew_ik_pose,
    feet: *const sinew_foot_placement,
    ground: sinew_ground_fn,
    user: *mut c_void,
    floor: f32,
    dt: f32,
    state: *mut sinew_foot_state,
    report: *mut sinew_foot_report,
) -> sinew_status {
    boundary! {
        let ground = ground.ok_or(sinew_status::NullParameter)?;
        let probe = Probe::Callback(ground, user);
        // SAFETY: this function's `# Safety` contract is the callee's, passed on unchanged.
        unsafe { place_feet(pose, feet, probe, Span(0, 0), floor, dt, state, report) }
    }
}

/// `sinew_foot_placement_solve` with the ground probed by the caller (for
/// engines that batch their ray casts): `ground` holds one hit per leg
/// (`ground_len == feet->leg_count`), the ground under that leg's animated
/// ankle, i.e. at `(x, z)` of the translation of
/// `models[legs[i].ankle]` (column 3) as the call receives the matrices.
///
/// Errors: as `sinew_foot_placement_solve` without CALLBACK_FAILED, plus
/// BAD_LENGTH when `ground_len` is not the leg count.
///
/// # Safety
/// As `sinew_foot_placement_solve`; `ground` has `ground_len` entries.
#[no_mangle]
pub unsafe extern "C" fn sinew_foot_placement_solve_probed(
    pose: *const sinew_ik_pose,
    feet: *const sinew_foot_placement,
    ground: *const sinew_ground_hit,
    ground_len: usize,
    floor: f32,
    dt: f32,
    state: *mut sinew_foot_state,
    report: *mut sinew_foot_report,
) -> sinew_status {
    boundary! {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let hits = unsafe { slice(ground, ground_len)? };
        // SAFETY: this function's `# Safety` contract is the callee's, passed on unchanged.
        unsafe { place_feet(pose, feet, Probe::Hits(hits), Span::of(hits), floor, dt, state, report) }
    }
}
