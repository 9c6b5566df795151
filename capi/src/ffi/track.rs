//! Event tracks: named events at times or over ranges, and triggering,
//! which reports every edge the playhead crossed between two times.
//!
//! An event track is a `sinew_event_track`: pointers to the caller's event
//! array, name table and sorted range list. Every call validates it
//! (linear in its events), so a track edited between calls is never read
//! in an invalid state.

use core::mem::{align_of, offset_of, size_of};

use sinew_core::track::event::{self, Edge, EdgeBuffer, EdgeKind, Event, EventTrack, Triggered};

use sinew_core::math::Quat;
use sinew_core::track::curve::Cursor;
use sinew_core::track::store::{Encoding, TrackKind, TrackSet, TrackValue};

use super::clip::time_mode;
use super::ptr::{
    container, disjoint, handle_check, out_param, read, slice, slice_mut, utf8, write, Span,
};
use super::status::sinew_status;

/// Edge kind: an instant event was passed.
pub const SINEW_EDGE_INSTANT: u32 = 0;

/// Edge kind: the playhead entered a range event (its start forwards, its end backwards).
pub const SINEW_EDGE_ENTER: u32 = 1;

/// Edge kind: the playhead left a range event (its end forwards, its start backwards).
pub const SINEW_EDGE_LEAVE: u32 = 2;

/// One event: an instant (`start == end`) or a range (`start < end`), in
/// seconds within the clip, named by `name_len` bytes at `name_offset` of
/// the track's name table (0 for an unnamed event).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct sinew_event {
    /// Start time, seconds.
    pub start: f32,
    /// End time, seconds, `>= start`.
    pub end: f32,
    /// The caller's id, reported with each edge.
    pub id: u32,
    /// Byte offset of the name in the name table.
    pub name_offset: u32,
    /// Byte length of the name.
    pub name_len: u32,
}

const _: () = {
    assert!(size_of::<sinew_event>() == size_of::<Event>());
    assert!(align_of::<sinew_event>() == align_of::<Event>());
    assert!(offset_of!(sinew_event, start) == offset_of!(Event, start));
    assert!(offset_of!(sinew_event, end) == offset_of!(Event, end));
    assert!(offset_of!(sinew_event, id) == offset_of!(Event, id));
    assert!(offset_of!(sinew_event, name_offset) == offset_of!(Event, name_offset));
    assert!(offset_of!(sinew_event, name_len) == offset_of!(Event, name_len));
};

/// An event track over caller memory, which must stay alive and unchanged
/// during each call that reads it.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sinew_event_track {
    /// Length of the clip cycle, seconds, finite and `> 0`.
    pub duration: f32,
    /// Events sorted by start time, each within `[0, duration]`.
    pub events: *const sinew_event,
    /// Number of events.
    pub event_count: usize,
    /// UTF-8 name table (NULL with length 0 when no event is named).
    pub names: *const u8,
    /// Bytes in the name table.
    pub names_len: usize,
    /// Indices of the range events sorted by end time, as
    /// `sinew_event_sort_range_ends` writes them.
    pub ranges: *const u32,
    /// Number of range events.
    pub range_count: usize,
}

/// One edge crossing reported by triggering.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct sinew_edge {
    /// Index of the event in the track.
    pub event: u32,
    /// The event's id.
    pub id: u32,
    /// Time of the edge within the clip, seconds: the event's start or end.
    pub time: f32,
    /// Clip cycle of the crossing (always 0 when clamped).
    pub cycle: i32,
    /// `SINEW_EDGE_INSTANT`, `SINEW_EDGE_ENTER` or `SINEW_EDGE_LEAVE`.
    pub kind: u32,
    /// 1 when the playhead crossed the edge going forwards, else 0.
    pub forward: u32,
}

/// How many edges a triggering call wrote and how many did not fit.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct sinew_triggered {
    /// Edges written to the front of the output buffer, in play order.
    pub written: u64,
    /// Edges crossed after those that did not fit.
    pub dropped: u64,
}

impl From<Triggered> for sinew_triggered {
    fn from(t: Triggered) -> Self {
        sinew_triggered {
            written: t.written as u64,
            dropped: t.dropped,
        }
    }
}

