//! The scalar reference decoder: the readable specification of the
//! container. Every joint of every sample is decoded on its own, one value
//! at a time, by walking the container from its start with the formulas of
//! [`super::codec`]; the fast decoders are tested against it.

use super::codec::{drop_w_rotation, smallest_three_rotation, ComponentDecode};
use super::format::{
    lane_kinds, lane_rates, param_index, read_bits, track_param_floats, LaneKind, CURVE_BYTE,
    KIND_DEFAULT, LANE_META_BYTES, RAW_BITS, TREND_BYTE,
};
use super::{CompressedClip, Defaults};
use crate::clip::TimeMode;
use crate::error::Error;
use crate::math::{Quat, Transform, Vec3};
use crate::soa::{check_len, get_joint, SoaTransform, LANES};

impl CompressedClip<'_> {
    /// The clip constant `i` of the stored block track whose constants
    /// start at float `p` (0 outside the section).
    fn param(&self, p: usize, i: usize) -> f32 {
        let v = p + i;
        self.params.get(v / 4).map_or(0.0, |x| x.to_array()[v % 4])
    }

    /// Where joint `j`'s track `track` is animated: its packed block and
    /// slot, found by walking the packed blocks' lanes (each a joint,
    /// [`CompressedClip::dest`], in stream order); `None` when the joint
    /// block's own track holds it (a constant or the default).
    fn packed_slot(&self, j: usize, track: usize) -> Option<(usize, usize)> {
        let mut k = 0usize;
        let blocks = self.soa_count();
        for (i, &kind) in self.kinds.iter().enumerate().skip(3 * blocks) {
            for slot in 0..LANES {
                if (kind >> 4) & (1 << slot) == 0 {
                    continue;
                }
                if i % 3 == track && self.dest.get(k).is_some_and(|&d| usize::from(d) == j) {
                    return Some((i / 3, slot));
                }
                k += 1;
            }
        }
        None
    }

    /// Joint `j`'s track `track` (0 translation, 1 rotation, 2 scale) at
    /// frame `f` (validated indices), decoded one value at a time by
    /// walking the container from its start; `None` for a default track.
    fn track_at(&self, f: usize, j: usize, track: usize) -> Option<[f32; 4]> {
        let (b, l) = self.packed_slot(j, track).unwrap_or((j / LANES, j % LANES));
        let me = 3 * b + track;
        // Constants and animated lanes before this block track.
        let (mut p, mut k) = (0usize, 0usize);
        for (i, &kind) in self.kinds.iter().enumerate().take(me) {
            if kind != KIND_DEFAULT {
                p += track_param_floats(i % 3 == 1, kind >> 4);
                k += (kind >> 4).count_ones() as usize;
            }
        }
        let kind = self.kinds.get(me).copied().unwrap_or(KIND_DEFAULT);
        if kind == KIND_DEFAULT {
            return None;
        }
        let rot = track == 1;
        let mask = kind >> 4;
        let min = |c: usize| self.param(p, param_index(mask == 0, c, l).0);
        let unit = |c: usize| {
            param_index(mask == 0, c, l)
                .1
                .map_or(0.0, |u| self.param(p, u))
        };
        if mask & (1 << l) == 0 {
            let w = if rot { min(3) } else { 0.0 };
            return Some([min(0), min(1), min(2), w]);
        }
        k += (mask & ((1 << l) - 1)).count_ones() as usize;
        // The frame's first bit, then the lanes before this one.
        let s = f / self.segment_frames;
        let local = (f - s * self.segment_frames) as u64;
        let first = u64::from(self.seg_table.get(2 * s).copied().unwrap_or(0));
        let fb = u64::from(self.seg_table.get(2 * s + 1).copied().unwrap_or(0));
        let meta = self.segment_meta(s).unwrap_or(&[]);
        let rates = |i: usize| lane_rates(meta.get(LANE_META_BYTES * i..).unwrap_or(&[]));
        let mut bit = first + local * fb;
        let params: &[f32] = bytemuck::cast_slice(self.params);
        let mut lanes = lane_kinds(self.kinds.iter().copied(), params);
        for i in 0..k {
            let lane = lanes.next().unwrap_or(LaneKind::Vector);
            bit += u64::from(lane.frame_bits(rates(i)));
        }
        let format = lanes.next().unwrap_or(LaneKind::Vector);
        let bits = rates(k);
        if bits[0] == RAW_BITS {
            let mut v = [0.0f32; 4];
            for (c, x) in v.iter_mut().take(if rot { 4 } else { 3 }).enumerate() {
                *x = f32::from_bits(read_bits(self.data, bit + 32 * c as u64, 32));
            }
            return Some(v);
        }
        let range = |i: usize| meta.get(LANE_META_BYTES * k + i).copied().unwrap_or(0);
        let mut d = [0.0f32; 3];
        for (c, x) in d.iter_mut().enumerate() {
            let q = read_bits(self.data, bit, u32::from(bits[c]));
            bit += u64::from(bits[c]);
            let dec = ComponentDecode::new(
                min(c),
                unit(c),
                range(2 * c),
                range(2 * c + 1),
                bits[c],
                range(TREND_BYTE + c) as i8,
                range(CURVE_BYTE + c) as i8,
            );
            *x = dec.value(q, local as f32);
        }
        if !rot {
            return Some([d[0], d[1], d[2], 0.0]);
        }
        // The lane's own format (its format slot in the clip constants).
        let q = match format {
            LaneKind::SmallestThree => {
                smallest_three_rotation(read_bits(self.data, bit, 2), d[0], d[1], d[2])
            }
            _ => drop_w_rotation(d[0], d[1], d[2]),
        };
        Some(q.to_array())
    }

    /// Joint `j`'s transform at frame `f` (validated indices).
    fn joint_at(&self, f: usize, j: usize, rest: Option<&[SoaTransform]>) -> Transform {
        let mut t = match rest.and_then(|r| get_joint(r, j)) {
            Some(d) => d,
            None => Transform::IDENTITY,
        };
        if let Some(v) = self.track_at(f, j, 0) {
            t.translation = Vec3::new(v[0], v[1], v[2]);
        }
        if let Some(v) = self.track_at(f, j, 1) {
            t.rotation = Quat::new(v[0], v[1], v[2], v[3]);
        }
        if let Some(v) = self.track_at(f, j, 2) {
            t.scale = Vec3::new(v[0], v[1], v[2]);
        }
        t
    }
}

