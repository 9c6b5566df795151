extern crate alloc;

use alloc::vec;
use alloc::vec::Vec;

use super::*;
use crate::blend::{self, BlendJob, BlendLayer};
use crate::clip::{ClipSource, RawClip, TimeMode};
use crate::error::Error;
use crate::math::{Quat, Transform, Vec3};
use crate::mix::transition::InertialBlock;
use crate::player::{Blend, FadeCurve, Transition};
use crate::soa::SoaTransform;
use crate::track::event::{Event, EventTrack};
use wide::f32x4;

/// 16-byte aligned bytes.
fn aligned(len: usize) -> Vec<u128> {
    vec![0u128; len.div_ceil(16)]
}

fn bytes(v: &[u128]) -> &[u8] {
    bytemuck::cast_slice(v)
}

/// Keys of a one-block clip whose joint 0 moves along x at `v` m/s from
/// `x0`, and turns about y at 1 rad/s, `frames` frames at 10 Hz.
fn keys(frames: usize, x0: f32, v: f32) -> Vec<SoaTransform> {
    (0..frames)
        .map(|f| {
            let t = f as f32 / 10.0;
            let mut b = SoaTransform::IDENTITY;
            for l in 0..4 {
                let tr = Transform::new(
                    Vec3::new(x0 + v * t, l as f32, 0.0),
                    Quat::from_rotation_y(t),
                    Vec3::ONE,
                );
                b.set(l, &tr);
            }
            b
        })
        .collect()
}

const LIN: Transition = Transition {
    duration: 0.2,
    blend: Blend::Crossfade(FadeCurve::Linear),
};

/// Params: speed, jump (trigger), grounded (bool), w.
const PARAMS: [Param<'static>; 4] = [
    Param {
        name: "speed",
        kind: ParamKind::Float,
        default: 0.0,
    },
    Param {
        name: "jump",
        kind: ParamKind::Trigger,
        default: 0.0,
    },
    Param {
        name: "grounded",
        kind: ParamKind::Bool,
        default: 1.0,
    },
    Param {
        name: "w",
        kind: ParamKind::Float,
        default: 0.25,
    },
];

const NODES: [Node; 6] = [
    Node::Clip {
        clip: 0,
        speed: 1.0,
        mode: crate::player::PlayMode::Loop,
    },
    Node::Clip {
        clip: 1,
        speed: 1.0,
        mode: crate::player::PlayMode::Clamp,
    },
    Node::Clip {
        clip: 2,
        speed: 1.0,
        mode: crate::player::PlayMode::Loop,
    },
    Node::BlendSpace1D {
        param: 0,
        first: 0,
        count: 2,
        speed: 1.0,
    },
    Node::Blend2 {
        a: 0,
        b: 2,
        param: 3,
    },
    Node::Masked {
        base: 0,
        layer: 2,
        param: 3,
        first: 0,
        count: 2,
    },
];

const SAMPLES: [BlendSample; 2] = [
    BlendSample {
        clip: 0,
        position: 0.0,
    },
    BlendSample {
        clip: 2,
        position: 2.0,
    },
];

const MASK: [MaskJoint; 2] = [
    MaskJoint {
        joint: 1,
        weight: 1.0,
    },
    MaskJoint {
        joint: 3,
        weight: 0.5,
    },
];

/// Root: idle (blend2), move (blend space), air (machine 1: up, down),
/// masked. Transitions: idle→move speed > 0.5; move→idle speed < 0.5;
/// any→air on jump (inertialized); air→idle on event "land"; up→down at
/// exit time 1 (interruptible); any→masked when w > 0.9.
fn def<'a>(
    machines: &'a [Machine<'a>],
    states: &'a [State<'a>],
    transitions: &'a [TransitionDef],
    conditions: &'a [Condition<'a>],
) -> GraphDef<'a> {
    GraphDef {
        clip_count: 3,
        params: &PARAMS,
        nodes: &NODES,
        samples: &SAMPLES,
        mask: &MASK,
        machines,
        states,
        transitions,
        conditions,
    }
}

