//! `sinew secondary`: secondary motion on the procedural humanoid with a
//! tail, drawn as a strip of rows, each with a figure that says how well the
//! simulation did.
//!
//! The character speeds up to a run forward (+Z), runs, and stops at
//! [`STOP`] seconds (each in [`RAMP`] seconds), then holds its last pose, so
//! the tail first trails the run, then swings past and settles.
//!
//! - Row 1: the tail as animated (rigid: the clips hold it at rest).
//! - Row 2: the tail as a spring-bone chain ([`chain`]) with gravity and
//!   capsules on the thighs and a sphere on the pelvis, the animated tail
//!   drawn faintly beside it.
//! - Row 3: the same, wearing a cape ([`cloth`]: a grid of particles
//!   pinned across the shoulders, colliding with capsules on the torso and
//!   thighs), drawn as its outer and middle columns.
//! - Row 4 (built with the `ragdoll` feature, on by default): the plain
//!   humanoid walking in place as a powered ragdoll ([`sinew_std::ragdoll`],
//!   rapier3d) hanging from its animated pelvis, pushed backwards on the
//!   chest at [`PUSH`] seconds; the walk drawn faintly beside it.
//!
//! Everything is side view, each cell centred on the hips.

use std::error::Error as StdError;
use std::path::PathBuf;

use sinew_core::clip::TimeMode;
use sinew_core::fk::{local_to_model, FkJob};
use sinew_core::ik::IkPose;
use sinew_core::procedural::{HUMANOID_JOINT_COUNT, TAIL_JOINT_COUNT};
use sinew_core::secondary::chain::{self, ChainJob, ChainSettings, ChainState, SpringChain};
use sinew_core::secondary::cloth::{
    self, Cloth, ClothState, Compliance, Constraint, ConstraintKind, Grid, Pin,
};
use sinew_core::secondary::collider::{Collider, JointCollider};
use sinew_core::{Mat4, SoaTransform, Vec3};
use sinew_std::Humanoid;
use tiny_skia::Pixmap;

use crate::ik::{label_rows, row_pixmap, spread, GROUND_EDGE};
use crate::render::{dot, polyline, BonePainter};

type Res<T> = Result<T, Box<dyn StdError>>;

/// Simulation and sampling rate, Hz.
pub const RATE: f32 = 60.0;
/// Seconds shown.
pub const SECONDS: f32 = 3.0;
/// When the character stops, seconds.
pub const STOP: f32 = 1.4;
/// Running speed, m/s (the procedural run's stride speed, near enough for
/// the picture; the feet may slide a little).
pub const RUN_SPEED: f32 = 3.0;
/// Seconds the character takes to reach its running speed, and to stop.
pub const RAMP: f32 = 0.3;

/// Distance run after `t` seconds: the speed ramps linearly from 0 to
/// [`RUN_SPEED`] over [`RAMP`] seconds, holds, and ramps back to 0 at
/// [`STOP`].
fn distance(t: f32) -> f32 {
    let (v, a) = (RUN_SPEED, RAMP);
    let t = t.clamp(0.0, STOP);
    if t < a {
        v * t * t / (2.0 * a)
    } else if t <= STOP - a {
        v * (t - 0.5 * a)
    } else {
        let d = t - (STOP - a);
        v * (t - 0.5 * a) - v * d * d / (2.0 * a)
    }
}

/// When the ragdoll row's push lands, seconds.
pub const PUSH: f32 = 1.0;
/// The push, N·s, backwards (−Z) on the chest.
pub const PUSH_IMPULSE: f32 = 60.0;
/// A tail tip slower than this has come to rest, m/s.
pub const SETTLED: f32 = 0.05;

/// `sinew secondary` arguments.
#[derive(clap::Args, Debug, Clone)]
pub struct SecondaryArgs {
    /// Output PNG.
    #[arg(
        short,
        long = "out",
        visible_alias = "output",
        default_value = "secondary.png"
    )]
    pub out: PathBuf,
    /// Poses per row.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub frames: u32,
    /// Cell size in pixels.
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(64..=1024))]
    pub cell: u32,
}

/// The humanoid with a tail, the run clip and the tail's joints.
struct Subject {
    h: Humanoid,
    /// The tail's joints, root side first.
    tail: Vec<u16>,
    /// Shapes the tail collides with: thigh capsules and a pelvis sphere.
    colliders: Vec<JointCollider>,
}

