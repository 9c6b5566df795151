//! Motion-matching databases: load a `SINEWMMD` container once, then per
//! search re-view it in O(1) and find the frame whose features best match a
//! query (exact pruned search or lane brute force, the same frame and cost
//! bit for bit), or read a frame's cost, features and place in its clip.
//!
//! A search that finds no searchable frame below its bound returns
//! `SINEW_STATUS_NOT_FOUND` and writes nothing: the status set already has
//! a "nothing matched" code, and keeping it a status keeps the rule that
//! out-parameters are written only on success.

use sinew_core::motion_matching::{Database, FeatureKind, Match};
use sinew_core::Error;

use super::ptr::{
    container, disjoint, handle_check, out_param, read, slice, slice_mut, write, Span,
};
use super::status::sinew_status;

/// Feature group kind: a joint's position in the root frame (x, y, z; metres).
pub const SINEW_MM_FEATURE_POSITION: u32 = 0;
/// Feature group kind: a joint's velocity in the root frame (x, y, z; metres per second).
pub const SINEW_MM_FEATURE_VELOCITY: u32 = 1;
/// Feature group kind: the root's ground position `frames_ahead` frames
/// later, in today's root frame (x, z; metres).
pub const SINEW_MM_FEATURE_TRAJECTORY_POSITION: u32 = 2;
/// Feature group kind: the root's facing `frames_ahead` frames later, in
/// today's root frame (x, z of a unit vector).
pub const SINEW_MM_FEATURE_TRAJECTORY_DIRECTION: u32 = 3;

// The header states the kinds as literals (cbindgen does not evaluate
// casts); they must be the container's codes.
const _: () = {
    assert!(SINEW_MM_FEATURE_POSITION == FeatureKind::Position as u32);
    assert!(SINEW_MM_FEATURE_VELOCITY == FeatureKind::Velocity as u32);
    assert!(SINEW_MM_FEATURE_TRAJECTORY_POSITION == FeatureKind::TrajectoryPosition as u32);
    assert!(SINEW_MM_FEATURE_TRAJECTORY_DIRECTION == FeatureKind::TrajectoryDirection as u32);
};

const DATABASE_TAG: u64 = 0x5349_4E45_574D_4D44; // "SINEWMMD"

/// A loaded motion-matching database: a caller-owned view of a validated
/// `SINEWMMD` container (written by
/// `sinew_core::motion_matching::write_database`). Filled by
/// `sinew_mm_database_load`; the bytes must outlive the handle and stay
/// unchanged.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sinew_mm_database {
    /// The container bytes.
    pub data: *const u8,
    /// Their length in bytes.
    pub size: usize,
    /// Features per frame: the length of a query.
    pub feature_count: u32,
    /// Frames in the database (without padding).
    pub frame_count: u32,
    /// Private: lets functions reject a handle that `_load` did not fill.
    pub check: u64,
}

/// What a database holds, beside its features.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct sinew_mm_info {
    /// Features per frame.
    pub feature_count: u32,
    /// Frames (without padding).
    pub frame_count: u32,
    /// Frame ranges (one per clip or mirrored clip).
    pub range_count: u32,
    /// Feature groups.
    pub group_count: u32,
    /// Frames per second of every range.
    pub sample_rate: f32,
    /// The joint whose ground projection and facing define the root frame.
    pub root_joint: u32,
    /// The root joint's local axis that points forward (x, y, z).
    pub facing_axis: [f32; 3],
    /// The horizontal axis mirroring negates: 0 (x) or 2 (z).
    pub mirror_axis: u32,
    /// Joints in the mirror map (0 when no range is mirrored).
    pub mirror_joint_count: u32,
}

