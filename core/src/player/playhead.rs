//! The playhead: one clip's time, speed, play mode and pause state, advanced
//! frame by frame, with the path it took ([`Advance`]) for event triggering
//! and root motion.
//!
//! The time is kept inside the clip, `[0, duration]`, so it keeps full `f32`
//! precision however long a clip loops; an [`Advance`] records how many times
//! the playhead wrapped (looping) or bounced (ping-pong) on the way, which is
//! what [`EventTrack::trigger_wrapped`] and the root motion need.

use crate::clip::{ClipSource, TimeMode};
use crate::error::Error;
use crate::mix::root_motion::{root_motion, rotate_y, wrap_angle, RootMotion};
use crate::soa::SoaTransform;
use crate::track::event::{Edge, EdgeBuffer, EventTrack, Triggered};

/// How play continues past a clip's ends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum PlayMode {
    /// Wrap around: past the end play starts again at 0 (and past 0, going
    /// backwards, at the end).
    #[default]
    Loop = 0,
    /// Stop at the end (or at 0 going backwards) and stay there.
    Clamp = 1,
    /// Bounce between the two ends: forwards to the end, backwards to 0, and so on.
    PingPong = 2,
}

/// A clip's playhead: a plain `Copy` value that can live in an ECS component
/// or a C struct.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Playhead {
    pub(super) time: f32,
    pub(super) speed: f32,
    pub(super) mode: PlayMode,
    pub(super) paused: bool,
    /// Ping-pong only: travelling from the end towards 0.
    pub(super) reversed: bool,
}

/// The path a playhead took in one [`Playhead::advance`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Advance {
    /// Clip time before, in `[0, duration]`.
    pub from: f32,
    /// Clip time after, in `[0, duration]`.
    pub to: f32,
    /// Looping: the signed number of times play passed the loop point
    /// (negative going backwards). Ping-pong: the number of bounces. Clamped: 0.
    pub turns: i32,
    /// Whether play moved towards the end at the start of the frame
    /// (speed and ping-pong direction taken together).
    pub forward: bool,
    /// Clamped only: play is resting at the end it was moving towards.
    pub ended: bool,
    /// The clip duration the advance used.
    pub duration: f32,
    /// The mode the advance used.
    pub mode: PlayMode,
}

fn check_duration(duration: f32) -> Result<(), Error> {
    if duration.is_finite() && duration >= 0.0 {
        Ok(())
    } else {
        Err(Error::InvalidParameter {
            what: "clip duration must be finite and >= 0",
        })
    }
}

/// `(cycles, x)` with `x = t − cycles · d` in `[0, d)`, computed in `f64`
/// (exact for the `f32` inputs a frame produces), cycles saturated to `i32`.
fn split(t: f32, d: f32) -> (i32, f32) {
    let (t, d) = (f64::from(t), f64::from(d));
    let q = libm::floor(t / d);
    let mut x = t - q * d;
    let mut q = q as i64;
    if x < 0.0 {
        q -= 1;
        x += d;
    } else if x >= d {
        q += 1;
        x -= d;
    }
    let x = (x as f32).clamp(0.0, d as f32);
    // Rounding to f32 may land on `d` itself: that is the next cycle's 0.
    if x >= d as f32 {
        (
            q.saturating_add(1).clamp(i32::MIN.into(), i32::MAX.into()) as i32,
            0.0,
        )
    } else {
        (q.clamp(i32::MIN.into(), i32::MAX.into()) as i32, x)
    }
}

impl Playhead {
    /// A playhead at time 0, speed 1, playing, in `mode`.
    #[must_use]
    pub const fn new(mode: PlayMode) -> Self {
        Playhead {
            time: 0.0,
            speed: 1.0,
            mode,
            paused: false,
            reversed: false,
        }
    }

    /// Clip time in seconds, in `[0, duration]`: the time to sample at
    /// (with [`TimeMode::Clamp`], since the playhead has wrapped it already).
    #[inline]
    #[must_use]
    pub fn time(&self) -> f32 {
        self.time
    }

    /// Playback speed (1 = real time, negative = backwards).
    #[inline]
    #[must_use]
    pub fn speed(&self) -> f32 {
        self.speed
    }

    /// The play mode.
    #[inline]
    #[must_use]
    pub fn mode(&self) -> PlayMode {
        self.mode
    }

    /// Whether [`Self::advance`] moves the time.
    #[inline]
    #[must_use]
    pub fn is_playing(&self) -> bool {
        !self.paused
    }

    /// Whether play currently moves towards the clip's end: the speed's sign,
    /// flipped while a ping-pong travels back (a zero speed counts as forwards).
    #[inline]
    #[must_use]
    pub fn is_forward(&self) -> bool {
        (self.speed >= 0.0) != self.reversed
    }

    /// Stops the time; [`Self::advance`] then reports no motion.
    pub fn pause(&mut self) {
        self.paused = true;
    }

    /// Lets the time move again.
    pub fn resume(&mut self) {
        self.paused = false;
    }

