//! Skinning: palettes, prepared binds, the skinning job over separate
//! arrays or interleaved buffers, influence checks; mesh containers.

use core::mem::{align_of, size_of};
use core::ptr;

use sinew_core::mesh::SkinnedMesh;
use sinew_core::skin::{
    self, CheckedInfluences, DqsBinds, DualQuat, InfluenceSet, LbsBind, Mat3x4, SkinAttributes,
    SkinBlocks, SkinJob, SkinMethod, SkinOutput, SkinVertices, StridedVertices, StridedVerticesMut,
    VertexBlock,
};
use sinew_core::{Error, Mat4};

use super::pose::sinew_float4x4;
use super::ptr::{
    container, disjoint, out_param, read, slice, slice_mut, slice_or_empty, write, Span, Status,
};
use super::status::sinew_status;

/// A `sinew_vertex_layout` attribute offset meaning "absent".
pub const SINEW_NO_ATTRIBUTE: u32 = 0xFFFF_FFFF;

/// A row-major 3x4 affine matrix (an LBS palette entry), 16-byte aligned:
/// a point `p` maps to `rows[r] · (p, 1)`.
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct sinew_float3x4 {
    /// The three rows; column 3 is the translation.
    pub rows: [[f32; 4]; 3],
}

/// A unit dual quaternion (a DQS palette entry), `(x, y, z, w)` order.
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct sinew_dual_quat {
    /// Rotation quaternion.
    pub real: [f32; 4],
    /// Translation part `½ (t, 0) · real`.
    pub dual: [f32; 4],
}

/// One joint's inverse bind matrix laid out for
/// `sinew_skin_lbs_palette_prepared`, written by
/// `sinew_skin_lbs_binds_prepare` once per mesh (the layout is the
/// library's, not to be written by hand). 192 bytes, 32-byte aligned.
#[repr(C, align(32))]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct sinew_lbs_bind {
    /// The matrix's elements, each repeated for the SIMD kernel.
    pub spread: [[f32; 8]; 6],
}

/// Eight joints' inverse bind matrices laid out for
/// `sinew_skin_dqs_palette_prepared` (`sinew_skin_dqs_binds_count` of them
/// per mesh), written by `sinew_skin_dqs_binds_prepare` once per mesh (the
/// layout is the library's). 384 bytes, 32-byte aligned.
#[repr(C, align(32))]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct sinew_dqs_binds {
    /// The eight matrices' elements, transposed into lanes.
    pub lanes: [[[f32; 8]; 3]; 4],
}

/// Four vertices of a mesh prepared by `sinew_skin_blocks_prepare` for
/// `sinew_skin_blocks_lbs` (the layout is the library's, not to be written
/// by hand; plain data, so it can be stored and loaded as bytes). 208
/// bytes, 16-byte aligned.
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct sinew_vertex_block {
    /// The block's attributes, weights, joints and kind.
    pub data: [[u32; 4]; 13],
}

const _: () = {
    assert!(size_of::<sinew_vertex_block>() == size_of::<VertexBlock>());
    assert!(align_of::<sinew_vertex_block>() == align_of::<VertexBlock>());
    assert!(size_of::<sinew_lbs_bind>() == size_of::<LbsBind>());
    assert!(align_of::<sinew_lbs_bind>() == align_of::<LbsBind>());
    assert!(size_of::<sinew_dqs_binds>() == size_of::<DqsBinds>());
    assert!(align_of::<sinew_dqs_binds>() == align_of::<DqsBinds>());
    assert!(size_of::<sinew_float3x4>() == size_of::<Mat3x4>());
    assert!(size_of::<sinew_dual_quat>() == size_of::<DualQuat>());
};

/// A mesh to skin: `vertex_count` entries in every non-NULL array.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sinew_skin_mesh {
    /// Number of vertices.
    pub vertex_count: usize,
    /// Bind-space positions, 3 floats per vertex.
    pub positions: *const f32,
    /// NULL, or bind-space normals, 3 floats per vertex.
    pub normals: *const f32,
    /// NULL, or tangents `(x, y, z, handedness)`, 4 floats per vertex.
    pub tangents: *const f32,
    /// Four palette indices per vertex.
    pub joints: *const u16,
    /// Four weights per vertex: finite, `>= 0`, summing to 1 within 1e-3
    /// (with `weights1`, the eight weights together).
    pub weights: *const f32,
    /// NULL, or four more palette indices per vertex: influence slots 4-7
    /// (glTF's `JOINTS_1`), for eight influences. Set with `weights1`.
    pub joints1: *const u16,
    /// NULL, or the weights of slots 4-7 (set with `joints1`).
    pub weights1: *const f32,
}

/// Where skinned attributes go: `vertex_count` entries each; a NULL array
/// is not computed (positions are required).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sinew_skin_target {
    /// Skinned positions, 3 floats per vertex.
    pub positions: *mut f32,
    /// NULL, or skinned normals, 3 floats per vertex (needs mesh normals).
    pub normals: *mut f32,
    /// NULL, or skinned tangents, 4 floats per vertex (needs mesh tangents).
    pub tangents: *mut f32,
}

/// Where attributes sit in an interleaved vertex buffer, in floats.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sinew_vertex_layout {
    /// Floats per vertex (`> 0`).
    pub stride: u32,
    /// Offset of the position (3 floats) inside a vertex.
    pub position: u32,
    /// Offset of the normal (3 floats), or `SINEW_NO_ATTRIBUTE`.
    pub normal: u32,
    /// Offset of the tangent (4 floats), or `SINEW_NO_ATTRIBUTE`.
    pub tangent: u32,
}

