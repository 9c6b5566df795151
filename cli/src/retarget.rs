//! `sinew retarget`: mocap onto another character. Loads a source (BVH or
//! glTF clips) and a target character, builds the retarget map (name
//! tables, equal names, `--pair` overrides; rest bone directions aligned
//! unless `--no-align`), bakes every source clip onto the target (planted
//! feet kept planted unless `--no-feet`), compresses the baked clips as
//! `sinew compress` does and writes the target's skeleton and meshes beside
//! them, plus the map container. Also the side-by-side strips of
//! `sinew render --retarget`: source and target rows over the same times.

use std::error::Error as StdError;
use std::path::{Path, PathBuf};

use sinew_core::retarget::MapOptions;
use sinew_std::compress::Length;
use sinew_std::import::load::{load_files, LoadOptions};
use sinew_std::retarget::{bake, bind_pose_skeleton, BakeOptions, BakeReport, OwnedMap};
use sinew_std::{Asset, OwnedClip};
use tiny_skia::Pixmap;

use crate::chart;
use crate::render::{self, FilmstripOptions};

type Res<T> = Result<T, Box<dyn StdError>>;

/// `sinew retarget` arguments.
#[derive(clap::Args, Debug, Clone)]
pub struct RetargetArgs {
    /// Source clips: a BVH or glTF/GLB file.
    pub source: PathBuf,
    /// Target character: a glTF/GLB file (its skeleton, and its meshes
    /// written beside the clips).
    pub target: PathBuf,
    /// Output directory.
    #[arg(short, long)]
    pub output: PathBuf,
    /// A joint pair `TARGET=SOURCE` that overrides the tables (repeatable);
    /// `TARGET=` leaves the target joint at rest.
    #[arg(long = "pair", value_parser = parse_pair)]
    pub pairs: Vec<(String, String)>,
    /// Keep each target bone's rest direction instead of turning it onto
    /// the source's (T-pose against A-pose).
    #[arg(long)]
    pub no_align: bool,
    /// Do not keep feet that were planted in the source planted (no foot IK).
    #[arg(long)]
    pub no_feet: bool,
    /// Scale applied to BVH lengths (CMU BVH is in centimetre-like units).
    #[arg(long, default_value_t = 0.01)]
    pub bvh_scale: f32,
    /// Largest object-space compression error: a length with m, cm or mm.
    #[arg(long, default_value = "0.01cm", value_parser = Length::parse)]
    pub error: Length,
    /// Also draw source and target side by side to this PNG.
    #[arg(long)]
    pub png: Option<PathBuf>,
}

fn parse_pair(s: &str) -> Result<(String, String), String> {
    let (t, s) = s
        .split_once('=')
        .ok_or_else(|| format!("{s:?} is not TARGET=SOURCE"))?;
    if t.is_empty() {
        return Err("the target joint name is empty".to_string());
    }
    Ok((t.to_string(), s.to_string()))
}

fn load_one(path: &Path, bvh_scale: f32) -> Res<Asset> {
    let opts = LoadOptions {
        bvh_scale,
        ..LoadOptions::default()
    };
    let mut assets = load_files(&[path.to_path_buf()], &opts)?;
    if assets.len() != 1 {
        return Err(format!(
            "{} holds {} assets, expected one",
            path.display(),
            assets.len()
        )
        .into());
    }
    Ok(assets.remove(0))
}

/// The target character, its rest pose replaced by its skin's bind pose
/// (see [`bind_pose_skeleton`]) when it has a skinned mesh.
fn load_target(path: &Path, bvh_scale: f32) -> Res<Asset> {
    let mut asset = load_one(path, bvh_scale)?;
    if let Some(skeleton) = bind_pose_skeleton(&asset)? {
        asset.skeleton = skeleton;
    }
    Ok(asset)
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("asset")
        .to_string()
}

