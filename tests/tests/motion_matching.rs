//! Motion matching end to end: databases built from clips (the procedural
//! humanoid's locomotion; CMU mocap when `../shared/data` is present), the
//! features checked against the clips they came from, mirrored copies
//! against the originals, the searches against each other, and the
//! controller driving a character: it follows what it is asked, its poses
//! never jump at a transition, and bad input is an error.

#![allow(clippy::float_cmp)]

#[path = "../support/mod.rs"]
mod support;

use sinew_core::clip::{ClipSource, RawClip, TimeMode};
use sinew_core::fk::{local_to_model, FkJob};
use sinew_core::mix::root_motion::{rotate_y, wrap_angle};
use sinew_core::mix::transition::InertialBlock;
use sinew_core::motion_matching::search::reference;
use sinew_core::motion_matching::{
    ground_of, Database, Desired, FeatureKind, MatchBuffers, Matcher, MatcherConfig,
};
use sinew_core::soa::get_joint;
use sinew_core::{Error, Mat4, Skeleton, SoaTransform, Vec3};
use sinew_std::import::bvh::{self, BvhOptions};
use sinew_std::matching::{self, BuildError, BuildOptions, Facing, FeatureSpec, OwnedDatabase};
use sinew_std::{Humanoid, OwnedClip};

/// A fixed-seed xorshift in `[-1, 1)`.
fn noise(seed: &mut u32) -> f32 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 17;
    *seed ^= *seed << 5;
    (*seed >> 8) as f32 / (1u32 << 23) as f32 - 1.0
}

fn procedural() -> (Humanoid, Vec<OwnedClip>) {
    let h = Humanoid::new(30.0).unwrap();
    let clips = matching::procedural_locomotion(&h).unwrap();
    (h, clips)
}

fn views(clips: &[OwnedClip]) -> Vec<RawClip<'_>> {
    clips.iter().map(OwnedClip::view).collect()
}

/// The raw (un-normalized) features of database frame `i`.
fn raw_features(db: &Database<'_>, i: usize) -> Vec<f32> {
    let mut f = vec![0.0; db.feature_count()];
    db.frame_features(i, &mut f).unwrap();
    f.iter()
        .zip(db.mean())
        .zip(db.scale())
        .map(|((&x, &m), &s)| x / s + m)
        .collect()
}

/// The root frame of clip `clip` at time `t` and the model-space position
/// of `joint`, computed here from the clip with FK (independently of the
/// builder).
fn clip_frame(
    sk: &Skeleton<'_>,
    clip: &RawClip<'_>,
    t: f32,
    axis: Vec3,
    joint: usize,
) -> (Vec3, f32, Vec3) {
    let mut pose = vec![SoaTransform::IDENTITY; sk.soa_count()];
    ClipSource::sample(
        clip,
        t.min(clip.duration()),
        TimeMode::Clamp,
        &[],
        &mut pose,
    )
    .unwrap();
    let mut models = vec![Mat4::IDENTITY; sk.joint_count()];
    local_to_model(&FkJob::new(sk, &pose), &mut models).unwrap();
    let g = ground_of(&get_joint(&pose, 0).unwrap(), axis);
    (g.position, g.yaw, models[joint].translation())
}

