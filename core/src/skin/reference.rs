//! Scalar reference implementations: the readable specification of the
//! skinning kernels, one vertex (or joint) at a time. The palette functions
//! have the signatures of the SIMD ones; each vertex function is the scalar
//! twin of one form of a [`super::SkinJob`] (a [`super::SkinMethod`] over
//! one [`super::SkinAttributes`] layout, the `*_checked` ones with a
//! [`super::CheckedInfluences`], the others checking four influences
//! themselves), with the same validation and errors. Results agree with
//! the SIMD kernels within 1e-5.

use super::kernel::check_mix;
use super::layout::{self, Plan, Sink, Source};
use super::{
    CheckedInfluences, DualQuat, Influences, Mat3x4, SkinInput, SkinOutput, SkinVertices,
    StridedVertices, StridedVerticesMut,
};
use crate::error::Error;
use crate::math::{Mat4, Vec3};
use crate::soa::check_len;

/// Scalar twin of [`super::lbs_palette`].
///
/// # Errors
/// As [`super::lbs_palette`].
pub fn lbs_palette(
    models: &[Mat4],
    inverse_bind: &[Mat4],
    out: &mut [Mat3x4],
) -> Result<(), Error> {
    check_len("inverse binds", models.len(), inverse_bind.len())?;
    check_len("palette", models.len(), out.len())?;
    for ((m, b), o) in models.iter().zip(inverse_bind).zip(out.iter_mut()) {
        *o = Mat3x4::from_mat4(&(*m * *b));
    }
    Ok(())
}

/// The rigid part of an affine matrix as a unit dual quaternion (`w >= 0`)
/// and the scale that was dropped; see [`super::dqs_palette`].
#[must_use]
pub fn rigid_part(m: &Mat4) -> (DualQuat, [f32; 3]) {
    let (q, scale) = m.rotation_and_scale();
    let t = m.translation();
    (
        DualQuat::from_rotation_translation(q, t),
        [scale.x, scale.y, scale.z],
    )
}

/// Scalar twin of [`super::dqs_palette`].
///
/// # Errors
/// As [`super::dqs_palette`].
pub fn dqs_palette(
    models: &[Mat4],
    inverse_bind: &[Mat4],
    out: &mut [DualQuat],
) -> Result<(), Error> {
    check_len("inverse binds", models.len(), inverse_bind.len())?;
    check_len("palette", models.len(), out.len())?;
    for ((m, b), o) in models.iter().zip(inverse_bind).zip(out.iter_mut()) {
        *o = rigid_part(&(*m * *b)).0;
    }
    Ok(())
}

/// Scalar twin of [`super::dqs_palette_with_scale`].
///
/// # Errors
/// As [`super::dqs_palette_with_scale`].
pub fn dqs_palette_with_scale(
    models: &[Mat4],
    inverse_bind: &[Mat4],
    out: &mut [DualQuat],
    scale: &mut [[f32; 3]],
) -> Result<(), Error> {
    check_len("inverse binds", models.len(), inverse_bind.len())?;
    check_len("palette", models.len(), out.len())?;
    check_len("scale", models.len(), scale.len())?;
    for (((m, b), o), s) in models
        .iter()
        .zip(inverse_bind)
        .zip(out.iter_mut())
        .zip(scale.iter_mut())
    {
        (*o, *s) = rigid_part(&(*m * *b));
    }
    Ok(())
}

/// The blended LBS matrix of one vertex: `Σ w_k palette[j_k]`.
#[must_use]
pub fn lbs_matrix(palette: &[Mat3x4], joints: [u16; 4], weights: [f32; 4]) -> Mat3x4 {
    lbs_blend(palette, &joints, &weights)
}

/// [`lbs_matrix`] over any number of influences (pairs of `joints` and
/// `weights`).
#[must_use]
pub fn lbs_blend(palette: &[Mat3x4], joints: &[u16], weights: &[f32]) -> Mat3x4 {
    const ZERO: Mat3x4 = Mat3x4 {
        rows: [[0.0; 4]; 3],
    };
    let mut m = ZERO;
    for (j, w) in joints.iter().zip(weights) {
        let p = palette.get(usize::from(*j)).copied().unwrap_or(ZERO);
        for (row, prow) in m.rows.iter_mut().zip(p.rows) {
            for (e, pe) in row.iter_mut().zip(prow) {
                *e += w * pe;
            }
        }
    }
    m
}

