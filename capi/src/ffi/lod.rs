//! Level of detail: joint-LOD layouts (each level's joints a prefix),
//! prefix sampling and FK, update-rate interpolation and the budgeted
//! rate schedule.

use sinew_core::lod::rate::{self, RateTiers};
use sinew_core::lod::{self, JointLod, HUMANOID_RULES, MAX_LEVELS};

use super::clip::{
    keys_span, sinew_clip, sinew_compressed_clip, time_mode, view_clip, view_compressed,
};
use super::pose::{poses, poses_mut, sinew_float4x4, sinew_soa_transform};
use super::ptr::{
    check_ptr, disjoint, handle_check, out_param, read, slice, slice_mut, write, Span,
};
use super::skeleton::{sinew_skeleton, view_skeleton};
use super::status::sinew_status;

/// Most levels a joint-LOD layout has.
pub const SINEW_LOD_MAX_LEVELS: usize = 8;

/// The longest update period of the rate schedule, in frames.
pub const SINEW_RATE_MAX_PERIOD: u32 = 8;

/// A joint-LOD layout: a caller-owned view of four caller arrays (filled
/// by `sinew_lod_build`) checked once by `sinew_joint_lod_init`. The
/// arrays must outlive the handle and stay unchanged.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sinew_joint_lod {
    /// `joint_count` skeleton joints, in LOD order.
    pub order: *const u16,
    /// `joint_count` parents as LOD positions (`SINEW_NO_PARENT` for roots).
    pub parents: *const u16,
    /// The rest pose in LOD order, `(joint_count + 3) / 4` blocks.
    pub rest: *const sinew_soa_transform,
    /// `level_count` joint counts, one per level.
    pub levels: *const u16,
    /// Number of joints.
    pub joint_count: u32,
    /// Number of levels.
    pub level_count: u32,
    /// Private: lets functions reject a handle that `_init` did not fill.
    pub check: u64,
}

const LOD_TAG: u64 = 0x5349_4E45_574C_4F44; // "SINEWLOD"

fn lod_check(h: &sinew_joint_lod) -> u64 {
    let mix = (h.parents as u64).rotate_left(17)
        ^ (h.rest as u64).rotate_left(29)
        ^ (h.levels as u64).rotate_left(41);
    handle_check(
        h.order.cast(),
        h.joint_count as usize,
        h.level_count,
        LOD_TAG ^ mix,
    )
}

/// Re-views a handle's layout (O(1): `_init` validated the arrays).
///
/// # Safety
/// `handle` is NULL or points to a `sinew_joint_lod`; if filled by
/// `sinew_joint_lod_init`, its arrays are still alive.
unsafe fn view_lod<'a>(handle: *const sinew_joint_lod) -> Result<JointLod<'a>, sinew_status> {
    // SAFETY: this function's `# Safety` contract is the callee's, passed on unchanged.
    let h = unsafe { read(handle)? };
    if h.check != lod_check(&h) {
        return Err(sinew_status::InvalidHandle);
    }
    let n = h.joint_count as usize;
    // SAFETY: the check word proves `_init` validated these arrays at these lengths; the
    // contract keeps them alive and unchanged while the handle is used.
    let (order, parents, rest, levels) = unsafe {
        (
            slice(h.order, n)?,
            slice(h.parents, n)?,
            slice(h.rest, n.div_ceil(4))?,
            slice(h.levels, h.level_count as usize)?,
        )
    };
    JointLod::from_validated_parts(order, parents, poses(rest), levels)
        .map_err(|_| sinew_status::InvalidHandle)
}

/// Writes each joint's coarsest level under the humanoid name rules (3
/// levels: level 1 drops fingers, face, toes and end joints; level 2 also
/// hands, balls of the feet and twist joints), for `sinew_lod_build`.
///
/// Errors: NULL_PARAMETER, INVALID_HANDLE, BAD_LENGTH (`out_len` not the
/// joint count). `out` is untouched on error.
///
/// # Safety
/// `skeleton` is a loaded handle; `out` has `out_len` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn sinew_lod_humanoid_levels(
    skeleton: *const sinew_skeleton,
    out: *mut u8,
    out_len: usize,
) -> sinew_status {
    boundary! {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let (s, out) = unsafe { (view_skeleton(skeleton)?, slice_mut(out, out_len)?) };
        lod::coarsest_by_names(&s, &HUMANOID_RULES, 3, out)?;
        Ok(())
    }
}

