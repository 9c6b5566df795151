//! The motion-matching controller: plays database frames, predicts the
//! desired trajectory, searches every so often (or at once when the input
//! turns abruptly or the clip runs out), and inertializes into the match.
//!
//! Poses come out in the character's root frame: the root joint's ground
//! position and heading are taken out of every sampled pose and drive the
//! character's world position and heading instead (root motion), so
//! switching clips never moves the character and the inertializer blends
//! only what the body does.

use core::f32::consts::LN_2;

use super::database::Database;
use super::trajectory::{Desired, Trajectory, TrajectoryParams};
use super::FeatureKind;
use crate::clip::{ClipSource, TimeMode};
use crate::error::Error;
use crate::math::{Quat, Transform, Vec3};
use crate::mix::root_motion::{heading_of, rotate_y, wrap_angle, RootAccumulator};
use crate::mix::transition::{Decay, InertialBlock, Inertializer, SwitchJob};
use crate::soa::{check_len, get_joint, set_joint, SoaTransform, LANES};

/// How the controller plays, searches and blends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MatcherConfig {
    /// Seconds between searches; finite, `> 0`.
    pub search_interval: f32,
    /// The current frame keeps playing unless a match costs at least this
    /// much less (the bias to stay in a clip); finite, `>= 0`.
    pub keep_margin: f32,
    /// A match in the current clip within this many seconds of the current
    /// time is not a transition; finite, `>= 0`.
    pub ignore_nearby: f32,
    /// A change of the desired velocity (metres per second) since the last
    /// search that forces a search at once; finite, `> 0`.
    pub abrupt_change: f32,
    /// The inertialization decay of a transition.
    pub transition: Decay,
    /// The longest a transition's offset may take to reach zero (seconds;
    /// the quintic's blend time, the spring's clamp horizon); finite, `> 0`.
    pub transition_time: f32,
    /// The trajectory springs.
    pub trajectory: TrajectoryParams,
    /// Half-life (seconds) of the pull of the character towards the
    /// simulated trajectory; 0 turns it off (pure root motion).
    pub adjust_half_life: f32,
    /// The simulation is held within this distance (metres) of the
    /// character; finite, `> 0`.
    pub clamp_distance: f32,
}

impl Default for MatcherConfig {
    fn default() -> Self {
        MatcherConfig {
            search_interval: 0.1,
            keep_margin: 0.01,
            ignore_nearby: 0.2,
            abrupt_change: 0.5,
            transition: Decay::Spring { half_life: 0.1 },
            transition_time: 0.3,
            trajectory: TrajectoryParams::default(),
            adjust_half_life: 0.1,
            clamp_distance: 0.15,
        }
    }
}

impl MatcherConfig {
    fn check(&self) -> Result<(), Error> {
        self.trajectory.check()?;
        let non_negative = |x: f32| x.is_finite() && x >= 0.0;
        let positive = |x: f32| x.is_finite() && x > 0.0;
        let ok = positive(self.search_interval)
            && non_negative(self.keep_margin)
            && non_negative(self.ignore_nearby)
            && positive(self.abrupt_change)
            && non_negative(self.adjust_half_life)
            && positive(self.transition_time)
            && positive(self.clamp_distance);
        if !ok {
            return Err(Error::InvalidParameter {
                what: "matcher interval, margins, half-life or distances out of range",
            });
        }
        Ok(())
    }
}

/// The buffers one character's update needs, all owned by the caller and
/// sized once: `soa_count` blocks each for the poses, the database's
/// feature count for the query.
#[derive(Debug)]
pub struct MatchBuffers<'a> {
    /// The skeleton's rest pose (for clips that need it; may be empty for raw clips).
    pub rest: &'a [SoaTransform],
    /// Output: the pose this frame, in the character's root frame.
    pub pose: &'a mut [SoaTransform],
    /// Last frame's output (the controller keeps it: pass the same buffer
    /// every frame).
    pub previous: &'a mut [SoaTransform],
    /// Scratch for the new clip's pose at a transition.
    pub target: &'a mut [SoaTransform],
    /// Scratch for the new clip's pose one step earlier.
    pub target_previous: &'a mut [SoaTransform],
    /// Decode scratch for compressed clips (empty for raw clips).
    pub scratch: &'a mut [SoaTransform],
    /// Inertialization offsets, one block per pose block.
    pub inertial: &'a mut [InertialBlock],
    /// The query, `feature_count` values.
    pub query: &'a mut [f32],
}

