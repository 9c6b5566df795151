//! The built-in locomotion graph played frame by frame against a
//! hand-written reference state machine (same states, same switch frames,
//! same fader weights), and its poses against the blend trees evaluated by
//! hand from clip sampling and the blend kernels.

use sinew_core::blend::{self, BlendJob, BlendLayer};
use sinew_core::clip::{ClipSource, TimeMode};
use sinew_core::graph::{GraphBuffers, GraphContext, GraphEvent, GraphInstance};
use sinew_core::mix::blend_space::{sample_blend, BlendSpace1D, PhaseSync, Sample1D};
use sinew_core::mix::InertialBlock;
use sinew_core::player::{FadeCurve, PlayMode, Playhead};
use sinew_core::{f32x4, SoaTransform};
use sinew_std::graph::{Locomotion, LANDED};

const DT: f32 = 1.0 / 60.0;

// Clip table of the example.
const IDLE: usize = 0;
const WALK: usize = 1;
const JOG: usize = 2;
const JUMP: usize = 4;
const LAND: usize = 6;

/// Leaf states of the reference, with the graph's state indices.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Leaf {
    Idle,
    Move,
    Jump,
    Fall,
    Land,
}

impl Leaf {
    fn index(self) -> usize {
        match self {
            Leaf::Idle => 0,
            Leaf::Move => 1,
            Leaf::Jump => 3,
            Leaf::Fall => 4,
            Leaf::Land => 5,
        }
    }

    fn airborne(self) -> bool {
        matches!(self, Leaf::Jump | Leaf::Fall | Leaf::Land)
    }

    fn path(self) -> Vec<u16> {
        if self.airborne() {
            vec![2, self.index() as u16]
        } else {
            vec![self.index() as u16]
        }
    }
}

/// The reference: a hand-written machine for exactly the example's JSON.
struct Reference {
    /// Playing leaves, oldest first, with their frozen share.
    fading: Vec<(Leaf, f32)>,
    elapsed: f32,
    duration: f32,
    curve: FadeCurve,
    /// Whether the last transition may be interrupted.
    interruptible: bool,
    /// Seconds since an inertialized switch, and its duration.
    inertial: Option<(f32, f32)>,
    /// The current leaf's clock (clamped clips only need one).
    clock: Playhead,
    speed: f32,
    jump: bool,
    grounded: bool,
}

impl Reference {
    fn new() -> Self {
        Reference {
            fading: vec![(Leaf::Idle, 1.0)],
            elapsed: 0.0,
            duration: 0.0,
            curve: FadeCurve::Linear,
            interruptible: true,
            inertial: None,
            clock: Playhead::new(PlayMode::Loop),
            speed: 0.0,
            jump: false,
            grounded: true,
        }
    }

    fn current(&self) -> Leaf {
        self.fading.last().unwrap().0
    }

    fn alpha(&self) -> f32 {
        if self.fading.len() <= 1 || self.duration <= 0.0 {
            1.0
        } else {
            self.curve.alpha(self.elapsed / self.duration)
        }
    }

    fn weights(&self) -> Vec<(usize, f32)> {
        let a = self.alpha();
        let last = self.fading.len() - 1;
        self.fading
            .iter()
            .enumerate()
            .map(|(i, (l, b))| (l.index(), if i == last { a } else { b * (1.0 - a) }))
            .collect()
    }

    fn start(
        &mut self,
        to: Leaf,
        duration: f32,
        curve: Option<FadeCurve>,
        interruptible: bool,
        l: &Locomotion,
    ) {
        match curve {
            Some(c) => {
                let a = self.alpha();
                let last = self.fading.len() - 1;
                for (i, e) in self.fading.iter_mut().enumerate() {
                    e.1 = if i == last { a } else { e.1 * (1.0 - a) };
                }
                self.fading.retain(|e| e.1 > 0.0);
                self.fading.push((to, 0.0));
                self.elapsed = 0.0;
                self.duration = duration;
                self.curve = c;
            }
            None => {
                self.fading = vec![(to, 1.0)];
                self.inertial = Some((0.0, duration));
            }
        }
        self.interruptible = interruptible;
        let mode = match to {
            Leaf::Jump | Leaf::Land => PlayMode::Clamp,
            _ => PlayMode::Loop,
        };
        self.clock = Playhead::new(mode);
        let _ = l;
    }

