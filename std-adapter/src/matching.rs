//! Motion-matching databases from clips: the root frame of every frame,
//! the features the schema asks for, optional mirrored copies, the
//! normalization, and the container the core searches
//! ([`sinew_core::motion_matching`]).

use std::fmt;

use sinew_core::clip::{ClipSource, TimeMode};
use sinew_core::fk::{local_to_model, FkJob};
use sinew_core::mix::root_motion::{rotate_y, wrap_angle};
use sinew_core::motion_matching::{
    cluster_order, database_size, ground_of, mirror_pose, write_database, Database, DatabaseDesc,
    FeatureGroup, FeatureKind, FrameRange, Ground, RANGE_MIRRORED,
};
use sinew_core::soa::get_joint;
use sinew_core::{Error, Mat4, Skeleton, SoaTransform, Vec3};

use crate::assets::AlignedBytes;

/// One feature group of a schema, joints named.
#[derive(Clone, Debug, PartialEq)]
pub enum FeatureSpec {
    /// A joint's position in the root frame.
    Position {
        /// Joint name.
        joint: String,
        /// Weight, finite and `> 0`.
        weight: f32,
    },
    /// A joint's velocity in the root frame.
    Velocity {
        /// Joint name.
        joint: String,
        /// Weight, finite and `> 0`.
        weight: f32,
    },
    /// The root's ground position `frames_ahead` frames later.
    TrajectoryPosition {
        /// Frames ahead at the database's sample rate, `> 0`.
        frames_ahead: u32,
        /// Weight, finite and `> 0`.
        weight: f32,
    },
    /// The root's facing `frames_ahead` frames later.
    TrajectoryDirection {
        /// Frames ahead at the database's sample rate, `> 0`.
        frames_ahead: u32,
        /// Weight, finite and `> 0`.
        weight: f32,
    },
}

/// Which of the root joint's local axes points forward.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Facing {
    /// The axis among ±X and ±Z that best follows the direction of travel
    /// over the clips (frames moving faster than 0.3 m/s).
    Auto,
    /// This axis (unit, not vertical).
    Axis(Vec3),
}

/// How a database is built.
#[derive(Clone, Debug, PartialEq)]
pub struct BuildOptions {
    /// Frames per second of the database (clips are resampled); default 60.
    pub sample_rate: f32,
    /// The joint whose ground projection is the root frame (a joint with no
    /// parent); `None`: the skeleton's first joint.
    pub root: Option<String>,
    /// The forward axis of the root joint.
    pub facing: Facing,
    /// The feature groups.
    pub features: Vec<FeatureSpec>,
    /// Add a mirrored copy of every clip (left and right joints paired by name).
    pub mirror: bool,
    /// Frames at the end of every range a search may not return, so a match
    /// always has that many frames to play. The standard schema sets it to
    /// its longest trajectory horizon (60): a frame whose future runs past
    /// its clip's end would be matched on an extrapolated trajectory (a
    /// straight line), which a clip's last frames fit too well.
    pub end_margin: u32,
}

