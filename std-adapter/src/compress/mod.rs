//! The clip compressor, the independent error measurement, and `sinew compress`.
//!
//! [`compress`] turns a raw uniform clip into a `sinew_core::compressed`
//! container whose object-space error stays under a bound: virtual vertices
//! at a shell distance around every joint, transformed through the whole
//! hierarchy, never move more than `error` from where the raw clip puts them,
//! at every frame and at every mid-frame.
//!
//! How the bound is guaranteed:
//! 1. Tracks that are exactly default (identity, or the rest pose with
//!    bind-pose stripping) or exactly constant are not stored per frame.
//! 2. An analytic budget per joint: along any root-to-leaf chain the
//!    animated tracks share the bound equally; a rotation error θ at joint
//!    `j` moves a vertex at distance `d ≤ D_j` by at most `2 sin(θ/2) d ≤ θ D_j`,
//!    a translation error `e` moves its subtree by at most `e σ` (σ the
//!    parent's largest column norm), a scale error `e` by at most `√3 e D_j / s_min`.
//!    Summing along a chain keeps the first-order error under the bound.
//! 3. Per segment the budgets are scaled up by the largest multiplier whose
//!    *measured* error (this compressor's own scalar FK over the segment's
//!    frames and mid-frames, decoded with the core's own dequantizer) stays
//!    under the bound; each track takes the lowest bit rate whose local error
//!    fits its scaled budget, or verbatim `f32` when no rate does.
//! 4. Then a greedy descent, leaves first: each track's rate goes down one
//!    bit at a time while the measured error of every joint in its subtree
//!    stays under the bound (the rest of the skeleton does not move, so each
//!    trial re-runs FK over that subtree only).
//! 5. The finished container is sampled through `CompressedClip::sample` at
//!    every frame and mid-frame and checked against the bound; segments that
//!    fail are searched again with a tenth off their target, then with half
//!    of it, and after five misses stored verbatim (exact, so error 0 at
//!    their frames). A bound below what `f32` resolves at the figure's size
//!    (the check's rounding allowance, 16 ε × the figure's extent about its
//!    root, is larger)
//!    stores every segment verbatim at once; [`CompressReport::raw_segments`]
//!    counts verbatim segments and `sinew compress` names them.
//!
//! [`measure_error`] is the independent check: separate code that samples
//! both clips through their public samplers, runs the core's SIMD FK and
//! transforms ±shell points along each joint's three axes.
//!
//! Every measurement subtracts the raw root translation of the sample from
//! both clips' roots before FK: the error is the figure's, wherever it
//! stands. Measured in world coordinates, a figure 60 m from the origin
//! would add a rounding of 60 m's f32 spacing at every joint of a chain to
//! both sides, and a 0.01 cm bound would leave no room for quantization.
//!
//! The code: this module holds the public API ([`compress`], its options
//! and report) and the container's assembly through
//! `sinew_core::compressed::writer`; `analysis` the per-joint tracks,
//! their constants, ranges, budgets and per-segment quantization; `search`
//! the per-segment bit-rate search; `measure` the lane-wise FK and error
//! measurement (the compressor's own and [`measure_error`]); `table` the
//! `sinew compress` front end and its report table.

use sinew_core::clip::RawClip;
use sinew_core::compressed::writer::{BlockTrack, Header, LaneSegment, Writer};
use sinew_core::compressed::{CompressedClip, Defaults, RotationFormat, RAW_BITS};
use sinew_core::{Error, Skeleton};

use crate::assets::AlignedBytes;

mod analysis;
mod measure;
mod search;
mod table;
#[cfg(test)]
mod tests;

use analysis::{analyse, Analysis, Kind, SegTrack, JOINT_DEFAULT};
use measure::container_errors;
pub use measure::measure_error;
use search::SegmentSearch;
pub use table::{raw_clip_bytes, run_cli, table, CliOptions, Length, Row};

/// Default segment length in frames.
pub const DEFAULT_SEGMENT_FRAMES: usize = 16;

