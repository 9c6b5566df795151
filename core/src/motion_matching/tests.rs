extern crate alloc;

use alloc::vec;
use alloc::vec::Vec;

use proptest::prelude::*;
use wide::f32x4;

use super::database::*;
use super::search::reference;
use super::*;
use crate::error::Error;
use crate::math::{Quat, Transform, Vec3};
use crate::soa::{get_joint, set_joint, SoaTransform};

/// Groups of the default schema: two joints' positions and velocities, one
/// joint's velocity, three trajectory positions and directions (27 features).
fn default_groups() -> Vec<FeatureGroup> {
    let mut groups = Vec::new();
    let mut first = 0;
    let mut push = |kind: FeatureKind, joint: u32, ahead: u32| {
        groups.push(FeatureGroup::new(kind, joint, ahead, first, 1.0));
        first += kind.width() as u32;
    };
    push(FeatureKind::Position, 1, 0);
    push(FeatureKind::Position, 2, 0);
    push(FeatureKind::Velocity, 1, 0);
    push(FeatureKind::Velocity, 2, 0);
    push(FeatureKind::Velocity, 0, 0);
    for k in [20, 40, 60] {
        push(FeatureKind::TrajectoryPosition, u32::MAX, k);
    }
    for k in [20, 40, 60] {
        push(FeatureKind::TrajectoryDirection, u32::MAX, k);
    }
    groups
}

fn feature_count(groups: &[FeatureGroup]) -> usize {
    groups.iter().map(|g| g.width as usize).sum()
}

/// An owned, aligned container.
struct Owned(Vec<f32x4>, usize);

impl Owned {
    fn bytes(&self) -> &[u8] {
        &bytemuck::cast_slice(&self.0)[..self.1]
    }
    fn bytes_mut(&mut self) -> &mut [u8] {
        &mut bytemuck::cast_slice_mut(&mut self.0)[..self.1]
    }
    fn view(&self) -> Database<'_> {
        Database::from_bytes(self.bytes()).expect("valid database")
    }
}

fn write(desc: &DatabaseDesc<'_>) -> Result<Owned, Error> {
    let len = database_size(desc)?;
    let mut store = vec![f32x4::ZERO; len.div_ceil(16)];
    let n = write_database(desc, &mut bytemuck::cast_slice_mut(&mut store)[..len])?;
    assert_eq!(n, len);
    Ok(Owned(store, len))
}

/// The slot order a test database is written in.
#[derive(Clone, Copy, Debug)]
enum Order {
    /// Frame order (the writer's default).
    Frames,
    /// [`cluster_order`]'s.
    Cluster,
    /// A random permutation from this seed.
    Shuffled(u64),
}

/// A database of `frames` frames in `ranges` ranges, features from `values`
/// (cycled), frames searchable unless `hidden` says otherwise.
fn database(frames: usize, ranges: usize, values: &[f32], hidden: &[bool]) -> Owned {
    database_in(Order::Frames, frames, ranges, values, hidden)
}

