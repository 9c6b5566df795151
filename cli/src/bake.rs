//! `sinew bake`: a skinned mesh's clip baked to vertex animation files a
//! GPU engine loads (a raw `f32` file, 16-bit position and normal PNGs, a
//! JSON sidecar with the bounds and the errors), with the errors against
//! live skinning printed.

use std::error::Error as StdError;
use std::path::{Path, PathBuf};

use sinew_std::bake::{self, BakeOptions, BakeReport, Channel, LiveSkin, NormalSource};
use sinew_std::import::gltf::{self, GltfOptions};

use crate::demo;

type Res<T> = Result<T, Box<dyn StdError>>;

/// The file baked when none is given, relative to the working directory
/// (the repository root): a skinned fox with three clips.
pub const DEFAULT_GLTF: &str = "../shared/data/gltf/khronos-gltf-samples/Fox.glb";

/// `sinew bake` arguments.
#[derive(clap::Args, Debug, Clone)]
pub struct BakeArgs {
    /// A glTF/GLB file with a skinned mesh and a clip (default: the Fox
    /// from ../shared/data).
    pub file: Option<PathBuf>,
    /// Clip to bake (default: the first).
    #[arg(long)]
    pub clip: Option<String>,
    /// Mesh to bake (default: the first skinned mesh).
    #[arg(long)]
    pub mesh: Option<String>,
    /// Rows per second of clip.
    #[arg(long, default_value_t = bake::DEFAULT_RATE)]
    pub rate: f32,
    /// Do not bake normals.
    #[arg(long)]
    pub no_normals: bool,
    /// Memory budget of the import and of the bake, each, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = demo::DEFAULT_MEMORY_BUDGET_MIB, value_parser = demo::memory_budget_range())]
    pub memory_budget: u64,
    /// Output directory (created if missing).
    #[arg(short, long = "out", visible_alias = "output")]
    pub out: PathBuf,
}

/// What `sinew bake` did.
#[derive(Clone, Debug, PartialEq)]
pub struct BakeSummary {
    /// The source file.
    pub file: PathBuf,
    /// Mesh and clip names.
    pub mesh: String,
    /// See [`BakeSummary::mesh`].
    pub clip: String,
    /// Rows, columns, rows per second.
    pub frames: usize,
    /// See [`BakeSummary::frames`].
    pub vertices: usize,
    /// See [`BakeSummary::frames`].
    pub rate: f32,
    /// Where the normals came from.
    pub normals: NormalSource,
    /// The errors against live skinning.
    pub report: BakeReport,
    /// The files written.
    pub written: Vec<PathBuf>,
    /// The file's length unit.
    pub units: &'static str,
}

fn file_stem(s: &str) -> String {
    let s: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() {
        "bake".into()
    } else {
        s
    }
}

