//! Retargeting offline: a map between two skeletons with a report of what
//! was mapped ([`OwnedMap::build`]), and clips baked through the core's
//! kernel ([`bake`]) with two fixes a local-space kernel cannot make:
//! joints the target parents elsewhere than the source (RobotExpressive's
//! feet hang from the root, not the shins) follow their source anchor, and
//! feet planted in the source stay planted on the target (two-bone IK).
//! The result is an [`OwnedClip`] of the target skeleton, ready for
//! [`crate::compress`].

use std::fmt;

use sinew_core::fk::{local_to_model, FkJob};
use sinew_core::ik::two_bone::{TwoBoneGoal, TwoBoneIk};
use sinew_core::ik::IkPose;
use sinew_core::retarget::names::{self, Convention, Correspondence, Role};
use sinew_core::retarget::{self, MapInfo, MapOptions, RetargetMap};
use sinew_core::skeleton::JointDef;
use sinew_core::soa::{get_joint, set_joint};
use sinew_core::{Error, Mat4, Skeleton, SoaTransform, Transform, Vec3, NO_PARENT};

use crate::assets::{check_clip, AlignedBytes, OwnedClip, OwnedSkeleton};
use crate::Asset;

/// How a target joint found its source joint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum How {
    /// Both joints have this role in their conventions' tables.
    Table(Role),
    /// The joints have the same name.
    SameName,
    /// A caller's pair.
    Pair,
}

/// One mapped target joint.
#[derive(Clone, Debug, PartialEq)]
pub struct MappedJoint {
    /// Target joint index.
    pub target: usize,
    /// Target joint name.
    pub target_name: String,
    /// Source joint name.
    pub source_name: String,
    /// How the two were paired.
    pub how: How,
}

/// What a map pairs and leaves out: the report `sinew retarget` prints.
#[derive(Clone, Debug, PartialEq)]
pub struct MappingReport {
    /// The source skeleton's recognised convention.
    pub source_convention: Option<Convention>,
    /// The target skeleton's recognised convention.
    pub target_convention: Option<Convention>,
    /// Mapped target joints, in target order.
    pub mapped: Vec<MappedJoint>,
    /// Target joints left at rest.
    pub unmapped: Vec<String>,
    /// Source joints no target joint reads directly (their rotations still
    /// reach the target through the paths of joints below them).
    pub unused: Vec<String>,
    /// Mapped target joints whose position the bake takes from an anchor
    /// (target joint name, anchor name).
    pub detached: Vec<(String, String)>,
    /// Mappings dropped because they conflict with the hierarchy.
    pub dropped: usize,
    /// What the map builder derived.
    pub info: MapInfo,
}

impl fmt::Display for MappingReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let conv = |c: Option<Convention>| c.map_or("none (names and pairs only)", |c| c.name());
        writeln!(
            f,
            "conventions: source {}, target {}",
            conv(self.source_convention),
            conv(self.target_convention)
        )?;
        let total = self.mapped.len() + self.unmapped.len();
        writeln!(
            f,
            "mapped {} of {} target joints:",
            self.mapped.len(),
            total
        )?;
        for m in &self.mapped {
            let how = match m.how {
                How::Table(r) => r.name(),
                How::SameName => "same name",
                How::Pair => "pair",
            };
            writeln!(
                f,
                "  {:<28} <- {:<28} ({how})",
                m.target_name, m.source_name
            )?;
        }
        writeln!(
            f,
            "unmapped target joints (rest pose): {}",
            list(&self.unmapped)
        )?;
        writeln!(f, "unused source joints: {}", list(&self.unused))?;
        if !self.detached.is_empty() {
            let d: Vec<String> = self
                .detached
                .iter()
                .map(|(j, a)| format!("{j} (follows {a})"))
                .collect();
            writeln!(f, "detached target joints: {}", d.join(", "))?;
        }
        if self.dropped > 0 {
            writeln!(f, "dropped (hierarchy conflicts): {}", self.dropped)?;
        }
        let q = self.info.frame;
        write!(
            f,
            "frame source->target: ({:.3}, {:.3}, {:.3}, {:.3}) {}; root scale {:.4}; {} joints aligned to source rest directions; longest path {}",
            q.x,
            q.y,
            q.z,
            q.w,
            if self.info.frame_from_roles { "from roles" } else { "given or identity" },
            self.info.root_scale,
            self.info.aligned,
            self.info.max_path
        )
    }
}

