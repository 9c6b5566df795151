//! The embedded default character: a procedural humanoid and three looping
//! locomotion clips (walk, jog, run), generated into caller buffers.
//!
//! Units are metres; +Y is up and the character faces +Z. The rest pose is an
//! A-pose (arms 70° down from horizontal). Clips are sampled at any rate; the
//! last frame equals the first so they loop without a seam.

use core::f32::consts::{PI, TAU};

use crate::clip::RawClip;
use crate::container::Align16;
use crate::error::Error;
use crate::math::{Quat, Transform, Vec3};
use crate::skeleton::{JointDef, Skeleton};
use crate::soa::{check_len, SoaTransform, LANES};

/// Joints in the procedural humanoid.
pub const HUMANOID_JOINT_COUNT: usize = 70;

/// Bytes of the humanoid's skeleton container (for a static buffer).
pub const HUMANOID_SKELETON_BYTES: usize = 8_496;

/// Sample rate of the default clips (the one [`crate::clip::DEFAULT_SAMPLE_RATE`]).
pub use crate::clip::DEFAULT_SAMPLE_RATE;

const FINGERS: [(&str, f32); 4] = [
    ("index", 0.03),
    ("middle", 0.01),
    ("ring", -0.01),
    ("pinky", -0.03),
];

/// The humanoid's joints, parents-first: pelvis, spine (3), neck, head with jaw
/// and eyes, two arms with clavicle, twist joints and five fingers, two legs
/// with ball and toe.
#[must_use]
pub fn humanoid_joints() -> [JointDef<'static>; HUMANOID_JOINT_COUNT] {
    let mut joints = [JointDef {
        name: "",
        parent: None,
        rest: Transform::IDENTITY,
    }; HUMANOID_JOINT_COUNT];
    let mut n = 0usize;
    let mut add = |name: &'static str, parent: Option<usize>, t: Vec3, r: Quat| -> usize {
        joints[n] = JointDef {
            name,
            parent,
            rest: Transform::from_translation_rotation(t, r),
        };
        n += 1;
        n - 1
    };
    let id = Quat::IDENTITY;
    let pelvis = add("pelvis", None, Vec3::new(0.0, 0.95, 0.0), id);
    let s1 = add(
        "spine_01",
        Some(pelvis),
        Vec3::new(0.0, 0.10, 0.0),
        Quat::from_rotation_x(-0.05),
    );
    let s2 = add(
        "spine_02",
        Some(s1),
        Vec3::new(0.0, 0.12, 0.0),
        Quat::from_rotation_x(0.03),
    );
    let s3 = add(
        "spine_03",
        Some(s2),
        Vec3::new(0.0, 0.12, 0.0),
        Quat::from_rotation_x(0.02),
    );
    let neck = add(
        "neck_01",
        Some(s3),
        Vec3::new(0.0, 0.14, 0.01),
        Quat::from_rotation_x(0.1),
    );
    let head = add(
        "head",
        Some(neck),
        Vec3::new(0.0, 0.10, 0.0),
        Quat::from_rotation_x(-0.1),
    );
    add(
        "jaw",
        Some(head),
        Vec3::new(0.0, 0.02, 0.04),
        Quat::from_rotation_x(0.2),
    );
    add("eye_l", Some(head), Vec3::new(0.03, 0.08, 0.08), id);
    add("eye_r", Some(head), Vec3::new(-0.03, 0.08, 0.08), id);
    add("head_end", Some(head), Vec3::new(0.0, 0.18, 0.0), id);
    for (side, s) in [("l", 1.0f32), ("r", -1.0f32)] {
        let name = |base: &'static str| side_name(base, side);
        let clav = add(
            name("clavicle"),
            Some(s3),
            Vec3::new(s * 0.04, 0.10, 0.0),
            id,
        );
        let ua = add(
            name("upper_arm"),
            Some(clav),
            Vec3::new(s * 0.14, 0.0, 0.0),
            Quat::from_rotation_z(-s * 70f32.to_radians()),
        );
        let uat = add(
            name("upper_arm_twist"),
            Some(ua),
            Vec3::new(s * 0.14, 0.0, 0.0),
            id,
        );
        let la = add(
            name("lower_arm"),
            Some(uat),
            Vec3::new(s * 0.14, 0.0, 0.0),
            id,
        );
        let lat = add(
            name("lower_arm_twist"),
            Some(la),
            Vec3::new(s * 0.13, 0.0, 0.0),
            id,
        );
        let hand = add(name("hand"), Some(lat), Vec3::new(s * 0.13, 0.0, 0.0), id);
        let t1 = add(
            name("thumb_01"),
            Some(hand),
            Vec3::new(s * 0.03, -0.01, 0.03),
            Quat::from_rotation_y(-s * 0.6),
        );
        let t2 = add(
            name("thumb_02"),
            Some(t1),
            Vec3::new(s * 0.035, 0.0, 0.0),
            id,
        );
        add(
            name("thumb_03"),
            Some(t2),
            Vec3::new(s * 0.03, 0.0, 0.0),
            id,
        );
        for (finger, z) in FINGERS {
            let meta = add(
                finger_name(finger, 0, side),
                Some(hand),
                Vec3::new(s * 0.04, 0.0, z),
                id,
            );
            let p1 = add(
                finger_name(finger, 1, side),
                Some(meta),
                Vec3::new(s * 0.05, 0.0, 0.0),
                id,
            );
            let p2 = add(
                finger_name(finger, 2, side),
                Some(p1),
                Vec3::new(s * 0.03, 0.0, 0.0),
                id,
            );
            add(
                finger_name(finger, 3, side),
                Some(p2),
                Vec3::new(s * 0.025, 0.0, 0.0),
                id,
            );
        }
    }
    for (side, s) in [("l", 1.0f32), ("r", -1.0f32)] {
        let name = |base: &'static str| side_name(base, side);
        let thigh = add(
            name("thigh"),
            Some(pelvis),
            Vec3::new(s * 0.1, -0.05, 0.0),
            id,
        );
        let calf = add(name("calf"), Some(thigh), Vec3::new(0.0, -0.45, 0.0), id);
        let foot = add(name("foot"), Some(calf), Vec3::new(0.0, -0.43, 0.0), id);
        let ball = add(name("ball"), Some(foot), Vec3::new(0.0, -0.06, 0.12), id);
        add(name("toe_end"), Some(ball), Vec3::new(0.0, 0.0, 0.06), id);
    }
    debug_assert_eq!(n, HUMANOID_JOINT_COUNT);
    joints
}

