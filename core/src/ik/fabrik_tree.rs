//! FABRIK with several end effectors: a tree of chains that share joints
//! (a spine with two arms, a hand with several fingertips), after
//! Aristidou and Lasenby (2011), "FABRIK", section on multiple end
//! effectors.
//!
//! The tree is a list of [`Branch`]es, each a parent-to-child chain of
//! joints with one effector at its end. The first branch starts at the
//! tree's root; every later branch starts at a joint of an earlier branch,
//! its *sub-base*, and goes on with joints that are not yet in the tree (a
//! branch of the sub-base alone puts one more effector on that joint).
//!
//! One iteration is a backward pass from the effectors to the root, a
//! forward pass from the root out through every branch and, in a tree of
//! several branches, a turn of the joints they share:
//!
//! - backward: each effector on its target, then each joint on the line to
//!   its child at the bone's length, as in [`super::fabrik`]. A joint with
//!   several children pulling at it (a sub-base) is placed from all of
//!   them, each weighted by the sum of the branch weights below it: the
//!   paper puts it at the centroid of the positions its children ask for;
//!   here its children are rigid in its frame (shoulders at their offsets
//!   on a chest), so the frame goes where its bones best match its
//!   children's positions (weighted least squares over a rotation about
//!   their centroid and a translation), which is the paper's centroid when
//!   the children sit at the joint. The pass goes on towards the root from
//!   there.
//! - forward, in rotations: the root stays at its base; a joint with one
//!   bone turns it by the shortest arc towards the backward position of its
//!   child (exactly as [`super::fabrik`] does); a joint with several turns
//!   by the rotation that brings its children closest to their backward
//!   positions (the same weights), found by turning from its current
//!   rotation, so that it keeps its twist where its children leave it
//!   free. Then the joint's limit, and its children at the ends of the
//!   limited bones.
//! - the shared joints (the sub-bases and the joints between them and the
//!   root), last first, each turned (then limited) by the rotation that
//!   brings the effectors below it closest to their targets: a step of
//!   multi-effector CCD, which before the limit never increases their
//!   weighted sum of squared distances. The passes alone can settle into
//!   a compromise short of targets the tree can meet (their fixed points
//!   need not be solutions when a sub-base's children sit at rigid
//!   offsets, and random Y trees with targets from random poses of
//!   theirs find such a compromise a few times in a thousand); the turn
//!   moves the tree out of most of them and speeds convergence. Once an
//!   iteration makes no progress, the remaining ones are such CCD sweeps
//!   over every joint of the tree.
//!
//! So positions and local rotations stay consistent and within the limits
//! after every step, and the sub-base of branches pulled apart ends between
//! them, where the weights balance. A branch of weight 0 does not pull its
//! sub-base (nor anything nearer the root): it reaches with its own joints
//! only, as far as they go. A tree of one branch is a chain and is solved
//! exactly as [`super::fabrik::solve`] solves it.
//!
//! Convergence: for Y trees of one to three bones from the root to the
//! sub-base and in each branch, and targets that a pose of the tree meets
//! with no effector beyond 90 % of the reach of its branch or of its path
//! from the root, the effectors are within 1e-3 after 3 or 4 iterations
//! (median), 15 (99th percentile), and in tens of thousands of random
//! trials never more than about 60. Targets that need a branch nearly
//! straight converge slowly, as they do for a chain (up to thousands of
//! iterations), and a tree whose sub-base hangs on a single bone and whose
//! branches end at their tip joints after single bones is stiff: for a few
//! poses in a thousand it settles short.
//!
//! The working state (up to [`MAX_CHAIN`] joints and [`MAX_BRANCHES`]
//! effectors) lives on the stack, about 4 KB.

use super::fabrik::{aim_bone, pull};
use super::limits::JointLimit;
use super::solve::{
    bone_length, check_goal, check_links, check_tolerance, dead_end_bend, gained_little, limit_of,
    limited, write_back, MAX_CHAIN,
};
use super::IkPose;
use crate::math::{Quat, Vec3};
use crate::Error;

/// The most branches (and so effectors) a tree takes: 8.
pub const MAX_BRANCHES: usize = 8;

/// Joints and effectors of a tree.
const NODES: usize = MAX_CHAIN + MAX_BRANCHES;

/// No node (the root's parent, the end of a child list).
const NONE: u8 = u8::MAX;

/// Most turns of the rotation fit at a joint with several bones.
const FIT_STEPS: usize = 16;

/// A fit turn below this angle (radians) ends the fit.
const FIT_SETTLED: f32 = 1e-6;

