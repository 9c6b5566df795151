//! Says which real data sets the test suite found under `../shared/data`.
//!
//! Tests that need real data skip (pass) when it is absent, and the test
//! harness captures their "skipped" line, so a run without the data would
//! look the same as a full one. This binary runs without the harness, so
//! its lines always reach the summary. With `SINEW_REQUIRE_DATA=1` in the
//! environment a missing data set fails it.

use std::path::Path;

/// The data sets the tests read, and what each one feeds.
const SETS: [(&str, &str); 4] = [
    ("bvh/cmu", "BVH import, compression tables, foot placement"),
    ("bvh", "BVH import"),
    ("gltf", "glTF import, skinned meshes, the Fox example"),
    ("ozz", "ozz import and the ozz-animation comparison"),
];

fn count_files(dir: &Path) -> usize {
    let mut n = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                n += 1;
            }
        }
    }
    n
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data");
    let require = std::env::var("SINEW_REQUIRE_DATA").is_ok_and(|v| v == "1");
    let mut missing = 0;
    for (sub, feeds) in SETS {
        let dir = root.join(sub);
        if dir.is_dir() {
            println!("real data: {sub} present ({} files)", count_files(&dir));
        } else {
            missing += 1;
            println!("real data: {sub} MISSING: the tests of {feeds} are skipped");
        }
    }
    if missing > 0 && require {
        panic!(
            "{missing} real data set(s) missing under {} and SINEW_REQUIRE_DATA=1",
            root.display()
        );
    }
}
