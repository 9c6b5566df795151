//! The one error type of the core.

use core::fmt;

/// Everything that can go wrong in `sinew-core`.
///
/// Every fallible function in the core returns `Result<_, Error>`; nothing in
/// the core panics on caller data. Variants carry the numbers needed to say
/// exactly what was wrong (which buffer, which joint, which layer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A slice handed to a kernel does not have the length the job needs.
    BadLength {
        /// Which argument: `"output"`, `"layer pose"`, `"joint weights"`, ...
        buffer: &'static str,
        /// The length the job needs, in elements of that slice.
        expected: usize,
        /// The length that was passed.
        actual: usize,
    },
    /// An output buffer is too small; `needed` bytes or elements are required.
    BufferTooSmall {
        /// Size required.
        needed: usize,
        /// Size given.
        actual: usize,
    },
    /// A buffer that is viewed in place is not aligned to 16 bytes.
    Misaligned,
    /// A layer weight is negative, NaN or infinite, or the layers' weights
    /// sum past the largest finite `f32` at this layer.
    InvalidWeight {
        /// Index of the offending layer (additive layers count after normal ones).
        layer: usize,
    },
    /// A per-joint weight is negative, NaN or infinite.
    InvalidJointWeight {
        /// Joint index of the offending weight.
        joint: usize,
    },
    /// The blend threshold is not a finite number greater than zero.
    InvalidThreshold,
    /// A skeleton has no joints.
    NoJoints,
    /// A skeleton has more than [`crate::MAX_JOINTS`] joints.
    TooManyJoints {
        /// Joint count requested.
        count: usize,
    },
    /// A parent index is out of range, names the joint itself, forms a cycle,
    /// or (in serialized data) does not come before its child in depth-first order.
    InvalidParent {
        /// The joint whose parent is wrong.
        joint: usize,
    },
    /// A joint index or joint range lies outside the skeleton.
    JointOutOfRange {
        /// First joint index that is out of range.
        joint: usize,
        /// Number of joints in the skeleton.
        count: usize,
    },
    /// A value that must be finite is NaN or infinite.
    NonFinite {
        /// What the value was: `"rest translation"`, `"time"`, ...
        what: &'static str,
    },
    /// A rest transform cannot be inverted (zero scale), so no inverse bind matrix exists.
    SingularTransform {
        /// The joint with the singular transform.
        joint: usize,
    },
    /// A joint name is not valid UTF-8 or the names do not fit the format.
    InvalidName {
        /// The joint whose name is wrong.
        joint: usize,
    },
    /// Serialized data does not start with the expected magic bytes.
    BadMagic,
    /// Serialized data has a format version this build cannot read.
    UnsupportedVersion {
        /// Version found in the data.
        found: u32,
    },
    /// Serialized data ends before the header says it should.
    Truncated {
        /// Bytes the header requires.
        needed: usize,
        /// Bytes available.
        actual: usize,
    },
    /// Serialized data is internally inconsistent.
    Corrupt {
        /// What was inconsistent.
        what: &'static str,
    },
    /// A sample rate is not finite and positive, or a clip has no frames.
    InvalidSampleRate,
    /// The target is big-endian; serialized data is little-endian and viewed in place.
    UnsupportedPlatform,
    /// A vertex names a joint outside the skinning palette.
    InfluenceOutOfRange {
        /// The offending vertex.
        vertex: usize,
        /// The joint index it names.
        joint: usize,
        /// Number of joints (palette entries) the influences were checked against.
        count: usize,
    },
    /// A vertex has a negative, NaN or infinite skinning weight.
    InvalidVertexWeight {
        /// The offending vertex.
        vertex: usize,
    },
    /// A vertex's skinning weights do not sum to 1 within
    /// [`crate::skin::WEIGHT_SUM_TOLERANCE`] (or cannot be renormalised).
    VertexWeightSum {
        /// The offending vertex.
        vertex: usize,
    },
    /// A vertex's LBS/DQS mix weight is NaN or outside `0..=1`.
    InvalidMixWeight {
        /// The offending vertex.
        vertex: usize,
    },
    /// An interleaved vertex layout is inconsistent (an attribute does not
    /// fit in the stride, or two output attributes overlap).
    InvalidLayout {
        /// What is wrong with the layout.
        what: &'static str,
    },
    /// A motion unit or blend-space sample names a clip outside the clip table.
    UnknownClip {
        /// The clip index that was named.
        clip: usize,
        /// Number of clips in the table.
        count: usize,
    },
    /// A mask entry names a joint the skeleton does not have.
    UnknownJoint {
        /// Index of the offending entry in the list that was passed.
        entry: usize,
    },
    /// A motion unit plays past the end of its clip.
    UnitTooLong {
        /// Last frame the unit would play (exclusive), `start + length`.
        frames: usize,
        /// Frames in the clip.
        clip_frames: usize,
    },
    /// A motion unit's clip has another sample rate than the clips already
    /// in the mixer (units play one clip frame per mixer frame, so mixed
    /// rates would play at different speeds).
    SampleRateMismatch {
        /// The clip the unit names.
        clip: usize,
        /// A clip already in the mixer, at the mixer's rate.
        playing: usize,
    },
    /// A fixed-capacity queue or table is full.
    CapacityExceeded {
        /// Its capacity.
        capacity: usize,
    },
    /// A blend space has no samples.
    EmptyBlendSpace,
    /// Two blend-space samples sit at the same position.
    DuplicateSample {
        /// The first of the two samples.
        first: usize,
        /// The second.
        second: usize,
    },
    /// 2D blend-space samples are all collinear, or a triangle has no area.
    DegenerateBlendSpace,
    /// A parameter is outside its documented range (ramp longer than the
    /// unit, duration not positive, factor outside 0..=1, ...).
    InvalidParameter {
        /// Which parameter and what it must be.
        what: &'static str,
    },
    /// A blend shape (morph target) does not fit its mesh or holds bad
    /// data: a vertex count that differs from the mesh's, a vertex index
    /// out of range, a non-finite delta or weight.
    InvalidShape {
        /// Index of the shape (target) in the set it was given in.
        shape: u32,
        /// What is wrong with it.
        what: &'static str,
    },
    /// A shape driver (a corrective's joint angle, a combination's inputs,
    /// a pose-space RBF) is invalid: a joint out of range, an empty or
    /// reversed angle range, a singular RBF system.
    InvalidDriver {
        /// Index of the driver in the set it was given in.
        driver: u32,
        /// What is wrong with it.
        what: &'static str,
    },
    /// A steering agent or obstacle holds bad data: a non-finite
    /// position, velocity, goal or heading, a negative radius, speed or
    /// force.
    InvalidAgent {
        /// Index of the agent (or obstacle) in the slice it was given in.
        agent: u32,
        /// What is wrong with it.
        what: &'static str,
    },
    /// A skeleton is not the one a container (a retarget map) was built
    /// for: its joint count, parents or names differ.
    SkeletonMismatch {
        /// Which skeleton: `"source"` or `"target"`.
        which: &'static str,
    },
    /// A retarget correspondence maps a target joint to a source joint that
    /// does not lie below the source joint of its nearest mapped target
    /// ancestor, so no rotation path exists between them.
    RetargetConflict {
        /// The target joint whose mapping conflicts.
        joint: usize,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Error::BadLength {
                buffer,
                expected,
                actual,
            } => write!(f, "{buffer} has length {actual}, expected {expected}"),
            Error::BufferTooSmall { needed, actual } => {
                write!(f, "buffer too small: {actual} given, {needed} needed")
            }
            Error::Misaligned => f.write_str("buffer is not 16-byte aligned"),
            Error::InvalidWeight { layer } => {
                write!(
                    f,
                    "layer {layer} has a negative or non-finite weight, or the weights overflow there"
                )
            }
            Error::InvalidJointWeight { joint } => {
                write!(f, "joint {joint} has a negative or non-finite weight")
            }
            Error::InvalidThreshold => f.write_str("blend threshold must be finite and > 0"),
            Error::NoJoints => f.write_str("skeleton has no joints"),
            Error::TooManyJoints { count } => write!(
                f,
                "{count} joints exceed the maximum of {}",
                crate::MAX_JOINTS
            ),
            Error::InvalidParent { joint } => write!(f, "joint {joint} has an invalid parent"),
            Error::JointOutOfRange { joint, count } => {
                write!(f, "joint {joint} is out of range (skeleton has {count})")
            }
            Error::NonFinite { what } => write!(f, "{what} is NaN or infinite"),
            Error::SingularTransform { joint } => {
                write!(f, "rest transform of joint {joint} is not invertible")
            }
            Error::InvalidName { joint } => write!(f, "name of joint {joint} is invalid"),
            Error::BadMagic => f.write_str("not sinew data (bad magic)"),
            Error::UnsupportedVersion { found } => {
                write!(f, "unsupported format version {found}")
            }
            Error::Truncated { needed, actual } => {
                write!(f, "data truncated: {actual} bytes, {needed} needed")
            }
            Error::Corrupt { what } => write!(f, "corrupt data: {what}"),
            Error::InvalidSampleRate => {
                f.write_str("sample rate must be finite and > 0 and a clip needs a frame")
            }
            Error::UnsupportedPlatform => {
                f.write_str("serialized data needs a little-endian target")
            }
            Error::InfluenceOutOfRange {
                vertex,
                joint,
                count,
            } => write!(
                f,
                "vertex {vertex} is influenced by joint {joint}, but the palette has {count} joints"
            ),
            Error::InvalidVertexWeight { vertex } => {
                write!(f, "vertex {vertex} has a negative or non-finite weight")
            }
            Error::VertexWeightSum { vertex } => {
                write!(f, "weights of vertex {vertex} do not sum to 1")
            }
            Error::InvalidMixWeight { vertex } => {
                write!(f, "mix weight of vertex {vertex} is not in 0..=1")
            }
            Error::InvalidLayout { what } => write!(f, "invalid vertex layout: {what}"),
            Error::UnknownClip { clip, count } => {
                write!(f, "clip {clip} does not exist (the table has {count})")
            }
            Error::UnknownJoint { entry } => {
                write!(f, "entry {entry} names a joint the skeleton does not have")
            }
            Error::UnitTooLong {
                frames,
                clip_frames,
            } => write!(
                f,
                "motion unit needs {frames} frames but its clip has {clip_frames}"
            ),
            Error::SampleRateMismatch { clip, playing } => write!(
                f,
                "clip {clip} has another sample rate than clip {playing} in the mixer: resample it"
            ),
            Error::CapacityExceeded { capacity } => {
                write!(f, "capacity of {capacity} exceeded")
            }
            Error::EmptyBlendSpace => f.write_str("blend space has no samples"),
            Error::DuplicateSample { first, second } => {
                write!(
                    f,
                    "blend-space samples {first} and {second} are at the same position"
                )
            }
            Error::DegenerateBlendSpace => {
                f.write_str("blend-space samples are collinear or a triangle has no area")
            }
            Error::InvalidParameter { what } => write!(f, "invalid parameter: {what}"),
            Error::InvalidShape { shape, what } => write!(f, "shape {shape}: {what}"),
            Error::InvalidDriver { driver, what } => write!(f, "shape driver {driver}: {what}"),
            Error::InvalidAgent { agent, what } => write!(f, "steering agent {agent}: {what}"),
            Error::SkeletonMismatch { which } => {
                write!(f, "the {which} skeleton is not the one the map was built for")
            }
            Error::RetargetConflict { joint } => write!(
                f,
                "target joint {joint} maps to a source joint outside the source subtree of its mapped ancestor"
            ),
        }
    }
}

impl core::error::Error for Error {}
