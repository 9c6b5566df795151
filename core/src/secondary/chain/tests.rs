//! Spring-chain tests on a small humanoid-ish rig with a 5-joint tail.

extern crate alloc;

use alloc::vec::Vec;

use super::*;
use crate::fk::{local_to_model, FkJob};
use crate::math::Transform;
use crate::skeleton::{self, JointDef};
use crate::soa::SoaTransform;
use crate::Align16;

/// The tail: tail_0 (chain root, behind the pelvis) to tail_4, bones of 0.2
/// along −Z (horizontal).
const TAIL: [u16; 5] = [4, 5, 6, 7, 8];
const TAIL_LEN: f32 = 0.8;

fn joint(name: &'static str, parent: Option<usize>, t: Vec3) -> JointDef<'static> {
    JointDef {
        name,
        parent,
        rest: Transform::from_translation_rotation(t, Quat::IDENTITY),
    }
}

/// root, pelvis (1 m up), spine, head, tail_0..tail_4, a zero-length stub
/// under the tail tip, a thigh.
fn rig() -> (Align16<[u8; 4096]>, usize) {
    let back = Vec3::new(0.0, 0.0, -0.2);
    let defs = [
        joint("root", None, Vec3::ZERO),
        joint("pelvis", Some(0), Vec3::new(0.0, 1.0, 0.0)),
        joint("spine", Some(1), Vec3::new(0.0, 0.3, 0.0)),
        joint("head", Some(2), Vec3::new(0.0, 0.3, 0.0)),
        joint("tail_0", Some(1), Vec3::new(0.0, 0.0, -0.1)),
        joint("tail_1", Some(4), back),
        joint("tail_2", Some(5), back),
        joint("tail_3", Some(6), back),
        joint("tail_4", Some(7), back),
        joint("stub", Some(8), Vec3::ZERO),
        joint("thigh", Some(1), Vec3::new(0.1, -0.05, 0.0)),
    ];
    let mut buf = Align16([0u8; 4096]);
    let len = skeleton::build(&defs, &mut buf.0, None).unwrap();
    (buf, len)
}

/// The rest pose's model matrices.
fn rest_models(s: &Skeleton<'_>) -> Vec<Mat4> {
    let mut models = alloc::vec![Mat4::IDENTITY; s.joint_count()];
    local_to_model(&FkJob::new(s, s.rest_pose()), &mut models).unwrap();
    models
}

/// An animation loop: each frame samples the rest pose, runs FK and steps
/// the chain into the pose.
struct Sim {
    local: Vec<SoaTransform>,
    models: Vec<Mat4>,
    cur: Vec<Vec3>,
    prev: Vec<Vec3>,
}

impl Sim {
    fn new(s: &Skeleton<'_>, chain: &SpringChain<'_>, world: &Mat4) -> Sim {
        let n = chain.joint_count();
        let mut sim = Sim {
            local: s.rest_pose().to_vec(),
            models: rest_models(s),
            cur: alloc::vec![Vec3::ZERO; n],
            prev: alloc::vec![Vec3::ZERO; n],
        };
        let state = ChainState {
            current: &mut sim.cur,
            previous: &mut sim.prev,
        };
        reset(chain, &sim.models, world, state).unwrap();
        sim
    }

    fn frame(
        &mut self,
        s: &Skeleton<'_>,
        job: &ChainJob<'_>,
        dt: f32,
    ) -> Result<ChainReport, Error> {
        self.local.copy_from_slice(s.rest_pose());
        local_to_model(&FkJob::new(s, &self.local), &mut self.models)?;
        let mut pose = IkPose::new(s, &mut self.local, &mut self.models, None)?;
        let state = ChainState {
            current: &mut self.cur,
            previous: &mut self.prev,
        };
        step(job, &mut pose, state, dt)
    }

    fn tip(&self) -> Vec3 {
        *self.cur.last().unwrap()
    }
}

fn angle(a: Vec3, b: Vec3) -> f32 {
    let c = a.dot(b) / (a.length() * b.length());
    libm::acosf(c.clamp(-1.0, 1.0))
}

fn world_at(t: f32) -> Mat4 {
    // The character runs a figure through X and Z and turns.
    let p = Vec3::new(
        0.6 * libm::sinf(core::f32::consts::TAU * t),
        0.1 * libm::sinf(9.0 * t),
        0.4 * libm::sinf(5.0 * t),
    );
    Mat4::from_trs(p, Quat::from_axis_angle(Vec3::Y, 0.8 * t), Vec3::ONE)
}

#[test]
fn chain_definition_errors() {
    let (buf, len) = rig();
    let s = Skeleton::from_bytes(&buf.0[..len]).unwrap();
    assert!(SpringChain::new(&s, &TAIL).is_ok());
    let bad = |joints: &[u16]| SpringChain::new(&s, joints).unwrap_err();
    // Not a parent path: skips a joint, or jumps to a sibling.
    assert!(matches!(bad(&[4, 6]), Error::InvalidParameter { .. }));
    assert!(matches!(bad(&[1, 2, 4]), Error::InvalidParameter { .. }));
    assert!(matches!(bad(&[8, 7]), Error::InvalidParameter { .. }));
    // A zero-length bone (tail tip to its stub).
    assert!(matches!(bad(&[7, 8, 9]), Error::InvalidParameter { .. }));
    // Too short, out of range, too long.
    assert!(matches!(bad(&[4]), Error::InvalidParameter { .. }));
    assert!(matches!(bad(&[]), Error::InvalidParameter { .. }));
    assert!(matches!(
        bad(&[8, 99]),
        Error::JointOutOfRange { joint: 99, .. }
    ));
    let long = [0u16; MAX_CHAIN + 1];
    assert!(matches!(bad(&long), Error::CapacityExceeded { .. }));
}

#[test]
fn bad_input_errors_and_nothing_is_written() {
    let (buf, len) = rig();
    let s = Skeleton::from_bytes(&buf.0[..len]).unwrap();
    let chain = SpringChain::new(&s, &TAIL).unwrap();
    let models = rest_models(&s);
    let job = ChainJob::new(chain);
    let mut cur = [Vec3::ZERO; 5];
    let mut prev = [Vec3::ZERO; 5];
    let st = |c: &mut [Vec3; 5], p: &mut [Vec3; 5]| {
        reset(
            &chain,
            &models,
            &Mat4::IDENTITY,
            ChainState {
                current: c,
                previous: p,
            },
        )
        .unwrap();
    };
    st(&mut cur, &mut prev);
    let (c0, p0) = (cur, prev);
    let run = |job: &ChainJob<'_>, cur: &mut [Vec3], prev: &mut [Vec3], dt: f32| {
        simulate(
            job,
            &models,
            ChainState {
                current: cur,
                previous: prev,
            },
            dt,
        )
    };
    let with = |f: &dyn Fn(&mut ChainSettings)| {
        let mut s = ChainSettings::default();
        f(&mut s);
        job.with_settings(s)
    };
    let param = |e: Result<ChainReport, Error>| matches!(e, Err(Error::InvalidParameter { .. }));
    let nonfinite = |e: Result<ChainReport, Error>| matches!(e, Err(Error::NonFinite { .. }));
    let mut c = c0;
    let mut p = p0;
    // Settings.
    for bad in [
        with(&|s| s.stiffness = -0.1),
        with(&|s| s.stiffness = f32::NAN),
        with(&|s| s.stiffness = 1.5),
        with(&|s| s.drag = -1.0),
        with(&|s| s.drag = f32::NAN),
        with(&|s| s.radius = -0.01),
        with(&|s| s.radius = f32::NAN),
        with(&|s| s.max_angle = -0.1),
        with(&|s| s.max_angle = 4.0),
        with(&|s| s.iterations = 0),
        with(&|s| s.tolerance = f32::NAN),
        with(&|s| s.max_step = 0.0),
        with(&|s| s.max_substeps = 0),
    ] {
        assert!(
            param(run(&bad, &mut c, &mut p, 1.0 / 60.0)),
            "{:?}",
            bad.settings
        );
    }
    for bad in [
        with(&|s| s.gravity = Vec3::new(0.0, f32::NAN, 0.0)),
        with(&|s| s.wind = Vec3::new(f32::INFINITY, 0.0, 0.0)),
        // Each finite, their sum is not.
        with(&|s| {
            s.gravity = Vec3::new(0.0, -3e38, 0.0);
            s.wind = Vec3::new(0.0, -3e38, 0.0);
        }),
    ] {
        assert!(nonfinite(run(&bad, &mut c, &mut p, 1.0 / 60.0)));
    }
    // Time steps.
    for dt in [0.0, -0.01, f32::NAN, f32::INFINITY] {
        assert!(param(run(&job, &mut c, &mut p, dt)), "{dt}");
    }
    // Slice lengths.
    let mut short = [Vec3::ZERO; 4];
    assert!(matches!(
        run(&job, &mut short, &mut p, 0.01),
        Err(Error::BadLength {
            expected: 5,
            actual: 4,
            ..
        })
    ));
    assert!(matches!(
        run(&job, &mut c, &mut short, 0.01),
        Err(Error::BadLength { .. })
    ));
    assert!(matches!(
        simulate(
            &job,
            &models[..6],
            ChainState {
                current: &mut c,
                previous: &mut p,
            },
            0.01
        ),
        Err(Error::JointOutOfRange { joint: 6, count: 6 })
    ));
    // A NaN state, a singular or NaN world.
    let mut nan = c0;
    nan[2].y = f32::NAN;
    assert!(nonfinite(run(&job, &mut nan, &mut p, 0.01)));
    let flat = Mat4::from_trs(Vec3::ZERO, Quat::IDENTITY, Vec3::new(1.0, 0.0, 1.0));
    assert!(param(run(&job.with_world(flat), &mut c, &mut p, 0.01)));
    let mut nan_world = Mat4::IDENTITY;
    nan_world.cols[3][0] = f32::NAN;
    assert!(nonfinite(run(
        &job.with_world(nan_world),
        &mut c,
        &mut p,
        0.01
    )));
    // Angle limits: the wrong count, out of range.
    assert!(matches!(
        run(&job.with_angle_limits(&[0.1; 3]), &mut c, &mut p, 0.01),
        Err(Error::BadLength { .. })
    ));
    for bad in [-0.1, 3.5, f32::NAN] {
        let limits = [0.1, 0.2, bad, 0.3];
        assert!(param(run(
            &job.with_angle_limits(&limits),
            &mut c,
            &mut p,
            0.01
        )));
    }
    // Colliders: a bad one, too many.
    let bad_sphere = [Collider::Sphere {
        center: Vec3::ZERO,
        radius: -1.0,
    }];
    assert!(param(run(
        &job.with_colliders(&bad_sphere),
        &mut c,
        &mut p,
        0.01
    )));
    let many = [Collider::Sphere {
        center: Vec3::ZERO,
        radius: 0.1,
    }; MAX_COLLIDERS + 1];
    assert!(matches!(
        run(&job.with_colliders(&many), &mut c, &mut p, 0.01),
        Err(Error::CapacityExceeded { .. })
    ));
    // A zero-length bone in the animated pose (tail_1 moved onto tail_0).
    let mut squashed = models.clone();
    squashed[5] = squashed[4];
    assert!(param(simulate(
        &job,
        &squashed,
        ChainState {
            current: &mut c,
            previous: &mut p,
        },
        0.01
    )));
    // Nothing was written by any failed call.
    assert_eq!((c, p), (c0, p0));
    // The lanes report the same errors and write no lane.
    let mut good = c0;
    let mut good_prev = p0;
    let bad_job = with(&|s| s.drag = -1.0);
    let mut lanes = [
        Some(LaneChain {
            job,
            models: &models,
            state: ChainState {
                current: &mut good,
                previous: &mut good_prev,
            },
        }),
        Some(LaneChain {
            job: bad_job,
            models: &models,
            state: ChainState {
                current: &mut c,
                previous: &mut p,
            },
        }),
        None,
        None,
    ];
    let result = simulate_lanes(&mut lanes, 0.01);
    assert!(matches!(result, Err(Error::InvalidParameter { .. })));
    assert_eq!(good, c0);
    // write_back and reset check their lengths.
    let mut local = s.rest_pose().to_vec();
    let mut m = models.clone();
    let mut pose = IkPose::new(&s, &mut local, &mut m, None).unwrap();
    assert!(matches!(
        write_back(&chain, &mut pose, &Mat4::IDENTITY, &c[..3]),
        Err(Error::BadLength { .. })
    ));
    assert!(matches!(
        write_back(&chain, &mut pose, &flat, &c),
        Err(Error::InvalidParameter { .. })
    ));
    assert!(matches!(
        reset(
            &chain,
            &models,
            &Mat4::IDENTITY,
            ChainState {
                current: &mut short,
                previous: &mut p,
            }
        ),
        Err(Error::BadLength { .. })
    ));
}