/// What one update did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MatchStep {
    /// The database frame playing now.
    pub frame: usize,
    /// True when this update searched the database.
    pub searched: bool,
    /// True when the search started a transition to another frame.
    pub transitioned: bool,
    /// The cost of the frame playing now against this update's query (+∞
    /// when the update did not search).
    pub cost: f32,
    /// The bound this update's search used: the cost of the frame that was
    /// playing less the keep margin, +∞ when that frame was not searchable
    /// (or no search).
    pub bound: f32,
}

/// A root frame: ground position and heading.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Ground {
    /// The root's position projected on the ground (`y = 0`).
    pub position: Vec3,
    /// Heading about +Y of the root's facing axis, radians (`atan2(x, z)`;
    /// 0 when the axis points straight up or down).
    pub yaw: f32,
}

/// The root frame of a root joint's transform (model space): its ground
/// projection, and the heading of its local `axis` — the frame every
/// feature is measured in, at build time and at run time alike.
#[must_use]
pub fn ground_of(root: &Transform, axis: Vec3) -> Ground {
    Ground {
        position: Vec3::new(root.translation.x, 0.0, root.translation.z),
        yaw: heading_of(root.rotation, axis),
    }
}

/// Mirrors a pose in place: every joint takes its partner's local transform
/// reflected across the plane normal to `axis` (0: x, 2: z). A reflection
/// negates that component of a translation and the two other components of
/// a rotation's vector part.
///
/// # Errors
/// [`Error::BadLength`] unless `map` has one entry per joint of `pose`
/// (joints past the map's end are left alone when the pose has padding
/// lanes); [`Error::JointOutOfRange`] for a partner out of range.
pub fn mirror_pose(pose: &mut [SoaTransform], map: &[u16], axis: u32) -> Result<(), Error> {
    if map.len() > pose.len() * LANES {
        return Err(Error::BadLength {
            buffer: "mirror map",
            expected: pose.len() * LANES,
            actual: map.len(),
        });
    }
    let reflect = |t: Transform| -> Transform {
        let (p, q) = (t.translation, t.rotation);
        if axis == 2 {
            Transform::new(
                Vec3::new(p.x, p.y, -p.z),
                Quat::new(-q.x, -q.y, q.z, q.w),
                t.scale,
            )
        } else {
            Transform::new(
                Vec3::new(-p.x, p.y, p.z),
                Quat::new(q.x, -q.y, -q.z, q.w),
                t.scale,
            )
        }
    };
    let count = map.len();
    for (j, &m) in map.iter().enumerate() {
        let m = m as usize;
        if m >= count {
            return Err(Error::JointOutOfRange { joint: m, count });
        }
        if m < j {
            continue;
        }
        let a = get_joint(pose, j).ok_or(Error::JointOutOfRange { joint: j, count })?;
        let b = get_joint(pose, m).ok_or(Error::JointOutOfRange { joint: m, count })?;
        set_joint(pose, j, &reflect(b))?;
        if m != j {
            set_joint(pose, m, &reflect(a))?;
        }
    }
    Ok(())
}

/// One character's motion-matching state: a plain value (`Copy`, no
/// borrow), so it lives in any struct or ECS component.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Matcher {
    config: MatcherConfig,
    /// The simulated trajectory the player steers.
    pub simulation: Trajectory,
    /// The character's world position and heading (root motion, pulled
    /// towards the simulation).
    pub character: RootAccumulator,
    inertializer: Inertializer,
    range: usize,
    time: f32,
    ground: Ground,
    since_search: f32,
    searched_velocity: Vec3,
    started: bool,
}

