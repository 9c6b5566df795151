use super::*;
use crate::math::{Quat, Vec3};
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

/// `n` strictly increasing, unevenly spaced times from `start`.
fn times(rng: &mut Rng, start: f32, n: usize) -> [f32; 64] {
    let mut t = [0.0; 64];
    let mut now = start;
    for x in t.iter_mut().take(n) {
        *x = now;
        now += rng.range(0.01, 0.7);
    }
    t
}

fn close(a: f32, b: f64, tol: f64) -> bool {
    (f64::from(a) - b).abs() <= tol * (1.0 + b.abs())
}

/// Same rotation (q and −q agree): components within `tol` once on one
/// hemisphere.
fn same_rotation(a: Quat, b: Quat, tol: f32) -> bool {
    let b = if a.dot(b) < 0.0 { -b } else { b };
    let d = a
        .to_array()
        .into_iter()
        .zip(b.to_array())
        .map(|(x, y)| (x - y).abs());
    d.fold(0.0, f32::max) <= tol
}

fn approx(a: f32, b: f32) {
    assert!((a - b).abs() <= 1e-6 * (1.0 + b.abs()), "{a} vs {b}");
}

const T3: [f32; 3] = [0.0, 1.0, 3.0];
const P3: [f32; 3] = [0.0, 2.0, 3.0];

// ---- validity: every bad input gives its error ----

#[test]
fn errors() {
    let lin = Interpolation::Linear;
    let e = |r: Result<Curve<'_, f32>, Error>| r.err();
    let ip = |what| Some(Error::InvalidParameter { what });
    assert_eq!(
        e(Curve::new(&[], &[], lin)),
        ip("a curve needs at least one key")
    );
    let nf = |what| Some(Error::NonFinite { what });
    assert_eq!(
        e(Curve::new(&[0.0, f32::NAN], &[1.0, 2.0], lin)),
        nf("key time")
    );
    assert_eq!(
        e(Curve::new(&[f32::NEG_INFINITY, 0.0], &[1.0, 2.0], lin)),
        nf("key time")
    );
    let order = ip("key times must be strictly increasing");
    assert_eq!(e(Curve::new(&[0.0, 2.0, 1.0], &P3, lin)), order);
    assert_eq!(e(Curve::new(&[0.0, 1.0, 1.0], &P3, lin)), order);
    assert_eq!(
        e(Curve::new(&[-3e38, 3e38], &[1.0, 2.0], lin)),
        ip("key times must span less than f32::MAX")
    );
    let bad_len = |expected, actual| {
        Some(Error::BadLength {
            buffer: "key values",
            expected,
            actual,
        })
    };
    assert_eq!(e(Curve::new(&T3, &[1.0, 2.0], lin)), bad_len(3, 2));
    assert_eq!(
        e(Curve::new(&T3, &P3, Interpolation::CubicSpline)),
        bad_len(9, 3)
    );
    assert_eq!(
        e(Curve::new(&T3, &[0.0, f32::NAN, 1.0], lin)),
        nf("key value")
    );
    assert_eq!(
        e(Curve::new(
            &T3,
            &[0.0, f32::INFINITY, 1.0],
            Interpolation::Step
        )),
        nf("key value")
    );
    let mut spline = [0.0f32; 9];
    spline[4] = f32::NAN;
    assert_eq!(
        e(Curve::new(&T3, &spline, Interpolation::CubicSpline)),
        nf("key value")
    );
    for i in [0, 2, 3, 8] {
        let mut spline = [0.0f32; 9];
        spline[i] = f32::NAN;
        assert_eq!(
            e(Curve::new(&T3, &spline, Interpolation::CubicSpline)),
            nf("key tangent")
        );
    }
    assert_eq!(
        e(Curve::new(&T3, &P3, Interpolation::Slerp)),
        ip("slerp needs rotation (Quat) keys")
    );
    assert_eq!(
        e(Curve::new(
            &T3,
            &P3,
            Interpolation::Cardinal { tension: f32::NAN }
        )),
        nf("tension")
    );
    for tension in [1.5, -1.01, f32::MAX] {
        assert_eq!(
            e(Curve::new(&T3, &P3, Interpolation::Cardinal { tension })),
            ip("tension must be in [-1, 1]")
        );
    }
    let q = Quat::IDENTITY;
    let short = ip("rotation key length must be at least 1e-6 and its square finite");
    for bad in [
        Quat::new(0.0, 0.0, 0.0, 0.0),
        Quat::new(1e-7, 0.0, 0.0, 0.0),
        Quat::new(0.0, 0.0, 2e19, 1.0),
    ] {
        assert_eq!(Curve::new(&T3, &[q, bad, q], lin).err(), short);
    }
    assert_eq!(
        Curve::new(&T3, &[q, Quat::new(f32::NAN, 0.0, 0.0, 1.0), q], lin).err(),
        nf("key value")
    );
    let mut qs = [q; 9];
    qs[5] = Quat::new(0.0, f32::INFINITY, 0.0, 0.0);
    assert_eq!(
        Curve::new(&T3, &qs, Interpolation::CubicSpline).err(),
        nf("key tangent")
    );
    // Vectors: one bad component is enough.
    assert_eq!(
        Curve::new(&T3, &[[0.0; 3], [0.0, 0.0, f32::NAN], [0.0; 3]], lin).err(),
        nf("key value")
    );
}

