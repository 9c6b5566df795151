//! Compressed clips: whole-pose decompression (seek + interpolate) warm and
//! cache-cold, sequential vs random times, side by side with the raw clip,
//! and compression throughput.
//!
//! Uses the CMU clip `daz-friendly/13_10.bvh` (43 file joints plus 14 End
//! Site joints = 57, 2397 frames) from `../shared/data` when present, else the
//! procedural humanoid's walk; the sampling group takes it twice, as
//! imported by default (`cmu-13_10`) and without its End Sites
//! (`cmu-13_10-no-end-sites`, the 43 joints other runtimes are measured
//! on). Throughput of the sampling groups is in joints, so criterion's
//! "thrpt" reads as joints per second. `compressed-seq` and
//! `compressed-seq-cached` step half a key frame per call, without and
//! with a playback cache.
//!
//! ```text
//! cargo bench -p sinew-benches --bench compress -- --noplot
//! ```

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use sinew_benches::config;
use sinew_benches::random_times;
use sinew_core::clip::{RawClip, TimeMode};
use sinew_core::compressed::{CompressedClip, PlaybackCache};
use sinew_core::SoaTransform;
use sinew_std::compress::{compress, CompressOptions, OwnedCompressedClip};
use sinew_std::import::load::{load_files, LoadOptions};
use sinew_std::{Asset, Humanoid, OwnedClip};

/// The bench clip: CMU `file` when the data is there (with its End Sites as
/// joints, or skipped), else the humanoid walk.
fn asset(file: &str, end_sites: bool) -> (String, Asset) {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data/bvh/cmu/daz-friendly")
        .join(file);
    if p.is_file() {
        let opts = LoadOptions {
            bvh_end_sites: end_sites,
            ..LoadOptions::default()
        };
        if let Ok(mut a) = load_files(&[p], &opts) {
            if let Some(a) = a.pop() {
                let suffix = if end_sites { "" } else { "-no-end-sites" };
                return (format!("cmu-{}{suffix}", file.trim_end_matches(".bvh")), a);
            }
        }
    }
    eprintln!("compress bench: {file} not found, using the procedural humanoid");
    (
        "humanoid".to_string(),
        Asset::from(Humanoid::default_rate()),
    )
}

/// Number of distinct copies in the cold-cache variants.
const COLD_COPIES: usize = 64;

fn bench_sample(c: &mut Criterion) {
    let (label, a) = asset("13_10.bvh", true);
    bench_sample_asset(c, &label, &a);
    let (label, a) = asset("13_10.bvh", false);
    if label != "humanoid" {
        bench_sample_asset(c, &label, &a);
    }
}

