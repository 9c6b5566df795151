//! Poses: the SoA block and matrix types, and blending.

use core::mem::{align_of, size_of};

use sinew_core::blend::{BlendJob, BlendLayer, JointWeights};
use sinew_core::{Mat4, SoaTransform};

use super::ptr::{disjoint, slice, slice_mut, Span, Status};
use super::status::sinew_status;

/// Most normal (and, separately, additive) layers one `sinew_pose_blend` call takes.
pub const SINEW_MAX_BLEND_LAYERS: usize = 16;

/// The blend threshold most callers want (the core's `blend::DEFAULT_THRESHOLD`).
pub const SINEW_DEFAULT_BLEND_THRESHOLD: f32 = 0.1;

/// Four joints of a local pose in SoA lanes: lane `k` of every row is
/// joint `4·b + k` of block `b`. 160 bytes, 16-byte aligned; the same
/// layout as the core's `SoaTransform`.
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct sinew_soa_transform {
    /// Translation x, y, z rows.
    pub translation: [[f32; 4]; 3],
    /// Rotation quaternion x, y, z, w rows.
    pub rotation: [[f32; 4]; 4],
    /// Scale x, y, z rows.
    pub scale: [[f32; 4]; 3],
}

/// A column-major 4x4 matrix (`cols[c][r]`), 16-byte aligned; model-space
/// joint matrices and inverse bind matrices.
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct sinew_float4x4 {
    /// The four columns; column 3 holds the translation.
    pub cols: [[f32; 4]; 4],
}

/// One input of `sinew_pose_blend`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sinew_blend_layer {
    /// The layer's local pose.
    pub pose: *const sinew_soa_transform,
    /// Its length in blocks (must equal the rest pose's).
    pub pose_len: usize,
    /// Layer weight, finite and `>= 0` (0 skips the layer).
    pub weight: f32,
    /// NULL, or per-joint weights (finite, `>= 0`) multiplied with `weight`:
    /// `4 · pose_len` floats in SoA order (joint `j` at `[j]`), 16-byte aligned.
    pub joint_weights: *const f32,
    /// Length of `joint_weights` in floats (0 when it is NULL).
    pub joint_weights_len: usize,
}

pub(crate) fn poses(s: &[sinew_soa_transform]) -> &[SoaTransform] {
    bytemuck::cast_slice(s)
}

pub(crate) fn poses_mut(s: &mut [sinew_soa_transform]) -> &mut [SoaTransform] {
    bytemuck::cast_slice_mut(s)
}

/// Returns the number of 4-joint blocks in a pose of `joint_count` joints:
/// `(joint_count + 3) / 4`.
#[no_mangle]
pub extern "C" fn sinew_soa_count(joint_count: usize) -> usize {
    boundary!(or 0 => {
        joint_count / 4 + usize::from(!joint_count.is_multiple_of(4))
    })
}

/// Views one C layer as the core's layer (pose, weight, joint weights),
/// checking that none of it overlaps `out`.
///
/// # Safety
/// The layer's pointers are valid for their lengths.
pub(crate) unsafe fn layer<'a>(
    l: &sinew_blend_layer,
    out: Span,
) -> Result<BlendLayer<'a>, sinew_status> {
    // SAFETY: this function's `# Safety` contract makes each pointer valid for its
    // length during the call; the helpers check NULL, alignment and size.
    let pose = unsafe { slice(l.pose, l.pose_len)? };
    disjoint(out, &[Span::of(pose)])?;
    let pose = poses(pose);
    if l.joint_weights.is_null() && l.joint_weights_len == 0 {
        return Ok(BlendLayer::new(pose, l.weight));
    }
    // SAFETY: this function's `# Safety` contract makes each pointer valid for its
    // length during the call; the helpers check NULL, alignment and size.
    let w = unsafe { slice(l.joint_weights, l.joint_weights_len)? };
    disjoint(out, &[Span::of(w)])?;
    let lanes = bytemuck::try_cast_slice(w).map_err(|_| {
        if w.len().is_multiple_of(4) {
            sinew_status::Misaligned
        } else {
            sinew_status::BadLength
        }
    })?;
    Ok(BlendLayer::masked(
        pose,
        l.weight,
        JointWeights::new(lanes)?,
    ))
}

