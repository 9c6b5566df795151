//! The compressor's error measurement: its own FK of eight samples at a
//! time in lanes (with the scalar `from_trs`, FK and shell error's bits,
//! lane by lane) used by the search and the final check, and
//! [`measure_error`], the independent check through the public samplers
//! and the core's SIMD FK.

use sinew_core::clip::{RawClip, TimeMode};
use sinew_core::compressed::CompressedClip;
use sinew_core::fk::{local_to_model, FkJob};
use sinew_core::soa::{get_joint, set_joint};
#[cfg(test)]
use sinew_core::Quat;
use sinew_core::{Error, Mat4, Skeleton, SoaTransform, Transform, Vec3};
use wide::f32x8;

use super::ErrorStats;

// ---------------------------------------------------------------------------
// A small affine matrix for the compressor's own FK (independent of the core's).
// ---------------------------------------------------------------------------

/// The scalar affine transform: the reference that [`Affine8`]'s lanes are
/// tested against.
#[cfg(test)]
#[derive(Clone, Copy, Debug)]
pub(super) struct Affine {
    /// Columns x, y, z (linear part) and translation.
    pub(super) c: [[f32; 3]; 4],
}

#[cfg(test)]
impl Affine {
    pub(super) fn from_trs(t: Vec3, q: Quat, s: Vec3) -> Affine {
        let q = q.normalize();
        let (x, y, z, w) = (q.x, q.y, q.z, q.w);
        let c0 = [
            1.0 - 2.0 * (y * y + z * z),
            2.0 * (x * y + w * z),
            2.0 * (x * z - w * y),
        ];
        let c1 = [
            2.0 * (x * y - w * z),
            1.0 - 2.0 * (x * x + z * z),
            2.0 * (y * z + w * x),
        ];
        let c2 = [
            2.0 * (x * z + w * y),
            2.0 * (y * z - w * x),
            1.0 - 2.0 * (x * x + y * y),
        ];
        Affine {
            c: [
                c0.map(|v| v * s.x),
                c1.map(|v| v * s.y),
                c2.map(|v| v * s.z),
                [t.x, t.y, t.z],
            ],
        }
    }

    pub(super) fn apply_vec(&self, v: [f32; 3]) -> [f32; 3] {
        let mut o = [0.0; 3];
        for (r, x) in o.iter_mut().enumerate() {
            *x = self.c[0][r] * v[0] + self.c[1][r] * v[1] + self.c[2][r] * v[2];
        }
        o
    }

    pub(super) fn mul(&self, b: &Affine) -> Affine {
        let t = self.apply_vec(b.c[3]);
        Affine {
            c: [
                self.apply_vec(b.c[0]),
                self.apply_vec(b.c[1]),
                self.apply_vec(b.c[2]),
                [
                    t[0] + self.c[3][0],
                    t[1] + self.c[3][1],
                    t[2] + self.c[3][2],
                ],
            ],
        }
    }

    pub(super) fn max_col_norm(&self) -> f32 {
        (0..3).map(|i| norm(self.c[i])).fold(0.0, f32::max)
    }
}

/// Eight samples of one joint's affine transform, sample `i` in lane `i`:
/// the segment search runs its FK and error checks eight samples at once.
#[derive(Clone, Copy)]
pub(super) struct Affine8 {
    pub(super) c: [[f32x8; 3]; 4],
}

/// The smallest lane (NaN lanes ignored, as `f32::min`).
pub(super) fn lanes_min(v: f32x8) -> f32 {
    v.to_array().into_iter().fold(f32::INFINITY, f32::min)
}

/// The largest lane (NaN lanes ignored, as `f32::max`).
pub(super) fn lanes_max(v: f32x8) -> f32 {
    v.to_array().into_iter().fold(f32::NEG_INFINITY, f32::max)
}

/// `|v|` per lane, as the scalar `norm`.
pub(super) fn norm8(v: &[f32x8; 3]) -> f32x8 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

impl Affine8 {
    /// The largest length of the three linear columns, per lane (as the
    /// scalar fold from 0).
    pub(super) fn max_col_norm(&self) -> f32x8 {
        f32x8::ZERO
            .max(norm8(&self.c[0]))
            .max(norm8(&self.c[1]))
            .max(norm8(&self.c[2]))
    }

    pub(super) const IDENTITY: Affine8 = Affine8 {
        c: [
            [f32x8::ONE, f32x8::ZERO, f32x8::ZERO],
            [f32x8::ZERO, f32x8::ONE, f32x8::ZERO],
            [f32x8::ZERO, f32x8::ZERO, f32x8::ONE],
            [f32x8::ZERO; 3],
        ],
    };

