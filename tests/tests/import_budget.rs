//! The memory budget of one import: small hostile files that ask for
//! gigabytes (a clip of a million frames, eight clips that fit one by one,
//! a thousand morph weights, a patched ozz duration, several ozz animations
//! of one skeleton, a huge BVH frame count, an inverse-bind accessor that
//! claims two billion matrices) are refused with an error that says what
//! would not fit, quickly and without a large allocation, at the default
//! budget and at a small one; an allocation the system cannot serve is an
//! error, not an abort; and the real files of `../shared/data` load within
//! the default budget.
//!
//! Every hostile file is generated here. This is its own binary with a
//! global allocator that records the largest allocation made by a thread
//! that asks for it.

#[path = "../support/mod.rs"]
mod support;
use support::base64;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sinew_std::import::gltf::{self, GltfOptions};
use sinew_std::import::load::{load_files, LoadOptions};
use sinew_std::import::ozz::{self, OzzOptions};
use sinew_std::import::{bvh, DEFAULT_MEMORY_BUDGET};
use sinew_std::{Asset, ImportError, Location};
use support::peak::{peak_of, PeakAllocator};

// ---------------------------------------------------------------------------
// Largest-allocation probe
// ---------------------------------------------------------------------------

#[global_allocator]
static GLOBAL: PeakAllocator = PeakAllocator;

const MIB: usize = 1 << 20;

/// The small budget every hostile file is also tried with.
const SMALL: usize = 64 * MIB;

/// Largest single allocation a refused hostile file may cause: a few
/// buffers of its own size, far below what it asks for.
const REFUSED_PEAK: usize = 4 * MIB;

/// How long a refusal may take, in a debug build on a busy machine; the
/// imports measured here take milliseconds.
const QUICK: Duration = Duration::from_secs(1);

/// Runs an import, returning its result, the largest allocation it made and
/// how long it took.
fn measure<R>(f: impl FnOnce() -> R) -> (R, usize, Duration) {
    let start = Instant::now();
    let (r, peak) = peak_of(f);
    (r, peak, start.elapsed())
}

/// The import was refused for its budget, at `location`, with `words` in
/// the message, quickly and without a large allocation.
fn assert_refused<T>(
    run: impl FnOnce() -> Result<T, ImportError>,
    location: &Location,
    words: &[&str],
) -> ImportError {
    let (r, peak, elapsed) = measure(run);
    let Err(e) = r else {
        panic!("the hostile file was accepted ({words:?})")
    };
    assert_eq!(&e.location, location, "{e}");
    assert!(
        e.message.contains("exceeds the memory budget of"),
        "not a budget error: {e}"
    );
    for w in words {
        assert!(e.message.contains(w), "{w:?} missing in: {e}");
    }
    assert!(peak <= REFUSED_PEAK, "largest allocation {peak} bytes: {e}");
    assert!(elapsed < QUICK, "took {elapsed:?}: {e}");
    println!("{e}  [largest allocation {peak} bytes, {elapsed:?}]");
    e
}

fn budget_text(bytes: usize) -> String {
    format!("exceeds the memory budget of {} MiB", bytes / MIB)
}

// ---------------------------------------------------------------------------
// glTF documents
// ---------------------------------------------------------------------------

/// A glTF document whose one buffer holds `floats`; `views` and
/// `accessors` are JSON arrays' contents, `body` the other members.
fn gltf_doc(floats: &[f32], views: &str, accessors: &str, body: &str) -> String {
    let bin: Vec<u8> = floats.iter().flat_map(|v| v.to_le_bytes()).collect();
    format!(
        r#"{{"asset":{{"version":"2.0"}},
"buffers":[{{"byteLength":{},"uri":"data:application/octet-stream;base64,{}"}}],
"bufferViews":[{views}],"accessors":[{accessors}],{body}}}"#,
        bin.len(),
        base64(&bin)
    )
}

fn import_gltf(json: &str, budget: usize) -> Result<Asset, ImportError> {
    let opts = GltfOptions {
        memory_budget: budget,
        ..GltfOptions::default()
    };
    gltf::from_slice(json.as_bytes(), Path::new("hostile.gltf"), None, &opts)
}

