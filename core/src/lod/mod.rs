//! Level of detail for crowds: which joints are evaluated (joint LOD, this
//! module) and how often a character is evaluated ([`rate`], update-rate LOD).
//!
//! # Joint LOD: each level is a prefix
//!
//! A [`JointLod`] orders a skeleton's joints offline so that the joints
//! evaluated at every level come first: level 0 evaluates all `n` joints,
//! level `l` the first `kept(l)` of them, with `kept` non-increasing. A
//! level is then "the first `kept(l)` joints" for every kernel, so they stay
//! branch-free: sampling reads the first `soa_count(kept)` blocks
//! ([`crate::clip::ClipSource::sample_prefix`]), blending takes prefix
//! slices (a [`crate::blend::BlendJob`] over `&pose[..blocks]`), and
//! [`local_to_model`] multiplies the kept joints down their parents.
//! Poses and clips used with a `JointLod` are in its order: build them with
//! [`remap_pose`] (offline, once per clip frame).
//!
//! Every joint's parent comes before it in this order (so FK over any
//! prefix is complete), but the order is not depth-first: a skeleton
//! container ([`crate::Skeleton`]) keeps its own order, and a `JointLod` is
//! a separate view over caller slices (order, parents, rest pose, level
//! sizes) that [`build`] fills.
//!
//! # Which joints a level keeps
//!
//! Each joint has a *coarsest level*: the last level at which it is
//! evaluated. A joint is evaluated while it or any of its descendants is
//! (the kept set of a level is closed under parents), so a twist joint in
//! the middle of an arm chain stays as long as the hand below it does,
//! and only whole dropped subtrees (fingers, face, toes, end joints) leave.
//! Coarsest levels come from name rules ([`coarsest_by_names`], with
//! [`HUMANOID_RULES`] for the procedural humanoid and CMU/Mixamo-style
//! names), from depth and bone length ([`drop_by_depth`],
//! [`drop_short_bones`]), or straight from the caller.
//!
//! # Dropped joints follow their parents
//!
//! A joint past a level's prefix is not sampled or blended; its model
//! matrix is its parent's model matrix times its *rest* local transform
//! (`model[j] = model[parent(j)] · rest[j]`), so a dropped finger stays
//! attached to the hand, in its bind pose relative to it.

pub mod rate;

use crate::clip::{ClipSource, TimeMode};
use crate::error::Error;
use crate::fk::detail::{affine_columns, mul_affine};
use crate::math::Mat4;
use crate::skeleton::{Skeleton, MAX_JOINTS, NO_PARENT};
use crate::soa::{all_finite, check_len, soa_count, SoaTransform, LANES};

/// Most levels a [`JointLod`] may have.
pub const MAX_LEVELS: usize = 8;

/// A validated joint-LOD view: a skeleton's joints in an order where every
/// level's evaluated joints are a prefix.
///
/// All four slices are the caller's (usually filled by [`build`]); the view
/// is `Copy` and borrows them.
#[derive(Clone, Copy, Debug)]
pub struct JointLod<'a> {
    order: &'a [u16],
    parents: &'a [u16],
    rest: &'a [SoaTransform],
    levels: &'a [u16],
}

