//! Shared helpers for the integration tests: tolerant comparisons, proptest
//! strategies for quaternions, transforms, poses and random skeletons, and
//! brute-force tree queries used as independent references.
//!
//! Each test binary includes this file with
//! `#[path = "../support/mod.rs"] mod support;` and uses only part of it.
#![allow(dead_code)]

pub mod gltf;
pub mod peak;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use proptest::prelude::*;
use sinew_core::skeleton::JointDef;
use sinew_core::soa::{pack, unpack};
use sinew_core::{soa_count, Mat4, Quat, SoaTransform, Transform, Vec3};
use sinew_std::Humanoid;

/// Tolerance of SIMD-vs-scalar comparisons (the crate's documented contract).
pub const TOL: f32 = 1e-5;

// ---------------------------------------------------------------------------
// Comparisons
// ---------------------------------------------------------------------------

/// `|a - b| <= tol * max(1, |a|, |b|)`: absolute near zero, relative for big values.
#[must_use]
pub fn close(a: f32, b: f32, tol: f32) -> bool {
    let scale = 1.0f32.max(a.abs()).max(b.abs());
    (a - b).abs() <= tol * scale
}

/// Component-wise closeness of two vectors (relative to their magnitude).
#[must_use]
pub fn vec_close(a: Vec3, b: Vec3, tol: f32) -> bool {
    let scale = 1.0f32
        .max(a.x.abs().max(a.y.abs()).max(a.z.abs()))
        .max(b.x.abs().max(b.y.abs()).max(b.z.abs()));
    (a.x - b.x).abs() <= tol * scale
        && (a.y - b.y).abs() <= tol * scale
        && (a.z - b.z).abs() <= tol * scale
}

/// `b` with its sign chosen to be on `a`'s hemisphere (q and -q are the same rotation).
#[must_use]
pub fn align(a: Quat, b: Quat) -> Quat {
    if a.dot(b) < 0.0 {
        -b
    } else {
        b
    }
}

/// Same rotation within `tol`, component-wise after sign alignment.
#[must_use]
pub fn quat_close(a: Quat, b: Quat, tol: f32) -> bool {
    let b = align(a, b);
    (a.x - b.x).abs() <= tol
        && (a.y - b.y).abs() <= tol
        && (a.z - b.z).abs() <= tol
        && (a.w - b.w).abs() <= tol
}

/// Translation, rotation (sign-aligned) and scale all within `tol`.
#[must_use]
pub fn transform_close(a: &Transform, b: &Transform, tol: f32) -> bool {
    vec_close(a.translation, b.translation, tol)
        && quat_close(a.rotation, b.rotation, tol)
        && vec_close(a.scale, b.scale, tol)
}

/// Largest element magnitude of a matrix.
#[must_use]
pub fn mat_max_abs(m: &Mat4) -> f32 {
    m.cols
        .iter()
        .flatten()
        .fold(0.0f32, |acc, v| acc.max(v.abs()))
}

/// Matrices equal within `tol` relative to the larger one's biggest element (at least 1).
#[must_use]
pub fn mat_close(a: &Mat4, b: &Mat4, tol: f32) -> bool {
    let scale = 1.0f32.max(mat_max_abs(a)).max(mat_max_abs(b));
    a.max_abs_diff(b) <= tol * scale
}

/// Panics with the first joint whose transforms differ by more than `tol`.
pub fn assert_poses_close(a: &[SoaTransform], b: &[SoaTransform], joints: usize, tol: f32) {
    assert_eq!(a.len(), b.len(), "pose lengths differ");
    let (ta, tb) = (to_transforms(a, joints), to_transforms(b, joints));
    for (j, (x, y)) in ta.iter().zip(&tb).enumerate() {
        assert!(transform_close(x, y, tol), "joint {j}:\n  {x:?}\n  {y:?}");
    }
}

