//! The portable decoder: both bracketing frames of a sample decoded block
//! by block straight into SoA lanes, four joints per operation, and
//! interpolated. [`super::reference`] is its readable scalar twin, and
//! [`super::avx2`] its faster twin on x86-64 CPUs with AVX2 (same results,
//! bit for bit); the interpolation ([`Blend`]) is shared with the latter.

use wide::{f32x4, i32x4, u32x4};

use super::cache::BLOCK_VECTORS;
use super::codec::{inv_max_code, trend_factors, MAX_QUANTIZED_BITS};
use super::format::{
    read_bits, read_u64, track_param_floats, KIND_DEFAULT, LANE_FORMAT_VECTOR, LANE_META_BYTES,
    LANE_SMALLEST_THREE, ONE_WINDOW_BITS, RAW_BITS, TRACK_DROP_W, TRACK_MIXED, TRACK_S3,
};
use super::CompressedClip;
use crate::fp::Fp;
use crate::soa::detail::{dot4, normalize, quat_mul_add, vec_mul_add, vec_scale};
use crate::soa::{SoaQuat, SoaTransform, SoaVec3, LANES};

/// Lane masks for `select`, by 4-bit lane mask.
pub(super) const LANE_MASKS: [[u32; 4]; 16] = {
    let mut t = [[0u32; 4]; 16];
    let mut m = 0;
    while m < 16 {
        let mut l = 0;
        while l < 4 {
            if m & (1 << l) != 0 {
                t[m][l] = u32::MAX;
            }
            l += 1;
        }
        m += 1;
    }
    t
};

#[inline(always)]
fn lane_mask(mask: u32) -> f32x4 {
    let m = LANE_MASKS
        .get(mask as usize & 15)
        .copied()
        .unwrap_or([0; 4]);
    bytemuck::cast(m)
}

#[inline(always)]
fn to_f32(v: u32x4) -> f32x4 {
    // Codes are below 2^23 (verbatim lanes are patched afterwards), so the
    // signed conversion is exact.
    f32x4::from_i32x4(bytemuck::cast(v))
}

/// A lane's four metadata words: bytes 0..4, 3..7, 6..10 and 9..13 (0
/// outside `meta`), so the ranges, rate and trends of four lanes come out
/// of four `u32x4` with uniform shifts and masks.
#[inline(always)]
fn meta_words(meta: &[u8], at: usize) -> [u32; 4] {
    // Two overlapping 8-byte loads: bytes 0..8 and 5..13.
    let (Some(a), Some(b)) = (meta.get(at..at + 8), meta.get(at + 5..at + 13)) else {
        return [0; 4];
    };
    let le = |x: &[u8]| u64::from_le_bytes(x.try_into().unwrap_or([0; 8]));
    let (a, b) = (le(a), le(b));
    [
        a as u32,
        (a >> 24) as u32,
        ((a >> 48) | ((b >> 24) & 0xffff) << 16) as u32,
        (b >> 32) as u32,
    ]
}

/// Lane `l`'s three codes of `r[c] ≤ 32` bits and its smallest-three index
/// at bit `pos`, one read each.
#[inline(never)]
fn reads(data: &[u8], pos: u64, r: [u32; 3], l: usize, c: &mut [[u32; 4]; 4]) {
    let r = r.map(|x| x.min(32));
    let (r0, r1, r2) = (u64::from(r[0]), u64::from(r[1]), u64::from(r[2]));
    c[0][l] = read_bits(data, pos, r[0]);
    c[1][l] = read_bits(data, pos + r0, r[1]);
    c[2][l] = read_bits(data, pos + r0 + r1, r[2]);
    c[3][l] = read_bits(data, pos + r0 + r1 + r2, 2);
}

/// Splits the 64-bit window at bit `pos` into lane `l`'s three codes of
/// `r[c]` bits (unmasked) and, unless every lane is drop-W (`F`), its
/// smallest-three index.
#[inline(always)]
fn window<const F: u8>(data: &[u8], pos: u64, r: [u32; 3], l: usize, c: &mut [[u32; 4]; 4]) {
    let w = read_u64(data, (pos >> 3) as usize) >> (pos & 7);
    let s1 = r[0] & 63;
    let s2 = (s1 + r[1]) & 63;
    c[0][l] = w as u32;
    c[1][l] = (w >> s1) as u32;
    c[2][l] = (w >> s2) as u32;
    if F != TRACK_DROP_W {
        c[3][l] = (w >> ((s2 + r[2]) & 63)) as u32;
    }
}

