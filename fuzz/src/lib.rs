//! What the fuzz targets share: reading fields off the front of an input,
//! 16-byte aligned copies of container bytes, and the checks made on every
//! pose, clip and asset that a loader accepted.
//!
//! A failed check panics, which libFuzzer reports as a crash and saves the
//! input under `fuzz/artifacts/<target>/`.

use sinew_core::clip::{RawClip, TimeMode};
use sinew_core::{Skeleton, SoaTransform};
use sinew_std::import::Asset;
use sinew_std::AlignedBytes;

/// Reads little-endian fields off the front of a fuzz input; a field past
/// the end reads as zeros, so every input is a valid one.
pub struct Input<'a> {
    rest: &'a [u8],
}

impl<'a> Input<'a> {
    /// A reader at the start of `data`.
    #[must_use]
    pub fn new(data: &'a [u8]) -> Self {
        Input { rest: data }
    }

    /// The next `n` bytes (fewer at the end of the input).
    pub fn take(&mut self, n: usize) -> &'a [u8] {
        let (head, tail) = self.rest.split_at(n.min(self.rest.len()));
        self.rest = tail;
        head
    }

    /// Everything not read yet.
    pub fn rest(&mut self) -> &'a [u8] {
        self.take(self.rest.len())
    }

    fn array<const N: usize>(&mut self) -> [u8; N] {
        let mut a = [0; N];
        let head = self.take(N);
        a[..head.len()].copy_from_slice(head);
        a
    }

    /// The next byte.
    pub fn u8(&mut self) -> u8 {
        self.array::<1>()[0]
    }

    /// The next little-endian `u32`.
    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.array())
    }

    /// The next little-endian `f32` (any bits: NaN, infinities, subnormals).
    pub fn f32(&mut self) -> f32 {
        f32::from_le_bytes(self.array())
    }
}

/// The four sample times at the front of a clip target's input, then the
/// container bytes (the layout the corpus script writes).
#[must_use]
pub fn times_then_rest(data: &[u8]) -> ([f32; 4], &[u8]) {
    let mut input = Input::new(data);
    let times = [input.f32(), input.f32(), input.f32(), input.f32()];
    (times, input.rest())
}

/// A 16-byte aligned copy: the fuzzer's buffer has no particular alignment
/// and the container views require 16.
#[must_use]
pub fn aligned(bytes: &[u8]) -> AlignedBytes {
    AlignedBytes::copy_from(bytes)
}

/// Both time modes.
pub const MODES: [TimeMode; 2] = [TimeMode::Loop, TimeMode::Clamp];

/// The 40 floats of a block: translation x, y, z lanes (0..12), rotation
/// x, y, z, w lanes (12..28), scale x, y, z lanes (28..40).
#[must_use]
pub fn floats(pose: &[SoaTransform]) -> &[f32] {
    bytemuck::cast_slice(pose)
}

/// Largest absolute value in a pose (NaN counts as infinite).
#[must_use]
pub fn max_abs(pose: &[SoaTransform]) -> f32 {
    floats(pose).iter().fold(0.0f32, |m, &x| {
        if x.is_nan() {
            f32::INFINITY
        } else {
            m.max(x.abs())
        }
    })
}

/// The squared length of each rotation lane of a block.
#[must_use]
pub fn rotation_norms2(block: &SoaTransform) -> [f32; 4] {
    let f = floats(core::slice::from_ref(block));
    core::array::from_fn(|l| {
        let q = [f[12 + l], f[16 + l], f[20 + l], f[24 + l]];
        q.iter().map(|c| c * c).sum()
    })
}

/// Panics naming `what` when any float of `pose` is NaN or infinite.
pub fn assert_finite(pose: &[SoaTransform], what: &str) {
    if let Some(i) = floats(pose).iter().position(|x| !x.is_finite()) {
        panic!("{what}: float {i} of the pose is {}", floats(pose)[i]);
    }
}

/// Panics naming `what` when any float of `pose` is NaN.
pub fn assert_no_nan(pose: &[SoaTransform], what: &str) {
    if let Some(i) = floats(pose).iter().position(|x| x.is_nan()) {
        panic!("{what}: float {i} of the pose is NaN");
    }
}

/// Panics unless lanes `joints..` of `pose` (the padding of the last
/// block) are identity transforms.
pub fn assert_padding_identity(pose: &[SoaTransform], joints: usize, what: &str) {
    for j in joints..pose.len() * 4 {
        let t = pose[j / 4].get(j % 4);
        let identity = sinew_core::Transform::IDENTITY;
        assert!(
            t == identity,
            "{what}: padding lane {j} is {t:?}, not identity"
        );
    }
}

