//! Root motion: extract the root's displacement and yaw from a clip, strip it
//! from the pose (in-place clips), accumulate it in the character's facing
//! frame, and blend it across layers.
//!
//! Conventions: +Y is up. Yaw is the heading of the root's +Z axis projected
//! on the ground, `atan2(f.x, f.z)`. A [`RootMotion`] is expressed in the
//! facing frame at its start: `translation.z` is forward, `translation.x`
//! sideways, `translation.y` up.

use core::f32::consts::{PI, TAU};

use crate::clip::{locate_frames, ClipSource, TimeMode};
use crate::error::Error;
use crate::math::{Quat, Transform, Vec3};
use crate::soa::{get_joint, set_joint, SoaTransform, LANES};

/// A displacement (in the facing frame at its start) and a change of yaw (radians).
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct RootMotion {
    /// Displacement in the facing frame at the start, metres.
    pub translation: Vec3,
    /// Change of heading about +Y, radians in `(−π, π]` per step.
    pub yaw: f32,
}

/// `v` rotated by `yaw` about +Y.
#[inline]
#[must_use]
pub fn rotate_y(v: Vec3, yaw: f32) -> Vec3 {
    let (s, c) = (libm::sinf(yaw), libm::cosf(yaw));
    Vec3::new(v.x * c + v.z * s, v.y, -v.x * s + v.z * c)
}

/// Heading of `q`: the angle of its +Z axis about +Y (0 when it points straight up or down).
#[inline]
#[must_use]
pub fn yaw_of(q: Quat) -> f32 {
    heading_of(q, Vec3::Z)
}

/// Heading of `q`'s local `axis`: its angle about +Y, `atan2(x, z)` (0 when
/// the turned axis points straight up or down).
#[inline]
#[must_use]
pub fn heading_of(q: Quat, axis: Vec3) -> f32 {
    let f = q.rotate(axis);
    if f.x.abs() < 1e-9 && f.z.abs() < 1e-9 {
        0.0
    } else {
        libm::atan2f(f.x, f.z)
    }
}

/// `a` wrapped to `(−π, π]`.
#[inline]
#[must_use]
pub fn wrap_angle(a: f32) -> f32 {
    let r = a - TAU * libm::floorf((a + PI) / TAU);
    if r <= -PI {
        r + TAU
    } else {
        r
    }
}

impl RootMotion {
    /// No motion.
    pub const ZERO: RootMotion = RootMotion {
        translation: Vec3::ZERO,
        yaw: 0.0,
    };

    /// `self` followed by `next` (whose frame is turned by `self.yaw`).
    #[inline]
    #[must_use]
    pub fn then(self, next: RootMotion) -> RootMotion {
        RootMotion {
            translation: self.translation + rotate_y(next.translation, self.yaw),
            yaw: wrap_angle(self.yaw + next.yaw),
        }
    }

    /// The motion from root transform `a` to root transform `b` (clip space).
    #[must_use]
    pub fn between(a: &Transform, b: &Transform) -> RootMotion {
        let (ya, yb) = (yaw_of(a.rotation), yaw_of(b.rotation));
        RootMotion {
            translation: rotate_y(b.translation - a.translation, -ya),
            yaw: wrap_angle(yb - ya),
        }
    }

    /// Weighted mean of several layers' root motions (`Σ wᵢ mᵢ / Σ wᵢ`); zero
    /// motion when every weight is 0.
    ///
    /// # Errors
    /// [`Error::InvalidWeight`] for a negative or non-finite weight.
    pub fn blend(layers: &[(RootMotion, f32)]) -> Result<RootMotion, Error> {
        let mut acc = RootMotion::ZERO;
        let mut total = 0.0;
        for (i, (m, w)) in layers.iter().enumerate() {
            if !(w.is_finite() && *w >= 0.0) {
                return Err(Error::InvalidWeight { layer: i });
            }
            acc.translation = acc.translation + m.translation * *w;
            acc.yaw += m.yaw * *w;
            total += *w;
        }
        if total <= 0.0 {
            return Ok(RootMotion::ZERO);
        }
        Ok(RootMotion {
            translation: acc.translation * (1.0 / total),
            yaw: acc.yaw / total,
        })
    }
}