/// Why a database could not be built.
#[derive(Clone, Debug, PartialEq)]
pub enum BuildError {
    /// The schema or options are wrong (a name, a weight, a count).
    Options(String),
    /// A core call refused its input.
    Core(Error),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::Options(m) => f.write_str(m),
            BuildError::Core(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for BuildError {}

impl From<Error> for BuildError {
    fn from(e: Error) -> Self {
        BuildError::Core(e)
    }
}

fn options<T>(message: impl Into<String>) -> Result<T, BuildError> {
    Err(BuildError::Options(message.into()))
}

/// Left or right.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Left,
    Right,
}

/// The side a joint name names and the name with the side marker swapped:
/// `Left…`/`Right…` anywhere (`mixamorig:LeftFoot`), a one-letter prefix
/// before a capital or an underscore (`lFoot`, `LHipJoint`, `l_foot`), or a
/// suffix `_L`, `.L`, `_l`, `.l` (and the right-hand forms).
fn side_of(name: &str) -> Option<(Side, String)> {
    for (word, side, other) in [
        ("Left", Side::Left, "Right"),
        ("Right", Side::Right, "Left"),
        ("left", Side::Left, "right"),
        ("right", Side::Right, "left"),
    ] {
        if let Some(at) = name.find(word) {
            let mut swapped = String::with_capacity(name.len() + 1);
            swapped.push_str(&name[..at]);
            swapped.push_str(other);
            swapped.push_str(&name[at + word.len()..]);
            return Some((side, swapped));
        }
    }
    let bytes = name.as_bytes();
    if bytes.len() >= 2 {
        let next = bytes[1];
        if next.is_ascii_uppercase() || next == b'_' {
            if let Some((side, c)) = swap_letter(bytes[0]) {
                return Some((side, format!("{c}{}", &name[1..])));
            }
        }
        let n = bytes.len();
        if bytes[n - 2] == b'_' || bytes[n - 2] == b'.' {
            if let Some((side, c)) = swap_letter(bytes[n - 1]) {
                return Some((side, format!("{}{c}", &name[..n - 1])));
            }
        }
    }
    None
}

/// The side a one-letter marker (`l`, `L`, `r`, `R`) names and the
/// other side's letter in the same case.
fn swap_letter(b: u8) -> Option<(Side, char)> {
    match b {
        b'l' => Some((Side::Left, 'r')),
        b'L' => Some((Side::Left, 'R')),
        b'r' => Some((Side::Right, 'l')),
        b'R' => Some((Side::Right, 'L')),
        _ => None,
    }
}

/// The left/right partner of every joint, by name (a joint with no side
/// marker is its own partner).
///
/// # Errors
/// [`BuildError::Options`] naming a sided joint whose partner is missing.
pub fn mirror_map(skeleton: &Skeleton<'_>) -> Result<Vec<u16>, BuildError> {
    let n = skeleton.joint_count();
    let mut map = Vec::with_capacity(n);
    for j in 0..n {
        let name = skeleton.joint_name(j).unwrap_or("");
        match side_of(name) {
            None => map.push(j as u16),
            Some((_, other)) => match skeleton.find_joint(&other) {
                Some(p) => map.push(p as u16),
                None => {
                    return options(format!(
                        "cannot mirror: joint {name:?} has no partner {other:?}"
                    ))
                }
            },
        }
    }
    Ok(map)
}

/// The first joint whose lower-cased name contains `part` on `side`
/// (`None`: a joint with no side marker).
fn find_part(skeleton: &Skeleton<'_>, part: &str, side: Option<Side>) -> Option<String> {
    (0..skeleton.joint_count())
        .filter_map(|j| skeleton.joint_name(j))
        .find(|name| {
            name.to_ascii_lowercase().contains(part) && side_of(name).map(|(s, _)| s) == side
        })
        .map(str::to_owned)
}

impl BuildOptions {
    /// The usual schema for `skeleton`: the trajectory 20, 40 and 60 frames
    /// ahead at 60 Hz (positions 1, directions 1.5), left and right foot
    /// positions (weight 0.75) and velocities (1), hip velocity (1); feet found by name (`foot`, else `ankle`), the hips
    /// by `hip` with no side, else the root.
    ///
    /// # Errors
    /// [`BuildError::Options`] when a foot cannot be found.
    pub fn standard(skeleton: &Skeleton<'_>) -> Result<Self, BuildError> {
        let foot = |side| {
            find_part(skeleton, "foot", Some(side))
                .or_else(|| find_part(skeleton, "ankle", Some(side)))
                .ok_or_else(|| {
                    BuildError::Options(format!(
                        "no {side:?} foot joint (a name with \"foot\" or \"ankle\" and a side)"
                    ))
                })
        };
        let (left, right) = (foot(Side::Left)?, foot(Side::Right)?);
        let hips = find_part(skeleton, "hip", None)
            .or_else(|| skeleton.joint_name(0).map(str::to_owned))
            .unwrap_or_default();
        // Trajectory groups first: they are where a query differs most
        // from the frames, so the searches' half-way cut-offs see them.
        let mut features = Vec::new();
        for frames_ahead in [20, 40, 60] {
            features.push(FeatureSpec::TrajectoryPosition {
                frames_ahead,
                weight: 1.0,
            });
        }
        for frames_ahead in [20, 40, 60] {
            features.push(FeatureSpec::TrajectoryDirection {
                frames_ahead,
                weight: 1.5,
            });
        }
        features.extend([
            FeatureSpec::Position {
                joint: left.clone(),
                weight: 0.75,
            },
            FeatureSpec::Position {
                joint: right.clone(),
                weight: 0.75,
            },
            FeatureSpec::Velocity {
                joint: left,
                weight: 1.0,
            },
            FeatureSpec::Velocity {
                joint: right,
                weight: 1.0,
            },
            FeatureSpec::Velocity {
                joint: hips,
                weight: 1.0,
            },
        ]);
        Ok(BuildOptions {
            sample_rate: 60.0,
            root: None,
            facing: Facing::Auto,
            features,
            mirror: false,
            end_margin: 60,
        })
    }
}

/// A database built from clips, in 16-byte aligned storage.
#[derive(Clone)]
pub struct OwnedDatabase {
    bytes: AlignedBytes,
}

impl OwnedDatabase {
    /// Validates a container (e.g. read from a file) and keeps a copy.
    ///
    /// # Errors
    /// As [`Database::from_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let bytes = AlignedBytes::copy_from(bytes);
        Database::from_bytes(bytes.as_slice())?;
        Ok(OwnedDatabase { bytes })
    }

