//! Shapes: drivers (correctives and a combination) and an RBF driver read
//! a bending elbow, blend shapes (dense and sparse) move a grid in bind
//! space, and delta mush smooths it, every frame.

use sinew_core::shape::blend::{pack_sparse, BlendOptions, BlendShapes, Deltas, Target};
use sinew_core::shape::driver::{Angle, Combination, Corrective, Driver, Ramp, ShapeDrivers};
use sinew_core::shape::mush::MushSettings;
use sinew_core::shape::rbf::{RbfDriver, RbfFit, RbfKernel, RbfSet};
use sinew_core::skin::{SkinOutput, SkinVertices};
use sinew_core::soa::SoaVec3;
use sinew_core::{soa_count, Error, Quat, SoaTransform, Transform, Vec3};
use sinew_std::mush::MushRig;

use crate::frames_allocate_nothing;

/// Side of the grid mesh, vertices.
const SIDE: usize = 24;

pub fn shapes_allocate_nothing() {
    // A flat grid, two triangles per cell.
    let n = SIDE * SIDE;
    let rest: Vec<[f32; 3]> = (0..n)
        .map(|i| [(i % SIDE) as f32 * 0.01, (i / SIDE) as f32 * 0.01, 0.0])
        .collect();
    let normals = vec![[0.0, 0.0, 1.0]; n];
    let mut triangles = Vec::new();
    for y in 0..SIDE as u32 - 1 {
        for x in 0..SIDE as u32 - 1 {
            let v = y * SIDE as u32 + x;
            let s = SIDE as u32;
            triangles.extend([v, v + 1, v + s, v + 1, v + s + 1, v + s]);
        }
    }

    // Two dense targets (a bulge, a tilt) and a sparse one (every third vertex).
    let bulge: Vec<[f32; 3]> = rest.iter().map(|p| [0.0, 0.0, p[0] * p[1]]).collect();
    let tilt: Vec<[f32; 3]> = rest.iter().map(|p| [0.0, 0.0, 0.1 * p[0]]).collect();
    let tilt_n: Vec<[f32; 3]> = rest.iter().map(|_| [-0.1, 0.0, 0.0]).collect();
    let indices: Vec<u32> = (0..n as u32).step_by(3).collect();
    let moved: Vec<[f32; 3]> = indices
        .iter()
        .map(|&i| [0.001 * i as f32, 0.0, 0.0])
        .collect();
    let mut packed = vec![SoaVec3::ZERO; soa_count(indices.len())];
    pack_sparse(&moved, &mut packed).expect("packs");
    let targets = [
        Target {
            positions: Some(Deltas::Dense(&bulge)),
            normals: None,
            tangents: None,
        },
        Target {
            positions: Some(Deltas::Dense(&tilt)),
            normals: Some(Deltas::Dense(&tilt_n)),
            tangents: None,
        },
        Target {
            positions: Some(Deltas::Sparse {
                indices: &indices,
                deltas: &packed,
            }),
            normals: None,
            tangents: None,
        },
    ];
    let shapes = BlendShapes::new(n, &targets).expect("valid targets");

    // Joint 1 (the elbow) bends about X; a twist corrective drives shape 0,
    // a swing corrective shape 1, and shape 2 is their product.
    let corrective = |shape, angle| {
        Driver::Corrective(Corrective {
            shape,
            joint: 1,
            reference: Quat::IDENTITY,
            angle,
            from: 0.0,
            to: 2.0,
            ramp: Ramp::Smoothstep,
        })
    };
    let inputs = [0, 1];
    let drivers = [
        corrective(0, Angle::Twist { axis: Vec3::X }),
        corrective(1, Angle::Swing { axis: Vec3::Y }),
        Driver::Combination(Combination {
            shape: 2,
            inputs: &inputs,
        }),
    ];
    let drivers = ShapeDrivers::new(3, 2, &drivers).expect("valid drivers");

    // An RBF over three elbow poses, solved once.
    let examples = [0.0f32, 1.0, 2.0].map(|a| Quat::from_axis_angle(Vec3::X, a));
    let fit = RbfFit {
        kernel: RbfKernel::Gaussian,
        sigma: 0.8,
        lambda: 0.0,
        examples: &examples,
        targets: &[0.0, 0.5, 1.0],
        outputs: 1,
    };
    let mut scratch = vec![0.0f64; fit.scratch_len()];
    let mut rbf_weights = vec![0.0f32; 3];
    fit.solve(0, &mut scratch, &mut rbf_weights)
        .expect("a regular system");
    let rbf = [RbfDriver {
        joint: 1,
        kernel: RbfKernel::Gaussian,
        sigma: 0.8,
        examples: &examples,
        weights: &rbf_weights,
        outputs: 1,
        clamp: true,
    }];
    let rbf = RbfSet::new(&rbf, 2).expect("valid RBF driver");

    let mut mush = MushRig::new(
        &rest,
        &triangles,
        MushSettings {
            iterations: 4,
            step: 1.0,
        },
    )
    .expect("a mesh");
    let mut pose = vec![SoaTransform::IDENTITY; 1];
    let mut weights = [0.0f32; 3];
    let mut rbf_out = [0.0f32; 1];
    let (mut positions, mut out_normals) = (vec![[0.0f32; 3]; n], vec![[0.0f32; 3]; n]);
    let mut smoothed = vec![[0.0f32; 3]; n];
    frames_allocate_nothing("shapes", 200, |frame| {
        let bend = 0.01 * (frame % 200) as f32;
        let elbow = Transform {
            rotation: Quat::from_axis_angle(Vec3::X, bend)
                * Quat::from_axis_angle(Vec3::Z, 0.5 * bend),
            ..Transform::IDENTITY
        };
        pose[0].set(1, &elbow);
        drivers.evaluate(&pose, &mut weights)?;
        rbf.evaluate_pose(&pose, &mut rbf_out)?;
        weights[2] = weights[2].max(rbf_out[0]);
        shapes.apply(
            &weights,
            BlendOptions::default(),
            SkinVertices {
                positions: &rest,
                normals: Some(&normals),
                tangents: None,
            },
            SkinOutput {
                positions: &mut positions,
                normals: Some(&mut out_normals),
                tangents: None,
            },
        )?;
        mush.deform(&positions, &mut smoothed)?;
        Ok::<f32, Error>(smoothed[n - 1][2] + out_normals[7][0] + weights[0] + weights[2] + 1.0)
    });
}
