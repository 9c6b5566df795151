//! # sinew-cli
//!
//! The `sinew` command-line tool's library part: the glam baseline that the
//! figures are compared with ([`baseline`]), the mixer and transition demos
//! ([`demo`]), the keyframe-curve charts ([`curves`]), the IK strip ([`ik`]),
//! the secondary-motion strip ([`secondary`]), the deformation strip
//! ([`shapes`]), the animation-graph run ([`graph`]), the vertex animation
//! bakes ([`bake`]), `sinew retarget` ([`retarget`]), the PNG drawing
//! ([`render`]) and the
//! words on every picture ([`chart`]). Benches and tests reuse them;
//! a program that only plays animation depends on `sinew-std` alone.
#![deny(missing_docs)]

pub mod bake;
pub mod baseline;
pub mod chart;
pub mod curves;
pub mod demo;
pub mod graph;
pub mod ik;
pub mod matching;
pub mod render;
pub mod retarget;
pub mod secondary;
pub mod shapes;
