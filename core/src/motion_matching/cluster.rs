//! The slot order that makes the box tree prune: similar frames side by
//! side, so that every box of the tree is small.
//!
//! Frames kept in time order fill a 16-frame box with a quarter second of
//! motion, whose foot velocities and trajectory sweep most of their range,
//! and a database grown from copies of its clips holds each stretch of
//! motion once per copy, far apart. Splitting instead as a k-d tree does
//! (each box's frames cut at the median of their widest feature, twice,
//! into the four children the tree stores) groups frames by what they look
//! like, wherever they come from.

use super::database::{MAX_FEATURES, MAX_FRAMES, SMALL_BOX};
use crate::error::Error;

/// Writes into `order` the slot order for a database of these frames:
/// searchable frames first, split recursively so that every box of the
/// tree (16 slots times a power of four, aligned) holds frames close to one
/// another, each leaf's frames in frame order; then the unsearchable frames
/// in frame order. `features` is row-major (`features[frame × F + f]`),
/// as [`DatabaseDesc::features`](super::DatabaseDesc::features). The
/// result depends only on the input; nothing is allocated. O(frames ×
/// features × tree levels).
///
/// # Errors
/// [`Error::BadLength`] when `features` or `order` does not fit
/// `searchable`'s frames; [`Error::InvalidParameter`] for 0 or more than
/// [`MAX_FEATURES`] features, or more than [`MAX_FRAMES`] frames.
pub fn cluster_order(
    features: &[f32],
    feature_count: usize,
    searchable: &[bool],
    order: &mut [u32],
) -> Result<(), Error> {
    let frames = searchable.len();
    if feature_count == 0 || feature_count > MAX_FEATURES {
        return Err(Error::InvalidParameter {
            what: "database feature count is 0 or above 256",
        });
    }
    if frames > MAX_FRAMES {
        return Err(Error::InvalidParameter {
            what: "database has too many frames",
        });
    }
    crate::soa::check_len("order", frames, order.len())?;
    crate::soa::check_len("features", frames * feature_count, features.len())?;
    let count = searchable.iter().filter(|&&s| s).count();
    let (mut yes, mut no) = (0, count);
    for (i, &s) in searchable.iter().enumerate() {
        let next = if s { &mut yes } else { &mut no };
        order[*next] = i as u32;
        *next += 1;
    }
    let mut size = SMALL_BOX;
    while size < count {
        size *= 4;
    }
    let split = Split {
        features,
        feature_count,
    };
    split.node(&mut order[..count], size);
    Ok(())
}

struct Split<'a> {
    features: &'a [f32],
    feature_count: usize,
}

impl Split<'_> {
    /// Orders `frames`, the contents of a box of `size` slots: halves of
    /// two children each, then quarters, then each quarter as a box.
    fn node(&self, frames: &mut [u32], size: usize) {
        if size <= SMALL_BOX || frames.len() <= SMALL_BOX {
            frames.sort_unstable();
            return;
        }
        let child = size / 4;
        self.halve(frames, 2 * child);
        let (a, b) = frames.split_at_mut(frames.len().min(2 * child));
        self.halve(a, child);
        self.halve(b, child);
        for part in frames.chunks_mut(child) {
            self.node(part, child);
        }
    }

    /// Puts the `at` frames lowest along the widest feature first (ties by
    /// frame, so the sets do not depend on the selection algorithm).
    fn halve(&self, frames: &mut [u32], at: usize) {
        if frames.len() <= at {
            return;
        }
        let fc = self.feature_count;
        let value = |frame: u32, f: usize| self.features[frame as usize * fc + f];
        let (mut widest, mut extent) = (0, f32::NEG_INFINITY);
        for f in 0..fc {
            let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
            for &frame in frames.iter() {
                lo = lo.min(value(frame, f));
                hi = hi.max(value(frame, f));
            }
            if hi - lo > extent {
                (widest, extent) = (f, hi - lo);
            }
        }
        frames.select_nth_unstable_by(at, |&a, &b| {
            value(a, widest)
                .total_cmp(&value(b, widest))
                .then(a.cmp(&b))
        });
    }
}
