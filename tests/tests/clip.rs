//! Raw clip sampling: validity, SIMD vs scalar reference, an independent
//! sampler, exact frames, the loop seam, and the procedural gait clips.

#[path = "../support/mod.rs"]
mod support;

use proptest::prelude::*;
use sinew_core::clip::{self, RawClip, TimeMode};
use sinew_core::{soa_count, Error, Quat, SoaTransform, Transform, Vec3};
use support::*;

type SampleFn = fn(&RawClip<'_>, f32, TimeMode, &mut [SoaTransform]) -> Result<(), Error>;

fn simd(c: &RawClip<'_>, t: f32, m: TimeMode, out: &mut [SoaTransform]) -> Result<(), Error> {
    c.sample(t, m, out)
}

const KERNELS: [(&str, SampleFn); 2] = [("simd", simd), ("reference", clip::reference::sample)];

/// Frames of scalar transforms, packed frame after frame.
fn keys_of(frames: &[Vec<Transform>]) -> Vec<SoaTransform> {
    frames.iter().flat_map(|f| to_soa(f)).collect()
}

fn sample(kernel: SampleFn, c: &RawClip<'_>, t: f32, mode: TimeMode) -> Vec<SoaTransform> {
    let mut out = sentinel_pose(c.soa_count(), 7.0);
    kernel(c, t, mode, &mut out).unwrap();
    out
}

/// An independent sampler: maps the time into the clip in f64, then lerps
/// and nlerps (short arc) the two bracketing frames, written from scratch.
fn expected(
    frames: &[Vec<Transform>],
    rate: f32,
    duration: f32,
    t: f32,
    mode: TimeMode,
) -> Vec<Transform> {
    let last = frames.len() - 1;
    if last == 0 {
        return frames[0].clone();
    }
    let d = f64::from(duration);
    let t = f64::from(t);
    let tt = match mode {
        TimeMode::Loop => t.rem_euclid(d),
        TimeMode::Clamp => t.clamp(0.0, d),
    };
    let f = (tt * f64::from(rate)).clamp(0.0, last as f64);
    let i0 = (f.floor() as usize).min(last);
    let i1 = (i0 + 1).min(last);
    let alpha = (f - i0 as f64) as f32;
    let mix = |a: f32, b: f32| a + (b - a) * alpha;
    frames[i0]
        .iter()
        .zip(&frames[i1])
        .map(|(a, b)| {
            let qb = if a.rotation.dot(b.rotation) < 0.0 {
                -b.rotation
            } else {
                b.rotation
            };
            let q = Quat::new(
                mix(a.rotation.x, qb.x),
                mix(a.rotation.y, qb.y),
                mix(a.rotation.z, qb.z),
                mix(a.rotation.w, qb.w),
            );
            let len = (q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w).sqrt();
            Transform::new(
                Vec3::new(
                    mix(a.translation.x, b.translation.x),
                    mix(a.translation.y, b.translation.y),
                    mix(a.translation.z, b.translation.z),
                ),
                Quat::new(q.x / len, q.y / len, q.z / len, q.w / len),
                Vec3::new(
                    mix(a.scale.x, b.scale.x),
                    mix(a.scale.y, b.scale.y),
                    mix(a.scale.z, b.scale.z),
                ),
            )
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Validity
// ---------------------------------------------------------------------------

#[test]
fn validity_sample_rate_and_empty_keys() {
    let keys = vec![SoaTransform::IDENTITY; 6];
    for rate in [0.0, -0.0, -30.0, f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        assert_eq!(
            RawClip::new(rate, 2, &keys).map(|_| ()),
            Err(Error::InvalidSampleRate),
            "rate {rate}"
        );
    }
    assert_eq!(
        RawClip::new(30.0, 2, &[]).map(|_| ()),
        Err(Error::InvalidSampleRate)
    );
    assert_eq!(
        RawClip::new(30.0, 0, &keys).map(|_| ()),
        Err(Error::InvalidSampleRate)
    );
    assert!(RawClip::new(f32::MIN_POSITIVE, 2, &keys).is_ok());
    // A positive rate so small that the duration overflows to infinity.
    let tiny = f32::from_bits(1);
    assert_eq!(
        RawClip::new(tiny, 2, &keys).map(|_| ()),
        Err(Error::InvalidSampleRate)
    );
}

#[test]
fn validity_keys_not_whole_frames() {
    for (soa, len) in [(2usize, 5usize), (2, 1), (3, 7), (4, 2)] {
        let keys = vec![SoaTransform::IDENTITY; len];
        assert_eq!(
            RawClip::new(30.0, soa, &keys).map(|_| ()),
            Err(Error::BadLength {
                buffer: "clip keys",
                expected: len / soa * soa,
                actual: len,
            }),
            "{len} keys of {soa} blocks"
        );
    }
}

#[test]
fn validity_non_finite_key() {
    let bad_values = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY];
    for v in bad_values {
        // Anywhere: translation, rotation, scale, and padding lanes too.
        for (block, lane, part) in [(0usize, 0usize, 0u8), (3, 1, 1), (5, 3, 2), (1, 3, 0)] {
            let mut keys = vec![SoaTransform::IDENTITY; 6];
            let mut t = keys[block].get(lane);
            match part {
                0 => t.translation.y = v,
                1 => t.rotation.w = v,
                _ => t.scale.z = v,
            }
            keys[block].set(lane, &t);
            assert_eq!(
                RawClip::new(30.0, 2, &keys).map(|_| ()),
                Err(Error::NonFinite { what: "clip key" }),
                "{v} in block {block} lane {lane}"
            );
        }
    }
}

#[test]
fn validity_sample_output_length_and_time() {
    let keys = vec![SoaTransform::IDENTITY; 3 * 4];
    let c = RawClip::new(30.0, 3, &keys).unwrap();
    for (name, kernel) in KERNELS {
        for len in [0, 2, 4, 12] {
            let mut out = sentinel_pose(len, 7.0);
            let before = out.clone();
            for t in [0.0, 0.05, f32::NAN] {
                assert_eq!(
                    kernel(&c, t, TimeMode::Loop, &mut out),
                    Err(Error::BadLength {
                        buffer: "output",
                        expected: 3,
                        actual: len
                    }),
                    "{name}"
                );
            }
            assert_eq!(out, before, "{name}: output written on error");
        }
        for t in [f32::NAN, -f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            for mode in [TimeMode::Loop, TimeMode::Clamp] {
                let mut out = sentinel_pose(3, 7.0);
                let before = out.clone();
                assert_eq!(
                    kernel(&c, t, mode, &mut out),
                    Err(Error::NonFinite { what: "time" }),
                    "{name} t={t}"
                );
                assert_eq!(out, before, "{name}: output written on error");
            }
        }
    }
    assert_eq!(
        c.locate(f32::NAN, TimeMode::Clamp),
        Err(Error::NonFinite { what: "time" })
    );
}

// ---------------------------------------------------------------------------
// Random clips
// ---------------------------------------------------------------------------

#[derive(Clone, Debug)]
struct ClipCase {
    joints: usize,
    rate: f32,
    frames: Vec<Vec<Transform>>,
}

impl ClipCase {
    fn keys(&self) -> Vec<SoaTransform> {
        keys_of(&self.frames)
    }

    fn duration(&self) -> f32 {
        (self.frames.len() - 1) as f32 / self.rate
    }
}

/// Random clips: 1..=20 joints, 1..=10 frames of unrelated random poses (so
/// neighbouring rotations can be far apart or on opposite hemispheres).
/// With `looping`, the last frame repeats the first.
fn clip_case(looping: bool) -> impl Strategy<Value = ClipCase> {
    (1usize..=20, 1usize..=10, 5.0f32..60.0)
        .prop_flat_map(|(joints, frames, rate)| {
            (
                Just(joints),
                Just(rate),
                prop::collection::vec(transforms(joints, 0.5, 2.0), frames),
            )
        })
        .prop_map(move |(joints, rate, mut frames)| {
            if looping && frames.len() > 1 {
                let first = frames[0].clone();
                *frames.last_mut().unwrap() = first;
            }
            ClipCase {
                joints,
                rate,
                frames,
            }
        })
}

fn time_for(duration: f32) -> impl Strategy<Value = f32> {
    let d = duration.max(1e-3);
    prop_oneof![
        3 => -3.0 * d..3.0 * d,
        1 => -1000.0f32..1000.0,
        1 => prop_oneof![Just(1e6f32), Just(-1e6f32), Just(123_456.79f32)],
        1 => (0i32..12).prop_map(move |k| k as f32 * d * 0.25),
        1 => Just(0.0f32),
        1 => Just(-0.0f32),
        1 => Just(duration),
    ]
}

fn mode() -> impl Strategy<Value = TimeMode> {
    prop_oneof![Just(TimeMode::Loop), Just(TimeMode::Clamp)]
}

fn case_and_time(looping: bool) -> impl Strategy<Value = (ClipCase, f32, TimeMode)> {
    clip_case(looping).prop_flat_map(|c| {
        let d = c.duration();
        (Just(c), time_for(d), mode())
    })
}

// ---------------------------------------------------------------------------
// Correctness
// ---------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// The SIMD sampler equals its scalar twin on every lane, at any time.
    #[test]
    fn simd_matches_reference((case, t, mode) in case_and_time(false)) {
        let keys = case.keys();
        let c = RawClip::new(case.rate, soa_count(case.joints), &keys).unwrap();
        let a = all_lanes(&sample(simd, &c, t, mode));
        let b = all_lanes(&sample(clip::reference::sample, &c, t, mode));
        for (j, (x, y)) in a.iter().zip(&b).enumerate() {
            prop_assert!(transform_close(x, y, TOL), "t={} joint {}:\n  {:?}\n  {:?}", t, j, x, y);
        }
    }

    /// Clamped sampling of any clip, and looped sampling of a clip whose last
    /// frame repeats its first, agree with an independent sampler.
    #[test]
    fn matches_independent_sampler(
        (case, t, mode) in prop_oneof![
            case_and_time(false).prop_map(|(c, t, _)| (c, t, TimeMode::Clamp)),
            case_and_time(true).prop_map(|(c, t, _)| (c, t, TimeMode::Loop)),
        ]
    ) {
        let keys = case.keys();
        let c = RawClip::new(case.rate, soa_count(case.joints), &keys).unwrap();
        prop_assert_eq!(c.frame_count(), case.frames.len());
        prop_assert!((c.duration() - case.duration()).abs() <= 1e-6 * case.duration().max(1.0));
        let expect = expected(&case.frames, case.rate, c.duration(), t, mode);
        for (name, kernel) in KERNELS {
            let got = to_transforms(&sample(kernel, &c, t, mode), case.joints);
            for (j, (x, y)) in got.iter().zip(&expect).enumerate() {
                prop_assert!(transform_close(x, y, 1e-4), "{} t={} joint {}:\n  {:?}\n  {:?}", name, t, j, x, y);
            }
        }
    }

    /// Sampling exactly at a frame's time returns the stored frame; clamped
    /// times before the start and after the end hold the first and last frame.
    #[test]
    fn frame_times_return_stored_frames(case in clip_case(false), before in 0.0f32..100.0, after in 0.0f32..100.0) {
        let keys = case.keys();
        let c = RawClip::new(case.rate, soa_count(case.joints), &keys).unwrap();
        let last = case.frames.len() - 1;
        for (name, kernel) in KERNELS {
            for (i, frame) in case.frames.iter().enumerate() {
                let t = i as f32 / case.rate;
                let modes: &[TimeMode] = if i < last { &[TimeMode::Clamp, TimeMode::Loop] } else { &[TimeMode::Clamp] };
                for &mode in modes {
                    let got = to_transforms(&sample(kernel, &c, t, mode), case.joints);
                    for (j, (x, y)) in got.iter().zip(frame).enumerate() {
                        prop_assert!(transform_close(x, y, TOL), "{} frame {} {:?} joint {}:\n  {:?}\n  {:?}", name, i, mode, j, x, y);
                    }
                }
            }
            for (t, frame) in [(-before - 1e-3, 0), (c.duration() + after + 1e-3, last)] {
                let got = to_transforms(&sample(kernel, &c, t, TimeMode::Clamp), case.joints);
                for (j, (x, y)) in got.iter().zip(&case.frames[frame]).enumerate() {
                    prop_assert!(transform_close(x, y, TOL), "{} t={} joint {}:\n  {:?}\n  {:?}", name, t, j, x, y);
                }
            }
        }
    }

    /// Loop seam: time `duration` (and whole multiples, and their negatives)
    /// samples like time 0.
    #[test]
    fn loop_seam(case in clip_case(true), k in 1i32..5) {
        let keys = case.keys();
        let c = RawClip::new(case.rate, soa_count(case.joints), &keys).unwrap();
        let d = c.duration();
        for (name, kernel) in KERNELS {
            let zero = sample(kernel, &c, 0.0, TimeMode::Loop);
            let want = to_transforms(&zero, case.joints);
            for (j, (x, y)) in want.iter().zip(&case.frames[0]).enumerate() {
                prop_assert!(transform_close(x, y, TOL), "{} joint {}", name, j);
            }
            let at_d = sample(kernel, &c, d, TimeMode::Loop);
            prop_assert_eq!(&at_d, &zero, "{}: t = duration", name);
            for t in [k as f32 * d, -(k as f32) * d, -d] {
                let got = to_transforms(&sample(kernel, &c, t, TimeMode::Loop), case.joints);
                for (j, (x, y)) in got.iter().zip(&want).enumerate() {
                    prop_assert!(transform_close(x, y, 1e-4), "{} t={} joint {}:\n  {:?}\n  {:?}", name, t, j, x, y);
                }
            }
        }
    }

    /// Sampled rotations are unit whatever the time.
    #[test]
    fn sampled_rotations_are_unit((case, t, mode) in case_and_time(false)) {
        let keys = case.keys();
        let c = RawClip::new(case.rate, soa_count(case.joints), &keys).unwrap();
        for tr in to_transforms(&sample(simd, &c, t, mode), case.joints) {
            prop_assert!((tr.rotation.length() - 1.0).abs() <= TOL, "|q| = {}", tr.rotation.length());
        }
    }
}

#[test]
fn single_frame_clip_is_constant() {
    let frame = vec![
        Transform::new(
            Vec3::new(1.0, 2.0, 3.0),
            Quat::from_rotation_y(0.7),
            Vec3::splat(2.0)
        );
        5
    ];
    let keys = keys_of(std::slice::from_ref(&frame));
    let c = RawClip::new(30.0, 2, &keys).unwrap();
    assert_eq!(c.frame_count(), 1);
    assert_eq!(c.duration(), 0.0);
    for (name, kernel) in KERNELS {
        for t in [0.0, -5.0, 3.3, 1e6] {
            for mode in [TimeMode::Loop, TimeMode::Clamp] {
                let got = to_transforms(&sample(kernel, &c, t, mode), 5);
                for x in &got {
                    assert!(transform_close(x, &frame[0], 1e-6), "{name} t={t}: {x:?}");
                }
            }
        }
    }
}

#[test]
fn halfway_between_frames() {
    // Two frames 1/10 s apart: at 0.05 s, translation is the midpoint and the
    // rotation is half-way (nlerp at 0.5 is exact), taking the short arc even
    // when the second key is stored with the opposite sign.
    let a = vec![Transform::from_translation_rotation(Vec3::ZERO, Quat::IDENTITY); 3];
    let q = Quat::from_rotation_z(80f32.to_radians());
    for qb in [q, -q] {
        let b = vec![Transform::new(Vec3::new(2.0, 0.0, -4.0), qb, Vec3::splat(3.0)); 3];
        let keys = keys_of(&[a.clone(), b]);
        let c = RawClip::new(10.0, 1, &keys).unwrap();
        for (name, kernel) in KERNELS {
            let got = to_transforms(&sample(kernel, &c, 0.05, TimeMode::Clamp), 3);
            for t in &got {
                assert!(
                    vec_close(t.translation, Vec3::new(1.0, 0.0, -2.0), 1e-6),
                    "{name}: {t:?}"
                );
                assert!(vec_close(t.scale, Vec3::splat(2.0), 1e-6), "{name}: {t:?}");
                assert!(
                    quat_close(t.rotation, Quat::from_rotation_z(40f32.to_radians()), 1e-6),
                    "{name}: {t:?}"
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------
// The procedural gait clips
// ---------------------------------------------------------------------------

#[test]
fn gait_clips_are_unit_distinct_and_seamless() {
    let h = humanoid();
    let skel = h.skeleton.view();
    let n = skel.joint_count();
    let mut durations = Vec::new();
    for owned in &h.clips {
        let c = owned.view();
        assert_eq!(c.soa_count(), skel.soa_count(), "{}", owned.name);
        assert!(c.frame_count() > 2, "{}", owned.name);
        // First frame == last frame, bit for bit: the loop has no seam.
        assert_eq!(
            c.frame(0).unwrap(),
            c.frame(c.frame_count() - 1).unwrap(),
            "{}",
            owned.name
        );
        // Every stored rotation is unit, and so is every sampled one.
        for f in 0..c.frame_count() {
            for (j, t) in to_transforms(c.frame(f).unwrap(), n).iter().enumerate() {
                assert!(
                    (t.rotation.length() - 1.0).abs() < 1e-5,
                    "{} frame {f} joint {j}",
                    owned.name
                );
                assert!(t.is_finite());
            }
        }
        let mut out = vec![SoaTransform::IDENTITY; c.soa_count()];
        for i in 0..97 {
            let t = c.duration() * (i as f32 / 37.0 - 0.5);
            c.sample(t, TimeMode::Loop, &mut out).unwrap();
            for t in to_transforms(&out, n) {
                assert!((t.rotation.length() - 1.0).abs() < 1e-5, "{}", owned.name);
            }
        }
        // The seam: sampling at the duration equals sampling at 0, and just
        // before the end is close to the start.
        let mut a = vec![SoaTransform::IDENTITY; c.soa_count()];
        let mut b = a.clone();
        c.sample(0.0, TimeMode::Loop, &mut a).unwrap();
        c.sample(c.duration(), TimeMode::Loop, &mut b).unwrap();
        assert_eq!(a, b, "{}", owned.name);
        c.sample(c.duration() - 1e-4, TimeMode::Loop, &mut b)
            .unwrap();
        assert_poses_close(&a, &b, n, 1e-2);
        // The clip moves: some joint differs between the start and mid-cycle.
        c.sample(c.duration() * 0.5, TimeMode::Loop, &mut b)
            .unwrap();
        let (ta, tb) = (to_transforms(&a, n), to_transforms(&b, n));
        assert!(
            ta.iter()
                .zip(&tb)
                .any(|(x, y)| !quat_close(x.rotation, y.rotation, 0.05)),
            "{} does not move",
            owned.name
        );
        durations.push(c.duration());
    }
    assert_eq!(durations.len(), 3);
    for i in 0..3 {
        for k in i + 1..3 {
            assert!((durations[i] - durations[k]).abs() > 1e-3, "{durations:?}");
        }
    }
}

// ---------------------------------------------------------------------------
// Raw clip container
// ---------------------------------------------------------------------------

mod container {
    use super::support::humanoid;
    use proptest::prelude::*;
    use sinew_core::clip::{RawClip, TimeMode};
    use sinew_core::{Error, SoaTransform};
    use sinew_std::{AlignedBytes, OwnedClip};

    fn walk_bytes() -> AlignedBytes {
        humanoid().clips[0].to_bytes()
    }

    #[test]
    fn round_trip_is_exact_and_zero_copy() {
        let walk = &humanoid().clips[0];
        let bytes = walk.to_bytes();
        assert_eq!(bytes.len() % 16, 0);
        let view = RawClip::from_bytes(bytes.as_slice()).unwrap();
        assert_eq!(view.name(), "walk");
        assert_eq!(view.frame_count(), walk.frame_count());
        assert_eq!(view.sample_rate(), walk.sample_rate());
        // Zero copy: the first key lives inside the byte buffer.
        let key_ptr = view.frame(0).unwrap().as_ptr() as usize;
        let base = bytes.as_slice().as_ptr() as usize;
        assert_eq!(key_ptr, base + 48);
        let mut a = vec![SoaTransform::IDENTITY; view.soa_count()];
        let mut b = a.clone();
        for t in [0.0, 0.37, 1.0] {
            view.sample(t, TimeMode::Loop, &mut a).unwrap();
            walk.view().sample(t, TimeMode::Loop, &mut b).unwrap();
            assert_eq!(a, b);
        }
        let owned = OwnedClip::from_bytes(bytes.as_slice()).unwrap();
        assert_eq!(owned.keys(), walk.keys());
        assert_eq!(owned.name, "walk");
    }

    #[test]
    fn exact_errors() {
        let good = walk_bytes();
        let mut b = good.clone();
        b.as_mut_slice()[0] ^= 1;
        assert_eq!(
            RawClip::from_bytes(b.as_slice()).unwrap_err(),
            Error::BadMagic
        );
        let mut b = good.clone();
        b.as_mut_slice()[8] = 2;
        assert_eq!(
            RawClip::from_bytes(b.as_slice()).unwrap_err(),
            Error::UnsupportedVersion { found: 2 }
        );
        let mut b = good.clone();
        b.as_mut_slice()[20..24].copy_from_slice(&f32::NAN.to_le_bytes());
        assert_eq!(
            RawClip::from_bytes(b.as_slice()).unwrap_err(),
            Error::InvalidSampleRate
        );
        let mut b = good.clone();
        b.as_mut_slice()[12..16].copy_from_slice(&1000u32.to_le_bytes());
        assert!(matches!(
            RawClip::from_bytes(b.as_slice()),
            Err(Error::TooManyJoints { .. })
        ));
        let mut b = good.clone();
        b.as_mut_slice()[16..20].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(
            RawClip::from_bytes(b.as_slice()),
            Err(Error::Corrupt { .. } | Error::Truncated { .. })
        ));
        let mut b = good.clone();
        b.as_mut_slice()[48..52].copy_from_slice(&f32::INFINITY.to_le_bytes());
        assert!(matches!(
            RawClip::from_bytes(b.as_slice()),
            Err(Error::NonFinite { .. })
        ));
        // Misaligned view of valid bytes.
        let mut shifted = AlignedBytes::zeroed(good.len() + 16);
        shifted.as_mut_slice()[4..4 + good.len()].copy_from_slice(good.as_slice());
        assert_eq!(
            RawClip::from_bytes(&shifted.as_slice()[4..4 + good.len()]).unwrap_err(),
            Error::Misaligned
        );
        for len in 0..good.len() {
            let r = RawClip::from_bytes(&good.as_slice()[..len]);
            assert!(
                matches!(r, Err(Error::Truncated { .. })),
                "length {len}: {r:?}"
            );
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// Mutated or random bytes give an error or a valid view, never a panic.
        #[test]
        fn mutated_bytes_never_panic(
            edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
            cut in any::<prop::sample::Index>(),
            random in prop::collection::vec(any::<u8>(), 0..256),
        ) {
            let good = walk_bytes();
            let mut b = good.clone();
            for (at, v) in &edits {
                let i = at.index(b.len());
                b.as_mut_slice()[i] = *v;
            }
            let len = cut.index(b.len() + 1);
            if let Ok(view) = RawClip::from_bytes(&b.as_slice()[..len]) {
                let mut out = vec![SoaTransform::IDENTITY; view.soa_count()];
                prop_assert!(view.sample(0.5, TimeMode::Loop, &mut out).is_ok());
            }
            let r = AlignedBytes::copy_from(&random);
            let _ = RawClip::from_bytes(r.as_slice());
        }
    }
}

/// One interface over raw and compressed clips. A clip compressed with
/// rest-pose stripping either gets the rest pose or says exactly what is
/// missing (the `"rest pose"`, `soa_count` blocks); one compressed without
/// it, and a raw clip, need none.
#[test]
fn clip_source_takes_the_rest_pose_or_names_it() {
    use sinew_core::clip::ClipSource;
    use sinew_std::compress::{compress, CompressOptions};
    let h = humanoid();
    let skel = h.skeleton.view();
    let n = skel.soa_count();
    let rest = skel.rest_pose();
    let raw = h.clips[0].view();
    let (owned, opts) = humanoid_compressed();
    let stripped = owned[0].view();
    assert!(stripped.needs_rest_pose() && !ClipSource::needs_rest_pose(&raw));
    let missing = Err(Error::BadLength {
        buffer: "rest pose",
        expected: n,
        actual: 0,
    });
    let mut out = vec![SoaTransform::IDENTITY; n];
    let mut scratch = vec![SoaTransform::IDENTITY; n];
    assert_eq!(
        ClipSource::sample(&stripped, 0.3, TimeMode::Loop, &[], &mut out),
        missing
    );
    assert_eq!(stripped.frame(2, &[], &mut scratch).map(|_| ()), missing);
    assert_eq!(
        stripped.frame(2, rest, &mut scratch[..n - 1]).map(|_| ()),
        Err(Error::BadLength {
            buffer: "clip scratch",
            expected: n,
            actual: n - 1
        })
    );
    assert!(stripped
        .frame(raw.frame_count(), rest, &mut scratch)
        .is_err());
    let mut expect = out.clone();
    for t in [0.0, 0.3, raw.duration()] {
        ClipSource::sample(&stripped, t, TimeMode::Loop, rest, &mut out).unwrap();
        ClipSource::sample(&raw, t, TimeMode::Loop, &[], &mut expect).unwrap();
        assert_model_close(&skel, &out, &expect, opts.error * 1.5);
    }
    let frame = stripped.frame(5, rest, &mut scratch).unwrap().to_vec();
    assert_model_close(&skel, &frame, raw.frame(5).unwrap(), opts.error * 1.5);
    // Without stripping, no rest pose is needed.
    let plain = CompressOptions {
        rest_pose_stripping: false,
        ..CompressOptions::default()
    };
    let (c, _) = compress(&skel, &raw, &plain).unwrap();
    let c = c.view();
    assert!(!c.needs_rest_pose());
    ClipSource::sample(&c, 0.3, TimeMode::Loop, &[], &mut out).unwrap();
    assert_eq!(ClipSource::duration(&c), raw.duration());
    assert_eq!(ClipSource::name(&raw), raw.name());
}

/// An owned clip's view keeps the clip's name.
#[test]
fn owned_clip_view_keeps_the_name() {
    let h = humanoid();
    for c in &h.clips {
        assert!(!c.name.is_empty());
        assert_eq!(c.view().name(), c.name);
    }
}