impl<'a> JointLod<'a> {
    /// Validates a LOD layout once and views it.
    ///
    /// - `order[k]`: the skeleton joint at LOD position `k` (a permutation
    ///   of `0..n`);
    /// - `parents[k]`: the LOD position of joint `k`'s parent, below `k`,
    ///   or [`NO_PARENT`];
    /// - `rest`: the rest pose in LOD order, `soa_count(n)` blocks
    ///   (padding lanes identity);
    /// - `levels[l]`: joints evaluated at level `l`; `levels[0] == n`,
    ///   non-increasing, each at least 1, at most [`MAX_LEVELS`] levels.
    ///
    /// # Errors
    /// [`Error::NoJoints`], [`Error::TooManyJoints`], [`Error::BadLength`]
    /// (parents or rest pose not matching `order`, no level or more than
    /// [`MAX_LEVELS`]), [`Error::InvalidParent`] (a parent not before its
    /// joint), [`Error::Corrupt`] (`order` not a permutation, level sizes
    /// not as above), [`Error::NonFinite`] (rest pose).
    pub fn new(
        order: &'a [u16],
        parents: &'a [u16],
        rest: &'a [SoaTransform],
        levels: &'a [u16],
    ) -> Result<Self, Error> {
        let n = order.len();
        if n == 0 {
            return Err(Error::NoJoints);
        }
        if n > MAX_JOINTS {
            return Err(Error::TooManyJoints { count: n });
        }
        check_len("LOD parents", n, parents.len())?;
        check_len("LOD rest pose", soa_count(n), rest.len())?;
        if levels.is_empty() || levels.len() > MAX_LEVELS {
            return Err(Error::BadLength {
                buffer: "LOD levels",
                expected: MAX_LEVELS.min(levels.len().max(1)),
                actual: levels.len(),
            });
        }
        let mut seen = [false; MAX_JOINTS];
        for &j in order {
            match seen.get_mut(j as usize) {
                Some(s) if !*s && (j as usize) < n => *s = true,
                _ => {
                    return Err(Error::Corrupt {
                        what: "LOD order is not a permutation of the joints",
                    })
                }
            }
        }
        for (k, &p) in parents.iter().enumerate() {
            if p != NO_PARENT && p as usize >= k {
                return Err(Error::InvalidParent { joint: k });
            }
        }
        if levels[0] as usize != n || levels.windows(2).any(|w| w[1] > w[0]) || levels.contains(&0)
        {
            return Err(Error::Corrupt {
                what: "LOD level sizes must start at the joint count and not increase",
            });
        }
        if !all_finite(bytemuck::cast_slice(rest)) {
            return Err(Error::NonFinite {
                what: "LOD rest pose",
            });
        }
        Ok(JointLod {
            order,
            parents,
            rest,
            levels,
        })
    }

    /// Views a layout that [`JointLod::new`] accepted before, checking
    /// only the slices' lengths (O(1)): for views re-created from slices
    /// validated once (the C library's handles). On slices that changed
    /// since, the kernels compute unspecified results but never read out
    /// of bounds or panic.
    ///
    /// # Errors
    /// As [`JointLod::new`], for the length checks only.
    pub fn from_validated_parts(
        order: &'a [u16],
        parents: &'a [u16],
        rest: &'a [SoaTransform],
        levels: &'a [u16],
    ) -> Result<Self, Error> {
        let n = order.len();
        if n == 0 {
            return Err(Error::NoJoints);
        }
        if n > MAX_JOINTS {
            return Err(Error::TooManyJoints { count: n });
        }
        check_len("LOD parents", n, parents.len())?;
        check_len("LOD rest pose", soa_count(n), rest.len())?;
        if levels.is_empty() || levels.len() > MAX_LEVELS || levels.iter().any(|&k| k as usize > n)
        {
            return Err(Error::Corrupt {
                what: "LOD level sizes must start at the joint count and not increase",
            });
        }
        Ok(JointLod {
            order,
            parents,
            rest,
            levels,
        })
    }

    /// Number of joints (all levels).
    #[inline]
    #[must_use]
    pub fn joint_count(&self) -> usize {
        self.order.len()
    }

    /// SoA blocks of a whole pose: `soa_count(joint_count())`.
    #[inline]
    #[must_use]
    pub fn soa_count(&self) -> usize {
        self.rest.len()
    }

    /// Number of levels (at least 1).
    #[inline]
    #[must_use]
    pub fn level_count(&self) -> usize {
        self.levels.len()
    }

    /// Joints evaluated at `level`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a level past [`Self::level_count`].
    #[inline]
    pub fn kept(&self, level: usize) -> Result<usize, Error> {
        self.levels
            .get(level)
            .map(|&k| k as usize)
            .ok_or(Error::InvalidParameter {
                what: "LOD level past the layout's levels",
            })
    }

    /// SoA blocks sampled and blended at `level`: `soa_count(kept(level))`.
    ///
    /// # Errors
    /// As [`Self::kept`].
    #[inline]
    pub fn kept_blocks(&self, level: usize) -> Result<usize, Error> {
        self.kept(level).map(soa_count)
    }