/// Every step under gravity, wind, a moving character and colliders keeps
/// the bone lengths within 1e-4 of the animated ones (relative: 1e-4 of
/// the length).
#[test]
fn bone_lengths_hold_after_every_step() {
    let (buf, len) = rig();
    let s = Skeleton::from_bytes(&buf.0[..len]).unwrap();
    let chain = SpringChain::new(&s, &TAIL).unwrap();
    let settings = ChainSettings {
        stiffness: 0.02,
        wind: Vec3::new(3.0, 0.0, 1.0),
        radius: 0.02,
        ..ChainSettings::default()
    };
    let thigh = [Collider::Capsule {
        a: Vec3::new(0.1, 0.95, 0.0),
        b: Vec3::new(0.1, 0.4, 0.0),
        radius: 0.08,
    }];
    let models = rest_models(&s);
    let anim: Vec<f32> = TAIL
        .windows(2)
        .map(|w| {
            (models[w[1] as usize].translation() - models[w[0] as usize].translation()).length()
        })
        .collect();
    let mut sim = Sim::new(&s, &chain, &world_at(0.0));
    for k in 1..=240 {
        let dt = 1.0 / 60.0;
        let world = world_at(k as f32 * dt);
        // Colliders move with the character.
        let placed = thigh.map(|c| c.transformed(&world));
        let job = ChainJob::new(chain)
            .with_settings(settings)
            .with_world(world)
            .with_colliders(&placed);
        sim.frame(&s, &job, dt).unwrap();
        for (i, w) in sim.cur.windows(2).enumerate() {
            let l = (w[1] - w[0]).length();
            assert!(
                (l - anim[i]).abs() <= 1e-4 * anim[i],
                "frame {k} bone {i}: {l}"
            );
        }
        // The written pose puts the joints on the particles.
        for (i, &j) in TAIL.iter().enumerate() {
            let p = world.transform_point(sim.models[j as usize].translation());
            assert!((p - sim.cur[i]).length() < 1e-4, "frame {k} joint {i}");
        }
    }
}

