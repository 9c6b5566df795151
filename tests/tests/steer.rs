//! Crowd steering: validity (every bad input gives its error), each rule's
//! closed form, the spatial hash against the brute-force reference (same
//! neighbour sets, same bits; proptest), any split of the agents gives the
//! same bits, speed never exceeds the maximum, obstacles are never
//! penetrated, arrival stops within the stated distance, and 10,000 agents
//! crossing in two groups (collisions and time to goal printed).

use proptest::prelude::*;
use sinew_core::steer::{
    self, reference, steer_range, Agent, Circle, Grid, Locomotion, Obstacles, Params, Segment,
    Weights,
};
use sinew_core::Error;

/// Buffers of a grid for `n` agents with `buckets` buckets.
struct GridBufs {
    starts: Vec<u32>,
    entries: Vec<u32>,
    keys: Vec<u32>,
}

impl GridBufs {
    fn new(n: usize, buckets: usize) -> Self {
        GridBufs {
            starts: vec![0; buckets + 1],
            entries: vec![0; n],
            keys: vec![0; n],
        }
    }
    fn grid(&mut self) -> Grid<'_> {
        Grid::new(&mut self.starts, &mut self.entries, &mut self.keys).unwrap()
    }
}

fn walker(x: f32, y: f32, goal: [f32; 2]) -> Agent {
    Agent {
        position: [x, y],
        velocity: [0.0, 0.0],
        goal,
        heading: 0.0,
        radius: 0.3,
        max_speed: 1.5,
        max_force: 3.0,
    }
}

/// Only `weights`' rules, and no positional overlap resolution.
fn only(weights: Weights) -> Params {
    Params {
        weights,
        overlap_resolution: 0.0,
        ..Params::default()
    }
}

const NONE: Weights = Weights {
    separation: 0.0,
    alignment: 0.0,
    cohesion: 0.0,
    arrival: 0.0,
    avoidance: 0.0,
    anticipation: 0.0,
};

fn step_all(
    agents: &[Agent],
    bufs: &mut GridBufs,
    obstacles: &Obstacles<'_>,
    params: &Params,
    dt: f32,
) -> (Vec<Agent>, Vec<Locomotion>) {
    let mut out = vec![Agent::default(); agents.len()];
    let mut loco = vec![Locomotion::default(); agents.len()];
    steer::step(
        agents,
        &mut out,
        &mut loco,
        &mut bufs.grid(),
        obstacles,
        params,
        dt,
    )
    .unwrap();
    (out, loco)
}

fn bits(a: &Agent) -> [u32; 11] {
    [
        a.position[0],
        a.position[1],
        a.velocity[0],
        a.velocity[1],
        a.goal[0],
        a.goal[1],
        a.heading,
        a.radius,
        a.max_speed,
        a.max_force,
        0.0,
    ]
    .map(f32::to_bits)
}

// ---------------------------------------------------------------------------
// Validity
// ---------------------------------------------------------------------------

