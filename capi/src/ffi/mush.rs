//! Delta mush: skinned positions smoothed and given back their rest detail
//! in the smoothed frame, which hides the collapse of linear blend
//! skinning.
//!
//! Offline, `sinew_mush_build` writes the mesh adjacency and the rest
//! deltas into caller arrays (`sinew_mush_sizes` gives their lengths). The
//! run time follows `shape.rs`: `sinew_mush_init` validates those arrays
//! once into caller storage behind a handle with a check word, and
//! `sinew_mush_deform` re-reads it in O(1) every frame. The handle borrows
//! the arrays, which must stay alive and unchanged while it is used.

use core::mem::{align_of, size_of};

use sinew_core::shape::mush::{
    build_adjacency, neighbour_capacity, rest_deltas, DeltaMush, MushAdjacency, MushSettings,
};

use super::ptr::{disjoint, handle_check, out_param, read, slice, slice_mut, write, Span};
use super::shape::{add, mul, round_up, stored, STORAGE_ALIGN};
use super::status::sinew_status;

const _: () = assert!(align_of::<DeltaMush<'static>>() <= STORAGE_ALIGN);

/// Bytes of storage `sinew_mush_init` needs.
const MUSH_STORAGE: usize = round_up(size_of::<DeltaMush<'static>>());

const MUSH_TAG: u64 = 0x5349_4E45_574D_5553; // "SINEWMUS"

/// How a delta mush smooths; `sinew_mush_init` must be given the settings
/// `sinew_mush_build` was, or the rest pose does not come back.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct sinew_mush_settings {
    /// Smoothing iterations (each one pass over the adjacency).
    pub iterations: u32,
    /// The step towards the neighbours' mean, in `(0, 1]`.
    pub step: f32,
}

/// The array lengths of a delta mush, from `sinew_mush_sizes`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct sinew_mush_counts {
    /// `uint32_t` adjacency offsets: `vertex_count + 1`.
    pub offsets: usize,
    /// `uint32_t` neighbours `sinew_mush_build` may need before it removes
    /// duplicates: `2 * index_count` (it reports how many it kept).
    pub neighbour_capacity: usize,
    /// Scratch entries of 4 floats for `sinew_mush_build` and
    /// `sinew_mush_deform`: `2 * vertex_count`.
    pub scratch: usize,
    /// Delta entries of 4 floats: `vertex_count`.
    pub deltas: usize,
    /// Bytes of storage for `sinew_mush_init` (16-byte aligned).
    pub storage_size: usize,
}

/// A validated delta mush, filled by `sinew_mush_init`.
///
/// It borrows the triangles, the adjacency and the deltas given to
/// `_init`, and its storage; all must stay alive and unchanged while it is
/// used. There is nothing to free.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sinew_delta_mush {
    /// Vertices of the mesh.
    pub vertex_count: usize,
    /// The storage given to `_init`.
    pub storage: *const u8,
    /// Its size in bytes.
    pub storage_size: usize,
    /// Private: lets functions reject a handle that `_init` did not fill.
    pub check: u64,
}

fn core_settings(s: sinew_mush_settings) -> Result<MushSettings, sinew_status> {
    if s.step > 0.0 && s.step <= 1.0 {
        Ok(MushSettings {
            iterations: s.iterations,
            step: s.step,
        })
    } else {
        Err(sinew_status::InvalidArgument)
    }
}

fn counts(vertex_count: usize, index_count: usize) -> Result<sinew_mush_counts, sinew_status> {
    let c = sinew_mush_counts {
        offsets: add(vertex_count, 1)?,
        neighbour_capacity: neighbour_capacity(index_count),
        scratch: mul(vertex_count, 2)?,
        deltas: vertex_count,
        storage_size: MUSH_STORAGE,
    };
    // Every array must be addressable, and the core indexes with `u32`.
    let bytes = mul(c.scratch, size_of::<[f32; 4]>())?;
    if bytes > isize::MAX as usize
        || u32::try_from(c.offsets).is_err()
        || u32::try_from(c.neighbour_capacity).is_err()
    {
        return Err(sinew_status::BadLength);
    }
    Ok(c)
}

