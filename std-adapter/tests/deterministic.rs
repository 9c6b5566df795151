//! The `deterministic` feature: poses and model matrices are the same bits
//! on every target. Each test folds a fixed procedural scene's results into
//! a checksum and compares it with the constant below, so a target that
//! computes one bit differently fails. CI runs this file on x86-64 without
//! FMA, with `-C target-cpu=x86-64-v3`, and on AArch64 under qemu.
//!
//! Without the feature the checksums depend on the target and these tests
//! only print them.
//!
//! When a kernel's arithmetic changes on purpose, the constants change:
//! run `cargo test -p sinew-std --features deterministic --test
//! deterministic -- --nocapture` and copy the printed values.

use sinew_core::blend::{self, BlendJob, BlendLayer, JointWeights};
use sinew_core::clip::{ClipSource, TimeMode};
use sinew_core::compressed::RotationFormat;
use sinew_core::fk::{self, FkJob};
use sinew_core::ik::aim::{aim_corrections_x4, Aim};
use sinew_core::ik::two_bone::{solve_many, TwoBoneGoal, TwoBoneIk, TwoBoneReport};
use sinew_core::ik::IkPose;
use sinew_core::mix::transition::SwitchJob;
use sinew_core::mix::{
    apply_additive, make_additive, mix, Decay, InertialBlock, Inertializer, MixInput, MixJob,
    MixMode,
};
use sinew_core::{f32x4, Mat4, SoaTransform, Vec3};
use sinew_std::compress::{compress, CompressOptions};
use sinew_std::crowd::{self, CrowdConfig, SinewBackend};
use sinew_std::Humanoid;

/// `sinew --characters 64 --seconds 1` with `--features deterministic`.
const CROWD: u64 = 0x5fea_f0d8_e413_224b;
/// [`scene`]'s checksum with `--features deterministic`.
const SCENE: u64 = 0xf82f_f727_d3b1_49ac;

const DETERMINISTIC: bool = cfg!(feature = "deterministic");

