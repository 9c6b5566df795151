//! glTF JSON or GLB bytes (told apart by the GLB magic), with no folder to
//! resolve external files in: the importer returns an error or an asset
//! that passes `check_asset` (meshes included). The input's length picks
//! four influences per vertex (even) or eight (odd).
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use sinew_std::import::gltf::{self, GltfOptions};

fuzz_target!(|data: &[u8]| {
    let name = if data.starts_with(b"glTF") {
        "fuzz.glb"
    } else {
        "fuzz.gltf"
    };
    let opts = GltfOptions {
        eight_influences: !data.len().is_multiple_of(2),
        ..GltfOptions::default()
    };
    if let Ok(asset) = gltf::from_slice(data, Path::new(name), None, &opts) {
        sinew_fuzz::check_asset(&asset);
    }
});
