//! Blend shapes and their drivers (`sinew_core::shape::{blend, driver}`):
//! every invalid input first, then each formula against values computed by
//! hand in the comments, then sparse = dense and the lane path = the scalar
//! twin on fixed cases.

use core::f32::consts::{FRAC_PI_2, FRAC_PI_3, FRAC_PI_4, PI};

use sinew_core::shape::blend::{pack_sparse, BlendOptions, BlendShapes, Deltas, Target};
use sinew_core::shape::driver::{Angle, Combination, Corrective, Driver, Ramp, ShapeDrivers};
use sinew_core::skin::{SkinOutput, SkinVertices};
use sinew_core::{soa_count, Error, Quat, SoaTransform, SoaVec3, Transform, Vec3};

const RAW: BlendOptions = BlendOptions {
    threshold: 0.0,
    renormalize: false,
};

fn positions_target(d: &[[f32; 3]]) -> Target<'_> {
    Target {
        positions: Some(Deltas::Dense(d)),
        ..Target::default()
    }
}

/// Applies `weights` to positions only, on the lane path and the scalar
/// twin, and checks they agree exactly (the cases use exact binary values).
fn blend_positions(
    shapes: &BlendShapes<'_>,
    weights: &[f32],
    options: BlendOptions,
    base: &[[f32; 3]],
) -> Result<Vec<[f32; 3]>, Error> {
    let mut lanes = vec![[f32::NAN; 3]; base.len()];
    let mut scalar = lanes.clone();
    shapes.apply(
        weights,
        options,
        SkinVertices::positions(base),
        SkinOutput::positions(&mut lanes),
    )?;
    shapes.apply_scalar(
        weights,
        options,
        SkinVertices::positions(base),
        SkinOutput::positions(&mut scalar),
    )?;
    assert_eq!(lanes, scalar);
    Ok(lanes)
}

fn pose_of(rotations: &[Quat]) -> Vec<SoaTransform> {
    let mut pose = vec![SoaTransform::IDENTITY; soa_count(rotations.len())];
    for (j, &r) in rotations.iter().enumerate() {
        pose[j / 4].set(j % 4, &Transform::new(Vec3::ZERO, r, Vec3::ONE));
    }
    pose
}

fn shape_error(e: Error) -> (u32, &'static str) {
    match e {
        Error::InvalidShape { shape, what } => (shape, what),
        other => panic!("expected InvalidShape, got {other:?}"),
    }
}

fn driver_error(e: Error) -> (u32, &'static str) {
    match e {
        Error::InvalidDriver { driver, what } => (driver, what),
        other => panic!("expected InvalidDriver, got {other:?}"),
    }
}

fn elbow(shape: u32, joint: u32) -> Corrective {
    Corrective {
        shape,
        joint,
        reference: Quat::IDENTITY,
        angle: Angle::Twist { axis: Vec3::X },
        from: 0.0,
        to: FRAC_PI_2,
        ramp: Ramp::Linear,
    }
}

// ---------------------------------------------------------------- validity

#[test]
fn targets_that_do_not_fit_the_mesh_are_named() {
    let good = [[0.0; 3]; 4];
    let short = [[0.0; 3]; 3];
    let targets = [positions_target(&good), positions_target(&short)];
    let (k, what) = shape_error(BlendShapes::new(4, &targets).unwrap_err());
    assert_eq!(k, 1);
    assert!(what.contains("length differs"), "{what}");

    // Normals of target 2 have the wrong length.
    let targets = [
        positions_target(&good),
        positions_target(&good),
        Target {
            normals: Some(Deltas::Dense(&short)),
            ..Target::default()
        },
    ];
    let (k, what) = shape_error(BlendShapes::new(4, &targets).unwrap_err());
    assert_eq!((k, what.contains("normal")), (2, true), "{what}");

    let nan = [[0.0, f32::NAN, 0.0]; 4];
    let targets = [positions_target(&nan)];
    let (k, what) = shape_error(BlendShapes::new(4, &targets).unwrap_err());
    assert_eq!((k, what.contains("NaN")), (0, true), "{what}");
}

