//! An ozz-animation animation archive with the skeleton archive it is
//! played on: input = skeleton length (u32, little endian), skeleton
//! archive, animation archive. When the skeleton imports, the animation
//! importer (at 30 Hz) returns an error or a clip that passes
//! `check_imported_clip`.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use sinew_std::import::ozz;

fuzz_target!(|data: &[u8]| {
    let mut input = sinew_fuzz::Input::new(data);
    let skeleton_len = input.u32() as usize;
    let skeleton_bytes = input.take(skeleton_len);
    let animation = input.rest();
    let name = Path::new("fuzz.ozz");
    let Ok((skeleton, map)) = ozz::skeleton_from_slice(skeleton_bytes, name) else {
        return;
    };
    let opts = ozz::OzzOptions {
        sample_rate: 30.0,
        ..ozz::OzzOptions::default()
    };
    if let Ok(clip) = ozz::animation_from_slice(animation, name, &skeleton, &map, &opts) {
        sinew_fuzz::check_imported_clip(&skeleton.view(), &clip.view(), "ozz clip");
    }
});
