//! Keyframe curves with non-uniform key times.
//!
//! A [`Curve`] is a validated, zero-copy view over caller slices: key times
//! (seconds, finite, strictly increasing) and key values, one per key, or
//! for [`Interpolation::CubicSpline`] three per key in glTF's layout
//! (in-tangent, value, out-tangent). Key values are `f32`, `[f32; 2]`,
//! `[f32; 3]`, `[f32; 4]` or [`Quat`] ([`CurveValue`]).
//!
//! Sampling:
//! - [`Curve::sample`] finds the key interval by binary search, O(log n);
//! - [`Curve::sample_with`] starts from a caller-held [`Cursor`] (a plain
//!   `Copy` value) and steps to the neighbouring intervals, O(1) amortised
//!   for playback forwards or backwards; a jump of more than a few keys
//!   falls back to binary search. Both give the same bits for the same `t`.
//! - [`sample4`] samples four float curves in `f32x4` lanes (each at its own
//!   time), [`sample_many`] a slice of float curves at one time, four at a
//!   time; [`reference`](mod@reference) holds their scalar twins (agreeing within 1e-5
//!   relative).
//!
//! Times before the first key give the first key, times after the last key
//! the last key, and NaN the first key: looping and ping-pong belong to the
//! player that computes `t`. Within the interval `[t_i, t_i+1)`,
//! `u = (t − t_i)/(t_i+1 − t_i)` and `Δ = t_i+1 − t_i`:
//!
//! | mode | value |
//! | --- | --- |
//! | `Step` | `p_i` |
//! | `Linear` | `(1 − u)·p_i + u·p_i+1`; rotations: the same along the shorter arc, normalised (nlerp) |
//! | `Slerp` (rotations only) | spherical interpolation along the shorter arc (glTF's LINEAR for rotations) |
//! | `CubicSpline` | glTF's CUBICSPLINE exactly: `h00·p_i + h10·Δ·b_i + h01·p_i+1 + h11·Δ·a_i+1` with out-tangent `b_i`, in-tangent `a_i+1` per second ([`hermite_basis`]); rotations component-wise, then normalised |
//! | `Cardinal { tension }` | the same Hermite form with tangents from the neighbours: `m_k = (1 − tension)·(p_k+1 − p_k−1)/(t_k+1 − t_k−1)`, one-sided `(p_1 − p_0)/(t_1 − t_0)` and `(p_n−1 − p_n−2)/(t_n−1 − t_n−2)` at the ends (times `1 − tension`); tension 0 is Catmull-Rom. Rotations: the squad-style Hermite of the same centred differences of logarithms, C¹ across keys |
//!
//! Every rotation a curve returns has unit length (keys are normalised on
//! the way out). Nothing here allocates or panics; [`Curve::new`] rejects
//! bad input once.

mod value;

#[cfg(test)]
mod tests;

use wide::f32x4;

use crate::error::Error;
use crate::fp::Fp;
#[cfg(doc)]
use crate::math::Quat;

use value::detail::Neighbours;
use value::detail::Ops;
pub use value::{hermite_basis, CurveValue};

/// How a curve interpolates between keys. See the [module](self) table.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum Interpolation {
    /// Hold each key until the next one (glTF STEP).
    Step,
    /// Linear; nlerp along the shorter arc for rotations.
    Linear,
    /// Spherical linear interpolation along the shorter arc; rotations only.
    Slerp,
    /// Cubic Hermite with per-key in- and out-tangents in glTF's
    /// CUBICSPLINE layout (three values per key, tangents per second).
    CubicSpline,
    /// Cardinal spline: Hermite with tangents from neighbouring keys.
    Cardinal {
        /// In `[-1, 1]`: 0 is Catmull-Rom, 1 gives zero tangents, negative
        /// values steeper ones.
        tension: f32,
    },
}

impl Interpolation {
    /// Catmull-Rom: [`Interpolation::Cardinal`] with tension 0.
    pub const CATMULL_ROM: Interpolation = Interpolation::Cardinal { tension: 0.0 };
}

/// A keyframe curve: a validated view over caller-owned key slices.
///
/// `Copy`, two slices and the mode; build it once per asset with
/// [`Curve::new`] and sample it every frame.
#[derive(Clone, Copy, Debug)]
pub struct Curve<'a, V: CurveValue> {
    times: &'a [f32],
    values: &'a [V],
    interpolation: Interpolation,
}

