//! `sinew compress`: its options, one report row per clip, and the report
//! table.

use std::path::{Path, PathBuf};
use std::time::Instant;

use sinew_core::compressed::RotationFormat;

use super::{compress, measure_error, CompressOptions, ErrorStats};

/// A length given on the command line, e.g. `0.01cm`, `3cm`, `1mm`, `0.0001m`,
/// or a bare number in the clip's own units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Length {
    /// The number as written.
    pub value: f32,
    /// Metres per unit of `value`, or `None` for the clip's own units.
    pub metres_per_unit: Option<f32>,
}

impl Length {
    /// Parses `<number>[m|cm|mm]`; the number must be finite and > 0.
    ///
    /// # Errors
    /// A one-line message for anything else.
    pub fn parse(s: &str) -> Result<Length, String> {
        let t = s.trim();
        let (num, unit) = if let Some(n) = t.strip_suffix("mm") {
            (n, Some(0.001))
        } else if let Some(n) = t.strip_suffix("cm") {
            (n, Some(0.01))
        } else if let Some(n) = t.strip_suffix('m') {
            (n, Some(1.0))
        } else {
            (t, None)
        };
        let value: f32 = num
            .trim()
            .parse()
            .map_err(|_| format!("'{s}' is not a length (e.g. 0.01cm, 3cm, 1mm, 0.0001m)"))?;
        if !(value.is_finite() && value > 0.0) {
            return Err(format!("'{s}' must be a finite length > 0"));
        }
        Ok(Length {
            value,
            metres_per_unit: unit,
        })
    }

    /// The length in the units of an asset (`"metres"`, or anything else for
    /// unknown file units, which only bare numbers may be given in).
    ///
    /// # Errors
    /// A unit was given but the asset's units are unknown.
    pub fn in_units(&self, units: &str) -> Result<f32, String> {
        match (self.metres_per_unit, units) {
            (None, _) => Ok(self.value),
            (Some(m), "metres") => Ok(self.value * m),
            (Some(_), other) => Err(format!(
                "the clip is in {other}, so lengths must be bare numbers in those units"
            )),
        }
    }
}

/// Settings of `sinew compress`.
#[derive(Clone, Debug)]
pub struct CliOptions {
    /// Error bound.
    pub error: Length,
    /// Shell distance.
    pub shell: Length,
    /// Rotation format.
    pub rotation: RotationFormat,
    /// Frames per segment.
    pub segment_frames: usize,
    /// Also run [`measure_error`] on every clip.
    pub verify: bool,
    /// Output directory (created if missing).
    pub out_dir: PathBuf,
}

/// The raw size a compression ratio is taken against: `joints × frames × 40`
/// bytes (translation, rotation and scale as 10 `f32` per joint and frame).
#[must_use]
pub fn raw_clip_bytes(joints: usize, frames: usize) -> usize {
    joints * frames * 40
}

/// One row of the `sinew compress` table.
#[derive(Clone, Debug)]
pub struct Row {
    /// Output file name.
    pub clip: String,
    /// Joints.
    pub joints: usize,
    /// Frames.
    pub frames: usize,
    /// Raw size ([`raw_clip_bytes`]).
    pub raw_bytes: usize,
    /// Container size.
    pub compressed_bytes: usize,
    /// The bound, in clip units.
    pub bound: f32,
    /// The compressor's measured max error, in clip units.
    pub max_error: f32,
    /// Metres per clip unit, when known.
    pub metres_per_unit: Option<f32>,
    /// Compression time.
    pub seconds: f64,
    /// The independent measurement, with `--verify`.
    pub verified: Option<ErrorStats>,
}

pub(super) fn fmt_len(v: f32, mpu: Option<f32>) -> String {
    match mpu {
        Some(m) => format!("{:.5} cm", v * m * 100.0),
        None => format!("{v:.6}"),
    }
}