impl sinew_vertex_layout {
    fn attr(offset: u32) -> Option<usize> {
        (offset != SINEW_NO_ATTRIBUTE).then_some(offset as usize)
    }

    /// `data` read through this layout (the job checks the layout).
    fn vertices(self, data: &[f32]) -> StridedVertices<'_> {
        StridedVertices {
            data,
            stride: self.stride as usize,
            position: self.position as usize,
            normal: Self::attr(self.normal),
            tangent: Self::attr(self.tangent),
        }
    }

    /// `data` written through this layout (the job checks the layout).
    fn vertices_mut(self, data: &mut [f32]) -> StridedVerticesMut<'_> {
        StridedVerticesMut {
            data,
            stride: self.stride as usize,
            position: self.position as usize,
            normal: Self::attr(self.normal),
            tangent: Self::attr(self.tangent),
        }
    }
}

/// Skinning method: linear blend skinning with a `sinew_float3x4` palette.
pub const SINEW_SKIN_LBS: u32 = 0;
/// Skinning method: dual quaternion skinning with a `sinew_dual_quat` palette.
pub const SINEW_SKIN_DQS: u32 = 1;
/// Skinning method: a per-vertex mix of LBS and DQS (both palettes).
pub const SINEW_SKIN_MIXED: u32 = 2;

/// The palette a skinning call applies, and how.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sinew_skin_palette {
    /// `SINEW_SKIN_LBS`, `SINEW_SKIN_DQS` or `SINEW_SKIN_MIXED`.
    pub method: u32,
    /// Palette entries: the joint count the influences index.
    pub len: usize,
    /// `len` LBS matrices (LBS and mixed; ignored for DQS).
    pub lbs: *const sinew_float3x4,
    /// `len` dual quaternions (DQS and mixed; ignored for LBS).
    pub dqs: *const sinew_dual_quat,
    /// Mixed only: one value in 0..1 per vertex, the share of DQS
    /// (0 = pure LBS); ignored otherwise.
    pub mix: *const f32,
    /// Length of `mix` in floats (the vertex count; 0 when unused).
    pub mix_len: usize,
}

/// An interleaved mesh to skin with `sinew_skin_strided`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sinew_strided_mesh {
    /// Number of vertices.
    pub vertex_count: usize,
    /// Bind-space vertices, `layout.stride` floats each.
    pub data: *const f32,
    /// Length of `data` in floats (`vertex_count * layout.stride`).
    pub len: usize,
    /// Where the attributes sit in a vertex of `data`.
    pub layout: sinew_vertex_layout,
    /// Four palette indices per vertex.
    pub joints: *const u16,
    /// Four weights per vertex (see `sinew_skin_mesh`).
    pub weights: *const f32,
    /// NULL, or slots 4-7 of the indices (set with `weights1`).
    pub joints1: *const u16,
    /// NULL, or slots 4-7 of the weights (set with `joints1`).
    pub weights1: *const f32,
}

/// Where `sinew_skin_strided` writes: the attributes `layout` names in
/// `data`; other floats of each vertex are left alone.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sinew_strided_target {
    /// Interleaved output vertices, `layout.stride` floats each.
    pub data: *mut f32,
    /// Length of `data` in floats.
    pub len: usize,
    /// Where the attributes go in a vertex of `data`.
    pub layout: sinew_vertex_layout,
}

/// A loaded skinned mesh: a caller-owned view of a validated mesh
/// container (`SINEWMSH`, written by `sinew convert`).
///
/// Filled by `sinew_mesh_load`; the pointers point into the container's
/// bytes, which must outlive the handle and stay unchanged. `mesh` is
/// ready to hand to the skinning functions with a palette of
/// `joint_count` entries.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sinew_mesh {
    /// The container bytes.
    pub data: *const u8,
    /// Their length in bytes.
    pub size: usize,
    /// The vertex arrays (normals, tangents, `joints1` and `weights1` are
    /// NULL when the mesh has none).
    pub mesh: sinew_skin_mesh,
    /// Palette entries the influences index (the skeleton's joint count).
    pub joint_count: u32,
    /// Number of triangle-list indices (a multiple of 3).
    pub index_count: u32,
    /// `index_count` indices into the vertices.
    pub indices: *const u32,
    /// `joint_count` inverse bind matrices.
    pub inverse_bind: *const sinew_float4x4,
}

