//! A per-character player: the clips playing, their time, speed, play mode
//! and pause state, and the transitions between them (cross-fades, which
//! may be interrupted by further cross-fades, and inertialized switches,
//! which may interrupt anything), producing one pose, the events crossed and
//! the root motion each frame.
//!
//! A [`Player`] is a plain `Copy` value with no borrow (`'static`): it lives
//! in an ECS component or a C struct. It holds up to `K` [`Source`]s (a clip
//! index and its [`Playhead`]) in a [`Fader`], and the [`Inertializer`]'s
//! clock. Everything sized by the skeleton is passed per call in
//! [`PlayerBuffers`] ([`Player::buffer_sizes`] says how many blocks each
//! needs): one pose per source, the last two outputs, the inertialization
//! offsets and decode scratch. The clips, their event tracks and the rest
//! pose come in [`PlayerClips`].
//!
//! Each [`Player::update`]:
//!
//! 1. makes the inertialized switch a [`Player::play`] asked for, if any:
//!    the offsets run from the last output (and the one before, for the
//!    velocity) to what the sources now playing give at that instant, so an
//!    interrupted cross-fade or inertialization carries on without a pop;
//! 2. advances the fader by `dt` and every source's playhead by
//!    `speed · dt`;
//! 3. samples every source of weight `> 0` and blends them (nlerp, through
//!    [`crate::blend::blend`]) with the fader's weights;
//! 4. adds the decaying inertialization offset, writes the output and
//!    shifts the output history;
//! 5. reports the events each source of weight `> 0` crossed on its way
//!    ([`Advance::trigger`]), with its clip and weight, and the weighted
//!    mean of their root motions ([`Advance::root_motion`],
//!    [`RootMotion::blend`]).
//!
//! A transition starts at the instant of the last output: the first
//! update after [`Player::play`] shows the fade (or the decay) `dt` in.
//! Paused, the player still writes its pose, but no clock moves: no
//! events, no root motion.

use super::fade::{Blend, Fader, Transition};
use super::playhead::{Advance, PlayMode, Playhead};
use crate::blend::{self, BlendJob, BlendLayer};
use crate::clip::{ClipSource, TimeMode};
use crate::error::Error;
use crate::mix::root_motion::RootMotion;
use crate::mix::transition::{Decay, InertialBlock, Inertializer, SwitchJob};
use crate::soa::{check_len, SoaTransform, LANES};
use crate::track::event::{Edge, EdgeBuffer, EventTrack};

/// One clip playing: its index in the clip table and its playhead.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Source {
    /// Index of the clip in the table passed to the player.
    pub clip: u32,
    /// Where play is in that clip.
    pub playhead: Playhead,
}

/// An edge crossed this frame by one of the player's sources.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PlayerEdge {
    /// The edge, as [`Advance::trigger`] reports it.
    pub edge: Edge,
    /// The clip whose event track holds it.
    pub clip: u32,
    /// That source's weight in this frame's pose, in `(0, 1]`.
    pub weight: f32,
}

/// What one [`Player::update`] reports besides the pose.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FrameReport {
    /// Edges written to the front of the caller's edge buffer: the sources'
    /// in turn, oldest source first, each in play order.
    pub edges_written: usize,
    /// Edges crossed that did not fit in the buffer.
    pub edges_dropped: u64,
    /// The weighted mean of the sources' root motions this frame (zero
    /// without a root joint).
    pub root_motion: RootMotion,
    /// The current clip plays clamped and rests at the end it was heading for.
    pub ended: bool,
}

/// Blocks each of [`PlayerBuffers`]' slices needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct BufferSizes {
    /// [`PlayerBuffers::sources`]: `K` poses.
    pub sources: usize,
    /// [`PlayerBuffers::history`]: two poses.
    pub history: usize,
    /// [`PlayerBuffers::inertial`]: one block per pose block.
    pub inertial: usize,
    /// [`PlayerBuffers::scratch`]: one pose.
    pub scratch: usize,
}

