//! The `sinew` binary as a user runs it: exit codes, one-line errors, and
//! every file of `../shared/data` through `inspect`, `play` and `render`,
//! and the figures `sinew ik` and `sinew shapes` print.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn sinew(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sinew"))
        .args(args)
        .output()
        .expect("the sinew binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exit status 2, exactly one line on stderr, no panic or backtrace.
fn assert_one_line_error(o: &Output, needle: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "stderr: {err}");
    assert_eq!(err.lines().count(), 1, "stderr: {err}");
    assert!(
        err.starts_with("sinew: ") && err.contains(needle),
        "stderr: {err}"
    );
    assert!(!err.contains("panicked"), "stderr: {err}");
}

fn data() -> Option<PathBuf> {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data");
    if d.is_dir() {
        Some(d)
    } else {
        eprintln!("skipped: {} not found", d.display());
        None
    }
}

fn checksum(o: &Output) -> String {
    stdout(o)
        .lines()
        .find(|l| l.starts_with("checksum "))
        .unwrap_or_default()
        .to_string()
}

#[test]
fn default_run_checksum_is_the_same_for_any_thread_count() {
    let run = |t: &str| sinew(&["--characters", "20", "--seconds", "0.25", "--threads", t]);
    let (a, b) = (run("1"), run("2"));
    assert!(a.status.success() && b.status.success(), "{}", stderr(&a));
    for stage in ["sample", "blend", "fk", "total"] {
        assert!(
            stdout(&a).lines().any(|l| l.starts_with(stage)),
            "{}",
            stdout(&a)
        );
    }
    assert!(!checksum(&a).is_empty());
    assert_eq!(checksum(&a), checksum(&b));
    // Compressed clips unless --raw, which plays other (uncompressed) keys.
    assert!(
        stdout(&a).contains("clips compressed at 0.01 cm"),
        "{}",
        stdout(&a)
    );
    let raw = sinew(&["--characters", "20", "--seconds", "0.25", "--raw"]);
    assert!(raw.status.success(), "{}", stderr(&raw));
    assert!(stdout(&raw).contains("clips raw"), "{}", stdout(&raw));
    assert_ne!(checksum(&raw), checksum(&a));
}