/// Validates a mesh container (`SINEWMSH`, as `sinew convert` writes it)
/// of `len` bytes (16-byte aligned) and fills `*out` with pointers into
/// it: the vertex arrays as a `sinew_skin_mesh`, the triangle indices and
/// the inverse bind matrices. The bytes must outlive the handle and stay
/// unchanged; there is nothing to free.
///
/// Errors: NULL_PARAMETER, MISALIGNED, INVALID_DATA (bad magic, truncated,
/// corrupt header or sections, NaN, influences naming joints past the
/// joint count or weights not summing to 1, an index past the vertices),
/// UNSUPPORTED_VERSION, UNSUPPORTED_PLATFORM (big-endian).
///
/// # Safety
/// `bytes` points to `len` readable bytes that outlive the handle;
/// `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_mesh_load(
    bytes: *const u8,
    len: usize,
    out: *mut sinew_mesh,
) -> sinew_status {
    fn or_null<T>(s: &[T]) -> *const T {
        if s.is_empty() {
            ptr::null()
        } else {
            s.as_ptr()
        }
    }
    boundary! {
        out_param(out)?;
        // SAFETY: the caller guarantees `len` readable bytes at `bytes`.
        let data = unsafe { container(bytes, len)? };
        // Influence errors here are errors of the stored bytes.
        let m = SkinnedMesh::from_bytes(data).map_err(|e| match sinew_status::from(e) {
            sinew_status::InvalidInfluence | sinew_status::BadLength => sinew_status::InvalidData,
            s => s,
        })?;
        let influences = m.influences();
        let (joints1, weights1) = influences.second_set().unwrap_or((&[], &[]));
        let handle = sinew_mesh {
            data: data.as_ptr(),
            size: data.len(),
            mesh: sinew_skin_mesh {
                vertex_count: m.vertex_count(),
                positions: m.positions().as_ptr().cast(),
                normals: or_null(m.normals()).cast(),
                tangents: or_null(m.tangents()).cast(),
                joints: influences.joints().as_ptr().cast(),
                weights: influences.weights().as_ptr().cast(),
                joints1: or_null(joints1).cast(),
                weights1: or_null(weights1).cast(),
            },
            joint_count: m.joint_count() as u32,
            index_count: m.indices().len() as u32,
            indices: or_null(m.indices()),
            inverse_bind: m.inverse_binds().as_ptr().cast(),
        };
        // SAFETY: `out_param` checked that `out` is non-NULL and aligned.
        unsafe { write(out, handle) };
        Ok(())
    }
}

/// A palette call's shape: `models` and a per-joint (or per-block) input
/// array in, `out` written by `f` after the views and the overlap check.
///
/// # Safety
/// Each pointer has the count that follows it; `out` is writable.
pub(crate) unsafe fn palette_call<B, O, BR, OR>(
    models: *const sinew_float4x4,
    model_count: usize,
    input: *const B,
    input_count: usize,
    out: *mut O,
    out_len: usize,
    f: impl FnOnce(&[Mat4], &[BR], &mut [OR]) -> Result<(), Error>,
) -> Status
where
    B: bytemuck::Pod,
    O: bytemuck::Pod,
    BR: bytemuck::Pod,
    OR: bytemuck::Pod,
{
    // SAFETY: this function's `# Safety` contract makes each pointer valid for its
    // length during the call; the helpers check NULL, alignment and size.
    let (m, b, out) = unsafe {
        (
            slice(models, model_count)?,
            slice(input, input_count)?,
            slice_mut(out, out_len)?,
        )
    };
    disjoint(Span::of(out), &[Span::of(m), Span::of(b)])?;
    f(
        bytemuck::cast_slice(m),
        bytemuck::cast_slice(b),
        bytemuck::cast_slice_mut(out),
    )?;
    Ok(())
}

/// A bind preparation's shape: the inverse binds in, `out` written by `f`.
///
/// # Safety
/// Each pointer has the count that follows it; `out` is writable.
pub(crate) unsafe fn prepare_call<O, OR>(
    inverse_bind: *const sinew_float4x4,
    inverse_bind_count: usize,
    out: *mut O,
    out_len: usize,
    f: impl FnOnce(&[Mat4], &mut [OR]) -> Result<(), Error>,
) -> Status
where
    O: bytemuck::Pod,
    OR: bytemuck::Pod,
{
    // SAFETY: this function's `# Safety` contract makes each pointer valid for its
    // length during the call; the helpers check NULL, alignment and size.
    let (b, out) = unsafe {
        (
            slice(inverse_bind, inverse_bind_count)?,
            slice_mut(out, out_len)?,
        )
    };
    disjoint(Span::of(out), &[Span::of(b)])?;
    f(bytemuck::cast_slice(b), bytemuck::cast_slice_mut(out))?;
    Ok(())
}

/// Writes the LBS palette: `out[j]` = the 3x4 part of
/// `models[j] * inverse_bind[j]`. All three arrays have `model_count` entries.
///
/// Errors: NULL_PARAMETER, MISALIGNED, BAD_LENGTH, OVERLAPPING_BUFFERS.
///
/// # Safety
/// Each pointer has the count that follows it; `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_skin_lbs_palette(
    models: *const sinew_float4x4,
    model_count: usize,
    inverse_bind: *const sinew_float4x4,
    inverse_bind_count: usize,
    out: *mut sinew_float3x4,
    out_len: usize,
) -> sinew_status {
    boundary! {
        // SAFETY: this function's `# Safety` contract is the callee's, passed on unchanged.
        unsafe {
            palette_call(
                models,
                model_count,
                inverse_bind,
                inverse_bind_count,
                out,
                out_len,
                skin::lbs_palette,
            )
        }
    }
}

/// Writes the DQS palette: `out[j]` = the unit dual quaternion (real.w >= 0)
/// of the rigid part of `models[j] * inverse_bind[j]`; scale and shear are
/// dropped.
///
/// Errors: as `sinew_skin_lbs_palette`.
///
/// # Safety
/// As `sinew_skin_lbs_palette`.
#[no_mangle]
pub unsafe extern "C" fn sinew_skin_dqs_palette(
    models: *const sinew_float4x4,
    model_count: usize,
    inverse_bind: *const sinew_float4x4,
    inverse_bind_count: usize,
    out: *mut sinew_dual_quat,
    out_len: usize,
) -> sinew_status {
    boundary! {
        // SAFETY: this function's `# Safety` contract is the callee's, passed on unchanged.
        unsafe {
            palette_call(
                models,
                model_count,
                inverse_bind,
                inverse_bind_count,
                out,
                out_len,
                skin::dqs_palette,
            )
        }
    }
}