/// One feature group: which features of a frame measure what.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct sinew_mm_group {
    /// `SINEW_MM_FEATURE_*`.
    pub kind: u32,
    /// The joint of a position or velocity group (`UINT32_MAX` for a
    /// trajectory group).
    pub joint: u32,
    /// Frames ahead of a trajectory group (0 for a joint group).
    pub frames_ahead: u32,
    /// Index of the group's first feature.
    pub first: u32,
    /// Number of features: 3 for a joint group, 2 for a trajectory group.
    pub width: u32,
    /// The group's weight (already folded into the normalization scale).
    pub weight: f32,
}

fn database_check(h: &sinew_mm_database) -> u64 {
    handle_check(
        h.data,
        h.size,
        h.frame_count,
        DATABASE_TAG ^ u64::from(h.feature_count).rotate_left(31),
    )
}

/// Re-views a handle's database (O(1): `_load` validated the bytes), with
/// the span of its bytes for overlap checks.
///
/// # Safety
/// `handle` is NULL or points to a `sinew_mm_database`; if filled by
/// `sinew_mm_database_load`, its bytes are still alive.
unsafe fn view_database<'a>(
    handle: *const sinew_mm_database,
) -> Result<(Database<'a>, Span), sinew_status> {
    // SAFETY: this function's `# Safety` contract is the callee's, passed on unchanged.
    let h = unsafe { read(handle)? };
    if h.check != database_check(&h) {
        return Err(sinew_status::InvalidHandle);
    }
    // SAFETY: the check word proves `_load` validated `data`/`size`; the contract keeps those
    // bytes alive and unchanged while the handle is used.
    let bytes = unsafe { slice(h.data, h.size)? };
    let db = Database::from_validated_bytes(bytes).map_err(|_| sinew_status::InvalidHandle)?;
    if db.feature_count() != h.feature_count as usize || db.frame_count() != h.frame_count as usize
    {
        return Err(sinew_status::InvalidHandle);
    }
    Ok((db, Span::of(bytes)))
}

/// The status of a per-call error: the query, raw features and bound are
/// the caller's arguments, so a NaN or infinity in them is an invalid
/// argument (not invalid data, as in a container); the only parameter
/// these calls can get wrong otherwise is a frame past the last one.
fn call_status(e: Error) -> sinew_status {
    match e {
        Error::NonFinite { .. } => sinew_status::InvalidArgument,
        Error::InvalidParameter { .. } => sinew_status::OutOfRange,
        e => e.into(),
    }
}

/// Validates a motion-matching database container once (every group,
/// range, feature and bounding box: linear in frames × features) and
/// fills `*out` with a zero-copy view of it. Same rules for `bytes` as
/// `sinew_skeleton_load` (16-byte aligned, alive and unchanged while the
/// handle is used, nothing to free).
///
/// Errors: NULL_PARAMETER, MISALIGNED, INVALID_DATA (bad magic, truncated,
/// a count out of range, a non-finite feature, a bounding box that does
/// not bound its frames, …), UNSUPPORTED_VERSION, UNSUPPORTED_PLATFORM.
/// `*out` is untouched on error.
///
/// # Safety
/// `bytes` points to `len` readable bytes that outlive the handle; `out`
/// is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_mm_database_load(
    bytes: *const u8,
    len: usize,
    out: *mut sinew_mm_database,
) -> sinew_status {
    boundary! {
        out_param(out)?;
        // SAFETY: this function's `# Safety` contract makes the pointer valid for its length;
        // the helper checks NULL, alignment and size.
        let data = unsafe { container(bytes, len)? };
        let db = Database::from_bytes(data).map_err(sinew_status::of_container)?;
        // The core caps features at 256 and frames at 2^22: both fit.
        let count = |n: usize| u32::try_from(n).map_err(|_| sinew_status::InvalidData);
        let mut h = sinew_mm_database {
            data: data.as_ptr(),
            size: data.len(),
            feature_count: count(db.feature_count())?,
            frame_count: count(db.frame_count())?,
            check: 0,
        };
        h.check = database_check(&h);
        // SAFETY: `out_param` checked that the pointer is non-NULL and aligned; the contract makes
        // it writable.
        unsafe { write(out, h) };
        Ok(())
    }
}

