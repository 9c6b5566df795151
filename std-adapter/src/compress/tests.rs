//! Unit tests of the compressor's internals.
use sinew_core::{Quat, Transform, Vec3};

use super::analysis::*;
use super::measure::*;

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn f(&mut self, scale: f32) -> f32 {
        ((self.next() >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * scale
    }

    fn transform(&mut self, near: Option<&Transform>) -> Transform {
        let q = match (near, self.next() % 4) {
            // Near-opposite to the previous frame's rotation (the nlerp
            // sign flip), or the same one negated exactly.
            (Some(p), 0) => -p.rotation,
            (Some(p), 1) => Quat::new(
                -p.rotation.x + self.f(1e-3),
                -p.rotation.y,
                -p.rotation.z,
                -p.rotation.w,
            ),
            // Unnormalised, as decoded tracks are before `set_track`.
            _ => Quat::new(self.f(1.0), self.f(1.0), self.f(1.0), self.f(1.0)),
        };
        let s = if self.next().is_multiple_of(3) {
            Vec3::ONE
        } else {
            Vec3::new(self.f(3.0), self.f(3.0), self.f(3.0))
        };
        Transform::new(Vec3::new(self.f(500.0), self.f(0.1), self.f(50.0)), q, s)
    }
}

/// `wider` orders angles as `atan2` does, including equal ones, zero
/// sides and `(0, 0)`.
#[test]
fn wider_orders_as_atan2() {
    let mut rng = Rng(0x0dd_ba11);
    let mut sides = vec![(0.0, 0.0), (0.0, 1.0), (1.0, 0.0), (0.0, 0.5), (1e-30, 1.0)];
    for _ in 0..300 {
        let v = rng.f(1.0).abs();
        // Many near-equal angles: scaled copies and one-ulp neighbours.
        let c = rng.f(1.0).abs();
        sides.push((v, c));
        sides.push((v * 0.5, c * 0.5));
        sides.push((f32::from_bits(v.to_bits() + 1), c));
    }
    for &a in &sides {
        for &b in &sides {
            let (ta, tb) = (a.0.atan2(a.1), b.0.atan2(b.1));
            if wider(a, b) {
                assert!(ta >= tb, "{a:?} {b:?}");
            }
            if ta > tb {
                assert!(wider(a, b), "{a:?} {b:?}");
            }
        }
    }
}

fn lane(m: &Affine8, i: usize) -> [[u32; 3]; 4] {
    m.c.map(|col| col.map(|v| v.to_array()[i].to_bits()))
}

/// The eight-lane sampler gives every lane the bits of the scalar
/// `Affine::from_trs` of the frame (or of `lerp_t` halfway between two
/// frames), for every segment length and block, padding included: the
/// compressor's choices, and so its output, do not depend on it.
#[test]
fn local8_has_the_scalar_bits_in_every_lane() {
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    for case in 0..400 {
        let len = 1 + case % 23;
        let mut frames: Vec<Transform> = Vec::with_capacity(len);
        for f in 0..len {
            let t = rng.transform(if f > 0 { frames.last() } else { None });
            frames.push(t);
        }
        let samples = sample_count(len);
        for b in 0..sample_blocks(samples) {
            let count = samples.saturating_sub(8 * b).min(8);
            let got = local8(|f| &frames[f], len, b, count);
            for i in 0..8 {
                let s = 8 * b + i.min(count.max(1) - 1);
                let t = if s < len {
                    frames[s]
                } else {
                    lerp_t(&frames[s - len], &frames[s - len + 1], 0.5)
                };
                let want = Affine::from_trs(t.translation, t.rotation, t.scale);
                let bits = |a: &Affine| a.c.map(|col| col.map(f32::to_bits));
                assert_eq!(lane(&got, i), bits(&want), "len {len}, block {b}, lane {i}");
                // The lane-wise product (FK) and column norms, too.
                let (prod, wprod) = (got.mul(&got), want.mul(&want));
                assert_eq!(lane(&prod, i), bits(&wprod), "product, len {len}");
                let norms = got.max_col_norm().to_array()[i];
                assert_eq!(norms.to_bits(), want.max_col_norm().to_bits());
            }
        }
    }
}

/// The trend search of `Track::shape` finds, among the trends within
/// `TREND_REACH` steps of the narrowest one, the fewest whole clip units a
/// residual rounds out to (and the narrowest residual of those), as an
/// exhaustive search of that window does; and none when no trend beats the
/// component's own units.
#[test]
fn fewest_units_matches_an_exhaustive_search() {
    let mut rng = Rng(0x5eed_0f2b);
    let unit = 1.0f32 / 255.0;
    let (mut found, mut none, mut ties) = (0, 0, 0);
    for case in 0..900 {
        let n = 3 + (rng.next() % 14) as usize;
        let (a, b, c) = (
            0.5 + rng.f(0.3),
            rng.f(40.0 * unit / 8.0),
            rng.f(60.0 * unit / 256.0),
        );
        // A third of the segments are noise about a constant, which a trend
        // rarely narrows.
        let (b, c) = if case % 3 == 0 { (0.0, 0.0) } else { (b, c) };
        let noise = rng.f(3.0).abs() * unit;
        let vals: Vec<f32> = (0..n)
            .map(|i| {
                let i = i as f32;
                a + b * i + c * i * i + rng.f(1.0) * noise
            })
            .collect();
        // As `shape` measures it: the residual's extremes in fractions of
        // the clip range (here [0, 1], 255 units).
        let span = |d: i8, k: i8| -> (f32, f32) {
            let (slope, curve) = (
                sinew_core::compressed::codec::trend_slope(unit, d),
                sinew_core::compressed::codec::trend_curve(unit, k),
            );
            let r = vals.iter().enumerate().map(|(i, v)| {
                let i = i as f32;
                v - slope * i - curve * (i * i)
            });
            r.fold((f32::INFINITY, f32::NEG_INFINITY), |(l, h), r| {
                (l.min(r), h.max(r))
            })
        };
        let curved = n >= 4;
        let window = |at: (i8, i8)| {
            (-TREND_REACH..=TREND_REACH).flat_map(move |dd| {
                (-TREND_REACH..=TREND_REACH)
                    .map(move |dk| (i16::from(at.0) + dd, i16::from(at.1) + dk))
            })
        };
        let bytes = |(d, k): (i16, i16)| {
            ((-127..=127).contains(&d) && (-127..=127).contains(&k)).then_some((d as i8, k as i8))
        };
        let width = |sp: (f32, f32)| (sp.1 - sp.0) * 255.0;
        // The start: the narrowest residual over the whole byte grid.
        let start = window((0, 0))
            .chain(window((0, 0)).map(|(d, k)| (d * 3, k * 3)))
            .filter_map(bytes)
            .map(|(d, k)| (d, if curved { k } else { 0 }))
            .min_by(|&x, &y| width(span(x.0, x.1)).total_cmp(&width(span(y.0, y.1))))
            .unwrap();
        let plain = units(span(0, 0));
        let exhaustive = window(start)
            .filter(|&(_, k)| curved || k == i16::from(start.1))
            .filter_map(bytes)
            .filter(|&t| t != (0, 0))
            .map(|t| span(t.0, t.1))
            .filter(|sp| sp.0 >= 0.0 && sp.1 <= 1.0)
            .map(|sp| (units(sp), width(sp)))
            .min_by(|x, y| x.0.total_cmp(&y.0).then(x.1.total_cmp(&y.1)))
            .filter(|&(u, _)| u < plain);
        let got = Track::fewest_units(start, plain, curved, TREND_REACH, span).map(|(t, sp)| {
            assert_eq!(
                span(t.0, t.1),
                sp,
                "case {case}: the span returned is the trend's"
            );
            assert!(
                curved || t.1 == start.1,
                "case {case}: no curvature on {n} frames"
            );
            (units(sp), width(sp))
        });
        let units_of = |r: Option<(f32, f32)>| r.map(|(u, _)| u);
        assert_eq!(
            units_of(got),
            units_of(exhaustive),
            "case {case}: {n} frames, start {start:?}, plain {plain}"
        );
        match (got, exhaustive) {
            // Among equal units the narrowest residual is a preference: the
            // flood can miss one the lattice does not connect to it.
            (Some((_, w)), Some((_, best))) if w > best => ties += 1,
            (Some(_), _) => found += 1,
            _ => none += 1,
        }
    }
    // Both outcomes occur, and the narrowest of equal units is almost
    // always found.
    assert!(found > 300 && none > 100, "found {found}, none {none}");
    assert!(ties * 100 < found, "{ties} of {found} not the narrowest");
}

/// `units` rounds as `ceil` and `floor` do, on whole, half, tiny,
/// negative, large and non-finite values.
#[test]
fn units_round_as_the_library_does() {
    let mut rng = Rng(0x0f1_00f2);
    let mut xs = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        1e-30,
        -1e-30,
        8_388_607.5,
        -8_388_607.5,
    ];
    xs.extend([
        8_388_608.0,
        3e9,
        -3e9,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::MAX,
        f32::MIN,
    ]);
    for _ in 0..2000 {
        xs.push(rng.f(600.0));
        xs.push(rng.f(1.0) / 255.0);
    }
    for &lo in &xs {
        let hi = lo / 255.0 + 0.25;
        let want = (hi * 255.0).ceil() - (lo / 255.0 * 255.0).floor();
        let got = units((lo / 255.0, hi));
        assert!(
            got == want || (got.is_nan() && want.is_nan()),
            "({lo}): {got} != {want}"
        );
    }
}
