//! Skeletons: a builder that writes the binary container, and a validated
//! zero-copy view over it.
//!
//! # Container (version 1, little endian, every section 16-byte aligned)
//!
//! | offset | size | field |
//! | --- | --- | --- |
//! | 0 | 8 | magic `b"SINEWSKL"` |
//! | 8 | 4 | version (`1`) |
//! | 12 | 4 | joint count `n` (1 ..= [`MAX_JOINTS`]) |
//! | 16 | 4 | total size in bytes |
//! | 20 | 4 | size of the names section in bytes |
//! | 24 | 24 | reserved, zero |
//! | 48 | 2n | parents (`u16`, [`NO_PARENT`] for roots) |
//! | … | 160·ceil(n/4) | rest pose ([`SoaTransform`] blocks) |
//! | … | 64n | inverse bind matrices ([`Mat4`]) |
//! | … | 4(n+1) | name offsets into the names section (`u32`) |
//! | … | names size | names, UTF-8, concatenated |
//!
//! Joints are stored in depth-first pre-order, so every joint's parent comes
//! before it and every subtree is the contiguous range
//! `j .. skeleton.subtree_end(j)`.

use crate::container::{check_aligned, check_preamble, le_u32};
use crate::error::Error;
use crate::math::{Mat4, Transform};
use crate::soa::{all_finite, soa_count, SoaTransform, LANES};

/// Most joints a skeleton may have (ozz-animation uses the same limit).
pub const MAX_JOINTS: usize = 1024;

/// Parent index of a root joint.
pub const NO_PARENT: u16 = u16::MAX;

/// Magic bytes that open a skeleton container.
pub const SKELETON_MAGIC: [u8; 8] = *b"SINEWSKL";

/// Skeleton container version written and read by this build.
pub const SKELETON_VERSION: u32 = 1;

const HEADER_SIZE: usize = 48;

/// One joint as handed to the builder.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointDef<'a> {
    /// Joint name (for tooling and lookup); any UTF-8, may be empty.
    pub name: &'a str,
    /// Index of the parent in the builder's input slice, or `None` for a root.
    pub parent: Option<usize>,
    /// Rest (bind) transform relative to the parent.
    pub rest: Transform,
}

/// Byte offsets of the sections of a container.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Layout {
    parents: usize,
    rest: usize,
    inverse_bind: usize,
    name_offsets: usize,
    names: usize,
    total: usize,
}

const fn align16(x: usize) -> usize {
    (x + 15) & !15
}

impl Layout {
    const fn new(joints: usize, names_size: usize) -> Layout {
        let parents = HEADER_SIZE;
        let rest = align16(parents + 2 * joints);
        let inverse_bind = rest + core::mem::size_of::<SoaTransform>() * soa_count(joints);
        let name_offsets = inverse_bind + core::mem::size_of::<Mat4>() * joints;
        let names = align16(name_offsets + 4 * (joints + 1));
        let total = align16(names + names_size);
        Layout {
            parents,
            rest,
            inverse_bind,
            name_offsets,
            names,
            total,
        }
    }
}

/// Bytes of a container of `joint_count` joints whose names total
/// `names_size` bytes (a multiple of 16); `joint_count <= MAX_JOINTS`.
#[must_use]
pub const fn container_size(joint_count: usize, names_size: usize) -> usize {
    Layout::new(joint_count, names_size).total
}

