//! The motion-matching exports (through the `sinew` rlib of `sinew-capi`)
//! against the Rust API: every bad input gets its status and writes
//! nothing; on random databases (mirrored ranges, hidden frames, tied
//! costs) the searches, costs, normalization, frame features and frame
//! locations are what `Database` gives, bit for bit; random and
//! bit-flipped containers never load as something that panics.

use proptest::prelude::*;
use sinew::*;
use sinew_core::motion_matching::Database;

#[path = "../support/mm.rs"]
mod mm;

const SENTINEL_FRAME: u32 = 0xDEAD_BEEF;
const SENTINEL_COST: f32 = -7.5;

fn empty_handle() -> sinew_mm_database {
    sinew_mm_database {
        data: std::ptr::null(),
        size: 0,
        feature_count: 0xDEAD,
        frame_count: 0,
        check: 0,
    }
}

fn load(bytes: &[u8]) -> (sinew_status, sinew_mm_database) {
    let mut out = empty_handle();
    // SAFETY: a live buffer of `bytes.len()` bytes and a local out-parameter.
    let s = unsafe { sinew_mm_database_load(bytes.as_ptr(), bytes.len(), &mut out) };
    (s, out)
}

fn loaded(bytes: &[u8]) -> sinew_mm_database {
    let (s, h) = load(bytes);
    assert_eq!(s, sinew_status::Ok);
    h
}

/// A search through the C ABI: its status, frame and cost (the sentinels
/// when it wrote nothing).
fn search(
    h: &sinew_mm_database,
    query: &[f32],
    bound: f32,
    brute: bool,
) -> (sinew_status, u32, f32) {
    let (mut frame, mut cost) = (SENTINEL_FRAME, SENTINEL_COST);
    let f = if brute {
        sinew_mm_search_brute
    } else {
        sinew_mm_search
    };
    // SAFETY: a loaded handle, a live query of its length and local outputs.
    let s = unsafe { f(h, query.as_ptr(), query.len(), bound, &mut frame, &mut cost) };
    (s, frame, cost)
}

fn cost(h: &sinew_mm_database, query: &[f32], frame: u32) -> (sinew_status, f32) {
    let mut c = SENTINEL_COST;
    // SAFETY: as in `search`.
    let s = unsafe { sinew_mm_cost(h, query.as_ptr(), query.len(), frame, &mut c) };
    (s, c)
}

fn locate(h: &sinew_mm_database, frame: u32) -> (sinew_status, [u32; 4]) {
    let mut o = [SENTINEL_FRAME; 4];
    let [a, b, c, d] = &mut o;
    // SAFETY: a loaded handle and four distinct locals.
    let s = unsafe { sinew_mm_locate(h, frame, a, b, c, d) };
    (s, o)
}

