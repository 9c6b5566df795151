//! The frame loop of sinew's embedded proof, shared by the Cortex-M4F firmware
//! and the host program so that both run exactly the same code.
//!
//! [`run`] builds the procedural humanoid into caller-owned [`Buffers`],
//! generates the walk, jog and run clips at 30 Hz, then plays [`FRAMES`]
//! frames at 60 Hz: sample the three clips at synchronised normalised time,
//! blend them with the fixed [`WEIGHTS`], local-to-model. It folds every
//! frame's model matrices into an FNV-1a 64 checksum of the `f32` bit
//! patterns. Nothing allocates; all memory is in [`Buffers`], so the firmware
//! can keep it in one zero-initialised static (`.bss`).
#![no_std]
#![deny(missing_docs)]
#![forbid(unsafe_code)]

use sinew_core::blend::{self, BlendJob, BlendLayer};
use sinew_core::clip::{RawClip, TimeMode};
use sinew_core::fk::{self, FkJob};
use sinew_core::procedural::{self, Gait};
use sinew_core::{soa_count, Error, Mat4, Quat, Skeleton, SoaQuat, SoaTransform, SoaVec3};

/// Frames played.
pub const FRAMES: usize = 100;

/// Playback rate, frames per second.
pub const FRAME_RATE: f32 = 60.0;

/// Blend weights of walk, jog and run (constant over the run).
pub const WEIGHTS: [f32; 3] = [0.5, 0.3, 0.2];

/// Joints of the procedural humanoid.
pub const JOINTS: usize = procedural::HUMANOID_JOINT_COUNT;

/// SoA blocks per pose.
pub const BLOCKS: usize = soa_count(JOINTS);

/// Frames of the three clips at 30 Hz together (walk 34 + jog 24 + run 20,
/// each a whole cycle plus the repeated first frame). [`run`] checks this
/// against [`procedural::gait_frame_count`] and fails rather than overrun.
pub const CLIP_FRAMES: usize = 34 + 24 + 20;

/// A skeleton container buffer with the 16-byte alignment views need.
#[repr(C, align(16))]
pub struct SkeletonBytes(pub [u8; procedural::HUMANOID_SKELETON_BYTES]);

/// All memory [`run`] uses (`size_of::<Buffers>()` bytes), most of it clip
/// keys.
///
/// [`Buffers::ZERO`] is all-zero bytes, so a `static` of it lands in `.bss`
/// and costs no flash.
#[repr(C)]
pub struct Buffers {
    /// The skeleton container.
    pub skeleton: SkeletonBytes,
    /// Keys of the three clips, one after the other.
    pub clip_keys: [SoaTransform; CLIP_FRAMES * BLOCKS],
    /// The three sampled poses of the current frame.
    pub sampled: [[SoaTransform; BLOCKS]; 3],
    /// The blended local pose.
    pub local: [SoaTransform; BLOCKS],
    /// Model-space matrices of the last frame played.
    pub models: [Mat4; JOINTS],
}

const ZERO_BLOCK: SoaTransform = SoaTransform {
    translation: SoaVec3::ZERO,
    rotation: SoaQuat::splat(Quat::new(0.0, 0.0, 0.0, 0.0)),
    scale: SoaVec3::ZERO,
};

const ZERO_MAT: Mat4 = Mat4 {
    cols: [[0.0; 4]; 4],
};

impl Buffers {
    /// All zeros (contents are written by [`run`] before they are read).
    pub const ZERO: Buffers = Buffers {
        skeleton: SkeletonBytes([0; procedural::HUMANOID_SKELETON_BYTES]),
        clip_keys: [ZERO_BLOCK; CLIP_FRAMES * BLOCKS],
        sampled: [[ZERO_BLOCK; BLOCKS]; 3],
        local: [ZERO_BLOCK; BLOCKS],
        models: [ZERO_MAT; JOINTS],
    };
}

/// FNV-1a 64 offset basis.
const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
/// FNV-1a 64 prime.
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// Folds the little-endian bytes of every float's bit pattern into `hash`.
#[must_use]
pub fn fnv1a(mut hash: u64, models: &[Mat4]) -> u64 {
    for m in models {
        for x in m.cols.iter().flatten() {
            for byte in x.to_bits().to_le_bytes() {
                hash = (hash ^ u64::from(byte)).wrapping_mul(FNV_PRIME);
            }
        }
    }
    hash
}

/// Runs the whole proof: build the humanoid and its clips into `buf`, play
/// `frames` frames, return the checksum of all their model matrices.
///
/// Frame `f` is at `t = f / FRAME_RATE` seconds. The clips' cycles are
/// synchronised by normalised time, as the `sinew` tool's crowd does: the
/// cycle length is the weighted mean of the clip durations, and clip `i` is
/// sampled (looping) at `t / cycle × duration_i`. `buf.models` holds the last
/// frame's matrices afterwards.
///
/// # Errors
/// Any error of the core's kernels, and [`Error::BufferTooSmall`] when the
/// clips need more than [`CLIP_FRAMES`] frames.
pub fn run(buf: &mut Buffers, frames: usize) -> Result<u64, Error> {
    let Buffers {
        skeleton: skeleton_bytes,
        clip_keys,
        sampled,
        local,
        models,
    } = buf;
    let len = procedural::write_humanoid_skeleton(&mut skeleton_bytes.0)?;
    let skeleton = Skeleton::from_bytes(&skeleton_bytes.0[..len])?;
    let n = skeleton.soa_count();
    if n != BLOCKS || skeleton.joint_count() != JOINTS {
        return Err(Error::BadLength {
            buffer: "pose blocks",
            expected: n,
            actual: BLOCKS,
        });
    }

    let rate = procedural::DEFAULT_SAMPLE_RATE;
    let lens = Gait::ALL.map(|g| procedural::gait_frame_count(g, rate) * n);
    let needed = lens.iter().sum::<usize>();
    if needed > clip_keys.len() {
        return Err(Error::BufferTooSmall {
            needed,
            actual: clip_keys.len(),
        });
    }
    let (walk_keys, rest) = clip_keys.split_at_mut(lens[0]);
    let (jog_keys, rest) = rest.split_at_mut(lens[1]);
    let run_keys = &mut rest[..lens[2]];
    let clips: [RawClip<'_>; 3] = [
        procedural::write_gait_clip(Gait::Walk, &skeleton, rate, walk_keys)?,
        procedural::write_gait_clip(Gait::Jog, &skeleton, rate, jog_keys)?,
        procedural::write_gait_clip(Gait::Run, &skeleton, rate, run_keys)?,
    ];

    let durations = clips.map(|c| c.duration());
    let cycle: f32 = WEIGHTS.iter().zip(durations).map(|(w, d)| w * d).sum();
    let mut hash = FNV_OFFSET;
    for f in 0..frames {
        let phase = f as f32 / FRAME_RATE / cycle;
        for ((clip, out), d) in clips.iter().zip(sampled.iter_mut()).zip(durations) {
            clip.sample(phase * d, TimeMode::Loop, out)?;
        }
        let [walk, jog, run] = &*sampled;
        let layers = [
            BlendLayer::new(walk, WEIGHTS[0]),
            BlendLayer::new(jog, WEIGHTS[1]),
            BlendLayer::new(run, WEIGHTS[2]),
        ];
        blend::blend(
            &BlendJob::new(&layers, &[], skeleton.rest_pose()),
            &mut local[..],
        )?;
        fk::local_to_model(&FkJob::new(&skeleton, &local[..]), &mut models[..])?;
        hash = fnv1a(hash, &models[..]);
    }
    Ok(hash)
}