/// Compresses every clip of `assets` into `opts.out_dir` (one `.sinewcmp`
/// file per clip, and a `.sinewtrk` track set of its float tracks beside it
/// when it has any: [`crate::export::float_track_set`]), reporting progress and the table through `emit`, and
/// returns the rows.
///
/// # Errors
/// A length in units the asset does not have, a core error (named with the
/// clip), an output file that cannot be written, or (with `verify`) a clip
/// whose independently measured error exceeds the bound.
pub fn run_cli(
    assets: &[crate::Asset],
    opts: &CliOptions,
    emit: &mut dyn FnMut(&str),
) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    std::fs::create_dir_all(&opts.out_dir)
        .map_err(|e| format!("cannot create {}: {e}", opts.out_dir.display()))?;
    let total: usize = assets.iter().map(|a| a.clips.len()).sum();
    let mut rows = Vec::new();
    let mut done = 0;
    let stems = crate::export::asset_stems(assets);
    for (asset, stem) in assets.iter().zip(stems) {
        let skel = asset.skeleton.view();
        let mpu = (asset.units == "metres").then_some(1.0f32);
        let copts = CompressOptions {
            error: opts.error.in_units(asset.units)?,
            shell: opts.shell.in_units(asset.units)?,
            segment_frames: opts.segment_frames,
            rotation: opts.rotation,
            rest_pose_stripping: true,
        };
        for (ci, clip) in asset.clips.iter().enumerate() {
            done += 1;
            let name = if asset.clips.len() == 1 {
                stem.clone()
            } else {
                format!(
                    "{stem}_{ci}_{}",
                    crate::export::path_stem(Path::new(&clip.name))
                )
            };
            let view = clip.view().with_name(&clip.name);
            let start = Instant::now();
            let (out, report) = compress(&skel, &view, &copts)
                .map_err(|e| format!("{}: clip '{}': {e}", asset.source.display(), clip.name))?;
            let seconds = start.elapsed().as_secs_f64();
            let path = opts.out_dir.join(format!("{name}.sinewcmp"));
            std::fs::write(&path, out.bytes())
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            if let Some(tracks) = crate::export::float_track_set(clip)? {
                let path = opts.out_dir.join(format!("{name}.sinewtrk"));
                std::fs::write(&path, tracks.as_slice())
                    .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            }
            let verified = if opts.verify {
                let stats = measure_error(&skel, &view, &out.view(), copts.shell)?;
                if stats.max > copts.error {
                    return Err(format!(
                        "{name}: verified max error {} exceeds the bound {}",
                        fmt_len(stats.max, mpu),
                        fmt_len(copts.error, mpu)
                    )
                    .into());
                }
                Some(stats)
            } else {
                None
            };
            let row = Row {
                clip: name,
                joints: skel.joint_count(),
                frames: view.frame_count(),
                raw_bytes: raw_clip_bytes(skel.joint_count(), view.frame_count()),
                compressed_bytes: out.bytes().len(),
                bound: copts.error,
                max_error: report.max_error,
                metres_per_unit: mpu,
                seconds,
                verified,
            };
            if report.root_resolution > copts.error {
                emit(&format!(
                    "warning: {}: the root is so far from the origin that f32 keys \
                     are only good to {} there, coarser than the bound {}: the import \
                     already lost more than the bound (move the scene nearer the origin)",
                    row.clip,
                    fmt_len(report.root_resolution, mpu),
                    fmt_len(copts.error, mpu)
                ));
            }
            let verbatim = if report.raw_segments > 0 {
                format!(
                    " ({} of {} segments verbatim: no bit rate met the bound, which is \
                     close to f32 resolution at this scene's size)",
                    report.raw_segments,
                    view.frame_count().div_ceil(copts.segment_frames)
                )
            } else {
                String::new()
            };
            emit(&format!(
                "[{done}/{total}] {} {:.1}:1 max {} in {:.0} ms{verbatim}",
                row.clip,
                row.raw_bytes as f64 / row.compressed_bytes as f64,
                fmt_len(row.max_error, mpu),
                seconds * 1e3
            ));
            rows.push(row);
        }
    }
    emit(&table(&rows));
    Ok(rows)
}

/// The table of rows plus totals (ratio of the sums, worst error, total time, MB/s).
#[must_use]
pub fn table(rows: &[Row]) -> String {
    use std::fmt::Write;
    let verify = rows.iter().any(|r| r.verified.is_some());
    let mut s = String::new();
    let _ = write!(
        s,
        "{:<28} {:>6} {:>7} {:>11} {:>10} {:>7} {:>13} {:>9}",
        "clip", "joints", "frames", "raw bytes", "compressed", "ratio", "max error", "time ms"
    );
    if verify {
        let _ = write!(s, " {:>13} {:>13} {:>13}", "verified max", "mean", "p99");
    }
    s.push('\n');
    for r in rows {
        let _ = write!(
            s,
            "{:<28} {:>6} {:>7} {:>11} {:>10} {:>6.2}: {:>13} {:>9.1}",
            r.clip,
            r.joints,
            r.frames,
            r.raw_bytes,
            r.compressed_bytes,
            r.raw_bytes as f64 / r.compressed_bytes as f64,
            fmt_len(r.max_error, r.metres_per_unit),
            r.seconds * 1e3
        );
        if let Some(v) = r.verified {
            let _ = write!(
                s,
                " {:>13} {:>13} {:>13}",
                fmt_len(v.max, r.metres_per_unit),
                fmt_len(v.mean, r.metres_per_unit),
                fmt_len(v.p99, r.metres_per_unit)
            );
        }
        s.push('\n');
    }
    let raw: usize = rows.iter().map(|r| r.raw_bytes).sum();
    let comp: usize = rows.iter().map(|r| r.compressed_bytes).sum();
    let secs: f64 = rows.iter().map(|r| r.seconds).sum();
    let worst = rows
        .iter()
        .max_by(|a, b| a.max_error.total_cmp(&b.max_error));
    let _ = write!(
        s,
        "{:<28} {:>6} {:>7} {:>11} {:>10} {:>6.2}: {:>13} {:>9.1}",
        format!("total ({} clips)", rows.len()),
        "",
        rows.iter().map(|r| r.frames).sum::<usize>(),
        raw,
        comp,
        raw as f64 / comp.max(1) as f64,
        worst.map_or_else(String::new, |r| fmt_len(r.max_error, r.metres_per_unit)),
        secs * 1e3
    );
    if verify {
        let vworst = rows
            .iter()
            .filter_map(|r| r.verified.map(|v| (v.max, r.metres_per_unit)))
            .max_by(|a, b| a.0.total_cmp(&b.0));
        if let Some((m, mpu)) = vworst {
            let _ = write!(s, " {:>13}", fmt_len(m, mpu));
        }
    }
    let _ = write!(
        s,
        "\ncompression speed: {:.1} MB/s of raw clip per thread",
        raw as f64 / 1e6 / secs.max(1e-9)
    );
    s
}
