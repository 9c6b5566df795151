//! Event-track triggering benches (single thread, fixed seed). One group,
//! `triggering`, per track size (16 and 256 events over a 2 s clip, one in
//! four a range):
//!
//! - `forward`: one frame of play (1/60 s) from 64 start times in turn,
//!   unwrapped time, looping;
//! - `forward-wrapped`: the same frames as clip time and loop count
//!   ([`EventTrack::trigger_wrapped`]);
//! - `loop`: one frame that crosses the loop point;
//! - `clamp`: one frame of clamped play.
//!
//! Each iteration is one call into a 32-edge buffer.
//!
//! ```text
//! cargo bench -p sinew-benches --bench events -- --noplot
//! ```

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use sinew_benches::config;
use sinew_core::clip::TimeMode;
use sinew_core::track::event::{sort_range_ends, Edge, Event, EventTrack};

const DURATION: f32 = 2.0;
const DT: f32 = 1.0 / 60.0;

/// A small LCG: fixed, dependency-free numbers in `0..1`.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// `n` events sorted by start, one in four a range of up to 0.3 s.
fn events(n: usize, seed: u64) -> (Vec<Event>, Vec<u32>) {
    let mut rng = Lcg(seed);
    let mut ev: Vec<Event> = (0..n)
        .map(|i| {
            let s = rng.next() * DURATION;
            let len = if i % 4 == 0 { rng.next() * 0.3 } else { 0.0 };
            Event::range(s, (s + len).min(DURATION), i as u32)
        })
        .collect();
    ev.sort_by(|a, b| a.start.total_cmp(&b.start));
    let mut ranges = vec![0u32; n];
    let k = sort_range_ends(&ev, &mut ranges).unwrap();
    ranges.truncate(k);
    (ev, ranges)
}

fn bench_triggering(c: &mut Criterion) {
    let mut group = c.benchmark_group("triggering");
    let mut rng = Lcg(7);
    let starts: Vec<f32> = (0..64).map(|_| rng.next() * (DURATION - DT)).collect();
    let mut out = [Edge::default(); 32];
    for n in [16usize, 256] {
        let (ev, ranges) = events(n, 2024 + n as u64);
        let track = EventTrack::new(DURATION, &ev, b"", &ranges).unwrap();
        let id = |v: &str| BenchmarkId::new(v, n);
        let mut i = 0usize;
        group.bench_function(id("forward"), |b| {
            b.iter(|| {
                i = (i + 1) & 63;
                let t = starts[i] + 10.0 * DURATION;
                black_box(track.trigger(black_box(t), black_box(t + DT), TimeMode::Loop, &mut out))
            })
        });
        group.bench_function(id("forward-wrapped"), |b| {
            b.iter(|| {
                i = (i + 1) & 63;
                let t = starts[i];
                black_box(track.trigger_wrapped(black_box(t), black_box(t + DT), 0, &mut out))
            })
        });
        group.bench_function(id("loop"), |b| {
            b.iter(|| {
                black_box(track.trigger(
                    black_box(DURATION - 0.5 * DT),
                    black_box(DURATION + 0.5 * DT),
                    TimeMode::Loop,
                    &mut out,
                ))
            })
        });
        group.bench_function(id("clamp"), |b| {
            b.iter(|| {
                i = (i + 1) & 63;
                let t = starts[i];
                black_box(track.trigger(black_box(t), black_box(t + DT), TimeMode::Clamp, &mut out))
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_triggering
}
criterion_main!(benches);