/// Features of the procedural database equal what FK of the clips gives:
/// trajectory positions and directions, foot positions and velocities.
#[test]
fn features_match_the_clips() {
    let (h, clips) = procedural();
    let sk = h.skeleton.view();
    let v = views(&clips);
    let opts = BuildOptions::standard(&sk).unwrap();
    let owned = matching::build(&sk, &v, &opts).unwrap();
    let db = owned.view();
    assert_eq!(db.facing_axis(), Vec3::Z, "the humanoid faces +Z");
    let rate = db.sample_rate();
    for (r, range) in db.ranges().iter().enumerate() {
        let clip = &v[range.clip as usize];
        let expected = (clip.duration() * rate + 1e-3).floor() as u32 + 1;
        assert_eq!(range.len, expected, "range {r}");
        for local in [0usize, 7, 31] {
            let i = range.start as usize + local;
            let t = local as f32 / rate;
            let raw = raw_features(&db, i);
            let (p0, yaw0, _) = clip_frame(&sk, clip, t, Vec3::Z, 0);
            for g in db.groups() {
                let f = g.first as usize;
                let got = &raw[f..f + g.width as usize];
                match g.feature_kind() {
                    FeatureKind::TrajectoryPosition => {
                        let tk = t + g.frames_ahead as f32 / rate;
                        if tk > clip.duration() {
                            continue;
                        }
                        let (pk, _, _) = clip_frame(&sk, clip, tk, Vec3::Z, 0);
                        let want = rotate_y(pk - p0, -yaw0);
                        assert!(
                            (got[0] - want.x).abs() < 2e-3 && (got[1] - want.z).abs() < 2e-3,
                            "range {r} frame {local}: trajectory {got:?} vs {want:?}"
                        );
                    }
                    FeatureKind::TrajectoryDirection => {
                        let tk = t + g.frames_ahead as f32 / rate;
                        if tk > clip.duration() {
                            continue;
                        }
                        let (_, yk, _) = clip_frame(&sk, clip, tk, Vec3::Z, 0);
                        let d = wrap_angle(yk - yaw0);
                        assert!((got[0] - d.sin()).abs() < 2e-3 && (got[1] - d.cos()).abs() < 2e-3);
                    }
                    FeatureKind::Position => {
                        let (_, _, pj) = clip_frame(&sk, clip, t, Vec3::Z, g.joint as usize);
                        let want = rotate_y(pj - p0, -yaw0);
                        assert!((Vec3::new(got[0], got[1], got[2]) - want).length() < 2e-3);
                    }
                    FeatureKind::Velocity => {
                        let h = 1.0 / rate;
                        let (a, b) = (t - h, t + h);
                        if a < 0.0 || b > clip.duration() {
                            continue;
                        }
                        let (_, _, pa) = clip_frame(&sk, clip, a, Vec3::Z, g.joint as usize);
                        let (_, _, pb) = clip_frame(&sk, clip, b, Vec3::Z, g.joint as usize);
                        let want = rotate_y((pb - pa) * (0.5 / h), -yaw0);
                        assert!(
                            (Vec3::new(got[0], got[1], got[2]) - want).length() < 1e-2,
                            "velocity {got:?} vs {want:?}"
                        );
                    }
                }
            }
        }
    }
    // The straight walk moves forward: its trajectory 60 frames ahead is
    // a second of walking straight ahead (the procedural walk is slow).
    let g60 = db
        .groups()
        .iter()
        .find(|g| g.feature_kind() == FeatureKind::TrajectoryPosition && g.frames_ahead == 60)
        .unwrap();
    let raw = raw_features(&db, 0);
    let ahead = &raw[g60.first as usize..g60.first as usize + 2];
    assert!(ahead[1] > 0.4 && ahead[0].abs() < 0.05, "{ahead:?}");
    // Frames near the end of a range are not searchable.
    let r0 = db.ranges()[0];
    assert!(db.is_searchable(r0.start as usize));
    assert!(!db.is_searchable((r0.start + r0.len - 1) as usize));
    assert!(!db.is_searchable((r0.start + r0.len - 60) as usize));
    assert!(db.is_searchable((r0.start + r0.len - 61) as usize));
}

/// A mirrored copy's features are the original's reflected: trajectory
/// and joint x negated, left and right feet swapped.
#[test]
fn mirrored_ranges_reflect_the_originals() {
    let (h, clips) = procedural();
    let sk = h.skeleton.view();
    let v = views(&clips);
    let mut opts = BuildOptions::standard(&sk).unwrap();
    opts.mirror = true;
    let owned = matching::build(&sk, &v, &opts).unwrap();
    let db = owned.view();
    let half = db.ranges().len() / 2;
    assert_eq!(half, clips.len());
    let groups = db.groups();
    let partner_group = |gi: usize| -> usize {
        let g = groups[gi];
        if g.feature_kind().is_trajectory() {
            return gi;
        }
        let partner = db.mirror_map()[g.joint as usize] as u32;
        groups
            .iter()
            .position(|o| o.kind == g.kind && o.joint == partner)
            .unwrap()
    };
    for r in 0..half {
        let (a, b) = (db.ranges()[r], db.ranges()[r + half]);
        assert!(!a.mirrored() && b.mirrored() && a.len == b.len && a.clip == b.clip);
        for local in (0..a.len as usize).step_by(13) {
            let x = raw_features(&db, a.start as usize + local);
            let m = raw_features(&db, b.start as usize + local);
            for (gi, g) in groups.iter().enumerate() {
                let o = &groups[partner_group(gi)];
                for c in 0..g.width as usize {
                    let original = x[o.first as usize + c];
                    let flip = if c == 0 { -1.0 } else { 1.0 };
                    let got = m[g.first as usize + c];
                    assert!(
                        (got - flip * original).abs() < 1e-4,
                        "range {r} frame {local} group {gi} component {c}: {got} vs {}",
                        flip * original
                    );
                }
            }
        }
    }
}

