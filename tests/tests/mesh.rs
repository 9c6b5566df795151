//! The skinned-mesh container (`sinew_core::mesh`): every invalid input
//! gives its precise error, then round trips of hand-built, random and
//! real meshes.

#[path = "../support/mod.rs"]
mod support;

use proptest::prelude::*;
use sinew_core::mesh::{build, required_size, MeshParts, SkinnedMesh, MESH_MAGIC};
use sinew_core::{Error, Mat4};
use sinew_std::import::gltf::{load, GltfOptions};
use sinew_std::AlignedBytes;

/// A two-joint, four-vertex quad with normals and two triangles.
struct Quad {
    positions: Vec<[f32; 3]>,
    normals: Vec<[f32; 3]>,
    joints: Vec<[u16; 4]>,
    weights: Vec<[f32; 4]>,
    indices: Vec<u32>,
    binds: Vec<Mat4>,
}

fn quad() -> Quad {
    Quad {
        positions: vec![
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [1.0, 1.0, 0.0],
            [0.0, 1.0, 0.0],
        ],
        normals: vec![[0.0, 0.0, 1.0]; 4],
        joints: vec![[0, 1, 0, 0], [0, 1, 0, 0], [1, 0, 0, 0], [1, 0, 0, 0]],
        weights: vec![
            [1.0, 0.0, 0.0, 0.0],
            [0.5, 0.5, 0.0, 0.0],
            [0.75, 0.25, 0.0, 0.0],
            [1.0, 0.0, 0.0, 0.0],
        ],
        indices: vec![0, 1, 2, 0, 2, 3],
        binds: vec![Mat4::IDENTITY; 2],
    }
}

impl Quad {
    fn parts(&self) -> MeshParts<'_> {
        MeshParts {
            positions: &self.positions,
            normals: &self.normals,
            joints: &self.joints,
            weights: &self.weights,
            indices: &self.indices,
            inverse_binds: &self.binds,
            ..MeshParts::default()
        }
    }
}

fn write(parts: &MeshParts<'_>) -> Result<AlignedBytes, Error> {
    let mut bytes = AlignedBytes::zeroed(required_size(parts)?);
    let n = build(parts, bytes.as_mut_slice())?;
    assert_eq!(n, bytes.len());
    Ok(bytes)
}

fn quad_bytes() -> AlignedBytes {
    write(&quad().parts()).expect("the quad builds")
}

