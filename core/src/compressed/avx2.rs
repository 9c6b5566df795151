//! The AVX2 decoder of compressed clips, on x86-64 CPUs that have it
//! (asked once at run time, see [`crate::cpu::avx2_fma`]).
//!
//! The portable decoder handles a stored block track's animated lanes one at
//! a time: per lane it reads the metadata words and one 64-bit window per
//! frame, splits the window into three codes with scalar shifts and
//! assembles the lanes into `u32x4` vectors through memory. Here one 256-bit
//! register holds both frames of the four lanes (frame a in the low half,
//! frame b in the high half), and every step is lane-wise:
//!
//! - each lane's 16 metadata bytes of both frames' segments are loaded into
//!   one register and the four lanes transposed, so the ranges, rate and
//!   trends come out with uniform shifts and masks (constant lanes are
//!   masked to zero, which decodes them to their clip constant);
//! - each component's rate is the lane's less its drop bit, and the lanes'
//!   bit offsets are a prefix sum of their lengths inside each half;
//! - the eight 64-bit windows are eight loads (a gather is slower on CPUs
//!   with the gather data sampling mitigation) into two registers, each
//!   holding two lanes of both frames, split into codes with per-lane
//!   variable shifts (`vpsrlvq`) and packed with one shuffle that stays
//!   inside the 128-bit halves;
//! - when both frames lie in one segment, each lane's metadata is one
//!   broadcast load, and tracks whose rates are all at most 15 (the usual
//!   case) look up `1 / (2^k − 1)` in two table rows instead of three;
//! - dequantization, trend and the rotation's `w` are the portable formulas
//!   in the same operation order, without fused multiply-adds, so the result
//!   equals the portable decoder's bit for bit (tested below).
//!
//! The block loop is the portable decoder's (each animated rotation
//! interpolated once the next one is decoded); this module gives it its
//! own track decoder and interpolates at SSE width straight from the
//! decoded registers.
//!
//! Smallest-three rotation lanes read their 2-bit index after the three
//! codes and are rebuilt with the portable decoder's selects; a rotation
//! track takes the instance of its lanes' formats (their format slots): all
//! drop-W, all smallest-three, or mixed, where drop-W lanes rebuild with
//! index 3. A track with a lane above [`ONE_WINDOW_BITS`] (up to 23 bits)
//! reads two windows per lane and frame, x and y, then z and the index;
//! tracks with a verbatim lane go to the portable track decoder. Every
//! load is bounded once per call (metadata) or clamped
//! (bit-stream windows), so even a container edited after validation (a
//! [`CompressedClip::from_validated_bytes`] view) decodes garbage, never reads out
//! of bounds.
#![allow(unsafe_code)]

use core::arch::x86_64::*;

use wide::f32x4;

use super::cache::{put_frames, ROT_VECTORS, VEC_VECTORS};
use super::codec::MAX_QUANTIZED_BITS;
use super::codec::{trend_factors, INV_MAX_CODE};
use super::decode::{
    next_joints, quat_vectors, s3_lanes, scatter, vec_vectors, Blend, FrameAt, LANE_MASKS,
    ROTATION_AT, SCALE_AT, TRANSLATION_AT,
};
use super::format::{
    track_param_floats, KIND_DEFAULT, LANE_META_BYTES, ONE_WINDOW_BITS, TRACK_DROP_W, TRACK_MIXED,
    TRACK_S3,
};
use super::CompressedClip;
use crate::soa::{SoaQuat, SoaTransform, SoaVec3, LANES};

/// Per 4-bit animated mask, each lane's byte offset into the track's
/// metadata (its rank among the animated lanes × [`LANE_META_BYTES`]; 0 for
/// constant lanes, whose loaded bytes are masked off).
const META_OFFSETS: [[u8; 4]; 16] = {
    let mut t = [[0u8; 4]; 16];
    let mut m = 0;
    while m < 16 {
        let mut rank = 0u8;
        let mut l = 0;
        while l < 4 {
            if m & (1 << l) != 0 {
                t[m][l] = rank * LANE_META_BYTES as u8;
                rank += 1;
            }
            l += 1;
        }
        m += 1;
    }
    t
};

/// Per 4-bit animated mask, all-ones in the animated lanes of both halves
/// (the portable decoder's [`LANE_MASKS`], twice).
const ANIMATED: [[u32; 8]; 16] = {
    let mut t = [[0u32; 8]; 16];
    let mut m = 0;
    while m < 16 {
        let mut l = 0;
        while l < 8 {
            t[m][l] = LANE_MASKS[m][l % 4];
            l += 1;
        }
        m += 1;
    }
    t
};

// Three rows of eight: `inv_max_code` below covers every rate. Rates up
// to 15 (two rows) fit one window.
const _: () = assert!(INV_MAX_CODE.len() == 24 && 15 < ONE_WINDOW_BITS);

/// [`INV_MAX_CODE`] of each lane's `k` (0..24, or 0..16 without `high`):
/// in-register table lookups on its low 3 bits, selected by bits 3 and 4
/// (bit 4 is only looked at with `high`).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn inv_max_code(k: __m256i, high: bool) -> __m256 {
    let (rows, _) = INV_MAX_CODE.as_chunks::<8>();
    // SAFETY: each of the three rows is 8 readable floats.
    let row = |r: usize| unsafe { _mm256_loadu_ps(rows[r].as_ptr()) };
    let pick = |r: usize| _mm256_permutevar8x32_ps(row(r), k);
    let bit = |v: __m256i| _mm256_castsi256_ps(v);
    let low = _mm256_blendv_ps(pick(0), pick(1), bit(_mm256_slli_epi32::<28>(k)));
    if !high {
        return low;
    }
    _mm256_blendv_ps(low, pick(2), bit(_mm256_slli_epi32::<27>(k)))
}

/// [`CompressedClip::decode_blend`] of the frames `at`, when this CPU has
/// AVX2 (`false`, and nothing decoded, otherwise). The caller skips it
/// under the `portable` feature; the tests call it either way.
pub(super) fn decode_blend(
    clip: &CompressedClip<'_>,
    at: &[FrameAt; 2],
    alpha: f32,
    rest: Option<&[SoaTransform]>,
    out: &mut [SoaTransform],
) -> bool {
    if !crate::cpu::avx2_fma() {
        return false;
    }
    // SAFETY: this CPU runs AVX2 and FMA code.
    unsafe { decode(clip, at, alpha, rest, out) }
}

