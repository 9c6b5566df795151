//! Vertex animation bakes: a skinned mesh's positions and normals at every
//! frame of a clip, for the farthest level of detail, where a GPU plays
//! the mesh back from a texture instead of skinning it.
//!
//! A [`Bake`] is a texture-like array: row `f` is frame `f` (time
//! [`Bake::row_time`]), column `v` is vertex `v`, each texel an RGB triple
//! (x, y, z). Rows are evenly spaced over the clip, the first at 0 and the
//! last at its duration, so a shader plays it at time `t` by reading rows
//! `floor(t * rate)` and the next one and interpolating linearly
//! ([`Bake::sample`]).
//!
//! Two file forms ([`Bake::to_raw`], [`Quantized::write_png`]):
//! - a raw little-endian `f32` file with a 64-byte header (the format is
//!   in `docs/vertex-animation.md`), exact;
//! - 16-bit RGB PNGs: positions quantized per axis over the mesh's bounds
//!   across all frames (`p = min + (max − min) · q / 65535`), normals mapped
//!   from [−1, 1] (`n = 2 q / 65535 − 1`, renormalised). The bounds go in
//!   the PNG's `tEXt` chunk and in the JSON sidecar the tool writes.
//!
//! [`measure`] compares a bake with live skinning (sinew's own LBS at the
//! same times, and at the middle of every pair of rows, where playback
//! interpolates) and returns the errors a user needs to pick a rate.
//!
//! What a bake allocates is counted against [`BakeOptions::memory_budget`]
//! before allocating, so a clip or mesh too large for it is an error, not
//! an abort.

use std::fmt;
use std::io::Write;

use sinew_core::clip::{RawClip, TimeMode};
use sinew_core::fk::{local_to_model, FkJob};
use sinew_core::skin::{
    lbs_palette, CheckedInfluences, Mat3x4, SkinAttributes, SkinJob, SkinMethod, SkinOutput,
    SkinVertices,
};
use sinew_core::{Mat4, Skeleton, SoaTransform};

use crate::import::Mesh;

/// Rows per second of clip when none is asked for.
pub const DEFAULT_RATE: f32 = 30.0;

/// Highest rate accepted, rows per second.
pub const MAX_RATE: f32 = 1000.0;

/// Bytes a bake may allocate by default (its `f32` rows and their 16-bit
/// quantization): 256 MiB.
pub const DEFAULT_BAKE_BUDGET: usize = 256 << 20;

/// First eight bytes of a raw bake file.
pub const RAW_MAGIC: [u8; 8] = *b"SINEWVAT";

/// Version word of the raw format this module writes and reads.
pub const RAW_VERSION: u32 = 1;

/// Size of the raw file's header, bytes; the positions start there.
pub const RAW_HEADER_BYTES: usize = 64;

/// Raw header flag: normals follow the positions.
pub const RAW_FLAG_NORMALS: u32 = 1;

/// Largest 16-bit code: a quantized value `q` stands for `q / QUANT_MAX`
/// of the range.
pub const QUANT_MAX: f32 = 65535.0;

/// Options of [`bake`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BakeOptions {
    /// Rows per second of clip, in (0, [`MAX_RATE`]]; the row count is
    /// `round(duration · rate) + 1`, and the rate actually used is adjusted
    /// so that the last row falls on the clip's end ([`Bake::rate`]).
    pub rate: f32,
    /// Bake normals too: the mesh's own, or area-weighted ones computed
    /// from its triangles when it has none ([`NormalSource`]).
    pub normals: bool,
    /// Bytes the bake may allocate.
    pub memory_budget: usize,
}

impl Default for BakeOptions {
    fn default() -> Self {
        BakeOptions {
            rate: DEFAULT_RATE,
            normals: true,
            memory_budget: DEFAULT_BAKE_BUDGET,
        }
    }
}

/// Why a bake, or reading one back, failed.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum BakeError {
    /// The mesh has no joint influences (it is not skinned).
    NoSkin {
        /// The mesh's name.
        mesh: String,
    },
    /// The mesh has no vertices.
    NoVertices {
        /// The mesh's name.
        mesh: String,
    },
    /// The rate is not a finite number in (0, [`MAX_RATE`]].
    BadRate(f32),
    /// What the bake would allocate exceeds the budget.
    TooLarge {
        /// What was being allocated.
        what: String,
        /// Bytes it needs.
        bytes: u64,
        /// The budget.
        budget: u64,
    },
    /// A core kernel refused its input (the mesh's influences or inverse
    /// binds do not fit the skeleton, the clip does not fit the skeleton).
    Core(sinew_core::Error),
    /// A raw file or PNG that is not a well-formed bake.
    BadFile(String),
}

