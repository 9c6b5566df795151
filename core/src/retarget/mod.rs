//! Retargeting: playing one skeleton's animation on another.
//!
//! A [`RetargetMap`] is built offline from two skeletons and a joint
//! correspondence ([`names::correspond`] pairs joints through a canonical
//! humanoid vocabulary and built-in name tables, or caller pairs), written
//! into caller bytes by [`write_map`] and viewed in place like the other
//! containers. At run time [`retarget`] turns a source pose (SoA local
//! transforms) into a target pose, four target joints per SIMD operation,
//! with no allocation; [`reference::retarget`] is its scalar twin.
//!
//! # The rule
//! Rotations transfer in a common frame: the source joint's model-space
//! change since its rest is applied to the target joint's rest,
//! `Mt_j = C Ms_j Rs_j⁻¹ C⁻¹ Rt_j`, where `Rs`, `Rt` are rest model-space
//! rotations and `C` turns the source's model frame (its up and facing)
//! into the target's. When a target joint's nearest mapped ancestor `p`
//! follows the same rule, the target local rotation is
//!
//! `lt_j = pre_j · (ls_a1 · … · ls_s(j)) · post_j`
//!
//! with `pre_j = Rt_parent(j)⁻¹ · S_p⁻¹ · C · Rs_s(p)` and
//! `post_j = Rs_s(j)⁻¹ · C⁻¹ · S_j · Rt_j`: one constant before and one
//! after the product of the source locals along the source path from
//! `s(p)` (exclusive) to `s(j)`; unmapped target joints between `p` and `j`
//! keep their rest locals, which the constants account for. `S_j` is the
//! identity, or, with [`MapOptions::align_rest_directions`], the swing that
//! turns the target's rest bone direction onto the source's (T-pose against
//! A-pose). A joint with no mapped ancestor uses a virtual root
//! (`Rs = S = I`) and the source path from the source root.
//!
//! Unmapped target joints keep their rest transform. Every target joint
//! keeps its rest translation and scale (the target's bone lengths) except
//! the map's root (of the mapped target joints with no mapped ancestor, the
//! one whose source joint is nearest the source root): its source joint's
//! translation, through the source's rest parent frame, turned by `C` and
//! scaled by the ratio of hip heights (so root speed scales with leg
//! length), places it in the target's model space, both model origins
//! taken to lie on the ground. The translation is written to the topmost
//! target ancestor of the root joint (the root joint itself when it has no
//! parent), so unmapped joints above it come along. Source scales are not
//! transferred.

mod build;
pub mod names;
pub mod reference;
#[cfg(test)]
mod tests;

pub use build::{map_size, write_map, MapInfo, MapOptions, MAX_PATH};
pub use names::{correspond, Convention, Correspondence, Role};

use wide::f32x4;

use crate::container::{check_preamble, le_u32};
use crate::error::Error;
use crate::math::{Quat, Vec3};
use crate::skeleton::Skeleton;
use crate::soa::{check_len, detail, soa_count, SoaQuat, SoaTransform};

/// Magic bytes of a retarget map container.
pub const MAP_MAGIC: [u8; 8] = *b"SINEWRTM";
/// Format version this build reads and writes.
pub const MAP_VERSION: u32 = 1;
/// Path entry of a step a joint does not take (and of unmapped joints).
pub const NO_SOURCE: u16 = u16::MAX;

pub(crate) const HEADER: usize = 128;
const REST_BYTES: usize = core::mem::size_of::<SoaTransform>();
const QUAT_BYTES: usize = core::mem::size_of::<SoaQuat>();
const MASK_BYTES: usize = 16;

/// Byte offsets of the sections.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout {
    pub rest: usize,
    pub pre: usize,
    pub post: usize,
    pub mask: usize,
    pub path: usize,
    pub total: usize,
}

