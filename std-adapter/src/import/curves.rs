//! Keyframe curves kept as curves: glTF animation channels without
//! resampling, and the owned storage behind [`sinew_core::track::curve`].
//!
//! The clip importers resample every channel into uniform frames, which is
//! what a skeleton pose needs; a material parameter, a blend-shape weight or
//! a camera's field of view is better kept as authored, with its own key
//! times and interpolation. [`load_gltf_curves`] reads every channel of every
//! glTF animation that way:
//!
//! - one [`ChannelCurve`] per channel: the target node (index and name), the
//!   path, and an [`OwnedCurve`] of `[f32; 3]` (translation, scale) or
//!   [`Quat`] (rotation, `[x, y, z, w]` as in the file, not normalised);
//! - a morph-weights channel holds every target's weight at each key; it
//!   becomes one `f32` curve per target ([`ChannelPath::Weight`]);
//! - interpolation: STEP → [`Interpolation::Step`], LINEAR →
//!   [`Interpolation::Linear`] (rotations: [`Interpolation::Slerp`], which
//!   is what the glTF specification asks for LINEAR rotations), CUBICSPLINE →
//!   [`Interpolation::CubicSpline`] with glTF's in-tangent / value /
//!   out-tangent triplets kept as they are (tangents per second);
//! - key times are the file's, in seconds (not shifted to start at zero);
//!   normalised integer values are decoded as the specification says
//!   (`c / 127`, `c / 255`, `c / 32767`, `c / 65535`, signed ones clamped
//!   at −1).
//!
//! [`OwnedCurve::curve`] gives the zero-copy [`Curve`] view to sample.
//! Everything read from a size in the file is charged to one memory budget
//! per import ([`CurveOptions::memory_budget`]) before it is allocated, and
//! every malformed channel is an [`ImportError`] at its JSON path.

use std::fmt;
use std::path::Path;

use gltf::json::accessor::{ComponentType, GenericComponentType, Type};
use gltf::json::animation::{Interpolation as GltfInterpolation, Property};
use gltf::json::validation::Checked;
use sinew_core::track::curve::{Curve, CurveValue, Interpolation};
use sinew_core::{Error as CoreError, Quat};

use super::gltf::{self as gltf_import, Doc};
use super::{fmt_count, read_file, ImportError, DEFAULT_MEMORY_BUDGET};

/// A keyframe curve that owns its keys: key times, key values (three per key
/// for [`Interpolation::CubicSpline`], in glTF's in-tangent / value /
/// out-tangent order) and the interpolation, checked once by
/// [`OwnedCurve::new`] as [`Curve::new`] checks them.
#[derive(Clone, Debug, PartialEq)]
pub struct OwnedCurve<V: CurveValue> {
    times: Vec<f32>,
    values: Vec<V>,
    interpolation: Interpolation,
}

impl<V: CurveValue> OwnedCurve<V> {
    /// Takes the keys after checking them as [`Curve::new`] does.
    ///
    /// # Errors
    /// Those of [`Curve::new`]: no keys, times not finite or not strictly
    /// increasing, values not one (or three) per time, a NaN or infinite
    /// value, a zero rotation key.
    pub fn new(
        times: Vec<f32>,
        values: Vec<V>,
        interpolation: Interpolation,
    ) -> Result<Self, CoreError> {
        Curve::new(&times, &values, interpolation)?;
        Ok(OwnedCurve {
            times,
            values,
            interpolation,
        })
    }

    /// The zero-copy view to sample. Making it checks the keys again
    /// (O(keys)); hold it for as long as you sample.
    #[must_use]
    pub fn curve(&self) -> Curve<'_, V> {
        match Curve::new(&self.times, &self.values, self.interpolation) {
            Ok(c) => c,
            // The keys were checked by `new` and cannot change since.
            Err(e) => unreachable!("an OwnedCurve's keys were checked when it was made: {e}"),
        }
    }

    /// Key times in seconds (or ozz ratios, see [`super::ozz::load_tracks`]).
    #[must_use]
    pub fn times(&self) -> &[f32] {
        &self.times
    }

    /// Key values (three per key for [`Interpolation::CubicSpline`]).
    #[must_use]
    pub fn values(&self) -> &[V] {
        &self.values
    }

    /// The interpolation mode.
    #[must_use]
    pub fn interpolation(&self) -> Interpolation {
        self.interpolation
    }

    /// Number of keys (at least 1).
    #[must_use]
    pub fn len(&self) -> usize {
        self.times.len()
    }

    /// Always false: a curve has at least one key.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }
}