/// The blended, normalised dual quaternion of one vertex: each influence
/// sign-aligned with the first (flipped when their real parts' dot product
/// is negative), weighted, summed, divided by the real part's length.
#[must_use]
pub fn dqs_blend(palette: &[DualQuat], joints: [u16; 4], weights: [f32; 4]) -> DualQuat {
    dqs_blend_n(palette, &joints, &weights)
}

/// [`dqs_blend`] over any number of influences (pairs of `joints` and
/// `weights`; the first is the sign reference).
#[must_use]
pub fn dqs_blend_n(palette: &[DualQuat], joints: &[u16], weights: &[f32]) -> DualQuat {
    let zero = DualQuat {
        real: [0.0; 4],
        dual: [0.0; 4],
    };
    let get = |j: u16| palette.get(usize::from(j)).copied().unwrap_or(zero);
    let first = get(joints.first().copied().unwrap_or(0)).real;
    let mut real = [0.0f32; 4];
    let mut dual = [0.0f32; 4];
    for (j, w) in joints.iter().zip(weights) {
        let dq = get(*j);
        let dot: f32 = dq.real.iter().zip(first).map(|(a, b)| a * b).sum();
        let w = if dot < 0.0 { -*w } else { *w };
        for i in 0..4 {
            real[i] += w * dq.real[i];
            dual[i] += w * dq.dual[i];
        }
    }
    let inv = 1.0 / crate::math::sqrt_f32(real.iter().map(|v| v * v).sum());
    DualQuat {
        real: real.map(|v| v * inv),
        dual: dual.map(|v| v * inv),
    }
}

/// One vertex's attributes.
#[derive(Clone, Copy, Debug, Default)]
struct Vertex {
    p: Vec3,
    n: Vec3,
    t: [f32; 4],
}

fn v3(a: [f32; 3]) -> Vec3 {
    Vec3::new(a[0], a[1], a[2])
}

fn tangent(t: [f32; 4], f: impl Fn(Vec3) -> Vec3) -> [f32; 4] {
    let d = f(Vec3::new(t[0], t[1], t[2]));
    [d.x, d.y, d.z, t[3]]
}

fn lbs_vertex(palette: &[Mat3x4], j: &[u16], w: &[f32], v: Vertex) -> Vertex {
    let m = lbs_blend(palette, j, w);
    Vertex {
        p: m.transform_point(v.p),
        n: m.transform_vector(v.n),
        t: tangent(v.t, |d| m.transform_vector(d)),
    }
}

fn dqs_vertex(palette: &[DualQuat], j: &[u16], w: &[f32], v: Vertex) -> Vertex {
    let q = dqs_blend_n(palette, j, w);
    Vertex {
        p: q.transform_point(v.p),
        n: q.transform_vector(v.n),
        t: tangent(v.t, |d| q.transform_vector(d)),
    }
}

/// Runs `f` over every vertex (its index, its four or eight joints and
/// weights, its attributes), reading and writing one at a time through the
/// same layouts as the SIMD kernels.
fn each<S: Source, D: Sink>(
    infl: &Influences<'_>,
    src: &S,
    dst: &mut D,
    plan: Plan,
    f: impl Fn(usize, &[u16], &[f32], Vertex) -> Vertex,
) {
    let slots = if infl.is_eight() { 8 } else { 4 };
    for (i, (j, w)) in infl.joints.iter().zip(infl.weights).enumerate() {
        let (mut js, mut ws) = ([0u16; 8], [0.0f32; 8]);
        js[..4].copy_from_slice(j);
        ws[..4].copy_from_slice(w);
        if let (Some(j1), Some(w1)) = (infl.joints1.get(i), infl.weights1.get(i)) {
            js[4..].copy_from_slice(j1);
            ws[4..].copy_from_slice(w1);
        }
        let v = Vertex {
            p: v3(src.positions(i, 1)[0]),
            n: v3(src.normals(i, 1)[0]),
            t: src.tangents(i, 1)[0],
        };
        let o = f(i, &js[..slots], &ws[..slots], v);
        let pad3 = |x: Vec3| [x.to_array(), [0.0; 3], [0.0; 3], [0.0; 3]];
        dst.set_positions(i, 1, &pad3(o.p));
        if plan.normals {
            dst.set_normals(i, 1, &pad3(o.n));
        }
        if plan.tangents {
            dst.set_tangents(i, 1, &[o.t, [0.0; 4], [0.0; 4], [0.0; 4]]);
        }
    }
}

