extern crate alloc;

use alloc::vec;
use alloc::vec::Vec;

use super::*;
use crate::math::Vec3;
use proptest::prelude::*;

/// A small xorshift generator: the same data every run.
struct Rng(u32);

impl Rng {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 17;
        self.0 ^= self.0 << 5;
        (self.0 >> 8) as f32 / (1u32 << 24) as f32
    }
    fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.next()
    }
}

/// A 16-byte aligned byte buffer.
struct Buf(Vec<u128>);

impl Buf {
    fn new(len: usize) -> Self {
        Buf(vec![0; len.div_ceil(16)])
    }
    fn bytes(&self) -> &[u8] {
        bytemuck::cast_slice(&self.0)
    }
    fn bytes_mut(&mut self) -> &mut [u8] {
        bytemuck::cast_slice_mut(&mut self.0)
    }
}

/// Keys and values of one random track, owned.
#[derive(Clone, Debug)]
struct Owned {
    name: alloc::string::String,
    target: Option<u32>,
    kind: TrackKind,
    interpolation: Interpolation,
    times: Vec<f32>,
    values: Vec<f32>,
    encoding: Encoding,
}

impl Owned {
    fn desc(&self) -> TrackDesc<'_> {
        TrackDesc {
            name: &self.name,
            target: self.target,
            kind: self.kind,
            interpolation: self.interpolation,
            times: &self.times,
            values: &self.values,
            encoding: self.encoding,
        }
    }
}

const KINDS: [TrackKind; 5] = [
    TrackKind::Float,
    TrackKind::Vec2,
    TrackKind::Vec3,
    TrackKind::Vec4,
    TrackKind::Quat,
];

fn mode_of(m: u8, kind: TrackKind) -> Interpolation {
    match m % 6 {
        0 => Interpolation::Step,
        1 => Interpolation::Linear,
        2 if kind == TrackKind::Quat => Interpolation::Slerp,
        2 => Interpolation::Cardinal { tension: -0.5 },
        3 => Interpolation::CubicSpline,
        4 => Interpolation::CATMULL_ROM,
        _ => Interpolation::Cardinal { tension: 0.7 },
    }
}

/// A random track: uneven times, values in `±amp` (rotations: a random
/// walk of unit quaternions, some on the far hemisphere), tangents in
/// `±3·amp`.
fn random_track(
    rng: &mut Rng,
    kind: TrackKind,
    interpolation: Interpolation,
    keys: usize,
    encoding: Encoding,
    amp: f32,
) -> Owned {
    let mut t = rng.range(-1.0, 1.0);
    let times: Vec<f32> = (0..keys)
        .map(|_| {
            let now = t;
            t += rng.range(0.01, 0.5);
            now
        })
        .collect();
    let n = kind.components();
    let per = per_key(interpolation);
    let mut q = Quat::IDENTITY;
    let mut values = Vec::new();
    for _ in 0..keys {
        for m in 0..per {
            let key = per == 1 || m == 1;
            if kind == TrackKind::Quat && key {
                let axis = Vec3::new(
                    rng.range(-1.0, 1.0),
                    rng.range(-1.0, 1.0),
                    rng.range(-1.0, 1.0),
                )
                .try_normalize()
                .unwrap_or(Vec3::X);
                q = (q * Quat::from_axis_angle(axis, rng.range(0.0, 0.6))).normalize();
                let v = if rng.next() < 0.2 { -q } else { q };
                values.extend_from_slice(&v.to_array());
            } else {
                let a = if key { amp } else { 3.0 * amp };
                for _ in 0..n {
                    values.push(rng.range(-a, a));
                }
            }
        }
    }
    Owned {
        name: alloc::format!("track{}", rng.0 % 1000),
        target: if rng.next() < 0.5 {
            Some(rng.0 % 100)
        } else {
            None
        },
        kind,
        interpolation,
        times,
        values,
        encoding,
    }
}

