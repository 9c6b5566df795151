//! The steering's spatial hash: a uniform grid hashed into buckets, filled
//! by a counting sort each step.

use super::{Agent, Neighbours};
use crate::Error;

/// Cells are this much wider than the neighbour radius. With cells exactly
/// one radius wide, rounding in `x / cell` could put two agents closer than
/// the radius two cells apart, outside each other's nine cells; the margin
/// absorbs that rounding for positions within 2^18 cells of the origin.
pub const CELL_MARGIN: f32 = 1.0625;

/// A spatial hash over caller memory: `buckets + 1` bucket starts and two
/// `u32` per agent (capacity), sized once and reused every step.
///
/// [`Grid::build`] hashes each agent's cell `(⌊x / cell⌋, ⌊y / cell⌋)`
/// into a bucket and counting-sorts the agents by bucket, in index order
/// within a bucket. A query visits the distinct buckets of the nine cells
/// around an agent, keeps the agents strictly within the radius, and
/// sorts them by index in a stack buffer (more than 128 are merged from
/// the buckets in place instead): two cells sharing a bucket cost time,
/// never correctness. About one bucket per agent keeps buckets short.
#[derive(Debug)]
pub struct Grid<'a> {
    starts: &'a mut [u32],
    entries: &'a mut [u32],
    keys: &'a mut [u32],
    inv_cell: f32,
    radius: f32,
    len: usize,
}

/// `⌊x⌋` as `i32`, saturating (NaN gives 0): the cast truncates towards
/// zero, so one step down fixes negative non-integers. Exact for every
/// `f32` in range, and cheaper than `libm::floorf` plus a cast.
#[inline]
fn floor_i32(x: f32) -> i32 {
    let t = x as i32;
    if (t as f32) > x {
        t.saturating_sub(1)
    } else {
        t
    }
}

#[inline]
fn cell_of(p: [f32; 2], inv_cell: f32) -> (i32, i32) {
    // Saturating: far-away agents share edge cells, which costs time but
    // never misses a neighbour.
    (floor_i32(p[0] * inv_cell), floor_i32(p[1] * inv_cell))
}

/// The row multiplier for `mask + 1` (a power of two) buckets: the
/// golden-ratio fraction of the table, odd, so successive rows land far
/// apart around it.
#[inline]
fn row_multiplier(mask: u32) -> u32 {
    ((0x9E37_79B9u64 * (u64::from(mask) + 1)) >> 32) as u32 | 1
}

/// The bucket of a cell: `x + y · multiplier` modulo the (power of two)
/// bucket count. Cells next to each other along x get consecutive
/// buckets, so a query reads the three cells of a row as one run of
/// entries.
#[inline]
fn bucket(c: (i32, i32), mask: u32, multiplier: u32) -> usize {
    ((c.0 as u32).wrapping_add((c.1 as u32).wrapping_mul(multiplier)) & mask) as usize
}

/// Neighbours a query gathers on the stack before sorting them by index;
/// a denser neighbourhood falls back to merging the buckets in place.
const GATHER: usize = 128;

impl<'a> Grid<'a> {
    /// A grid over caller buffers: `starts` holds `starts.len() − 1`
    /// buckets; `entries` and `keys` one `u32` each per agent, up to their
    /// (equal) length.
    ///
    /// # Errors
    /// [`Error::BadLength`] when `starts` has fewer than 2 entries or
    /// `keys` differs from `entries` in length;
    /// [`Error::InvalidParameter`] when a buffer is longer than
    /// `u32::MAX`.
    pub fn new(
        starts: &'a mut [u32],
        entries: &'a mut [u32],
        keys: &'a mut [u32],
    ) -> Result<Self, Error> {
        if starts.len() < 2 {
            return Err(Error::BadLength {
                buffer: "grid bucket starts",
                expected: 2,
                actual: starts.len(),
            });
        }
        if keys.len() != entries.len() {
            return Err(Error::BadLength {
                buffer: "grid keys",
                expected: entries.len(),
                actual: keys.len(),
            });
        }
        if starts.len() > u32::MAX as usize || entries.len() > u32::MAX as usize {
            return Err(Error::InvalidParameter {
                what: "grid buffers must hold at most u32::MAX entries",
            });
        }
        Ok(Grid {
            starts,
            entries,
            keys,
            inv_cell: 0.0,
            radius: 0.0,
            len: 0,
        })
    }

    /// The `starts` length for `agents` agents: at least one bucket per
    /// agent (a power of two, see [`Grid::buckets`]), plus one.
    #[must_use]
    pub const fn starts_len(agents: usize) -> usize {
        match agents.checked_next_power_of_two() {
            Some(p) => p + 1,
            None => usize::MAX,
        }
    }