/// The checks of a [`super::SkinJob`] (the palette length, then the
/// attributes), then [`each`].
fn each_checked(
    palette_len: usize,
    influences: &CheckedInfluences<'_>,
    input: &SkinVertices<'_>,
    out: &mut SkinOutput<'_>,
    f: impl Fn(usize, &[u16], &[f32], Vertex) -> Vertex,
) -> Result<(), Error> {
    influences.check_palette(palette_len)?;
    let plan = layout::check_arrays(influences.len(), input, out)?;
    each(influences, input, out, plan, f);
    Ok(())
}

fn mix_vertex(a: Vertex, b: Vertex, s: f32) -> Vertex {
    let t = |x: f32, y: f32| x + (y - x) * s;
    Vertex {
        p: a.p.lerp(b.p, s),
        n: a.n.lerp(b.n, s),
        t: [
            t(a.t[0], b.t[0]),
            t(a.t[1], b.t[1]),
            t(a.t[2], b.t[2]),
            a.t[3],
        ],
    }
}

/// Scalar twin of a [`super::SkinJob`] of [`Lbs`](super::SkinMethod::Lbs) over [`Arrays`](super::SkinAttributes::Arrays)
/// attributes, which checks the four influences of `input` itself.
///
/// # Errors
/// The attribute errors of [`super::SkinJob::validate`] (the vertex count
/// is `input.joints.len()`), then those of [`super::check_influences`]
/// against the palette's length. On error the output is untouched.
pub fn skin_lbs(
    palette: &[Mat3x4],
    input: &SkinInput<'_>,
    out: &mut SkinOutput<'_>,
) -> Result<(), Error> {
    layout::check_arrays(input.joints.len(), &input.vertices(), out)?;
    let infl = Influences::new(input.joints, input.weights, palette.len())?;
    skin_lbs_checked(palette, &infl, &input.vertices(), out)
}

/// Scalar twin of a [`super::SkinJob`] of [`Dqs`](super::SkinMethod::Dqs) over [`Arrays`](super::SkinAttributes::Arrays)
/// attributes, which checks the four influences of `input` itself.
///
/// # Errors
/// The attribute errors of [`super::SkinJob::validate`] (the vertex count
/// is `input.joints.len()`), then those of [`super::check_influences`]
/// against the palette's length. On error the output is untouched.
pub fn skin_dqs(
    palette: &[DualQuat],
    input: &SkinInput<'_>,
    out: &mut SkinOutput<'_>,
) -> Result<(), Error> {
    layout::check_arrays(input.joints.len(), &input.vertices(), out)?;
    let infl = Influences::new(input.joints, input.weights, palette.len())?;
    skin_dqs_checked(palette, &infl, &input.vertices(), out)
}

/// Scalar twin of a [`super::SkinJob`] of [`Mixed`](super::SkinMethod::Mixed) over [`Arrays`](super::SkinAttributes::Arrays)
/// attributes, which checks the four influences of `input` itself.
///
/// # Errors
/// The `"dqs palette"` and mix errors of [`super::SkinJob::validate`],
/// then as [`skin_lbs`].
pub fn skin_mixed(
    lbs: &[Mat3x4],
    dqs: &[DualQuat],
    mix: &[f32],
    input: &SkinInput<'_>,
    out: &mut SkinOutput<'_>,
) -> Result<(), Error> {
    check_len("dqs palette", lbs.len(), dqs.len())?;
    check_mix(input.joints.len(), mix)?;
    layout::check_arrays(input.joints.len(), &input.vertices(), out)?;
    let infl = Influences::new(input.joints, input.weights, lbs.len())?;
    skin_mixed_checked(lbs, dqs, mix, &infl, &input.vertices(), out)
}

/// Scalar twin of a [`super::SkinJob`] of [`Lbs`](super::SkinMethod::Lbs) over [`Arrays`](super::SkinAttributes::Arrays)
/// attributes (four or eight influences).
///
/// # Errors
/// As [`super::SkinJob::validate`].
pub fn skin_lbs_checked(
    palette: &[Mat3x4],
    influences: &CheckedInfluences<'_>,
    input: &SkinVertices<'_>,
    out: &mut SkinOutput<'_>,
) -> Result<(), Error> {
    each_checked(palette.len(), influences, input, out, |_, j, w, v| {
        lbs_vertex(palette, j, w, v)
    })
}

/// Scalar twin of a [`super::SkinJob`] of [`Dqs`](super::SkinMethod::Dqs) over [`Arrays`](super::SkinAttributes::Arrays)
/// attributes (four or eight influences).
///
/// # Errors
/// As [`super::SkinJob::validate`].
pub fn skin_dqs_checked(
    palette: &[DualQuat],
    influences: &CheckedInfluences<'_>,
    input: &SkinVertices<'_>,
    out: &mut SkinOutput<'_>,
) -> Result<(), Error> {
    each_checked(palette.len(), influences, input, out, |_, j, w, v| {
        dqs_vertex(palette, j, w, v)
    })
}

