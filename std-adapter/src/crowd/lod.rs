//! A crowd with joint LOD and update-rate LOD ([`sinew_core::lod`]).
//!
//! Assets first: an [`OwnedLod`] orders a skeleton's joints so that each
//! level's joints are a prefix, and its clips are reordered to match
//! ([`OwnedLod::remap_clip`], [`OwnedLod::remap_compressed`], exact
//! copies of the same values). Then a [`LodCrowd`] steps characters that
//! blend three of those clips by their speed, like [`super::Crowd`], with
//! per character and frame:
//!
//! - a joint LOD level (`LodInputs::levels`): sampling and blending read
//!   only the level's blocks, FK runs over its joints and the dropped
//!   joints follow their parents at rest;
//! - an importance (`LodInputs::importance`), from which
//!   [`rate::plan`] gives an update period of
//!   1, 2, 4 or 8 frames within a budget of evaluations per frame; a
//!   character is evaluated on its frames at the clip times one period
//!   ahead, and the frames between interpolate its last two evaluated
//!   local poses (then FK);
//! - its locomotion (`LodInputs::locomotion`): desired speed in m/s and
//!   heading, the default being the drifting speed pattern of
//!   [`super::Crowd`]'s characters, facing +Z.
//!
//! Without importance every character is evaluated every frame at the
//! current clip times (the plain pipeline); without levels every joint is.
//! A level or period change takes effect at the character's next
//! evaluation. The schedule is computed on the calling thread and each
//! character's results depend only on that character, so the checksum is
//! the same for any thread count.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use sinew_core::blend::{self, BlendJob, BlendLayer};
use sinew_core::clip::{ClipSource, RawClip, TimeMode};
use sinew_core::compressed::writer::{BlockTrack, LaneSegment};
use sinew_core::compressed::CompressedClip;
use sinew_core::lod::rate::{self, PlanReport, RateTiers, PERIODS};
use sinew_core::lod::{self, DropRule, JointLod};
use sinew_core::{Error, Mat4, Quat, Skeleton, SoaTransform, Vec3};

use super::{fnv, Character, SharedMut, BATCH, FNV_OFFSET};
use crate::assets::{AlignedBytes, OwnedClip};
use crate::compress::OwnedCompressedClip;
use crate::pool::Pool;

/// A joint-LOD layout that owns its slices (see [`JointLod`]).
#[derive(Clone, Debug)]
pub struct OwnedLod {
    order: Vec<u16>,
    parents: Vec<u16>,
    rest: Vec<SoaTransform>,
    levels: Vec<u16>,
}

impl OwnedLod {
    /// The layout of `skeleton` from each joint's coarsest level
    /// ([`lod::build`]).
    ///
    /// # Errors
    /// As [`lod::build`].
    pub fn build(skeleton: &Skeleton<'_>, coarsest: &[u8]) -> Result<Self, Error> {
        let n = skeleton.joint_count();
        let mut order = vec![0u16; n];
        let mut parents = vec![0u16; n];
        let mut rest = vec![SoaTransform::IDENTITY; skeleton.soa_count()];
        let mut levels = vec![0u16; lod::MAX_LEVELS];
        let count = lod::build(
            skeleton,
            coarsest,
            &mut order,
            &mut parents,
            &mut rest,
            &mut levels,
        )?;
        levels.truncate(count);
        let owned = OwnedLod {
            order,
            parents,
            rest,
            levels,
        };
        owned.try_view()?;
        Ok(owned)
    }

    /// The layout from name rules over `level_count` levels
    /// ([`lod::coarsest_by_names`]); [`lod::HUMANOID_RULES`] with 3 levels
    /// suits the procedural humanoid and the CMU skeletons.
    ///
    /// # Errors
    /// As [`lod::coarsest_by_names`] and [`lod::build`].
    pub fn from_rules(
        skeleton: &Skeleton<'_>,
        rules: &[DropRule<'_>],
        level_count: usize,
    ) -> Result<Self, Error> {
        let mut coarsest = vec![0u8; skeleton.joint_count()];
        lod::coarsest_by_names(skeleton, rules, level_count, &mut coarsest)?;
        OwnedLod::build(skeleton, &coarsest)
    }

    fn try_view(&self) -> Result<JointLod<'_>, Error> {
        JointLod::new(&self.order, &self.parents, &self.rest, &self.levels)
    }