/// [`CompressedClip::blend_frames`] on a CPU with AVX (`false`, and
/// nothing written, otherwise): the portable code compiled with the VEX
/// encoding, whose three-operand forms spare the register copies of
/// two-operand SSE. The operations are the same (AVX alone has no fused
/// multiply-add), so are the bits.
pub(super) fn blend_frames(
    clip: &CompressedClip<'_>,
    a: &[f32x4],
    b: &[f32x4],
    alpha: f32,
    rest: Option<&[SoaTransform]>,
    out: &mut [SoaTransform],
) -> bool {
    if !crate::cpu::avx2_fma() {
        return false;
    }
    // SAFETY: this CPU runs AVX code (AVX2 and FMA imply it).
    unsafe { blend_frames_vex(clip, a, b, alpha, rest, out) };
    true
}

#[target_feature(enable = "avx")]
fn blend_frames_vex(
    clip: &CompressedClip<'_>,
    a: &[f32x4],
    b: &[f32x4],
    alpha: f32,
    rest: Option<&[SoaTransform]>,
    out: &mut [SoaTransform],
) {
    clip.blend_frames_as(a, b, alpha, rest, out);
}

/// Which decode runs [`track`]: [`decode`] (both frames, interpolated),
/// the cache's pair of slots, or its single slot. Each has its own
/// instance of the track decoder, so that every instance has one caller
/// and is inlined there (an instance shared by two callers is called out
/// of line, at the cost of its arguments and results through memory).
const BLEND: u8 = 0;
/// See [`BLEND`].
const PAIR: u8 = 1;
/// See [`BLEND`].
const ONE: u8 = 2;

/// What every track of one decode shares.
struct Frames {
    /// Frame a's and b's segment metadata.
    meta: [*const u8; 2],
    /// The trend factors ([`trend_factors`]) of the local frame indices:
    /// frame a's in the low half, b's in the high half.
    tl: __m256,
    tl2: __m256,
    /// The bit stream, and the last byte at which 8 bytes can be read.
    data: *const u8,
    last: __m256i,
    /// Both frames, for the portable track decoder (tracks this one
    /// declines).
    at: [FrameAt; 2],
}

/// The running read positions of one decode: the clip constants not yet
/// read, metadata bytes, and the next lane's bit in frame a (low half, all
/// lanes) and frame b (high half).
struct Cursor<'c> {
    params: &'c [f32x4],
    m: usize,
    bit: __m256i,
}

/// Frame a's and frame b's `[x, y, z, w]` of a decoded track.
type TwoFrames = ([__m128; 4], [__m128; 4]);

/// One stored block track of a sample: constant (no animated lane: the
/// constant pass writes its clip constants) or its two frames, each
/// `[x, y, z, w]` with frame a in the low half and frame b in the high
/// half (`w` 0 for vectors).
enum Stored {
    Constant,
    Frames([__m256; 4]),
}

/// Decodes and interpolates a pose, each rotation track with the
/// instance of its lanes' formats; `false` (nothing written) when the
/// per-call bounds do not hold, which a validated clip never does.
///
/// The block loop is the portable [`CompressedClip::decode_blend_as`]'s:
/// values copied for default and unanimated tracks, translations and
/// scales lerped as soon as they are decoded, each animated rotation
/// nlerped once the next one is decoded. So are the values, bit for bit:
/// tracks with a verbatim lane go to the portable track decoder, and the
/// interpolation is its [`Blend`] in the same operation order (a fused
/// multiply-add exactly where the portable decoder's `madd` fuses, that is
/// in builds with FMA enabled and without the `deterministic` feature).
#[target_feature(enable = "avx2,fma")]
fn decode(
    clip: &CompressedClip<'_>,
    at: &[FrameAt; 2],
    alpha: f32,
    rest: Option<&[SoaTransform]>,
    out: &mut [SoaTransform],
) -> bool {
    let Some((frames, mut cur)) = start(clip, at) else {
        return false;
    };
    clip.constant_pass(rest, out);
    cur.params = clip.params.get(clip.packed_at..).unwrap_or_default();
    let blend = Blend::new(alpha);
    let (wa, wb): (__m128, __m128) = (bytemuck::cast(blend.wa), bytemuck::cast(blend.wb));
    // The last animated rotation track's frames and joints: it is
    // interpolated once the next one is decoded, so that the CPU overlaps
    // one track's interpolation (square root and division) with the next
    // track's decode instead of waiting on one long chain per track.
    let mut waiting: Option<([__m256; 4], &[u16])> = None;
    let mut dest = clip.dest;
    let mut joints = |kind: u8| next_joints(&mut dest, kind);
    // For the `stored` calls: this CPU has AVX2 (asked by the caller), and
    // every metadata load stays inside `meta_ext` (checked by `start`; the
    // kinds' animated lanes add up to `clip.animated`, validated).
    for k in clip.packed_kinds_for(out.len()).chunks_exact(3) {
        // A translation or scale track, lerped and written to its joints.
        macro_rules! vector {
            ($kind:expr, $at:expr) => {
                if $kind != KIND_DEFAULT {
                    // SAFETY: AVX2 and the metadata bound, as stated above.
                    let v = unsafe { stored::<false, BLEND>(clip, &frames, &mut cur, $kind) };
                    if let Stored::Frames(v) = v {
                        let lanes = vec_vectors(&lerp(v, wa, wb));
                        scatter::<{ $at }, 3>(out, &lanes, joints($kind));
                    }
                }
            };
        }
        vector!(k[0], TRANSLATION_AT);
        if k[1] != KIND_DEFAULT {
            // SAFETY: AVX2 and the metadata bound, as stated above.
            let v = unsafe { stored::<true, BLEND>(clip, &frames, &mut cur, k[1]) };
            if let Stored::Frames(v) = v {
                if let Some((w, j)) = waiting.replace((v, joints(k[1]))) {
                    scatter::<ROTATION_AT, 4>(out, &quat_vectors(&nlerp(halves(w), wa, wb)), j);
                }
            }
        }
        vector!(k[2], SCALE_AT);
    }
    if let Some((w, j)) = waiting {
        scatter::<ROTATION_AT, 4>(out, &quat_vectors(&nlerp(halves(w), wa, wb)), j);
    }
    true
}

/// The playback cache's slot writes ([`CompressedClip::decode_into_as`])
/// of frame `at[0]` into `a` and, with `TWO`, of frame `at[1]` into `b`,
/// when this CPU has AVX2 (`false`, and nothing written, otherwise): every
/// animated track's decoded value before interpolation, packed as the
/// slots hold them, the portable decoder's bits. The caller skips it
/// under the `portable` feature; the tests call it either way.
pub(super) fn decode_slots<const TWO: bool>(
    clip: &CompressedClip<'_>,
    at: &[FrameAt; 2],
    a: &mut [f32x4],
    b: &mut [f32x4],
) -> bool {
    if !crate::cpu::avx2_fma() {
        return false;
    }
    // SAFETY: this CPU runs AVX2 and FMA code.
    unsafe {
        if TWO {
            slots::<PAIR>(clip, at, a, b)
        } else {
            slots::<ONE>(clip, at, a, b)
        }
    }
}