/// The memory a player works in, owned by the caller and passed to every
/// [`Player::update`]; each slice has exactly the length
/// [`Player::buffer_sizes`] gives. Keep `history` and `inertial` from one
/// frame to the next (the other two are scratch).
#[derive(Debug)]
pub struct PlayerBuffers<'a> {
    /// One pose per source, `K · soa_count` blocks: the sources' samples.
    pub sources: &'a mut [SoaTransform],
    /// The last output and the one before, `2 · soa_count` blocks.
    pub history: &'a mut [SoaTransform],
    /// The inertialization offsets, one block per pose block.
    pub inertial: &'a mut [InertialBlock],
    /// `soa_count` blocks: frames decoded for root motion, and the previous
    /// pose of an inertialized switch.
    pub scratch: &'a mut [SoaTransform],
}

/// The assets a player reads each frame.
#[derive(Clone, Copy, Debug)]
pub struct PlayerClips<'a, C> {
    /// The clip table the sources index; every clip has the player's
    /// `soa_count`.
    pub clips: &'a [C],
    /// One optional event track per clip (each with its clip's duration),
    /// or empty for no events at all.
    pub events: &'a [Option<EventTrack<'a>>],
    /// The skeleton's rest pose, `soa_count` blocks.
    pub rest: &'a [SoaTransform],
    /// The joint whose motion is reported as root motion, if any.
    pub root: Option<usize>,
}

/// A character's player; see the [module docs](self).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Player<const K: usize> {
    pub(super) fader: Fader<Source, K>,
    pub(super) inertializer: Inertializer,
    /// An inertialized transition whose switch the next update makes.
    pub(super) pending: Option<Transition>,
    pub(super) soa_count: usize,
    pub(super) speed: f32,
    /// The `dt` between the two poses of the history.
    pub(super) last_dt: f32,
    /// Valid poses in the history (0 to 2).
    pub(super) history: u8,
    pub(super) paused: bool,
}

fn check_dt(dt: f32) -> Result<(), Error> {
    if dt.is_finite() && dt >= 0.0 {
        Ok(())
    } else {
        Err(Error::NonFinite { what: "dt" })
    }
}

fn clip_at<C: ClipSource>(clips: &[C], clip: usize) -> Result<&C, Error> {
    clips.get(clip).ok_or(Error::UnknownClip {
        clip,
        count: clips.len(),
    })
}

impl Source {
    /// A source at the start of `clip` (index `index`) for play at `speed`:
    /// time 0 forwards, the clip's end backwards.
    fn start<C: ClipSource>(
        index: usize,
        clip: &C,
        mode: PlayMode,
        speed: f32,
    ) -> Result<Self, Error> {
        let index = u32::try_from(index).map_err(|_| Error::UnknownClip {
            clip: index,
            count: u32::MAX as usize,
        })?;
        let mut playhead = Playhead::new(mode);
        playhead.set_speed(speed)?;
        if speed < 0.0 {
            playhead.seek(clip.duration(), clip.duration())?;
        }
        Ok(Source {
            clip: index,
            playhead,
        })
    }
}

impl<const K: usize> Player<K> {
    /// Blocks each buffer needs for poses of `soa_count` blocks.
    #[must_use]
    pub const fn buffer_sizes(soa_count: usize) -> BufferSizes {
        BufferSizes {
            sources: K * soa_count,
            history: 2 * soa_count,
            inertial: soa_count,
            scratch: soa_count,
        }
    }

    /// A player playing `clip` of `clips` alone from its start, at speed 1.
    /// Its `soa_count` (the skeleton's) is that clip's.
    ///
    /// # Errors
    /// [`Error::UnknownClip`] for a clip past the table,
    /// [`Error::InvalidParameter`] for a clip of no blocks,
    /// [`Error::CapacityExceeded`] when `K == 0`.
    pub fn new<C: ClipSource>(clips: &[C], clip: usize, mode: PlayMode) -> Result<Self, Error> {
        let c = clip_at(clips, clip)?;
        if c.soa_count() == 0 {
            return Err(Error::InvalidParameter {
                what: "clip has no blocks",
            });
        }
        let source = Source::start(clip, c, mode, 1.0)?;
        Ok(Player {
            fader: Fader::new(source)?,
            inertializer: Inertializer::new(Decay::Quintic)?,
            pending: None,
            soa_count: c.soa_count(),
            speed: 1.0,
            last_dt: 0.0,
            history: 0,
            paused: false,
        })
    }

