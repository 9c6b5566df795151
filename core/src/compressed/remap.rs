//! Reordering a compressed clip's joints without decoding it (for joint
//! LOD, [`crate::lod`], whose clips are in an order where each level is a
//! prefix).
//!
//! Every animated lane keeps its clip constants, its segment metadata and
//! its codes, moved to the lane of its joint's new position, so it decodes
//! to the same values: the compressor's error bound carries over without
//! compressing again. Only lanes whose block track changes kind can round
//! differently in the last bit: a lane that was not stored (the default)
//! or stored without an animated neighbour is copied by the decoder, and
//! becomes a constant lane that the decoder interpolates (with itself)
//! once its new block has an animated lane.

use super::format::{
    lane_kinds, param_index, read_bits, track_param_floats, LaneKind, CONST_ROT_PARAM_FLOATS,
    KIND_DEFAULT, LANE_META_BYTES, RATE_BYTE, RATE_DROP_SHIFT, RAW_BITS,
};
use super::writer::{BlockTrack, Header, LaneSegment, Writer};
use super::{CompressedClip, Defaults};
use crate::error::Error;
use crate::skeleton::MAX_JOINTS;
use crate::soa::{check_len, SoaTransform, LANES};

const NONE: u16 = u16::MAX;

impl CompressedClip<'_> {
    /// Block tracks and lane segments [`CompressedClip::remap_joints`]
    /// needs as scratch: `(3 × soa_count(), segment_count() ×
    /// animated_lane_count())`.
    #[must_use]
    pub fn remap_scratch_len(&self) -> (usize, usize) {
        (3 * self.soa_count(), self.segment_count() * self.animated)
    }

    /// Bytes enough for [`CompressedClip::remap_joints`]'s result in any
    /// joint order: the reordered container has this one's lanes, bit
    /// stream and packed blocks, but its joint blocks may store the
    /// constants of other tracks (a track is left to the defaults only
    /// when its constant lanes hold them, which the order changes).
    #[must_use]
    pub fn remap_size(&self) -> usize {
        self.size_bytes() + 3 * self.soa_count() * CONST_ROT_PARAM_FLOATS * 4
    }

    /// Writes this clip with its joints in another order: joint `k` of the
    /// result is joint `order[k]` of this clip, and decodes to its values
    /// (see the module docs for the last-bit exception). `rest` is the
    /// rest pose in the *new* order, read only for clips compressed with
    /// [`Defaults::RestPose`] (pass `&[]` otherwise). `tracks` and `lanes`
    /// are scratch of at least [`CompressedClip::remap_scratch_len`];
    /// `out` is 16-byte aligned. Returns the bytes written; view them with
    /// [`CompressedClip::from_bytes`].
    ///
    /// An offline builder (O(frames × animated lanes)), not a per-frame
    /// path.
    ///
    /// # Errors
    /// [`Error::BadLength`] (`order` not `joint_count()` long, short
    /// scratch, `rest` not `soa_count()` blocks when it is read),
    /// [`Error::Corrupt`] (`order` not a permutation), and the writer's
    /// [`Error::BufferTooSmall`] and [`Error::Misaligned`].
    pub fn remap_joints(
        &self,
        order: &[u16],
        rest: &[SoaTransform],
        tracks: &mut [BlockTrack],
        lanes: &mut [LaneSegment],
        out: &mut [u8],
    ) -> Result<usize, Error> {
        let n = self.joint_count;
        let blocks = self.soa_count();
        check_len("joint order", n, order.len())?;
        let (nt, nl) = self.remap_scratch_len();
        if tracks.len() < nt || lanes.len() < nl {
            return Err(Error::BadLength {
                buffer: "remap scratch",
                expected: nt.max(nl),
                actual: tracks.len().min(lanes.len()),
            });
        }
        if self.defaults == Defaults::RestPose {
            check_len("rest pose", blocks, rest.len())?;
        }
        let mut seen = [false; MAX_JOINTS];
        for &j in order {
            match seen.get_mut(j as usize) {
                Some(s) if !*s && (j as usize) < n => *s = true,
                _ => {
                    return Err(Error::Corrupt {
                        what: "joint order is not a permutation",
                    })
                }
            }
        }
        // Per source block track (the joint blocks', then the packed
        // blocks'): its first clip constant; per source joint and track:
        // its animated lane index (NONE when not animated) and where its
        // clip constants are (the packed track position and slot).
        let mut param_at = [0usize; 2 * 3 * MAX_JOINTS / LANES];
        let mut anim_of = [NONE; 3 * MAX_JOINTS];
        let mut packed_at = [(0u16, 0u8); 3 * MAX_JOINTS];
        let (mut p, mut a) = (0usize, 0u16);
        for (i, &kind) in self.kinds.iter().enumerate() {
            if let Some(at) = param_at.get_mut(i) {
                *at = p;
            }
            if kind != KIND_DEFAULT {
                let mask = kind >> 4;
                p += track_param_floats(i % 3 == 1, mask) / LANES;
                for l in 0..LANES {
                    if mask & (1 << l) != 0 {
                        let j = self.dest.get(usize::from(a)).map_or(0, |&j| usize::from(j));
                        if let Some(x) = anim_of.get_mut(3 * j + i % 3) {
                            *x = a;
                            packed_at[3 * j + i % 3] = (i as u16, l as u8);
                        }
                        a += 1;
                    }
                }
            }
        }
        let lane_value = |k: usize, t: usize| -> ([f32; 4], Option<([f32; 3], u16)>) {
            // (x, y, z, w) of a not-animated lane; for an animated one its
            // units and source lane as well.
            let identity = match t {
                0 => [0.0, 0.0, 0.0, 0.0],
                1 => [0.0, 0.0, 0.0, 1.0],
                _ => [1.0, 1.0, 1.0, 0.0],
            };
            let Some(&j) = order.get(k) else {
                return (identity, None);
            };
            let j = j as usize;
            let src = anim_of[3 * j + t];
            // An animated lane's constants are in its packed track, the
            // others in the joint block's own track.
            let (i, l) = if src == NONE {
                (3 * (j / LANES) + t, j % LANES)
            } else {
                let (i, l) = packed_at[3 * j + t];
                (usize::from(i), usize::from(l))
            };
            let kind = self.kinds.get(i).copied().unwrap_or(KIND_DEFAULT);
            if kind == KIND_DEFAULT {
                let v = match (self.defaults, rest.get(k / LANES)) {
                    (Defaults::RestPose, Some(r)) => {
                        let tr = r.get(k % LANES);
                        match t {
                            0 => [tr.translation.x, tr.translation.y, tr.translation.z, 0.0],
                            1 => tr.rotation.to_array(),
                            _ => [tr.scale.x, tr.scale.y, tr.scale.z, 0.0],
                        }
                    }
                    _ => identity,
                };
                return (v, None);
            }
            let mask = kind >> 4;
            let base = param_at.get(i).copied().unwrap_or(0);
            let get = |i: usize| -> f32 {
                self.params
                    .get(base + i / LANES)
                    .map_or(0.0, |v| v.to_array()[i % LANES])
            };
            let constant_track = mask == 0;
            let mut v = [0.0f32; 4];
            let mut unit = [0.0f32; 3];
            for c in 0..3 {
                let (mi, ui) = param_index(constant_track, c, l);
                v[c] = get(mi);
                if let Some(ui) = ui {
                    unit[c] = get(ui);
                }
            }
            if t == 1 {
                v[3] = get(param_index(constant_track, 3, l).0);
            }
            if src == NONE {
                (v, None)
            } else {
                (v, Some((unit, src)))
            }
        };
        // New block tracks, and for each new animated lane its source lane.
        let mut source = [NONE; 3 * MAX_JOINTS];
        let mut count = 0usize;
        for b in 0..blocks {
            for t in 0..3 {
                let mut animated = 0u8;
                let mut all_default = true;
                let mut min = [[0.0f32; 4]; 3];
                let mut unit = [[0.0f32; 4]; 3];
                let mut w = [0.0f32; 4];
                let mut smallest_three = 0u8;
                for l in 0..LANES {
                    let k = b * LANES + l;
                    let (v, anim) = lane_value(k, t);
                    let kind_default = order.get(k).is_none_or(|&j| {
                        let j = j as usize;
                        anim_of[3 * j + t] == NONE
                            && self.kinds.get(3 * (j / LANES) + t) == Some(&KIND_DEFAULT)
                    });
                    all_default &= kind_default;
                    for c in 0..3 {
                        min[c][l] = v[c];
                    }
                    match anim {
                        Some((u, src)) => {
                            animated |= 1 << l;
                            // An animated rotation lane's `w` slot is its format.
                            if t == 1
                                && super::format::lane_format_of(v[3])
                                    == Some(LaneKind::SmallestThree)
                            {
                                smallest_three |= 1 << l;
                            }
                            for c in 0..3 {
                                unit[c][l] = u[c];
                            }
                            source[count] = src;
                            count += 1;
                        }
                        None => w[l] = v[3],
                    }
                }
                tracks[3 * b + t] = if all_default {
                    BlockTrack::Default
                } else {
                    BlockTrack::Stored {
                        animated,
                        min,
                        unit,
                        w,
                        smallest_three,
                    }
                };
            }
        }
        let animated = self.animated;
        let segments = self.segment_count();
        for s in 0..segments {
            let meta = self.segment_meta(s).unwrap_or(&[]);
            for (k, &src) in source[..count].iter().enumerate() {
                let at = src as usize * LANE_META_BYTES;
                let m = meta
                    .get(at..at + LANE_META_BYTES)
                    .unwrap_or(&[0; LANE_META_BYTES]);
                let mut range = [0u8; 6];
                range.copy_from_slice(&m[..6]);
                let byte = |i: usize| m[i] as i8;
                lanes[s * animated + k] = LaneSegment {
                    range,
                    rate: m[RATE_BYTE] & ((1 << RATE_DROP_SHIFT) - 1),
                    drops: m[RATE_BYTE] >> RATE_DROP_SHIFT,
                    trend: [byte(7), byte(8), byte(9)],
                    curve: [byte(10), byte(11), byte(12)],
                };
            }
        }
        let header = Header {
            sample_rate: self.sample_rate,
            joint_count: n,
            frame_count: self.frame_count,
            segment_frames: self.segment_frames,
            rotation: self.rotation,
            defaults: self.defaults,
            name: self.name,
        };
        let writer = match self.defaults {
            Defaults::RestPose => Writer::with_rest(header, &tracks[..nt], &lanes[..nl], rest)?,
            Defaults::Identity => Writer::new(header, &tracks[..nt], &lanes[..nl])?,
        };
        // Bits of each source lane in a frame of the current segment, and
        // its offset in the frame.
        let mut kind = [LaneKind::Vector; 3 * MAX_JOINTS];
        let params: &[f32] = bytemuck::cast_slice(self.params);
        for (r, k) in kind
            .iter_mut()
            .zip(lane_kinds(self.kinds.iter().copied(), params))
        {
            *r = k;
        }
        let mut offset = [0u32; 3 * MAX_JOINTS];
        let mut current = usize::MAX;
        let codes = |s: usize, f: usize, k: usize| -> [u32; 4] {
            let meta = self.segment_meta(s).unwrap_or(&[]);
            if s != current {
                current = s;
                let mut at = 0u32;
                for (i, o) in offset[..animated].iter_mut().enumerate() {
                    *o = at;
                    let m = meta.get(i * LANE_META_BYTES..).unwrap_or(&[]);
                    at += kind[i].frame_bits(super::format::lane_rates(m));
                }
            }
            let src = source[k] as usize;
            let first = u64::from(self.seg_table.get(2 * s).copied().unwrap_or(0));
            let fb = u64::from(self.seg_table.get(2 * s + 1).copied().unwrap_or(0));
            let mut bit = first + f as u64 * fb + u64::from(offset[src]);
            let m = meta.get(src * LANE_META_BYTES..).unwrap_or(&[]);
            let rates = super::format::lane_rates(m);
            let mut word = [0u32; 4];
            if rates[0] == RAW_BITS {
                let count = if kind[src].rotation() { 4 } else { 3 };
                for w in word.iter_mut().take(count) {
                    *w = read_bits(self.data, bit, 32);
                    bit += 32;
                }
            } else {
                for (w, r) in word.iter_mut().zip(rates) {
                    *w = if r == 0 {
                        0
                    } else {
                        read_bits(self.data, bit, u32::from(r))
                    };
                    bit += u64::from(r);
                }
                if kind[src].s3() {
                    word[3] = read_bits(self.data, bit, 2);
                }
            }
            word
        };
        writer.write(codes, out)
    }
}

