//! Event tracks: named events at times or over ranges of a clip, and
//! triggering, which reports every event edge the playhead crossed between
//! two times, in play order, exactly once.
//!
//! An [`EventTrack`] is a validated, zero-copy view over caller slices:
//! [`Event`] records sorted by start time (`#[repr(C)]`, `bytemuck::Pod`, so
//! they can live in a binary blob or in flash), one UTF-8 name table that the
//! events index by byte offset, and the indices of the range events sorted by
//! end time (filled once at set-up by [`sort_range_ends`]), so that a call
//! costs two binary searches per clip cycle plus the edges it reports.
//!
//! # Edges and the crossing rule
//!
//! An instant event (`start == end`) has one edge, at `start`. A range event
//! (`start < end`) has two: its start and its end. With the playhead at
//! time `t`, an edge at `e` counts as *passed* when `t > e` (ozz's rule: its
//! triggering reports an edge when `from <= e < to` going forwards and
//! `to <= e < from` going backwards). A call from `a` to `b` reports exactly
//! the edges whose passed state differs at `a` and at `b`, so for any chain
//! of calls `(a, b), (b, c), …` each crossing is reported once, an edge
//! lying exactly on a call boundary included:
//!
//! - forwards (`a < b`): the edges with `a <= e < b`, in increasing time;
//! - backwards (`b < a`): the edges with `b <= e < a`, in decreasing time,
//!   with [`Edge::forward`] false (ozz flips its rising flag the same way:
//!   here a range's end crossed backwards is an [`EdgeKind::Enter`]).
//!
//! At equal times, play order puts range ends before starts (leave one range,
//! then enter the next), then the track's order; backwards is the exact
//! reverse.
//!
//! **Looping** ([`TimeMode::Loop`]): time is unwrapped (continuous, like the
//! `t` given to clip sampling) and the track repeats every `duration`, so an
//! edge at `e` sits at every `e + k·duration`. An edge at `duration` and one
//! at `0` are both at the loop point: each is reported once per wrap, the
//! former first going forwards. A call may span many cycles; the output is
//! bounded by the caller's buffer and the rest is counted, not lost silently.
//!
//! **Clamped** ([`TimeMode::Clamp`]): times are clamped to `[0, duration]`
//! and nothing repeats. An edge at exactly `duration` counts as passed when
//! `t >= duration`, so an event that marks the end of a clip fires when play
//! reaches the end, and once more (backwards) when it leaves it.
//!
//! **Jumps.** ozz's triggering treats every call as continuous play and
//! reports all the edges between `from` and `to`, across as many loops as
//! that spans. A teleport (seek, restart, a switch to another clip) is not
//! play: make no triggering call for it and start the next call from the new
//! time, or use [`EventCursor::jump`].
//!
//! **Sync markers.** [`EventTrack::marker_phases`] writes the normalised
//! phases of the events with a given id, the form
//! [`crate::mix::Sample1D::markers`] takes.

use crate::clip::TimeMode;
use crate::error::Error;

/// One event of a track: an instant (`start == end`) or a range
/// (`start < end`), in seconds within `[0, duration]`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Event {
    /// Start time in seconds.
    pub start: f32,
    /// End time in seconds, `>= start`; equal to `start` for an instant event.
    pub end: f32,
    /// The caller's id for the event (an enum value, a hash): reported with each edge.
    pub id: u32,
    /// Byte offset of the name in the track's name table.
    pub name_offset: u32,
    /// Byte length of the name; 0 for an unnamed event.
    pub name_len: u32,
}

impl Event {
    /// An unnamed instant event at `time` seconds.
    #[inline]
    #[must_use]
    pub const fn instant(time: f32, id: u32) -> Self {
        Event {
            start: time,
            end: time,
            id,
            name_offset: 0,
            name_len: 0,
        }
    }

    /// An unnamed event over `start..=end` seconds (an instant when they are equal).
    #[inline]
    #[must_use]
    pub const fn range(start: f32, end: f32, id: u32) -> Self {
        Event {
            start,
            end,
            id,
            name_offset: 0,
            name_len: 0,
        }
    }

    /// The same event named by `len` bytes at `offset` of the name table.
    #[inline]
    #[must_use]
    pub const fn named(self, offset: u32, len: u32) -> Self {
        Event {
            name_offset: offset,
            name_len: len,
            ..self
        }
    }

    /// Whether the event has a duration (two edges) rather than one instant.
    #[inline]
    #[must_use]
    pub fn is_range(&self) -> bool {
        self.start < self.end
    }
}

/// What crossing an edge means for the playhead.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum EdgeKind {
    /// An instant event was passed.
    #[default]
    Instant,
    /// The playhead entered a range event (its start forwards, its end backwards).
    Enter,
    /// The playhead left a range event (its end forwards, its start backwards).
    Leave,
}

/// One edge crossing reported by triggering.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Edge {
    /// Index of the event in the track.
    pub event: u32,
    /// The event's [`Event::id`].
    pub id: u32,
    /// Time of the edge within the clip, seconds in `[0, duration]`: the
    /// event's start or end.
    pub time: f32,
    /// Clip cycle of the crossing: the edge's unwrapped time is
    /// `cycle * duration + time` (see each triggering function for the
    /// origin). Always 0 when clamped; saturates past the `i32` range.
    pub cycle: i32,
    /// Instant, or entering or leaving a range.
    pub kind: EdgeKind,
    /// Whether the playhead crossed the edge going forwards.
    pub forward: bool,
}

impl Edge {
    /// Whether this is the event's start edge (instants have only that one).
    #[inline]
    #[must_use]
    pub fn is_start(&self) -> bool {
        match self.kind {
            EdgeKind::Instant => true,
            EdgeKind::Enter => self.forward,
            EdgeKind::Leave => !self.forward,
        }
    }
}

/// How many edges a triggering call wrote and how many did not fit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Triggered {
    /// Edges written to the front of the output buffer, in play order.
    pub written: usize,
    /// Edges crossed after those, in play order, that did not fit.
    pub dropped: u64,
}

impl Triggered {
    /// All edges crossed, written or dropped (saturating).
    #[inline]
    #[must_use]
    pub fn total(&self) -> u64 {
        (self.written as u64).saturating_add(self.dropped)
    }
}

/// A validated event track over caller-owned slices.
#[derive(Clone, Copy, Debug)]
pub struct EventTrack<'a> {
    duration: f32,
    events: &'a [Event],
    ranges: &'a [u32],
    names: &'a str,
}

