//! Deterministic synthetic data for benches and tests: character-like
//! skeletons of any size, random poses and joint masks.
//!
//! Everything is a pure function of its arguments (a tiny SplitMix64
//! generator, no global state), so bench inputs are the same on every run and
//! every machine.

use core::f32::consts::PI;

use sinew_core::skeleton::JointDef;
use sinew_core::{f32x4, soa_count, Quat, Skeleton, SoaTransform, Transform, Vec3, MAX_JOINTS};

use crate::assets::OwnedSkeleton;

/// SplitMix64: a small, fast, statistically decent generator (Steele et al. 2014).
#[derive(Clone, Debug)]
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed ^ 0x5EED_5EED_D1CE_F00D)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    fn unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 * (1.0 / (1u64 << 24) as f32)
    }

    /// Uniform in `[lo, hi)`.
    fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.unit()
    }

    /// Uniform integer in `0 .. n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// A uniformly distributed unit vector.
    fn direction(&mut self) -> Vec3 {
        let z = self.range(-1.0, 1.0);
        let a = self.range(0.0, 2.0 * PI);
        let r = (1.0 - z * z).max(0.0).sqrt();
        Vec3::new(r * a.cos(), r * a.sin(), z)
    }

    /// A rotation about a random axis by an angle uniform in `[-max_angle, max_angle]`.
    fn rotation(&mut self, max_angle: f32) -> Quat {
        let axis = self.direction();
        Quat::from_axis_angle(axis, self.range(-max_angle, max_angle))
    }
}

/// Skeleton under construction: joint definitions with owned names, capped at a budget.
struct Rig {
    budget: usize,
    names: Vec<String>,
    parents: Vec<Option<usize>>,
    rest: Vec<Transform>,
    rng: Rng,
}

impl Rig {
    /// Adds a joint (random rest rotation within ±0.4 rad, translation of
    /// 2-20 cm along roughly `dir`), or returns `None` once the budget is spent.
    fn add(&mut self, name: String, parent: Option<usize>, dir: Vec3) -> Option<usize> {
        if self.names.len() >= self.budget {
            return None;
        }
        let len = self.rng.range(0.02, 0.20);
        let jitter = self.rng.direction() * 0.3;
        let d = dir + jitter;
        let d = d * (1.0 / d.length().max(1e-6));
        let translation = if parent.is_some() {
            d * len
        } else {
            Vec3::new(0.0, 1.0, 0.0)
        };
        let rotation = self.rng.rotation(0.4);
        self.names.push(name);
        self.parents.push(parent);
        self.rest
            .push(Transform::from_translation_rotation(translation, rotation));
        Some(self.names.len() - 1)
    }

    /// A chain of `len` joints under `parent`; returns the last joint added.
    fn chain(&mut self, base: &str, parent: Option<usize>, len: usize, dir: Vec3) -> Option<usize> {
        let mut p = parent?;
        for k in 0..len {
            p = self.add(format!("{base}_{k:02}"), Some(p), dir)?;
        }
        Some(p)
    }

    fn full(&self) -> bool {
        self.names.len() >= self.budget
    }
}

