//! Blend shape and shape driver benches (single thread).
//!
//! Group `shape_blend`: one [`BlendShapes::apply`] (lanes) or
//! [`BlendShapes::apply_scalar`] of 8 targets on a 7214-vertex mesh,
//! positions and normals, every weight active, no renormalisation (it is
//! a per-vertex cost independent of the targets):
//! - `dense-*`: dense targets; throughput in vertices × targets, so
//!   criterion's elements/s gives the ns per vertex per active shape;
//! - `sparse-*`: sparse targets, each moving 10% of the vertices (a
//!   different set per target); throughput in moved vertices × targets
//!   (ns per moved vertex per active shape), the time including the copy
//!   of the base that every apply does;
//! - `copy`: the same call with every weight 0 (every target skipped):
//!   the fixed cost of writing the base to the output, throughput in
//!   vertices.
//!
//! Group `shape_driver`: one [`ShapeDrivers::evaluate`] of 64 correctives (swing, twist and
//! total angles in turn, linear and smoothstep ramps, on the 64 joints of
//! a pose turned 0.1..1.2 rad about varied axes) and 16 two-input
//! combinations; throughput in drivers (ns per driver evaluation).
//!
//! ```text
//! cargo bench -p sinew-benches --bench shape_blend -- --warm-up-time 1 --measurement-time 3
//! ```

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use sinew_benches::{config, noise};
use sinew_core::shape::blend::{pack_sparse, BlendOptions, BlendShapes, Deltas, Target};
use sinew_core::shape::driver::{Angle, Combination, Corrective, Driver, Ramp, ShapeDrivers};
use sinew_core::skin::{SkinOutput, SkinVertices};
use sinew_core::{soa_count, Quat, SoaTransform, SoaVec3, Transform, Vec3};

const VERTICES: usize = 7214;
const TARGETS: usize = 8;
const CORRECTIVES: usize = 64;
const COMBINATIONS: usize = 16;

fn vectors(n: usize, seed: &mut u32) -> Vec<[f32; 3]> {
    (0..n)
        .map(|_| [noise(seed), noise(seed), noise(seed)])
        .collect()
}

/// Sparse target `k`: about every tenth vertex, a different set per target.
fn moved(k: usize) -> Vec<u32> {
    (0..VERTICES as u32)
        .filter(|&i| (i as usize * 7 + k * 13).is_multiple_of(10))
        .collect()
}

fn packed(deltas: &[[f32; 3]]) -> Vec<SoaVec3> {
    let mut blocks = vec![SoaVec3::ZERO; soa_count(deltas.len())];
    pack_sparse(deltas, &mut blocks).expect("sized blocks");
    blocks
}

