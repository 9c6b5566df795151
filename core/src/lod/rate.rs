//! Update-rate LOD: characters evaluated every 1st, 2nd, 4th or 8th frame,
//! interpolated in between, within a budget of full evaluations per frame.
//!
//! # Schedule
//!
//! Every character has a *home slot* `h = character mod 8` and a period
//! `P` in {1, 2, 4, 8} frames. It is evaluated at frame `f` exactly when
//! `f mod P == h mod P` ([`is_due`]), so its evaluations stay on the same
//! frames whatever its period becomes, and a change of period takes effect
//! at once: the next evaluation is at most `P` frames away.
//!
//! [`plan`] chooses the periods from each character's importance (a
//! caller's number, e.g. the negated distance to the camera): the
//! [`RateTiers`] thresholds give each character its wished period, then,
//! while some frame of the 8-frame cycle would evaluate more characters
//! than the budget, the least important characters touching such a frame
//! have their period doubled. Doubling only removes frames, so the loop
//! ends; with every period at 8 each frame evaluates the characters of one
//! home slot, at most `ceil(n / 8)`, so every budget of at least that is
//! met. The result: **no frame evaluates more than the budget, the most
//! important characters keep the shortest periods, and each character is
//! evaluated at least once every `P` frames**. `plan` is a pure function
//! of its inputs (deterministic, single-threaded), so a crowd's results do
//! not depend on its thread count.
//!
//! # Interpolation
//!
//! A character evaluated at frame `u` with period `P` is evaluated at the
//! clip times of frame `u + P` (they are known ahead), and the frames in
//! between interpolate from its pose at `u` to that one with
//! `alpha = (f − u) / P`: [`interpolate_poses`] lerps translations and
//! scales and nlerps rotations of local poses (then FK runs as usual),
//! [`interpolate_models`] lerps model matrices (no FK, but the matrices
//! are not rigid in between). Both have scalar twins in
//! [`reference`](mod@reference).

use wide::f32x4;

use crate::error::Error;
use crate::math::Mat4;
use crate::soa::{check_len, SoaTransform};

/// The longest period, in frames (the cycle length of the schedule).
pub const MAX_PERIOD: u8 = 8;

/// The periods a character can have, shortest first.
pub const PERIODS: [u8; 4] = [1, 2, 4, 8];

/// Importance thresholds of the wished periods: importance `>= full` gets
/// period 1, `>= half` period 2, `>= quarter` period 4, anything lower 8.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateTiers {
    /// Least importance evaluated every frame.
    pub full: f32,
    /// Least importance evaluated every 2nd frame.
    pub half: f32,
    /// Least importance evaluated every 4th frame.
    pub quarter: f32,
}

impl RateTiers {
    /// The wished period of a character of importance `importance`.
    #[inline]
    #[must_use]
    pub fn period(&self, importance: f32) -> u8 {
        if importance >= self.full {
            1
        } else if importance >= self.half {
            2
        } else if importance >= self.quarter {
            4
        } else {
            8
        }
    }

    fn validate(&self) -> Result<(), Error> {
        let ok = [self.full, self.half, self.quarter]
            .iter()
            .all(|v| !v.is_nan())
            && self.full >= self.half
            && self.half >= self.quarter;
        if ok {
            Ok(())
        } else {
            Err(Error::InvalidParameter {
                what: "rate tiers must be numbers with full >= half >= quarter",
            })
        }
    }
}

/// What [`plan`] chose.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlanReport {
    /// Characters at each period of [`PERIODS`].
    pub per_period: [usize; 4],
    /// Evaluations at each frame of the cycle (`frame mod 8`).
    pub loads: [usize; 8],
    /// Characters whose period was lengthened to meet the budget.
    pub demoted: usize,
}

impl PlanReport {
    /// The most evaluations of any frame (at most the budget).
    #[must_use]
    pub fn peak(&self) -> usize {
        self.loads.iter().copied().max().unwrap_or(0)
    }
}

/// The home slot of `character`: the frames `f` with `f mod 8` equal to
/// it are the ones it is evaluated at with period 8.
#[inline]
#[must_use]
pub fn home_slot(character: usize) -> u8 {
    (character % MAX_PERIOD as usize) as u8
}

/// Whether `character` with period `period` (1, 2, 4 or 8) is evaluated at
/// `frame`: `frame mod period == home_slot(character) mod period`. Any
/// other period counts as 8.
#[inline]
#[must_use]
pub fn is_due(frame: u64, character: usize, period: u8) -> bool {
    let p = period_or_max(period) as u64;
    frame % p == home_slot(character) as u64 % p
}

