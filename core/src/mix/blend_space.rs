//! Blend spaces: which clips to blend, with which weights, for a parameter.
//!
//! - [`BlendSpace1D`]: samples on a line (e.g. speed); weights from the two
//!   neighbours, input clamped to the ends. [`PhaseSync`] keeps looping clips
//!   of different lengths in step: one shared normalised phase, advanced at
//!   the rate of the weighted mean cycle `L = Σ wᵢ Dᵢ`, optionally through
//!   sync markers (e.g. foot plants) so clips that start on different feet
//!   stay in phase. [`BlendSpace1D::weights_for_speed`] solves the weight that
//!   makes the synced root speed exact.
//! - [`BlendSpace2D`]: samples in a plane, triangulated offline (Delaunay, in
//!   `sinew-std`); at run time the triangle holding the input gives
//!   barycentric weights (at most 3 clips), and inputs outside the hull are
//!   clamped to its nearest point.

use heapless::Vec as HVec;

use crate::blend::{self, BlendJob, BlendLayer};
use crate::clip::{ClipSource, TimeMode};
use crate::error::Error;
use crate::fp::Fp;
use crate::soa::{check_len, SoaTransform};

/// Up to three `(sample, clip, weight)` triples; weights are `>= 0` and sum to 1.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Weights {
    /// Sample indices (into the blend space).
    pub samples: [usize; 3],
    /// Clip indices of those samples.
    pub clips: [usize; 3],
    /// Their weights.
    pub weights: [f32; 3],
    /// How many of the three are used (1..=3).
    pub count: usize,
}

impl Weights {
    /// The used `(sample, clip, weight)` triples.
    pub fn iter(&self) -> impl Iterator<Item = (usize, usize, f32)> + '_ {
        (0..self.count.min(3)).map(|i| (self.samples[i], self.clips[i], self.weights[i]))
    }

    /// Weight of sample `s` (0 when it is not used).
    #[must_use]
    pub fn of_sample(&self, s: usize) -> f32 {
        self.iter()
            .filter(|(x, _, _)| *x == s)
            .map(|(_, _, w)| w)
            .sum()
    }
}

/// One sample of a 1D blend space.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample1D<'a> {
    /// Position on the parameter axis (e.g. root speed in m/s).
    pub position: f32,
    /// Clip index in the caller's clip table.
    pub clip: usize,
    /// Length of the clip's loop in seconds, `> 0`.
    pub duration: f32,
    /// Sync markers: normalised clip phases (`0..1`) of the same events in
    /// the same order for every sample (e.g. `[left plant, right plant]`);
    /// empty for plain normalised-time sync.
    pub markers: &'a [f32],
}

/// A 1D blend space of up to `N` samples, sorted by position.
#[derive(Clone, Debug)]
pub struct BlendSpace1D<'a, const N: usize> {
    samples: HVec<Sample1D<'a>, N>,
}