impl fmt::Display for BakeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BakeError::NoSkin { mesh } => {
                write!(f, "mesh {mesh:?} has no skin (no joint influences)")
            }
            BakeError::NoVertices { mesh } => write!(f, "mesh {mesh:?} has no vertices"),
            BakeError::BadRate(r) => write!(f, "bake rate {r} is not in (0, {MAX_RATE}] Hz"),
            BakeError::TooLarge {
                what,
                bytes,
                budget,
            } => write!(
                f,
                "{what} needs {bytes} bytes, over the bake's memory budget of {budget} bytes"
            ),
            BakeError::Core(e) => write!(f, "{e}"),
            BakeError::BadFile(m) => write!(f, "not a vertex animation bake: {m}"),
        }
    }
}

impl std::error::Error for BakeError {}

impl From<sinew_core::Error> for BakeError {
    fn from(e: sinew_core::Error) -> Self {
        BakeError::Core(e)
    }
}

/// Where a bake's normals came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NormalSource {
    /// No normals baked.
    None,
    /// The mesh's bind-space normals, skinned.
    Mesh,
    /// Area-weighted vertex normals of the mesh's bind-space triangles
    /// (the mesh had no normals), skinned.
    Computed,
}

/// Axis-aligned bounds of every baked position over every frame, model units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounds {
    /// Smallest x, y, z.
    pub min: [f32; 3],
    /// Largest x, y, z.
    pub max: [f32; 3],
}

impl Bounds {
    /// Size of one 16-bit quantization step per axis, `(max − min) / 65535`
    /// (0 on a flat axis).
    #[must_use]
    pub fn step(&self) -> [f32; 3] {
        core::array::from_fn(|k| (self.max[k] - self.min[k]) / QUANT_MAX)
    }
}

/// A baked clip of a mesh: `frames` rows of `vertices` positions (and
/// normals), row-major (index `frame * vertices + vertex`).
#[derive(Clone, Debug, PartialEq)]
pub struct Bake {
    /// Mesh name (empty when read from a raw file).
    pub mesh: String,
    /// Clip name (empty when read from a raw file).
    pub clip: String,
    /// Rows.
    pub frames: usize,
    /// Columns.
    pub vertices: usize,
    /// Rows per second of clip time: row `f` is at `f / rate` seconds.
    pub rate: f32,
    /// Clip duration, seconds; the last row is at this time.
    pub duration: f32,
    /// Skinned positions, model units, `frames * vertices`.
    pub positions: Vec<[f32; 3]>,
    /// Unit skinned normals, `frames * vertices`, or empty.
    pub normals: Vec<[f32; 3]>,
    /// Where the normals came from.
    pub normal_source: NormalSource,
    /// Bounds of [`Bake::positions`].
    pub bounds: Bounds,
}

/// The live skinning a bake reproduces: clip sampling (clamped to the
/// clip), FK, an LBS palette and [`SkinJob`] over the mesh, with buffers
/// sized once.
pub struct LiveSkin<'a> {
    skeleton: &'a Skeleton<'a>,
    clip: &'a RawClip<'a>,
    influences: CheckedInfluences<'a>,
    inverse_bind: &'a [Mat4],
    positions: &'a [[f32; 3]],
    normals: Option<Vec<[f32; 3]>>,
    local: Vec<SoaTransform>,
    models: Vec<Mat4>,
    palette: Vec<Mat3x4>,
}

