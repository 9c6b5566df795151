extern crate alloc;

use alloc::vec;
use alloc::vec::Vec;

use proptest::prelude::*;

use super::*;
use crate::math::Quat;

/// A fan: centre 0 at (0, 0, 1), rim 1-4 at (1, 0, 0), (0, 1, 0),
/// (-1, 0, 0), (0, -1, 0), four triangles around the centre.
fn fan() -> (Vec<[f32; 3]>, Vec<u32>) {
    let p = vec![
        [0.0, 0.0, 1.0],
        [1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [-1.0, 0.0, 0.0],
        [0.0, -1.0, 0.0],
    ];
    (p, vec![0, 1, 2, 0, 2, 3, 0, 3, 4, 0, 4, 1])
}

/// A bumpy `w × h` grid in the xy plane, two triangles per cell.
fn grid(w: usize, h: usize) -> (Vec<[f32; 3]>, Vec<u32>) {
    let mut p = Vec::new();
    for y in 0..h {
        for x in 0..w {
            let (fx, fy) = (x as f32 * 0.1, y as f32 * 0.1);
            let z = 0.05 * libm::sinf(fx * 7.0) * libm::cosf(fy * 5.0)
                + 0.01 * ((x * 7 + y * 3) % 5) as f32;
            p.push([fx, fy, z]);
        }
    }
    let mut t = Vec::new();
    for y in 0..h - 1 {
        for x in 0..w - 1 {
            let i = (y * w + x) as u32;
            let (r, u, ru) = (i + 1, i + w as u32, i + w as u32 + 1);
            t.extend_from_slice(&[i, r, ru, i, ru, u]);
        }
    }
    (p, t)
}

struct Rig {
    offsets: Vec<u32>,
    neighbours: Vec<u32>,
    triangles: Vec<u32>,
    deltas: Vec<[f32; 4]>,
    settings: MushSettings,
}

impl Rig {
    fn new(rest: &[[f32; 3]], triangles: &[u32], settings: MushSettings) -> Rig {
        let n = rest.len();
        let mut offsets = vec![0; n + 1];
        let mut neighbours = vec![0; neighbour_capacity(triangles.len())];
        let used = build_adjacency(triangles, n, &mut offsets, &mut neighbours).unwrap();
        neighbours.truncate(used);
        let adj = MushAdjacency::new(&offsets, &neighbours).unwrap();
        let mut scratch = vec![[0.0; 4]; 2 * n];
        let mut deltas = vec![[0.0; 4]; n];
        rest_deltas(&adj, triangles, settings, rest, &mut scratch, &mut deltas).unwrap();
        Rig {
            offsets,
            neighbours,
            triangles: triangles.to_vec(),
            deltas,
            settings,
        }
    }

    fn mush(&self) -> DeltaMush<'_> {
        let adj = MushAdjacency::new(&self.offsets, &self.neighbours).unwrap();
        DeltaMush::new(adj, &self.triangles, &self.deltas, self.settings).unwrap()
    }

    /// (lanes, scalar twin).
    fn deform(&self, skinned: &[[f32; 3]]) -> (Vec<[f32; 3]>, Vec<[f32; 3]>) {
        let m = self.mush();
        let mut scratch = vec![[0.0; 4]; m.scratch_len()];
        let mut a = vec![[0.0; 3]; skinned.len()];
        let mut b = a.clone();
        m.deform(skinned, &mut scratch, &mut a).unwrap();
        reference::deform(&m, skinned, &mut scratch, &mut b).unwrap();
        (a, b)
    }
}

fn dist(a: [f32; 3], b: [f32; 3]) -> f32 {
    (Vec3::new(a[0], a[1], a[2]) - Vec3::new(b[0], b[1], b[2])).length()
}

fn max_dist(a: &[[f32; 3]], b: &[[f32; 3]]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| dist(x, y))
        .fold(0.0, f32::max)
}

const SETTINGS: MushSettings = MushSettings {
    iterations: 4,
    step: 1.0,
};

