//! The comparison baseline: the same pipeline written the way a typical engine
//! writes it with [`glam`].
//!
//! Array-of-structures (one [`Transform`] per joint), spherical linear
//! interpolation for rotations, and one `glam::Mat4` per joint for forward
//! kinematics. It is meant to be a fair, competent implementation (glam's
//! SSE2 types, no allocation in the per-frame functions, release builds), so
//! that the speed ratios quoted against it measure data layout and algorithm,
//! not a strawman.
//!
//! The per-frame functions panic on mismatched slice lengths (documented per
//! function); they are benchmark and test code, not a hardened API.
//! [`GlamBackend`] runs them as a crowd [`Backend`] for `sinew bench`.

use glam::{Mat4, Quat, Vec3};
use sinew_core::blend::DEFAULT_THRESHOLD;
use sinew_core::clip::RawClip;
use sinew_core::soa::get_joint;
use sinew_core::{Error, SoaTransform};
use sinew_std::assets::check_clip;
use sinew_std::crowd::{Backend, Drive, BATCH};
use sinew_std::{Humanoid, OwnedClip, OwnedSkeleton};

/// One joint's local transform in glam types (scale, then rotation, then translation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transform {
    /// Translation relative to the parent joint.
    pub translation: Vec3,
    /// Rotation relative to the parent joint (unit quaternion).
    pub rotation: Quat,
    /// Per-axis scale.
    pub scale: Vec3,
}

impl Transform {
    /// No translation, no rotation, unit scale.
    pub const IDENTITY: Transform = Transform {
        translation: Vec3::ZERO,
        rotation: Quat::IDENTITY,
        scale: Vec3::ONE,
    };

    /// The affine matrix `T * R * S`.
    #[inline]
    #[must_use]
    pub fn to_mat4(&self) -> Mat4 {
        Mat4::from_scale_rotation_translation(self.scale, self.rotation, self.translation)
    }
}

impl Default for Transform {
    fn default() -> Self {
        Transform::IDENTITY
    }
}

impl From<sinew_core::Transform> for Transform {
    #[inline]
    fn from(t: sinew_core::Transform) -> Self {
        let (v, q, s) = (t.translation, t.rotation, t.scale);
        Transform {
            translation: Vec3::new(v.x, v.y, v.z),
            rotation: Quat::from_xyzw(q.x, q.y, q.z, q.w),
            scale: Vec3::new(s.x, s.y, s.z),
        }
    }
}

/// Converts the first `joints` joints of an SoA pose to AoS.
///
/// Joints past the pose's blocks (when `joints > 4 * pose.len()`) come out as
/// [`Transform::IDENTITY`].
#[must_use]
pub fn to_aos(pose: &[SoaTransform], joints: usize) -> Vec<Transform> {
    (0..joints)
        .map(|j| get_joint(pose, j).map_or(Transform::IDENTITY, Transform::from))
        .collect()
}

/// A raw uniform clip in AoS: `frames[f][j]`.
#[derive(Clone, Debug, PartialEq)]
pub struct AosClip {
    /// Frames per second.
    pub sample_rate: f32,
    /// `frames[f][j]` is joint `j` at frame `f`; the last frame repeats the first
    /// for a looping clip, as in [`RawClip`].
    pub frames: Vec<Vec<Transform>>,
}

impl AosClip {
    /// Copies the first `joints` joints of every frame of `clip`.
    #[must_use]
    pub fn from_raw(clip: &RawClip<'_>, joints: usize) -> AosClip {
        let frames = (0..clip.frame_count())
            .map(|f| to_aos(clip.frame(f).unwrap_or(&[]), joints))
            .collect();
        AosClip {
            sample_rate: clip.sample_rate(),
            frames,
        }
    }

    /// Duration in seconds: `(frames - 1) / sample_rate` (0 for fewer than two frames).
    #[inline]
    #[must_use]
    pub fn duration(&self) -> f32 {
        self.frames.len().saturating_sub(1) as f32 / self.sample_rate
    }