#[test]
fn sample_many_length_errors_write_nothing() {
    let c = Curve::new(&T3, &P3, Interpolation::Linear).unwrap();
    let curves = [c; 3];
    let mut cursors = [Cursor::new(); 3];
    let mut out = [7.0; 3];
    for many in [sample_many, reference::sample_many] {
        assert_eq!(
            many(&curves, &mut cursors[..2], 0.5, &mut out),
            Err(Error::BadLength {
                buffer: "cursors",
                expected: 3,
                actual: 2
            })
        );
        assert_eq!(
            many(&curves, &mut cursors, 0.5, &mut out[..1]),
            Err(Error::BadLength {
                buffer: "output",
                expected: 3,
                actual: 1
            })
        );
        assert_eq!(out, [7.0; 3]);
    }
}

// ---- hand-computed values ----

#[test]
fn hermite_basis_by_hand() {
    assert_eq!(hermite_basis(0.0), [1.0, 0.0, 0.0, 0.0]);
    assert_eq!(hermite_basis(1.0), [0.0, 0.0, 1.0, 0.0]);
    assert_eq!(hermite_basis(0.5), [0.5, 0.125, 0.5, -0.125]);
    // u = 1/4: u² = 1/16, u³ = 1/64.
    assert_eq!(hermite_basis(0.25), [0.84375, 0.140625, 0.15625, -0.046875]);
    // u = 3/4: u² = 9/16, u³ = 27/64.
    assert_eq!(hermite_basis(0.75), [0.15625, 0.046875, 0.84375, -0.140625]);
}

#[test]
fn step_and_linear_by_hand() {
    let step = Curve::new(&T3, &P3, Interpolation::Step).unwrap();
    let lin = Curve::new(&T3, &P3, Interpolation::Linear).unwrap();
    for (t, s, l) in [
        (-1.0, 0.0, 0.0),
        (0.0, 0.0, 0.0),
        (0.5, 0.0, 1.0),
        (1.0, 2.0, 2.0),
        (2.0, 2.0, 2.5),
        (2.5, 2.0, 2.75),
        (3.0, 3.0, 3.0),
        (9.0, 3.0, 3.0),
        (f32::INFINITY, 3.0, 3.0),
        (f32::NEG_INFINITY, 0.0, 0.0),
        (f32::NAN, 0.0, 0.0),
    ] {
        assert_eq!(step.sample(t), s, "step at {t}");
        assert_eq!(lin.sample(t), l, "linear at {t}");
    }
    // One key: constant.
    let one = Curve::new(&[2.0], &[[1.0, 2.0]], Interpolation::CATMULL_ROM).unwrap();
    let mut k = Cursor::new();
    for t in [-5.0, 2.0, 7.0, f32::NAN] {
        assert_eq!(one.sample(t), [1.0, 2.0]);
        assert_eq!(one.sample_with(&mut k, t), [1.0, 2.0]);
    }
    assert_eq!(
        (one.len(), one.is_empty(), one.range()),
        (1, false, (2.0, 2.0))
    );
}

