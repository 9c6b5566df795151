//! Structure-of-arrays lane types: four joints per block.
//!
//! A pose of `n` joints is `soa_count(n)` [`SoaTransform`] blocks; joint `j`
//! lives in block `j / 4`, lane `j % 4`. Lanes past the last joint are padding
//! and hold the identity transform wherever sinew writes them.

use wide::f32x4;

use crate::error::Error;
use crate::math::{Quat, Transform, Vec3};

/// Joints per SoA block.
pub const LANES: usize = 4;

/// Number of SoA blocks needed for `joints` joints: `ceil(joints / 4)`.
#[inline]
#[must_use]
pub const fn soa_count(joints: usize) -> usize {
    joints.div_ceil(LANES)
}

/// Four 3-vectors, one per lane.
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct SoaVec3 {
    /// X of each lane.
    pub x: f32x4,
    /// Y of each lane.
    pub y: f32x4,
    /// Z of each lane.
    pub z: f32x4,
}

/// Four quaternions `(x, y, z, w)`, one per lane.
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct SoaQuat {
    /// X of each lane.
    pub x: f32x4,
    /// Y of each lane.
    pub y: f32x4,
    /// Z of each lane.
    pub z: f32x4,
    /// W of each lane.
    pub w: f32x4,
}

/// Four joint transforms: translation, rotation, scale (160 bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct SoaTransform {
    /// Translations.
    pub translation: SoaVec3,
    /// Rotations.
    pub rotation: SoaQuat,
    /// Scales.
    pub scale: SoaVec3,
}

#[inline]
fn lane(v: f32x4, i: usize) -> f32 {
    v.as_array()[i & 3]
}

#[inline]
fn set_lane(v: &mut f32x4, i: usize, x: f32) {
    let mut a = v.to_array();
    a[i & 3] = x;
    *v = f32x4::new(a);
}

impl SoaVec3 {
    /// All lanes (0, 0, 0).
    pub const ZERO: SoaVec3 = SoaVec3::splat(Vec3::ZERO);
    /// All lanes (1, 1, 1).
    pub const ONE: SoaVec3 = SoaVec3::splat(Vec3::ONE);

    /// Every lane set to `v`.
    #[inline]
    #[must_use]
    pub const fn splat(v: Vec3) -> Self {
        SoaVec3 {
            x: f32x4::splat(v.x),
            y: f32x4::splat(v.y),
            z: f32x4::splat(v.z),
        }
    }

    /// Lane `i` (taken modulo 4).
    #[inline]
    #[must_use]
    pub fn get(&self, i: usize) -> Vec3 {
        Vec3::new(lane(self.x, i), lane(self.y, i), lane(self.z, i))
    }

    /// Sets lane `i` (taken modulo 4).
    #[inline]
    pub fn set(&mut self, i: usize, v: Vec3) {
        set_lane(&mut self.x, i, v.x);
        set_lane(&mut self.y, i, v.y);
        set_lane(&mut self.z, i, v.z);
    }
}

impl SoaQuat {
    /// All lanes identity.
    pub const IDENTITY: SoaQuat = SoaQuat::splat(Quat::IDENTITY);

    /// Every lane set to `q`.
    #[inline]
    #[must_use]
    pub const fn splat(q: Quat) -> Self {
        SoaQuat {
            x: f32x4::splat(q.x),
            y: f32x4::splat(q.y),
            z: f32x4::splat(q.z),
            w: f32x4::splat(q.w),
        }
    }

    /// Lane `i` (taken modulo 4).
    #[inline]
    #[must_use]
    pub fn get(&self, i: usize) -> Quat {
        Quat::new(
            lane(self.x, i),
            lane(self.y, i),
            lane(self.z, i),
            lane(self.w, i),
        )
    }

    /// Sets lane `i` (taken modulo 4).
    #[inline]
    pub fn set(&mut self, i: usize, q: Quat) {
        set_lane(&mut self.x, i, q.x);
        set_lane(&mut self.y, i, q.y);
        set_lane(&mut self.z, i, q.z);
        set_lane(&mut self.w, i, q.w);
    }
}

impl SoaTransform {
    /// All four lanes identity.
    pub const IDENTITY: SoaTransform = SoaTransform {
        translation: SoaVec3::ZERO,
        rotation: SoaQuat::IDENTITY,
        scale: SoaVec3::ONE,
    };

    /// Lane `i` (taken modulo 4) as a scalar transform.
    #[inline]
    #[must_use]
    pub fn get(&self, i: usize) -> Transform {
        Transform::new(
            self.translation.get(i),
            self.rotation.get(i),
            self.scale.get(i),
        )
    }

    /// Sets lane `i` (taken modulo 4).
    #[inline]
    pub fn set(&mut self, i: usize, t: &Transform) {
        self.translation.set(i, t.translation);
        self.rotation.set(i, t.rotation);
        self.scale.set(i, t.scale);
    }

    /// True when every lane of every component is finite.
    #[must_use]
    pub fn is_finite(&self) -> bool {
        all_finite(bytemuck::cast_slice(core::slice::from_ref(self)))
    }
}

/// True when no value is NaN or infinite.
///
/// Branch-free over the exponent bits (all ones means NaN or infinity), so
/// the compiler vectorises it: validation of whole assets at load time is a
/// streaming pass, not one branch per float.
#[must_use]
pub fn all_finite(values: &[f32]) -> bool {
    const EXP: u32 = 0x7f80_0000;
    !values
        .iter()
        .fold(false, |bad, v| bad | (v.to_bits() & EXP == EXP))
}