fn list(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}

/// A retarget map that owns its container bytes, with the correspondence
/// it was built from and its report.
#[derive(Clone)]
pub struct OwnedMap {
    bytes: AlignedBytes,
    /// Source joint of every target joint ([`NO_PARENT`] when unmapped).
    pub correspondence: Vec<u16>,
    /// What was mapped and how.
    pub report: MappingReport,
    /// Detached joints: (target joint, anchor target joint, rest offset in
    /// the anchor's frame).
    detached: Vec<(usize, usize, Vec3)>,
}

/// Role of target joint `j`: its own, else its source joint's.
fn role(
    source: &Skeleton<'_>,
    target: &Skeleton<'_>,
    corr: &Correspondence,
    map: &[u16],
    j: usize,
) -> Option<Role> {
    names::role_of_joint(target, corr.target_convention, j).or_else(|| {
        let s = *map.get(j)?;
        (s != NO_PARENT)
            .then(|| names::role_of_joint(source, corr.source_convention, s as usize))
            .flatten()
    })
}

/// Model matrices of a skeleton's rest pose.
fn rest_models(s: &Skeleton<'_>) -> Result<Vec<Mat4>, Error> {
    let mut m = vec![Mat4::IDENTITY; s.joint_count()];
    local_to_model(&FkJob::new(s, s.rest_pose()), &mut m)?;
    Ok(m)
}

impl OwnedMap {
    /// Pairs the skeletons' joints ([`names::correspond`]: tables, equal
    /// names, then `pairs` of `(target name, source name)`, which override)
    /// and builds the map.
    ///
    /// # Errors
    /// [`Error::UnknownJoint`] for a pair naming no joint; as
    /// [`retarget::write_map`].
    pub fn build(
        source: &Skeleton<'_>,
        target: &Skeleton<'_>,
        pairs: &[(String, String)],
        options: &MapOptions,
    ) -> Result<Self, Error> {
        let pairs: Vec<(&str, &str)> = pairs
            .iter()
            .map(|(t, s)| (t.as_str(), s.as_str()))
            .collect();
        let mut map = vec![NO_PARENT; target.joint_count()];
        let corr = names::correspond(source, target, &pairs, &mut map)?;
        Self::from_correspondence(source, target, map, corr, &pairs, options)
    }

    /// Builds the map of a correspondence made elsewhere (`map[t]` = the
    /// source joint of target joint `t`, or [`NO_PARENT`]).
    ///
    /// # Errors
    /// As [`retarget::write_map`].
    pub fn from_correspondence(
        source: &Skeleton<'_>,
        target: &Skeleton<'_>,
        map: Vec<u16>,
        corr: Correspondence,
        pairs: &[(&str, &str)],
        options: &MapOptions,
    ) -> Result<Self, Error> {
        let size = retarget::map_size(source, target, &map)?;
        let mut bytes = AlignedBytes::zeroed(size);
        let info = retarget::write_map(source, target, &map, options, bytes.as_mut_slice())?;
        let name = |s: &Skeleton<'_>, j: usize| s.joint_name(j).unwrap_or("?").to_string();
        let mut mapped = Vec::new();
        let mut unmapped = Vec::new();
        let mut used = vec![false; source.joint_count()];
        for (t, &s) in map.iter().enumerate() {
            if s == NO_PARENT {
                unmapped.push(name(target, t));
                continue;
            }
            let s = s as usize;
            if let Some(u) = used.get_mut(s) {
                *u = true;
            }
            let tn = name(target, t);
            let sn = name(source, s);
            let paired = pairs
                .iter()
                .any(|&(pt, ps)| names::names_match(pt, &tn) && names::names_match(ps, &sn));
            let tr = names::role_of_joint(target, corr.target_convention, t);
            let sr = names::role_of_joint(source, corr.source_convention, s);
            let how = if paired {
                How::Pair
            } else if let (Some(a), Some(b)) = (tr, sr) {
                if a == b {
                    How::Table(a)
                } else {
                    How::SameName
                }
            } else {
                How::SameName
            };
            mapped.push(MappedJoint {
                target: t,
                target_name: tn,
                source_name: sn,
                how,
            });
        }
        let unused = (0..source.joint_count())
            .filter(|&s| !used[s])
            .map(|s| name(source, s))
            .collect();
        // Detached joints: the target joint that reads the nearest mapped
        // source ancestor of s(j) is not j's nearest mapped target ancestor.
        let mut inverse = vec![usize::MAX; source.joint_count()];
        for (t, &s) in map.iter().enumerate().rev() {
            if s != NO_PARENT {
                inverse[s as usize] = t;
            }
        }
        let rest_t = rest_models(target)?;
        let mut detached = Vec::new();
        let mut detached_names = Vec::new();
        for (t, &s) in map.iter().enumerate() {
            if s == NO_PARENT {
                continue;
            }
            let mut k = s as usize;
            let anchor = loop {
                match source.parent(k) {
                    Some(p) if inverse[p] != usize::MAX => break Some(inverse[p]),
                    Some(p) => k = p,
                    None => break None,
                }
            };
            let Some(anchor) = anchor else { continue };
            let mut p = t;
            let mapped_parent = loop {
                match target.parent(p) {
                    Some(q) if map[q] != NO_PARENT => break Some(q),
                    Some(q) => p = q,
                    None => break None,
                }
            };
            if mapped_parent != Some(anchor) {
                let inv = rest_t[anchor]
                    .inverse_affine()
                    .ok_or(Error::SingularTransform { joint: anchor })?;
                detached.push((t, anchor, inv.transform_point(rest_t[t].translation())));
                detached_names.push((name(target, t), name(target, anchor)));
            }
        }
        Ok(OwnedMap {
            bytes,
            correspondence: map,
            report: MappingReport {
                source_convention: corr.source_convention,
                target_convention: corr.target_convention,
                mapped,
                unmapped,
                unused,
                detached: detached_names,
                dropped: corr.dropped,
                info,
            },
            detached,
        })
    }

