//! Vertex order by influence count: the split layout of a skinned mesh.
//!
//! The vertex kernels skin four (AVX2: eight) vertices per step and
//! blend, per step, only the influence slots up to the last one any of
//! those vertices weights. In a mesh's own order, a rigid vertex beside a
//! four-influence one pays for four. [`influence_order`] lists the
//! vertices by the number of slots they use (a stable counting sort, so
//! neighbours stay neighbours within a count), which is the layout an
//! engine's mesh tool makes when it splits a mesh into parts by influence
//! count: apply it once, when the mesh is built, to every vertex
//! attribute and remap the triangle indices through its inverse.

use crate::error::Error;
use crate::soa::check_len;

/// Influence slots a vertex uses: one past its last slot with a non-zero
/// weight in slots 0-3, or 4 plus that of slots 4-7 when any of those
/// weighs (0 for a vertex whose weights are all zero).
#[inline]
#[must_use]
pub fn slots_used(weights: &[f32; 4], weights1: Option<&[f32; 4]>) -> usize {
    let last = |w: &[f32; 4]| w.iter().rposition(|&x| x != 0.0).map_or(0, |i| i + 1);
    match weights1.map(last) {
        Some(n) if n > 0 => 4 + n,
        _ => last(weights),
    }
}

/// `joints` with its first `used` slots in increasing order (the others
/// as they are).
#[inline]
pub(crate) fn canonical_joints(joints: &[u16; 4], used: usize) -> [u16; 4] {
    let mut j = *joints;
    j[..used.min(4)].sort_unstable();
    j
}

/// Writes into `order` the mesh's vertices (indices into `weights`) sorted
/// by [`slots_used`], fewest first, ties in their original order, and
/// returns how many vertices use 0, 1, …, 8 slots (the parts' sizes, in
/// `order`'s order).
///
/// `weights1` holds slots 4-7 of an eight-influence mesh, one set per
/// vertex, or is empty. Nothing is allocated: two passes over the weights.
/// The new vertex `i` is old vertex `order[i]`; a triangle index `v`
/// becomes the position of `v` in `order`.
///
/// # Errors
/// [`Error::BadLength`] when `order` does not hold one entry per vertex,
/// when `weights1` is neither empty nor one set per vertex, or when the
/// mesh has more than `u32::MAX` vertices (`order` then cannot name them).
/// Nothing is written then.
pub fn influence_order(
    weights: &[[f32; 4]],
    weights1: &[[f32; 4]],
    order: &mut [u32],
) -> Result<[u32; 9], Error> {
    let n = weights.len();
    check_len("order", n, order.len())?;
    if !weights1.is_empty() {
        check_len("weights1", n, weights1.len())?;
    }
    if u32::try_from(n).is_err() {
        return Err(Error::BadLength {
            buffer: "weights",
            expected: u32::MAX as usize,
            actual: n,
        });
    }
    let used = |v: usize| slots_used(&weights[v], weights1.get(v));
    let mut counts = [0u32; 9];
    for v in 0..n {
        counts[used(v)] += 1;
    }
    let mut next = [0u32; 9];
    for k in 1..9 {
        next[k] = next[k - 1] + counts[k - 1];
    }
    for v in 0..n {
        let k = used(v);
        order[next[k] as usize] = v as u32;
        next[k] += 1;
    }
    Ok(counts)
}

