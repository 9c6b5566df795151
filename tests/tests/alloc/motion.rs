//! Compressed sampling, cross-fades, partial FK, inertialization, root
//! motion and the 2D blend space.

use sinew_core::clip::{ClipSource, RawClip, TimeMode};
use sinew_core::compressed::{CompressedClip, PlaybackCache, RotationFormat};
use sinew_core::fk::{self, FkJob};
use sinew_core::mix::root_motion::{self, RootAccumulator, RootMotion};
use sinew_core::mix::{crossfade, sample_blend, BlendSpace2D, Decay, InertialBlock, Inertializer};
use sinew_core::soa::{get_joint, set_joint};
use sinew_core::{Error, Mat4, SoaTransform, Vec3};
use sinew_std::blend_space::build_2d;
use sinew_std::compress::{compress, CompressOptions, OwnedCompressedClip};
use sinew_std::Humanoid;

use crate::frames_allocate_nothing;

/// The humanoid's walk, jog and run compressed three ways: the default
/// options (rest-pose stripping, drop-W rotations), smallest-three
/// rotations without rest-pose stripping (sampled without a rest pose), and
/// the default again.
fn compressed_clips(h: &Humanoid) -> [OwnedCompressedClip; 3] {
    let skel = h.skeleton.view();
    let identity_defaults = CompressOptions {
        rest_pose_stripping: false,
        rotation: RotationFormat::SmallestThree,
        ..CompressOptions::default()
    };
    let options = [
        CompressOptions::default(),
        identity_defaults,
        CompressOptions::default(),
    ];
    core::array::from_fn(|i| {
        compress(&skel, &h.clips[i].view(), &options[i])
            .expect("the humanoid's clips compress")
            .0
    })
}

