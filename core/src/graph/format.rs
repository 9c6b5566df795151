//! The graph container: its layout, its one-time validation and its writer.
//!
//! # Container (version 1, little endian, every section 16-byte aligned)
//!
//! | offset | size | field |
//! | --- | --- | --- |
//! | 0 | 8 | magic `b"SINEWGRF"` |
//! | 8 | 4 | version (`1`) |
//! | 12 | 4 | total size in bytes |
//! | 16 | 4 | clip count (clip indices are below it) |
//! | 20 | 4 × 8 | counts: parameters, nodes, samples, mask joints, machines, states, transitions, conditions |
//! | 52 | 4 | size of the names section in bytes |
//! | 56 | 8 | reserved, zero |
//! | 64 | 16 each | parameters: name offset, name length, kind, default (`f32`) |
//! | … | 48 each | nodes: kind, a, b, parameter, first, count, speed (`f32`), play mode, depth, scratch poses, clocks, reserved |
//! | … | 8 each | blend-space samples: clip, position (`f32`) |
//! | … | 8 each | mask joints: joint, weight (`f32`) |
//! | … | 32 each | machines: name offset, name length, first state, state count, entry state, first transition, transition count, parent state (`u32::MAX` for the root) |
//! | … | 32 each | states: name offset, name length, machine, motion kind (0 node, 1 machine), motion, speed (`f32`), reserved × 2 |
//! | … | 32 each | transitions: from ([`ANY_STATE`] for any), to, first condition, condition count, duration (`f32`), blend, spring half-life (`f32`), flags (bit 0: interruptible) |
//! | … | 16 each | conditions: kind, a, b, value (`f32`) |
//! | … | names size | names, UTF-8 |
//!
//! Node kinds: 0 clip (a = clip), 1 blend space (parameter, first/count
//! samples), 2 two-way blend (a, b), 3 additive (a = base, b = additive),
//! 4 masked layer (a = base, b = layer, first/count mask joints). A node's
//! depth, scratch poses and clocks are derived from its children and
//! checked. Blends: 0–3 cross-fade with a [`FadeCurve`] (linear,
//! smooth-step, ease-in, ease-out), 4 quintic inertialization, 5 spring
//! inertialization. Conditions: 0 greater (a = parameter), 1 less, 2 equals
//! (b = 0 or 1), 3 trigger, 4 event id (a), 5 event name (a = offset,
//! b = length), 6 exit time (value).

use bytemuck::{Pod, Zeroable};

use super::{
    BlendSample, Condition, GraphDef, Machine, MaskJoint, Motion, Node, Param, ParamKind, State,
    TransitionDef, ANY_STATE, MAX_BLEND_SAMPLES, MAX_CLOCKS, MAX_DEPTH, MAX_NODE_DEPTH, MAX_PARAMS,
};
use crate::container::{check_preamble, le_u32};
use crate::error::Error;
use crate::mix::transition::Decay;
use crate::player::{Blend, FadeCurve, PlayMode, Transition};
use crate::skeleton::MAX_JOINTS;

/// Magic bytes that open a graph container.
pub const GRAPH_MAGIC: [u8; 8] = *b"SINEWGRF";

/// Graph container version written and read by this build.
pub const GRAPH_VERSION: u32 = 1;