    /// The view the core searches.
    #[must_use]
    pub fn view(&self) -> Database<'_> {
        Database::from_validated_bytes(self.bytes.as_slice())
            .expect("an OwnedDatabase holds a validated container")
    }

    /// The container bytes (to save to a file).
    #[must_use]
    pub fn bytes(&self) -> &[u8] {
        self.bytes.as_slice()
    }
}

impl fmt::Debug for OwnedDatabase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let db = self.view();
        f.debug_struct("OwnedDatabase")
            .field("frames", &db.frame_count())
            .field("features", &db.feature_count())
            .field("ranges", &db.ranges().len())
            .finish()
    }
}

/// The root frame and the model-space joint positions of one clip's
/// frames at the database rate (mirrored when asked).
struct Sampled {
    ground: Vec<Ground>,
    /// `positions[frame * joints + j]`.
    positions: Vec<Vec3>,
    frames: usize,
}

fn sample_clip<C: ClipSource>(
    skeleton: &Skeleton<'_>,
    clip: &C,
    rate: f32,
    root: usize,
    facing: Vec3,
    mirror: Option<(&[u16], u32)>,
) -> Result<Sampled, BuildError> {
    let frames = (clip.duration() * rate + 1e-3).floor() as usize + 1;
    let joints = skeleton.joint_count();
    let rest = skeleton.rest_pose();
    let mut pose = vec![SoaTransform::IDENTITY; skeleton.soa_count()];
    let mut models = vec![Mat4::IDENTITY; joints];
    let mut ground = Vec::with_capacity(frames);
    let mut positions = Vec::with_capacity(frames * joints);
    for i in 0..frames {
        let t = (i as f32 / rate).min(clip.duration());
        clip.sample(t, TimeMode::Clamp, rest, &mut pose)?;
        if let Some((map, axis)) = mirror {
            mirror_pose(&mut pose, map, axis)?;
        }
        local_to_model(&FkJob::new(skeleton, &pose), &mut models)?;
        let r = get_joint(&pose, root).ok_or(Error::JointOutOfRange {
            joint: root,
            count: joints,
        })?;
        ground.push(ground_of(&r, facing));
        positions.extend(models.iter().map(Mat4::translation));
    }
    Ok(Sampled {
        ground,
        positions,
        frames,
    })
}

