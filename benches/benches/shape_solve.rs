//! Blend-shape weight solve benches (`sinew_std::shape_solve`, single
//! thread): one capture frame solved from scratch, normal equations
//! included.
//!
//! Group `shape_solve`:
//! - `synthetic/<K>x<V>`: `K` correlated shapes of `V` vertices (each a
//!   random field plus a shared one, as a face's shapes overlap), the
//!   target the blend of known weights (some at 0 and 1) plus 0.1 mm noise;
//! - `robot-expressive`: RobotExpressive's face part (`Head_4`, 564
//!   vertices, three targets) at weights 0.3 / 0.6 / 0.1, when
//!   `../shared/data` is present.
//!
//! ```text
//! cargo bench -p sinew-benches --bench shape_solve -- --warm-up-time 1 --measurement-time 3
//! ```

use std::hint::black_box;
use std::path::Path;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use sinew_benches::{config, noise};
use sinew_std::import::gltf::{load, GltfOptions};
use sinew_std::shape_solve::{solve_weights, ShapeBasis, SolveProblem};

/// Positions or deltas of vertices.
type Points = Vec<[f32; 3]>;

/// Neutral, shape-major deltas and target of `k` shapes on `v` vertices.
fn synthetic(k: usize, v: usize) -> (Points, Points, Points) {
    let mut seed = 0x9e37_79b9;
    let neutral: Vec<[f32; 3]> = (0..v)
        .map(|i| [(i % 20) as f32 * 0.01, (i / 20) as f32 * 0.01, 0.0])
        .collect();
    let shared: Vec<[f32; 3]> = (0..v)
        .map(|_| [noise(&mut seed), noise(&mut seed), noise(&mut seed)])
        .collect();
    let mut deltas = Vec::with_capacity(k * v);
    for _ in 0..k {
        for s in &shared {
            deltas.push(s.map(|x| 0.01 * (0.6 * x + noise(&mut seed))));
        }
    }
    let weights: Vec<f32> = (0..k)
        .map(|i| match i % 6 {
            0 => 0.0,
            1 => 1.0,
            _ => 0.5 + 0.45 * noise(&mut seed),
        })
        .collect();
    let target = (0..v)
        .map(|i| {
            std::array::from_fn(|c| {
                let mut x = neutral[i][c] + 1e-4 * noise(&mut seed);
                for (s, w) in weights.iter().enumerate() {
                    x += w * deltas[s * v + i][c];
                }
                x
            })
        })
        .collect();
    (neutral, deltas, target)
}

fn bench_solve(c: &mut Criterion) {
    let mut group = c.benchmark_group("shape_solve");
    for (k, v) in [(12, 200), (50, 500)] {
        let (neutral, deltas, target) = synthetic(k, v);
        let p = SolveProblem::new(&neutral, &target, &deltas, k);
        let r = solve_weights(&p).expect("valid problem");
        println!(
            "synthetic {k} shapes × {v} vertices: {} iterations, rms residual {:.2e}",
            r.iterations, r.rms
        );
        group.bench_function(BenchmarkId::new("synthetic", format!("{k}x{v}")), |b| {
            b.iter(|| solve_weights(black_box(&p)))
        });
    }
    let robot = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data/gltf/threejs-robotexpressive/RobotExpressive.glb");
    match load(&robot, &GltfOptions::default()) {
        Ok(asset) => {
            let face = asset
                .meshes
                .iter()
                .find(|m| m.name == "Head_4")
                .expect("RobotExpressive has its face part");
            let all: Vec<u32> = (0..face.positions.len() as u32).collect();
            let basis = ShapeBasis::from_mesh(face, &all).expect("targets cover the mesh");
            let v = all.len();
            let w = [0.3f32, 0.6, 0.1];
            let target: Vec<[f32; 3]> = (0..v)
                .map(|i| {
                    std::array::from_fn(|c| {
                        basis.neutral[i][c]
                            + (0..3)
                                .map(|s| w[s] * basis.deltas[s * v + i][c])
                                .sum::<f32>()
                    })
                })
                .collect();
            let p = basis.problem(&target);
            let r = solve_weights(&p).expect("valid problem");
            println!(
                "RobotExpressive Head_4: {v} vertices, weights {:?}, {} iterations",
                r.weights, r.iterations
            );
            group.bench_function("robot-expressive", |b| {
                b.iter(|| solve_weights(black_box(&p)))
            });
        }
        Err(e) => println!("skipped robot-expressive: {e}"),
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_solve
}
criterion_main!(benches);
