//! Skinning: validity (every bad input gives its exact error and leaves the
//! output alone), the worked examples (elbow, twists, 2D LBS), the DQS scale
//! policy, properties (one influence, rigid DQS, bind pose, SIMD == scalar,
//! strided == separate arrays, influences checked once == checked per call,
//! every method x influences x layout of the job == the scalar reference)
//! and the real glTF meshes in `../shared/data`.
//!
//! The SIMD kernels run through [`SkinJob`] (`job`): `job_arrays` and
//! `job_strided` check the four influences in the call (as a caller whose
//! influences change every frame does), the other calls take a
//! [`CheckedInfluences`] built once.

#[path = "../support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use sinew_core::fk::{self, FkJob};
use sinew_core::skin::{
    self, check_influences, normalize_weights, reference, CheckedInfluences, DqsBinds, DualQuat,
    LbsBind, Mat3x4, SkinAttributes, SkinInput, SkinJob, SkinMethod, SkinOutput, SkinVertices,
    StridedVertices, StridedVerticesMut, WEIGHT_SUM_TOLERANCE,
};
use sinew_core::{Error, Mat4, Quat, Transform, Vec3};
use support::*;

type LbsFn = fn(&[Mat3x4], &SkinInput<'_>, &mut SkinOutput<'_>) -> Result<(), Error>;
type DqsFn = fn(&[DualQuat], &SkinInput<'_>, &mut SkinOutput<'_>) -> Result<(), Error>;
type MixFn =
    fn(&[Mat3x4], &[DualQuat], &[f32], &SkinInput<'_>, &mut SkinOutput<'_>) -> Result<(), Error>;
type LbsPaletteFn = fn(&[Mat4], &[Mat4], &mut [Mat3x4]) -> Result<(), Error>;
type DqsPaletteFn = fn(&[Mat4], &[Mat4], &mut [DualQuat]) -> Result<(), Error>;

/// The job (four influences checked in the call) and the reference's plain
/// forms, side by side.
const LBS: [(&str, LbsFn); 2] = [
    ("job", |palette, i, o| {
        job_arrays(SkinMethod::Lbs { palette }, i, o)
    }),
    ("reference", reference::skin_lbs),
];
const DQS: [(&str, DqsFn); 2] = [
    ("job", |palette, i, o| {
        job_arrays(SkinMethod::Dqs { palette }, i, o)
    }),
    ("reference", reference::skin_dqs),
];
const JOB_LBS: LbsFn = LBS[0].1;
const JOB_DQS: DqsFn = DQS[0].1;
const MIXED: [(&str, MixFn); 2] = [
    ("job", |lbs, dqs, mix, input, out| {
        job_arrays(SkinMethod::Mixed { lbs, dqs, mix }, input, out)
    }),
    ("reference", reference::skin_mixed),
];
const LBS_PALETTE: [(&str, LbsPaletteFn); 3] = [
    ("simd", skin::lbs_palette),
    ("prepared", lbs_palette_prepared),
    ("reference", reference::lbs_palette),
];
const DQS_PALETTE: [(&str, DqsPaletteFn); 3] = [
    ("simd", skin::dqs_palette),
    ("prepared", dqs_palette_prepared),
    ("reference", reference::dqs_palette),
];

const SENTINEL: f32 = 7.0;

/// [`skin::lbs_palette_prepared`] with the binds prepared here (as many as
/// `ibm`, so a wrong `ibm` length is a wrong binds length).
fn lbs_palette_prepared(models: &[Mat4], ibm: &[Mat4], out: &mut [Mat3x4]) -> Result<(), Error> {
    let mut binds = vec![LbsBind::default(); ibm.len()];
    skin::prepare_lbs_binds(ibm, &mut binds)?;
    skin::lbs_palette_prepared(models, &binds, out)
}

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/// An interleaved source of stride 10: position at 0, normal at 3,
/// tangent at 6.
fn stride10(data: &[f32]) -> StridedVertices<'_> {
    StridedVertices {
        data,
        stride: 10,
        position: 0,
        normal: Some(3),
        tangent: Some(6),
    }
}

/// The joint count a method's palettes have (the LBS one for the mix).
fn palette_len(method: &SkinMethod<'_>) -> usize {
    match *method {
        SkinMethod::Lbs { palette } => palette.len(),
        SkinMethod::Dqs { palette } => palette.len(),
        SkinMethod::Mixed { lbs, .. } => lbs.len(),
    }
}

/// Runs the [`SkinJob`] of `method` over `attributes`.
fn job(
    method: SkinMethod<'_>,
    influences: &CheckedInfluences<'_>,
    attributes: SkinAttributes<'_>,
) -> Result<(), Error> {
    SkinJob {
        method,
        influences,
        attributes,
    }
    .run()
}

/// A [`job`] over separate arrays with the four influences of `input`
/// checked against the method's palette in the call.
fn job_arrays(
    method: SkinMethod<'_>,
    input: &SkinInput<'_>,
    out: &mut SkinOutput<'_>,
) -> Result<(), Error> {
    let infl = CheckedInfluences::new(input.joints, input.weights, palette_len(&method))?;
    let output = out.reborrow();
    let input = input.vertices();
    job(method, &infl, SkinAttributes::Arrays { input, output })
}

/// A [`job`] over interleaved buffers with four influences checked in the
/// call.
fn job_strided(
    method: SkinMethod<'_>,
    joints: &[[u16; 4]],
    weights: &[[f32; 4]],
    src: &StridedVertices<'_>,
    dst: &mut StridedVerticesMut<'_>,
) -> Result<(), Error> {
    let infl = CheckedInfluences::new(joints, weights, palette_len(&method))?;
    let (input, output) = (*src, dst.reborrow());
    job(method, &infl, SkinAttributes::Strided { input, output })
}

/// A mesh held by value: attributes and influences.
#[derive(Clone, Debug)]
struct TestMesh {
    positions: Vec<[f32; 3]>,
    normals: Vec<[f32; 3]>,
    tangents: Vec<[f32; 4]>,
    joints: Vec<[u16; 4]>,
    weights: Vec<[f32; 4]>,
}

impl TestMesh {
    fn len(&self) -> usize {
        self.positions.len()
    }

    fn input(&self, joint_count: usize) -> SkinInput<'_> {
        check_influences(&self.joints, &self.weights, joint_count).expect("valid influences");
        SkinInput {
            positions: &self.positions,
            normals: Some(&self.normals),
            tangents: Some(&self.tangents),
            joints: &self.joints,
            weights: &self.weights,
        }
    }
}

/// Skinned attributes.
#[derive(Clone, Debug, PartialEq)]
struct Skinned {
    positions: Vec<[f32; 3]>,
    normals: Vec<[f32; 3]>,
    tangents: Vec<[f32; 4]>,
}

impl Skinned {
    fn sentinel(n: usize) -> Self {
        Skinned {
            positions: vec![[SENTINEL; 3]; n],
            normals: vec![[SENTINEL; 3]; n],
            tangents: vec![[SENTINEL; 4]; n],
        }
    }

    fn output(&mut self) -> SkinOutput<'_> {
        SkinOutput {
            positions: &mut self.positions,
            normals: Some(&mut self.normals),
            tangents: Some(&mut self.tangents),
        }
    }
}

fn v3(a: [f32; 3]) -> Vec3 {
    Vec3::new(a[0], a[1], a[2])
}

fn lbs_run(kernel: LbsFn, palette: &[Mat3x4], input: &SkinInput<'_>) -> Skinned {
    let mut s = Skinned::sentinel(input.joints.len());
    kernel(palette, input, &mut s.output()).unwrap();
    s
}

fn dqs_run(kernel: DqsFn, palette: &[DualQuat], input: &SkinInput<'_>) -> Skinned {
    let mut s = Skinned::sentinel(input.joints.len());
    kernel(palette, input, &mut s.output()).unwrap();
    s
}

fn lbs_palette_of(models: &[Mat4], ibm: &[Mat4]) -> Vec<Mat3x4> {
    let mut p = vec![Mat3x4::IDENTITY; models.len()];
    skin::lbs_palette(models, ibm, &mut p).unwrap();
    p
}

fn dqs_palette_of(models: &[Mat4], ibm: &[Mat4]) -> Vec<DualQuat> {
    let mut p = vec![DualQuat::IDENTITY; models.len()];
    skin::dqs_palette(models, ibm, &mut p).unwrap();
    p
}

/// Largest component difference, relative to `max(1, magnitude)`.
fn assert_attrs_close<const W: usize>(a: &[[f32; W]], b: &[[f32; W]], tol: f32, what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: lengths");
    for (v, (x, y)) in a.iter().zip(b).enumerate() {
        for k in 0..W {
            assert!(
                close(x[k], y[k], tol),
                "{what}: vertex {v} component {k}: {x:?} vs {y:?}"
            );
        }
    }
}

fn assert_skinned_close(a: &Skinned, b: &Skinned, tol: f32, what: &str) {
    assert_attrs_close(
        &a.positions,
        &b.positions,
        tol,
        &format!("{what} positions"),
    );
    assert_attrs_close(&a.normals, &b.normals, tol, &format!("{what} normals"));
    assert_attrs_close(&a.tangents, &b.tangents, tol, &format!("{what} tangents"));
}

/// Same rigid transform (q and -q for both parts are the same) within `tol`.
fn dq_close(a: &DualQuat, b: &DualQuat, tol: f32) -> bool {
    let dot: f32 = a.real.iter().zip(b.real).map(|(x, y)| x * y).sum();
    let s = if dot < 0.0 { -1.0 } else { 1.0 };
    a.real
        .iter()
        .zip(b.real)
        .chain(a.dual.iter().zip(b.dual))
        .all(|(x, y)| close(*x, s * y, tol))
}

fn rot(axis: Vec3, degrees: f32) -> Quat {
    Quat::from_axis_angle(axis, degrees.to_radians())
}

fn translation(x: f32, y: f32, z: f32) -> Mat4 {
    Mat4::from_translation(Vec3::new(x, y, z))
}

fn rotation(q: Quat) -> Mat4 {
    Mat4::from_trs(Vec3::ZERO, q, Vec3::ONE)
}

/// A small valid mesh of `n` vertices over `joints` joints.
fn small_mesh(n: usize, joints: u16) -> TestMesh {
    let f = |i: usize, k: usize| ((i * 7 + k * 3) % 11) as f32 * 0.1 - 0.5;
    TestMesh {
        positions: (0..n).map(|i| [f(i, 0), f(i, 1), f(i, 2)]).collect(),
        normals: (0..n).map(|i| [f(i, 3), f(i, 4), 1.0]).collect(),
        tangents: (0..n).map(|i| [1.0, f(i, 5), f(i, 6), -1.0]).collect(),
        joints: (0..n)
            .map(|i| {
                let j = |k: usize| ((i + k) % joints as usize) as u16;
                [j(0), j(1), j(2), j(3)]
            })
            .collect(),
        weights: vec![[0.4, 0.3, 0.2, 0.1]; n],
    }
}

fn some_palettes(joints: usize) -> (Vec<Mat3x4>, Vec<DualQuat>) {
    let models: Vec<Mat4> = (0..joints)
        .map(|j| {
            Mat4::from_trs(
                Vec3::new(j as f32 * 0.1, 0.2, -0.3),
                rot(Vec3::Y, 10.0 * j as f32),
                Vec3::ONE,
            )
        })
        .collect();
    let ibm = vec![Mat4::IDENTITY; joints];
    (lbs_palette_of(&models, &ibm), dqs_palette_of(&models, &ibm))
}

// ---------------------------------------------------------------------------
// Validity: influences
// ---------------------------------------------------------------------------

#[test]
fn validity_influences() {
    let j = [[0u16, 1, 2, 3]; 3];
    let w = [[0.25f32; 4]; 3];
    assert!(check_influences(&j, &w, 4).is_ok());
    assert_eq!(
        check_influences(&j, &w[..2], 4).unwrap_err(),
        Error::BadLength {
            buffer: "weights",
            expected: 3,
            actual: 2
        }
    );
    // Index out of range names the vertex and the joint, even with weight 0.
    let mut jb = j;
    jb[2][3] = 4;
    assert_eq!(
        check_influences(&jb, &w, 4).unwrap_err(),
        Error::InfluenceOutOfRange {
            vertex: 2,
            joint: 4,
            count: 4
        }
    );
    let mut wz = w;
    wz[2] = [1.0, 0.0, 0.0, 0.0];
    assert_eq!(
        check_influences(&jb, &wz, 4).unwrap_err(),
        Error::InfluenceOutOfRange {
            vertex: 2,
            joint: 4,
            count: 4
        }
    );
    assert_eq!(
        check_influences(&j, &w, 0).unwrap_err(),
        Error::InfluenceOutOfRange {
            vertex: 0,
            joint: 0,
            count: 0
        }
    );
    for bad in [-0.25, f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        let mut wb = w;
        wb[1][2] = bad;
        assert_eq!(
            check_influences(&j, &wb, 4).unwrap_err(),
            Error::InvalidVertexWeight { vertex: 1 },
            "{bad}"
        );
    }
    for sum in [0.0, 0.5, 0.998, 1.0011, 2.0] {
        let mut ws = w;
        ws[1] = [sum, 0.0, 0.0, 0.0];
        assert_eq!(
            check_influences(&j, &ws, 4).unwrap_err(),
            Error::VertexWeightSum { vertex: 1 },
            "{sum}"
        );
    }
    for sum in [0.9991, 1.0009] {
        let mut ws = w;
        ws[1] = [sum, 0.0, 0.0, 0.0];
        assert!(check_influences(&j, &ws, 4).is_ok(), "{sum} is within 1e-3");
    }
    // Empty meshes are fine.
    assert!(check_influences(&[], &[], 0).is_ok());
}

