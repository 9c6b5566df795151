//! Jacobian methods for chains whose joints turn about one or more axes.
//!
//! Each chain joint has 0 to 3 rotation axes in its own frame
//! ([`JointAxes`]: a ball joint has three, a hinge one). The Jacobian `J`
//! maps small angles about those axes to the motion of the end effector:
//! three rows for its position (column `a × (effector - joint)` for a
//! model-space axis `a`) and, when an orientation goal is set, three more
//! for the last joint's rotation (column `a`, scaled by the orientation
//! weight). Each iteration linearises at the current pose and takes one
//! step `Δθ`:
//!
//! - [`Method::Transpose`]: `Δθ = α Jᵀ e` with the step that minimises the
//!   linearised error, `α = ⟨e, J Jᵀ e⟩ / ⟨J Jᵀ e, J Jᵀ e⟩`;
//! - [`Method::PseudoInverse`]: `Δθ = Jᵀ (J Jᵀ)⁺ e`, the Moore-Penrose
//!   pseudo-inverse through the eigen-decomposition of the (at most 6 × 6)
//!   matrix `J Jᵀ`, eigenvalues below 1e-6 of the largest treated as zero;
//! - [`Method::DampedLeastSquares`]: `Δθ = Jᵀ (J Jᵀ + λ² I)⁻¹ e` by
//!   Cholesky, with `λ` given or adapted to the error ([`Damping`]).
//!
//! Every step is bounded: its norm (the root of the sum of the squared
//! axis angles, radians) is scaled down to at most [`Settings::max_step`],
//! so a singular pose (a straight arm reaching past its length) gives a
//! bounded, finite step with every method. The joint limits are applied
//! after each step.

// Small dense matrices read best with explicit row and column indices.
#![allow(clippy::needless_range_loop)]

use super::solve::{exp, limit_of, log, ChainJob, ChainState, IkReport, MAX_CHAIN};
use super::IkPose;
use crate::math::{sqrt_f32, Quat, Vec3};
use crate::Error;

/// Most columns of the Jacobian: three axes per joint.
const MAX_COLS: usize = 3 * MAX_CHAIN;

/// The rotation axes of one chain joint (0 to 3), unit vectors in the
/// joint's own frame (the frame its local rotation maps to the parent's):
/// turning by `θ` about axis `a` makes the local rotation `r · rot(a, θ)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointAxes {
    axes: [Vec3; 3],
    count: u8,
}

impl Default for JointAxes {
    fn default() -> Self {
        JointAxes::BALL
    }
}

impl JointAxes {
    /// A ball joint: the joint frame's X, Y and Z axes.
    pub const BALL: JointAxes = JointAxes {
        axes: [Vec3::X, Vec3::Y, Vec3::Z],
        count: 3,
    };

    /// A joint the solver does not turn.
    pub const FIXED: JointAxes = JointAxes {
        axes: [Vec3::ZERO; 3],
        count: 0,
    };

    /// One axis (normalised here): a hinge.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a zero or non-finite axis.
    pub fn hinge(axis: Vec3) -> Result<JointAxes, Error> {
        JointAxes::new(&[axis])
    }

    /// Up to three axes (each normalised here; they need not be orthogonal,
    /// but parallel axes make `J` rank deficient).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for more than three axes or a zero or
    /// non-finite one.
    pub fn new(axes: &[Vec3]) -> Result<JointAxes, Error> {
        if axes.len() > 3 {
            return Err(Error::InvalidParameter {
                what: "IK joint axes: at most three per joint",
            });
        }
        let mut out = JointAxes::FIXED;
        for (slot, a) in out.axes.iter_mut().zip(axes) {
            *slot = a.try_normalize().ok_or(Error::InvalidParameter {
                what: "IK joint axes: an axis must be finite and non-zero",
            })?;
        }
        out.count = axes.len() as u8;
        Ok(out)
    }

    /// The axes (unit, joint frame).
    #[inline]
    #[must_use]
    pub fn axes(&self) -> &[Vec3] {
        &self.axes[..usize::from(self.count)]
    }
}

/// How a Jacobian step is computed from `J` and the error `e`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Method {
    /// `α Jᵀ e` with the optimal `α`: cheap, robust, slow near the goal.
    Transpose,
    /// `Jᵀ (J Jᵀ)⁺ e`: fast convergence, large steps near singular poses
    /// (bounded by [`Settings::max_step`]).
    PseudoInverse,
    /// `Jᵀ (J Jᵀ + λ² I)⁻¹ e`: the pseudo-inverse's speed away from
    /// singularities, bounded steps near them.
    DampedLeastSquares(Damping),
}

