//! Every per-frame path allocates nothing, on any thread: after set-up,
//! hundreds of frames of each path run while a global allocator counts the
//! allocations of every thread of the process, and the count must be zero.
//!
//! Covered: sampling (raw, compressed with and without the rest pose, every
//! rotation format), blending, FK (whole skeleton and a joint range), the
//! mixer, smoothing, additive layers, cross-fades, inertialization, root
//! motion, the 1D and 2D blend spaces with phase sync, the per-character
//! player (compressed clips, events, root motion, every kind of
//! transition), palettes and skinning
//! (LBS, DQS, mixed, pair tables, eight influences, strided buffers), IK
//! (two-bone single, in lanes and many at once; aim and look-at; CCD,
//! FABRIK and the Jacobian methods, with limits; foot placement), secondary
//! motion (springs, PD controllers, cloth, spring-bone chains one by one
//! and in lanes, particles with pair forces), shapes (blend shapes dense
//! and sparse, corrective and combination drivers, RBF drivers, delta
//! mush), motion matching (the controller on compressed clips, both
//! searches), track sets (raw and
//! quantized, all at once and with cursors), the animation graph, the C ABI
//! (every per-frame export, called from Rust, blend shapes, shape
//! drivers and motion-matching searches included), and the crowd's `step` on
//! its worker threads (raw and compressed clips, with and without feet).
//!
//! The counter is global (atomics, not thread-locals) so that work handed
//! to other threads, such as the crowd's pool, is counted. That only works
//! when nothing else runs in the process while a check measures, so this
//! binary has no libtest harness (`harness = false` in `tests/Cargo.toml`):
//! `main` runs the checks one after the other on the main thread, prints
//! `name ... ok` for each, and panics at the end when one failed. It accepts
//! libtest's command line (`--quiet`, `--list`, `--exact`, `--skip`, name
//! filters; other options are ignored), so `cargo test` drives it like the
//! other test binaries.
//!
//! Two checks come first and show that the counter sees allocations: on
//! the measuring thread, and on another thread that allocates during a
//! measurement (as the crowd's workers would).
//!
//! A check's set-up (assets, buffers, worker threads) may allocate; a few
//! warm-up frames run before counting starts, then the measured frames.
//! The crowd's steps are counted from its first one.

use std::alloc::{GlobalAlloc, Layout, System};
use std::fmt::Debug;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};

use sinew_core::blend::{self, BlendJob, BlendLayer, JointWeights};
use sinew_core::clip::TimeMode;
use sinew_core::fk::{self, FkJob};
use sinew_core::{f32x4, Error, Mat4, SoaTransform};
use sinew_std::Humanoid;

// The checks by subject, in `alloc/` (a crate root's modules would
// otherwise resolve next to it, among the other test files).
#[path = "alloc/capi.rs"]
mod capi;
#[path = "alloc/crowd.rs"]
mod crowd;
#[path = "alloc/ik.rs"]
mod ik;
#[path = "alloc/lod.rs"]
mod lod;
#[path = "alloc/matching.rs"]
mod matching;
#[path = "alloc/motion.rs"]
mod motion;
#[path = "alloc/player.rs"]
mod player;
#[path = "alloc/retarget.rs"]
mod retarget;
#[path = "alloc/secondary.rs"]
mod secondary;
#[path = "alloc/shape.rs"]
mod shape;
#[path = "alloc/skin.rs"]
mod skin;
#[path = "alloc/steer.rs"]
mod steer;
#[path = "alloc/track.rs"]
mod track;
// Motion-matching databases, shared with the C ABI tests.
#[path = "../support/mm.rs"]
mod mm;

/// Counts allocations (including zeroed allocations and reallocations) made
/// by any thread while counting is on.
struct CountingAllocator;

/// On while a measurement runs.
static COUNTING: AtomicBool = AtomicBool::new(false);
/// Allocations counted since the measurement started, on every thread.
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
/// Bytes those allocations asked for.
static BYTES: AtomicUsize = AtomicUsize::new(0);

fn note_allocation(size: usize) {
    // SeqCst: a thread that allocates after it synchronised with the
    // measuring thread (a barrier, a join) sees counting on, and the
    // measuring thread reads the totals after synchronising back.
    if COUNTING.load(Ordering::SeqCst) {
        ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
        BYTES.fetch_add(size, Ordering::SeqCst);
    }
}