fn write(tracks: &[Owned]) -> Buf {
    let descs: Vec<TrackDesc<'_>> = tracks.iter().map(Owned::desc).collect();
    let size = track_set_size(&descs).expect("size");
    let mut buf = Buf::new(size);
    let n = write_track_set(&descs, buf.bytes_mut()).expect("write");
    assert_eq!(n, size);
    assert_eq!(size % 16, 0);
    buf
}

fn quats(values: &[f32]) -> Vec<Quat> {
    values
        .chunks_exact(4)
        .map(|c| Quat::new(c[0], c[1], c[2], c[3]))
        .collect()
}

/// The components of a typed value, as bits.
fn sample_bits(track: &Track<'_>, cursor: Option<&mut Cursor>, t: f32) -> Vec<u32> {
    fn go<V: TrackValue, const N: usize>(
        track: &Track<'_>,
        cursor: Option<&mut Cursor>,
        t: f32,
        flat: impl Fn(V) -> [f32; N],
    ) -> Vec<u32> {
        let typed = track.typed::<V>().expect("kind");
        let v = match cursor {
            Some(k) => typed.sample_with(k, t),
            None => typed.sample(t),
        };
        flat(v).iter().map(|x| x.to_bits()).collect()
    }
    match track.kind() {
        TrackKind::Float => go(track, cursor, t, |v: f32| [v]),
        TrackKind::Vec2 => go(track, cursor, t, |v: [f32; 2]| v),
        TrackKind::Vec3 => go(track, cursor, t, |v: [f32; 3]| v),
        TrackKind::Vec4 => go(track, cursor, t, |v: [f32; 4]| v),
        TrackKind::Quat => go(track, cursor, t, |q: Quat| q.to_array()),
    }
}

/// The same samples from a `Curve` built over `values` (flattened).
fn curve_bits(
    kind: TrackKind,
    times: &[f32],
    values: &[f32],
    mode: Interpolation,
    t: f32,
) -> Vec<u32> {
    fn go<V: CurveValue, const N: usize>(
        times: &[f32],
        values: &[V],
        mode: Interpolation,
        t: f32,
        flat: impl Fn(V) -> [f32; N],
    ) -> Vec<u32> {
        let c = Curve::new(times, values, mode).expect("curve");
        flat(c.sample(t)).iter().map(|x| x.to_bits()).collect()
    }
    match kind {
        TrackKind::Float => go(times, values, mode, t, |v: f32| [v]),
        TrackKind::Vec2 => go(
            times,
            bytemuck::cast_slice(values),
            mode,
            t,
            |v: [f32; 2]| v,
        ),
        TrackKind::Vec3 => go(
            times,
            bytemuck::cast_slice(values),
            mode,
            t,
            |v: [f32; 3]| v,
        ),
        TrackKind::Vec4 => go(
            times,
            bytemuck::cast_slice(values),
            mode,
            t,
            |v: [f32; 4]| v,
        ),
        TrackKind::Quat => go(times, &quats(values), mode, t, |q: Quat| q.to_array()),
    }
}

/// Sample times around and on the keys.
fn probe_times(rng: &mut Rng, times: &[f32]) -> Vec<f32> {
    let (a, b) = (times[0], times[times.len() - 1]);
    let mut out: Vec<f32> = (0..40).map(|_| rng.range(a - 0.2, b + 0.2)).collect();
    out.extend_from_slice(times);
    out.push(f32::NAN);
    out
}

/// The decoded values of a track, flattened.
fn decoded(track: &Track<'_>) -> Vec<f32> {
    let n = track.kind().components();
    let stored = track.len() * per_key(track.interpolation());
    (0..stored * n).map(|i| track.value(i / n, i % n)).collect()
}

// ---- sampling: raw equals Curve bit for bit, quantized equals a Curve
// over its decoded keys bit for bit ----

