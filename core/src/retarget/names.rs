//! Joint correspondences by name: a canonical humanoid vocabulary
//! ([`Role`]), built-in tables of the conventions sinew meets
//! ([`Convention`]), and [`correspond`], which pairs a target skeleton's
//! joints with a source skeleton's through them.
//!
//! Names compare without case, separators (`_ . - space`) or a namespace
//! prefix (anything up to the last `:` or `|`), so `mixamorig:LeftUpLeg`,
//! `thigh.l` and `thigh_l` match the table entries `LeftUpLeg` and `thigh_l`.

use crate::error::Error;
use crate::skeleton::{Skeleton, NO_PARENT};

/// A joint of the canonical humanoid: what a table entry (or a pair of
/// names) says a joint *is*, whatever the skeleton calls it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Role {
    /// Pelvis: the root of the legs and the spine.
    Hips,
    /// Lowest spine joint above the hips.
    Spine,
    /// Middle spine joint.
    Chest,
    /// Top spine joint, below the neck and collars.
    UpperChest,
    /// Neck.
    Neck,
    /// Head.
    Head,
    /// Left hip bone between the pelvis and the thigh (CMU's `lButtock`, `LHipJoint`).
    LeftHipBone,
    /// Left thigh.
    LeftUpperLeg,
    /// Left shin.
    LeftLowerLeg,
    /// Left ankle.
    LeftFoot,
    /// Left ball of the foot.
    LeftToes,
    /// Left collar bone (clavicle).
    LeftShoulder,
    /// Left upper arm.
    LeftUpperArm,
    /// Left forearm.
    LeftLowerArm,
    /// Left wrist.
    LeftHand,
    /// Right hip bone.
    RightHipBone,
    /// Right thigh.
    RightUpperLeg,
    /// Right shin.
    RightLowerLeg,
    /// Right ankle.
    RightFoot,
    /// Right ball of the foot.
    RightToes,
    /// Right collar bone.
    RightShoulder,
    /// Right upper arm.
    RightUpperArm,
    /// Right forearm.
    RightLowerArm,
    /// Right wrist.
    RightHand,
}

impl Role {
    /// Every role, in declaration order.
    pub const ALL: [Role; 24] = [
        Role::Hips,
        Role::Spine,
        Role::Chest,
        Role::UpperChest,
        Role::Neck,
        Role::Head,
        Role::LeftHipBone,
        Role::LeftUpperLeg,
        Role::LeftLowerLeg,
        Role::LeftFoot,
        Role::LeftToes,
        Role::LeftShoulder,
        Role::LeftUpperArm,
        Role::LeftLowerArm,
        Role::LeftHand,
        Role::RightHipBone,
        Role::RightUpperLeg,
        Role::RightLowerLeg,
        Role::RightFoot,
        Role::RightToes,
        Role::RightShoulder,
        Role::RightUpperArm,
        Role::RightLowerArm,
        Role::RightHand,
    ];

    /// The role's canonical name (`"hips"`, `"left upper leg"`, ...).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Role::Hips => "hips",
            Role::Spine => "spine",
            Role::Chest => "chest",
            Role::UpperChest => "upper chest",
            Role::Neck => "neck",
            Role::Head => "head",
            Role::LeftHipBone => "left hip bone",
            Role::LeftUpperLeg => "left upper leg",
            Role::LeftLowerLeg => "left lower leg",
            Role::LeftFoot => "left foot",
            Role::LeftToes => "left toes",
            Role::LeftShoulder => "left shoulder",
            Role::LeftUpperArm => "left upper arm",
            Role::LeftLowerArm => "left lower arm",
            Role::LeftHand => "left hand",
            Role::RightHipBone => "right hip bone",
            Role::RightUpperLeg => "right upper leg",
            Role::RightLowerLeg => "right lower leg",
            Role::RightFoot => "right foot",
            Role::RightToes => "right toes",
            Role::RightShoulder => "right shoulder",
            Role::RightUpperArm => "right upper arm",
            Role::RightLowerArm => "right lower arm",
            Role::RightHand => "right hand",
        }
    }
}

