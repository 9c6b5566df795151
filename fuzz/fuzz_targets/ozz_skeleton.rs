//! An ozz-animation skeleton archive: the importer returns an error, or a
//! skeleton that validates again and a joint map that is a permutation of
//! its joints.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use sinew_core::Skeleton;
use sinew_std::import::ozz;

fuzz_target!(|data: &[u8]| {
    let Ok((skeleton, map)) = ozz::skeleton_from_slice(data, Path::new("fuzz.ozz")) else {
        return;
    };
    let view = Skeleton::from_bytes(skeleton.bytes())
        .unwrap_or_else(|e| panic!("imported skeleton does not validate again: {e}"));
    let n = view.joint_count();
    assert_eq!(map.len(), n, "joint map length");
    let mut seen = vec![false; n];
    for (i, &j) in map.iter().enumerate() {
        let j = usize::from(j);
        assert!(
            j < n && !seen[j],
            "joint map entry {i} ({j}) repeats or is out of range"
        );
        seen[j] = true;
    }
});
