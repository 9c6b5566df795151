//! The playback cache: the two key frames a sample interpolates, kept
//! decoded between calls, so that sequential playback decodes each key
//! frame once.
//!
//! A sample between frames `i` and `i + 1` needs both decoded; the next
//! call at a 60 Hz tick on a 30 Hz clip usually needs the same two, and
//! the one after that shares frame `i + 1`. [`CompressedClip::sample_cached`]
//! decodes only the frames its [`PlaybackCache`] does not hold and
//! interpolates the held values with the uncached sampler's own
//! arithmetic, so its output has the same bits as
//! [`CompressedClip::sample_with_rest`]. A seek costs one plain decode of
//! two frames: there is no sequential context to rebuild (the format's
//! frames are addressed directly).
//!
//! The slots are written by the decoder the uncached sampler uses: the
//! AVX2 one on x86-64 CPUs that have it, the portable one elsewhere (the
//! same bits). Both decoders share the work of a pair's two frames (the
//! AVX2 one holds both in one register; both read each segment's metadata
//! once), so a frame alone costs most of a pair. A cache with a third slot
//! therefore decodes ahead: when playback moves on to a frame it does not
//! hold, it decodes that frame together with the next one in the
//! direction of play, and sequential playback runs the decoder once per
//! two key frames.

use wide::f32x4;

use super::decode::{
    next_joints, quat_vectors, scatter, vec_vectors, Blend, FrameAt, ROTATION_AT, SCALE_AT,
    TRANSLATION_AT,
};
use super::format::{
    track_param_floats, CONST_ROT_PARAM_FLOATS, CONST_VEC_PARAM_FLOATS, KIND_DEFAULT,
    LANE_META_BYTES, ROT_PARAM_FLOATS, VEC_PARAM_FLOATS,
};
use super::{CompressedClip, Defaults};
use crate::clip::{Bracket, TimeMode};
use crate::error::Error;
use crate::soa::{check_len, SoaQuat, SoaTransform, SoaVec3, LANES};

/// No frame in a slot.
const EMPTY: usize = usize::MAX;

/// Slots of a cache whose buffer holds [`CompressedClip::cache_blocks`]
/// blocks: the two frames a sample interpolates and one decoded ahead.
const SLOTS: usize = 3;

/// `f32x4` vectors in a [`SoaTransform`] block.
pub(super) const BLOCK_VECTORS: usize =
    core::mem::size_of::<SoaTransform>() / core::mem::size_of::<f32x4>();

/// `f32x4` vectors of one frame of a translation or scale track (x, y, z),
/// as a slot holds it; a constant track's constants are the same.
pub(super) const VEC_VECTORS: usize = CONST_VEC_PARAM_FLOATS / LANES;

/// [`VEC_VECTORS`] of a rotation track (x, y, z, w).
pub(super) const ROT_VECTORS: usize = CONST_ROT_PARAM_FLOATS / LANES;

/// `f32x4` vectors of one slot for a clip with track kinds `kinds`: a
/// slot holds the tracks with an animated lane only, packed in stream
/// order, x, y, z (and w) each; constant tracks are read from the clip's
/// constants, which every instance playing the clip shares, and default
/// ones from the rest pose. On pab's walk (12 of 50 stored tracks
/// animated) a slot is 720 bytes where a pose is 2,720.
pub(super) fn slot_vectors(kinds: &[u8]) -> usize {
    kinds
        .iter()
        .enumerate()
        .filter(|(_, &k)| k >> 4 != 0)
        .map(|(t, _)| if t % 3 == 1 { ROT_VECTORS } else { VEC_VECTORS })
        .sum()
}

/// Decoded key frames of one compressed clip, in caller-owned memory:
/// three slots ([`CompressedClip::cache_blocks`] blocks), so that
/// sequential playback decodes two key frames in each pass of the
/// decoder, or at least two ([`CompressedClip::min_cache_blocks`]), which
/// decode one frame at a time. A slot holds one frame of the clip's
/// tracks with an animated lane, packed: constant tracks are read from the
/// clip, which every instance shares.
///
/// One cache per playing instance. It remembers which clip filled it (the
/// container's address and size) and starts over when handed another, so
/// a cache moved between clips gives correct, merely uncached, results;
/// call [`PlaybackCache::clear`] after loading other bytes into the same
/// memory.
#[derive(Debug)]
pub struct PlaybackCache<'m> {
    slots: &'m mut [SoaTransform],
    frames: [usize; SLOTS],
    clip: (usize, usize),
    decoded: u64,
}

