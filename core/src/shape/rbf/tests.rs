extern crate alloc;

use alloc::vec;
use alloc::vec::Vec;

use super::*;
use crate::math::{Mat4, Transform, Vec3};
use crate::soa::pack;

fn v3(a: [f32; 3]) -> Vec3 {
    Vec3::new(a[0], a[1], a[2])
}

const E: f32 = core::f32::consts::E;

fn examples() -> Vec<Quat> {
    vec![
        Quat::IDENTITY,
        Quat::from_rotation_x(0.8),
        Quat::from_rotation_x(-0.8),
        Quat::from_rotation_z(0.8),
        Quat::from_rotation_z(-0.8),
        Quat::from_rotation_y(1.2),
    ]
}

/// One-hot targets: output k is 1 at example k.
fn one_hot(n: usize) -> Vec<f32> {
    (0..n * n)
        .map(|i| if i / n == i % n { 1.0 } else { 0.0 })
        .collect()
}

fn solve(fit: &RbfFit<'_>, driver: u32) -> Result<Vec<f32>, Error> {
    let mut scratch = vec![0.0f64; fit.scratch_len()];
    let mut w = vec![0.0f32; fit.examples.len() * fit.outputs];
    fit.solve(driver, &mut scratch, &mut w).map(|()| w)
}

fn driver<'a>(fit: &RbfFit<'a>, weights: &'a [f32], joint: u16) -> RbfDriver<'a> {
    RbfDriver {
        joint,
        kernel: fit.kernel,
        sigma: fit.sigma,
        examples: fit.examples,
        weights,
        outputs: fit.outputs,
        clamp: false,
    }
}

/// Each kernel with the scale the interpolation tests use.
const KERNELS: [(RbfKernel, f32); 3] = [
    (RbfKernel::Gaussian, 0.8),
    (RbfKernel::ThinPlate, 1.0),
    (RbfKernel::Multiquadric, 0.8),
];

/// An unregularised fit of `targets` (one row of outputs per example).
fn exact_fit<'a>(
    kernel: RbfKernel,
    sigma: f32,
    examples: &'a [Quat],
    targets: &'a [f32],
) -> RbfFit<'a> {
    RbfFit {
        kernel,
        sigma,
        lambda: 0.0,
        examples,
        targets,
        outputs: targets.len() / examples.len(),
    }
}

fn eval(d: &RbfDriver<'_>, q: Quat) -> Vec<f32> {
    let mut out = vec![0.0; d.outputs];
    d.evaluate(0, q, &mut out).unwrap();
    out
}

#[test]
fn kernels_match_hand_values() {
    let k = |kernel: RbfKernel, r: f32, s: f32| kernel.eval(r, s);
    // Gaussian: exp(-(r/σ)²); at r = σ it is 1/e, at r = 2σ e^-4.
    assert!((k(RbfKernel::Gaussian, 0.5, 0.5) - 1.0 / E).abs() < 1e-7);
    assert!((k(RbfKernel::Gaussian, 1.0, 0.5) - libm::expf(-4.0)).abs() < 1e-7);
    assert_eq!(k(RbfKernel::Gaussian, 0.0, 0.3), 1.0);
    // Thin plate: x² ln x; 0 at x = 0 and x = 1, e² at x = e, -ln2/4 at 1/2.
    assert_eq!(k(RbfKernel::ThinPlate, 0.0, 1.0), 0.0);
    assert_eq!(k(RbfKernel::ThinPlate, 0.7, 0.7), 0.0);
    assert!((k(RbfKernel::ThinPlate, E, 1.0) - E * E).abs() < 1e-5);
    assert!((k(RbfKernel::ThinPlate, 0.25, 0.5) + 0.25 * core::f32::consts::LN_2).abs() < 1e-7);
    // Multiquadric: sqrt(1 + x²); 1 at 0, 2 at x = √3.
    assert_eq!(k(RbfKernel::Multiquadric, 0.0, 2.0), 1.0);
    assert!((k(RbfKernel::Multiquadric, 3f32.sqrt(), 1.0) - 2.0).abs() < 1e-6);
}

