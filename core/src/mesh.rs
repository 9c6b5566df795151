//! The skinned-mesh container: what a renderer needs to skin a mesh —
//! bind-space positions (and optionally normals and tangents), four or
//! eight joint influences per vertex, triangle indices and one inverse
//! bind matrix per skeleton joint — in one validated, zero-copy block of
//! bytes that C programs and firmware can load without an importer.
//!
//! # Format (`SINEWMSH`, version 1, little endian)
//! A 48-byte header, then 16-byte aligned sections in this order (each
//! starts at the next multiple of 16 after the previous one ends):
//!
//! | bytes | header field |
//! | --- | --- |
//! | 0..8 | magic `SINEWMSH` |
//! | 8..12 | version (1) |
//! | 12..16 | flags: bit 0 normals, bit 1 tangents, bit 2 eight influences; other bits 0 |
//! | 16..20 | vertex count (at least 1) |
//! | 20..24 | index count (a multiple of 3) |
//! | 24..28 | joint count (1 ..= [`MAX_JOINTS`]) |
//! | 28..32 | total size in bytes |
//! | 32..48 | reserved, 0 |
//!
//! | section | element | present |
//! | --- | --- | --- |
//! | inverse binds | [`Mat4`] per joint | always |
//! | positions | `[f32; 3]` per vertex | always |
//! | normals | `[f32; 3]` per vertex | flag bit 0 |
//! | tangents | `[f32; 4]` per vertex (xyz, handedness w) | flag bit 1 |
//! | joints | `[u16; 4]` per vertex (slots 0-3) | always |
//! | weights | `[f32; 4]` per vertex | always |
//! | joints1 | `[u16; 4]` per vertex (slots 4-7) | flag bit 2 |
//! | weights1 | `[f32; 4]` per vertex | flag bit 2 |
//! | indices | `u32` per index (triangle list) | always (may be empty) |
//!
//! Like the other containers, the layout is fully determined by the
//! header's counts and flags, so validation compares the stored total
//! against the canonical layout instead of trusting offsets.

use crate::container::{check_aligned, check_preamble, le_u32};
use crate::error::Error;
use crate::math::Mat4;
use crate::skeleton::MAX_JOINTS;
use crate::skin::CheckedInfluences;
use crate::soa::all_finite;

/// The container's magic bytes.
pub const MESH_MAGIC: [u8; 8] = *b"SINEWMSH";
/// The container version this build reads and writes.
pub const MESH_VERSION: u32 = 1;

const HEADER_SIZE: usize = 48;
const FLAG_NORMALS: u32 = 1;
const FLAG_TANGENTS: u32 = 2;
const FLAG_EIGHT: u32 = 4;

/// The byte ranges of every section, from the header's counts.
#[derive(Clone, Copy)]
struct Layout {
    inverse_binds: usize,
    positions: usize,
    normals: Option<usize>,
    tangents: Option<usize>,
    joints: usize,
    weights: usize,
    second: Option<(usize, usize)>,
    indices: usize,
    total: usize,
}

impl Layout {
    /// The layout, or `None` when it does not fit in `usize` (a forged
    /// header on a 32-bit target).
    fn new(vertices: usize, indices: usize, joints: usize, flags: u32) -> Option<Layout> {
        let mut at = HEADER_SIZE;
        let mut section = |bytes_per: usize, count: usize| -> Option<usize> {
            let start = at;
            let end = start.checked_add(bytes_per.checked_mul(count)?)?;
            at = end.checked_add(15)? & !15;
            Some(start)
        };
        let inverse_binds = section(core::mem::size_of::<Mat4>(), joints)?;
        let positions = section(12, vertices)?;
        let normals = match flags & FLAG_NORMALS {
            0 => None,
            _ => Some(section(12, vertices)?),
        };
        let tangents = match flags & FLAG_TANGENTS {
            0 => None,
            _ => Some(section(16, vertices)?),
        };
        let joints_at = section(8, vertices)?;
        let weights = section(16, vertices)?;
        let second = match flags & FLAG_EIGHT {
            0 => None,
            _ => Some((section(8, vertices)?, section(16, vertices)?)),
        };
        let indices_at = section(4, indices)?;
        Some(Layout {
            inverse_binds,
            positions,
            normals,
            tangents,
            joints: joints_at,
            weights,
            second,
            indices: indices_at,
            total: at,
        })
    }
}