/// Where a caller's playback stands on one curve: the key interval of the
/// last sample. A plain `Copy` value, one per curve and playing instance;
/// [`Cursor::new`] (or `Default`) starts at the first interval. A cursor
/// used with another curve than the one it came from is still safe and
/// correct, only slower for that call.
///
/// `#[repr(transparent)]` over the key index, so a C binding can hold
/// cursors as `size_t`s: every value is a valid cursor.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(transparent)]
pub struct Cursor {
    segment: usize,
}

impl Cursor {
    /// A cursor at the first key interval.
    #[inline]
    #[must_use]
    pub const fn new() -> Self {
        Cursor { segment: 0 }
    }

    /// A cursor at the interval that starts at key `key` (any value is
    /// safe: one past the curve is found again by search).
    #[inline]
    #[must_use]
    pub const fn at(key: usize) -> Self {
        Cursor { segment: key }
    }

    /// Index of the key that starts the interval of the last sample
    /// (0 before the first sample).
    #[inline]
    #[must_use]
    pub const fn key(&self) -> usize {
        self.segment
    }
}

/// How many intervals the cursor steps before it falls back to binary
/// search: playback at any frame rate above the key rate moves by one at
/// most, and a few steps are cheaper than a search over a long curve.
const CURSOR_STEPS: usize = 4;

/// Keys a [`partition`] search leaves to a count rather than halving
/// further.
const COUNT_RUN: usize = 16;

/// The number of `times` at or before `t` (`times` increasing): the same
/// index as `times.partition_point(|&k| k <= t)`.
///
/// A binary search is a chain of dependent loads and compares, one per
/// halving; this halves (branch-free) only until [`COUNT_RUN`] keys are
/// left and counts those, compares that do not wait on each other and
/// that the compiler runs in vector lanes. Still O(log n).
#[inline]
pub(crate) fn partition(times: &[f32], t: f32) -> usize {
    let mut base = 0;
    let mut size = times.len();
    // The answer lies in base..=base + size: keys before `base` are <= t,
    // keys from `base + size` on are > t.
    while size > COUNT_RUN {
        let half = size / 2;
        let mid = base + half;
        if times.get(mid).is_some_and(|&k| k <= t) {
            base = mid;
        }
        size -= half;
    }
    let run = times.get(base..base + size).unwrap_or(&[]);
    // 32-bit counts: the same lane width as the keys.
    base + run.iter().map(|&k| u32::from(k <= t)).sum::<u32>() as usize
}

/// Where a time falls on a curve.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Loc {
    /// Clamped (or a one-key curve): exactly key `k`.
    Key(usize),
    /// Inside interval `[t_i, t_i+1)` at `u` in `[0, 1]`.
    Segment(usize, f32),
}

impl<'a, V: CurveValue> Curve<'a, V> {
    /// A curve over `times` (seconds) and `values`.
    ///
    /// `values` holds one key value per time, or for
    /// [`Interpolation::CubicSpline`] three per time in glTF's order
    /// (in-tangent, value, out-tangent; tangents per second). Nothing is
    /// copied.
    ///
    /// # Errors
    /// - [`Error::InvalidParameter`]: no keys; times not strictly
    ///   increasing; the span from first to last key overflows `f32`;
    ///   `Slerp` on non-rotation keys; tension outside `[-1, 1]`; a rotation
    ///   key of length below 1e-6 (or whose square overflows).
    /// - [`Error::NonFinite`]: a NaN or infinite time (`"key time"`), value
    ///   (`"key value"`), tangent (`"key tangent"`) or tension
    ///   (`"tension"`).
    /// - [`Error::BadLength`]: `values` is not one (or three) per time.
    pub fn new(
        times: &'a [f32],
        values: &'a [V],
        interpolation: Interpolation,
    ) -> Result<Self, Error> {
        match interpolation {
            Interpolation::Slerp if !V::ROTATION => {
                return Err(Error::InvalidParameter {
                    what: "slerp needs rotation (Quat) keys",
                })
            }
            Interpolation::Cardinal { tension } => {
                if !tension.is_finite() {
                    return Err(Error::NonFinite { what: "tension" });
                }
                if !(-1.0..=1.0).contains(&tension) {
                    return Err(Error::InvalidParameter {
                        what: "tension must be in [-1, 1]",
                    });
                }
            }
            _ => {}
        }
        let (Some(&first), Some(&last)) = (times.first(), times.last()) else {
            return Err(Error::InvalidParameter {
                what: "a curve needs at least one key",
            });
        };
        if times.iter().any(|t| !t.is_finite()) {
            return Err(Error::NonFinite { what: "key time" });
        }
        if times.windows(2).any(|w| w[0] >= w[1]) {
            return Err(Error::InvalidParameter {
                what: "key times must be strictly increasing",
            });
        }
        // Every difference of two key times is then finite too.
        if !(last - first).is_finite() {
            return Err(Error::InvalidParameter {
                what: "key times must span less than f32::MAX",
            });
        }
        let cubic = interpolation == Interpolation::CubicSpline;
        let per_key = if cubic { 3 } else { 1 };
        let expected = times.len().saturating_mul(per_key);
        if values.len() != expected {
            return Err(Error::BadLength {
                buffer: "key values",
                expected,
                actual: values.len(),
            });
        }
        if cubic {
            for key in values.chunks_exact(3) {
                if let [a, v, b] = key {
                    v.check_key()?;
                    if !a.finite() || !b.finite() {
                        return Err(Error::NonFinite {
                            what: "key tangent",
                        });
                    }
                }
            }
        } else {
            values.iter().try_for_each(Ops::check_key)?;
        }
        Ok(Curve {
            times,
            values,
            interpolation,
        })
    }

