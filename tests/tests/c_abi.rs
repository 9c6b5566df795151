//! The C ABI from C: builds `libsinew.a`, compiles `tests/c/abi_test.c`
//! with the system C compiler against `include/sinew.h`, runs it (under
//! `valgrind --error-exitcode=1` when valgrind is installed; CI sets
//! `SINEW_REQUIRE_VALGRIND=1` so its absence fails there), and checks the
//! numbers it prints against the same frame computed by the Rust API.
//! The C program itself checks the status code of every bad-input case.

use std::collections::HashMap;
use std::path::PathBuf;

use sinew_core::blend::{blend, BlendJob, BlendLayer};
use sinew_core::clip::TimeMode;
use sinew_core::compressed::Defaults;
use sinew_core::fk::{local_to_model, FkJob};
use sinew_core::ik::aim::{look_at, Aim, LookAtJoint};
use sinew_core::ik::foot::{FootLeg, FootPlacement, FootState};
use sinew_core::ik::two_bone::{TwoBoneGoal, TwoBoneIk};
use sinew_core::ik::IkPose;
use sinew_core::mix;
use sinew_core::procedural::{self, Gait};
use sinew_core::skin::{
    self, CheckedInfluences, DualQuat, Mat3x4, SkinAttributes, SkinBlocks, SkinJob, SkinMethod,
    SkinOutput, SkinVertices, VertexBlock,
};
use sinew_core::{Mat4, Skeleton, SoaTransform, Vec3};
use sinew_std::compress::{compress, CompressOptions};

#[path = "../support/c.rs"]
mod c;
#[path = "../support/mm.rs"]
mod mm;
use c::{build_static_library, compile, root, run, target_dir};

/// Positions, normals, joints and weights.
type Mesh = (Vec<[f32; 3]>, Vec<[f32; 3]>, Vec<[u16; 4]>, Vec<[f32; 4]>);

/// The mesh of `make_mesh()` in abi_test.c.
fn mesh() -> Mesh {
    let js = [13u16, 15, 0, 5];
    let mut p = Vec::new();
    let mut n = Vec::new();
    let mut j = Vec::new();
    let mut w = Vec::new();
    for v in 0..24usize {
        let f = v as f32;
        p.push([0.1 * f - 1.0, 1.0 + 0.05 * f, 0.02 * f]);
        n.push(if v % 2 == 1 {
            [0.0, 1.0, 0.0]
        } else {
            [0.0, 0.0, 1.0]
        });
        j.push([js[v % 4], js[(v + 1) % 4], js[(v + 2) % 4], js[(v + 3) % 4]]);
        w.push([0.4, 0.3, 0.2, 0.1]);
    }
    (p, n, j, w)
}

fn sum(floats: &[f32]) -> f64 {
    floats.iter().map(|&f| f64::from(f)).sum()
}

/// The procedural humanoid's skeleton container, 16-byte aligned (the C
/// program writes the same bytes with `sinew_humanoid_skeleton_write`).
#[repr(C, align(16))]
struct SkeletonBytes([u8; procedural::HUMANOID_SKELETON_BYTES]);

fn humanoid_skeleton() -> Box<SkeletonBytes> {
    let mut bytes = Box::new(SkeletonBytes([0; procedural::HUMANOID_SKELETON_BYTES]));
    procedural::write_humanoid_skeleton(&mut bytes.0).unwrap();
    bytes
}

