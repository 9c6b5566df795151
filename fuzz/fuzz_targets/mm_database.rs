//! A motion-matching database container (`SINEWMMD`): input = the
//! container. `Database::from_bytes` returns an error or a database that
//! `from_validated_bytes` accepts too and that searches exactly: for a
//! fixed query, the pruned search, the lane brute force and the scalar
//! reference return the same frame and cost bit for bit (with no bound,
//! with a bound above the best cost, and none with the best cost as the
//! bound); the frame is searchable, `cost` of it is the search's cost, and
//! `locate` places it in a range; its own features as a query cost 0.
//! Through the C ABI, `sinew_mm_database_load` succeeds exactly when
//! `from_bytes` does, and `sinew_mm_search` gives the same frame and cost
//! (`SINEW_STATUS_NOT_FOUND` exactly when the Rust search finds nothing).
#![no_main]

use libfuzzer_sys::fuzz_target;
use sinew::*;
use sinew_core::motion_matching::search::reference;
use sinew_core::motion_matching::{Database, Match};

/// A query no container can know in advance: `(7f mod 11) / 4 - 1.25`.
fn fixed_query(features: usize) -> Vec<f32> {
    (0..features)
        .map(|f| ((f * 7) % 11) as f32 * 0.25 - 1.25)
        .collect()
}

/// Every search agrees on `query` under `bound`; returns their match.
fn searches_agree(db: &Database<'_>, query: &[f32], bound: f32) -> Option<Match> {
    let pruned = db
        .search(query, bound)
        .expect("a query of the right length");
    let brute = db
        .search_brute(query, bound)
        .expect("a query of the right length");
    let scalar = reference::search(db, query, bound).expect("a query of the right length");
    assert_eq!(
        pruned, brute,
        "pruned and brute-force searches differ (bound {bound})"
    );
    assert_eq!(
        brute, scalar,
        "lane and scalar searches differ (bound {bound})"
    );
    pruned
}

/// The C ABI's search of `db`'s bytes: its status, frame and cost.
fn c_search(bytes: &[u8], query: &[f32]) -> (sinew_status, Option<(u32, f32)>) {
    let mut h = sinew_mm_database {
        data: core::ptr::null(),
        size: 0,
        feature_count: 0,
        frame_count: 0,
        check: 0,
    };
    // SAFETY: live, 16-byte aligned bytes of their length that outlive the
    // handle; the out-parameter is a local.
    let s = unsafe { sinew_mm_database_load(bytes.as_ptr(), bytes.len(), &mut h) };
    if s != sinew_status::Ok {
        assert_eq!(h.check, 0, "a failed load wrote its handle");
        return (s, None);
    }
    let (mut frame, mut cost) = (u32::MAX, -1.0f32);
    // SAFETY: a loaded handle, a live query of its length and local outputs.
    let s = unsafe {
        sinew_mm_search(
            &h,
            query.as_ptr(),
            query.len(),
            f32::INFINITY,
            &mut frame,
            &mut cost,
        )
    };
    match s {
        sinew_status::Ok => (s, Some((frame, cost))),
        sinew_status::NotFound => {
            assert_eq!(
                (frame, cost),
                (u32::MAX, -1.0),
                "NOT_FOUND wrote its outputs"
            );
            (s, None)
        }
        other => panic!("sinew_mm_search on a loaded database: {other:?}"),
    }
}

fuzz_target!(|data: &[u8]| {
    let bytes = sinew_fuzz::aligned(data);
    let bytes = bytes.as_slice();
    let Ok(db) = Database::from_bytes(bytes) else {
        let (s, _) = c_search(bytes, &[]);
        assert_ne!(
            s,
            sinew_status::Ok,
            "the C ABI loads what from_bytes refuses"
        );
        assert_ne!(s, sinew_status::Panic);
        return;
    };
    assert!(Database::from_validated_bytes(bytes).is_ok());
    let query = fixed_query(db.feature_count());
    let best = searches_agree(&db, &query, f32::INFINITY);
    let (s, found) = c_search(bytes, &query);
    assert_eq!(
        found,
        best.map(|m| (m.frame, m.cost)),
        "C ABI search ({s:?})"
    );
    let Some(best) = best else {
        // Nothing searchable, or every searchable frame's cost overflowed.
        let inf = |i: usize| db.cost(&query, i).unwrap() == f32::INFINITY;
        assert!(
            (0..db.frame_count()).all(inf),
            "no match, but a finite cost"
        );
        return;
    };
    let frame = best.frame as usize;
    assert!(db.is_searchable(frame), "frame {frame} is not searchable");
    assert_eq!(
        db.cost(&query, frame).unwrap().to_bits(),
        best.cost.to_bits()
    );
    assert!(best.cost >= 0.0);
    let (range, local) = db.locate(frame).expect("a frame below the count");
    let r = db.ranges()[range];
    assert!(r.start as usize + local == frame && local < r.len as usize);
    assert_eq!(searches_agree(&db, &query, best.cost), None);
    assert_eq!(
        searches_agree(&db, &query, best.cost * 2.0 + 1.0),
        Some(best)
    );

    let mut own = vec![0.0f32; db.feature_count()];
    db.frame_features(frame, &mut own).unwrap();
    let exact = searches_agree(&db, &own, f32::INFINITY).expect("the frame itself");
    // The frame costs 0 against its own features, and of equal costs the
    // lowest frame wins.
    assert!(exact.cost == 0.0 && exact.frame <= best.frame);
    assert_eq!(db.cost(&own, frame).unwrap(), 0.0);
});