    /// The clip `clips[clip]`, checked against the player's skeleton.
    fn checked_clip<'c, C: ClipSource>(&self, clips: &'c [C], clip: usize) -> Result<&'c C, Error> {
        let c = clip_at(clips, clip)?;
        if c.soa_count() != self.soa_count {
            return Err(Error::InvalidParameter {
                what: "clip has another soa_count than the player (another skeleton)",
            });
        }
        Ok(c)
    }

    /// Starts a transition to `clip` of `clips`, played from its start
    /// (its end at a negative speed) in `mode` at the player's speed. A
    /// cross-fade blends in over the transition's duration (interrupting a
    /// fade under way: what plays then fades out); an inertialization
    /// switches at once and the next [`Self::update`] decays the difference
    /// from the last outputs. At most `K` sources play: the lightest older
    /// one makes room (see [`Fader::start`]).
    ///
    /// # Errors
    /// [`Error::UnknownClip`], [`Error::InvalidParameter`] for a clip of
    /// another `soa_count`, anything [`Transition::validate`] reports; the
    /// player is unchanged then.
    pub fn play<C: ClipSource>(
        &mut self,
        clips: &[C],
        clip: usize,
        mode: PlayMode,
        transition: &Transition,
    ) -> Result<(), Error> {
        transition.validate()?;
        let c = self.checked_clip(clips, clip)?;
        let source = Source::start(clip, c, mode, self.speed)?;
        self.fader.start(source, transition)?;
        if let Blend::Inertialize(_) = transition.blend {
            self.pending = Some(*transition);
        }
        Ok(())
    }

    /// Sets the playback speed of every source (1 = real time, negative =
    /// backwards). Transitions run in real time whatever the speed.
    ///
    /// # Errors
    /// [`Error::NonFinite`] (`"playback speed"`); nothing changes then.
    pub fn set_speed(&mut self, speed: f32) -> Result<(), Error> {
        if !speed.is_finite() {
            return Err(Error::NonFinite {
                what: "playback speed",
            });
        }
        for s in self.fader.payloads_mut() {
            s.playhead.set_speed(speed)?;
        }
        self.speed = speed;
        Ok(())
    }

    /// Sets the current clip's play mode (a ping-pong restarts forwards).
    pub fn set_mode(&mut self, mode: PlayMode) {
        self.fader.current_mut().playhead.set_mode(mode);
    }

    /// Freezes every clock: playheads, fades and inertialization.
    /// [`Self::update`] still writes the pose, with no events and no root
    /// motion.
    pub fn pause(&mut self) {
        self.paused = true;
    }

    /// Lets the clocks run again.
    pub fn resume(&mut self) {
        self.paused = false;
    }

    /// Jumps the current clip to `time` seconds (wrapped when looping,
    /// clamped otherwise) without motion: no events and no root motion for
    /// the jump. Sources fading out keep their time.
    ///
    /// # Errors
    /// [`Error::UnknownClip`] when `clips` does not hold the current clip,
    /// [`Error::NonFinite`] (`"seek time"`); nothing changes then.
    pub fn seek<C: ClipSource>(&mut self, clips: &[C], time: f32) -> Result<(), Error> {
        let d = clip_at(clips, self.clip())?.duration();
        self.fader.current_mut().playhead.seek(time, d)
    }

    /// The current clip: the one the last [`Self::play`] started.
    #[inline]
    #[must_use]
    pub fn clip(&self) -> usize {
        self.fader.current().clip as usize
    }

    /// The current clip's time, seconds in `[0, duration]`.
    #[inline]
    #[must_use]
    pub fn time(&self) -> f32 {
        self.fader.current().playhead.time()
    }

    /// The current clip's play mode.
    #[inline]
    #[must_use]
    pub fn mode(&self) -> PlayMode {
        self.fader.current().playhead.mode()
    }

    /// The playback speed.
    #[inline]
    #[must_use]
    pub fn speed(&self) -> f32 {
        self.speed
    }

    /// Whether [`Self::pause`] froze the clocks.
    #[inline]
    #[must_use]
    pub fn is_paused(&self) -> bool {
        self.paused
    }

    /// Whether a cross-fade is under way (more than one source playing).
    #[inline]
    #[must_use]
    pub fn is_fading(&self) -> bool {
        self.fader.is_fading()
    }

    /// Whether an inertialization offset is decaying (or about to start).
    #[inline]
    #[must_use]
    pub fn is_inertializing(&self) -> bool {
        self.pending.is_some() || self.inertializer.is_active()
    }

    /// Blocks per pose: the skeleton's `soa_count`.
    #[inline]
    #[must_use]
    pub fn soa_count(&self) -> usize {
        self.soa_count
    }

    /// Number of sources playing (`1..=K`).
    #[inline]
    #[must_use]
    pub fn source_count(&self) -> usize {
        self.fader.len()
    }

    /// Source `i` (oldest first; the last is the current clip) and its
    /// weight, `None` past the end.
    #[must_use]
    pub fn source(&self, i: usize) -> Option<(Source, f32)> {
        self.fader.sources().nth(i).map(|(s, w)| (*s, w))
    }

    /// The sources, oldest first, each with its weight (they sum to 1).
    pub fn sources(&self) -> impl Iterator<Item = (&Source, f32)> + '_ {
        self.fader.sources()
    }

    /// The underlying fader (sources, weights, fade progress).
    #[inline]
    #[must_use]
    pub fn fader(&self) -> &Fader<Source, K> {
        &self.fader
    }

    /// Checks every size, index and track against the player before a frame.
    fn check<C: ClipSource>(
        &self,
        assets: &PlayerClips<'_, C>,
        buffers: &PlayerBuffers<'_>,
        out: &[SoaTransform],
    ) -> Result<(), Error> {
        let n = self.soa_count;
        let sizes = Self::buffer_sizes(n);
        check_len("output", n, out.len())?;
        check_len("rest pose", n, assets.rest.len())?;
        check_len("player sources", sizes.sources, buffers.sources.len())?;
        check_len("player history", sizes.history, buffers.history.len())?;
        check_len(
            "player inertial state",
            sizes.inertial,
            buffers.inertial.len(),
        )?;
        check_len("player scratch", sizes.scratch, buffers.scratch.len())?;
        if !assets.events.is_empty() {
            check_len("event tracks", assets.clips.len(), assets.events.len())?;
        }
        if let Some(root) = assets.root {
            if root >= n * LANES {
                return Err(Error::JointOutOfRange {
                    joint: root,
                    count: n * LANES,
                });
            }
        }
        for (s, _) in self.fader.sources() {
            let index = s.clip as usize;
            let c = self.checked_clip(assets.clips, index)?;
            if let Some(Some(track)) = assets.events.get(index) {
                if track.duration() != c.duration() {
                    return Err(Error::InvalidParameter {
                        what: "event track duration differs from its clip's",
                    });
                }
            }
        }
        Ok(())
    }

    /// Plays one frame of `dt` seconds: writes the pose into `out`
    /// (`soa_count` blocks), the events crossed into `edges` and returns
    /// the report; see the [module docs](self) for the steps.
    ///
    /// # Errors
    /// [`Error::NonFinite`] (`"dt"`) for a negative or non-finite `dt`;
    /// [`Error::BadLength`] for `out`, the rest pose, a buffer or the event
    /// table; [`Error::UnknownClip`] or [`Error::InvalidParameter`] when a
    /// playing source's clip is missing from `assets.clips`, has another
    /// `soa_count`, or its event track another duration;
    /// [`Error::JointOutOfRange`] for the root. These are checked before
    /// anything is written, and the player is unchanged on any error.
    pub fn update<C: ClipSource>(
        &mut self,
        dt: f32,
        assets: &PlayerClips<'_, C>,
        buffers: &mut PlayerBuffers<'_>,
        out: &mut [SoaTransform],
        edges: &mut [PlayerEdge],
    ) -> Result<FrameReport, Error> {
        self.update_into(dt, assets, buffers, out, edges)
    }

    /// [`Self::update`] with the edges written into any [`EdgeBuffer`] of
    /// [`PlayerEdge`]s (a C binding's array of its own edge type).
    ///
    /// # Errors
    /// As [`Self::update`].
    pub fn update_into<C: ClipSource, B: EdgeBuffer<PlayerEdge> + ?Sized>(
        &mut self,
        dt: f32,
        assets: &PlayerClips<'_, C>,
        buffers: &mut PlayerBuffers<'_>,
        out: &mut [SoaTransform],
        edges: &mut B,
    ) -> Result<FrameReport, Error> {
        check_dt(dt)?;
        self.check(assets, buffers, out)?;
        let mut next = *self;
        let report = next.step(dt, assets, buffers, out, edges)?;
        *self = next;
        Ok(report)
    }

    fn step<C: ClipSource, B: EdgeBuffer<PlayerEdge> + ?Sized>(
        &mut self,
        dt: f32,
        assets: &PlayerClips<'_, C>,
        buffers: &mut PlayerBuffers<'_>,
        out: &mut [SoaTransform],
        edges: &mut B,
    ) -> Result<FrameReport, Error> {
        let n = self.soa_count;
        let dt = if self.paused { 0.0 } else { dt };
        if let Some(transition) = self.pending.take() {
            if self.history > 0 {
                self.switch(&transition, dt, assets, buffers, out)?;
            }
        }

        self.fader.advance(dt)?;
        let mut advances: [Option<Advance>; K] = [None; K];
        for (s, a) in self.fader.payloads_mut().zip(advances.iter_mut()) {
            let d = clip_at(assets.clips, s.clip as usize)?.duration();
            *a = Some(s.playhead.advance(dt, d)?);
        }

        mix(&self.fader, assets, buffers.sources, out)?;
        self.inertializer.update(buffers.inertial, dt, out)?;
        buffers.history.copy_within(..n, n);
        buffers.history[..n].copy_from_slice(out);
        self.history = (self.history + 1).min(2);
        self.last_dt = dt;

        let mut report = FrameReport::default();
        let mut motions = [(RootMotion::ZERO, 0.0f32); K];
        let mut moved = 0;
        for (i, ((s, w), a)) in self.fader.sources().zip(&advances).enumerate() {
            let Some(a) = a else { continue };
            if i + 1 == self.fader.len() {
                report.ended = a.ended;
            }
            if w <= 0.0 {
                continue;
            }
            let clip = clip_at(assets.clips, s.clip as usize)?;
            if let Some(Some(track)) = assets.events.get(s.clip as usize) {
                let mut tagged = Tagged {
                    out: &mut *edges,
                    start: report.edges_written,
                    clip: s.clip,
                    weight: w,
                };
                let t = a.trigger_into(track, &mut tagged)?;
                report.edges_written += t.written;
                report.edges_dropped = report.edges_dropped.saturating_add(t.dropped);
            }
            if let Some(root) = assets.root {
                motions[moved] = (a.root_motion(clip, root, assets.rest, buffers.scratch)?, w);
                moved += 1;
            }
        }
        report.root_motion = RootMotion::blend(&motions[..moved])?;
        Ok(report)
    }

    /// The inertialized switch of `transition`, at the instant of the last
    /// output: from the history (the last output and the one before) to
    /// what the sources playing now give at their current times (and one
    /// frame earlier, for the velocity). Leaves the clock `dt` after the
    /// switch, the time of the output about to be made.
    fn switch<C: ClipSource>(
        &mut self,
        transition: &Transition,
        dt: f32,
        assets: &PlayerClips<'_, C>,
        buffers: &mut PlayerBuffers<'_>,
        now: &mut [SoaTransform],
    ) -> Result<(), Error> {
        let Blend::Inertialize(decay) = transition.blend else {
            return Ok(());
        };
        let n = self.soa_count;
        mix(&self.fader, assets, buffers.sources, now)?;
        // Velocities need two poses a known, non-zero time apart.
        let velocity = self.history >= 2 && self.last_dt > 0.0;
        if velocity {
            let mut back = self.fader;
            for s in back.payloads_mut() {
                let d = clip_at(assets.clips, s.clip as usize)?.duration();
                let speed = s.playhead.speed();
                s.playhead.set_speed(-speed)?;
                s.playhead.advance(self.last_dt, d)?;
            }
            mix(&back, assets, buffers.sources, buffers.scratch)?;
        } else {
            buffers.scratch.copy_from_slice(now);
        }
        let (old, old_prev) = buffers.history.split_at(n);
        let old_prev = if velocity { old_prev } else { old };
        let job_dt = if velocity { self.last_dt } else { 1.0 };
        // A spring's decay does not depend on the duration; the switch
        // still needs a positive one.
        let duration = match decay {
            _ if transition.duration > 0.0 => transition.duration,
            Decay::Spring { half_life } => half_life,
            Decay::Quintic => 1.0,
        };
        let mut inertializer = Inertializer::new(decay)?;
        let job = SwitchJob::new(old, old_prev, now, buffers.scratch, job_dt, duration);
        inertializer.switch(buffers.inertial, &job)?;
        // Moves the clock to the output's time (`now` is scratch here).
        inertializer.update(buffers.inertial, dt, now)?;
        self.inertializer = inertializer;
        Ok(())
    }
}