impl Subject {
    fn new() -> Res<Subject> {
        let h = Humanoid::with_tail(RATE)?;
        let s = h.skeleton.view();
        let joint = |name: &str| -> Res<u16> {
            let j = s
                .find_joint(name)
                .ok_or_else(|| format!("no joint {name}"))?;
            Ok(u16::try_from(j)?)
        };
        // The chain's root, tail_01, stays where the pelvis carries it; the
        // five joints after it are the spring bones' particles.
        let mut tail = Vec::with_capacity(TAIL_JOINT_COUNT);
        for k in 1..=TAIL_JOINT_COUNT {
            tail.push(joint(&format!("tail_{k:02}"))?);
        }
        let mut colliders = vec![JointCollider {
            joint: joint("pelvis")?,
            shape: Collider::Sphere {
                center: Vec3::new(0.0, -0.02, 0.0),
                radius: 0.13,
            },
        }];
        for side in ["l", "r"] {
            let thigh = joint(&format!("thigh_{side}"))?;
            let calf = joint(&format!("calf_{side}"))?;
            let knee = sinew_core::soa::get_joint(s.rest_pose(), calf.into())
                .ok_or("no knee")?
                .translation;
            colliders.push(JointCollider {
                joint: thigh,
                shape: Collider::Capsule {
                    a: Vec3::ZERO,
                    b: knee,
                    radius: 0.08,
                },
            });
        }
        Ok(Subject { h, tail, colliders })
    }

    /// Frame `f`'s local pose into `local`; returns the character's world
    /// placement.
    fn animate(&self, f: usize, local: &mut [SoaTransform]) -> Res<Mat4> {
        let t = (f as f32 / RATE).min(STOP);
        self.h.clips[2].view().sample(t, TimeMode::Loop, local)?;
        Ok(Mat4::from_translation(Vec3::new(0.0, 0.0, distance(t))))
    }

    fn frames() -> usize {
        (SECONDS * RATE).round() as usize
    }
}

/// Particles across the cape.
const CAPE_COLUMNS: usize = 7;
/// Particles down the cape.
const CAPE_ROWS: usize = 10;

/// A cape: a grid of cloth particles pinned along its top row to the upper
/// spine, in world space (the pins follow the world-space joint matrices,
/// so the character's run swings it).
struct Cape {
    inv_mass: Vec<f32>,
    constraints: Vec<Constraint>,
    pins: Vec<Pin>,
    /// x, y, z, vx, vy, vz.
    soa: [Vec<f32>; 6],
    lambda: Vec<f32>,
    /// Shapes in the joints' frames: the torso and the thighs.
    colliders: Vec<JointCollider>,
}