/// One branch of a tree: a chain of joints and the goal of the effector
/// at its end.
///
/// The effector is the point `offset` in the last joint's local space (the
/// joint's origin when `offset` is zero) and should go to `target` (model
/// space, the space of the pose's matrices).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Branch<'c> {
    /// The joints, root side first, each the parent of the next (as
    /// [`super::chain`] writes them). The first branch's first joint is the
    /// tree's root; any other branch's first joint is its sub-base, a joint
    /// of an earlier branch, and the rest are joints on no earlier branch.
    /// At least one joint.
    pub joints: &'c [u16],
    /// Where the effector should go, model space.
    pub target: Vec3,
    /// The effector in the last joint's local space (its unit, scale
    /// included); zero by default.
    pub offset: Vec3,
    /// How hard the branch pulls at its sub-base (and the joints nearer the
    /// root) against the other branches: finite and `>= 0`, relative to the
    /// other branches' weights; 1 by default. A branch of weight 0 does not
    /// pull them at all (unless no branch below them has a weight).
    pub weight: f32,
}

impl<'c> Branch<'c> {
    /// A branch of `joints` whose end should go to `target`, no offset,
    /// weight 1.
    #[inline]
    #[must_use]
    pub fn new(joints: &'c [u16], target: Vec3) -> Self {
        Branch {
            joints,
            target,
            offset: Vec3::ZERO,
            weight: 1.0,
        }
    }

    /// The same branch with an effector offset (last joint's local space).
    #[inline]
    #[must_use]
    pub fn with_offset(self, offset: Vec3) -> Self {
        Branch { offset, ..self }
    }

    /// The same branch with another weight.
    #[inline]
    #[must_use]
    pub fn with_weight(self, weight: f32) -> Self {
        Branch { weight, ..self }
    }
}

/// A tree of branches and how long to iterate, for [`solve`].
///
/// The tree's joints, in *tree order*, are the first branch's joints, then
/// each later branch's joints after its sub-base: `limits` follows that
/// order. So a tree has `Σ joints.len() − (branches − 1)` joints.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TreeJob<'c> {
    /// The branches, 1 to [`MAX_BRANCHES`]; at most [`MAX_CHAIN`] joints
    /// in all.
    pub branches: &'c [Branch<'c>],
    /// Limits, one per tree joint in tree order, or empty for none.
    pub limits: &'c [JointLimit],
    /// Most iterations (backward and forward pass) to run; 0 only applies
    /// the limits. 16 by default.
    pub max_iterations: u32,
    /// Stop when every effector is within this distance of its target
    /// (model units, `>= 0`); 1e-3 by default.
    pub tolerance: f32,
}

impl<'c> TreeJob<'c> {
    /// A job for the tree of `branches`, no limits, at most 16 iterations,
    /// tolerance 1e-3.
    #[inline]
    #[must_use]
    pub fn new(branches: &'c [Branch<'c>]) -> Self {
        TreeJob {
            branches,
            limits: &[],
            max_iterations: 16,
            tolerance: 1e-3,
        }
    }

    /// The same job with per-joint limits (one per tree joint, tree order).
    #[inline]
    #[must_use]
    pub fn with_limits(self, limits: &'c [JointLimit]) -> Self {
        TreeJob { limits, ..self }
    }

    /// The same job with another iteration limit and tolerance.
    #[inline]
    #[must_use]
    pub fn with_iterations(self, max_iterations: u32, tolerance: f32) -> Self {
        TreeJob {
            max_iterations,
            tolerance,
            ..self
        }
    }
}

/// What a tree solve did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TreeReport {
    /// Iterations run (0 when every effector started within the tolerance).
    pub iterations: u32,
    /// Distance from each branch's effector to its target after the solve,
    /// in branch order, read from the updated model matrices (model units);
    /// entries past [`TreeReport::effectors`] are 0.
    pub distance: [f32; MAX_BRANCHES],
    /// How many effectors (branches) the tree has.
    pub effectors: usize,
    /// True when every effector met its target within the tolerance, as
    /// measured on the solver's own copy of the tree (which agrees with
    /// `distance` to float rounding; see [`super::IkReport::reached`]).
    pub reached: bool,
}

impl TreeReport {
    /// The distances of the tree's effectors to their targets, in branch
    /// order.
    #[inline]
    #[must_use]
    pub fn distances(&self) -> &[f32] {
        &self.distance[..self.effectors.min(MAX_BRANCHES)]
    }

    /// The largest of [`TreeReport::distances`].
    #[inline]
    #[must_use]
    pub fn max_distance(&self) -> f32 {
        self.distances().iter().fold(0.0, |a, &d| a.max(d))
    }
}