/// The C program's frame, through the Rust API.
fn expected() -> HashMap<&'static str, f64> {
    let bytes = humanoid_skeleton();
    let skel = Skeleton::from_bytes(&bytes.0).unwrap();
    let n = skel.soa_count();
    let sample = |g: Gait, t: f32| {
        let mut keys = vec![SoaTransform::default(); procedural::gait_frame_count(g, 30.0) * n];
        let clip = procedural::write_gait_clip(g, &skel, 30.0, &mut keys).unwrap();
        let mut pose = vec![SoaTransform::default(); n];
        clip.sample(t, TimeMode::Loop, &mut pose).unwrap();
        (pose, clip.duration())
    };
    let (walk, walk_duration) = sample(Gait::Walk, 0.37);
    let (jog, _) = sample(Gait::Jog, 1.9);
    let (prev_walk, _) = sample(Gait::Walk, 0.37 - 1.0 / 60.0);
    let (prev_jog, _) = sample(Gait::Jog, 1.9 - 1.0 / 60.0);
    let ramp = mix::Ramp::Linear { frames: 5 }.weight(3, 20);
    let mut mixed = vec![SoaTransform::default(); n];
    let units = [unit(&walk, ramp)];
    let job = mix::MixJob {
        units: &units,
        fatigue: Some(unit(&jog, 0.3)),
        idle: Some(unit(skel.rest_pose(), 1.0)),
        rest: skel.rest_pose(),
        mode: mix::MixMode::Quaternion,
    };
    mix::mix(&job, &mut mixed).unwrap();
    let mut faded = vec![SoaTransform::default(); n];
    mix::crossfade(&walk, &jog, 0.25, &mut faded).unwrap();
    let mut state = vec![mix::InertialBlock::default(); n];
    let switch = mix::transition::SwitchJob {
        old: &walk,
        old_prev: &prev_walk,
        new: &jog,
        new_prev: &prev_jog,
        dt: 1.0 / 60.0,
        duration: 0.5,
    };
    let longest = mix::transition::start(&mut state, &switch).unwrap();
    let mut inertialized = jog.clone();
    mix::transition::apply(&state, 0.1, mix::Decay::Quintic, &mut inertialized).unwrap();
    let layers = [BlendLayer::new(&walk, 0.7), BlendLayer::new(&jog, 0.3)];
    let mut pose = vec![SoaTransform::default(); n];
    blend(&BlendJob::new(&layers, &[], skel.rest_pose()), &mut pose).unwrap();
    let mut models = vec![Mat4::IDENTITY; skel.joint_count()];
    local_to_model(&FkJob::new(&skel, &pose), &mut models).unwrap();
    let mut lbs = vec![Mat3x4::IDENTITY; models.len()];
    let mut dqs = vec![DualQuat::IDENTITY; models.len()];
    skin::lbs_palette(&models, skel.inverse_bind(), &mut lbs).unwrap();
    skin::dqs_palette(&models, skel.inverse_bind(), &mut dqs).unwrap();
    let mut lbs_binds = vec![skin::LbsBind::default(); models.len()];
    skin::prepare_lbs_binds(skel.inverse_bind(), &mut lbs_binds).unwrap();
    let mut lbs_prepared = vec![Mat3x4::IDENTITY; models.len()];
    skin::lbs_palette_prepared(&models, &lbs_binds, &mut lbs_prepared).unwrap();
    let mut dqs_binds = vec![skin::DqsBinds::default(); skin::DqsBinds::count(models.len())];
    skin::prepare_dqs_binds(skel.inverse_bind(), &mut dqs_binds).unwrap();
    let mut dqs_prepared = vec![DualQuat::IDENTITY; models.len()];
    skin::dqs_palette_prepared(&models, &dqs_binds, &mut dqs_prepared).unwrap();
    let (p, nrm, j, w) = mesh();
    let input = SkinVertices {
        positions: &p,
        normals: Some(&nrm),
        tangents: None,
    };
    let influences = CheckedInfluences::new(&j, &w, models.len()).unwrap();
    let skin_into = |method: SkinMethod<'_>, output: SkinOutput<'_>| {
        let attributes = SkinAttributes::Arrays { input, output };
        SkinJob {
            method,
            influences: &influences,
            attributes,
        }
        .run()
        .unwrap();
    };
    // Positions and normals skinned by `run`, summed.
    let skinned = |run: &dyn Fn(SkinOutput<'_>)| {
        let mut op = vec![[0.0f32; 3]; p.len()];
        let mut on = vec![[0.0f32; 3]; p.len()];
        run(SkinOutput {
            positions: &mut op,
            normals: Some(&mut on),
            tangents: None,
        });
        (sum(op.as_flattened()), sum(on.as_flattened()))
    };
    let (lp, ln) = skinned(&|out| skin_into(SkinMethod::Lbs { palette: &lbs }, out));
    let mut blocks = vec![VertexBlock::default(); SkinBlocks::block_count(p.len())];
    let prepared = SkinBlocks::new(&influences, input, &mut blocks).unwrap();
    let (bp, bn) = skinned(&|out| prepared.lbs(&lbs, out).unwrap());
    let first_lbs = {
        let mut op = vec![[0.0f32; 3]; p.len()];
        let out = SkinOutput {
            positions: &mut op,
            normals: None,
            tangents: None,
        };
        skin_into(SkinMethod::Lbs { palette: &lbs }, out);
        op[0][0]
    };
    let (dp, dn) = skinned(&|out| skin_into(SkinMethod::Dqs { palette: &dqs }, out));
    let hand = models[15].cols[3];
    HashMap::from([
        ("joint_count", skel.joint_count() as f64),
        ("soa_count", n as f64),
        ("head", skel.find_joint("head").unwrap() as f64),
        (
            "walk_frames",
            procedural::gait_frame_count(Gait::Walk, 30.0) as f64,
        ),
        ("walk_duration", f64::from(walk_duration)),
        ("pose_sum", sum(bytemuck::cast_slice(&pose))),
        ("model_sum", sum(bytemuck::cast_slice(&models))),
        ("hand_l_position", f64::from(hand[0])),
        ("lbs_palette_sum", sum(bytemuck::cast_slice(&lbs))),
        ("dqs_palette_sum", sum(bytemuck::cast_slice(&dqs))),
        ("lbs_prepared_sum", sum(bytemuck::cast_slice(&lbs_prepared))),
        ("dqs_prepared_sum", sum(bytemuck::cast_slice(&dqs_prepared))),
        ("lbs_positions", lp),
        ("lbs_normals", ln),
        ("dqs_positions", dp),
        ("dqs_normals", dn),
        ("blocks_lbs_positions", bp),
        ("blocks_lbs_normals", bn),
        ("ramp_weight", f64::from(ramp)),
        ("mix_sum", sum(bytemuck::cast_slice(&mixed))),
        ("crossfade_sum", sum(bytemuck::cast_slice(&faded))),
        ("inertialized_sum", sum(bytemuck::cast_slice(&inertialized))),
        ("longest", f64::from(longest)),
        // Shoulder at 0, elbow 0.5 along x, hand 0.5 further.
        ("built_hand_x", 1.0),
        ("strided_lbs_positions_0", f64::from(first_lbs)),
    ])
}