    /// Agents the grid can hold.
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.entries.len()
    }

    /// Buckets: the largest power of two at most `starts.len() − 1`
    /// (cells map to buckets by a mask); further starts go unused.
    #[must_use]
    pub fn buckets(&self) -> usize {
        let n = self.starts.len().saturating_sub(1).max(1);
        1 << (usize::BITS - 1 - n.leading_zeros())
    }

    /// The bucket mask and row multiplier.
    #[inline]
    fn hash(&self) -> (u32, u32) {
        // `new` keeps the starts within u32 entries.
        let mask = (self.buckets() - 1) as u32;
        (mask, row_multiplier(mask))
    }

    /// Agents in the grid since the last [`Grid::build`].
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the grid holds no agents.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub(crate) fn is_built_for(&self, agents: usize, radius: f32) -> bool {
        self.len == agents && self.radius == radius && self.inv_cell > 0.0
    }

    /// Sorts `agents` into the grid for neighbour queries within `radius`.
    ///
    /// # Errors
    /// [`Error::BufferTooSmall`] when there are more agents than the
    /// capacity; [`Error::InvalidParameter`] when `radius` is not finite
    /// and > 0 or too small or large for `f32` cells. The grid is empty
    /// after an error.
    pub fn build(&mut self, agents: &[Agent], radius: f32) -> Result<(), Error> {
        self.len = 0;
        self.inv_cell = 0.0;
        if agents.len() > self.entries.len() {
            return Err(Error::BufferTooSmall {
                needed: agents.len(),
                actual: self.entries.len(),
            });
        }
        let inv = 1.0 / (radius * CELL_MARGIN);
        if !(radius.is_finite() && radius > 0.0 && inv.is_finite() && inv > 0.0) {
            return Err(Error::InvalidParameter {
                what: "neighbour radius must be finite, > 0 and give finite cells",
            });
        }
        let (mask, mult) = self.hash();
        let Some(starts) = self.starts.get_mut(..mask as usize + 2) else {
            return Err(Error::BadLength {
                buffer: "grid bucket starts",
                expected: mask as usize + 2,
                actual: self.starts.len(),
            });
        };
        starts.fill(0);
        // Count per bucket into starts[k + 1], then prefix-sum: starts[k]
        // is bucket k's first entry.
        for (a, key) in agents.iter().zip(self.keys.iter_mut()) {
            let k = bucket(cell_of(a.position, inv), mask, mult);
            *key = k as u32;
            if let Some(s) = starts.get_mut(k + 1) {
                *s += 1;
            }
        }
        for k in 1..starts.len() {
            starts[k] += starts[k - 1];
        }
        // Scatter in index order, advancing each bucket's start to its
        // end (= the next bucket's start) ...
        for (i, &key) in self.keys.iter().take(agents.len()).enumerate() {
            if let Some(s) = starts.get_mut(key as usize) {
                if let Some(e) = self.entries.get_mut(*s as usize) {
                    *e = i as u32;
                }
                *s += 1;
            }
        }
        // ... then shift the starts back by one bucket.
        for k in (1..starts.len()).rev() {
            starts[k] = starts[k - 1];
        }
        starts[0] = 0;
        self.inv_cell = inv;
        self.radius = radius;
        self.len = agents.len();
        Ok(())
    }

    /// Calls `f(j, d²)` for every agent `j ≠ i` whose centre is strictly
    /// within the built radius of agent `i`'s (`d² < radius²`, `d²` as
    /// `dx² + dy²` of `position[j] − position[i]`), in increasing `j`.
    /// Nothing is visited when `i` is out of range or `agents` is not
    /// the slice the grid was built from.
    pub fn for_each_neighbour(&self, agents: &[Agent], i: usize, f: impl FnMut(usize, f32)) {
        if agents.len() != self.len || self.inv_cell <= 0.0 {
            return;
        }
        self.each(agents, i, self.radius, f);
    }
}

/// `d²` between two agents' centres and whether it is within `r2`: the
/// one test the grid and the brute-force reference share.
#[inline]
pub(crate) fn within(p: [f32; 2], q: [f32; 2], r2: f32) -> Option<f32> {
    let dx = q[0] - p[0];
    let dy = q[1] - p[1];
    let d2 = dx * dx + dy * dy;
    (d2 < r2).then_some(d2)
}