    /// The validated view.
    #[must_use]
    pub fn view(&self) -> JointLod<'_> {
        match self.try_view() {
            Ok(v) => v,
            Err(e) => unreachable!("an owned LOD layout was validated when built: {e}"),
        }
    }

    /// A raw clip of the skeleton, with its joints in this layout's order
    /// (every frame through [`lod::remap_pose`]; the same values).
    ///
    /// # Errors
    /// [`Error::BadLength`] when the clip's pose size is not the layout's.
    pub fn remap_clip(&self, clip: &RawClip<'_>) -> Result<OwnedClip, Error> {
        let lod = self.view();
        let n = lod.soa_count();
        let mut keys = vec![SoaTransform::IDENTITY; n * clip.frame_count()];
        for (f, out) in keys.chunks_exact_mut(n).enumerate() {
            let src = clip.frame(f).ok_or(Error::Corrupt { what: "clip frame" })?;
            lod::remap_pose(&lod, src, out)?;
        }
        OwnedClip::new(clip.name(), clip.sample_rate(), n, keys)
    }

    /// A compressed clip of the skeleton, with its joints in this layout's
    /// order: the same codes and constants moved to the joints' new lanes
    /// (`CompressedClip::remap_joints`), no second compression.
    ///
    /// # Errors
    /// [`Error::BadLength`] when the clip's joint count is not the
    /// layout's; as `CompressedClip::remap_joints`.
    pub fn remap_compressed(
        &self,
        clip: &CompressedClip<'_>,
    ) -> Result<OwnedCompressedClip, Error> {
        let lod = self.view();
        if clip.joint_count() != lod.joint_count() {
            return Err(Error::BadLength {
                buffer: "compressed clip joints",
                expected: lod.joint_count(),
                actual: clip.joint_count(),
            });
        }
        let (nt, nl) = clip.remap_scratch_len();
        let mut tracks = vec![BlockTrack::Default; nt];
        let mut lanes = vec![LaneSegment::default(); nl];
        let mut bytes = AlignedBytes::zeroed(clip.remap_size());
        let len = clip.remap_joints(
            &self.order,
            &self.rest,
            &mut tracks,
            &mut lanes,
            bytes.as_mut_slice(),
        )?;
        OwnedCompressedClip::from_bytes(&bytes.as_slice()[..len])
    }
}

/// A character's desired locomotion for one frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Locomotion {
    /// Speed in m/s; it picks the blend of the three clips by their
    /// [`LodSettings::gait_speeds`].
    pub speed: f32,
    /// Heading in radians about +Y (0: facing +Z); it turns the
    /// character's model matrices (the FK root).
    pub heading: f32,
}

/// Nominal speeds of the walk, jog and run clips in m/s, for the
/// procedural humanoid's gaits.
pub const GAIT_SPEEDS: [f32; 3] = [1.4, 3.0, 5.0];

/// Settings of update-rate LOD.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateSettings {
    /// Importance thresholds of the wished periods.
    pub tiers: RateTiers,
    /// Most characters evaluated in one frame (at least
    /// `ceil(characters / 8)`).
    pub budget: usize,
    /// The periods are planned again every this many frames (at least 1).
    pub replan_every: u32,
}

/// Settings of a [`LodCrowd`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LodSettings {
    /// Update-rate LOD; `None` evaluates every character every frame.
    pub rate: Option<RateSettings>,
    /// The clips' nominal speeds in m/s (increasing), for
    /// [`Locomotion::speed`].
    pub gait_speeds: [f32; 3],
    /// Compute the model matrices of the joints a character's level drops
    /// (following their parents at rest); when `false`, only the kept
    /// joints' matrices are written each frame and the others keep
    /// whatever they held (for renderers whose far meshes bind only kept
    /// joints).
    pub follow_dropped: bool,
}

impl Default for LodSettings {
    fn default() -> Self {
        LodSettings {
            rate: None,
            gait_speeds: GAIT_SPEEDS,
            follow_dropped: true,
        }
    }
}

/// One frame's per-character inputs, each `None` for its default (see the
/// module docs) or one entry per character.
#[derive(Clone, Copy, Debug, Default)]
pub struct LodInputs<'i> {
    /// Joint LOD level of each character (0: every joint).
    pub levels: Option<&'i [u8]>,
    /// Importance of each character (higher: evaluated more often); used
    /// at the frames the periods are planned.
    pub importance: Option<&'i [f32]>,
    /// Desired locomotion of each character.
    pub locomotion: Option<&'i [Locomotion]>,
}

/// Time spent in each stage, summed over threads (schedule: on the
/// calling thread).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LodStageTimes {
    /// Clip sampling (3 clips per evaluation).
    pub sample: Duration,
    /// Blending (3 layers per evaluation).
    pub blend: Duration,
    /// Local-to-model, every character every frame.
    pub fk: Duration,
    /// Interpolation between evaluated poses.
    pub interpolate: Duration,
    /// Planning periods, advancing every character's locomotion, counting.
    pub schedule: Duration,
}

impl LodStageTimes {
    fn add(self, o: LodStageTimes) -> LodStageTimes {
        LodStageTimes {
            sample: self.sample + o.sample,
            blend: self.blend + o.blend,
            fk: self.fk + o.fk,
            interpolate: self.interpolate + o.interpolate,
            schedule: self.schedule + o.schedule,
        }
    }