pub(crate) fn c_edge(e: &Edge) -> sinew_edge {
    sinew_edge {
        event: e.event,
        id: e.id,
        time: e.time,
        cycle: e.cycle,
        kind: match e.kind {
            EdgeKind::Instant => SINEW_EDGE_INSTANT,
            EdgeKind::Enter => SINEW_EDGE_ENTER,
            EdgeKind::Leave => SINEW_EDGE_LEAVE,
        },
        forward: u32::from(e.forward),
    }
}

/// Views and validates a C event track.
///
/// # Safety
/// `t`'s pointers are valid for their lengths during `'a`.
pub(crate) unsafe fn view_event_track<'a>(
    t: &sinew_event_track,
) -> Result<EventTrack<'a>, sinew_status> {
    // SAFETY: the caller's contract makes each pointer valid for its length;
    // the helpers check NULL, alignment and size.
    let (events, names, ranges) = unsafe {
        (
            slice(t.events, t.event_count)?,
            slice(t.names, t.names_len)?,
            slice(t.ranges, t.range_count)?,
        )
    };
    let events: &[Event] = bytemuck::cast_slice(events);
    EventTrack::new(t.duration, events, names, ranges).map_err(invalid_argument)
}

/// The track's data is the caller's argument, so a NaN time in it is an
/// invalid argument here, as the other per-call checks are.
fn invalid_argument(e: sinew_core::Error) -> sinew_status {
    match e {
        sinew_core::Error::NonFinite { .. } => sinew_status::InvalidArgument,
        e => e.into(),
    }
}

/// Writes into `out` the indices of the range events (`start < end`) of
/// `events`, sorted by end time and then index: the `ranges` of a
/// `sinew_event_track`. `*written` is how many (set-up time: quadratic in
/// the worst case).
///
/// Errors: NULL_PARAMETER, MISALIGNED, BAD_LENGTH, BUFFER_TOO_SMALL (fewer
/// entries than range events), CAPACITY_EXCEEDED. `out` and `*written` are
/// untouched on error.
///
/// # Safety
/// `events` has `event_count` entries, `out` has `out_len` entries and
/// `written` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_event_sort_range_ends(
    events: *const sinew_event,
    event_count: usize,
    out: *mut u32,
    out_len: usize,
    written: *mut usize,
) -> sinew_status {
    boundary! {
        out_param(written)?;
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let (events, out) = unsafe { (slice(events, event_count)?, slice_mut(out, out_len)?) };
        let n = event::sort_range_ends(bytemuck::cast_slice(events), out)?;
        // SAFETY: `written` was checked non-NULL above; the contract makes it writable.
        unsafe { write(written, n) };
        Ok(())
    }
}

/// Reports the edges of `track` crossed by play from `from` to `to`
/// seconds, in play order, each crossing exactly once over a chain of
/// calls. `mode` is `SINEW_TIME_LOOP` (times unwrapped: a call may cross
/// the loop point any number of times, either way) or `SINEW_TIME_CLAMP`
/// (times clamped to the clip). At most `out_len` edges are written; the
/// rest are counted in `result->dropped`.
///
/// Errors: NULL_PARAMETER, MISALIGNED, BAD_LENGTH, INVALID_ARGUMENT (a NaN
/// or infinite time, an unknown mode, an invalid track: events unsorted or
/// outside the clip, a name outside the table, ranges not as
/// `sinew_event_sort_range_ends` writes them). `out` and `*result` are
/// untouched on error.
///
/// # Safety
/// `track` points to a `sinew_event_track` whose pointers are valid for
/// their lengths; `out` has `out_len` writable entries; `result` is
/// writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_event_trigger(
    track: *const sinew_event_track,
    from: f32,
    to: f32,
    mode: u32,
    out: *mut sinew_edge,
    out_len: usize,
    result: *mut sinew_triggered,
) -> sinew_status {
    boundary! {
        out_param(result)?;
        let mode = time_mode(mode)?;
        // SAFETY: this function's `# Safety` contract makes `track` readable and its
        // pointers valid; the helpers check NULL, alignment and size.
        let track = unsafe { view_event_track(&read(track)?)? };
        // SAFETY: as above, for `out`.
        let out = unsafe { slice_mut(out, out_len)? };
        let t = track
            .trigger_into(from, to, mode, &mut CEdges(out))
            .map_err(invalid_argument)?;
        // SAFETY: `result` was checked non-NULL above; the contract makes it writable.
        unsafe { write(result, t.into()) };
        Ok(())
    }
}

