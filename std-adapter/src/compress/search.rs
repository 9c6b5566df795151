//! The per-segment bit-rate search: the largest budget multiplier whose
//! measured error fits the bound, then a greedy descent, leaves first.

use sinew_core::compressed::codec::MAX_QUANTIZED_BITS;
use sinew_core::compressed::RAW_BITS;
use sinew_core::{Quat, Transform, Vec3};

use super::analysis::{Analysis, Kind, SegTrack, Shape, Track};
use super::measure::{
    fits8, local8, pose8, root_origins, sample_blocks, sample_count, Affine8, Origins,
};
use super::CompressOptions;

/// Searches one segment: returns the chosen encodings.
pub(super) struct SegmentSearch<'a> {
    pub(super) a: &'a Analysis,
    pub(super) opts: &'a CompressOptions,
    pub(super) frames: std::ops::Range<usize>,
    /// memo[track][rate index] (0..=23 then RAW at 24).
    pub(super) memo: Vec<Vec<Option<SegTrack>>>,
    /// Per track: the segment's ranges and trends (rate-independent).
    pub(super) shapes: Vec<Option<Shape>>,
    /// Raw models at the segment's samples (frames, then mid-frames), in
    /// blocks of eight samples: `[joint][block]`.
    pub(super) raw_models: Vec<Vec<Affine8>>,
    /// The roots' raw translations the models are measured from.
    pub(super) origins: Origins,
}

pub(super) fn rate_slot(r: u8) -> usize {
    if r == RAW_BITS {
        MAX_QUANTIZED_BITS as usize + 1
    } else {
        r as usize
    }
}

/// Writes one decoded track value into a joint's transform.
pub(super) fn set_track(t: &mut Transform, kind: Kind, v: &[f32; 4]) {
    match kind {
        Kind::Translation => t.translation = Vec3::new(v[0], v[1], v[2]),
        Kind::Rotation => t.rotation = Quat::new(v[0], v[1], v[2], v[3]).normalize(),
        Kind::Scale => t.scale = Vec3::new(v[0], v[1], v[2]),
    }
}

/// Per joint: its subtree in joint order, each joint with the position of
/// its parent in that list (`None` for the subtree's root).
pub(super) fn subtrees(parents: &[Option<usize>]) -> Vec<Vec<(usize, Option<usize>)>> {
    let n = parents.len();
    (0..n)
        .map(|j| {
            let mut pos = vec![None; n];
            let mut sub = vec![(j, None)];
            pos[j] = Some(0);
            for c in j + 1..n {
                if let Some(pp) = parents[c].and_then(|p| pos[p]) {
                    pos[c] = Some(sub.len());
                    sub.push((c, Some(pp)));
                }
            }
            sub
        })
        .collect()
}

/// What a refinement trial is measured against.
pub(super) struct Trial<'t> {
    pub(super) a: &'t Analysis,
    /// The segment search's raw models (`[joint][block]`).
    pub(super) raw_models: &'t [Vec<Affine8>],
    /// The roots' raw translations the models are measured from.
    pub(super) origins: &'t Origins,
    pub(super) shell: f32,
    /// The square of the error bound.
    pub(super) target2: f32,
}

/// A segment's decoded frames and their FK at every sample (frames, then
/// mid-frames, in blocks of eight), kept up to date while a refinement
/// lowers rates.
pub(super) struct Posed {
    pub(super) len: usize,
    pub(super) blocks: usize,
    /// Decoded local transforms, `[frame * joints + joint]`.
    pub(super) dec: Vec<Transform>,
    /// Local and model transforms, `[joint][block]`.
    pub(super) locals: Vec<Vec<Affine8>>,
    pub(super) models: Vec<Vec<Affine8>>,
    /// Scratch of a trial: the joint's frames, its locals per block, and
    /// its subtree's models per block (`[position in the subtree][block]`).
    /// A trial that passes swaps its vectors in rather than copying them.
    pub(super) joint_dec: Vec<Transform>,
    pub(super) joint_locals: Vec<Affine8>,
    pub(super) trial: Vec<Vec<Affine8>>,
    /// Per joint: the block at which a trial on it last failed, tried
    /// first next time (a failing trial then usually stops there).
    pub(super) hot: Vec<usize>,
}