#[test]
fn distance_is_the_rotation_angle_and_sign_invariant() {
    let a = Quat::from_rotation_z(0.6);
    assert!((rotation_distance(Quat::IDENTITY, a) - 0.6).abs() < 1e-6);
    // Sign invariance: -a is the same rotation.
    assert_eq!(
        rotation_distance(Quat::IDENTITY, -a),
        rotation_distance(Quat::IDENTITY, a)
    );
    assert_eq!(rotation_distance(-a, a), 0.0);
    assert_eq!(rotation_distance(a, a), 0.0);
    // +90° and -90° about x are 180° apart; 170° and -170° are 20° apart.
    let h = core::f32::consts::FRAC_PI_2;
    let (p, m) = (Quat::from_rotation_x(h), Quat::from_rotation_x(-h));
    assert!((rotation_distance(p, m) - core::f32::consts::PI).abs() < 1e-4);
    let (p, m) = (
        Quat::from_rotation_x(170f32.to_radians()),
        Quat::from_rotation_x(-170f32.to_radians()),
    );
    assert!((rotation_distance(p, m) - 20f32.to_radians()).abs() < 1e-5);
    // Frame independence: turning both by the same rotation keeps it.
    let r = Quat::from_axis_angle(Vec3::new(0.6, 0.0, 0.8), 1.1);
    let (b, c) = (Quat::from_rotation_y(0.3), Quat::from_rotation_x(-0.9));
    let d0 = rotation_distance(b, c);
    assert!((rotation_distance(r * b, r * c) - d0).abs() < 1e-5);
    assert!((rotation_distance(b * r, c * r) - d0).abs() < 1e-5);
    // Small angles are resolved (acos of the dot would give ~7e-4 here).
    let tiny = Quat::from_rotation_y(1e-4);
    assert!((rotation_distance(Quat::IDENTITY, tiny) - 1e-4).abs() < 1e-7);
}

#[test]
fn reproduces_examples_without_regularisation() {
    let ex = examples();
    let n = ex.len();
    let targets = one_hot(n);
    for (kernel, sigma) in KERNELS {
        let fit = exact_fit(kernel, sigma, &ex, &targets);
        let w = solve(&fit, 0).unwrap();
        let d = driver(&fit, &w, 0);
        for (i, &q) in ex.iter().enumerate() {
            for sign in [1.0, -1.0] {
                let y = eval(&d, q.scale(sign));
                for (k, &v) in y.iter().enumerate() {
                    let want = targets[i * n + k];
                    assert!(
                        (v - want).abs() < 1e-5,
                        "{kernel:?} example {i} output {k}: {v}"
                    );
                }
            }
        }
    }
}

#[test]
fn regularisation_shrinks_towards_zero_but_stays_close() {
    let ex = examples();
    let n = ex.len();
    let targets = one_hot(n);
    let fit = |lambda| RbfFit {
        kernel: RbfKernel::Gaussian,
        sigma: 0.8,
        lambda,
        examples: &ex,
        targets: &targets,
        outputs: n,
    };
    let (f0, f1) = (fit(0.0), fit(0.05));
    let (w0, w1) = (solve(&f0, 0).unwrap(), solve(&f1, 0).unwrap());
    let norm = |w: &[f32]| w.iter().map(|x| x * x).sum::<f32>();
    assert!(norm(&w1) < norm(&w0));
    let d = driver(&f1, &w1, 0);
    for (i, &q) in ex.iter().enumerate() {
        let y = eval(&d, q);
        // At example i the output is Y_i - λ W_i exactly (up to f32).
        for k in 0..n {
            let want = targets[i * n + k] - 0.05 * w1[i * n + k];
            assert!((y[k] - want).abs() < 1e-5);
        }
        assert!((y[i] - 1.0).abs() < 0.2);
    }
}

#[test]
fn smooth_between_examples() {
    let ex = examples();
    let n = ex.len();
    let targets = one_hot(n);
    for (kernel, sigma) in KERNELS {
        let fit = exact_fit(kernel, sigma, &ex, &targets);
        let w = solve(&fit, 0).unwrap();
        let d = driver(&fit, &w, 0);
        // Walk from example 1 through example 0 to example 3 in small
        // steps: consecutive outputs differ in proportion to the step
        // (Lipschitz), and halving the step halves the difference.
        let path = |t: f32| {
            let a = Quat::from_axis_angle(Vec3::X, 0.8 * (1.0 - t));
            let b = Quat::from_axis_angle(Vec3::Z, 0.8 * t);
            b * a
        };
        let steps = 400;
        let mut prev = eval(&d, path(0.0));
        let mut worst = 0.0f32;
        for s in 1..=steps {
            let t = s as f32 / steps as f32;
            let y = eval(&d, path(t));
            for (a, b) in y.iter().zip(&prev) {
                worst = worst.max((a - b).abs());
            }
            prev = y;
        }
        // Rotation moves ≤ 1.6 rad over the path: 4e-3 rad per step.
        assert!(worst < 0.05, "{kernel:?}: jump {worst}");
        let fine = |s: f32| eval(&d, path(0.3 + s));
        let (y0, y1, y2) = (fine(0.0), fine(1e-3), fine(2e-3));
        for k in 0..n {
            let (d1, d2) = (y1[k] - y0[k], y2[k] - y1[k]);
            assert!((d1 - d2).abs() < 2e-4, "{kernel:?}: {d1} vs {d2}");
        }
    }
}

