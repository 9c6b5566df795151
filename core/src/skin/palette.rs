//! Skinning palettes: `models[j] * inverse_bind[j]` as LBS matrices or DQS
//! dual quaternions.
//!
//! Both matrices are taken as affine (their last row is ignored and read as
//! `0 0 0 1`), like everywhere else in sinew. The LBS palette computes the
//! product per joint with the model matrix's columns in registers and the
//! inverse bind elements broadcast (12 multiply-adds), then transposes the
//! columns into rows and stores them: a 4-joint lane-wise product would
//! take more instructions (transposing both inputs and the output costs
//! more than the broadcasts it saves). The DQS palette works on 4 joints at
//! a time: the four model and four inverse bind matrices are transposed
//! into lanes (one joint per lane) and multiplied lane-wise (no more
//! instructions than four per-joint products and their transposes into
//! lanes, and no per-element broadcasts), and the orthonormalisation (one
//! reciprocal per axis), the branch-free matrix-to-quaternion conversion
//! and the dual part run lane-wise on the result.
//!
//! On x86-64 CPUs with AVX2 and FMA both palettes run in the AVX2 module
//! instead (the same formulation: per joint with broadcasts from memory for
//! LBS; for DQS, 8-lane blocks, four side by side, with the last 1-7 joints
//! as one more block over the last 8 and fewer than 8 padded), and the
//! portable code does not run.

use wide::f32x4;

use super::{DqsBinds, DualQuat, LbsBind, Mat3x4};
use crate::error::Error;
use crate::fp::Fp;
use crate::math::Mat4;
use crate::soa::check_len;

/// Columns of `m * b` for affine `m` and `b` (lane 3 of each column is not
/// used): `m`'s columns in registers, `b`'s elements broadcast.
#[inline(always)]
fn mul_cols(m: &Mat4, b: &Mat4) -> [f32x4; 4] {
    let m = m.to_lanes();
    let e = |c: usize, r: usize| f32x4::splat(b.cols[c][r]);
    let col = |c: usize| m[0].madd(e(c, 0), m[1].madd(e(c, 1), m[2] * e(c, 2)));
    let t = m[0].madd(e(3, 0), m[1].madd(e(3, 1), m[2].madd(e(3, 2), m[3])));
    [col(0), col(1), col(2), t]
}

/// Element (r, c) of four matrices in lanes: `e[c][r]`, rows 0-3.
#[inline(always)]
fn lanes4(x: [&Mat4; 4]) -> [[f32x4; 4]; 4] {
    core::array::from_fn(|c| {
        f32x4::transpose([
            f32x4::new(x[0].cols[c]),
            f32x4::new(x[1].cols[c]),
            f32x4::new(x[2].cols[c]),
            f32x4::new(x[3].cols[c]),
        ])
    })
}

/// `m * b` for four pairs of affine matrices at once, one joint per lane:
/// `a[c][r]` holds element `(r, c)` (rows 0-2; row 3 is not computed and is
/// zero). Both inputs are transposed into lanes (no per-element
/// broadcasts), the products are 36 lane-wise multiply-adds.
#[inline(always)]
fn mul_lanes(m: [&Mat4; 4], b: [&Mat4; 4]) -> [[f32x4; 4]; 4] {
    let be = lanes4(b);
    mul_lanes_b(m, &core::array::from_fn(|c| [be[c][0], be[c][1], be[c][2]]))
}

/// [`mul_lanes`] with `b`'s elements already in lanes (`be[c][r]`, rows 0-2).
#[inline(always)]
fn mul_lanes_b(m: [&Mat4; 4], be: &[[f32x4; 3]; 4]) -> [[f32x4; 4]; 4] {
    let me = lanes4(m);
    let el = |r: usize, c: usize| {
        let t = if c == 3 {
            me[2][r].madd(be[c][2], me[3][r])
        } else {
            me[2][r] * be[c][2]
        };
        me[0][r].madd(be[c][0], me[1][r].madd(be[c][1], t))
    };
    let col = |c: usize| [el(0, c), el(1, c), el(2, c), f32x4::ZERO];
    [col(0), col(1), col(2), col(3)]
}

