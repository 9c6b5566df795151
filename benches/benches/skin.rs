//! Skinning benches: palettes for a 67-joint skeleton, and LBS / DQS vertex
//! skinning (positions + normals, positions only) on a generated 4-influence
//! mesh and on the real MakeHuman and mannequin meshes when
//! `../shared/data` is present (also sorted by influence count, group
//! `skin-order`), and on generated 8-influence meshes.
//!
//! Every `skin/*` figure is one whole [`SkinJob`] run: length checks, the
//! influence check (a [`CheckedInfluences`] built in the call, except in
//! the `-checked` and `-paired` variants, which take one built once per
//! mesh, so the job checks only the palette length; `-paired`'s carries a
//! DQS pair table, so the call first aligns the palette's signs and then
//! skins without per-vertex sign tests), and skinning of
//! every vertex with 4 influences (positions + normals, or positions only),
//! written to the output arrays.
//!
//! Ids are `<group>/<mesh>/<variant>`; throughput is in joints (palettes) or
//! vertices (skinning), so criterion's "thrpt" line inverts to ns per element.
//!
//! ```text
//! cargo bench -p sinew-benches --bench skin -- --noplot
//! ```

use std::hint::black_box;
use std::path::Path;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use sinew_benches::config;
use sinew_benches::POSE_ANGLE;
use sinew_core::fk::{self, FkJob};
use sinew_core::skin::{
    self, CheckedInfluences, DualQuat, Mat3x4, SkinAttributes, SkinBlocks, SkinInput, SkinJob,
    SkinMethod, SkinOutput, SkinVertices, StridedVertices, StridedVerticesMut, VertexBlock,
};
use sinew_core::{Error, Mat4, Skeleton};
use sinew_std::synthetic;

/// SplitMix64 uniforms in `[0, 1)`.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f32 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// One [`SkinJob`] over separate arrays.
fn skin_arrays(
    method: SkinMethod<'_>,
    influences: &CheckedInfluences<'_>,
    input: SkinVertices<'_>,
    output: SkinOutput<'_>,
) -> Result<(), Error> {
    let attributes = SkinAttributes::Arrays { input, output };
    SkinJob {
        method,
        influences,
        attributes,
    }
    .run()
}

/// [`skin_arrays`] with the four influences of `input` checked against
/// `joint_count` first, as a caller whose influences change between
/// frames does.
fn skin_input(
    method: SkinMethod<'_>,
    joint_count: usize,
    input: &SkinInput<'_>,
    output: SkinOutput<'_>,
) -> Result<(), Error> {
    let influences = CheckedInfluences::new(input.joints, input.weights, joint_count)?;
    skin_arrays(method, &influences, input.vertices(), output)
}

/// A skinned mesh's data, owned.
struct MeshData {
    label: String,
    positions: Vec<[f32; 3]>,
    normals: Vec<[f32; 3]>,
    joints: Vec<[u16; 4]>,
    weights: Vec<[f32; 4]>,
    /// Model matrices of a pose, one per joint.
    models: Vec<Mat4>,
    inverse_bind: Vec<Mat4>,
}

/// Model matrices of a synthetic pose of `skel` (seeded).
fn posed_models(skel: &Skeleton<'_>, seed: u64) -> Vec<Mat4> {
    let pose = synthetic::pose(skel, POSE_ANGLE, seed);
    let mut models = vec![Mat4::IDENTITY; skel.joint_count()];
    fk::local_to_model(&FkJob::new(skel, &pose), &mut models).expect("fk");
    models
}