#[test]
fn bad_input_gives_errors() {
    let agents = vec![walker(0.0, 0.0, [5.0, 0.0]), walker(1.0, 0.0, [5.0, 0.0])];
    let none = Obstacles::default();
    let p = Params::default();
    let mut bufs = GridBufs::new(2, 2);
    let mut out = vec![Agent::default(); 2];
    let mut loco = vec![Locomotion::default(); 2];
    let mut run = |agents: &[Agent], obstacles: &Obstacles<'_>, p: &Params, dt: f32| {
        steer::step(
            agents,
            &mut out,
            &mut loco,
            &mut bufs.grid(),
            obstacles,
            p,
            dt,
        )
    };
    for dt in [0.0, -1.0, f32::NAN, f32::INFINITY] {
        assert!(matches!(
            run(&agents, &none, &p, dt),
            Err(Error::InvalidParameter { .. })
        ));
    }
    let mut bad = agents.clone();
    bad[1].velocity[0] = f32::NAN;
    assert!(matches!(
        run(&bad, &none, &p, 0.1),
        Err(Error::InvalidAgent { agent: 1, .. })
    ));
    let mut bad = agents.clone();
    bad[0].radius = -0.1;
    assert!(matches!(
        run(&bad, &none, &p, 0.1),
        Err(Error::InvalidAgent { agent: 0, .. })
    ));
    // Separation would reach past the neighbours.
    let mut big = agents.clone();
    big[1].radius = 1.0;
    assert!(matches!(
        run(&big, &none, &p, 0.1),
        Err(Error::InvalidParameter { .. })
    ));
    for broken in [
        Params {
            neighbour_radius: 0.0,
            ..p
        },
        Params {
            response_time: 0.0,
            ..p
        },
        Params {
            max_turn_rate: f32::NAN,
            ..p
        },
        Params {
            avoid_distance: 0.0,
            ..p
        },
        Params {
            arrive_distance: -1.0,
            ..p
        },
        Params {
            anticipation_time: 0.0,
            ..p
        },
        Params {
            overlap_resolution: 1.5,
            ..p
        },
        Params {
            passing_bias: f32::NAN,
            ..p
        },
        Params {
            weights: Weights {
                cohesion: f32::INFINITY,
                ..p.weights
            },
            ..p
        },
    ] {
        assert!(matches!(
            run(&agents, &none, &broken, 0.1),
            Err(Error::InvalidParameter { .. })
        ));
    }
    let circles = [Circle {
        center: [0.0, 0.0],
        radius: -1.0,
    }];
    let obstacles = Obstacles {
        circles: &circles,
        segments: &[],
    };
    assert!(matches!(
        run(&agents, &obstacles, &p, 0.1),
        Err(Error::InvalidAgent { agent: 0, .. })
    ));
    let segments = [Segment {
        a: [0.0, 0.0],
        b: [f32::NAN, 0.0],
    }];
    let obstacles = Obstacles {
        circles: &[],
        segments: &segments,
    };
    assert!(matches!(
        run(&agents, &obstacles, &p, 0.1),
        Err(Error::InvalidAgent { agent: 0, .. })
    ));

    // Sizes.
    let mut small = GridBufs::new(1, 2);
    let mut out = vec![Agent::default(); 2];
    let mut loco = vec![Locomotion::default(); 2];
    assert_eq!(
        steer::step(
            &agents,
            &mut out,
            &mut loco,
            &mut small.grid(),
            &none,
            &p,
            0.1
        ),
        Err(Error::BufferTooSmall {
            needed: 2,
            actual: 1
        })
    );
    let mut bufs = GridBufs::new(2, 2);
    let mut short = vec![Locomotion::default(); 1];
    assert!(matches!(
        steer::step(
            &agents,
            &mut out,
            &mut short,
            &mut bufs.grid(),
            &none,
            &p,
            0.1
        ),
        Err(Error::BadLength {
            buffer: "locomotion",
            ..
        })
    ));
    let (mut s0, mut e, mut k) = (vec![0u32; 1], vec![0u32; 2], vec![0u32; 2]);
    assert!(matches!(
        Grid::new(&mut s0, &mut e, &mut k),
        Err(Error::BadLength { .. })
    ));
    let (mut s, mut e, mut k1) = (vec![0u32; 3], vec![0u32; 2], vec![0u32; 1]);
    assert!(matches!(
        Grid::new(&mut s, &mut e, &mut k1),
        Err(Error::BadLength { .. })
    ));
    // A range on a grid that was never built, or past the end.
    let mut k = vec![0u32; 2];
    let grid = Grid::new(&mut s, &mut e, &mut k).unwrap();
    assert!(matches!(
        steer_range(&agents, 0, &mut out, &mut loco, &grid, &none, &p, 0.1),
        Err(Error::InvalidParameter { .. })
    ));
    let mut grid = grid;
    grid.build(&agents, p.neighbour_radius).unwrap();
    let (mut o1, mut l1) = (vec![Agent::default(); 2], vec![Locomotion::default(); 2]);
    assert!(matches!(
        steer_range(&agents, 1, &mut o1, &mut l1, &grid, &none, &p, 0.1),
        Err(Error::BadLength { .. })
    ));
    assert!(matches!(
        grid.build(&agents, 0.0),
        Err(Error::InvalidParameter { .. })
    ));
    assert!(grid.is_empty());
}

// ---------------------------------------------------------------------------
// Closed forms of the rules
// ---------------------------------------------------------------------------

