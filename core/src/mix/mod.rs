//! Animation features above the per-frame pipeline: the motion-unit
//! [`mixer`], [`blend_space`]s with phase synchronisation, [`additive`] clips
//! and per-joint [`mask`]s, [`root_motion`], and [`transition`]s (cross-fade
//! and inertialization).
//!
//! Everything here is fixed-capacity (`heapless` or caller-owned slices) and
//! allocation-free; state that lives across frames (a mixer's queue, a phase,
//! an inertialization offset) is a value the caller owns per character.
//! Per-joint kernels run four joints per step in SoA lanes and have a scalar
//! twin in the module's `reference` submodule, equal within 1e-5.

pub mod additive;
pub mod blend_space;
pub mod mask;
pub mod mixer;
pub mod root_motion;
pub mod transition;

pub use additive::{apply_additive, make_additive, make_additive_clip};
pub use blend_space::{sample_blend, BlendSpace1D, BlendSpace2D, PhaseSync, Sample1D, Weights};
pub use mask::{build_mask, MaskOp};
pub use mixer::{
    bspline_smooth, mix, BSplineSmoother, MixInput, MixJob, MixMode, Mixer, MotionUnit, Ramp,
    Rejected, UnitId, UnitState,
};
pub use root_motion::{RootAccumulator, RootMotion};
pub use transition::{crossfade, Decay, InertialBlock, Inertializer, SwitchJob};

use crate::math::{Quat, Vec3};

/// Rotation angles `(θz, θx, θy)` in radians of `q = Rz(θz) · Rx(θx) · Ry(θy)`
/// (the ZXY channel order of CMU BVH files).
///
/// Exact inverse of [`quat_from_euler_zxy`] for `|θx| < π/2`; `q` and `-q`
/// give the same angles.
#[inline]
#[must_use]
pub fn euler_zxy_from_quat(q: Quat) -> Vec3 {
    let (x, y, z, w) = (q.x, q.y, q.z, q.w);
    let m21 = 2.0 * (y * z + w * x);
    let ex = libm::asinf(m21.clamp(-1.0, 1.0));
    let ez = libm::atan2f(-2.0 * (x * y - w * z), 1.0 - 2.0 * (x * x + z * z));
    let ey = libm::atan2f(-2.0 * (x * z - w * y), 1.0 - 2.0 * (x * x + y * y));
    Vec3::new(ez, ex, ey)
}

/// The quaternion `Rz(a.x) · Rx(a.y) · Ry(a.z)` of ZXY angles `a = (θz, θx, θy)`.
#[inline]
#[must_use]
pub fn quat_from_euler_zxy(a: Vec3) -> Quat {
    let (sz, cz) = (libm::sinf(a.x * 0.5), libm::cosf(a.x * 0.5));
    let (sx, cx) = (libm::sinf(a.y * 0.5), libm::cosf(a.y * 0.5));
    let (sy, cy) = (libm::sinf(a.z * 0.5), libm::cosf(a.z * 0.5));
    Quat::new(
        cz * sx * cy - sz * cx * sy,
        cz * cx * sy + sz * sx * cy,
        cz * sx * sy + sz * cx * cy,
        cz * cx * cy - sz * sx * sy,
    )
}

/// SIMD twins of the helpers above.
pub(crate) mod detail {
    use crate::fp::{Fp, Trig};
    use crate::soa::{SoaQuat, SoaVec3};
    use wide::f32x4;

    /// Lane-wise [`super::euler_zxy_from_quat`].
    #[inline(always)]
    pub fn euler_zxy(q: &SoaQuat) -> SoaVec3 {
        let two = f32x4::splat(2.0);
        let one = f32x4::ONE;
        let (x, y, z, w) = (q.x, q.y, q.z, q.w);
        let m21 = one.min_lt((-one).max_gt(two * (y * z + w * x)));
        let ex = m21.arcsin();
        let ez = (-(two * (x * y - w * z))).arctan2(one - two * (x * x + z * z));
        let ey = (-(two * (x * z - w * y))).arctan2(one - two * (x * x + y * y));
        SoaVec3 {
            x: ez,
            y: ex,
            z: ey,
        }
    }

    /// Lane-wise [`super::quat_from_euler_zxy`].
    #[inline(always)]
    pub fn quat_zxy(a: &SoaVec3) -> SoaQuat {
        let half = f32x4::splat(0.5);
        let (sz, cz) = (a.x * half).sincos();
        let (sx, cx) = (a.y * half).sincos();
        let (sy, cy) = (a.z * half).sincos();
        SoaQuat {
            x: cz * sx * cy - sz * cx * sy,
            y: cz * cx * sy + sz * sx * cy,
            z: cz * sx * sy + sz * cx * cy,
            w: cz * cx * cy - sz * sx * sy,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn euler_zxy_round_trip() {
        for &(z, x, y) in &[(0.3f32, -0.4f32, 1.2f32), (-2.0, 1.2, 0.1), (0.0, 0.0, 0.0)] {
            let q = quat_from_euler_zxy(Vec3::new(z, x, y));
            let a = euler_zxy_from_quat(q);
            assert!((a.x - z).abs() < 1e-5 && (a.y - x).abs() < 1e-5 && (a.z - y).abs() < 1e-5);
            let b = euler_zxy_from_quat(-q);
            assert!((a.x - b.x).abs() < 1e-6);
            // Same as composing the three axis rotations.
            let r = Quat::from_rotation_z(z) * Quat::from_rotation_x(x) * Quat::from_rotation_y(y);
            assert!((r.dot(q).abs() - 1.0).abs() < 1e-6);
        }
    }
}
