//! Event tracks: named events at times or over ranges, and triggering,
//! which reports every edge the playhead crossed between two times.
//!
//! An event track is a `sinew_event_track`: pointers to the caller's event
//! array, name table and sorted range list. Every call validates it
//! (linear in its events), so a track edited between calls is never read
//! in an invalid state.

use core::mem::{align_of, offset_of, size_of};

use sinew_core::track::event::{self, Edge, EdgeBuffer, EdgeKind, Event, EventTrack, Triggered};

use super::clip::time_mode;
use super::ptr::{out_param, read, slice, slice_mut, write};
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
