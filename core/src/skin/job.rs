//! The skinning job: one entry point for every method (LBS, DQS, their
//! per-vertex mix), influence count (four or eight per vertex, with or
//! without a DQS pair table) and vertex layout (separate arrays or
//! interleaved buffers). It validates sizes, then hands the work to the
//! kernels in [`super::kernel`], which are monomorphised for each
//! combination, so the job adds a few O(1) checks and one `match` per call.

use super::kernel::{self, check_mix};
use super::layout::{self, Plan};
use super::{
    CheckedInfluences, DualQuat, Mat3x4, SkinOutput, SkinVertices, StridedVertices,
    StridedVerticesMut,
};
use crate::error::Error;
use crate::soa::check_len;

/// How a [`SkinJob`] transforms vertices, with the palettes it reads.
///
/// Every palette has one entry per joint: exactly the
/// [`joint_count`](CheckedInfluences::joint_count) the influences were
/// checked against.
#[derive(Clone, Copy, Debug)]
pub enum SkinMethod<'a> {
    /// Linear blend skinning: each vertex is transformed by
    /// `Σ w_k palette[j_k]`. Positions are transformed as points; normals
    /// and tangent directions by the blended 3x3 part, not renormalised;
    /// tangent `w` is copied.
    Lbs {
        /// An [`lbs_palette`](super::lbs_palette).
        palette: &'a [Mat3x4],
    },
    /// Dual quaternion skinning: per vertex, each influence's dual
    /// quaternion is sign-aligned with the first influence's, blended by
    /// weight, normalised by the blended real part's length, and applied;
    /// normals and tangent directions are rotated by the real part only. A
    /// blended real part of length 0 (only possible with influences exactly
    /// 180° apart) gives NaN. Influences with a DQS pair table
    /// ([`CheckedInfluences::with_dqs_pairs`]) skip the per-vertex sign test
    /// when the pose allows, with the same result.
    Dqs {
        /// A [`dqs_palette`](super::dqs_palette).
        palette: &'a [DualQuat],
    },
    /// Per-vertex mix of LBS and DQS: `lbs + mix[v] (dqs - lbs)` for
    /// positions, normals and tangent directions (0 = pure LBS, 1 = pure
    /// DQS), e.g. to skin with LBS the vertices of joints that
    /// [`dqs_palette_with_scale`](super::dqs_palette_with_scale) reports as
    /// non-rigid.
    Mixed {
        /// The LBS palette.
        lbs: &'a [Mat3x4],
        /// The DQS palette of the same joints (e.g. from the same models
        /// and inverse binds).
        dqs: &'a [DualQuat],
        /// One mix weight per vertex, in `0..=1`.
        mix: &'a [f32],
    },
}

/// The vertex attributes a [`SkinJob`] reads and writes: both sides as
/// separate arrays, or both as interleaved buffers.
///
/// Positions are always read and written; normals and tangents are
/// written when the output names them (and then read from the input,
/// which must have them). An input attribute that the output does not
/// name is checked for length but not read. Output entries of attributes
/// that are not requested are not written; every vertex of every
/// requested one is.
#[derive(Debug)]
pub enum SkinAttributes<'a> {
    /// One array per attribute (the layout of glTF accessors).
    Arrays {
        /// Bind-space attributes, one entry per vertex.
        input: SkinVertices<'a>,
        /// Skinned attributes, one entry per vertex.
        output: SkinOutput<'a>,
    },
    /// Interleaved vertex buffers (e.g. a render buffer); the two sides
    /// may have different strides and offsets, and only the floats of the
    /// attributes `output` names are written (UVs, colours and other
    /// floats are left alone).
    Strided {
        /// Bind-space vertices, `vertices * stride` floats.
        input: StridedVertices<'a>,
        /// Skinned vertices, `vertices * stride` floats.
        output: StridedVerticesMut<'a>,
    },
}

