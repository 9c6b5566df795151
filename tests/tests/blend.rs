//! Blend kernel: validity, SIMD vs scalar reference, independent checks, properties.

#[path = "../support/mod.rs"]
mod support;

use proptest::prelude::*;
use sinew_core::blend::{self, BlendJob, BlendLayer, JointWeights, DEFAULT_THRESHOLD};
use sinew_core::{f32x4, soa_count, Error, Quat, SoaTransform, Transform, Vec3};
use support::*;

type BlendFn = fn(&BlendJob<'_>, &mut [SoaTransform]) -> Result<(), Error>;

/// The SIMD product (eight-wide on x86-64 CPUs with AVX2 and FMA), the
/// portable four-wide kernel and the scalar twin: every validity rule holds
/// for all three.
const KERNELS: [(&str, BlendFn); 3] = [
    ("simd", blend::blend),
    ("portable", blend::blend_portable),
    ("reference", blend::reference::blend),
];

/// Whether `blend::blend` may run a kernel other than the portable one
/// here (x86-64 with AVX2 and FMA; the `portable` feature is not visible
/// from this crate, and under it both run the portable kernel, which the
/// comparisons below then check against itself).
fn wide_kernel_possible() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

fn identity(blocks: usize) -> Vec<SoaTransform> {
    vec![SoaTransform::IDENTITY; blocks]
}

/// Per-joint weights as blocks; padding lanes get weight 0.
fn mask_blocks(weights: &[f32]) -> Vec<f32x4> {
    weights
        .chunks(4)
        .map(|c| {
            let mut a = [0.0f32; 4];
            a[..c.len()].copy_from_slice(c);
            f32x4::new(a)
        })
        .collect()
}

/// Runs `job` with each kernel into a sentinel-filled output and checks the
/// exact error and that the output was not touched.
fn expect_error(job: &BlendJob<'_>, out_blocks: usize, expected: Error) {
    for (name, kernel) in KERNELS {
        let mut out = sentinel_pose(out_blocks, 7.0);
        let before = out.clone();
        assert_eq!(kernel(job, &mut out), Err(expected), "{name}");
        assert_eq!(out, before, "{name}: output written on error");
    }
}

// ---------------------------------------------------------------------------
// Validity
// ---------------------------------------------------------------------------

#[test]
fn validity_output_length() {
    let rest = identity(3);
    let pose = identity(3);
    let layers = [BlendLayer::new(&pose, 1.0)];
    let job = BlendJob::new(&layers, &[], &rest);
    for actual in [0, 1, 2, 4, 7] {
        expect_error(
            &job,
            actual,
            Error::BadLength {
                buffer: "output",
                expected: 3,
                actual,
            },
        );
    }
    // The right length works with both kernels.
    for (name, kernel) in KERNELS {
        let mut out = identity(3);
        assert_eq!(kernel(&job, &mut out), Ok(()), "{name}");
    }
}

#[test]
fn validity_layer_pose_length() {
    let rest = identity(3);
    let good = identity(3);
    for len in [0, 2, 4] {
        let bad = identity(len);
        let err = Error::BadLength {
            buffer: "layer pose",
            expected: 3,
            actual: len,
        };
        // A normal layer of the wrong length, after a good one.
        let layers = [BlendLayer::new(&good, 1.0), BlendLayer::new(&bad, 1.0)];
        expect_error(&BlendJob::new(&layers, &[], &rest), 3, err);
        // An additive layer of the wrong length.
        let layers = [BlendLayer::new(&good, 1.0)];
        let additive = [BlendLayer::new(&bad, 0.5)];
        expect_error(&BlendJob::new(&layers, &additive, &rest), 3, err);
        // A weight-0 layer is skipped when blending but still validated.
        let layers = [BlendLayer::new(&good, 1.0), BlendLayer::new(&bad, 0.0)];
        expect_error(&BlendJob::new(&layers, &[], &rest), 3, err);
    }
}

#[test]
fn validity_joint_weights_length() {
    let rest = identity(3);
    let pose = identity(3);
    for blocks in [0, 2, 4] {
        let w = vec![f32x4::ONE; blocks];
        let mask = JointWeights::new(&w).unwrap();
        let err = Error::BadLength {
            buffer: "joint weights",
            expected: 3,
            actual: blocks,
        };
        let layers = [BlendLayer::masked(&pose, 1.0, mask)];
        expect_error(&BlendJob::new(&layers, &[], &rest), 3, err);
        let plain = [BlendLayer::new(&pose, 1.0)];
        let additive = [BlendLayer::masked(&pose, 1.0, mask)];
        expect_error(&BlendJob::new(&plain, &additive, &rest), 3, err);
    }
}

/// Finite weights whose sum (times each mask's largest weight) overflows
/// would turn the pose into NaN; the layer where the sum overflows is
/// reported, and a sum that stays finite is accepted.
#[test]
fn validity_weights_whose_sum_overflows() {
    let rest = identity(2);
    let pose = identity(2);
    let layers = [
        BlendLayer::new(&pose, 3.4e38),
        BlendLayer::new(&pose, 3.4e38),
    ];
    expect_error(
        &BlendJob::new(&layers, &[], &rest),
        2,
        Error::InvalidWeight { layer: 1 },
    );
    // A mask whose largest weight is 10 makes 1e38 overflow on its own.
    let w = [f32x4::new([0.0, 10.0, 1.0, 1.0]), f32x4::ONE];
    let mask = JointWeights::new(&w).unwrap();
    assert_eq!(mask.max(), 10.0);
    let layers = [
        BlendLayer::new(&pose, 1.0),
        BlendLayer::masked(&pose, 1e38, mask),
    ];
    expect_error(
        &BlendJob::new(&layers, &[], &rest),
        2,
        Error::InvalidWeight { layer: 1 },
    );
    // Additive layers are applied one at a time: each is bounded alone.
    let layers = [BlendLayer::new(&pose, 3e38)];
    let additive = [BlendLayer::new(&pose, 3e38), BlendLayer::new(&pose, 3e38)];
    let mut out = identity(2);
    assert_eq!(
        blend::blend(&BlendJob::new(&layers, &additive, &rest), &mut out),
        Ok(())
    );
    let additive = [BlendLayer::masked(&pose, 1e38, mask)];
    expect_error(
        &BlendJob::new(&layers, &additive, &rest),
        2,
        Error::InvalidWeight { layer: 1 },
    );
}

#[test]
fn validity_layer_weight() {
    let rest = identity(2);
    let pose = identity(2);
    let bad_weights = [
        -1.0,
        -f32::MIN_POSITIVE,
        f32::NAN,
        -f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
    ];
    for bad in bad_weights {
        // Normal layers: index within the normal layers.
        for at in 0..3 {
            let mut layers = [BlendLayer::new(&pose, 0.5); 3];
            layers[at].weight = bad;
            expect_error(
                &BlendJob::new(&layers, &[], &rest),
                2,
                Error::InvalidWeight { layer: at },
            );
        }
        // Additive layers are numbered after the normal ones.
        for at in 0..2 {
            let layers = [BlendLayer::new(&pose, 0.5); 3];
            let mut additive = [BlendLayer::new(&pose, 0.5); 2];
            additive[at].weight = bad;
            expect_error(
                &BlendJob::new(&layers, &additive, &rest),
                2,
                Error::InvalidWeight { layer: 3 + at },
            );
        }
        // No normal layers at all: the first additive layer is layer 0.
        let additive = [BlendLayer::new(&pose, bad)];
        expect_error(
            &BlendJob::new(&[], &additive, &rest),
            2,
            Error::InvalidWeight { layer: 0 },
        );
        // The first offending layer is reported.
        let layers = [BlendLayer::new(&pose, 0.5), BlendLayer::new(&pose, bad)];
        let additive = [BlendLayer::new(&pose, bad)];
        expect_error(
            &BlendJob::new(&layers, &additive, &rest),
            2,
            Error::InvalidWeight { layer: 1 },
        );
    }
    // Zero (either sign), huge and tiny weights are valid.
    for ok in [0.0, -0.0, f32::MIN_POSITIVE, 1e30, f32::MAX] {
        let layers = [BlendLayer::new(&pose, ok)];
        let additive = [BlendLayer::new(&pose, ok)];
        let job = BlendJob::new(&layers, &additive, &rest);
        for (name, kernel) in KERNELS {
            let mut out = identity(2);
            assert_eq!(kernel(&job, &mut out), Ok(()), "{name}, weight {ok}");
        }
    }
}

#[test]
fn validity_joint_weights_values() {
    let bad_values = [
        -1.0,
        -f32::MIN_POSITIVE,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
    ];
    for bad in bad_values {
        for joint in [0usize, 3, 4, 6, 11] {
            let mut w = [1.0f32; 12];
            w[joint] = bad;
            let blocks = mask_blocks(&w);
            assert_eq!(
                JointWeights::new(&blocks).map(|_| ()),
                Err(Error::InvalidJointWeight { joint }),
                "value {bad} at joint {joint}"
            );
        }
        // The first bad joint is named.
        let mut w = [0.5f32; 12];
        w[9] = bad;
        w[5] = bad;
        let blocks = mask_blocks(&w);
        assert_eq!(
            JointWeights::new(&blocks).map(|_| ()),
            Err(Error::InvalidJointWeight { joint: 5 })
        );
    }
    let ok = mask_blocks(&[0.0, -0.0, 1.0, 1e30, 0.25]);
    let mask = JointWeights::new(&ok).unwrap();
    assert_eq!(mask.as_slice().len(), 2);
    assert_eq!(mask.get(2), 1.0);
    assert_eq!(mask.get(4), 0.25);
    assert_eq!(mask.get(100), 0.0, "out of range reads as 0");
    assert!(JointWeights::new(&[]).is_ok());
}

#[test]
fn validity_threshold() {
    let rest = identity(2);
    let pose = identity(2);
    let layers = [BlendLayer::new(&pose, 1.0)];
    for threshold in [0.0, -0.0, -0.1, f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        let job = BlendJob {
            threshold,
            ..BlendJob::new(&layers, &[], &rest)
        };
        expect_error(&job, 2, Error::InvalidThreshold);
    }
    let job = BlendJob {
        threshold: f32::MIN_POSITIVE,
        ..BlendJob::new(&layers, &[], &rest)
    };
    for (name, kernel) in KERNELS {
        let mut out = identity(2);
        assert_eq!(kernel(&job, &mut out), Ok(()), "{name}");
    }
}

// ---------------------------------------------------------------------------
// Random blend cases
// ---------------------------------------------------------------------------

#[derive(Clone, Debug)]
struct LayerCase {
    pose: Vec<Transform>,
    weight: f32,
    mask: Option<Vec<f32>>,
}

#[derive(Clone, Debug)]
struct BlendCase {
    n: usize,
    rest: Vec<Transform>,
    layers: Vec<LayerCase>,
    additive: Vec<LayerCase>,
    threshold: f32,
}

/// How a layer's joint relates to the shared base pose: unrelated, the same
/// rotation with the opposite sign, near-opposite, or near-equal.
fn derived_joint(base: Transform) -> impl Strategy<Value = Transform> {
    (0u8..4, transform(0.5, 2.0), small_rotation(0.05)).prop_map(move |(kind, t, small)| {
        let rotation = match kind {
            0 => t.rotation,
            1 => -base.rotation,
            2 => (-base.rotation * small).normalize(),
            _ => (base.rotation * small).normalize(),
        };
        Transform { rotation, ..t }
    })
}

fn mask(n: usize) -> impl Strategy<Value = Option<Vec<f32>>> {
    prop::option::of(prop::collection::vec(weight(1.0), n))
}

fn normal_layer(base: Vec<Transform>) -> impl Strategy<Value = LayerCase> {
    let n = base.len();
    let joints: Vec<_> = base.into_iter().map(derived_joint).collect();
    (joints, weight(2.0), mask(n)).prop_map(|(pose, weight, mask)| LayerCase { pose, weight, mask })
}

fn additive_layer(n: usize) -> impl Strategy<Value = LayerCase> {
    let joint = (vec3_in(-0.5, 0.5), unit_quat(), vec3_in(0.5, 1.5))
        .prop_map(|(t, q, s)| Transform::new(t, q, s));
    (prop::collection::vec(joint, n), weight(1.0), mask(n))
        .prop_map(|(pose, weight, mask)| LayerCase { pose, weight, mask })
}

fn blend_case(max_joints: usize) -> impl Strategy<Value = BlendCase> {
    (1..=max_joints)
        .prop_flat_map(|n| (Just(n), transforms(n, 0.5, 2.0), transforms(n, 0.5, 2.0)))
        .prop_flat_map(|(n, rest, base)| {
            (
                Just(n),
                Just(rest),
                prop::collection::vec(normal_layer(base), 1..=4),
                prop::collection::vec(additive_layer(n), 0..=2),
                prop_oneof![Just(DEFAULT_THRESHOLD), 0.01f32..1.0],
            )
        })
        .prop_map(|(n, rest, layers, additive, threshold)| BlendCase {
            n,
            rest,
            layers,
            additive,
            threshold,
        })
}

/// Owned SoA data of a case, so jobs can borrow it.
struct Owned {
    rest: Vec<SoaTransform>,
    poses: Vec<Vec<SoaTransform>>,
    masks: Vec<Option<Vec<f32x4>>>,
    weights: Vec<f32>,
    normal: usize,
    threshold: f32,
}

impl Owned {
    fn new(case: &BlendCase) -> Owned {
        let all = case.layers.iter().chain(&case.additive);
        Owned {
            rest: to_soa(&case.rest),
            poses: all.clone().map(|l| to_soa(&l.pose)).collect(),
            masks: all
                .clone()
                .map(|l| l.mask.as_ref().map(|m| mask_blocks(m)))
                .collect(),
            weights: all.map(|l| l.weight).collect(),
            normal: case.layers.len(),
            threshold: case.threshold,
        }
    }

    /// Runs `kernel` on this data and returns the output blocks.
    fn run(&self, kernel: BlendFn) -> Vec<SoaTransform> {
        let layers: Vec<BlendLayer<'_>> = self
            .poses
            .iter()
            .zip(&self.masks)
            .zip(&self.weights)
            .map(|((pose, mask), &weight)| BlendLayer {
                pose,
                weight,
                joint_weights: mask.as_ref().map(|m| JointWeights::new(m).unwrap()),
            })
            .collect();
        let (normal, additive) = layers.split_at(self.normal);
        let job = BlendJob {
            threshold: self.threshold,
            ..BlendJob::new(normal, additive, &self.rest)
        };
        let mut out = sentinel_pose(self.rest.len(), 7.0);
        kernel(&job, &mut out).unwrap();
        out
    }
}

fn blend_transforms(
    rest: &[Transform],
    layers: &[(&[Transform], f32)],
    additive: &[(&[Transform], f32)],
) -> Vec<Transform> {
    let rest_soa = to_soa(rest);
    let poses: Vec<Vec<SoaTransform>> = layers.iter().map(|(p, _)| to_soa(p)).collect();
    let adds: Vec<Vec<SoaTransform>> = additive.iter().map(|(p, _)| to_soa(p)).collect();
    let l: Vec<BlendLayer<'_>> = poses
        .iter()
        .zip(layers)
        .map(|(p, (_, w))| BlendLayer::new(p, *w))
        .collect();
    let a: Vec<BlendLayer<'_>> = adds
        .iter()
        .zip(additive)
        .map(|(p, (_, w))| BlendLayer::new(p, *w))
        .collect();
    let job = BlendJob::new(&l, &a, &rest_soa);
    let mut out = identity(rest_soa.len());
    blend::blend(&job, &mut out).unwrap();
    let mut out_ref = identity(rest_soa.len());
    blend::reference::blend(&job, &mut out_ref).unwrap();
    assert_poses_close(&out, &out_ref, rest.len(), TOL);
    to_transforms(&out, rest.len())
}

fn deg(d: f32) -> f32 {
    d.to_radians()
}

// ---------------------------------------------------------------------------
// Correctness: SIMD vs scalar reference
// ---------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The SIMD kernel equals its scalar twin on every lane (padding included).
    #[test]
    fn simd_matches_reference(case in blend_case(70)) {
        let owned = Owned::new(&case);
        let simd = owned.run(blend::blend);
        let scalar = owned.run(blend::reference::blend);
        let (a, b) = (all_lanes(&simd), all_lanes(&scalar));
        for (j, (x, y)) in a.iter().zip(&b).enumerate() {
            prop_assert!(transform_close(x, y, TOL), "joint {}:\n  simd {:?}\n  ref  {:?}", j, x, y);
        }
    }

    /// Without masks and additive layers the kernel takes its uniform-weight
    /// path; it must equal the reference and the general path (forced here
    /// with all-ones masks, which change no weight).
    #[test]
    fn uniform_path_matches_general_path_and_reference(case in blend_case(70)) {
        let mut case = case;
        case.additive.clear();
        for l in &mut case.layers {
            l.mask = None;
        }
        let plain = Owned::new(&case);
        let fast = plain.run(blend::blend);
        let scalar = plain.run(blend::reference::blend);
        for l in &mut case.layers {
            l.mask = Some(vec![1.0; case.n]);
        }
        let general = Owned::new(&case).run(blend::blend);
        let (a, b, c) = (all_lanes(&fast), all_lanes(&scalar), all_lanes(&general));
        for j in 0..a.len() {
            prop_assert!(transform_close(&a[j], &b[j], TOL), "joint {}: fast {:?} ref {:?}", j, a[j], b[j]);
            prop_assert!(transform_close(&a[j], &c[j], TOL), "joint {}: fast {:?} general {:?}", j, a[j], c[j]);
        }
    }

    /// The AVX2 kernel equals the portable one and the scalar reference on
    /// every lane (padding included), with masks, additive layers, any
    /// threshold, and odd and even block counts (1-70 joints); skipped on
    /// CPUs without AVX2 and FMA, where `blend` is the portable kernel.
    #[test]
    fn wide_matches_portable_and_reference(case in blend_case(70)) {
        if !wide_kernel_possible() {
            return Ok(());
        }
        let owned = Owned::new(&case);
        let wide = owned.run(blend::blend);
        let portable = owned.run(blend::blend_portable);
        let scalar = owned.run(blend::reference::blend);
        let (a, b, c) = (all_lanes(&wide), all_lanes(&portable), all_lanes(&scalar));
        for j in 0..a.len() {
            prop_assert!(transform_close(&a[j], &b[j], TOL), "joint {}:\n  wide     {:?}\n  portable {:?}", j, a[j], b[j]);
            prop_assert!(transform_close(&a[j], &c[j], TOL), "joint {}:\n  wide {:?}\n  ref  {:?}", j, a[j], c[j]);
        }
    }

    /// The same on the uniform-weight path (no masks, no additive layers,
    /// total weight at or above the threshold).
    #[test]
    fn wide_uniform_path_matches_portable(case in blend_case(70)) {
        if !wide_kernel_possible() {
            return Ok(());
        }
        let mut case = case;
        case.additive.clear();
        for l in &mut case.layers {
            l.mask = None;
        }
        let owned = Owned::new(&case);
        let wide = owned.run(blend::blend);
        let portable = owned.run(blend::blend_portable);
        let (a, b) = (all_lanes(&wide), all_lanes(&portable));
        for j in 0..a.len() {
            prop_assert!(transform_close(&a[j], &b[j], TOL), "joint {}: wide {:?} portable {:?}", j, a[j], b[j]);
        }
    }

    /// Any blend produces unit rotations (for every joint, with any layers).
    #[test]
    fn output_rotations_are_unit(case in blend_case(70)) {
        let owned = Owned::new(&case);
        let out = owned.run(blend::blend);
        for (j, t) in to_transforms(&out, case.n).iter().enumerate() {
            prop_assert!((t.rotation.length() - 1.0).abs() <= TOL, "joint {}: |q| = {}", j, t.rotation.length());
        }
    }
}

