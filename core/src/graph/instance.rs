//! One character playing a graph: parameters, the current state path,
//! the fader of playing leaves with their clocks, and inertialization.

use heapless::Vec as HVec;
use wide::f32x4;

use super::format::{Graph, NodeRec};
use super::{
    ParamKind, ANY_STATE, MAX_ACTIVE, MAX_BLEND_SAMPLES, MAX_CLOCKS, MAX_DEPTH, MAX_FRAME_EDGES,
    MAX_PARAMS,
};
use crate::blend::{self, BlendJob, BlendLayer, JointWeights};
use crate::clip::{ClipSource, TimeMode};
use crate::error::Error;
use crate::mix::additive::apply_additive;
use crate::mix::blend_space::{sample_blend, BlendSpace1D, PhaseSync, Sample1D, Weights};
use crate::mix::transition::{Decay, InertialBlock, Inertializer, SwitchJob};
use crate::player::{Blend, Fader, PlayMode, Playhead, Transition};
use crate::soa::{check_len, SoaTransform, LANES};
use crate::track::event::{Edge, EdgeBuffer, EventTrack};

/// What an update reads: the graph and the assets it names.
#[derive(Clone, Copy, Debug)]
pub struct GraphContext<'a, C> {
    /// The graph the instance was made for.
    pub graph: &'a Graph<'a>,
    /// The clip table, at least [`Graph::clip_count`] clips, each of
    /// `rest.len()` blocks per pose.
    pub clips: &'a [C],
    /// Event tracks: empty (no events), or one per clip (`None` for a clip
    /// without events), each of its clip's duration.
    pub events: &'a [Option<EventTrack<'a>>],
    /// The skeleton's rest pose: fixes the pose length `n` (blocks).
    pub rest: &'a [SoaTransform],
}

/// The caller memory an update works in, sized once per skeleton and graph
/// (`n` = rest-pose blocks).
#[derive(Debug)]
pub struct GraphBuffers<'a> {
    /// `graph.scratch_poses() × n` blocks: the playing leaves' poses and
    /// the blend trees' intermediate poses.
    pub scratch: &'a mut [SoaTransform],
    /// `2 × n` blocks: the last two output poses (what an inertialized
    /// transition starts from). Keep it with the instance between frames.
    pub history: &'a mut [SoaTransform],
    /// `n` blocks: the inertialization offsets. Keep it with the instance.
    pub inertial: &'a mut [InertialBlock],
    /// `2 × n` lanes blocks: a masked layer's per-joint weights.
    pub mask: &'a mut [f32x4],
}

/// An event edge a playing leaf crossed this frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GraphEvent {
    /// The leaf state that played it.
    pub state: usize,
    /// The clip whose event track it is on.
    pub clip: usize,
    /// The edge, as the clip's event track reports it.
    pub edge: Edge,
    /// The leaf's fader weight times the clip's weight in a blend space
    /// (1 for a lone clip; blend and layer weights are not applied).
    pub weight: f32,
}

/// What an update did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Report {
    /// The current state path after the update, root level first
    /// (`depth` entries used).
    pub path: [u16; MAX_DEPTH],
    /// Levels in `path`.
    pub depth: usize,
    /// The transition that fired this update, if any.
    pub transition: Option<usize>,
    /// Event edges written to the caller's buffer.
    pub events: usize,
    /// Event edges that did not fit it (or, past 1024 edges of one clock
    /// in one frame, were counted without being walked).
    pub events_dropped: u64,
}

impl Report {
    /// The state path, root level first.
    #[must_use]
    pub fn path(&self) -> &[u16] {
        &self.path[..self.depth.min(MAX_DEPTH)]
    }

    /// The leaf state: the last of the path.
    #[must_use]
    pub fn leaf(&self) -> usize {
        self.path().last().map_or(0, |&s| usize::from(s))
    }
}

/// One clock of a leaf's tree: a clip node's playhead or a blend space's phase.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Clock {
    playhead: Playhead,
    phase: PhaseSync,
}

const CLOCK: Clock = Clock {
    playhead: Playhead::new(PlayMode::Loop),
    phase: PhaseSync { phase: 0.0 },
};

