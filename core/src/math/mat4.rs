use core::ops::Mul;

use super::{Quat, Vec3};
use crate::fp::Fp;

/// A 4x4 column-major matrix; `cols[c][r]` is row `r` of column `c`.
///
/// Model-space joint matrices are affine (last row `0 0 0 1`). The type is
/// 16-byte aligned and `Pod`, so slices of it can be handed to a GPU or C as
/// 16 floats per joint.
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C, align(16))]
pub struct Mat4 {
    /// The four columns.
    pub cols: [[f32; 4]; 4],
}

impl Default for Mat4 {
    fn default() -> Self {
        Mat4::IDENTITY
    }
}

impl Mat4 {
    /// The identity matrix.
    pub const IDENTITY: Mat4 = Mat4 {
        cols: [
            [1.0, 0.0, 0.0, 0.0],
            [0.0, 1.0, 0.0, 0.0],
            [0.0, 0.0, 1.0, 0.0],
            [0.0, 0.0, 0.0, 1.0],
        ],
    };

    /// The affine matrix `T * R * S` (scale first, then rotation, then translation).
    #[must_use]
    pub fn from_trs(t: Vec3, q: Quat, s: Vec3) -> Mat4 {
        let (x2, y2, z2) = (q.x + q.x, q.y + q.y, q.z + q.z);
        let (xx, yy, zz) = (q.x * x2, q.y * y2, q.z * z2);
        let (xy, xz, yz) = (q.x * y2, q.x * z2, q.y * z2);
        let (wx, wy, wz) = (q.w * x2, q.w * y2, q.w * z2);
        Mat4 {
            cols: [
                [
                    (1.0 - (yy + zz)) * s.x,
                    (xy + wz) * s.x,
                    (xz - wy) * s.x,
                    0.0,
                ],
                [
                    (xy - wz) * s.y,
                    (1.0 - (xx + zz)) * s.y,
                    (yz + wx) * s.y,
                    0.0,
                ],
                [
                    (xz + wy) * s.z,
                    (yz - wx) * s.z,
                    (1.0 - (xx + yy)) * s.z,
                    0.0,
                ],
                [t.x, t.y, t.z, 1.0],
            ],
        }
    }

    /// A pure translation.
    #[must_use]
    pub fn from_translation(t: Vec3) -> Mat4 {
        let mut m = Mat4::IDENTITY;
        m.cols[3] = [t.x, t.y, t.z, 1.0];
        m
    }

    /// The translation column (the origin of the frame this matrix maps to).
    #[inline]
    #[must_use]
    pub fn translation(&self) -> Vec3 {
        Vec3::new(self.cols[3][0], self.cols[3][1], self.cols[3][2])
    }

    /// The rotation of the 3x3 part and its scale along the rotated axes:
    /// Gram-Schmidt on the columns (x from column 0, y from column 1 made
    /// orthogonal to it, z = x × y; the z scale takes the sign of a
    /// reflection), then the unit quaternion (`w >= 0`) built around its
    /// largest component (Shepperd). Shear is dropped.
    #[must_use]
    pub fn rotation_and_scale(&self) -> (Quat, Vec3) {
        let col = |c: usize| Vec3::new(self.cols[c][0], self.cols[c][1], self.cols[c][2]);
        let (c0, c1, c2) = (col(0), col(1), col(2));
        let s0 = c0.length();
        let x = c0 * (1.0 / s0);
        let y1 = c1 - x * x.dot(c1);
        let s1 = y1.length();
        let y = y1 * (1.0 / s1);
        let z = x.cross(y);
        let s2 = z.dot(c2);
        let (m00, m10, m20) = (x.x, x.y, x.z);
        let (m01, m11, m21) = (y.x, y.y, y.z);
        let (m02, m12, m22) = (z.x, z.y, z.z);
        let tw = 1.0 + m00 + m11 + m22;
        let tx = 1.0 + m00 - m11 - m22;
        let ty = 1.0 - m00 + m11 - m22;
        let tz = 1.0 - m00 - m11 + m22;
        let mut v = Quat::new(m21 - m12, m02 - m20, m10 - m01, tw);
        let mut best = tw;
        if tx > best {
            v = Quat::new(tx, m01 + m10, m02 + m20, m21 - m12);
            best = tx;
        }
        if ty > best {
            v = Quat::new(m01 + m10, ty, m12 + m21, m02 - m20);
            best = ty;
        }
        if tz > best {
            v = Quat::new(m02 + m20, m12 + m21, tz, m10 - m01);
        }
        let mut q = v.normalize();
        if q.w < 0.0 {
            q = -q;
        }
        (q, Vec3::new(s0, s1, s2))
    }