/// Describes `db`: its counts, sample rate, root joint, facing and mirror
/// axes.
///
/// Errors: NULL_PARAMETER, INVALID_HANDLE. `*out` is untouched on error.
///
/// # Safety
/// `db` is a loaded handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_mm_database_info(
    db: *const sinew_mm_database,
    out: *mut sinew_mm_info,
) -> sinew_status {
    boundary! {
        out_param(out)?;
        // SAFETY: this function's `# Safety` contract.
        let (db, _) = unsafe { view_database(db)? };
        let axis = db.facing_axis();
        // Every count is bounded by the validated header (frames at 2^22).
        let info = sinew_mm_info {
            feature_count: db.feature_count() as u32,
            frame_count: db.frame_count() as u32,
            range_count: db.ranges().len() as u32,
            group_count: db.groups().len() as u32,
            sample_rate: db.sample_rate(),
            root_joint: db.root_joint() as u32,
            facing_axis: [axis.x, axis.y, axis.z],
            mirror_axis: db.mirror_axis(),
            mirror_joint_count: db.mirror_map().len() as u32,
        };
        // SAFETY: checked non-NULL above; the contract makes it writable.
        unsafe { write(out, info) };
        Ok(())
    }
}

/// Describes feature group `index` of `db` (`index < group_count`): a query
/// holds the group's `width` features from index `first`.
///
/// Errors: NULL_PARAMETER, INVALID_HANDLE, OUT_OF_RANGE. `*out` is
/// untouched on error.
///
/// # Safety
/// `db` is a loaded handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_mm_database_group(
    db: *const sinew_mm_database,
    index: u32,
    out: *mut sinew_mm_group,
) -> sinew_status {
    boundary! {
        out_param(out)?;
        // SAFETY: this function's `# Safety` contract.
        let (db, _) = unsafe { view_database(db)? };
        let g = db.groups().get(index as usize).ok_or(sinew_status::OutOfRange)?;
        let group = sinew_mm_group {
            kind: g.kind,
            joint: g.joint,
            frames_ahead: g.frames_ahead,
            first: g.first,
            width: g.width,
            weight: g.weight,
        };
        // SAFETY: checked non-NULL above; the contract makes it writable.
        unsafe { write(out, group) };
        Ok(())
    }
}

/// Which search a `search_with` call runs.
#[derive(Clone, Copy)]
enum Search {
    Pruned,
    Brute,
}

/// The body of both searches.
///
/// # Safety
/// As `sinew_mm_search`.
unsafe fn search_with(
    how: Search,
    db: *const sinew_mm_database,
    query: *const f32,
    query_len: usize,
    bound: f32,
    out_frame: *mut u32,
    out_cost: *mut f32,
) -> Result<(), sinew_status> {
    out_param(out_frame)?;
    out_param(out_cost)?;
    // SAFETY: the caller's `# Safety` contract; the helpers check NULL, alignment and size.
    let ((db, bytes), query) = unsafe { (view_database(db)?, slice(query, query_len)?) };
    let (f, c) = (Span::value(out_frame), Span::value(out_cost));
    disjoint(f, &[bytes, Span::of(query), c])?;
    disjoint(c, &[bytes, Span::of(query)])?;
    let found = match how {
        Search::Pruned => db.search(query, bound),
        Search::Brute => db.search_brute(query, bound),
    }
    .map_err(call_status)?;
    let Match { frame, cost } = found.ok_or(sinew_status::NotFound)?;
    // SAFETY: both checked non-NULL, aligned and disjoint above; the contract makes them writable.
    unsafe {
        write(out_frame, frame);
        write(out_cost, cost);
    }
    Ok(())
}