/// The component bit rates of four lanes ([`component_rates`], lane-wise)
/// from the rate bytes in the low byte of their third metadata word
/// (verbatim lanes come out as 31 bits and are patched after decoding).
#[inline(always)]
pub(super) fn rates_x4(d2: [u32; 4]) -> [u32x4; 3] {
    let byte = u32x4::from(d2);
    let rate = byte & u32x4::splat(31);
    let one = u32x4::ONE;
    [5u32, 6, 7].map(|b| {
        let drop = (byte >> b) & one;
        rate.max(drop) - drop
    })
}

/// Per-segment constants of four lanes per component (the fields of
/// [`ComponentDecode`], lane-wise) and the code masks.
struct Dequant {
    min: [f32x4; 3],
    unit: [f32x4; 3],
    smin: [f32x4; 3],
    step: [f32x4; 3],
    slope: [f32x4; 3],
    curve: [f32x4; 3],
    mask: [u32x4; 3],
}

/// [`Dequant`] from the lanes' metadata words (`d[0]`: bytes 0..4,
/// `d[1]`: 3..7, `d[2]`: 6..10, `d[3]`: 9..13), their component bit rates
/// and clip constants (`min`, `unit` per component).
#[inline(always)]
fn dequant_params(d: &[[u32; 4]; 4], rates: &[u32x4; 3], clip: &[f32x4; 6]) -> Dequant {
    let [d0, d1, d2, d3] = d.map(u32x4::from);
    let byte = u32x4::splat(0xff);
    let smin = [d0 & byte, (d0 >> 16u32) & byte, (d1 >> 8u32) & byte];
    let sext = [(d0 >> 8u32) & byte, d0 >> 24u32, (d1 >> 16u32) & byte];
    // Signed trend bytes 7, 8, 9: shift each to the top, then back down
    // arithmetically.
    let sign =
        |v: u32x4| -> f32x4 { f32x4::from_i32x4(bytemuck::cast::<u32x4, i32x4>(v) >> 24u32) };
    let slope = [sign(d2 << 16u32), sign(d2 << 8u32), sign(d2)];
    // Signed curvature bytes 10, 11, 12.
    let curve = [sign(d3 << 16u32), sign(d3 << 8u32), sign(d3)];
    let mut q = Dequant {
        min: [clip[0], clip[2], clip[4]],
        unit: [clip[1], clip[3], clip[5]],
        smin: smin.map(to_f32),
        step: [f32x4::ZERO; 3],
        slope,
        curve,
        mask: [u32x4::ZERO; 3],
    };
    for c in 0..3 {
        // 2^rate as an f32 built from its exponent gives the code mask;
        // 1 / (2^rate − 1) is looked up (a division per component would be
        // the slowest operation of the track setup, on NEON most of all).
        // (Verbatim lanes are patched after decoding: clamp them.)
        let r = rates[c].min(u32x4::splat(u32::from(MAX_QUANTIZED_BITS)));
        let pow2: f32x4 = bytemuck::cast((r + u32x4::splat(127)) << 23u32);
        q.mask[c] = bytemuck::cast(pow2.round_int() - i32x4::ONE);
        let inv = f32x4::new(r.to_array().map(|k| inv_max_code(k as u8)));
        q.step[c] = to_f32(sext[c]) * inv;
    }
    q
}

/// [`ComponentDecode::value`] of the codes `c & mask` for components x, y,
/// z of four lanes.
#[inline(always)]
fn dequant(q: &Dequant, c: &[[u32; 4]; 4], local: f32) -> [f32x4; 3] {
    let (tl, tl2) = trend_factors(local);
    let (tl, tl2) = (f32x4::splat(tl), f32x4::splat(tl2));
    let mut v = [f32x4::ZERO; 3];
    for i in 0..3 {
        let code = to_f32(u32x4::from(c[i]) & q.mask[i]);
        let u = ((q.smin[i] + q.step[i] * code) + q.slope[i] * tl) + q.curve[i] * tl2;
        v[i] = q.min[i] + q.unit[i] * u;
    }
    v
}

/// The smallest-three lanes among the animated lanes `mask` of a rotation
/// track with clip constants `cv` (their format slots; see
/// [`super::format::LANE_DROP_W`]).
#[inline(always)]
pub(super) fn s3_lanes(cv: &[f32x4], mask: u32) -> u32 {
    let slots = cv.get(LANE_FORMAT_VECTOR).copied().unwrap_or(f32x4::ZERO);
    slots
        .simd_eq(f32x4::splat(LANE_SMALLEST_THREE))
        .to_bitmask()
        & mask
}

