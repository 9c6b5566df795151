//! Motion-matching search benches (single thread).
//!
//! The database is built from the 56 CMU clips of one skeleton in
//! `../shared/data/bvh/cmu/daz-friendly` (12,449 frames at 60 Hz, the
//! standard 27 features) and grown to 10k, 30k and 100k frames by repeating
//! its frames with noise (σ ≈ 0.03 in normalized units, so copies are near
//! but not equal); the queries are the 64 first searches the controller
//! made driving the zig-zag and circle paths of `sinew match`. Each
//! iteration runs every query, so criterion's time / 64 is one search.
//!
//! Group `mm_search/<frames>`:
//! - `scalar-row-major`: the usual first implementation, a scalar loop over
//!   a row-major copy of the features;
//! - `brute-lanes`: [`Database::search_brute`], frames in lanes;
//! - `pruned`: [`Database::search`], exact, with the two levels of boxes;
//! - `pruned-bounded`: the same with the bound the controller gave each
//!   search (the playing frame's cost less the keep margin), as the
//!   controller runs it; the brute force costs the same with or without.
//!
//! All three return the same frames (checked before timing). Skipped, with
//! a message, when the CMU clips are absent.
//!
//! ```text
//! cargo bench -p sinew-benches --bench motion_matching -- --warm-up-time 1 --measurement-time 3
//! ```

use std::hint::black_box;
use std::path::Path;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use sinew_benches::config;
use sinew_cli::matching::{bvh_files, drive, load_clips, Path2};
use sinew_core::clip::RawClip;
use sinew_core::motion_matching::MatcherConfig;
use sinew_std::matching::{self, BuildOptions};
use sinew_std::OwnedClip;

const QUERIES: usize = 64;

/// The usual first implementation: a scalar loop over row-major features.
fn scalar_search(rows: &[f32], searchable: &[bool], q: &[f32]) -> Option<(usize, f32)> {
    let mut best: Option<(usize, f32)> = None;
    let mut least = f32::INFINITY;
    for (i, row) in rows.chunks_exact(q.len()).enumerate() {
        if !searchable[i] {
            continue;
        }
        let mut c = 0.0f32;
        for (x, y) in row.iter().zip(q) {
            let d = y - x;
            c += d * d;
        }
        if c < least {
            least = c;
            best = Some((i, c));
        }
    }
    best
}

fn bench_search(c: &mut Criterion) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/bvh/cmu/daz-friendly");
    let Ok(files) = bvh_files(&dir) else {
        eprintln!(
            "skipped: mm_search needs ../shared/data/bvh/cmu/daz-friendly, which was not found"
        );
        return;
    };
    let (skeleton, clips, _) = load_clips(&files, 0.01).expect("CMU clips load");
    let sk = skeleton.view();
    let views: Vec<RawClip<'_>> = clips.iter().map(OwnedClip::view).collect();
    let opts = BuildOptions::standard(&sk).expect("schema");
    let base = matching::build(&sk, &views, &opts).expect("database");
    let base = base.view();
    let mut queries = Vec::new();
    let mut bounds = Vec::new();
    for path in [Path2::ZigZag, Path2::Circle] {
        let r = drive(&sk, &base, &views, path, 10.0, MatcherConfig::default()).expect("drive");
        queries.extend(r.queries.into_iter().take(QUERIES / 2));
        bounds.extend(r.bounds.into_iter().take(QUERIES / 2));
    }
    let mut seed = 0x2545_f491;
    let mut group = c.benchmark_group("mm_search");
    for frames in [10_000usize, 30_000, 100_000] {
        let grown = matching::grow(&base, frames, 0.05, seed).expect("grown database");
        seed = seed.wrapping_mul(747_796_405).wrapping_add(1);
        let db = grown.view();
        let fc = db.feature_count();
        let mut rows = vec![0.0f32; frames * fc];
        for (i, row) in rows.chunks_exact_mut(fc).enumerate() {
            db.frame_features(i, row).expect("frame");
        }
        let searchable: Vec<bool> = (0..frames).map(|i| db.is_searchable(i)).collect();
        for q in &queries {
            let p = db.search(q, f32::INFINITY).expect("search");
            assert_eq!(p, db.search_brute(q, f32::INFINITY).expect("brute"));
            let s = scalar_search(&rows, &searchable, q);
            assert_eq!(p.map(|m| (m.frame as usize, m.cost)), s);
        }
        for (q, &bound) in queries.iter().zip(&bounds) {
            assert_eq!(db.search(q, bound).ok(), db.search_brute(q, bound).ok());
        }
        group.throughput(Throughput::Elements(queries.len() as u64));
        group.bench_with_input(
            BenchmarkId::new("scalar-row-major", frames),
            &(),
            |b, ()| {
                b.iter(|| {
                    for q in &queries {
                        black_box(scalar_search(black_box(&rows), &searchable, q));
                    }
                });
            },
        );
        group.bench_with_input(BenchmarkId::new("brute-lanes", frames), &(), |b, ()| {
            b.iter(|| {
                for q in &queries {
                    black_box(db.search_brute(black_box(q), f32::INFINITY).ok());
                }
            });
        });
        group.bench_with_input(BenchmarkId::new("pruned", frames), &(), |b, ()| {
            b.iter(|| {
                for q in &queries {
                    black_box(db.search(black_box(q), f32::INFINITY).ok());
                }
            });
        });
        group.bench_with_input(BenchmarkId::new("pruned-bounded", frames), &(), |b, ()| {
            b.iter(|| {
                for (q, &bound) in queries.iter().zip(&bounds) {
                    black_box(db.search(black_box(q), bound).ok());
                }
            });
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_search
}
criterion_main!(benches);
