//! Pose-space deformation: radial-basis-function (RBF) interpolation over
//! example rotations of a joint, and corrective deltas authored in posed
//! space taken back to bind space.
//!
//! # Interpolation
//! A driver reads one joint's rotation `q` and has `n` example rotations
//! `q_i`, each with a row of `m` outputs `y_i` (typically the weights of
//! corrective shapes, one per example). Its outputs are
//!
//! ```text
//! y(q) = Σ_i W_i φ(d(q, q_i))
//! ```
//!
//! where `W` (`n × m`) solves `(Φ + λI) W = Y` with `Φ_ij = φ(d(q_i, q_j))`
//! ([`RbfFit::solve`], offline). With `λ = 0` the driver reproduces every
//! example exactly; `λ > 0` (Tikhonov regularisation) trades that for
//! smaller, smoother weights, and makes duplicate or nearly coincident
//! examples solvable.
//!
//! # Distance
//! `d` is the rotation angle between the two rotations, in radians, in
//! `[0, π]` ([`rotation_distance`]): the angle of `q_i⁻¹ q`, which is
//! `2 acos |q · q_i|`. It is the geodesic distance on the rotation group,
//! so it is
//! - **sign-invariant**: `q` and `−q` are the same rotation and are at
//!   distance 0;
//! - **a metric** (it obeys the triangle inequality), in radians, so `σ` has
//!   a meaning an animator can set ("examples 30° apart");
//! - **frame-independent**: the same whether the parent or the joint frame
//!   is turned, so examples authored in either give the same interpolant.
//!
//! `1 − |q · q_i|` is sign-invariant too but is not a metric: it grows as
//! `θ²/8`, so a Gaussian of it is `exp(−θ⁴/(64σ²))`, flat around each
//! example and steep further away. The angle is evaluated as
//! `4 atan2(|q − s q_i|, |q + s q_i|)` with `s` the sign of `q · q_i`,
//! equal to `2 acos |q · q_i|` for unit quaternions but accurate near 0,
//! where `acos` of a dot product rounded to `f32` loses half its digits
//! (a rotation at distance 0 from itself would come out at about 7e-4 rad).
//!
//! # Kernels
//! With `x = r / σ` ([`RbfKernel`]): Gaussian `exp(−x²)`, thin-plate
//! `x² ln x` (0 at 0; `σ = 1` gives the plain `r² ln r`), multiquadric
//! `sqrt(1 + x²)`. There is no polynomial term: far from every example the
//! Gaussian falls to 0 and the other two grow, so outputs that are shape
//! weights are best clamped ([`RbfDriver::clamp`]).
//!
//! # Solve
//! The Gaussian and multiquadric matrices of a geodesic distance are not
//! positive definite in general (those kernels are positive definite for
//! Euclidean distances), and the thin-plate matrix has a zero diagonal, so
//! [`RbfFit::solve`] does not use Cholesky: it runs Gaussian elimination
//! with partial pivoting on `[Φ + λI | Y]` in `f64`, which works for all
//! three. The matrix is built from the same `f32` kernel values the run
//! time computes, so the solved weights reproduce the examples at run time
//! as closely as `f32` allows. A pivot below `1e-12` of the matrix's
//! largest entry is a singular system; after the solve the `f32` weights
//! are checked against the system (residual at most `1e-4 · max(1, |Y|)`),
//! and a system whose weights cannot reproduce it in `f32` is reported as
//! ill-conditioned. Both are [`Error::InvalidDriver`], never NaN weights.
//!
//! # Run time
//! [`RbfSet`] holds several drivers, each naming its joint, validated once
//! ([`RbfSet::new`]); [`RbfSet::evaluate`] writes every driver's outputs,
//! one after the other, into one caller slice. It costs `n` distances and
//! kernel values and `n m` multiply-adds per driver, allocates nothing,
//! and is scalar: its cost is the per-example `atan2` and `exp`/`ln`, and
//! the core has no lane `exp`/`ln` whose bits the `deterministic` feature
//! pins.
//!
//! # Corrective deltas
//! A corrective sculpted on the posed mesh moves vertex `v` by `Δ` after
//! skinning. Added before skinning, a bind-space delta `δ` moves it by
//! `M δ`, where `M = Σ_j w_j P_j` is the linear (3x3) part of the vertex's
//! blended LBS matrix (palette entries `P_j = models_j · inverse_bind_j`).
//! [`posed_deltas_to_bind`] writes `δ = M⁻¹ Δ` for a whole mesh, so that
//! the shape authored in the pose reproduces itself there after LBS.

