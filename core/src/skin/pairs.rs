//! DQS pair tables: the distinct pairs of joints whose dual quaternions
//! the DQS kernels sign-align, built once per mesh, so that a frame can
//! align the whole palette instead of every vertex's influences.
//!
//! DQS flips an influence whose real part has a negative dot product with
//! the vertex's first influence's. The transform of a dual quaternion does
//! not change when it is negated, so if the palette's entries can be given
//! signs under which every pair `(slot 0, slot k)` that a mesh uses (with
//! a non-zero weight) has a positive dot product, no vertex of that mesh
//! flips anything, and the blend of the re-signed palette without the
//! per-vertex test is the blend with it, negated when slot 0's entry was:
//! the same transform, bit for bit (negation commutes with rounding).
//!
//! The table holds those pairs: first the edges of a spanning forest of
//! the pair graph, each `[child, parent]` after its parent's own edge, then
//! the other pairs. Per call, [`with_aligned`] copies the palette,
//! `sign_forest` signs each child against its parent and `pairs_positive`
//! checks the other pairs; a pose in which the signs cannot agree (a cycle
//! of pairs whose rotations wrap around), or in which a pair is too close
//! to 90° apart in 4D to decide, leaves the per-vertex test in charge.

use super::{DualQuat, Influences};
use crate::error::Error;

/// The most joints a DQS pair table can index (the aligned palette copy is
/// 8 KiB of stack at this size).
pub const DQS_PAIR_MAX_JOINTS: usize = 256;

/// Bits of the upper triangle of a [`DQS_PAIR_MAX_JOINTS`]² matrix.
const TRIANGLE_WORDS: usize = DQS_PAIR_MAX_JOINTS * (DQS_PAIR_MAX_JOINTS - 1) / 2 / 64;

/// Index of the unordered pair `a < b` in the upper triangle.
fn triangle_index(a: usize, b: usize) -> usize {
    debug_assert!(a < b && b < DQS_PAIR_MAX_JOINTS);
    b * (b - 1) / 2 + a
}

/// The size of pair table that always suffices for `infl`: the distinct
/// pairs are at most 3 per vertex (7 with eight influences) and at most
/// `n (n - 1) / 2` for `n` joints.
pub(super) fn bound(infl: &Influences<'_>) -> usize {
    let per_vertex = if infl.is_eight() { 7 } else { 3 };
    let n = infl.joint_count;
    infl.len()
        .saturating_mul(per_vertex)
        .min(n.saturating_mul(n.saturating_sub(1)) / 2)
}

/// Whether aligning a palette of `n` entries is worth trying: the
/// influences have a pair table, the palette fits the copy, and there are
/// at least half as many vertices as joints and pairs together (copying
/// one entry or testing one pair costs less than half of the per-vertex
/// sign tests that the alignment saves, so below that ratio the copy does
/// not pay for itself).
pub(crate) fn worth_aligning(n: usize, infl: &Influences<'_>) -> bool {
    let pairs = infl.pairs.len();
    pairs > 0 && n <= DQS_PAIR_MAX_JOINTS && 2 * infl.len() >= n + pairs
}

/// Calls `f` with the DQS palette the kernels should read and whether it
/// is aligned: a copy of `palette` signed by the influences' pair table
/// (see the module docs) when [`worth_aligning`] and the signs agree, else
/// `palette` itself. With AVX2 the copy is uninitialised stack filled with
/// `n` entries and the pairs are tested eight at a time; the portable
/// route (64-bit targets only: 32-bit microcontrollers keep their stack)
/// fills the whole 8 KiB buffer.
#[inline]
pub(crate) fn with_aligned<R>(
    palette: &[DualQuat],
    infl: &Influences<'_>,
    f: impl FnOnce(&[DualQuat], bool) -> R,
) -> R {
    if !worth_aligning(palette.len(), infl) {
        return f(palette, false);
    }
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    if super::avx2::available() {
        let mut buf = super::avx2::AlignedCopy::new();
        return match super::avx2::aligned_copy(palette, infl, &mut buf) {
            Some(copy) => f(copy, true),
            None => f(palette, false),
        };
    }
    #[cfg(target_pointer_width = "64")]
    {
        let mut buf = [DualQuat::IDENTITY; DQS_PAIR_MAX_JOINTS];
        if let Some(copy) = buf.get_mut(..palette.len()) {
            copy.copy_from_slice(palette);
            if let Some((rest, margin)) = sign_forest(copy, infl) {
                if pairs_positive(copy, rest, margin) {
                    return f(copy, true);
                }
            }
        }
    }
    f(palette, false)
}

