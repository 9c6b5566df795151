//! Crowd throughput: the procedural humanoid crowd (compressed clips, as
//! the `sinew` tool plays them) stepped one frame, on 1 and 2 worker threads, so the scaling ratio comes from one run; and the
//! same crowd with foot placement on a 20° slope after FK (`-feet-`).
//!
//! ```text
//! cargo bench -p sinew-benches --bench crowd -- --noplot
//! ```

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use sinew_core::ik::foot::{FootLeg, FootPlacement};
use sinew_core::Vec3;
use sinew_std::crowd::{Crowd, CrowdFeet, SinewBackend};
use sinew_std::Humanoid;

/// The humanoid's two legs, springs with a 0.1 s half-life.
fn humanoid_feet(h: &Humanoid) -> FootPlacement<2> {
    let s = h.skeleton.view();
    let j = |n: &str| s.find_joint(n).expect("humanoid joint");
    let leg = |side: &str| FootLeg {
        hip: j(&format!("thigh_{side}")),
        knee: j(&format!("calf_{side}")),
        ankle: j(&format!("foot_{side}")),
        knee_axis: Vec3::new(-1.0, 0.0, 0.0),
    };
    FootPlacement {
        pelvis: j("pelvis"),
        legs: [leg("l"), leg("r")],
        foot_height: 0.02,
        max_tilt: 0.5,
        max_pelvis_offset: 0.3,
        half_life: 0.1,
        soften: 0.97,
    }
}

fn bench_crowd(c: &mut Criterion) {
    let h = Humanoid::default_rate();
    let clips = h.compressed_clips().expect("the procedural clips compress");
    let views = clips.each_ref().map(|c| c.view());
    let backend = SinewBackend::with_clips(h.skeleton.view(), &views).expect("matching clips");
    let characters = 512;
    // A 20° slope rising along +Z; characters on a 1.5 m grid.
    let grade = 20f32.to_radians().tan();
    let slope = move |_: f32, z: f32| Some((grade * z, Vec3::new(0.0, 1.0, -grade)));
    let positions: Vec<[f32; 2]> = (0..characters)
        .map(|i| [1.5 * (i % 32) as f32, 1.5 * (i / 32) as f32])
        .collect();
    let feet = CrowdFeet {
        placement: humanoid_feet(&h),
        ground: &slope,
        positions: &positions,
    };
    let mut group = c.benchmark_group("crowd");
    group.throughput(Throughput::Elements(characters as u64));
    for threads in [1usize, 2] {
        let mut crowd = Crowd::new(&backend, characters, Some(threads)).expect("thread pool");
        group.bench_function(BenchmarkId::new("humanoid-512-step", threads), |b| {
            b.iter(|| crowd.step(1.0 / 60.0, false).expect("valid assets"))
        });
    }
    for threads in [1usize, 2] {
        let mut crowd = Crowd::new(&backend, characters, Some(threads))
            .expect("thread pool")
            .with_feet(feet)
            .expect("valid legs");
        group.bench_function(BenchmarkId::new("humanoid-512-feet-step", threads), |b| {
            b.iter(|| crowd.step(1.0 / 60.0, false).expect("valid assets"))
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(30);
    targets = bench_crowd
}
criterion_main!(benches);