/// The damping `λ` of [`Method::DampedLeastSquares`], in model units (the
/// unit of `J`'s position rows).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Damping {
    /// A fixed `λ > 0`.
    Fixed(f32),
    /// `λ² = max(min², factor · |e| · tr(J Jᵀ) / L)`, `L` the chain's reach
    /// (the sum of its bone lengths and the offset): damping that grows with
    /// the error, as in Levenberg-Marquardt, and with the size of `J`. Far
    /// from the target, where the linearisation is poor, it keeps steps
    /// short; in particular a nearly straight chain reaching past its length
    /// (where `J` misses the first-order effect of the large error along the
    /// chain) is pulled towards the target with a gain of at most
    /// `1 / factor` (hinges; `1 / (2 factor)` with ball joints), and it
    /// settles instead of swinging from side to side while the gain is below
    /// 2. Near the target the damping fades to `min` and steps become those
    /// of the pseudo-inverse (`factor > 0`, `min >= 0`; 0.5 to 1 works well).
    Adaptive {
        /// The factor on `|e| · tr(J Jᵀ) / L`.
        factor: f32,
        /// The smallest `λ`.
        min: f32,
    },
}

/// The Jacobian solver's settings on top of the [`ChainJob`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings<'a> {
    /// How each step is computed.
    pub method: Method,
    /// One [`JointAxes`] per chain joint, or empty for ball joints
    /// throughout.
    pub axes: &'a [JointAxes],
    /// An optional goal for the last joint's model-space rotation (the
    /// rotation of its matrix); adds three rows to `J`.
    pub orientation: Option<Quat>,
    /// Model units per radian of orientation error (how much an orientation
    /// error weighs against a position error); `>= 0`, 1 by default.
    pub orientation_weight: f32,
    /// The largest step per iteration, radians (`> 0`); 0.5 by default.
    pub max_step: f32,
}

impl<'a> Settings<'a> {
    /// Settings for `method` with ball joints, no orientation goal and a
    /// largest step of 0.5 radians.
    #[inline]
    #[must_use]
    pub fn new(method: Method) -> Self {
        Settings {
            method,
            axes: &[],
            orientation: None,
            orientation_weight: 1.0,
            max_step: 0.5,
        }
    }

    /// The same settings with per-joint axes.
    #[inline]
    #[must_use]
    pub fn with_axes(self, axes: &'a [JointAxes]) -> Self {
        Settings { axes, ..self }
    }

    /// The same settings with an orientation goal for the last joint
    /// (model space) weighted `weight` model units per radian.
    #[inline]
    #[must_use]
    pub fn with_orientation(self, orientation: Quat, weight: f32) -> Self {
        Settings {
            orientation: Some(orientation),
            orientation_weight: weight,
            ..self
        }
    }

    fn validate(&self, n: usize) -> Result<(), Error> {
        if !self.axes.is_empty() && self.axes.len() != n {
            return Err(Error::BadLength {
                buffer: "joint axes",
                expected: n,
                actual: self.axes.len(),
            });
        }
        if !(self.max_step > 0.0 && self.max_step.is_finite()) {
            return Err(Error::InvalidParameter {
                what: "IK Jacobian: max_step must be finite and > 0",
            });
        }
        if !(self.orientation_weight >= 0.0 && self.orientation_weight.is_finite()) {
            return Err(Error::InvalidParameter {
                what: "IK Jacobian: orientation_weight must be finite and >= 0",
            });
        }
        if let Some(q) = self.orientation {
            if !q.is_finite() {
                return Err(Error::NonFinite {
                    what: "IK orientation target",
                });
            }
            if q.length() <= 1e-6 {
                return Err(Error::InvalidParameter {
                    what: "IK Jacobian: the orientation target must be a non-zero quaternion",
                });
            }
        }
        match self.method {
            Method::DampedLeastSquares(Damping::Fixed(l)) if !(l > 0.0 && l.is_finite()) => {
                Err(Error::InvalidParameter {
                    what: "IK Jacobian: a fixed damping must be finite and > 0",
                })
            }
            Method::DampedLeastSquares(Damping::Adaptive { factor, min })
                if !(factor > 0.0 && factor.is_finite() && min >= 0.0 && min.is_finite()) =>
            {
                Err(Error::InvalidParameter {
                    what: "IK Jacobian: adaptive damping needs a finite factor > 0 and min >= 0",
                })
            }
            _ => Ok(()),
        }
    }
}

