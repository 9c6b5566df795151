//! glTF morph targets: validity (a target that does not fit its primitive,
//! of the wrong type, holding NaN, without a base attribute, default weights
//! of the wrong count, over the memory budget: each an error naming the mesh
//! and target), exact deltas from dense and sparse accessors with their names
//! and default weights, the deltas carried through a node transform for a
//! mesh attached rigidly to a joint, the mesh-to-track mapping, and the real
//! files (RobotExpressive's facial targets).

#[path = "../support/mod.rs"]
mod support;
use support::close;
use support::gltf::Doc;

use std::path::{Path, PathBuf};

use sinew_core::fk::{self, FkJob};
use sinew_core::soa::get_joint;
use sinew_core::{Mat4, Quat, Vec3};
use sinew_std::import::gltf::{from_slice, load, GltfOptions};
use sinew_std::{Asset, ImportError, Location, Mesh};

fn import(json: &str, budget: Option<usize>) -> Result<Asset, ImportError> {
    let mut opts = GltfOptions::default();
    if let Some(b) = budget {
        opts.memory_budget = b;
    }
    from_slice(json.as_bytes(), Path::new("morph.gltf"), None, &opts)
}

fn import_ok(json: &str) -> Asset {
    import(json, None).unwrap_or_else(|e| panic!("import failed: {e}\n{json}"))
}

fn import_err(json: &str) -> ImportError {
    match import(json, None) {
        Ok(_) => panic!("import unexpectedly succeeded:\n{json}"),
        Err(e) => e,
    }
}

fn assert_err(e: &ImportError, location: &str, words: &[&str]) {
    assert_eq!(
        e.location,
        Location::JsonPath(location.to_string()),
        "wrong location for: {e}"
    );
    for w in words {
        assert!(
            e.message.contains(w),
            "{:?} does not mention {w:?}",
            e.message
        );
    }
    assert_eq!(e.file, PathBuf::from("morph.gltf"));
}

// ---------------------------------------------------------------------------
// A skinned quad with two targets
// ---------------------------------------------------------------------------

/// Base positions of the quad (four vertices, two triangles).
const QUAD: [f32; 12] = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0];
/// Target 0 ("smile"): a dense position delta per vertex (vertex 2 does not move).
const SMILE: [f32; 12] = [
    0.0, 0.0, 0.5, 0.25, 0.0, 0.0, 0.0, 0.0, 0.0, -0.125, 0.0, 0.0,
];
/// Target 0's normal deltas: only vertex 1's normal moves.
const SMILE_N: [f32; 12] = [0.0, 0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];

/// What a test changes in the quad document.
#[derive(Clone, Copy, Default)]
enum Bad {
    #[default]
    None,
    /// Target 0's POSITION has 3 elements for 4 vertices.
    ShortTarget,
    /// Target 1's POSITION is a VEC4 accessor.
    Vec4Target,
    /// Target 0's POSITION holds a NaN at vertex 3.
    NanDelta,
    /// Target 0 has NORMAL deltas but the primitive no NORMAL.
    NoBaseNormal,
    /// The mesh gives three default weights for two targets.
    ThreeWeights,
    /// `extras.targetNames` holds one name for two targets.
    OneName,
}