impl<'a, const N: usize> BlendSpace1D<'a, N> {
    /// Validates and sorts the samples.
    ///
    /// # Errors
    /// [`Error::EmptyBlendSpace`], [`Error::CapacityExceeded`],
    /// [`Error::NonFinite`] (position), [`Error::DuplicateSample`],
    /// [`Error::InvalidParameter`] (duration not positive, markers out of
    /// `0..1` or not the same count for every sample).
    pub fn new(samples: &[Sample1D<'a>]) -> Result<Self, Error> {
        if samples.is_empty() {
            return Err(Error::EmptyBlendSpace);
        }
        if samples.len() > N {
            return Err(Error::CapacityExceeded { capacity: N });
        }
        let markers = samples[0].markers.len();
        for s in samples {
            if !s.position.is_finite() {
                return Err(Error::NonFinite {
                    what: "blend-space position",
                });
            }
            if !(s.duration.is_finite() && s.duration > 0.0) {
                return Err(Error::InvalidParameter {
                    what: "blend-space sample duration must be finite and > 0",
                });
            }
            if s.markers.len() != markers || !s.markers.iter().all(|m| (0.0..1.0).contains(m)) {
                return Err(Error::InvalidParameter {
                    what: "sync markers must be in 0..1 and as many for every sample",
                });
            }
        }
        for i in 0..samples.len() {
            for k in i + 1..samples.len() {
                if samples[i].position == samples[k].position {
                    return Err(Error::DuplicateSample {
                        first: i,
                        second: k,
                    });
                }
            }
        }
        let mut sorted: HVec<Sample1D<'a>, N> = HVec::new();
        for s in samples {
            let at = sorted
                .iter()
                .position(|x| x.position > s.position)
                .unwrap_or(sorted.len());
            // Cannot fail: samples.len() <= N was checked.
            let _ = sorted.insert(at, *s);
        }
        Ok(BlendSpace1D { samples: sorted })
    }

    /// The samples, sorted by position.
    #[inline]
    #[must_use]
    pub fn samples(&self) -> &[Sample1D<'a>] {
        &self.samples
    }

    fn pair(&self, a: usize, wb: f32) -> Weights {
        let b = (a + 1).min(self.samples.len() - 1);
        Weights {
            samples: [a, b, 0],
            clips: [self.samples[a].clip, self.samples[b].clip, 0],
            weights: [1.0 - wb, wb, 0.0],
            count: if a == b { 1 } else { 2 },
        }
    }

    fn single(&self, i: usize) -> Weights {
        Weights {
            samples: [i, 0, 0],
            clips: [self.samples[i].clip, 0, 0],
            weights: [1.0, 0.0, 0.0],
            count: 1,
        }
    }

    /// Weights at `x` (clamped to the first and last sample).
    ///
    /// # Errors
    /// [`Error::NonFinite`] for a NaN or infinite `x`.
    pub fn weights(&self, x: f32) -> Result<Weights, Error> {
        if !x.is_finite() {
            return Err(Error::NonFinite {
                what: "blend-space input",
            });
        }
        let s = &self.samples;
        let last = s.len() - 1;
        if x <= s[0].position {
            return Ok(self.single(0));
        }
        if x >= s[last].position {
            return Ok(self.single(last));
        }
        let a = s
            .iter()
            .rposition(|p| p.position <= x)
            .unwrap_or(0)
            .min(last - 1);
        let t = (x - s[a].position) / (s[a + 1].position - s[a].position);
        Ok(self.pair(a, t))
    }

    /// Weights that make the phase-synced root speed exactly `v`, when
    /// sample positions are the clips' root speeds (m/s).
    ///
    /// Synced, the blend covers `Σ wᵢ vᵢ Dᵢ` metres per cycle of `Σ wᵢ Dᵢ`
    /// seconds, so between neighbours `a`, `b` the weight of `b` is
    /// `w = (v_a − v) D_a / ((v_a − v) D_a − (v_b − v) D_b)`, not the linear
    /// `(v − v_a) / (v_b − v_a)`. `v` is clamped to the samples' range.
    ///
    /// # Errors
    /// [`Error::NonFinite`] for a NaN or infinite `v`.
    pub fn weights_for_speed(&self, v: f32) -> Result<Weights, Error> {
        let lin = self.weights(v)?;
        if lin.count < 2 {
            return Ok(lin);
        }
        let (a, b) = (&self.samples[lin.samples[0]], &self.samples[lin.samples[1]]);
        let ea = (a.position - v) * a.duration;
        let eb = (b.position - v) * b.duration;
        let den = ea - eb;
        let w = if den.abs() > 0.0 {
            ea / den
        } else {
            lin.weights[1]
        };
        Ok(self.pair(lin.samples[0], w.clamp(0.0, 1.0)))
    }

    /// Synced cycle length `Σ wᵢ Dᵢ` in seconds.
    #[must_use]
    pub fn cycle_duration(&self, w: &Weights) -> f32 {
        w.iter()
            .map(|(s, _, wt)| wt * self.samples.get(s).map_or(0.0, |x| x.duration))
            .sum()
    }

    /// Number of sync segments per cycle (markers, or 1 without markers).
    #[inline]
    #[must_use]
    pub fn segments(&self) -> usize {
        self.samples[0].markers.len().max(1)
    }

    /// Normalised phase span `(0, 1]` of segment `k` of sample `s`.
    fn span(&self, s: &Sample1D<'_>, k: usize) -> (f32, f32) {
        let m = s.markers;
        if m.len() < 2 {
            return (m.first().copied().unwrap_or(0.0), 1.0);
        }
        let a = m[k % m.len()];
        let b = m[(k + 1) % m.len()];
        let d = b - a;
        (a, if d > 0.0 { d } else { d + 1.0 })
    }
}

/// A shared phase for a 1D blend space: `phase` in `[0, segments)`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PhaseSync {
    /// Integer part: sync segment; fraction: progress through it.
    pub phase: f32,
}