/// One bit per unordered pair `a < b` of joints that a vertex of `infl`
/// blends: its slot 0 and each other slot of non-zero weight.
///
/// # Errors
/// [`Error::CapacityExceeded`] (more than [`DQS_PAIR_MAX_JOINTS`] joints).
fn pair_bits(infl: &Influences<'_>) -> Result<[u64; TRIANGLE_WORDS], Error> {
    if infl.joint_count > DQS_PAIR_MAX_JOINTS {
        return Err(Error::CapacityExceeded {
            capacity: DQS_PAIR_MAX_JOINTS,
        });
    }
    let mut seen = [0u64; TRIANGLE_WORDS];
    let mut mark = |j0: u16, js: &[u16; 4], ws: &[f32; 4], from: usize| {
        for (&j, &w) in js.iter().zip(ws).skip(from) {
            let (a, b) = (usize::from(j0.min(j)), usize::from(j0.max(j)));
            if w != 0.0 && a != b {
                let i = triangle_index(a, b);
                seen[i / 64] |= 1 << (i % 64);
            }
        }
    };
    for (v, (js, ws)) in infl.joints.iter().zip(infl.weights).enumerate() {
        mark(js[0], js, ws, 1);
        if let Some((j1, w1)) = infl.joints1.get(v).zip(infl.weights1.get(v)) {
            mark(js[0], j1, w1, 0);
        }
    }
    Ok(seen)
}

/// How many distinct pairs `infl`'s table has.
///
/// # Errors
/// Those of [`pair_bits`].
pub(super) fn count(infl: &Influences<'_>) -> Result<usize, Error> {
    Ok(pair_bits(infl)?
        .iter()
        .map(|w| w.count_ones() as usize)
        .sum())
}

/// Writes `infl`'s pair table to `buf` and returns how many entries it has
/// and how many of them (the leading ones) are forest edges.
///
/// # Errors
/// [`Error::CapacityExceeded`] (more than [`DQS_PAIR_MAX_JOINTS`] joints),
/// [`Error::BufferTooSmall`] (more distinct pairs than `buf` holds;
/// `needed` is their number).
pub(super) fn build(infl: &Influences<'_>, buf: &mut [[u16; 2]]) -> Result<(usize, usize), Error> {
    let seen = pair_bits(infl)?;
    let count: usize = seen.iter().map(|w| w.count_ones() as usize).sum();
    let actual = buf.len();
    let pairs = buf.get_mut(..count).ok_or(Error::BufferTooSmall {
        needed: count,
        actual,
    })?;
    let mut k = 0;
    for b in 1..infl.joint_count {
        for a in 0..b {
            let i = triangle_index(a, b);
            if seen[i / 64] & (1 << (i % 64)) != 0 {
                if let Some(slot) = pairs.get_mut(k) {
                    // Both below `joint_count <= 256`.
                    *slot = [a as u16, b as u16];
                }
                k += 1;
            }
        }
    }
    // A spanning forest, grown from the lowest unreached joint of each
    // component: a pair with one end reached becomes the edge
    // `[child, parent]` and moves to the front.
    let mut reached = [false; DQS_PAIR_MAX_JOINTS];
    let mut tree = 0;
    loop {
        let next = pairs[tree..]
            .iter()
            .find(|p| !reached[usize::from(p[0])] && !reached[usize::from(p[1])]);
        let Some(&[root, _]) = next else { break };
        reached[usize::from(root)] = true;
        let mut grew = true;
        while grew {
            grew = false;
            // Each edge found swaps places with the first pair past the
            // forest, one this sweep has already seen (the next sweep
            // sees it again).
            let from = tree;
            for i in from..count {
                let [a, b] = pairs[i];
                let (ra, rb) = (reached[usize::from(a)], reached[usize::from(b)]);
                if ra != rb {
                    let edge = if ra { [b, a] } else { [a, b] };
                    reached[usize::from(edge[0])] = true;
                    pairs[i] = pairs[tree];
                    pairs[tree] = edge;
                    tree += 1;
                    grew = true;
                }
            }
        }
    }
    Ok((count, tree))
}

#[cfg(test)]
use signing::dot;
#[cfg(any(
    test,
    all(target_arch = "x86_64", target_feature = "sse2"),
    target_pointer_width = "64"
))]
pub(crate) use signing::{pairs_positive, sign_forest};

/// The per-call half of the tables: signing a palette copy and testing its
/// pairs (compiled where a kernel aligns: x86-64 and 64-bit targets).
#[cfg(any(
    test,
    all(target_arch = "x86_64", target_feature = "sse2"),
    target_pointer_width = "64"
))]
mod signing {
    use super::{DualQuat, Influences};
    use crate::fp::Fp;