// ---------------------------------------------------------------------------
// Correctness: independent checks
// ---------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// One layer of weight 1 and no mask reproduces that layer's pose.
    #[test]
    fn single_full_layer_returns_its_pose(
        (rest, pose) in (1usize..=70).prop_flat_map(|n| (transforms(n, 0.5, 2.0), transforms(n, 0.5, 2.0)))
    ) {
        let out = blend_transforms(&rest, &[(&pose, 1.0)], &[]);
        for (j, (o, p)) in out.iter().zip(&pose).enumerate() {
            prop_assert!(transform_close(o, p, 1e-6), "joint {}: {:?} vs {:?}", j, o, p);
        }
    }

    /// With every layer weight zero (or every joint masked out) the rest pose comes back.
    #[test]
    fn all_weights_zero_gives_rest(case in blend_case(40), masked_out in any::<bool>()) {
        let mut case = case;
        for layer in &mut case.layers {
            if masked_out {
                layer.weight = layer.weight.max(0.5);
                layer.mask = Some(vec![0.0; case.n]);
            } else {
                layer.weight = 0.0;
            }
        }
        case.additive.clear();
        let out = Owned::new(&case).run(blend::blend);
        for (j, (o, r)) in to_transforms(&out, case.n).iter().zip(&case.rest).enumerate() {
            prop_assert!(transform_close(o, r, 1e-6), "joint {}: {:?} vs {:?}", j, o, r);
        }
    }

    /// q and -q are the same rotation: flipping the sign of any input rotation
    /// (normal, rest or additive) does not change the blended rotation.
    #[test]
    fn sign_of_input_rotations_does_not_matter(case in blend_case(24), flips in prop::collection::vec(any::<bool>(), 8)) {
        let mut flipped = case.clone();
        let mut k = 0;
        let mut flip = |t: &mut Transform| {
            if flips[k % flips.len()] {
                t.rotation = -t.rotation;
            }
            k += 1;
        };
        flipped.rest.iter_mut().for_each(&mut flip);
        for l in flipped.layers.iter_mut().chain(flipped.additive.iter_mut()) {
            l.pose.iter_mut().for_each(&mut flip);
        }
        let a = Owned::new(&case).run(blend::blend);
        let b = Owned::new(&flipped).run(blend::blend);
        for (j, (x, y)) in to_transforms(&a, case.n).iter().zip(&to_transforms(&b, case.n)).enumerate() {
            prop_assert!(quat_close(x.rotation, y.rotation, 1e-4), "joint {}: {:?} vs {:?}", j, x.rotation, y.rotation);
        }
    }

    /// Normal layers are normalised by their total weight: scaling every
    /// weight by the same factor changes nothing while the total stays above
    /// the threshold.
    #[test]
    fn scaling_all_weights_changes_nothing(case in blend_case(24), k in 1.0f32..8.0) {
        let mut case = case;
        case.threshold = DEFAULT_THRESHOLD;
        for l in &mut case.layers {
            l.mask = None;
            l.weight = l.weight.max(0.2);
        }
        let mut scaled = case.clone();
        for l in &mut scaled.layers {
            l.weight *= k;
        }
        let a = Owned::new(&case).run(blend::blend);
        let b = Owned::new(&scaled).run(blend::blend);
        for (j, (x, y)) in to_transforms(&a, case.n).iter().zip(&to_transforms(&b, case.n)).enumerate() {
            prop_assert!(transform_close(x, y, 1e-4), "joint {}: {:?} vs {:?}", j, x, y);
        }
    }
}