/// Scalar twin of [`CompressedClip::sample_with_rest`]: every joint of
/// both bracketing frames decoded on its own, then lerp / nlerp.
///
/// # Errors
/// As [`CompressedClip::sample_with_rest`].
pub fn sample(
    clip: &CompressedClip<'_>,
    t: f32,
    mode: TimeMode,
    rest: &[SoaTransform],
    out: &mut [SoaTransform],
) -> Result<(), Error> {
    check_len("rest pose", clip.soa_count(), rest.len())?;
    check_len("output", clip.soa_count(), out.len())?;
    let crate::clip::Bracket {
        before: i0,
        after: i1,
        alpha,
    } = clip.locate(t, mode)?;
    let rest = (clip.defaults() == Defaults::RestPose).then_some(rest);
    for j in 0..out.len() * LANES {
        let (b, l) = (j / LANES, j % LANES);
        let tr = if j < clip.joint_count() {
            let x = clip.joint_at(i0, j, rest);
            let y = clip.joint_at(i1, j, rest);
            // Only animated tracks are interpolated: a constant or default
            // one is the same in both frames, and copied exactly.
            let animated = |t: usize| clip.packed_slot(j, t).is_some();
            Transform {
                translation: if animated(0) {
                    x.translation.lerp(y.translation, alpha)
                } else {
                    x.translation
                },
                rotation: if animated(1) {
                    x.rotation.nlerp(y.rotation, alpha)
                } else {
                    x.rotation
                },
                scale: if animated(2) {
                    x.scale.lerp(y.scale, alpha)
                } else {
                    x.scale
                },
            }
        } else {
            Transform::IDENTITY
        };
        if let Some(o) = out.get_mut(b) {
            o.set(l, &tr);
        }
    }
    Ok(())
}
