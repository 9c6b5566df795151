//! The motion-unit mixer: a fixed-capacity queue of running clips ("motion
//! units") mixed per joint by priority weight and per-frame ramp.
//!
//! For each joint, with unit `i`'s frame weight `wF_i` (its ramp at its own
//! cursor) and joint weight `wJ_i` (its priority for that joint):
//!
//! `x = Σ_i (wF_i · wJ_i · x_i) / Σ_i (wF_i · wJ_i)`
//!
//! - translations and scales mix by that formula;
//! - rotations, in [`MixMode::Quaternion`] (default), by the same weighted
//!   sum of sign-aligned quaternions, normalised once (nlerp);
//! - in [`MixMode::JointAngles`] each rotation is read as ZXY Euler angles
//!   `(θz, θx, θy)` ([`super::euler_zxy_from_quat`]), the angles are mixed
//!   literally by the formula, and the result is turned back into a
//!   quaternion (for data authored as angles; no wrap-around handling).
//!
//! The **idle** unit loops at the lowest priority: per joint its weight is
//! `wJ_idle · max(0, 1 − W)` where `W` is the others' summed weight, so it
//! fills in exactly what the running units leave and takes over when nothing
//! else runs. The **fatigue** unit loops with `wF` equal to the fatigue factor
//! (0..=1). Where the total weight is below [`MIX_THRESHOLD`] the rest pose
//! fills in (as in [`crate::blend`]).
//!
//! Units are added at any frame (while others run) and removed when their
//! cursor passes their length. Optional inter-frame smoothing of the mixed
//! output is [`BSplineSmoother`] ([`bspline_smooth`]).

use heapless::Vec as HVec;
use wide::f32x4;

use super::detail::{euler_zxy, quat_zxy};
use crate::blend::JointWeights;
use crate::clip::ClipSource;
use crate::error::Error;
use crate::fp::Fp;
use crate::soa::detail::{dot4, normalize, quat_mul_add, vec_mul_add, vec_scale};
use crate::soa::{check_len, SoaQuat, SoaTransform, SoaVec3};

/// Total weight under which the rest pose fills in.
pub const MIX_THRESHOLD: f32 = 1e-4;

/// Shape of a unit's per-frame weight `wF` over its `Nm` frames.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum Ramp {
    /// `wF = 1` on every frame.
    #[default]
    None,
    /// Linear ramps of `frames` (`Nr`) frames at both ends:
    /// `wF(f) = min(1, (f + 1) / (Nr + 1), (Nm − f) / (Nr + 1))`.
    Linear {
        /// Ramp length `Nr` in frames; `2 Nr <= Nm`.
        frames: usize,
    },
    /// The linear ramp passed through smoothstep `3r² − 2r³`: zero slope
    /// where the ramps meet the plateau.
    Smooth {
        /// Ramp length `Nr` in frames; `2 Nr <= Nm`.
        frames: usize,
    },
}

impl Ramp {
    /// The frame weight at `frame` of a unit of `length` frames (0 outside).
    #[inline]
    #[must_use]
    pub fn weight(self, frame: usize, length: usize) -> f32 {
        if frame >= length {
            return 0.0;
        }
        let linear = |nr: usize| {
            let d = (nr + 1) as f32;
            let up = (frame + 1) as f32 / d;
            let down = (length - frame) as f32 / d;
            up.min_num(down).min_num(1.0)
        };
        match self {
            Ramp::None => 1.0,
            Ramp::Linear { frames } => linear(frames),
            Ramp::Smooth { frames } => {
                let r = linear(frames);
                r * r * (3.0 - 2.0 * r)
            }
        }
    }

    fn frames(self) -> usize {
        match self {
            Ramp::None => 0,
            Ramp::Linear { frames } | Ramp::Smooth { frames } => frames,
        }
    }
}

/// One motion unit: a stretch of a clip with its ramp and per-joint priorities.
///
/// A plain value: the clip and the joint weights are indices into tables
/// the caller passes to each [`Mixer`] call, so a mixer borrows nothing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MotionUnit {
    /// Index of the clip in the clip table passed to the mixer.
    pub clip: usize,
    /// First clip frame played.
    pub start: usize,
    /// Frames played (`Nm`), `>= 1`; `start + length` must not pass the clip's end.
    pub length: usize,
    /// Frame-weight ramp (ignored for the idle and fatigue units).
    pub ramp: Ramp,
    /// Index of the per-joint priority weights `wJ` in the mask table passed
    /// to the mixer (all 1 when `None`).
    pub joint_weights: Option<usize>,
}

impl MotionUnit {
    /// A unit playing the first `length` frames of `clip`, no ramp, weight 1 everywhere.
    #[inline]
    #[must_use]
    pub fn new(clip: usize, length: usize) -> Self {
        MotionUnit {
            clip,
            start: 0,
            length,
            ramp: Ramp::None,
            joint_weights: None,
        }
    }

    /// The same unit with a ramp.
    #[inline]
    #[must_use]
    pub fn with_ramp(self, ramp: Ramp) -> Self {
        MotionUnit { ramp, ..self }
    }