fn shape(frames: usize) -> mm::Shape {
    mm::Shape {
        frames,
        ranges: 3,
        mirrored: true,
        ties: false,
        hidden: 0.1,
    }
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Bad containers, forged handles, and every bad argument of every call:
/// each gets its status, and no output changes.
#[test]
fn every_bad_input_gets_its_status_and_writes_nothing() {
    let bytes = mm::database(7, shape(600));
    let h = loaded(bytes.as_slice());
    let db = Database::from_bytes(bytes.as_slice()).unwrap();
    let fc = db.feature_count();
    let query = vec![0.25f32; fc];
    // An output pointer into the database's bytes (every call must refuse
    // it before writing, so a pointer from a shared borrow is enough).
    let inside_db = |at: usize| bytes.as_slice()[at..].as_ptr().cast_mut();

    // Loading: NULL, empty, misaligned, truncated, foreign, other version,
    // a feature moved outside its box.
    let n = bytes.as_slice().len();
    let untouched = |s: sinew_status, h: sinew_mm_database, want: sinew_status| {
        assert_eq!(s, want);
        assert_eq!((h.feature_count, h.check), (0xDEAD, 0));
    };
    let mut out = empty_handle();
    // SAFETY: NULL bytes with a length, a live buffer with NULL out.
    unsafe {
        let s = sinew_mm_database_load(std::ptr::null(), n, &mut out);
        untouched(s, out, sinew_status::NullParameter);
        let s = sinew_mm_database_load(bytes.as_slice().as_ptr(), n, std::ptr::null_mut());
        assert_eq!(s, sinew_status::NullParameter);
    }
    let (s, out) = load(&bytes.as_slice()[..0]);
    untouched(s, out, sinew_status::NullParameter);
    let mut shifted = vec![0u8; n + 32];
    let off = 16 - (shifted.as_ptr() as usize % 16) + 4;
    shifted[off..off + n].copy_from_slice(bytes.as_slice());
    let (s, out) = load(&shifted[off..off + n]);
    untouched(s, out, sinew_status::Misaligned);
    let (s, out) = load(&bytes.as_slice()[..n - 16]);
    untouched(s, out, sinew_status::InvalidData);
    let (s, out) = load(&bytes.as_slice()[..40]);
    untouched(s, out, sinew_status::InvalidData);
    let mut edited = sinew_std::AlignedBytes::copy_from(bytes.as_slice());
    edited.as_mut_slice()[0] ^= 1;
    let (s, out) = load(edited.as_slice());
    untouched(s, out, sinew_status::InvalidData);
    let mut edited = sinew_std::AlignedBytes::copy_from(bytes.as_slice());
    edited.as_mut_slice()[8] ^= 2;
    let (s, out) = load(edited.as_slice());
    untouched(s, out, sinew_status::UnsupportedVersion);
    let mut edited = sinew_std::AlignedBytes::copy_from(bytes.as_slice());
    let last = n - 4; // a float of the last large box's upper bounds
    edited.as_mut_slice()[last..].copy_from_slice(&1.0e6f32.to_le_bytes());
    let (s, out) = load(edited.as_slice());
    untouched(s, out, sinew_status::InvalidData);

    // Handles: NULL, zeroed, edited.
    let mut forged = h;
    forged.frame_count += 1;
    for bad in [empty_handle(), forged] {
        assert_eq!(
            search(&bad, &query, f32::INFINITY, false).0,
            sinew_status::InvalidHandle
        );
        assert_eq!(
            search(&bad, &query, f32::INFINITY, true).0,
            sinew_status::InvalidHandle
        );
        assert_eq!(cost(&bad, &query, 0).0, sinew_status::InvalidHandle);
        assert_eq!(locate(&bad, 0).0, sinew_status::InvalidHandle);
    }
    let mut info = sinew_mm_info::default();
    let mut group = sinew_mm_group::default();
    let (mut frame, mut c) = (SENTINEL_FRAME, SENTINEL_COST);
    let mut feats = vec![9.0f32; fc];
    // SAFETY: every pointer is NULL or a live local of the length passed.
    unsafe {
        assert_eq!(
            sinew_mm_database_info(std::ptr::null(), &mut info),
            sinew_status::NullParameter
        );
        assert_eq!(
            sinew_mm_database_info(&h, std::ptr::null_mut()),
            sinew_status::NullParameter
        );
        assert_eq!(
            sinew_mm_database_info(&forged, &mut info),
            sinew_status::InvalidHandle
        );
        assert_eq!(
            sinew_mm_database_group(&forged, 0, &mut group),
            sinew_status::InvalidHandle
        );
        assert_eq!(
            sinew_mm_database_group(&h, db.groups().len() as u32, &mut group),
            sinew_status::OutOfRange
        );
        assert_eq!(
            sinew_mm_database_group(&h, 0, std::ptr::null_mut()),
            sinew_status::NullParameter
        );
        assert_eq!(
            sinew_mm_search(
                std::ptr::null(),
                query.as_ptr(),
                fc,
                f32::INFINITY,
                &mut frame,
                &mut c
            ),
            sinew_status::NullParameter
        );
        assert_eq!(
            sinew_mm_frame_features(&forged, 0, feats.as_mut_ptr(), fc),
            sinew_status::InvalidHandle
        );
        let mut raw_out = [0.0f32; 2];
        assert_eq!(
            sinew_mm_normalize(&forged, 0, query.as_ptr(), 2, raw_out.as_mut_ptr(), 2),
            sinew_status::InvalidHandle
        );
    }
    assert_eq!(info, sinew_mm_info::default());
    assert_eq!(group, sinew_mm_group::default());

    // Searches: query length, NULL, misaligned, NaN and infinite values, a
    // NaN bound, missing or overlapping outputs, and no frame below the
    // bound (costs are never below 0).
    for brute in [false, true] {
        let f = if brute {
            sinew_mm_search_brute
        } else {
            sinew_mm_search
        };
        let expect = |s: sinew_status, want: sinew_status, frame: u32, c: f32| {
            assert_eq!(s, want, "brute: {brute}");
            assert_eq!(
                (frame, c.to_bits()),
                (SENTINEL_FRAME, SENTINEL_COST.to_bits())
            );
        };
        let (s, fr, co) = search(&h, &query[..fc - 1], f32::INFINITY, brute);
        expect(s, sinew_status::BadLength, fr, co);
        let (s, fr, co) = search(&h, &[], f32::INFINITY, brute);
        expect(s, sinew_status::BadLength, fr, co);
        for v in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            let mut q = query.clone();
            q[fc / 2] = v;
            let (s, fr, co) = search(&h, &q, f32::INFINITY, brute);
            expect(s, sinew_status::InvalidArgument, fr, co);
        }
        let (s, fr, co) = search(&h, &query, f32::NAN, brute);
        expect(s, sinew_status::InvalidArgument, fr, co);
        for bound in [0.0, -1.0, f32::NEG_INFINITY] {
            let (s, fr, co) = search(&h, &query, bound, brute);
            expect(s, sinew_status::NotFound, fr, co);
        }
        let mut q = vec![0u32; fc + 1];
        let bytes_q: &mut [u8] = bytemuck::cast_slice_mut(&mut q);
        let misaligned = bytes_q[1..].as_ptr().cast::<f32>();
        let mut big = vec![0.0f32; fc + 2];
        let mut frame = SENTINEL_FRAME;
        let mut c = SENTINEL_COST;
        // SAFETY: every pointer is NULL, a live buffer of the length passed
        // (the misaligned one inside `q`), or a local; overlapping outputs
        // point into live buffers.
        unsafe {
            let s = f(&h, std::ptr::null(), fc, f32::INFINITY, &mut frame, &mut c);
            expect(s, sinew_status::NullParameter, frame, c);
            let s = f(&h, misaligned, fc, f32::INFINITY, &mut frame, &mut c);
            expect(s, sinew_status::Misaligned, frame, c);
            let s = f(
                &h,
                query.as_ptr(),
                fc,
                f32::INFINITY,
                std::ptr::null_mut(),
                &mut c,
            );
            expect(s, sinew_status::NullParameter, frame, c);
            let s = f(
                &h,
                query.as_ptr(),
                fc,
                f32::INFINITY,
                &mut frame,
                std::ptr::null_mut(),
            );
            expect(s, sinew_status::NullParameter, frame, c);
            let misaligned_out = bytemuck::cast_slice_mut::<u32, u8>(&mut q)[1..].as_mut_ptr();
            let s = f(
                &h,
                query.as_ptr(),
                fc,
                f32::INFINITY,
                misaligned_out.cast(),
                &mut c,
            );
            expect(s, sinew_status::Misaligned, frame, c);
            // An output inside the query, inside the database, or on the other output.
            big[..fc].copy_from_slice(&query);
            let p = big.as_mut_ptr();
            let s = f(&h, p, fc, f32::INFINITY, &mut frame, p.add(fc - 1));
            expect(s, sinew_status::OverlappingBuffers, frame, c);
            let s = f(&h, p, fc, f32::INFINITY, p.cast(), &mut c);
            expect(s, sinew_status::OverlappingBuffers, frame, c);
            let inside = inside_db(64);
            let s = f(
                &h,
                query.as_ptr(),
                fc,
                f32::INFINITY,
                &mut frame,
                inside.cast(),
            );
            expect(s, sinew_status::OverlappingBuffers, frame, c);
            let s = f(&h, query.as_ptr(), fc, f32::INFINITY, inside.cast(), &mut c);
            expect(s, sinew_status::OverlappingBuffers, frame, c);
            let s = f(&h, query.as_ptr(), fc, f32::INFINITY, p.cast(), p.cast());
            assert_eq!(s, sinew_status::OverlappingBuffers);
            assert_eq!(big[0].to_bits(), query[0].to_bits());
            // Right past the query is fine.
            let s = f(&h, p, fc, f32::INFINITY, p.add(fc).cast(), p.add(fc + 1));
            assert_eq!(s, sinew_status::Ok);
        }
    }

    // Cost: lengths, values, frame past the end, NULL and overlapping output.
    let frames = db.frame_count() as u32;
    assert_eq!(
        cost(&h, &query[1..], 0),
        (sinew_status::BadLength, SENTINEL_COST)
    );
    let mut nan = query.clone();
    nan[0] = f32::NAN;
    assert_eq!(
        cost(&h, &nan, 0),
        (sinew_status::InvalidArgument, SENTINEL_COST)
    );
    assert_eq!(
        cost(&h, &query, frames),
        (sinew_status::OutOfRange, SENTINEL_COST)
    );
    assert_eq!(
        cost(&h, &query, u32::MAX),
        (sinew_status::OutOfRange, SENTINEL_COST)
    );
    assert_eq!(cost(&h, &query, frames - 1).0, sinew_status::Ok);
    let mut big = query.clone();
    big.push(0.0);
    // SAFETY: live buffers of the lengths passed; outputs inside them.
    unsafe {
        let s = sinew_mm_cost(&h, query.as_ptr(), fc, 0, std::ptr::null_mut());
        assert_eq!(s, sinew_status::NullParameter);
        let p = big.as_mut_ptr();
        assert_eq!(
            sinew_mm_cost(&h, p, fc, 0, p.add(3)),
            sinew_status::OverlappingBuffers
        );
        let inside = inside_db(128).cast();
        assert_eq!(
            sinew_mm_cost(&h, p, fc, 0, inside),
            sinew_status::OverlappingBuffers
        );
        assert_eq!(big[3].to_bits(), query[3].to_bits());
    }

    // Normalize: a run past the features, lengths that differ, a NaN,
    // overlaps with the input or the database.
    let raw = vec![0.5f32; fc];
    let mut norm = vec![4.0f32; fc + 1];
    // SAFETY: live buffers of the lengths passed (or shorter prefixes of them).
    unsafe {
        let n = |first: u32, raw: &[f32], out: *mut f32, out_len: usize| {
            sinew_mm_normalize(&h, first, raw.as_ptr(), raw.len(), out, out_len)
        };
        assert_eq!(n(1, &raw, norm.as_mut_ptr(), fc), sinew_status::BadLength);
        assert_eq!(
            n(u32::MAX, &raw[..2], norm.as_mut_ptr(), 2),
            sinew_status::BadLength
        );
        assert_eq!(
            n(0, &raw, norm.as_mut_ptr(), fc + 1),
            sinew_status::BadLength
        );
        assert_eq!(
            n(0, &raw[..0], norm.as_mut_ptr(), 1),
            sinew_status::BadLength
        );
        assert_eq!(
            n(0, &nan[..3], norm.as_mut_ptr(), 3),
            sinew_status::InvalidArgument
        );
        assert_eq!(
            n(0, &raw, std::ptr::null_mut(), fc),
            sinew_status::NullParameter
        );
        let p = norm.as_mut_ptr();
        let s = sinew_mm_normalize(&h, 0, p, 3, p.add(2), 3);
        assert_eq!(s, sinew_status::OverlappingBuffers);
        let inside = inside_db(64).cast();
        assert_eq!(n(0, &raw[..2], inside, 2), sinew_status::OverlappingBuffers);
        assert!(norm.iter().all(|&x| x == 4.0));
        assert_eq!(n(0, &raw[..0], std::ptr::null_mut(), 0), sinew_status::Ok);
    }

    // Frame features: length, frame past the end, inside the database.
    // SAFETY: live buffers of the lengths passed.
    unsafe {
        let s = sinew_mm_frame_features(&h, 0, feats.as_mut_ptr(), fc - 1);
        assert_eq!(s, sinew_status::BadLength);
        let s = sinew_mm_frame_features(&h, frames, feats.as_mut_ptr(), fc);
        assert_eq!(s, sinew_status::OutOfRange);
        let s = sinew_mm_frame_features(&h, 0, std::ptr::null_mut(), fc);
        assert_eq!(s, sinew_status::NullParameter);
        let inside = inside_db(64).cast();
        let s = sinew_mm_frame_features(&h, 0, inside, fc);
        assert_eq!(s, sinew_status::OverlappingBuffers);
        assert!(feats.iter().all(|&x| x == 9.0));
    }

    // Locate: past the end, each output NULL, two outputs the same.
    assert_eq!(
        locate(&h, frames),
        (sinew_status::OutOfRange, [SENTINEL_FRAME; 4])
    );
    let mut o = [SENTINEL_FRAME; 4];
    let p = o.as_mut_ptr();
    // SAFETY: outputs are NULL or inside `o`.
    unsafe {
        let null = std::ptr::null_mut();
        for k in 0..4 {
            let mut outs = [p, p.add(1), p.add(2), p.add(3)];
            outs[k] = null;
            let s = sinew_mm_locate(&h, 0, outs[0], outs[1], outs[2], outs[3]);
            assert_eq!(s, sinew_status::NullParameter);
            outs[k] = p.add((k + 1) % 4);
            let s = sinew_mm_locate(&h, 0, outs[0], outs[1], outs[2], outs[3]);
            assert_eq!(s, sinew_status::OverlappingBuffers);
        }
        let inside = inside_db(64).cast();
        let s = sinew_mm_locate(&h, 0, p, p.add(1), inside, p.add(3));
        assert_eq!(s, sinew_status::OverlappingBuffers);
    }
    assert_eq!(o, [SENTINEL_FRAME; 4]);
}

