//! The player: one character's clips, time, speed, loop mode, pause and
//! transitions (cross-fade or inertialization, interruptible), advanced by
//! one call per frame that writes the pose, the events crossed and the root
//! motion.
//!
//! The player's state is a `sinew_player`: plain words the caller owns (in
//! a C struct, an array of characters), read and checked by every call
//! (`sinew_core::player::state` gives the layout) and written back only
//! when the call succeeds. Clips are passed per call as `sinew_clip_ref`s,
//! raw or compressed, up to `SINEW_MAX_PLAYER_CLIPS`.

use sinew_core::clip::{ClipSource, RawClip, TimeMode};
use sinew_core::compressed::CompressedClip;
use sinew_core::mix::transition::{Decay, InertialBlock};
use sinew_core::player::{
    Blend, FadeCurve, PlayMode, Player, PlayerBuffers, PlayerClips, PlayerEdge, Transition,
};
use sinew_core::track::event::{EdgeBuffer, EventTrack};
use sinew_core::{Error, SoaTransform};

use super::clip::{sinew_clip, sinew_compressed_clip, view_clip, view_compressed};
use super::mix::sinew_inertial_block;
use super::pose::{poses, poses_mut, sinew_soa_transform};
use super::ptr::{disjoint, out_param, read, slice, slice_mut, write, Span};
use super::status::sinew_status;
use super::track::{c_edge, sinew_edge, sinew_event_track, view_event_track};

/// Sources (clips playing at once during transitions) a `sinew_player` holds.
pub const SINEW_PLAYER_SOURCES: usize = 4;

/// Words in a `sinew_player`.
pub const SINEW_PLAYER_WORDS: usize = 42;

/// Most clips one player call takes.
pub const SINEW_MAX_PLAYER_CLIPS: usize = 64;

/// Play mode: wrap around at the ends.
pub const SINEW_PLAY_LOOP: u32 = 0;

/// Play mode: stop at the end (or at 0 backwards).
pub const SINEW_PLAY_CLAMP: u32 = 1;

/// Play mode: bounce between the ends.
pub const SINEW_PLAY_PING_PONG: u32 = 2;

/// Transition blend: both clips play, weighted by a fade curve.
pub const SINEW_BLEND_CROSSFADE: u32 = 0;

/// Transition blend: switch at once and decay the difference.
pub const SINEW_BLEND_INERTIALIZE: u32 = 1;

/// Fade curve `α = s`.
pub const SINEW_FADE_LINEAR: u32 = 0;

/// Fade curve `α = s² (3 − 2s)`.
pub const SINEW_FADE_SMOOTH_STEP: u32 = 1;

/// Fade curve `α = s²`.
pub const SINEW_FADE_EASE_IN: u32 = 2;

/// Fade curve `α = 1 − (1 − s)²`.
pub const SINEW_FADE_EASE_OUT: u32 = 3;

const _: () = {
    assert!(SINEW_PLAYER_WORDS == Player::<SINEW_PLAYER_SOURCES>::WORDS);
};

/// A player's state: private words, filled by `sinew_player_init`, read
/// and checked by every call (a changed word gives INVALID_DATA).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct sinew_player {
    /// Private state.
    pub words: [u32; SINEW_PLAYER_WORDS],
}

/// One clip the player may play: exactly one of the two handles is
/// non-NULL.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sinew_clip_ref {
    /// A raw clip, or NULL.
    pub raw: *const sinew_clip,
    /// A compressed clip, or NULL.
    pub compressed: *const sinew_compressed_clip,
}

/// A transition to another clip.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct sinew_transition {
    /// Seconds, finite and `>= 0` (0 cuts); `> 0` for a quintic
    /// inertialization.
    pub duration: f32,
    /// `SINEW_BLEND_CROSSFADE` or `SINEW_BLEND_INERTIALIZE`.
    pub blend: u32,
    /// Cross-fade: a `SINEW_FADE_*` curve. Inertialization: a
    /// `SINEW_DECAY_*` decay.
    pub shape: u32,
    /// Spring decay only: seconds for the offset to halve, `> 0`.
    pub half_life: f32,
}

