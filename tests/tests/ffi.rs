//! The exported C functions (through the `sinew` rlib of `sinew-capi`),
//! fuzzed from Rust: random and bit-flipped containers never panic, get a
//! data status, and leave the out-parameter untouched; a loaded handle
//! samples exactly what the Rust API samples.

use proptest::prelude::*;
use sinew::*;
use sinew_core::clip::{RawClip, TimeMode};
use sinew_core::compressed::CompressedClip;
use sinew_core::procedural::{self, Gait};
use sinew_core::{Skeleton, SoaTransform};
use sinew_std::compress::{compress, CompressOptions};

/// A 16-byte aligned byte buffer.
fn aligned(bytes: &[u8]) -> Vec<u128> {
    let mut v = vec![0u128; bytes.len().div_ceil(16)];
    bytemuck::cast_slice_mut::<u128, u8>(&mut v)[..bytes.len()].copy_from_slice(bytes);
    v
}

fn humanoid() -> Vec<u128> {
    let mut v = vec![0u128; procedural::HUMANOID_SKELETON_BYTES / 16];
    procedural::write_humanoid_skeleton(bytemuck::cast_slice_mut(&mut v)).unwrap();
    v
}

fn walk_clip(skel: &Skeleton<'_>) -> Vec<u128> {
    let frames = procedural::gait_frame_count(Gait::Walk, 30.0);
    let mut keys = vec![SoaTransform::default(); frames * skel.soa_count()];
    let clip = procedural::write_gait_clip(Gait::Walk, skel, 30.0, &mut keys).unwrap();
    let size = sinew_core::clip::clip_container_size(skel.soa_count(), frames, clip.name().len());
    let mut v = vec![0u128; size / 16];
    clip.write(bytemuck::cast_slice_mut(&mut v)).unwrap();
    v
}

/// The walk compressed with the default options (rest-pose stripping),
/// compressed once per test binary (the proptests ask for it every case).
fn compressed_walk(skel: &Skeleton<'_>) -> Vec<u128> {
    static BYTES: std::sync::OnceLock<Vec<u128>> = std::sync::OnceLock::new();
    BYTES
        .get_or_init(|| {
            let raw = walk_clip(skel);
            let clip = RawClip::from_bytes(bytemuck::cast_slice(&raw)).unwrap();
            let (c, _) = compress(skel, &clip, &CompressOptions::default()).unwrap();
            aligned(c.bytes())
        })
        .clone()
}

const SENTINEL: u32 = 0xDEAD;

fn load_compressed(bytes: &[u8]) -> (sinew_status, sinew_compressed_clip) {
    let mut out = sinew_compressed_clip {
        data: std::ptr::null(),
        size: 0,
        joint_count: 0,
        soa_count: 0,
        frame_count: SENTINEL,
        needs_rest_pose: 0,
        sample_rate: 0.0,
        duration: 0.0,
        check: 0,
    };
    // Safety: a valid buffer and out-parameter.
    let s = unsafe { sinew_compressed_clip_load(bytes.as_ptr(), bytes.len(), &mut out) };
    (s, out)
}

/// Samples a loaded compressed clip handle with the humanoid's rest pose.
fn sample_compressed(
    h: &sinew_compressed_clip,
    skel: &Skeleton<'_>,
    t: f32,
) -> (sinew_status, Vec<SoaTransform>) {
    let rest = skel.rest_pose();
    let mut got = vec![SoaTransform::default(); skel.soa_count()];
    // Safety: a loaded handle, the rest pose and a buffer of soa_count blocks.
    let s = unsafe {
        sinew_compressed_clip_sample(
            h,
            t,
            0,
            rest.as_ptr().cast(),
            rest.len(),
            got.as_mut_ptr().cast(),
            got.len(),
        )
    };
    (s, got)
}

fn load_skeleton(bytes: &[u8]) -> (sinew_status, sinew_skeleton) {
    let mut out = sinew_skeleton {
        data: std::ptr::null(),
        size: 0,
        joint_count: SENTINEL,
        soa_count: 0,
        parents: std::ptr::null(),
        rest_pose: std::ptr::null(),
        inverse_bind: std::ptr::null(),
        check: 0,
    };
    // Safety: a valid buffer and out-parameter.
    let s = unsafe { sinew_skeleton_load(bytes.as_ptr(), bytes.len(), &mut out) };
    (s, out)
}

fn load_clip(bytes: &[u8]) -> (sinew_status, sinew_clip) {
    let mut out = sinew_clip {
        data: std::ptr::null(),
        size: 0,
        soa_count: 0,
        frame_count: SENTINEL,
        sample_rate: 0.0,
        duration: 0.0,
        check: 0,
    };
    // Safety: a valid buffer and out-parameter.
    let s = unsafe { sinew_clip_load(bytes.as_ptr(), bytes.len(), &mut out) };
    (s, out)
}

