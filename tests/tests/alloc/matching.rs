//! Motion matching: the controller playing compressed clips (sampling,
//! searches, transitions, root motion) and both searches, every frame.

use sinew_core::compressed::CompressedClip;
use sinew_core::mix::transition::InertialBlock;
use sinew_core::motion_matching::{Desired, MatchBuffers, Matcher, MatcherConfig};
use sinew_core::{Error, SoaTransform, Vec3};
use sinew_std::compress::{compress, CompressOptions};
use sinew_std::matching::{self, BuildOptions};
use sinew_std::Humanoid;

use crate::frames_allocate_nothing;

pub fn motion_matching_allocates_nothing() {
    let h = Humanoid::new(30.0).expect("humanoid");
    let sk = h.skeleton.view();
    let clips = matching::procedural_locomotion(&h).expect("locomotion");
    let raw: Vec<_> = clips.iter().map(|c| c.view()).collect();
    let owned = matching::build(&sk, &raw, &BuildOptions::standard(&sk).expect("schema"))
        .expect("database");
    let db = owned.view();
    let packed: Vec<_> = clips
        .iter()
        .map(|c| {
            compress(&sk, &c.view(), &CompressOptions::default())
                .expect("compress")
                .0
        })
        .collect();
    let compressed: Vec<CompressedClip<'_>> = packed.iter().map(|c| c.view()).collect();
    let n = sk.soa_count();
    let mut pose = vec![SoaTransform::IDENTITY; n];
    let mut previous = pose.clone();
    let mut target = pose.clone();
    let mut target_previous = pose.clone();
    let mut scratch = pose.clone();
    let mut inertial = vec![InertialBlock::default(); n];
    let mut query = vec![0.0f32; db.feature_count()];
    let mut m = Matcher::new(MatcherConfig::default(), Vec3::ZERO, 0.0).expect("matcher");
    let (mut searches, mut transitions) = (0usize, 0usize);
    frames_allocate_nothing("motion matching", 600, |i| -> Result<f32, Error> {
        // Walk ahead, turn hard at 3 s and 6 s, stop at 8 s.
        let t = i as f32 / 60.0;
        let yaw: f32 = if t < 3.0 {
            0.0
        } else if t < 6.0 {
            1.5
        } else {
            -1.5
        };
        let speed = if t < 8.0 { 1.0 } else { 0.0 };
        let desired = Desired {
            velocity: Vec3::new(yaw.sin() * speed, 0.0, yaw.cos() * speed),
            yaw,
        };
        let mut b = MatchBuffers {
            rest: sk.rest_pose(),
            pose: &mut pose,
            previous: &mut previous,
            target: &mut target,
            target_previous: &mut target_previous,
            scratch: &mut scratch,
            inertial: &mut inertial,
            query: &mut query,
        };
        let step = m.update(&db, &compressed, &desired, 1.0 / 60.0, &mut b)?;
        searches += usize::from(step.searched);
        transitions += usize::from(step.transitioned);
        let a = db.search(&query, f32::INFINITY)?;
        let b = db.search_brute(&query, f32::INFINITY)?;
        Ok(a.map_or(0.0, |m| m.cost) + b.map_or(0.0, |m| m.cost) + m.character.position.x)
    });
    assert!(
        searches > 50 && transitions > 1,
        "{searches} searches, {transitions} transitions"
    );
}