const MACHINES: [Machine<'static>; 2] = [
    Machine {
        name: "root",
        first_state: 0,
        state_count: 4,
        entry: 0,
        first_transition: 0,
        transition_count: 5,
    },
    Machine {
        name: "air",
        first_state: 4,
        state_count: 2,
        entry: 4,
        first_transition: 5,
        transition_count: 1,
    },
];

const STATES: [State<'static>; 6] = [
    State {
        name: "idle",
        machine: 0,
        motion: Motion::Node(4),
        speed: 1.0,
    },
    State {
        name: "move",
        machine: 0,
        motion: Motion::Node(3),
        speed: 1.0,
    },
    State {
        name: "air",
        machine: 0,
        motion: Motion::Machine(1),
        speed: 1.0,
    },
    State {
        name: "masked",
        machine: 0,
        motion: Motion::Node(5),
        speed: 1.0,
    },
    State {
        name: "up",
        machine: 1,
        motion: Motion::Node(1),
        speed: 1.0,
    },
    State {
        name: "down",
        machine: 1,
        motion: Motion::Node(2),
        speed: 1.0,
    },
];

const CONDITIONS: [Condition<'static>; 6] = [
    Condition::Greater {
        param: 0,
        value: 0.5,
    },
    Condition::Less {
        param: 0,
        value: 0.5,
    },
    Condition::Trigger { param: 1 },
    Condition::EventName("land"),
    Condition::ExitTime(1.0),
    Condition::Greater {
        param: 3,
        value: 0.9,
    },
];

fn tr(
    from: Option<usize>,
    to: usize,
    cond: usize,
    t: Transition,
    interruptible: bool,
) -> TransitionDef {
    TransitionDef {
        from,
        to,
        first_condition: cond,
        condition_count: 1,
        transition: t,
        interruptible,
    }
}

fn transitions() -> [TransitionDef; 6] {
    [
        tr(Some(0), 1, 0, LIN, true),
        tr(Some(1), 0, 1, LIN, true),
        tr(None, 2, 2, Transition::inertialize(0.3), false),
        tr(Some(2), 0, 3, LIN, true),
        tr(None, 3, 5, LIN, true),
        tr(Some(4), 5, 4, LIN, true),
    ]
}

fn build() -> (Vec<u128>, usize) {
    let t = transitions();
    let d = def(&MACHINES, &STATES, &t, &CONDITIONS);
    let size = graph_size(&d).unwrap();
    let mut buf = aligned(size);
    let n = write_graph(&d, bytemuck::cast_slice_mut(&mut buf)).unwrap();
    assert_eq!(n, size);
    (buf, n)
}

struct Assets {
    keys: [Vec<SoaTransform>; 3],
    events: [Event; 1],
}

impl Assets {
    fn new() -> Self {
        Assets {
            // 1 s loop, 2 s clamp, 0.5 s loop.
            keys: [keys(11, 0.0, 1.0), keys(21, 5.0, -1.0), keys(6, 10.0, 2.0)],
            events: [Event::instant(0.3, 7).named(0, 4)],
        }
    }

    fn clips(&self) -> [RawClip<'_>; 3] {
        [
            RawClip::new(10.0, 1, &self.keys[0]).unwrap(),
            RawClip::new(10.0, 1, &self.keys[1]).unwrap(),
            RawClip::new(10.0, 1, &self.keys[2]).unwrap(),
        ]
    }

    /// "land" at 0.3 s on clip 2 (played by "down").
    fn tracks(&self) -> [Option<EventTrack<'_>>; 3] {
        [
            None,
            None,
            Some(EventTrack::new(0.5, &self.events, b"land", &[]).unwrap()),
        ]
    }
}

struct Buffers {
    scratch: Vec<SoaTransform>,
    history: Vec<SoaTransform>,
    inertial: Vec<InertialBlock>,
    mask: Vec<f32x4>,
}

impl Buffers {
    fn new(graph: &Graph<'_>, n: usize) -> Self {
        Buffers {
            scratch: vec![SoaTransform::IDENTITY; graph.scratch_poses() * n],
            history: vec![SoaTransform::IDENTITY; 2 * n],
            inertial: vec![InertialBlock::default(); n],
            mask: vec![f32x4::ZERO; 2 * n],
        }
    }