    /// [`Affine::from_trs`] of each lane, with the same operations in the
    /// same order (so every lane has the scalar function's bits).
    pub(super) fn from_trs(trs: &Trs8) -> Affine8 {
        let [x, y, z, w] = normalize8(&trs.q);
        let (two, one) = (f32x8::splat(2.0), f32x8::ONE);
        let c0 = [
            one - two * (y * y + z * z),
            two * (x * y + w * z),
            two * (x * z - w * y),
        ];
        let c1 = [
            two * (x * y - w * z),
            one - two * (x * x + z * z),
            two * (y * z + w * x),
        ];
        let c2 = [
            two * (x * z + w * y),
            two * (y * z - w * x),
            one - two * (x * x + y * y),
        ];
        let s = &trs.s;
        Affine8 {
            c: [
                c0.map(|v| v * s[0]),
                c1.map(|v| v * s[1]),
                c2.map(|v| v * s[2]),
                trs.t,
            ],
        }
    }

    pub(super) fn apply_vec(&self, v: &[f32x8; 3]) -> [f32x8; 3] {
        core::array::from_fn(|r| self.c[0][r] * v[0] + self.c[1][r] * v[1] + self.c[2][r] * v[2])
    }

    /// This transform with `origin` subtracted from its translation (see
    /// [`Origins`]).
    pub(super) fn recentred(mut self, origin: &[f32x8; 3]) -> Affine8 {
        for (t, o) in self.c[3].iter_mut().zip(origin) {
            *t -= *o;
        }
        self
    }

    pub(super) fn mul(&self, b: &Affine8) -> Affine8 {
        let t = self.apply_vec(&b.c[3]);
        Affine8 {
            c: [
                self.apply_vec(&b.c[0]),
                self.apply_vec(&b.c[1]),
                self.apply_vec(&b.c[2]),
                core::array::from_fn(|r| t[r] + self.c[3][r]),
            ],
        }
    }
}

/// Per joint and block of eight samples, `[joint][block]`: a root joint's
/// raw translation (its local `c[3]`, from [`local8`] as [`pose8`] builds
/// it); empty for joints with a parent.
///
/// Error measurements subtract it from both the raw and the decoded root
/// before FK ([`Affine8::recentred`]), so that a figure far from the origin
/// is measured at its own size: the difference of two nearby translations
/// is exact in f32, while FK in world coordinates would add a rounding of
/// the translation's magnitude at every joint of every chain.
pub(super) type Origins = Vec<Vec<[f32x8; 3]>>;

/// The roots' [`Origins`] of a segment of `len` frames from the joints'
/// frames `frame(j, f)`.
pub(super) fn root_origins<'t>(
    parents: &[Option<usize>],
    len: usize,
    frame: impl Fn(usize, usize) -> &'t Transform,
) -> Origins {
    let samples = sample_count(len);
    parents
        .iter()
        .enumerate()
        .map(|(j, p)| match p {
            Some(_) => Vec::new(),
            None => (0..sample_blocks(samples))
                .map(|b| {
                    let count = samples.saturating_sub(8 * b).min(8);
                    local8(|f| frame(j, f), len, b, count).c[3]
                })
                .collect(),
        })
        .collect()
}

