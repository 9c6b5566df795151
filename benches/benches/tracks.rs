//! Track set benches (`sinew_core::track::store`): 64 tracks of 30 keys
//! each, sampled at 64 frames spread over their one-second span, per
//! kind (float, vec3, rotation) and encoding (raw, quantized):
//!
//! - `random`: each track by binary search ([`TypedTrack::sample`]), as
//!   ozz's `TrackSamplingJob` finds its keys;
//! - `cursor`: each track with its caller-held cursor, frames in order;
//! - `lanes` / `scalar` (float and vec3): every track at once by
//!   [`TrackSet::sample_all`] (component-wise channels four at a time in
//!   `f32x4` lanes) and by its scalar twin.
//!
//! Throughput is in track samples (one track at one time; a vec3 or a
//! rotation counts once), so criterion's "thrpt" line inverts to ns per
//! track sample.
//!
//! Data (the ozz harness generates the same numbers): a xorshift32 with seed
//! `0x2545_f491`, for each track 29 gaps in `0.5..1.5` normalised so the
//! keys run from 0 to 1 s, values in `−1..1` (rotations: four components in
//! `−1..1`, normalised), linear interpolation; frame `f` is at
//! `(f + 0.5)/64` s.
//!
//! ```text
//! cargo bench -p sinew-benches --bench tracks -- --warm-up-time 1 --measurement-time 3
//! ```

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use sinew_benches::config;
use sinew_core::track::curve::{Cursor, Interpolation};
use sinew_core::track::store::{
    reference, track_set_size, write_track_set, Encoding, TrackDesc, TrackKind, TrackSet,
    TrackValue,
};
use sinew_core::Quat;

const TRACKS: usize = 64;
const KEYS: usize = 30;
const FRAMES: usize = 64;

/// xorshift32: the same data every run, and in the ozz harness.
struct Rng(u32);

impl Rng {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 17;
        self.0 ^= self.0 << 5;
        (self.0 >> 8) as f32 / (1u32 << 24) as f32
    }
    fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.next()
    }
}

/// Key times and flattened values of `TRACKS` tracks of `kind`.
fn data(kind: TrackKind) -> Vec<(Vec<f32>, Vec<f32>)> {
    let mut rng = Rng(0x2545_f491);
    (0..TRACKS)
        .map(|_| {
            let mut cum = [0.0f32; KEYS];
            for k in 1..KEYS {
                cum[k] = cum[k - 1] + rng.range(0.5, 1.5);
            }
            let total = cum[KEYS - 1];
            let times: Vec<f32> = cum.iter().map(|c| c / total).collect();
            let mut values = Vec::new();
            for _ in 0..KEYS {
                match kind {
                    TrackKind::Quat => {
                        let q: [f32; 4] = std::array::from_fn(|_| rng.range(-1.0, 1.0));
                        let l = q.iter().map(|x| x * x).sum::<f32>().sqrt();
                        values.extend(q.iter().map(|x| x / l));
                    }
                    _ => {
                        for _ in 0..kind.components() {
                            values.push(rng.range(-1.0, 1.0));
                        }
                    }
                }
            }
            (times, values)
        })
        .collect()
}

/// A 16-byte aligned container of the tracks.
fn container(kind: TrackKind, encoding: Encoding) -> Vec<u128> {
    let keys = data(kind);
    let descs: Vec<TrackDesc<'_>> = keys
        .iter()
        .map(|(times, values)| TrackDesc {
            name: "",
            target: None,
            kind,
            interpolation: Interpolation::Linear,
            times,
            values,
            encoding,
        })
        .collect();
    let size = track_set_size(&descs).expect("valid tracks");
    let mut buf = vec![0u128; size / 16];
    write_track_set(&descs, bytemuck::cast_slice_mut(&mut buf)).expect("written");
    buf
}

fn frames() -> Vec<f32> {
    (0..FRAMES)
        .map(|f| (f as f32 + 0.5) / FRAMES as f32)
        .collect()
}

fn one_by_one<V: TrackValue>(c: &mut Criterion, name: &str, kind: TrackKind, lanes: bool) {
    let frames = frames();
    let mut group = c.benchmark_group(format!("tracks/{name}"));
    group.throughput(Throughput::Elements((TRACKS * FRAMES) as u64));
    for (enc, label) in [(Encoding::Raw, "raw"), (Encoding::Quantized, "quantized")] {
        let buf = container(kind, enc);
        let set = TrackSet::from_bytes(bytemuck::cast_slice(&buf)).expect("valid");
        let typed: Vec<_> = (0..set.len())
            .map(|i| set.track(i).unwrap().typed::<V>().unwrap())
            .collect();
        group.bench_function(format!("{label}/random"), |b| {
            b.iter(|| {
                for &t in &frames {
                    for tr in &typed {
                        black_box(tr.sample(black_box(t)));
                    }
                }
            })
        });
        group.bench_function(format!("{label}/cursor"), |b| {
            b.iter(|| {
                let mut cursors = [Cursor::new(); TRACKS];
                for &t in &frames {
                    for (tr, k) in typed.iter().zip(&mut cursors) {
                        black_box(tr.sample_with(k, black_box(t)));
                    }
                }
            })
        });
        if lanes {
            let mut out = vec![0.0f32; set.component_count()];
            group.bench_function(format!("{label}/lanes"), |b| {
                b.iter(|| {
                    let mut cursors = [Cursor::new(); TRACKS];
                    for &t in &frames {
                        set.sample_all(black_box(t), &mut cursors, &mut out)
                            .expect("lengths");
                        black_box(&out);
                    }
                })
            });
            group.bench_function(format!("{label}/scalar"), |b| {
                b.iter(|| {
                    let mut cursors = [Cursor::new(); TRACKS];
                    for &t in &frames {
                        reference::sample_all(&set, black_box(t), &mut cursors, &mut out)
                            .expect("lengths");
                        black_box(&out);
                    }
                })
            });
        }
    }
    group.finish();
}

fn tracks(c: &mut Criterion) {
    one_by_one::<f32>(c, "float", TrackKind::Float, true);
    one_by_one::<[f32; 3]>(c, "vec3", TrackKind::Vec3, true);
    one_by_one::<Quat>(c, "quat", TrackKind::Quat, false);
}

criterion_group! {
    name = benches;
    config = config();
    targets = tracks
}
criterion_main!(benches);
