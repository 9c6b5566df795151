//! Writing an imported asset's runtime containers to files, so that a
//! program that links only the core (or the C library) can load them:
//! the skeleton (`.sinewskl`), each skinned mesh (`.sinewmsh`) and a
//! clip's float tracks (`.sinewtrk`, [`float_track_set`]). Clips are
//! written by the compressor ([`crate::compress`]).

use std::path::{Path, PathBuf};

use sinew_core::track::curve::Interpolation;
use sinew_core::track::store::{track_set_size, write_track_set, Encoding, TrackDesc, TrackKind};

use crate::assets::{AlignedBytes, OwnedClip};
use crate::import::Asset;

/// A clip's float tracks (morph-target weights, ozz float tracks) as one
/// track set container (`SINEWTRK`, [`sinew_core::track::store`]): a raw
/// linear `f32` track per float track, keyed at the clip's frame times
/// (frame `i` at `i / sample_rate` seconds), in the clip's order and with
/// its names, so a program that links only the core or the C library
/// plays them beside the compressed clip. `None` when the clip has no
/// float tracks.
///
/// # Errors
/// What [`write_track_set`] refuses (a value that is not finite, a name
/// longer than the container allows), named with the clip.
pub fn float_track_set(clip: &OwnedClip) -> Result<Option<AlignedBytes>, String> {
    let tracks = clip.float_tracks();
    if tracks.is_empty() {
        return Ok(None);
    }
    let rate = clip.sample_rate();
    let times: Vec<f32> = (0..clip.frame_count()).map(|i| i as f32 / rate).collect();
    let descs: Vec<TrackDesc<'_>> = tracks
        .iter()
        .map(|t| TrackDesc {
            name: &t.name,
            target: None,
            kind: TrackKind::Float,
            interpolation: Interpolation::Linear,
            times: &times,
            values: &t.values,
            encoding: Encoding::Raw,
        })
        .collect();
    let err = |e| format!("clip '{}': float tracks: {e}", clip.name);
    let mut out = AlignedBytes::zeroed(track_set_size(&descs).map_err(err)?);
    write_track_set(&descs, out.as_mut_slice()).map_err(err)?;
    Ok(Some(out))
}

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
    path_stem(&asset.source)
}

/// A path's file stem, file-safe (`clip` for a path without one).
pub(crate) fn path_stem(p: &std::path::Path) -> String {
    file_safe(p.file_stem().and_then(|s| s.to_str()).unwrap_or("clip"))
}

/// One distinct output stem per asset, in order: [`asset_stem`] where it is
/// unique among `assets`; where several files share a stem
/// (`daz-friendly/02_01.bvh` and `mb-friendly/02_01.bvh`), their folders'
/// names are prefixed one level at a time until the stems differ, and an
/// index is appended as a last resort (the same file given twice).
#[must_use]
pub fn asset_stems(assets: &[Asset]) -> Vec<String> {
    let sources: Vec<&std::path::Path> = assets.iter().map(|a| a.source.as_path()).collect();
    unique_stems(&sources)
}

fn unique_stems(sources: &[&std::path::Path]) -> Vec<String> {
    use std::collections::HashMap;
    // Every folder of each path, innermost first, file-safe.
    let folders: Vec<Vec<String>> = sources
        .iter()
        .map(|p| {
            p.parent()
                .into_iter()
                .flat_map(std::path::Path::ancestors)
                .filter_map(|a| a.file_name().and_then(|n| n.to_str()))
                .map(file_safe)
                .collect()
        })
        .collect();
    let mut stems: Vec<String> = sources.iter().map(|p| path_stem(p)).collect();
    let mut depth = vec![0usize; sources.len()];
    loop {
        let mut count: HashMap<&str, usize> = HashMap::new();
        for s in &stems {
            *count.entry(s.as_str()).or_default() += 1;
        }
        let clashing: Vec<usize> = (0..stems.len())
            .filter(|&i| count[stems[i].as_str()] > 1 && depth[i] < folders[i].len())
            .collect();
        if clashing.is_empty() {
            break;
        }
        for i in clashing {
            stems[i] = format!("{}_{}", folders[i][depth[i]], stems[i]);
            depth[i] += 1;
        }
    }
    // Whatever still clashes (the same path twice, or folders that agree
    // all the way up) gets its position among the clashing ones.
    let mut seen: HashMap<String, usize> = HashMap::new();
    for s in &mut stems {
        let n = seen.entry(s.clone()).or_default();
        *n += 1;
        if *n > 1 {
            *s = format!("{s}_{n}");
        }
    }
    stems
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

#[cfg(test)]
mod tests {
    #[test]
    fn shared_stems_get_their_folders() {
        use std::path::Path;
        let paths = [
            Path::new("cmu/daz-friendly/02_01.bvh"),
            Path::new("cmu/mb-friendly/02_01.bvh"),
            Path::new("cmu/mb-friendly/02_02.bvh"),
            Path::new("a/x/walk.glb"),
            Path::new("b/x/walk.glb"),
            Path::new("run.bvh"),
            Path::new("run.bvh"),
        ];
        assert_eq!(
            super::unique_stems(&paths),
            [
                "daz-friendly_02_01",
                "mb-friendly_02_01",
                "02_02",
                "a_x_walk",
                "b_x_walk",
                "run",
                "run_2",
            ]
        );
    }

    use sinew_core::track::store::TrackSet;
    use sinew_core::SoaTransform;

    use super::float_track_set;
    use crate::assets::{FloatTrack, OwnedClip};

    fn clip(tracks: Vec<FloatTrack>) -> OwnedClip {
        OwnedClip::new("blink", 24.0, 1, vec![SoaTransform::IDENTITY; 5])
            .unwrap()
            .with_float_tracks(tracks)
            .unwrap()
    }

    #[test]
    fn float_tracks_play_back_their_frames_exactly_and_linearly_between() {
        let tracks = vec![
            FloatTrack {
                name: "morph/Face/0".into(),
                values: vec![0.0, 0.25, 1.0, 0.5, 0.0],
            },
            FloatTrack {
                name: "morph/Face/1".into(),
                values: vec![1.0, 0.0, 0.0, 0.0, 0.75],
            },
        ];
        let bytes = float_track_set(&clip(tracks.clone())).unwrap().unwrap();
        let set = TrackSet::from_bytes(bytes.as_slice()).unwrap();
        assert_eq!(set.len(), 2);
        for (i, t) in tracks.iter().enumerate() {
            assert_eq!(set.find(&t.name), Some(i));
            let typed = set.track(i).unwrap().typed::<f32>().unwrap();
            for (f, v) in t.values.iter().enumerate() {
                assert_eq!(typed.sample(f as f32 / 24.0), *v, "{} frame {f}", t.name);
            }
            // Half-way between frames 1 and 2.
            let mid = 0.5 * (t.values[1] + t.values[2]);
            assert!((typed.sample(1.5 / 24.0) - mid).abs() < 1e-6);
        }
    }

    #[test]
    fn a_clip_without_float_tracks_has_no_track_set() {
        assert!(float_track_set(&clip(Vec::new())).unwrap().is_none());
    }
}