/// Writes into `out` the indices of the range events of `events` (those with
/// `start < end`), sorted by end time and then by index: the `ranges` slice
/// [`EventTrack::new`] needs. Returns how many it wrote. Set-up time only
/// (insertion sort, quadratic in the worst case).
///
/// # Errors
/// [`Error::BufferTooSmall`] when `out` holds fewer entries than there are
/// range events; [`Error::CapacityExceeded`] for more than `u32::MAX` events.
pub fn sort_range_ends(events: &[Event], out: &mut [u32]) -> Result<usize, Error> {
    if u32::try_from(events.len()).is_err() {
        return Err(Error::CapacityExceeded {
            capacity: u32::MAX as usize,
        });
    }
    let needed = events.iter().filter(|e| e.is_range()).count();
    if out.len() < needed {
        return Err(Error::BufferTooSmall {
            needed,
            actual: out.len(),
        });
    }
    let end = |i: u32| events.get(i as usize).map_or(f32::INFINITY, |e| e.end);
    let mut n = 0;
    for (i, e) in events.iter().enumerate() {
        if !e.is_range() {
            continue;
        }
        // Fits: checked above that the index range is u32.
        let i = i as u32;
        let mut at = n;
        // Stable: an equal end stays after the earlier index.
        while at > 0 && end(out[at - 1]).total_cmp(&end(i)).is_gt() {
            out[at] = out[at - 1];
            at -= 1;
        }
        out[at] = i;
        n += 1;
    }
    Ok(n)
}

impl<'a> EventTrack<'a> {
    /// Validates a track of `events` over a clip of `duration` seconds.
    ///
    /// - `events`: sorted by start time (equal starts in any order), each
    ///   with finite `start <= end` within `[0, duration]`;
    /// - `names`: one UTF-8 table; each event names `name_len` bytes at
    ///   `name_offset`, on character boundaries (empty table and zero
    ///   lengths for unnamed events);
    /// - `ranges`: the indices of the range events sorted by end time and
    ///   then index, exactly as [`sort_range_ends`] writes them (empty when
    ///   every event is an instant).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] (duration not finite and `> 0`, an end
    /// before its start, an event outside `[0, duration]`, events not sorted
    /// by start, a name outside the table or splitting a character, a table
    /// that is not UTF-8, `ranges` not as described), [`Error::NonFinite`]
    /// (an event time), [`Error::CapacityExceeded`] (more than `u32::MAX`
    /// events).
    pub fn new(
        duration: f32,
        events: &'a [Event],
        names: &'a [u8],
        ranges: &'a [u32],
    ) -> Result<Self, Error> {
        if !(duration.is_finite() && duration > 0.0) {
            return Err(Error::InvalidParameter {
                what: "event track duration must be finite and > 0",
            });
        }
        if u32::try_from(events.len()).is_err() {
            return Err(Error::CapacityExceeded {
                capacity: u32::MAX as usize,
            });
        }
        let names = core::str::from_utf8(names).map_err(|_| Error::InvalidParameter {
            what: "event name table is not UTF-8",
        })?;
        let mut previous = 0.0f32;
        let mut range_count = 0usize;
        for e in events {
            if !(e.start.is_finite() && e.end.is_finite()) {
                return Err(Error::NonFinite { what: "event time" });
            }
            if e.end < e.start {
                return Err(Error::InvalidParameter {
                    what: "event end is before its start",
                });
            }
            if e.start < 0.0 || e.end > duration {
                return Err(Error::InvalidParameter {
                    what: "event lies outside 0..=duration",
                });
            }
            if e.start < previous {
                return Err(Error::InvalidParameter {
                    what: "events are not sorted by start time",
                });
            }
            previous = e.start;
            if name_of(names, e).is_none() {
                return Err(Error::InvalidParameter {
                    what: "event name lies outside the name table or splits a character",
                });
            }
            range_count += usize::from(e.is_range());
        }
        // Strictly increasing (end, index) makes the entries distinct, so with
        // the right count and only range events they are all of them.
        let bad_ranges = Error::InvalidParameter {
            what: "ranges must list every range event once, sorted by end time then index",
        };
        if ranges.len() != range_count {
            return Err(bad_ranges);
        }
        let mut last: Option<(f32, u32)> = None;
        for &r in ranges {
            let Some(e) = events.get(r as usize) else {
                return Err(bad_ranges);
            };
            if !e.is_range() {
                return Err(bad_ranges);
            }
            if let Some((end, index)) = last {
                if !(end < e.end || (end == e.end && index < r)) {
                    return Err(bad_ranges);
                }
            }
            last = Some((e.end, r));
        }
        Ok(EventTrack {
            duration,
            events,
            ranges,
            names,
        })
    }

    /// Length of the clip cycle, seconds.
    #[inline]
    #[must_use]
    pub fn duration(&self) -> f32 {
        self.duration
    }

