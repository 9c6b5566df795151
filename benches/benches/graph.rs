//! Animation-graph bench: one character's `GraphInstance::update` on the
//! built-in locomotion graph over the procedural humanoid (70 joints, 18
//! SoA blocks), 60 Hz steps, with event tracks. Cases, each from a copy of
//! an instance captured in that situation (the copy is part of the figure):
//!
//! - `move`: the walk/jog/run blend space alone at `speed` 2 (two clips
//!   sampled and blended, phase-synced);
//! - `idle_to_move`: half-way through the 0.25 s cross-fade from idle to
//!   move (three clips sampled, two leaves blended);
//! - `land_to_move`: the frame after the inertialized switch from land to
//!   move (the move leaf plus the decaying offset added to every joint).
//!
//! ```text
//! cargo bench -p sinew-benches --bench graph -- --warm-up-time 1 --measurement-time 3
//! ```

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use sinew_benches::config;
use sinew_core::clip::RawClip;
use sinew_core::graph::{Graph, GraphBuffers, GraphContext, GraphEvent, GraphInstance};
use sinew_core::mix::InertialBlock;
use sinew_core::track::event::EventTrack;
use sinew_core::{f32x4, SoaTransform};
use sinew_std::graph::Locomotion;

const DT: f32 = 1.0 / 60.0;

struct Buffers {
    scratch: Vec<SoaTransform>,
    history: Vec<SoaTransform>,
    inertial: Vec<InertialBlock>,
    mask: Vec<f32x4>,
    out: Vec<SoaTransform>,
    events: Vec<GraphEvent>,
}

impl Buffers {
    fn new(g: &Graph<'_>, n: usize) -> Self {
        Buffers {
            scratch: vec![SoaTransform::IDENTITY; g.scratch_poses() * n],
            history: vec![SoaTransform::IDENTITY; 2 * n],
            inertial: vec![InertialBlock::default(); n],
            mask: vec![f32x4::ZERO; 2 * n],
            out: vec![SoaTransform::IDENTITY; n],
            events: vec![GraphEvent::default(); 16],
        }
    }

    fn step(&mut self, inst: &mut GraphInstance, ctx: &GraphContext<'_, RawClip<'_>>) {
        let mut bufs = GraphBuffers {
            scratch: &mut self.scratch,
            history: &mut self.history,
            inertial: &mut self.inertial,
            mask: &mut self.mask,
        };
        let r = inst.update(DT, ctx, &mut bufs, &mut self.out, &mut self.events);
        black_box(r.expect("the example graph plays"));
    }
}

fn graph(c: &mut Criterion) {
    let l = Locomotion::new().expect("the example builds");
    let g = l.graph.view();
    let skel = l.humanoid.skeleton.view();
    let clips: Vec<RawClip<'_>> = l.clips.iter().map(|c| c.view()).collect();
    let tracks: Vec<Option<EventTrack<'_>>> = l.tracks();
    let ctx = GraphContext {
        graph: &g,
        clips: &clips,
        events: &tracks,
        rest: skel.rest_pose(),
    };
    let mut b = Buffers::new(&g, skel.soa_count());
    let mut inst = GraphInstance::new(&g).expect("instance");
    // Capture the three situations along a scripted run.
    let set = |i: &mut GraphInstance, name: &str, v: f32| {
        i.set_named(&g, name, v).expect("parameter");
    };
    for _ in 0..30 {
        b.step(&mut inst, &ctx);
    }
    set(&mut inst, "speed", 2.0);
    for _ in 0..8 {
        b.step(&mut inst, &ctx);
    }
    let fading = inst;
    for _ in 0..60 {
        b.step(&mut inst, &ctx);
    }
    let moving = inst;
    set(&mut inst, "jump", 1.0);
    set(&mut inst, "grounded", 0.0);
    let mut landing = None;
    for f in 0..200 {
        if f == 60 {
            set(&mut inst, "grounded", 1.0);
        }
        b.step(&mut inst, &ctx);
        if inst.is_inertializing() {
            landing = Some(inst);
            break;
        }
    }
    let landing = landing.expect("the jump lands");
    let history = b.history.clone();
    let inertial = b.inertial.clone();

    let mut group = c.benchmark_group("graph");
    for (name, start) in [
        ("move", moving),
        ("idle_to_move", fading),
        ("land_to_move", landing),
    ] {
        group.bench_function(name, |bench| {
            bench.iter(|| {
                let mut i = black_box(start);
                b.step(&mut i, &ctx);
                if name == "land_to_move" {
                    // Keep the recorded switch's state for the next round.
                    b.history.copy_from_slice(&history);
                    b.inertial.copy_from_slice(&inertial);
                }
                i
            });
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = graph
}
criterion_main!(benches);
