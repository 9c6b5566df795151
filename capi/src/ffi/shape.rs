//! Blend shapes (morph targets) and shape drivers (correctives and
//! combinations), applied in bind space before skinning.
//!
//! Both follow one pattern: a `_storage_size` query, an `_init` that
//! validates the C descriptions once and lays the core's validated view
//! out in caller storage (sparse deltas packed into the SoA blocks the
//! kernels read), and a per-frame call that re-reads that view in O(1)
//! behind the handle's check word and runs the core kernel. The check word
//! rejects a handle `_init` did not fill; the storage, like a container's
//! bytes, must stay alive and unchanged while the handle is used.
//!
//! `_init` reports the element at fault through an optional `bad_index`,
//! the one out-parameter written on failure: at set-up a C caller wants
//! "target 17" as much as the status, and the core's errors name it.

use core::mem::{align_of, size_of};

use sinew_core::shape::blend::{BlendOptions, BlendShapes, Deltas, Target};
use sinew_core::shape::driver::{Angle, Combination, Corrective, Driver, Ramp, ShapeDrivers};
use sinew_core::skin::{SkinOutput, SkinVertices};
use sinew_core::{soa_count, Error, Quat, SoaVec3, Vec3};

use super::pose::{poses, sinew_soa_transform};
use super::ptr::{
    check_ptr, disjoint, handle_check, out_param, read, slice, slice_mut, write, Span,
};
use super::skin::{sinew_skin_mesh, sinew_skin_target};
use super::status::sinew_status;

/// A `bad_index` value meaning "no single element is at fault" (and the
/// value written on success).
pub const SINEW_NO_INDEX: u32 = 0xFFFF_FFFF;

/// Delta kind: the attribute is not moved by the target (the other fields
/// of its `sinew_blend_deltas` are ignored).
pub const SINEW_DELTAS_NONE: u32 = 0;
/// Delta kind: one delta per vertex of the mesh.
pub const SINEW_DELTAS_DENSE: u32 = 1;
/// Delta kind: only the listed vertices move.
pub const SINEW_DELTAS_SPARSE: u32 = 2;

/// Corrective angle: the swing angle in `[0, pi]`, how far the deviation
/// turns `axis` away from itself.
pub const SINEW_SHAPE_ANGLE_SWING: u32 = 0;
/// Corrective angle: the signed twist angle in `[-pi, pi]` about `axis`
/// (right-handed): a hinge's bend about its hinge axis.
pub const SINEW_SHAPE_ANGLE_TWIST: u32 = 1;
/// Corrective angle: the deviation's whole rotation angle, `[0, pi]`
/// (`axis` is ignored).
pub const SINEW_SHAPE_ANGLE_TOTAL: u32 = 2;

/// Corrective ramp: `t = clamp((theta - from) / (to - from), 0, 1)`.
pub const SINEW_SHAPE_RAMP_LINEAR: u32 = 0;
/// Corrective ramp: `t^2 (3 - 2t)` of the linear ramp's `t`.
pub const SINEW_SHAPE_RAMP_SMOOTHSTEP: u32 = 1;

/// Alignment `_init` asks of its storage.
pub(crate) const STORAGE_ALIGN: usize = 16;

const _: () = {
    assert!(align_of::<BlendShapes<'static>>() <= STORAGE_ALIGN);
    assert!(align_of::<Target<'static>>() <= STORAGE_ALIGN);
    assert!(align_of::<SoaVec3>() <= STORAGE_ALIGN);
    assert!(size_of::<SoaVec3>().is_multiple_of(STORAGE_ALIGN));
    assert!(align_of::<ShapeDrivers<'static>>() <= STORAGE_ALIGN);
    assert!(align_of::<Driver<'static>>() <= STORAGE_ALIGN);
    assert!(align_of::<u32>() <= STORAGE_ALIGN);
};

/// The deltas one target adds to one attribute (positions, normals or
/// tangents), in bind-space units.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sinew_blend_deltas {
    /// `SINEW_DELTAS_NONE`, `SINEW_DELTAS_DENSE` or `SINEW_DELTAS_SPARSE`.
    pub kind: u32,
    /// Number of deltas: the mesh's vertex count (dense) or the number of
    /// moved vertices (sparse, may be 0).
    pub count: usize,
    /// `count` deltas of 3 floats `(x, y, z)` (tangents: the `xyz` change;
    /// the handedness stays the base's). Finite.
    pub deltas: *const f32,
    /// Sparse only: `count` vertex indices, strictly increasing, each below
    /// the vertex count; delta `i` moves vertex `indices[i]`. Ignored for
    /// dense deltas (may be NULL).
    pub indices: *const u32,
}

/// One blend shape (morph target), as glTF stores one: each attribute's
/// deltas absent, dense or sparse independently.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sinew_blend_target {
    /// Position deltas.
    pub positions: sinew_blend_deltas,
    /// Normal deltas.
    pub normals: sinew_blend_deltas,
    /// Tangent deltas (3 floats each).
    pub tangents: sinew_blend_deltas,
}

/// A mesh's validated blend shapes, filled by `sinew_blend_shapes_init`.
///
/// The targets live in the caller's storage (in the library's layout);
/// the handle reads that storage and the dense delta arrays the targets
/// named, which must stay alive and unchanged while it is used. There is
/// nothing to free.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sinew_blend_shapes {
    /// Vertices of the mesh.
    pub vertex_count: usize,
    /// Targets: the weight count `sinew_blend_shapes_apply` wants.
    pub target_count: usize,
    /// The storage given to `_init`.
    pub storage: *const u8,
    /// Its size in bytes.
    pub storage_size: usize,
    /// Private: lets functions reject a handle that `_init` did not fill.
    pub check: u64,
}

/// A corrective shape: its weight follows an angle of a joint's local
/// rotation `r` measured from a reference rotation `r0` (the deviation
/// `d = conj(r0) * r`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct sinew_corrective {
    /// The shape whose weight this writes.
    pub shape: u32,
    /// The joint whose local rotation is read.
    pub joint: u32,
    /// `r0`, quaternion `(x, y, z, w)`: finite, non-zero (e.g. the joint's
    /// rest rotation).
    pub reference: [f32; 4],
    /// `SINEW_SHAPE_ANGLE_SWING`, `SINEW_SHAPE_ANGLE_TWIST` or `SINEW_SHAPE_ANGLE_TOTAL`.
    pub angle: u32,
    /// Swing and twist: the unit axis in the reference frame (squared
    /// length within 1e-4 of 1). Ignored for the total angle.
    pub axis: [f32; 3],
    /// `theta0`, radians: the angle at which the weight is 0.
    pub from: f32,
    /// `theta1`, radians: the angle at which the weight is 1 (not `from`;
    /// below `from` for a weight that rises as the angle falls).
    pub to: f32,
    /// `SINEW_SHAPE_RAMP_LINEAR` or `SINEW_SHAPE_RAMP_SMOOTHSTEP`.
    pub ramp: u32,
}

