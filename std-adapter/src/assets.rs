//! Owned storage for the core's views: aligned bytes, skeletons and clips.

use sinew_core::clip::{ClipSource, RawClip};
use sinew_core::procedural::{self, Gait};
use sinew_core::skeleton::{self, JointDef};
use sinew_core::{Error, Skeleton, SoaTransform};

use crate::compress::{compress, CompressOptions, OwnedCompressedClip};

/// A 16-byte aligned, 16-byte granular byte buffer (what `Skeleton::from_bytes` needs).
#[derive(Clone, Default)]
pub struct AlignedBytes {
    words: Vec<[u128; 1]>,
    len: usize,
}

impl AlignedBytes {
    /// `len` zero bytes.
    #[must_use]
    pub fn zeroed(len: usize) -> Self {
        AlignedBytes {
            words: vec![[0u128]; len.div_ceil(16)],
            len,
        }
    }

    /// A 16-byte aligned copy of `bytes`.
    #[must_use]
    pub fn copy_from(bytes: &[u8]) -> Self {
        let mut a = AlignedBytes::zeroed(bytes.len());
        a.as_mut_slice().copy_from_slice(bytes);
        a
    }

    /// The bytes.
    #[must_use]
    pub fn as_slice(&self) -> &[u8] {
        &bytemuck::cast_slice(&self.words)[..self.len]
    }

    /// The bytes, mutably.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut bytemuck::cast_slice_mut(&mut self.words)[..self.len]
    }

    /// Length in bytes.
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// A skeleton container that owns its bytes.
#[derive(Clone)]
pub struct OwnedSkeleton {
    bytes: AlignedBytes,
    joint_count: usize,
}

impl OwnedSkeleton {
    /// Builds a skeleton from joint definitions (any order; see `skeleton::build`).
    ///
    /// # Errors
    /// As `sinew_core::skeleton::build`.
    pub fn build(joints: &[JointDef<'_>]) -> Result<Self, Error> {
        let mut bytes = AlignedBytes::zeroed(skeleton::required_size(joints));
        skeleton::build(joints, bytes.as_mut_slice(), None)?;
        OwnedSkeleton::from_bytes(bytes.as_slice())
    }

    /// Copies and validates serialized skeleton bytes.
    ///
    /// # Errors
    /// As `Skeleton::from_bytes`.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let bytes = AlignedBytes::copy_from(bytes);
        let joint_count = Skeleton::from_bytes(bytes.as_slice())?.joint_count();
        Ok(OwnedSkeleton { bytes, joint_count })
    }

    /// The validated view. Validation is repeated here (linear in size), so
    /// take the view once per frame loop, not per joint.
    #[must_use]
    pub fn view(&self) -> Skeleton<'_> {
        // The bytes were validated when this value was made and are immutable since.
        match Skeleton::from_bytes(self.bytes.as_slice()) {
            Ok(s) => s,
            Err(e) => unreachable!("owned skeleton bytes were validated at construction: {e}"),
        }
    }

    /// The serialized container.
    #[must_use]
    pub fn bytes(&self) -> &[u8] {
        self.bytes.as_slice()
    }

    /// Number of joints.
    #[must_use]
    pub fn joint_count(&self) -> usize {
        self.joint_count
    }
}

/// A named float curve sampled once per clip frame (e.g. a morph-target weight).
#[derive(Clone, Debug, PartialEq)]
pub struct FloatTrack {
    /// Track name, e.g. `"morph/Face/3"`.
    pub name: String,
    /// One value per frame of the clip.
    pub values: Vec<f32>,
}

/// A raw uniform clip that owns its keys.
#[derive(Clone)]
pub struct OwnedClip {
    /// Clip name.
    pub name: String,
    sample_rate: f32,
    soa_count: usize,
    keys: Vec<SoaTransform>,
    float_tracks: Vec<FloatTrack>,
}

impl OwnedClip {
    /// Takes ownership of `keys` (`frames × soa_count` blocks) after validating them.
    ///
    /// # Errors
    /// As `RawClip::new`.
    pub fn new(
        name: impl Into<String>,
        sample_rate: f32,
        soa_count: usize,
        keys: Vec<SoaTransform>,
    ) -> Result<Self, Error> {
        RawClip::new(sample_rate, soa_count, &keys)?;
        Ok(OwnedClip {
            name: name.into(),
            sample_rate,
            soa_count,
            keys,
            float_tracks: Vec::new(),
        })
    }

    /// Adds float tracks (one value per frame each).
    ///
    /// # Errors
    /// [`Error::BadLength`] when a track's length is not the frame count,
    /// [`Error::NonFinite`] for a NaN or infinite value.
    pub fn with_float_tracks(mut self, tracks: Vec<FloatTrack>) -> Result<Self, Error> {
        let frames = self.frame_count();
        for t in &tracks {
            if t.values.len() != frames {
                return Err(Error::BadLength {
                    buffer: "float track",
                    expected: frames,
                    actual: t.values.len(),
                });
            }
            if !t.values.iter().all(|v| v.is_finite()) {
                return Err(Error::NonFinite {
                    what: "float track value",
                });
            }
        }
        self.float_tracks = tracks;
        Ok(self)
    }

    /// Float tracks (e.g. morph-target weights), one value per frame.
    #[must_use]
    pub fn float_tracks(&self) -> &[FloatTrack] {
        &self.float_tracks
    }

    /// Number of frames.
    #[must_use]
    pub fn frame_count(&self) -> usize {
        self.keys.len() / self.soa_count
    }