// SAFETY: every method forwards to `System` with the caller's arguments
// unchanged, so `System`'s guarantees are this allocator's guarantees;
// counting touches only atomics, which never allocate.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note_allocation(layout.size());
        // SAFETY: same contract as `GlobalAlloc::alloc`, upheld by our caller.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note_allocation(layout.size());
        // SAFETY: same contract as `GlobalAlloc::alloc_zeroed`, upheld by our caller.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note_allocation(new_size);
        // SAFETY: `ptr` was allocated by `System` (through us) with `layout`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` (through us) with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// What a measurement counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Counted {
    /// Allocations, zeroed allocations and reallocations, on every thread.
    allocations: usize,
    /// Bytes they asked for.
    bytes: usize,
}

/// Turns counting off again, also when the measured code panics.
struct CountingOn;

impl Drop for CountingOn {
    fn drop(&mut self) {
        COUNTING.store(false, Ordering::SeqCst);
    }
}

/// Runs `f` with counting on and returns what every thread allocated
/// meanwhile.
fn count_allocations<R>(f: impl FnOnce() -> R) -> (Counted, R) {
    ALLOCATIONS.store(0, Ordering::SeqCst);
    BYTES.store(0, Ordering::SeqCst);
    let on = CountingOn;
    COUNTING.store(true, Ordering::SeqCst);
    let r = f();
    drop(on);
    let counted = Counted {
        allocations: ALLOCATIONS.load(Ordering::SeqCst),
        bytes: BYTES.load(Ordering::SeqCst),
    };
    (counted, r)
}

/// Frames run before counting starts: the rule is about every frame after
/// the first few, so a path may set up on its first call what later calls
/// reuse (none here does).
const WARM_UP: usize = 3;

/// Runs `frame(i)` for [`WARM_UP`] frames, then for `frames` more with
/// counting on, and returns the sum of what the measured frames returned.
///
/// # Panics
/// When a frame fails, when the measured frames allocated at all, or when
/// their sum is zero or not finite (nothing was computed).
fn frames_allocate_nothing<E: Debug>(
    what: &str,
    frames: usize,
    mut frame: impl FnMut(usize) -> Result<f32, E>,
) -> f32 {
    for i in 0..WARM_UP {
        if let Err(e) = frame(i) {
            panic!("{what}: warm-up frame {i} failed: {e:?}");
        }
    }
    let (counted, sum) = count_allocations(|| -> Result<f32, (usize, E)> {
        let mut sum = 0.0f32;
        for i in WARM_UP..WARM_UP + frames {
            sum += frame(i).map_err(|e| (i, e))?;
        }
        Ok(sum)
    });
    let sum = match sum {
        Ok(sum) => sum,
        Err((i, e)) => panic!("{what}: frame {i} failed: {e:?}"),
    };
    assert_eq!(
        counted.allocations, 0,
        "{what} allocated {} times ({} bytes) in {frames} frames",
        counted.allocations, counted.bytes
    );
    assert!(
        sum.is_finite() && sum != 0.0,
        "{what}: work was done: {sum}"
    );
    sum
}

/// A per-joint weight of 1 on `spine_01`'s subtree (the upper body), 0
/// elsewhere, in SoA blocks.
fn upper_body_mask(skel: &sinew_core::Skeleton<'_>) -> Vec<f32x4> {
    let spine = skel
        .find_joint("spine_01")
        .expect("the humanoid has a spine");
    (0..skel.soa_count())
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
        .collect()
}

// ---------------------------------------------------------------------------
// The counter itself
// ---------------------------------------------------------------------------

/// Without this the zeros below would prove nothing.
fn the_counter_sees_allocations() {
    let (counted, v) = count_allocations(|| std::hint::black_box(vec![1u8; 64]));
    assert!(counted.allocations >= 1, "counted {counted:?}");
    assert!(counted.bytes >= 64, "counted {counted:?}");
    drop(v);
    let (counted, mut v) = count_allocations(|| {
        let mut v = Vec::<u32>::with_capacity(1);
        for i in 0..100 {
            v.push(std::hint::black_box(i));
        }
        v
    });
    assert!(
        counted.allocations >= 2,
        "reallocations counted: {counted:?}"
    );
    v.clear();
    let (counted, ()) = count_allocations(|| {});
    assert_eq!(counted.allocations, 0, "nothing allocated: {counted:?}");
}

