//! Brute-force twin of the steering step: every pair tested, O(n²). The
//! readable specification of the neighbour set and of the summation order
//! (increasing neighbour index), which [`super::step`] reproduces bit for
//! bit through its grid.

use super::grid::within;
use super::{
    check_outputs, run, validate, Agent, Locomotion, Neighbours, Obstacles, Params, StepReport,
};
use crate::Error;

struct Brute;

impl Neighbours for Brute {
    fn each(&self, agents: &[Agent], i: usize, radius: f32, mut f: impl FnMut(usize, f32)) {
        let Some(a) = agents.get(i) else { return };
        let r2 = radius * radius;
        for (j, b) in agents.iter().enumerate() {
            if j != i {
                if let Some(d2) = within(a.position, b.position, r2) {
                    f(j, d2);
                }
            }
        }
    }
}

/// Calls `f(j, d²)` for every agent `j ≠ i` strictly within `radius` of
/// agent `i`, in increasing `j`, by testing them all.
pub fn for_each_neighbour(agents: &[Agent], i: usize, radius: f32, f: impl FnMut(usize, f32)) {
    Brute.each(agents, i, radius, f);
}

/// [`super::step`] with brute-force neighbours.
///
/// # Errors
/// Those of [`super::validate`]; [`Error::BadLength`] when `out` or
/// `locomotion` is not one entry per agent.
pub fn step(
    agents: &[Agent],
    out: &mut [Agent],
    locomotion: &mut [Locomotion],
    obstacles: &Obstacles<'_>,
    params: &Params,
    dt: f32,
) -> Result<StepReport, Error> {
    validate(agents, obstacles, params, dt)?;
    check_outputs(agents.len(), out.len(), locomotion.len())?;
    Ok(run(
        agents, 0, out, locomotion, &Brute, obstacles, params, dt,
    ))
}
