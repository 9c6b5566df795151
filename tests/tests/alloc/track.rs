//! Tracks and graphs: a track set of raw and quantized float, vector and
//! rotation tracks sampled all at once and one by one with cursors, and
//! the locomotion graph driven through all its states.

use sinew_core::clip::RawClip;
use sinew_core::graph::{GraphBuffers, GraphContext, GraphEvent, GraphInstance};
use sinew_core::math::Quat;
use sinew_core::mix::InertialBlock;
use sinew_core::track::curve::{Cursor, Interpolation};
use sinew_core::track::event::EventTrack;
use sinew_core::track::store::{
    track_set_size, write_track_set, Encoding, TrackDesc, TrackKind, TrackSet,
};
use sinew_core::{f32x4, Error, SoaTransform};
use sinew_std::graph::Locomotion;

use crate::frames_allocate_nothing;

/// 600 frames of a 12-track set (float, vec3 and rotation tracks, raw and
/// quantized, linear, CUBICSPLINE and step) sampled with `sample_all` and
/// track by track with cursors.
pub fn track_sets_allocate_nothing() {
    let times: Vec<f32> = (0..30)
        .map(|k| k as f32 * 0.1 + (k % 3) as f32 * 0.01)
        .collect();
    let floats: Vec<f32> = (0..90).map(|i| (i as f32 * 0.37).sin()).collect();
    let vec3s: Vec<f32> = (0..270).map(|i| (i as f32 * 0.11).cos()).collect();
    let quats: Vec<f32> = (0..30)
        .flat_map(|k| {
            let q = Quat::from_rotation_y(k as f32 * 0.2);
            [q.x, q.y, q.z, q.w]
        })
        .collect();
    let mut descs = Vec::new();
    for encoding in [Encoding::Raw, Encoding::Quantized] {
        descs.push(TrackDesc {
            name: "f",
            target: None,
            kind: TrackKind::Float,
            interpolation: Interpolation::Linear,
            times: &times,
            values: &floats[..30],
            encoding,
        });
        descs.push(TrackDesc {
            name: "c",
            target: Some(1),
            kind: TrackKind::Float,
            interpolation: Interpolation::CubicSpline,
            times: &times,
            values: &floats,
            encoding,
        });
        descs.push(TrackDesc {
            name: "s",
            target: None,
            kind: TrackKind::Float,
            interpolation: Interpolation::Step,
            times: &times,
            values: &floats[..30],
            encoding,
        });
        descs.push(TrackDesc {
            name: "v",
            target: None,
            kind: TrackKind::Vec3,
            interpolation: Interpolation::Linear,
            times: &times,
            values: &vec3s[..90],
            encoding,
        });
        descs.push(TrackDesc {
            name: "w",
            target: None,
            kind: TrackKind::Vec3,
            interpolation: Interpolation::CubicSpline,
            times: &times,
            values: &vec3s,
            encoding,
        });
        descs.push(TrackDesc {
            name: "q",
            target: None,
            kind: TrackKind::Quat,
            interpolation: Interpolation::Linear,
            times: &times,
            values: &quats,
            encoding,
        });
    }
    let size = track_set_size(&descs).expect("the set sizes");
    let mut bytes = vec![0u128; size.div_ceil(16)];
    let bytes = &mut bytemuck::cast_slice_mut::<u128, u8>(&mut bytes)[..size];
    write_track_set(&descs, bytes).expect("the set writes");
    let set = TrackSet::from_bytes(bytes).expect("the set reads");
    let mut cursors = vec![Cursor::new(); set.len()];
    let mut one = vec![Cursor::new(); set.len()];
    let mut out = vec![0.0f32; set.component_count()];
    frames_allocate_nothing("track sets", 600, |frame| {
        let t = (frame % 200) as f32 / 60.0;
        set.sample_all(t, &mut cursors, &mut out)?;
        let mut sum = out.iter().sum::<f32>();
        for (i, c) in one.iter_mut().enumerate() {
            let track = set
                .track(i)
                .ok_or(Error::InvalidParameter { what: "track" })?;
            sum += match track.kind() {
                TrackKind::Float => track.typed::<f32>()?.sample_with(c, t),
                TrackKind::Vec3 => track.typed::<[f32; 3]>()?.sample_with(c, t)[1],
                _ => track.typed::<Quat>()?.sample_with(c, t).w,
            };
        }
        Ok::<f32, Error>(sum)
    });
}

/// 900 frames of the locomotion graph: idle, walking, running, jumping
/// (falling, landing) and stopping, over and over, with its event tracks.
pub fn graph_allocates_nothing() {
    let l = Locomotion::new().expect("the example builds");
    let g = l.graph.view();
    let skel = l.humanoid.skeleton.view();
    let clips: Vec<RawClip<'_>> = l.clips.iter().map(|c| c.view()).collect();
    let tracks: Vec<Option<EventTrack<'_>>> = l.tracks();
    let ctx = GraphContext {
        graph: &g,
        clips: &clips,
        events: &tracks,
        rest: skel.rest_pose(),
    };
    let n = skel.soa_count();
    let mut scratch = vec![SoaTransform::IDENTITY; g.scratch_poses() * n];
    let mut history = vec![SoaTransform::IDENTITY; 2 * n];
    let mut inertial = vec![InertialBlock::default(); n];
    let mut mask = vec![f32x4::ZERO; 2 * n];
    let mut out = vec![SoaTransform::IDENTITY; n];
    let mut events = vec![GraphEvent::default(); 16];
    let mut inst = GraphInstance::new(&g).expect("an instance of the example");
    let (speed, jump, grounded) = (
        g.find_param("speed").expect("speed"),
        g.find_param("jump").expect("jump"),
        g.find_param("grounded").expect("grounded"),
    );
    frames_allocate_nothing("the locomotion graph", 900, |frame| {
        match frame % 300 {
            30 => inst.set_param(&g, speed, 2.0)?,
            90 => inst.set_param(&g, speed, 4.0)?,
            150 => {
                inst.fire(&g, jump)?;
                inst.set_param(&g, grounded, 0.0)?;
            }
            200 => inst.set_param(&g, grounded, 1.0)?,
            260 => inst.set_param(&g, speed, 0.0)?,
            _ => {}
        }
        let mut bufs = GraphBuffers {
            scratch: &mut scratch,
            history: &mut history,
            inertial: &mut inertial,
            mask: &mut mask,
        };
        let r = inst.update(1.0 / 60.0, &ctx, &mut bufs, &mut out, &mut events)?;
        Ok::<f32, Error>(out[1].rotation.w.as_array()[0] + r.depth as f32)
    });
}