#[test]
fn halfway_between_0_and_60_degrees_is_30_degrees() {
    for axis in [
        Vec3::X,
        Vec3::Y,
        Vec3::Z,
        Vec3::new(0.6, 0.0, 0.8),
        Vec3::new(-0.48, 0.6, 0.64),
    ] {
        let rest = [Transform::IDENTITY; 5];
        let a = [Transform::IDENTITY; 5];
        let b = [Transform::from_translation_rotation(
            Vec3::ZERO,
            Quat::from_axis_angle(axis, deg(60.0)),
        ); 5];
        let out = blend_transforms(&rest, &[(&a, 0.5), (&b, 0.5)], &[]);
        let expect = Quat::from_axis_angle(axis, deg(30.0));
        for t in &out {
            assert!(
                quat_close(t.rotation, expect, 1e-6),
                "{axis:?}: {:?}",
                t.rotation
            );
        }
        // Same with the 60° input given with the opposite sign (long way round
        // numerically, same rotation): the short arc is still taken.
        let b_neg = [Transform::from_translation_rotation(
            Vec3::ZERO,
            -Quat::from_axis_angle(axis, deg(60.0)),
        ); 5];
        let out = blend_transforms(&rest, &[(&a, 0.5), (&b_neg, 0.5)], &[]);
        for t in &out {
            assert!(
                quat_close(t.rotation, expect, 1e-6),
                "{axis:?}: {:?}",
                t.rotation
            );
        }
    }
}