/// The facing axis among ±X, ±Z that best follows the travel direction.
fn auto_facing<C: ClipSource>(
    skeleton: &Skeleton<'_>,
    clips: &[C],
    rate: f32,
    root: usize,
) -> Result<Vec3, BuildError> {
    let candidates = [
        Vec3::Z,
        Vec3::X,
        Vec3::new(0.0, 0.0, -1.0),
        Vec3::new(-1.0, 0.0, 0.0),
    ];
    let mut score = [0.0f64; 4];
    for clip in clips {
        let s = sample_clip(skeleton, clip, rate, root, Vec3::Z, None)?;
        let pose_rot = |i: usize| -> Result<sinew_core::Quat, BuildError> {
            let mut pose = vec![SoaTransform::IDENTITY; skeleton.soa_count()];
            clip.sample(
                i as f32 / rate,
                TimeMode::Clamp,
                skeleton.rest_pose(),
                &mut pose,
            )?;
            Ok(get_joint(&pose, root)
                .map(|t| t.rotation)
                .unwrap_or_default())
        };
        let step = (rate / 6.0).max(1.0) as usize;
        let mut i = 0;
        while i + step < s.frames {
            let travel = s.ground[i + step].position - s.ground[i].position;
            let speed = travel.length() * rate / step as f32;
            if speed > 0.3 {
                let dir = travel * (1.0 / travel.length());
                let q = pose_rot(i)?;
                for (k, axis) in candidates.iter().enumerate() {
                    let f = q.rotate(*axis);
                    let h = Vec3::new(f.x, 0.0, f.z);
                    if let Some(h) = h.try_normalize() {
                        score[k] += f64::from(h.dot(dir));
                    }
                }
            }
            i += step;
        }
    }
    let best = (0..4)
        .max_by(|&a, &b| score[a].total_cmp(&score[b]))
        .unwrap_or(0);
    if score[best] <= 0.0 {
        return options(
            "cannot find the facing axis: no clip moves faster than 0.3 m/s (give Facing::Axis)",
        );
    }
    Ok(candidates[best])
}

