//! Particle-system benches (single thread): one `step` of 1 000 and
//! 10 000 live particles with gravity, drag and a floor plane, without and
//! with pair forces (repulsion, cutoff 0.1 m, in a cube sized for about 16
//! neighbours within the cutoff per particle, a 2N-bucket hash); the hash
//! build alone; and emission. The step's dt is one sub-step (1/60 s) and
//! every particle lives on, so the figure per element is ns per particle
//! per step. Each iteration starts from the same state (restored outside
//! the timing).
//!
//! ```text
//! cargo bench -p sinew-benches --bench secondary_particles -- --noplot
//! ```

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use sinew_benches::config;
use sinew_core::secondary::collider::Collider;
use sinew_core::secondary::particles::{
    emit, step, Emitter, EmitterState, PairForce, PairScratch, ParticleBuffers, Particles,
    Settings, SpatialHash,
};
use sinew_core::{Mat4, Vec3};

const CUTOFF: f32 = 0.1;

/// Owned particle storage: px, py, pz, vx, vy, vz, age, lifetime.
#[derive(Clone)]
struct Store([Vec<f32>; 8]);

impl Store {
    fn view(&mut self, live: usize) -> Particles<'_> {
        let [px, py, pz, vx, vy, vz, age, lifetime] = &mut self.0;
        let b = ParticleBuffers {
            px,
            py,
            pz,
            vx,
            vy,
            vz,
            age,
            lifetime,
        };
        Particles::new(b, live).expect("bench buffers")
    }
}

struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// `n` particles in a cube above the floor with about 16 neighbours
/// within [`CUTOFF`] each, small random velocities, living forever.
fn cloud(n: usize) -> Store {
    let side = (n as f32 * (4.0 / 3.0) * std::f32::consts::PI * CUTOFF.powi(3) / 16.0).cbrt();
    let mut rng = Lcg(n as u64);
    let mut s = Store(std::array::from_fn(|_| Vec::with_capacity(n)));
    for _ in 0..n {
        for a in 0..3 {
            s.0[a].push(rng.next() * side + if a == 1 { 0.05 } else { 0.0 });
        }
        for a in 3..6 {
            s.0[a].push(rng.next() - 0.5);
        }
        s.0[6].push(0.0);
        s.0[7].push(f32::INFINITY);
    }
    s
}

struct PairStore {
    acc: [Vec<f32>; 3],
    table: Vec<u32>,
    entries: Vec<u32>,
    keys: Vec<u32>,
}

impl PairStore {
    fn new(n: usize) -> Self {
        PairStore {
            acc: std::array::from_fn(|_| vec![0.0; n]),
            table: vec![0; 2 * n + 1],
            entries: vec![0; n],
            keys: vec![0; n],
        }
    }

    fn scratch(&mut self) -> PairScratch<'_> {
        let [ax, ay, az] = &mut self.acc;
        let hash = SpatialHash::new(&mut self.table, &mut self.entries, &mut self.keys)
            .expect("bench hash");
        PairScratch { ax, ay, az, hash }
    }
}

fn bench_step(c: &mut Criterion) {
    let mut group = c.benchmark_group("particles_step");
    let floor = [Collider::plane(Vec3::ZERO, Vec3::Y).expect("floor")];
    for n in [1_000usize, 10_000] {
        let start = cloud(n);
        group.throughput(Throughput::Elements(n as u64));
        for pair in [false, true] {
            let settings = Settings {
                drag: 0.5,
                radius: 0.01,
                restitution: 0.3,
                friction: 0.1,
                pair: pair.then_some(PairForce {
                    strength: -1e-4,
                    softening: 0.01,
                    cutoff: CUTOFF,
                }),
                max_step: 1.0 / 60.0,
                ..Settings::DEFAULT
            };
            let mut scratch = PairStore::new(n);
            let name = if pair { "pair-forces" } else { "gravity-drag" };
            group.bench_function(BenchmarkId::new(name, n), |b| {
                b.iter_batched_ref(
                    || start.clone(),
                    |s| {
                        let mut p = s.view(n);
                        let mut sc = scratch.scratch();
                        let sc = if pair { Some(&mut sc) } else { None };
                        black_box(step(&mut p, &settings, &floor, sc, 1.0 / 60.0))
                    },
                    BatchSize::LargeInput,
                )
            });
        }
    }
    group.finish();
}

fn bench_hash(c: &mut Criterion) {
    let mut group = c.benchmark_group("particles_hash_build");
    for n in [1_000usize, 10_000] {
        let s = cloud(n);
        let mut store = PairStore::new(n);
        group.throughput(Throughput::Elements(n as u64));
        group.bench_function(BenchmarkId::from_parameter(n), |b| {
            let mut hash = SpatialHash::new(&mut store.table, &mut store.entries, &mut store.keys)
                .expect("bench hash");
            b.iter(|| black_box(hash.build([&s.0[0], &s.0[1], &s.0[2]], black_box(CUTOFF))))
        });
    }
    group.finish();
}

fn bench_emit(c: &mut Criterion) {
    let mut group = c.benchmark_group("particles_emit");
    let n = 1_000usize;
    let emitter = Emitter {
        joint: 0,
        rate: n as f32,
        offset: Vec3::new(0.0, 0.1, 0.0),
        spawn_radius: 0.05,
        direction: Vec3::Y,
        cone_angle: 0.5,
        speed: [1.0, 3.0],
        lifetime: [0.5, 2.0],
    };
    let models = [Mat4::from_translation(Vec3::new(0.0, 1.0, 0.0))];
    let mut store = Store(std::array::from_fn(|_| vec![0.0; n]));
    let mut state = EmitterState::new(7);
    group.throughput(Throughput::Elements(n as u64));
    group.bench_function(BenchmarkId::from_parameter(n), |b| {
        b.iter(|| {
            let mut p = store.view(0);
            black_box(emit(&emitter, &mut state, &models, 1.0, &mut p))
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_step, bench_hash, bench_emit
}
criterion_main!(benches);
