//! Many characters across threads, with per-stage timings.
//!
//! Every character blends the humanoid's walk, jog and run with its own phase
//! and a speed that drifts over time (weights from the speed, cycle lengths
//! synchronised by normalised phase). A [`Crowd`] owns every character's
//! state and buffers and steps them one frame at a time, as a game does.
//! Within a frame, characters go in batches of [`BATCH`]: each stage of a
//! batch is timed as a whole, so reading the clock is a negligible share of
//! the work. Each character's checksum depends only on that character, so
//! the combined checksum is the same for any thread count.
//!
//! Foot placement is an optional stage after FK ([`Crowd::with_feet`]):
//! every character keeps its own [`FootState`] while the legs, settings and
//! ground ([`CrowdFeet`]) are shared by all characters and threads.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use sinew_core::blend::{self, BlendJob, BlendLayer};
use sinew_core::clip::{ClipSource, RawClip, TimeMode};
use sinew_core::fk::{self, FkJob};
use sinew_core::ik::foot::{FootPlacement, FootReport, FootState, Ground};
use sinew_core::ik::IkPose;
use sinew_core::{Error, Mat4, Skeleton, SoaTransform, Vec3};

use crate::assets::{Humanoid, OwnedClip, OwnedSkeleton};
use crate::pool::Pool;

pub mod lod;

/// Characters processed together so their buffers stay in cache.
pub const BATCH: usize = 8;

/// What to run.
#[derive(Clone, Copy, Debug)]
pub struct CrowdConfig {
    /// Number of characters.
    pub characters: usize,
    /// Simulated seconds.
    pub seconds: f32,
    /// Simulation rate in frames per second.
    pub fps: f32,
    /// Worker threads; `None` uses every core.
    pub threads: Option<usize>,
}

impl Default for CrowdConfig {
    fn default() -> Self {
        CrowdConfig {
            characters: 1000,
            seconds: 10.0,
            fps: 60.0,
            threads: None,
        }
    }
}

impl CrowdConfig {
    /// Frames simulated: `round(seconds * fps)`, at least 1.
    #[must_use]
    pub fn frames(&self) -> usize {
        ((self.seconds * self.fps).round() as usize).max(1)
    }
}

/// Time spent in each stage, summed over all threads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StageTimes {
    /// Clip sampling (3 clips per character).
    pub sample: Duration,
    /// Blending (3 layers).
    pub blend: Duration,
    /// Local-to-model.
    pub fk: Duration,
    /// Per-character IK after FK (foot placement, [`Crowd::with_feet`]);
    /// zero without it.
    pub ik: Duration,
}

impl StageTimes {
    fn add(self, o: StageTimes) -> StageTimes {
        StageTimes {
            sample: self.sample + o.sample,
            blend: self.blend + o.blend,
            fk: self.fk + o.fk,
            ik: self.ik + o.ik,
        }
    }

    /// Sum of the stages.
    #[must_use]
    pub fn total(&self) -> Duration {
        self.sample + self.blend + self.fk + self.ik
    }
}

/// The outcome of a crowd run.
#[derive(Clone, Debug)]
pub struct CrowdReport {
    /// Characters simulated.
    pub characters: usize,
    /// Frames per character.
    pub frames: usize,
    /// Joints per character.
    pub joints: usize,
    /// Threads used.
    pub threads: usize,
    /// CPU time per stage, summed over threads.
    pub stages: StageTimes,
    /// Wall-clock time of the whole run.
    pub wall: Duration,
    /// Hash of every character's model matrices; identical for any thread count.
    pub checksum: u64,
}

impl CrowdReport {
    /// Character-frames computed.
    #[must_use]
    pub fn character_frames(&self) -> u64 {
        self.characters as u64 * self.frames as u64
    }

    /// Nanoseconds per character-frame spent in `stage`.
    #[must_use]
    pub fn ns_per_character_frame(&self, stage: Duration) -> f64 {
        stage.as_nanos() as f64 / self.character_frames().max(1) as f64
    }