/// Lays out a mesh's inverse bind matrices for
/// `sinew_skin_lbs_palette_prepared`, once per mesh: `out[j]` from
/// `inverse_bind[j]` (only its affine part is read); both arrays have
/// `inverse_bind_count` entries. `out` must be 32-byte aligned.
///
/// Errors: NULL_PARAMETER, MISALIGNED, BAD_LENGTH, OVERLAPPING_BUFFERS.
///
/// # Safety
/// Each pointer has the count that follows it; `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_skin_lbs_binds_prepare(
    inverse_bind: *const sinew_float4x4,
    inverse_bind_count: usize,
    out: *mut sinew_lbs_bind,
    out_len: usize,
) -> sinew_status {
    boundary! {
        // SAFETY: this function's `# Safety` contract is the callee's, passed on unchanged.
        unsafe {
            prepare_call(
                inverse_bind,
                inverse_bind_count,
                out,
                out_len,
                skin::prepare_lbs_binds,
            )
        }
    }
}

/// `sinew_skin_lbs_palette` with the inverse binds prepared by
/// `sinew_skin_lbs_binds_prepare`: the same palette within the rounding of
/// fused multiply-adds, with less work per joint (the binds are already in
/// the kernel's layout). All three
/// arrays have `model_count` entries.
///
/// Errors: NULL_PARAMETER, MISALIGNED, BAD_LENGTH, OVERLAPPING_BUFFERS.
///
/// # Safety
/// Each pointer has the count that follows it; `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_skin_lbs_palette_prepared(
    models: *const sinew_float4x4,
    model_count: usize,
    binds: *const sinew_lbs_bind,
    bind_count: usize,
    out: *mut sinew_float3x4,
    out_len: usize,
) -> sinew_status {
    boundary! {
        // SAFETY: this function's `# Safety` contract is the callee's, passed on unchanged.
        unsafe {
            palette_call(
                models,
                model_count,
                binds,
                bind_count,
                out,
                out_len,
                skin::lbs_palette_prepared,
            )
        }
    }
}

/// Returns how many `sinew_dqs_binds` a mesh of `joint_count` joints needs:
/// `(joint_count + 7) / 8`.
#[no_mangle]
pub extern "C" fn sinew_skin_dqs_binds_count(joint_count: usize) -> usize {
    boundary!(or 0 => {
        DqsBinds::count(joint_count)
    })
}

/// Lays out a mesh's `inverse_bind_count` inverse bind matrices for
/// `sinew_skin_dqs_palette_prepared`, once per mesh, into `out_len` =
/// `sinew_skin_dqs_binds_count(inverse_bind_count)` blocks of eight joints
/// (only the matrices' affine parts are read). `out` must be 32-byte
/// aligned.
///
/// Errors: NULL_PARAMETER, MISALIGNED, BAD_LENGTH, OVERLAPPING_BUFFERS.
///
/// # Safety
/// Each pointer has the count that follows it; `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_skin_dqs_binds_prepare(
    inverse_bind: *const sinew_float4x4,
    inverse_bind_count: usize,
    out: *mut sinew_dqs_binds,
    out_len: usize,
) -> sinew_status {
    boundary! {
        // SAFETY: this function's `# Safety` contract is the callee's, passed on unchanged.
        unsafe {
            prepare_call(
                inverse_bind,
                inverse_bind_count,
                out,
                out_len,
                skin::prepare_dqs_binds,
            )
        }
    }
}

/// `sinew_skin_dqs_palette` with the inverse binds prepared by
/// `sinew_skin_dqs_binds_prepare` (`binds_len` =
/// `sinew_skin_dqs_binds_count(model_count)`): the same palette within
/// rounding. `models` and `out` have `model_count` entries.
///
/// Errors: NULL_PARAMETER, MISALIGNED, BAD_LENGTH, OVERLAPPING_BUFFERS.
///
/// # Safety
/// Each pointer has the count that follows it; `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_skin_dqs_palette_prepared(
    models: *const sinew_float4x4,
    model_count: usize,
    binds: *const sinew_dqs_binds,
    binds_len: usize,
    out: *mut sinew_dual_quat,
    out_len: usize,
) -> sinew_status {
    boundary! {
        // SAFETY: this function's `# Safety` contract is the callee's, passed on unchanged.
        unsafe {
            palette_call(
                models,
                model_count,
                binds,
                binds_len,
                out,
                out_len,
                skin::dqs_palette_prepared,
            )
        }
    }
}

/// The mesh's arrays, viewed (`None` for NULL optional arrays).
struct MeshView<'a> {
    positions: &'a [[f32; 3]],
    normals: Option<&'a [[f32; 3]]>,
    tangents: Option<&'a [[f32; 4]]>,
    joints: &'a [[u16; 4]],
    weights: &'a [[f32; 4]],
    /// Slots 4-7, when the mesh has eight influences.
    second: Option<InfluenceSet<'a>>,
}

/// # Safety
/// Non-NULL arrays of `m` have `m.vertex_count` entries.
unsafe fn mesh_view<'a>(m: &sinew_skin_mesh) -> Result<MeshView<'a>, sinew_status> {
    let n = m.vertex_count;
    // SAFETY: this function's `# Safety` contract makes each array valid for `n` vertices; the
    // helpers check NULL, alignment and size.
    unsafe {
        let ((joints, weights), second) =
            influence_arrays(m.joints, m.weights, (m.joints1, m.weights1), n)?;
        Ok(MeshView {
            positions: slice(m.positions.cast::<[f32; 3]>(), n)?,
            normals: optional(m.normals.cast::<[f32; 3]>(), n)?,
            tangents: optional(m.tangents.cast::<[f32; 4]>(), n)?,
            joints,
            weights,
            second,
        })
    }
}

