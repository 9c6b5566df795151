//! Vectors and quaternions of `N` characters at once, one per SIMD lane,
//! for the batched two-bone and aim kernels. Each kernel is written once
//! over [`Lane`] and instantiated for `f32x4` and `f32x8`; the operations
//! follow the scalar `Vec3` / `Quat` operation order so that the lanes
//! match the scalar solvers to rounding.

use core::ops::{Add, BitAnd, BitOr, BitXor, Div, Mul, Neg, Sub};

use wide::{f32x4, f32x8};

use crate::fp::{Fp, Trig};

/// The lane operations the kernels need, for `f32x4` and `f32x8`.
/// Comparisons return all-ones / all-zeros masks of the same type.
pub(crate) trait Lane<const N: usize>:
    Copy
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + BitAnd<Output = Self>
    + BitOr<Output = Self>
    + BitXor<Output = Self>
{
    fn load(a: [f32; N]) -> Self;
    fn store(self) -> [f32; N];
    fn splat(x: f32) -> Self;
    #[inline(always)]
    fn gather(f: impl Fn(usize) -> f32) -> Self {
        Self::load(core::array::from_fn(f))
    }
    #[inline(always)]
    fn lane(self, i: usize) -> f32 {
        self.store()[i]
    }
    fn sqrt(self) -> Self;
    fn abs(self) -> Self;
    fn max(self, o: Self) -> Self;
    fn min(self, o: Self) -> Self;
    fn gt(self, o: Self) -> Self;
    fn ge(self, o: Self) -> Self;
    fn lt(self, o: Self) -> Self;
    fn le(self, o: Self) -> Self;
    fn eq(self, o: Self) -> Self;
    fn finite(self) -> Self;
    /// `self` is a mask: `t` where set, `f` elsewhere.
    fn select(self, t: Self, f: Self) -> Self;
    fn all(self) -> bool;
    fn any(self) -> bool;
    fn bitmask(self) -> u32;
    fn atan2(self, x: Self) -> Self;
    fn sin_cos(self) -> (Self, Self);
}

macro_rules! impl_lane {
    ($t:ty, $n:literal, $sqrt:path) => {
        impl Lane<$n> for $t {
            #[inline(always)]
            fn load(a: [f32; $n]) -> Self {
                <$t>::new(a)
            }
            #[inline(always)]
            fn store(self) -> [f32; $n] {
                self.to_array()
            }
            #[inline(always)]
            fn splat(x: f32) -> Self {
                <$t>::splat(x)
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                $sqrt(self)
            }
            #[inline(always)]
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            #[inline(always)]
            fn max(self, o: Self) -> Self {
                Fp::max_num(self, o)
            }
            #[inline(always)]
            fn min(self, o: Self) -> Self {
                Fp::min_num(self, o)
            }
            #[inline(always)]
            fn gt(self, o: Self) -> Self {
                self.simd_gt(o)
            }
            #[inline(always)]
            fn ge(self, o: Self) -> Self {
                self.simd_ge(o)
            }
            #[inline(always)]
            fn lt(self, o: Self) -> Self {
                self.simd_lt(o)
            }
            #[inline(always)]
            fn le(self, o: Self) -> Self {
                self.simd_le(o)
            }
            #[inline(always)]
            fn eq(self, o: Self) -> Self {
                self.simd_eq(o)
            }
            #[inline(always)]
            fn finite(self) -> Self {
                <$t>::is_finite(self)
            }
            #[inline(always)]
            fn select(self, t: Self, f: Self) -> Self {
                self.bitselect(t, f)
            }
            #[inline(always)]
            fn all(self) -> bool {
                <$t>::all(self)
            }
            #[inline(always)]
            fn any(self) -> bool {
                <$t>::any(self)
            }
            #[inline(always)]
            fn bitmask(self) -> u32 {
                self.to_bitmask()
            }
            #[inline(always)]
            fn atan2(self, x: Self) -> Self {
                Trig::arctan2(self, x)
            }
            #[inline(always)]
            fn sin_cos(self) -> (Self, Self) {
                Trig::sincos(self)
            }
        }
    };
}

// Correctly rounded square roots on every target, 32-bit ARM included (see
// `crate::math::sqrt4`), so that the lanes match the scalar solvers.
impl_lane!(f32x4, 4, crate::math::sqrt4);
impl_lane!(f32x8, 8, sqrt8);

#[inline(always)]
fn sqrt8(v: f32x8) -> f32x8 {
    #[cfg(all(target_arch = "arm", target_abi = "eabihf"))]
    {
        f32x8::new(v.to_array().map(crate::math::sqrt_f32))
    }
    #[cfg(not(all(target_arch = "arm", target_abi = "eabihf")))]
    {
        v.sqrt()
    }
}