/// Joint `j` of an SoA pose, or `None` when `j` is past its blocks.
#[inline]
#[must_use]
pub fn get_joint(pose: &[SoaTransform], j: usize) -> Option<Transform> {
    pose.get(j / LANES).map(|b| b.get(j % LANES))
}

/// Sets joint `j` of an SoA pose.
///
/// # Errors
/// [`Error::JointOutOfRange`] when `j` is past the pose's blocks.
#[inline]
pub fn set_joint(pose: &mut [SoaTransform], j: usize, t: &Transform) -> Result<(), Error> {
    let count = pose.len() * LANES;
    match pose.get_mut(j / LANES) {
        Some(b) => {
            b.set(j % LANES, t);
            Ok(())
        }
        None => Err(Error::JointOutOfRange { joint: j, count }),
    }
}

/// Packs scalar transforms into SoA blocks; padding lanes become identity.
///
/// # Errors
/// [`Error::BadLength`] unless `out.len() == soa_count(transforms.len())`.
pub fn pack(transforms: &[Transform], out: &mut [SoaTransform]) -> Result<(), Error> {
    check_len("output", soa_count(transforms.len()), out.len())?;
    for (b, block) in out.iter_mut().enumerate() {
        *block = SoaTransform::IDENTITY;
        for (l, t) in transforms.iter().skip(b * LANES).take(LANES).enumerate() {
            block.set(l, t);
        }
    }
    Ok(())
}

/// Unpacks the first `out.len()` joints of an SoA pose into scalar transforms.
///
/// # Errors
/// [`Error::BadLength`] unless `pose.len() == soa_count(out.len())`.
pub fn unpack(pose: &[SoaTransform], out: &mut [Transform]) -> Result<(), Error> {
    check_len("pose", soa_count(out.len()), pose.len())?;
    for (j, t) in out.iter_mut().enumerate() {
        *t = pose[j / LANES].get(j % LANES);
    }
    Ok(())
}

/// `Ok` when `actual == expected`, else [`Error::BadLength`] naming
/// `buffer`: the length check every kernel makes of its slices, for
/// callers that check theirs the same way.
///
/// # Errors
/// [`Error::BadLength`] when the lengths differ.
#[inline]
pub fn check_len(buffer: &'static str, expected: usize, actual: usize) -> Result<(), Error> {
    if expected == actual {
        Ok(())
    } else {
        Err(Error::BadLength {
            buffer,
            expected,
            actual,
        })
    }
}

/// SIMD helpers shared by the kernels.
pub(crate) mod detail {
    use super::{SoaQuat, SoaVec3};
    use crate::fp::Fp;
    use wide::f32x4;

    /// Lane-wise 4D dot product.
    #[inline(always)]
    pub fn dot4(a: &SoaQuat, b: &SoaQuat) -> f32x4 {
        a.x.madd(b.x, a.y.madd(b.y, a.z.madd(b.z, a.w * b.w)))
    }

    /// `acc + q * w`, lane-wise.
    #[inline(always)]
    pub fn quat_mul_add(acc: &mut SoaQuat, q: &SoaQuat, w: f32x4) {
        acc.x = q.x.madd(w, acc.x);
        acc.y = q.y.madd(w, acc.y);
        acc.z = q.z.madd(w, acc.z);
        acc.w = q.w.madd(w, acc.w);
    }

    /// `acc + v * w`, lane-wise.
    #[inline(always)]
    pub fn vec_mul_add(acc: &mut SoaVec3, v: &SoaVec3, w: f32x4) {
        acc.x = v.x.madd(w, acc.x);
        acc.y = v.y.madd(w, acc.y);
        acc.z = v.z.madd(w, acc.z);
    }

    /// `v * s`, lane-wise.
    #[inline(always)]
    pub fn vec_scale(v: &SoaVec3, s: f32x4) -> SoaVec3 {
        SoaVec3 {
            x: v.x * s,
            y: v.y * s,
            z: v.z * s,
        }
    }

    /// Normalises each lane's quaternion (exact square root, no estimate).
    #[inline(always)]
    pub fn normalize(q: &SoaQuat) -> SoaQuat {
        let inv = f32x4::ONE / crate::math::sqrt4(dot4(q, q));
        SoaQuat {
            x: q.x * inv,
            y: q.y * inv,
            z: q.z * inv,
            w: q.w * inv,
        }
    }

    /// Hamilton product `a * b`, lane-wise.
    #[inline(always)]
    pub fn quat_mul(a: &SoaQuat, b: &SoaQuat) -> SoaQuat {
        SoaQuat {
            x: a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
            y: a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
            z: a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
            w: a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
        }
    }

    /// Each lane of `q` negated where the sign bit of `s` is set.
    #[inline(always)]
    pub fn quat_flip_signs(q: &SoaQuat, s: f32x4) -> SoaQuat {
        SoaQuat {
            x: q.x.flip_signs(s),
            y: q.y.flip_signs(s),
            z: q.z.flip_signs(s),
            w: q.w.flip_signs(s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::all_finite;

    #[test]
    fn all_finite_edges() {
        assert!(all_finite(&[]));
        assert!(all_finite(&[
            0.0,
            -0.0,
            f32::MAX,
            f32::MIN,
            f32::MIN_POSITIVE,
            1e-45,
            -1e-45
        ]));
        for bad in [f32::NAN, -f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            let mut v = [1.0f32; 37];
            v[36] = bad;
            assert!(!all_finite(&v), "{bad}");
            v[36] = 1.0;
            v[0] = bad;
            assert!(!all_finite(&v), "{bad}");
        }
    }
}
