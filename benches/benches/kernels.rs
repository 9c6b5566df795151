//! Kernel benches: one criterion group per kernel, sinew side by side with the
//! glam AoS baseline (`sinew_cli::baseline`) on the same data.
//!
//! Ids are `<group>/<skeleton>/<variant>`; throughput is in joints, so
//! criterion's "thrpt" line reads as joints per second (invert for ns/joint).
//!
//! ```text
//! cargo bench -p sinew-benches -- --noplot            # everything (a few minutes)
//! cargo bench -p sinew-benches -- --noplot 'blend/67/' # one skeleton of one group
//! ```

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use sinew_benches::config;
use sinew_benches::{characters, random_times, WEIGHTS};
use sinew_cli::baseline::{self, AosClip};
use sinew_core::blend::{self, BlendJob, BlendLayer, JointWeights, DEFAULT_THRESHOLD};
use sinew_core::clip::{RawClip, TimeMode};
use sinew_core::fk::{self, FkJob};
use sinew_core::{Mat4, SoaTransform};
use sinew_std::{Humanoid, OwnedClip};

/// `blend`: sinew with 2-4 layers, masks and an additive layer; glam baseline with 3 layers.
fn bench_blend(c: &mut Criterion) {
    let mut group = c.benchmark_group("blend");
    for ch in characters() {
        let skel = ch.skeleton.view();
        let rest = skel.rest_pose();
        let id = |v: &str| BenchmarkId::new(ch.label.as_str(), v);
        let mut out = vec![SoaTransform::IDENTITY; skel.soa_count()];
        group.throughput(Throughput::Elements(ch.joints() as u64));

        for layers in 2..=4 {
            let ls: Vec<_> = ch.poses[..layers]
                .iter()
                .zip(WEIGHTS)
                .map(|(p, w)| BlendLayer::new(p, w))
                .collect();
            let job = BlendJob::new(&ls, &[], rest);
            group.bench_function(id(&format!("sinew-{layers}")), |b| {
                b.iter(|| blend::blend(black_box(&job), black_box(&mut out)))
            });
            group.bench_function(id(&format!("sinew-{layers}-portable")), |b| {
                b.iter(|| blend::blend_portable(black_box(&job), black_box(&mut out)))
            });
        }

        let masks: Vec<_> = ch
            .masks
            .iter()
            .map(|m| JointWeights::new(m).expect("synthetic masks are valid"))
            .collect();
        let masked: Vec<_> = ch.poses[..3]
            .iter()
            .zip(WEIGHTS)
            .zip(&masks)
            .map(|((p, w), m)| BlendLayer::masked(p, w, *m))
            .collect();
        let job = BlendJob::new(&masked, &[], rest);
        group.bench_function(id("sinew-3-masked"), |b| {
            b.iter(|| blend::blend(black_box(&job), black_box(&mut out)))
        });
        group.bench_function(id("sinew-3-masked-portable"), |b| {
            b.iter(|| blend::blend_portable(black_box(&job), black_box(&mut out)))
        });

        let plain: Vec<_> = ch.poses[..3]
            .iter()
            .zip(WEIGHTS)
            .map(|(p, w)| BlendLayer::new(p, w))
            .collect();
        let additive = [BlendLayer::new(&ch.additive, 0.7)];
        let job = BlendJob::new(&plain, &additive, rest);
        group.bench_function(id("sinew-3-add1"), |b| {
            b.iter(|| blend::blend(black_box(&job), black_box(&mut out)))
        });
        group.bench_function(id("sinew-3-add1-portable"), |b| {
            b.iter(|| blend::blend_portable(black_box(&job), black_box(&mut out)))
        });

        let aos_layers: Vec<(&[baseline::Transform], f32)> = ch.aos_poses[..3]
            .iter()
            .zip(WEIGHTS)
            .map(|(p, w)| (p.as_slice(), w))
            .collect();
        let mut aos_out = vec![baseline::Transform::IDENTITY; ch.joints()];
        group.bench_function(id("glam-3"), |b| {
            b.iter(|| {
                baseline::blend(
                    black_box(&aos_layers),
                    black_box(&ch.aos_rest),
                    DEFAULT_THRESHOLD,
                    black_box(&mut aos_out),
                )
            })
        });
        group.bench_function(id("glam-nlerp-3"), |b| {
            b.iter(|| {
                baseline::blend_nlerp(
                    black_box(&aos_layers),
                    black_box(&ch.aos_rest),
                    DEFAULT_THRESHOLD,
                    black_box(&mut aos_out),
                )
            })
        });
    }
    group.finish();
}