/// What a [`PlaybackCache`] remembers besides its buffer's contents, for
/// callers that keep buffers and state apart between frames (a crowd's
/// per-character records, the C ABI): [`PlaybackCache::state`] after
/// sampling, [`PlaybackCache::resume`] before the next sample.
///
/// It records the buffer's address and length, so resuming over other
/// memory starts empty; resuming over the same memory after something
/// else wrote it gives wrong poses (never out-of-bounds reads), as a
/// cache does after [`PlaybackCache::clear`] is forgotten.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlaybackState {
    frames: [u64; SLOTS],
    clip: [u64; 2],
    buffer: [u64; 2],
    decoded: u64,
}

impl PlaybackState {
    /// No frame held: what a new cache remembers.
    pub const EMPTY: PlaybackState = PlaybackState {
        frames: [u64::MAX; SLOTS],
        clip: [0; 2],
        buffer: [0; 2],
        decoded: 0,
    };
}

impl PlaybackState {
    /// Words in [`PlaybackState::to_words`].
    pub const WORDS: usize = 8;

    /// The state as plain words, all zeros for [`PlaybackState::EMPTY`]
    /// (so zeroed memory is an empty state): held frames stored as their
    /// index plus one, then the clip's and the buffer's address and
    /// length, then the frames decoded.
    #[must_use]
    pub fn to_words(&self) -> [u64; Self::WORDS] {
        let f = |v: u64| v.wrapping_add(1);
        [
            f(self.frames[0]),
            f(self.frames[1]),
            f(self.frames[2]),
            self.clip[0],
            self.clip[1],
            self.buffer[0],
            self.buffer[1],
            self.decoded,
        ]
    }

    /// The state [`PlaybackState::to_words`] wrote. Any words are a state:
    /// wrong words only make the next sample decode again or, over the
    /// same buffer, give wrong poses.
    #[must_use]
    pub fn from_words(w: &[u64; Self::WORDS]) -> Self {
        let f = |v: u64| v.wrapping_sub(1);
        PlaybackState {
            frames: [f(w[0]), f(w[1]), f(w[2])],
            clip: [w[3], w[4]],
            buffer: [w[5], w[6]],
            decoded: w[7],
        }
    }
}

impl Default for PlaybackState {
    fn default() -> Self {
        PlaybackState::EMPTY
    }
}

/// A slot's frame index from its recorded form (`u64::MAX` is none, as is
/// any index past `usize`, which no frame has).
fn frame_from(v: u64) -> usize {
    usize::try_from(v).unwrap_or(EMPTY)
}

/// A slot's recorded form of frame index `f` (none is `u64::MAX` on every
/// target).
fn frame_to(f: usize) -> u64 {
    if f == EMPTY {
        u64::MAX
    } else {
        f as u64
    }
}

impl<'m> PlaybackCache<'m> {
    /// A cache over `buffer` that remembers `state`, as
    /// [`PlaybackCache::state`] returned it for this same buffer; empty
    /// (its frame count kept) when `state` was taken over other memory.
    #[must_use]
    pub fn resume(buffer: &'m mut [SoaTransform], state: &PlaybackState) -> Self {
        let here = [buffer.as_ptr() as u64, buffer.len() as u64];
        let mut cache = PlaybackCache::new(buffer);
        cache.decoded = state.decoded;
        if state.buffer == here {
            cache.frames = state.frames.map(frame_from);
            cache.clip = (state.clip[0] as usize, state.clip[1] as usize);
        }
        cache
    }

    /// What this cache remembers, for [`PlaybackCache::resume`].
    #[must_use]
    pub fn state(&self) -> PlaybackState {
        PlaybackState {
            frames: self.frames.map(frame_to),
            clip: [self.clip.0 as u64, self.clip.1 as u64],
            buffer: [self.slots.as_ptr() as u64, self.slots.len() as u64],
            decoded: self.decoded,
        }
    }