/// Solves `job` by multi-effector FABRIK on `pose`: iterations until every
/// effector is within `job.tolerance` of its target or
/// `job.max_iterations` have run; writes the local rotations of the tree's
/// joints and updates the model matrices of the subtree under its root.
/// Joints outside the tree are not written. Joints with limits end within
/// them, even when no iteration runs. Zero-length bones keep their
/// rotation, limited.
///
/// Targets that no pose of the tree meets at once (or that the limits keep
/// it from) give a compromise, and all iterations run. A tree of one branch
/// takes [`super::fabrik::solve`]'s reachability test (a target beyond the
/// chain's reach gives the straight chain in one iteration); a branch
/// stuck on the line to its target gets the same small bend as a chain
/// does, in a tree of several branches only when no effector makes
/// progress, and at most once per tree joint per solve.
///
/// # Errors
/// Nothing is written on error.
/// [`Error::InvalidParameter`] for no branches, a branch without joints, a
/// branch in which a joint is not the parent of the next, a later branch
/// whose first joint is on no earlier branch or whose other joints are on
/// an earlier branch, a negative or non-finite weight or tolerance, or a
/// tree whose bones and offsets have zero total length;
/// [`Error::CapacityExceeded`] for more than [`MAX_BRANCHES`] branches or
/// more than [`MAX_CHAIN`] joints; [`Error::JointOutOfRange`] for a joint
/// past the skeleton; [`Error::NonFinite`] for a non-finite target or
/// offset (or non-finite matrices along the tree); [`Error::BadLength`]
/// when `job.limits` is neither empty nor one per tree joint.
pub fn solve(pose: &mut IkPose<'_, '_>, job: &TreeJob<'_>) -> Result<TreeReport, Error> {
    let mut s = TreeState::new(pose, job)?;
    let (n, m) = (s.joints, s.effectors);
    let base = s.pos[0];
    let mut iterations = 0;
    if m == 1 && job.max_iterations > 0 && (s.target[0] - base).length() >= s.reach[0] {
        // A chain and a target out of its reach (or just in it): the
        // straight chain, as `fabrik::solve` gives it. `reach > 0` (the
        // tree has length and one path), so the direction exists.
        let dir = (s.target[0] - base).try_normalize().unwrap_or(Vec3::X);
        let mut p = s.pos;
        for c in 1..=n {
            p[c] = p[c - 1] + dir * s.len[c];
        }
        forward(&mut s, &p, job.limits);
        iterations = 1;
    } else {
        let mut distance = [0.0f32; MAX_BRANCHES];
        for (k, d) in distance.iter_mut().enumerate().take(m) {
            *d = s.distance(k);
        }
        while iterations < job.max_iterations && distance[..m].iter().any(|&d| d > job.tolerance) {
            if s.sweeping {
                s.ccd_sweep(job.limits, false);
            } else {
                let mut p = s.pos;
                backward(&s, &mut p);
                forward(&mut s, &p, job.limits);
                if m > 1 {
                    s.ccd_sweep(job.limits, true);
                }
            }
            iterations += 1;
            s.distances_after_step(&mut distance, job.tolerance, job.limits);
        }
    }
    s.commit(pose, job, iterations)
}

/// The tree copied out of the pose. Nodes `0 .. joints` are the tree's
/// joints in tree order (so each after its parent, the root first), nodes
/// `joints .. joints + effectors` the effectors in branch order. For a
/// single branch this is `ChainState`'s layout, with each bone stored at
/// its child rather than at its joint.
struct TreeState {
    joints: usize,
    effectors: usize,
    /// Skeleton index of each joint.
    skel: [u16; MAX_CHAIN],
    /// Model rotation of the root's parent frame.
    parent: Quat,
    /// Local rotations.
    local: [Quat; MAX_CHAIN],
    /// Model rotations.
    rot: [Quat; MAX_CHAIN],
    /// The joint each node hangs off ([`NONE`] for the root).
    up: [u8; NODES],
    /// The bone from `up[c]` to node `c`, in `up[c]`'s rotated frame:
    /// `pos[c] = pos[up[c]] + rot[up[c]] · link[c]`.
    link: [Vec3; NODES],
    /// Bone lengths (0 for a zero-length bone).
    len: [f32; NODES],
    /// Sum of the (normalised) branch weights at and below each node.
    weight: [f32; NODES],
    /// First child of each joint, then the next of the same joint: child
    /// lists in node order.
    child: [u8; MAX_CHAIN],
    sibling: [u8; NODES],
    /// Node positions.
    pos: [Vec3; NODES],
    /// Each effector's target.
    target: [Vec3; MAX_BRANCHES],
    /// The length of each effector's path from the root.
    reach: [f32; MAX_BRANCHES],
    /// Bit `k` set for the joints on effector `k`'s path.
    below: [u8; MAX_CHAIN],
    /// Bends made by [`TreeState::unstall`].
    unstalls: u32,
    /// Set once the passes make no more progress: the remaining
    /// iterations are CCD sweeps.
    sweeping: bool,
}