/// ~4000 vertices, four influences each over the 67-joint synthetic rig.
fn generated_mesh(vertices: usize) -> MeshData {
    let owned = synthetic::skeleton(67, 2024);
    let skel = owned.view();
    let mut rng = Rng(7);
    let unit = |rng: &mut Rng| {
        let v = [rng.next() - 0.5, rng.next() - 0.5, rng.next() - 0.5 + 1e-3];
        let l = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
        [v[0] / l, v[1] / l, v[2] / l]
    };
    let mut m = MeshData {
        label: format!("generated-{vertices}"),
        positions: Vec::new(),
        normals: Vec::new(),
        joints: Vec::new(),
        weights: Vec::new(),
        models: posed_models(&skel, 11),
        inverse_bind: skel.inverse_bind().to_vec(),
    };
    for _ in 0..vertices {
        m.positions.push([
            rng.next() * 0.6 - 0.3,
            rng.next() * 1.8,
            rng.next() * 0.4 - 0.2,
        ]);
        m.normals.push(unit(&mut rng));
        let j: [u16; 4] = std::array::from_fn(|_| (rng.next() * 67.0) as u16 % 67);
        let w: [f32; 4] = std::array::from_fn(|_| rng.next() + 0.05);
        let s: f32 = w.iter().sum();
        m.joints.push(j);
        m.weights.push(w.map(|x| x / s));
    }
    m
}

/// The first skinned mesh of a glTF file under `../shared/data/gltf`, posed.
fn data_mesh(label: &str, rel: &str) -> Option<MeshData> {
    data_mesh_ordered(label, rel, false)
}

/// [`data_mesh`], its vertices sorted by influence count when `sorted`
/// (`Mesh::sort_by_influence_count`).
fn data_mesh_ordered(label: &str, rel: &str, sorted: bool) -> Option<MeshData> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data/gltf")
        .join(rel);
    if !path.exists() {
        eprintln!("skipped: {} not found", path.display());
        return None;
    }
    let a = sinew_std::import::gltf::load(&path, &Default::default()).expect("import");
    let skel = a.skeleton.view();
    let models = posed_models(&skel, 5);
    let mut m = a.meshes.into_iter().max_by_key(|m| m.positions.len())?;
    if sorted {
        m.sort_by_influence_count().expect("sorts");
    }
    Some(MeshData {
        label: label.to_string(),
        positions: m.positions,
        normals: m.normals,
        joints: m.joints,
        weights: m.weights,
        models,
        inverse_bind: m.inverse_bind,
    })
}

/// `palette`: LBS and DQS palettes of 67 joints.
fn bench_palette(c: &mut Criterion) {
    let mut group = c.benchmark_group("palette");
    let owned = synthetic::skeleton(67, 2024);
    let skel = owned.view();
    let models = posed_models(&skel, 3);
    let ibm = skel.inverse_bind();
    let n = skel.joint_count();
    let mut lbs = vec![Mat3x4::IDENTITY; n];
    let mut dqs = vec![DualQuat::IDENTITY; n];
    group.throughput(Throughput::Elements(n as u64));
    group.bench_function(BenchmarkId::new("67", "lbs"), |b| {
        b.iter(|| skin::lbs_palette(black_box(&models), black_box(ibm), black_box(&mut lbs)))
    });
    let mut binds = vec![skin::LbsBind::default(); n];
    skin::prepare_lbs_binds(ibm, &mut binds).unwrap();
    group.bench_function(BenchmarkId::new("67", "lbs-prepared"), |b| {
        b.iter(|| {
            skin::lbs_palette_prepared(black_box(&models), black_box(&binds), black_box(&mut lbs))
        })
    });
    group.bench_function(BenchmarkId::new("67", "dqs"), |b| {
        b.iter(|| skin::dqs_palette(black_box(&models), black_box(ibm), black_box(&mut dqs)))
    });
    let mut dbinds = vec![skin::DqsBinds::default(); skin::DqsBinds::count(n)];
    skin::prepare_dqs_binds(ibm, &mut dbinds).unwrap();
    group.bench_function(BenchmarkId::new("67", "dqs-prepared"), |b| {
        b.iter(|| {
            skin::dqs_palette_prepared(black_box(&models), black_box(&dbinds), black_box(&mut dqs))
        })
    });
    group.bench_function(BenchmarkId::new("67", "lbs-reference"), |b| {
        b.iter(|| {
            skin::reference::lbs_palette(black_box(&models), black_box(ibm), black_box(&mut lbs))
        })
    });
    group.bench_function(BenchmarkId::new("67", "dqs-reference"), |b| {
        b.iter(|| {
            skin::reference::dqs_palette(black_box(&models), black_box(ibm), black_box(&mut dqs))
        })
    });
    group.finish();
}

