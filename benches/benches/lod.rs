//! Joint and update-rate LOD: the per-character frame of 10,000
//! procedural humanoids (compressed clips, 2 threads) with and without
//! LOD; the joint-LOD kernels per level (prefix sampling of a compressed
//! clip, FK with the dropped joints following their parents); the
//! interpolation kernels (local poses, model matrices); and the rate plan
//! of 10,000 characters.
//!
//! ```text
//! cargo bench -p sinew-benches --bench lod -- --noplot
//! ```

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use sinew_core::clip::TimeMode;
use sinew_core::lod::rate::{self, RateTiers};
use sinew_core::lod::{self, HUMANOID_RULES};
use sinew_core::{Mat4, SoaTransform};
use sinew_std::compress::{compress, CompressOptions, OwnedCompressedClip};
use sinew_std::crowd::lod::{LodCrowd, LodInputs, LodSettings, OwnedLod, RateSettings};
use sinew_std::Humanoid;

const CHARACTERS: usize = 10_000;

fn assets() -> (Humanoid, OwnedLod, Vec<OwnedCompressedClip>) {
    let h = Humanoid::default_rate();
    let s = h.skeleton.view();
    let lod = OwnedLod::from_rules(&s, &HUMANOID_RULES, 3).expect("layout");
    let clips = h
        .clips
        .iter()
        .map(|c| {
            let (c, _) = compress(&s, &c.view(), &CompressOptions::default()).expect("compress");
            lod.remap_compressed(&c.view()).expect("reorder")
        })
        .collect();
    (h, lod, clips)
}

/// Distances on a 2 m grid around a camera at its centre, the CLI's levels
/// (full within 15 m, level 1 within 45 m) and importance.
fn scene(n: usize) -> (Vec<u8>, Vec<f32>) {
    let side = (n as f64).sqrt().ceil() as usize;
    let c = (side as f32 - 1.0) / 2.0;
    let d: Vec<f32> = (0..n)
        .map(|i| 2.0 * (((i % side) as f32 - c).powi(2) + ((i / side) as f32 - c).powi(2)).sqrt())
        .collect();
    let levels = d
        .iter()
        .map(|&d| {
            if d < 15.0 {
                0
            } else if d < 45.0 {
                1
            } else {
                2
            }
        })
        .collect();
    (levels, d.iter().map(|&d| -d).collect())
}

fn bench_crowd(c: &mut Criterion) {
    let (_h, lod, clips) = assets();
    let views: Vec<_> = clips.iter().map(|c| c.view()).collect();
    let (levels, importance) = scene(CHARACTERS);
    let mut group = c.benchmark_group("lod-crowd");
    group.throughput(Throughput::Elements(CHARACTERS as u64));
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(8));
    let full = LodCrowd::new(
        lod.view(),
        &views,
        CHARACTERS,
        Some(2),
        LodSettings::default(),
    );
    let mut full = full.expect("crowd");
    group.bench_function(BenchmarkId::new("humanoid-10k-step", "no-lod"), |b| {
        b.iter(|| {
            full.step(1.0 / 60.0, false, &LodInputs::default())
                .expect("step")
        })
    });
    drop(full);
    let settings = LodSettings {
        rate: Some(RateSettings {
            tiers: RateTiers {
                full: -15.0,
                half: -30.0,
                quarter: -60.0,
            },
            budget: CHARACTERS / 4,
            replan_every: 8,
        }),
        ..LodSettings::default()
    };
    let mut with = LodCrowd::new(lod.view(), &views, CHARACTERS, Some(2), settings).expect("crowd");
    let inputs = LodInputs {
        levels: Some(&levels),
        importance: Some(&importance),
        locomotion: None,
    };
    group.bench_function(BenchmarkId::new("humanoid-10k-step", "lod"), |b| {
        b.iter(|| with.step(1.0 / 60.0, false, &inputs).expect("step"))
    });
    let joints_only = LodInputs {
        levels: Some(&levels),
        importance: None,
        locomotion: None,
    };
    let mut joints = LodCrowd::new(
        lod.view(),
        &views,
        CHARACTERS,
        Some(2),
        LodSettings::default(),
    )
    .expect("crowd");
    group.bench_function(
        BenchmarkId::new("humanoid-10k-step", "joint-lod-only"),
        |b| b.iter(|| joints.step(1.0 / 60.0, false, &joints_only).expect("step")),
    );
    group.finish();
}

fn bench_kernels(c: &mut Criterion) {
    let (_h, owned, clips) = assets();
    let l = owned.view();
    let clip = clips[2].view();
    let mut group = c.benchmark_group("lod-kernels");
    let mut pose = vec![SoaTransform::IDENTITY; l.soa_count()];
    let mut models = vec![Mat4::IDENTITY; l.joint_count()];
    for level in 0..l.level_count() {
        group.bench_function(BenchmarkId::new("sample-compressed", level), |b| {
            let mut t = 0.0f32;
            b.iter(|| {
                t = (t + 0.013) % 5.0;
                lod::sample(&l, level, &clip, black_box(t), TimeMode::Loop, &mut pose)
                    .expect("sample")
            })
        });
        group.bench_function(BenchmarkId::new("fk-all-joints", level), |b| {
            b.iter(|| {
                lod::local_to_model(&l, level, black_box(&pose), None, &mut models).expect("fk")
            })
        });
    }
    let prev = pose.clone();
    let mut next = pose.clone();
    lod::sample(&l, 0, &clip, 0.3, TimeMode::Loop, &mut next).expect("sample");
    let mut out = pose.clone();
    group.bench_function("interpolate-poses-70", |b| {
        b.iter(|| {
            rate::interpolate_poses(&prev, &next, black_box(0.375), &mut out).expect("interp")
        })
    });
    let mut scalar = pose.clone();
    group.bench_function("interpolate-poses-70-scalar", |b| {
        b.iter(|| {
            rate::reference::interpolate_poses(&prev, &next, black_box(0.375), &mut scalar)
                .expect("interp")
        })
    });
    let (ma, mb) = (models.clone(), models.clone());
    let mut mo = models.clone();
    group.bench_function("interpolate-models-70", |b| {
        b.iter(|| rate::interpolate_models(&ma, &mb, black_box(0.375), &mut mo).expect("interp"))
    });
    let (_, importance) = scene(CHARACTERS);
    let tiers = RateTiers {
        full: -15.0,
        half: -30.0,
        quarter: -60.0,
    };
    let (mut order, mut periods) = (vec![0u32; CHARACTERS], vec![0u8; CHARACTERS]);
    for (name, budget) in [("fits", CHARACTERS / 4), ("demotes", CHARACTERS / 8)] {
        group.bench_function(BenchmarkId::new("plan-10k", name), |b| {
            b.iter(|| {
                rate::plan(
                    black_box(&importance),
                    &tiers,
                    budget,
                    &mut order,
                    &mut periods,
                )
                .expect("plan")
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_crowd, bench_kernels);
criterion_main!(benches);
