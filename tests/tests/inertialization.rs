//! Transitions: cross-fade and inertialization (quintic and spring):
//! validity, SIMD vs scalar, continuity at the switch, rest at T.

#[path = "../support/mod.rs"]
mod support;

use proptest::prelude::*;
use sinew_core::mix::transition::{self, reference, start, SwitchJob};
use sinew_core::mix::{crossfade, Decay, InertialBlock, Inertializer};
use sinew_core::{soa_count, Error, Quat, SoaTransform, Transform, Vec3};
use support::*;

const J: usize = 7;
const B: usize = soa_count(J);

fn job<'a>(p: &'a [SoaTransform], dt: f32, duration: f32) -> SwitchJob<'a> {
    SwitchJob {
        old: p,
        old_prev: p,
        new: p,
        new_prev: p,
        dt,
        duration,
    }
}

#[test]
fn validity() {
    let p = vec![SoaTransform::IDENTITY; B];
    let mut state = vec![InertialBlock::default(); B];
    for (dt, dur) in [
        (0.0, 0.3),
        (f32::NAN, 0.3),
        (0.016, 0.0),
        (0.016, -1.0),
        (0.016, f32::INFINITY),
    ] {
        assert!(
            matches!(
                start(&mut state, &job(&p, dt, dur)),
                Err(Error::InvalidParameter { .. })
            ),
            "{dt} {dur}"
        );
    }
    let short = vec![SoaTransform::IDENTITY; B - 1];
    let j = SwitchJob {
        new_prev: &short,
        ..job(&p, 0.016, 0.3)
    };
    assert_eq!(
        start(&mut state, &j),
        Err(Error::BadLength {
            buffer: "new previous pose",
            expected: B,
            actual: B - 1
        })
    );
    let mut pose = p.clone();
    for t in [f32::NAN, -1.0] {
        assert!(matches!(
            transition::apply(&state, t, Decay::Quintic, &mut pose),
            Err(Error::NonFinite { .. })
        ));
        assert!(matches!(
            reference::apply(&state, t, Decay::Quintic, &mut pose),
            Err(Error::NonFinite { .. })
        ));
    }
    for h in [0.0, -1.0, f32::NAN] {
        assert!(matches!(
            transition::apply(&state, 0.1, Decay::Spring { half_life: h }, &mut pose),
            Err(Error::InvalidParameter { .. })
        ));
        assert!(matches!(
            Inertializer::new(Decay::Spring { half_life: h }),
            Err(Error::InvalidParameter { .. })
        ));
    }
    assert!(matches!(
        transition::apply(&state, 0.1, Decay::Quintic, &mut pose[..1]),
        Err(Error::BadLength { .. })
    ));
    let mut out = vec![SoaTransform::IDENTITY; B];
    for a in [f32::NAN, -0.1, 1.1] {
        assert!(matches!(
            crossfade(&p, &p, a, &mut out),
            Err(Error::InvalidParameter { .. })
        ));
    }
    assert!(matches!(
        crossfade(&p, &short, 0.5, &mut out),
        Err(Error::BadLength { .. })
    ));
    let mut inert = Inertializer::new(Decay::Quintic).unwrap();
    assert!(matches!(
        inert.update(&state, f32::NAN, &mut pose),
        Err(Error::NonFinite { .. })
    ));
}

#[test]
fn crossfade_ends_are_the_poses() {
    let h = humanoid();
    let (a, b) = (
        h.clips[0].view().frame(3).unwrap(),
        h.clips[2].view().frame(9).unwrap(),
    );
    let mut out = vec![SoaTransform::IDENTITY; a.len()];
    crossfade(a, b, 0.0, &mut out).unwrap();
    assert_poses_close(&out, a, h.skeleton.joint_count(), 1e-5);
    crossfade(a, b, 1.0, &mut out).unwrap();
    assert_poses_close(&out, b, h.skeleton.joint_count(), 1e-5);
}

/// A pose whose every joint sits at `x` along x and is rotated `x` about `axis`.
fn linear_pose(x: f32, axis: Vec3) -> Vec<SoaTransform> {
    to_soa(&vec![
        Transform::from_translation_rotation(
            Vec3::new(x, 0.0, 0.0),
            Quat::from_axis_angle(axis, x)
        );
        J
    ])
}