/// A strong side wind against angle limits, one for every bone and one per
/// bone: no bone leaves its limit (within 1e-4 rad), and each gets to it.
#[test]
fn angle_limits_hold() {
    let (buf, len) = rig();
    let s = Skeleton::from_bytes(&buf.0[..len]).unwrap();
    let chain = SpringChain::new(&s, &TAIL).unwrap();
    let settings = ChainSettings {
        stiffness: 0.0,
        wind: Vec3::new(30.0, 0.0, 0.0),
        max_angle: 0.3,
        ..ChainSettings::default()
    };
    let models = rest_models(&s);
    let per_bone = [0.1, 0.4, 0.0, 0.25];
    let uniform = ChainJob::new(chain).with_settings(settings);
    for (job, limits) in [
        (uniform, [0.3; 4]),
        (uniform.with_angle_limits(&per_bone), per_bone),
    ] {
        let mut sim = Sim::new(&s, &chain, &Mat4::IDENTITY);
        let mut reached = [0.0f32; 4];
        for k in 0..180 {
            sim.frame(&s, &job, 1.0 / 60.0).unwrap();
            for (i, w) in TAIL.windows(2).enumerate() {
                let animated =
                    models[w[1] as usize].translation() - models[w[0] as usize].translation();
                let a = angle(sim.cur[i + 1] - sim.cur[i], animated);
                assert!(a <= limits[i] + 1e-4, "frame {k} bone {i}: {a}");
                reached[i] = reached[i].max(a);
            }
        }
        for (r, l) in reached.iter().zip(&limits) {
            assert!(*r > l - 1e-3, "{reached:?} vs {limits:?}");
        }
    }
}

