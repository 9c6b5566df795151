//! Building a retarget map: the constants of every target joint from two
//! skeletons' rest poses and a correspondence, written into caller bytes.
//! Offline, but allocation-free like the rest of the core (it walks parent
//! chains instead of keeping per-joint scratch).

use super::names::{self, mapped_ancestor, Convention, Role};
use super::{layout, skeleton_fingerprint, MAP_MAGIC, MAP_VERSION, NO_SOURCE};
use crate::error::Error;
use crate::math::{Mat4, Quat, Transform, Vec3};
use crate::skeleton::{Skeleton, NO_PARENT};
use crate::soa::{get_joint, soa_count, SoaQuat, SoaTransform};

/// Most source joints on one target joint's path (source joints between
/// two mapped joints, plus the mapped one).
pub const MAX_PATH: usize = 32;

/// How a map is built.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MapOptions {
    /// Fold into each mapped joint's constants the swing that takes the
    /// target's rest bone direction (towards its one mapped child) onto the
    /// source's, so a T-pose source drives an A-pose target's bones in the
    /// source's directions (joints with no or several mapped children keep
    /// their rest direction). Off: each target joint's rotation relative to
    /// its own rest follows the source's, bone directions differ by the two
    /// rests' difference.
    pub align_rest_directions: bool,
    /// The rotation from the source's model frame to the target's (`C`);
    /// `None` derives it from the rest poses (left from the right to the
    /// left upper leg, up from the hips to the head, neck or highest spine
    /// joint, on both skeletons), or uses the identity when the roles are
    /// not known.
    pub frame: Option<Quat>,
    /// The factor on the root translation; `None` uses the ratio of the
    /// hips' heights above the feet along the up axis (target over source),
    /// or 1 when those joints are not known.
    pub root_scale: Option<f32>,
}

/// What [`write_map`] derived.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MapInfo {
    /// Bytes written.
    pub size: usize,
    /// The source-to-target frame `C` used.
    pub frame: Quat,
    /// Whether `C` came from the skeletons' roles (false: option or identity).
    pub frame_from_roles: bool,
    /// The root translation factor used.
    pub root_scale: f32,
    /// Mapped target joints whose constants include a rest-direction swing.
    pub aligned: usize,
    /// Steps of the longest source path.
    pub max_path: usize,
    /// The root pair `(target joint, source joint)` whose translation is
    /// transferred, if anything is mapped: the source joint of the map's
    /// root and the topmost target ancestor of its target joint.
    pub root: Option<(usize, usize)>,
}

fn rest_local(s: &Skeleton<'_>, j: usize) -> Transform {
    get_joint(s.rest_pose(), j).unwrap_or_default()
}

/// Rest model-space rotation of joint `j` (identity for `None`).
fn rest_rotation(s: &Skeleton<'_>, j: Option<usize>) -> Quat {
    let Some(j) = j else { return Quat::IDENTITY };
    let mut r = rest_local(s, j).rotation;
    let mut k = j;
    while let Some(p) = s.parent(k) {
        r = rest_local(s, p).rotation * r;
        k = p;
    }
    r.normalize()
}

/// Rest model-space matrix of joint `j` (identity for `None`).
fn rest_matrix(s: &Skeleton<'_>, j: Option<usize>) -> Mat4 {
    let Some(j) = j else { return Mat4::IDENTITY };
    let mut m = rest_local(s, j).to_matrix();
    let mut k = j;
    while let Some(p) = s.parent(k) {
        m = rest_local(s, p).to_matrix() * m;
        k = p;
    }
    m
}

fn rest_position(s: &Skeleton<'_>, j: usize) -> Vec3 {
    rest_matrix(s, Some(j)).translation()
}

