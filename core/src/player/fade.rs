//! Transitions between animation sources: which sources are playing and
//! with what weight, through cross-fades that may be interrupted by further
//! cross-fades, and the switch an inertialized transition makes at once.
//!
//! A [`Fader`] holds up to `K` sources, each a caller payload `T` (a
//! playhead, a graph state and its clocks) with a weight. Starting a
//! cross-fade to a new source freezes the weights the older sources have at
//! that moment, `bᵢ` (they sum to 1), and from then on
//!
//! `wᵢ = bᵢ (1 − α(s))` for the older sources, `w_new = α(s)`, `s = elapsed / duration`,
//!
//! with `α` the transition's [`FadeCurve`]; the weights always sum to 1. An
//! interruption is just another start: whatever mix is playing becomes the
//! frozen `bᵢ` of the next fade, so nothing pops. When a fade completes,
//! only the newest source is left.
//!
//! An inertialized transition ([`Blend::Inertialize`]) drops every other
//! source at once; the caller then hands its last two output poses and the
//! new source's pose to [`crate::mix::Inertializer::switch`], which keeps
//! the output continuous in value and velocity (an interruption included:
//! the output history already holds whatever was playing).

use crate::error::Error;
use crate::mix::transition::Decay;

/// The shape of a cross-fade's weight over its duration, `α(s)` for
/// `s ∈ [0, 1]`, from 0 to 1.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum FadeCurve {
    /// `α = s`.
    Linear = 0,
    /// `α = s² (3 − 2s)`: starts and ends with zero slope.
    #[default]
    SmoothStep = 1,
    /// `α = s²`: the new source comes in slowly.
    EaseIn = 2,
    /// `α = 1 − (1 − s)²`: the new source comes in quickly.
    EaseOut = 3,
}

impl FadeCurve {
    /// `α(s)`, with `s` clamped to `[0, 1]` (NaN counts as 1: done).
    #[inline]
    #[must_use]
    pub fn alpha(self, s: f32) -> f32 {
        let s = if s.is_nan() { 1.0 } else { s.clamp(0.0, 1.0) };
        match self {
            FadeCurve::Linear => s,
            FadeCurve::SmoothStep => s * s * (3.0 - 2.0 * s),
            FadeCurve::EaseIn => s * s,
            FadeCurve::EaseOut => 1.0 - (1.0 - s) * (1.0 - s),
        }
    }
}

/// How a transition blends from what is playing to its new source.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Blend {
    /// Both play, weighted by the fade curve over the transition's duration.
    Crossfade(FadeCurve),
    /// Switch at once and decay the difference (see
    /// [`crate::mix::transition`]); a quintic decay takes the transition's
    /// duration.
    Inertialize(Decay),
}

/// A transition: its duration (seconds) and blend.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transition {
    /// Seconds, finite and `>= 0` (0 switches at once); `> 0` for a
    /// quintic inertialization.
    pub duration: f32,
    /// Cross-fade or inertialization.
    pub blend: Blend,
}

impl Transition {
    /// A cross-fade over `duration` seconds with a smooth-step curve.
    #[must_use]
    pub const fn crossfade(duration: f32) -> Self {
        Transition {
            duration,
            blend: Blend::Crossfade(FadeCurve::SmoothStep),
        }
    }

    /// A quintic inertialization over `duration` seconds.
    #[must_use]
    pub const fn inertialize(duration: f32) -> Self {
        Transition {
            duration,
            blend: Blend::Inertialize(Decay::Quintic),
        }
    }

    /// Checks the duration and the decay.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a negative or non-finite duration, a
    /// zero duration with a quintic decay, or a spring half-life that is not
    /// finite and `> 0`.
    pub fn validate(&self) -> Result<(), Error> {
        if !(self.duration.is_finite() && self.duration >= 0.0) {
            return Err(Error::InvalidParameter {
                what: "transition duration must be finite and >= 0",
            });
        }
        match self.blend {
            Blend::Crossfade(_) => Ok(()),
            Blend::Inertialize(Decay::Quintic) if self.duration <= 0.0 => {
                Err(Error::InvalidParameter {
                    what: "a quintic inertialization needs a duration > 0",
                })
            }
            Blend::Inertialize(Decay::Quintic) => Ok(()),
            Blend::Inertialize(Decay::Spring { half_life }) => {
                if half_life.is_finite() && half_life > 0.0 {
                    Ok(())
                } else {
                    Err(Error::InvalidParameter {
                        what: "spring half-life must be finite and > 0",
                    })
                }
            }
        }
    }
}

/// The sources playing and their weights; see the [module docs](self).
///
/// A plain value (`Copy` when `T` is): it lives in an ECS component or a C
/// struct, with no allocation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fader<T, const K: usize> {
    /// `len` live entries, oldest first: the payload and its frozen weight
    /// `bᵢ` (the newest entry's is unused).
    pub(super) entries: [(T, f32); K],
    pub(super) len: usize,
    pub(super) elapsed: f32,
    pub(super) duration: f32,
    pub(super) curve: FadeCurve,
}

impl<T: Copy, const K: usize> Fader<T, K> {
    /// One source playing alone, weight 1.
    ///
    /// # Errors
    /// [`Error::CapacityExceeded`] when `K == 0`.
    pub fn new(first: T) -> Result<Self, Error> {
        if K == 0 {
            return Err(Error::CapacityExceeded { capacity: 0 });
        }
        Ok(Fader {
            entries: [(first, 1.0); K],
            len: 1,
            elapsed: 0.0,
            duration: 0.0,
            curve: FadeCurve::Linear,
        })
    }

