//! Foot placement: validity (every bad input gives its error, pose and
//! state untouched), flat ground, steps and slopes on the procedural
//! humanoid, the spring, and a CMU walk over a staircase and a 20° slope
//! (no foot below the ground, bounded pelvis speed).

#[path = "../support/mod.rs"]
mod support;

use std::path::Path;

use sinew_core::fk::{local_to_model, FkJob};
use sinew_core::ik::foot::{FootLeg, FootPlacement, FootState, Ground, Spring};
use sinew_core::ik::IkPose;
use sinew_core::{procedural, Error, Mat4, Skeleton, SoaTransform, Vec3};
use sinew_std::import::bvh::{self, BvhOptions};

const FOOT: f32 = 0.02; // the humanoid's ankle height over y = 0 at rest

struct Humanoid {
    bytes: sinew_core::Align16<[u8; procedural::HUMANOID_SKELETON_BYTES]>,
}

impl Humanoid {
    fn new() -> Self {
        Humanoid {
            bytes: procedural::humanoid_skeleton_bytes().unwrap(),
        }
    }
    fn skel(&self) -> Skeleton<'_> {
        Skeleton::from_bytes(&self.bytes.0).unwrap()
    }
}

fn placement(s: &Skeleton<'_>) -> FootPlacement<2> {
    let j = |n: &str| s.find_joint(n).unwrap();
    let leg = |side: &str| FootLeg {
        hip: j(&format!("thigh_{side}")),
        knee: j(&format!("calf_{side}")),
        ankle: j(&format!("foot_{side}")),
        knee_axis: Vec3::new(-1.0, 0.0, 0.0),
    };
    FootPlacement {
        pelvis: j("pelvis"),
        legs: [leg("l"), leg("r")],
        foot_height: FOOT,
        max_tilt: 0.5,
        max_pelvis_offset: 0.3,
        half_life: 0.0,
        soften: 1.0,
    }
}

/// The rest pose with the knees bent a little (so legs can reach lower).
fn pose(s: &Skeleton<'_>) -> (Vec<SoaTransform>, Vec<Mat4>) {
    let local = s.rest_pose().to_vec();
    let mut models = vec![Mat4::IDENTITY; s.joint_count()];
    local_to_model(&FkJob::new(s, &local), &mut models).unwrap();
    (local, models)
}

fn flat(h: f32) -> impl Fn(f32, f32) -> Option<(f32, Vec3)> {
    move |_, _| Some((h, Vec3::Y))
}

#[test]
fn every_invalid_input_gives_its_error_and_leaves_pose_and_state_untouched() {
    let h = Humanoid::new();
    let s = h.skel();
    let good = placement(&s);
    let hand = s.find_joint("hand_l").unwrap();
    let mut cases: Vec<(FootPlacement<2>, f32, f32, &str)> = Vec::new();
    let mut p = good;
    p.pelvis = 999;
    cases.push((p, 0.0, 0.01, "oob"));
    let mut p = good;
    p.pelvis = hand;
    cases.push((p, 0.0, 0.01, "param"));
    let mut p = good;
    p.legs[0].knee = p.legs[1].knee;
    cases.push((p, 0.0, 0.01, "param"));
    let mut p = good;
    p.legs[1].ankle = 999;
    cases.push((p, 0.0, 0.01, "oob"));
    let mut p = good;
    p.legs[0].knee_axis = Vec3::ZERO;
    cases.push((p, 0.0, 0.01, "param"));
    for (field, bad) in [(0, -1.0), (1, f32::NAN), (2, 4.0), (3, -0.1), (4, 1.5)] {
        let mut p = good;
        match field {
            0 => p.foot_height = bad,
            1 => p.half_life = bad,
            2 => p.max_tilt = bad,
            3 => p.max_pelvis_offset = bad,
            _ => p.soften = bad,
        }
        cases.push((p, 0.0, 0.01, "param"));
    }
    cases.push((good, f32::NAN, 0.01, "nonfinite"));
    cases.push((good, 0.0, -0.01, "param"));
    cases.push((good, 0.0, f32::INFINITY, "param"));
    let ground = flat(0.0);
    let check = |p: &FootPlacement<2>, floor: f32, dt: f32, g: &dyn Ground, want: &str| {
        let (mut local, mut models) = pose(&s);
        let (l0, m0) = (local.clone(), models.clone());
        let mut state = FootState::<2>::new();
        state.pelvis.value = 0.25;
        let st0 = state;
        let mut ik = IkPose::new(&s, &mut local, &mut models, None).unwrap();
        let got = p.solve(&mut ik, g, floor, dt, &mut state);
        let ok = match want {
            "oob" => matches!(got, Err(Error::JointOutOfRange { .. })),
            "param" => matches!(got, Err(Error::InvalidParameter { .. })),
            _ => matches!(got, Err(Error::NonFinite { .. })),
        };
        assert!(ok, "{want}: {got:?} for {p:?} floor {floor} dt {dt}");
        assert_eq!(local, l0);
        assert_eq!(models, m0);
        assert_eq!(state, st0);
    };
    for (p, floor, dt, want) in &cases {
        check(p, *floor, *dt, &ground, want);
    }
    // A ground probe giving a non-finite height or a zero normal.
    let nan_height = |_: f32, _: f32| Some((f32::NAN, Vec3::Y));
    let zero_normal = |_: f32, _: f32| Some((0.0, Vec3::ZERO));
    check(&good, 0.0, 0.01, &nan_height, "nonfinite");
    check(&good, 0.0, 0.01, &zero_normal, "nonfinite");
}

