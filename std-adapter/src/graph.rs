//! Animation graphs from JSON: the description an artist or a tool writes,
//! checked with errors that name the bad field, and built into the core's
//! container ([`sinew_core::graph`]); and the built-in locomotion example
//! over the procedural humanoid.
//!
//! # JSON
//!
//! ```json
//! {
//!   "params": [ { "name": "speed", "type": "float", "default": 0.0 },
//!               { "name": "jump", "type": "trigger" },
//!               { "name": "grounded", "type": "bool", "default": true } ],
//!   "nodes": [
//!     { "name": "idle", "clip": "idle", "speed": 1.0, "mode": "loop" },
//!     { "name": "move", "blend_space": { "param": "speed", "speed": 1.0,
//!         "samples": [ { "clip": "walk", "at": 1.4 }, { "clip": "run", "at": 4.0 } ] } },
//!     { "name": "mix", "blend": { "a": "idle", "b": "move", "param": "w" } },
//!     { "name": "lean", "additive": { "base": "mix", "additive": "lean_clip", "param": "w" } },
//!     { "name": "wave", "masked": { "base": "mix", "layer": "wave_clip", "param": "w",
//!         "joints": [ { "joint": 12, "weight": 1.0 } ] } }
//!   ],
//!   "machine": {
//!     "name": "root", "entry": "idle",
//!     "states": [ { "name": "idle", "node": "idle", "speed": 1.0 },
//!                 { "name": "air", "machine": { "name": "air", "entry": "…", "states": [], "transitions": [] } } ],
//!     "transitions": [
//!       { "from": "idle" | "*", "to": "air", "priority": 0,
//!         "when": [ { "param": "speed", "greater": 0.2 } | { "param": "speed", "less": 0.2 }
//!                 | { "param": "grounded", "equals": true } | { "trigger": "jump" }
//!                 | { "event": "landed" } | { "event_id": 7 } | { "exit_time": 0.9 } ],
//!         "duration": 0.2,
//!         "blend": "smooth-step" | "linear" | "ease-in" | "ease-out" | "inertialize",
//!         "half_life": 0.1, "interruptible": false } ]
//!   }
//! }
//! ```
//!
//! Clip modes are `loop` (default), `clamp` and `ping-pong`; speeds
//! default to 1, transitions to a 0.2 s smooth-step cross-fade that cannot
//! be interrupted. `"half_life"` with `"inertialize"` decays by a spring
//! instead of the quintic. `"from": "*"` is any state of the machine.
//! Transitions are tried by ascending `priority` (default 0), then in file
//! order; the runtime tries any-state ones first. Nodes may be listed in any
//! order (they are sorted children first); a node is named by at most one
//! kind key.

use std::collections::HashMap;
use std::fmt;

use serde::Deserialize;
use sinew_core::graph::{
    graph_size, write_graph, BlendSample, Condition, Graph, GraphDef, Machine, MaskJoint, Motion,
    Node, Param, ParamKind, State, TransitionDef, MAX_DEPTH, MAX_PARAMS,
};
use sinew_core::mix::transition::Decay;
use sinew_core::player::{Blend, FadeCurve, PlayMode, Transition};
use sinew_core::procedural::DEFAULT_SAMPLE_RATE;
use sinew_core::track::event::{sort_range_ends, Event, EventTrack};
use sinew_core::{Error, Quat, Skeleton, SoaTransform, Transform};

use crate::{AlignedBytes, Humanoid, OwnedClip};

/// The built-in locomotion graph: idle, a walk/jog/run blend space on
/// `speed`, and an `airborne` sub-machine (jump → fall → land) entered on
/// the `jump` trigger, over [`Locomotion`]'s clips.
pub const LOCOMOTION_JSON: &str = include_str!("graph/locomotion.json");

/// What is wrong with a JSON graph: the field (a path such as
/// `machine.states[2].machine.transitions[0].to`) and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GraphError {
    /// Where: a dotted path into the document (`json` for syntax errors).
    pub field: String,
    /// What.
    pub message: String,
}

impl fmt::Display for GraphError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for GraphError {}

