//! The memory budget of one import.
//!
//! A file of a few kilobytes can declare a clip of a million frames, a
//! thousand morph weights or an accessor of two billion elements. Every
//! importer therefore charges what it is about to allocate from a size read
//! in the file to one [`Budget`] per import (a whole file, or an ozz skeleton
//! with its animations) and refuses, with an error that says what would not
//! fit, before allocating. The allocation itself goes through
//! `try_reserve_exact`, so a system that cannot provide the memory gives an
//! error too, never an abort.

use std::fmt;

/// Bytes an import may allocate by default: 512 MiB.
///
/// Enough for hours of motion capture on a 100-joint skeleton or a
/// million-vertex mesh; a file that needs more is either hostile or should
/// be imported with a larger budget ([`crate::import::load::LoadOptions::memory_budget`],
/// `--memory-budget` on the `sinew` tool).
pub const DEFAULT_MEMORY_BUDGET: usize = 512 << 20;

/// What one import may still allocate.
///
/// Sizes are `u64` so that products of file counts saturate instead of
/// wrapping on 32-bit targets; a charge that does not fit is an error
/// message naming what was asked for, its size, the budget and what is left.
#[derive(Clone, Debug)]
pub(crate) struct Budget {
    limit: u64,
    left: u64,
}

impl Budget {
    /// A budget of `bytes`.
    pub(crate) fn new(bytes: usize) -> Self {
        let limit = bytes as u64;
        Budget { limit, left: limit }
    }

    /// Charges `bytes` for `what` (e.g. `clip "walk": 1,000 frames × 57
    /// joints`), or says why it does not fit.
    pub(crate) fn take(&mut self, bytes: u64, what: impl fmt::Display) -> Result<(), String> {
        if bytes > self.left {
            return Err(format!(
                "{what} = {}: exceeds the memory budget of {} ({} left)",
                fmt_bytes(bytes),
                fmt_bytes(self.limit),
                fmt_bytes(self.left)
            ));
        }
        self.left -= bytes;
        Ok(())
    }

    /// Gives back `bytes` taken before, once what they paid for is freed.
    pub(crate) fn release(&mut self, bytes: u64) {
        self.left = self.left.saturating_add(bytes).min(self.limit);
    }

    /// An empty vector with room for exactly `count` elements, charged
    /// first; a failed allocation is an error, not an abort.
    pub(crate) fn vec<T>(
        &mut self,
        count: usize,
        what: impl fmt::Display,
    ) -> Result<Vec<T>, String> {
        let bytes = bytes_of::<T>(count);
        self.take(bytes, &what)?;
        let mut v = Vec::new();
        v.try_reserve_exact(count)
            .map_err(|e| format!("{what}: cannot allocate {}: {e}", fmt_bytes(bytes)))?;
        Ok(v)
    }
}

/// Bytes of `count` values of `T`, saturating.
pub(crate) fn bytes_of<T>(count: usize) -> u64 {
    (count as u64).saturating_mul(std::mem::size_of::<T>() as u64)
}

/// A byte count for people: `800 bytes`, `12.5 KiB`, `629 MiB`, `2.24 GiB`.
pub(crate) fn fmt_bytes(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if bytes < 1024 {
        return format!("{bytes} bytes");
    }
    let mut v = bytes as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    // Three significant digits; an exact whole number without decimals.
    let digits = if v.fract() == 0.0 || v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.digits$} {}", UNITS[unit])
}

/// A count with thousands separators: `1,000,000`.
pub(crate) fn fmt_count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `n` and a noun, plural unless `n` is 1: `1 joint`, `1,000 frames`.
pub(crate) fn fmt_plural(n: u64, noun: &str) -> String {
    let s = if n == 1 { "" } else { "s" };
    format!("{} {noun}{s}", fmt_count(n))
}

/// What a clip's keys are made of, for budget messages:
/// `1,000 frames × 57 joints (15 SoA blocks of 160 bytes)`.
pub(crate) fn fmt_keys(frames: u64, joints: usize, soa: usize) -> String {
    format!(
        "{} × {} ({} of {} bytes)",
        fmt_plural(frames, "frame"),
        fmt_plural(joints as u64, "joint"),
        fmt_plural(soa as u64, "SoA block"),
        std::mem::size_of::<sinew_core::SoaTransform>()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_counts_read_well() {
        assert_eq!(fmt_bytes(800), "800 bytes");
        assert_eq!(fmt_bytes(512 << 20), "512 MiB");
        assert_eq!(fmt_bytes(12_800), "12.5 KiB");
        assert_eq!(fmt_bytes(2_400_000_000), "2.24 GiB");
        assert_eq!(fmt_bytes(u64::MAX), "16 EiB");
        assert_eq!(fmt_count(0), "0");
        assert_eq!(fmt_count(999), "999");
        assert_eq!(fmt_count(1_000_000), "1,000,000");
        assert_eq!(fmt_count(4_294_967_295), "4,294,967,295");
        assert_eq!(
            fmt_keys(1, 1, 1),
            "1 frame × 1 joint (1 SoA block of 160 bytes)"
        );
        assert_eq!(
            fmt_keys(1_000_000, 57, 15),
            "1,000,000 frames × 57 joints (15 SoA blocks of 160 bytes)"
        );
    }

    #[test]
    fn take_refuses_what_does_not_fit_and_release_gives_back() {
        let mut b = Budget::new(1 << 20);
        assert!(b.take(1 << 19, "half").is_ok());
        let e = b.take((1 << 19) + 1, "clip \"a\"").unwrap_err();
        assert_eq!(
            e,
            "clip \"a\" = 512 KiB: exceeds the memory budget of 1 MiB (512 KiB left)"
        );
        b.release(1 << 19);
        assert!(b.take(1 << 20, "all").is_ok());
        assert!(b.vec::<u8>(1, "one more").is_err());
        b.release(u64::MAX);
        let v = b.vec::<u32>(4, "four").unwrap();
        assert_eq!(v.capacity(), 4);
        assert!(b.vec::<u64>(usize::MAX, "everything").is_err());
    }
}
