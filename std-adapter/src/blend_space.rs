//! Offline 2D blend-space build: Delaunay triangulation of the samples
//! (Bowyer–Watson in f64), emitted as the core's fixed-capacity
//! [`BlendSpace2D`].

use std::collections::HashSet;

use sinew_core::mix::BlendSpace2D;
use sinew_core::Error;

/// Delaunay triangles (counter-clockwise vertex indices) of `points`.
///
/// Cocircular points (e.g. a grid) get one of the valid triangulations,
/// chosen deterministically by input order.
///
/// # Errors
/// [`Error::EmptyBlendSpace`] (no points), [`Error::NonFinite`],
/// [`Error::DuplicateSample`], [`Error::DegenerateBlendSpace`] (fewer than 3
/// points or all collinear), [`Error::CapacityExceeded`] (more than 65535).
pub fn delaunay(points: &[[f32; 2]]) -> Result<Vec<[u16; 3]>, Error> {
    if points.is_empty() {
        return Err(Error::EmptyBlendSpace);
    }
    if points.len() > u16::MAX as usize {
        return Err(Error::CapacityExceeded {
            capacity: u16::MAX as usize,
        });
    }
    if !points.iter().flatten().all(|v| v.is_finite()) {
        return Err(Error::NonFinite {
            what: "blend-space position",
        });
    }
    for i in 0..points.len() {
        for k in i + 1..points.len() {
            if points[i] == points[k] {
                return Err(Error::DuplicateSample {
                    first: i,
                    second: k,
                });
            }
        }
    }
    let p: Vec<[f64; 2]> = points.iter().map(|q| [q[0] as f64, q[1] as f64]).collect();
    // Collinear (or fewer than 3): no triangle has area.
    let (min, max) = bounds(&p);
    let extent = (max[0] - min[0]).max(max[1] - min[1]).max(1e-12);
    let a = p[0];
    let far = (1..p.len())
        .max_by(|&i, &k| dist2(a, p[i]).total_cmp(&dist2(a, p[k])))
        .unwrap_or(0);
    let collinear = p
        .iter()
        .all(|&c| orient(a, p[far], c).abs() <= 1e-9 * extent * extent);
    if p.len() < 3 || collinear {
        return Err(Error::DegenerateBlendSpace);
    }
    // Bowyer–Watson with a super triangle far outside the points.
    let n = p.len();
    let c = [(min[0] + max[0]) * 0.5, (min[1] + max[1]) * 0.5];
    let big = extent * 1e4;
    let mut v = p.clone();
    v.push([c[0] - 2.0 * big, c[1] - big]);
    v.push([c[0] + 2.0 * big, c[1] - big]);
    v.push([c[0], c[1] + 2.0 * big]);
    let mut tris: Vec<[usize; 3]> = vec![[n, n + 1, n + 2]];
    for i in 0..n {
        let q = v[i];
        let (bad, good): (Vec<[usize; 3]>, Vec<[usize; 3]>) =
            tris.iter().partition(|t| in_circumcircle(&v, t, q, extent));
        let mut edges: Vec<[usize; 2]> = Vec::new();
        for t in &bad {
            for e in 0..3 {
                let edge = [t[e], t[(e + 1) % 3]];
                let shared = bad.iter().any(|o| {
                    o != t && (0..3).any(|k| o[k] == edge[1] && o[(k + 1) % 3] == edge[0])
                });
                if !shared {
                    edges.push(edge);
                }
            }
        }
        tris = good;
        for e in edges {
            tris.push([e[0], e[1], i]);
        }
    }
    tris.retain(|t| t.iter().all(|&k| k < n));
    fill_to_hull(&p, &mut tris, extent);
    let out: Vec<[u16; 3]> = tris
        .into_iter()
        .filter(|t| orient(v[t[0]], v[t[1]], v[t[2]]).abs() > 1e-12 * extent * extent)
        .map(|t| t.map(|k| k as u16))
        .collect();
    if out.is_empty() {
        return Err(Error::DegenerateBlendSpace);
    }
    Ok(out)
}

/// Builds the core's 2D blend space: samples at `points` play `clips`.
///
/// # Errors
/// As [`delaunay`] and [`BlendSpace2D::new`] (e.g. [`Error::CapacityExceeded`]
/// when there are more than `S` samples or `T` triangles).
pub fn build_2d<const S: usize, const T: usize>(
    points: &[[f32; 2]],
    clips: &[usize],
) -> Result<BlendSpace2D<S, T>, Error> {
    let tris = delaunay(points)?;
    BlendSpace2D::new(points, clips, &tris)
}