use crate::error::Error;
use crate::math::{sqrt_f32, Quat};
use crate::skin::{CheckedInfluences, Mat3x4};
use crate::soa::{check_len, get_joint, soa_count, SoaTransform};

/// Distance of a pivot below which the system is singular, relative to the
/// largest entry of `Φ + λI`.
const PIVOT_TOLERANCE: f64 = 1e-12;

/// Largest residual of the `f32` weights, relative to `max(1, |Y|)`.
const RESIDUAL_TOLERANCE: f64 = 1e-4;

/// Largest distance of an example's length from 1.
const UNIT_TOLERANCE: f32 = 1e-3;

/// Smallest `|det M|` relative to the product of `M`'s row lengths (its
/// largest possible value) for a skinning transform to be invertible.
const DET_TOLERANCE: f64 = 1e-6;

/// A radial basis function `φ(r)` of the rotation distance `r` (radians),
/// with the scale `σ` (radians, `> 0`): `x = r / σ`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RbfKernel {
    /// `exp(−x²)`: 1 at an example, falling to 0 away from all of them.
    Gaussian,
    /// `x² ln x` (0 at `x = 0`): the thin-plate spline, smooth and without
    /// a scale of its own (`σ` only rescales it).
    ThinPlate,
    /// `sqrt(1 + x²)`: Hardy's multiquadric, growing linearly far away.
    Multiquadric,
}

impl RbfKernel {
    /// `φ(r)` for the distance `r >= 0` and the scale `sigma > 0` (both in
    /// radians). Finite for finite `r` and `sigma > 0`.
    #[inline]
    #[must_use]
    pub fn eval(self, r: f32, sigma: f32) -> f32 {
        let x = r / sigma;
        match self {
            RbfKernel::Gaussian => libm::expf(-(x * x)),
            // x ln x → 0 as x → 0, so the kernel is continuous at 0.
            RbfKernel::ThinPlate if x > 0.0 => x * x * libm::logf(x),
            RbfKernel::ThinPlate => 0.0,
            RbfKernel::Multiquadric => sqrt_f32(1.0 + x * x),
        }
    }
}