impl Posed {
    pub(super) fn new(a: &Analysis, dec: Vec<Transform>, len: usize, origins: &Origins) -> Posed {
        let n = a.joints;
        let mut locals = Vec::with_capacity(n);
        let models = pose8(
            &a.parents,
            len,
            |j, f| &dec[f * n + j],
            origins,
            Some(&mut locals),
        );
        let blocks = sample_blocks(sample_count(len));
        Posed {
            len,
            blocks,
            dec,
            locals,
            models,
            joint_dec: vec![Transform::IDENTITY; len],
            joint_locals: vec![Affine8::IDENTITY; blocks],
            trial: vec![vec![Affine8::IDENTITY; blocks]; n],
            hot: vec![0; n],
        }
    }

    /// Tries `track` decoded as `values` (per frame): when every virtual
    /// vertex of its joint's subtree `sub` stays within the target at every
    /// sample, keeps it and returns `true`. Only that subtree moves, so the
    /// trial runs FK over it alone against the cached models of the rest.
    pub(super) fn try_track(
        &mut self,
        t: &Trial<'_>,
        sub: &[(usize, Option<usize>)],
        track: &Track,
        values: &[[f32; 4]],
    ) -> bool {
        let (n, len, blocks, j) = (t.a.joints, self.len, self.blocks, track.joint);
        for (i, (d, v)) in self.joint_dec.iter_mut().zip(values).enumerate() {
            *d = self.dec[i * n + j];
            set_track(d, track.kind, v);
        }
        let samples = sample_count(len);
        for (b, l) in self.joint_locals.iter_mut().enumerate() {
            let count = samples.saturating_sub(8 * b).min(8);
            *l = local8(|f| &self.joint_dec[f], len, b, count);
            if t.a.parents[j].is_none() {
                *l = l.recentred(&t.origins[j][b]);
            }
        }
        let hot = self.hot[j];
        for i in 0..blocks {
            let b = (i + hot) % blocks;
            for (pos, &(c, parent_pos)) in sub.iter().enumerate() {
                let local = if c == j {
                    &self.joint_locals[b]
                } else {
                    &self.locals[c][b]
                };
                let m = match (parent_pos, t.a.parents[c]) {
                    (Some(pp), _) => self.trial[pp][b].mul(local),
                    (None, Some(p)) => self.models[p][b].mul(local),
                    (None, None) => *local,
                };
                if !fits8(&t.raw_models[c][b], &m, t.shell, t.target2) {
                    self.hot[j] = b;
                    return false;
                }
                self.trial[pos][b] = m;
            }
        }
        for (pos, &(c, _)) in sub.iter().enumerate() {
            core::mem::swap(&mut self.models[c], &mut self.trial[pos]);
        }
        core::mem::swap(&mut self.locals[j], &mut self.joint_locals);
        for (i, d) in self.joint_dec.iter().enumerate() {
            self.dec[i * n + j] = *d;
        }
        true
    }
}

impl<'a> SegmentSearch<'a> {
    pub(super) fn new(
        a: &'a Analysis,
        opts: &'a CompressOptions,
        frames: std::ops::Range<usize>,
    ) -> Self {
        let n = a.joints;
        let (first, len) = (frames.start, frames.len());
        let raw = |f: usize, j: usize| &a.raw[(first + f) * n + j];
        let origins = root_origins(&a.parents, len, |j, f| raw(f, j));
        let raw_models = pose8(&a.parents, len, |j, f| raw(f, j), &origins, None);
        SegmentSearch {
            a,
            opts,
            memo: vec![vec![None; MAX_QUANTIZED_BITS as usize + 2]; a.tracks.len()],
            shapes: vec![None; a.tracks.len()],
            frames,
            raw_models,
            origins,
        }
    }

