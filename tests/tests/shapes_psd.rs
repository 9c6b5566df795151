//! Pose-space deformation and delta mush on a skinned mesh: a tube over
//! two joints bent at the elbow, skinned by the SIMD LBS job.
//!
//! - A corrective authored in posed space, taken back to bind space and
//!   added before skinning, reproduces the authored shift after skinning.
//! - An RBF driver on the elbow switches that corrective on in the bent
//!   pose and off at rest.
//! - Delta mush of the bind pose returns the rest mesh; in the bent pose,
//!   vertices farther from every blended vertex than the iteration count
//!   (in edges) come back at their LBS positions, since they and every
//!   vertex they are averaged with moved rigidly.

use sinew_core::shape::mush::{
    build_adjacency, neighbour_capacity, rest_deltas, DeltaMush, MushAdjacency, MushSettings,
};
use sinew_core::shape::rbf::{posed_deltas_to_bind, RbfDriver, RbfFit, RbfKernel, RbfSet};
use sinew_core::skin::{
    lbs_palette, CheckedInfluences, Mat3x4, SkinAttributes, SkinJob, SkinMethod, SkinOutput,
    SkinVertices,
};
use sinew_core::{Mat4, Quat, Vec3};

const RINGS: usize = 41;
const AROUND: usize = 8;

/// A tube along x from 0 to 2 (radius 0.2), joint 1 blending in over
/// x in [0.8, 1.2].
struct Tube {
    positions: Vec<[f32; 3]>,
    triangles: Vec<u32>,
    joints: Vec<[u16; 4]>,
    weights: Vec<[f32; 4]>,
}

fn tube() -> Tube {
    let mut t = Tube {
        positions: Vec::new(),
        triangles: Vec::new(),
        joints: Vec::new(),
        weights: Vec::new(),
    };
    for r in 0..RINGS {
        let x = 2.0 * r as f32 / (RINGS - 1) as f32;
        let w1 = ((x - 0.8) / 0.4).clamp(0.0, 1.0);
        for a in 0..AROUND {
            let ang = std::f32::consts::TAU * a as f32 / AROUND as f32;
            t.positions.push([x, 0.2 * ang.cos(), 0.2 * ang.sin()]);
            t.joints.push([0, 1, 0, 0]);
            t.weights.push([1.0 - w1, w1, 0.0, 0.0]);
        }
    }
    for r in 0..RINGS - 1 {
        for a in 0..AROUND {
            let i = |r: usize, a: usize| (r * AROUND + a % AROUND) as u32;
            let (p, q, s, u) = (i(r, a), i(r, a + 1), i(r + 1, a), i(r + 1, a + 1));
            t.triangles.extend_from_slice(&[p, q, u, p, u, s]);
        }
    }
    t
}

/// The LBS palette with the upper joint turned by `shoulder` and the elbow
/// (at x = 1) by `elbow`, both about z.
fn palette(shoulder: f32, elbow: f32) -> [Mat3x4; 2] {
    let t1 = Mat4::from_translation(Vec3::new(1.0, 0.0, 0.0));
    let inverse_binds = [
        Mat4::IDENTITY,
        Mat4::from_translation(Vec3::new(-1.0, 0.0, 0.0)),
    ];
    let r0 = Mat4::from_trs(Vec3::ZERO, Quat::from_rotation_z(shoulder), Vec3::ONE);
    let r1 = Mat4::from_trs(Vec3::ZERO, Quat::from_rotation_z(elbow), Vec3::ONE);
    let models = [r0, r0 * t1 * r1];
    let mut out = [Mat3x4::IDENTITY; 2];
    lbs_palette(&models, &inverse_binds, &mut out).unwrap();
    out
}

fn skin(palette: &[Mat3x4], infl: &CheckedInfluences<'_>, input: &[[f32; 3]]) -> Vec<[f32; 3]> {
    let mut out = vec![[0.0; 3]; input.len()];
    SkinJob {
        method: SkinMethod::Lbs { palette },
        influences: infl,
        attributes: SkinAttributes::Arrays {
            input: SkinVertices::positions(input),
            output: SkinOutput::positions(&mut out),
        },
    }
    .run()
    .unwrap();
    out
}

fn dist(a: [f32; 3], b: [f32; 3]) -> f32 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

/// An authored posed-space corrective: a bulge on the inside of the elbow.
fn authored(posed: &[[f32; 3]]) -> Vec<[f32; 3]> {
    posed
        .iter()
        .map(|p| {
            let d = ((p[0] - 0.9).powi(2) + (p[1] - 0.3).powi(2)).sqrt();
            let s = 0.08 * (-(d / 0.3).powi(2)).exp();
            [0.5 * s, s, -0.3 * s]
        })
        .collect()
}

#[test]
fn posed_corrective_reproduces_itself_after_skinning() {
    let t = tube();
    let infl = CheckedInfluences::new(&t.joints, &t.weights, 2).unwrap();
    let pal = palette(0.3, 1.4);
    let posed = skin(&pal, &infl, &t.positions);
    let shift = authored(&posed);
    let mut bind = vec![[0.0; 3]; shift.len()];
    posed_deltas_to_bind(0, &pal, &infl, &shift, &mut bind).unwrap();
    let moved: Vec<[f32; 3]> = t
        .positions
        .iter()
        .zip(&bind)
        .map(|(p, d)| [p[0] + d[0], p[1] + d[1], p[2] + d[2]])
        .collect();
    let corrected = skin(&pal, &infl, &moved);
    for ((c, p), s) in corrected.iter().zip(&posed).zip(&shift) {
        let want = [p[0] + s[0], p[1] + s[1], p[2] + s[2]];
        assert!(dist(*c, want) < 1e-4, "{c:?} vs {want:?}");
    }
    // The blended vertices are not rigid, so their bind deltas differ from a
    // rotation of the authored ones (the test is not trivially passing).
    let mid = 20 * AROUND + 1;
    let len = |v: [f32; 3]| dist(v, [0.0; 3]);
    assert!((len(bind[mid]) - len(shift[mid])).abs() > 1e-3);
}