/// Slots 4-7 of `n` vertices: `None` when both pointers are NULL,
/// NULL_PARAMETER when only one is.
///
/// # Safety
/// Non-NULL, `joints1` and `weights1` have `4 · n` entries.
pub(crate) unsafe fn second_set<'a>(
    joints1: *const u16,
    weights1: *const f32,
    n: usize,
) -> Result<Option<InfluenceSet<'a>>, sinew_status> {
    match (joints1.is_null(), weights1.is_null()) {
        (true, true) => Ok(None),
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call (both); the helpers check NULL, alignment and size.
        (false, false) => Ok(Some(unsafe {
            (
                slice(joints1.cast::<[u16; 4]>(), n)?,
                slice(weights1.cast::<[f32; 4]>(), n)?,
            )
        })),
        _ => Err(sinew_status::NullParameter),
    }
}

/// Views a `sinew_skin_palette` as the core's skinning method, with the
/// palette's length (what the influences index) and the byte ranges of its
/// arrays (for the overlap checks).
///
/// # Safety
/// `palette` is NULL or points to a readable `sinew_skin_palette` whose
/// arrays for its method have the lengths it states.
unsafe fn palette_method<'a>(
    palette: *const sinew_skin_palette,
) -> Result<(SkinMethod<'a>, usize, [Span; 3]), sinew_status> {
    // SAFETY: this function's `# Safety` contract: NULL or a readable struct.
    let p = unsafe { read(palette)? };
    let none = Span(0, 0);
    match p.method {
        SINEW_SKIN_LBS => {
            // SAFETY: the contract makes `lbs` valid for `len` entries.
            let l = unsafe { slice(p.lbs, p.len)? };
            let palette: &[Mat3x4] = bytemuck::cast_slice(l);
            Ok((
                SkinMethod::Lbs { palette },
                p.len,
                [Span::of(l), none, none],
            ))
        }
        SINEW_SKIN_DQS => {
            // SAFETY: the contract makes `dqs` valid for `len` entries.
            let d = unsafe { slice(p.dqs, p.len)? };
            let palette: &[DualQuat] = bytemuck::cast_slice(d);
            Ok((
                SkinMethod::Dqs { palette },
                p.len,
                [Span::of(d), none, none],
            ))
        }
        SINEW_SKIN_MIXED => {
            // SAFETY: the contract makes `lbs` and `dqs` valid for `len` entries and `mix` for
            // `mix_len` floats.
            let (l, d, mix) = unsafe {
                (
                    slice(p.lbs, p.len)?,
                    slice(p.dqs, p.len)?,
                    slice(p.mix, p.mix_len)?,
                )
            };
            let (lbs, dqs) = (bytemuck::cast_slice(l), bytemuck::cast_slice(d));
            let spans = [Span::of(l), Span::of(d), Span::of(mix)];
            Ok((SkinMethod::Mixed { lbs, dqs, mix }, p.len, spans))
        }
        _ => Err(sinew_status::InvalidArgument),
    }
}

/// Views the influences of `vertex_count` vertices: four per vertex, or
/// eight when `joints1` / `weights1` hold slots 4-7.
///
/// # Safety
/// `joints` and `weights` (and, when not NULL, `joints1` and `weights1`)
/// have `4 · vertex_count` entries.
unsafe fn influence_arrays<'a>(
    joints: *const u16,
    weights: *const f32,
    (joints1, weights1): (*const u16, *const f32),
    vertex_count: usize,
) -> Result<(InfluenceSet<'a>, Option<InfluenceSet<'a>>), sinew_status> {
    // SAFETY: this function's `# Safety` contract gives each array `4 · vertex_count` entries;
    // the helpers check NULL, alignment and size.
    unsafe {
        Ok((
            (
                slice(joints.cast::<[u16; 4]>(), vertex_count)?,
                slice(weights.cast::<[f32; 4]>(), vertex_count)?,
            ),
            second_set(joints1, weights1, vertex_count)?,
        ))
    }
}

/// The byte ranges of a set of influences, for the overlap checks.
fn influence_spans((j, w): InfluenceSet<'_>, second: Option<InfluenceSet<'_>>) -> [Span; 4] {
    let (j1, w1) = second.map_or((Span(0, 0), Span(0, 0)), |(j1, w1)| {
        (Span::of(j1), Span::of(w1))
    });
    [Span::of(j), Span::of(w), j1, w1]
}

/// Checks four influences, or eight when `second` holds slots 4-7,
/// against `joint_count`.
fn checked_influences<'a>(
    (joints, weights): InfluenceSet<'a>,
    second: Option<InfluenceSet<'a>>,
    joint_count: usize,
) -> Result<CheckedInfluences<'a>, Error> {
    match second {
        None => CheckedInfluences::new(joints, weights, joint_count),
        Some((j1, w1)) => CheckedInfluences::new8(joints, weights, j1, w1, joint_count),
    }
}

