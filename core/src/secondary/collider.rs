//! Collision shapes for secondary motion: spheres, capsules and planes.
//!
//! A [`JointCollider`] is a shape described in a joint's frame; each frame
//! [`place`] moves a list of them into model space with the joints' model
//! matrices, giving [`Collider`]s that spring bones, cloth and particles push
//! their particles out of with [`Collider::push_out`].
//!
//! Shapes are solid: a particle of radius `r` collides with a sphere of
//! radius `R` when its centre is closer than `R + r` to the sphere's centre,
//! with a capsule when it is closer than `R + r` to the capsule's segment,
//! and with a plane when it is less than `r` above it (the plane's solid side
//! is the half-space behind its normal).

use crate::math::{Mat4, Vec3};
use crate::Error;

/// A collision shape in model space.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Collider {
    /// A ball.
    Sphere {
        /// Centre.
        center: Vec3,
        /// Radius (≥ 0).
        radius: f32,
    },
    /// The points within `radius` of the segment `a`–`b`.
    Capsule {
        /// One end of the axis.
        a: Vec3,
        /// The other end of the axis.
        b: Vec3,
        /// Radius (≥ 0).
        radius: f32,
    },
    /// The half-space `dot(normal, p) <= offset`; `normal` is unit length.
    Plane {
        /// Unit normal, pointing out of the solid side.
        normal: Vec3,
        /// Signed distance of the plane from the origin along `normal`.
        offset: f32,
    },
}

/// The contact of a particle with a collider: where to move it and the
/// surface normal there.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Contact {
    /// The particle's centre moved onto the surface (at its radius).
    pub position: Vec3,
    /// Unit normal of the surface at the contact, pointing out of the shape.
    pub normal: Vec3,
    /// How far the particle was inside (> 0).
    pub depth: f32,
}

impl Collider {
    /// A plane through `point` with (not necessarily unit) normal `normal`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a zero or non-finite normal,
    /// [`Error::NonFinite`] for a non-finite point.
    pub fn plane(point: Vec3, normal: Vec3) -> Result<Collider, Error> {
        if !point.is_finite() {
            return Err(Error::NonFinite {
                what: "plane point",
            });
        }
        let normal =
            normal
                .try_normalize()
                .filter(|n| n.is_finite())
                .ok_or(Error::InvalidParameter {
                    what: "plane normal must be finite and non-zero",
                })?;
        Ok(Collider::Plane {
            normal,
            offset: normal.dot(point),
        })
    }

    /// Checks that every number is finite, radii are not negative and a
    /// plane's normal is unit length (within 1e-3).
    ///
    /// # Errors
    /// [`Error::NonFinite`] or [`Error::InvalidParameter`] saying which.
    pub fn validate(&self) -> Result<(), Error> {
        let finite = match *self {
            Collider::Sphere { center, radius } => center.is_finite() && radius.is_finite(),
            Collider::Capsule { a, b, radius } => {
                a.is_finite() && b.is_finite() && radius.is_finite()
            }
            Collider::Plane { normal, offset } => normal.is_finite() && offset.is_finite(),
        };
        if !finite {
            return Err(Error::NonFinite { what: "collider" });
        }
        match *self {
            Collider::Sphere { radius, .. } | Collider::Capsule { radius, .. } if radius < 0.0 => {
                Err(Error::InvalidParameter {
                    what: "collider radius must not be negative",
                })
            }
            Collider::Plane { normal, .. } if (normal.length_squared() - 1.0).abs() > 1e-3 => {
                Err(Error::InvalidParameter {
                    what: "plane normal must be unit length",
                })
            }
            _ => Ok(()),
        }
    }

    /// The contact of a particle of radius `radius` centred at `p`, or `None`
    /// when it does not touch the shape.
    ///
    /// A particle exactly at a sphere's centre or on a capsule's axis has no
    /// defined direction out; it is pushed along +Y (the usual up axis), so the
    /// result stays finite.
    #[inline]
    pub fn push_out(&self, p: Vec3, radius: f32) -> Option<Contact> {
        match *self {
            Collider::Sphere { center, radius: r } => push_from_point(p, center, r + radius),
            Collider::Capsule { a, b, radius: r } => {
                push_from_point(p, closest_on_segment(p, a, b), r + radius)
            }
            Collider::Plane { normal, offset } => {
                let depth = offset + radius - normal.dot(p);
                (depth > 0.0).then(|| Contact {
                    position: p + normal * depth,
                    normal,
                    depth,
                })
            }
        }
    }

