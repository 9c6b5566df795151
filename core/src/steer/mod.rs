//! Crowd steering: agents in the ground plane moved by local rules, with
//! neighbours from a spatial hash over caller buffers.
//!
//! Each [`Agent`] (a disc: position, velocity, radius, top speed, top
//! acceleration, goal, heading) is steered by the weighted sum of six
//! accelerations ([`Weights`]):
//!
//! - **separation**: away from each neighbour closer than the sum of the
//!   radii plus [`Params::separation_margin`], growing linearly from 0 at
//!   that distance to `max_force` at contact (and beyond);
//! - **alignment**: towards the neighbours' mean velocity, over
//!   [`Params::response_time`];
//! - **cohesion**: towards the neighbours' centroid, as a spring with the
//!   same response time;
//! - **arrival**: towards the goal at top speed, slowing linearly inside
//!   [`Params::slowing_radius`], braking to a stop inside
//!   [`Params::arrive_distance`];
//! - **obstacle avoidance**: away from each [`Circle`] and [`Segment`]
//!   closer than [`Params::avoid_distance`] (clearance from the agent's
//!   edge), growing linearly to `max_force` at contact;
//! - **anticipation**: away from each neighbour on a collision course,
//!   by the power law of Karamouzas, Skinner and Guy (2014): with `τ` the
//!   time until the two discs would touch at their current velocities,
//!   the interaction energy `E = k · τ⁻² · e^(−τ/τ₀)` (`k` the weight,
//!   `τ₀` = [`Params::anticipation_time`]) and the acceleration `−∇ₓE`,
//!   which points along the contact normal at the predicted contact:
//!   `k · e^(−τ/τ₀) · τ⁻² · (2/τ + 1/τ₀) · (x + v·τ) / √D` (`x`, `v`
//!   relative position and velocity, `D` the discriminant of the contact
//!   quadratic), capped at `max_force` per neighbour. It acts before
//!   agents touch, which separation cannot.
//!
//! Neighbours are the other agents whose centres lie strictly within
//! [`Params::neighbour_radius`]. The sum is clamped to `max_force`
//! (m/s², any length unit works) and integrated with a top speed and a top
//! turn rate ([`Params::max_turn_rate`]): the new heading turns towards
//! the new velocity by at most `max_turn_rate · dt`, and the speed is
//! scaled by the cosine of the angle still to turn (an agent that wants to
//! reverse slows down while it turns), so a locomotion system that follows
//! [`Locomotion`] (a speed and a heading per agent) never has to slide.
//! After moving, an agent that overlapped a neighbour at the start of the
//! step is moved apart by [`Params::overlap_resolution`] of half the
//! overlap (its neighbour takes the other half), a last resort for what
//! the forces left; then an agent inside an obstacle is pushed back out
//! to touch it: agents never penetrate obstacles.
//!
//! **Neighbour search.** [`Grid`] is a uniform grid of square cells a
//! little wider than the neighbour radius, hashed into a fixed number of
//! buckets (so the world is unbounded), filled each step by a counting
//! sort of the agents into caller-owned arrays sized once: `buckets + 1`
//! bucket starts and two `u32` per agent. A query gathers the agents
//! within the radius from the (at most nine) buckets around an agent and
//! sorts them by index in a small stack buffer, so neighbours are visited
//! in increasing index order, exactly as the brute-force
//! [`reference`](mod@reference) visits them: both give the same bits.
//!
//! **Determinism.** An agent's new state depends only on the previous
//! states (`agents` is read, `out` written), never on the order agents
//! are processed in: [`steer_range`] over any split of the agents gives
//! the bits [`step`] gives. No allocation, no panics on bad input.
//!
//! Angles are radians, counter-clockwise from +x towards +y; headings are
//! kept in (−π, π].

mod grid;
pub mod reference;

pub use grid::{Grid, CELL_MARGIN};

use crate::Error;

/// One agent: a disc in the ground plane.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Agent {
    /// Centre, length units (metres by convention).
    pub position: [f32; 2],
    /// Velocity, length units per second; after a step it points along
    /// [`Agent::heading`].
    pub velocity: [f32; 2],
    /// Where the agent goes (set it to the position to stand still).
    pub goal: [f32; 2],
    /// Facing, radians; kept while the agent stands.
    pub heading: f32,
    /// Radius, `>= 0`.
    pub radius: f32,
    /// Top speed, `>= 0`.
    pub max_speed: f32,
    /// Top acceleration (the steering force per unit mass), `>= 0`.
    pub max_force: f32,
}