/// Rotations from their three kept components (and the smallest-three
/// index, 3 in drop-W lanes of a mixed track), with the constant lanes
/// (outside `anim`) taken from `constant`.
#[inline(always)]
fn rebuild<const F: u8>(v: [f32x4; 3], idx: u32x4, constant: &[f32x4; 4], anim: f32x4) -> SoaQuat {
    let [a, b, d] = v;
    let big = crate::math::sqrt4((f32x4::ONE - (a * a + b * b + d * d)).max_num(f32x4::ZERO));
    if F == TRACK_DROP_W {
        // Constant lanes decode x, y, z exactly to their `min` (step 0), so
        // drop-W only has to put back their w.
        return SoaQuat {
            x: a,
            y: b,
            z: d,
            w: anim.bitselect(big, constant[3]),
        };
    }
    let is = |k: u32| -> f32x4 { bytemuck::cast(idx.simd_eq(u32x4::splat(k))) };
    let (i0, i1, i2, i3) = (is(0), is(1), is(2), is(3));
    SoaQuat {
        x: anim.bitselect(i0.bitselect(big, a), constant[0]),
        y: anim.bitselect(i0.bitselect(a, i1.bitselect(big, b)), constant[1]),
        z: anim.bitselect(i3.bitselect(d, i2.bitselect(big, b)), constant[2]),
        w: anim.bitselect(i3.bitselect(big, d), constant[3]),
    }
}

/// Where one of a sample's two frames is (see `CompressedClip::frame_at`).
#[derive(Clone, Copy)]
pub(super) struct FrameAt {
    /// Its first bit.
    pub(super) first: u64,
    /// Its segment.
    pub(super) segment: usize,
    /// Its index inside the segment.
    pub(super) local: f32,
}

/// Block `i`'s default transform: the rest pose's when the clip's
/// defaults are the rest pose (`rest`), identity otherwise.
#[inline(always)]
pub(super) fn default_block(rest: Option<&[SoaTransform]>, i: usize) -> &SoaTransform {
    rest.and_then(|r| r.get(i))
        .unwrap_or(&SoaTransform::IDENTITY)
}

/// Writes a joint block's constants into `v`: each track stored in the
/// clip (bits 0, 1 and 2 of `STORED` for translation, rotation and scale)
/// takes its vectors from the front of `w` in turn, each other one its
/// default from `base`. Returns the number of vectors taken from `w`.
#[inline(always)]
fn constant_block<const STORED: usize>(
    w: &[f32x4; BLOCK_VECTORS],
    base: &[f32x4; BLOCK_VECTORS],
    v: &mut [f32x4; BLOCK_VECTORS],
) -> usize {
    // Runs of tracks with one source, each copied in one piece of fixed
    // length (see `copy_run`).
    macro_rules! runs {
        ($($to:expr => $src:ident[$from:expr]),+) => {{
            $(copy_run(&mut v[$to], &$src[$from]);)+
        }};
    }
    match STORED {
        0 => runs!(0..10 => base[0..10]),
        1 => runs!(0..3 => w[0..3], 3..10 => base[3..10]),
        2 => runs!(0..3 => base[0..3], 3..7 => w[0..4], 7..10 => base[7..10]),
        3 => runs!(0..7 => w[0..7], 7..10 => base[7..10]),
        4 => runs!(0..7 => base[0..7], 7..10 => w[0..3]),
        5 => runs!(0..3 => w[0..3], 3..7 => base[3..7], 7..10 => w[3..6]),
        6 => runs!(0..3 => base[0..3], 3..10 => w[0..7]),
        _ => runs!(0..10 => w[0..10]),
    }
    3 * (STORED & 1) + 4 * (STORED >> 1 & 1) + 3 * (STORED >> 2 & 1)
}

/// Copies a run of vectors of the same, constant length: on x86-64 as one
/// fixed-length `memcpy`, which code compiled with AVX moves 32 bytes at
/// a time; elsewhere vector by vector, since a Cortex-M build calls
/// `memcpy` for runs of more than a few words.
#[inline(always)]
fn copy_run(to: &mut [f32x4], from: &[f32x4]) {
    if cfg!(target_arch = "x86_64") {
        to.copy_from_slice(from);
    } else {
        copy_vectors(to, from);
    }
}