    /// This shape moved by an affine matrix (a joint's model matrix).
    /// Radii are scaled by the largest axis scale of the matrix, so a
    /// uniformly scaled joint scales its shapes exactly.
    pub fn transformed(&self, m: &Mat4) -> Collider {
        match *self {
            Collider::Sphere { center, radius } => Collider::Sphere {
                center: m.transform_point(center),
                radius: radius * max_scale(m),
            },
            Collider::Capsule { a, b, radius } => Collider::Capsule {
                a: m.transform_point(a),
                b: m.transform_point(b),
                radius: radius * max_scale(m),
            },
            Collider::Plane { normal, offset } => {
                let point = m.transform_point(normal * offset);
                // Normals transform by the inverse transpose; for the
                // rotation-and-uniform-scale matrices of a skeleton the
                // rotation alone gives the direction.
                let n = m.rotation().rotate(normal);
                Collider::Plane {
                    normal: n,
                    offset: n.dot(point),
                }
            }
        }
    }
}

/// A shape fixed to a joint: `shape` is in the joint's frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointCollider {
    /// The joint the shape follows.
    pub joint: u16,
    /// The shape in the joint's frame.
    pub shape: Collider,
}

/// Moves joint-attached shapes into model space: `out[i]` is `colliders[i]`
/// transformed by the model matrix of its joint.
///
/// # Errors
/// [`Error::BadLength`] when `out` is shorter than `colliders`,
/// [`Error::JointOutOfRange`] for a joint outside `models`, and what
/// [`Collider::validate`] reports for a bad shape.
pub fn place(
    colliders: &[JointCollider],
    models: &[Mat4],
    out: &mut [Collider],
) -> Result<(), Error> {
    if out.len() < colliders.len() {
        return Err(Error::BadLength {
            buffer: "placed colliders",
            expected: colliders.len(),
            actual: out.len(),
        });
    }
    for c in colliders {
        c.shape.validate()?;
        if usize::from(c.joint) >= models.len() {
            return Err(Error::JointOutOfRange {
                joint: c.joint.into(),
                count: models.len(),
            });
        }
    }
    for (c, o) in colliders.iter().zip(out.iter_mut()) {
        *o = c.shape.transformed(&models[usize::from(c.joint)]);
    }
    Ok(())
}

/// The point of segment `a`–`b` closest to `p` (`a` for a degenerate one).
#[inline]
pub fn closest_on_segment(p: Vec3, a: Vec3, b: Vec3) -> Vec3 {
    let ab = b - a;
    let len2 = ab.length_squared();
    if len2 <= f32::MIN_POSITIVE {
        return a;
    }
    let t = ((p - a).dot(ab) / len2).clamp(0.0, 1.0);
    a + ab * t
}

#[inline]
fn push_from_point(p: Vec3, center: Vec3, reach: f32) -> Option<Contact> {
    let d = p - center;
    let dist2 = d.length_squared();
    if dist2 >= reach * reach {
        return None;
    }
    let dist = crate::math::sqrt_f32(dist2);
    let normal = if dist > 1e-12 {
        d * (1.0 / dist)
    } else {
        Vec3::Y
    };
    Some(Contact {
        position: center + normal * reach,
        normal,
        depth: reach - dist,
    })
}