/// The parts of a skinned mesh, borrowed from the caller, that [`build`]
/// writes into a container.
#[derive(Clone, Copy, Debug, Default)]
pub struct MeshParts<'a> {
    /// Bind-space positions, one per vertex (at least one vertex).
    pub positions: &'a [[f32; 3]],
    /// Bind-space normals: empty, or one per vertex.
    pub normals: &'a [[f32; 3]],
    /// Bind-space tangents (xyz and handedness w): empty, or one per vertex.
    pub tangents: &'a [[f32; 4]],
    /// Joints of influence slots 0-3, one set per vertex.
    pub joints: &'a [[u16; 4]],
    /// Weights of slots 0-3, one set per vertex.
    pub weights: &'a [[f32; 4]],
    /// Joints of slots 4-7: empty for four influences, else one set per vertex.
    pub joints1: &'a [[u16; 4]],
    /// Weights of slots 4-7: empty, or one set per vertex.
    pub weights1: &'a [[f32; 4]],
    /// Triangle-list indices into the vertices (a multiple of 3; may be empty).
    pub indices: &'a [u32],
    /// One inverse bind matrix per skeleton joint (the palette size).
    pub inverse_binds: &'a [Mat4],
}

impl MeshParts<'_> {
    fn flags(&self) -> u32 {
        let mut flags = 0;
        if !self.normals.is_empty() {
            flags |= FLAG_NORMALS;
        }
        if !self.tangents.is_empty() {
            flags |= FLAG_TANGENTS;
        }
        if !self.joints1.is_empty() || !self.weights1.is_empty() {
            flags |= FLAG_EIGHT;
        }
        flags
    }

    fn layout(&self) -> Result<Layout, Error> {
        Layout::new(
            self.positions.len(),
            self.indices.len(),
            self.inverse_binds.len(),
            self.flags(),
        )
        .ok_or(Error::Corrupt {
            what: "mesh too large for this target",
        })
    }
}

/// Bytes [`build`] needs for these parts (a multiple of 16).
///
/// # Errors
/// [`Error::Corrupt`] when the size does not fit in `usize`.
pub fn required_size(parts: &MeshParts<'_>) -> Result<usize, Error> {
    parts.layout().map(|l| l.total)
}

/// Writes a mesh container into `out` (16-byte aligned, at least
/// [`required_size`] bytes) and returns the bytes written.
///
/// Everything [`SkinnedMesh::from_bytes`] checks is checked first, so a
/// container this writes is always accepted, and on error `out` is
/// untouched.
///
/// # Errors
/// Those of [`SkinnedMesh::from_bytes`] for the same data (lengths as
/// [`Error::BadLength`], counts above `u32`, non-finite floats, influences,
/// indices), then [`Error::Misaligned`] and [`Error::BufferTooSmall`].
pub fn build(parts: &MeshParts<'_>, out: &mut [u8]) -> Result<usize, Error> {
    let layout = parts.layout()?;
    SkinnedMesh::checked(*parts)?;
    let u32_of = |count: usize| {
        u32::try_from(count).map_err(|_| Error::Corrupt {
            what: "mesh count above u32",
        })
    };
    let header = [
        u32_of(parts.positions.len())?,
        u32_of(parts.indices.len())?,
        u32_of(parts.inverse_binds.len())?,
        u32_of(layout.total)?,
    ];
    if out.len() < layout.total {
        return Err(Error::BufferTooSmall {
            needed: layout.total,
            actual: out.len(),
        });
    }
    check_aligned(out.as_ptr())?;

    let out = &mut out[..layout.total];
    out.fill(0);
    out[..8].copy_from_slice(&MESH_MAGIC);
    let words = [MESH_VERSION, parts.flags()]
        .into_iter()
        .chain(header)
        .enumerate();
    for (i, word) in words {
        out[8 + 4 * i..12 + 4 * i].copy_from_slice(&word.to_le_bytes());
    }
    let mut put = |at: usize, bytes: &[u8]| out[at..at + bytes.len()].copy_from_slice(bytes);
    put(
        layout.inverse_binds,
        bytemuck::cast_slice(parts.inverse_binds),
    );
    put(layout.positions, bytemuck::cast_slice(parts.positions));
    if let Some(at) = layout.normals {
        put(at, bytemuck::cast_slice(parts.normals));
    }
    if let Some(at) = layout.tangents {
        put(at, bytemuck::cast_slice(parts.tangents));
    }
    put(layout.joints, bytemuck::cast_slice(parts.joints));
    put(layout.weights, bytemuck::cast_slice(parts.weights));
    if let Some((j, w)) = layout.second {
        put(j, bytemuck::cast_slice(parts.joints1));
        put(w, bytemuck::cast_slice(parts.weights1));
    }
    put(layout.indices, bytemuck::cast_slice(parts.indices));
    Ok(layout.total)
}