/// Skins `mesh` into `target` with `palette`: linear blend skinning
/// (`SINEW_SKIN_LBS`: positions as points, normals and tangents by the
/// blended 3x3 part, not renormalised), dual quaternion skinning
/// (`SINEW_SKIN_DQS`: influences sign-aligned to the first, blended and
/// normalised by the real part's length; normals and tangents rotated by
/// the real part only) or their per-vertex mix (`SINEW_SKIN_MIXED`:
/// `lbs + mix[v] * (dqs - lbs)`). Four influences per vertex, or eight
/// when the mesh's `joints1` and `weights1` are set. A NULL target normal
/// or tangent array is not computed.
///
/// Errors: NULL_PARAMETER (also: target normals or tangents without the
/// mesh's, and one of `joints1`/`weights1` without the other), MISALIGNED,
/// BAD_LENGTH (also: `mix_len` not the vertex count), INVALID_ARGUMENT (an
/// unknown method, a mix value NaN or outside 0..1), INVALID_INFLUENCE
/// (index >= `palette->len`, negative or NaN weight, weights not summing
/// to 1 within 1e-3), OVERLAPPING_BUFFERS (skinning in place is not
/// supported). The target is untouched on error.
///
/// # Safety
/// `palette`, `mesh` and `target` point to structs whose arrays have the
/// lengths they state (`mesh->vertex_count` entries for the vertex arrays).
#[no_mangle]
pub unsafe extern "C" fn sinew_skin(
    palette: *const sinew_skin_palette,
    mesh: *const sinew_skin_mesh,
    target: *const sinew_skin_target,
) -> sinew_status {
    boundary! {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let (method, joint_count, palette_spans) = unsafe { palette_method(palette)? };
        // SAFETY: as above.
        let (m, t) = unsafe { (read(mesh)?, read(target)?) };
        // SAFETY: as above: the mesh's arrays have `vertex_count` entries.
        let v = unsafe { mesh_view(&m)? };
        let n = m.vertex_count;
        if t.positions.is_null() {
            return Err(sinew_status::NullParameter);
        }
        // SAFETY: as above: the target's arrays have `vertex_count` entries (the three outputs).
        let (positions, normals, tangents) = unsafe {
            (
                slice_mut(t.positions.cast::<[f32; 3]>(), n)?,
                optional_mut(t.normals.cast::<[f32; 3]>(), n)?,
                optional_mut(t.tangents.cast::<[f32; 4]>(), n)?,
            )
        };
        let inputs = [
            Span::of(v.positions),
            v.normals.map_or(Span(0, 0), Span::of),
            v.tangents.map_or(Span(0, 0), Span::of),
        ];
        let outs = [
            Span::of(positions),
            normals.as_deref().map_or(Span(0, 0), Span::of),
            tangents.as_deref().map_or(Span(0, 0), Span::of),
        ];
        for (i, o) in outs.iter().enumerate() {
            disjoint(*o, &inputs)?;
            disjoint(*o, &influence_spans((v.joints, v.weights), v.second))?;
            disjoint(*o, &palette_spans)?;
            disjoint(*o, &outs[i + 1..])?;
        }
        if normals.is_some() && v.normals.is_none() || tangents.is_some() && v.tangents.is_none() {
            return Err(sinew_status::NullParameter);
        }
        let influences = checked_influences((v.joints, v.weights), v.second, joint_count)?;
        let input = SkinVertices {
            positions: v.positions,
            normals: v.normals,
            tangents: v.tangents,
        };
        let output = SkinOutput {
            positions,
            normals,
            tangents,
        };
        SkinJob {
            method,
            influences: &influences,
            attributes: SkinAttributes::Arrays { input, output },
        }
        .run()?;
        Ok(())
    }
}

/// Returns how many `sinew_vertex_block` a mesh of `vertex_count`
/// vertices needs: `(vertex_count + 3) / 4`.
#[no_mangle]
pub extern "C" fn sinew_skin_blocks_count(vertex_count: usize) -> usize {
    boundary!(or 0 => {
        SkinBlocks::block_count(vertex_count)
    })
}

/// Prepares `mesh` for `sinew_skin_blocks_lbs`, once, at load time: its
/// positions, normals (when not NULL) and four influences per vertex,
/// checked against a palette of `joint_count` entries, into `blocks`
/// (`block_count` = `sinew_skin_blocks_count(mesh->vertex_count)`, 16-byte
/// aligned). Order the mesh by influence count and joints first
/// (`sinew_skin_influence_order`, then `sinew_skin_group_by_joints`); the
/// skinned vertices come out in the mesh's order.
///
/// Errors: NULL_PARAMETER, MISALIGNED, BAD_LENGTH (also: tangents or
/// `joints1`/`weights1` set, which the blocks do not hold),
/// INVALID_INFLUENCE (as `sinew_skin`), OVERLAPPING_BUFFERS. `blocks` is
/// untouched on error.
///
/// # Safety
/// `mesh` points to a struct whose arrays have the lengths it states;
/// `blocks` has `block_count` writable entries.
#[no_mangle]
pub unsafe extern "C" fn sinew_skin_blocks_prepare(
    mesh: *const sinew_skin_mesh,
    joint_count: usize,
    blocks: *mut sinew_vertex_block,
    block_count: usize,
) -> sinew_status {
    boundary! {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let m = unsafe { read(mesh)? };
        // SAFETY: as above: the mesh's arrays have `vertex_count` entries.
        let v = unsafe { mesh_view(&m)? };
        // SAFETY: as above: `blocks` has `block_count` writable entries.
        let out = unsafe { slice_mut(blocks, block_count)? };
        let inputs = [Span::of(v.positions), v.normals.map_or(Span(0, 0), Span::of)];
        disjoint(Span::of(out), &inputs)?;
        disjoint(Span::of(out), &influence_spans((v.joints, v.weights), v.second))?;
        let influences = checked_influences((v.joints, v.weights), v.second, joint_count)?;
        let vertices = SkinVertices {
            positions: v.positions,
            normals: v.normals,
            tangents: v.tangents,
        };
        SkinBlocks::new(&influences, vertices, bytemuck::cast_slice_mut(out))?;
        Ok(())
    }
}