    /// The validated view of the container.
    ///
    /// # Errors
    /// Only if the bytes were corrupted since they were built.
    pub fn view(&self) -> Result<RetargetMap<'_>, Error> {
        RetargetMap::from_bytes(self.bytes.as_slice())
    }

    /// The container bytes (16-byte aligned), e.g. to write to a file.
    #[must_use]
    pub fn bytes(&self) -> &[u8] {
        self.bytes.as_slice()
    }
}

/// Options of [`bake`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BakeOptions {
    /// Keep feet that were planted in the source planted on the target,
    /// with two-bone IK on legs whose upper leg, lower leg and foot are
    /// parent and child (other legs are reported and left alone).
    pub foot_contacts: bool,
    /// A source foot is planted while it is within this fraction of the
    /// source's hip height above the lowest the foot gets in the clip...
    pub contact_height: f32,
    /// ...and moves slower than this many hip heights per second.
    pub contact_speed: f32,
}

impl Default for BakeOptions {
    fn default() -> Self {
        BakeOptions {
            foot_contacts: true,
            contact_height: 0.08,
            contact_speed: 0.6,
        }
    }
}

/// One foot's contacts in a bake.
#[derive(Clone, Debug, PartialEq)]
pub struct FootReport {
    /// Target foot joint name.
    pub name: String,
    /// Frames the source foot was planted.
    pub contact_frames: usize,
    /// Contact intervals.
    pub contacts: usize,
    /// Largest horizontal distance, within a contact, of the target foot
    /// from where the source foot's motion since the contact began puts it
    /// (turned and scaled like the root), before IK (target length unit).
    pub slide_before: f32,
    /// The same after IK (`None` when the leg is not a two-bone chain).
    pub slide_after: Option<f32>,
}

/// What [`bake`] measured.
#[derive(Clone, Debug, PartialEq)]
pub struct BakeReport {
    /// Frames baked.
    pub frames: usize,
    /// Mean horizontal root speed of the source (source units per second).
    pub source_root_speed: f32,
    /// Mean horizontal root speed of the target (target units per second).
    pub target_root_speed: f32,
    /// Per foot, when contacts were preserved.
    pub feet: Vec<FootReport>,
}

impl fmt::Display for BakeReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} frames, root speed {:.3} -> {:.3} per s",
            self.frames, self.source_root_speed, self.target_root_speed
        )?;
        for foot in &self.feet {
            write!(
                f,
                "; {}: {} contacts ({} frames), slide {:.4} -> {}",
                foot.name,
                foot.contacts,
                foot.contact_frames,
                foot.slide_before,
                foot.slide_after
                    .map_or("no two-bone leg".to_string(), |s| format!("{s:.4}"))
            )?;
        }
        Ok(())
    }
}