/// A C edge array as the core's edge buffer: each edge is converted as
/// triggering writes it, so a C buffer of any length needs no copy.
pub(crate) struct CEdges<'a>(pub(crate) &'a mut [sinew_edge]);

impl EdgeBuffer for CEdges<'_> {
    fn capacity(&self) -> usize {
        self.0.len()
    }

    fn put(&mut self, i: usize, edge: Edge) {
        if let Some(slot) = self.0.get_mut(i) {
            *slot = c_edge(&edge);
        }
    }
}

/// Track kind of a track set's track: one float.
pub const SINEW_TRACK_FLOAT: u32 = 0;
/// Track kind: two floats.
pub const SINEW_TRACK_VEC2: u32 = 1;
/// Track kind: three floats.
pub const SINEW_TRACK_VEC3: u32 = 2;
/// Track kind: four floats.
pub const SINEW_TRACK_VEC4: u32 = 3;
/// Track kind: a rotation, quaternion `(x, y, z, w)`.
pub const SINEW_TRACK_QUAT: u32 = 4;

const TRACK_SET_TAG: u64 = 0x5349_4E45_5754_524B; // "SINEWTRK"

/// A loaded track set: a caller-owned view of a validated `SINEWTRK`
/// container (written by `sinew_core::track::store::write_track_set`).
/// Filled by `sinew_track_set_load`; the bytes must outlive the handle and
/// stay unchanged.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sinew_track_set {
    /// The container bytes.
    pub data: *const u8,
    /// Their length in bytes.
    pub size: usize,
    /// Number of tracks.
    pub track_count: u32,
    /// Floats `sinew_track_set_sample_all` writes: every component of
    /// every track (a rotation takes four).
    pub component_count: u32,
    /// Private: lets functions reject a handle that `_load` did not fill.
    pub check: u64,
}

/// One track of a set.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct sinew_track_info {
    /// `SINEW_TRACK_*`.
    pub kind: u32,
    /// Floats per value (1 to 4).
    pub components: u32,
    /// Number of keys.
    pub key_count: u32,
    /// The caller's target id, or `UINT32_MAX` for none.
    pub target: u32,
    /// 1 when quantized to 16 bits, 0 when raw.
    pub quantized: u32,
    /// First and last key times, seconds.
    pub start: f32,
    /// Last key time, seconds.
    pub end: f32,
    /// The track's name (not NUL-terminated), inside the container.
    pub name: *const u8,
    /// Its length in bytes.
    pub name_len: usize,
}

fn track_set_check(h: &sinew_track_set) -> u64 {
    handle_check(
        h.data,
        h.size,
        h.track_count,
        TRACK_SET_TAG ^ u64::from(h.component_count).rotate_left(31),
    )
}

/// Re-views a handle's track set (O(tracks): `_load` validated the bytes).
///
/// # Safety
/// `handle` is NULL or points to a `sinew_track_set`; if filled by
/// `sinew_track_set_load`, its bytes are still alive.
unsafe fn view_track_set<'a>(handle: *const sinew_track_set) -> Result<TrackSet<'a>, sinew_status> {
    // SAFETY: this function's `# Safety` contract is the callee's, passed on unchanged.
    let h = unsafe { read(handle)? };
    if h.check != track_set_check(&h) {
        return Err(sinew_status::InvalidHandle);
    }
    // SAFETY: the check word proves `_load` validated `data`/`size`; the contract keeps those
    // bytes alive and unchanged while the handle is used.
    let bytes = unsafe { slice(h.data, h.size)? };
    TrackSet::from_validated_bytes(bytes).map_err(|_| sinew_status::InvalidHandle)
}