    /// The same unit with per-joint priority weights: entry `mask` of the
    /// mask table passed to the mixer.
    #[inline]
    #[must_use]
    pub fn with_joint_weights(self, mask: usize) -> Self {
        MotionUnit {
            joint_weights: Some(mask),
            ..self
        }
    }

    /// The same unit starting at clip frame `start`.
    #[inline]
    #[must_use]
    pub fn with_start(self, start: usize) -> Self {
        MotionUnit { start, ..self }
    }

    /// Checks the unit against a clip table and a mask table for poses of
    /// `soa_count` blocks.
    ///
    /// # Errors
    /// [`Error::UnknownClip`], [`Error::InvalidParameter`] (zero length, ramp
    /// longer than half the unit, mask index outside `masks`),
    /// [`Error::UnitTooLong`], [`Error::BadLength`] (clip or joint weights
    /// not `soa_count` blocks).
    pub fn validate<C: ClipSource>(
        &self,
        clips: &[C],
        masks: &[JointWeights<'_>],
        soa_count: usize,
    ) -> Result<(), Error> {
        let clip = clips.get(self.clip).ok_or(Error::UnknownClip {
            clip: self.clip,
            count: clips.len(),
        })?;
        if self.length == 0 {
            return Err(Error::InvalidParameter {
                what: "motion unit length must be at least 1 frame",
            });
        }
        if self.ramp.frames().saturating_mul(2) > self.length {
            return Err(Error::InvalidParameter {
                what: "ramp frames must be at most half the unit's length",
            });
        }
        let end = self.start.saturating_add(self.length);
        if end > clip.frame_count() {
            return Err(Error::UnitTooLong {
                frames: end,
                clip_frames: clip.frame_count(),
            });
        }
        check_len("clip blocks", soa_count, clip.soa_count())?;
        if let Some(jw) = mask_of(self.joint_weights, masks)? {
            check_len("joint weights", soa_count, jw.as_slice().len())?;
        }
        Ok(())
    }
}

/// Entry `index` of the mask table.
#[inline]
fn mask_of<'m>(
    index: Option<usize>,
    masks: &[JointWeights<'m>],
) -> Result<Option<JointWeights<'m>>, Error> {
    match index {
        None => Ok(None),
        Some(i) => masks
            .get(i)
            .copied()
            .map(Some)
            .ok_or(Error::InvalidParameter {
                what: "motion unit's joint-weight index is outside the mask table",
            }),
    }
}

/// Handle of a unit added to a [`Mixer`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct UnitId(pub u32);

/// A refused item handed back with the reason (e.g. a unit added to a full queue).
#[derive(Clone, Copy, Debug)]
pub struct Rejected<T> {
    /// Why it was refused.
    pub error: Error,
    /// The item, returned to the caller.
    pub item: T,
}

impl<T> core::fmt::Display for Rejected<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        self.error.fmt(f)
    }
}

impl<T: core::fmt::Debug> core::error::Error for Rejected<T> {}

impl<T> From<Rejected<T>> for Error {
    fn from(r: Rejected<T>) -> Error {
        r.error
    }
}

/// How rotations are mixed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MixMode {
    /// Normalised weighted sum of sign-aligned quaternions.
    #[default]
    Quaternion,
    /// ZXY Euler angles `(θz, θx, θy)` mixed literally by the formula.
    JointAngles,
}

/// One input of a [`MixJob`]: a pose, its frame weight `wF` and joint weights `wJ`.
#[derive(Clone, Copy, Debug)]
pub struct MixInput<'a> {
    /// The unit's pose this frame (the job's pose length).
    pub pose: &'a [SoaTransform],
    /// Frame weight `wF`, finite and `>= 0`.
    pub weight: f32,
    /// Per-joint priorities `wJ` (1 when `None`).
    pub joint_weights: Option<JointWeights<'a>>,
}

/// The mixing kernel's job: running units, an optional fatigue and idle unit.
#[derive(Clone, Copy, Debug)]
pub struct MixJob<'a> {
    /// Running (one-shot) units.
    pub units: &'a [MixInput<'a>],
    /// The fatigue unit (its weight is the fatigue factor).
    pub fatigue: Option<MixInput<'a>>,
    /// The idle unit: weight `wJ · max(0, 1 − W)` per joint.
    pub idle: Option<MixInput<'a>>,
    /// Rest pose, used where the total weight is below [`MIX_THRESHOLD`]; fixes the length.
    pub rest: &'a [SoaTransform],
    /// How rotations mix.
    pub mode: MixMode,
}

impl MixJob<'_> {
    /// Checks sizes and weights against an output of `out_len` blocks.
    ///
    /// # Errors
    /// [`Error::BadLength`], [`Error::InvalidWeight`] (inputs numbered units
    /// first, then fatigue, then idle).
    pub fn validate(&self, out_len: usize) -> Result<(), Error> {
        let n = self.rest.len();
        check_len("output", n, out_len)?;
        for (i, u) in self.inputs().enumerate() {
            if !(u.weight.is_finite() && u.weight >= 0.0) {
                return Err(Error::InvalidWeight { layer: i });
            }
            check_len("unit pose", n, u.pose.len())?;
            if let Some(jw) = u.joint_weights {
                check_len("joint weights", n, jw.as_slice().len())?;
            }
        }
        Ok(())
    }

    fn inputs(&self) -> impl Iterator<Item = &MixInput<'_>> {
        self.units.iter().chain(&self.fatigue).chain(&self.idle)
    }
}