    fn view(&mut self) -> GraphBuffers<'_> {
        GraphBuffers {
            scratch: &mut self.scratch,
            history: &mut self.history,
            inertial: &mut self.inertial,
            mask: &mut self.mask,
        }
    }
}

const REST: [SoaTransform; 1] = [SoaTransform::IDENTITY];
const DT: f32 = 0.05;

fn name(g: &Graph<'_>, s: usize) -> &'static str {
    STATES
        .iter()
        .find(|x| Some(x.name) == g.state(s).map(|y| y.name))
        .map_or("?", |x| x.name)
}

#[test]
fn a_written_graph_reads_back() {
    let (buf, n) = build();
    let g = Graph::from_bytes(&bytes(&buf)[..n]).unwrap();
    assert_eq!(g.clip_count(), 3);
    assert_eq!(g.param_count(), 4);
    for (i, p) in PARAMS.iter().enumerate() {
        assert_eq!(g.param(i), Some(*p));
        assert_eq!(g.find_param(p.name), Some(i));
    }
    for (i, x) in NODES.iter().enumerate() {
        assert_eq!(g.node(i), Some(*x));
    }
    for (i, x) in MACHINES.iter().enumerate() {
        assert_eq!(g.machine(i), Some(*x));
    }
    for (i, x) in STATES.iter().enumerate() {
        assert_eq!(g.state(i), Some(*x));
    }
    for (i, x) in transitions().iter().enumerate() {
        assert_eq!(g.transition(i), Some(*x));
    }
    for (i, x) in CONDITIONS.iter().enumerate() {
        assert_eq!(g.condition(i), Some(*x));
    }
    assert_eq!(g.sample(1), Some(SAMPLES[1]));
    assert_eq!(g.mask_joint(1), Some(MASK[1]));
    assert_eq!(g.find_state(1, "down"), Some(5));
    assert_eq!(g.find_state(0, "down"), None);
    // Blend2 and masked need 2 scratch poses, the blend space 3.
    assert_eq!(g.scratch_poses(), MAX_ACTIVE + 3);
}

#[test]
fn every_truncation_is_an_error() {
    let (buf, n) = build();
    for len in 0..n {
        assert!(Graph::from_bytes(&bytes(&buf)[..len]).is_err(), "{len}");
    }
    // Trailing bytes are ignored.
    let mut longer = buf.clone();
    longer.push(0);
    assert!(Graph::from_bytes(bytes(&longer)).is_ok());
}

#[test]
fn every_flipped_byte_is_caught_or_harmless() {
    let (buf, n) = build();
    let g0 = Graph::from_bytes(&bytes(&buf)[..n]).unwrap();
    let assets = Assets::new();
    let clips = assets.clips();
    for at in 0..n {
        for x in [0x01u8, 0x80, 0xFF] {
            let mut b = buf.clone();
            bytemuck::cast_slice_mut::<u128, u8>(&mut b)[at] ^= x;
            let Ok(g) = Graph::from_bytes(&bytes(&b)[..n]) else {
                continue;
            };
            // What validation lets through still plays without panicking.
            let _ = g0;
            let mut inst = GraphInstance::new(&g).unwrap();
            let mut bufs = Buffers::new(&g, 1);
            let mut out = [SoaTransform::IDENTITY];
            let ctx = GraphContext {
                graph: &g,
                clips: &clips,
                events: &[],
                rest: &REST,
            };
            for _ in 0..4 {
                let _ = inst.update(DT, &ctx, &mut bufs.view(), &mut out, &mut []);
            }
        }
    }
}

/// Writes `d`, then lets `edit` change the bytes, and reads them back.
fn corrupt(edit: impl FnOnce(&mut [u8])) -> Result<(), Error> {
    let (mut buf, n) = build();
    edit(&mut bytemuck::cast_slice_mut::<u128, u8>(&mut buf)[..n]);
    Graph::from_bytes(&bytes(&buf)[..n]).map(|_| ())
}

fn set(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn word(b: &[u8], at: usize) -> usize {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]) as usize
}

