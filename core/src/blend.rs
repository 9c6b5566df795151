//! Blending N poses into one: weighted layers, per-joint weights (masks),
//! additive layers and a rest-pose fallback.
//!
//! For each joint, with layer weights `w_i` (layer weight × joint weight):
//! - translation and scale: `Σ w_i x_i / W`, where `W = Σ w_i`;
//! - rotation: nlerp — each quaternion is sign-aligned with the running sum
//!   (so the blend takes the short arc), summed with its weight, and the sum
//!   is normalised once at the end;
//! - if `W` is below the threshold, the rest pose is added with weight
//!   `threshold - W`, so a joint no layer drives falls back to its rest pose.
//!
//! Then each additive layer with weight `w` is applied on top:
//! `q = q · nlerp(identity, q_add, w)`, `t += w t_add`,
//! `s *= 1 + w (s_add - 1)`.
//!
//! [`blend`] is the SIMD product; [`reference::blend`] is the scalar spec it
//! is tested against (equal within 1e-5). On x86-64 CPUs with AVX2 and FMA
//! (asked of CPUID once, at the first call) [`blend`] runs an eight-wide
//! kernel that agrees with the portable four-wide one within 1e-5, not bit
//! for bit; the `portable` cargo feature turns it off, and
//! [`blend_portable`] always runs the four-wide kernel.

use wide::f32x4;

use crate::error::Error;
use crate::fp::Fp;
use crate::soa::detail::{
    dot4, normalize, quat_flip_signs, quat_mul, quat_mul_add, vec_mul_add, vec_scale,
};
use crate::soa::{check_len, SoaQuat, SoaTransform, SoaVec3, LANES};

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod avx2;

/// Default threshold: below this accumulated weight the rest pose fills in.
pub const DEFAULT_THRESHOLD: f32 = 0.1;

/// Validated per-joint weights (a mask): one `f32x4` per SoA block.
///
/// Every lane is finite and `>= 0`. Build it once (e.g. when a mask is
/// authored) and reuse it every frame.
#[derive(Clone, Copy, Debug)]
pub struct JointWeights<'a> {
    weights: &'a [f32x4],
    /// The largest weight (0 for none), so that a job can bound its sums
    /// without reading the mask every frame.
    max: f32,
}

impl<'a> JointWeights<'a> {
    /// Validates per-joint weights.
    ///
    /// # Errors
    /// [`Error::InvalidJointWeight`] for the first negative or non-finite lane.
    pub fn new(weights: &'a [f32x4]) -> Result<Self, Error> {
        let mut max = 0.0f32;
        for (b, w) in weights.iter().enumerate() {
            for (l, v) in w.as_array().iter().enumerate() {
                if !(v.is_finite() && *v >= 0.0) {
                    return Err(Error::InvalidJointWeight {
                        joint: b * LANES + l,
                    });
                }
                max = max.max_num(*v);
            }
        }
        Ok(JointWeights { weights, max })
    }

    /// The largest weight of the mask (0 for an empty one).
    #[inline]
    #[must_use]
    pub fn max(&self) -> f32 {
        self.max
    }

    /// The weights, one `f32x4` per SoA block.
    #[inline]
    #[must_use]
    pub fn as_slice(&self) -> &'a [f32x4] {
        self.weights
    }

    /// Weight of joint `j` (0 when out of range).
    #[inline]
    #[must_use]
    pub fn get(&self, j: usize) -> f32 {
        self.weights
            .get(j / LANES)
            .map_or(0.0, |w| w.as_array()[j % LANES])
    }
}

/// One input of a blend: a local-space pose and its weight.
#[derive(Clone, Copy, Debug)]
pub struct BlendLayer<'a> {
    /// The pose, one block per 4 joints; must have the output's length.
    pub pose: &'a [SoaTransform],
    /// Layer weight, finite and `>= 0`; layers of weight 0 are skipped.
    pub weight: f32,
    /// Optional per-joint weights multiplied with `weight`; must have the output's length.
    pub joint_weights: Option<JointWeights<'a>>,
}

