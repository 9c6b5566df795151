//! Writing an imported asset's runtime containers to files, so that a
//! program that links only the core (or the C library) can load them:
//! the skeleton (`.sinewskl`) and each skinned mesh (`.sinewmsh`). Clips
//! are written by the compressor ([`crate::compress`]).

use std::path::{Path, PathBuf};

use crate::import::Asset;

/// The file names `write_containers` gives an asset's containers, from
/// `stem`: `{stem}.sinewskl`, then `{stem}.{mesh}.sinewmsh` per mesh (the
/// mesh's index when it has no usable name, or when two meshes would get
/// the same name).
#[must_use]
pub fn container_names(asset: &Asset, stem: &str) -> Vec<String> {
    let mut names = vec![format!("{stem}.sinewskl")];
    for (i, mesh) in asset.meshes.iter().enumerate() {
        let safe = file_safe(&mesh.name);
        let mut name = format!("{stem}.{safe}.sinewmsh");
        if safe.is_empty() || names.contains(&name) {
            name = format!("{stem}.mesh{i}.sinewmsh");
        }
        names.push(name);
    }
    names
}

/// Writes the asset's skeleton container and one mesh container per
/// skinned mesh into `dir` (created if missing), named as
/// [`container_names`] says, and returns the paths written, skeleton first.
///
/// # Errors
/// A mesh that does not form a valid container (named with the mesh), or a
/// file or directory that cannot be written.
pub fn write_containers(
    asset: &Asset,
    dir: &Path,
    stem: &str,
) -> Result<Vec<PathBuf>, Box<dyn std::error::Error>> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let names = container_names(asset, stem);
    let mut blobs = vec![asset.skeleton.bytes().to_vec()];
    for mesh in &asset.meshes {
        let bytes = mesh.to_container().map_err(|e| {
            format!(
                "{}: mesh '{}' cannot be written: {e}",
                asset.source.display(),
                mesh.name
            )
        })?;
        blobs.push(bytes.as_slice().to_vec());
    }
    let mut paths = Vec::with_capacity(names.len());
    for (name, bytes) in names.iter().zip(&blobs) {
        let path = dir.join(name);
        std::fs::write(&path, bytes)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        paths.push(path);
    }
    Ok(paths)
}

/// The stem the compressor names an asset's clips after (its file's stem,
/// made file-safe), for [`write_containers`] to put the skeleton and meshes
/// beside them.
#[must_use]
pub fn asset_stem(asset: &Asset) -> String {
    file_safe(
        asset
            .source
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("clip"),
    )
}

/// `name` with every character but ASCII letters, digits, `-` and `_`
/// replaced by `_`.
pub(crate) fn file_safe(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}
