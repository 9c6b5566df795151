//! The threaded crowd runner: determinism across thread counts, owned state,
//! assets with fewer than three clips, and foot placement on a slope (the
//! same as solving every character serially, feet where the ground puts
//! them).

#[path = "../support/mod.rs"]
mod support;

use sinew_core::blend::{self, BlendJob, BlendLayer};
use sinew_core::clip::{ClipSource, TimeMode};
use sinew_core::fk::{local_to_model, FkJob};
use sinew_core::ik::foot::{FootLeg, FootPlacement, FootState, Ground};
use sinew_core::ik::IkPose;
use sinew_core::{soa_count, Error, Mat4, SoaTransform, Vec3};
use sinew_std::crowd::{self, Crowd, CrowdConfig, CrowdFeet, SinewBackend};
use sinew_std::{Humanoid, OwnedClip};

fn cfg(characters: usize, threads: usize) -> CrowdConfig {
    CrowdConfig {
        characters,
        seconds: 0.5,
        fps: 60.0,
        threads: Some(threads),
    }
}

#[test]
fn validity_no_clips_is_an_error() {
    let h = Humanoid::default_rate();
    assert!(matches!(
        SinewBackend::from_clips(&h.skeleton, &[]),
        Err(sinew_core::Error::BadLength {
            buffer: "clips",
            ..
        })
    ));
    // A clip of another skeleton's size.
    let small = OwnedClip::new("small", 30.0, 1, vec![SoaTransform::IDENTITY; 2]).unwrap();
    assert!(matches!(
        SinewBackend::from_clips(&h.skeleton, std::slice::from_ref(&small)),
        Err(sinew_core::Error::BadLength {
            buffer: "clip pose",
            ..
        })
    ));
}

#[test]
fn checksum_is_identical_for_any_thread_count() {
    let h = Humanoid::default_rate();
    let backend = SinewBackend::new(&h);
    // 37 characters: batches of 8 with a partial last batch.
    let reports: Vec<_> = [1, 2, 3]
        .iter()
        .map(|&t| crowd::run(&backend, &cfg(37, t)).unwrap())
        .collect();
    assert_eq!(reports[0].checksum, reports[1].checksum);
    assert_eq!(reports[0].checksum, reports[2].checksum);
    assert_eq!(reports[0].frames, 30);
    assert_eq!(reports[0].joints, 70);
}

#[test]
fn checksum_depends_on_the_characters() {
    let h = Humanoid::default_rate();
    let backend = SinewBackend::new(&h);
    let a = crowd::run(&backend, &cfg(8, 1)).unwrap().checksum;
    let b = crowd::run(&backend, &cfg(9, 1)).unwrap().checksum;
    assert_ne!(a, b);
}

#[test]
fn crowd_owns_state_and_exposes_models_after_each_step() {
    let h = Humanoid::default_rate();
    let backend = SinewBackend::new(&h);
    let mut c = Crowd::new(&backend, 10, Some(2)).unwrap();
    assert_eq!(c.len(), 10);
    assert!(c.models(10).is_none());
    c.step(1.0 / 60.0, false).unwrap();
    let first: Vec<[f32; 16]> = c.models(3).unwrap().to_vec();
    c.step(1.0 / 60.0, false).unwrap();
    let second = c.models(3).unwrap();
    assert_eq!(c.frame(), 2);
    assert_eq!(second.len(), 70);
    assert!(first.iter().chain(second).flatten().all(|v| v.is_finite()));
    assert_ne!(
        first.as_slice(),
        second,
        "the character moved between frames"
    );
    // Every model matrix is affine with a unit-length rotation part (unit scale rig).
    for m in second {
        let m = Mat4 {
            cols: [
                [m[0], m[1], m[2], m[3]],
                [m[4], m[5], m[6], m[7]],
                [m[8], m[9], m[10], m[11]],
                [m[12], m[13], m[14], m[15]],
            ],
        };
        assert_eq!(m.cols[0][3], 0.0);
        assert_eq!(m.cols[3][3], 1.0);
        let len = (m.cols[0][0].powi(2) + m.cols[0][1].powi(2) + m.cols[0][2].powi(2)).sqrt();
        assert!((len - 1.0).abs() < 1e-4, "{len}");
    }
    // Pelvis of a walking character stays near its rest height.
    let pelvis = second[0][13];
    assert!((0.8..1.1).contains(&pelvis), "{pelvis}");
}

#[test]
fn one_clip_and_one_frame_assets_play() {
    let h = Humanoid::default_rate();
    let n = soa_count(h.skeleton.joint_count());
    // One clip: every slot uses it.
    let one = std::slice::from_ref(&h.clips[1]);
    let r = crowd::run(
        &SinewBackend::from_clips(&h.skeleton, one).unwrap(),
        &cfg(5, 2),
    )
    .unwrap();
    assert_eq!(r.characters, 5);
    // A one-frame clip (a T-pose) has zero duration and must not produce NaN.
    let pose = OwnedClip::new("pose", 30.0, n, h.skeleton.view().rest_pose().to_vec()).unwrap();
    let backend = SinewBackend::from_clips(&h.skeleton, std::slice::from_ref(&pose)).unwrap();
    let mut c = Crowd::new(&backend, 2, Some(1)).unwrap();
    c.step(1.0 / 60.0, true).unwrap();
    assert!(c.models(1).unwrap().iter().flatten().all(|v| v.is_finite()));
}