/// `skin`: LBS, DQS and mixed, positions + normals and positions only.
fn bench_skin(c: &mut Criterion) {
    let mut group = c.benchmark_group("skin");
    let meshes: Vec<MeshData> = [
        Some(generated_mesh(4000)),
        data_mesh("makehuman", "makehuman-cc0/makehuman_default163_4infl.glb"),
        data_mesh("mannequiny", "gdquest-mannequiny/mannequiny-0.3.0.glb"),
    ]
    .into_iter()
    .flatten()
    .collect();
    for m in &meshes {
        let n = m.positions.len();
        let joints = m.models.len();
        skin::check_influences(&m.joints, &m.weights, joints).expect("valid influences");
        let mut lbs = vec![Mat3x4::IDENTITY; joints];
        let mut dqs = vec![DualQuat::IDENTITY; joints];
        skin::lbs_palette(&m.models, &m.inverse_bind, &mut lbs).expect("palette");
        skin::dqs_palette(&m.models, &m.inverse_bind, &mut dqs).expect("palette");
        let normals = (m.normals.len() == n).then_some(m.normals.as_slice());
        let input = SkinInput {
            positions: &m.positions,
            normals,
            tangents: None,
            joints: &m.joints,
            weights: &m.weights,
        };
        // Checked once per mesh, as a game would at load time.
        let infl = CheckedInfluences::new(&m.joints, &m.weights, joints).expect("valid");
        // And with a DQS pair table (also built at load time).
        let mut pair_buf = vec![[0u16; 2]; infl.dqs_pair_count().expect("count")];
        let paired = infl.with_dqs_pairs(&mut pair_buf).expect("pair table");
        let verts = input.vertices();
        let mut pos = vec![[0.0f32; 3]; n];
        let mut nrm = vec![[0.0f32; 3]; n];
        let mix: Vec<f32> = (0..n).map(|i| (i % 2) as f32).collect();
        let id = |v: &str| BenchmarkId::new(m.label.as_str(), v);
        group.throughput(Throughput::Elements(n as u64));

        if normals.is_some() {
            group.bench_function(id("lbs-pos-nrm"), |b| {
                b.iter(|| {
                    let out = SkinOutput {
                        positions: &mut pos,
                        normals: Some(&mut nrm),
                        tangents: None,
                    };
                    let method = SkinMethod::Lbs {
                        palette: black_box(&lbs),
                    };
                    skin_input(method, joints, black_box(&input), out)
                })
            });
            group.bench_function(id("lbs-pos-nrm-checked"), |b| {
                b.iter(|| {
                    let out = SkinOutput {
                        positions: &mut pos,
                        normals: Some(&mut nrm),
                        tangents: None,
                    };
                    let method = SkinMethod::Lbs {
                        palette: black_box(&lbs),
                    };
                    skin_arrays(method, black_box(&infl), *black_box(&verts), out)
                })
            });
            for (variant, tables) in [
                ("dqs-pos-nrm-checked", &infl),
                ("dqs-pos-nrm-paired", &paired),
            ] {
                group.bench_function(id(variant), |b| {
                    b.iter(|| {
                        let out = SkinOutput {
                            positions: &mut pos,
                            normals: Some(&mut nrm),
                            tangents: None,
                        };
                        let method = SkinMethod::Dqs {
                            palette: black_box(&dqs),
                        };
                        skin_arrays(method, black_box(tables), *black_box(&verts), out)
                    })
                });
            }
            group.bench_function(id("dqs-pos-nrm"), |b| {
                b.iter(|| {
                    let out = SkinOutput {
                        positions: &mut pos,
                        normals: Some(&mut nrm),
                        tangents: None,
                    };
                    let method = SkinMethod::Dqs {
                        palette: black_box(&dqs),
                    };
                    skin_input(method, joints, black_box(&input), out)
                })
            });
            group.bench_function(id("mixed-pos-nrm"), |b| {
                b.iter(|| {
                    let out = SkinOutput {
                        positions: &mut pos,
                        normals: Some(&mut nrm),
                        tangents: None,
                    };
                    let method = SkinMethod::Mixed {
                        lbs: black_box(&lbs),
                        dqs: black_box(&dqs),
                        mix: black_box(&mix),
                    };
                    skin_input(method, joints, black_box(&input), out)
                })
            });
            group.bench_function(id("lbs-pos-nrm-reference"), |b| {
                b.iter(|| {
                    let mut out = SkinOutput {
                        positions: &mut pos,
                        normals: Some(&mut nrm),
                        tangents: None,
                    };
                    skin::reference::skin_lbs(black_box(&lbs), black_box(&input), &mut out)
                })
            });
        }
        group.bench_function(id("check-influences"), |b| {
            b.iter(|| skin::check_influences(black_box(&m.joints), black_box(&m.weights), joints))
        });
        group.bench_function(id("lbs-pos"), |b| {
            b.iter(|| {
                let out = SkinOutput {
                    positions: &mut pos,
                    normals: None,
                    tangents: None,
                };
                let method = SkinMethod::Lbs {
                    palette: black_box(&lbs),
                };
                skin_input(method, joints, black_box(&input), out)
            })
        });
        group.bench_function(id("dqs-pos"), |b| {
            b.iter(|| {
                let out = SkinOutput {
                    positions: &mut pos,
                    normals: None,
                    tangents: None,
                };
                let method = SkinMethod::Dqs {
                    palette: black_box(&dqs),
                };
                skin_input(method, joints, black_box(&input), out)
            })
        });

        // Interleaved: [pos nrm uv] in, [pos nrm uv] out (stride 8).
        if let Some(normals) = normals {
            let mut src = vec![0.0f32; n * 8];
            for (v, chunk) in src.chunks_exact_mut(8).enumerate() {
                chunk[..3].copy_from_slice(&m.positions[v]);
                chunk[3..6].copy_from_slice(&normals[v]);
            }
            let sv = StridedVertices {
                data: &src,
                stride: 8,
                position: 0,
                normal: Some(3),
                tangent: None,
            };
            let mut dst = vec![0.0f32; n * 8];
            group.bench_function(id("lbs-pos-nrm-strided"), |b| {
                b.iter(|| {
                    let dv = StridedVerticesMut {
                        data: &mut dst,
                        stride: 8,
                        position: 0,
                        normal: Some(3),
                        tangent: None,
                    };
                    let (j, w) = (black_box(&m.joints), black_box(&m.weights));
                    let influences = CheckedInfluences::new(j, w, joints)?;
                    SkinJob {
                        method: SkinMethod::Lbs {
                            palette: black_box(&lbs),
                        },
                        influences: &influences,
                        attributes: SkinAttributes::Strided {
                            input: *black_box(&sv),
                            output: dv,
                        },
                    }
                    .run()
                })
            });
        }
    }
    group.finish();
}