#[test]
fn adjacency_of_a_fan() {
    let (p, t) = fan();
    let mut offsets = vec![0; 6];
    let mut nb = vec![0; neighbour_capacity(t.len())];
    let used = build_adjacency(&t, p.len(), &mut offsets, &mut nb).unwrap();
    assert_eq!(offsets, [0, 4, 7, 10, 13, 16]);
    assert_eq!(used, 16);
    assert_eq!(
        &nb[..used],
        &[1, 2, 3, 4, 0, 2, 4, 0, 1, 3, 0, 2, 4, 0, 1, 3]
    );
    // A degenerate triangle and a repeated one add only distinct edges;
    // vertex 3 has no triangle and no neighbours.
    let t = [0, 1, 1, 0, 1, 2, 2, 1, 0];
    let mut offsets = vec![0; 5];
    let mut nb = vec![0; neighbour_capacity(t.len())];
    let used = build_adjacency(&t, 4, &mut offsets, &mut nb).unwrap();
    assert_eq!(offsets, [0, 2, 4, 6, 6]);
    assert_eq!(&nb[..used], &[1, 2, 0, 2, 0, 1]);
    let adj = MushAdjacency::new(&offsets, &nb[..used]).unwrap();
    assert_eq!(adj.neighbours(1), &[0, 2]);
    assert!(adj.neighbours(3).is_empty() && adj.neighbours(99).is_empty());
}

#[test]
fn adjacency_rejects_bad_input() {
    let mut offsets = vec![0; 4];
    let mut nb = vec![7; 12];
    fn corrupt<T>(r: Result<T, Error>) -> bool {
        matches!(r, Err(Error::Corrupt { .. }))
    }
    assert!(corrupt(build_adjacency(
        &[0, 1, 3],
        3,
        &mut offsets,
        &mut nb
    )));
    assert!(corrupt(build_adjacency(
        &[0, 1, 2, 0],
        3,
        &mut offsets,
        &mut nb
    )));
    assert!(matches!(
        build_adjacency(&[0, 1, 2], 4, &mut offsets, &mut nb),
        Err(Error::BadLength { .. })
    ));
    assert!(matches!(
        build_adjacency(&[0, 1, 2, 0, 2, 1], 3, &mut offsets, &mut nb[..11]),
        Err(Error::BufferTooSmall { needed: 12, .. })
    ));
    assert_eq!(offsets, [0; 4]);
    assert!(nb.iter().all(|&x| x == 7));
    // Views: a neighbour past the vertices, decreasing offsets, a wrong end.
    assert!(corrupt(MushAdjacency::new(&[0, 1, 2], &[1, 2])));
    assert!(corrupt(MushAdjacency::new(&[0, 2, 1, 2], &[1, 2])));
    assert!(corrupt(MushAdjacency::new(&[0, 1, 1], &[1, 0])));
    assert!(corrupt(MushAdjacency::new(&[1, 1], &[0])));
    assert!(corrupt(MushAdjacency::new(&[], &[])));
    assert!(MushAdjacency::new(&[0], &[]).is_ok());
}

#[test]
fn smoothing_a_fan_by_hand() {
    let (p, t) = fan();
    let mut offsets = vec![0; 6];
    let mut nb = vec![0; neighbour_capacity(t.len())];
    let used = build_adjacency(&t, 5, &mut offsets, &mut nb).unwrap();
    let adj = MushAdjacency::new(&offsets, &nb[..used]).unwrap();
    let mut scratch = vec![[0.0; 4]; 10];
    // Step 1: the centre goes to the rim's mean (0, 0, 0); rim vertex 1
    // to the mean of (0, 0, 1), (0, 1, 0), (0, -1, 0) = (0, 0, 1/3).
    let one = MushSettings {
        iterations: 1,
        step: 1.0,
    };
    let (s, _) = smooth(&adj, one, &p, &mut scratch);
    assert_eq!(s[0], [0.0, 0.0, 0.0, 0.0]);
    assert!(dist(v3(s[1]).to_array(), [0.0, 0.0, 1.0 / 3.0]) < 1e-7);
    assert!(dist(v3(s[2]).to_array(), [0.0, 0.0, 1.0 / 3.0]) < 1e-7);
    // Step 1/2: halfway: centre (0, 0, 1/2), vertex 1 (1/2, 0, 1/6).
    let half = MushSettings {
        iterations: 1,
        step: 0.5,
    };
    let (s, _) = smooth(&adj, half, &p, &mut scratch);
    assert!(dist(v3(s[0]).to_array(), [0.0, 0.0, 0.5]) < 1e-7);
    assert!(dist(v3(s[1]).to_array(), [0.5, 0.0, 1.0 / 6.0]) < 1e-7);
    // Two iterations of step 1: the centre goes to the mean of the rim's
    // (0, 0, 1/3) = (0, 0, 1/3); vertex 1 to the mean of (0,0,0) and two
    // (0, 0, 1/3) = (0, 0, 2/9).
    let two = MushSettings {
        iterations: 2,
        step: 1.0,
    };
    let (s, _) = smooth(&adj, two, &p, &mut scratch);
    assert!(dist(v3(s[0]).to_array(), [0.0, 0.0, 1.0 / 3.0]) < 1e-7);
    assert!(dist(v3(s[1]).to_array(), [0.0, 0.0, 2.0 / 9.0]) < 1e-7);

    // The frame of the centre after one step-1 iteration: every rim vertex
    // is at (0, 0, 1/3) and the centre at 0, so the fan is a spike: the
    // normals of its triangles cancel in x and y.
    let (s, nrm) = smooth(&adj, one, &p, &mut scratch);
    normals(&t, s, nrm);
    let n0 = v3(nrm[0]);
    assert!(n0.x.abs() < 1e-7 && n0.y.abs() < 1e-7);
    // Unsmoothed, the centre's normal is the sum of the four triangle
    // normals, (b - a) × (c - a) = (1, 1, 1) per triangle rotated about z:
    // (0, 0, 4).
    let none = MushSettings {
        iterations: 0,
        step: 1.0,
    };
    let (s, nrm) = smooth(&adj, none, &p, &mut scratch);
    normals(&t, s, nrm);
    assert_eq!(v3(nrm[0]), Vec3::new(0.0, 0.0, 4.0));
    let f = vertex_frame(&adj, s, nrm, 0).unwrap();
    // First neighbour is vertex 1: tangent along +x, normal +z, bitangent +y.
    assert!((f[0] - Vec3::X).length() < 1e-6);
    assert!((f[1] - Vec3::Y).length() < 1e-6);
    assert!((f[2] - Vec3::Z).length() < 1e-6);
}