    /// One frame; returns whether a transition fired.
    fn step(&mut self, l: &Locomotion) -> bool {
        // Fade and clocks.
        self.elapsed += DT;
        if self.fading.len() > 1 && self.elapsed >= self.duration {
            let last = self.current();
            self.fading = vec![(last, 1.0)];
        }
        let clip = match self.current() {
            Leaf::Jump => JUMP,
            Leaf::Land => LAND,
            _ => IDLE,
        };
        let d = l.clips[clip].duration();
        let adv = self.clock.advance(DT, d).unwrap();
        let landed = self.current() == Leaf::Land && adv.from <= LANDED && LANDED < adv.to;
        let exit = self.current() == Leaf::Jump && adv.to / d >= 1.0;
        if let Some((t, _)) = &mut self.inertial {
            *t += DT;
        }
        let busy = self.fading.len() > 1 || self.inertial.is_some_and(|(t, d)| t < d);
        if !self.interruptible && busy {
            return false;
        }
        let smooth = Some(FadeCurve::SmoothStep);
        // Root: any-state jump first, then from the root state.
        if self.jump && !self.current().airborne() {
            self.jump = false;
            self.start(Leaf::Jump, 0.15, smooth, false, l);
            return true;
        }
        match self.current() {
            Leaf::Idle if self.speed > 0.2 => self.start(Leaf::Move, 0.25, smooth, false, l),
            Leaf::Move if self.speed < 0.2 => self.start(Leaf::Idle, 0.3, smooth, false, l),
            Leaf::Land if landed && self.speed > 0.2 => self.start(Leaf::Move, 0.3, None, false, l),
            Leaf::Land if landed => self.start(Leaf::Idle, 0.3, None, false, l),
            // The airborne machine.
            Leaf::Jump if exit => self.start(Leaf::Fall, 0.25, smooth, true, l),
            Leaf::Fall if self.grounded => {
                self.start(Leaf::Land, 0.1, Some(FadeCurve::EaseOut), false, l)
            }
            _ => return false,
        }
        true
    }
}

/// The graph side: an instance and its buffers.
struct Player {
    inst: GraphInstance,
    scratch: Vec<SoaTransform>,
    history: Vec<SoaTransform>,
    inertial: Vec<InertialBlock>,
    mask: Vec<f32x4>,
    out: Vec<SoaTransform>,
}

impl Player {
    fn new(l: &Locomotion) -> Self {
        let g = l.graph.view();
        let n = l.humanoid.skeleton.view().soa_count();
        Player {
            inst: GraphInstance::new(&g).unwrap(),
            scratch: vec![SoaTransform::IDENTITY; g.scratch_poses() * n],
            history: vec![SoaTransform::IDENTITY; 2 * n],
            inertial: vec![InertialBlock::default(); n],
            mask: vec![f32x4::ZERO; 2 * n],
            out: vec![SoaTransform::IDENTITY; n],
        }
    }

    fn step(&mut self, l: &Locomotion) -> sinew_core::graph::Report {
        let g = l.graph.view();
        let clips: Vec<_> = l.clips.iter().map(|c| c.view()).collect();
        let tracks = l.tracks();
        let skel = l.humanoid.skeleton.view();
        let ctx = GraphContext {
            graph: &g,
            clips: &clips,
            events: &tracks,
            rest: skel.rest_pose(),
        };
        let mut bufs = GraphBuffers {
            scratch: &mut self.scratch,
            history: &mut self.history,
            inertial: &mut self.inertial,
            mask: &mut self.mask,
        };
        let mut events = [GraphEvent::default(); 16];
        self.inst
            .update(DT, &ctx, &mut bufs, &mut self.out, &mut events)
            .unwrap()
    }
}

/// Frame → parameter changes of the scripted run.
fn script(frame: usize, r: &mut Reference, p: &mut Player, l: &Locomotion) {
    let g = l.graph.view();
    let mut set = |name: &str, v: f32| p.inst.set_named(&g, name, v).unwrap();
    match frame {
        30 => {
            set("speed", 1.5);
            r.speed = 1.5;
        }
        120 => {
            set("speed", 4.0);
            r.speed = 4.0;
        }
        180 => {
            set("jump", 1.0);
            set("grounded", 0.0);
            (r.jump, r.grounded) = (true, false);
        }
        // Jump ends at about frame 180 + 9 + 36; its fade to fall (0.25 s)
        // is under way when the ground comes back: fall → land interrupts it.
        230 => {
            set("grounded", 1.0);
            r.grounded = true;
        }
        400 => {
            set("speed", 0.0);
            r.speed = 0.0;
        }
        _ => {}
    }
}