/// The map from `source` to `target` and every source clip baked onto it.
///
/// # Errors
/// A map that cannot be built (a pair naming no joint) or a bake error.
pub fn retarget_asset(
    source: &Asset,
    target: &Asset,
    pairs: &[(String, String)],
    map_options: &MapOptions,
    bake_options: &BakeOptions,
) -> Res<(OwnedMap, Vec<(OwnedClip, BakeReport)>)> {
    let (s, t) = (source.skeleton.view(), target.skeleton.view());
    let map = OwnedMap::build(&s, &t, pairs, map_options)?;
    let mut clips = Vec::new();
    for clip in &source.clips {
        clips.push(bake(&map, &s, &t, clip, bake_options)?);
    }
    Ok((map, clips))
}

/// Runs `sinew retarget`.
///
/// # Errors
/// Unreadable files, a source without clips, a map or bake error, or a
/// file that cannot be written.
pub fn retarget_command(args: &RetargetArgs, out: &dyn Fn(&str)) -> Res<()> {
    let source = load_one(&args.source, args.bvh_scale)?;
    let target = load_target(&args.target, args.bvh_scale)?;
    if source.clips.is_empty() {
        return Err(format!("{} has no clip to retarget", args.source.display()).into());
    }
    let map_options = MapOptions {
        align_rest_directions: !args.no_align,
        ..MapOptions::default()
    };
    let bake_options = BakeOptions {
        foot_contacts: !args.no_feet,
        ..BakeOptions::default()
    };
    let (map, baked) = retarget_asset(&source, &target, &args.pairs, &map_options, &bake_options)?;
    out(&format!(
        "{} ({} joints) -> {} ({} joints)",
        args.source.display(),
        source.skeleton.joint_count(),
        args.target.display(),
        target.skeleton.joint_count()
    ));
    for line in map.report.to_string().lines() {
        out(line);
    }
    for (clip, report) in &baked {
        out(&format!("clip {:?}: {report}", clip.name));
    }
    std::fs::create_dir_all(&args.output)
        .map_err(|e| format!("cannot create {}: {e}", args.output.display()))?;
    // One stem for every file written (the compressor would cut a dotted
    // name such as `mannequiny-0.3.0` at its last dot).
    let name = format!("{}-on-{}", stem(&args.source), stem(&args.target)).replace('.', "_");
    let map_path = args.output.join(format!("{name}.sinewrtm"));
    std::fs::write(&map_path, map.bytes())
        .map_err(|e| format!("cannot write {}: {e}", map_path.display()))?;
    out(&format!("wrote {}", map_path.display()));
    let asset = Asset {
        source: PathBuf::from(&name),
        skeleton: target.skeleton.clone(),
        joint_map: target.joint_map.clone(),
        clips: baked.iter().map(|(c, _)| c.clone()).collect(),
        meshes: target.meshes.clone(),
        warnings: Vec::new(),
        units: target.units,
    };
    let copts = sinew_std::compress::CliOptions {
        error: args.error,
        shell: Length::parse("3cm")?,
        rotation: sinew_core::compressed::RotationFormat::DropW,
        segment_frames: 16,
        verify: false,
        out_dir: args.output.clone(),
    };
    sinew_std::compress::run_cli(std::slice::from_ref(&asset), &copts, &mut |line| out(line))?;
    for path in sinew_std::export::write_containers(&asset, &args.output, &name)? {
        out(&format!("wrote {}", path.display()));
    }
    if let Some(png) = &args.png {
        let rows = [
            Row {
                skeleton: &source.skeleton,
                clip: &source.clips[0],
                title: format!("{} (source)", stem(&args.source)),
                centre: map.report.info.root.map_or(0, |(_, s)| s),
            },
            Row {
                skeleton: &target.skeleton,
                clip: &baked[0].0,
                title: format!("retargeted onto {}", stem(&args.target)),
                centre: map.report.info.root.map_or(0, |(t, _)| t),
            },
        ];
        side_by_side(&rows, &FilmstripOptions::default())?
            .save_png(png)
            .map_err(|e| format!("cannot write {}: {e}", png.display()))?;
        out(&format!("wrote {}", png.display()));
    }
    Ok(())
}