#[cfg(test)]
mod tests {
    extern crate alloc;
    use alloc::vec;

    use super::super::writer::{BlockTrack, LaneSegment};
    use super::super::CompressedClip;

    #[test]
    fn identity_order_reproduces_the_container() {
        // Built through the writer's own doc example shape: one constant
        // translation, nothing animated.
        use super::super::writer::{Header, Writer};
        use super::super::{Defaults, RotationFormat};
        let t = BlockTrack::Stored {
            animated: 0,
            min: [
                [1.0, 0.0, 0.0, 0.0],
                [2.0, 0.0, 0.0, 0.0],
                [3.0, 0.0, 0.0, 0.0],
            ],
            unit: [[0.0; 4]; 3],
            w: [0.0; 4],
            smallest_three: 0,
        };
        let tracks = [t, BlockTrack::Default, BlockTrack::Default];
        let header = Header {
            sample_rate: 30.0,
            joint_count: 1,
            frame_count: 2,
            segment_frames: 16,
            rotation: RotationFormat::DropW,
            defaults: Defaults::Identity,
            name: "still",
        };
        let w = Writer::new(header, &tracks, &[]).unwrap();
        let mut words = vec![0u128; w.size() / 16];
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut words);
        w.write(|_, _, _| [0; 4], bytes).unwrap();
        let clip = CompressedClip::from_bytes(bytes).unwrap();
        let (nt, nl) = clip.remap_scratch_len();
        let mut st = vec![BlockTrack::Default; nt];
        let mut sl = vec![LaneSegment::default(); nl];
        let mut out = vec![0u128; w.size() / 16];
        let ob: &mut [u8] = bytemuck::cast_slice_mut(&mut out);
        let len = clip.remap_joints(&[0], &[], &mut st, &mut sl, ob).unwrap();
        assert_eq!(&ob[..len], &bytes[..len]);
        assert!(clip.remap_joints(&[1], &[], &mut st, &mut sl, ob).is_err());
    }
}