/// [`database`] with its frames stored in `order`.
fn database_in(
    order: Order,
    frames: usize,
    ranges: usize,
    values: &[f32],
    hidden: &[bool],
) -> Owned {
    let groups = default_groups();
    let fc = feature_count(&groups);
    let features: Vec<f32> = (0..frames * fc).map(|i| values[i % values.len()]).collect();
    let searchable: Vec<bool> = (0..frames)
        .map(|i| {
            !hidden
                .get(i % hidden.len().max(1))
                .copied()
                .unwrap_or(false)
        })
        .collect();
    let slots: Vec<u32> = match order {
        Order::Frames => Vec::new(),
        Order::Cluster => {
            let mut slots = vec![0; frames];
            cluster_order(&features, fc, &searchable, &mut slots).expect("cluster order");
            slots
        }
        Order::Shuffled(mut seed) => {
            let mut slots: Vec<u32> = (0..frames as u32).collect();
            for i in (1..frames).rev() {
                seed = seed
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                slots.swap(i, (seed >> 33) as usize % (i + 1));
            }
            slots
        }
    };
    let per = frames.div_ceil(ranges);
    let mut rs = Vec::new();
    let mut start = 0;
    while start < frames {
        let len = per.min(frames - start);
        rs.push(FrameRange {
            clip: rs.len() as u32,
            start: start as u32,
            len: len as u32,
            flags: 0,
        });
        start += len;
    }
    write(&DatabaseDesc {
        sample_rate: 60.0,
        root: 0,
        facing_axis: Vec3::Z,
        mirror_axis: 0,
        groups: &groups,
        mean: &vec![0.0; fc],
        scale: &vec![1.0; fc],
        ranges: &rs,
        mirror: &[],
        features: &features,
        searchable: &searchable,
        order: &slots,
    })
    .expect("database writes")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// The pruned search, the lane brute force and the scalar reference
    /// return the same frame and cost, bit for bit, ties included (features
    /// drawn from a few values so that ties are common), whatever order the
    /// frames are stored in; every order gives the same answer.
    #[test]
    fn searches_agree(
        frames in 1usize..900,
        ranges in 1usize..6,
        values in prop::collection::vec(prop_oneof![-2.0f32..2.0, Just(0.5f32), Just(-1.0f32)], 7..60),
        hidden in prop::collection::vec(prop::bool::weighted(0.2), 1..40),
        query in prop::collection::vec(prop_oneof![-2.5f32..2.5, Just(0.5f32)], 27),
        bound in prop_oneof![Just(f32::INFINITY), 0.0f32..60.0],
        seed in any::<u64>(),
    ) {
        let ranges = ranges.min(frames);
        let mut answers = Vec::new();
        for order in [Order::Frames, Order::Cluster, Order::Shuffled(seed)] {
            let db = database_in(order, frames, ranges, &values, &hidden);
            let db = db.view();
            let expected = reference::search(&db, &query, bound).unwrap();
            prop_assert_eq!(db.search_brute(&query, bound).unwrap(), expected, "{:?}", order);
            prop_assert_eq!(db.search(&query, bound).unwrap(), expected, "{:?}", order);
            if let Some(m) = expected {
                prop_assert!(db.is_searchable(m.frame as usize));
                prop_assert_eq!(db.cost(&query, m.frame as usize).unwrap(), m.cost);
            }
            for i in 0..frames {
                let mut row = vec![0.0; 27];
                db.frame_features(i, &mut row).unwrap();
                let expected: Vec<f32> = (0..27).map(|f| values[(i * 27 + f) % values.len()]).collect();
                prop_assert_eq!(row, expected);
                prop_assert_eq!(db.is_searchable(i), !hidden[i % hidden.len()]);
            }
            answers.push(expected);
        }
        prop_assert!(answers.windows(2).all(|w| w[0] == w[1]));
    }

    /// The cluster order is a permutation with the searchable frames first,
    /// each leaf's frames ascending, the same on every call.
    #[test]
    fn cluster_order_is_a_searchable_first_permutation(
        frames in 1usize..3000,
        hidden in prop::collection::vec(prop::bool::weighted(0.3), 1..40),
        seed in any::<u32>(),
    ) {
        let fc = 5;
        let mut state = seed | 1;
        let features: Vec<f32> = (0..frames * fc)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                (state % 64) as f32 * 0.25
            })
            .collect();
        let searchable: Vec<bool> = (0..frames).map(|i| !hidden[i % hidden.len()]).collect();
        let mut order = vec![0u32; frames];
        cluster_order(&features, fc, &searchable, &mut order).unwrap();
        let mut again = vec![0u32; frames];
        cluster_order(&features, fc, &searchable, &mut again).unwrap();
        prop_assert_eq!(&order, &again);
        let mut seen = vec![false; frames];
        for &f in &order {
            prop_assert!(!seen[f as usize]);
            seen[f as usize] = true;
        }
        let n = searchable.iter().filter(|&&s| s).count();
        prop_assert!(order[..n].iter().all(|&f| searchable[f as usize]));
        prop_assert!(order[n..].windows(2).all(|w| w[0] < w[1]));
        for leaf in order[..n].chunks(SMALL_BOX) {
            prop_assert!(leaf.windows(2).all(|w| w[0] < w[1]));
        }
    }

    /// A prediction `a` then `b` seconds ahead is the prediction `a + b` ahead.
    ///
    /// Each prediction turns the short way to the desired yaw, so the two
    /// agree only while the yaw's offset from it stays inside (-π, π): the
    /// offset starts within 2.3 rad, and with the default half-life (0.27 s)
    /// a yaw rate of at most 4 rad/s carries it at most 4 / (2 ln 2 / 0.27)
    /// = 0.78 rad further.
    #[test]
    fn trajectory_composes(
        v in (-3.0f32..3.0, -3.0f32..3.0),
        a in (-5.0f32..5.0, -5.0f32..5.0),
        target in (-3.0f32..3.0, -3.0f32..3.0),
        yaw in -3.0f32..3.0,
        yaw_rate in -4.0f32..4.0,
        offset in -2.3f32..2.3,
        t1 in 0.0f32..1.0,
        t2 in 0.0f32..1.0,
    ) {
        let desired_yaw = crate::mix::root_motion::wrap_angle(yaw + offset);
        let s = Trajectory {
            position: Vec3::new(1.0, 0.0, -2.0),
            velocity: Vec3::new(v.0, 0.0, v.1),
            acceleration: Vec3::new(a.0, 0.0, a.1),
            yaw,
            yaw_rate,
        };
        let d = Desired { velocity: Vec3::new(target.0, 0.0, target.1), yaw: desired_yaw };
        let p = TrajectoryParams::default();
        let once = s.predict(&d, &p, t1 + t2).unwrap();
        let twice = s.predict(&d, &p, t1).unwrap().predict(&d, &p, t2).unwrap();
        prop_assert!((once.position - twice.position).length() < 1e-3);
        prop_assert!((once.velocity - twice.velocity).length() < 1e-3);
        prop_assert!((once.acceleration - twice.acceleration).length() < 1e-2);
        let dyaw = crate::mix::root_motion::wrap_angle(once.yaw - twice.yaw);
        prop_assert!(dyaw.abs() < 1e-3, "{} {}", once.yaw, twice.yaw);
        prop_assert!((once.yaw_rate - twice.yaw_rate).abs() < 1e-2);
    }
}

