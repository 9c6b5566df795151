//! Crowd steering: one step of 1,000 and 10,000 agents (grid build and
//! every agent's update) with the default rules and with anticipation and
//! overlap resolution on, and the brute-force reference at 1,000.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use sinew_core::steer::{self, reference, Agent, Grid, Locomotion, Obstacles, Params, Weights};

/// `n` agents on a 1 m grid in two blocks walking through each other,
/// already moving.
fn crossing(n: usize) -> Vec<Agent> {
    let rows = ((n / 2) as f32).sqrt().ceil() as usize;
    (0..n)
        .map(|i| {
            let side = if i % 2 == 0 { -1.0f32 } else { 1.0 };
            let k = i / 2;
            let x = side * (2.0 + (k % rows) as f32);
            let y = (k / rows) as f32 - rows as f32 / 2.0;
            Agent {
                position: [x, y],
                velocity: [-side * 1.2, 0.0],
                goal: [-x, y],
                heading: if side < 0.0 {
                    0.0
                } else {
                    core::f32::consts::PI
                },
                radius: 0.3,
                max_speed: 1.5,
                max_force: 3.0,
            }
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("steer");
    let params = Params::default();
    let none = Obstacles::default();
    for n in [1_000usize, 10_000] {
        let agents = crossing(n);
        let mut out = agents.clone();
        let mut loco = vec![Locomotion::default(); n];
        let mut starts = vec![0u32; Grid::starts_len(n)];
        let (mut entries, mut keys) = (vec![0u32; n], vec![0u32; n]);
        let mut grid = Grid::new(&mut starts, &mut entries, &mut keys).unwrap();
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function(BenchmarkId::new("step", n), |b| {
            b.iter(|| {
                steer::step(
                    black_box(&agents),
                    &mut out,
                    &mut loco,
                    &mut grid,
                    &none,
                    &params,
                    1.0 / 30.0,
                )
                .unwrap()
            })
        });
        let anticipating = Params {
            overlap_resolution: 0.2,
            weights: Weights {
                anticipation: 1.5,
                ..params.weights
            },
            ..params
        };
        g.bench_function(BenchmarkId::new("step_anticipation", n), |b| {
            b.iter(|| {
                steer::step(
                    black_box(&agents),
                    &mut out,
                    &mut loco,
                    &mut grid,
                    &none,
                    &anticipating,
                    1.0 / 30.0,
                )
                .unwrap()
            })
        });
        if n == 1_000 {
            g.bench_function(BenchmarkId::new("reference_brute_force", n), |b| {
                b.iter(|| {
                    reference::step(
                        black_box(&agents),
                        &mut out,
                        &mut loco,
                        &none,
                        &params,
                        1.0 / 30.0,
                    )
                    .unwrap()
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