impl Cape {
    /// The cape hanging straight down behind the back of the rest pose
    /// whose world-space matrices are `models`.
    fn new(s: &Subject, models: &[Mat4]) -> Res<Cape> {
        let skel = s.h.skeleton.view();
        let spine = skel.find_joint("spine_03").ok_or("no spine_03")?;
        let neck = models[skel.find_joint("neck_01").ok_or("no neck_01")?].translation();
        let width = 0.4;
        let origin = Vec3::new(neck.x - 0.5 * width, neck.y - 0.02, neck.z - 0.17);
        let grid = Grid {
            columns: CAPE_COLUMNS,
            rows: CAPE_ROWS,
            origin,
            across: Vec3::new(width / (CAPE_COLUMNS - 1) as f32, 0.0, 0.0),
            down: Vec3::new(0.0, -0.085, 0.0),
            particle_mass: 0.015,
            compliance: Compliance {
                structural: 1e-6,
                shear: 1e-4,
                bend: 2e-3,
            },
        };
        let n = CAPE_COLUMNS * CAPE_ROWS;
        let built_count = cloth::grid_constraint_count(CAPE_COLUMNS, CAPE_ROWS);
        let mut soa: [Vec<f32>; 6] = std::array::from_fn(|_| vec![0.0; n]);
        let mut inv_mass = vec![0.0; n];
        let mut constraints = vec![
            Constraint {
                a: 0,
                b: 0,
                rest: 0.0,
                compliance: 0.0,
                kind: ConstraintKind::Structural,
            };
            built_count
        ];
        let mut lambda = vec![0.0; built_count];
        {
            let [x, y, z, vx, vy, vz] = &mut soa;
            let mut state = ClothState {
                x,
                y,
                z,
                vx,
                vy,
                vz,
                lambda: &mut lambda,
            };
            cloth::build_grid(&grid, &mut state, &mut inv_mass, &mut constraints)?;
        }
        let mut pins = Vec::with_capacity(CAPE_COLUMNS);
        for c in 0..CAPE_COLUMNS {
            inv_mass[c] = 0.0;
            let at = Vec3::new(soa[0][c], soa[1][c], soa[2][c]);
            pins.push(Pin::at(
                u32::try_from(c)?,
                u16::try_from(spine)?,
                &models[spine],
                at,
            )?);
        }
        let mut tethers = vec![constraints[0]; cloth::tether_count(&inv_mass)];
        let t = cloth::build_tethers(&soa[0], &soa[1], &soa[2], &inv_mass, 0.0, &mut tethers)?;
        constraints.extend_from_slice(&tethers[..t]);
        lambda.resize(constraints.len(), 0.0);
        let joint = |name: &str| -> Res<u16> {
            Ok(u16::try_from(
                skel.find_joint(name)
                    .ok_or_else(|| format!("no joint {name}"))?,
            )?)
        };
        // The lower torso, and the upper chest, which keeps the cape from
        // swinging forward over the shoulders when the character stops.
        let mut colliders = vec![
            JointCollider {
                joint: joint("spine_01")?,
                shape: Collider::Capsule {
                    a: Vec3::new(0.0, -0.1, 0.0),
                    b: Vec3::new(0.0, 0.3, 0.0),
                    radius: 0.12,
                },
            },
            JointCollider {
                joint: joint("spine_03")?,
                shape: Collider::Capsule {
                    a: Vec3::ZERO,
                    b: Vec3::new(0.0, 0.2, 0.0),
                    radius: 0.12,
                },
            },
        ];
        colliders.extend_from_slice(&s.colliders);
        Ok(Cape {
            inv_mass,
            constraints,
            pins,
            soa,
            lambda,
            colliders,
        })
    }

    /// One frame against the world-space joint matrices `models`; returns
    /// the structural strain after it.
    fn step(&mut self, models: &[Mat4], dt: f32) -> Res<f32> {
        let cloth = Cloth::new(&self.inv_mass, &self.constraints, &self.pins)?;
        let mut placed = vec![
            Collider::Sphere {
                center: Vec3::ZERO,
                radius: 0.0
            };
            self.colliders.len()
        ];
        sinew_core::secondary::collider::place(&self.colliders, models, &mut placed)?;
        // Sub-steps of 1/240 s: a run swings the cape hard against the
        // torso, and shorter steps keep its edges within a few percent.
        let settings = cloth::Settings {
            radius: 0.02,
            max_step: 1.0 / 240.0,
            ..cloth::Settings::default()
        };
        let [x, y, z, vx, vy, vz] = &mut self.soa;
        let mut state = ClothState {
            x,
            y,
            z,
            vx,
            vy,
            vz,
            lambda: &mut self.lambda,
        };
        cloth::step(&cloth, &mut state, &settings, models, &placed, dt)?;
        Ok(cloth.max_strain(
            &self.soa[0],
            &self.soa[1],
            &self.soa[2],
            Some(ConstraintKind::Structural),
        ))
    }

    /// Particle `(column, row)`.
    fn particle(&self, c: usize, r: usize) -> Vec3 {
        let i = r * CAPE_COLUMNS + c;
        Vec3::new(self.soa[0][i], self.soa[1][i], self.soa[2][i])
    }
}

/// The rest pose's model matrices.
fn rest_models(s: &Subject) -> Res<Vec<Mat4>> {
    let skel = s.h.skeleton.view();
    let mut models = vec![Mat4::IDENTITY; skel.joint_count()];
    local_to_model(&FkJob::new(&skel, skel.rest_pose()), &mut models)?;
    Ok(models)
}