const DATA_ERRORS: [sinew_status; 3] = [
    sinew_status::InvalidData,
    sinew_status::UnsupportedVersion,
    sinew_status::Misaligned,
];

#[test]
fn version_number_matches_the_version_string_and_the_header() {
    // Safety: a static NUL-terminated string.
    let text = unsafe { std::ffi::CStr::from_ptr(sinew_version()) };
    let n = sinew_version_number();
    assert_eq!(
        format!("{}.{}.{}", n >> 16, (n >> 8) & 0xff, n & 0xff),
        text.to_str().unwrap()
    );
    assert_eq!(n, SINEW_VERSION_NUMBER);
    assert_eq!(
        (
            SINEW_VERSION_MAJOR,
            SINEW_VERSION_MINOR,
            SINEW_VERSION_PATCH
        ),
        (n >> 16, (n >> 8) & 0xff, n & 0xff)
    );
}

#[test]
fn a_loaded_clip_samples_what_the_rust_api_samples() {
    let skel_bytes = humanoid();
    let skel = Skeleton::from_bytes(bytemuck::cast_slice(&skel_bytes)).unwrap();
    let clip_bytes = walk_clip(&skel);
    let (s, handle) = load_clip(bytemuck::cast_slice(&clip_bytes));
    assert_eq!(s, sinew_status::Ok);
    let clip = RawClip::from_bytes(bytemuck::cast_slice(&clip_bytes)).unwrap();
    assert_eq!(handle.frame_count as usize, clip.frame_count());
    for t in [0.0f32, 0.21, 0.5, 1.09, 3.7, -2.0] {
        let mut want = vec![SoaTransform::default(); skel.soa_count()];
        clip.sample(t, TimeMode::Loop, &mut want).unwrap();
        let mut got = vec![SoaTransform::default(); skel.soa_count()];
        // Safety: a loaded handle and a buffer of soa_count blocks.
        let s = unsafe { sinew_clip_sample(&handle, t, 0, got.as_mut_ptr().cast(), got.len()) };
        assert_eq!(s, sinew_status::Ok);
        assert_eq!(got, want, "t = {t}");
    }
}

#[test]
fn a_loaded_compressed_clip_samples_what_the_rust_api_samples() {
    let skel_bytes = humanoid();
    let skel = Skeleton::from_bytes(bytemuck::cast_slice(&skel_bytes)).unwrap();
    let bytes = compressed_walk(&skel);
    let view: &[u8] = bytemuck::cast_slice(&bytes);
    let (s, handle) = load_compressed(view);
    assert_eq!(s, sinew_status::Ok);
    let clip = CompressedClip::from_bytes(view).unwrap();
    assert_eq!(handle.frame_count as usize, clip.frame_count());
    assert_eq!(handle.needs_rest_pose, 1);
    for t in [0.0f32, 0.21, 0.5, 1.09, 3.7, -2.0] {
        let mut want = vec![SoaTransform::default(); skel.soa_count()];
        clip.sample_with_rest(t, TimeMode::Loop, skel.rest_pose(), &mut want)
            .unwrap();
        let (s, got) = sample_compressed(&handle, &skel, t);
        assert_eq!(s, sinew_status::Ok);
        assert_eq!(got, want, "t = {t}");
    }
}

