//! Data-driven animation graphs: named parameters, blend trees and
//! (nested) state machines in one validated zero-copy container, and the
//! per-character state that plays them.
//!
//! - [`Graph`]: the container ([`format`] has its byte layout), validated
//!   once by [`Graph::from_bytes`] (every index, count, name and float), then
//!   read in place; [`write_graph`] writes one from a [`GraphDef`] into a
//!   caller buffer of [`graph_size`] bytes (`sinew-std` builds the
//!   definition from JSON).
//! - [`GraphInstance`]: one character's parameters, current state path,
//!   the [`Fader`](crate::player::Fader) of the states playing with their
//!   playheads, and an [`Inertializer`](crate::mix::Inertializer): a plain
//!   `'static` value. [`GraphInstance::update`] advances it one frame and
//!   writes the pose.
//!
//! # Blend trees
//!
//! A node is a [`Node`]: a clip, a phase-synced 1D blend space over a float
//! parameter, a two-way blend, an additive layer or a masked layer (the
//! last three weighted by a float parameter, clamped to `0..=1`). A node's
//! children come before it in the node list, so trees cannot cycle; their
//! depth is at most [`MAX_NODE_DEPTH`].
//!
//! # State machines
//!
//! Machine 0 is the root. A [`State`] plays a node or a nested machine
//! (entered at its entry state); nesting is at most [`MAX_DEPTH`] levels, so
//! the current *path* (one state per level, root first) ends in a *leaf*
//! state that plays a node. The fader cross-fades leaves.
//!
//! Each frame [`GraphInstance::update`]:
//! 1. advances the fader and every playing leaf's clocks by `dt` (times its
//!    state's speed), collecting the event edges crossed;
//! 2. unless a transition that cannot be interrupted is still under way,
//!    looks for one transition to fire: level by level from the root, at
//!    each level the machine's any-state transitions first, then those from
//!    the path's state at that level, each list in stored order (the
//!    priority). A transition fires when all its [`Condition`]s hold; an
//!    any-state transition does not fire into the state it would leave.
//!    Firing consumes the triggers its conditions name and starts the
//!    transition: the new leaf (the target state, or the entry chain of the
//!    machine it plays) joins the fader at time 0;
//! 3. evaluates each playing leaf's tree, blends them by the fader's
//!    weights, and adds the inertialization offset of an inertialized
//!    transition.
//!
//! At most one transition fires per update. The *normalised time* of a
//! state is that of its tree's first clock (in depth-first order: its
//! first clip or blend space), unwrapped (`1.5` is half-way through the
//! second loop); a state playing a machine uses its current leaf's.
//! Event conditions look at the first [`MAX_FRAME_EDGES`] edges the
//! current leaf crossed this frame. The caller's event buffer gets every
//! edge of every playing leaf that fits; the rest are counted in
//! [`Report::events_dropped`].

pub mod format;
mod instance;

pub use format::{graph_size, write_graph, Graph, GRAPH_MAGIC, GRAPH_VERSION};
pub use instance::{GraphBuffers, GraphContext, GraphEvent, GraphInstance, Report};

use crate::player::{PlayMode, Transition};

/// Most parameters a graph may have (a [`GraphInstance`] holds their values).
pub const MAX_PARAMS: usize = 32;
/// Most nesting levels of state machines (the root machine is level 0).
pub const MAX_DEPTH: usize = 4;
/// Most leaf states playing at once (the fader's capacity).
pub const MAX_ACTIVE: usize = 4;
/// Most clocks (clip and blend-space nodes, counted along the tree) one state plays.
pub const MAX_CLOCKS: usize = 8;
/// Most samples of a blend-space node.
pub const MAX_BLEND_SAMPLES: usize = 8;
/// Deepest blend tree (a lone clip has depth 1).
pub const MAX_NODE_DEPTH: usize = 8;
/// Most event edges of the current leaf per frame that event conditions see.
pub const MAX_FRAME_EDGES: usize = 16;

/// The `from` of an any-state transition in the container.
pub const ANY_STATE: u32 = u32::MAX;

/// What a parameter holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum ParamKind {
    /// A float (speed, direction, a blend weight).
    Float = 0,
    /// A bool (stored as 0 or 1).
    Bool = 1,
    /// A trigger: set by [`GraphInstance::fire`], cleared by the transition it fires.
    Trigger = 2,
}

/// A named parameter and its default.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Param<'a> {
    /// Unique name.
    pub name: &'a str,
    /// Float, bool or trigger.
    pub kind: ParamKind,
    /// Initial value: finite; 0 or 1 for a bool; 0 for a trigger.
    pub default: f32,
}

/// One sample of a blend-space node.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BlendSample {
    /// Clip index in the caller's clip table.
    pub clip: usize,
    /// Position on the parameter's axis, finite and unique in the node.
    pub position: f32,
}

/// One joint of a masked layer's mask.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MaskJoint {
    /// Joint index (checked against the pose at update).
    pub joint: usize,
    /// The layer's weight on that joint, finite and `>= 0` (joints not
    /// listed get 0: they keep the base).
    pub weight: f32,
}