impl<'a> BlendLayer<'a> {
    /// A layer with a weight and no mask.
    #[inline]
    #[must_use]
    pub fn new(pose: &'a [SoaTransform], weight: f32) -> Self {
        BlendLayer {
            pose,
            weight,
            joint_weights: None,
        }
    }

    /// A layer with a weight and per-joint weights.
    #[inline]
    #[must_use]
    pub fn masked(pose: &'a [SoaTransform], weight: f32, mask: JointWeights<'a>) -> Self {
        BlendLayer {
            pose,
            weight,
            joint_weights: Some(mask),
        }
    }
}

/// A blend job: everything but the output.
#[derive(Clone, Copy, Debug)]
pub struct BlendJob<'a> {
    /// Normal layers, blended by normalised weight.
    pub layers: &'a [BlendLayer<'a>],
    /// Additive layers, applied on top in order.
    pub additive: &'a [BlendLayer<'a>],
    /// The rest pose (usually `skeleton.rest_pose()`); fixes the pose length.
    pub rest: &'a [SoaTransform],
    /// Accumulated weight under which the rest pose fills in; finite, `> 0`.
    pub threshold: f32,
}

impl<'a> BlendJob<'a> {
    /// A job with the default threshold.
    #[inline]
    #[must_use]
    pub fn new(
        layers: &'a [BlendLayer<'a>],
        additive: &'a [BlendLayer<'a>],
        rest: &'a [SoaTransform],
    ) -> Self {
        BlendJob {
            layers,
            additive,
            rest,
            threshold: DEFAULT_THRESHOLD,
        }
    }

    /// Checks every size and weight against an output of `out_len` blocks.
    ///
    /// # Errors
    /// [`Error::InvalidThreshold`], [`Error::BadLength`] (output, layer pose or
    /// joint weights not the rest pose's length), [`Error::InvalidWeight`]
    /// for a negative or non-finite weight, or the first layer at which the
    /// weights (times their masks' largest weights) stop summing to a finite
    /// number (layers are numbered normal first, then additive).
    pub fn validate(&self, out_len: usize) -> Result<(), Error> {
        if self.is_valid(out_len) {
            Ok(())
        } else {
            self.first_error(out_len)
        }
    }

    /// Whether [`Self::validate`] accepts the job: the same conditions as
    /// [`Self::first_error`], gathered without a branch per condition: on
    /// a blend of a few dozen blocks, checks that stop at the first failure
    /// cost a tenth of the call.
    ///
    /// Weights are non-negative or NaN here, so each running bound only
    /// grows: it is finite at every layer exactly when it is finite at the
    /// last, and a non-finite weight makes it infinite or NaN.
    #[inline]
    fn is_valid(&self, out_len: usize) -> bool {
        let n = self.rest.len();
        let fits = |l: &BlendLayer<'_>| {
            l.pose.len() == n
                && l.weight >= 0.0
                && l.joint_weights.is_none_or(|m| m.weights.len() == n)
        };
        let scaled = |l: &BlendLayer<'_>| l.weight * l.joint_weights.map_or(1.0, |m| m.max);
        let mut ok = self.threshold > 0.0 && self.threshold <= f32::MAX && out_len == n;
        let mut bound = 0.0f32;
        for l in self.layers {
            ok &= fits(l);
            bound += scaled(l);
        }
        ok &= bound <= f32::MAX;
        for l in self.additive {
            ok &= fits(l) && scaled(l) <= f32::MAX;
        }
        ok
    }

    /// The error [`Self::validate`] reports: the first check that fails,
    /// in the documented order.
    #[cold]
    #[inline(never)]
    fn first_error(&self, out_len: usize) -> Result<(), Error> {
        if !(self.threshold.is_finite() && self.threshold > 0.0) {
            return Err(Error::InvalidThreshold);
        }
        let n = self.rest.len();
        check_len("output", n, out_len)?;
        // A joint's total weight is at most the sum of each normal layer's
        // weight times its mask's largest weight (1 without a mask); when that bound is finite
        // no sum of weights in the kernels overflows (two weights of 3e38
        // would, and turn the pose into NaN). Additive layers are applied
        // one at a time, so each is bounded alone.
        let mut bound = 0.0f32;
        for (i, layer) in self.layers.iter().chain(self.additive).enumerate() {
            if !(layer.weight.is_finite() && layer.weight >= 0.0) {
                return Err(Error::InvalidWeight { layer: i });
            }
            let scaled = layer.weight * layer.joint_weights.map_or(1.0, |m| m.max);
            bound = if i < self.layers.len() {
                bound + scaled
            } else {
                scaled
            };
            if !bound.is_finite() {
                return Err(Error::InvalidWeight { layer: i });
            }
            check_len("layer pose", n, layer.pose.len())?;
            if let Some(jw) = layer.joint_weights {
                check_len("joint weights", n, jw.weights.len())?;
            }
        }
        Ok(())
    }
}