    /// Sum of the stages.
    #[must_use]
    pub fn total(&self) -> Duration {
        self.sample + self.blend + self.fk + self.interpolate + self.schedule
    }
}

/// Counts over the frames stepped so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LodCounts {
    /// Character-frames at each joint level.
    pub levels: [u64; lod::MAX_LEVELS],
    /// Character-frames at each period of [`PERIODS`].
    pub periods: [u64; 4],
    /// Evaluations (sample + blend) in all.
    pub evaluations: u64,
    /// The most evaluations in one frame.
    pub peak_evaluations: usize,
    /// The longest gap between two evaluations of a character, in frames.
    pub longest_gap: u64,
    /// The last plan.
    pub plan: PlanReport,
}

/// Persistent state of one character.
#[derive(Clone, Copy, Debug)]
struct LodChar {
    base: Character,
    /// Joint level and period of the last evaluation.
    level: u8,
    period: u8,
    /// The frames the previous and the next pose are for (equal: only
    /// the next is shown), and the frame of the last evaluation.
    prev_frame: u64,
    next_frame: u64,
    /// interpolate over it).
    last: u64,
    /// Simulated time of this frame, and whether the speed follows the
    /// drifting pattern (so its future is known).
    t: f32,
    pattern: bool,
    /// The clips' loop point lies between the previous and the next pose.
    seam: bool,
    heading: f32,
    /// Evaluated this frame, at this level and period.
    due: bool,
    due_level: u8,
    due_period: u8,
    /// Clip weights of this frame, and the cycle length they give.
    weights: [f32; 3],
    cycle: f32,
    gap: u64,
}

/// A character's poses: the last two evaluated (LOD order) and its model
/// matrices.
struct CharPoses {
    prev: Vec<SoaTransform>,
    next: Vec<SoaTransform>,
    models: Vec<Mat4>,
}

/// Per-thread buffers.
struct Scratch {
    sampled: [Vec<SoaTransform>; 3],
    local: Vec<SoaTransform>,
}

/// The crowd of the module docs over a joint-LOD layout and three clips in
/// its order (raw or compressed: any [`ClipSource`]).
pub struct LodCrowd<'a, C> {
    lod: JointLod<'a>,
    clips: [C; 3],
    durations: [f32; 3],
    settings: LodSettings,
    chars: Vec<LodChar>,
    poses: Vec<CharPoses>,
    periods: Vec<u8>,
    order: Vec<u32>,
    pool: Pool,
    scratch: Vec<Mutex<Scratch>>,
    slots: Vec<Mutex<Result<LodStageTimes, Error>>>,
    frame: u64,
    /// Every clip's last frame equals its first (within 0.01: compressed
    /// clips decode each within their error bound).
    seamless: bool,
    rate_on: bool,
    stages: LodStageTimes,
    counts: LodCounts,
}

fn weights_of(coordinate: f32) -> [f32; 3] {
    let w = [0.0f32, 1.0, 2.0].map(|c| (1.0 - (coordinate - c).abs()).max(0.0));
    let sum: f32 = w.iter().sum();
    w.map(|x| x / sum)
}

/// Where `speed` falls between the gait speeds, as a blend coordinate in
/// `[0, 2]`.
fn coordinate(speed: f32, s: [f32; 3]) -> f32 {
    // NaN speeds stand still.
    if speed.is_nan() || speed <= s[0] {
        0.0
    } else if speed < s[1] {
        (speed - s[0]) / (s[1] - s[0])
    } else if speed < s[2] {
        1.0 + (speed - s[1]) / (s[2] - s[1])
    } else {
        2.0
    }
}

impl LodChar {
    /// The drifting pattern's blend coordinate at time `t`.
    fn pattern_at(&self, t: f32) -> f32 {
        let c = &self.base;
        (c.speed_base
            + c.speed_amp * super::sin(std::f32::consts::TAU * c.speed_freq * t + c.speed_offset))
        .clamp(0.0, 2.0)
    }

    /// Advances the phase to simulated time `t` by `dt` with this frame's
    /// locomotion (or the drifting pattern).
    fn advance(
        &mut self,
        t: f32,
        dt: f32,
        loc: Option<&Locomotion>,
        speeds: [f32; 3],
        durations: [f32; 3],
    ) {
        let coord = match loc {
            Some(l) => coordinate(l.speed, speeds),
            None => self.pattern_at(t),
        };
        self.t = t;
        self.pattern = loc.is_none();
        self.heading = loc.map_or(0.0, |l| l.heading);
        self.weights = weights_of(coord);
        self.cycle = cycle_of(self.weights, durations);
        self.base.phase = (self.base.phase + dt / self.cycle).fract();
    }