/// Blocks each of `sinew_player_update`'s buffers needs.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct sinew_player_sizes {
    /// Source poses (`SINEW_PLAYER_SOURCES` poses).
    pub sources: usize,
    /// The last two outputs (keep them between frames).
    pub history: usize,
    /// Inertialization blocks, one per pose block (keep them between frames).
    pub inertial: usize,
    /// Decode scratch, one pose.
    pub scratch: usize,
}

/// An edge crossed this frame by one of the player's clips.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct sinew_player_edge {
    /// The edge.
    pub edge: sinew_edge,
    /// Index of the clip whose event track holds it.
    pub clip: u32,
    /// That clip's weight in this frame's pose, in `(0, 1]`.
    pub weight: f32,
}

/// What one `sinew_player_update` reports besides the pose.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct sinew_player_report {
    /// Edges written to the front of the edge buffer.
    pub edges_written: u64,
    /// Edges crossed that did not fit.
    pub edges_dropped: u64,
    /// Root displacement this frame in the facing frame at its start
    /// (z forward, x sideways, y up); zero without a root joint.
    pub root_translation: [f32; 3],
    /// Change of heading about +Y this frame, radians.
    pub root_yaw: f32,
    /// 1 when the current clip plays clamped and rests at its end.
    pub ended: u32,
}

/// The player's current state, for display and game logic.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct sinew_player_info {
    /// The clip the last transition went to.
    pub clip: u32,
    /// Its time, seconds within the clip.
    pub time: f32,
    /// Playback speed.
    pub speed: f32,
    /// Its `SINEW_PLAY_*` mode.
    pub mode: u32,
    /// 1 when paused.
    pub paused: u32,
    /// Clips playing (more than 1 during a cross-fade).
    pub source_count: u32,
    /// 1 while an inertialization offset decays.
    pub inertializing: u32,
}

/// A raw or a compressed clip, as the player's clip table.
#[derive(Clone, Copy)]
enum AnyClip<'a> {
    Raw(RawClip<'a>),
    Compressed(CompressedClip<'a>),
}

impl ClipSource for AnyClip<'_> {
    const BORROWS_FRAMES: bool = false;

    fn soa_count(&self) -> usize {
        match self {
            AnyClip::Raw(c) => ClipSource::soa_count(c),
            AnyClip::Compressed(c) => ClipSource::soa_count(c),
        }
    }

    fn frame_count(&self) -> usize {
        match self {
            AnyClip::Raw(c) => ClipSource::frame_count(c),
            AnyClip::Compressed(c) => ClipSource::frame_count(c),
        }
    }

    fn sample_rate(&self) -> f32 {
        match self {
            AnyClip::Raw(c) => ClipSource::sample_rate(c),
            AnyClip::Compressed(c) => ClipSource::sample_rate(c),
        }
    }

    fn name(&self) -> &str {
        match self {
            AnyClip::Raw(c) => ClipSource::name(c),
            AnyClip::Compressed(c) => ClipSource::name(c),
        }
    }

    fn needs_rest_pose(&self) -> bool {
        match self {
            AnyClip::Raw(c) => ClipSource::needs_rest_pose(c),
            AnyClip::Compressed(c) => ClipSource::needs_rest_pose(c),
        }
    }

    fn sample(
        &self,
        t: f32,
        mode: TimeMode,
        rest: &[SoaTransform],
        out: &mut [SoaTransform],
    ) -> Result<(), Error> {
        match self {
            AnyClip::Raw(c) => ClipSource::sample(c, t, mode, rest, out),
            AnyClip::Compressed(c) => ClipSource::sample(c, t, mode, rest, out),
        }
    }

    fn frame<'s>(
        &'s self,
        i: usize,
        rest: &[SoaTransform],
        scratch: &'s mut [SoaTransform],
    ) -> Result<&'s [SoaTransform], Error> {
        match self {
            AnyClip::Raw(c) => ClipSource::frame(c, i, rest, scratch),
            AnyClip::Compressed(c) => ClipSource::frame(c, i, rest, scratch),
        }
    }
}