fn path(p: &str) -> Location {
    Location::JsonPath(p.to_string())
}

/// A chain of `joints` nodes whose first and last are translated by
/// `clips` animations, each with keys at 0, 0.5 and `end` seconds (not
/// uniform, so resampled at 30 Hz): `end × 30 + 1` frames of `joints`
/// joints per clip.
fn long_clips(joints: usize, clips: usize, end: f32) -> String {
    let nodes: Vec<String> = (0..joints)
        .map(|i| {
            if i + 1 < joints {
                format!(r#"{{"name":"j{i}","children":[{}]}}"#, i + 1)
            } else {
                format!(r#"{{"name":"j{i}"}}"#)
            }
        })
        .collect();
    let last = joints - 1;
    let anims: Vec<String> = (0..clips)
        .map(|c| {
            format!(
                r#"{{"name":"clip{c}","samplers":[{{"input":0,"output":1}}],"channels":[
{{"sampler":0,"target":{{"node":0,"path":"translation"}}}},
{{"sampler":0,"target":{{"node":{last},"path":"translation"}}}}]}}"#
            )
        })
        .collect();
    let mut floats = vec![0.0, 0.5, end];
    floats.extend([0.0; 9]);
    gltf_doc(
        &floats,
        r#"{"buffer":0,"byteOffset":0,"byteLength":12},{"buffer":0,"byteOffset":12,"byteLength":36}"#,
        r#"{"bufferView":0,"componentType":5126,"count":3,"type":"SCALAR"},
{"bufferView":1,"componentType":5126,"count":3,"type":"VEC3"}"#,
        &format!(
            r#""nodes":[{}],"animations":[{}]"#,
            nodes.join(","),
            anims.join(",")
        ),
    )
}

#[test]
fn a_clip_of_a_million_frames_is_refused() {
    // 33,333 s at 30 Hz: 999,991 frames of 57 joints (15 SoA blocks), 2.2 GiB.
    let doc = long_clips(57, 1, 33_333.0);
    assert!(doc.len() < 4096, "{} bytes", doc.len());
    for budget in [DEFAULT_MEMORY_BUDGET, SMALL] {
        assert_refused(
            || import_gltf(&doc, budget),
            &path("/animations/0"),
            &[
                "clip \"clip0\": 999,991 frames × 57 joints (15 SoA blocks of 160 bytes) = 2.24 GiB",
                &budget_text(budget),
            ],
        );
    }
}

#[test]
fn clips_that_fit_one_by_one_are_counted_together() {
    // Each clip fits the budget alone (412 MiB of 512, 40 MiB of 64), the
    // second does not fit beside the first; nothing is resampled before
    // the refusal.
    for (budget, end, left) in [
        (
            DEFAULT_MEMORY_BUDGET,
            6_000.0,
            "= 412 MiB: exceeds the memory budget of 512 MiB (100 MiB left)",
        ),
        (SMALL, 580.0, "(24.2 MiB left)"),
    ] {
        let doc = long_clips(57, 8, end);
        assert!(doc.len() < 4096, "{} bytes", doc.len());
        assert_refused(
            || import_gltf(&doc, budget),
            &path("/animations/1"),
            &["clip \"clip1\"", &budget_text(budget), left],
        );
    }
}