/// What the spring tail did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TailFigures {
    /// Frames simulated.
    pub frames: usize,
    /// Largest distance of the tail tip from its animated place, metres.
    pub lag: f32,
    /// Largest relative error of a tail bone's length, over all frames.
    pub stretch: f32,
    /// Deepest a tail particle was left inside a collider, metres.
    pub penetration: f32,
    /// Seconds after the stop until the tip stays slower than
    /// [`SETTLED`] (`None`: not by the end).
    pub settle: Option<f32>,
    /// With a cape: the largest strain of its structural edges after a
    /// frame, `| |a − b| − rest | / rest`.
    pub cape_strain: f32,
}

/// A drawn frame: world positions of every joint, of the animated tail,
/// and of the cape's drawn columns (none without a cape).
type Cell = (Vec<Vec3>, Vec<Vec3>, Vec<Vec<Vec3>>);

/// One row: per drawn cell, world positions of every joint and of the
/// animated tail.
struct Row {
    cells: Vec<Cell>,
    figures: TailFigures,
}

fn run(s: &Subject, springs: bool, with_cape: bool, cells: &[usize]) -> Res<Row> {
    let skel = s.h.skeleton.view();
    let mut local = vec![SoaTransform::IDENTITY; skel.soa_count()];
    let mut models = vec![Mat4::IDENTITY; skel.joint_count()];
    let chain = SpringChain::new(&skel, &s.tail)?;
    let settings = ChainSettings {
        stiffness: 0.04,
        drag: 0.04,
        radius: 0.03,
        max_angle: 1.2,
        ..ChainSettings::default()
    };
    let n = chain.joint_count();
    let (mut current, mut previous) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
    let mut placed = vec![
        Collider::Sphere {
            center: Vec3::ZERO,
            radius: 0.0
        };
        s.colliders.len()
    ];
    let rest_lengths: Vec<f32> = {
        local_to_model(&FkJob::new(&skel, skel.rest_pose()), &mut models)?;
        s.tail
            .windows(2)
            .map(|w| {
                (models[usize::from(w[1])].translation() - models[usize::from(w[0])].translation())
                    .length()
            })
            .collect()
    };
    let tip = usize::from(s.tail[n - 1]);
    let mut figures = TailFigures {
        frames: Subject::frames(),
        ..TailFigures::default()
    };
    let mut last_unsettled = None;
    let mut last_tip: Option<Vec3> = None;
    let mut cape: Option<Cape> = None;
    let mut world_models = vec![Mat4::IDENTITY; skel.joint_count()];
    let mut row = Row {
        cells: Vec::with_capacity(cells.len()),
        figures,
    };
    for f in 0..Subject::frames() {
        let world = s.animate(f, &mut local)?;
        local_to_model(&FkJob::new(&skel, &local), &mut models)?;
        let animated: Vec<Vec3> = s
            .tail
            .iter()
            .map(|&j| world.transform_point(models[usize::from(j)].translation()))
            .collect();
        if springs {
            chain::place_world(&s.colliders, &models, &world, &mut placed)?;
            let job = ChainJob::new(chain)
                .with_settings(settings)
                .with_world(world)
                .with_colliders(&placed);
            let state = ChainState {
                current: &mut current,
                previous: &mut previous,
            };
            if f == 0 {
                chain::reset(&chain, &models, &world, state)?;
            } else {
                let mut pose = IkPose::new(&skel, &mut local, &mut models, None)?;
                let report = chain::step(&job, &mut pose, state, 1.0 / RATE)?;
                figures.penetration = figures.penetration.max(report.penetration);
            }
            for (w, rest) in current.windows(2).zip(&rest_lengths) {
                figures.stretch = figures
                    .stretch
                    .max(((w[1] - w[0]).length() - rest).abs() / rest);
            }
        }
        if with_cape {
            for (w, m) in world_models.iter_mut().zip(&models) {
                *w = world * *m;
            }
            match cape.as_mut() {
                None => {
                    // Made on the rest pose, then left to settle for a
                    // second on the first frame's pose before the run.
                    let mut c = Cape::new(s, &rest_models(s)?)?;
                    for _ in 0..RATE as usize {
                        c.step(&world_models, 1.0 / RATE)?;
                    }
                    cape = Some(c);
                }
                Some(c) => {
                    let strain = c.step(&world_models, 1.0 / RATE)?;
                    figures.cape_strain = figures.cape_strain.max(strain);
                }
            }
        }
        let tip_now = world.transform_point(models[tip].translation());
        let lag = (tip_now - animated[n - 1]).length();
        figures.lag = figures.lag.max(lag);
        if last_tip.is_some_and(|p| (tip_now - p).length() * RATE > SETTLED) {
            last_unsettled = Some(f);
        }
        last_tip = Some(tip_now);
        if cells.contains(&f) {
            let joints = models
                .iter()
                .map(|m| world.transform_point(m.translation()))
                .collect();
            let columns = cape.as_ref().map_or_else(Vec::new, |c| {
                [0, CAPE_COLUMNS / 2, CAPE_COLUMNS - 1]
                    .iter()
                    .map(|&k| (0..CAPE_ROWS).map(|r| c.particle(k, r)).collect())
                    .collect()
            });
            row.cells.push((joints, animated, columns));
        }
    }
    let stop = (STOP * RATE).round() as usize;
    figures.settle = match last_unsettled {
        None => Some(0.0),
        Some(f) if f + 1 < Subject::frames() => Some(((f + 1).saturating_sub(stop)) as f32 / RATE),
        Some(_) => None,
    };
    row.figures = figures;
    Ok(row)
}