    /// Looping sample at time `t` seconds: lerp translation/scale, slerp rotation
    /// (glam `Quat::slerp`).
    ///
    /// Writes `min(out.len(), joints)` entries. A non-finite `t` samples frame 0.
    ///
    /// # Panics
    /// When the clip has no frames.
    pub fn sample(&self, t: f32, out: &mut [Transform]) {
        let last = self.frames.len() - 1;
        let d = self.duration();
        let (i0, i1, alpha) = if last == 0 || !t.is_finite() {
            (0, 0, 0.0)
        } else {
            let t = t.rem_euclid(d);
            let f = (t * self.sample_rate).clamp(0.0, last as f32);
            let i0 = (f as usize).min(last);
            (i0, (i0 + 1).min(last), f - i0 as f32)
        };
        let (a, b) = (&self.frames[i0], &self.frames[i1]);
        for ((o, a), b) in out.iter_mut().zip(a).zip(b) {
            *o = Transform {
                translation: a.translation.lerp(b.translation, alpha),
                rotation: a.rotation.slerp(b.rotation, alpha),
                scale: a.scale.lerp(b.scale, alpha),
            };
        }
    }
}

/// Weighted blend of layers into `out`.
///
/// Weights are normalised by their sum; layers with weight `<= 0` are skipped;
/// if the sum is below `threshold` the rest pose fills in with weight
/// `threshold - sum`. Rotations are blended by successive slerp
/// (`acc = slerp(acc, q_i, w_i / running_sum)`), translations and scales by
/// weighted average. Layer-major loops (one pass over the joints per layer),
/// as engines that blend whole poses do.
///
/// Writes `rest.len()` entries of `out`. If every weight is `<= 0` and
/// `threshold <= 0`, `out` is the rest pose.
///
/// # Panics
/// When `out` or a layer has a different length than `rest`.
pub fn blend(
    layers: &[(&[Transform], f32)],
    rest: &[Transform],
    threshold: f32,
    out: &mut [Transform],
) {
    let n = rest.len();
    assert_eq!(out.len(), n, "output length");
    let mut total = 0.0f32;
    let mut add = |pose: &[Transform], w: f32, total: &mut f32| {
        assert_eq!(pose.len(), n, "layer length");
        if *total == 0.0 {
            for (o, x) in out.iter_mut().zip(pose) {
                *o = Transform {
                    translation: x.translation * w,
                    rotation: x.rotation,
                    scale: x.scale * w,
                };
            }
        } else {
            let a = w / (*total + w);
            for (o, x) in out.iter_mut().zip(pose) {
                o.translation += x.translation * w;
                o.scale += x.scale * w;
                o.rotation = o.rotation.slerp(x.rotation, a);
            }
        }
        *total += w;
    };
    for &(pose, w) in layers {
        if w > 0.0 {
            add(pose, w, &mut total);
        }
    }
    if total < threshold {
        add(rest, threshold - total, &mut total);
    }
    if total > 0.0 {
        let inv = 1.0 / total;
        for o in out.iter_mut() {
            o.translation *= inv;
            o.scale *= inv;
        }
    } else {
        out.copy_from_slice(rest);
    }
}

