//! Importer benches: BVH text to a sinew skeleton and clip.
//!
//! `import/bvh/cmu-61` parses all 61 CMU clips of `../shared/data/bvh/cmu`
//! (read into memory first, so no IO is timed) on one thread; throughput is
//! in bytes of BVH text, so criterion's "thrpt" line reads as MB/s per thread.
//!
//! ```text
//! cargo bench -p sinew-benches --bench import -- --noplot
//! ```
//!
//! Without the data folder the bench prints that it was skipped and does nothing.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use sinew_std::import::bvh::{self, BvhOptions};

/// The CMU clips as (path, text), sorted by path; `None` when the data is absent.
fn cmu_clips() -> Option<Vec<(PathBuf, String)>> {
    let root = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/data/bvh/cmu"
    ));
    let mut files = Vec::new();
    for sub in ["daz-friendly", "mb-friendly"] {
        let Ok(dir) = std::fs::read_dir(root.join(sub)) else {
            return None;
        };
        for entry in dir.flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "bvh") {
                let text = std::fs::read_to_string(&path).ok()?;
                files.push((path, text));
            }
        }
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    Some(files)
}

/// `import/bvh`: all CMU clips, one thread, throughput in bytes of text.
fn bench_bvh(c: &mut Criterion) {
    let Some(clips) = cmu_clips() else {
        eprintln!("skipped: import/bvh needs ../shared/data/bvh/cmu, which was not found");
        return;
    };
    let total: usize = clips.iter().map(|(_, t)| t.len()).sum();
    let opts = BvhOptions::default();
    // Fail loudly before timing if any clip does not import.
    for (path, text) in &clips {
        if let Err(e) = bvh::from_slice(text.as_bytes(), path, &opts) {
            panic!("{e}");
        }
    }
    let mut group = c.benchmark_group("import/bvh");
    group.throughput(Throughput::Bytes(total as u64));
    group.bench_function(format!("cmu-{}", clips.len()), |b| {
        b.iter(|| {
            for (path, text) in &clips {
                let asset = bvh::from_slice(black_box(text.as_bytes()), path, &opts);
                black_box(asset.is_ok());
            }
        })
    });
    group.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(10))
        .sample_size(10)
}

criterion_group! {
    name = import;
    config = config();
    targets = bench_bvh
}
criterion_main!(import);
