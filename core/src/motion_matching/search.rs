//! The searches: the weighted squared distance of a query to every
//! searchable frame, and the frame with the least.
//!
//! Every search takes a frame only when its cost is strictly below the
//! best so far or, at an equal cost, when it is a lower frame than the best
//! one, so of equal costs the lowest frame wins whatever order the
//! container stores frames in and the search visits them. All of them compute a frame's cost the same way, one f32
//! operation at a time in feature order (`d = q − x; c = c + d·d`, then the
//! frame's flag, 0 or +∞, added): the lane searches and the scalar
//! reference agree bit for bit, not just within a tolerance.
//!
//! The pruned search descends the box tree, children in order of their
//! lower bounds, and skips a box of frames when its lower bound is not
//! below the best cost so far. The bound is computed with the same
//! operations in the same order as the costs (`d = max(lo − q, q − hi, 0)`),
//! and rounding is monotonic, so for every frame inside the box the
//! rounded bound is at most the rounded cost: skipping never drops a frame
//! the brute force would take. A box whose bound equals the best cost may
//! still hold a lower frame at that cost, so it is visited.

use wide::f32x4;

use super::database::{Database, Match, SMALL_BOX};
use crate::error::Error;

/// Lane blocks in a leaf box.
const BLOCKS: usize = SMALL_BOX / 4;

/// The best frame so far: its cost starts at the search's bound, which a
/// frame must beat strictly.
#[derive(Clone, Copy, Debug)]
struct Best {
    frame: u32,
    cost: f32,
    found: bool,
}

impl Best {
    fn new(bound: f32) -> Self {
        Best {
            frame: u32::MAX,
            cost: bound,
            found: false,
        }
    }

    /// Takes `frame` if it costs less, or the same at a lower frame.
    #[inline(always)]
    fn offer(&mut self, frame: u32, cost: f32) {
        if cost < self.cost || (self.found && cost == self.cost && frame < self.frame) {
            self.frame = frame;
            self.cost = cost;
            self.found = true;
        }
    }

    /// True when a box with lower bound `lb` may hold a frame to take.
    #[inline(always)]
    fn may_hold(&self, lb: f32) -> bool {
        lb < self.cost || (self.found && lb == self.cost)
    }

    fn result(&self) -> Option<Match> {
        self.found.then_some(Match {
            frame: self.frame,
            cost: self.cost,
        })
    }
}