#[test]
fn weighted_translation_and_scale_are_weighted_means() {
    let rest = [Transform::IDENTITY; 3];
    let a = [Transform::new(
        Vec3::new(1.0, 2.0, 3.0),
        Quat::IDENTITY,
        Vec3::new(1.0, 1.0, 2.0),
    ); 3];
    let b = [Transform::new(
        Vec3::new(-3.0, 0.0, 1.0),
        Quat::IDENTITY,
        Vec3::new(3.0, 1.0, 0.5),
    ); 3];
    // Weights 0.75 and 0.25 (sum 1), and 3 and 1 (same ratio: normalised).
    for (wa, wb) in [(0.75, 0.25), (3.0, 1.0)] {
        let out = blend_transforms(&rest, &[(&a, wa), (&b, wb)], &[]);
        for t in &out {
            assert!(
                vec_close(t.translation, Vec3::new(0.0, 1.5, 2.5), 1e-6),
                "{t:?}"
            );
            assert!(
                vec_close(t.scale, Vec3::new(1.5, 1.0, 1.625), 1e-6),
                "{t:?}"
            );
        }
    }
}

#[test]
fn below_threshold_the_rest_pose_fills_in() {
    let rest = [Transform::from_translation_rotation(Vec3::new(0.0, 1.0, 0.0), Quat::IDENTITY); 2];
    let a = [Transform::from_translation_rotation(
        Vec3::new(2.0, 1.0, 0.0),
        Quat::from_rotation_z(deg(40.0)),
    ); 2];
    // Weight 0.05 against the default threshold 0.1: rest gets 0.05 too.
    let out = blend_transforms(&rest, &[(&a, 0.05)], &[]);
    for t in &out {
        assert!(
            vec_close(t.translation, Vec3::new(1.0, 1.0, 0.0), 1e-6),
            "{t:?}"
        );
        assert!(
            quat_close(t.rotation, Quat::from_rotation_z(deg(20.0)), 1e-6),
            "{t:?}"
        );
    }
    // At or above the threshold the rest pose has no influence.
    let out = blend_transforms(&rest, &[(&a, DEFAULT_THRESHOLD)], &[]);
    for t in &out {
        assert!(transform_close(t, &a[0], 1e-6), "{t:?}");
    }
}