/// Fills a joint-LOD layout of `skeleton` from each joint's coarsest level
/// (`coarsest[j]`: the last level at which joint `j` is evaluated, below
/// `SINEW_LOD_MAX_LEVELS`; raised to its descendants'), and writes the
/// number of levels to `*level_count`. `order` and `parents` have
/// `joint_count` entries, `rest` `soa_count` blocks, `levels` room for
/// the level count (`SINEW_LOD_MAX_LEVELS` always suffices).
///
/// Errors: NULL_PARAMETER, INVALID_HANDLE, BAD_LENGTH, INVALID_ARGUMENT
/// (a coarsest level too large), MISALIGNED. Outputs are untouched on
/// error.
///
/// # Safety
/// `skeleton` is a loaded handle; every array is valid for its length;
/// `level_count` is writable.
#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn sinew_lod_build(
    skeleton: *const sinew_skeleton,
    coarsest: *const u8,
    coarsest_len: usize,
    order: *mut u16,
    order_len: usize,
    parents: *mut u16,
    parents_len: usize,
    rest: *mut sinew_soa_transform,
    rest_len: usize,
    levels: *mut u16,
    levels_len: usize,
    level_count: *mut u32,
) -> sinew_status {
    boundary! {
        out_param(level_count)?;
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let (s, c, o, p, r, l) = unsafe {
            (
                view_skeleton(skeleton)?,
                slice(coarsest, coarsest_len)?,
                slice_mut(order, order_len)?,
                slice_mut(parents, parents_len)?,
                slice_mut(rest, rest_len)?,
                slice_mut(levels, levels_len.min(MAX_LEVELS))?,
            )
        };
        let outs = [Span::of(o), Span::of(p), Span::of(r), Span::of(l)];
        for (i, a) in outs.iter().enumerate() {
            let others: heapless::Vec<Span, 5> = outs
                .iter()
                .enumerate()
                .filter(|&(k, _)| k != i)
                .map(|(_, s)| Span(s.0, s.1))
                .chain(core::iter::once(Span::of(c)))
                .collect();
            disjoint(Span(a.0, a.1), &others)?;
        }
        let count = lod::build(&s, c, o, p, poses_mut(r), l)?;
        // SAFETY: `out_param` checked that the pointer is non-NULL and aligned; the contract makes
        // it writable.
        unsafe { write(level_count, count as u32) };
        Ok(())
    }
}

/// Validates a joint-LOD layout once (permutation, parents before their
/// joints, level sizes from `joint_count` down, finite rest pose) and
/// fills `*out` with a view of the arrays.
///
/// Errors: NULL_PARAMETER, INVALID_DATA, BAD_LENGTH, MISALIGNED.
///
/// # Safety
/// The arrays are valid for their lengths and outlive the handle; `out`
/// is writable.
#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn sinew_joint_lod_init(
    order: *const u16,
    parents: *const u16,
    joint_count: usize,
    rest: *const sinew_soa_transform,
    rest_len: usize,
    levels: *const u16,
    level_count: usize,
    out: *mut sinew_joint_lod,
) -> sinew_status {
    boundary! {
        out_param(out)?;
        check_ptr(order, joint_count)?;
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let (o, p, r, l) = unsafe {
            (
                slice(order, joint_count)?,
                slice(parents, joint_count)?,
                slice(rest, rest_len)?,
                slice(levels, level_count)?,
            )
        };
        JointLod::new(o, p, poses(r), l)?;
        let mut h = sinew_joint_lod {
            order,
            parents,
            rest,
            levels,
            joint_count: joint_count as u32,
            level_count: level_count as u32,
            check: 0,
        };
        h.check = lod_check(&h);
        // SAFETY: `out_param` checked that the pointer is non-NULL and aligned; the contract makes
        // it writable.
        unsafe { write(out, h) };
        Ok(())
    }
}