/// The fader's mix at its sources' current times into `out`: each source of
/// weight `> 0` sampled into its pose of `poses`, then blended; a source
/// playing alone is sampled straight into `out`.
fn mix<C: ClipSource, const K: usize>(
    fader: &Fader<Source, K>,
    assets: &PlayerClips<'_, C>,
    poses: &mut [SoaTransform],
    out: &mut [SoaTransform],
) -> Result<(), Error> {
    let n = out.len();
    let live = fader.sources().filter(|&(_, w)| w > 0.0).count();
    if live <= 1 {
        let Some((s, _)) = fader.sources().find(|&(_, w)| w > 0.0) else {
            // The weights sum to 1, so this is not reached; rest is a pose.
            out.copy_from_slice(assets.rest);
            return Ok(());
        };
        let clip = clip_at(assets.clips, s.clip as usize)?;
        return clip.sample(s.playhead.time(), TimeMode::Clamp, assets.rest, out);
    }
    for ((s, w), pose) in fader.sources().zip(poses.chunks_exact_mut(n)) {
        if w > 0.0 {
            let clip = clip_at(assets.clips, s.clip as usize)?;
            clip.sample(s.playhead.time(), TimeMode::Clamp, assets.rest, pose)?;
        }
    }
    let mut layers = [BlendLayer::new(&[], 0.0); K];
    let mut m = 0;
    for ((_, w), pose) in fader.sources().zip(poses.chunks_exact(n)) {
        if w > 0.0 {
            layers[m] = BlendLayer::new(pose, w);
            m += 1;
        }
    }
    blend::blend(&BlendJob::new(&layers[..m], &[], assets.rest), out)
}

/// The slots of the caller's edge buffer from `start` on, as a buffer of
/// core edges: each edge is stored with the source's clip and weight.
struct Tagged<'a, B: EdgeBuffer<PlayerEdge> + ?Sized> {
    out: &'a mut B,
    start: usize,
    clip: u32,
    weight: f32,
}

impl<B: EdgeBuffer<PlayerEdge> + ?Sized> EdgeBuffer for Tagged<'_, B> {
    fn capacity(&self) -> usize {
        self.out.capacity().saturating_sub(self.start)
    }

    fn put(&mut self, i: usize, edge: Edge) {
        self.out.put(
            self.start + i,
            PlayerEdge {
                edge,
                clip: self.clip,
                weight: self.weight,
            },
        );
    }
}

#[cfg(test)]
mod tests;