/// Adds the triangles that close the triangulation's outline over the
/// convex hull. The super triangle of Bowyer–Watson is finite, so a
/// sliver along the hull (a point just inside a long hull edge) can have a
/// super vertex inside its circumcircle and be lost with the super
/// triangle's fan, leaving a thin gap at the hull that no query would
/// find (the test `delaunay_covers_a_point_just_inside_a_hull_edge` holds
/// such a point). Every reflex corner `u → v → w` of the
/// outline (counter-clockwise) whose triangle holds no other point is
/// closed with the triangle `u w v`, until the outline is convex.
fn fill_to_hull(p: &[[f64; 2]], tris: &mut Vec<[usize; 3]>, extent: f64) {
    let ccw = |t: &[usize; 3]| {
        if orient(p[t[0]], p[t[1]], p[t[2]]) < 0.0 {
            [t[0], t[2], t[1]]
        } else {
            *t
        }
    };
    let eps = 1e-12 * extent * extent;
    // Each round closes one corner; an outline has fewer corners than
    // there are points.
    for _ in 0..p.len() {
        let directed: HashSet<[usize; 2]> = tris
            .iter()
            .map(ccw)
            .flat_map(|t| [[t[0], t[1]], [t[1], t[2]], [t[2], t[0]]])
            .collect();
        let mut outline: Vec<[usize; 2]> = directed
            .iter()
            .filter(|e| !directed.contains(&[e[1], e[0]]))
            .copied()
            .collect();
        // Deterministic order (the set's is not), and the edges leaving a
        // vertex side by side.
        outline.sort_unstable();
        let corner = outline.iter().find_map(|&[u, v]| {
            let leaving = &outline[outline.partition_point(|e| e[0] < v)..];
            leaving
                .iter()
                .take_while(|e| e[0] == v)
                .find_map(|&[_, w]| {
                    let (a, b, c) = (p[u], p[v], p[w]);
                    let empty = || {
                        (0..p.len())
                            .filter(|&k| k != u && k != v && k != w)
                            .all(|k| {
                                let q = p[k];
                                !(orient(a, c, q) > 0.0
                                    && orient(c, b, q) > 0.0
                                    && orient(b, a, q) > 0.0)
                            })
                    };
                    (w != u && orient(a, b, c) < -eps && empty()).then_some([u, w, v])
                })
        });
        match corner {
            Some(t) => tris.push(t),
            None => return,
        }
    }
}

fn bounds(p: &[[f64; 2]]) -> ([f64; 2], [f64; 2]) {
    p.iter().fold(
        ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]),
        |(lo, hi), q| {
            (
                [lo[0].min(q[0]), lo[1].min(q[1])],
                [hi[0].max(q[0]), hi[1].max(q[1])],
            )
        },
    )
}

fn dist2(a: [f64; 2], b: [f64; 2]) -> f64 {
    (a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)
}

/// Twice the signed area of `abc` (positive counter-clockwise).
fn orient(a: [f64; 2], b: [f64; 2], c: [f64; 2]) -> f64 {
    (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
}

/// True when `q` is strictly inside the circumcircle of `t` (counter-clockwise).
fn in_circumcircle(v: &[[f64; 2]], t: &[usize; 3], q: [f64; 2], extent: f64) -> bool {
    let (mut a, mut b, c) = (v[t[0]], v[t[1]], v[t[2]]);
    if orient(a, b, c) < 0.0 {
        std::mem::swap(&mut a, &mut b);
    }
    let row = |p: [f64; 2]| {
        let (dx, dy) = (p[0] - q[0], p[1] - q[1]);
        [dx, dy, dx * dx + dy * dy]
    };
    let (ra, rb, rc) = (row(a), row(b), row(c));
    let det = ra[0] * (rb[1] * rc[2] - rb[2] * rc[1]) - ra[1] * (rb[0] * rc[2] - rb[2] * rc[0])
        + ra[2] * (rb[0] * rc[1] - rb[1] * rc[0]);
    // Points on the circle are not inside (a tolerance relative to the scale).
    det > 1e-10 * extent.powi(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn area(points: &[[f32; 2]], tris: &[[u16; 3]]) -> f64 {
        tris.iter()
            .map(|t| {
                let [a, b, c] = t.map(|k| {
                    let p = points[k as usize];
                    [p[0] as f64, p[1] as f64]
                });
                orient(a, b, c).abs() * 0.5
            })
            .sum()
    }

    #[test]
    fn grid_of_nine_covers_the_square() {
        let pts: Vec<[f32; 2]> = (0..9).map(|i| [(i % 3) as f32, (i / 3) as f32]).collect();
        let t = delaunay(&pts).unwrap();
        assert_eq!(t.len(), 8);
        assert!((area(&pts, &t) - 4.0).abs() < 1e-9);
    }

    #[test]
    fn errors() {
        assert_eq!(delaunay(&[]), Err(Error::EmptyBlendSpace));
        assert_eq!(
            delaunay(&[[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]),
            Err(Error::DegenerateBlendSpace)
        );
        assert_eq!(
            delaunay(&[[0.0, 0.0], [1.0, 0.0]]),
            Err(Error::DegenerateBlendSpace)
        );
        assert_eq!(
            delaunay(&[[0.0, 0.0], [1.0, 0.0], [0.0, 0.0]]),
            Err(Error::DuplicateSample {
                first: 0,
                second: 2
            })
        );
    }
}