/// One joint translated over [0, 1] s and a node whose mesh has `weights`
/// morph targets, animated from a zero accessor (no buffer view) over [0,
/// 0.5, `end`] s: `weights` float tracks of `end × 30 + 1` frames.
fn morph_weights(weights: usize, end: f32) -> String {
    let zeros = vec!["0"; weights].join(",");
    gltf_doc(
        &[
            0.0, 0.5, end, 0.0, 0.5, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
        ],
        r#"{"buffer":0,"byteOffset":0,"byteLength":12},{"buffer":0,"byteOffset":12,"byteLength":12},{"buffer":0,"byteOffset":24,"byteLength":36}"#,
        &format!(
            r#"{{"bufferView":0,"componentType":5126,"count":3,"type":"SCALAR"}},
{{"componentType":5126,"count":{},"type":"SCALAR"}},
{{"bufferView":1,"componentType":5126,"count":3,"type":"SCALAR"}},
{{"bufferView":2,"componentType":5126,"count":3,"type":"VEC3"}}"#,
            3 * weights
        ),
        &format!(
            r#""nodes":[{{"name":"root"}},{{"name":"face","mesh":0}}],
"meshes":[{{"weights":[{zeros}],"primitives":[{{"attributes":{{"POSITION":3}}}}]}}],
"animations":[{{"name":"talk","samplers":[{{"input":0,"output":1}},{{"input":2,"output":3}}],"channels":[
{{"sampler":0,"target":{{"node":1,"path":"weights"}}}},
{{"sampler":1,"target":{{"node":0,"path":"translation"}}}}]}}]"#
        ),
    )
}

#[test]
fn morph_weight_tracks_are_counted() {
    // 1,000 weights over 33,333 s: 3.7 GiB of float tracks beside 153 MiB of
    // keys; over 1,000 s, 115 MiB against the small budget.
    for (budget, end, words) in [
        (
            DEFAULT_MEMORY_BUDGET,
            33_333.0,
            "clip \"talk\": 1,000 morph-weight tracks × 999,991 frames = 3.73 GiB",
        ),
        (
            SMALL,
            1_000.0,
            "clip \"talk\": 1,000 morph-weight tracks × 30,001 frames = 115 MiB",
        ),
    ] {
        let doc = morph_weights(1_000, end);
        assert!(doc.len() < 8192, "{} bytes", doc.len());
        assert_refused(
            || import_gltf(&doc, budget),
            &path("/animations/0"),
            &[words, &budget_text(budget)],
        );
    }
    // Ten thousand weights in a 20 KB file ask for 37 GiB.
    let doc = morph_weights(10_000, 33_333.0);
    assert_refused(
        || import_gltf(&doc, DEFAULT_MEMORY_BUDGET),
        &path("/animations/0"),
        &["10,000 morph-weight tracks × 999,991 frames = 37.3 GiB"],
    );
    // Within the budget, the same shape imports.
    let a = import_gltf(&morph_weights(4, 2.0), DEFAULT_MEMORY_BUDGET).unwrap();
    assert_eq!(a.clips[0].float_tracks().len(), 4);
    assert_eq!(a.clips[0].frame_count(), 61);
}

