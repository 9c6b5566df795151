//! Blend spaces: validity, the worked example, weight properties, phase sync.

#[path = "../support/mod.rs"]
mod support;

use proptest::prelude::*;
use sinew_core::clip::{ClipSource, RawClip, TimeMode};
use sinew_core::mix::{sample_blend, BlendSpace1D, BlendSpace2D, PhaseSync, Sample1D, Weights};
use sinew_core::{Error, SoaTransform};
use sinew_std::blend_space::{build_2d, delaunay};
use support::*;

fn s1(position: f32, clip: usize, duration: f32) -> Sample1D<'static> {
    Sample1D {
        position,
        clip,
        duration,
        markers: &[],
    }
}

#[test]
fn validity_1d() {
    assert_eq!(
        BlendSpace1D::<'_, 4>::new(&[]).err(),
        Some(Error::EmptyBlendSpace)
    );
    assert_eq!(
        BlendSpace1D::<'_, 4>::new(&[s1(1.0, 0, 1.0), s1(2.0, 1, 1.0), s1(1.0, 2, 1.0)]).err(),
        Some(Error::DuplicateSample {
            first: 0,
            second: 2
        })
    );
    assert_eq!(
        BlendSpace1D::<'_, 1>::new(&[s1(1.0, 0, 1.0), s1(2.0, 1, 1.0)]).err(),
        Some(Error::CapacityExceeded { capacity: 1 })
    );
    assert!(matches!(
        BlendSpace1D::<'_, 4>::new(&[s1(f32::NAN, 0, 1.0)]),
        Err(Error::NonFinite { .. })
    ));
    assert!(matches!(
        BlendSpace1D::<'_, 4>::new(&[s1(0.0, 0, 0.0)]),
        Err(Error::InvalidParameter { .. })
    ));
    let bad_markers = [
        Sample1D {
            position: 0.0,
            clip: 0,
            duration: 1.0,
            markers: &[0.0, 0.5],
        },
        Sample1D {
            position: 1.0,
            clip: 1,
            duration: 1.0,
            markers: &[0.0],
        },
    ];
    assert!(matches!(
        BlendSpace1D::<'_, 4>::new(&bad_markers),
        Err(Error::InvalidParameter { .. })
    ));
    let space = BlendSpace1D::<'_, 4>::new(&[s1(2.0, 0, 1.0), s1(1.0, 1, 1.0)]).unwrap();
    assert!(matches!(
        space.weights(f32::NAN),
        Err(Error::NonFinite { .. })
    ));
    assert!(matches!(
        PhaseSync::default().advance(&space, &space.weights(1.5).unwrap(), -1.0),
        Err(Error::NonFinite { .. })
    ));
    // Sorted, clamped at both ends.
    assert_eq!(space.samples()[0].clip, 1);
    assert_eq!(space.weights(-5.0).unwrap().clips[0], 1);
    assert_eq!(space.weights(9.0).unwrap().clips[0], 0);
}

#[test]
fn validity_2d() {
    type Space = BlendSpace2D<9, 16>;
    assert_eq!(
        Space::new(&[], &[], &[]).err(),
        Some(Error::EmptyBlendSpace)
    );
    assert_eq!(
        build_2d::<9, 16>(&[], &[]).err(),
        Some(Error::EmptyBlendSpace)
    );
    let collinear = [[0.0, 0.0], [1.0, 1.0], [3.0, 3.0], [-2.0, -2.0]];
    assert_eq!(
        build_2d::<9, 16>(&collinear, &[0, 1, 2, 3]).err(),
        Some(Error::DegenerateBlendSpace)
    );
    assert_eq!(
        Space::new(&collinear[..3], &[0, 1, 2], &[[0, 1, 2]]).err(),
        Some(Error::DegenerateBlendSpace)
    );
    let dup = [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 0.0]];
    assert_eq!(
        build_2d::<9, 16>(&dup, &[0, 1, 2, 3]).err(),
        Some(Error::DuplicateSample {
            first: 1,
            second: 3
        })
    );
    let tri = [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]];
    assert!(matches!(
        Space::new(&tri, &[0, 1, 2], &[[0, 1, 5]]),
        Err(Error::InvalidParameter { .. })
    ));
    assert!(matches!(
        Space::new(&tri, &[0, 1], &[[0, 1, 2]]),
        Err(Error::BadLength { .. })
    ));
    assert_eq!(
        BlendSpace2D::<2, 4>::new(&tri, &[0, 1, 2], &[[0, 1, 2]]).err(),
        Some(Error::CapacityExceeded { capacity: 2 })
    );
    let space = Space::new(&tri, &[0, 1, 2], &[[0, 1, 2]]).unwrap();
    assert!(matches!(
        space.weights([f32::NAN, 0.0]),
        Err(Error::NonFinite { .. })
    ));
    assert!(matches!(
        space.weights([0.0, f32::INFINITY]),
        Err(Error::NonFinite { .. })
    ));
}