/// A naming convention with a built-in table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Convention {
    /// CMU BVH in cgspeed's Daz-friendly conversion (`hip`, `abdomen`,
    /// `chest`, `lThigh`, `lShin`, `lShldr`, ...).
    CmuDaz,
    /// CMU BVH in cgspeed's MotionBuilder-friendly conversion (`Hips`,
    /// `LowerBack`, `LHipJoint`, `LeftUpLeg`, ...).
    CmuMotionBuilder,
    /// Mixamo (`mixamorig:Hips`, `Spine`, `Spine1`, `Spine2`, `LeftUpLeg`, ...).
    Mixamo,
    /// Unreal-style names: GDQuest's mannequin (`pelvis`, `thigh.l`,
    /// `calf.l`, `upperarm.l`) and sinew's procedural humanoid (`thigh_l`,
    /// `upper_arm_l`, `spine_03`).
    Mannequin,
    /// three.js RobotExpressive (`Hips`, `Abdomen`, `Torso_1`, `UpperLegL`, ...).
    RobotExpressive,
    /// MakeHuman's default skeleton (`root`, `pelvis.L`, `upperleg01.L`, `spine05`, ...).
    MakeHuman,
    /// Khronos' CesiumMan (`Skeleton_torso_joint_1`, `leg_joint_L_1`, ...).
    CesiumMan,
    /// CMU's own ASF/AMC names, as some BVH conversions keep them (`hip`,
    /// `lowerback`, `thorax`, `lfemur`, `ltibia`, `lhumerus`, `lradius`,
    /// `lwrist`, ...).
    CmuAsf,
}

use Role::*;

const CMU_DAZ: &[(&str, Role)] = &[
    ("hip", Hips),
    ("abdomen", Spine),
    ("chest", Chest),
    ("neck", Neck),
    ("head", Head),
    ("lButtock", LeftHipBone),
    ("lThigh", LeftUpperLeg),
    ("lShin", LeftLowerLeg),
    ("lFoot", LeftFoot),
    ("lCollar", LeftShoulder),
    ("lShldr", LeftUpperArm),
    ("lForeArm", LeftLowerArm),
    ("lHand", LeftHand),
    ("rButtock", RightHipBone),
    ("rThigh", RightUpperLeg),
    ("rShin", RightLowerLeg),
    ("rFoot", RightFoot),
    ("rCollar", RightShoulder),
    ("rShldr", RightUpperArm),
    ("rForeArm", RightLowerArm),
    ("rHand", RightHand),
];

const CMU_MB: &[(&str, Role)] = &[
    ("Hips", Hips),
    ("LowerBack", Spine),
    ("Spine", Chest),
    ("Spine1", UpperChest),
    ("Neck", Neck),
    ("Head", Head),
    ("LHipJoint", LeftHipBone),
    ("LeftUpLeg", LeftUpperLeg),
    ("LeftLeg", LeftLowerLeg),
    ("LeftFoot", LeftFoot),
    ("LeftToeBase", LeftToes),
    ("LeftShoulder", LeftShoulder),
    ("LeftArm", LeftUpperArm),
    ("LeftForeArm", LeftLowerArm),
    ("LeftHand", LeftHand),
    ("RHipJoint", RightHipBone),
    ("RightUpLeg", RightUpperLeg),
    ("RightLeg", RightLowerLeg),
    ("RightFoot", RightFoot),
    ("RightToeBase", RightToes),
    ("RightShoulder", RightShoulder),
    ("RightArm", RightUpperArm),
    ("RightForeArm", RightLowerArm),
    ("RightHand", RightHand),
];

