//! The threaded crowd runner: determinism across thread counts, owned state,
//! and assets with fewer than three clips.

#[path = "../support/mod.rs"]
mod support;

use sinew_core::{soa_count, Mat4, SoaTransform};
use sinew_std::crowd::{self, Crowd, CrowdConfig, SinewBackend};
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
