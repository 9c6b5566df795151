//! The key types a curve can hold and the arithmetic each interpolation
//! needs on them: component-wise for floats and vectors, on the unit
//! sphere for quaternions.

use crate::error::Error;
use crate::math::{sqrt_f32, Quat};

/// A key type a [`super::Curve`] can hold: `f32`, `[f32; 2]`, `[f32; 3]`,
/// `[f32; 4]` (component-wise interpolation) or [`Quat`] (rotations).
///
/// The trait is sealed: its arithmetic lives in a private supertrait, so
/// the set of key types is the one above.
pub trait CurveValue: detail::Ops {}

impl CurveValue for f32 {}
impl CurveValue for [f32; 2] {}
impl CurveValue for [f32; 3] {}
impl CurveValue for [f32; 4] {}
impl CurveValue for Quat {}

/// The cubic Hermite basis `[h00, h10, h01, h11]` at `u` in `[0, 1]`:
/// `p(u) = h00·p0 + h10·m0 + h01·p1 + h11·m1` for end points `p0`, `p1`
/// and tangents `m0`, `m1` per unit of `u`.
///
/// `h00 = 2u³ − 3u² + 1`, `h10 = u³ − 2u² + u`, `h01 = −2u³ + 3u²`,
/// `h11 = u³ − u²`; exactly `[1, 0, 0, 0]` at `u = 0` and `[0, 0, 1, 0]` at
/// `u = 1`.
#[inline]
#[must_use]
pub fn hermite_basis(u: f32) -> [f32; 4] {
    let u2 = u * u;
    let u3 = u2 * u;
    [
        2.0 * u3 - 3.0 * u2 + 1.0,
        u3 - 2.0 * u2 + u,
        3.0 * u2 - 2.0 * u3,
        u3 - u2,
    ]
}

pub(crate) mod detail {
    use super::{hermite_basis, Error};

    /// The keys around one segment, for tangents taken from neighbours. At the
    /// ends of a curve the missing neighbour is the segment's own end key (same
    /// time, same value), which turns the centred difference into a one-sided
    /// one.
    #[derive(Clone, Copy, Debug)]
    pub struct Neighbours<V> {
        /// Key before the segment (or the segment's first key at the start).
        pub prev: (f32, V),
        /// The segment's first key.
        pub k0: (f32, V),
        /// The segment's second key.
        pub k1: (f32, V),
        /// Key after the segment (or the segment's second key at the end).
        pub next: (f32, V),
        /// `1 - tension`.
        pub scale: f32,
    }

    impl<V> Neighbours<V> {
        /// The factors that turn a neighbour difference into a tangent scaled
        /// by the segment's length: `Δ·(1 − tension)/(t[k+1] − t[k−1])` for the
        /// first key and the second. Times are strictly increasing, so both
        /// denominators are positive, and `Δ` is at most each of them.
        #[inline]
        pub fn factors(&self) -> (f32, f32) {
            let dt = self.k1.0 - self.k0.0;
            (
                self.scale * (dt / (self.k1.0 - self.prev.0)),
                self.scale * (dt / (self.next.0 - self.k0.0)),
            )
        }
    }

    /// The arithmetic a key type provides to the samplers.
    pub trait Ops: Copy {
        /// Rotations (slerp is defined for them only).
        const ROTATION: bool;
        /// All components finite.
        fn finite(&self) -> bool;
        /// Checks a key value (finite; rotations also not of zero length).
        ///
        /// # Errors
        /// [`Error::NonFinite`] or [`Error::InvalidParameter`].
        fn check_key(&self) -> Result<(), Error> {
            if self.finite() {
                Ok(())
            } else {
                Err(Error::NonFinite { what: "key value" })
            }
        }
        /// `wa·a + wb·b`, component-wise.
        fn weighted(a: Self, wa: f32, b: Self, wb: f32) -> Self;
        /// `h[0]·p0 + h[1]·a + h[2]·p1 + h[3]·b`, component-wise
        /// (rotations normalise the result).
        fn hermite(h: [f32; 4], p0: Self, a: Self, p1: Self, b: Self) -> Self;
        /// A key as returned on its own (rotations normalise it).
        #[inline]
        fn key(self) -> Self {
            self
        }
        /// Linear interpolation (rotations: nlerp along the shorter arc).
        #[inline]
        fn linear(p0: Self, p1: Self, u: f32) -> Self {
            Self::weighted(p0, 1.0 - u, p1, u)
        }
        /// Spherical interpolation; only called for rotations.
        #[inline]
        fn slerp(p0: Self, p1: Self, u: f32) -> Self {
            Self::linear(p0, p1, u)
        }
        /// The segment's two tangents, scaled by its length, from the
        /// neighbours (cardinal spline). Component-wise types only.
        #[inline]
        fn cardinal_tangents(k: &Neighbours<Self>) -> (Self, Self) {
            let (c0, c1) = k.factors();
            (
                Self::weighted(k.k1.1, c0, k.prev.1, -c0),
                Self::weighted(k.next.1, c1, k.k0.1, -c1),
            )
        }
        /// Cardinal spline through the segment at `u`: Hermite with the
        /// tangents above (rotations: squad-style, see `Quat`'s impl).
        #[inline]
        fn cardinal(k: &Neighbours<Self>, u: f32) -> Self {
            let (a, b) = Self::cardinal_tangents(k);
            Self::hermite(hermite_basis(u), k.k0.1, a, k.k1.1, b)
        }
    }
}