#[test]
fn masks_select_joints() {
    // 6 joints; layer b only drives joints 1, 4 and 5 (mask 1), half of joint 2.
    let n = 6;
    let rest = vec![Transform::IDENTITY; n];
    let a = vec![
        Transform::from_translation_rotation(
            Vec3::new(1.0, 0.0, 0.0),
            Quat::from_rotation_y(deg(10.0))
        );
        n
    ];
    let b = vec![
        Transform::from_translation_rotation(
            Vec3::new(0.0, 4.0, 0.0),
            Quat::from_rotation_y(deg(70.0))
        );
        n
    ];
    let m = [0.0, 1.0, 0.5, 0.0, 1.0, 1.0];
    let mask = mask_blocks(&m);
    let (ra, rb, rr) = (to_soa(&a), to_soa(&b), to_soa(&rest));
    let layers = [
        BlendLayer::new(&ra, 1.0),
        BlendLayer::masked(&rb, 1.0, JointWeights::new(&mask).unwrap()),
    ];
    let job = BlendJob::new(&layers, &[], &rr);
    for (name, kernel) in KERNELS {
        let mut out = identity(rr.len());
        kernel(&job, &mut out).unwrap();
        for (j, t) in to_transforms(&out, n).iter().enumerate() {
            let wb = m[j];
            let expect_t = Vec3::new(1.0 / (1.0 + wb), 4.0 * wb / (1.0 + wb), 0.0);
            assert!(
                vec_close(t.translation, expect_t, 1e-6),
                "{name} joint {j}: {t:?}"
            );
            let expect_q = if wb == 0.0 {
                Quat::from_rotation_y(deg(10.0))
            } else if wb == 1.0 {
                Quat::from_rotation_y(deg(40.0))
            } else {
                // nlerp with weights 1 and 0.5 (not slerp: the angle is not 30°).
                let qa = Quat::from_rotation_y(deg(10.0));
                let qb = Quat::from_rotation_y(deg(70.0));
                (qa + qb.scale(0.5)).normalize()
            };
            assert!(
                quat_close(t.rotation, expect_q, 1e-6),
                "{name} joint {j}: {t:?}"
            );
        }
    }
}

