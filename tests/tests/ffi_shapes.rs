//! The blend-shape and shape-driver exports (through the `sinew` rlib of
//! `sinew-capi`) against the Rust API: random meshes, dense and sparse
//! targets, weights, correctives and combinations give bit for bit what
//! `BlendShapes::apply` and `ShapeDrivers::evaluate` give, and a bad target
//! or driver is named by `bad_index` as the core's error names it. RBF
//! fits and drivers and delta mush likewise give what `RbfFit::solve`,
//! `RbfSet::evaluate_pose`, `build_adjacency`, `rest_deltas` and
//! `DeltaMush::deform` give.

use proptest::prelude::*;
use sinew::*;
use sinew_core::shape::blend::{pack_sparse, BlendOptions, BlendShapes, Deltas, Target};
use sinew_core::shape::driver::{Angle, Combination, Corrective, Driver, Ramp, ShapeDrivers};
use sinew_core::shape::mush::{
    build_adjacency, neighbour_capacity, rest_deltas, DeltaMush, MushAdjacency, MushSettings,
};
use sinew_core::shape::rbf::{RbfDriver, RbfFit, RbfKernel, RbfSet};
use sinew_core::skin::{SkinOutput, SkinVertices};
use sinew_core::{soa_count, Error, Quat, SoaTransform, SoaVec3, Vec3};

/// One attribute of one target: dense deltas, or sparse `(indices, deltas)`.
#[derive(Clone, Debug)]
enum Attr {
    None,
    Dense(Vec<[f32; 3]>),
    Sparse(Vec<u32>, Vec<[f32; 3]>),
}

fn attr(n: usize) -> impl Strategy<Value = Attr> {
    let d = prop::array::uniform3(-2.0f32..2.0);
    prop_oneof![
        Just(Attr::None),
        prop::collection::vec(d.clone(), n).prop_map(Attr::Dense),
        prop::collection::btree_map(0..n as u32, d, 0..=n).prop_map(|m| {
            let (i, d) = m.into_iter().unzip();
            Attr::Sparse(i, d)
        }),
    ]
}

/// Vertex count, targets (positions, normals, tangents), weights.
type Case = (usize, Vec<[Attr; 3]>, Vec<f32>);

fn case() -> impl Strategy<Value = Case> {
    (1usize..19, 0usize..9).prop_flat_map(|(n, k)| {
        (
            Just(n),
            prop::collection::vec(
                (attr(n), attr(n), attr(n)).prop_map(|(a, b, c)| [a, b, c]),
                k,
            ),
            prop::collection::vec(prop_oneof![Just(0.0f32), Just(0.05f32), -1.5f32..1.5], k),
        )
    })
}

fn c_deltas(a: &Attr) -> sinew_blend_deltas {
    match a {
        Attr::None => sinew_blend_deltas {
            kind: SINEW_DELTAS_NONE,
            count: 0,
            deltas: std::ptr::null(),
            indices: std::ptr::null(),
        },
        Attr::Dense(d) => sinew_blend_deltas {
            kind: SINEW_DELTAS_DENSE,
            count: d.len(),
            deltas: d.as_ptr().cast(),
            indices: std::ptr::null(),
        },
        Attr::Sparse(i, d) => sinew_blend_deltas {
            kind: SINEW_DELTAS_SPARSE,
            count: i.len(),
            deltas: d.as_ptr().cast(),
            indices: i.as_ptr(),
        },
    }
}

fn blocks(a: &Attr) -> Vec<SoaVec3> {
    match a {
        Attr::Sparse(_, d) => {
            let mut b = vec![SoaVec3::ZERO; soa_count(d.len())];
            pack_sparse(d, &mut b).unwrap();
            b
        }
        _ => Vec::new(),
    }
}

fn rust_deltas<'a>(a: &'a Attr, b: &'a [SoaVec3]) -> Option<Deltas<'a>> {
    match a {
        Attr::None => None,
        Attr::Dense(d) => Some(Deltas::Dense(d)),
        Attr::Sparse(i, _) => Some(Deltas::Sparse {
            indices: i,
            deltas: b,
        }),
    }
}

/// An attribute without its sparse form (`None` for sparse).
fn dense_only(a: &Attr) -> Option<Deltas<'_>> {
    match a {
        Attr::Dense(d) => Some(Deltas::Dense(d)),
        _ => None,
    }
}