#[test]
fn catmull_rom_by_hand() {
    // Tangents: m0 = (2 − 0)/(1 − 0) = 2 (one-sided), m1 = (3 − 0)/(3 − 0)
    // = 1, m2 = (3 − 2)/(3 − 1) = 0.5 (one-sided).
    // Segment 0 (Δ = 1) at u = ½: ½·0 + ⅛·2 + ½·2 − ⅛·1 = 1.125.
    // Segment 1 (Δ = 2) at u = ½: ½·2 + ⅛·2·1 + ½·3 − ⅛·2·0.5 = 2.625.
    let cr = Curve::new(&T3, &P3, Interpolation::CATMULL_ROM).unwrap();
    approx(cr.sample(0.5), 1.125);
    approx(cr.sample(2.0), 2.625);
    for (t, p) in T3.iter().zip(P3) {
        assert_eq!(cr.sample(*t), p);
    }
    // Tension ½ halves the tangents: ½·2 + ⅛·1 − ⅛·0.5 = 1.0625.
    let card = Curve::new(&T3, &P3, Interpolation::Cardinal { tension: 0.5 }).unwrap();
    approx(card.sample(0.5), 1.0625);
    // Tension 1: zero tangents, smoothstep between keys.
    let flat = Curve::new(&T3, &P3, Interpolation::Cardinal { tension: 1.0 }).unwrap();
    assert_eq!(flat.sample(0.5), 1.0);
    assert_eq!(flat.sample(1.5), 2.0 + 1.0 * 0.15625);
    // Vectors: component-wise, the same numbers.
    let v = [[0.0, 0.0, 0.0], [2.0, 4.0, -2.0], [3.0, 6.0, -3.0]];
    let cv = Curve::new(&T3, &v, Interpolation::CATMULL_ROM).unwrap();
    for (got, want) in [
        (cv.sample(0.5), [1.125, 2.25, -1.125]),
        (cv.sample(2.0), [2.625, 5.25, -2.625]),
    ] {
        for c in 0..3 {
            approx(got[c], want[c]);
        }
    }
}

/// glTF 2.0, Appendix C (Interpolation), CUBICSPLINE, written out in f64
/// apart from the crate's code:
/// `p(t) = (2t³ − 3t² + 1)·v_k + t_d(t³ − 2t² + t)·b_k + (−2t³ + 3t²)·v_k+1
/// + t_d(t³ − t²)·a_k+1`, `t = (t_c − t_k)/t_d`, `t_d = t_k+1 − t_k`,
/// output per key `[a_k, v_k, b_k]`.
fn gltf_cubicspline(times: &[f32], out: &[f32], comps: usize, tc: f32) -> [f64; 4] {
    let tc = f64::from(tc);
    let k = times
        .windows(2)
        .position(|w| f64::from(w[0]) <= tc && tc < f64::from(w[1]))
        .unwrap();
    let (tk, tk1) = (f64::from(times[k]), f64::from(times[k + 1]));
    let td = tk1 - tk;
    let t = (tc - tk) / td;
    let (t2, t3) = (t * t, t * t * t);
    let at = |key: usize, part: usize, c: usize| f64::from(out[(key * 3 + part) * comps + c]);
    let mut p = [0.0; 4];
    for (c, p) in p.iter_mut().enumerate().take(comps) {
        let vk = at(k, 1, c);
        let bk = at(k, 2, c);
        let vk1 = at(k + 1, 1, c);
        let ak1 = at(k + 1, 0, c);
        *p = (2.0 * t3 - 3.0 * t2 + 1.0) * vk
            + td * (t3 - 2.0 * t2 + t) * bk
            + (-2.0 * t3 + 3.0 * t2) * vk1
            + td * (t3 - t2) * ak1;
    }
    p
}