#[test]
fn normalize_weights_renormalises_or_rejects() {
    let mut w = vec![[2.0, 1.0, 1.0, 0.0], [0.0, 0.0, 0.0, 3.0]];
    normalize_weights(&mut w).unwrap();
    assert_eq!(w, vec![[0.5, 0.25, 0.25, 0.0], [0.0, 0.0, 0.0, 1.0]]);
    let j = [[0u16; 4]; 2];
    assert!(check_influences(&j, &w, 1).is_ok());
    for (bad, err) in [
        ([0.0; 4], Error::VertexWeightSum { vertex: 1 }),
        (
            [1.0, -1.0, 1.0, 0.0],
            Error::InvalidVertexWeight { vertex: 1 },
        ),
        (
            [f32::NAN, 0.0, 0.0, 1.0],
            Error::InvalidVertexWeight { vertex: 1 },
        ),
    ] {
        let mut w = vec![[1.0, 1.0, 0.0, 0.0], bad];
        let before = w.clone();
        assert_eq!(normalize_weights(&mut w), Err(err));
        let bits = |w: &Vec<[f32; 4]>| w.iter().flatten().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&w), bits(&before), "untouched on error");
    }
}

#[test]
fn normalize_weights8_renormalises_all_eight_or_rejects() {
    let mut w0 = vec![[2.0, 1.0, 0.5, 0.5], [0.0; 4], [0.25, 0.25, 0.25, 0.25]];
    let mut w1 = vec![[0.5, 0.5, 0.0, 0.0], [0.0, 0.0, 0.0, 4.0], [0.0; 4]];
    skin::normalize_weights8(&mut w0, &mut w1).unwrap();
    assert_eq!(w0, vec![[0.4, 0.2, 0.1, 0.1], [0.0; 4], [0.25; 4]]);
    assert_eq!(
        w1,
        vec![[0.1, 0.1, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0], [0.0; 4]]
    );
    let j = [[0u16; 4]; 3];
    assert!(skin::check_influences8(&j, &w0, &j, &w1, 1).is_ok());
    // A bad weight in either set, or eight zeros: untouched, named vertex.
    let bits = |w: &[[f32; 4]]| w.iter().flatten().map(|x| x.to_bits()).collect::<Vec<_>>();
    for (set, bad, err) in [
        (
            1,
            [0.0, -1.0, 0.0, 0.0],
            Error::InvalidVertexWeight { vertex: 1 },
        ),
        (
            0,
            [f32::INFINITY, 0.0, 0.0, 0.0],
            Error::InvalidVertexWeight { vertex: 1 },
        ),
        (1, [0.0; 4], Error::VertexWeightSum { vertex: 1 }),
    ] {
        let mut w0 = vec![[1.0, 0.0, 0.0, 0.0], [0.0; 4]];
        let mut w1 = vec![[1.0, 0.0, 0.0, 0.0], [0.0; 4]];
        if set == 0 {
            w0[1] = bad;
        } else {
            w1[1] = bad;
        }
        let before = (bits(&w0), bits(&w1));
        assert_eq!(skin::normalize_weights8(&mut w0, &mut w1), Err(err));
        assert_eq!((bits(&w0), bits(&w1)), before, "untouched on error");
    }
    assert_eq!(
        skin::normalize_weights8(&mut [[1.0; 4]; 2], &mut [[1.0; 4]; 3]),
        Err(Error::BadLength {
            buffer: "weights1",
            expected: 2,
            actual: 3
        })
    );
}

// ---------------------------------------------------------------------------
// Validity: palettes
// ---------------------------------------------------------------------------

#[test]
fn validity_palette_lengths() {
    let models = vec![Mat4::IDENTITY; 5];
    for (ibm_len, out_len, err) in [
        (
            4,
            5,
            Error::BadLength {
                buffer: "inverse binds",
                expected: 5,
                actual: 4,
            },
        ),
        (
            6,
            5,
            Error::BadLength {
                buffer: "inverse binds",
                expected: 5,
                actual: 6,
            },
        ),
        (
            5,
            4,
            Error::BadLength {
                buffer: "palette",
                expected: 5,
                actual: 4,
            },
        ),
        (
            5,
            0,
            Error::BadLength {
                buffer: "palette",
                expected: 5,
                actual: 0,
            },
        ),
    ] {
        let ibm = vec![Mat4::IDENTITY; ibm_len];
        for (name, f) in LBS_PALETTE {
            let mut out = vec![
                Mat3x4 {
                    rows: [[SENTINEL; 4]; 3]
                };
                out_len
            ];
            let before = out.clone();
            assert_eq!(f(&models, &ibm, &mut out), Err(err), "{name}");
            assert_eq!(out, before, "{name}: written on error");
        }
        for (name, f) in DQS_PALETTE {
            let mut out = vec![
                DualQuat {
                    real: [SENTINEL; 4],
                    dual: [SENTINEL; 4]
                };
                out_len
            ];
            let before = out.clone();
            assert_eq!(f(&models, &ibm, &mut out), Err(err), "{name}");
            assert_eq!(out, before, "{name}: written on error");
        }
    }
    for f in [
        skin::dqs_palette_with_scale,
        reference::dqs_palette_with_scale,
    ] {
        let ibm = vec![Mat4::IDENTITY; 5];
        let mut out = vec![DualQuat::IDENTITY; 5];
        let mut scale = vec![[SENTINEL; 3]; 4];
        assert_eq!(
            f(&models, &ibm, &mut out, &mut scale),
            Err(Error::BadLength {
                buffer: "scale",
                expected: 5,
                actual: 4
            })
        );
        assert!(scale.iter().all(|s| *s == [SENTINEL; 3]));
    }
}

#[test]
fn validity_prepare_lbs_binds() {
    let ibm = vec![Mat4::from_translation(Vec3::new(1.0, 2.0, 3.0)); 5];
    for len in [0, 4, 6] {
        let mut binds = vec![LbsBind::default(); len];
        assert_eq!(
            skin::prepare_lbs_binds(&ibm, &mut binds),
            Err(Error::BadLength {
                buffer: "lbs binds",
                expected: 5,
                actual: len
            })
        );
        assert!(
            binds.iter().all(|b| *b == LbsBind::default()),
            "written on error"
        );
    }
}

/// A prepared bind reads back as the affine matrix it was built from (its
/// last row as `0 0 0 1`), and the default is the identity.
#[test]
fn lbs_bind_round_trip() {
    let mut m = Mat4::from_trs(
        Vec3::new(0.5, -2.0, 3.0),
        Quat::new(0.1, 0.7, -0.3, 0.6).normalize(),
        Vec3::new(1.5, 0.5, -2.0),
    );
    assert_eq!(LbsBind::new(&m).to_mat4(), m);
    m.cols[0][3] = 9.0; // not affine: the last row is ignored
    assert_eq!(LbsBind::new(&m).to_mat4().cols[0][3], 0.0);
    assert_eq!(LbsBind::default().to_mat4(), Mat4::IDENTITY);
}

/// [`skin::dqs_palette_prepared`] with the binds prepared here from `ibm`
/// (so a wrong `ibm` length is a wrong binds length, except where both
/// lengths need the same number of blocks: then `models` decides).
fn dqs_palette_prepared(models: &[Mat4], ibm: &[Mat4], out: &mut [DualQuat]) -> Result<(), Error> {
    let mut binds = vec![DqsBinds::default(); DqsBinds::count(ibm.len())];
    skin::prepare_dqs_binds(ibm, &mut binds)?;
    if DqsBinds::count(ibm.len()) == DqsBinds::count(models.len()) && ibm.len() != models.len() {
        // The blocks fit, but not the matrices: report it as the plain
        // palette does.
        return Err(Error::BadLength {
            buffer: "inverse binds",
            expected: models.len(),
            actual: ibm.len(),
        });
    }
    skin::dqs_palette_prepared(models, &binds, out)
}

#[test]
fn validity_dqs_binds() {
    let ibm = vec![Mat4::from_translation(Vec3::new(1.0, 2.0, 3.0)); 9];
    for len in [0, 1, 3] {
        let mut binds = vec![DqsBinds::default(); len];
        assert_eq!(
            skin::prepare_dqs_binds(&ibm, &mut binds),
            Err(Error::BadLength {
                buffer: "dqs binds",
                expected: 2,
                actual: len
            })
        );
        assert!(
            binds.iter().all(|b| *b == DqsBinds::default()),
            "written on error"
        );
    }
    // The palette checks the number of blocks against the models.
    let mut binds = vec![DqsBinds::default(); 2];
    skin::prepare_dqs_binds(&ibm, &mut binds).unwrap();
    for models in [8, 17] {
        let models = vec![Mat4::IDENTITY; models];
        let mut out = vec![DualQuat::IDENTITY; models.len()];
        assert_eq!(
            skin::dqs_palette_prepared(&models, &binds, &mut out),
            Err(Error::BadLength {
                buffer: "dqs binds",
                expected: DqsBinds::count(models.len()),
                actual: 2
            })
        );
    }
}

/// The blocks hold joints 8 k .. 8 k + 8, a last partial block the last 8
/// joints (or all of them and identities, below 8), each lane reading back
/// as its affine matrix.
#[test]
fn dqs_binds_layout() {
    for n in [0usize, 1, 7, 8, 9, 16, 19] {
        let ibm: Vec<Mat4> = (0..n)
            .map(|j| {
                Mat4::from_trs(
                    Vec3::new(j as f32, 1.0, 2.0),
                    Quat::IDENTITY,
                    Vec3::splat(1.0 + j as f32),
                )
            })
            .collect();
        let mut binds = vec![DqsBinds::default(); DqsBinds::count(n)];
        skin::prepare_dqs_binds(&ibm, &mut binds).unwrap();
        for (k, b) in binds.iter().enumerate() {
            let base = if (k + 1) * 8 <= n {
                k * 8
            } else {
                n.saturating_sub(8)
            };
            for l in 0..8 {
                let expect = ibm.get(base + l).copied().unwrap_or(Mat4::IDENTITY);
                assert_eq!(b.get(l), Some(expect), "n {n} block {k} lane {l}");
            }
            assert_eq!(b.get(8), None);
        }
    }
}

// ---------------------------------------------------------------------------
// Validity: vertex kernels
// ---------------------------------------------------------------------------

/// Runs every kernel (LBS, DQS, mixed; SIMD and reference) on `input` into
/// a sentinel output shaped by `shape` and checks the exact error and that
/// nothing was written.
fn expect_skin_error(
    joints: usize,
    input: &SkinInput<'_>,
    out_lens: (usize, Option<usize>, Option<usize>),
    expected: Error,
) {
    let (lbs, dqs) = some_palettes(joints);
    let mix = vec![0.5; input.joints.len()];
    for k in 0..6 {
        let mut pos = vec![[SENTINEL; 3]; out_lens.0];
        let mut nrm = out_lens.1.map(|n| vec![[SENTINEL; 3]; n]);
        let mut tan = out_lens.2.map(|n| vec![[SENTINEL; 4]; n]);
        let (pb, nb, tb) = (pos.clone(), nrm.clone(), tan.clone());
        let mut out = SkinOutput {
            positions: &mut pos,
            normals: nrm.as_deref_mut(),
            tangents: tan.as_deref_mut(),
        };
        let (name, r) = match k {
            0 | 1 => (LBS[k].0, LBS[k].1(&lbs, input, &mut out)),
            2 | 3 => (DQS[k - 2].0, DQS[k - 2].1(&dqs, input, &mut out)),
            _ => (
                MIXED[k - 4].0,
                MIXED[k - 4].1(&lbs, &dqs, &mix, input, &mut out),
            ),
        };
        assert_eq!(r, Err(expected), "kernel {k} ({name})");
        assert_eq!(
            (pos, nrm, tan),
            (pb, nb, tb),
            "kernel {k}: written on error"
        );
    }
}

#[test]
fn validity_attribute_lengths() {
    let m = small_mesh(6, 3);
    let base = m.input(3);
    let bl = |buffer, actual| Error::BadLength {
        buffer,
        expected: 6,
        actual,
    };
    let full = (6, Some(6), Some(6));
    expect_skin_error(
        3,
        &SkinInput {
            positions: &m.positions[..5],
            ..base
        },
        full,
        bl("positions", 5),
    );
    expect_skin_error(
        3,
        &SkinInput {
            normals: Some(&m.normals[..4]),
            ..base
        },
        full,
        bl("normals", 4),
    );
    expect_skin_error(
        3,
        &SkinInput {
            tangents: Some(&m.tangents[..0]),
            ..base
        },
        full,
        bl("tangents", 0),
    );
    // Present input arrays are checked even when the output does not use them.
    expect_skin_error(
        3,
        &SkinInput {
            normals: Some(&m.normals[..5]),
            ..base
        },
        (6, None, None),
        bl("normals", 5),
    );
    // The output asks for an attribute the input lacks: a length-0 array.
    expect_skin_error(
        3,
        &SkinInput {
            normals: None,
            ..base
        },
        full,
        bl("normals", 0),
    );
    expect_skin_error(
        3,
        &SkinInput {
            tangents: None,
            ..base
        },
        (6, None, Some(6)),
        bl("tangents", 0),
    );
    expect_skin_error(3, &base, (7, Some(6), Some(6)), bl("output positions", 7));
    expect_skin_error(3, &base, (6, Some(5), Some(6)), bl("output normals", 5));
    expect_skin_error(3, &base, (6, None, Some(0)), bl("output tangents", 0));
    expect_skin_error(
        3,
        &SkinInput {
            weights: &m.weights[..5],
            ..base
        },
        full,
        bl("weights", 5),
    );
}