/// On the real database, a frame's own features find it (cost 0 or a tie
/// at a lower frame), and the three searches agree on noisy queries.
#[test]
fn searches_agree_on_cmu() {
    let Some(dir) = support::shared_data("bvh/cmu/daz-friendly") else {
        return;
    };
    let files: Vec<_> = ["07_01.bvh", "07_02.bvh", "08_01.bvh", "09_01.bvh"]
        .iter()
        .map(|f| dir.join(f))
        .collect();
    let opts = BvhOptions {
        end_sites: false,
        ..BvhOptions::default()
    };
    let assets: Vec<_> = files.iter().map(|f| bvh::load(f, &opts).unwrap()).collect();
    let sk = assets[0].skeleton.view();
    let clips: Vec<RawClip<'_>> = assets.iter().map(|a| a.clips[0].view()).collect();
    let mut bo = BuildOptions::standard(&sk).unwrap();
    bo.mirror = true;
    let owned = matching::build(&sk, &clips, &bo).unwrap();
    let db = owned.view();
    // The facing axis follows the walking direction and is horizontal.
    assert!(db.facing_axis().y.abs() < 1e-6);
    let mut seed = 0x1234_5678u32;
    let mut q = vec![0.0f32; db.feature_count()];
    for i in (0..db.frame_count()).step_by(97) {
        db.frame_features(i, &mut q).unwrap();
        let m = db.search(&q, f32::INFINITY).unwrap().unwrap();
        if db.is_searchable(i) {
            assert_eq!(m.cost, 0.0);
            assert!(m.frame as usize <= i);
        }
        for x in &mut q {
            *x += 0.3 * noise(&mut seed);
        }
        let expected = reference::search(&db, &q, f32::INFINITY).unwrap();
        assert_eq!(db.search(&q, f32::INFINITY).unwrap(), expected);
        assert_eq!(db.search_brute(&q, f32::INFINITY).unwrap(), expected);
    }
}

/// The furthest any joint moves between two frames `dt` apart in any clip,
/// in the root frame (the root's ground motion taken out).
fn fastest_joint(sk: &Skeleton<'_>, clips: &[RawClip<'_>], dt: f32) -> f32 {
    let mut pose = vec![SoaTransform::IDENTITY; sk.soa_count()];
    let mut models = vec![Mat4::IDENTITY; sk.joint_count()];
    let mut fastest = 0.0f32;
    for clip in clips {
        let mut last: Option<Vec<Vec3>> = None;
        let mut t = 0.0;
        while t <= clip.duration() {
            ClipSource::sample(clip, t, TimeMode::Clamp, &[], &mut pose).unwrap();
            local_to_model(&FkJob::new(sk, &pose), &mut models).unwrap();
            let g = ground_of(&get_joint(&pose, 0).unwrap(), Vec3::Z);
            let now: Vec<Vec3> = models
                .iter()
                .map(|m| rotate_y(m.translation() - g.position, -g.yaw))
                .collect();
            if let Some(prev) = &last {
                for (a, c) in prev.iter().zip(&now) {
                    fastest = fastest.max((*a - *c).length());
                }
            }
            last = Some(now);
            t += dt;
        }
    }
    fastest
}

struct Buffers {
    pose: Vec<SoaTransform>,
    previous: Vec<SoaTransform>,
    target: Vec<SoaTransform>,
    target_previous: Vec<SoaTransform>,
    inertial: Vec<InertialBlock>,
    query: Vec<f32>,
}

