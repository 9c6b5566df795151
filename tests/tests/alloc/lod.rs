//! Joint and update-rate LOD: the core kernels (prefix sampling of raw and
//! compressed clips, LOD FK, pose and model interpolation, the rate plan
//! and due list) and `LodCrowd::step` on a worker thread.

use sinew_core::clip::TimeMode;
use sinew_core::lod::rate::{self, RateTiers};
use sinew_core::lod::{self, HUMANOID_RULES};
use sinew_core::{Error, Mat4, SoaTransform};
use sinew_std::compress::{compress, CompressOptions};
use sinew_std::crowd::lod::{Locomotion, LodCrowd, LodInputs, LodSettings, OwnedLod, RateSettings};
use sinew_std::Humanoid;

use crate::{count_allocations, frames_allocate_nothing};

/// The core's LOD kernels, 300 frames at every level.
pub fn kernels_allocate_nothing() {
    let h = Humanoid::default_rate();
    let s = h.skeleton.view();
    let owned = OwnedLod::from_rules(&s, &HUMANOID_RULES, 3).expect("layout");
    let l = owned.view();
    let raw = owned.remap_clip(&h.clips[1].view()).expect("clip");
    let (c, _) = compress(&s, &h.clips[1].view(), &CompressOptions::default()).expect("compress");
    let comp = owned.remap_compressed(&c.view()).expect("reorder");
    let (raw, comp) = (raw.view(), comp.view());
    let n = 512;
    let importance: Vec<f32> = (0..n).map(|i| -(((i * 7919) % 997) as f32)).collect();
    let tiers = RateTiers {
        full: -50.0,
        half: -200.0,
        quarter: -600.0,
    };
    let (mut order, mut periods, mut due) = (vec![0u32; n], vec![0u8; n], vec![0u32; n]);
    let mut a = vec![SoaTransform::IDENTITY; l.soa_count()];
    let mut b = a.clone();
    let mut o = a.clone();
    let mut models = vec![Mat4::IDENTITY; l.joint_count()];
    let mut mo = models.clone();
    frames_allocate_nothing("LOD kernels", 300, |f| -> Result<f32, Error> {
        let level = f % 3;
        let t = f as f32 / 60.0;
        lod::sample(&l, level, &raw, t, TimeMode::Loop, &mut a)?;
        lod::sample(&l, level, &comp, t, TimeMode::Loop, &mut b)?;
        let blocks = l.kept_blocks(level)?;
        rate::interpolate_poses(&a[..blocks], &b[..blocks], 0.25, &mut o[..blocks])?;
        lod::local_to_model(&l, level, &o, None, &mut models)?;
        rate::interpolate_models(&models, &models, 0.5, &mut mo)?;
        let report = rate::plan(
            &importance,
            &tiers,
            n / 8 + f % 16,
            &mut order,
            &mut periods,
        )?;
        let k = rate::due(f as u64, &periods, &mut due)?;
        Ok(mo[5].cols[3][1] + k as f32 + report.peak() as f32)
    });
}

/// `LodCrowd::step` with joint levels, update rates, a budget and caller
/// locomotion, 64 characters on the caller and a worker thread.
pub fn crowd_step_allocates_nothing_on_any_thread() {
    let h = Humanoid::default_rate();
    let s = h.skeleton.view();
    let owned = OwnedLod::from_rules(&s, &HUMANOID_RULES, 3).expect("layout");
    let clips: Vec<_> = h
        .clips
        .iter()
        .map(|c| {
            let (c, _) = compress(&s, &c.view(), &CompressOptions::default()).expect("compress");
            owned.remap_compressed(&c.view()).expect("reorder")
        })
        .collect();
    let views: Vec<_> = clips.iter().map(|c| c.view()).collect();
    let n = 64;
    let settings = LodSettings {
        rate: Some(RateSettings {
            tiers: RateTiers {
                full: -10.0,
                half: -30.0,
                quarter: -60.0,
            },
            budget: 16,
            replan_every: 8,
        }),
        ..LodSettings::default()
    };
    let mut crowd = LodCrowd::new(owned.view(), &views, n, Some(2), settings).expect("crowd");
    let levels: Vec<u8> = (0..n).map(|i| (i % 3) as u8).collect();
    let importance: Vec<f32> = (0..n).map(|i| -2.0 * i as f32).collect();
    let loco: Vec<Locomotion> = (0..n)
        .map(|i| Locomotion {
            speed: 0.1 * i as f32,
            heading: 0.05 * i as f32,
        })
        .collect();
    let inputs = LodInputs {
        levels: Some(&levels),
        importance: Some(&importance),
        locomotion: Some(&loco),
    };
    let before = crowd.checksum();
    let (counted, result) = count_allocations(|| -> Result<(), Error> {
        for f in 0..300 {
            crowd.step(1.0 / 60.0, f == 299, &inputs)?;
        }
        Ok(())
    });
    result.unwrap_or_else(|e| panic!("a LOD crowd step failed: {e}"));
    assert_eq!(
        counted.allocations, 0,
        "LodCrowd::step allocated {} times ({} bytes)",
        counted.allocations, counted.bytes
    );
    assert_ne!(crowd.checksum(), before, "the characters moved");
    assert!(
        crowd.counts().periods[3] > 0,
        "some characters interpolated"
    );
}