fn side_name(base: &str, side: &str) -> &'static str {
    const NAMES: [(&str, &str, &str); 11] = [
        ("clavicle", "clavicle_l", "clavicle_r"),
        ("upper_arm", "upper_arm_l", "upper_arm_r"),
        ("upper_arm_twist", "upper_arm_twist_l", "upper_arm_twist_r"),
        ("lower_arm", "lower_arm_l", "lower_arm_r"),
        ("lower_arm_twist", "lower_arm_twist_l", "lower_arm_twist_r"),
        ("hand", "hand_l", "hand_r"),
        ("thumb_01", "thumb_01_l", "thumb_01_r"),
        ("thumb_02", "thumb_02_l", "thumb_02_r"),
        ("thumb_03", "thumb_03_l", "thumb_03_r"),
        ("thigh", "thigh_l", "thigh_r"),
        ("calf", "calf_l", "calf_r"),
    ];
    const LEG: [(&str, &str, &str); 3] = [
        ("foot", "foot_l", "foot_r"),
        ("ball", "ball_l", "ball_r"),
        ("toe_end", "toe_end_l", "toe_end_r"),
    ];
    NAMES
        .iter()
        .chain(LEG.iter())
        .find(|(b, _, _)| *b == base)
        .map_or("", |&(_, l, r)| if side == "l" { l } else { r })
}