/// Solves `job` on `pose` with a Jacobian method: iterations until the
/// error (the effector's distance to the target and, with an orientation
/// goal, the weighted rotation angle, combined as a 6-vector's length) is
/// within `job.tolerance` or `job.max_iterations` have run; writes the
/// chain's local rotations and updates the model matrices of the subtree
/// under the chain's first joint. Joints outside the chain are not written;
/// joints with limits end within them. `IkReport::reached` takes the
/// orientation error into account; `IkReport::distance` is the position
/// error.
///
/// # Errors
/// Nothing is written on error. As [`super::ccd::solve`], and:
/// [`Error::BadLength`] when `settings.axes` is neither empty nor one per
/// chain joint; [`Error::NonFinite`] for a non-finite orientation goal;
/// [`Error::InvalidParameter`] for a zero orientation goal, a `max_step`
/// that is not finite and positive, a negative or non-finite orientation
/// weight or damping parameter, or a fixed damping of zero.
pub fn solve(
    pose: &mut IkPose<'_, '_>,
    job: &ChainJob<'_>,
    settings: &Settings<'_>,
) -> Result<IkReport, Error> {
    settings.validate(job.chain.len())?;
    let mut s = ChainState::new(pose, job)?;
    let goal = settings.orientation.map(Quat::normalize);
    let weight = settings.orientation_weight;
    let mut iterations = 0;
    while iterations < job.max_iterations {
        let e = error(&s, job.target, goal, weight);
        let norm = length(&e);
        if norm <= job.tolerance {
            break;
        }
        let mut jac = Jacobian::new(&s, settings, goal.is_some());
        let mut step = [0.0f32; MAX_COLS];
        jac.step(&e, norm, s.reach(), settings.method, &mut step);
        let len = sqrt_f32(step[..jac.cols].iter().map(|v| v * v).sum::<f32>());
        if !len.is_finite() || len <= 1e-7 {
            // No first-order progress: a collinear dead end gets a bend,
            // anything else (a minimum, the straight chain pointing at an
            // unreachable target) is the answer.
            if s.unstall(job.target, job.limits) {
                iterations += 1;
                continue;
            }
            break;
        }
        let scale = if len > settings.max_step {
            settings.max_step / len
        } else {
            1.0
        };
        let mut rotvec = [Vec3::ZERO; MAX_CHAIN];
        for c in 0..jac.cols {
            let j = usize::from(jac.joint[c]);
            rotvec[j] = rotvec[j] + jac.local_axis[c] * (step[c] * scale);
        }
        for (i, w) in rotvec.iter().enumerate().take(s.n) {
            if *w != Vec3::ZERO {
                s.set_local(i, s.local[i] * exp(*w), limit_of(job.limits, i));
            }
        }
        s.fk_from(0);
        iterations += 1;
    }
    let mut report = s.commit(pose, job, iterations)?;
    report.reached = length(&error(&s, job.target, goal, weight)) <= job.tolerance;
    Ok(report)
}

/// The error 6-vector: target − effector, then the weighted rotation vector
/// from the last joint's rotation to the goal (zero without a goal).
fn error(s: &ChainState, target: Vec3, goal: Option<Quat>, weight: f32) -> [f32; 6] {
    let p = target - s.pos[s.n];
    let o = match goal {
        Some(g) => log((g * s.rot[s.n - 1].conjugate()).normalize()) * weight,
        None => Vec3::ZERO,
    };
    [p.x, p.y, p.z, o.x, o.y, o.z]
}

fn length(e: &[f32; 6]) -> f32 {
    sqrt_f32(e.iter().map(|v| v * v).sum())
}

/// `J` by columns, with the joint and joint-frame axis of each column.
struct Jacobian {
    rows: usize,
    cols: usize,
    col: [[f32; 6]; MAX_COLS],
    joint: [u8; MAX_COLS],
    local_axis: [Vec3; MAX_COLS],
}

impl Jacobian {
    fn new(s: &ChainState, settings: &Settings<'_>, orientation: bool) -> Jacobian {
        let mut jac = Jacobian {
            rows: if orientation { 6 } else { 3 },
            cols: 0,
            col: [[0.0; 6]; MAX_COLS],
            joint: [0; MAX_COLS],
            local_axis: [Vec3::ZERO; MAX_COLS],
        };
        let effector = s.pos[s.n];
        let w = settings.orientation_weight;
        for i in 0..s.n {
            let axes = settings.axes.get(i).copied().unwrap_or(JointAxes::BALL);
            let lever = effector - s.pos[i];
            for &a in axes.axes() {
                let m = s.rot[i].rotate(a);
                let v = m.cross(lever);
                let c = jac.cols;
                jac.col[c] = [v.x, v.y, v.z, m.x * w, m.y * w, m.z * w];
                jac.joint[c] = i as u8;
                jac.local_axis[c] = a;
                jac.cols += 1;
            }
        }
        jac
    }

