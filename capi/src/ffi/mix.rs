//! Motion-unit mixing, cross-fades and inertialization over caller-owned
//! state.

use core::mem::{align_of, size_of};

use sinew_core::blend::BlendLayer;
use sinew_core::mix::{self, Decay, InertialBlock, MixInput, MixJob, MixMode, Ramp};

use super::pose::{layer, poses, poses_mut, sinew_blend_layer, sinew_soa_transform};
use super::ptr::{disjoint, out_param, read, slice, slice_mut, write, Span};
use super::status::sinew_status;

/// Most one-shot units one `sinew_pose_mix` call takes (besides fatigue and idle).
pub const SINEW_MAX_MIX_UNITS: usize = 16;

/// Mix mode: normalised weighted sum of sign-aligned quaternions.
pub const SINEW_MIX_QUATERNION: u32 = 0;

/// Mix mode: ZXY Euler angles (θz, θx, θy) mixed literally.
pub const SINEW_MIX_JOINT_ANGLES: u32 = 1;

/// Frame-weight ramp: weight 1 on every frame.
pub const SINEW_RAMP_NONE: u32 = 0;

/// Frame-weight ramp: linear ramps of `ramp_frames` at both ends.
pub const SINEW_RAMP_LINEAR: u32 = 1;

/// Frame-weight ramp: the linear ramp through smoothstep.
pub const SINEW_RAMP_SMOOTH: u32 = 2;

/// Inertialization decay: the quintic that reaches zero at the duration.
pub const SINEW_DECAY_QUINTIC: u32 = 0;

/// Inertialization decay: a critically damped spring with a half-life.
pub const SINEW_DECAY_SPRING: u32 = 1;

/// Inertialization state of four joints (one per pose block); its contents
/// are private. 288 bytes, 16-byte aligned.
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct sinew_inertial_block {
    /// Private state (offset directions, decay coefficients).
    pub opaque: [[f32; 4]; 18],
}

const _: () = {
    assert!(size_of::<sinew_inertial_block>() == size_of::<InertialBlock>());
    assert!(align_of::<sinew_inertial_block>() == align_of::<InertialBlock>());
};

pub(crate) fn mix_input(l: BlendLayer<'_>) -> MixInput<'_> {
    MixInput {
        pose: l.pose,
        weight: l.weight,
        joint_weights: l.joint_weights,
    }
}

/// The motion-unit mixing kernel: per joint, `Σ(wF·wJ·x) / Σ(wF·wJ)` over
/// up to `SINEW_MAX_MIX_UNITS` running units and the optional fatigue unit
/// (its `weight` is the fatigue factor), then the optional idle unit fills
/// in with weight `wJ · max(0, 1 − W)`; joints whose total weight stays under
/// 1e-4 take `rest`. Each unit is a `sinew_blend_layer`: its pose this
/// frame, its frame weight `wF` (e.g. `sinew_mix_ramp_weight`) and optional
/// per-joint priorities `wJ`. `mode` is `SINEW_MIX_QUATERNION` (normalised
/// sum of sign-aligned quaternions) or `SINEW_MIX_JOINT_ANGLES` (ZXY Euler
/// angles mixed literally). The queue itself (which units run, their frame
/// cursors) is the caller's: this is the per-frame math.
///
/// Errors: NULL_PARAMETER, TOO_MANY_LAYERS, INVALID_ARGUMENT (negative or
/// NaN weight, unknown mode, bad joint weight), MISALIGNED, BAD_LENGTH,
/// OVERLAPPING_BUFFERS. `out` is untouched on error.
///
/// # Safety
/// `units` has `unit_count` entries; `fatigue` and `idle` are NULL or one
/// entry; their pointers, `rest` and `out` are valid for their lengths.
#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn sinew_pose_mix(
    units: *const sinew_blend_layer,
    unit_count: usize,
    fatigue: *const sinew_blend_layer,
    idle: *const sinew_blend_layer,
    rest: *const sinew_soa_transform,
    rest_len: usize,
    mode: u32,
    out: *mut sinew_soa_transform,
    out_len: usize,
) -> sinew_status {
    boundary! {
        let mode = match mode {
            SINEW_MIX_QUATERNION => MixMode::Quaternion,
            SINEW_MIX_JOINT_ANGLES => MixMode::JointAngles,
            _ => return Err(sinew_status::InvalidArgument),
        };
        if unit_count > SINEW_MAX_MIX_UNITS {
            return Err(sinew_status::TooManyLayers);
        }
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let (src, rest, out) = unsafe {
            (
                slice(units, unit_count)?,
                slice(rest, rest_len)?,
                slice_mut(out, out_len)?,
            )
        };
        let o = Span::of(out);
        disjoint(o, &[Span::of(rest)])?;
        let mut inputs: heapless::Vec<MixInput<'_>, SINEW_MAX_MIX_UNITS> = heapless::Vec::new();
        for l in src {
            // SAFETY: this function's `# Safety` contract makes each pointer valid for its
            // length during the call; the helpers check NULL, alignment and size.
            let input = mix_input(unsafe { layer(l, o)? });
            inputs
                .push(input)
                .map_err(|_| sinew_status::TooManyLayers)?;
        }
        let optional = |p: *const sinew_blend_layer| -> Result<Option<MixInput<'_>>, sinew_status> {
            if p.is_null() {
                return Ok(None);
            }
            // SAFETY: the contract makes a non-NULL `p` point to one readable entry whose pointers
            // are valid for their lengths; `read` checks alignment.
            let l = unsafe { read(p)? };
            // SAFETY: the entry `read` above, under the same contract.
            Ok(Some(mix_input(unsafe { layer(&l, o)? })))
        };
        let job = MixJob {
            units: &inputs,
            fatigue: optional(fatigue)?,
            idle: optional(idle)?,
            rest: poses(rest),
            mode,
        };
        mix::mix(&job, poses_mut(out))?;
        Ok(())
    }
}