/// Bakes as `args` says and writes the files; returns what it did.
///
/// # Errors
/// No file given and no default data, an import error, no skinned mesh,
/// no clip (or no clip or mesh of the given name), a bake error (zero
/// rate, over the memory budget) or a write error.
pub fn run(args: &BakeArgs) -> Res<BakeSummary> {
    let file = match &args.file {
        Some(f) => f.clone(),
        None if Path::new(DEFAULT_GLTF).exists() => PathBuf::from(DEFAULT_GLTF),
        None => {
            return Err(format!(
                "no file given and {DEFAULT_GLTF} is absent; the procedural humanoid has no mesh to bake: pass a glTF/GLB with a skinned mesh and a clip"
            )
            .into())
        }
    };
    let budget = demo::memory_budget_bytes(args.memory_budget);
    let opts = GltfOptions {
        memory_budget: budget,
        ..GltfOptions::default()
    };
    let asset = gltf::load(&file, &opts)?;
    for w in &asset.warnings {
        eprintln!("sinew: warning: {}: {w}", file.display());
    }
    let mesh = match &args.mesh {
        Some(name) => asset
            .meshes
            .iter()
            .find(|m| &m.name == name)
            .ok_or_else(|| {
                let names: Vec<&str> = asset.meshes.iter().map(|m| m.name.as_str()).collect();
                format!(
                    "{}: no mesh named {name:?} (meshes: {:?})",
                    file.display(),
                    names
                )
            })?,
        None => asset
            .meshes
            .iter()
            .find(|m| !m.joints.is_empty())
            .ok_or_else(|| format!("{}: no skinned mesh to bake", file.display()))?,
    };
    let clip = match &args.clip {
        Some(name) => asset.clip(name)?,
        None => asset
            .clips
            .first()
            .ok_or_else(|| format!("{}: no clip to bake", file.display()))?,
    };
    let skeleton = asset.skeleton.view();
    let view = clip.view();
    let bake_opts = BakeOptions {
        rate: args.rate,
        normals: !args.no_normals,
        memory_budget: budget,
    };
    let baked = bake::bake(&skeleton, &view, &clip.name, mesh, &bake_opts)?;
    let quantized = baked.quantize();
    let mut live = LiveSkin::new(&skeleton, &view, mesh, bake_opts.normals)?;
    let report = bake::measure(&baked, &quantized, &mut live)?;

    std::fs::create_dir_all(&args.out)
        .map_err(|e| format!("cannot create {}: {e}", args.out.display()))?;
    let stem = file_stem(&format!("{}-{}", mesh.name, clip.name));
    let path = |ext: &str| args.out.join(format!("{stem}.{ext}"));
    let write = |p: &Path, bytes: &[u8]| {
        std::fs::write(p, bytes).map_err(|e| format!("cannot write {}: {e}", p.display()))
    };
    let mut written = Vec::new();
    let raw = path("vat");
    write(&raw, &baked.to_raw())?;
    written.push(raw);
    let mut png_names = Vec::new();
    for (channel, ext) in [
        (Channel::Positions, "positions.png"),
        (Channel::Normals, "normals.png"),
    ] {
        if channel == Channel::Normals && quantized.normals.is_empty() {
            continue;
        }
        let mut bytes = Vec::new();
        quantized.write_png(channel, &mut bytes)?;
        let p = path(ext);
        write(&p, &bytes)?;
        png_names.push(format!("{stem}.{ext}"));
        written.push(p);
    }
    let b = baked.bounds;
    let sidecar = serde_json::json!({
        "format": "sinew vertex animation bake",
        "source": file.display().to_string(),
        "mesh": mesh.name,
        "clip": clip.name,
        "units": asset.units,
        "frames": baked.frames,
        "vertices": baked.vertices,
        "rate_hz": baked.rate,
        "duration_s": baked.duration,
        "layout": "row f = clip time f / rate_hz (last row = duration_s), column v = vertex v, RGB = x y z",
        "raw": format!("{stem}.vat"),
        "positions_png": png_names.first(),
        "normals_png": png_names.get(1),
        "normals_from": format!("{:?}", baked.normal_source),
        "bounds_min": b.min,
        "bounds_max": b.max,
        "decode_position": "p = bounds_min + (bounds_max - bounds_min) * q / 65535",
        "decode_normal": "n = normalize(2 * q / 65535 - 1)",
        "error": {
            "quantization_position": report.quantization_position,
            "quantization_normal_deg": report.quantization_normal_deg,
            "mid_frame_position": report.mid_position,
            "mid_frame_normal_deg": report.mid_normal_deg,
            "mid_frame_position_png": report.mid_position_quantized,
            "mid_frame_normal_png_deg": report.mid_normal_quantized_deg,
        },
    });
    let json = path("json");
    write(&json, serde_json::to_string_pretty(&sidecar)?.as_bytes())?;
    written.push(json);
    Ok(BakeSummary {
        file,
        mesh: mesh.name.clone(),
        clip: clip.name.clone(),
        frames: baked.frames,
        vertices: baked.vertices,
        rate: baked.rate,
        normals: baked.normal_source,
        report,
        written,
        units: asset.units,
    })
}

/// Length in the report's unit: millimetres when the file is in metres.
fn length(x: f32, units: &str) -> String {
    if units == "metres" {
        format!("{:.3} mm", x * 1000.0)
    } else {
        format!("{x:.6} {units}")
    }
}