/// A combination shape: its weight is the product of its inputs' weights.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sinew_combination {
    /// The shape whose weight this writes.
    pub shape: u32,
    /// The shapes whose weights are multiplied (a shape may appear twice).
    pub inputs: *const u32,
    /// Length of `inputs`, at least 1.
    pub input_count: usize,
}

/// A validated list of shape drivers, filled by `sinew_shape_drivers_init`.
///
/// The drivers (and a copy of every combination's inputs) live in the
/// caller's storage, which must stay alive and unchanged while the handle
/// is used; the description arrays given to `_init` may be freed. There is
/// nothing to free.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sinew_shape_drivers {
    /// Shapes of the weight array `sinew_shape_drivers_evaluate` writes.
    pub shape_count: usize,
    /// Joints of the pose it reads.
    pub joint_count: usize,
    /// Correctives plus combinations.
    pub driver_count: usize,
    /// The storage given to `_init`.
    pub storage: *const u8,
    /// Its size in bytes.
    pub storage_size: usize,
    /// Private: lets functions reject a handle that `_init` did not fill.
    pub check: u64,
}

const BLEND_TAG: u64 = 0x5349_4E45_5753_4850; // "SINEWSHP"
const DRIVER_TAG: u64 = 0x5349_4E45_5744_5256; // "SINEWDRV"

/// A failure at set-up: the status and the element at fault.
#[derive(Clone, Copy)]
pub(crate) struct Fail(pub(crate) sinew_status, pub(crate) u32);

impl From<sinew_status> for Fail {
    fn from(s: sinew_status) -> Self {
        Fail(s, SINEW_NO_INDEX)
    }
}

/// Attaches element `k` to a status.
pub(crate) fn at(k: usize) -> impl Fn(sinew_status) -> Fail {
    move |s| Fail(s, u32::try_from(k).unwrap_or(SINEW_NO_INDEX))
}

#[inline]
pub(crate) const fn round_up(n: usize) -> usize {
    n.div_ceil(STORAGE_ALIGN) * STORAGE_ALIGN
}

pub(crate) fn add(a: usize, b: usize) -> Result<usize, sinew_status> {
    a.checked_add(b).ok_or(sinew_status::BadLength)
}

pub(crate) fn mul(a: usize, b: usize) -> Result<usize, sinew_status> {
    a.checked_mul(b).ok_or(sinew_status::BadLength)
}

/// Where things sit in a blend-shape storage: the `BlendShapes` at 0, the
/// targets, the packed sparse blocks, the copied sparse indices.
#[derive(Clone, Copy)]
struct BlendLayout {
    targets: usize,
    blocks: usize,
    block_count: usize,
    indices: usize,
    index_count: usize,
    size: usize,
}