    /// Nanoseconds per joint spent in `stage`.
    #[must_use]
    pub fn ns_per_joint(&self, stage: Duration) -> f64 {
        self.ns_per_character_frame(stage) / self.joints.max(1) as f64
    }

    /// Character-frames per second of wall time.
    #[must_use]
    pub fn character_frames_per_second(&self) -> f64 {
        self.character_frames() as f64 / self.wall.as_secs_f64().max(1e-9)
    }
}

/// Per-frame inputs of one character: the three clips' times and weights.
#[derive(Clone, Copy, Debug)]
pub struct Drive {
    /// Time in each clip (walk, jog, run), seconds.
    pub times: [f32; 3],
    /// Blend weight of each clip; they sum to 1.
    pub weights: [f32; 3],
}

/// A character's persistent state: its locomotion phase and speed pattern,
/// the inputs of its last frame and its foot placement springs.
#[derive(Clone, Copy, Debug)]
struct Character {
    phase: f32,
    speed_base: f32,
    speed_amp: f32,
    speed_freq: f32,
    speed_offset: f32,
    hash: u64,
    drive: Drive,
    feet: FootState<2>,
    report: Option<FootReport<2>>,
}

impl Character {
    fn new(index: usize) -> Character {
        // SplitMix64 of the index: deterministic, different per character.
        let mut z = (index as u64)
            .wrapping_add(1)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let mut next = || {
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            (z >> 40) as f32 / (1u64 << 24) as f32
        };
        Character {
            phase: next(),
            speed_base: 0.3 + 1.4 * next(),
            speed_amp: 0.2 + 0.6 * next(),
            speed_freq: 0.05 + 0.3 * next(),
            speed_offset: std::f32::consts::TAU * next(),
            hash: FNV_OFFSET,
            drive: Drive {
                times: [0.0; 3],
                weights: [1.0, 0.0, 0.0],
            },
            feet: FootState::new(),
            report: None,
        }
    }

    /// Advances to simulated time `t` by `dt` and returns this frame's inputs.
    fn step(&mut self, t: f32, dt: f32, durations: [f32; 3]) -> Drive {
        let speed = (self.speed_base
            + self.speed_amp
                * sin(std::f32::consts::TAU * self.speed_freq * t + self.speed_offset))
        .clamp(0.0, 2.0);
        // Triangle weights over walk (0), jog (1), run (2).
        let weights = [0.0f32, 1.0, 2.0].map(|c| (1.0 - (speed - c).abs()).max(0.0));
        let sum: f32 = weights.iter().sum();
        let weights = weights.map(|w| w / sum);
        // Normalised-time sync: the cycle length is the weighted mean.
        let cycle: f32 = weights.iter().zip(durations).map(|(w, d)| w * d).sum();
        // A one-frame clip has no duration; it then holds its pose.
        self.phase = (self.phase + dt / cycle.max(1e-3)).fract();
        self.drive = Drive {
            times: durations.map(|d| self.phase * d),
            weights,
        };
        self.drive
    }
}

