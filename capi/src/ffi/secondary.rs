//! Secondary motion: springs (float, vector, rotation, batches), PD joint
//! controllers and spring-bone chains, over caller-owned state.
//!
//! The core reports a NaN or infinite input as a non-finite value; here,
//! as in the IK calls, that is the caller's argument: INVALID_ARGUMENT.

use core::mem::{align_of, offset_of, size_of};

use sinew_core::ik::IkPose;
use sinew_core::secondary::chain::{self, ChainJob, ChainSettings, ChainState, SpringChain};
use sinew_core::secondary::collider::Collider;
use sinew_core::secondary::pd::{self, PdJob, PdJoint, PdState};
use sinew_core::secondary::spring::{advance_scalar, QuatSpring, Spring, SpringParams, Vec3Spring};
use sinew_core::secondary::SubSteps;
use sinew_core::{Error, Mat4, Quat, Skeleton, Vec3};

use super::ik::sinew_spring;
use super::ik::{in_range, sinew_ik_pose, PoseBuffers};
use super::pose::{poses, poses_mut, sinew_float4x4, sinew_soa_transform};
use super::ptr::{disjoint, out_param, read, slice, slice_mut, write, Span};
use super::skeleton::{sinew_skeleton, view_skeleton};
use super::status::sinew_status;

/// Largest angular frequency a `sinew_spring_params` accepts, rad/s.
pub const SINEW_SPRING_MAX_ANGULAR_FREQUENCY: f32 = 1e6;

/// Largest damping ratio a `sinew_spring_params` accepts.
pub const SINEW_SPRING_MAX_DAMPING_RATIO: f32 = 1e4;

/// Largest `kp / I` (1/s²) and `kd / I` (1/s) of a `sinew_pd_joint`.
pub const SINEW_PD_MAX_GAIN_PER_INERTIA: f32 = 1e12;

const _: () = {
    use sinew_core::secondary::{pd::MAX_GAIN_PER_INERTIA, spring};
    assert!(SINEW_SPRING_MAX_ANGULAR_FREQUENCY == spring::MAX_ANGULAR_FREQUENCY);
    assert!(SINEW_SPRING_MAX_DAMPING_RATIO == spring::MAX_DAMPING_RATIO);
    assert!(SINEW_PD_MAX_GAIN_PER_INERTIA == MAX_GAIN_PER_INERTIA);
};

/// Spring parameters: a spring pulls its value `x` towards a target `g`
/// with `x'' = −ω² (x − g) − 2ζω (x' − g')`. Fill it with
/// `sinew_spring_params_half_life` or `sinew_spring_params_frequency`;
/// every call checks it again (INVALID_ARGUMENT when it is out of range).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct sinew_spring_params {
    /// Angular frequency ω, rad/s, in `0..=SINEW_SPRING_MAX_ANGULAR_FREQUENCY`;
    /// `INFINITY` (with `damping_ratio` 1) snaps to the target.
    pub angular_frequency: f32,
    /// Damping ratio ζ, in `0..=SINEW_SPRING_MAX_DAMPING_RATIO` (`< 1`
    /// oscillates, 1 is critically damped, `> 1` creeps).
    pub damping_ratio: f32,
}

/// A spring-damped 3-vector (each component a spring with the same
/// parameters).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct sinew_vec3_spring {
    /// Current value.
    pub value: [f32; 3],
    /// Current velocity, units per second.
    pub velocity: [f32; 3],
}

/// A spring-damped rotation. The spring acts on the rotation vector
/// `log(value · target⁻¹)` along the short arc; `velocity` is its rate of
/// change, rad/s, in the frame the rotations are expressed in.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct sinew_quat_spring {
    /// Current rotation, quaternion `(x, y, z, w)` (non-zero; written at
    /// unit length).
    pub value: [f32; 4],
    /// Current angular velocity, rad/s.
    pub velocity: [f32; 3],
}

/// One joint's PD controller settings (the torque is
/// `kp · error − kd · angular velocity`, its magnitude at most
/// `torque_limit`; the inertia is `mass · length² / 3`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct sinew_pd_joint {
    /// Stiffness, torque per radian of error, finite and `>= 0`.
    pub kp: f32,
    /// Damping, torque per rad/s, finite and `>= 0`.
    pub kd: f32,
    /// Bone mass, finite and `> 0`.
    pub mass: f32,
    /// Bone length, finite and `> 0`.
    pub length: f32,
    /// Largest torque magnitude, `>= 0`; `INFINITY` for none.
    pub torque_limit: f32,
    /// Output blend in `0..=1`: 0 the animation, 1 the simulation.
    pub weight: f32,
}

/// One joint's simulated state, carried from frame to frame (fill it with
/// `sinew_pd_reset`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct sinew_pd_state {
    /// Simulated local rotation, quaternion `(x, y, z, w)`.
    pub rotation: [f32; 4],
    /// Angular velocity in the parent's frame, rad/s.
    pub angular_velocity: [f32; 3],
}

/// How a frame's `dt` was cut into sub-steps.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct sinew_substeps {
    /// Number of sub-steps, `>= 1`.
    pub count: u32,
    /// Length of each sub-step, seconds.
    pub step: f32,
    /// Seconds of the frame not simulated because it needed more than the
    /// allowed sub-steps (0 when nothing was clamped).
    pub dropped: f32,
}

// The C structs are the core's `#[repr(C)]` types field for field (all
// `f32`), so slices of one are slices of the other.
const _: () = {
    assert!(size_of::<sinew_pd_joint>() == size_of::<PdJoint>());
    assert!(align_of::<sinew_pd_joint>() == align_of::<PdJoint>());
    assert!(offset_of!(sinew_pd_joint, kp) == offset_of!(PdJoint, kp));
    assert!(offset_of!(sinew_pd_joint, kd) == offset_of!(PdJoint, kd));
    assert!(offset_of!(sinew_pd_joint, mass) == offset_of!(PdJoint, mass));
    assert!(offset_of!(sinew_pd_joint, length) == offset_of!(PdJoint, length));
    assert!(offset_of!(sinew_pd_joint, torque_limit) == offset_of!(PdJoint, torque_limit));
    assert!(offset_of!(sinew_pd_joint, weight) == offset_of!(PdJoint, weight));
    assert!(size_of::<sinew_pd_state>() == size_of::<PdState>());
    assert!(align_of::<sinew_pd_state>() == align_of::<PdState>());
    assert!(offset_of!(sinew_pd_state, rotation) == offset_of!(PdState, rotation));
    assert!(offset_of!(sinew_pd_state, angular_velocity) == offset_of!(PdState, angular_velocity));
    assert!(size_of::<Quat>() == size_of::<[f32; 4]>());
    assert!(offset_of!(Quat, x) == 0 && offset_of!(Quat, w) == 12);
    assert!(size_of::<Vec3>() == size_of::<[f32; 3]>());
    assert!(offset_of!(Vec3, x) == 0 && offset_of!(Vec3, z) == 8);
};