#[test]
fn cubicspline_is_gltf() {
    let mut rng = Rng(0x9e37_79b9);
    let n = 9;
    let t = times(&mut rng, -0.4, n);
    let t = &t[..n];
    let mut flat = [0.0f32; 9 * 3 * 3];
    for x in flat.iter_mut() {
        *x = rng.range(-3.0, 3.0);
    }
    let vec3: &[[f32; 3]] = bytemuck::cast_slice(&flat);
    let curve = Curve::new(t, vec3, Interpolation::CubicSpline).unwrap();
    // At the keys: the key values, bit for bit.
    for (k, &tk) in t.iter().enumerate() {
        assert_eq!(curve.sample(tk), vec3[3 * k + 1]);
    }
    // Between keys: the spec's formula.
    for i in 0..400 {
        let tc = t[0] + (t[n - 1] - t[0]) * (i as f32 + 0.5) / 400.0;
        let want = gltf_cubicspline(t, &flat, 3, tc);
        let got = curve.sample(tc);
        for c in 0..3 {
            assert!(close(got[c], want[c], 1e-5), "{tc}: {got:?} vs {want:?}");
        }
    }
    // Rotations: the same sum, then normalised (glTF: "normalized after
    // interpolation").
    let mut qflat = [0.0f32; 9 * 3 * 4];
    for (i, x) in qflat.iter_mut().enumerate() {
        // Values near the identity-ish unit sphere, small tangents.
        *x = if i % 12 >= 4 && i % 12 < 8 {
            rng.range(0.2, 1.0)
        } else {
            rng.range(-0.5, 0.5)
        };
    }
    let q4: &[[f32; 4]] = bytemuck::cast_slice(&qflat);
    let quats: [Quat; 27] = core::array::from_fn(|i| {
        let [x, y, z, w] = q4[i];
        if i % 3 == 1 {
            Quat::new(x, y, z, w).normalize()
        } else {
            Quat::new(x, y, z, w)
        }
    });
    let qflat: [f32; 108] = core::array::from_fn(|i| quats[i / 4].to_array()[i % 4]);
    let qc = Curve::new(t, &quats, Interpolation::CubicSpline).unwrap();
    for (k, &tk) in t.iter().enumerate() {
        let got = qc.sample(tk);
        let key = quats[3 * k + 1];
        assert!((got.dot(key) - 1.0).abs() < 1e-6);
    }
    for i in 0..400 {
        let tc = t[0] + (t[n - 1] - t[0]) * (i as f32 + 0.5) / 400.0;
        let want = gltf_cubicspline(t, &qflat, 4, tc);
        let len = want.iter().map(|c| c * c).sum::<f64>().sqrt();
        let got = qc.sample(tc).to_array();
        for c in 0..4 {
            assert!(close(got[c], want[c] / len, 1e-5), "{tc}: {got:?}");
        }
    }
}

// ---- rotations ----

#[test]
fn rotations_take_the_short_arc() {
    let z = |deg: f32| Quat::from_rotation_z(deg.to_radians());
    let t = [0.0, 1.0];
    // q and −q: one rotation, held all the way, no NaN.
    let q = z(40.0);
    for mode in [
        Interpolation::Linear,
        Interpolation::Slerp,
        Interpolation::CATMULL_ROM,
        Interpolation::Step,
    ] {
        let keys = [q, -q];
        let c = Curve::new(&t, &keys, mode).unwrap();
        for i in 0..=10 {
            let s = c.sample(i as f32 / 10.0);
            assert!(s.is_finite());
            assert!(same_rotation(s, q, 1e-6), "{mode:?}");
        }
    }
    // 0° → 120° with the second key stored on the far hemisphere.
    let keys = [z(0.0), -z(120.0)];
    let slerp = Curve::new(&t, &keys, Interpolation::Slerp).unwrap();
    let nlerp = Curve::new(&t, &keys, Interpolation::Linear).unwrap();
    for (u, deg) in [(0.25, 30.0), (0.5, 60.0), (0.9, 108.0)] {
        assert!(same_rotation(slerp.sample(u), z(deg), 2e-6), "slerp {u}");
    }
    // nlerp: the midpoint is exact, elsewhere only monotonic.
    assert!(same_rotation(nlerp.sample(0.5), z(60.0), 2e-6));
    let angle = |q: Quat| 2.0 * libm::atan2f(q.z * q.w.signum(), q.w.abs());
    let mut last = -1.0;
    for i in 0..=20 {
        let s = nlerp.sample(i as f32 / 20.0);
        assert!((s.length() - 1.0).abs() < 1e-6);
        assert!(angle(s) > last);
        last = angle(s);
    }
    // Unnormalised keys come out unit length.
    let big_keys = [q.scale(3.0), z(90.0).scale(0.5)];
    let big = Curve::new(&t, &big_keys, Interpolation::Slerp).unwrap();
    assert!((big.sample(0.3).length() - 1.0).abs() < 1e-6);
    assert!((big.sample(-1.0).length() - 1.0).abs() < 1e-6);
}