    /// The events, sorted by start time.
    #[inline]
    #[must_use]
    pub fn events(&self) -> &'a [Event] {
        self.events
    }

    /// Number of events.
    #[inline]
    #[must_use]
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Whether the track has no events.
    #[inline]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// Edges per clip cycle: one per instant, two per range.
    #[inline]
    #[must_use]
    pub fn edges_per_cycle(&self) -> usize {
        self.events.len() + self.ranges.len()
    }

    /// Name of event `i` (empty when unnamed), or `None` past the end.
    #[must_use]
    pub fn name(&self, i: usize) -> Option<&'a str> {
        name_of(self.names, self.events.get(i)?)
    }

    /// Index of the first event named `name` (linear: for set-up, not per frame).
    #[must_use]
    pub fn find(&self, name: &str) -> Option<usize> {
        (0..self.events.len()).find(|&i| self.name(i) == Some(name))
    }

    /// Writes the normalised phases (`start / duration`, in `0..1`) of the
    /// events with id `id` into `out`, ascending, and returns how many: the
    /// sync markers of a blend-space sample ([`crate::mix::Sample1D`]). An
    /// event at exactly `duration` is at the loop point and comes first as
    /// phase 0.
    ///
    /// # Errors
    /// [`Error::BufferTooSmall`] when more events match than `out` holds.
    pub fn marker_phases(&self, id: u32, out: &mut [f32]) -> Result<usize, Error> {
        let needed = self.events.iter().filter(|e| e.id == id).count();
        if out.len() < needed {
            return Err(Error::BufferTooSmall {
                needed,
                actual: out.len(),
            });
        }
        let mut n = 0;
        let at_end = |e: &&Event| e.start >= self.duration;
        for (_, slot) in self
            .events
            .iter()
            .filter(|e| e.id == id)
            .filter(at_end)
            .zip(out.iter_mut())
        {
            *slot = 0.0;
            n += 1;
        }
        for (e, slot) in self
            .events
            .iter()
            .filter(|e| e.id == id && !at_end(e))
            .zip(out.iter_mut().skip(n))
        {
            // Below 1: start < duration, and rounding up to 1 is clamped away.
            *slot = (e.start / self.duration).min(1.0 - f32::EPSILON / 2.0);
            n += 1;
        }
        Ok(n)
    }

    /// Reports the edges crossed playing from `from` to `to` seconds into
    /// `out`, in play order, and returns how many it wrote and dropped.
    ///
    /// With [`TimeMode::Loop`] the times are unwrapped (continuous, as given
    /// to clip sampling): a call may cross the loop point any number of
    /// times, either way, and [`Edge::cycle`] is the absolute cycle
    /// (`floor(time / duration)`), so an edge's unwrapped time is
    /// `cycle * duration + time`. The split into cycle and clip time is
    /// exact for non-negative times below `2^29` cycles; a negative time's
    /// clip time is rounded to `f32`, monotonically, so edges still come once.
    /// Long-running playback keeps more precision with
    /// [`EventTrack::trigger_wrapped`].
    ///
    /// With [`TimeMode::Clamp`] both times are clamped to `[0, duration]`.
    ///
    /// `from == to` reports nothing. Entries of `out` past `written` are
    /// left as they were.
    ///
    /// # Errors
    /// [`Error::NonFinite`] (`"trigger time"`) when `from` or `to` is NaN or
    /// infinite; nothing is written then.
    pub fn trigger(
        &self,
        from: f32,
        to: f32,
        mode: TimeMode,
        out: &mut [Edge],
    ) -> Result<Triggered, Error> {
        self.trigger_into(from, to, mode, out)
    }

    /// [`Self::trigger`] into any [`EdgeBuffer`] (a C array of another edge
    /// type, a ring buffer).
    ///
    /// # Errors
    /// As [`Self::trigger`].
    pub fn trigger_into<B: EdgeBuffer + ?Sized>(
        &self,
        from: f32,
        to: f32,
        mode: TimeMode,
        out: &mut B,
    ) -> Result<Triggered, Error> {
        if !(from.is_finite() && to.is_finite()) {
            return Err(Error::NonFinite {
                what: "trigger time",
            });
        }
        match mode {
            TimeMode::Loop => {
                let (ca, xa) = self.split(from);
                let (cb, xb) = self.split(to);
                Ok(self.run_loop(ca, xa, cb, xb, out))
            }
            TimeMode::Clamp => {
                let a = from.clamp(0.0, self.duration);
                let b = to.clamp(0.0, self.duration);
                Ok(self.run_clamp(a, b, out))
            }
        }
    }

    /// Looping triggering from clip time `from` to clip time `to`, `loops`
    /// cycles later (the signed number of times play passed the loop point;
    /// negative when playing backwards). Both times are in
    /// `[0, duration]`, a time equal to `duration` being the loop point
    /// (the next cycle's 0). All the arithmetic is exact in `f32`.
    ///
    /// [`Edge::cycle`] counts cycles from the one `from` is in: an edge's
    /// time relative to the start of that cycle is `cycle * duration + time`.
    ///
    /// # Errors
    /// [`Error::NonFinite`] (`"trigger time"`) for a NaN or infinite time,
    /// [`Error::InvalidParameter`] for a time outside `[0, duration]`;
    /// nothing is written then.
    pub fn trigger_wrapped(
        &self,
        from: f32,
        to: f32,
        loops: i32,
        out: &mut [Edge],
    ) -> Result<Triggered, Error> {
        self.trigger_wrapped_into(from, to, loops, out)
    }

    /// [`Self::trigger_wrapped`] into any [`EdgeBuffer`].
    ///
    /// # Errors
    /// As [`Self::trigger_wrapped`].
    pub fn trigger_wrapped_into<B: EdgeBuffer + ?Sized>(
        &self,
        from: f32,
        to: f32,
        loops: i32,
        out: &mut B,
    ) -> Result<Triggered, Error> {
        if !(from.is_finite() && to.is_finite()) {
            return Err(Error::NonFinite {
                what: "trigger time",
            });
        }
        let range = 0.0..=self.duration;
        if !(range.contains(&from) && range.contains(&to)) {
            return Err(Error::InvalidParameter {
                what: "trigger time must be in 0..=duration",
            });
        }
        let (ca, xa) = self.wrap(0, from);
        let (cb, xb) = self.wrap(i64::from(loops), to);
        Ok(self.run_loop(ca, xa, cb, xb, out))
    }

    /// `(cycle, time)` with `time` in `[0, duration)` for a time in `[0, duration]`.
    #[inline]
    fn wrap(&self, cycle: i64, t: f32) -> (i64, f32) {
        if t >= self.duration {
            (cycle + 1, 0.0)
        } else {
            (cycle, t)
        }
    }

    /// Splits an unwrapped time into `(cycle, time in [0, duration))`.
    fn split(&self, t: f32) -> (i64, f32) {
        let d = f64::from(self.duration);
        let t = f64::from(t);
        let mut q = libm::floor(t / d);
        // f32 * 2^29 fits the 53-bit mantissa: `t - q d` is exact there.
        let mut x = t - q * d;
        if x < 0.0 {
            q -= 1.0;
            x += d;
        } else if x >= d {
            q += 1.0;
            x -= d;
        }
        // Saturating casts: the cycle of a time near f32::MAX over a
        // duration near 0 is past i64; the span saturates consistently.
        let (cycle, x) = (q as i64, (x as f32).max(0.0));
        self.wrap(cycle, x)
    }

    /// Loop-mode triggering between normalised positions.
    fn run_loop<B: EdgeBuffer + ?Sized>(
        &self,
        ca: i64,
        xa: f32,
        cb: i64,
        xb: f32,
        out: &mut B,
    ) -> Triggered {
        let mut sink = Sink::new(out);
        let forward = (cb, xb) > (ca, xa);
        if (cb, xb) == (ca, xa) || self.events.is_empty() {
            return sink.done();
        }
        // The crossed edges are those at positions p with lo <= p < hi in
        // unwrapped time; walk the cycles of the low end's frame.
        let (base, lo, span, hi) = if forward {
            (ca, xa, cb.saturating_sub(ca), xb)
        } else {
            (cb, xb, ca.saturating_sub(cb), xa)
        };
        let per_cycle = self.edges_per_cycle() as u64;
        let window = |k: i64| loop_window(k, span, lo, hi, self.duration);
        let mut k = if forward { -1 } else { span };
        loop {
            if sink.full() {
                // Count the cycles still to play without walking them: the
                // ones strictly inside the span hold every edge.
                let (k_lo, k_hi) = if forward { (k, span) } else { (-1, k) };
                let mut rest = 0u64;
                let mut special = [-1, 0, span - 1, span];
                special.sort_unstable();
                for (i, &s) in special.iter().enumerate() {
                    let repeat = i > 0 && special[i - 1] == s;
                    if !repeat && s >= k_lo && s <= k_hi {
                        if let Some((l, h)) = window(s) {
                            rest = rest.saturating_add(self.count(l, h));
                        }
                    }
                }
                let (m_lo, m_hi) = (k_lo.max(1), k_hi.min(span - 2));
                if m_hi >= m_lo {
                    let cycles = (m_hi - m_lo).saturating_add(1) as u64;
                    rest = rest.saturating_add(cycles.saturating_mul(per_cycle));
                }
                sink.dropped = sink.dropped.saturating_add(rest);
                break;
            }
            if let Some((l, h)) = window(k) {
                self.emit(l, h, base.saturating_add(k), forward, &mut sink);
            }
            if forward {
                if k >= span {
                    break;
                }
                k += 1;
            } else {
                if k <= -1 {
                    break;
                }
                k -= 1;
            }
        }
        sink.done()
    }

    /// Clamp-mode triggering between times in `[0, duration]`.
    fn run_clamp<B: EdgeBuffer + ?Sized>(&self, a: f32, b: f32, out: &mut B) -> Triggered {
        let mut sink = Sink::new(out);
        if a == b {
            return sink.done();
        }
        let forward = a < b;
        let (lo, hi) = if forward { (a, b) } else { (b, a) };
        // Edges at `duration` are passed from `t >= duration` on.
        let hi = if hi >= self.duration {
            f32::INFINITY
        } else {
            hi
        };
        self.emit(lo, hi, 0, forward, &mut sink);
        sink.done()
    }

    #[inline]
    fn end_of(&self, r: u32) -> f32 {
        // Indices were validated; the fallback only keeps this panic-free.
        self.events.get(r as usize).map_or(f32::INFINITY, |e| e.end)
    }

    #[inline]
    fn start_of(&self, i: usize) -> f32 {
        self.events.get(i).map_or(f32::INFINITY, |e| e.start)
    }

    /// Index bounds of the starts and the range ends in `[lo, hi)`.
    #[inline]
    fn bounds(&self, lo: f32, hi: f32) -> (usize, usize, usize, usize) {
        let s0 = self.events.partition_point(|e| e.start < lo);
        let s1 = s0 + self.events[s0..].partition_point(|e| e.start < hi);
        let r0 = self.ranges.partition_point(|&r| self.end_of(r) < lo);
        let r1 = r0 + self.ranges[r0..].partition_point(|&r| self.end_of(r) < hi);
        (s0, s1, r0, r1)
    }

    /// Number of edges in `[lo, hi)` of one cycle.
    fn count(&self, lo: f32, hi: f32) -> u64 {
        let (s0, s1, r0, r1) = self.bounds(lo, hi);
        ((s1 - s0) + (r1 - r0)) as u64
    }

    /// Writes the edges in `[lo, hi)` of cycle `cycle` in play order.
    fn emit(
        &self,
        lo: f32,
        hi: f32,
        cycle: i64,
        forward: bool,
        sink: &mut Sink<'_, impl EdgeBuffer + ?Sized>,
    ) {
        let (s0, s1, r0, r1) = self.bounds(lo, hi);
        let cycle = i32::try_from(cycle).unwrap_or(if cycle < 0 { i32::MIN } else { i32::MAX });
        let (mut i, mut j) = if forward { (s0, r0) } else { (s1, r1) };
        loop {
            let left = (if forward {
                s1 - i + r1 - j
            } else {
                i - s0 + j - r0
            }) as u64;
            if left == 0 {
                return;
            }
            if sink.full() {
                sink.dropped = sink.dropped.saturating_add(left);
                return;
            }
            // Forwards, ends come before starts at equal times; backwards is
            // the exact reverse.
            let take_end = if forward {
                j < r1 && (i >= s1 || self.range_end(j) <= self.start_of(i))
            } else {
                j > r0 && (i <= s0 || self.range_end(j - 1) > self.start_of(i - 1))
            };
            let (index, time, is_start) = if take_end {
                let r = if forward { j } else { j - 1 };
                let e = self.ranges.get(r).copied().unwrap_or(0);
                if forward {
                    j += 1;
                } else {
                    j -= 1;
                }
                (e, self.end_of(e), false)
            } else {
                let s = if forward { i } else { i - 1 };
                if forward {
                    i += 1;
                } else {
                    i -= 1;
                }
                (s as u32, self.start_of(s), true)
            };
            let Some(ev) = self.events.get(index as usize) else {
                return;
            };
            let kind = if !ev.is_range() {
                EdgeKind::Instant
            } else if is_start == forward {
                EdgeKind::Enter
            } else {
                EdgeKind::Leave
            };
            sink.push(Edge {
                event: index,
                id: ev.id,
                time,
                cycle,
                kind,
                forward,
            });
        }
    }

    #[inline]
    fn range_end(&self, j: usize) -> f32 {
        self.ranges
            .get(j)
            .map_or(f32::INFINITY, |&r| self.end_of(r))
    }
}