    /// The 4D dot product of two real parts, `(x x' + y y') + (z z' + w w')`
    /// (the AVX2 pair test's order; the kernels' own tests add in other
    /// orders, which [`MARGIN`] makes moot).
    #[inline]
    pub(crate) fn dot(a: &DualQuat, b: &DualQuat) -> f32 {
        (a.real[0] * b.real[0] + a.real[1] * b.real[1])
            + (a.real[2] * b.real[2] + a.real[3] * b.real[3])
    }

    /// The smallest aligned dot product accepted, relative to the largest
    /// `|real|²` of the palette. A four-term dot product of floats is within
    /// `4.8e-7 |a| |b|` of the exact one whatever the order of its additions,
    /// so above this margin the kernels' per-vertex tests (which add in other
    /// orders) would not flip the pair either.
    const MARGIN: f32 = 1e-5;

    /// Negates each forest edge's child of `palette` (a copy of the caller's,
    /// which the kernels then read) where its dot product with its (already
    /// signed) parent is negative, and returns the other pairs and the margin
    /// their dot products must clear: above it, all of the table is in one
    /// hemisphere. `None` when the table is empty, the palette is not
    /// `infl.joint_count` entries, or an edge is within [`MARGIN`] × the
    /// largest `|real|²` of 0 (too close to call) or not finite. Negated
    /// entries change no transform. `Some` guarantees that every pair's
    /// joints are below `palette.len()`: the palette then has
    /// `infl.joint_count` entries, and a table is only ever built by
    /// [`build`](super::build) from checked influences, whose joints are
    /// below that count.
    pub(crate) fn sign_forest<'i>(
        palette: &mut [DualQuat],
        infl: &Influences<'i>,
    ) -> Option<(&'i [[u16; 2]], f32)> {
        if infl.pairs.is_empty() || palette.len() != infl.joint_count {
            return None;
        }
        let max2 = palette.iter().fold(0.0f32, |m, e| m.max_num(dot(e, e)));
        let margin = MARGIN * max2;
        let (tree, rest) = infl.pairs.split_at(infl.tree.min(infl.pairs.len()));
        for &[c, p] in tree {
            let d = dot_of(palette, c, p);
            // Also false for NaN.
            if d.abs().partial_cmp(&margin) != Some(core::cmp::Ordering::Greater) {
                return None;
            }
            if let (true, Some(e)) = (d < 0.0, palette.get_mut(usize::from(c))) {
                *e = DualQuat {
                    real: e.real.map(|x| -x),
                    dual: e.dual.map(|x| -x),
                };
            }
        }
        Some((rest, margin))
    }

    /// The dot product of entries `a` and `b`'s real parts (NaN when either
    /// is out of range, which a checked table never is).
    #[inline]
    fn dot_of(palette: &[DualQuat], a: u16, b: u16) -> f32 {
        palette
            .get(usize::from(a))
            .zip(palette.get(usize::from(b)))
            .map_or(f32::NAN, |(a, b)| dot(a, b))
    }

    /// Whether every pair's dot product is above `margin` (false for NaN).
    pub(crate) fn pairs_positive(palette: &[DualQuat], pairs: &[[u16; 2]], margin: f32) -> bool {
        pairs.iter().all(|&[a, b]| dot_of(palette, a, b) > margin)
    }
}

/// [`sign_forest`], then [`pairs_positive`]: whether `palette` took signs
/// under which all of `infl`'s table is in one hemisphere (the AVX2
/// kernels run the second step with their own, vectorised
/// `pairs_positive`).
#[cfg(test)]
pub(crate) fn align(palette: &mut [DualQuat], infl: &Influences<'_>) -> bool {
    sign_forest(palette, infl).is_some_and(|(rest, margin)| pairs_positive(palette, rest, margin))
}

#[cfg(test)]
mod tests {
    extern crate alloc;

    use alloc::collections::BTreeSet;
    use alloc::vec::Vec;

    use proptest::prelude::*;

    use super::*;
    use crate::math::{Quat, Vec3};

