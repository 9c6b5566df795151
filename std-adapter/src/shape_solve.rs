//! Blend-shape weight solving: the weights in `[0, 1]` whose blend of a
//! mesh's targets best reproduces captured positions of some of its
//! vertices (a facial capture frame, a scan, a sculpt).
//!
//! For `V` solved vertices with neutral positions `x0_v`, captured
//! positions `y_v` and, for each of `K` shapes, deltas `Δ_kv`, the weights
//! minimise
//!
//! ```text
//! f(w) = Σ_v |Σ_k w_k Δ_kv − (y_v − x0_v)|² + α |w|² + β |w − w_prev|²
//! subject to 0 ≤ w_k ≤ 1,
//! ```
//!
//! a box-constrained (bounded) linear least-squares problem: `α` pulls the
//! weights towards zero (fewer, smaller shapes for the same fit), `β`
//! towards the previous frame's (temporal smoothness). Both are in the units
//! of the data term (squared bind-space length summed over the vertices),
//! so a scale such as `1e-3 × Σ_v |Δ_kv|²` of a typical shape is a gentle
//! start.
//!
//! Everything is computed in `f64`. [`solve_weights`] is the entry point;
//! [`ShapeBasis::from_mesh`] gathers an imported mesh's morph targets at the
//! vertices a capture tracks.

use std::fmt;

use crate::import::Mesh;

/// Weight tolerance [`SolveProblem::new`] uses: the solve stops when no
/// weight would move by more than this under one projected-gradient step.
pub const DEFAULT_TOLERANCE: f64 = 1e-10;

/// Iteration limit [`SolveProblem::new`] uses. A projected Newton iteration
/// changes the set of weights held at a bound, which rarely takes more than
/// a few iterations per shape.
pub const DEFAULT_MAX_ITERATIONS: usize = 200;

/// One weight solve: the captured frame, the shapes at the same vertices,
/// and the regularisation.
#[derive(Clone, Copy, Debug)]
pub struct SolveProblem<'a> {
    /// Neutral (rest) positions of the `V` solved vertices.
    pub neutral: &'a [[f32; 3]],
    /// Captured positions of the same vertices, in the same space and order.
    pub target: &'a [[f32; 3]],
    /// The shapes' deltas at those vertices, shape-major: shape `k`'s
    /// delta at vertex `v` is `deltas[k * V + v]` (`shape_count × V` entries).
    pub deltas: &'a [[f32; 3]],
    /// Number of shapes `K`.
    pub shape_count: usize,
    /// Weight of `|w|²` (towards zero); `0` for none. Finite, not negative.
    pub alpha: f64,
    /// Weight of `|w − previous|²` (towards the previous frame); `0` for
    /// none. Finite, not negative; needs [`SolveProblem::previous`] when
    /// positive.
    pub beta: f64,
    /// The previous frame's weights (`K` values): the target of `beta`, and
    /// the start of the iteration (clamped to `[0, 1]`) when given.
    pub previous: Option<&'a [f32]>,
    /// Convergence tolerance on the weights (see [`DEFAULT_TOLERANCE`]).
    /// Finite, positive.
    pub tolerance: f64,
    /// Most iterations before giving up (the report then says it did not converge).
    pub max_iterations: usize,
}

impl<'a> SolveProblem<'a> {
    /// A problem without regularisation, with the default tolerance and
    /// iteration limit.
    #[must_use]
    pub fn new(
        neutral: &'a [[f32; 3]],
        target: &'a [[f32; 3]],
        deltas: &'a [[f32; 3]],
        shape_count: usize,
    ) -> Self {
        SolveProblem {
            neutral,
            target,
            deltas,
            shape_count,
            alpha: 0.0,
            beta: 0.0,
            previous: None,
            tolerance: DEFAULT_TOLERANCE,
            max_iterations: DEFAULT_MAX_ITERATIONS,
        }
    }
}

/// What a solve found.
#[derive(Clone, Debug, PartialEq)]
pub struct SolveReport {
    /// The weights, one per shape, each in `[0, 1]`.
    pub weights: Vec<f32>,
    /// Per solved vertex, the distance between the blended position
    /// `x0 + Σ w_k Δ_k` and the captured one (bind-space length).
    pub residuals: Vec<f64>,
    /// Root mean square of [`SolveReport::residuals`].
    pub rms: f64,
    /// Largest of [`SolveReport::residuals`].
    pub max_residual: f64,
    /// The minimised objective `f(w)`, regularisation included.
    pub objective: f64,
    /// Projected Newton iterations taken (0 when the start already satisfied
    /// the optimality conditions).
    pub iterations: usize,
    /// Whether the optimality conditions held within the tolerance before
    /// the iteration limit.
    pub converged: bool,
}