/// Frames since `character`'s last evaluation at or before `frame` under
/// period `period`: `0 ..= period − 1` (0 when it is due).
#[inline]
#[must_use]
pub fn frames_since_due(frame: u64, character: usize, period: u8) -> u8 {
    let p = period_or_max(period) as u64;
    ((frame + p * 8 - home_slot(character) as u64 % p) % p) as u8
}

#[inline]
fn period_or_max(period: u8) -> u8 {
    match period {
        1 | 2 | 4 => period,
        _ => MAX_PERIOD,
    }
}

#[inline]
fn slot_index(period: u8) -> usize {
    match period {
        1 => 0,
        2 => 1,
        4 => 2,
        _ => 3,
    }
}

/// Chooses each character's period (see the [module docs](self)).
///
/// `importance[i]` is character `i`'s importance (higher: evaluated more
/// often); `order` is scratch of the same length (on return it holds the
/// characters from least to most important, ties by descending index);
/// `periods` receives each character's period. `budget` is the most
/// characters evaluated in any frame. Time O(n log n) (one sort of
/// `order`), no allocation.
///
/// # Errors
/// [`Error::BadLength`] (`order` or `periods` not `importance.len()`
/// long), [`Error::NonFinite`] (an importance is NaN),
/// [`Error::InvalidParameter`] (tiers not ordered, `budget` below
/// `ceil(n / 8)`, more than `u32::MAX` characters). Outputs are
/// unspecified on error.
pub fn plan(
    importance: &[f32],
    tiers: &RateTiers,
    budget: usize,
    order: &mut [u32],
    periods: &mut [u8],
) -> Result<PlanReport, Error> {
    let n = importance.len();
    check_len("rate order scratch", n, order.len())?;
    check_len("periods", n, periods.len())?;
    tiers.validate()?;
    if u32::try_from(n).is_err() {
        return Err(Error::InvalidParameter {
            what: "more than u32::MAX characters",
        });
    }
    if budget < n.div_ceil(MAX_PERIOD as usize) {
        return Err(Error::InvalidParameter {
            what: "rate budget below ceil(characters / 8)",
        });
    }
    if importance.iter().any(|v| v.is_nan()) {
        return Err(Error::NonFinite { what: "importance" });
    }
    // counts[s][c]: characters of period PERIODS[s] whose home slot is c
    // modulo that period.
    let mut counts = [[0usize; 8]; 4];
    for (i, (&imp, p)) in importance.iter().zip(periods.iter_mut()).enumerate() {
        *p = tiers.period(imp);
        counts[slot_index(*p)][home_slot(i) as usize % *p as usize] += 1;
    }
    let loads = |counts: &[[usize; 8]; 4]| -> [usize; 8] {
        core::array::from_fn(|r| counts[0][0] + counts[1][r % 2] + counts[2][r % 4] + counts[3][r])
    };
    let mut load = loads(&counts);
    if load.iter().any(|&l| l > budget) {
        for (k, o) in order.iter_mut().enumerate() {
            *o = k as u32;
        }
        order.sort_unstable_by(|&a, &b| {
            importance[a as usize]
                .total_cmp(&importance[b as usize])
                .then(b.cmp(&a))
        });
        'passes: loop {
            let mut changed = false;
            for &i in order.iter() {
                let i = i as usize;
                let p = periods[i];
                let h = home_slot(i) as usize;
                if p >= MAX_PERIOD
                    || !(0..8).any(|r| r % p as usize == h % p as usize && load[r] > budget)
                {
                    continue;
                }
                counts[slot_index(p)][h % p as usize] -= 1;
                periods[i] = p * 2;
                counts[slot_index(p * 2)][h % (p as usize * 2)] += 1;
                load = loads(&counts);
                changed = true;
                if load.iter().all(|&l| l <= budget) {
                    break 'passes;
                }
            }
            if !changed {
                break;
            }
        }
    }
    let mut per_period = [0usize; 4];
    let mut demoted = 0usize;
    for (&p, &imp) in periods.iter().zip(importance) {
        per_period[slot_index(p)] += 1;
        demoted += usize::from(p != tiers.period(imp));
    }
    Ok(PlanReport {
        per_period,
        loads: load,
        demoted,
    })
}

