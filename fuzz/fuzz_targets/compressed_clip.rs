//! A compressed clip container (`SINEWCMP`) after four sample times:
//! input = four little-endian `f32` times, then the container.
//! `CompressedClip::from_bytes` returns an error or a clip that samples
//! (with a rest pose when it was compressed with rest-pose defaults, and
//! `sample` without one is then an error) at each time, 0 and its duration
//! in both time modes: an error exactly for a NaN or infinite time;
//! otherwise a bracket inside the clip, no NaN (the format promises none
//! from data), identity padding lanes, and translations and scales within
//! rounding of the scalar twin's. Each time also picks a stored frame to
//! decode exactly.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sinew_core::compressed::{self, CompressedClip, Defaults};
use sinew_core::{Quat, SoaTransform, Transform, Vec3};
use sinew_fuzz::{assert_bracket, assert_no_nan, assert_padding_identity, floats, max_abs, MODES};

/// A plausible rest pose for `joints` joints (finite, unit rotations,
/// identity padding), standing in for a skeleton's.
fn rest_pose(joints: usize) -> Vec<SoaTransform> {
    let mut rest = vec![SoaTransform::IDENTITY; sinew_core::soa_count(joints)];
    for j in 0..joints {
        let a = j as f32 * 0.37;
        let (s, c) = (0.5 * a).sin_cos();
        let t = Transform {
            translation: Vec3::new(0.01 * j as f32, 0.1, -0.05),
            rotation: Quat::new(s * 0.6, s * 0.8, 0.0, c),
            scale: Vec3::new(1.0, 1.0 + 0.001 * j as f32, 1.0),
        };
        rest[j / 4].set(j % 4, &t);
    }
    rest
}

fuzz_target!(|data: &[u8]| {
    let (times, container) = sinew_fuzz::times_then_rest(data);
    let bytes = sinew_fuzz::aligned(container);
    let Ok(c) = CompressedClip::from_bytes(bytes.as_slice()) else {
        return;
    };
    let (joints, n, frames) = (c.joint_count(), c.soa_count(), c.frame_count());
    assert!((1..=sinew_core::MAX_JOINTS).contains(&joints));
    assert_eq!(n, sinew_core::soa_count(joints));
    assert!(frames >= 1);
    assert!(c.sample_rate().is_finite() && c.sample_rate() > 0.0);
    assert!(c.duration().is_finite() && c.duration() >= 0.0);
    let rest = rest_pose(joints);
    let needs_rest = c.defaults() == Defaults::RestPose;

    let mut out = vec![SoaTransform::IDENTITY; n];
    let mut twin = vec![SoaTransform::IDENTITY; n];
    let (mut a, mut b) = (out.clone(), out.clone());
    for t in times.into_iter().chain([0.0, c.duration()]) {
        for mode in MODES {
            if needs_rest {
                assert!(
                    c.sample(t, mode, &mut out).is_err(),
                    "sampled without its rest pose"
                );
            }
            let simd = c.sample_with_rest(t, mode, &rest, &mut out);
            let scalar = compressed::reference::sample(&c, t, mode, &rest, &mut twin);
            if !t.is_finite() {
                assert!(simd.is_err() && scalar.is_err(), "time {t} accepted");
                continue;
            }
            simd.unwrap_or_else(|e| panic!("time {t} {mode:?}: {e}"));
            scalar.unwrap_or_else(|e| panic!("twin, time {t} {mode:?}: {e}"));
            if !needs_rest {
                let mut plain = vec![SoaTransform::IDENTITY; n];
                c.sample(t, mode, &mut plain)
                    .expect("identity defaults need no rest pose");
                assert!(
                    floats(&plain)
                        .iter()
                        .zip(floats(&out))
                        .all(|(x, y)| x.to_bits() == y.to_bits()),
                    "time {t}: sample and sample_with_rest differ"
                );
            }
            assert_no_nan(&out, "sample");
            assert_no_nan(&twin, "twin sample");
            assert_padding_identity(&out, joints, "sample");
            let br = c.locate(t, mode).expect("finite time");
            assert_bracket(&br, frames, t);
            c.decode_frame(br.before, &rest, &mut a)
                .expect("frame before");
            c.decode_frame(br.after, &rest, &mut b)
                .expect("frame after");
            assert_no_nan(&a, "decoded frame");
            let m = max_abs(&a).max(max_abs(&b));
            if !m.is_finite() {
                continue;
            }
            let tol = 1e-5 * (1.0 + m);
            for (block, (o, w)) in out.iter().zip(&twin).enumerate() {
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
        let f = (t.to_bits() as usize) % frames;
        c.decode_frame(f, &rest, &mut out).expect("a stored frame");
        assert_no_nan(&out, "decoded frame");
    }
    assert!(
        c.decode_frame(frames, &rest, &mut out).is_err(),
        "frame past the end"
    );
});