/// Copies `from` into the start of `to`, vector by vector: a whole-block
/// or whole-track assignment makes LLVM stage the value in overlapping
/// stack slots, and each reload across them waits for the stores (a
/// failed store-to-load forward per block or track).
#[inline(always)]
pub(super) fn copy_vectors(to: &mut [f32x4], from: &[f32x4]) {
    for (d, s) in to.iter_mut().zip(from) {
        *d = *s;
    }
}

/// The joints of the next packed track's lanes (kind byte `kind`), taken
/// from the front of `dest`, which moves past them.
#[inline(always)]
pub(super) fn next_joints<'d>(dest: &mut &'d [u16], kind: u8) -> &'d [u16] {
    let n = (kind >> 4).count_ones() as usize;
    let (joints, more) = dest.split_at(n.min(dest.len()));
    *dest = more;
    joints
}

/// The x, y, z of a decoded translation or scale track.
#[inline(always)]
pub(super) fn xyz(q: &SoaQuat) -> SoaVec3 {
    SoaVec3 {
        x: q.x,
        y: q.y,
        z: q.z,
    }
}

/// The interpolation of one sample between its two decoded frames, shared
/// by both decoders (same operations, same order).
#[derive(Clone, Copy)]
pub(super) struct Blend {
    pub(super) wa: f32x4,
    pub(super) wb: f32x4,
}

impl Blend {
    pub(super) fn new(alpha: f32) -> Blend {
        Blend {
            wa: f32x4::splat(1.0 - alpha),
            wb: f32x4::splat(alpha),
        }
    }

    /// Lerp of two decoded translation or scale tracks (their x, y, z).
    #[inline(always)]
    fn lerp(&self, a: &SoaQuat, b: &SoaQuat) -> SoaVec3 {
        self.lerp_vec(&xyz(a), &xyz(b))
    }

    /// [`Self::lerp`] of values already in x, y, z.
    #[inline(always)]
    pub(super) fn lerp_vec(&self, a: &SoaVec3, b: &SoaVec3) -> SoaVec3 {
        let mut v = vec_scale(a, self.wa);
        vec_mul_add(&mut v, b, self.wb);
        v
    }

    /// Nlerp of two decoded rotation tracks, `b` sign-aligned to `a`.
    #[inline(always)]
    pub(super) fn nlerp(&self, qa: &SoaQuat, qb: &SoaQuat) -> SoaQuat {
        let wa = self.wa;
        let mut q = SoaQuat {
            x: qa.x * wa,
            y: qa.y * wa,
            z: qa.z * wa,
            w: qa.w * wa,
        };
        let flip = dot4(qa, qb).simd_lt(f32x4::ZERO);
        quat_mul_add(&mut q, qb, self.wb.flip_signs(flip));
        normalize(&q)
    }
}

impl<'a> CompressedClip<'a> {
    /// Where frame `f` is: its first bit, its segment and its local index
    /// in the segment.
    #[inline(always)]
    pub(super) fn frame_at(&self, f: usize) -> FrameAt {
        let s = f / self.segment_frames;
        let local = f - s * self.segment_frames;
        let first = u64::from(self.seg_table.get(2 * s).copied().unwrap_or(0));
        let fb = u64::from(self.seg_table.get(2 * s + 1).copied().unwrap_or(0));
        FrameAt {
            first: first + local as u64 * fb,
            segment: s,
            local: local as f32,
        }
    }

    /// The first bit of frame `f`, its segment's metadata (validated
    /// index; empty metadata otherwise) and its local index in the segment.
    #[inline(always)]
    pub(super) fn frame_start(&self, f: usize) -> (u64, &'a [u8], f32) {
        let at = self.frame_at(f);
        let meta = self.segment_meta(at.segment).unwrap_or(&[]);
        (at.first, meta, at.local)
    }

