//! Keyframe curve benches: one sample of one curve, by binary search
//! (`random`: times drawn anywhere on the curve) and with a caller-held
//! cursor (`cursor`: playback at 60 Hz over keys about 25 per second), for
//! each key type and interpolation; then many float curves at one time in
//! `f32x4` lanes against their scalar twin. Throughput is in samples (one
//! track at one time), so criterion's "thrpt" line inverts to ns per track.
//!
//! Data: 256 keys at uneven times (0.01–0.07 s apart), values and tangents
//! from a fixed-seed generator; rotations are unit quaternions a few
//! degrees apart. The lane groups sample 64 curves (a quarter each of
//! step, linear, CUBICSPLINE and Catmull-Rom) for 64 frames.
//!
//! ```text
//! cargo bench -p sinew-benches --bench curve -- --noplot
//! ```

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use sinew_benches::config;
use sinew_core::track::curve::{reference, sample_many, Cursor, Curve, CurveValue, Interpolation};
use sinew_core::{Quat, Vec3};

const KEYS: usize = 256;
const SAMPLES: usize = 1024;
const TRACKS: usize = 64;
const FRAMES: usize = 64;

/// A small xorshift generator: the same data every run.
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

fn key_times(rng: &mut Rng) -> Vec<f32> {
    let mut t = 0.0;
    (0..KEYS)
        .map(|_| {
            let now = t;
            t += rng.range(0.01, 0.07);
            now
        })
        .collect()
}

/// `count` values per key from `make`.
fn values<V>(rng: &mut Rng, count: usize, mut make: impl FnMut(&mut Rng) -> V) -> Vec<V> {
    (0..count).map(|_| make(rng)).collect()
}

fn scalar(rng: &mut Rng) -> f32 {
    rng.range(-1.0, 1.0)
}

fn vec3(rng: &mut Rng) -> [f32; 3] {
    [scalar(rng), scalar(rng), scalar(rng)]
}

/// A random walk of rotations, a few degrees per key, some stored on the
/// far hemisphere (the samplers align them).
fn rotations(rng: &mut Rng, count: usize) -> Vec<Quat> {
    let mut q = Quat::IDENTITY;
    (0..count)
        .map(|_| {
            let axis = Vec3::new(scalar(rng), scalar(rng), scalar(rng))
                .try_normalize()
                .unwrap_or(Vec3::X);
            q = (q * Quat::from_axis_angle(axis, rng.range(0.02, 0.1))).normalize();
            if rng.next() < 0.2 {
                -q
            } else {
                q
            }
        })
        .collect()
}

/// Sample times: `random` anywhere on the curve, or playback at 60 Hz.
fn sample_times(rng: &mut Rng, times: &[f32], playback: bool) -> Vec<f32> {
    let end = times[times.len() - 1];
    (0..SAMPLES)
        .map(|i| {
            if playback {
                (i as f32 / 60.0) % end
            } else {
                rng.range(-0.1, end + 0.1)
            }
        })
        .collect()
}

fn bench_one<V: CurveValue>(
    c: &mut Criterion,
    name: &str,
    curve: &Curve<'_, V>,
    random: &[f32],
    playback: &[f32],
) {
    let mut group = c.benchmark_group(format!("curve/{name}"));
    group.throughput(Throughput::Elements(SAMPLES as u64));
    group.bench_function("random", |b| {
        b.iter(|| {
            for &t in random {
                black_box(curve.sample(black_box(t)));
            }
        })
    });
    group.bench_function("cursor", |b| {
        b.iter(|| {
            let mut k = Cursor::new();
            for &t in playback {
                black_box(curve.sample_with(&mut k, black_box(t)));
            }
        })
    });
    group.finish();
}

fn curves(c: &mut Criterion) {
    let mut rng = Rng(0x2545_f491);
    let times = key_times(&mut rng);
    let random = sample_times(&mut rng, &times, false);
    let playback = sample_times(&mut rng, &times, true);

    let f1 = values(&mut rng, KEYS, scalar);
    let f3 = values(&mut rng, 3 * KEYS, scalar);
    let v3 = values(&mut rng, 3 * KEYS, vec3);
    let q1 = rotations(&mut rng, KEYS);
    let q3 = rotations(&mut rng, 3 * KEYS);

    let f32_cases = [
        ("f32_step", &f1, Interpolation::Step),
        ("f32_linear", &f1, Interpolation::Linear),
        ("f32_cubicspline", &f3, Interpolation::CubicSpline),
        ("f32_catmull_rom", &f1, Interpolation::CATMULL_ROM),
    ];
    for (name, v, mode) in f32_cases {
        let curve = Curve::new(&times, v, mode).expect("valid curve");
        bench_one(c, name, &curve, &random, &playback);
    }
    let vec3_curve = Curve::new(&times, &v3, Interpolation::CubicSpline).expect("valid curve");
    bench_one(c, "vec3_cubicspline", &vec3_curve, &random, &playback);
    let quat_cases = [
        ("quat_nlerp", &q1, Interpolation::Linear),
        ("quat_slerp", &q1, Interpolation::Slerp),
        ("quat_cubicspline", &q3, Interpolation::CubicSpline),
        ("quat_squad", &q1, Interpolation::CATMULL_ROM),
    ];
    for (name, v, mode) in quat_cases {
        let curve = Curve::new(&times, v, mode).expect("valid curve");
        bench_one(c, name, &curve, &random, &playback);
    }
}

fn lanes(c: &mut Criterion) {
    let mut rng = Rng(0x9e37_79b9);
    let times: Vec<Vec<f32>> = (0..TRACKS).map(|_| key_times(&mut rng)).collect();
    let modes = [
        Interpolation::Step,
        Interpolation::Linear,
        Interpolation::CubicSpline,
        Interpolation::CATMULL_ROM,
    ];
    let vals: Vec<Vec<f32>> = (0..TRACKS)
        .map(|i| {
            let per = if modes[i % 4] == Interpolation::CubicSpline {
                3
            } else {
                1
            };
            values(&mut rng, per * KEYS, scalar)
        })
        .collect();
    let curves: Vec<Curve<'_, f32>> = (0..TRACKS)
        .map(|i| Curve::new(&times[i], &vals[i], modes[i % 4]).expect("valid curve"))
        .collect();
    let frames: Vec<f32> = (0..FRAMES).map(|f| 1.0 + f as f32 / 60.0).collect();

    let mut group = c.benchmark_group("curve/many_f32");
    group.throughput(Throughput::Elements((TRACKS * FRAMES) as u64));
    let mut out = vec![0.0f32; TRACKS];
    group.bench_function("lanes", |b| {
        b.iter(|| {
            let mut cursors = [Cursor::new(); TRACKS];
            for &t in &frames {
                sample_many(&curves, &mut cursors, black_box(t), &mut out).expect("lengths");
                black_box(&out);
            }
        })
    });
    group.bench_function("scalar", |b| {
        b.iter(|| {
            let mut cursors = [Cursor::new(); TRACKS];
            for &t in &frames {
                reference::sample_many(&curves, &mut cursors, black_box(t), &mut out)
                    .expect("lengths");
                black_box(&out);
            }
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = curves, lanes
}
criterion_main!(benches);