#[test]
fn bench_json_has_the_figures_and_the_ratio() {
    let o = sinew(&["bench", "--json", "--characters", "8", "--seconds", "0.1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    assert!(
        s.trim_start().starts_with('{') && s.trim_end().ends_with('}'),
        "{s}"
    );
    for key in [
        "\"ratio_blend_fk\":",
        "\"glam_baseline\":",
        "\"blend_ns_per_joint\":",
        "\"fk_ns_per_character_frame\":",
        "\"checksum\":",
        "\"sinew_clips\":\"compressed\"",
    ] {
        assert!(s.contains(key), "{key} missing in {s}");
    }
}

#[test]
fn bad_arguments_exit_2() {
    for args in [
        &["--characters", "0"][..],
        &["--seconds", "nan"],
        &["--seconds", "-1"],
        &["--threads", "0"],
        &["render"],
        &["ik", "--frames", "0"],
        &["ik", "--bvh-scale", "-1"],
        &["match", "--seconds", "-1"],
        &["match", "--interval", "0", "--seconds", "1"],
        &["match", "/no/such/file.bvh"],
        &["no-such-command"],
    ] {
        let o = sinew(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"));
    }
}

#[test]
fn broken_files_give_one_line_errors() {
    let dir = std::env::temp_dir().join(format!("sinew-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bvh = dir.join("broken.bvh");
    std::fs::write(&bvh, "HIERARCHY\nROOT a\n{\n OFFSET 0 0\n}\n").unwrap();
    let o = sinew(&["inspect", bvh.to_str().unwrap()]);
    assert_one_line_error(&o, "broken.bvh:5:");
    let glb = dir.join("broken.glb");
    std::fs::write(&glb, b"glTF\x02\x00\x00\x00\xff\xff").unwrap();
    assert_one_line_error(&sinew(&["inspect", glb.to_str().unwrap()]), "broken.glb");
    let ozz = dir.join("broken.ozz");
    std::fs::write(&ozz, b"\x01ozz-skeleton\x00\x02\x00\x00\x00\x05").unwrap();
    assert_one_line_error(&sinew(&["inspect", ozz.to_str().unwrap()]), "broken.ozz");
    assert_one_line_error(&sinew(&["inspect", "/no/such/file.bvh"]), "cannot read");
    let txt = dir.join("notes.txt");
    std::fs::write(&txt, "hello").unwrap();
    assert_one_line_error(
        &sinew(&["inspect", txt.to_str().unwrap()]),
        "unknown file type",
    );
    let out = dir.join("x.png");
    assert_one_line_error(
        &sinew(&["render", "--clip", "nope", "-o", out.to_str().unwrap()]),
        "no clip named \"nope\"",
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn memory_budget_flag_is_parsed_by_every_command_that_loads_files() {
    let dir = std::env::temp_dir().join(format!("sinew-cli-budget-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // A million frames of one block (153 MiB) declared, one line present.
    let bvh = dir.join("long.bvh");
    std::fs::write(
        &bvh,
        "HIERARCHY\nROOT a\n{\n OFFSET 0 0 0\n CHANNELS 3 Zrotation Xrotation Yrotation\n \
         End Site\n {\n  OFFSET 0 10 0\n }\n}\nMOTION\nFrames: 1000000\nFrame Time: 0.1\n0 0 0\n",
    )
    .unwrap();
    let path = bvh.to_str().unwrap();
    let png = dir.join("x.png");
    let png = png.to_str().unwrap();
    let out = dir.to_str().unwrap();
    let budget = "exceeds the memory budget of 100 MiB";
    // Within the default 512 MiB the header passes and the missing lines are the error.
    assert_one_line_error(&sinew(&["inspect", path]), "frame count mismatch");
    for args in [
        &["inspect", "--memory-budget", "100", path][..],
        &["play", "--memory-budget", "100", path],
        &["render", "--memory-budget", "100", "-o", png, path],
        &["compress", "--memory-budget", "100", "-o", out, path],
        &["mix", "--memory-budget", "100", path],
        &["plot", "--memory-budget", "100", "-o", png, path],
    ] {
        let o = sinew(args);
        assert_one_line_error(&o, budget);
        assert!(stderr(&o).contains("long.bvh:12: clip \"long\": 1,000,000 frames"));
    }
    for bad in ["0", "-1", "abc", "1.5", "16777217"] {
        let o = sinew(&["inspect", &format!("--memory-budget={bad}"), path]);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("--memory-budget"),
            "{bad}: {}",
            stderr(&o)
        );
    }
    let help = stdout(&sinew(&["inspect", "--help"]));
    assert!(
        help.contains("--memory-budget <MIB>") && help.contains("[default: 512]"),
        "{help}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bvh_end_sites_can_be_skipped_from_the_command_line() {
    let dir = std::env::temp_dir().join(format!("sinew-cli-ends-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bvh = dir.join("arm.bvh");
    std::fs::write(
        &bvh,
        "HIERARCHY\nROOT a\n{\n OFFSET 0 0 0\n CHANNELS 3 Zrotation Xrotation Yrotation\n \
         JOINT b\n {\n  OFFSET 0 10 0\n  CHANNELS 3 Zrotation Xrotation Yrotation\n  \
         End Site\n  {\n   OFFSET 0 10 0\n  }\n }\n}\nMOTION\nFrames: 2\nFrame Time: 0.1\n\
         0 0 0 0 0 0\n10 20 30 40 50 60\n",
    )
    .unwrap();
    let path = bvh.to_str().unwrap();
    let with = sinew(&["inspect", path]);
    let without = sinew(&["inspect", "--bvh-no-end-sites", path]);
    for (o, joints) in [(&with, 3), (&without, 2)] {
        assert!(o.status.success(), "{}", stderr(o));
        let out = stdout(o);
        assert!(out.contains(&format!("skeleton: {joints} joints")), "{out}");
    }
    assert!(stdout(&with).contains("b_end"));
    assert!(!stdout(&without).contains("b_end"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn render_writes_a_png_of_the_humanoid() {
    let out = std::env::temp_dir().join(format!("sinew-strip-{}.png", std::process::id()));
    let o = sinew(&[
        "render",
        "--clip",
        "run",
        "--frames",
        "4",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    // Four 220-pixel cells, with a title band above and a time axis below.
    let (w, h) = png_size(&out);
    assert_eq!(w, 4 * 220);
    assert!(h > 220 + 40, "{h}");
    assert!(has_ink(&out, 0..20), "no title");
    assert!(has_ink(&out, h - 30..h), "no time axis");
    std::fs::remove_file(&out).ok();
}

#[test]
fn closed_stdout_pipe_ends_quietly() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sinew"))
        // Raw clips: the debug build's compressed sampling would make
        // this long run minutes long, and the pipe handling is the same.
        .args(["--characters", "2000", "--seconds", "1", "--raw"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 8];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    // stdout is dropped here: later prints hit a closed pipe.
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stderr(&o).contains("panicked"));
}

#[test]
fn every_data_file_inspects_plays_and_renders() {
    let Some(d) = data() else { return };
    let mut groups: Vec<Vec<PathBuf>> = Vec::new();
    for sub in [
        "gltf",
        "bvh/cmu/daz-friendly",
        "bvh/cmu/mb-friendly",
        "bvh/makehuman",
    ] {
        let mut stack = vec![d.join(sub)];
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else if matches!(
                    p.extension().and_then(|e| e.to_str()),
                    Some("glb" | "gltf" | "bvh")
                ) {
                    groups.push(vec![p]);
                }
            }
        }
    }
    let ozz = d.join("ozz");
    for (skel, anims) in [
        (
            "pab_skeleton.ozz",
            &[
                "pab_walk.ozz",
                "pab_jog.ozz",
                "pab_run.ozz",
                "pab_crossarms.ozz",
            ][..],
        ),
        ("ruby_skeleton.ozz", &["ruby_animation.ozz"]),
        ("baked_skeleton.ozz", &["baked_animation.ozz"]),
    ] {
        let mut g = vec![ozz.join(skel)];
        g.extend(anims.iter().map(|a| ozz.join(a)));
        groups.push(g);
    }
    assert!(groups.len() >= 70, "found {} inputs", groups.len());
    let png = std::env::temp_dir().join(format!("sinew-data-{}.png", std::process::id()));
    for g in &groups {
        let files: Vec<&str> = g.iter().map(|p| p.to_str().unwrap()).collect();
        let o = sinew(&[&["inspect"][..], &files].concat());
        assert!(o.status.success(), "inspect {files:?}: {}", stderr(&o));
        let has_clips = !stdout(&o).contains("clips: 0");
        // Playing and drawing every CMU clip is slow in debug; one file in five.
        if has_clips && (g.len() > 1 || !files[0].ends_with(".bvh") || files[0].ends_with("1.bvh"))
        {
            // Compressing first (the default) takes up to a minute per
            // file in debug: pab plays compressed, the others raw.
            let pab = files[0].ends_with("pab_skeleton.ozz");
            let raw: &[&str] = if pab { &[] } else { &["--raw"] };
            let o = sinew(
                &[
                    &["play"][..],
                    &files,
                    &["--characters", "4", "--seconds", "0.1"],
                    raw,
                ]
                .concat(),
            );
            assert!(o.status.success(), "play {files:?}: {}", stderr(&o));
            let o = sinew(
                &[
                    &["render"][..],
                    &files,
                    &["--frames", "3", "--cell", "64", "-o", png.to_str().unwrap()],
                ]
                .concat(),
            );
            assert!(o.status.success(), "render {files:?}: {}", stderr(&o));
            assert_eq!(png_size(&png).0, 3 * 64, "render {files:?}");
        }
    }
    std::fs::remove_file(&png).ok();
}

/// Decodes the PNG at `path` whole (signature, chunks, CRCs, pixels).
fn png(path: &Path) -> tiny_skia::Pixmap {
    match tiny_skia::Pixmap::load_png(path) {
        Ok(p) => p,
        Err(e) => panic!("{}: not a valid PNG: {e}", path.display()),
    }
}

/// Width and height of the valid PNG at `path`.
fn png_size(path: &Path) -> (u32, u32) {
    let p = png(path);
    (p.width(), p.height())
}

/// Whether rows `rows` of the PNG at `path` hold dark pixels (text or axes)
/// on the light background.
fn has_ink(path: &Path, rows: std::ops::Range<u32>) -> bool {
    let p = png(path);
    let w = p.width() as usize;
    p.pixels()[rows.start as usize * w..rows.end as usize * w]
        .iter()
        .any(|c| c.red() < 120 && c.green() < 120 && c.blue() < 120)
}

#[test]
fn mix_demo_on_the_humanoid() {
    let png = std::env::temp_dir().join(format!("sinew-mix-{}.png", std::process::id()));
    let o = sinew(&[
        "mix",
        "--frames",
        "60",
        "--every",
        "10",
        "--smooth",
        "-o",
        png.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    for needle in [
        "idle: idle",
        "fatigue: tired",
        "arms(jog)",
        "legs(walk)",
        "(idle)",
        "wrote ",
    ] {
        assert!(s.contains(needle), "{needle:?} missing in:\n{s}");
    }
    // Fatigue rises to 1 on the last frame.
    assert!(
        s.lines().any(|l| l.trim_start().starts_with("59    1.00")),
        "{s}"
    );
    // Eight 220-pixel cells over a chart of the weights.
    let (w, h) = png_size(&png);
    assert_eq!(w, 8 * 220);
    assert!(h > 220 + 300, "{h}");
    assert!(has_ink(&png, h - 100..h), "no weight chart");
    let _ = std::fs::remove_file(&png);
    let o = sinew(&["mix", "--frames", "20", "--angles"]);
    assert!(
        o.status.success() && stdout(&o).contains("joint-angle"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn plot_draws_a_transition_chart() {
    let png = std::env::temp_dir().join(format!("sinew-plot-{}.png", std::process::id()));
    let o = sinew(&["plot", "-o", png.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    assert!(
        s.contains("thigh_l") && s.contains("inertialization"),
        "{s}"
    );
    assert_eq!(png_size(&png), (1000, 460));
    assert!(has_ink(&png, 0..30), "no title");
    let _ = std::fs::remove_file(&png);
    let o = sinew(&["plot", "--joint", "tail", "-o", png.to_str().unwrap()]);
    assert_one_line_error(&o, "no joint named \"tail\"");
    let o = sinew(&["plot", "--from", "swim", "-o", png.to_str().unwrap()]);
    assert_one_line_error(&o, "no clip named \"swim\"");
    let o = sinew(&["plot", "--blend", "0", "-o", png.to_str().unwrap()]);
    assert_one_line_error(&o, "--blend");
    let o = sinew(&["mix", "--rate", "-3"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn mix_and_plot_on_real_clips() {
    let Some(d) = data() else { return };
    let ozz = d.join("ozz");
    let bvh = d.join("bvh/cmu/daz-friendly");
    let png = std::env::temp_dir().join(format!("sinew-mixdata-{}.png", std::process::id()));
    let p = |f: &str, base: &Path| base.join(f).to_string_lossy().into_owned();
    let ozz_files = [
        p("pab_skeleton.ozz", &ozz),
        p("pab_walk.ozz", &ozz),
        p("pab_crossarms.ozz", &ozz),
        p("pab_jog.ozz", &ozz),
    ];
    let mut args: Vec<&str> = vec!["mix", "--frames", "40", "--focus", "Spine"];
    args.extend(ozz_files.iter().map(String::as_str));
    let o = sinew(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("crossarms"), "{}", stdout(&o));
    let bvh_files = [
        p("07_01.bvh", &bvh),
        p("13_39.bvh", &bvh),
        p("09_01.bvh", &bvh),
    ];
    let mut args: Vec<&str> = vec![
        "mix",
        "--rate",
        "30",
        "--frames",
        "40",
        "-o",
        png.to_str().unwrap(),
    ];
    args.extend(bvh_files.iter().map(String::as_str));
    let o = sinew(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("root motion of 07_01"),
        "{}",
        stdout(&o)
    );
    assert_eq!(png_size(&png).0, 8 * 220);
    let mut args: Vec<&str> = vec!["plot", "--rate", "60", "-o", png.to_str().unwrap()];
    args.extend([bvh_files[0].as_str(), bvh_files[2].as_str()]);
    let o = sinew(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(png_size(&png), (1000, 460));
    let _ = std::fs::remove_file(&png);
}

#[test]
fn compress_writes_clips_a_table_and_verifies() {
    let dir = std::env::temp_dir().join(format!("sinew-compress-{}", std::process::id()));
    let o = sinew(&["compress", "--verify", "-o", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("[3/3]"), "{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("clip ") && l.contains("ratio") && l.contains("verified max")),
        "{out}"
    );
    assert!(out.contains("total (3 clips)"), "{out}");
    assert!(out.contains("MB/s"), "{out}");
    let all: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let is = |p: &PathBuf, ext: &str| p.extension().is_some_and(|e| e == ext);
    let files: Vec<_> = all.iter().filter(|p| is(p, "sinewcmp")).collect();
    assert_eq!(files.len(), 3, "{all:?}");
    // The skeleton beside the clips (the humanoid has no mesh).
    let skeletons: Vec<_> = all.iter().filter(|p| is(p, "sinewskl")).collect();
    assert_eq!(skeletons.len(), 1, "{all:?}");
    let skeleton = sinew_std::OwnedSkeleton::from_bytes(&std::fs::read(skeletons[0]).unwrap());
    assert_eq!(skeleton.unwrap().joint_count(), 70);
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        let c = sinew_std::compress::OwnedCompressedClip::from_bytes(&bytes).unwrap();
        assert_eq!(c.view().joint_count(), 70);
        // `sinew inspect` reads the container back: its figures and tracks.
        let o = sinew(&["inspect", f.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
        let out = stdout(&o);
        let v = c.view();
        let want = [
            format!("container v{}", sinew_core::compressed::COMPRESSED_VERSION),
            format!("{} joints, {} frames", v.joint_count(), v.frame_count()),
            format!("size: {} bytes", v.size_bytes()),
            format!("({} animated lanes)", v.animated_lane_count()),
            "per-lane rotations".to_string(),
            "rotation lanes: drop-W ".to_string(),
            "rotation lane bit rates (bits: lane-segments): ".to_string(),
        ];
        for w in &want {
            assert!(out.contains(w.as_str()), "{w:?} in {out}");
        }
        // Only the compressed clip: no procedural humanoid after it.
        assert!(!out.contains("skeleton:"), "{out}");
    }
    // A damaged container: one line naming the file and the defect.
    let broken = dir.join("broken.sinewcmp");
    let mut bytes = std::fs::read(files[0]).unwrap();
    bytes.truncate(100);
    std::fs::write(&broken, &bytes).unwrap();
    assert_one_line_error(
        &sinew(&["inspect", broken.to_str().unwrap()]),
        "broken.sinewcmp: data truncated",
    );
    std::fs::remove_file(&broken).unwrap();
    // A file where the output directory should be: one line, status 2.
    let blocker = dir.join("blocker");
    std::fs::write(&blocker, "x").unwrap();
    assert_one_line_error(
        &sinew(&["compress", "-o", blocker.to_str().unwrap()]),
        "cannot create",
    );
    assert_one_line_error(
        &sinew(&["compress", "/no/such/file.bvh", "-o", dir.to_str().unwrap()]),
        "cannot read",
    );
    for bad in [
        &["--error", "0cm"][..],
        &["--shell", "abc"],
        &["--error", "-1mm"],
    ] {
        let mut args = vec!["compress", "-o", dir.to_str().unwrap()];
        args.extend_from_slice(bad);
        let o = sinew(&args);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"));
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// `--rotation` picks the container's rotation format, which `sinew
/// inspect` names; the single formats give every rotation lane theirs.
#[test]
fn compress_rotation_formats() {
    let dir = std::env::temp_dir().join(format!("sinew-compress-rot-{}", std::process::id()));
    for (arg, name, lanes) in [
        ("per-lane", "per-lane rotations", None),
        ("drop-w", "drop-W rotations", Some("smallest-three 0\n")),
        (
            "smallest-three",
            "smallest-three rotations",
            Some("rotation lanes: drop-W 0,"),
        ),
    ] {
        let o = sinew(&["compress", "--rotation", arg, "-o", dir.to_str().unwrap()]);
        assert!(o.status.success(), "{arg}: {}", stderr(&o));
        let clip = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|e| e == "sinewcmp"))
            .unwrap();
        let o = sinew(&["inspect", clip.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
        let out = stdout(&o);
        assert!(out.contains(name), "{arg}: {out}");
        if let Some(l) = lanes {
            assert!(out.contains(l), "{arg}: {l:?} in {out}");
        }
        std::fs::remove_dir_all(&dir).ok();
    }
    let o = sinew(&[
        "compress",
        "--rotation",
        "drop-x",
        "-o",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn compress_cmu_bvh_within_the_bound() {
    let Some(d) = data() else { return };
    let bvh = d.join("bvh/cmu/daz-friendly/09_01.bvh");
    let dir = std::env::temp_dir().join(format!("sinew-compress-cmu-{}", std::process::id()));
    let o = sinew(&[
        "compress",
        "--verify",
        bvh.to_str().unwrap(),
        "-o",
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("09_01"), "{}", stdout(&o));
    assert!(dir.join("09_01.sinewcmp").is_file());
    assert!(dir.join("09_01.sinewskl").is_file());
    std::fs::remove_dir_all(&dir).ok();
    // The same file name in two folders: each keeps its own outputs,
    // named after its folder, with its own skeleton beside them.
    let daz = d.join("bvh/cmu/daz-friendly/02_01.bvh");
    let mb = d.join("bvh/cmu/mb-friendly/02_01.bvh");
    let o = sinew(&[
        "compress",
        daz.to_str().unwrap(),
        mb.to_str().unwrap(),
        "-o",
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    for (folder, root) in [("daz-friendly", "hip"), ("mb-friendly", "Hips")] {
        let clip = std::fs::read(dir.join(format!("{folder}_02_01.sinewcmp"))).unwrap();
        let clip = sinew_std::compress::OwnedCompressedClip::from_bytes(&clip).unwrap();
        let skl = std::fs::read(dir.join(format!("{folder}_02_01.sinewskl"))).unwrap();
        let skl = sinew_std::OwnedSkeleton::from_bytes(&skl).unwrap();
        assert_eq!(clip.view().joint_count(), skl.joint_count(), "{folder}");
        assert_eq!(skl.view().joint_name(0), Some(root), "{folder}");
    }
    assert!(!dir.join("02_01.sinewcmp").exists());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn compress_warns_when_the_keys_are_coarser_than_the_bound() {
    // 5 km from the origin (BVH centimetres), where f32 steps are 0.49 mm.
    let dir = std::env::temp_dir().join(format!("sinew-compress-far-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bvh = dir.join("far.bvh");
    let motion: String = (0..4)
        .map(|f| format!("{} 100 0 0 0 0 0 {} 0\n", 500_000 + f, 10 * f))
        .collect();
    std::fs::write(
        &bvh,
        format!(
            "HIERARCHY\nROOT hip\n{{\nOFFSET 0 0 0\n\
             CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n\
             JOINT spine\n{{\nOFFSET 0 10 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n\
             End Site\n{{\nOFFSET 0 10 0\n}}\n}}\n}}\n\
             MOTION\nFrames: 4\nFrame Time: 0.0333333\n{motion}"
        ),
    )
    .unwrap();
    let out = dir.join("out");
    let o = sinew(&[
        "compress",
        "--verify",
        bvh.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("warning: far: the root is so far from the origin")
            && text.contains("coarser than the bound 0.01000 cm"),
        "{text}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `sinew compress` of `../shared/data/<rel>` into a fresh temporary
/// folder named after `tag`, which it returns once the run succeeded;
/// `None` (the test skips) without the data.
fn compress_data_file(rel: &str, tag: &str) -> Option<PathBuf> {
    let file = data()?.join(rel);
    let dir = std::env::temp_dir().join(format!("sinew-compress-{tag}-{}", std::process::id()));
    let o = sinew(&[
        "compress",
        file.to_str().unwrap(),
        "-o",
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    Some(dir)
}

#[test]
fn compress_writes_the_meshes_a_c_program_needs() {
    let Some(dir) = compress_data_file("gltf/khronos-gltf-samples/Fox.glb", "fox") else {
        return;
    };
    let skeleton = std::fs::read(dir.join("Fox.sinewskl")).unwrap();
    let skeleton = sinew_std::OwnedSkeleton::from_bytes(&skeleton).unwrap();
    let meshes: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sinewmsh"))
        .collect();
    assert_eq!(meshes.len(), 1, "{meshes:?}");
    let bytes = sinew_std::AlignedBytes::copy_from(&std::fs::read(&meshes[0]).unwrap());
    let mesh = sinew_core::mesh::SkinnedMesh::from_bytes(bytes.as_slice()).unwrap();
    assert_eq!(mesh.vertex_count(), 1728);
    assert_eq!(mesh.joint_count(), skeleton.joint_count());
    std::fs::remove_dir_all(&dir).ok();
}

/// A clip with morph-weight animations gets a `.sinewtrk` track set beside
/// its `.sinewcmp`: the weights a C program plays with it.
#[test]
fn compress_writes_the_morph_weight_tracks_beside_the_clips() {
    let Some(dir) = compress_data_file("gltf/threejs-robotexpressive/RobotExpressive.glb", "robot")
    else {
        return;
    };
    let stem = "RobotExpressive_12_Wave";
    let bytes = sinew_std::AlignedBytes::copy_from(
        &std::fs::read(dir.join(format!("{stem}.sinewtrk"))).unwrap(),
    );
    let set = sinew_core::track::store::TrackSet::from_bytes(bytes.as_slice()).unwrap();
    assert!(!set.is_empty());
    for i in 0..set.len() {
        let t = set.track(i).unwrap();
        assert!(t.name().starts_with("morph/"), "{}", t.name());
        assert!(t.typed::<f32>().is_ok());
    }
    let clip = sinew_std::AlignedBytes::copy_from(
        &std::fs::read(dir.join(format!("{stem}.sinewcmp"))).unwrap(),
    );
    let clip = sinew_core::compressed::CompressedClip::from_bytes(clip.as_slice()).unwrap();
    assert_eq!(set.track(0).unwrap().len(), clip.frame_count());
    std::fs::remove_dir_all(&dir).ok();
}

/// Writes a six-joint chain whose first vertex has six influences (two
/// `JOINTS_n` sets), with a one-channel animation, as `.gltf` + `.bin` in
/// a fresh folder; returns the `.gltf` path.
fn write_six_influence_gltf() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sinew-infl8-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut bin: Vec<u8> = Vec::new();
    let f32s = |bin: &mut Vec<u8>, v: &[f32]| v.iter().for_each(|x| bin.extend(x.to_le_bytes()));
    let u16s = |bin: &mut Vec<u8>, v: &[u16]| v.iter().for_each(|x| bin.extend(x.to_le_bytes()));
    f32s(&mut bin, &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0]); // 0: positions
    u16s(&mut bin, &[0, 1, 2, 3, 0, 0, 0, 0, 1, 0, 0, 0]); // 36: JOINTS_0
    u16s(&mut bin, &[4, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]); // 60: JOINTS_1
    let w0 = [0.3, 0.2, 0.15, 0.1, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0];
    f32s(&mut bin, &w0); // 84: WEIGHTS_0
    f32s(
        &mut bin,
        &[0.15, 0.1, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    ); // 132: WEIGHTS_1
    f32s(&mut bin, &[0.0, 1.0]); // 180: key times
    f32s(
        &mut bin,
        &[
            0.0,
            0.0,
            0.0,
            1.0,
            0.0,
            0.0,
            std::f32::consts::FRAC_1_SQRT_2,
            std::f32::consts::FRAC_1_SQRT_2,
        ],
    ); // 188: rotations
    std::fs::write(dir.join("six.bin"), &bin).unwrap();
    let view =
        |off: usize, len: usize| format!(r#"{{"buffer":0,"byteOffset":{off},"byteLength":{len}}}"#);
    let views = [
        view(0, 36),
        view(36, 24),
        view(60, 24),
        view(84, 48),
        view(132, 48),
        view(180, 8),
        view(188, 32),
    ]
    .join(",");
    let acc = |v: usize, ct: u32, n: usize, ty: &str, extra: &str| {
        format!(r#"{{"bufferView":{v},"componentType":{ct},"count":{n},"type":"{ty}"{extra}}}"#)
    };
    let accessors = [
        acc(0, 5126, 3, "VEC3", r#","min":[0,0,0],"max":[1,1,0]"#),
        acc(1, 5123, 3, "VEC4", ""),
        acc(2, 5123, 3, "VEC4", ""),
        acc(3, 5126, 3, "VEC4", ""),
        acc(4, 5126, 3, "VEC4", ""),
        acc(5, 5126, 2, "SCALAR", r#","min":[0],"max":[1]"#),
        acc(6, 5126, 2, "VEC4", ""),
    ]
    .join(",");
    let joints: Vec<String> = (0..6)
        .map(|i| {
            let child = if i < 5 {
                format!(r#","children":[{}]"#, i + 1)
            } else {
                String::new()
            };
            format!(r#"{{"name":"j{i}","translation":[0,0.2,0]{child}}}"#)
        })
        .collect();
    let json = format!(
        r#"{{"asset":{{"version":"2.0"}},"scene":0,"scenes":[{{"nodes":[0,6]}}],
"nodes":[{},{{"name":"skinned","mesh":0,"skin":0}}],
"skins":[{{"joints":[0,1,2,3,4,5]}}],
"meshes":[{{"name":"six","primitives":[{{"attributes":{{"POSITION":0,"JOINTS_0":1,"JOINTS_1":2,"WEIGHTS_0":3,"WEIGHTS_1":4}}}}]}}],
"animations":[{{"name":"bend","samplers":[{{"input":5,"output":6}}],"channels":[{{"sampler":0,"target":{{"node":2,"path":"rotation"}}}}]}}],
"buffers":[{{"uri":"six.bin","byteLength":{}}}],"bufferViews":[{views}],"accessors":[{accessors}]}}"#,
        joints.join(","),
        bin.len()
    );
    let path = dir.join("six.gltf");
    std::fs::write(&path, json).unwrap();
    path
}

#[test]
fn eight_influences_from_the_command_line() {
    let gltf = write_six_influence_gltf();
    let file = gltf.to_str().unwrap();
    // Default: folded to four, with the importer's warning.
    let o = sinew(&["inspect", file]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("up to 4 influences"), "{text}");
    assert!(text.contains("more than 4 influences"), "{text}");
    // Eight kept: all six, no warning.
    let o = sinew(&["inspect", "--influences", "8", file]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("up to 6 influences"), "{text}");
    assert!(!text.contains("lost weight"), "{text}");
    // The skinned render of the eight-influence mesh, LBS and DQS.
    let png = gltf.with_extension("png");
    let o = sinew(&[
        "render",
        file,
        "--influences",
        "8",
        "--skin",
        "both",
        "--time",
        "0.5",
        "--size",
        "64",
        "-o",
        png.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Two 64-pixel panels (LBS, DQS) with a title above and captions below.
    let (w, h) = png_size(&png);
    assert_eq!(w, 2 * 64);
    assert!(h > 64 + 8, "{h}");
    let o = sinew(&["inspect", "--influences", "5", file]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("must be 4 or 8"), "{}", stderr(&o));
    std::fs::remove_dir_all(gltf.parent().unwrap()).ok();
}

/// The number that follows `key` in `text`.
fn figure(text: &str, key: &str) -> f32 {
    let at = text
        .find(key)
        .unwrap_or_else(|| panic!("{key:?} missing in {text}"));
    let rest = text[at + key.len()..].trim_start();
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
        .unwrap_or(rest.len());
    rest[..end]
        .parse()
        .unwrap_or_else(|e| panic!("{key:?} in {text}: {e}"))
}

/// `sinew ik` in `dir` with `extra` arguments: a 4 x 100 px strip whose
/// rows and figures say that foot placement keeps the soles out of the
/// steps (and that without it they go in), and that the look-at keeps the
/// eyes on the target.
fn ik_strip(dir: &Path, extra: &[&str]) -> Output {
    let o = Command::new(env!("CARGO_BIN_EXE_sinew"))
        .current_dir(dir)
        .args(
            [
                &["ik", "--frames", "4", "--cell", "100", "--out", "ik.png"][..],
                extra,
            ]
            .concat(),
        )
        .output()
        .expect("the sinew binary runs");
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let rows: Vec<&str> = out.lines().collect();
    assert_eq!(rows.len(), 4, "{out}");
    let off = figure(rows[0], "max foot penetration");
    let on = figure(rows[1], "max foot penetration");
    assert!(
        rows[0].starts_with("row 1, foot placement off") && off > 20.0,
        "{out}"
    );
    assert!(
        rows[1].starts_with("row 2, foot placement on") && on <= 1.0,
        "{out}"
    );
    let error = figure(rows[2], "max look-at angle error");
    let free = figure(rows[2], "walk alone:");
    assert!(error <= 0.5 && free > 10.0, "{out}");
    // Four 100-pixel cells wide; a title band (38 px), then three rows of
    // a caption band (26 px) and a cell each, and a 6 px margin.
    let png_path = dir.join("ik.png");
    assert_eq!(png_size(&png_path), (400, 38 + 3 * (26 + 100) + 6));
    assert!(has_ink(&png_path, 0..30), "no title");
    for row in 0..3 {
        let top = 38 + row * 126 + 26;
        assert!(has_ink(&png_path, top..top + 100), "row {row} is empty");
    }
    std::fs::remove_file(&png_path).ok();
    o
}

#[test]
fn ik_strip_on_the_procedural_walk_and_on_cmu() {
    // A directory inside one of our own, so that its `..` (where the tool
    // looks for shared/data) has no data whatever the temporary folder holds:
    // the procedural walk, said on stderr.
    let root = std::env::temp_dir().join(format!("sinew-ik-{}", std::process::id()));
    let dir = root.join("work");
    std::fs::create_dir_all(&dir).unwrap();
    let o = ik_strip(&dir, &[]);
    assert!(
        stdout(&o).contains("procedural humanoid's walk"),
        "{}",
        stdout(&o)
    );
    assert!(
        stderr(&o).contains("using the procedural humanoid's walk"),
        "{}",
        stderr(&o)
    );
    if let Some(d) = data() {
        let bvh = d.join("bvh/cmu/mb-friendly/02_01.bvh");
        let o = ik_strip(&dir, &["--bvh", bvh.to_str().unwrap()]);
        assert!(stdout(&o).contains("02_01"), "{}", stdout(&o));
        assert!(stderr(&o).is_empty(), "{}", stderr(&o));
    }
    std::fs::remove_dir_all(&root).ok();
}

/// `sinew match` with no data beside it: the procedural humanoid's
/// locomotion as a database, the four paths driven with searches and
/// transitions, the straight path followed within a few tens of
/// centimetres, and the PNG, container and feature export written.
#[test]
fn match_drives_the_procedural_humanoid_along_the_paths() {
    let root = std::env::temp_dir().join(format!("sinew-match-{}", std::process::id()));
    let dir = root.join("work");
    std::fs::create_dir_all(&dir).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_sinew"))
        .current_dir(&dir)
        .args([
            "match",
            "--seconds",
            "4",
            "--png",
            "m.png",
            "--save-db",
            "m.sinewmmd",
            "--export-features",
            "m.smmf",
        ])
        .output()
        .expect("the sinew binary runs");
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("using the procedural humanoid's locomotion clips"),
        "{out}"
    );
    assert!(out.contains("database: 10 clips"), "{out}");
    for path in ["straight", "circle", "zig-zag", "stop and go"] {
        let line = out
            .lines()
            .find(|l| l.starts_with(path))
            .unwrap_or_else(|| panic!("no {path} line in {out}"));
        let searches: f32 = line
            .split_whitespace()
            .nth(path.split(' ').count())
            .unwrap()
            .parse()
            .unwrap();
        assert!(searches >= 20.0, "{line}");
        assert!(figure(line, "distance to path mean") < 1.0, "{line}");
    }
    let straight = out.lines().find(|l| l.starts_with("straight")).unwrap();
    assert!(
        figure(straight, "distance to path mean") < 0.3,
        "{straight}"
    );
    let db = std::fs::read(dir.join("m.sinewmmd")).unwrap();
    let owned = sinew_std::matching::OwnedDatabase::from_bytes(&db).unwrap();
    assert_eq!(owned.view().feature_count(), 27);
    let smmf = std::fs::read(dir.join("m.smmf")).unwrap();
    assert_eq!(&smmf[..4], b"SMMF");
    let (w, h) = png_size(&dir.join("m.png"));
    assert!(w >= 1000 && h >= 400, "{w}x{h}");
    std::fs::remove_dir_all(&root).ok();
}

/// `sinew secondary`: a 4 x 100 px strip of four rows whose figures say
/// that the spring tail keeps its bone lengths, trails the run and comes to
/// rest, that the cape's edges stay within a few percent of their length,
/// and that the pushed ragdoll strays and comes back towards the walk.
#[test]
fn secondary_strip_shows_springs_cloth_and_a_pushed_ragdoll() {
    let dir = std::env::temp_dir().join(format!("sinew-secondary-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_sinew"))
        .current_dir(&dir)
        .args([
            "secondary",
            "--frames",
            "4",
            "--cell",
            "100",
            "--out",
            "s.png",
        ])
        .output()
        .expect("the sinew binary runs");
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let rows: Vec<&str> = out.lines().collect();
    assert_eq!(rows.len(), 5, "{out}");
    assert!(rows[1].starts_with("row 2, spring tail"), "{out}");
    let lag = figure(rows[1], "max tip lag");
    let stretch = figure(rows[1], "max bone stretch");
    let rest = figure(rows[1], "after the stop in");
    // It trails by centimetres, keeps its bones (within 0.01 %), and is
    // still before the end of the run.
    assert!(lag > 5.0 && stretch < 0.01 && rest < 1.6, "{out}");
    let strain = figure(rows[2], "max structural strain");
    assert!(strain < 10.0, "{out}");
    let before = figure(rows[3], "chest within");
    let after = figure(rows[3], "before the push,");
    let end = figure(rows[3], "at most after it,");
    assert!(after > 2.0 * before && end < after, "{out}");
    let png_path = dir.join("s.png");
    assert_eq!(png_size(&png_path), (400, 38 + 4 * (26 + 100) + 6));
    for row in 0..4 {
        let top = 38 + row * 126 + 26;
        assert!(has_ink(&png_path, top..top + 100), "row {row} is empty");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// `sinew shapes` in `dir` with `extra` arguments: a strip of 100 px
/// cells whose figures say that the corrective restores the bent elbow's
/// narrowest section and that delta mush changes the LBS result; returns
/// the output and the number of rows drawn.
fn shapes_strip(dir: &Path, extra: &[&str]) -> (Output, u32) {
    let o = Command::new(env!("CARGO_BIN_EXE_sinew"))
        .current_dir(dir)
        .args([&["shapes", "--cell", "100", "--out", "s.png"][..], extra].concat())
        .output()
        .expect("the sinew binary runs");
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let rows: Vec<&str> = out.lines().collect();
    assert_eq!(rows.len(), 4, "{out}");
    // Row 2: at 100 degrees LBS flattens the elbow to about cos(50°) of
    // its section; the corrective, fully on, makes it round again.
    assert!(rows[1].starts_with("row 2, corrective"), "{out}");
    let at_100 = &rows[1][rows[1].find("at 100 deg driver").expect(&out)..];
    let lbs = figure(at_100, "LBS sections");
    let fixed = figure(at_100, "with the corrective");
    assert!(lbs < 70.0 && fixed > 99.0, "{out}");
    assert!(figure(at_100, "driver weight") > 0.99, "{out}");
    // Row 3: delta mush moves the bent elbow and widens its narrowest
    // section.
    let at_120 = &rows[2][rows[2].find("at 120 deg LBS").expect(&out)..];
    let lbs = figure(at_120, "LBS sections");
    let mush = figure(at_120, "delta mush");
    assert!(mush > lbs + 2.0, "{out}");
    assert!(figure(at_120, "up to") > 0.01, "{out}");
    let drawn = if rows[0].contains("skipped") { 2 } else { 3 };
    let png_path = dir.join("s.png");
    assert_eq!(png_size(&png_path), (500, 38 + drawn * (26 + 100) + 6));
    for row in 0..drawn {
        let top = 38 + row * 126 + 26;
        assert!(has_ink(&png_path, top..top + 100), "row {row} is empty");
    }
    std::fs::remove_file(&png_path).ok();
    (o, drawn)
}

#[test]
fn shapes_strip_shows_a_corrective_and_delta_mush_and_the_robot_face() {
    // As for `ik`: a directory whose `..` has no data draws rows 2 and 3,
    // saying so on stderr.
    let root = std::env::temp_dir().join(format!("sinew-shapes-{}", std::process::id()));
    let dir = root.join("work");
    std::fs::create_dir_all(&dir).unwrap();
    let (o, drawn) = shapes_strip(&dir, &[]);
    assert_eq!(drawn, 2);
    assert!(
        stderr(&o).contains("drawing rows 2 and 3 only"),
        "{}",
        stderr(&o)
    );
    if let Some(d) = data() {
        let glb = d.join("gltf/threejs-robotexpressive/RobotExpressive.glb");
        let (o, drawn) = shapes_strip(&dir, &["--gltf", glb.to_str().unwrap()]);
        assert_eq!(drawn, 3);
        let out = stdout(&o);
        let row = out.lines().next().unwrap();
        // The face part moves every vertex for Angry and Surprised, most
        // for Sad; the neutral cell moves nothing, the others do.
        assert!(
            row.contains("Head_4 (Angry 564, Surprised 564, Sad 494)"),
            "{out}"
        );
        assert_eq!(figure(row, "weights [0.00 0.00 0.00] moves"), 0.0, "{out}");
        assert!(figure(row, "weights [1.00 0.00 0.00] moves") > 0.0, "{out}");
        assert!(figure(row, "max shape displacement") > 0.0, "{out}");
    }
    std::fs::remove_dir_all(&root).ok();
}

/// A glTF file (and its .bin) with one node `arm`: a CUBICSPLINE
/// translation and a STEP rotation channel.
fn write_curve_gltf() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sinew-curve-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut bin: Vec<u8> = Vec::new();
    let f32s = |bin: &mut Vec<u8>, v: &[f32]| v.iter().for_each(|x| bin.extend(x.to_le_bytes()));
    f32s(&mut bin, &[0.0, 0.5, 1.25]); // 0: key times
    #[rustfmt::skip]
    f32s(&mut bin, &[
        0.0, 0.0, 0.0,  0.0, 1.0, 0.0,  1.0, 0.0, 0.0,
        0.0, 2.0, 0.0,  0.5, 1.5, 0.0,  0.0, -1.0, 0.5,
        1.0, 0.0, 0.0,  1.0, 0.5, 0.25, 0.0, 0.0, 0.0,
    ]); // 12: translation triplets
    #[rustfmt::skip]
    f32s(&mut bin, &[
        0.0, 0.0, 0.0, 1.0,
        0.0, 0.6, 0.0, 0.8,
        0.0, 1.0, 0.0, 0.0,
    ]); // 120: rotations
    std::fs::write(dir.join("arm.bin"), &bin).unwrap();
    let json = format!(
        r#"{{"asset":{{"version":"2.0"}},"nodes":[{{"name":"arm"}}],
"animations":[{{"name":"wave","samplers":[{{"input":0,"output":1,"interpolation":"CUBICSPLINE"}},{{"input":0,"output":2,"interpolation":"STEP"}}],
"channels":[{{"sampler":0,"target":{{"node":0,"path":"translation"}}}},{{"sampler":1,"target":{{"node":0,"path":"rotation"}}}}]}}],
"buffers":[{{"uri":"arm.bin","byteLength":{}}}],
"bufferViews":[{{"buffer":0,"byteOffset":0,"byteLength":12}},{{"buffer":0,"byteOffset":12,"byteLength":108}},{{"buffer":0,"byteOffset":120,"byteLength":48}}],
"accessors":[{{"bufferView":0,"componentType":5126,"count":3,"type":"SCALAR","min":[0],"max":[1.25]}},
{{"bufferView":1,"componentType":5126,"count":9,"type":"VEC3"}},
{{"bufferView":2,"componentType":5126,"count":3,"type":"VEC4"}}]}}"#,
        bin.len()
    );
    let path = dir.join("arm.gltf");
    std::fs::write(&path, json).unwrap();
    path
}

#[test]
fn plot_draws_keyframe_curves_from_a_file_and_the_built_in_example() {
    let gltf = write_curve_gltf();
    let file = gltf.to_str().unwrap();
    let png = gltf.with_extension("png");
    let out = png.to_str().unwrap();
    for channel in ["arm/translation", "0/translation/y", "arm/rotation/w"] {
        let _ = std::fs::remove_file(&png);
        let o = sinew(&["plot", "--curve", file, "--channel", channel, "-o", out]);
        assert!(o.status.success(), "{channel}: {}", stderr(&o));
        assert!(
            stdout(&o).starts_with(&format!("wrote {out}")),
            "{}",
            stdout(&o)
        );
        assert_eq!(png_size(&png), (1000, 460));
        assert!(has_ink(&png, 0..30), "no title");
    }
    let o = sinew(&["plot", "--curve", file, "--list"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("animation 0 \"wave\""), "{text}");
    assert!(
        text.contains("arm/translation") && text.contains("CubicSpline"),
        "{text}"
    );
    assert!(
        text.contains("arm/rotation") && text.contains("Step"),
        "{text}"
    );
    let o = sinew(&["plot", "--curve", file, "--channel", "arm/scale", "-o", out]);
    assert_one_line_error(&o, "no curve \"arm/scale\" in");
    assert!(
        stderr(&o).contains("(channels: arm/translation, arm/rotation)"),
        "{}",
        stderr(&o)
    );
    let o = sinew(&[
        "plot",
        "--curve",
        file,
        "--channel",
        "arm/rotation/v",
        "-o",
        out,
    ]);
    assert_one_line_error(
        &o,
        "arm/rotation has no component \"v\" (components: x, y, z, w)",
    );
    let o = sinew(&["plot", "--curve", file, "-o", out]);
    assert_one_line_error(
        &o,
        "needs --channel (channels: arm/translation, arm/rotation)",
    );
    // Without a file: the built-in CUBICSPLINE and STEP example.
    let _ = std::fs::remove_file(&png);
    let o = sinew(&["plot", "--curve", "-o", out]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("example/cubic and example/step"),
        "{}",
        stdout(&o)
    );
    assert_eq!(png_size(&png), (1000, 460));
    let _ = std::fs::remove_dir_all(gltf.parent().unwrap());
}

/// `sinew graph`: the built-in locomotion graph walks, runs, jumps (its
/// fall cut short by landing) and stops, one line per state change and a
/// chart; a user's graph with a bad field is one line naming it.
#[test]
fn graph_runs_the_locomotion_script_and_names_bad_fields() {
    let dir = std::env::temp_dir().join(format!("sinew-graph-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_sinew"))
            .current_dir(&dir)
            .arg("graph")
            .args(args)
            .output()
            .expect("the sinew binary runs")
    };
    let o = run(&["--out", "g.png"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("machine airborne (entry jump)"), "{out}");
    assert!(
        out.contains("jump -> fall when exit time 1; 0.25 s smooth-step, interruptible"),
        "{out}"
    );
    let changes: Vec<&str> = out
        .lines()
        .filter(|l| l.contains(" s  ") && l.contains("->"))
        .map(|l| l.split("  ").nth(1).unwrap_or(""))
        .collect();
    let arrows: Vec<String> = changes
        .iter()
        .map(|c| c.split(" (").next().unwrap_or("").to_string())
        .collect();
    assert_eq!(
        arrows,
        [
            "idle -> move",
            "move -> airborne/jump",
            "airborne/jump -> airborne/fall",
            "airborne/fall -> airborne/land",
            "airborne/land -> move",
            "move -> idle"
        ],
        "{out}"
    );
    assert_eq!(png_size(&dir.join("g.png")), (1000, 420));

    // A user file with its own script.
    let file = dir.join("mine.json");
    std::fs::write(
        &file,
        r#"{ "params": [ { "name": "go", "type": "trigger" } ],
             "nodes": [ { "name": "i", "clip": "idle" }, { "name": "r", "clip": "run" } ],
             "machine": { "name": "m", "entry": "a", "states": [ { "name": "a", "node": "i" }, { "name": "b", "node": "r" } ],
               "transitions": [ { "from": "a", "to": "b", "when": [ { "trigger": "go" } ], "duration": 0.1, "blend": "linear" } ] } }"#,
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let o = run(&[
        f,
        "--script",
        "0.5:go",
        "--seconds",
        "1",
        "--out",
        "m.png",
        "--save-graph",
        "m.sinewgrf",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // The saved container is the graph: the core reads it back with its
    // parameter and its two states.
    let saved = std::fs::read(dir.join("m.sinewgrf")).unwrap();
    let words: Vec<u128> = saved
        .chunks(16)
        .map(|c| {
            let mut w = [0u8; 16];
            w[..c.len()].copy_from_slice(c);
            u128::from_le_bytes(w)
        })
        .collect();
    let aligned = &bytemuck::cast_slice::<u128, u8>(&words)[..saved.len()];
    let g = sinew_core::graph::Graph::from_bytes(aligned).expect("a saved graph loads");
    assert_eq!((g.param_count(), g.state_count()), (1, 2));
    assert_eq!(g.find_param("go"), Some(0));
    assert!(
        stdout(&o).contains("0.500 s  a -> b (0.1 s linear)"),
        "{}",
        stdout(&o)
    );
    let o = run(&[f, "--script", "0.5:nope"]);
    assert_one_line_error(&o, "parameter \"nope\"");
    let o = run(&[f, "--script", "x:go"]);
    assert_one_line_error(&o, "script item \"x:go\"");
    std::fs::write(
        &file,
        std::fs::read_to_string(&file)
            .unwrap()
            .replace("\"run\"", "\"sprint\""),
    )
    .unwrap();
    let o = run(&[f]);
    assert_one_line_error(&o, "nodes[1].clip: unknown clip \"sprint\"");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn crowd_runs_with_and_without_lod_and_steers() {
    let o = sinew(&[
        "crowd",
        "--characters",
        "64",
        "--seconds",
        "0.5",
        "--threads",
        "2",
        "--steer",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for want in [
        "64 characters, compressed clips",
        "no LOD ",
        "LOD shares: joint level 0/1/2",
        "steering (64 agents crossing",
        "wall time per frame",
    ] {
        assert!(out.contains(want), "{want:?} in {out}");
    }
    // The same run on one thread: the same checksums.
    let one = sinew(&[
        "crowd",
        "--characters",
        "64",
        "--seconds",
        "0.5",
        "--threads",
        "1",
        "--steer",
    ]);
    let sums = |s: &str| -> Vec<String> {
        s.lines()
            .filter(|l| l.starts_with("no LOD  ") || l.starts_with("LOD     "))
            .filter_map(|l| l.split_whitespace().last().map(str::to_string))
            .collect()
    };
    assert_eq!(sums(&out), sums(&stdout(&one)), "{out}");
    assert_eq!(sums(&out).len(), 2, "{out}");
    assert_one_line_error(&sinew(&["crowd", "--seconds", "0"]), "--seconds must be in");
    assert_one_line_error(
        &sinew(&["crowd", "--characters", "64", "--budget", "1"]),
        "--budget must be at least",
    );
}