/// Views the caller's clip table.
///
/// # Safety
/// `clips` has `count` entries whose non-NULL handles are readable.
unsafe fn view_clips<'a>(
    clips: *const sinew_clip_ref,
    count: usize,
) -> Result<heapless::Vec<AnyClip<'a>, SINEW_MAX_PLAYER_CLIPS>, sinew_status> {
    if count > SINEW_MAX_PLAYER_CLIPS {
        return Err(sinew_status::CapacityExceeded);
    }
    // SAFETY: the caller's contract makes `clips` valid for `count` entries.
    let refs = unsafe { slice(clips, count)? };
    let mut out = heapless::Vec::new();
    for r in refs {
        let clip = match (r.raw.is_null(), r.compressed.is_null()) {
            // SAFETY: a non-NULL handle is readable by the contract.
            (false, true) => AnyClip::Raw(unsafe { view_clip(r.raw)? }),
            // SAFETY: as above.
            (true, false) => AnyClip::Compressed(unsafe { view_compressed(r.compressed)?.0 }),
            (true, true) => return Err(sinew_status::NullParameter),
            (false, false) => return Err(sinew_status::InvalidArgument),
        };
        // `count <= SINEW_MAX_PLAYER_CLIPS`, the vector's capacity.
        out.push(clip).map_err(|_| sinew_status::CapacityExceeded)?;
    }
    Ok(out)
}

fn play_mode(mode: u32) -> Result<PlayMode, sinew_status> {
    match mode {
        SINEW_PLAY_LOOP => Ok(PlayMode::Loop),
        SINEW_PLAY_CLAMP => Ok(PlayMode::Clamp),
        SINEW_PLAY_PING_PONG => Ok(PlayMode::PingPong),
        _ => Err(sinew_status::InvalidArgument),
    }
}

fn transition(t: &sinew_transition) -> Result<Transition, sinew_status> {
    let blend = match t.blend {
        SINEW_BLEND_CROSSFADE => Blend::Crossfade(match t.shape {
            SINEW_FADE_LINEAR => FadeCurve::Linear,
            SINEW_FADE_SMOOTH_STEP => FadeCurve::SmoothStep,
            SINEW_FADE_EASE_IN => FadeCurve::EaseIn,
            SINEW_FADE_EASE_OUT => FadeCurve::EaseOut,
            _ => return Err(sinew_status::InvalidArgument),
        }),
        SINEW_BLEND_INERTIALIZE => Blend::Inertialize(match t.shape {
            super::mix::SINEW_DECAY_QUINTIC => Decay::Quintic,
            super::mix::SINEW_DECAY_SPRING => Decay::Spring {
                half_life: t.half_life,
            },
            _ => return Err(sinew_status::InvalidArgument),
        }),
        _ => return Err(sinew_status::InvalidArgument),
    };
    let t = Transition {
        duration: t.duration,
        blend,
    };
    t.validate().map_err(arg)?;
    Ok(t)
}

/// A caller's number that the core calls non-finite is the caller's
/// argument: INVALID_ARGUMENT, as in the other per-frame calls.
fn arg(e: Error) -> sinew_status {
    match e {
        Error::NonFinite { .. } => sinew_status::InvalidArgument,
        e => e.into(),
    }
}

/// Reads and checks a player's state.
///
/// # Safety
/// `p` is NULL or readable.
unsafe fn load(p: *const sinew_player) -> Result<Player<SINEW_PLAYER_SOURCES>, sinew_status> {
    // SAFETY: the caller's contract.
    let s = unsafe { read(p)? };
    Ok(Player::<SINEW_PLAYER_SOURCES>::from_words(&s.words)?)
}

/// Writes a player's state.
///
/// # Safety
/// `p` is non-NULL (checked by the caller) and writable.
unsafe fn store(
    p: *mut sinew_player,
    player: &Player<SINEW_PLAYER_SOURCES>,
) -> Result<(), sinew_status> {
    let mut s = sinew_player {
        words: [0; SINEW_PLAYER_WORDS],
    };
    player.to_words(&mut s.words)?;
    // SAFETY: the caller's contract.
    unsafe { write(p, s) };
    Ok(())
}

/// Runs `f` on the player at `p` and stores it back when `f` succeeds.
///
/// # Safety
/// `p` is NULL or readable and writable.
unsafe fn with_player(
    p: *mut sinew_player,
    f: impl FnOnce(&mut Player<SINEW_PLAYER_SOURCES>) -> Result<(), sinew_status>,
) -> Result<(), sinew_status> {
    out_param(p)?;
    // SAFETY: the caller's contract.
    let mut player = unsafe { load(p)? };
    f(&mut player)?;
    // SAFETY: `p` was checked non-NULL; the contract makes it writable.
    unsafe { store(p, &player) }
}

