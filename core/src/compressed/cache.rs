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

use super::decode::{constant_value, xyz, Blend, FrameAt};
use super::format::{track_param_floats, KIND_DEFAULT, LANE_META_BYTES};
use super::{CompressedClip, Defaults};
use crate::clip::{Bracket, TimeMode};
use crate::error::Error;
use crate::soa::{check_len, SoaTransform, LANES};

/// No frame in a slot.
const EMPTY: usize = usize::MAX;

/// Slots of a cache whose buffer holds [`PlaybackCache::blocks_for`]
/// blocks: the two frames a sample interpolates and one decoded ahead.
const SLOTS: usize = 3;

/// Decoded key frames of one compressed clip, in caller-owned memory:
/// three poses ([`PlaybackCache::blocks_for`] blocks), so that sequential
/// playback decodes two key frames in each pass of the decoder, or at
/// least two ([`PlaybackCache::min_blocks_for`]), which decode one frame
/// at a time.
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

    /// Blocks of [`SoaTransform`] a cache decoding ahead needs for a clip
    /// of `soa_count` blocks per pose (three poses).
    #[inline]
    #[must_use]
    pub const fn blocks_for(soa_count: usize) -> usize {
        SLOTS * soa_count
    }

    /// The fewest blocks a cache takes for a clip of `soa_count` blocks
    /// per pose (two poses): it holds the bracketing frames and decodes
    /// one frame at a time.
    #[inline]
    #[must_use]
    pub const fn min_blocks_for(soa_count: usize) -> usize {
        2 * soa_count
    }

    /// An empty cache over `buffer` ([`PlaybackCache::blocks_for`] or at
    /// least [`PlaybackCache::min_blocks_for`]`(clip.soa_count())` blocks
    /// for the clips it will serve; [`CompressedClip::sample_cached`]
    /// checks).
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

    /// Slots this cache uses with a clip of `n` blocks per pose: three
    /// when the buffer holds three poses, else two.
    fn slot_count(&self, n: usize) -> usize {
        self.slots
            .len()
            .checked_div(n)
            .map_or(2, |k| k.clamp(2, SLOTS))
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
        let n = clip.soa_count();
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
        if let Some(slot) = self.slots.get_mut(k * n..(k + 1) * n) {
            clip.decode_into(clip.frame_at(f), slot);
            self.frames[k] = f;
            self.decoded += 1;
        }
        k
    }

    /// Decodes frames `f` of `clip` into slots `s` and `t` (`s < t`) in one
    /// pass of the pair decoder.
    fn decode_pair(&mut self, clip: &CompressedClip<'_>, f: [usize; 2], (s, t): (usize, usize)) {
        if let Some((a, b)) = slot_pair_mut(self.slots, clip.soa_count(), s, t) {
            clip.decode_pair_into(f.map(|f| clip.frame_at(f)), a, b);
            [self.frames[s], self.frames[t]] = f;
            self.decoded += 2;
        }
    }
}

/// Slots `s` and `t` (`s < t`) of `n` blocks each of `slots`.
fn slot_pair_mut(
    slots: &mut [SoaTransform],
    n: usize,
    s: usize,
    t: usize,
) -> Option<(&mut [SoaTransform], &mut [SoaTransform])> {
    let (lo, hi) = slots.split_at_mut_checked(t * n)?;
    Some((lo.get_mut(s * n..(s + 1) * n)?, hi.get_mut(..n)?))
}