/// The clip-time window `[lo, hi)` of cycle `k` (relative to the low end's
/// cycle) for unwrapped positions in `[lo_x, span·d + hi_x)`, with
/// `lo_x, hi_x` in `[0, d)`; `hi = ∞` takes the edges at `d` too.
#[inline]
fn loop_window(k: i64, span: i64, lo_x: f32, hi_x: f32, d: f32) -> Option<(f32, f32)> {
    // k·d + e >= lo_x: from the low end's time in its own cycle; only the
    // edges at `d` of the cycle before, when the low end is the loop point.
    let lo = match k {
        -1 if lo_x == 0.0 => d,
        -1 => return None,
        0 => lo_x,
        _ => 0.0,
    };
    // k·d + e < span·d + hi_x.
    let hi = match span - k {
        0 => hi_x,
        1 if hi_x == 0.0 => d,
        _ => f32::INFINITY,
    };
    (lo < hi).then_some((lo, hi))
}

/// Where triggering writes its edges: a fixed number of slots filled from
/// the front. `[Edge]` is one; a C binding implements it over its own edge
/// type, converting each edge as it is written, and the player over its
/// [`crate::player::PlayerEdge`]s (`E` is the type of edge stored).
pub trait EdgeBuffer<E = Edge> {
    /// Number of slots.
    fn capacity(&self) -> usize;
    /// Writes `edge` into slot `i` (`i < capacity()`).
    fn put(&mut self, i: usize, edge: E);
}

impl<E> EdgeBuffer<E> for [E] {
    #[inline]
    fn capacity(&self) -> usize {
        self.len()
    }

    #[inline]
    fn put(&mut self, i: usize, edge: E) {
        if let Some(slot) = self.get_mut(i) {
            *slot = edge;
        }
    }
}

/// The output buffer of one call.
struct Sink<'o, B: EdgeBuffer + ?Sized> {
    out: &'o mut B,
    written: usize,
    dropped: u64,
}

impl<'o, B: EdgeBuffer + ?Sized> Sink<'o, B> {
    fn new(out: &'o mut B) -> Self {
        Sink {
            out,
            written: 0,
            dropped: 0,
        }
    }

    #[inline]
    fn full(&self) -> bool {
        self.written >= self.out.capacity()
    }

    #[inline]
    fn push(&mut self, e: Edge) {
        if self.written < self.out.capacity() {
            self.out.put(self.written, e);
            self.written += 1;
        } else {
            self.dropped = self.dropped.saturating_add(1);
        }
    }

    fn done(self) -> Triggered {
        Triggered {
            written: self.written,
            dropped: self.dropped,
        }
    }
}

fn name_of<'a>(names: &'a str, e: &Event) -> Option<&'a str> {
    let start = e.name_offset as usize;
    let end = start.checked_add(e.name_len as usize)?;
    names.get(start..end)
}

/// A playhead that triggers a track as it moves: the caller-owned state of
/// [`EventTrack::trigger`] across frames, with jumps that report nothing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EventCursor {
    time: f32,
    mode: TimeMode,
}