/// The speed pattern's sine: the platform C library's by default (as fast
/// as it gets); under `deterministic` `libm`'s, whose plain IEEE arithmetic
/// is the same on every target (glibc's differs between x86-64 and AArch64
/// builds, and picks an FMA variant at run time).
#[inline]
fn sin(x: f32) -> f32 {
    #[cfg(feature = "deterministic")]
    {
        libm::sinf(x)
    }
    #[cfg(not(feature = "deterministic"))]
    {
        x.sin()
    }
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

fn fnv(hash: u64, v: f32) -> u64 {
    v.to_bits()
        .to_le_bytes()
        .iter()
        .fold(hash, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// One implementation of the per-frame pipeline, with its per-batch buffers.
///
/// sinew's own is [`SinewBackend`]; the `sinew-cli` crate implements it for
/// the glam AoS baseline, so one crowd drives both and their figures compare.
pub trait Backend: Sync {
    /// Buffers for [`BATCH`] characters.
    type Scratch: Send;
    /// Joints per character.
    fn joints(&self) -> usize;
    /// Durations of the walk, jog and run clips.
    fn durations(&self) -> [f32; 3];
    /// Fresh buffers.
    fn scratch(&self) -> Self::Scratch;
    /// Samples the three clips for batch slot `k`.
    ///
    /// # Errors
    /// Whatever the kernel reports.
    fn sample(&self, s: &mut Self::Scratch, k: usize, d: &Drive) -> Result<(), Error>;
    /// Blends the three sampled poses of slot `k`.
    ///
    /// # Errors
    /// Whatever the kernel reports.
    fn blend(&self, s: &mut Self::Scratch, k: usize, d: &Drive) -> Result<(), Error>;
    /// Local-to-model for slot `k`.
    ///
    /// # Errors
    /// Whatever the kernel reports.
    fn fk(&self, s: &mut Self::Scratch, k: usize) -> Result<(), Error>;
    /// Model matrices of slot `k`.
    fn models<'s>(&self, s: &'s Self::Scratch, k: usize) -> &'s [[f32; 16]];
    /// Slot `k`'s local pose and model matrices as sinew's IK sees them,
    /// for the stages after FK ([`Crowd::with_feet`]); `None` (the default)
    /// for a backend without sinew poses, such as a baseline.
    ///
    /// # Errors
    /// As [`IkPose::new`].
    fn ik_pose<'s>(
        &'s self,
        _s: &'s mut Self::Scratch,
        _k: usize,
    ) -> Result<Option<IkPose<'s, 's>>, Error> {
        Ok(None)
    }
}

/// The three clips a character blends: clip `k % clips` for slot `k`, so an
/// asset with fewer than three clips still fills every slot.
fn slots<T: Copy>(clips: &[T]) -> Option<[T; 3]> {
    let n = clips.len();
    (n > 0).then(|| [clips[0], clips[1 % n], clips[2 % n]])
}

/// sinew's SIMD pipeline over a skeleton and up to three of its clips,
/// raw ([`RawClip`], the default) or compressed
/// (`sinew_core::compressed::CompressedClip`): any [`ClipSource`].
pub struct SinewBackend<'a, C = RawClip<'a>> {
    skeleton: Skeleton<'a>,
    clips: [C; 3],
}

impl<'a, C: ClipSource + Copy> SinewBackend<'a, C> {
    /// Views any skeleton and clip views (raw or compressed); characters
    /// blend the first three (repeating clips when there are fewer). Clips
    /// compressed with rest-pose stripping take the skeleton's rest pose.
    ///
    /// # Errors
    /// [`Error::BadLength`] when there is no clip or a clip's pose size does
    /// not match the skeleton.
    pub fn with_clips(skeleton: Skeleton<'a>, clips: &[C]) -> Result<Self, Error> {
        for c in clips {
            crate::assets::check_clip(&skeleton, c)?;
        }
        let clips = slots(clips).ok_or(Error::BadLength {
            buffer: "clips",
            expected: 1,
            actual: 0,
        })?;
        Ok(SinewBackend { skeleton, clips })
    }
}

impl<'a> SinewBackend<'a> {
    /// Views the humanoid's skeleton and its walk, jog and run.
    #[must_use]
    pub fn new(h: &'a Humanoid) -> Self {
        SinewBackend {
            skeleton: h.skeleton.view(),
            clips: [h.clips[0].view(), h.clips[1].view(), h.clips[2].view()],
        }
    }

    /// Views any skeleton and its clips; characters blend the first three
    /// (repeating clips when there are fewer).
    ///
    /// # Errors
    /// [`Error::BadLength`] when there is no clip or a clip's pose size does
    /// not match the skeleton.
    pub fn from_clips(skeleton: &'a OwnedSkeleton, clips: &'a [OwnedClip]) -> Result<Self, Error> {
        let views: Vec<RawClip<'a>> = clips.iter().map(OwnedClip::view).collect();
        SinewBackend::with_clips(skeleton.view(), &views)
    }
}

/// Per-batch buffers of [`SinewBackend`].
pub struct SinewScratch {
    sampled: Vec<[Vec<SoaTransform>; 3]>,
    local: Vec<Vec<SoaTransform>>,
    models: Vec<Vec<Mat4>>,
}

impl<C: ClipSource + Sync> Backend for SinewBackend<'_, C> {
    type Scratch = SinewScratch;

    fn joints(&self) -> usize {
        self.skeleton.joint_count()
    }

    fn durations(&self) -> [f32; 3] {
        [0, 1, 2].map(|i| self.clips[i].duration())
    }

    fn scratch(&self) -> SinewScratch {
        let pose = vec![SoaTransform::IDENTITY; self.skeleton.soa_count()];
        SinewScratch {
            sampled: (0..BATCH)
                .map(|_| [pose.clone(), pose.clone(), pose.clone()])
                .collect(),
            local: vec![pose.clone(); BATCH],
            models: vec![vec![Mat4::IDENTITY; self.skeleton.joint_count()]; BATCH],
        }
    }

    fn sample(&self, s: &mut SinewScratch, k: usize, d: &Drive) -> Result<(), Error> {
        for ((clip, out), &t) in self.clips.iter().zip(s.sampled[k].iter_mut()).zip(&d.times) {
            clip.sample(t, TimeMode::Loop, self.skeleton.rest_pose(), out)?;
        }
        Ok(())
    }

    fn blend(&self, s: &mut SinewScratch, k: usize, d: &Drive) -> Result<(), Error> {
        let [a, b, c] = &s.sampled[k];
        let layers = [
            BlendLayer::new(a, d.weights[0]),
            BlendLayer::new(b, d.weights[1]),
            BlendLayer::new(c, d.weights[2]),
        ];
        let job = BlendJob::new(&layers, &[], self.skeleton.rest_pose());
        blend::blend(&job, &mut s.local[k])
    }

    fn fk(&self, s: &mut SinewScratch, k: usize) -> Result<(), Error> {
        let job = FkJob::new(&self.skeleton, &s.local[k]);
        fk::local_to_model(&job, &mut s.models[k])
    }

    fn models<'s>(&self, s: &'s SinewScratch, k: usize) -> &'s [[f32; 16]] {
        bytemuck::cast_slice(&s.models[k])
    }

    fn ik_pose<'s>(
        &'s self,
        s: &'s mut SinewScratch,
        k: usize,
    ) -> Result<Option<IkPose<'s, 's>>, Error> {
        let slots = s.local.len().min(s.models.len());
        let (Some(local), Some(models)) = (s.local.get_mut(k), s.models.get_mut(k)) else {
            return Err(Error::BadLength {
                buffer: "crowd batch slots",
                expected: k + 1,
                actual: slots,
            });
        };
        IkPose::new(&self.skeleton, local, models, None).map(Some)
    }
}