use detail::{Neighbours, Ops};

impl Ops for f32 {
    const ROTATION: bool = false;
    #[inline]
    fn finite(&self) -> bool {
        self.is_finite()
    }
    #[inline]
    fn weighted(a: f32, wa: f32, b: f32, wb: f32) -> f32 {
        a * wa + b * wb
    }
    #[inline]
    fn hermite(h: [f32; 4], p0: f32, a: f32, p1: f32, b: f32) -> f32 {
        h[0] * p0 + h[1] * a + h[2] * p1 + h[3] * b
    }
}

macro_rules! array_ops {
    ($n:literal) => {
        impl Ops for [f32; $n] {
            const ROTATION: bool = false;
            #[inline]
            fn finite(&self) -> bool {
                self.iter().all(|c| c.is_finite())
            }
            #[inline]
            fn weighted(a: Self, wa: f32, b: Self, wb: f32) -> Self {
                core::array::from_fn(|i| a[i] * wa + b[i] * wb)
            }
            #[inline]
            fn hermite(h: [f32; 4], p0: Self, a: Self, p1: Self, b: Self) -> Self {
                core::array::from_fn(|i| h[0] * p0[i] + h[1] * a[i] + h[2] * p1[i] + h[3] * b[i])
            }
        }
    };
}

array_ops!(2);
array_ops!(3);
array_ops!(4);

/// Squared lengths below this make a rotation key (or an interpolated
/// quaternion) unusable: normalising it would divide by almost nothing.
const MIN_LENGTH_SQUARED: f32 = 1e-12;

/// `o` on the hemisphere of `q` (the same rotation, the shorter arc).
#[inline]
fn align(q: Quat, o: Quat) -> Quat {
    if q.dot(o) < 0.0 {
        -o
    } else {
        o
    }
}

/// Logarithm of a unit quaternion with `w >= 0`: axis times half-angle.
#[inline]
fn log(q: Quat) -> [f32; 3] {
    let v = [q.x, q.y, q.z];
    let s = sqrt_f32(q.x * q.x + q.y * q.y + q.z * q.z);
    if s > 0.0 {
        // atan2 keeps full precision for tiny angles, where acos(w) does not.
        let k = libm::atan2f(s, q.w) / s;
        v.map(|c| c * k)
    } else {
        [0.0; 3]
    }
}