/// Frame a's and frame b's values of an animated track as [`stored`] gave
/// them; `None` for a constant track (slots do not hold those).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn animated_frames(s: Stored) -> Option<(SoaQuat, SoaQuat)> {
    match s {
        Stored::Constant => None,
        Stored::Frames(v) => {
            let (a, b) = halves(v);
            let q = |h: [__m128; 4]| {
                let [x, y, z, w] = h.map(bytemuck::cast);
                SoaQuat { x, y, z, w }
            };
            Some((q(a), q(b)))
        }
    }
}

/// [`decode_slots`] on a CPU with AVX2: the track walk of the portable
/// slot writes, each animated track through [`stored`] into the slots'
/// next vectors (with `MODE` [`ONE`] the frames are `[at[0], at[0]]`, and
/// the high halves are dropped). `false` (nothing written) when the
/// per-call bounds do not hold.
#[target_feature(enable = "avx2,fma")]
fn slots<const MODE: u8>(
    clip: &CompressedClip<'_>,
    at: &[FrameAt; 2],
    a: &mut [f32x4],
    b: &mut [f32x4],
) -> bool {
    let two = MODE != ONE;
    let at = if two { *at } else { [at[0], at[0]] };
    let Some((frames, mut cur)) = start(clip, &at) else {
        return false;
    };
    // Slots hold the packed tracks, whose clip constants follow the
    // joints' blocks' (every packed track has an animated lane).
    cur.params = clip.params.get(clip.packed_at..).unwrap_or_default();
    let mut v = 0usize;
    // Unrolled by hand: a loop over a block's three tracks keeps the
    // walk's state in memory and costs a fifth more instructions.
    macro_rules! track {
        ($kind:expr, $rot:expr, $n:expr) => {
            if $kind != KIND_DEFAULT {
                // SAFETY: AVX2 and the metadata bound, as stated above.
                let s = unsafe { stored::<$rot, MODE>(clip, &frames, &mut cur, $kind) };
                if let Some((qa, qb)) = animated_frames(s) {
                    put_frames::<$n>((&mut *a, &mut *b), &mut v, (&qa, &qb), two);
                }
            }
        };
    }
    for kinds in clip.packed_kinds().chunks_exact(3) {
        // For the `stored` calls: this CPU has AVX2 (asked by the caller),
        // and every metadata load stays inside `meta_ext` (checked by
        // `start`; the kinds' animated lanes add up to `clip.animated`,
        // validated).
        track!(kinds[0], false, VEC_VECTORS);
        track!(kinds[1], true, ROT_VECTORS);
        track!(kinds[2], false, VEC_VECTORS);
    }
    true
}

/// The shared state and the cursor of one decode of the frames `at`;
/// `None` when the per-call bounds do not hold, which a validated clip
/// never does.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn start<'c>(clip: &CompressedClip<'c>, at: &[FrameAt; 2]) -> Option<(Frames, Cursor<'c>)> {
    let seg_meta = clip.animated * LANE_META_BYTES;
    let [a, b] = at;
    let (sa, sb) = (a.segment * seg_meta, b.segment * seg_meta);
    // Every 16-byte metadata load of this call ends at most 3 bytes past
    // its segment's metadata; the bit stream ends with 8 padding bytes.
    if sa.max(sb) + seg_meta + 3 > clip.meta_ext.len() || clip.data.len() < 8 {
        return None;
    }
    let (fa, fb) = (trend_factors(a.local), trend_factors(b.local));
    let base_ptr = clip.meta_ext.as_ptr();
    let frames = Frames {
        // SAFETY: both offsets are inside `meta_ext` (checked above).
        meta: unsafe { [base_ptr.add(sa), base_ptr.add(sb)] },
        tl: _mm256_setr_m128(_mm_set1_ps(fa.0), _mm_set1_ps(fb.0)),
        tl2: _mm256_setr_m128(_mm_set1_ps(fa.1), _mm_set1_ps(fb.1)),
        data: clip.data.as_ptr(),
        last: _mm256_set1_epi32((clip.data.len() - 8).min(i32::MAX as usize) as i32),
        at: *at,
    };
    let cur = Cursor {
        params: clip.params,
        m: 0,
        bit: half_pair(
            _mm_set1_epi32(a.first as i32),
            _mm_set1_epi32(b.first as i32),
        ),
    };
    Some((frames, cur))
}

/// `a · b + c`, fused exactly where the portable decoder's
/// [`crate::fp::Fp::madd`] fuses: in builds with FMA enabled, unless the
/// `deterministic` feature is on.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn madd(a: __m128, b: __m128, c: __m128) -> __m128 {
    if cfg!(all(target_feature = "fma", not(feature = "deterministic"))) {
        _mm_fmadd_ps(a, b, c)
    } else {
        _mm_add_ps(_mm_mul_ps(a, b), c)
    }
}

/// Frame a's and frame b's `[x, y, z, w]` of a decoded track.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn halves(v: [__m256; 4]) -> TwoFrames {
    (
        v.map(|h| _mm256_castps256_ps128(h)),
        v.map(|h| _mm256_extractf128_ps::<1>(h)),
    )
}

/// [`Blend::lerp`] of a decoded translation or scale track.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn lerp(v: [__m256; 4], wa: __m128, wb: __m128) -> SoaVec3 {
    let (a, b) = halves(v);
    let [x, y, z] = [0, 1, 2].map(|c| bytemuck::cast(madd(b[c], wb, _mm_mul_ps(a[c], wa))));
    SoaVec3 { x, y, z }
}

/// [`Blend::nlerp`] of a decoded rotation track.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn nlerp((a, b): TwoFrames, wa: __m128, wb: __m128) -> SoaQuat {
    let dot = |a: &[__m128; 4], b: &[__m128; 4]| {
        madd(
            a[0],
            b[0],
            madd(a[1], b[1], madd(a[2], b[2], _mm_mul_ps(a[3], b[3]))),
        )
    };
    let flip = _mm_cmplt_ps(dot(&a, &b), _mm_setzero_ps());
    let w = _mm_xor_ps(wb, _mm_and_ps(flip, _mm_set1_ps(-0.0)));
    let q = [0, 1, 2, 3].map(|c| madd(b[c], w, _mm_mul_ps(a[c], wa)));
    let inv = _mm_div_ps(_mm_set1_ps(1.0), _mm_sqrt_ps(dot(&q, &q)));
    let [x, y, z, w] = q.map(|v| bytemuck::cast(_mm_mul_ps(v, inv)));
    SoaQuat { x, y, z, w }
}