/// Writes into `*out` the lengths of the arrays of a delta mush over
/// `vertex_count` vertices and a triangle list of `index_count` indices.
///
/// Errors: NULL_PARAMETER, MISALIGNED, BAD_LENGTH (a size that overflows,
/// or more than `UINT32_MAX` offsets or neighbours). `*out` is untouched on
/// error.
///
/// # Safety
/// `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_mush_sizes(
    vertex_count: usize,
    index_count: usize,
    out: *mut sinew_mush_counts,
) -> sinew_status {
    boundary! {
        out_param(out)?;
        let c = counts(vertex_count, index_count)?;
        // SAFETY: `out_param` checked the pointer; the contract makes it writable.
        unsafe { write(out, c) };
        Ok(())
    }
}

/// Builds a delta mush offline: the mesh adjacency of `triangles`
/// (`index_count` indices, three per triangle) into `offsets`
/// (`offsets_len` = `vertex_count + 1`) and `neighbours` (`neighbours_len`
/// at least `2 * index_count`; vertex `v`'s neighbours are
/// `neighbours[offsets[v] .. offsets[v + 1]]`, and `*neighbour_count`
/// receives how many were kept), then each vertex's rest delta from its
/// smoothed rest position into `deltas` (`deltas_len` = `vertex_count`
/// entries of 4 floats: the delta in the smoothed frame and a weight, 0
/// where that frame is degenerate). `rest` holds `vertex_count` positions
/// of 3 floats; `scratch` `scratch_len` = `2 * vertex_count` entries of 4
/// floats (contents on return unspecified). Allocation-free; results are
/// those of the Rust `build_adjacency` and `rest_deltas`, bit for bit.
///
/// Errors: NULL_PARAMETER, MISALIGNED, BAD_LENGTH (`offsets_len`,
/// `scratch_len` or `deltas_len`; more than `UINT32_MAX` vertices or
/// neighbours), BUFFER_TOO_SMALL (`neighbours_len`), INVALID_ARGUMENT (a
/// step outside `(0, 1]`, a non-finite rest position), INVALID_DATA
/// (`index_count` not a multiple of 3, an index not below `vertex_count`),
/// OVERLAPPING_BUFFERS. The outputs are untouched on error.
///
/// # Safety
/// `triangles` has `index_count` readable indices, `rest` `3 *
/// vertex_count` readable floats; `offsets`, `neighbours`, `scratch` and
/// `deltas` have their lengths of writable elements (4 floats each for
/// `scratch` and `deltas`); `neighbour_count` is writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_mush_build(
    triangles: *const u32,
    index_count: usize,
    rest: *const f32,
    vertex_count: usize,
    settings: sinew_mush_settings,
    offsets: *mut u32,
    offsets_len: usize,
    neighbours: *mut u32,
    neighbours_len: usize,
    neighbour_count: *mut usize,
    scratch: *mut f32,
    scratch_len: usize,
    deltas: *mut f32,
    deltas_len: usize,
) -> sinew_status {
    boundary! {
        out_param(neighbour_count)?;
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let (t, r, o, nb, s, d) = unsafe {
            (
                slice(triangles, index_count)?,
                slice(rest.cast::<[f32; 3]>(), vertex_count)?,
                slice_mut(offsets, offsets_len)?,
                slice_mut(neighbours, neighbours_len)?,
                slice_mut(scratch.cast::<[f32; 4]>(), scratch_len)?,
                slice_mut(deltas.cast::<[f32; 4]>(), deltas_len)?,
            )
        };
        let c = counts(vertex_count, index_count)?;
        if o.len() != c.offsets || s.len() != c.scratch || d.len() != c.deltas {
            return Err(sinew_status::BadLength);
        }
        if nb.len() < c.neighbour_capacity {
            return Err(sinew_status::BufferTooSmall);
        }
        let outs = [
            Span::of(o),
            Span::of(nb),
            Span::of(s),
            Span::of(d),
            Span::value(neighbour_count.cast_const()),
        ];
        for (i, x) in outs.iter().enumerate() {
            disjoint(*x, &[Span::of(t), Span::of(r)])?;
            disjoint(*x, &outs[i + 1..])?;
        }
        // Every check `rest_deltas` makes is made here, and `build_adjacency`
        // checks the triangles before it writes: nothing is written on error.
        let settings = core_settings(settings)?;
        if !r.as_flattened().iter().all(|x| x.is_finite()) {
            return Err(sinew_status::InvalidArgument);
        }
        let used = build_adjacency(t, vertex_count, o, nb)?;
        let adjacency = MushAdjacency::new(o, &nb[..used])?;
        rest_deltas(&adjacency, t, settings, r, s, d)?;
        // SAFETY: `out_param` checked the pointer; the contract makes it writable.
        unsafe { write(neighbour_count, used) };
        Ok(())
    }
}