/// Byte offset of section `k` (0 params … 8 names) of a container.
fn section(b: &[u8], k: usize) -> usize {
    let sizes = [16, 48, 8, 8, 32, 32, 32, 16, 1];
    let mut at = 64;
    for (i, s) in sizes.iter().enumerate().take(k) {
        at = (at + word(b, 20 + 4 * i) * s + 15) & !15;
    }
    at
}

#[test]
fn corrupt_containers_name_what_is_wrong() {
    let what = |r: Result<(), Error>| match r {
        Err(Error::Corrupt { what }) => what,
        other => panic!("{other:?}"),
    };
    // What the container says when the u32 at byte `offset` of section `k` is `v`.
    let field = |k: usize, offset: usize, v: u32| {
        what(corrupt(|b| {
            let at = section(b, k) + offset;
            set(b, at, v);
        }))
    };
    assert_eq!(corrupt(|b| b[0] = b'X'), Err(Error::BadMagic));
    assert_eq!(
        corrupt(|b| set(b, 8, 2)),
        Err(Error::UnsupportedVersion { found: 2 })
    );
    // Huge counts: the size no longer matches (or overflows).
    for k in 0..9 {
        let w = what(corrupt(|b| set(b, 20 + 4 * k, u32::MAX)));
        assert!(w.contains("size"), "{k}: {w}");
        let w = what(corrupt(|b| set(b, 20 + 4 * k, 1 << 20)));
        assert!(w.contains("size"), "{k}: {w}");
    }
    assert!(what(corrupt(|b| b[60] = 1)).contains("reserved"));
    // A node's child that does not come before it.
    let w = field(1, 48 * 4 + 8, 4);
    assert!(w.contains("child"), "{w}");
    // A clip past the clip count.
    let w = field(1, 4, 3);
    assert!(w.contains("clip"), "{w}");
    // A derived field that does not match.
    let w = field(1, 48 * 4 + 36, 9);
    assert!(w.contains("scratch"), "{w}");
    // Weight parameter that is not a float (jump is a trigger).
    let w = field(1, 48 * 4 + 12, 1);
    assert!(w.contains("float"), "{w}");
    // A transition into a state of another machine.
    let w = field(6, 4, 4);
    assert!(w.contains("another machine"), "{w}");
    let w = field(6, 32 * 5, 0);
    assert!(w.contains("another machine"), "{w}");
    // A condition on a parameter of the wrong kind.
    let w = field(7, 4, 2);
    assert!(w.contains("not a float"), "{w}");
    // Condition on a parameter that does not exist.
    let w = field(7, 16 * 2 + 4, 99);
    assert!(w.contains("trigger"), "{w}");
    // Entry state outside its machine.
    let w = field(4, 16, 4);
    assert!(w.contains("entry"), "{w}");
    // A machine played by no state / nesting.
    let w = field(4, 32 + 28, 0);
    assert!(w.contains("parent"), "{w}");
    // Non-finite floats.
    let nan = f32::NAN.to_bits();
    assert!(matches!(
        corrupt(|b| {
            let at = section(b, 0) + 12;
            set(b, at, nan);
        }),
        Err(Error::NonFinite { .. })
    ));
    assert!(matches!(
        corrupt(|b| {
            let at = section(b, 6) + 16;
            set(b, at, nan);
        }),
        Err(Error::NonFinite { .. })
    ));
    // A name outside the names, and names that are not UTF-8.
    let w = field(0, 4, 1000);
    assert!(w.contains("name"), "{w}");
    let w = what(corrupt(|b| {
        let at = section(b, 8);
        b[at] = 0xFF;
    }));
    assert!(w.contains("UTF-8"), "{w}");
    // Misaligned.
    let (buf, n) = build();
    let mut shifted = aligned(n + 16);
    bytemuck::cast_slice_mut::<u128, u8>(&mut shifted)[1..=n].copy_from_slice(&bytes(&buf)[..n]);
    assert_eq!(
        Graph::from_bytes(&bytes(&shifted)[1..=n]).map(|_| ()),
        Err(Error::Misaligned)
    );
}