const BLEND_TARGETS_AT: usize = round_up(size_of::<BlendShapes<'static>>());

fn blend_layout(targets: &[sinew_blend_target]) -> Result<BlendLayout, Fail> {
    let (mut block_count, mut index_count) = (0usize, 0usize);
    for (k, t) in targets.iter().enumerate() {
        for d in [t.positions, t.normals, t.tangents] {
            match d.kind {
                SINEW_DELTAS_NONE | SINEW_DELTAS_DENSE => {}
                SINEW_DELTAS_SPARSE => {
                    block_count = add(block_count, soa_count(d.count)).map_err(at(k))?;
                    index_count = add(index_count, d.count).map_err(at(k))?;
                }
                _ => return Err(at(k)(sinew_status::InvalidArgument)),
            }
        }
    }
    let sizes = || -> Result<BlendLayout, sinew_status> {
        let t_bytes = round_up(mul(targets.len(), size_of::<Target<'static>>())?);
        let blocks = add(BLEND_TARGETS_AT, t_bytes)?;
        let indices = add(blocks, mul(block_count, size_of::<SoaVec3>())?)?;
        let size = add(indices, mul(index_count, size_of::<u32>())?)?;
        if size > isize::MAX as usize {
            return Err(sinew_status::BadLength);
        }
        Ok(BlendLayout {
            targets: BLEND_TARGETS_AT,
            blocks,
            block_count,
            indices,
            index_count,
            size,
        })
    };
    Ok(sizes()?)
}

/// One attribute of a C target, viewed and checked (`None`: absent).
enum View<'a> {
    Dense(&'a [[f32; 3]]),
    Sparse(&'a [u32], &'a [[f32; 3]]),
}

/// Views and checks one attribute as the core would (lengths, order, range,
/// finite values), so that `_init` fails before it writes anything.
///
/// # Safety
/// The attribute's arrays are valid for `count` entries (3 floats each for
/// `deltas`).
unsafe fn view_deltas<'a>(
    d: &sinew_blend_deltas,
    vertex_count: usize,
) -> Result<Option<View<'a>>, sinew_status> {
    match d.kind {
        SINEW_DELTAS_DENSE => {
            if d.count != vertex_count {
                return Err(sinew_status::BadLength);
            }
            // SAFETY: this function's `# Safety` contract; `slice` checks NULL, alignment, size.
            let v = unsafe { slice(d.deltas.cast::<[f32; 3]>(), d.count)? };
            if !v.as_flattened().iter().all(|x| x.is_finite()) {
                return Err(sinew_status::InvalidArgument);
            }
            Ok(Some(View::Dense(v)))
        }
        SINEW_DELTAS_SPARSE => {
            // SAFETY: as above.
            let (i, v) = unsafe {
                (
                    slice(d.indices, d.count)?,
                    slice(d.deltas.cast::<[f32; 3]>(), d.count)?,
                )
            };
            let increasing = i.windows(2).all(|p| p[0] < p[1]);
            let in_range = i.last().is_none_or(|&x| (x as usize) < vertex_count);
            if !(increasing && in_range && v.as_flattened().iter().all(|x| x.is_finite())) {
                return Err(sinew_status::InvalidArgument);
            }
            Ok(Some(View::Sparse(i, v)))
        }
        SINEW_DELTAS_NONE => Ok(None),
        _ => Err(sinew_status::InvalidArgument),
    }
}

fn view_span(v: &Option<View<'_>>) -> [Span; 2] {
    match v {
        None => [Span(0, 0), Span(0, 0)],
        Some(View::Dense(d)) => [Span::of(d), Span(0, 0)],
        Some(View::Sparse(i, d)) => [Span::of(i), Span::of(d)],
    }
}

/// An optional `bad_index` out-parameter, checked before any work and
/// written on every return.
pub(crate) struct BadIndex(*mut u32);

impl BadIndex {
    pub(crate) fn new(p: *mut u32) -> Result<BadIndex, sinew_status> {
        if !p.is_null() {
            out_param(p)?;
        }
        Ok(BadIndex(p))
    }

    /// Writes the element at fault (`SINEW_NO_INDEX` on success or when
    /// no single element is) and returns the status.
    ///
    /// # Safety
    /// The pointer given to `new` is NULL or writable.
    pub(crate) unsafe fn report(self, result: Result<(), Fail>) -> Result<(), sinew_status> {
        let (result, index) = match result {
            Ok(()) => (Ok(()), SINEW_NO_INDEX),
            Err(Fail(s, k)) => (Err(s), k),
        };
        if !self.0.is_null() {
            // SAFETY: checked non-NULL and aligned by `new`; the contract makes it writable.
            unsafe { write(self.0, index) };
        }
        result
    }
}

/// Writes into `*size` the bytes of storage `sinew_blend_shapes_init`
/// needs for these `target_count` targets (the library's layout: the
/// targets, their sparse deltas packed four vertices to a 48-byte block,
/// their sparse indices). Only each attribute's `kind` and `count` are
/// read. Allocate it 16-byte aligned, once per mesh.
///
/// Errors: NULL_PARAMETER, MISALIGNED, INVALID_ARGUMENT (an unknown
/// `kind`), BAD_LENGTH (a size that overflows). `*size` is untouched on
/// error.
///
/// # Safety
/// `targets` has `target_count` readable entries; `size` is NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_blend_shapes_storage_size(
    targets: *const sinew_blend_target,
    target_count: usize,
    size: *mut usize,
) -> sinew_status {
    boundary! {
        out_param(size)?;
        // SAFETY: this function's `# Safety` contract; `slice` checks NULL, alignment and size.
        let t = unsafe { slice(targets, target_count)? };
        disjoint(Span::value(size.cast_const()), &[Span::of(t)])?;
        let layout = blend_layout(t).map_err(|Fail(s, _)| s)?;
        // SAFETY: `out_param` checked the pointer; the contract makes it writable.
        unsafe { write(size, layout.size) };
        Ok(())
    }
}

/// Validates `target_count` blend shapes of a mesh of `vertex_count`
/// vertices once and fills `*out` with a handle for
/// `sinew_blend_shapes_apply`. The targets are laid out in `storage`
/// (`storage_size` bytes, at least what `sinew_blend_shapes_storage_size`
/// gives, 16-byte aligned): sparse deltas and indices are copied there,
/// dense delta arrays are referenced, not copied. Afterwards `targets` and
/// the sparse arrays may be freed; `storage` and the dense arrays must stay
/// alive and unchanged while the handle is used.
///
/// `bad_index` is NULL, or receives the index of the target at fault when
/// the call fails because of one target, and `SINEW_NO_INDEX` otherwise
/// (also on success): it is the one out-parameter written on error.
///
/// Errors: NULL_PARAMETER (`out`, `storage` with a non-zero size, or a
/// target's arrays), MISALIGNED (`storage` not 16-byte aligned, a float or
/// index array not 4-byte aligned), BUFFER_TOO_SMALL (`storage_size`),
/// BAD_LENGTH (a dense `count` that is not `vertex_count`),
/// INVALID_ARGUMENT (an unknown `kind`; sparse indices not strictly
/// increasing or not below `vertex_count`; a NaN or infinite delta),
/// OVERLAPPING_BUFFERS (`storage`, `out` or `bad_index` overlapping an
/// input or each other). `*out` and `storage` are untouched on error.
///
/// # Safety
/// `targets` has `target_count` readable entries whose arrays are valid
/// for their counts; `storage` has `storage_size` writable bytes; `out` and
/// `bad_index` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_blend_shapes_init(
    vertex_count: usize,
    targets: *const sinew_blend_target,
    target_count: usize,
    storage: *mut u8,
    storage_size: usize,
    out: *mut sinew_blend_shapes,
    bad_index: *mut u32,
) -> sinew_status {
    boundary! {
        let report = BadIndex::new(bad_index)?;
        // SAFETY: this function's `# Safety` contract, passed on unchanged (the two calls).
        unsafe {
            let r = blend_init(vertex_count, targets, target_count, storage, storage_size, out, bad_index);
            report.report(r)
        }
    }
}