/// Validates a track set container once (linear in its keys) and fills
/// `*out` with a zero-copy view of it. Same rules for `bytes` as
/// `sinew_skeleton_load`.
///
/// Errors: NULL_PARAMETER, MISALIGNED, INVALID_DATA, UNSUPPORTED_VERSION,
/// UNSUPPORTED_PLATFORM.
///
/// # Safety
/// As `sinew_skeleton_load`.
#[no_mangle]
pub unsafe extern "C" fn sinew_track_set_load(
    bytes: *const u8,
    len: usize,
    out: *mut sinew_track_set,
) -> sinew_status {
    boundary! {
        out_param(out)?;
        // SAFETY: this function's `# Safety` contract makes the pointer valid for its length;
        // the helper checks NULL, alignment and size.
        let data = unsafe { container(bytes, len)? };
        let set = TrackSet::from_bytes(data).map_err(sinew_status::of_container)?;
        let count = |n: usize| u32::try_from(n).map_err(|_| sinew_status::CapacityExceeded);
        let mut h = sinew_track_set {
            data: data.as_ptr(),
            size: data.len(),
            track_count: count(set.len())?,
            component_count: count(set.component_count())?,
            check: 0,
        };
        h.check = track_set_check(&h);
        // SAFETY: `out_param` checked that the pointer is non-NULL and aligned; the contract makes
        // it writable.
        unsafe { write(out, h) };
        Ok(())
    }
}

/// Describes track `index` of `set`.
///
/// Errors: NULL_PARAMETER, INVALID_HANDLE, OUT_OF_RANGE. `*out` is
/// untouched on error.
///
/// # Safety
/// `set` is a loaded handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_track_set_info(
    set: *const sinew_track_set,
    index: u32,
    out: *mut sinew_track_info,
) -> sinew_status {
    boundary! {
        out_param(out)?;
        // SAFETY: this function's `# Safety` contract.
        let set = unsafe { view_track_set(set)? };
        let t = set.track(index as usize).ok_or(sinew_status::OutOfRange)?;
        let times = t.times();
        let info = sinew_track_info {
            kind: c_kind(t.kind())?,
            components: t.kind().components() as u32,
            key_count: times.len() as u32,
            target: t.target().unwrap_or(u32::MAX),
            quantized: u32::from(t.encoding() == Encoding::Quantized),
            start: times.first().copied().unwrap_or(0.0),
            end: times.last().copied().unwrap_or(0.0),
            name: t.name().as_ptr(),
            name_len: t.name().len(),
        };
        // SAFETY: checked non-NULL above; the contract makes it writable.
        unsafe { write(out, info) };
        Ok(())
    }
}

/// Index of the first track named by the `name_len` bytes at `name`.
///
/// Errors: NULL_PARAMETER, INVALID_HANDLE, INVALID_ARGUMENT (not UTF-8),
/// NOT_FOUND. `*index` is untouched on error.
///
/// # Safety
/// `set` is a loaded handle; `name` has `name_len` bytes; `index` is NULL
/// or writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_track_set_find(
    set: *const sinew_track_set,
    name: *const u8,
    name_len: usize,
    index: *mut u32,
) -> sinew_status {
    boundary! {
        out_param(index)?;
        // SAFETY: this function's `# Safety` contract.
        let (set, name) = unsafe { (view_track_set(set)?, slice(name, name_len)?) };
        let i = set.find(utf8(name)?).ok_or(sinew_status::NotFound)?;
        // SAFETY: checked non-NULL above; the contract makes it writable.
        unsafe { write(index, i as u32) };
        Ok(())
    }
}

