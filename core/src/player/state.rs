//! A player's state as plain `u32` words: for a C struct (whose bytes C
//! may change, so every load is validated), a save game or a network
//! snapshot. [`Player::to_words`] writes [`Player::WORDS`] words;
//! [`Player::from_words`] checks every field (enumerations in range, flags
//! 0 or 1, times and weights finite and in range, the source count within
//! `K`) and rebuilds the identical player, or returns an error.
//!
//! Layout, in order (`f` an `f32`'s bits, `u` a `u32`):
//! - `K` fader entries, each: clip `u`, playhead time `f`, speed `f`,
//!   mode `u` (0 loop, 1 clamp, 2 ping-pong), flags `u` (bit 0 paused,
//!   bit 1 travelling back in a ping-pong), frozen weight `f`;
//! - fader: live sources `u`, elapsed `f`, duration `f`, curve `u`
//!   (0 linear, 1 smooth-step, 2 ease-in, 3 ease-out);
//! - inertializer: elapsed `f`, longest `f`, decay `u` (0 quintic, 1
//!   spring), half-life `f` (0 for quintic);
//! - pending transition: present `u` (0 or 1), duration `f`, blend `u`
//!   (0 cross-fade, 1 inertialization), curve or decay `u`, half-life `f`;
//! - player: pose blocks `u`, speed `f`, last `dt` `f`, history poses `u`
//!   (0 to 2), paused `u`.
//!
//! Words past a field's meaning (an unused fader slot, an absent pending
//! transition) are still checked, so one player has exactly one encoding.

use super::fade::{Blend, FadeCurve, Fader, Transition};
use super::play::{Player, Source};
use super::playhead::{PlayMode, Playhead};
use crate::error::Error;
use crate::mix::transition::{Decay, Inertializer};
use crate::skeleton::MAX_JOINTS;
use crate::soa::soa_count;

const ENTRY_WORDS: usize = 6;
const TAIL_WORDS: usize = 4 + 4 + 5 + 5;

struct Writer<'a> {
    out: &'a mut [u32],
    at: usize,
}

impl Writer<'_> {
    fn u(&mut self, v: u32) {
        if let Some(w) = self.out.get_mut(self.at) {
            *w = v;
        }
        self.at += 1;
    }

    fn f(&mut self, v: f32) {
        self.u(v.to_bits());
    }

    fn flag(&mut self, v: bool) {
        self.u(u32::from(v));
    }
}

struct Reader<'a> {
    words: &'a [u32],
    at: usize,
}

const BAD: Error = Error::Corrupt {
    what: "player state word out of range",
};

impl Reader<'_> {
    fn u(&mut self) -> u32 {
        let v = self.words.get(self.at).copied().unwrap_or(u32::MAX);
        self.at += 1;
        v
    }

    /// A finite `f32` in `lo..=hi`.
    fn f(&mut self, lo: f32, hi: f32) -> Result<f32, Error> {
        let v = f32::from_bits(self.u());
        if v.is_finite() && (lo..=hi).contains(&v) {
            Ok(v)
        } else {
            Err(BAD)
        }
    }

    fn below(&mut self, n: u32) -> Result<u32, Error> {
        let v = self.u();
        if v < n {
            Ok(v)
        } else {
            Err(BAD)
        }
    }

    fn flag(&mut self) -> Result<bool, Error> {
        Ok(self.below(2)? == 1)
    }
}

const CURVES: [FadeCurve; 4] = [
    FadeCurve::Linear,
    FadeCurve::SmoothStep,
    FadeCurve::EaseIn,
    FadeCurve::EaseOut,
];
const MODES: [PlayMode; 3] = [PlayMode::Loop, PlayMode::Clamp, PlayMode::PingPong];

fn write_decay(w: &mut Writer<'_>, d: Decay) {
    match d {
        Decay::Quintic => {
            w.u(0);
            w.f(0.0);
        }
        Decay::Spring { half_life } => {
            w.u(1);
            w.f(half_life);
        }
    }
}

fn read_decay(r: &mut Reader<'_>) -> Result<Decay, Error> {
    let kind = r.below(2)?;
    let half_life = r.f(0.0, f32::MAX)?;
    match (kind, half_life > 0.0) {
        (0, false) => Ok(Decay::Quintic),
        (1, true) => Ok(Decay::Spring { half_life }),
        _ => Err(BAD),
    }
}

impl<const K: usize> Player<K> {
    /// Words in a player's state.
    pub const WORDS: usize = ENTRY_WORDS * K + TAIL_WORDS;