    /// Clip times and weights `frames` frames of `dt` ahead: the drifting
    /// pattern's future speed where it drives the character (the phase
    /// advancing at the mean of this frame's and that frame's cycle), the
    /// current speed otherwise.
    fn drive_ahead(&self, frames: u32, dt: f32, durations: [f32; 3]) -> ([f32; 3], [f32; 3]) {
        if frames == 0 {
            return (durations.map(|d| self.base.phase * d), self.weights);
        }
        let ahead = frames as f32 * dt;
        let weights = if self.pattern {
            weights_of(self.pattern_at(self.t + ahead))
        } else {
            self.weights
        };
        let rate = 0.5 * (1.0 / self.cycle + 1.0 / cycle_of(weights, durations));
        let phase = (self.base.phase + ahead * rate).fract();
        (durations.map(|d| phase * d), weights)
    }

    /// Whether the phase passes the clips' loop point within `frames`
    /// frames of `dt` (as [`LodChar::drive_ahead`] advances it).
    fn wraps_within(&self, frames: u32, dt: f32, durations: [f32; 3]) -> bool {
        let (times, _) = self.drive_ahead(frames, dt, durations);
        frames > 0 && times[0] < self.base.phase * durations[0]
    }
}

fn cycle_of(weights: [f32; 3], durations: [f32; 3]) -> f32 {
    weights
        .iter()
        .zip(durations)
        .map(|(w, d)| w * d)
        .sum::<f32>()
        .max(1e-3)
}

/// Which pose a character shows at a frame.
#[derive(Clone, Copy)]
enum Shown {
    Prev,
    Next,
    Between(f32),
}

impl LodChar {
    fn shown(&self, frame: u64) -> Shown {
        if frame >= self.next_frame {
            Shown::Next
        } else if frame <= self.prev_frame {
            Shown::Prev
        } else {
            Shown::Between(
                (frame - self.prev_frame) as f32 / (self.next_frame - self.prev_frame) as f32,
            )
        }
    }
}

/// Samples and blends the three clips at `times` with `weights` into
/// `out[..blocks]` at `level`.
#[allow(clippy::too_many_arguments)]
fn evaluate<C: ClipSource>(
    lod: &JointLod<'_>,
    clips: &[C; 3],
    level: usize,
    times: [f32; 3],
    weights: [f32; 3],
    s: &mut [Vec<SoaTransform>; 3],
    out: &mut [SoaTransform],
    t: &mut LodStageTimes,
) -> Result<(), Error> {
    let blocks = lod.kept_blocks(level)?;
    let t0 = Instant::now();
    for ((clip, buf), time) in clips.iter().zip(s.iter_mut()).zip(times) {
        lod::sample(lod, level, clip, time, TimeMode::Loop, buf)?;
    }
    let t1 = Instant::now();
    let [a, b, c] = s;
    let layers = [
        BlendLayer::new(&a[..blocks], weights[0]),
        BlendLayer::new(&b[..blocks], weights[1]),
        BlendLayer::new(&c[..blocks], weights[2]),
    ];
    let job = BlendJob::new(&layers, &[], &lod.rest_pose()[..blocks]);
    blend::blend(&job, &mut out[..blocks])?;
    t.sample += t1 - t0;
    t.blend += t1.elapsed();
    Ok(())
}

/// Joints `from .. to` of `pose` set to the rest pose (lane by lane).
fn fill_rest(pose: &mut [SoaTransform], rest: &[SoaTransform], from: usize, to: usize) {
    for k in from..to {
        if let (Some(r), Some(p)) = (rest.get(k / 4), pose.get_mut(k / 4)) {
            p.set(k % 4, &r.get(k % 4));
        }
    }
}

fn root_of(heading: f32) -> Option<Mat4> {
    (heading != 0.0).then(|| {
        Mat4::from_trs(
            Vec3::ZERO,
            Quat::from_rotation_y(heading),
            Vec3::new(1.0, 1.0, 1.0),
        )
    })
}