/// A blend-tree node. Child node indices must be below the node's own.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Node {
    /// One clip with its own playhead.
    Clip {
        /// Clip index in the caller's clip table.
        clip: usize,
        /// Playback speed (finite; negative plays backwards).
        speed: f32,
        /// Loop, clamp or ping-pong.
        mode: PlayMode,
    },
    /// A 1D blend space over a float parameter: the samples
    /// `first..first + count` of the graph's sample list, played in phase
    /// ([`crate::mix::PhaseSync`], normalised time, always looping).
    BlendSpace1D {
        /// The float parameter giving the position.
        param: usize,
        /// First sample.
        first: usize,
        /// Number of samples, `1..=MAX_BLEND_SAMPLES`.
        count: usize,
        /// Phase speed, finite and `>= 0`.
        speed: f32,
    },
    /// `a` and `b` blended with weight `w` on `b` (a float parameter, clamped to `0..=1`).
    Blend2 {
        /// Child at weight 0.
        a: usize,
        /// Child at weight 1.
        b: usize,
        /// The float parameter giving the weight.
        param: usize,
    },
    /// `additive` (an additive pose, e.g. from
    /// [`crate::mix::make_additive_clip`]) applied on `base` with a weight.
    Additive {
        /// The base child.
        base: usize,
        /// The additive child.
        additive: usize,
        /// The float parameter giving the weight (clamped to `0..=1`).
        param: usize,
    },
    /// `layer` over `base` on the joints of a mask: per joint
    /// `lerp(base, layer, w · mask_j)`.
    Masked {
        /// The base child.
        base: usize,
        /// The layered child.
        layer: usize,
        /// The float parameter giving the weight (clamped to `0..=1`).
        param: usize,
        /// First entry of the graph's mask-joint list.
        first: usize,
        /// Number of mask joints.
        count: usize,
    },
}

/// A state machine: its states and transitions are contiguous ranges of
/// the graph's lists.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Machine<'a> {
    /// Name (for tooling).
    pub name: &'a str,
    /// First state.
    pub first_state: usize,
    /// Number of states, `>= 1`.
    pub state_count: usize,
    /// Entry state (a graph state index in the machine's range).
    pub entry: usize,
    /// First transition.
    pub first_transition: usize,
    /// Number of transitions, in priority order.
    pub transition_count: usize,
}

/// What a state plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Motion {
    /// A blend-tree node.
    Node(usize),
    /// A nested machine (an index above the state's own machine, played by
    /// this state only).
    Machine(usize),
}

/// A state of a machine.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct State<'a> {
    /// Name (for tooling and the reported path).
    pub name: &'a str,
    /// The machine it belongs to.
    pub machine: usize,
    /// A node or a nested machine.
    pub motion: Motion,
    /// Speed of its clocks, finite and `>= 0`.
    pub speed: f32,
}

/// A condition of a transition (all of a transition's must hold).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Condition<'a> {
    /// A float parameter is strictly greater than `value`.
    Greater {
        /// Float parameter.
        param: usize,
        /// Threshold, finite.
        value: f32,
    },
    /// A float parameter is strictly less than `value`.
    Less {
        /// Float parameter.
        param: usize,
        /// Threshold, finite.
        value: f32,
    },
    /// A bool parameter equals `value`.
    Equals {
        /// Bool parameter.
        param: usize,
        /// The value it must have.
        value: bool,
    },
    /// A trigger parameter is set (consumed when the transition fires).
    Trigger {
        /// Trigger parameter.
        param: usize,
    },
    /// The current leaf crossed a start edge (an instant, or a range's
    /// start) of an event with this id this frame.
    EventId(u32),
    /// The current leaf crossed a start edge of an event of this name this frame.
    EventName(&'a str),
    /// The source state's normalised time reached `value` (finite, `>= 0`).
    ExitTime(f32),
}

/// A transition of a machine.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TransitionDef {
    /// Source state (in the machine), or `None` for any state of the machine.
    pub from: Option<usize>,
    /// Target state (in the machine).
    pub to: usize,
    /// First condition in the graph's condition list.
    pub first_condition: usize,
    /// Number of conditions (0: always, e.g. with an exit time of 0 on nothing).
    pub condition_count: usize,
    /// Blend method and duration.
    pub transition: Transition,
    /// Whether a later transition may interrupt this one while it is under way.
    pub interruptible: bool,
}

/// Everything [`write_graph`] writes: the lists the container holds, with
/// indices into each other as the types describe.
#[derive(Clone, Copy, Debug, Default)]
pub struct GraphDef<'a> {
    /// Clips the graph refers to (clip indices are below this); the clip
    /// table given to [`GraphInstance::update`] must hold at least as many.
    pub clip_count: usize,
    /// Parameters, at most [`MAX_PARAMS`].
    pub params: &'a [Param<'a>],
    /// Blend-tree nodes, children first.
    pub nodes: &'a [Node],
    /// Blend-space samples.
    pub samples: &'a [BlendSample],
    /// Mask joints.
    pub mask: &'a [MaskJoint],
    /// Machines, the root first; a nested machine after its parent's machine.
    pub machines: &'a [Machine<'a>],
    /// States, machine by machine.
    pub states: &'a [State<'a>],
    /// Transitions, machine by machine, each machine's in priority order.
    pub transitions: &'a [TransitionDef],
    /// Conditions.
    pub conditions: &'a [Condition<'a>],
}

#[cfg(test)]
mod tests;
