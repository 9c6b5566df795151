//! The searches: the weighted squared distance of a query to every
//! searchable frame, and the frame with the least.
//!
//! Every search visits frames in index order and takes a frame only when
//! its cost is strictly below the best so far, so of equal costs the lowest
//! frame wins. All of them compute a frame's cost the same way, one f32
//! operation at a time in feature order (`d = q − x; c = c + d·d`, then the
//! frame's flag, 0 or +∞, added): the lane searches and the scalar
//! reference agree bit for bit, not just within a tolerance.
//!
//! The pruned search skips a box of frames when the box's lower bound is
//! not below the best cost so far. The bound is computed with the same
//! operations in the same order as the costs (`d = max(lo − q, q − hi, 0)`),
//! and rounding is monotonic, so for every frame inside the box the
//! rounded bound is at most the rounded cost: skipping never drops a frame
//! the brute force would take. A box after the best frame cannot win a tie
//! either, so `bound >= best` prunes.

use wide::f32x4;

use super::database::{Database, Match, LARGE_BOX, SMALL_BOX};
use crate::error::Error;

/// Lane blocks in a small box.
const BLOCKS: usize = SMALL_BOX / 4;

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

    /// The costs of the 16 frames of small box `s`, four lane blocks.
    #[inline(always)]
    fn small_box_costs(&self, query: &[f32], s: usize) -> [f32x4; BLOCKS] {
        let fc = self.feature_count;
        let first = s * BLOCKS;
        let rows = &self.features[first * fc..(first + BLOCKS) * fc];
        let (r0, rest) = rows.split_at(fc);
        let (r1, rest) = rest.split_at(fc);
        let (r2, r3) = rest.split_at(fc);
        let mut acc = [f32x4::ZERO; BLOCKS];
        for ((((&q, &x0), &x1), &x2), &x3) in query.iter().zip(r0).zip(r1).zip(r2).zip(r3) {
            let q = f32x4::splat(q);
            let d = [q - x0, q - x1, q - x2, q - x3];
            acc[0] = acc[0] + d[0] * d[0];
            acc[1] = acc[1] + d[1] * d[1];
            acc[2] = acc[2] + d[2] * d[2];
            acc[3] = acc[3] + d[3] * d[3];
        }
        let bias = &self.bias[first..first + BLOCKS];
        [
            acc[0] + bias[0],
            acc[1] + bias[1],
            acc[2] + bias[2],
            acc[3] + bias[3],
        ]
    }

    /// Takes the lowest frame of small box `s` whose cost is below `best`.
    #[inline(always)]
    fn scan_small_box(&self, query: &[f32], s: usize, best: &mut Match, found: &mut bool) {
        let costs = self.small_box_costs(query, s);
        let least = costs[0].min(costs[1]).min(costs[2]).min(costs[3]);
        if !least.simd_lt(f32x4::splat(best.cost)).any() {
            return;
        }
        for (b, c) in costs.iter().enumerate() {
            for (l, &cost) in c.as_array().iter().enumerate() {
                if cost < best.cost {
                    best.cost = cost;
                    best.frame = (s * SMALL_BOX + b * 4 + l) as u32;
                    *found = true;
                }
            }
        }
    }

    /// The frame with the least cost below `bound`, visiting every frame
    /// in lane blocks (the reference the pruned [`Self::search`] equals).
    /// `bound` is `f32::INFINITY` for a plain search, or the current
    /// frame's cost less a margin to keep playing it unless something is
    /// clearly better. `None` when no searchable frame costs less.
    ///
    /// # Errors
    /// [`Error::BadLength`] (query length), [`Error::NonFinite`] (a query
    /// value or the bound).
    pub fn search_brute(&self, query: &[f32], bound: f32) -> Result<Option<Match>, Error> {
        self.check_query(query, bound)?;
        let mut best = Match {
            frame: 0,
            cost: bound,
        };
        let mut found = false;
        for s in 0..self.bias.len() / BLOCKS {
            self.scan_small_box(query, s, &mut best, &mut found);
        }
        Ok(found.then_some(best))
    }

    /// The lower bounds of the four boxes whose lanes start at `boxes`
    /// (`lo` then `hi`, one vector per feature each).
    #[inline(always)]
    fn box_bounds(&self, boxes: &[f32x4], query: &[f32]) -> f32x4 {
        let (lo, hi) = boxes.split_at(self.feature_count);
        let mut acc = f32x4::ZERO;
        for ((&q, &lo), &hi) in query.iter().zip(lo).zip(hi) {
            let q = f32x4::splat(q);
            let d = (lo - q).max(q - hi).max(f32x4::ZERO);
            acc = acc + d * d;
        }
        acc
    }

    /// The same frame and cost as [`Self::search_brute`], exactly, visiting
    /// only the boxes of frames whose lower bound is below the best cost so
    /// far: large boxes of 64 frames, then their small boxes of 16.
    ///
    /// # Errors
    /// As [`Self::search_brute`].
    pub fn search(&self, query: &[f32], bound: f32) -> Result<Option<Match>, Error> {
        self.check_query(query, bound)?;
        let fc2 = 2 * self.feature_count;
        let mut best = Match {
            frame: 0,
            cost: bound,
        };
        let mut found = false;
        for (g, large) in self.large.chunks_exact(fc2).enumerate() {
            let lb = self.box_bounds(large, query);
            if !lb.simd_lt(f32x4::splat(best.cost)).any() {
                continue;
            }
            for (k, &lb) in lb.as_array().iter().enumerate() {
                if lb >= best.cost {
                    continue;
                }
                let l = g * 4 + k;
                let small = &self.small[l * fc2..(l + 1) * fc2];
                let sb = self.box_bounds(small, query);
                for (m, &sb) in sb.as_array().iter().enumerate() {
                    if sb < best.cost {
                        self.scan_small_box(query, l * 4 + m, &mut best, &mut found);
                    }
                }
            }
        }
        debug_assert_eq!(LARGE_BOX, 4 * SMALL_BOX);
        Ok(found.then_some(best))
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

/// Scalar reference of the searches: the readable specification.
pub mod reference {
    use super::{Database, Error, Match};

    /// Frame `i`'s cost, one feature at a time.
    pub(crate) fn frame_cost(db: &Database<'_>, query: &[f32], i: usize) -> f32 {
        let mut c = 0.0f32;
        for (f, &q) in query.iter().enumerate() {
            let d = q - db.feature(i, f);
            c = c + d * d;
        }
        c + db.bias[i / 4].as_array()[i % 4]
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