    /// The skeleton joint at each LOD position.
    #[inline]
    #[must_use]
    pub fn order(&self) -> &'a [u16] {
        self.order
    }

    /// Parents as LOD positions ([`NO_PARENT`] for roots).
    #[inline]
    #[must_use]
    pub fn parents(&self) -> &'a [u16] {
        self.parents
    }

    /// The rest pose in LOD order.
    #[inline]
    #[must_use]
    pub fn rest_pose(&self) -> &'a [SoaTransform] {
        self.rest
    }

    /// Joints evaluated at each level.
    #[inline]
    #[must_use]
    pub fn levels(&self) -> &'a [u16] {
        self.levels
    }

    /// Checks that this layout reorders `skeleton`: same joint count, each
    /// LOD position's parent and rest transform are those of its skeleton
    /// joint. O(n); for layouts that did not come from [`build`].
    ///
    /// # Errors
    /// [`Error::BadLength`] (joint counts), [`Error::InvalidParent`] (a
    /// parent that differs, naming the LOD position), [`Error::Corrupt`]
    /// (a rest transform that differs).
    pub fn check_skeleton(&self, skeleton: &Skeleton<'_>) -> Result<(), Error> {
        check_len("LOD order", skeleton.joint_count(), self.joint_count())?;
        let rest = skeleton.rest_pose();
        for (k, (&j, &p)) in self.order.iter().zip(self.parents).enumerate() {
            let j = j as usize;
            let expected = skeleton.parent(j).map(|sp| sp as u16);
            let actual = (p != NO_PARENT).then(|| self.order[p as usize]);
            if expected != actual {
                return Err(Error::InvalidParent { joint: k });
            }
            let a = self.rest[k / LANES].get(k % LANES);
            let b = rest[j / LANES].get(j % LANES);
            if a != b {
                return Err(Error::Corrupt {
                    what: "LOD rest pose differs from the skeleton's",
                });
            }
        }
        Ok(())
    }
}

/// Fills a [`JointLod`] layout for `skeleton` from each joint's coarsest
/// level (`coarsest[j]`: the last level at which skeleton joint `j` is
/// evaluated; raised to its descendants' so the kept sets are closed under
/// parents). Returns the number of levels, `1 + max(coarsest)`; the first
/// that many entries of `levels` are written.
///
/// The order puts the joints of the coarsest level first, then those
/// evaluated one level finer, and so on; within a level, in skeleton order
/// (so every parent precedes its children). With every `coarsest[j] == 0`
/// the order is the skeleton's own.
///
/// # Errors
/// [`Error::BadLength`] (`coarsest`, `order`, `parents` not `n` long,
/// `rest` not `soa_count(n)` blocks, `levels` shorter than the level
/// count), [`Error::InvalidParameter`] (a coarsest level of
/// [`MAX_LEVELS`] or more). Outputs are untouched on error.
pub fn build(
    skeleton: &Skeleton<'_>,
    coarsest: &[u8],
    order: &mut [u16],
    parents: &mut [u16],
    rest: &mut [SoaTransform],
    levels: &mut [u16],
) -> Result<usize, Error> {
    let n = skeleton.joint_count();
    check_len("coarsest levels", n, coarsest.len())?;
    check_len("LOD order", n, order.len())?;
    check_len("LOD parents", n, parents.len())?;
    check_len("LOD rest pose", soa_count(n), rest.len())?;
    let mut eff = [0u8; MAX_JOINTS];
    for (e, &c) in eff.iter_mut().zip(coarsest) {
        if c as usize >= MAX_LEVELS {
            return Err(Error::InvalidParameter {
                what: "coarsest LOD level of MAX_LEVELS or more",
            });
        }
        *e = c;
    }
    // Children follow parents, so one backward pass lifts every ancestor
    // to its deepest-kept descendant.
    for j in (0..n).rev() {
        if let Some(p) = skeleton.parent(j) {
            eff[p] = eff[p].max(eff[j]);
        }
    }
    let count = eff[..n].iter().copied().max().unwrap_or(0) as usize + 1;
    if levels.len() < count {
        return Err(Error::BadLength {
            buffer: "LOD levels",
            expected: count,
            actual: levels.len(),
        });
    }
    let mut position = [NO_PARENT; MAX_JOINTS];
    let mut k = 0usize;
    for l in (0..count).rev() {
        for j in 0..n {
            if eff[j] as usize == l {
                order[k] = j as u16;
                position[j] = k as u16;
                k += 1;
            }
        }
        levels[l] = k as u16;
    }
    let src = skeleton.rest_pose();
    rest.fill(SoaTransform::IDENTITY);
    for (k, &j) in order.iter().enumerate() {
        let j = j as usize;
        parents[k] = skeleton.parent(j).map_or(NO_PARENT, |p| position[p]);
        rest[k / LANES].set(k % LANES, &src[j / LANES].get(j % LANES));
    }
    Ok(count)
}

/// One name rule: joints whose name contains `pattern` (ASCII case
/// insensitive) are dropped from level `drop_at` on (evaluated at levels
/// `0 .. drop_at`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DropRule<'p> {
    /// Substring of the joint name.
    pub pattern: &'p str,
    /// First level without the joint (at least 1).
    pub drop_at: u8,
}