/// Converts C layers into core layers in `store` (at most
/// [`SINEW_MAX_BLEND_LAYERS`], on the caller's stack, filled in place),
/// checking that none overlaps `out`.
///
/// # Safety
/// Every layer's pointers are valid for their lengths.
pub(crate) unsafe fn layers<'a>(
    src: &[sinew_blend_layer],
    out: Span,
    store: &mut heapless::Vec<BlendLayer<'a>, SINEW_MAX_BLEND_LAYERS>,
) -> Status {
    for l in src {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let layer = unsafe { layer(l, out)? };
        store.push(layer).map_err(|_| sinew_status::TooManyLayers)?;
    }
    Ok(())
}

/// Blends up to `SINEW_MAX_BLEND_LAYERS` normal layers (normalised weighted
/// average; rotations by sign-aligned nlerp) and as many additive layers
/// into `out`. Joints whose accumulated normal weight is below `threshold`
/// (finite, > 0; usually `SINEW_DEFAULT_BLEND_THRESHOLD`) blend towards
/// `rest`. Every pose, `rest` and `out` have the same number of blocks.
///
/// Errors: NULL_PARAMETER, TOO_MANY_LAYERS, INVALID_ARGUMENT (negative or
/// NaN weight, weights whose sum overflows, bad threshold, bad joint
/// weight), MISALIGNED, BAD_LENGTH,
/// OVERLAPPING_BUFFERS. `out` is untouched on error.
///
/// # Safety
/// `layers`/`additive` have `layer_count`/`additive_count` entries whose
/// pointers are valid; `rest` has `rest_len` blocks; `out` has `out_len`
/// writable blocks.
#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn sinew_pose_blend(
    layers: *const sinew_blend_layer,
    layer_count: usize,
    additive: *const sinew_blend_layer,
    additive_count: usize,
    rest: *const sinew_soa_transform,
    rest_len: usize,
    threshold: f32,
    out: *mut sinew_soa_transform,
    out_len: usize,
) -> sinew_status {
    boundary! {
        if layer_count > SINEW_MAX_BLEND_LAYERS || additive_count > SINEW_MAX_BLEND_LAYERS {
            return Err(sinew_status::TooManyLayers);
        }
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let (normal, add, rest, out) = unsafe {
            (
                slice(layers, layer_count)?,
                slice(additive, additive_count)?,
                slice(rest, rest_len)?,
                slice_mut(out, out_len)?,
            )
        };
        let o = Span::of(out);
        disjoint(o, &[Span::of(rest)])?;
        let mut normal_store = heapless::Vec::new();
        let mut add_store = heapless::Vec::new();
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        unsafe {
            self::layers(normal, o, &mut normal_store)?;
            self::layers(add, o, &mut add_store)?;
        }
        let job = BlendJob {
            layers: &normal_store,
            additive: &add_store,
            rest: poses(rest),
            threshold,
        };
        sinew_core::blend::blend(&job, poses_mut(out))?;
        Ok(())
    }
}

const _: () = {
    assert!(size_of::<sinew_soa_transform>() == size_of::<SoaTransform>());
    assert!(align_of::<sinew_soa_transform>() == align_of::<SoaTransform>());
    assert!(size_of::<sinew_float4x4>() == size_of::<Mat4>());
    assert!(align_of::<sinew_float4x4>() == align_of::<Mat4>());
    assert!(SINEW_DEFAULT_BLEND_THRESHOLD == sinew_core::blend::DEFAULT_THRESHOLD);
};