fn empty_blend() -> sinew_blend_shapes {
    sinew_blend_shapes {
        vertex_count: 0,
        target_count: 0,
        storage: std::ptr::null(),
        storage_size: 0,
        check: 0,
    }
}

/// Storage from `_storage_size`, 16-byte aligned.
fn storage(bytes: usize) -> Vec<u128> {
    vec![0u128; bytes.div_ceil(16).max(1)]
}

/// Fills the C handle; the status and `bad_index`.
fn c_init(
    n: usize,
    targets: &[sinew_blend_target],
    st: &mut [u128],
    out: &mut sinew_blend_shapes,
) -> (sinew_status, u32) {
    let mut bad = 7u32;
    // SAFETY: every pointer is a live Rust buffer of the length given.
    let s = unsafe {
        sinew_blend_shapes_init(
            n,
            targets.as_ptr(),
            targets.len(),
            st.as_mut_ptr().cast(),
            st.len() * 16,
            out,
            &mut bad,
        )
    };
    (s, bad)
}

type Mesh = (Vec<[f32; 3]>, Vec<[f32; 3]>, Vec<[f32; 4]>);

fn run_case(
    (n, attrs, weights): &Case,
    threshold: f32,
    renormalize: bool,
) -> Result<(), TestCaseError> {
    let n = *n;
    let targets: Vec<sinew_blend_target> = attrs
        .iter()
        .map(|[p, q, t]| sinew_blend_target {
            positions: c_deltas(p),
            normals: c_deltas(q),
            tangents: c_deltas(t),
        })
        .collect();
    let mut size = 0usize;
    // SAFETY: live buffers of the lengths given.
    let s = unsafe { sinew_blend_shapes_storage_size(targets.as_ptr(), targets.len(), &mut size) };
    prop_assert_eq!(s, sinew_status::Ok);
    let mut st = storage(size);
    let mut handle = empty_blend();
    prop_assert_eq!(
        c_init(n, &targets, &mut st, &mut handle),
        (sinew_status::Ok, SINEW_NO_INDEX)
    );

    let packed: Vec<[Vec<SoaVec3>; 3]> = attrs
        .iter()
        .map(|[p, q, t]| [blocks(p), blocks(q), blocks(t)])
        .collect();
    let rust_targets: Vec<Target<'_>> = attrs
        .iter()
        .zip(&packed)
        .map(|([p, q, t], [bp, bq, bt])| Target {
            positions: rust_deltas(p, bp),
            normals: rust_deltas(q, bq),
            tangents: rust_deltas(t, bt),
        })
        .collect();
    let shapes = BlendShapes::new(n, &rust_targets).unwrap();

    let p: Vec<[f32; 3]> = (0..n).map(|i| [i as f32, 1.0 - i as f32, 0.5]).collect();
    let nr: Vec<[f32; 3]> = (0..n).map(|i| [0.0, 1.0, i as f32 * 0.1]).collect();
    let t: Vec<[f32; 4]> = (0..n)
        .map(|i| {
            [
                1.0,
                0.0,
                -0.1 * i as f32,
                if i % 2 == 0 { 1.0 } else { -1.0 },
            ]
        })
        .collect();
    let mut want: Mesh = (vec![[0.0; 3]; n], vec![[0.0; 3]; n], vec![[0.0; 4]; n]);
    shapes
        .apply(
            weights,
            BlendOptions {
                threshold,
                renormalize,
            },
            SkinVertices {
                positions: &p,
                normals: Some(&nr),
                tangents: Some(&t),
            },
            SkinOutput {
                positions: &mut want.0,
                normals: Some(&mut want.1),
                tangents: Some(&mut want.2),
            },
        )
        .unwrap();
    let mut got: Mesh = (vec![[9.0; 3]; n], vec![[9.0; 3]; n], vec![[9.0; 4]; n]);
    let base = sinew_skin_mesh {
        vertex_count: n,
        positions: p.as_ptr().cast(),
        normals: nr.as_ptr().cast(),
        tangents: t.as_ptr().cast(),
        joints: std::ptr::null(),
        weights: std::ptr::null(),
        joints1: std::ptr::null(),
        weights1: std::ptr::null(),
    };
    let out = sinew_skin_target {
        positions: got.0.as_mut_ptr().cast(),
        normals: got.1.as_mut_ptr().cast(),
        tangents: got.2.as_mut_ptr().cast(),
    };
    // SAFETY: live buffers of `n` vertices; the handle's storage and dense arrays are alive.
    let s = unsafe {
        sinew_blend_shapes_apply(
            &handle,
            weights.as_ptr(),
            weights.len(),
            threshold,
            u32::from(renormalize),
            &base,
            &out,
        )
    };
    prop_assert_eq!(s, sinew_status::Ok);
    let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
    prop_assert_eq!(bits(got.0.as_flattened()), bits(want.0.as_flattened()));
    prop_assert_eq!(bits(got.1.as_flattened()), bits(want.1.as_flattened()));
    prop_assert_eq!(bits(got.2.as_flattened()), bits(want.2.as_flattened()));
    Ok(())
}