impl TreeState {
    /// Validates the job against the pose and copies the tree out, with the
    /// limits applied to its local rotations.
    fn new(pose: &IkPose<'_, '_>, job: &TreeJob<'_>) -> Result<TreeState, Error> {
        let branches = job.branches;
        let m = branches.len();
        if m == 0 {
            return Err(Error::InvalidParameter {
                what: "IK tree: the tree has no branches",
            });
        }
        if m > MAX_BRANCHES {
            return Err(Error::CapacityExceeded {
                capacity: MAX_BRANCHES,
            });
        }
        let mut n = 0usize;
        let mut heaviest = 0.0f32;
        for (k, b) in branches.iter().enumerate() {
            if b.joints.is_empty() {
                return Err(Error::InvalidParameter {
                    what: "IK tree: a branch has no joints",
                });
            }
            check_goal(b.target, b.offset)?;
            if !(b.weight >= 0.0 && b.weight.is_finite()) {
                return Err(Error::InvalidParameter {
                    what: "IK tree: a branch weight must be finite and >= 0",
                });
            }
            heaviest = heaviest.max(b.weight);
            // A later branch's first joint is its sub-base, already counted.
            n = n.saturating_add(b.joints.len() - usize::from(k > 0));
        }
        check_tolerance(job.tolerance)?;
        if n > MAX_CHAIN {
            return Err(Error::CapacityExceeded {
                capacity: MAX_CHAIN,
            });
        }
        if !job.limits.is_empty() && job.limits.len() != n {
            return Err(Error::BadLength {
                buffer: "joint limits",
                expected: n,
                actual: job.limits.len(),
            });
        }
        for b in branches {
            check_links(pose, b.joints)?;
        }

        let mut s = TreeState {
            joints: n,
            effectors: m,
            skel: [0; MAX_CHAIN],
            parent: Quat::IDENTITY,
            local: [Quat::IDENTITY; MAX_CHAIN],
            rot: [Quat::IDENTITY; MAX_CHAIN],
            up: [NONE; NODES],
            link: [Vec3::ZERO; NODES],
            len: [0.0; NODES],
            weight: [0.0; NODES],
            child: [NONE; MAX_CHAIN],
            sibling: [NONE; NODES],
            pos: [Vec3::ZERO; NODES],
            target: [Vec3::ZERO; MAX_BRANCHES],
            reach: [0.0; MAX_BRANCHES],
            below: [0; MAX_CHAIN],
            unstalls: 0,
            sweeping: false,
        };

        // The nodes and the joint each hangs off.
        let mut count = 0;
        for (k, b) in branches.iter().enumerate() {
            // The first branch starts the tree at its root; a later one
            // hangs its own joints off its sub-base.
            let (mut prev, own) = match b.joints.split_first() {
                Some((sub, rest)) if k > 0 => {
                    let at = s.skel[..count].iter().position(|j| j == sub).ok_or(
                        Error::InvalidParameter {
                            what: "IK tree: a branch must start at a joint of an earlier branch",
                        },
                    )?;
                    (at as u8, rest)
                }
                _ => (NONE, b.joints),
            };
            for &j in own {
                if s.skel[..count].contains(&j) {
                    return Err(Error::InvalidParameter {
                        what: "IK tree: a joint is on two branches",
                    });
                }
                s.skel[count] = j;
                s.up[count] = prev;
                prev = count as u8;
                count += 1;
            }
            s.up[n + k] = prev;
            s.target[k] = b.target;
            // Normalised so that sums of weights cannot overflow.
            s.weight[n + k] = if heaviest > 0.0 {
                b.weight / heaviest
            } else {
                0.0
            };
        }
        debug_assert_eq!(count, n);
        for c in (1..n + m).rev() {
            let v = usize::from(s.up[c]);
            s.sibling[c] = s.child[v];
            s.child[v] = c as u8;
            s.weight[v] += s.weight[c];
        }

        // The pose, as `ChainState::new` copies it.
        for v in 0..n {
            let j = usize::from(s.skel[v]);
            s.local[v] = pose.local(j)?.rotation.normalize();
            s.pos[v] = pose.models[j].translation();
        }
        for (k, b) in branches.iter().enumerate() {
            if let Some(&last) = b.joints.last() {
                s.pos[n + k] = pose.models[usize::from(last)].transform_point(b.offset);
            }
        }
        s.parent =
            (pose.models[usize::from(s.skel[0])].rotation() * s.local[0].conjugate()).normalize();
        for v in 0..n {
            let parent = match s.up[v] {
                NONE => s.parent,
                u => s.rot[usize::from(u)],
            };
            s.rot[v] = parent * s.local[v];
        }
        let mut total = 0.0;
        for c in 1..n + m {
            let v = usize::from(s.up[c]);
            let b = s.pos[c] - s.pos[v];
            s.len[c] = bone_length(b, s.pos[v]);
            s.link[c] = s.rot[v].conjugate().rotate(b);
            total += s.len[c];
        }
        let finite = s.parent.is_finite()
            && s.pos[..n + m].iter().all(|p| p.is_finite())
            && s.rot[..n].iter().all(|q| q.is_finite());
        if !finite {
            return Err(Error::NonFinite {
                what: "IK tree pose",
            });
        }
        if total == 0.0 {
            return Err(Error::InvalidParameter {
                what: "IK tree: the bones and the effector offsets have zero total length",
            });
        }
        for k in 0..m {
            let mut path = [0u8; MAX_CHAIN + 1];
            let path = s.path(n + k, &mut path);
            s.reach[k] = path.iter().skip(1).map(|&c| s.len[usize::from(c)]).sum();
            for &v in path.iter().filter(|&&v| usize::from(v) < n) {
                s.below[usize::from(v)] |= 1 << k;
            }
        }
        if !job.limits.is_empty() {
            for v in 0..n {
                s.local[v] = job.limits[v].project(s.local[v]);
            }
            s.fk_from(0);
        }
        Ok(s)
    }