/// Name rules for humanoids, three levels: level 1 drops fingers, the
/// face (jaw, eyes), toes and end joints; level 2 also hands, the balls of
/// the feet and twist joints (where nothing below them is kept). They
/// match the procedural humanoid's names and the CMU (MotionBuilder and
/// Daz conversions) and Mixamo-style names (`LeftHandIndex1`,
/// `LThumb`, `LeftToeBase`, `*_end`).
pub const HUMANOID_RULES: [DropRule<'static>; 14] = [
    DropRule {
        pattern: "thumb",
        drop_at: 1,
    },
    DropRule {
        pattern: "index",
        drop_at: 1,
    },
    DropRule {
        pattern: "middle",
        drop_at: 1,
    },
    DropRule {
        pattern: "ring",
        drop_at: 1,
    },
    DropRule {
        pattern: "pinky",
        drop_at: 1,
    },
    DropRule {
        pattern: "finger",
        drop_at: 1,
    },
    DropRule {
        pattern: "jaw",
        drop_at: 1,
    },
    DropRule {
        pattern: "eye",
        drop_at: 1,
    },
    DropRule {
        pattern: "toe",
        drop_at: 1,
    },
    DropRule {
        pattern: "_end",
        drop_at: 1,
    },
    DropRule {
        pattern: "hand",
        drop_at: 2,
    },
    DropRule {
        pattern: "ball",
        drop_at: 2,
    },
    DropRule {
        pattern: "twist",
        drop_at: 2,
    },
    DropRule {
        pattern: "wrist",
        drop_at: 2,
    },
];

fn contains_ignore_case(name: &str, pattern: &str) -> bool {
    let (h, p) = (name.as_bytes(), pattern.as_bytes());
    p.is_empty() || h.windows(p.len()).any(|w| w.eq_ignore_ascii_case(p))
}