fn finger_name(finger: &str, k: usize, side: &str) -> &'static str {
    const F: [[&str; 8]; 4] = [
        [
            "index_00_l",
            "index_01_l",
            "index_02_l",
            "index_03_l",
            "index_00_r",
            "index_01_r",
            "index_02_r",
            "index_03_r",
        ],
        [
            "middle_00_l",
            "middle_01_l",
            "middle_02_l",
            "middle_03_l",
            "middle_00_r",
            "middle_01_r",
            "middle_02_r",
            "middle_03_r",
        ],
        [
            "ring_00_l",
            "ring_01_l",
            "ring_02_l",
            "ring_03_l",
            "ring_00_r",
            "ring_01_r",
            "ring_02_r",
            "ring_03_r",
        ],
        [
            "pinky_00_l",
            "pinky_01_l",
            "pinky_02_l",
            "pinky_03_l",
            "pinky_00_r",
            "pinky_01_r",
            "pinky_02_r",
            "pinky_03_r",
        ],
    ];
    let f = FINGERS.iter().position(|(n, _)| *n == finger).unwrap_or(0);
    F[f][k + if side == "l" { 0 } else { 4 }]
}

/// Joints of the tail that [`humanoid_with_tail_joints`] adds to the humanoid.
pub const TAIL_JOINT_COUNT: usize = 6;

/// The humanoid's joints followed by a tail of [`TAIL_JOINT_COUNT`] joints
/// (`tail_01` .. `tail_06`) that leaves the pelvis backwards (−Z), drooping
/// a little more at every joint, 0.9 m long in all.
///
/// The gait clips hold the tail at its rest pose (its joints have no
/// motion of their own), so it is the test subject for secondary motion:
/// rigid, it sticks out behind the character; with spring bones
/// ([`crate::secondary::chain`]) it swings and trails. The first
/// [`HUMANOID_JOINT_COUNT`] joints are [`humanoid_joints`] unchanged.
#[must_use]
pub fn humanoid_with_tail_joints() -> [JointDef<'static>; HUMANOID_JOINT_COUNT + TAIL_JOINT_COUNT] {
    const NAMES: [&str; TAIL_JOINT_COUNT] = [
        "tail_01", "tail_02", "tail_03", "tail_04", "tail_05", "tail_06",
    ];
    let body = humanoid_joints();
    let mut joints = [body[0]; HUMANOID_JOINT_COUNT + TAIL_JOINT_COUNT];
    joints[..HUMANOID_JOINT_COUNT].copy_from_slice(&body);
    // The pelvis is joint 0; the tail's first joint sits just behind it.
    let mut parent = 0;
    for (k, name) in NAMES.iter().enumerate() {
        let (offset, droop) = if k == 0 {
            (Vec3::new(0.0, -0.02, -0.1), Quat::from_rotation_x(-0.35))
        } else {
            (Vec3::new(0.0, 0.0, -0.16), Quat::from_rotation_x(-0.1))
        };
        joints[HUMANOID_JOINT_COUNT + k] = JointDef {
            name,
            parent: Some(parent),
            rest: Transform::from_translation_rotation(offset, droop),
        };
        parent = HUMANOID_JOINT_COUNT + k;
    }
    joints
}

/// Builds the humanoid's skeleton container into `out` (see [`crate::skeleton::build`]).
///
/// # Errors
/// [`Error::BufferTooSmall`] when `out` is shorter than
/// [`HUMANOID_SKELETON_BYTES`], [`Error::Misaligned`] when it is not 16-byte aligned.
pub fn write_humanoid_skeleton(out: &mut [u8]) -> Result<usize, Error> {
    crate::skeleton::build(&humanoid_joints(), out, None)
}