const CMU_ASF: &[(&str, Role)] = &[
    ("hip", Hips),
    ("lowerback", Spine),
    ("upperback", Chest),
    ("thorax", UpperChest),
    ("lowerneck", Neck),
    ("head", Head),
    ("lhipjoint", LeftHipBone),
    ("lfemur", LeftUpperLeg),
    ("ltibia", LeftLowerLeg),
    ("lfoot", LeftFoot),
    ("ltoes", LeftToes),
    ("lclavicle", LeftShoulder),
    ("lhumerus", LeftUpperArm),
    ("lradius", LeftLowerArm),
    ("lwrist", LeftHand),
    ("rhipjoint", RightHipBone),
    ("rfemur", RightUpperLeg),
    ("rtibia", RightLowerLeg),
    ("rfoot", RightFoot),
    ("rtoes", RightToes),
    ("rclavicle", RightShoulder),
    ("rhumerus", RightUpperArm),
    ("rradius", RightLowerArm),
    ("rwrist", RightHand),
];

const MIXAMO: &[(&str, Role)] = &[
    ("mixamorig:Hips", Hips),
    ("mixamorig:Spine", Spine),
    ("mixamorig:Spine1", Chest),
    ("mixamorig:Spine2", UpperChest),
    ("mixamorig:Neck", Neck),
    ("mixamorig:Head", Head),
    ("mixamorig:LeftUpLeg", LeftUpperLeg),
    ("mixamorig:LeftLeg", LeftLowerLeg),
    ("mixamorig:LeftFoot", LeftFoot),
    ("mixamorig:LeftToeBase", LeftToes),
    ("mixamorig:LeftShoulder", LeftShoulder),
    ("mixamorig:LeftArm", LeftUpperArm),
    ("mixamorig:LeftForeArm", LeftLowerArm),
    ("mixamorig:LeftHand", LeftHand),
    ("mixamorig:RightUpLeg", RightUpperLeg),
    ("mixamorig:RightLeg", RightLowerLeg),
    ("mixamorig:RightFoot", RightFoot),
    ("mixamorig:RightToeBase", RightToes),
    ("mixamorig:RightShoulder", RightShoulder),
    ("mixamorig:RightArm", RightUpperArm),
    ("mixamorig:RightForeArm", RightLowerArm),
    ("mixamorig:RightHand", RightHand),
];

const MANNEQUIN: &[(&str, Role)] = &[
    ("pelvis", Hips),
    ("spine_01", Spine),
    ("spine_02", Chest),
    ("spine_03", UpperChest),
    ("neck_01", Neck),
    ("head", Head),
    ("thigh_l", LeftUpperLeg),
    ("calf_l", LeftLowerLeg),
    ("foot_l", LeftFoot),
    ("ball_l", LeftToes),
    ("clavicle_l", LeftShoulder),
    ("upperarm_l", LeftUpperArm),
    ("lowerarm_l", LeftLowerArm),
    ("hand_l", LeftHand),
    ("thigh_r", RightUpperLeg),
    ("calf_r", RightLowerLeg),
    ("foot_r", RightFoot),
    ("ball_r", RightToes),
    ("clavicle_r", RightShoulder),
    ("upperarm_r", RightUpperArm),
    ("lowerarm_r", RightLowerArm),
    ("hand_r", RightHand),
];

const ROBOT_EXPRESSIVE: &[(&str, Role)] = &[
    ("Hips", Hips),
    ("Abdomen", Spine),
    ("Torso_1", Chest),
    ("Neck", Neck),
    ("Head", Head),
    ("UpperLegL", LeftUpperLeg),
    ("LowerLegL", LeftLowerLeg),
    ("FootL", LeftFoot),
    ("ShoulderL", LeftShoulder),
    ("UpperArmL", LeftUpperArm),
    ("LowerArmL", LeftLowerArm),
    // The robot has no wrist; its middle palm bone stands for the hand.
    ("Palm2L", LeftHand),
    ("UpperLegR", RightUpperLeg),
    ("LowerLegR", RightLowerLeg),
    ("FootR", RightFoot),
    ("ShoulderR", RightShoulder),
    ("UpperArmR", RightUpperArm),
    ("LowerArmR", RightLowerArm),
    ("Palm2R", RightHand),
];