#[test]
fn trajectory_is_its_own_integral_and_converges() {
    let s = Trajectory {
        velocity: Vec3::new(0.5, 0.0, 1.0),
        acceleration: Vec3::new(-1.0, 0.0, 2.0),
        yaw: 0.3,
        yaw_rate: 1.0,
        ..Trajectory::default()
    };
    let d = Desired {
        velocity: Vec3::new(2.0, 0.0, -1.0),
        yaw: -2.5,
    };
    let p = TrajectoryParams::default();
    assert!((s.predict(&d, &p, 0.0).unwrap().position - s.position).length() < 1e-6);
    // Velocity is the derivative of position, acceleration of velocity.
    for t in [0.05f32, 0.3, 0.9] {
        let h = 1e-3;
        let (a, b, m) = (
            s.predict(&d, &p, t - h).unwrap(),
            s.predict(&d, &p, t + h).unwrap(),
            s.predict(&d, &p, t).unwrap(),
        );
        let v = (b.position - a.position) * (0.5 / h);
        assert!((v - m.velocity).length() < 1e-2, "{v:?} {:?}", m.velocity);
        let acc = (b.velocity - a.velocity) * (0.5 / h);
        assert!((acc - m.acceleration).length() < 5e-2);
        let w = crate::mix::root_motion::wrap_angle(b.yaw - a.yaw) * (0.5 / h);
        assert!((w - m.yaw_rate).abs() < 1e-2);
    }
    // Far ahead: the desired velocity and heading.
    let far = s.predict(&d, &p, 20.0).unwrap();
    assert!((far.velocity - d.velocity).length() < 1e-4);
    assert!(crate::mix::root_motion::wrap_angle(far.yaw - d.yaw).abs() < 1e-4);
    // The heading turns the short way: from 3.0 to −3.0 is 0.28 rad through π.
    let turning = Trajectory {
        yaw: 3.0,
        ..Trajectory::default()
    };
    let want = Desired {
        yaw: -3.0,
        ..Desired::default()
    };
    let soon = turning.predict(&want, &p, 0.1).unwrap();
    assert!(soon.yaw > 3.0 || soon.yaw < -3.0, "{}", soon.yaw);
    assert!(soon.yaw_rate > 0.0);
    let bad = TrajectoryParams {
        velocity_half_life: 0.0,
        ..p
    };
    assert!(matches!(
        s.predict(&d, &bad, 0.1),
        Err(Error::InvalidParameter { .. })
    ));
    assert!(matches!(
        s.predict(&d, &p, f32::NAN),
        Err(Error::NonFinite { .. })
    ));
    let nan = Desired { yaw: f32::NAN, ..d };
    assert!(matches!(
        s.predict(&nan, &p, 0.1),
        Err(Error::NonFinite { .. })
    ));
}