impl<'a> LiveSkin<'a> {
    /// Sets up live skinning of `mesh` by `clip` on `skeleton`; normals
    /// as [`BakeOptions::normals`] says.
    ///
    /// # Errors
    /// [`BakeError::NoSkin`], [`BakeError::NoVertices`], or
    /// [`BakeError::Core`] when the influences or inverse binds do not
    /// fit the skeleton or the clip has another joint count.
    pub fn new(
        skeleton: &'a Skeleton<'a>,
        clip: &'a RawClip<'a>,
        mesh: &'a Mesh,
        normals: bool,
    ) -> Result<Self, BakeError> {
        if mesh.positions.is_empty() {
            return Err(BakeError::NoVertices {
                mesh: mesh.name.clone(),
            });
        }
        if mesh.joints.is_empty() || mesh.weights.is_empty() {
            return Err(BakeError::NoSkin {
                mesh: mesh.name.clone(),
            });
        }
        let n = skeleton.joint_count();
        if clip.soa_count() != skeleton.soa_count() {
            return Err(sinew_core::Error::BadLength {
                buffer: "clip joint blocks",
                expected: skeleton.soa_count(),
                actual: clip.soa_count(),
            }
            .into());
        }
        if mesh.inverse_bind.len() != n {
            return Err(sinew_core::Error::BadLength {
                buffer: "inverse binds",
                expected: n,
                actual: mesh.inverse_bind.len(),
            }
            .into());
        }
        let influences = mesh.influences(n)?;
        if influences.len() != mesh.positions.len() {
            return Err(sinew_core::Error::BadLength {
                buffer: "positions",
                expected: influences.len(),
                actual: mesh.positions.len(),
            }
            .into());
        }
        let normals = match (normals, mesh.normals.len() == mesh.positions.len()) {
            (false, _) => None,
            (true, true) => Some(mesh.normals.clone()),
            (true, false) => Some(triangle_normals(&mesh.positions, &mesh.indices)),
        };
        Ok(LiveSkin {
            skeleton,
            clip,
            influences,
            inverse_bind: &mesh.inverse_bind,
            positions: &mesh.positions,
            normals,
            local: vec![SoaTransform::IDENTITY; skeleton.soa_count()],
            models: vec![Mat4::IDENTITY; n],
            palette: vec![Mat3x4::IDENTITY; n],
        })
    }

    /// Vertex count.
    #[must_use]
    pub fn vertices(&self) -> usize {
        self.positions.len()
    }

    /// Whether normals are skinned.
    #[must_use]
    pub fn has_normals(&self) -> bool {
        self.normals.is_some()
    }

    /// Skins the mesh at clip time `t` (seconds, clamped to the clip) into
    /// `positions` and, when normals are skinned and `normals` is given,
    /// unit normals (a zero normal stays zero).
    ///
    /// # Errors
    /// [`BakeError::Core`]: an output not one entry per vertex, or a
    /// non-finite `t`.
    pub fn skin(
        &mut self,
        t: f32,
        positions: &mut [[f32; 3]],
        normals: Option<&mut [[f32; 3]]>,
    ) -> Result<(), BakeError> {
        self.clip.sample(t, TimeMode::Clamp, &mut self.local)?;
        local_to_model(&FkJob::new(self.skeleton, &self.local), &mut self.models)?;
        lbs_palette(&self.models, self.inverse_bind, &mut self.palette)?;
        let (normals_in, normals_out) = match (&self.normals, normals) {
            (Some(src), Some(dst)) => (Some(src.as_slice()), Some(dst)),
            _ => (None, None),
        };
        let input = SkinVertices {
            positions: self.positions,
            normals: normals_in,
            tangents: None,
        };
        let mut output = SkinOutput {
            positions,
            normals: normals_out,
            tangents: None,
        };
        SkinJob {
            method: SkinMethod::Lbs {
                palette: &self.palette,
            },
            influences: &self.influences,
            attributes: SkinAttributes::Arrays {
                input,
                output: output.reborrow(),
            },
        }
        .run()?;
        if let Some(n) = output.normals {
            n.iter_mut().for_each(|v| *v = unit(*v));
        }
        Ok(())
    }
}

/// Area-weighted vertex normals of a triangle list (unit; zero for a
/// vertex on no triangle, or when `indices` is empty). Indices past the
/// vertices are skipped.
#[must_use]
pub fn triangle_normals(positions: &[[f32; 3]], indices: &[u32]) -> Vec<[f32; 3]> {
    let mut sum = vec![[0.0f32; 3]; positions.len()];
    for tri in indices.chunks_exact(3) {
        let [a, b, c] = [tri[0], tri[1], tri[2]].map(|i| i as usize);
        let (Some(pa), Some(pb), Some(pc)) = (positions.get(a), positions.get(b), positions.get(c))
        else {
            continue;
        };
        // The cross product's length is twice the area: larger triangles
        // weigh more.
        let n = cross(sub(*pb, *pa), sub(*pc, *pa));
        for i in [a, b, c] {
            for k in 0..3 {
                sum[i][k] += n[k];
            }
        }
    }
    sum.into_iter().map(unit).collect()
}