fn pd_joints(s: &[sinew_pd_joint]) -> &[PdJoint] {
    // SAFETY: `sinew_pd_joint` and `PdJoint` are both `repr(C)` with the same `f32` fields at the
    // same offsets, size and alignment (asserted above); every bit pattern is a valid `f32`.
    unsafe { core::slice::from_raw_parts(s.as_ptr().cast(), s.len()) }
}

fn pd_states_mut(s: &mut [sinew_pd_state]) -> &mut [PdState] {
    // SAFETY: as `pd_joints`: the same layout (asserted above, `Quat` and `Vec3` being `repr(C)`
    // runs of `f32`), any bits valid both ways; the borrow moves from `s` to the result.
    unsafe { core::slice::from_raw_parts_mut(s.as_mut_ptr().cast(), s.len()) }
}

/// A core error of a secondary-motion call: NaN and out-of-domain values
/// are the caller's arguments.
fn status(e: Error) -> sinew_status {
    match e {
        Error::NonFinite { .. } | Error::InvalidParameter { .. } => sinew_status::InvalidArgument,
        e => sinew_status::from(e),
    }
}

fn spring_params(p: &sinew_spring_params) -> Result<SpringParams, sinew_status> {
    SpringParams::angular(p.angular_frequency, p.damping_ratio).map_err(status)
}

fn to_c(p: SpringParams) -> sinew_spring_params {
    sinew_spring_params {
        angular_frequency: p.angular_frequency(),
        damping_ratio: p.damping_ratio(),
    }
}

fn vec3([x, y, z]: [f32; 3]) -> Vec3 {
    Vec3::new(x, y, z)
}

/// Reads an optional target velocity of `N` floats: NULL is a still target.
///
/// # Safety
/// `p` is NULL or points to `N` readable floats.
unsafe fn velocity<const N: usize>(p: *const f32) -> Result<([f32; N], Span), sinew_status> {
    if p.is_null() {
        return Ok(([0.0; N], Span(0, 0)));
    }
    // SAFETY: this function's `# Safety` contract; `slice` checks alignment.
    let s = unsafe { slice(p, N)? };
    let mut v = [0.0; N];
    v.copy_from_slice(s);
    Ok((v, Span::of(s)))
}

/// Fills `*out` with a critically damped spring (ζ = 1) of half-life
/// `half_life` seconds: ω = 2 ln 2 / `half_life`. Released at rest at
/// distance d from a still target, the distance after t seconds is
/// `d (1 + ωt) e^{−ωt}` (0.597 d after one half-life); a half-life of 0
/// snaps to the target.
///
/// Errors: NULL_PARAMETER, MISALIGNED, INVALID_ARGUMENT (`half_life`
/// negative, NaN, infinite, or positive but below
/// `2 ln 2 / SINEW_SPRING_MAX_ANGULAR_FREQUENCY`).
///
/// # Safety
/// `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_spring_params_half_life(
    half_life: f32,
    out: *mut sinew_spring_params,
) -> sinew_status {
    boundary! {
        out_param(out)?;
        let p = SpringParams::half_life(half_life).map_err(status)?;
        // SAFETY: `out_param` checked that the pointer is non-NULL and aligned; the contract makes
        // it writable.
        unsafe { write(out, to_c(p)) };
        Ok(())
    }
}

/// Fills `*out` with a spring of natural frequency `frequency` Hz
/// (ω = 2π · `frequency`) and damping ratio `damping_ratio`. A frequency
/// of 0 exerts no force.
///
/// Errors: NULL_PARAMETER, MISALIGNED, INVALID_ARGUMENT (either negative,
/// NaN or infinite; ω above `SINEW_SPRING_MAX_ANGULAR_FREQUENCY`; a
/// damping ratio above `SINEW_SPRING_MAX_DAMPING_RATIO`).
///
/// # Safety
/// `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_spring_params_frequency(
    frequency: f32,
    damping_ratio: f32,
    out: *mut sinew_spring_params,
) -> sinew_status {
    boundary! {
        out_param(out)?;
        let p = SpringParams::frequency(frequency, damping_ratio).map_err(status)?;
        // SAFETY: `out_param` checked that the pointer is non-NULL and aligned; the contract makes
        // it writable.
        unsafe { write(out, to_c(p)) };
        Ok(())
    }
}

/// Advances `*spring` by `dt` seconds towards a target that is at `target`
/// at the start of the step and moves at `*target_velocity` units per
/// second during it (NULL: a still target). The step is the exact
/// solution over `dt`, so one step of 0.1 s and ten of 0.01 s agree up to
/// rounding.
///
/// Errors: NULL_PARAMETER, MISALIGNED, OVERLAPPING_BUFFERS (`spring`
/// overlaps `params` or `target_velocity`), INVALID_ARGUMENT (`params` out
/// of range, `dt` not finite and `> 0`, a NaN or infinite target, target
/// velocity or state). `*spring` is untouched on error.
///
/// # Safety
/// `spring` is readable and writable; `target_velocity` is NULL or one
/// readable float; `params` is readable.
#[no_mangle]
pub unsafe extern "C" fn sinew_spring_advance(
    spring: *mut sinew_spring,
    target: f32,
    target_velocity: *const f32,
    params: *const sinew_spring_params,
    dt: f32,
) -> sinew_status {
    boundary! {
        // SAFETY: this function's `# Safety` contract makes each pointer valid during the call;
        // the helpers check NULL and alignment.
        let (s, p, (v, vs)) = unsafe {
            (read(spring.cast_const())?, read(params)?, velocity::<1>(target_velocity)?)
        };
        disjoint(Span::value(spring.cast_const()), &[Span::value(params), vs])?;
        let mut core = Spring {
            value: s.value,
            velocity: s.velocity,
        };
        core.advance_moving(target, v[0], &spring_params(&p)?, dt)
            .map_err(status)?;
        let out = sinew_spring {
            value: core.value,
            velocity: core.velocity,
        };
        // SAFETY: `read` checked that the pointer is non-NULL and aligned; the contract makes it
        // writable.
        unsafe { write(spring, out) };
        Ok(())
    }
}

