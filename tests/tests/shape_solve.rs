//! Blend-shape weight solve (`sinew_std::shape_solve`): validity (every bad
//! input gives its error), exact recovery of known weights from synthetic
//! shapes, recovery under noise within a stated error, the optimality
//! conditions and the box on random problems (proptest), the pull towards
//! the previous frame, and brute-force references on two and three shapes.

#[path = "../support/mod.rs"]
mod support;

use proptest::prelude::*;
use sinew_std::shape_solve::{solve_weights, ShapeBasis, SolveError, SolveProblem};
use sinew_std::{Mesh, MorphTarget};

/// A small deterministic generator (xorshift64*), uniform in [-1, 1).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        (x >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }

    fn gauss(&mut self) -> f64 {
        // Sum of 12 uniforms on [-1, 1): variance 4, so halve.
        (0..12).map(|_| self.next()).sum::<f64>() / 2.0
    }
}

/// `k` shapes on `v` vertices, correlated as a face's are: each shape is a
/// random field plus 0.6 of one field shared by all, over a neutral grid.
fn shapes(k: usize, v: usize, seed: u64) -> (Vec<[f32; 3]>, Vec<[f32; 3]>) {
    let mut rng = Rng(seed);
    let neutral: Vec<[f32; 3]> = (0..v)
        .map(|i| [(i % 20) as f32 * 0.01, (i / 20) as f32 * 0.01, 0.0])
        .collect();
    let shared: Vec<[f64; 3]> = (0..v)
        .map(|_| [rng.next(), rng.next(), rng.next()])
        .collect();
    let mut deltas = Vec::with_capacity(k * v);
    for _ in 0..k {
        for s in &shared {
            deltas.push(std::array::from_fn(|c| {
                (0.01 * (0.6 * s[c] + rng.next())) as f32
            }));
        }
    }
    (neutral, deltas)
}

/// `x0 + Σ w_k Δ_k` in f64, rounded once to f32.
fn blend(neutral: &[[f32; 3]], deltas: &[[f32; 3]], w: &[f64]) -> Vec<[f32; 3]> {
    let v = neutral.len();
    (0..v)
        .map(|i| {
            std::array::from_fn(|c| {
                let mut x = f64::from(neutral[i][c]);
                for (k, wk) in w.iter().enumerate() {
                    x += wk * f64::from(deltas[k * v + i][c]);
                }
                x as f32
            })
        })
        .collect()
}

/// The objective, computed here from its definition.
fn objective(p: &SolveProblem<'_>, w: &[f64]) -> f64 {
    let v = p.neutral.len();
    let mut f = 0.0;
    for i in 0..v {
        for c in 0..3 {
            let mut e = f64::from(p.neutral[i][c]) - f64::from(p.target[i][c]);
            for (k, wk) in w.iter().enumerate() {
                e += wk * f64::from(p.deltas[k * v + i][c]);
            }
            f += e * e;
        }
    }
    f += p.alpha * w.iter().map(|x| x * x).sum::<f64>();
    if let Some(prev) = p.previous {
        f += p.beta
            * w.iter()
                .zip(prev)
                .map(|(a, &b)| (a - f64::from(b)).powi(2))
                .sum::<f64>();
    }
    f
}

fn weights64(w: &[f32]) -> Vec<f64> {
    w.iter().map(|&x| f64::from(x)).collect()
}

// ---------------------------------------------------------------------------
// Validity
// ---------------------------------------------------------------------------