/// Rotation angle of a unit quaternion about `axis` in radians (signed, in (-π, π]),
/// assuming the quaternion is a rotation about that axis.
#[must_use]
pub fn signed_angle_about(q: Quat, axis: Vec3) -> f32 {
    let v = Vec3::new(q.x, q.y, q.z).dot(axis);
    let (v, w) = if q.w < 0.0 { (-v, -q.w) } else { (v, q.w) };
    2.0 * v.atan2(w)
}

// ---------------------------------------------------------------------------
// Pose conversion
// ---------------------------------------------------------------------------

/// Packs scalar transforms into SoA blocks (padding lanes identity).
#[must_use]
pub fn to_soa(transforms: &[Transform]) -> Vec<SoaTransform> {
    let mut out = vec![SoaTransform::IDENTITY; soa_count(transforms.len())];
    pack(transforms, &mut out).expect("pack with matching length");
    out
}

/// The first `joints` transforms of an SoA pose.
#[must_use]
pub fn to_transforms(pose: &[SoaTransform], joints: usize) -> Vec<Transform> {
    let mut out = vec![Transform::IDENTITY; joints];
    unpack(&pose[..soa_count(joints)], &mut out).expect("unpack with matching length");
    out
}

/// Every lane of every block, padding included.
#[must_use]
pub fn all_lanes(pose: &[SoaTransform]) -> Vec<Transform> {
    to_transforms(pose, pose.len() * 4)
}

/// A pose whose every float is `v` (a sentinel to detect writes).
#[must_use]
pub fn sentinel_pose(blocks: usize, v: f32) -> Vec<SoaTransform> {
    let t = Transform::new(Vec3::splat(v), Quat::new(v, v, v, v), Vec3::splat(v));
    let mut b = SoaTransform::IDENTITY;
    for l in 0..4 {
        b.set(l, &t);
    }
    vec![b; blocks]
}

/// A matrix whose every element is `v`.
#[must_use]
pub fn sentinel_mat(v: f32) -> Mat4 {
    Mat4 { cols: [[v; 4]; 4] }
}

// ---------------------------------------------------------------------------
// Shared assets
// ---------------------------------------------------------------------------

/// The procedural humanoid at 30 Hz, built once per test binary.
pub fn humanoid() -> &'static Humanoid {
    static H: OnceLock<Humanoid> = OnceLock::new();
    H.get_or_init(Humanoid::default_rate)
}

// ---------------------------------------------------------------------------
// Strategies
// ---------------------------------------------------------------------------

/// A uniformly distributed unit quaternion, either sign (incl. w < 0).
///
/// Shoemake's method from three uniforms: no rejection, so proptest's
/// filter budget is never touched however many are drawn.
pub fn unit_quat() -> impl Strategy<Value = Quat> {
    (0.0f32..=1.0, 0.0f32..1.0, 0.0f32..1.0).prop_map(|(u1, u2, u3)| {
        let tau = std::f32::consts::TAU;
        let (a, b) = ((1.0 - u1).sqrt(), u1.sqrt());
        let (s2, c2) = (tau * u2).sin_cos();
        let (s3, c3) = (tau * u3).sin_cos();
        Quat::new(a * s2, a * c2, b * s3, b * c3).normalize()
    })
}

/// A uniformly distributed unit axis.
pub fn unit_axis() -> impl Strategy<Value = Vec3> {
    (-1.0f32..=1.0, 0.0f32..1.0).prop_map(|(z, u)| {
        let r = (1.0 - z * z).max(0.0).sqrt();
        let (s, c) = (std::f32::consts::TAU * u).sin_cos();
        Vec3::new(r * c, r * s, z)
    })
}

/// A rotation of at most `max_angle` radians about a random axis.
pub fn small_rotation(max_angle: f32) -> impl Strategy<Value = Quat> {
    (unit_axis(), -max_angle..max_angle).prop_map(|(a, t)| Quat::from_axis_angle(a, t))
}