/// DESIGN worked example: a spine at 20° about x plus a 12° flinch additive at
/// weight 0.5 gives 26° about x.
#[test]
fn additive_worked_example() {
    let rest = [Transform::IDENTITY; 4];
    let spine = [Transform::from_translation_rotation(
        Vec3::new(0.0, 0.1, 0.0),
        Quat::from_rotation_x(deg(20.0)),
    ); 4];
    let flinch = [Transform::new(Vec3::ZERO, Quat::from_rotation_x(deg(12.0)), Vec3::ONE); 4];
    let out = blend_transforms(&rest, &[(&spine, 1.0)], &[(&flinch, 0.5)]);
    for t in &out {
        let angle = signed_angle_about(t.rotation, Vec3::X).to_degrees();
        assert!((angle - 26.0).abs() < 5e-4, "{angle}");
        assert!(
            quat_close(t.rotation, Quat::from_rotation_x(deg(26.0)), 1e-6),
            "{t:?}"
        );
        assert!(vec_close(t.translation, spine[0].translation, 1e-6));
    }
    // The additive given as -q (w < 0) is the same rotation: same result.
    let flinch_neg = [Transform::new(Vec3::ZERO, -Quat::from_rotation_x(deg(12.0)), Vec3::ONE); 4];
    let out = blend_transforms(&rest, &[(&spine, 1.0)], &[(&flinch_neg, 0.5)]);
    for t in &out {
        assert!(
            quat_close(t.rotation, Quat::from_rotation_x(deg(26.0)), 1e-6),
            "{t:?}"
        );
    }
    // Weight 1 applies the whole flinch: 32°. Weight 0 is skipped: 20°.
    for (w, expect) in [(1.0, 32.0), (0.0, 20.0)] {
        let out = blend_transforms(&rest, &[(&spine, 1.0)], &[(&flinch, w)]);
        for t in &out {
            assert!(
                quat_close(t.rotation, Quat::from_rotation_x(deg(expect)), 1e-6),
                "weight {w}: {t:?}"
            );
        }
    }
}