/// Influences are checked on every call, against the palette length; the
/// error names the vertex.
#[test]
fn validity_influences_in_calls() {
    let m = small_mesh(6, 3);
    let full = (6, Some(6), Some(6));
    let mut jb = m.joints.clone();
    jb[4][2] = 3;
    expect_skin_error(
        3,
        &SkinInput {
            joints: &jb,
            ..m.input(3)
        },
        full,
        Error::InfluenceOutOfRange {
            vertex: 4,
            joint: 3,
            count: 3,
        },
    );
    // A palette shorter than the joints the mesh names.
    expect_skin_error(
        2,
        &m.input(3),
        full,
        Error::InfluenceOutOfRange {
            vertex: 0,
            joint: 2,
            count: 2,
        },
    );
    for (bad, err) in [
        (
            [0.5, -0.1, 0.6, 0.0],
            Error::InvalidVertexWeight { vertex: 5 },
        ),
        (
            [0.5, f32::NAN, 0.5, 0.0],
            Error::InvalidVertexWeight { vertex: 5 },
        ),
        ([0.5, 0.4, 0.0, 0.0], Error::VertexWeightSum { vertex: 5 }),
    ] {
        let mut wb = m.weights.clone();
        wb[5] = bad;
        expect_skin_error(
            3,
            &SkinInput {
                weights: &wb,
                ..m.input(3)
            },
            full,
            err,
        );
    }
}

#[test]
fn validity_mixed_palettes() {
    let m = small_mesh(5, 3);
    let input = m.input(3);
    let (lbs, _) = some_palettes(3);
    let mix = [0.5; 5];
    for joints in [2, 4, 0] {
        let (_, dqs) = some_palettes(joints);
        for (name, k) in MIXED {
            let mut s = Skinned::sentinel(5);
            assert_eq!(
                k(&lbs, &dqs, &mix, &input, &mut s.output()),
                Err(Error::BadLength {
                    buffer: "dqs palette",
                    expected: 3,
                    actual: joints,
                }),
                "{name}"
            );
            assert_eq!(s, Skinned::sentinel(5));
        }
    }
}

#[test]
fn validity_mix_weights() {
    let m = small_mesh(5, 3);
    let input = m.input(3);
    let (lbs, dqs) = some_palettes(3);
    for (name, k) in MIXED {
        let mut s = Skinned::sentinel(5);
        assert_eq!(
            k(&lbs, &dqs, &[0.5; 4], &input, &mut s.output()),
            Err(Error::BadLength {
                buffer: "mix",
                expected: 5,
                actual: 4
            }),
            "{name}"
        );
        for bad in [-0.01, 1.01, f32::NAN, f32::INFINITY] {
            let mut mix = [0.0, 1.0, 0.5, 0.25, 1.0];
            mix[3] = bad;
            assert_eq!(
                k(&lbs, &dqs, &mix, &input, &mut s.output()),
                Err(Error::InvalidMixWeight { vertex: 3 }),
                "{name} {bad}"
            );
        }
        assert_eq!(s, Skinned::sentinel(5));
    }
}

#[test]
fn validity_strided_layouts() {
    let m = small_mesh(5, 3);
    let (j, w) = (&m.joints, &m.weights);
    let (lbs, dqs) = some_palettes(3);
    let src_data = vec![0.5f32; 5 * 10];
    let good_src = stride10(&src_data);
    let layout = |what| Error::InvalidLayout { what };
    // (source, destination stride, dst position, dst normal, dst tangent, dst len, error)
    type Case<'a> = (
        StridedVertices<'a>,
        usize,
        usize,
        Option<usize>,
        Option<usize>,
        usize,
        Error,
    );
    let cases: Vec<Case<'_>> = vec![
        (
            StridedVertices {
                stride: 0,
                ..good_src
            },
            8,
            0,
            None,
            None,
            40,
            layout("source stride is 0"),
        ),
        (
            good_src,
            0,
            0,
            None,
            None,
            0,
            layout("destination stride is 0"),
        ),
        (
            StridedVertices {
                position: 8,
                ..good_src
            },
            8,
            0,
            None,
            None,
            40,
            layout("source position exceeds the stride"),
        ),
        (
            StridedVertices {
                normal: Some(usize::MAX),
                ..good_src
            },
            8,
            0,
            None,
            None,
            40,
            layout("source normal exceeds the stride"),
        ),
        (
            StridedVertices {
                tangent: Some(7),
                ..good_src
            },
            8,
            0,
            None,
            None,
            40,
            layout("source tangent exceeds the stride"),
        ),
        (
            good_src,
            8,
            6,
            None,
            None,
            40,
            layout("destination position exceeds the stride"),
        ),
        (
            good_src,
            8,
            0,
            Some(2),
            None,
            40,
            layout("destination attributes overlap"),
        ),
        (
            good_src,
            10,
            0,
            Some(3),
            Some(5),
            50,
            layout("destination attributes overlap"),
        ),
        (
            StridedVertices {
                data: &src_data[..49],
                ..good_src
            },
            8,
            0,
            None,
            None,
            40,
            Error::BadLength {
                buffer: "source vertices",
                expected: 50,
                actual: 49,
            },
        ),
        (
            good_src,
            8,
            0,
            None,
            None,
            41,
            Error::BadLength {
                buffer: "destination vertices",
                expected: 40,
                actual: 41,
            },
        ),
        (
            StridedVertices {
                normal: None,
                ..good_src
            },
            8,
            0,
            Some(3),
            None,
            40,
            Error::BadLength {
                buffer: "normals",
                expected: 5,
                actual: 0,
            },
        ),
    ];
    for (i, (src, stride, position, normal, tangent, len, err)) in cases.into_iter().enumerate() {
        for k in 0..6 {
            let mut data = vec![SENTINEL; len];
            let mut dst = StridedVerticesMut {
                data: &mut data,
                stride,
                position,
                normal,
                tangent,
            };
            let mix = [0.5; 5];
            let r = match k {
                0 => job_strided(SkinMethod::Lbs { palette: &lbs }, j, w, &src, &mut dst),
                1 => reference::skin_lbs_strided(&lbs, j, w, &src, &mut dst),
                2 => job_strided(SkinMethod::Dqs { palette: &dqs }, j, w, &src, &mut dst),
                3 => reference::skin_dqs_strided(&dqs, j, w, &src, &mut dst),
                4 => job_strided(
                    SkinMethod::Mixed {
                        lbs: &lbs,
                        dqs: &dqs,
                        mix: &mix,
                    },
                    j,
                    w,
                    &src,
                    &mut dst,
                ),
                _ => reference::skin_mixed_strided(&lbs, &dqs, &mix, j, w, &src, &mut dst),
            };
            assert_eq!(r, Err(err), "case {i} kernel {k}");
            assert!(data.iter().all(|v| *v == SENTINEL), "case {i} kernel {k}");
        }
    }
}

// ---------------------------------------------------------------------------
// Worked examples
// ---------------------------------------------------------------------------

/// The elbow: bone 0 identity, bone 1 rotates 90° about +z around (2, 0, 0).
fn elbow() -> (Vec<Mat4>, Vec<Mat4>) {
    let models = vec![
        Mat4::IDENTITY,
        translation(2.0, 0.0, 0.0) * rotation(rot(Vec3::Z, 90.0)),
    ];
    let ibm = vec![Mat4::IDENTITY, translation(-2.0, 0.0, 0.0)];
    (models, ibm)
}

fn one_vertex(p: [f32; 3]) -> TestMesh {
    TestMesh {
        positions: vec![p],
        normals: vec![[0.0, 0.0, 1.0]],
        tangents: vec![[1.0, 0.0, 0.0, 1.0]],
        joints: vec![[0, 1, 0, 0]],
        weights: vec![[0.5, 0.5, 0.0, 0.0]],
    }
}

#[test]
fn worked_example_elbow() {
    let (models, ibm) = elbow();
    let dq = dqs_palette_of(&models, &ibm);
    let expect_dual = [0.0, -std::f32::consts::SQRT_2, 0.0, 0.0];
    for (k, d) in expect_dual.iter().enumerate() {
        assert!(close(dq[1].dual[k], *d, 1e-5), "{:?}", dq[1]);
    }
    assert!(quat_close(dq[1].rotation(), rot(Vec3::Z, 90.0), 1e-6));
    let m = one_vertex([2.0, -0.5, 0.0]);
    let input = m.input(2);
    let elbow = Vec3::new(2.0, 0.0, 0.0);
    for (name, k) in LBS {
        let s = lbs_run(k, &lbs_palette_of(&models, &ibm), &input);
        let p = v3(s.positions[0]);
        assert!(
            vec_close(p, Vec3::new(2.25, -0.25, 0.0), 5e-4),
            "{name} {p:?}"
        );
        assert!(close((p - elbow).length(), 0.3536, 5e-4));
    }
    for (name, k) in DQS {
        let s = dqs_run(k, &dq, &input);
        let p = v3(s.positions[0]);
        assert!(
            vec_close(p, Vec3::new(2.3536, -0.3536, 0.0), 5e-4),
            "{name} {p:?}"
        );
        assert!(close((p - elbow).length(), 0.5, 1e-5));
        // Normals and tangents: rotated by the blended 45° only.
        assert!(vec_close(v3(s.normals[0]), Vec3::Z, 1e-6));
        let t = s.tangents[0];
        let h = std::f32::consts::FRAC_1_SQRT_2;
        assert!(vec_close(
            Vec3::new(t[0], t[1], t[2]),
            Vec3::new(h, h, 0.0),
            1e-5
        ));
        assert_eq!(t[3], 1.0);
    }
    // The blended real part is 45° about z; the translation (0.5858, -1.4142, 0).
    let b = reference::dqs_blend(&dq, [0, 1, 0, 0], [0.5, 0.5, 0.0, 0.0]);
    assert!(quat_close(b.rotation(), rot(Vec3::Z, 45.0), 1e-4));
    assert!(vec_close(
        b.translation(),
        Vec3::new(0.5858, -std::f32::consts::SQRT_2, 0.0),
        5e-4
    ));
}

#[test]
fn worked_example_twists() {
    for (phi, lbs_radius, dqs_twist) in [
        (90.0f32, 0.3536f32, 45.0f32),
        (170.0, 0.0436, 85.0),
        (190.0, 0.0436, -85.0),
    ] {
        let models = vec![Mat4::IDENTITY, rotation(rot(Vec3::X, phi))];
        let ibm = vec![Mat4::IDENTITY; 2];
        let m = one_vertex([2.0, 0.0, 0.5]);
        let input = m.input(2);
        let radius = |p: [f32; 3]| (p[1] * p[1] + p[2] * p[2]).sqrt();
        for (name, k) in LBS {
            let s = lbs_run(k, &lbs_palette_of(&models, &ibm), &input);
            assert!(
                close(radius(s.positions[0]), lbs_radius, 5e-4),
                "{name} {phi}: {:?}",
                s.positions[0]
            );
            assert!(close(s.positions[0][0], 2.0, 1e-6));
        }
        let dq = dqs_palette_of(&models, &ibm);
        assert!(dq[1].real[3] >= 0.0, "w >= 0 convention");
        for (name, k) in DQS {
            let s = dqs_run(k, &dq, &input);
            assert!(close(radius(s.positions[0]), 0.5, 1e-5), "{name} {phi}");
            let p = s.positions[0];
            // The vertex turned by the DQS twist about x.
            let expect = rot(Vec3::X, dqs_twist).rotate(Vec3::new(2.0, 0.0, 0.5));
            assert!(
                vec_close(v3(p), expect, 1e-4),
                "{name} {phi}: {p:?} vs {expect:?}"
            );
        }
        let b = reference::dqs_blend(&dq, [0, 1, 0, 0], [0.5, 0.5, 0.0, 0.0]);
        let twist = signed_angle_about(b.rotation(), Vec3::X).to_degrees();
        assert!(close(twist, dqs_twist, 1e-3), "{phi}: twist {twist}");
    }
}

#[test]
fn worked_example_lbs_2d() {
    let w0 = rotation(rot(Vec3::Z, 30.0));
    let w1 = w0 * translation(2.0, 0.0, 0.0) * rotation(rot(Vec3::Z, 90.0));
    let models = vec![w0, w1];
    let ibm = vec![Mat4::IDENTITY, translation(-2.0, 0.0, 0.0)];
    for (name, f) in LBS_PALETTE {
        let mut p = vec![Mat3x4::IDENTITY; 2];
        f(&models, &ibm, &mut p).unwrap();
        let s1 = [[-0.5, -0.866, 2.732], [0.866, -0.5, -0.732]];
        for (r, row) in s1.iter().enumerate() {
            let got = [p[1].rows[r][0], p[1].rows[r][1], p[1].rows[r][3]];
            for (g, e) in got.iter().zip(row) {
                assert!(close(*g, *e, 5e-4), "{name}: S1 row {r}: {got:?}");
            }
        }
        let v = Vec3::new(2.0, -0.5, 0.0);
        assert!(vec_close(
            p[0].transform_point(v),
            Vec3::new(1.982, 0.567, 0.0),
            5e-4
        ));
        assert!(vec_close(
            p[1].transform_point(v),
            Vec3::new(2.165, 1.250, 0.0),
            5e-4
        ));
        // The blended 2x2 part is 0.707 R(75°).
        let b = reference::lbs_matrix(&p, [0, 1, 0, 0], [0.5, 0.5, 0.0, 0.0]);
        let (c, s) = (75f32.to_radians().cos(), 75f32.to_radians().sin());
        let k = std::f32::consts::FRAC_1_SQRT_2;
        assert!(close(b.rows[0][0], k * c, 5e-4) && close(b.rows[0][1], -k * s, 5e-4));
        assert!(close(b.rows[1][0], k * s, 5e-4) && close(b.rows[1][1], k * c, 5e-4));
    }
    let m = one_vertex([2.0, -0.5, 0.0]);
    for (name, k) in LBS {
        let s = lbs_run(k, &lbs_palette_of(&models, &ibm), &m.input(2));
        assert!(
            vec_close(v3(s.positions[0]), Vec3::new(2.074, 0.909, 0.0), 5e-4),
            "{name}: {:?}",
            s.positions[0]
        );
    }
}