fn sub(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn cross(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn dot(a: [f32; 3], b: [f32; 3]) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn length(a: [f32; 3]) -> f32 {
    dot(a, a).sqrt()
}

fn unit(a: [f32; 3]) -> [f32; 3] {
    let l = length(a);
    if l > 0.0 && l.is_finite() {
        [a[0] / l, a[1] / l, a[2] / l]
    } else {
        [0.0; 3]
    }
}

fn lerp3(a: [f32; 3], b: [f32; 3], s: f32) -> [f32; 3] {
    core::array::from_fn(|k| a[k] + (b[k] - a[k]) * s)
}

/// Distance between two points.
#[must_use]
pub fn distance(a: [f32; 3], b: [f32; 3]) -> f32 {
    length(sub(a, b))
}

/// Angle between two directions, radians (0 when either is zero). Uses
/// `atan2(|a × b|, a · b)`, which stays accurate for tiny angles where
/// `acos` of the dot product does not.
#[must_use]
pub fn angle(a: [f32; 3], b: [f32; 3]) -> f32 {
    if length(a) == 0.0 || length(b) == 0.0 {
        return 0.0;
    }
    length(cross(a, b)).atan2(dot(a, b))
}

/// Rows for a clip of `duration` seconds at `rate` rows per second, and
/// the rate actually used (so that the last row is at `duration`).
fn rows(duration: f32, rate: f32) -> Result<(usize, f32), BakeError> {
    if !(rate.is_finite() && rate > 0.0 && rate <= MAX_RATE) {
        return Err(BakeError::BadRate(rate));
    }
    if duration <= 0.0 {
        return Ok((1, rate));
    }
    let intervals = (f64::from(duration) * f64::from(rate)).round().max(1.0);
    // Clip durations are f32 seconds at a rate of at most MAX_RATE, so
    // this is far below usize::MAX; the memory budget bounds it further.
    let intervals = intervals as usize;
    Ok((
        intervals + 1,
        (intervals as f64 / f64::from(duration)) as f32,
    ))
}

struct Charge {
    budget: u64,
    used: u64,
}

impl Charge {
    fn vec<T: Clone>(&mut self, count: usize, fill: T, what: &str) -> Result<Vec<T>, BakeError> {
        let bytes = (count as u64).saturating_mul(core::mem::size_of::<T>() as u64);
        let total = self.used.saturating_add(bytes);
        if total > self.budget {
            return Err(BakeError::TooLarge {
                what: what.to_owned(),
                bytes: total,
                budget: self.budget,
            });
        }
        self.used = total;
        let mut v = Vec::new();
        v.try_reserve_exact(count)
            .map_err(|_| BakeError::TooLarge {
                what: what.to_owned(),
                bytes,
                budget: self.budget,
            })?;
        v.resize(count, fill);
        Ok(v)
    }
}

/// Bakes `mesh` skinned by `clip` (named `clip_name`) on `skeleton`:
/// one row per `1 / rate` seconds from 0 to the clip's duration.
///
/// # Errors
/// [`BakeError::BadRate`]; [`BakeError::TooLarge`] when the rows (and
/// their quantization, which [`Bake::quantize`] will need) exceed
/// `opts.memory_budget`; those of [`LiveSkin::new`].
pub fn bake(
    skeleton: &Skeleton<'_>,
    clip: &RawClip<'_>,
    clip_name: &str,
    mesh: &Mesh,
    opts: &BakeOptions,
) -> Result<Bake, BakeError> {
    let duration = clip.duration();
    let (frames, rate) = rows(duration, opts.rate)?;
    let mut live = LiveSkin::new(skeleton, clip, mesh, opts.normals)?;
    let vertices = live.vertices();
    let texels = frames.saturating_mul(vertices);
    let mut charge = Charge {
        budget: opts.memory_budget as u64,
        used: 0,
    };
    // Charge the quantized copies up front, so a bake that fits can also
    // be written.
    let quantized = (texels as u64).saturating_mul(if live.has_normals() { 12 } else { 6 });
    charge.used = quantized;
    let what = format!("{frames} frames x {vertices} vertices");
    let mut positions = charge.vec(texels, [0.0f32; 3], &format!("positions of {what}"))?;
    let mut normals = if live.has_normals() {
        charge.vec(texels, [0.0f32; 3], &format!("normals of {what}"))?
    } else {
        Vec::new()
    };
    for f in 0..frames {
        let t = row_time(f, frames, rate, duration);
        let rows = f * vertices..(f + 1) * vertices;
        let n = normals.get_mut(rows.clone());
        live.skin(t, &mut positions[rows], n)?;
    }
    let mut bounds = Bounds {
        min: [f32::INFINITY; 3],
        max: [f32::NEG_INFINITY; 3],
    };
    for p in &positions {
        for (k, &x) in p.iter().enumerate() {
            bounds.min[k] = bounds.min[k].min(x);
            bounds.max[k] = bounds.max[k].max(x);
        }
    }
    let normal_source = match (live.has_normals(), mesh.normals.len() == vertices) {
        (false, _) => NormalSource::None,
        (true, true) => NormalSource::Mesh,
        (true, false) => NormalSource::Computed,
    };
    Ok(Bake {
        mesh: mesh.name.clone(),
        clip: clip_name.to_owned(),
        frames,
        vertices,
        rate,
        duration,
        positions,
        normals,
        normal_source,
        bounds,
    })
}

fn row_time(f: usize, frames: usize, rate: f32, duration: f32) -> f32 {
    if f + 1 == frames {
        duration
    } else {
        f as f32 / rate
    }
}

impl Bake {
    /// Clip time of row `f`, seconds: `f / rate`, and exactly the duration
    /// for the last row.
    #[must_use]
    pub fn row_time(&self, f: usize) -> f32 {
        row_time(f, self.frames, self.rate, self.duration)
    }

    /// Positions of row `f` (empty past the last row).
    #[must_use]
    pub fn row(&self, f: usize) -> &[[f32; 3]] {
        self.positions
            .get(f * self.vertices..(f + 1) * self.vertices)
            .unwrap_or(&[])
    }

    /// Normals of row `f` (empty past the last row or without normals).
    #[must_use]
    pub fn normal_row(&self, f: usize) -> &[[f32; 3]] {
        self.normals
            .get(f * self.vertices..(f + 1) * self.vertices)
            .unwrap_or(&[])
    }

    /// The two rows around clip time `t` (clamped to the clip) and the
    /// interpolation factor between them: what a shader computes.
    #[must_use]
    pub fn rows_at(&self, t: f32) -> (usize, usize, f32) {
        if self.frames < 2 || t.is_nan() {
            return (0, 0, 0.0);
        }
        if t >= self.duration {
            return (self.frames - 1, self.frames - 1, 0.0);
        }
        let x = (t * self.rate).max(0.0);
        let f = (x.floor() as usize).min(self.frames - 2);
        (f, f + 1, (x - f as f32).clamp(0.0, 1.0))
    }

    /// Plays the bake at clip time `t` as a shader does: linear
    /// interpolation of the two rows around `t`, normals renormalised.
    /// `positions` (and `normals` when given and baked) get one entry per
    /// vertex; entries past [`Bake::vertices`] are not written.
    pub fn sample(&self, t: f32, positions: &mut [[f32; 3]], normals: Option<&mut [[f32; 3]]>) {
        let (a, b, s) = self.rows_at(t);
        for ((o, p), q) in positions.iter_mut().zip(self.row(a)).zip(self.row(b)) {
            *o = lerp3(*p, *q, s);
        }
        if let Some(normals) = normals {
            let rows = self.normal_row(a).iter().zip(self.normal_row(b));
            for (o, (p, q)) in normals.iter_mut().zip(rows) {
                *o = unit(lerp3(*p, *q, s));
            }
        }
    }

    /// Quantizes the bake to 16 bits per channel: positions over
    /// [`Bake::bounds`] per axis, normals from [−1, 1]; both round to the
    /// nearest code, so a de-quantized position is within half a
    /// [`Bounds::step`] of the baked one on each axis.
    #[must_use]
    pub fn quantize(&self) -> Quantized {
        let b = self.bounds;
        let positions = self
            .positions
            .iter()
            .map(|p| {
                core::array::from_fn(|k| {
                    let extent = b.max[k] - b.min[k];
                    if extent > 0.0 {
                        code((p[k] - b.min[k]) / extent)
                    } else {
                        0
                    }
                })
            })
            .collect();
        let normals = self
            .normals
            .iter()
            .map(|n| core::array::from_fn(|k| code(n[k] * 0.5 + 0.5)))
            .collect();
        Quantized {
            frames: self.frames,
            vertices: self.vertices,
            bounds: b,
            positions,
            normals,
        }
    }

    /// The raw file: the 64-byte header (see [`RAW_MAGIC`]; all words
    /// little endian: magic, version, flags, frames, vertices, rate,
    /// duration, bounds min xyz, bounds max xyz, zero padding), then
    /// `frames * vertices` positions as `f32` x, y, z, then as many
    /// normals when [`RAW_FLAG_NORMALS`] is set.
    #[must_use]
    pub fn to_raw(&self) -> Vec<u8> {
        let has_normals = !self.normals.is_empty();
        let mut out =
            Vec::with_capacity(RAW_HEADER_BYTES + (self.positions.len() + self.normals.len()) * 12);
        out.extend_from_slice(&RAW_MAGIC);
        for w in [
            RAW_VERSION,
            u32::from(has_normals) * RAW_FLAG_NORMALS,
            self.frames as u32,
            self.vertices as u32,
        ] {
            out.extend_from_slice(&w.to_le_bytes());
        }
        let b = self.bounds;
        let floats = [self.rate, self.duration];
        for x in floats.iter().chain(&b.min).chain(&b.max) {
            out.extend_from_slice(&x.to_le_bytes());
        }
        out.resize(RAW_HEADER_BYTES, 0);
        for p in self.positions.iter().chain(&self.normals) {
            for x in p {
                out.extend_from_slice(&x.to_le_bytes());
            }
        }
        out
    }

    /// Reads a raw file written by [`Bake::to_raw`] (names empty).
    ///
    /// # Errors
    /// [`BakeError::BadFile`]: wrong magic or version, unknown flags, a
    /// size that does not match the header's counts, non-finite values.
    pub fn from_raw(bytes: &[u8]) -> Result<Bake, BakeError> {
        let bad = |m: &str| BakeError::BadFile(m.to_owned());
        if bytes.len() < RAW_HEADER_BYTES || bytes[..8] != RAW_MAGIC {
            return Err(bad("no SINEWVAT header"));
        }
        let word = |i: usize| {
            let o = 8 + 4 * i;
            u32::from_le_bytes([bytes[o], bytes[o + 1], bytes[o + 2], bytes[o + 3]])
        };
        let float = |i: usize| f32::from_bits(word(i));
        if word(0) != RAW_VERSION {
            return Err(bad("unsupported version"));
        }
        if word(1) & !RAW_FLAG_NORMALS != 0 {
            return Err(bad("unknown flags"));
        }
        let has_normals = word(1) & RAW_FLAG_NORMALS != 0;
        let (frames, vertices) = (word(2) as usize, word(3) as usize);
        let texels = (frames as u64) * (vertices as u64);
        let arrays = if has_normals { 2 } else { 1 };
        let expected = RAW_HEADER_BYTES as u64 + texels * 12 * arrays;
        if bytes.len() as u64 != expected || texels == 0 {
            return Err(bad("size does not match the header's frames and vertices"));
        }
        let (rate, duration) = (float(4), float(5));
        let bounds = Bounds {
            min: [float(6), float(7), float(8)],
            max: [float(9), float(10), float(11)],
        };
        if !(rate.is_finite() && rate > 0.0 && duration.is_finite() && duration >= 0.0) {
            return Err(bad("rate or duration out of range"));
        }
        let body = &bytes[RAW_HEADER_BYTES..];
        let mut vecs = body.chunks_exact(12).map(|c| {
            core::array::from_fn(|k| {
                f32::from_le_bytes([c[4 * k], c[4 * k + 1], c[4 * k + 2], c[4 * k + 3]])
            })
        });
        let texels = texels as usize;
        let positions: Vec<[f32; 3]> = vecs.by_ref().take(texels).collect();
        let normals: Vec<[f32; 3]> = vecs.collect();
        if positions
            .iter()
            .chain(&normals)
            .flatten()
            .any(|x| !x.is_finite())
        {
            return Err(bad("non-finite value"));
        }
        Ok(Bake {
            mesh: String::new(),
            clip: String::new(),
            frames,
            vertices,
            rate,
            duration,
            positions,
            normals,
            normal_source: if has_normals {
                NormalSource::Mesh
            } else {
                NormalSource::None
            },
            bounds,
        })
    }
}

fn code(unit_value: f32) -> u16 {
    (unit_value.clamp(0.0, 1.0) * QUANT_MAX).round() as u16
}

/// De-quantizes a 16-bit position code over `bounds`:
/// `min + (max − min) · q / 65535` per axis.
#[must_use]
pub fn dequantize_position(q: [u16; 3], bounds: &Bounds) -> [f32; 3] {
    core::array::from_fn(|k| {
        bounds.min[k] + (bounds.max[k] - bounds.min[k]) * (f32::from(q[k]) / QUANT_MAX)
    })
}

/// De-quantizes a 16-bit normal code: `2 q / 65535 − 1` per axis,
/// renormalised.
#[must_use]
pub fn dequantize_normal(q: [u16; 3]) -> [f32; 3] {
    unit(q.map(|c| f32::from(c) / QUANT_MAX * 2.0 - 1.0))
}

/// Which array of a [`Quantized`] bake a PNG holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Channel {
    /// Positions.
    Positions,
    /// Normals.
    Normals,
}

/// A bake quantized to 16 bits per channel, the PNGs' content.
#[derive(Clone, Debug, PartialEq)]
pub struct Quantized {
    /// Rows (the PNG's height).
    pub frames: usize,
    /// Columns (the PNG's width).
    pub vertices: usize,
    /// The bounds positions are quantized over.
    pub bounds: Bounds,
    /// Position codes, row-major.
    pub positions: Vec<[u16; 3]>,
    /// Normal codes, row-major, or empty.
    pub normals: Vec<[u16; 3]>,
}

/// `tEXt` keyword of the position PNG's bounds: six numbers,
/// `min x y z max x y z`.
pub const PNG_BOUNDS_KEY: &str = "sinew-bounds";

impl Quantized {
    /// Writes one array as a 16-bit RGB PNG, width = vertices, height =
    /// frames; the position PNG carries the bounds in a `tEXt` chunk
    /// ([`PNG_BOUNDS_KEY`]).
    ///
    /// # Errors
    /// [`BakeError::BadFile`] when there is nothing to write (no normals)
    /// or a side exceeds PNG's 2^31 − 1; the writer's IO errors as
    /// [`BakeError::BadFile`] too.
    pub fn write_png<W: Write>(&self, channel: Channel, w: W) -> Result<(), BakeError> {
        let data = match channel {
            Channel::Positions => &self.positions,
            Channel::Normals => &self.normals,
        };
        let err = |e: &dyn fmt::Display| BakeError::BadFile(format!("PNG: {e}"));
        if data.is_empty() {
            return Err(BakeError::BadFile("no data for this PNG".into()));
        }
        let side = |n: usize| u32::try_from(n).ok().filter(|&x| x <= i32::MAX as u32);
        let (Some(width), Some(height)) = (side(self.vertices), side(self.frames)) else {
            return Err(BakeError::BadFile("image side over 2^31 - 1".into()));
        };
        let mut enc = png::Encoder::new(w, width, height);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Sixteen);
        if channel == Channel::Positions {
            let b = self.bounds;
            let text: Vec<String> = b
                .min
                .iter()
                .chain(&b.max)
                .map(|x| format!("{x:?}"))
                .collect();
            enc.add_text_chunk(PNG_BOUNDS_KEY.into(), text.join(" "))
                .map_err(|e| err(&e))?;
        }
        let mut writer = enc.write_header().map_err(|e| err(&e))?;
        // PNG stores 16-bit samples big endian.
        let bytes: Vec<u8> = data
            .iter()
            .flatten()
            .flat_map(|c| c.to_be_bytes())
            .collect();
        writer.write_image_data(&bytes).map_err(|e| err(&e))?;
        writer.finish().map_err(|e| err(&e))
    }

    /// De-quantized position of texel `i` (row-major).
    #[must_use]
    pub fn position(&self, i: usize) -> Option<[f32; 3]> {
        self.positions
            .get(i)
            .map(|q| dequantize_position(*q, &self.bounds))
    }

    /// De-quantized normal of texel `i` (row-major).
    #[must_use]
    pub fn normal(&self, i: usize) -> Option<[f32; 3]> {
        self.normals.get(i).map(|q| dequantize_normal(*q))
    }

    /// The de-quantized arrays as a [`Bake`] with `like`'s rows, names
    /// and times: what a GPU plays back from the PNGs.
    #[must_use]
    pub fn dequantize(&self, like: &Bake) -> Bake {
        let b = self.bounds;
        Bake {
            positions: self
                .positions
                .iter()
                .map(|q| dequantize_position(*q, &b))
                .collect(),
            normals: self.normals.iter().map(|q| dequantize_normal(*q)).collect(),
            ..like.clone()
        }
    }
}