#[test]
fn the_writer_rejects_bad_definitions() {
    let t = transitions();
    let write = |d: &GraphDef<'_>| {
        let mut buf = aligned(graph_size(d).unwrap());
        write_graph(d, bytemuck::cast_slice_mut(&mut buf)).map(|_| ())
    };
    // Too many parameters.
    let many = [PARAMS[0]; MAX_PARAMS + 1];
    let mut d = def(&MACHINES, &STATES, &t, &CONDITIONS);
    d.params = &many;
    assert_eq!(
        write(&d),
        Err(Error::CapacityExceeded {
            capacity: MAX_PARAMS
        })
    );
    // Duplicate parameter names.
    let dup = [PARAMS[0], PARAMS[0]];
    d.params = &dup;
    assert!(matches!(write(&d), Err(Error::Corrupt { .. })));
    // A child after its parent.
    let mut nodes = NODES;
    nodes[4] = Node::Blend2 {
        a: 0,
        b: 5,
        param: 3,
    };
    let mut d = def(&MACHINES, &STATES, &t, &CONDITIONS);
    d.nodes = &nodes;
    assert!(matches!(write(&d), Err(Error::Corrupt { .. })));
    // A buffer too small, misaligned.
    let d = def(&MACHINES, &STATES, &t, &CONDITIONS);
    let size = graph_size(&d).unwrap();
    let mut buf = aligned(size + 16);
    let b: &mut [u8] = bytemuck::cast_slice_mut(&mut buf);
    assert_eq!(
        write_graph(&d, &mut b[..size - 1]),
        Err(Error::BufferTooSmall {
            needed: size,
            actual: size - 1
        })
    );
    assert_eq!(write_graph(&d, &mut b[1..]), Err(Error::Misaligned));
    // Nesting deeper than MAX_DEPTH: machines 0 → 1 → 2 → 3 → 4.
    let names = ["m0", "m1", "m2", "m3", "m4"];
    let machines: Vec<Machine<'_>> = (0..5)
        .map(|k| Machine {
            name: names[k],
            first_state: k,
            state_count: 1,
            entry: k,
            first_transition: 0,
            transition_count: 0,
        })
        .collect();
    let states: Vec<State<'_>> = (0..5)
        .map(|k| State {
            name: names[k],
            machine: k,
            motion: if k < 4 {
                Motion::Machine(k + 1)
            } else {
                Motion::Node(0)
            },
            speed: 1.0,
        })
        .collect();
    let mut d = def(&machines, &states, &[], &[]);
    assert!(matches!(write(&d), Err(Error::Corrupt { what }) if what.contains("MAX_DEPTH")));
    d.machines = &machines[..4];
    d.states = &states[..4];
    let mut s4 = states[..4].to_vec();
    s4[3].motion = Motion::Node(0);
    d.states = &s4;
    assert_eq!(write(&d), Ok(()));
}

struct Run<'a> {
    g: Graph<'a>,
    inst: GraphInstance,
    bufs: Buffers,
}

impl<'a> Run<'a> {
    fn new(g: Graph<'a>) -> Self {
        let inst = GraphInstance::new(&g).unwrap();
        let bufs = Buffers::new(&g, 1);
        Run { g, inst, bufs }
    }

    fn step(&mut self, assets: &Assets, out: &mut [SoaTransform; 1]) -> Report {
        let clips = assets.clips();
        let tracks = assets.tracks();
        let ctx = GraphContext {
            graph: &self.g,
            clips: &clips,
            events: &tracks,
            rest: &REST,
        };
        let mut events = [GraphEvent::default(); 8];
        self.inst
            .update(DT, &ctx, &mut self.bufs.view(), out, &mut events)
            .unwrap()
    }
}

