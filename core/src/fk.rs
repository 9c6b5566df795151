//! Local-to-model (forward kinematics): `model[j] = model[parent(j)] * local[j]`.
//!
//! Roots are multiplied by an optional root matrix (identity by default). The
//! range variant recomputes joints `first .. end` only and reads the model
//! matrices of their parents that lie before `first` from the output, which is
//! what a partial update after IK needs (use `skeleton.subtree_end(j)` for a
//! subtree). [`local_to_model`] is the SIMD product; [`reference`](mod@reference) has the
//! scalar spec. On x86-64 CPUs with AVX2 and FMA (asked of CPUID once, at
//! the first call) [`local_to_model`] converts eight local transforms at a
//! time and multiplies with fused multiply-adds; it agrees with the portable
//! kernel within 1e-5, not bit for bit. The `portable` cargo feature turns
//! it off, and [`local_to_model_portable`] always runs the portable kernel.

use crate::error::Error;
use crate::math::Mat4;
use crate::skeleton::Skeleton;
use crate::soa::{check_len, SoaTransform, LANES};

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
pub(crate) mod avx2;

/// A forward-kinematics job over a skeleton.
#[derive(Clone, Copy, Debug)]
pub struct FkJob<'a> {
    /// The skeleton (parents).
    pub skeleton: &'a Skeleton<'a>,
    /// Local pose, `skeleton.soa_count()` blocks.
    pub local: &'a [SoaTransform],
    /// Matrix that roots are multiplied by (e.g. the character's world
    /// transform); identity when `None`.
    pub root: Option<&'a Mat4>,
    /// First joint to compute.
    pub first: usize,
    /// One past the last joint to compute.
    pub end: usize,
}

impl<'a> FkJob<'a> {
    /// A job over the whole skeleton with no root matrix.
    #[inline]
    #[must_use]
    pub fn new(skeleton: &'a Skeleton<'a>, local: &'a [SoaTransform]) -> Self {
        FkJob {
            skeleton,
            local,
            root: None,
            first: 0,
            end: skeleton.joint_count(),
        }
    }

    /// The same job restricted to joints `first .. end`.
    #[inline]
    #[must_use]
    pub fn range(self, first: usize, end: usize) -> Self {
        FkJob { first, end, ..self }
    }

    /// The same job with a root matrix.
    #[inline]
    #[must_use]
    pub fn with_root(self, root: &'a Mat4) -> Self {
        FkJob {
            root: Some(root),
            ..self
        }
    }

    /// Checks sizes and the range against an output of `out_len` matrices.
    ///
    /// # Errors
    /// [`Error::BadLength`] (local pose not `soa_count()` blocks, output not
    /// `joint_count()` matrices), [`Error::JointOutOfRange`] (`first > end` or
    /// `end > joint_count()`).
    pub fn validate(&self, out_len: usize) -> Result<(), Error> {
        let n = self.skeleton.joint_count();
        check_len("local pose", self.skeleton.soa_count(), self.local.len())?;
        check_len("model matrices", n, out_len)?;
        if self.end > n {
            return Err(Error::JointOutOfRange {
                joint: self.end,
                count: n,
            });
        }
        if self.first > self.end {
            return Err(Error::JointOutOfRange {
                joint: self.first,
                count: n,
            });
        }
        Ok(())
    }
}

/// Computes model-space matrices for `job`'s joint range into `models`
/// (eight local transforms per step on x86-64 CPUs with AVX2 and FMA,
/// unless the `portable` feature is on; four otherwise).
///
/// Entries outside `first .. end` are not written (they are read as parents).
///
/// # Errors
/// As [`FkJob::validate`]; on error `models` is untouched.
pub fn local_to_model(job: &FkJob<'_>, models: &mut [Mat4]) -> Result<(), Error> {
    job.validate(models.len())?;
    if job.first == job.end {
        return Ok(());
    }
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    if avx2::local_to_model(job, models) {
        return Ok(());
    }
    portable(job, models);
    Ok(())
}

/// [`local_to_model`] on the portable four-wide kernel, whatever the CPU:
/// the bits of the `portable` build, and the kernel to compare the wide one
/// with.
///
/// # Errors
/// As [`FkJob::validate`]; on error `models` is untouched.
pub fn local_to_model_portable(job: &FkJob<'_>, models: &mut [Mat4]) -> Result<(), Error> {
    job.validate(models.len())?;
    portable(job, models);
    Ok(())
}