/// Skins a mesh prepared by `sinew_skin_blocks_prepare` (`vertex_count`
/// vertices, `sinew_skin_blocks_count(vertex_count)` blocks) with linear
/// blend skinning over `palette` (`joint_count` entries, the count the
/// blocks were prepared for): positions, and normals when
/// `target->normals` is not NULL (the mesh must have been prepared with
/// normals; without, they come out zero). The results are those of
/// `sinew_skin` with `SINEW_SKIN_LBS` through the portable kernels, within
/// the rounding of the slots' order. Each call checks the blocks' joints
/// against `joint_count` (O(blocks)), so blocks altered since give other
/// numbers, never an out-of-bounds read.
///
/// Errors: NULL_PARAMETER (also: target tangents), MISALIGNED, BAD_LENGTH,
/// INVALID_INFLUENCE (a block's joint past `joint_count`), INVALID_DATA (a
/// block's slot or vertex count that preparation does not write),
/// OVERLAPPING_BUFFERS. The target is untouched on error.
///
/// # Safety
/// `palette` has `joint_count` entries, `blocks` the count above, and
/// `target` points to a struct whose arrays have `vertex_count` entries.
#[no_mangle]
pub unsafe extern "C" fn sinew_skin_blocks_lbs(
    palette: *const sinew_float3x4,
    joint_count: usize,
    blocks: *const sinew_vertex_block,
    vertex_count: usize,
    target: *const sinew_skin_target,
) -> sinew_status {
    boundary! {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let (p, b, t) = unsafe {
            (
                slice(palette, joint_count)?,
                slice(blocks, SkinBlocks::block_count(vertex_count))?,
                read(target)?,
            )
        };
        if t.positions.is_null() || !t.tangents.is_null() {
            return Err(sinew_status::NullParameter);
        }
        // SAFETY: as above: the target's arrays have `vertex_count` entries.
        let (positions, normals) = unsafe {
            (
                slice_mut(t.positions.cast::<[f32; 3]>(), vertex_count)?,
                optional_mut(t.normals.cast::<[f32; 3]>(), vertex_count)?,
            )
        };
        let outs = [
            Span::of(positions),
            normals.as_deref().map_or(Span(0, 0), Span::of),
        ];
        for (i, o) in outs.iter().enumerate() {
            disjoint(*o, &[Span::of(p), Span::of(b)])?;
            disjoint(*o, &outs[i + 1..])?;
        }
        let mesh = SkinBlocks::from_prepared(
            bytemuck::cast_slice(b),
            vertex_count,
            joint_count,
            normals.is_some(),
        )?;
        let output = SkinOutput {
            positions,
            normals,
            tangents: None,
        };
        mesh.lbs(bytemuck::cast_slice(p), output)?;
        Ok(())
    }
}

/// `sinew_skin` over interleaved vertex buffers: `mesh->vertex_count`
/// vertices of `mesh->layout.stride` floats in `mesh->data`
/// (`mesh->len` floats, exactly `vertex_count * stride`), written to the
/// attributes `target->layout` names in `target->data` (other floats of the
/// target, such as UVs, are left alone). Influences stay in their own
/// arrays (four per vertex, eight with `joints1` / `weights1`).
///
/// Errors: as `sinew_skin`, plus BAD_LENGTH for buffer sizes and layouts (a
/// stride of 0, an attribute past the stride, overlapping attributes in the
/// target, a target attribute the source lacks) and OVERLAPPING_BUFFERS for
/// a target overlapping the source, the influences or the palette. The
/// target is untouched on error.
///
/// # Safety
/// `palette`, `mesh` and `target` point to structs whose arrays have the
/// lengths they state (`4 · vertex_count` entries for the influences).
#[no_mangle]
pub unsafe extern "C" fn sinew_skin_strided(
    palette: *const sinew_skin_palette,
    mesh: *const sinew_strided_mesh,
    target: *const sinew_strided_target,
) -> sinew_status {
    boundary! {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let (method, joint_count, palette_spans) = unsafe { palette_method(palette)? };
        // SAFETY: as above.
        let (m, t) = unsafe { (read(mesh)?, read(target)?) };
        let n = m.vertex_count;
        // SAFETY: as above: the influence arrays have `4 · vertex_count` entries, `data` has
        // `len` floats.
        let ((first, second), src, dst) = unsafe {
            (
                influence_arrays(m.joints, m.weights, (m.joints1, m.weights1), n)?,
                slice(m.data, m.len)?,
                slice_mut(t.data, t.len)?,
            )
        };
        let d = Span::of(dst);
        disjoint(d, &[Span::of(src)])?;
        disjoint(d, &influence_spans(first, second))?;
        disjoint(d, &palette_spans)?;
        let influences = checked_influences(first, second, joint_count)?;
        SkinJob {
            method,
            influences: &influences,
            attributes: SkinAttributes::Strided {
                input: m.layout.vertices(src),
                output: t.layout.vertices_mut(dst),
            },
        }
        .run()?;
        Ok(())
    }
}