    /// Blocks of [`SoaTransform`] that make a cache decoding ahead for any
    /// clip of `soa_count` blocks per pose (three poses, what a clip whose
    /// every track is animated needs); [`CompressedClip::cache_blocks`] is
    /// what one clip needs.
    #[inline]
    #[must_use]
    pub const fn blocks_for(soa_count: usize) -> usize {
        SLOTS * soa_count
    }

    /// Blocks that make a cache of two slots for any clip of `soa_count`
    /// blocks per pose (two poses); [`CompressedClip::min_cache_blocks`]
    /// is what one clip needs.
    #[inline]
    #[must_use]
    pub const fn min_blocks_for(soa_count: usize) -> usize {
        2 * soa_count
    }

    /// An empty cache over `buffer` ([`CompressedClip::cache_blocks`] or
    /// at least [`CompressedClip::min_cache_blocks`] of the clips it will
    /// serve; [`PlaybackCache::blocks_for`] fits any clip of a skeleton;
    /// [`CompressedClip::sample_cached`] checks).
    #[must_use]
    pub fn new(buffer: &'m mut [SoaTransform]) -> Self {
        PlaybackCache {
            slots: buffer,
            frames: [EMPTY; SLOTS],
            clip: (0, 0),
            decoded: 0,
        }
    }

    /// Forgets the held frames (the next sample decodes both).
    pub fn clear(&mut self) {
        self.frames = [EMPTY; SLOTS];
    }

    /// Key frames decoded through this cache so far (each frame the
    /// samples needed and it did not hold counts once).
    #[inline]
    #[must_use]
    pub fn frames_decoded(&self) -> u64 {
        self.decoded
    }

    /// Slots this cache uses with a clip of `v` vectors per slot: three
    /// when the buffer holds three, else two.
    fn slot_count(&self, v: usize) -> usize {
        (self.slots.len() * BLOCK_VECTORS)
            .checked_div(v)
            .map_or(2, |k| k.clamp(2, SLOTS))
    }

    /// The buffer as `f32x4` vectors, where slot `k` of a clip of `v`
    /// vectors per slot is `k * v..(k + 1) * v`.
    fn vectors(&mut self) -> &mut [f32x4] {
        bytemuck::cast_slice_mut(self.slots)
    }

    /// The slot of the first `count` holding frame `f`.
    fn held(&self, f: usize, count: usize) -> Option<usize> {
        self.frames.iter().take(count).position(|&h| h == f)
    }

    /// The slot holding frame `f` of `clip`, decoding it into a slot other
    /// than `keep` (the slot of the frame the sample also needs) when no
    /// slot holds it. With three slots and `ahead` (the next frame in the
    /// direction of play) not held either, both are decoded in one pass,
    /// into the two slots other than `keep`.
    fn fill(
        &mut self,
        clip: &CompressedClip<'_>,
        f: usize,
        ahead: Option<usize>,
        keep: Option<usize>,
        count: usize,
    ) -> usize {
        if let Some(k) = self.held(f, count) {
            return k;
        }
        let v = clip.slot_vectors;
        if let Some(g) = ahead.filter(|&g| count == SLOTS && self.held(g, count).is_none()) {
            let (s, t) = match keep {
                Some(0) => (1, 2),
                Some(1) => (0, 2),
                _ => (0, 1),
            };
            self.decode_pair(clip, [f, g], (s, t));
            return s;
        }
        // One frame into the slot other than `keep` that is empty or holds
        // the frame farthest from `f` (the least likely to be needed next).
        let k = (0..count)
            .filter(|&k| Some(k) != keep)
            .max_by_key(|&k| self.frames[k].abs_diff(f))
            .unwrap_or(0);
        if let Some(slot) = self.vectors().get_mut(k * v..(k + 1) * v) {
            clip.decode_into(clip.frame_at(f), slot);
            self.frames[k] = f;
            self.decoded += 1;
        }
        k
    }

    /// Decodes frames `f` of `clip` into slots `s` and `t` (`s < t`) in one
    /// pass of the pair decoder.
    fn decode_pair(&mut self, clip: &CompressedClip<'_>, f: [usize; 2], (s, t): (usize, usize)) {
        let v = clip.slot_vectors;
        if let Some((a, b)) = slot_pair_mut(self.vectors(), v, s, t) {
            clip.decode_pair_into(f.map(|f| clip.frame_at(f)), a, b);
            [self.frames[s], self.frames[t]] = f;
            self.decoded += 2;
        }
    }
}

