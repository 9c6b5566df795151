//! Validation of untrusted container bytes, once, at the door
//! ([`CompressedClip::from_bytes`]): the header, the canonical layout, every
//! kind byte, clip constant, segment offset, bit rate and range, and every
//! verbatim value, so that the decoders can trust the view and never read
//! outside its sections or produce NaN from data.

use wide::f32x4;

use super::codec::{CURVE_SCALE, MAX_QUANTIZED_BITS, TREND_SCALE};
use super::format::{
    corrupt, kind_counts, lane_format_of, lane_kinds, lane_rates, param_index, read_bits,
    segment_frame_bits, track_param_floats, Header, LaneKind, Layout, KIND_DEFAULT,
    LANE_META_BYTES, RATE_BYTE, RATE_DROP_SHIFT, RAW_BITS, READ_PADDING, ROT_PARAM_FLOATS,
};
use super::{cache, CompressedClip, RotationFormat};
use crate::error::Error;
use crate::skeleton::MAX_JOINTS;
use crate::soa::{soa_count, LANES};

impl<'a> CompressedClip<'a> {
    /// The header and layout always; with `validate`, also every section's
    /// contents (see [`CompressedClip::from_bytes`]).
    pub(super) fn open(bytes: &'a [u8], validate: bool) -> Result<Self, Error> {
        let Header {
            joints,
            frames,
            sample_rate: rate,
            total,
            name_len,
            segment_frames: seg_frames,
            rotation,
            defaults,
            params: n_params,
            animated,
            data_bytes,
            packed_blocks,
        } = Header::read(bytes)?;
        if joints == 0 {
            return Err(Error::NoJoints);
        }
        if joints > MAX_JOINTS {
            return Err(Error::TooManyJoints { count: joints });
        }
        if frames == 0 || !crate::clip::rate_is_valid(frames, rate) {
            return Err(Error::InvalidSampleRate);
        }
        if seg_frames == 0 || seg_frames > 65536 {
            return Err(corrupt("segment frames out of range"));
        }
        let blocks = soa_count(joints);
        // Packed blocks hold at most the joints' lanes of each type.
        if packed_blocks > blocks {
            return Err(corrupt("more packed blocks than joint blocks"));
        }
        let all_blocks = blocks + packed_blocks;
        if animated > blocks * 3 * LANES || n_params > all_blocks * 3 * ROT_PARAM_FLOATS {
            return Err(corrupt("track counts exceed the joints"));
        }
        let segments = frames.div_ceil(seg_frames);
        let l = Layout::new(
            all_blocks, n_params, animated, segments, data_bytes, name_len,
        )
        .ok_or(corrupt("compressed clip size overflows"))?;
        if total != l.total {
            return Err(corrupt("total size does not match the counts"));
        }
        if bytes.len() < total {
            return Err(Error::Truncated {
                needed: total,
                actual: bytes.len(),
            });
        }
        let kinds = &bytes[l.kinds..l.kinds + 3 * all_blocks];
        if kind_counts(kinds.iter().copied(), joints)? != (n_params, animated) {
            return Err(corrupt("track kinds do not match the header's counts"));
        }
        let dest: &[u16] = bytemuck::try_cast_slice(&bytes[l.dest..l.dest + 2 * animated])
            .map_err(|_| corrupt("section cast"))?;
        check_packing(kinds, dest, blocks, joints)?;
        let params_f: &[f32] = bytemuck::try_cast_slice(&bytes[l.params..l.params + 4 * n_params])
            .map_err(|_| corrupt("section cast"))?;
        let params: &[f32x4] =
            bytemuck::try_cast_slice(params_f).map_err(|_| corrupt("section cast"))?;
        let seg_table: &[u32] =
            bytemuck::try_cast_slice(&bytes[l.seg_table..l.seg_table + 8 * segments])
                .map_err(|_| corrupt("section cast"))?;
        let meta = &bytes[l.meta..l.meta + segments * animated * LANE_META_BYTES];
        let data = &bytes[l.data..l.data + data_bytes];
        let name = core::str::from_utf8(&bytes[l.name..l.name + name_len])
            .map_err(|_| Error::InvalidName { joint: 0 })?;
        let clip = CompressedClip {
            sample_rate: rate,
            joint_count: joints,
            frame_count: frames,
            segment_frames: seg_frames,
            rotation,
            defaults,
            animated,
            slot_vectors: cache::slot_vectors(kinds),
            total,
            kinds,
            dest,
            packed_at: kinds[..3 * blocks]
                .iter()
                .enumerate()
                .filter(|&(_, &k)| k != KIND_DEFAULT)
                .map(|(i, &k)| track_param_floats(i % 3 == 1, k >> 4) / LANES)
                .sum(),
            params,
            seg_table,
            meta,
            meta_ext: &bytes[l.meta..total],
            data,
            name,
        };
        if !validate {
            return Ok(clip);
        }
        check_params(kinds, params_f, joints, seg_frames, rotation)?;
        // Segment metadata: ranges stay inside the clip range; rates are valid.
        for lm in meta.chunks_exact(LANE_META_BYTES) {
            let (r, drops) = (lm[RATE_BYTE] & 31, lm[RATE_BYTE] >> RATE_DROP_SHIFT);
            if r > MAX_QUANTIZED_BITS && r != RAW_BITS {
                return Err(corrupt("bit rate out of range"));
            }
            if drops != 0 && (r == 0 || r == RAW_BITS) {
                return Err(corrupt("component drops on a 0-bit or verbatim lane"));
            }
            if lm[..RATE_BYTE]
                .chunks_exact(2)
                .any(|p| u16::from(p[0]) + u16::from(p[1]) > 255)
            {
                return Err(corrupt("segment range exceeds the clip range"));
            }
        }
        // Segment table: canonical offsets and frame sizes; the stream fits.
        let mut bit = 0u64;
        for s in 0..segments {
            let fb = segment_frame_bits(kinds, params_f, meta, animated, s);
            let first = seg_table.get(2 * s).copied().unwrap_or(u32::MAX);
            let stored_fb = seg_table.get(2 * s + 1).copied().unwrap_or(u32::MAX);
            if u64::from(first) != bit || u64::from(stored_fb) != fb {
                return Err(corrupt("segment table does not match the bit rates"));
            }
            let n = (frames - s * seg_frames).min(seg_frames) as u64;
            bit += n * fb;
        }
        if bit.div_ceil(8) + READ_PADDING as u64 != data_bytes as u64 {
            return Err(corrupt("bit stream size does not match the segments"));
        }
        if meta
            .chunks_exact(LANE_META_BYTES)
            .any(|lm| lm[RATE_BYTE] & 31 == RAW_BITS)
        {
            clip.check_raw_values()?;
        }
        Ok(clip)
    }