proptest! {
    #[test]
    fn blend_shapes_apply_is_the_rust_apply_bit_for_bit(c in case(), renormalize in any::<bool>(), threshold in prop_oneof![Just(0.0f32), 0.0f32..0.5]) {
        run_case(&c, threshold, renormalize)?;
    }

    #[test]
    fn a_bad_target_is_named_as_the_core_names_it((n, attrs, _) in case(), pick in any::<prop::sample::Index>(), fault in 0usize..4) {
        prop_assume!(!attrs.is_empty());
        let k = pick.index(attrs.len());
        let mut attrs = attrs;
        attrs[k][1] = match fault {
            0 => Attr::Dense(vec![[0.0; 3]; n + 1]),
            1 => Attr::Dense((0..n).map(|i| if i + 1 == n { [f32::NAN; 3] } else { [0.0; 3] }).collect()),
            2 => Attr::Sparse(vec![0, n as u32], vec![[1.0; 3]; 2]),
            _ => Attr::Sparse(vec![0, 0], vec![[1.0; 3]; 2]),
        };
        let targets: Vec<sinew_blend_target> = attrs
            .iter()
            .map(|[p, q, t]| sinew_blend_target { positions: c_deltas(p), normals: c_deltas(q), tangents: c_deltas(t) })
            .collect();
        let packed: Vec<Vec<SoaVec3>> = attrs.iter().map(|[_, q, _]| blocks(q)).collect();
        let rust_targets: Vec<Target<'_>> = attrs
            .iter()
            .zip(&packed)
            .map(|([p, q, t], b)| Target {
                // Only the normals are checked against the core here.
                positions: dense_only(p),
                normals: rust_deltas(q, b),
                tangents: dense_only(t),
            })
            .collect();
        let want = match BlendShapes::new(n, &rust_targets) {
            Err(Error::InvalidShape { shape, .. }) => shape,
            other => return Err(TestCaseError::fail(format!("the core accepted it: {other:?}"))),
        };
        let mut st = storage(1 << 16);
        let before = st.clone();
        let mut handle = empty_blend();
        let (s, bad) = c_init(n, &targets, &mut st, &mut handle);
        let status = if fault == 0 { sinew_status::BadLength } else { sinew_status::InvalidArgument };
        // Positions and tangents are good or absent, so the first bad target is the core's.
        prop_assert_eq!((s, bad), (status, want));
        prop_assert!(st == before);
        prop_assert_eq!(handle.check, 0);
    }
}

/// A random driver list: correctives on the joints, then combinations of
/// earlier shapes. Shape `i` is written by driver `i`; shapes past the
/// drivers are animated.
#[derive(Clone, Debug)]
struct Rig {
    correctives: Vec<sinew_corrective>,
    combos: Vec<Vec<u32>>,
    shapes: usize,
    joints: usize,
    rotations: Vec<[f32; 4]>,
    weights: Vec<f32>,
}

fn unit(v: [f32; 3]) -> [f32; 3] {
    let l = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt().max(1e-3);
    if l < 0.1 {
        return [0.0, 0.0, 1.0];
    }
    v.map(|c| c / l)
}

fn quat() -> impl Strategy<Value = [f32; 4]> {
    prop::array::uniform4(-1.0f32..1.0).prop_map(|q| {
        let l = q.iter().map(|c| c * c).sum::<f32>().sqrt();
        if l < 0.1 {
            [0.0, 0.0, 0.0, 1.0]
        } else {
            q.map(|c| c / l)
        }
    })
}