#[test]
fn singular_systems_name_the_driver() {
    let mut ex = examples();
    // A duplicate, and a duplicate with the opposite sign (the same rotation).
    for dup in [ex[2], -ex[2]] {
        ex.push(dup);
        let n = ex.len();
        let targets = vec![0.5; n];
        let fit = RbfFit {
            kernel: RbfKernel::Gaussian,
            sigma: 0.8,
            lambda: 0.0,
            examples: &ex,
            targets: &targets,
            outputs: 1,
        };
        match solve(&fit, 7) {
            Err(Error::InvalidDriver { driver: 7, what }) => assert!(what.contains("singular")),
            other => panic!("{other:?}"),
        }
        // Regularised, it solves, and is finite.
        let fit = RbfFit {
            lambda: 0.01,
            ..fit
        };
        let w = solve(&fit, 7).unwrap();
        assert!(w.iter().all(|x| x.is_finite()));
        ex.pop();
    }
    // Thin-plate with one example: Φ = [0].
    let one = [Quat::IDENTITY];
    let fit = RbfFit {
        kernel: RbfKernel::ThinPlate,
        sigma: 1.0,
        lambda: 0.0,
        examples: &one,
        targets: &[1.0],
        outputs: 1,
    };
    assert!(matches!(
        solve(&fit, 2),
        Err(Error::InvalidDriver { driver: 2, .. })
    ));
    // Nearly coincident Gaussian examples: a tiny pivot or a residual the
    // f32 weights cannot meet, never NaN.
    let close = [
        Quat::IDENTITY,
        Quat::from_rotation_x(1e-4),
        Quat::from_rotation_x(1.0),
    ];
    let fit = RbfFit {
        kernel: RbfKernel::Gaussian,
        sigma: 2.0,
        lambda: 0.0,
        examples: &close,
        targets: &[0.0, 1.0, 0.0],
        outputs: 1,
    };
    assert!(matches!(
        solve(&fit, 4),
        Err(Error::InvalidDriver { driver: 4, .. })
    ));
}

#[test]
fn solve_validates_its_input() {
    let ex = examples();
    let t = vec![0.0; ex.len()];
    let fit = RbfFit {
        kernel: RbfKernel::Gaussian,
        sigma: 0.8,
        lambda: 0.0,
        examples: &ex,
        targets: &t,
        outputs: 1,
    };
    let bad = |f: RbfFit<'_>| matches!(solve(&f, 3), Err(Error::InvalidDriver { driver: 3, .. }));
    assert!(bad(RbfFit { sigma: 0.0, ..fit }));
    assert!(bad(RbfFit {
        sigma: f32::NAN,
        ..fit
    }));
    assert!(bad(RbfFit {
        lambda: -1.0,
        ..fit
    }));
    assert!(bad(RbfFit { outputs: 0, ..fit }));
    assert!(bad(RbfFit { outputs: 2, ..fit }));
    assert!(bad(RbfFit {
        examples: &[],
        targets: &[],
        ..fit
    }));
    assert!(bad(RbfFit {
        examples: &[Quat::new(0.0, 0.0, 0.0, 2.0)],
        targets: &[1.0],
        ..fit
    }));
    let nan = [0.0, f32::NAN, 0.0, 0.0, 0.0, 0.0];
    assert!(bad(RbfFit {
        targets: &nan,
        ..fit
    }));
    let mut small = vec![0.0f64; fit.scratch_len() - 1];
    let mut w = vec![9.0f32; ex.len()];
    assert!(matches!(
        fit.solve(0, &mut small, &mut w),
        Err(Error::BufferTooSmall { .. })
    ));
    let mut scratch = vec![0.0f64; fit.scratch_len()];
    let mut short = vec![9.0f32; ex.len() - 1];
    assert!(matches!(
        fit.solve(0, &mut scratch, &mut short),
        Err(Error::BadLength { .. })
    ));
    assert!(w.iter().all(|&x| x == 9.0));
}