impl EventCursor {
    /// A cursor at `time` seconds (unwrapped when looping).
    ///
    /// # Errors
    /// [`Error::NonFinite`] for a NaN or infinite `time`.
    pub fn new(time: f32, mode: TimeMode) -> Result<Self, Error> {
        if !time.is_finite() {
            return Err(Error::NonFinite {
                what: "trigger time",
            });
        }
        Ok(EventCursor { time, mode })
    }

    /// The current time.
    #[inline]
    #[must_use]
    pub fn time(&self) -> f32 {
        self.time
    }

    /// Plays to `to`, reporting the edges crossed (see [`EventTrack::trigger`]).
    ///
    /// # Errors
    /// As [`EventTrack::trigger`]; the cursor does not move then.
    pub fn advance(
        &mut self,
        track: &EventTrack<'_>,
        to: f32,
        out: &mut [Edge],
    ) -> Result<Triggered, Error> {
        let t = track.trigger(self.time, to, self.mode, out)?;
        self.time = to;
        Ok(t)
    }

    /// Moves to `to` without reporting anything (a seek, a restart).
    ///
    /// # Errors
    /// [`Error::NonFinite`] for a NaN or infinite `to`; the cursor does not move then.
    pub fn jump(&mut self, to: f32) -> Result<(), Error> {
        if !to.is_finite() {
            return Err(Error::NonFinite {
                what: "trigger time",
            });
        }
        self.time = to;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    extern crate alloc;

    use alloc::vec;
    use alloc::vec::Vec;

    use proptest::prelude::*;

    use super::*;

    const D: f32 = 1.0;

    /// Instants at 0 (id 10), 0.25 (11), 0.5 (12) and 1.0 (19); a range
    /// 0.6..0.8 (13) and a nested range 0.4..0.9 holding 0.5 (14).
    const EVENTS: [Event; 6] = [
        Event::instant(0.0, 10),
        Event::instant(0.25, 11),
        Event::range(0.4, 0.9, 14),
        Event::instant(0.5, 12),
        Event::range(0.6, 0.8, 13),
        Event::instant(1.0, 19),
    ];

    fn track(ranges: &mut [u32; 6]) -> EventTrack<'_> {
        let n = sort_range_ends(&EVENTS, ranges).unwrap();
        EventTrack::new(D, &EVENTS, b"", &ranges[..n]).unwrap()
    }

    /// `(id, time, cycle, kind, forward)` of each written edge.
    fn run(
        t: &EventTrack<'_>,
        a: f32,
        b: f32,
        mode: TimeMode,
    ) -> Vec<(u32, f32, i32, EdgeKind, bool)> {
        let mut out = [Edge::default_for_tests(); 64];
        let r = t.trigger(a, b, mode, &mut out).unwrap();
        assert_eq!(r.dropped, 0);
        out[..r.written]
            .iter()
            .map(|e| (e.id, e.time, e.cycle, e.kind, e.forward))
            .collect()
    }

    impl Edge {
        fn default_for_tests() -> Self {
            Edge {
                event: u32::MAX,
                id: 0,
                time: f32::NAN,
                cycle: 0,
                kind: EdgeKind::Instant,
                forward: true,
            }
        }
    }

    use EdgeKind::{Enter, Instant, Leave};
    use TimeMode::{Clamp, Loop};

    #[test]
    fn sort_range_ends_orders_nested_ranges_by_end() {
        let mut r = [0u32; 6];
        assert_eq!(sort_range_ends(&EVENTS, &mut r), Ok(2));
        assert_eq!(&r[..2], &[4, 2]);
        let mut short = [0u32; 1];
        assert_eq!(
            sort_range_ends(&EVENTS, &mut short),
            Err(Error::BufferTooSmall {
                needed: 2,
                actual: 1
            })
        );
    }

    #[test]
    fn forward_within_a_cycle() {
        let mut r = [0; 6];
        let t = track(&mut r);
        assert_eq!(
            run(&t, 0.2, 0.7, Loop),
            vec![
                (11, 0.25, 0, Instant, true),
                (14, 0.4, 0, Enter, true),
                (12, 0.5, 0, Instant, true),
                (13, 0.6, 0, Enter, true),
            ]
        );
        assert_eq!(
            run(&t, 0.7, 0.95, Loop),
            vec![(13, 0.8, 0, Leave, true), (14, 0.9, 0, Leave, true)]
        );
    }

    #[test]
    fn an_edge_on_a_call_boundary_is_reported_once() {
        let mut r = [0; 6];
        let t = track(&mut r);
        // Passed when t > e: reported by the call that starts on it.
        assert_eq!(
            run(&t, 0.2, 0.5, Loop),
            vec![(11, 0.25, 0, Instant, true), (14, 0.4, 0, Enter, true)]
        );
        assert_eq!(run(&t, 0.5, 0.55, Loop), vec![(12, 0.5, 0, Instant, true)]);
        // And by the backward call that ends on it.
        assert_eq!(run(&t, 0.55, 0.5, Loop), vec![(12, 0.5, 0, Instant, false)]);
        assert_eq!(run(&t, 0.5, 0.45, Loop), vec![]);
    }

    #[test]
    fn loop_wrap_reports_the_end_then_the_start() {
        let mut r = [0; 6];
        let t = track(&mut r);
        assert_eq!(
            run(&t, 0.95, 1.3, Loop),
            vec![
                (19, 1.0, 0, Instant, true),
                (10, 0.0, 1, Instant, true),
                (11, 0.25, 1, Instant, true),
            ]
        );
        // Stopping exactly on the loop point leaves both loop-point events
        // for the next call.
        assert_eq!(run(&t, 0.95, 1.0, Loop), vec![]);
        assert_eq!(
            run(&t, 1.0, 1.1, Loop),
            vec![(19, 1.0, 0, Instant, true), (10, 0.0, 1, Instant, true)]
        );
        // The same with clip times and a loop count.
        let mut out = [Edge::default_for_tests(); 8];
        let w = t.trigger_wrapped(0.95, 0.3, 1, &mut out).unwrap();
        assert_eq!(w.written, 3);
        assert_eq!((out[1].id, out[1].cycle), (10, 1));
        let w = t.trigger_wrapped(0.95, 1.0, 0, &mut out).unwrap();
        assert_eq!(w.written, 0);
        let w = t.trigger_wrapped(0.0, 0.1, 0, &mut out).unwrap();
        assert_eq!(w.written, 2);
        assert_eq!(
            (out[0].id, out[0].cycle, out[1].id, out[1].cycle),
            (19, -1, 10, 0)
        );
    }