/// The next stored block track (kind byte `kind`, not the default; the
/// `ROT` instance for rotations), decoded by [`track`] (the instance of its
/// lanes' formats) or, when it declines, by the portable decoder; the
/// cursor moves past it. With `MODE` [`ONE`] the two frames must be one
/// and the same (the cache's single-frame decode), whose loads [`track`]
/// makes once for both halves.
///
/// # Safety
/// As [`track`], for every track the cursor reaches.
#[inline(always)]
unsafe fn stored<const ROT: bool, const MODE: u8>(
    clip: &CompressedClip<'_>,
    f: &Frames,
    cur: &mut Cursor<'_>,
    kind: u8,
) -> Stored {
    let mask = u32::from(kind >> 4);
    // Clip constants: a track without an animated lane has no units
    // ([`track_param_floats`] of mask 0; any other mask gives the full
    // size), no metadata and no bits.
    let n = track_param_floats(ROT, if mask == 0 { 0 } else { 1 }) / LANES;
    let (cv, rest) = cur.params.split_at_checked(n).unwrap_or_default();
    cur.params = rest;
    if mask == 0 {
        return Stored::Constant;
    }
    let m = cur.m;
    cur.m += LANE_META_BYTES * mask.count_ones() as usize;
    // The track's own format: a per-lane clip's tracks whose lanes share
    // one pay nothing for the mix.
    let s3 = if ROT { s3_lanes(cv, mask) } else { 0 };
    macro_rules! go {
        ($t:expr) => {
            // SAFETY: the caller's contract, for this track.
            unsafe { stored_as::<{ $t }, ROT, MODE>(clip, f, cur, m, mask, cv, s3) }
        };
    }
    match s3 {
        0 => go!(TRACK_DROP_W),
        s if s == mask => go!(TRACK_S3),
        _ => go!(TRACK_MIXED),
    }
}

/// [`stored`] for an animated track of format `T` (every lane drop-W,
/// every lane smallest-three, or [`TRACK_MIXED`] with the smallest-three
/// lanes `s3`) whose metadata starts at `m`.
///
/// # Safety
/// As [`track`].
#[inline(always)]
unsafe fn stored_as<const T: u8, const ROT: bool, const MODE: u8>(
    clip: &CompressedClip<'_>,
    f: &Frames,
    cur: &mut Cursor<'_>,
    m: usize,
    mask: u32,
    cv: &[f32x4],
    s3: u32,
) -> Stored {
    let n = track_param_floats(ROT, 1) / LANES;
    if cv.len() == n {
        // SAFETY: the CPU has AVX2 and 16 bytes are readable at every
        // animated lane's metadata of this track in both frames: the
        // caller's contract for every track the cursor reaches, and `m` is
        // this track's metadata offset.
        if let Some(v) = unsafe { track::<T, ROT, MODE>(f, m, mask, &mut cur.bit, cv, s3) } {
            return Stored::Frames(v);
        }
    }
    // The portable decoder, from the same bit offsets.
    let [a, b] = f.at;
    let (fa, fb) = (a.first, b.first);
    let mut oa = (_mm256_extract_epi32::<0>(cur.bit) as u32).wrapping_sub(fa as u32);
    let mut ob = (_mm256_extract_epi32::<4>(cur.bit) as u32).wrapping_sub(fb as u32);
    let meta = |s: usize| clip.segment_meta(s).unwrap_or(&[]);
    let (qa, qb) = clip.track_frames::<T, ROT, true>(
        (meta(a.segment), meta(b.segment)),
        a.segment == b.segment,
        m,
        mask,
        (&mut oa, &mut ob),
        [(fa, a.local), (fb, b.local)],
        cv,
        s3,
    );
    cur.bit = half_pair(
        _mm_set1_epi32(fa.wrapping_add(u64::from(oa)) as i32),
        _mm_set1_epi32(fb.wrapping_add(u64::from(ob)) as i32),
    );
    let two = |a: f32x4, b: f32x4| _mm256_setr_m128(bytemuck::cast(a), bytemuck::cast(b));
    Stored::Frames([
        two(qa.x, qb.x),
        two(qa.y, qb.y),
        two(qa.z, qb.z),
        two(qa.w, qb.w),
    ])
}

#[inline]
#[target_feature(enable = "avx2,fma")]
fn half_pair(lo: __m128i, hi: __m128i) -> __m256i {
    _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(lo), hi)
}