/// `skin-order/<mesh>/<method>-<order>`: LBS (influences checked once),
/// DQS (with its pair table) and LBS over the mesh prepared in blocks
/// (`lbs-blocks`, [`SkinBlocks`]) on the real meshes in their file's vertex
/// order and sorted by influence count, positions and normals, one run.
fn bench_order(c: &mut Criterion) {
    let mut group = c.benchmark_group("skin-order");
    for (label, rel) in [
        ("makehuman", "makehuman-cc0/makehuman_default163_4infl.glb"),
        ("mannequiny", "gdquest-mannequiny/mannequiny-0.3.0.glb"),
    ] {
        for (order, sorted) in [("file", false), ("sorted", true)] {
            let Some(m) = data_mesh_ordered(label, rel, sorted) else {
                continue;
            };
            let (n, joints) = (m.positions.len(), m.models.len());
            let mut lbs = vec![Mat3x4::IDENTITY; joints];
            let mut dqs = vec![DualQuat::IDENTITY; joints];
            skin::lbs_palette(&m.models, &m.inverse_bind, &mut lbs).expect("palette");
            skin::dqs_palette(&m.models, &m.inverse_bind, &mut dqs).expect("palette");
            let infl = CheckedInfluences::new(&m.joints, &m.weights, joints).expect("valid");
            let mut pair_buf = vec![[0u16; 2]; infl.dqs_pair_count().expect("count")];
            let paired = infl.with_dqs_pairs(&mut pair_buf).expect("pair table");
            let verts = SkinVertices {
                positions: &m.positions,
                normals: Some(&m.normals),
                tangents: None,
            };
            let mut pos = vec![[0.0f32; 3]; n];
            let mut nrm = vec![[0.0f32; 3]; n];
            group.throughput(Throughput::Elements(n as u64));
            for (method, tables) in [("lbs", &infl), ("dqs-paired", &paired)] {
                group.bench_function(BenchmarkId::new(label, format!("{method}-{order}")), |b| {
                    b.iter(|| {
                        let out = SkinOutput {
                            positions: &mut pos,
                            normals: Some(&mut nrm),
                            tangents: None,
                        };
                        let method = if method == "lbs" {
                            SkinMethod::Lbs {
                                palette: black_box(&lbs),
                            }
                        } else {
                            SkinMethod::Dqs {
                                palette: black_box(&dqs),
                            }
                        };
                        skin_arrays(method, black_box(tables), *black_box(&verts), out)
                    })
                });
            }
            let mut blocks = vec![VertexBlock::default(); SkinBlocks::block_count(n)];
            let prepared = SkinBlocks::new(&infl, verts, &mut blocks).expect("prepared");
            group.bench_function(
                BenchmarkId::new(label, format!("lbs-blocks-{order}")),
                |b| {
                    b.iter(|| {
                        let out = SkinOutput {
                            positions: &mut pos,
                            normals: Some(&mut nrm),
                            tangents: None,
                        };
                        black_box(&prepared).lbs(black_box(&lbs), out)
                    })
                },
            );
        }
    }
    group.finish();
}