/// The rotation angle between two unit quaternions, in radians, in
/// `[0, π]`: `2 acos |a · b|`, evaluated as `4 atan2(|a − s b|, |a + s b|)`
/// with `s = ±1` the sign of `a · b` (accurate near 0, exactly 0 for equal
/// inputs). The same for `b` and `−b`.
#[inline]
#[must_use]
pub fn rotation_distance(a: Quat, b: Quat) -> f32 {
    let b = if a.dot(b) < 0.0 { -b } else { b };
    let (dx, dy, dz, dw) = (a.x - b.x, a.y - b.y, a.z - b.z, a.w - b.w);
    let (sx, sy, sz, sw) = (a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
    let diff = sqrt_f32(dx * dx + dy * dy + dz * dz + dw * dw);
    let sum = sqrt_f32(sx * sx + sy * sy + sz * sz + sw * sw);
    4.0 * libm::atan2f(diff, sum)
}

/// A driver index as the `u32` of [`Error::InvalidDriver`].
fn driver_error(driver: usize, what: &'static str) -> Error {
    Error::InvalidDriver {
        driver: u32::try_from(driver).unwrap_or(u32::MAX),
        what,
    }
}

/// The checks of the example rotations and the kernel's scale, shared by
/// the solve and the run-time set.
fn check_examples(driver: usize, examples: &[Quat], sigma: f32) -> Result<(), Error> {
    if examples.is_empty() {
        return Err(driver_error(driver, "RBF driver has no example rotations"));
    }
    if !(sigma.is_finite() && sigma > 0.0) {
        return Err(driver_error(
            driver,
            "RBF scale sigma is not finite and positive",
        ));
    }
    let unit = |q: &Quat| q.is_finite() && libm::fabsf(q.length() - 1.0) <= UNIT_TOLERANCE;
    if !examples.iter().all(unit) {
        return Err(driver_error(
            driver,
            "an RBF example rotation is not a finite unit quaternion",
        ));
    }
    Ok(())
}

/// `n * m`, or an error naming the driver when it overflows.
fn table_len(driver: usize, n: usize, m: usize) -> Result<usize, Error> {
    n.checked_mul(m)
        .ok_or(driver_error(driver, "RBF table size overflows"))
}

/// An RBF fitting problem, solved offline by [`RbfFit::solve`] into the
/// weights of an [`RbfDriver`].
#[derive(Clone, Copy, Debug)]
pub struct RbfFit<'a> {
    /// The kernel.
    pub kernel: RbfKernel,
    /// The kernel's scale in radians, finite and `> 0`.
    pub sigma: f32,
    /// The Tikhonov regularisation `λ >= 0` added to the diagonal of `Φ`;
    /// 0 interpolates the examples exactly.
    pub lambda: f32,
    /// The `n >= 1` example rotations (unit quaternions, within 1e-3).
    pub examples: &'a [Quat],
    /// The outputs at each example, `n × outputs` row-major: example `i`'s
    /// outputs are `targets[i * outputs..(i + 1) * outputs]`.
    pub targets: &'a [f32],
    /// Outputs per example, `m >= 1`.
    pub outputs: usize,
}