    /// The nodes from the root to `node`, root first, written into `out`.
    fn path<'o>(&self, node: usize, out: &'o mut [u8; MAX_CHAIN + 1]) -> &'o [u8] {
        // At most MAX_CHAIN joints and the node: the walk ends at the root.
        let mut len = 0;
        let mut c = node as u8;
        while c != NONE && len < out.len() {
            out[len] = c;
            len += 1;
            c = self.up[usize::from(c)];
        }
        let out = &mut out[..len];
        out.reverse();
        out
    }

    /// Effector `k`'s distance to its target.
    fn distance(&self, k: usize) -> f32 {
        (self.pos[self.joints + k] - self.target[k]).length()
    }

    /// FK over joint `v`'s subtree within the tree: model rotations of `v`
    /// and the joints below it, positions of the nodes below it.
    fn fk_from(&mut self, v: usize) {
        let parent = match self.up[v] {
            NONE => self.parent,
            u => self.rot[usize::from(u)],
        };
        self.rot[v] = parent * self.local[v];
        let mut below = [false; NODES];
        below[v] = true;
        for c in v + 1..self.joints + self.effectors {
            let u = usize::from(self.up[c]);
            if !below[u] {
                continue;
            }
            below[c] = true;
            self.pos[c] = self.pos[u] + self.rot[u].rotate(self.link[c]);
            if c < self.joints {
                self.rot[c] = self.rot[u] * self.local[c];
            }
        }
    }

    /// Turns joint `v` by `delta` (model space, about the joint), applies
    /// its limit and updates the tree below it.
    fn rotate_model(&mut self, v: usize, delta: Quat, limit: Option<&JointLimit>) {
        let r = self.rot[v];
        self.local[v] = limited(self.local[v] * (r.conjugate() * delta * r), limit);
        self.fk_from(v);
    }

    /// Updates `distance` after an iteration; an effector that was off its
    /// target and gained little may be stuck on a collinear dead end, and
    /// its path gets a bend ([`TreeState::unstall`]). In a tree of one
    /// branch this is `ChainState::distance_after_step`; with several, a
    /// bend waits until no effector off its target makes progress (a
    /// compromise between branches can look like a dead end for one of
    /// them), and the bends of a solve are at most one per tree joint.
    fn distances_after_step(
        &mut self,
        distance: &mut [f32; MAX_BRANCHES],
        tolerance: f32,
        limits: &[JointLimit],
    ) {
        let m = self.effectors;
        let last = *distance;
        let mut stuck = [false; MAX_BRANCHES];
        let mut progress = false;
        for k in 0..m {
            distance[k] = self.distance(k);
            stuck[k] =
                last[k] > tolerance && gained_little(last[k], distance[k], 1e-6 * self.reach[k]);
            progress |= last[k] > tolerance && !stuck[k];
        }
        if m > 1 && progress {
            return;
        }
        if m == 1 || self.unstalls < self.joints as u32 {
            for (k, &stuck) in stuck.iter().enumerate().take(m) {
                if stuck && self.unstall(k, limits) {
                    for (j, d) in distance.iter_mut().enumerate().take(m) {
                        *d = self.distance(j);
                    }
                    return;
                }
            }
        }
        if m > 1 {
            self.sweeping = true;
        }
    }

    /// Bends effector `k`'s path (root to effector) out of a collinear dead
    /// end, as `ChainState::unstall` bends a chain; returns whether it did.
    fn unstall(&mut self, k: usize, limits: &[JointLimit]) -> bool {
        let e = self.joints + k;
        let mut path = [0u8; MAX_CHAIN + 1];
        let path = self.path(e, &mut path);
        let bones = path
            .iter()
            .skip(1)
            .map(|&c| usize::from(c))
            .filter(|&c| self.len[c] != 0.0)
            .map(|c| {
                let v = usize::from(self.up[c]);
                (v, self.rot[v].rotate(self.link[c]) * (1.0 / self.len[c]))
            });
        let bend = dead_end_bend(
            self.pos[0],
            self.pos[e],
            self.target[k],
            self.reach[k],
            bones,
            self.unstalls,
        );
        let Some((v, delta)) = bend else {
            return false;
        };
        self.unstalls = self.unstalls.wrapping_add(1);
        self.rotate_model(v, delta, limit_of(limits, v));
        true
    }

    /// The children of joint `v` that pull at it: those with branch
    /// weight below them, or all when none has. At most one per branch.
    fn pulling(&self, v: usize) -> ([usize; MAX_BRANCHES], usize) {
        let mut kids = [0usize; MAX_BRANCHES];
        let mut count = 0;
        let mut weighted = false;
        let mut c = self.child[v];
        while c != NONE && count < kids.len() {
            let ci = usize::from(c);
            kids[count] = ci;
            count += 1;
            weighted |= self.weight[ci] > 0.0;
            c = self.sibling[ci];
        }
        if weighted {
            let mut kept = 0;
            for i in 0..count {
                if self.weight[kids[i]] > 0.0 {
                    kids[kept] = kids[i];
                    kept += 1;
                }
            }
            count = kept;
        }
        (kids, count)
    }

    /// The weight of child `c` among `v`'s pulling children: its branch
    /// weight, or 1 when no child of `v` has one.
    fn pull_weight(&self, v: usize, c: usize) -> f32 {
        if self.weight[v] > 0.0 {
            self.weight[c]
        } else {
            1.0
        }
    }

    /// Where the backward pass puts joint `v`, its children being at `p`.
    /// One child pulling: on the line to it at the bone's length, as in a
    /// chain. Several: the children are rigid in `v`'s frame, so the frame
    /// goes where its children's bones best match their positions, in the
    /// weighted least-squares sense (the rotation that best turns the
    /// bones, taken about their weighted centroid, onto the positions
    /// about theirs; then the translation). With every child at the joint
    /// this is the weighted centroid of the paper; with children at rigid
    /// offsets (shoulders on a chest) it lets a mismatch in their spacing
    /// move and turn the joint rather than stall.
    fn place(&self, v: usize, p: &[Vec3; NODES]) -> Vec3 {
        let (kids, count) = self.pulling(v);
        let kids = &kids[..count];
        if let [c] = *kids {
            return pull(p[v], p[c], self.len[c], || self.rot[v].rotate(self.link[c]));
        }
        let mut bone = [Vec3::ZERO; MAX_BRANCHES];
        let mut w = [0.0f32; MAX_BRANCHES];
        let (mut bones_at, mut kids_at, mut total) = (Vec3::ZERO, Vec3::ZERO, 0.0f32);
        for (i, &c) in kids.iter().enumerate() {
            bone[i] = self.rot[v].rotate(self.link[c]);
            w[i] = self.pull_weight(v, c);
            bones_at = bones_at + bone[i] * w[i];
            kids_at = kids_at + p[c] * w[i];
            total += w[i];
        }
        if total.is_nan() || total <= 0.0 {
            return p[v];
        }
        let (bones_at, kids_at) = (bones_at * (1.0 / total), kids_at * (1.0 / total));
        let mut from = [Vec3::ZERO; MAX_BRANCHES];
        let mut to = [Vec3::ZERO; MAX_BRANCHES];
        let mut scale = 0.0f32;
        for (i, &c) in kids.iter().enumerate() {
            from[i] = bone[i] - bones_at;
            to[i] = p[c] - kids_at;
            scale = scale.max(from[i].length()).max(to[i].length());
        }
        let turn = if scale > 0.0 {
            for i in 0..count {
                from[i] = from[i] * (1.0 / scale);
                to[i] = to[i] * (1.0 / scale);
            }
            fit(&from[..count], &to[..count], &w[..count])
        } else {
            Quat::IDENTITY
        };
        kids_at - turn.rotate(bones_at)
    }

    /// The local rotation the forward pass gives joint `v` (before its
    /// limit), its parent's model rotation being `parent` and `p` the
    /// backward pass's positions: its pulling bones turned towards their
    /// children's positions, one by the shortest arc, several by the
    /// rotation that brings the children closest to those positions
    /// (weighted least squares, each child weighted by its pull).
    fn turn(&self, v: usize, parent: Quat, p: &[Vec3; NODES]) -> Quat {
        let r = self.local[v];
        let (mut kids, count) = self.pulling(v);
        // Bones of zero length cannot be turned.
        let mut k = 0;
        for i in 0..count {
            if self.len[kids[i]] > 0.0 {
                kids[k] = kids[i];
                k += 1;
            }
        }
        let kids = &kids[..k];
        match *kids {
            [] => return r,
            [c] => return aim_bone(parent, r, self.link[c], self.len[c], self.pos[v], p[c]),
            _ => {}
        }
        let rot = parent * r;
        let mut from = [Vec3::ZERO; MAX_BRANCHES];
        let mut to = [Vec3::ZERO; MAX_BRANCHES];
        let mut w = [0.0f32; MAX_BRANCHES];
        let mut scale = 0.0f32;
        for (i, &c) in kids.iter().enumerate() {
            from[i] = rot.rotate(self.link[c]);
            to[i] = p[c] - self.pos[v];
            w[i] = self.pull_weight(v, c);
            scale = scale.max(from[i].length()).max(to[i].length());
        }
        let m = kids.len();
        for i in 0..m {
            from[i] = from[i] * (1.0 / scale);
            to[i] = to[i] * (1.0 / scale);
        }
        let delta = fit(&from[..m], &to[..m], &w[..m]);
        r * (rot.conjugate() * delta * rot)
    }

    /// One sweep of multi-effector CCD, last joint first: each joint (with
    /// `shared_only`, each joint on the paths of several effectors) turned,
    /// then limited, by the rotation that brings the effectors below it
    /// closest to their targets: the weighted least-squares fit of their
    /// offsets from the joint onto the targets', weighted by their
    /// branches' weights (or equally when none below has weight). Before
    /// its limit the turn never increases the weighted sum of their
    /// squared distances.
    fn ccd_sweep(&mut self, limits: &[JointLimit], shared_only: bool) {
        let (n, m) = (self.joints, self.effectors);
        for v in (0..n).rev() {
            let below = self.below[v];
            if below == 0 || (shared_only && below.count_ones() < 2) {
                continue;
            }
            let at = self.pos[v];
            let mut from = [Vec3::ZERO; MAX_BRANCHES];
            let mut to = [Vec3::ZERO; MAX_BRANCHES];
            let mut w = [0.0f32; MAX_BRANCHES];
            let mut count = 0;
            let mut scale = 0.0f32;
            for k in (0..m).filter(|&k| below & (1 << k) != 0) {
                from[count] = self.pos[n + k] - at;
                to[count] = self.target[k] - at;
                w[count] = self.pull_weight(v, n + k);
                scale = scale.max(from[count].length()).max(to[count].length());
                count += 1;
            }
            if scale.is_nan() || scale <= 0.0 {
                continue;
            }
            for i in 0..count {
                from[i] = from[i] * (1.0 / scale);
                to[i] = to[i] * (1.0 / scale);
            }
            let delta = fit(&from[..count], &to[..count], &w[..count]);
            self.rotate_model(v, delta, limit_of(limits, v));
        }
    }

    /// Writes the local rotations into the pose, updates the model matrices
    /// of the root's subtree and reports the effectors' distances from the
    /// matrices.
    fn commit(
        &self,
        pose: &mut IkPose<'_, '_>,
        job: &TreeJob<'_>,
        iterations: u32,
    ) -> Result<TreeReport, Error> {
        let n = self.joints;
        write_back(pose, &self.skel[..n], &self.local[..n])?;
        let mut report = TreeReport {
            iterations,
            distance: [0.0; MAX_BRANCHES],
            effectors: self.effectors,
            reached: true,
        };
        for (k, b) in job.branches.iter().enumerate() {
            if let Some(&last) = b.joints.last() {
                let end = pose.models[usize::from(last)].transform_point(b.offset);
                report.distance[k] = (end - b.target).length();
            }
            report.reached &= self.distance(k) <= job.tolerance;
        }
        Ok(report)
    }
}