#[inline(always)]
fn input_weight(u: &MixInput<'_>, b: usize) -> f32x4 {
    let w = f32x4::splat(u.weight);
    match u.joint_weights {
        Some(jw) => w * jw.as_slice()[b],
        None => w,
    }
}

/// Running sums of one block.
struct Acc {
    t: SoaVec3,
    s: SoaVec3,
    q: SoaQuat,
    w: f32x4,
}

impl Acc {
    const ZERO: Acc = Acc {
        t: SoaVec3::ZERO,
        s: SoaVec3::ZERO,
        q: SoaQuat {
            x: f32x4::ZERO,
            y: f32x4::ZERO,
            z: f32x4::ZERO,
            w: f32x4::ZERO,
        },
        w: f32x4::ZERO,
    };

    /// Adds `x` with weight `w`; in angle mode `q.xyz` holds angles.
    #[inline(always)]
    fn add(&mut self, x: &SoaTransform, w: f32x4, mode: MixMode) {
        vec_mul_add(&mut self.t, &x.translation, w);
        vec_mul_add(&mut self.s, &x.scale, w);
        match mode {
            MixMode::Quaternion => {
                let wq = w.flip_signs(dot4(&self.q, &x.rotation).simd_lt(f32x4::ZERO));
                quat_mul_add(&mut self.q, &x.rotation, wq);
            }
            MixMode::JointAngles => {
                let a = euler_zxy(&x.rotation);
                self.q.x = a.x.madd(w, self.q.x);
                self.q.y = a.y.madd(w, self.q.y);
                self.q.z = a.z.madd(w, self.q.z);
            }
        }
        self.w += w;
    }

    #[inline(always)]
    fn finish(&self, mode: MixMode) -> SoaTransform {
        let inv = f32x4::ONE / self.w;
        SoaTransform {
            translation: vec_scale(&self.t, inv),
            scale: vec_scale(&self.s, inv),
            rotation: match mode {
                MixMode::Quaternion => normalize(&self.q),
                MixMode::JointAngles => quat_zxy(&SoaVec3 {
                    x: self.q.x * inv,
                    y: self.q.y * inv,
                    z: self.q.z * inv,
                }),
            },
        }
    }
}

/// Mixes `job` into `out` (SIMD, four joints per step). Every block of `out`
/// is written; NaN in poses propagates to the joints it touches.
///
/// # Errors
/// As [`MixJob::validate`]; on error `out` is untouched.
pub fn mix(job: &MixJob<'_>, out: &mut [SoaTransform]) -> Result<(), Error> {
    job.validate(out.len())?;
    match job.mode {
        MixMode::Quaternion => mix_chunked::<false>(job, out),
        MixMode::JointAngles => mix_chunked::<true>(job, out),
    }
    Ok(())
}

/// Blocks per chunk: the chunk's output (10 KiB) stays in L1 while every
/// unit passes over it, and its weights (1 KiB) live on the stack.
const CHUNK: usize = 64;

/// `o += w x` for one block; in angle mode `o.rotation.xyz` sums ZXY angles.
#[inline(always)]
fn accumulate<const ANGLES: bool>(o: &mut SoaTransform, x: &SoaTransform, w: f32x4) {
    vec_mul_add(&mut o.translation, &x.translation, w);
    vec_mul_add(&mut o.scale, &x.scale, w);
    if ANGLES {
        let a = euler_zxy(&x.rotation);
        o.rotation.x = a.x.madd(w, o.rotation.x);
        o.rotation.y = a.y.madd(w, o.rotation.y);
        o.rotation.z = a.z.madd(w, o.rotation.z);
    } else {
        let wq = w.flip_signs(dot4(&o.rotation, &x.rotation).simd_lt(f32x4::ZERO));
        quat_mul_add(&mut o.rotation, &x.rotation, wq);
    }
}