    /// Checks every verbatim value: finite, rotations near unit length.
    fn check_raw_values(&self) -> Result<(), Error> {
        let params: &[f32] = bytemuck::cast_slice(self.params);
        for f in 0..self.frame_count {
            let (mut bit, meta, _) = self.frame_start(f);
            for (lane, lm) in lane_kinds(self.kinds.iter().copied(), params)
                .zip(meta.chunks_exact(LANE_META_BYTES))
            {
                let rot = lane.rotation();
                let r = lane_rates(lm);
                if r[0] == RAW_BITS {
                    let n = if rot { 4 } else { 3 };
                    let mut v = [0.0f32; 4];
                    for (c, x) in v.iter_mut().take(n).enumerate() {
                        *x = f32::from_bits(read_bits(self.data, bit + 32 * c as u64, 32));
                    }
                    if !crate::soa::all_finite(&v) {
                        return Err(Error::NonFinite {
                            what: "raw track value",
                        });
                    }
                    let n2: f32 = v.iter().map(|x| x * x).sum();
                    if rot && !(0.25..=4.0).contains(&n2) {
                        return Err(corrupt("raw rotation is not near unit length"));
                    }
                }
                bit += u64::from(lane.frame_bits(r));
            }
        }
        Ok(())
    }
}

/// Checks where the animated lanes are: only in the packed blocks, each
/// track type's lanes filling its packed tracks from the first slot on
/// (every packed track full but the type's last), no packed block without
/// a lane, and per type the lanes' joints (`dest`, in stream order)
/// strictly increasing and inside the clip.
fn check_packing(kinds: &[u8], dest: &[u16], blocks: usize, joints: usize) -> Result<(), Error> {
    let (joint_kinds, packed) = kinds.split_at((3 * blocks).min(kinds.len()));
    if joint_kinds.iter().any(|k| k >> 4 != 0) {
        return Err(corrupt("animated lane in a joint block"));
    }
    let mut last = [None::<u16>; 3];
    let mut ended = [false; 3];
    let mut d = dest.iter();
    for block in packed.chunks_exact(3) {
        if block.iter().all(|&k| k == KIND_DEFAULT) {
            return Err(corrupt("packed block without an animated lane"));
        }
        for (t, &k) in block.iter().enumerate() {
            let mask = k >> 4;
            if k != KIND_DEFAULT && mask == 0 {
                return Err(corrupt("packed track without an animated lane"));
            }
            if mask & (mask + 1) != 0 || (ended[t] && mask != 0) {
                return Err(corrupt("packed lanes not contiguous"));
            }
            ended[t] |= mask != 15;
            for _ in 0..mask.count_ones() {
                let j = d.next().copied().unwrap_or(u16::MAX);
                if usize::from(j) >= joints || last[t].is_some_and(|p| j <= p) {
                    return Err(corrupt("packed lane joints out of order or range"));
                }
                last[t] = Some(j);
            }
        }
    }
    Ok(())
}