/// The blocks each buffer of `sinew_player_update` needs for poses of
/// `soa_count` blocks.
///
/// Errors: NULL_PARAMETER, BAD_LENGTH (a count whose sizes overflow).
///
/// # Safety
/// `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_player_buffer_sizes(
    soa_count: usize,
    out: *mut sinew_player_sizes,
) -> sinew_status {
    boundary! {
        out_param(out)?;
        if soa_count.checked_mul(SINEW_PLAYER_SOURCES).is_none() {
            return Err(sinew_status::BadLength);
        }
        let s = Player::<SINEW_PLAYER_SOURCES>::buffer_sizes(soa_count);
        let sizes = sinew_player_sizes {
            sources: s.sources,
            history: s.history,
            inertial: s.inertial,
            scratch: s.scratch,
        };
        // SAFETY: checked non-NULL above; the contract makes it writable.
        unsafe { write(out, sizes) };
        Ok(())
    }
}

/// Starts a player on clip `clip` of `clips` at time 0 (its end for a
/// negative speed later), speed 1, in `mode` (`SINEW_PLAY_*`).
///
/// Errors: NULL_PARAMETER, MISALIGNED, CAPACITY_EXCEEDED (more than
/// `SINEW_MAX_PLAYER_CLIPS` clips), INVALID_HANDLE, INVALID_ARGUMENT (an
/// unknown mode, a clip ref with both handles), OUT_OF_RANGE (`clip`).
/// `*out` is untouched on error.
///
/// # Safety
/// `out` is NULL or writable; `clips` has `clip_count` entries whose
/// handles are NULL or filled by their `_load`.
#[no_mangle]
pub unsafe extern "C" fn sinew_player_init(
    out: *mut sinew_player,
    clips: *const sinew_clip_ref,
    clip_count: usize,
    clip: u32,
    mode: u32,
) -> sinew_status {
    boundary! {
        out_param(out)?;
        // SAFETY: this function's `# Safety` contract.
        let clips = unsafe { view_clips(clips, clip_count)? };
        let player = Player::<SINEW_PLAYER_SOURCES>::new(&clips, clip as usize, play_mode(mode)?).map_err(arg)?;
        // SAFETY: checked non-NULL above; the contract makes it writable.
        unsafe { store(out, &player) }
    }
}

/// Transitions to clip `clip` in `mode`: a cross-fade (which may
/// interrupt one under way without a pop) or an inertialization (made at
/// the next update, from the last two outputs).
///
/// Errors: NULL_PARAMETER, MISALIGNED, CAPACITY_EXCEEDED, INVALID_HANDLE,
/// INVALID_DATA (a player whose words changed), INVALID_ARGUMENT (unknown
/// mode, blend, curve or decay; a negative or NaN duration; a zero
/// duration for a quintic decay; a bad half-life; a clip of another pose
/// size), OUT_OF_RANGE (`clip`). The player is untouched on error.
///
/// # Safety
/// `player` is NULL or a readable, writable `sinew_player`; `clips` as in
/// `sinew_player_init`; `t` is NULL or readable.
#[no_mangle]
pub unsafe extern "C" fn sinew_player_play(
    player: *mut sinew_player,
    clips: *const sinew_clip_ref,
    clip_count: usize,
    clip: u32,
    mode: u32,
    t: *const sinew_transition,
) -> sinew_status {
    boundary! {
        // SAFETY: this function's `# Safety` contract.
        let (clips, t) = unsafe { (view_clips(clips, clip_count)?, read(t)?) };
        let t = transition(&t)?;
        let mode = play_mode(mode)?;
        // SAFETY: as above.
        unsafe { with_player(player, |p| p.play(&clips, clip as usize, mode, &t).map_err(arg)) }
    }
}

/// Sets the playback speed (negative plays backwards).
///
/// Errors: NULL_PARAMETER, INVALID_DATA, INVALID_ARGUMENT (NaN or
/// infinite speed). The player is untouched on error.
///
/// # Safety
/// `player` is NULL or a readable, writable `sinew_player`.
#[no_mangle]
pub unsafe extern "C" fn sinew_player_set_speed(
    player: *mut sinew_player,
    speed: f32,
) -> sinew_status {
    boundary! {
        // SAFETY: this function's `# Safety` contract.
        unsafe { with_player(player, |p| p.set_speed(speed).map_err(arg)) }
    }
}