#[test]
fn inertializer_outputs_old_then_new() {
    let axis = Vec3::new(0.0, 0.6, 0.8);
    let dt = 1.0 / 60.0;
    let (old, oldp) = (linear_pose(0.8, axis), linear_pose(0.8 + 0.5 * dt, axis));
    let (new, newp) = (linear_pose(0.2, axis), linear_pose(0.2, axis));
    let mut state = vec![InertialBlock::default(); B];
    let mut inert = Inertializer::new(Decay::Quintic).unwrap();
    assert!(!inert.is_active());
    inert
        .switch(
            &mut state,
            &SwitchJob {
                old: &old,
                old_prev: &oldp,
                new: &new,
                new_prev: &newp,
                dt,
                duration: 0.25,
            },
        )
        .unwrap();
    assert!(inert.is_active());
    let mut pose = new.clone();
    inert.update(&state, dt, &mut pose).unwrap();
    assert_poses_close(&pose, &old, J, 1e-5);
    for _ in 0..20 {
        let mut pose = new.clone();
        inert.update(&state, dt, &mut pose).unwrap();
    }
    assert!(!inert.is_active());
    let mut pose = new.clone();
    inert.update(&state, dt, &mut pose).unwrap();
    assert_eq!(pose, new);
}

fn pose(n: usize) -> impl Strategy<Value = Vec<SoaTransform>> {
    transforms(n, 0.5, 2.0).prop_map(|t| to_soa(&t))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// SIMD == scalar within 1e-5 for both decays at any time.
    #[test]
    fn simd_matches_reference(old in pose(J), oldp in pose(J), new in pose(J), newp in pose(J), dur in 0.1f32..1.0, t in 0.0f32..1.5, spring in any::<bool>()) {
        let mut state = vec![InertialBlock::default(); B];
        start(&mut state, &SwitchJob { old: &old, old_prev: &oldp, new: &new, new_prev: &newp, dt: 1.0 / 30.0, duration: dur }).unwrap();
        let decay = if spring { Decay::Spring { half_life: dur * 0.3 } } else { Decay::Quintic };
        let (mut a, mut b) = (new.clone(), new.clone());
        transition::apply(&state, t, decay, &mut a).unwrap();
        reference::apply(&state, t, decay, &mut b).unwrap();
        assert_poses_close(&a, &b, J, TOL);
    }

    /// With the offset velocity moving towards zero and T not clamped, the
    /// output starts at the old pose with the old velocity, and at T equals
    /// the new pose with the new velocity; the quintic never overshoots.
    #[test]
    fn continuous_at_the_switch_and_at_rest_at_t(x0 in 0.05f32..1.0, k in 0.0f32..2.45, dur in 0.1f32..1.0, n0 in -0.5f32..0.5, vn in -1.0f32..1.0, axis in unit_axis()) {
        let v0 = -k * x0 / dur;
        let (o0, vo) = (n0 + x0, vn + v0);
        let dt = 1.0 / 60.0;
        let old = |t: f32| linear_pose(o0 + vo * t, axis);
        let new = |t: f32| linear_pose(n0 + vn * t, axis);
        let mut state = vec![InertialBlock::default(); B];
        let longest = start(&mut state, &SwitchJob { old: &old(0.0), old_prev: &old(-dt), new: &new(0.0), new_prev: &new(-dt), dt, duration: dur }).unwrap();
        prop_assert!((longest - dur).abs() < 1e-6);
        let out = |t: f32| {
            let mut p = new(t);
            transition::apply(&state, t, Decay::Quintic, &mut p).unwrap();
            let j = to_transforms(&p, 1)[0];
            (j.translation.x, signed_angle_about(j.rotation, axis))
        };
        let h = 1e-3;
        let (x_0, r_0) = out(0.0);
        let (x_h, r_h) = out(h);
        prop_assert!((x_0 - o0).abs() < 1e-5 && (r_0 - o0).abs() < 1e-4);
        prop_assert!(((x_h - x_0) / h - vo).abs() < 2e-2, "{} {}", (x_h - x_0) / h, vo);
        prop_assert!(((r_h - r_0) / h - vo).abs() < 0.2, "{} {}", (r_h - r_0) / h, vo);
        let (x_t, _) = out(dur);
        let (x_th, _) = out(dur + h);
        prop_assert!((x_t - (n0 + vn * dur)).abs() < 1e-4);
        prop_assert!(((x_th - x_t) / h - vn).abs() < 2e-2);
        // No overshoot: the offset keeps its sign.
        for i in 0..=20 {
            let t = dur * i as f32 / 20.0;
            prop_assert!(out(t).0 - (n0 + vn * t) >= -1e-4);
        }
    }

    /// The spring starts at the old pose and decays towards the new one.
    #[test]
    fn spring_decays(x0 in 0.05f32..1.0, half in 0.05f32..0.5) {
        let axis = Vec3::X;
        let mut state = vec![InertialBlock::default(); B];
        let (old, new) = (linear_pose(x0, axis), linear_pose(0.0, axis));
        start(&mut state, &job(&old, 1.0 / 60.0, 1.0)).unwrap();
        start(&mut state, &SwitchJob { old: &old, old_prev: &old, new: &new, new_prev: &new, dt: 1.0 / 60.0, duration: 1.0 }).unwrap();
        let x = |t: f32| {
            let mut p = new.clone();
            transition::apply(&state, t, Decay::Spring { half_life: half }, &mut p).unwrap();
            to_transforms(&p, 1)[0].translation.x
        };
        prop_assert!((x(0.0) - x0).abs() < 1e-5);
        prop_assert!(x(10.0 * half) < x0 * 0.02);
        prop_assert!(x(half) < x0 && x(half) > 0.0);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// However fast the offset closes, the clamped duration keeps it from
    /// overshooting zero.
    #[test]
    fn clamped_duration_never_overshoots(x0 in 0.01f32..1.0, v0 in -100.0f32..0.0, dur in 0.05f32..2.0) {
        let (x0, v0, t) = transition::clamp_channel(x0, v0, dur);
        prop_assert!(t <= dur);
        let c = transition::quintic_coefficients(x0, v0, t);
        for i in 0..=50 {
            prop_assert!(transition::quintic(&c, t * i as f32 / 50.0) >= -1e-5 * x0.max(1.0));
        }
    }
}

/// A signed float channel inertializes from either side of zero: a
/// negative offset moving towards zero keeps its velocity and decays to 0,
/// one moving away has its velocity clamped, as for positive offsets.
#[test]
fn negative_offsets_decay_like_positive_ones() {
    for (x0, v0) in [(-0.4f32, 0.3f32), (-0.4, -2.0), (0.4, -0.3), (0.4, 2.0)] {
        let (cx, cv, dur) = transition::clamp_channel(x0, v0, 0.5);
        assert_eq!(cx, x0, "the offset is kept");
        let away = x0 * v0 > 0.0;
        assert_eq!(cv, if away { 0.0 } else { v0 });
        let c = transition::quintic_coefficients(cx, cv, dur);
        assert!((transition::quintic(&c, 0.0) - x0).abs() < 1e-6);
        assert!(transition::quintic(&c, dur).abs() < 1e-5);
        // Never past zero on the way.
        for i in 0..=50 {
            assert!(transition::quintic(&c, dur * i as f32 / 50.0) * x0.signum() >= -1e-6);
        }
        // Mirror images of each other.
        let m = transition::clamp_channel(-x0, -v0, 0.5);
        assert_eq!((m.0, m.1, m.2), (-cx, -cv, dur));
    }
}

/// The inertializer is a plain value: it sits in a `static` and runs over a
/// caller-owned state buffer.
#[test]
fn inertializer_lives_in_a_static() {
    use std::sync::Mutex;
    fn assert_static_send<T: 'static + Send>() {}
    assert_static_send::<Inertializer>();
    static INERT: Mutex<Option<Inertializer>> = Mutex::new(None);
    let axis = Vec3::new(0.0, 0.6, 0.8);
    let (old, new) = (linear_pose(0.8, axis), linear_pose(0.2, axis));
    let mut state = vec![InertialBlock::default(); B];
    let mut slot = INERT.lock().unwrap();
    let inert = slot.insert(Inertializer::new(Decay::Quintic).unwrap());
    inert
        .switch(&mut state, &job_between(&old, &new, 0.25))
        .unwrap();
    let mut pose = new.clone();
    inert.update(&state, 1.0 / 60.0, &mut pose).unwrap();
    assert_poses_close(&pose, &old, J, 1e-5);
}

fn job_between<'a>(
    old: &'a [SoaTransform],
    new: &'a [SoaTransform],
    duration: f32,
) -> SwitchJob<'a> {
    SwitchJob {
        old,
        old_prev: old,
        new,
        new_prev: new,
        dt: 1.0 / 60.0,
        duration,
    }
}