#[test]
fn two_agents_closer_than_the_separation_radius_push_apart_symmetrically() {
    // Centres 0.5 apart, radii 0.3 and margin 0.3: reach 0.9, so each is
    // pushed at (0.9 − 0.5) / 0.9 · 2 (weight) · 3 (max_force) = 2.6667
    // m/s² away from the other; arrival toward its own position adds
    // nothing from rest. Facing away already, neither needs to turn.
    let p = only(Weights {
        separation: 2.0,
        arrival: 1.0,
        ..NONE
    });
    let mut a = walker(-0.25, 0.0, [-0.25, 0.0]);
    a.heading = core::f32::consts::PI;
    let b = walker(0.25, 0.0, [0.25, 0.0]);
    let mut bufs = GridBufs::new(2, 4);
    let dt = 0.1;
    let (out, loco) = step_all(&[a, b], &mut bufs, &Obstacles::default(), &p, dt);
    let want = (0.9f32 - 0.5) / 0.9 * 2.0 * 3.0 * dt;
    assert!(
        (loco[1].speed - want).abs() < 1e-6,
        "{} vs {want}",
        loco[1].speed
    );
    assert_eq!(loco[0].speed.to_bits(), loco[1].speed.to_bits());
    assert_eq!(out[0].position[0], -out[1].position[0]);
    // sin(π) in f32 is not quite 0.
    assert!(out[0].position[1].abs() < 1e-6 && out[1].position[1] == 0.0);
    assert!((out[1].position[0] - (0.25 + want * dt)).abs() < 1e-6);
    assert_eq!(
        out[0].velocity[0].to_bits(),
        (-out[1].velocity[0]).to_bits()
    );

    // Two agents on the same spot part along x, the lower index to −x.
    let mut c = walker(1.0, 1.0, [1.0, 1.0]);
    let d = c;
    c.heading = core::f32::consts::PI;
    let (out, _) = step_all(&[c, d], &mut bufs, &Obstacles::default(), &p, dt);
    assert!(out[0].position[0] < 1.0 && out[1].position[0] > 1.0);
    assert_eq!(out[0].position[0] - 1.0, 1.0 - out[1].position[0]);

    // Farther apart than the reach: no push.
    let d = walker(-0.5, 0.0, [-0.5, 0.0]);
    let e = walker(0.5, 0.0, [0.5, 0.0]);
    let (_, loco) = step_all(&[d, e], &mut bufs, &Obstacles::default(), &p, dt);
    assert_eq!((loco[0].speed, loco[1].speed), (0.0, 0.0));
}

#[test]
fn alignment_and_cohesion_follow_their_closed_forms() {
    let dt = 0.05;
    // Alignment: a neighbour 1.5 m away moving at (1, 0); from rest the
    // agent accelerates at (1 − 0) · w / τ = 1 · 1 / 0.5 = 2 m/s².
    let p = only(Weights {
        alignment: 1.0,
        ..NONE
    });
    let a = walker(0.0, 0.0, [0.0, 0.0]);
    let mut b = walker(0.0, 1.5, [0.0, 1.5]);
    b.velocity = [1.0, 0.0];
    let mut bufs = GridBufs::new(2, 4);
    let (_, loco) = step_all(&[a, b], &mut bufs, &Obstacles::default(), &p, dt);
    assert!((loco[0].speed - 2.0 * dt).abs() < 1e-6, "{}", loco[0].speed);
    assert_eq!(loco[0].heading, 0.0);
    // Cohesion: a neighbour 1.5 m along +x, the centroid is there; the
    // spring pulls at 1.5 · w / τ² = 1.5 · 0.5 / 0.25 = 3 m/s², the
    // max_force exactly.
    let p = only(Weights {
        cohesion: 0.5,
        ..NONE
    });
    let mut b = walker(1.5, 0.0, [1.5, 0.0]);
    b.heading = core::f32::consts::PI;
    let (out, loco) = step_all(&[a, b], &mut bufs, &Obstacles::default(), &p, dt);
    assert!((loco[0].speed - 3.0 * dt).abs() < 1e-6, "{}", loco[0].speed);
    assert!(out[0].position[0] > 0.0 && out[1].position[0] < 1.5);
}