impl PhaseSync {
    /// Advances by `dt` seconds with the current weights: through segment
    /// `k` at the rate of its weighted duration `Σ wᵢ spanᵢₖ Dᵢ`, so a whole
    /// cycle takes `Σ wᵢ Dᵢ`.
    ///
    /// # Errors
    /// [`Error::NonFinite`] (`dt` NaN, infinite or negative).
    pub fn advance<const N: usize>(
        &mut self,
        space: &BlendSpace1D<'_, N>,
        w: &Weights,
        dt: f32,
    ) -> Result<(), Error> {
        if !(dt.is_finite() && dt >= 0.0) {
            return Err(Error::NonFinite { what: "dt" });
        }
        let segs = space.segments();
        // Whole cycles change nothing: keep the remainder, then walk at most
        // one cycle's segments.
        let cycle = space.cycle_duration(w);
        let mut left = if cycle > 0.0 { dt % cycle } else { dt };
        for _ in 0..=segs {
            let k = (self.phase as usize).min(segs - 1);
            let seg_len: f32 = w
                .iter()
                .map(|(s, _, wt)| {
                    space
                        .samples
                        .get(s)
                        .map_or(0.0, |x| wt * space.span(x, k).1 * x.duration)
                })
                .sum();
            if seg_len <= 0.0 {
                return Ok(());
            }
            let frac = self.phase - k as f32;
            let remaining = (1.0 - frac) * seg_len;
            if left < remaining {
                self.phase = k as f32 + frac + left / seg_len;
                return Ok(());
            }
            left -= remaining;
            self.phase = ((k + 1) % segs) as f32;
        }
        Ok(())
    }

    /// The time in seconds at which sample `s` is played for the current phase.
    #[must_use]
    pub fn clip_time<const N: usize>(&self, space: &BlendSpace1D<'_, N>, s: usize) -> f32 {
        let Some(x) = space.samples.get(s) else {
            return 0.0;
        };
        let segs = space.segments();
        let k = (self.phase as usize).min(segs - 1);
        let frac = self.phase - k as f32;
        let (start, span) = space.span(x, k);
        let p = start + frac * span;
        (p - libm::floorf(p)) * x.duration
    }
}

