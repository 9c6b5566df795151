//! Writes the containers the frame loop plays from flash: the procedural
//! humanoid's skeleton and its walk, jog and run compressed with the
//! compressor's default options (0.01 cm within a 3 cm shell), as
//! `sinew compress` writes them. `lib.rs` includes them with
//! `include_bytes!`, so they land in `.rodata` and are viewed in place,
//! and the blocks of the largest clip's playback cache, which sizes the
//! caches' static RAM.
use std::{env, fs, path::PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let h = sinew_std::Humanoid::default_rate();
    fs::write(out.join("humanoid.sinewskl"), h.skeleton.bytes()).expect("write the skeleton");
    let clips = h.compressed_clips().expect("the procedural clips compress");
    for (name, clip) in ["walk", "jog", "run"].iter().zip(&clips) {
        fs::write(out.join(format!("{name}.sinewcmp")), clip.bytes()).expect("write a clip");
    }
    let blocks = clips
        .iter()
        .map(|c| c.view().cache_blocks())
        .max()
        .unwrap_or(0);
    fs::write(
        out.join("cache_blocks.rs"),
        format!(
            "/// Blocks of one clip's playback cache: three decoded key frames of\n\
             /// the largest clip's animated tracks (`CompressedClip::cache_blocks`,\n\
             /// counted by `build.rs`), so that sequential playback decodes two\n\
             /// key frames per pass of the decoder.\n\
             pub const CACHE_BLOCKS: usize = {blocks};\n"
        ),
    )
    .expect("write the cache size");
}