/// The square of the largest error of the 6 shell vertices `±shell` along
/// the columns, for eight samples at once: `|dt ± shell·dc|` is largest for
/// the sign that matches `dt · dc`.
pub(super) fn shell_error_sq8(raw: &Affine8, dec: &Affine8, shell: f32) -> f32x8 {
    let sub =
        |a: &[f32x8; 3], b: &[f32x8; 3]| -> [f32x8; 3] { core::array::from_fn(|r| a[r] - b[r]) };
    let dot = |a: &[f32x8; 3], b: &[f32x8; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    let dt = sub(&dec.c[3], &raw.c[3]);
    let t2 = dot(&dt, &dt);
    let (s2, s) = (f32x8::splat(shell * shell), f32x8::splat(2.0 * shell));
    let mut worst = t2;
    for i in 0..3 {
        let dc = sub(&dec.c[i], &raw.c[i]);
        worst = worst.max(t2 + s2 * dot(&dc, &dc) + s * dot(&dt, &dc).abs());
    }
    worst
}

/// Whether every sample of `dec` is within the bound (squared: `bound2`) of
/// `raw` (NaN is not).
pub(super) fn fits8(raw: &Affine8, dec: &Affine8, shell: f32, bound2: f32) -> bool {
    shell_error_sq8(raw, dec, shell)
        .simd_le(f32x8::splat(bound2))
        .all()
}

/// Blocks of eight for `samples` samples (at least one).
pub(super) fn sample_blocks(samples: usize) -> usize {
    samples.div_ceil(8).max(1)
}

/// Per joint and block of eight samples, `[joint][block]`: the models (FK)
/// of the samples of a segment of `len` frames, from the joints' frames
/// `frame(j, f)` ([`local8`]), roots recentred on `origins`; the locals
/// too when `locals` is given. One pass: parents come before their
/// children.
pub(super) fn pose8<'t>(
    parents: &[Option<usize>],
    len: usize,
    frame: impl Fn(usize, usize) -> &'t Transform,
    origins: &Origins,
    mut locals: Option<&mut Vec<Vec<Affine8>>>,
) -> Vec<Vec<Affine8>> {
    let samples = sample_count(len);
    let blocks = sample_blocks(samples);
    let mut models: Vec<Vec<Affine8>> = Vec::with_capacity(parents.len());
    for (j, parent) in parents.iter().enumerate() {
        let joint_locals: Vec<Affine8> = (0..blocks)
            .map(|b| {
                let local = local8(
                    |f| frame(j, f),
                    len,
                    b,
                    samples.saturating_sub(8 * b).min(8),
                );
                match parent {
                    Some(_) => local,
                    None => local.recentred(&origins[j][b]),
                }
            })
            .collect();
        let joint_models = match *parent {
            Some(p) => models[p]
                .iter()
                .zip(&joint_locals)
                .map(|(m, l)| m.mul(l))
                .collect(),
            None => joint_locals.clone(),
        };
        models.push(joint_models);
        if let Some(l) = locals.as_deref_mut() {
            l.push(joint_locals);
        }
    }
    models
}

/// The scalar reference of [`Trs8::halfway`] (with `alpha` 0.5).
#[cfg(test)]
pub(super) fn lerp_t(a: &Transform, b: &Transform, alpha: f32) -> Transform {
    Transform::new(
        a.translation.lerp(b.translation, alpha),
        a.rotation.nlerp(b.rotation, alpha),
        a.scale.lerp(b.scale, alpha),
    )
}

/// Frames, then the mid-frames between them.
pub(super) fn sample_count(frames: usize) -> usize {
    frames + frames.saturating_sub(1)
}

/// Eight transforms, one per lane.
pub(super) struct Trs8 {
    pub(super) t: [f32x8; 3],
    pub(super) q: [f32x8; 4],
    pub(super) s: [f32x8; 3],
}

impl Trs8 {
    /// Lane `i` from `get(i)`.
    pub(super) fn gather<'t>(get: impl Fn(usize) -> &'t Transform) -> Trs8 {
        let ts: [&Transform; 8] = core::array::from_fn(get);
        let lanes = |f: fn(&Transform) -> f32| f32x8::from(ts.map(f));
        Trs8 {
            t: [
                lanes(|t| t.translation.x),
                lanes(|t| t.translation.y),
                lanes(|t| t.translation.z),
            ],
            q: [
                lanes(|t| t.rotation.x),
                lanes(|t| t.rotation.y),
                lanes(|t| t.rotation.z),
                lanes(|t| t.rotation.w),
            ],
            s: [
                lanes(|t| t.scale.x),
                lanes(|t| t.scale.y),
                lanes(|t| t.scale.z),
            ],
        }
    }

    /// `lerp_t(self, b, 0.5)` per lane, with the same operations in the
    /// same order.
    pub(super) fn halfway(&self, b: &Trs8) -> Trs8 {
        let half = f32x8::splat(0.5);
        let lerp = |a: &[f32x8; 3], o: &[f32x8; 3]| -> [f32x8; 3] {
            core::array::from_fn(|r| a[r] + (o[r] - a[r]) * half)
        };
        let flip = dot8(&self.q, &b.q).simd_lt(f32x8::ZERO);
        let o = b.q.map(|c| flip.select(-c, c));
        let keep = f32x8::splat(1.0 - 0.5);
        let q: [f32x8; 4] = core::array::from_fn(|c| self.q[c] * keep + o[c] * half);
        Trs8 {
            t: lerp(&self.t, &b.t),
            q: normalize8(&q),
            s: lerp(&self.s, &b.s),
        }
    }

    /// Lane by lane: `self` where `mask` is set, else `other`.
    pub(super) fn select(&self, mask: f32x8, other: &Trs8) -> Trs8 {
        let pick = |a: &[f32x8; 3], b: &[f32x8; 3]| -> [f32x8; 3] {
            core::array::from_fn(|c| mask.select(a[c], b[c]))
        };
        Trs8 {
            t: pick(&self.t, &other.t),
            q: core::array::from_fn(|c| mask.select(self.q[c], other.q[c])),
            s: pick(&self.s, &other.s),
        }
    }
}