/// Coarsest levels from name rules for a layout of `level_count` levels:
/// a joint matched by rules is evaluated up to the smallest `drop_at − 1`
/// among them, any other joint at every level (`level_count − 1`).
///
/// # Errors
/// [`Error::BadLength`] (`out` not `joint_count()` long),
/// [`Error::InvalidParameter`] (`level_count` 0 or above [`MAX_LEVELS`],
/// a rule's `drop_at` of 0).
pub fn coarsest_by_names(
    skeleton: &Skeleton<'_>,
    rules: &[DropRule<'_>],
    level_count: usize,
    out: &mut [u8],
) -> Result<(), Error> {
    check_len("coarsest levels", skeleton.joint_count(), out.len())?;
    if level_count == 0 || level_count > MAX_LEVELS {
        return Err(Error::InvalidParameter {
            what: "LOD level count outside 1..=MAX_LEVELS",
        });
    }
    if rules.iter().any(|r| r.drop_at == 0) {
        return Err(Error::InvalidParameter {
            what: "LOD rule dropping a joint at level 0",
        });
    }
    for (j, o) in out.iter_mut().enumerate() {
        let name = skeleton.joint_name(j).unwrap_or("");
        *o = rules
            .iter()
            .filter(|r| contains_ignore_case(name, r.pattern))
            .map(|r| r.drop_at - 1)
            .fold((level_count - 1) as u8, u8::min);
    }
    Ok(())
}

/// The checks every rule makes: one level per joint, none dropped at 0.
fn check_rule(skeleton: &Skeleton<'_>, drop_at: u8, coarsest: &[u8]) -> Result<(), Error> {
    check_len("coarsest levels", skeleton.joint_count(), coarsest.len())?;
    if drop_at == 0 {
        return Err(Error::InvalidParameter {
            what: "LOD rule dropping a joint at level 0",
        });
    }
    Ok(())
}

/// Lowers `coarsest` so joints deeper than `max_depth` (roots have depth
/// 0) are dropped from level `drop_at` on.
///
/// # Errors
/// [`Error::BadLength`] (`coarsest` not `joint_count()` long),
/// [`Error::InvalidParameter`] (`drop_at` 0).
pub fn drop_by_depth(
    skeleton: &Skeleton<'_>,
    max_depth: usize,
    drop_at: u8,
    coarsest: &mut [u8],
) -> Result<(), Error> {
    check_rule(skeleton, drop_at, coarsest)?;
    let mut depth = [0u16; MAX_JOINTS];
    for j in 0..coarsest.len() {
        depth[j] = skeleton.parent(j).map_or(0, |p| depth[p] + 1);
        if depth[j] as usize > max_depth {
            coarsest[j] = coarsest[j].min(drop_at - 1);
        }
    }
    Ok(())
}

/// Lowers `coarsest` so joints whose bone (the rest translation from
/// their parent) is shorter than `min_length` (skeleton units) are
/// dropped from level `drop_at` on. Roots are never dropped this way.
///
/// # Errors
/// [`Error::BadLength`] (`coarsest` not `joint_count()` long),
/// [`Error::InvalidParameter`] (`drop_at` 0), [`Error::NonFinite`]
/// (`min_length`).
pub fn drop_short_bones(
    skeleton: &Skeleton<'_>,
    min_length: f32,
    drop_at: u8,
    coarsest: &mut [u8],
) -> Result<(), Error> {
    check_rule(skeleton, drop_at, coarsest)?;
    if !min_length.is_finite() {
        return Err(Error::NonFinite {
            what: "minimum bone length",
        });
    }
    let rest = skeleton.rest_pose();
    for (j, c) in coarsest.iter_mut().enumerate() {
        let t = rest[j / LANES].translation.get(j % LANES);
        if skeleton.parent(j).is_some() && t.length() < min_length {
            *c = (*c).min(drop_at - 1);
        }
    }
    Ok(())
}

/// Reorders a pose from skeleton order into `lod`'s order: LOD position
/// `k` gets skeleton joint `order[k]`; padding lanes are identity. For
/// building clips in LOD order offline (every frame of a raw clip), and
/// for poses that come from elsewhere.
///
/// # Errors
/// [`Error::BadLength`] unless `src` and `out` have `soa_count()` blocks.
pub fn remap_pose(
    lod: &JointLod<'_>,
    src: &[SoaTransform],
    out: &mut [SoaTransform],
) -> Result<(), Error> {
    check_len("source pose", lod.soa_count(), src.len())?;
    check_len("output", lod.soa_count(), out.len())?;
    out.fill(SoaTransform::IDENTITY);
    for (k, &j) in lod.order.iter().enumerate() {
        let j = j as usize;
        // `get`: a layout re-viewed without checks must not panic.
        if let (Some(s), Some(o)) = (src.get(j / LANES), out.get_mut(k / LANES)) {
            o.set(k % LANES, &s.get(j % LANES));
        }
    }
    Ok(())
}

/// Writes model matrices from LOD order back into skeleton order
/// (`out[order[k]] = models[k]`), e.g. for skinning with the skeleton's
/// inverse bind matrices and a mesh's joint indices.
///
/// # Errors
/// [`Error::BadLength`] unless both have `joint_count()` matrices.
pub fn to_skeleton_order(
    lod: &JointLod<'_>,
    models: &[Mat4],
    out: &mut [Mat4],
) -> Result<(), Error> {
    check_len("model matrices", lod.joint_count(), models.len())?;
    check_len("output", lod.joint_count(), out.len())?;
    for (&j, m) in lod.order.iter().zip(models) {
        if let Some(o) = out.get_mut(j as usize) {
            *o = *m;
        }
    }
    Ok(())
}

/// Samples `clip` (in `lod`'s order) at `level`: the first
/// `kept_blocks(level)` blocks of `out`, each bit for bit what a whole
/// sample gives; the rest of `out` is not written.
///
/// # Errors
/// [`Error::BadLength`] (`out` not `soa_count()` blocks, or the clip's
/// pose size not the layout's), as [`JointLod::kept`] and
/// [`ClipSource::sample_prefix`].
pub fn sample<C: ClipSource>(
    lod: &JointLod<'_>,
    level: usize,
    clip: &C,
    t: f32,
    mode: TimeMode,
    out: &mut [SoaTransform],
) -> Result<(), Error> {
    let blocks = lod.kept_blocks(level)?;
    check_len("clip pose", lod.soa_count(), clip.soa_count())?;
    check_len("output", lod.soa_count(), out.len())?;
    clip.sample_prefix(t, mode, lod.rest, &mut out[..blocks])
}

/// Local-to-model at `level`: joints `0 .. kept(level)` as
/// `model[k] = model[parent(k)] · local[k]` (roots: `root · local[k]`,
/// `root` identity when `None`), with the same SIMD arithmetic as
/// [`crate::fk::local_to_model`], so level 0 of a layout in the skeleton's
/// own order gives its results bit for bit. When `models` has
/// `joint_count()` entries, the dropped joints follow their parents:
/// `model[k] = model[parent(k)] · rest[k]`; when it has `kept(level)`
/// entries, only the kept joints are written.
///
/// `local` needs only its first `kept_blocks(level)` blocks (it may be
/// longer); lanes past `kept(level)` in its last block are not read.
///
/// # Errors
/// As [`JointLod::kept`]; [`Error::BadLength`] when `local` is shorter
/// than `kept_blocks(level)` or `models` is neither `kept(level)` nor
/// `joint_count()` long. On error `models` is untouched.
pub fn local_to_model(
    lod: &JointLod<'_>,
    level: usize,
    local: &[SoaTransform],
    root: Option<&Mat4>,
    models: &mut [Mat4],
) -> Result<(), Error> {
    let n = lod.joint_count();
    let kept = lod.kept(level)?;
    if local.len() < soa_count(kept) {
        return Err(Error::BadLength {
            buffer: "local pose",
            expected: soa_count(kept),
            actual: local.len(),
        });
    }
    if models.len() != n && models.len() != kept {
        return Err(Error::BadLength {
            buffer: "model matrices",
            expected: n,
            actual: models.len(),
        });
    }
    // The wide kernel of `fk::local_to_model` where it runs, so that a
    // level keeping every joint is full evaluation bit for bit.
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        use crate::fk::avx2::local_to_model_range as wide;
        let r = root.copied().unwrap_or(Mat4::IDENTITY);
        if wide(lod.parents, local, 0, kept, &r, models) {
            wide(lod.parents, lod.rest, kept, models.len(), &r, models);
            return Ok(());
        }
    }
    let root_cols = root.copied().unwrap_or(Mat4::IDENTITY).to_lanes();
    run_fk(lod.parents, local, 0, kept, root_cols, models);
    run_fk(lod.parents, lod.rest, kept, models.len(), root_cols, models);
    Ok(())
}