/// Rotations about one axis: the squad-style curve is the float cardinal
/// spline of the half-angle, whatever the key spacing and key signs.
#[test]
fn squad_about_one_axis_is_cardinal_of_half_angle() {
    let times = [0.0, 0.3, 1.0, 1.2, 2.5, 2.6];
    let angles = [0.0f32, 0.5, 1.7, 2.0, 3.5, 3.0];
    let half = angles.map(|a| 0.5 * a);
    let quats: [Quat; 6] = core::array::from_fn(|k| {
        let q = Quat::from_rotation_z(angles[k]);
        if k % 2 == 1 {
            -q
        } else {
            q
        }
    });
    for tension in [0.0, 0.3, -0.5, 1.0] {
        let mode = Interpolation::Cardinal { tension };
        let qc = Curve::new(&times, &quats, mode).unwrap();
        let fc = Curve::new(&times, &half, mode).unwrap();
        for i in 0..=500 {
            let t = -0.1 + 2.8 * i as f32 / 500.0;
            let want = fc.sample(t);
            let q = qc.sample(t);
            assert!(q.x.abs() < 1e-6 && q.y.abs() < 1e-6);
            let expect = Quat::new(0.0, 0.0, libm::sinf(want), libm::cosf(want));
            assert!(
                same_rotation(q, expect, 1e-5),
                "{t} {tension}: {q:?} vs {want}"
            );
        }
    }
}

/// A general rotation curve through squad-style Hermite: the keys exactly,
/// and the same angular velocity on both sides of each inner key.
#[test]
fn squad_is_c1_across_keys() {
    let mut rng = Rng(0x1234_5678);
    // Uneven spacing, but not so tight that the one-sided differences
    // below (step h) stop resolving the velocity.
    let t: &[f32] = &[0.0, 0.4, 1.3, 1.6, 2.5, 3.3, 3.5];
    let n = t.len();
    let keys: [Quat; 7] = core::array::from_fn(|_| {
        let axis = Vec3::new(
            rng.range(-1.0, 1.0),
            rng.range(-1.0, 1.0),
            rng.range(-1.0, 1.0),
        )
        .try_normalize()
        .unwrap_or(Vec3::X);
        let q = Quat::from_axis_angle(axis, rng.range(-1.5, 1.5));
        if rng.next() < 0.5 {
            -q
        } else {
            q
        }
    });
    let c = Curve::new(t, &keys, Interpolation::CATMULL_ROM).unwrap();
    for (k, &tk) in t.iter().enumerate() {
        assert!(same_rotation(c.sample(tk), keys[k], 1e-6));
    }
    let log = |q: Quat| {
        let q = if q.w < 0.0 { -q } else { q };
        let s = (q.x * q.x + q.y * q.y + q.z * q.z).sqrt();
        let k = if s > 0.0 {
            libm::atan2f(s, q.w) / s
        } else {
            1.0
        };
        Vec3::new(q.x * k, q.y * k, q.z * k)
    };
    // One-sided difference quotients with Richardson extrapolation
    // (2·D(h/2) − D(h)), so the curvature does not swamp the comparison.
    let h = 4e-3;
    for (k, &tk) in t.iter().enumerate().take(n - 1).skip(1) {
        let q = c.sample(tk);
        let right = |h: f32| log(q.conjugate() * c.sample(tk + h)) * (1.0 / h);
        let left = |h: f32| log(c.sample(tk - h).conjugate() * q) * (1.0 / h);
        let right = right(h / 2.0) * 2.0 - right(h);
        let left = left(h / 2.0) * 2.0 - left(h);
        let scale = 1.0 + right.length();
        assert!(
            (right - left).length() < 2e-3 * scale,
            "key {k}: {left:?} vs {right:?}"
        );
    }
}

