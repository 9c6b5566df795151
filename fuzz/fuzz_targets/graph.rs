//! A graph container (`SINEWGRF`): `Graph::from_bytes` returns an error or
//! a graph whose every record reads back, which makes an instance, takes
//! a value and a trigger on each parameter (a NaN value is an error), and
//! plays a few frames over three one-block clips (four joints) and an
//! identity rest pose: each update is `Ok` with finite, unit-rotation output, or an
//! error, never a panic. Input = the container; its last four bytes also
//! pick the parameter values.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sinew_core::clip::RawClip;
use sinew_core::graph::{Graph, GraphBuffers, GraphContext, GraphInstance};
use sinew_core::mix::transition::InertialBlock;
use sinew_core::{f32x4, Quat, SoaTransform, Transform, Vec3};

/// Scratch poses beyond this are a forged graph's: not worth the memory.
const MAX_SCRATCH: usize = 4096;

/// Frames of a 10 Hz clip that turns about `axis` as it moves along x.
fn keys(frames: usize, axis: Vec3) -> Vec<SoaTransform> {
    (0..frames)
        .map(|f| {
            let a = 0.3 * f as f32;
            let mut block = SoaTransform::IDENTITY;
            for lane in 0..2 {
                block.set(
                    lane,
                    &Transform {
                        translation: Vec3::new(0.1 * f as f32, lane as f32, 0.0),
                        rotation: Quat::from_axis_angle(axis, a),
                        scale: Vec3::new(1.0, 1.0, 1.0),
                    },
                );
            }
            block
        })
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let bytes = sinew_fuzz::aligned(data);
    let Ok(g) = Graph::from_bytes(bytes.as_slice()) else {
        return;
    };
    for i in 0..g.param_count() {
        assert!(g.param(i).is_some());
    }
    for i in 0..g.node_count() {
        assert!(g.node(i).is_some());
    }
    for i in 0..g.machine_count() {
        assert!(g.machine(i).is_some());
    }
    for i in 0..g.state_count() {
        assert!(g.state(i).is_some());
    }
    for i in 0..g.transition_count() {
        assert!(g.transition(i).is_some());
    }
    for i in 0..g.condition_count() {
        assert!(g.condition(i).is_some());
    }
    assert!(g.param(g.param_count()).is_none() && g.state(g.state_count()).is_none());

    let Ok(mut inst) = GraphInstance::new(&g) else {
        return;
    };
    let tail = data.len().saturating_sub(4);
    let value = sinew_fuzz::Input::new(&data[tail..]).f32();
    for p in 0..g.param_count() {
        let set = inst.set_param(&g, p, value);
        if value.is_nan() {
            assert!(set.is_err(), "parameter {p} took NaN");
        }
        let _ = inst.fire(&g, p);
    }
    if g.clip_count() > 3 || g.scratch_poses() > MAX_SCRATCH {
        return;
    }
    let keys = [
        keys(11, Vec3::new(0.0, 1.0, 0.0)),
        keys(21, Vec3::new(1.0, 0.0, 0.0)),
        keys(6, Vec3::new(0.0, 0.0, 1.0)),
    ];
    let clips: Vec<RawClip<'_>> = keys
        .iter()
        .map(|k| RawClip::new(10.0, 1, k).expect("a valid clip"))
        .collect();
    let rest = [SoaTransform::IDENTITY];
    let ctx = GraphContext {
        graph: &g,
        clips: &clips,
        events: &[],
        rest: &rest,
    };
    let mut scratch = vec![SoaTransform::IDENTITY; g.scratch_poses()];
    let mut history = [SoaTransform::IDENTITY; 2];
    let mut inertial = [InertialBlock::default()];
    let mut mask = [f32x4::ZERO; 2];
    let mut out = [SoaTransform::IDENTITY];
    for dt in [0.0, 0.05, 0.3, 1.0, 0.05] {
        let mut buffers = GraphBuffers {
            scratch: &mut scratch,
            history: &mut history,
            inertial: &mut inertial,
            mask: &mut mask,
        };
        if inst.update(dt, &ctx, &mut buffers, &mut out, &mut []).is_err() {
            continue;
        }
        for lane in 0..4 {
            let t = out[0].get(lane);
            let r = t.rotation.to_array();
            assert!(
                t.translation.to_array().iter().chain(&r).all(|x| x.is_finite()),
                "lane {lane}: {t:?}"
            );
            let norm2: f32 = r.iter().map(|x| x * x).sum();
            assert!((norm2 - 1.0).abs() < 1e-3, "lane {lane}: rotation {r:?}");
        }
    }
});