impl Buffers {
    fn new(n: usize, features: usize) -> Self {
        Buffers {
            pose: vec![SoaTransform::IDENTITY; n],
            previous: vec![SoaTransform::IDENTITY; n],
            target: vec![SoaTransform::IDENTITY; n],
            target_previous: vec![SoaTransform::IDENTITY; n],
            inertial: vec![InertialBlock::default(); n],
            query: vec![0.0; features],
        }
    }

    fn view(&mut self) -> MatchBuffers<'_> {
        MatchBuffers {
            rest: &[],
            pose: &mut self.pose,
            previous: &mut self.previous,
            target: &mut self.target,
            target_previous: &mut self.target_previous,
            scratch: &mut [],
            inertial: &mut self.inertial,
            query: &mut self.query,
        }
    }
}

/// Drives the procedural character: straight, then a hard turn, then a
/// stop. It follows the asked-for heading and speed, searches at the
/// interval, transitions, and no joint jumps between frames at any point.
#[test]
fn controller_follows_the_input_without_pops() {
    let (h, clips) = procedural();
    let sk = h.skeleton.view();
    let v = views(&clips);
    let owned: OwnedDatabase =
        matching::build(&sk, &v, &BuildOptions::standard(&sk).unwrap()).unwrap();
    let db = owned.view();
    let mut b = Buffers::new(sk.soa_count(), db.feature_count());
    let mut m = Matcher::new(MatcherConfig::default(), Vec3::ZERO, 0.0).unwrap();
    let dt = 1.0 / 60.0;
    let mut models = vec![Mat4::IDENTITY; sk.joint_count()];
    let mut last: Option<Vec<Vec3>> = None;
    let (mut searches, mut transitions, mut worst) = (0, 0, 0.0f32);
    for i in 0..600 {
        let t = i as f32 * dt;
        let desired = if t < 4.0 {
            Desired {
                velocity: Vec3::new(0.0, 0.0, 1.3),
                yaw: 0.0,
            }
        } else if t < 7.0 {
            Desired {
                velocity: Vec3::new(1.3, 0.0, 0.0),
                yaw: std::f32::consts::FRAC_PI_2,
            }
        } else {
            Desired {
                velocity: Vec3::ZERO,
                yaw: std::f32::consts::FRAC_PI_2,
            }
        };
        let step = m.update(&db, &v, &desired, dt, &mut b.view()).unwrap();
        searches += usize::from(step.searched);
        transitions += usize::from(step.transitioned);
        if step.searched {
            assert!(step.cost.is_finite());
        }
        local_to_model(&FkJob::new(&sk, &b.pose), &mut models).unwrap();
        let now: Vec<Vec3> = models.iter().map(Mat4::translation).collect();
        if let Some(prev) = &last {
            for (a, c) in prev.iter().zip(&now) {
                worst = worst.max((*a - *c).length());
            }
        }
        last = Some(now);
        if (3.5..4.0).contains(&t) {
            // Walking straight ahead at about the asked speed.
            assert!(
                wrap_angle(m.character.yaw).abs() < 0.3,
                "yaw {}",
                m.character.yaw
            );
        }
    }
    // Turned to +X, then stopped near where it turned.
    assert!(
        wrap_angle(m.character.yaw - std::f32::consts::FRAC_PI_2).abs() < 0.35,
        "yaw {}",
        m.character.yaw
    );
    assert!(m.character.position.z > 3.0, "{:?}", m.character.position);
    assert!(m.character.position.x > 2.0, "{:?}", m.character.position);
    assert!(searches >= 60, "{searches} searches");
    assert!(transitions >= 2, "{transitions} transitions");
    // In the root frame, no joint moves much further in a frame than the
    // clips' own fastest joint does: transitions are blended, not cut.
    let natural = fastest_joint(&sk, &v, dt);
    assert!(
        worst < 1.25 * natural,
        "a joint moved {worst} m in one frame; the clips' fastest moves {natural} m"
    );
}

