extern crate alloc;

use alloc::vec;
use alloc::vec::Vec;

use proptest::prelude::*;

use super::*;
use crate::clip::RawClip;
use crate::math::{Quat, Transform, Vec3};
use crate::soa::set_joint;
use crate::track::event::{EdgeKind, Event};

const D: f32 = 1.25;

fn head(mode: PlayMode, speed: f32) -> Playhead {
    let mut p = Playhead::new(mode);
    p.set_speed(speed).unwrap();
    p
}

/// Clip time of ping-pong play after unfolded distance `u` from 0: the
/// triangle wave of period `2d`.
fn triangle(u: f64, d: f64) -> f64 {
    let w = u.rem_euclid(2.0 * d);
    if w <= d {
        w
    } else {
        2.0 * d - w
    }
}

#[test]
fn loop_wraps_both_ways_and_counts_the_wraps() {
    let mut p = head(PlayMode::Loop, 1.0);
    let a = p.advance(1.0, D).unwrap();
    assert_eq!((a.from, a.to, a.turns, a.forward), (0.0, 1.0, 0, true));
    let a = p.advance(0.5, D).unwrap();
    assert_eq!((a.to, a.turns), (0.25, 1));
    p.set_speed(-2.0).unwrap();
    let a = p.advance(1.5, D).unwrap();
    // 0.25 − 3 = −2.75 = −3 · 1.25 + 1.0
    assert_eq!((a.to, a.turns, a.forward), (1.0, -3, false));
    // Landing exactly on the end is the next cycle's 0.
    let mut p = head(PlayMode::Loop, 1.0);
    let a = p.advance(D, D).unwrap();
    assert_eq!((a.to, a.turns), (0.0, 1));
}

#[test]
fn clamp_stops_at_the_end_it_heads_for() {
    let mut p = head(PlayMode::Clamp, 1.0);
    let a = p.advance(1.0, D).unwrap();
    assert!(!a.ended);
    let a = p.advance(1.0, D).unwrap();
    assert_eq!((a.to, a.ended, a.turns), (D, true, 0));
    // Resting at the end: still ended, no motion.
    let a = p.advance(1.0, D).unwrap();
    assert_eq!((a.from, a.to, a.ended), (D, D, true));
    p.set_speed(-1.0).unwrap();
    let a = p.advance(0.25, D).unwrap();
    assert_eq!((a.to, a.ended, a.forward), (1.0, false, false));
    let a = p.advance(9.0, D).unwrap();
    assert_eq!((a.to, a.ended), (0.0, true));
}

#[test]
fn ping_pong_bounces_between_the_ends() {
    let mut p = head(PlayMode::PingPong, 1.0);
    let a = p.advance(1.0, D).unwrap();
    assert_eq!((a.to, a.turns, a.forward), (1.0, 0, true));
    // 1.0 + 0.5 = 1.5: bounced at 1.25, back to 1.0.
    let a = p.advance(0.5, D).unwrap();
    assert_eq!((a.to, a.turns, a.forward), (1.0, 1, true));
    assert!(!p.is_forward());
    // Back through 0 and forwards again: 1.0 − 1.0 − 0.5 → 0.5 going up.
    let a = p.advance(1.5, D).unwrap();
    assert_eq!((a.to, a.turns, a.forward), (0.5, 1, false));
    assert!(p.is_forward());
    // Negative speed walks the same path back.
    p.set_speed(-1.0).unwrap();
    let a = p.advance(1.5, D).unwrap();
    assert_eq!((a.to, a.turns, a.forward), (1.0, 1, false));
    // Stopping exactly on the end is not a bounce; leaving it is not either.
    let mut p = head(PlayMode::PingPong, 1.0);
    assert_eq!(p.advance(D, D).unwrap().turns, 0);
    let a = p.advance(0.25, D).unwrap();
    assert_eq!((a.from, a.to, a.turns, a.forward), (D, 1.0, 0, false));
}