#[test]
fn a_lone_agent_arrives_and_stops_within_the_arrive_distance() {
    let p = Params::default();
    let mut agents = vec![walker(0.0, 0.0, [10.0, 4.0])];
    agents[0].heading = 2.5; // facing away: it has to turn first
    let mut bufs = GridBufs::new(1, 1);
    let dt = 1.0 / 60.0;
    let mut stopped_at = None;
    for frame in 0..60 * 30 {
        let (out, loco) = step_all(&agents, &mut bufs, &Obstacles::default(), &p, dt);
        assert!(loco[0].speed <= agents[0].max_speed);
        agents = out;
        let g = agents[0].goal;
        let near =
            (agents[0].position[0] - g[0]).hypot(agents[0].position[1] - g[1]) <= p.arrive_distance;
        if loco[0].speed == 0.0 && near && stopped_at.is_none() {
            stopped_at = Some(frame);
        }
        if let Some(f) = stopped_at {
            // Once stopped it stays stopped.
            assert_eq!(
                loco[0].speed, 0.0,
                "moved again at frame {frame} after stopping at {f}"
            );
        }
    }
    let f = stopped_at.expect("never stopped");
    let g = agents[0].goal;
    let d =
        ((agents[0].position[0] - g[0]).powi(2) + (agents[0].position[1] - g[1]).powi(2)).sqrt();
    assert!(d <= p.arrive_distance, "stopped {d} m from the goal");
    // 10.8 m at 1.5 m/s is 7.2 s; turning and slowing add a little.
    let seconds = f as f32 * dt;
    assert!((7.2..12.0).contains(&seconds), "stopped after {seconds} s");
}

#[test]
fn anticipation_brakes_a_head_on_pair_by_the_power_law() {
    // Head on at 1 m/s each, centres 4 m apart, radii 0.3: the gap 3.4 m
    // closes at s = 2 m/s, so τ = 1.7 s, and along the line of centres
    // −∇ₓE = k·e^(−τ/τ₀)·(2/τ + 1/τ₀) / (τ²·s), braking.
    let k = 1.5f64;
    let tau0 = 3.0f64;
    let p = Params {
        anticipation_time: tau0 as f32,
        passing_bias: 0.0,
        ..only(Weights {
            anticipation: k as f32,
            ..NONE
        })
    };
    let mut a = walker(-2.0, 0.0, [-2.0, 0.0]);
    a.velocity = [1.0, 0.0];
    let mut b = walker(2.0, 0.0, [2.0, 0.0]);
    b.velocity = [-1.0, 0.0];
    b.heading = core::f32::consts::PI;
    let dt = 0.05;
    let mut bufs = GridBufs::new(2, 4);
    let far = Params {
        neighbour_radius: 5.0,
        ..p
    };
    let (out, loco) = step_all(&[a, b], &mut bufs, &Obstacles::default(), &far, dt);
    let tau = 1.7f64;
    let want = k * (-tau / tau0).exp() * (2.0 / tau + 1.0 / tau0) / (tau * tau * 2.0);
    assert!((want - 0.2223).abs() < 1e-4, "{want}");
    let got = (1.0 - f64::from(loco[0].speed)) / f64::from(dt);
    assert!((got - want).abs() < 1e-4, "braked at {got}, want {want}");
    assert_eq!(out[0].heading, 0.0);
    assert_eq!(loco[0].speed.to_bits(), loco[1].speed.to_bits());

    // Oblique: the step's acceleration is the central difference of
    // −E(τ(x)) with τ the smaller root of |x + v·t| = r.
    let energy = |x: [f64; 2], v: [f64; 2]| {
        let r = 0.6f64;
        let aa = v[0] * v[0] + v[1] * v[1];
        let bb = x[0] * v[0] + x[1] * v[1];
        let cc = x[0] * x[0] + x[1] * x[1] - r * r;
        let t = (-bb - (bb * bb - aa * cc).sqrt()) / aa;
        k * (-t / tau0).exp() / (t * t)
    };
    let mut a = walker(0.0, 0.0, [0.0, 0.0]);
    a.velocity = [1.0, 0.0];
    let mut b = walker(3.0, 0.4, [3.0, 0.4]);
    b.velocity = [-1.0, 0.0];
    b.heading = core::f32::consts::PI;
    let (out, _) = step_all(&[a, b], &mut bufs, &Obstacles::default(), &far, dt);
    let (x, v) = ([-3.0f64, -0.4], [2.0f64, 0.0]);
    let h = 1e-5;
    let grad = |c: usize| {
        let (mut xp, mut xm) = (x, x);
        xp[c] += h;
        xm[c] -= h;
        -(energy(xp, v) - energy(xm, v)) / (2.0 * h)
    };
    for c in 0..2 {
        let got = (f64::from(out[0].velocity[c]) - [1.0, 0.0][c]) / f64::from(dt);
        assert!(
            (got - grad(c)).abs() < 2e-4,
            "axis {c}: {got} vs {}",
            grad(c)
        );
    }
    // It brakes and steers away from b (below it).
    assert!(grad(0) < 0.0 && grad(1) < 0.0);
}