#[test]
fn bad_queries_are_errors() {
    let db = database(40, 2, &[0.1, 0.7, -0.3], &[false]);
    let db = db.view();
    let q = [0.0f32; 27];
    assert!(matches!(
        db.search(&q[..26], f32::INFINITY),
        Err(Error::BadLength { .. })
    ));
    let mut nan = q;
    nan[5] = f32::NAN;
    assert!(matches!(
        db.search(&nan, f32::INFINITY),
        Err(Error::NonFinite { .. })
    ));
    assert!(matches!(
        db.search_brute(&q, f32::NAN),
        Err(Error::NonFinite { .. })
    ));
    assert!(matches!(
        db.cost(&q, 40),
        Err(Error::InvalidParameter { .. })
    ));
    // A bound no frame beats finds nothing.
    assert_eq!(db.search(&q, 0.0).unwrap(), None);
    let mut out = [0.0f32; 3];
    assert!(matches!(
        db.normalize(26, &[1.0, 2.0], &mut out[..2]),
        Err(Error::BadLength { .. })
    ));
    assert!(matches!(
        db.normalize(0, &[f32::INFINITY], &mut out[..1]),
        Err(Error::NonFinite { .. })
    ));
}

#[test]
fn unsearchable_frames_are_never_returned() {
    // Every other frame hidden; the query equals the hidden frames exactly.
    let groups = default_groups();
    let fc = feature_count(&groups);
    let frames = 300;
    let features: Vec<f32> = (0..frames * fc)
        .map(|i| if (i / fc).is_multiple_of(2) { 1.0 } else { 0.0 })
        .collect();
    let searchable: Vec<bool> = (0..frames).map(|i| i % 2 == 1).collect();
    let db = write(&DatabaseDesc {
        sample_rate: 30.0,
        root: 0,
        facing_axis: Vec3::Z,
        mirror_axis: 0,
        groups: &groups,
        mean: &vec![0.0; fc],
        scale: &vec![1.0; fc],
        ranges: &[FrameRange {
            clip: 0,
            start: 0,
            len: frames as u32,
            flags: 0,
        }],
        mirror: &[],
        features: &features,
        searchable: &searchable,
        order: &[],
    })
    .unwrap();
    let db = db.view();
    let m = db.search(&vec![1.0; fc], f32::INFINITY).unwrap().unwrap();
    assert_eq!(m.frame, 1);
    assert_eq!(m.cost, fc as f32);
    assert_eq!(db.cost(&vec![1.0; fc], 0).unwrap(), f32::INFINITY);
    assert_eq!(db.locate(299), Some((0, 299)));
    assert_eq!(db.locate(300), None);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A container changed after validation (any bytes past the header)
    /// and re-viewed with `from_validated_bytes` gives unspecified answers
    /// but never panics or reads out of bounds: slot tables, flags, boxes
    /// and features all overwritten.
    #[test]
    fn changed_bytes_never_panic(
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u32>()), 1..40),
        query in prop::collection::vec(-3.0f32..3.0, 27),
        seed in any::<u64>(),
    ) {
        let mut o = database_in(Order::Shuffled(seed), 300, 3, &[0.25, -0.5, 1.5, 0.0, 2.0], &[false, true, false]);
        let n = o.1;
        for (at, value) in edits {
            let at = 64 + at.index((n - 64) / 4) * 4;
            o.bytes_mut()[at..at + 4].copy_from_slice(&value.to_le_bytes());
        }
        let db = Database::from_validated_bytes(o.bytes()).unwrap();
        let _ = db.search(&query, f32::INFINITY);
        let _ = db.search(&query, 1.0);
        let _ = db.search_brute(&query, f32::INFINITY);
        let mut row = vec![0.0; 27];
        for i in 0..db.frame_count() + 2 {
            let _ = db.cost(&query, i);
            let _ = db.frame_features(i, &mut row);
            let _ = db.is_searchable(i);
            let _ = db.locate(i);
        }
    }
}