/// The `sample_compressed` rows of one clip (`label/...`).
fn bench_sample_asset(c: &mut Criterion, label: &str, a: &Asset) {
    let skel = a.skeleton.view();
    let rest = skel.rest_pose();
    let raw = a.clips[0].view();
    let (comp, _) = compress(&skel, &raw, &CompressOptions::default()).expect("compresses");
    let cv = comp.view();
    let n = skel.joint_count();
    let d = raw.duration();
    let dt = 1.0 / raw.sample_rate();
    let times = random_times(4096, d, 11);
    let mut out = vec![SoaTransform::IDENTITY; skel.soa_count()];

    let mut group = c.benchmark_group("sample_compressed");
    group.throughput(Throughput::Elements(n as u64));
    group.bench_function(format!("{label}/compressed-seq"), |b| {
        let mut t = 0.0f32;
        b.iter(|| {
            t = (t + dt * 0.5) % d;
            cv.sample_with_rest(black_box(t), TimeMode::Loop, rest, black_box(&mut out))
        })
    });
    // The same walk through a playback cache: each key frame decoded once,
    // two per pass of the decoder.
    let mut cache_buf = vec![SoaTransform::IDENTITY; cv.cache_blocks()];
    group.bench_function(format!("{label}/compressed-seq-cached"), |b| {
        let mut cache = PlaybackCache::new(&mut cache_buf);
        let mut t = 0.0f32;
        b.iter(|| {
            t = (t + dt * 0.5) % d;
            cv.sample_cached(
                black_box(t),
                TimeMode::Loop,
                rest,
                &mut cache,
                black_box(&mut out),
            )
        })
    });
    group.bench_function(format!("{label}/compressed-random"), |b| {
        let mut i = 0usize;
        b.iter(|| {
            i = (i + 1) % times.len();
            cv.sample_with_rest(
                black_box(times[i]),
                TimeMode::Loop,
                rest,
                black_box(&mut out),
            )
        })
    });
    group.bench_function(format!("{label}/raw-seq"), |b| {
        let mut t = 0.0f32;
        b.iter(|| {
            t = (t + dt * 0.5) % d;
            raw.sample(black_box(t), TimeMode::Loop, black_box(&mut out))
        })
    });
    group.bench_function(format!("{label}/raw-random"), |b| {
        let mut i = 0usize;
        b.iter(|| {
            i = (i + 1) % times.len();
            raw.sample(black_box(times[i]), TimeMode::Loop, black_box(&mut out))
        })
    });
    // Cold cache: random times in one of 64 copies of the compressed clip
    // (64 × its size, well past L2), and in 8 copies of the raw clip.
    let copies: Vec<OwnedCompressedClip> = (0..COLD_COPIES).map(|_| comp.clone()).collect();
    let views: Vec<CompressedClip<'_>> = copies.iter().map(OwnedCompressedClip::view).collect();
    group.bench_function(format!("{label}/compressed-cold"), |b| {
        let mut i = 0usize;
        b.iter(|| {
            i = (i + 1) % times.len();
            let clip = &views[(i * 37) % COLD_COPIES];
            clip.sample_with_rest(
                black_box(times[i]),
                TimeMode::Loop,
                rest,
                black_box(&mut out),
            )
        })
    });
    let raw_copies: Vec<OwnedClip> = (0..8).map(|_| a.clips[0].clone()).collect();
    let raw_views: Vec<RawClip<'_>> = raw_copies.iter().map(OwnedClip::view).collect();
    group.bench_function(format!("{label}/raw-cold"), |b| {
        let mut i = 0usize;
        b.iter(|| {
            i = (i + 1) % times.len();
            let clip = &raw_views[(i * 5) % raw_views.len()];
            clip.sample(black_box(times[i]), TimeMode::Loop, black_box(&mut out))
        })
    });
    group.finish();
}

/// The procedural humanoid's walk (70 joints, 34 frames: fits in L1), so the
/// compressed figure can be set against the raw `sample/humanoid` rows of the
/// kernels bench.
fn bench_sample_humanoid(c: &mut Criterion) {
    let h = Humanoid::default_rate();
    let skel = h.skeleton.view();
    let rest = skel.rest_pose();
    let raw = h.clips[0].view();
    let (comp, _) = compress(&skel, &raw, &CompressOptions::default()).expect("compresses");
    let cv = comp.view();
    let d = raw.duration();
    let dt = 1.0 / 60.0;
    let times = random_times(4096, d, 9);
    let mut out = vec![SoaTransform::IDENTITY; skel.soa_count()];
    let mut group = c.benchmark_group("sample_compressed");
    group.throughput(Throughput::Elements(skel.joint_count() as u64));
    group.bench_function("humanoid/compressed-seq", |b| {
        let mut t = 0.0f32;
        b.iter(|| {
            t = (t + dt) % d;
            cv.sample_with_rest(black_box(t), TimeMode::Loop, rest, black_box(&mut out))
        })
    });
    group.bench_function("humanoid/compressed-random", |b| {
        let mut i = 0usize;
        b.iter(|| {
            i = (i + 1) % times.len();
            cv.sample_with_rest(
                black_box(times[i]),
                TimeMode::Loop,
                rest,
                black_box(&mut out),
            )
        })
    });
    group.bench_function("humanoid/raw-seq", |b| {
        let mut t = 0.0f32;
        b.iter(|| {
            t = (t + dt) % d;
            raw.sample(black_box(t), TimeMode::Loop, black_box(&mut out))
        })
    });
    group.finish();
}

fn bench_compress(c: &mut Criterion) {
    let (label, a) = asset("09_01.bvh", true);
    let skel = a.skeleton.view();
    let raw = a.clips[0].view();
    let bytes = skel.joint_count() * raw.frame_count() * 40;
    let mut group = c.benchmark_group("compress");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(bytes as u64));
    group.bench_function(format!("{label}/default"), |b| {
        b.iter(|| {
            compress(
                black_box(&skel),
                black_box(&raw),
                &CompressOptions::default(),
            )
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_sample, bench_sample_humanoid, bench_compress
}
criterion_main!(benches);
