//! The scalar twin of [`DeltaMush::deform`]: the readable specification,
//! written from the formulas with [`Vec3`] (no lanes, no shared helpers).

use super::DeltaMush;
use crate::error::Error;
use crate::math::Vec3;

fn vec(p: [f32; 4]) -> Vec3 {
    Vec3::new(p[0], p[1], p[2])
}

fn put(p: Vec3) -> [f32; 4] {
    [p.x, p.y, p.z, 0.0]
}

/// [`DeltaMush::deform`], one vertex and one coordinate at a time: the
/// same results within 1e-5 (the lane path sums the same neighbours in the
/// same order; only the frame arithmetic is written differently).
///
/// # Errors
/// Those of [`DeltaMush::deform`]. On error nothing is written.
pub fn deform(
    mush: &DeltaMush<'_>,
    skinned: &[[f32; 3]],
    scratch: &mut [[f32; 4]],
    out: &mut [[f32; 3]],
) -> Result<(), Error> {
    mush.check_buffers(skinned, scratch, out)?;
    let adj = mush.adjacency();
    let n = mush.vertex_count();
    let (mut cur, mut next) = scratch.split_at_mut(n);
    for (c, s) in cur.iter_mut().zip(skinned) {
        *c = [s[0], s[1], s[2], 0.0];
    }
    // Laplacian smoothing: p' = p + s (mean of neighbours - p).
    for _ in 0..mush.settings().iterations {
        for (v, nx) in next.iter_mut().enumerate() {
            let p = vec(cur[v]);
            let nb = adj.neighbours(v);
            *nx = if nb.is_empty() {
                put(p)
            } else {
                let mut sum = Vec3::ZERO;
                for &j in nb {
                    sum = sum + vec(cur[j as usize]);
                }
                let mean = sum * (1.0 / nb.len() as f32);
                put(p + (mean - p) * mush.settings().step)
            };
        }
        core::mem::swap(&mut cur, &mut next);
    }
    // Area-weighted vertex normals of the smoothed mesh.
    let normal = &mut next;
    normal.fill([0.0; 4]);
    for t in mush.triangles().chunks_exact(3) {
        let (a, b, c) = (t[0] as usize, t[1] as usize, t[2] as usize);
        let f = (vec(cur[b]) - vec(cur[a])).cross(vec(cur[c]) - vec(cur[a]));
        for i in [a, b, c] {
            normal[i] = put(vec(normal[i]) + f);
        }
    }
    for (v, o) in out.iter_mut().enumerate() {
        let s = Vec3::new(skinned[v][0], skinned[v][1], skinned[v][2]);
        let d = mush.deltas()[v];
        let p = vec(cur[v]);
        let n = vec(normal[v]);
        let first = adj.neighbours(v).first().map(|&j| vec(cur[j as usize]));
        let mut x = s;
        if let (Some(q), true) = (first, n.length() > 1e-12 && d[3] > 0.0) {
            let n = n * (1.0 / n.length());
            let e = q - p;
            let t = e - n * e.dot(n);
            if t.length_squared() > 1e-12 * e.length_squared() {
                let t = t * (1.0 / t.length());
                let b = n.cross(t);
                let mushed = p + t * d[0] + b * d[1] + n * d[2];
                x = s + (mushed - s) * d[3];
            }
        }
        *o = x.to_array();
    }
    Ok(())
}