/// A leaf state playing in the fader.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Active {
    state: u16,
    /// Normalised time of the first clock, unwrapped.
    norm: f32,
    clocks: [Clock; MAX_CLOCKS],
}

/// One character's graph state; see the [module docs](super).
///
/// A plain `Copy`, `'static` value: parameters live inside it
/// ([`MAX_PARAMS`] of them), poses in the caller's [`GraphBuffers`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GraphInstance {
    params: [f32; MAX_PARAMS],
    path: [u16; MAX_DEPTH],
    depth: u8,
    fader: Fader<Active, MAX_ACTIVE>,
    inertializer: Inertializer,
    /// Whether the last transition started may be interrupted while under way.
    interruptible: bool,
    /// Output poses in the history buffer (0, 1 or 2).
    history: u8,
    last_dt: f32,
    /// Whether the initial leaf's clocks have been set from its clips.
    started: bool,
    /// The graph's size and state count: what `check` compares.
    graph_id: (usize, usize),
}

const NOT_THIS_GRAPH: Error = Error::InvalidParameter {
    what: "the instance was made for another graph",
};

/// The bounded stack of pose buffers a tree evaluates in.
fn split(
    s: &mut [SoaTransform],
    n: usize,
) -> Result<(&mut [SoaTransform], &mut [SoaTransform]), Error> {
    let len = s.len();
    s.split_at_mut_checked(n).ok_or(Error::BufferTooSmall {
        needed: n,
        actual: len,
    })
}

fn node(graph: &Graph<'_>, i: u32) -> Result<NodeRec, Error> {
    graph
        .nodes
        .get(i as usize)
        .copied()
        .ok_or(Error::Corrupt { what: "node index" })
}

/// A blend-space node's space over the clip table's durations.
fn space<C: ClipSource>(
    graph: &Graph<'_>,
    clips: &[C],
    n: &NodeRec,
) -> Result<BlendSpace1D<'static, MAX_BLEND_SAMPLES>, Error> {
    let mut samples: HVec<Sample1D<'static>, MAX_BLEND_SAMPLES> = HVec::new();
    let first = n.first as usize;
    for s in graph
        .samples
        .get(first..first + n.count as usize)
        .unwrap_or(&[])
    {
        let clip = s.clip as usize;
        let c = clips.get(clip).ok_or(Error::UnknownClip {
            clip,
            count: clips.len(),
        })?;
        let sample = Sample1D {
            position: s.position,
            clip,
            duration: c.duration(),
            markers: &[],
        };
        samples.push(sample).map_err(|_| Error::CapacityExceeded {
            capacity: MAX_BLEND_SAMPLES,
        })?;
    }
    BlendSpace1D::new(&samples)
}

/// Per-frame state of one update, shared by the tree walks.
struct Frame<'f, 'a, C> {
    ctx: &'f GraphContext<'a, C>,
    params: &'f [f32; MAX_PARAMS],
}

impl<C: ClipSource> Frame<'_, '_, C> {
    fn weight(&self, p: u32) -> f32 {
        let w = self.params.get(p as usize).copied().unwrap_or(0.0);
        w.clamp(0.0, 1.0)
    }

    fn clip(&self, i: u32) -> Result<&C, Error> {
        let clips = self.ctx.clips;
        clips.get(i as usize).ok_or(Error::UnknownClip {
            clip: i as usize,
            count: clips.len(),
        })
    }

    /// Sets a leaf's clocks: each playhead at its play mode and node speed
    /// (at the clip's end when it plays backwards), each phase at 0. The
    /// state's speed scales the `dt` the clocks advance by.
    fn init(&self, i: u32, clocks: &mut [Clock], slot: &mut usize) -> Result<(), Error> {
        let n = node(self.ctx.graph, i)?;
        match n.kind {
            0 | 1 => {
                let c = clocks.get_mut(*slot).ok_or(Error::CapacityExceeded {
                    capacity: MAX_CLOCKS,
                })?;
                *slot += 1;
                *c = CLOCK;
                if n.kind == 0 {
                    let mode = match n.mode {
                        1 => PlayMode::Clamp,
                        2 => PlayMode::PingPong,
                        _ => PlayMode::Loop,
                    };
                    c.playhead = Playhead::new(mode);
                    c.playhead.set_speed(n.speed)?;
                    if n.speed < 0.0 {
                        let d = self.clip(n.a)?.duration();
                        c.playhead.seek(d, d)?;
                    }
                }
                Ok(())
            }
            _ => {
                self.init(n.a, clocks, slot)?;
                self.init(n.b, clocks, slot)
            }
        }
    }