const GHOST: [u8; 4] = [170, 170, 170, 255];
const TIP: [u8; 4] = [200, 30, 120, 255];
const CLOTH: [u8; 4] = [150, 40, 60, 200];

/// A row, side view: each cell centred on the hips over a flat floor.
fn draw_row(s: &Subject, row: &Row, ghost: bool, cell: u32) -> Res<Pixmap> {
    let mut p = row_pixmap(row.cells.len(), cell)?;
    let size = cell as f32;
    let span = 2.2;
    let scale = size / span;
    let bones = BonePainter::new(&s.h.skeleton.view());
    let width = (size / 90.0).max(1.5);
    for (i, (joints, animated, cape)) in row.cells.iter().enumerate() {
        let ox = i as f32 * size;
        let hips = joints[0];
        let to_px = |q: Vec3| {
            (
                ox + 0.5 * size + (q.z - hips.z) * scale,
                (1.95 - q.y) * scale,
            )
        };
        let floor = [
            to_px(Vec3::new(0.0, 0.0, hips.z - 1.0)),
            to_px(Vec3::new(0.0, 0.0, hips.z + 1.0)),
        ];
        polyline(&mut p, &floor, GROUND_EDGE, 1.5);
        if ghost {
            let line: Vec<(f32, f32)> = animated.iter().map(|&q| to_px(q)).collect();
            polyline(&mut p, &line, GHOST, width);
        }
        let points: Vec<(f32, f32)> = joints.iter().map(|&q| to_px(q)).collect();
        bones.draw(&mut p, &points, width);
        dot(
            &mut p,
            points[HUMANOID_JOINT_COUNT + TAIL_JOINT_COUNT - 1],
            (size / 60.0).max(2.0),
            TIP,
        );
        for column in cape {
            let line: Vec<(f32, f32)> = column.iter().map(|&q| to_px(q)).collect();
            polyline(&mut p, &line, CLOTH, width);
        }
    }
    Ok(p)
}

/// What the ragdoll row measured: how far the chest strayed from the walk.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RagdollFigures {
    /// Frames simulated.
    pub frames: usize,
    /// Largest distance of the chest from the walk's before the push, metres.
    pub walking: f32,
    /// Largest distance after the push, metres.
    pub pushed: f32,
    /// Distance at the last frame, metres.
    pub end: f32,
}

