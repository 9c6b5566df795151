//! Cloth benches (single thread): one 1/30 s frame of a 16 × 16 cape
//! (5 cm cells, row 0 pinned to a joint, 1378 grid constraints + 240
//! tethers) and of a 32-particle rope (61 constraints + 31 tethers), at
//! 4 sub-steps of 4 sweeps, with gravity, wind and drag, against a body
//! capsule (cape) or nothing (rope). The state is restored before every
//! frame so each measures the same work. `step` runs the predict and
//! velocity passes in f32x4 lanes, `reference` the scalar twin; the
//! constraint sweeps are scalar in both.
//!
//! Throughput is in particles per frame; per particle per sub-step is that
//! figure / 4, and per constraint projection the frame time / (constraints
//! · 4 sub-steps · 4 sweeps).
//!
//! ```text
//! cargo bench -p sinew-benches --bench secondary_cloth -- --warm-up-time 1 --measurement-time 3
//! ```

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use sinew_benches::config;
use sinew_core::secondary::cloth::{
    self, build_grid, build_rope, build_tethers, grid_constraint_count, rope_constraint_count,
    tether_count, Cloth, ClothState, Compliance, Constraint, ConstraintKind, Grid, Pin, Rope,
    Settings,
};
use sinew_core::secondary::collider::Collider;
use sinew_core::secondary::SubSteps;
use sinew_core::{Error, Mat4, Vec3};

const DT: f32 = 1.0 / 30.0;

/// Owned buffers of one cloth, pinned and tethered.
struct Setup {
    pos: [Vec<f32>; 6],
    lambda: Vec<f32>,
    inv: Vec<f32>,
    cons: Vec<Constraint>,
    pins: Vec<Pin>,
}

impl Setup {
    fn new(n: usize, m: usize) -> Setup {
        Setup {
            pos: std::array::from_fn(|_| vec![0.0; n]),
            lambda: vec![0.0; m],
            inv: vec![0.0; n],
            cons: vec![
                Constraint {
                    a: 0,
                    b: 1,
                    rest: 0.0,
                    compliance: 0.0,
                    kind: ConstraintKind::Structural,
                };
                m
            ],
            pins: Vec::new(),
        }
    }

    fn state<'a>(pos: &'a mut [Vec<f32>; 6], lambda: &'a mut [f32]) -> ClothState<'a> {
        let [x, y, z, vx, vy, vz] = pos;
        ClothState {
            x,
            y,
            z,
            vx,
            vy,
            vz,
            lambda,
        }
    }

    /// Pins `particles` to joint 0 (identity) and appends tethers.
    fn pin(&mut self, particles: impl Iterator<Item = usize>) {
        for i in particles {
            self.inv[i] = 0.0;
            let p = Vec3::new(self.pos[0][i], self.pos[1][i], self.pos[2][i]);
            self.pins
                .push(Pin::at(i as u32, 0, &Mat4::IDENTITY, p).expect("pin"));
        }
        let mut t = vec![self.cons[0]; tether_count(&self.inv)];
        let [x, y, z, ..] = &self.pos;
        build_tethers(x, y, z, &self.inv, 0.0, &mut t).expect("tethers");
        self.cons.extend_from_slice(&t);
        self.lambda.resize(self.cons.len(), 0.0);
    }
}

fn cape() -> Setup {
    let grid = Grid {
        columns: 16,
        rows: 16,
        origin: Vec3::new(-0.375, 1.5, -0.15),
        across: Vec3::new(0.05, 0.0, 0.0),
        down: Vec3::new(0.0, -0.05, 0.0),
        particle_mass: 0.01,
        compliance: Compliance {
            structural: 0.0,
            shear: 1.0,
            bend: 10.0,
        },
    };
    let mut s = Setup::new(256, grid_constraint_count(16, 16));
    let Setup {
        pos,
        lambda,
        inv,
        cons,
        ..
    } = &mut s;
    build_grid(&grid, &mut Setup::state(pos, lambda), inv, cons).expect("grid");
    s.pin(0..16);
    s
}

fn rope() -> Setup {
    let rope = Rope {
        particles: 32,
        start: Vec3::new(0.0, 2.0, 0.0),
        end: Vec3::new(1.0, 2.0, 0.0),
        particle_mass: 0.02,
        compliance: Compliance {
            structural: 0.0,
            shear: 0.0,
            bend: 1e-2,
        },
    };
    let mut s = Setup::new(32, rope_constraint_count(32));
    let Setup {
        pos,
        lambda,
        inv,
        cons,
        ..
    } = &mut s;
    build_rope(&rope, &mut Setup::state(pos, lambda), inv, cons).expect("rope");
    s.pin(0..1);
    s
}

type Step = fn(
    &Cloth<'_>,
    &mut ClothState<'_>,
    &Settings,
    &[Mat4],
    &[Collider],
    f32,
) -> Result<SubSteps, Error>;

fn bench_cloth(c: &mut Criterion) {
    let mut group = c.benchmark_group("secondary_cloth");
    let settings = Settings {
        wind: Vec3::new(0.0, 0.0, -3.0),
        max_step: 1.0 / 120.0,
        max_substeps: 4,
        iterations: 4,
        ..Settings::default()
    };
    let body = [Collider::Capsule {
        a: Vec3::new(0.0, 0.6, 0.0),
        b: Vec3::new(0.0, 1.4, 0.0),
        radius: 0.15,
    }];
    let models = [Mat4::IDENTITY];
    let steps: [(&str, Step); 2] = [("step", cloth::step), ("reference", cloth::reference::step)];
    for (name, mut setup, colliders) in [
        ("cape16x16", cape(), &body[..]),
        ("rope32", rope(), &[][..]),
    ] {
        // Settle a second first so the frame measured is a hanging cloth.
        {
            let cl = Cloth::new(&setup.inv, &setup.cons, &setup.pins).expect("cloth");
            let mut st = Setup::state(&mut setup.pos, &mut setup.lambda);
            for _ in 0..30 {
                cloth::step(&cl, &mut st, &settings, &models, colliders, DT).expect("settle");
            }
        }
        let start = setup.pos.clone();
        let cl = Cloth::new(&setup.inv, &setup.cons, &setup.pins).expect("cloth");
        eprintln!(
            "{name}: {} particles, {} constraints",
            cl.particle_count(),
            cl.constraints().len()
        );
        group.throughput(Throughput::Elements(cl.particle_count() as u64));
        for (kind, f) in steps {
            group.bench_function(BenchmarkId::new(kind, name), |b| {
                b.iter(|| {
                    for (p, s) in setup.pos.iter_mut().zip(&start) {
                        p.copy_from_slice(s);
                    }
                    let mut st = Setup::state(&mut setup.pos, &mut setup.lambda);
                    f(
                        &cl,
                        &mut st,
                        black_box(&settings),
                        &models,
                        black_box(colliders),
                        black_box(DT),
                    )
                    .expect("step")
                })
            });
        }
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_cloth
}
criterion_main!(benches);