/// A curve of one of the key types a file can hold.
#[derive(Clone, Debug, PartialEq)]
pub enum CurveData {
    /// One float per key (morph weights, ozz float tracks).
    Float(OwnedCurve<f32>),
    /// Two floats per key (ozz float2 tracks).
    Float2(OwnedCurve<[f32; 2]>),
    /// Three floats per key (translations, scales, ozz float3 tracks).
    Float3(OwnedCurve<[f32; 3]>),
    /// Four floats per key, interpolated component-wise (ozz float4 tracks).
    Float4(OwnedCurve<[f32; 4]>),
    /// Rotations `[x, y, z, w]` (glTF rotations, ozz quaternion tracks).
    Rotation(OwnedCurve<Quat>),
}

/// `CurveData`'s per-type accessors as `[f32; 4]`, unused components 0.
trait Components: CurveValue {
    const N: usize;
    fn to4(self) -> [f32; 4];
}

impl Components for f32 {
    const N: usize = 1;
    fn to4(self) -> [f32; 4] {
        [self, 0.0, 0.0, 0.0]
    }
}

impl Components for [f32; 2] {
    const N: usize = 2;
    fn to4(self) -> [f32; 4] {
        [self[0], self[1], 0.0, 0.0]
    }
}

impl Components for [f32; 3] {
    const N: usize = 3;
    fn to4(self) -> [f32; 4] {
        [self[0], self[1], self[2], 0.0]
    }
}

impl Components for [f32; 4] {
    const N: usize = 4;
    fn to4(self) -> [f32; 4] {
        self
    }
}

impl Components for Quat {
    const N: usize = 4;
    fn to4(self) -> [f32; 4] {
        self.to_array()
    }
}

/// Calls `$f` with the `OwnedCurve` of whichever variant `$d` is.
macro_rules! each {
    ($d:expr, $c:ident => $f:expr) => {
        match $d {
            CurveData::Float($c) => $f,
            CurveData::Float2($c) => $f,
            CurveData::Float3($c) => $f,
            CurveData::Float4($c) => $f,
            CurveData::Rotation($c) => $f,
        }
    };
}

fn key4<V: Components>(c: &OwnedCurve<V>, k: usize) -> Option<[f32; 4]> {
    let i = match c.interpolation {
        Interpolation::CubicSpline => k.checked_mul(3)?.checked_add(1)?,
        _ => k,
    };
    c.values.get(i).map(|v| v.to4())
}

fn tangents4<V: Components>(c: &OwnedCurve<V>, k: usize) -> Option<([f32; 4], [f32; 4])> {
    if c.interpolation != Interpolation::CubicSpline {
        return None;
    }
    let i = k.checked_mul(3)?;
    Some((c.values.get(i)?.to4(), c.values.get(i + 2)?.to4()))
}

impl CurveData {
    /// Components per key: 1, 2, 3 or 4 (rotations: 4, `x, y, z, w`).
    #[must_use]
    pub fn components(&self) -> usize {
        fn n<V: Components>(_: &OwnedCurve<V>) -> usize {
            V::N
        }
        each!(self, c => n(c))
    }

    /// Key times.
    #[must_use]
    pub fn times(&self) -> &[f32] {
        each!(self, c => c.times())
    }

    /// The interpolation mode.
    #[must_use]
    pub fn interpolation(&self) -> Interpolation {
        each!(self, c => c.interpolation())
    }

    /// The value at time `t` as [`Curve::sample`] gives it, in the first
    /// [`CurveData::components`] entries (the others 0). Rotations come
    /// out normalised, as the curve returns them. O(keys), for tools and
    /// tests: a player holds [`OwnedCurve::curve`]'s view instead.
    #[must_use]
    pub fn sample(&self, t: f32) -> [f32; 4] {
        each!(self, c => c.curve().sample(t).to4())
    }

    /// Key `k`'s value (the middle of the triplet for cubic splines), or
    /// `None` past the last key. Rotations as stored, not normalised.
    #[must_use]
    pub fn key(&self, k: usize) -> Option<[f32; 4]> {
        each!(self, c => key4(c, k))
    }