const HEADER: usize = 64;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct ParamRec {
    name_off: u32,
    name_len: u32,
    kind: u32,
    pub(crate) default: f32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct NodeRec {
    pub(crate) kind: u32,
    pub(crate) a: u32,
    pub(crate) b: u32,
    pub(crate) param: u32,
    pub(crate) first: u32,
    pub(crate) count: u32,
    pub(crate) speed: f32,
    pub(crate) mode: u32,
    pub(crate) depth: u32,
    pub(crate) need: u32,
    pub(crate) clocks: u32,
    reserved: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct SampleRec {
    pub(crate) clip: u32,
    pub(crate) position: f32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct MaskRec {
    pub(crate) joint: u32,
    pub(crate) weight: f32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct MachineRec {
    name_off: u32,
    name_len: u32,
    pub(crate) first_state: u32,
    pub(crate) state_count: u32,
    pub(crate) entry: u32,
    pub(crate) first_transition: u32,
    pub(crate) transition_count: u32,
    parent_state: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct StateRec {
    name_off: u32,
    name_len: u32,
    pub(crate) machine: u32,
    pub(crate) motion_kind: u32,
    pub(crate) motion: u32,
    pub(crate) speed: f32,
    reserved: [u32; 2],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct TransRec {
    pub(crate) from: u32,
    pub(crate) to: u32,
    pub(crate) first_condition: u32,
    pub(crate) condition_count: u32,
    duration: f32,
    blend: u32,
    half_life: f32,
    pub(crate) flags: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct CondRec {
    pub(crate) kind: u32,
    pub(crate) a: u32,
    pub(crate) b: u32,
    pub(crate) value: f32,
}

/// The counts in a container's header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Counts {
    params: usize,
    nodes: usize,
    samples: usize,
    mask: usize,
    machines: usize,
    states: usize,
    transitions: usize,
    conditions: usize,
    names: usize,
}

/// Byte offsets of the sections.
#[derive(Clone, Copy, Debug)]
struct Layout {
    params: usize,
    nodes: usize,
    samples: usize,
    mask: usize,
    machines: usize,
    states: usize,
    transitions: usize,
    conditions: usize,
    names: usize,
    total: usize,
}

fn align16(x: usize) -> Option<usize> {
    Some(x.checked_add(15)? & !15)
}

impl Layout {
    /// `None` when the sizes overflow `usize` or the 32-bit size field.
    fn new(c: &Counts) -> Option<Layout> {
        let section =
            |at: usize, n: usize, size: usize| align16(at.checked_add(n.checked_mul(size)?)?);
        let params = HEADER;
        let nodes = section(params, c.params, 16)?;
        let samples = section(nodes, c.nodes, 48)?;
        let mask = section(samples, c.samples, 8)?;
        let machines = section(mask, c.mask, 8)?;
        let states = section(machines, c.machines, 32)?;
        let transitions = section(states, c.states, 32)?;
        let conditions = section(transitions, c.transitions, 32)?;
        let names = section(conditions, c.conditions, 16)?;
        let total = section(names, c.names, 1)?;
        u32::try_from(total).ok()?;
        Some(Layout {
            params,
            nodes,
            samples,
            mask,
            machines,
            states,
            transitions,
            conditions,
            names,
            total,
        })
    }
}

/// A validated, zero-copy view of a graph container; see the
/// [module docs](super) for what it holds and how it plays.
#[derive(Clone, Copy, Debug)]
pub struct Graph<'a> {
    pub(crate) clip_count: usize,
    pub(crate) params: &'a [ParamRec],
    pub(crate) nodes: &'a [NodeRec],
    pub(crate) samples: &'a [SampleRec],
    pub(crate) mask: &'a [MaskRec],
    pub(crate) machines: &'a [MachineRec],
    pub(crate) states: &'a [StateRec],
    pub(crate) transitions: &'a [TransRec],
    pub(crate) conditions: &'a [CondRec],
    names: &'a str,
    /// Scratch poses the deepest state's tree needs.
    max_need: usize,
    /// The container's total size: with the counts, what an instance
    /// checks it is updated with the graph it was made for.
    pub(crate) total: usize,
}

const fn corrupt(what: &'static str) -> Error {
    Error::Corrupt { what }
}

fn cast<T: Pod>(bytes: &[u8], at: usize, n: usize) -> Result<&[T], Error> {
    let size = core::mem::size_of::<T>();
    bytes
        .get(at..at + n * size)
        .and_then(|b| bytemuck::try_cast_slice(b).ok())
        .ok_or(corrupt("section size"))
}

fn name_at(names: &str, off: u32, len: u32) -> Option<&str> {
    let (a, n) = (off as usize, len as usize);
    names.get(a..a.checked_add(n)?)
}

fn curve_code(c: FadeCurve) -> u32 {
    c as u32
}

fn curve_of(code: u32) -> Option<FadeCurve> {
    Some(match code {
        0 => FadeCurve::Linear,
        1 => FadeCurve::SmoothStep,
        2 => FadeCurve::EaseIn,
        3 => FadeCurve::EaseOut,
        _ => return None,
    })
}

fn mode_of(code: u32) -> Option<PlayMode> {
    Some(match code {
        0 => PlayMode::Loop,
        1 => PlayMode::Clamp,
        2 => PlayMode::PingPong,
        _ => return None,
    })
}

fn param_kind_of(code: u32) -> Option<ParamKind> {
    Some(match code {
        0 => ParamKind::Float,
        1 => ParamKind::Bool,
        2 => ParamKind::Trigger,
        _ => return None,
    })
}

fn transition_of(t: &TransRec) -> Option<Transition> {
    let blend = match t.blend {
        4 => Blend::Inertialize(Decay::Quintic),
        5 => Blend::Inertialize(Decay::Spring {
            half_life: t.half_life,
        }),
        c => Blend::Crossfade(curve_of(c)?),
    };
    Some(Transition {
        duration: t.duration,
        blend,
    })
}

impl<'a> Graph<'a> {
    /// Validates a container once and views it in place.
    ///
    /// `bytes` must be 16-byte aligned; bytes past the total size are
    /// ignored. Every count is checked against the size, every index
    /// against its list (and the kinds it must name: a float parameter for
    /// a blend weight, a state of the same machine for a transition), every
    /// float for finiteness and range, every name for UTF-8, the node
    /// order (children first) and the machine nesting (a tree at most
    /// [`MAX_DEPTH`] deep). Cost is linear in the size, plus the square of
    /// the parameter count.
    ///
    /// # Errors
    /// [`Error::UnsupportedPlatform`], [`Error::Truncated`],
    /// [`Error::BadMagic`], [`Error::UnsupportedVersion`],
    /// [`Error::Misaligned`], [`Error::CapacityExceeded`] (over
    /// [`MAX_PARAMS`] parameters), [`Error::NonFinite`] (a float) and
    /// [`Error::Corrupt`] naming what is inconsistent.
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, Error> {
        check_preamble(bytes, &GRAPH_MAGIC, GRAPH_VERSION, HEADER)?;
        let word = |k: usize| le_u32(bytes, 20 + 4 * k) as usize;
        let counts = Counts {
            params: word(0),
            nodes: word(1),
            samples: word(2),
            mask: word(3),
            machines: word(4),
            states: word(5),
            transitions: word(6),
            conditions: word(7),
            names: word(8),
        };
        let layout = Layout::new(&counts).ok_or(corrupt("graph size overflows"))?;
        if le_u32(bytes, 12) as usize != layout.total {
            return Err(corrupt("total size does not match the counts"));
        }
        if bytes.len() < layout.total {
            return Err(Error::Truncated {
                needed: layout.total,
                actual: bytes.len(),
            });
        }
        if bytes[56..HEADER].iter().any(|&b| b != 0) {
            return Err(corrupt("reserved header bytes are not zero"));
        }
        let names = core::str::from_utf8(&bytes[layout.names..layout.names + counts.names])
            .map_err(|_| corrupt("names are not UTF-8"))?;
        let mut g = Graph {
            clip_count: le_u32(bytes, 16) as usize,
            params: cast(bytes, layout.params, counts.params)?,
            nodes: cast(bytes, layout.nodes, counts.nodes)?,
            samples: cast(bytes, layout.samples, counts.samples)?,
            mask: cast(bytes, layout.mask, counts.mask)?,
            machines: cast(bytes, layout.machines, counts.machines)?,
            states: cast(bytes, layout.states, counts.states)?,
            transitions: cast(bytes, layout.transitions, counts.transitions)?,
            conditions: cast(bytes, layout.conditions, counts.conditions)?,
            names,
            max_need: 0,
            total: layout.total,
        };
        g.validate()?;
        Ok(g)
    }

    fn name(&self, off: u32, len: u32) -> Result<&'a str, Error> {
        let names: &'a str = self.names;
        let n = name_at(names, off, len).ok_or(corrupt(
            "a name lies outside the names or splits a character",
        ))?;
        Ok(n)
    }

    fn param_of(&self, p: u32, kind: ParamKind, what: &'static str) -> Result<(), Error> {
        match self.params.get(p as usize) {
            Some(r) if r.kind == kind as u32 => Ok(()),
            _ => Err(corrupt(what)),
        }
    }

    fn validate(&mut self) -> Result<(), Error> {
        if self.params.len() > MAX_PARAMS {
            return Err(Error::CapacityExceeded {
                capacity: MAX_PARAMS,
            });
        }
        // Indices are stored as u32 and states as u16 in an instance's path.
        if self.states.len() > usize::from(u16::MAX) {
            return Err(corrupt("more than 65535 states"));
        }
        self.validate_params()?;
        self.validate_leaves()?;
        self.validate_nodes()?;
        self.validate_machines()?;
        self.validate_transitions()?;
        Ok(())
    }

    fn validate_params(&self) -> Result<(), Error> {
        for (i, p) in self.params.iter().enumerate() {
            let name = self.name(p.name_off, p.name_len)?;
            let kind = param_kind_of(p.kind).ok_or(corrupt("unknown parameter kind"))?;
            if !p.default.is_finite() {
                return Err(Error::NonFinite {
                    what: "parameter default",
                });
            }
            let ok = match kind {
                ParamKind::Float => true,
                ParamKind::Bool => p.default == 0.0 || p.default == 1.0,
                ParamKind::Trigger => p.default == 0.0,
            };
            if !ok {
                return Err(corrupt(
                    "a bool default is not 0 or 1, or a trigger default not 0",
                ));
            }
            for q in &self.params[..i] {
                if self.name(q.name_off, q.name_len)? == name {
                    return Err(corrupt("two parameters have the same name"));
                }
            }
        }
        Ok(())
    }

    fn validate_leaves(&self) -> Result<(), Error> {
        for s in self.samples {
            if s.clip as usize >= self.clip_count {
                return Err(corrupt(
                    "a blend-space sample names a clip past the clip count",
                ));
            }
            if !s.position.is_finite() {
                return Err(Error::NonFinite {
                    what: "blend-space position",
                });
            }
        }
        for m in self.mask {
            if m.joint as usize >= MAX_JOINTS {
                return Err(corrupt("a mask joint is past MAX_JOINTS"));
            }
            if !m.weight.is_finite() {
                return Err(Error::NonFinite {
                    what: "mask weight",
                });
            }
            if m.weight < 0.0 {
                return Err(corrupt("a mask weight is negative"));
            }
        }
        Ok(())
    }

    fn validate_nodes(&self) -> Result<(), Error> {
        for (i, n) in self.nodes.iter().enumerate() {
            if n.reserved != 0 {
                return Err(corrupt("reserved node field is not zero"));
            }
            let child = |c: u32| -> Result<&NodeRec, Error> {
                if (c as usize) < i {
                    Ok(&self.nodes[c as usize])
                } else {
                    Err(corrupt("a node's child does not come before it"))
                }
            };
            let range = |len: usize| -> Result<(), Error> {
                (n.first as usize)
                    .checked_add(n.count as usize)
                    .filter(|&end| end <= len)
                    .map(|_| ())
                    .ok_or(corrupt("a node's range lies outside its list"))
            };
            let weight = |p: u32| {
                self.param_of(
                    p,
                    ParamKind::Float,
                    "a weight or blend-space parameter is not a float parameter",
                )
            };
            // (depth, scratch poses, clocks) from the children.
            let (depth, need, clocks) = match n.kind {
                0 => {
                    if n.a as usize >= self.clip_count {
                        return Err(corrupt("a clip node names a clip past the clip count"));
                    }
                    if !n.speed.is_finite() {
                        return Err(Error::NonFinite { what: "node speed" });
                    }
                    mode_of(n.mode).ok_or(corrupt("unknown play mode"))?;
                    (1, 0, 1)
                }
                1 => {
                    weight(n.param)?;
                    range(self.samples.len())?;
                    if n.count == 0 || n.count as usize > MAX_BLEND_SAMPLES {
                        return Err(corrupt(
                            "a blend space has no samples or more than MAX_BLEND_SAMPLES",
                        ));
                    }
                    if !n.speed.is_finite() {
                        return Err(Error::NonFinite { what: "node speed" });
                    }
                    if n.speed < 0.0 {
                        return Err(corrupt("a blend-space speed is negative"));
                    }
                    let s = &self.samples[n.first as usize..(n.first + n.count) as usize];
                    for (k, a) in s.iter().enumerate() {
                        if s[..k].iter().any(|b| b.position == a.position) {
                            return Err(corrupt("two blend-space samples share a position"));
                        }
                    }
                    (1, 3, 1)
                }
                2..=4 => {
                    weight(n.param)?;
                    let (a, b) = (child(n.a)?, child(n.b)?);
                    if n.kind == 4 {
                        range(self.mask.len())?;
                    }
                    let need = match n.kind {
                        3 => a.need.max(1 + b.need),
                        _ => (1 + a.need).max(2 + b.need),
                    };
                    (1 + a.depth.max(b.depth), need, a.clocks + b.clocks)
                }
                _ => return Err(corrupt("unknown node kind")),
            };
            if depth as usize > MAX_NODE_DEPTH {
                return Err(corrupt("a blend tree is deeper than MAX_NODE_DEPTH"));
            }
            if (n.depth, n.need, n.clocks) != (depth, need, clocks) {
                return Err(corrupt(
                    "a node's depth, scratch poses or clocks do not match its children",
                ));
            }
        }
        Ok(())
    }

    fn validate_machines(&mut self) -> Result<(), Error> {
        if self.machines.is_empty() {
            return Err(corrupt("a graph needs a root machine"));
        }
        let mut next_state = 0usize;
        let mut next_transition = 0usize;
        for (m, r) in self.machines.iter().enumerate() {
            self.name(r.name_off, r.name_len)?;
            let (first, count) = (r.first_state as usize, r.state_count as usize);
            if first != next_state || count == 0 {
                return Err(corrupt(
                    "machines' states are not consecutive non-empty ranges",
                ));
            }
            next_state = first
                .checked_add(count)
                .filter(|&e| e <= self.states.len())
                .ok_or(corrupt("a machine's states lie outside the state list"))?;
            if !(first..next_state).contains(&(r.entry as usize)) {
                return Err(corrupt("a machine's entry state is not one of its states"));
            }
            if r.first_transition as usize != next_transition {
                return Err(corrupt("machines' transitions are not consecutive ranges"));
            }
            next_transition = next_transition
                .checked_add(r.transition_count as usize)
                .filter(|&e| e <= self.transitions.len())
                .ok_or(corrupt(
                    "a machine's transitions lie outside the transition list",
                ))?;
            for s in &self.states[first..next_state] {
                if s.machine as usize != m {
                    return Err(corrupt(
                        "a state's machine is not the machine whose range holds it",
                    ));
                }
            }
            // The nesting: the root has no parent state; any other machine
            // is played by exactly the state it names, in a machine before it.
            if m == 0 {
                if r.parent_state != ANY_STATE {
                    return Err(corrupt("the root machine has a parent state"));
                }
            } else {
                let p = self
                    .states
                    .get(r.parent_state as usize)
                    .ok_or(corrupt("a machine's parent state does not exist"))?;
                if p.motion_kind != 1 || p.motion as usize != m || p.machine as usize >= m {
                    return Err(corrupt(
                        "a machine's parent state does not play it, or comes after it",
                    ));
                }
                let mut depth = 1;
                let mut up = p.machine as usize;
                while up != 0 {
                    depth += 1;
                    if depth >= MAX_DEPTH {
                        return Err(corrupt("machines nest deeper than MAX_DEPTH"));
                    }
                    let parent = self.machines[up].parent_state as usize;
                    up = self.states.get(parent).map_or(0, |s| s.machine as usize);
                }
            }
        }
        if next_state != self.states.len() || next_transition != self.transitions.len() {
            return Err(corrupt("states or transitions belong to no machine"));
        }
        let mut max_need = 0usize;
        for (i, s) in self.states.iter().enumerate() {
            self.name(s.name_off, s.name_len)?;
            if s.reserved != [0; 2] {
                return Err(corrupt("reserved state field is not zero"));
            }
            if !s.speed.is_finite() {
                return Err(Error::NonFinite {
                    what: "state speed",
                });
            }
            if s.speed < 0.0 {
                return Err(corrupt("a state speed is negative"));
            }
            match s.motion_kind {
                0 => {
                    let n = self
                        .nodes
                        .get(s.motion as usize)
                        .ok_or(corrupt("a state plays a node that does not exist"))?;
                    if n.clocks as usize > MAX_CLOCKS {
                        return Err(corrupt(
                            "a state's tree has more than MAX_CLOCKS clips and blend spaces",
                        ));
                    }
                    max_need = max_need.max(n.need as usize);
                }
                1 => {
                    let m = self
                        .machines
                        .get(s.motion as usize)
                        .ok_or(corrupt("a state plays a machine that does not exist"))?;
                    if m.parent_state as usize != i {
                        return Err(corrupt(
                            "a state plays a machine whose parent state is another",
                        ));
                    }
                }
                _ => return Err(corrupt("unknown motion kind")),
            }
        }
        self.max_need = max_need;
        Ok(())
    }

    fn validate_transitions(&self) -> Result<(), Error> {
        for m in self.machines {
            let states = m.first_state..m.first_state + m.state_count;
            let first = m.first_transition as usize;
            for t in &self.transitions[first..first + m.transition_count as usize] {
                if t.from != ANY_STATE && !states.contains(&t.from) {
                    return Err(corrupt("a transition leaves a state of another machine"));
                }
                if !states.contains(&t.to) {
                    return Err(corrupt("a transition enters a state of another machine"));
                }
                if t.flags > 1 {
                    return Err(corrupt("unknown transition flags"));
                }
                if !(t.duration.is_finite() && t.half_life.is_finite()) {
                    return Err(Error::NonFinite {
                        what: "transition duration or half-life",
                    });
                }
                let tr = transition_of(t).ok_or(corrupt("unknown transition blend"))?;
                if tr.validate().is_err() || (t.blend != 5 && t.half_life != 0.0) {
                    return Err(corrupt(
                        "a transition's duration or half-life is out of range",
                    ));
                }
                (t.first_condition as usize)
                    .checked_add(t.condition_count as usize)
                    .filter(|&e| e <= self.conditions.len())
                    .ok_or(corrupt(
                        "a transition's conditions lie outside the condition list",
                    ))?;
            }
        }
        for c in self.conditions {
            if !c.value.is_finite() {
                return Err(Error::NonFinite {
                    what: "condition value",
                });
            }
            let (zero_b, zero_v) = (c.b == 0, c.value == 0.0);
            let ok = match c.kind {
                0 | 1 => {
                    self.param_of(
                        c.a,
                        ParamKind::Float,
                        "a comparison names a parameter that is not a float",
                    )?;
                    zero_b
                }
                2 => {
                    self.param_of(
                        c.a,
                        ParamKind::Bool,
                        "an equality names a parameter that is not a bool",
                    )?;
                    c.b <= 1 && zero_v
                }
                3 => {
                    self.param_of(
                        c.a,
                        ParamKind::Trigger,
                        "a trigger condition names a parameter that is not a trigger",
                    )?;
                    zero_b && zero_v
                }
                4 => zero_b && zero_v,
                5 => {
                    self.name(c.a, c.b)?;
                    zero_v
                }
                6 => c.a == 0 && zero_b && c.value >= 0.0,
                _ => return Err(corrupt("unknown condition kind")),
            };
            if !ok {
                return Err(corrupt(
                    "a condition has a field its kind does not use, or a value out of range",
                ));
            }
        }
        Ok(())
    }

    /// Clips the graph refers to: the clip table given to an update holds
    /// at least this many.
    #[inline]
    #[must_use]
    pub fn clip_count(&self) -> usize {
        self.clip_count
    }

    /// Scratch poses [`super::GraphInstance::update`] needs (each as long
    /// as the rest pose): the fader's [`super::MAX_ACTIVE`] leaves plus
    /// what the deepest tree needs.
    #[inline]
    #[must_use]
    pub fn scratch_poses(&self) -> usize {
        super::MAX_ACTIVE + self.max_need
    }

    /// Number of parameters.
    #[inline]
    #[must_use]
    pub fn param_count(&self) -> usize {
        self.params.len()
    }

    /// Parameter `i`.
    #[must_use]
    pub fn param(&self, i: usize) -> Option<Param<'a>> {
        let p = self.params.get(i)?;
        Some(Param {
            name: name_at(self.names, p.name_off, p.name_len)?,
            kind: param_kind_of(p.kind)?,
            default: p.default,
        })
    }

    /// Index of the parameter called `name`.
    #[must_use]
    pub fn find_param(&self, name: &str) -> Option<usize> {
        (0..self.params.len()).find(|&i| self.param(i).is_some_and(|p| p.name == name))
    }

    /// Number of nodes.
    #[inline]
    #[must_use]
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Node `i`.
    #[must_use]
    pub fn node(&self, i: usize) -> Option<Node> {
        let n = self.nodes.get(i)?;
        Some(match n.kind {
            0 => Node::Clip {
                clip: n.a as usize,
                speed: n.speed,
                mode: mode_of(n.mode)?,
            },
            1 => Node::BlendSpace1D {
                param: n.param as usize,
                first: n.first as usize,
                count: n.count as usize,
                speed: n.speed,
            },
            2 => Node::Blend2 {
                a: n.a as usize,
                b: n.b as usize,
                param: n.param as usize,
            },
            3 => Node::Additive {
                base: n.a as usize,
                additive: n.b as usize,
                param: n.param as usize,
            },
            _ => Node::Masked {
                base: n.a as usize,
                layer: n.b as usize,
                param: n.param as usize,
                first: n.first as usize,
                count: n.count as usize,
            },
        })
    }

    /// Blend-space sample `i`.
    #[must_use]
    pub fn sample(&self, i: usize) -> Option<BlendSample> {
        let s = self.samples.get(i)?;
        Some(BlendSample {
            clip: s.clip as usize,
            position: s.position,
        })
    }

    /// Mask joint `i`.
    #[must_use]
    pub fn mask_joint(&self, i: usize) -> Option<MaskJoint> {
        let m = self.mask.get(i)?;
        Some(MaskJoint {
            joint: m.joint as usize,
            weight: m.weight,
        })
    }

    /// Number of machines (the root is 0).
    #[inline]
    #[must_use]
    pub fn machine_count(&self) -> usize {
        self.machines.len()
    }

    /// Machine `i`.
    #[must_use]
    pub fn machine(&self, i: usize) -> Option<Machine<'a>> {
        let m = self.machines.get(i)?;
        Some(Machine {
            name: name_at(self.names, m.name_off, m.name_len)?,
            first_state: m.first_state as usize,
            state_count: m.state_count as usize,
            entry: m.entry as usize,
            first_transition: m.first_transition as usize,
            transition_count: m.transition_count as usize,
        })
    }

    /// Number of states.
    #[inline]
    #[must_use]
    pub fn state_count(&self) -> usize {
        self.states.len()
    }

    /// State `i`.
    #[must_use]
    pub fn state(&self, i: usize) -> Option<State<'a>> {
        let s = self.states.get(i)?;
        Some(State {
            name: name_at(self.names, s.name_off, s.name_len)?,
            machine: s.machine as usize,
            motion: if s.motion_kind == 0 {
                Motion::Node(s.motion as usize)
            } else {
                Motion::Machine(s.motion as usize)
            },
            speed: s.speed,
        })
    }

    /// Index of the state called `name` in `machine`.
    #[must_use]
    pub fn find_state(&self, machine: usize, name: &str) -> Option<usize> {
        let m = self.machine(machine)?;
        (m.first_state..m.first_state + m.state_count)
            .find(|&i| self.state(i).is_some_and(|s| s.name == name))
    }

    /// Number of transitions.
    #[inline]
    #[must_use]
    pub fn transition_count(&self) -> usize {
        self.transitions.len()
    }

    /// Transition `i`.
    #[must_use]
    pub fn transition(&self, i: usize) -> Option<TransitionDef> {
        let t = self.transitions.get(i)?;
        Some(TransitionDef {
            from: (t.from != ANY_STATE).then_some(t.from as usize),
            to: t.to as usize,
            first_condition: t.first_condition as usize,
            condition_count: t.condition_count as usize,
            transition: transition_of(t)?,
            interruptible: t.flags & 1 != 0,
        })
    }

    /// Number of conditions.
    #[inline]
    #[must_use]
    pub fn condition_count(&self) -> usize {
        self.conditions.len()
    }

    /// Condition `i`.
    #[must_use]
    pub fn condition(&self, i: usize) -> Option<Condition<'a>> {
        let c = self.conditions.get(i)?;
        let p = c.a as usize;
        Some(match c.kind {
            0 => Condition::Greater {
                param: p,
                value: c.value,
            },
            1 => Condition::Less {
                param: p,
                value: c.value,
            },
            2 => Condition::Equals {
                param: p,
                value: c.b != 0,
            },
            3 => Condition::Trigger { param: p },
            4 => Condition::EventId(c.a),
            5 => Condition::EventName(name_at(self.names, c.a, c.b)?),
            _ => Condition::ExitTime(c.value),
        })
    }

    /// The name of condition `c` when it is an event-name condition (for
    /// the per-frame check, without rebuilding the enum).
    pub(crate) fn condition_name(&self, c: &CondRec) -> &'a str {
        name_at(self.names, c.a, c.b).unwrap_or("")
    }
}