/// Slots `s` and `t` (`s < t`) of `v` vectors each of `slots`.
fn slot_pair_mut(
    slots: &mut [f32x4],
    v: usize,
    s: usize,
    t: usize,
) -> Option<(&mut [f32x4], &mut [f32x4])> {
    let (lo, hi) = slots.split_at_mut_checked(t * v)?;
    Some((lo.get_mut(s * v..(s + 1) * v)?, hi.get_mut(..v)?))
}

impl CompressedClip<'_> {
    /// Blocks of [`SoaTransform`] a [`PlaybackCache`] for this clip takes
    /// to decode ahead: three slots, each the tracks with an animated lane
    /// of one decoded frame (on pab's walk, 14 blocks where three poses
    /// are 51). [`PlaybackCache::blocks_for`] is enough for any clip of
    /// the skeleton.
    #[must_use]
    pub fn cache_blocks(&self) -> usize {
        (SLOTS * self.slot_vectors).div_ceil(BLOCK_VECTORS)
    }

    /// The fewest blocks a [`PlaybackCache`] for this clip takes: two
    /// slots, which hold the bracketing frames and decode one frame at a
    /// time.
    #[must_use]
    pub fn min_cache_blocks(&self) -> usize {
        (2 * self.slot_vectors).div_ceil(BLOCK_VECTORS)
    }

    /// Samples at time `t` like [`CompressedClip::sample_with_rest`] (same
    /// output, bit for bit), decoding only the key frames `cache` does not
    /// already hold.
    ///
    /// `rest` is only read when the clip was compressed with
    /// [`Defaults::RestPose`] (pass `&[]` otherwise). Nothing is allocated.
    ///
    /// # Errors
    /// [`Error::BadLength`] for `out` (not `soa_count()` blocks), for a
    /// `rest` the clip needs, or for a cache buffer below
    /// [`CompressedClip::min_cache_blocks`]; [`Error::NonFinite`] for a
    /// non-finite `t`. On error neither `out` nor the cache changes.
    pub fn sample_cached(
        &self,
        t: f32,
        mode: TimeMode,
        rest: &[SoaTransform],
        cache: &mut PlaybackCache<'_>,
        out: &mut [SoaTransform],
    ) -> Result<(), Error> {
        let n = self.soa_count();
        check_len("output", n, out.len())?;
        let rest = match self.defaults {
            Defaults::RestPose => {
                check_len("rest pose", n, rest.len())?;
                Some(rest)
            }
            Defaults::Identity => None,
        };
        if cache.slots.len() < self.min_cache_blocks() {
            return Err(Error::BadLength {
                buffer: "playback cache",
                expected: self.min_cache_blocks(),
                actual: cache.slots.len(),
            });
        }
        let Bracket {
            before,
            after,
            alpha,
        } = self.locate(t, mode)?;
        let id = (self.data.as_ptr() as usize, self.size_bytes());
        if cache.clip != id {
            cache.clip = id;
            cache.clear();
        }
        let v = self.slot_vectors;
        let count = cache.slot_count(v);
        let (a, b) = match (cache.held(before, count), cache.held(after, count)) {
            (Some(a), Some(b)) => (a, b),
            // Playing forward: `after` is new, and the frame after it next.
            (Some(a), None) => {
                let ahead = Some(after + 1).filter(|&g| g < self.frame_count);
                (a, cache.fill(self, after, ahead, Some(a), count))
            }
            // Playing backward: `before` is new, and the frame before it next.
            (None, Some(b)) => (
                cache.fill(self, before, before.checked_sub(1), Some(b), count),
                b,
            ),
            // A seek: both frames in one pass of the pair decoder.
            (None, None) if before != after => {
                cache.decode_pair(self, [before, after], (0, 1));
                cache.frames[2] = EMPTY;
                (0, 1)
            }
            (None, None) => {
                let a = cache.fill(self, before, None, None, count);
                (a, a)
            }
        };
        let slots = cache.vectors();
        let slot = |k: usize| slots.get(k * v..(k + 1) * v).unwrap_or(&[]);
        self.blend_frames(slot(a), slot(b), alpha, rest, out);
        Ok(())
    }

    /// Decodes frame `at` alone into `slot`: every animated track's value
    /// exactly as the pair decoder has it before interpolation, packed
    /// (see [`slot_vectors`]). On x86-64 CPUs with AVX2 the AVX2 decoder
    /// writes the slot (the same bits, see
    /// [`super::avx2::decode_slots`]), unless the `portable` feature is on.
    pub(super) fn decode_into(&self, at: FrameAt, slot: &mut [f32x4]) {
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        if crate::cpu::avx2_kernels()
            && super::avx2::decode_slots::<false>(self, &[at, at], slot, &mut [])
        {
            return;
        }
        self.decode_into_as::<false>([at, at], slot, &mut []);
    }

    /// [`Self::decode_into`] of two frames in one pass of the pair decoder.
    fn decode_pair_into(&self, at: [FrameAt; 2], a: &mut [f32x4], b: &mut [f32x4]) {
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        if crate::cpu::avx2_kernels() && super::avx2::decode_slots::<true>(self, &at, a, b) {
            return;
        }
        self.decode_into_as::<true>(at, a, b);
    }

    /// Frame `at[0]` into slot `a`, and with `TWO` frame `at[1]` into slot
    /// `b`, with the portable decoder whatever the CPU.
    pub(super) fn decode_into_as<const TWO: bool>(
        &self,
        at: [FrameAt; 2],
        a: &mut [f32x4],
        b: &mut [f32x4],
    ) {
        let ma = self.segment_meta(at[0].segment).unwrap_or(&[]);
        let mb = self.segment_meta(at[1].segment).unwrap_or(&[]);
        let same = at[0].segment == at[1].segment;
        let frames = [(at[0].first, at[0].local), (at[1].first, at[1].local)];
        let (mut m, mut oa, mut ob) = (0usize, 0u32, 0u32);
        let mut v = 0usize;
        self.walk_packed(|track, mask, cv| {
            let offsets = (&mut oa, &mut ob);
            let slots = (&mut *a, &mut *b);
            if track == 1 {
                let (qa, qb) =
                    self.track_frames_as::<true, TWO>((ma, mb), same, m, mask, offsets, frames, cv);
                put_frames::<ROT_VECTORS>(slots, &mut v, (&qa, &qb), TWO);
            } else {
                let (qa, qb) = self.track_frames_as::<false, TWO>(
                    (ma, mb),
                    same,
                    m,
                    mask,
                    offsets,
                    frames,
                    cv,
                );
                put_frames::<VEC_VECTORS>(slots, &mut v, (&qa, &qb), TWO);
            }
            m += LANE_META_BYTES * mask.count_ones() as usize;
        });
    }

    /// Interpolates two slots [`Self::decode_into`] filled, by `alpha`,
    /// into `out`, with the pair decoder's operations: default tracks from
    /// `rest` (or identity), constant tracks from the clip constants, the
    /// others lerped and nlerped from the slots.
    fn blend_frames(
        &self,
        a: &[f32x4],
        b: &[f32x4],
        alpha: f32,
        rest: Option<&[SoaTransform]>,
        out: &mut [SoaTransform],
    ) {
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        if crate::cpu::avx2_kernels() && super::avx2::blend_frames(self, a, b, alpha, rest, out) {
            return;
        }
        self.blend_frames_as(a, b, alpha, rest, out);
    }

    /// [`Self::blend_frames`] as the portable code, whatever the CPU.
    #[inline(always)]
    pub(super) fn blend_frames_as(
        &self,
        a: &[f32x4],
        b: &[f32x4],
        alpha: f32,
        rest: Option<&[SoaTransform]>,
        out: &mut [SoaTransform],
    ) {
        self.constant_pass(rest, out);
        let blend = Blend::new(alpha);
        // Cursors that shrink as the walk reads them, one length check per
        // read: the packed tracks' clip constants, the slots' frames (in
        // the walk's order) and the lanes' joints.
        let mut params = self.params.get(self.packed_at..).unwrap_or_default();
        let (mut a, mut b, mut dest) = (a, b, self.dest);
        let mut lanes = |kind: u8| next_joints(&mut dest, kind);
        for k in self.packed_kinds().chunks_exact(3) {
            // A translation or scale track, lerped and written to its
            // joints.
            macro_rules! vector {
                ($kind:expr, $at:expr) => {
                    if $kind != KIND_DEFAULT {
                        let Some(v) = vector_track($kind, &mut params, (&mut a, &mut b), &blend)
                        else {
                            return;
                        };
                        scatter::<{ $at }, 3>(out, &vec_vectors(&v), lanes($kind));
                    }
                };
            }
            vector!(k[0], TRANSLATION_AT);
            if k[1] != KIND_DEFAULT {
                let (Some(more), Some([ax, ay, az, aw]), Some([bx, by, bz, bw])) = (
                    params.get(ROT_PARAM_FLOATS / LANES..),
                    take::<ROT_VECTORS>(&mut a),
                    take::<ROT_VECTORS>(&mut b),
                ) else {
                    return;
                };
                params = more;
                let qa = SoaQuat {
                    x: ax,
                    y: ay,
                    z: az,
                    w: aw,
                };
                let qb = SoaQuat {
                    x: bx,
                    y: by,
                    z: bz,
                    w: bw,
                };
                let q = blend.nlerp(&qa, &qb);
                scatter::<ROTATION_AT, 4>(out, &quat_vectors(&q), lanes(k[1]));
            }
            vector!(k[2], SCALE_AT);
        }
    }

    /// Calls `f(track, lane mask, clip constants)` for every stored
    /// (non-default) track of the packed blocks in stream order
    /// (translation 0, rotation 1, scale 2), with the constants laid out as
    /// the decoders read them. Every such track has an animated lane.
    #[inline(always)]
    fn walk_packed(&self, mut f: impl FnMut(usize, u32, &[f32x4])) {
        let mut p = self.packed_at;
        for (i, &kind) in self.packed_kinds().iter().enumerate() {
            if kind == KIND_DEFAULT {
                continue;
            }
            let track = i % 3;
            let n = track_param_floats(track == 1, 1) / LANES;
            let cv = self.params.get(p..p + n).unwrap_or(&[]);
            p += n;
            f(track, u32::from(kind >> 4), cv);
        }
    }
}

