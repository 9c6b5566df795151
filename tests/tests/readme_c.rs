//! The README's C example: extracts its ```c block, compiles it against
//! `include/sinew.h` and `libsinew.a`, runs it, and checks the hand position
//! it prints against the same frame computed through the Rust API.

use sinew_core::clip::TimeMode;
use sinew_core::fk::{local_to_model, FkJob};
use sinew_core::procedural::{self, Gait};
use sinew_core::{Mat4, Skeleton, SoaTransform};

#[path = "../support/c.rs"]
mod c;
use c::{build_static_library, compile, root, run, target_dir};

/// The body of the README's first ```c block.
fn readme_c_block() -> String {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("read README.md");
    readme
        .split("```c\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("README has a ```c block")
        .to_string()
}

/// What the example computes: joint 15 (hand_l) of the humanoid's walk,
/// sampled at 30 Hz at 0.25 s, looped, in model space.
fn expected_hand() -> [f32; 3] {
    #[repr(C, align(16))]
    struct Bytes([u8; procedural::HUMANOID_SKELETON_BYTES]);
    let mut bytes = Bytes([0; procedural::HUMANOID_SKELETON_BYTES]);
    let len = procedural::write_humanoid_skeleton(&mut bytes.0).unwrap();
    let skeleton = Skeleton::from_bytes(&bytes.0[..len]).unwrap();
    assert_eq!(skeleton.joint_name(15), Some("hand_l"));
    let n = skeleton.soa_count();
    let mut keys = vec![SoaTransform::IDENTITY; procedural::gait_frame_count(Gait::Walk, 30.0) * n];
    let walk = procedural::write_gait_clip(Gait::Walk, &skeleton, 30.0, &mut keys).unwrap();
    let mut pose = vec![SoaTransform::IDENTITY; n];
    walk.sample(0.25, TimeMode::Loop, &mut pose).unwrap();
    let mut models = vec![Mat4::IDENTITY; skeleton.joint_count()];
    local_to_model(&FkJob::new(&skeleton, &pose), &mut models).unwrap();
    let t = models[15].translation();
    [t.x, t.y, t.z]
}

#[test]
fn readme_c_example_prints_the_rust_frame() {
    let dir = target_dir();
    let source = dir.join("readme_example.c");
    std::fs::write(&source, readme_c_block()).expect("write the example");
    let exe = dir.join("readme-example");
    compile(&source, &build_static_library(), &exe);
    let out = run(&exe, &[]);
    let printed: Vec<f32> = out
        .trim()
        .strip_prefix("left hand at ")
        .unwrap_or_else(|| panic!("unexpected output: {out}"))
        .split(' ')
        .map(|v| v.parse().expect("a number"))
        .collect();
    let want = expected_hand();
    assert_eq!(printed.len(), 3, "three coordinates: {out}");
    for (got, w) in printed.iter().zip(want) {
        // The example prints four decimals.
        assert!((got - w).abs() <= 1e-4, "C {printed:?}, Rust {want:?}");
    }
}