impl RbfFit<'_> {
    /// The `f64` scratch [`solve`](Self::solve) needs: `n (n + m)` entries
    /// (the augmented matrix), saturating on overflow.
    #[must_use]
    pub fn scratch_len(&self) -> usize {
        let n = self.examples.len();
        n.saturating_mul(n.saturating_add(self.outputs))
    }

    /// Solves `(Φ + λI) W = Y` for the weights `W` (`n × m` row-major, the
    /// layout of [`RbfDriver::weights`]) by Gaussian elimination with
    /// partial pivoting in `f64` over `scratch`. `driver` is the index the
    /// errors name (the driver's index in its [`RbfSet`]). O(n³ + n² m).
    ///
    /// # Errors
    /// [`Error::InvalidDriver`] naming `driver`: no examples, no outputs, a
    /// scale that is not finite and positive, a negative or non-finite
    /// `lambda`, an example that is not a finite unit quaternion, a target
    /// count other than `n m`, a non-finite target, a singular system
    /// (duplicate examples, or thin-plate with one example, at `λ = 0`), an
    /// ill-conditioned one (the `f32` weights do not reproduce it within
    /// `1e-4 · max(1, |Y|)`); [`Error::BufferTooSmall`] (`scratch` shorter
    /// than [`scratch_len`](Self::scratch_len)); [`Error::BadLength`]
    /// (`"rbf weights"` not `n m` long). On error `weights` is untouched.
    pub fn solve(
        &self,
        driver: u32,
        scratch: &mut [f64],
        weights: &mut [f32],
    ) -> Result<(), Error> {
        let d = usize::try_from(driver).unwrap_or(usize::MAX);
        let err = |what| Error::InvalidDriver { driver, what };
        check_examples(d, self.examples, self.sigma)?;
        let (n, m) = (self.examples.len(), self.outputs);
        if m == 0 {
            return Err(err("RBF driver has no outputs"));
        }
        if !(self.lambda.is_finite() && self.lambda >= 0.0) {
            return Err(err("RBF regularisation lambda is negative or not finite"));
        }
        let nm = table_len(d, n, m)?;
        if self.targets.len() != nm {
            return Err(err("RBF target count is not examples × outputs"));
        }
        if !self.targets.iter().all(|t| t.is_finite()) {
            return Err(err("an RBF target is not finite"));
        }
        let needed = self.scratch_len();
        if scratch.len() < needed {
            return Err(Error::BufferTooSmall {
                needed,
                actual: scratch.len(),
            });
        }
        check_len("rbf weights", nm, weights.len())?;
        let a = &mut scratch[..needed];
        let c = n + m;
        let lambda = f64::from(self.lambda);

        // [Φ + λI | Y], row-major with stride c, from the run time's f32 kernel.
        let mut largest = 0.0f64;
        for (i, (row, y)) in a
            .chunks_exact_mut(c)
            .zip(self.targets.chunks_exact(m))
            .enumerate()
        {
            let (lhs, rhs) = row.split_at_mut(n);
            for (j, e) in lhs.iter_mut().enumerate() {
                *e = self.phi(i, j) + if i == j { lambda } else { 0.0 };
                largest = largest.max(e.abs());
            }
            for (e, &t) in rhs.iter_mut().zip(y) {
                *e = f64::from(t);
            }
        }
        let singular = err("RBF system is singular (coincident examples?): set lambda > 0");
        let tolerance = largest * PIVOT_TOLERANCE;
        if largest.is_nan() || largest <= 0.0 {
            return Err(singular);
        }

        // Forward elimination with partial pivoting.
        for p in 0..n {
            let mut best = p;
            for i in p + 1..n {
                if a[i * c + p].abs() > a[best * c + p].abs() {
                    best = i;
                }
            }
            let pivot = a[best * c + p].abs();
            if pivot.is_nan() || pivot <= tolerance {
                return Err(singular);
            }
            if best != p {
                for k in p..c {
                    a.swap(best * c + k, p * c + k);
                }
            }
            let (upper, lower) = a.split_at_mut((p + 1) * c);
            let pivot_row = &upper[p * c..];
            let pivot = pivot_row[p];
            for row in lower.chunks_exact_mut(c) {
                let f = row[p] / pivot;
                if f != 0.0 {
                    for (e, &u) in row[p..].iter_mut().zip(&pivot_row[p..]) {
                        *e -= f * u;
                    }
                }
            }
        }
        // Back substitution; the solution replaces the right-hand side.
        for i in (0..n).rev() {
            let (upper, lower) = a.split_at_mut((i + 1) * c);
            let row = &mut upper[i * c..];
            for k in 0..m {
                let mut s = row[n + k];
                for j in i + 1..n {
                    s -= row[j] * lower[(j - i - 1) * c + n + k];
                }
                row[n + k] = s / row[i];
            }
        }

        // The f32 weights must reproduce the system (what the run time sees).
        let w = |j: usize, k: usize| a[j * c + n + k] as f32;
        if !(0..n).all(|j| (0..m).all(|k| w(j, k).is_finite())) {
            return Err(err("RBF system is ill-conditioned: weights overflow f32"));
        }
        let scale = self
            .targets
            .iter()
            .fold(1.0f64, |s, &t| s.max(f64::from(t).abs()));
        for i in 0..n {
            for k in 0..m {
                let mut r = f64::from(self.lambda) * f64::from(w(i, k))
                    - f64::from(self.targets[i * m + k]);
                for j in 0..n {
                    r += self.phi(i, j) * f64::from(w(j, k));
                }
                if r.is_nan() || r.abs() > RESIDUAL_TOLERANCE * scale {
                    return Err(err(
                        "RBF system is ill-conditioned: raise lambda or move examples apart",
                    ));
                }
            }
        }
        for (j, row) in weights.chunks_exact_mut(m).enumerate() {
            for (k, o) in row.iter_mut().enumerate() {
                *o = w(j, k);
            }
        }
        Ok(())
    }

    /// `Φ_ij` as the run time computes it (in `f32`), widened.
    fn phi(&self, i: usize, j: usize) -> f64 {
        let (qi, qj) = (self.examples[i], self.examples[j]);
        f64::from(self.kernel.eval(rotation_distance(qi, qj), self.sigma))
    }
}