    /// Both frames of one stored block track, decoded in one pass over its
    /// animated lanes: per lane its metadata words and, per frame, one
    /// 64-bit window (rates up to [`ONE_WINDOW_BITS`]) or one read per
    /// component, then lane-wise dequantization, trend and (for rotations)
    /// the rebuild. Translations and scales come back in x, y, z.
    /// `frames` holds each frame's first bit and local index in its segment.
    /// Only for tracks with an animated lane (`cv` laid out with units; the
    /// block loop takes the others as [`constant_value`]s). A rotation
    /// track goes to the instance of its lanes' formats (their format
    /// slots in `cv`): all drop-W, all smallest-three, or mixed, so a track
    /// whose lanes share a format pays nothing for the mix.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn track_pair<const ROT: bool>(
        &self,
        streams: (&[u8], &[u8]),
        same: bool,
        m: usize,
        mask: u32,
        offsets: (&mut u32, &mut u32),
        frames: [(u64, f32); 2],
        cv: &[f32x4],
    ) -> (SoaQuat, SoaQuat) {
        self.track_frames_as::<ROT, true>(streams, same, m, mask, offsets, frames, cv)
    }

    /// [`Self::track_pair`], or with `TWO = false` frame a alone (see
    /// [`Self::track_frames`]).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn track_frames_as<const ROT: bool, const TWO: bool>(
        &self,
        streams: (&[u8], &[u8]),
        same: bool,
        m: usize,
        mask: u32,
        offsets: (&mut u32, &mut u32),
        frames: [(u64, f32); 2],
        cv: &[f32x4],
    ) -> (SoaQuat, SoaQuat) {
        macro_rules! go {
            ($f:expr, $s3:expr) => {
                self.track_frames::<{ $f }, ROT, TWO>(
                    streams, same, m, mask, offsets, frames, cv, $s3,
                )
            };
        }
        if !ROT {
            return go!(TRACK_DROP_W, 0);
        }
        match s3_lanes(cv, mask) {
            0 => go!(TRACK_DROP_W, 0),
            s3 if s3 == mask => go!(TRACK_S3, mask),
            s3 => go!(TRACK_MIXED, s3),
        }
    }

    /// Both frames of a stored block track (`TWO`), or frame a alone
    /// (frame b's arguments are ignored and frame a's value comes back
    /// twice): the same operations on frame a either way, so a frame
    /// decoded alone has the bits it has in a pair. `F` is the track's
    /// rotation format: every lane drop-W, every lane smallest-three, or
    /// [`TRACK_MIXED`] with the smallest-three lanes `s3`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn track_frames<const F: u8, const ROT: bool, const TWO: bool>(
        &self,
        (ma, mb): (&[u8], &[u8]),
        same: bool,
        m: usize,
        mask: u32,
        (oa, ob): (&mut u32, &mut u32),
        frames: [(u64, f32); 2],
        cv: &[f32x4],
        s3: u32,
    ) -> (SoaQuat, SoaQuat) {
        let [(fa, la), (fb, lb)] = frames;
        let same = same || !TWO;
        let mut da = [[0u32; 4]; 4];
        let mut db = [[0u32; 4]; 4];
        let mut ca = [[0u32; 4]; 4];
        let mut cb = [[0u32; 4]; 4];
        let (mut pa, mut pb) = (*oa, *ob);
        // Verbatim lanes (bit per lane) and their first bits per frame.
        let mut raw = 0u32;
        let mut raw_at = [(0u64, 0u64); 4];
        let mut at = m;
        let mut bits = mask;
        while bits != 0 {
            let l = bits.trailing_zeros() as usize & 3;
            bits &= bits - 1;
            for (d, w) in da.iter_mut().zip(meta_words(ma, at)) {
                d[l] = w;
            }
            if !same {
                for (d, w) in db.iter_mut().zip(meta_words(mb, at)) {
                    d[l] = w;
                }
            }
            at += LANE_META_BYTES;
        }
        // The four lanes' component rates at once, then per lane its
        // position and codes.
        let rates_a = rates_x4(da[2]);
        let rates_b = if same { rates_a } else { rates_x4(db[2]) };
        let (ka, kb) = (rates_a.map(u32x4::to_array), rates_b.map(u32x4::to_array));
        let lane_bits = |r: u32, k: [u32; 3], l: usize| -> u32 {
            if r == u32::from(RAW_BITS) {
                if ROT {
                    128
                } else {
                    96
                }
            } else if ROT && (F == TRACK_S3 || (F == TRACK_MIXED && s3 & (1 << l) != 0)) {
                k[0] + k[1] + k[2] + 2
            } else {
                k[0] + k[1] + k[2]
            }
        };
        let mut bits = mask;
        while bits != 0 {
            let l = bits.trailing_zeros() as usize & 3;
            bits &= bits - 1;
            let ra = da[2][l] & 31;
            let rb = if same { ra } else { db[2][l] & 31 };
            let (ka, kb) = (
                [ka[0][l], ka[1][l], ka[2][l]],
                [kb[0][l], kb[1][l], kb[2][l]],
            );
            let (qa, qb) = (fa + u64::from(pa), fb + u64::from(pb));
            pa += lane_bits(ra, ka, l);
            pb += lane_bits(rb, kb, l);
            if (ra | rb) <= u32::from(ONE_WINDOW_BITS) {
                window::<F>(self.data, qa, ka, l, &mut ca);
                if TWO {
                    window::<F>(self.data, qb, kb, l, &mut cb);
                }
            } else {
                reads(self.data, qa, ka, l, &mut ca);
                if TWO {
                    reads(self.data, qb, kb, l, &mut cb);
                }
                if ra == u32::from(RAW_BITS) || rb == u32::from(RAW_BITS) {
                    raw |= 1 << l;
                    raw_at[l] = (qa, qb);
                }
            }
        }
        *oa = pa;
        *ob = pb;
        let g = |i: usize| cv.get(i).copied().unwrap_or(f32x4::ZERO);
        let clip = [g(0), g(1), g(2), g(3), g(4), g(5)];
        let pa_ = dequant_params(&da, &rates_a, &clip);
        let va = dequant(&pa_, &ca, la);
        let vb = if !TWO {
            va
        } else if same {
            dequant(&pa_, &cb, lb)
        } else {
            dequant(&dequant_params(&db, &rates_b, &clip), &cb, lb)
        };
        let (mut qa, mut qb) = if ROT {
            let constant = [g(0), g(2), g(4), g(6)];
            let anim = lane_mask(mask);
            // A mixed track's drop-W lanes rebuild as smallest-three
            // with index 3 (w), the same operations as drop-W's.
            let dw = if F == TRACK_MIXED {
                u32x4::from(LANE_MASKS[(!s3 & 15) as usize])
            } else {
                u32x4::ZERO
            };
            let idx = |c: &[[u32; 4]; 4]| (u32x4::from(c[3]) | dw) & u32x4::splat(3);
            let qa = rebuild::<F>(va, idx(&ca), &constant, anim);
            let qb = if TWO {
                rebuild::<F>(vb, idx(&cb), &constant, anim)
            } else {
                qa
            };
            (qa, qb)
        } else {
            let v = |x: [f32x4; 3]| SoaQuat {
                x: x[0],
                y: x[1],
                z: x[2],
                w: f32x4::ZERO,
            };
            (v(va), v(vb))
        };
        if raw != 0 {
            let (ra, rb) = (&da, if same { &da } else { &db });
            self.patch_raw(raw, &raw_at, (ra, rb), ROT, &mut qa, &mut qb);
        }
        (qa, qb)
    }

    /// Overwrites the verbatim lanes of both frames with their stored `f32`
    /// values (x, y, z, and w for rotations).
    #[cold]
    #[inline(never)]
    fn patch_raw(
        &self,
        raw: u32,
        raw_at: &[(u64, u64); 4],
        (da, db): (&[[u32; 4]; 4], &[[u32; 4]; 4]),
        rot: bool,
        qa: &mut SoaQuat,
        qb: &mut SoaQuat,
    ) {
        let n = if rot { 4 } else { 3 };
        for (l, &(pa, pb)) in raw_at.iter().enumerate() {
            if raw & (1 << l) == 0 {
                continue;
            }
            for (q, d, pos) in [(&mut *qa, da, pa), (&mut *qb, db, pb)] {
                if d[2][l] & 0xff != u32::from(RAW_BITS) {
                    continue;
                }
                let mut c = [q.x, q.y, q.z, q.w].map(|v| v.to_array());
                for (i, v) in c.iter_mut().take(n).enumerate() {
                    v[l] = f32::from_bits(read_bits(self.data, pos + 32 * i as u64, 32));
                }
                let [x, y, z, w] = c.map(f32x4::from);
                *q = SoaQuat { x, y, z, w };
            }
        }
    }

    /// Decodes frames `i0` and `i1` (validated indices) block by block
    /// straight into SoA lanes and interpolates them by `alpha`, each
    /// rotation track with its lanes' formats as a compile-time choice.
    pub(super) fn decode_blend(
        &self,
        i0: usize,
        i1: usize,
        alpha: f32,
        rest: Option<&[SoaTransform]>,
        out: &mut [SoaTransform],
    ) {
        let at = [self.frame_at(i0), self.frame_at(i1)];
        // The `portable` feature chooses no kernel at run time.
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        if crate::cpu::avx2_kernels() && super::avx2::decode_blend(self, &at, alpha, rest, out) {
            return;
        }
        self.decode_blend_as(&at, alpha, rest, out);
    }

    /// The joint blocks' tracks (`out`'s blocks): their defaults or their
    /// clip constants, which are the same in every frame. The animated
    /// lanes among them are left for the packed pass to overwrite.
    #[inline(always)]
    pub(super) fn constant_pass(&self, rest: Option<&[SoaTransform]>, out: &mut [SoaTransform]) {
        let mut p = 0usize;
        for (i, (o, k)) in out.iter_mut().zip(self.kinds.chunks_exact(3)).enumerate() {
            let base: &[f32x4; BLOCK_VECTORS] = bytemuck::cast_ref(default_block(rest, i));
            let v: &mut [f32x4; BLOCK_VECTORS] = bytemuck::cast_mut(o);
            let stored = [k[0], k[1], k[2]].map(|kind| kind != KIND_DEFAULT);
            // The block's constants take at most BLOCK_VECTORS vectors
            // from `p` on. Inside such a window, one instance per set of
            // stored tracks copies runs of fixed length from fixed
            // offsets, which a decoder compiled with AVX does 32 bytes at
            // a time; a clip's blocks repeat a few sets in the same order
            // every call, which the branch predictor learns.
            if let Some(w) = self.params.get(p..).and_then(|r| r.first_chunk()) {
                p += match stored {
                    [false, false, false] => constant_block::<0>(w, base, v),
                    [true, false, false] => constant_block::<1>(w, base, v),
                    [false, true, false] => constant_block::<2>(w, base, v),
                    [true, true, false] => constant_block::<3>(w, base, v),
                    [false, false, true] => constant_block::<4>(w, base, v),
                    [true, false, true] => constant_block::<5>(w, base, v),
                    [false, true, true] => constant_block::<6>(w, base, v),
                    [true, true, true] => constant_block::<7>(w, base, v),
                };
                continue;
            }
            // The clip's last vectors (a validated clip still has every
            // stored track's): each track on its own. A padded window
            // would share the copies above, but the padding's stack slot
            // and the select between windows slow every block's path.
            for (stored, at, n) in [(stored[0], 0, 3), (stored[1], 3, 4), (stored[2], 7, 3)] {
                let from = if stored {
                    let cv = self.params.get(p..p + n);
                    p += n;
                    cv
                } else {
                    base.get(at..at + n)
                };
                if let (Some(from), Some(to)) = (from, v.get_mut(at..)) {
                    copy_vectors(to, from);
                }
            }
        }
    }

    /// The packed blocks' kind bytes.
    #[inline(always)]
    pub(super) fn packed_kinds(&self) -> &'a [u8] {
        self.kinds.get(3 * self.soa_count()..).unwrap_or_default()
    }

    /// The packed blocks' kind bytes a decode into `blocks` joint blocks
    /// reads: all of them for a whole pose; for a prefix
    /// ([`Self::sample_prefix`]), those up to the last packed block with a
    /// lane inside it. Each type's tracks fill the packed blocks from the
    /// first on, their lanes in joint order, so a packed block whose
    /// tracks all start past the prefix is followed by no lane inside it
    /// either, and the bit stream after it is not read.
    #[inline(always)]
    pub(super) fn packed_kinds_for(&self, blocks: usize) -> &'a [u8] {
        let all = self.packed_kinds();
        if blocks >= self.soa_count() {
            return all;
        }
        let limit = blocks * LANES;
        let mut dest = self.dest;
        let mut needed = 0;
        for k in all.chunks_exact(3) {
            let mut inside = false;
            for &kind in k {
                if kind != KIND_DEFAULT {
                    let first = next_joints(&mut dest, kind).first();
                    inside |= first.is_some_and(|&j| usize::from(j) < limit);
                }
            }
            if !inside {
                break;
            }
            needed += 3;
        }
        all.get(..needed).unwrap_or_default()
    }

    /// [`Self::decode_blend`] with the portable decoder, whatever the CPU.
    ///
    /// The joint blocks' constants are copied ([`Self::constant_pass`]);
    /// each packed track is decoded in both frames, interpolated and its
    /// lanes written to their joints.
    #[inline(always)]
    pub(super) fn decode_blend_as(
        &self,
        [a, b]: &[FrameAt; 2],
        alpha: f32,
        rest: Option<&[SoaTransform]>,
        out: &mut [SoaTransform],
    ) {
        self.constant_pass(rest, out);
        let ma = self.segment_meta(a.segment).unwrap_or(&[]);
        let mb = self.segment_meta(b.segment).unwrap_or(&[]);
        let same = a.segment == b.segment;
        let frames = [(a.first, a.local), (b.first, b.local)];
        // Running positions: clip constants (vectors), metadata bytes, bit
        // offsets inside frames a and b, and the lanes' joints.
        let (mut p, mut m, mut oa, mut ob) = (self.packed_at, 0usize, 0u32, 0u32);
        let mut dest = self.dest;
        let blend = Blend::new(alpha);
        // The last animated rotation track's frames and joints: it is
        // interpolated once the next one is decoded, so that the CPU
        // overlaps one track's interpolation (square root and division)
        // with the next track's decode instead of waiting on one long chain
        // per track.
        let mut waiting: Option<(SoaQuat, SoaQuat, &[u16])> = None;
        for k in self.packed_kinds_for(out.len()).chunks_exact(3) {
            macro_rules! track {
                ($kind:expr, $rot:literal) => {{
                    let mask = u32::from($kind >> 4);
                    let n = track_param_floats($rot, 1) / LANES;
                    let cv = self.params.get(p..p + n).unwrap_or(&[]);
                    p += n;
                    let pair = self.track_pair::<$rot>(
                        (ma, mb),
                        same,
                        m,
                        mask,
                        (&mut oa, &mut ob),
                        frames,
                        cv,
                    );
                    m += LANE_META_BYTES * mask.count_ones() as usize;
                    (pair, next_joints(&mut dest, $kind))
                }};
            }
            if k[0] != KIND_DEFAULT {
                let ((qa, qb), joints) = track!(k[0], false);
                scatter::<TRANSLATION_AT, 3>(out, &vec_vectors(&blend.lerp(&qa, &qb)), joints);
            }
            if k[1] != KIND_DEFAULT {
                let ((ra, rb), joints) = track!(k[1], true);
                if let Some((qa, qb, joints)) = waiting.replace((ra, rb, joints)) {
                    scatter::<ROTATION_AT, 4>(out, &quat_vectors(&blend.nlerp(&qa, &qb)), joints);
                }
            }
            if k[2] != KIND_DEFAULT {
                let ((qa, qb), joints) = track!(k[2], false);
                scatter::<SCALE_AT, 3>(out, &vec_vectors(&blend.lerp(&qa, &qb)), joints);
            }
        }
        if let Some((qa, qb, joints)) = waiting {
            scatter::<ROTATION_AT, 4>(out, &quat_vectors(&blend.nlerp(&qa, &qb)), joints);
        }
    }
}

