//! Loading files by type: glTF/GLB, BVH, and ozz skeleton + animation archives.

use std::path::{Path, PathBuf};

use super::{bvh, gltf, ozz, read_file, Asset, ImportError, Location, DEFAULT_MEMORY_BUDGET};

/// Options shared by every importer the dispatcher calls.
#[derive(Clone, Copy, Debug)]
pub struct LoadOptions {
    /// Uniform sample rate for resampled clips (glTF keys, ozz keyframes);
    /// `None` keeps a glTF's own rate when its keys are uniform, else 30 Hz.
    pub sample_rate: Option<f32>,
    /// Length scale applied to BVH files (CMU BVH is in centimetre-like units).
    pub bvh_scale: f32,
    /// Make each BVH End Site a joint (see [`bvh::BvhOptions::end_sites`]).
    pub bvh_end_sites: bool,
    /// Keep up to eight skinning influences per glTF vertex instead of four
    /// (see [`gltf::GltfOptions::eight_influences`]).
    pub eight_influences: bool,
    /// Bytes each asset (one glTF or BVH file, or one ozz skeleton with the
    /// animations after it) may allocate for its buffers, clips, float
    /// tracks and meshes; an import that would exceed it fails before
    /// allocating. [`DEFAULT_MEMORY_BUDGET`] (512 MiB) by default.
    pub memory_budget: usize,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            sample_rate: None,
            bvh_scale: 0.01,
            bvh_end_sites: true,
            eight_influences: false,
            memory_budget: DEFAULT_MEMORY_BUDGET,
        }
    }
}

/// The kind of a file, from its extension and (for ozz) its type tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// `.gltf` or `.glb`.
    Gltf,
    /// `.bvh`.
    Bvh,
    /// An ozz archive whose type tag is `ozz-skeleton`.
    OzzSkeleton,
    /// An ozz archive whose type tag is `ozz-animation`.
    OzzAnimation,
}

/// Works out what `path` is.
///
/// # Errors
/// Unknown extension, unreadable file, or an `.ozz` file of another type.
pub fn file_kind(path: &Path) -> Result<FileKind, ImportError> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    match ext.as_str() {
        "gltf" | "glb" => Ok(FileKind::Gltf),
        "bvh" => Ok(FileKind::Bvh),
        "ozz" => {
            let bytes = read_file(path)?;
            // 1-byte endianness tag, then a NUL-terminated type tag.
            let tag_end = bytes.iter().skip(1).position(|&b| b == 0).map(|p| p + 1);
            match tag_end.map(|e| &bytes[1..e]) {
                Some(b"ozz-skeleton") => Ok(FileKind::OzzSkeleton),
                Some(b"ozz-animation") => Ok(FileKind::OzzAnimation),
                _ => Err(ImportError::new(
                    path,
                    Location::Byte(1),
                    "not an ozz skeleton or animation archive (type tag)",
                )),
            }
        }
        _ => Err(ImportError::new(
            path,
            Location::File,
            "unknown file type (expected .gltf, .glb, .bvh or .ozz)",
        )),
    }
}

/// Loads every file: each glTF and BVH file is one asset; ozz animations join
/// the ozz skeleton given before them (at least one skeleton must come first).
///
/// # Errors
/// The first file that fails to import, or an ozz animation with no skeleton before it.
pub fn load_files(paths: &[PathBuf], opts: &LoadOptions) -> Result<Vec<Asset>, ImportError> {
    let mut assets = Vec::new();
    let mut i = 0;
    while i < paths.len() {
        let path = &paths[i];
        i += 1;
        match file_kind(path)? {
            FileKind::Gltf => assets.push(gltf::load(
                path,
                &gltf::GltfOptions {
                    sample_rate: opts.sample_rate,
                    eight_influences: opts.eight_influences,
                    memory_budget: opts.memory_budget,
                },
            )?),
            FileKind::Bvh => assets.push(bvh::load(
                path,
                &bvh::BvhOptions {
                    scale: opts.bvh_scale,
                    end_sites: opts.bvh_end_sites,
                    memory_budget: opts.memory_budget,
                },
            )?),
            FileKind::OzzSkeleton => {
                let mut animations: Vec<&Path> = Vec::new();
                while i < paths.len() && file_kind(&paths[i])? == FileKind::OzzAnimation {
                    animations.push(&paths[i]);
                    i += 1;
                }
                let ozz_opts = ozz::OzzOptions {
                    sample_rate: opts.sample_rate.unwrap_or(ozz::DEFAULT_SAMPLE_RATE),
                    memory_budget: opts.memory_budget,
                };
                assets.push(ozz::load(path, &animations, &ozz_opts)?);
            }
            FileKind::OzzAnimation => {
                return Err(ImportError::new(
                    path,
                    Location::File,
                    "an ozz animation needs its skeleton archive named before it",
                ))
            }
        }
    }
    Ok(assets)
}