/// Foot placement for every character of a [`Crowd`]: the legs, the
/// settings and the ground are shared, each character keeps its own
/// [`FootState`].
///
/// Model matrices stay in each character's own space (as without feet):
/// character `i` stands at world `(x, z) = positions[i]`, its origin on the
/// ground there (height `h0 = ground.probe(x, z)`, 0 where there is none),
/// and [`FootPlacement::solve`] sees the ground shifted into that space,
/// `(px, pz) ↦ ground.probe(px + x, pz + z)` with `h0` subtracted from the
/// height, with floor 0 and the frame's `dt`.
#[derive(Clone, Copy)]
pub struct CrowdFeet<'g> {
    /// Pelvis, the two legs and the settings, shared by every character.
    pub placement: FootPlacement<2>,
    /// The ground in world space, shared by every character and thread.
    pub ground: &'g (dyn Ground + Sync),
    /// World `(x, z)` of each character's origin, at least one per character.
    pub positions: &'g [[f32; 2]],
}

impl CrowdFeet<'_> {
    /// Places character `character`'s feet on the ground: the per-character
    /// stage [`Crowd::step`] runs after FK (see the type's docs).
    ///
    /// # Errors
    /// [`Error::BadLength`] when `positions` has no entry for `character`;
    /// as [`FootPlacement::solve`]. On error the pose and `state` are
    /// untouched.
    pub fn solve(
        &self,
        pose: &mut IkPose<'_, '_>,
        character: usize,
        dt: f32,
        state: &mut FootState<2>,
    ) -> Result<FootReport<2>, Error> {
        let &[x, z] = self.positions.get(character).ok_or(Error::BadLength {
            buffer: "crowd positions",
            expected: character + 1,
            actual: self.positions.len(),
        })?;
        let ground = self.ground;
        let h0 = ground.probe(x, z).map_or(0.0, |(h, _)| h);
        let local = |px: f32, pz: f32| -> Option<(f32, Vec3)> {
            ground.probe(px + x, pz + z).map(|(h, n)| (h - h0, n))
        };
        self.placement.solve(pose, &local, 0.0, dt, state)
    }
}