    /// The table's invariants for `infl`: every distinct pair of a vertex's
    /// slot 0 and another slot of non-zero weight, once, as `a < b` past
    /// the forest; forest edges `[child, parent]` whose parent is a root
    /// or an earlier child, each child once, one root per component.
    fn check_table(infl: &Influences<'_>) -> Result<(), TestCaseError> {
        let mut want = BTreeSet::new();
        let sets = |v: usize| {
            let mut s = alloc::vec![(infl.joints[v], infl.weights[v], 1)];
            if let Some(x) = infl.joints1.get(v).zip(infl.weights1.get(v)) {
                s.push((*x.0, *x.1, 0));
            }
            s
        };
        for v in 0..infl.len() {
            let j0 = infl.joints[v][0];
            for (js, ws, from) in sets(v) {
                for k in from..4 {
                    if ws[k] != 0.0 && js[k] != j0 {
                        want.insert((j0.min(js[k]), j0.max(js[k])));
                    }
                }
            }
        }
        let got: BTreeSet<(u16, u16)> = infl
            .pairs
            .iter()
            .map(|&[a, b]| (a.min(b), a.max(b)))
            .collect();
        prop_assert_eq!(got.len(), infl.pairs.len(), "a pair twice");
        prop_assert_eq!(infl.dqs_pair_count(), Ok(want.len()));
        prop_assert!(want.len() <= infl.dqs_pair_bound());
        prop_assert_eq!(&got, &want);
        let (tree, rest) = infl.pairs.split_at(infl.tree);
        prop_assert!(rest.iter().all(|&[a, b]| a < b));
        let mut children = BTreeSet::new();
        let mut roots = BTreeSet::new();
        for &[c, p] in tree {
            if !children.contains(&p) {
                roots.insert(p);
            }
            prop_assert!(
                !roots.contains(&c) && children.insert(c),
                "{c} reached twice"
            );
        }
        // Every joint of a pair is reached; a forest of `tree` edges over
        // them has (joints - tree) components, one root each.
        let joints: BTreeSet<u16> = want.iter().flat_map(|&(a, b)| [a, b]).collect();
        prop_assert!(joints
            .iter()
            .all(|j| children.contains(j) || roots.contains(j)));
        prop_assert_eq!(roots.len(), joints.len() - tree.len());
        Ok(())
    }

    fn table<'a>(infl: Influences<'a>, buf: &'a mut Vec<[u16; 2]>) -> Influences<'a> {
        buf.resize(infl.dqs_pair_count().unwrap(), [0; 2]);
        infl.with_dqs_pairs(buf).unwrap()
    }

    #[test]
    fn pairs_of_a_small_mesh() {
        // Vertex 2 blends joint 3 with itself only; vertex 3's slot 3 has
        // weight 0; joint 4 is alone.
        let joints = [
            [0, 1, 2, 0],
            [1, 2, 0, 0],
            [3, 3, 3, 3],
            [2, 0, 1, 4],
            [4, 0, 0, 0],
        ];
        let weights = [
            [0.5, 0.25, 0.25, 0.0],
            [0.5, 0.5, 0.0, 0.0],
            [0.25; 4],
            [0.5, 0.25, 0.25, 0.0],
            [1.0, 0.0, 0.0, 0.0],
        ];
        let infl = Influences::new(&joints, &weights, 6).unwrap();
        assert_eq!(infl.dqs_pair_bound(), 15);
        assert_eq!(infl.dqs_pair_count(), Ok(3));
        let mut buf = [[9u16; 2]; 3];
        let t = infl.with_dqs_pairs(&mut buf).unwrap();
        // (0,1), (0,2), (1,2): a triangle; two forest edges from root 0.
        assert_eq!(t.tree, 2);
        assert_eq!(t.dqs_pairs(), &[[1, 0], [2, 0], [1, 2]]);
        check_table(&t).unwrap();
        // No pairs: an empty table, which the kernels ignore.
        let one = Influences::new(&joints[2..3], &weights[2..3], 6).unwrap();
        assert!(one.with_dqs_pairs(&mut []).unwrap().dqs_pairs().is_empty());
    }

    #[test]
    fn pair_table_errors() {
        let joints = [[0, 1, 2, 3]];
        let weights = [[0.25; 4]];
        let infl = Influences::new(&joints, &weights, 4).unwrap();
        let mut buf = [[0u16; 2]; 2];
        assert_eq!(
            infl.with_dqs_pairs(&mut buf).unwrap_err(),
            Error::BufferTooSmall {
                needed: 3,
                actual: 2
            }
        );
        let big = Influences::new(&joints, &weights, DQS_PAIR_MAX_JOINTS + 1).unwrap();
        let too_many = Error::CapacityExceeded {
            capacity: DQS_PAIR_MAX_JOINTS,
        };
        assert_eq!(big.dqs_pair_count().unwrap_err(), too_many);
        assert_eq!(
            big.with_dqs_pairs(&mut [[0; 2]; 8]).unwrap_err(),
            Error::CapacityExceeded {
                capacity: DQS_PAIR_MAX_JOINTS
            }
        );
        // At the limit, pairs of the last joints index the triangle's end.
        let joints = [[255, 254, 0, 0]];
        let weights = [[0.5, 0.5, 0.0, 0.0]];
        let infl = Influences::new(&joints, &weights, DQS_PAIR_MAX_JOINTS).unwrap();
        let mut buf = [[0u16; 2]; 1];
        assert_eq!(
            infl.with_dqs_pairs(&mut buf).unwrap().dqs_pairs(),
            &[[255, 254]]
        );
    }