#[test]
fn rest_pose_returns_the_rest_mesh() {
    let (p, t) = grid(12, 9);
    for settings in [
        SETTINGS,
        MushSettings {
            iterations: 10,
            step: 0.5,
        },
    ] {
        let rig = Rig::new(&p, &t, settings);
        assert!(rig.deltas.iter().all(|d| d[3] == 1.0));
        let (a, b) = rig.deform(&p);
        assert!(max_dist(&a, &p) < 1e-5, "{}", max_dist(&a, &p));
        assert!(max_dist(&b, &p) < 1e-5, "{}", max_dist(&b, &p));
    }
    let (p, t) = fan();
    let rig = Rig::new(&p, &t, SETTINGS);
    let (a, _) = rig.deform(&p);
    assert!(max_dist(&a, &p) < 1e-5);
}

#[test]
fn rigid_motion_moves_the_rest_mesh_rigidly() {
    let (p, t) = grid(12, 9);
    let rig = Rig::new(&p, &t, SETTINGS);
    let q = Quat::from_axis_angle(Vec3::new(0.48, 0.6, 0.64), 2.1);
    let shift = Vec3::new(3.0, -1.0, 0.5);
    let moved: Vec<[f32; 3]> = p
        .iter()
        .map(|&x| (q.rotate(Vec3::new(x[0], x[1], x[2])) + shift).to_array())
        .collect();
    let (a, b) = rig.deform(&moved);
    assert!(max_dist(&a, &moved) < 1e-5, "{}", max_dist(&a, &moved));
    assert!(max_dist(&b, &moved) < 1e-5);
}

#[test]
fn isolated_and_degenerate_vertices_keep_their_skinned_position() {
    // Vertex 5 is in no triangle.
    let (mut p, t) = fan();
    p.push([5.0, 5.0, 5.0]);
    let rig = Rig::new(&p, &t, SETTINGS);
    assert_eq!(rig.deltas[5], [0.0; 4]);
    let mut moved = p.clone();
    moved[5] = [1.0, 2.0, 3.0];
    let (a, b) = rig.deform(&moved);
    assert_eq!(a[5], [1.0, 2.0, 3.0]);
    assert_eq!(b[5], [1.0, 2.0, 3.0]);
    // A collapsed mesh (every vertex at one point) has no frames.
    let flat = vec![[1.0, 1.0, 1.0]; 6];
    let (a, b) = rig.deform(&flat);
    assert_eq!(a, flat);
    assert_eq!(b, flat);
}

#[test]
fn delta_weight_blends_towards_the_skinned_position() {
    let (p, t) = grid(6, 6);
    let mut rig = Rig::new(&p, &t, SETTINGS);
    let skinned: Vec<[f32; 3]> = p
        .iter()
        .map(|x| [x[0], x[1], x[2] + 0.3 * x[0] * x[0]])
        .collect();
    let (full, _) = rig.deform(&skinned);
    for d in &mut rig.deltas {
        d[3] = 0.25;
    }
    let (quarter, qb) = rig.deform(&skinned);
    for ((f, q), s) in full.iter().zip(&quarter).zip(&skinned) {
        for k in 0..3 {
            assert!((q[k] - (s[k] + 0.25 * (f[k] - s[k]))).abs() < 1e-6);
        }
    }
    assert!(max_dist(&quarter, &qb) < 1e-5);
}