#[cfg(feature = "ragdoll")]
fn ragdoll_row(cells: &[usize], cell: u32) -> Res<(Pixmap, RagdollFigures)> {
    use sinew_std::ragdoll::{Blend, Ragdoll, RagdollDesc};
    let h = Humanoid::new(RATE)?;
    let (skel, walk) = (h.skeleton.view(), h.clips[0].view());
    let mut models = vec![Mat4::IDENTITY; skel.joint_count()];
    local_to_model(&FkJob::new(&skel, skel.rest_pose()), &mut models)?;
    let desc = RagdollDesc {
        kinematic_root: true,
        stiffness: 1500.0,
        ground: None,
        ..RagdollDesc::humanoid(&skel)
    };
    let mut ragdoll = Ragdoll::new(&skel, &models, &desc)?;
    let chest = skel.find_joint("spine_03").ok_or("no spine_03")?;
    let mut anim = vec![SoaTransform::IDENTITY; skel.soa_count()];
    let mut out = anim.clone();
    let mut walk_models = models.clone();
    walk.sample(0.0, TimeMode::Loop, &mut anim)?;
    ragdoll.reset(&anim)?;
    let mut figures = RagdollFigures {
        frames: Subject::frames(),
        ..RagdollFigures::default()
    };
    let push = (PUSH * RATE).round() as usize;
    let mut drawn = Vec::with_capacity(cells.len());
    for f in 0..Subject::frames() {
        walk.sample(f as f32 / RATE, TimeMode::Loop, &mut anim)?;
        ragdoll.drive(&anim, 1.0)?;
        if f == push {
            let body = ragdoll.body_of(chest).ok_or("no chest body")?;
            let at = ragdoll.body(body).ok_or("no chest body")?.position;
            ragdoll.apply_impulse(chest, Vec3::new(0.0, 0.0, -PUSH_IMPULSE), at)?;
        }
        ragdoll.step(1.0 / RATE)?;
        out.clone_from(&anim);
        ragdoll.write_pose(&mut out, Blend::Global(1.0))?;
        local_to_model(&FkJob::new(&skel, &anim), &mut walk_models)?;
        local_to_model(&FkJob::new(&skel, &out), &mut models)?;
        let error = (models[chest].translation() - walk_models[chest].translation()).length();
        if f < push {
            figures.walking = figures.walking.max(error);
        } else {
            figures.pushed = figures.pushed.max(error);
        }
        figures.end = error;
        if cells.contains(&f) {
            let at = |m: &[Mat4]| m.iter().map(Mat4::translation).collect::<Vec<_>>();
            drawn.push((at(&models), at(&walk_models)));
        }
    }
    let mut p = row_pixmap(drawn.len(), cell)?;
    let size = cell as f32;
    let scale = size / 2.2;
    let bones = BonePainter::new(&skel);
    let width = (size / 90.0).max(1.5);
    for (i, (body, walked)) in drawn.iter().enumerate() {
        let ox = i as f32 * size;
        let to_px = |q: &Vec3| (ox + 0.5 * size + q.z * scale, (1.95 - q.y) * scale);
        let ghost: Vec<(f32, f32)> = walked.iter().map(to_px).collect();
        let points: Vec<(f32, f32)> = body.iter().map(to_px).collect();
        polyline(
            &mut p,
            &[
                to_px(&Vec3::new(0.0, 0.0, -1.0)),
                to_px(&Vec3::new(0.0, 0.0, 1.0)),
            ],
            GROUND_EDGE,
            1.5,
        );
        for (j, parent) in (0..skel.joint_count()).map(|j| (j, skel.parent(j))) {
            if let Some(parent) = parent {
                polyline(&mut p, &[ghost[parent], ghost[j]], GHOST, width);
            }
        }
        bones.draw(&mut p, &points, width);
        if cells[i] >= push && cells[i] < push + 6 {
            dot(&mut p, points[chest], (size / 40.0).max(2.5), TIP);
        }
    }
    Ok((p, figures))
}

/// Every row's figures.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SecondaryFigures {
    /// Row 1: the rigid tail (its lag is 0 by construction).
    pub rigid: TailFigures,
    /// Row 2: the spring tail.
    pub springs: TailFigures,
    /// Row 3: the spring tail and the cape.
    pub cape: TailFigures,
    /// Row 4: the pushed ragdoll (`None` without the `ragdoll` feature).
    pub ragdoll: Option<RagdollFigures>,
}