/// The humanoid's skeleton container in a 16-byte aligned array of exactly
/// its size, ready for [`Skeleton::from_bytes`]: [`write_humanoid_skeleton`]
/// into a fresh [`Align16`]. The array is returned by value; to keep it in a
/// `static` (e.g. on a microcontroller), call [`write_humanoid_skeleton`]
/// on the static instead.
///
/// ```
/// use sinew_core::procedural::{humanoid_skeleton_bytes, HUMANOID_JOINT_COUNT};
/// use sinew_core::Skeleton;
///
/// let bytes = humanoid_skeleton_bytes()?;
/// let skeleton = Skeleton::from_bytes(&bytes.0)?;
/// assert_eq!(skeleton.joint_count(), HUMANOID_JOINT_COUNT);
/// # Ok::<(), sinew_core::Error>(())
/// ```
///
/// # Errors
/// Those of [`write_humanoid_skeleton`], which this buffer's size and
/// alignment rule out.
pub fn humanoid_skeleton_bytes() -> Result<Align16<[u8; HUMANOID_SKELETON_BYTES]>, Error> {
    let mut bytes = Align16([0; HUMANOID_SKELETON_BYTES]);
    let len = write_humanoid_skeleton(&mut bytes.0)?;
    // The container fills the array, so `bytes.0` is exactly the container
    // (`humanoid_builds_and_fk_of_rest_is_bind` checks the size).
    debug_assert_eq!(len, HUMANOID_SKELETON_BYTES);
    Ok(bytes)
}

/// A locomotion style of the procedural clips.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gait {
    /// Walk, 1.1 s cycle.
    Walk,
    /// Jog, 0.76 s cycle.
    Jog,
    /// Run, 0.64 s cycle.
    Run,
}

impl Gait {
    /// The three gaits, slowest first.
    pub const ALL: [Gait; 3] = [Gait::Walk, Gait::Jog, Gait::Run];

    /// Lower-case name (`"walk"`, `"jog"`, `"run"`).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Gait::Walk => "walk",
            Gait::Jog => "jog",
            Gait::Run => "run",
        }
    }

    /// Nominal cycle length in seconds (the clip's duration is this rounded to whole frames).
    #[must_use]
    pub fn period(self) -> f32 {
        self.params().period
    }

    fn params(self) -> GaitParams {
        match self {
            Gait::Walk => GaitParams {
                period: 1.10,
                hip: 0.42,
                knee_min: 0.08,
                knee: 1.0,
                ankle: 0.25,
                arm: 0.35,
                elbow: 0.25,
                bob: 0.025,
                yaw: 0.12,
                roll: 0.06,
                lean: 0.04,
            },
            Gait::Jog => GaitParams {
                period: 0.76,
                hip: 0.6,
                knee_min: 0.2,
                knee: 1.5,
                ankle: 0.3,
                arm: 0.5,
                elbow: 1.2,
                bob: 0.045,
                yaw: 0.15,
                roll: 0.05,
                lean: 0.12,
            },
            Gait::Run => GaitParams {
                period: 0.64,
                hip: 0.8,
                knee_min: 0.25,
                knee: 1.9,
                ankle: 0.35,
                arm: 0.7,
                elbow: 1.4,
                bob: 0.06,
                yaw: 0.18,
                roll: 0.05,
                lean: 0.2,
            },
        }
    }
}

#[derive(Clone, Copy)]
struct GaitParams {
    period: f32,
    hip: f32,
    knee_min: f32,
    knee: f32,
    ankle: f32,
    arm: f32,
    elbow: f32,
    bob: f32,
    yaw: f32,
    roll: f32,
    lean: f32,
}

/// Frames of a gait clip at `sample_rate` (last frame repeats the first).
#[must_use]
pub fn gait_frame_count(gait: Gait, sample_rate: f32) -> usize {
    let frames = libm::roundf(gait.period() * sample_rate);
    if (1.0..1.0e6).contains(&frames) {
        frames as usize + 1
    } else {
        1
    }
}

