use core::ops::{Add, Mul, Neg, Sub};

/// A 3-component vector of `f32`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct Vec3 {
    /// X component.
    pub x: f32,
    /// Y component.
    pub y: f32,
    /// Z component.
    pub z: f32,
}

impl Vec3 {
    /// (0, 0, 0).
    pub const ZERO: Vec3 = Vec3::new(0.0, 0.0, 0.0);
    /// (1, 1, 1).
    pub const ONE: Vec3 = Vec3::new(1.0, 1.0, 1.0);
    /// Unit X.
    pub const X: Vec3 = Vec3::new(1.0, 0.0, 0.0);
    /// Unit Y (up in sinew's procedural data).
    pub const Y: Vec3 = Vec3::new(0.0, 1.0, 0.0);
    /// Unit Z (forward in sinew's procedural data).
    pub const Z: Vec3 = Vec3::new(0.0, 0.0, 1.0);

    /// A vector from its components.
    #[inline]
    #[must_use]
    pub const fn new(x: f32, y: f32, z: f32) -> Self {
        Vec3 { x, y, z }
    }

    /// All components set to `v`.
    #[inline]
    #[must_use]
    pub const fn splat(v: f32) -> Self {
        Vec3::new(v, v, v)
    }

    /// Dot product.
    #[inline]
    #[must_use]
    pub fn dot(self, o: Vec3) -> f32 {
        self.x * o.x + self.y * o.y + self.z * o.z
    }

    /// Cross product `self × o`.
    #[inline]
    #[must_use]
    pub fn cross(self, o: Vec3) -> Vec3 {
        Vec3::new(
            self.y * o.z - self.z * o.y,
            self.z * o.x - self.x * o.z,
            self.x * o.y - self.y * o.x,
        )
    }

    /// The unit vector along `self`, or `None` when its length is below
    /// `1e-12` or not finite (so callers choose their own fallback).
    #[inline]
    #[must_use]
    pub fn try_normalize(self) -> Option<Vec3> {
        let len = self.length();
        (len.is_finite() && len > 1e-12).then(|| self * (1.0 / len))
    }

    /// Squared Euclidean length.
    #[inline]
    #[must_use]
    pub fn length_squared(self) -> f32 {
        self.dot(self)
    }

    /// Euclidean length.
    #[inline]
    #[must_use]
    pub fn length(self) -> f32 {
        super::sqrt_f32(self.dot(self))
    }

    /// Component-wise product.
    #[inline]
    #[must_use]
    pub fn mul_elem(self, o: Vec3) -> Vec3 {
        Vec3::new(self.x * o.x, self.y * o.y, self.z * o.z)
    }

    /// Linear interpolation `self + (o - self) * t`.
    #[inline]
    #[must_use]
    pub fn lerp(self, o: Vec3, t: f32) -> Vec3 {
        self + (o - self) * t
    }

    /// True when every component is finite.
    #[inline]
    #[must_use]
    pub fn is_finite(self) -> bool {
        self.x.is_finite() && self.y.is_finite() && self.z.is_finite()
    }

    /// The components as an array.
    #[inline]
    #[must_use]
    pub const fn to_array(self) -> [f32; 3] {
        [self.x, self.y, self.z]
    }
}

impl Add for Vec3 {
    type Output = Vec3;
    #[inline]
    fn add(self, o: Vec3) -> Vec3 {
        Vec3::new(self.x + o.x, self.y + o.y, self.z + o.z)
    }
}

impl Sub for Vec3 {
    type Output = Vec3;
    #[inline]
    fn sub(self, o: Vec3) -> Vec3 {
        Vec3::new(self.x - o.x, self.y - o.y, self.z - o.z)
    }
}

impl Mul<f32> for Vec3 {
    type Output = Vec3;
    #[inline]
    fn mul(self, s: f32) -> Vec3 {
        Vec3::new(self.x * s, self.y * s, self.z * s)
    }
}

impl Neg for Vec3 {
    type Output = Vec3;
    #[inline]
    fn neg(self) -> Vec3 {
        Vec3::new(-self.x, -self.y, -self.z)
    }
}