#[test]
fn flat_ground_at_the_floor_changes_nothing() {
    let h = Humanoid::new();
    let s = h.skel();
    let (mut local, mut models) = pose(&s);
    let m0 = models.clone();
    let mut state = FootState::new();
    let mut ik = IkPose::new(&s, &mut local, &mut models, None).unwrap();
    let r = placement(&s)
        .solve(&mut ik, &flat(0.0), 0.0, 1.0 / 60.0, &mut state)
        .unwrap();
    assert_eq!(r.grounded, [true, true]);
    assert!(r.pelvis_offset.abs() < 1e-6);
    for (a, b) in models.iter().zip(&m0) {
        assert!(support::mat_close(a, b, 1e-5));
    }
}

#[test]
fn ground_under_one_foot_raises_it_and_lower_ground_drops_the_pelvis() {
    let h = Humanoid::new();
    let s = h.skel();
    let p = placement(&s);
    let (la, ra) = (p.legs[0].ankle, p.legs[1].ankle);
    // Left foot on a 0.1 m step (x > 0 is the left side): the pelvis stays.
    let step = |x: f32, _: f32| Some((if x > 0.0 { 0.1 } else { 0.0 }, Vec3::Y));
    let (mut local, mut models) = pose(&s);
    let pelvis0 = models[p.pelvis].translation();
    let mut state = FootState::new();
    let mut ik = IkPose::new(&s, &mut local, &mut models, None).unwrap();
    let r = p
        .solve(&mut ik, &step, 0.0, 1.0 / 60.0, &mut state)
        .unwrap();
    assert!(r.pelvis_offset.abs() < 1e-6 && r.reached == [true, true]);
    assert!((models[la].translation().y - (0.1 + FOOT)).abs() < 1e-5);
    assert!((models[ra].translation().y - FOOT).abs() < 1e-5);
    assert!((models[p.pelvis].translation() - pelvis0).length() < 1e-6);
    // Right foot 0.15 m lower: the pelvis drops 0.15 so it can reach.
    let hole = |x: f32, _: f32| Some((if x < 0.0 { -0.15 } else { 0.0 }, Vec3::Y));
    let (mut local, mut models) = pose(&s);
    let mut state = FootState::new();
    let mut ik = IkPose::new(&s, &mut local, &mut models, None).unwrap();
    let r = p
        .solve(&mut ik, &hole, 0.0, 1.0 / 60.0, &mut state)
        .unwrap();
    assert!((r.pelvis_offset + 0.15).abs() < 1e-6, "{r:?}");
    assert!((models[p.pelvis].translation().y - (pelvis0.y - 0.15)).abs() < 1e-5);
    assert!((models[ra].translation().y - (FOOT - 0.15)).abs() < 1e-5);
    assert!((models[la].translation().y - FOOT).abs() < 1e-5);
    assert_eq!(r.reached, [true, true]);
}

#[test]
fn feet_tilt_to_the_normal_up_to_the_limit() {
    let h = Humanoid::new();
    let s = h.skel();
    let mut p = placement(&s);
    for (slope, limit) in [(0.3f32, 0.5f32), (0.8, 0.5)] {
        p.max_tilt = limit;
        let n = Vec3::new(0.0, slope.cos(), -slope.sin());
        let ground = move |_: f32, _: f32| Some((0.0, n));
        let (mut local, mut models) = pose(&s);
        let before = models[p.legs[0].ankle].rotation();
        let mut state = FootState::new();
        let mut ik = IkPose::new(&s, &mut local, &mut models, None).unwrap();
        p.solve(&mut ik, &ground, 0.0, 1.0 / 60.0, &mut state)
            .unwrap();
        let after = models[p.legs[0].ankle].rotation();
        let turned = (after * before.conjugate()).angle();
        let want = slope.min(limit);
        assert!(
            (turned - want).abs() < 1e-3,
            "{slope}: turned {turned}, want {want}"
        );
    }
}