fn corrective(joints: usize, shape: u32) -> impl Strategy<Value = sinew_corrective> {
    (
        0..joints as u32,
        quat(),
        0u32..3,
        prop::array::uniform3(-1.0f32..1.0),
        -3.0f32..3.0,
        -3.0f32..3.0,
        0u32..2,
    )
        .prop_filter("theta0 != theta1", |c| c.4 != c.5)
        .prop_map(
            move |(joint, reference, angle, axis, from, to, ramp)| sinew_corrective {
                shape,
                joint,
                reference,
                angle,
                axis: unit(axis),
                from,
                to,
                ramp,
            },
        )
}

fn rig() -> impl Strategy<Value = Rig> {
    (1usize..9, 0usize..6, 0usize..5, 0usize..4).prop_flat_map(|(joints, nc, nb, animated)| {
        let shapes = nc + nb + animated;
        let correctives: Vec<_> = (0..nc).map(|i| corrective(joints, i as u32)).collect();
        // Combination `i` (driver `nc + i`) may read only shapes no later
        // driver writes: here the correctives' and the animated ones.
        let readable: Vec<u32> = (0..nc as u32)
            .chain((nc + nb) as u32..shapes as u32)
            .collect();
        let combos = if readable.is_empty() {
            Just(Vec::new()).boxed()
        } else {
            prop::collection::vec(
                prop::collection::vec(prop::sample::select(readable), 1..4),
                nb,
            )
            .boxed()
        };
        (
            correctives,
            combos,
            Just(shapes),
            Just(joints),
            prop::collection::vec(quat(), joints),
            prop::collection::vec(-1.0f32..1.0, shapes),
        )
            .prop_map(
                |(correctives, combos, shapes, joints, rotations, weights)| Rig {
                    correctives,
                    combos,
                    shapes,
                    joints,
                    rotations,
                    weights,
                },
            )
    })
}

fn pose(rotations: &[[f32; 4]]) -> Vec<SoaTransform> {
    let mut p = vec![SoaTransform::default(); soa_count(rotations.len())];
    for (j, q) in rotations.iter().enumerate() {
        let r = &mut p[j / 4].rotation;
        let l = j % 4;
        let set = |v: &mut sinew_core::f32x4, x: f32| {
            let mut a = v.to_array();
            a[l] = x;
            *v = a.into();
        };
        set(&mut r.x, q[0]);
        set(&mut r.y, q[1]);
        set(&mut r.z, q[2]);
        set(&mut r.w, q[3]);
    }
    p
}

fn rust_corrective(c: &sinew_corrective) -> Corrective {
    let axis = Vec3::new(c.axis[0], c.axis[1], c.axis[2]);
    Corrective {
        shape: c.shape,
        joint: c.joint,
        reference: Quat::new(
            c.reference[0],
            c.reference[1],
            c.reference[2],
            c.reference[3],
        ),
        angle: match c.angle {
            0 => Angle::Swing { axis },
            1 => Angle::Twist { axis },
            _ => Angle::Total,
        },
        from: c.from,
        to: c.to,
        ramp: if c.ramp == 0 {
            Ramp::Linear
        } else {
            Ramp::Smoothstep
        },
    }
}

fn empty_drivers() -> sinew_shape_drivers {
    sinew_shape_drivers {
        shape_count: 0,
        joint_count: 0,
        driver_count: 0,
        storage: std::ptr::null(),
        storage_size: 0,
        check: 0,
    }
}