/// Runs `f` over the joints four at a time: `f(group, products, out)`
/// with `out` the group's four output entries, or for the last 1-3 joints
/// (padded with identities) a padded copy that is then copied back.
#[inline(always)]
fn each_group<T: Copy>(
    models: &[Mat4],
    ibm: &[Mat4],
    out: &mut [T],
    mut f: impl FnMut(usize, [[f32x4; 4]; 4], &mut [T; 4]),
) {
    let (mb, mt) = models.as_chunks::<4>();
    let (bb, bt) = ibm.as_chunks::<4>();
    let (ob, ot) = out.as_chunks_mut::<4>();
    for (g, ((m, b), o)) in mb.iter().zip(bb).zip(ob.iter_mut()).enumerate() {
        let a = mul_lanes([&m[0], &m[1], &m[2], &m[3]], [&b[0], &b[1], &b[2], &b[3]]);
        f(g, a, o);
    }
    if let Some(&first) = ot.first() {
        fn pick(s: &[Mat4], l: usize) -> &Mat4 {
            s.get(l).unwrap_or(&Mat4::IDENTITY)
        }
        let pad = |s| [pick(s, 0), pick(s, 1), pick(s, 2), pick(s, 3)];
        let mut tmp = [first; 4];
        f(mb.len(), mul_lanes(pad(mt), pad(bt)), &mut tmp);
        for (o, t) in ot.iter_mut().zip(tmp) {
            *o = t;
        }
    }
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
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    let done = super::avx2::lbs_palette(models, inverse_bind, out);
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    let done = 0;
    lbs_portable(models, inverse_bind, out, done);
    Ok(())
}

/// Lays out a mesh's inverse bind matrices for [`lbs_palette_prepared`]
/// (`out[j] = LbsBind::new(&inverse_bind[j])`); run it once per mesh.
///
/// # Errors
/// [`Error::BadLength`] (`"lbs binds"` not as long as `inverse_bind`); on
/// error `out` is untouched.
pub fn prepare_lbs_binds(inverse_bind: &[Mat4], out: &mut [LbsBind]) -> Result<(), Error> {
    check_len("lbs binds", inverse_bind.len(), out.len())?;
    for (o, b) in out.iter_mut().zip(inverse_bind) {
        *o = LbsBind::new(b);
    }
    Ok(())
}

/// [`lbs_palette`] with the inverse binds prepared once per mesh
/// ([`prepare_lbs_binds`]): the same products (within rounding of the
/// fused multiply-adds), with less work per joint, because the layout of
/// the inverse binds is done once.
///
/// # Errors
/// [`Error::BadLength`] (`"inverse binds"` or `"palette"` not as long as
/// `models`); on error `out` is untouched.
pub fn lbs_palette_prepared(
    models: &[Mat4],
    inverse_bind: &[LbsBind],
    out: &mut [Mat3x4],
) -> Result<(), Error> {
    check_len("inverse binds", models.len(), inverse_bind.len())?;
    check_len("palette", models.len(), out.len())?;
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    let done = super::avx2::lbs_prepared(models, inverse_bind, out);
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    let done = 0;
    lbs_prepared_portable(models, inverse_bind, out, done);
    Ok(())
}

/// The portable prepared LBS palette from joint `first` on (the slices
/// have equal lengths): the column form of [`lbs_portable`] with `b`'s
/// elements read from the prepared spreads.
pub(crate) fn lbs_prepared_portable(
    models: &[Mat4],
    binds: &[LbsBind],
    out: &mut [Mat3x4],
    first: usize,
) {
    let rest = models.iter().zip(binds).zip(out.iter_mut()).skip(first);
    for ((m, b), o) in rest {
        let m = m.to_lanes();
        let e = |c: usize, r: usize| f32x4::splat(b.get(r, c));
        let col = |c: usize| m[0].madd(e(c, 0), m[1].madd(e(c, 1), m[2] * e(c, 2)));
        let t = m[0].madd(e(3, 0), m[1].madd(e(3, 1), m[2].madd(e(3, 2), m[3])));
        let r = f32x4::transpose([col(0), col(1), col(2), t]);
        o.rows = [r[0].to_array(), r[1].to_array(), r[2].to_array()];
    }
}

