//! Curves, tracks and events: what a game animates besides joints.
//!
//! - [`curve`]: keyframe curves with non-uniform key times (step, linear,
//!   cubic Hermite as glTF's CUBICSPLINE, Catmull-Rom / cardinal) for
//!   floats, vectors and rotations, with O(log n) random access and an
//!   O(1) amortised cursor for playback.
//! - [`event`]: named events at times or over ranges, and triggering that
//!   reports every edge crossed between two times exactly once.
//! - [`store`]: many float, vector and rotation tracks, raw or quantized
//!   to 16 bits with a stated error bound, in one validated zero-copy
//!   container, sampled one by one or all at once in `f32x4` lanes.

pub mod curve;
pub mod event;
pub mod store;