/// The body of `sinew_blend_shapes_init`.
///
/// # Safety
/// As `sinew_blend_shapes_init`.
unsafe fn blend_init(
    vertex_count: usize,
    targets: *const sinew_blend_target,
    target_count: usize,
    storage: *mut u8,
    storage_size: usize,
    out: *mut sinew_blend_shapes,
    bad_index: *mut u32,
) -> Result<(), Fail> {
    out_param(out)?;
    // SAFETY: this function's `# Safety` contract; the helpers check NULL, alignment and size.
    let (t, st) = unsafe {
        (
            slice(targets, target_count)?,
            slice_mut(storage, storage_size)?,
        )
    };
    let layout = blend_layout(t)?;
    if st.len() < layout.size {
        return Err(sinew_status::BufferTooSmall.into());
    }
    if !(st.as_ptr() as usize).is_multiple_of(STORAGE_ALIGN) {
        return Err(sinew_status::Misaligned.into());
    }
    let (ss, os, bs) = (
        Span::of(st),
        Span::value(out.cast_const()),
        Span::value(bad_index.cast_const()),
    );
    let ts = Span::of(t);
    disjoint(ss, &[ts, os, bs])?;
    disjoint(os, &[ts, bs])?;
    disjoint(bs, &[ts])?;
    for (k, c) in t.iter().enumerate() {
        for d in [&c.positions, &c.normals, &c.tangents] {
            // SAFETY: this function's `# Safety` contract: the target's arrays are valid.
            let v = unsafe { view_deltas(d, vertex_count) }.map_err(at(k))?;
            for s in view_span(&v) {
                disjoint(s, &[ss, os, bs]).map_err(at(k))?;
            }
        }
    }

    // Everything is checked: lay the targets out. All access to the storage
    // goes through `base`, so the regions below stay disjoint borrows (the
    // handle keeps only the address and size, taken first).
    let (start, size) = (st.as_ptr(), st.len());
    let base = st.as_mut_ptr();
    // SAFETY: `layout` places the blocks and indices inside `st` (size checked), at offsets that
    // are multiples of 16 from a 16-byte aligned start; the regions do not overlap.
    let (blocks, indices) = unsafe {
        (
            core::slice::from_raw_parts_mut(
                base.add(layout.blocks).cast::<SoaVec3>(),
                layout.block_count,
            ),
            core::slice::from_raw_parts_mut(
                base.add(layout.indices).cast::<u32>(),
                layout.index_count,
            ),
        )
    };
    let (mut blocks, mut indices): (&mut [SoaVec3], &mut [u32]) = (blocks, indices);
    let target_at = |k: usize| {
        // SAFETY: `layout.targets + k * size_of::<Target>()` lies inside the target region of
        // `st` for `k < target_count`; 16-byte aligned start, `Target`'s alignment divides 16.
        unsafe { base.add(layout.targets).cast::<Target<'_>>().add(k) }
    };
    for (k, c) in t.iter().enumerate() {
        let mut attr = |d: &sinew_blend_deltas| {
            // SAFETY: checked above under the same contract.
            match unsafe { view_deltas(d, vertex_count) } {
                Ok(Some(View::Dense(v))) => Some(Deltas::Dense(v)),
                Ok(Some(View::Sparse(i, v))) => {
                    let (b, rest) = core::mem::take(&mut blocks).split_at_mut(soa_count(v.len()));
                    blocks = rest;
                    let (x, rest) = core::mem::take(&mut indices).split_at_mut(i.len());
                    indices = rest;
                    x.copy_from_slice(i);
                    // Lengths match by construction.
                    sinew_core::shape::blend::pack_sparse(v, b).ok()?;
                    Some(Deltas::Sparse {
                        indices: x,
                        deltas: b,
                    })
                }
                _ => None,
            }
        };
        let target = Target {
            positions: attr(&c.positions),
            normals: attr(&c.normals),
            tangents: attr(&c.tangents),
        };
        // SAFETY: in bounds and aligned (see `target_at`); nothing else refers to this slot.
        unsafe { target_at(k).write(target) };
    }
    // SAFETY: every slot `0..target_count` was written just above; the region is not written again.
    let written: &[Target<'_>] = unsafe { core::slice::from_raw_parts(target_at(0), t.len()) };
    let shapes = BlendShapes::new(vertex_count, written).map_err(|e| match e {
        Error::InvalidShape { shape, .. } => Fail(sinew_status::InvalidArgument, shape),
        e => sinew_status::from(e).into(),
    })?;
    // SAFETY: offset 0 of `st` is 16-byte aligned and `BLEND_TARGETS_AT` bytes long, room for the
    // `BlendShapes` (asserted alignment); it does not overlap the targets.
    unsafe { base.cast::<BlendShapes<'_>>().write(shapes) };
    let handle = sinew_blend_shapes {
        vertex_count,
        target_count,
        storage: start,
        storage_size: size,
        check: blend_check(start, size, vertex_count, target_count),
    };
    // SAFETY: `out_param` checked the pointer; the contract makes it writable.
    unsafe { write(out, handle) };
    Ok(())
}

fn blend_check(storage: *const u8, size: usize, vertex_count: usize, target_count: usize) -> u64 {
    let tag = BLEND_TAG ^ (vertex_count as u64).rotate_left(29);
    handle_check(storage, size, target_count as u32, tag) ^ (target_count as u64) << 1
}

fn driver_check(storage: *const u8, size: usize, h: (usize, usize, usize)) -> u64 {
    let (shapes, joints, drivers) = h;
    let tag = DRIVER_TAG ^ (shapes as u64).rotate_left(23) ^ (joints as u64).rotate_left(41);
    handle_check(storage, size, drivers as u32, tag) ^ (drivers as u64) << 1
}

/// The value `_init` stored at the start of a handle's storage `p` (`n`
/// bytes), once the handle's check word (`checked`), the storage's size
/// (at least `min` bytes) and alignment, and its pointer have been
/// checked: the one way every shape handle is re-viewed. The caller
/// compares the value's own counts with the handle's.
///
/// # Safety
/// When `checked` holds, `_init` wrote a `T` at `p`, and the storage is
/// still alive and unchanged (the handle's contract).
pub(crate) unsafe fn stored<T>(
    p: *const u8,
    n: usize,
    checked: bool,
    min: usize,
) -> Result<(T, Span), sinew_status> {
    if !checked || n < min || !(p as usize).is_multiple_of(STORAGE_ALIGN) {
        return Err(sinew_status::InvalidHandle);
    }
    check_ptr(p, n)?;
    // SAFETY: the check word proves `_init` wrote a `T` at the (aligned)
    // start of this storage, which the contract keeps alive and unchanged.
    let value = unsafe { p.cast::<T>().read() };
    Ok((value, Span(p as usize, p as usize + n)))
}

/// Re-views a handle's blend shapes (O(1): `_init` validated them).
///
/// # Safety
/// `h` is NULL or points to a `sinew_blend_shapes`; if filled by
/// `sinew_blend_shapes_init`, its storage and dense arrays are still alive
/// and unchanged.
unsafe fn view_blend<'a>(
    h: *const sinew_blend_shapes,
) -> Result<(BlendShapes<'a>, Span), sinew_status> {
    // SAFETY: this function's `# Safety` contract; `read` checks NULL and alignment.
    let h = unsafe { read(h)? };
    let (p, n) = (h.storage, h.storage_size);
    let checked = h.check == blend_check(p, n, h.vertex_count, h.target_count);
    // SAFETY: this function's `# Safety` contract: a checked handle's storage holds a `BlendShapes`.
    let (shapes, span) = unsafe { stored::<BlendShapes<'a>>(p, n, checked, BLEND_TARGETS_AT)? };
    let at = p.wrapping_add(BLEND_TARGETS_AT).cast::<Target<'_>>();
    if shapes.vertex_count() != h.vertex_count
        || shapes.target_count() != h.target_count
        || shapes.targets().as_ptr() != at
    {
        return Err(sinew_status::InvalidHandle);
    }
    Ok((shapes, span))
}

/// Writes `base + sum_k weights[k] * delta_k` into `out`, for positions and,
/// when `out` names them, normals and tangents (then `base` must have
/// them): the morphed bind-space mesh, ready for `sinew_skin` (give it a
/// `sinew_skin_mesh` whose positions, normals and tangents are `out`'s).
/// Targets with `|weight| <= threshold` are skipped (0 skips only zero
/// weights); sparse targets move only their vertices; a tangent's
/// handedness is copied from `base`. With `renormalize` 1, output normals
/// and tangent directions are scaled to unit length (a zero one stays
/// zero), as glTF asks of morphed normals; with 0 they are the plain sums.
/// Only `vertex_count`, `positions`, `normals` and `tangents` of `*base`
/// are read. Allocation-free; the cost is the copy of the base plus the
/// active targets' deltas.
///
/// Errors: NULL_PARAMETER (also: `out` normals or tangents without
/// `base`'s), MISALIGNED, INVALID_HANDLE, BAD_LENGTH (`weight_count` not
/// `target_count`, `base->vertex_count` not the handle's),
/// INVALID_ARGUMENT (a NaN or infinite weight, a negative or non-finite
/// threshold, `renormalize` not 0 or 1), OVERLAPPING_BUFFERS (an output
/// overlapping another, an input, the storage or a dense delta array).
/// The outputs are untouched on error.
///
/// # Safety
/// `shapes` points to a handle filled by `sinew_blend_shapes_init` whose
/// storage and dense arrays are alive; `weights` has `weight_count`
/// readable floats; `base` and `out` point to structs whose arrays have
/// `vertex_count` entries (3 floats, tangents 4).
#[no_mangle]
pub unsafe extern "C" fn sinew_blend_shapes_apply(
    shapes: *const sinew_blend_shapes,
    weights: *const f32,
    weight_count: usize,
    threshold: f32,
    renormalize: u32,
    base: *const sinew_skin_mesh,
    out: *const sinew_skin_target,
) -> sinew_status {
    boundary! {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let ((shapes, storage), w, b, o) =
            unsafe { (view_blend(shapes)?, slice(weights, weight_count)?, read(base)?, read(out)?) };
        let n = b.vertex_count;
        if n != shapes.vertex_count() {
            return Err(sinew_status::BadLength);
        }
        if o.positions.is_null() && n > 0 {
            return Err(sinew_status::NullParameter);
        }
        // SAFETY: as above: the base's and the output's arrays have `vertex_count` entries.
        let (bp, bn, bt, op, on, ot) = unsafe {
            (
                slice(b.positions.cast::<[f32; 3]>(), n)?,
                optional(b.normals.cast::<[f32; 3]>(), n)?,
                optional(b.tangents.cast::<[f32; 4]>(), n)?,
                slice_mut(o.positions.cast::<[f32; 3]>(), n)?,
                optional_mut(o.normals.cast::<[f32; 3]>(), n)?,
                optional_mut(o.tangents.cast::<[f32; 4]>(), n)?,
            )
        };
        let inputs = [
            storage,
            Span::of(w),
            Span::of(bp),
            bn.map_or(Span(0, 0), Span::of),
            bt.map_or(Span(0, 0), Span::of),
        ];
        let outs = [
            Span::of(op),
            on.as_deref().map_or(Span(0, 0), Span::of),
            ot.as_deref().map_or(Span(0, 0), Span::of),
        ];
        for (i, s) in outs.iter().enumerate() {
            disjoint(*s, &inputs)?;
            disjoint(*s, &outs[i + 1..])?;
            for t in shapes.targets() {
                for d in [t.positions, t.normals, t.tangents] {
                    if let Some(Deltas::Dense(d)) = d {
                        disjoint(*s, &[Span::of(d)])?;
                    }
                }
            }
        }
        if on.is_some() && bn.is_none() || ot.is_some() && bt.is_none() {
            return Err(sinew_status::NullParameter);
        }
        let renormalize = match renormalize {
            0 => false,
            1 => true,
            _ => return Err(sinew_status::InvalidArgument),
        };
        let base = SkinVertices { positions: bp, normals: bn, tangents: bt };
        let output = SkinOutput { positions: op, normals: on, tangents: ot };
        shapes.apply(w, BlendOptions { threshold, renormalize }, base, output)?;
        Ok(())
    }
}

/// A NULL optional input array is `None`.
///
/// # Safety
/// As [`slice`].
unsafe fn optional<'a, T>(ptr: *const T, len: usize) -> Result<Option<&'a [T]>, sinew_status> {
    if ptr.is_null() {
        return Ok(None);
    }
    // SAFETY: this function's `# Safety` contract is the callee's, passed on unchanged.
    Ok(Some(unsafe { slice(ptr, len)? }))
}

/// A NULL optional output array is `None`.
///
/// # Safety
/// As [`slice_mut`].
unsafe fn optional_mut<'a, T>(
    ptr: *mut T,
    len: usize,
) -> Result<Option<&'a mut [T]>, sinew_status> {
    if ptr.is_null() {
        return Ok(None);
    }
    // SAFETY: this function's `# Safety` contract is the callee's, passed on unchanged.
    Ok(Some(unsafe { slice_mut(ptr, len)? }))
}

/// Where things sit in a driver storage: the `ShapeDrivers` at 0, the
/// drivers, the copied combination inputs.
#[derive(Clone, Copy)]
struct DriverLayout {
    drivers: usize,
    inputs: usize,
    input_count: usize,
    size: usize,
}

const DRIVERS_AT: usize = round_up(size_of::<ShapeDrivers<'static>>());

fn driver_layout(
    corrective_count: usize,
    combos: &[sinew_combination],
) -> Result<DriverLayout, sinew_status> {
    let input_count = combos
        .iter()
        .try_fold(0usize, |a, c| add(a, c.input_count))?;
    let count = add(corrective_count, combos.len())?;
    let inputs = add(
        DRIVERS_AT,
        round_up(mul(count, size_of::<Driver<'static>>())?),
    )?;
    let size = add(inputs, mul(input_count, size_of::<u32>())?)?;
    if size > isize::MAX as usize {
        return Err(sinew_status::BadLength);
    }
    Ok(DriverLayout {
        drivers: DRIVERS_AT,
        inputs,
        input_count,
        size,
    })
}

/// Writes into `*size` the bytes of storage `sinew_shape_drivers_init`
/// needs for `corrective_count` correctives and these combinations (the
/// library's layout: the drivers and a copy of the combinations' inputs).
/// Only `input_count` of each combination is read. Allocate it 16-byte
/// aligned, once per character.
///
/// Errors: NULL_PARAMETER, MISALIGNED, BAD_LENGTH (a size that overflows).
/// `*size` is untouched on error.
///
/// # Safety
/// `combinations` has `combination_count` readable entries; `size` is
/// NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_shape_drivers_storage_size(
    corrective_count: usize,
    combinations: *const sinew_combination,
    combination_count: usize,
    size: *mut usize,
) -> sinew_status {
    boundary! {
        out_param(size)?;
        // SAFETY: this function's `# Safety` contract; `slice` checks NULL, alignment and size.
        let c = unsafe { slice(combinations, combination_count)? };
        disjoint(Span::value(size.cast_const()), &[Span::of(c)])?;
        let layout = driver_layout(corrective_count, c)?;
        // SAFETY: `out_param` checked the pointer; the contract makes it writable.
        unsafe { write(size, layout.size) };
        Ok(())
    }
}

fn corrective(c: &sinew_corrective) -> Result<Corrective, sinew_status> {
    let [x, y, z] = c.axis;
    let axis = Vec3::new(x, y, z);
    let angle = match c.angle {
        SINEW_SHAPE_ANGLE_SWING => Angle::Swing { axis },
        SINEW_SHAPE_ANGLE_TWIST => Angle::Twist { axis },
        SINEW_SHAPE_ANGLE_TOTAL => Angle::Total,
        _ => return Err(sinew_status::InvalidArgument),
    };
    let ramp = match c.ramp {
        SINEW_SHAPE_RAMP_LINEAR => Ramp::Linear,
        SINEW_SHAPE_RAMP_SMOOTHSTEP => Ramp::Smoothstep,
        _ => return Err(sinew_status::InvalidArgument),
    };
    let [qx, qy, qz, qw] = c.reference;
    Ok(Corrective {
        shape: c.shape,
        joint: c.joint,
        reference: Quat::new(qx, qy, qz, qw),
        angle,
        from: c.from,
        to: c.to,
        ramp,
    })
}

/// Validates shape drivers once and fills `*out` with a handle for
/// `sinew_shape_drivers_evaluate`: `corrective_count` correctives, then
/// `combination_count` combinations (in this order; driver `i` is
/// corrective `i`, driver `corrective_count + i` combination `i`), over
/// `shape_count` shapes and a skeleton of `joint_count` joints. The drivers
/// and the combinations' inputs are copied into `storage` (`storage_size`
/// bytes, at least what `sinew_shape_drivers_storage_size` gives, 16-byte
/// aligned), which must stay alive and unchanged while the handle is used;
/// the description arrays may be freed afterwards.
///
/// Correctives read only the pose, so they run first. Each shape is
/// written by at most one driver, and a combination may read only shapes
/// that neither it nor a later combination writes (list inputs first), so
/// it always reads final weights.
///
/// `bad_index` is NULL, or receives the index of the driver at fault (as
/// numbered above) when the call fails because of one driver, and
/// `SINEW_NO_INDEX` otherwise (also on success): it is the one
/// out-parameter written on error.
///
/// Errors: NULL_PARAMETER, MISALIGNED, BUFFER_TOO_SMALL (`storage_size`),
/// OUT_OF_RANGE (a corrective's joint not below `joint_count`),
/// INVALID_ARGUMENT (a shape or input not below `shape_count`; a shape
/// an earlier driver writes; an unknown angle or ramp; a reference that
/// is not a finite non-zero quaternion; an axis that is not a finite unit
/// vector; `from` or `to` not finite, or equal; a combination without
/// inputs or reading a shape that it or a later driver writes),
/// OVERLAPPING_BUFFERS. `*out` and `storage` are untouched on error.
///
/// # Safety
/// `correctives` and `combinations` have their counts of readable entries
/// (each combination's `inputs` valid for `input_count`); `storage` has
/// `storage_size` writable bytes; `out` and `bad_index` are NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_shape_drivers_init(
    shape_count: usize,
    joint_count: usize,
    correctives: *const sinew_corrective,
    corrective_count: usize,
    combinations: *const sinew_combination,
    combination_count: usize,
    storage: *mut u8,
    storage_size: usize,
    out: *mut sinew_shape_drivers,
    bad_index: *mut u32,
) -> sinew_status {
    boundary! {
        let report = BadIndex::new(bad_index)?;
        // SAFETY: this function's `# Safety` contract, passed on unchanged (the two calls).
        unsafe {
            let r = drivers_init(
                (shape_count, joint_count),
                (correctives, corrective_count),
                (combinations, combination_count),
                (storage, storage_size),
                out,
                bad_index,
            );
            report.report(r)
        }
    }
}

/// The body of `sinew_shape_drivers_init`.
///
/// # Safety
/// As `sinew_shape_drivers_init`.
unsafe fn drivers_init(
    (shape_count, joint_count): (usize, usize),
    (correctives, corrective_count): (*const sinew_corrective, usize),
    (combinations, combination_count): (*const sinew_combination, usize),
    (storage, storage_size): (*mut u8, usize),
    out: *mut sinew_shape_drivers,
    bad_index: *mut u32,
) -> Result<(), Fail> {
    out_param(out)?;
    // SAFETY: this function's `# Safety` contract; the helpers check NULL, alignment and size.
    let (cs, bs, st) = unsafe {
        (
            slice(correctives, corrective_count)?,
            slice(combinations, combination_count)?,
            slice_mut(storage, storage_size)?,
        )
    };
    let layout = driver_layout(cs.len(), bs)?;
    if st.len() < layout.size {
        return Err(sinew_status::BufferTooSmall.into());
    }
    if !(st.as_ptr() as usize).is_multiple_of(STORAGE_ALIGN) {
        return Err(sinew_status::Misaligned.into());
    }
    let (ss, os, xs) = (
        Span::of(st),
        Span::value(out.cast_const()),
        Span::value(bad_index.cast_const()),
    );
    disjoint(ss, &[Span::of(cs), Span::of(bs), os, xs])?;
    disjoint(os, &[Span::of(cs), Span::of(bs), xs])?;
    // Each driver on its own (the core's checks of one driver), then the
    // checks between drivers, in driver order so the first bad one is named.
    let shape_of = |p: usize| match cs.get(p) {
        Some(c) => c.shape,
        None => bs.get(p - cs.len()).map_or(u32::MAX, |b| b.shape),
    };
    let total = cs.len() + bs.len();
    for p in 0..total {
        let fail = at(p);
        let one = match (cs.get(p), p.checked_sub(cs.len()).and_then(|i| bs.get(i))) {
            (Some(c), _) => {
                let c = corrective(c).map_err(&fail)?;
                if c.joint as usize >= joint_count {
                    return Err(fail(sinew_status::OutOfRange));
                }
                Driver::Corrective(c)
            }
            (None, Some(b)) => {
                // SAFETY: the contract makes `inputs` valid for `input_count`.
                let i = unsafe { slice(b.inputs, b.input_count) }.map_err(&fail)?;
                disjoint(Span::of(i), &[ss, os, xs]).map_err(&fail)?;
                if i.iter().any(|&s| (p..total).any(|q| shape_of(q) == s)) {
                    return Err(fail(sinew_status::InvalidArgument));
                }
                Driver::Combination(Combination {
                    shape: b.shape,
                    inputs: i,
                })
            }
            (None, None) => break,
        };
        ShapeDrivers::new(shape_count, joint_count, &[one])
            .map_err(|_| fail(sinew_status::InvalidArgument))?;
        if (0..p).any(|q| shape_of(q) == shape_of(p)) {
            return Err(fail(sinew_status::InvalidArgument));
        }
    }

    // Everything is checked: lay the drivers out through `base` alone (the
    // handle keeps only the address and size, taken first).
    let (start, size) = (st.as_ptr(), st.len());
    let base = st.as_mut_ptr();
    // SAFETY: `layout` places the inputs inside `st` (size checked) at a multiple of 16 from a
    // 16-byte aligned start, after the driver region.
    let mut inputs: &mut [u32] = unsafe {
        core::slice::from_raw_parts_mut(base.add(layout.inputs).cast::<u32>(), layout.input_count)
    };
    let driver_at = |p: usize| {
        // SAFETY: inside the driver region of `st` for `p < total`; aligned as `target_at` is.
        unsafe { base.add(layout.drivers).cast::<Driver<'_>>().add(p) }
    };
    for (p, c) in cs.iter().enumerate() {
        let c = corrective(c)?;
        // SAFETY: in bounds and aligned (see `driver_at`).
        unsafe { driver_at(p).write(Driver::Corrective(c)) };
    }
    for (i, b) in bs.iter().enumerate() {
        // SAFETY: checked above under the same contract.
        let src = unsafe { slice(b.inputs, b.input_count)? };
        let (dst, rest) = core::mem::take(&mut inputs).split_at_mut(src.len());
        inputs = rest;
        dst.copy_from_slice(src);
        let d = Driver::Combination(Combination {
            shape: b.shape,
            inputs: dst,
        });
        // SAFETY: in bounds and aligned (see `driver_at`).
        unsafe { driver_at(cs.len() + i).write(d) };
    }
    // SAFETY: every slot `0..total` was written just above; the region is not written again.
    let written: &[Driver<'_>] = unsafe { core::slice::from_raw_parts(driver_at(0), total) };
    let drivers = ShapeDrivers::new(shape_count, joint_count, written).map_err(|e| match e {
        Error::InvalidDriver { driver, .. } => Fail(sinew_status::InvalidArgument, driver),
        e => sinew_status::from(e).into(),
    })?;
    // SAFETY: offset 0 of `st` is aligned and `DRIVERS_AT` bytes long, room for the
    // `ShapeDrivers`; it does not overlap the drivers.
    unsafe { base.cast::<ShapeDrivers<'_>>().write(drivers) };
    let handle = sinew_shape_drivers {
        shape_count,
        joint_count,
        driver_count: total,
        storage: start,
        storage_size: size,
        check: driver_check(start, size, (shape_count, joint_count, total)),
    };
    // SAFETY: `out_param` checked the pointer; the contract makes it writable.
    unsafe { write(out, handle) };
    Ok(())
}

/// Re-views a handle's drivers (O(1): `_init` validated them).
///
/// # Safety
/// As [`view_blend`], for `sinew_shape_drivers_init`.
unsafe fn view_drivers<'a>(
    h: *const sinew_shape_drivers,
) -> Result<(ShapeDrivers<'a>, Span), sinew_status> {
    // SAFETY: this function's `# Safety` contract; `read` checks NULL and alignment.
    let h = unsafe { read(h)? };
    let (p, n) = (h.storage, h.storage_size);
    let checked = h.check == driver_check(p, n, (h.shape_count, h.joint_count, h.driver_count));
    // SAFETY: this function's `# Safety` contract: a checked handle's storage holds `ShapeDrivers`.
    let (d, span) = unsafe { stored::<ShapeDrivers<'a>>(p, n, checked, DRIVERS_AT)? };
    let at = p.wrapping_add(DRIVERS_AT).cast::<Driver<'_>>();
    if d.shape_count() != h.shape_count
        || d.joint_count() != h.joint_count
        || d.drivers().len() != h.driver_count
        || d.drivers().as_ptr() != at
    {
        return Err(sinew_status::InvalidHandle);
    }
    Ok((d, span))
}

/// Overwrites the weight of every driven shape in `weights`
/// (`weight_count` = `shape_count`): correctives by their ramp of the
/// joint's angle, read from the local pose `pose`
/// (`sinew_soa_count(joint_count)` blocks), then combinations by the
/// product of their inputs. Weights no driver writes (the animated ones)
/// are left as they are; call it after writing those and before
/// `sinew_blend_shapes_apply`. A combination reading a NaN weight writes
/// NaN, which `sinew_blend_shapes_apply` rejects. Allocation-free.
///
/// Errors: NULL_PARAMETER, MISALIGNED, INVALID_HANDLE, BAD_LENGTH
/// (`pose_len` or `weight_count`), INVALID_ARGUMENT (a corrective's joint
/// rotation is NaN or infinite), OVERLAPPING_BUFFERS (`weights` overlapping
/// the pose or the storage). `weights` is untouched on error.
///
/// # Safety
/// `drivers` points to a handle filled by `sinew_shape_drivers_init` whose
/// storage is alive; `pose` has `pose_len` readable blocks; `weights` has
/// `weight_count` readable and writable floats.
#[no_mangle]
pub unsafe extern "C" fn sinew_shape_drivers_evaluate(
    drivers: *const sinew_shape_drivers,
    pose: *const sinew_soa_transform,
    pose_len: usize,
    weights: *mut f32,
    weight_count: usize,
) -> sinew_status {
    boundary! {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let ((d, storage), p, w) = unsafe {
            (view_drivers(drivers)?, slice(pose, pose_len)?, slice_mut(weights, weight_count)?)
        };
        disjoint(Span::of(w), &[storage, Span::of(p)])?;
        d.evaluate(poses(p), w)?;
        Ok(())
    }
}
