//! Secondary motion: springs (float, vector, rotation, batches) and PD
//! joint controllers, over caller-owned state.
//!
//! The core reports a NaN or infinite input as a non-finite value; here,
//! as in the IK calls, that is the caller's argument: INVALID_ARGUMENT.

use core::mem::{align_of, offset_of, size_of};

use sinew_core::secondary::pd::{self, PdJob, PdJoint, PdState};
use sinew_core::secondary::spring::{advance_scalar, QuatSpring, Spring, SpringParams, Vec3Spring};
use sinew_core::secondary::SubSteps;
use sinew_core::{Error, Quat, Vec3};

use super::ik::sinew_spring;
use super::pose::{poses, poses_mut, sinew_soa_transform};
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