    /// The rotation of the 3x3 part (see [`Mat4::rotation_and_scale`]).
    #[inline]
    #[must_use]
    pub fn rotation(&self) -> Quat {
        self.rotation_and_scale().0
    }

    /// Element at row `r`, column `c`.
    #[inline]
    #[must_use]
    pub fn at(&self, r: usize, c: usize) -> f32 {
        self.cols[c][r]
    }

    /// Transforms a point (w = 1).
    #[inline]
    #[must_use]
    pub fn transform_point(&self, p: Vec3) -> Vec3 {
        let c = &self.cols;
        Vec3::new(
            c[0][0] * p.x + c[1][0] * p.y + c[2][0] * p.z + c[3][0],
            c[0][1] * p.x + c[1][1] * p.y + c[2][1] * p.z + c[3][1],
            c[0][2] * p.x + c[1][2] * p.y + c[2][2] * p.z + c[3][2],
        )
    }

    /// Transforms a direction (w = 0).
    #[inline]
    #[must_use]
    pub fn transform_vector(&self, v: Vec3) -> Vec3 {
        let c = &self.cols;
        Vec3::new(
            c[0][0] * v.x + c[1][0] * v.y + c[2][0] * v.z,
            c[0][1] * v.x + c[1][1] * v.y + c[2][1] * v.z,
            c[0][2] * v.x + c[1][2] * v.y + c[2][2] * v.z,
        )
    }

    /// Inverse of an affine matrix (last row `0 0 0 1`), or `None` when the
    /// 3x3 part is singular (|det| below 1e-12), the input is not finite, or
    /// the inverse overflows to infinity.
    #[must_use]
    pub fn inverse_affine(&self) -> Option<Mat4> {
        let c = &self.cols;
        let (a, b, cc) = (c[0], c[1], c[2]);
        // Rows of the inverse 3x3 are the cross products of the columns / det.
        let r0 = cross(b, cc);
        let r1 = cross(cc, a);
        let r2 = cross(a, b);
        let det = a[0] * r0[0] + a[1] * r0[1] + a[2] * r0[2];
        if !det.is_finite() || libm::fabsf(det) < 1e-12 {
            return None;
        }
        let inv = 1.0 / det;
        let t = [c[3][0], c[3][1], c[3][2]];
        let row = |r: [f32; 3]| [r[0] * inv, r[1] * inv, r[2] * inv];
        let (r0, r1, r2) = (row(r0), row(r1), row(r2));
        let dot = |r: [f32; 3]| r[0] * t[0] + r[1] * t[1] + r[2] * t[2];
        let inverse = Mat4 {
            cols: [
                [r0[0], r1[0], r2[0], 0.0],
                [r0[1], r1[1], r2[1], 0.0],
                [r0[2], r1[2], r2[2], 0.0],
                [-dot(r0), -dot(r1), -dot(r2), 1.0],
            ],
        };
        (self.is_finite() && inverse.is_finite()).then_some(inverse)
    }

    /// Largest absolute difference between corresponding elements.
    #[must_use]
    pub fn max_abs_diff(&self, o: &Mat4) -> f32 {
        let mut m = 0.0f32;
        for c in 0..4 {
            for r in 0..4 {
                m = m.max_num(libm::fabsf(self.cols[c][r] - o.cols[c][r]));
            }
        }
        m
    }

    /// The four columns as SIMD lanes.
    #[inline(always)]
    pub(crate) fn to_lanes(self) -> [wide::f32x4; 4] {
        self.cols.map(wide::f32x4::new)
    }

    /// A matrix from four SIMD columns.
    #[inline(always)]
    pub(crate) fn from_lanes(c: [wide::f32x4; 4]) -> Mat4 {
        Mat4 {
            cols: c.map(wide::f32x4::to_array),
        }
    }

    /// True when every element is finite.
    #[must_use]
    pub fn is_finite(&self) -> bool {
        self.cols.iter().flatten().all(|v| v.is_finite())
    }
}

#[inline]
fn cross(a: [f32; 4], b: [f32; 4]) -> [f32; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

impl Mul for Mat4 {
    type Output = Mat4;
    /// Matrix product `self * b` (apply `b` first).
    #[inline]
    fn mul(self, b: Mat4) -> Mat4 {
        let mut out = [[0.0f32; 4]; 4];
        for (c, col) in out.iter_mut().enumerate() {
            for (r, v) in col.iter_mut().enumerate() {
                *v = self.cols[0][r] * b.cols[c][0]
                    + self.cols[1][r] * b.cols[c][1]
                    + self.cols[2][r] * b.cols[c][2]
                    + self.cols[3][r] * b.cols[c][3];
            }
        }
        Mat4 { cols: out }
    }
}