#[test]
fn hand_solved_two_example_system() {
    // Gaussian, σ = 1, examples 1 rad apart: Φ = [[1, g], [g, 1]] with
    // g = e^-1; Y = [1, 0] gives W = [1, -g] / (1 - g²).
    let ex = [Quat::IDENTITY, Quat::from_rotation_y(1.0)];
    let fit = RbfFit {
        kernel: RbfKernel::Gaussian,
        sigma: 1.0,
        lambda: 0.0,
        examples: &ex,
        targets: &[1.0, 0.0],
        outputs: 1,
    };
    let w = solve(&fit, 0).unwrap();
    let g = 1.0 / E;
    assert!((w[0] - 1.0 / (1.0 - g * g)).abs() < 1e-5);
    assert!((w[1] + g / (1.0 - g * g)).abs() < 1e-5);
    // Halfway (0.5 rad from both): (W0 + W1) e^-0.25 = e^-0.25 / (1 + g).
    let d = driver(&fit, &w, 0);
    let y = eval(&d, Quat::from_rotation_y(0.5));
    assert!((y[0] - libm::expf(-0.25) / (1.0 + g)).abs() < 1e-5);
}

#[test]
fn set_checks_drivers_and_places_outputs() {
    let ex = examples();
    let n = ex.len();
    let targets = one_hot(n);
    let fit = RbfFit {
        kernel: RbfKernel::Gaussian,
        sigma: 0.8,
        lambda: 0.0,
        examples: &ex,
        targets: &targets,
        outputs: n,
    };
    let w = solve(&fit, 0).unwrap();
    let two = [Quat::IDENTITY, Quat::from_rotation_z(1.0)];
    let fit2 = RbfFit {
        kernel: RbfKernel::Multiquadric,
        sigma: 0.5,
        lambda: 0.0,
        examples: &two,
        targets: &[0.0, 3.0],
        outputs: 1,
    };
    let w2 = solve(&fit2, 1).unwrap();
    let mut d2 = driver(&fit2, &w2, 2);
    d2.clamp = true;
    let drivers = [driver(&fit, &w, 1), d2];
    let set = RbfSet::new(&drivers, 3).unwrap();
    assert_eq!(set.output_count(), n + 1);
    let rot = [Quat::IDENTITY, ex[3].scale(-1.0), two[1]];
    let mut out = vec![0.0; n + 1];
    set.evaluate(&rot, &mut out).unwrap();
    for (k, &o) in out.iter().take(n).enumerate() {
        let want = if k == 3 { 1.0 } else { 0.0 };
        assert!((o - want).abs() < 1e-5);
    }
    // Driver 1's 3.0 at its second example, clamped.
    assert_eq!(out[n], 1.0);
    // The same from an SoA pose.
    let ts: Vec<Transform> = rot
        .iter()
        .map(|&r| Transform {
            rotation: r,
            ..Transform::IDENTITY
        })
        .collect();
    let mut pose = vec![crate::SoaTransform::IDENTITY; 1];
    pack(&ts, &mut pose).unwrap();
    let mut out2 = vec![0.0; n + 1];
    set.evaluate_pose(&pose, &mut out2).unwrap();
    for (a, b) in out.iter().zip(&out2) {
        assert!((a - b).abs() < 1e-6);
    }

    // Validation names the driver.
    let bad = |d: RbfDriver<'_>| {
        let ds = [drivers[0], d];
        match RbfSet::new(&ds, 3) {
            Err(Error::InvalidDriver { driver: 1, .. }) => true,
            other => panic!("{other:?}"),
        }
    };
    assert!(bad(RbfDriver { joint: 3, ..d2 }));
    assert!(bad(RbfDriver { sigma: -1.0, ..d2 }));
    assert!(bad(RbfDriver { outputs: 2, ..d2 }));
    assert!(bad(RbfDriver { outputs: 0, ..d2 }));
    assert!(bad(RbfDriver {
        examples: &[],
        weights: &[],
        ..d2
    }));
    assert!(bad(RbfDriver {
        weights: &[1.0, f32::INFINITY],
        ..d2
    }));
    assert!(bad(RbfDriver {
        examples: &[Quat::IDENTITY, Quat::new(0.0, 0.0, 0.5, 0.5)],
        ..d2
    }));

    // A NaN rotation is an error naming the driver; nothing is written.
    let mut out = vec![7.0; n + 1];
    let nan = [
        Quat::IDENTITY,
        Quat::IDENTITY,
        Quat::new(f32::NAN, 0.0, 0.0, 1.0),
    ];
    assert!(matches!(
        set.evaluate(&nan, &mut out),
        Err(Error::InvalidDriver { driver: 1, .. })
    ));
    assert!(out.iter().all(|&x| x == 7.0));
    assert!(matches!(
        set.evaluate(&rot[..2], &mut out),
        Err(Error::BadLength { .. })
    ));
    assert!(matches!(
        set.evaluate(&rot, &mut out[..n]),
        Err(Error::BadLength { .. })
    ));
}