/// Plays a blend space's weights: samples clip `w.clips[i]` at
/// `time(w.samples[i])` seconds (e.g. [`PhaseSync::clip_time`]) for each
/// used sample and blends the poses by `w.weights` into `out`.
///
/// Works with any [`ClipSource`] (raw or compressed). `rest` is the
/// skeleton's rest pose: it fills joints where the weights vanish and
/// supplies the tracks of rest-pose-stripped clips. `scratch` holds the
/// sampled poses: `3 × rest.len()` blocks.
///
/// # Errors
/// [`Error::UnknownClip`], [`Error::BadLength`] (`scratch`, `out`, a clip
/// of another pose size), [`Error::NonFinite`] (a time), and the blend's
/// errors.
pub fn sample_blend<C: ClipSource>(
    clips: &[C],
    w: &Weights,
    time: impl Fn(usize) -> f32,
    mode: TimeMode,
    rest: &[SoaTransform],
    scratch: &mut [SoaTransform],
    out: &mut [SoaTransform],
) -> Result<(), Error> {
    let n = rest.len();
    check_len("blend-space scratch", 3 * n, scratch.len())?;
    let (a, bc) = scratch.split_at_mut(n);
    let (b, c) = bc.split_at_mut(n);
    let poses = [a, b, c];
    let used = w.count.min(3);
    for (i, (sample, clip, _)) in w.iter().enumerate() {
        let c = clips.get(clip).ok_or(Error::UnknownClip {
            clip,
            count: clips.len(),
        })?;
        c.sample(time(sample), mode, rest, poses[i])?;
    }
    let [a, b, c] = poses;
    let layers = [
        BlendLayer::new(a, w.weights[0]),
        BlendLayer::new(b, w.weights[1]),
        BlendLayer::new(c, w.weights[2]),
    ];
    blend::blend(&BlendJob::new(&layers[..used], &[], rest), out)
}

/// A precomputed triangle: vertex indices and the inverse of its edge matrix.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Tri {
    idx: [u16; 3],
    a: [f32; 2],
    /// Row-major inverse of `[b − a, c − a]`.
    inv: [f32; 4],
}

/// A boundary edge `a → a + ab` of the triangulation, third vertex `o`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Edge {
    idx: [u16; 3],
    a: [f32; 2],
    ab: [f32; 2],
    inv_len2: f32,
}

/// A 2D blend space of up to `S` samples and `T` triangles (a Delaunay
/// triangulation of `S` points has at most `2S − 5` triangles).
#[derive(Clone, Debug)]
pub struct BlendSpace2D<const S: usize, const T: usize> {
    points: HVec<[f32; 2], S>,
    clips: HVec<usize, S>,
    tris: HVec<Tri, T>,
    /// Edges used by exactly one triangle (the hull of a proper
    /// triangulation); empty if they did not fit, then every edge is searched.
    hull: HVec<Edge, S>,
}