#[test]
fn any_state_triggers_are_consumed_and_exit_time_and_events_move_on() {
    let (buf, n) = build();
    let g = Graph::from_bytes(&bytes(&buf)[..n]).unwrap();
    let assets = Assets::new();
    let mut out = [SoaTransform::IDENTITY];
    let mut run = Run::new(g);
    assert_eq!(run.inst.path(), &[0]);
    run.step(&assets, &mut out);
    // Speed up: idle → move with a 0.2 s linear fade.
    run.inst.set_named(&g, "speed", 1.0).unwrap();
    let r = run.step(&assets, &mut out);
    assert_eq!(r.transition, Some(0));
    assert_eq!(r.path(), &[1]);
    let w: Vec<(usize, f32)> = run.inst.active().collect();
    assert_eq!(w, [(0, 1.0), (1, 0.0)]);
    run.step(&assets, &mut out);
    let w: Vec<(usize, f32)> = run.inst.active().collect();
    assert_eq!(w, [(0, 0.75), (1, 0.25)]);
    // Jump mid-fade: the any-state transition fires, inertialized (alone at once).
    run.inst.fire(&g, 1).unwrap();
    assert_eq!(run.inst.param(1), Some(1.0));
    let r = run.step(&assets, &mut out);
    assert_eq!(r.transition, Some(2));
    assert_eq!(r.path(), &[2, 4]);
    assert_eq!(run.inst.param(1), Some(0.0), "the trigger is consumed");
    assert!(run.inst.is_inertializing());
    let w: Vec<(usize, f32)> = run.inst.active().collect();
    assert_eq!(w, [(4, 1.0)]);
    // A trigger while in air: the any-state transition does not re-enter air,
    // and the trigger stays set.
    run.inst.fire(&g, 1).unwrap();
    // "up" is a 2 s clamped clip: exit time 1 is its end, about 40 frames in.
    let mut switched = None;
    for f in 1..=45 {
        let r = run.step(&assets, &mut out);
        if r.transition.is_some() {
            switched = Some((f, r.transition, r.path()[1]));
            break;
        }
    }
    // (40 frames of 0.05 s sum to just under 2 in f32: the playhead's own arithmetic.)
    let mut t = 0.0f32;
    let mut end = 0;
    while t < 2.0 {
        t = (t + DT).clamp(0.0, 2.0);
        end += 1;
    }
    assert_eq!(switched, Some((end, Some(5), 5)));
    assert_eq!(run.inst.param(1), Some(1.0));
    // "down" crosses "land" at 0.3 s of its clip: 6 frames in.
    let mut landed = None;
    for f in 1..=10 {
        let r = run.step(&assets, &mut out);
        if r.transition.is_some() {
            landed = Some((f, r.transition, r.path().to_vec()));
            break;
        }
    }
    // An edge counts as crossed once the time is past it (0.3 / 0.05 = 6
    // frames, 7 when six f32 steps land on 0.3 itself). In the air, the
    // any-state jump does not re-enter it: air → idle fires.
    let (mut t, mut frames) = (0.0f32, 0);
    while t <= 0.3 {
        t += DT;
        frames += 1;
    }
    assert_eq!(landed, Some((frames, Some(3), vec![0])));
    // The trigger still set takes it straight back into the air.
    let r = run.step(&assets, &mut out);
    assert_eq!((r.transition, r.path()), (Some(2), &[2u16, 4][..]));
    assert_eq!(run.inst.param(1), Some(0.0));
}

/// A non-interruptible inertialized jump blocks other transitions until
/// its offset has decayed.
#[test]
fn a_transition_that_cannot_be_interrupted_runs_to_its_end() {
    let (buf, n) = build();
    let g = Graph::from_bytes(&bytes(&buf)[..n]).unwrap();
    let assets = Assets::new();
    let mut out = [SoaTransform::IDENTITY];
    let mut run = Run::new(g);
    run.step(&assets, &mut out);
    run.step(&assets, &mut out);
    run.inst.fire(&g, 1).unwrap();
    assert_eq!(run.step(&assets, &mut out).transition, Some(2));
    // w > 0.9 would fire any → masked at once, but the jump blocks it.
    run.inst.set_param(&g, 3, 1.0).unwrap();
    let mut f = 0;
    loop {
        f += 1;
        let r = run.step(&assets, &mut out);
        if r.transition.is_some() {
            assert_eq!(r.path(), &[3]);
            break;
        }
        assert!(f < 20);
    }
    // The quintic's per-joint duration may be shorter than 0.3 s, never longer.
    assert!(f as f32 * DT <= 0.3 + 1e-4, "{f}");
}

