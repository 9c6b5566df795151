//! The player against the same frames made by hand from the primitives:
//! clips sampled with [`ClipSource::sample`] at playhead times, a scalar
//! nlerp with the fader's weights, an [`Inertializer`] switched from the
//! previous outputs, events triggered along each source's advance and root
//! motions blended with [`RootMotion::blend`].
extern crate alloc;

use alloc::vec;
use alloc::vec::Vec;

use super::*;
use crate::clip::RawClip;
use crate::math::{Quat, Transform, Vec3};
use crate::mix::root_motion::{rotate_y, wrap_angle};
use crate::player::fade::FadeCurve;
use crate::procedural::{gait_frame_count, humanoid_skeleton_bytes, write_gait_clip, Gait};
use crate::skeleton::Skeleton;
use crate::soa::get_joint;
use crate::track::event::{sort_range_ends, Event};

const RATE: f32 = 30.0;
const DT: f32 = 1.0 / 60.0;
const K: usize = 4;
const ROOT: usize = 0;

/// The humanoid's rest pose and its three gaits, each given a forward
/// motion and a turn of the root (pelvis) so that root motion is not zero.
struct Rig {
    rest: Vec<SoaTransform>,
    keys: [Vec<SoaTransform>; 3],
    events: [Vec<Event>; 3],
    ranges: [Vec<u32>; 3],
}

impl Rig {
    fn new() -> Rig {
        let bytes = humanoid_skeleton_bytes().unwrap();
        let skel = Skeleton::from_bytes(&bytes.0).unwrap();
        let n = skel.soa_count();
        let keys = Gait::ALL.map(|g| {
            let frames = gait_frame_count(g, RATE);
            let mut keys = vec![SoaTransform::IDENTITY; frames * n];
            write_gait_clip(g, &skel, RATE, &mut keys).unwrap();
            // Forward speed and turn rate differ per gait.
            let (speed, turn) = match g {
                Gait::Walk => (1.4, 0.3),
                Gait::Jog => (2.9, -0.2),
                Gait::Run => (4.5, 0.1),
            };
            for f in 0..frames {
                let t = f as f32 / RATE;
                let pose = &mut keys[f * n..(f + 1) * n];
                let mut r = get_joint(pose, ROOT).unwrap();
                let yaw = turn * t;
                r.translation = r.translation + rotate_y(Vec3::new(0.0, 0.0, speed * t), 0.5 * yaw);
                r.rotation = Quat::from_rotation_y(yaw) * r.rotation;
                crate::soa::set_joint(pose, ROOT, &r).unwrap();
            }
            keys
        });
        let durations = Gait::ALL.map(|g| (gait_frame_count(g, RATE) - 1) as f32 / RATE);
        let events = durations.map(|d| {
            vec![
                Event::instant(0.0, 1),
                Event::range(0.1, 0.4 * d, 2),
                Event::instant(0.5 * d, 3),
                Event::range(0.6 * d, d, 4),
                Event::instant(d, 5),
            ]
        });
        let ranges = core::array::from_fn(|i| {
            let mut r = vec![0; events[i].len()];
            let k = sort_range_ends(&events[i], &mut r).unwrap();
            r.truncate(k);
            r
        });
        Rig {
            rest: skel.rest_pose().to_vec(),
            keys,
            events,
            ranges,
        }
    }

    fn n(&self) -> usize {
        self.rest.len()
    }

    fn clips(&self) -> [RawClip<'_>; 3] {
        core::array::from_fn(|i| RawClip::new(RATE, self.n(), &self.keys[i]).unwrap())
    }

    fn tracks(&self) -> [Option<EventTrack<'_>>; 3] {
        let clips = self.clips();
        core::array::from_fn(|i| {
            Some(
                EventTrack::new(clips[i].duration(), &self.events[i], &[], &self.ranges[i])
                    .unwrap(),
            )
        })
    }
}

/// Owned buffers for a player of `K` sources.
#[derive(Clone, PartialEq, Debug)]
struct Bufs {
    sources: Vec<SoaTransform>,
    history: Vec<SoaTransform>,
    inertial: Vec<InertialBlock>,
    scratch: Vec<SoaTransform>,
}

impl Bufs {
    fn new(n: usize) -> Bufs {
        let s = Player::<K>::buffer_sizes(n);
        Bufs {
            sources: vec![SoaTransform::IDENTITY; s.sources],
            history: vec![SoaTransform::IDENTITY; s.history],
            inertial: vec![InertialBlock::default(); s.inertial],
            scratch: vec![SoaTransform::IDENTITY; s.scratch],
        }
    }