// ---------------------------------------------------------------------------
// DQS and scale
// ---------------------------------------------------------------------------

/// SIMD palette and scales, then the reference's.
type RigidPair = (Vec<DualQuat>, Vec<[f32; 3]>, Vec<DualQuat>, Vec<[f32; 3]>);

fn rigid_of(models: &[Mat4]) -> RigidPair {
    let ibm = vec![Mat4::IDENTITY; models.len()];
    let n = models.len();
    let (mut a, mut sa) = (vec![DualQuat::IDENTITY; n], vec![[0.0; 3]; n]);
    let (mut b, mut sb) = (vec![DualQuat::IDENTITY; n], vec![[0.0; 3]; n]);
    skin::dqs_palette_with_scale(models, &ibm, &mut a, &mut sa).unwrap();
    reference::dqs_palette_with_scale(models, &ibm, &mut b, &mut sb).unwrap();
    (a, sa, b, sb)
}

#[test]
fn dqs_drops_and_reports_scale() {
    let q = Quat::new(0.2, -0.4, 0.1, 0.8).normalize();
    let t = Vec3::new(0.5, -1.0, 2.0);
    let cases = [
        (Vec3::splat(2.0), [2.0, 2.0, 2.0]),
        (Vec3::new(1.0, 2.0, 3.0), [1.0, 2.0, 3.0]),
        (Vec3::new(0.5, 0.5, 4.0), [0.5, 0.5, 4.0]),
    ];
    let models: Vec<Mat4> = cases
        .iter()
        .map(|(s, _)| Mat4::from_trs(t, q, *s))
        .collect();
    let (a, sa, b, sb) = rigid_of(&models);
    for (j, (_, expect)) in cases.iter().enumerate() {
        for (dq, s) in [(&a[j], sa[j]), (&b[j], sb[j])] {
            assert!(quat_close(dq.rotation(), q, 1e-5), "{j}: {dq:?}");
            assert!(dq.real[3] >= 0.0);
            assert!(vec_close(dq.translation(), t, 1e-5));
            for k in 0..3 {
                assert!(close(s[k], expect[k], 1e-5), "{j}: scale {s:?}");
            }
        }
    }
    // DQS skinning applies the rigid part only: the vertex is not scaled.
    let mesh = TestMesh {
        positions: vec![[1.0, 1.0, 1.0]],
        normals: vec![[0.0, 1.0, 0.0]],
        tangents: vec![[1.0, 0.0, 0.0, 1.0]],
        joints: vec![[1, 0, 0, 0]],
        weights: vec![[1.0, 0.0, 0.0, 0.0]],
    };
    for (name, k) in DQS {
        let s = dqs_run(k, &a, &mesh.input(3));
        let expect = q.rotate(Vec3::ONE) + t;
        assert!(vec_close(v3(s.positions[0]), expect, 1e-5), "{name}");
    }
}

#[test]
fn dqs_mirror_becomes_rotation_with_z_reversed() {
    let q = rot(Vec3::new(0.0, 0.6, 0.8), 40.0);
    let t = Vec3::new(1.0, 2.0, 3.0);
    let models = [Mat4::from_trs(t, q, Vec3::new(-1.0, 1.0, 1.0))];
    let (a, sa, b, sb) = rigid_of(&models);
    // R diag(-1, 1, 1) = (R diag(-1, 1, -1)) diag(1, 1, -1): a 180° turn about y.
    let expect = q * Quat::new(0.0, 1.0, 0.0, 0.0);
    for (dq, s) in [(&a[0], sa[0]), (&b[0], sb[0])] {
        assert!(quat_close(dq.rotation(), expect, 1e-5), "{dq:?}");
        assert!(close(dq.rotation().length(), 1.0, 1e-6));
        assert!(dq.real[3] >= 0.0);
        assert!(vec_close(dq.translation(), t, 1e-5));
        assert!(vec_close(v3(s), Vec3::new(1.0, 1.0, -1.0), 1e-5), "{s:?}");
    }
}

#[test]
fn dqs_shear_keeps_the_x_axis() {
    // x axis along +x, y axis sheared towards x: the rotation is the identity.
    let mut m = Mat4::IDENTITY;
    m.cols[1] = [0.5, 1.0, 0.0, 0.0];
    m.cols[3] = [1.0, 0.0, 0.0, 1.0];
    let (a, sa, _, _) = rigid_of(&[m]);
    assert!(quat_close(a[0].rotation(), Quat::IDENTITY, 1e-6));
    assert!(vec_close(a[0].translation(), Vec3::X, 1e-6));
    assert!(vec_close(v3(sa[0]), Vec3::ONE, 1e-6));
}

// ---------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------

fn rigid() -> impl Strategy<Value = Mat4> {
    (vec3_in(-2.0, 2.0), unit_quat()).prop_map(|(t, q)| Mat4::from_trs(t, q, Vec3::ONE))
}

fn affine(scale_lo: f32, scale_hi: f32) -> impl Strategy<Value = Mat4> {
    transform(scale_lo, scale_hi).prop_map(|t: Transform| t.to_matrix())
}

/// One vertex's influences: 1-4 distinct-or-not joints with positive weights summing to 1.
fn influence(joints: usize) -> impl Strategy<Value = ([u16; 4], [f32; 4])> {
    (
        1usize..=4,
        prop::array::uniform4(0..joints as u16),
        prop::array::uniform4(0.05f32..1.0),
    )
        .prop_map(|(count, j, w)| {
            let mut w = w;
            for x in w.iter_mut().skip(count) {
                *x = 0.0;
            }
            let sum: f32 = w.iter().sum();
            (j, w.map(|x| x / sum))
        })
}

fn unit_vec() -> impl Strategy<Value = [f32; 3]> {
    unit_axis().prop_map(|v| v.to_array())
}

fn mesh(joints: usize, max_vertices: usize) -> impl Strategy<Value = TestMesh> {
    prop::collection::vec(
        (
            vec3_in(-1.5, 1.5),
            unit_vec(),
            unit_vec(),
            prop_oneof![Just(1.0f32), Just(-1.0f32)],
            influence(joints),
        ),
        0..=max_vertices,
    )
    .prop_map(|vs| {
        let mut m = TestMesh {
            positions: vec![],
            normals: vec![],
            tangents: vec![],
            joints: vec![],
            weights: vec![],
        };
        for (p, n, t, h, (j, w)) in vs {
            m.positions.push(p.to_array());
            m.normals.push(n);
            m.tangents.push([t[0], t[1], t[2], h]);
            m.joints.push(j);
            m.weights.push(w);
        }
        m
    })
}