/// An allocation made by another thread during a measurement is counted.
/// The thread starts before the measurement and allocates when signalled
/// through a barrier (which does not allocate: the same hand-over with a
/// thread that does not allocate counts zero), as the crowd's workers run
/// their share of a frame.
fn the_counter_sees_other_threads() {
    for allocate in [false, true] {
        let go = Arc::new(Barrier::new(2));
        let done = Arc::new(Barrier::new(2));
        let (go2, done2) = (Arc::clone(&go), Arc::clone(&done));
        let helper = std::thread::spawn(move || {
            go2.wait();
            let v = allocate.then(|| std::hint::black_box(vec![7u8; 100]));
            done2.wait();
            v
        });
        let (counted, ()) = count_allocations(|| {
            go.wait();
            done.wait();
        });
        let v = helper.join().expect("the helper thread runs");
        assert_eq!(v.is_some(), allocate);
        if allocate {
            assert!(
                counted.allocations >= 1 && counted.bytes >= 100,
                "the other thread's allocation is counted: {counted:?}"
            );
        } else {
            assert_eq!(
                counted.allocations, 0,
                "the hand-over alone allocates nothing: {counted:?}"
            );
        }
    }
}

// ---------------------------------------------------------------------------
// Sampling, blending, FK, the mixer
// ---------------------------------------------------------------------------

/// 1000 frames of sampling (3 clips), blending (3 layers plus an additive
/// one) and FK on the procedural humanoid.
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
    let mask_values = upper_body_mask(&skel);
    let mask = JointWeights::new(&mask_values).unwrap();
    let root = Mat4::from_translation(sinew_core::Vec3::new(1.0, 0.0, -2.0));

    frames_allocate_nothing("the per-frame pipeline", 1000, |frame| {
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
        Ok::<f32, Error>(models[n - 1].translation().y)
    });
    assert!(models.iter().all(Mat4::is_finite));
}

/// The mixer (units with ramps and per-joint weights, idle and fatigue
/// units), B-spline smoothing, the 1D blend space with phase sync, additive
/// layers and inertialization, 300 frames.
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
    let mut smoother = BSplineSmoother::new();
    let mut sync = PhaseSync::default();

    frames_allocate_nothing("the mix features", 300, |frame| {
        if frame % 20 == 0 {
            let unit = MotionUnit::new(1, 15)
                .with_ramp(Ramp::Smooth { frames: 4 })
                .with_joint_weights(0);
            mixer.add(unit, &clips, &[mask])?;
        }
        mixer.set_fatigue(frame as f32 / 310.0)?;
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
        Ok::<f32, Error>(pose[0].translation.y.as_array()[0] + other[1].rotation.w.as_array()[0])
    });
}

// ---------------------------------------------------------------------------
// The runner
// ---------------------------------------------------------------------------

/// A check's entry in [`CHECKS`]: its name (with its module, as libtest
/// names tests) and its function.
macro_rules! check {
    ($f:ident) => {
        (stringify!($f), $f as fn())
    };
    ($m:ident :: $f:ident) => {
        (
            concat!(stringify!($m), "::", stringify!($f)),
            $m::$f as fn(),
        )
    };
}