/// Compression settings; lengths are in the clip's units.
#[derive(Clone, Copy, Debug)]
pub struct CompressOptions {
    /// Largest allowed object-space error of a virtual vertex (clip units).
    pub error: f32,
    /// Distance of the virtual vertices from each joint (clip units).
    pub shell: f32,
    /// Frames per segment (1..=65536).
    pub segment_frames: usize,
    /// Rotation format.
    pub rotation: RotationFormat,
    /// Strip tracks equal to the skeleton's rest pose (else only identity ones).
    pub rest_pose_stripping: bool,
}

impl Default for CompressOptions {
    /// 0.01 cm error and a 3 cm shell for a clip in metres.
    fn default() -> Self {
        CompressOptions {
            error: 0.0001,
            shell: 0.03,
            segment_frames: DEFAULT_SEGMENT_FRAMES,
            rotation: RotationFormat::default(),
            rest_pose_stripping: true,
        }
    }
}

/// A compressed clip container that owns its (aligned) bytes.
#[derive(Clone)]
pub struct OwnedCompressedClip {
    bytes: AlignedBytes,
}

impl OwnedCompressedClip {
    /// Copies and validates container bytes.
    ///
    /// # Errors
    /// As `CompressedClip::from_bytes`.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let bytes = AlignedBytes::copy_from(bytes);
        CompressedClip::from_bytes(bytes.as_slice())?;
        Ok(OwnedCompressedClip { bytes })
    }

    /// The validated view (validation is repeated: take it once, not per frame).
    #[must_use]
    pub fn view(&self) -> CompressedClip<'_> {
        match CompressedClip::from_bytes(self.bytes.as_slice()) {
            Ok(c) => c,
            Err(e) => unreachable!("owned compressed bytes were validated at construction: {e}"),
        }
    }

    /// The container bytes.
    #[must_use]
    pub fn bytes(&self) -> &[u8] {
        self.bytes.as_slice()
    }
}

/// What the compressor found.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CompressReport {
    /// The compressor's own measured max error over frames and mid-frames.
    pub max_error: f32,
    /// Verification passes (1 when the first container met the bound).
    pub passes: usize,
    /// Segments stored verbatim because no quantization met the bound.
    pub raw_segments: usize,
    /// Half the f32 spacing at the clip's largest root translation
    /// coordinate: how far the raw keys themselves may be from the motion
    /// they were imported from. Larger than the bound means the import lost
    /// more precision than the compressor is asked to keep (a figure far
    /// from the origin); `sinew compress` warns then.
    pub root_resolution: f32,
}

/// Error statistics over every virtual vertex of every sample.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ErrorStats {
    /// Largest error.
    pub max: f32,
    /// Mean error.
    pub mean: f32,
    /// 99th percentile.
    pub p99: f32,
    /// Number of vertex errors measured.
    pub count: usize,
}

/// The block-track order of the animated tracks: block, then translation,
/// rotation, scale, then lane (the order of their lanes in the container).
fn lane_order(a: &Analysis) -> Vec<usize> {
    let mut order: Vec<usize> = (0..a.tracks.len()).collect();
    order.sort_by_key(|&k| {
        let t = &a.tracks[k];
        (t.joint / 4, kind_slot(t.kind), t.joint % 4)
    });
    order
}

fn kind_slot(k: Kind) -> usize {
    match k {
        Kind::Translation => 0,
        Kind::Rotation => 1,
        Kind::Scale => 2,
    }
}