    /// A curve over slices that already passed every check of
    /// [`Curve::new`] (a validated track container, or keys decoded from
    /// one): sampling relies on them, so this stays private to the crate.
    #[inline]
    #[must_use]
    pub(crate) fn from_validated(
        times: &'a [f32],
        values: &'a [V],
        interpolation: Interpolation,
    ) -> Self {
        debug_assert!(Curve::new(times, values, interpolation).is_ok());
        Curve {
            times,
            values,
            interpolation,
        }
    }

    /// The key times, in seconds.
    #[inline]
    #[must_use]
    pub fn times(&self) -> &'a [f32] {
        self.times
    }

    /// The key values (three per key for `CubicSpline`).
    #[inline]
    #[must_use]
    pub fn values(&self) -> &'a [V] {
        self.values
    }

    /// The interpolation mode.
    #[inline]
    #[must_use]
    pub fn interpolation(&self) -> Interpolation {
        self.interpolation
    }

    /// Number of keys (at least 1).
    #[inline]
    #[must_use]
    pub fn len(&self) -> usize {
        self.times.len()
    }

    /// Always false: a curve has at least one key.
    #[inline]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }

    /// Time of the first key and of the last key, in seconds.
    #[inline]
    #[must_use]
    pub fn range(&self) -> (f32, f32) {
        (self.times[0], self.times[self.times.len() - 1])
    }

    /// Where `t` falls, by binary search (what [`Curve::sample`] evaluates).
    #[inline]
    pub(crate) fn find(&self, t: f32) -> Loc {
        match self.clamp(t) {
            Some(k) => Loc::Key(k),
            None => self.search(t),
        }
    }

    /// The value at time `t` (seconds), by binary search over the keys.
    /// Times outside the keys (and NaN) clamp as the [module](self) says.
    #[inline]
    #[must_use]
    pub fn sample(&self, t: f32) -> V {
        self.eval(self.find(t))
    }

    /// The value at time `t`, starting the key search at `cursor` and
    /// leaving it at the interval of `t`. The same bits as
    /// [`Curve::sample`]; O(1) when `t` is within a few keys of the last
    /// sample, O(log n) otherwise.
    #[inline]
    #[must_use]
    pub fn sample_with(&self, cursor: &mut Cursor, t: f32) -> V {
        self.eval(self.locate(cursor, t))
    }

    /// `Some(key)` when `t` clamps to a key (before the first key, NaN,
    /// after the last key, or a one-key curve).
    #[inline]
    fn clamp(&self, t: f32) -> Option<usize> {
        let n = self.times.len();
        if t > self.times[0] {
            (t >= self.times[n - 1]).then_some(n - 1)
        } else {
            // At or before the first key, or NaN.
            Some(0)
        }
    }

    /// The interval holding `t`, which lies strictly between the first and
    /// last keys (so there are two keys or more).
    #[inline]
    fn search(&self, t: f32) -> Loc {
        // t > times[0] gives at least 1, t < times[n-1] at most n - 1.
        let i = partition(self.times, t) - 1;
        self.segment(i, t)
    }

    /// `Loc::Segment` for interval `i`, which holds `t`.
    #[inline]
    fn segment(&self, i: usize, t: f32) -> Loc {
        let (t0, t1) = (self.times[i], self.times[i + 1]);
        // Rounding can only push u up to 1, never past it.
        let u = ((t - t0) / (t1 - t0)).min(1.0);
        Loc::Segment(i, u)
    }

    /// [`Curve::search`] that starts at the cursor and updates it.
    #[inline]
    pub(crate) fn locate(&self, cursor: &mut Cursor, t: f32) -> Loc {
        if let Some(k) = self.clamp(t) {
            cursor.segment = k.min(self.times.len().saturating_sub(2));
            return Loc::Key(k);
        }
        let times = self.times;
        // Here n >= 2; a cursor from a longer curve is brought in range.
        let mut i = cursor.segment.min(times.len() - 2);
        let found = if t < times[i] {
            // times[0] < t < times[i], so i > 0 at every step.
            (0..CURSOR_STEPS).any(|_| {
                i -= 1;
                times[i] <= t
            })
        } else {
            // times[i] <= t < times[n-1], so i + 1 <= n - 1 at every step.
            (0..CURSOR_STEPS).any(|_| {
                if t < times[i + 1] {
                    true
                } else {
                    i += 1;
                    false
                }
            })
        };
        let loc = if found {
            self.segment(i, t)
        } else {
            self.search(t)
        };
        if let Loc::Segment(s, _) = loc {
            cursor.segment = s;
        }
        loc
    }

    /// Key value `k`.
    #[inline]
    fn value(&self, k: usize) -> V {
        match self.interpolation {
            Interpolation::CubicSpline => self.values[3 * k + 1],
            _ => self.values[k],
        }
    }

    /// The keys around interval `i` for cardinal tangents.
    #[inline]
    fn neighbours(&self, i: usize, tension: f32) -> Neighbours<V> {
        let key = |k: usize| (self.times[k], self.values[k]);
        let last = self.times.len() - 1;
        Neighbours {
            prev: key(i.saturating_sub(1)),
            k0: key(i),
            k1: key(i + 1),
            next: key((i + 2).min(last)),
            scale: 1.0 - tension,
        }
    }

    /// The CUBICSPLINE tangents of interval `i` scaled by its length:
    /// key `i`'s out-tangent and key `i + 1`'s in-tangent.
    #[inline]
    fn spline_tangents(&self, i: usize) -> (V, V) {
        let dt = self.times[i + 1] - self.times[i];
        let out = self.values[3 * i + 2];
        let inn = self.values[3 * i + 3];
        (
            V::weighted(out, dt, out, 0.0),
            V::weighted(inn, dt, inn, 0.0),
        )
    }

    /// The value at `loc`, a location on this curve's keys.
    #[inline]
    pub(crate) fn eval(&self, loc: Loc) -> V {
        let (i, u) = match loc {
            Loc::Key(k) => return self.value(k).key(),
            Loc::Segment(i, u) => (i, u),
        };
        match self.interpolation {
            Interpolation::Step => self.value(i).key(),
            Interpolation::Linear => V::linear(self.value(i), self.value(i + 1), u),
            _ => self.eval_curved(i, u),
        }
    }

    /// [`Curve::eval`] inside interval `i` for the modes that are more
    /// than a blend of two keys: kept out of line so that the step and
    /// linear paths stay small enough to inline into the sampler.
    #[inline(never)]
    fn eval_curved(&self, i: usize, u: f32) -> V {
        match self.interpolation {
            Interpolation::Slerp => V::slerp(self.value(i), self.value(i + 1), u),
            Interpolation::CubicSpline => {
                let (a, b) = self.spline_tangents(i);
                V::hermite(hermite_basis(u), self.value(i), a, self.value(i + 1), b)
            }
            Interpolation::Cardinal { tension } => V::cardinal(&self.neighbours(i, tension), u),
            Interpolation::Step => self.value(i).key(),
            Interpolation::Linear => V::linear(self.value(i), self.value(i + 1), u),
        }
    }
}