    #[test]
    fn backward_play_reverses_order_and_flips_ranges() {
        let mut r = [0; 6];
        let t = track(&mut r);
        assert_eq!(
            run(&t, 0.85, 0.3, Loop),
            vec![
                (13, 0.8, 0, Enter, false),
                (13, 0.6, 0, Leave, false),
                (12, 0.5, 0, Instant, false),
                (14, 0.4, 0, Leave, false),
            ]
        );
        // Backwards over the loop point: 0 first, then 1.0 of the cycle before.
        assert_eq!(
            run(&t, 0.1, -0.05, Loop),
            vec![(10, 0.0, 0, Instant, false), (19, 1.0, -1, Instant, false)]
        );
        let mut out = [Edge::default_for_tests(); 8];
        let w = t.trigger_wrapped(0.1, 0.95, -1, &mut out).unwrap();
        assert_eq!(w.written, 2);
        assert_eq!(
            (out[0].id, out[0].cycle, out[1].id, out[1].cycle),
            (10, 0, 19, -1)
        );
    }

    #[test]
    fn equal_times_leave_before_enter() {
        let ev = [
            Event::range(0.2, 0.5, 1),
            Event::instant(0.5, 2),
            Event::range(0.5, 0.7, 3),
        ];
        let mut r = [0; 3];
        let n = sort_range_ends(&ev, &mut r).unwrap();
        let t = EventTrack::new(1.0, &ev, b"", &r[..n]).unwrap();
        let f = run(&t, 0.45, 0.55, Loop);
        assert_eq!(
            f,
            vec![
                (1, 0.5, 0, Leave, true),
                (2, 0.5, 0, Instant, true),
                (3, 0.5, 0, Enter, true)
            ]
        );
        let b = run(&t, 0.55, 0.45, Loop);
        assert_eq!(
            b,
            vec![
                (3, 0.5, 0, Leave, false),
                (2, 0.5, 0, Instant, false),
                (1, 0.5, 0, Enter, false)
            ]
        );
    }

    #[test]
    fn many_cycles_fill_the_buffer_and_count_the_rest() {
        let mut r = [0; 6];
        let t = track(&mut r);
        assert_eq!(t.edges_per_cycle(), 8);
        let mut out = [Edge::default_for_tests(); 5];
        // 0.2 .. 100.3: 8 edges per whole cycle; the first partial cycle has
        // 0.25 and everything after it (7), the last 0, 0.25 and 1.0 of the
        // cycle before (counted in the 8 of cycle 99).
        let r = t.trigger(0.2, 100.3, Loop, &mut out).unwrap();
        assert_eq!(r.written, 5);
        assert_eq!(r.total(), 7 + 99 * 8 + 2);
        let ids: Vec<u32> = out.iter().map(|e| e.id).collect();
        assert_eq!(ids, vec![11, 14, 12, 13, 13]);
        // The same number backwards, and with no buffer at all.
        let r = t.trigger(100.3, 0.2, Loop, &mut out).unwrap();
        assert_eq!(r.total(), 7 + 99 * 8 + 2);
        assert_eq!((out[0].id, out[0].cycle, out[1].id), (11, 100, 10));
        let r = t.trigger(0.2, 100.3, Loop, &mut []).unwrap();
        assert_eq!((r.written, r.dropped), (0, 7 + 99 * 8 + 2));
        // Billions of cycles cost no more than the buffer.
        let r = t.trigger_wrapped(0.2, 0.3, i32::MAX, &mut out).unwrap();
        assert_eq!(r.total(), 7 + (i32::MAX as u64 - 1) * 8 + 2);
        let r = t.trigger_wrapped(0.3, 0.2, i32::MIN, &mut out).unwrap();
        assert_eq!(r.total(), 1 + (1u64 << 31) * 8);
    }

    #[test]
    fn clamp_fires_end_events_at_the_end() {
        let mut r = [0; 6];
        let t = track(&mut r);
        assert_eq!(
            run(&t, 0.85, 5.0, Clamp),
            vec![(14, 0.9, 0, Leave, true), (19, 1.0, 0, Instant, true)]
        );
        assert_eq!(run(&t, 1.0, 2.0, Clamp), vec![]);
        assert_eq!(
            run(&t, 1.0, 0.95, Clamp),
            vec![(19, 1.0, 0, Instant, false)]
        );
        assert_eq!(run(&t, -3.0, 0.1, Clamp), vec![(10, 0.0, 0, Instant, true)]);
        assert_eq!(run(&t, 0.1, 0.0, Clamp), vec![(10, 0.0, 0, Instant, false)]);
        assert_eq!(run(&t, 0.0, -1.0, Clamp), vec![]);
        assert_eq!(run(&t, 0.95, 0.05, Clamp).len(), 6);
    }

    #[test]
    fn a_jump_reports_nothing() {
        let mut r = [0; 6];
        let t = track(&mut r);
        let mut c = EventCursor::new(0.1, Loop).unwrap();
        let mut out = [Edge::default_for_tests(); 8];
        assert_eq!(c.advance(&t, 0.3, &mut out).unwrap().written, 1);
        c.jump(7.45).unwrap();
        assert_eq!(c.time(), 7.45);
        let r = c.advance(&t, 7.55, &mut out).unwrap();
        assert_eq!((r.written, out[0].id, out[0].cycle), (1, 12, 7));
        assert_eq!(
            c.jump(f32::NAN),
            Err(Error::NonFinite {
                what: "trigger time"
            })
        );
        assert!(c.advance(&t, f32::INFINITY, &mut out).is_err());
        assert_eq!(c.time(), 7.55);
        assert!(EventCursor::new(f32::NAN, Clamp).is_err());
    }

    #[test]
    fn names_and_markers() {
        let names = "plant_lplant_rsnd_ü".as_bytes();
        let ev = [
            Event::instant(0.0, 1).named(0, 7),
            Event::instant(0.5, 2).named(7, 7),
            Event::instant(0.75, 3).named(14, 6),
            Event::instant(1.0, 1),
        ];
        let t = EventTrack::new(2.0, &ev, names, &[]).unwrap();
        assert_eq!(t.name(1), Some("plant_r"));
        assert_eq!(t.name(2), Some("snd_ü"));
        assert_eq!(t.name(3), Some(""));
        assert_eq!(t.name(4), None);
        assert_eq!(t.find("plant_r"), Some(1));
        assert_eq!(t.find("nope"), None);
        let mut m = [9.0f32; 3];
        assert_eq!(t.marker_phases(1, &mut m), Ok(2));
        assert_eq!(&m[..2], &[0.0, 0.5]);
        let at_end = [Event::instant(0.5, 1), Event::instant(2.0, 1)];
        let t = EventTrack::new(2.0, &at_end, b"", &[]).unwrap();
        assert_eq!(t.marker_phases(1, &mut m), Ok(2));
        assert_eq!(&m[..2], &[0.0, 0.25]);
        assert_eq!(
            t.marker_phases(1, &mut m[..1]),
            Err(Error::BufferTooSmall {
                needed: 2,
                actual: 1
            })
        );
    }