/// Finds the searchable frame of `db` with the least cost below `bound`
/// (the weighted squared distance of its normalized features to `query`,
/// `query_len` = `db->feature_count` normalized features), skipping boxes
/// of frames whose lower bound cannot win: the same frame and cost as
/// `sinew_mm_search_brute`, bit for bit; of equal costs the lowest frame
/// wins. `bound` is `INFINITY` for a plain search, or the current frame's
/// cost less a margin, to keep playing it unless a frame is clearly better.
/// Writes the frame to `*out_frame` and its cost to `*out_cost`.
///
/// Errors: NULL_PARAMETER, INVALID_HANDLE, MISALIGNED, BAD_LENGTH
/// (`query_len`), INVALID_ARGUMENT (a query value NaN or infinite, `bound`
/// NaN), OVERLAPPING_BUFFERS (an output overlaps the query, the database
/// or the other output), NOT_FOUND (no searchable frame costs less than
/// `bound`: keep the current frame). Nothing is written unless the status
/// is OK.
///
/// # Safety
/// `db` is a loaded handle; `query` has `query_len` readable floats;
/// `out_frame` and `out_cost` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_mm_search(
    db: *const sinew_mm_database,
    query: *const f32,
    query_len: usize,
    bound: f32,
    out_frame: *mut u32,
    out_cost: *mut f32,
) -> sinew_status {
    boundary! {
        // SAFETY: this function's `# Safety` contract is the callee's, passed on unchanged.
        unsafe { search_with(Search::Pruned, db, query, query_len, bound, out_frame, out_cost) }
    }
}

/// `sinew_mm_search` visiting every frame in SIMD lanes, without pruning:
/// the reference the pruned search equals. Same arguments, results and
/// errors.
///
/// # Safety
/// As `sinew_mm_search`.
#[no_mangle]
pub unsafe extern "C" fn sinew_mm_search_brute(
    db: *const sinew_mm_database,
    query: *const f32,
    query_len: usize,
    bound: f32,
    out_frame: *mut u32,
    out_cost: *mut f32,
) -> sinew_status {
    boundary! {
        // SAFETY: this function's `# Safety` contract is the callee's, passed on unchanged.
        unsafe { search_with(Search::Brute, db, query, query_len, bound, out_frame, out_cost) }
    }
}

/// Writes to `*out_cost` the cost of `frame` against `query`, computed as
/// the searches compute it (`INFINITY` for a frame a search may not
/// return): the cost a search reported for that frame, bit for bit.
///
/// Errors: NULL_PARAMETER, INVALID_HANDLE, MISALIGNED, BAD_LENGTH
/// (`query_len` not `db->feature_count`), INVALID_ARGUMENT (a query value
/// NaN or infinite), OUT_OF_RANGE (`frame >= db->frame_count`),
/// OVERLAPPING_BUFFERS. `*out_cost` is untouched on error.
///
/// # Safety
/// `db` is a loaded handle; `query` has `query_len` readable floats;
/// `out_cost` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_mm_cost(
    db: *const sinew_mm_database,
    query: *const f32,
    query_len: usize,
    frame: u32,
    out_cost: *mut f32,
) -> sinew_status {
    boundary! {
        out_param(out_cost)?;
        // SAFETY: this function's `# Safety` contract; the helpers check NULL, alignment and size.
        let ((db, bytes), query) = unsafe { (view_database(db)?, slice(query, query_len)?) };
        disjoint(Span::value(out_cost), &[bytes, Span::of(query)])?;
        let cost = db.cost(query, frame as usize).map_err(call_status)?;
        // SAFETY: checked non-NULL and disjoint above; the contract makes it writable.
        unsafe { write(out_cost, cost) };
        Ok(())
    }
}