#[test]
fn overlap_resolution_moves_an_overlapping_pair_apart() {
    // 0.5 apart with radii 0.3: overlap 0.1; resolving all of it moves
    // each 0.05 away, to touching; a fifth of it moves each 0.01.
    let a = walker(-0.25, 0.0, [-0.25, 0.0]);
    let b = walker(0.25, 0.0, [0.25, 0.0]);
    let mut bufs = GridBufs::new(2, 4);
    for (fraction, moved) in [(1.0f32, 0.05f32), (0.2, 0.01)] {
        let p = Params {
            overlap_resolution: fraction,
            ..only(NONE)
        };
        let (out, loco) = step_all(&[a, b], &mut bufs, &Obstacles::default(), &p, 0.1);
        assert!((out[0].position[0] - (-0.25 - moved)).abs() < 1e-6);
        assert!((out[1].position[0] - (0.25 + moved)).abs() < 1e-6);
        assert_eq!(out[0].position[1], 0.0);
        // Not part of the velocity.
        assert_eq!((loco[0].speed, loco[1].speed), (0.0, 0.0));
    }
}

#[test]
fn a_crush_beyond_the_gather_buffer_matches_brute_force() {
    // 200 agents in a 1.5 m square (199 neighbours each, past the
    // 128-entry stack buffer) beside 100 spread out: both query paths
    // give the brute force's neighbours, order and bits.
    let mut seed = 12345u32;
    let mut rand = || {
        seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (seed >> 8) as f32 / (1u32 << 24) as f32
    };
    let mut agents = Vec::new();
    for i in 0..300 {
        let (x, y) = if i % 3 == 0 {
            (10.0 + 30.0 * rand(), 30.0 * rand())
        } else {
            (1.5 * rand(), 1.5 * rand())
        };
        let mut a = walker(x, y, [20.0 * rand(), 20.0 * rand()]);
        a.velocity = [rand() - 0.5, rand() - 0.5];
        a.radius = 0.2;
        agents.push(a);
    }
    let params = Params {
        neighbour_radius: 3.0,
        overlap_resolution: 0.5,
        weights: Weights {
            anticipation: 1.5,
            ..Params::default().weights
        },
        ..Params::default()
    };
    let n = agents.len();
    let mut bufs = GridBufs::new(n, Grid::starts_len(n) - 1);
    let mut grid = bufs.grid();
    grid.build(&agents, params.neighbour_radius).unwrap();
    let mut most = 0;
    for i in 0..n {
        let mut fast = Vec::new();
        grid.for_each_neighbour(&agents, i, |j, d2| fast.push((j, d2.to_bits())));
        let mut slow = Vec::new();
        reference::for_each_neighbour(&agents, i, params.neighbour_radius, |j, d2| {
            slow.push((j, d2.to_bits()))
        });
        most = most.max(slow.len());
        assert_eq!(fast, slow, "agent {i}");
    }
    assert!(most > 128, "{most}");
    let (out, loco) = step_all(&agents, &mut bufs, &Obstacles::default(), &params, 0.05);
    let (mut ref_out, mut ref_loco) = (vec![Agent::default(); n], vec![Locomotion::default(); n]);
    reference::step(
        &agents,
        &mut ref_out,
        &mut ref_loco,
        &Obstacles::default(),
        &params,
        0.05,
    )
    .unwrap();
    for i in 0..n {
        assert_eq!(bits(&out[i]), bits(&ref_out[i]));
        assert_eq!(loco[i], ref_loco[i]);
    }
}

// ---------------------------------------------------------------------------
// Obstacles, speed
// ---------------------------------------------------------------------------