/// A skin of one joint whose inverse-bind accessor declares `2^31`
/// matrices, with (`in_view`) or without a buffer view; a skinned mesh
/// uses the skin when `used`.
fn huge_ibm(in_view: bool, used: bool) -> String {
    let view = if in_view { r#""bufferView":1,"# } else { "" };
    let node = if used {
        r#",{"name":"body","mesh":0,"skin":0}"#
    } else {
        ""
    };
    gltf_doc(
        &[
            0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, // POSITION
            1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, // WEIGHTS_0
            0.0, 0.0, 0.0, // JOINTS_0: twelve zero bytes
        ],
        r#"{"buffer":0,"byteOffset":0,"byteLength":36},{"buffer":0,"byteOffset":36,"byteLength":48},
{"buffer":0,"byteOffset":84,"byteLength":12}"#,
        &format!(
            r#"{{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3"}},
{{"bufferView":1,"componentType":5126,"count":3,"type":"VEC4"}},
{{"bufferView":2,"componentType":5121,"count":3,"type":"VEC4"}},
{{{view}"componentType":5126,"count":2147483648,"type":"MAT4"}}"#
        ),
        &format!(
            r#""nodes":[{{"name":"root"}}{node}],"skins":[{{"joints":[0],"inverseBindMatrices":3}}],
"meshes":[{{"primitives":[{{"attributes":{{"POSITION":0,"JOINTS_0":2,"WEIGHTS_0":1}}}}]}}]"#
        ),
    )
}

#[test]
fn a_huge_inverse_bind_accessor_is_never_decoded() {
    // In a buffer view, it is checked (and refused) even when no mesh uses it.
    let (r, peak, elapsed) = measure(|| import_gltf(&huge_ibm(true, false), SMALL));
    let e = r.err().expect("an out-of-bounds accessor is refused");
    assert_eq!(e.location, path("/accessors/3"), "{e}");
    assert!(e.message.contains("accessor out of bounds"), "{e}");
    assert!(
        peak <= REFUSED_PEAK && elapsed < QUICK,
        "{peak} bytes, {elapsed:?}"
    );
    // Without a buffer view (zeros), only the matrices of the skin's joints
    // are ever decoded: none when unused, one when a mesh uses the skin.
    for used in [false, true] {
        let (r, peak, elapsed) = measure(|| import_gltf(&huge_ibm(false, used), SMALL));
        let a = r.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(a.meshes.len(), usize::from(used));
        assert!(
            peak <= REFUSED_PEAK && elapsed < QUICK,
            "{peak} bytes, {elapsed:?}"
        );
    }
}

#[test]
fn an_external_buffer_costs_what_it_declares() {
    // A buffer naming a device (or a huge file) is charged its byteLength
    // and read no further.
    let doc = r#"{"asset":{"version":"2.0"},"buffers":[{"byteLength":1099511627776,"uri":"/dev/zero"}],
"bufferViews":[{"buffer":0,"byteLength":4}],
"accessors":[{"bufferView":0,"componentType":5126,"count":1,"type":"SCALAR"}],
"nodes":[{"name":"n"}],"animations":[{"samplers":[{"input":0,"output":0}],
"channels":[{"sampler":0,"target":{"node":0,"path":"translation"}}]}]}"#;
    let opts = GltfOptions::default();
    assert_refused(
        || {
            gltf::from_slice(
                doc.as_bytes(),
                Path::new("dev.gltf"),
                Some(Path::new("/")),
                &opts,
            )
        },
        &path("/buffers/0"),
        &["buffer 0 (/dev/zero): byteLength 1,099,511,627,776 = 1 TiB"],
    );
}

// ---------------------------------------------------------------------------
// BVH
// ---------------------------------------------------------------------------

fn bvh_with_frames(frames: &str) -> String {
    format!(
        "HIERARCHY\nROOT hips\n{{\n OFFSET 0 0 0\n CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n \
         End Site\n {{\n  OFFSET 0 10 0\n }}\n}}\nMOTION\nFrames: {frames}\nFrame Time: 0.008333\n0 0 0 0 0 0\n"
    )
}

fn import_bvh(text: &str, budget: usize) -> Result<Asset, ImportError> {
    let opts = bvh::BvhOptions {
        memory_budget: budget,
        ..bvh::BvhOptions::default()
    };
    bvh::from_slice(text.as_bytes(), Path::new("hostile.bvh"), &opts)
}

#[test]
fn a_huge_bvh_frame_count_is_a_budget_error_at_its_line() {
    for budget in [DEFAULT_MEMORY_BUDGET, SMALL] {
        assert_refused(
            || import_bvh(&bvh_with_frames("4294967295"), budget),
            &Location::Line(12),
            &[
                "clip \"hostile\": 4,294,967,295 frames × 2 joints (1 SoA block of 160 bytes) = 640 GiB",
                &budget_text(budget),
            ],
        );
        // Past u64 too: the count saturates and is refused the same way.
        assert_refused(
            || import_bvh(&bvh_with_frames("123456789012345678901234567890"), budget),
            &Location::Line(12),
            &["18,446,744,073,709,551,615 frames"],
        );
    }
    // Within the budget, a count the lines do not back is the usual mismatch.
    let e = import_bvh(&bvh_with_frames("400000"), SMALL).err().unwrap();
    assert!(e.message.contains("frame count mismatch"), "{e}");
    assert!(import_bvh(&bvh_with_frames("1"), SMALL).is_ok());
    let e = import_bvh(&bvh_with_frames("-1"), SMALL).err().unwrap();
    assert!(e.message.contains("not a non-negative integer"), "{e}");
}

// ---------------------------------------------------------------------------
// ozz archives
// ---------------------------------------------------------------------------

