//! BVH text: the importer returns an error or an asset that passes
//! `check_asset`. The input's length picks `end_sites` (even: End Sites
//! become joints, the default; odd: they are parsed and dropped).
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use sinew_std::import::bvh::{self, BvhOptions};

fuzz_target!(|data: &[u8]| {
    let opts = BvhOptions {
        end_sites: data.len().is_multiple_of(2),
        ..BvhOptions::default()
    };
    if let Ok(asset) = bvh::from_slice(data, Path::new("fuzz.bvh"), &opts) {
        sinew_fuzz::check_asset(&asset);
    }
});