    /// `J Jᵀ` (rows × rows, symmetric).
    fn jjt(&self) -> [[f32; 6]; 6] {
        let mut a = [[0.0f32; 6]; 6];
        for col in &self.col[..self.cols] {
            for r in 0..self.rows {
                for k in 0..=r {
                    a[r][k] += col[r] * col[k];
                }
            }
        }
        for r in 0..self.rows {
            for k in 0..r {
                a[k][r] = a[r][k];
            }
        }
        a
    }

    /// `Jᵀ y` into `out`.
    fn transpose_times(&self, y: &[f32; 6], out: &mut [f32; MAX_COLS]) {
        for (o, col) in out.iter_mut().zip(&self.col[..self.cols]) {
            *o = (0..self.rows).map(|r| col[r] * y[r]).sum();
        }
    }

    /// One step `Δθ` (unbounded) for error `e` of length `norm`.
    fn step(
        &mut self,
        e: &[f32; 6],
        norm: f32,
        reach: f32,
        method: Method,
        out: &mut [f32; MAX_COLS],
    ) {
        let m = self.rows;
        match method {
            Method::Transpose => {
                self.transpose_times(e, out);
                let mut u = [0.0f32; 6];
                for (col, g) in self.col[..self.cols].iter().zip(out.iter()) {
                    for r in 0..m {
                        u[r] += col[r] * g;
                    }
                }
                let uu: f32 = u[..m].iter().map(|v| v * v).sum();
                let eu: f32 = (0..m).map(|r| e[r] * u[r]).sum();
                let alpha = if uu > 0.0 { eu / uu } else { 0.0 };
                for g in out[..self.cols].iter_mut() {
                    *g *= alpha;
                }
            }
            Method::PseudoInverse => {
                let y = eigen_solve(self.jjt(), m, e, 0.0);
                self.transpose_times(&y, out);
            }
            Method::DampedLeastSquares(d) => {
                let mut a = self.jjt();
                let trace: f32 = (0..m).map(|r| a[r][r]).sum();
                let l2 = match d {
                    Damping::Fixed(l) => l * l,
                    Damping::Adaptive { factor, min } => {
                        (factor * norm * trace / reach).max(min * min)
                    }
                };
                for (r, row) in a.iter_mut().enumerate().take(m) {
                    row[r] += l2;
                }
                let y =
                    cholesky_solve(&a, m, e).unwrap_or_else(|| eigen_solve(self.jjt(), m, e, l2));
                self.transpose_times(&y, out);
            }
        }
    }
}