fn palettes_and_mesh(
    scale_lo: f32,
    scale_hi: f32,
) -> impl Strategy<Value = (Vec<Mat4>, Vec<Mat4>, TestMesh)> {
    (1usize..=9).prop_flat_map(move |n| {
        (
            prop::collection::vec(affine(scale_lo, scale_hi), n),
            prop::collection::vec(affine(scale_lo, scale_hi), n),
            mesh(n, 23),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// All weight on one joint: LBS == DQS == that joint's rigid transform.
    #[test]
    fn one_influence_is_the_joints_transform(
        models in prop::collection::vec(rigid(), 5),
        ibm in prop::collection::vec(rigid(), 5),
        m in mesh(5, 9),
        slot in 0usize..4,
    ) {
        let mut m = m;
        for w in m.weights.iter_mut() {
            *w = [0.0; 4];
            w[slot] = 1.0;
        }
        let lbs = lbs_palette_of(&models, &ibm);
        let dqs = dqs_palette_of(&models, &ibm);
        let input = m.input(5);
        for ((_, kl), (_, kd)) in LBS.into_iter().zip(DQS) {
            let a = lbs_run(kl, &lbs, &input);
            let b = dqs_run(kd, &dqs, &input);
            for v in 0..m.len() {
                let s = models[m.joints[v][slot] as usize] * ibm[m.joints[v][slot] as usize];
                let p = s.transform_point(v3(m.positions[v]));
                let n = s.transform_vector(v3(m.normals[v]));
                prop_assert!(vec_close(v3(a.positions[v]), p, 1e-4));
                prop_assert!(vec_close(v3(b.positions[v]), p, 1e-4));
                prop_assert!(vec_close(v3(a.normals[v]), n, 1e-4));
                prop_assert!(vec_close(v3(b.normals[v]), n, 1e-4));
            }
        }
    }

    /// Rotations about one centre: DQS keeps every vertex at its distance
    /// from the centre (LBS does not).
    #[test]
    fn dqs_preserves_distance_to_the_joint_centre(
        centre in vec3_in(-2.0, 2.0),
        rotations in prop::collection::vec(unit_quat(), 4),
        m in mesh(4, 9),
    ) {
        let c = Mat4::from_translation(centre);
        let back = Mat4::from_translation(-centre);
        let models: Vec<Mat4> = rotations.iter().map(|q| c * rotation(*q) * back).collect();
        let dqs = dqs_palette_of(&models, &[Mat4::IDENTITY; 4]);
        let input = m.input(4);
        for (name, k) in DQS {
            let s = dqs_run(k, &dqs, &input);
            for v in 0..m.len() {
                let before = (v3(m.positions[v]) - centre).length();
                let after = (v3(s.positions[v]) - centre).length();
                prop_assert!(close(before, after, 1e-4), "{} vertex {}: {} -> {}", name, v, before, after);
                prop_assert!(close(v3(s.normals[v]).length(), 1.0, 1e-5));
            }
        }
    }

    /// Bind pose (models = inverse(inverse_bind)): every vertex stays put.
    #[test]
    fn bind_pose_leaves_vertices_in_place(
        (_, ibm, m) in palettes_and_mesh(0.5, 2.0),
    ) {
        let models: Vec<Mat4> = ibm.iter().map(|b| b.inverse_affine().unwrap()).collect();
        let n = models.len();
        let input = m.input(n);
        let mix: Vec<f32> = (0..m.len()).map(|i| (i % 5) as f32 * 0.25).collect();
        let lbs = lbs_palette_of(&models, &ibm);
        let dqs = dqs_palette_of(&models, &ibm);
        let expect = Skinned {
            positions: m.positions.clone(),
            normals: m.normals.clone(),
            tangents: m.tangents.clone(),
        };
        for (name, k) in LBS {
            assert_skinned_close(&lbs_run(k, &lbs, &input), &expect, 1e-5, name);
        }
        for (name, k) in DQS {
            assert_skinned_close(&dqs_run(k, &dqs, &input), &expect, 1e-5, name);
        }
        for (name, k) in MIXED {
            let mut s = Skinned::sentinel(m.len());
            k(&lbs, &dqs, &mix, &input, &mut s.output()).unwrap();
            assert_skinned_close(&s, &expect, 1e-5, name);
        }
    }

    /// Palettes: SIMD == scalar within 1e-5 (DQS up to the sign of both parts).
    #[test]
    fn palettes_simd_matches_reference(
        (models, ibm, _) in palettes_and_mesh(-2.0, 2.0),
    ) {
        let n = models.len();
        let mut a = vec![Mat3x4::IDENTITY; n];
        let mut b = vec![Mat3x4::IDENTITY; n];
        reference::lbs_palette(&models, &ibm, &mut b).unwrap();
        for (name, f) in LBS_PALETTE {
            f(&models, &ibm, &mut a).unwrap();
            for (x, y) in a.iter().zip(&b) {
                prop_assert!(mat_close(&x.to_mat4(), &y.to_mat4(), 1e-5), "{}: {:?} vs {:?}", name, x, y);
            }
        }
        let mut qp = vec![DualQuat::IDENTITY; n];
        let mut qr = vec![DualQuat::IDENTITY; n];
        dqs_palette_prepared(&models, &ibm, &mut qp).unwrap();
        reference::dqs_palette(&models, &ibm, &mut qr).unwrap();
        let (qa, sa, qb, sb) = {
            let mut qa = vec![DualQuat::IDENTITY; n];
            let mut qb = vec![DualQuat::IDENTITY; n];
            let mut sa = vec![[0.0; 3]; n];
            let mut sb = vec![[0.0; 3]; n];
            skin::dqs_palette_with_scale(&models, &ibm, &mut qa, &mut sa).unwrap();
            reference::dqs_palette_with_scale(&models, &ibm, &mut qb, &mut sb).unwrap();
            (qa, sa, qb, sb)
        };
        for j in 0..n {
            let r = qa[j].rotation();
            prop_assert!(close(r.length(), 1.0, 1e-5));
            prop_assert!(r.w >= 0.0);
            // Scales near 0 make the orthonormalisation ill-conditioned; compare where it is not.
            prop_assert!(qp[j].real[3] >= 0.0);
            prop_assert_eq!(qr[j], qb[j]);
            if sb[j].iter().all(|s| s.abs() > 0.05) {
                prop_assert!(dq_close(&qa[j], &qb[j], 1e-4), "{}: {:?} vs {:?}", j, qa[j], qb[j]);
                prop_assert!(dq_close(&qp[j], &qb[j], 1e-4), "prepared {}: {:?} vs {:?}", j, qp[j], qb[j]);
                for k in 0..3 {
                    prop_assert!(close(sa[j][k], sb[j][k], 1e-4));
                }
            }
        }
    }

    /// Vertex kernels: SIMD == scalar within 1e-5 on random palettes,
    /// 1-4 influences, any vertex count (tails included).
    #[test]
    fn skinning_simd_matches_reference(
        (models, ibm, m) in palettes_and_mesh(0.5, 2.0),
    ) {
        let n = models.len();
        let lbs = lbs_palette_of(&models, &ibm);
        let dqs = dqs_palette_of(&models, &ibm);
        let input = m.input(n);
        let mix: Vec<f32> = (0..m.len()).map(|i| (i % 3) as f32 * 0.5).collect();
        assert_skinned_close(
            &lbs_run(JOB_LBS, &lbs, &input),
            &lbs_run(reference::skin_lbs, &lbs, &input),
            1e-5,
            "lbs",
        );
        assert_skinned_close(
            &dqs_run(JOB_DQS, &dqs, &input),
            &dqs_run(reference::skin_dqs, &dqs, &input),
            1e-5,
            "dqs",
        );
        let mut a = Skinned::sentinel(m.len());
        let mut b = Skinned::sentinel(m.len());
        job_arrays(SkinMethod::Mixed { lbs: &lbs, dqs: &dqs, mix: &mix }, &input, &mut a.output()).unwrap();
        reference::skin_mixed(&lbs, &dqs, &mix, &input, &mut b.output()).unwrap();
        assert_skinned_close(&a, &b, 1e-5, "mixed");
        // mix 0 is LBS and mix 1 is DQS.
        let mut c = Skinned::sentinel(m.len());
        job_arrays(SkinMethod::Mixed { lbs: &lbs, dqs: &dqs, mix: &vec![0.0; m.len()] }, &input, &mut c.output()).unwrap();
        assert_skinned_close(&c, &lbs_run(JOB_LBS, &lbs, &input), 1e-5, "mix 0");
        job_arrays(SkinMethod::Mixed { lbs: &lbs, dqs: &dqs, mix: &vec![1.0; m.len()] }, &input, &mut c.output()).unwrap();
        assert_skinned_close(&c, &dqs_run(JOB_DQS, &dqs, &input), 1e-5, "mix 1");
    }

    /// Positions only: normals and tangents are neither needed nor written,
    /// and positions equal the full run's.
    #[test]
    fn positions_only_matches_full_run(
        (models, ibm, m) in palettes_and_mesh(0.5, 2.0),
    ) {
        let n = models.len();
        let lbs = lbs_palette_of(&models, &ibm);
        let dqs = dqs_palette_of(&models, &ibm);
        let full = m.input(n);
        let bare = SkinInput { normals: None, tangents: None, ..full };
        for k in 0..4 {
            let mut pos = vec![[SENTINEL; 3]; m.len()];
            let mut out = SkinOutput { positions: &mut pos, normals: None, tangents: None };
            let expect = match k {
                0 => { JOB_LBS(&lbs, &bare, &mut out).unwrap(); lbs_run(JOB_LBS, &lbs, &full) }
                1 => { reference::skin_lbs(&lbs, &bare, &mut out).unwrap(); lbs_run(JOB_LBS, &lbs, &full) }
                2 => { JOB_DQS(&dqs, &bare, &mut out).unwrap(); dqs_run(JOB_DQS, &dqs, &full) }
                _ => { reference::skin_dqs(&dqs, &bare, &mut out).unwrap(); dqs_run(JOB_DQS, &dqs, &full) }
            };
            assert_attrs_close(&pos, &expect.positions, 1e-5, "positions only");
        }
    }

    /// Interleaved buffers give the separate-array results, and leave the
    /// other floats of the destination alone.
    #[test]
    fn strided_matches_separate_arrays(
        (models, ibm, m) in palettes_and_mesh(0.5, 2.0),
        pad in 0usize..3,
        method in 0usize..3,
    ) {
        let n = models.len();
        let lbs = lbs_palette_of(&models, &ibm);
        let dqs = dqs_palette_of(&models, &ibm);
        let mix: Vec<f32> = (0..m.len()).map(|i| (i % 4) as f32 / 3.0).collect();
        let input = m.input(n);
        // Source: [uv uv | pos | nrm | tan | pad...]; destination: [tan | pos | nrm | pad].
        let ss = 2 + 3 + 3 + 4 + pad;
        let ds = 4 + 3 + 3 + pad;
        let mut src = vec![-9.0f32; m.len() * ss];
        for v in 0..m.len() {
            src[v * ss + 2..v * ss + 5].copy_from_slice(&m.positions[v]);
            src[v * ss + 5..v * ss + 8].copy_from_slice(&m.normals[v]);
            src[v * ss + 8..v * ss + 12].copy_from_slice(&m.tangents[v]);
        }
        let sv = StridedVertices { data: &src, stride: ss, position: 2, normal: Some(5), tangent: Some(8) };
        let (j, w) = (input.joints, input.weights);
        for simd in [true, false] {
            let mut dst = vec![SENTINEL; m.len() * ds];
            let mut dv = StridedVerticesMut { data: &mut dst, stride: ds, position: 4, normal: Some(7), tangent: Some(0) };
            let mut expect = Skinned::sentinel(m.len());
            match (method, simd) {
                (0, true) => job_strided(SkinMethod::Lbs { palette: &lbs }, j, w, &sv, &mut dv).unwrap(),
                (0, false) => reference::skin_lbs_strided(&lbs, j, w, &sv, &mut dv).unwrap(),
                (1, true) => job_strided(SkinMethod::Dqs { palette: &dqs }, j, w, &sv, &mut dv).unwrap(),
                (1, false) => reference::skin_dqs_strided(&dqs, j, w, &sv, &mut dv).unwrap(),
                (_, true) => job_strided(SkinMethod::Mixed { lbs: &lbs, dqs: &dqs, mix: &mix }, j, w, &sv, &mut dv).unwrap(),
                (_, false) => reference::skin_mixed_strided(&lbs, &dqs, &mix, j, w, &sv, &mut dv).unwrap(),
            }
            match method {
                0 => JOB_LBS(&lbs, &input, &mut expect.output()).unwrap(),
                1 => JOB_DQS(&dqs, &input, &mut expect.output()).unwrap(),
                _ => job_arrays(SkinMethod::Mixed { lbs: &lbs, dqs: &dqs, mix: &mix }, &input, &mut expect.output()).unwrap(),
            }
            for v in 0..m.len() {
                let d = &dst[v * ds..(v + 1) * ds];
                let got = Skinned {
                    positions: vec![[d[4], d[5], d[6]]],
                    normals: vec![[d[7], d[8], d[9]]],
                    tangents: vec![[d[0], d[1], d[2], d[3]]],
                };
                let exp = Skinned {
                    positions: vec![expect.positions[v]],
                    normals: vec![expect.normals[v]],
                    tangents: vec![expect.tangents[v]],
                };
                assert_skinned_close(&got, &exp, 1e-5, &format!("vertex {v}"));
                prop_assert!(d[10..].iter().all(|x| *x == SENTINEL), "padding written");
            }
        }
    }
}

#[test]
fn nan_in_the_palette_stays_in_its_vertices() {
    let m = small_mesh(9, 3);
    let (mut lbs, mut dqs) = some_palettes(4);
    lbs[3].rows[0][0] = f32::NAN;
    dqs[3].real[0] = f32::NAN;
    let mut m = m;
    m.joints[5] = [3, 0, 0, 0];
    let input = m.input(4);
    for (name, k) in LBS {
        let s = lbs_run(k, &lbs, &input);
        for (v, p) in s.positions.iter().enumerate() {
            assert_eq!(p[0].is_nan(), v == 5, "{name} vertex {v}");
        }
    }
    for (name, k) in DQS {
        let s = dqs_run(k, &dqs, &input);
        for (v, p) in s.positions.iter().enumerate() {
            assert_eq!(p[0].is_nan(), v == 5, "{name} vertex {v}");
        }
    }
}

// ---------------------------------------------------------------------------
// Real meshes
// ---------------------------------------------------------------------------

/// Files whose inverse bind matrices disagree with their node rest pose (the
/// importer warns); skinned with `models = inverse(inverse_bind)` instead of
/// FK of the rest pose.
const KNOWN_IBM_MISMATCH: &[&str] = &["mannequiny-0.3.0.glb", "RobotExpressive.glb"];

fn data_dir() -> Option<PathBuf> {
    support::shared_data("gltf")
}

fn gltf_files(dir: &Path) -> Vec<PathBuf> {
    support::files_with_extension(dir, &["gltf", "glb"])
}

#[test]
fn data_meshes_skin_to_their_bind_pose() {
    let Some(dir) = data_dir() else { return };
    let files = gltf_files(&dir);
    assert!(!files.is_empty(), "no glTF files under {}", dir.display());
    let mut meshes = 0;
    for f in files {
        let name = f.file_name().unwrap().to_str().unwrap().to_string();
        let a = sinew_std::import::gltf::load(&f, &Default::default())
            .unwrap_or_else(|e| panic!("{e}"));
        let view = a.skeleton.view();
        let n = view.joint_count();
        let mut rest = vec![Mat4::IDENTITY; n];
        fk::local_to_model(&FkJob::new(&view, view.rest_pose()), &mut rest).unwrap();
        for m in &a.meshes {
            let models: Vec<Mat4> = if KNOWN_IBM_MISMATCH.contains(&name.as_str()) {
                m.inverse_bind
                    .iter()
                    .map(|b| b.inverse_affine().expect("invertible inverse bind"))
                    .collect()
            } else {
                rest.clone()
            };
            let size = {
                let (mut lo, mut hi) = ([f32::MAX; 3], [f32::MIN; 3]);
                for p in &m.positions {
                    for k in 0..3 {
                        lo[k] = lo[k].min(p[k]);
                        hi[k] = hi[k].max(p[k]);
                    }
                }
                (v3(hi) - v3(lo)).length().max(1e-6)
            };
            check_influences(&m.joints, &m.weights, n)
                .unwrap_or_else(|e| panic!("{name} {}: {e}", m.name));
            let lbs = lbs_palette_of(&models, &m.inverse_bind);
            let dqs = dqs_palette_of(&models, &m.inverse_bind);
            let normals = (!m.normals.is_empty()).then_some(m.normals.as_slice());
            let input = SkinInput {
                positions: &m.positions,
                normals,
                tangents: None,
                joints: &m.joints,
                weights: &m.weights,
            };
            for method in 0..2 {
                let mut pos = vec![[0.0; 3]; m.positions.len()];
                let mut nrm = normals.map(|n| vec![[0.0; 3]; n.len()]);
                let mut out = SkinOutput {
                    positions: &mut pos,
                    normals: nrm.as_deref_mut(),
                    tangents: None,
                };
                if method == 0 {
                    JOB_LBS(&lbs, &input, &mut out).unwrap();
                } else {
                    JOB_DQS(&dqs, &input, &mut out).unwrap();
                }
                let worst = pos
                    .iter()
                    .zip(&m.positions)
                    .map(|(a, b)| (v3(*a) - v3(*b)).length())
                    .fold(0.0f32, f32::max);
                println!(
                    "{name} / {}: {} vertices, {} {:.2e} of size {size:.3}",
                    m.name,
                    m.positions.len(),
                    ["LBS", "DQS"][method],
                    worst / size
                );
                assert!(
                    worst <= 1e-4 * size,
                    "{name} / {}: {} off by {worst} (mesh size {size})",
                    m.name,
                    ["LBS", "DQS"][method]
                );
                if let (Some(got), Some(src)) = (&nrm, normals) {
                    for (g, s) in got.iter().zip(src) {
                        assert!(
                            vec_close(v3(*g), v3(*s), 1e-3),
                            "{name}: normal {g:?} vs {s:?}"
                        );
                    }
                }
            }
            meshes += 1;
        }
    }
    assert!(meshes > 0, "no skinned meshes found");
}

/// A DQS pair table (built once per mesh) changes no number DQS or the
/// mixed kernel writes on the real meshes, posed at random: per joint
/// within 30° of rest (where the palette's signs align and the kernels
/// skip their per-vertex sign tests) and within 90° (where on MakeHuman
/// they mostly cannot). `==` takes -0 for 0.
#[test]
fn data_meshes_skin_the_same_with_dqs_pair_tables() {
    use sinew_core::skin::{SkinVertices, DQS_PAIR_MAX_JOINTS};
    let Some(dir) = data_dir() else { return };
    let mut meshes = 0;
    for f in gltf_files(&dir) {
        let a = sinew_std::import::gltf::load(&f, &Default::default())
            .unwrap_or_else(|e| panic!("{e}"));
        let view = a.skeleton.view();
        let n = view.joint_count();
        for m in &a.meshes {
            let infl = m.influences(n).unwrap();
            let mut buf = vec![[0u16; 2]; infl.dqs_pair_bound()];
            if let Ok(count) = infl.dqs_pair_count() {
                assert!(count <= buf.len());
                buf.truncate(count);
            }
            let paired = match infl.with_dqs_pairs(&mut buf) {
                Ok(p) => p,
                Err(e) => {
                    assert!(n > DQS_PAIR_MAX_JOINTS, "{}: {e}", f.display());
                    continue;
                }
            };
            let normals = (!m.normals.is_empty()).then_some(m.normals.as_slice());
            let verts = SkinVertices {
                positions: &m.positions,
                normals,
                tangents: None,
            };
            let mix: Vec<f32> = (0..m.positions.len())
                .map(|i| (i % 3) as f32 / 2.0)
                .collect();
            for (seed, angle) in [(1, 30.0f32), (2, 30.0), (3, 90.0)] {
                let pose = sinew_std::synthetic::pose(&view, angle.to_radians(), seed);
                let mut models = vec![Mat4::IDENTITY; n];
                fk::local_to_model(&FkJob::new(&view, &pose), &mut models).unwrap();
                let lbs = lbs_palette_of(&models, &m.inverse_bind);
                let dqs = dqs_palette_of(&models, &m.inverse_bind);
                let run = |i: &CheckedInfluences<'_>, mixed: bool| {
                    let mut pos = vec![[0.0; 3]; m.positions.len()];
                    let mut nrm = normals.map(|n| vec![[0.0; 3]; n.len()]);
                    let mut out = SkinOutput {
                        positions: &mut pos,
                        normals: nrm.as_deref_mut(),
                        tangents: None,
                    };
                    if mixed {
                        let method = SkinMethod::Mixed {
                            lbs: &lbs,
                            dqs: &dqs,
                            mix: &mix,
                        };
                        job(
                            method,
                            i,
                            SkinAttributes::Arrays {
                                input: verts,
                                output: out.reborrow(),
                            },
                        )
                        .unwrap();
                    } else {
                        job(
                            SkinMethod::Dqs { palette: &dqs },
                            i,
                            SkinAttributes::Arrays {
                                input: verts,
                                output: out.reborrow(),
                            },
                        )
                        .unwrap();
                    }
                    (pos, nrm)
                };
                for mixed in [false, true] {
                    assert!(
                        run(&infl, mixed) == run(&paired, mixed),
                        "{} / {}: pose {seed}, mixed {mixed}",
                        f.display(),
                        m.name
                    );
                }
            }
            meshes += 1;
        }
    }
    assert!(meshes > 0, "no skinned meshes found");
}

// ---------------------------------------------------------------------------
// Checked influences: the once-per-mesh handle and the `*_checked` kernels
// ---------------------------------------------------------------------------

/// The per-vertex check, written plainly (the specification of the fast pass).
fn naive_check(joints: &[[u16; 4]], weights: &[[f32; 4]], count: usize) -> Result<(), Error> {
    if joints.len() != weights.len() {
        return Err(Error::BadLength {
            buffer: "weights",
            expected: joints.len(),
            actual: weights.len(),
        });
    }
    for (vertex, (js, ws)) in joints.iter().zip(weights).enumerate() {
        if let Some(&j) = js.iter().find(|&&j| usize::from(j) >= count) {
            return Err(Error::InfluenceOutOfRange {
                vertex,
                joint: usize::from(j),
                count,
            });
        }
        if !ws.iter().all(|w| w.is_finite() && *w >= 0.0) {
            return Err(Error::InvalidVertexWeight { vertex });
        }
        let sum = (ws[0] + ws[1]) + (ws[2] + ws[3]);
        if (sum - 1.0).abs() > WEIGHT_SUM_TOLERANCE {
            return Err(Error::VertexWeightSum { vertex });
        }
    }
    Ok(())
}

#[test]
fn checked_influences_accessors_and_errors() {
    let m = small_mesh(7, 3);
    let c = CheckedInfluences::new(&m.joints, &m.weights, 3).unwrap();
    assert_eq!((c.len(), c.is_empty(), c.joint_count()), (7, false, 3));
    assert_eq!((c.joints(), c.weights()), (&m.joints[..], &m.weights[..]));
    assert!(CheckedInfluences::new(&[], &[], 0).unwrap().is_empty());
    assert_eq!(
        CheckedInfluences::new(&m.joints, &m.weights[..6], 3).unwrap_err(),
        Error::BadLength {
            buffer: "weights",
            expected: 7,
            actual: 6
        }
    );
    // Every bad vertex position (in a block of four and in the tail) and
    // every kind of error gives the plain check's error.
    for vertex in 0..7 {
        let mut j = m.joints.clone();
        j[vertex][2] = 3;
        let e = Error::InfluenceOutOfRange {
            vertex,
            joint: 3,
            count: 3,
        };
        assert_eq!(CheckedInfluences::new(&j, &m.weights, 3).unwrap_err(), e);
        for (bad, e) in [
            (-0.1, Error::InvalidVertexWeight { vertex }),
            (f32::NAN, Error::InvalidVertexWeight { vertex }),
            (f32::INFINITY, Error::InvalidVertexWeight { vertex }),
            (0.2 + 2e-3, Error::VertexWeightSum { vertex }),
        ] {
            let mut w = m.weights.clone();
            w[vertex][2] = bad;
            assert_eq!(
                CheckedInfluences::new(&m.joints, &w, 3).unwrap_err(),
                e,
                "{bad}"
            );
            assert_eq!(check_influences(&m.joints, &w, 3).unwrap_err(), e);
        }
    }
}

/// One job with checked influences on `m` into a sentinel output; `k`:
/// 0 LBS, 1 DQS, 2 mixed over arrays, 3-5 the same over interleaved
/// buffers (stride 10: pos 0, nrm 3, tan 6).
fn run_checked(
    k: usize,
    lbs: &[Mat3x4],
    dqs: &[DualQuat],
    mix: &[f32],
    infl: &CheckedInfluences<'_>,
    m: &TestMesh,
) -> (Result<(), Error>, Skinned) {
    let vertices = SkinVertices {
        positions: &m.positions,
        normals: Some(&m.normals),
        tangents: Some(&m.tangents),
    };
    let method = |k: usize| match k % 3 {
        0 => SkinMethod::Lbs { palette: lbs },
        1 => SkinMethod::Dqs { palette: dqs },
        _ => SkinMethod::Mixed { lbs, dqs, mix },
    };
    let mut s = Skinned::sentinel(m.len());
    if k < 3 {
        let mut out = s.output();
        let r = job(
            method(k),
            infl,
            SkinAttributes::Arrays {
                input: vertices,
                output: out.reborrow(),
            },
        );
        return (r, s);
    }
    let n = m.len();
    let mut src = vec![0.0f32; n * 10];
    for v in 0..n {
        src[v * 10..v * 10 + 3].copy_from_slice(&m.positions[v]);
        src[v * 10 + 3..v * 10 + 6].copy_from_slice(&m.normals[v]);
        src[v * 10 + 6..v * 10 + 10].copy_from_slice(&m.tangents[v]);
    }
    let sv = stride10(&src);
    let mut dst = vec![SENTINEL; n * 10];
    let mut dv = StridedVerticesMut {
        data: &mut dst,
        stride: 10,
        position: 0,
        normal: Some(3),
        tangent: Some(6),
    };
    let r = job(
        method(k),
        infl,
        SkinAttributes::Strided {
            input: sv,
            output: dv.reborrow(),
        },
    );
    for v in 0..n {
        let d = &dst[v * 10..v * 10 + 10];
        s.positions[v] = [d[0], d[1], d[2]];
        s.normals[v] = [d[3], d[4], d[5]];
        s.tangents[v] = [d[6], d[7], d[8], d[9]];
    }
    (r, s)
}

#[test]
fn validity_checked_kernels() {
    let m = small_mesh(6, 3);
    let infl = CheckedInfluences::new(&m.joints, &m.weights, 3).unwrap();
    let (lbs, dqs) = some_palettes(3);
    let (lbs4, dqs4) = some_palettes(4);
    let mix = vec![0.5; 6];
    let untouched = Skinned::sentinel(6);
    for k in 0..6 {
        // A palette of another size than the influences were checked for,
        // longer or shorter, is an error (O(1)), and nothing is written.
        for (l, d, expected) in [(&lbs4[..], &dqs4[..], 4), (&lbs[..2], &dqs[..2], 2)] {
            let (r, s) = run_checked(k, l, d, &mix, &infl, &m);
            assert_eq!(
                r,
                Err(Error::BadLength {
                    buffer: "palette",
                    expected: 3,
                    actual: expected
                }),
                "kernel {k}"
            );
            assert_eq!(s, untouched, "kernel {k}: written on error");
        }
        if k % 3 == 1 {
            // DQS has no "dqs palette" argument to mismatch, nor a mix.
            let (r, s) = run_checked(k, &lbs4, &dqs[..2], &mix, &infl, &m);
            assert_eq!(
                r,
                Err(Error::BadLength {
                    buffer: "palette",
                    expected: 3,
                    actual: 2
                })
            );
            assert_eq!(s, untouched);
            continue;
        }
        if k % 3 == 2 {
            let (r, s) = run_checked(k, &lbs, &dqs4, &mix, &infl, &m);
            assert_eq!(
                r,
                Err(Error::BadLength {
                    buffer: "dqs palette",
                    expected: 3,
                    actual: 4
                }),
                "kernel {k}"
            );
            assert_eq!(s, untouched);
            let mut bad_mix = mix.clone();
            bad_mix[4] = 1.5;
            let (r, s) = run_checked(k, &lbs, &dqs, &bad_mix, &infl, &m);
            assert_eq!(r, Err(Error::InvalidMixWeight { vertex: 4 }), "kernel {k}");
            assert_eq!(s, untouched);
            let (r, _) = run_checked(k, &lbs, &dqs, &mix[..5], &infl, &m);
            assert_eq!(
                r,
                Err(Error::BadLength {
                    buffer: "mix",
                    expected: 6,
                    actual: 5
                }),
                "kernel {k}"
            );
        }
        let (r, _) = run_checked(k, &lbs, &dqs, &mix, &infl, &m);
        assert_eq!(r, Ok(()), "kernel {k}");
    }
    // Attribute lengths are still checked against the influences' vertex count.
    let short = SkinVertices {
        positions: &m.positions[..5],
        normals: Some(&m.normals),
        tangents: None,
    };
    let mut s = Skinned::sentinel(6);
    let mut out = SkinOutput {
        positions: &mut s.positions,
        normals: None,
        tangents: None,
    };
    assert_eq!(
        job(
            SkinMethod::Lbs { palette: &lbs },
            &infl,
            SkinAttributes::Arrays {
                input: short,
                output: out.reborrow()
            }
        ),
        Err(Error::BadLength {
            buffer: "positions",
            expected: 6,
            actual: 5
        })
    );
    let no_normals = SkinVertices {
        positions: &m.positions,
        normals: None,
        tangents: None,
    };
    let mut out = s.output();
    assert_eq!(
        job(
            SkinMethod::Dqs { palette: &dqs },
            &infl,
            SkinAttributes::Arrays {
                input: no_normals,
                output: out.reborrow()
            }
        ),
        Err(Error::BadLength {
            buffer: "normals",
            expected: 6,
            actual: 0
        })
    );
    assert_eq!(s, Skinned::sentinel(6));
    let sv = StridedVertices {
        data: &[],
        stride: 0,
        position: 0,
        normal: None,
        tangent: None,
    };
    let mut dst = [0.0f32; 18];
    let mut dv = StridedVerticesMut {
        data: &mut dst,
        stride: 3,
        position: 0,
        normal: None,
        tangent: None,
    };
    assert_eq!(
        job(
            SkinMethod::Lbs { palette: &lbs },
            &infl,
            SkinAttributes::Strided {
                input: sv,
                output: dv.reborrow()
            }
        ),
        Err(Error::InvalidLayout {
            what: "source stride is 0"
        })
    );
}

/// The job's validity: every form (method x four or eight influences x
/// arrays or interleaved buffers) gives the precise error of each bad
/// size, checked before anything is written.
#[test]
fn validity_job() {
    let m = small_mesh(6, 3);
    let (lbs, dqs) = some_palettes(3);
    let (lbs4, dqs4) = some_palettes(4);
    let mix = vec![0.5; 6];
    let four = CheckedInfluences::new(&m.joints, &m.weights, 3).unwrap();
    let j1 = vec![[2u16, 0, 0, 0]; 6];
    let (w0, w1) = (
        vec![[0.3f32, 0.3, 0.2, 0.1]; 6],
        vec![[0.1f32, 0.0, 0.0, 0.0]; 6],
    );
    let eight = CheckedInfluences::new8(&m.joints, &w0, &j1, &w1, 3).unwrap();
    let bl = |buffer, expected, actual| {
        Err(Error::BadLength {
            buffer,
            expected,
            actual,
        })
    };
    for infl in [&four, &eight] {
        for k in 0..6 {
            // A palette of another length than the handle's joint count,
            // and, for the mix, a DQS palette or mix weights that do not fit.
            let (r, s) = run_checked(k, &lbs4, &dqs4, &mix, infl, &m);
            assert_eq!(r, bl("palette", 3, 4), "kernel {k}");
            assert_eq!(s, Skinned::sentinel(6), "kernel {k}: written on error");
            if k % 3 == 2 {
                let (r, s) = run_checked(k, &lbs, &dqs4, &mix, infl, &m);
                assert_eq!(r, bl("dqs palette", 3, 4), "kernel {k}");
                assert_eq!(s, Skinned::sentinel(6));
                let (r, s) = run_checked(k, &lbs, &dqs, &mix[..5], infl, &m);
                assert_eq!(r, bl("mix", 6, 5), "kernel {k}");
                assert_eq!(s, Skinned::sentinel(6));
                let mut nan = mix.clone();
                nan[2] = f32::NAN;
                let (r, _) = run_checked(k, &lbs, &dqs, &nan, infl, &m);
                assert_eq!(r, Err(Error::InvalidMixWeight { vertex: 2 }), "kernel {k}");
            }
            let (r, _) = run_checked(k, &lbs, &dqs, &mix, infl, &m);
            assert_eq!(r, Ok(()), "kernel {k}");
        }
    }
    let methods = [
        SkinMethod::Lbs { palette: &lbs },
        SkinMethod::Dqs { palette: &dqs },
        SkinMethod::Mixed {
            lbs: &lbs,
            dqs: &dqs,
            mix: &mix,
        },
    ];
    // Separate arrays: (input normals, input tangents, output lengths
    // (positions, normals, tangents), error).
    type ArrayCase<'a> = (
        Option<&'a [[f32; 3]]>,
        Option<&'a [[f32; 4]]>,
        (usize, Option<usize>, Option<usize>),
        Result<(), Error>,
    );
    let (nrm, tan) = (Some(&m.normals[..]), Some(&m.tangents[..]));
    let array_cases: [ArrayCase<'_>; 7] = [
        // Mismatched input attribute lengths.
        (
            Some(&m.normals[..5]),
            tan,
            (6, None, None),
            bl("normals", 6, 5),
        ),
        (
            nrm,
            Some(&m.tangents[..3]),
            (6, None, None),
            bl("tangents", 6, 3),
        ),
        // Output present without its input: a length-0 input.
        (None, tan, (6, Some(6), None), bl("normals", 6, 0)),
        (nrm, None, (6, Some(6), Some(6)), bl("tangents", 6, 0)),
        // Outputs missing (empty) or of another length.
        (nrm, tan, (0, None, None), bl("output positions", 6, 0)),
        (nrm, tan, (6, Some(7), None), bl("output normals", 6, 7)),
        // An input without its output is read for nothing and not written.
        (nrm, tan, (6, None, None), Ok(())),
    ];
    for (infl, name) in [(&four, "four"), (&eight, "eight")] {
        for (c, (normals, tangents, (np, nn, nt), want)) in array_cases.iter().enumerate() {
            for method in methods {
                let input = SkinVertices {
                    positions: &m.positions,
                    normals: *normals,
                    tangents: *tangents,
                };
                let mut pos = vec![[SENTINEL; 3]; *np];
                let mut out_n = nn.map(|n| vec![[SENTINEL; 3]; n]);
                let mut out_t = nt.map(|n| vec![[SENTINEL; 4]; n]);
                let mut out = SkinOutput {
                    positions: &mut pos,
                    normals: out_n.as_deref_mut(),
                    tangents: out_t.as_deref_mut(),
                };
                let r = job(
                    method,
                    infl,
                    SkinAttributes::Arrays {
                        input,
                        output: out.reborrow(),
                    },
                );
                assert_eq!(r, *want, "{name} case {c} {method:?}");
                if want.is_err() {
                    assert!(pos.iter().flatten().all(|x| *x == SENTINEL), "case {c}");
                    assert!(out_n.iter().flatten().flatten().all(|x| *x == SENTINEL));
                } else {
                    assert!(pos.iter().flatten().all(|x| *x != SENTINEL), "case {c}");
                }
            }
        }
    }
    // Interleaved buffers: a source without tangents.
    let src = vec![0.25f32; 6 * 10];
    let sv = StridedVertices {
        tangent: None,
        ..stride10(&src)
    };
    // (source, destination floats, destination normal, tangent, error)
    type StridedCase<'a> = (
        StridedVertices<'a>,
        usize,
        Option<usize>,
        Option<usize>,
        Result<(), Error>,
    );
    let strided_cases: [StridedCase<'_>; 6] = [
        // Buffers too short (the source one float, the destination a vertex).
        (
            StridedVertices {
                data: &src[..59],
                ..sv
            },
            60,
            None,
            None,
            bl("source vertices", 60, 59),
        ),
        (sv, 50, None, None, bl("destination vertices", 60, 50)),
        // No destination buffer at all.
        (sv, 0, None, None, bl("destination vertices", 60, 0)),
        // A destination attribute the source lacks.
        (sv, 60, None, Some(6), bl("tangents", 6, 0)),
        (
            sv,
            60,
            Some(2),
            None,
            Err(Error::InvalidLayout {
                what: "destination attributes overlap",
            }),
        ),
        (sv, 60, Some(3), None, Ok(())),
    ];
    for (infl, name) in [(&four, "four"), (&eight, "eight")] {
        for (c, (src, len, normal, tangent, want)) in strided_cases.iter().enumerate() {
            for method in methods {
                let mut data = vec![SENTINEL; *len];
                let mut dv = StridedVerticesMut {
                    data: &mut data,
                    stride: 10,
                    position: 0,
                    normal: *normal,
                    tangent: *tangent,
                };
                let r = job(
                    method,
                    infl,
                    SkinAttributes::Strided {
                        input: *src,
                        output: dv.reborrow(),
                    },
                );
                assert_eq!(r, *want, "{name} strided case {c} {method:?}");
                let untouched = data.iter().all(|x| *x == SENTINEL);
                assert_eq!(untouched, want.is_err(), "{name} strided case {c}");
            }
        }
    }
    // `validate` reports what `run` would, without writing.
    let mut pos = vec![[SENTINEL; 3]; 5];
    let job = SkinJob {
        method: SkinMethod::Lbs { palette: &lbs },
        influences: &four,
        attributes: SkinAttributes::Arrays {
            input: SkinVertices {
                positions: &m.positions,
                normals: None,
                tangents: None,
            },
            output: SkinOutput {
                positions: &mut pos,
                normals: None,
                tangents: None,
            },
        },
    };
    assert_eq!(job.validate(), bl("output positions", 6, 5));
    assert!(pos.iter().flatten().all(|x| *x == SENTINEL));
}

