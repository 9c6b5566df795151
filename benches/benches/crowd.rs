//! Crowd throughput: the procedural humanoid crowd stepped one frame, on 1
//! and 2 worker threads, so the scaling ratio comes from one run.
//!
//! ```text
//! cargo bench -p sinew-benches --bench crowd -- --noplot
//! ```

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use sinew_std::crowd::{Crowd, SinewBackend};
use sinew_std::Humanoid;

fn bench_crowd(c: &mut Criterion) {
    let h = Humanoid::default_rate();
    let backend = SinewBackend::new(&h);
    let characters = 512;
    let mut group = c.benchmark_group("crowd");
    group.throughput(Throughput::Elements(characters as u64));
    for threads in [1usize, 2] {
        let mut crowd = Crowd::new(&backend, characters, Some(threads)).expect("thread pool");
        group.bench_function(BenchmarkId::new("humanoid-512-step", threads), |b| {
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