/// The backward pass: effectors on their targets, then each joint, last
/// first, placed after its children ([`TreeState::place`]). The root's
/// position is not needed: the forward pass keeps it at its base.
fn backward(s: &TreeState, p: &mut [Vec3; NODES]) {
    let n = s.joints;
    p[n..n + s.effectors].copy_from_slice(&s.target[..s.effectors]);
    for v in (1..n).rev() {
        p[v] = s.place(v, p);
    }
}

/// The forward pass in rotations: from the root, turn each joint's bones
/// towards the backward pass's positions, limit it, place its children.
fn forward(s: &mut TreeState, p: &[Vec3; NODES], limits: &[JointLimit]) {
    let n = s.joints;
    for v in 0..n {
        let parent = match s.up[v] {
            NONE => s.parent,
            u => {
                let u = usize::from(u);
                s.pos[v] = s.pos[u] + s.rot[u].rotate(s.link[v]);
                s.rot[u]
            }
        };
        let local = s.turn(v, parent, p);
        s.local[v] = limited(local, limit_of(limits, v));
        s.rot[v] = parent * s.local[v];
    }
    for c in n..n + s.effectors {
        let u = usize::from(s.up[c]);
        s.pos[c] = s.pos[u] + s.rot[u].rotate(s.link[c]);
    }
}