fn ozz_header(tag: &str, version: u32) -> Vec<u8> {
    let mut b = vec![1u8];
    b.extend_from_slice(tag.as_bytes());
    b.push(0);
    b.extend_from_slice(&version.to_le_bytes());
    b
}

/// A skeleton archive of one joint at rest at the origin.
fn ozz_skeleton() -> Vec<u8> {
    let mut b = ozz_header("ozz-skeleton", 2);
    b.extend_from_slice(&1i32.to_le_bytes());
    b.extend_from_slice(&5i32.to_le_bytes());
    b.extend_from_slice(b"root\0");
    b.extend_from_slice(&(-1i16).to_le_bytes());
    // One SoA block: translation, rotation (w = 1), scale (1), four lanes each.
    for c in 0..10 {
        let v: f32 = if c == 6 || c >= 7 { 1.0 } else { 0.0 };
        for _ in 0..4 {
            b.extend_from_slice(&v.to_le_bytes());
        }
    }
    b
}

/// Offset of an animation archive's duration.
const DURATION_AT: usize = 19;

/// An animation archive of one track held at rest from ratio 0 to 1 over
/// `duration` seconds.
fn ozz_animation(duration: f32) -> Vec<u8> {
    let mut b = ozz_header("ozz-animation", 7);
    assert_eq!(b.len(), DURATION_AT);
    b.extend_from_slice(&duration.to_le_bytes());
    b.extend_from_slice(&1u32.to_le_bytes()); // tracks (padded to 4)
                                              // Name length, timepoints, 8 keys of each kind, no iframe data.
    for c in [0u32, 2, 8, 8, 8, 0, 0, 0, 0, 0, 0] {
        b.extend_from_slice(&c.to_le_bytes());
    }
    for t in [0.0f32, 1.0] {
        b.extend_from_slice(&t.to_le_bytes());
    }
    // Identity rotation: largest component w (index 3), the others at the
    // quantised zero.
    let mid = 16384u64;
    let q = 3 | (mid << 3) | (mid << 18) | (mid << 33);
    let values = [
        [0u16; 3],
        [q as u16, (q >> 16) as u16, (q >> 32) as u16],
        [0x3c00; 3],
    ];
    for value in values {
        b.extend_from_slice(&[0, 0, 0, 0, 1, 1, 1, 1]); // timepoint of each key
        for p in [0u16, 0, 0, 0, 4, 4, 4, 4] {
            b.extend_from_slice(&p.to_le_bytes()); // previous-key offsets
        }
        b.extend_from_slice(&1.0f32.to_le_bytes()); // iframe interval
        for _ in 0..8 {
            for v in value {
                b.extend_from_slice(&v.to_le_bytes());
            }
        }
    }
    b
}

fn ozz_opts(budget: usize) -> OzzOptions {
    OzzOptions {
        memory_budget: budget,
        ..OzzOptions::default()
    }
}

#[test]
fn a_patched_ozz_duration_is_refused_at_its_offset() {
    let (skel, map) = ozz::skeleton_from_slice(&ozz_skeleton(), Path::new("s.ozz")).unwrap();
    let good = ozz_animation(1.0);
    let clip = ozz::animation_from_slice(&good, Path::new("a.ozz"), &skel, &map, &ozz_opts(SMALL))
        .unwrap();
    assert_eq!(clip.frame_count(), 31);
    // One day and a half at 30 Hz: 3.9 million frames, 593 MiB.
    let patched = ozz_animation(129_600.0);
    for budget in [DEFAULT_MEMORY_BUDGET, SMALL] {
        assert_refused(
            || ozz::animation_from_slice(&patched, Path::new("a.ozz"), &skel, &map, &ozz_opts(budget)),
            &Location::Byte(DURATION_AT as u64),
            &[
                "clip \"a\": duration 129600 s at 30 Hz, 3,888,001 frames × 1 joint (1 SoA block of 160 bytes) = 593 MiB",
                &budget_text(budget),
            ],
        );
    }
}