/// Validates a delta mush once and fills `*out` with a handle for
/// `sinew_mush_deform`: `triangles` (`index_count` indices), the adjacency
/// `offsets` (`vertex_count + 1`) and `neighbours` (`neighbour_count`),
/// the `deltas` (`vertex_count` entries of 4 floats), as
/// `sinew_mush_build` wrote them, and the settings it was given. The
/// handle borrows these arrays, which must stay alive and unchanged while
/// it is used; `storage` (`storage_size` bytes, at least
/// `sinew_mush_counts.storage_size`, 16-byte aligned) holds the validated
/// view.
///
/// Errors: NULL_PARAMETER, MISALIGNED, BUFFER_TOO_SMALL (`storage_size`),
/// INVALID_DATA (offsets that do not run from 0 to `neighbour_count` or
/// decrease; a neighbour or index not below `vertex_count`; an index count
/// not a multiple of 3; a non-finite delta), INVALID_ARGUMENT (a step
/// outside `(0, 1]`, a delta weight outside `[0, 1]`),
/// OVERLAPPING_BUFFERS (`storage` or `out` overlapping an array or each
/// other). `*out` and `storage` are untouched on error.
///
/// # Safety
/// Each array has its count of readable elements; `storage` has
/// `storage_size` writable bytes; `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_mush_init(
    triangles: *const u32,
    index_count: usize,
    offsets: *const u32,
    vertex_count: usize,
    neighbours: *const u32,
    neighbour_count: usize,
    deltas: *const f32,
    settings: sinew_mush_settings,
    storage: *mut u8,
    storage_size: usize,
    out: *mut sinew_delta_mush,
) -> sinew_status {
    boundary! {
        out_param(out)?;
        let n1 = add(vertex_count, 1)?;
        // SAFETY: this function's `# Safety` contract; the helpers check NULL, alignment and size.
        let (t, o, nb, d, st) = unsafe {
            (
                slice(triangles, index_count)?,
                slice(offsets, n1)?,
                slice(neighbours, neighbour_count)?,
                slice(deltas.cast::<[f32; 4]>(), vertex_count)?,
                slice_mut(storage, storage_size)?,
            )
        };
        if st.len() < MUSH_STORAGE {
            return Err(sinew_status::BufferTooSmall);
        }
        if !(st.as_ptr() as usize).is_multiple_of(STORAGE_ALIGN) {
            return Err(sinew_status::Misaligned);
        }
        let (ss, os) = (Span::of(st), Span::value(out.cast_const()));
        let inputs = [Span::of(t), Span::of(o), Span::of(nb), Span::of(d)];
        disjoint(ss, &inputs)?;
        disjoint(os, &inputs)?;
        disjoint(os, &[ss])?;
        let settings = core_settings(settings)?;
        let adjacency = MushAdjacency::new(o, nb)?;
        let mush = DeltaMush::new(adjacency, t, d, settings)?;
        let (start, size) = (st.as_ptr(), st.len());
        // SAFETY: `st` is 16-byte aligned (checked) and at least `MUSH_STORAGE` bytes, room for a
        // `DeltaMush` (alignment asserted).
        unsafe { st.as_mut_ptr().cast::<DeltaMush<'_>>().write(mush) };
        let handle = sinew_delta_mush {
            vertex_count,
            storage: start,
            storage_size: size,
            check: mush_check(start, size, vertex_count),
        };
        // SAFETY: `out_param` checked the pointer; the contract makes it writable.
        unsafe { write(out, handle) };
        Ok(())
    }
}

fn mush_check(storage: *const u8, size: usize, vertex_count: usize) -> u64 {
    let tag = MUSH_TAG ^ (vertex_count as u64).rotate_left(29);
    handle_check(storage, size, vertex_count as u32, tag) ^ (vertex_count as u64) << 1
}

/// Re-views a handle's delta mush (O(1): `_init` validated it).
///
/// # Safety
/// `h` is NULL or points to a `sinew_delta_mush`; if filled by
/// `sinew_mush_init`, its storage and arrays are still alive and unchanged.
unsafe fn view_mush<'a>(h: *const sinew_delta_mush) -> Result<(DeltaMush<'a>, Span), sinew_status> {
    // SAFETY: this function's `# Safety` contract; `read` checks NULL and alignment.
    let h = unsafe { read(h)? };
    let (p, n) = (h.storage, h.storage_size);
    let checked = h.check == mush_check(p, n, h.vertex_count);
    // SAFETY: this function's `# Safety` contract: a checked handle's storage holds a `DeltaMush`.
    let (mush, span) = unsafe { stored::<DeltaMush<'a>>(p, n, checked, MUSH_STORAGE)? };
    if mush.vertex_count() != h.vertex_count {
        return Err(sinew_status::InvalidHandle);
    }
    Ok((mush, span))
}

/// Deforms `vertex_count` skinned positions (3 floats each) into `out`
/// (`out_len` = `vertex_count` positions): smooths them in `scratch`
/// (`scratch_len` = `2 * vertex_count` entries of 4 floats, contents on
/// return unspecified), rebuilds each vertex's frame and adds its rest
/// delta back, blended by the delta's weight. Every `out` position is
/// written. Allocation-free; results are those of the Rust
/// `DeltaMush::deform`, bit for bit.
///
/// Errors: NULL_PARAMETER, MISALIGNED, INVALID_HANDLE, BAD_LENGTH
/// (`vertex_count`, `scratch_len` or `out_len` not the handle's),
/// OVERLAPPING_BUFFERS (`out` or `scratch` overlapping each other, the
/// skinned positions, the storage or an array the handle borrows). `out`
/// is untouched on error.
///
/// # Safety
/// `mush` points to a handle filled by `sinew_mush_init` whose storage and
/// arrays are alive; `skinned` has `3 * vertex_count` readable floats;
/// `scratch` `4 * scratch_len` and `out` `3 * out_len` writable floats.
#[no_mangle]
pub unsafe extern "C" fn sinew_mush_deform(
    mush: *const sinew_delta_mush,
    skinned: *const f32,
    vertex_count: usize,
    scratch: *mut f32,
    scratch_len: usize,
    out: *mut f32,
    out_len: usize,
) -> sinew_status {
    boundary! {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let ((m, storage), p, s, o) = unsafe {
            (
                view_mush(mush)?,
                slice(skinned.cast::<[f32; 3]>(), vertex_count)?,
                slice_mut(scratch.cast::<[f32; 4]>(), scratch_len)?,
                slice_mut(out.cast::<[f32; 3]>(), out_len)?,
            )
        };
        let borrowed = [
            storage,
            Span::of(p),
            Span::of(m.triangles()),
            Span::of(m.adjacency().offsets()),
            Span::of(m.adjacency().indices()),
            Span::of(m.deltas()),
        ];
        disjoint(Span::of(o), &borrowed)?;
        disjoint(Span::of(s), &borrowed)?;
        disjoint(Span::of(o), &[Span::of(s)])?;
        m.deform(p, s, o)?;
        Ok(())
    }
}