impl Matcher {
    /// A controller at rest at `position`, heading `yaw`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] (a configuration value out of range),
    /// [`Error::NonFinite`] (position or heading).
    pub fn new(config: MatcherConfig, position: Vec3, yaw: f32) -> Result<Self, Error> {
        config.check()?;
        if !(position.x.is_finite() && position.z.is_finite() && yaw.is_finite()) {
            return Err(Error::NonFinite {
                what: "start position or heading",
            });
        }
        let position = Vec3::new(position.x, 0.0, position.z);
        let yaw = wrap_angle(yaw);
        Ok(Matcher {
            config,
            simulation: Trajectory {
                position,
                yaw,
                ..Trajectory::default()
            },
            character: RootAccumulator { position, yaw },
            inertializer: Inertializer::new(config.transition)?,
            range: 0,
            time: 0.0,
            ground: Ground::default(),
            since_search: 0.0,
            searched_velocity: Vec3::ZERO,
            started: false,
        })
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &MatcherConfig {
        &self.config
    }

    /// The range playing and the time in it (seconds).
    #[must_use]
    pub fn playing(&self) -> (usize, f32) {
        (self.range, self.time)
    }

    /// The range playing, or an error for a database it does not fit.
    fn range_of(&self, db: &Database<'_>) -> Result<super::FrameRange, Error> {
        db.ranges()
            .get(self.range)
            .copied()
            .ok_or(Error::InvalidParameter {
                what: "matcher is playing a range this database does not have",
            })
    }

    /// The database frame nearest the playback time.
    fn frame(&self, db: &Database<'_>) -> Result<usize, Error> {
        let r = self.range_of(db)?;
        let local = libm::roundf(self.time * db.sample_rate()) as usize;
        Ok(r.start as usize + local.min((r.len as usize).saturating_sub(1)))
    }

    /// Fills the query's trajectory groups from the simulation's prediction,
    /// relative to the character, and the other groups from `frame`.
    ///
    /// # Errors
    /// As [`Trajectory::predict`] and [`Database::normalize`].
    pub fn query(
        &self,
        db: &Database<'_>,
        desired: &Desired,
        frame: usize,
        query: &mut [f32],
    ) -> Result<(), Error> {
        db.frame_features(frame, query)?;
        for g in db.groups() {
            let kind = g.feature_kind();
            if !kind.is_trajectory() {
                continue;
            }
            let t = g.frames_ahead as f32 / db.sample_rate();
            let future = self
                .simulation
                .predict(desired, &self.config.trajectory, t)?;
            let raw = if kind == FeatureKind::TrajectoryPosition {
                let p = rotate_y(
                    future.position - self.character.position,
                    -self.character.yaw,
                );
                [p.x, p.z]
            } else {
                let d = wrap_angle(future.yaw - self.character.yaw);
                [libm::sinf(d), libm::cosf(d)]
            };
            let first = g.first as usize;
            db.normalize(first, &raw, &mut query[first..first + 2])?;
        }
        Ok(())
    }

    /// Samples range `range` at `time` into `out` in the root frame; returns
    /// the root's ground frame before it was taken out.
    fn sample<C: ClipSource>(
        db: &Database<'_>,
        clips: &[C],
        range: usize,
        time: f32,
        rest: &[SoaTransform],
        out: &mut [SoaTransform],
    ) -> Result<Ground, Error> {
        let r = db
            .ranges()
            .get(range)
            .copied()
            .ok_or(Error::InvalidParameter {
                what: "database range out of range",
            })?;
        let clip = clips.get(r.clip as usize).ok_or(Error::UnknownClip {
            clip: r.clip as usize,
            count: clips.len(),
        })?;
        clip.sample(time, TimeMode::Clamp, rest, out)?;
        if r.mirrored() {
            mirror_pose(out, db.mirror_map(), db.mirror_axis())?;
        }
        let root = db.root_joint();
        let count = out.len() * LANES;
        let t = get_joint(out, root).ok_or(Error::JointOutOfRange { joint: root, count })?;
        let g = ground_of(&t, db.facing_axis());
        let unturn = Quat::from_rotation_y(-g.yaw);
        let local = Transform::new(
            unturn.rotate(t.translation - g.position),
            (unturn * t.rotation).normalize(),
            t.scale,
        );
        set_joint(out, root, &local)?;
        Ok(g)
    }

    /// One frame: advances the simulation and playback by `dt`, searches
    /// when it is time (or the input turned abruptly, or the clip ran out of
    /// searchable frames), transitions to a better match by inertialization,
    /// moves the character by the clip's root motion (and towards the
    /// simulation), and writes the pose to `buffers.pose`.
    ///
    /// `clips[i]` is the clip the database's ranges call `i`, sampled as
    /// the database was built (same skeleton). The first update starts at
    /// the best match for the trajectory alone.
    ///
    /// # Errors
    /// [`Error::NonFinite`] (`dt` not finite and positive, or the input),
    /// [`Error::BadLength`] (a buffer), [`Error::UnknownClip`] (a range's
    /// clip missing from `clips`), [`Error::InvalidParameter`] (a database
    /// with no searchable frame), and what sampling returns. On error the
    /// character may have advanced but its buffers stay consistent.
    pub fn update<C: ClipSource>(
        &mut self,
        db: &Database<'_>,
        clips: &[C],
        desired: &Desired,
        dt: f32,
        buffers: &mut MatchBuffers<'_>,
    ) -> Result<MatchStep, Error> {
        if !(dt.is_finite() && dt > 0.0) {
            return Err(Error::NonFinite { what: "dt" });
        }
        desired.check()?;
        let n = buffers.pose.len();
        check_len("previous pose", n, buffers.previous.len())?;
        check_len("target pose", n, buffers.target.len())?;
        check_len("target previous pose", n, buffers.target_previous.len())?;
        check_len("inertialization state", n, buffers.inertial.len())?;
        check_len("query", db.feature_count(), buffers.query.len())?;

        let cfg = self.config;
        self.simulation.advance(desired, &cfg.trajectory, dt)?;
        let gap = self.simulation.position - self.character.position;
        let dist = gap.length();
        if dist > cfg.clamp_distance {
            self.simulation.position = self.character.position + gap * (cfg.clamp_distance / dist);
        }

        let mut force = !self.started;
        if self.started {
            self.time += dt;
            let r = self.range_of(db)?;
            let end = r.len.saturating_sub(1) as f32 / db.sample_rate();
            if self.time > end || !db.is_searchable(self.frame(db)?) {
                force = true;
                self.time = self.time.min(end);
            }
        }
        buffers.previous.copy_from_slice(buffers.pose);
        let moved = if self.started {
            Some(Self::sample(
                db,
                clips,
                self.range,
                self.time,
                buffers.rest,
                buffers.pose,
            )?)
        } else {
            None
        };
        if let Some(g) = moved {
            let step = rotate_y(g.position - self.ground.position, -self.ground.yaw);
            self.character.apply(crate::mix::root_motion::RootMotion {
                translation: step,
                yaw: wrap_angle(g.yaw - self.ground.yaw),
            });
            self.ground = g;
            // The continuation: what this frame shows without a new match.
            self.inertializer
                .update(buffers.inertial, dt, buffers.pose)?;
        }

        self.since_search += dt;
        let turned = (desired.velocity - self.searched_velocity).length() > cfg.abrupt_change;
        let mut step = MatchStep {
            frame: self.frame(db)?,
            searched: false,
            transitioned: false,
            cost: f32::INFINITY,
            bound: f32::INFINITY,
        };
        if force || turned || self.since_search >= cfg.search_interval {
            self.since_search = 0.0;
            self.searched_velocity = desired.velocity;
            step.searched = true;
            let current = step.frame;
            self.query(db, desired, current, buffers.query)?;
            let bound = if self.started && db.is_searchable(current) {
                db.cost(buffers.query, current)? - cfg.keep_margin
            } else {
                f32::INFINITY
            };
            step.bound = bound;
            let found = db.search(buffers.query, bound)?;
            if !self.started && found.is_none() {
                return Err(Error::InvalidParameter {
                    what: "database has no searchable frame",
                });
            }
            if let Some(m) = found {
                let (range, local) = db.locate(m.frame as usize).ok_or(Error::Corrupt {
                    what: "database search returned a frame past the end",
                })?;
                let near = range == self.range
                    && (local as f32 / db.sample_rate() - self.time).abs() <= cfg.ignore_nearby;
                if force || !near {
                    self.start_clip(db, clips, range, local, dt, buffers)?;
                    step.transitioned = true;
                    step.frame = m.frame as usize;
                }
            }
            step.cost = db.cost(buffers.query, step.frame)?;
        }
        if cfg.adjust_half_life > 0.0 {
            let a = 1.0 - libm::expf(-LN_2 * dt / cfg.adjust_half_life);
            let c = &mut self.character;
            c.position = c.position + (self.simulation.position - c.position) * a;
            c.yaw = wrap_angle(c.yaw + wrap_angle(self.simulation.yaw - c.yaw) * a);
        }
        Ok(step)
    }

    /// Switches playback to `local` frames into `range`: samples the new
    /// clip now and one step earlier and starts the inertialization from
    /// last frame's output (the first start just plays the clip).
    fn start_clip<C: ClipSource>(
        &mut self,
        db: &Database<'_>,
        clips: &[C],
        range: usize,
        local: usize,
        dt: f32,
        b: &mut MatchBuffers<'_>,
    ) -> Result<(), Error> {
        let time = local as f32 / db.sample_rate();
        let g = Self::sample(db, clips, range, time, b.rest, b.target)?;
        if self.started {
            Self::sample(
                db,
                clips,
                range,
                (time - dt).max(0.0),
                b.rest,
                b.target_previous,
            )?;
            let job = SwitchJob::new(
                b.pose,
                b.previous,
                b.target,
                b.target_previous,
                dt,
                self.config.transition_time,
            );
            self.inertializer.switch(b.inertial, &job)?;
            b.pose.copy_from_slice(b.target);
            // Offsets at the switch: shows the continuation again.
            self.inertializer.update(b.inertial, dt, b.pose)?;
        } else {
            b.pose.copy_from_slice(b.target);
            b.previous.copy_from_slice(b.target);
        }
        self.range = range;
        self.time = time;
        self.ground = g;
        self.started = true;
        Ok(())
    }
}
