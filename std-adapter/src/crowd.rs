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

use std::time::{Duration, Instant};

use rayon::prelude::*;
use sinew_core::blend::{self, BlendJob, BlendLayer};
use sinew_core::clip::{ClipSource, RawClip, TimeMode};
use sinew_core::fk::{self, FkJob};
use sinew_core::{Error, Mat4, Skeleton, SoaTransform};

use crate::assets::{Humanoid, OwnedClip, OwnedSkeleton};

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
}

impl StageTimes {
    fn add(self, o: StageTimes) -> StageTimes {
        StageTimes {
            sample: self.sample + o.sample,
            blend: self.blend + o.blend,
            fk: self.fk + o.fk,
        }
    }

    /// Sum of the stages.
    #[must_use]
    pub fn total(&self) -> Duration {
        self.sample + self.blend + self.fk
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

/// A character's persistent state: its locomotion phase and speed pattern.
#[derive(Clone, Copy, Debug)]
struct Character {
    phase: f32,
    speed_base: f32,
    speed_amp: f32,
    speed_freq: f32,
    speed_offset: f32,
    hash: u64,
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
        Drive {
            times: durations.map(|d| self.phase * d),
            weights,
        }
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
}

/// One frame of one batch: sample, blend and FK for each character, each
/// stage timed as a whole, then each character's hash updated.
fn step_batch<B: Backend>(
    backend: &B,
    scratch: &mut B::Scratch,
    chars: &mut [Character],
    t: f32,
    dt: f32,
    final_frame: bool,
) -> Result<StageTimes, Error> {
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
    })
}

/// Many characters driven through one [`Backend`] on a thread pool.
///
/// The crowd owns every character's state (phase, speed pattern, checksum)
/// and buffers (sampled poses, local pose, model matrices), in batches of
/// [`BATCH`]. [`Crowd::step`] advances all of them by one frame in parallel;
/// a character's results depend only on that character, so they are
/// bit-identical for any thread count.
pub struct Crowd<'b, B: Backend> {
    backend: &'b B,
    chars: Vec<Character>,
    batches: Vec<B::Scratch>,
    pool: rayon::ThreadPool,
    threads: usize,
    frame: usize,
    stages: StageTimes,
}

impl<'b, B: Backend> Crowd<'b, B> {
    /// A crowd of `characters` characters on `threads` worker threads (`None`: every core).
    ///
    /// # Errors
    /// [`Error::Corrupt`] when the thread pool cannot start.
    pub fn new(backend: &'b B, characters: usize, threads: Option<usize>) -> Result<Self, Error> {
        let threads = threads.unwrap_or_else(rayon::current_num_threads).max(1);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|_| Error::Corrupt {
                what: "could not start worker threads",
            })?;
        Ok(Crowd {
            backend,
            chars: (0..characters).map(Character::new).collect(),
            batches: (0..characters.div_ceil(BATCH))
                .map(|_| backend.scratch())
                .collect(),
            pool,
            threads,
            frame: 0,
            stages: StageTimes::default(),
        })
    }

    /// Advances every character by `dt` seconds. With `final_frame`, every
    /// model matrix goes into the checksum (otherwise the last joint's position).
    ///
    /// # Errors
    /// Any kernel error (none occur for validated assets).
    pub fn step(&mut self, dt: f32, final_frame: bool) -> Result<(), Error> {
        let t = self.frame as f32 * dt;
        let backend = self.backend;
        let chars = &mut self.chars;
        let batches = &mut self.batches;
        let times = self.pool.install(|| {
            chars
                .par_chunks_mut(BATCH)
                .zip(batches.par_iter_mut())
                .map(|(chunk, scratch)| step_batch(backend, scratch, chunk, t, dt, final_frame))
                .try_reduce(StageTimes::default, |a, b| Ok(a.add(b)))
        })?;
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
        self.threads
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