/// The crowd over compressed clips (rest-pose stripped: the backend hands
/// the skeleton's rest pose to sampling) puts every joint within the
/// compressor's object-space bound of the crowd over the raw clips.
#[test]
fn compressed_clips_drive_the_crowd_like_raw_ones() {
    let h = support::humanoid();
    let (owned, opts) = support::humanoid_compressed();
    let packed: Vec<_> = owned.iter().map(|c| c.view()).collect();
    let raw = SinewBackend::new(h);
    let compressed = SinewBackend::with_clips(h.skeleton.view(), &packed).unwrap();
    let mut cr = Crowd::new(&raw, 9, Some(2)).unwrap();
    let mut cc = Crowd::new(&compressed, 9, Some(2)).unwrap();
    for _ in 0..40 {
        cr.step(1.0 / 60.0, false).unwrap();
        cc.step(1.0 / 60.0, false).unwrap();
        for k in 0..9 {
            for (a, b) in cr.models(k).unwrap().iter().zip(cc.models(k).unwrap()) {
                let d =
                    ((a[12] - b[12]).powi(2) + (a[13] - b[13]).powi(2) + (a[14] - b[14]).powi(2))
                        .sqrt();
                assert!(d <= opts.error * 1.5, "character {k}: {d}");
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Foot placement
// ---------------------------------------------------------------------------

/// The humanoid's ankle height over y = 0 at rest.
const FOOT: f32 = 0.02;

/// A plane through the world origin rising `grade` per metre along the
/// horizontal unit `dir`.
struct Slope {
    grade: f32,
    dir: Vec3,
}

impl Slope {
    fn twenty_degrees() -> Slope {
        Slope {
            grade: 20f32.to_radians().tan(),
            dir: Vec3::new(0.6, 0.0, 0.8),
        }
    }

    fn height(&self, x: f32, z: f32) -> f32 {
        self.grade * (x * self.dir.x + z * self.dir.z)
    }
}

impl Ground for Slope {
    fn probe(&self, x: f32, z: f32) -> Option<(f32, Vec3)> {
        let n = Vec3::new(-self.grade * self.dir.x, 1.0, -self.grade * self.dir.z);
        Some((self.height(x, z), n))
    }
}

fn humanoid_feet(h: &Humanoid, half_life: f32) -> FootPlacement<2> {
    let s = h.skeleton.view();
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
        half_life,
        soften: 1.0,
    }
}

/// A 4 x 4 grid of places, 1.7 m apart, away from the origin.
fn grid16() -> Vec<[f32; 2]> {
    (0..16)
        .map(|i| [-2.5 + 1.7 * (i % 4) as f32, 1.0 + 1.7 * (i / 4) as f32])
        .collect()
}

#[test]
fn feet_validity() {
    let h = Humanoid::default_rate();
    let backend = SinewBackend::new(&h);
    let slope = Slope::twenty_degrees();
    let positions = grid16();
    let feet = CrowdFeet {
        placement: humanoid_feet(&h, 0.1),
        ground: &slope,
        positions: &positions[..15],
    };
    // One place short.
    let crowd = Crowd::new(&backend, 16, Some(1)).unwrap();
    assert!(matches!(
        crowd.with_feet(feet).err(),
        Some(Error::BadLength {
            buffer: "crowd positions",
            expected: 16,
            actual: 15
        })
    ));
    // Legs the solver rejects, found before any frame runs.
    let mut bad = feet;
    bad.positions = &positions;
    bad.placement.pelvis = h.skeleton.view().find_joint("hand_l").unwrap();
    let crowd = Crowd::new(&backend, 16, Some(1)).unwrap();
    assert!(matches!(
        crowd.with_feet(bad).err(),
        Some(Error::InvalidParameter { .. })
    ));
    // No feet: no report; with feet, one per character after a step.
    let mut crowd = Crowd::new(&backend, 16, Some(1)).unwrap();
    crowd.step(1.0 / 60.0, false).unwrap();
    assert!(crowd.feet_report(0).is_none());
    let mut good = feet;
    good.positions = &positions;
    let mut crowd = Crowd::new(&backend, 16, Some(1))
        .unwrap()
        .with_feet(good)
        .unwrap();
    assert!(crowd.feet_report(3).is_none());
    crowd.step(1.0 / 60.0, false).unwrap();
    assert!(crowd.feet_report(15).is_some() && crowd.feet_report(16).is_none());
    assert!(crowd.stages().ik > std::time::Duration::ZERO);
}

/// 16 characters on 2 threads with springs, stepped 45 frames: every
/// character's matrices and report are bit for bit those of sampling,
/// blending, FK and `FootPlacement::solve` run for it alone, serially,
/// with its own `FootState` and the ground shifted to where it stands.
#[test]
fn crowd_feet_match_foot_placement_run_serially() {
    let h = Humanoid::default_rate();
    let s = h.skeleton.view();
    let backend = SinewBackend::new(&h);
    let slope = Slope::twenty_degrees();
    let positions = grid16();
    let placement = humanoid_feet(&h, 0.1);
    let mut crowd = Crowd::new(&backend, 16, Some(2))
        .unwrap()
        .with_feet(CrowdFeet {
            placement,
            ground: &slope,
            positions: &positions,
        })
        .unwrap();
    let clips = [h.clips[0].view(), h.clips[1].view(), h.clips[2].view()];
    let blocks = s.soa_count();
    let mut sampled = [0; 3].map(|_| vec![SoaTransform::IDENTITY; blocks]);
    let mut local = vec![SoaTransform::IDENTITY; blocks];
    let mut models = vec![Mat4::IDENTITY; s.joint_count()];
    let mut states = [FootState::<2>::new(); 16];
    let dt = 1.0 / 60.0;
    for _ in 0..45 {
        crowd.step(dt, false).unwrap();
        for (i, (state, &[x, z])) in states.iter_mut().zip(&positions).enumerate() {
            let d = crowd.drive(i).unwrap();
            for c in 0..3 {
                ClipSource::sample(
                    &clips[c],
                    d.times[c],
                    TimeMode::Loop,
                    s.rest_pose(),
                    &mut sampled[c],
                )
                .unwrap();
            }
            let layers = [0, 1, 2].map(|c| BlendLayer::new(&sampled[c], d.weights[c]));
            blend::blend(&BlendJob::new(&layers, &[], s.rest_pose()), &mut local).unwrap();
            local_to_model(&FkJob::new(&s, &local), &mut models).unwrap();
            let h0 = slope.height(x, z);
            let ground = |px: f32, pz: f32| slope.probe(px + x, pz + z).map(|(h, n)| (h - h0, n));
            let mut pose = IkPose::new(&s, &mut local, &mut models, None).unwrap();
            let report = placement.solve(&mut pose, &ground, 0.0, dt, state).unwrap();
            assert_eq!(crowd.feet_report(i), Some(report), "character {i}");
            let want: &[u32] = bytemuck::cast_slice(&models);
            let got: &[u32] = bytemuck::cast_slice(crowd.models(i).unwrap());
            assert_eq!(want, got, "character {i}");
        }
    }
}

/// Without smoothing, every foot of 16 characters on a 20 degree slope
/// stands exactly as high above the ground as the animation has it above
/// its flat floor (and at least `FOOT`), within 1 mm, over two seconds of
/// walking, jogging and running.
#[test]
fn crowd_feet_stand_on_a_slope_within_a_millimetre() {
    let h = Humanoid::default_rate();
    let backend = SinewBackend::new(&h);
    let slope = Slope::twenty_degrees();
    let positions = grid16();
    let placement = humanoid_feet(&h, 0.0);
    let mut plain = Crowd::new(&backend, 16, Some(2)).unwrap();
    let mut crowd = Crowd::new(&backend, 16, Some(2))
        .unwrap()
        .with_feet(CrowdFeet {
            placement,
            ground: &slope,
            positions: &positions,
        })
        .unwrap();
    let ankle = |m: &[[f32; 16]], j: usize| Vec3::new(m[j][12], m[j][13], m[j][14]);
    let (mut worst, mut moved) = (0.0f32, 0.0f32);
    for _ in 0..120 {
        plain.step(1.0 / 60.0, false).unwrap();
        crowd.step(1.0 / 60.0, false).unwrap();
        for (i, &[x, z]) in positions.iter().enumerate() {
            let r = crowd.feet_report(i).unwrap();
            assert_eq!(r.grounded, [true, true], "character {i}");
            for leg in &placement.legs {
                let animated = ankle(plain.models(i).unwrap(), leg.ankle);
                let placed = ankle(crowd.models(i).unwrap(), leg.ankle);
                // The ground under the foot, in the character's space.
                let g = slope.height(placed.x + x, placed.z + z) - slope.height(x, z);
                let want = g + animated.y.max(FOOT);
                worst = worst.max((placed.y - want).abs());
                moved = moved.max((placed.y - animated.y).abs());
                assert!(
                    (placed.y - want).abs() <= 1e-3,
                    "character {i}: ankle at {}, ground {g}, animated {}",
                    placed.y,
                    animated.y
                );
                assert!(
                    (placed.x - animated.x).abs() < 1e-3 && (placed.z - animated.z).abs() < 1e-3
                );
            }
        }
    }
    eprintln!(
        "largest distance of an ankle from its height above the slope: {:.3} mm; largest move {:.0} mm",
        worst * 1e3,
        moved * 1e3
    );
    // On a 20 degree slope, a foot a stride's half from the origin has
    // ground a tenth of a metre above or below the origin's: feet moved.
    assert!(moved > 0.05, "{moved}");
}