proptest! {
    #[test]
    fn shape_drivers_evaluate_is_the_rust_evaluate_bit_for_bit(r in rig()) {
        let nc = r.correctives.len();
        let combos: Vec<sinew_combination> = r
            .combos
            .iter()
            .enumerate()
            .map(|(i, inputs)| sinew_combination {
                shape: (nc + i) as u32,
                inputs: inputs.as_ptr(),
                input_count: inputs.len(),
            })
            .collect();
        let mut size = 0usize;
        // SAFETY: live buffers of the lengths given.
        let s = unsafe { sinew_shape_drivers_storage_size(nc, combos.as_ptr(), combos.len(), &mut size) };
        prop_assert_eq!(s, sinew_status::Ok);
        let mut st = storage(size);
        let mut handle = empty_drivers();
        let mut bad = 7u32;
        // SAFETY: live buffers of the lengths given.
        let s = unsafe {
            sinew_shape_drivers_init(
                r.shapes,
                r.joints,
                r.correctives.as_ptr(),
                nc,
                combos.as_ptr(),
                combos.len(),
                st.as_mut_ptr().cast(),
                size,
                &mut handle,
                &mut bad,
            )
        };
        prop_assert_eq!((s, bad), (sinew_status::Ok, SINEW_NO_INDEX));

        let drivers: Vec<Driver<'_>> = r
            .correctives
            .iter()
            .map(|c| Driver::Corrective(rust_corrective(c)))
            .chain(r.combos.iter().enumerate().map(|(i, inputs)| {
                Driver::Combination(Combination { shape: (nc + i) as u32, inputs })
            }))
            .collect();
        let rust = ShapeDrivers::new(r.shapes, r.joints, &drivers).unwrap();
        let p = pose(&r.rotations);
        let mut want = r.weights.clone();
        rust.evaluate(&p, &mut want).unwrap();
        let mut got = r.weights.clone();
        let c_pose: &[sinew_soa_transform] = bytemuck::cast_slice(&p);
        // SAFETY: live buffers of the lengths given; the handle's storage is alive.
        let s = unsafe {
            sinew_shape_drivers_evaluate(&handle, c_pose.as_ptr(), c_pose.len(), got.as_mut_ptr(), got.len())
        };
        prop_assert_eq!(s, sinew_status::Ok);
        let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
        prop_assert_eq!(bits(&got), bits(&want));
    }
}

const KERNELS: [(u32, RbfKernel); 3] = [
    (SINEW_RBF_GAUSSIAN, RbfKernel::Gaussian),
    (SINEW_RBF_THIN_PLATE, RbfKernel::ThinPlate),
    (SINEW_RBF_MULTIQUADRIC, RbfKernel::Multiquadric),
];

/// One fit: kernel index, sigma, lambda, examples, targets, outputs.
type Fit = (usize, f32, f32, Vec<[f32; 4]>, Vec<f32>, usize);

fn fit() -> impl Strategy<Value = Fit> {
    (0usize..3, 1usize..5, 1usize..4).prop_flat_map(|(k, n, m)| {
        (
            Just(k),
            0.2f32..2.0,
            prop_oneof![Just(0.0f32), 0.0f32..0.5],
            prop::collection::vec(quat(), n),
            prop::collection::vec(-1.0f32..1.0, n * m),
            Just(m),
        )
    })
}

fn c_fit(f: &Fit) -> sinew_rbf_fit {
    sinew_rbf_fit {
        kernel: KERNELS[f.0].0,
        sigma: f.1,
        lambda: f.2,
        examples: f.3.as_ptr().cast(),
        example_count: f.3.len(),
        targets: f.4.as_ptr(),
        output_count: f.5,
    }
}

fn quats(q: &[[f32; 4]]) -> Vec<Quat> {
    q.iter()
        .map(|q| Quat::new(q[0], q[1], q[2], q[3]))
        .collect()
}

fn empty_rbf() -> sinew_rbf_drivers {
    sinew_rbf_drivers {
        joint_count: 0,
        driver_count: 0,
        output_count: 0,
        storage: std::ptr::null(),
        storage_size: 0,
        check: 0,
    }
}

