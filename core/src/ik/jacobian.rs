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
//! - [`Method::PseudoInverse`]: `Δθ = J⁺ e`, the Moore-Penrose
//!   pseudo-inverse through the singular value decomposition of `J` (one-sided
//!   Jacobi), singular values below 1e-5 of the largest treated as zero;
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
use crate::fp::Fp;
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

    /// `Δθ = Jᵀ (J Jᵀ + shift I)⁺ e` into `out`, through the singular value
    /// decomposition of `J` itself by one-sided (Hestenes) Jacobi rotations
    /// of its rows. Working on `J` rather than on `J Jᵀ` keeps singular
    /// values down to about 1e-6 of the largest in `f32`: squaring them
    /// would lose everything below 1e-3, which is where a chain near full
    /// extension lives. Without a shift, singular values below 1e-5 of the
    /// largest count as zero.
    fn svd_solve(&self, e: &[f32; 6], shift: f32, out: &mut [f32; MAX_COLS]) {
        let (m, n) = (self.rows, self.cols);
        // w[r] starts as row r of J; v accumulates the rotations, so that
        // J = V Wᵀ with W's rows orthogonal at the end.
        let mut w = [[0.0f32; MAX_COLS]; 6];
        for (c, col) in self.col[..n].iter().enumerate() {
            for r in 0..m {
                w[r][c] = col[r];
            }
        }
        let mut v = [[0.0f32; 6]; 6];
        for (i, row) in v.iter_mut().enumerate() {
            row[i] = 1.0;
        }
        for _sweep in 0..30 {
            let mut rotated = false;
            for p in 0..m {
                for q in p + 1..m {
                    let (mut a, mut b, mut g) = (0.0f32, 0.0f32, 0.0f32);
                    for c in 0..n {
                        a += w[p][c] * w[p][c];
                        b += w[q][c] * w[q][c];
                        g += w[p][c] * w[q][c];
                    }
                    // Already orthogonal to working precision (or NaN,
                    // which no rotation would fix).
                    let orthogonal = libm::fabsf(g) <= 1e-7 * sqrt_f32(a * b);
                    if orthogonal || g.is_nan() {
                        continue;
                    }
                    rotated = true;
                    let zeta = (b - a) / (2.0 * g);
                    let t = libm::copysignf(1.0, zeta)
                        / (libm::fabsf(zeta) + sqrt_f32(zeta * zeta + 1.0));
                    let cs = 1.0 / sqrt_f32(t * t + 1.0);
                    let sn = t * cs;
                    for c in 0..n {
                        let (x, y) = (w[p][c], w[q][c]);
                        w[p][c] = cs * x - sn * y;
                        w[q][c] = sn * x + cs * y;
                    }
                    for row in v.iter_mut().take(m) {
                        let (x, y) = (row[p], row[q]);
                        row[p] = cs * x - sn * y;
                        row[q] = sn * x + cs * y;
                    }
                }
            }
            if !rotated {
                break;
            }
        }
        let mut sigma2 = [0.0f32; 6];
        for k in 0..m {
            sigma2[k] = w[k][..n].iter().map(|x| x * x).sum();
        }
        let largest = sigma2[..m].iter().copied().fold(0.0f32, f32::max);
        let floor = if shift > 0.0 { 0.0 } else { 1e-10 * largest };
        out[..n].fill(0.0);
        for k in 0..m {
            let d = sigma2[k] + shift;
            if d.is_nan() || d <= floor || d <= 0.0 {
                continue;
            }
            let proj: f32 = (0..m).map(|r| v[r][k] * e[r]).sum::<f32>() / d;
            for c in 0..n {
                out[c] += proj * w[k][c];
            }
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
                self.svd_solve(e, 0.0, out);
            }
            Method::DampedLeastSquares(d) => {
                let mut a = self.jjt();
                let trace: f32 = (0..m).map(|r| a[r][r]).sum();
                let l2 = match d {
                    Damping::Fixed(l) => l * l,
                    Damping::Adaptive { factor, min } => {
                        (factor * norm * trace / reach).max_num(min * min)
                    }
                };
                for (r, row) in a.iter_mut().enumerate().take(m) {
                    row[r] += l2;
                }
                match cholesky_solve(&a, m, e) {
                    Some(y) => self.transpose_times(&y, out),
                    None => self.svd_solve(e, l2, out),
                }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A Jacobian from explicit rows (`m` rows, `n` columns).
    fn jac(rows: &[&[f32]]) -> Jacobian {
        let mut j = Jacobian {
            rows: rows.len(),
            cols: rows[0].len(),
            col: [[0.0; 6]; MAX_COLS],
            joint: [0; MAX_COLS],
            local_axis: [Vec3::ZERO; MAX_COLS],
        };
        for (r, row) in rows.iter().enumerate() {
            for (c, v) in row.iter().enumerate() {
                j.col[c][r] = *v;
            }
        }
        j
    }

    fn times(j: &Jacobian, x: &[f32; MAX_COLS]) -> [f32; 6] {
        let mut y = [0.0f32; 6];
        for c in 0..j.cols {
            for r in 0..j.rows {
                y[r] += j.col[c][r] * x[c];
            }
        }
        y
    }

    #[test]
    fn svd_solve_inverts_full_rank_and_drops_null_directions() {
        // J = [[2, 0, 0], [0, 1, 1]]: J⁺ (4, 2) = (2, 1, 1), the least-norm
        // solution.
        let j = jac(&[&[2.0, 0.0, 0.0], &[0.0, 1.0, 1.0]]);
        let mut x = [0.0f32; MAX_COLS];
        j.svd_solve(&[4.0, 2.0, 0.0, 0.0, 0.0, 0.0], 0.0, &mut x);
        for (got, want) in x.iter().zip([2.0, 1.0, 1.0]) {
            assert!((got - want).abs() < 1e-6, "{x:?}");
        }
        // A rank-1 J: the error's part outside J's range is dropped.
        let j = jac(&[&[1.0, 2.0], &[2.0, 4.0], &[0.0, 0.0]]);
        j.svd_solve(&[1.0, 2.0, 7.0, 0.0, 0.0, 0.0], 0.0, &mut x);
        let y = times(&j, &x);
        for (got, want) in y.iter().zip([1.0, 2.0, 0.0]) {
            assert!((got - want).abs() < 1e-5, "{y:?}");
        }
        // With a shift: (JᵀJ + λ²I) x = Jᵀ e, checked against the normal
        // equations.
        let j = jac(&[&[1.0, 0.5, -0.25], &[0.0, 1.0, 2.0], &[3.0, 0.0, 1.0]]);
        let e = [0.5, -1.0, 2.0, 0.0, 0.0, 0.0];
        j.svd_solve(&e, 0.3, &mut x);
        let jx = times(&j, &x);
        for c in 0..3 {
            let jt_jx: f32 = (0..3).map(|r| j.col[c][r] * jx[r]).sum();
            let jt_e: f32 = (0..3).map(|r| j.col[c][r] * e[r]).sum();
            let lhs = jt_jx + 0.3 * x[c];
            assert!((lhs - jt_e).abs() < 1e-5, "{c}: {lhs} vs {jt_e}");
        }
    }

    /// A nearly singular J (one singular value 1e-3 of the largest): the
    /// pseudo-inverse still solves the small direction, which the
    /// eigenvalues of `J Jᵀ` (1e-6 of the largest) lose in `f32`.
    #[test]
    fn svd_solve_keeps_small_singular_values() {
        let j = jac(&[&[3.0, 3.0, 3.0], &[0.0, 1e-3, -1e-3], &[0.0, 2.0, -2.0]]);
        let e = [0.0, 1e-4, 0.0, 0.0, 0.0, 0.0];
        let mut x = [0.0f32; MAX_COLS];
        j.svd_solve(&e, 0.0, &mut x);
        let y = times(&j, &x);
        // Rows 2 and 3 are parallel: only their least-squares fit is
        // possible, e projected on (1e-3, 2)/|..|.
        let n2 = 1e-6f32 + 4.0;
        let want = [0.0, 1e-4 * 1e-3 * 1e-3 / n2, 1e-4 * 1e-3 * 2.0 / n2];
        for (got, want) in y.iter().zip(want) {
            assert!((got - want).abs() < 1e-9, "{y:?}");
        }
        let j = jac(&[&[3.0, 0.0, 0.0], &[0.0, 3e-3, 0.0], &[0.0, 0.0, 1.0]]);
        j.svd_solve(&[0.0, 1e-3, 0.0, 0.0, 0.0, 0.0], 0.0, &mut x);
        assert!((x[1] - 1.0 / 3.0).abs() < 1e-5, "{x:?}");
    }
}