/// Builds a database from clips of one skeleton.
///
/// Every clip is resampled at `opts.sample_rate`; each frame's root frame
/// is the root joint projected on the ground and turned to its facing axis;
/// joint positions are measured in it, velocities by central differences,
/// and trajectory samples past a clip's end continue its last velocity and
/// heading. Each feature is normalized by its mean over the database and
/// the mean deviation of its group, then scaled by the group's weight.
///
/// # Errors
/// [`BuildError::Options`] for a bad schema (an unknown joint, a weight or
/// frame count out of range, a root joint with a parent, no clips, a
/// mirror pairing that fails), [`BuildError::Core`] for a clip that does
/// not fit the skeleton or a container the core refuses.
pub fn build<C: ClipSource>(
    skeleton: &Skeleton<'_>,
    clips: &[C],
    opts: &BuildOptions,
) -> Result<OwnedDatabase, BuildError> {
    let rate = opts.sample_rate;
    if !(rate.is_finite() && rate > 0.0) {
        return options("database sample rate must be finite and > 0");
    }
    if clips.is_empty() {
        return options("a database needs at least one clip");
    }
    for clip in clips {
        if clip.soa_count() != skeleton.soa_count() {
            return Err(BuildError::Core(Error::BadLength {
                buffer: "clip pose",
                expected: skeleton.soa_count(),
                actual: clip.soa_count(),
            }));
        }
    }
    let find = |name: &str| {
        skeleton
            .find_joint(name)
            .ok_or_else(|| BuildError::Options(format!("no joint named {name:?}")))
    };
    let root = match &opts.root {
        Some(name) => find(name)?,
        None => 0,
    };
    if skeleton.parent(root).is_some() {
        return options(format!(
            "root joint {:?} has a parent: the root frame needs a joint at the top of the skeleton",
            skeleton.joint_name(root).unwrap_or("")
        ));
    }
    let facing = match opts.facing {
        Facing::Axis(a) => a,
        Facing::Auto => auto_facing(skeleton, clips, rate, root)?,
    };
    let mirror_axis = if facing.z.abs() >= facing.x.abs() {
        0
    } else {
        2
    };

    // Groups.
    let mut groups = Vec::new();
    let mut joints_of = Vec::new();
    let mut first = 0u32;
    for spec in &opts.features {
        let (kind, joint, ahead, weight) = match spec {
            FeatureSpec::Position { joint, weight } => {
                (FeatureKind::Position, find(joint)? as u32, 0, *weight)
            }
            FeatureSpec::Velocity { joint, weight } => {
                (FeatureKind::Velocity, find(joint)? as u32, 0, *weight)
            }
            FeatureSpec::TrajectoryPosition {
                frames_ahead,
                weight,
            } => (
                FeatureKind::TrajectoryPosition,
                u32::MAX,
                *frames_ahead,
                *weight,
            ),
            FeatureSpec::TrajectoryDirection {
                frames_ahead,
                weight,
            } => (
                FeatureKind::TrajectoryDirection,
                u32::MAX,
                *frames_ahead,
                *weight,
            ),
        };
        if !(weight.is_finite() && weight > 0.0) {
            return options(format!("feature weight {weight} must be finite and > 0"));
        }
        if kind.is_trajectory() && ahead == 0 {
            return options("trajectory samples must be at least one frame ahead");
        }
        groups.push(FeatureGroup::new(kind, joint, ahead, first, weight));
        joints_of.push(joint);
        first += kind.width() as u32;
    }
    let fc = first as usize;
    if groups.is_empty() || fc > sinew_core::motion_matching::database::MAX_FEATURES {
        return options("a schema needs 1 to 32 groups of at most 256 features");
    }

    let map = if opts.mirror {
        mirror_map(skeleton)?
    } else {
        Vec::new()
    };
    let joints = skeleton.joint_count();
    let mut raw: Vec<f32> = Vec::new();
    let mut searchable = Vec::new();
    let mut ranges = Vec::new();
    let copies: &[bool] = if opts.mirror {
        &[false, true]
    } else {
        &[false]
    };
    for &mirrored in copies {
        for (c, clip) in clips.iter().enumerate() {
            let m = mirrored.then_some((map.as_slice(), mirror_axis));
            let s = sample_clip(skeleton, clip, rate, root, facing, m)?;
            let n = s.frames;
            let start = searchable.len();
            ranges.push(FrameRange {
                clip: c as u32,
                start: start as u32,
                len: n as u32,
                flags: if mirrored { RANGE_MIRRORED } else { 0 },
            });
            let end_velocity = if n >= 2 {
                (s.ground[n - 1].position - s.ground[n - 2].position) * rate
            } else {
                Vec3::ZERO
            };
            let future = |k: usize| -> Ground {
                if k < n {
                    s.ground[k]
                } else {
                    let last = s.ground[n - 1];
                    Ground {
                        position: last.position + end_velocity * ((k - (n - 1)) as f32 / rate),
                        yaw: last.yaw,
                    }
                }
            };
            let pos = |i: usize, j: usize| s.positions[i * joints + j];
            for i in 0..n {
                let g = s.ground[i];
                let local = |v: Vec3| rotate_y(v, -g.yaw);
                for (grp, &joint) in groups.iter().zip(&joints_of) {
                    let j = joint as usize;
                    match grp.feature_kind() {
                        FeatureKind::Position => {
                            let p = local(pos(i, j) - g.position);
                            raw.extend([p.x, p.y, p.z]);
                        }
                        FeatureKind::Velocity => {
                            let (a, b) = (i.saturating_sub(1), (i + 1).min(n - 1));
                            let v = if b > a {
                                (pos(b, j) - pos(a, j)) * (rate / (b - a) as f32)
                            } else {
                                Vec3::ZERO
                            };
                            let v = local(v);
                            raw.extend([v.x, v.y, v.z]);
                        }
                        FeatureKind::TrajectoryPosition => {
                            let p =
                                local(future(i + grp.frames_ahead as usize).position - g.position);
                            raw.extend([p.x, p.z]);
                        }
                        FeatureKind::TrajectoryDirection => {
                            let d = wrap_angle(future(i + grp.frames_ahead as usize).yaw - g.yaw);
                            raw.extend([d.sin(), d.cos()]);
                        }
                    }
                }
                searchable.push(i + (opts.end_margin as usize) < n);
            }
        }
    }
    let frames = searchable.len();
    if raw.iter().any(|x| !x.is_finite()) {
        return options("a clip gives features that are not finite");
    }
    // Normalization: per-feature mean, per-group mean deviation, weight.
    let mut mean = vec![0.0f64; fc];
    for row in raw.chunks_exact(fc) {
        for (m, &x) in mean.iter_mut().zip(row) {
            *m += f64::from(x);
        }
    }
    for m in &mut mean {
        *m /= frames as f64;
    }
    let mut var = vec![0.0f64; fc];
    for row in raw.chunks_exact(fc) {
        for ((v, &x), &m) in var.iter_mut().zip(row).zip(&mean) {
            *v += (f64::from(x) - m).powi(2);
        }
    }
    let mut scale = vec![0.0f32; fc];
    for g in &groups {
        let r = g.first as usize..(g.first + g.width) as usize;
        let dev: f64 = r
            .clone()
            .map(|f| (var[f] / frames as f64).sqrt())
            .sum::<f64>()
            / g.width as f64;
        let s = f64::from(g.weight) / dev.max(1e-6);
        for f in r {
            scale[f] = s as f32;
        }
    }
    let mean: Vec<f32> = mean.iter().map(|&m| m as f32).collect();
    let features: Vec<f32> = raw
        .chunks_exact(fc)
        .flat_map(|row| {
            row.iter()
                .zip(&mean)
                .zip(&scale)
                .map(|((&x, &m), &s)| (x - m) * s)
        })
        .collect();
    let desc = DatabaseDesc {
        sample_rate: rate,
        root: root as u32,
        facing_axis: facing,
        mirror_axis,
        groups: &groups,
        mean: &mean,
        scale: &scale,
        ranges: &ranges,
        mirror: &map,
        features: &features,
        searchable: &searchable,
        order: &[],
    };
    write_clustered(desc)
}