    /// Advances a leaf's clocks by `dt` state seconds; `emit(clip, edge,
    /// weight)` gets every event edge crossed.
    #[allow(clippy::too_many_arguments)]
    fn advance(
        &self,
        i: u32,
        dt: f32,
        clocks: &mut [Clock],
        slot: &mut usize,
        norm: &mut f32,
        emit: &mut impl FnMut(usize, Edge, f32),
    ) -> Result<u64, Error> {
        let n = node(self.ctx.graph, i)?;
        let first = *slot == 0;
        match n.kind {
            0 => {
                let clip = self.clip(n.a)?;
                let d = clip.duration();
                let c = clocks.get_mut(*slot).ok_or(Error::CapacityExceeded {
                    capacity: MAX_CLOCKS,
                })?;
                *slot += 1;
                let speed = c.playhead.speed();
                let adv = c.playhead.advance(dt, d)?;
                if first && d > 0.0 {
                    *norm = match adv.mode {
                        PlayMode::Clamp if speed < 0.0 => (d - adv.to) / d,
                        PlayMode::Clamp => adv.to / d,
                        _ => *norm + (speed * dt).abs() / d,
                    };
                }
                let mut dropped = 0;
                if let Some(Some(track)) = self.ctx.events.get(n.a as usize) {
                    let t =
                        adv.trigger_into(track, &mut Emit(&mut |e| emit(n.a as usize, e, 1.0)))?;
                    dropped += t.dropped;
                }
                Ok(dropped)
            }
            1 => {
                let space = space(self.ctx.graph, self.ctx.clips, &n)?;
                let w = space.weights(self.params.get(n.param as usize).copied().unwrap_or(0.0))?;
                let c = clocks.get_mut(*slot).ok_or(Error::CapacityExceeded {
                    capacity: MAX_CLOCKS,
                })?;
                *slot += 1;
                let before: [f32; 3] =
                    core::array::from_fn(|k| c.phase.clip_time(&space, w.samples[k]));
                let dts = dt * n.speed;
                c.phase.advance(&space, &w, dts)?;
                let cycle = space.cycle_duration(&w);
                let whole = if cycle > 0.0 {
                    libm::floorf(dts / cycle)
                } else {
                    0.0
                };
                if first && cycle > 0.0 {
                    *norm += dts / cycle;
                }
                let mut dropped = 0u64;
                for (k, (s, clip, wt)) in w.iter().enumerate() {
                    let Some(Some(track)) = self.ctx.events.get(clip) else {
                        continue;
                    };
                    let to = c.phase.clip_time(&space, s);
                    let from = before[k];
                    let loops = whole as i32 + i32::from(to < from);
                    let t = track.trigger_wrapped_into(
                        from,
                        to,
                        loops,
                        &mut Emit(&mut |e| emit(clip, e, wt)),
                    )?;
                    dropped = dropped.saturating_add(t.dropped);
                }
                Ok(dropped)
            }
            _ => {
                let a = self.advance(n.a, dt, clocks, slot, norm, emit)?;
                let b = self.advance(n.b, dt, clocks, slot, norm, emit)?;
                Ok(a.saturating_add(b))
            }
        }
    }