/// Pauses (`paused` 1) or resumes (0) every clock of the player.
///
/// Errors: NULL_PARAMETER, INVALID_DATA, INVALID_ARGUMENT (`paused` not 0
/// or 1). The player is untouched on error.
///
/// # Safety
/// `player` is NULL or a readable, writable `sinew_player`.
#[no_mangle]
pub unsafe extern "C" fn sinew_player_set_paused(
    player: *mut sinew_player,
    paused: u32,
) -> sinew_status {
    boundary! {
        // SAFETY: this function's `# Safety` contract.
        unsafe {
            with_player(player, |p| {
                match paused {
                    0 => p.resume(),
                    1 => p.pause(),
                    _ => return Err(sinew_status::InvalidArgument),
                }
                Ok(())
            })
        }
    }
}

/// Moves the current clip to `time` seconds with no events and no root
/// motion.
///
/// Errors: NULL_PARAMETER, MISALIGNED, CAPACITY_EXCEEDED, INVALID_HANDLE,
/// INVALID_DATA, INVALID_ARGUMENT (NaN time), OUT_OF_RANGE (the player's
/// clip is not in `clips`). The player is untouched on error.
///
/// # Safety
/// As `sinew_player_play`.
#[no_mangle]
pub unsafe extern "C" fn sinew_player_seek(
    player: *mut sinew_player,
    clips: *const sinew_clip_ref,
    clip_count: usize,
    time: f32,
) -> sinew_status {
    boundary! {
        // SAFETY: this function's `# Safety` contract.
        let clips = unsafe { view_clips(clips, clip_count)? };
        // SAFETY: as above.
        unsafe { with_player(player, |p| p.seek(&clips, time).map_err(arg)) }
    }
}

/// The player's current clip, time, speed, mode and transition state.
///
/// Errors: NULL_PARAMETER, INVALID_DATA. `*out` is untouched on error.
///
/// # Safety
/// `player` is NULL or readable; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_player_get_info(
    player: *const sinew_player,
    out: *mut sinew_player_info,
) -> sinew_status {
    boundary! {
        out_param(out)?;
        // SAFETY: this function's `# Safety` contract.
        let p = unsafe { load(player)? };
        let info = sinew_player_info {
            clip: p.clip() as u32,
            time: p.time(),
            speed: p.speed(),
            mode: p.mode() as u32,
            paused: u32::from(p.is_paused()),
            source_count: p.source_count() as u32,
            inertializing: u32::from(p.is_inertializing()),
        };
        // SAFETY: checked non-NULL above; the contract makes it writable.
        unsafe { write(out, info) };
        Ok(())
    }
}

/// The C edge array as the player's edge buffer.
struct CPlayerEdges<'a>(&'a mut [sinew_player_edge]);

impl EdgeBuffer<PlayerEdge> for CPlayerEdges<'_> {
    fn capacity(&self) -> usize {
        self.0.len()
    }

    fn put(&mut self, i: usize, e: PlayerEdge) {
        if let Some(slot) = self.0.get_mut(i) {
            *slot = sinew_player_edge {
                edge: c_edge(&e.edge),
                clip: e.clip,
                weight: e.weight,
            };
        }
    }
}

/// The buffers of `sinew_player_update`, sized by
/// `sinew_player_buffer_sizes`; `history` and `inertial` carry state from
/// frame to frame (pass the same ones every frame).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sinew_player_buffers {
    /// Source poses.
    pub sources: *mut sinew_soa_transform,
    /// Blocks in `sources`.
    pub sources_len: usize,
    /// The last two outputs.
    pub history: *mut sinew_soa_transform,
    /// Blocks in `history`.
    pub history_len: usize,
    /// Inertialization state.
    pub inertial: *mut sinew_inertial_block,
    /// Blocks in `inertial`.
    pub inertial_len: usize,
    /// Decode scratch.
    pub scratch: *mut sinew_soa_transform,
    /// Blocks in `scratch`.
    pub scratch_len: usize,
}