#[test]
fn bad_inputs_are_errors() {
    let n = [[0.0f32; 3]; 2];
    let d = [[1.0f32, 0.0, 0.0]; 4];
    let err = |p: SolveProblem<'_>| solve_weights(&p).unwrap_err();
    assert_eq!(
        err(SolveProblem::new(&[], &[], &[], 1)),
        SolveError::Empty { what: "vertices" }
    );
    assert_eq!(
        err(SolveProblem::new(&n, &n, &[], 0)),
        SolveError::Empty { what: "shapes" }
    );
    assert_eq!(
        err(SolveProblem::new(&n, &n[..1], &d, 2)),
        SolveError::Length {
            what: "target positions",
            expected: 2,
            found: 1
        }
    );
    assert_eq!(
        err(SolveProblem::new(&n, &n, &d[..3], 2)),
        SolveError::Length {
            what: "deltas",
            expected: 4,
            found: 3
        }
    );
    let mut nan = n;
    nan[1][2] = f32::NAN;
    assert_eq!(
        err(SolveProblem::new(&nan, &n, &d, 2)),
        SolveError::NonFinite {
            what: "neutral position",
            index: 1
        }
    );
    assert_eq!(
        err(SolveProblem::new(&n, &nan, &d, 2)),
        SolveError::NonFinite {
            what: "target position",
            index: 1
        }
    );
    let mut bad = d;
    bad[3][0] = f32::INFINITY;
    let e = err(SolveProblem::new(&n, &n, &bad, 2));
    assert_eq!(
        e,
        SolveError::ShapeNonFinite {
            shape: 1,
            vertex: 1
        }
    );
    assert_eq!(
        e.to_string(),
        "weight solve: shape 1: delta at vertex 1 is NaN or infinite"
    );
    let base = SolveProblem::new(&n, &n, &d, 2);
    let prev = [0.5f32, f32::NAN];
    assert_eq!(
        err(SolveProblem {
            previous: Some(&prev[..1]),
            ..base
        }),
        SolveError::Length {
            what: "previous weights",
            expected: 2,
            found: 1
        }
    );
    assert_eq!(
        err(SolveProblem {
            previous: Some(&prev),
            ..base
        }),
        SolveError::NonFinite {
            what: "previous weight",
            index: 1
        }
    );
    for p in [
        SolveProblem {
            alpha: -1.0,
            ..base
        },
        SolveProblem {
            alpha: f64::NAN,
            ..base
        },
        SolveProblem { beta: 1.0, ..base },
        SolveProblem {
            tolerance: 0.0,
            ..base
        },
    ] {
        assert!(matches!(err(p), SolveError::Parameter { .. }), "{p:?}");
    }
}

