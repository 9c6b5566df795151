//! Skinning palettes: `models[j] * inverse_bind[j]` as LBS matrices or DQS
//! dual quaternions.
//!
//! Both matrices are taken as affine (their last row is ignored and read as
//! `0 0 0 1`), like everywhere else in sinew. The product is computed per
//! joint with the model matrix's columns in registers and the inverse bind
//! elements broadcast (12 multiply-adds). The LBS palette then transposes
//! the columns into rows and stores them: per joint, because a 4-joint SoA
//! product would need more shuffles (transposing both inputs and the output)
//! than it saves. The DQS palette works on 4 joints at a time: the four
//! products are transposed into lanes, and the orthonormalisation, the
//! branch-free matrix-to-quaternion conversion and the dual part run
//! lane-wise.

use wide::f32x4;

use super::{DualQuat, Mat3x4};
use crate::error::Error;
use crate::math::Mat4;
use crate::soa::check_len;

/// Columns of `m * b` for affine `m` and `b` (lane 3 of each column is not used).
#[inline(always)]
fn mul_cols(m: &Mat4, b: &Mat4) -> [f32x4; 4] {
    let m = m.to_lanes();
    let e = |c: usize, r: usize| f32x4::splat(b.cols[c][r]);
    let col = |c: usize| m[0].mul_add(e(c, 0), m[1].mul_add(e(c, 1), m[2] * e(c, 2)));
    let t = m[0].mul_add(e(3, 0), m[1].mul_add(e(3, 1), m[2].mul_add(e(3, 2), m[3])));
    [col(0), col(1), col(2), t]
}

fn check(models: &[Mat4], inverse_bind: &[Mat4], out_len: usize) -> Result<(), Error> {
    check_len("inverse binds", models.len(), inverse_bind.len())?;
    check_len("palette", models.len(), out_len)
}

/// Writes the LBS palette: `out[j]` = the 3x4 part of `models[j] * inverse_bind[j]`.
///
/// `models` are model-space joint matrices (FK output), `inverse_bind` the
/// mesh's inverse bind matrices, in the same joint order.
///
/// # Errors
/// [`Error::BadLength`] (`"inverse binds"` or `"palette"` not as long as
/// `models`); on error `out` is untouched.
pub fn lbs_palette(
    models: &[Mat4],
    inverse_bind: &[Mat4],
    out: &mut [Mat3x4],
) -> Result<(), Error> {
    check(models, inverse_bind, out.len())?;
    for ((m, b), o) in models.iter().zip(inverse_bind).zip(out.iter_mut()) {
        let r = f32x4::transpose(mul_cols(m, b));
        o.rows = [r[0].to_array(), r[1].to_array(), r[2].to_array()];
    }
    Ok(())
}

/// Writes the DQS palette: `out[j]` = the unit dual quaternion of the rigid
/// part of `models[j] * inverse_bind[j]`, with `real.w >= 0`.
///
/// The rotation is the orthonormalised 3x3 part (x axis normalised, y made
/// orthogonal to x and normalised, z = x × y); scale, shear and mirroring
/// are dropped (see the module docs, and [`dqs_palette_with_scale`] to
/// get the dropped scale). A singular 3x3 part gives NaN entries.
///
/// # Errors
/// [`Error::BadLength`] (`"inverse binds"` or `"palette"` not as long as
/// `models`); on error `out` is untouched.
pub fn dqs_palette(
    models: &[Mat4],
    inverse_bind: &[Mat4],
    out: &mut [DualQuat],
) -> Result<(), Error> {
    check(models, inverse_bind, out.len())?;
    dqs(models, inverse_bind, out, None);
    Ok(())
}

/// [`dqs_palette`], also writing per joint the scale it dropped: the
/// length of the x axis, the length of y orthogonal to x, and the z axis'
/// component along x × y (negative for a mirror). `(1, 1, 1)` means the
/// joint was rigid; a shear shows up in neither (it is dropped silently).
///
/// # Errors
/// [`Error::BadLength`] (`"inverse binds"`, `"palette"` or `"scale"` not as
/// long as `models`); on error the outputs are untouched.
pub fn dqs_palette_with_scale(
    models: &[Mat4],
    inverse_bind: &[Mat4],
    out: &mut [DualQuat],
    scale: &mut [[f32; 3]],
) -> Result<(), Error> {
    check(models, inverse_bind, out.len())?;
    check_len("scale", models.len(), scale.len())?;
    dqs(models, inverse_bind, out, Some(scale));
    Ok(())
}