/// One pose-space driver: a joint's rotation interpolated over example
/// rotations into `outputs` values.
#[derive(Clone, Copy, Debug)]
pub struct RbfDriver<'a> {
    /// The joint whose rotation drives it (an index into the rotations or
    /// pose given to [`RbfSet::evaluate`]), in the space its examples were
    /// authored in (usually the joint's local rotation).
    pub joint: u16,
    /// The kernel.
    pub kernel: RbfKernel,
    /// The kernel's scale in radians, finite and `> 0`.
    pub sigma: f32,
    /// The `n >= 1` example rotations (unit quaternions, within 1e-3).
    pub examples: &'a [Quat],
    /// The solved weights `W`, `n × outputs` row-major ([`RbfFit::solve`]).
    pub weights: &'a [f32],
    /// Outputs of this driver, `m >= 1`.
    pub outputs: usize,
    /// Clamp every output to `[0, 1]` (for outputs that are shape weights).
    pub clamp: bool,
}

impl RbfDriver<'_> {
    /// Checks the driver as driver `index` of a set over `joint_count` joints.
    fn check(&self, index: usize, joint_count: usize) -> Result<(), Error> {
        if usize::from(self.joint) >= joint_count {
            return Err(driver_error(index, "RBF driver joint is out of range"));
        }
        check_examples(index, self.examples, self.sigma)?;
        if self.outputs == 0 {
            return Err(driver_error(index, "RBF driver has no outputs"));
        }
        if self.weights.len() != table_len(index, self.examples.len(), self.outputs)? {
            return Err(driver_error(
                index,
                "RBF weight count is not examples × outputs",
            ));
        }
        if !self.weights.iter().all(|w| w.is_finite()) {
            return Err(driver_error(index, "an RBF weight is not finite"));
        }
        Ok(())
    }

    /// Writes `y(q)` into `out` (`outputs` long), for a unit `q`.
    fn eval_into(&self, q: Quat, out: &mut [f32]) {
        out.fill(0.0);
        let rows = self.weights.chunks_exact(self.outputs);
        for (&e, row) in self.examples.iter().zip(rows) {
            let phi = self.kernel.eval(rotation_distance(q, e), self.sigma);
            for (o, &w) in out.iter_mut().zip(row) {
                *o += phi * w;
            }
        }
        if self.clamp {
            for o in out.iter_mut() {
                *o = o.clamp(0.0, 1.0);
            }
        }
    }

    /// The outputs for rotation `q` (normalised first), written into `out`
    /// (exactly `outputs` long). `index` is the driver's index for errors.
    ///
    /// # Errors
    /// [`Error::InvalidDriver`] naming `index` (the driver itself is
    /// invalid, as [`RbfSet::new`] checks with any joint count, or `q` is
    /// zero or not finite); [`Error::BadLength`] (`"rbf outputs"`). On
    /// error `out` is untouched.
    pub fn evaluate(&self, index: u32, q: Quat, out: &mut [f32]) -> Result<(), Error> {
        let i = usize::try_from(index).unwrap_or(usize::MAX);
        self.check(i, usize::from(u16::MAX) + 1)?;
        check_len("rbf outputs", self.outputs, out.len())?;
        let q = unit_rotation(i, q)?;
        self.eval_into(q, out);
        Ok(())
    }
}

/// `q` normalised, or an error naming `driver` when it is zero or not finite.
fn unit_rotation(driver: usize, q: Quat) -> Result<Quat, Error> {
    let len = q.length();
    if len.is_finite() && len > 1e-12 {
        Ok(q.scale(1.0 / len))
    } else {
        Err(driver_error(
            driver,
            "RBF driver's joint rotation is zero or not finite",
        ))
    }
}

/// Several pose-space drivers over one skeleton, checked once.
///
/// Driver `d` writes its [`outputs`](RbfDriver::outputs) values at offset
/// `Σ_{e<d} outputs_e` of the output slice.
#[derive(Clone, Copy, Debug)]
pub struct RbfSet<'a> {
    drivers: &'a [RbfDriver<'a>],
    joint_count: usize,
    output_count: usize,
}

