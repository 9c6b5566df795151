//! Crowd steering: the grid's counting sort and every agent's update, the
//! whole step and a split one, over buffers sized once.

use sinew_core::steer::{self, Agent, Circle, Grid, Locomotion, Obstacles, Params, Segment};

use crate::frames_allocate_nothing;

/// 512 agents in a 32 × 16 block walking to the mirrored block, between
/// two walls and around a pillar.
pub fn steering_allocates_nothing() {
    let mut agents: Vec<Agent> = (0..512)
        .map(|i| {
            let (x, y) = ((i % 32) as f32 - 40.0, (i / 32) as f32 - 8.0);
            Agent {
                position: [x, y],
                velocity: [0.0, 0.0],
                goal: [-x, y],
                heading: 0.0,
                radius: 0.3,
                max_speed: 1.5,
                max_force: 3.0,
            }
        })
        .collect();
    let mut out = agents.clone();
    let mut loco = vec![Locomotion::default(); agents.len()];
    let n = agents.len();
    let mut starts = vec![0u32; Grid::starts_len(n)];
    let (mut entries, mut keys) = (vec![0u32; n], vec![0u32; n]);
    let circles = [Circle {
        center: [0.0, 0.0],
        radius: 1.0,
    }];
    let segments = [
        Segment {
            a: [-60.0, -10.0],
            b: [60.0, -10.0],
        },
        Segment {
            a: [-60.0, 10.0],
            b: [60.0, 10.0],
        },
    ];
    let obstacles = Obstacles {
        circles: &circles,
        segments: &segments,
    };
    let params = Params::default();
    let mut grid = Grid::new(&mut starts, &mut entries, &mut keys).expect("grid buffers");
    frames_allocate_nothing("steering step", 200, |frame| {
        let report = if frame % 2 == 0 {
            steer::step(
                &agents,
                &mut out,
                &mut loco,
                &mut grid,
                &obstacles,
                &params,
                1.0 / 30.0,
            )?
        } else {
            // The split a thread pool would run.
            grid.build(&agents, params.neighbour_radius)?;
            let (a, b) = out.split_at_mut(n / 2);
            let (la, lb) = loco.split_at_mut(n / 2);
            let dt = 1.0 / 30.0;
            let r = steer::steer_range(&agents, 0, a, la, &grid, &obstacles, &params, dt)?;
            steer::steer_range(&agents, n / 2, b, lb, &grid, &obstacles, &params, dt)?;
            r
        };
        std::mem::swap(&mut agents, &mut out);
        Ok::<f32, sinew_core::Error>(loco[0].speed + report.max_neighbours as f32)
    });
}