/// Scalar twin of a [`super::SkinJob`] of [`Mixed`](super::SkinMethod::Mixed) over [`Arrays`](super::SkinAttributes::Arrays)
/// attributes (four or eight influences).
///
/// # Errors
/// As [`super::SkinJob::validate`].
pub fn skin_mixed_checked(
    lbs: &[Mat3x4],
    dqs: &[DualQuat],
    mix: &[f32],
    influences: &CheckedInfluences<'_>,
    input: &SkinVertices<'_>,
    out: &mut SkinOutput<'_>,
) -> Result<(), Error> {
    influences.check_palette(lbs.len())?;
    check_len("dqs palette", lbs.len(), dqs.len())?;
    check_mix(influences.len(), mix)?;
    let plan = layout::check_arrays(influences.len(), input, out)?;
    each(influences, input, out, plan, |i, j, w, v| {
        let s = mix.get(i).copied().unwrap_or(0.0);
        mix_vertex(lbs_vertex(lbs, j, w, v), dqs_vertex(dqs, j, w, v), s)
    });
    Ok(())
}

/// Scalar twin of a [`super::SkinJob`] of [`Lbs`](super::SkinMethod::Lbs) over [`Strided`](super::SkinAttributes::Strided)
/// attributes, which checks four influences itself.
///
/// # Errors
/// The layout and length errors of [`super::SkinJob::validate`] (the
/// vertex count is `joints.len()`), then those of
/// [`super::check_influences`] against the palette's length. On error
/// `dst` is untouched.
pub fn skin_lbs_strided(
    palette: &[Mat3x4],
    joints: &[[u16; 4]],
    weights: &[[f32; 4]],
    src: &StridedVertices<'_>,
    dst: &mut StridedVerticesMut<'_>,
) -> Result<(), Error> {
    let plan = layout::check_strided(joints.len(), src, dst)?;
    let infl = Influences::new(joints, weights, palette.len())?;
    each(&infl, src, dst, plan, |_, j, w, v| {
        lbs_vertex(palette, j, w, v)
    });
    Ok(())
}

/// Scalar twin of a [`super::SkinJob`] of [`Dqs`](super::SkinMethod::Dqs) over [`Strided`](super::SkinAttributes::Strided)
/// attributes, which checks four influences itself.
///
/// # Errors
/// The layout and length errors of [`super::SkinJob::validate`] (the
/// vertex count is `joints.len()`), then those of
/// [`super::check_influences`] against the palette's length. On error
/// `dst` is untouched.
pub fn skin_dqs_strided(
    palette: &[DualQuat],
    joints: &[[u16; 4]],
    weights: &[[f32; 4]],
    src: &StridedVertices<'_>,
    dst: &mut StridedVerticesMut<'_>,
) -> Result<(), Error> {
    let plan = layout::check_strided(joints.len(), src, dst)?;
    let infl = Influences::new(joints, weights, palette.len())?;
    each(&infl, src, dst, plan, |_, j, w, v| {
        dqs_vertex(palette, j, w, v)
    });
    Ok(())
}

/// Scalar twin of a [`super::SkinJob`] of [`Mixed`](super::SkinMethod::Mixed) over [`Strided`](super::SkinAttributes::Strided)
/// attributes, which checks four influences itself.
///
/// # Errors
/// The `"dqs palette"` and mix errors of [`super::SkinJob::validate`],
/// then as [`skin_lbs_strided`].
pub fn skin_mixed_strided(
    lbs: &[Mat3x4],
    dqs: &[DualQuat],
    mix: &[f32],
    joints: &[[u16; 4]],
    weights: &[[f32; 4]],
    src: &StridedVertices<'_>,
    dst: &mut StridedVerticesMut<'_>,
) -> Result<(), Error> {
    check_len("dqs palette", lbs.len(), dqs.len())?;
    check_mix(joints.len(), mix)?;
    let plan = layout::check_strided(joints.len(), src, dst)?;
    let infl = Influences::new(joints, weights, lbs.len())?;
    each(&infl, src, dst, plan, |i, j, w, v| {
        let s = mix.get(i).copied().unwrap_or(0.0);
        mix_vertex(lbs_vertex(lbs, j, w, v), dqs_vertex(dqs, j, w, v), s)
    });
    Ok(())
}