/// A vector per lane.
#[derive(Clone, Copy)]
pub(crate) struct V<F> {
    pub x: F,
    pub y: F,
    pub z: F,
}

impl<F> V<F> {
    #[inline(always)]
    pub fn new(x: F, y: F, z: F) -> Self {
        V { x, y, z }
    }
}

impl<F: Copy + Add<Output = F> + Sub<Output = F> + Mul<Output = F>> V<F> {
    #[inline(always)]
    pub fn add(self, o: Self) -> Self {
        V::new(self.x + o.x, self.y + o.y, self.z + o.z)
    }
    #[inline(always)]
    pub fn sub(self, o: Self) -> Self {
        V::new(self.x - o.x, self.y - o.y, self.z - o.z)
    }
    #[inline(always)]
    pub fn scale(self, s: F) -> Self {
        V::new(self.x * s, self.y * s, self.z * s)
    }
    #[inline(always)]
    pub fn dot(self, o: Self) -> F {
        self.x * o.x + self.y * o.y + self.z * o.z
    }
    #[inline(always)]
    pub fn cross(self, o: Self) -> Self {
        V::new(
            self.y * o.z - self.z * o.y,
            self.z * o.x - self.x * o.z,
            self.x * o.y - self.y * o.x,
        )
    }
}

impl<F> V<F> {
    /// Lane `i` of each component from `f(i)`.
    #[inline(always)]
    pub fn gather<const N: usize>(f: impl Fn(usize) -> crate::math::Vec3) -> Self
    where
        F: Lane<N>,
    {
        V::new(
            F::gather(|i| f(i).x),
            F::gather(|i| f(i).y),
            F::gather(|i| f(i).z),
        )
    }

    /// The components from three arrays of lanes.
    #[inline(always)]
    pub fn load<const N: usize>(a: &[[f32; N]; 3]) -> Self
    where
        F: Lane<N>,
    {
        V::new(F::load(a[0]), F::load(a[1]), F::load(a[2]))
    }

    /// `t` in the lanes where the mask `m` is set, `f` elsewhere.
    #[inline(always)]
    pub fn select<const N: usize>(m: F, t: Self, f: Self) -> Self
    where
        F: Lane<N>,
    {
        V::new(m.select(t.x, f.x), m.select(t.y, f.y), m.select(t.z, f.z))
    }

    /// The mask of the lanes whose three components are finite.
    #[inline(always)]
    pub fn finite<const N: usize>(self) -> F
    where
        F: Lane<N>,
    {
        self.x.finite() & self.y.finite() & self.z.finite()
    }
}

/// A quaternion per lane.
#[derive(Clone, Copy)]
pub(crate) struct Q<F> {
    pub x: F,
    pub y: F,
    pub z: F,
    pub w: F,
}

impl<F: Copy> Q<F> {
    /// The quaternion `(v, w)`.
    #[inline(always)]
    pub fn new(v: V<F>, w: F) -> Self {
        Q {
            x: v.x,
            y: v.y,
            z: v.z,
            w,
        }
    }
    /// The vector part.
    #[inline(always)]
    pub fn v(self) -> V<F> {
        V::new(self.x, self.y, self.z)
    }
}

impl<F: Copy + Add<Output = F> + Sub<Output = F> + Mul<Output = F>> Q<F> {
    /// `(axis · s, c)`: the rotation about a unit `axis` whose half-angle
    /// has sine `s` and cosine `c`.
    #[inline(always)]
    pub fn from_axis(axis: V<F>, s: F, c: F) -> Self {
        Q::new(axis.scale(s), c)
    }
    /// The Hamilton product, in the scalar `Quat`'s operation order.
    #[inline(always)]
    pub fn mul(self, b: Self) -> Self {
        let a = self;
        Q {
            x: a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
            y: a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
            z: a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
            w: a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
        }
    }
    /// `v` rotated by the unit quaternion, in the scalar `Quat::rotate`
    /// order.
    #[inline(always)]
    pub fn rotate(self, v: V<F>) -> V<F> {
        let u = self.v();
        let uv = u.cross(v);
        let t = uv.add(uv);
        v.add(t.scale(self.w)).add(u.cross(t))
    }
}

impl<F> Q<F> {
    /// `t` in the lanes where the mask `m` is set, `f` elsewhere.
    #[inline(always)]
    pub fn select<const N: usize>(m: F, t: Self, f: Self) -> Self
    where
        F: Lane<N>,
    {
        Q {
            x: m.select(t.x, f.x),
            y: m.select(t.y, f.y),
            z: m.select(t.z, f.z),
            w: m.select(t.w, f.w),
        }
    }
}
