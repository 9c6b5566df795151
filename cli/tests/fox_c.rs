//! The Fox walk → run example from C (`tests/c/fox.c`) on the assets that
//! `sinew compress Fox.glb` writes: the tool writes the skeleton, mesh and
//! compressed clips, the C program loads them, inertializes the switch and
//! skins with DQS, and its output is checked against the same frames
//! computed through the Rust API from the same files.

#[path = "../../tests/support/c.rs"]
mod c;

use std::path::{Path, PathBuf};
use std::process::Command;

use sinew_core::clip::TimeMode::Loop;
use sinew_core::mesh::SkinnedMesh;
use sinew_core::mix::transition::{apply, start, Decay, InertialBlock, SwitchJob};
use sinew_core::skin::{dqs_palette, DualQuat, SkinAttributes, SkinJob, SkinMethod};
use sinew_core::skin::{SkinOutput, SkinVertices};
use sinew_core::{fk, Mat4, Skeleton, SoaTransform};
use sinew_std::compress::OwnedCompressedClip;
use sinew_std::AlignedBytes;

fn read(path: &Path) -> AlignedBytes {
    AlignedBytes::copy_from(
        &std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
}

/// The Rust side of `fox.c`: the first skinned vertex and the sum of all.
fn rust_frames(files: &[PathBuf; 4]) -> ([f32; 3], f64) {
    let (skel_bytes, mesh_bytes) = (read(&files[0]), read(&files[1]));
    let skel = Skeleton::from_bytes(skel_bytes.as_slice()).unwrap();
    let mesh = SkinnedMesh::from_bytes(mesh_bytes.as_slice()).unwrap();
    let clip = |p: &PathBuf| OwnedCompressedClip::from_bytes(&std::fs::read(p).unwrap()).unwrap();
    let (walk, run) = (clip(&files[2]), clip(&files[3]));
    let (walk, run) = (walk.view(), run.view());
    let (n, rest, dt) = (skel.soa_count(), skel.rest_pose(), 1.0f32 / 60.0);
    let pose = || vec![SoaTransform::IDENTITY; n];
    let (mut out, mut old, mut old_prev) = (pose(), pose(), pose());
    let mut offsets = vec![InertialBlock::default(); n];
    let mut models = vec![Mat4::IDENTITY; skel.joint_count()];
    let mut palette = vec![DualQuat::IDENTITY; skel.joint_count()];
    let mut skinned = vec![[0.0f32; 3]; mesh.vertex_count()];
    let influences = mesh.influences();
    for frame in 0..120 {
        let t = frame as f32 * dt;
        let clip = if frame < 60 { &walk } else { &run };
        clip.sample_with_rest(t, Loop, rest, &mut out).unwrap();
        if frame == 60 {
            walk.sample_with_rest(t, Loop, rest, &mut old).unwrap();
            walk.sample_with_rest(t - dt, Loop, rest, &mut old_prev)
                .unwrap();
            let (new, duration) = (&out, 0.3);
            let job = SwitchJob {
                old: &old,
                old_prev: &old_prev,
                new,
                new_prev: new,
                dt,
                duration,
            };
            start(&mut offsets, &job).unwrap();
        }
        if frame >= 60 {
            apply(&offsets, (frame - 60) as f32 * dt, Decay::Quintic, &mut out).unwrap();
        }
        fk::local_to_model(&fk::FkJob::new(&skel, &out), &mut models).unwrap();
        dqs_palette(&models, mesh.inverse_binds(), &mut palette).unwrap();
        let input = SkinVertices {
            positions: mesh.positions(),
            normals: None,
            tangents: None,
        };
        let output = SkinOutput {
            positions: &mut skinned,
            normals: None,
            tangents: None,
        };
        let attributes = SkinAttributes::Arrays { input, output };
        let method = SkinMethod::Dqs { palette: &palette };
        SkinJob {
            method,
            influences: &influences,
            attributes,
        }
        .run()
        .unwrap();
    }
    let sum = skinned.iter().flatten().map(|&x| f64::from(x)).sum();
    (skinned[0], sum)
}

#[test]
fn fox_walk_to_run_from_c_with_assets_the_tool_wrote() {
    let fox = c::root().join("../shared/data/gltf/khronos-gltf-samples/Fox.glb");
    if !fox.is_file() {
        eprintln!("skipped: {} not found", fox.display());
        return;
    }
    let dir = c::target_dir().join(format!("fox-assets-{}", std::process::id()));
    let o = Command::new(env!("CARGO_BIN_EXE_sinew"))
        .args([
            "compress",
            fox.to_str().unwrap(),
            "-o",
            dir.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let find = |end: &str| {
        std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.to_str().is_some_and(|s| s.ends_with(end)))
            .unwrap_or_else(|| panic!("no *{end} in {}", dir.display()))
    };
    let files = [
        find(".sinewskl"),
        find(".sinewmsh"),
        find("_Walk.sinewcmp"),
        find("_Run.sinewcmp"),
    ];
    let exe = c::target_dir().join("fox-c");
    c::compile(
        &c::root().join("tests/c/fox.c"),
        &c::build_static_library(),
        &exe,
    );
    let args: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let stdout = c::run(&exe, &args);
    let value = |key: &str| -> Vec<f64> {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(key))
            .unwrap_or_else(|| panic!("{stdout}"));
        line.split(' ')
            .skip(1)
            .map(|v| v.parse().unwrap())
            .collect()
    };
    let (vertex0, sum) = rust_frames(&files);
    assert_eq!(value("vertices"), vec![1728.0]);
    for (c, r) in value("vertex0").iter().zip(vertex0) {
        assert!(
            (c - f64::from(r)).abs() <= 1e-4 * f64::from(r).abs().max(1.0),
            "{stdout}"
        );
    }
    assert!(
        (value("sum")[0] - sum).abs() <= 1e-6 * sum.abs().max(1.0),
        "{stdout} vs {sum}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