// `slot` (translation, rotation, scale) indexes several per-joint tables.
#[allow(clippy::needless_range_loop)]
fn build_container(
    skeleton: &Skeleton<'_>,
    a: &Analysis,
    clip: &RawClip<'_>,
    opts: &CompressOptions,
    segs: &[Vec<SegTrack>],
) -> Result<OwnedCompressedClip, Error> {
    let blocks = a.joints.div_ceil(4);
    let mut track_of = vec![[None::<usize>; 3]; a.joints];
    for (k, t) in a.tracks.iter().enumerate() {
        track_of[t.joint][kind_slot(t.kind)] = Some(k);
    }
    let mut tracks = Vec::with_capacity(3 * blocks);
    for b in 0..blocks {
        for slot in 0..3 {
            let lanes: Vec<Option<usize>> = (0..4)
                .map(|l| Some(4 * b + l).filter(|&j| j < a.joints))
                .collect();
            let stored = lanes
                .iter()
                .flatten()
                .any(|&j| a.kinds[j][slot] != JOINT_DEFAULT);
            if !stored {
                tracks.push(BlockTrack::Default);
                continue;
            }
            let mut mask = 0u8;
            let mut min = [[0.0f32; 4]; 3];
            let mut unit = [[0.0f32; 4]; 3];
            let mut w = [1.0f32; 4];
            let mut smallest_three = 0u8;
            for (l, j) in lanes.iter().enumerate() {
                let fixed: [f32; 4] = match j {
                    Some(j) => {
                        let f = &a.fixed[*j];
                        match slot {
                            0 => [f.translation.x, f.translation.y, f.translation.z, 0.0],
                            1 => f.rotation.to_array(),
                            _ => [f.scale.x, f.scale.y, f.scale.z, 0.0],
                        }
                    }
                    None => match slot {
                        1 => [0.0, 0.0, 0.0, 1.0],
                        0 => [0.0; 4],
                        _ => [1.0, 1.0, 1.0, 0.0],
                    },
                };
                match j.and_then(|j| track_of[j][slot]) {
                    Some(k) => {
                        mask |= 1 << l;
                        for c in 0..3 {
                            min[c][l] = a.tracks[k].range[2 * c];
                            unit[c][l] = a.tracks[k].range[2 * c + 1];
                        }
                        w[l] = 0.0;
                        if a.tracks[k].format == RotationFormat::SmallestThree {
                            smallest_three |= 1 << l;
                        }
                    }
                    None => {
                        for c in 0..3 {
                            min[c][l] = fixed[c];
                        }
                        w[l] = fixed[3];
                    }
                }
            }
            tracks.push(BlockTrack::Stored {
                animated: mask,
                min,
                unit,
                w,
                smallest_three,
            });
        }
    }
    let order = lane_order(a);
    let lanes: Vec<LaneSegment> = segs
        .iter()
        .flat_map(|seg| {
            order.iter().map(|&k| {
                let t = &seg[k];
                LaneSegment {
                    range: t.ranges,
                    rate: t.rate,
                    drops: t.drops,
                    trend: t.trend,
                    curve: t.curve,
                }
            })
        })
        .collect();
    let header = Header {
        sample_rate: clip.sample_rate(),
        joint_count: a.joints,
        frame_count: a.frames,
        segment_frames: opts.segment_frames,
        rotation: opts.rotation,
        defaults: if opts.rest_pose_stripping {
            Defaults::RestPose
        } else {
            Defaults::Identity
        },
        name: clip.name(),
    };
    let writer = if opts.rest_pose_stripping {
        Writer::with_rest(header, &tracks, &lanes, skeleton.rest_pose())?
    } else {
        Writer::new(header, &tracks, &lanes)?
    };
    let mut bytes = AlignedBytes::zeroed(writer.size());
    writer.write(
        |s, f, lane| segs[s][order[lane]].words[f],
        bytes.as_mut_slice(),
    )?;
    CompressedClip::from_bytes(bytes.as_slice())?;
    Ok(OwnedCompressedClip { bytes })
}