const MAKE_HUMAN: &[(&str, Role)] = &[
    ("root", Hips),
    ("spine05", Spine),
    ("spine03", Chest),
    ("spine01", UpperChest),
    ("neck01", Neck),
    ("head", Head),
    ("pelvis.L", LeftHipBone),
    ("upperleg01.L", LeftUpperLeg),
    ("lowerleg01.L", LeftLowerLeg),
    ("foot.L", LeftFoot),
    ("clavicle.L", LeftShoulder),
    ("upperarm01.L", LeftUpperArm),
    ("lowerarm01.L", LeftLowerArm),
    ("wrist.L", LeftHand),
    ("pelvis.R", RightHipBone),
    ("upperleg01.R", RightUpperLeg),
    ("lowerleg01.R", RightLowerLeg),
    ("foot.R", RightFoot),
    ("clavicle.R", RightShoulder),
    ("upperarm01.R", RightUpperArm),
    ("lowerarm01.R", RightLowerArm),
    ("wrist.R", RightHand),
];

const CESIUM_MAN: &[(&str, Role)] = &[
    ("Skeleton_torso_joint_1", Hips),
    ("Skeleton_torso_joint_2", Spine),
    ("torso_joint_3", Chest),
    ("Skeleton_neck_joint_1", Neck),
    ("Skeleton_neck_joint_2", Head),
    ("leg_joint_L_1", LeftUpperLeg),
    ("leg_joint_L_2", LeftLowerLeg),
    ("leg_joint_L_3", LeftFoot),
    ("leg_joint_L_5", LeftToes),
    ("Skeleton_arm_joint_L__4_", LeftUpperArm),
    ("Skeleton_arm_joint_L__3_", LeftLowerArm),
    ("Skeleton_arm_joint_L__2_", LeftHand),
    ("leg_joint_R_1", RightUpperLeg),
    ("leg_joint_R_2", RightLowerLeg),
    ("leg_joint_R_3", RightFoot),
    ("leg_joint_R_5", RightToes),
    ("Skeleton_arm_joint_R", RightUpperArm),
    ("Skeleton_arm_joint_R__2_", RightLowerArm),
    ("Skeleton_arm_joint_R__3_", RightHand),
];

impl Convention {
    /// Every convention, in the order [`Convention::detect`] breaks ties.
    pub const ALL: [Convention; 8] = [
        Convention::CmuDaz,
        Convention::CmuMotionBuilder,
        Convention::Mixamo,
        Convention::Mannequin,
        Convention::RobotExpressive,
        Convention::MakeHuman,
        Convention::CesiumMan,
        Convention::CmuAsf,
    ];

    /// A short name for reports (`"cmu-daz"`, `"mixamo"`, ...).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Convention::CmuDaz => "cmu-daz",
            Convention::CmuMotionBuilder => "cmu-motionbuilder",
            Convention::Mixamo => "mixamo",
            Convention::Mannequin => "mannequin",
            Convention::RobotExpressive => "robot-expressive",
            Convention::MakeHuman => "makehuman",
            Convention::CesiumMan => "cesium-man",
            Convention::CmuAsf => "cmu-asf",
        }
    }

    /// The table: joint names (as the convention spells them) and their roles.
    #[must_use]
    pub fn table(self) -> &'static [(&'static str, Role)] {
        match self {
            Convention::CmuDaz => CMU_DAZ,
            Convention::CmuMotionBuilder => CMU_MB,
            Convention::Mixamo => MIXAMO,
            Convention::Mannequin => MANNEQUIN,
            Convention::RobotExpressive => ROBOT_EXPRESSIVE,
            Convention::MakeHuman => MAKE_HUMAN,
            Convention::CesiumMan => CESIUM_MAN,
            Convention::CmuAsf => CMU_ASF,
        }
    }

    /// The role of a joint called `name` in this convention.
    #[must_use]
    pub fn role_of(self, name: &str) -> Option<Role> {
        self.table()
            .iter()
            .find(|(n, _)| names_match(n, name))
            .map(|&(_, r)| r)
    }

    /// The convention whose table names the most joints of `skeleton` (ties
    /// to the earlier in [`Convention::ALL`]); `None` when no convention
    /// names at least four of its joints.
    #[must_use]
    pub fn detect(skeleton: &Skeleton<'_>) -> Option<Convention> {
        let mut best = None;
        let mut best_score = 3;
        for c in Convention::ALL {
            let score = (0..skeleton.joint_count())
                .filter(|&j| {
                    skeleton
                        .joint_name(j)
                        .is_some_and(|n| c.role_of(n).is_some())
                })
                .count();
            if score > best_score {
                best = Some(c);
                best_score = score;
            }
        }
        best
    }
}

