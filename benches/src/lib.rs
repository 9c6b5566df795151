//! Shared inputs of the criterion benches in `benches/` (run them with
//! `cargo bench -p sinew-benches`).
//!
//! Every input is built from fixed seeds with `sinew_std::synthetic` or is the
//! procedural humanoid, so runs are comparable across machines and commits.
//! Each [`Character`] carries the same data in both layouts: SoA for sinew and
//! AoS for the glam baseline (`sinew_cli::baseline`).
#![deny(missing_docs)]

use sinew_cli::baseline;
use sinew_core::{f32x4, Quat, SoaTransform, Transform, Vec3};
use sinew_std::{synthetic, Humanoid, OwnedSkeleton};

/// Largest rotation of a bench pose away from rest, in radians (30°).
pub const POSE_ANGLE: f32 = core::f32::consts::FRAC_PI_6;

/// Layer weights used for blends of 1 to 4 layers (not normalised, as a game
/// would hand them over).
pub const WEIGHTS: [f32; 4] = [0.45, 0.3, 0.15, 0.1];

/// One skeleton with everything the blend and FK benches need, in both layouts.
pub struct Character {
    /// Short label used in bench ids (`"humanoid"`, `"67"`, ...).
    pub label: String,
    /// The skeleton.
    pub skeleton: OwnedSkeleton,
    /// Four local poses within [`POSE_ANGLE`] of rest.
    pub poses: Vec<Vec<SoaTransform>>,
    /// One additive (delta) pose: small rotations, small translations, unit scale.
    pub additive: Vec<SoaTransform>,
    /// Three joint masks, one per layer of the masked blend.
    pub masks: Vec<Vec<f32x4>>,
    /// [`Character::poses`] as AoS.
    pub aos_poses: Vec<Vec<baseline::Transform>>,
    /// The rest pose as AoS.
    pub aos_rest: Vec<baseline::Transform>,
    /// A subtree in the middle of the skeleton (an arm: the left clavicle and
    /// everything under it), as the joint range `first .. end`.
    pub range: (usize, usize),
}

impl Character {
    /// Builds the poses, masks and AoS copies for `skeleton` from fixed seeds.
    ///
    /// # Panics
    /// When the skeleton has no joint named `arm_root`.
    #[must_use]
    pub fn new(label: &str, skeleton: OwnedSkeleton, arm_root: &str) -> Self {
        let view = skeleton.view();
        let n = view.joint_count();
        let poses: Vec<_> = (0..4)
            .map(|i| synthetic::pose(&view, POSE_ANGLE, 1000 + i))
            .collect();
        let additive = additive_pose(&view, 77);
        let masks = (0..3).map(|i| synthetic::mask(&view, 500 + i)).collect();
        let aos_poses = poses.iter().map(|p| baseline::to_aos(p, n)).collect();
        let aos_rest = baseline::to_aos(view.rest_pose(), n);
        let first = view
            .find_joint(arm_root)
            .unwrap_or_else(|| panic!("{label}: no joint {arm_root}"));
        let range = (first, view.subtree_end(first));
        Character {
            label: label.to_owned(),
            skeleton,
            poses,
            additive,
            masks,
            aos_poses,
            aos_rest,
            range,
        }
    }

    /// Number of joints.
    #[must_use]
    pub fn joints(&self) -> usize {
        self.skeleton.joint_count()
    }
}

/// The bench characters: the procedural humanoid (70 joints) and synthetic
/// rigs of 67, 368 and 1007 joints (seed 2024).
#[must_use]
pub fn characters() -> Vec<Character> {
    let mut out = vec![Character::new(
        "humanoid",
        Humanoid::default_rate().skeleton,
        "clavicle_l",
    )];
    for n in [67, 368, 1007] {
        out.push(Character::new(
            &n.to_string(),
            synthetic::skeleton(n, 2024),
            "clavicle_l_00",
        ));
    }
    out
}

/// An additive pose: `rest⁻¹ · pose` rotations and `pose - rest` translations
/// of a random pose, unit scale; padding lanes identity.
#[must_use]
pub fn additive_pose(skeleton: &sinew_core::Skeleton<'_>, seed: u64) -> Vec<SoaTransform> {
    let pose = synthetic::pose(skeleton, POSE_ANGLE * 0.5, seed);
    let rest = skeleton.rest_pose();
    let mut out = vec![SoaTransform::IDENTITY; skeleton.soa_count()];
    for j in 0..skeleton.joint_count() {
        let (p, r) = (pose[j / 4].get(j % 4), rest[j / 4].get(j % 4));
        let d: Quat = (r.rotation.conjugate() * p.rotation).normalize();
        out[j / 4].set(
            j % 4,
            &Transform::new(p.translation - r.translation, d, Vec3::ONE),
        );
    }
    out
}

/// `count` pseudo-random times in `[-duration, 3 duration)` (SplitMix64, fixed `seed`).
#[must_use]
pub fn random_times(count: usize, duration: f32, seed: u64) -> Vec<f32> {
    let mut s = seed;
    (0..count)
        .map(|_| {
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            let u = ((z ^ (z >> 31)) >> 40) as f32 / (1u64 << 24) as f32;
            (4.0 * u - 1.0) * duration
        })
        .collect()
}

/// The criterion settings of the quick benches: 1 s warm-up, 2 s of
/// measurement, 30 samples (enough for medians on a shared host; the
/// import bench, whose iterations take seconds, sets its own).
#[must_use]
pub fn config() -> criterion::Criterion {
    criterion::Criterion::default()
        .warm_up_time(std::time::Duration::from_secs(1))
        .measurement_time(std::time::Duration::from_secs(2))
        .sample_size(30)
}

/// A fixed-seed xorshift in `[-1, 1)`: the same inputs on every run.
pub fn noise(seed: &mut u32) -> f32 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 17;
    *seed ^= *seed << 5;
    (*seed >> 8) as f32 / (1u32 << 23) as f32 - 1.0
}