fn close(a: &[SoaTransform], b: &[SoaTransform]) -> f32 {
    let mut e = 0.0f32;
    for (x, y) in a.iter().zip(b) {
        for l in 0..4 {
            let (p, q) = (x.get(l), y.get(l));
            e = e.max((p.translation - q.translation).length());
            e = e.max(1.0 - p.rotation.dot(q.rotation).abs());
        }
    }
    e
}

#[test]
fn poses_are_the_trees_evaluated_by_hand() {
    let (buf, n) = build();
    let g = Graph::from_bytes(&bytes(&buf)[..n]).unwrap();
    let assets = Assets::new();
    let clips = assets.clips();
    let mut out = [SoaTransform::IDENTITY];
    let mut run = Run::new(g);
    let sample = |c: usize, t: f32| {
        let mut p = [SoaTransform::IDENTITY];
        ClipSource::sample(&clips[c], t, TimeMode::Loop, &REST, &mut p).unwrap();
        p
    };
    // idle: Blend2(clip 0, clip 2, w = 0.25), both looping from 0.
    for f in 1..=5 {
        run.step(&assets, &mut out);
        let t = f as f32 * DT;
        let (a, b) = (sample(0, t), sample(2, t));
        let mut want = [SoaTransform::IDENTITY];
        let layers = [BlendLayer::new(&a, 0.75), BlendLayer::new(&b, 0.25)];
        blend::blend(&BlendJob::new(&layers, &[], &REST), &mut want).unwrap();
        assert!(close(&out, &want) < 1e-6, "frame {f}");
    }
    // masked: jump straight there with w = 1: joint 1 is clip 2, joint 3
    // half-way, joints 0 and 2 clip 0 (the state starts at time 0).
    run.inst.set_param(&g, 3, 1.0).unwrap();
    assert_eq!(run.step(&assets, &mut out).path(), &[3]);
    for f in 1..=5 {
        run.step(&assets, &mut out);
        // The fade from idle runs 0.2 s; compare once it is done.
        if f < 4 {
            continue;
        }
        let t = f as f32 * DT;
        let (a, b) = (sample(0, t), sample(2, t));
        let half = {
            let mut h = [SoaTransform::IDENTITY];
            let layers = [BlendLayer::new(&a, 0.5), BlendLayer::new(&b, 0.5)];
            blend::blend(&BlendJob::new(&layers, &[], &REST), &mut h).unwrap();
            h
        };
        for (l, want) in [(0, a), (1, b), (2, a), (3, half)] {
            let (p, q) = (out[0].get(l), want[0].get(l));
            assert!(
                (p.translation - q.translation).length() < 1e-5,
                "frame {f} joint {l}"
            );
            assert!(
                p.rotation.dot(q.rotation).abs() > 1.0 - 1e-6,
                "frame {f} joint {l}"
            );
        }
    }
}

#[test]
fn the_blend_space_plays_in_phase() {
    let (buf, n) = build();
    let g = Graph::from_bytes(&bytes(&buf)[..n]).unwrap();
    let assets = Assets::new();
    let clips = assets.clips();
    let mut out = [SoaTransform::IDENTITY];
    let mut run = Run::new(g);
    run.inst.set_param(&g, 0, 1.5).unwrap();
    assert_eq!(run.step(&assets, &mut out).path(), &[1]);
    for _ in 0..4 {
        run.step(&assets, &mut out);
    }
    // Weights at 1.5 on [0, 2]: 0.25 / 0.75; cycle 0.25·1 + 0.75·0.5 = 0.625 s.
    // After the fade (4 frames of 0.05 s) the phase is 0.2 / 0.625 = 0.32.
    let mut phase = 0.2f32 / 0.625;
    for _ in 0..5 {
        run.step(&assets, &mut out);
        phase += DT / 0.625;
        let (ta, tb) = (phase.fract() * 1.0, phase.fract() * 0.5);
        let mut a = [SoaTransform::IDENTITY];
        let mut b = [SoaTransform::IDENTITY];
        ClipSource::sample(&clips[0], ta, TimeMode::Loop, &REST, &mut a).unwrap();
        ClipSource::sample(&clips[2], tb, TimeMode::Loop, &REST, &mut b).unwrap();
        let mut want = [SoaTransform::IDENTITY];
        let layers = [BlendLayer::new(&a, 0.25), BlendLayer::new(&b, 0.75)];
        blend::blend(&BlendJob::new(&layers, &[], &REST), &mut want).unwrap();
        assert!(close(&out, &want) < 1e-4, "{}", close(&out, &want));
    }
    assert!((run.inst.normalized_time() - phase).abs() < 1e-4);
}