/// As [`blend`], but rotations by nlerp (sign-aligned weighted sum, one
/// normalisation per joint), the algorithm sinew uses.
///
/// Not part of the pipeline the README compares against; it separates the cost
/// of the layout (AoS vs SoA) from the cost of the algorithm (slerp vs nlerp).
///
/// # Panics
/// When `out` or a layer has a different length than `rest`.
pub fn blend_nlerp(
    layers: &[(&[Transform], f32)],
    rest: &[Transform],
    threshold: f32,
    out: &mut [Transform],
) {
    let n = rest.len();
    assert_eq!(out.len(), n, "output length");
    let mut total = 0.0f32;
    let mut add = |pose: &[Transform], w: f32, total: &mut f32| {
        assert_eq!(pose.len(), n, "layer length");
        if *total == 0.0 {
            for (o, x) in out.iter_mut().zip(pose) {
                *o = Transform {
                    translation: x.translation * w,
                    rotation: x.rotation * w,
                    scale: x.scale * w,
                };
            }
        } else {
            for (o, x) in out.iter_mut().zip(pose) {
                o.translation += x.translation * w;
                o.scale += x.scale * w;
                let ws = if o.rotation.dot(x.rotation) < 0.0 {
                    -w
                } else {
                    w
                };
                o.rotation += x.rotation * ws;
            }
        }
        *total += w;
    };
    for &(pose, w) in layers {
        if w > 0.0 {
            add(pose, w, &mut total);
        }
    }
    if total < threshold {
        add(rest, threshold - total, &mut total);
    }
    if total > 0.0 {
        let inv = 1.0 / total;
        for o in out.iter_mut() {
            o.translation *= inv;
            o.scale *= inv;
            o.rotation = o.rotation.normalize();
        }
    } else {
        out.copy_from_slice(rest);
    }
}

/// Forward kinematics: `model[j] = model[parent] * Mat4::from_scale_rotation_translation(local[j])`;
/// `parents[j] == u16::MAX` for roots (whose model matrix is their local matrix).
///
/// Parents must precede their children.
///
/// # Panics
/// When `local` or `out` is shorter than `parents`, or a parent index is not
/// smaller than its child's.
pub fn local_to_model(parents: &[u16], local: &[Transform], out: &mut [Mat4]) {
    local_to_model_range(parents, local, 0, parents.len(), out);
}

/// [`local_to_model`] for joints `first .. end` only; model matrices of parents
/// before `first` are read from `out` (a partial update, e.g. one subtree).
///
/// # Panics
/// As [`local_to_model`], or when `first > end` or `end > parents.len()`.
pub fn local_to_model_range(
    parents: &[u16],
    local: &[Transform],
    first: usize,
    end: usize,
    out: &mut [Mat4],
) {
    for j in first..end {
        let l = local[j].to_mat4();
        let p = parents[j];
        out[j] = if p == u16::MAX {
            l
        } else {
            assert!((p as usize) < j, "parents must precede children");
            out[p as usize] * l
        };
    }
}

/// The baseline as a crowd [`Backend`]: the same skeleton and clips as
/// [`sinew_std::crowd::SinewBackend`], run through the glam AoS code above,
/// so `sinew bench` can put the two pipelines side by side.
pub struct GlamBackend {
    parents: Vec<u16>,
    rest: Vec<Transform>,
    clips: [AosClip; 3],
}

impl GlamBackend {
    /// Converts the humanoid to the baseline's AoS data.
    #[must_use]
    pub fn new(h: &Humanoid) -> Self {
        match GlamBackend::from_clips(&h.skeleton, &h.clips) {
            Ok(b) => b,
            Err(e) => unreachable!("the humanoid has three matching clips: {e}"),
        }
    }

    /// Converts any skeleton and its first three clips (repeating when fewer).
    ///
    /// # Errors
    /// As [`sinew_std::crowd::SinewBackend::from_clips`].
    pub fn from_clips(skeleton: &OwnedSkeleton, clips: &[OwnedClip]) -> Result<Self, Error> {
        let skel = skeleton.view();
        let n = skel.joint_count();
        let aos: Vec<AosClip> = clips
            .iter()
            .take(3)
            .map(|c| {
                check_clip(&skel, &c.view())?;
                Ok(AosClip::from_raw(&c.view(), n))
            })
            .collect::<Result<_, Error>>()?;
        if aos.is_empty() {
            return Err(Error::BadLength {
                buffer: "clips",
                expected: 1,
                actual: 0,
            });
        }
        // Clip `k % clips` for slot `k`, as the sinew backend does.
        let slot = |k: usize| aos[k % aos.len()].clone();
        Ok(GlamBackend {
            parents: skel.parents().to_vec(),
            rest: to_aos(skel.rest_pose(), n),
            clips: [slot(0), slot(1), slot(2)],
        })
    }
}

