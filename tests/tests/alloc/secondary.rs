//! Secondary motion: springs (one, in lanes, vectors, rotations), PD
//! controllers on the walking humanoid, a cloth cape pinned to its spine.

use sinew_core::clip::TimeMode;
use sinew_core::fk::{self, FkJob};
use sinew_core::secondary::cloth::{
    self, Cloth, ClothState, Compliance, Constraint, ConstraintKind, Grid, Pin,
};
use sinew_core::secondary::collider::{self, Collider, JointCollider};
use sinew_core::secondary::pd::{self, PdJob, PdJoint, PdState};
use sinew_core::secondary::spring::{
    advance_lanes, advance_scalar, QuatSpring, Spring, SpringLanes, SpringParams, Vec3Spring,
};
use sinew_core::{f32x4, Error, Mat4, Quat, SoaTransform, Vec3};
use sinew_std::Humanoid;

use crate::frames_allocate_nothing;

pub fn springs_allocate_nothing() {
    let params = SpringParams::frequency(2.0, 0.5).expect("valid spring");
    let step = params.step(1.0 / 60.0).expect("valid step");
    let mut one = Spring::at(0.0);
    let mut many = vec![Spring::at(0.0); 64];
    let mut lanes = vec![
        SpringLanes {
            value: f32x4::ZERO,
            velocity: f32x4::ZERO,
        };
        16
    ];
    let targets: Vec<f32> = (0..64).map(|i| i as f32 * 0.1).collect();
    let lane_targets: Vec<f32x4> = targets
        .chunks(4)
        .map(|c| f32x4::from([c[0], c[1], c[2], c[3]]))
        .collect();
    let mut v = Vec3Spring::at(Vec3::ZERO);
    let mut q = QuatSpring::at(Quat::IDENTITY);
    frames_allocate_nothing("springs", 300, |frame| {
        let t = frame as f32 / 60.0;
        let target = t.sin();
        let a = one.advance(target, &params, 1.0 / 60.0)?;
        advance_scalar(&mut many, &targets, &step)?;
        advance_lanes(&mut lanes, &lane_targets, &step)?;
        let b = v.advance(Vec3::new(target, 1.0, -target), &params, 1.0 / 60.0)?;
        let c = q.advance(Quat::from_axis_angle(Vec3::Y, target), &params, 1.0 / 60.0)?;
        Ok::<f32, Error>(a + b.x + c.y + many[7].value + lanes[3].value.to_array()[1])
    });
}

pub fn pd_controllers_allocate_nothing() {
    let h = Humanoid::default_rate();
    let skel = h.skeleton.view();
    let clip = h.clips[0].view();
    let mut lengths = vec![0.0; skel.joint_count()];
    pd::rest_bone_lengths(&skel, &mut lengths).expect("bone lengths");
    let joints: Vec<PdJoint> = lengths
        .iter()
        .map(|&l| PdJoint::from_half_life(0.1, 1.0, l.max(0.05)).expect("valid joint"))
        .collect();
    let mut animated = vec![SoaTransform::IDENTITY; skel.soa_count()];
    let mut out = animated.clone();
    let mut state = vec![PdState::default(); skel.joint_count()];
    clip.sample(0.0, TimeMode::Loop, &mut animated)
        .expect("sample");
    pd::reset(&animated, &mut state).expect("reset");
    frames_allocate_nothing("PD controllers", 120, |frame| {
        clip.sample(frame as f32 / 60.0, TimeMode::Loop, &mut animated)?;
        let steps = pd::step(
            &PdJob::new(&joints, &animated, 1.0 / 60.0),
            &mut state,
            &mut out,
        )?;
        Ok::<f32, Error>(steps.step + out[3].rotation.x.to_array()[1])
    });
}

pub fn cloth_allocates_nothing() {
    let h = Humanoid::default_rate();
    let skel = h.skeleton.view();
    let clip = h.clips[2].view();
    let spine = skel.find_joint("spine_03").expect("spine_03");
    let mut local = vec![SoaTransform::IDENTITY; skel.soa_count()];
    let mut models = vec![Mat4::IDENTITY; skel.joint_count()];
    fk::local_to_model(&FkJob::new(&skel, skel.rest_pose()), &mut models).expect("fk");
    let (columns, rows) = (8, 8);
    let n = columns * rows;
    let grid = Grid {
        columns,
        rows,
        origin: Vec3::new(-0.2, 1.45, -0.15),
        across: Vec3::new(0.4 / (columns - 1) as f32, 0.0, 0.0),
        down: Vec3::new(0.0, -0.09, 0.0),
        particle_mass: 0.02,
        compliance: Compliance {
            structural: 1e-6,
            shear: 1e-4,
            bend: 1e-3,
        },
    };
    let built = cloth::grid_constraint_count(columns, rows);
    let blank = Constraint {
        a: 0,
        b: 0,
        rest: 0.0,
        compliance: 0.0,
        kind: ConstraintKind::Structural,
    };
    let mut soa = vec![vec![0.0f32; n]; 6];
    let mut inv_mass = vec![0.0; n];
    let mut constraints = vec![blank; built + n];
    let mut lambda = vec![0.0; built + n];
    let [x, y, z, vx, vy, vz] = &mut soa[..] else {
        unreachable!("six arrays")
    };
    let mut state = ClothState {
        x,
        y,
        z,
        vx,
        vy,
        vz,
        lambda: &mut lambda,
    };
    cloth::build_grid(&grid, &mut state, &mut inv_mass, &mut constraints[..built]).expect("grid");
    let pins: Vec<Pin> = (0..columns)
        .map(|c| {
            inv_mass[c] = 0.0;
            let at = Vec3::new(state.x[c], state.y[c], state.z[c]);
            Pin::at(c as u32, spine as u16, &models[spine], at).expect("pin")
        })
        .collect();
    let tethers = cloth::build_tethers(
        state.x,
        state.y,
        state.z,
        &inv_mass,
        0.0,
        &mut constraints[built..],
    )
    .expect("tethers");
    constraints.truncate(built + tethers);
    let shapes = [JointCollider {
        joint: skel.find_joint("spine_01").expect("spine_01") as u16,
        shape: Collider::Capsule {
            a: Vec3::ZERO,
            b: Vec3::new(0.0, 0.3, 0.0),
            radius: 0.14,
        },
    }];
    let mut placed = [Collider::Sphere {
        center: Vec3::ZERO,
        radius: 0.0,
    }];
    let body = Cloth::new(&inv_mass, &constraints, &pins).expect("valid cloth");
    let settings = cloth::Settings::default();
    frames_allocate_nothing("cloth cape", 120, |frame| {
        clip.sample(frame as f32 / 60.0, TimeMode::Loop, &mut local)?;
        fk::local_to_model(&FkJob::new(&skel, &local), &mut models)?;
        collider::place(&shapes, &models, &mut placed)?;
        let steps = cloth::step(&body, &mut state, &settings, &models, &placed, 1.0 / 60.0)?;
        Ok::<f32, Error>(steps.step + state.y[n - 1])
    });
}