#[test]
fn springs_halve_the_distance_every_half_life_without_overshoot() {
    let mut s = Spring::default();
    let mut t = 0.0;
    let dt = 1.0 / 120.0;
    let mut prev = 0.0;
    while t < 0.2 - 1e-6 {
        let v = s.update(1.0, 0.1, dt);
        assert!(v >= prev && v <= 1.0);
        prev = v;
        t += dt;
    }
    // From rest, a critically damped spring is at 1 − (1 + kt) e^{−kt}
    // after t; after two half-lives (kt = 4 ln 2 · … ) it is past 0.75.
    assert!(prev > 0.75 && prev < 1.0, "{prev}");
    // Any step size gives the same curve.
    let mut a = Spring::default();
    let mut b = Spring::default();
    a.update(1.0, 0.1, 0.2);
    for _ in 0..24 {
        b.update(1.0, 0.1, 0.2 / 24.0);
    }
    assert!((a.value - prev).abs() < 1e-4 && (a.value - b.value).abs() < 1e-5);
    // Zero half-life snaps.
    assert_eq!(Spring::default().update(3.0, 0.0, 0.01), 3.0);
}

// ---------------------------------------------------------------------------
// A CMU walk over a staircase and a slope
// ---------------------------------------------------------------------------

/// Half-life of the pelvis and feet springs in the walk, seconds.
const HALF_LIFE: f32 = 0.12;

/// CMU's length unit in metres (inches / 0.45).
const CMU_UNIT: f32 = 0.0254 / 0.45;

struct Terrain {
    origin: Vec3,
    dir: Vec3,
    kind: Kind,
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    Stairs { rise: f32, run: f32 },
    Slope { grade: f32 },
}

impl Terrain {
    fn height(&self, x: f32, z: f32) -> f32 {
        let s = (x - self.origin.x) * self.dir.x + (z - self.origin.z) * self.dir.z;
        match self.kind {
            Kind::Stairs { rise, run } => rise * (s / run).floor().max(0.0),
            Kind::Slope { grade } => grade * s,
        }
    }
    fn normal(&self) -> Vec3 {
        match self.kind {
            Kind::Stairs { .. } => Vec3::Y,
            Kind::Slope { grade } => Vec3::new(-grade * self.dir.x, 1.0, -grade * self.dir.z)
                .try_normalize()
                .unwrap(),
        }
    }
}

impl Ground for Terrain {
    fn probe(&self, x: f32, z: f32) -> Option<(f32, Vec3)> {
        Some((self.height(x, z), self.normal()))
    }
}