/// Float offsets of a block's translation, rotation and scale in a
/// [`SoaTransform`] (component-major, four lanes per component).
pub(super) const TRANSLATION_AT: usize = 0;
/// See [`TRANSLATION_AT`].
pub(super) const ROTATION_AT: usize = 3 * LANES;
/// See [`TRANSLATION_AT`].
pub(super) const SCALE_AT: usize = 7 * LANES;

/// A translation or scale's components, as [`scatter`] takes them.
#[inline(always)]
pub(super) fn vec_vectors(v: &SoaVec3) -> [f32x4; 3] {
    [v.x, v.y, v.z]
}

/// A rotation's components, as [`scatter`] takes them.
#[inline(always)]
pub(super) fn quat_vectors(q: &SoaQuat) -> [f32x4; 4] {
    [q.x, q.y, q.z, q.w]
}

/// Writes a packed track's lanes to their joints: lane `s`'s components
/// (`values[c]`, lane `s`) to joint `joints[s]`'s translation, rotation or
/// scale (the track's vector `AT / LANES` in a block). Joints past `out`
/// (a prefix of the pose) are skipped.
#[inline(always)]
pub(super) fn scatter<const AT: usize, const N: usize>(
    out: &mut [SoaTransform],
    values: &[f32x4; N],
    joints: &[u16],
) {
    // Four lanes that are one joint block in order (every track of a clip
    // whose joints are all animated): whole vectors.
    if let [j0, .., j3] = *joints {
        let (j0, j3) = (usize::from(j0), usize::from(j3));
        if joints.len() == LANES && j0 % LANES == 0 && j3 == j0 + LANES - 1 {
            if let Some(block) = out.get_mut(j0 / LANES) {
                let v: &mut [f32x4; BLOCK_VECTORS] = bytemuck::cast_mut(block);
                copy_vectors(v.get_mut(AT / LANES..).unwrap_or_default(), values);
            }
            return;
        }
    }
    let values = values.map(|v| v.to_array());
    for (s, &j) in joints.iter().enumerate().take(LANES) {
        let j = usize::from(j);
        let Some(block) = out.get_mut(j / LANES) else {
            continue;
        };
        let floats: &mut [[f32; LANES]; BLOCK_VECTORS] = bytemuck::cast_mut(block);
        let l = j % LANES;
        for (c, v) in values.iter().enumerate() {
            if let Some(x) = floats.get_mut(AT / LANES + c) {
                x[l] = v[s];
            }
        }
    }
}