/// Every form of the job — LBS, DQS and mixed; four or eight influences,
/// each with and without a DQS pair table; separate arrays and
/// interleaved buffers — matches the scalar reference.
#[test]
fn job_matches_reference_for_every_form() {
    let joints = 6;
    let (lbs, dqs) = fanned_palettes(joints, Vec3::new(0.6, 0.0, 0.8), 12.0, 0.05);
    let m = small_mesh(37, joints as u16);
    let n = m.len();
    let mix: Vec<f32> = (0..n).map(|i| (i % 5) as f32 / 4.0).collect();
    let j1: Vec<[u16; 4]> = (0..n)
        .map(|v| [((v + 4) % joints) as u16, 5, 0, 0])
        .collect();
    let w0 = vec![[0.3f32, 0.2, 0.15, 0.1]; n];
    let w1 = vec![[0.15f32, 0.1, 0.0, 0.0]; n];
    let four = CheckedInfluences::new(&m.joints, &m.weights, joints).unwrap();
    let eight = CheckedInfluences::new8(&m.joints, &w0, &j1, &w1, joints).unwrap();
    let mut bufs = [four, eight].map(|i| vec![[0u16; 2]; i.dqs_pair_count().unwrap()]);
    let [b4, b8] = &mut bufs;
    let four_paired = four.with_dqs_pairs(b4).unwrap();
    let eight_paired = eight.with_dqs_pairs(b8).unwrap();
    assert!(!four_paired.dqs_pairs().is_empty() && !eight_paired.dqs_pairs().is_empty());
    let vertices = SkinVertices {
        positions: &m.positions,
        normals: Some(&m.normals),
        tangents: Some(&m.tangents),
    };
    for (infl, name) in [
        (&four, "four"),
        (&four_paired, "four, paired"),
        (&eight, "eight"),
        (&eight_paired, "eight, paired"),
    ] {
        let mut expected = [
            Skinned::sentinel(n),
            Skinned::sentinel(n),
            Skinned::sentinel(n),
        ];
        reference::skin_lbs_checked(&lbs, infl, &vertices, &mut expected[0].output()).unwrap();
        reference::skin_dqs_checked(&dqs, infl, &vertices, &mut expected[1].output()).unwrap();
        reference::skin_mixed_checked(&lbs, &dqs, &mix, infl, &vertices, &mut expected[2].output())
            .unwrap();
        for (k, s) in run_checked_all(&lbs, &dqs, &mix, infl, &m)
            .iter()
            .enumerate()
        {
            assert_skinned_close(s, &expected[k % 3], 1e-5, &format!("{name}: form {k}"));
        }
    }
}