/// [`Quat::dot`] per lane, in its order.
pub(super) fn dot8(a: &[f32x8; 4], b: &[f32x8; 4]) -> f32x8 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]
}

/// [`Quat::normalize`] per lane, in its order.
pub(super) fn normalize8(q: &[f32x8; 4]) -> [f32x8; 4] {
    let inv = f32x8::ONE / dot8(q, q).sqrt();
    q.map(|c| c * inv)
}

/// A joint's local transforms at samples `8 b + i` (`i < count`; the last
/// one fills the lanes from `count` on, so that padding lanes repeat a
/// real sample and never fail a check) of a segment of `len` frames
/// (frames, then mid-frames), from its decoded frames `dec(f)`. Each lane
/// has the bits of the scalar `Affine::from_trs` of the frame, or of
/// `lerp_t` halfway between two frames.
pub(super) fn local8<'t>(
    dec: impl Fn(usize) -> &'t Transform,
    len: usize,
    b: usize,
    count: usize,
) -> Affine8 {
    let last = count.max(1) - 1;
    let sample = |i: usize| 8 * b + i.min(last);
    let a = Trs8::gather(|i| {
        let s = sample(i);
        dec(if s < len { s } else { s - len })
    });
    if sample(last) < len {
        return Affine8::from_trs(&a);
    }
    let next = Trs8::gather(|i| {
        let s = sample(i);
        dec(if s < len { s } else { s - len + 1 })
    });
    let frame = f32x8::from(core::array::from_fn::<f32, 8, _>(|i| {
        if sample(i) < len {
            f32::from_bits(u32::MAX)
        } else {
            0.0
        }
    }));
    Affine8::from_trs(&a.select(frame, &a.halfway(&next)))
}

/// Per sample (frames, then mid-frames) the compressor's own max shell error
/// of the finished container, sampled through the core's samplers: eight
/// samples at a time, their joints' affines and FK in lanes (the scalar
/// `from_trs`, FK and shell error's bits, lane by lane); a sample with a
/// NaN error is infinitely far off.
pub(super) fn container_errors(
    skeleton: &Skeleton<'_>,
    clip: &RawClip<'_>,
    comp: &CompressedClip<'_>,
    shell: f32,
) -> Result<Vec<f32>, Error> {
    let n = skeleton.joint_count();
    let parents: Vec<Option<usize>> = (0..n).map(|j| skeleton.parent(j)).collect();
    let frames = clip.frame_count();
    let rate = clip.sample_rate();
    let rest = skeleton.rest_pose();
    let soa = clip.soa_count();
    let mut pr = vec![SoaTransform::IDENTITY; 8 * soa];
    let mut pc = pr.clone();
    let mut mr = vec![Affine8::IDENTITY; n];
    let mut mc = mr.clone();
    let times: Vec<f32> = (0..frames)
        .map(|f| f as f32 / rate)
        .chain((0..frames.saturating_sub(1)).map(|f| (f as f32 + 0.5) / rate))
        .collect();
    let mut out = Vec::with_capacity(times.len());
    for chunk in times.chunks(8) {
        for ((t, r), c) in chunk.iter().zip(pr.chunks_mut(soa)).zip(pc.chunks_mut(soa)) {
            clip.sample(*t, TimeMode::Clamp, r)?;
            comp.sample_with_rest(*t, TimeMode::Clamp, rest, c)?;
        }
        // Lanes past the chunk repeat its last sample.
        let last = chunk.len() - 1;
        let lanes = |poses: &[SoaTransform], j: usize| -> Affine8 {
            let ts: [Transform; 8] = core::array::from_fn(|i| {
                let at = soa * i.min(last);
                get_joint(&poses[at..at + soa], j).unwrap_or_default()
            });
            Affine8::from_trs(&Trs8::gather(|i| &ts[i]))
        };
        let mut worst = f32x8::ZERO;
        let mut nan = f32x8::ZERO;
        for j in 0..n {
            let (lr, lc) = (lanes(&pr, j), lanes(&pc, j));
            (mr[j], mc[j]) = match parents[j] {
                Some(p) => (mr[p].mul(&lr), mc[p].mul(&lc)),
                None => (lr.recentred(&lr.c[3]), lc.recentred(&lr.c[3])),
            };
            let e2 = shell_error_sq8(&mr[j], &mc[j], shell);
            nan |= e2.simd_ne(e2);
            worst = worst.max(e2);
        }
        let (worst, nan) = (worst.to_array(), nan.to_array());
        out.extend((0..chunk.len()).map(|i| {
            if nan[i] != 0.0 {
                f32::INFINITY
            } else {
                worst[i].sqrt()
            }
        }));
    }
    Ok(out)
}