/// The layout of a map over `target_joints` target joints with paths of
/// at most `max_path` steps (`None` when the sizes overflow).
pub(crate) fn layout(target_joints: usize, max_path: usize) -> Option<Layout> {
    let blocks = soa_count(target_joints);
    let rest = HEADER;
    let pre = rest.checked_add(blocks.checked_mul(REST_BYTES)?)?;
    let post = pre.checked_add(blocks * QUAT_BYTES)?;
    let mask = post.checked_add(blocks * QUAT_BYTES)?;
    let path = mask.checked_add(blocks * MASK_BYTES)?;
    let path_bytes = blocks.checked_mul(max_path)?.checked_mul(8)?;
    let total = path.checked_add(path_bytes.checked_add(15)? & !15)?;
    u32::try_from(total).ok()?;
    Some(Layout {
        rest,
        pre,
        post,
        mask,
        path,
        total,
    })
}

/// A 32-bit FNV-1a digest of a skeleton's joint count, parents and names:
/// what a map records to recognise the skeletons it was built for.
#[must_use]
pub fn skeleton_fingerprint(skeleton: &Skeleton<'_>) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    let mut eat = |b: u8| {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    };
    for b in (skeleton.joint_count() as u32).to_le_bytes() {
        eat(b);
    }
    for j in 0..skeleton.joint_count() {
        for b in skeleton
            .parents()
            .get(j)
            .copied()
            .unwrap_or(0)
            .to_le_bytes()
        {
            eat(b);
        }
        for b in skeleton.joint_name(j).unwrap_or("").bytes() {
            eat(b);
        }
        eat(0);
    }
    h
}

/// A validated view of a retarget map container.
///
/// Layout (little-endian, sections 16-byte aligned, `B = soa_count(target joints)`):
///
/// | bytes | content |
/// |---|---|
/// | 128 | header: magic `SINEWRTM`, version, source and target joint counts, steps per path, root target and source joints, both skeletons' [`skeleton_fingerprint`]s, total size, root affine map (3×3 column-major, then offset), zero padding |
/// | 160 × B | the target's rest pose ([`SoaTransform`] blocks) |
/// | 64 × B | `pre` constants ([`SoaQuat`] blocks) |
/// | 64 × B | `post` constants |
/// | 16 × B | per lane `0xFFFFFFFF` (mapped) or 0 |
/// | 8 × B × steps (padded) | source path per block, step and lane: a source joint, or [`NO_SOURCE`] |
#[derive(Clone, Copy, Debug)]
pub struct RetargetMap<'a> {
    rest: &'a [SoaTransform],
    pre: &'a [SoaQuat],
    post: &'a [SoaQuat],
    mask: &'a [f32x4],
    path: &'a [[u16; 4]],
    source_joints: usize,
    target_joints: usize,
    max_path: usize,
    root: Option<(usize, usize)>,
    root_affine: [f32; 12],
    fingerprints: (u32, u32),
}

fn corrupt<T>(what: &'static str) -> Result<T, Error> {
    Err(Error::Corrupt { what })
}

impl<'a> RetargetMap<'a> {
    /// Validates a map container and views it in place.
    ///
    /// Checks the counts and section sizes, that the target rest pose, the
    /// constants and the root map are finite, that constants are unit
    /// quaternions (within 1e-3), that padding lanes are identity and
    /// unmapped, that every path entry names a source joint or is
    /// [`NO_SOURCE`], that a lane's steps end at its first [`NO_SOURCE`], and
    /// that a lane is mapped exactly when its path is not empty.
    ///
    /// # Errors
    /// [`Error::UnsupportedPlatform`], [`Error::Truncated`],
    /// [`Error::BadMagic`], [`Error::UnsupportedVersion`],
    /// [`Error::Misaligned`] (the preamble); [`Error::Corrupt`] naming the
    /// first inconsistency.
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, Error> {
        let map = Self::parse(bytes)?;
        map.check_contents()?;
        Ok(map)
    }

    /// Views a container that [`RetargetMap::from_bytes`] accepted before,
    /// checking only the header and section sizes (O(1)): for views
    /// re-created from bytes validated once (the C library's handles). On
    /// bytes changed since, [`retarget`] writes unspecified poses but never
    /// reads out of bounds or panics.
    ///
    /// # Errors
    /// As [`RetargetMap::from_bytes`] for the header and section checks.
    pub fn from_validated_bytes(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::parse(bytes)
    }