#[test]
fn the_animations_of_one_ozz_skeleton_share_one_budget() {
    let dir = std::env::temp_dir().join(format!("sinew-budget-ozz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let skeleton = dir.join("s.ozz");
    std::fs::write(&skeleton, ozz_skeleton()).unwrap();
    // 19,651 frames of 160 bytes: 3 MiB each, two of them over a 4 MiB budget.
    let anims: Vec<PathBuf> = (0..3)
        .map(|i| {
            let p = dir.join(format!("a{i}.ozz"));
            std::fs::write(&p, ozz_animation(655.0)).unwrap();
            p
        })
        .collect();
    let refs: Vec<&Path> = anims.iter().map(PathBuf::as_path).collect();
    let e = assert_refused(
        || ozz::load(&skeleton, &refs, &ozz_opts(4 * MIB)),
        &Location::Byte(DURATION_AT as u64),
        &["19,651 frames", "exceeds the memory budget of 4 MiB"],
    );
    assert_eq!(e.file, anims[1], "the second animation does not fit: {e}");
    // One alone fits, and the dispatcher passes its budget on.
    assert!(ozz::load(&skeleton, &refs[..1], &ozz_opts(4 * MIB)).is_ok());
    let mut paths = vec![skeleton.clone()];
    paths.extend(anims.iter().cloned());
    let opts = LoadOptions {
        memory_budget: 4 * MIB,
        ..LoadOptions::default()
    };
    let e = load_files(&paths, &opts).err().unwrap();
    assert_eq!(e.file, anims[1], "{e}");
    assert_eq!(
        load_files(&paths, &LoadOptions::default()).unwrap()[0]
            .clips
            .len(),
        3
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn an_allocation_the_system_cannot_serve_is_an_error() {
    // With no budget to stop it, a duration near f32::MAX asks for more
    // than any address space: the allocation fails and says so.
    let (skel, map) = ozz::skeleton_from_slice(&ozz_skeleton(), Path::new("s.ozz")).unwrap();
    let r = ozz::animation_from_slice(
        &ozz_animation(1.0e15),
        Path::new("a.ozz"),
        &skel,
        &map,
        &ozz_opts(usize::MAX),
    );
    let e = r.err().expect("no system serves exabytes");
    assert_eq!(e.location, Location::File, "{e}");
    assert!(e.message.contains("cannot allocate"), "{e}");
}

// ---------------------------------------------------------------------------
// Real files
// ---------------------------------------------------------------------------

#[test]
fn real_files_load_within_the_default_budget() {
    let Some(data) = support::shared_data("") else {
        return;
    };
    let gltf = support::files_with_extension(&data.join("gltf"), &["gltf", "glb"]);
    assert!(!gltf.is_empty(), "no glTF files under {}", data.display());
    for path in &gltf {
        let r = load_files(std::slice::from_ref(path), &LoadOptions::default());
        let assets = r.unwrap_or_else(|e| panic!("{e}"));
        assert!(!assets[0].clips.is_empty(), "{}", path.display());
    }
    let ozz_dir = data.join("ozz");
    for (skeleton, animation) in [
        ("pab_skeleton.ozz", "pab_crossarms.ozz"),
        ("ruby_skeleton.ozz", "ruby_animation.ozz"),
        ("baked_skeleton.ozz", "baked_animation.ozz"),
    ] {
        let paths = [ozz_dir.join(skeleton), ozz_dir.join(animation)];
        let assets = load_files(&paths, &LoadOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(assets[0].clips.len(), 1);
    }
    let cmu = data.join("bvh/cmu/daz-friendly");
    let bvh = support::files_with_extension(&cmu, &["bvh"]);
    for path in bvh.iter().take(3) {
        load_files(std::slice::from_ref(path), &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{e}"));
    }
    // The budget counts meshes too: the largest character does not fit in
    // one MiB.
    let human = data.join("gltf/makehuman-cc0/makehuman_default163_4infl.glb");
    let tight = LoadOptions {
        memory_budget: MIB,
        ..LoadOptions::default()
    };
    let e = load_files(&[human], &tight)
        .err()
        .expect("a 13,380-vertex mesh needs more than 1 MiB");
    assert!(
        e.message.contains("exceeds the memory budget of 1 MiB"),
        "{e}"
    );
}