/// A circular obstacle.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Circle {
    /// Centre.
    pub center: [f32; 2],
    /// Radius, `>= 0`.
    pub radius: f32,
}

/// A wall: the segment from `a` to `b` (a point when they are equal).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Segment {
    /// One end.
    pub a: [f32; 2],
    /// The other end.
    pub b: [f32; 2],
}

/// The obstacles of a step, borrowed.
#[derive(Clone, Copy, Debug, Default)]
pub struct Obstacles<'a> {
    /// Circles.
    pub circles: &'a [Circle],
    /// Segments.
    pub segments: &'a [Segment],
}

/// Weights of the six rules.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Weights {
    /// Separation.
    pub separation: f32,
    /// Alignment.
    pub alignment: f32,
    /// Cohesion.
    pub cohesion: f32,
    /// Arrival at the goal.
    pub arrival: f32,
    /// Obstacle avoidance.
    pub avoidance: f32,
    /// Anticipation: the power law's `k`, in squared length units
    /// (m²); 0 turns the rule (and its cost) off.
    pub anticipation: f32,
}

/// Settings shared by every agent of a step.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// Other agents closer than this (centre to centre) are neighbours;
    /// `> 0`, and at least `2 · largest radius + separation_margin`, so
    /// every agent that separation acts on is a neighbour.
    pub neighbour_radius: f32,
    /// Personal space beyond touching, `>= 0`.
    pub separation_margin: f32,
    /// The rules' weights, each finite.
    pub weights: Weights,
    /// Time over which alignment and arrival close their velocity gap and
    /// cohesion's spring acts, seconds, `> 0`.
    pub response_time: f32,
    /// Arrival slows down linearly inside this distance of the goal, `>= 0`.
    pub slowing_radius: f32,
    /// Inside this distance of the goal an agent brakes to a stop, `>= 0`.
    pub arrive_distance: f32,
    /// An agent braking inside `arrive_distance` stops outright below
    /// this speed, `>= 0`.
    pub stop_speed: f32,
    /// Top turn rate, radians per second, `> 0`.
    pub max_turn_rate: f32,
    /// Obstacles push from this clearance (distance from the agent's
    /// edge) inwards, `> 0`.
    pub avoid_distance: f32,
    /// Anticipation's `τ₀`: collisions predicted much later than this
    /// are ignored (the energy decays as `e^(−τ/τ₀)`), seconds, `> 0`.
    pub anticipation_time: f32,
    /// Fraction of an overlap between two agents undone per step by
    /// moving them apart (half each), `0 ..= 1`; 0 leaves overlaps to
    /// the forces. The move is capped at the agent's radius and is not
    /// part of the velocity: a last resort, so keep it small.
    pub overlap_resolution: f32,
    /// Share of the anticipation force turned a quarter counter-clockwise,
    /// finite: a head-on pair then steers to each one's right and passes
    /// (negative: to the left). Without it a perfectly head-on pair only
    /// brakes.
    pub passing_bias: f32,
}

impl Default for Params {
    /// Walking people in metres: 2 m neighbourhood, 0.3 m personal space,
    /// half a second to respond, slowing over the last 2 m, stopped within
    /// 0.2 m, turning up to 4 rad/s, walls felt from 1 m. Anticipation
    /// and overlap resolution are off (weight and fraction 0): in the
    /// dense head-on crossing of docs/steering.md they stall the groups
    /// more than they help; `τ₀` = 3 s and a passing bias of 0.5 are
    /// ready for a weight (the power law's published `k` is 1.5 m²).
    fn default() -> Self {
        Params {
            neighbour_radius: 2.0,
            separation_margin: 0.3,
            weights: Weights {
                separation: 2.0,
                alignment: 0.3,
                cohesion: 0.1,
                arrival: 1.0,
                avoidance: 3.0,
                anticipation: 0.0,
            },
            response_time: 0.5,
            slowing_radius: 2.0,
            arrive_distance: 0.2,
            stop_speed: 0.05,
            max_turn_rate: 4.0,
            avoid_distance: 1.0,
            anticipation_time: 3.0,
            overlap_resolution: 0.0,
            passing_bias: 0.5,
        }
    }
}

/// What a locomotion system follows: the agent's speed and heading after
/// the step (its blend space's speed and direction).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Locomotion {
    /// Speed, `0 ..= max_speed`.
    pub speed: f32,
    /// Heading, radians in (−π, π].
    pub heading: f32,
}