    pub(super) fn get(&mut self, k: usize, r: u8) -> &SegTrack {
        let slot = rate_slot(r);
        if self.memo[k][slot].is_none() {
            let t = &self.a.tracks[k];
            let shape = *self.shapes[k].get_or_insert_with(|| t.shape(self.frames.clone(), true));
            let enc = t.encode_shaped(self.frames.clone(), r, true, Some(shape));
            self.memo[k][slot] = Some(enc);
        }
        match &self.memo[k][slot] {
            Some(e) => e,
            None => unreachable!("memo slot filled above"),
        }
    }

    /// The lowest rate whose local error fits `budget` (binary search over
    /// 0..=23; verbatim when even 23 bits do not fit).
    pub(super) fn rate_for(&mut self, k: usize, budget: f32) -> u8 {
        if self.get(k, MAX_QUANTIZED_BITS).err > budget {
            return RAW_BITS;
        }
        let (mut lo, mut hi) = (0u8, MAX_QUANTIZED_BITS);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.get(k, mid).err <= budget {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        lo
    }

    pub(super) fn rates(&mut self, mult: f32) -> Vec<u8> {
        (0..self.a.tracks.len())
            .map(|k| {
                if mult <= 0.0 {
                    RAW_BITS
                } else {
                    self.rate_for(k, self.a.budget[k] * mult)
                }
            })
            .collect()
    }

    /// The segment's decoded local transforms at `rates`, `[frame * joints + joint]`.
    pub(super) fn decode_frames(&mut self, rates: &[u8]) -> Vec<Transform> {
        let a = self.a;
        let n = a.joints;
        let len = self.frames.len();
        let mut dec: Vec<Transform> = Vec::with_capacity(len * n);
        for _ in 0..len {
            dec.extend_from_slice(&a.fixed);
        }
        for (k, &r) in rates.iter().enumerate() {
            let (joint, kind) = (a.tracks[k].joint, a.tracks[k].kind);
            for (i, v) in self.get(k, r).decoded.iter().enumerate() {
                set_track(&mut dec[i * n + joint], kind, v);
            }
        }
        dec
    }

    /// Whether the segment decoded at `rates` keeps every virtual vertex
    /// within `target` at its frames and inner mid-frames.
    pub(super) fn fits(&mut self, rates: &[u8], target: f32) -> bool {
        let a = self.a;
        let n = a.joints;
        let len = self.frames.len();
        let dec = self.decode_frames(rates);
        let samples = sample_count(len);
        let blocks = sample_blocks(samples);
        let (shell, target2) = (self.opts.shell, target * target);
        // FK joint by joint, stopping at the first vertex out of bounds.
        let mut models: Vec<Affine8> = Vec::with_capacity(n * blocks);
        for j in 0..n {
            for b in 0..blocks {
                let count = samples.saturating_sub(8 * b).min(8);
                let local = local8(|f| &dec[f * n + j], len, b, count);
                let m = match a.parents[j] {
                    Some(p) => models[p * blocks + b].mul(&local),
                    None => local.recentred(&self.origins[j][b]),
                };
                if !fits8(&self.raw_models[j][b], &m, shell, target2) {
                    return false;
                }
                models.push(m);
            }
        }
        true
    }

    /// Greedy descent after the multiplier search, in two steps that each
    /// keep every virtual vertex within `target` at every frame and
    /// mid-frame of the segment: first each track's rate goes down one bit
    /// at a time (two rounds, leaves first: a leaf's error depends on its
    /// own tracks and its ancestors only, so it goes lowest before its
    /// ancestors take what is left of the bound; the second round takes
    /// what later changes freed, since quantization errors do not simply
    /// add), then each component of each track tries one bit less on its
    /// own, and the components that failed try once more after all the
    /// other drops (a drop further down a chain can leave room for one that
    /// did not fit before it). Returns the chosen encodings.
    pub(super) fn refine(&mut self, mut rates: Vec<u8>, target: f32) -> Vec<SegTrack> {
        let a = self.a;
        let n = a.joints;
        let dec = self.decode_frames(&rates);
        let mut posed = Posed::new(a, dec, self.frames.len(), &self.origins);
        let subtrees = subtrees(&a.parents);
        // Borrowed out of `self` while `self.get` fills the memo.
        let raw_models = std::mem::take(&mut self.raw_models);
        let origins = std::mem::take(&mut self.origins);
        let trial = Trial {
            a,
            raw_models: &raw_models,
            origins: &origins,
            shell: self.opts.shell,
            target2: target * target,
        };
        // A failed trial can only pass later if a joint it depends on (its
        // ancestors and its subtree) changed since.
        let mut epoch = 0u32;
        let mut changed = vec![0u32; n];
        let mut failed_at: Vec<Option<u32>> = vec![None; rates.len()];
        for k in (0..rates.len()).rev().chain((0..rates.len()).rev()) {
            let j = a.tracks[k].joint;
            let sub = &subtrees[j];
            if let Some(f) = failed_at[k] {
                let mut anc = a.parents[j];
                let mut stale = sub.iter().any(|&(c, _)| changed[c] > f);
                while let (false, Some(p)) = (stale, anc) {
                    stale = changed[p] > f;
                    anc = a.parents[p];
                }
                if !stale {
                    continue;
                }
            }
            while rates[k] != RAW_BITS && rates[k] > 0 {
                let cand = rates[k] - 1;
                let values = &self.get(k, cand).decoded;
                if !posed.try_track(&trial, sub, &a.tracks[k], values) {
                    failed_at[k] = Some(epoch);
                    break;
                }
                epoch += 1;
                changed[j] = epoch;
                rates[k] = cand;
            }
        }
        let mut chosen: Vec<SegTrack> = rates
            .iter()
            .enumerate()
            .map(|(k, &r)| self.get(k, r).clone())
            .collect();
        let first = self.frames.start;
        let mut failed = Vec::new();
        for (k, t) in chosen.iter_mut().enumerate().rev() {
            if t.rate == RAW_BITS || t.rate == 0 {
                continue;
            }
            let track = &a.tracks[k];
            for c in 0..3 {
                let cand = track.with_drop(t, first, c);
                if posed.try_track(&trial, &subtrees[track.joint], track, &cand.decoded) {
                    *t = cand;
                } else {
                    failed.push((k, c));
                }
            }
        }
        for (k, c) in failed {
            let track = &a.tracks[k];
            let cand = track.with_drop(&chosen[k], first, c);
            if posed.try_track(&trial, &subtrees[track.joint], track, &cand.decoded) {
                chosen[k] = cand;
            }
        }
        self.raw_models = raw_models;
        self.origins = origins;
        chosen
    }

    /// The rates of the largest budget multiplier whose measured error stays
    /// under `target`, and that multiplier's index. The search starts at
    /// index `hint` (the previous segment's, as neighbouring segments are
    /// alike) and walks up or down from there.
    pub(super) fn search(&mut self, target: f32, scale: f32, hint: usize) -> (Vec<u8>, usize) {
        const MULTS: [f32; 12] = [
            0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 24.0, 32.0,
        ];
        let at = |s: &mut Self, i: usize| -> Option<Vec<u8>> {
            let rates = s.rates(MULTS[i] * scale);
            s.fits(&rates, target).then_some(rates)
        };
        let mut i = hint.min(MULTS.len() - 1);
        if let Some(mut best) = at(self, i) {
            while i + 1 < MULTS.len() {
                match at(self, i + 1) {
                    Some(r) => (best, i) = (r, i + 1),
                    None => break,
                }
            }
            return (best, i);
        }
        while i > 0 {
            i -= 1;
            if let Some(r) = at(self, i) {
                return (r, i);
            }
        }
        for m in [0.25, 0.1, 0.03] {
            let rates = self.rates(m * scale);
            if self.fits(&rates, target) {
                return (rates, 0);
            }
        }
        (vec![RAW_BITS; self.a.tracks.len()], 0)
    }
}
