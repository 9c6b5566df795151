//! sinew on ozz-animation's own sample data, for same-run comparisons with
//! ozz-animation: the 67-joint `pab_skeleton` and its walk, jog and run from
//! `../shared/data/ozz`, imported at 30 Hz (the clips' rate) and compressed
//! with the default settings (0.01 cm bound, 3 cm shell), as a game ships
//! them; ozz's own animation format is quantised too.
//!
//! Ids are `ozz_pab/<stage>`; every stage is one call on one character:
//!
//! - `sample-compressed-seq` / `-random`: the walk at sequential times (one
//!   60 Hz frame apart, looping) or at pseudo-random times;
//! - `sample-compressed-seq-cached` / `-random-cached`: the same through a
//!   `PlaybackCache` of the clip's `cache_blocks` (three decoded frames of
//!   its animated tracks: sequential playback decodes each key frame once,
//!   two per pass of the decoder; a random time decodes its two key
//!   frames in one pass, as an uncached sample does);
//!   `sample-compressed-seq-cached-min` through one of `min_cache_blocks`
//!   (two frames), the least, which decodes one frame per pass;
//! - `sample-raw-seq`: the same on the uncompressed clip;
//! - `blend-3`: walk, jog and run poses (sampled once) blended with weights
//!   0.45 / 0.3 / 0.15;
//! - `local-to-model`: the blended pose to 67 model matrices;
//! - `blend-3-portable`, `local-to-model-portable`: the same on the
//!   portable four-wide kernels (`blend_portable`, `local_to_model_portable`),
//!   which the two above are on CPUs without AVX2 + FMA or with the
//!   `portable` feature; side by side, one run shows the AVX2 kernels' gain;
//! - `frame-compressed`: sample the three compressed clips at sequential
//!   times, blend them, local-to-model; `frame-compressed-cached` with a
//!   playback cache per clip;
//! - `frame-compressed-256` / `-256-cached`: the same frame for 256
//!   characters, each with its own time (character `k` starts at
//!   `k × 0.173` s), poses, matrices and caches; throughput in characters,
//!   so criterion's time per element is the time per character-frame.
//!
//! The peer harness and `scripts/perf-tables` (see docs/performance.md)
//! rely on these ids and on the data each one sees.
//!
//! ```text
//! cargo bench -p sinew-benches --bench ozz -- --noplot
//! ```

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use sinew_benches::config;
use sinew_benches::{random_times, WEIGHTS};
use sinew_core::blend::{self, BlendJob, BlendLayer};
use sinew_core::clip::TimeMode;
use sinew_core::compressed::{CompressedClip, PlaybackCache, PlaybackState};
use sinew_core::fk::{self, FkJob};
use sinew_core::{Mat4, Skeleton, SoaTransform};
use sinew_std::compress::{compress, CompressOptions};

/// Frame step of the sequential variants: a 60 Hz game frame.
const DT: f32 = 1.0 / 60.0;

/// Seed of the random times; the peer harness draws the same times.
const RANDOM_SEED: u64 = 9;

/// Characters of the crowd frame stages, and the start-time step between them.
const CROWD: usize = 256;
const CROWD_STEP: f32 = 0.173;

/// Time at which the blend and local-to-model inputs are sampled, as a
/// fraction of each clip's duration.
const POSE_RATIO: f32 = 0.3;