/// Advances `*spring` by `dt` seconds towards a target that is at
/// `target` (3 floats) at the start of the step and moves at
/// `target_velocity` (3 floats, units per second; NULL: still) during it.
/// Each component is a `sinew_spring_advance` with the same parameters.
///
/// Errors: NULL_PARAMETER, MISALIGNED, OVERLAPPING_BUFFERS (`spring`
/// overlaps an input), INVALID_ARGUMENT (as `sinew_spring_advance`).
/// `*spring` is untouched on error.
///
/// # Safety
/// `spring` is readable and writable; `target` is 3 readable floats;
/// `target_velocity` is NULL or 3 readable floats; `params` is readable.
#[no_mangle]
pub unsafe extern "C" fn sinew_vec3_spring_advance(
    spring: *mut sinew_vec3_spring,
    target: *const f32,
    target_velocity: *const f32,
    params: *const sinew_spring_params,
    dt: f32,
) -> sinew_status {
    boundary! {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its length
        // during the call; the helpers check NULL and alignment.
        let (s, p, g, (v, vs)) = unsafe {
            (
                read(spring.cast_const())?,
                read(params)?,
                slice(target, 3)?,
                velocity::<3>(target_velocity)?,
            )
        };
        disjoint(
            Span::value(spring.cast_const()),
            &[Span::value(params), Span::of(g), vs],
        )?;
        let mut core = Vec3Spring {
            value: vec3(s.value),
            velocity: vec3(s.velocity),
        };
        let goal = Vec3::new(g[0], g[1], g[2]);
        core.advance_moving(goal, vec3(v), &spring_params(&p)?, dt)
            .map_err(status)?;
        let out = sinew_vec3_spring {
            value: core.value.to_array(),
            velocity: core.velocity.to_array(),
        };
        // SAFETY: `read` checked that the pointer is non-NULL and aligned; the contract makes it
        // writable.
        unsafe { write(spring, out) };
        Ok(())
    }
}

/// Advances the rotation spring `*spring` by `dt` seconds towards a
/// target rotation that is `target` (quaternion `(x, y, z, w)`, any
/// non-zero length) at the start of the step and turns at the angular
/// velocity `target_velocity` (3 floats, rad/s; NULL: still) during it.
/// The rotation error follows the spring along the short arc (`q` and
/// `−q` are the same rotation); the new rotation is written at unit
/// length.
///
/// Errors: NULL_PARAMETER, MISALIGNED, OVERLAPPING_BUFFERS (`spring`
/// overlaps an input), INVALID_ARGUMENT (as `sinew_spring_advance`, and a
/// zero quaternion as `target` or `spring->value`). `*spring` is untouched
/// on error.
///
/// # Safety
/// `spring` is readable and writable; `target` is 4 readable floats;
/// `target_velocity` is NULL or 3 readable floats; `params` is readable.
#[no_mangle]
pub unsafe extern "C" fn sinew_quat_spring_advance(
    spring: *mut sinew_quat_spring,
    target: *const f32,
    target_velocity: *const f32,
    params: *const sinew_spring_params,
    dt: f32,
) -> sinew_status {
    boundary! {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its length
        // during the call; the helpers check NULL and alignment.
        let (s, p, g, (v, vs)) = unsafe {
            (
                read(spring.cast_const())?,
                read(params)?,
                slice(target, 4)?,
                velocity::<3>(target_velocity)?,
            )
        };
        disjoint(
            Span::value(spring.cast_const()),
            &[Span::value(params), Span::of(g), vs],
        )?;
        let [x, y, z, w] = s.value;
        let mut core = QuatSpring {
            value: Quat::new(x, y, z, w),
            velocity: vec3(s.velocity),
        };
        let goal = Quat::new(g[0], g[1], g[2], g[3]);
        let q = core
            .advance_moving(goal, vec3(v), &spring_params(&p)?, dt)
            .map_err(status)?;
        let out = sinew_quat_spring {
            value: q.to_array(),
            velocity: core.velocity.to_array(),
        };
        // SAFETY: `read` checked that the pointer is non-NULL and aligned; the contract makes it
        // writable.
        unsafe { write(spring, out) };
        Ok(())
    }
}

/// Springs advanced per batch through the core on the stack: the core's
/// `Spring` is not `repr(C)`, so a C array cannot be viewed as a slice of
/// it.
const BATCH: usize = 64;

/// Advances `springs_len` springs with the same parameters by `dt`
/// seconds towards still targets: `springs[i]` follows `targets[i]`.
/// Each spring ends exactly where `sinew_spring_advance` would put it.
///
/// Errors: NULL_PARAMETER, MISALIGNED, BAD_LENGTH (`targets_len` is not
/// `springs_len`), OVERLAPPING_BUFFERS (`springs` overlaps `targets` or
/// `params`), INVALID_ARGUMENT (`params` out of range, `dt` not finite and
/// `> 0`, a NaN or infinite target or state). `springs` is untouched on
/// error.
///
/// # Safety
/// `springs` has `springs_len` readable and writable entries; `targets`
/// has `targets_len` readable floats; `params` is readable.
#[no_mangle]
pub unsafe extern "C" fn sinew_spring_advance_batch(
    springs: *mut sinew_spring,
    springs_len: usize,
    targets: *const f32,
    targets_len: usize,
    params: *const sinew_spring_params,
    dt: f32,
) -> sinew_status {
    boundary! {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its length
        // during the call; the helpers check NULL, alignment and size.
        let (p, g, s) = unsafe {
            (
                read(params)?,
                slice(targets, targets_len)?,
                slice_mut(springs, springs_len)?,
            )
        };
        disjoint(Span::of(s), &[Span::value(params), Span::of(g)])?;
        if s.len() != g.len() {
            return Err(sinew_status::BadLength);
        }
        let step = spring_params(&p)?.step(dt).map_err(status)?;
        // The core checks each batch; checking everything first keeps the
        // springs untouched when a later batch holds a NaN.
        let finite = g.iter().all(|t| t.is_finite())
            && s.iter().all(|s| s.value.is_finite() && s.velocity.is_finite());
        if !finite {
            return Err(sinew_status::InvalidArgument);
        }
        let mut buf = [Spring::default(); BATCH];
        for (s, g) in s.chunks_mut(BATCH).zip(g.chunks(BATCH)) {
            let buf = &mut buf[..s.len()];
            for (b, s) in buf.iter_mut().zip(s.iter()) {
                *b = Spring {
                    value: s.value,
                    velocity: s.velocity,
                };
            }
            advance_scalar(buf, g, &step).map_err(status)?;
            for (s, b) in s.iter_mut().zip(buf.iter()) {
                *s = sinew_spring {
                    value: b.value,
                    velocity: b.velocity,
                };
            }
        }
        Ok(())
    }
}