/// Local transform of the joint called `name` at cycle angle `w` (radians).
fn animate(name: &str, rest: &Transform, g: &GaitParams, w: f32) -> Transform {
    let (base, s) = match name.strip_suffix("_l") {
        Some(b) => (b, 1.0f32),
        None => match name.strip_suffix("_r") {
            Some(b) => (b, -1.0f32),
            None => (name, 1.0f32),
        },
    };
    // Left limbs at phase w, right limbs half a cycle later.
    let ws = if s > 0.0 { w } else { w + PI };
    let sin = libm::sinf;
    let cos = libm::cosf;
    let rx = Quat::from_rotation_x;
    let ry = Quat::from_rotation_y;
    let rz = Quat::from_rotation_z;
    let mut t = *rest;
    let anim = match base {
        "pelvis" => {
            t.translation.y += g.bob * cos(2.0 * w);
            ry(g.yaw * sin(w)) * rz(g.roll * sin(w)) * rx(g.lean)
        }
        "spine_01" | "spine_02" | "spine_03" => {
            ry(-g.yaw * 0.45 * sin(w)) * rx(0.02 * sin(2.0 * w))
        }
        "neck_01" => rx(-g.lean * 0.5),
        "head" => ry(-g.yaw * 0.3 * sin(w)) * rx(-g.lean * 0.4 + 0.03 * cos(2.0 * w)),
        "jaw" => rx(0.05 + 0.03 * sin(2.0 * w)),
        "thigh" => rx(-g.hip * sin(ws) - 0.1 * g.lean),
        "calf" => rx(g.knee_min + g.knee * 0.5 * (1.0 - cos(ws + 0.6 * PI))),
        "foot" => rx(g.ankle * sin(ws + 0.5 * PI) - 0.05),
        "ball" => rx(-0.3 * (0.5 + 0.5 * sin(ws - 0.2 * PI))),
        "clavicle" => ry(s * 0.05 * sin(ws)),
        // Arms swing opposite to the leg on the same side.
        "upper_arm" => {
            let out = rx(g.arm * sin(ws + PI));
            t.rotation = out * rest.rotation;
            return t;
        }
        "upper_arm_twist" | "lower_arm_twist" => rx(s * 0.15 * sin(ws)),
        "lower_arm" => ry(-s * (g.elbow + 0.2 * g.elbow * sin(ws + PI))),
        "hand" => rz(-s * 0.1) * ry(-s * 0.1 * sin(ws)),
        "thumb_01" | "thumb_02" | "thumb_03" => rz(-s * 0.15 * (1.0 + 0.2 * sin(w))),
        _ if base.starts_with("index")
            || base.starts_with("middle")
            || base.starts_with("ring")
            || base.starts_with("pinky") =>
        {
            let k = if base.ends_with("_00") { 0.1 } else { 0.35 };
            rz(-s * k * (1.0 + 0.15 * sin(w)))
        }
        _ => Quat::IDENTITY,
    };
    t.rotation = (rest.rotation * anim).normalize();
    t
}

