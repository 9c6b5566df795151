//! Retargeting bench: the run-time kernel (lanes) and its scalar twin, one
//! pose per iteration. Throughput is in target joints, so criterion's
//! "thrpt" line inverts to ns per joint.
//!
//! Data: the CMU walk 02_01 (daz-friendly BVH, 57 joints) onto GDQuest's
//! mannequin (45 joints), rest directions aligned, 64 frames of the clip
//! cycled; without ../shared/data, the procedural humanoid onto itself.
//!
//! ```text
//! cargo bench -p sinew-benches --bench retarget -- --noplot
//! ```

use std::hint::black_box;
use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use sinew_benches::config;
use sinew_core::retarget::{self, reference, MapOptions};
use sinew_core::SoaTransform;
use sinew_std::import::load::{load_files, LoadOptions};
use sinew_std::retarget::{bind_pose_skeleton, OwnedMap};
use sinew_std::{Asset, Humanoid};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data");

/// (source, target, label): CMU onto the mannequin when the data is there.
fn assets() -> (Asset, Asset, &'static str) {
    let data = Path::new(DATA);
    let bvh = data.join("bvh/cmu/daz-friendly/02_01.bvh");
    let glb = data.join("gltf/gdquest-mannequiny/mannequiny-0.3.0.glb");
    if bvh.is_file() && glb.is_file() {
        let load = |p: &Path| {
            load_files(&[p.to_path_buf()], &LoadOptions::default())
                .expect("load")
                .remove(0)
        };
        let source = load(&bvh);
        let mut target = load(&glb);
        if let Some(bind) = bind_pose_skeleton(&target).expect("bind pose") {
            target.skeleton = bind;
        }
        (source, target, "cmu_to_mannequin")
    } else {
        eprintln!("retarget bench: ../shared/data not found, timing the humanoid onto itself");
        let h = Asset::from(Humanoid::default_rate());
        (h.clone(), h, "humanoid_to_humanoid")
    }
}

fn bench(c: &mut Criterion) {
    let (source, target, label) = assets();
    let (s, t) = (source.skeleton.view(), target.skeleton.view());
    let options = MapOptions {
        align_rest_directions: true,
        ..MapOptions::default()
    };
    let map = OwnedMap::build(&s, &t, &[], &options).expect("map");
    let view = map.view().expect("view");
    let n = s.soa_count();
    let clip = &source.clips[0];
    let frames: Vec<&[SoaTransform]> = clip.keys().chunks(n).take(64).collect();
    let mut out = vec![SoaTransform::IDENTITY; t.soa_count()];
    let mut g = c.benchmark_group("retarget");
    g.throughput(Throughput::Elements(t.joint_count() as u64));
    let mut i = 0;
    g.bench_function(format!("{label}/lanes"), |b| {
        b.iter(|| {
            i = (i + 1) % frames.len();
            retarget::retarget(&view, black_box(frames[i]), black_box(&mut out)).expect("run");
        })
    });
    g.bench_function(format!("{label}/scalar"), |b| {
        b.iter(|| {
            i = (i + 1) % frames.len();
            reference::retarget(&view, black_box(frames[i]), black_box(&mut out)).expect("run");
        })
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench
}
criterion_main!(benches);