#[test]
fn paused_zero_speed_and_empty_clips_do_not_move() {
    let mut p = head(PlayMode::Loop, 1.0);
    p.advance(0.5, D).unwrap();
    p.pause();
    assert!(!p.is_playing());
    let a = p.advance(0.5, D).unwrap();
    assert_eq!((a.from, a.to, a.turns), (0.5, 0.5, 0));
    p.resume();
    assert_eq!(p.advance(0.25, D).unwrap().to, 0.75);
    assert_eq!(p.advance(1.0, 0.0).unwrap().to, 0.0);
    let mut p = head(PlayMode::Clamp, 0.0);
    assert_eq!(p.advance(1.0, D).unwrap().to, 0.0);
}

#[test]
fn bad_input_is_an_error_and_leaves_the_playhead_alone() {
    let mut p = head(PlayMode::PingPong, 1.0);
    p.advance(0.3, D).unwrap();
    let before = p;
    for dt in [f32::NAN, -0.1, f32::INFINITY] {
        assert!(matches!(p.advance(dt, D), Err(Error::NonFinite { .. })));
    }
    for d in [f32::NAN, -1.0, f32::INFINITY] {
        assert!(matches!(
            p.advance(0.1, d),
            Err(Error::InvalidParameter { .. })
        ));
        assert!(p.seek(0.1, d).is_err());
    }
    assert!(p.set_speed(f32::NAN).is_err());
    assert!(p.seek(f32::INFINITY, D).is_err());
    assert_eq!(p, before);
    // An overflowing product is a huge but finite advance, never NaN.
    p.set_speed(f32::MAX).unwrap();
    let a = p.advance(f32::MAX, D).unwrap();
    assert!(a.to.is_finite() && (0.0..=D).contains(&a.to));
}

#[test]
fn seek_wraps_or_clamps() {
    let mut p = Playhead::new(PlayMode::Loop);
    p.seek(3.0, D).unwrap();
    assert!((p.time() - 0.5).abs() < 1e-6);
    p.seek(-0.25, D).unwrap();
    assert_eq!(p.time(), 1.0);
    let mut p = Playhead::new(PlayMode::Clamp);
    p.seek(3.0, D).unwrap();
    assert_eq!(p.time(), D);
}

fn track<'a>(events: &'a [Event], ranges: &'a mut [u32]) -> EventTrack<'a> {
    let n = sort_ranges(events, ranges);
    EventTrack::new(D, events, &[], &ranges[..n]).unwrap()
}

fn sort_ranges(events: &[Event], ranges: &mut [u32]) -> usize {
    crate::track::event::sort_range_ends(events, ranges).unwrap()
}

const EVENTS: [Event; 4] = [
    Event::instant(0.0, 0),
    Event::range(0.25, 0.75, 1),
    Event::instant(1.0, 2),
    Event::instant(D, 3),
];

#[test]
fn ping_pong_reports_each_leg_in_play_order() {
    let mut ranges = [0u32; 4];
    let t = track(&EVENTS, &mut ranges);
    let mut p = head(PlayMode::PingPong, 1.0);
    p.advance(0.9, D).unwrap();
    // 0.9 → 1.25 → 0.1: up through 1.0 and the end, back down through
    // them again and the range's end and start.
    let a = p.advance(1.5, D).unwrap();
    let mut out = [Edge::default(); 16];
    let r = a.trigger(&t, &mut out).unwrap();
    let got: Vec<(u32, bool, EdgeKind)> = out[..r.written]
        .iter()
        .map(|e| (e.id, e.forward, e.kind))
        .collect();
    use EdgeKind::*;
    assert_eq!(
        got,
        vec![
            (2, true, Instant),
            (3, true, Instant),
            (3, false, Instant),
            (2, false, Instant),
            (1, false, Enter),
            (1, false, Leave),
        ]
    );
    assert_eq!(r.dropped, 0);
}