/// Fills `*out` with a fully simulated joint (weight 1, no torque limit)
/// of stiffness `kp` and critical damping `kd = 2 √(kp I)`, `I = mass ·
/// length² / 3`: released from an offset it settles without overshoot.
///
/// Errors: NULL_PARAMETER, MISALIGNED, INVALID_ARGUMENT (`kp` negative or
/// not finite, `mass` or `length` not finite and `> 0`, `kp / I` above
/// `SINEW_PD_MAX_GAIN_PER_INERTIA`).
///
/// # Safety
/// `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_pd_joint_critical(
    kp: f32,
    mass: f32,
    length: f32,
    out: *mut sinew_pd_joint,
) -> sinew_status {
    boundary! {
        out_param(out)?;
        let j = PdJoint::critical(kp, mass, length).map_err(status)?;
        // SAFETY: `out_param` checked that the pointer is non-NULL and aligned; the contract makes
        // it writable.
        unsafe { write(out, pd_joint(j)) };
        Ok(())
    }
}

/// Fills `*out` with a fully simulated joint (weight 1, no torque limit)
/// whose small motions are the critically damped spring of half-life
/// `half_life` seconds (see `sinew_spring_params_half_life`): ω₀ = 2 ln 2 /
/// `half_life`, `kp = I ω₀²`, `kd = 2 I ω₀`, `I = mass · length² / 3`.
///
/// Errors: NULL_PARAMETER, MISALIGNED, INVALID_ARGUMENT (`half_life` not
/// finite and `> 0`, `mass` or `length` not finite and `> 0`, gains per
/// inertia above `SINEW_PD_MAX_GAIN_PER_INERTIA`).
///
/// # Safety
/// `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_pd_joint_from_half_life(
    half_life: f32,
    mass: f32,
    length: f32,
    out: *mut sinew_pd_joint,
) -> sinew_status {
    boundary! {
        out_param(out)?;
        let j = PdJoint::from_half_life(half_life, mass, length).map_err(status)?;
        // SAFETY: `out_param` checked that the pointer is non-NULL and aligned; the contract makes
        // it writable.
        unsafe { write(out, pd_joint(j)) };
        Ok(())
    }
}

fn pd_joint(j: PdJoint) -> sinew_pd_joint {
    sinew_pd_joint {
        kp: j.kp,
        kd: j.kd,
        mass: j.mass,
        length: j.length,
        torque_limit: j.torque_limit,
        weight: j.weight,
    }
}

/// Sets each of the `state_len` joints' state to rest at its rotation in
/// `pose` (the first frame, or after a teleport).
///
/// Errors: NULL_PARAMETER, MISALIGNED, BAD_LENGTH (`pose_len` is not
/// `sinew_soa_count(state_len)`), OVERLAPPING_BUFFERS. `state` is
/// untouched on error.
///
/// # Safety
/// `pose` has `pose_len` readable blocks; `state` has `state_len` writable
/// entries.
#[no_mangle]
pub unsafe extern "C" fn sinew_pd_reset(
    pose: *const sinew_soa_transform,
    pose_len: usize,
    state: *mut sinew_pd_state,
    state_len: usize,
) -> sinew_status {
    boundary! {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its length
        // during the call; the helpers check NULL, alignment and size.
        let (p, s) = unsafe { (slice(pose, pose_len)?, slice_mut(state, state_len)?) };
        disjoint(Span::of(s), &[Span::of(p)])?;
        pd::reset(poses(p), pd_states_mut(s)).map_err(status)?;
        Ok(())
    }
}

/// Writes bone lengths from the skeleton's rest pose for
/// `sinew_pd_joint::length`: `out[j]` is the longest rest offset of `j`'s
/// children from `j`, or for a joint without such a child its own rest
/// offset from its parent; a lone root gets 0 (give it a length before
/// using it). Scale is ignored.
///
/// Errors: NULL_PARAMETER, MISALIGNED, INVALID_HANDLE, BAD_LENGTH
/// (`out_len` is not the joint count), OVERLAPPING_BUFFERS (`out` overlaps
/// the skeleton's bytes). `out` is untouched on error.
///
/// # Safety
/// `skeleton` points to a loaded handle; `out` has `out_len` writable
/// floats.
#[no_mangle]
pub unsafe extern "C" fn sinew_pd_rest_bone_lengths(
    skeleton: *const sinew_skeleton,
    out: *mut f32,
    out_len: usize,
) -> sinew_status {
    boundary! {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its length
        // during the call; the helpers check NULL, alignment and size.
        let (s, h, o) = unsafe {
            (view_skeleton(skeleton)?, read(skeleton)?, slice_mut(out, out_len)?)
        };
        disjoint(
            Span::of(o),
            &[Span(h.data as usize, h.data as usize + h.size), Span::value(skeleton)],
        )?;
        pd::rest_bone_lengths(&s, o).map_err(status)?;
        Ok(())
    }
}