    /// Key `k`'s in- and out-tangents (per second) of a cubic spline;
    /// `None` for other modes or past the last key.
    #[must_use]
    pub fn tangents(&self, k: usize) -> Option<([f32; 4], [f32; 4])> {
        each!(self, c => tangents4(c, k))
    }
}

/// What a glTF channel animates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChannelPath {
    /// The node's translation (`[f32; 3]`).
    Translation,
    /// The node's rotation (quaternion).
    Rotation,
    /// The node's scale (`[f32; 3]`).
    Scale,
    /// One morph target's weight (`f32`) of the node's mesh.
    Weight {
        /// Morph target index.
        target: usize,
    },
}

impl fmt::Display for ChannelPath {
    /// `translation`, `rotation`, `scale` or `weights/<target>`, the way
    /// the `sinew plot --channel` option names them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChannelPath::Translation => f.write_str("translation"),
            ChannelPath::Rotation => f.write_str("rotation"),
            ChannelPath::Scale => f.write_str("scale"),
            ChannelPath::Weight { target } => write!(f, "weights/{target}"),
        }
    }
}

/// One curve of a glTF animation: a channel, or one morph target of a
/// weights channel.
#[derive(Clone, Debug, PartialEq)]
pub struct ChannelCurve {
    /// Index of the channel in the animation's `channels`.
    pub channel: usize,
    /// Target node index.
    pub node: usize,
    /// Target node name; empty when the node has none.
    pub node_name: String,
    /// What the curve animates.
    pub path: ChannelPath,
    /// The keys: [`CurveData::Float3`] for translations and scales,
    /// [`CurveData::Rotation`] for rotations, [`CurveData::Float`] for
    /// weights; times in seconds.
    pub curve: CurveData,
}

impl ChannelCurve {
    /// `<node name or index>/<path>`, e.g. `Hips/rotation` or
    /// `7/weights/2`.
    #[must_use]
    pub fn label(&self) -> String {
        if self.node_name.is_empty() {
            format!("{}/{}", self.node, self.path)
        } else {
            format!("{}/{}", self.node_name, self.path)
        }
    }
}

/// Every curve of one glTF animation, in channel order (a weights channel's
/// targets in target order).
#[derive(Clone, Debug, PartialEq)]
pub struct AnimationCurves {
    /// Index in the document's `animations`.
    pub index: usize,
    /// The animation's name, or `animation<index>` when it has none.
    pub name: String,
    /// Its curves.
    pub channels: Vec<ChannelCurve>,
}

/// Options of [`gltf_curves_from_slice`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CurveOptions {
    /// Bytes the import may allocate (buffers, decoded accessors, curves);
    /// [`DEFAULT_MEMORY_BUDGET`] by default.
    pub memory_budget: usize,
}

impl Default for CurveOptions {
    fn default() -> Self {
        CurveOptions {
            memory_budget: DEFAULT_MEMORY_BUDGET,
        }
    }
}

/// Every animation channel of a `.gltf` or `.glb` file as curves (see the
/// [module](self) docs), with the default options; external buffers are
/// resolved relative to the file's folder.
///
/// # Errors
/// The file cannot be read, or anything [`gltf_curves_from_slice`] reports.
pub fn load_gltf_curves(path: &Path) -> Result<Vec<AnimationCurves>, ImportError> {
    let bytes = read_file(path)?;
    gltf_curves_from_slice(&bytes, path, path.parent(), &CurveOptions::default())
}

/// [`load_gltf_curves`] of a document held in memory; `name` and `base_dir`
/// as for [`gltf_import::from_slice`].
///
/// # Errors
/// An [`ImportError`] at the JSON path at fault: the container and JSON
/// errors of [`gltf_import::from_slice`]; a channel whose node, sampler,
/// path or interpolation is missing or unknown; accessors of the wrong type
/// or component type (key times must be `FLOAT` scalars; values `FLOAT` or
/// normalised integers), out of bounds, or holding NaN or infinity; a
/// sampler without keys; key times that do not increase strictly; an output
/// whose count is not one value (CUBICSPLINE: three) per key and morph
/// target, in particular a CUBICSPLINE count that is not a multiple of 3; a
/// zero rotation key; a weights channel on a node without morph targets;
/// anything that would take the import past `opts.memory_budget`.
pub fn gltf_curves_from_slice(
    bytes: &[u8],
    name: &Path,
    base_dir: Option<&Path>,
    opts: &CurveOptions,
) -> Result<Vec<AnimationCurves>, ImportError> {
    let mut doc = gltf_import::open(bytes, name, base_dir, opts.memory_budget)?;
    let mut out = Vec::new();
    for a in 0..doc.root.animations.len() {
        out.push(animation(&mut doc, a)?);
    }
    Ok(out)
}