/// Joint node 0 `root` (identity, so the skin's inverse binds are the
/// identity and the vertices stay as written); node 1 `face` skins the
/// quad to it. Target 0 `smile` is dense ([`SMILE`], normals
/// [`SMILE_N`]); target 1 `blink` is a sparse accessor without a buffer
/// view moving vertices 1 and 3 only. Default weights 0.25 and 0.5; one
/// animation `talk` drives both weights.
fn quad(bad: Bad) -> String {
    let mut d = Doc::default();
    let pos = d.f32s(&QUAD, "VEC3");
    let normals = d.f32s(&[0.0, 0.0, 1.0].repeat(4), "VEC3");
    let joints = d.u8s(&[0; 16], "VEC4", false);
    let weights = d.f32s(&[1.0, 0.0, 0.0, 0.0].repeat(4), "VEC4");
    let indices = d.u8s(&[0, 1, 2, 0, 2, 3], "SCALAR", false);
    let mut smile = SMILE;
    if let Bad::NanDelta = bad {
        smile[10] = f32::NAN;
    }
    let smile = match bad {
        Bad::ShortTarget => d.f32s(&SMILE[..9], "VEC3"),
        _ => d.f32s(&smile, "VEC3"),
    };
    let smile_n = d.f32s(&SMILE_N, "VEC3");
    let blink = match bad {
        Bad::Vec4Target => d.f32s(&[0.0; 16], "VEC4"),
        _ => d.sparse_vec3(4, &[1, 3], &[0.0, -0.5, 0.0, 0.0, 0.0, 2.0]),
    };
    let times = d.f32s(&[0.0, 1.0], "SCALAR");
    let track = d.f32s(&[0.0, 1.0, 1.0, 0.0], "SCALAR");
    let base = match bad {
        Bad::NoBaseNormal => format!(r#""POSITION":{pos}"#),
        _ => format!(r#""POSITION":{pos},"NORMAL":{normals}"#),
    };
    let weights_json = match bad {
        Bad::ThreeWeights => "[0.25,0.5,1.0]",
        _ => "[0.25,0.5]",
    };
    let names = match bad {
        Bad::OneName => r#"["smile"]"#,
        _ => r#"["smile","blink"]"#,
    };
    d.json(&format!(
        r#""nodes":[{{"name":"root"}},{{"name":"face","mesh":0,"skin":0}}],
"skins":[{{"joints":[0]}}],
"meshes":[{{"weights":{weights_json},"extras":{{"targetNames":{names}}},"primitives":[{{
  "attributes":{{{base},"JOINTS_0":{joints},"WEIGHTS_0":{weights}}},"indices":{indices},
  "targets":[{{"POSITION":{smile},"NORMAL":{smile_n}}},{{"POSITION":{blink}}}]}}]}}],
"animations":[{{"name":"talk","samplers":[{{"input":{times},"output":{track}}}],
  "channels":[{{"sampler":0,"target":{{"node":1,"path":"weights"}}}}]}}]"#
    ))
}

fn rows(flat: &[f32]) -> Vec<[f32; 3]> {
    flat.chunks(3).map(|c| [c[0], c[1], c[2]]).collect()
}

// ---------------------------------------------------------------------------
// Validity
// ---------------------------------------------------------------------------

#[test]
fn a_target_whose_count_differs_from_the_vertices_is_an_error() {
    let e = import_err(&quad(Bad::ShortTarget));
    assert_err(
        &e,
        "/meshes/0/primitives/0/targets/0/POSITION",
        &[
            r#"mesh "face", morph target 0 ("smile")"#,
            "POSITION has 3 deltas, the primitive has 4 vertices",
        ],
    );
}

#[test]
fn a_target_accessor_of_the_wrong_type_is_an_error() {
    let e = import_err(&quad(Bad::Vec4Target));
    let Location::JsonPath(p) = &e.location else {
        panic!("{e}")
    };
    assert!(p.starts_with("/accessors/") && p.ends_with("/type"), "{e}");
    for w in [
        r#"mesh "face", morph target 1 ("blink")"#,
        "Vec4",
        "/meshes/0/primitives/0/targets/1/POSITION",
    ] {
        assert!(e.message.contains(w), "{e} does not mention {w:?}");
    }
}

#[test]
fn a_nan_delta_is_an_error() {
    let e = import_err(&quad(Bad::NanDelta));
    assert!(
        matches!(&e.location, Location::JsonPath(p) if p.starts_with("/accessors/")),
        "{e}"
    );
    for w in [
        r#"mesh "face", morph target 0 ("smile")"#,
        "element 3 holds NaN",
    ] {
        assert!(e.message.contains(w), "{e} does not mention {w:?}");
    }
}

#[test]
fn normal_deltas_without_base_normals_are_an_error() {
    let e = import_err(&quad(Bad::NoBaseNormal));
    assert_err(
        &e,
        "/meshes/0/primitives/0/targets/0/NORMAL",
        &[
            r#"morph target 0 ("smile")"#,
            "the primitive has no NORMAL attribute",
        ],
    );
}

#[test]
fn default_weights_of_the_wrong_count_are_an_error() {
    let e = import_err(&quad(Bad::ThreeWeights));
    assert_err(
        &e,
        "/meshes/0/weights",
        &[
            r#"mesh "face""#,
            "3 default morph weights for 2 morph targets",
        ],
    );
}

#[test]
fn bad_target_names_are_a_warning_and_leave_the_targets_unnamed() {
    let a = import_ok(&quad(Bad::OneName));
    let m = &a.meshes[0];
    assert!(m.morph_targets.iter().all(|t| t.name.is_empty()));
    assert!(
        a.warnings
            .iter()
            .any(|w| w.contains("extras.targetNames is not a list of 2 strings")),
        "{:?}",
        a.warnings
    );
}

/// `targets` morph targets of a `vertices`-vertex triangle list on node 1,
/// rigidly attached below the animated joint node 0; every target uses
/// one zero accessor (no buffer view), so the document stays small.
fn many_targets(vertices: usize, targets: usize) -> String {
    let mut d = Doc::default();
    let pos = d.zeros_vec3(vertices);
    let times = d.f32s(&[0.0, 1.0], "SCALAR");
    let moves = d.f32s(&[0.0; 6], "VEC3");
    let list = vec![format!(r#"{{"POSITION":{pos}}}"#); targets].join(",");
    d.json(&format!(
        r#""nodes":[{{"name":"head","children":[1]}},{{"name":"face","mesh":0}}],
"meshes":[{{"primitives":[{{"attributes":{{"POSITION":{pos}}},"targets":[{list}]}}]}}],
"animations":[{{"samplers":[{{"input":{times},"output":{moves}}}],
  "channels":[{{"sampler":0,"target":{{"node":0,"path":"translation"}}}}]}}]"#
    ))
}

#[test]
fn targets_over_the_memory_budget_are_an_error() {
    // 100 targets of 30,000 vertices: 34 MiB of deltas against 16 MiB.
    let doc = many_targets(30_000, 100);
    assert!(doc.len() < 8192, "{} bytes", doc.len());
    let e = import(&doc, Some(16 << 20)).err().expect("over the budget");
    for w in [
        r#"mesh "face", morph target"#,
        "exceeds the memory budget of 16 MiB",
    ] {
        assert!(e.message.contains(w), "{e} does not mention {w:?}");
    }
    // Within the budget the same file imports.
    let a = import(&many_targets(3_000, 100), Some(16 << 20)).unwrap();
    assert_eq!(a.meshes[0].morph_targets.len(), 100);
    assert!(a.meshes[0].morph_targets[0].moved_vertices().is_empty());
}

// ---------------------------------------------------------------------------
// Correct values
// ---------------------------------------------------------------------------

#[test]
fn dense_and_sparse_deltas_names_and_default_weights_import_exactly() {
    let a = import_ok(&quad(Bad::None));
    assert_eq!(a.meshes.len(), 1);
    let m = &a.meshes[0];
    assert_eq!(m.positions, rows(&QUAD));
    assert_eq!(m.morph_weights, vec![0.25, 0.5]);
    assert_eq!(m.morph_targets.len(), 2);
    let smile = &m.morph_targets[0];
    assert_eq!(smile.name, "smile");
    assert_eq!(smile.positions, rows(&SMILE));
    assert_eq!(smile.normals, rows(&SMILE_N));
    assert!(smile.tangents.is_empty());
    // Vertex 2 moves in neither positions nor normals.
    assert_eq!(smile.moved_vertices(), vec![0, 1, 3]);
    let blink = &m.morph_targets[1];
    assert_eq!(blink.name, "blink");
    assert_eq!(
        blink.positions,
        vec![[0.0; 3], [0.0, -0.5, 0.0], [0.0; 3], [0.0, 0.0, 2.0]]
    );
    assert!(blink.normals.is_empty());
    assert_eq!(blink.moved_vertices(), vec![1, 3]);
    // The weights channel of node "face" is the mesh's tracks, in target order.
    assert_eq!(m.node_label, "face");
    assert_eq!(m.morph_track_name(1), "morph/face/1");
    let clip = a.clip("talk").unwrap();
    let tracks = m.morph_tracks(clip);
    assert_eq!(tracks.len(), 2);
    let names: Vec<&str> = tracks
        .iter()
        .map(|t| clip.float_tracks()[t.expect("animated")].name.as_str())
        .collect();
    assert_eq!(names, ["morph/face/0", "morph/face/1"]);
    assert_eq!(
        clip.float_tracks()[tracks[1].unwrap()].values.first(),
        Some(&1.0)
    );
}

#[test]
fn a_mesh_without_targets_has_no_morph_data() {
    let mut d = Doc::default();
    let pos = d.f32s(&QUAD[..9], "VEC3");
    let times = d.f32s(&[0.0, 1.0], "SCALAR");
    let moves = d.f32s(&[0.0; 6], "VEC3");
    let json = d.json(&format!(
        r#""nodes":[{{"name":"head","children":[1]}},{{"mesh":0}}],
"meshes":[{{"primitives":[{{"attributes":{{"POSITION":{pos}}}}}]}}],
"animations":[{{"samplers":[{{"input":{times},"output":{moves}}}],
  "channels":[{{"sampler":0,"target":{{"node":0,"path":"translation"}}}}]}}]"#
    ));
    let a = import_ok(&json);
    let m = &a.meshes[0];
    assert!(m.morph_targets.is_empty() && m.morph_weights.is_empty());
    // A node without a name is labelled by its index, as its tracks are.
    assert_eq!(m.node_label, "1");
    assert_eq!(m.name, "node1");
}

/// Joint node 0 `head` at (0, 1, 0), rotated 90 degrees about Z, scaled by
/// 2; node 1 `face` below it at (1, 0, 0) holds a mesh without a skin: one
/// triangle, base normal +Z, tangent +X, one target moving vertex 0 by
/// (1, 0, 0) with normal delta (0, 0.5, 0) and tangent delta (0, 0.25, 0).
/// The joint's animation moves it to (0, 3, 0).
fn rigid_face() -> String {
    let mut d = Doc::default();
    let pos = d.f32s(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0], "VEC3");
    let nrm = d.f32s(&[0.0, 0.0, 1.0].repeat(3), "VEC3");
    let tan = d.f32s(&[1.0, 0.0, 0.0, 1.0].repeat(3), "VEC4");
    let dp = d.f32s(&[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], "VEC3");
    let dn = d.f32s(&[0.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], "VEC3");
    let dt = d.f32s(&[0.0, 0.25, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], "VEC3");
    let times = d.f32s(&[0.0, 1.0], "SCALAR");
    let moves = d.f32s(&[0.0, 1.0, 0.0, 0.0, 3.0, 0.0], "VEC3");
    let s = std::f32::consts::FRAC_1_SQRT_2;
    d.json(&format!(
        r#""nodes":[{{"name":"head","children":[1],"translation":[0,1,0],"rotation":[0,0,{s},{s}],"scale":[2,2,2]}},
  {{"name":"face","mesh":0,"translation":[1,0,0]}}],
"meshes":[{{"primitives":[{{"attributes":{{"POSITION":{pos},"NORMAL":{nrm},"TANGENT":{tan}}},
  "targets":[{{"POSITION":{dp},"NORMAL":{dn},"TANGENT":{dt}}}]}}]}}],
"animations":[{{"name":"nod","samplers":[{{"input":{times},"output":{moves}}}],
  "channels":[{{"sampler":0,"target":{{"node":0,"path":"translation"}}}}]}}]"#
    ))
}

fn near3(a: [f32; 3], b: [f32; 3]) -> bool {
    a.iter().zip(&b).all(|(x, y)| close(*x, *y, 1e-5))
}

#[test]
fn a_rigid_mesh_below_a_joint_carries_its_deltas_through_the_node_transform() {
    let a = import_ok(&rigid_face());
    assert_eq!(a.meshes.len(), 1);
    let m = &a.meshes[0];
    // World rest of `face` = T(0,1,0) Rz(90) S(2) T(1,0,0): x -> 2 Rz(x) + (0,3,0),
    // with Rz(90) (x, y, z) = (-y, x, z).
    assert!(near3(m.positions[0], [0.0, 3.0, 0.0]), "{:?}", m.positions);
    assert!(near3(m.positions[1], [0.0, 5.0, 0.0]), "{:?}", m.positions);
    assert!(near3(m.positions[2], [-2.0, 3.0, 0.0]), "{:?}", m.positions);
    assert!(near3(m.normals[0], [0.0, 0.0, 1.0]));
    let t = m.tangents[0];
    assert!(near3([t[0], t[1], t[2]], [0.0, 1.0, 0.0]) && t[3] == 1.0);
    let target = &m.morph_targets[0];
    // Position deltas are vectors: 2 Rz(1, 0, 0) = (0, 2, 0).
    assert!(near3(target.positions[0], [0.0, 2.0, 0.0]), "{target:?}");
    // Normal and tangent deltas turn with their base and keep their
    // length (the uniform scale is normalised away): Rz(0, 0.5, 0).
    assert!(near3(target.normals[0], [-0.5, 0.0, 0.0]), "{target:?}");
    assert!(near3(target.tangents[0], [-0.25, 0.0, 0.0]), "{target:?}");
    assert_eq!(target.moved_vertices(), vec![0]);
    // Weight 1 on the joint; at rest the palette is the identity.
    assert!(m.joints.iter().all(|j| j[0] == 0));
    assert!(m.weights.iter().all(|w| *w == [1.0, 0.0, 0.0, 0.0]));
    let view = a.skeleton.view();
    let mut model = vec![Mat4::IDENTITY; view.joint_count()];
    fk::local_to_model(&FkJob::new(&view, view.rest_pose()), &mut model).unwrap();
    let rest = model[0] * m.inverse_bind[0];
    assert!(rest.max_abs_diff(&Mat4::IDENTITY) < 1e-5, "{rest:?}");
    // Posed (the head moved to (0, 3, 0)), the skinned vertex is where the
    // node hierarchy puts it: T(0,3,0) Rz(90) S(2) T(1,0,0) (0,0,0) = (0,5,0).
    let clip = a.clip("nod").unwrap();
    let soa = view.soa_count();
    let last = clip.frame_count() - 1;
    let keys = &clip.keys()[last * soa..(last + 1) * soa];
    assert!(get_joint(keys, 0).is_some());
    fk::local_to_model(&FkJob::new(&view, keys), &mut model).unwrap();
    let p = (model[0] * m.inverse_bind[0]).transform_point(Vec3::new(0.0, 3.0, 0.0));
    let reference = Mat4::from_trs(
        Vec3::new(0.0, 3.0, 0.0),
        Quat::new(
            0.0,
            0.0,
            std::f32::consts::FRAC_1_SQRT_2,
            std::f32::consts::FRAC_1_SQRT_2,
        ),
        Vec3::splat(2.0),
    ) * Mat4::from_trs(Vec3::new(1.0, 0.0, 0.0), Quat::IDENTITY, Vec3::ONE);
    let expected = reference.transform_point(Vec3::ZERO);
    assert!(
        near3(p.to_array(), expected.to_array()),
        "{p:?} vs {expected:?}"
    );
    assert!(near3(expected.to_array(), [0.0, 5.0, 0.0]));
}

// ---------------------------------------------------------------------------
// Real files
// ---------------------------------------------------------------------------

fn morph_meshes(a: &Asset) -> Vec<&Mesh> {
    a.meshes
        .iter()
        .filter(|m| !m.morph_targets.is_empty())
        .collect()
}

#[test]
fn robot_expressive_facial_targets_import_with_their_names() {
    let Some(dir) = support::shared_data("gltf") else {
        return;
    };
    let f = dir.join("threejs-robotexpressive/RobotExpressive.glb");
    if !f.exists() {
        eprintln!("skipped: {} not found", f.display());
        return;
    }
    let a = load(&f, &GltfOptions::default()).unwrap();
    let faces = morph_meshes(&a);
    assert_eq!(faces.len(), 3, "the head's three parts");
    // The file gives all three parts the targets, but only the face part
    // (`Head_4`) moves: every vertex for Angry and Surprised, most for Sad.
    let face = faces.iter().find(|m| m.name == "Head_4").expect("Head_4");
    let moved: Vec<usize> = face
        .morph_targets
        .iter()
        .map(|t| t.moved_vertices().len())
        .collect();
    assert_eq!(moved, [564, 564, 494]);
    for m in &faces {
        let names: Vec<&str> = m.morph_targets.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["Angry", "Surprised", "Sad"], "{}", m.name);
        assert_eq!(m.morph_weights, vec![0.0; 3]);
        let moved: Vec<usize> = m
            .morph_targets
            .iter()
            .map(|t| t.moved_vertices().len())
            .collect();
        let largest = m
            .morph_targets
            .iter()
            .flat_map(|t| &t.positions)
            .map(|d| Vec3::new(d[0], d[1], d[2]).length())
            .fold(0.0f32, f32::max);
        println!(
            "RobotExpressive mesh {:?} (node {:?}): {} vertices, targets {names:?}, moved vertices {moved:?}, largest delta {largest:.4} m",
            m.name,
            m.node_label,
            m.positions.len()
        );
        for t in &m.morph_targets {
            assert_eq!(t.positions.len(), m.positions.len());
            assert!(t.positions.iter().flatten().all(|v| v.is_finite()));
        }
        // Every clip animates the three weights of every face part.
        for clip in &a.clips {
            let tracks = m.morph_tracks(clip);
            assert!(
                tracks.iter().all(Option::is_some),
                "clip {:?} mesh {:?}: {tracks:?}",
                clip.name,
                m.name
            );
        }
    }
}

#[test]
fn every_data_file_reports_its_morph_targets() {
    let Some(dir) = support::shared_data("gltf") else {
        return;
    };
    for f in support::files_with_extension(&dir, &["gltf", "glb"]) {
        let a = load(&f, &GltfOptions::default()).unwrap();
        let meshes = morph_meshes(&a);
        let targets: usize = meshes.iter().map(|m| m.morph_targets.len()).sum();
        println!(
            "{}: {} meshes with morph targets, {targets} targets",
            f.file_name().unwrap().to_string_lossy(),
            meshes.len()
        );
        for m in &a.meshes {
            assert_eq!(m.morph_weights.len(), m.morph_targets.len());
            for t in &m.morph_targets {
                assert_eq!(t.positions.len(), m.positions.len());
            }
        }
    }
}