/// Writes the number of joints evaluated at `level` to `*kept`.
///
/// Errors: NULL_PARAMETER, INVALID_HANDLE, INVALID_ARGUMENT (no such level).
///
/// # Safety
/// `lod` is an initialised handle; `kept` is writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_joint_lod_kept(
    lod: *const sinew_joint_lod,
    level: u32,
    kept: *mut usize,
) -> sinew_status {
    boundary! {
        out_param(kept)?;
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let l = unsafe { view_lod(lod)? };
        let k = l.kept(level as usize)?;
        // SAFETY: `out_param` checked that the pointer is non-NULL and aligned; the contract makes
        // it writable.
        unsafe { write(kept, k) };
        Ok(())
    }
}

/// Reorders a skeleton-order pose into LOD order (`soa_count` blocks each),
/// e.g. every frame of a clip when building LOD clips.
///
/// Errors: NULL_PARAMETER, INVALID_HANDLE, BAD_LENGTH, MISALIGNED,
/// OVERLAPPING_BUFFERS.
///
/// # Safety
/// `lod` is an initialised handle; `src`/`out` are valid for their lengths.
#[no_mangle]
pub unsafe extern "C" fn sinew_joint_lod_remap_pose(
    lod: *const sinew_joint_lod,
    src: *const sinew_soa_transform,
    src_len: usize,
    out: *mut sinew_soa_transform,
    out_len: usize,
) -> sinew_status {
    boundary! {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let (l, s, o) = unsafe { (view_lod(lod)?, slice(src, src_len)?, slice_mut(out, out_len)?) };
        disjoint(Span::of(o), &[Span::of(s)])?;
        lod::remap_pose(&l, poses(s), poses_mut(o))?;
        Ok(())
    }
}

/// Samples a raw clip in LOD order at `level`: the first
/// `(kept + 3) / 4` blocks of `out` (`soa_count` blocks long), each bit for
/// bit what `sinew_clip_sample` writes there; the rest is not written.
///
/// Errors: NULL_PARAMETER, INVALID_HANDLE, INVALID_ARGUMENT (time, mode,
/// level), BAD_LENGTH, MISALIGNED, OVERLAPPING_BUFFERS.
///
/// # Safety
/// `lod` and `clip` are initialised/loaded handles; `out` has `out_len`
/// writable blocks.
#[no_mangle]
pub unsafe extern "C" fn sinew_lod_clip_sample(
    lod: *const sinew_joint_lod,
    level: u32,
    clip: *const sinew_clip,
    time: f32,
    mode: u32,
    out: *mut sinew_soa_transform,
    out_len: usize,
) -> sinew_status {
    boundary! {
        let mode = time_mode(mode)?;
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let (l, c, o) = unsafe { (view_lod(lod)?, view_clip(clip)?, slice_mut(out, out_len)?) };
        disjoint(Span::of(o), &[keys_span(&c)])?;
        lod::sample(&l, level as usize, &c, time, mode, poses_mut(o))?;
        Ok(())
    }
}

/// Samples a compressed clip in LOD order at `level`, as
/// `sinew_lod_clip_sample` (clips compressed with rest-pose stripping take
/// the layout's rest pose).
///
/// Errors: as `sinew_lod_clip_sample`.
///
/// # Safety
/// `lod` and `clip` are initialised/loaded handles; `out` has `out_len`
/// writable blocks.
#[no_mangle]
pub unsafe extern "C" fn sinew_lod_compressed_clip_sample(
    lod: *const sinew_joint_lod,
    level: u32,
    clip: *const sinew_compressed_clip,
    time: f32,
    mode: u32,
    out: *mut sinew_soa_transform,
    out_len: usize,
) -> sinew_status {
    boundary! {
        let mode = time_mode(mode)?;
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let (l, (c, bytes), o) =
            unsafe { (view_lod(lod)?, view_compressed(clip)?, slice_mut(out, out_len)?) };
        disjoint(Span::of(o), &[bytes, Span::of(l.rest_pose())])?;
        lod::sample(&l, level as usize, &c, time, mode, poses_mut(o))?;
        Ok(())
    }
}