/// Errors of a bake against live skinning; lengths in model units (metres
/// for glTF), angles in degrees. "Mid-frame" is the middle of every pair
/// of rows, where playback interpolates and the bake is furthest from
/// live skinning.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BakeReport {
    /// Largest distance between a baked row and live skinning at the row's
    /// time (0 up to rounding: the rows are live skinning).
    pub frame_position: f32,
    /// Largest distance between a de-quantized PNG texel and the baked
    /// `f32` position, over all vertices and frames.
    pub quantization_position: f32,
    /// Largest angle between a de-quantized PNG normal and the baked one.
    pub quantization_normal_deg: f32,
    /// Largest distance between the `f32` bake played at a mid-frame and
    /// live skinning there.
    pub mid_position: f32,
    /// Largest normal angle at mid-frames, `f32` bake against live.
    pub mid_normal_deg: f32,
    /// Largest distance at mid-frames, the de-quantized PNG bake against
    /// live: what a GPU playing the PNGs shows at worst.
    pub mid_position_quantized: f32,
    /// Largest normal angle at mid-frames, de-quantized bake against live.
    pub mid_normal_quantized_deg: f32,
    /// Half the diagonal of a quantization step, `|step| / 2`: the bound
    /// on a de-quantized position's distance from the baked one (each
    /// axis rounds to the nearest code, within half a step).
    pub half_step: f32,
}

