//! BVH importer: validity (every class of bad input gives the right line and
//! message), correctness against hand-computed values and an independent f64
//! forward kinematics over real CMU clips, the whole data set, and fuzzing
//! (random bytes and mutated valid files never panic).

#[path = "../support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use sinew_core::fk::{self, FkJob};
use sinew_core::soa::get_joint;
use sinew_core::{Mat4, Quat, Vec3, MAX_JOINTS};
use sinew_std::import::bvh::{self, BvhOptions};
use sinew_std::{Asset, ImportError, Location};

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

const UNIT: BvhOptions = BvhOptions {
    scale: 1.0,
    end_sites: true,
    memory_budget: sinew_std::import::DEFAULT_MEMORY_BUDGET,
};

/// The default options with another scale.
fn scaled(scale: f32) -> BvhOptions {
    BvhOptions {
        scale,
        ..BvhOptions::default()
    }
}

fn data_dir() -> Option<PathBuf> {
    support::shared_data("bvh")
}

fn bvh_files(dir: &Path) -> Vec<PathBuf> {
    support::files_with_extension(dir, &["bvh"])
}

fn import(text: &str, opts: &BvhOptions) -> Result<Asset, ImportError> {
    bvh::from_slice(text.as_bytes(), Path::new("test.bvh"), opts)
}

fn import_ok(text: &str, opts: &BvhOptions) -> Asset {
    import(text, opts).unwrap_or_else(|e| panic!("{e}\n--- input ---\n{text}"))
}

/// Model-space positions of every joint at frame `f`, indexed in file order.
fn model_positions(asset: &Asset, f: usize) -> Vec<Vec3> {
    let skel = asset.skeleton.view();
    let clip = asset.clips[0].view();
    let local = clip.frame(f).expect("frame in range");
    let mut models = vec![Mat4::IDENTITY; skel.joint_count()];
    fk::local_to_model(&FkJob::new(&skel, local), &mut models).unwrap();
    asset
        .joint_map
        .iter()
        .map(|&k| models[k as usize].translation())
        .collect()
}

/// Local rotation of file joint `j` at frame `f`.
fn local_rotation(asset: &Asset, f: usize, j: usize) -> Quat {
    let k = asset.joint_map[j] as usize;
    get_joint(asset.clips[0].view().frame(f).unwrap(), k)
        .unwrap()
        .rotation
}

fn assert_vec(got: Vec3, want: [f32; 3], tol: f32, what: &str) {
    let d = (got.x - want[0])
        .abs()
        .max((got.y - want[1]).abs())
        .max((got.z - want[2]).abs());
    assert!(d <= tol, "{what}: got {got:?}, want {want:?}");
}

/// Asserts the error is at `line` and its message contains every one of `words`.
fn expect_err(text: &str, line: usize, words: &[&str]) {
    let e = match import(text, &UNIT) {
        Ok(_) => panic!("expected an error at line {line} ({words:?}), got Ok\n{text}"),
        Err(e) => e,
    };
    assert_eq!(
        e.location,
        Location::Line(line),
        "{e}\n--- input ---\n{text}"
    );
    for w in words {
        assert!(e.message.contains(w), "message {:?} lacks {w:?}", e.message);
    }
    assert_eq!(e.file, PathBuf::from("test.bvh"));
    assert!(
        e.to_string().starts_with(&format!("test.bvh:{line}: ")),
        "{e}"
    );
}

// ---------------------------------------------------------------------------
// A small valid file used by the validity tests (line numbers matter).
// ---------------------------------------------------------------------------

const SMALL: &str = "HIERARCHY
ROOT hips
{
  OFFSET 1 2 3
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT spine
  {
    OFFSET 0 5 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    End Site
    {
      OFFSET 0 1 0
    }
  }
}
MOTION
Frames: 2
Frame Time: 0.5
0 0 0 0 0 0 0 0 0
1 2 3 10 20 30 40 50 60
";