/// Model matrices of every frame of `keys` (`frames × soa_count` blocks).
fn models_of(s: &Skeleton<'_>, keys: &[SoaTransform]) -> Result<Vec<Vec<Mat4>>, Error> {
    let n = s.soa_count();
    keys.chunks(n)
        .map(|pose| {
            let mut m = vec![Mat4::IDENTITY; s.joint_count()];
            local_to_model(&FkJob::new(s, pose), &mut m)?;
            Ok(m)
        })
        .collect()
}

fn horizontal(v: Vec3) -> Vec3 {
    Vec3::new(v.x, 0.0, v.z)
}

/// Mean horizontal speed of joint `j` over the frames (units per second).
fn mean_speed(models: &[Vec<Mat4>], j: usize, rate: f32) -> f32 {
    if models.len() < 2 {
        return 0.0;
    }
    let mut d = 0.0;
    for w in models.windows(2) {
        d += horizontal(w[1][j].translation() - w[0][j].translation()).length();
    }
    d * rate / (models.len() - 1) as f32
}

/// Bakes `clip` (of the map's source skeleton) onto the target: the
/// kernel per frame, detached joints placed from their anchors, and
/// optionally foot contacts kept with two-bone IK. The clip keeps its name,
/// sample rate and frame count. Lengths are Y-up for contact detection.
///
/// # Errors
/// [`Error::SkeletonMismatch`] when the skeletons are not the map's;
/// [`Error::BadLength`] when the clip is not of the source skeleton; an IK
/// error on a degenerate leg (zero-length bones).
pub fn bake(
    map: &OwnedMap,
    source: &Skeleton<'_>,
    target: &Skeleton<'_>,
    clip: &OwnedClip,
    options: &BakeOptions,
) -> Result<(OwnedClip, BakeReport), Error> {
    let view = map.view()?;
    view.check_skeletons(source, target)?;
    check_clip(source, &clip.view())?;
    let (ns, nt) = (source.soa_count(), target.soa_count());
    let frames = clip.frame_count();
    let mut keys = vec![SoaTransform::IDENTITY; frames * nt];
    for (src, out) in clip.keys().chunks(ns).zip(keys.chunks_mut(nt)) {
        retarget::retarget(&view, src, out)?;
    }
    let rate = clip.sample_rate();
    // Detached joints keep their rest offset from their anchor.
    if !map.detached.is_empty() {
        let mut models = vec![Mat4::IDENTITY; target.joint_count()];
        for pose in keys.chunks_mut(nt) {
            // An anchor may itself hang below a detached joint (a foot
            // below a thigh that follows the hips), so place them in
            // passes, each from the previous pass's model matrices.
            for _ in 0..map.detached.len().min(4) {
                local_to_model(&FkJob::new(target, pose), &mut models)?;
                for &(j, anchor, offset) in &map.detached {
                    let p = models[anchor].transform_point(offset);
                    let parent = target.parent(j).map_or(Mat4::IDENTITY, |q| models[q]);
                    let inv = parent
                        .inverse_affine()
                        .ok_or(Error::SingularTransform { joint: j })?;
                    let mut t = get_joint(pose, j).unwrap_or_default();
                    t.translation = inv.transform_point(p);
                    set_joint(pose, j, &t)?;
                }
            }
        }
    }
    let source_models = models_of(source, clip.keys())?;
    let mut target_models = models_of(target, &keys)?;
    let root = view.root();
    let mut report = BakeReport {
        frames,
        source_root_speed: root.map_or(0.0, |(_, s)| mean_speed(&source_models, s, rate)),
        target_root_speed: root.map_or(0.0, |(t, _)| mean_speed(&target_models, t, rate)),
        feet: Vec::new(),
    };
    if options.foot_contacts && frames > 2 {
        report.feet = keep_contacts(
            map,
            source,
            target,
            &source_models,
            &mut target_models,
            &mut keys,
            rate,
            options,
        )?;
    }
    let baked = OwnedClip::new(clip.name.clone(), rate, nt, keys)?;
    Ok((baked, report))
}

/// Hips height above the mean of the feet in the rest pose (Y up).
fn hip_height(models: &[Mat4], hips: usize, feet: &[usize]) -> f32 {
    if feet.is_empty() {
        return 1.0;
    }
    let y: f32 = feet.iter().map(|&f| models[f].translation().y).sum::<f32>() / feet.len() as f32;
    (models[hips].translation().y - y).max(1e-3)
}