/// The source path of target joint `j`: source joints from below `from`
/// (or the source root) down to `to`, in product order.
fn source_path(
    source: &Skeleton<'_>,
    from: Option<usize>,
    to: usize,
    buf: &mut [u16; MAX_PATH],
) -> Result<usize, Error> {
    let mut len = 0;
    let mut k = Some(to);
    while let Some(j) = k {
        if Some(j) == from {
            break;
        }
        if len == MAX_PATH {
            return Err(Error::CapacityExceeded { capacity: MAX_PATH });
        }
        buf[len] = j as u16;
        len += 1;
        k = source.parent(j);
    }
    buf[..len].reverse();
    Ok(len)
}

/// Everything a builder pass needs about one target joint.
struct Joint {
    /// Source joint.
    s: usize,
    /// Nearest mapped target ancestor.
    p: Option<usize>,
}

/// Checks the correspondence and returns the mapping of target joint `j`.
fn joint(
    source: &Skeleton<'_>,
    target: &Skeleton<'_>,
    map: &[u16],
    j: usize,
) -> Result<Option<Joint>, Error> {
    let Some(&s) = map.get(j) else {
        return Ok(None);
    };
    if s == NO_PARENT {
        return Ok(None);
    }
    let s = s as usize;
    if s >= source.joint_count() {
        return Err(Error::JointOutOfRange {
            joint: s,
            count: source.joint_count(),
        });
    }
    let p = mapped_ancestor(target, map, j);
    if let Some(p) = p {
        let sp = map.get(p).map_or(0, |&v| v as usize);
        if !names::is_ancestor(source, sp, s) {
            return Err(Error::RetargetConflict { joint: j });
        }
    }
    Ok(Some(Joint { s, p }))
}

/// The longest source path of the correspondence, after checking it.
fn max_path(source: &Skeleton<'_>, target: &Skeleton<'_>, map: &[u16]) -> Result<usize, Error> {
    crate::soa::check_len("correspondence", target.joint_count(), map.len())?;
    let mut longest = 0;
    let mut buf = [0u16; MAX_PATH];
    for j in 0..target.joint_count() {
        if let Some(m) = joint(source, target, map, j)? {
            let from = m.p.and_then(|p| map.get(p)).map(|&v| v as usize);
            longest = longest.max(source_path(source, from, m.s, &mut buf)?);
        }
    }
    Ok(longest)
}

/// Bytes [`write_map`] needs for these skeletons and correspondence
/// (`correspondence[t]` = source joint of target joint `t`, or
/// [`NO_PARENT`]).
///
/// # Errors
/// As [`write_map`] for the correspondence.
pub fn map_size(
    source: &Skeleton<'_>,
    target: &Skeleton<'_>,
    correspondence: &[u16],
) -> Result<usize, Error> {
    let steps = max_path(source, target, correspondence)?;
    layout(target.joint_count(), steps)
        .map(|l| l.total)
        .ok_or(Error::InvalidParameter {
            what: "retarget map would exceed 4 GiB",
        })
}

/// Role of target joint `j`: its own under the target's convention, else
/// that of its source joint under the source's.
struct Roles<'s, 'a> {
    source: &'s Skeleton<'a>,
    target: &'s Skeleton<'a>,
    map: &'s [u16],
    sc: Option<Convention>,
    tc: Option<Convention>,
}

impl Roles<'_, '_> {
    /// The mapped pair `(target joint, source joint)` with `role`.
    fn pair(&self, role: Role) -> Option<(usize, usize)> {
        (0..self.target.joint_count()).find_map(|j| {
            let s = *self.map.get(j)?;
            if s == NO_PARENT {
                return None;
            }
            let r = names::role_of_joint(self.target, self.tc, j)
                .or_else(|| names::role_of_joint(self.source, self.sc, s as usize))?;
            (r == role).then_some((j, s as usize))
        })
    }

    /// Rest positions of the pair with `role` on (target, source).
    fn points(&self, role: Role) -> Option<(Vec3, Vec3)> {
        let (t, s) = self.pair(role)?;
        Some((rest_position(self.target, t), rest_position(self.source, s)))
    }