/// No searchable frame at all: a plain search is NOT_FOUND, and every
/// frame costs +inf.
#[test]
fn a_database_with_nothing_searchable_finds_nothing() {
    let bytes = mm::database(
        3,
        mm::Shape {
            hidden: 1.0,
            ..shape(300)
        },
    );
    let h = loaded(bytes.as_slice());
    let q = vec![0.0f32; h.feature_count as usize];
    for brute in [false, true] {
        let got = search(&h, &q, f32::INFINITY, brute);
        assert_eq!(got, (sinew_status::NotFound, SENTINEL_FRAME, SENTINEL_COST));
    }
    assert_eq!(cost(&h, &q, 299), (sinew_status::Ok, f32::INFINITY));
}

/// The info and group records equal the Rust view's, and the status
/// string of NOT_FOUND exists.
#[test]
fn info_and_groups_describe_the_database() {
    let bytes = mm::database(11, shape(700));
    let db = Database::from_bytes(bytes.as_slice()).unwrap();
    let h = loaded(bytes.as_slice());
    assert_eq!(h.feature_count as usize, db.feature_count());
    assert_eq!(h.frame_count as usize, db.frame_count());
    assert_eq!(
        (h.data, h.size),
        (bytes.as_slice().as_ptr(), bytes.as_slice().len())
    );
    let mut info = sinew_mm_info::default();
    // SAFETY: a loaded handle and a local.
    assert_eq!(
        unsafe { sinew_mm_database_info(&h, &mut info) },
        sinew_status::Ok
    );
    let axis = db.facing_axis();
    assert_eq!(
        info,
        sinew_mm_info {
            feature_count: db.feature_count() as u32,
            frame_count: 700,
            range_count: 3,
            group_count: db.groups().len() as u32,
            sample_rate: 30.0,
            root_joint: 0,
            facing_axis: [axis.x, axis.y, axis.z],
            mirror_axis: 0,
            mirror_joint_count: 5,
        }
    );
    for (i, g) in db.groups().iter().enumerate() {
        let mut out = sinew_mm_group::default();
        // SAFETY: as above.
        assert_eq!(
            unsafe { sinew_mm_database_group(&h, i as u32, &mut out) },
            sinew_status::Ok
        );
        let kind = [
            SINEW_MM_FEATURE_POSITION,
            SINEW_MM_FEATURE_VELOCITY,
            SINEW_MM_FEATURE_TRAJECTORY_POSITION,
            SINEW_MM_FEATURE_TRAJECTORY_DIRECTION,
        ][g.feature_kind() as usize];
        assert_eq!(
            out,
            sinew_mm_group {
                kind,
                joint: g.joint,
                frames_ahead: g.frames_ahead,
                first: g.first,
                width: g.width,
                weight: g.weight,
            }
        );
    }
    let s = sinew_status_string(sinew_status::NotFound as u32);
    // SAFETY: a static NUL-terminated string.
    let text = unsafe { std::ffi::CStr::from_ptr(s) };
    assert_eq!(text.to_str(), Ok("not found"));
}