/// Checks the clip constants of every stored block track: finite, units
/// `≥ 0` with a finite top and bottom however far a trend drifts, animated rotation components inside `[−2, 2]`,
/// constant rotation lanes near unit length, padding lanes identity,
/// animated rotation lanes' format slots a lane format the header allows.
fn check_params(
    kinds: &[u8],
    params: &[f32],
    joints: usize,
    segment_frames: usize,
    rotation: RotationFormat,
) -> Result<(), Error> {
    // The largest trend offset inside a segment, in units.
    let n = segment_frames as f32;
    let drift = 128.0 * TREND_SCALE * n + 128.0 * CURVE_SCALE * n * n;
    if !crate::soa::all_finite(params) {
        return Err(Error::NonFinite {
            what: "clip constant",
        });
    }
    let mut p = 0usize;
    for (i, &k) in kinds.iter().enumerate() {
        if k == KIND_DEFAULT {
            continue;
        }
        let rot = i % 3 == 1;
        let mask = k >> 4;
        let n = track_param_floats(rot, mask);
        let v = params.get(p..p + n).unwrap_or(&[]);
        p += n;
        let g = |i: usize| v.get(i).copied().unwrap_or(f32::NAN);
        let at = |c: usize, l: usize| {
            let (m, u) = param_index(mask == 0, c, l);
            (g(m), u.map_or(0.0, g))
        };
        // A packed block's four lanes are all in use or unused slots.
        let lanes = if i / 3 >= soa_count(joints) {
            LANES
        } else {
            joints.saturating_sub((i / 3) * LANES).min(LANES)
        };
        for l in 0..LANES {
            let animated = mask & (1 << l) != 0;
            let mut n2 = 0.0f32;
            for c in 0..3 {
                let (min, unit) = at(c, l);
                let top = min + 255.0 * unit;
                if !(unit >= 0.0
                    && (top + drift * unit).is_finite()
                    && (min - drift * unit).is_finite())
                {
                    return Err(corrupt("clip range extent"));
                }
                if rot && animated && !(min >= -2.0 && top <= 2.0) {
                    return Err(corrupt("rotation range outside [-2, 2]"));
                }
                n2 += min * min;
                if l >= lanes {
                    let identity = if i % 3 == 2 { 1.0 } else { 0.0 };
                    if min != identity || unit != 0.0 {
                        return Err(corrupt("padding lane is not identity"));
                    }
                }
            }
            if rot && animated {
                let allowed = match lane_format_of(at(3, l).0) {
                    None => return Err(corrupt("unknown lane rotation format")),
                    Some(LaneKind::DropW) => rotation != RotationFormat::SmallestThree,
                    Some(_) => rotation != RotationFormat::DropW,
                };
                if !allowed {
                    return Err(corrupt("lane rotation format differs from the header's"));
                }
            }
            if rot && !animated {
                let w = at(3, l).0;
                n2 += w * w;
                if !(0.25..=4.0).contains(&n2) || (l >= lanes && w != 1.0) {
                    return Err(corrupt("constant rotation is not near unit length"));
                }
            }
        }
    }
    Ok(())
}