fn bench_blend(c: &mut Criterion) {
    let mut group = c.benchmark_group("shape_blend");
    let mut seed = 0x9e37_79b9;
    let positions = vectors(VERTICES, &mut seed);
    let normals: Vec<[f32; 3]> = vectors(VERTICES, &mut seed);
    let dense_p: Vec<Vec<[f32; 3]>> = (0..TARGETS).map(|_| vectors(VERTICES, &mut seed)).collect();
    let dense_n: Vec<Vec<[f32; 3]>> = (0..TARGETS).map(|_| vectors(VERTICES, &mut seed)).collect();
    let indices: Vec<Vec<u32>> = (0..TARGETS).map(moved).collect();
    let sparse_p: Vec<Vec<SoaVec3>> = indices
        .iter()
        .map(|i| packed(&vectors(i.len(), &mut seed)))
        .collect();
    let sparse_n: Vec<Vec<SoaVec3>> = indices
        .iter()
        .map(|i| packed(&vectors(i.len(), &mut seed)))
        .collect();
    let dense: Vec<Target<'_>> = (0..TARGETS)
        .map(|k| Target {
            positions: Some(Deltas::Dense(&dense_p[k])),
            normals: Some(Deltas::Dense(&dense_n[k])),
            tangents: None,
        })
        .collect();
    let sparse: Vec<Target<'_>> = (0..TARGETS)
        .map(|k| Target {
            positions: Some(Deltas::Sparse {
                indices: &indices[k],
                deltas: &sparse_p[k],
            }),
            normals: Some(Deltas::Sparse {
                indices: &indices[k],
                deltas: &sparse_n[k],
            }),
            tangents: None,
        })
        .collect();
    let dense = BlendShapes::new(VERTICES, &dense).expect("valid dense targets");
    let sparse = BlendShapes::new(VERTICES, &sparse).expect("valid sparse targets");
    let weights: Vec<f32> = (0..TARGETS).map(|k| 0.1 + 0.1 * k as f32).collect();
    let zeros = vec![0.0; TARGETS];
    let options = BlendOptions {
        threshold: 0.0,
        renormalize: false,
    };
    let mut out_p = vec![[0.0; 3]; VERTICES];
    let mut out_n = vec![[0.0; 3]; VERTICES];
    let base = SkinVertices {
        positions: &positions,
        normals: Some(&normals),
        tangents: None,
    };

    let mut run =
        |id: &str, shapes: &BlendShapes<'_>, weights: &[f32], scalar: bool, elements: usize| {
            group.throughput(Throughput::Elements(elements as u64));
            group.bench_function(BenchmarkId::new(id, VERTICES), |b| {
                b.iter(|| {
                    let out = SkinOutput {
                        positions: &mut out_p,
                        normals: Some(&mut out_n),
                        tangents: None,
                    };
                    let w = black_box(weights);
                    if scalar {
                        shapes.apply_scalar(w, options, base, out)
                    } else {
                        shapes.apply(w, options, base, out)
                    }
                    .expect("valid apply");
                })
            });
        };
    let moved_total: usize = indices.iter().map(Vec::len).sum();
    run("dense-lanes", &dense, &weights, false, VERTICES * TARGETS);
    run("dense-scalar", &dense, &weights, true, VERTICES * TARGETS);
    run("sparse-lanes", &sparse, &weights, false, moved_total);
    run("sparse-scalar", &sparse, &weights, true, moved_total);
    run("copy", &dense, &zeros, false, VERTICES);
    group.finish();
}

fn bench_drivers(c: &mut Criterion) {
    let mut group = c.benchmark_group("shape_driver");
    group.throughput(Throughput::Elements((CORRECTIVES + COMBINATIONS) as u64));
    let mut seed = 0x1234_5678;
    let mut pose = vec![SoaTransform::IDENTITY; soa_count(CORRECTIVES)];
    for j in 0..CORRECTIVES {
        let axis = Vec3::new(noise(&mut seed), noise(&mut seed), noise(&mut seed))
            .try_normalize()
            .unwrap_or(Vec3::X);
        let angle = 0.1 + 1.1 * (j as f32 / CORRECTIVES as f32);
        let r = Quat::from_axis_angle(axis, angle);
        pose[j / 4].set(j % 4, &Transform::new(Vec3::ZERO, r, Vec3::ONE));
    }
    let inputs: Vec<[u32; 2]> = (0..COMBINATIONS as u32)
        .map(|k| [2 * k, 2 * k + 1])
        .collect();
    let mut drivers: Vec<Driver<'_>> = (0..CORRECTIVES)
        .map(|j| {
            let angle = match j % 3 {
                0 => Angle::Swing { axis: Vec3::Y },
                1 => Angle::Twist { axis: Vec3::X },
                _ => Angle::Total,
            };
            Driver::Corrective(Corrective {
                shape: j as u32,
                joint: j as u32,
                reference: Quat::from_rotation_z(0.1),
                angle,
                from: 0.2,
                to: 1.0,
                ramp: if j % 2 == 0 {
                    Ramp::Linear
                } else {
                    Ramp::Smoothstep
                },
            })
        })
        .collect();
    drivers.extend(inputs.iter().enumerate().map(|(k, i)| {
        Driver::Combination(Combination {
            shape: (CORRECTIVES + k) as u32,
            inputs: i,
        })
    }));
    let shapes = CORRECTIVES + COMBINATIONS;
    let set = ShapeDrivers::new(shapes, CORRECTIVES, &drivers).expect("valid drivers");
    let mut weights = vec![0.0; shapes];
    group.bench_function(BenchmarkId::new("evaluate", drivers.len()), |b| {
        b.iter(|| {
            set.evaluate(black_box(&pose), &mut weights)
                .expect("valid pose")
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_blend, bench_drivers
}
criterion_main!(benches);