/// The additive rotation is applied on the right, in the base's frame:
/// `q = q_base * q_add` (the two rotations are about different axes, so the
/// order matters).
#[test]
fn additive_rotation_composes_on_the_right() {
    let rest = [Transform::IDENTITY; 6];
    let base = Quat::from_rotation_z(deg(30.0));
    let add = Quat::from_rotation_x(deg(40.0));
    let pose = [Transform::from_translation_rotation(Vec3::ZERO, base); 6];
    let delta = [Transform::from_translation_rotation(Vec3::ZERO, add); 6];
    for (w, partial) in [(1.0, add), (0.5, Quat::from_rotation_x(deg(20.0)))] {
        let out = blend_transforms(&rest, &[(&pose, 1.0)], &[(&delta, w)]);
        let expect = base * partial;
        let wrong = partial * base;
        assert!(
            !quat_close(expect, wrong, 1e-3),
            "the order must matter here"
        );
        for t in &out {
            assert!(quat_close(t.rotation, expect, 1e-6), "weight {w}: {t:?}");
        }
    }
    // Two additive layers apply in order: base * a1 * a2.
    let second = Quat::from_rotation_y(deg(25.0));
    let delta2 = [Transform::from_translation_rotation(Vec3::ZERO, second); 6];
    let out = blend_transforms(&rest, &[(&pose, 1.0)], &[(&delta, 1.0), (&delta2, 1.0)]);
    for t in &out {
        assert!(quat_close(t.rotation, base * add * second, 1e-6), "{t:?}");
    }
}