impl<const S: usize, const T: usize> BlendSpace2D<S, T> {
    /// Checks samples and a triangulation of them (e.g. from
    /// `sinew_std::blend_space::delaunay`) and precomputes each triangle.
    ///
    /// # Errors
    /// [`Error::EmptyBlendSpace`], [`Error::CapacityExceeded`],
    /// [`Error::BadLength`] (clips not one per point), [`Error::NonFinite`],
    /// [`Error::DuplicateSample`], [`Error::InvalidParameter`] (no triangle,
    /// or a vertex index out of range), [`Error::DegenerateBlendSpace`]
    /// (a triangle without area).
    pub fn new(
        points: &[[f32; 2]],
        clips: &[usize],
        triangles: &[[u16; 3]],
    ) -> Result<Self, Error> {
        if points.is_empty() {
            return Err(Error::EmptyBlendSpace);
        }
        if points.len() > S {
            return Err(Error::CapacityExceeded { capacity: S });
        }
        if triangles.len() > T {
            return Err(Error::CapacityExceeded { capacity: T });
        }
        crate::soa::check_len("blend-space clips", points.len(), clips.len())?;
        if !points.iter().flatten().all(|v| v.is_finite()) {
            return Err(Error::NonFinite {
                what: "blend-space position",
            });
        }
        for i in 0..points.len() {
            for k in i + 1..points.len() {
                if points[i] == points[k] {
                    return Err(Error::DuplicateSample {
                        first: i,
                        second: k,
                    });
                }
            }
        }
        if triangles.is_empty() {
            return Err(Error::InvalidParameter {
                what: "a 2D blend space needs at least one triangle",
            });
        }
        let mut tris = HVec::new();
        for t in triangles {
            let get = |i: u16| points.get(i as usize).copied();
            let (Some(a), Some(b), Some(c)) = (get(t[0]), get(t[1]), get(t[2])) else {
                return Err(Error::InvalidParameter {
                    what: "triangle names a sample that does not exist",
                });
            };
            let (e1, e2) = ([b[0] - a[0], b[1] - a[1]], [c[0] - a[0], c[1] - a[1]]);
            let det = e1[0] * e2[1] - e2[0] * e1[1];
            let scale = (e1[0].abs() + e1[1].abs()) * (e2[0].abs() + e2[1].abs());
            if det.abs().partial_cmp(&(1e-6 * scale)) != Some(core::cmp::Ordering::Greater) {
                return Err(Error::DegenerateBlendSpace);
            }
            let inv = [e2[1] / det, -e2[0] / det, -e1[1] / det, e1[0] / det];
            // Cannot fail: triangles.len() <= T was checked.
            let _ = tris.push(Tri { idx: *t, a, inv });
        }
        let mut pts = HVec::new();
        let mut cl = HVec::new();
        for (p, c) in points.iter().zip(clips) {
            let _ = pts.push(*p);
            let _ = cl.push(*c);
        }
        let mut hull = HVec::new();
        'edges: for t in triangles {
            for e in 0..3 {
                let (i, k) = (t[e], t[(e + 1) % 3]);
                let uses = triangles
                    .iter()
                    .flat_map(|u| (0..3).map(move |f| (u[f], u[(f + 1) % 3])))
                    .filter(|&(x, y)| (x, y) == (i, k) || (x, y) == (k, i))
                    .count();
                if uses == 1 {
                    let edge = make_edge(points, [i, k, t[(e + 2) % 3]]);
                    if hull.push(edge).is_err() {
                        hull.clear();
                        break 'edges;
                    }
                }
            }
        }
        Ok(BlendSpace2D {
            points: pts,
            clips: cl,
            tris,
            hull,
        })
    }

    /// The sample positions.
    #[inline]
    #[must_use]
    pub fn points(&self) -> &[[f32; 2]] {
        &self.points
    }

    /// Number of triangles.
    #[inline]
    #[must_use]
    pub fn triangle_count(&self) -> usize {
        self.tris.len()
    }

    fn make(&self, idx: [u16; 3], w: [f32; 3]) -> Weights {
        let s = idx.map(|i| i as usize);
        Weights {
            samples: s,
            clips: s.map(|i| self.clips.get(i).copied().unwrap_or(0)),
            weights: w,
            count: 3,
        }
    }

    /// Barycentric weights at `p`; outside the hull, at the nearest hull point.
    ///
    /// The weights are f32, from each triangle's inverse computed by
    /// [`new`](Self::new): inside a triangle they reproduce `p` within a
    /// few `f32::EPSILON` times the triangle's condition
    /// (`|e1|₁ |e2|₁ / |det|` of its edges from the first vertex) times its
    /// size. Well-shaped triangles reproduce it to about 1e-6 of their size;
    /// the slivers `new` still accepts (condition up to 1e6) only to about
    /// 1e-2.
    ///
    /// # Errors
    /// [`Error::NonFinite`] for a NaN or infinite input.
    pub fn weights(&self, p: [f32; 2]) -> Result<Weights, Error> {
        if !(p[0].is_finite() && p[1].is_finite()) {
            return Err(Error::NonFinite {
                what: "blend-space input",
            });
        }
        const EPS: f32 = -1e-6;
        for t in &self.tris {
            let d = [p[0] - t.a[0], p[1] - t.a[1]];
            let l1 = t.inv[0] * d[0] + t.inv[1] * d[1];
            let l2 = t.inv[2] * d[0] + t.inv[3] * d[1];
            let l0 = 1.0 - l1 - l2;
            if l0 >= EPS && l1 >= EPS && l2 >= EPS {
                let (l0, l1, l2) = (l0.max_num(0.0), l1.max_num(0.0), l2.max_num(0.0));
                let sum = l0 + l1 + l2;
                return Ok(self.make(t.idx, [l0 / sum, l1 / sum, l2 / sum]));
            }
        }
        // Outside every triangle: the nearest point on the boundary.
        let mut best = (f32::INFINITY, [0u16; 3], [1.0f32, 0.0, 0.0]);
        let mut visit = |e: &Edge| {
            let ap = [p[0] - e.a[0], p[1] - e.a[1]];
            let s = ((ap[0] * e.ab[0] + ap[1] * e.ab[1]) * e.inv_len2).clamp(0.0, 1.0);
            let q = [s * e.ab[0] - ap[0], s * e.ab[1] - ap[1]];
            let d2 = q[0] * q[0] + q[1] * q[1];
            if d2 < best.0 {
                best = (d2, e.idx, [1.0 - s, s, 0.0]);
            }
        };
        if self.hull.is_empty() {
            for t in &self.tris {
                for e in 0..3 {
                    let idx = [t.idx[e], t.idx[(e + 1) % 3], t.idx[(e + 2) % 3]];
                    visit(&make_edge(&self.points, idx));
                }
            }
        } else {
            self.hull.iter().for_each(visit);
        }
        Ok(self.make(best.1, best.2))
    }
}