/// Weights near the sum tolerance, sometimes NaN, negative or infinite.
fn edgy_weights() -> impl Strategy<Value = [f32; 4]> {
    (
        prop::array::uniform4(0.0f32..0.5),
        -3e-3f32..3e-3,
        0usize..24,
        prop_oneof![
            Just(f32::NAN),
            Just(-1e-3f32),
            Just(f32::INFINITY),
            Just(f32::MAX)
        ],
    )
        .prop_map(|(w, off, k, bad)| {
            let sum: f32 = w.iter().sum();
            let mut w = if sum > 0.0 {
                w.map(|x| x / sum)
            } else {
                [1.0, 0.0, 0.0, 0.0]
            };
            w[0] += off;
            if k < 4 {
                w[k] = bad;
            }
            w
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The fast (lane-wise) check accepts and rejects exactly as the plain
    /// per-vertex check, with the same error.
    #[test]
    fn influence_check_matches_plain_check(
        v in prop::collection::vec(
            (prop::array::uniform4(0u16..12), edgy_weights()),
            0..19,
        ),
        count in 0usize..13,
    ) {
        let joints: Vec<[u16; 4]> = v.iter().map(|x| x.0).collect();
        let weights: Vec<[f32; 4]> = v.iter().map(|x| x.1).collect();
        let fast = check_influences(&joints, &weights, count);
        prop_assert_eq!(fast, naive_check(&joints, &weights, count));
        prop_assert_eq!(
            CheckedInfluences::new(&joints, &weights, count).map(|c| c.len()),
            fast.map(|()| joints.len())
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// The checked kernels compute exactly what the plain ones compute.
    #[test]
    fn checked_kernels_match_plain(
        (models, ibm, m) in palettes_and_mesh(0.5, 2.0),
    ) {
        let n = models.len();
        let lbs = lbs_palette_of(&models, &ibm);
        let dqs = dqs_palette_of(&models, &ibm);
        let input = m.input(n);
        let infl = CheckedInfluences::new(&m.joints, &m.weights, n).unwrap();
        let mix: Vec<f32> = (0..m.len()).map(|i| (i % 3) as f32 * 0.5).collect();
        let plain = [
            lbs_run(JOB_LBS, &lbs, &input),
            dqs_run(JOB_DQS, &dqs, &input),
            {
                let mut s = Skinned::sentinel(m.len());
                job_arrays(SkinMethod::Mixed { lbs: &lbs, dqs: &dqs, mix: &mix }, &input, &mut s.output()).unwrap();
                s
            },
        ];
        for k in 0..6 {
            let (r, s) = run_checked(k, &lbs, &dqs, &mix, &infl, &m);
            prop_assert_eq!(r, Ok(()));
            if k < 3 {
                prop_assert_eq!(&s, &plain[k], "kernel {}", k);
            } else {
                assert_skinned_close(&s, &plain[k - 3], 1e-6, &format!("kernel {k}"));
            }
        }
    }
}

/// Palettes of `joints` joints, joint `j` rotated by `j * degrees` about
/// `axis` and scaled by `1 + j * scale`, over one inverse bind.
fn fanned_palettes(
    joints: usize,
    axis: Vec3,
    degrees: f32,
    scale: f32,
) -> (Vec<Mat3x4>, Vec<DualQuat>) {
    let models: Vec<Mat4> = (0..joints)
        .map(|j| {
            Mat4::from_trs(
                Vec3::new(0.1 * j as f32, -0.2, 0.3),
                rot(axis, degrees * j as f32),
                Vec3::splat(1.0 + scale * j as f32),
            )
        })
        .collect();
    let ibm = vec![translation(0.0, -0.5, 0.1); joints];
    (lbs_palette_of(&models, &ibm), dqs_palette_of(&models, &ibm))
}

/// Blocks whose trailing slots all have weight 0 (skipped by the SIMD
/// kernels) skin as the scalar twins, which read every slot.
#[test]
fn zero_weight_slots_match_reference() {
    let joints = 5;
    let (lbs, dqs) = fanned_palettes(joints, Vec3::new(0.6, 0.8, 0.0), 25.0, 0.1);
    // Blocks of 1, 2, 3 and 4 used slots, one block mixing them, a tail of 3.
    let per_block: [[usize; 4]; 5] = [[1; 4], [2, 1, 2, 1], [3, 1, 1, 2], [4; 4], [1, 4, 2, 3]];
    let mut m = small_mesh(23, joints as u16);
    for v in 0..23 {
        let used = per_block.get(v / 4).map_or(v % 4 + 1, |b| b[v % 4]);
        let mut w = [0.0f32; 4];
        for (k, x) in w.iter_mut().enumerate().take(used) {
            *x = (4 - k) as f32;
        }
        let sum: f32 = w.iter().sum();
        m.weights[v] = w.map(|x| x / sum);
    }
    let input = m.input(joints);
    assert_skinned_close(
        &lbs_run(JOB_LBS, &lbs, &input),
        &lbs_run(reference::skin_lbs, &lbs, &input),
        1e-5,
        "lbs",
    );
    assert_skinned_close(
        &dqs_run(JOB_DQS, &dqs, &input),
        &dqs_run(reference::skin_dqs, &dqs, &input),
        1e-5,
        "dqs",
    );
    let mix = vec![0.25; 23];
    let mut a = Skinned::sentinel(23);
    let mut b = Skinned::sentinel(23);
    job_arrays(
        SkinMethod::Mixed {
            lbs: &lbs,
            dqs: &dqs,
            mix: &mix,
        },
        &input,
        &mut a.output(),
    )
    .unwrap();
    reference::skin_mixed(&lbs, &dqs, &mix, &input, &mut b.output()).unwrap();
    assert_skinned_close(&a, &b, 1e-5, "mixed");
}

// ---------------------------------------------------------------------------
// Eight influences per vertex (two sets of four)
// ---------------------------------------------------------------------------

/// The plain per-vertex check of eight influences: slots 0-7's indices,
/// then their weights, then the sum (set 0's, plus set 1's).
fn naive_check8(sets: [skin::InfluenceSet<'_>; 2], count: usize) -> Result<(), Error> {
    let [(j0, w0), (j1, w1)] = sets;
    for vertex in 0..j0.len() {
        let js = j0[vertex].iter().chain(&j1[vertex]);
        if let Some(&j) = js.clone().find(|&&j| usize::from(j) >= count) {
            return Err(Error::InfluenceOutOfRange {
                vertex,
                joint: j.into(),
                count,
            });
        }
        let ws: Vec<f32> = w0[vertex].iter().chain(&w1[vertex]).copied().collect();
        if !ws.iter().all(|w| w.is_finite() && *w >= 0.0) {
            return Err(Error::InvalidVertexWeight { vertex });
        }
        let sum = ((ws[0] + ws[1]) + (ws[2] + ws[3])) + ((ws[4] + ws[5]) + (ws[6] + ws[7]));
        if (sum - 1.0).abs() > WEIGHT_SUM_TOLERANCE {
            return Err(Error::VertexWeightSum { vertex });
        }
    }
    Ok(())
}

#[test]
fn eight_influences_accessors_and_errors() {
    let m = small_mesh(7, 3);
    // Half of each vertex's weight moved to slots 4-7.
    let w0: Vec<[f32; 4]> = m.weights.iter().map(|w| w.map(|x| x * 0.5)).collect();
    let j1: Vec<[u16; 4]> = m.joints.iter().map(|j| [j[3], j[2], j[1], j[0]]).collect();
    let w1 = w0.clone();
    let c = CheckedInfluences::new8(&m.joints, &w0, &j1, &w1, 3).unwrap();
    assert_eq!((c.len(), c.joint_count()), (7, 3));
    assert_eq!(c.second_set(), Some((&j1[..], &w1[..])));
    assert_eq!(
        CheckedInfluences::new(&m.joints, &m.weights, 3)
            .unwrap()
            .second_set(),
        None
    );
    assert!(skin::check_influences8(&m.joints, &w0, &j1, &w1, 3).is_ok());
    // Set 0 alone no longer sums to 1.
    assert_eq!(
        check_influences(&m.joints, &w0, 3),
        Err(Error::VertexWeightSum { vertex: 0 })
    );
    for (j, w, jj, ww, name) in [
        (&m.joints[..], &w0[..6], &j1[..], &w1[..], "weights"),
        (&m.joints[..], &w0[..], &j1[..6], &w1[..], "joints1"),
        (&m.joints[..], &w0[..], &j1[..], &w1[..5], "weights1"),
    ] {
        assert_eq!(
            CheckedInfluences::new8(j, w, jj, ww, 3).unwrap_err(),
            Error::BadLength {
                buffer: name,
                expected: 7,
                actual: w.len().min(jj.len()).min(ww.len())
            }
        );
    }
    // A bad slot 4-7 at every vertex position (blocks and tail).
    for vertex in 0..7 {
        let mut jb = j1.clone();
        jb[vertex][1] = 9;
        assert_eq!(
            CheckedInfluences::new8(&m.joints, &w0, &jb, &w1, 3).unwrap_err(),
            Error::InfluenceOutOfRange {
                vertex,
                joint: 9,
                count: 3
            }
        );
        for (bad, e) in [
            (-0.1, Error::InvalidVertexWeight { vertex }),
            (f32::NAN, Error::InvalidVertexWeight { vertex }),
            (f32::INFINITY, Error::InvalidVertexWeight { vertex }),
            (w1[vertex][2] + 2e-3, Error::VertexWeightSum { vertex }),
        ] {
            let mut wb = w1.clone();
            wb[vertex][2] = bad;
            assert_eq!(
                CheckedInfluences::new8(&m.joints, &w0, &j1, &wb, 3).unwrap_err(),
                e,
                "{bad}"
            );
            assert_eq!(
                skin::check_influences8(&m.joints, &w0, &j1, &wb, 3).unwrap_err(),
                e
            );
        }
    }
}

/// One vertex's eight influences: 1-8 joints with positive weights summing
/// to 1, as two sets.
fn influence8(joints: usize) -> impl Strategy<Value = ([[u16; 4]; 2], [[f32; 4]; 2])> {
    (
        1usize..=8,
        prop::array::uniform8(0..joints as u16),
        prop::array::uniform8(0.05f32..1.0),
    )
        .prop_map(|(count, j, w)| {
            let mut w = w;
            for x in w.iter_mut().skip(count) {
                *x = 0.0;
            }
            let sum: f32 = w.iter().sum();
            let w = w.map(|x| x / sum);
            (
                [[j[0], j[1], j[2], j[3]], [j[4], j[5], j[6], j[7]]],
                [[w[0], w[1], w[2], w[3]], [w[4], w[5], w[6], w[7]]],
            )
        })
}

/// All six checked kernels (SoA and strided) with eight influences.
fn run_checked_all(
    lbs: &[Mat3x4],
    dqs: &[DualQuat],
    mix: &[f32],
    infl: &CheckedInfluences<'_>,
    m: &TestMesh,
) -> Vec<Skinned> {
    (0..6)
        .map(|k| {
            let (r, s) = run_checked(k, lbs, dqs, mix, infl, m);
            assert_eq!(r, Ok(()), "kernel {k}");
            s
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// The fast check of eight influences accepts and rejects exactly as
    /// the plain per-vertex check, with the same error.
    #[test]
    fn influence8_check_matches_plain_check(
        v in prop::collection::vec(
            (prop::array::uniform8(0u16..12), edgy_weights(), edgy_weights(), 0.0f32..1.0),
            0..19,
        ),
        count in 0usize..13,
    ) {
        let j0: Vec<[u16; 4]> = v.iter().map(|x| [x.0[0], x.0[1], x.0[2], x.0[3]]).collect();
        let j1: Vec<[u16; 4]> = v.iter().map(|x| [x.0[4], x.0[5], x.0[6], x.0[7]]).collect();
        // The two sets share the vertex's weight in proportion `t`.
        let w0: Vec<[f32; 4]> = v.iter().map(|x| x.1.map(|w| w * x.3)).collect();
        let w1: Vec<[f32; 4]> = v.iter().map(|x| x.2.map(|w| w * (1.0 - x.3))).collect();
        let fast = skin::check_influences8(&j0, &w0, &j1, &w1, count);
        prop_assert_eq!(fast, naive_check8([(&j0, &w0), (&j1, &w1)], count));
    }

    /// Eight influences: every SIMD kernel (SoA and strided) matches the
    /// scalar reference, which blends all eight slots of every vertex.
    #[test]
    fn eight_influences_match_reference(
        (models, ibm, m, sets) in (1usize..=9).prop_flat_map(|n| (
            prop::collection::vec(affine(0.5, 2.0), n),
            prop::collection::vec(affine(0.5, 2.0), n),
            mesh(n, 23),
            prop::collection::vec(influence8(n), 23),
        )),
    ) {
        let n = models.len();
        let (lbs, dqs) = (lbs_palette_of(&models, &ibm), dqs_palette_of(&models, &ibm));
        let v = m.len();
        let j0: Vec<[u16; 4]> = sets[..v].iter().map(|s| s.0[0]).collect();
        let j1: Vec<[u16; 4]> = sets[..v].iter().map(|s| s.0[1]).collect();
        let w0: Vec<[f32; 4]> = sets[..v].iter().map(|s| s.1[0]).collect();
        let w1: Vec<[f32; 4]> = sets[..v].iter().map(|s| s.1[1]).collect();
        let infl = CheckedInfluences::new8(&j0, &w0, &j1, &w1, n).unwrap();
        let mix: Vec<f32> = (0..v).map(|i| (i % 3) as f32 * 0.5).collect();
        let vertices = SkinVertices {
            positions: &m.positions,
            normals: Some(&m.normals),
            tangents: Some(&m.tangents),
        };
        let mut expected = [Skinned::sentinel(v), Skinned::sentinel(v), Skinned::sentinel(v)];
        reference::skin_lbs_checked(&lbs, &infl, &vertices, &mut expected[0].output()).unwrap();
        reference::skin_dqs_checked(&dqs, &infl, &vertices, &mut expected[1].output()).unwrap();
        reference::skin_mixed_checked(&lbs, &dqs, &mix, &infl, &vertices, &mut expected[2].output())
            .unwrap();
        for (k, s) in run_checked_all(&lbs, &dqs, &mix, &infl, &m).iter().enumerate() {
            assert_skinned_close(s, &expected[k % 3], 1e-5, &format!("kernel {k}"));
        }
    }

    /// A vertex's four influences split between the two sets (slots
    /// `0..cut` in the first, the rest at the start of the second) skin as
    /// the four do; with every slot on one joint, LBS == DQS == that
    /// joint's transform.
    #[test]
    fn eight_influences_split_four_and_one_joint(
        (models, ibm, m) in (1usize..=9).prop_flat_map(|n| (
            prop::collection::vec(rigid(), n),
            prop::collection::vec(rigid(), n),
            mesh(n, 23),
        )),
        cut in 1usize..=4,
    ) {
        let n = models.len();
        let (lbs, dqs) = (lbs_palette_of(&models, &ibm), dqs_palette_of(&models, &ibm));
        let mix: Vec<f32> = (0..m.len()).map(|i| (i % 3) as f32 * 0.5).collect();
        let four = CheckedInfluences::new(&m.joints, &m.weights, n).unwrap();
        let split = |a: &[f32; 4]| {
            let mut lo = [0.0; 4];
            let mut hi = [0.0; 4];
            lo[..cut].copy_from_slice(&a[..cut]);
            hi[..4 - cut].copy_from_slice(&a[cut..]);
            (lo, hi)
        };
        let w: Vec<_> = m.weights.iter().map(split).collect();
        let j: Vec<_> = m
            .joints
            .iter()
            .map(|j| split(&j.map(f32::from)))
            .map(|(a, b)| (a.map(|x| x as u16), b.map(|x| x as u16)))
            .collect();
        let (j0, j1): (Vec<[u16; 4]>, Vec<[u16; 4]>) = j.into_iter().unzip();
        let (w0, w1): (Vec<[f32; 4]>, Vec<[f32; 4]>) = w.into_iter().unzip();
        let eight = CheckedInfluences::new8(&j0, &w0, &j1, &w1, n).unwrap();
        let a = run_checked_all(&lbs, &dqs, &mix, &four, &m);
        let b = run_checked_all(&lbs, &dqs, &mix, &eight, &m);
        for k in 0..6 {
            assert_skinned_close(&b[k], &a[k], 1e-5, &format!("split kernel {k}"));
        }
        // Every slot on the first slot's joint, weights spread over all eight.
        let one_j0: Vec<[u16; 4]> = m.joints.iter().map(|j| [j[0]; 4]).collect();
        let spread = [0.3, 0.2, 0.1, 0.05];
        let one_w1 = vec![[0.15, 0.1, 0.05, 0.05]; m.len()];
        let one_w0 = vec![spread; m.len()];
        let one = CheckedInfluences::new8(&one_j0, &one_w0, &one_j0, &one_w1, n).unwrap();
        let s = run_checked_all(&lbs, &dqs, &mix, &one, &m);
        for v in 0..m.len() {
            let j = m.joints[v][0] as usize;
            let t = models[j] * ibm[j];
            let p = t.transform_point(v3(m.positions[v]));
            for (k, s) in s.iter().enumerate() {
                prop_assert!(vec_close(v3(s.positions[v]), p, 1e-4), "kernel {} vertex {}", k, v);
            }
        }
    }
}

/// Tightly packed interleaved buffers, whose last vertex's attribute ends
/// the buffer (`xyz` at stride 3, `pos nrm` at stride 6): the 8-wide
/// kernels read 4 floats per attribute, so the last vertex must take the
/// padded path; every vertex matches the scalar twin.
#[test]
fn tightly_packed_strided_buffers_match_reference() {
    let (lbs, dqs) = some_palettes(4);
    for n in [1usize, 7, 8, 9, 16, 23, 41] {
        let m = small_mesh(n, 4);
        for normals in [false, true] {
            let stride = if normals { 6 } else { 3 };
            let mut src = vec![0.0f32; n * stride];
            for v in 0..n {
                src[v * stride..v * stride + 3].copy_from_slice(&m.positions[v]);
                if normals {
                    src[v * stride + 3..v * stride + 6].copy_from_slice(&m.normals[v]);
                }
            }
            let sv = StridedVertices {
                data: &src,
                stride,
                position: 0,
                normal: normals.then_some(3),
                tangent: None,
            };
            let mut out = [vec![SENTINEL; n * stride], vec![SENTINEL; n * stride]];
            for (k, simd) in [(0, true), (1, false)] {
                let mut dv = StridedVerticesMut {
                    data: &mut out[k],
                    stride,
                    position: 0,
                    normal: normals.then_some(3),
                    tangent: None,
                };
                let (j, w) = (&m.joints[..], &m.weights[..]);
                match simd {
                    true => {
                        job_strided(SkinMethod::Dqs { palette: &dqs }, j, w, &sv, &mut dv).unwrap()
                    }
                    false => reference::skin_dqs_strided(&dqs, j, w, &sv, &mut dv).unwrap(),
                }
            }
            for (a, b) in out[0].iter().zip(&out[1]) {
                assert!((a - b).abs() <= 1e-5 * (1.0 + b.abs()), "n {n}: {a} vs {b}");
            }
            let mut a = vec![SENTINEL; n * stride];
            let mut b = vec![SENTINEL; n * stride];
            let layout = |data| StridedVerticesMut {
                data,
                stride,
                position: 0,
                normal: normals.then_some(3),
                tangent: None,
            };
            job_strided(
                SkinMethod::Lbs { palette: &lbs },
                &m.joints,
                &m.weights,
                &sv,
                &mut layout(&mut a),
            )
            .unwrap();
            reference::skin_lbs_strided(&lbs, &m.joints, &m.weights, &sv, &mut layout(&mut b))
                .unwrap();
            for (a, b) in a.iter().zip(&b) {
                assert!((a - b).abs() <= 1e-5 * (1.0 + b.abs()), "n {n}: {a} vs {b}");
            }
        }
    }
}
