//! Building and running C programs against the static library, shared by
//! the C tests (`#[path = "../support/c.rs"] mod c;`).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The target directory this test was built in (`…/target` of
/// `…/target/<profile>/deps/c_abi-…`), from the test binary's own absolute
/// path: `CARGO_TARGET_DIR` may be relative to wherever cargo was started.
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    exe.ancestors()
        .nth(3)
        .expect("test binary lives in target/<profile>/deps")
        .to_path_buf()
}

/// Builds the static library with the same cargo and flags as this test,
/// and returns its path from cargo's own artifact report.
pub fn build_static_library() -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(root())
        .args(["build", "-p", "sinew-capi", "--message-format=json"])
        .arg("--target-dir")
        .arg(target_dir())
        .output()
        .expect("run cargo build -p sinew-capi");
    assert!(
        out.status.success(),
        "cargo build -p sinew-capi failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = String::from_utf8_lossy(&out.stdout);
    report
        .lines()
        .filter(|l| l.contains("\"compiler-artifact\"") && l.contains("sinew-capi"))
        .flat_map(|l| l.split('"'))
        .find(|s| s.ends_with("libsinew.a"))
        .map(PathBuf::from)
        .expect("cargo reports libsinew.a")
}

pub fn compile(source: &Path, lib: &Path, exe: &Path) {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out = Command::new(&cc)
        .args([
            "-std=c11",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
            "-g",
            "-O1",
        ])
        .arg("-I")
        .arg(root().join("include"))
        .arg(source)
        .arg(lib)
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(exe)
        .output()
        .unwrap_or_else(|e| panic!("run the C compiler `{cc}`: {e}"));
    assert!(
        out.status.success(),
        "compiling {} failed:\n{}",
        source.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn have(cmd: &str) -> bool {
    Command::new(cmd)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

pub fn run(exe: &Path, args: &[&Path]) -> String {
    let valgrind = have("valgrind");
    if !valgrind {
        assert!(
            std::env::var_os("SINEW_REQUIRE_VALGRIND").is_none(),
            "SINEW_REQUIRE_VALGRIND is set but valgrind is not installed"
        );
        eprintln!("note: valgrind not found; running the C test without it");
    }
    let out = if valgrind {
        Command::new("valgrind")
            .args([
                "--error-exitcode=1",
                "--leak-check=full",
                "--errors-for-leak-kinds=definite",
                "-q",
            ])
            .arg(exe)
            .args(args)
            .output()
    } else {
        Command::new(exe).args(args).output()
    }
    .expect("run the C test");
    assert!(
        out.status.success(),
        "the C test failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("C output is UTF-8")
}