#[test]
fn worked_example_through_delaunay() {
    let pts = [[0.0, 4.5], [0.0, 1.5], [4.5, 0.0]];
    let space = build_2d::<3, 1>(&pts, &[0, 1, 2]).unwrap();
    let w = space.weights([1.0, 2.5]).unwrap();
    for (s, e) in [0.444, 0.333, 0.222].iter().enumerate() {
        assert!((w.of_sample(s) - e).abs() < 1e-3, "{w:?}");
    }
}

#[test]
fn outside_the_hull_is_clamped() {
    let pts: Vec<[f32; 2]> = (0..9)
        .map(|i| [(i % 3) as f32 - 1.0, (i / 3) as f32 - 1.0])
        .collect();
    let clips: Vec<usize> = (0..9).collect();
    let space = build_2d::<9, 16>(&pts, &clips).unwrap();
    // Far right of the middle row: all weight on (1, 0), sample 5.
    let w = space.weights([10.0, 0.0]).unwrap();
    assert!((w.of_sample(5) - 1.0).abs() < 1e-6, "{w:?}");
    // Below the bottom edge between samples 0 and 1.
    let w = space.weights([-0.5, -3.0]).unwrap();
    assert!((w.of_sample(0) - 0.5).abs() < 1e-6 && (w.of_sample(1) - 0.5).abs() < 1e-6);
}

#[test]
fn sync_markers_keep_feet_in_phase() {
    // A starts on the left foot (left at 0, right at 0.5); B starts on the
    // right foot (right at 0.3, left at 0.8). Listed as [left, right].
    let samples = [
        Sample1D {
            position: 1.0,
            clip: 0,
            duration: 1.0,
            markers: &[0.0, 0.5],
        },
        Sample1D {
            position: 3.0,
            clip: 1,
            duration: 0.6,
            markers: &[0.8, 0.3],
        },
    ];
    let space = BlendSpace1D::<'_, 2>::new(&samples).unwrap();
    let w = space.weights(2.0).unwrap();
    let mut sync = PhaseSync::default();
    // Phase 0: both on the left plant.
    assert!((sync.clip_time(&space, 0) - 0.0).abs() < 1e-6);
    assert!((sync.clip_time(&space, 1) - 0.8 * 0.6).abs() < 1e-6);
    // Half-way through segment 0 for both.
    let seg0 = 0.5 * (0.5 * 1.0) + 0.5 * (0.5 * 0.6);
    sync.advance(&space, &w, seg0 * 0.5).unwrap();
    assert!((sync.phase - 0.5).abs() < 1e-5);
    // Right plant at the same moment.
    sync.advance(&space, &w, seg0 * 0.5).unwrap();
    assert!((sync.phase - 1.0).abs() < 1e-5);
    assert!((sync.clip_time(&space, 0) - 0.5).abs() < 1e-5);
    assert!((sync.clip_time(&space, 1) - 0.3 * 0.6).abs() < 1e-5);
}