    /// Evaluates node `i` of a leaf into `out`, with `stack` for the
    /// intermediate poses (at least the node's scratch poses).
    fn eval(
        &self,
        i: u32,
        clocks: &[Clock],
        slot: &mut usize,
        out: &mut [SoaTransform],
        stack: &mut [SoaTransform],
        mask: &mut [f32x4],
    ) -> Result<(), Error> {
        let ctx = self.ctx;
        let rest = ctx.rest;
        let len = rest.len();
        let n = node(ctx.graph, i)?;
        let clock = |slot: usize| {
            clocks.get(slot).ok_or(Error::CapacityExceeded {
                capacity: MAX_CLOCKS,
            })
        };
        match n.kind {
            0 => {
                let c = clock(*slot)?;
                *slot += 1;
                self.clip(n.a)?
                    .sample(c.playhead.time(), TimeMode::Clamp, rest, out)
            }
            1 => {
                let c = clock(*slot)?;
                *slot += 1;
                let space = space(ctx.graph, ctx.clips, &n)?;
                let w: Weights =
                    space.weights(self.params.get(n.param as usize).copied().unwrap_or(0.0))?;
                let (three, _) = split(stack, 3 * len)?;
                let phase = c.phase;
                sample_blend(
                    ctx.clips,
                    &w,
                    |s| phase.clip_time(&space, s),
                    TimeMode::Loop,
                    rest,
                    three,
                    out,
                )
            }
            3 => {
                let w = self.weight(n.param);
                self.eval(n.a, clocks, slot, out, stack, mask)?;
                let (add, tail) = split(stack, len)?;
                if w > 0.0 {
                    self.eval(n.b, clocks, slot, add, tail, mask)?;
                    apply_additive(out, add, w, None)
                } else {
                    *slot += node(ctx.graph, n.b)?.clocks as usize;
                    Ok(())
                }
            }
            kind => {
                let w = self.weight(n.param);
                // A two-way blend at an end evaluates one child (the other's
                // clocks still count their slots).
                let skip = |k: u32| node(ctx.graph, k).map(|c| c.clocks as usize);
                if kind == 2 && w <= 0.0 {
                    self.eval(n.a, clocks, slot, out, stack, mask)?;
                    *slot += skip(n.b)?;
                    return Ok(());
                }
                if kind == 2 && w >= 1.0 {
                    *slot += skip(n.a)?;
                    return self.eval(n.b, clocks, slot, out, stack, mask);
                }
                let (a, after_a) = split(stack, len)?;
                self.eval(n.a, clocks, slot, a, &mut *after_a, mask)?;
                let (b, tail) = split(after_a, len)?;
                self.eval(n.b, clocks, slot, b, tail, mask)?;
                if kind == 2 {
                    let layers = [BlendLayer::new(a, 1.0 - w), BlendLayer::new(b, w)];
                    return blend::blend(&BlendJob::new(&layers, &[], rest), out);
                }
                // Masked: per joint lerp(base, layer, w · mask_j).
                let mask_len = mask.len();
                let (base_w, layer_w) = mask.split_at_mut_checked(len).ok_or(Error::BadLength {
                    buffer: "mask",
                    expected: 2 * len,
                    actual: mask_len,
                })?;
                check_len("mask", len, layer_w.len().min(len))?;
                let layer_w = &mut layer_w[..len];
                layer_w.fill(f32x4::ZERO);
                let first = n.first as usize;
                for m in ctx
                    .graph
                    .mask
                    .get(first..first + n.count as usize)
                    .unwrap_or(&[])
                {
                    let j = m.joint as usize;
                    let block = layer_w.get_mut(j / LANES).ok_or(Error::JointOutOfRange {
                        joint: j,
                        count: len * LANES,
                    })?;
                    let mut lanes = block.to_array();
                    lanes[j % LANES] = (w * m.weight).clamp(0.0, 1.0);
                    *block = f32x4::new(lanes);
                }
                for (bw, lw) in base_w.iter_mut().zip(layer_w.iter()) {
                    *bw = f32x4::ONE - *lw;
                }
                let layers = [
                    BlendLayer::masked(a, 1.0, JointWeights::new(base_w)?),
                    BlendLayer::masked(b, 1.0, JointWeights::new(layer_w)?),
                ];
                blend::blend(&BlendJob::new(&layers, &[], rest), out)
            }
        }
    }
}

/// The leaf a state leads to (itself, or its machines' entry chain), and
/// the path from `state` down to it appended to `path[level..]`.
fn descend(
    graph: &Graph<'_>,
    state: usize,
    level: usize,
    path: &mut [u16; MAX_DEPTH],
) -> Result<usize, Error> {
    let mut s = state;
    let mut level = level;
    loop {
        let slot = path.get_mut(level).ok_or(Error::Corrupt {
            what: "machines nest deeper than MAX_DEPTH",
        })?;
        *slot = s as u16;
        let r = graph.states.get(s).ok_or(Error::Corrupt {
            what: "state index",
        })?;
        if r.motion_kind == 0 {
            return Ok(level + 1);
        }
        let m = graph
            .machines
            .get(r.motion as usize)
            .ok_or(Error::Corrupt {
                what: "machine index",
            })?;
        s = m.entry as usize;
        level += 1;
    }
}