    /// Each skeleton's frame (columns: left, up, forward) as a rotation.
    fn frames(&self) -> Option<(Quat, Quat)> {
        let (lt, ls) = self.points(Role::LeftUpperLeg)?;
        let (rt, rs) = self.points(Role::RightUpperLeg)?;
        let (ht, hs) = self.points(Role::Hips)?;
        let (tt, ts) = [
            Role::Head,
            Role::Neck,
            Role::UpperChest,
            Role::Chest,
            Role::Spine,
        ]
        .into_iter()
        .find_map(|r| self.points(r))?;
        Some((basis(lt - rt, tt - ht)?, basis(ls - rs, ts - hs)?))
    }

    /// Hip height above the feet along `up` on (target, source).
    fn hip_heights(&self, up_t: Vec3, up_s: Vec3) -> Option<(f32, f32)> {
        let (ht, hs) = self.points(Role::Hips)?;
        let feet = [Role::LeftFoot, Role::RightFoot].map(|r| self.points(r));
        let mut n = 0.0;
        let (mut ft, mut fs) = (Vec3::ZERO, Vec3::ZERO);
        for (t, s) in feet.into_iter().flatten() {
            ft = ft + t;
            fs = fs + s;
            n += 1.0;
        }
        if n == 0.0 {
            return None;
        }
        let h_t = up_t.dot(ht - ft * (1.0 / n));
        let h_s = up_s.dot(hs - fs * (1.0 / n));
        (h_t > 1e-6 && h_s > 1e-6 && h_t.is_finite() && h_s.is_finite()).then_some((h_t, h_s))
    }
}

/// The rotation whose columns are `left`, `up` made orthogonal to it, and
/// their cross product (`None` when degenerate).
fn basis(left: Vec3, up: Vec3) -> Option<Quat> {
    let x = left.try_normalize()?;
    let y = (up - x * x.dot(up)).try_normalize()?;
    let z = x.cross(y);
    let m = Mat4 {
        cols: [
            [x.x, x.y, x.z, 0.0],
            [y.x, y.y, y.z, 0.0],
            [z.x, z.y, z.z, 0.0],
            [0.0, 0.0, 0.0, 1.0],
        ],
    };
    let q = m.rotation();
    q.is_finite().then_some(q)
}

fn write_u32(out: &mut [u8], at: usize, v: u32) {
    if let Some(d) = out.get_mut(at..at + 4) {
        d.copy_from_slice(&v.to_le_bytes());
    }
}