/// Measures the object-space error of `compressed` against `raw`,
/// independently of the compressor: both clips are sampled through their
/// public samplers (clamped) at every frame and every mid-frame, posed with
/// the core's SIMD FK, and 6 virtual vertices per joint (±`shell` along the
/// joint's model-space x, y, z axes) are compared.
///
/// # Errors
/// [`Error::BadLength`] when the clips' pose sizes or frame counts differ
/// from each other or the skeleton's, and errors of the samplers.
pub fn measure_error(
    skeleton: &Skeleton<'_>,
    raw: &RawClip<'_>,
    compressed: &CompressedClip<'_>,
    shell: f32,
) -> Result<ErrorStats, Error> {
    crate::assets::check_clip(skeleton, raw)?;
    if compressed.joint_count() != skeleton.joint_count()
        || compressed.frame_count() != raw.frame_count()
    {
        return Err(Error::BadLength {
            buffer: "compressed clip",
            expected: raw.frame_count(),
            actual: compressed.frame_count(),
        });
    }
    let n = skeleton.joint_count();
    let roots: Vec<usize> = (0..n).filter(|&j| skeleton.parent(j).is_none()).collect();
    let rest = skeleton.rest_pose();
    let mut pr = vec![SoaTransform::IDENTITY; skeleton.soa_count()];
    let mut pc = pr.clone();
    let mut mr = vec![Mat4::IDENTITY; n];
    let mut mc = mr.clone();
    let frames = raw.frame_count();
    let rate = raw.sample_rate();
    let mut errs: Vec<f32> = Vec::with_capacity(frames * 2 * n * 6);
    let offsets = [
        Vec3::new(shell, 0.0, 0.0),
        Vec3::new(-shell, 0.0, 0.0),
        Vec3::new(0.0, shell, 0.0),
        Vec3::new(0.0, -shell, 0.0),
        Vec3::new(0.0, 0.0, shell),
        Vec3::new(0.0, 0.0, -shell),
    ];
    for i in 0..(2 * frames).saturating_sub(1) {
        let t = (i as f64 * 0.5 / f64::from(rate)) as f32;
        raw.sample(t, TimeMode::Clamp, &mut pr)?;
        compressed.sample_with_rest(t, TimeMode::Clamp, rest, &mut pc)?;
        for &j in &roots {
            recentre_root(&mut pr, &mut pc, j)?;
        }
        local_to_model(&FkJob::new(skeleton, &pr), &mut mr)?;
        local_to_model(&FkJob::new(skeleton, &pc), &mut mc)?;
        for (a, b) in mr.iter().zip(&mc) {
            for &o in &offsets {
                let d = a.transform_point(o) - b.transform_point(o);
                let e = d.length();
                errs.push(if e.is_nan() { f32::INFINITY } else { e });
            }
        }
    }
    if errs.is_empty() {
        return Ok(ErrorStats::default());
    }
    let count = errs.len();
    let mean = (errs.iter().map(|&e| f64::from(e)).sum::<f64>() / count as f64) as f32;
    let max = errs.iter().copied().fold(0.0f32, f32::max);
    let k = ((count as f64 * 0.99).ceil() as usize).clamp(1, count) - 1;
    let (_, p99, _) = errs.select_nth_unstable_by(k, f32::total_cmp);
    Ok(ErrorStats {
        max,
        mean,
        p99: *p99,
        count,
    })
}

/// Subtracts root joint `j`'s translation in `raw` from its translation in
/// both poses (see [`Origins`]; the same bits as [`Affine8::recentred`]).
fn recentre_root(
    raw: &mut [SoaTransform],
    dec: &mut [SoaTransform],
    j: usize,
) -> Result<(), Error> {
    let (Some(mut r), Some(mut d)) = (get_joint(raw, j), get_joint(dec, j)) else {
        return Err(Error::JointOutOfRange {
            joint: j,
            count: raw.len().min(dec.len()) * sinew_core::soa::LANES,
        });
    };
    let origin = r.translation;
    r.translation = r.translation - origin;
    d.translation = d.translation - origin;
    set_joint(raw, j, &r)?;
    set_joint(dec, j, &d)
}

/// Euclidean length.
pub(super) fn norm(v: [f32; 3]) -> f32 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}