/// One row of [`side_by_side`].
pub struct Row<'a> {
    /// The skeleton the clip plays on.
    pub skeleton: &'a sinew_std::OwnedSkeleton,
    /// The clip.
    pub clip: &'a OwnedClip,
    /// The row's title.
    pub title: String,
    /// The joint each cell is centred on (the hips).
    pub centre: usize,
}

/// Filmstrips of each row (cells evenly over each clip), stacked top to
/// bottom.
///
/// # Errors
/// No rows, a clip that does not fit its skeleton, or a drawing error.
pub fn side_by_side(rows: &[Row<'_>], opts: &FilmstripOptions) -> Res<Pixmap> {
    if rows.is_empty() {
        return Err("nothing to draw".into());
    }
    let mut strips = Vec::new();
    for row in rows {
        let times = chart::cell_times(row.clip.duration(), opts.frames);
        let strip =
            render::filmstrip_centred(&row.skeleton.view(), &row.clip.view(), opts, row.centre)?;
        strips.push(chart::label_filmstrip(&strip, &row.title, &times)?);
    }
    let width = strips.iter().map(Pixmap::width).max().unwrap_or(1);
    let mut y = 0;
    let mut placed = Vec::new();
    for s in &strips {
        placed.push((s, (0, y)));
        y += s.height();
    }
    chart::canvas(width, y, &placed, |_| Ok(()))
}

/// `sinew render --retarget`: for each source asset, its clip (`clip`
/// name, else the first) and the same clip retargeted onto each target,
/// one row each.
///
/// # Errors
/// Unreadable targets, a source without the clip, a map or bake error.
pub fn render_retargeted(
    sources: &[Asset],
    targets: &[PathBuf],
    clip: Option<&str>,
    bvh_scale: f32,
    opts: &FilmstripOptions,
) -> Res<(Pixmap, Vec<String>)> {
    let targets: Vec<Asset> = targets
        .iter()
        .map(|t| load_target(t, bvh_scale))
        .collect::<Res<_>>()?;
    let map_options = MapOptions {
        align_rest_directions: true,
        ..MapOptions::default()
    };
    let mut owned = Vec::new();
    let mut lines = Vec::new();
    for source in sources {
        let c = match clip {
            Some(name) => source.clips.iter().find(|c| c.name == name),
            None => source.clips.first(),
        }
        .ok_or_else(|| format!("{} has no clip to draw", source.source.display()))?;
        let one = Asset {
            clips: vec![c.clone()],
            ..source.clone()
        };
        let source_row = owned.len();
        owned.push((source, c.clone(), stem(&source.source), None, 0));
        for target in &targets {
            let (map, mut baked) =
                retarget_asset(&one, target, &[], &map_options, &BakeOptions::default())?;
            let (b, report) = baked.remove(0);
            lines.push(format!(
                "{} -> {}: {} of {} joints mapped; {report}",
                stem(&source.source),
                stem(&target.source),
                map.report.mapped.len(),
                target.skeleton.joint_count()
            ));
            let (t_root, s_root) = map.report.info.root.unwrap_or((0, 0));
            owned[source_row].4 = s_root;
            owned.push((
                target,
                b,
                stem(&target.source),
                Some(stem(&source.source)),
                t_root,
            ));
        }
    }
    let rows: Vec<Row<'_>> = owned
        .iter()
        .map(|(asset, clip, name, from, centre)| Row {
            centre: *centre,
            skeleton: &asset.skeleton,
            clip,
            title: match from {
                None => format!("{name} (source, {:.2} s)", clip.duration()),
                Some(src) => format!("{src} retargeted onto {name}"),
            },
        })
        .collect();
    Ok((side_by_side(&rows, opts)?, lines))
}