/// Particles of radius 0.03 falling and swinging onto a sphere, a capsule
/// and a floor (the capsule sunk into the floor, a wedge) are never left
/// more than 1e-3 inside after a step.
#[test]
fn particles_stay_out_of_colliders() {
    let (buf, len) = rig();
    let s = Skeleton::from_bytes(&buf.0[..len]).unwrap();
    let chain = SpringChain::new(&s, &TAIL).unwrap();
    let radius = 0.03;
    let colliders = [
        Collider::Sphere {
            center: Vec3::new(0.05, 0.75, -0.45),
            radius: 0.15,
        },
        Collider::Capsule {
            a: Vec3::new(-0.3, 0.8, -0.2),
            b: Vec3::new(-0.1, 0.5, -0.6),
            radius: 0.06,
        },
        Collider::plane(Vec3::new(0.0, 0.5, 0.0), Vec3::Y).unwrap(),
    ];
    let settings = ChainSettings {
        stiffness: 0.0,
        drag: 0.02,
        radius,
        wind: Vec3::new(-2.0, 0.0, 0.0),
        iterations: 8,
        ..ChainSettings::default()
    };
    let job = ChainJob::new(chain)
        .with_settings(settings)
        .with_colliders(&colliders);
    let mut sim = Sim::new(&s, &chain, &Mat4::IDENTITY);
    let mut touched = [false; 3];
    for k in 0..300 {
        let report = sim.frame(&s, &job, 1.0 / 60.0).unwrap();
        assert!(report.penetration <= 1e-3, "frame {k}: {report:?}");
        for p in &sim.cur[1..] {
            for (c, t) in colliders.iter().zip(&mut touched) {
                if let Some(contact) = c.push_out(*p, radius) {
                    assert!(contact.depth <= 1e-3, "frame {k}: {contact:?}");
                }
                *t |= c.push_out(*p, radius + 1e-3).is_some();
            }
        }
    }
    assert_eq!(touched, [true; 3], "the chain reached every collider");
}