/// The frame [`step_batch`] computes: simulated time, step, and whether
/// every matrix goes into the checksum.
#[derive(Clone, Copy)]
struct Tick {
    t: f32,
    dt: f32,
    final_frame: bool,
}

/// One frame of one batch (`chars`, the first of which is character
/// `first`): sample, blend, FK and, with `feet`, foot placement for each
/// character, each stage timed as a whole, then each character's hash
/// updated.
fn step_batch<B: Backend>(
    backend: &B,
    scratch: &mut B::Scratch,
    chars: &mut [Character],
    first: usize,
    feet: Option<&CrowdFeet<'_>>,
    tick: Tick,
) -> Result<StageTimes, Error> {
    let Tick { t, dt, final_frame } = tick;
    let durations = backend.durations();
    let mut drives = [Drive {
        times: [0.0; 3],
        weights: [1.0, 0.0, 0.0],
    }; BATCH];
    for (d, c) in drives.iter_mut().zip(chars.iter_mut()) {
        *d = c.step(t, dt, durations);
    }
    let n = chars.len();
    let t0 = Instant::now();
    for (k, d) in drives.iter().enumerate().take(n) {
        backend.sample(scratch, k, d)?;
    }
    let t1 = Instant::now();
    for (k, d) in drives.iter().enumerate().take(n) {
        backend.blend(scratch, k, d)?;
    }
    let t2 = Instant::now();
    for k in 0..n {
        backend.fk(scratch, k)?;
    }
    let t3 = Instant::now();
    // Without feet the stage takes no time at all, not a clock reading's.
    let t4 = match feet {
        Some(feet) => {
            for (k, c) in chars.iter_mut().enumerate() {
                let mut pose = backend.ik_pose(scratch, k)?.ok_or(NO_IK_POSE)?;
                c.report = Some(feet.solve(&mut pose, first + k, dt, &mut c.feet)?);
            }
            Instant::now()
        }
        None => t3,
    };
    for (k, c) in chars.iter_mut().enumerate() {
        let models = backend.models(scratch, k);
        // Every frame: the last joint's position; the final frame: every matrix.
        let folded: &[[f32; 16]] = if final_frame {
            models
        } else {
            &models[models.len() - 1..]
        };
        for m in folded {
            let vals: &[f32] = if final_frame { m } else { &m[12..15] };
            c.hash = vals.iter().fold(c.hash, |h, &v| fnv(h, v));
        }
    }
    Ok(StageTimes {
        sample: t1 - t0,
        blend: t2 - t1,
        fk: t3 - t2,
        ik: t4 - t3,
    })
}

/// A pointer into a vector that [`Crowd::step`]'s threads share, each
/// reaching elements no other thread reaches (see there).
struct SharedMut<T>(*mut T);

// SAFETY: threads only reach disjoint elements through it (`Crowd::step`),
// and the elements may move between threads (`T: Send`).
unsafe impl<T: Send> Sync for SharedMut<T> {}

impl<T> SharedMut<T> {
    /// The pointer (a method, so that closures capture the whole `Sync`
    /// wrapper rather than its raw field).
    fn ptr(&self) -> *mut T {
        self.0
    }
}

const NO_IK_POSE: Error = Error::InvalidParameter {
    what: "crowd feet: the backend has no sinew pose for IK",
};