fn max_scale(m: &Mat4) -> f32 {
    let (_, s) = m.rotation_and_scale();
    s.x.abs().max(s.y.abs()).max(s.z.abs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::Quat;

    fn close(a: Vec3, b: Vec3) -> bool {
        (a - b).length() < 1e-5
    }

    #[test]
    fn sphere_pushes_to_its_surface_plus_the_particle_radius() {
        let s = Collider::Sphere {
            center: Vec3::new(1.0, 0.0, 0.0),
            radius: 0.5,
        };
        let c = s.push_out(Vec3::new(1.3, 0.0, 0.0), 0.1).unwrap();
        assert!(close(c.position, Vec3::new(1.6, 0.0, 0.0)));
        assert!(close(c.normal, Vec3::X));
        assert!((c.depth - 0.3).abs() < 1e-6);
        assert!(s.push_out(Vec3::new(1.7, 0.0, 0.0), 0.1).is_none());
        // The centre itself has no direction: pushed up, still finite.
        let c = s.push_out(Vec3::new(1.0, 0.0, 0.0), 0.0).unwrap();
        assert!(close(c.position, Vec3::new(1.0, 0.5, 0.0)));
    }

    #[test]
    fn capsule_uses_the_closest_point_of_its_axis() {
        let c = Collider::Capsule {
            a: Vec3::ZERO,
            b: Vec3::new(0.0, 2.0, 0.0),
            radius: 0.25,
        };
        // Beside the middle: pushed sideways.
        let k = c.push_out(Vec3::new(0.1, 1.0, 0.0), 0.0).unwrap();
        assert!(close(k.position, Vec3::new(0.25, 1.0, 0.0)));
        // Past an end: pushed out of the end cap.
        let k = c.push_out(Vec3::new(0.0, 2.1, 0.0), 0.0).unwrap();
        assert!(close(k.position, Vec3::new(0.0, 2.25, 0.0)));
        assert!(c.push_out(Vec3::new(0.3, 1.0, 0.0), 0.0).is_none());
    }

    #[test]
    fn plane_keeps_particles_above_it() {
        let p = Collider::plane(Vec3::new(0.0, 1.0, 0.0), Vec3::new(0.0, 2.0, 0.0)).unwrap();
        let k = p.push_out(Vec3::new(3.0, 0.5, -1.0), 0.1).unwrap();
        assert!(close(k.position, Vec3::new(3.0, 1.1, -1.0)));
        assert!(p.push_out(Vec3::new(3.0, 1.2, -1.0), 0.1).is_none());
        assert!(Collider::plane(Vec3::ZERO, Vec3::ZERO).is_err());
        assert!(Collider::plane(Vec3::new(f32::NAN, 0.0, 0.0), Vec3::Y).is_err());
    }

    #[test]
    fn placing_follows_the_joint_and_checks_its_input() {
        let q = Quat::from_axis_angle(Vec3::Z, core::f32::consts::FRAC_PI_2);
        let m = Mat4::from_trs(Vec3::new(0.0, 0.0, 5.0), q, Vec3::splat(2.0));
        let shapes = [
            JointCollider {
                joint: 1,
                shape: Collider::Capsule {
                    a: Vec3::ZERO,
                    b: Vec3::X,
                    radius: 0.5,
                },
            },
            JointCollider {
                joint: 1,
                shape: Collider::Plane {
                    normal: Vec3::Y,
                    offset: 1.0,
                },
            },
        ];
        let models = [Mat4::IDENTITY, m];
        let mut out = [Collider::Sphere {
            center: Vec3::ZERO,
            radius: 0.0,
        }; 2];
        place(&shapes, &models, &mut out).unwrap();
        match out[0] {
            Collider::Capsule { a, b, radius } => {
                assert!(close(a, Vec3::new(0.0, 0.0, 5.0)));
                assert!(close(b, Vec3::new(0.0, 2.0, 5.0)));
                assert!((radius - 1.0).abs() < 1e-5);
            }
            other => panic!("{other:?}"),
        }
        match out[1] {
            // Local +Y turns to model -X; the plane passed through local
            // (0, 1, 0), which lands at (-2, 0, 5).
            Collider::Plane { normal, offset } => {
                assert!(close(normal, Vec3::new(-1.0, 0.0, 0.0)));
                assert!((offset - 2.0).abs() < 1e-5);
            }
            other => panic!("{other:?}"),
        }
        let bad = [JointCollider {
            joint: 7,
            ..shapes[0]
        }];
        assert!(matches!(
            place(&bad, &models, &mut out),
            Err(Error::JointOutOfRange { joint: 7, count: 2 })
        ));
        assert!(matches!(
            place(&shapes, &models, &mut out[..1]),
            Err(Error::BadLength { .. })
        ));
        let negative = [JointCollider {
            joint: 0,
            shape: Collider::Sphere {
                center: Vec3::ZERO,
                radius: -1.0,
            },
        }];
        assert!(place(&negative, &models, &mut out).is_err());
    }
}