/// Contact intervals `[a, b]` (inclusive) of a source foot.
fn contacts(
    models: &[Vec<Mat4>],
    foot: usize,
    rate: f32,
    height: f32,
    speed: f32,
) -> Vec<(usize, usize)> {
    let n = models.len();
    let pos = |f: usize| models[f][foot].translation();
    // The ground under this foot: a low percentile of its heights, not the
    // minimum, so one odd frame (a T-pose calibration frame at the start
    // of a mocap take) does not move it.
    let mut heights: Vec<f32> = (0..n).map(|f| pos(f).y).collect();
    heights.sort_by(f32::total_cmp);
    let ground = heights[n / 10];
    let planted: Vec<bool> = (0..n)
        .map(|f| {
            let (a, b) = (f.saturating_sub(1), (f + 1).min(n - 1));
            let v = (pos(b) - pos(a)).length() * rate / (b - a).max(1) as f32;
            pos(f).y - ground < height && v < speed
        })
        .collect();
    let mut out = Vec::new();
    let mut f = 0;
    while f < n {
        if planted[f] {
            let a = f;
            while f + 1 < n && planted[f + 1] {
                f += 1;
            }
            match out.last_mut() {
                // A gap of a frame or two is noise inside one step.
                Some((_, b)) if a <= *b + 3 => *b = f,
                _ => out.push((a, f)),
            }
        }
        f += 1;
    }
    // A step lasts a few frames; shorter "contacts" are a swinging foot
    // passing through slow and low.
    let min = ((0.05 * rate).ceil() as usize).max(2);
    out.retain(|&(a, b)| b + 1 - a >= min);
    out
}