    fn get(&mut self) -> PlayerBuffers<'_> {
        PlayerBuffers {
            sources: &mut self.sources,
            history: &mut self.history,
            inertial: &mut self.inertial,
            scratch: &mut self.scratch,
        }
    }
}

/// A command given to the player (and the reference) before a frame.
#[derive(Clone, Copy, Debug)]
enum Cmd {
    Play(usize, PlayMode, Transition),
    Speed(f32),
    Pause,
    Resume,
    Seek(f32),
}

fn fade(duration: f32, curve: FadeCurve) -> Transition {
    Transition {
        duration,
        blend: Blend::Crossfade(curve),
    }
}

/// The reference: the player's frame spelled out with the primitives.
struct Reference {
    fader: Fader<(usize, Playhead), K>,
    inertializer: Inertializer,
    state: Vec<InertialBlock>,
    pending: Option<Transition>,
    /// Outputs, newest first (at most two kept).
    history: Vec<Vec<SoaTransform>>,
    last_dt: f32,
    speed: f32,
    paused: bool,
}

/// Nlerp of weighted poses, joint by joint: translations and scales
/// weighted sums, quaternions summed after aligning each with the running
/// sum, then normalised (the weights sum to 1).
fn nlerp(layers: &[(&[SoaTransform], f32)], n: usize) -> Vec<SoaTransform> {
    let mut out = vec![SoaTransform::IDENTITY; n];
    for b in 0..n {
        for l in 0..LANES {
            let mut t = Vec3::ZERO;
            let mut s = Vec3::ZERO;
            let mut q = Quat::new(0.0, 0.0, 0.0, 0.0);
            for (pose, w) in layers {
                let x = pose[b].get(l);
                t = t + x.translation * *w;
                s = s + x.scale * *w;
                let r = if q.dot(x.rotation) < 0.0 {
                    -x.rotation
                } else {
                    x.rotation
                };
                q = q + Quat::new(r.x * w, r.y * w, r.z * w, r.w * w);
            }
            out[b].set(l, &Transform::new(t, q.normalize(), s));
        }
    }
    out
}

impl Reference {
    fn new(clip: usize, mode: PlayMode) -> Reference {
        Reference {
            fader: Fader::new((clip, Playhead::new(mode))).unwrap(),
            inertializer: Inertializer::new(Decay::Quintic).unwrap(),
            state: Vec::new(),
            pending: None,
            history: Vec::new(),
            last_dt: 0.0,
            speed: 1.0,
            paused: false,
        }
    }