/// The root joint of stored frame `i` (decoded into `scratch` for clips that decode).
fn root_of<C: ClipSource>(
    clip: &C,
    root: usize,
    i: usize,
    rest: &[SoaTransform],
    scratch: &mut [SoaTransform],
) -> Result<Transform, Error> {
    let count = clip.soa_count() * LANES;
    get_joint(clip.frame(i, rest, scratch)?, root)
        .ok_or(Error::JointOutOfRange { joint: root, count })
}

fn root_at<C: ClipSource>(
    clip: &C,
    root: usize,
    t: f32,
    rest: &[SoaTransform],
    scratch: &mut [SoaTransform],
) -> Result<Transform, Error> {
    let crate::clip::Bracket {
        before: i0,
        after: i1,
        alpha: a,
    } = locate_frames(clip.frame_count(), clip.sample_rate(), t, TimeMode::Clamp)?;
    let x = root_of(clip, root, i0, rest, scratch)?;
    let y = root_of(clip, root, i1, rest, scratch)?;
    Ok(Transform::new(
        x.translation.lerp(y.translation, a),
        x.rotation.nlerp(y.rotation, a),
        x.scale.lerp(y.scale, a),
    ))
}

/// Root motion of a looping clip from time `t0` to `t1 >= t0` (seconds,
/// any number of loops in between: each loop adds the whole cycle's motion).
///
/// `rest` and `scratch` serve clips that decode (see [`ClipSource`]): the
/// rest pose for rest-pose-stripped clips, and `soa_count()` blocks to
/// decode a frame into; pass `&[]` and `&mut []` for raw clips.
///
/// # Errors
/// [`Error::NonFinite`] (a time), [`Error::InvalidParameter`] (`t1 < t0`),
/// [`Error::JointOutOfRange`] (root), [`Error::BadLength`] (`scratch` or a
/// missing `"rest pose"`).
pub fn root_motion<C: ClipSource>(
    clip: &C,
    root: usize,
    t0: f32,
    t1: f32,
    rest: &[SoaTransform],
    scratch: &mut [SoaTransform],
) -> Result<RootMotion, Error> {
    if !(t0.is_finite() && t1.is_finite()) {
        return Err(Error::NonFinite { what: "time" });
    }
    if t1 < t0 {
        return Err(Error::InvalidParameter {
            what: "root motion end time is before its start",
        });
    }
    let d = clip.duration();
    let first = root_at(clip, root, 0.0, rest, scratch)?;
    if d <= 0.0 {
        return Ok(RootMotion::ZERO);
    }
    let (c0, c1) = (libm::floorf(t0 / d), libm::floorf(t1 / d));
    let (r0, r1) = (t0 - c0 * d, t1 - c1 * d);
    let a = root_at(clip, root, r0, rest, scratch)?;
    let b = root_at(clip, root, r1, rest, scratch)?;
    let loops = c1 - c0;
    if loops < 0.5 {
        return Ok(RootMotion::between(&a, &b));
    }
    let last = root_at(clip, root, d, rest, scratch)?;
    let cycle = RootMotion::between(&first, &last);
    // a → end, (loops − 1) whole cycles, start → b.
    let mut m = RootMotion::between(&a, &last);
    let mut k = (loops - 1.0) as u64;
    let mut pow = cycle;
    let mut whole = RootMotion::ZERO;
    while k > 0 {
        if k & 1 == 1 {
            whole = whole.then(pow);
        }
        pow = pow.then(pow);
        k >>= 1;
    }
    m = m.then(whole);
    Ok(m.then(RootMotion::between(&first, &b)))
}

/// Per-frame root motion of a clip: `out[i]` is the motion from frame `i`
/// to frame `i + 1` (`out.len() == frame_count − 1`). For a looping clip,
/// frame `frame_count − 1` equals frame 0, so playback wraps there with no
/// extra step. `rest` and `scratch` as in [`root_motion`].
///
/// # Errors
/// [`Error::BadLength`], [`Error::JointOutOfRange`].
pub fn extract<C: ClipSource>(
    clip: &C,
    root: usize,
    rest: &[SoaTransform],
    scratch: &mut [SoaTransform],
    out: &mut [RootMotion],
) -> Result<(), Error> {
    crate::soa::check_len("root motion", clip.frame_count() - 1, out.len())?;
    let mut prev = root_of(clip, root, 0, rest, scratch)?;
    for (i, o) in out.iter_mut().enumerate() {
        let next = root_of(clip, root, i + 1, rest, scratch)?;
        *o = RootMotion::between(&prev, &next);
        prev = next;
    }
    Ok(())
}