/// Unit-major over 64-block chunks (like the blend's general path): each
/// unit makes one pass over the chunk, then the idle, then one pass adds the
/// rest pose where needed, divides and normalises.
fn mix_chunked<const ANGLES: bool>(job: &MixJob<'_>, out: &mut [SoaTransform]) {
    let threshold = f32x4::splat(MIX_THRESHOLD);
    let mut weights = [f32x4::ZERO; CHUNK];
    let zero = SoaTransform {
        translation: SoaVec3::ZERO,
        rotation: Acc::ZERO.q,
        scale: SoaVec3::ZERO,
    };
    for (c, out) in out.chunks_mut(CHUNK).enumerate() {
        let base = c * CHUNK;
        let acc = &mut weights[..out.len()];
        acc.fill(f32x4::ZERO);
        out.fill(zero);
        for u in job
            .units
            .iter()
            .chain(&job.fatigue)
            .filter(|u| u.weight > 0.0)
        {
            let pose = &u.pose[base..base + out.len()];
            let w = f32x4::splat(u.weight);
            match u.joint_weights {
                Some(jw) => {
                    let jw = &jw.as_slice()[base..base + out.len()];
                    for (((o, x), a), j) in out.iter_mut().zip(pose).zip(acc.iter_mut()).zip(jw) {
                        let wj = w * *j;
                        accumulate::<ANGLES>(o, x, wj);
                        *a += wj;
                    }
                }
                None => {
                    for ((o, x), a) in out.iter_mut().zip(pose).zip(acc.iter_mut()) {
                        accumulate::<ANGLES>(o, x, w);
                        *a += w;
                    }
                }
            }
        }
        if let Some(idle) = &job.idle {
            let pose = &idle.pose[base..base + out.len()];
            for (i, ((o, x), a)) in out.iter_mut().zip(pose).zip(acc.iter_mut()).enumerate() {
                let wi = input_weight(idle, base + i) * (f32x4::ONE - *a).max_gt(f32x4::ZERO);
                accumulate::<ANGLES>(o, x, wi);
                *a += wi;
            }
        }
        let rest = &job.rest[base..base + out.len()];
        for ((o, r), a) in out.iter_mut().zip(rest).zip(acc.iter()) {
            let mut w = *a;
            // The rest pose only matters below the threshold: one
            // predictable branch per block instead of a fifth accumulation.
            if w.simd_lt(threshold).any() {
                let rw = (threshold - w).max_gt(f32x4::ZERO);
                accumulate::<ANGLES>(o, r, rw);
                w += rw;
            }
            let inv = f32x4::ONE / w;
            o.translation = vec_scale(&o.translation, inv);
            o.scale = vec_scale(&o.scale, inv);
            o.rotation = if ANGLES {
                quat_zxy(&SoaVec3 {
                    x: o.rotation.x * inv,
                    y: o.rotation.y * inv,
                    z: o.rotation.z * inv,
                })
            } else {
                normalize(&o.rotation)
            };
        }
    }
}

/// The B-spline weights of `p₋₁, p₀, p₊₁` at `u = 0.75`:
/// `½[(1−u)², −2u² + 2u + 1, u²]`.
pub const BSPLINE_WEIGHTS: [f32; 3] = [0.03125, 0.6875, 0.28125];

/// The patent's 3-point uniform B-spline smoothing, one frame (SIMD):
/// `pose` (the newest mixed frame `p₊₁`) becomes
/// `½[(1−u)² p₋₁ + (−2u²+2u+1) p₀ + u² p₊₁]` at `u = 0.75`, where `p₋₁, p₀`
/// are `history[..n]` and `history[n..]`; the history then shifts to
/// `(p₀, unsmoothed p₊₁)`. Rotations are sign-aligned and normalised.
///
/// # Errors
/// [`Error::BadLength`] unless `history.len() == 2 * pose.len()`.
pub fn bspline_smooth(
    history: &mut [SoaTransform],
    pose: &mut [SoaTransform],
) -> Result<(), Error> {
    let n = pose.len();
    check_len("smoothing history", 2 * n, history.len())?;
    let (older, old) = history.split_at_mut(n);
    let [c0, c1, c2] = BSPLINE_WEIGHTS.map(f32x4::splat);
    for ((pm, p0), p1) in older.iter_mut().zip(old.iter_mut()).zip(pose.iter_mut()) {
        let raw = *p1;
        let mut acc = Acc::ZERO;
        acc.add(&raw, c2, MixMode::Quaternion);
        acc.add(p0, c1, MixMode::Quaternion);
        acc.add(pm, c0, MixMode::Quaternion);
        *p1 = acc.finish(MixMode::Quaternion);
        *pm = *p0;
        *p0 = raw;
    }
    Ok(())
}

/// Inter-frame smoothing of a mixer's output ([`bspline_smooth`]).
///
/// A plain value (`Copy`, `'static`): the two history poses live in a
/// buffer the caller owns (`2 × soa_count` blocks) and passes to every
/// [`Self::apply`]; pass the same buffer each frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BSplineSmoother {
    primed: bool,
}

impl BSplineSmoother {
    /// A smoother whose next frame fills the history.
    #[inline]
    #[must_use]
    pub const fn new() -> Self {
        BSplineSmoother { primed: false }
    }

    /// Forgets the history (after a cut): the next frame passes unchanged.
    #[inline]
    pub fn reset(&mut self) {
        self.primed = false;
    }

    /// Smooths `pose` in place with [`bspline_smooth`] over `history`; the
    /// first frame after creation or [`Self::reset`] fills the history with
    /// itself.
    ///
    /// # Errors
    /// [`Error::BadLength`] unless `history` holds `2 × pose.len()` blocks.
    pub fn apply(
        &mut self,
        history: &mut [SoaTransform],
        pose: &mut [SoaTransform],
    ) -> Result<(), Error> {
        let n = pose.len();
        check_len("smoothing history", 2 * n, history.len())?;
        if !self.primed {
            history[..n].copy_from_slice(pose);
            history[n..].copy_from_slice(pose);
            self.primed = true;
        }
        bspline_smooth(history, pose)
    }
}

#[derive(Clone, Copy, Debug)]
struct Running {
    id: UnitId,
    unit: MotionUnit,
    cursor: usize,
}