    fn parse(bytes: &'a [u8]) -> Result<Self, Error> {
        check_preamble(bytes, &MAP_MAGIC, MAP_VERSION, HEADER)?;
        let w = |at: usize| le_u32(bytes, at) as usize;
        let source_joints = w(12);
        let target_joints = w(16);
        let max_path = w(20);
        if source_joints == 0 || target_joints == 0 {
            return corrupt("retarget map has no joints");
        }
        if source_joints > crate::MAX_JOINTS || target_joints > crate::MAX_JOINTS {
            return corrupt("retarget map has more joints than MAX_JOINTS");
        }
        if max_path > MAX_PATH {
            return corrupt("retarget map paths are longer than MAX_PATH");
        }
        let layout = layout(target_joints, max_path).ok_or(Error::Corrupt {
            what: "retarget map sections exceed 4 GiB",
        })?;
        if w(40) != layout.total {
            return corrupt("retarget map total size disagrees with its counts");
        }
        if bytes.len() < layout.total {
            return Err(Error::Truncated {
                needed: layout.total,
                actual: bytes.len(),
            });
        }
        if w(44) != 0 || (96..HEADER).step_by(4).any(|at| w(at) != 0) {
            return corrupt("retarget map reserved header bytes are not zero");
        }
        let (rt, rs) = (w(24), w(28));
        let root = match (le_u32(bytes, 24), le_u32(bytes, 28)) {
            (u32::MAX, u32::MAX) => None,
            _ if rt < target_joints && rs < source_joints => Some((rt, rs)),
            _ => return corrupt("retarget map root joint is out of range"),
        };
        let mut root_affine = [0.0f32; 12];
        for (i, v) in root_affine.iter_mut().enumerate() {
            *v = f32::from_bits(le_u32(bytes, 48 + 4 * i));
        }
        if root_affine.iter().any(|v| !v.is_finite()) {
            return corrupt("retarget map root affine map is not finite");
        }
        let section = |a: usize, b: usize| bytes.get(a..b).unwrap_or(&[]);
        let cast = |_| Error::Misaligned;
        let blocks = soa_count(target_joints);
        let path_entries = blocks * max_path;
        Ok(RetargetMap {
            rest: bytemuck::try_cast_slice(section(layout.rest, layout.pre)).map_err(cast)?,
            pre: bytemuck::try_cast_slice(section(layout.pre, layout.post)).map_err(cast)?,
            post: bytemuck::try_cast_slice(section(layout.post, layout.mask)).map_err(cast)?,
            mask: bytemuck::try_cast_slice(section(layout.mask, layout.path)).map_err(cast)?,
            path: bytemuck::try_cast_slice(section(layout.path, layout.path + path_entries * 8))
                .map_err(cast)?,
            source_joints,
            target_joints,
            max_path,
            root,
            root_affine,
            fingerprints: (le_u32(bytes, 32), le_u32(bytes, 36)),
        })
    }

    fn check_contents(&self) -> Result<(), Error> {
        let unit = |q: Quat| q.is_finite() && libm::fabsf(q.length() - 1.0) <= 1e-3;
        for j in 0..self.rest.len() * 4 {
            let (b, l) = (j / 4, j % 4);
            let (Some(rest), Some(pre), Some(post), Some(mask)) = (
                self.rest.get(b),
                self.pre.get(b),
                self.post.get(b),
                self.mask.get(b),
            ) else {
                return corrupt("retarget map section is short");
            };
            let rest = rest.get(l);
            if !rest.is_finite() {
                return corrupt("retarget map rest pose is not finite");
            }
            if !unit(pre.get(l)) || !unit(post.get(l)) {
                return corrupt("retarget map constant is not a unit quaternion");
            }
            let bits = bytemuck::cast::<f32x4, [u32; 4]>(*mask)[l];
            if bits != 0 && bits != u32::MAX {
                return corrupt("retarget map mask lane is neither 0 nor all ones");
            }
            let mut ended = false;
            let mut steps = 0;
            for s in 0..self.max_path {
                let e = self
                    .path
                    .get(b * self.max_path + s)
                    .map_or(NO_SOURCE, |p| p[l]);
                if e == NO_SOURCE {
                    ended = true;
                } else if ended {
                    return corrupt("retarget map path continues after its end");
                } else if e as usize >= self.source_joints {
                    return corrupt("retarget map path names a joint outside the source");
                } else {
                    steps += 1;
                }
            }
            if (bits == u32::MAX) != (steps > 0) {
                return corrupt("retarget map lane is mapped but has no path, or the reverse");
            }
            if j >= self.target_joints && (bits != 0 || rest != crate::math::Transform::default()) {
                return corrupt("retarget map padding lane is not an unmapped identity");
            }
        }
        Ok(())
    }