/// A flip in the compressed header's joint count (byte 12, 70 -> 78 joints)
/// leaves a container that still validates, for another skeleton size:
/// sampling it into buffers sized for the humanoid is `BadLength`, not a
/// panic and not a read past the buffers (found by the proptest below).
#[test]
fn a_joint_count_flip_that_still_loads_samples_as_bad_length() {
    let skel_bytes = humanoid();
    let skel = Skeleton::from_bytes(bytemuck::cast_slice(&skel_bytes)).unwrap();
    let mut buf = compressed_walk(&skel);
    let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut buf);
    assert_eq!(bytes[12], 70);
    bytes[12] ^= 1 << 3;
    let (s, h) = load_compressed(bytes);
    assert_eq!(s, sinew_status::Ok);
    assert_eq!((h.joint_count, h.soa_count), (78, 20));
    let (s, _) = sample_compressed(&h, &skel, 0.4);
    assert_eq!(s, sinew_status::BadLength);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_bytes_never_load_or_panic(bytes in proptest::collection::vec(any::<u8>(), 0..4096)) {
        let buf = aligned(&bytes);
        let view = &bytemuck::cast_slice::<u128, u8>(&buf)[..bytes.len()];
        let (s, out) = load_skeleton(view);
        prop_assert!(s == sinew_status::NullParameter || DATA_ERRORS.contains(&s), "{s:?}");
        prop_assert_eq!(out.joint_count, SENTINEL);
        let (s, out) = load_clip(view);
        prop_assert!(s == sinew_status::NullParameter || DATA_ERRORS.contains(&s), "{s:?}");
        prop_assert_eq!(out.frame_count, SENTINEL);
        let (s, out) = load_compressed(view);
        prop_assert!(s == sinew_status::NullParameter || DATA_ERRORS.contains(&s), "{s:?}");
        prop_assert_eq!(out.frame_count, SENTINEL);
    }

    #[test]
    fn flipped_bits_and_truncation_give_a_status_never_a_panic(
        flips in proptest::collection::vec((any::<prop::sample::Index>(), 0u8..8), 1..4),
        cut in any::<prop::sample::Index>(),
    ) {
        let skel_bytes = humanoid();
        let skel = Skeleton::from_bytes(bytemuck::cast_slice(&skel_bytes)).unwrap();
        let clip_bytes = walk_clip(&skel);
        let compressed_bytes = compressed_walk(&skel);
        for original in [skel_bytes.clone(), clip_bytes, compressed_bytes] {
            let mut buf = original.clone();
            let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut buf);
            for (at, bit) in &flips {
                let i = at.index(bytes.len());
                bytes[i] ^= 1 << bit;
            }
            let len = if cut.index(4) == 0 { cut.index(bytes.len()) } else { bytes.len() };
            let view = &bytes[..len];
            for s in [load_skeleton(view).0, load_clip(view).0] {
                prop_assert!(s != sinew_status::Panic);
            }
            // A compressed clip that still loads (a flip inside its bit
            // stream) samples without panicking. A flip in the header's
            // joint count can leave a consistent container for another
            // skeleton size: buffers sized for the humanoid are then the
            // wrong length, which is `BadLength`, exactly then.
            let (s, h) = load_compressed(view);
            prop_assert!(s != sinew_status::Panic);
            if s == sinew_status::Ok {
                let (s, pose) = sample_compressed(&h, &skel, 0.4);
                if h.soa_count as usize == skel.soa_count() {
                    prop_assert_eq!(s, sinew_status::Ok);
                } else {
                    prop_assert_eq!(s, sinew_status::BadLength);
                }
                prop_assert_eq!(pose.len(), skel.soa_count());
            }
        }
    }
}

/// Positions, then joints and weights of slots 0-3 and of slots 4-7.
type EightMesh = (Vec<[f32; 3]>, [Vec<[u16; 4]>; 2], [Vec<[f32; 4]>; 2]);

/// A 12-vertex mesh on 5 joints: slots 0-3 and 4-7, every vertex using
/// 5-8 of them.
fn eight_influence_mesh() -> EightMesh {
    let mut p = Vec::new();
    let (mut j0, mut j1, mut w0, mut w1) = (vec![], vec![], vec![], vec![]);
    for v in 0..12usize {
        let f = v as f32;
        p.push([0.1 * f - 0.5, 0.2 + 0.05 * f, -0.03 * f]);
        let used = 5 + v % 4;
        let w: Vec<f32> = (0..8)
            .map(|k| if k < used { (8 - k) as f32 } else { 0.0 })
            .collect();
        let s: f32 = w.iter().sum();
        let j = |k: usize| ((v + k) % 5) as u16;
        j0.push([j(0), j(1), j(2), j(3)]);
        j1.push([j(4), j(5), j(6), j(7)]);
        w0.push([w[0] / s, w[1] / s, w[2] / s, w[3] / s]);
        w1.push([w[4] / s, w[5] / s, w[6] / s, w[7] / s]);
    }
    (p, [j0, j1], [w0, w1])
}

