//! The floating-point operations whose results depend on the target, in one
//! place, so that the `deterministic` feature can pin them.
//!
//! Everything else the kernels do (`+ - * /`, square roots, rounding,
//! comparisons, selects, `libm`) is correctly rounded IEEE arithmetic and
//! gives the same bits on every target; Rust never contracts `a * b + c`
//! into a fused multiply-add by itself. Three kinds of operation do not:
//!
//! - **Multiply-add.** `wide`'s `mul_add` rounds once where the target has
//!   FMA (x86-64 built with `fma`, e.g. `-C target-cpu=x86-64-v3`; AArch64
//!   always) and twice elsewhere (default x86-64, 32-bit ARM).
//! - **Lane transcendentals.** `wide`'s `sin_cos`, `atan2`, `asin` and
//!   `acos` are polynomials written with that `mul_add`.
//! - **Maximum and minimum of two zeros.** `f32::max`/`min` and `wide`'s
//!   `max`/`min`/`fast_max`/`fast_min` return either zero when both
//!   operands are zeros of opposite signs, and which one depends on the
//!   instruction (x86 `maxps` returns its second operand, AArch64 `fmax`
//!   orders `-0 < +0`).
//!
//! Without the feature each helper below is exactly the operation the core
//! called before (fastest on each target). With it, [`Fp::madd`] is a
//! multiply then an add, the transcendentals are `wide`'s polynomials with
//! that multiply-add ([`plain`]), and maxima and minima take the x86 rule on
//! every target, so poses and model matrices are the same bits on x86-64
//! (with or without FMA), AArch64 and Cortex-M. On x86-64 without FMA the
//! lane helpers are the default ones, bit for bit (`wide` picks the same
//! operations there).

use wide::{f32x4, f32x8};

/// Multiply-add and maximum/minimum, per lane (or for one `f32`).
pub(crate) trait Fp: Copy {
    /// `self * a + b`: by default `wide`'s `mul_add` (one rounding where the
    /// target has FMA); under `deterministic` a multiply, then an add.
    /// For `f32` always a multiply, then an add (the core fuses no scalar
    /// arithmetic).
    fn madd(self, a: Self, b: Self) -> Self;
    /// The larger value, NaN ignored (`wide`'s `max`, `f32::max`). Under
    /// `deterministic`, `o` when the two compare equal for lanes (as x86's
    /// `maxps`), `self` for `f32`; the other operand when one is NaN.
    fn max_num(self, o: Self) -> Self;
    /// The smaller value, NaN ignored (`wide`'s `min`, `f32::min`); ties as
    /// [`Fp::max_num`].
    fn min_num(self, o: Self) -> Self;
    /// `if self > o { self } else { o }`: `wide`'s `fast_max` (x86's
    /// `maxps`; `o` on ties and on NaN). Only the `deterministic` build
    /// pins the sign of a zero result on other targets.
    fn max_gt(self, o: Self) -> Self;
    /// `if self < o { self } else { o }`: `wide`'s `fast_min` (x86's
    /// `minps`); ties as [`Fp::max_gt`].
    fn min_lt(self, o: Self) -> Self;
}

/// Lane transcendentals: `wide`'s by default, [`plain`]'s under
/// `deterministic`. Named apart from `wide`'s methods, which would
/// otherwise take precedence.
pub(crate) trait Trig: Fp {
    /// `(sin self, cos self)`.
    fn sincos(self) -> (Self, Self);
    /// `atan2(self, x)`, the angle of `(x, self)`.
    fn arctan2(self, x: Self) -> Self;
    /// `asin self`, for `|self| <= 1`.
    fn arcsin(self) -> Self;
    /// `acos self`, for `|self| <= 1`.
    fn arccos(self) -> Self;
}