impl Running {
    /// The unit's pose this frame: a stored frame, or one decoded into `scratch`.
    #[inline]
    fn input<'x, C: ClipSource>(
        &self,
        clips: &'x [C],
        masks: &[JointWeights<'x>],
        rest: &[SoaTransform],
        scratch: &'x mut [SoaTransform],
        weight: f32,
    ) -> Result<MixInput<'x>, Error> {
        let clip = clips.get(self.unit.clip).ok_or(Error::UnknownClip {
            clip: self.unit.clip,
            count: clips.len(),
        })?;
        let frame = self.unit.start + self.cursor.min(self.unit.length - 1);
        let pose = clip.frame(frame, rest, scratch)?;
        Ok(MixInput {
            pose,
            weight,
            joint_weights: mask_of(self.unit.joint_weights, masks)?,
        })
    }
}

/// What [`Mixer::units`] reports of one running unit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UnitState {
    /// The unit's handle.
    pub id: UnitId,
    /// Index of its clip in the clip table.
    pub clip: usize,
    /// Frames played so far (`0..length`).
    pub cursor: usize,
    /// Frames it plays (`Nm`).
    pub length: usize,
    /// Its frame weight `wF` this frame.
    pub weight: f32,
}

/// A fixed-capacity queue of up to `N` running units plus an idle and a
/// fatigue unit, each with its own frame cursor.
///
/// Per-character state and a plain value (`'static`, `Send`): it owns no
/// pose memory and borrows nothing; the clip table, the mask table, the
/// rest pose and decode scratch are passed to each call. Every clip a mixer
/// plays has one sample rate: a unit advances one clip frame per mixer
/// frame, so clips of different rates would play at different speeds and
/// are refused ([`Error::SampleRateMismatch`]); resample them offline.
#[derive(Clone, Debug)]
pub struct Mixer<const N: usize> {
    running: HVec<Running, N>,
    idle: Option<Running>,
    fatigue: Option<Running>,
    fatigue_factor: f32,
    soa_count: usize,
    mode: MixMode,
    next_id: u32,
}

/// Which slot a unit is being put in (it is not compared with itself).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Slot {
    Running,
    Idle,
    Fatigue,
}

impl<const N: usize> Mixer<N> {
    /// An empty mixer for poses of `soa_count` blocks.
    #[inline]
    #[must_use]
    pub const fn new(soa_count: usize, mode: MixMode) -> Self {
        Mixer {
            running: HVec::new(),
            idle: None,
            fatigue: None,
            fatigue_factor: 0.0,
            soa_count,
            mode,
            next_id: 0,
        }
    }

    /// Scratch blocks [`Self::evaluate`] needs for clips that decode
    /// (compressed): one pose per unit, `(N + 2) × soa_count`.
    #[inline]
    #[must_use]
    pub const fn scratch_len(soa_count: usize) -> usize {
        (N + 2) * soa_count
    }

    fn make(&mut self, unit: MotionUnit) -> Running {
        let id = UnitId(self.next_id);
        self.next_id = self.next_id.wrapping_add(1);
        Running {
            id,
            unit,
            cursor: 0,
        }
    }

    /// The units in the queue other than the one in `skip` (idle, fatigue).
    fn others(&self, skip: Slot) -> impl Iterator<Item = &Running> {
        let idle = self.idle.iter().filter(move |_| skip != Slot::Idle);
        let fatigue = self.fatigue.iter().filter(move |_| skip != Slot::Fatigue);
        self.running.iter().chain(idle).chain(fatigue)
    }