    fn command(&mut self, cmd: Cmd, clips: &[RawClip<'_>]) {
        match cmd {
            Cmd::Play(clip, mode, tr) => {
                let mut p = Playhead::new(mode);
                p.set_speed(self.speed).unwrap();
                let d = clips[clip].duration();
                if self.speed < 0.0 {
                    p.seek(d, d).unwrap();
                }
                self.fader.start((clip, p), &tr).unwrap();
                if matches!(tr.blend, Blend::Inertialize(_)) {
                    self.pending = Some(tr);
                }
            }
            Cmd::Speed(s) => {
                self.speed = s;
                for (_, p) in self.fader.payloads_mut() {
                    p.set_speed(s).unwrap();
                }
            }
            Cmd::Pause => self.paused = true,
            Cmd::Resume => self.paused = false,
            Cmd::Seek(t) => {
                let (c, p) = self.fader.current_mut();
                p.seek(t, clips[*c].duration()).unwrap();
            }
        }
    }

    /// The fader's mix at its playheads' times.
    fn mix(
        fader: &Fader<(usize, Playhead), K>,
        clips: &[RawClip<'_>],
        rest: &[SoaTransform],
    ) -> Vec<SoaTransform> {
        let n = rest.len();
        let mut poses = Vec::new();
        for ((c, p), w) in fader.sources() {
            if w > 0.0 {
                let mut pose = vec![SoaTransform::IDENTITY; n];
                ClipSource::sample(&clips[*c], p.time(), TimeMode::Clamp, rest, &mut pose).unwrap();
                poses.push((pose, w));
            }
        }
        if poses.len() == 1 {
            return poses.pop().unwrap().0;
        }
        let layers: Vec<(&[SoaTransform], f32)> = poses.iter().map(|(p, w)| (&p[..], *w)).collect();
        nlerp(&layers, n)
    }

    /// One frame: the pose, the edges (edge, clip, weight) and the root motion.
    fn frame(
        &mut self,
        dt: f32,
        clips: &[RawClip<'_>],
        tracks: &[Option<EventTrack<'_>>],
        rest: &[SoaTransform],
    ) -> (Vec<SoaTransform>, Vec<PlayerEdge>, RootMotion) {
        let n = rest.len();
        let dt = if self.paused { 0.0 } else { dt };
        if self.state.is_empty() {
            self.state = vec![InertialBlock::default(); n];
        }
        if let Some(tr) = self.pending.take() {
            if !self.history.is_empty() {
                let Blend::Inertialize(decay) = tr.blend else {
                    unreachable!()
                };
                // The switch is at the instant of the last output: the
                // mix now, and one frame earlier for the velocity.
                let now = Self::mix(&self.fader, clips, rest);
                let velocity = self.history.len() == 2 && self.last_dt > 0.0;
                let prev = if velocity {
                    let mut back = self.fader;
                    for (c, p) in back.payloads_mut() {
                        let s = p.speed();
                        p.set_speed(-s).unwrap();
                        p.advance(self.last_dt, clips[*c].duration()).unwrap();
                    }
                    Self::mix(&back, clips, rest)
                } else {
                    now.clone()
                };
                let old = &self.history[0];
                let old_prev = if velocity { &self.history[1] } else { old };
                let mut inert = Inertializer::new(decay).unwrap();
                let job = SwitchJob::new(
                    old,
                    old_prev,
                    &now,
                    &prev,
                    if velocity { self.last_dt } else { 1.0 },
                    match decay {
                        _ if tr.duration > 0.0 => tr.duration,
                        Decay::Spring { half_life } => half_life,
                        Decay::Quintic => unreachable!(),
                    },
                );
                inert.switch(&mut self.state, &job).unwrap();
                let mut ignored = now.clone();
                inert.update(&self.state, dt, &mut ignored).unwrap();
                self.inertializer = inert;
            }
        }
        self.fader.advance(dt).unwrap();
        let mut advances = Vec::new();
        for (c, p) in self.fader.payloads_mut() {
            advances.push(p.advance(dt, clips[*c].duration()).unwrap());
        }
        let mut out = Self::mix(&self.fader, clips, rest);
        self.inertializer.update(&self.state, dt, &mut out).unwrap();
        self.history.insert(0, out.clone());
        self.history.truncate(2);
        self.last_dt = dt;
        let mut edges = Vec::new();
        let mut motions = Vec::new();
        let mut scratch = vec![SoaTransform::IDENTITY; n];
        for (((c, _), w), a) in self.fader.sources().zip(&advances) {
            if w <= 0.0 {
                continue;
            }
            if let Some(track) = &tracks[*c] {
                let mut buf = vec![Edge::default(); 256];
                let t = a.trigger(track, &mut buf).unwrap();
                assert_eq!(t.dropped, 0);
                edges.extend(buf[..t.written].iter().map(|e| PlayerEdge {
                    edge: *e,
                    clip: *c as u32,
                    weight: w,
                }));
            }
            motions.push((
                a.root_motion(&clips[*c], ROOT, rest, &mut scratch).unwrap(),
                w,
            ));
        }
        (out, edges, RootMotion::blend(&motions).unwrap())
    }
}

/// Largest difference between two poses (quaternions up to sign).
fn pose_diff(a: &[SoaTransform], b: &[SoaTransform]) -> f32 {
    let mut worst = 0.0f32;
    for (x, y) in a.iter().zip(b) {
        for l in 0..LANES {
            let (p, q) = (x.get(l), y.get(l));
            worst = worst.max((p.translation - q.translation).length());
            worst = worst.max((p.scale - q.scale).length());
            let (r, s) = (p.rotation, q.rotation);
            let d = (r.x - s.x)
                .abs()
                .max((r.y - s.y).abs())
                .max((r.z - s.z).abs())
                .max((r.w - s.w).abs());
            let e = (r.x + s.x)
                .abs()
                .max((r.y + s.y).abs())
                .max((r.z + s.z).abs())
                .max((r.w + s.w).abs());
            worst = worst.max(d.min(e));
        }
    }
    worst
}

fn motion_diff(a: RootMotion, b: RootMotion) -> f32 {
    (a.translation - b.translation)
        .length()
        .max(wrap_angle(a.yaw - b.yaw).abs())
}

/// Runs `frames` frames of the player and the reference side by side,
/// giving both `script`'s commands before the frames they name, and checks
/// every frame's pose (within 1e-5), edges (equal) and root motion.
/// Returns the player's outputs.
fn compare(
    start: (usize, PlayMode),
    script: &[(usize, Cmd)],
    frames: usize,
    mut check: impl FnMut(usize, &Player<K>),
) -> Vec<Vec<SoaTransform>> {
    let rig = Rig::new();
    let clips = rig.clips();
    let tracks = rig.tracks();
    let n = rig.n();
    let assets = PlayerClips {
        clips: &clips,
        events: &tracks,
        rest: &rig.rest,
        root: Some(ROOT),
    };
    let mut player = Player::<K>::new(&clips, start.0, start.1).unwrap();
    let mut reference = Reference::new(start.0, start.1);
    let mut bufs = Bufs::new(n);
    let mut out = vec![SoaTransform::IDENTITY; n];
    let mut edges = vec![PlayerEdge::default(); 256];
    let mut outputs = Vec::new();
    for f in 0..frames {
        for (_, cmd) in script.iter().filter(|(at, _)| *at == f) {
            match *cmd {
                Cmd::Play(c, m, tr) => player.play(&clips, c, m, &tr).unwrap(),
                Cmd::Speed(s) => player.set_speed(s).unwrap(),
                Cmd::Pause => player.pause(),
                Cmd::Resume => player.resume(),
                Cmd::Seek(t) => player.seek(&clips, t).unwrap(),
            }
            reference.command(*cmd, &clips);
        }
        let report = player
            .update(DT, &assets, &mut bufs.get(), &mut out, &mut edges)
            .unwrap();
        let (want, want_edges, want_motion) = reference.frame(DT, &clips, &tracks, &rig.rest);
        let d = pose_diff(&out, &want);
        assert!(d < 1e-5, "frame {f}: pose differs by {d}");
        assert_eq!(report.edges_dropped, 0, "frame {f}");
        assert_eq!(&edges[..report.edges_written], &want_edges[..], "frame {f}");
        let m = motion_diff(report.root_motion, want_motion);
        assert!(m < 1e-5, "frame {f}: root motion differs by {m}");
        assert!(out.iter().all(SoaTransform::is_finite));
        check(f, &player);
        outputs.push(out.clone());
    }
    outputs
}

#[test]
fn modes_and_speeds_play_the_clip_as_sampled_by_hand() {
    for mode in [PlayMode::Loop, PlayMode::Clamp, PlayMode::PingPong] {
        for speed in [1.0, -1.5] {
            let script = [
                (0, Cmd::Speed(speed)),
                (50, Cmd::Pause),
                (55, Cmd::Resume),
                (90, Cmd::Seek(0.3)),
            ];
            compare((0, mode), &script, 220, |f, p| {
                assert_eq!((p.mode(), p.speed(), p.clip()), (mode, speed, 0));
                assert_eq!(p.is_paused(), (50..55).contains(&f));
            });
        }
    }
}

#[test]
fn a_crossfade_interrupted_half_way_by_another_blends_three_clips() {
    let script = [
        (
            10,
            Cmd::Play(1, PlayMode::Loop, fade(0.5, FadeCurve::Linear)),
        ),
        (
            25,
            Cmd::Play(2, PlayMode::PingPong, fade(0.4, FadeCurve::SmoothStep)),
        ),
    ];
    let mut three = 0;
    compare((0, PlayMode::Loop), &script, 80, |f, p| {
        if (25..48).contains(&f) {
            assert_eq!(p.source_count(), 3, "frame {f}");
            three += 1;
            let sum: f32 = p.sources().map(|(_, w)| w).sum();
            assert!((sum - 1.0).abs() < 1e-6);
        }
        if f >= 50 {
            assert!(!p.is_fading());
            assert_eq!(p.clip(), 2);
        }
    });
    assert!(three > 0);
}

#[test]
fn a_crossfade_interrupted_by_an_inertialization() {
    let script = [
        (3, Cmd::Speed(-1.5)),
        (
            10,
            Cmd::Play(1, PlayMode::Loop, fade(0.5, FadeCurve::EaseIn)),
        ),
        (
            25,
            Cmd::Play(2, PlayMode::Clamp, Transition::inertialize(0.3)),
        ),
    ];
    let outputs = compare((0, PlayMode::Loop), &script, 70, |f, p| {
        if f >= 25 {
            assert_eq!(p.source_count(), 1);
            // The quintic takes 0.3 s at most (18 frames).
            assert!(p.is_inertializing() || f > 25, "frame {f}");
            assert!(!p.is_inertializing() || f <= 25 + 18, "frame {f}");
        }
    });
    assert_no_pop(&outputs, 25);
}

#[test]
fn an_inertialization_interrupted_by_another_and_by_a_crossfade() {
    let spring = Transition {
        duration: 0.0,
        blend: Blend::Inertialize(Decay::Spring { half_life: 0.08 }),
    };
    let script = [
        (
            10,
            Cmd::Play(1, PlayMode::Loop, Transition::inertialize(0.4)),
        ),
        (
            18,
            Cmd::Play(2, PlayMode::Loop, Transition::inertialize(0.3)),
        ),
        (
            30,
            Cmd::Play(0, PlayMode::PingPong, fade(0.3, FadeCurve::EaseOut)),
        ),
        (36, Cmd::Play(1, PlayMode::Loop, spring)),
    ];
    let outputs = compare((0, PlayMode::Loop), &script, 90, |_, _| {});
    for at in [10, 18, 36] {
        assert_no_pop(&outputs, at);
    }
}

/// The step into frame `at` (where a switch shows) is no bigger than the
/// steps around it: an inertialized switch does not pop.
fn assert_no_pop(outputs: &[Vec<SoaTransform>], at: usize) {
    let step = |f: usize| pose_diff(&outputs[f], &outputs[f - 1]);
    let around = step(at - 1).max(step(at + 1)).max(1e-3);
    assert!(
        step(at) < 3.0 * around,
        "switch at {at}: {} vs {around}",
        step(at)
    );
}

#[test]
fn edges_of_every_source_are_reported_once_and_a_small_buffer_counts_the_rest() {
    let rig = Rig::new();
    let clips = rig.clips();
    let tracks = rig.tracks();
    let n = rig.n();
    let assets = PlayerClips {
        clips: &clips,
        events: &tracks,
        rest: &rig.rest,
        root: None,
    };
    let mut big = Player::<K>::new(&clips, 0, PlayMode::Loop).unwrap();
    let mut small = big;
    let (mut bufs, mut bufs_small) = (Bufs::new(n), Bufs::new(n));
    let mut out = vec![SoaTransform::IDENTITY; n];
    let mut edges = vec![PlayerEdge::default(); 64];
    let mut one = [PlayerEdge::default(); 1];
    let (mut total, mut dropped) = (0u64, 0u64);
    for f in 0..400 {
        if f % 37 == 5 {
            let clip = (f / 37) % 3;
            let tr = if f % 2 == 0 {
                fade(0.6, FadeCurve::Linear)
            } else {
                Transition::inertialize(0.2)
            };
            for p in [&mut big, &mut small] {
                p.play(&clips, clip, PlayMode::PingPong, &tr).unwrap();
            }
        }
        // Long frames now and then cross many edges at once.
        let dt = if f % 50 == 49 { 2.5 } else { DT };
        let a = big
            .update(dt, &assets, &mut bufs.get(), &mut out, &mut edges)
            .unwrap();
        let b = small
            .update(dt, &assets, &mut bufs_small.get(), &mut out, &mut one)
            .unwrap();
        assert_eq!(a.edges_dropped, 0);
        assert!(b.edges_written <= 1);
        assert_eq!(
            b.edges_written as u64 + b.edges_dropped,
            a.edges_written as u64
        );
        if b.edges_written == 1 {
            assert_eq!(one[0], edges[0]);
        }
        total += a.edges_written as u64;
        dropped += b.edges_dropped;
    }
    assert!(total > 100 && dropped > 0, "{total} {dropped}");
}

#[test]
fn root_motion_of_n_cycles_is_n_times_the_cycle() {
    let rig = Rig::new();
    let clips = rig.clips();
    let n = rig.n();
    let assets = PlayerClips {
        clips: &clips,
        events: &[],
        rest: &rig.rest,
        root: Some(ROOT),
    };
    let walk = &clips[0];
    let frames = walk.frame_count() - 1;
    let first = get_joint(&rig.keys[0][..n], ROOT).unwrap();
    let last = get_joint(&rig.keys[0][frames * n..], ROOT).unwrap();
    let cycle = RootMotion::between(&first, &last);
    assert!(cycle.translation.length() > 1.0);
    let mut player = Player::<K>::new(&clips, 0, PlayMode::Loop).unwrap();
    let mut bufs = Bufs::new(n);
    let mut out = vec![SoaTransform::IDENTITY; n];
    let (mut got, mut want) = (RootMotion::ZERO, RootMotion::ZERO);
    let cycles = 5;
    // Two updates per stored frame: whole cycles end on frame boundaries.
    for _ in 0..cycles * frames * 2 {
        let r = player
            .update(0.5 / RATE, &assets, &mut bufs.get(), &mut out, &mut [])
            .unwrap();
        got = got.then(r.root_motion);
    }
    for _ in 0..cycles {
        want = want.then(cycle);
    }
    assert!(player.time() < 1e-4 || player.time() > walk.duration() - 1e-4);
    let d = motion_diff(got, want);
    assert!(d < 1e-4 * cycles as f32, "{d}: {got:?} vs {want:?}");
}

#[test]
fn a_half_way_fade_moves_the_root_by_the_mean_motion() {
    let rig = Rig::new();
    let clips = rig.clips();
    let n = rig.n();
    let assets = PlayerClips {
        clips: &clips,
        events: &[],
        rest: &rig.rest,
        root: Some(ROOT),
    };
    let mut player = Player::<K>::new(&clips, 0, PlayMode::Loop).unwrap();
    let mut bufs = Bufs::new(n);
    let mut out = vec![SoaTransform::IDENTITY; n];
    player
        .update(DT, &assets, &mut bufs.get(), &mut out, &mut [])
        .unwrap();
    // Linear over two frames: weights 1/2 and 1/2 after one.
    player
        .play(
            &clips,
            2,
            PlayMode::Loop,
            &fade(2.0 * DT, FadeCurve::Linear),
        )
        .unwrap();
    let (walk, run) = (player.source(0).unwrap().0, player.source(1).unwrap().0);
    let r = player
        .update(DT, &assets, &mut bufs.get(), &mut out, &mut [])
        .unwrap();
    assert_eq!(
        (player.source(0).unwrap().1, player.source(1).unwrap().1),
        (0.5, 0.5)
    );
    let mut scratch = vec![SoaTransform::IDENTITY; n];
    let motion = |s: Source, scratch: &mut [SoaTransform]| {
        let mut p = s.playhead;
        let c = &clips[s.clip as usize];
        p.advance(DT, c.duration())
            .unwrap()
            .root_motion(c, ROOT, &rig.rest, scratch)
            .unwrap()
    };
    let (a, b) = (motion(walk, &mut scratch), motion(run, &mut scratch));
    let mean = (a.translation + b.translation) * 0.5;
    assert!((r.root_motion.translation - mean).length() < 1e-6);
    assert!((r.root_motion.yaw - 0.5 * (a.yaw + b.yaw)).abs() < 1e-6);
    assert!((a.translation - b.translation).length() > 0.01);
}

#[test]
fn bad_input_is_an_error_and_changes_nothing() {
    let rig = Rig::new();
    let clips = rig.clips();
    let tracks = rig.tracks();
    let n = rig.n();
    let small_keys = [SoaTransform::IDENTITY; 2];
    let other = [RawClip::new(RATE, 1, &small_keys).unwrap()];
    let assets = PlayerClips {
        clips: &clips,
        events: &tracks,
        rest: &rig.rest,
        root: Some(ROOT),
    };
    let mut player = Player::<K>::new(&clips, 0, PlayMode::Loop).unwrap();
    let mut bufs = Bufs::new(n);
    let mut out = vec![SoaTransform::IDENTITY; n];
    let mut edges = [PlayerEdge::default(); 8];
    // Some history and a fade under way, so there is state to keep.
    for f in 0..6 {
        if f == 2 {
            player
                .play(&clips, 1, PlayMode::Loop, &fade(0.5, FadeCurve::Linear))
                .unwrap();
        }
        player
            .update(DT, &assets, &mut bufs.get(), &mut out, &mut edges)
            .unwrap();
    }
    let (p0, b0, o0) = (player, bufs.clone(), out.clone());
    let unchanged = |p: &Player<K>, b: &Bufs, o: &[SoaTransform]| {
        assert_eq!(*p, p0);
        assert_eq!(*b, b0);
        assert_eq!(o, &o0[..]);
    };

    // Commands.
    let e = player.play(&clips, 3, PlayMode::Loop, &fade(0.2, FadeCurve::Linear));
    assert_eq!(e, Err(Error::UnknownClip { clip: 3, count: 3 }));
    let e = player.play(&other, 0, PlayMode::Loop, &fade(0.2, FadeCurve::Linear));
    assert!(matches!(e, Err(Error::InvalidParameter { .. })), "{e:?}");
    for tr in [
        fade(-1.0, FadeCurve::Linear),
        fade(f32::NAN, FadeCurve::Linear),
        fade(f32::INFINITY, FadeCurve::Linear),
        Transition::inertialize(0.0),
        Transition {
            duration: 0.2,
            blend: Blend::Inertialize(Decay::Spring { half_life: 0.0 }),
        },
        Transition {
            duration: 0.2,
            blend: Blend::Inertialize(Decay::Spring {
                half_life: f32::NAN,
            }),
        },
    ] {
        let e = player.play(&clips, 2, PlayMode::Loop, &tr);
        assert!(
            matches!(e, Err(Error::InvalidParameter { .. })),
            "{tr:?}: {e:?}"
        );
    }
    for s in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        assert_eq!(
            player.set_speed(s),
            Err(Error::NonFinite {
                what: "playback speed"
            })
        );
    }
    assert!(player.seek(&clips, f32::NAN).is_err());
    assert!(player.seek(&clips[..1], 0.1).is_err());
    unchanged(&player, &bufs, &out);

    // Frames.
    let mut up = |player: &mut Player<K>,
                  bufs: &mut Bufs,
                  out: &mut [SoaTransform],
                  dt: f32,
                  assets: &PlayerClips<'_, RawClip<'_>>| {
        player.update(dt, assets, &mut bufs.get(), out, &mut edges)
    };
    for dt in [f32::NAN, -DT, f32::INFINITY] {
        let e = up(&mut player, &mut bufs, &mut out, dt, &assets);
        assert_eq!(e, Err(Error::NonFinite { what: "dt" }));
    }
    let bad_assets = [
        PlayerClips {
            clips: &clips[..1],
            ..assets
        },
        PlayerClips {
            events: &tracks[..2],
            ..assets
        },
        PlayerClips {
            rest: &rig.rest[1..],
            ..assets
        },
        PlayerClips {
            root: Some(n * LANES),
            ..assets
        },
    ];
    for a in &bad_assets {
        assert!(up(&mut player, &mut bufs, &mut out, DT, a).is_err());
    }
    // A clip of another skeleton where a playing one was.
    let mixed = [clips[0], other[0]];
    let a = PlayerClips {
        clips: &mixed,
        events: &[],
        ..assets
    };
    let e = player.update(DT, &a, &mut bufs.get(), &mut out, &mut edges);
    assert!(matches!(e, Err(Error::InvalidParameter { .. })), "{e:?}");
    // An event track of another duration.
    let wrong = [
        tracks[0],
        Some(EventTrack::new(9.0, &[], &[], &[]).unwrap()),
        tracks[2],
    ];
    let a = PlayerClips {
        events: &wrong,
        ..assets
    };
    let e = player.update(DT, &a, &mut bufs.get(), &mut out, &mut edges);
    assert!(matches!(e, Err(Error::InvalidParameter { .. })), "{e:?}");
    // Short output and buffers.
    let e = player.update(DT, &assets, &mut bufs.get(), &mut out[1..], &mut edges);
    assert!(
        matches!(
            e,
            Err(Error::BadLength {
                buffer: "output",
                ..
            })
        ),
        "{e:?}"
    );
    for which in 0..4 {
        let mut b = bufs.clone();
        let mut pb = b.get();
        match which {
            0 => pb.sources = &mut core::mem::take(&mut pb.sources)[1..],
            1 => pb.history = &mut core::mem::take(&mut pb.history)[1..],
            2 => pb.inertial = &mut core::mem::take(&mut pb.inertial)[1..],
            _ => pb.scratch = &mut core::mem::take(&mut pb.scratch)[1..],
        }
        let e = player.update(DT, &assets, &mut pb, &mut out, &mut edges);
        assert!(matches!(e, Err(Error::BadLength { .. })), "{which}: {e:?}");
    }
    unchanged(&player, &bufs, &out);

    // Construction.
    assert_eq!(
        Player::<K>::new(&clips, 7, PlayMode::Loop),
        Err(Error::UnknownClip { clip: 7, count: 3 })
    );
    assert_eq!(
        Player::<0>::new(&clips, 0, PlayMode::Loop),
        Err(Error::CapacityExceeded { capacity: 0 })
    );

    // And the player still plays on.
    player
        .update(DT, &assets, &mut bufs.get(), &mut out, &mut edges)
        .unwrap();
    assert!(pose_diff(&out, &o0) > 0.0);
}

#[test]
fn buffer_sizes_scale_with_the_sources_and_the_skeleton() {
    let s = Player::<3>::buffer_sizes(18);
    assert_eq!(
        s,
        BufferSizes {
            sources: 54,
            history: 36,
            inertial: 18,
            scratch: 18,
        }
    );
    // The player is a plain value.
    fn is_static<T: 'static + Copy + Send + Sync>() {}
    is_static::<Player<4>>();
}

#[test]
fn state_words_round_trip_and_resume_the_same_frames() {
    // Through every kind of transition, at every frame: the words rebuild
    // the identical player, and a player rebuilt mid-run plays on exactly
    // as the original does.
    let rig = Rig::new();
    let clips = rig.clips();
    let tracks = rig.tracks();
    let assets = PlayerClips {
        clips: &clips,
        events: &tracks,
        rest: &rig.rest,
        root: Some(ROOT),
    };
    let cmds: [(usize, Cmd); 6] = [
        (
            10,
            Cmd::Play(1, PlayMode::PingPong, fade(0.4, FadeCurve::EaseIn)),
        ),
        (
            20,
            Cmd::Play(2, PlayMode::Clamp, fade(0.3, FadeCurve::SmoothStep)),
        ),
        (
            25,
            Cmd::Play(0, PlayMode::Loop, Transition::inertialize(0.2)),
        ),
        (30, Cmd::Speed(-1.5)),
        (40, Cmd::Pause),
        (
            44,
            Cmd::Play(
                1,
                PlayMode::Loop,
                Transition {
                    duration: 0.0,
                    blend: Blend::Inertialize(Decay::Spring { half_life: 0.1 }),
                },
            ),
        ),
    ];
    let mut p = Player::<K>::new(&clips, 0, PlayMode::Loop).unwrap();
    let mut bufs = Bufs::new(rig.n());
    let mut out = vec![SoaTransform::IDENTITY; rig.n()];
    let mut edges = [PlayerEdge::default(); 16];
    let mut words = [0u32; Player::<K>::WORDS];
    for frame in 0..60 {
        for (at, cmd) in cmds {
            if at == frame {
                match cmd {
                    Cmd::Play(c, m, t) => p.play(&clips, c, m, &t).unwrap(),
                    Cmd::Speed(s) => p.set_speed(s).unwrap(),
                    Cmd::Pause => p.pause(),
                    Cmd::Resume => p.resume(),
                    Cmd::Seek(t) => p.seek(&clips, t).unwrap(),
                }
            }
        }
        p.to_words(&mut words).unwrap();
        let q = Player::<K>::from_words(&words).unwrap();
        assert_eq!(q, p, "frame {frame}");
        if frame == 27 {
            // Ten frames from the copy and from the original agree bit for bit.
            let (mut a, mut b) = (p, q);
            let (mut ba, mut bb) = (bufs.clone(), bufs.clone());
            let (mut oa, mut ob) = (out.clone(), out.clone());
            for _ in 0..10 {
                let ra = a
                    .update(DT, &assets, &mut ba.get(), &mut oa, &mut edges)
                    .unwrap();
                let rb = b
                    .update(DT, &assets, &mut bb.get(), &mut ob, &mut edges)
                    .unwrap();
                assert_eq!((ra, &oa), (rb, &ob));
            }
        }
        p.update(DT, &assets, &mut bufs.get(), &mut out, &mut edges)
            .unwrap();
    }
}

#[test]
fn bad_state_words_are_an_error_never_a_panic() {
    let rig = Rig::new();
    let clips = rig.clips();
    let mut p = Player::<K>::new(&clips, 1, PlayMode::PingPong).unwrap();
    p.play(&clips, 2, PlayMode::Loop, &Transition::crossfade(0.5))
        .unwrap();
    let mut words = [0u32; Player::<K>::WORDS];
    p.to_words(&mut words).unwrap();
    assert!(Player::<K>::from_words(&words[1..]).is_err());
    assert!(p.to_words(&mut [0u32; 3]).is_err());
    // Every word set to values that are out of range somewhere (NaN,
    // infinity, -1, a huge count, 2): an error or a player that encodes
    // back to the same words, never a panic.
    for i in 0..words.len() {
        for v in [0x7fc0_0000, 0x7f80_0000, 0xbf80_0000, u32::MAX, 2, 7] {
            let mut w = words;
            w[i] = v;
            if let Ok(q) = Player::<K>::from_words(&w) {
                let mut again = [0u32; Player::<K>::WORDS];
                q.to_words(&mut again).unwrap();
                assert_eq!(again, w, "word {i} = {v:#x}");
            }
        }
    }
    // Named cases: no live source, an unknown mode, a weight above 1.
    let live = 6 * K;
    let mut w = words;
    w[live] = 0;
    assert!(Player::<K>::from_words(&w).is_err());
    w = words;
    w[3] = 3;
    assert!(Player::<K>::from_words(&w).is_err());
    w = words;
    w[5] = 1.5f32.to_bits();
    assert!(Player::<K>::from_words(&w).is_err());
}