/// Writes `desc`'s frames in [`cluster_order`] (so the search's boxes are
/// small) and checks the container as a loader will.
fn write_clustered(desc: DatabaseDesc<'_>) -> Result<OwnedDatabase, BuildError> {
    let mut order = vec![0u32; desc.searchable.len()];
    cluster_order(desc.features, desc.mean.len(), desc.searchable, &mut order)?;
    let desc = DatabaseDesc {
        order: &order,
        ..desc
    };
    let mut bytes = AlignedBytes::zeroed(database_size(&desc)?);
    write_database(&desc, bytes.as_mut_slice())?;
    Database::from_bytes(bytes.as_slice())?;
    Ok(OwnedDatabase { bytes })
}

/// A database of `frames` frames made from `base` for timing searches at
/// scale: its frames repeated in order, every copy after the first with
/// uniform noise of `amplitude` (normalized units) added to each feature
/// from a fixed-seed generator, the same ranges, flags and normalization.
///
/// # Errors
/// [`BuildError::Options`] for `frames` of 0 or a noise amplitude that is
/// not finite; [`BuildError::Core`] when the core refuses the container.
pub fn grow(
    base: &Database<'_>,
    frames: usize,
    amplitude: f32,
    seed: u32,
) -> Result<OwnedDatabase, BuildError> {
    if frames == 0 || !amplitude.is_finite() {
        return options("a grown database needs frames > 0 and a finite noise amplitude");
    }
    let mut state = seed | 1;
    let mut noise = || {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        (state >> 8) as f32 / (1u32 << 23) as f32 - 1.0
    };
    let fc = base.feature_count();
    let n = base.frame_count();
    let mut features = Vec::with_capacity(frames * fc);
    let mut searchable = Vec::with_capacity(frames);
    let mut row = vec![0.0f32; fc];
    for i in 0..frames {
        base.frame_features(i % n, &mut row)?;
        let copy = i / n;
        features.extend(row.iter().map(|&x| {
            if copy == 0 {
                x
            } else {
                x + amplitude * noise()
            }
        }));
        searchable.push(base.is_searchable(i % n));
    }
    let mut ranges = Vec::new();
    let mut start = 0usize;
    while start < frames {
        for r in base.ranges() {
            if start >= frames {
                break;
            }
            let len = (r.len as usize).min(frames - start);
            ranges.push(FrameRange {
                start: start as u32,
                len: len as u32,
                ..*r
            });
            start += len;
        }
    }
    let desc = DatabaseDesc {
        sample_rate: base.sample_rate(),
        root: base.root_joint() as u32,
        facing_axis: base.facing_axis(),
        mirror_axis: base.mirror_axis(),
        groups: base.groups(),
        mean: base.mean(),
        scale: base.scale(),
        ranges: &ranges,
        mirror: base.mirror_map(),
        features: &features,
        searchable: &searchable,
        order: &[],
    };
    write_clustered(desc)
}