/// Measures `bake` (and its quantization `quantized`) against `live`
/// skinning, which must be the skinning it was baked from.
///
/// # Errors
/// [`BakeError::BadFile`] when the bake, its quantization and `live` do
/// not have the same size; those of [`LiveSkin::skin`].
pub fn measure(
    bake: &Bake,
    quantized: &Quantized,
    live: &mut LiveSkin<'_>,
) -> Result<BakeReport, BakeError> {
    let n = bake.vertices;
    if live.vertices() != n
        || quantized.positions.len() != bake.positions.len()
        || quantized.normals.len() != bake.normals.len()
        || bake.positions.len() != bake.frames * n
    {
        return Err(BakeError::BadFile(
            "bake, quantization and mesh differ in size".into(),
        ));
    }
    let normals = !bake.normals.is_empty() && live.has_normals();
    let deq = quantized.dequantize(bake);
    let mut r = BakeReport {
        half_step: length(bake.bounds.step()) * 0.5,
        ..BakeReport::default()
    };
    let deg = f32::to_degrees;
    for (p, q) in bake.positions.iter().zip(&deq.positions) {
        r.quantization_position = r.quantization_position.max(distance(*p, *q));
    }
    for (a, b) in bake.normals.iter().zip(&deq.normals) {
        r.quantization_normal_deg = r.quantization_normal_deg.max(deg(angle(*a, *b)));
    }
    let mut lp = vec![[0.0f32; 3]; n];
    let mut ln = vec![[0.0f32; 3]; if normals { n } else { 0 }];
    let mut bp = vec![[0.0f32; 3]; n];
    let mut bn = vec![[0.0f32; 3]; ln.len()];
    for f in 0..bake.frames {
        live.skin(
            bake.row_time(f),
            &mut lp,
            normals.then_some(ln.as_mut_slice()),
        )?;
        for (a, b) in lp.iter().zip(bake.row(f)) {
            r.frame_position = r.frame_position.max(distance(*a, *b));
        }
        if f + 1 == bake.frames {
            break;
        }
        let t = 0.5 * (bake.row_time(f) + bake.row_time(f + 1));
        live.skin(t, &mut lp, normals.then_some(ln.as_mut_slice()))?;
        for (src, pos, nrm) in [
            (bake, &mut r.mid_position, &mut r.mid_normal_deg),
            (
                &deq,
                &mut r.mid_position_quantized,
                &mut r.mid_normal_quantized_deg,
            ),
        ] {
            src.sample(t, &mut bp, normals.then_some(bn.as_mut_slice()));
            for (a, b) in lp.iter().zip(&bp) {
                *pos = pos.max(distance(*a, *b));
            }
            for (a, b) in ln.iter().zip(&bn) {
                *nrm = nrm.max(deg(angle(*a, *b)));
            }
        }
    }
    Ok(r)
}