#[test]
fn c_program_runs_a_frame_and_checks_every_status() {
    let lib = build_static_library();
    let exe = target_dir().join("c-abi-test");
    compile(&root().join("tests/c/abi_test.c"), &lib, &exe);
    let (path, compressed) = compressed_walk();
    let (mesh_path, mesh) = mesh_container();
    let (tracks_path, tracks) = track_set_file();
    let (mm_path, motion) = mm_database_file();
    let stdout = run(&exe, &[&path, &mesh_path, &tracks_path, &mm_path]);
    let printed: HashMap<&str, &str> = stdout.lines().filter_map(|l| l.split_once(' ')).collect();
    let mut expected = expected();
    expected.extend(compressed);
    expected.extend(mesh);
    expected.extend(tracks);
    expected.extend(motion);
    expected.extend(ik_expected());
    expected.extend(shapes_expected());
    for (key, want) in &expected {
        let text = printed
            .get(key)
            .unwrap_or_else(|| panic!("C printed no {key}:\n{stdout}"));
        let got: f64 = text
            .split(' ')
            .next()
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(|| panic!("{key}: cannot parse {text:?}"));
        let tol = 1e-6 * want.abs().max(1.0);
        assert!((got - want).abs() <= tol, "{key}: C {got}, Rust {want}");
    }
    assert_eq!(printed.get("joint15"), Some(&"hand_l"));
    assert_eq!(printed.get("version"), Some(&env!("CARGO_PKG_VERSION")));
    let checks: u32 = printed["checks"].parse().unwrap();
    assert!(checks >= 1280, "only {checks} status checks ran");
}