#[test]
fn many_bounces_fill_the_buffer_and_count_the_rest() {
    let mut ranges = [0u32; 4];
    let t = track(&EVENTS, &mut ranges);
    let mut p = head(PlayMode::PingPong, 1.0);
    p.advance(0.5, D).unwrap();
    // 0.5 + 100 · 1.25 = 125.5: bounces at 1.25, 2.5, … 125.
    let a = p.advance(100.0 * D, D).unwrap();
    assert_eq!(a.turns, 100);
    let mut small = [Edge::default(); 7];
    let r = a.trigger(&t, &mut small).unwrap();
    let mut big = vec![Edge::default(); 1000];
    let all = a.trigger(&t, &mut big).unwrap();
    assert_eq!((r.written, r.total()), (7, all.total()));
    assert_eq!(all.dropped, 0);
    assert_eq!(&small[..], &big[..7]);
    // First leg: range end, 1.0, end; 99 full legs of 5 edges; the last
    // leg from 0 (forwards, since 100 bounces is even) to 0.5: 0 and the
    // range start.
    assert_eq!(all.total(), 3 + 99 * 5 + 2);
}

#[test]
fn a_track_of_another_duration_is_refused() {
    let t = EventTrack::new(2.0, &EVENTS[..1], &[], &[]).unwrap();
    let a = head(PlayMode::Loop, 1.0).advance(0.1, D).unwrap();
    assert!(matches!(
        a.trigger(&t, &mut []),
        Err(Error::InvalidParameter { .. })
    ));
}

/// A clip whose root walks 0.1 m forward per frame at 10 fps (8 frames,
/// 0.7 s) while turning 0.05 rad per frame.
fn walking_clip() -> Vec<SoaTransform> {
    (0..8)
        .map(|f| {
            let mut b = [SoaTransform::IDENTITY];
            let yaw = 0.05 * f as f32;
            let t = Transform::new(
                Quat::from_rotation_y(yaw).rotate(Vec3::new(0.0, 0.0, 0.1 * f as f32)),
                Quat::from_rotation_y(yaw),
                Vec3::ONE,
            );
            set_joint(&mut b, 0, &t).unwrap();
            b[0]
        })
        .collect()
}

fn close(a: RootMotion, b: RootMotion) -> bool {
    (a.translation - b.translation).length() < 1e-4 && (a.yaw - b.yaw).abs() < 1e-5
}

#[test]
fn root_motion_follows_wraps_direction_and_bounces() {
    let keys = walking_clip();
    let clip = RawClip::new(10.0, 1, &keys).unwrap();
    let d = clip.duration();
    let rm = |a: f32, b: f32| root_motion(&clip, 0, a, b, &[], &mut []).unwrap();
    // Looping across two wraps is the clip's own multi-cycle motion.
    let mut p = head(PlayMode::Loop, 1.0);
    p.seek(0.2, d).unwrap();
    let a = p.advance(2.0 * d + 0.3, d).unwrap();
    assert_eq!(a.turns, 2);
    let m = a.root_motion(&clip, 0, &[], &mut []).unwrap();
    assert!(close(m, rm(0.2, 2.0 * d + 0.5)), "{m:?}");
    // Backwards over the same span is its inverse.
    let mut p = head(PlayMode::Loop, -1.0);
    p.seek(0.5, d).unwrap();
    let back = p.advance(2.0 * d + 0.3, d).unwrap();
    let m = back.root_motion(&clip, 0, &[], &mut []).unwrap();
    assert!(close(m, inverse(rm(0.2, 2.0 * d + 0.5))), "{m:?}");
    assert!(close(
        rm(0.1, 0.6).then(inverse(rm(0.1, 0.6))),
        RootMotion::ZERO
    ));
    // Ping-pong: only the ends of the path count.
    let mut p = head(PlayMode::PingPong, 1.0);
    p.seek(0.3, d).unwrap();
    let a = p.advance(1.0, d).unwrap();
    assert_eq!(a.turns, 1);
    let m = a.root_motion(&clip, 0, &[], &mut []).unwrap();
    assert!(close(m, inverse(rm(a.to, 0.3))), "{m:?}");
    // A clip of another duration is refused.
    let short = RawClip::new(10.0, 1, &keys[..4]).unwrap();
    assert!(a.root_motion(&short, 0, &[], &mut []).is_err());
}

