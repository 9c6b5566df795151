//! Secondary motion across crates: spring tails on many characters give
//! the same bits on one thread, on two threads and in SIMD lanes; the Fox's
//! real tail (../shared/data) follows its run as a spring chain.

use std::path::Path;

use sinew_core::clip::TimeMode;
use sinew_core::fk::{local_to_model, FkJob};
use sinew_core::ik::IkPose;
use sinew_core::procedural::TAIL_JOINT_COUNT;
use sinew_core::secondary::chain::{
    self, ChainJob, ChainSettings, ChainState, LaneChain, SpringChain, LANES,
};
use sinew_core::{Mat4, Skeleton, SoaTransform, Vec3};
use sinew_std::Humanoid;

#[path = "../support/mod.rs"]
mod support;

const CHARACTERS: usize = 8;
const FRAMES: usize = 120;
const DT: f32 = 1.0 / 60.0;

/// One character: its pose, matrices and tail particles.
#[derive(Clone)]
struct Tailed {
    local: Vec<SoaTransform>,
    models: Vec<Mat4>,
    current: Vec<Vec3>,
    previous: Vec<Vec3>,
}

fn tail_joints(s: &Skeleton<'_>) -> Vec<u16> {
    (1..=TAIL_JOINT_COUNT)
        .map(|k| s.find_joint(&format!("tail_{k:02}")).unwrap() as u16)
        .collect()
}

/// Character `k` runs `0.37 k` seconds out of step, circling at its own
/// radius, so every tail swings differently.
fn world(k: usize, f: usize) -> Mat4 {
    let t = f as f32 * DT;
    let r = 1.0 + 0.3 * k as f32;
    let a = t * 3.0 / r;
    Mat4::from_translation(Vec3::new(r * a.sin(), 0.0, r * a.cos()))
}

fn settings() -> ChainSettings {
    ChainSettings {
        stiffness: 0.05,
        drag: 0.05,
        radius: 0.02,
        ..ChainSettings::default()
    }
}

fn start(h: &Humanoid, joints: &[u16]) -> Vec<Tailed> {
    let s = h.skeleton.view();
    let chain = SpringChain::new(&s, joints).unwrap();
    (0..CHARACTERS)
        .map(|k| {
            let mut c = Tailed {
                local: vec![SoaTransform::IDENTITY; s.soa_count()],
                models: vec![Mat4::IDENTITY; s.joint_count()],
                current: vec![Vec3::ZERO; joints.len()],
                previous: vec![Vec3::ZERO; joints.len()],
            };
            pose(h, k, 0, &mut c);
            let state = ChainState {
                current: &mut c.current,
                previous: &mut c.previous,
            };
            chain::reset(&chain, &c.models, &world(k, 0), state).unwrap();
            c
        })
        .collect()
}

fn pose(h: &Humanoid, k: usize, f: usize, c: &mut Tailed) {
    let s = h.skeleton.view();
    let t = f as f32 * DT + 0.37 * k as f32;
    h.clips[2]
        .view()
        .sample(t, TimeMode::Loop, &mut c.local)
        .unwrap();
    local_to_model(&FkJob::new(&s, &c.local), &mut c.models).unwrap();
}

/// Frames `1..FRAMES` of characters `ks` (the slice `cs`), one at a time.
fn run_scalar(h: &Humanoid, joints: &[u16], ks: std::ops::Range<usize>, cs: &mut [Tailed]) {
    let s = h.skeleton.view();
    let chain = SpringChain::new(&s, joints).unwrap();
    for f in 1..FRAMES {
        for (k, c) in ks.clone().zip(cs.iter_mut()) {
            pose(h, k, f, c);
            let job = ChainJob::new(chain)
                .with_settings(settings())
                .with_world(world(k, f));
            let mut ik = IkPose::new(&s, &mut c.local, &mut c.models, None).unwrap();
            let state = ChainState {
                current: &mut c.current,
                previous: &mut c.previous,
            };
            chain::step(&job, &mut ik, state, DT).unwrap();
        }
    }
}

fn bits(cs: &[Tailed]) -> Vec<u32> {
    cs.iter()
        .flat_map(|c| {
            c.current
                .iter()
                .flat_map(|p| p.to_array())
                .chain(
                    c.models
                        .iter()
                        .flat_map(|m| m.cols.iter().flatten().copied()),
                )
                .collect::<Vec<f32>>()
        })
        .map(f32::to_bits)
        .collect()
}