/// Panics unless the bracket of `t` lies inside the clip: frames ordered
/// and in range, the factor in `[0, 1)`.
pub fn assert_bracket(b: &sinew_core::clip::Bracket, frame_count: usize, t: f32) {
    assert!(
        b.before <= b.after && b.after < frame_count,
        "time {t}: bracket {b:?} outside {frame_count} frames"
    );
    assert!(
        (0.0..1.0).contains(&b.alpha),
        "time {t}: interpolation factor {} outside [0, 1)",
        b.alpha
    );
}

/// Rotations of an imported key or rest pose must be unit length within
/// this (the importers normalise them).
const UNIT_TOLERANCE: f32 = 1e-3;

/// Keys of at most this size lerp without overflow, so an imported
/// clip's samples must then be finite.
const BOUNDED: f32 = 1e30;

/// What must hold for every clip an importer returns for `skeleton`: the
/// pose length, finite keys with unit rotations, and finite samples at the
/// start, middle, end and outside in both time modes.
pub fn check_imported_clip(skeleton: &Skeleton<'_>, clip: &RawClip<'_>, what: &str) {
    assert_eq!(
        clip.soa_count(),
        skeleton.soa_count(),
        "{what}: clip blocks differ from the skeleton's"
    );
    assert!(clip.frame_count() >= 1, "{what}: no frames");
    let joints = skeleton.joint_count();
    for f in 0..clip.frame_count() {
        let frame = clip.frame(f).expect("frame in range");
        assert_finite(frame, what);
        for (b, block) in frame.iter().enumerate() {
            for (l, n2) in rotation_norms2(block).into_iter().enumerate() {
                let j = b * 4 + l;
                assert!(
                    j >= joints || (n2 - 1.0).abs() <= UNIT_TOLERANCE,
                    "{what}: frame {f} joint {j} rotation has squared length {n2}"
                );
            }
        }
    }
    let bounded =
        (0..clip.frame_count()).all(|f| clip.frame(f).is_some_and(|k| max_abs(k) <= BOUNDED));
    let d = clip.duration();
    let mut out = vec![SoaTransform::IDENTITY; clip.soa_count()];
    for t in [0.0, 0.5 * d, d, -0.25 * d - 1.0, 1.5 * d + 1.0] {
        for mode in MODES {
            clip.sample(t, mode, &mut out)
                .unwrap_or_else(|e| panic!("{what}: sampling at {t} failed: {e}"));
            if bounded {
                assert_finite(&out, what);
            }
        }
    }
}

/// What must hold for every asset an importer returns: a skeleton that
/// validates again, a joint map into it, clips as in
/// [`check_imported_clip`], and meshes whose arrays agree and that make
/// valid mesh containers.
pub fn check_asset(asset: &Asset) {
    let bytes = asset.skeleton.bytes();
    let skeleton = Skeleton::from_bytes(bytes)
        .unwrap_or_else(|e| panic!("imported skeleton does not validate again: {e}"));
    let joints = skeleton.joint_count();
    assert_eq!(joints, asset.skeleton.joint_count());
    for (i, &j) in asset.joint_map.iter().enumerate() {
        assert!(
            usize::from(j) < joints,
            "joint map entry {i} is {j}, past {joints} joints"
        );
    }
    for clip in &asset.clips {
        check_imported_clip(&skeleton, &clip.view(), &format!("clip {:?}", clip.name));
    }
    for mesh in &asset.meshes {
        let what = format!("mesh {:?}", mesh.name);
        let v = mesh.positions.len();
        assert_eq!(mesh.joints.len(), v, "{what}: joints");
        assert_eq!(mesh.weights.len(), v, "{what}: weights");
        for (name, len) in [
            ("normals", mesh.normals.len()),
            ("tangents", mesh.tangents.len()),
            ("joints1", mesh.joints1.len()),
            ("weights1", mesh.weights1.len()),
        ] {
            assert!(
                len == 0 || len == v,
                "{what}: {len} {name} for {v} vertices"
            );
        }
        assert_eq!(mesh.inverse_bind.len(), joints, "{what}: inverse binds");
        assert!(mesh.indices.len() % 3 == 0, "{what}: not triangles");
        assert!(
            mesh.indices.iter().all(|&i| (i as usize) < v),
            "{what}: an index past the vertices"
        );
        mesh.influences(joints)
            .unwrap_or_else(|e| panic!("{what}: influences do not check: {e}"));
        let container = mesh
            .to_container()
            .unwrap_or_else(|e| panic!("{what}: no mesh container: {e}"));
        sinew_core::mesh::SkinnedMesh::from_bytes(container.as_slice())
            .unwrap_or_else(|e| panic!("{what}: its container does not load: {e}"));
    }
}