/// A vector with components in `lo..hi`.
pub fn vec3_in(lo: f32, hi: f32) -> impl Strategy<Value = Vec3> {
    (lo..hi, lo..hi, lo..hi).prop_map(|(x, y, z)| Vec3::new(x, y, z))
}

/// A transform: translation in [-2, 2], any rotation, non-uniform scale in `scale_lo..scale_hi`.
pub fn transform(scale_lo: f32, scale_hi: f32) -> impl Strategy<Value = Transform> {
    (vec3_in(-2.0, 2.0), unit_quat(), vec3_in(scale_lo, scale_hi))
        .prop_map(|(t, q, s)| Transform::new(t, q, s))
}

/// `n` transforms.
pub fn transforms(n: usize, scale_lo: f32, scale_hi: f32) -> impl Strategy<Value = Vec<Transform>> {
    prop::collection::vec(transform(scale_lo, scale_hi), n)
}

/// A weight that is often exactly 0 or 1.
pub fn weight(max: f32) -> impl Strategy<Value = f32> {
    prop_oneof![
        1 => Just(0.0f32),
        1 => Just(1.0f32.min(max)),
        4 => 0.0f32..max,
    ]
}

// ---------------------------------------------------------------------------
// Random skeletons
// ---------------------------------------------------------------------------

/// A random forest as a parent array whose parents may come after their
/// children (a depth-first order is *not* assumed). Always acyclic.
///
/// Built from a canonical tree (parent index below the child's, ~5% extra
/// roots, ~40% chain links so trees get deep) and then shuffled.
pub fn forest(max_joints: usize) -> impl Strategy<Value = Vec<Option<usize>>> {
    (1..=max_joints)
        .prop_flat_map(|n| {
            (
                prop::collection::vec((0u8..100, any::<usize>()), n),
                Just((0..n).collect::<Vec<usize>>()).prop_shuffle(),
            )
        })
        .prop_map(|(links, perm)| {
            let n = links.len();
            // canonical i -> input position perm[i]
            let mut parents = vec![None; n];
            for (i, &(mode, r)) in links.iter().enumerate() {
                let canonical = match (i, mode) {
                    (0, _) => None,
                    (_, 0..=4) => None,
                    (_, 5..=44) => Some(i - 1),
                    _ => Some(r % i),
                };
                parents[perm[i]] = canonical.map(|p| perm[p]);
            }
            parents
        })
}

/// Owned joint definitions (names are owned so `JointDef` can borrow them).
#[derive(Clone, Debug)]
pub struct Joints {
    /// Joint names, `"j{index}"`.
    pub names: Vec<String>,
    /// Parent of each joint in input order.
    pub parents: Vec<Option<usize>>,
    /// Rest transform of each joint.
    pub rest: Vec<Transform>,
}

impl Joints {
    /// The builder's input view.
    #[must_use]
    pub fn defs(&self) -> Vec<JointDef<'_>> {
        self.names
            .iter()
            .zip(&self.parents)
            .zip(&self.rest)
            .map(|((name, &parent), &rest)| JointDef { name, parent, rest })
            .collect()
    }

    /// Number of joints.
    #[must_use]
    pub fn len(&self) -> usize {
        self.parents.len()
    }
}

/// A random forest with random rest transforms (scale per axis in `scale_lo..scale_hi`).
pub fn random_joints(
    max_joints: usize,
    scale_lo: f32,
    scale_hi: f32,
) -> impl Strategy<Value = Joints> {
    forest(max_joints).prop_flat_map(move |parents| {
        let n = parents.len();
        transforms(n, scale_lo, scale_hi).prop_map(move |rest| Joints {
            names: (0..n).map(|j| format!("j{j}")).collect(),
            parents: parents.clone(),
            rest,
        })
    })
}