// ---- cursor and lanes ----

fn mode_of(i: u8) -> Interpolation {
    match i % 4 {
        0 => Interpolation::Step,
        1 => Interpolation::Linear,
        2 => Interpolation::CubicSpline,
        _ => Interpolation::Cardinal { tension: 0.25 },
    }
}

proptest! {
    #[test]
    fn cursor_equals_binary_search(
        n in 1usize..40,
        seed in 1u32..u32::MAX,
        mode in 0u8..4,
        steps in proptest::collection::vec((-0.3f32..0.3, 0u8..10, -2.0f32..30.0), 1..120),
    ) {
        let mut rng = Rng(seed);
        let start = rng.range(-1.0, 1.0);
        let t = times(&mut rng, start, n);
        let t = &t[..n];
        let mode = mode_of(mode);
        let per = if mode == Interpolation::CubicSpline { 3 } else { 1 };
        let mut v = [0.0f32; 3 * 64];
        let mut q = [Quat::IDENTITY; 3 * 64];
        for (x, q) in v.iter_mut().zip(q.iter_mut()) {
            *x = rng.range(-5.0, 5.0);
            *q = Quat::new(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), rng.range(0.1, 1.0));
        }
        let fc = Curve::new(t, &v[..n * per], mode).unwrap();
        let qc = Curve::new(t, &q[..n * per], mode).unwrap();
        let slerp = Curve::new(t, &q[..n], Interpolation::Slerp).unwrap();
        let (mut kf, mut kq, mut ks) = (Cursor::new(), Cursor::new(), Cursor::new());
        let mut now = t[0] - 0.1;
        for (dt, kind, jump) in steps {
            // Mostly small steps either way, sometimes a jump anywhere.
            now = if kind == 0 { jump } else { now + dt };
            prop_assert_eq!(fc.sample_with(&mut kf, now).to_bits(), fc.sample(now).to_bits());
            let (a, b) = (qc.sample_with(&mut kq, now), qc.sample(now));
            prop_assert_eq!(a.to_array().map(f32::to_bits), b.to_array().map(f32::to_bits));
            let (a, b) = (slerp.sample_with(&mut ks, now), slerp.sample(now));
            prop_assert_eq!(a.to_array().map(f32::to_bits), b.to_array().map(f32::to_bits));
            prop_assert!(a.is_finite() && b.is_finite());
            prop_assert!(kf.key() + 1 < n.max(2));
        }
    }

    #[test]
    fn lanes_match_scalar(
        seed in 1u32..u32::MAX,
        lens in proptest::array::uniform4(1usize..20),
        modes in proptest::array::uniform4(0u8..4),
        ts in proptest::collection::vec(proptest::array::uniform4(-1.0f32..12.0), 1..30),
        count in 1usize..11,
    ) {
        let mut rng = Rng(seed);
        let mut tbuf = [[0.0f32; 64]; 4];
        let mut vbuf = [[0.0f32; 192]; 4];
        for l in 0..4 {
            let start = rng.range(-0.5, 0.5);
            tbuf[l] = times(&mut rng, start, lens[l]);
            for x in vbuf[l].iter_mut() {
                *x = rng.range(-10.0, 10.0);
            }
        }
        let curves: [Curve<'_, f32>; 4] = core::array::from_fn(|l| {
            let mode = mode_of(modes[l]);
            let per = if mode == Interpolation::CubicSpline { 3 } else { 1 };
            Curve::new(&tbuf[l][..lens[l]], &vbuf[l][..lens[l] * per], mode).unwrap()
        });
        let mut lane_k = [Cursor::new(); 4];
        let mut ref_k = [Cursor::new(); 4];
        for t in &ts {
            let tv = f32x4::new(*t);
            let a = sample4(&curves, &mut lane_k, tv).to_array();
            let b = reference::sample4(&curves, &mut ref_k, tv).to_array();
            for l in 0..4 {
                prop_assert!(close(a[l], f64::from(b[l]), 1e-5), "lane {}: {} vs {}", l, a[l], b[l]);
            }
            prop_assert_eq!(lane_k, ref_k);
        }
        // Many curves at one time, with a group of fewer than four at the end.
        let many: [Curve<'_, f32>; 10] = core::array::from_fn(|i| curves[(i * 7 + 1) % 4]);
        let (mut ka, mut kb) = ([Cursor::new(); 10], [Cursor::new(); 10]);
        let (mut oa, mut ob) = ([0.0f32; 10], [0.0f32; 10]);
        for t in &ts {
            sample_many(&many[..count], &mut ka[..count], t[0], &mut oa[..count]).unwrap();
            reference::sample_many(&many[..count], &mut kb[..count], t[0], &mut ob[..count]).unwrap();
            for i in 0..count {
                prop_assert!(close(oa[i], f64::from(ob[i]), 1e-5));
            }
            prop_assert_eq!(ka, kb);
        }
    }
}

