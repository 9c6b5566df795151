//! The decoder's arithmetic, public for the compressor.
//!
//! A compressor that measures its error must measure what the decoder will
//! produce, bit for bit: a rounding difference of one ulp in a lane's value
//! can move a vertex past the error bound the compressor promised. So the
//! formulas that turn stored bytes into values — dequantization with its
//! trend ([`ComponentDecode`], [`trend_factors`]), the clip unit
//! ([`unit_for_extent`]) and the rotation rebuilds ([`drop_w_rotation`],
//! [`smallest_three_rotation`]) — live here once, and both the decoders in
//! this crate and `sinew_std::compress` call them. The compressor's side of
//! the same conventions is here too: the trend's value per byte
//! ([`trend_slope`], [`trend_curve`], [`TREND_SCALE`], [`CURVE_SCALE`]), the
//! rate limit ([`MAX_QUANTIZED_BITS`]) and the smallest-three split
//! ([`smallest_three_split`]). Everything else about the container
//! (offsets, metadata bytes, bit packing) stays private to
//! [`crate::compressed`]; a compressor writes containers through
//! [`super::writer`].
//!
//! [`smallest_three_code`] and [`smallest_three_decode`] are the
//! smallest-three worked example of the format documentation (a fixed
//! range, no range reduction), kept here so the example stays executable.

use crate::fp::Fp;
use crate::math::Quat;

/// The largest quantized bit rate per component (codes stay exact in `f32`).
pub const MAX_QUANTIZED_BITS: u8 = 23;

/// Trend slope per frame in clip units per trend step: a lane's component
/// at local frame `i` of its segment is `dequantize(..) + trend_slope · i`
/// with `trend_slope = trend · unit · TREND_SCALE`.
pub const TREND_SCALE: f32 = 0.125;

/// Trend curvature per frame² in clip units per curvature step (see
/// [`trend_curve`]).
pub const CURVE_SCALE: f32 = 1.0 / 256.0;

const INV255: f32 = 1.0 / 255.0;

/// One lane component's decoding constants in one segment: the clip
/// constants `min, unit` (unit = clip extent / 255), and in units the
/// segment minimum `smin`, the code step `step = sext / (2^bits − 1)` and the
/// trend bytes `slope` and `curve` as floats.
///
/// [`ComponentDecode::value`] is the decoding formula. The compressor
/// simulates decoding with it, and both samplers perform the same IEEE
/// operations in the same order lane-wise, so what the compressor measures
/// is bit for bit what [`super::CompressedClip::sample`] produces.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ComponentDecode {
    /// Clip minimum.
    pub min: f32,
    /// Clip unit (extent / 255).
    pub unit: f32,
    /// Segment minimum, in units.
    pub smin: f32,
    /// Code step, in units (0 at 0 bits).
    pub step: f32,
    /// Trend slope byte.
    pub slope: f32,
    /// Trend curvature byte.
    pub curve: f32,
}

impl ComponentDecode {
    /// The constants of a component with clip constants `min, unit`,
    /// segment range bytes `smin, sext`, `bits` bits per code and trend
    /// bytes `d` (slope) and `k` (curvature).
    #[inline]
    #[must_use]
    pub fn new(min: f32, unit: f32, smin: u8, sext: u8, bits: u8, d: i8, k: i8) -> Self {
        ComponentDecode {
            min,
            unit,
            smin: f32::from(smin),
            step: f32::from(sext) * inv_max_code(bits),
            slope: f32::from(d),
            curve: f32::from(k),
        }
    }

    /// The value of code `q` at local frame `i` of the segment:
    /// `min + unit · (((smin + step · q) + slope · i/8) + curve · i²/256)`,
    /// in this order, with the trend factors of [`trend_factors`].
    #[inline]
    #[must_use]
    pub fn value(&self, q: u32, i: f32) -> f32 {
        let (tl, tl2) = trend_factors(i);
        self.min
            + self.unit
                * (((self.smin + self.step * q as f32) + self.slope * tl) + self.curve * tl2)
    }
}

/// The trend's factors at local frame `i`: `(i · TREND_SCALE, i² ·
/// CURVE_SCALE)`, each rounded once as every decoder computes them.
#[inline]
#[must_use]
pub fn trend_factors(i: f32) -> (f32, f32) {
    (TREND_SCALE * i, CURVE_SCALE * (i * i))
}