/// A still animation with stiffness and no forces: a chain thrown off its
/// pose comes to rest on it; and its joints (written back) with it.
#[test]
fn comes_to_rest_on_a_still_pose() {
    let (buf, len) = rig();
    let s = Skeleton::from_bytes(&buf.0[..len]).unwrap();
    let chain = SpringChain::new(&s, &TAIL).unwrap();
    let settings = ChainSettings {
        stiffness: 0.1,
        drag: 0.1,
        gravity: Vec3::ZERO,
        ..ChainSettings::default()
    };
    let job = ChainJob::new(chain).with_settings(settings);
    let mut sim = Sim::new(&s, &chain, &Mat4::IDENTITY);
    let target = sim.cur.clone();
    // Thrown: displaced and moving.
    for (i, (c, p)) in sim
        .cur
        .iter_mut()
        .zip(sim.prev.iter_mut())
        .enumerate()
        .skip(1)
    {
        *c = *c + Vec3::new(0.1 * i as f32, -0.05, 0.02);
        *p = *c - Vec3::new(0.0, 0.03, 0.01);
    }
    for _ in 0..300 {
        sim.frame(&s, &job, 1.0 / 60.0).unwrap();
    }
    for (i, (c, t)) in sim.cur.iter().zip(&target).enumerate() {
        assert!((*c - *t).length() < 1e-4, "particle {i}: {c:?} vs {t:?}");
    }
    let rest = rest_models(&s);
    for &j in &TAIL {
        let d = (sim.models[j as usize].translation() - rest[j as usize].translation()).length();
        assert!(d < 1e-4, "joint {j}: {d}");
    }
    // Fully stiff: on the pose after the first step, whatever the state.
    let rigid = job.with_settings(ChainSettings {
        stiffness: 1.0,
        ..settings
    });
    sim.cur[3] = sim.cur[3] + Vec3::new(0.0, 0.3, 0.0);
    sim.frame(&s, &rigid, 1.0 / 60.0).unwrap();
    for (c, t) in sim.cur.iter().zip(&target) {
        assert!((*c - *t).length() < 1e-5);
    }
}

