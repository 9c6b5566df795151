//! The C ABI's per-frame exports, called from Rust through the `sinew`
//! rlib of `sinew-capi`: each crosses the panic boundary (`catch_unwind`)
//! and checks its pointers every call, which must not allocate either.

use bytemuck::Zeroable;
use sinew::*;
use sinew_core::skin::{DqsBinds, DualQuat, LbsBind, Mat3x4};
use sinew_core::{f32x4, Mat4, SoaTransform};
use sinew_std::compress::{compress, CompressOptions};
use sinew_std::{AlignedBytes, Humanoid};

use crate::frames_allocate_nothing;
use crate::skin::{Mesh, VERTICES};

/// A failed call: the export's name and its status.
type Failed = (&'static str, sinew_status);

/// `Ok` for `SINEW_STATUS_OK`, else the call's name and status.
fn ok(what: &'static str, s: sinew_status) -> Result<(), Failed> {
    if s == sinew_status::Ok {
        Ok(())
    } else {
        Err((what, s))
    }
}

/// The humanoid's containers and their C handles (the handles view the
/// containers, which live as long as this value).
struct Assets {
    humanoid: Humanoid,
    walk_bytes: AlignedBytes,
    jog_bytes: AlignedBytes,
    packed_bytes: AlignedBytes,
    skeleton: sinew_skeleton,
    walk: sinew_clip,
    jog: sinew_clip,
    packed: sinew_compressed_clip,
}

impl Assets {
    fn new() -> Assets {
        let humanoid = Humanoid::default_rate();
        let skel = humanoid.skeleton.view();
        let (packed, _) = compress(
            &skel,
            &humanoid.clips[0].view(),
            &CompressOptions::default(),
        )
        .expect("the walk compresses");
        let mut a = Assets {
            walk_bytes: humanoid.clips[0].to_bytes(),
            jog_bytes: humanoid.clips[1].to_bytes(),
            packed_bytes: AlignedBytes::copy_from(packed.bytes()),
            humanoid,
            skeleton: sinew_skeleton {
                data: std::ptr::null(),
                size: 0,
                joint_count: 0,
                soa_count: 0,
                parents: std::ptr::null(),
                rest_pose: std::ptr::null(),
                inverse_bind: std::ptr::null(),
                check: 0,
            },
            walk: empty_clip(),
            jog: empty_clip(),
            packed: sinew_compressed_clip {
                data: std::ptr::null(),
                size: 0,
                joint_count: 0,
                soa_count: 0,
                frame_count: 0,
                needs_rest_pose: 0,
                cache_blocks: 0,
                min_cache_blocks: 0,
                sample_rate: 0.0,
                duration: 0.0,
                check: 0,
            },
        };
        let skel = a.humanoid.skeleton.bytes();
        let (walk, jog, packed) = (
            a.walk_bytes.as_slice(),
            a.jog_bytes.as_slice(),
            a.packed_bytes.as_slice(),
        );
        let (mut s, mut w, mut j, mut p) = (a.skeleton, a.walk, a.jog, a.packed);
        // SAFETY: each buffer is 16-byte aligned, `len` bytes long and
        // outlives its handle (both live in `a`); each out-parameter is a
        // local.
        let statuses = unsafe {
            [
                sinew_skeleton_load(skel.as_ptr(), skel.len(), &mut s),
                sinew_clip_load(walk.as_ptr(), walk.len(), &mut w),
                sinew_clip_load(jog.as_ptr(), jog.len(), &mut j),
                sinew_compressed_clip_load(packed.as_ptr(), packed.len(), &mut p),
            ]
        };
        assert!(
            statuses.iter().all(|s| *s == sinew_status::Ok),
            "{statuses:?}"
        );
        (a.skeleton, a.walk, a.jog, a.packed) = (s, w, j, p);
        a
    }

    fn blocks(&self) -> usize {
        self.skeleton.soa_count as usize
    }

    fn joints(&self) -> usize {
        self.skeleton.joint_count as usize
    }

    fn joint(&self, name: &str) -> usize {
        let skel = self.humanoid.skeleton.view();
        skel.find_joint(name).expect("a humanoid joint")
    }

    /// The walk at `t` seconds through the C ABI: `sinew_clip_sample` into
    /// `local`, then `sinew_skeleton_local_to_model` into `models`.
    fn walk_pose(
        &self,
        t: f32,
        local: &mut [SoaTransform],
        models: &mut [Mat4],
    ) -> Result<(), Failed> {
        let (blocks, joints) = (self.blocks(), self.joints());
        assert!(local.len() == blocks && models.len() == joints);
        // SAFETY: the handles were loaded from containers that outlive
        // them; `local` has `blocks` blocks and `models` `joints` matrices
        // (checked above), and the two do not overlap.
        unsafe {
            ok(
                "sinew_clip_sample",
                sinew_clip_sample(
                    &self.walk,
                    t,
                    SINEW_TIME_LOOP,
                    local.as_mut_ptr().cast(),
                    blocks,
                ),
            )?;
            ok(
                "sinew_skeleton_local_to_model",
                sinew_skeleton_local_to_model(
                    &self.skeleton,
                    local.as_ptr().cast(),
                    blocks,
                    std::ptr::null(),
                    models.as_mut_ptr().cast(),
                    joints,
                ),
            )
        }
    }
}

fn empty_clip() -> sinew_clip {
    sinew_clip {
        data: std::ptr::null(),
        size: 0,
        soa_count: 0,
        frame_count: 0,
        sample_rate: 0.0,
        duration: 0.0,
        check: 0,
    }
}

fn layer(pose: &[SoaTransform], weight: f32, mask: Option<&[f32x4]>) -> sinew_blend_layer {
    sinew_blend_layer {
        pose: pose.as_ptr().cast(),
        pose_len: pose.len(),
        weight,
        joint_weights: mask.map_or(std::ptr::null(), |m| m.as_ptr().cast()),
        joint_weights_len: mask.map_or(0, |m| 4 * m.len()),
    }
}

/// Sampling (raw, compressed, compressed through a playback cache), blending with a mask and an additive
/// layer, cross-fade, the mixing kernel with its ramp weights,
/// inertialization, and FK (whole and a range), each frame.
pub fn pose_calls_allocate_nothing() {
    let a = Assets::new();
    let blocks = a.blocks();
    let n = a.joints();
    let rest = a.humanoid.skeleton.view().rest_pose().to_vec();
    let mut walk = vec![SoaTransform::IDENTITY; blocks];
    let mut jog = vec![SoaTransform::IDENTITY; blocks];
    let mut packed = vec![SoaTransform::IDENTITY; blocks];
    let mut cached = vec![SoaTransform::IDENTITY; blocks];
    let mut cache_blocks = vec![SoaTransform::IDENTITY; 2 * blocks];
    let mut cache = sinew_playback_cache::default();
    let mut blended = vec![SoaTransform::IDENTITY; blocks];
    let mut faded = vec![SoaTransform::IDENTITY; blocks];
    let mut mixed = vec![SoaTransform::IDENTITY; blocks];
    let mut prev = vec![SoaTransform::IDENTITY; blocks];
    let mut state = vec![
        sinew_inertial_block {
            opaque: [[0.0; 4]; 18]
        };
        blocks
    ];
    let mut models = vec![Mat4::IDENTITY; n];
    let mask = crate::upper_body_mask(&a.humanoid.skeleton.view());
    let root = Mat4::from_translation(sinew_core::Vec3::new(0.5, 0.0, 0.0));
    let spine = a.joint("spine_01");
    let spine_end = a.humanoid.skeleton.view().subtree_end(spine);
    let dt = 1.0f32 / 60.0;

    frames_allocate_nothing("the C ABI's pose calls", 300, |frame| {
        let t = frame as f32 * dt;
        let mut weight = 0.0f32;
        let mut longest = 0.0f32;
        // SAFETY: the handles were loaded from containers that outlive
        // them; every pointer comes from a live buffer of the length passed
        // with it (blocks, joints, 4 floats per joint for masks), outputs
        // are distinct from inputs, and the out-parameters are locals.
        unsafe {
            ok(
                "sinew_clip_sample",
                sinew_clip_sample(
                    &a.walk,
                    t,
                    SINEW_TIME_LOOP,
                    walk.as_mut_ptr().cast(),
                    blocks,
                ),
            )?;
            ok(
                "sinew_clip_sample",
                sinew_clip_sample(&a.jog, t, SINEW_TIME_CLAMP, jog.as_mut_ptr().cast(), blocks),
            )?;
            ok(
                "sinew_compressed_clip_sample",
                sinew_compressed_clip_sample(
                    &a.packed,
                    t * 1.1,
                    SINEW_TIME_LOOP,
                    rest.as_ptr().cast(),
                    blocks,
                    packed.as_mut_ptr().cast(),
                    blocks,
                ),
            )?;
            ok(
                "sinew_compressed_clip_sample_cached",
                sinew_compressed_clip_sample_cached(
                    &a.packed,
                    t,
                    SINEW_TIME_LOOP,
                    rest.as_ptr().cast(),
                    blocks,
                    &mut cache,
                    cache_blocks.as_mut_ptr().cast(),
                    cache_blocks.len(),
                    cached.as_mut_ptr().cast(),
                    blocks,
                ),
            )?;
            let s = (t * 0.7).sin() * 0.5 + 0.5;
            let layers = [
                layer(&walk, 1.0 - s, None),
                layer(&jog, s, Some(mask.as_slice())),
                layer(&packed, 0.2, None),
            ];
            let additive = [layer(&jog, 0.1, Some(mask.as_slice()))];
            ok(
                "sinew_pose_blend",
                sinew_pose_blend(
                    layers.as_ptr(),
                    layers.len(),
                    additive.as_ptr(),
                    additive.len(),
                    rest.as_ptr().cast(),
                    blocks,
                    SINEW_DEFAULT_BLEND_THRESHOLD,
                    blended.as_mut_ptr().cast(),
                    blocks,
                ),
            )?;
            ok(
                "sinew_pose_crossfade",
                sinew_pose_crossfade(
                    walk.as_ptr().cast(),
                    jog.as_ptr().cast(),
                    blocks,
                    s,
                    faded.as_mut_ptr().cast(),
                    blocks,
                ),
            )?;
            ok(
                "sinew_mix_ramp_weight",
                sinew_mix_ramp_weight(SINEW_RAMP_SMOOTH, 8, frame % 40, 40, &mut weight),
            )?;
            let units = [
                layer(&walk, weight, None),
                layer(&packed, 1.0 - weight, Some(mask.as_slice())),
            ];
            let idle = layer(&jog, 1.0, None);
            ok(
                "sinew_pose_mix",
                sinew_pose_mix(
                    units.as_ptr(),
                    units.len(),
                    std::ptr::null(),
                    &idle,
                    rest.as_ptr().cast(),
                    blocks,
                    if frame % 2 == 0 {
                        SINEW_MIX_QUATERNION
                    } else {
                        SINEW_MIX_JOINT_ANGLES
                    },
                    mixed.as_mut_ptr().cast(),
                    blocks,
                ),
            )?;
            if frame % 50 == 0 {
                ok(
                    "sinew_inertialize_start",
                    sinew_inertialize_start(
                        state.as_mut_ptr(),
                        blended.as_ptr().cast(),
                        prev.as_ptr().cast(),
                        mixed.as_ptr().cast(),
                        mixed.as_ptr().cast(),
                        blocks,
                        dt,
                        0.3,
                        &mut longest,
                    ),
                )?;
            }
            prev.copy_from_slice(&blended);
            ok(
                "sinew_inertialize_apply",
                sinew_inertialize_apply(
                    state.as_ptr(),
                    (frame % 50) as f32 * dt,
                    if frame % 100 < 50 {
                        SINEW_DECAY_QUINTIC
                    } else {
                        SINEW_DECAY_SPRING
                    },
                    0.1,
                    mixed.as_mut_ptr().cast(),
                    blocks,
                ),
            )?;
            ok(
                "sinew_skeleton_local_to_model",
                sinew_skeleton_local_to_model(
                    &a.skeleton,
                    mixed.as_ptr().cast(),
                    blocks,
                    std::ptr::from_ref(&root).cast(),
                    models.as_mut_ptr().cast(),
                    n,
                ),
            )?;
            ok(
                "sinew_skeleton_local_to_model_range",
                sinew_skeleton_local_to_model_range(
                    &a.skeleton,
                    faded.as_ptr().cast(),
                    blocks,
                    std::ptr::from_ref(&root).cast(),
                    spine,
                    spine_end,
                    models.as_mut_ptr().cast(),
                    n,
                ),
            )?;
        }
        Ok::<f32, Failed>(
            models[n - 1].translation().y + blended[1].rotation.w.as_array()[0] + weight,
        )
    });
}

/// Palettes (from inverse binds and prepared binds) and skinning (LBS, DQS,
/// the mix; four and eight influences; arrays and strided) each frame of a
/// walk, every call through the C ABI.
pub fn skinning_allocates_nothing() {
    let a = Assets::new();
    let blocks = a.blocks();
    let joints = a.joints();
    let ibm = a.humanoid.skeleton.view().inverse_bind().to_vec();
    let m = Mesh::new(VERTICES, joints);
    let n = m.positions.len();
    let mut local = vec![SoaTransform::IDENTITY; blocks];
    let mut models = vec![Mat4::IDENTITY; joints];
    let mut lbs = vec![Mat3x4::IDENTITY; joints];
    let mut dqs = vec![DualQuat::IDENTITY; joints];
    let mut lbs_binds = vec![LbsBind::default(); joints];
    let mut dqs_binds = vec![DqsBinds::default(); sinew_skin_dqs_binds_count(joints)];
    // SAFETY: inverse binds of `joints` matrices, outputs of the lengths passed.
    let prepared = unsafe {
        [
            sinew_skin_lbs_binds_prepare(
                ibm.as_ptr().cast(),
                joints,
                lbs_binds.as_mut_ptr().cast(),
                joints,
            ),
            sinew_skin_dqs_binds_prepare(
                ibm.as_ptr().cast(),
                joints,
                dqs_binds.as_mut_ptr().cast(),
                dqs_binds.len(),
            ),
        ]
    };
    assert!(
        prepared.iter().all(|s| *s == sinew_status::Ok),
        "{prepared:?}"
    );
    let mix: Vec<f32> = (0..n).map(|i| (i % 5) as f32 / 4.0).collect();
    let mut pos = vec![[0.0f32; 3]; n];
    let mut nrm = vec![[0.0f32; 3]; n];
    let mut tan = vec![[0.0f32; 4]; n];
    const STRIDE: usize = 12;
    let mut src = vec![0.0f32; n * STRIDE];
    for (v, chunk) in src.chunks_exact_mut(STRIDE).enumerate() {
        chunk[..3].copy_from_slice(&m.positions[v]);
        chunk[3..6].copy_from_slice(&m.normals[v]);
        chunk[6..10].copy_from_slice(&m.tangents[v]);
    }
    let mut dst = vec![0.0f32; n * STRIDE];
    let layout = sinew_vertex_layout {
        stride: STRIDE as u32,
        position: 0,
        normal: 3,
        tangent: 6,
    };
    let four = sinew_skin_mesh {
        vertex_count: n,
        positions: m.positions.as_ptr().cast(),
        normals: m.normals.as_ptr().cast(),
        tangents: m.tangents.as_ptr().cast(),
        joints: m.joints.as_ptr().cast(),
        weights: m.weights.as_ptr().cast(),
        joints1: std::ptr::null(),
        weights1: std::ptr::null(),
    };
    let eight = sinew_skin_mesh {
        weights: m.weights8.as_ptr().cast(),
        joints1: m.joints1.as_ptr().cast(),
        weights1: m.weights1.as_ptr().cast(),
        ..four
    };
    let strided = sinew_strided_mesh {
        vertex_count: n,
        data: src.as_ptr(),
        len: src.len(),
        layout,
        joints: m.joints.as_ptr().cast(),
        weights: m.weights.as_ptr().cast(),
        joints1: std::ptr::null(),
        weights1: std::ptr::null(),
    };

    // The four-influence mesh (without tangents) prepared in blocks.
    let mut vertex_blocks = vec![sinew_vertex_block::zeroed(); sinew_skin_blocks_count(n)];
    let untangent = sinew_skin_mesh {
        tangents: std::ptr::null(),
        ..four
    };
    // SAFETY: the mesh's arrays have `n` vertices, the blocks the count
    // asked for.
    let status = unsafe {
        sinew_skin_blocks_prepare(
            &untangent,
            joints,
            vertex_blocks.as_mut_ptr(),
            vertex_blocks.len(),
        )
    };
    assert_eq!(status, sinew_status::Ok);

    frames_allocate_nothing("the C ABI's skinning", 150, |frame| {
        let t = frame as f32 / 60.0;
        let mut sum = 0.0;
        // SAFETY: the handles were loaded from containers that outlive
        // them; every pointer comes from a live buffer of the length passed
        // with it (the meshes' arrays have `n` vertices, 4 entries each for
        // influences, the palettes `joints` entries, the strided buffers
        // `n * STRIDE` floats), and outputs are distinct from inputs.
        unsafe {
            a.walk_pose(t, &mut local, &mut models)?;
            ok(
                "sinew_skin_lbs_palette_prepared",
                sinew_skin_lbs_palette_prepared(
                    models.as_ptr().cast(),
                    joints,
                    lbs_binds.as_ptr().cast(),
                    joints,
                    lbs.as_mut_ptr().cast(),
                    joints,
                ),
            )?;
            ok(
                "sinew_skin_dqs_palette_prepared",
                sinew_skin_dqs_palette_prepared(
                    models.as_ptr().cast(),
                    joints,
                    dqs_binds.as_ptr().cast(),
                    dqs_binds.len(),
                    dqs.as_mut_ptr().cast(),
                    joints,
                ),
            )?;
            sum += lbs[1].rows[0][3] + dqs[2].real[3];
            ok(
                "sinew_skin_lbs_palette",
                sinew_skin_lbs_palette(
                    models.as_ptr().cast(),
                    joints,
                    ibm.as_ptr().cast(),
                    joints,
                    lbs.as_mut_ptr().cast(),
                    joints,
                ),
            )?;
            ok(
                "sinew_skin_dqs_palette",
                sinew_skin_dqs_palette(
                    models.as_ptr().cast(),
                    joints,
                    ibm.as_ptr().cast(),
                    joints,
                    dqs.as_mut_ptr().cast(),
                    joints,
                ),
            )?;
            let target = sinew_skin_target {
                positions: pos.as_mut_ptr().cast(),
                normals: nrm.as_mut_ptr().cast(),
                tangents: tan.as_mut_ptr().cast(),
            };
            for method in [SINEW_SKIN_LBS, SINEW_SKIN_DQS, SINEW_SKIN_MIXED] {
                let palette = sinew_skin_palette {
                    method,
                    len: joints,
                    lbs: lbs.as_ptr().cast(),
                    dqs: dqs.as_ptr().cast(),
                    mix: mix.as_ptr(),
                    mix_len: mix.len(),
                };
                for mesh in [&four, &eight] {
                    ok("sinew_skin", sinew_skin(&palette, mesh, &target))?;
                    sum += pos[n - 1][1] + nrm[0][2] + tan[1][0];
                }
                let out = sinew_strided_target {
                    data: dst.as_mut_ptr(),
                    len: dst.len(),
                    layout,
                };
                ok(
                    "sinew_skin_strided",
                    sinew_skin_strided(&palette, &strided, &out),
                )?;
                sum += dst[STRIDE + 1];
            }
            let target = sinew_skin_target {
                tangents: std::ptr::null_mut(),
                ..target
            };
            ok(
                "sinew_skin_blocks_lbs",
                sinew_skin_blocks_lbs(
                    lbs.as_ptr().cast(),
                    joints,
                    vertex_blocks.as_ptr(),
                    n,
                    &target,
                ),
            )?;
            sum += pos[n - 1][0] + nrm[1][1];
        }
        Ok::<f32, Failed>(sum)
    });
}

/// The ground for `sinew_foot_placement_solve`: a slope `y = grade · z`,
/// `user` pointing to the grade.
unsafe extern "C" fn slope(
    user: *mut std::ffi::c_void,
    _x: f32,
    z: f32,
    hit: *mut sinew_ground_hit,
) -> u32 {
    // SAFETY: the check passes a live `f32` as `user`; `hit` is the
    // library's, valid for the call.
    let (grade, hit) = unsafe { (*user.cast::<f32>(), &mut *hit) };
    *hit = sinew_ground_hit {
        hit: 1,
        height: grade * z,
        normal: [0.0, 1.0, -grade],
    };
    0
}

/// Two-bone IK, a look-at chain and foot placement (a ground callback, and
/// hits probed by the caller) each frame on the walk, through the C ABI.
pub fn ik_allocates_nothing() {
    let a = Assets::new();
    let blocks = a.blocks();
    let joints = a.joints();
    let mut local = vec![SoaTransform::IDENTITY; blocks];
    let mut models = vec![Mat4::IDENTITY; joints];
    let leg = |hip: &str, knee: &str, ankle: &str| sinew_foot_leg {
        hip: a.joint(hip),
        knee: a.joint(knee),
        ankle: a.joint(ankle),
        knee_axis: [-1.0, 0.0, 0.0],
    };
    let legs = [
        leg("thigh_l", "calf_l", "foot_l"),
        leg("thigh_r", "calf_r", "foot_r"),
    ];
    let feet = sinew_foot_placement {
        pelvis: a.joint("pelvis"),
        legs: legs.as_ptr(),
        leg_count: legs.len(),
        foot_height: 0.02,
        max_tilt: 0.5,
        max_pelvis_offset: 0.3,
        half_life: 0.1,
        soften: 0.97,
    };
    let chain = [
        sinew_look_at_joint {
            joint: a.joint("spine_03"),
            weight: 0.3,
            max_angle: 0.3,
        },
        sinew_look_at_joint {
            joint: a.joint("neck_01"),
            weight: 0.5,
            max_angle: f32::INFINITY,
        },
        sinew_look_at_joint {
            joint: a.joint("head"),
            weight: 1.0,
            max_angle: 1.0,
        },
    ];
    let (thigh, calf, foot) = (legs[0].hip, legs[0].knee, legs[0].ankle);
    let mut grade = 20f32.to_radians().tan();
    let mut state = sinew_foot_state::default();
    let mut probed_state = sinew_foot_state::default();

    frames_allocate_nothing("the C ABI's IK", 300, |frame| {
        let t = frame as f32 / 60.0;
        let angle = frame as f32 * 0.05;
        let mut sum = 0.0;
        let mut two_bone = sinew_two_bone_report::default();
        let mut look = sinew_look_at_report::default();
        let mut report = sinew_foot_report::default();
        // SAFETY: the handles were loaded from containers that outlive
        // them; the pose's buffers have `blocks` blocks and `joints`
        // matrices; the chain, legs and hits are live arrays of the lengths
        // passed; `user` points to a live `f32` for `slope`; reports and
        // states are locals or captured buffers.
        unsafe {
            let pose_at = |local: &mut Vec<SoaTransform>, models: &mut Vec<Mat4>| {
                a.walk_pose(t, local, models)
            };
            pose_at(&mut local, &mut models)?;
            let pose = sinew_ik_pose {
                skeleton: &a.skeleton,
                local: local.as_mut_ptr().cast(),
                local_len: blocks,
                root: std::ptr::null(),
                models: models.as_mut_ptr().cast(),
                models_len: joints,
            };
            let ankle = models[foot].translation();
            let ik = sinew_two_bone {
                start: thigh,
                mid: calf,
                end: foot,
                target: [
                    ankle.x + 0.15 * angle.cos(),
                    ankle.y + 0.1,
                    ankle.z + 0.15 * angle.sin(),
                ],
                pole: [0.0, 0.0, 1.0],
                mid_axis: [-1.0, 0.0, 0.0],
                weight: 1.0,
                soften: 0.97,
                twist: 0.0,
            };
            ok(
                "sinew_two_bone_solve",
                sinew_two_bone_solve(&pose, &ik, &mut two_bone),
            )?;
            let aim = sinew_aim {
                target: [1.5 * angle.cos(), 1.6, 1.5 * angle.sin() + 0.5],
                forward: [0.0, 0.0, 1.0],
                up: [0.0, 1.0, 0.0],
                offset: [0.0, 0.08, 0.08],
                pole: [0.0, 1.0, 0.0],
                twist: 0.0,
                weight: 0.9,
            };
            ok(
                "sinew_look_at_solve",
                sinew_look_at_solve(&pose, chain.as_ptr(), chain.len(), &aim, &mut look),
            )?;
            sum += two_bone.start_correction[3] + look.clamped as f32;
            pose_at(&mut local, &mut models)?;
            let pose = sinew_ik_pose {
                local: local.as_mut_ptr().cast(),
                models: models.as_mut_ptr().cast(),
                ..pose
            };
            let user = std::ptr::from_mut(&mut grade).cast();
            ok(
                "sinew_foot_placement_solve",
                sinew_foot_placement_solve(
                    &pose,
                    &feet,
                    Some(slope),
                    user,
                    0.0,
                    1.0 / 60.0,
                    &mut state,
                    &mut report,
                ),
            )?;
            sum += report.pelvis_offset;
            pose_at(&mut local, &mut models)?;
            let pose = sinew_ik_pose {
                local: local.as_mut_ptr().cast(),
                models: models.as_mut_ptr().cast(),
                ..pose
            };
            let hits = legs.map(|l| {
                let z = models[l.ankle].translation().z;
                sinew_ground_hit {
                    hit: 1,
                    height: grade * z,
                    normal: [0.0, 1.0, -grade],
                }
            });
            ok(
                "sinew_foot_placement_solve_probed",
                sinew_foot_placement_solve_probed(
                    &pose,
                    &feet,
                    hits.as_ptr(),
                    hits.len(),
                    0.0,
                    1.0 / 60.0,
                    &mut probed_state,
                    &mut report,
                ),
            )?;
            sum += report.pelvis_offset + models[foot].translation().y;
        }
        Ok::<f32, Failed>(sum)
    });
}

pub fn secondary_motion_allocates_nothing() {
    let a = Assets::new();
    let (blocks, joints) = (a.blocks(), a.joints());
    let mut local = vec![SoaTransform::IDENTITY; blocks];
    let mut models = vec![Mat4::IDENTITY; joints];
    let mut pd_out = local.clone();
    let mut params = sinew_spring_params::default();
    let mut spring = sinew_spring::default();
    let mut batch = vec![sinew_spring::default(); 70];
    let targets: Vec<f32> = (0..70).map(|i| i as f32 * 0.01).collect();
    let mut quat = sinew_quat_spring {
        value: [0.0, 0.0, 0.0, 1.0],
        velocity: [0.0; 3],
    };
    let mut lengths = vec![0.0f32; joints];
    let mut pd_joints = vec![<sinew_pd_joint as bytemuck::Zeroable>::zeroed(); joints];
    let mut pd_state = vec![sinew_pd_state::default(); joints];
    let arm = [
        "clavicle_l",
        "upper_arm_l",
        "upper_arm_twist_l",
        "lower_arm_l",
    ]
    .map(|n| a.joint(n));
    let mut settings = sinew_chain_settings::default();
    let floor = sinew_collider {
        kind: SINEW_COLLIDER_PLANE,
        a: [0.0, 1.0, 0.0],
        b: [0.0; 3],
        radius: 0.0,
        offset: 0.0,
    };
    let (mut current, mut previous) = ([[0.0f32; 3]; 4], [[0.0f32; 3]; 4]);
    // SAFETY: the skeleton and clip handles were loaded from containers
    // that outlive them; every pointer is a live local buffer of the
    // length passed with it.
    unsafe {
        ok("params", sinew_spring_params_half_life(0.15, &mut params)).expect("spring");
        ok(
            "lengths",
            sinew_pd_rest_bone_lengths(&a.skeleton, lengths.as_mut_ptr(), joints),
        )
        .expect("bone lengths");
        for (j, l) in pd_joints.iter_mut().zip(&lengths) {
            ok(
                "pd joint",
                sinew_pd_joint_from_half_life(0.1, 1.0, l.max(0.05), j),
            )
            .expect("pd joint");
        }
        ok("settings", sinew_chain_settings_default(&mut settings)).expect("settings");
        ok(
            "sample",
            sinew_clip_sample(
                &a.walk,
                0.0,
                SINEW_TIME_LOOP,
                local.as_mut_ptr().cast(),
                blocks,
            ),
        )
        .expect("sample");
        ok(
            "pd reset",
            sinew_pd_reset(local.as_ptr().cast(), blocks, pd_state.as_mut_ptr(), joints),
        )
        .expect("pd reset");
    }
    let chain = sinew_spring_chain {
        joints: arm.as_ptr(),
        joint_count: arm.len(),
        settings,
        world: std::ptr::null(),
        colliders: &floor,
        collider_count: 1,
        angle_limits: std::ptr::null(),
        angle_limits_len: 0,
    };
    let mut first = true;
    frames_allocate_nothing("the C ABI's secondary motion", 200, |frame| {
        let t = frame as f32 / 60.0;
        let mut report = sinew_chain_report::default();
        let mut steps = sinew_substeps::default();
        // SAFETY: as above; the pose's buffers have `blocks` blocks and
        // `joints` matrices, the particle arrays `arm.len()` entries.
        unsafe {
            ok(
                "sinew_spring_advance",
                sinew_spring_advance(&mut spring, t.sin(), std::ptr::null(), &params, 1.0 / 60.0),
            )?;
            ok(
                "sinew_spring_advance_batch",
                sinew_spring_advance_batch(
                    batch.as_mut_ptr(),
                    batch.len(),
                    targets.as_ptr(),
                    targets.len(),
                    &params,
                    1.0 / 60.0,
                ),
            )?;
            let half = 0.5 * t;
            let target = [0.0, half.sin(), 0.0, half.cos()];
            ok(
                "sinew_quat_spring_advance",
                sinew_quat_spring_advance(
                    &mut quat,
                    target.as_ptr(),
                    std::ptr::null(),
                    &params,
                    1.0 / 60.0,
                ),
            )?;
            a.walk_pose(t, &mut local, &mut models)?;
            ok(
                "sinew_pd_step",
                sinew_pd_step(
                    pd_joints.as_ptr(),
                    joints,
                    local.as_ptr().cast(),
                    blocks,
                    1.0 / 60.0,
                    1.0 / 240.0,
                    16,
                    pd_state.as_mut_ptr(),
                    joints,
                    pd_out.as_mut_ptr().cast(),
                    blocks,
                    &mut steps,
                ),
            )?;
            let pose = sinew_ik_pose {
                skeleton: &a.skeleton,
                local: local.as_mut_ptr().cast(),
                local_len: blocks,
                root: std::ptr::null(),
                models: models.as_mut_ptr().cast(),
                models_len: joints,
            };
            if first {
                first = false;
                ok(
                    "sinew_spring_chain_reset",
                    sinew_spring_chain_reset(
                        &pose,
                        &chain,
                        current.as_mut_ptr(),
                        arm.len(),
                        previous.as_mut_ptr(),
                        arm.len(),
                    ),
                )?;
            }
            ok(
                "sinew_spring_chain_step",
                sinew_spring_chain_step(
                    &pose,
                    &chain,
                    1.0 / 60.0,
                    current.as_mut_ptr(),
                    arm.len(),
                    previous.as_mut_ptr(),
                    arm.len(),
                    &mut report,
                ),
            )?;
        }
        Ok::<f32, Failed>(
            spring.value + batch[9].value + quat.value[1] + steps.step + current[3][1],
        )
    });
}

/// The player through the C ABI over the raw walk and jog and the
/// compressed walk (cross-fades, an inertialization, pause, seek, edges
/// from an event track), and event triggering.
pub fn player_and_events_allocate_nothing() {
    let a = Assets::new();
    let blocks = a.blocks();
    let rest = a.humanoid.skeleton.view().rest_pose().to_vec();
    let refs = [
        sinew_clip_ref {
            raw: &a.walk,
            compressed: std::ptr::null(),
        },
        sinew_clip_ref {
            raw: &a.jog,
            compressed: std::ptr::null(),
        },
        sinew_clip_ref {
            raw: std::ptr::null(),
            compressed: &a.packed,
        },
    ];
    let d = a.walk.duration;
    let events = [
        sinew_event {
            start: 0.0,
            end: 0.0,
            id: 1,
            name_offset: 0,
            name_len: 0,
        },
        sinew_event {
            start: 0.2 * d,
            end: 0.6 * d,
            id: 2,
            name_offset: 0,
            name_len: 0,
        },
        sinew_event {
            start: 0.8 * d,
            end: 0.8 * d,
            id: 3,
            name_offset: 0,
            name_len: 0,
        },
    ];
    let ranges = [1u32];
    let walk_track = sinew_event_track {
        duration: d,
        events: events.as_ptr(),
        event_count: events.len(),
        names: std::ptr::null(),
        names_len: 0,
        ranges: ranges.as_ptr(),
        range_count: 1,
    };
    let none = sinew_event_track {
        duration: 0.0,
        event_count: 0,
        range_count: 0,
        ..walk_track
    };
    let tracks = [walk_track, none, walk_track];
    let mut sizes = sinew_player_sizes::default();
    let mut player = sinew_player {
        words: [0; SINEW_PLAYER_WORDS],
    };
    // SAFETY: valid out-parameters and a clip table of three loaded handles.
    let s = unsafe {
        [
            sinew_player_buffer_sizes(blocks, &mut sizes),
            sinew_player_init(&mut player, refs.as_ptr(), refs.len(), 0, SINEW_PLAY_LOOP),
        ]
    };
    assert!(s.iter().all(|s| *s == sinew_status::Ok), "{s:?}");
    let mk = |n: usize| vec![SoaTransform::IDENTITY; n];
    let (mut sources, mut history, mut scratch, mut out) = (
        mk(sizes.sources),
        mk(sizes.history),
        mk(sizes.scratch),
        mk(blocks),
    );
    let mut inertial = vec![
        sinew_inertial_block {
            opaque: [[0.0; 4]; 18]
        };
        sizes.inertial
    ];
    let mut edges = vec![sinew_player_edge::default(); 16];
    let mut c_edges = vec![sinew_edge::default(); 16];
    // A track set of a float, a vec3 and a quantized rotation track.
    use sinew_core::track::curve::Interpolation;
    use sinew_core::track::store::{
        track_set_size, write_track_set, Encoding, TrackDesc, TrackKind,
    };
    let times: Vec<f32> = (0..30).map(|k| k as f32 * 0.05).collect();
    let vals: Vec<f32> = (0..90).map(|i| (i as f32 * 0.3).sin()).collect();
    let rot: Vec<f32> = (0..30)
        .flat_map(|k| [0.0, (k as f32 * 0.05).sin(), 0.0, (k as f32 * 0.05).cos()])
        .collect();
    let descs = [
        TrackDesc {
            name: "a",
            target: None,
            kind: TrackKind::Float,
            interpolation: Interpolation::Linear,
            times: &times,
            values: &vals[..30],
            encoding: Encoding::Raw,
        },
        TrackDesc {
            name: "b",
            target: None,
            kind: TrackKind::Vec3,
            interpolation: Interpolation::Linear,
            times: &times,
            values: &vals,
            encoding: Encoding::Raw,
        },
        TrackDesc {
            name: "c",
            target: None,
            kind: TrackKind::Quat,
            interpolation: Interpolation::Linear,
            times: &times,
            values: &rot,
            encoding: Encoding::Quantized,
        },
    ];
    let mut set_bytes = AlignedBytes::zeroed(track_set_size(&descs).expect("sizes"));
    write_track_set(&descs, set_bytes.as_mut_slice()).expect("writes");
    let mut set = sinew_track_set {
        data: std::ptr::null(),
        size: 0,
        track_count: 0,
        component_count: 0,
        check: 0,
    };
    // SAFETY: an aligned container that outlives the handle, a local out-parameter.
    let s = unsafe {
        sinew_track_set_load(
            set_bytes.as_slice().as_ptr(),
            set_bytes.as_slice().len(),
            &mut set,
        )
    };
    assert_eq!(s, sinew_status::Ok);
    let mut cursors = [0usize; 3];
    let mut values = [0.0f32; 8];
    let fades = [
        sinew_transition {
            duration: 0.3,
            blend: SINEW_BLEND_CROSSFADE,
            shape: SINEW_FADE_SMOOTH_STEP,
            half_life: 0.0,
        },
        sinew_transition {
            duration: 0.2,
            blend: SINEW_BLEND_INERTIALIZE,
            shape: SINEW_DECAY_QUINTIC,
            half_life: 0.0,
        },
    ];
    frames_allocate_nothing("the C player and event triggering", 600, |frame| {
        let bufs = sinew_player_buffers {
            sources: sources.as_mut_ptr().cast(),
            sources_len: sources.len(),
            history: history.as_mut_ptr().cast(),
            history_len: history.len(),
            inertial: inertial.as_mut_ptr(),
            inertial_len: inertial.len(),
            scratch: scratch.as_mut_ptr().cast(),
            scratch_len: scratch.len(),
        };
        let mut report = sinew_player_report::default();
        let mut triggered = sinew_triggered::default();
        let t = frame as f32 / 60.0;
        // SAFETY: the handles, tracks and buffers above outlive the calls;
        // every length is the buffer's own.
        unsafe {
            if frame % 40 == 0 {
                let clip = (frame / 40 % 3) as u32;
                ok(
                    "sinew_player_play",
                    sinew_player_play(
                        &mut player,
                        refs.as_ptr(),
                        3,
                        clip,
                        SINEW_PLAY_LOOP,
                        &fades[frame / 40 % 2],
                    ),
                )?;
            }
            if frame % 100 == 50 {
                ok(
                    "sinew_player_set_paused",
                    sinew_player_set_paused(&mut player, 1),
                )?;
                ok(
                    "sinew_player_seek",
                    sinew_player_seek(&mut player, refs.as_ptr(), 3, 0.1),
                )?;
            }
            if frame % 100 == 55 {
                ok(
                    "sinew_player_set_paused",
                    sinew_player_set_paused(&mut player, 0),
                )?;
            }
            ok(
                "sinew_player_update",
                sinew_player_update(
                    &mut player,
                    1.0 / 60.0,
                    refs.as_ptr(),
                    3,
                    tracks.as_ptr(),
                    rest.as_ptr().cast(),
                    blocks,
                    0,
                    &bufs,
                    out.as_mut_ptr().cast(),
                    blocks,
                    edges.as_mut_ptr(),
                    edges.len(),
                    &mut report,
                ),
            )?;
            ok(
                "sinew_track_set_sample_all",
                sinew_track_set_sample_all(
                    &set,
                    t,
                    cursors.as_mut_ptr(),
                    3,
                    values.as_mut_ptr(),
                    8,
                ),
            )?;
            ok(
                "sinew_track_set_sample",
                sinew_track_set_sample(&set, 2, t, std::ptr::null_mut(), values.as_mut_ptr(), 4),
            )?;
            ok(
                "sinew_event_trigger",
                sinew_event_trigger(
                    &walk_track,
                    t,
                    t + 1.0 / 60.0,
                    SINEW_TIME_LOOP,
                    c_edges.as_mut_ptr(),
                    c_edges.len(),
                    &mut triggered,
                ),
            )?;
        }
        Ok::<f32, Failed>(
            out[2].rotation.w.as_array()[0] + report.root_yaw + triggered.written as f32,
        )
    });
}

/// Blend shapes and shape drivers, each frame: the walk sampled, an elbow
/// corrective and a combination evaluated from the pose, then a dense and
/// a sparse target applied to a mesh before skinning.
pub fn shapes_allocate_nothing() {
    const N: usize = 300;
    let a = Assets::new();
    let blocks = a.blocks();
    let mut local = vec![SoaTransform::IDENTITY; blocks];

    let base_p: Vec<[f32; 3]> = (0..N).map(|v| [v as f32 * 0.01, 1.0, 0.0]).collect();
    let base_n = vec![[0.0f32, 0.0, 1.0]; N];
    let base_t = vec![[1.0f32, 0.0, 0.0, 1.0]; N];
    let dense: Vec<[f32; 3]> = (0..N).map(|v| [0.0, 0.001 * v as f32, 0.0]).collect();
    let idx: Vec<u32> = (0..N as u32).step_by(7).collect();
    let moved = vec![[0.0f32, 0.0, 0.02]; idx.len()];
    let none = sinew_blend_deltas {
        kind: SINEW_DELTAS_NONE,
        count: 0,
        deltas: std::ptr::null(),
        indices: std::ptr::null(),
    };
    let targets = [
        sinew_blend_target {
            positions: sinew_blend_deltas {
                kind: SINEW_DELTAS_DENSE,
                count: N,
                deltas: dense.as_ptr().cast(),
                indices: std::ptr::null(),
            },
            normals: none,
            tangents: none,
        },
        sinew_blend_target {
            positions: sinew_blend_deltas {
                kind: SINEW_DELTAS_SPARSE,
                count: idx.len(),
                deltas: moved.as_ptr().cast(),
                indices: idx.as_ptr(),
            },
            normals: sinew_blend_deltas {
                kind: SINEW_DELTAS_SPARSE,
                count: idx.len(),
                deltas: moved.as_ptr().cast(),
                indices: idx.as_ptr(),
            },
            tangents: none,
        },
        sinew_blend_target {
            positions: none,
            normals: none,
            tangents: none,
        },
    ];
    let elbow = sinew_corrective {
        shape: 1,
        joint: a.joint("lower_arm_l") as u32,
        reference: [0.0, 0.0, 0.0, 1.0],
        angle: SINEW_SHAPE_ANGLE_TOTAL,
        axis: [0.0, 0.0, 1.0],
        from: 0.0,
        to: 1.5,
        ramp: SINEW_SHAPE_RAMP_SMOOTHSTEP,
    };
    let inputs = [0u32, 1];
    let combo = sinew_combination {
        shape: 2,
        inputs: inputs.as_ptr(),
        input_count: 2,
    };
    let (mut blend_size, mut driver_size) = (0usize, 0usize);
    let mut blend_storage;
    let mut driver_storage;
    let mut shapes = sinew_blend_shapes {
        vertex_count: 0,
        target_count: 0,
        storage: std::ptr::null(),
        storage_size: 0,
        check: 0,
    };
    let mut drivers = sinew_shape_drivers {
        shape_count: 0,
        joint_count: 0,
        driver_count: 0,
        storage: std::ptr::null(),
        storage_size: 0,
        check: 0,
    };
    // SAFETY: every pointer comes from a live buffer of the length passed
    // with it; the storages are 16-byte aligned (`u128`) and outlive the
    // handles, as do the dense deltas.
    unsafe {
        let s = sinew_blend_shapes_storage_size(targets.as_ptr(), 3, &mut blend_size);
        assert_eq!(s, sinew_status::Ok);
        let s = sinew_shape_drivers_storage_size(1, &combo, 1, &mut driver_size);
        assert_eq!(s, sinew_status::Ok);
        blend_storage = vec![0u128; blend_size.div_ceil(16)];
        driver_storage = vec![0u128; driver_size.div_ceil(16)];
        let s = sinew_blend_shapes_init(
            N,
            targets.as_ptr(),
            3,
            blend_storage.as_mut_ptr().cast(),
            blend_storage.len() * 16,
            &mut shapes,
            std::ptr::null_mut(),
        );
        assert_eq!(s, sinew_status::Ok);
        let s = sinew_shape_drivers_init(
            3,
            a.joints(),
            &elbow,
            1,
            &combo,
            1,
            driver_storage.as_mut_ptr().cast(),
            driver_storage.len() * 16,
            &mut drivers,
            std::ptr::null_mut(),
        );
        assert_eq!(s, sinew_status::Ok);
    }
    let (mut p, mut n, mut t) = (
        vec![[0.0f32; 3]; N],
        vec![[0.0f32; 3]; N],
        vec![[0.0f32; 4]; N],
    );
    let base = sinew_skin_mesh {
        vertex_count: N,
        positions: base_p.as_ptr().cast(),
        normals: base_n.as_ptr().cast(),
        tangents: base_t.as_ptr().cast(),
        joints: std::ptr::null(),
        weights: std::ptr::null(),
        joints1: std::ptr::null(),
        weights1: std::ptr::null(),
    };
    // An RBF driver on the elbow writing shape 1 (read by the combination),
    // solved offline; a delta mush over a 15 x 20 grid.
    let examples = [[0.0f32, 0.0, 0.0, 1.0], [0.0, 0.0, 0.6, 0.8]];
    let targets = [0.0f32, 1.0];
    let fit = sinew_rbf_fit {
        kernel: SINEW_RBF_GAUSSIAN,
        sigma: 1.0,
        lambda: 0.0,
        examples: examples.as_ptr().cast(),
        example_count: 2,
        targets: targets.as_ptr(),
        output_count: 1,
    };
    let mut rbf_weights = [0.0f32; 2];
    let mut rbf_scratch = [0.0f64; 16];
    let rbf_driver = sinew_rbf_driver {
        joint: a.joint("lower_arm_l") as u32,
        kernel: SINEW_RBF_GAUSSIAN,
        sigma: 1.0,
        clamp: 1,
        examples: examples.as_ptr().cast(),
        example_count: 2,
        weights: rbf_weights.as_ptr(),
        output_count: 1,
    };
    let mut rbf_size = 0usize;
    let mut rbf_storage;
    let mut rbf = sinew_rbf_drivers {
        joint_count: 0,
        driver_count: 0,
        output_count: 0,
        storage: std::ptr::null(),
        storage_size: 0,
        check: 0,
    };
    let (gw, gh) = (15u32, 20u32);
    let grid: Vec<[f32; 3]> = (0..gw * gh)
        .map(|v| [(v % gw) as f32, (v / gw) as f32, 0.1 * (v as f32).sin()])
        .collect();
    let mut tris = Vec::new();
    for y in 0..gh - 1 {
        for x in 0..gw - 1 {
            let (i, j) = (y * gw + x, (y + 1) * gw + x);
            tris.extend_from_slice(&[i, i + 1, j + 1, i, j + 1, j]);
        }
    }
    let gn = grid.len();
    let mut counts = sinew_mush_counts::default();
    let settings = sinew_mush_settings {
        iterations: 3,
        step: 0.5,
    };
    let (mut offsets, mut neighbours, mut mush_scratch, mut mush_deltas);
    let mut used = 0usize;
    let mut mush_storage = [0u128; 8];
    let mut mush = sinew_delta_mush {
        vertex_count: 0,
        storage: std::ptr::null(),
        storage_size: 0,
        check: 0,
    };
    // SAFETY: every pointer comes from a live buffer of the length passed
    // with it; the storages are 16-byte aligned (`u128`) and outlive the
    // handles, as do the mush arrays.
    unsafe {
        let s = sinew_rbf_solve(
            &fit,
            1,
            rbf_scratch.as_mut_ptr(),
            rbf_scratch.len(),
            rbf_weights.as_mut_ptr(),
            2,
            std::ptr::null_mut(),
        );
        assert_eq!(s, sinew_status::Ok);
        let s = sinew_rbf_drivers_storage_size(&rbf_driver, 1, &mut rbf_size);
        assert_eq!(s, sinew_status::Ok);
        rbf_storage = vec![0u128; rbf_size.div_ceil(16)];
        let s = sinew_rbf_drivers_init(
            a.joints(),
            &rbf_driver,
            1,
            rbf_storage.as_mut_ptr().cast(),
            rbf_storage.len() * 16,
            &mut rbf,
            std::ptr::null_mut(),
        );
        assert_eq!(s, sinew_status::Ok);
        assert_eq!(
            sinew_mush_sizes(gn, tris.len(), &mut counts),
            sinew_status::Ok
        );
        offsets = vec![0u32; counts.offsets];
        neighbours = vec![0u32; counts.neighbour_capacity];
        mush_scratch = vec![[0.0f32; 4]; counts.scratch];
        mush_deltas = vec![[0.0f32; 4]; counts.deltas];
        let s = sinew_mush_build(
            tris.as_ptr(),
            tris.len(),
            grid.as_ptr().cast(),
            gn,
            settings,
            offsets.as_mut_ptr(),
            offsets.len(),
            neighbours.as_mut_ptr(),
            neighbours.len(),
            &mut used,
            mush_scratch.as_mut_ptr().cast(),
            mush_scratch.len(),
            mush_deltas.as_mut_ptr().cast(),
            mush_deltas.len(),
        );
        assert_eq!(s, sinew_status::Ok);
        let s = sinew_mush_init(
            tris.as_ptr(),
            tris.len(),
            offsets.as_ptr(),
            gn,
            neighbours.as_ptr(),
            used,
            mush_deltas.as_ptr().cast(),
            settings,
            mush_storage.as_mut_ptr().cast(),
            counts.storage_size,
            &mut mush,
        );
        assert_eq!(s, sinew_status::Ok);
    }
    let mut skinned = grid.clone();
    let mut mushed = vec![[0.0f32; 3]; gn];
    let dt = 1.0f32 / 60.0;
    frames_allocate_nothing(
        "the C ABI's shapes, drivers, RBF and delta mush",
        300,
        |frame| {
            let mut weights = [0.5 + 0.5 * (frame as f32 * 0.1).sin(), 0.0, 0.0];
            let out = sinew_skin_target {
                positions: p.as_mut_ptr().cast(),
                normals: n.as_mut_ptr().cast(),
                tangents: t.as_mut_ptr().cast(),
            };
            // SAFETY: the handles' storages and dense deltas are alive; every
            // pointer comes from a live buffer of the length passed with it and
            // the outputs are distinct from the inputs.
            unsafe {
                ok(
                    "sinew_clip_sample",
                    sinew_clip_sample(
                        &a.walk,
                        frame as f32 * dt,
                        SINEW_TIME_LOOP,
                        local.as_mut_ptr().cast(),
                        blocks,
                    ),
                )?;
                ok(
                    "sinew_rbf_drivers_evaluate",
                    sinew_rbf_drivers_evaluate(
                        &rbf,
                        local.as_ptr().cast(),
                        blocks,
                        weights[1..].as_mut_ptr(),
                        1,
                    ),
                )?;
                ok(
                    "sinew_shape_drivers_evaluate",
                    sinew_shape_drivers_evaluate(
                        &drivers,
                        local.as_ptr().cast(),
                        blocks,
                        weights.as_mut_ptr(),
                        3,
                    ),
                )?;
                ok(
                    "sinew_blend_shapes_apply",
                    sinew_blend_shapes_apply(&shapes, weights.as_ptr(), 3, 0.0, 1, &base, &out),
                )?;
                for (s, g) in skinned.iter_mut().zip(&grid) {
                    s[2] = g[2] * (1.0 + weights[0]);
                }
                ok(
                    "sinew_mush_deform",
                    sinew_mush_deform(
                        &mush,
                        skinned.as_ptr().cast(),
                        gn,
                        mush_scratch.as_mut_ptr().cast(),
                        mush_scratch.len(),
                        mushed.as_mut_ptr().cast(),
                        gn,
                    ),
                )?;
            }
            Ok::<f32, Failed>(p[N - 1][2] + n[7][1] + weights[2] + mushed[17][2])
        },
    );
}

/// Motion matching, each frame: raw features drifting over time normalized
/// into a query, the pruned and brute-force searches (the same frame), the
/// current frame's cost, a search under it that keeps the current frame
/// unless another is better (OK or NOT_FOUND), and the found frame's
/// features and place in its clip.
pub fn motion_matching_allocates_nothing() {
    let bytes = crate::mm::database(
        9,
        crate::mm::Shape {
            frames: 2000,
            ranges: 6,
            mirrored: true,
            ties: false,
            hidden: 0.1,
        },
    );
    let mut db = sinew_mm_database {
        data: std::ptr::null(),
        size: 0,
        feature_count: 0,
        frame_count: 0,
        check: 0,
    };
    let b = bytes.as_slice();
    // SAFETY: 16-byte aligned bytes of their length that outlive the
    // handle; the out-parameter is a local.
    let s = unsafe { sinew_mm_database_load(b.as_ptr(), b.len(), &mut db) };
    assert_eq!(s, sinew_status::Ok);
    let fc = db.feature_count as usize;
    let mut raw = vec![0.0f32; fc];
    let mut query = vec![0.0f32; fc];
    let mut features = vec![0.0f32; fc];
    let mut current = 0u32;
    frames_allocate_nothing("the C ABI's motion-matching calls", 300, |frame| {
        for (f, r) in raw.iter_mut().enumerate() {
            *r = (frame as f32 * 0.05 + f as f32).sin();
        }
        let (mut best, mut cost) = (0u32, 0.0f32);
        let (mut brute, mut brute_cost) = (0u32, 0.0f32);
        let (mut now, mut kept, mut kept_cost) = (0.0f32, 0u32, 0.0f32);
        let mut place = [0u32; 4];
        let [range, local, clip, mirrored] = &mut place;
        // SAFETY: the handle's bytes outlive it; every buffer is a live
        // local of the length passed, outputs distinct from inputs.
        unsafe {
            ok(
                "sinew_mm_normalize",
                sinew_mm_normalize(&db, 0, raw.as_ptr(), fc, query.as_mut_ptr(), fc),
            )?;
            ok(
                "sinew_mm_search",
                sinew_mm_search(&db, query.as_ptr(), fc, f32::INFINITY, &mut best, &mut cost),
            )?;
            ok(
                "sinew_mm_search_brute",
                sinew_mm_search_brute(
                    &db,
                    query.as_ptr(),
                    fc,
                    f32::INFINITY,
                    &mut brute,
                    &mut brute_cost,
                ),
            )?;
            ok(
                "sinew_mm_cost",
                sinew_mm_cost(&db, query.as_ptr(), fc, current, &mut now),
            )?;
            let s = sinew_mm_search(
                &db,
                query.as_ptr(),
                fc,
                now - 0.1,
                &mut kept,
                &mut kept_cost,
            );
            if s != sinew_status::NotFound {
                ok("sinew_mm_search", s)?;
            }
            ok(
                "sinew_mm_frame_features",
                sinew_mm_frame_features(&db, best, features.as_mut_ptr(), fc),
            )?;
            ok(
                "sinew_mm_locate",
                sinew_mm_locate(&db, best, range, local, clip, mirrored),
            )?;
        }
        assert_eq!((best, cost.to_bits()), (brute, brute_cost.to_bits()));
        current = best;
        Ok::<f32, Failed>(cost + features[0] + place[1] as f32 + 1.0)
    });
}