/// One frame of PD control: advances each joint's `state` by `dt` seconds
/// towards its rotation in `animated` and writes `out`, the animated pose
/// with each joint's rotation blended between the animated (weight 0) and
/// the simulated (weight 1) one (translations, scales and padding lanes
/// copied). `joint_count` joints; `animated` and `out` have
/// `sinew_soa_count(joint_count)` blocks. The frame is cut into equal
/// sub-steps of at most `max_step` seconds (shorter where a stiff joint
/// needs it), at most `max_substeps` of them; a longer frame is simulated
/// for `max_substeps` sub-steps only and the time dropped is reported.
/// Each sub-step is semi-implicit Euler: `ω += (τ / I) h`, `q =
/// normalise(exp(ω h) q)`. `report` may be NULL. 1/240 s and 16 are the
/// core's defaults.
///
/// Errors: NULL_PARAMETER, MISALIGNED, BAD_LENGTH (`state_len` not
/// `joint_count`; `animated_len` or `out_len` not
/// `sinew_soa_count(joint_count)`), OVERLAPPING_BUFFERS, INVALID_ARGUMENT
/// (a joint's settings out of range, `dt` or `max_step` not finite and
/// `> 0`, `max_substeps` 0, a NaN or zero rotation in `animated` or
/// `state`, a NaN velocity). `state`, `out` and `report` are untouched on
/// error.
///
/// # Safety
/// `joints` has `joint_count` readable entries; `animated` has
/// `animated_len` readable blocks; `state` has `state_len` readable and
/// writable entries; `out` has `out_len` writable blocks; `report` is NULL
/// or writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_pd_step(
    joints: *const sinew_pd_joint,
    joint_count: usize,
    animated: *const sinew_soa_transform,
    animated_len: usize,
    dt: f32,
    max_step: f32,
    max_substeps: u32,
    state: *mut sinew_pd_state,
    state_len: usize,
    out: *mut sinew_soa_transform,
    out_len: usize,
    report: *mut sinew_substeps,
) -> sinew_status {
    boundary! {
        if !report.is_null() {
            out_param(report)?;
        }
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its length
        // during the call; the helpers check NULL, alignment and size.
        let (j, a, s, o) = unsafe {
            (
                slice(joints, joint_count)?,
                slice(animated, animated_len)?,
                slice_mut(state, state_len)?,
                slice_mut(out, out_len)?,
            )
        };
        let (js, as_, ss, os) = (Span::of(j), Span::of(a), Span::of(s), Span::of(o));
        let rs = Span::value(report.cast_const());
        disjoint(ss, &[js, as_])?;
        disjoint(os, &[js, as_, ss])?;
        disjoint(rs, &[js, as_, ss, os])?;
        // The core takes the smaller of `max_step` and each joint's stable
        // step, which would let a NaN or infinite `max_step` through.
        if !(max_step.is_finite() && max_step > 0.0) {
            return Err(sinew_status::InvalidArgument);
        }
        let job = PdJob {
            joints: pd_joints(j),
            animated: poses(a),
            dt,
            max_step,
            max_substeps,
        };
        let sub = pd::step(&job, pd_states_mut(s), poses_mut(o)).map_err(status)?;
        if !report.is_null() {
            // SAFETY: `out_param` checked that the pointer is non-NULL and aligned; the contract
            // makes it writable.
            unsafe { write(report, substeps(sub)) };
        }
        Ok(())
    }
}

fn substeps(s: SubSteps) -> sinew_substeps {
    sinew_substeps {
        count: s.count,
        step: s.step,
        dropped: s.dropped,
    }
}

/// Most joints in a spring chain (its root and up to 31 particles).
pub const SINEW_MAX_CHAIN: usize = 32;

/// Most colliders one spring chain step takes.
pub const SINEW_MAX_CHAIN_COLLIDERS: usize = 16;

/// Collider kind: a ball (`a` centre, `radius`).
pub const SINEW_COLLIDER_SPHERE: u32 = 0;

/// Collider kind: the points within `radius` of the segment `a`–`b`.
pub const SINEW_COLLIDER_CAPSULE: u32 = 1;

/// Collider kind: the half-space `dot(a, p) <= offset` (`a` the unit
/// normal, pointing out of the solid side).
pub const SINEW_COLLIDER_PLANE: u32 = 2;

const _: () = {
    use sinew_core::secondary::chain;
    assert!(SINEW_MAX_CHAIN == chain::MAX_CHAIN);
    assert!(SINEW_MAX_CHAIN_COLLIDERS == chain::MAX_COLLIDERS);
};

/// A collision shape, world space. A particle of radius `r` collides with
/// a sphere or capsule when its centre is closer than `radius + r` to the
/// centre or segment, with a plane when it is less than `r` above it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct sinew_collider {
    /// `SINEW_COLLIDER_SPHERE`, `SINEW_COLLIDER_CAPSULE` or
    /// `SINEW_COLLIDER_PLANE`.
    pub kind: u32,
    /// Sphere: centre. Capsule: one end of the axis. Plane: unit normal
    /// (length within 1e-3 of 1).
    pub a: [f32; 3],
    /// Capsule: the other end of the axis (unused otherwise).
    pub b: [f32; 3],
    /// Sphere and capsule: radius, `>= 0` (unused for a plane).
    pub radius: f32,
    /// Plane: signed distance of the plane from the origin along `a`
    /// (unused otherwise).
    pub offset: f32,
}

/// How a spring chain moves (`sinew_chain_settings_default` fills the
/// defaults). Lengths are the model's unit, times seconds, angles radians.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct sinew_chain_settings {
    /// Pull towards the animated pose, `0..=1`: the fraction of the way to
    /// its animated position a particle moves per 1/60 s (0 free, 1 rigid).
    pub stiffness: f32,
    /// Damping, `0..=1`: the fraction of its velocity a particle loses per
    /// 1/60 s.
    pub drag: f32,
    /// Gravity, world space, units/s².
    pub gravity: [f32; 3],
    /// Any other acceleration (wind), world space, units/s².
    pub wind: [f32; 3],
    /// Particle radius for collisions, finite and `>= 0`.
    pub radius: f32,
    /// Largest angle between a simulated bone and its animated direction,
    /// `0..=pi` (pi: no limit).
    pub max_angle: f32,
    /// Longest sub-step, seconds, finite and `> 0`.
    pub max_step: f32,
    /// Most sub-steps per frame, `>= 1`; a longer frame is clamped.
    pub max_substeps: u32,
    /// Most constraint passes per sub-step, `>= 1` (one runs without
    /// colliders).
    pub iterations: u32,
    /// Passes stop when no particle moved more than this, finite and `>= 0`.
    pub tolerance: f32,
}