/// Why a solve could not start.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum SolveError {
    /// No vertices or no shapes to solve with.
    Empty {
        /// `"vertices"` or `"shapes"`.
        what: &'static str,
    },
    /// A slice does not have the length the problem needs.
    Length {
        /// Which slice (`"target positions"`, `"deltas"`, `"previous weights"`).
        what: &'static str,
        /// Entries needed.
        expected: usize,
        /// Entries given.
        found: usize,
    },
    /// A neutral or target position, or a previous weight, is NaN or infinite.
    NonFinite {
        /// Which input (`"neutral position"`, `"target position"`, `"previous weight"`).
        what: &'static str,
        /// Its index (vertex or shape).
        index: usize,
    },
    /// A shape's delta at a vertex is NaN or infinite.
    ShapeNonFinite {
        /// The shape.
        shape: usize,
        /// The solved vertex (index into the problem's vertices).
        vertex: usize,
    },
    /// A mesh vertex asked for is past the mesh's vertices.
    VertexOutOfRange {
        /// The vertex index asked for.
        vertex: u32,
        /// Vertices of the mesh.
        count: usize,
    },
    /// A morph target's deltas do not cover the mesh's vertices.
    ShapeLength {
        /// The shape (morph target index).
        shape: usize,
        /// The mesh's vertex count.
        expected: usize,
        /// The target's position deltas.
        found: usize,
    },
    /// A parameter is out of its range.
    Parameter {
        /// What is wrong.
        what: &'static str,
    },
}

impl fmt::Display for SolveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SolveError::Empty { what } => write!(f, "weight solve: no {what}"),
            SolveError::Length {
                what,
                expected,
                found,
            } => write!(f, "weight solve: {found} {what}, {expected} needed"),
            SolveError::NonFinite { what, index } => {
                write!(f, "weight solve: {what} {index} is NaN or infinite")
            }
            SolveError::ShapeNonFinite { shape, vertex } => write!(
                f,
                "weight solve: shape {shape}: delta at vertex {vertex} is NaN or infinite"
            ),
            SolveError::VertexOutOfRange { vertex, count } => write!(
                f,
                "weight solve: vertex {vertex} is past the mesh's {count} vertices"
            ),
            SolveError::ShapeLength {
                shape,
                expected,
                found,
            } => write!(
                f,
                "weight solve: shape {shape} has {found} position deltas for {expected} vertices"
            ),
            SolveError::Parameter { what } => write!(f, "weight solve: {what}"),
        }
    }
}

impl std::error::Error for SolveError {}

/// A mesh's shapes gathered at the vertices a capture tracks: what
/// [`SolveProblem`] borrows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ShapeBasis {
    /// Neutral positions of the gathered vertices.
    pub neutral: Vec<[f32; 3]>,
    /// Shape-major deltas (`shape_count × neutral.len()`).
    pub deltas: Vec<[f32; 3]>,
    /// Number of shapes.
    pub shape_count: usize,
}

impl ShapeBasis {
    /// The positions and morph-target position deltas of `mesh` at
    /// `vertices` (mesh vertex indices, in the order the capture gives its
    /// points). A target without position deltas contributes zeros.
    ///
    /// # Errors
    /// [`SolveError::VertexOutOfRange`] for an index past the mesh,
    /// [`SolveError::ShapeLength`] for a target whose position deltas do not
    /// cover the mesh.
    pub fn from_mesh(mesh: &Mesh, vertices: &[u32]) -> Result<Self, SolveError> {
        let count = mesh.positions.len();
        let mut neutral = Vec::with_capacity(vertices.len());
        for &v in vertices {
            match mesh.positions.get(v as usize) {
                Some(p) => neutral.push(*p),
                None => return Err(SolveError::VertexOutOfRange { vertex: v, count }),
            }
        }
        let shape_count = mesh.morph_targets.len();
        let mut deltas = Vec::with_capacity(shape_count * vertices.len());
        for (k, t) in mesh.morph_targets.iter().enumerate() {
            if t.positions.is_empty() {
                deltas.extend(std::iter::repeat_n([0.0; 3], vertices.len()));
                continue;
            }
            if t.positions.len() != count {
                return Err(SolveError::ShapeLength {
                    shape: k,
                    expected: count,
                    found: t.positions.len(),
                });
            }
            deltas.extend(vertices.iter().map(|&v| t.positions[v as usize]));
        }
        Ok(ShapeBasis {
            neutral,
            deltas,
            shape_count,
        })
    }