impl Database<'_> {
    /// The query's checks: its length and finite values; the bound not NaN.
    fn check_query(&self, query: &[f32], bound: f32) -> Result<(), Error> {
        crate::soa::check_len("query", self.feature_count, query.len())?;
        if query.iter().any(|q| !q.is_finite()) {
            return Err(Error::NonFinite { what: "query" });
        }
        if bound.is_nan() {
            return Err(Error::NonFinite {
                what: "search bound",
            });
        }
        Ok(())
    }

    /// The costs of the 16 slots of leaf `s`, slots 0-3, 4-7, 8-11 and
    /// 12-15 in the four vectors; with
    /// `cut`, `None` as soon as half the features already cost more than
    /// `cut` in every lane (the rest only adds, so none of them can win).
    #[inline(always)]
    fn small_box_costs(
        &self,
        query: &[f32],
        s: usize,
        cut: Option<f32>,
    ) -> Option<[f32x4; BLOCKS]> {
        let fc = self.feature_count;
        let first = s * BLOCKS;
        let rows = &self.features[first * fc..(first + BLOCKS) * fc];
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        let acc = if crate::cpu::avx2_kernels() {
            super::avx2::leaf_sums(rows, query, fc, cut)?
        } else {
            leaf_sums(rows, query, fc, cut)?
        };
        #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
        let acc = leaf_sums(rows, query, fc, cut)?;
        let bias = &self.bias[first..first + BLOCKS];
        Some([
            acc[0] + bias[0],
            acc[1] + bias[1],
            acc[2] + bias[2],
            acc[3] + bias[3],
        ])
    }

    /// Takes the best frame of leaf `s`: a cost below the best so far, or
    /// equal to it at a lower frame. `early` lets the leaf stop at half its
    /// features when nothing can win.
    #[inline(always)]
    fn scan_small_box(&self, query: &[f32], s: usize, best: &mut Best, early: bool) {
        let Some(costs) = self.small_box_costs(query, s, early.then_some(best.cost)) else {
            return;
        };
        let least = costs[0].min(costs[1]).min(costs[2]).min(costs[3]);
        if !least.simd_le(f32x4::splat(best.cost)).any() {
            return;
        }
        for (b, c) in costs.iter().enumerate() {
            for (l, &cost) in c.as_array().iter().enumerate() {
                best.offer(self.frame_in(s * SMALL_BOX + b * 4 + l), cost);
            }
        }
    }

    /// The frame with the least cost below `bound`, visiting every searched
    /// slot in lanes (the reference the pruned [`Self::search`] equals).
    /// `bound` is `f32::INFINITY` for a plain search, or the current
    /// frame's cost less a margin to keep playing it unless something is
    /// clearly better. `None` when no searchable frame costs less.
    ///
    /// # Errors
    /// [`Error::BadLength`] (query length), [`Error::NonFinite`] (a query
    /// value or the bound).
    pub fn search_brute(&self, query: &[f32], bound: f32) -> Result<Option<Match>, Error> {
        self.check_query(query, bound)?;
        let mut best = Best::new(bound);
        for s in 0..self.searched / SMALL_BOX {
            self.scan_small_box(query, s, &mut best, false);
        }
        Ok(best.result())
    }

    /// The lower bounds of the four boxes whose lanes start at `boxes`
    /// (`lo` then `hi`, one vector per feature each), or `None` as soon as
    /// half the features already bound every lane above `cut`.
    #[inline(always)]
    fn box_bounds(&self, boxes: &[f32x4], query: &[f32], cut: f32) -> Option<f32x4> {
        let fc = self.feature_count;
        let (lo, hi) = boxes.split_at(fc);
        let features = || query.iter().zip(lo).zip(hi);
        let mut acc = f32x4::ZERO;
        // `fast_max` is `maxps`: the bounds and the query hold no NaN (a
        // validated box is finite or empty, ±∞), so the NaN-choosing `max`
        // would only add instructions.
        let add = |acc: &mut f32x4, ((&x, &lo), &hi): ((&f32, &f32x4), &f32x4)| {
            let q = f32x4::splat(x);
            let d = (lo - q).fast_max(q - hi).fast_max(f32x4::ZERO);
            *acc += d * d;
        };
        let (a, b) = (fc / 4, fc / 2);
        features().take(a).for_each(|f| add(&mut acc, f));
        if !acc.simd_le(f32x4::splat(cut)).any() {
            return None;
        }
        features().take(b).skip(a).for_each(|f| add(&mut acc, f));
        if !acc.simd_le(f32x4::splat(cut)).any() {
            return None;
        }
        features().skip(b).for_each(|f| add(&mut acc, f));
        Some(acc)
    }

    /// The same frame and cost as [`Self::search_brute`], exactly, visiting
    /// only the boxes whose lower bound does not exceed the best cost so
    /// far: from the top of the box tree down, each box's four children in
    /// order of their bounds (the likeliest first, so the best cost falls
    /// early and prunes the rest), to leaves of 16 frames.
    ///
    /// # Errors
    /// As [`Self::search_brute`].
    pub fn search(&self, query: &[f32], bound: f32) -> Result<Option<Match>, Error> {
        self.check_query(query, bound)?;
        let mut best = Best::new(bound);
        self.descend(query, self.levels - 1, 0, &mut best);
        Ok(best.result())
    }

    /// Visits lane group `group` of tree level `level`: its four boxes in
    /// order of their lower bounds, while a box may hold a better frame.
    fn descend(&self, query: &[f32], level: usize, group: usize, best: &mut Best) {
        let fc2 = 2 * self.feature_count;
        let at = self.level_offset[level] as usize + group;
        let Some(boxes) = self.boxes.get(at * fc2..(at + 1) * fc2) else {
            return;
        };
        let Some(lb) = self.box_bounds(boxes, query, best.cost) else {
            return;
        };
        // The bound's bits (a non-negative float's bits order as the float
        // does) above the lane.
        let lb = lb.to_array();
        let mut keys: [u64; 4] =
            core::array::from_fn(|l| (u64::from(lb[l].to_bits()) << 2) | l as u64);
        sort4(&mut keys);
        for key in keys {
            if !best.may_hold(f32::from_bits((key >> 2) as u32)) {
                break;
            }
            let child = group * 4 + (key & 3) as usize;
            if level > 0 {
                self.descend(query, level - 1, child, best);
            } else if child < self.searched / SMALL_BOX {
                self.scan_small_box(query, child, best, true);
            }
        }
    }

    /// The cost of one frame (as every search computes it: +∞ for a frame
    /// a search may not return).
    ///
    /// # Errors
    /// As [`Self::search_brute`]; [`Error::InvalidParameter`] for a frame
    /// past the end.
    pub fn cost(&self, query: &[f32], frame: usize) -> Result<f32, Error> {
        self.check_query(query, f32::INFINITY)?;
        if frame >= self.frame_count {
            return Err(Error::InvalidParameter {
                what: "database frame is past the last frame",
            });
        }
        Ok(reference::frame_cost(self, query, frame))
    }
}