    /// Writes the player's state into `out` ([`Self::WORDS`] words).
    ///
    /// # Errors
    /// [`Error::BadLength`] unless `out` holds exactly [`Self::WORDS`]
    /// words; nothing is written then.
    pub fn to_words(&self, out: &mut [u32]) -> Result<(), Error> {
        crate::soa::check_len("player state", Self::WORDS, out.len())?;
        let mut w = Writer { out, at: 0 };
        let f = &self.fader;
        for (s, base) in &f.entries {
            let p = &s.playhead;
            w.u(s.clip);
            w.f(p.time);
            w.f(p.speed);
            w.u(p.mode as u32);
            w.u(u32::from(p.paused) | u32::from(p.reversed) << 1);
            w.f(*base);
        }
        w.u(f.len as u32);
        w.f(f.elapsed);
        w.f(f.duration);
        w.u(f.curve as u32);
        let i = &self.inertializer;
        w.f(i.elapsed);
        w.f(i.longest);
        write_decay(&mut w, i.decay);
        match self.pending {
            None => {
                for _ in 0..5 {
                    w.u(0);
                }
            }
            Some(t) => {
                w.flag(true);
                w.f(t.duration);
                match t.blend {
                    Blend::Crossfade(c) => {
                        w.u(0);
                        w.u(c as u32);
                        w.f(0.0);
                    }
                    Blend::Inertialize(d) => {
                        w.u(1);
                        write_decay(&mut w, d);
                    }
                }
            }
        }
        w.u(self.soa_count as u32);
        w.f(self.speed);
        w.f(self.last_dt);
        w.u(u32::from(self.history));
        w.flag(self.paused);
        Ok(())
    }

    /// Rebuilds a player from words [`Self::to_words`] wrote.
    ///
    /// # Errors
    /// [`Error::BadLength`] unless `words` holds exactly [`Self::WORDS`]
    /// words; [`Error::Corrupt`] for a word out of range (see the module
    /// docs); [`Error::CapacityExceeded`] when `K == 0`.
    pub fn from_words(words: &[u32]) -> Result<Self, Error> {
        crate::soa::check_len("player state", Self::WORDS, words.len())?;
        let mut r = Reader { words, at: 0 };
        let first = Source {
            clip: 0,
            playhead: Playhead::new(PlayMode::Loop),
        };
        let mut fader = Fader::new(first)?;
        for e in &mut fader.entries {
            let clip = r.u();
            let time = r.f(0.0, f32::MAX)?;
            let speed = r.f(f32::MIN, f32::MAX)?;
            let mode = MODES[r.below(3)? as usize];
            let flags = r.below(4)?;
            let base = r.f(0.0, 1.0)?;
            let playhead = Playhead {
                time,
                speed,
                mode,
                paused: flags & 1 == 1,
                reversed: flags & 2 == 2,
            };
            *e = (Source { clip, playhead }, base);
        }
        let len = r.u() as usize;
        if !(1..=K).contains(&len) {
            return Err(BAD);
        }
        fader.len = len;
        fader.elapsed = r.f(0.0, f32::MAX)?;
        fader.duration = r.f(0.0, f32::MAX)?;
        fader.curve = CURVES[r.below(4)? as usize];
        let inertializer = Inertializer {
            elapsed: r.f(0.0, f32::MAX)?,
            longest: r.f(0.0, f32::MAX)?,
            decay: read_decay(&mut r)?,
        };
        let present = r.flag()?;
        let duration = r.f(0.0, f32::MAX)?;
        let blend = match r.below(2)? {
            0 => {
                let curve = CURVES[r.below(4)? as usize];
                if r.u() != 0 {
                    return Err(BAD);
                }
                Blend::Crossfade(curve)
            }
            _ => Blend::Inertialize(read_decay(&mut r)?),
        };
        let pending = if present {
            let t = Transition { duration, blend };
            t.validate().map_err(|_| BAD)?;
            Some(t)
        } else if duration == 0.0 && blend == Blend::Crossfade(FadeCurve::Linear) {
            None
        } else {
            return Err(BAD);
        };
        let soa = r.u() as usize;
        if !(1..=soa_count(MAX_JOINTS)).contains(&soa) {
            return Err(BAD);
        }
        Ok(Player {
            fader,
            inertializer,
            pending,
            soa_count: soa,
            speed: r.f(f32::MIN, f32::MAX)?,
            last_dt: r.f(0.0, f32::MAX)?,
            history: r.below(3)? as u8,
            paused: r.flag()?,
        })
    }
}
