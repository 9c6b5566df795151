//! Random motion-matching databases for the C ABI tests (included with
//! `#[path = "../support/mm.rs"] mod mm;`): a seeded generator of groups,
//! normalization, ranges (mirrored or not), features and hidden frames,
//! written with `write_database` into 16-byte aligned bytes.
#![allow(dead_code)]

use sinew_core::motion_matching::{
    database_size, write_database, DatabaseDesc, FeatureGroup, FeatureKind, FrameRange,
    RANGE_MIRRORED,
};
use sinew_core::Vec3;
use sinew_std::AlignedBytes;

/// What a generated database looks like; the seed picks everything else.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// Frames (at least 1).
    pub frames: usize,
    /// Frame ranges (at most `frames`).
    pub ranges: usize,
    /// Every other range plays its clip mirrored (the database then has a
    /// mirror map).
    pub mirrored: bool,
    /// Features drawn from five values, so that equal costs are common.
    pub ties: bool,
    /// Share of frames a search may not return (0 to 1).
    pub hidden: f32,
}

/// A small xorshift generator: the same database for the same seed on
/// every platform.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }

    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.unit()
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// One to four joint groups (positions and velocities of joints 0–3), then
/// zero to three trajectory samples (a position and a direction each).
pub fn groups(rng: &mut Rng) -> Vec<FeatureGroup> {
    let mut groups = Vec::new();
    let mut first = 0;
    let mut push = |kind: FeatureKind, joint: u32, ahead: u32, weight: f32| {
        groups.push(FeatureGroup::new(kind, joint, ahead, first, weight));
        first += kind.width() as u32;
    };
    for j in 0..1 + rng.below(4) {
        let kind = if j % 2 == 0 {
            FeatureKind::Position
        } else {
            FeatureKind::Velocity
        };
        push(kind, (j % 4) as u32, 0, rng.range(0.5, 2.0));
    }
    for k in 0..rng.below(4) as u32 {
        let ahead = 10 * (k + 1);
        push(
            FeatureKind::TrajectoryPosition,
            u32::MAX,
            ahead,
            rng.range(0.5, 2.0),
        );
        push(
            FeatureKind::TrajectoryDirection,
            u32::MAX,
            ahead,
            rng.range(0.5, 2.0),
        );
    }
    groups
}

/// A database of `shape`, everything else drawn from `seed`.
pub fn database(seed: u64, shape: Shape) -> AlignedBytes {
    let mut rng = Rng::new(seed);
    let groups = groups(&mut rng);
    let fc: usize = groups.iter().map(|g| g.width as usize).sum();
    let mean: Vec<f32> = (0..fc).map(|_| rng.range(-1.0, 1.0)).collect();
    let scale: Vec<f32> = (0..fc).map(|_| rng.range(0.5, 3.0)).collect();
    const FEW: [f32; 5] = [-1.0, -0.5, 0.0, 0.5, 1.0];
    let features: Vec<f32> = (0..shape.frames * fc)
        .map(|_| {
            if shape.ties {
                FEW[rng.below(FEW.len())]
            } else {
                rng.range(-2.0, 2.0)
            }
        })
        .collect();
    let searchable: Vec<bool> = (0..shape.frames)
        .map(|_| rng.unit() >= shape.hidden)
        .collect();
    let count = shape.ranges.clamp(1, shape.frames);
    let per = shape.frames / count;
    let mut ranges = Vec::new();
    let mut start = 0;
    for r in 0..count {
        let len = if r + 1 == count {
            shape.frames - start
        } else {
            per
        };
        let mirrored = shape.mirrored && r % 2 == 1;
        ranges.push(FrameRange {
            clip: if shape.mirrored { r / 2 } else { r } as u32,
            start: start as u32,
            len: len as u32,
            flags: if mirrored { RANGE_MIRRORED } else { 0 },
        });
        start += len;
    }
    let mirror: &[u16] = if shape.mirrored {
        &[0, 2, 1, 3, 4]
    } else {
        &[]
    };
    let desc = DatabaseDesc {
        sample_rate: 30.0,
        root: 0,
        facing_axis: Vec3::Z,
        mirror_axis: 0,
        groups: &groups,
        mean: &mean,
        scale: &scale,
        ranges: &ranges,
        mirror,
        features: &features,
        searchable: &searchable,
        order: &[],
    };
    let mut out = AlignedBytes::zeroed(database_size(&desc).expect("a database that fits"));
    write_database(&desc, out.as_mut_slice()).expect("the database writes");
    out
}

/// `features` (a frame's, say), each moved by up to `spread`: a query near
/// that frame.
pub fn query(seed: u64, features: &[f32], spread: f32) -> Vec<f32> {
    let mut rng = Rng::new(seed ^ 0x5157);
    features
        .iter()
        .map(|&x| x + rng.range(-spread, spread))
        .collect()
}