/// A plausible character-like hierarchy of `joints` joints (clamped to
/// `1..=MAX_JOINTS`): a spine chain with limbs and finger-like branches, depth
/// and branching like real rigs (not a flat star, not a single chain), random
/// rest transforms (unit rotations, translations 2-20 cm, scale 1).
/// Deterministic for a seed.
///
/// Joints are added in order of importance (pelvis, spine, head, arms, legs,
/// hands and fingers, twist and face joints), so small counts give the
/// trunk of a character; counts beyond a full body (~90 joints) add
/// hair/cloth/accessory chains of 3-8 joints hung from the spine, head,
/// pelvis and hands, as production rigs with secondary motion do.
#[must_use]
pub fn skeleton(joints: usize, seed: u64) -> OwnedSkeleton {
    let budget = joints.clamp(1, MAX_JOINTS);
    let mut rig = Rig {
        budget,
        names: Vec::with_capacity(budget),
        parents: Vec::with_capacity(budget),
        rest: Vec::with_capacity(budget),
        rng: Rng::new(seed),
    };
    let (up, down) = (Vec3::new(0.0, 1.0, 0.0), Vec3::new(0.0, -1.0, 0.0));
    let fwd = Vec3::new(0.0, 0.0, 1.0);
    let side = |s: f32| Vec3::new(s, 0.0, 0.0);

    let pelvis = rig.add("pelvis".into(), None, up);
    let spine_len = 3 + budget / 200; // 3 for typical game rigs, up to 8 for film rigs
    let chest = rig.chain("spine", pelvis, spine_len, up);
    let neck = rig.chain("neck", chest, 1 + budget / 400, up);
    let head = rig.chain("head", neck, 1, up);

    // Limbs: clavicle → upper → lower → hand; thigh → calf → foot → toe.
    let mut arms = [(None, None, None); 2];
    let mut legs = [(None, None, None); 2];
    for (i, (tag, s)) in [("l", 1.0f32), ("r", -1.0f32)].into_iter().enumerate() {
        let clav = rig.chain(&format!("clavicle_{tag}"), chest, 1, side(s));
        let upper = rig.chain(&format!("upper_arm_{tag}"), clav, 1, side(s));
        let lower = rig.chain(&format!("lower_arm_{tag}"), upper, 1, side(s));
        arms[i] = (
            upper,
            lower,
            rig.chain(&format!("hand_{tag}"), lower, 1, side(s)),
        );
        let thigh = rig.chain(&format!("thigh_{tag}"), pelvis, 1, down);
        let calf = rig.chain(&format!("calf_{tag}"), thigh, 1, down);
        let foot = rig.chain(&format!("foot_{tag}"), calf, 1, down);
        legs[i] = (thigh, calf, rig.chain(&format!("toe_{tag}"), foot, 1, fwd));
    }
    // Five fingers of three phalanges per hand.
    for (i, (tag, s)) in [("l", 1.0f32), ("r", -1.0f32)].into_iter().enumerate() {
        for f in 0..5 {
            rig.chain(&format!("finger_{f}_{tag}"), arms[i].2, 3, side(s));
        }
    }
    // Twist and face joints: leaves off the limb segments and the head.
    for (i, tag) in ["l", "r"].into_iter().enumerate() {
        let (upper, lower, _) = arms[i];
        let (thigh, calf, _) = legs[i];
        for (seg, name) in [
            (upper, "upper_arm"),
            (lower, "lower_arm"),
            (thigh, "thigh"),
            (calf, "calf"),
        ] {
            rig.chain(&format!("{name}_twist_{tag}"), seg, 1, down);
        }
    }
    for (name, len) in [
        ("jaw", 1),
        ("eye_l", 1),
        ("eye_r", 1),
        ("brow_l", 2),
        ("brow_r", 2),
        ("lip", 2),
    ] {
        rig.chain(name, head, len, fwd);
    }

    // Secondary chains (hair, cloth, straps, props) until the budget is spent.
    let anchors: Vec<usize> = [
        pelvis, chest, head, arms[0].2, arms[1].2, legs[0].0, legs[1].0,
    ]
    .into_iter()
    .flatten()
    .collect();
    let mut k = 0usize;
    while !rig.full() && !anchors.is_empty() {
        let anchor = anchors[rig.rng.below(anchors.len())];
        let len = 3 + rig.rng.below(6);
        let dir = rig.rng.direction();
        // A third of the chains fork once halfway down, like a skirt panel or braid.
        let mid = rig.chain(&format!("chain_{k:03}"), Some(anchor), len / 2 + 1, dir);
        rig.chain(&format!("chain_{k:03}_a"), mid, len - len / 2, dir);
        if rig.rng.below(3) == 0 {
            rig.chain(&format!("chain_{k:03}_b"), mid, len - len / 2, dir);
        }
        k += 1;
    }

    let defs: Vec<JointDef<'_>> = rig
        .names
        .iter()
        .zip(&rig.parents)
        .zip(&rig.rest)
        .map(|((name, &parent), &rest)| JointDef { name, parent, rest })
        .collect();
    match OwnedSkeleton::build(&defs) {
        Ok(s) => s,
        Err(e) => unreachable!("synthetic joints are a valid forest with finite transforms: {e}"),
    }
}

/// A random local pose for `skeleton`: unit rotations within ±`max_angle`
/// radians of the rest rotation, translations within 1 cm of rest, scale 1;
/// padding lanes identity. Deterministic for a seed.
#[must_use]
pub fn pose(skeleton: &Skeleton<'_>, max_angle: f32, seed: u64) -> Vec<SoaTransform> {
    let mut rng = Rng::new(seed.wrapping_add(0xA11CE));
    let rest = skeleton.rest_pose();
    let mut out = vec![SoaTransform::IDENTITY; skeleton.soa_count()];
    for j in 0..skeleton.joint_count() {
        let r = rest[j / 4].get(j % 4);
        let offset = rng.direction() * rng.range(0.0, 0.01);
        let t = Transform::new(
            r.translation + offset,
            (r.rotation * rng.rotation(max_angle)).normalize(),
            Vec3::ONE,
        );
        out[j / 4].set(j % 4, &t);
    }
    out
}