/// The portable kernel of a validated job.
fn portable(job: &FkJob<'_>, models: &mut [Mat4]) {
    let root = job.root.copied().unwrap_or(Mat4::IDENTITY);
    let root_cols = root.to_lanes();
    let parents = job.skeleton.parents();
    let (first, end) = (job.first, job.end);
    if first == end {
        return;
    }
    for b in first / LANES..end.div_ceil(LANES) {
        let local = detail::affine_columns(&job.local[b]);
        for l in 0..LANES {
            let j = b * LANES + l;
            if j < first || j >= end {
                continue;
            }
            let (done, todo) = models.split_at_mut(j);
            // Parents precede children; NO_PARENT (and only it) is out of range here.
            let parent = match done.get(parents[j] as usize) {
                Some(p) => p.to_lanes(),
                None => root_cols,
            };
            todo[0] = Mat4::from_lanes(detail::mul_affine(&parent, &local, l));
        }
    }
}

pub(crate) mod detail {
    use wide::f32x4;

    use crate::fp::Fp;
    use crate::soa::SoaTransform;

    /// The 3x4 part of four local affine matrices `T R S`, element-major:
    /// `m[c][r]` holds row `r` of column `c` for the four lanes.
    pub type SoaAffine = [[[f32; 4]; 3]; 4];

    /// Builds the affine columns of the four lanes of `t` (lane-wise SIMD).
    #[inline(always)]
    pub fn affine_columns(t: &SoaTransform) -> SoaAffine {
        let q = &t.rotation;
        let two = f32x4::splat(2.0);
        let one = f32x4::ONE;
        let (x2, y2, z2) = (q.x * two, q.y * two, q.z * two);
        let (xx, yy, zz) = (q.x * x2, q.y * y2, q.z * z2);
        let (xy, xz, yz) = (q.x * y2, q.x * z2, q.y * z2);
        let (wx, wy, wz) = (q.w * x2, q.w * y2, q.w * z2);
        let s = &t.scale;
        let c0 = [(one - (yy + zz)) * s.x, (xy + wz) * s.x, (xz - wy) * s.x];
        let c1 = [(xy - wz) * s.y, (one - (xx + zz)) * s.y, (yz + wx) * s.y];
        let c2 = [(xz + wy) * s.z, (yz - wx) * s.z, (one - (xx + yy)) * s.z];
        let c3 = [t.translation.x, t.translation.y, t.translation.z];
        let arr = |c: [f32x4; 3]| [c[0].to_array(), c[1].to_array(), c[2].to_array()];
        [arr(c0), arr(c1), arr(c2), arr(c3)]
    }

    /// `parent * local[lane]`, where `local` is affine.
    ///
    /// The parent's columns come from the previous joint's store, so the
    /// latency of this function is the critical path of FK down a chain; the
    /// sums are grouped as two independent halves to keep it short.
    #[inline(always)]
    pub fn mul_affine(p: &[f32x4; 4], local: &SoaAffine, lane: usize) -> [f32x4; 4] {
        let e = |c: usize, r: usize| f32x4::splat(local[c][r][lane]);
        let col = |c: usize| p[0].madd(e(c, 0), p[1] * e(c, 1)) + p[2] * e(c, 2);
        let translation = p[0].madd(e(3, 0), p[3]) + p[1].madd(e(3, 1), p[2] * e(3, 2));
        [col(0), col(1), col(2), translation]
    }
}

/// Scalar reference implementations: the readable specification.
pub mod reference {
    use super::{Error, FkJob};
    use crate::math::Mat4;

    /// Scalar twin of [`super::local_to_model`]: same contract, plain matrices.
    ///
    /// # Errors
    /// As [`FkJob::validate`].
    pub fn local_to_model(job: &FkJob<'_>, models: &mut [Mat4]) -> Result<(), Error> {
        job.validate(models.len())?;
        let root = job.root.copied().unwrap_or(Mat4::IDENTITY);
        for j in job.first..job.end {
            let local =
                crate::soa::get_joint(job.local, j).map_or(Mat4::IDENTITY, |t| t.to_matrix());
            models[j] = match job.skeleton.parent(j) {
                Some(p) => models[p] * local,
                None => root * local,
            };
        }
        Ok(())
    }
}