/// Writes the first `N` components (x, y, z, then w) of frame a's value
/// `qa` at vector `*v` of slot `a` and, with `two`, of frame b's `qb` in
/// slot `b`, and moves `*v` past them (nothing is written where a slot is
/// shorter, which a slot of [`slot_vectors`] never is).
#[inline(always)]
pub(super) fn put_frames<const N: usize>(
    (a, b): (&mut [f32x4], &mut [f32x4]),
    v: &mut usize,
    (qa, qb): (&SoaQuat, &SoaQuat),
    two: bool,
) {
    let put = |slot: &mut [f32x4], q: &SoaQuat| {
        if let Some(d) = slot.get_mut(*v..*v + N) {
            d.copy_from_slice(&[q.x, q.y, q.z, q.w][..N]);
        }
    };
    put(a, qa);
    if two {
        put(b, qb);
    }
    *v += N;
}

/// The first `N` vectors of `cursor`, which moves past them (`None`,
/// the cursor unchanged, when it is shorter: the walks never let it be).
#[inline(always)]
fn take<const N: usize>(cursor: &mut &[f32x4]) -> Option<[f32x4; N]> {
    let (v, more) = cursor.split_first_chunk::<N>()?;
    *cursor = more;
    Some(*v)
}

/// The value of a stored translation or scale track of kind `kind` whose
/// constants start `params` and whose frames (when it has an animated
/// lane) start both slots; the cursors move past it. `None` when a cursor
/// is short, which the walk never lets happen.
#[inline(always)]
fn vector_track(
    kind: u8,
    params: &mut &[f32x4],
    (a, b): (&mut &[f32x4], &mut &[f32x4]),
    blend: &Blend,
) -> Option<SoaVec3> {
    if kind >> 4 == 0 {
        let [x, y, z] = take::<VEC_VECTORS>(params)?;
        return Some(SoaVec3 { x, y, z });
    }
    *params = params.get(VEC_PARAM_FLOATS / LANES..)?;
    let [ax, ay, az] = take::<VEC_VECTORS>(a)?;
    let [bx, by, bz] = take::<VEC_VECTORS>(b)?;
    Some(blend.lerp_vec(
        &SoaVec3 {
            x: ax,
            y: ay,
            z: az,
        },
        &SoaVec3 {
            x: bx,
            y: by,
            z: bz,
        },
    ))
}