#[allow(clippy::too_many_arguments)]
fn keep_contacts(
    map: &OwnedMap,
    source: &Skeleton<'_>,
    target: &Skeleton<'_>,
    source_models: &[Vec<Mat4>],
    target_models: &mut [Vec<Mat4>],
    keys: &mut [SoaTransform],
    rate: f32,
    options: &BakeOptions,
) -> Result<Vec<FootReport>, Error> {
    let corr = Correspondence {
        source_convention: map.report.source_convention,
        target_convention: map.report.target_convention,
        mapped: 0,
        same_name: 0,
        by_pair: 0,
        dropped: 0,
    };
    let cm = &map.correspondence;
    let find = |r: Role| {
        (0..target.joint_count())
            .find(|&j| cm[j] != NO_PARENT && role(source, target, &corr, cm, j) == Some(r))
    };
    let (Some(hips_t), Some(lul), Some(rul)) = (
        find(Role::Hips),
        find(Role::LeftUpperLeg),
        find(Role::RightUpperLeg),
    ) else {
        return Ok(Vec::new());
    };
    let hips_s = cm[hips_t] as usize;
    let legs = [
        (Role::LeftUpperLeg, Role::LeftLowerLeg, Role::LeftFoot),
        (Role::RightUpperLeg, Role::RightLowerLeg, Role::RightFoot),
    ];
    let feet_t: Vec<usize> = legs.iter().filter_map(|l| find(l.2)).collect();
    let feet_s: Vec<usize> = feet_t.iter().map(|&t| cm[t] as usize).collect();
    let rest_s = rest_models(source)?;
    let rest_t = rest_models(target)?;
    let h_s = hip_height(&rest_s, hips_s, &feet_s);
    let left = (rest_t[lul].translation() - rest_t[rul].translation())
        .try_normalize()
        .unwrap_or(Vec3::X);
    let nt = target.soa_count();
    let mut reports = Vec::new();
    for (upper_r, lower_r, foot_r) in legs {
        let (Some(upper), Some(lower), Some(foot)) = (find(upper_r), find(lower_r), find(foot_r))
        else {
            continue;
        };
        let sf = cm[foot] as usize;
        let intervals = contacts(
            source_models,
            sf,
            rate,
            options.contact_height * h_s,
            options.contact_speed * h_s,
        );
        let chain = target.parent(foot) == Some(lower) && target.parent(lower) == Some(upper);
        // Where the target foot should be during a contact: where it was at
        // the contact's first frame, plus the source foot's own (small)
        // motion since then, turned into the target's frame and scaled like
        // the root: a planted foot stays as planted as the source's was.
        let (frame, k) = (map.report.info.frame, map.report.info.root_scale);
        let goal_at = |models: &[Vec<Mat4>], a: usize, f: usize| -> Vec3 {
            let ds = source_models[f][sf].translation() - source_models[a][sf].translation();
            models[a][foot].translation() + frame.rotate(ds) * k
        };
        let slide = |models: &[Vec<Mat4>]| -> f32 {
            intervals
                .iter()
                .flat_map(|&(a, b)| {
                    (a..=b).map(move |f| {
                        horizontal(models[f][foot].translation() - goal_at(models, a, f)).length()
                    })
                })
                .fold(0.0, f32::max)
        };
        let before = slide(target_models);
        let mut after = None;
        if chain {
            for &(a, b) in &intervals {
                // Full weight through the contact (from its first frame, where
                // the goal is the foot itself), easing out over the two frames
                // after it, so the released foot does not jump.
                for f in a..(b + 3).min(target_models.len()) {
                    let goal_point = goal_at(target_models, a, f);
                    let ramp = if f <= b {
                        1.0
                    } else {
                        (b + 3 - f) as f32 / 3.0
                    };
                    let pose = &mut keys[f * nt..(f + 1) * nt];
                    let models = &mut target_models[f];
                    let foot_rot = models[foot].rotation();
                    let lower_rot = models[lower].rotation();
                    let mut goal = TwoBoneGoal::new(goal_point);
                    // No pole: the solve keeps the knee's plane as the bake left it.
                    goal.pole = Vec3::ZERO;
                    goal.mid_axis = lower_rot.conjugate().rotate(-left);
                    goal.weight = ramp;
                    {
                        let mut ik = IkPose::new(target, pose, models, None)?;
                        TwoBoneIk::new(upper, lower, foot, goal).solve(&mut ik)?;
                    }
                    // The foot keeps its model-space rotation.
                    let new_lower = models[lower].rotation();
                    let mut t = get_joint(pose, foot).unwrap_or_default();
                    t.rotation = (new_lower.conjugate() * foot_rot).normalize();
                    set_joint(pose, foot, &t)?;
                    local_to_model(&FkJob::new(target, pose), models)?;
                }
            }
            after = Some(slide(target_models));
        }
        reports.push(FootReport {
            name: target.joint_name(foot).unwrap_or("?").to_string(),
            contact_frames: intervals.iter().map(|&(a, b)| b - a + 1).sum(),
            contacts: intervals.len(),
            slide_before: before,
            slide_after: after,
        });
    }
    Ok(reports)
}

/// The asset's skeleton with its skin's bind pose as the rest pose: the
/// pose the mesh was bound in (from its first mesh's inverse bind
/// matrices), which is what a retarget should treat as "rest" when a
/// file's node transforms hold some other pose. `None` when the asset has
/// no skinned mesh. Joint order, names and parents are the asset's, so its
/// meshes and joint map still apply.
///
/// # Errors
/// [`Error::SingularTransform`] for a joint whose bind matrix cannot be
/// inverted; as [`OwnedSkeleton::build`].
pub fn bind_pose_skeleton(asset: &Asset) -> Result<Option<OwnedSkeleton>, Error> {
    let Some(mesh) = asset.meshes.first() else {
        return Ok(None);
    };
    let s = asset.skeleton.view();
    let n = s.joint_count();
    if mesh.inverse_bind.len() != n {
        return Ok(None);
    }
    let mut model = Vec::with_capacity(n);
    for (j, ibm) in mesh.inverse_bind.iter().enumerate() {
        model.push(
            ibm.inverse_affine()
                .ok_or(Error::SingularTransform { joint: j })?,
        );
    }
    let mut defs = Vec::with_capacity(n);
    for j in 0..n {
        let parent = s.parent(j);
        let local = match parent {
            Some(p) => {
                model[p]
                    .inverse_affine()
                    .ok_or(Error::SingularTransform { joint: p })?
                    * model[j]
            }
            None => model[j],
        };
        let (rotation, scale) = local.rotation_and_scale();
        defs.push(JointDef {
            name: s.joint_name(j).unwrap_or(""),
            parent,
            rest: Transform::new(local.translation(), rotation.normalize(), scale).flush_tiny(),
        });
    }
    OwnedSkeleton::build(&defs).map(Some)
}