#[test]
fn lanes_hold_keys_exactly() {
    let v = [0.1f32, -7.3, 2.9];
    let spline = [1.0, 0.1, -4.0, 2.0, -7.3, 5.0, 3.0, 2.9, 0.5];
    let curves = [
        Curve::new(&T3, &v, Interpolation::Step).unwrap(),
        Curve::new(&T3, &v, Interpolation::Linear).unwrap(),
        Curve::new(&T3, &spline, Interpolation::CubicSpline).unwrap(),
        Curve::new(&T3, &v, Interpolation::CATMULL_ROM).unwrap(),
    ];
    let mut k = [Cursor::new(); 4];
    for (i, &t) in [-1.0, 0.0, 1.0, 3.0, 4.0, f32::NAN].iter().enumerate() {
        let got = sample4(&curves, &mut k, f32x4::splat(t)).to_array();
        let key = [0.1, 0.1, -7.3, 2.9, 2.9, 0.1][i];
        assert_eq!(got, [key; 4], "{t}");
    }
    // Step lanes between keys: the earlier key's bits.
    let got = sample4(&curves, &mut k, f32x4::splat(2.5)).to_array();
    assert_eq!(got[0], -7.3);
}

#[test]
fn foreign_cursor_is_safe() {
    let long_t: [f32; 20] = core::array::from_fn(|i| i as f32);
    let long_v = [1.0f32; 20];
    let long = Curve::new(&long_t, &long_v, Interpolation::Linear).unwrap();
    let short = Curve::new(&T3, &P3, Interpolation::CATMULL_ROM).unwrap();
    let mut k = Cursor::new();
    let _ = long.sample_with(&mut k, 17.5);
    assert_eq!(k.key(), 17);
    assert_eq!(short.sample_with(&mut k, 0.5), short.sample(0.5));
    assert_eq!(k.key(), 0);
    let _ = long.sample_with(&mut k, 100.0);
    assert_eq!(k.key(), 18);
    let one = Curve::new(&[0.0], &[4.0], Interpolation::Linear).unwrap();
    assert_eq!(one.sample_with(&mut k, 1.0), 4.0);
    assert_eq!(k.key(), 0);
}

#[test]
fn partition_is_partition_point() {
    // Lengths around the count run and far beyond it, times on, between,
    // before and after the keys (and the ends' neighbours in f32).
    let mut rng = Rng(11);
    let mut keys = [0.0f32; 300];
    for n in (1..40).chain([63, 64, 65, 127, 128, 129, 200, 300]) {
        let mut now = rng.range(-5.0, 5.0);
        for k in keys.iter_mut().take(n) {
            *k = now;
            now += rng.range(0.001, 0.5);
        }
        let ks = &keys[..n];
        let ends = [f32::NEG_INFINITY, f32::INFINITY, ks[0] - 1.0, now];
        let near = ks.iter().flat_map(|&k| [k, k.next_down(), k.next_up()]);
        let inside: [f32; 50] = core::array::from_fn(|_| rng.range(ks[0] - 0.1, now));
        let probes = ends.into_iter().chain(near).chain(inside);
        for t in probes {
            assert_eq!(
                partition(ks, t),
                ks.partition_point(|&k| k <= t),
                "n {n} t {t}"
            );
        }
    }
}