/// Many characters driven through one [`Backend`] on a thread pool.
///
/// The crowd owns every character's state (phase, speed pattern, checksum,
/// foot placement springs) and buffers (sampled poses, local pose, model
/// matrices), in batches of [`BATCH`]. [`Crowd::step`] advances all of them
/// by one frame in parallel; a character's results depend only on that
/// character, so they are bit-identical for any thread count.
pub struct Crowd<'b, B: Backend> {
    backend: &'b B,
    feet: Option<CrowdFeet<'b>>,
    chars: Vec<Character>,
    batches: Vec<B::Scratch>,
    pool: Pool,
    /// Each thread's stage times (or first error) of the last step.
    slots: Vec<Mutex<Result<StageTimes, Error>>>,
    frame: usize,
    stages: StageTimes,
}

impl<'b, B: Backend> Crowd<'b, B> {
    /// A crowd of `characters` characters on `threads` worker threads (`None`: every core).
    ///
    /// # Errors
    /// [`Error::Corrupt`] when the thread pool cannot start.
    pub fn new(backend: &'b B, characters: usize, threads: Option<usize>) -> Result<Self, Error> {
        let threads = threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
            .max(1);
        let pool = Pool::new(threads).map_err(|_| Error::Corrupt {
            what: "could not start worker threads",
        })?;
        Ok(Crowd {
            backend,
            feet: None,
            chars: (0..characters).map(Character::new).collect(),
            batches: (0..characters.div_ceil(BATCH))
                .map(|_| backend.scratch())
                .collect(),
            pool,
            slots: (0..threads)
                .map(|_| Mutex::new(Ok(StageTimes::default())))
                .collect(),
            frame: 0,
            stages: StageTimes::default(),
        })
    }

    /// Adds foot placement after FK (see [`CrowdFeet`]) from the next
    /// [`Crowd::step`] on. Each character's springs start afresh, snapping
    /// to the first frame's targets.
    ///
    /// # Errors
    /// [`Error::BadLength`] when `feet.positions` has fewer entries than
    /// the crowd has characters; [`Error::InvalidParameter`] for a backend
    /// without sinew poses (see [`Backend::ik_pose`]); as
    /// [`FootPlacement::solve`] for settings or legs it rejects (checked on
    /// the skeleton's rest pose over flat ground).
    pub fn with_feet(mut self, feet: CrowdFeet<'b>) -> Result<Self, Error> {
        if feet.positions.len() < self.chars.len() {
            return Err(Error::BadLength {
                buffer: "crowd positions",
                expected: self.chars.len(),
                actual: feet.positions.len(),
            });
        }
        if let Some(scratch) = self.batches.first_mut() {
            let pose = self.backend.ik_pose(scratch, 0)?.ok_or(NO_IK_POSE)?;
            let skeleton = pose.skeleton();
            let mut local = skeleton.rest_pose().to_vec();
            let mut models = vec![Mat4::IDENTITY; skeleton.joint_count()];
            fk::local_to_model(&FkJob::new(skeleton, &local), &mut models)?;
            let mut rest = IkPose::new(skeleton, &mut local, &mut models, None)?;
            let flat = |_: f32, _: f32| Some((0.0, Vec3::Y));
            feet.placement
                .solve(&mut rest, &flat, 0.0, 0.0, &mut FootState::new())?;
        }
        for c in &mut self.chars {
            c.feet = FootState::new();
            c.report = None;
        }
        self.feet = Some(feet);
        Ok(self)
    }