/// The sums of squared differences of leaf `rows` (two blocks of eight
/// slots, `2 fc` vectors each) to `query`, one feature at a time, slots
/// 0-3, 4-7, 8-11 and 12-15 in the four results; with `cut`, `None` as
/// soon as half the features already sum above `cut` in every lane (the
/// rest only adds, so none of them can win).
#[inline(always)]
fn leaf_sums(rows: &[f32x4], query: &[f32], fc: usize, cut: Option<f32>) -> Option<[f32x4; 4]> {
    // Two blocks of eight slots, each feature's lanes 0-3 then 4-7.
    let (r0, r1) = rows.split_at(2 * fc);
    // Per feature: its query value and its lanes in both blocks.
    let features = || query.iter().zip(r0.chunks_exact(2)).zip(r1.chunks_exact(2));
    let mut acc = [f32x4::ZERO; BLOCKS];
    let half = if cut.is_some() { fc / 2 } else { fc };
    let add = |acc: &mut [f32x4; BLOCKS], ((&x, x0), x1): ((&f32, &[f32x4]), &[f32x4])| {
        let q = f32x4::splat(x);
        let d = [q - x0[0], q - x0[1], q - x1[0], q - x1[1]];
        acc[0] += d[0] * d[0];
        acc[1] += d[1] * d[1];
        acc[2] += d[2] * d[2];
        acc[3] += d[3] * d[3];
    };
    features().take(half).for_each(|f| add(&mut acc, f));
    if let Some(cut) = cut {
        let least = acc[0].min(acc[1]).min(acc[2]).min(acc[3]);
        if !least.simd_le(f32x4::splat(cut)).any() {
            return None;
        }
        features().skip(half).for_each(|f| add(&mut acc, f));
    }
    Some(acc)
}

/// Sorts four keys ascending (a five-comparison network).
#[inline(always)]
fn sort4(k: &mut [u64; 4]) {
    let mut swap = |a: usize, b: usize| {
        if k[b] < k[a] {
            k.swap(a, b);
        }
    };
    swap(0, 1);
    swap(2, 3);
    swap(0, 2);
    swap(1, 3);
    swap(1, 2);
}

/// Scalar reference of the searches: the readable specification.
pub mod reference {
    use super::{Database, Error, Match};

    /// Frame `i`'s cost, one feature at a time.
    pub(crate) fn frame_cost(db: &Database<'_>, query: &[f32], i: usize) -> f32 {
        let mut c = 0.0f32;
        for (f, &q) in query.iter().enumerate() {
            let d = q - db.feature(i, f);
            c += d * d;
        }
        c + db.flag(i)
    }

    /// Scalar twin of [`Database::search_brute`].
    ///
    /// # Errors
    /// As [`Database::search_brute`].
    pub fn search(db: &Database<'_>, query: &[f32], bound: f32) -> Result<Option<Match>, Error> {
        db.check_query(query, bound)?;
        let mut best: Option<Match> = None;
        let mut least = bound;
        for i in 0..db.frame_count() {
            let c = frame_cost(db, query, i);
            if c < least {
                least = c;
                best = Some(Match {
                    frame: i as u32,
                    cost: c,
                });
            }
        }
        Ok(best)
    }
}