    fn rot_z(deg: f32) -> DualQuat {
        let q = Quat::from_axis_angle(Vec3::new(0.0, 0.0, 1.0), deg.to_radians());
        DualQuat::from_rotation_translation(q, Vec3::new(1.0, 2.0, 3.0))
    }

    fn neg(d: DualQuat) -> DualQuat {
        DualQuat {
            real: d.real.map(|x| -x),
            dual: d.dual.map(|x| -x),
        }
    }

    fn triangle() -> ([[u16; 4]; 3], [[f32; 4]; 3]) {
        (
            [[0, 1, 0, 0], [1, 2, 0, 0], [2, 0, 0, 0]],
            [[0.5, 0.5, 0.0, 0.0]; 3],
        )
    }

    #[test]
    fn align_flips_entries_into_one_hemisphere() {
        let (joints, weights) = triangle();
        let infl = Influences::new(&joints, &weights, 3).unwrap();
        let mut buf = Vec::new();
        let t = table(infl, &mut buf);
        // 0°, 80° and 160°, the last two negated: joint 0's pairs have
        // negative dots as given; negating joints 1 and 2 makes all three
        // positive (the largest angle, 160°, is under 180°).
        let given = [rot_z(0.0), neg(rot_z(80.0)), neg(rot_z(160.0))];
        let mut p = given;
        assert!(align(&mut p, &t));
        for (a, b) in [(0, 1), (1, 2), (0, 2)] {
            assert!(dot(&p[a], &p[b]) > 0.1, "{a} {b}");
        }
        for (x, y) in p.iter().zip(&given) {
            assert!(*x == *y || *x == neg(*y));
        }
        // Without the table, nothing to align by.
        assert!(!align(&mut p, &infl));
    }

    #[test]
    fn align_refuses_what_it_cannot_decide() {
        let (joints, weights) = triangle();
        let infl = Influences::new(&joints, &weights, 3).unwrap();
        let mut buf = Vec::new();
        let t = table(infl, &mut buf);
        // 0°, 240°, 480°: each pair 120° apart as rotations, so every
        // pair's dot is -1/2 whatever the signs of two of them: no signs
        // put the cycle in one hemisphere.
        assert!(!align(&mut [rot_z(0.0), rot_z(240.0), rot_z(480.0)], &t));
        // 0°, 100° and 200°: 100° per edge of the cycle, so its third
        // edge wraps past 180° and its sign disagrees with the other two.
        assert!(!align(&mut [rot_z(0.0), rot_z(100.0), rot_z(200.0)], &t));
        // Joints 180° apart as rotations (dot 0): too close to call.
        assert!(!align(&mut [rot_z(0.0), rot_z(180.0), rot_z(90.0)], &t));
        // Not finite.
        let mut nan = rot_z(10.0);
        nan.real[1] = f32::NAN;
        assert!(!align(&mut [rot_z(0.0), nan, rot_z(20.0)], &t));
        // A palette of another length.
        assert!(!align(&mut [rot_z(0.0), rot_z(10.0)], &t));
    }

    proptest! {
        #[test]
        fn tables_hold_each_pair_once_in_forest_order(
            seed in any::<u64>(),
            vertices in 0usize..200,
            joints in 1usize..40,
            eight in any::<bool>(),
        ) {
            let mut s = seed | 1;
            let mut next = move || {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                s
            };
            let mut js = Vec::new();
            let mut ws = Vec::new();
            let sets = if eight { 2 } else { 1 };
            for _ in 0..vertices * sets {
                js.push([0; 4].map(|_| (next() % joints as u64) as u16));
                // Weights 0 or 1/8 (sums need not be 1 here: the table
                // reads only which weights are zero).
                ws.push([0; 4].map(|_| if next() % 3 == 0 { 0.0 } else { 0.125 }));
            }
            let (j0, j1) = js.split_at(if eight { vertices } else { js.len() });
            let (w0, w1) = ws.split_at(if eight { vertices } else { ws.len() });
            let infl = Influences {
                joints: j0,
                weights: w0,
                joints1: j1,
                weights1: w1,
                joint_count: joints,
                pairs: &[],
                tree: 0,
            };
            let mut buf = Vec::new();
            check_table(&table(infl, &mut buf))?;
        }
    }
}