#[test]
fn corrupt_containers_are_refused() {
    let good = database(100, 3, &[0.25, -0.5, 1.5, 0.0], &[false, true]);
    assert!(Database::from_bytes(good.bytes()).is_ok());
    let fresh = || database(100, 3, &[0.25, -0.5, 1.5, 0.0], &[false, true]);
    let view_of = |o: &Owned| Database::from_bytes(o.bytes()).map(|_| ());

    let mut o = fresh();
    o.bytes_mut()[0] = b'X';
    assert_eq!(view_of(&o), Err(Error::BadMagic));

    let n = good.bytes().len();
    assert!(matches!(
        Database::from_bytes(&good.bytes()[..n - 4]),
        Err(Error::Truncated { .. })
    ));
    assert!(matches!(
        Database::from_bytes(&good.bytes()[..40]),
        Err(Error::Truncated { .. })
    ));

    // Offsets inside the sections, found from the view.
    let db = good.view();
    let base = good.bytes().as_ptr() as usize;
    let at = |p: *const u8| p as usize - base;
    let feature0 = at(db.features.as_ptr().cast());
    let bias0 = at(db.bias.as_ptr().cast());
    let boxes0 = at(db.boxes.as_ptr().cast());
    let frame_of0 = at(db.frame_of.as_ptr().cast());
    let slot_of0 = at(db.slot_of.as_ptr().cast());
    let group0 = at(db.groups.as_ptr().cast());
    let range0 = at(db.ranges.as_ptr().cast());

    let box_error = "database box does not bound its frames or children";
    let flag_error =
        "database slot flag is neither 0 nor +inf (+inf for padding and past the searched slots)";
    let table_error = "database slot and frame tables are not inverse permutations";
    let top = at(db.boxes[db.level_offset[db.levels - 1] as usize * 2 * 27..]
        .as_ptr()
        .cast());
    let cases: [(usize, [u8; 4], &str); 14] = [
        (
            feature0,
            f32::NAN.to_le_bytes(),
            "database feature is not finite",
        ),
        (feature0, 9.0f32.to_le_bytes(), box_error),
        (bias0, 1.0f32.to_le_bytes(), flag_error),
        // Slot 100 is padding: it may not be searchable.
        (bias0 + 4 * 100, 0.0f32.to_le_bytes(), flag_error),
        (boxes0, (-9.0f32).to_le_bytes(), box_error),
        (top, (-9.0f32).to_le_bytes(), box_error),
        // Lanes 1 to 3 of the top group (one box of 256 slots) are empty.
        (top + 12, 0.0f32.to_le_bytes(), box_error),
        (frame_of0, 1u32.to_le_bytes(), table_error),
        (frame_of0 + 4 * 100, 0u32.to_le_bytes(), table_error),
        (frame_of0 + 4 * 5, 100u32.to_le_bytes(), table_error),
        (slot_of0 + 4 * 7, 8u32.to_le_bytes(), table_error),
        (
            group0,
            7u32.to_le_bytes(),
            "database feature group has an unknown kind",
        ),
        (
            group0 + 20,
            0.0f32.to_le_bytes(),
            "database feature group weight is not finite and positive",
        ),
        (
            range0 + 4,
            5u32.to_le_bytes(),
            "database frame ranges are not contiguous, non-empty and in order",
        ),
    ];
    for (offset, value, what) in cases {
        let mut o = fresh();
        o.bytes_mut()[offset..offset + 4].copy_from_slice(&value);
        assert_eq!(view_of(&o), Err(Error::Corrupt { what }), "{what}");
    }
    // Header fields.
    for (offset, value) in [
        (12usize, 0u32),
        (16, 0),
        (20, 512),
        (24, 0),
        (28, 0),
        (56, 1),
        (60, 1),
        (60, 128),
    ] {
        let mut o = fresh();
        o.bytes_mut()[offset..offset + 4].copy_from_slice(&value.to_le_bytes());
        assert!(
            matches!(view_of(&o), Err(Error::Corrupt { .. })),
            "header byte {offset}"
        );
    }
    let mut o = fresh();
    o.bytes_mut()[32..36].copy_from_slice(&f32::NAN.to_le_bytes());
    assert_eq!(view_of(&o), Err(Error::InvalidSampleRate));
    // Misaligned.
    let mut shifted = vec![0u8; n + 16];
    let off = 16 - (shifted.as_ptr() as usize % 16) + 4;
    shifted.resize(n + off, 0);
    shifted[off..off + n].copy_from_slice(good.bytes());
    assert_eq!(
        Database::from_bytes(&shifted[off..off + n]).map(|_| ()),
        Err(Error::Misaligned)
    );
}