#[test]
fn eight_influences_through_the_c_abi() {
    use sinew_core::skin::{
        self, CheckedInfluences, DualQuat, Mat3x4, SkinAttributes, SkinJob, SkinMethod, SkinOutput,
        SkinVertices,
    };
    use sinew_core::{Mat4, Quat, Vec3};
    let (p, [j0, j1], [w0, w1]) = eight_influence_mesh();
    let n = p.len();
    let models: Vec<Mat4> = (0..5)
        .map(|k| {
            let q = Quat::from_axis_angle(Vec3::new(0.0, 0.6, 0.8), 0.3 * k as f32);
            Mat4::from_trs(Vec3::new(0.1 * k as f32, 0.0, 0.2), q, Vec3::ONE)
        })
        .collect();
    let ibm = vec![Mat4::IDENTITY; 5];
    let mut lbs = vec![Mat3x4::IDENTITY; 5];
    let mut dqs = vec![DualQuat::IDENTITY; 5];
    skin::lbs_palette(&models, &ibm, &mut lbs).unwrap();
    skin::dqs_palette(&models, &ibm, &mut dqs).unwrap();
    let infl = CheckedInfluences::new8(&j0, &w0, &j1, &w1, 5).unwrap();
    let verts = SkinVertices {
        positions: &p,
        normals: None,
        tangents: None,
    };
    let mut expected = [vec![[0.0f32; 3]; n], vec![[0.0f32; 3]; n]];
    for (k, e) in expected.iter_mut().enumerate() {
        let output = SkinOutput {
            positions: e,
            normals: None,
            tangents: None,
        };
        let method = match k {
            0 => SkinMethod::Lbs { palette: &lbs },
            _ => SkinMethod::Dqs { palette: &dqs },
        };
        SkinJob {
            method,
            influences: &infl,
            attributes: SkinAttributes::Arrays {
                input: verts,
                output,
            },
        }
        .run()
        .unwrap();
    }
    let mesh = |j1: &[[u16; 4]], w1: &[[f32; 4]]| sinew_skin_mesh {
        vertex_count: n,
        positions: p.as_ptr().cast(),
        normals: std::ptr::null(),
        tangents: std::ptr::null(),
        joints: j0.as_ptr().cast(),
        weights: w0.as_ptr().cast(),
        joints1: if j1.is_empty() {
            std::ptr::null()
        } else {
            j1.as_ptr().cast()
        },
        weights1: if w1.is_empty() {
            std::ptr::null()
        } else {
            w1.as_ptr().cast()
        },
    };
    let run = |m: &sinew_skin_mesh, k: usize, out: &mut Vec<[f32; 3]>| {
        let target = sinew_skin_target {
            positions: out.as_mut_ptr().cast(),
            normals: std::ptr::null_mut(),
            tangents: std::ptr::null_mut(),
        };
        let mix = vec![1.0f32; n];
        let method = [SINEW_SKIN_LBS, SINEW_SKIN_DQS, SINEW_SKIN_MIXED][k];
        let palette = skin_palette(method, &lbs, &dqs, &mix);
        // SAFETY: every array has `n` entries and the palettes 5.
        unsafe { sinew_skin(&palette, m, &target) }
    };
    let m = mesh(&j1, &w1);
    for k in 0..3 {
        let mut out = vec![[9.0f32; 3]; n];
        assert_eq!(run(&m, k, &mut out), sinew_status::Ok, "kernel {k}");
        // The mix of weight 1 is DQS.
        assert_eq!(out, expected[k.min(1)], "kernel {k}");
    }
    // One of the pair without the other, a bad slot-4 index, and slots 0-3
    // alone (which do not sum to 1): precise statuses, target untouched.
    let mut bad_j = j1.clone();
    bad_j[7][0] = 5;
    for (m, status) in [
        (mesh(&j1, &[]), sinew_status::NullParameter),
        (mesh(&[], &w1), sinew_status::NullParameter),
        (mesh(&bad_j, &w1), sinew_status::InvalidInfluence),
        (mesh(&[], &[]), sinew_status::InvalidInfluence),
    ] {
        for k in 0..3 {
            let mut out = vec![[9.0f32; 3]; n];
            assert_eq!(run(&m, k, &mut out), status, "kernel {k}");
            assert_eq!(out, vec![[9.0f32; 3]; n]);
        }
    }
    // Skinning into the second set's arrays is an overlap.
    let mut w1_out = w1.clone();
    let m = mesh(&j1, &w1_out);
    let target = sinew_skin_target {
        positions: w1_out.as_mut_ptr().cast(),
        normals: std::ptr::null_mut(),
        tangents: std::ptr::null_mut(),
    };
    let palette = skin_palette(SINEW_SKIN_LBS, &lbs, &dqs, &[]);
    // SAFETY: `w1_out` holds 12 x 4 floats, more than 12 positions.
    let s = unsafe { sinew_skin(&palette, &m, &target) };
    assert_eq!(s, sinew_status::OverlappingBuffers);
}

/// A `sinew_skin_palette` of `method` over the two palettes (one entry per
/// palette element) and the per-vertex mix.
fn skin_palette<L, D>(method: u32, lbs: &[L], dqs: &[D], mix: &[f32]) -> sinew_skin_palette {
    assert_eq!(lbs.len(), dqs.len());
    sinew_skin_palette {
        method,
        len: lbs.len(),
        lbs: lbs.as_ptr().cast(),
        dqs: dqs.as_ptr().cast(),
        mix: mix.as_ptr(),
        mix_len: mix.len(),
    }
}