/// Runs the rows and draws them: the picture and the figures.
///
/// # Errors
/// A kernel error or a drawing error.
pub fn secondary_strip(args: &SecondaryArgs) -> Res<(Pixmap, SecondaryFigures)> {
    let s = Subject::new()?;
    let cells = spread(Subject::frames(), args.frames as usize);
    let rigid = run(&s, false, false, &cells)?;
    let springs = run(&s, true, false, &cells)?;
    let caped = run(&s, true, true, &cells)?;
    #[allow(unused_mut)] // the ragdoll row fills in its figures
    let mut figures = SecondaryFigures {
        rigid: rigid.figures,
        springs: springs.figures,
        cape: caped.figures,
        ragdoll: None,
    };
    let settle = springs.figures.settle.map_or_else(
        || "not settled".to_string(),
        |t| format!("at rest {t:.2} s after the stop"),
    );
    let captions = [
        "1. the tail as animated: rigid".to_string(),
        format!(
            "2. spring bones: tip up to {:.0} cm from the animated tail (grey), bones within {:.2}% of their length, {settle}",
            springs.figures.lag * 100.0,
            springs.figures.stretch * 100.0
        ),
        format!(
            "3. with a cape ({CAPE_COLUMNS}x{CAPE_ROWS} cloth particles pinned to the upper spine): its edges within {:.1}% of their length",
            caped.figures.cape_strain * 100.0
        ),
    ];
    // Pushed to only with the ragdoll feature.
    #[cfg_attr(not(feature = "ragdoll"), allow(unused_mut))]
    let mut captions = captions.to_vec();
    #[cfg_attr(not(feature = "ragdoll"), allow(unused_mut))]
    let mut rows = vec![
        draw_row(&s, &rigid, false, args.cell)?,
        draw_row(&s, &springs, true, args.cell)?,
        draw_row(&s, &caped, false, args.cell)?,
    ];
    #[cfg(feature = "ragdoll")]
    {
        let (row, r) = ragdoll_row(&cells, args.cell)?;
        rows.push(row);
        captions.push(format!(
            "4. powered ragdoll (rapier3d) walking, pushed {PUSH_IMPULSE} N*s on the chest at {PUSH} s: strays {:.0} cm, {:.1} cm off the walk at the end (grey)",
            r.pushed * 100.0,
            r.end * 100.0
        ));
        figures.ragdoll = Some(r);
    }
    let title = format!(
        "Secondary motion: the procedural humanoid with a tail runs at {RUN_SPEED} m/s, stops at {STOP} s; side view"
    );
    Ok((label_rows(&rows, &title, &captions)?, figures))
}

/// `sinew secondary`: writes the strip and prints one line per row.
///
/// # Errors
/// As [`secondary_strip`], or the PNG cannot be written.
pub fn secondary_command(args: &SecondaryArgs, out: &dyn Fn(&str)) -> Res<()> {
    let (png, f) = secondary_strip(args)?;
    png.save_png(&args.out)
        .map_err(|e| format!("cannot write {}: {e}", args.out.display()))?;
    out(&format!(
        "row 1, rigid tail: {} frames at {RATE} Hz",
        f.rigid.frames
    ));
    let settle = f.springs.settle.map_or_else(
        || "not settled by the end".to_string(),
        |t| format!("{t:.2} s"),
    );
    out(&format!(
        "row 2, spring tail: max tip lag {:.1} cm, max bone stretch {:.3}%, max collider penetration {:.1} mm, tip slower than {:.0} cm/s after the stop in {settle}",
        f.springs.lag * 100.0,
        f.springs.stretch * 100.0,
        f.springs.penetration * 1e3,
        SETTLED * 1e2
    ));
    out(&format!(
        "row 3, cape ({CAPE_COLUMNS}x{CAPE_ROWS} particles, XPBD, {} constraints with tethers): max structural strain {:.2}%",
        cloth::grid_constraint_count(CAPE_COLUMNS, CAPE_ROWS) + CAPE_COLUMNS * (CAPE_ROWS - 1),
        f.cape.cape_strain * 100.0
    ));
    if let Some(r) = f.ragdoll {
        out(&format!(
            "row 4, powered ragdoll: chest within {:.1} cm of the walk before the push, {:.1} cm at most after it, {:.1} cm at the end",
            r.walking * 100.0,
            r.pushed * 100.0,
            r.end * 100.0
        ));
    }
    out(&format!(
        "wrote {} ({}x{} px)",
        args.out.display(),
        png.width(),
        png.height()
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cape_on_a_standing_character_hangs_within_one_percent() {
        let s = Subject::new().unwrap();
        let models = rest_models(&s).unwrap();
        let mut cape = Cape::new(&s, &models).unwrap();
        let mut strain = 0.0f32;
        for f in 0..120 {
            let e = cape.step(&models, 1.0 / RATE).unwrap();
            if f > 60 {
                strain = strain.max(e);
            }
        }
        assert!(strain < 0.01, "{strain}");
    }
}