/// FNV-1a over the bits of `values`, as the crowd's checksum.
fn fold(hash: u64, values: &[f32]) -> u64 {
    values.iter().fold(hash, |h, v| {
        v.to_bits()
            .to_le_bytes()
            .iter()
            .fold(h, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
    })
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

fn check(name: &str, got: u64, want: u64) {
    println!("{name} checksum {got:016x}");
    if DETERMINISTIC {
        assert_eq!(
            got, want,
            "{name}: checksum {got:016x}, pinned {want:016x}: this target computes differently"
        );
    }
}

/// The tool's default run, small: sample (compressed clips, as the tool
/// plays them), blend and FK of 64 characters for 60 frames (the checksum
/// the CLI prints).
#[test]
fn crowd_checksum_is_pinned() {
    let h = Humanoid::default_rate();
    let clips = h.compressed_clips().unwrap();
    let views = clips.each_ref().map(|c| c.view());
    let backend = SinewBackend::with_clips(h.skeleton.view(), &views).unwrap();
    let cfg = CrowdConfig {
        characters: 64,
        seconds: 1.0,
        fps: 60.0,
        threads: Some(1),
    };
    let report = crowd::run(&backend, &cfg).unwrap();
    check("crowd", report.checksum, CROWD);
}

/// Every kernel with target-dependent arithmetic once per frame: raw and
/// compressed sampling, masked blending, the joint-angle mixer (lane
/// `asin`/`atan2`/`sin_cos`), additive layers (`acos`/`sin_cos`),
/// quintic inertialization, FK, and two-bone (8 lanes) and aim (4 lanes)
/// IK with twist and partial weights.
#[test]
fn scene_checksum_is_pinned() {
    check("scene", scene(), SCENE);
}

fn scene() -> u64 {
    let h = Humanoid::default_rate();
    let skel = h.skeleton.view();
    let n = skel.joint_count();
    let soa = skel.soa_count();
    let rest = skel.rest_pose();
    let [walk, jog, run] = [0, 1, 2].map(|i| h.clips[i].view());
    let opts = CompressOptions {
        rotation: RotationFormat::SmallestThree,
        ..CompressOptions::default()
    };
    let (jog_c, _) = compress(&skel, &jog, &opts).unwrap();
    let jog_c = jog_c.view();

    let mut hash = fold(FNV_OFFSET, &[jog_c.duration()]);

    // A mask that fades along the skeleton: lanes 0, 1/3, 2/3, 1, ...
    let mask: Vec<f32x4> = (0..soa)
        .map(|b| f32x4::new([0, 1, 2, 3].map(|l| ((b * 4 + l) % 4) as f32 / 3.0)))
        .collect();
    let mask = JointWeights::new(&mask).unwrap();

    let pose = || vec![SoaTransform::IDENTITY; soa];
    let (mut pw, mut pj, mut pr) = (pose(), pose(), pose());
    let (mut blended, mut mixed, mut delta) = (pose(), pose(), pose());
    let (mut prev_blended, mut prev_mixed) = (pose(), pose());
    let mut scratch = pose();
    let mut state = vec![InertialBlock::default(); soa];
    let mut inert = Inertializer::new(Decay::Quintic).unwrap();
    let mut models = vec![Mat4::IDENTITY; n];
    let [thigh, calf, foot] = ["thigh_l", "calf_l", "foot_l"].map(|j| skel.find_joint(j).unwrap());
    let head = skel.find_joint("head").unwrap();
    let dt = 1.0 / 30.0;

    for f in 0..24 {
        let t = f as f32 * dt;
        ClipSource::sample(&walk, t, TimeMode::Loop, rest, &mut pw).unwrap();
        ClipSource::sample(&jog_c, t * 1.3, TimeMode::Loop, rest, &mut pj).unwrap();
        ClipSource::sample(&run, t * 1.7, TimeMode::Clamp, rest, &mut pr).unwrap();
        // The compressed clip's first frame, through the stored-frame path.
        let first = jog_c.frame(0, rest, &mut scratch).unwrap();
        hash = fold(hash, bytemuck::cast_slice(first));

        let layers = [
            BlendLayer::new(&pw, 0.5),
            BlendLayer::masked(&pj, 0.3, mask),
            BlendLayer::new(&pr, 0.2),
        ];
        blend::blend(&BlendJob::new(&layers, &[], rest), &mut blended).unwrap();

        let units = [
            MixInput {
                pose: &pw,
                weight: 0.6,
                joint_weights: None,
            },
            MixInput {
                pose: &pr,
                weight: 0.7,
                joint_weights: Some(mask),
            },
        ];
        let job = MixJob {
            units: &units,
            fatigue: None,
            idle: Some(MixInput {
                pose: &pj,
                weight: 1.0,
                joint_weights: None,
            }),
            rest,
            mode: MixMode::JointAngles,
        };
        mix(&job, &mut mixed).unwrap();

        make_additive(&pw, &pr, &mut delta).unwrap();
        apply_additive(&mut mixed, &delta, 0.4, Some(mask)).unwrap();

        // Switch from the mixed pose to the blended one at frame 4, then
        // let the offsets decay.
        if f == 4 {
            let job = SwitchJob::new(&mixed, &prev_mixed, &blended, &prev_blended, dt, 0.5);
            inert.switch(&mut state, &job).unwrap();
        }
        prev_blended.copy_from_slice(&blended);
        prev_mixed.copy_from_slice(&mixed);
        let mut local = blended.clone();
        if f >= 4 {
            inert.update(&state, dt, &mut local).unwrap();
        }
        hash = fold(hash, bytemuck::cast_slice(&mixed));
        hash = fold(hash, bytemuck::cast_slice(&local));

        fk::local_to_model(&FkJob::new(&skel, &local), &mut models).unwrap();
        hash = fold(hash, bytemuck::cast_slice(&models));

        // Two-bone IK on eight copies (one `f32x8` kernel call), each with
        // its own target, twist and weight.
        let mut locals = vec![local.clone(); 8];
        let mut ms = vec![models.clone(); 8];
        let ankle = models[foot].translation();
        let iks: Vec<TwoBoneIk> = (0..8)
            .map(|k| {
                let k = k as f32;
                let target = ankle + Vec3::new(0.05 * k - 0.2, 0.1 + 0.02 * k, 0.1 * (t - 0.4));
                let goal = TwoBoneGoal::new(target)
                    .with_pole(Vec3::new(0.0, 0.0, 1.0))
                    .with_twist(0.3 * k - 1.0)
                    .with_weight(0.5 + 0.0625 * k)
                    .with_soften(0.9);
                TwoBoneIk::new(thigh, calf, foot, goal)
            })
            .collect();
        let mut reports = [TwoBoneReport::IDENTITY; 8];
        {
            let mut poses: Vec<IkPose> = locals
                .iter_mut()
                .zip(ms.iter_mut())
                .map(|(l, m)| IkPose::new(&skel, l, m, None).unwrap())
                .collect();
            solve_many(&mut poses, &iks, &mut reports).unwrap();
        }
        for ((l, m), r) in locals.iter().zip(&ms).zip(&reports) {
            hash = fold(hash, bytemuck::cast_slice(l));
            hash = fold(hash, bytemuck::cast_slice(m));
            let (s, c) = (r.start_correction, r.mid_correction);
            hash = fold(hash, &[s.x, s.y, s.z, s.w, c.x, c.y, c.z, c.w]);
        }

        // The head aims at four targets (one `f32x4` kernel call).
        let aims: [Aim; 4] = core::array::from_fn(|k| {
            let k = k as f32;
            let target = Vec3::new(0.5 * k - 0.7, 1.4 + 0.1 * k, 2.0 - t);
            let mut aim = Aim::new(target, Vec3::Z, Vec3::Y);
            aim.twist = 0.2 * k - 0.3;
            aim.weight = 0.25 * (k + 1.0) - 0.05;
            aim
        });
        let corrections = aim_corrections_x4([&models[head]; 4], &aims).unwrap();
        for c in corrections {
            let r = c.rotation;
            hash = fold(hash, &[r.x, r.y, r.z, r.w, f32::from(u8::from(c.reached))]);
        }
    }
    hash
}
