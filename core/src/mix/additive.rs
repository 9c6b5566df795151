//! Additive clips: build deltas against a reference pose, apply them on top
//! of a base pose with a weight and an optional per-joint mask.
//!
//! - build: `q_add = q_ref⁻¹ · q`, `t_add = t − t_ref`, `s_add = s / s_ref`;
//! - apply: `q = q_base · slerp(identity, q_add, w)`, `t = t_base + w t_add`,
//!   `s = s_base · (1 + w (s_add − 1))`, with `w` = weight × mask.
//!
//! `slerp(identity, q, w)` is `q^w`: the same axis, `w` times the angle
//! (taken on the short arc), so 12° at weight 0.5 adds exactly 6°.

use wide::f32x4;

use crate::blend::JointWeights;
use crate::clip::ClipSource;
use crate::error::Error;
use crate::fp::{Fp, Trig};
use crate::soa::detail::{quat_flip_signs, quat_mul, vec_mul_add};
use crate::soa::{check_len, SoaQuat, SoaTransform, SoaVec3};

/// Writes the additive delta of `pose` against `reference` into `out` (SIMD).
///
/// # Errors
/// [`Error::BadLength`] unless all three have the same length.
pub fn make_additive(
    reference: &[SoaTransform],
    pose: &[SoaTransform],
    out: &mut [SoaTransform],
) -> Result<(), Error> {
    check_len("pose", reference.len(), pose.len())?;
    check_len("output", reference.len(), out.len())?;
    for ((o, r), p) in out.iter_mut().zip(reference).zip(pose) {
        let inv = SoaQuat {
            x: -r.rotation.x,
            y: -r.rotation.y,
            z: -r.rotation.z,
            w: r.rotation.w,
        };
        *o = SoaTransform {
            translation: SoaVec3 {
                x: p.translation.x - r.translation.x,
                y: p.translation.y - r.translation.y,
                z: p.translation.z - r.translation.z,
            },
            rotation: quat_mul(&inv, &p.rotation),
            scale: SoaVec3 {
                x: p.scale.x / r.scale.x,
                y: p.scale.y / r.scale.y,
                z: p.scale.z / r.scale.z,
            },
        };
    }
    Ok(())
}

/// Writes an additive clip: every frame of `clip` against `reference`, into
/// `out` (the clip's key count). View the result with [`RawClip::new`] at
/// the clip's sample rate.
///
/// `rest` is the skeleton's rest pose for clips compressed with rest-pose
/// stripping (`&[]` otherwise, see [`ClipSource`]); compressed frames are
/// decoded straight into `out`.
///
/// # Errors
/// [`Error::BadLength`] (reference not one frame, `out` not the clip's key
/// count, a missing `"rest pose"`).
///
/// [`RawClip::new`]: crate::clip::RawClip::new
pub fn make_additive_clip<C: ClipSource>(
    clip: &C,
    reference: &[SoaTransform],
    rest: &[SoaTransform],
    out: &mut [SoaTransform],
) -> Result<(), Error> {
    let n = clip.soa_count();
    check_len("reference pose", n, reference.len())?;
    check_len("output", n * clip.frame_count(), out.len())?;
    for (f, o) in out.chunks_exact_mut(n).enumerate() {
        if C::BORROWS_FRAMES {
            make_additive(reference, clip.frame(f, rest, &mut [])?, o)?;
        } else {
            clip.frame(f, rest, o)?;
            // In place, one block at a time: each block depends only on itself.
            for (r, x) in reference.iter().zip(o.iter_mut()) {
                let pose = [*x];
                make_additive(core::slice::from_ref(r), &pose, core::slice::from_mut(x))?;
            }
        }
    }
    Ok(())
}

/// Lane-wise `slerp(identity, q, w) = q^w` on the short arc.
#[inline(always)]
pub(crate) fn quat_pow(q: &SoaQuat, w: f32x4) -> SoaQuat {
    let q = quat_flip_signs(q, q.w.simd_lt(f32x4::ZERO));
    let cos_half = f32x4::ONE.min_lt(q.w);
    let half = cos_half.arccos();
    let sin_half = crate::math::sqrt4((f32x4::ONE - cos_half * cos_half).max_gt(f32x4::ZERO));
    let (s, c) = (half * w).sincos();
    let small = sin_half.simd_lt(f32x4::splat(1e-6));
    let ratio = small.bitselect(w, s / sin_half);
    SoaQuat {
        x: q.x * ratio,
        y: q.y * ratio,
        z: q.z * ratio,
        w: c,
    }
}

/// Applies `add` on top of `base` in place with `weight` and an optional
/// per-joint mask (SIMD). Joints of weight 0 are unchanged.
///
/// # Errors
/// [`Error::InvalidWeight`] (weight negative or not finite), [`Error::BadLength`].
pub fn apply_additive(
    base: &mut [SoaTransform],
    add: &[SoaTransform],
    weight: f32,
    mask: Option<JointWeights<'_>>,
) -> Result<(), Error> {
    validate(base.len(), add.len(), weight, mask)?;
    for (b, (o, a)) in base.iter_mut().zip(add).enumerate() {
        let w = f32x4::splat(weight) * mask.map_or(f32x4::ONE, |m| m.as_slice()[b]);
        o.rotation = quat_mul(&o.rotation, &quat_pow(&a.rotation, w));
        vec_mul_add(&mut o.translation, &a.translation, w);
        let one = f32x4::ONE;
        o.scale.x *= (a.scale.x - one).madd(w, one);
        o.scale.y *= (a.scale.y - one).madd(w, one);
        o.scale.z *= (a.scale.z - one).madd(w, one);
    }
    Ok(())
}