    /// Advances every character by `dt` seconds. With `final_frame`, every
    /// model matrix goes into the checksum (otherwise the last joint's position).
    ///
    /// # Errors
    /// Any kernel error (none occur for validated assets).
    pub fn step(&mut self, dt: f32, final_frame: bool) -> Result<(), Error> {
        let tick = Tick {
            t: self.frame as f32 * dt,
            dt,
            final_frame,
        };
        let backend = self.backend;
        let feet = self.feet.as_ref();
        let n = self.chars.len();
        let batch_count = self.batches.len();
        let chars = SharedMut(self.chars.as_mut_ptr());
        let batches = SharedMut(self.batches.as_mut_ptr());
        let next = AtomicUsize::new(0);
        let slots = &self.slots;
        // Each thread claims batches one at a time (so uneven batches
        // balance) and sums its stage times into its own slot.
        self.pool.run(&|thread: usize| {
            let mut times = Ok(StageTimes::default());
            loop {
                let b = next.fetch_add(1, Ordering::Relaxed);
                if b >= batch_count {
                    break;
                }
                let first = b * BATCH;
                let len = BATCH.min(n - first);
                // SAFETY: `fetch_add` hands batch `b` to exactly one thread,
                // so characters `first .. first + len` (within `chars`, as
                // `batches` has `n.div_ceil(BATCH)` entries) and scratch `b`
                // are reached through this thread alone during the run; both
                // vectors stay borrowed, unresized, until `run` returns.
                let (chunk, scratch) = unsafe {
                    (
                        std::slice::from_raw_parts_mut(chars.ptr().add(first), len),
                        &mut *batches.ptr().add(b),
                    )
                };
                let got = step_batch(backend, scratch, chunk, first, feet, tick);
                times = times.and_then(|t: StageTimes| got.map(|g| t.add(g)));
                if times.is_err() {
                    break;
                }
            }
            *slots[thread].lock().unwrap_or_else(PoisonError::into_inner) = times;
        });
        let mut times = StageTimes::default();
        for slot in &self.slots {
            let got = *slot.lock().unwrap_or_else(PoisonError::into_inner);
            times = times.add(got?);
        }
        self.stages = self.stages.add(times);
        self.frame += 1;
        Ok(())
    }

    /// Model matrices (column-major, 16 floats each) of `character`, or `None` when out of range.
    #[must_use]
    pub fn models(&self, character: usize) -> Option<&[[f32; 16]]> {
        if character >= self.chars.len() {
            return None;
        }
        let batch = self.batches.get(character / BATCH)?;
        Some(self.backend.models(batch, character % BATCH))
    }

    /// The inputs of `character`'s last frame (clip times and weights), or
    /// `None` when out of range.
    #[must_use]
    pub fn drive(&self, character: usize) -> Option<Drive> {
        self.chars.get(character).map(|c| c.drive)
    }

    /// What foot placement did to `character` in the last frame, or `None`
    /// without feet, before the first step, or out of range.
    #[must_use]
    pub fn feet_report(&self, character: usize) -> Option<FootReport<2>> {
        self.chars.get(character).and_then(|c| c.report)
    }

    /// Number of characters.
    #[must_use]
    pub fn len(&self) -> usize {
        self.chars.len()
    }

    /// True when the crowd has no characters.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.chars.is_empty()
    }

    /// Frames stepped so far.
    #[must_use]
    pub fn frame(&self) -> usize {
        self.frame
    }

    /// Worker threads.
    #[must_use]
    pub fn threads(&self) -> usize {
        self.pool.threads()
    }

    /// Time per stage so far, summed over threads.
    #[must_use]
    pub fn stages(&self) -> StageTimes {
        self.stages
    }

    /// Hash of every character's history in character order; the same for any thread count.
    #[must_use]
    pub fn checksum(&self) -> u64 {
        self.chars.iter().fold(FNV_OFFSET, |h, c| {
            (h ^ c.hash).wrapping_mul(0x0100_0000_01b3)
        })
    }
}

/// Runs `cfg.characters` characters through `backend` for `cfg.frames()` frames.
///
/// # Errors
/// Any kernel error (none occur for valid assets), or a thread-pool failure
/// reported as [`Error::Corrupt`].
pub fn run<B: Backend>(backend: &B, cfg: &CrowdConfig) -> Result<CrowdReport, Error> {
    let mut crowd = Crowd::new(backend, cfg.characters, cfg.threads)?;
    let frames = cfg.frames();
    let start = Instant::now();
    for f in 0..frames {
        crowd.step(1.0 / cfg.fps, f + 1 == frames)?;
    }
    Ok(CrowdReport {
        characters: cfg.characters,
        frames,
        joints: backend.joints(),
        threads: crowd.threads(),
        stages: crowd.stages(),
        wall: start.elapsed(),
        checksum: crowd.checksum(),
    })
}