/// Figures of one step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StepReport {
    /// Most neighbours any agent had.
    pub max_neighbours: u32,
    /// Agents within `arrive_distance` of their goals after the step.
    pub arrived: u32,
}

impl StepReport {
    fn merge(&mut self, o: StepReport) {
        self.max_neighbours = self.max_neighbours.max(o.max_neighbours);
        self.arrived += o.arrived;
    }
}

/// Checks `params`, `dt`, every agent and every obstacle: O(agents +
/// obstacles). [`step`] and [`steer_range`] call it.
///
/// # Errors
/// [`Error::InvalidParameter`] for a parameter or `dt` out of its range
/// (including a neighbour radius below `2 · largest radius +
/// separation_margin`); [`Error::InvalidAgent`] naming the first bad
/// agent (or obstacle, by its index in its slice).
pub fn validate(
    agents: &[Agent],
    obstacles: &Obstacles<'_>,
    params: &Params,
    dt: f32,
) -> Result<(), Error> {
    let bad = |what| Err(Error::InvalidParameter { what });
    let p = params;
    let w = p.weights;
    if !(dt.is_finite() && dt > 0.0) {
        return bad("steering dt must be finite and > 0");
    }
    if !(p.neighbour_radius.is_finite() && p.neighbour_radius > 0.0) {
        return bad("neighbour_radius must be finite and > 0");
    }
    let non_negative = |x: f32| x.is_finite() && x >= 0.0;
    let positive = |x: f32| x.is_finite() && x > 0.0;
    if !(non_negative(p.separation_margin)
        && non_negative(p.slowing_radius)
        && non_negative(p.arrive_distance)
        && non_negative(p.stop_speed))
    {
        return bad("separation_margin, slowing_radius, arrive_distance and stop_speed must be finite and >= 0");
    }
    if !(positive(p.response_time)
        && positive(p.max_turn_rate)
        && positive(p.avoid_distance)
        && positive(p.anticipation_time))
    {
        return bad(
            "response_time, max_turn_rate, avoid_distance and anticipation_time must be finite and > 0",
        );
    }
    if !p.passing_bias.is_finite() {
        return bad("passing_bias must be finite");
    }
    if !(0.0..=1.0).contains(&p.overlap_resolution) {
        return bad("overlap_resolution must be in 0 ..= 1");
    }
    if ![
        w.separation,
        w.alignment,
        w.cohesion,
        w.arrival,
        w.avoidance,
        w.anticipation,
    ]
    .iter()
    .all(|x| x.is_finite())
    {
        return bad("steering weights must be finite");
    }
    let mut largest = 0.0f32;
    for (i, a) in agents.iter().enumerate() {
        let agent = i as u32;
        let finite = a
            .position
            .iter()
            .chain(&a.velocity)
            .chain(&a.goal)
            .all(|x| x.is_finite())
            && a.heading.is_finite();
        if !finite {
            return Err(Error::InvalidAgent {
                agent,
                what: "position, velocity, goal and heading must be finite",
            });
        }
        if !(non_negative(a.radius) && non_negative(a.max_speed) && non_negative(a.max_force)) {
            return Err(Error::InvalidAgent {
                agent,
                what: "radius, max_speed and max_force must be finite and >= 0",
            });
        }
        largest = largest.max(a.radius);
    }
    if 2.0 * largest + p.separation_margin > p.neighbour_radius {
        return bad("neighbour_radius must be at least 2 * the largest radius + separation_margin");
    }
    for (i, c) in obstacles.circles.iter().enumerate() {
        if !(c.center.iter().all(|x| x.is_finite()) && non_negative(c.radius)) {
            return Err(Error::InvalidAgent {
                agent: i as u32,
                what: "circle obstacle: centre must be finite and radius >= 0",
            });
        }
    }
    for (i, s) in obstacles.segments.iter().enumerate() {
        if !s.a.iter().chain(&s.b).all(|x| x.is_finite()) {
            return Err(Error::InvalidAgent {
                agent: i as u32,
                what: "segment obstacle: ends must be finite",
            });
        }
    }
    Ok(())
}

fn check_outputs(n: usize, out: usize, loco: usize) -> Result<(), Error> {
    if out != n {
        return Err(Error::BadLength {
            buffer: "steered agents",
            expected: n,
            actual: out,
        });
    }
    if loco != n {
        return Err(Error::BadLength {
            buffer: "locomotion",
            expected: n,
            actual: loco,
        });
    }
    Ok(())
}