impl<'a, C: ClipSource + Copy + Sync> LodCrowd<'a, C> {
    /// A crowd of `characters` characters on `threads` threads (`None`:
    /// every core) over `lod` and the first three of `clips` (repeated when
    /// fewer), all in `lod`'s order. Every character is evaluated once at
    /// time 0 here (set-up), so the first frame has poses to interpolate.
    ///
    /// # Errors
    /// [`Error::BadLength`] (no clip, a clip's pose size not the layout's),
    /// [`Error::InvalidParameter`] (gait speeds not increasing, a rate
    /// budget below `ceil(characters / 8)`, `replan_every` 0),
    /// [`Error::Corrupt`] when the threads cannot start.
    pub fn new(
        lod: JointLod<'a>,
        clips: &[C],
        characters: usize,
        threads: Option<usize>,
        settings: LodSettings,
    ) -> Result<Self, Error> {
        let clips = super::slots(clips).ok_or(Error::BadLength {
            buffer: "clips",
            expected: 1,
            actual: 0,
        })?;
        for c in &clips {
            if c.soa_count() != lod.soa_count() {
                return Err(Error::BadLength {
                    buffer: "clip pose",
                    expected: lod.soa_count(),
                    actual: c.soa_count(),
                });
            }
        }
        let s = settings.gait_speeds;
        if !(s[0].is_finite() && s[0] < s[1] && s[1] < s[2] && s[2].is_finite()) {
            return Err(Error::InvalidParameter {
                what: "gait speeds must be finite and increasing",
            });
        }
        if let Some(r) = settings.rate {
            if r.budget < characters.div_ceil(8) || r.replan_every == 0 {
                return Err(Error::InvalidParameter {
                    what: "rate budget below ceil(characters / 8), or replanning every 0 frames",
                });
            }
        }
        let threads = threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
            .max(1);
        let pool = Pool::new(threads).map_err(|_| Error::Corrupt {
            what: "could not start worker threads",
        })?;
        let blocks = lod.soa_count();
        let pose = vec![SoaTransform::IDENTITY; blocks];
        let durations = [0, 1, 2].map(|i| clips[i].duration());
        let mut crowd = LodCrowd {
            lod,
            clips,
            durations,
            settings,
            chars: (0..characters)
                .map(|i| LodChar {
                    base: Character::new(i),
                    level: 0,
                    period: 1,
                    prev_frame: 0,
                    next_frame: 0,
                    last: 0,
                    t: 0.0,
                    pattern: true,
                    seam: false,
                    heading: 0.0,
                    due: false,
                    due_level: 0,
                    due_period: 1,
                    weights: [1.0, 0.0, 0.0],
                    cycle: 1.0,
                    gap: 0,
                })
                .collect(),
            poses: (0..characters)
                .map(|_| CharPoses {
                    prev: pose.clone(),
                    next: pose.clone(),
                    models: vec![Mat4::IDENTITY; lod.joint_count()],
                })
                .collect(),
            periods: vec![1; characters],
            order: vec![0; characters],
            pool,
            scratch: (0..threads)
                .map(|_| {
                    Mutex::new(Scratch {
                        sampled: [pose.clone(), pose.clone(), pose.clone()],
                        local: pose.clone(),
                    })
                })
                .collect(),
            slots: (0..threads)
                .map(|_| Mutex::new(Ok(LodStageTimes::default())))
                .collect(),
            frame: 0,
            seamless: true,
            rate_on: false,
            stages: LodStageTimes::default(),
            counts: LodCounts::default(),
        };
        // Every character's pose at time 0, both as its previous and its
        // next evaluation.
        let mut sampled = [pose.clone(), pose.clone(), pose];
        for c in &crowd.clips {
            let [a, b, _] = &mut sampled;
            let first = c.frame(0, lod.rest_pose(), a)?;
            let last = c.frame(c.frame_count() - 1, lod.rest_pose(), b)?;
            let same = bytemuck::cast_slice::<SoaTransform, f32>(first)
                .iter()
                .zip(bytemuck::cast_slice::<SoaTransform, f32>(last))
                .all(|(x, y)| (x - y).abs() <= 1e-2);
            crowd.seamless &= same;
        }
        let mut ignored = LodStageTimes::default();
        for (c, p) in crowd.chars.iter_mut().zip(&mut crowd.poses) {
            c.advance(0.0, 0.0, None, s, durations);
            let (times, weights) = c.drive_ahead(0, 0.0, durations);
            evaluate(
                &lod,
                &crowd.clips,
                0,
                times,
                weights,
                &mut sampled,
                &mut p.next,
                &mut ignored,
            )?;
            p.prev.copy_from_slice(&p.next);
            lod::local_to_model(&lod, 0, &p.next, None, &mut p.models)?;
        }
        Ok(crowd)
    }