#[test]
fn posed_deltas_divide_by_the_skinning_transform() {
    // Joint 0 scales by 2 and turns 90° about z; joint 1 is the identity.
    let m0 = Mat4::from_trs(
        Vec3::new(1.0, 2.0, 3.0),
        Quat::from_rotation_z(core::f32::consts::FRAC_PI_2),
        Vec3::splat(2.0),
    );
    let palette = [Mat3x4::from_mat4(&m0), Mat3x4::IDENTITY];
    let joints = [[0u16, 1, 0, 0]; 2];
    let weights = [[1.0f32, 0.0, 0.0, 0.0], [0.5, 0.5, 0.0, 0.0]];
    let infl = CheckedInfluences::new(&joints, &weights, 2).unwrap();
    let posed = [[0.0, 2.0, 0.0], [1.0, 1.0, 0.0]];
    let mut bind = [[9.0f32; 3]; 2];
    posed_deltas_to_bind(5, &palette, &infl, &posed, &mut bind).unwrap();
    // Vertex 0: M = 2 Rz(90°); M⁻¹ (0, 2, 0) = Rz(-90°) (0, 1, 0) = (1, 0, 0).
    assert!((v3(bind[0]) - Vec3::new(1.0, 0.0, 0.0)).length() < 1e-6);
    // Vertex 1: M = [[0.5, -1], [1, 0.5]] (xy) and 1.5 on z; M (x, y) = (1, 1)
    // gives x = 1.2, y = -0.4 (det 1.25: x = (0.5 + 1) / 1.25, y = (0.5 - 1) / 1.25).
    assert!((v3(bind[1]) - Vec3::new(1.2, -0.4, 0.0)).length() < 1e-6);

    // Vertex 1 blending opposite mirror images is singular; the shape is named.
    let mirror = Mat3x4 {
        rows: [
            [-1.0, 0.0, 0.0, 0.0],
            [0.0, 1.0, 0.0, 0.0],
            [0.0, 0.0, 1.0, 0.0],
        ],
    };
    let palette = [mirror, Mat3x4::IDENTITY];
    let mut bind = [[9.0f32; 3]; 2];
    let r = posed_deltas_to_bind(5, &palette, &infl, &posed, &mut bind);
    assert!(
        matches!(r, Err(Error::InvalidShape { shape: 5, .. })),
        "{r:?}"
    );
    assert_eq!(bind, [[9.0f32; 3]; 2]);
    // Wrong counts and non-finite deltas.
    let palette = [Mat3x4::IDENTITY; 2];
    let r = posed_deltas_to_bind(5, &palette, &infl, &posed[..1], &mut bind[..1]);
    assert!(matches!(r, Err(Error::InvalidShape { shape: 5, .. })));
    let r = posed_deltas_to_bind(5, &palette, &infl, &posed, &mut bind[..1]);
    assert!(matches!(r, Err(Error::BadLength { .. })));
    let r = posed_deltas_to_bind(5, &palette[..1], &infl, &posed, &mut bind);
    assert!(matches!(r, Err(Error::BadLength { .. })));
    let nan = [[0.0, f32::NAN, 0.0], [0.0; 3]];
    let r = posed_deltas_to_bind(5, &palette, &infl, &nan, &mut bind);
    assert!(matches!(r, Err(Error::InvalidShape { shape: 5, .. })));
}