    /// Frames per second.
    #[must_use]
    pub fn sample_rate(&self) -> f32 {
        self.sample_rate
    }

    /// Duration in seconds.
    #[must_use]
    pub fn duration(&self) -> f32 {
        self.frame_count().saturating_sub(1) as f32 / self.sample_rate
    }

    /// The clip view (validated at construction; this only re-wraps).
    #[must_use]
    pub fn view(&self) -> RawClip<'_> {
        match RawClip::new(self.sample_rate, self.soa_count, &self.keys) {
            Ok(c) => c.with_name(&self.name),
            Err(e) => unreachable!("owned clip was validated at construction: {e}"),
        }
    }

    /// The clip as a raw clip container (see `sinew_core::clip`), ready for
    /// `RawClip::from_bytes` to view in place.
    #[must_use]
    pub fn to_bytes(&self) -> AlignedBytes {
        let view = self.view().with_name(&self.name);
        let mut out = AlignedBytes::zeroed(sinew_core::clip::clip_container_size(
            self.soa_count,
            self.frame_count(),
            self.name.len(),
        ));
        match view.write(out.as_mut_slice()) {
            Ok(_) => out,
            Err(e) => unreachable!("the buffer is sized and aligned for this clip: {e}"),
        }
    }

    /// Copies and validates a raw clip container.
    ///
    /// # Errors
    /// As `RawClip::from_bytes`.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let aligned = AlignedBytes::copy_from(bytes);
        let clip = RawClip::from_bytes(aligned.as_slice())?;
        OwnedClip::new(
            clip.name(),
            clip.sample_rate(),
            clip.soa_count(),
            clip_keys(&clip),
        )
    }

    /// All keys, frame after frame.
    #[must_use]
    pub fn keys(&self) -> &[SoaTransform] {
        &self.keys
    }
}

fn clip_keys(clip: &RawClip<'_>) -> Vec<SoaTransform> {
    (0..clip.frame_count())
        .flat_map(|f| clip.frame(f).unwrap_or(&[]).iter().copied())
        .collect()
}

/// `Ok` when `clip` poses have the skeleton's block count.
///
/// # Errors
/// [`Error::BadLength`] naming the clip's pose size.
pub fn check_clip<C: ClipSource>(skeleton: &Skeleton<'_>, clip: &C) -> Result<(), Error> {
    if clip.soa_count() == skeleton.soa_count() {
        Ok(())
    } else {
        Err(Error::BadLength {
            buffer: "clip pose",
            expected: skeleton.soa_count(),
            actual: clip.soa_count(),
        })
    }
}

/// The procedural humanoid with its walk, jog and run clips.
#[derive(Clone)]
pub struct Humanoid {
    /// The skeleton.
    pub skeleton: OwnedSkeleton,
    /// Walk, jog and run, in that order.
    pub clips: [OwnedClip; 3],
}

impl Humanoid {
    /// Builds the humanoid and its clips at `sample_rate` frames per second.
    ///
    /// # Errors
    /// [`Error::InvalidSampleRate`] for a non-positive or non-finite rate.
    pub fn new(sample_rate: f32) -> Result<Self, Error> {
        Humanoid::from_joints(&procedural::humanoid_joints(), sample_rate)
    }

    /// The humanoid with a tail ([`procedural::humanoid_with_tail_joints`]),
    /// which its clips hold at rest: the subject of the spring-bone demos
    /// and tests.
    ///
    /// # Errors
    /// [`Error::InvalidSampleRate`] for a non-positive or non-finite rate.
    pub fn with_tail(sample_rate: f32) -> Result<Self, Error> {
        Humanoid::from_joints(&procedural::humanoid_with_tail_joints(), sample_rate)
    }

    fn from_joints(joints: &[sinew_core::JointDef<'_>], sample_rate: f32) -> Result<Self, Error> {
        let skeleton = OwnedSkeleton::build(joints)?;
        let view = skeleton.view();
        let clip = |g: Gait| -> Result<OwnedClip, Error> {
            let frames = procedural::gait_frame_count(g, sample_rate);
            let mut keys = vec![SoaTransform::IDENTITY; frames * view.soa_count()];
            procedural::write_gait_clip(g, &view, sample_rate, &mut keys)?;
            OwnedClip::new(g.name(), sample_rate, view.soa_count(), keys)
        };
        let clips = [clip(Gait::Walk)?, clip(Gait::Jog)?, clip(Gait::Run)?];
        Ok(Humanoid { skeleton, clips })
    }

    /// The walk, jog and run compressed with [`CompressOptions::default`]
    /// (0.01 cm within a 3 cm shell): the clips the `sinew` tool's crowd,
    /// the firmware and the benches' headline frame play.
    ///
    /// # Errors
    /// The compressor's errors (none for the procedural clips).
    pub fn compressed_clips(&self) -> Result<[OwnedCompressedClip; 3], Error> {
        let skeleton = self.skeleton.view();
        let opts = CompressOptions::default();
        let [walk, jog, run] = &self.clips;
        Ok([
            compress(&skeleton, &walk.view(), &opts)?.0,
            compress(&skeleton, &jog.view(), &opts)?.0,
            compress(&skeleton, &run.view(), &opts)?.0,
        ])
    }

    /// The humanoid at the default 30 Hz.
    ///
    /// # Panics
    /// Never: the default rate is valid.
    #[must_use]
    pub fn default_rate() -> Self {
        match Humanoid::new(procedural::DEFAULT_SAMPLE_RATE) {
            Ok(h) => h,
            Err(e) => unreachable!("the default humanoid always builds: {e}"),
        }
    }
}