fn active(state: usize) -> Active {
    Active {
        state: state as u16,
        norm: 0.0,
        clocks: [CLOCK; MAX_CLOCKS],
    }
}

impl GraphInstance {
    /// An instance at the root machine's entry path, parameters at their
    /// defaults. Its clocks are set from the clips on the first update.
    ///
    /// # Errors
    /// [`Error::Corrupt`] only for a graph that [`Graph::from_bytes`]
    /// did not check (it cannot happen for a view).
    pub fn new(graph: &Graph<'_>) -> Result<Self, Error> {
        let mut params = [0.0; MAX_PARAMS];
        for (v, p) in params.iter_mut().zip(graph.params) {
            *v = p.default;
        }
        let root = graph.machines.first().ok_or(Error::Corrupt {
            what: "a graph needs a root machine",
        })?;
        let mut path = [0u16; MAX_DEPTH];
        let depth = descend(graph, root.entry as usize, 0, &mut path)?;
        let leaf = usize::from(path[depth - 1]);
        Ok(GraphInstance {
            params,
            path,
            depth: depth as u8,
            fader: Fader::new(active(leaf))?,
            inertializer: Inertializer::new(Decay::Quintic)?,
            interruptible: true,
            history: 0,
            last_dt: 0.0,
            started: false,
            graph_id: (graph.total, graph.states.len()),
        })
    }

    fn check(&self, graph: &Graph<'_>) -> Result<(), Error> {
        if self.graph_id == (graph.total, graph.states.len()) {
            Ok(())
        } else {
            Err(NOT_THIS_GRAPH)
        }
    }

    /// Value of parameter `i` (a bool or a set trigger reads 1).
    #[must_use]
    pub fn param(&self, i: usize) -> Option<f32> {
        self.params.get(i).copied()
    }

    /// Sets parameter `param`: a float to `value` (finite), a bool to
    /// `value != 0`, a trigger set (`value != 0`) or reset (`0`).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for another graph or a parameter it does
    /// not have, [`Error::NonFinite`] for a NaN or infinite value; nothing
    /// changes then.
    pub fn set_param(&mut self, graph: &Graph<'_>, param: usize, value: f32) -> Result<(), Error> {
        self.check(graph)?;
        let p = graph.param(param).ok_or(Error::InvalidParameter {
            what: "the graph has no such parameter",
        })?;
        if !value.is_finite() {
            return Err(Error::NonFinite {
                what: "parameter value",
            });
        }
        self.params[param] = match p.kind {
            ParamKind::Float => value,
            ParamKind::Bool | ParamKind::Trigger => f32::from(u8::from(value != 0.0)),
        };
        Ok(())
    }

    /// [`Self::set_param`] by name (a linear search of the parameters).
    ///
    /// # Errors
    /// As [`Self::set_param`].
    pub fn set_named(&mut self, graph: &Graph<'_>, name: &str, value: f32) -> Result<(), Error> {
        let i = graph.find_param(name).ok_or(Error::InvalidParameter {
            what: "the graph has no parameter of that name",
        })?;
        self.set_param(graph, i, value)
    }

    /// Value of the parameter called `name`.
    #[must_use]
    pub fn param_named(&self, graph: &Graph<'_>, name: &str) -> Option<f32> {
        self.param(graph.find_param(name)?)
    }

    /// Sets trigger `param`; the transition it fires clears it.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for another graph or a parameter that is
    /// not a trigger.
    pub fn fire(&mut self, graph: &Graph<'_>, param: usize) -> Result<(), Error> {
        self.check(graph)?;
        match graph.param(param) {
            Some(p) if p.kind == ParamKind::Trigger => {
                self.params[param] = 1.0;
                Ok(())
            }
            _ => Err(Error::InvalidParameter {
                what: "the parameter is not a trigger",
            }),
        }
    }

    /// The current state path, root level first.
    #[must_use]
    pub fn path(&self) -> &[u16] {
        &self.path[..usize::from(self.depth).min(MAX_DEPTH)]
    }