/// Removes root motion from a pose in place: the root's ground position
/// becomes `anchor.x, anchor.z` (height kept) and its yaw becomes
/// `anchor_yaw` (pitch and roll kept).
///
/// # Errors
/// [`Error::JointOutOfRange`].
pub fn remove(
    pose: &mut [SoaTransform],
    root: usize,
    anchor: Vec3,
    anchor_yaw: f32,
) -> Result<(), Error> {
    let count = pose.len() * LANES;
    let mut t = get_joint(pose, root).ok_or(Error::JointOutOfRange { joint: root, count })?;
    let yaw = yaw_of(t.rotation);
    t.rotation = (Quat::from_rotation_y(anchor_yaw - yaw) * t.rotation).normalize();
    t.translation = Vec3::new(anchor.x, t.translation.y, anchor.z);
    set_joint(pose, root, &t)
}

/// Makes a clip's keys in place (for "in-place" playback with extracted
/// root motion): every frame's root is pinned to frame 0's ground position
/// and heading.
///
/// # Errors
/// [`Error::BadLength`] (`keys` not a whole number of frames of `soa_count`
/// blocks), [`Error::JointOutOfRange`].
pub fn make_in_place(
    keys: &mut [SoaTransform],
    soa_count: usize,
    root: usize,
) -> Result<(), Error> {
    if soa_count == 0 || !keys.len().is_multiple_of(soa_count) {
        return Err(Error::BadLength {
            buffer: "clip keys",
            expected: soa_count.max(1) * (keys.len() / soa_count.max(1)),
            actual: keys.len(),
        });
    }
    let first = get_joint(keys, root)
        .filter(|_| root < soa_count * LANES)
        .ok_or(Error::JointOutOfRange {
            joint: root,
            count: soa_count * LANES,
        })?;
    let yaw0 = yaw_of(first.rotation);
    for frame in keys.chunks_exact_mut(soa_count) {
        remove(frame, root, first.translation, yaw0)?;
    }
    Ok(())
}

/// A character's position and heading, advanced by root motion.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct RootAccumulator {
    /// World position, metres.
    pub position: Vec3,
    /// World heading about +Y, radians in `(−π, π]`.
    pub yaw: f32,
}

impl RootAccumulator {
    /// Moves by `m` expressed in the current facing frame, then turns.
    #[inline]
    pub fn apply(&mut self, m: RootMotion) {
        self.position = self.position + rotate_y(m.translation, self.yaw);
        self.yaw = wrap_angle(self.yaw + m.yaw);
    }

    /// The heading as a rotation about +Y.
    #[inline]
    #[must_use]
    pub fn facing(&self) -> Quat {
        Quat::from_rotation_y(self.yaw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Worked example: a walk moves the root 1.8 m forward in 1.2 s; at 60
    /// fps that is 0.025 m per frame; facing 30° about +y the world
    /// displacement is (0.0125, 0, 0.0217) m.
    #[test]
    fn worked_example_walk_facing_30() {
        let per_frame = 1.8 / (1.2 * 60.0);
        assert!((per_frame - 0.025f32).abs() < 1e-7);
        let mut acc = RootAccumulator {
            position: Vec3::ZERO,
            yaw: 30f32.to_radians(),
        };
        acc.apply(RootMotion {
            translation: Vec3::new(0.0, 0.0, per_frame),
            yaw: 0.0,
        });
        let p = acc.position;
        assert!(
            (p.x - 0.0125).abs() < 1e-6 && p.y == 0.0 && (p.z - 0.02165).abs() < 1e-5,
            "{p:?}"
        );
    }

    #[test]
    fn wrap() {
        assert!((wrap_angle(3.0 * PI) - PI).abs() < 1e-5);
        assert!((wrap_angle(-0.5) + 0.5).abs() < 1e-7);
        assert!((wrap_angle(TAU + 0.25) - 0.25).abs() < 1e-5);
    }
}