macro_rules! impl_lanes {
    ($f:ident, $plain:ident) => {
        impl Fp for $f {
            #[inline(always)]
            fn madd(self, a: Self, b: Self) -> Self {
                if cfg!(feature = "deterministic") {
                    self * a + b
                } else {
                    self.mul_add(a, b)
                }
            }
            #[inline(always)]
            fn max_num(self, o: Self) -> Self {
                if cfg!(any(not(feature = "deterministic"), target_feature = "sse")) {
                    self.max(o)
                } else {
                    (o.is_nan() | self.simd_gt(o)).bitselect(self, o)
                }
            }
            #[inline(always)]
            fn min_num(self, o: Self) -> Self {
                if cfg!(any(not(feature = "deterministic"), target_feature = "sse")) {
                    self.min(o)
                } else {
                    (o.is_nan() | self.simd_lt(o)).bitselect(self, o)
                }
            }
            #[inline(always)]
            fn max_gt(self, o: Self) -> Self {
                if cfg!(any(not(feature = "deterministic"), target_feature = "sse")) {
                    self.fast_max(o)
                } else {
                    self.simd_gt(o).bitselect(self, o)
                }
            }
            #[inline(always)]
            fn min_lt(self, o: Self) -> Self {
                if cfg!(any(not(feature = "deterministic"), target_feature = "sse")) {
                    self.fast_min(o)
                } else {
                    self.simd_lt(o).bitselect(self, o)
                }
            }
        }

        impl Trig for $f {
            #[inline(always)]
            fn sincos(self) -> (Self, Self) {
                if cfg!(feature = "deterministic") {
                    plain::$plain::sin_cos(self)
                } else {
                    self.sin_cos()
                }
            }
            #[inline(always)]
            fn arctan2(self, x: Self) -> Self {
                if cfg!(feature = "deterministic") {
                    plain::$plain::atan2(self, x)
                } else {
                    self.atan2(x)
                }
            }
            #[inline(always)]
            fn arcsin(self) -> Self {
                if cfg!(feature = "deterministic") {
                    plain::$plain::asin(self)
                } else {
                    self.asin()
                }
            }
            #[inline(always)]
            fn arccos(self) -> Self {
                if cfg!(feature = "deterministic") {
                    plain::$plain::acos(self)
                } else {
                    self.acos()
                }
            }
        }
    };
}

impl_lanes!(f32x4, x4);
impl_lanes!(f32x8, x8);

impl Fp for f32 {
    #[inline(always)]
    fn madd(self, a: Self, b: Self) -> Self {
        self * a + b
    }
    #[inline(always)]
    fn max_num(self, o: Self) -> Self {
        if cfg!(feature = "deterministic") {
            if o.is_nan() || self >= o {
                self
            } else {
                o
            }
        } else {
            self.max(o)
        }
    }
    #[inline(always)]
    fn min_num(self, o: Self) -> Self {
        if cfg!(feature = "deterministic") {
            if o.is_nan() || self <= o {
                self
            } else {
                o
            }
        } else {
            self.min(o)
        }
    }
    #[inline(always)]
    fn max_gt(self, o: Self) -> Self {
        if self > o {
            self
        } else {
            o
        }
    }
    #[inline(always)]
    fn min_lt(self, o: Self) -> Self {
        if self < o {
            self
        } else {
            o
        }
    }
}

