//! `from_validated_bytes` on skeletons, raw clips and compressed clips: the
//! O(1) re-view of bytes that `from_bytes` accepted gives the same view,
//! still rejects a bad header or layout with the same error, and skips only
//! the linear scans (so a value changed after validation is read, not
//! refused, and never read out of bounds).

#[path = "../support/mod.rs"]
mod support;

use sinew_core::clip::{RawClip, TimeMode};
use sinew_core::compressed::CompressedClip;
use sinew_core::{Error, Skeleton, SoaTransform};
use sinew_std::assets::AlignedBytes;
use sinew_std::compress::{compress, CompressOptions};

fn pose(blocks: usize) -> Vec<SoaTransform> {
    vec![SoaTransform::IDENTITY; blocks]
}

/// The same checks for any container: equal views on valid bytes, and the
/// header errors of `from_bytes` on a bad magic and a truncated copy.
fn header_errors_match(
    bytes: &[u8],
    checked: impl Fn(&[u8]) -> Option<Error>,
    trusted: impl Fn(&[u8]) -> Option<Error>,
) {
    let mut bad_magic = AlignedBytes::copy_from(bytes);
    bad_magic.as_mut_slice()[0] ^= 0xFF;
    let truncated = AlignedBytes::copy_from(&bytes[..bytes.len() / 2]);
    for b in [bad_magic.as_slice(), truncated.as_slice()] {
        let (c, t) = (checked(b), trusted(b));
        assert!(c.is_some(), "from_bytes accepted a corrupt header");
        assert_eq!(c, t, "both constructors report the same header error");
    }
}

#[test]
fn skeleton_rereads_the_header_only() {
    let h = support::humanoid();
    let bytes = h.skeleton.bytes();
    let (a, b) = (
        Skeleton::from_bytes(bytes).unwrap(),
        Skeleton::from_validated_bytes(bytes).unwrap(),
    );
    assert_eq!(a.parents(), b.parents());
    assert_eq!(a.rest_pose(), b.rest_pose());
    assert_eq!(a.joint_name(5), b.joint_name(5));
    header_errors_match(
        bytes,
        |b| Skeleton::from_bytes(b).err(),
        |b| Skeleton::from_validated_bytes(b).err(),
    );
}

#[test]
fn raw_clip_skips_the_finiteness_scan_only() {
    let h = support::humanoid();
    let skel = h.skeleton.view();
    let bytes = h.clips[0].to_bytes();
    let (a, b) = (
        RawClip::from_bytes(bytes.as_slice()).unwrap(),
        RawClip::from_validated_bytes(bytes.as_slice()).unwrap(),
    );
    assert_eq!(a.name(), b.name());
    let (mut pa, mut pb) = (pose(skel.soa_count()), pose(skel.soa_count()));
    a.sample(0.37, TimeMode::Loop, &mut pa).unwrap();
    b.sample(0.37, TimeMode::Loop, &mut pb).unwrap();
    assert_eq!(pa, pb);
    header_errors_match(
        bytes.as_slice(),
        |b| RawClip::from_bytes(b).err(),
        |b| RawClip::from_validated_bytes(b).err(),
    );

    // A NaN written into the keys after validation: `from_bytes` refuses it,
    // the re-view reads it (documented) and sampling stays in bounds.
    let mut changed = AlignedBytes::copy_from(bytes.as_slice());
    let at = (changed.len() / 2) & !3;
    changed.as_mut_slice()[at..at + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    assert!(matches!(
        RawClip::from_bytes(changed.as_slice()),
        Err(Error::NonFinite { .. })
    ));
    let c = RawClip::from_validated_bytes(changed.as_slice()).unwrap();
    for i in 0..=40 {
        c.sample(i as f32 * 0.05, TimeMode::Clamp, &mut pb).unwrap();
    }
}

#[test]
fn compressed_clip_skips_the_segment_checks_only() {
    let h = support::humanoid();
    let skel = h.skeleton.view();
    let (c, _) = compress(&skel, &h.clips[0].view(), &CompressOptions::default()).unwrap();
    let bytes = AlignedBytes::copy_from(c.bytes());
    let (a, b) = (
        CompressedClip::from_bytes(bytes.as_slice()).unwrap(),
        CompressedClip::from_validated_bytes(bytes.as_slice()).unwrap(),
    );
    let (mut pa, mut pb) = (pose(skel.soa_count()), pose(skel.soa_count()));
    a.sample_with_rest(0.37, TimeMode::Loop, skel.rest_pose(), &mut pa)
        .unwrap();
    b.sample_with_rest(0.37, TimeMode::Loop, skel.rest_pose(), &mut pb)
        .unwrap();
    assert_eq!(pa, pb);
    header_errors_match(
        bytes.as_slice(),
        |b| CompressedClip::from_bytes(b).err(),
        |b| CompressedClip::from_validated_bytes(b).err(),
    );

    // Every byte past the header flipped in turn: the re-view either
    // refuses the layout or samples without reading out of bounds.
    for at in (64..bytes.len()).step_by(7) {
        let mut changed = AlignedBytes::copy_from(bytes.as_slice());
        changed.as_mut_slice()[at] ^= 0x5A;
        if let Ok(v) = CompressedClip::from_validated_bytes(changed.as_slice()) {
            let _ = v.sample_with_rest(0.5, TimeMode::Loop, skel.rest_pose(), &mut pb);
        }
    }
}
