use core::ops::{Add, Mul, Neg};

use super::Vec3;
use crate::fp::Fp;

/// A quaternion `(x, y, z, w)`; unit quaternions represent rotations.
///
/// `#[repr(C)]` and `Pod`: four `f32`s in that order, so a slice of
/// flattened `f32` rotation keys can be viewed as `&[Quat]` in place.
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Quat {
    /// X of the vector part.
    pub x: f32,
    /// Y of the vector part.
    pub y: f32,
    /// Z of the vector part.
    pub z: f32,
    /// Scalar part.
    pub w: f32,
}

impl Default for Quat {
    fn default() -> Self {
        Quat::IDENTITY
    }
}

impl Quat {
    /// The identity rotation (0, 0, 0, 1).
    pub const IDENTITY: Quat = Quat::new(0.0, 0.0, 0.0, 1.0);

    /// A quaternion from its components, `(x, y, z, w)`.
    #[inline]
    #[must_use]
    pub const fn new(x: f32, y: f32, z: f32, w: f32) -> Self {
        Quat { x, y, z, w }
    }

    /// Rotation of `angle` radians about `axis` (which must be unit length).
    #[inline]
    #[must_use]
    pub fn from_axis_angle(axis: Vec3, angle: f32) -> Self {
        let (s, c) = (libm::sinf(angle * 0.5), libm::cosf(angle * 0.5));
        Quat::new(axis.x * s, axis.y * s, axis.z * s, c)
    }

    /// The shortest rotation that turns unit vector `from` onto unit vector
    /// `to`. For opposite vectors (no unique shortest arc) it turns by π
    /// about an axis perpendicular to `from`.
    #[must_use]
    pub fn from_rotation_arc(from: Vec3, to: Vec3) -> Self {
        let d = from.dot(to);
        if d < -1.0 + 1e-6 {
            // Any axis perpendicular to `from`: cross with the basis axis it is
            // least aligned with.
            let other = if libm::fabsf(from.x) < 0.9 {
                Vec3::X
            } else {
                Vec3::Y
            };
            let axis = from.cross(other).try_normalize().unwrap_or(Vec3::Z);
            return Quat::new(axis.x, axis.y, axis.z, 0.0);
        }
        // q = (from × to, 1 + from · to), normalised: half the angle without
        // trigonometry.
        let c = from.cross(to);
        Quat::new(c.x, c.y, c.z, 1.0 + d).normalize()
    }

    /// Rotation about +X by `angle` radians.
    #[inline]
    #[must_use]
    pub fn from_rotation_x(angle: f32) -> Self {
        Quat::from_axis_angle(Vec3::X, angle)
    }

    /// Rotation about +Y by `angle` radians.
    #[inline]
    #[must_use]
    pub fn from_rotation_y(angle: f32) -> Self {
        Quat::from_axis_angle(Vec3::Y, angle)
    }

    /// Rotation about +Z by `angle` radians.
    #[inline]
    #[must_use]
    pub fn from_rotation_z(angle: f32) -> Self {
        Quat::from_axis_angle(Vec3::Z, angle)
    }

    /// 4D dot product.
    #[inline]
    #[must_use]
    pub fn dot(self, o: Quat) -> f32 {
        self.x * o.x + self.y * o.y + self.z * o.z + self.w * o.w
    }

    /// Euclidean length of the 4-vector.
    #[inline]
    #[must_use]
    pub fn length(self) -> f32 {
        super::sqrt_f32(self.dot(self))
    }

    /// The quaternion scaled to unit length. A zero quaternion gives NaNs
    /// (callers that can produce one guard against it).
    #[inline]
    #[must_use]
    pub fn normalize(self) -> Quat {
        self.scale(1.0 / self.length())
    }

    /// Every component multiplied by `s`.
    #[inline]
    #[must_use]
    pub fn scale(self, s: f32) -> Quat {
        Quat::new(self.x * s, self.y * s, self.z * s, self.w * s)
    }

    /// The conjugate `(-x, -y, -z, w)`: the inverse of a unit quaternion.
    #[inline]
    #[must_use]
    pub fn conjugate(self) -> Quat {
        Quat::new(-self.x, -self.y, -self.z, self.w)
    }

    /// Rotates `v` by this (unit) quaternion.
    #[inline]
    #[must_use]
    pub fn rotate(self, v: Vec3) -> Vec3 {
        // v' = v + 2w (u × v) + 2 u × (u × v), u = vector part.
        let u = Vec3::new(self.x, self.y, self.z);
        let t = u.cross(v) * 2.0;
        v + t * self.w + u.cross(t)
    }

    /// Normalised linear interpolation along the shorter arc.
    #[inline]
    #[must_use]
    pub fn nlerp(self, o: Quat, t: f32) -> Quat {
        let o = if self.dot(o) < 0.0 { -o } else { o };
        (self.scale(1.0 - t) + o.scale(t)).normalize()
    }

    /// The rotation angle in radians, in `[0, 2π]`.
    #[inline]
    #[must_use]
    pub fn angle(self) -> f32 {
        2.0 * libm::acosf(self.w.clamp(-1.0, 1.0))
    }

    /// The angle between two rotations in radians, in `[0, π]`.
    #[inline]
    #[must_use]
    pub fn angle_between(self, o: Quat) -> f32 {
        2.0 * libm::acosf(libm::fabsf(self.dot(o)).min_num(1.0))
    }

    /// True when every component is finite.
    #[inline]
    #[must_use]
    pub fn is_finite(self) -> bool {
        self.x.is_finite() && self.y.is_finite() && self.z.is_finite() && self.w.is_finite()
    }

    /// This quaternion with every component below [`super::TINY`] in
    /// magnitude set to zero ([`super::flush_tiny`]).
    #[inline]
    #[must_use]
    pub fn flush_tiny(self) -> Quat {
        use super::flush_tiny as f;
        Quat::new(f(self.x), f(self.y), f(self.z), f(self.w))
    }

    /// The components as `[x, y, z, w]`.
    #[inline]
    #[must_use]
    pub const fn to_array(self) -> [f32; 4] {
        [self.x, self.y, self.z, self.w]
    }
}

impl Mul for Quat {
    type Output = Quat;
    /// Hamilton product: `(a * b)` rotates by `b` first, then by `a`.
    #[inline]
    fn mul(self, b: Quat) -> Quat {
        let a = self;
        Quat::new(
            a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
            a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
            a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
            a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
        )
    }
}

impl Add for Quat {
    type Output = Quat;
    /// Component-wise sum (not a rotation composition; see `Mul`).
    #[inline]
    fn add(self, o: Quat) -> Quat {
        Quat::new(self.x + o.x, self.y + o.y, self.z + o.z, self.w + o.w)
    }
}

impl Neg for Quat {
    type Output = Quat;
    /// `-q`: the same rotation on the other hemisphere.
    #[inline]
    fn neg(self) -> Quat {
        Quat::new(-self.x, -self.y, -self.z, -self.w)
    }
}