fn points() -> impl Strategy<Value = Vec<[f32; 2]>> {
    prop::collection::vec(
        (-5.0f32..5.0, -5.0f32..5.0).prop_map(|(x, y)| [x, y]),
        3..10,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Inside the hull: weights >= 0, sum to 1 and reproduce the input point.
    #[test]
    fn weights_reproduce_the_point(pts in points(), pick in any::<prop::sample::Index>(), u in 0.0f32..1.0, v in 0.0f32..1.0) {
        let Ok(tris) = delaunay(&pts) else { return Ok(()); }; // collinear draws are rejected
        let clips: Vec<usize> = (0..pts.len()).collect();
        let space = BlendSpace2D::<16, 32>::new(&pts, &clips, &tris);
        // Sliver triangles can be refused as degenerate; that is the contract.
        let Ok(space) = space else { return Ok(()); };
        let t = tris[pick.index(tris.len())];
        let (u, v) = if u + v > 1.0 { (1.0 - u, 1.0 - v) } else { (u, v) };
        let [a, b, c] = t.map(|k| pts[k as usize]);
        let p = [a[0] + u * (b[0] - a[0]) + v * (c[0] - a[0]), a[1] + u * (b[1] - a[1]) + v * (c[1] - a[1])];
        let w = space.weights(p).unwrap();
        let sum: f32 = w.weights.iter().sum();
        prop_assert!((sum - 1.0).abs() < 1e-5);
        prop_assert!(w.weights.iter().all(|&x| x >= 0.0));
        let q = w.iter().fold([0.0f32; 2], |acc, (s, _, x)| [acc[0] + x * pts[s][0], acc[1] + x * pts[s][1]]);
        // The documented precision: a few f32 epsilons times the triangle's
        // condition (|e1|₁ |e2|₁ / |det|, up to 1e6 for the slivers `new`
        // accepts) times its size, on top of 1e-3.
        let (e1, e2) = ([b[0] - a[0], b[1] - a[1]], [c[0] - a[0], c[1] - a[1]]);
        let det = e1[0] * e2[1] - e2[0] * e1[1];
        let cond = (e1[0].abs() + e1[1].abs()) * (e2[0].abs() + e2[1].abs()) / det.abs();
        let size = [a, b, c].iter().flat_map(|x| [x[0].abs(), x[1].abs()]).fold(1.0f32, f32::max);
        let tol = 1e-3 + 4.0 * f32::EPSILON * cond * size;
        prop_assert!((q[0] - p[0]).abs() < tol && (q[1] - p[1]).abs() < tol, "{q:?} {p:?} (tolerance {tol})");
    }

    /// Anywhere: weights >= 0 and sum to 1.
    #[test]
    fn weights_sum_to_one_everywhere(pts in points(), p in (-20.0f32..20.0, -20.0f32..20.0)) {
        let Ok(space) = build_2d::<16, 32>(&pts, &(0..pts.len()).collect::<Vec<_>>()) else { return Ok(()); };
        let w = space.weights([p.0, p.1]).unwrap();
        let sum: f32 = w.weights.iter().sum();
        prop_assert!((sum - 1.0).abs() < 1e-5 && w.weights.iter().all(|&x| x >= 0.0));
    }

    /// 1D: the synced cycle takes Σ wᵢ Dᵢ (the weighted mean of the lengths):
    /// advancing by it returns to the same phase; weights sum to 1.
    #[test]
    fn synced_cycle_is_the_weighted_mean(d in prop::collection::vec(0.3f32..2.0, 2..5), x in -1.0f32..6.0, start in 0.0f32..0.99) {
        let samples: Vec<Sample1D<'_>> = d.iter().enumerate().map(|(i, &d)| s1(i as f32 * 1.5, i, d)).collect();
        let space = BlendSpace1D::<'_, 8>::new(&samples).unwrap();
        let w = space.weights(x).unwrap();
        prop_assert!((w.weights.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        let mean: f32 = w.iter().map(|(s, _, wt)| wt * d[s]).sum();
        prop_assert!((space.cycle_duration(&w) - mean).abs() < 1e-5);
        let mut sync = PhaseSync { phase: start };
        sync.advance(&space, &w, mean).unwrap();
        let diff = (sync.phase - start).abs();
        prop_assert!(diff < 1e-4 || (diff - 1.0).abs() < 1e-4, "{} {}", sync.phase, start);
        // Many cycles at once: only the remainder moves the phase.
        let mut far = PhaseSync { phase: start };
        far.advance(&space, &w, mean * 7.25).unwrap();
        let expect = (start + 0.25) % 1.0;
        let gap = (far.phase - expect).abs();
        prop_assert!(gap < 1e-3 || (gap - 1.0).abs() < 1e-3, "{} {}", far.phase, expect);
        // Each clip time is its own normalised phase times its length.
        for (s, _, _) in w.iter() {
            prop_assert!((sync.clip_time(&space, s) - sync.phase * d[s]).abs() < 1e-4);
        }
    }

    /// The exact-speed solve gives the requested speed once cycles are synced.
    #[test]
    fn exact_speed(d in prop::collection::vec(0.3f32..2.0, 3), v in 0.5f32..4.5) {
        let samples: Vec<Sample1D<'_>> = d.iter().enumerate().map(|(i, &d)| s1(0.5 + 2.0 * i as f32, i, d)).collect();
        let space = BlendSpace1D::<'_, 4>::new(&samples).unwrap();
        let w = space.weights_for_speed(v).unwrap();
        let metres: f32 = w.iter().map(|(s, _, x)| x * samples[s].position * d[s]).sum();
        prop_assert!((metres / space.cycle_duration(&w) - v).abs() < 1e-4);
    }
}

/// Area of the convex hull (Andrew's monotone chain), in f64.
fn hull_area(pts: &[[f32; 2]]) -> f64 {
    let mut p: Vec<[f64; 2]> = pts.iter().map(|q| [q[0] as f64, q[1] as f64]).collect();
    p.sort_by(|a, b| a[0].total_cmp(&b[0]).then(a[1].total_cmp(&b[1])));
    let cross = |o: [f64; 2], a: [f64; 2], b: [f64; 2]| {
        (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])
    };
    let mut hull: Vec<[f64; 2]> = Vec::new();
    for pass in 0..2 {
        let start = hull.len();
        let iter: Box<dyn Iterator<Item = &[f64; 2]>> = if pass == 0 {
            Box::new(p.iter())
        } else {
            Box::new(p.iter().rev())
        };
        for &q in iter {
            while hull.len() >= start + 2
                && cross(hull[hull.len() - 2], hull[hull.len() - 1], q) <= 0.0
            {
                hull.pop();
            }
            hull.push(q);
        }
        hull.pop();
    }
    let n = hull.len();
    (0..n)
        .map(|i| {
            let (a, b) = (hull[i], hull[(i + 1) % n]);
            a[0] * b[1] - b[0] * a[1]
        })
        .sum::<f64>()
        .abs()
        * 0.5
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// The triangles tile the convex hull exactly (no gap, no overlap).
    #[test]
    fn delaunay_tiles_the_hull(pts in points()) {
        let Ok(tris) = delaunay(&pts) else { return Ok(()); };
        let (area, hull) = (triangles_area(&pts, &tris), hull_area(&pts));
        prop_assert!((area - hull).abs() <= 1e-6 * hull.max(1.0), "{area} vs {hull}");
    }
}

/// Total area of `tris` over `pts`, in f64 from the f32 coordinates (the
/// differences too: a sliver's area taken from f32 differences can be off
/// by more than the test above tolerates).
fn triangles_area(pts: &[[f32; 2]], tris: &[[u16; 3]]) -> f64 {
    tris.iter()
        .map(|t| {
            let [a, b, c] = t.map(|k| pts[k as usize].map(f64::from));
            ((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])).abs() * 0.5
        })
        .sum()
}

/// A sliver for the property test above: one triangle whose area (0.35) is
/// a small difference of products near 11.
#[test]
fn delaunay_tiles_a_sliver() {
    let pts = [
        [3.391185, 1.512933],
        [-2.9268432, -4.176429],
        [4.870632, 2.9560854],
    ];
    let tris = delaunay(&pts).unwrap();
    let (area, hull) = (triangles_area(&pts, &tris), hull_area(&pts));
    assert!((area - hull).abs() <= 1e-9 * hull, "{area} vs {hull}");
}

/// A point 4e-5 inside an 8.7-long hull edge. The sliver between them has a
/// circumcircle wider than Bowyer–Watson's super triangle, so it goes with
/// the super triangle's fan, and queries in it would fall outside every
/// triangle unless the builder closes the outline over the hull.
#[test]
fn delaunay_covers_a_point_just_inside_a_hull_edge() {
    let pts = [
        [-4.1316137, 4.277826],
        [0.0, 0.0],
        [4.531049, 4.2207856],
        [3.4332316, 4.227987],
    ];
    let tris = delaunay(&pts).unwrap();
    let (area, hull) = (triangles_area(&pts, &tris), hull_area(&pts));
    assert!((area - hull).abs() <= 1e-9 * hull, "{area} vs {hull}");
    // The sample just inside the edge is a vertex of the triangulation.
    assert!(tris.iter().flatten().any(|&k| k == 3));
}

/// Plays weights `w` at normalised time `phase` of each clip.
fn play<C: ClipSource>(clips: &[C], w: &Weights, time: impl Fn(usize) -> f32) -> Vec<SoaTransform> {
    let rest = humanoid().skeleton.view().rest_pose();
    let mut scratch = vec![SoaTransform::IDENTITY; 3 * rest.len()];
    let mut out = vec![SoaTransform::IDENTITY; rest.len()];
    sample_blend(clips, w, time, TimeMode::Loop, rest, &mut scratch, &mut out).unwrap();
    out
}

/// The humanoid's walk, jog and run in a synced 1D blend space and a 2D
/// one, played from raw and from compressed clips: every joint within the
/// compressor's object-space bound, over a second of play.
#[test]
fn blend_spaces_play_compressed_clips_like_raw_ones() {
    let h = humanoid();
    let skel = h.skeleton.view();
    let raw: Vec<RawClip<'_>> = h.clips.iter().map(|c| c.view()).collect();
    let (owned, opts) = humanoid_compressed();
    let packed: Vec<_> = owned.iter().map(|c| c.view()).collect();
    let samples: Vec<Sample1D<'static>> = raw
        .iter()
        .enumerate()
        .map(|(k, c)| s1(1.0 + 1.5 * k as f32, k, c.duration()))
        .collect();
    let space = BlendSpace1D::<'_, 3>::new(&samples).unwrap();
    let mut sync = PhaseSync::default();
    let plane = build_2d::<4, 4>(
        &[[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]],
        &[0, 1, 2, 0],
    )
    .unwrap();
    let tol = opts.error * 1.5;
    for f in 0..30 {
        let x = 1.0 + 0.1 * f as f32;
        let w = space.weights(x).unwrap();
        sync.advance(&space, &w, 1.0 / 30.0).unwrap();
        let time = |s: usize| sync.clip_time(&space, s);
        assert_model_close(&skel, &play(&raw, &w, time), &play(&packed, &w, time), tol);
        let w2 = plane.weights([0.03 * f as f32, 0.5]).unwrap();
        let t = f as f32 / 30.0;
        let a = play(&raw, &w2, |_| t);
        assert_model_close(&skel, &a, &play(&packed, &w2, |_| t), tol);
    }
    // Rest-pose-stripped clips need the rest pose.
    let w = space.weights(2.0).unwrap();
    let n = skel.soa_count();
    let mut scratch = vec![SoaTransform::IDENTITY; 3 * n];
    let mut out = vec![SoaTransform::IDENTITY; n];
    let no_rest = sample_blend(
        &packed,
        &w,
        |_| 0.0,
        TimeMode::Loop,
        &[],
        &mut scratch[..0],
        &mut out,
    );
    assert!(matches!(no_rest, Err(Error::BadLength { .. })));
    assert_eq!(
        sample_blend(
            &packed,
            &w,
            |_| 0.0,
            TimeMode::Loop,
            skel.rest_pose(),
            &mut scratch[1..],
            &mut out
        ),
        Err(Error::BadLength {
            buffer: "blend-space scratch",
            expected: 3 * n,
            actual: 3 * n - 1
        })
    );
}

/// Blend-space players are plain values: they sit in `static`s and run.
#[test]
fn blend_space_players_live_in_statics() {
    use std::sync::Mutex;
    fn assert_static_send<T: 'static + Send>() {}
    assert_static_send::<PhaseSync>();
    assert_static_send::<BlendSpace1D<'static, 4>>();
    assert_static_send::<BlendSpace2D<4, 4>>();
    static SYNC: Mutex<PhaseSync> = Mutex::new(PhaseSync { phase: 0.0 });
    static PLANE: Mutex<Option<BlendSpace2D<3, 1>>> = Mutex::new(None);
    let samples = [s1(0.0, 0, 1.0), s1(1.0, 1, 2.0)];
    let space = BlendSpace1D::<'_, 2>::new(&samples).unwrap();
    let w = space.weights(0.5).unwrap();
    SYNC.lock().unwrap().advance(&space, &w, 0.75).unwrap();
    assert!((SYNC.lock().unwrap().phase - 0.5).abs() < 1e-6);
    let mut plane = PLANE.lock().unwrap();
    *plane = Some(build_2d(&[[0.0, 4.5], [0.0, 1.5], [4.5, 0.0]], &[0, 1, 2]).unwrap());
    let w = plane.as_ref().unwrap().weights([1.0, 2.5]).unwrap();
    assert!((w.of_sample(0) - 0.444).abs() < 1e-3);
}
