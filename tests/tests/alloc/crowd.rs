//! The crowd: its per-character stages called directly, and `Crowd::step`
//! with its worker threads, whose allocations the global counter sees.

use sinew_core::compressed::CompressedClip;
use sinew_core::ik::foot::{FootLeg, FootPlacement, FootState};
use sinew_core::{Error, Vec3};
use sinew_std::compress::{compress, CompressOptions, OwnedCompressedClip};
use sinew_std::crowd::{Backend, Crowd, CrowdFeet, Drive, SinewBackend, BATCH};
use sinew_std::Humanoid;

use crate::{count_allocations, frames_allocate_nothing, WARM_UP};

/// Characters in the stepped crowds: eight batches of [`BATCH`].
const CHARACTERS: usize = 64;
/// Threads of the stepped crowds: the caller and one worker.
const THREADS: usize = 2;
/// Frames stepped with counting on (after the warm-up, also counted).
const FRAMES: usize = 300;

/// The humanoid's two legs, springs with a 0.1 s half-life.
fn humanoid_feet(h: &Humanoid) -> FootPlacement<2> {
    let s = h.skeleton.view();
    let j = |n: &str| s.find_joint(n).expect("humanoid joint");
    let leg = |side: &str| FootLeg {
        hip: j(&format!("thigh_{side}")),
        knee: j(&format!("calf_{side}")),
        ankle: j(&format!("foot_{side}")),
        knee_axis: Vec3::new(-1.0, 0.0, 0.0),
    };
    FootPlacement {
        pelvis: j("pelvis"),
        legs: [leg("l"), leg("r")],
        foot_height: 0.02,
        max_tilt: 0.5,
        max_pelvis_offset: 0.3,
        half_life: 0.1,
        soften: 0.97,
    }
}

/// A slope of about 20° rising along +Z.
fn slope(_: f32, z: f32) -> Option<(f32, Vec3)> {
    let grade = 0.36;
    Some((grade * z, Vec3::new(0.0, 1.0, -grade)))
}

/// Characters on a 1.5 m grid, 8 per row.
fn positions(n: usize) -> Vec<[f32; 2]> {
    (0..n)
        .map(|i| [1.5 * (i % 8) as f32, 1.5 * (i / 8) as f32])
        .collect()
}

/// The crowd's per-character path with foot placement, called directly:
/// `SinewBackend`'s sample, blend and FK, then its IK pose and
/// `CrowdFeet::solve` on a slope, as `Crowd::step` calls them for each
/// character of a batch, for 300 frames of one batch.
pub fn stages_with_feet_allocate_nothing() {
    let h = Humanoid::default_rate();
    let backend = SinewBackend::new(&h);
    let mut scratch = backend.scratch();
    let positions = positions(BATCH);
    let feet = CrowdFeet {
        placement: humanoid_feet(&h),
        ground: &slope,
        positions: &positions,
    };
    let mut states = [FootState::<2>::new(); BATCH];
    let durations = backend.durations();

    frames_allocate_nothing("the crowd's stages with feet", 300, |frame| {
        let mut sum = 0.0f32;
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
            sum += feet.solve(&mut pose, k, 1.0 / 60.0, state)?.pelvis_offset;
        }
        Ok(sum + backend.models(&scratch, BATCH - 1)[0][13])
    });
}

/// Steps a new `crowd` for [`WARM_UP`] frames, then `frames` frames with
/// counting on (the last one folding every matrix into the checksum), and
/// checks that no thread allocated and that every character moved.
///
/// The warm-up frames are counted too: `Crowd::new` returns once its
/// worker threads have started (a starting thread allocates), so even the
/// first step allocates nothing.
fn step_allocates_nothing<B: Backend>(what: &str, crowd: &mut Crowd<'_, B>, frames: usize) {
    assert_eq!(crowd.threads(), THREADS, "{what}: the pool started");
    assert_eq!(crowd.frame(), 0, "{what}: a new crowd");
    let dt = 1.0 / 60.0;
    let (counted, result) = count_allocations(|| -> Result<(), Error> {
        (0..WARM_UP).try_for_each(|_| crowd.step(dt, false))
    });
    result.unwrap_or_else(|e| panic!("{what}: a step failed: {e}"));
    assert_eq!(
        counted.allocations, 0,
        "{what} allocated {} times ({} bytes) in its first {WARM_UP} steps",
        counted.allocations, counted.bytes
    );
    let before = crowd.checksum();
    let first: Vec<[f32; 16]> = crowd.models(CHARACTERS - 1).unwrap().to_vec();
    let (counted, result) = count_allocations(|| -> Result<(), Error> {
        for f in 0..frames {
            crowd.step(dt, f + 1 == frames)?;
        }
        Ok(())
    });
    result.unwrap_or_else(|e| panic!("{what}: a step failed: {e}"));
    assert_eq!(
        counted.allocations, 0,
        "{what} allocated {} times ({} bytes) in {frames} steps of {CHARACTERS} characters \
         on {THREADS} threads",
        counted.allocations, counted.bytes
    );
    assert_eq!(crowd.frame(), WARM_UP + frames);
    assert_ne!(crowd.checksum(), before, "{what}: the characters moved");
    let last = crowd.models(CHARACTERS - 1).unwrap();
    assert!(
        last != first.as_slice() && last.iter().flatten().all(|v| v.is_finite()),
        "{what}: the last batch (a worker's or the caller's) was stepped"
    );
}

/// `Crowd::step` for 64 characters on the caller and a worker thread.
pub fn step_allocates_nothing_on_any_thread() {
    let h = Humanoid::default_rate();
    let backend = SinewBackend::new(&h);
    let mut crowd = Crowd::new(&backend, CHARACTERS, Some(THREADS)).expect("the pool starts");
    step_allocates_nothing("the crowd's step", &mut crowd, FRAMES);
}

/// `Crowd::step` with foot placement on a slope after FK.
pub fn step_with_feet_allocates_nothing_on_any_thread() {
    let h = Humanoid::default_rate();
    let backend = SinewBackend::new(&h);
    let positions = positions(CHARACTERS);
    let feet = CrowdFeet {
        placement: humanoid_feet(&h),
        ground: &slope,
        positions: &positions,
    };
    let mut crowd = Crowd::new(&backend, CHARACTERS, Some(THREADS))
        .expect("the pool starts")
        .with_feet(feet)
        .expect("the humanoid's legs");
    step_allocates_nothing("the crowd's step with feet", &mut crowd, FRAMES);
    assert!(
        (0..CHARACTERS).all(|i| crowd.feet_report(i).is_some()),
        "the feet stage ran for every character"
    );
}

/// `Crowd::step` over compressed clips (rest-pose stripped: decoded with
/// the skeleton's rest pose on the worker threads), for 100 frames (a
/// compressed clip samples slower than a raw one in an unoptimised build).
pub fn step_compressed_allocates_nothing_on_any_thread() {
    let h = Humanoid::default_rate();
    let skel = h.skeleton.view();
    let owned: Vec<OwnedCompressedClip> = h
        .clips
        .iter()
        .map(|c| {
            compress(&skel, &c.view(), &CompressOptions::default())
                .expect("the humanoid's clips compress")
                .0
        })
        .collect();
    let clips: Vec<CompressedClip<'_>> = owned.iter().map(OwnedCompressedClip::view).collect();
    let backend = SinewBackend::with_clips(skel, &clips).expect("the clips fit the skeleton");
    let mut crowd = Crowd::new(&backend, CHARACTERS, Some(THREADS)).expect("the pool starts");
    step_allocates_nothing("the crowd's step on compressed clips", &mut crowd, 100);
}