fn validate(
    n: usize,
    add: usize,
    weight: f32,
    mask: Option<JointWeights<'_>>,
) -> Result<(), Error> {
    if !(weight.is_finite() && weight >= 0.0) {
        return Err(Error::InvalidWeight { layer: 0 });
    }
    check_len("additive pose", n, add)?;
    if let Some(m) = mask {
        check_len("joint weights", n, m.as_slice().len())?;
    }
    Ok(())
}

/// Scalar reference implementations: the readable specification.
pub mod reference {
    use super::{validate, Error, JointWeights};
    use crate::math::{Quat, Transform, Vec3};
    use crate::soa::{check_len, SoaTransform, LANES};

    /// `slerp(identity, q, w)` on the short arc.
    #[must_use]
    pub fn quat_pow(q: Quat, w: f32) -> Quat {
        let q = if q.w < 0.0 { -q } else { q };
        let half = libm::acosf(q.w.min(1.0));
        let sin_half = crate::math::sqrt_f32((1.0 - q.w * q.w).max(0.0));
        let ratio = if sin_half < 1e-6 {
            w
        } else {
            libm::sinf(half * w) / sin_half
        };
        Quat::new(q.x * ratio, q.y * ratio, q.z * ratio, libm::cosf(half * w))
    }

    /// Scalar twin of [`super::make_additive`].
    ///
    /// # Errors
    /// As [`super::make_additive`].
    pub fn make_additive(
        reference: &[SoaTransform],
        pose: &[SoaTransform],
        out: &mut [SoaTransform],
    ) -> Result<(), Error> {
        check_len("pose", reference.len(), pose.len())?;
        check_len("output", reference.len(), out.len())?;
        for j in 0..out.len() * LANES {
            let (b, l) = (j / LANES, j % LANES);
            let (r, p) = (reference[b].get(l), pose[b].get(l));
            let s = Vec3::new(
                p.scale.x / r.scale.x,
                p.scale.y / r.scale.y,
                p.scale.z / r.scale.z,
            );
            let t = Transform::new(
                p.translation - r.translation,
                r.rotation.conjugate() * p.rotation,
                s,
            );
            out[b].set(l, &t);
        }
        Ok(())
    }

    /// Scalar twin of [`super::apply_additive`].
    ///
    /// # Errors
    /// As [`super::apply_additive`].
    pub fn apply_additive(
        base: &mut [SoaTransform],
        add: &[SoaTransform],
        weight: f32,
        mask: Option<JointWeights<'_>>,
    ) -> Result<(), Error> {
        validate(base.len(), add.len(), weight, mask)?;
        for j in 0..base.len() * LANES {
            let (b, l) = (j / LANES, j % LANES);
            let w = weight * mask.map_or(1.0, |m| m.get(j));
            let (x, a) = (base[b].get(l), add[b].get(l));
            let t = Transform::new(
                x.translation + a.translation * w,
                x.rotation * quat_pow(a.rotation, w),
                x.scale.mul_elem(Vec3::ONE + (a.scale - Vec3::ONE) * w),
            );
            base[b].set(l, &t);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::{Quat, Transform, Vec3};
    use crate::soa::{get_joint, set_joint};

    /// Worked example: a flinch bends the spine 12° about x relative to its
    /// reference; at weight 0.5 on a run whose spine is at 20°, the result is 26°.
    #[test]
    fn worked_example_flinch() {
        let deg = core::f32::consts::PI / 180.0;
        let spine_ref = Quat::from_rotation_x(5.0 * deg);
        let mut reference = [SoaTransform::IDENTITY];
        let mut flinch = [SoaTransform::IDENTITY];
        set_joint(
            &mut reference,
            0,
            &Transform::from_translation_rotation(Vec3::ZERO, spine_ref),
        )
        .unwrap();
        let bent = spine_ref * Quat::from_rotation_x(12.0 * deg);
        set_joint(
            &mut flinch,
            0,
            &Transform::from_translation_rotation(Vec3::ZERO, bent),
        )
        .unwrap();
        let mut add = [SoaTransform::IDENTITY];
        make_additive(&reference, &flinch, &mut add).unwrap();
        let mut run = [SoaTransform::IDENTITY];
        let run_q = Quat::from_rotation_x(20.0 * deg);
        set_joint(
            &mut run,
            0,
            &Transform::from_translation_rotation(Vec3::ZERO, run_q),
        )
        .unwrap();
        let mut scalar = run;
        apply_additive(&mut run, &add, 0.5, None).unwrap();
        reference::apply_additive(&mut scalar, &add, 0.5, None).unwrap();
        for pose in [run, scalar] {
            let q = get_joint(&pose, 0).unwrap().rotation;
            let expect = Quat::from_rotation_x(26.0 * deg);
            assert!((q.dot(expect).abs() - 1.0).abs() < 1e-6, "{q:?}");
            assert!((q.angle() / deg - 26.0).abs() < 1e-2);
        }
    }
}