/// The per-frame slope in clip units of a component's trend slope byte `d`
/// in a clip with unit `unit` (for range searches; decoding uses
/// [`ComponentDecode::value`]).
#[inline]
#[must_use]
pub fn trend_slope(unit: f32, d: i8) -> f32 {
    f32::from(d) * unit * TREND_SCALE
}

/// The per-frame² curvature in clip units of a component's trend curvature
/// byte `k` (see [`trend_slope`]).
#[inline]
#[must_use]
pub fn trend_curve(unit: f32, k: i8) -> f32 {
    f32::from(k) * unit * CURVE_SCALE
}

/// `1 / (2^bits − 1)` for `bits` in `0..=23` (0 otherwise, and for 0 bits).
#[inline(always)]
pub(crate) fn inv_max_code(bits: u8) -> f32 {
    INV_MAX_CODE.get(usize::from(bits)).copied().unwrap_or(0.0)
}

/// `1 / (2^bits − 1)` for `bits` in `0..=23` (0 for 0 bits: one value).
pub(crate) const INV_MAX_CODE: [f32; MAX_QUANTIZED_BITS as usize + 1] = {
    let mut t = [0.0f32; MAX_QUANTIZED_BITS as usize + 1];
    let mut b = 1;
    while b < t.len() {
        t[b] = 1.0 / ((1u32 << b) - 1) as f32;
        b += 1;
    }
    t
};

/// The clip unit for a component spanning `ext ≥ 0`: `ext / 255`, rounded
/// up so that `min + 255 · unit ≥ min + ext`.
#[must_use]
pub fn unit_for_extent(min: f32, ext: f32) -> f32 {
    let mut u = ext * INV255;
    while u.is_finite() && min + 255.0 * u < min + ext {
        u = f32::from_bits(u.to_bits() + 1);
    }
    u
}

/// Rebuilds a rotation from x, y, z with `w = √max(0, 1 − x² − y² − z²)`.
#[inline]
#[must_use]
pub fn drop_w_rotation(x: f32, y: f32, z: f32) -> Quat {
    let w = crate::math::sqrt_f32((1.0 - (x * x + y * y + z * z)).max_num(0.0));
    Quat::new(x, y, z, w)
}

/// Rebuilds a rotation from the three kept components (in component order)
/// and the index `dropped` (0..=3, taken modulo 4) of the dropped largest one.
#[inline]
#[must_use]
pub fn smallest_three_rotation(dropped: u32, a: f32, b: f32, c: f32) -> Quat {
    let big = crate::math::sqrt_f32((1.0 - (a * a + b * b + c * c)).max_num(0.0));
    match dropped & 3 {
        0 => Quat::new(big, a, b, c),
        1 => Quat::new(a, big, b, c),
        2 => Quat::new(a, b, big, c),
        _ => Quat::new(a, b, c, big),
    }
}

/// The smallest-three split of `q`: the index of the largest-magnitude
/// component and the other three (in component order) of the quaternion
/// whose largest component is positive.
#[must_use]
pub fn smallest_three_split(q: Quat) -> (u32, [f32; 3]) {
    let c = q.to_array();
    let mut big = 0;
    for i in 1..4 {
        if c[i].abs() > c[big].abs() {
            big = i;
        }
    }
    let sign = if c[big] < 0.0 { -1.0 } else { 1.0 };
    let mut kept = [0.0; 3];
    let mut n = 0;
    for (i, v) in c.iter().enumerate() {
        if i != big {
            kept[n] = v * sign;
            n += 1;
        }
    }
    (big as u32, kept)
}

/// Quantizes a kept smallest-three component over the fixed range
/// `[−1/√2, 1/√2]` at `bits` bits: `round((c + 1/√2) / √2 · (2^bits − 1))`
/// (no range reduction; the documented worked example).
#[must_use]
pub fn smallest_three_code(c: f32, bits: u8) -> u32 {
    let max = ((1u64 << bits.min(31)) - 1) as f32;
    let h = core::f32::consts::FRAC_1_SQRT_2;
    libm::roundf(((c + h) / core::f32::consts::SQRT_2 * max).clamp(0.0, max)) as u32
}

/// The value of a code made by [`smallest_three_code`].
#[must_use]
pub fn smallest_three_decode(code: u32, bits: u8) -> f32 {
    let max = ((1u64 << bits.min(31)) - 1) as f32;
    code as f32 / max * core::f32::consts::SQRT_2 - core::f32::consts::FRAC_1_SQRT_2
}