fn to_u32(n: usize) -> Result<u32, Error> {
    u32::try_from(n).map_err(|_| Error::CapacityExceeded {
        capacity: u32::MAX as usize,
    })
}

/// The counts of a definition, and the names' total size.
fn counts(def: &GraphDef<'_>) -> Result<Counts, Error> {
    let mut names = 0usize;
    let mut add = |s: &str| names = names.saturating_add(s.len());
    def.params.iter().for_each(|p| add(p.name));
    def.machines.iter().for_each(|m| add(m.name));
    def.states.iter().for_each(|s| add(s.name));
    for c in def.conditions {
        if let Condition::EventName(n) = c {
            add(n);
        }
    }
    Ok(Counts {
        params: def.params.len(),
        nodes: def.nodes.len(),
        samples: def.samples.len(),
        mask: def.mask.len(),
        machines: def.machines.len(),
        states: def.states.len(),
        transitions: def.transitions.len(),
        conditions: def.conditions.len(),
        names,
    })
}

/// Bytes [`write_graph`] needs for `def` (a multiple of 16).
///
/// # Errors
/// [`Error::CapacityExceeded`] when the container would not fit its
/// 32-bit size field.
pub fn graph_size(def: &GraphDef<'_>) -> Result<usize, Error> {
    Layout::new(&counts(def)?)
        .map(|l| l.total)
        .ok_or(Error::CapacityExceeded {
            capacity: u32::MAX as usize,
        })
}