    /// A problem solving `target` (one position per gathered vertex) with
    /// this basis, without regularisation.
    #[must_use]
    pub fn problem<'a>(&'a self, target: &'a [[f32; 3]]) -> SolveProblem<'a> {
        SolveProblem::new(&self.neutral, target, &self.deltas, self.shape_count)
    }
}

/// Solves a [`SolveProblem`] for the weights in `[0, 1]` that minimise its
/// objective, and reports the fit.
///
/// # Algorithm
/// The data term is reduced to its normal equations once, `H = AᵀA +
/// (α + β) I` (`K × K`) and `g = Aᵀ(y − x0) + β w_prev`, so the iteration
/// costs nothing per vertex, and the box-constrained quadratic
/// `min wᵀHw − 2gᵀw, 0 ≤ w ≤ 1` is solved by projected Newton (Bertsekas,
/// 1982): each iteration holds at their bound the weights at (or within ε
/// of) a bound whose gradient points outward, solves the Newton system of
/// the others exactly (Cholesky), and searches along the projection of that
/// step onto the box (Armijo backtracking). Once the bound set is the
/// solution's, the full step lands on the exact minimiser, so noise-free
/// data is reproduced to rounding, in a few iterations even for the strongly
/// correlated shapes of a face, where coordinate descent crawls along the
/// narrow valleys. A singular free block (dependent shapes, no
/// regularisation) gets the smallest ridge that factors; a step that still
/// does not decrease the objective falls back to one sweep of coordinate
/// descent with exact 1-D minimisation, which always does.
///
/// # Errors
/// [`SolveError::Empty`] without vertices or shapes;
/// [`SolveError::Length`] when `target` differs from `neutral` in length,
/// `deltas` is not `shape_count × V`, or `previous` is not `K` weights;
/// [`SolveError::NonFinite`] / [`SolveError::ShapeNonFinite`] for NaN or
/// infinite inputs; [`SolveError::Parameter`] for a negative or non-finite
/// `alpha`/`beta`, a tolerance that is not positive, or `beta > 0` without
/// `previous`.
pub fn solve_weights(problem: &SolveProblem<'_>) -> Result<SolveReport, SolveError> {
    validate(problem)?;
    let normal = Normal::new(problem);
    let k = problem.shape_count;
    let mut w: Vec<f64> = match problem.previous {
        Some(p) => p.iter().map(|&x| f64::from(x).clamp(0.0, 1.0)).collect(),
        None => vec![0.0; k],
    };
    let (iterations, converged) = projected_newton(&normal, &mut w, problem);
    Ok(report(problem, &w, iterations, converged))
}

fn validate(p: &SolveProblem<'_>) -> Result<(), SolveError> {
    let v = p.neutral.len();
    if v == 0 {
        return Err(SolveError::Empty { what: "vertices" });
    }
    if p.shape_count == 0 {
        return Err(SolveError::Empty { what: "shapes" });
    }
    if p.target.len() != v {
        return Err(SolveError::Length {
            what: "target positions",
            expected: v,
            found: p.target.len(),
        });
    }
    let need = p.shape_count.checked_mul(v).ok_or(SolveError::Parameter {
        what: "shape_count × vertices overflows",
    })?;
    if p.deltas.len() != need {
        return Err(SolveError::Length {
            what: "deltas",
            expected: need,
            found: p.deltas.len(),
        });
    }
    let finite = |a: &[f32; 3]| a.iter().all(|x| x.is_finite());
    if let Some(i) = p.neutral.iter().position(|a| !finite(a)) {
        return Err(SolveError::NonFinite {
            what: "neutral position",
            index: i,
        });
    }
    if let Some(i) = p.target.iter().position(|a| !finite(a)) {
        return Err(SolveError::NonFinite {
            what: "target position",
            index: i,
        });
    }
    if let Some(i) = p.deltas.iter().position(|a| !finite(a)) {
        return Err(SolveError::ShapeNonFinite {
            shape: i / v,
            vertex: i % v,
        });
    }
    if let Some(prev) = p.previous {
        if prev.len() != p.shape_count {
            return Err(SolveError::Length {
                what: "previous weights",
                expected: p.shape_count,
                found: prev.len(),
            });
        }
        if let Some(i) = prev.iter().position(|x| !x.is_finite()) {
            return Err(SolveError::NonFinite {
                what: "previous weight",
                index: i,
            });
        }
    }
    if !(p.alpha.is_finite() && p.alpha >= 0.0) {
        return Err(SolveError::Parameter {
            what: "alpha must be finite and not negative",
        });
    }
    if !(p.beta.is_finite() && p.beta >= 0.0) {
        return Err(SolveError::Parameter {
            what: "beta must be finite and not negative",
        });
    }
    if p.beta > 0.0 && p.previous.is_none() {
        return Err(SolveError::Parameter {
            what: "beta > 0 needs the previous weights",
        });
    }
    if !(p.tolerance.is_finite() && p.tolerance > 0.0) {
        return Err(SolveError::Parameter {
            what: "tolerance must be finite and positive",
        });
    }
    Ok(())
}

