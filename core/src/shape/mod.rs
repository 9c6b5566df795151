//! Deformation beyond skinning: what moves a mesh's vertices in bind space
//! before [`skin`](crate::skin) poses them, and what smooths them after.
//!
//! - [`blend`]: blend shapes (morph targets), `x = x0 + Σ w_k Δx_k` for
//!   positions, normals and tangents, dense or sparse targets.
//! - [`driver`]: the weights of combination shapes (the product of their
//!   drivers' weights) and of corrective shapes driven by a joint's
//!   rotation (a swing or twist angle mapped by a clamped ramp or a
//!   smoothstep).
//! - [`rbf`]: pose-space deformation, radial-basis-function interpolation
//!   over example rotations of a joint, and corrective deltas authored in
//!   posed space taken back to bind space.
//! - [`mush`]: delta mush, which smooths the skinned mesh and adds back each
//!   vertex's detail in the smoothed frame.
//!
//! Everything here is `no_std`, writes into caller-provided memory, has a
//! scalar twin for every lane path, and rejects bad input (a target whose
//! vertex count differs from the mesh, NaN weights, a singular RBF system)
//! with an [`Error`](crate::Error) naming the target or driver.

pub mod blend;
pub mod driver;
pub mod mush;
pub mod rbf;
