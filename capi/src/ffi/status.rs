//! Status codes, the version and the panic boundary every export runs in.

use core::ffi::c_char;

use sinew_core::Error;

/// The version of this header: major, minor and patch, and the three as
/// one number (`major << 16 | minor << 8 | patch`). A program built with
/// this header should check at start-up that `sinew_version_number()`
/// returns `SINEW_VERSION_NUMBER`: a library of another version may lay out
/// the structs differently.
pub const SINEW_VERSION_MAJOR: u32 = 0;
/// Minor version (see `SINEW_VERSION_MAJOR`).
pub const SINEW_VERSION_MINOR: u32 = 1;
/// Patch version (see `SINEW_VERSION_MAJOR`).
pub const SINEW_VERSION_PATCH: u32 = 0;
/// The version as one number (see `SINEW_VERSION_MAJOR`).
pub const SINEW_VERSION_NUMBER: u32 = 0x00_01_00;

/// A decimal version component (`env!("CARGO_PKG_VERSION_MAJOR")` and
/// the like) as a number, at compile time.
const fn version_part(s: &str) -> u32 {
    let b = s.as_bytes();
    let mut v = 0u32;
    let mut i = 0;
    while i < b.len() {
        v = v * 10 + (b[i] - b'0') as u32;
        i += 1;
    }
    v
}

// The header states the version as literals (cbindgen does not evaluate
// `const fn`); they must be the package's.
const _: () = {
    assert!(SINEW_VERSION_MAJOR == version_part(env!("CARGO_PKG_VERSION_MAJOR")));
    assert!(SINEW_VERSION_MINOR == version_part(env!("CARGO_PKG_VERSION_MINOR")));
    assert!(SINEW_VERSION_PATCH == version_part(env!("CARGO_PKG_VERSION_PATCH")));
    assert!(
        SINEW_VERSION_NUMBER
            == SINEW_VERSION_MAJOR << 16 | SINEW_VERSION_MINOR << 8 | SINEW_VERSION_PATCH
    );
};

/// Runs an export's body inside the panic boundary, in the manner of
/// rustls-ffi's `ffi_panic_boundary!`: every `sinew_*` function's body is
/// one invocation, so no export can forget it.
///
/// `boundary! { … }` runs a body that evaluates to
/// `Result<(), sinew_status>` (so `?` works on core and status errors) and
/// returns its status; `boundary!(or FALLBACK => { … })` runs a pure query
/// and returns FALLBACK if it panicked. With the `std` feature a panic is
/// caught and becomes `SINEW_STATUS_PANIC` (or the fallback); without it
/// (a `no_std` build, where panics abort) the body runs as it is.
macro_rules! boundary {
    (or $fallback:expr => $body:block) => {
        $crate::ffi::status::guard($fallback, || $body)
    };
    ($($body:tt)*) => {
        $crate::ffi::status::guard_status(
            || -> ::core::result::Result<(), $crate::ffi::status::sinew_status> { $($body)* },
        )
    };
}

/// Runs `f`, turning a panic into `fallback` when unwinding can be caught.
#[inline]
pub(crate) fn guard<R>(fallback: R, f: impl FnOnce() -> R) -> R {
    #[cfg(feature = "std")]
    {
        std::panic::catch_unwind(core::panic::AssertUnwindSafe(f)).unwrap_or(fallback)
    }
    #[cfg(not(feature = "std"))]
    {
        let _ = fallback;
        f()
    }
}

/// [`guard`] for a body that reports a status.
#[inline]
pub(crate) fn guard_status(f: impl FnOnce() -> Result<(), sinew_status>) -> sinew_status {
    guard(sinew_status::Panic, || match f() {
        Ok(()) => sinew_status::Ok,
        Err(s) => s,
    })
}