/// One lane's share of [`sample4`]: `p(u) = p0 + u·(c1 + u·(c2 + u·c3))`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LaneTerms {
    u: f32,
    p0: f32,
    p1: f32,
    a: f32,
    b: f32,
    cubic: bool,
}

impl Curve<'_, f32> {
    /// The lane inputs for time `t`, moving the cursor as `sample_with`.
    #[inline]
    pub(crate) fn lane_terms(&self, cursor: &mut Cursor, t: f32) -> LaneTerms {
        self.lane_terms_at(self.locate(cursor, t))
    }

    /// The lane inputs at `loc`, a location on this curve's keys.
    #[inline]
    pub(crate) fn lane_terms_at(&self, loc: Loc) -> LaneTerms {
        let values = self.values;
        lane_terms_of(self.times, self.interpolation, loc, |s| {
            values.get(s).copied().unwrap_or(0.0)
        })
    }
}

/// The lane inputs at `loc` on float keys at `times` whose stored value
/// `s` (flattened as a curve's values: three per key for CUBICSPLINE) is
/// `value(s)`: what [`Curve::lane_terms_at`] computes, for keys that are
/// decoded on the way (a track set's quantized or vector channels) rather
/// than held in a slice. `times` and the values passed every check of
/// [`Curve::new`].
#[inline]
pub(crate) fn lane_terms_of(
    times: &[f32],
    interpolation: Interpolation,
    loc: Loc,
    value: impl Fn(usize) -> f32,
) -> LaneTerms {
    let cubic = interpolation == Interpolation::CubicSpline;
    let key = |k: usize| if cubic { value(3 * k + 1) } else { value(k) };
    let time = |k: usize| times.get(k).copied().unwrap_or(0.0);
    let hold = |p: f32| LaneTerms {
        p0: p,
        p1: p,
        ..LaneTerms::default()
    };
    let (i, u) = match loc {
        Loc::Key(k) => return hold(key(k)),
        Loc::Segment(i, u) => (i, u),
    };
    let (p0, p1) = (key(i), key(i + 1));
    let (a, b, cubic) = match interpolation {
        Interpolation::Step => return hold(p0),
        Interpolation::CubicSpline => {
            // Curve::spline_tangents: the tangents scaled by the interval.
            let dt = time(i + 1) - time(i);
            let (out, inn) = (value(3 * i + 2), value(3 * i + 3));
            (
                f32::weighted(out, dt, out, 0.0),
                f32::weighted(inn, dt, inn, 0.0),
                true,
            )
        }
        Interpolation::Cardinal { tension } => {
            // Curve::neighbours, then the float tangents.
            let last = times.len().saturating_sub(1);
            let near = |k: usize| (time(k), value(k));
            let (a, b) = f32::cardinal_tangents(&Neighbours {
                prev: near(i.saturating_sub(1)),
                k0: near(i),
                k1: near(i + 1),
                next: near((i + 2).min(last)),
                scale: 1.0 - tension,
            });
            (a, b, true)
        }
        // Linear (Slerp is refused for floats at construction).
        _ => (0.0, 0.0, false),
    };
    LaneTerms {
        u,
        p0,
        p1,
        a,
        b,
        cubic,
    }
}