/// The mesh of `mesh()` with the humanoid's inverse binds and eight
/// triangles, as a mesh container for the C program, and what it must
/// report about it.
fn mesh_container() -> (PathBuf, [(&'static str, f64); 4]) {
    let bytes = humanoid_skeleton();
    let skel = Skeleton::from_bytes(&bytes.0).unwrap();
    let (p, n, j, w) = mesh();
    let indices: Vec<u32> = (0..p.len() as u32).collect();
    let parts = sinew_core::mesh::MeshParts {
        positions: &p,
        normals: &n,
        joints: &j,
        weights: &w,
        indices: &indices,
        inverse_binds: skel.inverse_bind(),
        ..Default::default()
    };
    let mut out = sinew_std::AlignedBytes::zeroed(sinew_core::mesh::required_size(&parts).unwrap());
    sinew_core::mesh::build(&parts, out.as_mut_slice()).unwrap();
    let path = target_dir().join("c-abi-mesh.sinewmsh");
    std::fs::write(&path, out.as_slice()).expect("write the mesh container");
    (
        path,
        [
            ("mesh_vertices", p.len() as f64),
            ("mesh_indices", indices.len() as f64),
            ("mesh_joints", skel.joint_count() as f64),
            ("mesh_position_sum", sum(p.as_flattened())),
        ],
    )
}

/// A track set for the C program (a CUBICSPLINE float named `fov`, a raw
/// vec3, a quantized rotation), and what sampling it at 0.37 s gives
/// through the Rust API.
fn track_set_file() -> (PathBuf, [(&'static str, f64); 3]) {
    use sinew_core::math::Quat;
    use sinew_core::track::curve::{Cursor, Interpolation};
    use sinew_core::track::store::{
        track_set_size, write_track_set, Encoding, TrackDesc, TrackKind, TrackSet,
    };
    let times = [0.0f32, 0.25, 0.5, 1.0];
    let fov = [
        0.0f32, 60.0, 10.0, -5.0, 45.0, 0.0, 0.0, 50.0, 20.0, 1.0, 70.0, 0.0,
    ];
    let pos: Vec<f32> = (0..12).map(|i| i as f32 * 0.1).collect();
    let rot: Vec<f32> = (0..4)
        .flat_map(|k| {
            let q = Quat::from_rotation_y(k as f32 * 0.4);
            [q.x, q.y, q.z, q.w]
        })
        .collect();
    let descs = [
        TrackDesc {
            name: "fov",
            target: Some(7),
            kind: TrackKind::Float,
            interpolation: Interpolation::CubicSpline,
            times: &times,
            values: &fov,
            encoding: Encoding::Raw,
        },
        TrackDesc {
            name: "offset",
            target: None,
            kind: TrackKind::Vec3,
            interpolation: Interpolation::Linear,
            times: &times,
            values: &pos,
            encoding: Encoding::Raw,
        },
        TrackDesc {
            name: "aim",
            target: None,
            kind: TrackKind::Quat,
            interpolation: Interpolation::Linear,
            times: &times,
            values: &rot,
            encoding: Encoding::Quantized,
        },
    ];
    let mut out = sinew_std::AlignedBytes::zeroed(track_set_size(&descs).unwrap());
    write_track_set(&descs, out.as_mut_slice()).unwrap();
    let path = target_dir().join("c-abi-tracks.sinewtrk");
    std::fs::write(&path, out.as_slice()).expect("write the track set");
    let set = TrackSet::from_bytes(out.as_slice()).unwrap();
    let fov = set.track(0).unwrap().typed::<f32>().unwrap().sample(0.37);
    let mut all = vec![0.0f32; set.component_count()];
    set.sample_all(0.37, &mut [Cursor::new(); 3], &mut all)
        .unwrap();
    (
        path,
        [
            ("track_fov", f64::from(fov)),
            ("track_all_sum", all.iter().map(|&x| f64::from(x)).sum()),
            ("track_components", all.len() as f64),
        ],
    )
}

/// A motion-matching database for the C program (1000 frames in four
/// ranges, every other one mirrored, a tenth of the frames hidden), and
/// what the C program's calls give through the Rust API: a search near
/// frame 123, a frame's cost, normalized raw features, frame locations.
fn mm_database_file() -> (PathBuf, Vec<(&'static str, f64)>) {
    use sinew_core::motion_matching::Database;
    let bytes = mm::database(
        20,
        mm::Shape {
            frames: 1000,
            ranges: 4,
            mirrored: true,
            ties: false,
            hidden: 0.1,
        },
    );
    let path = target_dir().join("c-abi-motion.sinewmmd");
    std::fs::write(&path, bytes.as_slice()).expect("write the motion-matching database");
    let db = Database::from_bytes(bytes.as_slice()).unwrap();
    // The seed gives trajectory groups, and frames 123 (searched near)
    // and 40 (costed) a search may return.
    assert!(db.groups().len() > 4 && db.is_searchable(40) && db.is_searchable(123));
    let n = db.feature_count();
    let mut q = vec![0.0f32; n];
    db.frame_features(123, &mut q).unwrap();
    for (i, x) in q.iter_mut().enumerate() {
        *x += 0.01 * (i % 3) as f32 - 0.01;
    }
    let best = db.search(&q, f32::INFINITY).unwrap().unwrap();
    let raw: Vec<f32> = (0..n).map(|i| 0.1 * i as f32 - 0.5).collect();
    let mut norm = vec![0.0f32; n];
    db.normalize(0, &raw, &mut norm).unwrap();
    let mut norm_1 = [0.0f32; 2];
    db.normalize(1, &raw[..2], &mut norm_1).unwrap();
    let located = |frame: usize| {
        let (range, local) = db.locate(frame).unwrap();
        let r = db.ranges()[range];
        [range, local, r.clip as usize, usize::from(r.mirrored())].map(|v| v as f64)
    };
    let [range, local, clip, mirrored] = located(best.frame as usize);
    let [last_range, last_local, last_clip, last_mirrored] = located(db.frame_count() - 1);
    let expected = vec![
        ("mm_features", n as f64),
        ("mm_frames", db.frame_count() as f64),
        ("mm_ranges", db.ranges().len() as f64),
        ("mm_groups", db.groups().len() as f64),
        ("mm_rate", f64::from(db.sample_rate())),
        ("mm_frame", f64::from(best.frame)),
        ("mm_cost", f64::from(best.cost)),
        ("mm_cost_40", f64::from(db.cost(&q, 40).unwrap())),
        ("mm_normalized_sum", sum(&norm)),
        ("mm_normalized_1", f64::from(norm_1[1])),
        ("mm_range", range),
        ("mm_local", local),
        ("mm_clip", clip),
        ("mm_mirrored", mirrored),
        ("mm_last_range", last_range),
        ("mm_last_local", last_local),
        ("mm_last_clip", last_clip),
        ("mm_last_mirrored", last_mirrored),
    ];
    (path, expected)
}

/// The humanoid's walk compressed with the default options, written for the
/// C program, and what sampling it at 0.37 s gives through the Rust API.
fn compressed_walk() -> (PathBuf, [(&'static str, f64); 2]) {
    let bytes = humanoid_skeleton();
    let skel = Skeleton::from_bytes(&bytes.0).unwrap();
    let n = skel.soa_count();
    let mut keys =
        vec![SoaTransform::default(); procedural::gait_frame_count(Gait::Walk, 30.0) * n];
    let clip = procedural::write_gait_clip(Gait::Walk, &skel, 30.0, &mut keys).unwrap();
    let (owned, _) = compress(&skel, &clip, &CompressOptions::default()).unwrap();
    let path = target_dir().join("c-abi-walk.sinewcmp");
    std::fs::write(&path, owned.bytes()).expect("write the compressed clip");
    let c = owned.view();
    let mut pose = vec![SoaTransform::default(); n];
    match c.defaults() {
        Defaults::RestPose => c.sample_with_rest(0.37, TimeMode::Loop, skel.rest_pose(), &mut pose),
        Defaults::Identity => c.sample(0.37, TimeMode::Loop, &mut pose),
    }
    .unwrap();
    let sum = sum(bytemuck::cast_slice(&pose));
    (
        path,
        [
            ("compressed_sum", sum),
            ("compressed_frames", c.frame_count() as f64),
        ],
    )
}

/// The C program's IK solves on the humanoid's rest pose through the Rust
/// API: after each, the sum of the local pose's and the model matrices'
/// floats (and the foot placement's pelvis offset).
fn ik_expected() -> [(&'static str, f64); 4] {
    let bytes = humanoid_skeleton();
    let skel = Skeleton::from_bytes(&bytes.0).unwrap();
    let j = |name: &str| skel.find_joint(name).unwrap();
    let solve = |f: &dyn Fn(&mut IkPose<'_, '_>) -> f32| {
        let mut local = skel.rest_pose().to_vec();
        let mut models = vec![Mat4::IDENTITY; skel.joint_count()];
        local_to_model(&FkJob::new(&skel, &local), &mut models).unwrap();
        let mut pose = IkPose::new(&skel, &mut local, &mut models, None).unwrap();
        let value = f(&mut pose);
        let floats = sum(bytemuck::cast_slice(&local)) + sum(bytemuck::cast_slice(&models));
        (floats, f64::from(value))
    };
    let (two_bone, _) = solve(&|pose| {
        let goal = TwoBoneGoal::new(Vec3::new(0.15, 0.25, 0.2));
        let leg = TwoBoneIk::new(j("thigh_l"), j("calf_l"), j("foot_l"), goal);
        assert!(leg.solve(pose).unwrap().reached);
        0.0
    });
    let (look, _) = solve(&|pose| {
        let chain = [
            LookAtJoint::new(j("spine_03"), 0.3),
            LookAtJoint::new(j("neck_01"), 0.5),
            LookAtJoint::new(j("head"), 1.0),
        ];
        let aim = Aim::new(Vec3::new(0.5, 1.7, 1.0), Vec3::Z, Vec3::Y)
            .with_offset(Vec3::new(0.0, 0.08, 0.08));
        assert!(look_at(pose, &chain, &aim).unwrap().reached);
        0.0
    });
    let (foot, pelvis_offset) = solve(&|pose| {
        let leg = |side: &str| FootLeg {
            hip: j(&format!("thigh_{side}")),
            knee: j(&format!("calf_{side}")),
            ankle: j(&format!("foot_{side}")),
            knee_axis: Vec3::new(-1.0, 0.0, 0.0),
        };
        let feet = FootPlacement {
            pelvis: j("pelvis"),
            legs: [leg("l"), leg("r")],
            foot_height: 0.02,
            max_tilt: 0.5,
            max_pelvis_offset: 0.3,
            half_life: 0.0,
            soften: 1.0,
        };
        let plane = |x: f32, _: f32| Some((0.1 + 0.2 * x, Vec3::new(-0.2, 1.0, 0.0)));
        let mut state = FootState::new();
        let r = feet
            .solve(pose, &plane, 0.0, 1.0 / 60.0, &mut state)
            .unwrap();
        r.pelvis_offset
    });
    [
        ("ik_two_bone_sum", two_bone),
        ("ik_look_at_sum", look),
        ("ik_foot_sum", foot),
        ("ik_foot_pelvis_offset", pelvis_offset),
    ]
}

/// The C program's blend shapes and elbow corrective, through the Rust API.
fn shapes_expected() -> [(&'static str, f64); 2] {
    use sinew_core::shape::blend::{pack_sparse, BlendOptions, BlendShapes, Deltas, Target};
    use sinew_core::shape::driver::{Angle, Corrective, Ramp};
    use sinew_core::{Quat, SoaVec3};
    let p: Vec<[f32; 3]> = (0..4).map(|v| [v as f32, 0.0, 0.0]).collect();
    let n = vec![[0.0, 0.0, 1.0]; 4];
    let dense: Vec<[f32; 3]> = (0..4).map(|v| [0.0, v as f32 + 1.0, 0.0]).collect();
    let mut moved = [SoaVec3::ZERO; 1];
    let mut turned = [SoaVec3::ZERO; 1];
    pack_sparse(&[[0.0, 0.0, 2.0], [0.0, 0.0, -4.0]], &mut moved).unwrap();
    pack_sparse(&[[2.0, 0.0, -2.0]], &mut turned).unwrap();
    let targets = [
        Target {
            positions: Some(Deltas::Dense(&dense)),
            ..Target::default()
        },
        Target {
            positions: Some(Deltas::Sparse {
                indices: &[1, 3],
                deltas: &moved,
            }),
            normals: Some(Deltas::Sparse {
                indices: &[3],
                deltas: &turned,
            }),
            tangents: None,
        },
    ];
    let shapes = BlendShapes::new(4, &targets).unwrap();
    let (mut op, mut on) = (vec![[0.0; 3]; 4], vec![[0.0; 3]; 4]);
    let base = SkinVertices {
        positions: &p,
        normals: Some(&n),
        tangents: None,
    };
    let out = SkinOutput {
        positions: &mut op,
        normals: Some(&mut on),
        tangents: None,
    };
    shapes
        .apply(&[0.5, 0.25], BlendOptions::default(), base, out)
        .unwrap();
    let elbow = Corrective {
        shape: 0,
        joint: 1,
        reference: Quat::IDENTITY,
        angle: Angle::Twist { axis: Vec3::Z },
        from: 0.0,
        to: 2.0 * std::f32::consts::PI / 3.0,
        ramp: Ramp::Linear,
    };
    let half = std::f32::consts::FRAC_PI_4;
    let bent = Quat::new(0.0, 0.0, half.sin(), half.cos());
    [
        ("blend_sum", sum(op.as_flattened()) + sum(on.as_flattened())),
        ("elbow_weight", f64::from(elbow.weight(bent))),
    ]
}

fn unit(pose: &[SoaTransform], weight: f32) -> mix::MixInput<'_> {
    mix::MixInput {
        pose,
        weight,
        joint_weights: None,
    }
}
