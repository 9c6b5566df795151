extern crate alloc;

use alloc::vec::Vec;

use proptest::prelude::*;

use super::*;

fn weights<const K: usize>(f: &Fader<u32, K>) -> Vec<(u32, f32)> {
    f.sources().map(|(t, w)| (*t, w)).collect()
}

#[test]
fn curves_run_from_zero_to_one() {
    for c in [
        FadeCurve::Linear,
        FadeCurve::SmoothStep,
        FadeCurve::EaseIn,
        FadeCurve::EaseOut,
    ] {
        assert_eq!((c.alpha(0.0), c.alpha(1.0)), (0.0, 1.0));
        assert_eq!(
            (c.alpha(-3.0), c.alpha(7.0), c.alpha(f32::NAN)),
            (0.0, 1.0, 1.0)
        );
        let mut prev = 0.0;
        for i in 1..=100 {
            let a = c.alpha(i as f32 / 100.0);
            assert!(a >= prev, "{c:?} decreases");
            prev = a;
        }
    }
    assert_eq!(FadeCurve::SmoothStep.alpha(0.25), 0.15625);
    assert_eq!(FadeCurve::EaseIn.alpha(0.5), 0.25);
    assert_eq!(FadeCurve::EaseOut.alpha(0.5), 0.75);
}

#[test]
fn a_crossfade_hands_over_and_completes() {
    let mut f = Fader::<u32, 4>::new(7).unwrap();
    f.start(
        8,
        &Transition {
            duration: 0.4,
            blend: Blend::Crossfade(FadeCurve::Linear),
        },
    )
    .unwrap();
    assert_eq!(weights(&f), [(7, 1.0), (8, 0.0)]);
    f.advance(0.1).unwrap();
    assert_eq!(weights(&f), [(7, 0.75), (8, 0.25)]);
    f.advance(0.3).unwrap();
    assert_eq!(weights(&f), [(8, 1.0)]);
    assert!(!f.is_fading());
    assert_eq!(*f.current(), 8);
}

#[test]
fn an_interruption_freezes_the_mix_without_a_pop() {
    let lin = |d| Transition {
        duration: d,
        blend: Blend::Crossfade(FadeCurve::Linear),
    };
    let mut f = Fader::<u32, 4>::new(1).unwrap();
    f.start(2, &lin(1.0)).unwrap();
    f.advance(0.25).unwrap();
    let before = weights(&f);
    f.start(3, &lin(0.5)).unwrap();
    let after = weights(&f);
    // 1 and 2 keep their weights at the instant of the interruption.
    assert_eq!(&after[..2], &before[..]);
    assert_eq!(after[2], (3, 0.0));
    f.advance(0.25).unwrap();
    // Half-way: the frozen 0.75 / 0.25 mix at half weight.
    assert_eq!(weights(&f), [(1, 0.375), (2, 0.125), (3, 0.5)]);
    f.advance(0.25).unwrap();
    assert_eq!(weights(&f), [(3, 1.0)]);
}

#[test]
fn a_full_fader_drops_its_lightest_source() {
    let lin = Transition {
        duration: 1.0,
        blend: Blend::Crossfade(FadeCurve::Linear),
    };
    let mut f = Fader::<u32, 2>::new(1).unwrap();
    f.start(2, &lin).unwrap();
    f.advance(0.25).unwrap();
    // 1 at 0.75, 2 at 0.25: 2 goes, 1 takes the whole old share.
    f.start(3, &lin).unwrap();
    assert_eq!(weights(&f), [(1, 1.0), (3, 0.0)]);
}

#[test]
fn inertialization_and_zero_durations_switch_at_once() {
    let mut f = Fader::<u32, 4>::new(1).unwrap();
    f.start(2, &Transition::crossfade(1.0)).unwrap();
    f.advance(0.5).unwrap();
    f.start(3, &Transition::inertialize(0.3)).unwrap();
    assert_eq!(weights(&f), [(3, 1.0)]);
    f.start(4, &Transition::crossfade(0.0)).unwrap();
    assert_eq!(weights(&f), [(4, 1.0)]);
}

#[test]
fn an_immediate_interruption_drops_the_source_that_never_played() {
    let mut f = Fader::<u32, 4>::new(1).unwrap();
    f.start(2, &Transition::crossfade(1.0)).unwrap();
    f.start(3, &Transition::crossfade(1.0)).unwrap();
    assert_eq!(weights(&f), [(1, 1.0), (3, 0.0)]);
}

#[test]
fn bad_transitions_and_steps_change_nothing() {
    let mut f = Fader::<u32, 4>::new(1).unwrap();
    f.start(2, &Transition::crossfade(1.0)).unwrap();
    let before = f;
    for t in [
        Transition::crossfade(-1.0),
        Transition::crossfade(f32::NAN),
        Transition::inertialize(0.0),
        Transition {
            duration: 0.2,
            blend: Blend::Inertialize(Decay::Spring { half_life: 0.0 }),
        },
    ] {
        assert!(matches!(
            f.start(3, &t),
            Err(Error::InvalidParameter { .. })
        ));
    }
    for dt in [-0.1, f32::NAN, f32::INFINITY] {
        assert!(matches!(f.advance(dt), Err(Error::NonFinite { .. })));
    }
    assert_eq!(f, before);
    assert!(Fader::<u32, 0>::new(1).is_err());
}

proptest! {
    #[test]
    fn weights_always_sum_to_one(
        steps in proptest::collection::vec((0.0f32..0.5, any::<bool>(), 0.0f32..1.0, 0u8..4), 1..60),
    ) {
        let mut f = Fader::<u32, 3>::new(0).unwrap();
        for (i, &(dt, start, dur, curve)) in steps.iter().enumerate() {
            if start {
                let curve = [FadeCurve::Linear, FadeCurve::SmoothStep, FadeCurve::EaseIn, FadeCurve::EaseOut][curve as usize];
                let before: Vec<(u32, f32)> = weights(&f);
                f.start(i as u32 + 1, &Transition { duration: dur, blend: Blend::Crossfade(curve) }).unwrap();
                // Unless a source was evicted, the ones that stay keep their weight.
                if before.len() < 3 && dur > 0.0 {
                    let after = weights(&f);
                    let kept: Vec<(u32, f32)> = before.iter().copied().filter(|s| s.1 > 0.0).collect();
                    prop_assert_eq!(&after[..after.len() - 1], &kept[..]);
                }
            }
            f.advance(dt).unwrap();
            let sum: f32 = f.sources().map(|s| s.1).sum();
            prop_assert!((sum - 1.0).abs() < 1e-5, "{}", sum);
            prop_assert!(f.sources().all(|s| (0.0..=1.0).contains(&s.1)));
            prop_assert!(f.len() <= 3);
        }
    }
}