/// A validated, zero-copy view of a mesh container.
///
/// Immutable and `Copy`; it borrows the bytes it was made from. Its
/// influences were checked against its joint count when it was made, so
/// [`SkinnedMesh::influences`] is O(1).
#[derive(Clone, Copy, Debug)]
pub struct SkinnedMesh<'a> {
    inverse_binds: &'a [Mat4],
    positions: &'a [[f32; 3]],
    normals: &'a [[f32; 3]],
    tangents: &'a [[f32; 4]],
    indices: &'a [u32],
    influences: CheckedInfluences<'a>,
}

impl<'a> SkinnedMesh<'a> {
    /// Validates a container once and views it in place.
    ///
    /// `bytes` must be 16-byte aligned; trailing bytes are ignored. Checks
    /// the header and layout, that every float is finite, that every
    /// vertex's influences name joints below the joint count with weights
    /// `>= 0` summing to 1 (as [`CheckedInfluences::new`] does), and that
    /// every index names a vertex. Linear in the data size.
    ///
    /// # Errors
    /// [`Error::UnsupportedPlatform`], [`Error::Truncated`],
    /// [`Error::BadMagic`], [`Error::UnsupportedVersion`],
    /// [`Error::Misaligned`], [`Error::Corrupt`] (flags, reserved bytes,
    /// counts, total size, an index past the vertices), [`Error::NoJoints`],
    /// [`Error::TooManyJoints`], [`Error::NonFinite`], and the influence
    /// errors of [`CheckedInfluences::new8`].
    pub fn from_bytes(bytes: &'a [u8]) -> Result<SkinnedMesh<'a>, Error> {
        check_preamble(bytes, &MESH_MAGIC, MESH_VERSION, HEADER_SIZE)?;
        let flags = le_u32(bytes, 12);
        if flags & !(FLAG_NORMALS | FLAG_TANGENTS | FLAG_EIGHT) != 0 {
            return Err(Error::Corrupt {
                what: "unknown mesh flags",
            });
        }
        if bytes[32..HEADER_SIZE].iter().any(|&b| b != 0) {
            return Err(Error::Corrupt {
                what: "reserved header bytes are not zero",
            });
        }
        let count = |at| usize::try_from(le_u32(bytes, at)).unwrap_or(usize::MAX);
        let (n, index_count, joint_count) = (count(16), count(20), count(24));
        let layout = Layout::new(n, index_count, joint_count, flags).ok_or(Error::Corrupt {
            what: "mesh too large for this target",
        })?;
        if count(28) != layout.total {
            return Err(Error::Corrupt {
                what: "total size does not match the mesh's counts",
            });
        }
        if bytes.len() < layout.total {
            return Err(Error::Truncated {
                needed: layout.total,
                actual: bytes.len(),
            });
        }
        // Every section is 16-byte aligned in a 16-byte aligned buffer and
        // its length is a whole number of elements, so the casts succeed.
        fn cast<T: bytemuck::Pod>(bytes: &[u8], at: usize, len: usize) -> Result<&[T], Error> {
            let size = core::mem::size_of::<T>() * len;
            bytes
                .get(at..at + size)
                .and_then(|b| bytemuck::try_cast_slice(b).ok())
                .ok_or(Error::Corrupt {
                    what: "mesh section",
                })
        }
        let optional = |at: Option<usize>| at.map_or(Ok(&[][..]), |at| cast(bytes, at, n));
        let (joints1, weights1) = match layout.second {
            Some((j, w)) => (cast(bytes, j, n)?, cast(bytes, w, n)?),
            None => (&[][..], &[][..]),
        };
        SkinnedMesh::checked(MeshParts {
            inverse_binds: cast(bytes, layout.inverse_binds, joint_count)?,
            positions: cast(bytes, layout.positions, n)?,
            normals: optional(layout.normals)?,
            tangents: layout
                .tangents
                .map_or(Ok(&[][..]), |at| cast(bytes, at, n))?,
            joints: cast(bytes, layout.joints, n)?,
            weights: cast(bytes, layout.weights, n)?,
            joints1,
            weights1,
            indices: cast(bytes, layout.indices, index_count)?,
        })
    }

    /// The checks shared by [`SkinnedMesh::from_bytes`] and [`build`]:
    /// lengths, counts, finite floats, indices, influences.
    fn checked(parts: MeshParts<'a>) -> Result<SkinnedMesh<'a>, Error> {
        let n = parts.positions.len();
        if n == 0 {
            return Err(Error::Corrupt {
                what: "mesh has no vertices",
            });
        }
        for (buffer, len) in [
            ("normals", parts.normals.len()),
            ("tangents", parts.tangents.len()),
        ] {
            if len != 0 && len != n {
                return Err(Error::BadLength {
                    buffer,
                    expected: n,
                    actual: len,
                });
            }
        }
        crate::soa::check_len("joints", n, parts.joints.len())?;
        let joint_count = parts.inverse_binds.len();
        match joint_count {
            0 => return Err(Error::NoJoints),
            count if count > MAX_JOINTS => return Err(Error::TooManyJoints { count }),
            _ => {}
        }
        if !parts.indices.len().is_multiple_of(3) {
            return Err(Error::Corrupt {
                what: "index count is not a multiple of 3",
            });
        }
        if parts.indices.iter().any(|&i| i as usize >= n) {
            return Err(Error::Corrupt {
                what: "an index names no vertex",
            });
        }
        let floats: [(&'static str, &[f32]); 4] = [
            (
                "inverse bind matrix",
                bytemuck::cast_slice(parts.inverse_binds),
            ),
            ("mesh position", bytemuck::cast_slice(parts.positions)),
            ("mesh normal", bytemuck::cast_slice(parts.normals)),
            ("mesh tangent", bytemuck::cast_slice(parts.tangents)),
        ];
        if let Some((what, _)) = floats.iter().find(|(_, v)| !all_finite(v)) {
            return Err(Error::NonFinite { what });
        }
        let influences = if parts.flags() & FLAG_EIGHT == 0 {
            CheckedInfluences::new(parts.joints, parts.weights, joint_count)?
        } else {
            CheckedInfluences::new8(
                parts.joints,
                parts.weights,
                parts.joints1,
                parts.weights1,
                joint_count,
            )?
        };
        Ok(SkinnedMesh {
            inverse_binds: parts.inverse_binds,
            positions: parts.positions,
            normals: parts.normals,
            tangents: parts.tangents,
            indices: parts.indices,
            influences,
        })
    }

    /// Number of vertices.
    #[inline]
    #[must_use]
    pub fn vertex_count(&self) -> usize {
        self.positions.len()
    }

    /// Number of palette entries (skeleton joints) the influences index.
    #[inline]
    #[must_use]
    pub fn joint_count(&self) -> usize {
        self.inverse_binds.len()
    }

    /// One inverse bind matrix per joint.
    #[inline]
    #[must_use]
    pub fn inverse_binds(&self) -> &'a [Mat4] {
        self.inverse_binds
    }

    /// Bind-space positions.
    #[inline]
    #[must_use]
    pub fn positions(&self) -> &'a [[f32; 3]] {
        self.positions
    }

    /// Bind-space normals (empty when the mesh has none).
    #[inline]
    #[must_use]
    pub fn normals(&self) -> &'a [[f32; 3]] {
        self.normals
    }

    /// Bind-space tangents (empty when the mesh has none).
    #[inline]
    #[must_use]
    pub fn tangents(&self) -> &'a [[f32; 4]] {
        self.tangents
    }

    /// Triangle-list indices.
    #[inline]
    #[must_use]
    pub fn indices(&self) -> &'a [u32] {
        self.indices
    }

    /// The mesh's influences, four or eight per vertex, checked against
    /// [`SkinnedMesh::joint_count`] when the view was made; hand them to the
    /// skinning job every frame.
    #[inline]
    #[must_use]
    pub fn influences(&self) -> CheckedInfluences<'a> {
        self.influences
    }
}