/// Compresses `clip` (poses of `skeleton`) under the object-space error bound of `opts`.
///
/// # Errors
/// [`Error::BadLength`] when the clip's pose size is not the skeleton's,
/// [`Error::NonFinite`] for a non-positive or non-finite error or shell, or a
/// zero-length rotation in the clip, [`Error::Corrupt`] when the result would
/// not fit the format (over 4 GiB), [`Error::InvalidSampleRate`] for a
/// segment length of 0.
pub fn compress(
    skeleton: &Skeleton<'_>,
    clip: &RawClip<'_>,
    opts: &CompressOptions,
) -> Result<(OwnedCompressedClip, CompressReport), Error> {
    crate::assets::check_clip(skeleton, clip)?;
    if !(opts.error.is_finite() && opts.error > 0.0 && opts.shell.is_finite() && opts.shell > 0.0) {
        return Err(Error::NonFinite {
            what: "error bound or shell distance",
        });
    }
    if opts.segment_frames == 0 || opts.segment_frames > 65536 {
        return Err(Error::InvalidSampleRate);
    }
    let a = analyse(skeleton, clip, opts)?;
    let sf = opts.segment_frames;
    let nseg = a.frames.div_ceil(sf);
    // The final check leaves room for the f32 rounding of the SIMD sampler
    // and FK that the independent measurement uses (relative to the
    // figure's size about its root: the measurements subtract the root's
    // translation), so a container that passes here also passes there, and
    // 0.1% of the bound besides, a margin far wider than the two
    // measurements' differences on real motion capture.
    let accept = opts.error * 0.999 - 16.0 * f32::EPSILON * a.extent;
    // Segments are searched against a slightly tighter target than that, so
    // the SIMD-vs-scalar rounding of the real sampler keeps under it.
    let target = accept - opts.error * 0.003;
    let mut scale = vec![1.0f32; nseg];
    // A bound below what f32 resolves at this scene's size: no quantized
    // segment can be proven to meet it, so store everything verbatim.
    let mut halvings = vec![if target > 0.0 { 0u32 } else { 5 }; nseg];
    let mut segs: Vec<Vec<SegTrack>> = vec![Vec::new(); nseg];
    let mut todo: Vec<usize> = (0..nseg).collect();
    let mut passes = 0;
    loop {
        passes += 1;
        let mut hint = 4;
        for &s in &todo {
            let range = s * sf..((s + 1) * sf).min(a.frames);
            let mut search = SegmentSearch::new(&a, opts, range);
            segs[s] = if halvings[s] >= 5 {
                (0..a.tracks.len())
                    .map(|k| search.get(k, RAW_BITS).clone())
                    .collect()
            } else {
                let (rates, used) = search.search(target * scale[s], scale[s], hint);
                hint = used;
                search.refine(rates, target * scale[s])
            };
        }
        let out = build_container(skeleton, &a, clip, opts, &segs)?;
        let errs = container_errors(skeleton, clip, &out.view(), opts.shell)?;
        let mut failing = Vec::new();
        for (i, &e) in errs.iter().enumerate() {
            if e > accept {
                let (f0, f1) = if i < a.frames {
                    (i, i)
                } else {
                    (i - a.frames, i - a.frames + 1)
                };
                failing.push(f0 / sf);
                failing.push(f1 / sf);
            }
        }
        failing.sort_unstable();
        failing.dedup();
        // Verbatim segments are exact already: nothing left to try there
        // (what remains is the sampler's and FK's own f32 rounding).
        failing.retain(|&s| halvings[s] < 5);
        let max_error = errs.iter().copied().fold(0.0f32, f32::max);
        if failing.is_empty() || passes > 6 {
            let raw_segments = segs
                .iter()
                .filter(|s| !s.is_empty() && s.iter().all(|t| t.rate == RAW_BITS))
                .count();
            return Ok((
                out,
                CompressReport {
                    max_error,
                    passes,
                    raw_segments,
                    root_resolution: a.root_resolution(),
                },
            ));
        }
        for &s in &failing {
            // A first miss is a rounding-sized one (the search measures the
            // same decoded values): a tenth off the target is enough. Then halve.
            scale[s] *= if halvings[s] == 0 { 0.9 } else { 0.5 };
            halvings[s] += 1;
        }
        todo = failing;
    }
}