/// Local-to-model at `level` over the layout's parents: kept joints
/// `model = parent · local` (roots: `root · local`, `root` NULL for
/// identity); when `models_len` is the joint count, dropped joints follow
/// their parents at rest (`model = parent · rest`), when it is the kept
/// count only kept joints are written. `local` needs the level's blocks.
///
/// Errors: NULL_PARAMETER, INVALID_HANDLE, INVALID_ARGUMENT (level),
/// BAD_LENGTH, MISALIGNED, OVERLAPPING_BUFFERS. `models` is untouched on
/// error.
///
/// # Safety
/// `lod` is an initialised handle; `local`, `models` are valid for their
/// lengths; `root` is NULL or readable.
#[no_mangle]
pub unsafe extern "C" fn sinew_lod_local_to_model(
    lod: *const sinew_joint_lod,
    level: u32,
    local: *const sinew_soa_transform,
    local_len: usize,
    root: *const sinew_float4x4,
    models: *mut sinew_float4x4,
    models_len: usize,
) -> sinew_status {
    boundary! {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let (l, loc, m) = unsafe { (view_lod(lod)?, slice(local, local_len)?, slice_mut(models, models_len)?) };
        let root_m = if root.is_null() {
            None
        } else {
            // SAFETY: the contract makes a non-NULL `root` readable; `read` checks alignment.
            Some(unsafe { read(root)? })
        };
        disjoint(Span::of(m), &[Span::of(loc), Span::value(root)])?;
        let root_m = root_m.map(|r| sinew_core::Mat4 { cols: r.cols });
        lod::local_to_model(&l, level as usize, poses(loc), root_m.as_ref(), bytemuck::cast_slice_mut(m))?;
        Ok(())
    }
}

/// Interpolates two local poses (`len` blocks each) by `alpha` in
/// `[0, 1]`: translations and scales lerped, rotations nlerped with sign
/// alignment.
///
/// Errors: NULL_PARAMETER, INVALID_ARGUMENT (`alpha`), MISALIGNED,
/// OVERLAPPING_BUFFERS. `out` is untouched on error.
///
/// # Safety
/// `prev`, `next` and `out` have `len` valid blocks.
#[no_mangle]
pub unsafe extern "C" fn sinew_rate_interpolate_poses(
    prev: *const sinew_soa_transform,
    next: *const sinew_soa_transform,
    len: usize,
    alpha: f32,
    out: *mut sinew_soa_transform,
) -> sinew_status {
    boundary! {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let (a, b, o) = unsafe { (slice(prev, len)?, slice(next, len)?, slice_mut(out, len)?) };
        disjoint(Span::of(o), &[Span::of(a), Span::of(b)])?;
        rate::interpolate_poses(poses(a), poses(b), alpha, poses_mut(o))?;
        Ok(())
    }
}

/// Lerps two arrays of `len` model matrices by `alpha` in `[0, 1]`.
///
/// Errors: as `sinew_rate_interpolate_poses`.
///
/// # Safety
/// `prev`, `next` and `out` have `len` valid matrices.
#[no_mangle]
pub unsafe extern "C" fn sinew_rate_interpolate_models(
    prev: *const sinew_float4x4,
    next: *const sinew_float4x4,
    len: usize,
    alpha: f32,
    out: *mut sinew_float4x4,
) -> sinew_status {
    boundary! {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let (a, b, o) = unsafe { (slice(prev, len)?, slice(next, len)?, slice_mut(out, len)?) };
        disjoint(Span::of(o), &[Span::of(a), Span::of(b)])?;
        rate::interpolate_models(bytemuck::cast_slice(a), bytemuck::cast_slice(b), alpha, bytemuck::cast_slice_mut(o))?;
        Ok(())
    }
}

