//! The C entry points as a C program calls them, on fuzz-chosen container
//! bytes, offsets, lengths, times and modes: `sinew_skeleton_load`,
//! `sinew_clip_load`, `sinew_compressed_clip_load`, `sinew_clip_sample`,
//! `sinew_compressed_clip_sample` and `sinew_skeleton_local_to_model`.
//!
//! Every pointer passed is what the C contract allows: the containers live
//! in 16-byte aligned buffers with room for the chosen offset (a pointer
//! off alignment is the library's to refuse), and every output has the
//! length passed with it. Each call must return the status the Rust API
//! implies (never `SINEW_STATUS_PANIC`); on success the output must equal
//! the Rust API's bit for bit, and on failure outputs and out-parameters
//! must be untouched.
//!
//! Input: a 32-byte header, then the skeleton container, the raw clip
//! container and the compressed clip container.
//!
//! | bytes | field |
//! | --- | --- |
//! | 0..4 | skeleton container length (u32 LE) |
//! | 4..8 | raw clip container length (u32 LE) |
//! | 8..12 | time mode passed to the samplers (u32 LE; 0 and 1 are valid) |
//! | 12..16, 16..20 | two sample times (f32 LE) |
//! | 20, 21, 22 | offset of each container from 16-byte alignment: the low 4 bits when the byte is 0xF0 or more, else 0 |
//! | 23, 24, 25 | length passed for the sample output, the FK local pose and the FK matrices: the right one when the byte is below 0xE0, else the right one + (byte & 31) - 16 |
//! | 26 | bit 0: pass a root matrix to FK; bit 1: no rest pose for the compressed clip; bit 2: FK of the raw clip's sample instead of the rest pose |
//! | 27..32 | unused |
#![no_main]

use core::ptr;

use libfuzzer_sys::fuzz_target;
use sinew::*;
use sinew_core::clip::{RawClip, TimeMode};
use sinew_core::compressed::{CompressedClip, Defaults};
use sinew_core::fk::{local_to_model, FkJob};
use sinew_core::{Mat4, Skeleton, SoaTransform};
use sinew_fuzz::Input;

const HEADER: usize = 32;
/// What the out-parameters and outputs hold before a call.
const SENTINEL: usize = 0x5E57;
const SENTINEL_FLOAT: f32 = 7.25;

/// Container bytes at a chosen offset from 16-byte alignment.
struct Placed {
    buffer: sinew_std::AlignedBytes,
    offset: usize,
    len: usize,
}

impl Placed {
    fn new(bytes: &[u8], offset_byte: u8) -> Placed {
        let offset = if offset_byte >= 0xF0 {
            usize::from(offset_byte & 15)
        } else {
            0
        };
        let mut buffer = sinew_std::AlignedBytes::zeroed(offset + bytes.len());
        buffer.as_mut_slice()[offset..].copy_from_slice(bytes);
        Placed {
            buffer,
            offset,
            len: bytes.len(),
        }
    }

    fn bytes(&self) -> &[u8] {
        &self.buffer.as_slice()[self.offset..]
    }

    /// The pointer a C caller passes: NULL for no bytes, as C would.
    fn ptr(&self) -> *const u8 {
        if self.len == 0 {
            ptr::null()
        } else {
            self.bytes().as_ptr()
        }
    }
}

/// The length passed for a buffer whose right length is `right`.
fn chosen_len(right: usize, byte: u8) -> usize {
    if byte < 0xE0 {
        right
    } else {
        (right + usize::from(byte & 31)).saturating_sub(16)
    }
}

fn bits<T: bytemuck::Pod>(v: &[T]) -> Vec<u32> {
    bytemuck::cast_slice::<T, u32>(v).to_vec()
}

fn sentinel_pose(len: usize) -> Vec<SoaTransform> {
    let mut v = vec![SoaTransform::IDENTITY; len];
    bytemuck::cast_slice_mut::<SoaTransform, f32>(&mut v).fill(SENTINEL_FLOAT);
    v
}

fn sentinel_matrices(len: usize) -> Vec<Mat4> {
    vec![
        Mat4 {
            cols: [[SENTINEL_FLOAT; 4]; 4]
        };
        len
    ]
}

fn pose_ptr(v: &mut [SoaTransform]) -> *mut sinew_soa_transform {
    if v.is_empty() {
        ptr::null_mut()
    } else {
        v.as_mut_ptr().cast()
    }
}

/// Checks a call's status against the Rust API's verdict: OK exactly when
/// the Rust API succeeded, never PANIC.
fn check_status(what: &str, status: sinew_status, rust_ok: bool) {
    assert_ne!(status, sinew_status::Panic, "{what}: panicked");
    assert_eq!(
        status == sinew_status::Ok,
        rust_ok,
        "{what}: status {status:?}, Rust API ok: {rust_ok}"
    );
}