fn put<T: Pod>(out: &mut [u8], at: usize, items: impl Iterator<Item = T>) {
    let size = core::mem::size_of::<T>();
    for (k, item) in items.enumerate() {
        let a = at + k * size;
        out[a..a + size].copy_from_slice(bytemuck::bytes_of(&item));
    }
}

/// A node's record with its derived fields from the records before it
/// (zeroes for a child index that is out of order: validation rejects it).
fn node_rec(n: &Node, earlier: &[NodeRec]) -> Result<NodeRec, Error> {
    let get = |c: usize| earlier.get(c).copied().unwrap_or_default();
    let mut r = NodeRec::default();
    match *n {
        Node::Clip { clip, speed, mode } => {
            (r.kind, r.a, r.speed, r.mode) = (0, to_u32(clip)?, speed, mode as u32);
            (r.depth, r.need, r.clocks) = (1, 0, 1);
        }
        Node::BlendSpace1D {
            param,
            first,
            count,
            speed,
        } => {
            (r.kind, r.param, r.first, r.count, r.speed) =
                (1, to_u32(param)?, to_u32(first)?, to_u32(count)?, speed);
            (r.depth, r.need, r.clocks) = (1, 3, 1);
        }
        Node::Blend2 { a, b, param }
        | Node::Additive {
            base: a,
            additive: b,
            param,
        }
        | Node::Masked {
            base: a,
            layer: b,
            param,
            ..
        } => {
            (r.a, r.b, r.param) = (to_u32(a)?, to_u32(b)?, to_u32(param)?);
            let (x, y) = (get(a), get(b));
            r.kind = match n {
                Node::Blend2 { .. } => 2,
                Node::Additive { .. } => 3,
                _ => 4,
            };
            if let Node::Masked { first, count, .. } = *n {
                (r.first, r.count) = (to_u32(first)?, to_u32(count)?);
            }
            r.need = if r.kind == 3 {
                x.need.max(1 + y.need)
            } else {
                (1 + x.need).max(2 + y.need)
            };
            r.depth = 1 + x.depth.max(y.depth);
            r.clocks = x.clocks.saturating_add(y.clocks);
        }
    }
    Ok(r)
}