fn clearance(a: &Agent, obstacles: &Obstacles<'_>) -> f32 {
    let mut c = f32::INFINITY;
    let len = |v: [f32; 2]| (v[0] * v[0] + v[1] * v[1]).sqrt();
    for o in obstacles.circles {
        c = c.min(
            len([a.position[0] - o.center[0], a.position[1] - o.center[1]]) - o.radius - a.radius,
        );
    }
    for s in obstacles.segments {
        let ab = [s.b[0] - s.a[0], s.b[1] - s.a[1]];
        let ap = [a.position[0] - s.a[0], a.position[1] - s.a[1]];
        let t = ((ap[0] * ab[0] + ap[1] * ab[1]) / (ab[0] * ab[0] + ab[1] * ab[1])).clamp(0.0, 1.0);
        c = c.min(len([ap[0] - t * ab[0], ap[1] - t * ab[1]]) - a.radius);
    }
    c
}

#[test]
fn a_corridor_with_pillars_is_never_penetrated() {
    // A corridor 3 m wide along x with pillars; 40 agents start at the
    // left in two columns and go to the right end, some goals placed
    // inside a pillar so agents press against it.
    let segments = [
        Segment {
            a: [-2.0, -1.5],
            b: [30.0, -1.5],
        },
        Segment {
            a: [-2.0, 1.5],
            b: [30.0, 1.5],
        },
        Segment {
            a: [-2.0, -1.5],
            b: [-2.0, 1.5],
        },
    ];
    let circles = [
        Circle {
            center: [6.0, 0.0],
            radius: 0.6,
        },
        Circle {
            center: [12.0, 0.8],
            radius: 0.5,
        },
        Circle {
            center: [18.0, -0.7],
            radius: 0.5,
        },
        Circle {
            center: [24.0, 0.0],
            radius: 0.7,
        },
    ];
    let obstacles = Obstacles {
        circles: &circles,
        segments: &segments,
    };
    let mut agents: Vec<Agent> = (0..40)
        .map(|i| {
            let goal = if i % 5 == 0 {
                [24.0, 0.0]
            } else {
                [28.0, (i % 3) as f32 - 1.0]
            };
            walker(
                -1.0 + (i / 2) as f32 * 0.7,
                if i % 2 == 0 { -0.6 } else { 0.6 },
                goal,
            )
        })
        .collect();
    let p = Params::default();
    let mut bufs = GridBufs::new(agents.len(), agents.len());
    let steps = 2400;
    let mut worst = f32::INFINITY;
    for _ in 0..steps {
        let (out, loco) = step_all(&agents, &mut bufs, &obstacles, &p, 1.0 / 60.0);
        for (a, l) in out.iter().zip(&loco) {
            worst = worst.min(clearance(a, &obstacles));
            assert!(l.speed <= a.max_speed);
        }
        agents = out;
    }
    assert!(
        worst >= -1e-4,
        "an agent went {} m into an obstacle",
        -worst
    );
    // They got somewhere: most are past the last pillar.
    let past = agents.iter().filter(|a| a.position[0] > 20.0).count();
    assert!(
        past >= 30,
        "only {past} of 40 past x = 20 after {steps} steps"
    );
}