#[test]
fn spring_tails_give_the_same_bits_on_one_thread_two_threads_and_in_lanes() {
    let h = Humanoid::with_tail(60.0).unwrap();
    let s = h.skeleton.view();
    let joints = tail_joints(&s);
    let chain = SpringChain::new(&s, &joints).unwrap();

    let mut one = start(&h, &joints);
    run_scalar(&h, &joints, 0..CHARACTERS, &mut one);

    let mut two = start(&h, &joints);
    let (a, b) = two.split_at_mut(CHARACTERS / 2);
    std::thread::scope(|scope| {
        let (h, joints) = (&h, &joints);
        scope.spawn(move || run_scalar(h, joints, 0..CHARACTERS / 2, a));
        scope.spawn(move || run_scalar(h, joints, CHARACTERS / 2..CHARACTERS, b));
    });
    assert_eq!(bits(&one), bits(&two), "two threads differ from one");

    // Lanes: simulate four characters per call, then write each back.
    let mut lanes = start(&h, &joints);
    for f in 1..FRAMES {
        for (k, c) in lanes.iter_mut().enumerate() {
            pose(&h, k, f, c);
        }
        for (g, group) in lanes.chunks_mut(LANES).enumerate() {
            let mut batch: [Option<LaneChain<'_, '_>>; LANES] = Default::default();
            for (i, (slot, c)) in batch.iter_mut().zip(group.iter_mut()).enumerate() {
                let k = g * LANES + i;
                *slot = Some(LaneChain {
                    job: ChainJob::new(chain)
                        .with_settings(settings())
                        .with_world(world(k, f)),
                    models: &c.models,
                    state: ChainState {
                        current: &mut c.current,
                        previous: &mut c.previous,
                    },
                });
            }
            chain::simulate_lanes(&mut batch, DT).unwrap();
        }
        for (k, c) in lanes.iter_mut().enumerate() {
            let mut ik = IkPose::new(&s, &mut c.local, &mut c.models, None).unwrap();
            chain::write_back(&chain, &mut ik, &world(k, f), &c.current).unwrap();
        }
    }
    let worst = one
        .iter()
        .zip(&lanes)
        .flat_map(|(a, b)| a.current.iter().zip(&b.current))
        .map(|(p, q)| (*p - *q).length())
        .fold(0.0f32, f32::max);
    assert!(worst <= 1e-5, "lanes differ from scalar by {worst}");
    // The tails moved: the comparison is not of still chains.
    let swing = one
        .iter()
        .map(|c| (c.current[TAIL_JOINT_COUNT - 1] - c.previous[TAIL_JOINT_COUNT - 1]).length())
        .fold(0.0f32, f32::max);
    assert!(swing > 1e-3, "{swing}");
}

#[test]
fn the_fox_tail_follows_its_run_as_a_spring_chain() {
    let Some(dir) = support::shared_data("gltf") else {
        eprintln!("skipped: ../shared/data/gltf is absent");
        return;
    };
    let path = dir.join("khronos-gltf-samples/Fox.glb");
    if !Path::new(&path).exists() {
        eprintln!("skipped: {} is absent", path.display());
        return;
    }
    let fox = sinew_std::import::gltf::load(&path, &Default::default()).unwrap();
    let s = fox.skeleton.view();
    let run = fox.clip("Run").unwrap().view();
    let joints: Vec<u16> = ["b_Tail01_012", "b_Tail02_013", "b_Tail03_014"]
        .iter()
        .map(|n| s.find_joint(n).unwrap() as u16)
        .collect();
    let chain = SpringChain::new(&s, &joints).unwrap();
    let mut local = vec![SoaTransform::IDENTITY; s.soa_count()];
    let mut models = vec![Mat4::IDENTITY; s.joint_count()];
    let mut animated = models.clone();
    let (mut current, mut previous) = (vec![Vec3::ZERO; 3], vec![Vec3::ZERO; 3]);
    // The Fox is in centimetres: gravity and the particle radius follow.
    let settings = ChainSettings {
        gravity: Vec3::new(0.0, -981.0, 0.0),
        stiffness: 0.2,
        ..ChainSettings::default()
    };
    let (mut lag, mut stretch) = (0.0f32, 0.0f32);
    for f in 0..180 {
        let t = f as f32 * DT;
        run.sample(t, TimeMode::Loop, &mut local).unwrap();
        local_to_model(&FkJob::new(&s, &local), &mut models).unwrap();
        animated.copy_from_slice(&models);
        // The fox runs forward at 4 m/s (400 cm/s) along +Z.
        let world = Mat4::from_translation(Vec3::new(0.0, 0.0, 400.0 * t));
        let state = ChainState {
            current: &mut current,
            previous: &mut previous,
        };
        if f == 0 {
            chain::reset(&chain, &models, &world, state).unwrap();
            continue;
        }
        let job = ChainJob::new(chain)
            .with_settings(settings)
            .with_world(world);
        let mut ik = IkPose::new(&s, &mut local, &mut models, None).unwrap();
        chain::step(&job, &mut ik, state, DT).unwrap();
        for w in joints.windows(2) {
            let (a, b) = (usize::from(w[0]), usize::from(w[1]));
            let want = (animated[b].translation() - animated[a].translation()).length();
            let got = (models[b].translation() - models[a].translation()).length();
            stretch = stretch.max((got - want).abs() / want);
        }
        let tip = usize::from(joints[2]);
        lag = lag.max((models[tip].translation() - animated[tip].translation()).length());
        assert!(models.iter().all(Mat4::is_finite), "frame {f}");
    }
    // The tail keeps its bones and visibly trails the run (centimetres).
    assert!(stretch < 1e-3, "{stretch}");
    assert!(lag > 1.0 && lag < 60.0, "{lag}");
}