proptest! {
    #[test]
    fn rbf_solve_and_evaluate_are_the_rust_ones_bit_for_bit(
        fits in prop::collection::vec(fit(), 1..4),
        joints in 1usize..7,
        picks in prop::collection::vec(0usize..64, 3),
        rotations in prop::collection::vec(quat(), 7),
        clamp in any::<bool>(),
    ) {
        // Rust: each fit on its own, `None` for a failure naming the fit.
        let ex: Vec<Vec<Quat>> = fits.iter().map(|f| quats(&f.3)).collect();
        let mut want = Vec::new();
        let mut first_bad = None;
        for (k, f) in fits.iter().enumerate() {
            let fit = RbfFit { kernel: KERNELS[f.0].1, sigma: f.1, lambda: f.2, examples: &ex[k], targets: &f.4, outputs: f.5 };
            let mut s = vec![0.0f64; fit.scratch_len()];
            let mut w = vec![0.0f32; f.3.len() * f.5];
            match fit.solve(k as u32, &mut s, &mut w) {
                Ok(()) => want.extend_from_slice(&w),
                Err(Error::InvalidDriver { driver, .. }) => {
                    prop_assert_eq!(driver, k as u32);
                    first_bad.get_or_insert(k as u32);
                }
                Err(e) => prop_assert!(false, "{e:?}"),
            }
        }
        let c: Vec<sinew_rbf_fit> = fits.iter().map(c_fit).collect();
        let (mut sl, mut wc) = (0usize, 0usize);
        // SAFETY: live buffers of the lengths given.
        let s = unsafe { sinew_rbf_solve_sizes(c.as_ptr(), c.len(), &mut sl, &mut wc) };
        prop_assert_eq!(s, sinew_status::Ok);
        let mut scratch = vec![0.0f64; sl];
        let mut got = vec![9.0f32; wc];
        let mut bad = 7u32;
        // SAFETY: live buffers of the lengths given.
        let s = unsafe {
            sinew_rbf_solve(c.as_ptr(), c.len(), scratch.as_mut_ptr(), sl, got.as_mut_ptr(), wc, &mut bad)
        };
        let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
        if let Some(k) = first_bad {
            prop_assert_eq!((s, bad), (sinew_status::InvalidArgument, k));
            prop_assert!(got.iter().all(|&w| w == 9.0));
            return Ok(());
        }
        prop_assert_eq!((s, bad), (sinew_status::Ok, SINEW_NO_INDEX));
        prop_assert_eq!(bits(&got), bits(&want));

        // The solved weights drive a set, through C and through Rust.
        let mut at = 0;
        let (mut c_drivers, mut r_drivers) = (Vec::new(), Vec::new());
        for (k, f) in fits.iter().enumerate() {
            let (n, m) = (f.3.len(), f.5);
            let w = &got[at..at + n * m];
            at += n * m;
            let joint = picks[k % picks.len()] % joints;
            c_drivers.push(sinew_rbf_driver {
                joint: joint as u32,
                kernel: KERNELS[f.0].0,
                sigma: f.1,
                clamp: u32::from(clamp),
                examples: f.3.as_ptr().cast(),
                example_count: n,
                weights: w.as_ptr(),
                output_count: m,
            });
            r_drivers.push(RbfDriver { joint: joint as u16, kernel: KERNELS[f.0].1, sigma: f.1, examples: &ex[k], weights: w, outputs: m, clamp });
        }
        let mut size = 0usize;
        // SAFETY: live buffers of the lengths given.
        let s = unsafe { sinew_rbf_drivers_storage_size(c_drivers.as_ptr(), c_drivers.len(), &mut size) };
        prop_assert_eq!(s, sinew_status::Ok);
        let mut st = storage(size);
        let mut handle = empty_rbf();
        // SAFETY: live buffers of the lengths given.
        let s = unsafe {
            sinew_rbf_drivers_init(joints, c_drivers.as_ptr(), c_drivers.len(), st.as_mut_ptr().cast(), size, &mut handle, &mut bad)
        };
        prop_assert_eq!((s, bad), (sinew_status::Ok, SINEW_NO_INDEX));
        let set = RbfSet::new(&r_drivers, joints).unwrap();
        let p = pose(&rotations[..joints]);
        let mut want = vec![0.0f32; set.output_count()];
        set.evaluate_pose(&p, &mut want).unwrap();
        let mut out = vec![0.0f32; handle.output_count];
        let c_pose: &[sinew_soa_transform] = bytemuck::cast_slice(&p);
        // SAFETY: live buffers of the lengths given; the handle's storage is alive.
        let s = unsafe {
            sinew_rbf_drivers_evaluate(&handle, c_pose.as_ptr(), c_pose.len(), out.as_mut_ptr(), out.len())
        };
        prop_assert_eq!(s, sinew_status::Ok);
        prop_assert_eq!(bits(&out), bits(&want));
    }
}

/// A `w` by `h` grid of vertices with random heights, two triangles a cell.
fn grid(w: u32, h: u32, z: &[f32]) -> (Vec<[f32; 3]>, Vec<u32>) {
    let p = (0..w * h)
        .map(|v| [(v % w) as f32, (v / w) as f32, z[v as usize % z.len()]])
        .collect();
    let mut t = Vec::new();
    for y in 0..h - 1 {
        for x in 0..w - 1 {
            let (a, c) = (y * w + x, (y + 1) * w + x);
            t.extend_from_slice(&[a, a + 1, c + 1, a, c + 1, c]);
        }
    }
    (p, t)
}