    #[test]
    fn validity() {
        let ok = [Event::instant(0.1, 0), Event::range(0.2, 0.4, 1)];
        assert!(EventTrack::new(1.0, &ok, b"", &[1]).is_ok());
        assert!(EventTrack::new(1.0, &[], b"", &[]).is_ok());
        let param =
            |e: Result<EventTrack<'_>, Error>| matches!(e, Err(Error::InvalidParameter { .. }));
        for d in [0.0, -1.0, f32::NAN, f32::INFINITY] {
            assert!(param(EventTrack::new(d, &ok, b"", &[1])), "duration {d}");
        }
        for bad in [
            Event::instant(f32::NAN, 0),
            Event::range(0.1, f32::INFINITY, 0),
            Event::range(f32::NEG_INFINITY, 0.5, 0),
        ] {
            assert_eq!(
                EventTrack::new(1.0, &[bad], b"", &[0]).unwrap_err(),
                Error::NonFinite { what: "event time" }
            );
        }
        // End before start, outside the duration, unsorted.
        assert!(param(EventTrack::new(
            1.0,
            &[Event::range(0.5, 0.4, 0)],
            b"",
            &[]
        )));
        assert!(param(EventTrack::new(
            1.0,
            &[Event::instant(-0.1, 0)],
            b"",
            &[]
        )));
        assert!(param(EventTrack::new(
            1.0,
            &[Event::range(0.5, 1.5, 0)],
            b"",
            &[0]
        )));
        assert!(param(EventTrack::new(
            1.0,
            &[Event::instant(1.01, 0)],
            b"",
            &[]
        )));
        let unsorted = [Event::instant(0.5, 0), Event::instant(0.2, 1)];
        assert!(param(EventTrack::new(1.0, &unsorted, b"", &[])));
        // Names: outside the table, overflowing, splitting a character, not UTF-8.
        let named = |o, l| [Event::instant(0.5, 0).named(o, l)];
        assert!(param(EventTrack::new(1.0, &named(2, 3), b"abcd", &[])));
        assert!(param(EventTrack::new(
            1.0,
            &named(u32::MAX, u32::MAX),
            b"abcd",
            &[]
        )));
        assert!(param(EventTrack::new(
            1.0,
            &named(0, 1),
            "ü".as_bytes(),
            &[]
        )));
        assert!(param(EventTrack::new(1.0, &named(0, 1), b"a\xff", &[])));
        assert!(EventTrack::new(1.0, &named(0, 2), "ü".as_bytes(), &[]).is_ok());
        // Ranges: missing, extra, out of range, an instant, duplicated, unsorted.
        let two = [
            Event::range(0.1, 0.5, 0),
            Event::range(0.2, 0.3, 1),
            Event::instant(0.4, 2),
        ];
        assert!(EventTrack::new(1.0, &two, b"", &[1, 0]).is_ok());
        for r in [
            &[][..],
            &[1],
            &[1, 0, 2],
            &[1, 5],
            &[1, 2],
            &[1, 1],
            &[0, 1],
        ] {
            assert!(param(EventTrack::new(1.0, &two, b"", r)), "ranges {r:?}");
        }
        // Query times.
        let t = EventTrack::new(1.0, &ok, b"", &[1]).unwrap();
        let mut out = [Edge::default_for_tests(); 4];
        for (a, b) in [
            (f32::NAN, 0.0),
            (0.0, f32::NAN),
            (0.0, f32::INFINITY),
            (f32::NEG_INFINITY, 0.0),
        ] {
            for mode in [Loop, Clamp] {
                assert_eq!(
                    t.trigger(a, b, mode, &mut out),
                    Err(Error::NonFinite {
                        what: "trigger time"
                    })
                );
            }
            assert!(t.trigger_wrapped(a, b, 0, &mut out).is_err());
        }
        assert!(matches!(
            t.trigger_wrapped(0.5, 1.5, 0, &mut out),
            Err(Error::InvalidParameter { .. })
        ));
        assert!(matches!(
            t.trigger_wrapped(-0.5, 0.5, 0, &mut out),
            Err(Error::InvalidParameter { .. })
        ));
        assert_eq!(out[0].event, u32::MAX, "nothing written on error");
    }

    // ---- property tests -------------------------------------------------

    /// Grid resolution: times are multiples of 1/16 s, exact in f32, so the
    /// brute force can count in integers.
    const TICK: f32 = 1.0 / 16.0;

    /// One edge of a generated track in ticks: (event, is start, time).
    fn edges_of(ev: &[(i64, i64)]) -> Vec<(u32, bool, i64)> {
        let mut v = Vec::new();
        for (i, &(s, e)) in ev.iter().enumerate() {
            v.push((i as u32, true, s));
            if e > s {
                v.push((i as u32, false, e));
            }
        }
        v
    }

    /// Brute force, looping: for each edge, walk every copy `e + k·dt` near
    /// the call and test the passed rule `t > p` at both ends.
    fn brute_loop(
        edges: &[(u32, bool, i64)],
        dt: i64,
        a: i64,
        b: i64,
    ) -> Vec<(u32, bool, bool, i64)> {
        let mut v = Vec::new();
        let (lo, hi) = (a.min(b), a.max(b));
        for &(ev, start, e) in edges {
            for k in (lo.div_euclid(dt) - 2)..=(hi.div_euclid(dt) + 2) {
                let p = e + k * dt;
                let (pa, pb) = (a > p, b > p);
                if pa != pb {
                    v.push((ev, start, pb, p));
                }
            }
        }
        v.sort_unstable();
        v
    }

    /// Brute force, clamped: the rule is `t > e`, or `t >= dt` for an edge at `dt`.
    fn brute_clamp(
        edges: &[(u32, bool, i64)],
        dt: i64,
        a: i64,
        b: i64,
    ) -> Vec<(u32, bool, bool, i64)> {
        let (a, b) = (a.clamp(0, dt), b.clamp(0, dt));
        let passed = |t: i64, e: i64| if e == dt { t >= dt } else { t > e };
        let mut v = Vec::new();
        for &(ev, start, e) in edges {
            if passed(a, e) != passed(b, e) {
                v.push((ev, start, passed(b, e), e));
            }
        }
        v.sort_unstable();
        v
    }

    fn track_strategy() -> impl Strategy<Value = (i64, Vec<(i64, i64)>)> {
        (1i64..=24).prop_flat_map(|dt| {
            let event = (0..=dt, 0..=dt, any::<bool>()).prop_map(move |(s, l, instant)| {
                if instant {
                    (s, s)
                } else {
                    (s, (s + l).min(dt))
                }
            });
            (Just(dt), prop::collection::vec(event, 0..10)).prop_map(|(dt, mut ev)| {
                ev.sort_by_key(|e| e.0);
                (dt, ev)
            })
        })
    }

    /// A step in ticks: small forwards, several loops, backwards, or a jump.
    fn steps_strategy() -> impl Strategy<Value = Vec<(i64, bool)>> {
        let step = prop_oneof![
            4 => (0i64..4).prop_map(|s| (s, false)),
            2 => (0i64..120).prop_map(|s| (s, false)),
            2 => (-40i64..0).prop_map(|s| (s, false)),
            1 => (-200i64..200).prop_map(|s| (s, true)),
        ];
        prop::collection::vec(step, 1..40)
    }