#[test]
fn a_cmu_walk_keeps_its_feet_on_stairs_and_a_slope() {
    let Some(dir) = support::shared_data("bvh") else {
        eprintln!("skipped: ../shared/data/bvh is absent");
        return;
    };
    let path = dir.join("cmu/mb-friendly/02_01.bvh");
    if !Path::new(&path).exists() {
        eprintln!("skipped: {} is absent", path.display());
        return;
    }
    let asset = bvh::load(
        &path,
        &BvhOptions {
            scale: CMU_UNIT,
            end_sites: false,
            ..BvhOptions::default()
        },
    )
    .unwrap();
    let s = asset.skeleton.view();
    let clip = asset.clips[0].view();
    let dt = 1.0 / clip.sample_rate();
    let frames = clip.frame_count();
    let j = |n: &str| s.find_joint(n).unwrap();
    let leg = |side: &str| FootLeg {
        hip: j(&format!("{side}UpLeg")),
        knee: j(&format!("{side}Leg")),
        ankle: j(&format!("{side}Foot")),
        knee_axis: Vec3::new(-1.0, 0.0, 0.0),
    };
    let legs = [leg("Left"), leg("Right")];
    let hips = j("Hips");
    let fk = |f: usize, root: &Mat4| {
        let mut m = vec![Mat4::IDENTITY; s.joint_count()];
        local_to_model(
            &FkJob::new(&s, clip.frame(f).unwrap()).with_root(root),
            &mut m,
        )
        .unwrap();
        m
    };
    // The floor of the capture: the lowest ankle over the clip.
    let mut foot_height = f32::INFINITY;
    for f in 0..frames {
        let m = fk(f, &Mat4::IDENTITY);
        for l in &legs {
            foot_height = foot_height.min(m[l.ankle].translation().y);
        }
    }
    assert!(foot_height > 0.0 && foot_height < 0.2, "{foot_height}");
    // The same count on the flat floor the walk was captured on.
    let flat_planted = (0..frames)
        .filter(|&f| {
            let m = fk(f, &Mat4::IDENTITY);
            legs.iter()
                .any(|l| m[l.ankle].translation().y - foot_height < 0.01)
        })
        .count();
    let first = fk(0, &Mat4::IDENTITY)[hips].translation();
    let last = fk(frames - 1, &Mat4::IDENTITY)[hips].translation();
    let walk = Vec3::new(last.x - first.x, 0.0, last.z - first.z);
    assert!(walk.length() > 1.0, "not a walk: {walk:?}");
    let placement = FootPlacement {
        pelvis: hips,
        legs,
        foot_height,
        max_tilt: 0.6,
        max_pelvis_offset: 0.4,
        half_life: HALF_LIFE,
        soften: 0.97,
    };
    for kind in [
        Kind::Stairs {
            rise: 0.12,
            run: 0.3,
        },
        Kind::Slope {
            grade: 20f32.to_radians().tan(),
        },
    ] {
        let terrain = Terrain {
            origin: first,
            dir: walk.try_normalize().unwrap(),
            kind,
        };
        let mut state = FootState::new();
        // The character controller: the root follows the ground under the
        // hips through its own spring (a stair's edge is no jump).
        let mut root_h = Spring::default();
        let mut worst_depth = 0.0f32;
        let (mut max_speed, mut max_anim_speed) = (0.0f32, 0.0f32);
        let (mut prev, mut prev_anim) = (None::<f32>, None::<f32>);
        let mut reached = 0;
        // Frames with a foot within 1 cm of the ground: about as many as
        // on the flat floor (feet do not float above the steps).
        let mut planted = 0;
        for f in 0..frames {
            let h0 = fk(f, &Mat4::IDENTITY)[hips].translation();
            let target = terrain.height(h0.x, h0.z);
            let floor = if f == 0 {
                root_h.update(target, 0.0, dt)
            } else {
                root_h.update(target, 0.15, dt)
            };
            let root = Mat4::from_translation(Vec3::new(0.0, floor, 0.0));
            let mut local = clip.frame(f).unwrap().to_vec();
            let mut models = fk(f, &root);
            let anim_pelvis = models[hips].translation().y;
            let mut ik = IkPose::new(&s, &mut local, &mut models, Some(&root)).unwrap();
            let r = placement
                .solve(&mut ik, &terrain, floor, dt, &mut state)
                .unwrap();
            reached += r.reached.iter().filter(|&&x| x).count();
            let mut lowest = f32::INFINITY;
            for l in &legs {
                let a = models[l.ankle].translation();
                let depth = terrain.height(a.x, a.z) - (a.y - foot_height);
                worst_depth = worst_depth.max(depth);
                lowest = lowest.min(-depth);
            }
            if lowest < 0.01 {
                planted += 1;
            }
            let y = models[hips].translation().y;
            if let (Some(p), Some(pa)) = (prev, prev_anim) {
                max_speed = max_speed.max((y - p).abs() / dt);
                max_anim_speed = max_anim_speed.max((anim_pelvis - pa).abs() / dt);
            }
            prev = Some(y);
            prev_anim = Some(anim_pelvis);
        }
        eprintln!(
            "{kind:?}: {planted} of {frames} frames with a foot within 1 cm of the ground \
             ({flat_planted} on the flat), deepest foot {:.2} mm below ground, pelvis speed max {max_speed:.3} m/s \
             (animated + root {max_anim_speed:.3} m/s), {reached} of {} leg solves reached",
            worst_depth * 1000.0,
            2 * frames
        );
        assert!(
            worst_depth <= 1e-3,
            "{kind:?}: a foot {worst_depth} m below ground"
        );
        assert!(
            planted * 10 >= flat_planted * 9,
            "{kind:?}: a foot on the ground in {planted} frames, {flat_planted} on the flat"
        );
        // The bound: the walk's own pelvis motion and the root's climb,
        // plus what the pelvis spring adds. After a step change Δ of its
        // target a critically damped spring peaks at speed Δ·k/e
        // (k = 2 ln 2 / half-life): 0.51 m/s for a 0.12 m stair.
        let spring_peak = 0.12 * (2.0 * std::f32::consts::LN_2 / HALF_LIFE) / std::f32::consts::E;
        assert!(
            max_speed <= max_anim_speed + spring_peak + 0.05,
            "{kind:?}: pelvis vertical speed {max_speed} m/s"
        );
    }
}