#[test]
fn additive_translation_and_scale() {
    let rest = [Transform::IDENTITY; 1];
    let base = [Transform::new(
        Vec3::new(1.0, 2.0, 3.0),
        Quat::from_rotation_z(deg(30.0)),
        Vec3::new(2.0, 1.0, 1.0),
    )];
    let add = [Transform::new(
        Vec3::new(0.5, -1.0, 0.0),
        Quat::IDENTITY,
        Vec3::new(3.0, 0.5, 1.0),
    )];
    let out = blend_transforms(&rest, &[(&base, 1.0)], &[(&add, 0.5)]);
    // t += w t_add; s *= 1 + w (s_add - 1); identity rotation leaves q alone.
    assert!(
        vec_close(out[0].translation, Vec3::new(1.25, 1.5, 3.0), 1e-6),
        "{:?}",
        out[0]
    );
    assert!(
        vec_close(out[0].scale, Vec3::new(4.0, 0.75, 1.0), 1e-6),
        "{:?}",
        out[0]
    );
    assert!(quat_close(out[0].rotation, base[0].rotation, 1e-6));
}

#[test]
fn opposite_sign_layers_blend_as_the_same_rotation() {
    // Two layers with q and -q (the same rotation) blend to that rotation,
    // never to a zero or arbitrary quaternion.
    let q = Quat::from_axis_angle(Vec3::new(0.0, 0.6, 0.8), deg(100.0));
    let rest = [Transform::IDENTITY; 9];
    let a = [Transform::from_translation_rotation(Vec3::ZERO, q); 9];
    let b = [Transform::from_translation_rotation(Vec3::ZERO, -q); 9];
    for (wa, wb) in [(0.5, 0.5), (1.0, 1.0), (0.2, 0.9)] {
        let out = blend_transforms(&rest, &[(&a, wa), (&b, wb)], &[]);
        for t in &out {
            assert!(quat_close(t.rotation, q, 1e-6), "{t:?}");
        }
    }
}

#[test]
fn soa_count_matches_partial_last_block() {
    // 5 joints use 2 blocks; blending writes padding lanes too (identity in, identity out).
    assert_eq!(soa_count(5), 2);
    let rest = vec![Transform::IDENTITY; 5];
    let a = vec![Transform::from_translation_rotation(Vec3::X, Quat::from_rotation_x(1.0)); 5];
    let (rr, ra) = (to_soa(&rest), to_soa(&a));
    let layers = [BlendLayer::new(&ra, 1.0)];
    let job = BlendJob::new(&layers, &[], &rr);
    let mut out = sentinel_pose(2, 7.0);
    blend::blend(&job, &mut out).unwrap();
    let lanes = all_lanes(&out);
    for t in &lanes[5..] {
        assert!(transform_close(t, &Transform::IDENTITY, 1e-6), "{t:?}");
    }
}

/// The general path works in chunks of 64 blocks (256 joints): a 1007-joint
/// masked + additive blend crosses several chunk boundaries and a partial one.
#[test]
fn large_masked_additive_blend_matches_reference_across_chunks() {
    use sinew_std::synthetic;
    let owned = synthetic::skeleton(1007, 7);
    let skel = owned.view();
    let poses: Vec<Vec<SoaTransform>> = (0..4)
        .map(|i| synthetic::pose(&skel, 1.2, 100 + i))
        .collect();
    let masks: Vec<Vec<f32x4>> = (0..2).map(|i| synthetic::mask(&skel, 200 + i)).collect();
    let layers = [
        BlendLayer::masked(&poses[0], 0.6, JointWeights::new(&masks[0]).unwrap()),
        BlendLayer::new(&poses[1], 0.3),
        BlendLayer::masked(&poses[2], 0.05, JointWeights::new(&masks[1]).unwrap()),
    ];
    let additive = [BlendLayer::masked(
        &poses[3],
        0.7,
        JointWeights::new(&masks[1]).unwrap(),
    )];
    let job = BlendJob {
        threshold: 0.5,
        ..BlendJob::new(&layers, &additive, skel.rest_pose())
    };
    let mut scalar = sentinel_pose(skel.soa_count(), 4.0);
    blend::reference::blend(&job, &mut scalar).unwrap();
    for kernel in [blend::blend as BlendFn, blend::blend_portable] {
        let mut simd = sentinel_pose(skel.soa_count(), 3.0);
        kernel(&job, &mut simd).unwrap();
        assert_poses_close(&simd, &scalar, skel.joint_count(), TOL);
    }
}