#[test]
fn update_checks_its_inputs_before_changing_anything() {
    let (buf, n) = build();
    let g = Graph::from_bytes(&bytes(&buf)[..n]).unwrap();
    let assets = Assets::new();
    let clips = assets.clips();
    let mut inst = GraphInstance::new(&g).unwrap();
    let before = inst;
    let mut bufs = Buffers::new(&g, 1);
    let mut out = [SoaTransform::IDENTITY];
    let ctx = GraphContext {
        graph: &g,
        clips: &clips,
        events: &[],
        rest: &REST,
    };
    assert_eq!(
        inst.update(f32::NAN, &ctx, &mut bufs.view(), &mut out, &mut []),
        Err(Error::NonFinite { what: "dt" })
    );
    let short = GraphContext {
        clips: &clips[..2],
        ..ctx
    };
    assert_eq!(
        inst.update(DT, &short, &mut bufs.view(), &mut out, &mut []),
        Err(Error::UnknownClip { clip: 2, count: 2 })
    );
    let mut small = bufs.view();
    small.scratch = &mut [];
    assert!(matches!(
        inst.update(DT, &ctx, &mut small, &mut out, &mut []),
        Err(Error::BadLength {
            buffer: "graph scratch",
            ..
        })
    ));
    let tracks = assets.tracks();
    let bad = GraphContext {
        events: &tracks[..2],
        ..ctx
    };
    assert!(matches!(
        inst.update(DT, &bad, &mut bufs.view(), &mut out, &mut []),
        Err(Error::BadLength { .. })
    ));
    assert_eq!(inst, before);
    // Parameters: kinds, names, finiteness, another graph.
    assert!(inst.set_param(&g, 0, f32::INFINITY).is_err());
    assert!(inst.set_param(&g, 9, 1.0).is_err());
    assert!(inst.fire(&g, 0).is_err());
    assert!(inst.set_named(&g, "nope", 1.0).is_err());
    inst.set_named(&g, "grounded", 0.0).unwrap();
    assert_eq!(inst.param_named(&g, "grounded"), Some(0.0));
    inst.set_named(&g, "grounded", 3.0).unwrap();
    assert_eq!(inst.param_named(&g, "grounded"), Some(1.0));
    let t = transitions();
    let mut d = def(&MACHINES, &STATES, &t, &CONDITIONS);
    d.clip_count = 4;
    let mut other = aligned(graph_size(&d).unwrap());
    let len = write_graph(&d, bytemuck::cast_slice_mut(&mut other)).unwrap();
    let g2 = Graph::from_bytes(&bytes(&other)[..len]).unwrap();
    let _ = name(&g2, 0);
    // Same size and states: the instance cannot tell; a different graph
    // shape is refused.
    let mut d3 = def(&MACHINES[..1], &STATES[..4], &t[..5], &CONDITIONS);
    d3.machines = &[Machine {
        transition_count: 5,
        ..MACHINES[0]
    }];
    let s3 = [STATES[0], STATES[1], STATES[3], STATES[3]];
    d3.states = &s3;
    let t3 = [t[0], t[1], t[4]];
    d3.transitions = &t3;
    d3.machines = &[Machine {
        transition_count: 3,
        ..MACHINES[0]
    }];
    let mut third = aligned(graph_size(&d3).unwrap());
    let len = write_graph(&d3, bytemuck::cast_slice_mut(&mut third)).unwrap();
    let g3 = Graph::from_bytes(&bytes(&third)[..len]).unwrap();
    assert!(inst.set_param(&g3, 0, 1.0).is_err());
}
