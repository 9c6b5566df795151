//! A raw clip container (`SINEWCLP`) after four sample times: input =
//! four little-endian `f32` times, then the container. `RawClip::from_bytes`
//! returns an error or a clip that samples at each time (and at 0 and its
//! duration) in both time modes: an error exactly for a NaN or infinite
//! time; otherwise a bracket inside the clip, and the scalar twin agrees.
//! For clips whose keys are bounded (below 1e6, rotations not near zero)
//! samples are finite, rotations unit and translations and scales within
//! rounding of the twin's.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sinew_core::clip::{self, RawClip};
use sinew_core::SoaTransform;
use sinew_fuzz::{assert_bracket, assert_finite, floats, max_abs, rotation_norms2, MODES};

/// Keys up to this size, with rotations at least this long, give finite samples.
const BOUND: f32 = 1e6;
const MIN_NORM2: f32 = 1e-6;

fuzz_target!(|data: &[u8]| {
    let (times, container) = sinew_fuzz::times_then_rest(data);
    let bytes = sinew_fuzz::aligned(container);
    let Ok(c) = RawClip::from_bytes(bytes.as_slice()) else {
        return;
    };
    let (n, frames) = (c.soa_count(), c.frame_count());
    assert!((1..=sinew_core::soa_count(sinew_core::MAX_JOINTS)).contains(&n));
    assert!(frames >= 1);
    assert!(c.sample_rate().is_finite() && c.sample_rate() > 0.0);
    assert!(c.duration().is_finite() && c.duration() >= 0.0);
    for f in 0..frames {
        let frame = c.frame(f).expect("frame in range");
        assert_eq!(frame.len(), n);
        assert_finite(frame, "stored frame");
    }
    assert!(c.frame(frames).is_none());
    let bounded = (0..frames).all(|f| {
        let frame = c.frame(f).expect("frame in range");
        max_abs(frame) <= BOUND
            && frame
                .iter()
                .all(|b| rotation_norms2(b).iter().all(|&q| q >= MIN_NORM2))
    });

    let mut out = vec![SoaTransform::IDENTITY; n];
    let mut twin = vec![SoaTransform::IDENTITY; n];
    for t in times.into_iter().chain([0.0, c.duration()]) {
        for mode in MODES {
            let simd = c.sample(t, mode, &mut out);
            let scalar = clip::reference::sample(&c, t, mode, &mut twin);
            if !t.is_finite() {
                assert!(simd.is_err() && scalar.is_err(), "time {t} accepted");
                continue;
            }
            simd.unwrap_or_else(|e| panic!("time {t} {mode:?}: {e}"));
            scalar.unwrap_or_else(|e| panic!("twin, time {t} {mode:?}: {e}"));
            let b = c.locate(t, mode).expect("finite time");
            assert_bracket(&b, frames, t);
            if !bounded {
                continue;
            }
            assert_finite(&out, "sample");
            let m = max_abs(c.frame(b.before).expect("before"))
                .max(max_abs(c.frame(b.after).expect("after")));
            let tol = 1e-5 * (1.0 + m);
            for (block, (o, w)) in out.iter().zip(&twin).enumerate() {
                for n2 in rotation_norms2(o) {
                    assert!((n2 - 1.0).abs() < 1e-4, "time {t}: rotation length² {n2}");
                }
                let (o, w) = (
                    floats(core::slice::from_ref(o)),
                    floats(core::slice::from_ref(w)),
                );
                // Translations (0..12) and scales (28..40): lerps.
                for i in (0..12).chain(28..40) {
                    assert!(
                        (o[i] - w[i]).abs() <= tol,
                        "time {t} {mode:?} block {block} float {i}: {} vs twin {}",
                        o[i],
                        w[i]
                    );
                }
            }
        }
    }
});