/// Importance thresholds of the rate schedule: `>= full` period 1,
/// `>= half` 2, `>= quarter` 4, lower 8 (`full >= half >= quarter`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sinew_rate_tiers {
    /// Least importance evaluated every frame.
    pub full: f32,
    /// Least importance evaluated every 2nd frame.
    pub half: f32,
    /// Least importance evaluated every 4th frame.
    pub quarter: f32,
}

/// Plans the update periods (1, 2, 4 or 8 frames) of `count` characters
/// from their importance within `budget` evaluations per frame: each
/// character's wished period from `tiers`, then the least important
/// characters on over-budget frames lengthened until no frame of the
/// 8-frame cycle exceeds the budget. `order` is scratch (`count`
/// entries); `periods` receives the periods; `*peak` the most evaluations
/// of any frame. Character `i` is then evaluated at frame `f` when
/// `f % period == (i % 8) % period` (`sinew_rate_is_due`).
///
/// Errors: NULL_PARAMETER, INVALID_ARGUMENT (NaN importance, unordered
/// tiers, budget below `ceil(count / 8)`), MISALIGNED,
/// OVERLAPPING_BUFFERS. Outputs are unspecified on error.
///
/// # Safety
/// `importance`, `order` and `periods` have `count` valid entries;
/// `tiers` is readable; `peak` is writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_rate_plan(
    importance: *const f32,
    count: usize,
    tiers: *const sinew_rate_tiers,
    budget: usize,
    order: *mut u32,
    periods: *mut u8,
    peak: *mut usize,
) -> sinew_status {
    boundary! {
        out_param(peak)?;
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let (imp, t, o, p) = unsafe {
            (slice(importance, count)?, read(tiers)?, slice_mut(order, count)?, slice_mut(periods, count)?)
        };
        disjoint(Span::of(o), &[Span::of(imp), Span::of(p)])?;
        disjoint(Span::of(p), &[Span::of(imp)])?;
        let tiers = RateTiers { full: t.full, half: t.half, quarter: t.quarter };
        let report = rate::plan(imp, &tiers, budget, o, p).map_err(|e| match e {
            sinew_core::Error::NonFinite { .. } => sinew_status::InvalidArgument,
            e => e.into(),
        })?;
        // SAFETY: `out_param` checked that the pointer is non-NULL and aligned; the contract makes
        // it writable.
        unsafe { write(peak, report.peak()) };
        Ok(())
    }
}

/// 1 when `character` with update period `period` is evaluated at `frame`
/// (`frame % period == (character % 8) % period`; a period other than 1,
/// 2, 4 counts as 8), else 0.
#[no_mangle]
pub extern "C" fn sinew_rate_is_due(frame: u64, character: usize, period: u8) -> u32 {
    boundary!(or 0 => { u32::from(rate::is_due(frame, character, period)) })
}

/// Lists the characters evaluated at `frame` under `periods` (`count`
/// entries) into `out` (ascending) and writes how many to `*due_count`.
///
/// Errors: NULL_PARAMETER, BUFFER_TOO_SMALL (more due than `out_len`),
/// MISALIGNED, OVERLAPPING_BUFFERS.
///
/// # Safety
/// `periods` has `count` entries, `out` `out_len` writable ones;
/// `due_count` is writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_rate_due(
    frame: u64,
    periods: *const u8,
    count: usize,
    out: *mut u32,
    out_len: usize,
    due_count: *mut usize,
) -> sinew_status {
    boundary! {
        out_param(due_count)?;
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let (p, o) = unsafe { (slice(periods, count)?, slice_mut(out, out_len)?) };
        disjoint(Span::of(o), &[Span::of(p)])?;
        let k = rate::due(frame, p, o)?;
        // SAFETY: `out_param` checked that the pointer is non-NULL and aligned; the contract makes
        // it writable.
        unsafe { write(due_count, k) };
        Ok(())
    }
}

const _: () = {
    assert!(SINEW_LOD_MAX_LEVELS == MAX_LEVELS);
    assert!(SINEW_RATE_MAX_PERIOD == rate::MAX_PERIOD as u32);
};