impl<'a> SkinAttributes<'a> {
    /// Positions only, as separate arrays: `input` bind-space positions
    /// skinned into `output` ([`SkinAttributes::Arrays`] of
    /// [`SkinVertices::positions`] and [`SkinOutput::positions`]).
    ///
    /// ```
    /// use sinew_core::skin::SkinAttributes;
    ///
    /// let positions = [[0.0, 1.0, 0.0]; 3];
    /// let mut skinned = [[0.0; 3]; 3];
    /// let attributes = SkinAttributes::positions(&positions, &mut skinned);
    /// let SkinAttributes::Arrays { input, output } = attributes else { unreachable!() };
    /// assert!(input.normals.is_none() && output.normals.is_none());
    /// ```
    #[inline]
    #[must_use]
    pub fn positions(input: &'a [[f32; 3]], output: &'a mut [[f32; 3]]) -> Self {
        SkinAttributes::Arrays {
            input: SkinVertices::positions(input),
            output: SkinOutput::positions(output),
        }
    }
}

/// One skinning call: a [`SkinMethod`] applied through a mesh's
/// [`CheckedInfluences`] to its [`SkinAttributes`], in the manner of
/// ozz-animation's `SkinningJob` (build it, then [`run`](Self::run) it).
///
/// The vertex count is `influences.len()`. The influences are checked
/// when the handle is built ([`CheckedInfluences::new`] for four per
/// vertex, [`CheckedInfluences::new8`] for eight), usually once per mesh
/// at load time; influences rewritten between frames (streaming, LOD
/// swaps, editing tools) build a new handle before the job, an O(vertices)
/// check. The job itself then checks only sizes: O(1), plus O(vertices)
/// for the mix weights of [`SkinMethod::Mixed`].
///
/// ```
/// use sinew_core::skin::{CheckedInfluences, Mat3x4, SkinAttributes, SkinJob, SkinMethod};
///
/// let positions = [[1.0, 2.0, 3.0]; 5];
/// let joints = [[0, 1, 0, 0]; 5];
/// let weights = [[0.5, 0.5, 0.0, 0.0]; 5];
/// let palette = [Mat3x4::IDENTITY; 2];
/// // Once per mesh:
/// let influences = CheckedInfluences::new(&joints, &weights, palette.len())?;
/// // Every frame:
/// let mut skinned = [[0.0; 3]; 5];
/// SkinJob {
///     method: SkinMethod::Lbs { palette: &palette },
///     influences: &influences,
///     attributes: SkinAttributes::positions(&positions, &mut skinned),
/// }
/// .run()?;
/// assert_eq!(skinned, positions);
/// // The same job, built by the method's constructor:
/// let attributes = SkinAttributes::positions(&positions, &mut skinned);
/// SkinJob::lbs(&palette, &influences, attributes).run()?;
/// # Ok::<(), sinew_core::Error>(())
/// ```
#[derive(Debug)]
pub struct SkinJob<'a> {
    /// The method and its palettes.
    pub method: SkinMethod<'a>,
    /// The mesh's influences (four or eight per vertex, with or without a
    /// DQS pair table), checked against the palettes' joint count.
    pub influences: &'a CheckedInfluences<'a>,
    /// The attributes read and written.
    pub attributes: SkinAttributes<'a>,
}

impl<'a> SkinJob<'a> {
    /// Linear blend skinning ([`SkinMethod::Lbs`]) with `palette` (an
    /// [`lbs_palette`](super::lbs_palette)); see the type's example.
    #[inline]
    #[must_use]
    pub fn lbs(
        palette: &'a [Mat3x4],
        influences: &'a CheckedInfluences<'a>,
        attributes: SkinAttributes<'a>,
    ) -> Self {
        SkinJob {
            method: SkinMethod::Lbs { palette },
            influences,
            attributes,
        }
    }