/// Generates a looping gait clip for `skeleton` into `out` and views it.
///
/// Joints are matched by the humanoid's names; joints with other names hold
/// their rest pose. `out` must hold `gait_frame_count(gait, sample_rate) *
/// skeleton.soa_count()` blocks.
///
/// # Errors
/// [`Error::InvalidSampleRate`], [`Error::BadLength`] for a wrongly sized `out`.
pub fn write_gait_clip<'a>(
    gait: Gait,
    skeleton: &Skeleton<'_>,
    sample_rate: f32,
    out: &'a mut [SoaTransform],
) -> Result<RawClip<'a>, Error> {
    if !(sample_rate.is_finite() && sample_rate > 0.0) {
        return Err(Error::InvalidSampleRate);
    }
    let frames = gait_frame_count(gait, sample_rate);
    let n = skeleton.soa_count();
    check_len("clip keys", frames * n, out.len())?;
    let g = gait.params();
    let rest = skeleton.rest_pose();
    for f in 0..frames {
        let block = &mut out[f * n..(f + 1) * n];
        block.copy_from_slice(rest);
        if f + 1 == frames && frames > 1 {
            continue; // overwritten with frame 0 below
        }
        let w = TAU * f as f32 / (frames - 1).max(1) as f32;
        for j in 0..skeleton.joint_count() {
            let r = rest[j / LANES].get(j % LANES);
            let name = skeleton.joint_name(j).unwrap_or("");
            block[j / LANES].set(j % LANES, &animate(name, &r, &g, w));
        }
    }
    if frames > 1 {
        let (head, tail) = out.split_at_mut((frames - 1) * n);
        tail.copy_from_slice(&head[..n]);
    }
    RawClip::new(sample_rate, n, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fk::{self, FkJob};
    use crate::math::Mat4;

    #[test]
    fn humanoid_builds_and_fk_of_rest_is_bind() {
        assert_eq!(
            crate::skeleton::required_size(&humanoid_joints()),
            HUMANOID_SKELETON_BYTES
        );
        let mut buf = Align16([0; HUMANOID_SKELETON_BYTES]);
        let n = write_humanoid_skeleton(&mut buf.0).unwrap();
        assert_eq!(n, HUMANOID_SKELETON_BYTES);
        assert_eq!(humanoid_skeleton_bytes().unwrap(), buf);
        let skel = Skeleton::from_bytes(&buf.0[..n]).unwrap();
        assert_eq!(skel.joint_count(), HUMANOID_JOINT_COUNT);
        let mut models = [Mat4::IDENTITY; HUMANOID_JOINT_COUNT];
        let mut models_ref = [Mat4::IDENTITY; HUMANOID_JOINT_COUNT];
        let job = FkJob::new(&skel, skel.rest_pose());
        fk::local_to_model(&job, &mut models).unwrap();
        fk::reference::local_to_model(&job, &mut models_ref).unwrap();
        for j in 0..HUMANOID_JOINT_COUNT {
            let bind = (models[j] * skel.inverse_bind()[j]).max_abs_diff(&Mat4::IDENTITY);
            assert!(bind < 1e-5, "joint {j}: {bind}");
            assert!(models[j].max_abs_diff(&models_ref[j]) < 1e-5);
        }
        // Feet near the ground, head near 1.75 m.
        let foot = models[skel.find_joint("foot_l").unwrap()].translation();
        let head = models[skel.find_joint("head_end").unwrap()].translation();
        assert!(foot.y > 0.0 && foot.y < 0.1, "{foot:?}");
        assert!(head.y > 1.6 && head.y < 1.9, "{head:?}");
    }

    #[test]
    fn the_tailed_humanoid_is_the_humanoid_plus_a_drooping_tail() {
        let joints = humanoid_with_tail_joints();
        assert_eq!(&joints[..HUMANOID_JOINT_COUNT], &humanoid_joints()[..]);
        let size = crate::skeleton::required_size(&joints);
        let mut buf = Align16([0u8; 16_384]);
        let n = crate::skeleton::build(&joints, &mut buf.0[..size], None).unwrap();
        let skel = Skeleton::from_bytes(&buf.0[..n]).unwrap();
        let mut models = [Mat4::IDENTITY; HUMANOID_JOINT_COUNT + TAIL_JOINT_COUNT];
        fk::local_to_model(&FkJob::new(&skel, skel.rest_pose()), &mut models).unwrap();
        let pelvis = models[0].translation();
        let mut prev = pelvis;
        for k in 1..=TAIL_JOINT_COUNT {
            let j = skel.find_joint(tail_name(k)).unwrap();
            let p = models[j].translation();
            // Each joint further back and lower than the one before.
            assert!(
                p.z < prev.z && p.y < prev.y,
                "tail_{k:02}: {p:?} after {prev:?}"
            );
            prev = p;
        }
        let length = (prev - pelvis).length();
        assert!(length > 0.7 && length < 0.9, "{length}");
    }

    fn tail_name(k: usize) -> &'static str {
        [
            "", "tail_01", "tail_02", "tail_03", "tail_04", "tail_05", "tail_06",
        ][k]
    }
}