fn err<T>(field: impl Into<String>, message: impl Into<String>) -> Result<T, GraphError> {
    Err(GraphError {
        field: field.into(),
        message: message.into(),
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GraphJson {
    #[serde(default)]
    params: Vec<ParamJson>,
    #[serde(default)]
    nodes: Vec<NodeJson>,
    machine: MachineJson,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ParamJson {
    name: String,
    #[serde(rename = "type")]
    kind: String,
    default: Option<serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NodeJson {
    name: String,
    clip: Option<String>,
    speed: Option<f32>,
    mode: Option<String>,
    blend_space: Option<BlendSpaceJson>,
    blend: Option<BlendJson>,
    additive: Option<AdditiveJson>,
    masked: Option<MaskedJson>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BlendSpaceJson {
    param: String,
    samples: Vec<SampleJson>,
    speed: Option<f32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SampleJson {
    clip: String,
    at: f32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BlendJson {
    a: String,
    b: String,
    param: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AdditiveJson {
    base: String,
    additive: String,
    param: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MaskedJson {
    base: String,
    layer: String,
    param: String,
    joints: Vec<MaskJointJson>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MaskJointJson {
    joint: usize,
    weight: f32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MachineJson {
    name: String,
    entry: String,
    states: Vec<StateJson>,
    #[serde(default)]
    transitions: Vec<TransitionJson>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StateJson {
    name: String,
    node: Option<String>,
    machine: Option<Box<MachineJson>>,
    speed: Option<f32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TransitionJson {
    from: String,
    to: String,
    #[serde(default)]
    when: Vec<ConditionJson>,
    duration: Option<f32>,
    blend: Option<String>,
    half_life: Option<f32>,
    #[serde(default)]
    interruptible: bool,
    #[serde(default)]
    priority: i32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConditionJson {
    param: Option<String>,
    greater: Option<f32>,
    less: Option<f32>,
    equals: Option<bool>,
    trigger: Option<String>,
    event: Option<String>,
    event_id: Option<u32>,
    exit_time: Option<f32>,
}

/// A built graph container with its bytes.
#[derive(Clone)]
pub struct GraphAsset {
    bytes: AlignedBytes,
}

impl GraphAsset {
    /// The validated view.
    ///
    /// # Panics
    /// Never: the bytes were validated when built.
    #[must_use]
    pub fn view(&self) -> Graph<'_> {
        match Graph::from_bytes(self.bytes.as_slice()) {
            Ok(g) => g,
            Err(e) => unreachable!("a built graph always validates: {e}"),
        }
    }

    /// The container bytes (to save as a file).
    #[must_use]
    pub fn bytes(&self) -> &[u8] {
        self.bytes.as_slice()
    }
}

/// Names to indices for one kind of thing, with the list for messages.
fn lookup(
    names: &HashMap<&str, usize>,
    name: &str,
    field: &str,
    what: &str,
    all: &[&str],
) -> Result<usize, GraphError> {
    match names.get(name) {
        Some(&i) => Ok(i),
        None => err(
            field,
            format!("unknown {what} \"{name}\" (known: {})", all.join(", ")),
        ),
    }
}

fn finite(v: f32, field: &str) -> Result<f32, GraphError> {
    if v.is_finite() {
        Ok(v)
    } else {
        err(field, "must be a finite number")
    }
}

struct Builder<'j> {
    clips: HashMap<&'j str, usize>,
    clip_names: Vec<&'j str>,
    params: HashMap<&'j str, usize>,
    param_names: Vec<&'j str>,
    param_kinds: Vec<ParamKind>,
    nodes: HashMap<&'j str, usize>,
    node_names: Vec<&'j str>,
    /// Node index in the JSON → index in the container.
    node_order: Vec<usize>,
}

impl<'j> Builder<'j> {
    fn param(&self, name: &str, field: &str, kind: ParamKind) -> Result<usize, GraphError> {
        let i = lookup(&self.params, name, field, "parameter", &self.param_names)?;
        if self.param_kinds[i] != kind {
            let k = |k: ParamKind| match k {
                ParamKind::Float => "float",
                ParamKind::Bool => "bool",
                ParamKind::Trigger => "trigger",
            };
            return err(
                field,
                format!(
                    "parameter \"{name}\" is a {}, not a {}",
                    k(self.param_kinds[i]),
                    k(kind)
                ),
            );
        }
        Ok(i)
    }

    fn clip(&self, name: &str, field: &str) -> Result<usize, GraphError> {
        lookup(&self.clips, name, field, "clip", &self.clip_names)
    }

    /// The container index of the node called `name`.
    fn node(&self, name: &str, field: &str) -> Result<usize, GraphError> {
        let i = lookup(&self.nodes, name, field, "node", &self.node_names)?;
        Ok(self.node_order[i])
    }
}

/// The children a node names, by name.
fn children(n: &NodeJson) -> Vec<&str> {
    let mut c = Vec::new();
    if let Some(b) = &n.blend {
        c.extend([b.a.as_str(), b.b.as_str()]);
    }
    if let Some(a) = &n.additive {
        c.extend([a.base.as_str(), a.additive.as_str()]);
    }
    if let Some(m) = &n.masked {
        c.extend([m.base.as_str(), m.layer.as_str()]);
    }
    c
}

/// One machine, flattened: its JSON and its field path.
struct Flat<'j> {
    json: &'j MachineJson,
    field: String,
}

fn flatten<'j>(
    m: &'j MachineJson,
    field: String,
    level: usize,
    out: &mut Vec<Flat<'j>>,
) -> Result<(), GraphError> {
    if level >= MAX_DEPTH {
        return err(
            field,
            format!("machines nest more than {MAX_DEPTH} levels deep"),
        );
    }
    out.push(Flat {
        json: m,
        field: field.clone(),
    });
    for (k, s) in m.states.iter().enumerate() {
        if let Some(sub) = &s.machine {
            flatten(sub, format!("{field}.states[{k}].machine"), level + 1, out)?;
        }
    }
    Ok(())
}

/// Builds the container from a JSON description whose clips are named
/// `clips[i]` (clip `i` of the table the graph will be played with).
///
/// # Errors
/// A [`GraphError`] naming the field: JSON syntax or an unknown field, an
/// unknown parameter, clip, node or state name, a parameter of the wrong
/// kind, a cycle among nodes, a transition to or from a state of another
/// machine, a state with neither or both of `node` and `machine`, nesting
/// deeper than [`MAX_DEPTH`], more than [`MAX_PARAMS`] parameters, and
/// values out of range.
pub fn build_graph(json: &str, clips: &[&str]) -> Result<GraphAsset, GraphError> {
    let doc: GraphJson = serde_json::from_str(json).map_err(|e| GraphError {
        field: "json".into(),
        message: e.to_string(),
    })?;
    let mut b = Builder {
        clips: HashMap::new(),
        clip_names: clips.to_vec(),
        params: HashMap::new(),
        param_names: Vec::new(),
        param_kinds: Vec::new(),
        nodes: HashMap::new(),
        node_names: Vec::new(),
        node_order: Vec::new(),
    };
    for (i, c) in clips.iter().enumerate() {
        b.clips.entry(c).or_insert(i);
    }

    // Parameters.
    if doc.params.len() > MAX_PARAMS {
        return err("params", format!("more than {MAX_PARAMS} parameters"));
    }
    let mut params = Vec::new();
    for (i, p) in doc.params.iter().enumerate() {
        let field = format!("params[{i}]");
        if b.params.insert(&p.name, i).is_some() {
            return err(
                format!("{field}.name"),
                format!("\"{}\" is defined twice", p.name),
            );
        }
        let (kind, default) = match (p.kind.as_str(), &p.default) {
            ("float", None) => (ParamKind::Float, 0.0),
            ("float", Some(serde_json::Value::Number(n))) => {
                let v = n.as_f64().unwrap_or(f64::NAN) as f32;
                (ParamKind::Float, finite(v, &format!("{field}.default"))?)
            }
            ("bool", None) => (ParamKind::Bool, 0.0),
            ("bool", Some(serde_json::Value::Bool(v))) => {
                (ParamKind::Bool, f32::from(u8::from(*v)))
            }
            ("trigger", None) => (ParamKind::Trigger, 0.0),
            ("trigger", Some(_)) => {
                return err(format!("{field}.default"), "a trigger has no default")
            }
            ("float" | "bool", Some(_)) => {
                return err(format!("{field}.default"), format!("must be a {}", p.kind))
            }
            (other, _) => {
                return err(
                    format!("{field}.type"),
                    format!("unknown type \"{other}\" (float, bool or trigger)"),
                )
            }
        };
        b.param_names.push(&p.name);
        b.param_kinds.push(kind);
        params.push(Param {
            name: &p.name,
            kind,
            default,
        });
    }

    // Nodes: names, then a depth-first order that puts children first and
    // finds cycles.
    for (i, n) in doc.nodes.iter().enumerate() {
        if b.nodes.insert(&n.name, i).is_some() {
            return err(
                format!("nodes[{i}].name"),
                format!("\"{}\" is defined twice", n.name),
            );
        }
        b.node_names.push(&n.name);
    }
    let count = doc.nodes.len();
    let mut order = Vec::with_capacity(count);
    let mut mark = vec![0u8; count]; // 0 new, 1 on the path, 2 done
    for start in 0..count {
        visit(
            &doc.nodes,
            &b,
            start,
            &mut mark,
            &mut Vec::new(),
            &mut order,
        )?;
    }
    b.node_order = vec![0; count];
    for (k, &i) in order.iter().enumerate() {
        b.node_order[i] = k;
    }
    let mut nodes = Vec::with_capacity(count);
    let mut samples = Vec::new();
    let mut mask = Vec::new();
    for &i in &order {
        let n = &doc.nodes[i];
        let field = format!("nodes[{i}]");
        nodes.push(node_def(&b, n, &field, &mut samples, &mut mask)?);
    }

    // Machines, flattened in pre-order so a parent comes before its children.
    let mut flat = Vec::new();
    flatten(&doc.machine, "machine".into(), 0, &mut flat)?;
    let mut first_state = Vec::with_capacity(flat.len());
    let mut total = 0usize;
    for f in &flat {
        first_state.push(total);
        total += f.json.states.len();
    }
    let mut machines = Vec::new();
    let mut states = Vec::new();
    let mut transitions = Vec::new();
    let mut conditions = Vec::new();
    // Machine of every state name, to say "of another machine".
    let mut owner: HashMap<&str, Vec<&str>> = HashMap::new();
    for f in &flat {
        for s in &f.json.states {
            owner
                .entry(s.name.as_str())
                .or_default()
                .push(f.json.name.as_str());
        }
    }
    // The machine index a state's `machine` refers to: the flattened index
    // of the sub-machine, found by address.
    let index_of = |m: &MachineJson| flat.iter().position(|f| std::ptr::eq(f.json, m));
    for (mi, f) in flat.iter().enumerate() {
        let m = f.json;
        if m.states.is_empty() {
            return err(
                format!("{}.states", f.field),
                "a machine needs at least one state",
            );
        }
        let mut local: HashMap<&str, usize> = HashMap::new();
        let names: Vec<&str> = m.states.iter().map(|s| s.name.as_str()).collect();
        for (k, s) in m.states.iter().enumerate() {
            if local.insert(&s.name, first_state[mi] + k).is_some() {
                return err(
                    format!("{}.states[{k}].name", f.field),
                    format!("\"{}\" is defined twice in machine \"{}\"", s.name, m.name),
                );
            }
        }
        let state = |name: &str, field: String| -> Result<usize, GraphError> {
            if let Some(&i) = local.get(name) {
                return Ok(i);
            }
            match owner.get(name) {
                Some(others) => err(
                    field,
                    format!(
                        "state \"{name}\" belongs to another machine ({}), not \"{}\"",
                        others.join(", "),
                        m.name
                    ),
                ),
                None => err(
                    field,
                    format!(
                        "unknown state \"{name}\" (states of \"{}\": {})",
                        m.name,
                        names.join(", ")
                    ),
                ),
            }
        };
        let entry = state(&m.entry, format!("{}.entry", f.field))?;
        for (k, s) in m.states.iter().enumerate() {
            let field = format!("{}.states[{k}]", f.field);
            let motion = match (&s.node, &s.machine) {
                (Some(n), None) => Motion::Node(b.node(n, &format!("{field}.node"))?),
                (None, Some(sub)) => Motion::Machine(index_of(sub).unwrap_or(0)),
                _ => {
                    return err(
                        field,
                        "a state plays exactly one of \"node\" and \"machine\"",
                    )
                }
            };
            let speed = finite(s.speed.unwrap_or(1.0), &format!("{field}.speed"))?;
            if speed < 0.0 {
                return err(format!("{field}.speed"), "must be >= 0");
            }
            states.push(State {
                name: &s.name,
                machine: mi,
                motion,
                speed,
            });
        }
        let first_transition = transitions.len();
        let mut sorted: Vec<(usize, &TransitionJson)> = m.transitions.iter().enumerate().collect();
        sorted.sort_by_key(|(_, t)| t.priority);
        for (k, t) in sorted {
            let field = format!("{}.transitions[{k}]", f.field);
            let from = if t.from == "*" {
                None
            } else {
                Some(state(&t.from, format!("{field}.from"))?)
            };
            let to = state(&t.to, format!("{field}.to"))?;
            let first_condition = conditions.len();
            for (c, cond) in t.when.iter().enumerate() {
                conditions.push(condition(&b, cond, &format!("{field}.when[{c}]"))?);
            }
            transitions.push(TransitionDef {
                from,
                to,
                first_condition,
                condition_count: t.when.len(),
                transition: transition(t, &field)?,
                interruptible: t.interruptible,
            });
        }
        machines.push(Machine {
            name: &m.name,
            first_state: first_state[mi],
            state_count: m.states.len(),
            entry,
            first_transition,
            transition_count: transitions.len() - first_transition,
        });
    }
    let def = GraphDef {
        clip_count: clips.len(),
        params: &params,
        nodes: &nodes,
        samples: &samples,
        mask: &mask,
        machines: &machines,
        states: &states,
        transitions: &transitions,
        conditions: &conditions,
    };
    let core = |e: Error| GraphError {
        field: "graph".into(),
        message: e.to_string(),
    };
    let size = graph_size(&def).map_err(core)?;
    let mut bytes = AlignedBytes::zeroed(size);
    write_graph(&def, bytes.as_mut_slice()).map_err(core)?;
    Ok(GraphAsset { bytes })
}

fn visit(
    nodes: &[NodeJson],
    b: &Builder<'_>,
    i: usize,
    mark: &mut [u8],
    path: &mut Vec<usize>,
    order: &mut Vec<usize>,
) -> Result<(), GraphError> {
    match mark[i] {
        2 => return Ok(()),
        1 => {
            let start = path.iter().position(|&p| p == i).unwrap_or(0);
            let mut cycle: Vec<&str> = path[start..]
                .iter()
                .map(|&p| nodes[p].name.as_str())
                .collect();
            cycle.push(&nodes[i].name);
            return err(
                format!("nodes[{i}]"),
                format!("nodes form a cycle: {}", cycle.join(" -> ")),
            );
        }
        _ => {}
    }
    mark[i] = 1;
    path.push(i);
    let n = &nodes[i];
    for (k, c) in children(n).into_iter().enumerate() {
        let field = format!("nodes[{i}].{}", ["a", "b"][k % 2]);
        let j = lookup(&b.nodes, c, &field, "node", &b.node_names)?;
        visit(nodes, b, j, mark, path, order)?;
    }
    path.pop();
    mark[i] = 2;
    order.push(i);
    Ok(())
}

fn node_def(
    b: &Builder<'_>,
    n: &NodeJson,
    field: &str,
    samples: &mut Vec<BlendSample>,
    mask: &mut Vec<MaskJoint>,
) -> Result<Node, GraphError> {
    let kinds = usize::from(n.clip.is_some())
        + usize::from(n.blend_space.is_some())
        + usize::from(n.blend.is_some())
        + usize::from(n.additive.is_some())
        + usize::from(n.masked.is_some());
    if kinds != 1 {
        return err(
            field,
            "a node has exactly one of \"clip\", \"blend_space\", \"blend\", \"additive\" and \"masked\"",
        );
    }
    if n.clip.is_none() && (n.speed.is_some() || n.mode.is_some()) {
        return err(field, "\"speed\" and \"mode\" belong to clip nodes");
    }
    let weight = |p: &str, f: &str| b.param(p, &format!("{field}.{f}"), ParamKind::Float);
    if let Some(c) = &n.clip {
        let mode = match n.mode.as_deref().unwrap_or("loop") {
            "loop" => PlayMode::Loop,
            "clamp" => PlayMode::Clamp,
            "ping-pong" => PlayMode::PingPong,
            other => {
                return err(
                    format!("{field}.mode"),
                    format!("unknown mode \"{other}\" (loop, clamp or ping-pong)"),
                )
            }
        };
        return Ok(Node::Clip {
            clip: b.clip(c, &format!("{field}.clip"))?,
            speed: finite(n.speed.unwrap_or(1.0), &format!("{field}.speed"))?,
            mode,
        });
    }
    if let Some(s) = &n.blend_space {
        let f = format!("{field}.blend_space");
        let param = weight(&s.param, "blend_space.param")?;
        if s.samples.is_empty() || s.samples.len() > sinew_core::graph::MAX_BLEND_SAMPLES {
            return err(
                format!("{f}.samples"),
                format!(
                    "needs 1 to {} samples",
                    sinew_core::graph::MAX_BLEND_SAMPLES
                ),
            );
        }
        let first = samples.len();
        for (k, x) in s.samples.iter().enumerate() {
            let sf = format!("{f}.samples[{k}]");
            let position = finite(x.at, &format!("{sf}.at"))?;
            if s.samples[..k].iter().any(|y| y.at == x.at) {
                return err(format!("{sf}.at"), "two samples at the same position");
            }
            samples.push(BlendSample {
                clip: b.clip(&x.clip, &format!("{sf}.clip"))?,
                position,
            });
        }
        let speed = finite(s.speed.unwrap_or(1.0), &format!("{f}.speed"))?;
        if speed < 0.0 {
            return err(format!("{f}.speed"), "must be >= 0");
        }
        return Ok(Node::BlendSpace1D {
            param,
            first,
            count: s.samples.len(),
            speed,
        });
    }
    if let Some(x) = &n.blend {
        return Ok(Node::Blend2 {
            a: b.node(&x.a, &format!("{field}.blend.a"))?,
            b: b.node(&x.b, &format!("{field}.blend.b"))?,
            param: weight(&x.param, "blend.param")?,
        });
    }
    if let Some(x) = &n.additive {
        return Ok(Node::Additive {
            base: b.node(&x.base, &format!("{field}.additive.base"))?,
            additive: b.node(&x.additive, &format!("{field}.additive.additive"))?,
            param: weight(&x.param, "additive.param")?,
        });
    }
    let Some(x) = &n.masked else {
        return err(field, "a node needs a kind");
    };
    let first = mask.len();
    for (k, j) in x.joints.iter().enumerate() {
        let jf = format!("{field}.masked.joints[{k}]");
        if j.joint >= sinew_core::MAX_JOINTS {
            return err(
                format!("{jf}.joint"),
                format!("must be below {}", sinew_core::MAX_JOINTS),
            );
        }
        let weight = finite(j.weight, &format!("{jf}.weight"))?;
        if weight < 0.0 {
            return err(format!("{jf}.weight"), "must be >= 0");
        }
        mask.push(MaskJoint {
            joint: j.joint,
            weight,
        });
    }
    Ok(Node::Masked {
        base: b.node(&x.base, &format!("{field}.masked.base"))?,
        layer: b.node(&x.layer, &format!("{field}.masked.layer"))?,
        param: weight(&x.param, "masked.param")?,
        first,
        count: x.joints.len(),
    })
}

fn condition<'j>(
    b: &Builder<'j>,
    c: &'j ConditionJson,
    field: &str,
) -> Result<Condition<'j>, GraphError> {
    let set = [
        c.greater.is_some(),
        c.less.is_some(),
        c.equals.is_some(),
        c.trigger.is_some(),
        c.event.is_some(),
        c.event_id.is_some(),
        c.exit_time.is_some(),
    ];
    if set.iter().filter(|&&x| x).count() != 1 {
        return err(
            field,
            "a condition has exactly one of \"greater\", \"less\", \"equals\", \"trigger\", \"event\", \"event_id\" and \"exit_time\"",
        );
    }
    let compared = c.greater.is_some() || c.less.is_some() || c.equals.is_some();
    if compared != c.param.is_some() {
        return err(
            field,
            "\"param\" goes with \"greater\", \"less\" or \"equals\"",
        );
    }
    let pf = format!("{field}.param");
    let param = c.param.as_deref().unwrap_or("");
    Ok(if let Some(v) = c.greater {
        Condition::Greater {
            param: b.param(param, &pf, ParamKind::Float)?,
            value: finite(v, &format!("{field}.greater"))?,
        }
    } else if let Some(v) = c.less {
        Condition::Less {
            param: b.param(param, &pf, ParamKind::Float)?,
            value: finite(v, &format!("{field}.less"))?,
        }
    } else if let Some(v) = c.equals {
        Condition::Equals {
            param: b.param(param, &pf, ParamKind::Bool)?,
            value: v,
        }
    } else if let Some(t) = &c.trigger {
        Condition::Trigger {
            param: b.param(t, &format!("{field}.trigger"), ParamKind::Trigger)?,
        }
    } else if let Some(e) = &c.event {
        Condition::EventName(e)
    } else if let Some(id) = c.event_id {
        Condition::EventId(id)
    } else {
        let t = finite(c.exit_time.unwrap_or(0.0), &format!("{field}.exit_time"))?;
        if t < 0.0 {
            return err(format!("{field}.exit_time"), "must be >= 0");
        }
        Condition::ExitTime(t)
    })
}

fn transition(t: &TransitionJson, field: &str) -> Result<Transition, GraphError> {
    let duration = finite(t.duration.unwrap_or(0.2), &format!("{field}.duration"))?;
    if duration < 0.0 {
        return err(format!("{field}.duration"), "must be >= 0");
    }
    let curve = |c| Ok(Blend::Crossfade(c));
    let blend = match t.blend.as_deref().unwrap_or("smooth-step") {
        "linear" => curve(FadeCurve::Linear),
        "smooth-step" => curve(FadeCurve::SmoothStep),
        "ease-in" => curve(FadeCurve::EaseIn),
        "ease-out" => curve(FadeCurve::EaseOut),
        "inertialize" => Ok(Blend::Inertialize(match t.half_life {
            Some(h) => Decay::Spring {
                half_life: finite(h, &format!("{field}.half_life"))?,
            },
            None => Decay::Quintic,
        })),
        other => err(
            format!("{field}.blend"),
            format!(
                "unknown blend \"{other}\" (linear, smooth-step, ease-in, ease-out or inertialize)"
            ),
        ),
    }?;
    if t.half_life.is_some() && !matches!(blend, Blend::Inertialize(_)) {
        return err(
            format!("{field}.half_life"),
            "only an inertialized transition has a half-life",
        );
    }
    let tr = Transition { duration, blend };
    if let Err(e) = tr.validate() {
        return err(field, e.to_string());
    }
    Ok(tr)
}

/// An event track's storage: events sorted by start, their name table and
/// the range-end order.
#[derive(Clone, Debug, Default)]
pub struct OwnedEvents {
    /// Clip duration, seconds.
    pub duration: f32,
    /// The events, sorted by start.
    pub events: Vec<Event>,
    /// Their names.
    pub names: Vec<u8>,
    /// Range events by end time.
    pub ranges: Vec<u32>,
}

impl OwnedEvents {
    /// Named instant events `(name, time)` (sorted here) on a clip of `duration` seconds.
    ///
    /// # Errors
    /// As [`EventTrack::new`].
    pub fn instants(duration: f32, named: &[(&str, f32)]) -> Result<Self, Error> {
        let mut sorted = named.to_vec();
        sorted.sort_by(|a, b| a.1.total_cmp(&b.1));
        let mut names = Vec::new();
        let mut events = Vec::new();
        for (k, (name, t)) in sorted.iter().enumerate() {
            events.push(Event::instant(*t, k as u32).named(names.len() as u32, name.len() as u32));
            names.extend_from_slice(name.as_bytes());
        }
        let mut ranges = vec![0u32; events.len()];
        let n = sort_range_ends(&events, &mut ranges)?;
        ranges.truncate(n);
        let e = OwnedEvents {
            duration,
            events,
            names,
            ranges,
        };
        e.track()?;
        Ok(e)
    }

    /// The track view.
    ///
    /// # Errors
    /// As [`EventTrack::new`].
    pub fn track(&self) -> Result<EventTrack<'_>, Error> {
        EventTrack::new(self.duration, &self.events, &self.names, &self.ranges)
    }
}

/// The procedural humanoid with the clips of [`LOCOMOTION_JSON`]: idle,
/// walk, jog, run, jump, fall and land, and the jump's and the landing's
/// events (`takeoff`, `landed`).
pub struct Locomotion {
    /// The humanoid (its skeleton, and walk, jog and run).
    pub humanoid: Humanoid,
    /// Idle, walk, jog, run, jump, fall, land.
    pub clips: Vec<OwnedClip>,
    /// Per clip, its events (`None` without).
    pub events: Vec<Option<OwnedEvents>>,
    /// The built graph.
    pub graph: GraphAsset,
}

/// The clip names of [`Locomotion`], in clip-table order.
pub const LOCOMOTION_CLIPS: [&str; 7] = ["idle", "walk", "jog", "run", "jump", "fall", "land"];

/// Seconds into the jump clip when the feet leave the ground.
pub const TAKEOFF: f32 = 0.25;
/// Seconds into the land clip when the character has its weight back.
pub const LANDED: f32 = 0.3;

impl Locomotion {
    /// Builds the humanoid, its clips at 30 Hz and the graph.
    ///
    /// # Errors
    /// A kernel error or a [`GraphError`] (neither happens with the built-in data).
    pub fn new() -> Result<Self, Box<dyn std::error::Error>> {
        let humanoid = Humanoid::new(DEFAULT_SAMPLE_RATE)?;
        let skel = humanoid.skeleton.view();
        let pose =
            |name: &str, seconds: f32, looped: bool, f: &dyn Fn(&str, f32) -> Option<Quat>| {
                posed_clip(&skel, name, seconds, looped, f)
            };
        let idle = pose("idle", 2.0, true, &|j, s| {
            let w = std::f32::consts::TAU * s;
            match j {
                "spine_01" | "spine_02" => Some(Quat::from_rotation_x(0.02 * w.sin())),
                "head" => Some(Quat::from_rotation_y(0.08 * (0.5 * w).sin())),
                _ => None,
            }
        })?;
        let jump = pose("jump", 0.6, false, &|j, s| {
            // Crouch until take-off, then stretch out.
            let c = crouch(s, TAKEOFF / 0.6);
            leg(j, c, 1.0 - c)
        })?;
        let fall = pose("fall", 0.8, true, &|j, s| {
            let w = std::f32::consts::TAU * s;
            match j {
                "upper_arm_l" | "upper_arm_r" => Some(Quat::from_rotation_z(0.3 * w.sin())),
                _ => leg(j, 0.35, 0.4),
            }
        })?;
        let land = pose("land", 0.5, false, &|j, s| {
            // Impact at a fifth of the clip, standing again by the end.
            let c = if s < 0.2 {
                s / 0.2
            } else {
                (1.0 - (s - 0.2) / 0.8).max(0.0)
            };
            leg(j, 0.8 * c, 0.0)
        })?;
        let [walk, jog, run] = humanoid.clips.clone();
        let clips = vec![idle, walk, jog, run, jump, fall, land];
        let mut events = vec![None; clips.len()];
        events[4] = Some(OwnedEvents::instants(
            clips[4].duration(),
            &[("takeoff", TAKEOFF)],
        )?);
        events[6] = Some(OwnedEvents::instants(
            clips[6].duration(),
            &[("landed", LANDED)],
        )?);
        let graph = build_graph(LOCOMOTION_JSON, &LOCOMOTION_CLIPS)?;
        Ok(Locomotion {
            humanoid,
            clips,
            events,
            graph,
        })
    }

    /// The event track views, one per clip.
    ///
    /// # Panics
    /// Never: the tracks were checked when built.
    #[must_use]
    pub fn tracks(&self) -> Vec<Option<EventTrack<'_>>> {
        self.events
            .iter()
            .map(|e| e.as_ref().and_then(|e| e.track().ok()))
            .collect()
    }
}

/// 0 → 1 → 0 bend: up to 1 at `peak` (of the clip's normalised time), back to 0 at 1.
fn crouch(s: f32, peak: f32) -> f32 {
    if s < peak {
        (s / peak).powi(2)
    } else {
        (1.0 - (s - peak) / (1.0 - peak)).max(0.0)
    }
}

/// Legs bent by `c` (0 straight, 1 deep crouch) and arms raised by `arms`.
fn leg(joint: &str, c: f32, arms: f32) -> Option<Quat> {
    let base = joint.trim_end_matches("_l").trim_end_matches("_r");
    match base {
        "thigh" => Some(Quat::from_rotation_x(-c)),
        "calf" => Some(Quat::from_rotation_x(1.8 * c)),
        "foot" => Some(Quat::from_rotation_x(-0.8 * c)),
        "spine_01" => Some(Quat::from_rotation_x(0.35 * c)),
        "upper_arm" => Some(Quat::from_rotation_x(-2.2 * arms + 0.5 * c)),
        _ => None,
    }
}

/// A clip of `seconds` at 30 Hz: the rest pose with `f(joint name,
/// normalised time)` applied on top of each joint's rest rotation (a looped
/// clip's last frame repeats its first).
fn posed_clip(
    skel: &Skeleton<'_>,
    name: &str,
    seconds: f32,
    looped: bool,
    f: &dyn Fn(&str, f32) -> Option<Quat>,
) -> Result<OwnedClip, Error> {
    let rate = DEFAULT_SAMPLE_RATE;
    let frames = (seconds * rate).round() as usize + 1;
    let n = skel.soa_count();
    let rest = skel.rest_pose();
    let mut keys = vec![SoaTransform::IDENTITY; frames * n];
    for fr in 0..frames {
        let s = if looped && fr + 1 == frames {
            0.0
        } else {
            fr as f32 / (frames - 1) as f32
        };
        let block = &mut keys[fr * n..(fr + 1) * n];
        block.copy_from_slice(rest);
        for j in 0..skel.joint_count() {
            let r = rest[j / 4].get(j % 4);
            if let Some(q) = f(skel.joint_name(j).unwrap_or(""), s) {
                let t = Transform::new(r.translation, (r.rotation * q).normalize(), r.scale);
                block[j / 4].set(j % 4, &t);
            }
        }
    }
    OwnedClip::new(name, rate, n, keys)
}

#[cfg(test)]
mod tests;
