//! Pose-space deformation and delta mush benches (single thread).
//!
//! Group `shape_mush`: [`DeltaMush::deform`] (lanes) and
//! [`reference::deform`] (scalar twin) over a bumpy 84 × 84 grid (7056
//! vertices, two triangles per cell), 4 iterations of step 1, the grid
//! bent as a skinned mesh would be; throughput in vertices × iterations,
//! so criterion's elements/s gives the ns per vertex per iteration (the
//! normal and frame passes, once per frame, are spread over the
//! iterations).
//!
//! Group `shape_rbf`: [`RbfSet::evaluate`] of 16 drivers of 8 Gaussian
//! examples and 4 outputs each, clamped; throughput in drivers (ns per
//! driver).
//!
//! ```text
//! cargo bench -p sinew-benches --bench shape_psd -- --warm-up-time 1 --measurement-time 3
//! ```

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use sinew_benches::{config, noise};
use sinew_core::shape::mush::{
    build_adjacency, neighbour_capacity, reference, rest_deltas, DeltaMush, MushAdjacency,
    MushSettings,
};
use sinew_core::shape::rbf::{RbfDriver, RbfFit, RbfKernel, RbfSet};
use sinew_core::{Quat, Vec3};

const SIDE: usize = 84;
const ITERATIONS: u32 = 4;
const DRIVERS: usize = 16;
const EXAMPLES: usize = 8;
const OUTPUTS: usize = 4;

fn grid() -> (Vec<[f32; 3]>, Vec<u32>) {
    let mut seed = 0x9e37_79b9;
    let mut p = Vec::with_capacity(SIDE * SIDE);
    for y in 0..SIDE {
        for x in 0..SIDE {
            let (fx, fy) = (x as f32 / SIDE as f32, y as f32 / SIDE as f32);
            p.push([fx, fy, 0.01 * noise(&mut seed)]);
        }
    }
    let mut t = Vec::with_capacity(6 * (SIDE - 1) * (SIDE - 1));
    for y in 0..SIDE - 1 {
        for x in 0..SIDE - 1 {
            let i = (y * SIDE + x) as u32;
            let (r, u, ru) = (i + 1, i + SIDE as u32, i + SIDE as u32 + 1);
            t.extend_from_slice(&[i, r, ru, i, ru, u]);
        }
    }
    (p, t)
}

fn bench_mush(c: &mut Criterion) {
    let (rest, tris) = grid();
    let n = rest.len();
    let mut offsets = vec![0u32; n + 1];
    let mut neighbours = vec![0u32; neighbour_capacity(tris.len())];
    let used = build_adjacency(&tris, n, &mut offsets, &mut neighbours).expect("adjacency");
    neighbours.truncate(used);
    let adj = MushAdjacency::new(&offsets, &neighbours).expect("adjacency");
    let settings = MushSettings {
        iterations: ITERATIONS,
        step: 1.0,
    };
    let mut scratch = vec![[0.0f32; 4]; 2 * n];
    let mut deltas = vec![[0.0f32; 4]; n];
    rest_deltas(&adj, &tris, settings, &rest, &mut scratch, &mut deltas).expect("deltas");
    let mush = DeltaMush::new(adj, &tris, &deltas, settings).expect("mush");
    // Bend the grid about y at x = 0.5, as a skinned elbow.
    let skinned: Vec<[f32; 3]> = rest
        .iter()
        .map(|p| {
            let a = 1.2 * ((p[0] - 0.4) / 0.2).clamp(0.0, 1.0);
            let q = Quat::from_rotation_y(a);
            let r = q.rotate(Vec3::new(p[0] - 0.5, p[1], p[2]));
            [r.x + 0.5, r.y, r.z]
        })
        .collect();
    let mut out = vec![[0.0f32; 3]; n];

    let mut group = c.benchmark_group("shape_mush");
    group.throughput(Throughput::Elements(n as u64 * u64::from(ITERATIONS)));
    group.bench_function(BenchmarkId::new("lanes", n), |b| {
        b.iter(|| mush.deform(black_box(&skinned), &mut scratch, &mut out))
    });
    group.bench_function(BenchmarkId::new("scalar", n), |b| {
        b.iter(|| reference::deform(&mush, black_box(&skinned), &mut scratch, &mut out))
    });
    group.finish();
}

fn bench_rbf(c: &mut Criterion) {
    let mut seed = 0x2545_f491;
    let rotation = |seed: &mut u32| {
        let axis = Vec3::new(noise(seed), noise(seed), noise(seed))
            .try_normalize()
            .unwrap_or(Vec3::X);
        Quat::from_axis_angle(axis, 1.5 * noise(seed))
    };
    let examples: Vec<Vec<Quat>> = (0..DRIVERS)
        .map(|_| (0..EXAMPLES).map(|_| rotation(&mut seed)).collect())
        .collect();
    let targets: Vec<f32> = (0..EXAMPLES * OUTPUTS)
        .map(|i| {
            if i / OUTPUTS % OUTPUTS == i % OUTPUTS {
                1.0
            } else {
                0.0
            }
        })
        .collect();
    let weights: Vec<Vec<f32>> = examples
        .iter()
        .enumerate()
        .map(|(d, ex)| {
            let fit = RbfFit {
                kernel: RbfKernel::Gaussian,
                sigma: 0.7,
                lambda: 1e-3,
                examples: ex,
                targets: &targets,
                outputs: OUTPUTS,
            };
            let mut scratch = vec![0.0f64; fit.scratch_len()];
            let mut w = vec![0.0f32; EXAMPLES * OUTPUTS];
            fit.solve(d as u32, &mut scratch, &mut w).expect("solve");
            w
        })
        .collect();
    let drivers: Vec<RbfDriver<'_>> = (0..DRIVERS)
        .map(|d| RbfDriver {
            joint: d as u16,
            kernel: RbfKernel::Gaussian,
            sigma: 0.7,
            examples: &examples[d],
            weights: &weights[d],
            outputs: OUTPUTS,
            clamp: true,
        })
        .collect();
    let set = RbfSet::new(&drivers, DRIVERS).expect("set");
    let rotations: Vec<Quat> = (0..DRIVERS).map(|_| rotation(&mut seed)).collect();
    let mut out = vec![0.0f32; DRIVERS * OUTPUTS];

    let mut group = c.benchmark_group("shape_rbf");
    group.throughput(Throughput::Elements(DRIVERS as u64));
    group.bench_function(
        BenchmarkId::new("evaluate", format!("{EXAMPLES}x{OUTPUTS}")),
        |b| b.iter(|| set.evaluate(black_box(&rotations), &mut out)),
    );
    group.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_mush, bench_rbf
}
criterion_main!(benches);