/// The normal equations of a problem: `f(w) = wᵀHw − 2gᵀw + const`.
struct Normal {
    k: usize,
    /// `K × K`, row-major, symmetric.
    h: Vec<f64>,
    g: Vec<f64>,
}

impl Normal {
    fn new(p: &SolveProblem<'_>) -> Self {
        let (k, v) = (p.shape_count, p.neutral.len());
        let d = |s: usize, i: usize| p.deltas[s * v + i].map(f64::from);
        let r: Vec<[f64; 3]> = p
            .neutral
            .iter()
            .zip(p.target)
            .map(|(a, b)| std::array::from_fn(|c| f64::from(b[c]) - f64::from(a[c])))
            .collect();
        let dot = |a: [f64; 3], b: [f64; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
        let mut h = vec![0.0; k * k];
        let mut g = vec![0.0; k];
        for a in 0..k {
            for b in a..k {
                let x: f64 = (0..v).map(|i| dot(d(a, i), d(b, i))).sum();
                h[a * k + b] = x;
                h[b * k + a] = x;
            }
            g[a] = (0..v).map(|i| dot(d(a, i), r[i])).sum();
        }
        let ridge = p.alpha + p.beta;
        for a in 0..k {
            h[a * k + a] += ridge;
            if let Some(prev) = p.previous {
                g[a] += p.beta * f64::from(prev[a]);
            }
        }
        Normal { k, h, g }
    }

    /// `q = Hw − g` (half the objective's gradient).
    fn gradient(&self, w: &[f64], q: &mut [f64]) {
        for (a, qa) in q.iter_mut().enumerate() {
            let row = &self.h[a * self.k..(a + 1) * self.k];
            *qa = row.iter().zip(w).map(|(h, w)| h * w).sum::<f64>() - self.g[a];
        }
    }

    /// `wᵀHw − 2gᵀw`: the objective up to a constant.
    fn value(&self, w: &[f64]) -> f64 {
        let mut f = 0.0;
        for a in 0..self.k {
            let row = &self.h[a * self.k..(a + 1) * self.k];
            let hw: f64 = row.iter().zip(w).map(|(h, w)| h * w).sum();
            f += w[a] * (hw - 2.0 * self.g[a]);
        }
        f
    }

    /// Largest diagonal entry (the scale of the ridges and tests).
    fn scale(&self) -> f64 {
        (0..self.k)
            .map(|a| self.h[a * self.k + a])
            .fold(0.0, f64::max)
    }
}

/// How far weight `a` would move under a projected diagonal-Newton step:
/// zero exactly at a point satisfying the bound-constrained optimality
/// (KKT) conditions, in weight units.
fn stationarity(n: &Normal, w: &[f64], q: &[f64]) -> f64 {
    let scale = n.scale().max(f64::MIN_POSITIVE);
    (0..n.k)
        .map(|a| {
            let d = n.h[a * n.k + a].max(1e-12 * scale);
            (w[a] - (w[a] - q[a] / d).clamp(0.0, 1.0)).abs()
        })
        .fold(0.0, f64::max)
}

/// Runs projected Newton from `w` (inside the box) until stationary within
/// the tolerance; returns the iterations taken and whether it converged.
fn projected_newton(n: &Normal, w: &mut [f64], p: &SolveProblem<'_>) -> (usize, bool) {
    let k = n.k;
    let mut q = vec![0.0; k];
    let mut step = vec![0.0; k];
    let mut trial = vec![0.0; k];
    let mut free: Vec<usize> = Vec::with_capacity(k);
    let mut m = Vec::with_capacity(k * k);
    let mut rhs = Vec::with_capacity(k);
    for it in 0..p.max_iterations {
        n.gradient(w, &mut q);
        let measure = stationarity(n, w, &q);
        if measure <= p.tolerance {
            return (it, true);
        }
        // ε-active set: weights this close to a bound, pushed outward by the
        // gradient, go to the bound this iteration (Bertsekas' ε keeps the
        // set from changing one weight per iteration near the solution).
        let eps = measure.min(1e-3);
        free.clear();
        for a in 0..k {
            step[a] = 0.0;
            if w[a] <= eps && q[a] > 0.0 {
                step[a] = -w[a];
            } else if w[a] >= 1.0 - eps && q[a] < 0.0 {
                step[a] = 1.0 - w[a];
            } else {
                free.push(a);
            }
        }
        // Newton on the free weights, given the bound ones' moves:
        // H_FF s_F = −(q_F + H_FB s_B).
        let f = free.len();
        m.clear();
        rhs.clear();
        for &a in &free {
            m.extend(free.iter().map(|&b| n.h[a * k + b]));
            let coupled: f64 = (0..k).map(|b| n.h[a * k + b] * step[b]).sum();
            rhs.push(-(q[a] + coupled));
        }
        if f > 0 && solve_spd(&mut m, &mut rhs, f, n.scale()) {
            for (i, &a) in free.iter().enumerate() {
                step[a] = rhs[i];
            }
        }
        // Projected backtracking: f(P(w + t s)) ≤ f(w) + 2σ qᵀ(P(w + t s) − w).
        let f0 = n.value(w);
        let mut t = 1.0;
        let mut accepted = false;
        for _ in 0..40 {
            for a in 0..k {
                trial[a] = (w[a] + t * step[a]).clamp(0.0, 1.0);
            }
            let descent: f64 = (0..k).map(|a| q[a] * (trial[a] - w[a])).sum();
            if descent < 0.0 && n.value(&trial) <= f0 + 2e-4 * descent {
                accepted = true;
                break;
            }
            t *= 0.5;
        }
        if accepted {
            w.copy_from_slice(&trial);
        } else {
            coordinate_sweep(n, w);
        }
    }
    n.gradient(w, &mut q);
    let converged = stationarity(n, w, &q) <= p.tolerance;
    (p.max_iterations, converged)
}

/// One sweep of coordinate descent, each weight set to the exact minimiser
/// of the objective along it, clamped to `[0, 1]`: never increases it.
fn coordinate_sweep(n: &Normal, w: &mut [f64]) {
    let k = n.k;
    for a in 0..k {
        let d = n.h[a * k + a];
        if d <= 0.0 {
            continue;
        }
        let row = &n.h[a * k..(a + 1) * k];
        let q: f64 = row.iter().zip(w.iter()).map(|(h, w)| h * w).sum::<f64>() - n.g[a];
        w[a] = (w[a] - q / d).clamp(0.0, 1.0);
    }
}

/// Solves `M x = b` in place (`b` becomes `x`) for the symmetric positive
/// semi-definite `f × f` matrix `m` (row-major) by Cholesky, adding the
/// smallest ridge (from `1e-12 × scale` up, by factors of 100) that makes it
/// factor. `false` when even `1e-2 × scale` does not, or `m` is not finite.
fn solve_spd(m: &mut [f64], b: &mut [f64], f: usize, scale: f64) -> bool {
    let original = m.to_vec();
    let mut ridge = 0.0;
    let base = scale.max(f64::MIN_POSITIVE);
    loop {
        m.copy_from_slice(&original);
        for i in 0..f {
            m[i * f + i] += ridge;
        }
        if cholesky(m, f, 1e-14 * base) {
            break;
        }
        ridge = if ridge == 0.0 {
            1e-12 * base
        } else {
            ridge * 100.0
        };
        if ridge > 1e-2 * base {
            return false;
        }
    }
    // Forward then back substitution with the lower factor L (M = L Lᵀ).
    for i in 0..f {
        let s: f64 = (0..i).map(|j| m[i * f + j] * b[j]).sum();
        b[i] = (b[i] - s) / m[i * f + i];
    }
    for i in (0..f).rev() {
        let s: f64 = (i + 1..f).map(|j| m[j * f + i] * b[j]).sum();
        b[i] = (b[i] - s) / m[i * f + i];
    }
    b.iter().all(|x| x.is_finite())
}

/// In-place Cholesky factor (lower triangle of `m` becomes L); `false` when
/// a pivot is not above `floor`.
fn cholesky(m: &mut [f64], f: usize, floor: f64) -> bool {
    for j in 0..f {
        let s: f64 = (0..j).map(|p| m[j * f + p] * m[j * f + p]).sum();
        let d = m[j * f + j] - s;
        // NaN fails this too.
        if d.is_nan() || d <= floor {
            return false;
        }
        let l = d.sqrt();
        m[j * f + j] = l;
        for i in j + 1..f {
            let s: f64 = (0..j).map(|p| m[i * f + p] * m[j * f + p]).sum();
            m[i * f + j] = (m[i * f + j] - s) / l;
        }
    }
    true
}

/// The report of weights `w`: residuals recomputed from the inputs (not
/// from the normal equations, which lose precision to cancellation).
fn report(p: &SolveProblem<'_>, w: &[f64], iterations: usize, converged: bool) -> SolveReport {
    let v = p.neutral.len();
    let mut residuals = Vec::with_capacity(v);
    let mut data = 0.0;
    for i in 0..v {
        let mut e: [f64; 3] =
            std::array::from_fn(|c| f64::from(p.neutral[i][c]) - f64::from(p.target[i][c]));
        for (s, &ws) in w.iter().enumerate() {
            let d = p.deltas[s * v + i];
            for c in 0..3 {
                e[c] += ws * f64::from(d[c]);
            }
        }
        let sq = e[0] * e[0] + e[1] * e[1] + e[2] * e[2];
        data += sq;
        residuals.push(sq.sqrt());
    }
    let mut objective = data + p.alpha * w.iter().map(|x| x * x).sum::<f64>();
    if let Some(prev) = p.previous {
        let pull: f64 = w
            .iter()
            .zip(prev)
            .map(|(a, &b)| (a - f64::from(b)).powi(2))
            .sum();
        objective += p.beta * pull;
    }
    SolveReport {
        weights: w.iter().map(|&x| x.clamp(0.0, 1.0) as f32).collect(),
        rms: (data / v as f64).sqrt(),
        max_residual: residuals.iter().copied().fold(0.0, f64::max),
        residuals,
        objective,
        iterations,
        converged,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two orthogonal unit shapes on one vertex: the solution is the
    /// target's coordinates clamped to the box, found by hand.
    #[test]
    fn orthogonal_shapes_clamp_by_hand() {
        let neutral = [[0.0; 3]];
        let deltas = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
        for (target, expected) in [
            ([0.25, 0.75, 0.0], [0.25, 0.75]),
            ([1.5, -0.5, 0.0], [1.0, 0.0]),
            ([-2.0, 2.0, 3.0], [0.0, 1.0]),
        ] {
            let t = [target];
            let r = solve_weights(&SolveProblem::new(&neutral, &t, &deltas, 2)).unwrap();
            assert_eq!(r.weights, expected.to_vec(), "{target:?}");
            assert!(r.converged);
        }
    }

    /// One shape, `α`: `w = clamp(Δ·r / (|Δ|² + α))` = 2 / (4 + 4) = 0.25.
    #[test]
    fn ridge_shrinks_by_hand() {
        let (neutral, target, deltas) = ([[0.0; 3]], [[1.0, 0.0, 0.0]], [[2.0, 0.0, 0.0]]);
        let mut p = SolveProblem::new(&neutral, &target, &deltas, 1);
        p.alpha = 4.0;
        let r = solve_weights(&p).unwrap();
        assert!((r.weights[0] - 0.25).abs() < 1e-7, "{r:?}");
        // f = (2·0.25 − 1)² + 4·0.25² = 0.25 + 0.25.
        assert!((r.objective - 0.5).abs() < 1e-12, "{r:?}");
    }

    #[test]
    fn cholesky_solves_a_known_system() {
        // [4 2; 2 3] x = [2; 1] → x = [0.5, 0].
        let mut m = vec![4.0, 2.0, 2.0, 3.0];
        let mut b = vec![2.0, 1.0];
        assert!(solve_spd(&mut m, &mut b, 2, 4.0));
        assert!((b[0] - 0.5).abs() < 1e-15 && b[1].abs() < 1e-15, "{b:?}");
    }
}
