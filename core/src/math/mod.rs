//! Scalar math: [`Vec3`], [`Quat`], [`Transform`] and column-major [`Mat4`].
//!
//! These types are the readable reference for the SIMD kernels and the
//! interchange types of the public API. Quaternions are stored `(x, y, z, w)`
//! (glTF order) and rotate vectors as `q v q*`. Matrices are column-major and
//! multiply column vectors: `world = parent * local`.

mod mat4;
mod quat;
mod vec3;

pub use mat4::Mat4;
pub use quat::Quat;
pub use vec3::Vec3;

use wide::f32x4;

/// The square root, correctly rounded, with the hardware instruction where
/// there is one: `sqrtss` on x86 with SSE (through the intrinsic, so that
/// builds with AVX get its VEX form), `vsqrt.f32` on 32-bit ARM with an FPU
/// (Cortex-M4F, M7, R5, A-class hard-float), where `libm`'s portable square
/// root is an integer loop of a few hundred cycles, and `libm` elsewhere
/// (NEON's `fsqrt` on AArch64).
#[inline(always)]
#[must_use]
pub(crate) fn sqrt_f32(x: f32) -> f32 {
    #[cfg(all(target_arch = "arm", target_abi = "eabihf"))]
    {
        arm_vfp::sqrt(x)
    }
    #[cfg(all(
        any(target_arch = "x86", target_arch = "x86_64"),
        target_feature = "sse"
    ))]
    {
        x86_sse::sqrt(x)
    }
    #[cfg(not(any(
        all(target_arch = "arm", target_abi = "eabihf"),
        all(
            any(target_arch = "x86", target_arch = "x86_64"),
            target_feature = "sse"
        )
    )))]
    {
        libm::sqrtf(x)
    }
}

/// `sqrtss` through the compiler rather than `libm`'s inline assembly,
/// which is always the legacy SSE encoding: in a build with AVX enabled
/// (`-C target-cpu=native` on any recent x86 CPU) that legacy instruction
/// merges into a register whose upper half the surrounding VEX code has
/// written, a false dependency (or an SSE/AVX state transition) on every
/// call in float-heavy loops. The compiler emits `vsqrtss` there and
/// `sqrtss` elsewhere.
#[cfg(all(
    any(target_arch = "x86", target_arch = "x86_64"),
    target_feature = "sse"
))]
#[allow(unsafe_code)]
mod x86_sse {
    #[cfg(target_arch = "x86")]
    use core::arch::x86::{_mm_cvtss_f32, _mm_set_ss, _mm_sqrt_ss};
    #[cfg(target_arch = "x86_64")]
    use core::arch::x86_64::{_mm_cvtss_f32, _mm_set_ss, _mm_sqrt_ss};

    #[inline(always)]
    pub(super) fn sqrt(x: f32) -> f32 {
        // SAFETY: SSE is enabled for the whole build (the `cfg` above);
        // the intrinsics only touch registers.
        #[allow(unused_unsafe)]
        unsafe {
            _mm_cvtss_f32(_mm_sqrt_ss(_mm_set_ss(x)))
        }
    }
}

/// `vsqrt.f32` on 32-bit ARM with a hardware FPU (the hard-float ABI
/// implies VFP). The FPU's registers are passed through core registers:
/// `asm!` offers the `sreg` class only with the double-precision `vfp2`
/// feature, which single-precision FPUs such as the Cortex-M4F's lack.
#[cfg(all(target_arch = "arm", target_abi = "eabihf"))]
#[allow(unsafe_code)]
mod arm_vfp {
    #[inline(always)]
    pub(super) fn sqrt(x: f32) -> f32 {
        let r: u32;
        // SAFETY: the block saves `s0`, computes in it and restores it, so
        // no register the compiler allocated changes; it touches no memory
        // and no stack, and leaves the APSR flags alone (`vsqrt` may set
        // FPSCR's cumulative exception bits, like any float operation).
        unsafe {
            core::arch::asm!(
                "vmov {saved}, s0",
                "vmov s0, {x}",
                "vsqrt.f32 s0, s0",
                "vmov {r}, s0",
                "vmov s0, {saved}",
                x = in(reg) x.to_bits(),
                r = lateout(reg) r,
                saved = out(reg) _,
                options(pure, nomem, nostack, preserves_flags)
            );
        }
        f32::from_bits(r)
    }
}

/// [`f32x4::sqrt`] per lane, correctly rounded on every target. `wide`
/// uses the SIMD instruction on SSE, NEON and `simd128`, but on other
/// targets without `std` a software square root in `f64`, hundreds of
/// cycles a lane on a Cortex-M4F (whose FPU is single precision); there it
/// is [`sqrt_f32`] per lane. The results are the same bits either way.
#[inline(always)]
#[must_use]
pub(crate) fn sqrt4(v: f32x4) -> f32x4 {
    #[cfg(all(target_arch = "arm", target_abi = "eabihf"))]
    {
        f32x4::new(v.to_array().map(sqrt_f32))
    }
    #[cfg(not(all(target_arch = "arm", target_abi = "eabihf")))]
    {
        v.sqrt()
    }
}

/// Magnitudes below this (2^-40, about 9.1e-13) are float noise in any
/// transform component: 2^-40 of a unit quaternion's length, a picometre in
/// metres. Products of such values are subnormal, and on x86 every SSE or
/// AVX operation with a subnormal operand or result costs a microcode
/// assist of over a hundred cycles. Motion capture writes such noise (CMU's
/// BVH files hold angles of about 1e-19 degrees), and the runtime does not
/// set the FPU's flush-to-zero mode, which belongs to the embedding
/// program. So the compressor stores every component below this as zero,
/// and the importers do the same to rotations, in clip keys and rest poses
/// ([`flush_tiny`], [`Quat::flush_tiny`]).
pub const TINY: f32 = 1.0 / (1u64 << 40) as f32;