/// A channel's references, copied out of the document.
struct ChannelRef {
    node: usize,
    path: Checked<Property>,
    sampler: usize,
}

fn animation(doc: &mut Doc<'_>, a: usize) -> Result<AnimationCurves, ImportError> {
    let anim = &doc.root.animations[a];
    let name = anim
        .name
        .clone()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| format!("animation{a}"));
    let refs: Vec<ChannelRef> = anim
        .channels
        .iter()
        .map(|c| ChannelRef {
            node: c.target.node.value(),
            path: c.target.path,
            sampler: c.sampler.value(),
        })
        .collect();
    let mut channels = Vec::new();
    for (c, r) in refs.iter().enumerate() {
        channel(doc, a, c, r, &mut channels)?;
    }
    Ok(AnimationCurves {
        index: a,
        name,
        channels,
    })
}

/// Reads channel `c` of animation `a` into `out` (several curves for weights).
fn channel(
    doc: &mut Doc<'_>,
    a: usize,
    c: usize,
    r: &ChannelRef,
    out: &mut Vec<ChannelCurve>,
) -> Result<(), ImportError> {
    let cpath = format!("/animations/{a}/channels/{c}");
    let node = doc.node_ref(r.node, format!("{cpath}/target/node"))?;
    let Checked::Valid(prop) = r.path else {
        return Err(doc.err(
            format!("{cpath}/target/path"),
            "unknown animation target path",
        ));
    };
    let Some(sampler) = doc.root.animations[a].samplers.get(r.sampler) else {
        return Err(doc.err(
            format!("{cpath}/sampler"),
            format!("refers to missing sampler {}", r.sampler),
        ));
    };
    let (input, output, interp) = (
        sampler.input.value(),
        sampler.output.value(),
        sampler.interpolation,
    );
    let spath = format!("/animations/{a}/samplers/{}", r.sampler);
    let Checked::Valid(gltf_interp) = interp else {
        return Err(doc.err(format!("{spath}/interpolation"), "unknown interpolation"));
    };
    let node_name = doc
        .root
        .nodes
        .get(node)
        .and_then(|n| n.name.clone())
        .unwrap_or_default();
    // Values per key and component type of the output.
    let (width, ty) = match prop {
        Property::Translation | Property::Scale => (1, Type::Vec3),
        Property::Rotation => (1, Type::Vec4),
        Property::MorphTargetWeights => (
            doc.morph_target_count(node, &format!("{cpath}/target/node"))?,
            Type::Scalar,
        ),
    };
    let interpolation = match (gltf_interp, prop) {
        (GltfInterpolation::Step, _) => Interpolation::Step,
        (GltfInterpolation::Linear, Property::Rotation) => Interpolation::Slerp,
        (GltfInterpolation::Linear, _) => Interpolation::Linear,
        (GltfInterpolation::CubicSpline, _) => Interpolation::CubicSpline,
    };
    let times = key_times(doc, input, &spath)?;
    let keys = times.len();
    let per_key = if interpolation == Interpolation::CubicSpline {
        3
    } else {
        1
    };
    let opath = format!("{spath}/output");
    let (values, _, count) = doc.read_floats(output, &opath, &[ty], false)?;
    if per_key == 3 && !count.is_multiple_of(3) {
        return Err(doc.err(
            opath,
            format!(
                "CUBICSPLINE output has {count} elements, not a multiple of 3 (in-tangent, value and out-tangent per key)"
            ),
        ));
    }
    let expected = (keys as u64) * per_key as u64 * width as u64;
    if count as u64 != expected {
        let targets = if ty == Type::Scalar {
            format!(" of {width} morph weights")
        } else {
            String::new()
        };
        return Err(doc.err(
            opath,
            format!(
                "output has {count} elements, expected {expected} for {keys} {gltf_interp:?} keys{targets}{}",
                if per_key == 3 { " (3 per key)" } else { "" }
            ),
        ));
    }
    let curve_err = |doc: &Doc<'_>, e: CoreError| doc.err(spath.clone(), format!("{e}"));
    let make = |path: ChannelPath, curve: CurveData| ChannelCurve {
        channel: c,
        node,
        node_name: node_name.clone(),
        path,
        curve,
    };
    match prop {
        Property::Translation | Property::Scale => {
            let v = rows::<3>(doc, &values, &opath)?;
            let curve = OwnedCurve::new(times, v, interpolation).map_err(|e| curve_err(doc, e))?;
            let path = if prop == Property::Scale {
                ChannelPath::Scale
            } else {
                ChannelPath::Translation
            };
            out.push(make(path, CurveData::Float3(curve)));
        }
        Property::Rotation => {
            let q = rows::<4>(doc, &values, &opath)?;
            if let Some(k) = q
                .iter()
                .skip(usize::from(per_key == 3))
                .step_by(per_key)
                .position(|q| q.iter().all(|&c| c == 0.0))
            {
                return Err(doc.err(
                    format!("/accessors/{output}"),
                    format!("rotation key {k} is a zero quaternion"),
                ));
            }
            let mut v = doc.alloc::<Quat>(
                q.len(),
                format_args!("{} rotation keys", fmt_count(q.len() as u64)),
                &opath,
            )?;
            v.extend(q.iter().map(|c| Quat::new(c[0], c[1], c[2], c[3])));
            doc.free(q);
            let curve = OwnedCurve::new(times, v, interpolation).map_err(|e| curve_err(doc, e))?;
            out.push(make(ChannelPath::Rotation, CurveData::Rotation(curve)));
        }
        Property::MorphTargetWeights => {
            // Key k, slot s (tangent, value, tangent) holds every target's
            // weight in a row of `width`: one curve per target.
            let slots = keys * per_key;
            for target in 0..width {
                let mut t = doc.alloc::<f32>(
                    keys,
                    format_args!(
                        "morph target {target}: {} key times",
                        fmt_count(keys as u64)
                    ),
                    &opath,
                )?;
                t.extend_from_slice(&times);
                let mut v = doc.alloc::<f32>(
                    slots,
                    format_args!("morph target {target}: {} weights", fmt_count(slots as u64)),
                    &opath,
                )?;
                v.extend((0..slots).map(|i| values[i * width + target]));
                let curve = OwnedCurve::new(t, v, interpolation).map_err(|e| curve_err(doc, e))?;
                out.push(make(
                    ChannelPath::Weight { target },
                    CurveData::Float(curve),
                ));
            }
            doc.free(times);
        }
    }
    doc.free(values);
    Ok(())
}