    /// Sets the play mode; a ping-pong's direction restarts forwards.
    pub fn set_mode(&mut self, mode: PlayMode) {
        self.mode = mode;
        self.reversed = false;
    }

    /// Sets the speed.
    ///
    /// # Errors
    /// [`Error::NonFinite`] (`"playback speed"`); the speed is unchanged then.
    pub fn set_speed(&mut self, speed: f32) -> Result<(), Error> {
        if !speed.is_finite() {
            return Err(Error::NonFinite {
                what: "playback speed",
            });
        }
        self.speed = speed;
        Ok(())
    }

    /// Jumps to `time` (clamped to `[0, duration]`, or wrapped when
    /// looping) without any motion: no events, no root motion. A
    /// ping-pong's direction is kept.
    ///
    /// # Errors
    /// [`Error::NonFinite`] (`"seek time"`), [`Error::InvalidParameter`] for
    /// a bad duration; the playhead is unchanged then.
    pub fn seek(&mut self, time: f32, duration: f32) -> Result<(), Error> {
        check_duration(duration)?;
        if !time.is_finite() {
            return Err(Error::NonFinite { what: "seek time" });
        }
        self.time = match self.mode {
            PlayMode::Loop if duration > 0.0 => split(time, duration).1,
            _ => time.clamp(0.0, duration),
        };
        Ok(())
    }

    /// Moves the time by `speed · dt` through a clip of `duration` seconds
    /// and returns the path taken. Paused, or with a zero speed or a zero
    /// duration, the time stays where it is (clamped into the clip).
    ///
    /// # Errors
    /// [`Error::NonFinite`] (`"dt"`) for a negative or non-finite `dt`;
    /// [`Error::InvalidParameter`] for a negative or non-finite duration.
    /// The playhead is unchanged then.
    pub fn advance(&mut self, dt: f32, duration: f32) -> Result<Advance, Error> {
        check_duration(duration)?;
        if !(dt.is_finite() && dt >= 0.0) {
            return Err(Error::NonFinite { what: "dt" });
        }
        let from = self.time.clamp(0.0, duration);
        let forward = self.is_forward();
        let delta = if self.paused { 0.0 } else { self.speed * dt };
        let mut adv = Advance {
            from,
            to: from,
            turns: 0,
            forward,
            ended: false,
            duration,
            mode: self.mode,
        };
        if duration <= 0.0 || delta == 0.0 || !delta.is_finite() {
            self.time = from;
            adv.ended = self.mode == PlayMode::Clamp && self.at_end(from, duration);
            return Ok(adv);
        }
        match self.mode {
            PlayMode::Loop => {
                let (turns, to) = split(from + delta, duration);
                adv.turns = turns;
                adv.to = to;
            }
            PlayMode::Clamp => {
                adv.to = (from + delta).clamp(0.0, duration);
                adv.ended = self.at_end(adv.to, duration);
            }
            PlayMode::PingPong => {
                // Unfold the bounces into a line of period 2d: u in [0, d]
                // is clip time u travelling forwards, u in (d, 2d) clip time
                // 2d − u travelling back; speed moves u, whatever the half.
                let u = if self.reversed {
                    2.0 * duration - from
                } else {
                    from
                };
                adv.forward = if delta > 0.0 {
                    u < duration
                } else {
                    u == 0.0 || u > duration
                };
                let (_, w) = split(u + delta, 2.0 * duration);
                let (to, reversed) = if w <= duration {
                    (w, false)
                } else {
                    (2.0 * duration - w, true)
                };
                adv.to = to.clamp(0.0, duration);
                adv.turns = bounces(u, u + delta, duration);
                self.reversed = reversed;
            }
        }
        self.time = adv.to;
        Ok(adv)
    }

    fn at_end(&self, t: f32, duration: f32) -> bool {
        if self.speed >= 0.0 {
            t >= duration
        } else {
            t <= 0.0
        }
    }
}

/// Ends (`k · d`, `k` integer) strictly between the unfolded positions `a`
/// and `b`: the bounces a ping-pong makes moving from `a` to `b` (starting or
/// stopping on an end is not a bounce), saturated to `i32`.
fn bounces(a: f32, b: f32, d: f32) -> i32 {
    let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
    let (lo, hi, d) = (f64::from(lo), f64::from(hi), f64::from(d));
    // Multiples of d in (lo, hi).
    let first = libm::floor(lo / d) + 1.0;
    let last = libm::ceil(hi / d) - 1.0;
    let n = (last - first + 1.0).max(0.0);
    n.min(f64::from(i32::MAX)) as i32
}

impl Advance {
    /// Reports the edges of `track` (an event track of the clip this
    /// advance moved through) crossed on the way, in play order, as
    /// [`EventTrack::trigger`] does for one call: a loop wrap, a bounce and
    /// backwards play each report every edge crossed exactly once, and a
    /// [`Playhead::seek`] reports nothing. `track`'s duration is the one
    /// that counts; give the advance the same duration.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] when `track`'s duration differs from the
    /// advance's; nothing is written then.
    pub fn trigger(&self, track: &EventTrack<'_>, out: &mut [Edge]) -> Result<Triggered, Error> {
        self.trigger_into(track, out)
    }