/// `v`, or zero when `|v| <` [`TINY`] (NaN and infinities unchanged).
#[inline]
#[must_use]
pub fn flush_tiny(v: f32) -> f32 {
    if v.abs() < TINY {
        0.0
    } else {
        v
    }
}

/// A joint's local transform: translation, rotation, scale (applied S, then R, then T).
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
    /// The identity transform: no translation, no rotation, unit scale.
    pub const IDENTITY: Transform = Transform {
        translation: Vec3::ZERO,
        rotation: Quat::IDENTITY,
        scale: Vec3::ONE,
    };

    /// A transform from its three parts.
    #[inline]
    #[must_use]
    pub const fn new(translation: Vec3, rotation: Quat, scale: Vec3) -> Self {
        Transform {
            translation,
            rotation,
            scale,
        }
    }

    /// A translation and rotation with unit scale.
    #[inline]
    #[must_use]
    pub const fn from_translation_rotation(translation: Vec3, rotation: Quat) -> Self {
        Transform::new(translation, rotation, Vec3::ONE)
    }

    /// The affine matrix `T * R * S` of this transform.
    #[inline]
    #[must_use]
    pub fn to_matrix(&self) -> Mat4 {
        Mat4::from_trs(self.translation, self.rotation, self.scale)
    }

    /// True when every component is finite.
    #[inline]
    #[must_use]
    pub fn is_finite(&self) -> bool {
        self.translation.is_finite() && self.rotation.is_finite() && self.scale.is_finite()
    }

    /// This transform with every component below [`TINY`] in magnitude set
    /// to zero ([`flush_tiny`]).
    #[must_use]
    pub fn flush_tiny(&self) -> Transform {
        let v = |v: Vec3| Vec3::new(flush_tiny(v.x), flush_tiny(v.y), flush_tiny(v.z));
        Transform {
            translation: v(self.translation),
            rotation: self.rotation.flush_tiny(),
            scale: v(self.scale),
        }
    }
}

impl Default for Transform {
    fn default() -> Self {
        Transform::IDENTITY
    }
}

#[cfg(test)]
mod tests {
    use super::{flush_tiny, sqrt4, sqrt_f32, Quat, Transform, Vec3, TINY};
    use wide::f32x4;

    #[test]
    fn flush_tiny_zeroes_only_below_the_threshold() {
        assert_eq!(TINY, 2f32.powi(-40));
        let below = f32::from_bits(TINY.to_bits() - 1);
        for v in [0.0, -0.0, 6e-39, -6e-39, 3.4e-21, -1e-13, below, -below] {
            assert_eq!(flush_tiny(v).to_bits(), 0, "{v:e}");
        }
        for v in [
            TINY,
            -TINY,
            1e-12,
            -0.5,
            1.0,
            3e38,
            f32::INFINITY,
            f32::NEG_INFINITY,
        ] {
            assert_eq!(flush_tiny(v).to_bits(), v.to_bits(), "{v:e}");
        }
        assert!(flush_tiny(f32::NAN).is_nan());
        let t = Transform::new(
            Vec3::new(1e-20, 5.0, -TINY),
            Quat::new(-6e-39, 3.4e-21, 0.6, 0.8),
            Vec3::new(1.0, 1e-30, 2.0),
        )
        .flush_tiny();
        assert_eq!(t.translation, Vec3::new(0.0, 5.0, -TINY));
        assert_eq!(t.rotation, Quat::new(0.0, 0.0, 0.6, 0.8));
        assert_eq!(t.scale, Vec3::new(1.0, 0.0, 2.0));
    }

    /// Correctly rounded: `r` is the float nearest to √x, so `r²` is closer
    /// to `x` than the square of either neighbour of `r` (checked in f64,
    /// where those squares are exact enough to compare).
    fn is_nearest(x: f32, r: f32) -> bool {
        let d = |v: f32| (f64::from(v) * f64::from(v) - f64::from(x)).abs();
        let (lo, hi) = (
            f32::from_bits(r.to_bits() - 1),
            f32::from_bits(r.to_bits() + 1),
        );
        d(r) <= d(lo) && d(r) <= d(hi)
    }

    #[test]
    fn square_roots_are_correctly_rounded_and_lane_wise() {
        assert_eq!(sqrt_f32(0.0).to_bits(), 0);
        assert_eq!(sqrt_f32(-0.0).to_bits(), (-0.0f32).to_bits());
        assert!(sqrt_f32(-1.0).is_nan());
        assert_eq!(sqrt_f32(f32::INFINITY), f32::INFINITY);
        assert_eq!(sqrt_f32(0.25), 0.5);
        // A subnormal: 2^-140 -> 2^-70.
        assert_eq!(sqrt_f32(f32::from_bits(1 << 9)), f32::from_bits(57 << 23));
        // A sweep over the exponents and mantissas of positive floats
        // (normal and subnormal).
        let mut bits = 1u32;
        while bits < 0x7F80_0000 {
            let x = f32::from_bits(bits);
            let r = sqrt_f32(x);
            assert!(is_nearest(x, r), "sqrt({x:e}) = {r:e}");
            let v = sqrt4(f32x4::new([x, 4.0 * x, 0.0, 1.0])).to_array();
            assert_eq!(v[0].to_bits(), r.to_bits());
            assert_eq!(v[1].to_bits(), sqrt_f32(4.0 * x).to_bits());
            assert_eq!((v[2], v[3]), (0.0, 1.0));
            bits += 0x0001_2345;
        }
    }
}