/// `fk`: whole skeleton and one arm subtree, sinew vs glam.
fn bench_fk(c: &mut Criterion) {
    let mut group = c.benchmark_group("fk");
    for ch in characters() {
        let skel = ch.skeleton.view();
        let n = ch.joints();
        let id = |v: &str| BenchmarkId::new(ch.label.as_str(), v);
        let local = &ch.poses[0];
        let aos_local = &ch.aos_poses[0];
        let mut models = vec![Mat4::IDENTITY; n];
        let mut aos_models = vec![glam::Mat4::IDENTITY; n];

        group.throughput(Throughput::Elements(n as u64));
        let job = FkJob::new(&skel, local);
        group.bench_function(id("sinew"), |b| {
            b.iter(|| fk::local_to_model(black_box(&job), black_box(&mut models)))
        });
        group.bench_function(id("sinew-portable"), |b| {
            b.iter(|| fk::local_to_model_portable(black_box(&job), black_box(&mut models)))
        });
        group.bench_function(id("glam"), |b| {
            b.iter(|| {
                baseline::local_to_model(
                    black_box(skel.parents()),
                    black_box(aos_local),
                    black_box(&mut aos_models),
                )
            })
        });

        // The range variants read the parents before `first` from the full pass above.
        let (first, end) = ch.range;
        group.throughput(Throughput::Elements((end - first) as u64));
        let job = FkJob::new(&skel, local).range(first, end);
        group.bench_function(id(&format!("sinew-range-{}", end - first)), |b| {
            b.iter(|| fk::local_to_model(black_box(&job), black_box(&mut models)))
        });
        group.bench_function(id(&format!("sinew-range-{}-portable", end - first)), |b| {
            b.iter(|| fk::local_to_model_portable(black_box(&job), black_box(&mut models)))
        });
        group.bench_function(id(&format!("glam-range-{}", end - first)), |b| {
            b.iter(|| {
                baseline::local_to_model_range(
                    black_box(skel.parents()),
                    black_box(aos_local),
                    first,
                    end,
                    black_box(&mut aos_models),
                )
            })
        });
    }
    group.finish();
}

/// Number of distinct copies of the clip in the cold-cache variant.
const COLD_COPIES: usize = 64;

/// `sample`: the humanoid's walk clip at sequential, random and cache-cold times.
fn bench_sample(c: &mut Criterion) {
    let h = Humanoid::default_rate();
    let n = h.skeleton.joint_count();
    let walk = h.clips[0].view();
    let aos = AosClip::from_raw(&walk, n);
    let d = walk.duration();
    let dt = 1.0 / 60.0;
    let times = random_times(4096, d, 9);
    let mut out = vec![SoaTransform::IDENTITY; walk.soa_count()];
    let mut aos_out = vec![baseline::Transform::IDENTITY; n];

    let mut group = c.benchmark_group("sample");
    group.throughput(Throughput::Elements(n as u64));
    group.bench_function("humanoid/sinew-seq", |b| {
        let mut t = 0.0f32;
        b.iter(|| {
            t = (t + dt) % d;
            walk.sample(black_box(t), TimeMode::Loop, black_box(&mut out))
        })
    });
    group.bench_function("humanoid/glam-seq", |b| {
        let mut t = 0.0f32;
        b.iter(|| {
            t = (t + dt) % d;
            aos.sample(black_box(t), black_box(&mut aos_out))
        })
    });
    group.bench_function("humanoid/sinew-random", |b| {
        let mut i = 0usize;
        b.iter(|| {
            i = (i + 1) % times.len();
            walk.sample(black_box(times[i]), TimeMode::Loop, black_box(&mut out))
        })
    });
    group.bench_function("humanoid/glam-random", |b| {
        let mut i = 0usize;
        b.iter(|| {
            i = (i + 1) % times.len();
            aos.sample(black_box(times[i]), black_box(&mut aos_out))
        })
    });

    // Cold cache: random times in one of 64 separate copies of the clip
    // (6-7 MB in total, more than this machine's L2; each sample touches 2 of
    // the 64 × 34 frames, so its keys are rarely in L1/L2).
    let copies: Vec<OwnedClip> = (0..COLD_COPIES).map(|_| h.clips[0].clone()).collect();
    let views: Vec<RawClip<'_>> = copies.iter().map(OwnedClip::view).collect();
    let aos_copies: Vec<AosClip> = (0..COLD_COPIES).map(|_| aos.clone()).collect();
    group.bench_function("humanoid/sinew-cold", |b| {
        let mut i = 0usize;
        b.iter(|| {
            i = (i + 1) % times.len();
            let clip = &views[(i * 37) % COLD_COPIES];
            clip.sample(black_box(times[i]), TimeMode::Loop, black_box(&mut out))
        })
    });
    group.bench_function("humanoid/glam-cold", |b| {
        let mut i = 0usize;
        b.iter(|| {
            i = (i + 1) % times.len();
            let clip = &aos_copies[(i * 37) % COLD_COPIES];
            clip.sample(black_box(times[i]), black_box(&mut aos_out))
        })
    });
    group.finish();
}