#[test]
fn bad_input_errors() {
    let (p, t) = fan();
    let rig = Rig::new(&p, &t, SETTINGS);
    let adj = MushAdjacency::new(&rig.offsets, &rig.neighbours).unwrap();
    let bad_tri = [0, 1, 5];
    assert!(matches!(
        DeltaMush::new(adj, &bad_tri, &rig.deltas, SETTINGS),
        Err(Error::Corrupt { .. })
    ));
    assert!(matches!(
        DeltaMush::new(adj, &t, &rig.deltas[..4], SETTINGS),
        Err(Error::BadLength { .. })
    ));
    let mut d = rig.deltas.clone();
    d[2][3] = 1.5;
    assert!(matches!(
        DeltaMush::new(adj, &t, &d, SETTINGS),
        Err(Error::InvalidParameter { .. })
    ));
    d[2] = [f32::NAN, 0.0, 0.0, 1.0];
    assert!(matches!(
        DeltaMush::new(adj, &t, &d, SETTINGS),
        Err(Error::NonFinite { .. })
    ));
    for step in [0.0, 1.5, f32::NAN] {
        let s = MushSettings {
            iterations: 1,
            step,
        };
        assert!(matches!(
            DeltaMush::new(adj, &t, &rig.deltas, s),
            Err(Error::InvalidParameter { .. })
        ));
    }
    let m = rig.mush();
    let mut scratch = vec![[0.0; 4]; 10];
    let mut out = vec![[9.0; 3]; 5];
    let bad = |r: Result<(), Error>| matches!(r, Err(Error::BadLength { .. }));
    assert!(bad(m.deform(&p[..4], &mut scratch, &mut out)));
    assert!(bad(m.deform(&p, &mut scratch[..9], &mut out)));
    assert!(bad(m.deform(&p, &mut scratch, &mut out[..4])));
    assert!(bad(reference::deform(&m, &p, &mut scratch[..9], &mut out)));
    assert!(out.iter().all(|o| *o == [9.0; 3]));
    // Offline: lengths, non-finite rest positions.
    let mut deltas = vec![[0.0; 4]; 5];
    assert!(bad(rest_deltas(
        &adj,
        &t,
        SETTINGS,
        &p[..4],
        &mut scratch,
        &mut deltas
    )));
    assert!(bad(rest_deltas(
        &adj,
        &t,
        SETTINGS,
        &p,
        &mut scratch[..9],
        &mut deltas
    )));
    let mut nan = p.clone();
    nan[3][1] = f32::INFINITY;
    assert!(matches!(
        rest_deltas(&adj, &t, SETTINGS, &nan, &mut scratch, &mut deltas),
        Err(Error::NonFinite { .. })
    ));
    assert!(deltas.iter().all(|d| *d == [0.0; 4]));
}

#[test]
fn nan_input_spreads_without_panicking() {
    let (p, t) = grid(5, 5);
    let rig = Rig::new(&p, &t, SETTINGS);
    let mut s = p.clone();
    s[12] = [f32::NAN, 0.0, 0.0];
    let (a, b) = rig.deform(&s);
    assert_eq!(a.len(), 25);
    assert_eq!(b.len(), 25);
}

proptest! {
    #[test]
    fn lanes_agree_with_the_scalar_twin(
        bend in -1.5f32..1.5,
        noise in proptest::collection::vec(-0.05f32..0.05, 60 * 3),
        iterations in 0u32..6,
        step in 0.2f32..1.0,
    ) {
        let (p, t) = grid(10, 6);
        let settings = MushSettings { iterations, step };
        let rig = Rig::new(&p, &t, settings);
        // Bend about the y axis at x = 0.45 with LBS-like collapse, plus noise.
        let skinned: Vec<[f32; 3]> = p
            .iter()
            .enumerate()
            .map(|(i, x)| {
                let a = bend * ((x[0] - 0.45) / 0.45).clamp(0.0, 1.0);
                let q = Quat::from_rotation_y(a);
                let r = q.rotate(Vec3::new(x[0] - 0.45, x[1], x[2])) + Vec3::new(0.45, 0.0, 0.0);
                [r.x + noise[3 * i], r.y + noise[3 * i + 1], r.z + noise[3 * i + 2]]
            })
            .collect();
        let (a, b) = rig.deform(&skinned);
        prop_assert!(max_dist(&a, &b) < 1e-5, "{}", max_dist(&a, &b));
    }
}
