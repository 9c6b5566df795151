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
