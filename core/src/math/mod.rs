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
}

impl Default for Transform {
    fn default() -> Self {
        Transform::IDENTITY
    }
}