fn dqs(models: &[Mat4], ibm: &[Mat4], out: &mut [DualQuat], mut scale: Option<&mut [[f32; 3]]>) {
    const IDENTITY_COLS: [f32x4; 4] = [
        f32x4::new([1.0, 0.0, 0.0, 0.0]),
        f32x4::new([0.0, 1.0, 0.0, 0.0]),
        f32x4::new([0.0, 0.0, 1.0, 0.0]),
        f32x4::new([0.0, 0.0, 0.0, 1.0]),
    ];
    for (b, ((ms, bs), os)) in models
        .chunks(4)
        .zip(ibm.chunks(4))
        .zip(out.chunks_mut(4))
        .enumerate()
    {
        let cols = |l: usize| match (ms.get(l), bs.get(l)) {
            (Some(m), Some(i)) => mul_cols(m, i),
            _ => IDENTITY_COLS,
        };
        let (k0, k1, k2, k3) = (cols(0), cols(1), cols(2), cols(3));
        // a[c][r]: element (r, c) of the four joints' matrices, one per lane.
        let a = [
            f32x4::transpose([k0[0], k1[0], k2[0], k3[0]]),
            f32x4::transpose([k0[1], k1[1], k2[1], k3[1]]),
            f32x4::transpose([k0[2], k1[2], k2[2], k3[2]]),
            f32x4::transpose([k0[3], k1[3], k2[3], k3[3]]),
        ];
        let (real, dual, s) = detail::rigid(&a);
        let real = f32x4::transpose(real);
        let dual = f32x4::transpose(dual);
        for (l, o) in os.iter_mut().enumerate() {
            o.real = real[l].to_array();
            o.dual = dual[l].to_array();
        }
        if let Some(scale) = scale.as_deref_mut() {
            let (sx, sy, sz) = (s[0].to_array(), s[1].to_array(), s[2].to_array());
            for (l, o) in scale.iter_mut().skip(b * 4).take(os.len()).enumerate() {
                *o = [sx[l], sy[l], sz[l]];
            }
        }
    }
}

pub(crate) mod detail {
    use wide::f32x4;

    #[inline(always)]
    fn dot3(a: [f32x4; 3], b: [f32x4; 3]) -> f32x4 {
        a[0].mul_add(b[0], a[1].mul_add(b[1], a[2] * b[2]))
    }

    #[inline(always)]
    fn select(mask: f32x4, a: [f32x4; 4], b: [f32x4; 4]) -> [f32x4; 4] {
        core::array::from_fn(|i| mask.bitselect(a[i], b[i]))
    }

    /// Rigid part of four affine matrices given element-wise (`a[c][r]`):
    /// the rotation quaternion `(x, y, z, w)` with `w >= 0`, the dual part
    /// `½ (t, 0) q`, and the dropped per-axis scale.
    #[inline(always)]
    pub fn rigid(a: &[[f32x4; 4]; 4]) -> ([f32x4; 4], [f32x4; 4], [f32x4; 3]) {
        let c0 = [a[0][0], a[0][1], a[0][2]];
        let c1 = [a[1][0], a[1][1], a[1][2]];
        let c2 = [a[2][0], a[2][1], a[2][2]];
        // Gram–Schmidt: x = c0 / |c0|, y = (c1 - (x·c1) x) / |..|, z = x × y.
        // One division per axis (a reciprocal, then multiplies): the
        // sqrt → divide → dot chain is the latency of the whole palette.
        let s0 = dot3(c0, c0).sqrt();
        let i0 = f32x4::ONE / s0;
        let x = [c0[0] * i0, c0[1] * i0, c0[2] * i0];
        let d = dot3(x, c1);
        let y1 = [c1[0] - d * x[0], c1[1] - d * x[1], c1[2] - d * x[2]];
        let s1 = dot3(y1, y1).sqrt();
        let i1 = f32x4::ONE / s1;
        let y = [y1[0] * i1, y1[1] * i1, y1[2] * i1];
        let z = [
            x[1] * y[2] - x[2] * y[1],
            x[2] * y[0] - x[0] * y[2],
            x[0] * y[1] - x[1] * y[0],
        ];
        let s2 = dot3(z, c2);
        // m_rc with columns x, y, z.
        let (m00, m10, m20) = (x[0], x[1], x[2]);
        let (m01, m11, m21) = (y[0], y[1], y[2]);
        let (m02, m12, m22) = (z[0], z[1], z[2]);
        let one = f32x4::ONE;
        // Each candidate is 4·q_k·q for the component k it is built around;
        // the largest t_k = 4 q_k² is the best conditioned.
        let tw = one + m00 + m11 + m22;
        let tx = one + m00 - m11 - m22;
        let ty = one - m00 + m11 - m22;
        let tz = one - m00 - m11 + m22;
        let vw = [m21 - m12, m02 - m20, m10 - m01, tw];
        let vx = [tx, m01 + m10, m02 + m20, m21 - m12];
        let vy = [m01 + m10, ty, m12 + m21, m02 - m20];
        let vz = [m02 + m20, m12 + m21, tz, m10 - m01];
        let mut best = vw;
        let mut bt = tw;
        let take = tx.simd_gt(bt);
        best = select(take, vx, best);
        bt = take.bitselect(tx, bt);
        let take = ty.simd_gt(bt);
        best = select(take, vy, best);
        bt = take.bitselect(ty, bt);
        let take = tz.simd_gt(bt);
        best = select(take, vz, best);
        let len = best[0].mul_add(
            best[0],
            best[1].mul_add(best[1], best[2].mul_add(best[2], best[3] * best[3])),
        );
        // 1/|v| with the sign that makes w >= 0.
        let inv = (one / len.sqrt()).flip_signs(best[3].simd_lt(f32x4::ZERO));
        let q = best.map(|v| v * inv);
        let t = [a[3][0], a[3][1], a[3][2]];
        let half = f32x4::splat(0.5);
        let dual = [
            half * (t[0] * q[3] + t[1] * q[2] - t[2] * q[1]),
            half * (t[1] * q[3] + t[2] * q[0] - t[0] * q[2]),
            half * (t[2] * q[3] + t[0] * q[1] - t[1] * q[0]),
            -half * (t[0] * q[0] + t[1] * q[1] + t[2] * q[2]),
        ];
        (q, dual, [s0, s1, s2])
    }
}