/// One mesh's output positions and normals.
type Attributes = (Vec<[f32; 3]>, Vec<[f32; 3]>);

/// `character`: every skinned mesh of the mannequin (body, 7,232 vertices;
/// two smaller meshes of 64 and 3,070: 10,366 in all), one checked call per
/// mesh with its own palette, positions + normals, as a game skins a whole
/// character; throughput is the character's vertices.
fn bench_character(c: &mut Criterion) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data/gltf/gdquest-mannequiny/mannequiny-0.3.0.glb");
    if !path.exists() {
        eprintln!("skipped: {} not found", path.display());
        return;
    }
    let a = sinew_std::import::gltf::load(&path, &Default::default()).expect("import");
    let skel = a.skeleton.view();
    let models = posed_models(&skel, 5);
    let joints = models.len();
    let meshes: Vec<_> = a
        .meshes
        .iter()
        .filter(|m| m.normals.len() == m.positions.len())
        .collect();
    let palettes: Vec<(Vec<Mat3x4>, Vec<DualQuat>)> = meshes
        .iter()
        .map(|m| {
            let mut lbs = vec![Mat3x4::IDENTITY; joints];
            let mut dqs = vec![DualQuat::IDENTITY; joints];
            skin::lbs_palette(&models, &m.inverse_bind, &mut lbs).expect("palette");
            skin::dqs_palette(&models, &m.inverse_bind, &mut dqs).expect("palette");
            (lbs, dqs)
        })
        .collect();
    let infl: Vec<CheckedInfluences<'_>> = meshes
        .iter()
        .map(|m| CheckedInfluences::new(&m.joints, &m.weights, joints).expect("valid"))
        .collect();
    // With DQS pair tables, built once per mesh.
    let mut pair_bufs: Vec<Vec<[u16; 2]>> = infl
        .iter()
        .map(|i| vec![[0u16; 2]; i.dqs_pair_count().expect("count")])
        .collect();
    let paired: Vec<CheckedInfluences<'_>> = infl
        .iter()
        .zip(pair_bufs.iter_mut())
        .map(|(i, buf)| i.with_dqs_pairs(buf).expect("pair table"))
        .collect();
    let verts: Vec<SkinVertices<'_>> = meshes
        .iter()
        .map(|m| SkinVertices {
            positions: &m.positions,
            normals: Some(&m.normals),
            tangents: None,
        })
        .collect();
    let mut outs: Vec<Attributes> = meshes
        .iter()
        .map(|m| {
            (
                vec![[0.0; 3]; m.positions.len()],
                vec![[0.0; 3]; m.positions.len()],
            )
        })
        .collect();
    let total: usize = meshes.iter().map(|m| m.positions.len()).sum();
    let mut group = c.benchmark_group("character");
    group.throughput(Throughput::Elements(total as u64));
    let label = format!("mannequiny-{}-meshes-{total}", meshes.len());
    for (variant, dqs, tables) in [
        ("lbs-pos-nrm-checked", false, &infl),
        ("dqs-pos-nrm-checked", true, &infl),
        ("dqs-pos-nrm-paired", true, &paired),
    ] {
        group.bench_function(BenchmarkId::new(label.as_str(), variant), |b| {
            b.iter(|| {
                for (((pal, infl), v), (p, n)) in
                    palettes.iter().zip(tables).zip(&verts).zip(outs.iter_mut())
                {
                    let out = SkinOutput {
                        positions: p,
                        normals: Some(n),
                        tangents: None,
                    };
                    let method = if dqs {
                        SkinMethod::Dqs {
                            palette: black_box(&pal.1),
                        }
                    } else {
                        SkinMethod::Lbs {
                            palette: black_box(&pal.0),
                        }
                    };
                    skin_arrays(method, infl, *v, out).expect("skins");
                }
            })
        });
    }
    group.finish();
}