    /// Whether target joint `j` is mapped (false out of range).
    #[must_use]
    pub fn is_mapped(&self, j: usize) -> bool {
        self.mask
            .get(j / 4)
            .is_some_and(|m| bytemuck::cast::<f32x4, [u32; 4]>(*m)[j % 4] != 0)
    }

    /// Joints of the skeleton the source poses belong to.
    #[must_use]
    pub fn source_joint_count(&self) -> usize {
        self.source_joints
    }

    /// Joints of the skeleton the output poses belong to.
    #[must_use]
    pub fn target_joint_count(&self) -> usize {
        self.target_joints
    }

    /// Steps of the longest source path (the kernel's inner loop bound).
    #[must_use]
    pub fn max_path(&self) -> usize {
        self.max_path
    }

    /// The pair `(target joint, source joint)` whose translation is
    /// transferred (the target joint is a root of the target skeleton),
    /// `None` when nothing is mapped.
    #[must_use]
    pub fn root(&self) -> Option<(usize, usize)> {
        self.root
    }

    /// The source joints of target joint `j`'s path, in product order
    /// (empty for an unmapped or out-of-range joint).
    pub fn path(&self, j: usize) -> impl Iterator<Item = usize> + '_ {
        let (b, l) = (j / 4, j % 4);
        let steps = if j < self.target_joints {
            self.max_path
        } else {
            0
        };
        (0..steps)
            .map(move |s| {
                self.path
                    .get(b * self.max_path + s)
                    .map_or(NO_SOURCE, |p| p[l])
            })
            .take_while(|&e| e != NO_SOURCE)
            .map(usize::from)
    }

    /// The root translation map: `t_target = A · t_source + b`, `A` as 9
    /// floats column-major, then `b`.
    #[must_use]
    pub fn root_affine(&self) -> [f32; 12] {
        self.root_affine
    }

    /// Checks that `source` and `target` are the skeletons the map was
    /// built for (same joint count, parents and names, by
    /// [`skeleton_fingerprint`]).
    ///
    /// # Errors
    /// [`Error::SkeletonMismatch`] naming the skeleton that differs.
    pub fn check_skeletons(
        &self,
        source: &Skeleton<'_>,
        target: &Skeleton<'_>,
    ) -> Result<(), Error> {
        if source.joint_count() != self.source_joints
            || skeleton_fingerprint(source) != self.fingerprints.0
        {
            return Err(Error::SkeletonMismatch { which: "source" });
        }
        if target.joint_count() != self.target_joints
            || skeleton_fingerprint(target) != self.fingerprints.1
        {
            return Err(Error::SkeletonMismatch { which: "target" });
        }
        Ok(())
    }

    pub(crate) fn rest(&self) -> &'a [SoaTransform] {
        self.rest
    }
    pub(crate) fn pre(&self) -> &'a [SoaQuat] {
        self.pre
    }
    pub(crate) fn post(&self) -> &'a [SoaQuat] {
        self.post
    }

    /// `A · t + b` of the root affine map.
    #[inline]
    pub(crate) fn map_root_translation(&self, t: Vec3) -> Vec3 {
        let a = &self.root_affine;
        Vec3::new(
            a[0] * t.x + a[3] * t.y + a[6] * t.z + a[9],
            a[1] * t.x + a[4] * t.y + a[7] * t.z + a[10],
            a[2] * t.x + a[5] * t.y + a[8] * t.z + a[11],
        )
    }
}