fn bench_pab(c: &mut Criterion) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/ozz");
    let names = ["pab_walk.ozz", "pab_jog.ozz", "pab_run.ozz"];
    let paths: Vec<PathBuf> = names.iter().map(|n| dir.join(n)).collect();
    let refs: Vec<&std::path::Path> = paths.iter().map(PathBuf::as_path).collect();
    let opts = sinew_std::import::ozz::OzzOptions::default();
    let asset = match sinew_std::import::ozz::load(&dir.join("pab_skeleton.ozz"), &refs, &opts) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("ozz bench skipped: {e}");
            return;
        }
    };
    let skel = asset.skeleton.view();
    let rest = skel.rest_pose();
    let n = skel.joint_count();
    let raws: Vec<_> = asset.clips.iter().map(|c| c.view()).collect();
    let owned: Vec<_> = raws
        .iter()
        .map(|r| {
            compress(&skel, r, &CompressOptions::default())
                .expect("pab clips compress")
                .0
        })
        .collect();
    let comp: Vec<CompressedClip<'_>> = owned.iter().map(|c| c.view()).collect();
    let walk = &comp[0];
    let d = raws[0].duration();
    let times = random_times(4096, d, RANDOM_SEED);

    let mut out = vec![SoaTransform::IDENTITY; skel.soa_count()];
    let mut sampled = vec![vec![SoaTransform::IDENTITY; skel.soa_count()]; 3];
    let mut local = vec![SoaTransform::IDENTITY; skel.soa_count()];
    let mut models = vec![Mat4::IDENTITY; n];

    let mut group = c.benchmark_group("ozz_pab");
    group.throughput(Throughput::Elements(n as u64));
    group.bench_function("sample-compressed-seq", |b| {
        let mut t = 0.0f32;
        b.iter(|| {
            t = (t + DT) % d;
            walk.sample_with_rest(black_box(t), TimeMode::Loop, rest, black_box(&mut out))
        })
    });
    group.bench_function("sample-compressed-random", |b| {
        let mut i = 0usize;
        b.iter(|| {
            i = (i + 1) % times.len();
            walk.sample_with_rest(
                black_box(times[i]),
                TimeMode::Loop,
                rest,
                black_box(&mut out),
            )
        })
    });
    let mut cache_buf = vec![SoaTransform::IDENTITY; walk.cache_blocks()];
    let mut min_buf = vec![SoaTransform::IDENTITY; walk.min_cache_blocks()];
    for (id, buf) in [
        ("sample-compressed-seq-cached", &mut cache_buf),
        ("sample-compressed-seq-cached-min", &mut min_buf),
    ] {
        group.bench_function(id, |b| {
            let mut cache = PlaybackCache::new(buf);
            let mut t = 0.0f32;
            b.iter(|| {
                t = (t + DT) % d;
                walk.sample_cached(
                    black_box(t),
                    TimeMode::Loop,
                    rest,
                    &mut cache,
                    black_box(&mut out),
                )
            })
        });
    }
    group.bench_function("sample-compressed-random-cached", |b| {
        let mut cache = PlaybackCache::new(&mut cache_buf);
        let mut i = 0usize;
        b.iter(|| {
            i = (i + 1) % times.len();
            walk.sample_cached(
                black_box(times[i]),
                TimeMode::Loop,
                rest,
                &mut cache,
                black_box(&mut out),
            )
        })
    });
    group.bench_function("sample-raw-seq", |b| {
        let mut t = 0.0f32;
        b.iter(|| {
            t = (t + DT) % d;
            raws[0].sample(black_box(t), TimeMode::Loop, black_box(&mut out))
        })
    });

    for ((clip, raw), pose) in comp.iter().zip(&raws).zip(sampled.iter_mut()) {
        clip.sample_with_rest(raw.duration() * POSE_RATIO, TimeMode::Clamp, rest, pose)
            .expect("valid time");
    }
    let layers: [BlendLayer<'_>; 3] =
        core::array::from_fn(|i| BlendLayer::new(&sampled[i], WEIGHTS[i]));
    let job = BlendJob::new(&layers, &[], rest);
    group.bench_function("blend-3", |b| {
        b.iter(|| blend::blend(black_box(&job), black_box(&mut local)))
    });
    group.bench_function("blend-3-portable", |b| {
        b.iter(|| blend::blend_portable(black_box(&job), black_box(&mut local)))
    });
    blend::blend(&job, &mut local).expect("blends");
    let job = FkJob::new(&skel, &local);
    group.bench_function("local-to-model", |b| {
        b.iter(|| fk::local_to_model(black_box(&job), black_box(&mut models)))
    });
    group.bench_function("local-to-model-portable", |b| {
        b.iter(|| fk::local_to_model_portable(black_box(&job), black_box(&mut models)))
    });

    let durations: Vec<f32> = raws.iter().map(|r| r.duration()).collect();
    let mut frame = vec![vec![SoaTransform::IDENTITY; skel.soa_count()]; 3];
    group.bench_function("frame-compressed", |b| {
        let mut t = 0.0f32;
        b.iter(|| {
            t += DT;
            for ((clip, &dur), pose) in comp.iter().zip(&durations).zip(frame.iter_mut()) {
                clip.sample_with_rest(black_box(t % dur), TimeMode::Loop, rest, pose)?;
            }
            let layers: [BlendLayer<'_>; 3] =
                core::array::from_fn(|i| BlendLayer::new(&frame[i], WEIGHTS[i]));
            blend::blend(&BlendJob::new(&layers, &[], rest), &mut local)?;
            fk::local_to_model(&FkJob::new(&skel, &local), black_box(&mut models))
        })
    });
    let mut caches: Vec<Vec<SoaTransform>> = comp
        .iter()
        .map(|c| vec![SoaTransform::IDENTITY; c.cache_blocks()])
        .collect();
    group.bench_function("frame-compressed-cached", |b| {
        let mut caches: Vec<PlaybackCache<'_>> =
            caches.iter_mut().map(|c| PlaybackCache::new(c)).collect();
        let mut t = 0.0f32;
        b.iter(|| {
            t += DT;
            for (((clip, &dur), pose), cache) in comp
                .iter()
                .zip(&durations)
                .zip(frame.iter_mut())
                .zip(caches.iter_mut())
            {
                clip.sample_cached(black_box(t % dur), TimeMode::Loop, rest, cache, pose)?;
            }
            let layers: [BlendLayer<'_>; 3] =
                core::array::from_fn(|i| BlendLayer::new(&frame[i], WEIGHTS[i]));
            blend::blend(&BlendJob::new(&layers, &[], rest), &mut local)?;
            fk::local_to_model(&FkJob::new(&skel, &local), black_box(&mut models))
        })
    });
    group.finish();
    bench_crowd(c, &skel, &comp, &durations);
}

/// One character of the crowd stages: everything a game keeps per instance.
struct Character {
    t: f32,
    poses: Vec<Vec<SoaTransform>>,
    caches: Vec<Vec<SoaTransform>>,
    states: Vec<PlaybackState>,
    local: Vec<SoaTransform>,
    models: Vec<Mat4>,
}

/// Samples the three clips at `c.t`, through the character's playback
/// caches when `cached`, then blends and runs local-to-model.
fn crowd_frame(
    c: &mut Character,
    skel: &Skeleton<'_>,
    clips: &[CompressedClip<'_>],
    durations: &[f32],
    cached: bool,
) -> Result<(), sinew_core::Error> {
    let rest = skel.rest_pose();
    c.t += DT;
    for (i, (clip, &dur)) in clips.iter().zip(durations).enumerate() {
        let t = c.t % dur;
        if cached {
            let mut cache = PlaybackCache::resume(&mut c.caches[i], &c.states[i]);
            clip.sample_cached(t, TimeMode::Loop, rest, &mut cache, &mut c.poses[i])?;
            c.states[i] = cache.state();
        } else {
            clip.sample_with_rest(t, TimeMode::Loop, rest, &mut c.poses[i])?;
        }
    }
    let layers: [BlendLayer<'_>; 3] =
        core::array::from_fn(|i| BlendLayer::new(&c.poses[i], WEIGHTS[i]));
    blend::blend(&BlendJob::new(&layers, &[], rest), &mut c.local)?;
    fk::local_to_model(&FkJob::new(skel, &c.local), &mut c.models)
}

fn bench_crowd(
    c: &mut Criterion,
    skel: &Skeleton<'_>,
    clips: &[CompressedClip<'_>],
    durations: &[f32],
) {
    let soa = skel.soa_count();
    let mut crowd: Vec<Character> = (0..CROWD)
        .map(|k| Character {
            t: k as f32 * CROWD_STEP,
            poses: vec![vec![SoaTransform::IDENTITY; soa]; clips.len()],
            caches: clips
                .iter()
                .map(|c| vec![SoaTransform::IDENTITY; c.cache_blocks()])
                .collect(),
            states: vec![PlaybackState::EMPTY; clips.len()],
            local: vec![SoaTransform::IDENTITY; soa],
            models: vec![Mat4::IDENTITY; skel.joint_count()],
        })
        .collect();
    let mut group = c.benchmark_group("ozz_pab");
    group.throughput(Throughput::Elements(CROWD as u64));
    for (id, cached) in [
        ("frame-compressed-256", false),
        ("frame-compressed-256-cached", true),
    ] {
        group.bench_function(id, |b| {
            b.iter(|| {
                for ch in &mut crowd {
                    crowd_frame(ch, skel, clips, durations, cached)?;
                }
                black_box(&crowd);
                Ok::<(), sinew_core::Error>(())
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = ozz;
    config = config();
    targets = bench_pab
}
criterion_main!(ozz);