/// The characters of `name` that take part in comparisons: after the last
/// `:` or `|`, lowercased, without `_ . -` and spaces.
fn key(name: &str) -> impl Iterator<Item = char> + '_ {
    let start = name.rfind([':', '|']).map_or(0, |i| i + 1);
    name.get(start..)
        .unwrap_or("")
        .chars()
        .filter(|c| !matches!(c, '_' | '.' | '-' | ' '))
        .flat_map(char::to_lowercase)
}

/// Whether two joint names are the same under the comparison rule of this
/// module (case, separators and namespace prefixes ignored).
#[must_use]
pub fn names_match(a: &str, b: &str) -> bool {
    key(a).eq(key(b))
}

/// The first joint of `skeleton` whose name is `name` exactly, else the
/// first whose name matches it by [`names_match`].
#[must_use]
pub fn find_joint(skeleton: &Skeleton<'_>, name: &str) -> Option<usize> {
    skeleton.find_joint(name).or_else(|| {
        (0..skeleton.joint_count())
            .find(|&j| skeleton.joint_name(j).is_some_and(|n| names_match(n, name)))
    })
}

/// The role of joint `j` under `convention` (`None` without a convention).
#[must_use]
pub fn role_of_joint(
    skeleton: &Skeleton<'_>,
    convention: Option<Convention>,
    j: usize,
) -> Option<Role> {
    let c = convention?;
    c.role_of(skeleton.joint_name(j)?)
}

/// The first joint of `skeleton` with `role` under `convention`.
#[must_use]
pub fn joint_with_role(
    skeleton: &Skeleton<'_>,
    convention: Option<Convention>,
    role: Role,
) -> Option<usize> {
    (0..skeleton.joint_count()).find(|&j| role_of_joint(skeleton, convention, j) == Some(role))
}

/// What [`correspond`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Correspondence {
    /// The source skeleton's convention, if one was recognised.
    pub source_convention: Option<Convention>,
    /// The target skeleton's convention, if one was recognised.
    pub target_convention: Option<Convention>,
    /// Target joints mapped (by tables and pairs, after dropping conflicts).
    pub mapped: usize,
    /// Target joints mapped because a source joint has the same name (and
    /// the tables left both unmapped).
    pub same_name: usize,
    /// Target joints mapped by a caller's pair.
    pub by_pair: usize,
    /// Target joints whose mapping was dropped because it conflicts with the
    /// hierarchy (see [`Error::RetargetConflict`]).
    pub dropped: usize,
}

/// Whether source joint `a` is a proper ancestor of `b`.
pub(crate) fn is_ancestor(skeleton: &Skeleton<'_>, a: usize, b: usize) -> bool {
    let mut k = b;
    while let Some(p) = skeleton.parent(k) {
        if p == a {
            return true;
        }
        k = p;
    }
    false
}