#[test]
fn gravity_makes_a_free_horizontal_chain_hang() {
    let (buf, len) = rig();
    let s = Skeleton::from_bytes(&buf.0[..len]).unwrap();
    let chain = SpringChain::new(&s, &TAIL).unwrap();
    let settings = ChainSettings {
        stiffness: 0.0,
        drag: 0.05,
        ..ChainSettings::default()
    };
    let job = ChainJob::new(chain).with_settings(settings);
    let mut sim = Sim::new(&s, &chain, &Mat4::IDENTITY);
    let root = sim.cur[0];
    assert!((sim.tip().y - root.y).abs() < 1e-6, "starts horizontal");
    for _ in 0..600 {
        sim.frame(&s, &job, 1.0 / 60.0).unwrap();
    }
    // Hanging straight down from the root, within a millimetre.
    let hang = root - Vec3::new(0.0, TAIL_LEN, 0.0);
    assert!((sim.tip() - hang).length() < 1e-3, "{:?}", sim.tip());
    for w in sim.cur.windows(2) {
        assert!(angle(w[1] - w[0], -Vec3::Y) < 1e-2);
    }
}

/// The same motion (a character running a figure at up to 4 m/s and
/// turning; gravity; stiffness 0.2, drag 0.1) stepped at 30, 60 and 144
/// frames per second: the tail tip stays within 1 cm (1.25 % of the tail's
/// length) of the 60 Hz run at every 1/6 s over 2 s. (Much softer chains
/// whipped this hard are chaotic: any change, the frame rate's too, moves
/// their tips by centimetres.)
#[test]
fn frame_rate_changes_little() {
    let (buf, len) = rig();
    let s = Skeleton::from_bytes(&buf.0[..len]).unwrap();
    let chain = SpringChain::new(&s, &TAIL).unwrap();
    let settings = ChainSettings {
        stiffness: 0.2,
        drag: 0.1,
        ..ChainSettings::default()
    };
    let run = |hz: usize| -> Vec<Vec3> {
        let mut sim = Sim::new(&s, &chain, &world_at(0.0));
        let dt = 1.0 / hz as f32;
        // Tip positions at every 1/6 s.
        let mut out = Vec::new();
        for k in 1..=2 * hz {
            let job = ChainJob::new(chain)
                .with_settings(settings)
                .with_world(world_at(k as f32 / hz as f32));
            sim.frame(&s, &job, dt).unwrap();
            if k % (hz / 6) == 0 {
                out.push(sim.tip());
            }
        }
        out
    };
    let reference = run(60);
    for hz in [30, 144] {
        let other = run(hz);
        assert_eq!(other.len(), reference.len());
        for (i, (a, b)) in other.iter().zip(&reference).enumerate() {
            let d = (*a - *b).length();
            assert!(d < 0.01, "{hz} Hz at {i}/6 s: {d}");
        }
    }
}

#[test]
fn runs_are_bit_identical() {
    let (buf, len) = rig();
    let s = Skeleton::from_bytes(&buf.0[..len]).unwrap();
    let chain = SpringChain::new(&s, &TAIL).unwrap();
    let colliders = [Collider::Sphere {
        center: Vec3::new(0.0, 0.8, -0.4),
        radius: 0.15,
    }];
    let run = || {
        let mut sim = Sim::new(&s, &chain, &world_at(0.0));
        for k in 1..=120 {
            let job = ChainJob::new(chain)
                .with_world(world_at(k as f32 / 60.0))
                .with_colliders(&colliders);
            sim.frame(&s, &job, 1.0 / 60.0).unwrap();
        }
        let bits = |v: &Vec3| v.to_array().map(f32::to_bits);
        let mut out: Vec<[u32; 3]> = sim.cur.iter().map(bits).collect();
        out.extend(sim.prev.iter().map(bits));
        out.extend(sim.models.iter().flat_map(|m| {
            (0..4).map(move |c| [m.at(0, c), m.at(1, c), m.at(2, c)].map(f32::to_bits))
        }));
        out
    };
    assert_eq!(run(), run());
}