#[test]
fn the_locomotion_graph_follows_the_reference_machine() {
    let l = Locomotion::new().unwrap();
    let mut r = Reference::new();
    let mut p = Player::new(&l);
    let mut switches = Vec::new();
    let mut interrupted = false;
    for frame in 0..560 {
        script(frame, &mut r, &mut p, &l);
        let fading_before = r.fading.len() > 1;
        let fired = r.step(&l);
        let report = p.step(&l);
        assert_eq!(report.transition.is_some(), fired, "frame {frame}");
        assert_eq!(report.path(), &r.current().path()[..], "frame {frame}");
        let got: Vec<(usize, f32)> = p.inst.active().collect();
        let want = r.weights();
        assert_eq!(got.len(), want.len(), "frame {frame}: {got:?} vs {want:?}");
        for ((s, w), (t, v)) in got.iter().zip(&want) {
            assert_eq!(s, t, "frame {frame}");
            assert!((w - v).abs() < 1e-6, "frame {frame}: {got:?} vs {want:?}");
        }
        if fired {
            switches.push((frame, r.current()));
            if r.current() == Leaf::Land && fading_before {
                interrupted = true;
            }
        }
    }
    let order: Vec<Leaf> = switches.iter().map(|s| s.1).collect();
    assert_eq!(
        order,
        [
            Leaf::Move,
            Leaf::Jump,
            Leaf::Fall,
            Leaf::Land,
            Leaf::Move,
            Leaf::Idle
        ],
        "{switches:?}"
    );
    assert!(interrupted, "fall → land interrupts the jump → fall fade");
    assert_eq!(switches[0].0, 30);
    assert_eq!(switches[1].0, 180);
}

#[test]
fn poses_are_the_blend_trees_evaluated_by_hand() {
    let l = Locomotion::new().unwrap();
    let mut p = Player::new(&l);
    let skel = l.humanoid.skeleton.view();
    let rest = skel.rest_pose();
    let n = skel.soa_count();
    let clips: Vec<_> = l.clips.iter().map(|c| c.view()).collect();
    let sample = |c: usize, t: f32| {
        let mut out = vec![SoaTransform::IDENTITY; n];
        ClipSource::sample(&clips[c], t, TimeMode::Clamp, rest, &mut out).unwrap();
        out
    };
    let mut idle = Playhead::new(PlayMode::Loop);
    let samples = [WALK, JOG, 3].map(|c| (c, clips[c].duration()));
    let positions = [1.4, 2.6, 4.0];
    let space_samples: Vec<Sample1D<'_>> = samples
        .iter()
        .zip(positions)
        .map(|(&(clip, duration), position)| Sample1D {
            position,
            clip,
            duration,
            markers: &[],
        })
        .collect();
    let space = BlendSpace1D::<8>::new(&space_samples).unwrap();
    let mut phase = PhaseSync::default();
    let g = l.graph.view();
    let mut checked = 0;
    for frame in 0..50 {
        if frame == 30 {
            p.inst.set_named(&g, "speed", 1.5).unwrap();
        }
        p.step(&l);
        idle.advance(DT, clips[IDLE].duration()).unwrap();
        let idle_pose = sample(IDLE, idle.time());
        let want = if frame < 30 {
            idle_pose
        } else {
            // Move starts at phase 0 the frame it fires; the fade is 0.25 s
            // of smooth-step.
            let w = space.weights(1.5).unwrap();
            if frame > 30 {
                phase.advance(&space, &w, DT).unwrap();
            }
            let mut moving = vec![SoaTransform::IDENTITY; n];
            let mut scratch = vec![SoaTransform::IDENTITY; 3 * n];
            sample_blend(
                &clips,
                &w,
                |s| phase.clip_time(&space, s),
                TimeMode::Loop,
                rest,
                &mut scratch,
                &mut moving,
            )
            .unwrap();
            let a = FadeCurve::SmoothStep.alpha((frame - 30) as f32 * DT / 0.25);
            let layers = [
                BlendLayer::new(&idle_pose, 1.0 - a),
                BlendLayer::new(&moving, a),
            ];
            let mut out = vec![SoaTransform::IDENTITY; n];
            blend::blend(&BlendJob::new(&layers, &[], rest), &mut out).unwrap();
            out
        };
        let mut err = 0.0f32;
        for (x, y) in p.out.iter().zip(&want) {
            for k in 0..4 {
                let (a, b) = (x.get(k), y.get(k));
                err = err.max((a.translation - b.translation).length());
                err = err.max(1.0 - a.rotation.dot(b.rotation).abs());
            }
        }
        assert!(err < 1e-5, "frame {frame}: {err}");
        checked += 1;
    }
    assert_eq!(checked, 50);
}

/// The JSON example of docs/playback.md builds (the docs cannot drift from
/// the schema).
#[test]
fn the_documented_example_builds() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/playback.md"))
        .expect("docs/playback.md");
    let start = doc.find("```json\n").expect("a json block") + "```json\n".len();
    let json = &doc[start..start + doc[start..].find("```").expect("its end")];
    let g = sinew_std::graph::build_graph(json, &["idle", "walk", "run"])
        .unwrap_or_else(|e| panic!("{e}"));
    let v = g.view();
    assert_eq!(
        (v.param_count(), v.state_count(), v.transition_count()),
        (2, 2, 2)
    );
}