/// All-ones lanes where `x < 0` (so `-0.0` counts as non-negative, as in the
/// scalar reference), for use with `flip_signs`.
#[inline(always)]
fn negative(x: f32x4) -> f32x4 {
    x.simd_lt(f32x4::ZERO)
}

#[inline(always)]
fn layer_weight(layer: &BlendLayer<'_>, b: usize) -> f32x4 {
    let w = f32x4::splat(layer.weight);
    match layer.joint_weights {
        Some(jw) => w * jw.weights[b],
        None => w,
    }
}

/// Blends `job` into `out` (SIMD: eight joints per step on x86-64 CPUs with
/// AVX2 and FMA, unless the `portable` feature is on; four otherwise).
///
/// Every block of `out` is written. NaN inputs propagate to the joints they
/// touch; nothing panics.
///
/// # Errors
/// As [`BlendJob::validate`]; on error `out` is untouched.
pub fn blend(job: &BlendJob<'_>, out: &mut [SoaTransform]) -> Result<(), Error> {
    job.validate(out.len())?;
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    if avx2::blend(job, out) {
        return Ok(());
    }
    blend_validated(job, out);
    Ok(())
}

/// [`blend`] on the portable four-wide kernel, whatever the CPU: the bits
/// of the `portable` build, and the kernel to compare the wide one with.
///
/// # Errors
/// As [`BlendJob::validate`]; on error `out` is untouched.
pub fn blend_portable(job: &BlendJob<'_>, out: &mut [SoaTransform]) -> Result<(), Error> {
    job.validate(out.len())?;
    blend_validated(job, out);
    Ok(())
}

/// The total weight of a job whose every joint has the same one, when it is
/// at least the threshold: no masks and no additive layers. Such a job
/// needs no rest-pose term and one division per call, not per joint.
#[inline]
fn uniform_total(job: &BlendJob<'_>) -> Option<f32> {
    if job.additive.is_empty() && job.layers.iter().all(|l| l.joint_weights.is_none()) {
        let total: f32 = job.layers.iter().map(|l| l.weight).sum();
        if total >= job.threshold {
            return Some(total);
        }
    }
    None
}