/// A database whose bytes change after loading is read in bounds: the
/// searches return some status, never a panic.
#[test]
fn bytes_changed_after_loading_never_panic() {
    let mut bytes = mm::database(5, shape(520));
    let h = loaded(bytes.as_slice());
    let q = vec![0.1f32; h.feature_count as usize];
    let n = bytes.as_slice().len();
    for at in (64..n).step_by(97) {
        let b = bytes.as_mut_slice();
        b[at] ^= 0x40;
        for brute in [false, true] {
            assert_ne!(search(&h, &q, f32::INFINITY, brute).0, sinew_status::Panic);
        }
        assert_ne!(locate(&h, 519).0, sinew_status::Panic);
        assert_ne!(cost(&h, &q, 0).0, sinew_status::Panic);
        bytes.as_mut_slice()[at] ^= 0x40;
    }
}

fn db_shape() -> impl Strategy<Value = (u64, mm::Shape)> {
    (
        any::<u64>(),
        1usize..700,
        1usize..6,
        any::<bool>(),
        any::<bool>(),
        prop_oneof![Just(0.0f32), Just(0.3f32), Just(0.97f32)],
    )
        .prop_map(|(seed, frames, ranges, mirrored, ties, hidden)| {
            (
                seed,
                mm::Shape {
                    frames,
                    ranges,
                    mirrored,
                    ties,
                    hidden,
                },
            )
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Both searches, with and without a bound, the costs, a frame's
    /// features, normalization and frame locations through the C ABI give
    /// exactly what the Rust API gives, NOT_FOUND exactly when it finds
    /// nothing.
    #[test]
    fn the_c_abi_is_the_rust_api_bit_for_bit(
        (seed, shape) in db_shape(),
        near in any::<prop::sample::Index>(),
        spread in prop_oneof![Just(0.0f32), 0.0f32..0.5, 1.0f32..4.0],
        bound in prop_oneof![Just(f32::INFINITY), 0.0f32..10.0, Just(0.0f32)],
        run in (any::<prop::sample::Index>(), any::<prop::sample::Index>()),
    ) {
        let bytes = mm::database(seed, shape);
        let db = Database::from_bytes(bytes.as_slice()).unwrap();
        let h = loaded(bytes.as_slice());
        let fc = db.feature_count();
        let frame = near.index(db.frame_count());
        let mut features = vec![0.0f32; fc];
        db.frame_features(frame, &mut features).unwrap();
        let query = mm::query(seed, &features, spread);

        let want = db.search(&query, bound).unwrap();
        prop_assert_eq!(db.search_brute(&query, bound).unwrap(), want);
        for brute in [false, true] {
            let got = search(&h, &query, bound, brute);
            match want {
                Some(m) => prop_assert_eq!(got, (sinew_status::Ok, m.frame, m.cost)),
                None => prop_assert_eq!(got, (sinew_status::NotFound, SENTINEL_FRAME, SENTINEL_COST)),
            }
        }
        for f in [frame as u32, want.map_or(0, |m| m.frame)] {
            let (s, c) = cost(&h, &query, f);
            prop_assert_eq!(s, sinew_status::Ok);
            prop_assert_eq!(c.to_bits(), db.cost(&query, f as usize).unwrap().to_bits());
        }

        let mut c_features = vec![f32::NAN; fc];
        // SAFETY: a loaded handle and a live buffer of its length.
        let s = unsafe { sinew_mm_frame_features(&h, frame as u32, c_features.as_mut_ptr(), fc) };
        prop_assert_eq!(s, sinew_status::Ok);
        prop_assert_eq!(bits(&c_features), bits(&features));

        let (a, b) = (run.0.index(fc + 1), run.1.index(fc + 1));
        let (first, end) = (a.min(b), a.max(b));
        let raw = &query[first..end];
        let mut want_norm = vec![0.0f32; raw.len()];
        db.normalize(first, raw, &mut want_norm).unwrap();
        let mut got_norm = vec![f32::NAN; raw.len()];
        // SAFETY: live buffers of the lengths passed.
        let s = unsafe {
            sinew_mm_normalize(&h, first as u32, raw.as_ptr(), raw.len(), got_norm.as_mut_ptr(), got_norm.len())
        };
        prop_assert_eq!(s, sinew_status::Ok);
        prop_assert_eq!(bits(&got_norm), bits(&want_norm));

        let (range, local) = db.locate(frame).unwrap();
        let r = db.ranges()[range];
        let located = locate(&h, frame as u32);
        prop_assert_eq!(
            located,
            (sinew_status::Ok, [range as u32, local as u32, r.clip, u32::from(r.mirrored())])
        );
    }

    /// Random bytes never load, and the out-parameter stays untouched.
    #[test]
    fn random_bytes_never_load(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let buf = sinew_std::AlignedBytes::copy_from(&bytes);
        let (s, out) = load(buf.as_slice());
        prop_assert_ne!(s, sinew_status::Ok);
        prop_assert_ne!(s, sinew_status::Panic);
        prop_assert_eq!((out.feature_count, out.check), (0xDEAD, 0));
    }

    /// Flipped bits and truncations give a status, never a panic; what
    /// still loads searches as the Rust API does.
    #[test]
    fn flipped_bits_give_a_status_never_a_panic(
        seed in any::<u64>(),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), 0u8..8), 1..4),
        cut in any::<prop::sample::Index>(),
    ) {
        let original = mm::database(seed, shape(300));
        let mut buf = sinew_std::AlignedBytes::copy_from(original.as_slice());
        let bytes = buf.as_mut_slice();
        for (at, bit) in &flips {
            let i = at.index(bytes.len());
            bytes[i] ^= 1 << bit;
        }
        let len = if cut.index(4) == 0 { cut.index(bytes.len()) } else { bytes.len() };
        let view = &buf.as_slice()[..len];
        let (s, h) = load(view);
        prop_assert_ne!(s, sinew_status::Panic);
        prop_assert_eq!(s == sinew_status::Ok, Database::from_bytes(view).is_ok());
        if s == sinew_status::Ok {
            let db = Database::from_bytes(view).unwrap();
            let q = vec![0.3f32; db.feature_count()];
            let want = db.search(&q, f32::INFINITY).unwrap();
            let got = search(&h, &q, f32::INFINITY, false);
            match want {
                Some(m) => prop_assert_eq!(got, (sinew_status::Ok, m.frame, m.cost)),
                None => prop_assert_eq!(got.0, sinew_status::NotFound),
            }
        }
    }
}