/// The rotation `q` that maximises `Σ w_i · to_i · (q from_i)` (weights
/// `>= 0`), i.e. turns the vectors `from_i` best onto the `to_i` in the
/// weighted least-squares sense. From the identity, each turn is about the
/// axis of the weighted torque `Σ w_i · from_i × to_i`, by the angle that
/// maximises the sum among rotations about that axis (the sum is
/// `A + B cos θ + C sin θ` there, so the angle is `atan2(C, B)`), so no
/// turn lowers it; turns stop when they become negligible. With one pair
/// (or pairs that one turn about their common normal aligns) the first turn
/// is the answer. Starting from the identity keeps the rotation about any
/// direction the pairs leave free. Vectors of about unit length keep the
/// stop test meaningful.
fn fit(from: &[Vec3], to: &[Vec3], w: &[f32]) -> Quat {
    let mut cur = [Vec3::ZERO; MAX_BRANCHES];
    let k = from.len().min(MAX_BRANCHES);
    cur[..k].copy_from_slice(&from[..k]);
    let mut q = Quat::IDENTITY;
    for _ in 0..FIT_STEPS {
        let mut torque = Vec3::ZERO;
        for ((c, t), w) in cur[..k].iter().zip(to).zip(w) {
            torque = torque + c.cross(*t) * *w;
        }
        let Some(axis) = torque.try_normalize() else {
            break;
        };
        // Σ w · (c⊥ · t⊥): the cosine coefficient of the sum as a function
        // of the angle about `axis`; the sine coefficient is |torque|.
        let mut along = 0.0f32;
        for ((c, t), w) in cur[..k].iter().zip(to).zip(w) {
            along += *w * (c.dot(*t) - c.dot(axis) * t.dot(axis));
        }
        let angle = libm::atan2f(torque.dot(axis), along);
        // NaN (a non-finite vector) ends the fit too.
        if angle.is_nan() || angle <= FIT_SETTLED {
            break;
        }
        let step = Quat::from_axis_angle(axis, angle);
        q = (step * q).normalize();
        for c in &mut cur[..k] {
            *c = step.rotate(*c);
        }
    }
    q
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_aligns_pairs_a_rotation_can_align() {
        let truth = Quat::from_axis_angle(Vec3::new(0.3, -0.5, 0.8).try_normalize().unwrap(), 1.1);
        let from = [Vec3::X, Vec3::new(0.0, 0.6, 0.8), Vec3::new(-0.6, 0.0, 0.8)];
        let to = from.map(|f| truth.rotate(f));
        let q = fit(&from, &to, &[1.0, 0.5, 2.0]);
        for (f, t) in from.iter().zip(&to) {
            assert!((q.rotate(*f) - *t).length() < 1e-4, "{q:?}");
        }
        // One pair: the shortest arc.
        let q = fit(&from[..1], &to[..1], &[1.0]);
        let arc = Quat::from_rotation_arc(from[0], to[0]);
        assert!(q.angle_between(arc) < 1e-5, "{q:?} vs {arc:?}");
    }

    #[test]
    fn fit_of_collinear_pairs_keeps_the_free_twist() {
        // Both pairs along X: any turn about X fits; the fit adds none.
        let from = [Vec3::X, Vec3::X];
        let to = [Vec3::Y, Vec3::Y];
        let q = fit(&from, &to, &[1.0, 1.0]);
        let arc = Quat::from_rotation_arc(Vec3::X, Vec3::Y);
        assert!(q.angle_between(arc) < 1e-5, "{q:?}");
    }
}