/// The portable LBS palette from joint `first` on (the slices have equal lengths).
pub(crate) fn lbs_portable(models: &[Mat4], ibm: &[Mat4], out: &mut [Mat3x4], first: usize) {
    let rest = models.iter().zip(ibm).zip(out.iter_mut()).skip(first);
    for ((m, b), o) in rest {
        let r = f32x4::transpose(mul_cols(m, b));
        o.rows = [r[0].to_array(), r[1].to_array(), r[2].to_array()];
    }
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

fn dqs(models: &[Mat4], ibm: &[Mat4], out: &mut [DualQuat], scale: Option<&mut [[f32; 3]]>) {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    let (done, scale) = {
        let mut scale = scale;
        let done = super::avx2::dqs_palette(models, ibm, out, scale.as_deref_mut());
        (done, scale)
    };
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    let done = 0;
    dqs_portable(models, ibm, out, scale, done);
}

/// Lays out a mesh's inverse bind matrices for [`dqs_palette_prepared`];
/// run it once per mesh. Block `k` of `n / 8` holds joints `8 k .. 8 k +
/// 8`; if `n` is not a multiple of 8, one more block holds the *last* 8
/// joints (overlapping the one before it, so that the palette's last block
/// needs no padding), or, for `n < 8`, all of them and identities.
///
/// # Errors
/// [`Error::BadLength`] (`"dqs binds"` not [`DqsBinds::count`]`(inverse_bind.len())`
/// long); on error `out` is untouched.
pub fn prepare_dqs_binds(inverse_bind: &[Mat4], out: &mut [DqsBinds]) -> Result<(), Error> {
    let n = inverse_bind.len();
    check_len("dqs binds", DqsBinds::count(n), out.len())?;
    for (o, b) in out
        .iter_mut()
        .zip(inverse_bind.chunks_exact(DqsBinds::LANES))
    {
        *o = DqsBinds::new(b);
    }
    if !n.is_multiple_of(DqsBinds::LANES) {
        let tail = inverse_bind.get(n.saturating_sub(DqsBinds::LANES)..);
        if let (Some(o), Some(b)) = (out.last_mut(), tail) {
            *o = DqsBinds::new(b);
        }
    }
    Ok(())
}

/// [`dqs_palette`] with the inverse binds prepared once per mesh
/// ([`prepare_dqs_binds`]): the same entries (within rounding), without
/// transposing the inverse binds every frame.
///
/// # Errors
/// [`Error::BadLength`] (`"dqs binds"` not [`DqsBinds::count`]`(models.len())`
/// long, or `"palette"` not as long as `models`); on error `out` is
/// untouched.
pub fn dqs_palette_prepared(
    models: &[Mat4],
    inverse_bind: &[DqsBinds],
    out: &mut [DualQuat],
) -> Result<(), Error> {
    check_len(
        "dqs binds",
        DqsBinds::count(models.len()),
        inverse_bind.len(),
    )?;
    check_len("palette", models.len(), out.len())?;
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    if super::avx2::dqs_prepared(models, inverse_bind, out) == out.len() {
        return Ok(());
    }
    dqs_prepared_portable(models, inverse_bind, out);
    Ok(())
}

/// The portable prepared DQS palette (`binds` as checked by
/// [`dqs_palette_prepared`]): [`dqs_portable`]'s groups of four with the
/// inverse binds already in lanes (half a block each) for the whole blocks,
/// then [`dqs_portable`] on the rest with their matrices read back.
pub(crate) fn dqs_prepared_portable(models: &[Mat4], binds: &[DqsBinds], out: &mut [DualQuat]) {
    const L: usize = DqsBinds::LANES;
    let n = models.len();
    let full = n / L;
    let half = |b: &DqsBinds, h: usize| -> [[f32x4; 3]; 4] {
        core::array::from_fn(|c| {
            core::array::from_fn(|r| {
                // One 16-byte load per element: lanes 0-3 or 4-7.
                let pair: &[[f32; 4]; 2] = bytemuck::cast_ref(&b.lanes[c][r]);
                f32x4::new(pair[h])
            })
        })
    };
    for ((b, m8), o8) in binds
        .iter()
        .zip(models.chunks_exact(L))
        .zip(out.chunks_exact_mut(L))
    {
        for (h, (m, o)) in m8.chunks_exact(4).zip(o8.chunks_exact_mut(4)).enumerate() {
            let a = mul_lanes_b([&m[0], &m[1], &m[2], &m[3]], &half(b, h));
            write_rigid(&a, o);
        }
    }
    // The rest (fewer than 8): the last block, whose lane 0 is joint
    // n - 8 (or joint 0 when n < 8).
    let (Some(last), Some(ms), Some(os)) = (
        binds.get(full),
        models.get(full * L..),
        out.get_mut(full * L..),
    ) else {
        return;
    };
    let base = n.saturating_sub(L);
    let mut ibm = [Mat4::IDENTITY; L];
    for (j, b) in ibm.iter_mut().enumerate().take(ms.len()) {
        *b = last.get(full * L + j - base).unwrap_or(Mat4::IDENTITY);
    }
    dqs_portable(ms, ibm.get(..ms.len()).unwrap_or_default(), os, None, 0);
}

/// Writes the rigid parts of four products in lanes (`a[c][r]`, as
/// [`mul_lanes`] gives them) to `o`'s entries (up to four); returns the
/// dropped scales in lanes.
#[inline(always)]
fn write_rigid(a: &[[f32x4; 4]; 4], o: &mut [DualQuat]) -> [f32x4; 3] {
    let (real, dual, s) = detail::rigid(a);
    let real = f32x4::transpose(real);
    let dual = f32x4::transpose(dual);
    for (l, o) in o.iter_mut().enumerate() {
        o.real = real[l].to_array();
        o.dual = dual[l].to_array();
    }
    s
}

/// The portable DQS palette from joint `first` on (the slices have equal
/// lengths, `first` is at most that).
pub(crate) fn dqs_portable(
    models: &[Mat4],
    ibm: &[Mat4],
    out: &mut [DualQuat],
    scale: Option<&mut [[f32; 3]]>,
    first: usize,
) {
    let models = models.get(first..).unwrap_or_default();
    let ibm = ibm.get(first..).unwrap_or_default();
    let out = out.get_mut(first..).unwrap_or_default();
    let mut scale = scale.map(|s| s.get_mut(first..).unwrap_or_default());
    let n = out.len();
    each_group(models, ibm, out, |g, a, o| {
        let s = write_rigid(&a, o);
        if let Some(scale) = scale.as_deref_mut() {
            let (sx, sy, sz) = (s[0].to_array(), s[1].to_array(), s[2].to_array());
            let count = n.saturating_sub(g * 4).min(4);
            for (l, o) in scale.iter_mut().skip(g * 4).take(count).enumerate() {
                *o = [sx[l], sy[l], sz[l]];
            }
        }
    });
}

pub(crate) mod detail {
    use wide::f32x4;

    use crate::fp::Fp;

    #[inline(always)]
    fn dot3(a: [f32x4; 3], b: [f32x4; 3]) -> f32x4 {
        a[0].madd(b[0], a[1].madd(b[1], a[2] * b[2]))
    }

    #[inline(always)]
    fn select(mask: f32x4, a: [f32x4; 4], b: [f32x4; 4]) -> [f32x4; 4] {
        core::array::from_fn(|i| mask.bitselect(a[i], b[i]))
    }

    /// Rigid part of four affine matrices given element-wise (`a[c][r]`):
    /// the rotation quaternion `(x, y, z, w)` with `w >= 0`, the dual part
    /// `½ (t, 0) q`, and the dropped per-axis scale.
    ///
    /// Arranged like the AVX2 kernel's `rigid` (see there) for a short
    /// dependency chain: the axes from `w = c0 × c1` (`z = w / |w|`,
    /// `y = (w × c0) / (|w| |c0|)`), so the two square roots and divisions
    /// of Gram–Schmidt run side by side; the candidates' entries as one
    /// multiply-add by `1 / |w|` each; a tournament between the candidates
    /// whose first round is a sign test; the dual part from the candidate
    /// before it is normalised.
    #[inline(always)]
    pub fn rigid(a: &[[f32x4; 4]; 4]) -> ([f32x4; 4], [f32x4; 4], [f32x4; 3]) {
        let c0 = [a[0][0], a[0][1], a[0][2]];
        let c1 = [a[1][0], a[1][1], a[1][2]];
        let c2 = [a[2][0], a[2][1], a[2][2]];
        let one = f32x4::ONE;
        let n0 = dot3(c0, c0);
        let d01 = dot3(c0, c1);
        let w = [
            c0[1] * c1[2] - c0[2] * c1[1],
            c0[2] * c1[0] - c0[0] * c1[2],
            c0[0] * c1[1] - c0[1] * c1[0],
        ];
        let nw = dot3(w, w);
        // y' = |c0|² c1 - (c0·c1) c0 = w × c0 = |c0| |w| y.
        let yu = [
            c1[0] * n0 - d01 * c0[0],
            c1[1] * n0 - d01 * c0[1],
            c1[2] * n0 - d01 * c0[2],
        ];
        let s0 = crate::math::sqrt4(n0);
        let i0 = one / s0;
        let sw = crate::math::sqrt4(nw);
        let iw = one / sw;
        // x = the first column, yi = |w| y; z = w / |w|.
        let x = [c0[0] * i0, c0[1] * i0, c0[2] * i0];
        let yi = [yu[0] * i0, yu[1] * i0, yu[2] * i0];
        // m11 ± m22 = (yi1 ± w2) / |w|.
        let (ap, am) = (yi[1] + w[2], yi[1] - w[2]);
        let (pw, py) = (one + x[0], one - x[0]);
        let tw = ap.madd(iw, pw);
        let tx = (-ap).madd(iw, pw);
        let ty = am.madd(iw, py);
        let tz = (-am).madd(iw, py);
        let m21_m12 = (yi[2] - w[1]) * iw;
        let m02_m20 = w[0].madd(iw, -x[2]);
        let m10_m01 = (-yi[0]).madd(iw, x[1]);
        let m01_m10 = yi[0].madd(iw, x[1]);
        let m02_m20p = w[0].madd(iw, x[2]);
        let m12_m21 = (w[1] + yi[2]) * iw;
        let vw = [m21_m12, m02_m20, m10_m01, tw];
        let vx = [tx, m01_m10, m02_m20p, m21_m12];
        let vy = [m01_m10, ty, m12_m21, m02_m20];
        let vz = [m02_m20p, m12_m21, tz, m10_m01];
        // t_x - t_w = -2 ap / |w|, t_z - t_y = -2 am / |w|: the first round
        // is a sign test, and the winners' t the multiply-add with |ap|
        // (|am|). Ties go to the first of w, x, y, z, as in the reference.
        let vwx = select(ap.simd_lt(f32x4::ZERO), vx, vw);
        let twx = ap.abs().madd(iw, pw);
        let vyz = select(am.simd_lt(f32x4::ZERO), vz, vy);
        let tyz = am.abs().madd(iw, py);
        let take = tyz.simd_gt(twx);
        let best = select(take, vyz, vwx);
        let bt = take.bitselect(tyz, twx);
        // Candidate k is 4 q_k q and t_k = 4 q_k², so its length is 2 √t_k
        // (no dot product); the sign makes w >= 0.
        let inv =
            (f32x4::splat(0.5) / crate::math::sqrt4(bt)).flip_signs(best[3].simd_lt(f32x4::ZERO));
        let q = best.map(|v| v * inv);
        // ½ (t, 0) q, from the candidate before it is normalised.
        let t = [a[3][0], a[3][1], a[3][2]];
        let b = best;
        let half = f32x4::splat(0.5) * inv;
        let dual = [
            half * (t[0] * b[3] + t[1] * b[2] - t[2] * b[1]),
            half * (t[1] * b[3] + t[2] * b[0] - t[0] * b[2]),
            half * (t[2] * b[3] + t[0] * b[1] - t[1] * b[0]),
            -half * (t[0] * b[0] + t[1] * b[1] + t[2] * b[2]),
        ];
        // |w| = |c0| s1, and z·c2 = (w·c2) / |w|.
        let s1 = sw * i0;
        let s2 = dot3(w, c2) * iw;
        (q, dual, [s0, s1, s2])
    }
}