    /// Advances every character by `dt` seconds with this frame's
    /// `inputs`. With `final_frame` every model matrix goes into the
    /// checksum (otherwise the last joint's position).
    ///
    /// # Errors
    /// [`Error::BadLength`] for an input without one entry per character,
    /// [`Error::InvalidParameter`] for a level past the layout's, as
    /// [`rate::plan`] for the importance; kernel errors (none occur for
    /// validated assets).
    pub fn step(
        &mut self,
        dt: f32,
        final_frame: bool,
        inputs: &LodInputs<'_>,
    ) -> Result<(), Error> {
        let n = self.chars.len();
        for (name, len) in [
            ("LOD levels", inputs.levels.map(<[u8]>::len)),
            ("importance", inputs.importance.map(<[f32]>::len)),
            ("locomotion", inputs.locomotion.map(<[Locomotion]>::len)),
        ] {
            if let Some(len) = len {
                if len != n {
                    return Err(Error::BadLength {
                        buffer: name,
                        expected: n,
                        actual: len,
                    });
                }
            }
        }
        let level_count = self.lod.level_count();
        if inputs
            .levels
            .is_some_and(|l| l.iter().any(|&v| v as usize >= level_count))
        {
            return Err(Error::InvalidParameter {
                what: "LOD level past the layout's levels",
            });
        }
        let t_sched = Instant::now();
        let frame = self.frame;
        let t = frame as f32 * dt;
        if let (Some(r), Some(imp)) = (self.settings.rate, inputs.importance) {
            if frame.is_multiple_of(u64::from(r.replan_every)) {
                self.counts.plan =
                    rate::plan(imp, &r.tiers, r.budget, &mut self.order, &mut self.periods)?;
            }
        }
        let rate_on = self.settings.rate.is_some() && inputs.importance.is_some();
        let (speeds, durations) = (self.settings.gait_speeds, self.durations);
        let mut evaluations = 0usize;
        for (i, c) in self.chars.iter_mut().enumerate() {
            c.advance(
                t,
                dt,
                inputs.locomotion.and_then(|l| l.get(i)),
                speeds,
                durations,
            );
            let level = inputs.levels.and_then(|l| l.get(i)).copied().unwrap_or(0);
            let period = if rate_on { self.periods[i] } else { 1 };
            c.due = !rate_on || rate::is_due(frame, i, period);
            if c.due {
                evaluations += 1;
                c.gap = c.gap.max(frame.saturating_sub(c.last));
                c.due_level = level;
                c.due_period = period;
            }
            let shown = if c.due {
                (c.due_level, c.due_period)
            } else {
                (c.level, c.period)
            };
            if let Some(x) = self.counts.levels.get_mut(shown.0 as usize) {
                *x += 1;
            }
            if let Some(x) = PERIODS
                .iter()
                .position(|&p| p == shown.1)
                .and_then(|k| self.counts.periods.get_mut(k))
            {
                *x += 1;
            }
        }
        self.counts.evaluations += evaluations as u64;
        self.counts.peak_evaluations = self.counts.peak_evaluations.max(evaluations);
        let schedule = t_sched.elapsed();

        let lod = self.lod;
        let follow = self.settings.follow_dropped;
        let clips = &self.clips;
        let batch_count = n.div_ceil(BATCH);
        let chars = SharedMut(self.chars.as_mut_ptr());
        let poses = SharedMut(self.poses.as_mut_ptr());
        let next = AtomicUsize::new(0);
        let (slots, scratch) = (&self.slots, &self.scratch);
        self.pool.run(&|thread: usize| {
            let mut times = Ok(LodStageTimes::default());
            let Some(scratch) = scratch.get(thread) else {
                return;
            };
            let mut s = scratch.lock().unwrap_or_else(PoisonError::into_inner);
            loop {
                let b = next.fetch_add(1, Ordering::Relaxed);
                if b >= batch_count {
                    break;
                }
                let first = b * BATCH;
                let len = BATCH.min(n - first);
                // SAFETY: `fetch_add` hands batch `b` to exactly one thread,
                // so characters and poses `first .. first + len` (within
                // both vectors, which have `n` entries) are reached through
                // this thread alone during the run; both vectors stay
                // borrowed, unresized, until `run` returns.
                let (cs, ps) = unsafe {
                    (
                        std::slice::from_raw_parts_mut(chars.ptr().add(first), len),
                        std::slice::from_raw_parts_mut(poses.ptr().add(first), len),
                    )
                };
                let mut acc = LodStageTimes::default();
                let got = cs.iter_mut().zip(ps.iter_mut()).try_for_each(|(c, p)| {
                    step_character(
                        &lod,
                        clips,
                        c,
                        p,
                        &mut s,
                        frame,
                        dt,
                        (rate_on, follow),
                        final_frame,
                        &mut acc,
                    )
                });
                times = times.and_then(|t: LodStageTimes| got.map(|()| t.add(acc)));
                if times.is_err() {
                    break;
                }
            }
            if let Some(slot) = slots.get(thread) {
                *slot.lock().unwrap_or_else(PoisonError::into_inner) = times;
            }
        });
        let mut total = LodStageTimes {
            schedule,
            ..LodStageTimes::default()
        };
        for slot in &self.slots {
            let got = *slot.lock().unwrap_or_else(PoisonError::into_inner);
            total = total.add(got?);
        }
        self.stages = self.stages.add(total);
        self.rate_on = rate_on;
        self.frame += 1;
        Ok(())
    }

    /// Model matrices of `character` in LOD order (column-major), or
    /// `None` when out of range.
    #[must_use]
    pub fn models(&self, character: usize) -> Option<&[Mat4]> {
        self.poses.get(character).map(|p| p.models.as_slice())
    }

    /// Number of characters.
    #[must_use]
    pub fn len(&self) -> usize {
        self.chars.len()
    }