/// The edge `idx[0] → idx[1]` (third vertex `idx[2]`); indices are checked by the caller.
fn make_edge(points: &[[f32; 2]], idx: [u16; 3]) -> Edge {
    let get = |i: u16| points.get(i as usize).copied().unwrap_or([0.0; 2]);
    let (a, b) = (get(idx[0]), get(idx[1]));
    let ab = [b[0] - a[0], b[1] - a[1]];
    let len2 = ab[0] * ab[0] + ab[1] * ab[1];
    Edge {
        idx,
        a,
        ab,
        inv_len2: if len2 > 0.0 { 1.0 / len2 } else { 0.0 },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Worked example: forward run (0, 4.5), forward walk (0, 1.5), right run
    /// (4.5, 0); p = (1, 2.5) gives 0.444 / 0.333 / 0.222.
    #[test]
    fn worked_example_barycentric() {
        let pts = [[0.0, 4.5], [0.0, 1.5], [4.5, 0.0]];
        let space = BlendSpace2D::<3, 1>::new(&pts, &[10, 11, 12], &[[0, 1, 2]]).unwrap();
        let w = space.weights([1.0, 2.5]).unwrap();
        let expect = [4.0 / 9.0, 3.0 / 9.0, 2.0 / 9.0];
        for (s, e) in expect.iter().enumerate() {
            assert!((w.of_sample(s) - e).abs() < 1e-5, "{w:?}");
        }
        assert_eq!(w.clips, [10, 11, 12]);
    }

    #[test]
    fn one_d_and_sync() {
        let samples = [
            Sample1D {
                position: 1.5,
                clip: 0,
                duration: 1.1,
                markers: &[],
            },
            Sample1D {
                position: 4.5,
                clip: 1,
                duration: 0.63,
                markers: &[],
            },
        ];
        let space = BlendSpace1D::<'_, 4>::new(&samples).unwrap();
        let w = space.weights(2.25).unwrap();
        assert!((w.weights[0] - 0.75).abs() < 1e-6);
        let l = space.cycle_duration(&w);
        assert!((l - (0.75 * 1.1 + 0.25 * 0.63)).abs() < 1e-6);
        let mut sync = PhaseSync::default();
        sync.advance(&space, &w, l * 0.5).unwrap();
        assert!((sync.phase - 0.5).abs() < 1e-5);
        assert!((sync.clip_time(&space, 0) - 0.55).abs() < 1e-5);
        // Exact speed: v = Σ w v D / Σ w D.
        let w = space.weights_for_speed(3.0).unwrap();
        let d: f32 = w
            .iter()
            .map(|(s, _, x)| x * samples[s].position * samples[s].duration)
            .sum();
        assert!((d / space.cycle_duration(&w) - 3.0).abs() < 1e-5);
    }
}