/// Checks a mesh's influences (four joint indices and weights per vertex,
/// eight when `joints1` / `weights1` are set) against a palette of
/// `joint_count` entries, as every skinning call does; use it at load time
/// to report a bad mesh early. Only the mesh's influence arrays are read.
///
/// Errors: NULL_PARAMETER, MISALIGNED, INVALID_INFLUENCE.
///
/// # Safety
/// `mesh` points to a `sinew_skin_mesh` whose influence arrays have
/// `4 · vertex_count` entries.
#[no_mangle]
pub unsafe extern "C" fn sinew_skin_check_influences(
    mesh: *const sinew_skin_mesh,
    joint_count: usize,
) -> sinew_status {
    boundary! {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let ((j, w), second) = unsafe {
            let m = read(mesh)?;
            influence_arrays(m.joints, m.weights, (m.joints1, m.weights1), m.vertex_count)?
        };
        checked_influences((j, w), second, joint_count)?;
        Ok(())
    }
}

/// A NULL optional input array is `None`.
///
/// # Safety
/// As [`slice`].
unsafe fn optional<'a, T>(ptr: *const T, len: usize) -> Result<Option<&'a [T]>, sinew_status> {
    if ptr.is_null() {
        return Ok(None);
    }
    // SAFETY: this function's `# Safety` contract is the callee's, passed on unchanged.
    Ok(Some(unsafe { slice(ptr, len)? }))
}

/// A NULL optional output array is `None`.
///
/// # Safety
/// As [`slice_mut`].
unsafe fn optional_mut<'a, T>(
    ptr: *mut T,
    len: usize,
) -> Result<Option<&'a mut [T]>, sinew_status> {
    if ptr.is_null() {
        return Ok(None);
    }
    // SAFETY: this function's `# Safety` contract is the callee's, passed on unchanged.
    Ok(Some(unsafe { slice_mut(ptr, len)? }))
}

/// Writes into `order` the `vertex_count` vertices sorted by the number of
/// influence slots they use (one past the last non-zero weight; 4 plus
/// that of slots 4-7 when `weights1` is given and weights any of them),
/// fewest first, ties in their original order; and, when `counts` is not
/// NULL, how many vertices use 0, 1, …, 8 slots (9 entries). Reordering a
/// mesh's vertices this way (every attribute, and triangle indices through
/// the inverse) is the split layout an engine's mesh tool builds: the
/// skinning kernels then blend fewer slots per block of vertices.
///
/// Errors: NULL_PARAMETER, MISALIGNED, BAD_LENGTH (`order_len` not
/// `vertex_count`, more than 2^32 - 1 vertices), OVERLAPPING_BUFFERS.
/// Nothing is written on error.
///
/// # Safety
/// `weights` (and, when not NULL, `weights1`) have `4 · vertex_count`
/// floats; `order` has `order_len` writable entries; `counts`, when not
/// NULL, has 9.
#[no_mangle]
pub unsafe extern "C" fn sinew_skin_influence_order(
    weights: *const f32,
    weights1: *const f32,
    vertex_count: usize,
    order: *mut u32,
    order_len: usize,
    counts: *mut u32,
) -> sinew_status {
    boundary! {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let (w, w1, out, counts_out) = unsafe {
            (
                slice(weights.cast::<[f32; 4]>(), vertex_count)?,
                slice_or_empty(weights1.cast::<[f32; 4]>(), vertex_count)?,
                slice_mut(order, order_len)?,
                if counts.is_null() {
                    None
                } else {
                    Some(slice_mut(counts.cast::<[u32; 9]>(), 1)?)
                },
            )
        };
        let mut spans = [Span::of(w), Span::of(w1), Span(0, 0)];
        if let Some(c) = counts_out.as_deref() {
            spans[2] = Span::of(c);
            disjoint(Span::of(c), &[Span::of(w), Span::of(w1)])?;
        }
        disjoint(Span::of(out), &spans)?;
        let parts = skin::influence_order(w, w1, out)?;
        if let Some(c) = counts_out {
            c[0] = parts;
        }
        Ok(())
    }
}

/// Sorts each part of an order written by [`sinew_skin_influence_order`]
/// (`counts`, its 9 part sizes) by the joints its vertices name in the
/// slots they use, ties by vertex index, in place: blocks of four vertices
/// with the same joints then skin from the joints' palette entries
/// broadcast, with no per-vertex blend. Apply it between the influence
/// order and reordering the mesh.
///
/// Errors: NULL_PARAMETER, MISALIGNED, BAD_LENGTH (`order_len` not
/// `vertex_count`, `counts` not adding up to it), CORRUPT (`order` names a
/// vertex past `vertex_count`), OVERLAPPING_BUFFERS. `order` is unchanged
/// on error.
///
/// # Safety
/// `joints` (and, when not NULL, `joints1`) have `4 · vertex_count`
/// entries; `order` has `order_len` writable entries; `counts` has 9.
#[no_mangle]
pub unsafe extern "C" fn sinew_skin_group_by_joints(
    joints: *const u16,
    joints1: *const u16,
    vertex_count: usize,
    order: *mut u32,
    order_len: usize,
    counts: *const u32,
) -> sinew_status {
    boundary! {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let (j, j1, out, parts) = unsafe {
            (
                slice(joints.cast::<[u16; 4]>(), vertex_count)?,
                slice_or_empty(joints1.cast::<[u16; 4]>(), vertex_count)?,
                slice_mut(order, order_len)?,
                slice(counts.cast::<[u32; 9]>(), 1)?,
            )
        };
        disjoint(Span::of(out), &[Span::of(j), Span::of(j1), Span::of(parts)])?;
        skin::group_by_joints(j, j1, out, &parts[0])?;
        Ok(())
    }
}