/// The weights times `inv` and the poses of `layers` when exactly `N` of
/// them have a positive weight, in layer order. The uniform kernels
/// unroll their layer loop over such a fixed count.
#[inline]
fn positive_layers<'a, const N: usize>(
    layers: &[BlendLayer<'a>],
    inv: f32,
) -> Option<([f32; N], [&'a [SoaTransform]; N])> {
    let mut w = [0.0; N];
    let mut p: [&[SoaTransform]; N] = [&[]; N];
    let mut n = 0;
    for layer in layers.iter().filter(|l| l.weight > 0.0) {
        *w.get_mut(n)? = layer.weight * inv;
        *p.get_mut(n)? = layer.pose;
        n += 1;
    }
    (n == N).then_some((w, p))
}

/// The portable kernel of a validated job.
fn blend_validated(job: &BlendJob<'_>, out: &mut [SoaTransform]) {
    match uniform_total(job) {
        Some(total) => blend_uniform(job.layers, total, out),
        None => blend_general(job, out),
    }
}

/// Layers without masks whose weights sum to `total >= threshold`, with
/// pre-normalised weights: no rest-pose term, no division per joint. Two to
/// four layers of positive weight (the common jobs) take
/// [`blend_uniform_fixed`]; any other count makes a pass over the output per
/// layer ([`blend_uniform_passes`]). Both run the same operations in the
/// same order, so the bits are the same.
fn blend_uniform(layers: &[BlendLayer<'_>], total: f32, out: &mut [SoaTransform]) {
    let inv = 1.0 / total;
    if let Some((w, p)) = positive_layers::<2>(layers, inv) {
        return blend_uniform_fixed(w, p, out);
    }
    if let Some((w, p)) = positive_layers::<3>(layers, inv) {
        return blend_uniform_fixed(w, p, out);
    }
    if let Some((w, p)) = positive_layers::<4>(layers, inv) {
        return blend_uniform_fixed(w, p, out);
    }
    blend_uniform_passes(layers, inv, out);
}

/// [`blend_uniform`] of `N` (2 to 4) layers with the pre-normalised weights
/// `w`: one pass over the blocks sums every layer's translations and
/// scales and the first two layers' rotations in registers and writes them
/// once; each further layer's rotation takes a pass of its own. Rotations
/// go in passes because a layer's sign alignment waits for the sum before
/// it: within a pass the blocks' chains are independent and the CPU
/// overlaps them, where the whole chain summed block by block in registers
/// runs slower than one pass per layer. Per element the operations are
/// [`blend_uniform_passes`]'s, in its order.
fn blend_uniform_fixed<const N: usize>(
    w: [f32; N],
    poses: [&[SoaTransform]; N],
    out: &mut [SoaTransform],
) {
    let w = w.map(f32x4::splat);
    for (b, o) in out.iter_mut().enumerate() {
        let mut src = [&SoaTransform::IDENTITY; N];
        for (s, p) in src.iter_mut().zip(&poses) {
            let Some(x) = p.get(b) else {
                return;
            };
            *s = x;
        }
        let mut t = vec_scale(&src[0].translation, w[0]);
        let mut s = vec_scale(&src[0].scale, w[0]);
        for i in 1..N {
            vec_mul_add(&mut t, &src[i].translation, w[i]);
            vec_mul_add(&mut s, &src[i].scale, w[i]);
        }
        o.translation = t;
        o.scale = s;
        let (Some(a), Some(b)) = (src.first(), src.get(1)) else {
            return;
        };
        let r = &a.rotation;
        let mut q = SoaQuat {
            x: r.x * w[0],
            y: r.y * w[0],
            z: r.z * w[0],
            w: r.w * w[0],
        };
        let wq = w[1].flip_signs(negative(dot4(&q, &b.rotation)));
        quat_mul_add(&mut q, &b.rotation, wq);
        o.rotation = if N == 2 { normalize(&q) } else { q };
    }
    for i in 2..N {
        let last = i + 1 == N;
        for (o, src) in out.iter_mut().zip(poses[i]) {
            let wq = w[i].flip_signs(negative(dot4(&o.rotation, &src.rotation)));
            quat_mul_add(&mut o.rotation, &src.rotation, wq);
            if last {
                o.rotation = normalize(&o.rotation);
            }
        }
    }
}

/// [`blend_uniform`] with the weights times `inv`, one pass over the output
/// per layer; the last pass also normalises the rotations.
fn blend_uniform_passes(layers: &[BlendLayer<'_>], inv: f32, out: &mut [SoaTransform]) {
    let mut active = layers.iter().filter(|l| l.weight > 0.0);
    let Some(first) = active.next() else {
        return; // unreachable: total >= threshold > 0 needs a positive weight
    };
    let mut remaining = layers.iter().filter(|l| l.weight > 0.0).count() - 1;
    let w = f32x4::splat(first.weight * inv);
    for (o, src) in out.iter_mut().zip(first.pose) {
        let q = SoaQuat {
            x: src.rotation.x * w,
            y: src.rotation.y * w,
            z: src.rotation.z * w,
            w: src.rotation.w * w,
        };
        *o = SoaTransform {
            translation: vec_scale(&src.translation, w),
            rotation: if remaining == 0 { normalize(&q) } else { q },
            scale: vec_scale(&src.scale, w),
        };
    }
    for layer in active {
        remaining -= 1;
        let w = f32x4::splat(layer.weight * inv);
        let last = remaining == 0;
        for (o, src) in out.iter_mut().zip(layer.pose) {
            vec_mul_add(&mut o.translation, &src.translation, w);
            vec_mul_add(&mut o.scale, &src.scale, w);
            let wq = w.flip_signs(negative(dot4(&o.rotation, &src.rotation)));
            quat_mul_add(&mut o.rotation, &src.rotation, wq);
            if last {
                o.rotation = normalize(&o.rotation);
            }
        }
    }
}

/// Blocks per chunk of the general path: 64 blocks of output (10 KiB) stay
/// in L1 while every layer passes over them, and their accumulated weights
/// (1 KiB) live on the stack.
const CHUNK: usize = 64;

/// Any job (masks, additive layers, weights below the threshold): chunk by
/// chunk, each layer makes one pass over the chunk's output, then one pass
/// adds the rest pose where the accumulated weight is below the threshold and
/// normalises, then each additive layer makes a pass. Short loops over few
/// live values keep everything in registers.
fn blend_general(job: &BlendJob<'_>, out: &mut [SoaTransform]) {
    let threshold = f32x4::splat(job.threshold);
    let mut weights = [f32x4::ZERO; CHUNK];
    for (c, out) in out.chunks_mut(CHUNK).enumerate() {
        let base = c * CHUNK;
        let acc = &mut weights[..out.len()];
        acc.fill(f32x4::ZERO);
        let zero_quat = SoaQuat {
            x: f32x4::ZERO,
            y: f32x4::ZERO,
            z: f32x4::ZERO,
            w: f32x4::ZERO,
        };
        out.fill(SoaTransform {
            translation: SoaVec3::ZERO,
            rotation: zero_quat,
            scale: SoaVec3::ZERO,
        });
        for layer in job.layers.iter().filter(|l| l.weight > 0.0) {
            let pose = &layer.pose[base..base + out.len()];
            for (i, (o, src)) in out.iter_mut().zip(pose).enumerate() {
                let w = layer_weight(layer, base + i);
                vec_mul_add(&mut o.translation, &src.translation, w);
                vec_mul_add(&mut o.scale, &src.scale, w);
                let wq = w.flip_signs(negative(dot4(&o.rotation, &src.rotation)));
                quat_mul_add(&mut o.rotation, &src.rotation, wq);
                acc[i] += w;
            }
        }
        // Rest pose fills in where the layers are too weak; then normalise.
        let rest = &job.rest[base..base + out.len()];
        for ((o, rest), acc) in out.iter_mut().zip(rest).zip(acc.iter()) {
            let rw = (threshold - *acc).max_gt(f32x4::ZERO);
            vec_mul_add(&mut o.translation, &rest.translation, rw);
            vec_mul_add(&mut o.scale, &rest.scale, rw);
            let rwq = rw.flip_signs(negative(dot4(&o.rotation, &rest.rotation)));
            quat_mul_add(&mut o.rotation, &rest.rotation, rwq);
            let inv = f32x4::ONE / (*acc + rw);
            o.translation = vec_scale(&o.translation, inv);
            o.scale = vec_scale(&o.scale, inv);
            o.rotation = normalize(&o.rotation);
        }
        for layer in job.additive.iter().filter(|l| l.weight > 0.0) {
            let pose = &layer.pose[base..base + out.len()];
            for (i, (o, add)) in out.iter_mut().zip(pose).enumerate() {
                apply_additive(o, add, layer_weight(layer, base + i));
            }
        }
    }
}

/// `o = o · nlerp(identity, add, w)` for rotations, `t += w t_add`,
/// `s *= 1 + w (s_add - 1)`.
#[inline(always)]
fn apply_additive(o: &mut SoaTransform, add: &SoaTransform, w: f32x4) {
    // nlerp(identity, q_add, w), q_add taken with w >= 0 (short arc).
    let qa = quat_flip_signs(&add.rotation, negative(add.rotation.w));
    let partial = SoaQuat {
        x: qa.x * w,
        y: qa.y * w,
        z: qa.z * w,
        w: (qa.w - f32x4::ONE).madd(w, f32x4::ONE),
    };
    // Both factors are unit, so the product is unit to rounding.
    o.rotation = quat_mul(&o.rotation, &normalize(&partial));
    vec_mul_add(&mut o.translation, &add.translation, w);
    let one = f32x4::ONE;
    o.scale.x *= (add.scale.x - one).madd(w, one);
    o.scale.y *= (add.scale.y - one).madd(w, one);
    o.scale.z *= (add.scale.z - one).madd(w, one);
}

/// Scalar reference implementations: the readable specification.
pub mod reference {
    use super::{BlendJob, Error};
    use crate::math::{Quat, Transform, Vec3};
    use crate::soa::{SoaTransform, LANES};

    /// Running weighted sums of one joint.
    struct Accumulator {
        weight: f32,
        translation: Vec3,
        rotation: Quat,
        scale: Vec3,
    }

    impl Default for Accumulator {
        fn default() -> Self {
            Accumulator {
                weight: 0.0,
                translation: Vec3::ZERO,
                rotation: Quat::new(0.0, 0.0, 0.0, 0.0),
                scale: Vec3::ZERO,
            }
        }
    }

    impl Accumulator {
        /// Adds `x` with weight `w`, its rotation sign-aligned with the sum so far.
        fn add(&mut self, x: &Transform, w: f32) {
            self.translation = self.translation + x.translation * w;
            self.scale = self.scale + x.scale * w;
            let sign = if self.rotation.dot(x.rotation) < 0.0 {
                -1.0
            } else {
                1.0
            };
            self.rotation = self.rotation + x.rotation.scale(w * sign);
            self.weight += w;
        }
    }

    /// Scalar twin of [`super::blend`]: same contract, one joint at a time.
    ///
    /// # Errors
    /// As [`BlendJob::validate`].
    pub fn blend(job: &BlendJob<'_>, out: &mut [SoaTransform]) -> Result<(), Error> {
        job.validate(out.len())?;
        for j in 0..out.len() * LANES {
            let (b, l) = (j / LANES, j % LANES);
            let mut acc = Accumulator::default();
            for layer in job.layers {
                if layer.weight <= 0.0 {
                    continue;
                }
                let w = layer.weight * layer.joint_weights.map_or(1.0, |jw| jw.get(j));
                acc.add(&layer.pose[b].get(l), w);
            }
            let rw = (job.threshold - acc.weight).max(0.0);
            acc.add(&job.rest[b].get(l), rw);
            let mut t = acc.translation * (1.0 / acc.weight);
            let mut s = acc.scale * (1.0 / acc.weight);
            let q = acc.rotation;
            let mut q = q.normalize();
            for layer in job.additive {
                if layer.weight <= 0.0 {
                    continue;
                }
                let w = layer.weight * layer.joint_weights.map_or(1.0, |jw| jw.get(j));
                let x = layer.pose[b].get(l);
                let qa = if x.rotation.w < 0.0 {
                    -x.rotation
                } else {
                    x.rotation
                };
                q = (q * Quat::IDENTITY.nlerp(qa, w)).normalize();
                t = t + x.translation * w;
                s = s.mul_elem(Vec3::ONE + (x.scale - Vec3::ONE) * w);
            }
            out[b].set(
                l,
                &Transform {
                    translation: t,
                    rotation: q,
                    scale: s,
                },
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    //! The portable uniform kernel unrolled over the layer count against the
    //! one that makes a pass per layer, bit for bit (blending picks only one
    //! of them).
    extern crate alloc;

    use alloc::vec::Vec;

    use proptest::prelude::*;

    use super::*;

    /// `n` blocks of finite values in `[-2, 2)`; rotations need not be unit
    /// (the kernels' operations do not care).
    fn blocks(n: usize) -> impl Strategy<Value = Vec<SoaTransform>> {
        prop::collection::vec(-2.0f32..2.0, 40 * n).prop_map(|v| {
            v.chunks_exact(40)
                .map(|c| {
                    let mut t = SoaTransform::IDENTITY;
                    bytemuck::cast_slice_mut(core::slice::from_mut(&mut t)).copy_from_slice(c);
                    t
                })
                .collect()
        })
    }

    /// Two to four poses of one to 20 blocks, and four positive weights
    /// (the first `poses.len()` of which weight the layers).
    pub(super) fn uniform_case() -> impl Strategy<Value = (Vec<Vec<SoaTransform>>, Vec<f32>)> {
        (1usize..=20).prop_flat_map(|n| {
            (
                prop::collection::vec(blocks(n), 2..=4),
                prop::collection::vec(0.05f32..1.0, 4),
            )
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn unrolled_uniform_kernel_has_the_pass_kernels_bits((poses, weights) in uniform_case()) {
            let n = poses[0].len();
            let layers: Vec<BlendLayer<'_>> =
                poses.iter().zip(&weights).map(|(p, &w)| BlendLayer::new(p, w)).collect();
            let total = weights[..layers.len()].iter().sum::<f32>();
            let mut fixed = alloc::vec![SoaTransform::IDENTITY; n];
            let mut passes = fixed.clone();
            blend_uniform(&layers, total, &mut fixed);
            blend_uniform_passes(&layers, 1.0 / total, &mut passes);
            let bits = |v: &[SoaTransform]| -> Vec<u32> {
                bytemuck::cast_slice::<SoaTransform, f32>(v).iter().map(|x| x.to_bits()).collect()
            };
            prop_assert_eq!(bits(&fixed), bits(&passes));
        }

        #[test]
        fn the_quick_check_accepts_exactly_the_valid_jobs(
            lens in prop::collection::vec(0usize..3, 6),
            weights in prop::collection::vec(odd_weight(), 6),
            masks in prop::collection::vec(prop::option::of((odd_weight(), 0usize..3)), 6),
            normal in 0usize..=3,
            additive in 0usize..=3,
            threshold in odd_weight(),
            out_len in 1usize..3,
        ) {
            let rest = alloc::vec![SoaTransform::IDENTITY; 2];
            let poses: Vec<Vec<SoaTransform>> =
                lens.iter().map(|&n| alloc::vec![SoaTransform::IDENTITY; n]).collect();
            let mask_lanes: Vec<Vec<f32x4>> = masks
                .iter()
                .map(|m| m.map_or(Vec::new(), |(w, n)| alloc::vec![f32x4::splat(w.abs()); n]))
                .collect();
            let layers: Vec<BlendLayer<'_>> = (0..normal + additive)
                .map(|i| match (masks[i], JointWeights::new(&mask_lanes[i])) {
                    (Some(_), Ok(m)) => BlendLayer::masked(&poses[i], weights[i], m),
                    _ => BlendLayer::new(&poses[i], weights[i]),
                })
                .collect();
            let job = BlendJob {
                layers: &layers[..normal],
                additive: &layers[normal..],
                rest: &rest,
                threshold,
            };
            prop_assert_eq!(job.is_valid(out_len), job.first_error(out_len).is_ok());
        }
    }

    /// Weights of every kind a check must tell apart: ordinary, zero,
    /// negative, huge (two of which overflow a sum), infinite and NaN.
    fn odd_weight() -> impl Strategy<Value = f32> {
        prop_oneof![
            0.0f32..2.0,
            Just(0.0),
            Just(-0.0),
            -2.0f32..0.0,
            Just(f32::MAX),
            Just(3e38),
            Just(f32::INFINITY),
            Just(f32::NAN),
        ]
    }
}