/// One step of every agent: fills `grid` from `agents`' positions, then
/// writes each agent's new state to `out` and its speed and heading to
/// `locomotion` ([`steer_range`] over all agents).
///
/// `agents` is read only, so `out` holds the next frame; swap the two
/// slices between frames.
///
/// # Errors
/// Those of [`validate`] and [`Grid::build`]; [`Error::BadLength`] when
/// `out` or `locomotion` is not one entry per agent. Nothing is written
/// on error.
pub fn step(
    agents: &[Agent],
    out: &mut [Agent],
    locomotion: &mut [Locomotion],
    grid: &mut Grid<'_>,
    obstacles: &Obstacles<'_>,
    params: &Params,
    dt: f32,
) -> Result<StepReport, Error> {
    validate(agents, obstacles, params, dt)?;
    check_outputs(agents.len(), out.len(), locomotion.len())?;
    grid.build(agents, params.neighbour_radius)?;
    Ok(run(agents, 0, out, locomotion, grid, obstacles, params, dt))
}

/// Steps agents `first .. first + out.len()` with a grid already built
/// from `agents` (by [`Grid::build`] with `params.neighbour_radius`):
/// what a thread runs on its share. Any split of the agents gives the
/// bits [`step`] gives.
///
/// # Errors
/// Those of [`validate`] (O(agents): call [`steer_range_unchecked`]
/// after validating once per frame to skip it); [`Error::BadLength`] when
/// `locomotion` differs from `out` in length or the range passes the
/// last agent; [`Error::InvalidParameter`] when `grid` was not built from
/// these agents with this radius.
#[allow(clippy::too_many_arguments)]
pub fn steer_range(
    agents: &[Agent],
    first: usize,
    out: &mut [Agent],
    locomotion: &mut [Locomotion],
    grid: &Grid<'_>,
    obstacles: &Obstacles<'_>,
    params: &Params,
    dt: f32,
) -> Result<StepReport, Error> {
    validate(agents, obstacles, params, dt)?;
    steer_range_unchecked(agents, first, out, locomotion, grid, obstacles, params, dt)
}

/// [`steer_range`] without [`validate`]: for callers that validated the
/// frame's agents, obstacles and parameters once before splitting it.
/// Unvalidated bad data gives meaningless numbers (NaN propagates), never
/// a panic.
///
/// # Errors
/// [`Error::BadLength`] and [`Error::InvalidParameter`] as
/// [`steer_range`] says.
#[allow(clippy::too_many_arguments)]
pub fn steer_range_unchecked(
    agents: &[Agent],
    first: usize,
    out: &mut [Agent],
    locomotion: &mut [Locomotion],
    grid: &Grid<'_>,
    obstacles: &Obstacles<'_>,
    params: &Params,
    dt: f32,
) -> Result<StepReport, Error> {
    if locomotion.len() != out.len() {
        return Err(Error::BadLength {
            buffer: "locomotion",
            expected: out.len(),
            actual: locomotion.len(),
        });
    }
    let end = first.checked_add(out.len()).filter(|&e| e <= agents.len());
    if end.is_none() {
        return Err(Error::BadLength {
            buffer: "steered agents",
            expected: agents.len().saturating_sub(first),
            actual: out.len(),
        });
    }
    if !grid.is_built_for(agents.len(), params.neighbour_radius) {
        return Err(Error::InvalidParameter {
            what: "grid not built from these agents with params.neighbour_radius",
        });
    }
    Ok(run(
        agents, first, out, locomotion, grid, obstacles, params, dt,
    ))
}