/// Both frames of one stored block track of format `T` (see
/// [`stored_as`]) with the lanes' metadata at byte `m` of each segment's
/// (see the module docs); `None`, with the offsets untouched, when a lane
/// is verbatim. Lanes up to [`ONE_WINDOW_BITS`] read one 64-bit window per
/// frame; a track with a wider lane reads two per lane (x and y, then z and
/// the smallest-three index). With `MODE` [`ONE`] (both frames the same)
/// each lane's metadata and windows are loaded once and copied to the
/// high half.
///
/// # Safety
/// The CPU must support AVX2, and 16 bytes must be readable at
/// `frames.meta[k] + m + LANE_META_BYTES × rank` for every animated lane's
/// rank and both `k`.
#[inline]
#[target_feature(enable = "avx2,fma")]
unsafe fn track<const T: u8, const ROT: bool, const MODE: u8>(
    frames: &Frames,
    m: usize,
    mask: u32,
    bit: &mut __m256i,
    cv: &[f32x4],
    s3: u32,
) -> Option<[__m256; 4]> {
    // Whether the lanes store a smallest-three index.
    let has_idx = ROT && T != TRACK_DROP_W;
    let mask = mask as usize & 15;
    let lane_at = META_OFFSETS[mask];
    let [pa, pb] = frames.meta;
    let same = pa == pb;
    let lane = |l: usize| -> __m256i {
        let at = m + usize::from(lane_at[l]);
        // SAFETY: `at` is lane `l`'s metadata (`m` plus its rank ×
        // LANE_META_BYTES), where the caller's contract makes 16 bytes
        // readable in both frames' segments.
        unsafe {
            let a = _mm_loadu_si128(pa.add(at).cast());
            // Both frames in one segment (always with MODE ONE): one
            // broadcast load, without a shuffle.
            if MODE == ONE || same {
                _mm256_broadcastsi128_si256(a)
            } else {
                half_pair(a, _mm_loadu_si128(pb.add(at).cast()))
            }
        }
    };
    let (l0, l1, l2, l3) = (lane(0), lane(1), lane(2), lane(3));
    // Transpose the lanes' words: d0 = bytes 0..4 of each lane (x and y
    // ranges), d1 = bytes 4..8 (z range, rate, x slope), d2 = bytes 8..12
    // (y and z slopes, x and y curvatures), d3 = bytes 12..16 (z curvature).
    let t0 = _mm256_unpacklo_epi32(l0, l1);
    let t1 = _mm256_unpacklo_epi32(l2, l3);
    let t2 = _mm256_unpackhi_epi32(l0, l1);
    let t3 = _mm256_unpackhi_epi32(l2, l3);
    // SAFETY: the table row is 8 readable `u32`.
    let anim = unsafe { _mm256_loadu_si256(ANIMATED[mask].as_ptr().cast()) };
    let d0 = _mm256_and_si256(_mm256_unpacklo_epi64(t0, t1), anim);
    let d1 = _mm256_and_si256(_mm256_unpackhi_epi64(t0, t1), anim);
    let d2 = _mm256_and_si256(_mm256_unpacklo_epi64(t2, t3), anim);
    let d3 = _mm256_and_si256(_mm256_unpackhi_epi64(t2, t3), anim);
    let byte = _mm256_set1_epi32(0xff);
    let rate_byte = _mm256_and_si256(_mm256_srli_epi32::<16>(d1), byte);
    let rate = _mm256_and_si256(rate_byte, _mm256_set1_epi32(31));
    // Rates up to 15, the usual case, need neither a second window nor
    // the table's third row; the others are told apart only then.
    let high = _mm256_cmpgt_epi32(rate, _mm256_set1_epi32(15));
    let high = _mm256_testz_si256(high, high) == 0;
    let mut wide = false;
    if high {
        let raw = _mm256_cmpgt_epi32(rate, _mm256_set1_epi32(i32::from(MAX_QUANTIZED_BITS)));
        if _mm256_testz_si256(raw, raw) == 0 {
            return None;
        }
        let over = _mm256_cmpgt_epi32(rate, _mm256_set1_epi32(i32::from(ONE_WINDOW_BITS)));
        wide = _mm256_testz_si256(over, over) == 0;
    }
    // From here on the rates are at most 23. Each component's rate is the
    // lane's less its drop bit (never below 0, as the portable `rates_x4`).
    let one = _mm256_set1_epi32(1);
    let less = |d: __m256i| _mm256_sub_epi32(_mm256_max_epu32(rate, d), d);
    let k = [
        less(_mm256_and_si256(_mm256_srli_epi32::<5>(rate_byte), one)),
        less(_mm256_and_si256(_mm256_srli_epi32::<6>(rate_byte), one)),
        less(_mm256_srli_epi32::<7>(rate_byte)),
    ];

    // Bit offsets: an exclusive prefix sum of the lanes' lengths (plus the
    // 2-bit index of a smallest-three rotation) inside each half.
    let k01 = _mm256_add_epi32(k[0], k[1]);
    let k012 = _mm256_add_epi32(k01, k[2]);
    let len = if has_idx {
        // Smallest-three lanes only: constant lanes store no bits at all,
        // and a mixed track's drop-W lanes no index.
        let s3_lanes = if T == TRACK_MIXED {
            // SAFETY: the table row is 8 readable `u32`.
            unsafe { _mm256_loadu_si256(ANIMATED[s3 as usize & 15].as_ptr().cast()) }
        } else {
            anim
        };
        _mm256_add_epi32(k012, _mm256_and_si256(s3_lanes, _mm256_set1_epi32(2)))
    } else {
        k012
    };
    let s1 = _mm256_add_epi32(len, _mm256_slli_si256::<4>(len));
    let incl = _mm256_add_epi32(s1, _mm256_slli_si256::<8>(s1));
    let pos = _mm256_add_epi32(*bit, _mm256_sub_epi32(incl, len));
    // The next track starts after this one's last lane, in each half.
    *bit = _mm256_add_epi32(*bit, _mm256_shuffle_epi32::<0xff>(incl));
    // Byte of each window (clamped so that corrupt offsets still read
    // inside the stream) and the shift inside it.
    let data = frames.data;
    let last = frames.last;
    // The windows of the four lanes of both frames as two registers of
    // 64-bit words, P = [a0 a1 | b0 b1] and Q = [a2 a3 | b2 b3] (lane and
    // frame): their shift counts are the lanes' 32-bit counts widened
    // inside each 128-bit half, and the low words of P and Q shuffled
    // together are [a0 a1 a2 a3 | b0 b1 b2 b3] again, without a shuffle
    // across the halves.
    let zero = _mm256_setzero_si256();
    let widened = |sh: __m256i| {
        (
            _mm256_unpacklo_epi32(sh, zero),
            _mm256_unpackhi_epi32(sh, zero),
        )
    };
    let windows = |pos: __m256i| -> (__m256i, __m256i) {
        let at = _mm256_min_epu32(_mm256_srli_epi32::<3>(pos), last);
        let (sp, sq) = widened(_mm256_and_si256(pos, _mm256_set1_epi32(7)));
        let ld = |i: i32| -> __m128i {
            // SAFETY: every index is at most `data.len() - 8`: 8 bytes
            // readable.
            unsafe { _mm_loadl_epi64(data.add(i as u32 as usize).cast()) }
        };
        // Two lanes' windows of one frame (`h` its byte indices).
        let pair = |h: __m128i, first: bool| -> __m128i {
            if first {
                _mm_unpacklo_epi64(ld(_mm_cvtsi128_si32(h)), ld(_mm_extract_epi32::<1>(h)))
            } else {
                _mm_unpacklo_epi64(ld(_mm_extract_epi32::<2>(h)), ld(_mm_extract_epi32::<3>(h)))
            }
        };
        // Eight loads (four when both frames are one): gathers are slow
        // on CPUs with the gather data sampling mitigation.
        let a = _mm256_castsi256_si128(at);
        let (p, q) = if MODE == ONE {
            // One frame in both halves: the high half's windows are the
            // low half's.
            (
                _mm256_broadcastsi128_si256(pair(a, true)),
                _mm256_broadcastsi128_si256(pair(a, false)),
            )
        } else {
            let b = _mm256_extracti128_si256::<1>(at);
            (
                half_pair(pair(a, true), pair(b, true)),
                half_pair(pair(a, false), pair(b, false)),
            )
        };
        (_mm256_srlv_epi64(p, sp), _mm256_srlv_epi64(q, sq))
    };
    // Low 32 bits of each 64-bit window: [a0 a1 a2 a3 | b0 b1 b2 b3].
    let low = |(p, q): (__m256i, __m256i)| -> __m256i {
        let s = _mm256_shuffle_ps::<0b10_00_10_00>(_mm256_castsi256_ps(p), _mm256_castsi256_ps(q));
        _mm256_castps_si256(s)
    };
    // The windows shifted right by per-lane counts.
    let shifted = |(p, q): (__m256i, __m256i), sh: __m256i| -> __m256i {
        let (sp, sq) = widened(sh);
        low((_mm256_srlv_epi64(p, sp), _mm256_srlv_epi64(q, sq)))
    };
    let w0 = windows(pos);
    // The smallest-three index follows the three codes. A lane above
    // ONE_WINDOW_BITS does not fit one window: a second one starts at z.
    let (code2, idx) = if wide {
        let w1 = windows(_mm256_add_epi32(pos, k01));
        (low(w1), has_idx.then(|| shifted(w1, k[2])))
    } else {
        (shifted(w0, k01), has_idx.then(|| shifted(w0, k012)))
    };
    let codes = [low(w0), shifted(w0, k[0]), code2];
    let idx = match idx {
        // A mixed track's drop-W lanes rebuild with index 3 (w).
        Some(i) if T == TRACK_MIXED => {
            // SAFETY: the table row is 8 readable `u32`.
            let dw = unsafe { _mm256_loadu_si256(ANIMATED[!s3 as usize & 15].as_ptr().cast()) };
            _mm256_and_si256(_mm256_or_si256(i, dw), _mm256_set1_epi32(3))
        }
        Some(i) => _mm256_and_si256(i, _mm256_set1_epi32(3)),
        None => _mm256_setzero_si256(),
    };

    // Dequantization, in the portable `dequant_params` and `dequant` order.
    let smin = [
        _mm256_and_si256(d0, byte),
        _mm256_and_si256(_mm256_srli_epi32::<16>(d0), byte),
        _mm256_and_si256(d1, byte),
    ];
    let sext = [
        _mm256_and_si256(_mm256_srli_epi32::<8>(d0), byte),
        _mm256_srli_epi32::<24>(d0),
        _mm256_and_si256(_mm256_srli_epi32::<8>(d1), byte),
    ];
    let trend = [
        _mm256_srai_epi32::<24>(d1),
        _mm256_srai_epi32::<24>(_mm256_slli_epi32::<24>(d2)),
        _mm256_srai_epi32::<24>(_mm256_slli_epi32::<16>(d2)),
    ];
    let curve = [
        _mm256_srai_epi32::<24>(_mm256_slli_epi32::<8>(d2)),
        _mm256_srai_epi32::<24>(d2),
        _mm256_srai_epi32::<24>(_mm256_slli_epi32::<24>(d3)),
    ];
    let one = _mm256_set1_ps(1.0);
    let both = |x: f32x4| -> __m256 {
        let h: __m128 = bytemuck::cast(x);
        _mm256_setr_m128(h, h)
    };
    let mut v = [_mm256_setzero_ps(); 3];
    for (c, v) in v.iter_mut().enumerate() {
        let (min, unit) = (both(cv[2 * c]), both(cv[2 * c + 1]));
        // The code mask, and 1 / (2^rate − 1) (0 for rate 0) from a table:
        // the same correctly rounded quotients as the portable division,
        // without occupying the divider (three divisions per track would
        // be a sizeable share of the divider's work per pose, and the
        // square roots of `w` and of the nlerp also need it).
        let code_mask = _mm256_sub_epi32(
            _mm256_sllv_epi32(_mm256_set1_epi32(1), k[c]),
            _mm256_set1_epi32(1),
        );
        let inv = inv_max_code(k[c], high);
        // As `ComponentDecode::value`, in the same order.
        let step = _mm256_mul_ps(_mm256_cvtepi32_ps(sext[c]), inv);
        let q = _mm256_cvtepi32_ps(_mm256_and_si256(codes[c], code_mask));
        let u = _mm256_add_ps(
            _mm256_add_ps(
                _mm256_add_ps(_mm256_cvtepi32_ps(smin[c]), _mm256_mul_ps(step, q)),
                _mm256_mul_ps(_mm256_cvtepi32_ps(trend[c]), frames.tl),
            ),
            _mm256_mul_ps(_mm256_cvtepi32_ps(curve[c]), frames.tl2),
        );
        *v = _mm256_add_ps(min, _mm256_mul_ps(unit, u));
    }
    let [x, y, z] = v;
    let (x, y, z, w) = if ROT {
        // The largest component: √max(1 − (x² + y² + z²), 0).
        let ss = _mm256_add_ps(
            _mm256_add_ps(_mm256_mul_ps(x, x), _mm256_mul_ps(y, y)),
            _mm256_mul_ps(z, z),
        );
        let big = _mm256_sqrt_ps(_mm256_max_ps(_mm256_sub_ps(one, ss), _mm256_setzero_ps()));
        let anim = _mm256_castsi256_ps(anim);
        if T != TRACK_DROP_W {
            // As the portable `rebuild`: the kept components around the
            // dropped one, the clip constants in the constant lanes.
            let is = |k: i32| _mm256_castsi256_ps(_mm256_cmpeq_epi32(idx, _mm256_set1_epi32(k)));
            let (i0, i1, i2, i3) = (is(0), is(1), is(2), is(3));
            let pick = |c: __m256, v: __m256| _mm256_blendv_ps(c, v, anim);
            (
                pick(both(cv[0]), _mm256_blendv_ps(x, big, i0)),
                pick(
                    both(cv[2]),
                    _mm256_blendv_ps(_mm256_blendv_ps(y, big, i1), x, i0),
                ),
                pick(
                    both(cv[4]),
                    _mm256_blendv_ps(_mm256_blendv_ps(y, big, i2), z, i3),
                ),
                pick(both(cv[6]), _mm256_blendv_ps(z, big, i3)),
            )
        } else {
            // Drop-W: constant lanes decode x, y, z exactly to their clip
            // constant, so only w needs the select.
            (x, y, z, _mm256_blendv_ps(both(cv[6]), big, anim))
        }
    } else {
        (x, y, z, _mm256_setzero_ps())
    };
    Some([x, y, z, w])
}

