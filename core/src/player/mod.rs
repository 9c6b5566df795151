//! Playing clips: the playhead (time, speed, loop mode, pause) and the path
//! it takes each frame, for sampling, event triggering and root motion.
//!
//! - [`playhead`]: one clip's time advanced frame by frame in loop, clamp or
//!   ping-pong mode, and the [`Advance`] it took (wraps, bounces, direction),
//!   which triggers an event track and yields the root motion along it.
//! - [`fade`]: the sources playing and their weights through cross-fades
//!   (interruptible without a pop) and inertialized switches.

pub mod fade;
pub mod play;
pub mod playhead;
pub mod state;

pub use fade::{Blend, FadeCurve, Fader, Transition};
pub use play::{BufferSizes, FrameReport, Player, PlayerBuffers, PlayerClips, PlayerEdge, Source};
pub use playhead::{Advance, PlayMode, Playhead};