#[test]
fn writer_refuses_bad_descriptions() {
    let groups = default_groups();
    let fc = feature_count(&groups);
    let features = vec![0.0f32; 10 * fc];
    let mean = vec![0.0f32; fc];
    let scale = vec![1.0f32; fc];
    let range = [FrameRange {
        clip: 0,
        start: 0,
        len: 10,
        flags: 0,
    }];
    let desc = DatabaseDesc {
        sample_rate: 60.0,
        root: 0,
        facing_axis: Vec3::Z,
        mirror_axis: 0,
        groups: &groups,
        mean: &mean,
        scale: &scale,
        ranges: &range,
        mirror: &[],
        features: &features,
        searchable: &[true; 10],
        order: &[],
    };
    assert!(write(&desc).is_ok());
    let err = |d: DatabaseDesc<'_>| write(&d).map(|_| ()).unwrap_err();
    assert!(matches!(
        err(DatabaseDesc {
            features: &features[1..],
            ..desc
        }),
        Error::BadLength { .. }
    ));
    let mirrored = [FrameRange {
        flags: RANGE_MIRRORED,
        ..range[0]
    }];
    assert_eq!(
        err(DatabaseDesc {
            ranges: &mirrored,
            ..desc
        }),
        Error::Corrupt {
            what: "database range is mirrored but it has no mirror map"
        }
    );
    assert_eq!(
        err(DatabaseDesc {
            mirror: &[1, 2, 0],
            ..desc
        }),
        Error::Corrupt {
            what: "database mirror map is not a pairing of its joints"
        }
    );
    let mut nan = features.clone();
    nan[3] = f32::NAN;
    assert_eq!(
        err(DatabaseDesc {
            features: &nan,
            ..desc
        }),
        Error::Corrupt {
            what: "database feature is not finite"
        }
    );
    assert_eq!(
        err(DatabaseDesc {
            sample_rate: 0.0,
            ..desc
        }),
        Error::InvalidSampleRate
    );
    assert!(matches!(
        err(DatabaseDesc {
            facing_axis: Vec3::Y,
            ..desc
        }),
        Error::Corrupt { .. }
    ));
    assert!(write(&DatabaseDesc {
        order: &[9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
        ..desc
    })
    .is_ok());
    assert!(matches!(
        err(DatabaseDesc {
            order: &[0, 1, 2],
            ..desc
        }),
        Error::BadLength { .. }
    ));
    assert_eq!(
        err(DatabaseDesc {
            order: &[0, 1, 2, 3, 4, 5, 6, 7, 8, 10],
            ..desc
        }),
        Error::InvalidParameter {
            what: "database order names a frame past the last frame"
        }
    );
    assert_eq!(
        err(DatabaseDesc {
            order: &[0, 1, 2, 3, 4, 5, 6, 7, 8, 8],
            ..desc
        }),
        Error::InvalidParameter {
            what: "database order names a frame twice"
        }
    );
    let mut small = vec![0u8; 64];
    assert!(matches!(
        write_database(&desc, &mut small),
        Err(Error::BufferTooSmall { .. })
    ));
}

#[test]
fn mirroring_twice_is_the_identity_and_swaps_partners() {
    let mut pose = [SoaTransform::IDENTITY; 1];
    let a = Transform::new(
        Vec3::new(0.1, 0.2, 0.3),
        Quat::from_axis_angle(Vec3::new(0.3, 0.5, 0.8).try_normalize().unwrap(), 0.7),
        Vec3::ONE,
    );
    let b = Transform::new(
        Vec3::new(-0.4, 0.0, 0.2),
        Quat::from_axis_angle(Vec3::new(-0.2, 0.9, 0.1).try_normalize().unwrap(), -1.1),
        Vec3::ONE,
    );
    set_joint(&mut pose, 0, &a).unwrap();
    set_joint(&mut pose, 1, &b).unwrap();
    set_joint(&mut pose, 2, &a).unwrap();
    let original = pose;
    let map = [0u16, 2, 1];
    mirror_pose(&mut pose, &map, 0).unwrap();
    let m1 = get_joint(&pose, 1).unwrap();
    // Joint 1 took joint 2's transform (a), reflected across x.
    assert_eq!(m1.translation, Vec3::new(-0.1, 0.2, 0.3));
    // The reflected rotation is M R M: check it on a vector.
    let v = Vec3::new(0.3, -0.7, 0.2);
    let flip = |v: Vec3| Vec3::new(-v.x, v.y, v.z);
    let lhs = m1.rotation.rotate(v);
    let rhs = flip(a.rotation.rotate(flip(v)));
    assert!((lhs - rhs).length() < 1e-6);
    mirror_pose(&mut pose, &map, 0).unwrap();
    assert_eq!(pose, original);
    // Across z.
    mirror_pose(&mut pose, &map, 2).unwrap();
    let m0 = get_joint(&pose, 0).unwrap();
    let flipz = |v: Vec3| Vec3::new(v.x, v.y, -v.z);
    assert!((m0.rotation.rotate(v) - flipz(a.rotation.rotate(flipz(v)))).length() < 1e-6);
    assert!(matches!(
        mirror_pose(&mut pose, &[0, 9, 1], 0),
        Err(Error::JointOutOfRange { .. })
    ));
    assert!(matches!(
        mirror_pose(&mut pose, &[0; 5], 0),
        Err(Error::BadLength { .. })
    ));
}

/// Past one chunk of large boxes (16,384 frames) the pruned search still
/// returns the reference's frame: smooth random walks, so boxes prune.
#[test]
fn searches_agree_across_chunks() {
    let mut seed = 0x9e37_79b9u32;
    let mut noise = || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        (seed >> 8) as f32 / (1u32 << 23) as f32 - 1.0
    };
    let fc = feature_count(&default_groups());
    let frames = 40_000;
    let mut walk = vec![0.0f32; fc];
    let mut values = Vec::with_capacity(frames * fc);
    for _ in 0..frames {
        for w in &mut walk {
            *w = (*w + 0.05 * noise()).clamp(-3.0, 3.0);
        }
        values.extend_from_slice(&walk);
    }
    let owned = database(frames, 37, &values, &[false, false, false, true]);
    let db = owned.view();
    for k in 0..12 {
        let mut q = vec![0.0f32; fc];
        db.frame_features((k * 3331) % frames, &mut q).unwrap();
        for x in &mut q {
            *x += 0.2 * noise();
        }
        let expected = reference::search(&db, &q, f32::INFINITY).unwrap();
        assert!(expected.is_some());
        assert_eq!(db.search(&q, f32::INFINITY).unwrap(), expected);
        assert_eq!(db.search_brute(&q, f32::INFINITY).unwrap(), expected);
    }
}