/// Four float curves sampled in `f32x4` lanes, lane `l` at time `t[l]`
/// with `cursors[l]`: the key search runs per lane (it is a data-dependent
/// walk), the interpolation in lanes as a cubic in Horner form, with
/// multiply-adds that the `deterministic` feature pins.
///
/// Lane `l` equals `curves[l].sample_with(&mut cursors[l], t[l])` within
/// 1e-5 relative ([`reference::sample4`]); steps, clamped times and keys
/// hit exactly give the key's bits.
#[must_use]
pub fn sample4(curves: &[Curve<'_, f32>; 4], cursors: &mut [Cursor; 4], t: f32x4) -> f32x4 {
    let t = t.to_array();
    let mut terms = [LaneTerms::default(); 4];
    for l in 0..4 {
        terms[l] = curves[l].lane_terms(&mut cursors[l], t[l]);
    }
    eval_lanes(&terms)
}

/// The interpolation half of [`sample4`]: four lanes' terms evaluated as a
/// cubic in Horner form (also what [`super::store`] runs its lanes through).
#[inline]
#[must_use]
pub(crate) fn eval_lanes(terms: &[LaneTerms; 4]) -> f32x4 {
    let (mut u, mut p0, mut p1, mut a, mut b) =
        ([0.0f32; 4], [0.0; 4], [0.0; 4], [0.0; 4], [0.0; 4]);
    let mut cubic = [0.0f32; 4];
    for (l, x) in terms.iter().enumerate() {
        (u[l], p0[l], p1[l], a[l], b[l]) = (x.u, x.p0, x.p1, x.a, x.b);
        // All ones selects the cubic terms.
        cubic[l] = f32::from_bits(if x.cubic { u32::MAX } else { 0 });
    }
    let (u, p0, p1, a, b) = (
        f32x4::new(u),
        f32x4::new(p0),
        f32x4::new(p1),
        f32x4::new(a),
        f32x4::new(b),
    );
    let cubic = f32x4::new(cubic);
    let d = p1 - p0;
    // Hermite in powers of u: p0 + a·u + (3d − 2a − b)·u² + (a + b − 2d)·u³.
    let three = f32x4::splat(3.0);
    let two = f32x4::splat(2.0);
    let c1 = cubic.bitselect(a, d);
    let c2 = cubic.bitselect(d.madd(three, -(a.madd(two, b))), f32x4::ZERO);
    let c3 = cubic.bitselect(d.madd(-two, a + b), f32x4::ZERO);
    c3.madd(u, c2).madd(u, c1).madd(u, p0)
}

/// Every curve in `curves` sampled at time `t` into `out`, four at a time
/// in lanes ([`sample4`]); a last group of fewer than four fills its spare
/// lanes with its last curve. `cursors[i]` belongs to `curves[i]`.
///
/// # Errors
/// [`Error::BadLength`] when `cursors` (`"cursors"`) or `out` (`"output"`)
/// is not as long as `curves`; nothing is written then.
pub fn sample_many(
    curves: &[Curve<'_, f32>],
    cursors: &mut [Cursor],
    t: f32,
    out: &mut [f32],
) -> Result<(), Error> {
    check_many(curves.len(), cursors.len(), out.len())?;
    let tv = f32x4::splat(t);
    let (curves4, curves_rest) = curves.as_chunks::<4>();
    let (cursors4, cursors_rest) = cursors.as_chunks_mut::<4>();
    let (out4, out_rest) = out.as_chunks_mut::<4>();
    for ((c, k), o) in curves4.iter().zip(cursors4).zip(out4) {
        *o = sample4(c, k, tv).to_array();
    }
    if let Some(&last) = curves_rest.last() {
        let n = curves_rest.len();
        let lanes: [Curve<'_, f32>; 4] =
            core::array::from_fn(|l| curves_rest.get(l).copied().unwrap_or(last));
        let mut ks: [Cursor; 4] =
            core::array::from_fn(|l| cursors_rest.get(l).copied().unwrap_or_default());
        let v = sample4(&lanes, &mut ks, tv).to_array();
        for ((o, k), (v, kv)) in out_rest
            .iter_mut()
            .zip(cursors_rest.iter_mut())
            .zip(v.iter().zip(&ks))
            .take(n)
        {
            *o = *v;
            *k = *kv;
        }
    }
    Ok(())
}

/// The length check shared by [`sample_many`] and its twin.
fn check_many(curves: usize, cursors: usize, out: usize) -> Result<(), Error> {
    if cursors != curves {
        return Err(Error::BadLength {
            buffer: "cursors",
            expected: curves,
            actual: cursors,
        });
    }
    if out != curves {
        return Err(Error::BadLength {
            buffer: "output",
            expected: curves,
            actual: out,
        });
    }
    Ok(())
}

/// Scalar twins of the lane samplers: the readable specification.
pub mod reference {
    use super::{check_many, Cursor, Curve, Error};
    use wide::f32x4;

    /// Scalar twin of [`super::sample4`]: each lane by
    /// [`Curve::sample_with`].
    #[must_use]
    pub fn sample4(curves: &[Curve<'_, f32>; 4], cursors: &mut [Cursor; 4], t: f32x4) -> f32x4 {
        let t = t.to_array();
        let mut out = [0.0; 4];
        for (((o, c), k), &t) in out.iter_mut().zip(curves).zip(cursors).zip(&t) {
            *o = c.sample_with(k, t);
        }
        f32x4::new(out)
    }

    /// Scalar twin of [`super::sample_many`].
    ///
    /// # Errors
    /// As [`super::sample_many`].
    pub fn sample_many(
        curves: &[Curve<'_, f32>],
        cursors: &mut [Cursor],
        t: f32,
        out: &mut [f32],
    ) -> Result<(), Error> {
        check_many(curves.len(), cursors.len(), out.len())?;
        for ((c, k), o) in curves.iter().zip(cursors).zip(out) {
            *o = c.sample_with(k, t);
        }
        Ok(())
    }
}
