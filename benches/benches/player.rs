//! Per-character player benches (single thread): one [`Player::update`] of
//! the procedural humanoid (70 joints, 18 SoA blocks) on its compressed
//! walk, jog and run (default compression options), 1/60 s per update,
//! with an event track per clip (three events) in an 8-edge buffer.
//!
//! Group `player`:
//! - `steady`: one clip looping alone (one sample, no blend);
//! - `crossfade`: two clips mid-way through a cross-fade (two samples and
//!   a two-layer blend; the fade is so long it never ends);
//! - `switch`: an inertialized switch every update (the mix at the switch
//!   instant, one frame earlier and now, plus the offsets' set-up);
//! - `steady-root`, `crossfade-root`: the same with root motion of joint 0
//!   (each source decodes the root's bracketing frames);
//! - `steady-raw`: `steady` on the raw clips, for scale.
//!
//! ```text
//! cargo bench -p sinew-benches --bench player -- --warm-up-time 1 --measurement-time 3
//! ```

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use sinew_core::clip::{ClipSource, RawClip};
use sinew_core::compressed::CompressedClip;
use sinew_core::mix::InertialBlock;
use sinew_core::player::{
    Blend, FadeCurve, PlayMode, Player, PlayerBuffers, PlayerClips, PlayerEdge, Transition,
};
use sinew_core::track::event::{sort_range_ends, Event, EventTrack};
use sinew_core::SoaTransform;
use sinew_std::compress::{compress, CompressOptions};
use sinew_std::Humanoid;

const DT: f32 = 1.0 / 60.0;
const K: usize = 4;

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(30)
}

/// The caller-owned memory of one character.
struct Memory {
    sources: Vec<SoaTransform>,
    history: Vec<SoaTransform>,
    inertial: Vec<InertialBlock>,
    scratch: Vec<SoaTransform>,
    out: Vec<SoaTransform>,
    edges: Vec<PlayerEdge>,
}

impl Memory {
    fn new(n: usize) -> Memory {
        let s = Player::<K>::buffer_sizes(n);
        Memory {
            sources: vec![SoaTransform::IDENTITY; s.sources],
            history: vec![SoaTransform::IDENTITY; s.history],
            inertial: vec![InertialBlock::default(); s.inertial],
            scratch: vec![SoaTransform::IDENTITY; s.scratch],
            out: vec![SoaTransform::IDENTITY; n],
            edges: vec![PlayerEdge::default(); 8],
        }
    }

    fn update<C: ClipSource>(
        &mut self,
        player: &mut Player<K>,
        assets: &PlayerClips<'_, C>,
    ) -> f32 {
        let mut buffers = PlayerBuffers {
            sources: &mut self.sources,
            history: &mut self.history,
            inertial: &mut self.inertial,
            scratch: &mut self.scratch,
        };
        let r = player
            .update(
                black_box(DT),
                assets,
                &mut buffers,
                &mut self.out,
                &mut self.edges,
            )
            .expect("the player updates");
        self.out[3].rotation.w.as_array()[1] + r.root_motion.translation.z
    }
}

/// What a bench plays.
struct Case {
    name: &'static str,
    /// Root motion of joint 0.
    root: bool,
    /// Two clips mid-way through a cross-fade.
    fading: bool,
    /// An inertialized switch before every update (part of the figure).
    switch: bool,
}

/// One update per iteration.
fn bench<C: ClipSource>(c: &mut Criterion, case: &Case, assets: &PlayerClips<'_, C>) {
    let (clips, rest) = (assets.clips, assets.rest);
    let assets = PlayerClips {
        root: case.root.then_some(0),
        ..*assets
    };
    let Case {
        name,
        fading,
        switch,
        ..
    } = *case;
    let mut player = Player::<K>::new(clips, 0, PlayMode::Loop).expect("a player");
    let mut memory = Memory::new(rest.len());
    for _ in 0..3 {
        memory.update(&mut player, &assets);
    }
    if fading {
        let endless = Transition {
            duration: 1.0e9,
            blend: Blend::Crossfade(FadeCurve::Linear),
        };
        player
            .play(clips, 1, PlayMode::Loop, &endless)
            .expect("a fade");
        memory.update(&mut player, &assets);
        assert!(player.is_fading());
    }
    let inertialize = Transition::inertialize(0.3);
    let mut next = 1;
    c.benchmark_group("player").bench_function(name, |b| {
        b.iter(|| {
            if switch {
                player
                    .play(clips, next, PlayMode::Loop, &inertialize)
                    .expect("a switch");
                next = (next + 1) % clips.len();
            }
            black_box(memory.update(&mut player, &assets))
        });
    });
}

fn bench_player(c: &mut Criterion) {
    let h = Humanoid::default_rate();
    let skel = h.skeleton.view();
    let rest = skel.rest_pose();
    let raw: Vec<RawClip<'_>> = h.clips.iter().map(|c| c.view()).collect();
    let owned: Vec<_> = raw
        .iter()
        .map(|r| {
            compress(&skel, r, &CompressOptions::default())
                .expect("the humanoid's clips compress")
                .0
        })
        .collect();
    let packed: Vec<CompressedClip<'_>> = owned.iter().map(|c| c.view()).collect();
    let events: Vec<Vec<Event>> = raw
        .iter()
        .map(|c| {
            let d = c.duration();
            vec![
                Event::instant(0.0, 1),
                Event::range(0.2 * d, 0.5 * d, 2),
                Event::instant(0.75 * d, 3),
            ]
        })
        .collect();
    let ranges: Vec<Vec<u32>> = events
        .iter()
        .map(|e| {
            let mut r = vec![0; 1];
            sort_range_ends(e, &mut r).expect("one range");
            r
        })
        .collect();
    let tracks: Vec<Option<EventTrack<'_>>> = (0..raw.len())
        .map(|i| {
            Some(EventTrack::new(raw[i].duration(), &events[i], &[], &ranges[i]).expect("a track"))
        })
        .collect();
    let case = |name, root, fading, switch| Case {
        name,
        root,
        fading,
        switch,
    };
    let compressed = PlayerClips {
        clips: &packed[..],
        events: &tracks,
        rest,
        root: None,
    };
    bench(c, &case("steady", false, false, false), &compressed);
    bench(c, &case("crossfade", false, true, false), &compressed);
    bench(c, &case("switch", false, false, true), &compressed);
    bench(c, &case("steady-root", true, false, false), &compressed);
    bench(c, &case("crossfade-root", true, true, false), &compressed);
    let raw_clips = PlayerClips {
        clips: &raw[..],
        events: &tracks,
        rest,
        root: None,
    };
    bench(c, &case("steady-raw", false, false, false), &raw_clips);
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_player
}
criterion_main!(benches);