proptest! {
    #[test]
    fn delta_mush_is_the_rust_one_bit_for_bit(
        w in 2u32..6,
        h in 2u32..6,
        z in prop::collection::vec(-0.5f32..0.5, 1..40),
        moves in prop::collection::vec(prop::array::uniform3(-0.3f32..0.3), 1..40),
        iterations in 0u32..6,
        step in 0.05f32..1.0,
    ) {
        let (rest, tris) = grid(w, h, &z);
        let n = rest.len();
        let settings = MushSettings { iterations, step };
        // Rust.
        let mut offsets = vec![0u32; n + 1];
        let mut nb = vec![0u32; neighbour_capacity(tris.len())];
        let used = build_adjacency(&tris, n, &mut offsets, &mut nb).unwrap();
        let adj = MushAdjacency::new(&offsets, &nb[..used]).unwrap();
        let mut scratch = vec![[0.0f32; 4]; 2 * n];
        let mut deltas = vec![[0.0f32; 4]; n];
        rest_deltas(&adj, &tris, settings, &rest, &mut scratch, &mut deltas).unwrap();
        let mush = DeltaMush::new(adj, &tris, &deltas, settings).unwrap();
        let skinned: Vec<[f32; 3]> = rest
            .iter()
            .enumerate()
            .map(|(v, p)| {
                let d = moves[v % moves.len()];
                [p[0] + d[0], p[1] + d[1], p[2] + d[2]]
            })
            .collect();
        let mut want = vec![[0.0f32; 3]; n];
        mush.deform(&skinned, &mut scratch, &mut want).unwrap();

        // C.
        let mut counts = sinew_mush_counts::default();
        // SAFETY: a live out-parameter.
        let s = unsafe { sinew_mush_sizes(n, tris.len(), &mut counts) };
        prop_assert_eq!(s, sinew_status::Ok);
        let cs = sinew_mush_settings { iterations, step };
        let mut c_offsets = vec![0u32; counts.offsets];
        let mut c_nb = vec![0u32; counts.neighbour_capacity];
        let mut c_scratch = vec![[0.0f32; 4]; counts.scratch];
        let mut c_deltas = vec![[0.0f32; 4]; counts.deltas];
        let mut c_used = 0usize;
        // SAFETY: live buffers of the lengths given.
        let s = unsafe {
            sinew_mush_build(
                tris.as_ptr(), tris.len(), rest.as_ptr().cast(), n, cs,
                c_offsets.as_mut_ptr(), c_offsets.len(), c_nb.as_mut_ptr(), c_nb.len(), &mut c_used,
                c_scratch.as_mut_ptr().cast(), c_scratch.len(), c_deltas.as_mut_ptr().cast(), c_deltas.len(),
            )
        };
        prop_assert_eq!(s, sinew_status::Ok);
        prop_assert_eq!(c_used, used);
        prop_assert_eq!(&c_offsets, &offsets);
        prop_assert_eq!(&c_nb[..used], &nb[..used]);
        let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
        prop_assert_eq!(bits(c_deltas.as_flattened()), bits(deltas.as_flattened()));

        let mut st = storage(counts.storage_size);
        let mut handle = sinew_delta_mush { vertex_count: 0, storage: std::ptr::null(), storage_size: 0, check: 0 };
        // SAFETY: live buffers of the lengths given.
        let s = unsafe {
            sinew_mush_init(
                tris.as_ptr(), tris.len(), c_offsets.as_ptr(), n, c_nb.as_ptr(), c_used,
                c_deltas.as_ptr().cast(), cs, st.as_mut_ptr().cast(), counts.storage_size, &mut handle,
            )
        };
        prop_assert_eq!(s, sinew_status::Ok);
        let mut got = vec![[0.0f32; 3]; n];
        // SAFETY: live buffers of the lengths given; the handle's arrays and storage are alive.
        let s = unsafe {
            sinew_mush_deform(
                &handle, skinned.as_ptr().cast(), n, c_scratch.as_mut_ptr().cast(), c_scratch.len(),
                got.as_mut_ptr().cast(), n,
            )
        };
        prop_assert_eq!(s, sinew_status::Ok);
        prop_assert_eq!(bits(got.as_flattened()), bits(want.as_flattened()));
    }
}