/// The key times of accessor `input`: `FLOAT` scalars, at least one,
/// strictly increasing (NaN and infinity are refused by the reader).
fn key_times(doc: &mut Doc<'_>, input: usize, spath: &str) -> Result<Vec<f32>, ImportError> {
    let ipath = format!("{spath}/input");
    if let Some(acc) = doc.root.accessors.get(input) {
        if let Checked::Valid(GenericComponentType(component)) = acc.component_type {
            if component != ComponentType::F32 {
                return Err(doc.err(
                    format!("/accessors/{input}/componentType"),
                    format!("key times must be FLOAT components, found {component:?}"),
                ));
            }
        }
    }
    let (times, _, keys) = doc.read_floats(input, &ipath, &[Type::Scalar], false)?;
    if keys == 0 {
        return Err(doc.err(ipath, "sampler has no keyframes"));
    }
    if let Some(k) = times.windows(2).position(|w| w[1] <= w[0]) {
        return Err(doc.err(
            format!("/accessors/{input}"),
            format!(
                "key times must increase strictly: key {} at {} s follows key {k} at {} s",
                k + 1,
                times[k + 1],
                times[k]
            ),
        ));
    }
    Ok(times)
}

/// `flat` as rows of `N`, charged to the budget.
fn rows<const N: usize>(
    doc: &mut Doc<'_>,
    flat: &[f32],
    path: &str,
) -> Result<Vec<[f32; N]>, ImportError> {
    let count = flat.len() / N;
    let mut out = doc.alloc(
        count,
        format_args!("{} keys of {N} components", fmt_count(count as u64)),
        path,
    )?;
    out.extend(
        flat.chunks_exact(N)
            .map(|c| std::array::from_fn::<f32, N, _>(|i| c[i])),
    );
    Ok(out)
}