    /// Number of sources playing (`1..=K`).
    #[inline]
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false: a fader plays at least one source.
    #[inline]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The newest source: the one the last transition went to.
    #[inline]
    #[must_use]
    pub fn current(&self) -> &T {
        &self.entries[self.len - 1].0
    }

    /// The newest source, mutably.
    #[inline]
    pub fn current_mut(&mut self) -> &mut T {
        &mut self.entries[self.len - 1].0
    }

    /// Whether a cross-fade is under way (more than one source playing).
    #[inline]
    #[must_use]
    pub fn is_fading(&self) -> bool {
        self.len > 1
    }

    /// Seconds since the last transition started.
    #[inline]
    #[must_use]
    pub fn elapsed(&self) -> f32 {
        self.elapsed
    }

    /// `α` of the fade under way (1 when none).
    #[must_use]
    pub fn alpha(&self) -> f32 {
        if self.len <= 1 || self.duration <= 0.0 {
            1.0
        } else {
            self.curve.alpha(self.elapsed / self.duration)
        }
    }

    /// Weight of source `i` (oldest first); 0 past the end.
    #[must_use]
    pub fn weight(&self, i: usize) -> f32 {
        let a = self.alpha();
        if i + 1 == self.len {
            a
        } else if i < self.len {
            self.entries[i].1 * (1.0 - a)
        } else {
            0.0
        }
    }

    /// The sources, oldest first, each with its weight.
    pub fn sources(&self) -> impl Iterator<Item = (&T, f32)> + '_ {
        let a = self.alpha();
        let last = self.len - 1;
        self.entries[..self.len]
            .iter()
            .enumerate()
            .map(move |(i, (t, b))| (t, if i == last { a } else { b * (1.0 - a) }))
    }

    /// The sources' payloads, oldest first, mutably (to advance their clocks).
    pub fn payloads_mut(&mut self) -> impl Iterator<Item = &mut T> + '_ {
        self.entries[..self.len].iter_mut().map(|(t, _)| t)
    }

    /// Starts a transition to `source`. A cross-fade freezes the current
    /// weights and fades `source` in over the duration; when all `K` slots
    /// are taken, the oldest source of smallest weight is dropped first and
    /// the others share its weight (a pop of at most that weight). An
    /// inertialization (or a zero duration) leaves `source` alone at once.
    ///
    /// # Errors
    /// As [`Transition::validate`]; nothing changes then.
    pub fn start(&mut self, source: T, transition: &Transition) -> Result<(), Error> {
        transition.validate()?;
        let curve = match transition.blend {
            Blend::Crossfade(curve) if transition.duration > 0.0 => curve,
            _ => {
                self.entries[0] = (source, 1.0);
                self.len = 1;
                self.elapsed = 0.0;
                self.duration = 0.0;
                return Ok(());
            }
        };
        // Freeze the weights playing now as the older sources' shares.
        let a = self.alpha();
        let last = self.len - 1;
        for (i, e) in self.entries[..self.len].iter_mut().enumerate() {
            e.1 = if i == last { a } else { e.1 * (1.0 - a) };
        }
        self.drop_faded();
        if self.len == K {
            self.evict_lightest();
        }
        self.entries[self.len] = (source, 0.0);
        self.len += 1;
        self.elapsed = 0.0;
        self.duration = transition.duration;
        self.curve = curve;
        Ok(())
    }

    /// Sources whose frozen share is 0 contribute nothing from now on.
    fn drop_faded(&mut self) {
        let mut n = 0;
        for i in 0..self.len {
            if self.entries[i].1 > 0.0 {
                self.entries[n] = self.entries[i];
                n += 1;
            }
        }
        if n == 0 {
            // Only possible when the newest had weight 0 as well: keep it.
            self.entries[0] = (self.entries[self.len - 1].0, 1.0);
            n = 1;
        }
        self.len = n;
    }

    fn evict_lightest(&mut self) {
        let mut k = 0;
        for i in 1..self.len {
            if self.entries[i].1 < self.entries[k].1 {
                k = i;
            }
        }
        let dropped = self.entries[k].1;
        for i in k..self.len - 1 {
            self.entries[i] = self.entries[i + 1];
        }
        self.len -= 1;
        let rest = 1.0 - dropped;
        if rest > 0.0 {
            for e in &mut self.entries[..self.len] {
                e.1 /= rest;
            }
        } else {
            for e in &mut self.entries[..self.len] {
                e.1 = 1.0 / self.len as f32;
            }
        }
    }

    /// Advances the fade by `dt` seconds; once it is complete only the
    /// newest source is left.
    ///
    /// # Errors
    /// [`Error::NonFinite`] (`"dt"`) for a negative or non-finite `dt`;
    /// nothing changes then.
    pub fn advance(&mut self, dt: f32) -> Result<(), Error> {
        if !(dt.is_finite() && dt >= 0.0) {
            return Err(Error::NonFinite { what: "dt" });
        }
        self.elapsed += dt;
        if self.len > 1 && self.elapsed >= self.duration {
            self.entries[0] = (self.entries[self.len - 1].0, 1.0);
            self.len = 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