/// Writes `def` as a graph container into `out` (16-byte aligned, at least
/// [`graph_size`] bytes), checks it with [`Graph::from_bytes`], and
/// returns the bytes written.
///
/// # Errors
/// [`Error::BufferTooSmall`], [`Error::Misaligned`],
/// [`Error::CapacityExceeded`] (a count or index past `u32`), and every
/// error of [`Graph::from_bytes`] for a definition it would reject (then
/// `out` holds that rejected container: do not use it).
pub fn write_graph(def: &GraphDef<'_>, out: &mut [u8]) -> Result<usize, Error> {
    let c = counts(def)?;
    let layout = Layout::new(&c).ok_or(Error::CapacityExceeded {
        capacity: u32::MAX as usize,
    })?;
    if out.len() < layout.total {
        return Err(Error::BufferTooSmall {
            needed: layout.total,
            actual: out.len(),
        });
    }
    crate::container::check_aligned(out.as_ptr())?;
    let out = &mut out[..layout.total];
    out.fill(0);
    // Names, in the order `counts` sums them.
    let mut at = 0usize;
    let mut name = |out: &mut [u8], s: &str| -> Result<(u32, u32), Error> {
        let start = layout.names + at;
        out[start..start + s.len()].copy_from_slice(s.as_bytes());
        let r = (to_u32(at)?, to_u32(s.len())?);
        at += s.len();
        Ok(r)
    };
    for (k, p) in def.params.iter().enumerate() {
        let (off, len) = name(out, p.name)?;
        let rec = ParamRec {
            name_off: off,
            name_len: len,
            kind: p.kind as u32,
            default: p.default,
        };
        put(out, layout.params + 16 * k, core::iter::once(rec));
    }
    // Machines need their parent states: the state playing each.
    for (k, m) in def.machines.iter().enumerate() {
        let (off, len) = name(out, m.name)?;
        let parent = def
            .states
            .iter()
            .position(|s| s.motion == Motion::Machine(k))
            .map_or(Ok(ANY_STATE), to_u32)?;
        let rec = MachineRec {
            name_off: off,
            name_len: len,
            first_state: to_u32(m.first_state)?,
            state_count: to_u32(m.state_count)?,
            entry: to_u32(m.entry)?,
            first_transition: to_u32(m.first_transition)?,
            transition_count: to_u32(m.transition_count)?,
            parent_state: parent,
        };
        put(out, layout.machines + 32 * k, core::iter::once(rec));
    }
    for (k, s) in def.states.iter().enumerate() {
        let (off, len) = name(out, s.name)?;
        let (kind, motion) = match s.motion {
            Motion::Node(n) => (0, n),
            Motion::Machine(m) => (1, m),
        };
        let rec = StateRec {
            name_off: off,
            name_len: len,
            machine: to_u32(s.machine)?,
            motion_kind: kind,
            motion: to_u32(motion)?,
            speed: s.speed,
            reserved: [0; 2],
        };
        put(out, layout.states + 32 * k, core::iter::once(rec));
    }
    for (k, cond) in def.conditions.iter().enumerate() {
        let mut r = CondRec::default();
        match *cond {
            Condition::Greater { param, value } => {
                (r.kind, r.a, r.value) = (0, to_u32(param)?, value)
            }
            Condition::Less { param, value } => (r.kind, r.a, r.value) = (1, to_u32(param)?, value),
            Condition::Equals { param, value } => {
                (r.kind, r.a, r.b) = (2, to_u32(param)?, u32::from(value))
            }
            Condition::Trigger { param } => (r.kind, r.a) = (3, to_u32(param)?),
            Condition::EventId(id) => (r.kind, r.a) = (4, id),
            Condition::EventName(n) => {
                let (off, len) = name(out, n)?;
                (r.kind, r.a, r.b) = (5, off, len);
            }
            Condition::ExitTime(t) => (r.kind, r.value) = (6, t),
        }
        put(out, layout.conditions + 16 * k, core::iter::once(r));
    }
    let mut nodes_at = layout.nodes;
    for (k, n) in def.nodes.iter().enumerate() {
        let earlier: &[NodeRec] = bytemuck::try_cast_slice(&out[layout.nodes..nodes_at])
            .map_err(|_| Error::Misaligned)?;
        let rec = node_rec(n, &earlier[..k])?;
        put(out, nodes_at, core::iter::once(rec));
        nodes_at += 48;
    }
    put(
        out,
        layout.samples,
        def.samples.iter().map(|s| SampleRec {
            clip: u32::try_from(s.clip).unwrap_or(u32::MAX),
            position: s.position,
        }),
    );
    put(
        out,
        layout.mask,
        def.mask.iter().map(|m| MaskRec {
            joint: u32::try_from(m.joint).unwrap_or(u32::MAX),
            weight: m.weight,
        }),
    );
    for (k, t) in def.transitions.iter().enumerate() {
        let (blend, half_life) = match t.transition.blend {
            Blend::Crossfade(c) => (curve_code(c), 0.0),
            Blend::Inertialize(Decay::Quintic) => (4, 0.0),
            Blend::Inertialize(Decay::Spring { half_life }) => (5, half_life),
        };
        let rec = TransRec {
            from: t.from.map_or(Ok(ANY_STATE), to_u32)?,
            to: to_u32(t.to)?,
            first_condition: to_u32(t.first_condition)?,
            condition_count: to_u32(t.condition_count)?,
            duration: t.transition.duration,
            blend,
            half_life,
            flags: u32::from(t.interruptible),
        };
        put(out, layout.transitions + 32 * k, core::iter::once(rec));
    }
    out[..8].copy_from_slice(&GRAPH_MAGIC);
    out[8..12].copy_from_slice(&GRAPH_VERSION.to_le_bytes());
    out[12..16].copy_from_slice(&to_u32(layout.total)?.to_le_bytes());
    out[16..20].copy_from_slice(&to_u32(def.clip_count)?.to_le_bytes());
    let words = [
        c.params,
        c.nodes,
        c.samples,
        c.mask,
        c.machines,
        c.states,
        c.transitions,
        c.conditions,
        c.names,
    ];
    for (k, w) in words.iter().enumerate() {
        out[20 + 4 * k..24 + 4 * k].copy_from_slice(&to_u32(*w)?.to_le_bytes());
    }
    Graph::from_bytes(out)?;
    Ok(layout.total)
}