    /// [`Self::trigger`] into any [`EdgeBuffer`].
    ///
    /// # Errors
    /// As [`Self::trigger`].
    pub fn trigger_into<B: EdgeBuffer + ?Sized>(
        &self,
        track: &EventTrack<'_>,
        out: &mut B,
    ) -> Result<Triggered, Error> {
        if track.duration() != self.duration {
            return Err(Error::InvalidParameter {
                what: "event track duration differs from the clip's",
            });
        }
        let d = self.duration;
        match self.mode {
            PlayMode::Loop if d > 0.0 => {
                track.trigger_wrapped_into(self.from, self.to, self.turns, out)
            }
            PlayMode::Loop | PlayMode::Clamp => {
                track.trigger_into(self.from, self.to, TimeMode::Clamp, out)
            }
            PlayMode::PingPong => self.trigger_bounces(track, out),
        }
    }

    /// Ping-pong: one clamped triggering per leg between bounces. The legs
    /// between the first and last bounce each cross every edge, so past the
    /// buffer they are counted, not walked.
    fn trigger_bounces<B: EdgeBuffer + ?Sized>(
        &self,
        track: &EventTrack<'_>,
        out: &mut B,
    ) -> Result<Triggered, Error> {
        let d = self.duration;
        let capacity = out.capacity();
        let mut total = Triggered::default();
        let mut add = |from: f32, to: f32, total: &mut Triggered| -> Result<(), Error> {
            let mut rest = After {
                inner: &mut *out,
                start: total.written,
            };
            let t = track.trigger_into(from, to, TimeMode::Clamp, &mut rest)?;
            total.written += t.written;
            total.dropped = total.dropped.saturating_add(t.dropped);
            Ok(())
        };
        if self.turns == 0 {
            add(self.from, self.to, &mut total)?;
            return Ok(total);
        }
        // The first leg runs to the end play was heading for; each bounce
        // turns round, so leg k runs forwards when k is even and play
        // started forwards (or k is odd and it did not).
        let end = |forward: bool| if forward { d } else { 0.0 };
        let leg_forward = |k: i32| (k % 2 == 0) == self.forward;
        add(self.from, end(self.forward), &mut total)?;
        let per_leg = track.edges_per_cycle() as u64;
        for k in 1..self.turns {
            if total.written == capacity {
                // Every full leg crosses every edge once.
                let rest = (self.turns - k) as u64;
                total.dropped = total.dropped.saturating_add(rest.saturating_mul(per_leg));
                break;
            }
            add(end(!leg_forward(k)), end(leg_forward(k)), &mut total)?;
        }
        add(end(!leg_forward(self.turns)), self.to, &mut total)?;
        Ok(total)
    }

    /// The root motion of `clip`'s joint `root` along this advance: the
    /// clip's motion from `from` to `to` plus one whole cycle per loop wrap
    /// (signed); clamped and ping-pong play depend only on where they start
    /// and end (a bounce walks back over the same poses). Backwards play
    /// gives the inverse motion. `rest` and `scratch` as in
    /// [`crate::mix::root_motion::root_motion`].
    ///
    /// # Errors
    /// As [`crate::mix::root_motion::root_motion`]; [`Error::InvalidParameter`]
    /// when the clip's duration differs from the advance's.
    pub fn root_motion<C: ClipSource>(
        &self,
        clip: &C,
        root: usize,
        rest: &[SoaTransform],
        scratch: &mut [SoaTransform],
    ) -> Result<RootMotion, Error> {
        if clip.duration() != self.duration {
            return Err(Error::InvalidParameter {
                what: "clip duration differs from the advance's",
            });
        }
        let d = f64::from(self.duration);
        let turns = if self.mode == PlayMode::Loop {
            self.turns
        } else {
            0
        };
        // Unwrapped times relative to the start of `from`'s cycle.
        let a = self.from;
        let b = (f64::from(self.to) + f64::from(turns) * d) as f32;
        if b >= a {
            root_motion(clip, root, a, b, rest, scratch)
        } else {
            Ok(inverse(root_motion(clip, root, b, a, rest, scratch)?))
        }
    }
}

/// The slots of a buffer from `start` on: where one leg of a ping-pong
/// writes after the legs before it.
struct After<'a, B: EdgeBuffer + ?Sized> {
    inner: &'a mut B,
    start: usize,
}

impl<B: EdgeBuffer + ?Sized> EdgeBuffer for After<'_, B> {
    fn capacity(&self) -> usize {
        self.inner.capacity().saturating_sub(self.start)
    }

    fn put(&mut self, i: usize, edge: Edge) {
        self.inner.put(self.start + i, edge);
    }
}

/// The motion that undoes `m`: `m.then(inverse(m))` is no motion.
#[must_use]
pub fn inverse(m: RootMotion) -> RootMotion {
    RootMotion {
        translation: -rotate_y(m.translation, -m.yaw),
        yaw: wrap_angle(-m.yaw),
    }
}

#[cfg(test)]
mod tests;
