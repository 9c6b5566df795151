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

/// The bucket of a cell: a multiplicative hash mapped onto `0 .. buckets`
/// by its high bits (a multiply and a shift, no division).
#[inline]
fn bucket(c: (i32, i32), buckets: usize) -> usize {
    let h = (c.0 as u32).wrapping_mul(0x9E37_79B1) ^ (c.1 as u32).wrapping_mul(0x85EB_CA77);
    let h = h ^ (h >> 15);
    ((u64::from(h) * buckets as u64) >> 32) as usize
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

    /// The `starts` length for `agents` agents: one bucket per agent,
    /// at least one, plus one.
    #[must_use]
    pub const fn starts_len(agents: usize) -> usize {
        if agents == 0 {
            2
        } else {
            agents + 1
        }
    }

    /// Agents the grid can hold.
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.entries.len()
    }

    /// Buckets.
    #[must_use]
    pub fn buckets(&self) -> usize {
        self.starts.len() - 1
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
        let nb = self.buckets();
        self.starts.fill(0);
        // Count per bucket into starts[k + 1], then prefix-sum: starts[k]
        // is bucket k's first entry.
        for (a, key) in agents.iter().zip(self.keys.iter_mut()) {
            let k = bucket(cell_of(a.position, inv), nb);
            *key = k as u32;
            if let Some(s) = self.starts.get_mut(k + 1) {
                *s += 1;
            }
        }
        for k in 1..self.starts.len() {
            self.starts[k] += self.starts[k - 1];
        }
        // Scatter in index order, advancing each bucket's start to its
        // end (= the next bucket's start) ...
        for (i, &key) in self.keys.iter().take(agents.len()).enumerate() {
            if let Some(s) = self.starts.get_mut(key as usize) {
                if let Some(e) = self.entries.get_mut(*s as usize) {
                    *e = i as u32;
                }
                *s += 1;
            }
        }
        // ... then shift the starts back by one bucket.
        for k in (1..self.starts.len()).rev() {
            self.starts[k] = self.starts[k - 1];
        }
        self.starts[0] = 0;
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
    /// The `[start, end)` entry ranges of the distinct buckets of the nine
    /// cells around `p`, and how many there are.
    #[inline]
    fn ranges(&self, p: [f32; 2]) -> ([(u32, u32); 9], usize) {
        let nb = self.buckets();
        let (cx, cy) = cell_of(p, self.inv_cell);
        let mut ranges = [(0u32, 0u32); 9];
        let mut seen = [usize::MAX; 9];
        let mut n = 0;
        for dy in -1..=1 {
            for dx in -1..=1 {
                let k = bucket((cx.wrapping_add(dx), cy.wrapping_add(dy)), nb);
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
    fn merge(
        &self,
        agents: &[Agent],
        i: usize,
        r2: f32,
        mut cursors: [(u32, u32); 9],
        n: usize,
        f: &mut impl FnMut(usize, f32),
    ) {
        let Some(a) = agents.get(i) else { return };
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
            let bucket = self.entries.get(s as usize..e as usize).unwrap_or_default();
            for &j in bucket {
                let Some(b) = agents.get(j as usize) else {
                    continue;
                };
                let Some(d2) = within(a.position, b.position, r2) else {
                    continue;
                };
                if j as usize == i {
                    continue;
                }
                let Some(slot) = found.get_mut(m) else {
                    return self.merge(agents, i, r2, ranges, n, &mut f);
                };
                *slot = (u64::from(j) << 32) | u64::from(d2.to_bits());
                m += 1;
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