#[test]
fn raw_and_quantized_sample_as_curves() {
    let mut rng = Rng(0x1234_5678);
    for kind in KINDS {
        for m in 0..6 {
            let mode = mode_of(m, kind);
            for keys in [1, 2, 3, 4, 7, 30] {
                let tracks = [
                    random_track(&mut rng, kind, mode, keys, Encoding::Raw, 2.0),
                    random_track(&mut rng, kind, mode, keys, Encoding::Quantized, 2.0),
                ];
                let buf = write(&tracks);
                let checked = TrackSet::from_bytes(buf.bytes()).expect("valid");
                // Re-viewed without the key scan, the set is the same view.
                let set = TrackSet::from_validated_bytes(buf.bytes()).expect("valid");
                assert_eq!(
                    (set.len(), set.component_count()),
                    (checked.len(), checked.component_count())
                );
                assert_eq!(set.len(), 2);
                for (i, owned) in tracks.iter().enumerate() {
                    let track = set.track(i).expect("track");
                    assert_eq!(track.kind(), kind);
                    assert_eq!(track.interpolation(), mode);
                    assert_eq!(track.encoding(), owned.encoding);
                    assert_eq!(track.name(), owned.name);
                    assert_eq!(track.target(), owned.target);
                    assert_eq!(track.times(), &owned.times[..]);
                    let values = match owned.encoding {
                        Encoding::Raw => {
                            assert_eq!(track.raw_values(), Some(&owned.values[..]));
                            owned.values.clone()
                        }
                        Encoding::Quantized => decoded(&track),
                    };
                    let mut cursor = Cursor::new();
                    let mut ts = probe_times(&mut rng, &owned.times);
                    ts.sort_by(f32::total_cmp);
                    for &t in &ts {
                        let want = curve_bits(kind, &owned.times, &values, mode, t);
                        assert_eq!(sample_bits(&track, None, t), want, "{kind:?} {mode:?} {t}");
                        assert_eq!(
                            sample_bits(&track, Some(&mut cursor), t),
                            want,
                            "{kind:?} {mode:?} cursor {t}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn raw_tracks_view_the_container_as_a_curve() {
    let mut rng = Rng(7);
    let tracks = [
        random_track(
            &mut rng,
            TrackKind::Vec3,
            Interpolation::CubicSpline,
            5,
            Encoding::Raw,
            1.0,
        ),
        random_track(
            &mut rng,
            TrackKind::Quat,
            Interpolation::Linear,
            5,
            Encoding::Raw,
            1.0,
        ),
        random_track(
            &mut rng,
            TrackKind::Float,
            Interpolation::Linear,
            5,
            Encoding::Quantized,
            1.0,
        ),
    ];
    let buf = write(&tracks);
    let set = TrackSet::from_bytes(buf.bytes()).expect("valid");
    let v3 = set.track(0).unwrap().typed::<[f32; 3]>().unwrap();
    let curve = v3.curve().expect("raw vectors are a curve");
    // Zero copy: the curve's keys are the container's bytes.
    let range = buf.bytes().as_ptr_range();
    assert!(range.contains(&(curve.times().as_ptr() as *const u8)));
    assert!(range.contains(&(curve.values().as_ptr() as *const u8)));
    let rot = set.track(1).unwrap().typed::<Quat>().unwrap();
    let curve = rot.curve().expect("raw rotations are a curve");
    assert!(range.contains(&(curve.values().as_ptr() as *const u8)));
    assert!(set
        .track(2)
        .unwrap()
        .typed::<f32>()
        .unwrap()
        .curve()
        .is_none());
    assert_eq!(
        set.track(0).unwrap().typed::<f32>().err(),
        Some(Error::InvalidParameter {
            what: "the value type does not match the track kind"
        })
    );
}

// ---- quantization: every stored component within the stated bound ----

/// Checks every stored component of quantized `track` against `owned`.
fn check_keys(track: &Track<'_>, owned: &Owned) {
    let n = owned.kind.components();
    let per = per_key(owned.interpolation);
    let bound = track.error_bound();
    for (s, orig) in owned.values.chunks_exact(n).enumerate() {
        let got: Vec<f32> = (0..n).map(|c| track.value(s, c)).collect();
        let key = per == 1 || s % 3 == 1;
        if owned.kind == TrackKind::Quat && key {
            let len = orig.iter().map(|x| x * x).sum::<f32>().sqrt();
            let glen = got.iter().map(|x| x * x).sum::<f32>().sqrt();
            let d = orig
                .iter()
                .zip(&got)
                .map(|(o, g)| (o / len - g / glen).powi(2))
                .sum::<f32>()
                .sqrt();
            assert!(d <= bound.value, "rotation key {s}: {d} > {}", bound.value);
            // The stated bound is the worst case of the fixed [-1, 1] range.
            assert!(bound.value <= 4.0 * (1.0 / 65535.0 + ROUNDING) * 1.001 + 1.0 / 1_048_576.0);
        }
        let b = if key { bound.value } else { bound.tangent };
        for c in 0..n {
            let base = if key { c } else { 2 * n + c };
            let min = track.ranges[base];
            let scale = track.ranges[base + n];
            let exact = quantization_bound(min, scale);
            let want = if owned.kind == TrackKind::Quat && key {
                orig[c] / orig.iter().map(|x| x * x).sum::<f32>().sqrt()
            } else {
                orig[c]
            };
            let e = (got[c] - want).abs();
            assert!(e <= exact, "value {s} comp {c}: {e} > {exact}");
            if owned.kind != TrackKind::Quat || !key {
                assert!(e <= b);
            }
        }
    }
}

#[test]
fn quantization_bound_is_half_a_step_plus_rounding() {
    // [−1, 1]: half a step is 1/65535.
    let s = step_for(-1.0, 1.0);
    assert!((2.0 / 65535.0..2.0 / 65535.0 * (1.0 + 1e-6)).contains(&s));
    let b = quantization_bound(-1.0, s);
    assert!(b > 0.5 * s && b < 0.5 * s + 1e-6);
    // A constant component is stored exactly.
    assert_eq!(step_for(3.0, 3.0), 0.0);
    assert_eq!(quantization_bound(3.0, 0.0), 3.0 * ROUNDING);
    // Values far from zero with a narrow range: the rounding term rules.
    let s = step_for(1000.0, 1000.01);
    assert!(1000.0 + 65535.0 * s >= 1000.01);
    assert!(quantization_bound(1000.0, s) >= 1000.01 * ROUNDING);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn quantized_within_bound(
        seed in 1u32..u32::MAX,
        k in 0usize..5,
        m in 0u8..6,
        keys in 1usize..40,
        amp_exp in -6i32..12,
        offset in -1000.0f32..1000.0,
    ) {
        let mut rng = Rng(seed);
        let kind = KINDS[k];
        let mode = mode_of(m, kind);
        let amp = 2f32.powi(amp_exp);
        let mut owned = random_track(&mut rng, kind, mode, keys, Encoding::Quantized, amp);
        let raw = owned.clone();
        if kind != TrackKind::Quat {
            for v in owned.values.iter_mut() {
                *v += offset;
            }
        }
        let raw = Owned { values: owned.values.clone(), encoding: Encoding::Raw, ..raw };
        let buf = write(&[owned.clone(), raw.clone()]);
        let set = TrackSet::from_bytes(buf.bytes()).expect("valid");
        let q = set.track(0).unwrap();
        check_keys(&q, &owned);

        // Samples between keys: the derived bounds for component-wise
        // tracks, plus the interpolation's own rounding.
        if kind == TrackKind::Quat {
            return Ok(());
        }
        let r = set.track(1).unwrap();
        let bound = q.error_bound();
        let factor = match mode {
            Interpolation::Cardinal { tension } => 1.0 + 0.5 * (1.0 - tension),
            _ => 1.0,
        };
        let n = kind.components();
        for &t in &probe_times(&mut rng, &owned.times) {
            let a = sample_bits(&q, None, t);
            let b = sample_bits(&r, None, t);
            let k = owned.times.partition_point(|&x| x <= t).clamp(1, owned.times.len().max(2) - 1);
            let dt = if owned.times.len() > 1 { owned.times[k] - owned.times[k - 1] } else { 0.0 };
            let allowed = factor * bound.value + 0.25 * dt * bound.tangent;
            for c in 0..n {
                let (x, y) = (f32::from_bits(a[c]), f32::from_bits(b[c]));
                let mag = y.abs() + offset.abs() + 4.0 * amp;
                prop_assert!(
                    (x - y).abs() <= allowed * 1.0001 + 4e-7 * mag,
                    "{:?} {:?} t {} comp {}: {} vs {} (allowed {})", kind, mode, t, c, x, y, allowed
                );
            }
        }
    }

    #[test]
    fn lanes_agree_with_scalar(
        seed in 1u32..u32::MAX,
        shape in proptest::collection::vec((0usize..5, 0u8..6, 1usize..12, any::<bool>()), 0..14),
        steps in proptest::collection::vec(-0.2f32..0.5, 1..20),
    ) {
        let mut rng = Rng(seed);
        let tracks: Vec<Owned> = shape
            .iter()
            .map(|&(k, m, keys, quant)| {
                let kind = KINDS[k];
                let enc = if quant { Encoding::Quantized } else { Encoding::Raw };
                random_track(&mut rng, kind, mode_of(m, kind), keys, enc, 3.0)
            })
            .collect();
        let buf = write(&tracks);
        let set = TrackSet::from_bytes(buf.bytes()).expect("valid");
        let n = set.component_count();
        prop_assert_eq!(n, tracks.iter().map(|t| t.kind.components()).sum::<usize>());
        let mut ka = vec![Cursor::new(); set.len()];
        let mut kb = vec![Cursor::new(); set.len()];
        let (mut a, mut b) = (vec![0.0; n], vec![0.0; n]);
        let mut t = -1.5;
        for s in steps {
            t += s;
            set.sample_all(t, &mut ka, &mut a).expect("lengths");
            reference::sample_all(&set, t, &mut kb, &mut b).expect("lengths");
            prop_assert_eq!(&ka, &kb);
            for (x, y) in a.iter().zip(&b) {
                prop_assert!((x - y).abs() <= 1e-5 * (1.0 + y.abs()), "{} vs {} at {}", x, y, t);
            }
        }
    }
}

#[test]
fn sample_all_layout_and_lengths() {
    let mut rng = Rng(99);
    let tracks = [
        random_track(
            &mut rng,
            TrackKind::Vec3,
            Interpolation::Step,
            4,
            Encoding::Raw,
            1.0,
        ),
        random_track(
            &mut rng,
            TrackKind::Quat,
            Interpolation::Linear,
            4,
            Encoding::Quantized,
            1.0,
        ),
        random_track(
            &mut rng,
            TrackKind::Float,
            Interpolation::Linear,
            4,
            Encoding::Raw,
            1.0,
        ),
    ];
    let buf = write(&tracks);
    let set = TrackSet::from_bytes(buf.bytes()).expect("valid");
    assert_eq!(set.component_count(), 8);
    let mut cursors = [Cursor::new(); 3];
    let mut out = [0.0; 8];
    // Step and exact keys give the keys' bits; the layout is track order.
    let t = tracks[0].times[2];
    set.sample_all(t, &mut cursors, &mut out).unwrap();
    assert_eq!(&out[..3], &tracks[0].values[6..9]);
    let q = set.track(1).unwrap().typed::<Quat>().unwrap().sample(t);
    assert_eq!(&out[3..7], &q.to_array());
    let f = set.track(2).unwrap().typed::<f32>().unwrap().sample(t);
    assert_eq!(out[7], f);
    assert_eq!(
        set.sample_all(0.0, &mut cursors[..2], &mut out),
        Err(Error::BadLength {
            buffer: "cursors",
            expected: 3,
            actual: 2
        })
    );
    assert_eq!(
        set.sample_all(0.0, &mut cursors, &mut out[..7]),
        Err(Error::BadLength {
            buffer: "output",
            expected: 8,
            actual: 7
        })
    );
    assert_eq!(set.find(&tracks[2].name), Some(2));
    assert_eq!(set.find("nope"), None);
    assert!(set.track(3).is_none());
}

#[test]
fn empty_set() {
    let buf = write(&[]);
    let set = TrackSet::from_bytes(buf.bytes()).expect("valid");
    assert!(set.is_empty());
    set.sample_all(0.0, &mut [], &mut []).unwrap();
}

// ---- validity: writer errors ----

#[test]
fn writer_errors() {
    let times = [0.0, 1.0];
    let values = [0.0, 1.0];
    let ok = TrackDesc {
        name: "a",
        target: None,
        kind: TrackKind::Float,
        interpolation: Interpolation::Linear,
        times: &times,
        values: &values,
        encoding: Encoding::Quantized,
    };
    let size = track_set_size(&[ok]).unwrap();
    let mut buf = Buf::new(size + 16);
    assert_eq!(
        write_track_set(&[ok], &mut buf.bytes_mut()[..size - 1]),
        Err(Error::BufferTooSmall {
            needed: size,
            actual: size - 1
        })
    );
    assert_eq!(
        write_track_set(&[ok], &mut buf.bytes_mut()[1..]),
        Err(Error::Misaligned)
    );
    let e = |d: TrackDesc<'_>| track_set_size(&[d]).err();
    assert_eq!(
        e(TrackDesc {
            values: &values[..1],
            ..ok
        }),
        Some(Error::BadLength {
            buffer: "key values",
            expected: 2,
            actual: 1
        })
    );
    assert!(matches!(
        e(TrackDesc {
            target: Some(NO_TARGET),
            ..ok
        }),
        Some(Error::InvalidParameter { .. })
    ));
    assert!(matches!(
        e(TrackDesc {
            interpolation: Interpolation::Slerp,
            ..ok
        }),
        Some(Error::InvalidParameter { .. })
    ));
    assert!(matches!(
        e(TrackDesc {
            times: &[1.0, 0.0],
            ..ok
        }),
        Some(Error::InvalidParameter { .. })
    ));
    assert_eq!(
        e(TrackDesc {
            values: &[0.0, f32::NAN],
            ..ok
        }),
        Some(Error::NonFinite { what: "key value" })
    );
    assert!(matches!(
        e(TrackDesc {
            values: &[0.0, f32::MAX],
            ..ok
        }),
        Some(Error::InvalidParameter { .. })
    ));
    assert!(e(TrackDesc {
        values: &[0.0, f32::MAX],
        encoding: Encoding::Raw,
        ..ok
    })
    .is_none());
    let q = [0.0, 0.0, 0.0, 1.1];
    assert!(matches!(
        e(TrackDesc {
            kind: TrackKind::Quat,
            times: &[0.0],
            values: &q,
            ..ok
        }),
        Some(Error::InvalidParameter { .. })
    ));
    assert!(matches!(
        e(TrackDesc {
            interpolation: Interpolation::Cardinal { tension: 2.0 },
            ..ok
        }),
        Some(Error::InvalidParameter { .. })
    ));
}

// ---- validity: hostile containers give errors, never panics ----

fn sample_everything(set: &TrackSet<'_>) {
    let mut cursors = vec![Cursor::new(); set.len()];
    let mut out = vec![0.0; set.component_count()];
    for t in [-10.0, 0.0, 0.3, 1.0, 2.5, 100.0, f32::NAN] {
        set.sample_all(t, &mut cursors, &mut out).unwrap();
        reference::sample_all(set, t, &mut cursors, &mut out).unwrap();
        for i in 0..set.len() {
            let tr = set.track(i).unwrap();
            let _ = sample_bits(&tr, None, t);
            let _ = tr.error_bound();
        }
    }
}

fn mixed_set() -> (Vec<Owned>, Buf) {
    let mut rng = Rng(0xdead_beef);
    let mut tracks = Vec::new();
    for (i, kind) in KINDS.into_iter().enumerate() {
        for enc in [Encoding::Raw, Encoding::Quantized] {
            let mode = mode_of(i as u8 + 3 * (enc == Encoding::Raw) as u8, kind);
            tracks.push(random_track(&mut rng, kind, mode, 3, enc, 1.0));
        }
    }
    let buf = write(&tracks);
    (tracks, buf)
}

#[test]
fn truncations_and_byte_flips_never_panic() {
    let (_, buf) = mixed_set();
    let bytes = buf.bytes();
    sample_everything(&TrackSet::from_bytes(bytes).unwrap());
    for len in 0..bytes.len() {
        assert!(
            TrackSet::from_bytes(&bytes[..len]).is_err(),
            "truncated at {len}"
        );
    }
    let mut copy = Buf::new(bytes.len());
    for at in 0..bytes.len() {
        for flip in [0x01u8, 0x80, 0xff] {
            copy.bytes_mut().copy_from_slice(bytes);
            copy.bytes_mut()[at] ^= flip;
            let r = TrackSet::from_bytes(copy.bytes());
            if at < HEADER {
                assert!(r.is_err(), "header byte {at} ^ {flip:#x} accepted");
            }
            if let Ok(set) = r {
                sample_everything(&set);
            }
        }
    }
}

/// Field `word` (a 4-byte index) of record `i`.
fn record_word(buf: &mut Buf, i: usize, word: usize) -> &mut [u8] {
    let at = HEADER + RECORD * i + 4 * word;
    &mut buf.bytes_mut()[at..at + 4]
}

#[test]
fn specific_corruptions() {
    let (tracks, good) = mixed_set();
    let fresh = || {
        let mut b = Buf::new(good.bytes().len());
        b.bytes_mut().copy_from_slice(good.bytes());
        b
    };
    let check = |b: &Buf| TrackSet::from_bytes(b.bytes()).err();
    let corrupt = |e: Option<Error>| matches!(e, Some(Error::Corrupt { .. }));

    // Magic, version, alignment.
    let mut b = fresh();
    b.bytes_mut()[0] = b'X';
    assert_eq!(check(&b), Some(Error::BadMagic));
    let mut b = fresh();
    b.bytes_mut()[8] = 2;
    assert_eq!(check(&b), Some(Error::UnsupportedVersion { found: 2 }));
    let mut big = Buf::new(good.bytes().len() + 16);
    big.bytes_mut()[4..4 + good.bytes().len()].copy_from_slice(good.bytes());
    assert_eq!(
        TrackSet::from_bytes(&big.bytes()[4..4 + good.bytes().len()]).err(),
        Some(Error::Misaligned)
    );
    // Huge counts: overflow or disagreement with the total, never a panic.
    for field in [12usize, 20, 24, 28, 32, 36] {
        for v in [u32::MAX, u32::MAX / 2, 1 << 30, 1 << 28] {
            let mut b = fresh();
            b.bytes_mut()[field..field + 4].copy_from_slice(&v.to_le_bytes());
            assert!(corrupt(check(&b)), "field {field} = {v}");
        }
    }
    // A total that matches hostile counts: truncated.
    let mut b = fresh();
    b.bytes_mut()[20..24].copy_from_slice(&(1u32 << 20).to_le_bytes());
    let c = Counts {
        tracks: le_u32(b.bytes(), 12) as usize,
        times: 1 << 20,
        raw: le_u32(b.bytes(), 24) as usize,
        codes: le_u32(b.bytes(), 28) as usize,
        ranges: le_u32(b.bytes(), 32) as usize,
        names: le_u32(b.bytes(), 36) as usize,
    };
    let t = c.layout().unwrap().total as u32;
    b.bytes_mut()[16..20].copy_from_slice(&t.to_le_bytes());
    assert!(matches!(check(&b), Some(Error::Truncated { .. })));

    // Track 0 is a raw float track: unsorted times, a NaN value, a huge
    // key count, offsets out of range.
    let times_at = Counts {
        tracks: tracks.len(),
        ..Counts::default()
    }
    .layout()
    .unwrap()
    .times
    .0;
    let mut b = fresh();
    let t1 = tracks[0].times[1];
    b.bytes_mut()[times_at..times_at + 4].copy_from_slice(&(t1 + 1.0).to_le_bytes());
    assert!(matches!(check(&b), Some(Error::InvalidParameter { .. })));
    let mut b = fresh();
    b.bytes_mut()[times_at..times_at + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    assert_eq!(check(&b), Some(Error::NonFinite { what: "key time" }));
    let raw_at = {
        let l = TrackSet::from_bytes(good.bytes()).unwrap();
        let p = l.track(0).unwrap().raw_values().unwrap().as_ptr() as usize;
        p - good.bytes().as_ptr() as usize
    };
    let mut b = fresh();
    b.bytes_mut()[raw_at..raw_at + 4].copy_from_slice(&f32::INFINITY.to_le_bytes());
    // Track 0 is a CUBICSPLINE track: its first value is a tangent.
    assert_eq!(
        check(&b),
        Some(Error::NonFinite {
            what: "key tangent"
        })
    );
    for (word, v) in [
        (2usize, u32::MAX), // keys
        (2, 0),             // no keys
        (3, u32::MAX),      // times offset
        (4, u32::MAX - 1),  // values offset
        (5, 1),             // a raw track with ranges
        (7, u32::MAX),      // name offset
        (8, u32::MAX),      // name length
        (9, 1),             // reserved
    ] {
        let mut b = fresh();
        record_word(&mut b, 0, word).copy_from_slice(&v.to_le_bytes());
        assert!(corrupt(check(&b)), "word {word} = {v}: {:?}", check(&b));
    }
    // Kind, interpolation, encoding, reserved byte; a tension outside
    // cardinal splines; a bad tension.
    for (byte, v) in [(0usize, 5u8), (1, 5), (2, 2), (3, 1)] {
        let mut b = fresh();
        record_word(&mut b, 0, 0)[byte] = v;
        assert!(corrupt(check(&b)), "byte {byte} = {v}");
    }
    let mut b = fresh();
    record_word(&mut b, 0, 1).copy_from_slice(&0.5f32.to_le_bytes());
    assert!(corrupt(check(&b)));
    // Slerp on a float track.
    let mut b = fresh();
    record_word(&mut b, 0, 0)[1] = 2;
    assert!(matches!(check(&b), Some(Error::InvalidParameter { .. })));
    // Track 1 is a quantized float track: a NaN range, a negative scale.
    let set = TrackSet::from_bytes(good.bytes()).unwrap();
    let ranges_at = set.ranges.as_ptr() as usize - good.bytes().as_ptr() as usize;
    for v in [f32::NAN, -1.0, f32::MAX] {
        let mut b = fresh();
        b.bytes_mut()[ranges_at + 4..ranges_at + 8].copy_from_slice(&v.to_le_bytes());
        assert!(corrupt(check(&b)), "scale {v}");
    }
    // Track 9 is a quantized rotation track: codes that decode to a
    // rotation far from unit length.
    let q = set.track(9).unwrap();
    assert_eq!(q.kind(), TrackKind::Quat);
    let codes_at = q.codes.as_ptr() as usize - good.bytes().as_ptr() as usize;
    let per = per_key(q.interpolation());
    let key = 4 * (per / 2);
    let mut b = fresh();
    for c in 0..4 {
        let at = codes_at + 2 * (key + c);
        b.bytes_mut()[at..at + 2].copy_from_slice(&0u16.to_le_bytes());
    }
    let e = check(&b);
    assert!(
        matches!(
            e,
            Some(Error::InvalidParameter { .. }) | Some(Error::NonFinite { .. })
        ),
        "{e:?}"
    );
    // A name table that is not UTF-8.
    let names_at = set.names.as_ptr() as usize - good.bytes().as_ptr() as usize;
    let mut b = fresh();
    b.bytes_mut()[names_at] = 0xff;
    assert!(corrupt(check(&b)));
}