/// A spring chain and what its step needs besides the pose and state.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sinew_spring_chain {
    /// Joint indices, root side first, each the parent of the next: joint
    /// 0 keeps its animated position, the others are particles.
    pub joints: *const usize,
    /// Length of `joints`, 2 to `SINEW_MAX_CHAIN`.
    pub joint_count: usize,
    /// How it moves.
    pub settings: sinew_chain_settings,
    /// NULL (the identity), or the character's placement: world =
    /// `world` · model space; finite and invertible.
    pub world: *const sinew_float4x4,
    /// Shapes in world space, at most `SINEW_MAX_CHAIN_COLLIDERS`.
    pub colliders: *const sinew_collider,
    /// Length of `colliders`.
    pub collider_count: usize,
    /// NULL with length 0 (every bone uses `settings.max_angle`), or one
    /// angle limit per bone (`joint_count - 1`), radians in `0..=pi`.
    pub angle_limits: *const f32,
    /// Length of `angle_limits`.
    pub angle_limits_len: usize,
}

/// What a spring chain step did.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct sinew_chain_report {
    /// How the frame was cut (`steps.dropped > 0` when it was clamped).
    pub steps: sinew_substeps,
    /// The most constraint passes a sub-step ran.
    pub passes: u32,
    /// The deepest a particle was left inside a collider (0 when none
    /// touches).
    pub penetration: f32,
}

fn vec3s(s: &[[f32; 3]]) -> &[Vec3] {
    // SAFETY: `Vec3` is `repr(C)` with three `f32` at the offsets of `[f32; 3]`, the same size and
    // alignment (asserted above); every bit pattern is a valid `f32`.
    unsafe { core::slice::from_raw_parts(s.as_ptr().cast(), s.len()) }
}

fn vec3s_mut(s: &mut [[f32; 3]]) -> &mut [Vec3] {
    // SAFETY: as `vec3s`; the borrow moves from `s` to the result.
    unsafe { core::slice::from_raw_parts_mut(s.as_mut_ptr().cast(), s.len()) }
}

/// Checks a chain's joints against the skeleton the way the IK calls do
/// (each failure its own status), then builds the core's chain over
/// `store`.
fn spring_chain<'c>(
    s: &Skeleton<'_>,
    joints: &[usize],
    store: &'c mut [u16; SINEW_MAX_CHAIN],
) -> Result<SpringChain<'c>, sinew_status> {
    if joints.len() < 2 {
        return Err(sinew_status::BadLength);
    }
    if joints.len() > SINEW_MAX_CHAIN {
        return Err(sinew_status::CapacityExceeded);
    }
    in_range(s, joints)?;
    if joints.windows(2).any(|w| s.parent(w[1]) != Some(w[0])) {
        return Err(sinew_status::NotAChain);
    }
    for (d, &j) in store.iter_mut().zip(joints) {
        // In range, so below `MAX_JOINTS`, which fits a `u16`.
        *d = u16::try_from(j).map_err(|_| sinew_status::OutOfRange)?;
    }
    // With the links checked, the core's one remaining complaint is a bone
    // of zero length in the rest pose.
    SpringChain::new(s, &store[..joints.len()]).map_err(|e| match e {
        Error::InvalidParameter { .. } => sinew_status::ZeroLengthBone,
        e => status(e),
    })
}

/// The placement of a chain: identity for NULL; non-finite is
/// INVALID_ARGUMENT, not invertible SINGULAR_TRANSFORM.
///
/// # Safety
/// `world` is NULL or points to a readable matrix.
unsafe fn world_matrix(world: *const sinew_float4x4) -> Result<Mat4, sinew_status> {
    if world.is_null() {
        return Ok(Mat4::IDENTITY);
    }
    // SAFETY: this function's `# Safety` contract; `read` checks alignment.
    let m: Mat4 = bytemuck::cast(unsafe { read(world)? });
    if !m.is_finite() {
        return Err(sinew_status::InvalidArgument);
    }
    if m.inverse_affine().is_none() {
        return Err(sinew_status::SingularTransform);
    }
    Ok(m)
}

fn collider(c: &sinew_collider) -> Result<Collider, sinew_status> {
    let shape = match c.kind {
        SINEW_COLLIDER_SPHERE => Collider::Sphere {
            center: vec3(c.a),
            radius: c.radius,
        },
        SINEW_COLLIDER_CAPSULE => Collider::Capsule {
            a: vec3(c.a),
            b: vec3(c.b),
            radius: c.radius,
        },
        SINEW_COLLIDER_PLANE => Collider::Plane {
            normal: vec3(c.a),
            offset: c.offset,
        },
        _ => return Err(sinew_status::InvalidArgument),
    };
    shape.validate().map_err(status)?;
    Ok(shape)
}

fn chain_settings(c: &sinew_chain_settings) -> Result<ChainSettings, sinew_status> {
    let s = ChainSettings {
        stiffness: c.stiffness,
        drag: c.drag,
        gravity: vec3(c.gravity),
        wind: vec3(c.wind),
        radius: c.radius,
        max_angle: c.max_angle,
        max_step: c.max_step,
        max_substeps: c.max_substeps,
        iterations: c.iterations,
        tolerance: c.tolerance,
    };
    s.validate().map_err(status)?;
    Ok(s)
}

/// Fills `*out` with the default chain settings: stiffness 0.1, drag 0.05,
/// gravity 9.81 down −Y, no wind, radius 0, no angle limit (pi), sub-steps
/// of at most 1/120 s (at most 8), 4 passes, tolerance 1e-4.
///
/// Errors: NULL_PARAMETER, MISALIGNED.
///
/// # Safety
/// `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_chain_settings_default(
    out: *mut sinew_chain_settings,
) -> sinew_status {
    boundary! {
        out_param(out)?;
        let d = ChainSettings::default();
        let s = sinew_chain_settings {
            stiffness: d.stiffness,
            drag: d.drag,
            gravity: d.gravity.to_array(),
            wind: d.wind.to_array(),
            radius: d.radius,
            max_angle: d.max_angle,
            max_step: d.max_step,
            max_substeps: d.max_substeps,
            iterations: d.iterations,
            tolerance: d.tolerance,
        };
        // SAFETY: `out_param` checked that the pointer is non-NULL and aligned; the contract makes
        // it writable.
        unsafe { write(out, s) };
        Ok(())
    }
}