/// Result of every fallible C function.
///
/// `SINEW_STATUS_OK` is 0; failures use their own range (7101–7199) so they
/// cannot be mistaken for another library's codes.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum sinew_status {
    /// Success.
    Ok = 0,
    /// A required pointer was NULL (with a non-zero length, or an out-parameter).
    NullParameter = 7101,
    /// An output buffer is too small; query the size first.
    BufferTooSmall = 7102,
    /// A buffer's length does not match what the call needs (e.g. a pose
    /// that is not `soa_count` blocks).
    BadLength = 7103,
    /// A pointer is not aligned for its type (16 bytes for poses, matrices
    /// and containers).
    Misaligned = 7104,
    /// Bytes are not a valid container: bad magic, truncated, corrupt,
    /// non-finite values, invalid names or parents.
    InvalidData = 7105,
    /// A container has a version this build cannot read.
    UnsupportedVersion = 7106,
    /// An argument is out of its domain: a NaN time, a negative weight, an
    /// unknown enumeration value, a bad sample rate.
    InvalidArgument = 7107,
    /// A joint index or range lies outside the skeleton.
    OutOfRange = 7108,
    /// A mesh's influences are invalid: a joint index past the palette, a
    /// negative or NaN weight, weights not summing to 1.
    InvalidInfluence = 7109,
    /// A transform cannot be inverted.
    SingularTransform = 7110,
    /// The platform is not supported (big-endian).
    UnsupportedPlatform = 7111,
    /// More layers than `SINEW_MAX_BLEND_LAYERS`.
    TooManyLayers = 7112,
    /// An output buffer overlaps an input buffer.
    OverlappingBuffers = 7113,
    /// A lookup (e.g. a joint name) found nothing, or a motion-matching
    /// search found no frame below its bound (nothing is written).
    NotFound = 7114,
    /// A handle was not filled by its `_load` function (or was changed since).
    InvalidHandle = 7115,
    /// A fixed-capacity table or queue is full (also: more joints or legs
    /// than an IK call's fixed maximum).
    CapacityExceeded = 7116,
    /// Joints are not linked as an IK call needs: a two-bone mid joint that
    /// is not the child of the start joint (or an end joint not the child
    /// of the mid joint), a look-at joint that is not an ancestor of the
    /// next, a pelvis that is not an ancestor of every hip.
    NotAChain = 7117,
    /// A bone of an IK limb is shorter than `SINEW_IK_MIN_BONE_LENGTH`
    /// (two joints at the same place): the limb cannot be solved.
    ZeroLengthBone = 7118,
    /// A callback supplied by the caller (e.g. a `sinew_ground_fn`)
    /// returned an error; the call wrote nothing.
    CallbackFailed = 7119,
    /// sinew panicked inside the call (a bug: please report it). Outputs
    /// may be partly written.
    Panic = 7199,
}

impl From<Error> for sinew_status {
    fn from(e: Error) -> Self {
        match e {
            Error::BadLength { .. } | Error::InvalidLayout { .. } => sinew_status::BadLength,
            Error::BufferTooSmall { .. } => sinew_status::BufferTooSmall,
            Error::Misaligned => sinew_status::Misaligned,
            Error::InvalidWeight { .. }
            | Error::InvalidJointWeight { .. }
            | Error::InvalidThreshold
            | Error::InvalidSampleRate
            | Error::InvalidMixWeight { .. } => sinew_status::InvalidArgument,
            Error::NonFinite { what: "time" } => sinew_status::InvalidArgument,
            Error::NoJoints
            | Error::TooManyJoints { .. }
            | Error::InvalidParent { .. }
            | Error::NonFinite { .. }
            | Error::InvalidName { .. }
            | Error::BadMagic
            | Error::Truncated { .. }
            | Error::Corrupt { .. } => sinew_status::InvalidData,
            Error::UnsupportedVersion { .. } => sinew_status::UnsupportedVersion,
            Error::JointOutOfRange { .. } => sinew_status::OutOfRange,
            Error::InfluenceOutOfRange { .. }
            | Error::InvalidVertexWeight { .. }
            | Error::VertexWeightSum { .. } => sinew_status::InvalidInfluence,
            Error::SingularTransform { .. } => sinew_status::SingularTransform,
            Error::UnsupportedPlatform => sinew_status::UnsupportedPlatform,
            Error::UnknownClip { .. } => sinew_status::OutOfRange,
            Error::UnknownJoint { .. } => sinew_status::NotFound,
            Error::CapacityExceeded { .. } => sinew_status::CapacityExceeded,
            Error::UnitTooLong { .. }
            | Error::SampleRateMismatch { .. }
            | Error::EmptyBlendSpace
            | Error::DuplicateSample { .. }
            | Error::DegenerateBlendSpace
            | Error::InvalidParameter { .. }
            | Error::InvalidShape { .. }
            | Error::InvalidDriver { .. } => sinew_status::InvalidArgument,
            // `Error` is non-exhaustive: a variant added to the core later is
            // an argument the caller can change until it gets its own code.
            _ => sinew_status::InvalidArgument,
        }
    }
}

