//! The frame loop of sinew's embedded proof, shared by the Cortex-M4F firmware
//! and the host program so that both run exactly the same code.
//!
//! The procedural humanoid's skeleton and its walk, jog and run, compressed
//! at the compressor's default bound (0.01 cm), are containers in flash:
//! `build.rs` writes them on the build machine and they are included as
//! 16-byte aligned statics (`.rodata`), validated once and viewed in place.
//! [`run`] plays [`FRAMES`] frames at 60 Hz: sample the three clips at
//! synchronised normalised time through one playback cache each, blend them
//! with the fixed [`WEIGHTS`], local-to-model. It folds every frame's model
//! matrices into an FNV-1a 64 checksum of the `f32` bit patterns. Nothing
//! allocates; the RAM is [`Buffers`], which the firmware keeps in one
//! zero-initialised static (`.bss`).
#![no_std]
#![deny(missing_docs)]
#![forbid(unsafe_code)]

use sinew_core::blend::{self, BlendJob, BlendLayer};
use sinew_core::clip::TimeMode;
use sinew_core::compressed::{CompressedClip, PlaybackCache};
use sinew_core::fk::{self, FkJob};
use sinew_core::procedural;
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

include!(concat!(env!("OUT_DIR"), "/cache_blocks.rs"));

/// A container's bytes at the 16-byte alignment the views need.
#[repr(C, align(16))]
struct Aligned<B: ?Sized>(B);

/// `include_bytes!` of a file `build.rs` wrote, 16-byte aligned, as a
/// `&'static [u8]` in `.rodata`.
macro_rules! container {
    ($file:literal) => {{
        static BYTES: &Aligned<[u8]> =
            &Aligned(*include_bytes!(concat!(env!("OUT_DIR"), "/", $file)));
        &BYTES.0
    }};
}

/// The humanoid's skeleton container (flash).
pub static SKELETON: &[u8] = container!("humanoid.sinewskl");

/// Walk, jog and run as compressed clip containers (flash).
pub static CLIPS: [&[u8]; 3] = [
    container!("walk.sinewcmp"),
    container!("jog.sinewcmp"),
    container!("run.sinewcmp"),
];

/// All the RAM [`run`] uses (`size_of::<Buffers>()` bytes).
///
/// [`Buffers::ZERO`] is all-zero bytes, so a `static` of it lands in `.bss`
/// and costs no flash.
#[repr(C)]
pub struct Buffers {
    /// One playback cache per clip: the key frames it last decoded.
    pub caches: [[SoaTransform; CACHE_BLOCKS]; 3],
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
        caches: [[ZERO_BLOCK; CACHE_BLOCKS]; 3],
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

/// Runs the whole proof: view the skeleton and clips in flash, play
/// `frames` frames, return the checksum of all their model matrices.
///
/// Frame `f` is at `t = f / FRAME_RATE` seconds. The clips' cycles are
/// synchronised by normalised time, as the `sinew` tool's crowd does: the
/// cycle length is the weighted mean of the clip durations, and clip `i` is
/// sampled (looping) at `t / cycle × duration_i`. `buf.models` holds the last
/// frame's matrices afterwards.
///
/// # Errors
/// Any error of the containers' validation or of the core's kernels, and
/// [`Error::BadLength`] when the skeleton is not the humanoid.
pub fn run(buf: &mut Buffers, frames: usize) -> Result<u64, Error> {
    let Buffers {
        caches,
        sampled,
        local,
        models,
    } = buf;
    let skeleton = Skeleton::from_bytes(SKELETON)?;
    let n = skeleton.soa_count();
    if n != BLOCKS || skeleton.joint_count() != JOINTS {
        return Err(Error::BadLength {
            buffer: "pose blocks",
            expected: n,
            actual: BLOCKS,
        });
    }
    let clips = [
        CompressedClip::from_bytes(CLIPS[0])?,
        CompressedClip::from_bytes(CLIPS[1])?,
        CompressedClip::from_bytes(CLIPS[2])?,
    ];
    let [c0, c1, c2] = caches;
    let mut caches = [
        PlaybackCache::new(c0),
        PlaybackCache::new(c1),
        PlaybackCache::new(c2),
    ];
    let rest = skeleton.rest_pose();

    let durations = clips.map(|c| c.duration());
    let cycle: f32 = WEIGHTS.iter().zip(durations).map(|(w, d)| w * d).sum();
    let mut hash = FNV_OFFSET;
    for f in 0..frames {
        let phase = f as f32 / FRAME_RATE / cycle;
        for (((clip, cache), out), d) in clips
            .iter()
            .zip(caches.iter_mut())
            .zip(sampled.iter_mut())
            .zip(durations)
        {
            clip.sample_cached(phase * d, TimeMode::Loop, rest, cache, out)?;
        }
        let [walk, jog, run] = &*sampled;
        let layers = [
            BlendLayer::new(walk, WEIGHTS[0]),
            BlendLayer::new(jog, WEIGHTS[1]),
            BlendLayer::new(run, WEIGHTS[2]),
        ];
        blend::blend(&BlendJob::new(&layers, &[], rest), &mut local[..])?;
        fk::local_to_model(&FkJob::new(&skeleton, &local[..]), &mut models[..])?;
        hash = fnv1a(hash, &models[..]);
    }
    Ok(hash)
}