/// Lists the characters evaluated at `frame` under `periods` into `out`
/// (ascending) and returns how many; a [`plan`] with budget `B` makes that
/// at most `B`.
///
/// # Errors
/// [`Error::BufferTooSmall`] when more characters are due than `out`
/// holds (its contents are then unspecified).
pub fn due(frame: u64, periods: &[u8], out: &mut [u32]) -> Result<usize, Error> {
    let mut k = 0usize;
    for (i, &p) in periods.iter().enumerate() {
        if is_due(frame, i, p) {
            let Some(slot) = out.get_mut(k) else {
                return Err(Error::BufferTooSmall {
                    needed: k + 1,
                    actual: out.len(),
                });
            };
            *slot = i as u32;
            k += 1;
        }
    }
    Ok(k)
}

fn check_alpha(alpha: f32) -> Result<(), Error> {
    if (0.0..=1.0).contains(&alpha) {
        Ok(())
    } else {
        Err(Error::InvalidParameter {
            what: "interpolation factor outside [0, 1]",
        })
    }
}

/// Interpolates two local poses by `alpha` (0 gives `prev`'s values, 1
/// `next`'s): translations and scales lerped, rotations nlerped with the
/// sign of `next` aligned to `prev` — the clip sampler's own
/// interpolation, lane-wise (SIMD).
///
/// # Errors
/// [`Error::BadLength`] unless `next` and `out` have `prev.len()` blocks;
/// [`Error::InvalidParameter`] for `alpha` outside `[0, 1]` or NaN. On
/// error `out` is untouched.
pub fn interpolate_poses(
    prev: &[SoaTransform],
    next: &[SoaTransform],
    alpha: f32,
    out: &mut [SoaTransform],
) -> Result<(), Error> {
    check_len("next pose", prev.len(), next.len())?;
    check_len("output", prev.len(), out.len())?;
    check_alpha(alpha)?;
    crate::clip::interpolate(prev, next, alpha, out);
    Ok(())
}

/// Lerps two arrays of model matrices element by element:
/// `out = prev · (1 − alpha) + next · alpha` (SIMD, one column per lane
/// vector).
///
/// # Errors
/// As [`interpolate_poses`].
pub fn interpolate_models(
    prev: &[Mat4],
    next: &[Mat4],
    alpha: f32,
    out: &mut [Mat4],
) -> Result<(), Error> {
    check_len("next models", prev.len(), next.len())?;
    check_len("output", prev.len(), out.len())?;
    check_alpha(alpha)?;
    let (wa, wb) = (f32x4::splat(1.0 - alpha), f32x4::splat(alpha));
    for ((o, a), b) in out.iter_mut().zip(prev).zip(next) {
        let (a, b) = (a.to_lanes(), b.to_lanes());
        *o = Mat4::from_lanes(core::array::from_fn(|c| a[c] * wa + b[c] * wb));
    }
    Ok(())
}

/// Scalar reference implementations: the readable specification.
pub mod reference {
    use super::{check_alpha, Error};
    use crate::math::{Mat4, Transform};
    use crate::soa::{check_len, SoaTransform, LANES};

    /// Scalar twin of [`super::interpolate_poses`], joint by joint.
    ///
    /// # Errors
    /// As [`super::interpolate_poses`].
    pub fn interpolate_poses(
        prev: &[SoaTransform],
        next: &[SoaTransform],
        alpha: f32,
        out: &mut [SoaTransform],
    ) -> Result<(), Error> {
        check_len("next pose", prev.len(), next.len())?;
        check_len("output", prev.len(), out.len())?;
        check_alpha(alpha)?;
        for j in 0..out.len() * LANES {
            let (b, l) = (j / LANES, j % LANES);
            let (x, y) = (prev[b].get(l), next[b].get(l));
            let t = Transform {
                translation: x.translation.lerp(y.translation, alpha),
                rotation: x.rotation.nlerp(y.rotation, alpha),
                scale: x.scale.lerp(y.scale, alpha),
            };
            out[b].set(l, &t);
        }
        Ok(())
    }

    /// Scalar twin of [`super::interpolate_models`].
    ///
    /// # Errors
    /// As [`super::interpolate_poses`].
    pub fn interpolate_models(
        prev: &[Mat4],
        next: &[Mat4],
        alpha: f32,
        out: &mut [Mat4],
    ) -> Result<(), Error> {
        check_len("next models", prev.len(), next.len())?;
        check_len("output", prev.len(), out.len())?;
        check_alpha(alpha)?;
        for ((o, a), b) in out.iter_mut().zip(prev).zip(next) {
            for c in 0..4 {
                for r in 0..4 {
                    o.cols[c][r] = a.cols[c][r] * (1.0 - alpha) + b.cols[c][r] * alpha;
                }
            }
        }
        Ok(())
    }
}