/// Writes a motion unit's frame weight `wF` at `frame` of a `length`-frame
/// unit (0 past the end): `SINEW_RAMP_NONE` gives 1; `SINEW_RAMP_LINEAR`
/// gives `min(1, (frame + 1) / (ramp_frames + 1), (length − frame) /
/// (ramp_frames + 1))`; `SINEW_RAMP_SMOOTH` passes that through smoothstep.
///
/// Errors: NULL_PARAMETER, INVALID_ARGUMENT (unknown ramp, `length` 0,
/// `2 * ramp_frames > length`).
///
/// # Safety
/// `weight` is writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_mix_ramp_weight(
    ramp: u32,
    ramp_frames: usize,
    frame: usize,
    length: usize,
    weight: *mut f32,
) -> sinew_status {
    boundary! {
        out_param(weight)?;
        let r = match ramp {
            SINEW_RAMP_NONE => Ramp::None,
            SINEW_RAMP_LINEAR => Ramp::Linear {
                frames: ramp_frames,
            },
            SINEW_RAMP_SMOOTH => Ramp::Smooth {
                frames: ramp_frames,
            },
            _ => return Err(sinew_status::InvalidArgument),
        };
        // Checked, not saturating: 2 * 2^63 saturates to 2^64 - 1, which a
        // `length` of 2^64 - 1 would accept.
        let both_ramps_fit = matches!(ramp_frames.checked_mul(2), Some(d) if d <= length);
        if length == 0 || !both_ramps_fit {
            return Err(sinew_status::InvalidArgument);
        }
        // SAFETY: `out_param` checked that the pointer is non-NULL and aligned; the contract makes
        // it writable.
        unsafe { write(weight, r.weight(frame, length)) };
        Ok(())
    }
}

/// Cross-fades two poses of `len` blocks: `(1 − alpha) from + alpha to`
/// (rotations by sign-aligned nlerp), `alpha` in 0..1.
///
/// Errors: NULL_PARAMETER, INVALID_ARGUMENT (alpha), MISALIGNED,
/// BAD_LENGTH, OVERLAPPING_BUFFERS.
///
/// # Safety
/// Each pointer is valid for the length that follows it.
#[no_mangle]
pub unsafe extern "C" fn sinew_pose_crossfade(
    from: *const sinew_soa_transform,
    to: *const sinew_soa_transform,
    len: usize,
    alpha: f32,
    out: *mut sinew_soa_transform,
    out_len: usize,
) -> sinew_status {
    boundary! {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let (a, b, out) = unsafe { (slice(from, len)?, slice(to, len)?, slice_mut(out, out_len)?) };
        disjoint(Span::of(out), &[Span::of(a), Span::of(b)])?;
        mix::crossfade(poses(a), poses(b), alpha, poses_mut(out))?;
        Ok(())
    }
}