/// Advances the player by `dt` seconds and writes its pose into `out`:
/// every clip of the transitions under way is sampled at its time and
/// blended by its weight, the inertialization offset is added, and the
/// events crossed (from `events`: NULL, or one `sinew_event_track` per
/// clip, a `duration` of 0 meaning none) and the root motion of joint
/// `root` (-1: none) are reported.
///
/// Errors: NULL_PARAMETER, MISALIGNED, BAD_LENGTH (a buffer or `out` of the
/// wrong size, a rest pose of the wrong length for a clip that needs it),
/// CAPACITY_EXCEEDED, INVALID_HANDLE, INVALID_DATA (changed player words),
/// INVALID_ARGUMENT (NaN or negative `dt`, an invalid event track),
/// OUT_OF_RANGE (a clip the player plays is not in `clips`, `root`),
/// OVERLAPPING_BUFFERS. The player, `out`, `*report` and the edges are
/// untouched on error (the buffers may have been written).
///
/// # Safety
/// `player` is NULL or a readable, writable `sinew_player`; `clips` as in
/// `sinew_player_init`; `events` is NULL or has `clip_count` entries whose
/// pointers are valid for their lengths; `rest`, each buffer, `out` and
/// `edges` are valid for their lengths; `report` is NULL or writable.
#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn sinew_player_update(
    player: *mut sinew_player,
    dt: f32,
    clips: *const sinew_clip_ref,
    clip_count: usize,
    events: *const sinew_event_track,
    rest: *const sinew_soa_transform,
    rest_len: usize,
    root: i32,
    buffers: *const sinew_player_buffers,
    out: *mut sinew_soa_transform,
    out_len: usize,
    edges: *mut sinew_player_edge,
    edges_len: usize,
    report: *mut sinew_player_report,
) -> sinew_status {
    boundary! {
        out_param(report)?;
        out_param(player)?;
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length; the helpers check NULL, alignment and size.
        let (clips, b, rest) = unsafe {
            (view_clips(clips, clip_count)?, read(buffers)?, slice(rest, rest_len)?)
        };
        let mut tracks: heapless::Vec<Option<EventTrack<'_>>, SINEW_MAX_PLAYER_CLIPS> =
            heapless::Vec::new();
        if !events.is_null() {
            // SAFETY: as above.
            for t in unsafe { slice(events, clip_count)? } {
                let track = if t.duration == 0.0 {
                    None
                } else {
                    // SAFETY: as above.
                    Some(unsafe { view_event_track(t)? })
                };
                tracks.push(track).map_err(|_| sinew_status::CapacityExceeded)?;
            }
        }
        // SAFETY: as above.
        let (sources, history, inertial, scratch, out, edges) = unsafe {
            (
                slice_mut(b.sources, b.sources_len)?,
                slice_mut(b.history, b.history_len)?,
                slice_mut(b.inertial, b.inertial_len)?,
                slice_mut(b.scratch, b.scratch_len)?,
                slice_mut(out, out_len)?,
                slice_mut(edges, edges_len)?,
            )
        };
        let spans = [
            Span::of(sources),
            Span::of(history),
            Span::of(inertial),
            Span::of(scratch),
            Span::of(out),
            Span::of(edges),
            Span::of(rest),
        ];
        for (i, s) in spans.iter().enumerate() {
            disjoint(*s, &spans[i + 1..])?;
        }
        let root = match root {
            -1 => None,
            r => Some(usize::try_from(r).map_err(|_| sinew_status::OutOfRange)?),
        };
        // SAFETY: as above.
        let mut p = unsafe { load(player)? };
        let inertial: &mut [InertialBlock] = bytemuck::cast_slice_mut(inertial);
        let assets = PlayerClips {
            clips: &clips,
            events: &tracks,
            rest: poses(rest),
            root,
        };
        let mut bufs = PlayerBuffers {
            sources: poses_mut(sources),
            history: poses_mut(history),
            inertial,
            scratch: poses_mut(scratch),
        };
        let r = p
            .update_into(dt, &assets, &mut bufs, poses_mut(out), &mut CPlayerEdges(edges))
            .map_err(arg)?;
        let c = sinew_player_report {
            edges_written: r.edges_written as u64,
            edges_dropped: r.edges_dropped,
            root_translation: [r.root_motion.translation.x, r.root_motion.translation.y, r.root_motion.translation.z],
            root_yaw: r.root_motion.yaw,
            ended: u32::from(r.ended),
        };
        // SAFETY: both checked non-NULL above; the contract makes them writable.
        unsafe {
            store(player, &p)?;
            write(report, c);
        }
        Ok(())
    }
}