#[test]
fn rbf_driver_switches_the_corrective_with_the_elbow() {
    // Examples: the elbow straight (weight 0) and bent 1.4 rad (weight 1),
    // plus bent the other way (weight 0).
    let examples = [
        Quat::IDENTITY,
        Quat::from_rotation_z(1.4),
        Quat::from_rotation_z(-1.4),
    ];
    let targets = [0.0, 1.0, 0.0];
    let fit = RbfFit {
        kernel: RbfKernel::Gaussian,
        sigma: 1.0,
        lambda: 0.0,
        examples: &examples,
        targets: &targets,
        outputs: 1,
    };
    let mut scratch = vec![0.0f64; fit.scratch_len()];
    let mut w = [0.0f32; 3];
    fit.solve(0, &mut scratch, &mut w).unwrap();
    let drivers = [RbfDriver {
        joint: 1,
        kernel: fit.kernel,
        sigma: fit.sigma,
        examples: &examples,
        weights: &w,
        outputs: 1,
        clamp: true,
    }];
    let set = RbfSet::new(&drivers, 2).unwrap();

    let t = tube();
    let infl = CheckedInfluences::new(&t.joints, &t.weights, 2).unwrap();
    let pal = palette(0.3, 1.4);
    let posed = skin(&pal, &infl, &t.positions);
    let shift = authored(&posed);
    let mut bind = vec![[0.0; 3]; shift.len()];
    posed_deltas_to_bind(0, &pal, &infl, &shift, &mut bind).unwrap();

    let frame = |shoulder: f32, elbow: f32| {
        let mut weight = [0.0f32];
        let rotations = [
            Quat::from_rotation_z(shoulder),
            Quat::from_rotation_z(elbow),
        ];
        set.evaluate(&rotations, &mut weight).unwrap();
        let moved: Vec<[f32; 3]> = t
            .positions
            .iter()
            .zip(&bind)
            .map(|(p, d)| {
                [
                    p[0] + weight[0] * d[0],
                    p[1] + weight[0] * d[1],
                    p[2] + weight[0] * d[2],
                ]
            })
            .collect();
        (weight[0], skin(&palette(shoulder, elbow), &infl, &moved))
    };
    let (w_bent, bent) = frame(0.3, 1.4);
    assert!((w_bent - 1.0).abs() < 1e-5);
    for ((c, p), s) in bent.iter().zip(&posed).zip(&shift) {
        assert!(dist(*c, [p[0] + s[0], p[1] + s[1], p[2] + s[2]]) < 1e-4);
    }
    let (w_rest, rest) = frame(0.0, 0.0);
    assert!(w_rest.abs() < 1e-5);
    for (c, p) in rest.iter().zip(&t.positions) {
        assert!(dist(*c, *p) < 1e-4);
    }
    // Halfway the weight is in between, and it rises with the bend.
    let (w_half, _) = frame(0.3, 0.7);
    assert!(w_half > 0.05 && w_half < 0.95, "{w_half}");
    let (w_more, _) = frame(0.3, 1.0);
    assert!(w_more > w_half);
}

#[test]
fn delta_mush_on_a_bent_elbow() {
    let t = tube();
    let n = t.positions.len();
    let infl = CheckedInfluences::new(&t.joints, &t.weights, 2).unwrap();
    let mut offsets = vec![0u32; n + 1];
    let mut neighbours = vec![0u32; neighbour_capacity(t.triangles.len())];
    let used = build_adjacency(&t.triangles, n, &mut offsets, &mut neighbours).unwrap();
    neighbours.truncate(used);
    let adj = MushAdjacency::new(&offsets, &neighbours).unwrap();
    let settings = MushSettings {
        iterations: 4,
        step: 1.0,
    };
    let mut scratch = vec![[0.0f32; 4]; 2 * n];
    let mut deltas = vec![[0.0f32; 4]; n];
    rest_deltas(
        &adj,
        &t.triangles,
        settings,
        &t.positions,
        &mut scratch,
        &mut deltas,
    )
    .unwrap();
    let mush = DeltaMush::new(adj, &t.triangles, &deltas, settings).unwrap();
    let mut out = vec![[0.0f32; 3]; n];

    // Bind pose.
    let rest = skin(&palette(0.0, 0.0), &infl, &t.positions);
    mush.deform(&rest, &mut scratch, &mut out).unwrap();
    for (o, p) in out.iter().zip(&t.positions) {
        assert!(dist(*o, *p) < 1e-5);
    }

    // Strongly bent: rings more than 4 edges from the blended band
    // (x in (0.8, 1.2): rings 17-23) are rigid and come back as LBS.
    let lbs = skin(&palette(0.3, 2.2), &infl, &t.positions);
    mush.deform(&lbs, &mut scratch, &mut out).unwrap();
    for (v, (o, l)) in out.iter().zip(&lbs).enumerate() {
        let ring = v / AROUND;
        if !(12..=28).contains(&ring) {
            assert!(dist(*o, *l) < 1e-4, "vertex {v}: {o:?} vs {l:?}");
        }
        assert!(o.iter().all(|x| x.is_finite()));
    }
    // And it changes the bent band (it is not the identity).
    let inner = 20 * AROUND + AROUND / 4;
    assert!(dist(out[inner], lbs[inner]) > 1e-3);
}