/// Builds the retarget map of `correspondence` (`correspondence[t]` = the
/// source joint of target joint `t`, or [`NO_PARENT`]; [`names::correspond`]
/// makes one) into `out`, and returns what it derived.
///
/// # Errors
/// [`Error::BadLength`] when `correspondence` is not one entry per target
/// joint; [`Error::JointOutOfRange`] for an entry past the source;
/// [`Error::RetargetConflict`] for a target joint whose source joint is not
/// below its nearest mapped ancestor's; [`Error::CapacityExceeded`] for a
/// source path longer than [`MAX_PATH`]; [`Error::InvalidParameter`] for a
/// non-unit or non-finite `frame` or a `root_scale` that is not finite and
/// `> 0`; [`Error::BufferTooSmall`] when `out` is shorter than
/// [`map_size`]; [`Error::Misaligned`] when `out` is not 16-byte aligned.
pub fn write_map(
    source: &Skeleton<'_>,
    target: &Skeleton<'_>,
    correspondence: &[u16],
    options: &MapOptions,
    out: &mut [u8],
) -> Result<MapInfo, Error> {
    let map = correspondence;
    let steps = max_path(source, target, map)?;
    if let Some(q) = options.frame {
        if !q.is_finite() || libm::fabsf(q.length() - 1.0) > 1e-3 {
            return Err(Error::InvalidParameter {
                what: "retarget frame must be a finite unit quaternion",
            });
        }
    }
    if let Some(k) = options.root_scale {
        if !(k.is_finite() && k > 0.0) {
            return Err(Error::InvalidParameter {
                what: "retarget root scale must be finite and > 0",
            });
        }
    }
    let nt = target.joint_count();
    let lay = layout(nt, steps).ok_or(Error::InvalidParameter {
        what: "retarget map would exceed 4 GiB",
    })?;
    if out.len() < lay.total {
        return Err(Error::BufferTooSmall {
            needed: lay.total,
            actual: out.len(),
        });
    }
    crate::container::check_aligned(out.as_ptr())?;

    let roles = Roles {
        source,
        target,
        map,
        sc: Convention::detect(source),
        tc: Convention::detect(target),
    };
    let frames = roles.frames();
    let (frame, frame_from_roles) = match (options.frame, frames) {
        (Some(q), _) => (q.normalize(), false),
        (None, Some((ft, fs))) => ((ft * fs.conjugate()).normalize(), true),
        (None, None) => (Quat::IDENTITY, false),
    };
    let (up_t, up_s) = match frames {
        Some((ft, fs)) => (ft.rotate(Vec3::Y), fs.rotate(Vec3::Y)),
        None => (frame.rotate(Vec3::Y), Vec3::Y),
    };
    let root_scale = options.root_scale.unwrap_or_else(|| {
        roles
            .hip_heights(up_t, up_s)
            .map_or(1.0, |(h_t, h_s)| h_t / h_s)
    });

    let bytes = match out.get_mut(..lay.total) {
        Some(b) => b,
        None => {
            return Err(Error::BufferTooSmall {
                needed: lay.total,
                actual: 0,
            })
        }
    };
    bytes.fill(0);
    bytes[..8].copy_from_slice(&MAP_MAGIC);
    write_u32(bytes, 8, MAP_VERSION);
    write_u32(bytes, 12, source.joint_count() as u32);
    write_u32(bytes, 16, nt as u32);
    write_u32(bytes, 20, steps as u32);
    write_u32(bytes, 32, skeleton_fingerprint(source));
    write_u32(bytes, 36, skeleton_fingerprint(target));
    write_u32(bytes, 40, lay.total as u32);

    // The swing of each mapped target joint towards the source's bone direction.
    let swing = |j: usize, s: usize| -> Quat {
        if !options.align_rest_directions {
            return Quat::IDENTITY;
        }
        let mut child = None;
        for k in j + 1..target.subtree_end(j) {
            if map.get(k).is_some_and(|&v| v != NO_PARENT)
                && mapped_ancestor(target, map, k) == Some(j)
            {
                if child.is_some() {
                    return Quat::IDENTITY;
                }
                child = Some(k);
            }
        }
        let Some(c) = child else {
            return Quat::IDENTITY;
        };
        let sc = map.get(c).map_or(0, |&v| v as usize);
        let dt = rest_position(target, c) - rest_position(target, j);
        let ds = frame.rotate(rest_position(source, sc) - rest_position(source, s));
        match (dt.try_normalize(), ds.try_normalize()) {
            (Some(a), Some(b)) => Quat::from_rotation_arc(a, b),
            _ => Quat::IDENTITY,
        }
    };

    let blocks = soa_count(nt);
    let mut aligned = 0;
    let mut root = None;
    let mut buf = [0u16; MAX_PATH];
    for b in 0..blocks {
        let mut pre = SoaQuat::IDENTITY;
        let mut post = SoaQuat::IDENTITY;
        let mut mask = [0u32; 4];
        let mut path = [[NO_SOURCE; 4]; MAX_PATH];
        for (l, lane_mask) in mask.iter_mut().enumerate() {
            let j = b * 4 + l;
            let Some(m) = joint(source, target, map, j)? else {
                continue;
            };
            // The root: of the mapped joints with no mapped ancestor, the one
            // whose source joint is nearest the source root (a foot parented to
            // the skeleton's root, as in IK rigs, is no root of the motion).
            if m.p.is_none() {
                let depth = source.depth(m.s);
                if root.is_none_or(|(_, s): (usize, usize)| depth < source.depth(s)) {
                    root = Some((j, m.s));
                }
            }
            *lane_mask = u32::MAX;
            let sp = m.p.and_then(|p| map.get(p)).map(|&v| v as usize);
            let len = source_path(source, sp, m.s, &mut buf)?;
            for (step, &e) in buf.iter().take(len).enumerate() {
                path[step][l] = e;
            }
            let s_j = swing(j, m.s);
            if s_j != Quat::IDENTITY {
                aligned += 1;
            }
            let s_p = m.p.map_or(Quat::IDENTITY, |p| {
                swing(p, map.get(p).map_or(0, |&v| v as usize))
            });
            let rt_parent = rest_rotation(target, target.parent(j));
            let rs_p = rest_rotation(source, sp);
            let rs_j = rest_rotation(source, Some(m.s));
            let rt_j = rest_rotation(target, Some(j));
            let pre_q = rt_parent.conjugate() * s_p.conjugate() * frame * rs_p;
            let post_q = rs_j.conjugate() * frame.conjugate() * s_j * rt_j;
            pre.set(l, pre_q.normalize());
            post.set(l, post_q.normalize());
        }
        let rest = target
            .rest_pose()
            .get(b)
            .copied()
            .unwrap_or(SoaTransform::IDENTITY);
        let put = |bytes: &mut [u8], at: usize, src: &[u8]| {
            if let Some(d) = bytes.get_mut(at..at + src.len()) {
                d.copy_from_slice(src);
            }
        };
        put(bytes, lay.rest + b * 160, bytemuck::bytes_of(&rest));
        put(bytes, lay.pre + b * 64, bytemuck::bytes_of(&pre));
        put(bytes, lay.post + b * 64, bytemuck::bytes_of(&post));
        put(bytes, lay.mask + b * 16, bytemuck::bytes_of(&mask));
        for (step, lanes) in path.iter().take(steps).enumerate() {
            put(
                bytes,
                lay.path + (b * steps + step) * 8,
                bytemuck::bytes_of(lanes),
            );
        }
    }

    // The translation goes to the topmost ancestor of the root joint, so
    // unmapped joints above the hips (an armature's root, IK rigs' bodies)
    // come along; the root joint keeps its rest offset from it.
    let root = root.map(|(rt, rs)| {
        let mut top = rt;
        while let Some(p) = target.parent(top) {
            top = p;
        }
        (rt, top, rs)
    });
    match root {
        Some((rt, top, rs)) => {
            write_u32(bytes, 24, top as u32);
            write_u32(bytes, 28, rs as u32);
            let ms = rest_matrix(source, source.parent(rs));
            let to_target = Mat4::from_trs(Vec3::ZERO, frame, Vec3::splat(root_scale)) * ms;
            let m = if top == rt {
                let mt = rest_matrix(target, target.parent(rt))
                    .inverse_affine()
                    .ok_or(Error::SingularTransform { joint: rt })?;
                mt * to_target
            } else {
                let off = rest_matrix(target, Some(rt)).translation()
                    - rest_matrix(target, Some(top)).translation();
                Mat4::from_translation(-off) * to_target
            };
            let a = [
                m.cols[0][0],
                m.cols[0][1],
                m.cols[0][2],
                m.cols[1][0],
                m.cols[1][1],
                m.cols[1][2],
                m.cols[2][0],
                m.cols[2][1],
                m.cols[2][2],
                m.cols[3][0],
                m.cols[3][1],
                m.cols[3][2],
            ];
            if a.iter().any(|v| !v.is_finite()) {
                return Err(Error::NonFinite {
                    what: "retarget root map",
                });
            }
            for (i, v) in a.iter().enumerate() {
                write_u32(bytes, 48 + 4 * i, v.to_bits());
            }
        }
        None => {
            write_u32(bytes, 24, u32::MAX);
            write_u32(bytes, 28, u32::MAX);
        }
    }
    Ok(MapInfo {
        size: lay.total,
        frame,
        frame_from_roles,
        root_scale,
        aligned,
        max_path: steps,
        root: root.map(|(_, top, rs)| (top, rs)),
    })
}