#[test]
fn a_huge_step_is_clamped_and_reported_without_nan() {
    let (buf, len) = rig();
    let s = Skeleton::from_bytes(&buf.0[..len]).unwrap();
    let chain = SpringChain::new(&s, &TAIL).unwrap();
    let job = ChainJob::new(chain);
    let mut sim = Sim::new(&s, &chain, &Mat4::IDENTITY);
    let r = sim.frame(&s, &job, 1e6).unwrap();
    assert!(r.steps.clamped());
    assert_eq!(r.steps.count, job.settings.max_substeps);
    assert!(r.steps.dropped > 1e5);
    assert!(sim.cur.iter().chain(&sim.prev).all(|p| p.is_finite()));
    assert!(sim.models.iter().all(|m| m.is_finite()));
    // Forces near the f32 range fling the particles far past it within a
    // sub-step; the bones still hold them, finite and at length.
    let wild = job.with_settings(ChainSettings {
        gravity: Vec3::new(0.0, -1e38, 0.0),
        wind: Vec3::new(1e38, 0.0, -1e38),
        drag: 0.0,
        ..ChainSettings::default()
    });
    for _ in 0..4 {
        sim.frame(&s, &wild, 1.0 / 30.0).unwrap();
        assert!(sim.cur.iter().chain(&sim.prev).all(|p| p.is_finite()));
        assert!(sim.models.iter().all(|m| m.is_finite()));
        for w in sim.cur.windows(2) {
            assert!(((w[1] - w[0]).length() - 0.2).abs() < 1e-4);
        }
    }
}