impl Grid<'_> {
    /// The `[start, end)` entry ranges covering the distinct buckets of
    /// the nine cells around `p` once each, and how many there are.
    #[inline]
    fn ranges(&self, p: [f32; 2]) -> ([(u32, u32); 9], usize) {
        let (mask, mult) = self.hash();
        let (cx, cy) = cell_of(p, self.inv_cell);
        let first = |dy: i32| bucket((cx.wrapping_sub(1), cy.wrapping_add(dy)), mask, mult) as u32;
        let rows = [first(-1), first(0), first(1)];
        // Apart by 3 or more buckets around the table, the rows' buckets
        // are all distinct.
        let apart = |a: u32, b: u32| {
            let d = a.wrapping_sub(b) & mask;
            d >= 3 && d <= mask - 2
        };
        let mut ranges = [(0u32, 0u32); 9];
        let mut n = 0;
        let starts = &*self.starts;
        let at = |k: u32| starts.get(k as usize).copied().unwrap_or(0);
        let mut push = |r: (u32, u32)| {
            if let Some(slot) = ranges.get_mut(n) {
                *slot = r;
                n += 1;
            }
        };
        if mask >= 5
            && apart(rows[0], rows[1])
            && apart(rows[1], rows[2])
            && apart(rows[0], rows[2])
        {
            // Each row is buckets k, k + 1, k + 2 (wrapping): one run of
            // entries, or two where it wraps.
            for k in rows {
                if k + 2 <= mask {
                    push((at(k), at(k + 3)));
                } else {
                    push((at(k), at(mask + 1)));
                    push((at(0), at(k.wrapping_add(3) & mask)));
                }
            }
        } else {
            // A table too small to hold the rows apart.
            return self.buckets_around(p);
        }
        (ranges, n)
    }

    /// The `[start, end)` entry ranges of the distinct buckets of the
    /// nine cells around `p`, one per bucket (so each in index order),
    /// and how many there are.
    fn buckets_around(&self, p: [f32; 2]) -> ([(u32, u32); 9], usize) {
        let (mask, mult) = self.hash();
        let (cx, cy) = cell_of(p, self.inv_cell);
        let mut ranges = [(0u32, 0u32); 9];
        let mut seen = [usize::MAX; 9];
        let mut n = 0;
        for dy in -1..=1 {
            for dx in -1..=1 {
                let k = bucket((cx.wrapping_add(dx), cy.wrapping_add(dy)), mask, mult);
                if seen[..n].contains(&k) {
                    continue;
                }
                let (Some(&s), Some(&e)) = (self.starts.get(k), self.starts.get(k + 1)) else {
                    continue;
                };
                if let (Some(sl), Some(rl)) = (seen.get_mut(n), ranges.get_mut(n)) {
                    *sl = k;
                    *rl = (s, e);
                    n += 1;
                }
            }
        }
        (ranges, n)
    }

    /// The slow path for a neighbourhood of more than [`GATHER`] agents:
    /// merges the buckets (each in index order) into one increasing
    /// sequence, without a buffer.
    #[cold]
    #[inline(never)]
    fn merge(&self, agents: &[Agent], i: usize, r2: f32, f: &mut impl FnMut(usize, f32)) {
        let Some(a) = agents.get(i) else { return };
        let (mut cursors, n) = self.buckets_around(a.position);
        let cursors = cursors.get_mut(..n).unwrap_or_default();
        loop {
            let mut best = u32::MAX;
            let mut which = usize::MAX;
            for (c, cur) in cursors.iter().enumerate() {
                if cur.0 < cur.1 {
                    let j = self
                        .entries
                        .get(cur.0 as usize)
                        .copied()
                        .unwrap_or(u32::MAX);
                    if j < best {
                        best = j;
                        which = c;
                    }
                }
            }
            let Some(cur) = cursors.get_mut(which) else {
                break;
            };
            cur.0 += 1;
            let j = best as usize;
            if j == i {
                continue;
            }
            if let Some(b) = agents.get(j) {
                if let Some(d2) = within(a.position, b.position, r2) {
                    f(j, d2);
                }
            }
        }
    }
}

impl Neighbours for Grid<'_> {
    fn each(&self, agents: &[Agent], i: usize, radius: f32, mut f: impl FnMut(usize, f32)) {
        let Some(a) = agents.get(i) else { return };
        let r2 = radius * radius;
        let (ranges, n) = self.ranges(a.position);
        // Gather the agents within the radius from each bucket, then sort
        // them by index, so sums run in the brute force's order. Packed as
        // `index << 32 | d² bits`, sorting the integers sorts by index.
        let mut found = [0u64; GATHER];
        let mut m = 0usize;
        for &(s, e) in ranges.get(..n).unwrap_or_default() {
            let run = self.entries.get(s as usize..e as usize).unwrap_or_default();
            for &j in run {
                let Some(b) = agents.get(j as usize) else {
                    continue;
                };
                let dx = b.position[0] - a.position[0];
                let dy = b.position[1] - a.position[1];
                let d2 = dx * dx + dy * dy;
                // Written always, kept by advancing: about a third of the
                // candidates pass, too unpredictable for a branch.
                let keep = (d2 < r2) & (j as usize != i);
                let Some(slot) = found.get_mut(m) else {
                    return self.merge(agents, i, r2, &mut f);
                };
                *slot = (u64::from(j) << 32) | u64::from(d2.to_bits());
                m += usize::from(keep);
            }
        }
        let found = found.get_mut(..m).unwrap_or_default();
        // Insertion sort: a handful of short runs, already sorted each.
        for k in 1..found.len() {
            let x = found[k];
            let mut l = k;
            while l > 0 && found[l - 1] > x {
                found[l] = found[l - 1];
                l -= 1;
            }
            found[l] = x;
        }
        for &e in found.iter() {
            f((e >> 32) as usize, f32::from_bits(e as u32));
        }
    }
}