/// The nearest mapped proper ancestor of target joint `j` under `map`.
pub(crate) fn mapped_ancestor(target: &Skeleton<'_>, map: &[u16], j: usize) -> Option<usize> {
    let mut k = j;
    while let Some(p) = target.parent(k) {
        if map.get(p).is_some_and(|&s| s != NO_PARENT) {
            return Some(p);
        }
        k = p;
    }
    None
}

/// Pairs each target joint with a source joint: through the roles of both
/// skeletons' detected conventions, then by equal names (for joints the
/// tables left unmapped on both sides), then `pairs` (`(target name, source
/// name)`, which override; a source name of `""` unmaps the target joint).
/// Writes `out[t]` = the source joint of target joint `t`, or
/// [`NO_PARENT`] for an unmapped one.
///
/// A mapping that conflicts with the hierarchy (the source joint is not
/// below the source joint of the target joint's nearest mapped ancestor) is
/// dropped, parents first, so the result always builds a map.
///
/// # Errors
/// [`Error::BadLength`] when `out` is not one entry per target joint;
/// [`Error::UnknownJoint`] naming the first pair whose target or source
/// name matches no joint.
pub fn correspond(
    source: &Skeleton<'_>,
    target: &Skeleton<'_>,
    pairs: &[(&str, &str)],
    out: &mut [u16],
) -> Result<Correspondence, Error> {
    let nt = target.joint_count();
    crate::soa::check_len("correspondence", nt, out.len())?;
    let sc = Convention::detect(source);
    let tc = Convention::detect(target);
    // Resolve the pairs before writing anything, so a bad pair leaves `out` alone.
    for (entry, &(t, s)) in pairs.iter().enumerate() {
        if find_joint(target, t).is_none() || (!s.is_empty() && find_joint(source, s).is_none()) {
            return Err(Error::UnknownJoint { entry });
        }
    }
    for (t, slot) in out.iter_mut().enumerate() {
        *slot = NO_PARENT;
        if let Some(role) = role_of_joint(target, tc, t) {
            if let Some(s) = joint_with_role(source, sc, role) {
                *slot = s as u16;
            }
        }
    }
    // Joints of the same name correspond too (fingers, twist joints, a
    // skeleton retargeted onto itself), unless the tables used the source
    // joint already.
    let mut same_name = 0;
    for t in 0..nt {
        if out.get(t) != Some(&NO_PARENT) {
            continue;
        }
        let Some(name) = target.joint_name(t) else {
            continue;
        };
        let Some(s) = find_joint(source, name) else {
            continue;
        };
        if out.contains(&(s as u16)) {
            continue;
        }
        if let Some(slot) = out.get_mut(t) {
            *slot = s as u16;
            same_name += 1;
        }
    }
    let mut by_pair = 0;
    for &(t, s) in pairs {
        if let Some(tj) = find_joint(target, t) {
            let sj = if s.is_empty() {
                None
            } else {
                find_joint(source, s)
            };
            if let Some(slot) = out.get_mut(tj) {
                *slot = sj.map_or(NO_PARENT, |s| s as u16);
            }
        }
    }
    for &(t, s) in pairs {
        if !s.is_empty() && find_joint(target, t).is_some() {
            by_pair += 1;
        }
    }
    let mut dropped = 0;
    for j in 0..nt {
        let Some(&s) = out.get(j) else { break };
        if s == NO_PARENT {
            continue;
        }
        let ok = match mapped_ancestor(target, out, j) {
            Some(p) => out
                .get(p)
                .is_some_and(|&sp| is_ancestor(source, sp as usize, s as usize)),
            None => true,
        };
        if !ok {
            if let Some(slot) = out.get_mut(j) {
                *slot = NO_PARENT;
            }
            dropped += 1;
        }
    }
    let mapped = out.iter().filter(|&&s| s != NO_PARENT).count();
    Ok(Correspondence {
        source_convention: sc,
        target_convention: tc,
        mapped,
        same_name,
        by_pair,
        dropped,
    })
}