/// Per-joint weights (a mask) with values in `[0, 1]`, one `f32x4` per block.
///
/// About a quarter of the joints get 0, a quarter 1 and the rest a uniform
/// value in between; padding lanes are 0. Deterministic for a seed.
#[must_use]
pub fn mask(skeleton: &Skeleton<'_>, seed: u64) -> Vec<f32x4> {
    let mut rng = Rng::new(seed.wrapping_add(0x3A5C));
    let n = skeleton.joint_count();
    (0..soa_count(n))
        .map(|b| {
            let mut lanes = [0.0f32; 4];
            for (l, v) in lanes.iter_mut().enumerate() {
                if b * 4 + l < n {
                    *v = match rng.below(4) {
                        0 => 0.0,
                        1 => 1.0,
                        _ => rng.unit(),
                    };
                }
            }
            f32x4::new(lanes)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use sinew_core::blend::JointWeights;
    use sinew_core::NO_PARENT;

    #[test]
    fn skeleton_is_deterministic() {
        for n in [1, 20, 67, 368] {
            assert_eq!(skeleton(n, 42).bytes(), skeleton(n, 42).bytes());
        }
        assert_ne!(skeleton(368, 1).bytes(), skeleton(368, 2).bytes());
    }

    #[test]
    fn skeleton_shape() {
        for n in [1, 2, 5, 13, 40, 67, 70, 100, 368, 1007, MAX_JOINTS] {
            let owned = skeleton(n, 9);
            let s = owned.view();
            assert_eq!(s.joint_count(), n);
            let parents = s.parents();
            let mut children = vec![0usize; n];
            for (j, &p) in parents.iter().enumerate() {
                if p != NO_PARENT {
                    assert!((p as usize) < j, "parents first");
                    children[p as usize] += 1;
                }
            }
            assert_eq!(parents[0], NO_PARENT);
            assert_eq!(parents.iter().filter(|&&p| p == NO_PARENT).count(), 1);
            let depth = (0..n).map(|j| s.depth(j)).max().unwrap_or(0);
            let branching = children.iter().filter(|&&c| c >= 2).count();
            if n >= 67 {
                assert!(depth > 4, "{n}: depth {depth}");
                assert!(depth < n / 4, "{n}: not a chain (depth {depth})");
                assert!(*children.iter().max().unwrap() < n / 4, "{n}: not a star");
                assert!(branching >= 6, "{n}: branching {branching}");
            }
            // Rest translations of 2-20 cm, unit rotations, unit scale.
            for j in 1..n {
                let t = s.rest_pose()[j / 4].get(j % 4);
                let len = t.translation.length();
                assert!((0.0199..=0.2001).contains(&len), "{len}");
                assert!((t.rotation.length() - 1.0).abs() < 1e-5);
                assert_eq!(t.scale, Vec3::ONE);
            }
        }
    }

    #[test]
    fn pose_is_near_rest() {
        let owned = skeleton(67, 3);
        let s = owned.view();
        let p = pose(&s, 0.5, 11);
        assert_eq!(p, pose(&s, 0.5, 11));
        assert_ne!(p, pose(&s, 0.5, 12));
        assert_eq!(p.len(), s.soa_count());
        for j in 0..s.soa_count() * 4 {
            let (x, r) = (p[j / 4].get(j % 4), s.rest_pose()[j / 4].get(j % 4));
            if j >= s.joint_count() {
                assert_eq!(x, Transform::IDENTITY);
                continue;
            }
            assert!((x.rotation.length() - 1.0).abs() < 1e-5);
            assert!(x.rotation.angle_between(r.rotation) <= 0.5 + 1e-3);
            assert!((x.translation - r.translation).length() <= 0.0101);
            assert_eq!(x.scale, Vec3::ONE);
        }
    }

    #[test]
    fn mask_is_valid() {
        let owned = skeleton(67, 3);
        let s = owned.view();
        let m = mask(&s, 5);
        assert_eq!(m, mask(&s, 5));
        assert_eq!(m.len(), s.soa_count());
        let jw = JointWeights::new(&m).unwrap();
        assert!((0..67).all(|j| (0.0..=1.0).contains(&jw.get(j))));
        assert_eq!(jw.get(67), 0.0);
        assert!((0..67).any(|j| jw.get(j) == 0.0) && (0..67).any(|j| jw.get(j) == 1.0));
    }
}