    /// Dual quaternion skinning ([`SkinMethod::Dqs`]) with `palette` (a
    /// [`dqs_palette`](super::dqs_palette)).
    ///
    /// ```
    /// use sinew_core::skin::{CheckedInfluences, DualQuat, SkinAttributes, SkinJob};
    /// use sinew_core::{Quat, Vec3};
    ///
    /// let positions = [[1.0, 0.0, 0.0]; 2];
    /// let (joints, weights) = ([[0, 0, 0, 0]; 2], [[1.0, 0.0, 0.0, 0.0]; 2]);
    /// let up = Vec3::new(0.0, 2.0, 0.0);
    /// let palette = [DualQuat::from_rotation_translation(Quat::IDENTITY, up)]; // one joint
    /// let influences = CheckedInfluences::new(&joints, &weights, palette.len())?;
    /// let mut skinned = [[0.0; 3]; 2];
    /// let attributes = SkinAttributes::positions(&positions, &mut skinned);
    /// SkinJob::dqs(&palette, &influences, attributes).run()?;
    /// assert!(skinned.iter().all(|p| (p[0] - 1.0).abs() < 1e-6 && (p[1] - 2.0).abs() < 1e-6));
    /// # Ok::<(), sinew_core::Error>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn dqs(
        palette: &'a [DualQuat],
        influences: &'a CheckedInfluences<'a>,
        attributes: SkinAttributes<'a>,
    ) -> Self {
        SkinJob {
            method: SkinMethod::Dqs { palette },
            influences,
            attributes,
        }
    }
}

impl SkinJob<'_> {
    /// Checks every size (and the mix weights) without skinning.
    ///
    /// # Errors
    /// In this order:
    /// - [`Error::BadLength`] `"palette"`: the palette (for
    ///   [`SkinMethod::Mixed`], `lbs`) does not have
    ///   `influences.joint_count()` entries;
    /// - [`SkinMethod::Mixed`]: [`Error::BadLength`] `"dqs palette"` (not
    ///   as long as `lbs`) and `"mix"` (not one per vertex), then
    ///   [`Error::InvalidMixWeight`] (NaN or outside `0..=1`, naming the
    ///   first such vertex);
    /// - [`SkinAttributes::Arrays`]: [`Error::BadLength`] `"positions"`,
    ///   `"normals"`, `"tangents"` (present input arrays, and input arrays
    ///   the output asks for: a missing one has length 0), then
    ///   `"output positions"`, `"output normals"`, `"output tangents"`,
    ///   each not one entry per vertex;
    /// - [`SkinAttributes::Strided`]: [`Error::InvalidLayout`] (a stride of
    ///   0, an attribute that does not fit in its stride, overlapping
    ///   output attributes, a buffer size that overflows), then
    ///   [`Error::BadLength`] `"source vertices"` / `"destination
    ///   vertices"` (not `vertices * stride` floats) and `"normals"` /
    ///   `"tangents"` (the output asks for an attribute the input lacks).
    pub fn validate(&self) -> Result<(), Error> {
        self.plan().map(|_| ())
    }

    /// [`validate`](Self::validate), returning what the kernels compute.
    fn plan(&self) -> Result<Plan, Error> {
        let infl = self.influences;
        match self.method {
            SkinMethod::Lbs { palette } => infl.check_palette(palette.len())?,
            SkinMethod::Dqs { palette } => infl.check_palette(palette.len())?,
            SkinMethod::Mixed { lbs, dqs, mix } => {
                infl.check_palette(lbs.len())?;
                check_len("dqs palette", lbs.len(), dqs.len())?;
                check_mix(infl.len(), mix)?;
            }
        }
        match &self.attributes {
            SkinAttributes::Arrays { input, output } => {
                layout::check_arrays(infl.len(), input, output)
            }
            SkinAttributes::Strided { input, output } => {
                layout::check_strided(infl.len(), input, output)
            }
        }
    }

    /// Validates the job, then skins every vertex into the output, with
    /// the SIMD kernels that the module docs describe (the
    /// [`reference`](super::reference) functions are the scalar
    /// specification of the same results, within 1e-5).
    ///
    /// # Errors
    /// Those of [`validate`](Self::validate); on error the output is
    /// untouched.
    pub fn run(&mut self) -> Result<(), Error> {
        let plan = self.plan()?;
        let (method, infl) = (&self.method, self.influences);
        match &mut self.attributes {
            SkinAttributes::Arrays { input, output } => {
                kernel::dispatch(method, infl, input, output, plan);
            }
            SkinAttributes::Strided { input, output } => {
                kernel::dispatch(method, infl, input, output, plan);
            }
        }
        Ok(())
    }
}
