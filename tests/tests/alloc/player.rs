//! The per-character player: compressed clips with event tracks and a root
//! joint, through cross-fades (interrupted), inertialized switches,
//! speed changes, pause and seek.

use sinew_core::compressed::CompressedClip;
use sinew_core::mix::{Decay, InertialBlock};
use sinew_core::player::{
    Blend, FadeCurve, PlayMode, Player, PlayerBuffers, PlayerClips, PlayerEdge, Transition,
};
use sinew_core::track::event::{sort_range_ends, Event, EventTrack};
use sinew_core::{Error, SoaTransform};
use sinew_std::compress::{compress, CompressOptions};
use sinew_std::Humanoid;

use crate::frames_allocate_nothing;

/// 900 frames of a four-source player on the humanoid's compressed walk,
/// jog and run: a transition every 25 frames, alternating cross-fades
/// (which interrupt each other) and inertializations (quintic and
/// spring), with speed, pause, resume and seek commands in between.
pub fn player_allocates_nothing() {
    let h = Humanoid::default_rate();
    let skel = h.skeleton.view();
    let rest = skel.rest_pose();
    let owned: Vec<_> = h
        .clips
        .iter()
        .map(|c| {
            compress(&skel, &c.view(), &CompressOptions::default())
                .expect("the humanoid's clips compress")
                .0
        })
        .collect();
    let clips: Vec<CompressedClip<'_>> = owned.iter().map(|c| c.view()).collect();
    let events: Vec<Vec<Event>> = clips
        .iter()
        .map(|c| {
            let d = c.duration();
            vec![
                Event::instant(0.0, 1),
                Event::range(0.2 * d, 0.5 * d, 2),
                Event::instant(0.75 * d, 3),
            ]
        })
        .collect();
    let ranges: Vec<Vec<u32>> = events
        .iter()
        .map(|e| {
            let mut r = vec![0; 1];
            sort_range_ends(e, &mut r).unwrap();
            r
        })
        .collect();
    let tracks: Vec<Option<EventTrack<'_>>> = (0..clips.len())
        .map(|i| Some(EventTrack::new(clips[i].duration(), &events[i], &[], &ranges[i]).unwrap()))
        .collect();
    let assets = PlayerClips {
        clips: &clips,
        events: &tracks,
        rest,
        root: Some(0),
    };
    let n = skel.soa_count();
    let sizes = Player::<4>::buffer_sizes(n);
    let mut sources = vec![SoaTransform::IDENTITY; sizes.sources];
    let mut history = vec![SoaTransform::IDENTITY; sizes.history];
    let mut inertial = vec![InertialBlock::default(); sizes.inertial];
    let mut scratch = vec![SoaTransform::IDENTITY; sizes.scratch];
    let mut out = vec![SoaTransform::IDENTITY; n];
    let mut edges = vec![PlayerEdge::default(); 16];
    let mut player = Player::<4>::new(&clips, 0, PlayMode::Loop).unwrap();
    let transitions = [
        Transition {
            duration: 0.5,
            blend: Blend::Crossfade(FadeCurve::SmoothStep),
        },
        Transition::inertialize(0.3),
        Transition {
            duration: 0.4,
            blend: Blend::Crossfade(FadeCurve::Linear),
        },
        Transition {
            duration: 0.0,
            blend: Blend::Inertialize(Decay::Spring { half_life: 0.1 }),
        },
    ];
    let modes = [PlayMode::Loop, PlayMode::PingPong, PlayMode::Clamp];

    frames_allocate_nothing("the player", 900, |frame| {
        if frame % 25 == 0 {
            let k = frame / 25;
            player.play(&clips, k % 3, modes[k % 3], &transitions[k % 4])?;
        }
        match frame % 200 {
            60 => player.set_speed(-1.5)?,
            120 => player.set_speed(1.0)?,
            150 => player.pause(),
            160 => player.resume(),
            170 => player.seek(&clips, 0.25)?,
            _ => {}
        }
        let mut buffers = PlayerBuffers {
            sources: &mut sources,
            history: &mut history,
            inertial: &mut inertial,
            scratch: &mut scratch,
        };
        let report = player.update(1.0 / 60.0, &assets, &mut buffers, &mut out, &mut edges)?;
        Ok::<f32, Error>(
            out[1].rotation.w.as_array()[0]
                + report.root_motion.translation.z
                + report.edges_written as f32,
        )
    });
}