/// Four different chains (lengths 5, 3, 4 and 2 joints; their own
/// settings, sub-step counts, placements and colliders) stepped in lanes
/// match the scalar path within 1e-5 at every frame, with the same reports.
#[test]
fn lanes_match_scalar() {
    let (buf, len) = rig();
    let s = Skeleton::from_bytes(&buf.0[..len]).unwrap();
    let models = rest_models(&s);
    let paths: [&[u16]; 4] = [&TAIL, &[1, 4, 5], &[0, 1, 2, 3], &[7, 8]];
    let chains = paths.map(|p| SpringChain::new(&s, p).unwrap());
    let settings = [
        ChainSettings {
            radius: 0.03,
            iterations: 6,
            ..ChainSettings::default()
        },
        ChainSettings {
            stiffness: 0.3,
            drag: 0.2,
            wind: Vec3::new(4.0, 0.0, -1.0),
            max_angle: 0.4,
            ..ChainSettings::default()
        },
        ChainSettings {
            stiffness: 0.0,
            max_step: 1.0 / 240.0,
            radius: 0.05,
            tolerance: 0.0,
            ..ChainSettings::default()
        },
        ChainSettings {
            stiffness: 1.0,
            ..ChainSettings::default()
        },
    ];
    let colliders: [Vec<Collider>; 4] = [
        alloc::vec![
            Collider::Sphere {
                center: Vec3::new(0.05, 0.75, -0.45),
                radius: 0.15,
            },
            Collider::plane(Vec3::new(0.0, 0.6, 0.0), Vec3::Y).unwrap(),
        ],
        Vec::new(),
        alloc::vec![
            Collider::Capsule {
                a: Vec3::new(0.0, 1.35, 0.1),
                b: Vec3::new(0.2, 1.6, 0.0),
                radius: 0.05,
            },
            Collider::plane(Vec3::new(0.0, 0.0, 0.0), Vec3::new(0.1, 1.0, 0.0)).unwrap(),
            Collider::Sphere {
                center: Vec3::new(0.1, 1.6, 0.0),
                radius: 0.05,
            },
        ],
        alloc::vec![Collider::Sphere {
            center: Vec3::ZERO,
            radius: 0.1,
        }],
    ];
    let offsets = [0.0, 0.3, 0.7, 1.1];
    let new_state = |l: usize| {
        let n = chains[l].joint_count();
        let mut c = alloc::vec![Vec3::ZERO; n];
        let mut p = alloc::vec![Vec3::ZERO; n];
        let w = world_at(offsets[l]);
        reset(
            &chains[l],
            &models,
            &w,
            ChainState {
                current: &mut c,
                previous: &mut p,
            },
        )
        .unwrap();
        (c, p)
    };
    let mut scalar: Vec<(Vec<Vec3>, Vec<Vec3>)> = (0..4).map(new_state).collect();
    let mut lanes: Vec<(Vec<Vec3>, Vec<Vec3>)> = (0..4).map(new_state).collect();
    let mut most_passes = [0u32; 4];
    for k in 1..=180 {
        // One frame in four drops lane 3 from the batch; it then skips the frame.
        let skip_last = k % 4 == 0;
        let jobs: [ChainJob<'_>; 4] = core::array::from_fn(|l| {
            let job = ChainJob::new(chains[l])
                .with_settings(settings[l])
                .with_world(world_at(offsets[l] + k as f32 / 60.0))
                .with_colliders(&colliders[l]);
            if l == 1 {
                job.with_angle_limits(&[0.2, 0.5])
            } else {
                job
            }
        });
        let dt = 1.0 / 60.0;
        let mut want = [None; 4];
        for (l, (c, p)) in scalar.iter_mut().enumerate() {
            if l == 3 && skip_last {
                continue;
            }
            want[l] = Some(
                simulate(
                    &jobs[l],
                    &models,
                    ChainState {
                        current: c,
                        previous: p,
                    },
                    dt,
                )
                .unwrap(),
            );
        }
        let mut it = lanes.iter_mut();
        let mut batch: [Option<LaneChain<'_, '_>>; 4] = core::array::from_fn(|l| {
            let (c, p) = it.next().unwrap();
            (!(l == 3 && skip_last)).then(|| LaneChain {
                job: jobs[l],
                models: &models,
                state: ChainState {
                    current: c,
                    previous: p,
                },
            })
        });
        let got = simulate_lanes(&mut batch, dt).unwrap();
        for l in 0..4 {
            match (want[l], got[l]) {
                (None, None) => {}
                (Some(a), Some(b)) => {
                    assert_eq!((a.steps, a.passes), (b.steps, b.passes), "lane {l}");
                    most_passes[l] = most_passes[l].max(a.passes);
                    assert!((a.penetration - b.penetration).abs() <= 1e-5);
                }
                other => panic!("lane {l}: {other:?}"),
            }
            let (sc, sp) = &scalar[l];
            let (lc, lp) = &lanes[l];
            for (a, b) in sc.iter().chain(sp).zip(lc.iter().chain(lp)) {
                let d = (*a - *b).length();
                assert!(d <= 1e-5, "frame {k} lane {l}: {a:?} vs {b:?}");
            }
        }
    }
    // The lanes with colliders did collide (a pass more than the first).
    assert!(most_passes[0] > 1 && most_passes[2] > 1, "{most_passes:?}");
}

#[test]
fn place_world_moves_joint_shapes_with_the_character() {
    let (buf, len) = rig();
    let s = Skeleton::from_bytes(&buf.0[..len]).unwrap();
    let models = rest_models(&s);
    let shapes = [JointCollider {
        joint: 10,
        shape: Collider::Sphere {
            center: Vec3::ZERO,
            radius: 0.1,
        },
    }];
    let world = Mat4::from_translation(Vec3::new(5.0, 0.0, 0.0));
    let mut out = [Collider::Sphere {
        center: Vec3::ZERO,
        radius: 0.0,
    }];
    place_world(&shapes, &models, &world, &mut out).unwrap();
    match out[0] {
        Collider::Sphere { center, radius } => {
            assert!((center - Vec3::new(5.1, 0.95, 0.0)).length() < 1e-6);
            assert!((radius - 0.1).abs() < 1e-7);
        }
        other => panic!("{other:?}"),
    }
    let mut nan = Mat4::IDENTITY;
    nan.cols[0][0] = f32::NAN;
    assert!(place_world(&shapes, &models, &nan, &mut out).is_err());
}