/// Sorts each part of an [`influence_order`] (`counts` its sizes) by the
/// set of joints its vertices name in the slots they use, then by those
/// joints in slot order, ties by vertex index, so that runs of vertices
/// with the same joints lie together: a block of four such vertices is
/// skinned from the joints' entries broadcast into lanes, with no
/// per-vertex blend and no transpose (see the kernels; the array kernels
/// need the same slot order too, [`SkinBlocks`](super::SkinBlocks) only
/// the same set).
/// `joints1` holds slots 4-7 of an eight-influence mesh, or is empty.
///
/// Nothing is allocated (an in-place sort per part).
///
/// # Errors
/// [`Error::BadLength`] when `joints` does not hold one set per vertex
/// named in `order`, when `joints1` is neither empty nor that long, or when
/// `counts` does not add up to `order.len()`; [`Error::Corrupt`] when
/// `order` names a vertex past `joints`. Nothing is reordered then.
pub fn group_by_joints(
    joints: &[[u16; 4]],
    joints1: &[[u16; 4]],
    order: &mut [u32],
    counts: &[u32; 9],
) -> Result<(), Error> {
    check_len("order", joints.len(), order.len())?;
    if !joints1.is_empty() {
        check_len("joints1", joints.len(), joints1.len())?;
    }
    let total = counts.iter().map(|&c| c as usize).sum::<usize>();
    check_len("counts", order.len(), total)?;
    if order.iter().any(|&v| v as usize >= joints.len()) {
        return Err(Error::Corrupt {
            what: "the order names a vertex past the joints",
        });
    }
    // Slot `s` of the first `used` slots, most significant first, so that
    // the key orders joint sets lexicographically; unused slots are 0.
    let key = |set: &[u16; 4], used: usize| {
        set.iter().enumerate().fold(0u64, |k, (s, &j)| {
            (k << 16) | if s < used { u64::from(j) } else { 0 }
        })
    };
    let mut first = 0;
    for (used, &count) in counts.iter().enumerate() {
        let part = &mut order[first..first + count as usize];
        first += count as usize;
        part.sort_unstable_by_key(|&v| {
            let v = v as usize;
            let second = joints1.get(v).map_or(0, |j| key(j, used.saturating_sub(4)));
            let (own, used) = (&joints[v], used.min(4));
            // The joint set first, whatever the slots' order: vertices that
            // blend the same joints lie together, and prepared blocks
            // (`SkinBlocks`), which put each vertex's slots in joint order,
            // share their entries; within a set, the slots' own order.
            (
                key(&canonical_joints(own, used), used),
                key(own, used),
                second,
                v,
            )
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    extern crate alloc;

    use alloc::vec;
    use alloc::vec::Vec;

    use super::*;
    use proptest::prelude::*;

    #[test]
    fn slots_count_to_the_last_weighted_one() {
        assert_eq!(slots_used(&[0.0; 4], None), 0);
        assert_eq!(slots_used(&[1.0, 0.0, 0.0, 0.0], None), 1);
        // A zero slot before a weighted one still counts: the kernels blend
        // every slot up to the last weighted one.
        assert_eq!(slots_used(&[0.5, 0.0, 0.5, 0.0], None), 3);
        assert_eq!(slots_used(&[0.25; 4], Some(&[0.0; 4])), 4);
        assert_eq!(slots_used(&[0.2; 4], Some(&[0.1, 0.1, 0.0, 0.0])), 6);
        // Slots 4-7 count even when slots 0-3 leave a gap.
        assert_eq!(
            slots_used(&[0.5, 0.0, 0.0, 0.0], Some(&[0.0, 0.0, 0.0, 0.5])),
            8
        );
    }

    #[test]
    fn a_small_mesh_by_hand() {
        let w = [
            [0.5, 0.5, 0.0, 0.0],   // 2
            [1.0, 0.0, 0.0, 0.0],   // 1
            [0.25; 4],              // 4
            [1.0, 0.0, 0.0, 0.0],   // 1
            [0.5, 0.25, 0.25, 0.0], // 3
            [0.5, 0.5, 0.0, 0.0],   // 2
        ];
        let mut order = [0u32; 6];
        let counts = influence_order(&w, &[], &mut order).unwrap();
        assert_eq!(order, [1, 3, 0, 5, 4, 2]);
        assert_eq!(counts, [0, 2, 2, 1, 1, 0, 0, 0, 0]);
    }

    #[test]
    fn wrong_lengths_are_errors_and_write_nothing() {
        let w = [[1.0, 0.0, 0.0, 0.0]; 3];
        let mut short = [7u32; 2];
        assert_eq!(
            influence_order(&w, &[], &mut short),
            Err(Error::BadLength {
                buffer: "order",
                expected: 3,
                actual: 2
            })
        );
        assert_eq!(short, [7; 2]);
        let mut order = [7u32; 3];
        assert_eq!(
            influence_order(&w, &[[0.0; 4]; 2], &mut order),
            Err(Error::BadLength {
                buffer: "weights1",
                expected: 3,
                actual: 2
            })
        );
        assert_eq!(order, [7; 3]);
        assert_eq!(influence_order(&[], &[], &mut []), Ok([0; 9]));
    }

    #[test]
    fn grouping_a_small_mesh_by_hand() {
        let w = [
            [0.5, 0.5, 0.0, 0.0], // 2
            [1.0, 0.0, 0.0, 0.0], // 1
            [1.0, 0.0, 0.0, 0.0], // 1
            [0.5, 0.5, 0.0, 0.0], // 2
            [1.0, 0.0, 0.0, 0.0], // 1
            [0.5, 0.5, 0.0, 0.0], // 2
        ];
        // Unused slots do not count: vertex 2 joins vertex 4's run.
        let j = [
            [3, 1, 0, 0],
            [5, 0, 0, 0],
            [2, 9, 9, 9],
            [3, 0, 0, 0],
            [2, 0, 0, 0],
            [3, 1, 7, 7],
        ];
        let mut order = [0u32; 6];
        let counts = influence_order(&w, &[], &mut order).unwrap();
        assert_eq!(order, [1, 2, 4, 0, 3, 5]);
        group_by_joints(&j, &[], &mut order, &counts).unwrap();
        assert_eq!(order, [2, 4, 1, 3, 0, 5]);
    }

    #[test]
    fn grouping_errors_reorder_nothing() {
        let j = [[0u16; 4]; 3];
        let mut order = [2u32, 1, 0];
        let mut counts = [0u32; 9];
        counts[1] = 3;
        let bad = |e: Result<(), Error>| assert!(matches!(e, Err(Error::BadLength { .. })));
        bad(group_by_joints(&j[..2], &[], &mut order, &counts));
        bad(group_by_joints(&j, &j[..1], &mut order, &counts));
        counts[2] = 1;
        bad(group_by_joints(&j, &[], &mut order, &counts));
        counts[2] = 0;
        let mut past = [0u32, 1, 3];
        assert_eq!(
            group_by_joints(&j, &[], &mut past, &counts),
            Err(Error::Corrupt {
                what: "the order names a vertex past the joints"
            })
        );
        assert_eq!((order, past), ([2, 1, 0], [0, 1, 3]));
    }

    fn weight_set() -> impl Strategy<Value = [f32; 4]> {
        prop::array::uniform4(prop_oneof![Just(0.0f32), 0.01f32..1.0])
    }

    proptest! {
        /// The order is a permutation, sorted by slots used, stable, and the
        /// counts are the parts' sizes: checked against a sort by key.
        #[test]
        fn order_is_the_stable_sort_by_slots_used(
            w in prop::collection::vec(weight_set(), 0..200),
            eight in any::<bool>(),
            w1_seed in prop::collection::vec(weight_set(), 200),
        ) {
            let w1: Vec<[f32; 4]> = if eight { w1_seed[..w.len()].to_vec() } else { Vec::new() };
            let mut order = vec![0u32; w.len()];
            let counts = influence_order(&w, &w1, &mut order).unwrap();
            let mut expected: Vec<u32> = (0..w.len() as u32).collect();
            expected.sort_by_key(|&v| slots_used(&w[v as usize], w1.get(v as usize)));
            prop_assert_eq!(&order, &expected);
            let mut sizes = [0u32; 9];
            for v in 0..w.len() {
                sizes[slots_used(&w[v], w1.get(v))] += 1;
            }
            prop_assert_eq!(counts, sizes);
        }

        /// Grouping keeps each part's vertices (so the order stays a
        /// permutation sorted by slots used) and sorts them by the set of
        /// joints of their used slots, then by those joints in slot order,
        /// then by index.
        #[test]
        fn grouping_sorts_each_part_by_its_joints(
            w in prop::collection::vec(weight_set(), 0..200),
            eight in any::<bool>(),
            w1_seed in prop::collection::vec(weight_set(), 200),
            j_seed in prop::collection::vec(prop::array::uniform4(0u16..4), 400),
        ) {
            let n = w.len();
            let w1: Vec<[f32; 4]> = if eight { w1_seed[..n].to_vec() } else { Vec::new() };
            let j = &j_seed[..n];
            let j1: &[[u16; 4]] = if eight { &j_seed[200..200 + n] } else { &[] };
            let mut order = vec![0u32; n];
            let counts = influence_order(&w, &w1, &mut order).unwrap();
            let before = order.clone();
            group_by_joints(j, j1, &mut order, &counts).unwrap();
            let used = |v: u32| slots_used(&w[v as usize], w1.get(v as usize));
            // The set of slots 0-3's joints, then those joints in slot
            // order, then slots 4-7's.
            let key = |v: u32| {
                let k = used(v);
                let v = v as usize;
                let mut set: Vec<u16> = j[v][..k.min(4)].to_vec();
                set.sort_unstable();
                let mut key: Vec<u16> = j[v][..k.min(4)].to_vec();
                if eight {
                    key.extend_from_slice(&j1[v][..k.saturating_sub(4)]);
                }
                (set, key)
            };
            let mut first = 0;
            for &c in &counts {
                let part = &order[first..first + c as usize];
                let mut a = part.to_vec();
                let mut b = before[first..first + c as usize].to_vec();
                a.sort_unstable();
                b.sort_unstable();
                prop_assert_eq!(a, b);
                for pair in part.windows(2) {
                    prop_assert!((key(pair[0]), pair[0]) < (key(pair[1]), pair[1]));
                }
                first += c as usize;
            }
        }
    }
}