    /// The current leaf state (the last transition's target leaf).
    #[must_use]
    pub fn current(&self) -> usize {
        usize::from(self.fader.current().state)
    }

    /// Normalised time of the current leaf (see the [module docs](super)).
    #[must_use]
    pub fn normalized_time(&self) -> f32 {
        self.fader.current().norm
    }

    /// The playing leaf states, oldest first, with their fader weights (summing to 1).
    pub fn active(&self) -> impl Iterator<Item = (usize, f32)> + '_ {
        self.fader.sources().map(|(a, w)| (usize::from(a.state), w))
    }

    /// Whether an inertialized transition's offset is still decaying.
    #[must_use]
    pub fn is_inertializing(&self) -> bool {
        self.inertializer.is_active()
    }

    /// Plays one frame of `dt` seconds (see the [module docs](super) for
    /// the order of things): writes the pose into `out` (`rest.len()`
    /// blocks, every block written) and the event edges the playing leaves
    /// crossed into `events` (oldest leaf first; the rest are counted in
    /// the report).
    ///
    /// # Errors
    /// [`Error::NonFinite`] (`dt` negative or not finite),
    /// [`Error::InvalidParameter`] (another graph; an event table neither
    /// empty nor one per clip, or a track whose duration is not its
    /// clip's), [`Error::UnknownClip`] (fewer clips than the graph names),
    /// [`Error::BadLength`] (a buffer, a clip or `out` not sized for the
    /// rest pose as [`GraphBuffers`] says), [`Error::JointOutOfRange`] (a
    /// mask joint past the pose). These are checked before anything
    /// changes. A blend-space clip of zero duration fails as
    /// [`BlendSpace1D::new`] does, mid-update.
    pub fn update<C: ClipSource>(
        &mut self,
        dt: f32,
        ctx: &GraphContext<'_, C>,
        buffers: &mut GraphBuffers<'_>,
        out: &mut [SoaTransform],
        events: &mut [GraphEvent],
    ) -> Result<Report, Error> {
        let graph = ctx.graph;
        self.check(graph)?;
        if !(dt.is_finite() && dt >= 0.0) {
            return Err(Error::NonFinite { what: "dt" });
        }
        let n = ctx.rest.len();
        check_inputs(ctx, buffers, out)?;
        let frame = Frame {
            ctx,
            params: &self.params,
        };
        if !self.started {
            let a = self.fader.current_mut();
            let s = graph.states[usize::from(a.state)];
            frame.init(s.motion, &mut a.clocks, &mut 0)?;
            self.started = true;
        }

        // 1. Fades and clocks move on; events are collected.
        self.fader.advance(dt)?;
        let mut weights = [0.0f32; MAX_ACTIVE];
        for (w, (_, x)) in weights.iter_mut().zip(self.fader.sources()) {
            *w = x;
        }
        let newest = self.fader.len() - 1;
        let mut frame_edges: HVec<(usize, Edge), MAX_FRAME_EDGES> = HVec::new();
        let mut written = 0usize;
        let mut dropped = 0u64;
        for (k, a) in self.fader.payloads_mut().enumerate() {
            let s = graph.states[usize::from(a.state)];
            let (state, fw) = (usize::from(a.state), weights[k]);
            let mut emit = |clip: usize, edge: Edge, w: f32| {
                if k == newest {
                    let _ = frame_edges.push((clip, edge));
                }
                match events.get_mut(written) {
                    Some(slot) => {
                        *slot = GraphEvent {
                            state,
                            clip,
                            edge,
                            weight: fw * w,
                        };
                        written += 1;
                    }
                    None => dropped += 1,
                }
            };
            let walked_past = frame.advance(
                s.motion,
                dt * s.speed,
                &mut a.clocks,
                &mut 0,
                &mut a.norm,
                &mut emit,
            )?;
            dropped = dropped.saturating_add(walked_past);
        }

        // 2. At most one transition fires.
        let blocked =
            !self.interruptible && (self.fader.is_fading() || self.inertializer.is_active());
        let mut fired = None;
        if !blocked {
            fired = self.find_transition(graph, ctx, &frame_edges);
        }
        let mut switch: Option<Transition> = None;
        if let Some(t) = fired {
            let tr = graph.transitions[t];
            let transition = graph.transition(t).ok_or(Error::Corrupt {
                what: "transition index",
            })?;
            let level = self.level_of(graph, t);
            let mut path = self.path;
            let depth = descend(graph, tr.to as usize, level, &mut path)?;
            let leaf = usize::from(path[depth - 1]);
            let mut entry = active(leaf);
            let s = graph.states[leaf];
            let frame = Frame {
                ctx,
                params: &self.params,
            };
            frame.init(s.motion, &mut entry.clocks, &mut 0)?;
            self.fader.start(entry, &transition.transition)?;
            (self.path, self.depth) = (path, depth as u8);
            self.interruptible = transition.interruptible;
            let first = tr.first_condition as usize;
            for c in &graph.conditions[first..first + tr.condition_count as usize] {
                if c.kind == 3 {
                    self.params[c.a as usize] = 0.0;
                }
            }
            if matches!(transition.transition.blend, Blend::Inertialize(_)) {
                switch = Some(transition.transition);
            }
        }

        // 3. Poses: each playing leaf, blended by the fader's weights.
        let frame = Frame {
            ctx,
            params: &self.params,
        };
        let len = self.fader.len();
        if len == 1 {
            let a = self.fader.current();
            let s = graph.states[usize::from(a.state)];
            frame.eval(
                s.motion,
                &a.clocks,
                &mut 0,
                out,
                buffers.scratch,
                buffers.mask,
            )?;
        } else {
            let (poses, stack) = split(buffers.scratch, len * n)?;
            let mut ws = [0.0f32; MAX_ACTIVE];
            for ((a, w), (pose, slot)) in self
                .fader
                .sources()
                .zip(poses.chunks_exact_mut(n.max(1)).zip(ws.iter_mut()))
            {
                *slot = w;
                if w > 0.0 {
                    let s = graph.states[usize::from(a.state)];
                    frame.eval(s.motion, &a.clocks, &mut 0, pose, &mut *stack, buffers.mask)?;
                }
            }
            let mut layers = [BlendLayer::new(&[], 0.0); MAX_ACTIVE];
            for ((l, pose), w) in layers.iter_mut().zip(poses.chunks_exact(n.max(1))).zip(ws) {
                *l = BlendLayer::new(pose, w);
            }
            blend::blend(&BlendJob::new(&layers[..len], &[], ctx.rest), out)?;
        }

        // 4. Inertialization: an inertialized switch starts from the last
        // two outputs (none yet: the switch is a cut).
        if let Some(t) = switch {
            if self.history > 0 && self.last_dt > 0.0 {
                let (old, old_prev) = buffers.history.split_at(n);
                let old_prev = if self.history > 1 { old_prev } else { old };
                let (decay, duration) = match t.blend {
                    Blend::Inertialize(Decay::Spring { half_life }) if t.duration <= 0.0 => {
                        (Decay::Spring { half_life }, half_life)
                    }
                    Blend::Inertialize(d) => (d, t.duration),
                    Blend::Crossfade(_) => (Decay::Quintic, t.duration),
                };
                let mut inertializer = Inertializer::new(decay)?;
                let job = SwitchJob::new(old, old_prev, out, out, self.last_dt, duration);
                inertializer.switch(buffers.inertial, &job)?;
                self.inertializer = inertializer;
            }
        }
        self.inertializer.update(buffers.inertial, dt, out)?;
        buffers.history.copy_within(0..n, n);
        buffers.history[..n].copy_from_slice(out);
        self.history = (self.history + 1).min(2);
        if dt > 0.0 {
            self.last_dt = dt;
        }
        Ok(Report {
            path: self.path,
            depth: usize::from(self.depth),
            transition: fired,
            events: written,
            events_dropped: dropped,
        })
    }

    /// The level of the path whose machine holds transition `t`.
    fn level_of(&self, graph: &Graph<'_>, t: usize) -> usize {
        let to = graph.transitions[t].to as usize;
        let machine = graph.states[to].machine;
        self.path()
            .iter()
            .position(|&s| graph.states[usize::from(s)].machine == machine)
            .unwrap_or(0)
    }

    /// The first transition whose conditions hold, level by level from the
    /// root, any-state transitions first at each level.
    fn find_transition<C: ClipSource>(
        &self,
        graph: &Graph<'_>,
        ctx: &GraphContext<'_, C>,
        edges: &[(usize, Edge)],
    ) -> Option<usize> {
        for &s in self.path() {
            let src = graph.states[usize::from(s)];
            let m = graph.machines[src.machine as usize];
            let first = m.first_transition as usize;
            let range = first..first + m.transition_count as usize;
            for any in [true, false] {
                for t in range.clone() {
                    let tr = &graph.transitions[t];
                    let from_ok = if any {
                        tr.from == ANY_STATE && tr.to != u32::from(s)
                    } else {
                        tr.from == u32::from(s)
                    };
                    if from_ok && self.holds(graph, ctx, t, edges) {
                        return Some(t);
                    }
                }
            }
        }
        None
    }

    fn holds<C: ClipSource>(
        &self,
        graph: &Graph<'_>,
        ctx: &GraphContext<'_, C>,
        t: usize,
        edges: &[(usize, Edge)],
    ) -> bool {
        let tr = &graph.transitions[t];
        let first = tr.first_condition as usize;
        let p = |i: u32| self.params.get(i as usize).copied().unwrap_or(0.0);
        graph.conditions[first..first + tr.condition_count as usize]
            .iter()
            .all(|c| match c.kind {
                0 => p(c.a) > c.value,
                1 => p(c.a) < c.value,
                2 => (p(c.a) != 0.0) == (c.b != 0),
                3 => p(c.a) != 0.0,
                4 => edges.iter().any(|(_, e)| e.is_start() && e.id == c.a),
                5 => {
                    let name = graph.condition_name(c);
                    edges.iter().any(|(clip, e)| {
                        e.is_start()
                            && ctx
                                .events
                                .get(*clip)
                                .and_then(|t| t.as_ref())
                                .and_then(|t| t.name(e.event as usize))
                                == Some(name)
                    })
                }
                _ => self.fader.current().norm >= c.value,
            })
    }
}