/// `wide`'s lane `sin_cos`, `atan2`, `asin` and `acos` (Agner Fog's
/// polynomials from the vector class library) with every fused
/// multiply-add written as a multiply, then an add, in `wide`'s operation
/// order: what `wide` itself computes on a target without FMA, on every
/// target. Compiled in every build so that the tests can hold it to `wide`
/// bit for bit where `wide` does not fuse.
// The coefficients are `wide`'s decimal literals digit for digit (they round
// to the same `f32`s), so that they can be checked against its source.
#[allow(clippy::excessive_precision)]
pub(crate) mod plain {
    macro_rules! plain_trig {
        ($m:ident, $f:ident, $i:ident, $sqrt:path) => {
            pub(crate) mod $m {
                use bytemuck::cast;
                use wide::{$f, $i};

                #[inline(always)]
                fn k(v: f32) -> $f {
                    $f::splat(v)
                }

                /// `c0 + c1 x + c2 x²`, grouped as `wide`'s `polynomial_2!`.
                #[inline(always)]
                fn poly2(x: $f, c: [f32; 3]) -> $f {
                    let x2 = x * x;
                    x2 * k(c[2]) + (x * k(c[1]) + k(c[0]))
                }

                /// `c0 + … + c3 x³`, grouped as `wide`'s `polynomial_3!`.
                #[inline(always)]
                fn poly3(x: $f, c: [f32; 4]) -> $f {
                    let x2 = x * x;
                    (k(c[3]) * x + k(c[2])) * x2 + (k(c[1]) * x + k(c[0]))
                }

                /// `c0 + … + c4 x⁴`, grouped as `wide`'s `polynomial_4!`.
                #[inline(always)]
                fn poly4(x: $f, c: [f32; 5]) -> $f {
                    let x2 = x * x;
                    let x4 = x2 * x2;
                    (k(c[3]) * x + k(c[2])) * x2 + (k(c[1]) * x + k(c[0])) + k(c[4]) * x4
                }

                #[inline]
                pub(crate) fn sin_cos(v: $f) -> ($f, $f) {
                    const DP1: f32 = 0.785_156_25_f32 * 2.0;
                    const DP2: f32 = 2.418_756_484_985_351_562_5E-4_f32 * 2.0;
                    const DP3: f32 = 3.774_894_977_445_941_08E-8_f32 * 2.0;
                    const SIN: [f32; 3] =
                        [-1.666_665_461_1E-1, 8.332_160_873_6E-3, -1.951_529_589_1E-4];
                    const COS: [f32; 3] = [
                        4.166_664_568_298_827E-2,
                        -1.388_731_625_493_765E-3,
                        2.443_315_711_809_948E-5,
                    ];
                    let xa = v.abs();
                    // Quadrant.
                    let y = (xa * k(2.0 / core::f32::consts::PI)).round_ties_even();
                    let q: $i = y.round_int();
                    // xa - y·π/2 in three parts (`mul_neg_add` in `wide`).
                    let x = xa - y * k(DP1);
                    let x = x - y * k(DP2);
                    let x = x - y * k(DP3);
                    let x2 = x * x;
                    let mut s = poly2(x2, SIN) * (x * x2) + x;
                    let mut c = poly2(x2, COS) * (x2 * x2) + (k(1.0) - k(0.5) * x2);
                    let swap: $f = cast(!(q & $i::splat(1)).simd_eq($i::splat(0)));
                    let mut overflow: $f = cast(q.simd_gt($i::splat(0x0200_0000)));
                    overflow &= xa.is_finite();
                    s = overflow.bitselect(k(0.0), s);
                    c = overflow.bitselect(k(1.0), c);
                    let sign_sin: $i = (q << 30) ^ cast::<$f, $i>(v);
                    let sin = swap.bitselect(c, s).flip_signs(cast(sign_sin));
                    let sign_cos: $i = ((q + $i::splat(1)) & $i::splat(2)) << 30;
                    let cos = swap.bitselect(s, c) ^ cast::<$i, $f>(sign_cos);
                    let finite = v.is_finite();
                    let nan = k(f32::NAN);
                    (finite.bitselect(sin, nan), finite.bitselect(cos, nan))
                }

                const ATAN: [f32; 4] = [
                    -3.333_294_915_39E-1,
                    1.997_771_064_78E-1,
                    -1.387_768_560_32E-1,
                    8.053_744_495_38E-2,
                ];

                #[inline]
                pub(crate) fn atan2(y: $f, x: $f) -> $f {
                    let (x1, y1) = (x.abs(), y.abs());
                    // Into the first octant.
                    let swapxy = y1.simd_gt(x1);
                    let mut x2 = swapxy.bitselect(y1, x1);
                    let mut y2 = swapxy.bitselect(x1, y1);
                    // Both infinite: |x| = |y| = 1 instead.
                    let both_infinite = x.is_inf() & y.is_inf();
                    if both_infinite.any() {
                        let minus_one = -$f::ONE;
                        x2 = both_infinite.bitselect(x2 & minus_one, x2);
                        y2 = both_infinite.bitselect(y2 & minus_one, y2);
                    }
                    // x = y = 0 gives NaN here, replaced below.
                    let t = y2 / x2;
                    let notsmal = t.simd_ge($f::SQRT_2 - $f::ONE);
                    let a = notsmal.bitselect(t - $f::ONE, t);
                    let b = notsmal.bitselect(t + $f::ONE, $f::ONE);
                    let s = notsmal & $f::FRAC_PI_4;
                    let z = a / b;
                    let zz = z * z;
                    let mut re = poly3(zz, ATAN);
                    re = re * (zz * z) + z + s;
                    // Back in place.
                    re = swapxy.bitselect($f::FRAC_PI_2 - re, re);
                    re = (x | y).simd_eq($f::ZERO).bitselect($f::ZERO, re);
                    re = x.is_sign_negative().bitselect($f::PI - re, re);
                    y.is_sign_negative().bitselect(-re, re)
                }

                const ASIN: [f32; 5] = [
                    1.666_675_242_2E-1,
                    7.495_300_268_6E-2,
                    4.547_002_599_8E-2,
                    2.418_131_104_9E-2,
                    4.216_319_904_8E-2,
                ];

                /// The shared part of `asin` and `acos`: `(z, big)`.
                #[inline(always)]
                fn asin_core(v: $f) -> ($f, $f) {
                    let xa = v.abs();
                    let big = xa.simd_ge(k(0.5));
                    let x1 = k(0.5) * ($f::ONE - xa);
                    let x2 = xa * xa;
                    let x3 = big.bitselect(x1, x2);
                    let xb = $sqrt(x1);
                    let x4 = big.bitselect(xb, xa);
                    let z = poly4(x3, ASIN);
                    (z * (x3 * x4) + x4, big)
                }

                #[inline]
                pub(crate) fn asin(v: $f) -> $f {
                    let (z, big) = asin_core(v);
                    let z3 = $f::FRAC_PI_2 - (z + z);
                    big.bitselect(z3, z).flip_signs(v)
                }

                #[inline]
                pub(crate) fn acos(v: $f) -> $f {
                    let (z, big) = asin_core(v);
                    let z1 = z + z;
                    let z3 = v.simd_lt($f::ZERO).bitselect($f::PI - z1, z1);
                    let z4 = $f::FRAC_PI_2 - z.flip_signs(v);
                    big.bitselect(z3, z4)
                }
            }
        };
    }