/// Every check, in the order they run.
const CHECKS: &[(&str, fn())] = &[
    check!(the_counter_sees_allocations),
    check!(the_counter_sees_other_threads),
    check!(pipeline_allocates_nothing_for_1000_frames),
    check!(mixer_blend_space_and_transitions_allocate_nothing),
    check!(motion::compressed_sampling_allocates_nothing),
    check!(motion::crossfade_partial_fk_and_inertializer_allocate_nothing),
    check!(motion::root_motion_allocates_nothing),
    check!(motion::blend_space_2d_with_phase_allocates_nothing),
    check!(matching::motion_matching_allocates_nothing),
    check!(player::player_allocates_nothing),
    check!(skin::palettes_allocate_nothing),
    check!(skin::skinning_allocates_nothing),
    check!(ik::two_bone_allocates_nothing),
    check!(ik::aim_and_look_at_allocate_nothing),
    check!(ik::chain_solvers_allocate_nothing),
    check!(ik::foot_placement_allocates_nothing),
    check!(retarget::retarget_allocates_nothing),
    check!(secondary::springs_allocate_nothing),
    check!(secondary::pd_controllers_allocate_nothing),
    check!(secondary::cloth_allocates_nothing),
    check!(secondary::spring_chains_allocate_nothing),
    check!(secondary::particles_allocate_nothing),
    check!(shape::shapes_allocate_nothing),
    check!(capi::pose_calls_allocate_nothing),
    check!(capi::skinning_allocates_nothing),
    check!(capi::ik_allocates_nothing),
    check!(capi::secondary_motion_allocates_nothing),
    check!(capi::player_and_events_allocate_nothing),
    check!(capi::shapes_allocate_nothing),
    check!(capi::motion_matching_allocates_nothing),
    check!(track::track_sets_allocate_nothing),
    check!(track::graph_allocates_nothing),
    check!(crowd::stages_with_feet_allocate_nothing),
    check!(crowd::step_allocates_nothing_on_any_thread),
    check!(crowd::step_with_feet_allocates_nothing_on_any_thread),
    check!(crowd::step_compressed_allocates_nothing_on_any_thread),
    check!(steer::steering_allocates_nothing),
    check!(lod::kernels_allocate_nothing),
    check!(lod::crowd_step_allocates_nothing_on_any_thread),
];

/// What libtest's command line asks of this runner.
#[derive(Default)]
struct Args {
    /// Names to run: a check runs when its name contains one (or equals
    /// one, with `exact`); all run when there is none.
    filters: Vec<String>,
    /// Names to leave out (`--skip`), matched as the filters are.
    skip: Vec<String>,
    exact: bool,
    quiet: bool,
    list: bool,
    /// `--ignored`: only ignored checks, and there are none.
    ignored_only: bool,
}

impl Args {
    /// Reads libtest's options; unknown ones are ignored, and the value of
    /// an option that takes one is not mistaken for a filter.
    fn parse(args: impl IntoIterator<Item = String>) -> Args {
        const TAKE_VALUE: [&str; 6] = [
            "--test-threads",
            "--color",
            "--format",
            "--logfile",
            "--shuffle-seed",
            "-Z",
        ];
        let mut a = Args::default();
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--quiet" | "-q" => a.quiet = true,
                "--list" => a.list = true,
                "--exact" => a.exact = true,
                "--ignored" => a.ignored_only = true,
                "--skip" => a.skip.extend(args.next()),
                s if TAKE_VALUE.contains(&s) => {
                    args.next();
                }
                s if s.starts_with('-') => {}
                _ => a.filters.push(arg),
            }
        }
        a
    }

    fn matches(&self, name: &str, pattern: &str) -> bool {
        if self.exact {
            name == pattern
        } else {
            name.contains(pattern)
        }
    }

    fn selects(&self, name: &str) -> bool {
        !self.ignored_only
            && (self.filters.is_empty() || self.filters.iter().any(|f| self.matches(name, f)))
            && !self.skip.iter().any(|s| self.matches(name, s))
    }
}

fn main() {
    let args = Args::parse(std::env::args().skip(1));
    if args.list {
        for (name, _) in CHECKS {
            println!("{name}: test");
        }
        return;
    }
    let selected: Vec<&(&str, fn())> = CHECKS.iter().filter(|(n, _)| args.selects(n)).collect();
    let plural = if selected.len() == 1 { "" } else { "s" };
    println!("\nrunning {} check{plural}", selected.len());
    let mut failed = Vec::new();
    for &&(name, check) in &selected {
        if !args.quiet {
            print!("{name} ... ");
            // Nothing is measured here; the output only shows progress.
            let _ = std::io::Write::flush(&mut std::io::stdout());
        }
        let passed = panic::catch_unwind(AssertUnwindSafe(check)).is_ok();
        match (passed, args.quiet) {
            (true, false) => println!("ok"),
            (true, true) => print!("."),
            (false, false) => println!("FAILED"),
            (false, true) => print!("F"),
        }
        if !passed {
            failed.push(name);
        }
    }
    if args.quiet {
        println!();
    }
    let result = if failed.is_empty() { "ok" } else { "FAILED" };
    println!(
        "\nalloc result: {result}. {} passed; {} failed; {} filtered out\n",
        selected.len() - failed.len(),
        failed.len(),
        CHECKS.len() - selected.len()
    );
    assert!(failed.is_empty(), "failed checks: {failed:?}");
}