/// `sinew bake`: runs [`run`] and prints one line per figure.
///
/// # Errors
/// Those of [`run`].
pub fn bake_command(args: &BakeArgs, out: &dyn Fn(&str)) -> Res<()> {
    let s = run(args)?;
    let r = &s.report;
    let u = s.units;
    out(&format!(
        "bake: {} mesh {:?} clip {:?}: {} frames x {} vertices at {:.3} Hz, normals {:?}",
        s.file.display(),
        s.mesh,
        s.clip,
        s.frames,
        s.vertices,
        s.rate,
        s.normals
    ));
    out(&format!(
        "rows vs live skinning: max {}",
        length(r.frame_position, u)
    ));
    out(&format!(
        "16-bit PNG quantization: max position error {} (half step {}), max normal angle {:.4} deg",
        length(r.quantization_position, u),
        length(r.half_step, u),
        r.quantization_normal_deg
    ));
    out(&format!(
        "mid-frames (rows lerped) vs live skinning: f32 max {} / {:.3} deg; PNG max {} / {:.3} deg",
        length(r.mid_position, u),
        r.mid_normal_deg,
        length(r.mid_position_quantized, u),
        r.mid_normal_quantized_deg
    ));
    for p in &s.written {
        out(&format!("wrote {}", p.display()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A GLB with one joint, a skin and a three-vertex skinned mesh, and
    /// no animation.
    fn skinned_glb_without_clips() -> Vec<u8> {
        let mut bin = Vec::new();
        for p in [[0.0f32, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]] {
            p.iter()
                .for_each(|x| bin.extend_from_slice(&x.to_le_bytes()));
        }
        for _ in 0..3 {
            [0u16; 4]
                .iter()
                .for_each(|x| bin.extend_from_slice(&x.to_le_bytes()));
        }
        for _ in 0..3 {
            [1.0f32, 0.0, 0.0, 0.0]
                .iter()
                .for_each(|x| bin.extend_from_slice(&x.to_le_bytes()));
        }
        let identity = [
            1.0f32, 0., 0., 0., 0., 1., 0., 0., 0., 0., 1., 0., 0., 0., 0., 1.,
        ];
        identity
            .iter()
            .for_each(|x| bin.extend_from_slice(&x.to_le_bytes()));
        let json = r#"{"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0,1]}],
"nodes":[{"name":"root"},{"mesh":0,"skin":0}],
"skins":[{"joints":[0],"inverseBindMatrices":3}],
"meshes":[{"name":"tri","primitives":[{"attributes":{"POSITION":0,"JOINTS_0":1,"WEIGHTS_0":2},"mode":4}]}],
"buffers":[{"byteLength":172}],
"bufferViews":[{"buffer":0,"byteOffset":0,"byteLength":36},{"buffer":0,"byteOffset":36,"byteLength":24},{"buffer":0,"byteOffset":60,"byteLength":48},{"buffer":0,"byteOffset":108,"byteLength":64}],
"accessors":[{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3","min":[0,0,0],"max":[1,1,0]},{"bufferView":1,"componentType":5123,"count":3,"type":"VEC4"},{"bufferView":2,"componentType":5126,"count":3,"type":"VEC4"},{"bufferView":3,"componentType":5126,"count":1,"type":"MAT4"}]}"#;
        let mut j = json.as_bytes().to_vec();
        while !j.len().is_multiple_of(4) {
            j.push(b' ');
        }
        let total = 12 + 8 + j.len() + 8 + bin.len();
        let mut glb = Vec::new();
        glb.extend_from_slice(b"glTF");
        glb.extend_from_slice(&2u32.to_le_bytes());
        glb.extend_from_slice(&(total as u32).to_le_bytes());
        glb.extend_from_slice(&(j.len() as u32).to_le_bytes());
        glb.extend_from_slice(b"JSON");
        glb.extend_from_slice(&j);
        glb.extend_from_slice(&(bin.len() as u32).to_le_bytes());
        glb.extend_from_slice(b"BIN\0");
        glb.extend_from_slice(&bin);
        glb
    }

    fn args(file: PathBuf, out: PathBuf) -> BakeArgs {
        BakeArgs {
            file: Some(file),
            clip: None,
            mesh: None,
            rate: bake::DEFAULT_RATE,
            no_normals: false,
            memory_budget: demo::DEFAULT_MEMORY_BUDGET_MIB,
            out,
        }
    }

    #[test]
    fn a_file_without_a_clip_or_a_file_at_all_is_an_error() {
        let dir = std::env::temp_dir().join(format!("sinew-bake-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let glb = dir.join("tri.glb");
        std::fs::write(&glb, skinned_glb_without_clips()).unwrap();
        let e = run(&args(glb.clone(), dir.join("out")))
            .unwrap_err()
            .to_string();
        assert!(e.contains("no clip to bake"), "{e}");
        let mut named = args(glb, dir.join("out"));
        named.mesh = Some("nope".into());
        let e = run(&named).unwrap_err().to_string();
        assert!(e.contains("no mesh named \"nope\""), "{e}");
        let e = run(&args(dir.join("missing.glb"), dir.join("out"))).unwrap_err();
        assert!(e.to_string().contains("missing.glb"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_fox_bakes_to_four_files_and_a_zero_rate_is_refused() {
        // Tests run in the crate's folder; the default path is relative to
        // the repository root.
        let fox = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(DEFAULT_GLTF);
        if !fox.exists() {
            eprintln!("skipped: {} not found", fox.display());
            return;
        }
        let dir = std::env::temp_dir().join(format!("sinew-bake-fox-{}", std::process::id()));
        let mut a = args(fox, dir.clone());
        a.clip = Some("Walk".into());
        let s = run(&a).unwrap();
        assert_eq!((s.mesh.as_str(), s.clip.as_str()), ("fox1", "Walk"));
        assert_eq!((s.frames, s.vertices), (22, 1728));
        assert_eq!(s.normals, NormalSource::Computed);
        assert_eq!(s.written.len(), 4);
        assert!(s.written.iter().all(|p| p.exists()));
        assert!(s.report.quantization_position <= s.report.half_step * 1.001);
        a.rate = 0.0;
        let e = run(&a).unwrap_err().to_string();
        assert!(e.contains("rate 0"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