impl<'a> RbfSet<'a> {
    /// Checks every driver for a skeleton of `joint_count` joints.
    ///
    /// # Errors
    /// [`Error::InvalidDriver`] naming the first bad driver: its joint is
    /// not below `joint_count`, it has no examples, no outputs, a scale
    /// that is not finite and positive, an example that is not a finite
    /// unit quaternion, a weight count other than examples × outputs, or a
    /// non-finite weight.
    pub fn new(drivers: &'a [RbfDriver<'a>], joint_count: usize) -> Result<Self, Error> {
        let mut output_count = 0usize;
        for (i, d) in drivers.iter().enumerate() {
            d.check(i, joint_count)?;
            output_count = output_count
                .checked_add(d.outputs)
                .ok_or(driver_error(i, "RBF output count overflows"))?;
        }
        Ok(RbfSet {
            drivers,
            joint_count,
            output_count,
        })
    }

    /// The drivers.
    #[inline]
    #[must_use]
    pub fn drivers(&self) -> &'a [RbfDriver<'a>] {
        self.drivers
    }

    /// The joint count the drivers were checked against.
    #[inline]
    #[must_use]
    pub fn joint_count(&self) -> usize {
        self.joint_count
    }

    /// The total number of outputs (the length of the output slice).
    #[inline]
    #[must_use]
    pub fn output_count(&self) -> usize {
        self.output_count
    }

    /// Evaluates every driver from the joints' rotations (`rotations[j]`
    /// for joint `j`, normalised before use), writing all outputs into
    /// `out`. Allocation-free.
    ///
    /// # Errors
    /// [`Error::BadLength`] (`"rotations"` not [`joint_count`](Self::joint_count)
    /// long, `"rbf outputs"` not [`output_count`](Self::output_count) long);
    /// [`Error::InvalidDriver`] naming the first driver whose joint's
    /// rotation is zero or not finite. On error `out` is untouched.
    pub fn evaluate(&self, rotations: &[Quat], out: &mut [f32]) -> Result<(), Error> {
        check_len("rotations", self.joint_count, rotations.len())?;
        self.run(|j| rotations.get(j).copied(), out)
    }

    /// [`evaluate`](Self::evaluate) with the rotations read from an SoA
    /// pose of [`soa_count`]`(joint_count)` blocks.
    ///
    /// # Errors
    /// [`Error::BadLength`] (`"pose"` not `soa_count(joint_count)` blocks,
    /// `"rbf outputs"`), then those of [`evaluate`](Self::evaluate).
    pub fn evaluate_pose(&self, pose: &[SoaTransform], out: &mut [f32]) -> Result<(), Error> {
        check_len("pose", soa_count(self.joint_count), pose.len())?;
        self.run(|j| get_joint(pose, j).map(|t| t.rotation), out)
    }

    fn run(&self, rotation: impl Fn(usize) -> Option<Quat>, out: &mut [f32]) -> Result<(), Error> {
        check_len("rbf outputs", self.output_count, out.len())?;
        let q = |i: usize, d: &RbfDriver<'_>| {
            let q = rotation(usize::from(d.joint)).unwrap_or(Quat::new(0.0, 0.0, 0.0, 0.0));
            unit_rotation(i, q)
        };
        for (i, d) in self.drivers.iter().enumerate() {
            q(i, d)?;
        }
        let mut rest = out;
        for (i, d) in self.drivers.iter().enumerate() {
            let (head, tail) = rest.split_at_mut(d.outputs);
            d.eval_into(q(i, d)?, head);
            rest = tail;
        }
        Ok(())
    }
}

/// The linear (3x3) part of a vertex's blended LBS matrix, in `f64`.
fn blended_linear(
    palette: &[Mat3x4],
    joints: &[u16; 4],
    weights: &[f32; 4],
    m: &mut [[f64; 3]; 3],
) {
    for (&j, &w) in joints.iter().zip(weights) {
        if let Some(p) = palette.get(usize::from(j)) {
            for (mr, pr) in m.iter_mut().zip(&p.rows) {
                for (e, &x) in mr.iter_mut().zip(pr) {
                    *e += f64::from(w) * f64::from(x);
                }
            }
        }
    }
}