/// Per-batch buffers of [`GlamBackend`].
pub struct GlamScratch {
    sampled: Vec<[Vec<Transform>; 3]>,
    local: Vec<Vec<Transform>>,
    models: Vec<Vec<Mat4>>,
}

impl Backend for GlamBackend {
    type Scratch = GlamScratch;

    fn joints(&self) -> usize {
        self.parents.len()
    }

    fn durations(&self) -> [f32; 3] {
        [0, 1, 2].map(|i| self.clips[i].duration())
    }

    fn scratch(&self) -> GlamScratch {
        let pose = vec![Transform::IDENTITY; self.parents.len()];
        GlamScratch {
            sampled: (0..BATCH)
                .map(|_| [pose.clone(), pose.clone(), pose.clone()])
                .collect(),
            local: vec![pose.clone(); BATCH],
            models: vec![vec![Mat4::IDENTITY; self.parents.len()]; BATCH],
        }
    }

    fn sample(&self, s: &mut GlamScratch, k: usize, d: &Drive) -> Result<(), Error> {
        for ((clip, out), &t) in self.clips.iter().zip(s.sampled[k].iter_mut()).zip(&d.times) {
            clip.sample(t, out);
        }
        Ok(())
    }

    fn blend(&self, s: &mut GlamScratch, k: usize, d: &Drive) -> Result<(), Error> {
        let [a, b, c] = &s.sampled[k];
        let layers = [
            (a.as_slice(), d.weights[0]),
            (b.as_slice(), d.weights[1]),
            (c.as_slice(), d.weights[2]),
        ];
        blend(&layers, &self.rest, DEFAULT_THRESHOLD, &mut s.local[k]);
        Ok(())
    }

    fn fk(&self, s: &mut GlamScratch, k: usize) -> Result<(), Error> {
        local_to_model(&self.parents, &s.local[k], &mut s.models[k]);
        Ok(())
    }