/// The sizes every call checks: the source pose has
/// `soa_count(source joints)` blocks and the output `soa_count(target joints)`.
pub(crate) fn check_sizes(
    map: &RetargetMap<'_>,
    source: &[SoaTransform],
    output: &[SoaTransform],
) -> Result<(), Error> {
    check_len("source pose", soa_count(map.source_joints), source.len())?;
    check_len("output pose", soa_count(map.target_joints), output.len())
}

/// Retargets one source pose (local transforms of the map's source
/// skeleton) onto the target skeleton, writing every block of `output`.
///
/// Mapped joints get `normalize(pre · product of source locals · post)`
/// (see the module docs), unmapped joints and padding lanes the target's
/// rest rotation exactly; every joint the target's rest translation and
/// scale, except the root, whose translation is
/// [`RetargetMap::root_affine`] applied to the source root's. Runs four
/// target joints per SIMD operation; allocation-free. NaN in the source
/// propagates to the joints whose path reads it.
///
/// # Errors
/// [`Error::BadLength`] for `"source pose"` or `"output pose"` when their
/// block counts differ from the map's skeletons.
pub fn retarget(
    map: &RetargetMap<'_>,
    source: &[SoaTransform],
    output: &mut [SoaTransform],
) -> Result<(), Error> {
    check_sizes(map, source, output)?;
    let identity = SoaQuat::IDENTITY;
    let steps = map.max_path;
    for (b, out) in output.iter_mut().enumerate() {
        let (Some(rest), Some(pre), Some(post), Some(mask)) = (
            map.rest.get(b),
            map.pre.get(b),
            map.post.get(b),
            map.mask.get(b),
        ) else {
            *out = SoaTransform::IDENTITY;
            continue;
        };
        let mut acc = identity;
        for s in 0..steps {
            let Some(idx) = map.path.get(b * steps + s) else {
                break;
            };
            if *idx == [NO_SOURCE; 4] {
                // Steps end at a lane's first NO_SOURCE: none of the four lanes goes on.
                break;
            }
            let g = gather(source, idx);
            acc = detail::quat_mul(&acc, &g);
        }
        let q = detail::normalize(&detail::quat_mul(&detail::quat_mul(pre, &acc), post));
        *out = SoaTransform {
            translation: rest.translation,
            rotation: SoaQuat {
                x: mask.select(q.x, rest.rotation.x),
                y: mask.select(q.y, rest.rotation.y),
                z: mask.select(q.z, rest.rotation.z),
                w: mask.select(q.w, rest.rotation.w),
            },
            scale: rest.scale,
        };
    }
    write_root(map, source, output);
    Ok(())
}

/// The four lanes' source rotations of one path step (identity for [`NO_SOURCE`]).
#[inline(always)]
fn gather(source: &[SoaTransform], idx: &[u16; 4]) -> SoaQuat {
    let mut x = [0.0f32; 4];
    let mut y = [0.0f32; 4];
    let mut z = [0.0f32; 4];
    let mut w = [1.0f32; 4];
    for l in 0..4 {
        let s = idx[l] as usize;
        if let Some(block) = source.get(s / 4) {
            let r = &block.rotation;
            let k = s % 4;
            x[l] = r.x.as_array()[k];
            y[l] = r.y.as_array()[k];
            z[l] = r.z.as_array()[k];
            w[l] = r.w.as_array()[k];
        }
    }
    SoaQuat {
        x: f32x4::new(x),
        y: f32x4::new(y),
        z: f32x4::new(z),
        w: f32x4::new(w),
    }
}

/// Writes the root's translation (shared by the kernel and its twin).
pub(crate) fn write_root(
    map: &RetargetMap<'_>,
    source: &[SoaTransform],
    output: &mut [SoaTransform],
) {
    if let Some((rt, rs)) = map.root {
        if let Some(t) = source.get(rs / 4).map(|b| b.translation.get(rs % 4)) {
            let v = map.map_root_translation(t);
            if let Some(block) = output.get_mut(rt / 4) {
                block.translation.set(rt % 4, v);
            }
        }
    }
}