/// Locomotion clips with root motion from the procedural humanoid, for a
/// database that needs no mocap: each gait (walk, jog, run) moved forward
/// at the speed its stance foot slides back (so feet do not skate), on a
/// straight line and turning left and right at 45° per second, three
/// cycles each, and a standing clip (the walk's first pose, held 2 s).
/// Clip order: for each gait straight, left, right; then the stand.
///
/// # Errors
/// As the core's sampling and FK on the humanoid (none for a valid one).
pub fn procedural_locomotion(humanoid: &crate::Humanoid) -> Result<Vec<crate::OwnedClip>, Error> {
    let sk = humanoid.skeleton.view();
    let n = sk.soa_count();
    let foot = |side: &str| sk.find_joint(&format!("foot_{side}")).unwrap_or(0);
    let (lf, rf) = (foot("l"), foot("r"));
    let mut out = Vec::new();
    let mut models = vec![Mat4::IDENTITY; sk.joint_count()];
    for clip in &humanoid.clips {
        let rate = clip.sample_rate();
        let frames = clip.frame_count();
        let keys = clip.keys();
        // Stance speed: the lower foot's mean backward speed.
        let mut feet = Vec::with_capacity(frames);
        for f in 0..frames {
            local_to_model(&FkJob::new(&sk, &keys[f * n..(f + 1) * n]), &mut models)?;
            feet.push((models[lf].translation(), models[rf].translation()));
        }
        let mut slide = 0.0f32;
        for f in 1..frames {
            let (a, b) = (feet[f - 1], feet[f]);
            let lower = if a.0.y < a.1.y {
                (a.0, b.0)
            } else {
                (a.1, b.1)
            };
            slide += (lower.0.z - lower.1.z) * rate;
        }
        let speed = (slide / (frames - 1).max(1) as f32).max(0.0);
        for turn in [0.0f32, 45f32.to_radians(), -(45f32.to_radians())] {
            let cycles = 3;
            let total = (frames - 1) * cycles + 1;
            let mut moved = Vec::with_capacity(total * n);
            for i in 0..total {
                let t = i as f32 / rate;
                let src = i % (frames - 1);
                let mut pose = keys[src * n..(src + 1) * n].to_vec();
                let psi = turn * t;
                let p = if turn == 0.0 {
                    Vec3::new(0.0, 0.0, speed * t)
                } else {
                    Vec3::new(
                        speed / turn * (1.0 - psi.cos()),
                        0.0,
                        speed / turn * psi.sin(),
                    )
                };
                let mut root = get_joint(&pose, 0).ok_or(Error::NoJoints)?;
                let q = sinew_core::Quat::from_rotation_y(psi);
                let flat = Vec3::new(root.translation.x, 0.0, root.translation.z);
                root.translation = q.rotate(flat) + p + Vec3::new(0.0, root.translation.y, 0.0);
                root.rotation = (q * root.rotation).normalize();
                sinew_core::soa::set_joint(&mut pose, 0, &root)?;
                moved.extend(pose);
            }
            let name = match turn.partial_cmp(&0.0) {
                Some(std::cmp::Ordering::Greater) => format!("{} left", clip.name),
                Some(std::cmp::Ordering::Less) => format!("{} right", clip.name),
                _ => clip.name.clone(),
            };
            out.push(crate::OwnedClip::new(name, rate, n, moved)?);
        }
    }
    let walk = &humanoid.clips[0];
    let rate = walk.sample_rate();
    let held = (2.0 * rate) as usize + 1;
    let first = &walk.keys()[..n];
    let stand: Vec<SoaTransform> = (0..held).flat_map(|_| first.iter().copied()).collect();
    out.push(crate::OwnedClip::new("stand", rate, n, stand)?);
    Ok(out)
}