    plain_trig!(x4, f32x4, i32x4, crate::math::sqrt4);
    plain_trig!(x8, f32x8, i32x8, wide::f32x8::sqrt);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Inputs that reach every branch: zeros of both signs, tiny and
    /// huge values, quadrant edges, ±1, infinities and NaN.
    fn inputs() -> impl Iterator<Item = f32> {
        let special = [
            0.0,
            -0.0,
            1e-30,
            -1e-30,
            0.5,
            -0.5,
            1.0,
            -1.0,
            core::f32::consts::FRAC_PI_2,
            -core::f32::consts::PI,
            1e7,
            -3e9,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
        ];
        let mut s = 0x1234_5678u32;
        let random = (0..4000).map(move |i| {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let unit = (s >> 8) as f32 / (1u32 << 24) as f32 * 2.0 - 1.0;
            // Half of them in [-1, 1] (asin, acos), half in [-8, 8].
            if i % 2 == 0 {
                unit
            } else {
                unit * 8.0
            }
        });
        special.into_iter().chain(random)
    }

    fn lanes(mut it: impl Iterator<Item = f32>) -> impl Iterator<Item = f32x4> {
        core::iter::from_fn(move || {
            let a = [
                it.next()?,
                it.next().unwrap_or(0.25),
                it.next().unwrap_or(-2.0),
                it.next().unwrap_or(3.0),
            ];
            Some(f32x4::new(a))
        })
    }