/// Checks `joint_count` joints as a spring chain of `skeleton`: root side
/// first, each the parent of the next, no bone of zero length in the rest
/// pose. `sinew_spring_chain_reset` and `sinew_spring_chain_step` make the
/// same checks.
///
/// Errors: NULL_PARAMETER, MISALIGNED, INVALID_HANDLE, BAD_LENGTH (fewer
/// than 2 joints), CAPACITY_EXCEEDED (more than `SINEW_MAX_CHAIN`),
/// OUT_OF_RANGE (a joint past the skeleton), NOT_A_CHAIN (a joint that is
/// not the parent of the next), ZERO_LENGTH_BONE (a rest bone of zero
/// length).
///
/// # Safety
/// `skeleton` points to a loaded handle; `joints` has `joint_count`
/// readable entries.
#[no_mangle]
pub unsafe extern "C" fn sinew_spring_chain_check(
    skeleton: *const sinew_skeleton,
    joints: *const usize,
    joint_count: usize,
) -> sinew_status {
    boundary! {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its length
        // during the call; the helpers check NULL, alignment and size.
        let (s, j) = unsafe { (view_skeleton(skeleton)?, slice(joints, joint_count)?) };
        let mut store = [0u16; SINEW_MAX_CHAIN];
        spring_chain(&s, j, &mut store)?;
        Ok(())
    }
}

/// Particle positions, `float[3]` each.
type Points<'a> = &'a mut [[f32; 3]];

/// A chain's state arrays, checked: `current` and `previous`, `n` entries
/// each, disjoint from each other and from `inputs`.
///
/// # Safety
/// Each pointer is valid for its length during the call.
unsafe fn chain_state<'a>(
    current: *mut [f32; 3],
    current_len: usize,
    previous: *mut [f32; 3],
    previous_len: usize,
    inputs: &[Span],
) -> Result<(Points<'a>, Points<'a>), sinew_status> {
    // SAFETY: this function's `# Safety` contract; the helpers check NULL, alignment and size.
    let (c, p) = unsafe {
        (
            slice_mut(current, current_len)?,
            slice_mut(previous, previous_len)?,
        )
    };
    let (cs, ps) = (Span::of(c), Span::of(p));
    disjoint(cs, &[ps])?;
    disjoint(cs, inputs)?;
    disjoint(ps, inputs)?;
    Ok((c, p))
}

/// Puts the chain's particles on the animated pose with zero velocity:
/// `current` and `previous` (`chain->joint_count` entries each) get the
/// world-space positions of the chain's joints, `world · models[j]`. Call
/// it before the first step and after a teleport. Reads only `joints`,
/// `joint_count` and `world` of `*chain`; the pose is not written.
///
/// Errors: NULL_PARAMETER, MISALIGNED, INVALID_HANDLE, OVERLAPPING_BUFFERS,
/// BAD_LENGTH (a state length not `joint_count`, fewer than 2 joints; a
/// pose or matrix count not the skeleton's), CAPACITY_EXCEEDED,
/// OUT_OF_RANGE, NOT_A_CHAIN, ZERO_LENGTH_BONE (as
/// `sinew_spring_chain_check`), INVALID_ARGUMENT (a non-finite `world` or
/// joint position), SINGULAR_TRANSFORM (a `world` that cannot be
/// inverted). The state is untouched on error.
///
/// # Safety
/// `pose` points to a `sinew_ik_pose` whose skeleton is a loaded handle
/// and whose buffers are valid for their lengths; `chain` points to a
/// `sinew_spring_chain` whose `joints` has `joint_count` entries and whose
/// `world` is NULL or readable; `current` and `previous` have
/// `current_len` and `previous_len` writable entries.
#[no_mangle]
pub unsafe extern "C" fn sinew_spring_chain_reset(
    pose: *const sinew_ik_pose,
    chain: *const sinew_spring_chain,
    current: *mut [f32; 3],
    current_len: usize,
    previous: *mut [f32; 3],
    previous_len: usize,
) -> sinew_status {
    boundary! {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its length
        // during the call; the helpers check NULL, alignment and size.
        let (c, joints, world) = unsafe {
            let c = read(chain)?;
            (c, slice(c.joints, c.joint_count)?, world_matrix(c.world)?)
        };
        let inputs = [
            Span::value(chain),
            Span::of(joints),
            Span::value(c.world),
        ];
        // SAFETY: as above.
        let (cur, prev) =
            unsafe { chain_state(current, current_len, previous, previous_len, &inputs)? };
        // SAFETY: as above; the state was checked against the chain's buffers and is passed on.
        let buffers = unsafe { PoseBuffers::new(pose, &[Span::of(cur), Span::of(prev)])? };
        let mut store = [0u16; SINEW_MAX_CHAIN];
        let sc = spring_chain(&buffers.skeleton, joints, &mut store)?;
        // SAFETY: the buffers checked by `PoseBuffers::new`; no mutable view of them is alive.
        let models = unsafe { buffers.models()? };
        let state = ChainState {
            current: vec3s_mut(cur),
            previous: vec3s_mut(prev),
        };
        chain::reset(&sc, models, &world, state).map_err(status)?;
        Ok(())
    }
}