impl sinew_status {
    /// The status of a container that failed to load: its bytes are the
    /// data, so every complaint about them (a bad sample rate, zero frames,
    /// a length that does not add up) is INVALID_DATA, whatever argument
    /// class the core gives the same error when a caller passes it; only
    /// alignment, version and platform keep their own codes.
    pub(crate) fn of_container(e: Error) -> sinew_status {
        match e {
            Error::Misaligned => sinew_status::Misaligned,
            Error::UnsupportedVersion { .. } => sinew_status::UnsupportedVersion,
            Error::UnsupportedPlatform => sinew_status::UnsupportedPlatform,
            _ => sinew_status::InvalidData,
        }
    }

    /// Every status, in code order.
    pub const ALL: [sinew_status; 21] = [
        sinew_status::Ok,
        sinew_status::NullParameter,
        sinew_status::BufferTooSmall,
        sinew_status::BadLength,
        sinew_status::Misaligned,
        sinew_status::InvalidData,
        sinew_status::UnsupportedVersion,
        sinew_status::InvalidArgument,
        sinew_status::OutOfRange,
        sinew_status::InvalidInfluence,
        sinew_status::SingularTransform,
        sinew_status::UnsupportedPlatform,
        sinew_status::TooManyLayers,
        sinew_status::OverlappingBuffers,
        sinew_status::NotFound,
        sinew_status::InvalidHandle,
        sinew_status::CapacityExceeded,
        sinew_status::NotAChain,
        sinew_status::ZeroLengthBone,
        sinew_status::CallbackFailed,
        sinew_status::Panic,
    ];

    /// A NUL-terminated English description.
    #[must_use]
    pub fn message(self) -> &'static str {
        match self {
            sinew_status::Ok => "ok\0",
            sinew_status::NullParameter => "a required pointer is NULL\0",
            sinew_status::BufferTooSmall => "an output buffer is too small\0",
            sinew_status::BadLength => "a buffer does not have the length the call needs\0",
            sinew_status::Misaligned => "a pointer is not aligned for its type (16 bytes for poses, matrices and containers)\0",
            sinew_status::InvalidData => "the bytes are not a valid sinew container\0",
            sinew_status::UnsupportedVersion => "the container's format version is not supported\0",
            sinew_status::InvalidArgument => "an argument is out of its domain (NaN, negative weight, unknown enum value)\0",
            sinew_status::OutOfRange => "a joint index or range lies outside the skeleton\0",
            sinew_status::InvalidInfluence => "a vertex's joint index or weights are invalid\0",
            sinew_status::SingularTransform => "a transform cannot be inverted\0",
            sinew_status::UnsupportedPlatform => "the platform is not supported (big-endian)\0",
            sinew_status::TooManyLayers => "more blend layers than SINEW_MAX_BLEND_LAYERS\0",
            sinew_status::OverlappingBuffers => "an output buffer overlaps an input buffer\0",
            sinew_status::NotFound => "not found\0",
            sinew_status::InvalidHandle => "the handle was not filled by its _load function\0",
            sinew_status::CapacityExceeded => "a fixed-capacity table or queue is full\0",
            sinew_status::NotAChain => "the joints are not linked as the call needs (each the parent, or an ancestor, of the next)\0",
            sinew_status::ZeroLengthBone => "a bone of the limb has (almost) zero length\0",
            sinew_status::CallbackFailed => "a callback supplied by the caller returned an error\0",
            sinew_status::Panic => "sinew panicked (a bug; please report it)\0",
        }
    }
}

/// Returns the library version as a static NUL-terminated string (e.g. "0.1.0").
#[no_mangle]
pub extern "C" fn sinew_version() -> *const c_char {
    boundary!(or c"?".as_ptr() => {
        concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
    })
}

/// Returns the library version as one number, `major << 16 | minor << 8 |
/// patch`: compare it with `SINEW_VERSION_NUMBER` at start-up to catch a
/// program running with a library other than the one its header came
/// with.
#[no_mangle]
pub extern "C" fn sinew_version_number() -> u32 {
    boundary!(or 0 => {
        SINEW_VERSION_NUMBER
    })
}

/// Returns a static NUL-terminated English description of `status`
/// ("unknown status" for a code that is not a `sinew_status`).
#[no_mangle]
pub extern "C" fn sinew_status_string(status: u32) -> *const c_char {
    boundary!(or c"?".as_ptr() => {
        sinew_status::ALL
            .iter()
            .find(|s| **s as u32 == status)
            .map_or("unknown status\0", |s| s.message())
            .as_ptr()
            .cast()
    })
}