    /// The update period (frames) of each character's last evaluation.
    pub fn periods(&self) -> impl Iterator<Item = u8> + '_ {
        self.chars.iter().map(|c| c.period)
    }

    /// The joint level of each character's last evaluation.
    pub fn levels(&self) -> impl Iterator<Item = u8> + '_ {
        self.chars.iter().map(|c| c.level)
    }

    /// True when the crowd has no characters.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.chars.is_empty()
    }

    /// Frames stepped so far.
    #[must_use]
    pub fn frame(&self) -> u64 {
        self.frame
    }

    /// Worker threads.
    #[must_use]
    pub fn threads(&self) -> usize {
        self.pool.threads()
    }

    /// Time per stage so far, summed over threads.
    #[must_use]
    pub fn stages(&self) -> LodStageTimes {
        self.stages
    }

    /// Counts so far (levels, periods, evaluations).
    #[must_use]
    pub fn counts(&self) -> LodCounts {
        let mut c = self.counts;
        c.longest_gap = self.chars.iter().map(|c| c.gap).max().unwrap_or(0);
        c
    }

    /// Hash of every character's history in character order; the same for
    /// any thread count.
    #[must_use]
    pub fn checksum(&self) -> u64 {
        self.chars.iter().fold(FNV_OFFSET, |h, c| {
            (h ^ c.base.hash).wrapping_mul(0x0100_0000_01b3)
        })
    }

    /// How far the last frame's local poses are from a full evaluation
    /// (every joint, the current clip times), over every `every`-th
    /// character: the largest and mean angle between local rotations, in
    /// degrees, of the joints each character evaluated (interpolation and
    /// ahead-of-time error) and of the joints its level dropped (joint
    /// LOD error). Not a per-frame path: it allocates and evaluates.
    ///
    /// # Errors
    /// Kernel errors (none occur for validated assets).
    pub fn pose_error(&self, every: usize) -> Result<PoseError, Error> {
        let mut e = PoseError::default();
        let blocks = self.lod.soa_count();
        let pose = vec![SoaTransform::IDENTITY; blocks];
        let mut s = [pose.clone(), pose.clone(), pose.clone()];
        let (mut full, mut shown) = (pose.clone(), pose);
        let mut ignored = LodStageTimes::default();
        let frame = self.frame.saturating_sub(1);
        let (mut sum_kept, mut sum_dropped, mut n_kept, mut n_dropped) = (0f64, 0f64, 0u64, 0u64);
        for (c, p) in self.chars.iter().zip(&self.poses).step_by(every.max(1)) {
            let (times, weights) = c.drive_ahead(0, 0.0, self.durations);
            evaluate(
                &self.lod,
                &self.clips,
                0,
                times,
                weights,
                &mut s,
                &mut full,
                &mut ignored,
            )?;
            let kept = self.lod.kept(c.level as usize)?;
            if !self.rate_on {
                let level = c.level as usize;
                evaluate(
                    &self.lod,
                    &self.clips,
                    level,
                    times,
                    weights,
                    &mut s,
                    &mut shown,
                    &mut ignored,
                )?;
            } else {
                match c.shown(frame) {
                    Shown::Prev => shown.copy_from_slice(&p.prev),
                    Shown::Next => shown.copy_from_slice(&p.next),
                    Shown::Between(a) => rate::interpolate_poses(&p.prev, &p.next, a, &mut shown)?,
                }
            }
            fill_rest(
                &mut shown,
                self.lod.rest_pose(),
                kept,
                self.lod.joint_count(),
            );
            let by_period = PERIODS.iter().position(|&p| p == c.period).unwrap_or(3);
            // Interpolating across the loop point of a clip whose last
            // frame is not its first sweeps between two unrelated poses;
            // counted apart.
            let seam = self.rate_on
                && !self.seamless
                && c.seam
                && matches!(c.shown(frame), Shown::Between(_));
            for k in 0..self.lod.joint_count() {
                let a = full[k / 4].rotation.get(k % 4);
                let b = shown[k / 4].rotation.get(k % 4);
                let deg = angle_degrees(a, b);
                if k < kept && seam {
                    e.max_across_seam = e.max_across_seam.max(deg);
                } else if k < kept {
                    e.max_interpolated = e.max_interpolated.max(deg);
                    e.max_by_period[by_period] = e.max_by_period[by_period].max(deg);
                    sum_kept += deg;
                    n_kept += 1;
                } else {
                    e.max_dropped = e.max_dropped.max(deg);
                    sum_dropped += deg;
                    n_dropped += 1;
                }
            }
            e.characters += 1;
            e.across_seam += usize::from(seam);
        }
        e.mean_interpolated = sum_kept / n_kept.max(1) as f64;
        e.mean_dropped = sum_dropped / n_dropped.max(1) as f64;
        Ok(e)
    }
}

/// [`LodCrowd::pose_error`]'s figures, in degrees.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PoseError {
    /// Characters measured.
    pub characters: usize,
    /// Largest angle over evaluated joints.
    pub max_interpolated: f64,
    /// Mean angle over evaluated joints.
    pub mean_interpolated: f64,
    /// Largest angle over evaluated joints of the characters at each
    /// period of [`PERIODS`] (their last evaluation's).
    pub max_by_period: [f64; 4],
    /// Characters measured between two poses on either side of the
    /// clips' loop point (left out of the figures above).
    pub across_seam: usize,
    /// Largest angle over evaluated joints of those characters.
    pub max_across_seam: f64,
    /// Largest angle over dropped joints (held at rest).
    pub max_dropped: f64,
    /// Mean angle over dropped joints.
    pub mean_dropped: f64,
}