/// Samples track `index` at `t` seconds (clamped to its keys) into `out`
/// (`out_len` = the track's components). `cursor` is NULL (a binary
/// search) or the caller's playback cursor for this track (start it at 0):
/// O(1) amortised in playback, the same values.
///
/// Errors: NULL_PARAMETER, INVALID_HANDLE, OUT_OF_RANGE, INVALID_ARGUMENT
/// (NaN or infinite `t`), MISALIGNED, BAD_LENGTH. `out` is untouched on
/// error.
///
/// # Safety
/// `set` is a loaded handle; `cursor` is NULL or readable and writable;
/// `out` has `out_len` writable floats.
#[no_mangle]
pub unsafe extern "C" fn sinew_track_set_sample(
    set: *const sinew_track_set,
    index: u32,
    t: f32,
    cursor: *mut usize,
    out: *mut f32,
    out_len: usize,
) -> sinew_status {
    boundary! {
        if !t.is_finite() {
            return Err(sinew_status::InvalidArgument);
        }
        // SAFETY: this function's `# Safety` contract.
        let (set, out) = unsafe { (view_track_set(set)?, slice_mut(out, out_len)?) };
        let track = set.track(index as usize).ok_or(sinew_status::OutOfRange)?;
        if out_len != track.kind().components() {
            return Err(sinew_status::BadLength);
        }
        let mut c = if cursor.is_null() {
            Cursor::new()
        } else {
            // SAFETY: a non-NULL `cursor` is readable by the contract.
            Cursor::at(unsafe { read(cursor)? })
        };
        let random = cursor.is_null();
        match track.kind() {
            TrackKind::Float => out[0] = sample_one::<f32>(&track, random, &mut c, t)?,
            TrackKind::Vec2 => out.copy_from_slice(&sample_one::<[f32; 2]>(&track, random, &mut c, t)?),
            TrackKind::Vec3 => out.copy_from_slice(&sample_one::<[f32; 3]>(&track, random, &mut c, t)?),
            TrackKind::Vec4 => out.copy_from_slice(&sample_one::<[f32; 4]>(&track, random, &mut c, t)?),
            TrackKind::Quat => {
                let q = sample_one::<Quat>(&track, random, &mut c, t)?;
                out.copy_from_slice(&[q.x, q.y, q.z, q.w]);
            }
            _ => return Err(sinew_status::InvalidHandle),
        }
        if !cursor.is_null() {
            // SAFETY: non-NULL, and writable by the contract.
            unsafe { write(cursor, c.key()) };
        }
        Ok(())
    }
}

fn c_kind(k: TrackKind) -> Result<u32, sinew_status> {
    Ok(match k {
        TrackKind::Float => SINEW_TRACK_FLOAT,
        TrackKind::Vec2 => SINEW_TRACK_VEC2,
        TrackKind::Vec3 => SINEW_TRACK_VEC3,
        TrackKind::Vec4 => SINEW_TRACK_VEC4,
        TrackKind::Quat => SINEW_TRACK_QUAT,
        // A kind added to the core later has no C value yet.
        _ => return Err(sinew_status::InvalidHandle),
    })
}

fn sample_one<V: TrackValue>(
    track: &sinew_core::track::store::Track<'_>,
    random: bool,
    cursor: &mut Cursor,
    t: f32,
) -> Result<V, sinew_status> {
    let typed = track.typed::<V>()?;
    Ok(if random {
        typed.sample(t)
    } else {
        typed.sample_with(cursor, t)
    })
}

/// Samples every track of `set` at `t` seconds into `out`: every component
/// of every track in track order (`component_count` floats; a rotation
/// writes x, y, z, w), the float channels four tracks at a time in SIMD
/// lanes. `cursors` holds one playback cursor per track (start them at 0).
///
/// Errors: NULL_PARAMETER, INVALID_HANDLE, INVALID_ARGUMENT (NaN or
/// infinite `t`), MISALIGNED, BAD_LENGTH (`cursor_count` not
/// `track_count`, `out_len` not `component_count`), OVERLAPPING_BUFFERS.
/// `out` is untouched on error.
///
/// # Safety
/// `set` is a loaded handle; `cursors` has `cursor_count` readable and
/// writable entries; `out` has `out_len` writable floats.
#[no_mangle]
pub unsafe extern "C" fn sinew_track_set_sample_all(
    set: *const sinew_track_set,
    t: f32,
    cursors: *mut usize,
    cursor_count: usize,
    out: *mut f32,
    out_len: usize,
) -> sinew_status {
    boundary! {
        if !t.is_finite() {
            return Err(sinew_status::InvalidArgument);
        }
        // SAFETY: this function's `# Safety` contract.
        let (set, keys, out) = unsafe {
            (view_track_set(set)?, slice_mut(cursors, cursor_count)?, slice_mut(out, out_len)?)
        };
        disjoint(Span::of(out), &[Span::of(keys)])?;
        // SAFETY: `Cursor` is `#[repr(transparent)]` over `usize` and every `usize` is a valid
        // cursor, so the caller's keys are the same memory as cursors; the slice is exclusive.
        let cursors: &mut [Cursor] =
            unsafe { core::slice::from_raw_parts_mut(keys.as_mut_ptr().cast::<Cursor>(), keys.len()) };
        set.sample_all(t, cursors, out).map_err(invalid_argument)?;
        Ok(())
    }
}
