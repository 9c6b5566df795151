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
        cache_blocks: 0,
        min_cache_blocks: 0,
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

/// `sinew_compressed_clip_sample_cached` from a zeroed cache: the bits of
/// the uncached C sampler at every 60 Hz tick of the 30 Hz walk, each key
/// frame decoded once (the cache's words count them); bad input is a
/// status that leaves the output and the cache as they were.
#[test]
fn the_c_playback_cache_samples_what_the_uncached_sampler_samples() {
    let skel_bytes = humanoid();
    let skel = Skeleton::from_bytes(bytemuck::cast_slice(&skel_bytes)).unwrap();
    let bytes = compressed_walk(&skel);
    let (s, h) = load_compressed(bytemuck::cast_slice(&bytes));
    assert_eq!(s, sinew_status::Ok);
    let n = skel.soa_count();
    let rest = skel.rest_pose();
    let mut cache = sinew_playback_cache::default();
    // The handle gives the cache sizes: a cache holds the walk's animated
    // tracks only, less than poses.
    let (least, three) = (h.min_cache_blocks as usize, h.cache_blocks as usize);
    assert!(
        least > 0 && least < 2 * n && three < 3 * n,
        "{least}, {three}"
    );
    let mut blocks = vec![SoaTransform::default(); least];
    let mut got = vec![SoaTransform::default(); n];
    // One call with raw pointers, so NULL and overlapping buffers can be
    // passed too; an empty `rest` is NULL.
    let sample_raw = |cache: *mut sinew_playback_cache,
                      blocks: (*mut SoaTransform, usize),
                      got: *mut SoaTransform,
                      t: f32,
                      rest: &[SoaTransform]| {
        // Safety: a loaded handle; every non-NULL pointer is valid for its
        // length (overlaps are refused before any access).
        unsafe {
            sinew_compressed_clip_sample_cached(
                &h,
                t,
                SINEW_TIME_LOOP,
                if rest.is_empty() {
                    std::ptr::null()
                } else {
                    rest.as_ptr().cast()
                },
                rest.len(),
                cache,
                blocks.0.cast(),
                blocks.1,
                got.cast(),
                n,
            )
        }
    };
    let sample = |cache: &mut sinew_playback_cache,
                  blocks: &mut [SoaTransform],
                  got: &mut [SoaTransform],
                  t: f32,
                  rest: &[SoaTransform]| {
        assert_eq!(got.len(), n);
        sample_raw(
            cache,
            (blocks.as_mut_ptr(), blocks.len()),
            got.as_mut_ptr(),
            t,
            rest,
        )
    };
    let frames = h.frame_count as usize;
    // The least memory (two frames) and three frames (decoding ahead).
    let mut ahead = vec![SoaTransform::default(); three];
    let mut ahead_cache = sinew_playback_cache::default();
    for (cache, blocks) in [(&mut cache, &mut blocks), (&mut ahead_cache, &mut ahead)] {
        // Ticks before the loop point (which wraps to frames 0 and 1 again).
        for i in 0..2 * frames - 2 {
            let t = i as f32 / 60.0;
            let s = sample(cache, blocks, &mut got, t, rest);
            assert_eq!(s, sinew_status::Ok);
            let (s, want) = sample_compressed(&h, &skel, t);
            assert_eq!(s, sinew_status::Ok);
            assert_eq!(got, want, "t = {t}, {} blocks", blocks.len());
        }
        // The last word counts the key frames decoded.
        assert_eq!(cache.words[7], frames as u64);
    }

    let before = (cache, got.clone());
    let short = &mut vec![SoaTransform::default(); least - 1];
    let s = sample(&mut cache, short, &mut got, 0.5, rest);
    assert_eq!(s, sinew_status::BadLength);
    let s = sample(&mut cache, &mut blocks, &mut got, 0.5, &[]);
    assert_eq!(
        s,
        sinew_status::NullParameter,
        "the walk needs the rest pose"
    );
    let s = sample(&mut cache, &mut blocks, &mut got, f32::NAN, rest);
    assert_eq!(s, sinew_status::InvalidArgument);
    // The cache's blocks at the start of memory that an output fits in.
    let mut memory = vec![SoaTransform::default(); least + n];
    let whole = (memory.as_mut_ptr(), least);
    let nulls = [
        sample_raw(std::ptr::null_mut(), whole, got.as_mut_ptr(), 0.5, rest),
        sample_raw(
            &mut cache,
            (std::ptr::null_mut(), least),
            got.as_mut_ptr(),
            0.5,
            rest,
        ),
    ];
    assert_eq!(nulls, [sinew_status::NullParameter; 2]);
    // The output starting inside the cache's blocks.
    // Safety: `memory` has `least + n` blocks, so an output of `n` blocks
    // from `+ least - 1` stays inside it.
    let inside = unsafe { whole.0.add(least - 1) };
    let s = sample_raw(&mut cache, whole, inside, 0.5, rest);
    assert_eq!(s, sinew_status::OverlappingBuffers);
    assert_eq!((cache, got), before, "no change on error");
}

/// A flip in the compressed header's joint count (byte 12) either moves
/// the container's layout, and loading refuses it, or leaves a container
/// that still validates for another joint count: sampling that into
/// buffers sized for the humanoid is `BadLength` when its block count
/// differs, never a panic or a read past the buffers (found by the
/// proptest below).
#[test]
fn a_joint_count_flip_is_refused_or_samples_as_bad_length() {
    let skel_bytes = humanoid();
    let skel = Skeleton::from_bytes(bytemuck::cast_slice(&skel_bytes)).unwrap();
    let buf = compressed_walk(&skel);
    let mut loaded = 0;
    for bit in 0..8 {
        let mut copy = buf.clone();
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut copy);
        assert_eq!(bytes[12], 70);
        bytes[12] ^= 1 << bit;
        let (s, h) = load_compressed(bytes);
        if s != sinew_status::Ok {
            assert_eq!(s, sinew_status::InvalidData, "bit {bit}");
            continue;
        }
        // A count that keeps the container's layout loads; sampled for
        // the real skeleton, its other block count is a bad length.
        loaded += 1;
        let (s, _) = sample_compressed(&h, &skel, 0.4);
        let expect = if h.soa_count as usize == skel.soa_count() {
            sinew_status::Ok
        } else {
            sinew_status::BadLength
        };
        assert_eq!(s, expect, "bit {bit}");
    }
    assert!(loaded > 0);
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
fn the_c_joint_grouping_is_the_rust_one() {
    let (_, [j0, j1], [w0, w1]) = eight_influence_mesh();
    let n = w0.len();
    for eight in [false, true] {
        let (w1s, j1s) = if eight {
            (&w1[..], &j1[..])
        } else {
            (&[][..], &[][..])
        };
        let mut expected = vec![0u32; n];
        let parts = sinew_core::skin::influence_order(&w0, w1s, &mut expected).unwrap();
        let mut order = expected.clone();
        sinew_core::skin::group_by_joints(&j0, j1s, &mut expected, &parts).unwrap();
        let j1_ptr = if eight {
            j1.as_ptr().cast::<u16>()
        } else {
            std::ptr::null()
        };
        let group = |order: &mut [u32], counts: &[u32; 9]| {
            // SAFETY: each array holds `n` vertices' entries; `counts` has 9.
            unsafe {
                sinew_skin_group_by_joints(
                    j0.as_ptr().cast(),
                    j1_ptr,
                    n,
                    order.as_mut_ptr(),
                    n,
                    counts.as_ptr(),
                )
            }
        };
        assert_eq!(group(&mut order, &parts), sinew_status::Ok);
        assert_eq!(order, expected);
        // Counts that do not add up are an error that reorders nothing.
        let mut bad = parts;
        bad[0] += 1;
        assert_eq!(group(&mut order, &bad), sinew_status::BadLength);
        assert_eq!(order, expected);
    }
}