/// Samples the raw clip handle at `t` through the C API and checks it.
fn sample_raw(
    h: &sinew_clip,
    c: &RawClip<'_>,
    t: f32,
    mode: u32,
    out_len: usize,
) -> Option<Vec<SoaTransform>> {
    let n = c.soa_count();
    let mut out = sentinel_pose(out_len);
    let before = bits(&out);
    // SAFETY: a handle filled by `sinew_clip_load` whose bytes are alive; `out` has `out_len` blocks.
    let status = unsafe { sinew_clip_sample(h, t, mode, pose_ptr(&mut out), out_len) };
    let rust_mode = match mode {
        0 => Some(TimeMode::Loop),
        1 => Some(TimeMode::Clamp),
        _ => None,
    };
    let mut want = vec![SoaTransform::IDENTITY; n];
    let rust_ok = out_len == n && rust_mode.is_some_and(|m| c.sample(t, m, &mut want).is_ok());
    check_status("sinew_clip_sample", status, rust_ok);
    if rust_ok {
        assert_eq!(
            bits(&out),
            bits(&want),
            "sinew_clip_sample differs from RawClip::sample"
        );
        Some(out)
    } else {
        assert_eq!(
            bits(&out),
            before,
            "sinew_clip_sample wrote its output on error"
        );
        None
    }
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let header = input.take(HEADER);
    let mut h = Input::new(header);
    let (skeleton_len, clip_len) = (h.u32() as usize, h.u32() as usize);
    let mode = h.u32();
    let times = [h.f32(), h.f32()];
    let offsets = [h.u8(), h.u8(), h.u8()];
    let (out_sel, local_sel, models_sel) = (h.u8(), h.u8(), h.u8());
    let flags = h.u8();
    let skeleton_bytes = Placed::new(input.take(skeleton_len), offsets[0]);
    let clip_bytes = Placed::new(input.take(clip_len), offsets[1]);
    let compressed_bytes = Placed::new(input.rest(), offsets[2]);

    // Skeleton.
    let mut skel = sinew_skeleton {
        data: ptr::null(),
        size: SENTINEL,
        joint_count: 0,
        soa_count: 0,
        parents: ptr::null(),
        rest_pose: ptr::null(),
        inverse_bind: ptr::null(),
        check: 0,
    };
    // SAFETY: `ptr()` is NULL or points to `len` bytes that outlive the handle; `skel` is writable.
    let status =
        unsafe { sinew_skeleton_load(skeleton_bytes.ptr(), skeleton_bytes.len, &mut skel) };
    let skeleton = Skeleton::from_bytes(&skeleton_bytes.bytes()[..skeleton_bytes.len]).ok();
    check_status(
        "sinew_skeleton_load",
        status,
        skeleton.is_some() && skeleton_bytes.len > 0,
    );
    let skeleton = if status == sinew_status::Ok {
        skeleton
    } else {
        None
    };
    match &skeleton {
        Some(s) => {
            assert_eq!(skel.joint_count as usize, s.joint_count());
            assert_eq!(skel.soa_count as usize, s.soa_count());
            assert_eq!(skel.data, skeleton_bytes.ptr());
        }
        None => assert!(
            skel.size == SENTINEL && skel.check == 0,
            "handle written on error"
        ),
    }

    // Raw clip.
    let mut clip = sinew_clip {
        data: ptr::null(),
        size: SENTINEL,
        soa_count: 0,
        frame_count: 0,
        sample_rate: 0.0,
        duration: 0.0,
        check: 0,
    };
    // SAFETY: as for the skeleton.
    let status = unsafe { sinew_clip_load(clip_bytes.ptr(), clip_bytes.len, &mut clip) };
    let raw = RawClip::from_bytes(&clip_bytes.bytes()[..clip_bytes.len]).ok();
    check_status(
        "sinew_clip_load",
        status,
        raw.is_some() && clip_bytes.len > 0,
    );
    let raw = if status == sinew_status::Ok {
        raw
    } else {
        None
    };
    match &raw {
        Some(c) => {
            assert_eq!(clip.soa_count as usize, c.soa_count());
            assert_eq!(clip.frame_count as usize, c.frame_count());
            assert_eq!(clip.duration.to_bits(), c.duration().to_bits());
        }
        None => assert!(
            clip.size == SENTINEL && clip.check == 0,
            "handle written on error"
        ),
    }

    // Compressed clip.
    let mut cmp = sinew_compressed_clip {
        data: ptr::null(),
        size: SENTINEL,
        joint_count: 0,
        soa_count: 0,
        frame_count: 0,
        needs_rest_pose: 0,
        sample_rate: 0.0,
        duration: 0.0,
        check: 0,
    };
    // SAFETY: as for the skeleton.
    let status = unsafe {
        sinew_compressed_clip_load(compressed_bytes.ptr(), compressed_bytes.len, &mut cmp)
    };
    let compressed =
        CompressedClip::from_bytes(&compressed_bytes.bytes()[..compressed_bytes.len]).ok();
    check_status(
        "sinew_compressed_clip_load",
        status,
        compressed.is_some() && compressed_bytes.len > 0,
    );
    let compressed = if status == sinew_status::Ok {
        compressed
    } else {
        None
    };
    match &compressed {
        Some(c) => {
            assert_eq!(cmp.joint_count as usize, c.joint_count());
            assert_eq!(cmp.soa_count as usize, c.soa_count());
            assert_eq!(cmp.needs_rest_pose == 1, c.defaults() == Defaults::RestPose);
        }
        None => assert!(
            cmp.size == SENTINEL && cmp.check == 0,
            "handle written on error"
        ),
    }

    // Raw clip sampling.
    let mut sampled = None;
    if let Some(c) = &raw {
        let out_len = chosen_len(c.soa_count(), out_sel);
        for t in times {
            for m in [mode, 0, 1] {
                if let Some(pose) = sample_raw(&clip, c, t, m, out_len) {
                    sampled = Some(pose);
                }
            }
        }
    }

    // Compressed clip sampling, with the skeleton's rest pose when it fits.
    if let Some(c) = &compressed {
        let n = c.soa_count();
        let rest: Option<Vec<SoaTransform>> = if flags & 2 != 0 {
            None
        } else {
            match &skeleton {
                Some(s) if s.soa_count() == n => Some(s.rest_pose().to_vec()),
                _ => Some(vec![SoaTransform::IDENTITY; n]),
            }
        };
        let out_len = chosen_len(n, out_sel);
        for t in times {
            for m in [mode, 0, 1] {
                let mut out = sentinel_pose(out_len);
                let before = bits(&out);
                let (rest_ptr, rest_len) = match &rest {
                    Some(r) => (r.as_ptr().cast::<sinew_soa_transform>(), r.len()),
                    None => (ptr::null(), 0),
                };
                // SAFETY: a loaded handle; `rest` is NULL or `rest_len` blocks; `out` has `out_len` blocks.
                let status = unsafe {
                    sinew_compressed_clip_sample(
                        &cmp,
                        t,
                        m,
                        rest_ptr,
                        rest_len,
                        pose_ptr(&mut out),
                        out_len,
                    )
                };
                let rust_mode = match m {
                    0 => Some(TimeMode::Loop),
                    1 => Some(TimeMode::Clamp),
                    _ => None,
                };
                let mut want = vec![SoaTransform::IDENTITY; n];
                let rust_ok = out_len == n
                    && rust_mode.is_some_and(|mode| match (&rest, c.defaults()) {
                        (Some(r), _) => c.sample_with_rest(t, mode, r, &mut want).is_ok(),
                        (None, Defaults::Identity) => c.sample(t, mode, &mut want).is_ok(),
                        (None, Defaults::RestPose) => false,
                    });
                check_status("sinew_compressed_clip_sample", status, rust_ok);
                if rust_ok {
                    assert_eq!(
                        bits(&out),
                        bits(&want),
                        "C sample differs from CompressedClip's"
                    );
                } else {
                    assert_eq!(
                        bits(&out),
                        before,
                        "sinew_compressed_clip_sample wrote its output on error"
                    );
                }
            }
        }
    }

    // Forward kinematics of the rest pose (or the clip's sample when it fits).
    if let Some(s) = &skeleton {
        let local: Vec<SoaTransform> = match sampled {
            Some(p) if flags & 4 != 0 && p.len() == s.soa_count() => p,
            _ => s.rest_pose().to_vec(),
        };
        let local_len = chosen_len(local.len(), local_sel);
        let mut local_buf = local.clone();
        local_buf.resize(local_len, SoaTransform::IDENTITY);
        let root = Mat4 {
            cols: [
                [1.0, 0.0, 0.0, 0.0],
                [0.0, 1.0, 0.0, 0.0],
                [0.0, 0.0, 1.0, 0.0],
                [times[0], times[1], 0.0, 1.0],
            ],
        };
        let root_ptr = if flags & 1 != 0 {
            ptr::from_ref(&root).cast::<sinew_float4x4>()
        } else {
            ptr::null()
        };
        let models_len = chosen_len(s.joint_count(), models_sel);
        let mut models = sentinel_matrices(models_len);
        let before = bits(&models);
        let local_ptr = if local_len == 0 {
            ptr::null()
        } else {
            local_buf.as_ptr().cast::<sinew_soa_transform>()
        };
        let models_ptr = if models_len == 0 {
            ptr::null_mut()
        } else {
            models.as_mut_ptr().cast::<sinew_float4x4>()
        };
        // SAFETY: a loaded handle; `local` has `local_len` blocks; `root` is NULL or one matrix;
        // `models` has `models_len` writable matrices.
        let status = unsafe {
            sinew_skeleton_local_to_model(
                &skel, local_ptr, local_len, root_ptr, models_ptr, models_len,
            )
        };
        let mut want = vec![Mat4::IDENTITY; s.joint_count()];
        let rust_ok = local_len == s.soa_count() && models_len == s.joint_count() && {
            let job = FkJob::new(s, &local_buf);
            let job = if flags & 1 != 0 {
                job.with_root(&root)
            } else {
                job
            };
            local_to_model(&job, &mut want).is_ok()
        };
        check_status("sinew_skeleton_local_to_model", status, rust_ok);
        if rust_ok {
            assert_eq!(
                bits(&models),
                bits(&want),
                "C FK differs from local_to_model"
            );
        } else {
            assert_eq!(
                bits(&models),
                before,
                "sinew_skeleton_local_to_model wrote its output on error"
            );
        }
    }
});