    fn build(dt: i64, ev: &[(i64, i64)]) -> (f32, Vec<Event>, Vec<u32>) {
        let events: Vec<Event> = ev
            .iter()
            .enumerate()
            .map(|(i, &(s, e))| Event::range(s as f32 * TICK, e as f32 * TICK, i as u32))
            .collect();
        let mut ranges = vec![0u32; events.len()];
        let n = sort_range_ends(&events, &mut ranges).unwrap();
        ranges.truncate(n);
        (dt as f32 * TICK, events, ranges)
    }

    /// The reported edges as `(event, is start, forward, unwrapped ticks)`,
    /// after checking that they come in play order.
    fn reported(out: &[Edge], dt: i64, forward: bool) -> Vec<(u32, bool, bool, i64)> {
        let v: Vec<(u32, bool, bool, i64)> = out
            .iter()
            .map(|e| {
                assert_eq!(e.forward, forward);
                let p = i64::from(e.cycle) * dt + (e.time / TICK) as i64;
                (e.event, e.is_start(), e.forward, p)
            })
            .collect();
        for w in v.windows(2) {
            assert!(
                if forward {
                    w[0].3 <= w[1].3
                } else {
                    w[0].3 >= w[1].3
                },
                "play order {v:?}"
            );
        }
        v
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        /// Over random plays (small steps, several loops at once, backwards,
        /// jumps, and times exactly on edges) every crossing is reported
        /// exactly once, at the right unwrapped time, in play order; a
        /// small buffer gets the first edges of the same list and counts
        /// the rest.
        #[test]
        fn looping_matches_brute_force(
            (dt, ev) in track_strategy(),
            start in -100i64..100,
            steps in steps_strategy(),
            cap in 0usize..6,
        ) {
            let (d, events, ranges) = build(dt, &ev);
            let track = EventTrack::new(d, &events, b"", &ranges).unwrap();
            let edges = edges_of(&ev);
            let mut big = vec![Edge::default_for_tests(); 4096];
            let mut small = vec![Edge::default_for_tests(); cap];
            let mut t = start;
            for (step, jump) in steps {
                let next = t + step;
                if jump {
                    t = next;
                    continue;
                }
                let (a, b) = (t as f32 * TICK, next as f32 * TICK);
                let r = track.trigger(a, b, TimeMode::Loop, &mut big).unwrap();
                prop_assert_eq!(r.dropped, 0);
                let mut got = reported(&big[..r.written], dt, next >= t);
                got.sort_unstable();
                prop_assert_eq!(&got, &brute_loop(&edges, dt, t, next));

                let s = track.trigger(a, b, TimeMode::Loop, &mut small).unwrap();
                prop_assert_eq!(s.total(), r.written as u64);
                prop_assert_eq!(&small[..s.written], &big[..s.written]);

                // The exact form: clip times and a loop count.
                let (ca, xa) = (t.div_euclid(dt), t.rem_euclid(dt));
                let (cb, xb) = (next.div_euclid(dt), next.rem_euclid(dt));
                let w = track
                    .trigger_wrapped(xa as f32 * TICK, xb as f32 * TICK, (cb - ca) as i32, &mut small)
                    .unwrap();
                prop_assert_eq!(w.total(), r.written as u64);
                for (x, y) in small[..w.written].iter().zip(&big[..w.written]) {
                    prop_assert_eq!(i64::from(x.cycle) + ca, i64::from(y.cycle));
                    prop_assert_eq!((x.event, x.time, x.kind, x.forward), (y.event, y.time, y.kind, y.forward));
                }
                t = next;
            }
        }

        /// The same for clamped play.
        #[test]
        fn clamped_matches_brute_force(
            (dt, ev) in track_strategy(),
            start in -10i64..40,
            steps in steps_strategy(),
        ) {
            let (d, events, ranges) = build(dt, &ev);
            let track = EventTrack::new(d, &events, b"", &ranges).unwrap();
            let edges = edges_of(&ev);
            let mut big = vec![Edge::default_for_tests(); 64];
            let mut t = start;
            for (step, jump) in steps {
                let next = (t + step).clamp(-10, dt + 10);
                if !jump {
                    let r = track
                        .trigger(t as f32 * TICK, next as f32 * TICK, TimeMode::Clamp, &mut big)
                        .unwrap();
                    let forward = next.clamp(0, dt) >= t.clamp(0, dt);
                    let mut got = reported(&big[..r.written], dt, forward);
                    got.sort_unstable();
                    prop_assert_eq!(got, brute_clamp(&edges, dt, t, next));
                }
                t = next;
            }
        }

        /// Off the grid: over a chain of arbitrary non-negative times, each
        /// edge's signed count per call equals the number of its copies in
        /// between, `ceil((b - e) / d) - ceil((a - e) / d)`, in f64.
        #[test]
        fn continuous_times_count_each_crossing_once(
            d in 0.05f32..3.0,
            raw in prop::collection::vec((0.0f32..1.0, 0.0f32..1.0, any::<bool>()), 0..8),
            times in prop::collection::vec(0.0f32..50.0, 2..20),
        ) {
            let mut events: Vec<Event> = raw
                .iter()
                .map(|&(s, l, instant)| {
                    let s = s * d;
                    Event::range(s, if instant { s } else { (s + l * d).min(d) }, 0)
                })
                .collect();
            events.sort_by(|a, b| a.start.total_cmp(&b.start));
            let mut ranges = vec![0u32; events.len()];
            let n = sort_range_ends(&events, &mut ranges).unwrap();
            let track = EventTrack::new(d, &events, b"", &ranges[..n]).unwrap();
            // A call may cross 50 s of 0.05 s loops: 1,001 copies of up to
            // eight ranges' two ends.
            let mut out = vec![Edge::default_for_tests(); 16_016];
            for w in times.windows(2) {
                let (a, b) = (w[0], w[1]);
                let r = track.trigger(a, b, TimeMode::Loop, &mut out).unwrap();
                prop_assert_eq!(r.dropped, 0);
                for (i, e) in events.iter().enumerate() {
                    let bounds: &[(bool, f32)] = if e.is_range() {
                        &[(true, e.start), (false, e.end)]
                    } else {
                        &[(true, e.start)]
                    };
                    for &(is_start, time) in bounds {
                        let copies = |t: f32| ((f64::from(t) - f64::from(time)) / f64::from(d)).ceil() as i64;
                        let want = copies(b) - copies(a);
                        let got: i64 = out[..r.written]
                            .iter()
                            .filter(|x| x.event as usize == i && x.is_start() == is_start)
                            .map(|x| if x.forward { 1 } else { -1 })
                            .sum();
                        let same_way = out[..r.written]
                            .iter()
                            .filter(|x| x.event as usize == i && x.is_start() == is_start)
                            .all(|x| x.forward == (b > a));
                        prop_assert!(same_way);
                        prop_assert_eq!(got, want, "event {} start {} a {} b {}", i, is_start, a, b);
                    }
                }
            }
        }
    }
}