/// Starts an inertialized transition: from the old animation's pose now and
/// `dt` seconds earlier, and the new animation's (pass `new` twice if its
/// previous pose is unknown), records per joint the offset and its velocity
/// (clamped to 0 when it moves away from zero) into `state` (`pose_len`
/// blocks, caller-owned). `duration` is the blend time T in seconds (per
/// joint it is shortened so the quintic cannot overshoot); the longest
/// per-joint duration is written to `*longest` when it is not NULL.
///
/// Errors: NULL_PARAMETER, INVALID_ARGUMENT (`dt` or `duration` not finite
/// and > 0), MISALIGNED, BAD_LENGTH, OVERLAPPING_BUFFERS.
///
/// # Safety
/// `state` has `pose_len` writable blocks; the four poses have `pose_len`
/// blocks each; `longest` is NULL or writable.
#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn sinew_inertialize_start(
    state: *mut sinew_inertial_block,
    old: *const sinew_soa_transform,
    old_prev: *const sinew_soa_transform,
    new: *const sinew_soa_transform,
    new_prev: *const sinew_soa_transform,
    pose_len: usize,
    dt: f32,
    duration: f32,
    longest: *mut f32,
) -> sinew_status {
    boundary! {
        if !longest.is_null() {
            out_param(longest)?;
        }
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let (st, o, op, n, np) = unsafe {
            (
                slice_mut(state, pose_len)?,
                slice(old, pose_len)?,
                slice(old_prev, pose_len)?,
                slice(new, pose_len)?,
                slice(new_prev, pose_len)?,
            )
        };
        disjoint(
            Span::of(st),
            &[Span::of(o), Span::of(op), Span::of(n), Span::of(np)],
        )?;
        let job = mix::transition::SwitchJob {
            old: poses(o),
            old_prev: poses(op),
            new: poses(n),
            new_prev: poses(np),
            dt,
            duration,
        };
        let t = mix::transition::start(bytemuck::cast_slice_mut(st), &job)?;
        if !longest.is_null() {
            // SAFETY: `out_param` checked that the pointer is non-NULL and aligned; the contract
            // makes it writable.
            unsafe { write(longest, t) };
        }
        Ok(())
    }
}

/// Adds the inertialization offsets `time` seconds after the switch to
/// `pose` (the new animation's pose this frame), in place. `decay` is
/// `SINEW_DECAY_QUINTIC` (reaches zero with zero velocity at each joint's
/// duration) or `SINEW_DECAY_SPRING` (critically damped, `half_life`
/// seconds).
///
/// Errors: NULL_PARAMETER, INVALID_ARGUMENT (unknown decay, bad half-life,
/// NaN or negative time), MISALIGNED, BAD_LENGTH, OVERLAPPING_BUFFERS.
///
/// # Safety
/// `state` and `pose` have `pose_len` blocks each (`pose` writable).
#[no_mangle]
pub unsafe extern "C" fn sinew_inertialize_apply(
    state: *const sinew_inertial_block,
    time: f32,
    decay: u32,
    half_life: f32,
    pose: *mut sinew_soa_transform,
    pose_len: usize,
) -> sinew_status {
    boundary! {
        let decay = match decay {
            SINEW_DECAY_QUINTIC => Decay::Quintic,
            SINEW_DECAY_SPRING => Decay::Spring { half_life },
            _ => return Err(sinew_status::InvalidArgument),
        };
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let (st, p) = unsafe { (slice(state, pose_len)?, slice_mut(pose, pose_len)?) };
        disjoint(Span::of(p), &[Span::of(st)])?;
        mix::transition::apply(bytemuck::cast_slice(st), time, decay, poses_mut(p))?;
        Ok(())
    }
}