/// Eight influence slots per vertex over the 67-joint synthetic rig: every
/// vertex using 8 (`all-8`), or the first eighth of the vertices using 5-8
/// and the rest 4 (`some-8`, as a mesh with one dense region, stored
/// together, has them).
fn eight_influence_mesh(vertices: usize, all: bool) -> MeshData8 {
    // Its vertices and pose; the influences are drawn again below.
    let base = generated_mesh(vertices);
    let mut rng = Rng(13);
    let (mut j0, mut w0, mut j1, mut w1) = (vec![], vec![], vec![], vec![]);
    for v in 0..vertices {
        let used = if all {
            8
        } else if v < vertices / 8 {
            5 + (rng.next() * 4.0) as usize % 4
        } else {
            4
        };
        let j: [u16; 8] = std::array::from_fn(|_| (rng.next() * 67.0) as u16 % 67);
        let mut w: [f32; 8] = std::array::from_fn(|_| rng.next() + 0.05);
        w.iter_mut().skip(used).for_each(|x| *x = 0.0);
        w.sort_by(|a, b| b.total_cmp(a));
        let s: f32 = w.iter().sum();
        let w = w.map(|x| x / s);
        j0.push([j[0], j[1], j[2], j[3]]);
        j1.push([j[4], j[5], j[6], j[7]]);
        w0.push([w[0], w[1], w[2], w[3]]);
        w1.push([w[4], w[5], w[6], w[7]]);
    }
    MeshData8 {
        label: format!("{}-{vertices}", if all { "all-8" } else { "some-8" }),
        positions: base.positions,
        normals: base.normals,
        sets: [(j0, w0), (j1, w1)],
        models: base.models,
        inverse_bind: base.inverse_bind,
    }
}