    /// Where `wide` rounds twice, [`plain`] must be `wide` bit for bit;
    /// where it fuses, within a few units in the last place of lanes whose
    /// argument `arg` is at most 1e4 (beyond, the two-rounding range
    /// reduction of `sin_cos` loses the result's leading bits, as `wide`'s
    /// does on targets without FMA).
    fn same(a: f32x4, b: f32x4, arg: f32x4) {
        let fused = cfg!(any(
            target_feature = "fma",
            all(target_arch = "aarch64", target_feature = "neon")
        ));
        let lanes = a
            .to_array()
            .into_iter()
            .zip(b.to_array())
            .zip(arg.to_array());
        for ((x, y), v) in lanes {
            if fused {
                let close = (x - y).abs() <= 1e-6 * x.abs().max(1.0);
                let huge = v.abs() > 1e4;
                assert!(
                    x == y || close || huge || (x.is_nan() && y.is_nan()),
                    "{x} vs {y} at {v}"
                );
            } else {
                let same = x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan());
                assert!(same, "{x:?} vs {y:?} at {v}");
            }
        }
    }

    #[test]
    fn plain_trig_is_wide_without_fma() {
        for v in lanes(inputs()) {
            let (s, c) = plain::x4::sin_cos(v);
            let (ws, wc) = v.sin_cos();
            same(s, ws, v);
            same(c, wc, v);
            let u = v.fast_max(f32x4::splat(-1.0)).fast_min(f32x4::ONE);
            same(plain::x4::asin(u), u.asin(), u);
            same(plain::x4::acos(u), u.acos(), u);
            let w = f32x4::new([v.to_array()[1], -0.0, 2.0, v.to_array()[0]]);
            same(plain::x4::atan2(v, w), v.atan2(w), f32x4::ZERO);
            same(plain::x4::atan2(w, v), w.atan2(v), f32x4::ZERO);
        }
    }

    #[test]
    fn plain_trig_x8_is_x4() {
        let all: [f32; 8] = [0.3, -1.7, 0.0, -0.0, 7.5, f32::INFINITY, -0.9, 0.999];
        let v8 = f32x8::new(all);
        let lo = f32x4::new([all[0], all[1], all[2], all[3]]);
        let hi = f32x4::new([all[4], all[5], all[6], all[7]]);
        let join = |a: f32x4, b: f32x4| {
            let (a, b) = (a.to_array(), b.to_array());
            [a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3]].map(f32::to_bits)
        };
        let bits = |v: f32x8| v.to_array().map(f32::to_bits);
        let (s8, c8) = plain::x8::sin_cos(v8);
        let ((s0, c0), (s1, c1)) = (plain::x4::sin_cos(lo), plain::x4::sin_cos(hi));
        assert_eq!(bits(s8), join(s0, s1));
        assert_eq!(bits(c8), join(c0, c1));
        let x8 = f32x8::new([1.0, -2.0, 0.0, -0.0, 3.0, -1.0, 0.5, 1e-3]);
        let (xl, xh) = (
            f32x4::new([1.0, -2.0, 0.0, -0.0]),
            f32x4::new([3.0, -1.0, 0.5, 1e-3]),
        );
        assert_eq!(
            bits(plain::x8::atan2(v8, x8)),
            join(plain::x4::atan2(lo, xl), plain::x4::atan2(hi, xh))
        );
    }

    /// The three values a multiply-add can round to: fused, plain, and
    /// (as a check that the inputs tell them apart) different.
    #[test]
    fn madd_is_plain_under_deterministic() {
        // 1 + 2^-12, squared: the 2^-24 term is lost by a plain multiply.
        let a = 1.0 + f32::EPSILON * 2048.0;
        let b = -(1.0 + f32::EPSILON * 4096.0);
        let plain = a * a + b;
        let fused = libm::fmaf(a, a, b);
        assert_ne!(plain.to_bits(), fused.to_bits());
        let v4 = f32x4::splat(a).madd(f32x4::splat(a), f32x4::splat(b));
        let v8 = f32x8::splat(a).madd(f32x8::splat(a), f32x8::splat(b));
        let wide_fuses = cfg!(any(
            target_feature = "fma",
            all(target_arch = "aarch64", target_feature = "neon")
        ));
        let want = if cfg!(feature = "deterministic") || !wide_fuses {
            plain
        } else {
            fused
        };
        for x in v4.to_array().into_iter().chain(v8.to_array()) {
            assert_eq!(x.to_bits(), want.to_bits());
        }
        assert_eq!(a.madd(a, b).to_bits(), plain.to_bits());
        // And always `wide`'s own `mul_add` without the feature.
        if !cfg!(feature = "deterministic") {
            let w = f32x4::splat(a).mul_add(f32x4::splat(a), f32x4::splat(b));
            assert_eq!(
                v4.to_array().map(f32::to_bits),
                w.to_array().map(f32::to_bits)
            );
        }
    }

    /// Under `deterministic` the sign of a zero result and the NaN rule are
    /// the x86 ones on every target.
    #[test]
    fn max_min_of_zeros() {
        let (p, n) = (0.0f32, -0.0f32);
        let v = |x: f32| f32x4::splat(x);
        let bits4 = |x: f32x4| x.to_array()[0].to_bits();
        let bits8 = |x: f32x8| x.to_array()[7].to_bits();
        let v8 = |x: f32| f32x8::splat(x);
        if cfg!(any(feature = "deterministic", target_feature = "sse")) {
            for (a, b) in [(p, n), (n, p)] {
                // Lanes: the second operand on ties.
                assert_eq!(bits4(v(a).max_num(v(b))), b.to_bits());
                assert_eq!(bits4(v(a).min_num(v(b))), b.to_bits());
                assert_eq!(bits4(v(a).max_gt(v(b))), b.to_bits());
                assert_eq!(bits4(v(a).min_lt(v(b))), b.to_bits());
                assert_eq!(bits8(v8(a).max_num(v8(b))), b.to_bits());
                assert_eq!(bits8(v8(a).min_lt(v8(b))), b.to_bits());
            }
            // NaN: `*_num` ignore it; `*_gt`/`*_lt` return the second operand.
            assert_eq!(v(f32::NAN).max_num(v(2.0)).to_array()[0], 2.0);
            assert_eq!(v(2.0).max_num(v(f32::NAN)).to_array()[0], 2.0);
            assert_eq!(v(f32::NAN).min_num(v(2.0)).to_array()[0], 2.0);
            assert!(v(2.0).max_gt(v(f32::NAN)).to_array()[0].is_nan());
            assert_eq!(v(f32::NAN).min_lt(v(2.0)).to_array()[0], 2.0);
        }
        if cfg!(feature = "deterministic") {
            // Scalars: the first operand on ties.
            for (a, b) in [(p, n), (n, p)] {
                assert_eq!(a.max_num(b).to_bits(), a.to_bits());
                assert_eq!(a.min_num(b).to_bits(), a.to_bits());
            }
            assert_eq!(f32::NAN.max_num(2.0), 2.0);
            assert_eq!(2.0f32.min_num(f32::NAN), 2.0);
        }
        // Both builds: `*_gt`/`*_lt` on scalars.
        assert_eq!(p.max_gt(n).to_bits(), n.to_bits());
        assert_eq!(n.min_lt(p).to_bits(), p.to_bits());
        assert_eq!(3.0f32.max_num(-1.0), 3.0);
        assert_eq!(3.0f32.min_num(-1.0), -1.0);
    }
}