/// Visits the neighbours of agent `i` in increasing index order.
pub(crate) trait Neighbours {
    fn each(&self, agents: &[Agent], i: usize, radius: f32, f: impl FnMut(usize, f32));
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn run<N: Neighbours>(
    agents: &[Agent],
    first: usize,
    out: &mut [Agent],
    locomotion: &mut [Locomotion],
    neighbours: &N,
    obstacles: &Obstacles<'_>,
    params: &Params,
    dt: f32,
) -> StepReport {
    let mut report = StepReport::default();
    for (k, (o, l)) in out.iter_mut().zip(locomotion.iter_mut()).enumerate() {
        let (a, speed, r) = update(agents, first + k, neighbours, obstacles, params, dt);
        *o = a;
        *l = Locomotion {
            speed,
            heading: a.heading,
        };
        report.merge(r);
    }
    report
}

type V2 = [f32; 2];

#[inline]
fn add(a: V2, b: V2) -> V2 {
    [a[0] + b[0], a[1] + b[1]]
}

#[inline]
fn sub(a: V2, b: V2) -> V2 {
    [a[0] - b[0], a[1] - b[1]]
}

#[inline]
fn scale(a: V2, s: f32) -> V2 {
    [a[0] * s, a[1] * s]
}

#[inline]
fn dot(a: V2, b: V2) -> f32 {
    a[0] * b[0] + a[1] * b[1]
}

#[inline]
fn length(a: V2) -> f32 {
    libm::sqrtf(dot(a, a))
}

/// `a` shortened to at most `max` (unchanged when shorter).
#[inline]
fn truncate(a: V2, max: f32) -> V2 {
    let l = length(a);
    if l > max && l > 0.0 {
        scale(a, max / l)
    } else {
        a
    }
}

/// Closest point to `p` on segment `s`.
fn closest_on_segment(p: V2, s: &Segment) -> V2 {
    let ab = sub(s.b, s.a);
    let len2 = dot(ab, ab);
    if len2 <= 0.0 {
        return s.a;
    }
    let t = (dot(sub(p, s.a), ab) / len2).clamp(0.0, 1.0);
    add(s.a, scale(ab, t))
}

/// Wraps an angle into (−π, π].
#[inline]
fn wrap(a: f32) -> f32 {
    use core::f32::consts::{PI, TAU};
    let w = a - TAU * libm::roundf(a / TAU);
    if w <= -PI {
        w + TAU
    } else if w > PI {
        w - TAU
    } else {
        w
    }
}

/// Each obstacle as its closest point to `p` and the radius around that
/// point, for avoidance and projection.
fn for_each_obstacle(obstacles: &Obstacles<'_>, p: V2, mut f: impl FnMut(V2, f32)) {
    for c in obstacles.circles {
        f(c.center, c.radius);
    }
    for s in obstacles.segments {
        f(closest_on_segment(p, s), 0.0);
    }
}

/// Direction from `q` to `p`, or `fallback` when they coincide.
fn away(p: V2, q: V2, fallback: V2) -> (V2, f32) {
    let d = sub(p, q);
    let l = length(d);
    if l > 0.0 {
        (scale(d, 1.0 / l), l)
    } else {
        (fallback, 0.0)
    }
}

fn update<N: Neighbours>(
    agents: &[Agent],
    i: usize,
    neighbours: &N,
    obstacles: &Obstacles<'_>,
    params: &Params,
    dt: f32,
) -> (Agent, f32, StepReport) {
    let Some(&a) = agents.get(i) else {
        return (Agent::default(), 0.0, StepReport::default());
    };
    let p = a.position;
    let v = a.velocity;
    let w = params.weights;
    let tau = params.response_time;

    // Neighbour sums, in increasing neighbour index.
    let mut sep = [0.0f32; 2];
    let mut vel_sum = [0.0f32; 2];
    let mut pos_sum = [0.0f32; 2];
    let mut anticipate = [0.0f32; 2];
    let mut overlap = [0.0f32; 2];
    let mut count = 0u32;
    let k = w.anticipation;
    let inv_tau0 = 1.0 / params.anticipation_time;
    neighbours.each(agents, i, params.neighbour_radius, |j, d2| {
        let Some(b) = agents.get(j) else { return };
        count += 1;
        vel_sum = add(vel_sum, b.velocity);
        pos_sum = add(pos_sum, b.position);
        let x = sub(p, b.position);
        let contact = a.radius + b.radius;
        let reach = contact + params.separation_margin;
        if d2 < reach * reach {
            let d = libm::sqrtf(d2);
            // Coincident agents part along x, the lower index to −x, so
            // the pair stays symmetric.
            let fallback = if i < j { [-1.0, 0.0] } else { [1.0, 0.0] };
            let dir = if d > 0.0 { scale(x, 1.0 / d) } else { fallback };
            let strength = if reach > 0.0 {
                (reach - d) / reach
            } else {
                1.0
            };
            sep = add(sep, scale(dir, strength));
            if d < contact {
                overlap = add(overlap, scale(dir, contact - d));
            }
        }
        // Anticipation: |x + v·t| = contact first at t = τ, the smaller
        // root of a·t² − 2b·t + c, written c / (b + √D) so it stays exact
        // for a small relative speed. Only pairs apart (c > 0), closing
        // (b > 0) and on a collision course (D > 0).
        if k != 0.0 && contact > 0.0 {
            let vr = sub(v, b.velocity);
            let c = d2 - contact * contact;
            let bq = -dot(x, vr);
            if c > 0.0 && bq > 0.0 {
                let disc = bq * bq - dot(vr, vr) * c;
                if disc > 0.0 {
                    let root = libm::sqrtf(disc);
                    // A floor on τ keeps τ⁻³ finite; the cap below binds
                    // long before it.
                    let t = (c / (bq + root)).max(1.0e-3);
                    let inv_t = 1.0 / t;
                    let mag =
                        k * libm::expf(-t * inv_tau0) * inv_t * inv_t * (2.0 * inv_t + inv_tau0)
                            / root;
                    // |x + v·τ| is the contact distance.
                    let mag = mag.min(a.max_force / contact);
                    let f = scale(add(x, scale(vr, t)), mag);
                    // Head on, the force only brakes; a share of it turned
                    // a quarter counter-clockwise sends both agents to
                    // their right, so they pass instead of stalling.
                    let side = params.passing_bias;
                    anticipate = add(anticipate, [f[0] - side * f[1], f[1] + side * f[0]]);
                }
            }
        }
    });
    let mut acc = add(scale(sep, w.separation * a.max_force), anticipate);
    if count > 0 {
        let inv = 1.0 / count as f32;
        let mean_v = scale(vel_sum, inv);
        let centroid = scale(pos_sum, inv);
        acc = add(acc, scale(sub(mean_v, v), w.alignment / tau));
        acc = add(acc, scale(sub(centroid, p), w.cohesion / (tau * tau)));
    }

    // Arrival.
    let to_goal = sub(a.goal, p);
    let dist = length(to_goal);
    let arriving = dist <= params.arrive_distance;
    let desired = if arriving || dist <= 0.0 {
        [0.0, 0.0]
    } else {
        let ramp = if params.slowing_radius > 0.0 {
            (dist / params.slowing_radius).min(1.0)
        } else {
            1.0
        };
        scale(to_goal, a.max_speed * ramp / dist)
    };
    acc = add(acc, scale(sub(desired, v), w.arrival / tau));

    // Obstacles.
    let mut avoid = [0.0f32; 2];
    for_each_obstacle(obstacles, p, |q, r| {
        let (dir, d) = away(p, q, [1.0, 0.0]);
        let clearance = d - r - a.radius;
        if clearance < params.avoid_distance {
            let strength = ((params.avoid_distance - clearance) / params.avoid_distance).min(1.0);
            avoid = add(avoid, scale(dir, strength));
        }
    });
    acc = add(acc, scale(avoid, w.avoidance * a.max_force));
    let acc = truncate(acc, a.max_force);

    // Integrate: top speed, top turn rate, slow while turning. Within
    // the turn limit the velocity keeps the wanted direction, so only an
    // agent turning at the limit needs a sine and cosine.
    let wanted = add(v, scale(acc, dt));
    let wanted_speed = length(wanted);
    let mut speed = wanted_speed.min(a.max_speed);
    let mut heading = a.heading;
    let mut dir = [0.0f32; 2];
    if speed > 0.0 {
        let target = libm::atan2f(wanted[1], wanted[0]);
        let turn = wrap(target - heading);
        let limit = params.max_turn_rate * dt;
        if turn.abs() <= limit {
            heading = wrap(target);
            dir = scale(wanted, 1.0 / wanted_speed);
        } else {
            let turned = if turn > 0.0 { limit } else { -limit };
            heading = wrap(heading + turned);
            speed *= libm::cosf(turn - turned).max(0.0);
            dir = [libm::cosf(heading), libm::sinf(heading)];
        }
    }
    if arriving && speed < params.stop_speed {
        speed = 0.0;
    }
    let velocity = scale(dir, speed);
    let mut position = add(p, scale(velocity, dt));
    position = add(
        position,
        truncate(scale(overlap, 0.5 * params.overlap_resolution), a.radius),
    );

    // Never inside an obstacle: push out to touch it (two passes settle
    // a corner between two obstacles).
    for _ in 0..2 {
        let moved = position;
        for_each_obstacle(obstacles, moved, |q, r| {
            let (dir, d) = away(position, q, [1.0, 0.0]);
            let depth = r + a.radius - d;
            if depth > 0.0 {
                position = add(position, scale(dir, depth));
            }
        });
    }
    let report = StepReport {
        max_neighbours: count,
        arrived: u32::from(length(sub(a.goal, position)) <= params.arrive_distance),
    };
    (
        Agent {
            position,
            velocity,
            heading,
            ..a
        },
        speed,
        report,
    )
}
