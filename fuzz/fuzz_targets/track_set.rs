//! A track set container (`SINEWTRK`) after four sample times:
//! input = four little-endian `f32` times, then the container.
//! `TrackSet::from_bytes` returns an error or a set whose tracks all read
//! back (names, key times strictly increasing, one typed view per track of
//! its own kind and none of another), and which samples at each time, at
//! 0 and past the end: every track by binary search and by cursor (the
//! same bits), and all of them at once in lanes, which agrees with the
//! scalar twin within its stated 1e-5 relative where both are finite.
//! `from_validated_bytes` accepts what `from_bytes` accepted.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sinew_core::track::curve::{Cursor, CurveValue};
use sinew_core::track::store::{reference, Track, TrackKind, TrackSet};
use sinew_core::Quat;

/// Samples `track` as `V` by search and by cursor at each time; panics
/// unless both give the same bits. Returns whether `V` is the track's kind.
fn same_both_ways<V: CurveValue + sinew_core::track::store::TrackValue>(
    track: &Track<'_>,
    times: &[f32],
    bits: impl Fn(V) -> Vec<u32>,
) -> bool {
    let Ok(typed) = track.typed::<V>() else {
        return false;
    };
    let mut cursor = Cursor::default();
    for &t in times {
        let a = bits(typed.sample(t));
        let b = bits(typed.sample_with(&mut cursor, t));
        assert_eq!(a, b, "track {:?} at {t}: search and cursor differ", track.name());
    }
    true
}

fuzz_target!(|data: &[u8]| {
    let (times, container) = sinew_fuzz::times_then_rest(data);
    let bytes = sinew_fuzz::aligned(container);
    let Ok(set) = TrackSet::from_bytes(bytes.as_slice()) else {
        return;
    };
    assert!(TrackSet::from_validated_bytes(bytes.as_slice()).is_ok());
    let mut end = 0.0f32;
    let mut components = 0;
    for i in 0..set.len() {
        let track = set.track(i).expect("a track below len()");
        let keys = track.times();
        assert!(!keys.is_empty(), "track {i} has no keys");
        assert!(keys.iter().all(|t| t.is_finite()));
        assert!(keys.windows(2).all(|w| w[0] < w[1]), "track {i}: keys out of order");
        end = end.max(keys[keys.len() - 1]);
        components += track.kind().components();
        let _ = track.name();
    }
    assert!(set.track(set.len()).is_none());
    assert_eq!(components, set.component_count());

    let at: Vec<f32> = times.into_iter().chain([0.0, end, end + 1.0]).collect();
    for i in 0..set.len() {
        let track = set.track(i).unwrap();
        let kinds = [
            same_both_ways::<f32>(&track, &at, |v| vec![v.to_bits()]),
            same_both_ways::<[f32; 2]>(&track, &at, |v| v.map(f32::to_bits).to_vec()),
            same_both_ways::<[f32; 3]>(&track, &at, |v| v.map(f32::to_bits).to_vec()),
            same_both_ways::<[f32; 4]>(&track, &at, |v| v.map(f32::to_bits).to_vec()),
            same_both_ways::<Quat>(&track, &at, |q| q.to_array().map(f32::to_bits).to_vec()),
        ];
        let own = match track.kind() {
            TrackKind::Float => 0,
            TrackKind::Vec2 => 1,
            TrackKind::Vec3 => 2,
            TrackKind::Vec4 => 3,
            TrackKind::Quat => 4,
            // A kind this target does not know yet: no typed view to check.
            _ => continue,
        };
        for (k, typed) in kinds.into_iter().enumerate() {
            assert_eq!(typed, k == own, "track {i}: typed view {k} for kind {own}");
        }
    }

    let n = set.len();
    let mut cursors = vec![Cursor::default(); n];
    let mut twin_cursors = cursors.clone();
    let (mut lanes, mut twin) = (vec![0.0f32; components], vec![0.0f32; components]);
    assert!(set.sample_all(0.0, &mut cursors[..n.saturating_sub(1)], &mut lanes).is_err() || n == 0);
    for &t in &at {
        set.sample_all(t, &mut cursors, &mut lanes).expect("lengths fit");
        reference::sample_all(&set, t, &mut twin_cursors, &mut twin).expect("lengths fit");
        for (c, (a, b)) in lanes.iter().zip(&twin).enumerate() {
            if a.is_finite() && b.is_finite() {
                let tol = 1e-5 * (1.0 + a.abs().max(b.abs()));
                assert!((a - b).abs() <= tol, "time {t} component {c}: {a} vs twin {b}");
            }
        }
    }
});