/// `M⁻¹ Δ` by the adjugate, or `None` when `M` is singular (or not finite).
fn solve3(m: &[[f64; 3]; 3], d: [f32; 3]) -> Option<[f32; 3]> {
    let [a, b, c] = *m;
    let cross = |u: [f64; 3], v: [f64; 3]| {
        [
            u[1] * v[2] - u[2] * v[1],
            u[2] * v[0] - u[0] * v[2],
            u[0] * v[1] - u[1] * v[0],
        ]
    };
    let dot = |u: [f64; 3], v: [f64; 3]| u[0] * v[0] + u[1] * v[1] + u[2] * v[2];
    // The rows of M⁻¹ det M are the columns b×c, c×a, a×b.
    let (bc, ca, ab) = (cross(b, c), cross(c, a), cross(a, b));
    let det = dot(a, bc);
    let bound = libm::sqrt(dot(a, a) * dot(b, b) * dot(c, c));
    if !det.is_finite() || det.abs() <= DET_TOLERANCE * bound {
        return None;
    }
    let d = [f64::from(d[0]), f64::from(d[1]), f64::from(d[2])];
    let x = [
        bc[0] * d[0] + ca[0] * d[1] + ab[0] * d[2],
        bc[1] * d[0] + ca[1] * d[1] + ab[1] * d[2],
        bc[2] * d[0] + ca[2] * d[1] + ab[2] * d[2],
    ];
    let r = x.map(|e| (e / det) as f32);
    r.iter().all(|e| e.is_finite()).then_some(r)
}

/// Takes corrective deltas authored in posed space (`posed[v]`, the shift
/// of vertex `v` after skinning) back to bind space: `bind[v] = M_v⁻¹
/// posed[v]`, with `M_v` the linear part of the vertex's blended LBS
/// matrix over `palette` (from [`lbs_palette`](crate::skin::lbs_palette)
/// for the pose the corrective was sculpted in). Added to the bind
/// positions before LBS skinning, `bind` moves each vertex by `posed` in
/// that pose. Offline; `shape` is the index the errors name.
///
/// Eight-influence meshes blend all eight slots. Works in `f64`.
///
/// # Errors
/// [`Error::BadLength`] (`"palette"` not
/// [`joint_count`](CheckedInfluences::joint_count) long, `"bind deltas"`
/// not as long as `posed`); [`Error::InvalidShape`] naming `shape`: the
/// posed deltas' vertex count differs from the mesh's, a posed delta is
/// not finite, or a vertex's skinning transform is singular (its
/// determinant below `1e-6` of the product of its row lengths, e.g. a
/// blend of opposite rotations) or not finite. On error `bind` is
/// untouched.
pub fn posed_deltas_to_bind(
    shape: u32,
    palette: &[Mat3x4],
    influences: &CheckedInfluences<'_>,
    posed: &[[f32; 3]],
    bind: &mut [[f32; 3]],
) -> Result<(), Error> {
    let err = |what| Error::InvalidShape { shape, what };
    check_len("palette", influences.joint_count(), palette.len())?;
    if posed.len() != influences.len() {
        return Err(err("posed deltas: vertex count differs from the mesh"));
    }
    check_len("bind deltas", posed.len(), bind.len())?;
    if !posed.iter().flatten().all(|e| e.is_finite()) {
        return Err(err("a posed delta is not finite"));
    }
    let second = influences.second_set();
    let vertex = |v: usize| {
        let mut m = [[0.0f64; 3]; 3];
        let (js, ws) = (influences.joints(), influences.weights());
        if let (Some(j), Some(w)) = (js.get(v), ws.get(v)) {
            blended_linear(palette, j, w, &mut m);
        }
        if let Some((js, ws)) = second {
            if let (Some(j), Some(w)) = (js.get(v), ws.get(v)) {
                blended_linear(palette, j, w, &mut m);
            }
        }
        posed.get(v).and_then(|&d| solve3(&m, d)).ok_or(err(
            "the skinning transform of a vertex is singular or not finite",
        ))
    };
    for v in 0..posed.len() {
        vertex(v)?;
    }
    for (v, b) in bind.iter_mut().enumerate() {
        *b = vertex(v)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
