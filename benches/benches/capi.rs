//! `c_abi`: what the C boundary costs per call, on the humanoid. Each kernel
//! runs through the exported `sinew_*` function (handle re-view, pointer and
//! overlap checks, panic boundary) and through the Rust API, in one group so
//! the overhead is a ratio from one run.
//!
//! `cargo bench -p sinew-benches --bench capi -- --noplot`

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use sinew::{
    sinew_blend_layer, sinew_clip, sinew_clip_load, sinew_clip_sample, sinew_pose_blend,
    sinew_skeleton, sinew_skeleton_load, sinew_skeleton_local_to_model, sinew_status,
};
use sinew_benches::config;
use sinew_core::blend::{self, BlendJob, BlendLayer, DEFAULT_THRESHOLD};
use sinew_core::clip::TimeMode;
use sinew_core::fk::{self, FkJob};
use sinew_core::{Mat4, SoaTransform};
use sinew_std::Humanoid;

fn bench_c_abi(c: &mut Criterion) {
    let h = Humanoid::default_rate();
    let skel = h.skeleton.view();
    let (n, blocks) = (skel.joint_count(), skel.soa_count());
    let clip_bytes = h.clips[0].to_bytes();
    let walk = h.clips[0].view();

    let mut handle = std::mem::MaybeUninit::<sinew_skeleton>::uninit();
    let bytes = h.skeleton.bytes();
    // Safety: valid buffers; the status is checked before the handle is used.
    let s = unsafe { sinew_skeleton_load(bytes.as_ptr(), bytes.len(), handle.as_mut_ptr()) };
    assert_eq!(s, sinew_status::Ok);
    // Safety: filled on success.
    let handle = unsafe { handle.assume_init() };
    let mut clip = std::mem::MaybeUninit::<sinew_clip>::uninit();
    let cb = clip_bytes.as_slice();
    // Safety: as above.
    let s = unsafe { sinew_clip_load(cb.as_ptr(), cb.len(), clip.as_mut_ptr()) };
    assert_eq!(s, sinew_status::Ok);
    // Safety: filled on success.
    let clip = unsafe { clip.assume_init() };

    let mut a = vec![SoaTransform::IDENTITY; blocks];
    let mut b2 = vec![SoaTransform::IDENTITY; blocks];
    walk.sample(0.3, TimeMode::Loop, &mut a).unwrap();
    walk.sample(0.8, TimeMode::Loop, &mut b2).unwrap();
    let mut out = vec![SoaTransform::IDENTITY; blocks];
    let mut models = vec![Mat4::IDENTITY; n];

    let mut group = c.benchmark_group("c_abi");
    group.bench_function("sample/rust", |b| {
        b.iter(|| walk.sample(black_box(0.4), TimeMode::Loop, black_box(&mut out)))
    });
    group.bench_function("sample/c", |b| {
        b.iter(|| unsafe {
            // Safety: a loaded handle and a buffer of `blocks` blocks.
            sinew_clip_sample(&clip, black_box(0.4), 0, out.as_mut_ptr().cast(), blocks)
        })
    });
    let layers = [BlendLayer::new(&a, 0.7), BlendLayer::new(&b2, 0.3)];
    group.bench_function("blend2/rust", |b| {
        b.iter(|| {
            let job = BlendJob::new(black_box(&layers), &[], skel.rest_pose());
            rust_blend(&job, black_box(&mut out))
        })
    });
    let c_layers = [
        sinew_blend_layer {
            pose: a.as_ptr().cast(),
            pose_len: blocks,
            weight: 0.7,
            joint_weights: std::ptr::null(),
            joint_weights_len: 0,
        },
        sinew_blend_layer {
            pose: b2.as_ptr().cast(),
            pose_len: blocks,
            weight: 0.3,
            joint_weights: std::ptr::null(),
            joint_weights_len: 0,
        },
    ];
    group.bench_function("blend2/c", |b| {
        b.iter(|| unsafe {
            // Safety: every pointer is valid for its length.
            sinew_pose_blend(
                black_box(c_layers.as_ptr()),
                2,
                std::ptr::null(),
                0,
                handle.rest_pose,
                blocks,
                DEFAULT_THRESHOLD,
                out.as_mut_ptr().cast(),
                blocks,
            )
        })
    });
    group.bench_function("fk/rust", |b| {
        b.iter(|| rust_fk(&FkJob::new(&skel, black_box(&a)), black_box(&mut models)))
    });
    group.bench_function("fk/c", |b| {
        b.iter(|| unsafe {
            // Safety: a loaded handle and buffers of the skeleton's sizes.
            sinew_skeleton_local_to_model(
                &handle,
                black_box(a.as_ptr().cast()),
                blocks,
                std::ptr::null(),
                models.as_mut_ptr().cast(),
                n,
            )
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_c_abi
}
criterion_main!(benches);

/// `blend::blend`, never inlined: the callgrind table of
/// `scripts/perf-tables` counts the Rust side's instructions per call of
/// this function, as it counts the C side's per call of `sinew_pose_blend`.
#[inline(never)]
fn rust_blend(job: &BlendJob<'_>, out: &mut [SoaTransform]) -> Result<(), sinew_core::Error> {
    blend::blend(job, out)
}

/// `fk::local_to_model`, never inlined (see [`rust_blend`]).
#[inline(never)]
fn rust_fk(job: &FkJob<'_>, models: &mut [Mat4]) -> Result<(), sinew_core::Error> {
    fk::local_to_model(job, models)
}