/// Normalizes raw features as the database stored its own:
/// `out[k] = (raw[k] - mean[first + k]) * scale[first + k]`, for a run of
/// `raw_len` features starting at feature `first` (a whole query, or one
/// group of it).
///
/// Errors: NULL_PARAMETER, INVALID_HANDLE, MISALIGNED, BAD_LENGTH
/// (`raw_len` and `out_len` differ, or the run passes the last feature),
/// INVALID_ARGUMENT (a raw value NaN or infinite), OVERLAPPING_BUFFERS.
/// `out` is untouched on error.
///
/// # Safety
/// `db` is a loaded handle; `raw` has `raw_len` readable floats; `out` has
/// `out_len` writable floats.
#[no_mangle]
pub unsafe extern "C" fn sinew_mm_normalize(
    db: *const sinew_mm_database,
    first: u32,
    raw: *const f32,
    raw_len: usize,
    out: *mut f32,
    out_len: usize,
) -> sinew_status {
    boundary! {
        // SAFETY: this function's `# Safety` contract; the helpers check NULL, alignment and size.
        let ((db, bytes), raw) = unsafe { (view_database(db)?, slice(raw, raw_len)?) };
        // SAFETY: as above; the overlap check below runs before anything is written.
        let out = unsafe { slice_mut(out, out_len)? };
        disjoint(Span::of(out), &[bytes, Span::of(raw)])?;
        db.normalize(first as usize, raw, out).map_err(call_status)?;
        Ok(())
    }
}

/// Copies frame `frame`'s normalized features into `out` (`out_len` =
/// `db->feature_count`): the query that matches the frame exactly.
///
/// Errors: NULL_PARAMETER, INVALID_HANDLE, MISALIGNED, BAD_LENGTH,
/// OUT_OF_RANGE (`frame >= db->frame_count`), OVERLAPPING_BUFFERS (`out`
/// inside the database). `out` is untouched on error.
///
/// # Safety
/// `db` is a loaded handle; `out` has `out_len` writable floats.
#[no_mangle]
pub unsafe extern "C" fn sinew_mm_frame_features(
    db: *const sinew_mm_database,
    frame: u32,
    out: *mut f32,
    out_len: usize,
) -> sinew_status {
    boundary! {
        // SAFETY: this function's `# Safety` contract; the helpers check NULL, alignment and size.
        let ((db, bytes), out) = unsafe { (view_database(db)?, slice_mut(out, out_len)?) };
        disjoint(Span::of(out), &[bytes])?;
        db.frame_features(frame as usize, out).map_err(call_status)?;
        Ok(())
    }
}

/// Where database frame `frame` plays: `*out_range` is the index of its
/// frame range, `*out_local` the frame within the range (the clip at time
/// `local / sample_rate`), `*out_clip` the clip's index in the set the
/// database was built from, `*out_mirrored` 1 when the range plays the clip
/// mirrored, else 0.
///
/// Errors: NULL_PARAMETER, INVALID_HANDLE, OUT_OF_RANGE (`frame >=
/// db->frame_count`), OVERLAPPING_BUFFERS (two outputs overlap, or one lies
/// inside the database). Nothing is written on error.
///
/// # Safety
/// `db` is a loaded handle; each output is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_mm_locate(
    db: *const sinew_mm_database,
    frame: u32,
    out_range: *mut u32,
    out_local: *mut u32,
    out_clip: *mut u32,
    out_mirrored: *mut u32,
) -> sinew_status {
    boundary! {
        let outs = [out_range, out_local, out_clip, out_mirrored];
        for o in outs {
            out_param(o)?;
        }
        // SAFETY: this function's `# Safety` contract.
        let (db, bytes) = unsafe { view_database(db)? };
        let spans = outs.map(|o| Span::value(o.cast_const()));
        for (i, s) in spans.iter().enumerate() {
            disjoint(*s, &[bytes])?;
            disjoint(*s, &spans[i + 1..])?;
        }
        let (range, local) = db.locate(frame as usize).ok_or(sinew_status::OutOfRange)?;
        let r = db.ranges().get(range).ok_or(sinew_status::InvalidHandle)?;
        // A validated database has at most 2^22 frames, so both indices fit.
        let values = [range as u32, local as u32, r.clip, u32::from(r.mirrored())];
        for (o, v) in outs.into_iter().zip(values) {
            // SAFETY: each output was checked non-NULL, aligned and disjoint above; the contract
            // makes it writable.
            unsafe { write(o, v) };
        }
        Ok(())
    }
}