/// Bytes [`build`] needs for these joints (a multiple of 16).
#[must_use]
pub fn required_size(joints: &[JointDef<'_>]) -> usize {
    let names: usize = joints.iter().map(|j| j.name.len()).sum();
    Layout::new(joints.len(), names).total
}

fn write_u32(bytes: &mut [u8], at: usize, v: u32) {
    bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

/// Builds a skeleton container into `out` and returns the bytes written.
///
/// Joints may come in any order; they are stored in depth-first pre-order
/// (roots and children kept in input order). When `remap` is given it receives,
/// for each input joint, its index in the built skeleton. Inverse bind matrices
/// are computed from the rest pose. `out` must be 16-byte aligned so the result
/// can be viewed in place with [`Skeleton::from_bytes`].
///
/// # Errors
/// [`Error::NoJoints`], [`Error::TooManyJoints`], [`Error::InvalidParent`]
/// (out of range, self or cycle), [`Error::NonFinite`] (rest transform),
/// [`Error::SingularTransform`] (zero scale), [`Error::InvalidName`] (names
/// larger than 4 GiB), [`Error::Misaligned`], [`Error::BufferTooSmall`],
/// [`Error::BadLength`] (`remap` not `joints.len()` long), [`Error::InvalidParent`]
/// names a joint on the cycle when parents form one.
///
/// Everything but [`Error::SingularTransform`] is detected before `out` is
/// written; after that error `out` holds a partial container that
/// [`Skeleton::from_bytes`] may accept, so discard it.
pub fn build(
    joints: &[JointDef<'_>],
    out: &mut [u8],
    remap: Option<&mut [u16]>,
) -> Result<usize, Error> {
    build_with(joints.len(), |j| joints[j], out, remap)
}

/// [`build`] over `n` joints produced on demand by `joint(j)` for `j < n`
/// (called several times per joint; it must return the same definition
/// each time). For sources that are not a `JointDef` slice, e.g. the C
/// ABI's joint array, without copying them into one.
///
/// # Errors
/// As [`build`].
pub fn build_with<'n>(
    n: usize,
    joint: impl Fn(usize) -> JointDef<'n>,
    out: &mut [u8],
    remap: Option<&mut [u16]>,
) -> Result<usize, Error> {
    if n == 0 {
        return Err(Error::NoJoints);
    }
    if n > MAX_JOINTS {
        return Err(Error::TooManyJoints { count: n });
    }
    if let Some(r) = remap.as_deref() {
        crate::soa::check_len("remap", n, r.len())?;
    }
    let mut names_size = 0usize;
    for j in 0..n {
        let def = joint(j);
        if let Some(p) = def.parent {
            if p >= n || p == j {
                return Err(Error::InvalidParent { joint: j });
            }
        }
        if !def.rest.is_finite() {
            return Err(Error::NonFinite {
                what: "rest transform",
            });
        }
        names_size += def.name.len();
    }
    if u32::try_from(names_size).is_err() {
        return Err(Error::InvalidName { joint: n - 1 });
    }
    let layout = Layout::new(n, names_size);
    if out.len() < layout.total {
        return Err(Error::BufferTooSmall {
            needed: layout.total,
            actual: out.len(),
        });
    }
    check_aligned(out.as_ptr())?;

    // Depth-first pre-order with fixed scratch (no allocation).
    let mut order = [0u16; MAX_JOINTS]; // order[new] = old
    let mut new_of = [NO_PARENT; MAX_JOINTS]; // new_of[old] = new
    let mut first_child = [NO_PARENT; MAX_JOINTS];
    let mut next_sibling = [NO_PARENT; MAX_JOINTS];
    let mut first_root = NO_PARENT;
    for j in (0..n).rev() {
        let slot = match joint(j).parent {
            Some(p) => &mut first_child[p],
            None => &mut first_root,
        };
        next_sibling[j] = *slot;
        *slot = j as u16;
    }
    let mut stack = [0u16; MAX_JOINTS];
    let mut depth = 0usize;
    let mut count = 0usize;
    let mut root = first_root;
    while root != NO_PARENT {
        stack[0] = root;
        depth = 1;
        while depth > 0 {
            depth -= 1;
            let j = stack[depth];
            order[count] = j;
            new_of[j as usize] = count as u16;
            count += 1;
            // Push children in reverse so the first child is visited first.
            let mut c = first_child[j as usize];
            let start = depth;
            while c != NO_PARENT {
                stack[depth] = c;
                depth += 1;
                c = next_sibling[c as usize];
            }
            stack[start..depth].reverse();
        }
        root = next_sibling[root as usize];
    }
    let _ = depth;
    if count != n {
        // A joint no root reaches hangs off a cycle or sits on one; n steps up
        // its parent chain are certainly on the cycle.
        let mut bad = (0..n).find(|&j| new_of[j] == NO_PARENT).unwrap_or(0);
        for _ in 0..n {
            bad = joint(bad).parent.unwrap_or(bad);
        }
        return Err(Error::InvalidParent { joint: bad });
    }

    let out = &mut out[..layout.total];
    out.fill(0);
    out[..8].copy_from_slice(&SKELETON_MAGIC);
    write_u32(out, 8, SKELETON_VERSION);
    write_u32(out, 12, n as u32);
    write_u32(out, 16, layout.total as u32);
    write_u32(out, 20, names_size as u32);

    for (new, &old) in order[..n].iter().enumerate() {
        let parent = match joint(old as usize).parent {
            Some(p) => new_of[p],
            None => NO_PARENT,
        };
        out[layout.parents + 2 * new..layout.parents + 2 * new + 2]
            .copy_from_slice(&parent.to_le_bytes());
    }
    {
        let rest: &mut [SoaTransform] =
            bytemuck::cast_slice_mut(&mut out[layout.rest..layout.inverse_bind]);
        rest.fill(SoaTransform::IDENTITY);
        for (new, &old) in order[..n].iter().enumerate() {
            rest[new / LANES].set(new % LANES, &joint(old as usize).rest);
        }
    }
    {
        // Model-space rest matrices first (parents precede children), then
        // invert each in place.
        let ib: &mut [Mat4] =
            bytemuck::cast_slice_mut(&mut out[layout.inverse_bind..layout.name_offsets]);
        for (new, &old) in order[..n].iter().enumerate() {
            let def = joint(old as usize);
            let local = def.rest.to_matrix();
            ib[new] = match def.parent {
                Some(p) => ib[new_of[p] as usize] * local,
                None => local,
            };
        }
        for (new, m) in ib.iter_mut().enumerate() {
            *m = m.inverse_affine().ok_or(Error::SingularTransform {
                joint: order[new] as usize,
            })?;
        }
    }
    let mut at = 0usize;
    for (new, &old) in order[..n].iter().enumerate() {
        let name = joint(old as usize).name.as_bytes();
        write_u32(out, layout.name_offsets + 4 * new, at as u32);
        out[layout.names + at..layout.names + at + name.len()].copy_from_slice(name);
        at += name.len();
    }
    write_u32(out, layout.name_offsets + 4 * n, at as u32);

    if let Some(r) = remap {
        for (old, slot) in r.iter_mut().enumerate() {
            *slot = new_of[old];
        }
    }
    Ok(layout.total)
}

/// A validated, zero-copy view of a skeleton container.
///
/// Immutable and `Copy`; it borrows the bytes it was made from.
#[derive(Clone, Copy, Debug)]
pub struct Skeleton<'a> {
    parents: &'a [u16],
    rest: &'a [SoaTransform],
    inverse_bind: &'a [Mat4],
    name_offsets: &'a [u32],
    names: &'a [u8],
}

impl<'a> Skeleton<'a> {
    /// Validates a container once and views it in place.
    ///
    /// `bytes` must be 16-byte aligned; trailing bytes after the container's
    /// total size are ignored. Validation checks the header, the layout, that
    /// parents are in depth-first pre-order, that every float is finite, and
    /// that names are UTF-8. Cost is linear in the data size.
    ///
    /// # Errors
    /// [`Error::Truncated`], [`Error::BadMagic`], [`Error::UnsupportedVersion`],
    /// [`Error::Misaligned`], [`Error::NoJoints`], [`Error::TooManyJoints`],
    /// [`Error::Corrupt`], [`Error::InvalidParent`], [`Error::NonFinite`],
    /// [`Error::InvalidName`], [`Error::UnsupportedPlatform`].
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Skeleton<'a>, Error> {
        let skeleton = Skeleton::from_validated_bytes(bytes)?;
        skeleton.validate()?;
        Ok(skeleton)
    }

    /// Views a container that [`Skeleton::from_bytes`] accepted before,
    /// checking only its header and layout: O(1), for views re-created from
    /// bytes validated once at load time (the C library's handles do this
    /// on every call). On bytes that changed since, kernels compute
    /// unspecified results but never read out of bounds.
    ///
    /// # Errors
    /// As [`Skeleton::from_bytes`], for the header and layout checks only.
    pub fn from_validated_bytes(bytes: &'a [u8]) -> Result<Skeleton<'a>, Error> {
        check_preamble(bytes, &SKELETON_MAGIC, SKELETON_VERSION, HEADER_SIZE)?;
        let n = le_u32(bytes, 12) as usize;
        if n == 0 {
            return Err(Error::NoJoints);
        }
        if n > MAX_JOINTS {
            return Err(Error::TooManyJoints { count: n });
        }
        let names_size = le_u32(bytes, 20) as usize;
        let layout = Layout::new(n, names_size);
        if le_u32(bytes, 16) as usize != layout.total {
            return Err(Error::Corrupt {
                what: "total size does not match joint count and names size",
            });
        }
        if bytes.len() < layout.total {
            return Err(Error::Truncated {
                needed: layout.total,
                actual: bytes.len(),
            });
        }
        if bytes[24..HEADER_SIZE].iter().any(|&b| b != 0) {
            return Err(Error::Corrupt {
                what: "reserved header bytes are not zero",
            });
        }
        let cast_err = |_| Error::Corrupt {
            what: "section size",
        };
        let parents: &[u16] =
            bytemuck::try_cast_slice(&bytes[layout.parents..layout.parents + 2 * n])
                .map_err(cast_err)?;
        let rest: &[SoaTransform] =
            bytemuck::try_cast_slice(&bytes[layout.rest..layout.inverse_bind]).map_err(cast_err)?;
        let inverse_bind: &[Mat4] =
            bytemuck::try_cast_slice(&bytes[layout.inverse_bind..layout.name_offsets])
                .map_err(cast_err)?;
        let name_offsets: &[u32] = bytemuck::try_cast_slice(
            &bytes[layout.name_offsets..layout.name_offsets + 4 * (n + 1)],
        )
        .map_err(cast_err)?;
        let names = &bytes[layout.names..layout.names + names_size];
        Ok(Skeleton {
            parents,
            rest,
            inverse_bind,
            name_offsets,
            names,
        })
    }

    /// The semantic checks of [`Skeleton::from_bytes`]: parent order,
    /// finite floats, names.
    fn validate(&self) -> Result<(), Error> {
        let (n, names, name_offsets) = (self.joint_count(), self.names, self.name_offsets);
        validate_parents(self.parents)?;
        if !all_finite(bytemuck::cast_slice(self.rest)) {
            return Err(Error::NonFinite { what: "rest pose" });
        }
        if !all_finite(bytemuck::cast_slice(self.inverse_bind)) {
            return Err(Error::NonFinite {
                what: "inverse bind matrix",
            });
        }
        if name_offsets[0] != 0 || name_offsets[n] as usize != names.len() {
            return Err(Error::Corrupt {
                what: "name offsets do not span the names section",
            });
        }
        // One UTF-8 pass over all names, then each offset must be
        // non-decreasing and on a character boundary. An inner offset may
        // point past the names section (only the last one is checked above).
        let all_names = core::str::from_utf8(names).map_err(|e| Error::InvalidName {
            joint: joint_of_name_byte(name_offsets, e.valid_up_to()),
        })?;
        for j in 0..n {
            let (a, b) = (name_offsets[j] as usize, name_offsets[j + 1] as usize);
            if a > b || !all_names.is_char_boundary(a) || !all_names.is_char_boundary(b) {
                return Err(Error::InvalidName { joint: j });
            }
        }
        Ok(())
    }

    /// Number of joints.
    #[inline]
    #[must_use]
    pub fn joint_count(&self) -> usize {
        self.parents.len()
    }

    /// Number of SoA blocks in a pose of this skeleton: `soa_count(joint_count)`.
    #[inline]
    #[must_use]
    pub fn soa_count(&self) -> usize {
        self.rest.len()
    }

    /// Parent indices, [`NO_PARENT`] for roots; every parent precedes its child.
    #[inline]
    #[must_use]
    pub fn parents(&self) -> &'a [u16] {
        self.parents
    }

    /// Parent of joint `j`, or `None` for a root or an out-of-range `j`.
    #[inline]
    #[must_use]
    pub fn parent(&self, j: usize) -> Option<usize> {
        match self.parents.get(j) {
            Some(&p) if p != NO_PARENT => Some(p as usize),
            _ => None,
        }
    }

    /// The rest (bind) pose in SoA blocks; padding lanes are identity.
    #[inline]
    #[must_use]
    pub fn rest_pose(&self) -> &'a [SoaTransform] {
        self.rest
    }

    /// Inverse of each joint's model-space rest matrix.
    #[inline]
    #[must_use]
    pub fn inverse_bind(&self) -> &'a [Mat4] {
        self.inverse_bind
    }

    /// Name of joint `j`, or `None` when out of range.
    #[must_use]
    pub fn joint_name(&self, j: usize) -> Option<&'a str> {
        let a = *self.name_offsets.get(j)? as usize;
        let b = *self.name_offsets.get(j + 1)? as usize;
        core::str::from_utf8(self.names.get(a..b)?).ok()
    }

    /// Index of the first joint called `name`.
    #[must_use]
    pub fn find_joint(&self, name: &str) -> Option<usize> {
        (0..self.joint_count()).find(|&j| self.joint_name(j) == Some(name))
    }

    /// One past the last joint of the subtree rooted at `j` (so the subtree is
    /// `j .. subtree_end(j)`); `joint_count()` for an out-of-range `j`.
    #[must_use]
    pub fn subtree_end(&self, j: usize) -> usize {
        let n = self.joint_count();
        if j >= n {
            return n;
        }
        // Pre-order: the subtree ends at the first later joint whose parent lies before j.
        (j + 1..n)
            .find(|&k| {
                let p = self.parents[k];
                p == NO_PARENT || (p as usize) < j
            })
            .unwrap_or(n)
    }

    /// Depth of joint `j` (roots are 0); 0 for an out-of-range `j`.
    #[must_use]
    pub fn depth(&self, j: usize) -> usize {
        let mut d = 0;
        let mut k = j;
        while let Some(p) = self.parent(k) {
            d += 1;
            k = p;
        }
        d
    }
}

/// The joint whose name holds byte `at` of the names section: the last joint
/// whose name starts at or before it.
fn joint_of_name_byte(name_offsets: &[u32], at: usize) -> usize {
    let joints = name_offsets.len().saturating_sub(1);
    name_offsets[..joints]
        .iter()
        .rposition(|&o| o as usize <= at)
        .unwrap_or(0)
}

/// Checks depth-first pre-order: each joint's parent is `NO_PARENT` or an
/// ancestor-or-self of the previous joint.
fn validate_parents(parents: &[u16]) -> Result<(), Error> {
    // path[..len] is the chain of ancestors of the previous joint, itself last.
    let mut path = [0u16; MAX_JOINTS];
    let mut len = 0usize;
    for (j, &p) in parents.iter().enumerate() {
        if p == NO_PARENT {
            len = 0;
        } else {
            match path[..len].iter().rposition(|&a| a == p) {
                Some(at) => len = at + 1,
                None => return Err(Error::InvalidParent { joint: j }),
            }
        }
        path[len] = j as u16;
        len += 1;
    }
    Ok(())
}