#[test]
fn the_c_influence_order_is_the_rust_one() {
    let (_, _, [w0, w1]) = eight_influence_mesh();
    let n = w0.len();
    for second in [None, Some(&w1)] {
        let mut expected = vec![0u32; n];
        let parts = sinew_core::skin::influence_order(
            &w0,
            second.map_or(&[][..], |w| w.as_slice()),
            &mut expected,
        )
        .unwrap();
        let mut order = vec![u32::MAX; n];
        let mut counts = [0u32; 9];
        let w1_ptr = second.map_or(std::ptr::null(), |w| w.as_ptr().cast::<f32>());
        // SAFETY: each array holds `n` vertices' entries; `counts` has 9.
        let s = unsafe {
            sinew_skin_influence_order(
                w0.as_ptr().cast(),
                w1_ptr,
                n,
                order.as_mut_ptr(),
                n,
                counts.as_mut_ptr(),
            )
        };
        assert_eq!(s, sinew_status::Ok);
        assert_eq!(order, expected);
        assert_eq!(counts, parts);
        // A short order buffer and overlapping output are errors that write nothing.
        let mut short = vec![u32::MAX; n - 1];
        // SAFETY: as above, with `short`'s own length.
        let s = unsafe {
            sinew_skin_influence_order(
                w0.as_ptr().cast(),
                w1_ptr,
                n,
                short.as_mut_ptr(),
                n - 1,
                std::ptr::null_mut(),
            )
        };
        assert_eq!(s, sinew_status::BadLength);
        assert!(short.iter().all(|&v| v == u32::MAX));
        let mut weights = w0.clone();
        // SAFETY: `weights` holds `4 n` floats, enough for `n` u32 outputs;
        // the overlap is the error under test.
        let s = unsafe {
            sinew_skin_influence_order(
                weights.as_ptr().cast(),
                w1_ptr,
                n,
                weights.as_mut_ptr().cast(),
                n,
                std::ptr::null_mut(),
            )
        };
        assert_eq!(s, sinew_status::OverlappingBuffers);
        assert_eq!(weights, w0);
    }
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

/// Prepared blocks through the C ABI: the Rust API's numbers, and bad
/// blocks, counts and overlaps as statuses that leave the target alone.
#[test]
fn prepared_blocks_through_the_c_abi() {
    let (p, [j0, _], [w0, _]) = eight_influence_mesh();
    // Slots 0-3 renormalised: a four-influence mesh of 12 vertices.
    let w0: Vec<[f32; 4]> = w0
        .iter()
        .map(|w| {
            let s: f32 = w.iter().sum();
            w.map(|x| x / s)
        })
        .collect();
    let n = p.len() - 1; // 11: a tail block of three
    let (p, j0, w0) = (&p[..n], &j0[..n], &w0[..n]);
    let mut lbs = vec![sinew_core::skin::Mat3x4::IDENTITY; 5];
    for (k, m) in lbs.iter_mut().enumerate() {
        m.rows[0][3] = k as f32;
        m.rows[1][1] = 1.0 + 0.1 * k as f32;
    }
    let infl = sinew_core::skin::CheckedInfluences::new(j0, w0, 5).unwrap();
    let mut rust_blocks = vec![sinew_core::skin::VertexBlock::default(); 3];
    let mesh = sinew_core::skin::SkinBlocks::new(
        &infl,
        sinew_core::skin::SkinVertices::positions(p),
        &mut rust_blocks,
    )
    .unwrap();
    let mut want = vec![[0.0f32; 3]; n];
    mesh.lbs(&lbs, sinew_core::skin::SkinOutput::positions(&mut want))
        .unwrap();

    let c_mesh = sinew_skin_mesh {
        vertex_count: n,
        positions: p.as_ptr().cast(),
        normals: std::ptr::null(),
        tangents: std::ptr::null(),
        joints: j0.as_ptr().cast(),
        weights: w0.as_ptr().cast(),
        joints1: std::ptr::null(),
        weights1: std::ptr::null(),
    };
    assert_eq!(sinew_skin_blocks_count(n), 3);
    let mut blocks = vec![sinew_vertex_block { data: [[0; 4]; 13] }; 3];
    // SAFETY: the mesh's arrays have `n` vertices, `blocks` 3 entries.
    let s = unsafe { sinew_skin_blocks_prepare(&c_mesh, 5, blocks.as_mut_ptr(), 3) };
    assert_eq!(s, sinew_status::Ok);
    assert_eq!(
        bytemuck::cast_slice::<_, u8>(&blocks),
        bytemuck::cast_slice::<_, u8>(&rust_blocks)
    );
    let skin = |blocks: &[sinew_vertex_block], joints: usize, out: &mut [[f32; 3]]| {
        let target = sinew_skin_target {
            positions: out.as_mut_ptr().cast(),
            normals: std::ptr::null_mut(),
            tangents: std::ptr::null_mut(),
        };
        // SAFETY: `lbs` has 5 entries (`joints` at most 5), `blocks` 3, the
        // target `n` positions.
        unsafe { sinew_skin_blocks_lbs(lbs.as_ptr().cast(), joints, blocks.as_ptr(), n, &target) }
    };
    let mut got = vec![[9.0f32; 3]; n];
    assert_eq!(skin(&blocks, 5, &mut got), sinew_status::Ok);
    assert_eq!(got, want);
    // A joint past the palette (through a shorter palette, and written
    // into a block by hand), and a slot count preparation never writes.
    let mut bad = blocks.clone();
    let words = bytemuck::cast_slice_mut::<_, u16>(&mut bad);
    // Joints start after 40 floats (160 bytes): block 1, lane 2, slot 0.
    words[(208 + 160) / 2 + 2 * 4] = 9;
    let mut kind = blocks.clone();
    kind[2].data[12][0] = 7;
    for (blocks, joints, status) in [
        (&blocks, 2, sinew_status::InvalidInfluence),
        (&bad, 5, sinew_status::InvalidInfluence),
        (&kind, 5, sinew_status::InvalidData),
    ] {
        let mut out = vec![[9.0f32; 3]; n];
        assert_eq!(skin(blocks, joints, &mut out), status);
        assert_eq!(out, vec![[9.0f32; 3]; n]);
    }
    // Preparing into the positions is an overlap; a short buffer a length.
    let mut p_copy: Vec<sinew_vertex_block> = vec![sinew_vertex_block { data: [[0; 4]; 13] }; 3];
    let aliased = sinew_skin_mesh {
        positions: p_copy.as_ptr().cast(),
        ..c_mesh
    };
    // SAFETY: `p_copy` holds 3 blocks (624 bytes), more than `n` positions.
    let s = unsafe { sinew_skin_blocks_prepare(&aliased, 5, p_copy.as_mut_ptr(), 3) };
    assert_eq!(s, sinew_status::OverlappingBuffers);
    // SAFETY: as above, `blocks` has 3 entries.
    let s = unsafe { sinew_skin_blocks_prepare(&c_mesh, 5, blocks.as_mut_ptr(), 2) };
    assert_eq!(s, sinew_status::BadLength);
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

// ---------------------------------------------------------------------------
// Inverse kinematics
// ---------------------------------------------------------------------------

/// The humanoid at 0.37 s of its walk (knees and elbows bent): its loaded
/// handle, local pose and model matrices.
struct IkRig {
    /// The container the handle views (its heap buffer never moves).
    skel_bytes: Vec<u128>,
    handle: sinew_skeleton,
    local: Vec<SoaTransform>,
    models: Vec<sinew_core::Mat4>,
}

impl IkRig {
    fn new() -> IkRig {
        let skel_bytes = humanoid();
        let (s, handle) = load_skeleton(bytemuck::cast_slice(&skel_bytes));
        assert_eq!(s, sinew_status::Ok);
        let skel = Skeleton::from_bytes(bytemuck::cast_slice(&skel_bytes)).unwrap();
        let clip_bytes = walk_clip(&skel);
        let clip = RawClip::from_bytes(bytemuck::cast_slice(&clip_bytes)).unwrap();
        let mut local = vec![SoaTransform::default(); skel.soa_count()];
        clip.sample(0.37, TimeMode::Loop, &mut local).unwrap();
        let mut models = vec![sinew_core::Mat4::IDENTITY; skel.joint_count()];
        let job = sinew_core::fk::FkJob::new(&skel, &local);
        sinew_core::fk::local_to_model(&job, &mut models).unwrap();
        IkRig {
            skel_bytes,
            handle,
            local,
            models,
        }
    }

    fn skel(&self) -> Skeleton<'_> {
        Skeleton::from_bytes(bytemuck::cast_slice(&self.skel_bytes)).unwrap()
    }

    fn joint(&self, name: &str) -> usize {
        self.skel().find_joint(name).unwrap()
    }

    /// The C view of this rig's pose.
    fn pose(&mut self) -> sinew_ik_pose {
        sinew_ik_pose {
            skeleton: &self.handle,
            local: self.local.as_mut_ptr().cast(),
            local_len: self.local.len(),
            root: std::ptr::null(),
            models: self.models.as_mut_ptr().cast(),
            models_len: self.models.len(),
        }
    }

    /// Runs `f` on this rig's pose through the Rust API.
    fn solve_rust<R>(&mut self, f: impl FnOnce(&mut sinew_core::ik::IkPose<'_, '_>) -> R) -> R {
        let bytes = self.skel_bytes.clone();
        let skel = Skeleton::from_bytes(bytemuck::cast_slice(&bytes)).unwrap();
        let mut pose =
            sinew_core::ik::IkPose::new(&skel, &mut self.local, &mut self.models, None).unwrap();
        f(&mut pose)
    }
}

/// A plane `y = base + slope · x` under the feet, for a `sinew_ground_fn`;
/// counts its calls and fails (returns 3) on call `fail_at` (1-based).
struct Plane {
    base: f32,
    slope: f32,
    calls: std::cell::Cell<u32>,
    fail_at: u32,
}

impl Plane {
    fn new(base: f32, slope: f32) -> Plane {
        Plane {
            base,
            slope,
            calls: std::cell::Cell::new(0),
            fail_at: 0,
        }
    }

    fn at(&self, x: f32) -> (f32, sinew_core::Vec3) {
        (
            self.base + self.slope * x,
            sinew_core::Vec3::new(-self.slope, 1.0, 0.0),
        )
    }
}

unsafe extern "C" fn plane_ground(
    user: *mut std::ffi::c_void,
    x: f32,
    _z: f32,
    hit: *mut sinew_ground_hit,
) -> u32 {
    // SAFETY: the tests pass a `Plane` as `user`; `hit` is the library's.
    let (g, hit) = unsafe { (&*(user as *const Plane), &mut *hit) };
    g.calls.set(g.calls.get() + 1);
    if g.calls.get() == g.fail_at {
        return 3;
    }
    let (h, n) = g.at(x);
    *hit = sinew_ground_hit {
        hit: 1,
        height: h,
        normal: [n.x, n.y, n.z],
    };
    0
}

/// Legs of the humanoid for foot placement: the two legs, then the arms
/// (upper-arm twist → lower arm → lower-arm twist) as a third and fourth.
fn ik_legs(r: &IkRig) -> [sinew_foot_leg; 4] {
    let leg = |hip: &str, knee: &str, ankle: &str| sinew_foot_leg {
        hip: r.joint(hip),
        knee: r.joint(knee),
        ankle: r.joint(ankle),
        knee_axis: [-1.0, 0.0, 0.0],
    };
    [
        leg("thigh_l", "calf_l", "foot_l"),
        leg("thigh_r", "calf_r", "foot_r"),
        leg("upper_arm_twist_l", "lower_arm_l", "lower_arm_twist_l"),
        leg("upper_arm_twist_r", "lower_arm_r", "lower_arm_twist_r"),
    ]
}

fn foot_placement(pelvis: usize, legs: &[sinew_foot_leg], half_life: f32) -> sinew_foot_placement {
    sinew_foot_placement {
        pelvis,
        legs: legs.as_ptr(),
        leg_count: legs.len(),
        foot_height: 0.02,
        max_tilt: 0.5,
        max_pelvis_offset: 0.3,
        half_life,
        soften: 0.97,
    }
}

/// The core's foot placement for the legs of a `sinew_foot_placement`.
fn core_feet<const N: usize>(
    f: &sinew_foot_placement,
    legs: &[sinew_foot_leg],
) -> sinew_core::ik::foot::FootPlacement<N> {
    use sinew_core::ik::foot::{FootLeg, FootPlacement};
    FootPlacement {
        pelvis: f.pelvis,
        legs: std::array::from_fn(|i| FootLeg {
            hip: legs[i].hip,
            knee: legs[i].knee,
            ankle: legs[i].ankle,
            knee_axis: sinew_core::Vec3::new(
                legs[i].knee_axis[0],
                legs[i].knee_axis[1],
                legs[i].knee_axis[2],
            ),
        }),
        foot_height: f.foot_height,
        max_tilt: f.max_tilt,
        max_pelvis_offset: f.max_pelvis_offset,
        half_life: f.half_life,
        soften: f.soften,
    }
}

/// Three frames of foot placement for `N` legs through the C ABI (callback
/// and probed) and the Rust API: the same pose, matrices and springs, bit
/// for bit.
fn foot_placement_matches_the_rust_api<const N: usize>() {
    use sinew_core::ik::foot::FootState;
    let rig = IkRig::new();
    let legs = ik_legs(&rig);
    let feet = foot_placement(rig.joint("pelvis"), &legs[..N], 0.1);
    let plane = Plane::new(0.05, 0.15);
    let (mut c, mut probed, mut rust) = (IkRig::new(), IkRig::new(), IkRig::new());
    let mut state = sinew_foot_state::default();
    let mut probed_state = sinew_foot_state::default();
    let mut rust_state = FootState::<N>::new();
    for frame in 0..3 {
        let mut report = sinew_foot_report::default();
        let pose = c.pose();
        let user = std::ptr::from_ref(&plane).cast_mut().cast();
        // SAFETY: the rig's buffers, a plane for the callback, a state and a report.
        let s = unsafe {
            sinew_foot_placement_solve(
                &pose,
                &feet,
                Some(plane_ground),
                user,
                0.0,
                1.0 / 60.0,
                &mut state,
                &mut report,
            )
        };
        assert_eq!(s, sinew_status::Ok, "{N} legs, frame {frame}");
        let hits: Vec<sinew_ground_hit> = legs[..N]
            .iter()
            .map(|l| {
                let (h, n) = plane.at(probed.models[l.ankle].cols[3][0]);
                sinew_ground_hit {
                    hit: 1,
                    height: h,
                    normal: [n.x, n.y, n.z],
                }
            })
            .collect();
        let pose = probed.pose();
        // SAFETY: as above, with one hit per leg.
        let s = unsafe {
            sinew_foot_placement_solve_probed(
                &pose,
                &feet,
                hits.as_ptr(),
                hits.len(),
                0.0,
                1.0 / 60.0,
                &mut probed_state,
                std::ptr::null_mut(),
            )
        };
        assert_eq!(s, sinew_status::Ok);
        let core = core_feet::<N>(&feet, &legs);
        let ground = |x: f32, _: f32| Some(plane.at(x));
        let r = rust
            .solve_rust(|p| core.solve(p, &ground, 0.0, 1.0 / 60.0, &mut rust_state))
            .unwrap();
        for other in [&c, &probed] {
            assert_eq!(other.local, rust.local, "{N} legs, frame {frame}");
            assert_eq!(other.models, rust.models, "{N} legs, frame {frame}");
        }
        assert_eq!(state, probed_state);
        assert_eq!(state.primed, 1);
        assert_eq!(state.pelvis.value, rust_state.pelvis.value);
        for i in 0..N {
            assert_eq!(state.feet[i].value, rust_state.feet[i].value);
            assert_eq!(state.feet[i].velocity, rust_state.feet[i].velocity);
            assert_eq!(state.normals[i][1].value, rust_state.normals[i][1].value);
            assert_eq!(report.grounded[i], u32::from(r.grounded[i]));
            assert_eq!(report.reached[i], u32::from(r.reached[i]));
        }
        assert_eq!(report.pelvis_offset, r.pelvis_offset);
        // Entries past the legs are left alone.
        assert!(state.feet[N..]
            .iter()
            .all(|s| *s == sinew_spring::default()));
        assert!(report.grounded[N..].iter().all(|g| *g == 0));
    }
    assert_eq!(plane.calls.get(), 3 * N as u32);
}

#[test]
fn ik_through_the_c_abi_is_the_rust_api_bit_for_bit() {
    use sinew_core::ik::aim::{look_at, Aim, LookAtJoint};
    use sinew_core::ik::two_bone::{TwoBoneGoal, TwoBoneIk};
    use sinew_core::Vec3;
    let rig = IkRig::new();
    let (thigh, calf, foot) = (
        rig.joint("thigh_l"),
        rig.joint("calf_l"),
        rig.joint("foot_l"),
    );
    // Reachable, out of reach, softened, partial weight with twist and pole.
    for (target, weight, soften, twist) in [
        ([0.15f32, 0.25, 0.2], 1.0f32, 1.0f32, 0.0f32),
        ([0.1, -1.0, 0.5], 1.0, 1.0, 0.0),
        ([0.1, 0.1, 0.1], 1.0, 0.9, 0.0),
        ([0.2, 0.3, -0.1], 0.6, 1.0, 0.4),
    ] {
        let job = sinew_two_bone {
            start: thigh,
            mid: calf,
            end: foot,
            target,
            pole: [0.2, 0.0, 1.0],
            mid_axis: [-1.0, 0.0, 0.0],
            weight,
            soften,
            twist,
        };
        let (mut c, mut rust) = (IkRig::new(), IkRig::new());
        let mut report = sinew_two_bone_report::default();
        let pose = c.pose();
        // SAFETY: the rig's buffers, a job and a report.
        let s = unsafe { sinew_two_bone_solve(&pose, &job, &mut report) };
        assert_eq!(s, sinew_status::Ok);
        let goal = TwoBoneGoal::new(Vec3::new(target[0], target[1], target[2]))
            .with_pole(Vec3::new(0.2, 0.0, 1.0))
            .with_weight(weight)
            .with_soften(soften)
            .with_twist(twist);
        let r = rust
            .solve_rust(|p| TwoBoneIk::new(thigh, calf, foot, goal).solve(p))
            .unwrap();
        assert_eq!(c.local, rust.local, "{target:?}");
        assert_eq!(c.models, rust.models, "{target:?}");
        assert_eq!(report.reached, u32::from(r.reached));
        let q = r.start_correction;
        assert_eq!(report.start_correction, [q.x, q.y, q.z, q.w]);
    }
    // A look-at chain with a cone limit on the neck and an aim weight.
    let chain = [
        sinew_look_at_joint {
            joint: rig.joint("spine_02"),
            weight: 0.2,
            max_angle: f32::INFINITY,
        },
        sinew_look_at_joint {
            joint: rig.joint("neck_01"),
            weight: 0.5,
            max_angle: 0.1,
        },
        sinew_look_at_joint {
            joint: rig.joint("head"),
            weight: 1.0,
            max_angle: 1.0,
        },
    ];
    let aim = sinew_aim {
        target: [-0.8, 1.2, 0.6],
        forward: [0.0, 0.0, 1.0],
        up: [0.0, 1.0, 0.0],
        offset: [0.0, 0.08, 0.08],
        pole: [0.0, 1.0, 0.0],
        twist: 0.1,
        weight: 0.9,
    };
    let (mut c, mut rust) = (IkRig::new(), IkRig::new());
    let mut report = sinew_look_at_report::default();
    let pose = c.pose();
    // SAFETY: the rig's buffers, a 3-joint chain, an aim and a report.
    let s = unsafe { sinew_look_at_solve(&pose, chain.as_ptr(), 3, &aim, &mut report) };
    assert_eq!(s, sinew_status::Ok);
    let v = |a: [f32; 3]| Vec3::new(a[0], a[1], a[2]);
    let joints = chain.map(|j| LookAtJoint::new(j.joint, j.weight).with_max_angle(j.max_angle));
    let rust_aim = Aim::new(v(aim.target), v(aim.forward), v(aim.up))
        .with_offset(v(aim.offset))
        .with_pole(v(aim.pole))
        .with_twist(aim.twist)
        .with_weight(aim.weight);
    let r = rust.solve_rust(|p| look_at(p, &joints, &rust_aim)).unwrap();
    assert_eq!(c.local, rust.local);
    assert_eq!(c.models, rust.models);
    assert_eq!(
        (report.reached, report.clamped as usize),
        (u32::from(r.reached), r.clamped)
    );
    assert!(report.clamped >= 1, "the neck's 0.1 rad cone holds it");
    // Foot placement for one to four legs (the core's FootPlacement<N>).
    foot_placement_matches_the_rust_api::<1>();
    foot_placement_matches_the_rust_api::<2>();
    foot_placement_matches_the_rust_api::<3>();
    foot_placement_matches_the_rust_api::<4>();
}

#[test]
fn the_ik_statuses_have_descriptions() {
    for s in [
        sinew_status::NotAChain,
        sinew_status::ZeroLengthBone,
        sinew_status::CallbackFailed,
    ] {
        // SAFETY: a static NUL-terminated string.
        let text = unsafe { std::ffi::CStr::from_ptr(sinew_status_string(s as u32)) };
        assert!(sinew_status::ALL.contains(&s));
        assert_ne!(text.to_str().unwrap(), "unknown status");
    }
}

/// A foot state with a pelvis spring already moving.
fn moving_state() -> sinew_foot_state {
    let mut state = sinew_foot_state {
        primed: 1,
        ..Default::default()
    };
    state.pelvis.velocity = 0.25;
    state
}

/// The bits of a buffer (NaN compares equal to itself).
fn bits<T: bytemuck::Pod>(v: &[T]) -> Vec<u32> {
    bytemuck::cast_slice(v).to_vec()
}

/// Runs one IK call on a fresh rig with the foot state `state` and checks
/// that an error leaves pose, matrices, state and report as they were.
fn ik_call(
    state: sinew_foot_state,
    f: impl FnOnce(&sinew_ik_pose, &mut sinew_foot_state, &mut sinew_foot_report) -> sinew_status,
) -> sinew_status {
    let mut rig = IkRig::new();
    let (local, models) = (bits(&rig.local), bits(&rig.models));
    let mut state = state;
    let mut report = sinew_foot_report {
        pelvis_offset: 9.0,
        ..Default::default()
    };
    let (state0, report0) = (state, report);
    let pose = rig.pose();
    let s = f(&pose, &mut state, &mut report);
    assert_ne!(s, sinew_status::Panic);
    if s != sinew_status::Ok {
        assert_eq!(bits(&rig.local), local, "{s:?} wrote the pose");
        assert_eq!(bits(&rig.models), models, "{s:?} wrote the matrices");
        assert_eq!(
            bits(std::slice::from_ref(&state)),
            bits(std::slice::from_ref(&state0)),
            "{s:?} wrote the state"
        );
        assert_eq!(report, report0, "{s:?} wrote the report");
    }
    s
}

#[test]
fn every_bad_ik_input_gets_its_status_and_writes_nothing() {
    use sinew_status as S;
    let rig = IkRig::new();
    let j = |n: &str| rig.joint(n);
    let (thigh, calf, foot) = (j("thigh_l"), j("calf_l"), j("foot_l"));
    let good = sinew_two_bone {
        start: thigh,
        mid: calf,
        end: foot,
        target: [0.1, 0.3, 0.2],
        pole: [0.0, 0.0, 1.0],
        mid_axis: [-1.0, 0.0, 0.0],
        weight: 1.0,
        soften: 1.0,
        twist: 0.0,
    };
    let two_bone = |job: sinew_two_bone| {
        ik_call(moving_state(), |pose, _, _| {
            let mut report = sinew_two_bone_report::default();
            // SAFETY: the rig's buffers, a job and a report.
            unsafe { sinew_two_bone_solve(pose, &job, &mut report) }
        })
    };
    assert_eq!(two_bone(good), S::Ok);
    type JobEdit = (fn(&mut sinew_two_bone), sinew_status);
    let cases: [JobEdit; 10] = [
        (|b| b.end = 70, S::OutOfRange),
        (|b| b.mid = usize::MAX, S::OutOfRange),
        (|b| b.end = b.mid, S::NotAChain),
        (|b| std::mem::swap(&mut b.start, &mut b.end), S::NotAChain),
        (|b| b.target[2] = f32::NAN, S::InvalidArgument),
        (|b| b.pole[0] = f32::NEG_INFINITY, S::InvalidArgument),
        (|b| b.twist = f32::INFINITY, S::InvalidArgument),
        (|b| b.weight = -0.5, S::InvalidArgument),
        (|b| b.soften = f32::NAN, S::InvalidArgument),
        (|b| b.mid_axis = [0.0; 3], S::InvalidArgument),
    ];
    for (edit, want) in cases {
        let mut job = good;
        edit(&mut job);
        assert_eq!(two_bone(job), want, "{job:?}");
    }
    // NULL, a NULL report (fine), a pose struct with bad buffers.
    let s = ik_call(moving_state(), |pose, _, _| {
        // SAFETY: a NULL job is the case under test.
        unsafe { sinew_two_bone_solve(pose, std::ptr::null(), std::ptr::null_mut()) }
    });
    assert_eq!(s, S::NullParameter);
    let s = ik_call(moving_state(), |pose, _, _| {
        // SAFETY: the rig's buffers and a job; no report.
        unsafe { sinew_two_bone_solve(pose, &good, std::ptr::null_mut()) }
    });
    assert_eq!(s, S::Ok);
    type PoseEdit = (fn(&mut sinew_ik_pose), sinew_status);
    let edits: [PoseEdit; 5] = [
        (|p| p.local = std::ptr::null_mut(), S::NullParameter),
        (|p| p.local_len += 1, S::BadLength),
        (|p| p.models_len = 0, S::BadLength),
        (|p| p.models = p.local.cast(), S::OverlappingBuffers),
        (
            // SAFETY: `skeleton` points to the rig's loaded handle.
            |p| p.local = unsafe { (*p.skeleton).rest_pose }.cast_mut(),
            S::OverlappingBuffers,
        ),
    ];
    for (edit, want) in edits {
        let s = ik_call(moving_state(), |pose, _, _| {
            let mut p = *pose;
            edit(&mut p);
            // SAFETY: the buffers are the rig's (or the edit under test, which the call rejects).
            unsafe { sinew_two_bone_solve(&p, &good, std::ptr::null_mut()) }
        });
        assert_eq!(s, want);
    }
    // A misaligned root matrix.
    let s = ik_call(moving_state(), |pose, _, _| {
        let raw = [0u8; 80];
        let mut p = *pose;
        let at = raw.as_ptr().align_offset(16) + 4;
        p.root = raw[at..].as_ptr().cast();
        // SAFETY: `root` points into `raw`, 4 bytes past a 16-byte boundary.
        unsafe { sinew_two_bone_solve(&p, &good, std::ptr::null_mut()) }
    });
    assert_eq!(s, S::Misaligned);

    // Look-at.
    let head = j("head");
    let chain = [
        sinew_look_at_joint {
            joint: j("neck_01"),
            weight: 0.5,
            max_angle: f32::INFINITY,
        },
        sinew_look_at_joint {
            joint: head,
            weight: 1.0,
            max_angle: f32::INFINITY,
        },
    ];
    let aim = sinew_aim {
        target: [0.3, 1.6, 1.0],
        forward: [0.0, 0.0, 1.0],
        up: [0.0, 1.0, 0.0],
        offset: [0.0; 3],
        pole: [0.0, 1.0, 0.0],
        twist: 0.0,
        weight: 1.0,
    };
    let look = |chain: &[sinew_look_at_joint], aim: sinew_aim| {
        ik_call(moving_state(), |pose, _, _| {
            let mut r = sinew_look_at_report::default();
            // SAFETY: the rig's buffers, the chain, an aim and a report.
            unsafe { sinew_look_at_solve(pose, chain.as_ptr(), chain.len(), &aim, &mut r) }
        })
    };
    assert_eq!(look(&chain, aim), S::Ok);
    assert_eq!(look(&[], aim), S::BadLength);
    assert_eq!(look(&[chain[0]; 33], aim), S::CapacityExceeded);
    let hand = j("hand_l");
    let chains: [([usize; 2], S); 5] = [
        ([head, 70], S::OutOfRange),
        ([head, j("neck_01")], S::NotAChain),
        ([head, head], S::NotAChain),
        ([hand, head], S::NotAChain),
        ([j("pelvis"), head], S::Ok),
    ];
    for (joints, want) in chains {
        let mut c = chain;
        c[0].joint = joints[0];
        c[1].joint = joints[1];
        assert_eq!(look(&c, aim), want, "{joints:?}");
    }
    let mut c = chain;
    c[0].max_angle = -0.1;
    assert_eq!(look(&c, aim), S::InvalidArgument);
    for edit in [
        (|a: &mut sinew_aim| a.target[0] = f32::NAN) as fn(&mut sinew_aim),
        |a| a.forward = [0.0; 3],
        |a| a.offset[1] = f32::INFINITY,
        |a| a.weight = 1.01,
        |a| a.twist = f32::NAN,
    ] {
        let mut a = aim;
        edit(&mut a);
        assert_eq!(look(&chain, a), S::InvalidArgument, "{a:?}");
    }

    // Foot placement.
    let legs = ik_legs(&rig);
    let pelvis = j("pelvis");
    let plane = Plane::new(0.0, 0.1);
    let place =
        |feet: sinew_foot_placement, floor: f32, dt: f32, edit: fn(&mut sinew_foot_state)| {
            plane.calls.set(0);
            let mut state = moving_state();
            edit(&mut state);
            ik_call(state, |pose, state, report| {
                let user = std::ptr::from_ref(&plane).cast_mut().cast();
                // SAFETY: the rig's buffers, settings whose legs are valid for `leg_count`, the
                // plane as the callback's user pointer, a state and a report.
                unsafe {
                    sinew_foot_placement_solve(
                        pose,
                        &feet,
                        Some(plane_ground),
                        user,
                        floor,
                        dt,
                        state,
                        report,
                    )
                }
            })
        };
    let keep = |_: &mut sinew_foot_state| {};
    let good_feet = foot_placement(pelvis, &legs[..2], 0.1);
    assert_eq!(place(good_feet, 0.0, 0.01, keep), S::Ok);
    assert_eq!(
        place(foot_placement(pelvis, &legs, 0.1), 0.0, 0.01, keep),
        S::Ok
    );
    let five = [legs[0], legs[1], legs[2], legs[3], legs[0]];
    assert_eq!(
        place(foot_placement(pelvis, &five, 0.1), 0.0, 0.01, keep),
        S::CapacityExceeded
    );
    assert_eq!(
        place(foot_placement(pelvis, &[], 0.1), 0.0, 0.01, keep),
        S::BadLength
    );
    let mut bad_legs = legs;
    bad_legs[1].hip = 700;
    assert_eq!(
        place(foot_placement(pelvis, &bad_legs[..2], 0.1), 0.0, 0.01, keep),
        S::OutOfRange
    );
    assert_eq!(
        place(foot_placement(70, &legs[..2], 0.1), 0.0, 0.01, keep),
        S::OutOfRange
    );
    let mut bad_legs = legs;
    bad_legs[0].ankle = legs[1].ankle;
    assert_eq!(
        place(foot_placement(pelvis, &bad_legs[..2], 0.1), 0.0, 0.01, keep),
        S::NotAChain
    );
    assert_eq!(
        place(
            foot_placement(j("spine_01"), &legs[..2], 0.1),
            0.0,
            0.01,
            keep
        ),
        S::NotAChain
    );
    let mut bad_legs = legs;
    bad_legs[1].knee_axis = [f32::NAN, 0.0, 0.0];
    assert_eq!(
        place(foot_placement(pelvis, &bad_legs[..2], 0.1), 0.0, 0.01, keep),
        S::InvalidArgument
    );
    for edit in [
        (|f: &mut sinew_foot_placement| f.foot_height = -0.01) as fn(&mut sinew_foot_placement),
        |f| f.max_tilt = -0.1,
        |f| f.max_pelvis_offset = f32::INFINITY,
        |f| f.half_life = f32::NAN,
        |f| f.soften = 1.1,
    ] {
        let mut f = good_feet;
        edit(&mut f);
        assert_eq!(place(f, 0.0, 0.01, keep), S::InvalidArgument);
    }
    assert_eq!(
        place(good_feet, f32::INFINITY, 0.01, keep),
        S::InvalidArgument
    );
    assert_eq!(place(good_feet, 0.0, f32::NAN, keep), S::InvalidArgument);
    assert_eq!(
        place(good_feet, 0.0, 0.01, |s| s.primed = 2),
        S::InvalidArgument
    );
    assert_eq!(
        place(good_feet, 0.0, 0.01, |s| s.normals[1][2].value = f32::NAN),
        S::InvalidArgument
    );
    // A NaN in the spring of a leg the call does not have is not read.
    assert_eq!(
        place(good_feet, 0.0, 0.01, |s| s.feet[3].value = f32::NAN),
        S::Ok
    );
    // The callback fails on each leg in turn: CALLBACK_FAILED, no leg after it asked.
    for fail_at in 1..=4u32 {
        let mut p = Plane::new(0.0, 0.1);
        p.fail_at = fail_at;
        let s = ik_call(moving_state(), |pose, state, report| {
            let feet = foot_placement(pelvis, &legs, 0.1);
            let user = std::ptr::from_ref(&p).cast_mut().cast();
            // SAFETY: as above.
            unsafe {
                sinew_foot_placement_solve(
                    pose,
                    &feet,
                    Some(plane_ground),
                    user,
                    0.0,
                    0.01,
                    state,
                    report,
                )
            }
        });
        assert_eq!(s, S::CallbackFailed);
        assert_eq!(p.calls.get(), fail_at);
    }
    // No callback, no state; a report is optional.
    let s = ik_call(moving_state(), |pose, state, report| {
        // SAFETY: the callback under test is missing.
        unsafe {
            sinew_foot_placement_solve(
                pose,
                &good_feet,
                None,
                std::ptr::null_mut(),
                0.0,
                0.01,
                state,
                report,
            )
        }
    });
    assert_eq!(s, S::NullParameter);
    let s = ik_call(moving_state(), |pose, _, report| {
        let user = std::ptr::from_ref(&plane).cast_mut().cast();
        // SAFETY: the state under test is missing.
        unsafe {
            sinew_foot_placement_solve(
                pose,
                &good_feet,
                Some(plane_ground),
                user,
                0.0,
                0.01,
                std::ptr::null_mut(),
                report,
            )
        }
    });
    assert_eq!(s, S::NullParameter);
    // Probed hits: the count, a hit flag, a NaN height, a zero normal.
    let hit = sinew_ground_hit {
        hit: 1,
        height: 0.0,
        normal: [0.0, 1.0, 0.0],
    };
    let probed = |hits: &[sinew_ground_hit]| {
        ik_call(moving_state(), |pose, state, report| {
            // SAFETY: the rig's buffers, settings, `hits.len()` hits, a state and a report.
            unsafe {
                sinew_foot_placement_solve_probed(
                    pose,
                    &good_feet,
                    hits.as_ptr(),
                    hits.len(),
                    0.0,
                    0.01,
                    state,
                    report,
                )
            }
        })
    };
    assert_eq!(probed(&[hit, hit]), S::Ok);
    assert_eq!(probed(&[hit]), S::BadLength);
    assert_eq!(probed(&[hit, hit, hit]), S::BadLength);
    let no_ground = sinew_ground_hit {
        hit: 0,
        height: f32::NAN,
        normal: [0.0; 3],
    };
    assert_eq!(probed(&[hit, no_ground]), S::Ok);
    for bad in [
        sinew_ground_hit { hit: 2, ..hit },
        sinew_ground_hit {
            height: f32::NAN,
            ..hit
        },
        sinew_ground_hit {
            normal: [0.0; 3],
            ..hit
        },
        sinew_ground_hit {
            normal: [f32::INFINITY, 1.0, 0.0],
            ..hit
        },
    ] {
        assert_eq!(probed(&[bad, hit]), S::InvalidArgument, "{bad:?}");
    }
}

/// The pose's own geometry: a bone of zero length, a singular frame, a NaN.
#[test]
fn a_degenerate_pose_gets_its_status_and_is_left_alone() {
    let rig = IkRig::new();
    let (thigh, calf, foot) = (
        rig.joint("thigh_l"),
        rig.joint("calf_l"),
        rig.joint("foot_l"),
    );
    let job = sinew_two_bone {
        start: thigh,
        mid: calf,
        end: foot,
        target: [0.1, 0.3, 0.2],
        pole: [0.0, 0.0, 1.0],
        mid_axis: [-1.0, 0.0, 0.0],
        weight: 1.0,
        soften: 1.0,
        twist: 0.0,
    };
    let legs = ik_legs(&rig);
    let feet = foot_placement(rig.joint("pelvis"), &legs[..2], 0.0);
    let plane = Plane::new(0.0, 0.0);
    type Edit = fn(&mut sinew_core::Transform);
    let cases: [(usize, Edit, sinew_status); 4] = [
        (
            foot,
            |t| t.translation = sinew_core::Vec3::ZERO,
            sinew_status::ZeroLengthBone,
        ),
        (
            calf,
            |t| t.translation = sinew_core::Vec3::ZERO,
            sinew_status::ZeroLengthBone,
        ),
        (thigh, |t| t.scale.x = 0.0, sinew_status::SingularTransform),
        (
            thigh,
            |t| t.rotation.y = f32::NAN,
            sinew_status::InvalidArgument,
        ),
    ];
    for (joint, edit, want) in cases {
        let mut r = IkRig::new();
        let mut t = sinew_core::soa::get_joint(&r.local, joint).unwrap();
        edit(&mut t);
        sinew_core::soa::set_joint(&mut r.local, joint, &t).unwrap();
        let skel_bytes = r.skel_bytes.clone();
        let skel = Skeleton::from_bytes(bytemuck::cast_slice(&skel_bytes)).unwrap();
        let fk = sinew_core::fk::FkJob::new(&skel, &r.local);
        sinew_core::fk::local_to_model(&fk, &mut r.models).unwrap();
        let (local, models) = (bits(&r.local), bits(&r.models));
        let pose = r.pose();
        // SAFETY: the rig's buffers and a job.
        let s = unsafe { sinew_two_bone_solve(&pose, &job, std::ptr::null_mut()) };
        assert_eq!(s, want, "two-bone, joint {joint}");
        let mut state = sinew_foot_state::default();
        let user = std::ptr::from_ref(&plane).cast_mut().cast();
        // SAFETY: the rig's buffers, settings, the plane and a state.
        let s = unsafe {
            sinew_foot_placement_solve(
                &pose,
                &feet,
                Some(plane_ground),
                user,
                0.0,
                0.01,
                &mut state,
                std::ptr::null_mut(),
            )
        };
        // A NaN hip puts the ankle under it at NaN too: no probe is made.
        assert_eq!(s, want, "foot placement, joint {joint}");
        assert_eq!((bits(&r.local), bits(&r.models)), (local, models));
        assert_eq!(state, sinew_foot_state::default());
    }
}

fn ik_float() -> impl Strategy<Value = f32> {
    prop_oneof![
        Just(f32::NAN),
        Just(f32::INFINITY),
        Just(0.0f32),
        Just(1.0f32),
        Just(-1.0f32),
        -2.0f32..2.0,
    ]
}

fn ik_vec3() -> impl Strategy<Value = [f32; 3]> {
    [ik_float(), ik_float(), ik_float()]
}

/// A joint index: mostly on the skeleton, sometimes past it.
fn ik_joint_index() -> impl Strategy<Value = usize> {
    prop_oneof![8 => 0usize..70, 1 => 70usize..80, 1 => Just(usize::MAX)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Random jobs (valid limbs and random joints, NaN and out-of-range
    /// numbers) never panic, and an error leaves everything as it was.
    #[test]
    fn random_ik_jobs_never_panic_and_write_nothing_on_error(
        limb in prop_oneof![
            (0usize..4).prop_map(|k| [k, 99, 99]),
            [ik_joint_index(), ik_joint_index(), ik_joint_index()],
        ],
        target in ik_vec3(),
        pole in ik_vec3(),
        axis in ik_vec3(),
        numbers in [ik_float(), ik_float(), ik_float(), ik_float()],
        chain in proptest::collection::vec((ik_joint_index(), ik_float(), ik_float()), 0..5),
        pelvis in prop_oneof![Just(0usize), ik_joint_index()],
        leg_count in 0usize..6,
        primed in 0u32..3,
    ) {
        let rig = IkRig::new();
        let legs = ik_legs(&rig);
        let limb = if limb[1] == 99 {
            [legs[limb[0]].hip, legs[limb[0]].knee, legs[limb[0]].ankle]
        } else {
            limb
        };
        let job = sinew_two_bone {
            start: limb[0],
            mid: limb[1],
            end: limb[2],
            target,
            pole,
            mid_axis: axis,
            weight: numbers[0],
            soften: numbers[1],
            twist: numbers[2],
        };
        ik_call(moving_state(), |pose, _, _| {
            let mut r = sinew_two_bone_report::default();
            // SAFETY: the rig's buffers, a job and a report.
            unsafe { sinew_two_bone_solve(pose, &job, &mut r) }
        });
        let joints: Vec<sinew_look_at_joint> = chain
            .iter()
            .map(|&(joint, weight, max_angle)| sinew_look_at_joint { joint, weight, max_angle })
            .collect();
        let aim = sinew_aim {
            target,
            forward: axis,
            up: pole,
            offset: [numbers[3], 0.0, 0.0],
            pole: [0.0, 1.0, 0.0],
            twist: numbers[2],
            weight: numbers[0],
        };
        ik_call(moving_state(), |pose, _, _| {
            // SAFETY: the rig's buffers, the chain and an aim.
            unsafe {
                sinew_look_at_solve(pose, joints.as_ptr(), joints.len(), &aim, std::ptr::null_mut())
            }
        });
        let five = [legs[0], legs[1], legs[2], legs[3], legs[0]];
        let mut feet = foot_placement(pelvis, &five[..leg_count], numbers[1]);
        feet.soften = numbers[0];
        let plane = Plane::new(numbers[3], 0.1);
        let state = sinew_foot_state { primed, ..moving_state() };
        ik_call(state, |pose, state, report| {
            let user = std::ptr::from_ref(&plane).cast_mut().cast();
            // SAFETY: the rig's buffers, settings whose legs are valid for `leg_count`, the
            // plane, a state and a report.
            unsafe {
                sinew_foot_placement_solve(pose, &feet, Some(plane_ground), user, 0.0, numbers[2], state, report)
            }
        });
    }
}

fn jog_clip(skel: &Skeleton<'_>) -> Vec<u128> {
    let frames = procedural::gait_frame_count(Gait::Jog, 30.0);
    let mut keys = vec![SoaTransform::default(); frames * skel.soa_count()];
    let clip = procedural::write_gait_clip(Gait::Jog, skel, 30.0, &mut keys).unwrap();
    let size = sinew_core::clip::clip_container_size(skel.soa_count(), frames, clip.name().len());
    let mut v = vec![0u128; size / 16];
    clip.write(bytemuck::cast_slice_mut(&mut v)).unwrap();
    v
}

/// One command of a player run, given before a frame.
#[derive(Clone, Copy)]
enum PlayerCmd {
    Play(u32, u32, sinew_transition),
    Speed(f32),
    Paused(u32),
}

/// Runs the same commands through `sinew_player_*` and through
/// `sinew_core::player::Player` over the same clips; every frame's pose,
/// edges, root motion and player state agree bit for bit.
fn player_run<C: sinew_core::clip::ClipSource>(
    refs: &[sinew_clip_ref],
    clips: &[C],
    rest: &[SoaTransform],
    cmds: &[(usize, PlayerCmd)],
) {
    use sinew_core::mix::transition::{Decay, InertialBlock};
    use sinew_core::player::*;
    use sinew_core::track::event::{sort_range_ends, Event, EventTrack};
    let n = rest.len();
    let d = clips[0].duration();
    let events = [
        Event::instant(0.0, 1),
        Event::range(0.2 * d, 0.6 * d, 2),
        Event::instant(0.8 * d, 3),
    ];
    let mut ranges = [0u32; 1];
    sort_range_ends(&events, &mut ranges).unwrap();
    let track = EventTrack::new(d, &events, &[], &ranges).unwrap();
    let c_events = [
        sinew_event_track {
            duration: d,
            events: bytemuck::cast_slice(&events).as_ptr(),
            event_count: 3,
            names: std::ptr::null(),
            names_len: 0,
            ranges: ranges.as_ptr(),
            range_count: 1,
        },
        sinew_event_track {
            duration: 0.0,
            events: std::ptr::null(),
            event_count: 0,
            names: std::ptr::null(),
            names_len: 0,
            ranges: std::ptr::null(),
            range_count: 0,
        },
    ];
    let tracks = [Some(track), None];

    let mut sizes = sinew_player_sizes::default();
    assert_eq!(
        unsafe { sinew_player_buffer_sizes(n, &mut sizes) },
        sinew_status::Ok
    );
    let mk = |len: usize| vec![SoaTransform::IDENTITY; len];
    let (mut cs, mut ch, mut csc) = (mk(sizes.sources), mk(sizes.history), mk(sizes.scratch));
    let mut ci = vec![
        sinew_inertial_block {
            opaque: [[0.0; 4]; 18]
        };
        sizes.inertial
    ];
    let (mut rs, mut rh, mut rsc) = (mk(sizes.sources), mk(sizes.history), mk(sizes.scratch));
    let mut ri = vec![InertialBlock::default(); sizes.inertial];
    let (mut cout, mut rout) = (mk(n), mk(n));
    let mut cedges = vec![sinew_player_edge::default(); 8];
    let mut redges = vec![PlayerEdge::default(); 8];

    let mut cp = sinew_player {
        words: [0; SINEW_PLAYER_WORDS],
    };
    // Safety: valid handles, lengths and out-parameters throughout.
    assert_eq!(
        unsafe { sinew_player_init(&mut cp, refs.as_ptr(), refs.len(), 0, SINEW_PLAY_LOOP) },
        sinew_status::Ok
    );
    let mut rp = Player::<4>::new(clips, 0, PlayMode::Loop).unwrap();
    let modes = [PlayMode::Loop, PlayMode::Clamp, PlayMode::PingPong];
    for frame in 0..90 {
        for &(at, cmd) in cmds {
            if at != frame {
                continue;
            }
            match cmd {
                PlayerCmd::Play(clip, mode, t) => {
                    let s = unsafe {
                        sinew_player_play(&mut cp, refs.as_ptr(), refs.len(), clip, mode, &t)
                    };
                    assert_eq!(s, sinew_status::Ok);
                    let blend = if t.blend == SINEW_BLEND_CROSSFADE {
                        Blend::Crossfade(
                            [
                                FadeCurve::Linear,
                                FadeCurve::SmoothStep,
                                FadeCurve::EaseIn,
                                FadeCurve::EaseOut,
                            ][t.shape as usize],
                        )
                    } else if t.shape == SINEW_DECAY_QUINTIC {
                        Blend::Inertialize(Decay::Quintic)
                    } else {
                        Blend::Inertialize(Decay::Spring {
                            half_life: t.half_life,
                        })
                    };
                    let tr = Transition {
                        duration: t.duration,
                        blend,
                    };
                    rp.play(clips, clip as usize, modes[mode as usize], &tr)
                        .unwrap();
                }
                PlayerCmd::Speed(s) => {
                    assert_eq!(
                        unsafe { sinew_player_set_speed(&mut cp, s) },
                        sinew_status::Ok
                    );
                    rp.set_speed(s).unwrap();
                }
                PlayerCmd::Paused(p) => {
                    assert_eq!(
                        unsafe { sinew_player_set_paused(&mut cp, p) },
                        sinew_status::Ok
                    );
                    if p == 1 {
                        rp.pause()
                    } else {
                        rp.resume()
                    }
                }
            }
        }
        let bufs = sinew_player_buffers {
            sources: cs.as_mut_ptr().cast(),
            sources_len: cs.len(),
            history: ch.as_mut_ptr().cast(),
            history_len: ch.len(),
            inertial: ci.as_mut_ptr(),
            inertial_len: ci.len(),
            scratch: csc.as_mut_ptr().cast(),
            scratch_len: csc.len(),
        };
        let mut report = sinew_player_report::default();
        let s = unsafe {
            sinew_player_update(
                &mut cp,
                1.0 / 60.0,
                refs.as_ptr(),
                refs.len(),
                c_events.as_ptr(),
                rest.as_ptr().cast(),
                n,
                0,
                &bufs,
                cout.as_mut_ptr().cast(),
                n,
                cedges.as_mut_ptr(),
                cedges.len(),
                &mut report,
            )
        };
        assert_eq!(s, sinew_status::Ok, "frame {frame}");
        let assets = PlayerClips {
            clips,
            events: &tracks,
            rest,
            root: Some(0),
        };
        let mut b = PlayerBuffers {
            sources: &mut rs,
            history: &mut rh,
            inertial: &mut ri,
            scratch: &mut rsc,
        };
        let r = rp
            .update(1.0 / 60.0, &assets, &mut b, &mut rout, &mut redges)
            .unwrap();
        assert_eq!(bits(&cout), bits(&rout), "frame {frame}: pose");
        let m = r.root_motion;
        assert_eq!(
            (
                report.edges_written,
                report.edges_dropped,
                report.root_translation,
                report.root_yaw,
                report.ended
            ),
            (
                r.edges_written as u64,
                r.edges_dropped,
                [m.translation.x, m.translation.y, m.translation.z],
                m.yaw,
                u32::from(r.ended)
            ),
            "frame {frame}: report"
        );
        for (c, e) in cedges.iter().zip(&redges).take(r.edges_written) {
            assert_eq!(
                (
                    c.clip,
                    c.weight,
                    c.edge.id,
                    c.edge.time,
                    c.edge.cycle,
                    c.edge.forward
                ),
                (
                    e.clip,
                    e.weight,
                    e.edge.id,
                    e.edge.time,
                    e.edge.cycle,
                    u32::from(e.edge.forward)
                )
            );
        }
        let mut words = [0u32; SINEW_PLAYER_WORDS];
        rp.to_words(&mut words).unwrap();
        assert_eq!(cp.words, words, "frame {frame}: state");
    }
    let mut info = sinew_player_info::default();
    assert_eq!(
        unsafe { sinew_player_get_info(&cp, &mut info) },
        sinew_status::Ok
    );
    assert_eq!(
        (info.clip as usize, info.time, info.speed),
        (rp.clip(), rp.time(), rp.speed())
    );
}

fn fade_to(shape: u32, duration: f32) -> sinew_transition {
    sinew_transition {
        duration,
        blend: SINEW_BLEND_CROSSFADE,
        shape,
        half_life: 0.0,
    }
}

fn inertialize(shape: u32, duration: f32, half_life: f32) -> sinew_transition {
    sinew_transition {
        duration,
        blend: SINEW_BLEND_INERTIALIZE,
        shape,
        half_life,
    }
}

#[test]
fn the_player_through_the_c_abi_is_the_rust_player_bit_for_bit() {
    let skel_bytes = humanoid();
    let skel = Skeleton::from_bytes(bytemuck::cast_slice(&skel_bytes)).unwrap();
    let (walk, jog) = (walk_clip(&skel), jog_clip(&skel));
    let (s0, h0) = load_clip(bytemuck::cast_slice(&walk));
    let (s1, h1) = load_clip(bytemuck::cast_slice(&jog));
    assert_eq!((s0, s1), (sinew_status::Ok, sinew_status::Ok));
    let refs = [
        sinew_clip_ref {
            raw: &h0,
            compressed: std::ptr::null(),
        },
        sinew_clip_ref {
            raw: &h1,
            compressed: std::ptr::null(),
        },
    ];
    let clips = [
        RawClip::from_bytes(bytemuck::cast_slice(&walk)).unwrap(),
        RawClip::from_bytes(bytemuck::cast_slice(&jog)).unwrap(),
    ];
    let cmds = [
        (
            10,
            PlayerCmd::Play(1, SINEW_PLAY_PING_PONG, fade_to(SINEW_FADE_EASE_OUT, 0.4)),
        ),
        (
            20,
            PlayerCmd::Play(0, SINEW_PLAY_CLAMP, fade_to(SINEW_FADE_LINEAR, 0.3)),
        ),
        (
            35,
            PlayerCmd::Play(
                1,
                SINEW_PLAY_LOOP,
                inertialize(SINEW_DECAY_QUINTIC, 0.25, 0.0),
            ),
        ),
        (45, PlayerCmd::Speed(-1.3)),
        (
            50,
            PlayerCmd::Play(
                0,
                SINEW_PLAY_LOOP,
                inertialize(SINEW_DECAY_SPRING, 0.0, 0.1),
            ),
        ),
        (60, PlayerCmd::Paused(1)),
        (64, PlayerCmd::Paused(0)),
    ];
    player_run(&refs, &clips, skel.rest_pose(), &cmds);
}

#[test]
fn the_player_plays_compressed_clips_through_the_c_abi() {
    let skel_bytes = humanoid();
    let skel = Skeleton::from_bytes(bytemuck::cast_slice(&skel_bytes)).unwrap();
    let packed = compressed_walk(&skel);
    let (s, h) = load_compressed(bytemuck::cast_slice(&packed));
    assert_eq!(s, sinew_status::Ok);
    let refs = [
        sinew_clip_ref {
            raw: std::ptr::null(),
            compressed: &h,
        },
        sinew_clip_ref {
            raw: std::ptr::null(),
            compressed: &h,
        },
    ];
    let c = CompressedClip::from_bytes(bytemuck::cast_slice(&packed)).unwrap();
    let clips = [c, c];
    let cmds = [
        (
            15,
            PlayerCmd::Play(1, SINEW_PLAY_LOOP, fade_to(SINEW_FADE_SMOOTH_STEP, 0.3)),
        ),
        (
            40,
            PlayerCmd::Play(
                0,
                SINEW_PLAY_CLAMP,
                inertialize(SINEW_DECAY_QUINTIC, 0.2, 0.0),
            ),
        ),
    ];
    player_run(&refs, &clips, skel.rest_pose(), &cmds);
}

#[test]
fn bad_player_calls_are_errors_and_change_nothing() {
    let skel_bytes = humanoid();
    let skel = Skeleton::from_bytes(bytemuck::cast_slice(&skel_bytes)).unwrap();
    let walk = walk_clip(&skel);
    let (_, h) = load_clip(bytemuck::cast_slice(&walk));
    let refs = [sinew_clip_ref {
        raw: &h,
        compressed: std::ptr::null(),
    }];
    let mut p = sinew_player {
        words: [0; SINEW_PLAYER_WORDS],
    };
    // Safety: valid or deliberately NULL pointers with their lengths.
    unsafe {
        assert_eq!(
            sinew_player_init(&mut p, refs.as_ptr(), 1, 0, 0),
            sinew_status::Ok
        );
        let before = p;
        assert_eq!(
            sinew_player_init(&mut p, refs.as_ptr(), 1, 1, 0),
            sinew_status::OutOfRange
        );
        assert_eq!(
            sinew_player_init(&mut p, refs.as_ptr(), 1, 0, 9),
            sinew_status::InvalidArgument
        );
        let none = [sinew_clip_ref {
            raw: std::ptr::null(),
            compressed: std::ptr::null(),
        }];
        assert_eq!(
            sinew_player_init(&mut p, none.as_ptr(), 1, 0, 0),
            sinew_status::NullParameter
        );
        let too_many = vec![refs[0]; SINEW_MAX_PLAYER_CLIPS + 1];
        assert_eq!(
            sinew_player_init(&mut p, too_many.as_ptr(), too_many.len(), 0, 0),
            sinew_status::CapacityExceeded
        );
        assert_eq!(
            sinew_player_set_speed(&mut p, f32::NAN),
            sinew_status::InvalidArgument
        );
        assert_eq!(
            sinew_player_set_paused(&mut p, 2),
            sinew_status::InvalidArgument
        );
        assert_eq!(
            sinew_player_seek(&mut p, refs.as_ptr(), 1, f32::INFINITY),
            sinew_status::InvalidArgument
        );
        for t in [
            fade_to(SINEW_FADE_LINEAR, -1.0),
            fade_to(7, 0.2),
            inertialize(SINEW_DECAY_QUINTIC, 0.0, 0.0),
            inertialize(SINEW_DECAY_SPRING, 0.2, f32::NAN),
        ] {
            assert_eq!(
                sinew_player_play(&mut p, refs.as_ptr(), 1, 0, 0, &t),
                sinew_status::InvalidArgument
            );
        }
        assert_eq!(
            sinew_player_play(&mut p, refs.as_ptr(), 1, 0, 0, std::ptr::null()),
            sinew_status::NullParameter
        );
        assert_eq!(p, before);
        // Changed words are refused, whatever the call.
        let mut bad = p;
        bad.words[SINEW_PLAYER_WORDS - 1] = 5;
        assert_eq!(
            sinew_player_set_speed(&mut bad, 1.0),
            sinew_status::InvalidData
        );
        let mut info = sinew_player_info::default();
        assert_eq!(
            sinew_player_get_info(&bad, &mut info),
            sinew_status::InvalidData
        );
        // Update: a short output, NaN dt, a root past the skeleton.
        let n = skel.soa_count();
        let mut sizes = sinew_player_sizes::default();
        sinew_player_buffer_sizes(n, &mut sizes);
        let mk = |len: usize| vec![SoaTransform::IDENTITY; len];
        let (mut s, mut hi, mut sc, mut out) = (
            mk(sizes.sources),
            mk(sizes.history),
            mk(sizes.scratch),
            mk(n),
        );
        let mut ib = vec![
            sinew_inertial_block {
                opaque: [[0.0; 4]; 18]
            };
            sizes.inertial
        ];
        let bufs = sinew_player_buffers {
            sources: s.as_mut_ptr().cast(),
            sources_len: s.len(),
            history: hi.as_mut_ptr().cast(),
            history_len: hi.len(),
            inertial: ib.as_mut_ptr(),
            inertial_len: ib.len(),
            scratch: sc.as_mut_ptr().cast(),
            scratch_len: sc.len(),
        };
        let mut report = sinew_player_report {
            edges_written: 99,
            ..Default::default()
        };
        let rest = skel.rest_pose();
        let mut call = |dt: f32, out_len: usize, root: i32, p: &mut sinew_player| {
            sinew_player_update(
                p,
                dt,
                refs.as_ptr(),
                1,
                std::ptr::null(),
                rest.as_ptr().cast(),
                n,
                root,
                &bufs,
                out.as_mut_ptr().cast(),
                out_len,
                std::ptr::null_mut(),
                0,
                &mut report,
            )
        };
        assert_eq!(call(f32::NAN, n, 0, &mut p), sinew_status::InvalidArgument);
        assert_eq!(call(-1.0, n, 0, &mut p), sinew_status::InvalidArgument);
        assert_eq!(call(0.1, n - 1, 0, &mut p), sinew_status::BadLength);
        assert_eq!(call(0.1, n, 4 * n as i32, &mut p), sinew_status::OutOfRange);
        assert_eq!(call(0.1, n, -2, &mut p), sinew_status::OutOfRange);
        assert_eq!(p, before);
        assert_eq!(call(0.1, n, -1, &mut p), sinew_status::Ok);
        assert_ne!(p, before);
        assert_eq!(report.edges_written, 0);
    }
}