/// Depth-first pre-order of a forest given as a parent array, written
/// independently of the core: roots in input order, children in input order.
/// Returns `order[new] = old`.
#[must_use]
pub fn preorder(parents: &[Option<usize>]) -> Vec<usize> {
    fn visit(j: usize, parents: &[Option<usize>], out: &mut Vec<usize>) {
        out.push(j);
        for (c, p) in parents.iter().enumerate() {
            if *p == Some(j) {
                visit(c, parents, out);
            }
        }
    }
    let mut out = Vec::with_capacity(parents.len());
    for (r, p) in parents.iter().enumerate() {
        if p.is_none() {
            visit(r, parents, &mut out);
        }
    }
    out
}

/// Ancestors of `j` (parent first, root last), by walking the parent array.
#[must_use]
pub fn ancestors(parents: &[Option<usize>], j: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut k = j;
    while let Some(p) = parents[k] {
        assert!(out.len() <= parents.len(), "cycle in parent array");
        out.push(p);
        k = p;
    }
    out
}

/// Parent array of a built skeleton view.
#[must_use]
pub fn parents_of(skel: &sinew_core::Skeleton<'_>) -> Vec<Option<usize>> {
    (0..skel.joint_count()).map(|j| skel.parent(j)).collect()
}

// ---------------------------------------------------------------------------
// Real data
// ---------------------------------------------------------------------------

/// `../shared/data/<sub>` beside the repository, or `None` after printing
/// that the calling test is skipped because the data is absent.
pub fn shared_data(sub: &str) -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(sub);
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!(
            "skipped: ../shared/data/{sub} not found (expected at {})",
            dir.display()
        );
        None
    }
}

/// Every file below `dir` (recursively) whose extension is one of `exts`, sorted.
pub fn files_with_extension(dir: &Path, exts: &[&str]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
        for e in entries {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| exts.contains(&e))
            {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

// ---------------------------------------------------------------------------
// Compressed twins of the humanoid's clips
// ---------------------------------------------------------------------------

/// The humanoid's clips compressed with the default options (rest-pose
/// stripping on), built once per test binary, and those options.
pub fn humanoid_compressed() -> (
    &'static [sinew_std::compress::OwnedCompressedClip],
    sinew_std::compress::CompressOptions,
) {
    use sinew_std::compress::{compress, CompressOptions, OwnedCompressedClip};
    static C: OnceLock<Vec<OwnedCompressedClip>> = OnceLock::new();
    let opts = CompressOptions::default();
    let h = humanoid();
    let clips = C.get_or_init(|| {
        h.clips
            .iter()
            .map(|c| compress(&h.skeleton.view(), &c.view(), &opts).unwrap().0)
            .collect()
    });
    (clips, opts)
}

/// Asserts that two local poses put every joint of `skel` within `tol` of
/// each other in model space (the compressor's error is bounded there).
pub fn assert_model_close(
    skel: &sinew_core::Skeleton<'_>,
    a: &[SoaTransform],
    b: &[SoaTransform],
    tol: f32,
) {
    use sinew_core::fk::{local_to_model, FkJob};
    let model = |p: &[SoaTransform]| {
        let mut m = vec![Mat4::IDENTITY; skel.joint_count()];
        local_to_model(&FkJob::new(skel, p), &mut m).unwrap();
        m
    };
    for (j, (x, y)) in model(a).iter().zip(&model(b)).enumerate() {
        let d = (x.translation() - y.translation()).length();
        assert!(
            d <= tol,
            "joint {j}: model positions {d} apart (bound {tol})"
        );
    }
}

/// Standard base64 with padding: the payload of a glTF `data:` URI in the
/// glTF files the importer tests write themselves.
#[must_use]
pub fn base64(data: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in data.chunks(3) {
        let b = [c[0], *c.get(1).unwrap_or(&0), *c.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for k in 0..4 {
            if k <= c.len() {
                out.push(T[(n >> (18 - 6 * k)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}