#[cfg(test)]
mod tests {
    //! The AVX2 decoder against the portable one, bit for bit, on random
    //! containers (both are called directly: sampling runs only one).
    extern crate alloc;

    use alloc::vec;
    use alloc::vec::Vec;

    use proptest::prelude::*;

    use super::*;
    use crate::compressed::writer::{BlockTrack, Header, LaneSegment, Writer};
    use crate::compressed::{Defaults, RotationFormat, RAW_BITS};
    use crate::math::{Quat, Transform, Vec3};
    use crate::soa::soa_count;

    /// SplitMix64.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
        fn unit(&mut self) -> f32 {
            (self.next() >> 40) as f32 / (1u64 << 24) as f32
        }
    }

    /// A random valid container, drop-W, smallest-three or per-lane (kinds,
    /// clip constants, lane formats, ranges, trends and rates up to 23
    /// bits, sometimes verbatim lanes; random bits) and a random rest pose.
    fn container(rng: &mut Rng) -> (Vec<u8>, Vec<SoaTransform>) {
        let joints = 1 + rng.below(24) as usize;
        let blocks = soa_count(joints);
        let frames = 1 + rng.below(60) as usize;
        let segment_frames = 1 + rng.below(20) as usize;
        let format = match rng.below(3) {
            0 => RotationFormat::DropW,
            1 => RotationFormat::SmallestThree,
            _ => RotationFormat::PerLane,
        };
        let mut tracks = vec![BlockTrack::Default; 3 * blocks];
        let mut lane_count = 0;
        for (i, t) in tracks.iter_mut().enumerate() {
            if rng.below(5) == 0 {
                continue;
            }
            let lanes = (joints - (i / 3) * 4).min(4);
            let mask = rng.below(1 << lanes) as u8;
            let rot = i % 3 == 1;
            let identity = if i % 3 == 2 { 1.0 } else { 0.0 };
            let mut mins = [[identity; 4]; 3];
            let mut units = [[0.0f32; 4]; 3];
            for l in 0..lanes {
                let animated = mask & (1 << l) != 0;
                for c in 0..3 {
                    if rot {
                        mins[c][l] = -0.7 + 0.4 * rng.unit();
                        if animated {
                            units[c][l] = 0.004 * rng.unit();
                        }
                    } else {
                        mins[c][l] = 20.0 * rng.unit() - 10.0;
                        if animated {
                            units[c][l] = 0.1 * rng.unit();
                        }
                    }
                }
            }
            lane_count += mask.count_ones() as usize;
            *t = BlockTrack::Stored {
                animated: mask,
                min: mins,
                unit: units,
                w: [1.0; 4],
                // Per-lane clips: every mix of formats.
                smallest_three: rng.below(16) as u8,
            };
        }
        let segments = frames.div_ceil(segment_frames);
        let mut lanes = vec![LaneSegment::default(); segments * lane_count];
        for lane in &mut lanes {
            for c in 0..3 {
                let smin = rng.below(256) as u8;
                lane.range[2 * c] = smin;
                lane.range[2 * c + 1] = rng.below(256 - u64::from(smin)) as u8;
                lane.trend[c] = rng.next() as i8;
                lane.curve[c] = rng.next() as i8;
            }
            // Mostly the one-window rates, sometimes the wider ones;
            // random component drops on lanes of at least 1 bit.
            lane.rate = if rng.below(64) == 0 {
                RAW_BITS
            } else if rng.below(8) == 0 {
                rng.below(24) as u8
            } else {
                rng.below(u64::from(ONE_WINDOW_BITS) + 1) as u8
            };
            lane.drops = if lane.rate == 0 || lane.rate == RAW_BITS {
                0
            } else {
                rng.below(8) as u8
            };
        }
        let defaults = if rng.below(2) == 0 {
            Defaults::Identity
        } else {
            Defaults::RestPose
        };
        let header = Header {
            sample_rate: 30.0,
            joint_count: joints,
            frame_count: frames,
            segment_frames,
            rotation: format,
            defaults,
            name: "random",
        };
        let writer = Writer::new(header, &tracks, &lanes).unwrap();
        // 16-byte aligned storage; random codes.
        let mut words = vec![0u128; writer.size() / 16];
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut words);
        // Verbatim lanes hold a valid value (validation checks them).
        let codes = |s: usize, _, k: usize| {
            if lanes[s * lane_count + k].rate == RAW_BITS {
                [rng.unit() - 0.5, 0.5, -0.5, 0.5].map(f32::to_bits)
            } else {
                [0; 4].map(|_| rng.next() as u32)
            }
        };
        writer.write(codes, bytes).unwrap();
        let mut rest = vec![SoaTransform::IDENTITY; blocks];
        for j in 0..joints {
            let q = Quat::new(rng.unit(), rng.unit(), rng.unit(), 1.0).normalize();
            let t = Transform {
                translation: Vec3::new(rng.unit(), rng.unit(), rng.unit()),
                rotation: q,
                scale: Vec3::new(1.0 + rng.unit(), 1.0, 1.0),
            };
            crate::soa::set_joint(&mut rest, j, &t).unwrap();
        }
        (bytemuck::cast_slice(&words).to_vec(), rest)
    }

    fn same_bits(a: &[SoaTransform], b: &[SoaTransform]) -> bool {
        let (a, b): (&[f32], &[f32]) = (bytemuck::cast_slice(a), bytemuck::cast_slice(b));
        a.iter()
            .zip(b)
            .all(|(x, y)| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn avx2_equals_portable_bit_for_bit(seed in any::<u64>()) {
            if !crate::cpu::avx2_fma() {
                return Ok(());
            }
            let mut rng = Rng(seed);
            let (words, rest) = container(&mut rng);
            // Realign: `container` returned a copy of the aligned words.
            let mut aligned = vec![0u128; words.len() / 16];
            bytemuck::cast_slice_mut::<u128, u8>(&mut aligned).copy_from_slice(&words);
            let bytes: &[u8] = bytemuck::cast_slice(&aligned);
            let clip = CompressedClip::from_bytes(bytes).unwrap();
            let rest = match clip.defaults() {
                Defaults::RestPose => Some(&rest[..]),
                Defaults::Identity => None,
            };
            let n = clip.soa_count();
            for _ in 0..8 {
                let i0 = rng.below(clip.frame_count() as u64) as usize;
                let i1 = (i0 + rng.below(2) as usize).min(clip.frame_count() - 1);
                let alpha = rng.unit();
                let mut fast = vec![SoaTransform::IDENTITY; n];
                let mut portable = vec![SoaTransform::IDENTITY; n];
                let at = [clip.frame_at(i0), clip.frame_at(i1)];
                prop_assert!(decode_blend(&clip, &at, alpha, rest, &mut fast));
                clip.decode_blend_as(&at, alpha, rest, &mut portable);
                prop_assert!(same_bits(&fast, &portable), "frames {i0}, {i1}, alpha {alpha}");
            }
        }

        /// The playback cache's slot writes: the AVX2 decoder's equal the
        /// portable decoder's bit for bit, for a pair of frames (any two,
        /// as a seek decodes them) and for one frame, and neither writes
        /// past the clip's slot size.
        #[test]
        fn avx2_slot_writes_equal_portable_bit_for_bit(seed in any::<u64>()) {
            if !crate::cpu::avx2_fma() {
                return Ok(());
            }
            let mut rng = Rng(seed);
            let (words, _) = container(&mut rng);
            let mut aligned = vec![0u128; words.len() / 16];
            bytemuck::cast_slice_mut::<u128, u8>(&mut aligned).copy_from_slice(&words);
            let bytes: &[u8] = bytemuck::cast_slice(&aligned);
            let clip = CompressedClip::from_bytes(bytes).unwrap();
            let v = clip.slot_vectors;
            let frames = clip.frame_count() as u64;
            // Each slot is followed by sentinel vectors, which neither
            // decoder may touch.
            let sentinel: Vec<f32x4> =
                (0..v + 4).map(|i| f32x4::splat(7.0 + i as f32)).collect();
            let same = |a: &[f32x4], b: &[f32x4]| {
                let (a, b): (&[u32], &[u32]) = (bytemuck::cast_slice(a), bytemuck::cast_slice(b));
                a == b
            };
            for _ in 0..8 {
                let (i0, i1) = (rng.below(frames) as usize, rng.below(frames) as usize);
                let at = [clip.frame_at(i0), clip.frame_at(i1)];
                let (mut fa, mut fb) = (sentinel.clone(), sentinel.clone());
                let (mut pa, mut pb) = (sentinel.clone(), sentinel.clone());
                prop_assert!(decode_slots::<true>(&clip, &at, &mut fa[..v], &mut fb[..v]));
                clip.decode_into_as::<true>(at, &mut pa[..v], &mut pb[..v]);
                prop_assert!(same(&fa, &pa) && same(&fb, &pb), "pair {i0}, {i1}");
                prop_assert!(same(&fa[v..], &sentinel[v..]) && same(&fb[v..], &sentinel[v..]));
                let (mut fast, mut portable) = (sentinel.clone(), sentinel.clone());
                prop_assert!(decode_slots::<false>(&clip, &at, &mut fast[..v], &mut []));
                clip.decode_into_as::<false>([at[0], at[0]], &mut portable[..v], &mut []);
                prop_assert!(same(&fast, &portable), "frame {i0}");
                prop_assert!(same(&fast[v..], &sentinel[v..]));
            }
        }

        /// On random containers (every rotation format, per-lane mixes,
        /// verbatim lanes, both defaults), sampling through a playback
        /// cache gives the uncached sampler's bits: forward at twice the
        /// clip's rate (each key frame decoded once), backwards, and at
        /// random times (seeks, exact key times, past either end).
        #[test]
        fn cached_equals_uncached_on_random_containers(seed in any::<u64>()) {
            use crate::clip::TimeMode;
            use crate::compressed::PlaybackCache;
            let mut rng = Rng(seed);
            let (words, rest) = container(&mut rng);
            let mut aligned = vec![0u128; words.len() / 16];
            bytemuck::cast_slice_mut::<u128, u8>(&mut aligned).copy_from_slice(&words);
            let bytes: &[u8] = bytemuck::cast_slice(&aligned);
            let clip = CompressedClip::from_bytes(bytes).unwrap();
            let n = clip.soa_count();
            let frames = clip.frame_count();
            let rate = clip.sample_rate();
            let ticks = 2 * frames - 1;
            let forward: Vec<_> = (0..ticks)
                .map(|i| (i as f32 * 0.5 / rate, TimeMode::Clamp))
                .collect();
            let backward: Vec<_> = forward.iter().rev().copied().collect();
            let d = clip.duration();
            let random: Vec<_> = (0..24)
                .map(|i| match i % 4 {
                    0 => (rng.below(frames as u64) as f32 / rate, TimeMode::Clamp),
                    1 => ((rng.unit() * 3.0 - 1.0) * d, TimeMode::Loop),
                    _ => ((rng.unit() * 1.2 - 0.1) * d, TimeMode::Clamp),
                })
                .collect();
            // The clip's own sizes (the least, and three slots) and the
            // bound for any clip, each buffer starting as NaN.
            prop_assert!(clip.cache_blocks() <= PlaybackCache::blocks_for(n));
            prop_assert!(clip.min_cache_blocks() <= clip.cache_blocks());
            let nan = {
                let mut b = SoaTransform::IDENTITY;
                bytemuck::cast_slice_mut::<_, f32>(core::slice::from_mut(&mut b)).fill(f32::NAN);
                b
            };
            for blocks in [clip.min_cache_blocks(), clip.cache_blocks(), PlaybackCache::blocks_for(n)] {
                let mut buf = vec![nan; blocks];
                let mut cache = PlaybackCache::new(&mut buf);
                let mut want = vec![SoaTransform::IDENTITY; n];
                let mut got = vec![SoaTransform::IDENTITY; n];
                for (run, times) in [&forward, &backward, &random].into_iter().enumerate() {
                    for &(t, mode) in times {
                        clip.sample_with_rest(t, mode, &rest, &mut want).unwrap();
                        clip.sample_cached(t, mode, &rest, &mut cache, &mut got).unwrap();
                        prop_assert!(
                            same_bits(&got, &want),
                            "run {run}, t = {t} ({mode:?}), {blocks} blocks"
                        );
                    }
                    if run == 0 {
                        prop_assert_eq!(cache.frames_decoded(), frames as u64);
                    }
                }
                if blocks > 0 && blocks == clip.min_cache_blocks() {
                    let mut short = vec![nan; blocks - 1];
                    let e = clip.sample_cached(0.0, TimeMode::Clamp, &rest, &mut PlaybackCache::new(&mut short), &mut got);
                    prop_assert!(matches!(e, Err(crate::Error::BadLength { .. })), "{e:?}");
                }
            }
        }

        #[test]
        fn edited_trusted_views_decode_without_reading_out_of_bounds(seed in any::<u64>()) {
            let mut rng = Rng(seed);
            let (words, rest) = container(&mut rng);
            let mut aligned = vec![0u128; words.len() / 16];
            let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut aligned);
            bytes.copy_from_slice(&words);
            // Garbage after the header, kinds and clip constants: what a C
            // caller could leave behind a handle it loaded once.
            let from = bytes.len() / 3;
            for _ in 0..16 {
                let at = from + rng.below((bytes.len() - from) as u64) as usize;
                bytes[at] = rng.next() as u8;
            }
            let bytes: &[u8] = bytemuck::cast_slice(&aligned);
            if let Ok(clip) = CompressedClip::from_validated_bytes(bytes) {
                let mut out = vec![SoaTransform::IDENTITY; clip.soa_count()];
                for _ in 0..4 {
                    let t = rng.unit() * clip.duration();
                    let _ = clip.sample_with_rest(t, crate::clip::TimeMode::Clamp, &rest, &mut out);
                }
            }
        }
    }
}