/// `pipeline`: one character-frame on the humanoid — sample walk/jog/run,
/// blend the three, FK — and blend + FK alone (on pre-sampled poses).
fn bench_pipeline(c: &mut Criterion) {
    let h = Humanoid::default_rate();
    let skel = h.skeleton.view();
    let n = skel.joint_count();
    let rest = skel.rest_pose();
    let clips: Vec<RawClip<'_>> = h.clips.iter().map(OwnedClip::view).collect();
    let aos_clips: Vec<AosClip> = clips.iter().map(|c| AosClip::from_raw(c, n)).collect();
    let aos_rest = baseline::to_aos(rest, n);
    let dt = 1.0 / 60.0;

    let mut sampled = vec![vec![SoaTransform::IDENTITY; skel.soa_count()]; 3];
    let mut local = vec![SoaTransform::IDENTITY; skel.soa_count()];
    let mut models = vec![Mat4::IDENTITY; n];
    let mut aos_sampled = vec![vec![baseline::Transform::IDENTITY; n]; 3];
    let mut aos_local = vec![baseline::Transform::IDENTITY; n];
    let mut aos_models = vec![glam::Mat4::IDENTITY; n];

    let mut group = c.benchmark_group("pipeline");
    group.throughput(Throughput::Elements(n as u64));
    group.bench_function("humanoid/sinew", |b| {
        let mut t = 0.0f32;
        b.iter(|| {
            t = (t + dt) % 100.0;
            for (clip, out) in clips.iter().zip(sampled.iter_mut()) {
                clip.sample(black_box(t), TimeMode::Loop, out)?;
            }
            let layers: [BlendLayer<'_>; 3] =
                core::array::from_fn(|i| BlendLayer::new(&sampled[i], WEIGHTS[i]));
            blend::blend(&BlendJob::new(&layers, &[], rest), &mut local)?;
            fk::local_to_model(&FkJob::new(&skel, &local), black_box(&mut models))
        })
    });
    group.bench_function("humanoid/glam", |b| {
        let mut t = 0.0f32;
        b.iter(|| {
            t = (t + dt) % 100.0;
            for (clip, out) in aos_clips.iter().zip(aos_sampled.iter_mut()) {
                clip.sample(black_box(t), out);
            }
            let layers: [(&[baseline::Transform], f32); 3] =
                core::array::from_fn(|i| (aos_sampled[i].as_slice(), WEIGHTS[i]));
            baseline::blend(&layers, &aos_rest, DEFAULT_THRESHOLD, &mut aos_local);
            baseline::local_to_model(skel.parents(), &aos_local, black_box(&mut aos_models));
        })
    });

    // Blend + FK only, on poses sampled once at t = 0.3 s.
    for (clip, out) in clips.iter().zip(sampled.iter_mut()) {
        clip.sample(0.3, TimeMode::Loop, out).expect("valid time");
    }
    for (clip, out) in aos_clips.iter().zip(aos_sampled.iter_mut()) {
        clip.sample(0.3, out);
    }
    group.bench_function("humanoid/sinew-blend-fk", |b| {
        b.iter(|| {
            let layers: [BlendLayer<'_>; 3] =
                core::array::from_fn(|i| BlendLayer::new(black_box(&sampled[i]), WEIGHTS[i]));
            blend::blend(&BlendJob::new(&layers, &[], rest), &mut local)?;
            fk::local_to_model(&FkJob::new(&skel, &local), black_box(&mut models))
        })
    });
    group.bench_function("humanoid/glam-blend-fk", |b| {
        b.iter(|| {
            let layers: [(&[baseline::Transform], f32); 3] =
                core::array::from_fn(|i| (black_box(aos_sampled[i].as_slice()), WEIGHTS[i]));
            baseline::blend(&layers, &aos_rest, DEFAULT_THRESHOLD, &mut aos_local);
            baseline::local_to_model(skel.parents(), &aos_local, black_box(&mut aos_models));
        })
    });
    group.finish();
}

/// `load`: validating a compiled skeleton / raw clip container and viewing it
/// in place (zero copy), for the humanoid and, when the data is present, the
/// 67-joint ozz pab skeleton and walk.
fn bench_load(c: &mut Criterion) {
    let mut group = c.benchmark_group("load");
    let h = Humanoid::default_rate();
    let mut cases = vec![(
        "humanoid".to_string(),
        h.skeleton.clone(),
        h.clips[0].clone(),
    )];
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/ozz");
    match sinew_std::import::ozz::load(
        &data.join("pab_skeleton.ozz"),
        &[&data.join("pab_walk.ozz")],
        &sinew_std::import::ozz::OzzOptions::default(),
    ) {
        Ok(a) => cases.push(("pab".to_string(), a.skeleton, a.clips[0].clone())),
        Err(e) => eprintln!("load/pab skipped: {e}"),
    }
    for (name, skel, clip) in &cases {
        let skel_bytes = sinew_std::AlignedBytes::copy_from(skel.bytes());
        let clip_bytes = clip.to_bytes();
        group.bench_function(format!("{name}/skeleton-{}", skel.joint_count()), |b| {
            b.iter(|| {
                sinew_core::Skeleton::from_bytes(black_box(skel_bytes.as_slice()))
                    .map(|s| s.joint_count())
            })
        });
        group.bench_function(format!("{name}/clip-{}-frames", clip.frame_count()), |b| {
            b.iter(|| {
                RawClip::from_bytes(black_box(clip_bytes.as_slice())).map(|c| c.frame_count())
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = kernels;
    config = config();
    targets = bench_blend, bench_fk, bench_sample, bench_pipeline, bench_load
}
criterion_main!(kernels);