impl CompressedClip<'_> {
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
    /// [`PlaybackCache::min_blocks_for`]`(soa_count())` blocks;
    /// [`Error::NonFinite`] for a non-finite `t`. On error neither `out`
    /// nor the cache changes.
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
        if cache.slots.len() < PlaybackCache::min_blocks_for(n) {
            return Err(Error::BadLength {
                buffer: "playback cache",
                expected: PlaybackCache::min_blocks_for(n),
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
        let count = cache.slot_count(n);
        if cache.frames.iter().all(|&f| f == EMPTY) {
            // A cache that holds no frame starts over: its slots get the
            // constant tracks once, and the decoders write only the
            // animated ones from then on.
            self.write_constants(cache.slots.get_mut(..count * n).unwrap_or(&mut []), n);
        }
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
        let slot = |k: usize| cache.slots.get(k * n..(k + 1) * n).unwrap_or(&[]);
        self.blend_frames(slot(a), slot(b), alpha, rest, out);
        Ok(())
    }

    /// Decodes frame `at` alone into `slot`: every animated track's value
    /// exactly as the pair decoder has it before interpolation (x, y, z for
    /// translations and scales). Default and constant tracks are left as
    /// they are: [`Self::blend_frames`] does not read the former, and
    /// [`Self::write_constants`] wrote the latter when the cache started.
    /// On x86-64 CPUs with AVX2 the AVX2 decoder writes the slot (the same
    /// bits, see [`super::avx2::decode_slots`]), unless the `portable`
    /// feature is on.
    pub(super) fn decode_into(&self, at: FrameAt, slot: &mut [SoaTransform]) {
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        if crate::cpu::avx2_kernels()
            && super::avx2::decode_slots::<false>(self, &[at, at], slot, &mut [])
        {
            return;
        }
        self.decode_into_as::<false>([at, at], slot, &mut []);
    }

    /// [`Self::decode_into`] of two frames in one pass of the pair decoder.
    fn decode_pair_into(&self, at: [FrameAt; 2], a: &mut [SoaTransform], b: &mut [SoaTransform]) {
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        if crate::cpu::avx2_kernels() && super::avx2::decode_slots::<true>(self, &at, a, b) {
            return;
        }
        self.decode_into_as::<true>(at, a, b);
    }

    /// Frame `at[0]` into `a`, and with `TWO` frame `at[1]` into `b`, with
    /// the portable decoder whatever the CPU.
    pub(super) fn decode_into_as<const TWO: bool>(
        &self,
        at: [FrameAt; 2],
        a: &mut [SoaTransform],
        b: &mut [SoaTransform],
    ) {
        let ma = self.segment_meta(at[0].segment).unwrap_or(&[]);
        let mb = self.segment_meta(at[1].segment).unwrap_or(&[]);
        let same = at[0].segment == at[1].segment;
        let frames = [(at[0].first, at[0].local), (at[1].first, at[1].local)];
        let (mut m, mut oa, mut ob) = (0usize, 0u32, 0u32);
        let mut scratch = SoaTransform::IDENTITY;
        self.walk_tracks(a.len(), |i, track, mask, cv| {
            let Some(oa_) = a.get_mut(i) else { return };
            let ob_ = if TWO {
                b.get_mut(i).unwrap_or(&mut scratch)
            } else {
                &mut scratch
            };
            if mask == 0 {
                // Constant tracks are in every slot already
                // (`write_constants`).
                return;
            }
            let offsets = (&mut oa, &mut ob);
            if track == 1 {
                let (qa, qb) =
                    self.track_frames_as::<true, TWO>((ma, mb), same, m, mask, offsets, frames, cv);
                oa_.rotation = qa;
                ob_.rotation = qb;
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
                if track == 0 {
                    oa_.translation = xyz(&qa);
                    ob_.translation = xyz(&qb);
                } else {
                    oa_.scale = xyz(&qa);
                    ob_.scale = xyz(&qb);
                }
            }
            m += LANE_META_BYTES * mask.count_ones() as usize;
        });
    }

    /// Writes the constant tracks' values into each of `slots` (blocks of
    /// `n`), as the decoders' slot writes would: they skip constant tracks,
    /// which are the same in every frame.
    fn write_constants(&self, slots: &mut [SoaTransform], n: usize) {
        for slot in slots.chunks_exact_mut(n.max(1)) {
            self.walk_tracks(slot.len(), |i, track, mask, cv| {
                let Some(o) = slot.get_mut(i).filter(|_| mask == 0) else {
                    return;
                };
                match track {
                    1 => o.rotation = constant_value::<true>(cv),
                    0 => o.translation = xyz(&constant_value::<false>(cv)),
                    _ => o.scale = xyz(&constant_value::<false>(cv)),
                }
            });
        }
    }

    /// Interpolates two frames [`Self::decode_into`] filled, by `alpha`,
    /// into `out`, with the pair decoder's operations: default tracks from
    /// `rest` (or identity), constant tracks copied, the others lerped and
    /// nlerped.
    fn blend_frames(
        &self,
        a: &[SoaTransform],
        b: &[SoaTransform],
        alpha: f32,
        rest: Option<&[SoaTransform]>,
        out: &mut [SoaTransform],
    ) {
        let blend = Blend::new(alpha);
        let identity = SoaTransform::IDENTITY;
        // Validated kinds are three per block: the zip checks no index.
        let kinds = self.kinds.chunks_exact(3);
        for (i, (((o, a), b), k)) in out.iter_mut().zip(a).zip(b).zip(kinds).enumerate() {
            let base = || rest.and_then(|r| r.get(i)).unwrap_or(&identity);
            let (kt, kr, ks) = (k[0], k[1], k[2]);
            o.translation = if kt == KIND_DEFAULT {
                base().translation
            } else if kt >> 4 == 0 {
                a.translation
            } else {
                blend.lerp_vec(&a.translation, &b.translation)
            };
            o.rotation = if kr == KIND_DEFAULT {
                base().rotation
            } else if kr >> 4 == 0 {
                a.rotation
            } else {
                blend.nlerp(&a.rotation, &b.rotation)
            };
            o.scale = if ks == KIND_DEFAULT {
                base().scale
            } else if ks >> 4 == 0 {
                a.scale
            } else {
                blend.lerp_vec(&a.scale, &b.scale)
            };
        }
    }

    /// Calls `f(block, track, lane mask, clip constants)` for every stored
    /// (non-default) track of the first `blocks` blocks in stream order
    /// (translation 0, rotation 1, scale 2), with the constants laid out as
    /// the decoders read them.
    #[inline(always)]
    fn walk_tracks(&self, blocks: usize, mut f: impl FnMut(usize, usize, u32, &[f32x4])) {
        let mut p = 0usize;
        for b in 0..blocks {
            for track in 0..3 {
                let kind = self
                    .kinds
                    .get(3 * b + track)
                    .copied()
                    .unwrap_or(KIND_DEFAULT);
                if kind == KIND_DEFAULT {
                    continue;
                }
                let mask = u32::from(kind >> 4);
                let n = track_param_floats(track == 1, if mask == 0 { 0 } else { 1 }) / LANES;
                let cv = self.params.get(p..p + n).unwrap_or(&[]);
                p += n;
                f(b, track, mask, cv);
            }
        }
    }
}