/// FK of positions `first .. end` from `pose`'s blocks (the kernel of
/// [`crate::fk::local_to_model`], over LOD parents).
#[inline(always)]
fn run_fk(
    parents: &[u16],
    pose: &[SoaTransform],
    first: usize,
    end: usize,
    root_cols: [wide::f32x4; 4],
    models: &mut [Mat4],
) {
    if first >= end {
        return;
    }
    for b in first / LANES..end.div_ceil(LANES) {
        let Some(block) = pose.get(b) else {
            return;
        };
        let local = affine_columns(block);
        for l in 0..LANES {
            let j = b * LANES + l;
            if j < first || j >= end {
                continue;
            }
            let (done, todo) = models.split_at_mut(j);
            // Parents precede children; NO_PARENT (and only it) is out of range here.
            let parent = match parents.get(j).and_then(|&p| done.get(p as usize)) {
                Some(p) => p.to_lanes(),
                None => root_cols,
            };
            if let Some(m) = todo.first_mut() {
                *m = Mat4::from_lanes(mul_affine(&parent, &local, l));
            }
        }
    }
}

/// Scalar reference implementations: the readable specification.
pub mod reference {
    use super::{Error, JointLod};
    use crate::math::Mat4;
    use crate::soa::{get_joint, soa_count};

    /// Scalar twin of [`super::local_to_model`]: plain matrices, joint by
    /// joint.
    ///
    /// # Errors
    /// As [`super::local_to_model`].
    pub fn local_to_model(
        lod: &JointLod<'_>,
        level: usize,
        local: &[crate::soa::SoaTransform],
        root: Option<&Mat4>,
        models: &mut [Mat4],
    ) -> Result<(), Error> {
        let n = lod.joint_count();
        let kept = lod.kept(level)?;
        if local.len() < soa_count(kept) || (models.len() != n && models.len() != kept) {
            return Err(Error::BadLength {
                buffer: "local pose or model matrices",
                expected: n,
                actual: models.len(),
            });
        }
        let root = root.copied().unwrap_or(Mat4::IDENTITY);
        for k in 0..models.len() {
            let pose = if k < kept { local } else { lod.rest_pose() };
            let m = get_joint(pose, k).map_or(Mat4::IDENTITY, |t| t.to_matrix());
            let p = lod.parents()[k];
            models[k] = match models.get(p as usize) {
                Some(pm) if (p as usize) < k => *pm * m,
                _ => root * m,
            };
        }
        Ok(())
    }
}