/// Four influence slots of every vertex: joints and weights.
type InfluenceSet = (Vec<[u16; 4]>, Vec<[f32; 4]>);

/// A mesh with eight influences per vertex, owned.
struct MeshData8 {
    label: String,
    positions: Vec<[f32; 3]>,
    normals: Vec<[f32; 3]>,
    /// Slots 0-3 and 4-7: joints and weights.
    sets: [InfluenceSet; 2],
    models: Vec<Mat4>,
    inverse_bind: Vec<Mat4>,
}

/// `eight`: LBS and DQS with eight influences per vertex (checked
/// influences, positions + normals), DQS with their pair table too
/// (`dqs-pos-nrm-paired`), and the same vertices' first four slots alone
/// renormalised (`*-four`) for the cost of the second set.
fn bench_eight(c: &mut Criterion) {
    let mut group = c.benchmark_group("eight");
    for m in [
        eight_influence_mesh(4000, true),
        eight_influence_mesh(4000, false),
    ] {
        let n = m.positions.len();
        let joints = m.models.len();
        let mut lbs = vec![Mat3x4::IDENTITY; joints];
        let mut dqs = vec![DualQuat::IDENTITY; joints];
        skin::lbs_palette(&m.models, &m.inverse_bind, &mut lbs).expect("palette");
        skin::dqs_palette(&m.models, &m.inverse_bind, &mut dqs).expect("palette");
        let [(j0, w0), (j1, w1)] = &m.sets;
        let eight = CheckedInfluences::new8(j0, w0, j1, w1, joints).expect("valid");
        let mut w4 = w0.clone();
        skin::normalize_weights(&mut w4).expect("weights");
        let four = CheckedInfluences::new(j0, &w4, joints).expect("valid");
        let mut pair_buf = vec![[0u16; 2]; eight.dqs_pair_count().expect("count")];
        let paired = eight.with_dqs_pairs(&mut pair_buf).expect("pair table");
        let verts = SkinVertices {
            positions: &m.positions,
            normals: Some(&m.normals),
            tangents: None,
        };
        let (mut pos, mut nrm) = (vec![[0.0f32; 3]; n], vec![[0.0f32; 3]; n]);
        group.throughput(Throughput::Elements(n as u64));
        for (variant, infl) in [("", &eight), ("-four", &four), ("-paired", &paired)] {
            for dq in [false, true] {
                if variant == "-paired" && !dq {
                    continue; // LBS reads no pair table
                }
                let name = format!("{}-pos-nrm{variant}", if dq { "dqs" } else { "lbs" });
                group.bench_function(BenchmarkId::new(m.label.as_str(), name), |b| {
                    b.iter(|| {
                        let out = SkinOutput {
                            positions: &mut pos,
                            normals: Some(&mut nrm),
                            tangents: None,
                        };
                        let method = if dq {
                            SkinMethod::Dqs {
                                palette: black_box(&dqs),
                            }
                        } else {
                            SkinMethod::Lbs {
                                palette: black_box(&lbs),
                            }
                        };
                        skin_arrays(method, infl, verts, out).expect("skins")
                    })
                });
            }
        }
    }
    group.finish();
}

criterion_group! {
    name = skinning;
    config = config();
    targets = bench_palette, bench_skin, bench_order, bench_character, bench_eight
}
criterion_main!(skinning);