/// Steps a spring chain by `dt` seconds against the animated pose and
/// writes the result into it. The frame is cut into equal sub-steps of at
/// most `settings.max_step` (at most `settings.max_substeps`; a longer
/// frame is clamped and the time dropped reported). Each sub-step moves
/// the particles by Verlet integration (inertia with drag, gravity and
/// wind, a pull towards the animated pose), then, root to tip, puts each
/// back at its bone's length from its parent, within the angle limit, and
/// out of the colliders along that sphere. The chain root moves linearly
/// from its last position to its animated one over the frame. Then each
/// chain joint but the last is turned so that its bone points at the next
/// particle (`local' = local · correction`), and the model matrices of the
/// chain root's subtree are recomputed. Particles are world space
/// (`chain->world`); `current` and `previous` (`joint_count` entries,
/// filled by `sinew_spring_chain_reset`) carry them from frame to frame.
/// `report` may be NULL.
///
/// Errors: NULL_PARAMETER, MISALIGNED, INVALID_HANDLE, OVERLAPPING_BUFFERS,
/// BAD_LENGTH (a state length not `joint_count`, fewer than 2 joints,
/// `angle_limits_len` neither 0 nor `joint_count - 1`; a pose or matrix
/// count not the skeleton's), CAPACITY_EXCEEDED (more than
/// `SINEW_MAX_CHAIN` joints or `SINEW_MAX_CHAIN_COLLIDERS` colliders),
/// OUT_OF_RANGE, NOT_A_CHAIN, INVALID_ARGUMENT (a setting out of range, a
/// `dt` not finite and `> 0`, an angle limit outside `0..=pi`, an unknown
/// collider kind, a collider with a NaN, a negative radius or a plane
/// normal not of unit length, a NaN in the state, the pose or `world`),
/// SINGULAR_TRANSFORM (a `world` that cannot be inverted),
/// ZERO_LENGTH_BONE (a chain bone of zero length in the rest or animated
/// pose). The pose, the matrices, the state and `report` are untouched on
/// error.
///
/// # Safety
/// `pose` points to a `sinew_ik_pose` whose skeleton is a loaded handle
/// and whose buffers are valid for their lengths; `chain` points to a
/// `sinew_spring_chain` whose pointers are valid for their lengths (or
/// NULL where allowed); `current` and `previous` have `current_len` and
/// `previous_len` readable and writable entries; `report` is NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_spring_chain_step(
    pose: *const sinew_ik_pose,
    chain: *const sinew_spring_chain,
    dt: f32,
    current: *mut [f32; 3],
    current_len: usize,
    previous: *mut [f32; 3],
    previous_len: usize,
    report: *mut sinew_chain_report,
) -> sinew_status {
    boundary! {
        if !report.is_null() {
            out_param(report)?;
        }
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its length
        // during the call; the helpers check NULL, alignment and size.
        let (c, joints, world, shapes, limits) = unsafe {
            let c = read(chain)?;
            (
                c,
                slice(c.joints, c.joint_count)?,
                world_matrix(c.world)?,
                slice(c.colliders, c.collider_count)?,
                slice(c.angle_limits, c.angle_limits_len)?,
            )
        };
        let inputs = [
            Span::value(chain),
            Span::of(joints),
            Span::value(c.world),
            Span::of(shapes),
            Span::of(limits),
        ];
        // SAFETY: as above.
        let (cur, prev) =
            unsafe { chain_state(current, current_len, previous, previous_len, &inputs)? };
        let rs = Span::value(report.cast_const());
        disjoint(rs, &inputs)?;
        disjoint(rs, &[Span::of(cur), Span::of(prev)])?;
        // The pose is written: it must not overlap any other buffer of the call.
        let (cs, ps) = (Span::of(cur), Span::of(prev));
        let [i0, i1, i2, i3, i4] = inputs;
        let others = [i0, i1, i2, i3, i4, cs, ps, rs];
        // SAFETY: as above.
        let buffers = unsafe { PoseBuffers::new(pose, &others)? };
        let mut store = [0u16; SINEW_MAX_CHAIN];
        let sc = spring_chain(&buffers.skeleton, joints, &mut store)?;
        // The core's checks, made here so that a later invalid parameter
        // can only be a bone of zero length in the animated pose.
        let settings = chain_settings(&c.settings)?;
        SubSteps::split(dt, settings.max_step, settings.max_substeps).map_err(status)?;
        if shapes.len() > SINEW_MAX_CHAIN_COLLIDERS {
            return Err(sinew_status::CapacityExceeded);
        }
        let mut colliders = [Collider::Sphere {
            center: Vec3::ZERO,
            radius: 0.0,
        }; SINEW_MAX_CHAIN_COLLIDERS];
        for (d, s) in colliders.iter_mut().zip(shapes) {
            *d = collider(s)?;
        }
        if !(limits.is_empty() || limits.len() == sc.bone_count()) {
            return Err(sinew_status::BadLength);
        }
        if !limits.iter().all(|a| (0.0..=core::f32::consts::PI).contains(a)) {
            return Err(sinew_status::InvalidArgument);
        }
        if cur.len() != sc.joint_count() || prev.len() != sc.joint_count() {
            return Err(sinew_status::BadLength);
        }
        let job = ChainJob::new(sc)
            .with_settings(settings)
            .with_world(world)
            .with_colliders(&colliders[..shapes.len()])
            .with_angle_limits(limits);
        // The core writes the state before it turns the joints; stepping a
        // copy keeps the caller's state untouched should the turn fail.
        let n = sc.joint_count();
        let (mut x, mut y) = ([Vec3::ZERO; SINEW_MAX_CHAIN], [Vec3::ZERO; SINEW_MAX_CHAIN]);
        x[..n].copy_from_slice(vec3s(cur));
        y[..n].copy_from_slice(vec3s(prev));
        // SAFETY: the buffers checked by `PoseBuffers::new`; no other view of them is alive.
        let (local, models) = unsafe { buffers.mutable()? };
        let mut ik = IkPose::new(&buffers.skeleton, local, models, buffers.root.as_ref())
            .map_err(status)?;
        let state = ChainState {
            current: &mut x[..n],
            previous: &mut y[..n],
        };
        let r = chain::step(&job, &mut ik, state, dt).map_err(|e| match e {
            Error::InvalidParameter { .. } => sinew_status::ZeroLengthBone,
            e => status(e),
        })?;
        vec3s_mut(cur).copy_from_slice(&x[..n]);
        vec3s_mut(prev).copy_from_slice(&y[..n]);
        if !report.is_null() {
            let out = sinew_chain_report {
                steps: substeps(r.steps),
                passes: r.passes,
                penetration: r.penetration,
            };
            // SAFETY: `out_param` checked that the pointer is non-NULL and aligned; the contract
            // makes it writable.
            unsafe { write(report, out) };
        }
        Ok(())
    }
}