    fn models<'s>(&self, s: &'s GlamScratch, k: usize) -> &'s [[f32; 16]] {
        bytemuck::cast_slice(&s.models[k])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sinew_core::blend::{BlendJob, BlendLayer};
    use sinew_core::clip::TimeMode;
    use sinew_core::fk::FkJob;
    use sinew_std::synthetic;

    fn max_quat_diff(a: Quat, b: Quat) -> f32 {
        let b = if a.dot(b) < 0.0 { -b } else { b };
        (a - b)
            .to_array()
            .iter()
            .fold(0.0f32, |m, x| m.max(x.abs()))
    }

    fn max_vec_diff(a: Vec3, b: Vec3) -> f32 {
        (a - b).abs().max_element()
    }

    #[test]
    fn blend_agrees_with_sinew_reference() {
        let h = Humanoid::default_rate();
        let skel = h.skeleton.view();
        let n = skel.joint_count();
        // Poses within ±30° of rest: any two are at most 60° apart.
        let poses: Vec<_> = (0..3)
            .map(|i| synthetic::pose(&skel, 30f32.to_radians(), 100 + i))
            .collect();
        let rest = skel.rest_pose();
        for weights in [
            [0.5, 0.3, 0.2],
            [1.0, 1.0, 1.0],
            [0.02, 0.03, 0.0],
            [0.0, 0.7, 0.1],
        ] {
            let layers: Vec<_> = poses
                .iter()
                .zip(weights)
                .map(|(p, w)| BlendLayer::new(p, w))
                .collect();
            let mut out = vec![SoaTransform::IDENTITY; skel.soa_count()];
            sinew_core::blend::reference::blend(&BlendJob::new(&layers, &[], rest), &mut out)
                .unwrap();
            let expected = to_aos(&out, n);

            let aos: Vec<_> = poses.iter().map(|p| to_aos(p, n)).collect();
            let aos_layers: Vec<_> = aos.iter().zip(weights).map(|(p, w)| (&p[..], w)).collect();
            let aos_rest = to_aos(rest, n);
            let mut got = vec![Transform::IDENTITY; n];
            blend(
                &aos_layers,
                &aos_rest,
                sinew_core::blend::DEFAULT_THRESHOLD,
                &mut got,
            );
            let mut got_nlerp = vec![Transform::IDENTITY; n];
            blend_nlerp(
                &aos_layers,
                &aos_rest,
                sinew_core::blend::DEFAULT_THRESHOLD,
                &mut got_nlerp,
            );
            for j in 0..n {
                let (e, g, g2) = (&expected[j], &got[j], &got_nlerp[j]);
                assert!(
                    max_quat_diff(e.rotation, g.rotation) < 1e-2,
                    "joint {j} {weights:?}"
                );
                assert!(
                    max_vec_diff(e.translation, g.translation) < 1e-4,
                    "joint {j}"
                );
                assert!(max_vec_diff(e.scale, g.scale) < 1e-4, "joint {j}");
                assert!(max_quat_diff(e.rotation, g2.rotation) < 1e-5, "joint {j}");
                assert!(
                    max_vec_diff(e.translation, g2.translation) < 1e-5,
                    "joint {j}"
                );
                assert!((g.rotation.length() - 1.0).abs() < 1e-4);
            }
        }
    }

    #[test]
    fn fk_agrees_with_sinew_reference() {
        for skel in [
            Humanoid::default_rate().skeleton,
            synthetic::skeleton(368, 7),
        ] {
            let skel = skel.view();
            let n = skel.joint_count();
            let pose = synthetic::pose(&skel, 1.0, 3);
            let mut expected = vec![sinew_core::Mat4::IDENTITY; n];
            sinew_core::fk::reference::local_to_model(&FkJob::new(&skel, &pose), &mut expected)
                .unwrap();
            let mut got = vec![Mat4::IDENTITY; n];
            local_to_model(skel.parents(), &to_aos(&pose, n), &mut got);
            for j in 0..n {
                let e = Mat4::from_cols_array_2d(&expected[j].cols);
                assert!(e.abs_diff_eq(got[j], 1e-4), "joint {j}: {e} vs {}", got[j]);
            }
            // A subtree recomputed on its own gives the same matrices.
            let first = n / 2;
            let end = skel.subtree_end(first);
            let mut part = got.clone();
            part[first..end].fill(Mat4::ZERO);
            local_to_model_range(skel.parents(), &to_aos(&pose, n), first, end, &mut part);
            assert_eq!(part, got);
        }
    }

    #[test]
    fn sample_agrees_with_sinew() {
        let h = Humanoid::default_rate();
        let n = h.skeleton.joint_count();
        for clip in &h.clips {
            let raw = clip.view();
            let aos = AosClip::from_raw(&raw, n);
            assert!((aos.duration() - raw.duration()).abs() < 1e-6);
            let mut soa = vec![SoaTransform::IDENTITY; raw.soa_count()];
            let mut got = vec![Transform::IDENTITY; n];
            for t in [0.0, 0.013, 0.25, 0.5, 0.77, 1.3, -0.4] {
                raw.sample(t, TimeMode::Loop, &mut soa).unwrap();
                aos.sample(t, &mut got);
                for (j, e) in to_aos(&soa, n).iter().enumerate() {
                    assert!(max_quat_diff(e.rotation, got[j].rotation) < 1e-3, "{t} {j}");
                    assert!(max_vec_diff(e.translation, got[j].translation) < 1e-4);
                }
            }
        }
    }

    #[test]
    fn blend_of_nothing_is_rest() {
        let rest = vec![
            Transform {
                translation: Vec3::new(1.0, 2.0, 3.0),
                ..Transform::IDENTITY
            };
            5
        ];
        let zero = vec![Transform::IDENTITY; 5];
        let mut out = vec![Transform::IDENTITY; 5];
        blend(&[(&zero, 0.0)], &rest, 0.1, &mut out);
        assert_eq!(out, rest);
        blend(&[], &rest, 0.0, &mut out);
        assert_eq!(out, rest);
    }
}