fn arb_agent(extent: f32) -> impl Strategy<Value = Agent> {
    (
        (-extent..extent, -extent..extent),
        (-2.0f32..2.0, -2.0f32..2.0),
        (-extent..extent, -extent..extent),
        -3.2f32..3.2,
        0.0f32..0.5,
        0.0f32..3.0,
        0.0f32..5.0,
    )
        .prop_map(|(p, v, g, h, r, s, f)| Agent {
            position: [p.0, p.1],
            velocity: [v.0, v.1],
            goal: [g.0, g.1],
            heading: h,
            radius: r,
            max_speed: s,
            max_force: f,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// The grid finds exactly the brute force's neighbours, in the same
    /// order, for any bucket count (one bucket: every cell collides), and
    /// a step through it gives the reference's bits.
    #[test]
    fn the_hash_agrees_with_brute_force(
        agents in prop::collection::vec(arb_agent(8.0), 0..60),
        far in prop::collection::vec(arb_agent(1.0e4), 0..8),
        buckets in 1usize..80,
        radius in 0.3f32..4.0,
        dt in 0.001f32..0.2,
    ) {
        let mut agents = agents;
        agents.extend(far);
        let mut bufs = GridBufs::new(agents.len(), buckets);
        let mut grid = bufs.grid();
        grid.build(&agents, radius).unwrap();
        for i in 0..agents.len() {
            let mut fast = Vec::new();
            grid.for_each_neighbour(&agents, i, |j, d2| fast.push((j, d2.to_bits())));
            let mut slow = Vec::new();
            reference::for_each_neighbour(&agents, i, radius, |j, d2| slow.push((j, d2.to_bits())));
            prop_assert_eq!(fast, slow);
        }
        let params = Params {
            neighbour_radius: 2.0 * 0.5 + 0.3 + radius,
            overlap_resolution: 0.3,
            weights: Weights { anticipation: 1.5, ..Params::default().weights },
            ..Params::default()
        };
        let circles = [Circle { center: [1.0, 1.0], radius: 0.5 }];
        // Apart by more than any agent's diameter, so an agent can always
        // stand clear of both.
        let segments = [Segment { a: [-3.0, 4.0], b: [3.0, 4.5] }];
        let obstacles = Obstacles { circles: &circles, segments: &segments };
        let n = agents.len();
        let (mut out, mut loco) = (vec![Agent::default(); n], vec![Locomotion::default(); n]);
        steer::step(&agents, &mut out, &mut loco, &mut bufs.grid(), &obstacles, &params, dt).unwrap();
        let (mut ref_out, mut ref_loco) = (vec![Agent::default(); n], vec![Locomotion::default(); n]);
        reference::step(&agents, &mut ref_out, &mut ref_loco, &obstacles, &params, dt).unwrap();
        for i in 0..n {
            prop_assert_eq!(bits(&out[i]), bits(&ref_out[i]));
            prop_assert_eq!(loco[i].speed.to_bits(), ref_loco[i].speed.to_bits());
            prop_assert_eq!(loco[i].heading.to_bits(), ref_loco[i].heading.to_bits());
            // Speed never exceeds the maximum, and the velocity is the
            // locomotion's speed along its heading.
            prop_assert!(loco[i].speed <= agents[i].max_speed);
            let v = out[i].velocity;
            prop_assert!((v[0] * v[0] + v[1] * v[1]).sqrt() <= agents[i].max_speed * (1.0 + 1e-6));
            prop_assert!(loco[i].heading > -core::f32::consts::PI - 1e-6 && loco[i].heading <= core::f32::consts::PI + 1e-6);
            // The turn is limited.
            let turn = (out[i].heading - agents[i].heading).rem_euclid(core::f32::consts::TAU);
            let turn = turn.min(core::f32::consts::TAU - turn);
            prop_assert!(turn <= params.max_turn_rate * dt * (1.0 + 1e-4) + 1e-5, "turned {turn}");
            prop_assert!(clearance(&out[i], &obstacles) >= -1e-4);
        }
    }

    /// Any split of the agents into ranges gives the whole step's bits.
    #[test]
    fn any_split_gives_the_same_bits(
        agents in prop::collection::vec(arb_agent(6.0), 1..50),
        cut in 0usize..50,
    ) {
        let n = agents.len();
        let cut = cut.min(n);
        let params = Params {
            overlap_resolution: 0.3,
            weights: Weights { anticipation: 1.5, ..Params::default().weights },
            ..Params::default()
        };
        let none = Obstacles::default();
        let mut bufs = GridBufs::new(n, n);
        let (mut whole, mut wl) = (vec![Agent::default(); n], vec![Locomotion::default(); n]);
        steer::step(&agents, &mut whole, &mut wl, &mut bufs.grid(), &none, &params, 0.05).unwrap();
        let mut grid = bufs.grid();
        grid.build(&agents, params.neighbour_radius).unwrap();
        let (mut parts, mut pl) = (vec![Agent::default(); n], vec![Locomotion::default(); n]);
        let (a, b) = parts.split_at_mut(cut);
        let (la, lb) = pl.split_at_mut(cut);
        // The second half first: the order does not matter either.
        steer_range(&agents, cut, b, lb, &grid, &none, &params, 0.05).unwrap();
        steer_range(&agents, 0, a, la, &grid, &none, &params, 0.05).unwrap();
        for i in 0..n {
            prop_assert_eq!(bits(&whole[i]), bits(&parts[i]));
            prop_assert_eq!(wl[i], pl[i]);
        }
    }
}

// ---------------------------------------------------------------------------
// 10,000 agents crossing
// ---------------------------------------------------------------------------

/// Two groups of 5,000 in 100 × 50 blocks 40 m apart swap sides. Prints
/// the collisions (pairs closer than the sum of radii, counted per step)
/// and the time each agent took to reach its goal. About ten minutes in a
/// debug build, so it runs on request:
/// `cargo test --release -p sinew-tests --test steer -- --ignored --nocapture`.
#[test]
#[ignore = "10,000 agents for 1,500 steps: run in release with --ignored"]
fn ten_thousand_agents_cross_in_two_groups() {
    let spacing = 1.0;
    let mut agents = Vec::with_capacity(10_000);
    for side in [-1.0f32, 1.0] {
        for row in 0..100 {
            for col in 0..50 {
                let x = side * (20.0 + col as f32 * spacing);
                let y = (row as f32 - 49.5) * spacing;
                let mut a = walker(x, y, [-x, y]);
                a.heading = if side < 0.0 {
                    0.0
                } else {
                    core::f32::consts::PI
                };
                agents.push(a);
            }
        }
    }
    let n = agents.len();
    let mut params = Params::default();
    // `STEER_ANTICIPATION=1.5` (a weight) runs the crossing with
    // anticipation, a fifth of each overlap resolved per step.
    if let Some(k) = std::env::var("STEER_ANTICIPATION")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        params.weights.anticipation = k;
        params.overlap_resolution = 0.2;
    }
    let none = Obstacles::default();
    let mut bufs = GridBufs::new(n, Grid::starts_len(n) - 1);
    let (mut out, mut loco) = (vec![Agent::default(); n], vec![Locomotion::default(); n]);
    let dt = 0.1;
    let mut arrived_at = vec![f32::NAN; n];
    let mut collisions = 0u64;
    let mut worst_overlap = 0.0f32;
    let started = std::time::Instant::now();
    let mut steps = 0;
    let mut collision_grid = GridBufs::new(n, n);
    while steps < 1500 {
        let report = steer::step(
            &agents,
            &mut out,
            &mut loco,
            &mut bufs.grid(),
            &none,
            &params,
            dt,
        )
        .unwrap();
        std::mem::swap(&mut agents, &mut out);
        steps += 1;
        let t = steps as f32 * dt;
        for (i, a) in agents.iter().enumerate() {
            let d =
                ((a.position[0] - a.goal[0]).powi(2) + (a.position[1] - a.goal[1]).powi(2)).sqrt();
            if arrived_at[i].is_nan() && d <= params.arrive_distance {
                arrived_at[i] = t;
            }
        }
        // Collisions through the grid (every pair within 2 · radius).
        let mut g = collision_grid.grid();
        g.build(&agents, 0.6).unwrap();
        for i in 0..n {
            g.for_each_neighbour(&agents, i, |j, d2| {
                let reach = agents[i].radius + agents[j].radius;
                if j > i && d2 < reach * reach {
                    collisions += 1;
                    worst_overlap = worst_overlap.max(reach - d2.sqrt());
                }
            });
        }
        if report.arrived as usize == n {
            break;
        }
    }
    let done: Vec<f32> = arrived_at.iter().copied().filter(|t| !t.is_nan()).collect();
    let mean = done.iter().sum::<f32>() / done.len().max(1) as f32;
    let last = done.iter().copied().fold(0.0f32, f32::max);
    eprintln!(
        "crossing: {n} agents, {steps} steps of {dt} s ({:.1} s simulated) in {:.1} s (this build): \
         {} reached their goals (mean {mean:.1} s, last {last:.1} s; straight walk 40-89 m at 1.5 m/s = 27-59 s); \
         {collisions} colliding pair-steps, deepest overlap {:.3} m",
        steps as f32 * dt,
        started.elapsed().as_secs_f32(),
        done.len(),
        worst_overlap
    );
    assert!(
        done.len() * 10 >= n * 9,
        "only {} of {n} arrived",
        done.len()
    );
    assert!(agents
        .iter()
        .all(|a| a.position.iter().all(|x| x.is_finite())));
}