/// Solves the symmetric positive definite `a x = b` (`m × m`, `m <= 6`) by
/// Cholesky; `None` when a pivot is not clearly positive (the matrix is
/// singular to working precision).
fn cholesky_solve(a: &[[f32; 6]; 6], m: usize, b: &[f32; 6]) -> Option<[f32; 6]> {
    let mut l = [[0.0f32; 6]; 6];
    for j in 0..m {
        let mut d = a[j][j];
        for k in 0..j {
            d -= l[j][k] * l[j][k];
        }
        if d.is_nan() || d <= 1e-6 * a[j][j] || d <= 0.0 {
            return None;
        }
        l[j][j] = sqrt_f32(d);
        for i in j + 1..m {
            let mut s = a[i][j];
            for k in 0..j {
                s -= l[i][k] * l[j][k];
            }
            l[i][j] = s / l[j][j];
        }
    }
    let mut y = [0.0f32; 6];
    for i in 0..m {
        let mut s = b[i];
        for k in 0..i {
            s -= l[i][k] * y[k];
        }
        y[i] = s / l[i][i];
    }
    let mut x = [0.0f32; 6];
    for i in (0..m).rev() {
        let mut s = y[i];
        for k in i + 1..m {
            s -= l[k][i] * x[k];
        }
        x[i] = s / l[i][i];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

/// `(a + shift I)⁺ b` for symmetric positive semi-definite `a` (`m × m`,
/// `m <= 6`) through its eigen-decomposition (cyclic Jacobi), eigenvalues
/// below 1e-6 of the largest treated as zero.
fn eigen_solve(mut a: [[f32; 6]; 6], m: usize, b: &[f32; 6], shift: f32) -> [f32; 6] {
    let mut v = [[0.0f32; 6]; 6];
    for (i, row) in v.iter_mut().enumerate() {
        row[i] = 1.0;
    }
    jacobi(&mut a, &mut v, m);
    let largest = (0..m).map(|k| a[k][k] + shift).fold(0.0f32, f32::max);
    let floor = 1e-6 * largest;
    let mut y = [0.0f32; 6];
    for k in 0..m {
        let sigma = a[k][k] + shift;
        if sigma.is_nan() || sigma <= floor {
            continue;
        }
        let proj: f32 = (0..m).map(|r| v[r][k] * b[r]).sum::<f32>() / sigma;
        for r in 0..m {
            y[r] += proj * v[r][k];
        }
    }
    y
}

/// Diagonalises symmetric `a` in place by cyclic Jacobi rotations,
/// accumulating the eigenvectors as the columns of `v`.
fn jacobi(a: &mut [[f32; 6]; 6], v: &mut [[f32; 6]; 6], m: usize) {
    for _sweep in 0..12 {
        let mut off = 0.0f32;
        let mut diag = 0.0f32;
        for p in 0..m {
            diag += a[p][p] * a[p][p];
            for q in p + 1..m {
                off += a[p][q] * a[p][q];
            }
        }
        if off.is_nan() || off <= 1e-14 * diag {
            return;
        }
        for p in 0..m {
            for q in p + 1..m {
                let apq = a[p][q];
                if libm::fabsf(apq) <= 1e-12 * (libm::fabsf(a[p][p]) + libm::fabsf(a[q][q])) {
                    a[p][q] = 0.0;
                    a[q][p] = 0.0;
                    continue;
                }
                let theta = (a[q][q] - a[p][p]) / (2.0 * apq);
                let t = libm::copysignf(1.0, theta)
                    / (libm::fabsf(theta) + sqrt_f32(theta * theta + 1.0));
                let c = 1.0 / sqrt_f32(t * t + 1.0);
                let s = t * c;
                for row in a.iter_mut().take(m) {
                    let (kp, kq) = (row[p], row[q]);
                    row[p] = c * kp - s * kq;
                    row[q] = s * kp + c * kq;
                }
                for k in 0..m {
                    let (pk, qk) = (a[p][k], a[q][k]);
                    a[p][k] = c * pk - s * qk;
                    a[q][k] = s * pk + c * qk;
                }
                for row in v.iter_mut().take(m) {
                    let (kp, kq) = (row[p], row[q]);
                    row[p] = c * kp - s * kq;
                    row[q] = s * kp + c * kq;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eigen_solve_inverts_and_pseudo_inverts() {
        // A = [[4, 1, 0], [1, 3, 0], [0, 0, 0]]: the third direction is null.
        let mut a = [[0.0f32; 6]; 6];
        a[0][0] = 4.0;
        a[0][1] = 1.0;
        a[1][0] = 1.0;
        a[1][1] = 3.0;
        let b = [1.0, 2.0, 5.0, 0.0, 0.0, 0.0];
        let y = eigen_solve(a, 3, &b, 0.0);
        // [[4,1],[1,3]]⁻¹ (1, 2) = (1/11)(3 - 2, -1 + 8) = (1/11, 7/11).
        assert!((y[0] - 1.0 / 11.0).abs() < 1e-5, "{y:?}");
        assert!((y[1] - 7.0 / 11.0).abs() < 1e-5, "{y:?}");
        assert_eq!(y[2], 0.0);
        let mut d = a;
        for (r, row) in d.iter_mut().enumerate().take(3) {
            row[r] += 1.0;
        }
        let x = cholesky_solve(&d, 3, &b).unwrap();
        let z = eigen_solve(a, 3, &b, 1.0);
        for k in 0..3 {
            assert!((x[k] - z[k]).abs() < 1e-5, "{x:?} vs {z:?}");
        }
        assert!((x[2] - 5.0).abs() < 1e-6);
        assert!(cholesky_solve(&a, 3, &b).is_none());
    }

    #[test]
    fn jacobi_diagonalises_a_dense_matrix() {
        let mut a = [[0.0f32; 6]; 6];
        for r in 0..6 {
            for c in 0..6 {
                a[r][c] = 1.0 / (1.0 + r as f32 + c as f32) + if r == c { 1.0 } else { 0.0 };
            }
        }
        let orig = a;
        let mut v = [[0.0f32; 6]; 6];
        for (i, row) in v.iter_mut().enumerate() {
            row[i] = 1.0;
        }
        jacobi(&mut a, &mut v, 6);
        // V diag(a) Vᵀ reproduces the matrix.
        for r in 0..6 {
            for c in 0..6 {
                let s: f32 = (0..6).map(|k| v[r][k] * a[k][k] * v[c][k]).sum();
                assert!(
                    (s - orig[r][c]).abs() < 1e-5,
                    "{r} {c}: {s} vs {}",
                    orig[r][c]
                );
            }
        }
    }
}
