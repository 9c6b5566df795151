//! Secondary motion: what follows the body rather than drives it.
//!
//! - [`collider`]: spheres, capsules and planes attached to joints, which
//!   the simulations below push their particles out of.
//!
//! Every simulation here steps at a fixed time step (sub-stepped from the
//! frame's `dt`), is deterministic (the same inputs give the same bits on
//! every run and thread count), writes into caller-provided memory, and
//! rejects bad input (a zero time step, negative stiffness, NaN forces) with
//! an [`Error`](crate::Error) instead of producing NaN.

pub mod collider;