fn set_u32(bytes: &mut AlignedBytes, at: usize, v: u32) {
    bytes.as_mut_slice()[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

#[test]
fn build_rejects_each_invalid_part() {
    let q = quad();
    let empty = MeshParts {
        positions: &[],
        ..q.parts()
    };
    assert_eq!(
        write(&empty).err(),
        Some(Error::Corrupt {
            what: "mesh has no vertices"
        })
    );
    let short_normals = MeshParts {
        normals: &q.normals[..3],
        ..q.parts()
    };
    assert_eq!(
        write(&short_normals).err(),
        Some(Error::BadLength {
            buffer: "normals",
            expected: 4,
            actual: 3
        })
    );
    let short_joints = MeshParts {
        joints: &q.joints[..2],
        ..q.parts()
    };
    assert!(matches!(
        write(&short_joints),
        Err(Error::BadLength {
            buffer: "joints",
            ..
        })
    ));
    let no_joints = MeshParts {
        inverse_binds: &[],
        ..q.parts()
    };
    assert_eq!(write(&no_joints).err(), Some(Error::NoJoints));
    let odd = MeshParts {
        indices: &q.indices[..4],
        ..q.parts()
    };
    assert_eq!(
        write(&odd).err(),
        Some(Error::Corrupt {
            what: "index count is not a multiple of 3"
        })
    );
    let far = [0, 1, 4];
    let past = MeshParts {
        indices: &far,
        ..q.parts()
    };
    assert_eq!(
        write(&past).err(),
        Some(Error::Corrupt {
            what: "an index names no vertex"
        })
    );
    let mut nan = q.positions.clone();
    nan[2][1] = f32::NAN;
    let nan_parts = MeshParts {
        positions: &nan,
        ..q.parts()
    };
    assert_eq!(
        write(&nan_parts).err(),
        Some(Error::NonFinite {
            what: "mesh position"
        })
    );
    let mut bad_joint = q.joints.clone();
    bad_joint[3][1] = 2;
    let bad_parts = MeshParts {
        joints: &bad_joint,
        ..q.parts()
    };
    assert_eq!(
        write(&bad_parts).err(),
        Some(Error::InfluenceOutOfRange {
            vertex: 3,
            joint: 2,
            count: 2
        })
    );
    let mut bad_sum = q.weights.clone();
    bad_sum[1][1] = 0.6;
    let sum_parts = MeshParts {
        weights: &bad_sum,
        ..q.parts()
    };
    assert_eq!(
        write(&sum_parts).err(),
        Some(Error::VertexWeightSum { vertex: 1 })
    );
    let half_second = MeshParts {
        joints1: &q.joints,
        ..q.parts()
    };
    assert!(matches!(
        write(&half_second),
        Err(Error::BadLength {
            buffer: "weights1",
            ..
        })
    ));
}

#[test]
fn build_checks_the_output_buffer_and_leaves_it_untouched_on_error() {
    let q = quad();
    let size = required_size(&q.parts()).unwrap();
    let mut small = AlignedBytes::zeroed(size - 16);
    assert_eq!(
        build(&q.parts(), small.as_mut_slice()),
        Err(Error::BufferTooSmall {
            needed: size,
            actual: size - 16
        })
    );
    assert!(small.as_slice().iter().all(|&b| b == 0));
    let mut big = AlignedBytes::zeroed(size + 16);
    assert_eq!(
        build(&q.parts(), &mut big.as_mut_slice()[4..]),
        Err(Error::Misaligned)
    );
}

#[test]
fn from_bytes_rejects_forged_headers() {
    let good = quad_bytes();
    let total = good.len();
    let check = |edit: &dyn Fn(&mut AlignedBytes), want: Error| {
        let mut b = AlignedBytes::copy_from(good.as_slice());
        edit(&mut b);
        assert_eq!(SkinnedMesh::from_bytes(b.as_slice()).err(), Some(want));
    };
    check(&|b| b.as_mut_slice()[0] = b'X', Error::BadMagic);
    check(
        &|b| set_u32(b, 8, 2),
        Error::UnsupportedVersion { found: 2 },
    );
    check(
        &|b| set_u32(b, 12, 8),
        Error::Corrupt {
            what: "unknown mesh flags",
        },
    );
    check(
        &|b| b.as_mut_slice()[40] = 1,
        Error::Corrupt {
            what: "reserved header bytes are not zero",
        },
    );
    // Counts that do not match the stored total, including ones whose
    // layout would overflow a 32-bit address space.
    for (at, v) in [(16, 5), (20, 9), (24, 3), (16, u32::MAX), (28, 0)] {
        check(
            &|b| set_u32(b, at, v),
            Error::Corrupt {
                what: "total size does not match the mesh's counts",
            },
        );
    }
    let mut tangents = AlignedBytes::copy_from(good.as_slice());
    set_u32(&mut tangents, 12, 1 | 2);
    assert!(matches!(
        SkinnedMesh::from_bytes(tangents.as_slice()),
        Err(Error::Corrupt { .. })
    ));
    let truncated = AlignedBytes::copy_from(&good.as_slice()[..total - 16]);
    assert_eq!(
        SkinnedMesh::from_bytes(truncated.as_slice()).err(),
        Some(Error::Truncated {
            needed: total,
            actual: total - 16
        })
    );
    assert!(matches!(
        SkinnedMesh::from_bytes(&good.as_slice()[..20]),
        Err(Error::Truncated { .. })
    ));
    let mut shifted = AlignedBytes::zeroed(total + 16);
    shifted.as_mut_slice()[8..8 + total].copy_from_slice(good.as_slice());
    assert_eq!(
        SkinnedMesh::from_bytes(&shifted.as_slice()[8..]).err(),
        Some(Error::Misaligned)
    );
}

#[test]
fn from_bytes_rejects_forged_sections() {
    let good = quad_bytes();
    let mesh = SkinnedMesh::from_bytes(good.as_slice()).unwrap();
    let offset_of = |section: *const u8| section as usize - good.as_slice().as_ptr() as usize;
    let positions = offset_of(mesh.positions().as_ptr().cast());
    let indices = offset_of(mesh.indices().as_ptr().cast());
    let joints = offset_of(mesh.influences().joints().as_ptr().cast());
    let weights = offset_of(mesh.influences().weights().as_ptr().cast());

    let forged = |at: usize, bytes: &[u8]| {
        let mut b = AlignedBytes::copy_from(good.as_slice());
        b.as_mut_slice()[at..at + bytes.len()].copy_from_slice(bytes);
        SkinnedMesh::from_bytes(b.as_slice()).err()
    };
    assert_eq!(
        forged(positions + 4, &f32::INFINITY.to_le_bytes()),
        Some(Error::NonFinite {
            what: "mesh position"
        })
    );
    assert_eq!(
        forged(indices + 8, &7u32.to_le_bytes()),
        Some(Error::Corrupt {
            what: "an index names no vertex"
        })
    );
    assert_eq!(
        forged(joints + 8 * 2, &9u16.to_le_bytes()),
        Some(Error::InfluenceOutOfRange {
            vertex: 2,
            joint: 9,
            count: 2
        })
    );
    assert_eq!(
        forged(weights + 16 + 4, &(-0.5f32).to_le_bytes()),
        Some(Error::InvalidVertexWeight { vertex: 1 })
    );
}

#[test]
fn the_quad_round_trips() {
    let q = quad();
    let bytes = quad_bytes();
    assert_eq!(&bytes.as_slice()[..8], &MESH_MAGIC);
    let mesh = SkinnedMesh::from_bytes(bytes.as_slice()).unwrap();
    assert_eq!(mesh.vertex_count(), 4);
    assert_eq!(mesh.joint_count(), 2);
    assert_eq!(mesh.positions(), &q.positions[..]);
    assert_eq!(mesh.normals(), &q.normals[..]);
    assert!(mesh.tangents().is_empty());
    assert_eq!(mesh.indices(), &q.indices[..]);
    assert_eq!(mesh.inverse_binds(), &q.binds[..]);
    let influences = mesh.influences();
    assert_eq!(influences.joints(), &q.joints[..]);
    assert_eq!(influences.weights(), &q.weights[..]);
    assert_eq!(influences.joint_count(), 2);
    assert!(influences.second_set().is_none());
}

proptest! {
    #[test]
    fn random_meshes_round_trip(
        n in 1usize..40,
        joints in 1usize..12,
        seed in any::<u64>(),
        normals in any::<bool>(),
        tangents in any::<bool>(),
        eight in any::<bool>(),
    ) {
        let mut state = seed | 1;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut unit = || (next() % 1000) as f32 / 1000.0;
        let positions: Vec<[f32; 3]> = (0..n).map(|_| [unit(), unit(), unit()]).collect();
        let normal_v: Vec<[f32; 3]> = (0..n).map(|_| [unit(), unit(), 1.0]).collect();
        let tangent_v: Vec<[f32; 4]> = (0..n).map(|_| [1.0, unit(), 0.0, -1.0]).collect();
        let mut next_joint = || (next() % joints as u64) as u16;
        let js: Vec<[u16; 4]> = (0..n).map(|_| [next_joint(), next_joint(), 0, 0]).collect();
        let js1: Vec<[u16; 4]> = (0..n).map(|_| [next_joint(), 0, 0, 0]).collect();
        let (ws, ws1): (Vec<[f32; 4]>, Vec<[f32; 4]>) = if eight {
            (vec![[0.5, 0.25, 0.0, 0.0]; n], vec![[0.25, 0.0, 0.0, 0.0]; n])
        } else {
            (vec![[0.75, 0.25, 0.0, 0.0]; n], Vec::new())
        };
        let indices: Vec<u32> = (0..3 * n as u32).map(|i| (i * 7) % n as u32).collect();
        let binds: Vec<Mat4> = (0..joints)
            .map(|j| Mat4::from_translation(sinew_core::Vec3::new(j as f32, 0.0, -1.0)))
            .collect();
        let parts = MeshParts {
            positions: &positions,
            normals: if normals { &normal_v } else { &[] },
            tangents: if tangents { &tangent_v } else { &[] },
            joints: &js,
            weights: &ws,
            joints1: if eight { &js1 } else { &[] },
            weights1: &ws1,
            indices: &indices,
            inverse_binds: &binds,
        };
        let bytes = write(&parts).unwrap();
        let mesh = SkinnedMesh::from_bytes(bytes.as_slice()).unwrap();
        prop_assert_eq!(mesh.positions(), parts.positions);
        prop_assert_eq!(mesh.normals(), parts.normals);
        prop_assert_eq!(mesh.tangents(), parts.tangents);
        prop_assert_eq!(mesh.indices(), parts.indices);
        prop_assert_eq!(mesh.inverse_binds(), parts.inverse_binds);
        let influences = mesh.influences();
        prop_assert_eq!(influences.joints(), parts.joints);
        prop_assert_eq!(influences.weights(), parts.weights);
        prop_assert_eq!(influences.second_set().is_some(), eight);
    }
}

#[test]
fn real_glb_meshes_round_trip() {
    let Some(dir) = support::shared_data("gltf") else {
        return;
    };
    let files = support::files_with_extension(&dir, &["glb", "gltf"]);
    let mut meshes = 0;
    for path in &files {
        let asset = load(path, &GltfOptions::default())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for m in &asset.meshes {
            let bytes = m
                .to_container()
                .unwrap_or_else(|e| panic!("{} {}: {e}", path.display(), m.name));
            let view = SkinnedMesh::from_bytes(bytes.as_slice()).unwrap();
            assert_eq!(view.positions(), &m.positions[..]);
            assert_eq!(view.normals(), &m.normals[..]);
            assert_eq!(view.tangents(), &m.tangents[..]);
            assert_eq!(view.indices(), &m.indices[..]);
            assert_eq!(view.inverse_binds(), &m.inverse_bind[..]);
            assert_eq!(view.influences().joints(), &m.joints[..]);
            assert_eq!(view.influences().weights(), &m.weights[..]);
            meshes += 1;
        }
    }
    assert!(meshes > 0, "no skinned mesh under {}", dir.display());
    println!("{meshes} meshes from {} files round-tripped", files.len());
}

#[test]
fn an_asset_writes_containers_that_load_without_the_importer() {
    let Some(dir) = support::shared_data("gltf") else {
        return;
    };
    let path = dir.join("khronos-gltf-samples/Fox.glb");
    let asset = load(&path, &GltfOptions::default()).unwrap();
    let out = std::env::temp_dir().join(format!("sinew-export-{}", std::process::id()));
    let paths = sinew_std::export::write_containers(&asset, &out, "Fox").unwrap();
    assert_eq!(paths.len(), 1 + asset.meshes.len());
    assert!(paths[0].ends_with("Fox.sinewskl"));
    let skeleton = AlignedBytes::copy_from(&std::fs::read(&paths[0]).unwrap());
    let skeleton = sinew_core::Skeleton::from_bytes(skeleton.as_slice()).unwrap();
    assert_eq!(skeleton.joint_count(), asset.skeleton.joint_count());
    for (mesh, path) in asset.meshes.iter().zip(&paths[1..]) {
        let bytes = AlignedBytes::copy_from(&std::fs::read(path).unwrap());
        let view = SkinnedMesh::from_bytes(bytes.as_slice()).unwrap();
        assert_eq!(view.positions(), &mesh.positions[..]);
        assert_eq!(view.joint_count(), skeleton.joint_count());
    }
    std::fs::remove_dir_all(&out).unwrap();
}

/// Skins `m` with a posed palette (positions and normals, the default
/// kernels) and returns the outputs.
fn skin_mesh(m: &sinew_std::import::Mesh, palette: &[sinew_core::skin::Mat3x4]) -> Vec<[f32; 3]> {
    use sinew_core::skin::{SkinAttributes, SkinJob, SkinMethod, SkinOutput, SkinVertices};
    let n = m.positions.len();
    let (mut p, mut nr) = (vec![[0.0f32; 3]; n], vec![[0.0f32; 3]; n]);
    let normals = (!m.normals.is_empty()).then_some(m.normals.as_slice());
    SkinJob {
        method: SkinMethod::Lbs { palette },
        influences: &m.influences(palette.len()).unwrap(),
        attributes: SkinAttributes::Arrays {
            input: SkinVertices {
                positions: &m.positions,
                normals,
                tangents: None,
            },
            output: SkinOutput {
                positions: &mut p,
                normals: normals.map(|_| nr.as_mut_slice()),
                tangents: None,
            },
        },
    }
    .run()
    .unwrap();
    p.extend(nr.iter().take(if normals.is_some() { n } else { 0 }));
    p
}

/// Two skinnings of one vertex attribute agree within 1e-5 (relative
/// above 1): the kernels' bound against the scalar twin.
fn assert_skinned_close(a: &[f32; 3], b: &[f32; 3], path: &std::path::Path) {
    for c in 0..3 {
        let bound = 1e-5 * b[c].abs().max(1.0);
        assert!(
            (a[c] - b[c]).abs() <= bound,
            "{}: {a:?} vs {b:?}",
            path.display()
        );
    }
}

#[test]
fn sorting_by_influence_count_moves_every_attribute_together() {
    let Some(dir) = support::shared_data("gltf") else {
        return;
    };
    let files = support::files_with_extension(&dir, &["glb", "gltf"]);
    let mut meshes = 0;
    for path in &files {
        let asset = load(path, &GltfOptions::default()).unwrap();
        let skel = asset.skeleton.view();
        let pose = sinew_std::synthetic::pose(&skel, 0.5, 3);
        let mut models = vec![Mat4::IDENTITY; skel.joint_count()];
        sinew_core::fk::local_to_model(&sinew_core::fk::FkJob::new(&skel, &pose), &mut models)
            .unwrap();
        for m in &asset.meshes {
            let mut palette = vec![sinew_core::skin::Mat3x4::IDENTITY; models.len()];
            sinew_core::skin::lbs_palette(&models, &m.inverse_bind, &mut palette).unwrap();
            let mut sorted = m.clone();
            let order = sorted.sort_by_influence_count().unwrap();
            let n = m.positions.len();
            // The order is a permutation sorted by slots used.
            let mut seen = vec![false; n];
            for &v in &order {
                assert!(!std::mem::replace(&mut seen[v as usize], true));
            }
            let used = |v: usize| sinew_core::skin::slots_used(&m.weights[v], m.weights1.get(v));
            assert!(order
                .windows(2)
                .all(|w| used(w[0] as usize) <= used(w[1] as usize)));
            // Every attribute moved with its vertex, and each triangle still
            // names the same corners.
            for (new, &old) in order.iter().enumerate() {
                let old = old as usize;
                assert_eq!(sorted.positions[new], m.positions[old]);
                assert_eq!(sorted.joints[new], m.joints[old]);
                assert_eq!(sorted.weights[new], m.weights[old]);
                if !m.normals.is_empty() {
                    assert_eq!(sorted.normals[new], m.normals[old]);
                }
                for (a, b) in sorted.morph_targets.iter().zip(&m.morph_targets) {
                    if !b.positions.is_empty() {
                        assert_eq!(a.positions[new], b.positions[old]);
                    }
                }
            }
            for (a, b) in sorted.indices.iter().zip(&m.indices) {
                assert_eq!(sorted.positions[*a as usize], m.positions[*b as usize]);
                assert_eq!(order[*a as usize], *b);
            }
            // Skinning the sorted mesh gives each vertex the same result
            // within 1e-5 (the kernels' bound against the scalar twin: the
            // slots a block blends depend on its neighbours, and fused
            // multiply-adds round a skipped slot's zero differently).
            let (before, after) = (skin_mesh(m, &palette), skin_mesh(&sorted, &palette));
            let attributes = before.len() / n;
            for k in 0..attributes {
                for (new, &old) in order.iter().enumerate() {
                    let (a, b) = (after[k * n + new], before[k * n + old as usize]);
                    assert_skinned_close(&a, &b, path);
                }
            }
            meshes += 1;
        }
    }
    assert!(meshes > 0, "no skinned mesh under {}", dir.display());
}

/// Every four-influence mesh of the shared glTF files, sorted and
/// prepared in blocks, skins as `SkinJob` skins it (within 1e-5: the
/// blocks sum each vertex's slots in joint order), with and without
/// normals, and blocks stored and checked back in skin the same.
#[test]
fn prepared_blocks_skin_real_meshes_as_skin_job_does() {
    use sinew_core::skin::{SkinBlocks, SkinOutput, SkinVertices, VertexBlock};
    let Some(dir) = support::shared_data("gltf") else {
        return;
    };
    let mut meshes = 0;
    for path in support::files_with_extension(&dir, &["glb", "gltf"]) {
        let asset = load(&path, &GltfOptions::default()).unwrap();
        let skel = asset.skeleton.view();
        let pose = sinew_std::synthetic::pose(&skel, 0.5, 7);
        let mut models = vec![Mat4::IDENTITY; skel.joint_count()];
        sinew_core::fk::local_to_model(&sinew_core::fk::FkJob::new(&skel, &pose), &mut models)
            .unwrap();
        for m in asset.meshes.iter().filter(|m| m.joints1.is_empty()) {
            let mut palette = vec![sinew_core::skin::Mat3x4::IDENTITY; models.len()];
            sinew_core::skin::lbs_palette(&models, &m.inverse_bind, &mut palette).unwrap();
            let mut sorted = m.clone();
            sorted.sort_by_influence_count().unwrap();
            let want = skin_mesh(&sorted, &palette);
            let n = sorted.positions.len();
            let normals = (!sorted.normals.is_empty()).then_some(sorted.normals.as_slice());
            let vertices = SkinVertices {
                positions: &sorted.positions,
                normals,
                tangents: None,
            };
            let infl = sorted.influences(palette.len()).unwrap();
            let mut blocks = vec![VertexBlock::default(); SkinBlocks::block_count(n)];
            let prepared = SkinBlocks::new(&infl, vertices, &mut blocks).unwrap();
            let stored = prepared.blocks().to_vec();
            let again = SkinBlocks::from_prepared(&stored, n, palette.len(), normals.is_some());
            for mesh in [prepared, again.unwrap()] {
                let (mut p, mut nr) = (vec![[f32::NAN; 3]; n], vec![[f32::NAN; 3]; n]);
                let out = SkinOutput {
                    positions: &mut p,
                    normals: normals.map(|_| nr.as_mut_slice()),
                    tangents: None,
                };
                mesh.lbs(&palette, out).unwrap();
                p.extend(nr.iter().take(if normals.is_some() { n } else { 0 }));
                assert_eq!(p.len(), want.len());
                for (a, b) in p.iter().zip(&want) {
                    assert_skinned_close(a, b, &path);
                }
            }
            meshes += 1;
        }
    }
    assert!(meshes > 0, "no four-influence mesh under {}", dir.display());
}

#[test]
fn sorting_a_bad_mesh_is_an_error_and_changes_nothing() {
    let q = quad();
    let mesh = sinew_std::import::Mesh {
        positions: q.positions,
        normals: q.normals,
        joints: q.joints,
        weights: q.weights,
        indices: q.indices,
        inverse_bind: q.binds,
        ..Default::default()
    };
    let mut sorted = mesh.clone();
    assert_eq!(sorted.sort_by_influence_count().unwrap(), vec![0, 3, 1, 2]);
    assert_eq!(sorted.indices, vec![0, 2, 3, 0, 3, 1]);

    let mut short = mesh.clone();
    short.normals.pop();
    assert_eq!(
        short.sort_by_influence_count(),
        Err(Error::BadLength {
            buffer: "normals",
            expected: 4,
            actual: 3
        })
    );
    let mut past = mesh.clone();
    past.indices[4] = 4;
    let before = past.clone();
    assert!(matches!(
        past.sort_by_influence_count(),
        Err(Error::Corrupt { .. })
    ));
    assert_eq!(past, before);
}
