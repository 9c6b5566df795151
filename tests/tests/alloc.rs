//! The per-frame pipeline allocates nothing: 1000 frames of sampling (3 clips),
//! blending (3 layers plus an additive one) and FK on the procedural humanoid,
//! the mixer and transitions, and the crowd's per-character stages with foot
//! placement, counted by a global allocator.
//!
//! This is its own test binary because it replaces the global allocator. Only
//! allocations made on the measuring thread while measuring are counted (the
//! counter is per thread), so the test harness's own threads, output capture
//! and other tests measuring at the same time cannot disturb the count.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use sinew_core::blend::{self, BlendJob, BlendLayer, JointWeights};
use sinew_core::clip::TimeMode;
use sinew_core::fk::{self, FkJob};
use sinew_core::{f32x4, Error, Mat4, SoaTransform};
use sinew_std::Humanoid;

/// Counts allocations (including zeroed allocations and reallocations) made
/// by a thread that has switched counting on.
struct CountingAllocator;

thread_local! {
    // `const` and without a destructor: reading it never allocates.
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    // Per thread, so tests measuring at the same time do not see each other.
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn note_allocation() {
    if COUNTING.try_with(Cell::get).unwrap_or(false) {
        let _ = ALLOCATIONS.try_with(|a| a.set(a.get() + 1));
    }
}

// Safety: every method forwards to `System` with the caller's arguments
// unchanged, so `System`'s guarantees are this allocator's guarantees.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note_allocation();
        // Safety: same contract as `GlobalAlloc::alloc`, upheld by our caller.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note_allocation();
        // Safety: same contract as `GlobalAlloc::alloc_zeroed`, upheld by our caller.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note_allocation();
        // Safety: `ptr` was allocated by `System` (through us) with `layout`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // Safety: `ptr` was allocated by `System` (through us) with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// Runs `f` with counting on (on this thread) and returns the allocations it made.
fn count_allocations<R>(f: impl FnOnce() -> R) -> (usize, R) {
    ALLOCATIONS.with(|a| a.set(0));
    COUNTING.with(|c| c.set(true));
    let r = f();
    COUNTING.with(|c| c.set(false));
    (ALLOCATIONS.with(Cell::get), r)
}

#[test]
fn the_counter_sees_allocations() {
    // Without this the zero below would prove nothing.
    let (count, v) = count_allocations(|| std::hint::black_box(vec![1u8; 64]));
    assert!(count >= 1, "counted {count}");
    drop(v);
    let (count, mut v) = count_allocations(|| {
        let mut v = Vec::<u32>::with_capacity(1);
        for i in 0..100 {
            v.push(std::hint::black_box(i));
        }
        v
    });
    assert!(count >= 2, "reallocations counted: {count}");
    v.clear();
}

#[test]
fn pipeline_allocates_nothing_for_1000_frames() {
    // Set-up (allowed to allocate): assets, views and every buffer.
    let h = Humanoid::default_rate();
    let skel = h.skeleton.view();
    let clips = [h.clips[0].view(), h.clips[1].view(), h.clips[2].view()];
    let blocks = skel.soa_count();
    let n = skel.joint_count();
    let mut sampled = [
        vec![SoaTransform::IDENTITY; blocks],
        vec![SoaTransform::IDENTITY; blocks],
        vec![SoaTransform::IDENTITY; blocks],
    ];
    let mut local = vec![SoaTransform::IDENTITY; blocks];
    let mut models = vec![Mat4::IDENTITY; n];
    // Upper-body mask for the additive layer.
    let spine = skel.find_joint("spine_01").unwrap();
    let mask_values: Vec<f32x4> = (0..blocks)
        .map(|b| {
            f32x4::new(core::array::from_fn(|l| {
                let j = b * 4 + l;
                if j >= spine && j < skel.subtree_end(spine) {
                    1.0
                } else {
                    0.0
                }
            }))
        })
        .collect();
    let mask = JointWeights::new(&mask_values).unwrap();
    let root = Mat4::from_translation(sinew_core::Vec3::new(1.0, 0.0, -2.0));

    let (count, result) = count_allocations(|| -> Result<f32, Error> {
        let mut checksum = 0.0f32;
        for frame in 0..1000u32 {
            let time = frame as f32 / 60.0;
            for (clip, out) in clips.iter().zip(sampled.iter_mut()) {
                clip.sample(time, TimeMode::Loop, out)?;
            }
            let s = (time * 0.7).sin() * 0.5 + 0.5;
            let [walk, jog, run] = &sampled;
            let layers = [
                BlendLayer::new(walk, 1.0 - s),
                BlendLayer::new(jog, s * 0.5),
                BlendLayer::new(run, s * 0.5),
            ];
            let additive = [BlendLayer::masked(walk, 0.1, mask)];
            let job = BlendJob::new(&layers, &additive, skel.rest_pose());
            blend::blend(&job, &mut local)?;
            let job = FkJob::new(&skel, &local).with_root(&root);
            fk::local_to_model(&job, &mut models)?;
            checksum += models[n - 1].translation().y;
        }
        Ok(checksum)
    });
    let checksum = result.expect("pipeline runs without errors");
    assert!(
        checksum.is_finite() && checksum != 0.0,
        "work was done: {checksum}"
    );
    assert!(models.iter().all(Mat4::is_finite));
    assert_eq!(
        count, 0,
        "the per-frame pipeline allocated {count} times in 1000 frames"
    );
}

#[test]
fn mixer_blend_space_and_transitions_allocate_nothing() {
    use sinew_core::mix::transition::{self, SwitchJob};
    use sinew_core::mix::{
        additive, BSplineSmoother, BlendSpace1D, Decay, InertialBlock, MixMode, Mixer, MotionUnit,
        PhaseSync, Ramp, Sample1D,
    };
    let h = Humanoid::default_rate();
    let skel = h.skeleton.view();
    let clips = [h.clips[0].view(), h.clips[1].view(), h.clips[2].view()];
    let blocks = skel.soa_count();
    let mut pose = vec![SoaTransform::IDENTITY; blocks];
    let mut other = vec![SoaTransform::IDENTITY; blocks];
    let mut history = vec![SoaTransform::IDENTITY; 2 * blocks];
    let mut state = vec![InertialBlock::default(); blocks];
    let mask_values = vec![f32x4::splat(0.5); blocks];
    let mask = JointWeights::new(&mask_values).unwrap();
    let samples = [
        Sample1D {
            position: 1.4,
            clip: 0,
            duration: clips[0].duration(),
            markers: &[],
        },
        Sample1D {
            position: 3.0,
            clip: 1,
            duration: clips[1].duration(),
            markers: &[],
        },
    ];
    let space: BlendSpace1D<'_, 4> = BlendSpace1D::new(&samples).unwrap();
    let mut mixer: Mixer<4> = Mixer::new(blocks, MixMode::Quaternion);
    mixer
        .set_idle(
            Some(MotionUnit::new(0, clips[0].frame_count() - 1)),
            &clips,
            &[],
        )
        .unwrap();
    mixer
        .set_fatigue_unit(
            Some(MotionUnit::new(2, clips[2].frame_count() - 1)),
            &clips,
            &[],
        )
        .unwrap();

    let (count, result) = count_allocations(|| -> Result<f32, Error> {
        let mut smoother = BSplineSmoother::new();
        let mut sync = PhaseSync::default();
        let mut checksum = 0.0f32;
        for frame in 0..300usize {
            if frame % 20 == 0 {
                let unit = MotionUnit::new(1, 15)
                    .with_ramp(Ramp::Smooth { frames: 4 })
                    .with_joint_weights(0);
                mixer.add(unit, &clips, &[mask])?;
            }
            mixer.set_fatigue(frame as f32 / 300.0)?;
            mixer.evaluate(&clips, &[mask], skel.rest_pose(), &mut [], &mut pose)?;
            mixer.advance();
            smoother.apply(&mut history, &mut pose)?;
            let w = space.weights_for_speed(2.0)?;
            sync.advance(&space, &w, 1.0 / 30.0)?;
            clips[1].sample(sync.clip_time(&space, 1), TimeMode::Loop, &mut other)?;
            additive::apply_additive(&mut pose, &other, 0.0, Some(mask))?;
            if frame == 100 {
                let job = SwitchJob {
                    old: &pose,
                    old_prev: &pose,
                    new: &other,
                    new_prev: &other,
                    dt: 1.0 / 30.0,
                    duration: 0.3,
                };
                transition::start(&mut state, &job)?;
            }
            transition::apply(&state, 0.1, Decay::Quintic, &mut other)?;
            checksum += pose[0].translation.y.as_array()[0] + other[1].rotation.w.as_array()[0];
        }
        Ok(checksum)
    });
    let checksum = result.expect("mixer runs without errors");
    assert!(checksum.is_finite());
    assert_eq!(
        count, 0,
        "the mix features allocated {count} times in 300 frames"
    );
}

/// The crowd's per-character path with foot placement: `SinewBackend`'s
/// sample, blend and FK, then its IK pose and `CrowdFeet::solve` on a slope,
/// as `Crowd::step` calls them for each character of a batch, for 300
/// frames of one batch. (`Crowd::step` makes these calls on its pool's
/// threads, which this per-thread counter does not watch; the calls are
/// the same.)
#[test]
fn crowd_stages_with_feet_allocate_nothing() {
    use sinew_core::ik::foot::{FootLeg, FootPlacement, FootState};
    use sinew_core::Vec3;
    use sinew_std::crowd::{Backend, CrowdFeet, Drive, SinewBackend, BATCH};

    let h = Humanoid::default_rate();
    let skel = h.skeleton.view();
    let backend = SinewBackend::new(&h);
    let mut scratch = backend.scratch();
    let j = |n: &str| skel.find_joint(n).unwrap();
    let leg = |side: &str| FootLeg {
        hip: j(&format!("thigh_{side}")),
        knee: j(&format!("calf_{side}")),
        ankle: j(&format!("foot_{side}")),
        knee_axis: Vec3::new(-1.0, 0.0, 0.0),
    };
    let slope = |_: f32, z: f32| Some((0.36 * z, Vec3::new(0.0, 1.0, -0.36)));
    let positions: Vec<[f32; 2]> = (0..BATCH).map(|i| [i as f32, -(i as f32)]).collect();
    let feet = CrowdFeet {
        placement: FootPlacement {
            pelvis: j("pelvis"),
            legs: [leg("l"), leg("r")],
            foot_height: 0.02,
            max_tilt: 0.5,
            max_pelvis_offset: 0.3,
            half_life: 0.1,
            soften: 0.97,
        },
        ground: &slope,
        positions: &positions,
    };
    let mut states = [FootState::<2>::new(); BATCH];
    let durations = backend.durations();

    let (count, result) = count_allocations(|| -> Result<f32, Error> {
        let mut checksum = 0.0f32;
        for frame in 0..300u32 {
            for (k, state) in states.iter_mut().enumerate() {
                let phase = (frame as f32 / 66.0 + k as f32 / BATCH as f32).fract();
                let s = (frame as f32 * 0.01 + k as f32).sin() * 0.5 + 0.5;
                let drive = Drive {
                    times: durations.map(|d| phase * d),
                    weights: [1.0 - s, s, 0.0],
                };
                backend.sample(&mut scratch, k, &drive)?;
                backend.blend(&mut scratch, k, &drive)?;
                backend.fk(&mut scratch, k)?;
                let Some(mut pose) = backend.ik_pose(&mut scratch, k)? else {
                    return Err(Error::InvalidParameter { what: "no IK pose" });
                };
                let r = feet.solve(&mut pose, k, 1.0 / 60.0, state)?;
                checksum += r.pelvis_offset;
            }
            checksum += backend.models(&scratch, BATCH - 1)[0][13];
        }
        Ok(checksum)
    });
    let checksum = result.expect("the crowd's stages run without errors");
    assert!(
        checksum.is_finite() && checksum != 0.0,
        "work was done: {checksum}"
    );
    assert_eq!(
        count, 0,
        "the crowd's stages with feet allocated {count} times in 300 frames"
    );
}