/// The size checks of an update, before anything changes.
fn check_inputs<C: ClipSource>(
    ctx: &GraphContext<'_, C>,
    buffers: &GraphBuffers<'_>,
    out: &[SoaTransform],
) -> Result<(), Error> {
    let graph = ctx.graph;
    let n = ctx.rest.len();
    check_len("output", n, out.len())?;
    check_len(
        "graph scratch",
        graph.scratch_poses() * n,
        buffers.scratch.len(),
    )?;
    check_len("graph history", 2 * n, buffers.history.len())?;
    check_len("inertialization state", n, buffers.inertial.len())?;
    check_len("graph mask", 2 * n, buffers.mask.len())?;
    if ctx.clips.len() < graph.clip_count {
        return Err(Error::UnknownClip {
            clip: graph.clip_count - 1,
            count: ctx.clips.len(),
        });
    }
    for c in ctx.clips {
        check_len("clip pose", n, c.soa_count())?;
    }
    if !ctx.events.is_empty() {
        check_len("event tracks", ctx.clips.len(), ctx.events.len())?;
        for (t, c) in ctx.events.iter().zip(ctx.clips) {
            if let Some(t) = t {
                if t.duration() != c.duration() {
                    return Err(Error::InvalidParameter {
                        what: "an event track's duration is not its clip's",
                    });
                }
            }
        }
    }
    for m in graph.mask {
        if m.joint as usize >= n * LANES {
            return Err(Error::JointOutOfRange {
                joint: m.joint as usize,
                count: n * LANES,
            });
        }
    }
    Ok(())
}
/// Edges one triggering call hands on at most; the rest are counted in
/// [`Report::events_dropped`] without being walked (a frame crosses that
/// many only with a huge `dt`, and walking them would take that long).
const EDGES_WALKED: usize = 1024;

/// Triggering's edge buffer that hands each edge to a closure (which
/// counts what its own buffer cannot hold).
struct Emit<'a, F: FnMut(Edge)>(&'a mut F);

impl<F: FnMut(Edge)> EdgeBuffer for Emit<'_, F> {
    fn capacity(&self) -> usize {
        EDGES_WALKED
    }

    fn put(&mut self, _: usize, edge: Edge) {
        (self.0)(edge);
    }
}