#[test]
fn bad_sparse_targets_are_named() {
    let blocks = [SoaVec3::ZERO];
    let sparse = |indices: &'static [u32], deltas: &'static [SoaVec3]| Target {
        positions: Some(Deltas::Sparse { indices, deltas }),
        ..Target::default()
    };
    static ONE: [SoaVec3; 1] = [SoaVec3::ZERO];
    static TWO: [SoaVec3; 2] = [SoaVec3::ZERO; 2];
    let cases: [(Target<'static>, &str); 4] = [
        (sparse(&[0, 5], &ONE), "not below the vertex count"),
        (sparse(&[2, 1], &ONE), "strictly increasing"),
        (sparse(&[1, 1], &ONE), "strictly increasing"),
        (sparse(&[0, 1], &TWO), "block count"),
    ];
    for (bad, want) in cases {
        let ok = Target {
            positions: Some(Deltas::Sparse {
                indices: &[0, 3],
                deltas: &blocks,
            }),
            ..Target::default()
        };
        let targets = [ok, ok, bad];
        let (k, what) = shape_error(BlendShapes::new(4, &targets).unwrap_err());
        assert_eq!(k, 2);
        assert!(what.contains(want), "{what} should say {want}");
    }
    // A NaN in a padding lane is a bad delta too.
    let mut padded = [SoaVec3::ZERO];
    padded[0].set(3, Vec3::new(0.0, 0.0, f32::INFINITY));
    let targets = [Target {
        tangents: Some(Deltas::Sparse {
            indices: &[1],
            deltas: &padded,
        }),
        ..Target::default()
    }];
    let (_, what) = shape_error(BlendShapes::new(4, &targets).unwrap_err());
    assert!(what.contains("tangent"), "{what}");
    // Empty sparse targets are fine.
    let empty = [Target {
        positions: Some(Deltas::Sparse {
            indices: &[],
            deltas: &[],
        }),
        ..Target::default()
    }];
    assert!(BlendShapes::new(4, &empty).is_ok());
}

#[test]
fn bad_weights_and_buffers_are_rejected_and_nothing_is_written() {
    let d = [[1.0; 3]; 2];
    let targets = [positions_target(&d), positions_target(&d)];
    let shapes = BlendShapes::new(2, &targets).unwrap();
    let base = [[0.0; 3]; 2];
    let mut out = [[7.0; 3]; 2];
    let apply = |weights: &[f32], options: BlendOptions, out: &mut [[f32; 3]]| {
        shapes.apply(
            weights,
            options,
            SkinVertices::positions(&base),
            SkinOutput::positions(out),
        )
    };
    assert_eq!(
        shape_error(apply(&[0.5, f32::NAN], RAW, &mut out).unwrap_err()),
        (1, "weight is NaN or infinite")
    );
    assert_eq!(
        shape_error(apply(&[f32::INFINITY, 0.0], RAW, &mut out).unwrap_err()).0,
        0
    );
    assert!(matches!(
        apply(&[0.5], RAW, &mut out),
        Err(Error::BadLength {
            expected: 2,
            actual: 1,
            ..
        })
    ));
    for threshold in [-1.0, f32::NAN, f32::INFINITY] {
        let options = BlendOptions { threshold, ..RAW };
        assert!(matches!(
            apply(&[0.5, 0.5], options, &mut out),
            Err(Error::InvalidParameter { .. })
        ));
    }
    assert!(matches!(
        apply(&[0.5, 0.5], RAW, &mut out[..1]),
        Err(Error::BadLength { .. })
    ));
    assert_eq!(out, [[7.0; 3]; 2], "nothing written on error");

    // Output normals without base normals.
    let mut normals = [[0.0; 3]; 2];
    let err = shapes.apply(
        &[0.5, 0.5],
        RAW,
        SkinVertices::positions(&base),
        SkinOutput {
            positions: &mut out,
            normals: Some(&mut normals),
            tangents: None,
        },
    );
    assert!(matches!(
        err,
        Err(Error::BadLength {
            buffer: "normals",
            actual: 0,
            ..
        })
    ));
}

#[test]
fn bad_drivers_are_named() {
    let bad = |d: Driver<'static>| -> (u32, &'static str) {
        let drivers = [
            Driver::Corrective(elbow(0, 0)),
            Driver::Corrective(elbow(1, 1)),
            d,
        ];
        driver_error(ShapeDrivers::new(4, 2, &drivers).unwrap_err())
    };
    let cases: [(Driver<'static>, &str); 10] = [
        (
            Driver::Corrective(Corrective {
                to: 0.0,
                ..elbow(2, 0)
            }),
            "θ0 == θ1",
        ),
        (
            Driver::Corrective(Corrective {
                from: f32::NAN,
                ..elbow(2, 0)
            }),
            "NaN",
        ),
        (Driver::Corrective(elbow(2, 2)), "joint index"),
        (Driver::Corrective(elbow(4, 0)), "shape index"),
        (Driver::Corrective(elbow(1, 0)), "earlier driver"),
        (
            Driver::Corrective(Corrective {
                angle: Angle::Swing {
                    axis: Vec3::new(0.0, 2.0, 0.0),
                },
                ..elbow(2, 0)
            }),
            "unit vector",
        ),
        (
            Driver::Corrective(Corrective {
                reference: Quat::new(0.0, 0.0, 0.0, 0.0),
                ..elbow(2, 0)
            }),
            "reference",
        ),
        (
            Driver::Combination(Combination {
                shape: 2,
                inputs: &[],
            }),
            "no inputs",
        ),
        (
            Driver::Combination(Combination {
                shape: 2,
                inputs: &[0, 9],
            }),
            "input shape index",
        ),
        // Reads itself.
        (
            Driver::Combination(Combination {
                shape: 2,
                inputs: &[0, 2],
            }),
            "it or a later driver",
        ),
    ];
    for (d, want) in cases {
        let (p, what) = bad(d);
        assert_eq!(p, 2);
        assert!(what.contains(want), "{what} should say {want}");
    }
    // A combination that reads a shape a later driver writes (a cycle
    // would need one).
    let drivers = [
        Driver::Combination(Combination {
            shape: 0,
            inputs: &[1],
        }),
        Driver::Combination(Combination {
            shape: 1,
            inputs: &[0],
        }),
    ];
    let (p, what) = driver_error(ShapeDrivers::new(2, 0, &drivers).unwrap_err());
    assert_eq!(p, 0);
    assert!(what.contains("later driver"), "{what}");
}

#[test]
fn bad_poses_are_rejected_and_nothing_is_written() {
    let drivers = [
        Driver::Corrective(elbow(0, 0)),
        Driver::Corrective(elbow(1, 1)),
    ];
    let set = ShapeDrivers::new(2, 2, &drivers).unwrap();
    let mut weights = [0.25; 2];
    let nan = pose_of(&[Quat::IDENTITY, Quat::new(f32::NAN, 0.0, 0.0, 1.0)]);
    {
        let run = |pose: &[SoaTransform], w: &mut [f32]| set.evaluate(pose, w);
        assert_eq!(driver_error(run(&nan, &mut weights).unwrap_err()).0, 1);
        assert!(matches!(
            run(&[], &mut weights),
            Err(Error::BadLength { buffer: "pose", .. })
        ));
        assert!(matches!(
            run(&nan, &mut weights[..1]),
            Err(Error::BadLength {
                buffer: "shape weights",
                ..
            })
        ));
        assert_eq!(weights, [0.25; 2]);
    }
}

// ---------------------------------------------------------------- formulas

#[test]
fn blend_adds_weighted_deltas() {
    let base = [[1.0, 2.0, 3.0], [0.0, 0.0, 0.0], [-1.0, 0.5, 4.0]];
    let d0 = [[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, -4.0]];
    let d1 = [[0.5, 0.5, 0.5], [0.0, 0.0, 0.0], [1.0, -1.0, 0.25]];
    let targets = [positions_target(&d0), positions_target(&d1)];
    let shapes = BlendShapes::new(3, &targets).unwrap();
    // x = x0 + 0.5 d0 + 2 d1:
    // v0: (1 + 0.5 + 1, 2 + 0 + 1, 3 + 0 + 1) = (2.5, 3, 4)
    // v1: (0, 1, 0)
    // v2: (-1 + 0 + 2, 0.5 + 0 - 2, 4 - 2 + 0.5) = (1, -1.5, 2.5)
    let out = blend_positions(&shapes, &[0.5, 2.0], RAW, &base).unwrap();
    assert_eq!(out, [[2.5, 3.0, 4.0], [0.0, 1.0, 0.0], [1.0, -1.5, 2.5]]);
    // Negative weights subtract: x0 - d0.
    let out = blend_positions(&shapes, &[-1.0, 0.0], RAW, &base).unwrap();
    assert_eq!(out, [[0.0, 2.0, 3.0], [0.0, -2.0, 0.0], [-1.0, 0.5, 8.0]]);
}

#[test]
fn threshold_skips_exactly_the_small_weights() {
    let base = [[0.0; 3]];
    let d = [[1000.0, 0.0, 0.0]];
    let targets = [positions_target(&d), positions_target(&d)];
    let shapes = BlendShapes::new(1, &targets).unwrap();
    let at = |threshold: f32, weights: [f32; 2]| {
        let options = BlendOptions { threshold, ..RAW };
        blend_positions(&shapes, &weights, options, &base).unwrap()[0][0]
    };
    // |w| <= threshold is skipped: 0.125 at threshold 0.125 adds nothing,
    // -0.125 neither; the 0.25 adds 250.
    assert_eq!(at(0.125, [0.125, 0.25]), 250.0);
    assert_eq!(at(0.125, [-0.125, 0.25]), 250.0);
    // Just above the threshold it adds 1000 · 0.125 = 125.
    assert_eq!(at(0.124, [0.125, 0.25]), 375.0);
    // Threshold 0 skips exact zeros only; the output is the base, bit for bit.
    let neg_zero = [[-0.0, 1.0, 2.0]];
    let options = BlendOptions {
        threshold: 0.0,
        ..RAW
    };
    let out = blend_positions(&shapes, &[0.0, -0.0], options, &neg_zero).unwrap();
    assert_eq!(out[0][0].to_bits(), (-0.0f32).to_bits());
}

#[test]
fn normals_renormalise_and_tangents_keep_their_handedness() {
    let positions = [[0.0; 3]; 2];
    let normals = [[0.0, 1.0, 0.0], [0.0, 0.0, 2.0]];
    let tangents = [[1.0, 0.0, 0.0, -1.0], [0.0, 1.0, 0.0, 1.0]];
    let dn = [[1.0, -1.0, 0.0], [0.0, 0.0, 0.0]];
    let dt = [[-1.0, 1.0, 0.0], [0.0, 0.0, 0.0]];
    let targets = [Target {
        positions: None,
        normals: Some(Deltas::Dense(&dn)),
        tangents: Some(Deltas::Dense(&dt)),
    }];
    let shapes = BlendShapes::new(2, &targets).unwrap();
    for renormalize in [false, true] {
        for scalar in [false, true] {
            let (mut p, mut n, mut t) = ([[9.0; 3]; 2], [[9.0; 3]; 2], [[9.0; 4]; 2]);
            let base = SkinVertices {
                positions: &positions,
                normals: Some(&normals),
                tangents: Some(&tangents),
            };
            let out = SkinOutput {
                positions: &mut p,
                normals: Some(&mut n),
                tangents: Some(&mut t),
            };
            let options = BlendOptions {
                threshold: 0.0,
                renormalize,
            };
            if scalar {
                shapes.apply_scalar(&[0.5], options, base, out).unwrap();
            } else {
                shapes.apply(&[0.5], options, base, out).unwrap();
            }
            // A target without positions leaves them at the base.
            assert_eq!(p, positions);
            // n0 = (0, 1, 0) + 0.5 (1, -1, 0) = (0.5, 0.5, 0), unit: (√½, √½, 0).
            // n1 = (0, 0, 2) is untouched, unit: (0, 0, 1).
            // t0 = (1, 0, 0) + 0.5 (-1, 1, 0) = (0.5, 0.5, 0), w = -1 kept.
            let h = core::f32::consts::FRAC_1_SQRT_2;
            let (n0, n1, t0) = if renormalize {
                ([h, h, 0.0], [0.0, 0.0, 1.0], [h, h, 0.0, -1.0])
            } else {
                ([0.5, 0.5, 0.0], [0.0, 0.0, 2.0], [0.5, 0.5, 0.0, -1.0])
            };
            for (got, want) in n[0].iter().zip(n0).chain(n[1].iter().zip(n1)) {
                assert!((got - want).abs() < 1e-6, "{n:?}");
            }
            for (got, want) in t[0].iter().zip(t0) {
                assert!((got - want).abs() < 1e-6, "{t:?}");
            }
            assert_eq!(t[1], [0.0, 1.0, 0.0, 1.0]);
        }
    }
}

#[test]
fn sparse_targets_equal_their_dense_form() {
    // 9 vertices (off the lane width); the target moves 1, 4, 5, 6, 8.
    let base: Vec<[f32; 3]> = (0..9).map(|i| [i as f32, -(i as f32), 0.25]).collect();
    let moved = [1u32, 4, 5, 6, 8];
    let deltas = [
        [0.5, 0.0, 1.0],
        [-2.0, 1.0, 0.0],
        [0.0, 0.0, 3.0],
        [1.5, -1.5, 0.5],
        [4.0, 2.0, -1.0],
    ];
    let mut blocks = vec![SoaVec3::ZERO; soa_count(moved.len())];
    pack_sparse(&deltas, &mut blocks).unwrap();
    let mut dense = [[0.0; 3]; 9];
    for (&i, d) in moved.iter().zip(deltas) {
        dense[i as usize] = d;
    }
    let other = [[0.125, 0.25, -0.5]; 9];
    let sparse_set = [
        positions_target(&other),
        Target {
            positions: Some(Deltas::Sparse {
                indices: &moved,
                deltas: &blocks,
            }),
            ..Target::default()
        },
        positions_target(&other),
    ];
    let dense_set = [
        positions_target(&other),
        positions_target(&dense),
        positions_target(&other),
    ];
    let sparse_set = BlendShapes::new(9, &sparse_set).unwrap();
    let dense_set = BlendShapes::new(9, &dense_set).unwrap();
    let weights = [0.5, 0.75, -2.0];
    let s = blend_positions(&sparse_set, &weights, RAW, &base).unwrap();
    let d = blend_positions(&dense_set, &weights, RAW, &base).unwrap();
    assert_eq!(s, d);
    // Vertex 4: (4, -4, 0.25) + 0.5 o + 0.75 (-2, 1, 0) - 2 o, o = (0.125, 0.25, -0.5):
    // x = 4 + 0.0625 - 1.5 - 0.25 = 2.3125, y = -4 + 0.125 + 0.75 - 0.5 = -3.625,
    // z = 0.25 - 0.25 + 0 + 1 = 1.
    assert_eq!(s[4], [2.3125, -3.625, 1.0]);
}

#[test]
fn combination_is_the_product_of_its_inputs() {
    // Shapes: 0 smile, 1 jawOpen, 2 smile×jawOpen, 3 blink, 4 (smile×jaw)×blink.
    let drivers = [
        Driver::Combination(Combination {
            shape: 2,
            inputs: &[0, 1],
        }),
        Driver::Combination(Combination {
            shape: 4,
            inputs: &[2, 3],
        }),
    ];
    let set = ShapeDrivers::new(5, 0, &drivers).unwrap();
    let mut weights = [0.5, 0.75, 9.0, 0.5, 9.0];
    set.evaluate(&[], &mut weights).unwrap();
    // 0.5 · 0.75 = 0.375; 0.375 · 0.5 = 0.1875; inputs untouched.
    assert_eq!(weights, [0.5, 0.75, 0.375, 0.5, 0.1875]);
}

#[test]
fn correctives_map_hand_computed_angles() {
    // Joint 0: an elbow bent 90° about X. Joint 1: the upper arm (bone
    // along Y) swung 60° about Z after a 45° twist about Y. Joint 2: turned
    // 120° about X from a rest of 30° about X.
    let rotations = [
        Quat::from_rotation_x(FRAC_PI_2),
        Quat::from_rotation_z(FRAC_PI_3) * Quat::from_rotation_y(FRAC_PI_4),
        Quat::from_rotation_x(2.0 * FRAC_PI_3),
    ];
    let pose = pose_of(&rotations);
    let arm = |shape, angle, from, to, ramp| {
        Driver::Corrective(Corrective {
            shape,
            joint: 1,
            reference: Quat::IDENTITY,
            angle,
            from,
            to,
            ramp,
        })
    };
    let drivers = [
        // 90° bend over 0..120°: t = 90/120 = 0.75.
        Driver::Corrective(Corrective {
            to: 2.0 * FRAC_PI_3,
            ..elbow(0, 0)
        }),
        // The same, smoothstep: 0.75² (3 − 1.5) = 0.84375.
        Driver::Corrective(Corrective {
            to: 2.0 * FRAC_PI_3,
            ramp: Ramp::Smoothstep,
            ..elbow(1, 0)
        }),
        // Swing of Y: 60° over 0..90°: 2/3.
        arm(
            2,
            Angle::Swing { axis: Vec3::Y },
            0.0,
            FRAC_PI_2,
            Ramp::Linear,
        ),
        // Twist about Y: 45° over 0..90°, smoothstep of 0.5: 0.5.
        arm(
            3,
            Angle::Twist { axis: Vec3::Y },
            0.0,
            FRAC_PI_2,
            Ramp::Smoothstep,
        ),
        // Twist about Y over 60°..90°: 45° is below θ0: 0.
        arm(
            4,
            Angle::Twist { axis: Vec3::Y },
            FRAC_PI_3,
            FRAC_PI_2,
            Ramp::Linear,
        ),
        // Reversed range: weight 1 at 0° falling to 0 at 180°; the elbow's
        // total angle 90° gives (90 − 180)/(0 − 180) = 0.5.
        Driver::Corrective(Corrective {
            angle: Angle::Total,
            from: PI,
            to: 0.0,
            ..elbow(5, 0)
        }),
        // Joint 2 measured from its 30° rest: a 90° bend over 0..90°: 1.
        Driver::Corrective(Corrective {
            reference: Quat::from_rotation_x(FRAC_PI_3 / 2.0),
            ..elbow(6, 2)
        }),
        // Overextension: the elbow bent the other way reads a negative twist.
        Driver::Corrective(Corrective {
            from: 0.0,
            to: -FRAC_PI_2,
            ..elbow(7, 0)
        }),
    ];
    let set = ShapeDrivers::new(9, 3, &drivers).unwrap();
    let want = [0.75, 0.843_75, 2.0 / 3.0, 0.5, 0.0, 0.5, 1.0, 0.0, 0.125];
    {
        let mut weights = [0.125; 9];
        set.evaluate(&pose, &mut weights).unwrap();
        for (k, (got, want)) in weights.iter().zip(want).enumerate() {
            assert!((got - want).abs() < 2e-6, "shape {k}: {got} vs {want}");
        }
    }
}

#[test]
fn drivers_then_blend_move_the_bent_elbow_vertex() {
    // The corrective pushes vertex 1 out by 0.5 along Z at full bend.
    let base = [[0.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
    let fix = [[0.0, 0.0, 0.0], [0.0, 0.0, 0.5]];
    let targets = [positions_target(&fix)];
    let shapes = BlendShapes::new(2, &targets).unwrap();
    let drivers = [Driver::Corrective(elbow(0, 0))];
    let set = ShapeDrivers::new(shapes.target_count(), 1, &drivers).unwrap();
    // 45° of a 0..90° ramp: weight 0.5, z = 0.25.
    let pose = pose_of(&[Quat::from_rotation_x(FRAC_PI_4)]);
    let mut weights = [0.0];
    set.evaluate(&pose, &mut weights).unwrap();
    let out = blend_positions(&shapes, &weights, BlendOptions::default(), &base).unwrap();
    assert!((out[1][2] - 0.25).abs() < 1e-6, "{out:?}");
    assert_eq!(out[0], base[0]);
}