/// Compressed clips sampled every frame: with the rest pose, without it (a
/// clip whose defaults are identities), through [`ClipSource`], through a
/// playback cache, at random times in both time modes, and single frames
/// decoded.
pub fn compressed_sampling_allocates_nothing() {
    let h = Humanoid::default_rate();
    let skel = h.skeleton.view();
    let rest = skel.rest_pose();
    let owned = compressed_clips(&h);
    let [walk, jog, run]: [CompressedClip<'_>; 3] = core::array::from_fn(|i| owned[i].view());
    assert!(walk.needs_rest_pose() && !jog.needs_rest_pose());
    let blocks = skel.soa_count();
    let mut out = [
        vec![SoaTransform::IDENTITY; blocks],
        vec![SoaTransform::IDENTITY; blocks],
        vec![SoaTransform::IDENTITY; blocks],
        vec![SoaTransform::IDENTITY; blocks],
    ];
    let mut cache_buf = vec![SoaTransform::IDENTITY; walk.cache_blocks()];
    let mut cache = PlaybackCache::new(&mut cache_buf);
    frames_allocate_nothing("compressed sampling", 600, |frame| {
        let t = frame as f32 / 60.0;
        let [a, b, c, d] = &mut out;
        // Through a playback cache: sequential, then a seek every 50 frames.
        let tc = if frame % 50 == 0 { 0.37 * t } else { t };
        walk.sample_cached(tc, TimeMode::Loop, rest, &mut cache, d)?;
        walk.sample_with_rest(t, TimeMode::Loop, rest, a)?;
        jog.sample(t, TimeMode::Clamp, b)?;
        ClipSource::sample(&run, t, TimeMode::Loop, rest, c)?;
        // A seek to an unrelated time (a random access, not the next frame).
        let seek = (frame * 7919 % 1000) as f32 / 1000.0 * 2.0 * run.duration() - 0.5;
        run.sample_with_rest(seek, TimeMode::Loop, rest, d)?;
        jog.sample_with_rest(seek, TimeMode::Clamp, rest, d)?;
        walk.decode_frame(frame % walk.frame_count(), rest, d)?;
        Ok::<f32, Error>(
            a[0].translation.y.as_array()[0]
                + b[1].rotation.w.as_array()[1]
                + c[2].rotation.x.as_array()[2]
                + d[3].rotation.y.as_array()[3],
        )
    });
}

/// Cross-fades between two sampled clips, FK of the upper body only
/// (`FkJob::range`, as after a change to it), and an [`Inertializer`]
/// switching between clips every 40 frames and updating every frame.
pub fn crossfade_partial_fk_and_inertializer_allocate_nothing() {
    let h = Humanoid::default_rate();
    let skel = h.skeleton.view();
    let [walk, jog, run] = [h.clips[0].view(), h.clips[1].view(), h.clips[2].view()];
    let blocks = skel.soa_count();
    let n = skel.joint_count();
    let mut a = vec![SoaTransform::IDENTITY; blocks];
    let mut b = vec![SoaTransform::IDENTITY; blocks];
    let mut prev = vec![SoaTransform::IDENTITY; blocks];
    let mut faded = vec![SoaTransform::IDENTITY; blocks];
    let mut models = vec![Mat4::IDENTITY; n];
    let mut state = vec![InertialBlock::default(); blocks];
    let mut inertializer = Inertializer::new(Decay::Quintic).unwrap();
    let mut spring = Inertializer::new(Decay::Spring { half_life: 0.1 }).unwrap();
    let spine = skel.find_joint("spine_01").unwrap();
    let upper = (spine, skel.subtree_end(spine));
    let root = Mat4::from_translation(Vec3::new(0.0, 0.0, 1.0));
    let dt = 1.0 / 60.0;

    frames_allocate_nothing("cross-fade, partial FK and inertialization", 600, |frame| {
        let t = frame as f32 * dt;
        walk.sample(t, TimeMode::Loop, &mut a)?;
        jog.sample(t, TimeMode::Loop, &mut b)?;
        let alpha = (frame % 120) as f32 / 119.0;
        crossfade(&a, &b, alpha, &mut faded)?;
        fk::local_to_model(&FkJob::new(&skel, &faded).with_root(&root), &mut models)?;
        // The upper body again, from the run (joints before it as computed).
        run.sample(t, TimeMode::Loop, &mut b)?;
        let job = FkJob::new(&skel, &b)
            .with_root(&root)
            .range(upper.0, upper.1);
        fk::local_to_model(&job, &mut models)?;
        // Switch between the fade and the run every 40 frames.
        if frame % 40 == 0 {
            let job = sinew_core::mix::SwitchJob {
                old: &faded,
                old_prev: &prev,
                new: &b,
                new_prev: &b,
                dt,
                duration: 0.4,
            };
            inertializer.switch(&mut state, &job)?;
            spring.switch(&mut state, &job)?;
        }
        prev.copy_from_slice(&faded);
        inertializer.update(&state, dt, &mut b)?;
        spring.update(&state, dt, &mut faded)?;
        Ok::<f32, Error>(
            models[n - 1].translation().y
                + models[upper.0].translation().x
                + b[2].rotation.w.as_array()[0]
                + faded[3].translation.y.as_array()[1],
        )
    });
}

/// The walk with its pelvis moving forward 1.4 m/s and turning 0.3 rad
/// over the cycle, as a clip with root motion.
fn travelling_walk(h: &Humanoid) -> (Vec<SoaTransform>, usize, f32) {
    let walk = &h.clips[0];
    let blocks = h.skeleton.view().soa_count();
    let rate = walk.sample_rate();
    let mut keys = walk.keys().to_vec();
    let frames = keys.len() / blocks;
    for (f, frame) in keys.chunks_exact_mut(blocks).enumerate() {
        let s = f as f32 / (frames - 1) as f32;
        let mut root = get_joint(frame, 0).expect("the humanoid has a root");
        root.translation.z += 1.4 * s * walk.duration();
        root.rotation = sinew_core::Quat::from_rotation_y(0.3 * s) * root.rotation;
        set_joint(frame, 0, &root).expect("joint 0 exists");
    }
    (keys, blocks, rate)
}

/// Root motion of a travelling walk each frame, raw and compressed (the
/// latter decoding into scratch), blended across two layers and
/// accumulated into a heading and position.
pub fn root_motion_allocates_nothing() {
    let h = Humanoid::default_rate();
    let skel = h.skeleton.view();
    let rest = skel.rest_pose();
    let (keys, blocks, rate) = travelling_walk(&h);
    let raw = RawClip::new(rate, blocks, &keys).unwrap();
    let (packed, _) = compress(&skel, &raw, &CompressOptions::default()).unwrap();
    let packed = packed.view();
    let mut scratch = vec![SoaTransform::IDENTITY; blocks];
    let mut per_frame = vec![RootMotion::ZERO; raw.frame_count() - 1];
    root_motion::extract(&raw, 0, &[], &mut [], &mut per_frame).unwrap();
    let mut acc = RootAccumulator::default();
    let mut packed_acc = RootAccumulator::default();
    let dt = 1.0 / 60.0;

    frames_allocate_nothing("root motion", 600, |frame| {
        let t = frame as f32 * dt;
        let m = root_motion::root_motion(&raw, 0, t, t + dt, &[], &mut [])?;
        let p = root_motion::root_motion(&packed, 0, t, t + dt, rest, &mut scratch)?;
        // Several loops at once (a long hitch), and a blend of two layers.
        let long = root_motion::root_motion(&raw, 0, t, t + 2.5 * raw.duration(), &[], &mut [])?;
        let stored = per_frame[frame % per_frame.len()];
        let blended = RootMotion::blend(&[(m, 0.7), (stored, 0.3)])?;
        acc.apply(blended);
        packed_acc.apply(p);
        Ok::<f32, Error>(
            acc.position.z + packed_acc.position.z + long.translation.z + acc.facing().w,
        )
    });
    assert!(acc.position.length() > 1.0, "the walk travelled: {acc:?}");
}

/// A 2D blend space (3x3 samples over the three clips, raw and
/// compressed) looked up at a moving point each frame, played in
/// normalised-time sync (one phase, each clip at the same fraction of its
/// cycle, the cycle's length the weighted mean of the clips'), FK after.
pub fn blend_space_2d_with_phase_allocates_nothing() {
    let h = Humanoid::default_rate();
    let skel = h.skeleton.view();
    let rest = skel.rest_pose();
    let raw: Vec<RawClip<'_>> = h.clips.iter().map(|c| c.view()).collect();
    let owned = compressed_clips(&h);
    let packed: Vec<CompressedClip<'_>> = owned.iter().map(OwnedCompressedClip::view).collect();
    let points: Vec<[f32; 2]> = (0..9)
        .map(|i| [(i % 3) as f32 - 1.0, (i / 3) as f32 * 1.5])
        .collect();
    let clips: Vec<usize> = (0..9).map(|i| i % 3).collect();
    let space: BlendSpace2D<9, 16> = build_2d(&points, &clips).unwrap();
    let blocks = skel.soa_count();
    let n = skel.joint_count();
    let mut scratch = vec![SoaTransform::IDENTITY; 3 * blocks];
    let mut pose = vec![SoaTransform::IDENTITY; blocks];
    let mut packed_pose = vec![SoaTransform::IDENTITY; blocks];
    let mut models = vec![Mat4::IDENTITY; n];
    let durations: Vec<f32> = raw.iter().map(ClipSource::duration).collect();
    let mut phase = 0.0f32;
    let dt = 1.0 / 60.0;

    frames_allocate_nothing("the 2D blend space", 600, |frame| {
        let t = frame as f32 * dt;
        // A point circling through the space, leaving its hull at times.
        let p = [1.4 * (0.7 * t).cos(), 1.5 + 1.8 * (0.5 * t).sin()];
        let w = space.weights(p)?;
        let cycle: f32 = w.iter().map(|(_, clip, wt)| wt * durations[clip]).sum();
        phase = (phase + dt / cycle.max(1e-3)).fract();
        let time = |s: usize| phase * durations[clips[s]];
        sample_blend(
            &raw,
            &w,
            time,
            TimeMode::Loop,
            rest,
            &mut scratch,
            &mut pose,
        )?;
        sample_blend(
            &packed,
            &w,
            time,
            TimeMode::Loop,
            rest,
            &mut scratch,
            &mut packed_pose,
        )?;
        fk::local_to_model(&FkJob::new(&skel, &pose), &mut models)?;
        Ok::<f32, Error>(
            models[n - 1].translation().y + packed_pose[1].rotation.w.as_array()[0] + w.weights[0],
        )
    });
}