/// The angle between two rotations in degrees, accurate near zero
/// (`2 atan2(|v|, |w|)` of `a⁻¹ b` for unit quaternions; `acos` of their
/// dot product loses a hundredth of a degree there).
fn angle_degrees(a: Quat, b: Quat) -> f64 {
    let (a, b) = (a.normalize(), b.normalize());
    let d = a.conjugate() * b;
    let v = f64::from(d.x).hypot(f64::from(d.y)).hypot(f64::from(d.z));
    2.0 * v.atan2(f64::from(d.w).abs()).to_degrees()
}

/// One frame of one character (see [`LodCrowd::step`]).
#[allow(clippy::too_many_arguments)]
fn step_character<C: ClipSource>(
    lod: &JointLod<'_>,
    clips: &[C; 3],
    c: &mut LodChar,
    p: &mut CharPoses,
    s: &mut Scratch,
    frame: u64,
    dt: f32,
    (rate_on, follow_dropped): (bool, bool),
    final_frame: bool,
    acc: &mut LodStageTimes,
) -> Result<(), Error> {
    let durations = clips.each_ref().map(ClipSource::duration);
    if !rate_on {
        c.level = c.due_level;
        c.last = frame;
        let (times, weights) = c.drive_ahead(0, dt, durations);
        let level = c.level as usize;
        evaluate(
            lod,
            clips,
            level,
            times,
            weights,
            &mut s.sampled,
            &mut s.local,
            acc,
        )?;
    } else if c.due {
        // A character interpolating from here on keeps the pose it shows
        // now as its previous one; at period 1 it shows each evaluation.
        if c.due_period > 1 {
            let t0 = Instant::now();
            let old = lod.kept_blocks(c.level as usize)?;
            match c.shown(frame) {
                Shown::Prev => {}
                Shown::Next => p.prev[..old].copy_from_slice(&p.next[..old]),
                Shown::Between(a) => {
                    rate::interpolate_poses(
                        &p.prev[..old],
                        &p.next[..old],
                        a,
                        &mut s.local[..old],
                    )?;
                    p.prev[..old].copy_from_slice(&s.local[..old]);
                }
            }
            // Joints this level adds start from the rest pose they were shown at.
            let (was, now) = (lod.kept(c.level as usize)?, lod.kept(c.due_level as usize)?);
            fill_rest(&mut p.prev, lod.rest_pose(), was, now);
            acc.interpolate += t0.elapsed();
            c.prev_frame = frame;
        }
        c.level = c.due_level;
        c.period = c.due_period;
        // Period P > 1: the pose of frame `frame + P`; period 1: this frame's.
        let ahead = if c.period > 1 { u32::from(c.period) } else { 0 };
        let (times, weights) = c.drive_ahead(ahead, dt, durations);
        c.seam = c.wraps_within(ahead, dt, durations);
        evaluate(
            lod,
            clips,
            c.level as usize,
            times,
            weights,
            &mut s.sampled,
            &mut p.next,
            acc,
        )?;
        c.next_frame = frame + u64::from(ahead);
        c.last = frame;
    }
    let level = c.level as usize;
    let blocks = lod.kept_blocks(level)?;
    let local: &[SoaTransform] = if !rate_on {
        &s.local[..blocks]
    } else {
        match c.shown(frame) {
            Shown::Prev => &p.prev[..blocks],
            Shown::Next => &p.next[..blocks],
            Shown::Between(a) => {
                let t0 = Instant::now();
                rate::interpolate_poses(
                    &p.prev[..blocks],
                    &p.next[..blocks],
                    a,
                    &mut s.local[..blocks],
                )?;
                acc.interpolate += t0.elapsed();
                &s.local[..blocks]
            }
        }
    };
    let root = root_of(c.heading);
    let t0 = Instant::now();
    let kept = if follow_dropped {
        p.models.len()
    } else {
        lod.kept(level)?
    };
    let models = p.models.get_mut(..kept).unwrap_or(&mut []);
    lod::local_to_model(lod, level, local, root.as_ref(), models)?;
    acc.fk += t0.elapsed();
    let folded: &[Mat4] = if final_frame {
        &p.models
    } else {
        &p.models[p.models.len() - 1..]
    };
    for m in folded {
        let vals: &[f32] = if final_frame {
            bytemuck::cast_slice(std::slice::from_ref(m))
        } else {
            &m.cols[3][..3]
        };
        c.base.hash = vals.iter().fold(c.base.hash, |h, &v| fnv(h, v));
    }
    Ok(())
}
