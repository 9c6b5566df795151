//! Playing clips: the playhead (time, speed, loop mode, pause) and the path
//! it takes each frame, for sampling, event triggering and root motion.
//!
//! - [`playhead`]: one clip's time advanced frame by frame in loop, clamp or
//!   ping-pong mode, and the [`Advance`] it took (wraps, bounces, direction),
//!   which triggers an event track and yields the root motion along it.

pub mod playhead;

pub use playhead::{Advance, PlayMode, Playhead};