    /// Checks `unit` and that its clip has the rate of the clips of the
    /// units it will play with.
    fn check<C: ClipSource>(
        &self,
        unit: &MotionUnit,
        clips: &[C],
        masks: &[JointWeights<'_>],
        slot: Slot,
    ) -> Result<(), Error> {
        unit.validate(clips, masks, self.soa_count)?;
        let rate = clips.get(unit.clip).map(ClipSource::sample_rate);
        for r in self.others(slot) {
            if clips.get(r.unit.clip).map(ClipSource::sample_rate) != rate {
                return Err(Error::SampleRateMismatch {
                    clip: unit.clip,
                    playing: r.unit.clip,
                });
            }
        }
        Ok(())
    }

    /// Starts `unit` now (cursor 0), whatever else is running.
    ///
    /// # Errors
    /// The unit is handed back with [`MotionUnit::validate`]'s error, with
    /// [`Error::SampleRateMismatch`] when its clip's rate differs from the
    /// clips already in the mixer, or with [`Error::CapacityExceeded`] when
    /// `N` units already run.
    pub fn add<C: ClipSource>(
        &mut self,
        unit: MotionUnit,
        clips: &[C],
        masks: &[JointWeights<'_>],
    ) -> Result<UnitId, Rejected<MotionUnit>> {
        if let Err(error) = self.check(&unit, clips, masks, Slot::Running) {
            return Err(Rejected { error, item: unit });
        }
        if self.running.is_full() {
            return Err(Rejected {
                error: Error::CapacityExceeded { capacity: N },
                item: unit,
            });
        }
        let r = self.make(unit);
        let id = r.id;
        // Cannot fail: checked `is_full` above.
        let _ = self.running.push(r);
        Ok(id)
    }

    /// Sets (or clears) the idle unit, which loops over its `length` frames.
    ///
    /// # Errors
    /// The unit is handed back with the errors of [`Self::add`] (but for capacity).
    pub fn set_idle<C: ClipSource>(
        &mut self,
        unit: Option<MotionUnit>,
        clips: &[C],
        masks: &[JointWeights<'_>],
    ) -> Result<(), Rejected<MotionUnit>> {
        self.idle = self.looping(unit, clips, masks, Slot::Idle)?;
        Ok(())
    }

    /// Sets (or clears) the fatigue unit, which loops with weight [`Self::fatigue`].
    ///
    /// # Errors
    /// The unit is handed back with the errors of [`Self::add`] (but for capacity).
    pub fn set_fatigue_unit<C: ClipSource>(
        &mut self,
        unit: Option<MotionUnit>,
        clips: &[C],
        masks: &[JointWeights<'_>],
    ) -> Result<(), Rejected<MotionUnit>> {
        self.fatigue = self.looping(unit, clips, masks, Slot::Fatigue)?;
        Ok(())
    }

    fn looping<C: ClipSource>(
        &mut self,
        unit: Option<MotionUnit>,
        clips: &[C],
        masks: &[JointWeights<'_>],
        slot: Slot,
    ) -> Result<Option<Running>, Rejected<MotionUnit>> {
        match unit {
            None => Ok(None),
            Some(u) => match self.check(&u, clips, masks, slot) {
                Ok(()) => Ok(Some(self.make(u))),
                Err(error) => Err(Rejected { error, item: u }),
            },
        }
    }

    /// Sets the fatigue factor, the fatigue unit's frame weight.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] unless `0 <= factor <= 1` (NaN included).
    pub fn set_fatigue(&mut self, factor: f32) -> Result<(), Error> {
        if !(0.0..=1.0).contains(&factor) {
            return Err(Error::InvalidParameter {
                what: "fatigue factor must be in 0..=1",
            });
        }
        self.fatigue_factor = factor;
        Ok(())
    }

    /// The fatigue factor.
    #[inline]
    #[must_use]
    pub fn fatigue(&self) -> f32 {
        self.fatigue_factor
    }

    /// The rotation mixing mode.
    #[inline]
    #[must_use]
    pub fn mode(&self) -> MixMode {
        self.mode
    }

    /// Stops a running unit now; false if it is not running.
    pub fn remove(&mut self, id: UnitId) -> bool {
        let before = self.running.len();
        self.running.retain(|r| r.id != id);
        self.running.len() != before
    }

    /// True while the unit runs.
    #[must_use]
    pub fn is_running(&self, id: UnitId) -> bool {
        self.running.iter().any(|r| r.id == id)
    }

    /// Running one-shot units (not counting idle and fatigue).
    #[inline]
    #[must_use]
    pub fn len(&self) -> usize {
        self.running.len()
    }

    /// True when no one-shot unit runs.
    #[inline]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.running.is_empty()
    }

    /// Every running one-shot unit, oldest first.
    pub fn units(&self) -> impl Iterator<Item = UnitState> + '_ {
        self.running.iter().map(|r| UnitState {
            id: r.id,
            clip: r.unit.clip,
            cursor: r.cursor,
            length: r.unit.length,
            weight: r.unit.ramp.weight(r.cursor, r.unit.length),
        })
    }

    /// Mixes the current frame of every unit into `out`.
    ///
    /// `clips` and `masks` must be the tables the units were added with
    /// (they are checked again, O(units)); `rest` fills joints no unit
    /// drives and supplies the tracks of clips compressed with rest-pose
    /// stripping. `scratch` holds the decoded frames of clips that decode:
    /// [`Self::scratch_len`] blocks for compressed clips; raw clips' frames
    /// are borrowed in place, so pass `&mut []` for them.
    ///
    /// # Errors
    /// [`MotionUnit::validate`]'s errors and [`Error::SampleRateMismatch`] if
    /// the tables changed, [`Error::BadLength`] for `rest` or `scratch`, and
    /// [`MixJob::validate`]'s; on error `out` is untouched.
    pub fn evaluate<C: ClipSource>(
        &self,
        clips: &[C],
        masks: &[JointWeights<'_>],
        rest: &[SoaTransform],
        scratch: &mut [SoaTransform],
        out: &mut [SoaTransform],
    ) -> Result<(), Error> {
        let n = self.soa_count;
        check_len("rest pose", n, rest.len())?;
        if !C::BORROWS_FRAMES {
            check_len("mixer scratch", Self::scratch_len(n), scratch.len())?;
        }
        let mut poses = scratch.chunks_mut(n.max(1));
        let mut next = move || poses.next().unwrap_or(&mut []);
        let mut inputs: HVec<MixInput<'_>, N> = HVec::new();
        let mut rate = None;
        for r in &self.running {
            let w = r.unit.ramp.weight(r.cursor, r.unit.length);
            let input = self.input(r, w, clips, masks, rest, next(), &mut rate)?;
            // Cannot fail: one input per running unit, both capacity N.
            let _ = inputs.push(input);
        }
        let fatigue = match &self.fatigue {
            Some(r) => Some(self.input(
                r,
                self.fatigue_factor,
                clips,
                masks,
                rest,
                next(),
                &mut rate,
            )?),
            None => None,
        };
        let idle = match &self.idle {
            Some(r) => Some(self.input(r, 1.0, clips, masks, rest, next(), &mut rate)?),
            None => None,
        };
        mix(
            &MixJob {
                units: &inputs,
                fatigue,
                idle,
                rest,
                mode: self.mode,
            },
            out,
        )
    }

    /// Unit `r`'s input this frame, checked again against the tables and
    /// against `rate`, the first unit's `(clip rate, clip)`.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn input<'x, C: ClipSource>(
        &self,
        r: &Running,
        weight: f32,
        clips: &'x [C],
        masks: &[JointWeights<'x>],
        rest: &[SoaTransform],
        pose: &'x mut [SoaTransform],
        rate: &mut Option<(Option<f32>, usize)>,
    ) -> Result<MixInput<'x>, Error> {
        r.unit.validate(clips, masks, self.soa_count)?;
        let clip_rate = clips.get(r.unit.clip).map(ClipSource::sample_rate);
        match *rate {
            None => *rate = Some((clip_rate, r.unit.clip)),
            Some((first, playing)) if first != clip_rate => {
                return Err(Error::SampleRateMismatch {
                    clip: r.unit.clip,
                    playing,
                })
            }
            Some(_) => {}
        }
        r.input(clips, masks, rest, pose, weight)
    }

    /// Advances every cursor by one frame; one-shot units that pass their
    /// length are removed, idle and fatigue wrap around.
    pub fn advance(&mut self) {
        for r in self.running.iter_mut() {
            r.cursor += 1;
        }
        self.running.retain(|r| r.cursor < r.unit.length);
        for r in self.idle.iter_mut().chain(self.fatigue.iter_mut()) {
            r.cursor = (r.cursor + 1) % r.unit.length.max(1);
        }
    }
}

/// Scalar reference implementations: the readable specification.
pub mod reference {
    use super::{Error, MixJob, MixMode, BSPLINE_WEIGHTS, MIX_THRESHOLD};
    use crate::math::{Quat, Transform, Vec3};
    use crate::mix::{euler_zxy_from_quat, quat_from_euler_zxy};
    use crate::soa::{check_len, SoaTransform, LANES};

    #[derive(Default)]
    struct Acc {
        t: Vec3,
        s: Vec3,
        q: [f32; 4],
        w: f32,
    }

    impl Acc {
        fn add(&mut self, x: &Transform, w: f32, mode: MixMode) {
            self.t = self.t + x.translation * w;
            self.s = self.s + x.scale * w;
            match mode {
                MixMode::Quaternion => {
                    let q = Quat::new(self.q[0], self.q[1], self.q[2], self.q[3]);
                    let sign = if q.dot(x.rotation) < 0.0 { -1.0 } else { 1.0 };
                    self.q = (q + x.rotation.scale(w * sign)).to_array();
                }
                MixMode::JointAngles => {
                    let a = euler_zxy_from_quat(x.rotation);
                    self.q[0] += a.x * w;
                    self.q[1] += a.y * w;
                    self.q[2] += a.z * w;
                }
            }
            self.w += w;
        }

        fn finish(&self, mode: MixMode) -> Transform {
            let inv = 1.0 / self.w;
            let rotation = match mode {
                MixMode::Quaternion => {
                    Quat::new(self.q[0], self.q[1], self.q[2], self.q[3]).normalize()
                }
                MixMode::JointAngles => {
                    quat_from_euler_zxy(Vec3::new(self.q[0], self.q[1], self.q[2]) * inv)
                }
            };
            Transform::new(self.t * inv, rotation, self.s * inv)
        }
    }

    /// Scalar twin of [`super::mix`].
    ///
    /// # Errors
    /// As [`MixJob::validate`].
    pub fn mix(job: &MixJob<'_>, out: &mut [SoaTransform]) -> Result<(), Error> {
        job.validate(out.len())?;
        for j in 0..out.len() * LANES {
            let (b, l) = (j / LANES, j % LANES);
            let w_of =
                |u: &super::MixInput<'_>| u.weight * u.joint_weights.map_or(1.0, |jw| jw.get(j));
            let mut acc = Acc::default();
            for u in job.units.iter().chain(&job.fatigue) {
                if u.weight > 0.0 {
                    acc.add(&u.pose[b].get(l), w_of(u), job.mode);
                }
            }
            if let Some(idle) = &job.idle {
                let wi = w_of(idle) * (1.0 - acc.w).max(0.0);
                acc.add(&idle.pose[b].get(l), wi, job.mode);
            }
            let rw = (MIX_THRESHOLD - acc.w).max(0.0);
            acc.add(&job.rest[b].get(l), rw, job.mode);
            out[b].set(l, &acc.finish(job.mode));
        }
        Ok(())
    }

    /// Scalar twin of [`super::bspline_smooth`].
    ///
    /// # Errors
    /// As [`super::bspline_smooth`].
    pub fn bspline_smooth(
        history: &mut [SoaTransform],
        pose: &mut [SoaTransform],
    ) -> Result<(), Error> {
        let n = pose.len();
        check_len("smoothing history", 2 * n, history.len())?;
        for j in 0..n * LANES {
            let (b, l) = (j / LANES, j % LANES);
            let (pm, p0, p1) = (history[b].get(l), history[n + b].get(l), pose[b].get(l));
            let mut acc = Acc::default();
            acc.add(&p1, BSPLINE_WEIGHTS[2], MixMode::Quaternion);
            acc.add(&p0, BSPLINE_WEIGHTS[1], MixMode::Quaternion);
            acc.add(&pm, BSPLINE_WEIGHTS[0], MixMode::Quaternion);
            pose[b].set(l, &acc.finish(MixMode::Quaternion));
            history[b].set(l, &p0);
            history[n + b].set(l, &p1);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::{Quat, Transform, Vec3};
    use crate::soa::{get_joint, set_joint};

    fn pose_with_angle(angle: f32) -> [SoaTransform; 1] {
        let mut p = [SoaTransform::IDENTITY];
        for j in 0..4 {
            let t = Transform::from_translation_rotation(
                Vec3::new(angle, 0.0, 0.0),
                Quat::from_rotation_x(angle),
            );
            set_joint(&mut p, j, &t).unwrap();
        }
        p
    }

    /// Worked example: kick (legs 1.0, others 0.1), punch (arms 1.0), head
    /// shake (head 1.0): θ_leg = (1.0 θ_kick + 0.1 θ_punch + 0.1 θ_head) / 1.2.
    /// Joints: 0 leg, 1 arm, 2 head.
    #[test]
    fn worked_example_kick_punch_headshake() {
        let (kick, punch, head) = (
            pose_with_angle(0.6),
            pose_with_angle(0.3),
            pose_with_angle(-0.2),
        );
        let wk = [f32x4::from([1.0, 0.1, 0.1, 0.1])];
        let wp = [f32x4::from([0.1, 1.0, 0.1, 0.1])];
        let wh = [f32x4::from([0.1, 0.1, 1.0, 0.1])];
        let inputs = [
            MixInput {
                pose: &kick,
                weight: 1.0,
                joint_weights: Some(JointWeights::new(&wk).unwrap()),
            },
            MixInput {
                pose: &punch,
                weight: 1.0,
                joint_weights: Some(JointWeights::new(&wp).unwrap()),
            },
            MixInput {
                pose: &head,
                weight: 1.0,
                joint_weights: Some(JointWeights::new(&wh).unwrap()),
            },
        ];
        let rest = [SoaTransform::IDENTITY];
        for mode in [MixMode::Quaternion, MixMode::JointAngles] {
            let job = MixJob {
                units: &inputs,
                fatigue: None,
                idle: None,
                rest: &rest,
                mode,
            };
            let mut out = [SoaTransform::IDENTITY];
            mix(&job, &mut out).unwrap();
            let leg = get_joint(&out, 0).unwrap();
            let expect = (1.0 * 0.6 + 0.1 * 0.3 + 0.1 * -0.2) / 1.2;
            assert!((leg.translation.x - expect).abs() < 1e-6);
            let angle = euler_zxy_from_quat_x(leg.rotation);
            // Angle mode is exact; nlerp of nearby angles is close.
            let tol = if mode == MixMode::JointAngles {
                1e-5
            } else {
                2e-3
            };
            assert!((angle - expect).abs() < tol, "{mode:?} {angle} {expect}");
            let arm = get_joint(&out, 1).unwrap();
            assert!((arm.translation.x - (0.1 * 0.6 + 0.3 + 0.1 * -0.2) / 1.2).abs() < 1e-6);
            // With frame weights 0.5 / 1 / 1 the weights become wF·wJ.
            let mut half = inputs;
            half[0].weight = 0.5;
            let job = MixJob {
                units: &half,
                ..job
            };
            mix(&job, &mut out).unwrap();
            let leg = get_joint(&out, 0).unwrap();
            let expect = (0.5 * 0.6 + 0.1 * 0.3 + 0.1 * -0.2) / 0.7;
            assert!((leg.translation.x - expect).abs() < 1e-6);
        }
    }

    fn euler_zxy_from_quat_x(q: Quat) -> f32 {
        crate::mix::euler_zxy_from_quat(q).y
    }

    #[test]
    fn ramps() {
        let r = Ramp::Linear { frames: 3 };
        let w: [f32; 10] = core::array::from_fn(|f| r.weight(f, 10));
        assert_eq!(w, [0.25, 0.5, 0.75, 1.0, 1.0, 1.0, 1.0, 0.75, 0.5, 0.25]);
        assert_eq!(r.weight(10, 10), 0.0);
        let s = Ramp::Smooth { frames: 3 };
        assert!((s.weight(1, 10) - 0.5).abs() < 1e-6);
        assert!(s.weight(0, 10) < 0.25);
    }

    #[test]
    fn bspline_weights_match_formula() {
        let u = 0.75f32;
        let w = [
            0.5 * (1.0 - u) * (1.0 - u),
            0.5 * (-2.0 * u * u + 2.0 * u + 1.0),
            0.5 * u * u,
        ];
        for (a, b) in w.iter().zip(BSPLINE_WEIGHTS) {
            assert!((a - b).abs() < 1e-7);
        }
    }
}