/// Exponential of `axis · half-angle`: the unit quaternion.
#[inline]
fn exp(v: [f32; 3]) -> Quat {
    let theta = sqrt_f32(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    if theta > 0.0 {
        let k = libm::sinf(theta) / theta;
        Quat::new(v[0] * k, v[1] * k, v[2] * k, libm::cosf(theta))
    } else {
        Quat::IDENTITY
    }
}

/// `q` normalised, or `fallback` when `q` is (near) zero or not finite.
#[inline]
fn normalize_or(q: Quat, fallback: impl FnOnce() -> Quat) -> Quat {
    let l2 = q.dot(q);
    if l2 >= MIN_LENGTH_SQUARED && l2.is_finite() {
        q.scale(1.0 / sqrt_f32(l2))
    } else {
        fallback()
    }
}

/// Slerp along the shorter arc between rotations `a` and `b` (any length
/// above zero).
#[inline]
pub(crate) fn slerp(a: Quat, b: Quat, u: f32) -> Quat {
    let a = a.normalize();
    let b = align(a, b.normalize());
    let d = a.dot(b);
    // Nearly equal: sin θ is tiny and nlerp is within float noise of slerp.
    if d > 0.9995 {
        return Quat::nlerp(a, b, u);
    }
    // d in [0, 0.9995]: θ in [0.0316, π/2], sin θ >= 0.0316.
    let theta = libm::acosf(d);
    let s = 1.0 / libm::sinf(theta);
    let w0 = libm::sinf((1.0 - u) * theta) * s;
    let w1 = libm::sinf(u * theta) * s;
    (a.scale(w0) + b.scale(w1)).normalize()
}

impl Ops for Quat {
    const ROTATION: bool = true;
    #[inline]
    fn finite(&self) -> bool {
        self.is_finite()
    }
    fn check_key(&self) -> Result<(), Error> {
        if !self.is_finite() {
            return Err(Error::NonFinite { what: "key value" });
        }
        let l2 = self.dot(*self);
        if !(MIN_LENGTH_SQUARED..=f32::MAX).contains(&l2) {
            return Err(Error::InvalidParameter {
                what: "rotation key length must be at least 1e-6 and its square finite",
            });
        }
        Ok(())
    }
    #[inline]
    fn weighted(a: Quat, wa: f32, b: Quat, wb: f32) -> Quat {
        a.scale(wa) + b.scale(wb)
    }
    /// glTF's CUBICSPLINE for rotations: component-wise Hermite (no sign
    /// alignment, the tangents are the author's), then normalise. Tangents
    /// that cancel the keys would leave nothing to normalise; nlerp of the
    /// two keys stands in there.
    #[inline]
    fn hermite(h: [f32; 4], p0: Quat, a: Quat, p1: Quat, b: Quat) -> Quat {
        let q = p0.scale(h[0]) + a.scale(h[1]) + p1.scale(h[2]) + b.scale(h[3]);
        normalize_or(q, || Quat::nlerp(p0, p1, h[2] + h[3]))
    }
    #[inline]
    fn key(self) -> Quat {
        self.normalize()
    }
    #[inline]
    fn linear(p0: Quat, p1: Quat, u: f32) -> Quat {
        // Aligned, the weighted sum of two non-zero keys (u in [0, 1]) is
        // zero only for opposite keys of equal weight, which the alignment
        // turns into equal ones; the fallback covers keys far apart in length.
        let p1 = align(p0, p1);
        normalize_or(Quat::weighted(p0, 1.0 - u, p1, u), || p0.normalize())
    }
    #[inline]
    fn slerp(p0: Quat, p1: Quat, u: f32) -> Quat {
        slerp(p0, p1, u)
    }
    fn cardinal_tangents(k: &Neighbours<Quat>) -> (Quat, Quat) {
        // Not used for rotations (`cardinal` below is squad-style); the
        // component-wise tangents keep the trait total.
        let (c0, c1) = k.factors();
        (
            Quat::weighted(k.k1.1, c0, k.prev.1, -c0),
            Quat::weighted(k.next.1, c1, k.k0.1, -c1),
        )
    }
    /// Squad-style Hermite on the unit sphere, with non-uniform key times.
    ///
    /// In the tangent space at key `k` (right-multiplied logarithms,
    /// `L(a, b) = log(a⁻¹ b)`, shorter arc), the angular velocity is the
    /// same centred difference as for floats,
    /// `ω_k = (1 − tension)·(L(q_k, q_k+1) − L(q_k, q_k−1)) / (t_k+1 − t_k−1)`.
    /// The segment `[q0, q1]` of length `Δ` is
    /// `slerp(slerp(q0, q1, u), slerp(a, b, u), 2u(1 − u))` with inner
    /// points `a = q0·exp((Δ·ω0 − L01)/2)` and `b = q1·exp((L01 − Δ·ω1)/2)`,
    /// `L01 = L(q0, q1)`, which makes its derivative `Δ·ω` at both ends, so
    /// the curve is C¹ across keys whatever their spacing. For rotations
    /// about one axis it is the float cardinal spline of the half-angle.
    fn cardinal(k: &Neighbours<Quat>, u: f32) -> Quat {
        let q0 = k.k0.1.normalize();
        let q1 = align(q0, k.k1.1.normalize());
        let qp = align(q0, k.prev.1.normalize());
        let qn = align(q1, k.next.1.normalize());
        let (c0, c1) = k.factors();
        let l01 = log(q0.conjugate() * q1);
        let l0p = log(q0.conjugate() * qp);
        let l1n = log(q1.conjugate() * qn);
        let ea: [f32; 3] = core::array::from_fn(|i| 0.5 * (c0 * (l01[i] - l0p[i]) - l01[i]));
        let eb: [f32; 3] = core::array::from_fn(|i| 0.5 * (l01[i] - c1 * (l1n[i] + l01[i])));
        let a = q0 * exp(ea);
        let b = q1 * exp(eb);
        slerp(slerp(q0, q1, u), slerp(a, b, u), 2.0 * u * (1.0 - u))
    }
}