/// `SMALL` with line `n` (1-based) replaced.
fn with_line(n: usize, new: &str) -> String {
    SMALL
        .lines()
        .enumerate()
        .map(|(i, l)| if i + 1 == n { new } else { l })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// `SMALL` without line `n`.
fn without_line(n: usize) -> String {
    SMALL
        .lines()
        .enumerate()
        .filter(|&(i, _)| i + 1 != n)
        .map(|(_, l)| l)
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

// ---------------------------------------------------------------------------
// Validity: one broken file per error class
// ---------------------------------------------------------------------------

#[test]
fn small_file_is_valid() {
    let a = import_ok(SMALL, &UNIT);
    assert_eq!(a.skeleton.joint_count(), 3);
    assert_eq!(a.clips.len(), 1);
    assert_eq!(a.clips[0].frame_count(), 2);
    assert_eq!(a.clips[0].sample_rate(), 2.0);
    assert_eq!(a.clips[0].name, "test");
    assert_eq!(a.units, "file units");
    assert!(a.warnings.is_empty());
}

#[test]
fn truncated_files() {
    // Cut inside the hierarchy: the error is at the last line present.
    let cut: String = SMALL.lines().take(9).collect::<Vec<_>>().join("\n");
    expect_err(
        &cut,
        9,
        &["unexpected end of file", "joint 'spine'", "truncated"],
    );
    // Cut inside CHANNELS.
    let cut = &SMALL[..SMALL.find("CHANNELS 3 Zrotation").unwrap() + 20];
    expect_err(
        cut,
        9,
        &["unexpected end of file", "CHANNELS says 3 but lists 1"],
    );
    // Cut inside OFFSET.
    let cut = &SMALL[..SMALL.find("OFFSET 0 5").unwrap() + 8];
    expect_err(cut, 8, &["unexpected end of file", "OFFSET value"]);
    // Cut after MOTION / after Frames:.
    let cut: String = SMALL.lines().take(16).collect::<Vec<_>>().join("\n");
    expect_err(&cut, 16, &["unexpected end of file", "Frames:"]);
    let cut: String = SMALL.lines().take(17).collect::<Vec<_>>().join("\n") + "\n";
    expect_err(&cut, 17, &["unexpected end of file", "Frame Time:"]);
    // Cut in the middle of the last motion line.
    let cut = &SMALL[..SMALL.len() - 8];
    expect_err(cut, 20, &["has 7 values, expected 9"]);
    // Empty file.
    expect_err("", 1, &["empty file", "HIERARCHY"]);
    expect_err("  \n\n", 1, &["empty file", "HIERARCHY"]);
}

#[test]
fn missing_keywords() {
    expect_err(&without_line(1), 1, &["missing HIERARCHY", "'ROOT'"]);
    expect_err(&without_line(4), 14, &["missing OFFSET", "joint 'hips'"]);
    expect_err(
        &without_line(12),
        12,
        &["missing OFFSET", "End Site of 'spine'"],
    );
    expect_err(&without_line(9), 13, &["missing CHANNELS", "joint 'spine'"]);
    expect_err(
        &without_line(16),
        16,
        &["expected ROOT or MOTION", "'Frames:'"],
    );
    expect_err(&without_line(17), 17, &["missing 'Frames:'", "'Frame'"]);
    expect_err(&without_line(18), 18, &["missing 'Frame Time:'"]);
    expect_err(&with_line(10, "    End Spot"), 10, &["expected 'End Site'"]);
    expect_err(&with_line(2, "ROOT"), 2, &["ROOT without a name"]);
    expect_err(&with_line(6, "  JOINT"), 6, &["JOINT without a name"]);
    expect_err(
        &with_line(7, "  ("),
        7,
        &["expected '{' after spine", "'('"],
    );
    expect_err(
        &with_line(8, "    OFSET 0 5 0"),
        8,
        &["expected OFFSET, CHANNELS", "'OFSET'"],
    );
    expect_err(
        "HIERARCHY\nMOTION\nFrames: 1\nFrame Time: 1\n",
        2,
        &["no ROOT"],
    );
    expect_err(
        "HIERARCHY\n",
        1,
        &["unexpected end of file", "missing ROOT"],
    );
    let no_motion: String = SMALL.lines().take(15).collect::<Vec<_>>().join("\n") + "\n";
    expect_err(
        &no_motion,
        15,
        &["unexpected end of file", "missing MOTION"],
    );
}

#[test]
fn non_numeric_values() {
    expect_err(
        &with_line(4, "  OFFSET 1 two 3"),
        4,
        &["OFFSET value 'two' is not a number"],
    );
    expect_err(
        &with_line(20, "1 2 3 10 20 3O 40 50 60"),
        20,
        &["motion value '3O' is not a number"],
    );
    expect_err(
        &with_line(19, "0 0 0 0 0 0 0 0 0x1"),
        19,
        &["'0x1' is not a number"],
    );
    expect_err(
        &with_line(17, "Frames: two"),
        17,
        &["Frames: value 'two'", "integer"],
    );
    expect_err(
        &with_line(17, "Frames: -2"),
        17,
        &["Frames: value '-2'", "integer"],
    );
    expect_err(
        &with_line(18, "Frame Time: fast"),
        18,
        &["Frame Time 'fast' is not a number"],
    );
    expect_err(
        &with_line(5, "  CHANNELS six Xposition"),
        5,
        &["CHANNELS count 'six'"],
    );
}

#[test]
fn nan_and_infinite_values() {
    expect_err(
        &with_line(20, "1 2 nan 10 20 30 40 50 60"),
        20,
        &["'nan' is NaN or infinite"],
    );
    expect_err(
        &with_line(20, "1 2 3 10 -inf 30 40 50 60"),
        20,
        &["'-inf' is NaN or infinite"],
    );
    expect_err(
        &with_line(19, "0 0 0 0 0 1e999 0 0 0"),
        19,
        &["'1e999' is NaN or infinite"],
    );
    // Finite in f64 but not in f32.
    expect_err(
        &with_line(19, "0 0 0 0 0 1e39 0 0 0"),
        19,
        &["'1e39' is NaN or infinite"],
    );
    expect_err(
        &with_line(19, "0 0 0 0 0 0 0 0 -1.#IND"),
        19,
        &["'-1.#IND' is NaN or infinite"],
    );
    expect_err(
        &with_line(8, "    OFFSET 0 Infinity 0"),
        8,
        &["OFFSET value 'Infinity' is NaN or infinite"],
    );
    expect_err(
        &with_line(18, "Frame Time: NaN"),
        18,
        &["Frame Time 'NaN' is NaN or infinite"],
    );
}

#[test]
fn wrong_value_counts() {
    expect_err(
        &with_line(19, "0 0 0 0 0 0 0 0"),
        19,
        &["has 8 values, expected 9"],
    );
    expect_err(
        &with_line(20, "1 2 3 10 20 30 40 50 60 70"),
        20,
        &["has 10 values, expected 9"],
    );
}

#[test]
fn frame_count_mismatch() {
    let fewer = with_line(17, "Frames: 3");
    expect_err(
        &fewer,
        17,
        &[
            "'Frames: 3'",
            "ends after 2 frame lines",
            "frame count mismatch",
        ],
    );
    let more = with_line(17, "Frames: 1");
    expect_err(
        &more,
        20,
        &["more frame lines than 'Frames: 1'", "frame count mismatch"],
    );
    // Blank lines do not count as frames; trailing ones are fine.
    let blanks = SMALL.replace("0 0 0 0 0 0 0 0 0\n", "0 0 0 0 0 0 0 0 0\n\n  \t\n") + "\n\n";
    assert_eq!(import_ok(&blanks, &UNIT).clips[0].frame_count(), 2);
}

#[test]
fn bad_channels() {
    expect_err(
        &with_line(9, "    CHANNELS 3 Zrotation Wrotation Yrotation"),
        9,
        &["bad channel name 'Wrotation'"],
    );
    expect_err(
        &with_line(9, "    CHANNELS 3 Zrotation Xrotation Xscale"),
        9,
        &["bad channel name 'Xscale'"],
    );
    // Fewer names than the count: the next keyword is not a channel.
    expect_err(
        &with_line(9, "    CHANNELS 4 Zrotation Xrotation Yrotation"),
        9,
        &["CHANNELS says 4 but lists 3 channel names"],
    );
    expect_err(
        &with_line(
            5,
            "  CHANNELS 6 Xposition Yposition Xposition Zrotation Xrotation Yrotation",
        ),
        5,
        &["channel Xposition listed twice"],
    );
    expect_err(
        &with_line(13, "      CHANNELS 1 Xrotation\n    }"),
        13,
        &["End Site cannot have CHANNELS"],
    );
    expect_err(
        &with_line(
            9,
            "    CHANNELS 3 Zrotation Xrotation Yrotation\n    CHANNELS 0",
        ),
        10,
        &["second CHANNELS", "joint 'spine'"],
    );
    expect_err(
        &with_line(8, "    OFFSET 0 5 0\n    OFFSET 0 5 0"),
        9,
        &["second OFFSET"],
    );
}

/// A ROOT with `children` joints (each `CHANNELS 0`), flat or nested.
fn many_joints(children: usize, nested: bool) -> String {
    let mut s = String::from(
        "HIERARCHY\nROOT r\n{\nOFFSET 0 0 0\nCHANNELS 3 Xrotation Yrotation Zrotation\n",
    );
    for i in 0..children {
        s += &format!("JOINT j{i}\n{{\nOFFSET 0 1 0\nCHANNELS 0\n");
        if !nested {
            s += "}\n";
        }
    }
    if nested {
        s += &"}\n".repeat(children);
    }
    s += "}\nMOTION\nFrames: 1\nFrame Time: 0.1\n0 0 90\n";
    s
}

#[test]
fn too_many_joints() {
    // Exactly MAX_JOINTS (root + 1023) is fine, flat and nested.
    for nested in [false, true] {
        let a = import_ok(&many_joints(MAX_JOINTS - 1, nested), &UNIT);
        assert_eq!(a.skeleton.joint_count(), MAX_JOINTS);
        if nested {
            let p = model_positions(&a, 0);
            // Rz(90) on the root turns the +Y chain to -X.
            assert_vec(
                p[MAX_JOINTS - 1],
                [-(MAX_JOINTS as f32 - 1.0), 0.0, 0.0],
                1e-2,
                "chain tip",
            );
        }
    }
    // One more: the error names the line of the joint past the limit.
    // Flat: joint i's keyword is on line 6 + 5 i; nested: 6 + 4 i.
    let i = MAX_JOINTS - 1;
    expect_err(
        &many_joints(MAX_JOINTS, false),
        6 + 5 * i,
        &["more than 1024 joints"],
    );
    expect_err(
        &many_joints(MAX_JOINTS, true),
        6 + 4 * i,
        &["more than 1024 joints"],
    );
    // Far deeper than the limit: still an error, not a stack overflow.
    let deep = many_joints(100_000, true);
    expect_err(&deep, 6 + 4 * i, &["more than 1024 joints"]);
    // An End Site counts as a joint.
    let with_end = many_joints(MAX_JOINTS - 1, false).replacen(
        "CHANNELS 3 Xrotation Yrotation Zrotation\n",
        "CHANNELS 3 Xrotation Yrotation Zrotation\nEnd Site\n{\nOFFSET 0 0 1\n}\n",
        1,
    );
    expect_err(
        &with_end,
        6 + 4 + 5 * (i - 1),
        &["more than 1024 joints", "End Sites included"],
    );
    // Skipped, it does not: the same file imports with MAX_JOINTS joints,
    // and one joint more names the limit "End Sites skipped".
    let skip = BvhOptions {
        end_sites: false,
        ..UNIT
    };
    assert_eq!(
        import_ok(&with_end, &skip).skeleton.joint_count(),
        MAX_JOINTS
    );
    let over = many_joints(MAX_JOINTS, false).replacen(
        "CHANNELS 3 Xrotation Yrotation Zrotation\n",
        "CHANNELS 3 Xrotation Yrotation Zrotation\nEnd Site\n{\nOFFSET 0 0 1\n}\n",
        1,
    );
    let Err(e) = import(&over, &skip) else {
        panic!("one joint over the limit imported")
    };
    assert_eq!(e.location, Location::Line(6 + 4 + 5 * i));
    assert!(
        e.message.contains("more than 1024 joints") && e.message.contains("End Sites skipped"),
        "{e}"
    );
}

#[test]
fn unbalanced_braces() {
    // An extra '}' closes the root early and then stands alone.
    expect_err(
        &with_line(15, "}\n}"),
        16,
        &["unbalanced braces", "'}' without a matching '{'"],
    );
    // A missing '}' leaves MOTION inside the root.
    expect_err(
        &without_line(15),
        15,
        &[
            "unbalanced braces",
            "MOTION inside joint 'hips' opened at line 2",
            "missing '}'",
        ],
    );
    // A missing '}' before another ROOT.
    let two = SMALL.replacen(
        "}\nMOTION",
        "ROOT other\n{\nOFFSET 0 0 0\nCHANNELS 0\n}\nMOTION",
        1,
    );
    expect_err(&two, 15, &["unbalanced braces", "ROOT inside joint 'hips'"]);
    // A stray '{'.
    expect_err(
        &with_line(8, "    {"),
        8,
        &["unbalanced braces", "'{' without a JOINT"],
    );
    // End of file with braces still open.
    let open: String = SMALL.lines().take(14).collect::<Vec<_>>().join("\n") + "\n";
    expect_err(
        &open,
        14,
        &[
            "unexpected end of file inside joint 'hips' opened at line 2",
            "missing '}'",
        ],
    );
}

#[test]
fn bad_frame_time() {
    expect_err(
        &with_line(18, "Frame Time: 0"),
        18,
        &["Frame Time must be a positive number", "'0'"],
    );
    expect_err(
        &with_line(18, "Frame Time: -0.01"),
        18,
        &["Frame Time must be a positive number", "'-0.01'"],
    );
    expect_err(
        &with_line(18, "Frame Time: 1e-300"),
        18,
        &["Frame Time must be a positive number"],
    );
}

#[test]
fn bad_options_and_files() {
    for scale in [0.0, -1.0, f32::NAN, f32::INFINITY] {
        let e = import(SMALL, &scaled(scale)).err().expect("bad scale");
        assert_eq!(e.location, Location::File);
        assert!(e.message.contains("scale"), "{e}");
    }
    let e = bvh::load(Path::new("/nonexistent/dir/x.bvh"), &BvhOptions::default())
        .err()
        .expect("missing file");
    assert_eq!(e.location, Location::File);
    assert!(e.message.contains("cannot read"), "{e}");
    // Offsets that overflow only after scaling.
    let e = import(&with_line(4, "  OFFSET 3e38 0 0"), &scaled(10.0))
        .err()
        .expect("overflow");
    assert_eq!(e.location, Location::Line(4));
    assert!(e.message.contains("overflows after scaling"), "{e}");
    let e = import(&with_line(20, "3e38 2 3 10 20 30 40 50 60"), &scaled(10.0))
        .err()
        .expect("overflow");
    assert_eq!(e.location, Location::Line(20));
    assert!(e.message.contains("overflows after scaling"), "{e}");
}

#[test]
fn load_reads_files_and_replaces_invalid_utf8() {
    let dir = std::env::temp_dir().join(format!("sinew-bvh-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("latin1.bvh");
    // "hüfte" in Latin-1 (0xfc): not UTF-8.
    let bytes: Vec<u8> = SMALL
        .replacen("hips", "h#fte", 1)
        .bytes()
        .map(|b| if b == b'#' { 0xfc } else { b })
        .collect();
    std::fs::write(&path, bytes).unwrap();
    let a = bvh::load(&path, &BvhOptions::default()).unwrap();
    assert_eq!(a.skeleton.view().joint_name(0), Some("h\u{fffd}fte"));
    assert_eq!(a.clips[0].name, "latin1");
    assert_eq!(a.source, path);
    assert!(
        a.warnings.iter().any(|w| w.contains("not valid UTF-8")),
        "{:?}",
        a.warnings
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A rest pose far from human size at the scale given is reported (the
/// file unit is probably not the one the scale assumes); at a scale that
/// makes it plausible, or at scale 1 (file units, no claim), it is not.
#[test]
fn implausible_sizes_are_reported() {
    let a = import_ok(SMALL, &BvhOptions::default());
    let size: Vec<_> = a
        .warnings
        .iter()
        .filter(|w| w.starts_with("the rest pose spans "))
        .collect();
    assert_eq!(size.len(), 1, "{:?}", a.warnings);
    assert!(size[0].contains("0.01 m per file unit"), "{}", size[0]);
    assert!(import_ok(SMALL, &UNIT).warnings.is_empty());
    assert!(import_ok(SMALL, &scaled(0.2)).warnings.is_empty());
    let huge = import_ok(SMALL, &scaled(10.0));
    assert!(
        huge.warnings[0].starts_with("the rest pose spans "),
        "{:?}",
        huge.warnings
    );
}

#[test]
fn frames_zero_and_no_channels() {
    let a = import_ok(
        &(with_line(17, "Frames: 0")
            .lines()
            .take(18)
            .collect::<Vec<_>>()
            .join("\n")),
        &UNIT,
    );
    assert!(a.clips.is_empty());
    assert_eq!(a.skeleton.joint_count(), 3);
    assert!(a.warnings[0].contains("Frames: 0"), "{:?}", a.warnings);

    let text = "HIERARCHY\nROOT a\n{\nOFFSET 1 2 3\nCHANNELS 0\n}\nMOTION\nFrames: 4\nFrame Time: 0.25\n\n";
    let a = import_ok(text, &UNIT);
    assert_eq!(a.clips[0].frame_count(), 4);
    assert_vec(model_positions(&a, 3)[0], [1.0, 2.0, 3.0], 0.0, "rest");
    expect_err(&format!("{text}1 2\n"), 11, &["has 2 values, expected 0"]);
    expect_err(
        &text.replace("Frames: 4", "Frames: 100000000"),
        8,
        &["too many"],
    );
}

// ---------------------------------------------------------------------------
// Correctness on hand-written files (values computed by hand)
// ---------------------------------------------------------------------------

/// A root at (10, 20, 30) rotated by 90° about each axis in the given channel
/// order, with an End Site at offset (1, 2, 3).
fn order_file(order: &str) -> String {
    let [a, b, c]: [char; 3] = order.chars().collect::<Vec<_>>().try_into().unwrap();
    format!(
        "HIERARCHY\nROOT r\n{{\n  OFFSET 0 0 0\n  CHANNELS 6 Xposition Yposition Zposition {a}rotation {b}rotation {c}rotation\n  End Site\n  {{\n    OFFSET 1 2 3\n  }}\n}}\nMOTION\nFrames: 1\nFrame Time: 0.5\n10 20 30 90 90 90\n"
    )
}

/// Tip of `order_file(order)`: (10, 20, 30) + R1 R2 R3 (1, 2, 3), worked by hand
/// with Rx(90): (x, y, z) -> (x, -z, y), Ry(90): -> (z, y, -x), Rz(90): -> (-y, x, z),
/// applying R3 first.
const ORDER_TIPS: [(&str, [f32; 3]); 6] = [
    // Z: (-2, 1, 3), Y: (3, 1, 2), X: (3, -2, 1)
    ("XYZ", [13.0, 18.0, 31.0]),
    // Y: (3, 2, -1), Z: (-2, 3, -1), X: (-2, 1, 3)
    ("XZY", [8.0, 21.0, 33.0]),
    // Z: (-2, 1, 3), X: (-2, -3, 1), Y: (1, -3, 2)
    ("YXZ", [11.0, 17.0, 32.0]),
    // X: (1, -3, 2), Z: (3, 1, 2), Y: (2, 1, -3)
    ("YZX", [12.0, 21.0, 27.0]),
    // Y: (3, 2, -1), X: (3, 1, 2), Z: (-1, 3, 2)
    ("ZXY", [9.0, 23.0, 32.0]),
    // X: (1, -3, 2), Y: (2, -3, -1), Z: (3, 2, -1)
    ("ZYX", [13.0, 22.0, 29.0]),
];

#[test]
fn every_rotation_order() {
    for (order, tip) in ORDER_TIPS {
        let a = import_ok(&order_file(order), &UNIT);
        assert_eq!(a.skeleton.joint_count(), 2, "{order}");
        assert_eq!(a.skeleton.view().joint_name(1), Some("r_end"));
        let p = model_positions(&a, 0);
        assert_vec(p[0], [10.0, 20.0, 30.0], 1e-5, order);
        assert_vec(p[1], tip, 1e-5, order);
        let q = local_rotation(&a, 0, 0);
        assert!((q.length() - 1.0).abs() < 1e-6, "{order}: not normalised");
    }
}

#[test]
fn values_follow_channel_order() {
    // Only the second-listed channel (X) is non-zero: Rx(90) (1, 2, 3) = (1, -3, 2).
    let text = order_file("YXZ").replace("90 90 90", "0 90 0");
    let p = model_positions(&import_ok(&text, &UNIT), 0);
    assert_vec(p[1], [11.0, 17.0, 32.0], 1e-5, "Rx only");
    // A repeated rotation channel is one more factor: Z 45 then Z 45 = Z 90.
    let text = order_file("ZZX").replace("90 90 90", "45 45 0");
    let p = model_positions(&import_ok(&text, &UNIT), 0);
    assert_vec(p[1], [8.0, 21.0, 33.0], 1e-5, "Z twice");
}

const MIXED: &str = "HIERARCHY
ROOT hips
{
  OFFSET 1 1 1
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT spine
  {
    OFFSET 0 5 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    JOINT slider
    {
      OFFSET 0 1 0
      CHANNELS 3 Xposition Yposition Zposition
      End Site
      {
        OFFSET 0 0 2
      }
    }
    JOINT lift
    {
      OFFSET 4 0 0
      CHANNELS 2 Yposition Xrotation
    }
  }
}
MOTION
Frames: 2
Frame Time: 0.1
0 0 0 0 0 0   0 0 0   7 8 9   0 0
1 2 3 90 0 0  0 0 90  0 0 0   6 90
";

/// `a`'s joint names in skeleton order.
fn joint_names(a: &Asset) -> Vec<String> {
    let skel = a.skeleton.view();
    (0..skel.joint_count())
        .map(|j| skel.joint_name(j).unwrap().to_owned())
        .collect()
}

/// Imports `text` with and without End Sites and checks that skipping them
/// keeps every other joint: the same names, parents, rest pose and key
/// values (bit for bit), and the same model-space positions at every frame.
/// Returns the asset without End Sites.
fn check_end_sites_skipped(text: &str, opts: &BvhOptions) -> Asset {
    let full = import_ok(text, opts);
    let lean = import_ok(
        text,
        &BvhOptions {
            end_sites: false,
            ..*opts
        },
    );
    let (fs, ls) = (full.skeleton.view(), lean.skeleton.view());
    let kept: Vec<usize> = (0..fs.joint_count())
        .filter(|&j| !fs.joint_name(j).unwrap().ends_with("_end"))
        .collect();
    assert_eq!(ls.joint_count(), kept.len());
    assert_eq!(lean.joint_map.len(), kept.len());
    let names = joint_names(&lean);
    for (l, &f) in kept.iter().enumerate() {
        assert_eq!(names[l], fs.joint_name(f).unwrap());
        let parent_name = |s: &sinew_core::Skeleton<'_>, j: usize| {
            s.parent(j).map(|p| s.joint_name(p).unwrap().to_owned())
        };
        assert_eq!(parent_name(&ls, l), parent_name(&fs, f), "{}", names[l]);
        assert_eq!(get_joint(ls.rest_pose(), l), get_joint(fs.rest_pose(), f));
    }
    assert_eq!(lean.clips.len(), full.clips.len());
    if let (Some(fc), Some(lc)) = (full.clips.first(), lean.clips.first()) {
        assert_eq!(lc.frame_count(), fc.frame_count());
        assert_eq!(lc.sample_rate(), fc.sample_rate());
        for f in 0..fc.frame_count() {
            let (fk, lk) = (fc.view().frame(f).unwrap(), lc.view().frame(f).unwrap());
            for (l, &j) in kept.iter().enumerate() {
                assert_eq!(
                    get_joint(lk, l),
                    get_joint(fk, j),
                    "frame {f} joint {}",
                    names[l]
                );
            }
            // Through `joint_map`, file joint by file joint.
            let (fp, lp) = (model_positions(&full, f), model_positions(&lean, f));
            let full_file: Vec<Vec3> = full
                .joint_map
                .iter()
                .zip(&fp)
                .filter(|(&k, _)| !fs.joint_name(k as usize).unwrap().ends_with("_end"))
                .map(|(_, p)| *p)
                .collect();
            assert_eq!(lp, full_file, "frame {f}");
        }
    }
    lean
}

#[test]
fn end_sites_can_be_skipped() {
    let a = check_end_sites_skipped(MIXED, &UNIT);
    assert_eq!(joint_names(&a), ["hips", "spine", "slider", "lift"]);
    assert_eq!(a.joint_map, [0, 1, 2, 3]);
    let a = check_end_sites_skipped(SMALL, &UNIT);
    assert_eq!(joint_names(&a), ["hips", "spine"]);
    // Nested joints whose End Sites sit between siblings, and two roots.
    let text = "HIERARCHY
ROOT a
{
  OFFSET 0 0 0
  CHANNELS 3 Zrotation Xrotation Yrotation
  JOINT b
  {
    OFFSET 0 1 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    End Site
    {
      OFFSET 0 1 0
    }
  }
  JOINT c
  {
    OFFSET 1 0 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    JOINT d
    {
      OFFSET 1 0 0
      CHANNELS 3 Zrotation Xrotation Yrotation
      End Site
      {
        OFFSET 1 0 0
      }
    }
  }
}
ROOT e
{
  OFFSET 5 0 0
  CHANNELS 3 Xposition Yposition Zposition
  End Site
  {
    OFFSET 0 0 1
  }
}
MOTION
Frames: 3
Frame Time: 0.1
0 0 0 10 0 0 0 20 0 0 0 30 1 2 3
90 0 0 0 45 0 0 0 45 30 0 0 4 5 6
0 90 0 0 0 90 10 20 30 0 0 0 7 8 9
";
    let a = check_end_sites_skipped(text, &UNIT);
    assert_eq!(joint_names(&a), ["a", "b", "c", "d", "e"]);
    let skel = a.skeleton.view();
    let parents: Vec<Option<usize>> = (0..5).map(|j| skel.parent(j)).collect();
    assert_eq!(parents, [None, Some(0), Some(0), Some(2), None]);
}

#[test]
fn three_and_six_channels_and_positions_on_non_roots() {
    let a = import_ok(MIXED, &UNIT);
    let names: Vec<_> = (0..a.skeleton.joint_count())
        .map(|j| a.skeleton.view().joint_name(j).unwrap().to_owned())
        .collect();
    assert_eq!(names, ["hips", "spine", "slider", "slider_end", "lift"]);
    assert_eq!(a.joint_map, [0, 1, 2, 3, 4]);
    assert_eq!(a.clips[0].frame_count(), 2);
    assert!((a.clips[0].sample_rate() - 10.0).abs() < 1e-5);

    // Rest pose: the OFFSETs.
    let rest = a.skeleton.view().rest_pose();
    assert_vec(
        get_joint(rest, 0).unwrap().translation,
        [1.0, 1.0, 1.0],
        0.0,
        "rest hips",
    );
    assert_vec(
        get_joint(rest, 2).unwrap().translation,
        [0.0, 1.0, 0.0],
        0.0,
        "rest slider",
    );

    // Frame 0: position channels replace the OFFSETs (hips -> origin, slider -> (7, 8, 9)).
    let p = model_positions(&a, 0);
    assert_vec(p[0], [0.0, 0.0, 0.0], 1e-6, "f0 hips");
    assert_vec(p[1], [0.0, 5.0, 0.0], 1e-6, "f0 spine");
    assert_vec(p[2], [7.0, 13.0, 9.0], 1e-6, "f0 slider");
    assert_vec(p[3], [7.0, 13.0, 11.0], 1e-6, "f0 slider_end");
    assert_vec(
        p[4],
        [4.0, 5.0, 0.0],
        1e-6,
        "f0 lift (Yposition 0 replaces only y)",
    );

    // Frame 1: hips at (1, 2, 3) turned Rz(90); spine = (1,2,3) + Rz(90)(0,5,0) = (-4, 2, 3),
    // turned Rz(90) Ry(90); slider at the spine (positions 0 0 0); its end:
    // Ry(90)(0,0,2) = (2,0,0), Rz(90)(2,0,0) = (0,2,0) -> (-4, 4, 3).
    // lift: local (4, 6, 0) -> Ry(90): (0, 6, -4) -> Rz(90): (-6, 0, -4) -> (-10, 2, -1).
    let p = model_positions(&a, 1);
    assert_vec(p[0], [1.0, 2.0, 3.0], 1e-5, "f1 hips");
    assert_vec(p[1], [-4.0, 2.0, 3.0], 1e-5, "f1 spine");
    assert_vec(p[2], [-4.0, 2.0, 3.0], 1e-5, "f1 slider");
    assert_vec(p[3], [-4.0, 4.0, 3.0], 1e-5, "f1 slider_end");
    assert_vec(p[4], [-10.0, 2.0, -1.0], 1e-5, "f1 lift");

    // Scaled import: every length times 0.01, rotations unchanged, units metres.
    let m = import_ok(MIXED, &BvhOptions::default());
    assert_eq!(m.units, "metres");
    let pm = model_positions(&m, 1);
    for (j, (x, y)) in p.iter().zip(&pm).enumerate() {
        assert_vec(
            *y,
            [x.x * 0.01, x.y * 0.01, x.z * 0.01],
            1e-6,
            &format!("scaled joint {j}"),
        );
    }
}

#[test]
fn two_roots() {
    let text = "HIERARCHY
ROOT a
{
 OFFSET 1 0 0
 CHANNELS 3 Xrotation Yrotation Zrotation
 End Site
 {
  OFFSET 0 1 0
 }
}
ROOT b
{
 OFFSET 0 0 5
 CHANNELS 1 Yposition
 JOINT c
 {
  OFFSET 2 0 0
  CHANNELS 0
 }
}
MOTION
Frames: 1
Frame Time: 0.04
0 0 90 7
";
    let a = import_ok(text, &UNIT);
    let skel = a.skeleton.view();
    assert_eq!(skel.joint_count(), 4);
    assert_eq!(skel.parent(0), None);
    assert_eq!(skel.parent(2), None);
    assert_eq!(skel.parent(3), Some(2));
    assert!((a.clips[0].sample_rate() - 25.0).abs() < 1e-4);
    let p = model_positions(&a, 0);
    assert_vec(p[0], [1.0, 0.0, 0.0], 1e-6, "a");
    assert_vec(
        p[1],
        [0.0, 0.0, 0.0],
        1e-6,
        "a_end: (1,0,0) + Rz(90)(0,1,0)",
    );
    assert_vec(p[2], [0.0, 7.0, 5.0], 1e-6, "b");
    assert_vec(p[3], [2.0, 7.0, 5.0], 1e-6, "c");
}

#[test]
fn crlf_tabs_and_layout_variants() {
    let lf = import_ok(MIXED, &UNIT);
    let variants = [
        MIXED.replace('\n', "\r\n"),
        MIXED.replace("  ", "\t").replace(' ', "\t"),
        MIXED
            .replace('\n', "\r\n")
            .replace("  ", "\t")
            .replace(' ', " \t "),
        // Braces on the ROOT / JOINT / End Site lines, a BOM, trailing blanks.
        format!(
            "\u{feff}{}\n\n",
            MIXED
                .replace("hips\n{", "hips {")
                .replace("spine\n  {", "spine\t{")
                .replace("End Site\n      {", "End Site {")
        ),
    ];
    for (i, v) in variants.iter().enumerate() {
        let a = import_ok(v, &UNIT);
        assert_eq!(a.clips[0].keys(), lf.clips[0].keys(), "variant {i}");
        assert_eq!(a.skeleton.bytes(), lf.skeleton.bytes(), "variant {i}");
    }
    // Names with spaces are the rest of the line.
    let spaced = MIXED.replace("JOINT slider", "JOINT left slider");
    let a = import_ok(&spaced, &UNIT);
    assert_eq!(a.skeleton.view().joint_name(2), Some("left slider"));
    assert_eq!(a.skeleton.view().joint_name(3), Some("left slider_end"));
    // Number spellings.
    let spelled = MIXED.replace("1 2 3 90 0 0", "+1.0 2e0 .3E1 9.0e+1 -0 0.");
    assert_eq!(
        import_ok(&spelled, &UNIT).clips[0].keys(),
        lf.clips[0].keys()
    );
}

#[test]
fn rotations_normalised_and_continuous() {
    // The root turns about Y through 350, 170, 340, 150, 320 degrees: raw
    // half-angle quaternions change sign several times.
    let mut text = String::from("HIERARCHY\nROOT r\n{\nOFFSET 0 0 0\nCHANNELS 3 Zrotation Yrotation Xrotation\nEnd Site\n{\nOFFSET 0 0 1\n}\n}\nMOTION\nFrames: 8\nFrame Time: 0.1\n");
    for y in [350, 170, 340, 150, 320, 500, -200, 710] {
        text += &format!("3 {y} -4\n");
    }
    let a = import_ok(&text, &UNIT);
    assert_eq!(a.clips[0].frame_count(), 8);
    let q0 = local_rotation(&a, 0, 0);
    assert!(q0.w >= 0.0, "frame 0 not on the w >= 0 hemisphere: {q0:?}");
    for f in 0..8 {
        let q = local_rotation(&a, f, 0);
        assert!((q.length() - 1.0).abs() < 1e-6, "frame {f} not normalised");
        if f > 0 {
            let prev = local_rotation(&a, f - 1, 0);
            assert!(
                prev.dot(q) >= 0.0,
                "frames {} and {f} on opposite hemispheres",
                f - 1
            );
        }
    }
}

/// Noise angles, as CMU files hold them (3.88251e-19 and 2.03217e-16
/// degrees), import as exact zeros instead of the subnormal rotation
/// components their sine products give (down to 6e-39); other rotation
/// components and positions (however small) keep their values.
#[test]
fn noise_rotation_components_import_as_zero() {
    let text = "HIERARCHY\nROOT r\n{\nOFFSET 0 0 0\nCHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation\nEnd Site\n{\nOFFSET 0 0 1\n}\n}\nMOTION\nFrames: 2\nFrame Time: 0.1\n\
        1e-20 5 -3.88251e-19 3.88251e-19 -2.03217e-16 30\n\
        0 5 0 2.03217e-16 3.88251e-19 -2.03217e-16\n";
    let a = import_ok(text, &UNIT);
    let tiny = sinew_core::math::TINY;
    for f in 0..2 {
        let q = local_rotation(&a, f, 0);
        for v in q.to_array() {
            assert!(v == 0.0 || v.abs() >= tiny, "frame {f}: {q:?}");
        }
    }
    // Frame 0: 30 degrees about X survives; the Z and Y noise products are
    // gone; the positions are the file's.
    let q = local_rotation(&a, 0, 0);
    let h = 15f32.to_radians();
    assert!(
        (q.x - h.sin()).abs() < 1e-6 && (q.w - h.cos()).abs() < 1e-6,
        "{q:?}"
    );
    assert_eq!([q.y, q.z], [0.0, 0.0]);
    let t = get_joint(a.clips[0].view().frame(0).unwrap(), 0)
        .unwrap()
        .translation;
    assert_eq!([t.x, t.y, t.z], [1e-20, 5.0, -3.88251e-19]);
    // Frame 1 is pure noise: the identity.
    assert_eq!(local_rotation(&a, 1, 0), Quat::IDENTITY);
}

// ---------------------------------------------------------------------------
// An independent reference: split-whitespace parser and f64 FK
// ---------------------------------------------------------------------------

struct RefJoint {
    parent: Option<usize>,
    /// An `End Site`.
    end: bool,
    offset: [f64; 3],
    channels: Vec<String>,
    first_value: usize,
}

struct RefBvh {
    joints: Vec<RefJoint>,
    frames: usize,
    frame_time: f64,
    values: Vec<f64>,
    channel_count: usize,
}

fn ref_parse(text: &str) -> RefBvh {
    let mut t = text.split_whitespace();
    let num = |s: Option<&str>| -> f64 { s.unwrap().parse().unwrap() };
    let mut joints: Vec<RefJoint> = Vec::new();
    let mut stack: Vec<usize> = Vec::new();
    let mut channel_count = 0;
    assert_eq!(t.next(), Some("HIERARCHY"));
    loop {
        match t.next().unwrap() {
            keyword @ ("ROOT" | "JOINT" | "End") => {
                t.next(); // name or "Site"
                joints.push(RefJoint {
                    parent: stack.last().copied(),
                    end: keyword == "End",
                    offset: [0.0; 3],
                    channels: Vec::new(),
                    first_value: channel_count,
                });
            }
            "{" => stack.push(joints.len() - 1),
            "}" => {
                stack.pop();
            }
            "OFFSET" => {
                let j = stack.last().copied().unwrap();
                joints[j].offset = [num(t.next()), num(t.next()), num(t.next())];
            }
            "CHANNELS" => {
                let j = stack.last().copied().unwrap();
                let n: usize = t.next().unwrap().parse().unwrap();
                joints[j].channels = (0..n).map(|_| t.next().unwrap().to_owned()).collect();
                joints[j].first_value = channel_count;
                channel_count += n;
            }
            "MOTION" => break,
            other => panic!("reference parser: unexpected {other}"),
        }
    }
    assert_eq!(t.next(), Some("Frames:"));
    let frames: usize = t.next().unwrap().parse().unwrap();
    assert_eq!((t.next(), t.next()), (Some("Frame"), Some("Time:")));
    let frame_time = num(t.next());
    let values: Vec<f64> = t.map(|s| s.parse().unwrap()).collect();
    assert_eq!(values.len(), frames * channel_count);
    RefBvh {
        joints,
        frames,
        frame_time,
        values,
        channel_count,
    }
}

type M3 = [[f64; 3]; 3];

fn m3_mul(a: &M3, b: &M3) -> M3 {
    let mut r = [[0.0; 3]; 3];
    for (i, row) in r.iter_mut().enumerate() {
        for (j, v) in row.iter_mut().enumerate() {
            *v = (0..3).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    r
}

fn m3_apply(a: &M3, v: [f64; 3]) -> [f64; 3] {
    [0, 1, 2].map(|i| a[i][0] * v[0] + a[i][1] * v[1] + a[i][2] * v[2])
}

/// Rotation matrix (rows) about one axis by `deg` degrees.
fn axis_matrix(axis: char, deg: f64) -> M3 {
    let (s, c) = deg.to_radians().sin_cos();
    match axis {
        'X' => [[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]],
        'Y' => [[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]],
        'Z' => [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]],
        _ => unreachable!(),
    }
}

/// World positions (file units) of every joint at frame `f`: walk the
/// hierarchy, local = T(offset with position channels substituted) · R1 R2 R3.
fn ref_positions(b: &RefBvh, f: usize) -> Vec<[f64; 3]> {
    let vals = &b.values[f * b.channel_count..(f + 1) * b.channel_count];
    let mut world: Vec<(M3, [f64; 3])> = Vec::new();
    for j in &b.joints {
        let mut t = j.offset;
        let mut r: M3 = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
        for (k, ch) in j.channels.iter().enumerate() {
            let v = vals[j.first_value + k];
            let axis = ch.chars().next().unwrap();
            let i = "XYZ".find(axis).unwrap();
            if ch.ends_with("position") {
                t[i] = v;
            } else {
                r = m3_mul(&r, &axis_matrix(axis, v));
            }
        }
        let w = match j.parent {
            None => (r, t),
            Some(p) => {
                let (pr, pt) = &world[p];
                let o = m3_apply(pr, t);
                (m3_mul(pr, &r), [pt[0] + o[0], pt[1] + o[1], pt[2] + o[2]])
            }
        };
        world.push(w);
    }
    world.into_iter().map(|(_, t)| t).collect()
}

/// Imports `path` (with or without its End Sites) and checks every joint's
/// model-space position at three frames against the independent reference
/// FK; `expected_joints` counts the joints imported.
fn check_against_reference(path: &Path, expected_joints: usize, end_sites: bool) {
    let text = std::fs::read_to_string(path).unwrap();
    let reference = ref_parse(&text);
    let opts = BvhOptions {
        end_sites,
        ..BvhOptions::default()
    };
    let asset = bvh::load(path, &opts).unwrap_or_else(|e| panic!("{e}"));
    let kept: Vec<bool> = reference
        .joints
        .iter()
        .map(|j| end_sites || !j.end)
        .collect();
    assert_eq!(
        kept.iter().filter(|&&k| k).count(),
        expected_joints,
        "{}",
        path.display()
    );
    assert_eq!(asset.skeleton.joint_count(), expected_joints);
    assert_eq!(asset.clips[0].frame_count(), reference.frames);
    let rate = 1.0 / reference.frame_time;
    assert!((f64::from(asset.clips[0].sample_rate()) - rate).abs() < 1e-3 * rate);
    let frames = [0, reference.frames / 2, reference.frames - 1];
    let mut worst = 0.0f64;
    for f in frames {
        let all = ref_positions(&reference, f);
        let want: Vec<_> = all
            .iter()
            .zip(&kept)
            .filter(|(_, &k)| k)
            .map(|(w, _)| w)
            .collect();
        let got = model_positions(&asset, f);
        assert_eq!(got.len(), want.len());
        for (j, (w, g)) in want.iter().zip(&got).enumerate() {
            let w = w.map(|x| x * f64::from(opts.scale));
            let d = (f64::from(g.x) - w[0])
                .abs()
                .max((f64::from(g.y) - w[1]).abs())
                .max((f64::from(g.z) - w[2]).abs());
            worst = worst.max(d);
            assert!(
                d < 1e-4,
                "{} frame {f} joint {j}: got {g:?}, want {w:?}",
                path.display()
            );
        }
    }
    eprintln!(
        "{}: frames {frames:?}, {expected_joints} joints, worst position error {worst:.2e} m",
        path.display()
    );
}

#[test]
fn cmu_daz_friendly_matches_independent_fk() {
    let Some(dir) = data_dir() else { return };
    // 43 joints + 14 End Sites, or the 43 alone.
    check_against_reference(&dir.join("cmu/daz-friendly/02_01.bvh"), 57, true);
    check_against_reference(&dir.join("cmu/daz-friendly/09_06.bvh"), 57, true);
    check_against_reference(&dir.join("cmu/daz-friendly/09_06.bvh"), 43, false);
    // Without End Sites, each of the 43 file joints as with them.
    let text = std::fs::read_to_string(dir.join("cmu/daz-friendly/02_01.bvh")).unwrap();
    let a = check_end_sites_skipped(&text, &BvhOptions::default());
    assert_eq!(a.skeleton.joint_count(), 43);
}

#[test]
fn cmu_mb_friendly_matches_independent_fk() {
    let Some(dir) = data_dir() else { return };
    // 31 joints + 7 End Sites, or the 31 alone.
    check_against_reference(&dir.join("cmu/mb-friendly/01_01.bvh"), 38, true);
    check_against_reference(&dir.join("cmu/mb-friendly/05_06.bvh"), 38, true); // CRLF
    check_against_reference(&dir.join("cmu/mb-friendly/01_01.bvh"), 31, false);
}

#[test]
fn makehuman_matches_independent_fk() {
    let Some(dir) = data_dir() else { return };
    // Every joint carries 6 channels here (positions on non-root joints).
    check_against_reference(&dir.join("makehuman/walk1.bvh"), 91, true);
}

// ---------------------------------------------------------------------------
// The whole data set
// ---------------------------------------------------------------------------

#[test]
fn every_data_file_imports() {
    let Some(dir) = data_dir() else { return };
    let mut count = 0;
    for sub in ["cmu/daz-friendly", "cmu/mb-friendly", "makehuman"] {
        for path in bvh_files(&dir.join(sub)) {
            let text = std::fs::read_to_string(&path).unwrap();
            let reference = ref_parse(&text);
            let a = bvh::load(&path, &BvhOptions::default()).unwrap_or_else(|e| panic!("{e}"));
            let clip = &a.clips[0];
            assert_eq!(
                a.skeleton.joint_count(),
                reference.joints.len(),
                "{}",
                path.display()
            );
            assert_eq!(clip.frame_count(), reference.frames, "{}", path.display());
            assert_eq!(a.joint_map.len(), reference.joints.len());
            assert_eq!(a.units, "metres");
            // Files not in centimetres are reported at the default scale,
            // and import silently at their own: CMU's MotionBuilder-friendly
            // conversions and the two re-exported daz files 16_01 / 16_02
            // (1/0.45 inch), MakeHuman (decimetres).
            let name = path.file_name().unwrap().to_str().unwrap();
            let own = match sub {
                "makehuman" => Some(0.1),
                "cmu/mb-friendly" => Some(0.05644),
                _ if name.starts_with("16_0") => Some(0.05644),
                _ => None,
            };
            if let Some(scale) = own {
                assert_eq!(a.warnings.len(), 1, "{name}: {:?}", a.warnings);
                assert!(
                    a.warnings[0].contains("the rest pose spans"),
                    "{:?}",
                    a.warnings
                );
                let b = bvh::load(&path, &scaled(scale)).unwrap();
                assert!(b.warnings.is_empty(), "{name} at {scale}: {:?}", b.warnings);
            } else {
                assert!(a.warnings.is_empty(), "{name}: {:?}", a.warnings);
            }
            assert_eq!(clip.name, path.file_stem().unwrap().to_str().unwrap());
            let bvh_joints = reference
                .joints
                .iter()
                .filter(|j| !j.channels.is_empty())
                .count();
            eprintln!(
                "{sub}/{}: {} joints ({bvh_joints} with channels), {} frames @ {:.2} Hz",
                path.file_name().unwrap().to_string_lossy(),
                a.skeleton.joint_count(),
                clip.frame_count(),
                clip.sample_rate()
            );
            count += 1;
        }
    }
    assert_eq!(count, 61 + 5, "expected 61 CMU and 5 MakeHuman files");
}

// ---------------------------------------------------------------------------
// Fuzzing: no panics, and whatever imports is sound
// ---------------------------------------------------------------------------

/// Invariants of any successful import.
fn check_sound(a: &Asset) {
    let n = a.skeleton.joint_count();
    assert!((1..=MAX_JOINTS).contains(&n));
    assert_eq!(a.joint_map.len(), n);
    for clip in &a.clips {
        let view = clip.view();
        assert!(clip.frame_count() >= 1);
        assert!(clip.sample_rate().is_finite() && clip.sample_rate() > 0.0);
        for f in 0..clip.frame_count() {
            for j in 0..n {
                let t = get_joint(view.frame(f).unwrap(), j).unwrap();
                assert!(t.is_finite());
                assert!((t.rotation.length() - 1.0).abs() < 1e-4, "{:?}", t.rotation);
            }
        }
    }
}

/// Splits text into alternating tokens and separators (so mutations keep layout).
fn pieces(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut cur_space = false;
    for ch in text.chars() {
        let sp = ch.is_ascii_whitespace();
        if !cur.is_empty() && sp != cur_space {
            out.push(std::mem::take(&mut cur));
        }
        cur_space = sp;
        cur.push(ch);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[derive(Clone, Debug)]
enum Mutation {
    Delete(usize),
    Duplicate(usize),
    Replace(usize, &'static str),
    Swap(usize, usize),
    InsertNewline(usize),
    Truncate(usize),
}

const GARBAGE: [&str; 16] = [
    "abc",
    "nan",
    "-inf",
    "1e999",
    "",
    "{",
    "}",
    "JOINT",
    "End",
    "Site",
    "MOTION",
    "-",
    "1e",
    "99999999999999999999",
    "Frames:",
    "\u{e9}\u{1f600}",
];

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Delete),
        any::<usize>().prop_map(Mutation::Duplicate),
        (any::<usize>(), proptest::sample::select(&GARBAGE[..]))
            .prop_map(|(i, g)| Mutation::Replace(i, g)),
        (any::<usize>(), any::<usize>()).prop_map(|(i, j)| Mutation::Swap(i, j)),
        any::<usize>().prop_map(Mutation::InsertNewline),
        any::<usize>().prop_map(Mutation::Truncate),
    ]
}

fn mutate(text: &str, muts: &[Mutation]) -> String {
    let mut p = pieces(text);
    for m in muts {
        if p.is_empty() {
            break;
        }
        let n = p.len();
        match *m {
            Mutation::Delete(i) => {
                p.remove(i % n);
            }
            Mutation::Duplicate(i) => {
                let x = p[i % n].clone();
                p.insert(i % n, x);
            }
            Mutation::Replace(i, g) => p[i % n] = g.to_owned(),
            Mutation::Swap(i, j) => p.swap(i % n, j % n),
            Mutation::InsertNewline(i) => p.insert(i % n, "\n".to_owned()),
            Mutation::Truncate(i) => {
                let s: String = p.concat();
                let cut = s
                    .char_indices()
                    .nth(i % s.chars().count().max(1))
                    .map_or(0, |(k, _)| k);
                p = vec![s[..cut].to_owned()];
            }
        }
    }
    p.concat()
}

fn seeds() -> Vec<String> {
    vec![
        SMALL.to_owned(),
        MIXED.to_owned(),
        order_file("ZXY").replace('\n', "\r\n"),
        many_joints(3, true),
    ]
}

const VOCAB: [&str; 24] = [
    "HIERARCHY",
    "ROOT",
    "JOINT",
    "End",
    "Site",
    "{",
    "}",
    "OFFSET",
    "CHANNELS",
    "MOTION",
    "Frames:",
    "Frame",
    "Time:",
    "Xposition",
    "Yrotation",
    "Zrotation",
    "0",
    "1",
    "3",
    "6",
    "-2.5",
    "0.1",
    "nan",
    "x",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn random_bytes_never_panic(
        bytes in proptest::collection::vec(any::<u8>(), 0..1500),
        end_sites in any::<bool>(),
    ) {
        let text = String::from_utf8_lossy(&bytes);
        if let Ok(a) = import(&text, &BvhOptions { end_sites, ..UNIT }) {
            check_sound(&a);
        }
    }

    #[test]
    fn random_keyword_soup_never_panics(
        words in proptest::collection::vec((proptest::sample::select(&VOCAB[..]), 0u8..4), 0..120),
        end_sites in any::<bool>(),
    ) {
        let seps = [" ", "\n", "\t", "\r\n"];
        let text: String = words.iter().map(|(w, s)| format!("{w}{}", seps[*s as usize])).collect();
        let text = format!("HIERARCHY\nROOT r\n{text}");
        if let Ok(a) = import(&text, &BvhOptions { end_sites, ..UNIT }) {
            check_sound(&a);
        }
    }

    #[test]
    fn mutated_files_never_panic(
        seed in 0usize..4,
        muts in proptest::collection::vec(mutation(), 1..5),
        end_sites in any::<bool>(),
    ) {
        let text = mutate(&seeds()[seed], &muts);
        match import(&text, &BvhOptions { end_sites, ..BvhOptions::default() }) {
            Ok(a) => check_sound(&a),
            Err(e) => {
                // Every text error points at a line that exists (or line 1 of an empty file).
                let lines = text.lines().count().max(1);
                match e.location {
                    Location::Line(l) => prop_assert!((1..=lines).contains(&l), "{e} (of {lines} lines)"),
                    ref other => prop_assert!(false, "unexpected location {other:?}: {e}"),
                }
                prop_assert!(!e.message.is_empty());
            }
        }
    }

    #[test]
    fn position_values_parse_like_std(
        v in prop_oneof![any::<f32>().prop_map(f64::from), -1e6f64..1e6, -1e-3f64..1e-3],
        style in 0u8..4,
    ) {
        prop_assume!(v.is_finite());
        let s = match style {
            0 => format!("{v}"),
            1 => format!("{v:e}"),
            2 => format!("{v:.6}"),
            _ => format!("{:E}", v * 1e10),
        };
        let want = s.parse::<f64>().unwrap() as f32;
        prop_assume!(want.is_finite());
        let text = format!("HIERARCHY\nROOT r\n{{\nOFFSET 0 0 0\nCHANNELS 1 Xposition\n}}\nMOTION\nFrames: 1\nFrame Time: 1\n{s}\n");
        let a = import_ok(&text, &UNIT);
        let got = get_joint(a.clips[0].view().frame(0).unwrap(), 0).unwrap().translation.x;
        prop_assert_eq!(got.to_bits(), want.to_bits(), "{}", s);
    }
}