proptest! {
    #[test]
    fn frames_sum_to_the_whole_path(
        speed in -3.0f32..3.0,
        dts in proptest::collection::vec(0.0f32..0.7, 1..40),
        mode in 0u8..3,
    ) {
        let mode = [PlayMode::Loop, PlayMode::Clamp, PlayMode::PingPong][mode as usize];
        let mut p = head(mode, speed);
        let (d, mut u) = (f64::from(D), 0.0f64);
        let mut turns = 0i64;
        for &dt in &dts {
            let a = p.advance(dt, D).unwrap();
            prop_assert!((0.0..=D).contains(&a.to));
            u += f64::from(speed * dt);
            turns += i64::from(a.turns);
            let want = match mode {
                PlayMode::Loop => u.rem_euclid(d),
                PlayMode::Clamp => u.clamp(0.0, d),
                PlayMode::PingPong => triangle(u, d),
            };
            // Near the loop point a wrapped time may sit on either side.
            let err = (f64::from(a.to) - want).abs();
            let err = if mode == PlayMode::Loop { err.min(d - err) } else { err };
            prop_assert!(err < 1e-4, "{:?} {} vs {}", mode, a.to, want);
        }
        let crossings = |u: f64| (u / d).floor() as i64;
        match mode {
            PlayMode::Loop => {
                // Total wraps = cycles between the start and the end,
                // unless the end sits within rounding of the loop point.
                let edge = (u / d - (u / d).round()).abs() < 1e-4;
                prop_assert!(edge || turns == crossings(u), "{} vs {}", turns, crossings(u));
            }
            PlayMode::Clamp => prop_assert_eq!(turns, 0),
            PlayMode::PingPong => {
                let edge = (u / d - (u / d).round()).abs() < 1e-4;
                let want = if u >= 0.0 { crossings(u) } else { -crossings(u) - 1 };
                prop_assert!(edge || turns == want, "{} vs {}", turns, want);
            }
        }
    }

    #[test]
    fn every_edge_is_reported_once_per_crossing(
        speed in 0.1f32..3.0,
        dts in proptest::collection::vec(0.0f32..0.9, 1..30),
        ping_pong in any::<bool>(),
    ) {
        // Counting the frames' edges equals counting them along the whole
        // path in one advance (both sides walk the same legs).
        let mode = if ping_pong { PlayMode::PingPong } else { PlayMode::Loop };
        let mut ranges = [0u32; 4];
        let t = track(&EVENTS, &mut ranges);
        let mut p = head(mode, speed);
        let mut out = vec![Edge::default(); 4096];
        let mut frames = 0u64;
        let mut total = 0.0f32;
        for &dt in &dts {
            let a = p.advance(dt, D).unwrap();
            frames += a.trigger(&t, &mut out).unwrap().total();
            total += dt;
        }
        let u = f64::from(speed) * f64::from(total);
        // Within rounding of an edge (forwards or, in ping-pong, on the way
        // back) the frames and the whole path may disagree on its side.
        let w = u.rem_euclid(1.25);
        let near_an_edge = [0.0, 0.25, 0.5, 0.75, 1.0, 1.25].iter().any(|e| (w - e).abs() < 1e-4);
        let mut whole = head(mode, speed);
        let a = whole.advance(total, D).unwrap();
        let once = a.trigger(&t, &mut out).unwrap().total();
        prop_assert!(near_an_edge || frames == once, "{} vs {} at {}", frames, once, u);
    }
}