#[test]
fn gathering_from_a_mesh_checks_its_vertices_and_targets() {
    let mesh = Mesh {
        positions: vec![[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
        morph_targets: vec![
            MorphTarget {
                name: "a".into(),
                positions: vec![[0.0; 3], [0.5, 0.0, 0.0], [0.0; 3]],
                ..MorphTarget::default()
            },
            MorphTarget::default(),
        ],
        morph_weights: vec![0.0; 2],
        ..Mesh::default()
    };
    let b = ShapeBasis::from_mesh(&mesh, &[1, 2]).unwrap();
    assert_eq!(b.neutral, vec![[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]);
    assert_eq!(b.shape_count, 2);
    assert_eq!(
        b.deltas,
        vec![[0.5, 0.0, 0.0], [0.0; 3], [0.0; 3], [0.0; 3]]
    );
    assert_eq!(
        ShapeBasis::from_mesh(&mesh, &[3]).unwrap_err(),
        SolveError::VertexOutOfRange {
            vertex: 3,
            count: 3
        }
    );
    let mut short = mesh.clone();
    short.morph_targets[0].positions.pop();
    assert_eq!(
        ShapeBasis::from_mesh(&short, &[0]).unwrap_err(),
        SolveError::ShapeLength {
            shape: 0,
            expected: 3,
            found: 2
        }
    );
    // Half of shape "a" at vertex 1; the empty shape stays at 0.
    let target = [[1.25f32, 0.0, 0.0], [0.0, 1.0, 0.0]];
    let r = solve_weights(&b.problem(&target)).unwrap();
    assert!(
        (r.weights[0] - 0.5).abs() < 1e-6 && r.weights[1] == 0.0,
        "{r:?}"
    );
}

// ---------------------------------------------------------------------------
// Recovery
// ---------------------------------------------------------------------------

/// Known weights of 24 shapes: some exactly at 0 and 1, the rest inside.
fn known(k: usize, seed: u64) -> Vec<f64> {
    let mut rng = Rng(seed);
    (0..k)
        .map(|i| match i % 6 {
            0 => 0.0,
            1 => 1.0,
            _ => 0.5 + 0.45 * rng.next(),
        })
        .collect()
}

#[test]
fn noise_free_targets_give_back_their_weights() {
    for (k, v, seed) in [(24, 200, 1), (40, 150, 2), (3, 4, 3)] {
        let (neutral, deltas) = shapes(k, v, seed);
        let w = known(k, seed + 10);
        let target = blend(&neutral, &deltas, &w);
        let r = solve_weights(&SolveProblem::new(&neutral, &target, &deltas, k)).unwrap();
        let worst = r
            .weights
            .iter()
            .zip(&w)
            .map(|(a, b)| (f64::from(*a) - b).abs())
            .fold(0.0, f64::max);
        println!(
            "{k} shapes × {v} vertices: max weight error {worst:.2e}, rms residual {:.2e} m, {} iterations",
            r.rms, r.iterations
        );
        assert!(r.converged);
        assert!(worst <= 1e-5, "{k} shapes: weight error {worst}");
        assert!(r.max_residual < 1e-6, "{r:?}");
    }
}

/// Noise of σ = 0.1 mm per coordinate on deltas of about 1 cm: the weights
/// come back within 0.02 (their least-squares spread here is a few 1e-3),
/// and the residual sits at the noise floor, `σ √3 √(1 − K / 3V)` per vertex.
#[test]
fn noisy_targets_give_back_their_weights_within_the_noise() {
    let (k, v, sigma) = (24, 200, 1e-4);
    let (neutral, deltas) = shapes(k, v, 7);
    let w = known(k, 8);
    let mut rng = Rng(99);
    let target: Vec<[f32; 3]> = blend(&neutral, &deltas, &w)
        .into_iter()
        .map(|p| p.map(|x| x + (sigma * rng.gauss()) as f32))
        .collect();
    let r = solve_weights(&SolveProblem::new(&neutral, &target, &deltas, k)).unwrap();
    let worst = r
        .weights
        .iter()
        .zip(&w)
        .map(|(a, b)| (f64::from(*a) - b).abs())
        .fold(0.0, f64::max);
    let floor = sigma * 3f64.sqrt() * (1.0 - k as f64 / (3 * v) as f64).sqrt();
    println!(
        "noise σ = {sigma}: max weight error {worst:.2e}, rms residual {:.3e} (floor {floor:.3e}), {} iterations",
        r.rms, r.iterations
    );
    assert!(r.converged);
    assert!(worst <= 0.02, "weight error {worst}");
    assert!(
        (r.rms / floor - 1.0).abs() < 0.2,
        "rms {} vs floor {floor}",
        r.rms
    );
}

#[test]
fn the_previous_frame_pulls_the_weights_towards_it() {
    let (k, v) = (12, 60);
    let (neutral, deltas) = shapes(k, v, 21);
    let w = known(k, 22);
    let target = blend(&neutral, &deltas, &w);
    let prev: Vec<f32> = (0..k).map(|i| if i % 2 == 0 { 0.1 } else { 0.9 }).collect();
    let base = SolveProblem::new(&neutral, &target, &deltas, k);
    let free = solve_weights(&base).unwrap();
    let dist = |x: &[f32]| -> f64 {
        x.iter()
            .zip(&prev)
            .map(|(a, b)| f64::from(a - b).powi(2))
            .sum::<f64>()
            .sqrt()
    };
    // β = 0 with a previous frame: the same weights (it only starts there).
    let same = solve_weights(&SolveProblem {
        previous: Some(&prev),
        ..base
    })
    .unwrap();
    for (a, b) in same.weights.iter().zip(&free.weights) {
        assert!((a - b).abs() < 1e-5);
    }
    let mut last = dist(&free.weights);
    for beta in [1e-5, 1e-4, 1e-3, 1e-2, 1.0, 100.0] {
        let r = solve_weights(&SolveProblem {
            beta,
            previous: Some(&prev),
            ..base
        })
        .unwrap();
        let d = dist(&r.weights);
        println!("β = {beta}: |w − w_prev| = {d:.4}");
        assert!(d < last, "β = {beta}: {d} not closer than {last}");
        assert!(r.converged);
        last = d;
    }
    assert!(last < 1e-3, "a strong β holds the previous frame: {last}");
}

// ---------------------------------------------------------------------------
// Brute-force references
// ---------------------------------------------------------------------------

/// Grid search over [0, 1]^k, then a finer grid around the best point.
fn brute(p: &SolveProblem<'_>) -> (Vec<f64>, f64) {
    let k = p.shape_count;
    let mut best = (vec![0.0; k], f64::INFINITY);
    let mut centre = vec![0.5; k];
    let mut half = 0.5;
    for _ in 0..4 {
        let steps = if k == 2 { 40 } else { 16 };
        let mut idx = vec![0usize; k];
        loop {
            let w: Vec<f64> = (0..k)
                .map(|a| {
                    (centre[a] - half + 2.0 * half * idx[a] as f64 / steps as f64).clamp(0.0, 1.0)
                })
                .collect();
            let f = objective(p, &w);
            if f < best.1 {
                best = (w, f);
            }
            let mut a = 0;
            while a < k {
                idx[a] += 1;
                if idx[a] <= steps {
                    break;
                }
                idx[a] = 0;
                a += 1;
            }
            if a == k {
                break;
            }
        }
        centre.clone_from(&best.0);
        half *= 4.0 / steps as f64;
    }
    best
}

/// The unconstrained minimiser of a 2- or 3-shape problem (Cramer's rule
/// on the normal equations), computed here independently of the solver.
fn unconstrained(p: &SolveProblem<'_>) -> Vec<f64> {
    let (k, v) = (p.shape_count, p.neutral.len());
    let d = |s: usize, i: usize, c: usize| f64::from(p.deltas[s * v + i][c]);
    let mut h = [[0.0f64; 3]; 3];
    let mut g = [0.0f64; 3];
    for a in 0..k {
        for (b, hab) in h[a].iter_mut().enumerate().take(k) {
            *hab = (0..v)
                .flat_map(|i| (0..3).map(move |c| (i, c)))
                .map(|(i, c)| d(a, i, c) * d(b, i, c))
                .sum::<f64>()
                + if a == b { p.alpha } else { 0.0 };
        }
        g[a] = (0..v)
            .flat_map(|i| (0..3).map(move |c| (i, c)))
            .map(|(i, c)| d(a, i, c) * (f64::from(p.target[i][c]) - f64::from(p.neutral[i][c])))
            .sum();
    }
    if k == 2 {
        let det = h[0][0] * h[1][1] - h[0][1] * h[1][0];
        return vec![
            (g[0] * h[1][1] - h[0][1] * g[1]) / det,
            (h[0][0] * g[1] - g[0] * h[1][0]) / det,
        ];
    }
    let det3 = |m: [[f64; 3]; 3]| {
        m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
            - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
    };
    let det = det3(h);
    (0..3)
        .map(|a| {
            let mut m = h;
            for r in 0..3 {
                m[r][a] = g[r];
            }
            det3(m) / det
        })
        .collect()
}

#[test]
fn two_and_three_shapes_match_a_brute_force_search() {
    let mut interior = 0;
    for seed in 0..12u64 {
        let k = 2 + (seed % 2) as usize;
        let v = 5;
        let (neutral, deltas) = shapes(k, v, 100 + seed);
        let mut rng = Rng(500 + seed);
        // Targets that ask for weights inside, outside and across the box.
        let w: Vec<f64> = (0..k).map(|_| 0.5 + 0.9 * rng.next()).collect();
        let target = blend(&neutral, &deltas, &w)
            .into_iter()
            .map(|p| p.map(|x| x + (0.002 * rng.next()) as f32))
            .collect::<Vec<_>>();
        let mut p = SolveProblem::new(&neutral, &target, &deltas, k);
        p.alpha = if seed % 3 == 0 { 1e-5 } else { 0.0 };
        let r = solve_weights(&p).unwrap();
        let solved = weights64(&r.weights);
        let (bw, bf) = brute(&p);
        let f = objective(&p, &solved);
        assert!(
            f <= bf + 1e-12 * bf.max(1e-12),
            "seed {seed}: solver {f} > brute force {bf} at {bw:?} (solver {solved:?})"
        );
        for (a, b) in solved.iter().zip(&bw) {
            assert!((a - b).abs() < 2e-3, "seed {seed}: {solved:?} vs {bw:?}");
        }
        // When the unconstrained minimiser is inside the box it is the answer.
        let u = unconstrained(&p);
        if u.iter().all(|x| (0.0..=1.0).contains(x)) {
            interior += 1;
            for (a, b) in solved.iter().zip(&u) {
                assert!((a - b).abs() < 1e-5, "seed {seed}: {solved:?} vs {u:?}");
            }
        }
    }
    assert!(interior > 0, "some cases have an interior minimiser");
}

// ---------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------

/// Shape count, neutral, target and shape-major deltas, and `α`.
type Random = (usize, Vec<[f32; 3]>, Vec<[f32; 3]>, Vec<[f32; 3]>, f64);

fn problem_strategy() -> impl Strategy<Value = Random> {
    (1usize..8, 1usize..10).prop_flat_map(|(k, v)| {
        let p = || prop::array::uniform3(-2.0f32..2.0);
        (
            Just(k),
            prop::collection::vec(p(), v),
            prop::collection::vec(p(), v),
            prop::collection::vec(p(), k * v),
            prop_oneof![Just(0.0), 0.0f64..1.0],
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The weights never leave [0, 1], and they satisfy the optimality
    /// conditions of the box-constrained problem (checked here from the
    /// gradient of the objective): zero slope inside, outward slope at a bound.
    #[test]
    fn weights_stay_in_the_box_and_are_optimal(
        (k, neutral, target, deltas, alpha) in problem_strategy()
    ) {
        let mut p = SolveProblem::new(&neutral, &target, &deltas, k);
        p.alpha = alpha;
        let r = solve_weights(&p).unwrap();
        prop_assert!(r.converged, "{r:?}");
        prop_assert!(r.weights.iter().all(|w| (0.0..=1.0).contains(w)), "{r:?}");
        let w = weights64(&r.weights);
        // Central-difference-free gradient: f is quadratic, so
        // ∂f/∂w_a = (f(w + h e_a) − f(w − h e_a)) / 2h exactly up to rounding.
        let f0 = objective(&p, &w);
        let scale = 1.0 + f0;
        for a in 0..k {
            let h = 1e-3;
            let mut up = w.clone();
            up[a] += h;
            let mut down = w.clone();
            down[a] -= h;
            let grad = (objective(&p, &up) - objective(&p, &down)) / (2.0 * h);
            let tol = 1e-4 * scale;
            if w[a] > 1e-6 && w[a] < 1.0 - 1e-6 {
                prop_assert!(grad.abs() <= tol, "weight {a} = {} inside, slope {grad}", w[a]);
            } else if w[a] <= 1e-6 {
                prop_assert!(grad >= -tol, "weight {a} at 0, slope {grad}");
            } else {
                prop_assert!(grad <= tol, "weight {a} at 1, slope {grad}");
            }
        }
        // The report's objective is the problem's.
        prop_assert!((r.objective - f0).abs() <= 1e-6 * scale);
    }
}