#[test]
fn bad_input_is_an_error() {
    let (h, clips) = procedural();
    let sk = h.skeleton.view();
    let v = views(&clips);
    let std = BuildOptions::standard(&sk).unwrap();
    let err = |o: &BuildOptions| matching::build(&sk, &v, o).unwrap_err();
    let mut o = std.clone();
    o.features.push(FeatureSpec::Position {
        joint: "nose".into(),
        weight: 1.0,
    });
    assert_eq!(
        err(&o),
        BuildError::Options("no joint named \"nose\"".into())
    );
    let mut o = std.clone();
    o.features[0] = FeatureSpec::TrajectoryPosition {
        frames_ahead: 20,
        weight: 0.0,
    };
    assert!(matches!(err(&o), BuildError::Options(m) if m.contains("weight")));
    let mut o = std.clone();
    o.root = Some("spine_01".into());
    assert!(matches!(err(&o), BuildError::Options(m) if m.contains("has a parent")));
    let mut o = std.clone();
    o.sample_rate = f32::NAN;
    assert!(matches!(err(&o), BuildError::Options(_)));
    let none: Vec<RawClip<'_>> = Vec::new();
    assert!(matches!(
        matching::build(&sk, &none, &std),
        Err(BuildError::Options(_))
    ));
    let mut o = std.clone();
    o.facing = Facing::Axis(Vec3::Y);
    assert!(matches!(err(&o), BuildError::Core(Error::Corrupt { .. })));

    // Every frame unsearchable: the first update says so.
    let mut o = std.clone();
    o.end_margin = 100_000;
    let owned = matching::build(&sk, &v, &o).unwrap();
    let db = owned.view();
    let mut b = Buffers::new(sk.soa_count(), db.feature_count());
    let mut m = Matcher::new(MatcherConfig::default(), Vec3::ZERO, 0.0).unwrap();
    let d = Desired::default();
    assert!(matches!(
        m.update(&db, &v, &d, 1.0 / 60.0, &mut b.view()),
        Err(Error::InvalidParameter { .. })
    ));

    let owned = matching::build(&sk, &v, &std).unwrap();
    let db = owned.view();
    let mut b = Buffers::new(sk.soa_count(), db.feature_count());
    let mut m = Matcher::new(MatcherConfig::default(), Vec3::ZERO, 0.0).unwrap();
    assert!(matches!(
        m.update(&db, &v, &d, f32::NAN, &mut b.view()),
        Err(Error::NonFinite { .. })
    ));
    assert!(matches!(
        m.update(&db, &v, &d, 0.0, &mut b.view()),
        Err(Error::NonFinite { .. })
    ));
    let nan = Desired {
        velocity: Vec3::new(f32::NAN, 0.0, 0.0),
        yaw: 0.0,
    };
    assert!(matches!(
        m.update(&db, &v, &nan, 0.1, &mut b.view()),
        Err(Error::NonFinite { .. })
    ));
    b.query.pop();
    assert!(matches!(
        m.update(&db, &v, &d, 0.1, &mut b.view()),
        Err(Error::BadLength { .. })
    ));
    let mut b = Buffers::new(sk.soa_count(), db.feature_count());
    // Clips missing for the database's ranges.
    assert!(matches!(
        m.update(&db, &v[..2], &d, 0.1, &mut b.view()),
        Err(Error::UnknownClip { .. })
    ));
    let bad = MatcherConfig {
        search_interval: 0.0,
        ..MatcherConfig::default()
    };
    assert!(matches!(
        Matcher::new(bad, Vec3::ZERO, 0.0),
        Err(Error::InvalidParameter { .. })
    ));
    assert!(matches!(
        Matcher::new(MatcherConfig::default(), Vec3::new(f32::NAN, 0.0, 0.0), 0.0),
        Err(Error::NonFinite { .. })
    ));
    // A sided joint with no partner cannot be mirrored.
    let lonely = sinew_std::OwnedSkeleton::build(&[
        sinew_core::JointDef {
            name: "hips",
            parent: None,
            rest: sinew_core::Transform::IDENTITY,
        },
        sinew_core::JointDef {
            name: "LeftFoot",
            parent: Some(0),
            rest: sinew_core::Transform::IDENTITY,
        },
    ])
    .unwrap();
    assert!(
        matches!(matching::mirror_map(&lonely.view()), Err(BuildError::Options(m)) if m.contains("RightFoot"))
    );
}
