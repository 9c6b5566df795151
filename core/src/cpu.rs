//! What the CPU can run, asked once at run time (x86-64 only).
//!
//! Blending, local-to-model, the skinning kernels and the compressed-clip
//! decoder have AVX2 paths; they call [`avx2_fma`] before entering them
//! (and none of them does under the `portable` feature). The LBS vertex kernel and
//! local-to-model also have AVX-512 paths, behind [`avx512`].
#![allow(unsafe_code)]
#![deny(clippy::undocumented_unsafe_blocks)]

use core::arch::x86_64::{__cpuid, __cpuid_count, _xgetbv};
use core::sync::atomic::{AtomicU8, Ordering};

/// Whether this CPU and OS run AVX2 and FMA code: always when both target
/// features are enabled at compile time; otherwise asked of CPUID once (and
/// of XCR0, whether the OS saves the 256-bit registers) and remembered.
#[inline]
pub(crate) fn avx2_fma() -> bool {
    if cfg!(all(target_feature = "avx2", target_feature = "fma")) {
        return true;
    }
    static STATE: AtomicU8 = AtomicU8::new(0);
    remembered(&STATE, detect)
}

/// `ask()`, asked once and remembered in `state` (0: not asked yet, 1: no,
/// 2: yes). Racing first callers both ask and store the same answer.
#[inline]
fn remembered(state: &AtomicU8, ask: fn() -> bool) -> bool {
    match state.load(Ordering::Relaxed) {
        1 => false,
        2 => true,
        _ => {
            let yes = ask();
            state.store(if yes { 2 } else { 1 }, Ordering::Relaxed);
            yes
        }
    }
}

/// Whether this CPU and OS run AVX-512 Foundation and Vector Length code
/// (the EVEX encodings of 128- and 256-bit instructions) as well as AVX2
/// and FMA: always when `avx512f` and `avx512vl` are enabled at compile
/// time; otherwise asked of CPUID (leaf 7, EBX bits 16 and 31) and of XCR0
/// (bits 5-7: the OS saves the mask registers and all 32 512-bit
/// registers) once, and remembered. Every CPU with AVX-512 F but the Xeon
/// Phi has VL.
#[inline]
pub(crate) fn avx512() -> bool {
    if cfg!(all(target_feature = "avx512f", target_feature = "avx512vl")) {
        return true;
    }
    static STATE: AtomicU8 = AtomicU8::new(0);
    remembered(&STATE, || avx2_fma() && detect_avx512())
}

/// Whether the AVX2 + FMA kernels run: never with the `portable` feature
/// (which keeps every kernel on its portable path, for the same bits on
/// every x86-64 CPU), otherwise as [`avx2_fma`] says. Every dispatch site
/// asks this one function.
#[inline]
pub(crate) fn avx2_kernels() -> bool {
    !cfg!(feature = "portable") && avx2_fma()
}

/// [`avx2_kernels`] for the AVX-512F kernels: never with `portable`,
/// otherwise as [`avx512`] says.
#[inline]
pub(crate) fn avx512_kernels() -> bool {
    !cfg!(feature = "portable") && avx512()
}

#[cold]
fn detect_avx512() -> bool {
    // SAFETY: only called once `avx2_fma` holds, so OSXSAVE is set and
    // XGETBV is enabled.
    let xcr0 = unsafe { _xgetbv(0) };
    #[allow(unused_unsafe)]
    // SAFETY: leaf 7 exists (`avx2_fma` read it).
    let l7 = unsafe { __cpuid_count(7, 0) };
    // AVX-512 F (bit 16) and VL (bit 31).
    const F_VL: u32 = 1 << 16 | 1 << 31;
    xcr0 & 0b1110_0110 == 0b1110_0110 && l7.ebx & F_VL == F_VL
}

#[cold]
fn detect() -> bool {
    // CPUID leaf 1, ECX: FMA (bit 12), OSXSAVE (27), AVX (28).
    #[allow(unused_unsafe)]
    // SAFETY: CPUID exists on every x86-64 CPU.
    let l1 = unsafe { __cpuid(1) };
    let fma = l1.ecx & (1 << 12) != 0;
    let osxsave = l1.ecx & (1 << 27) != 0;
    let avx = l1.ecx & (1 << 28) != 0;
    if !(fma && osxsave && avx) {
        return false;
    }
    // SAFETY: OSXSAVE is set, so XGETBV is enabled; XCR0 bits 1 and 2 say
    // the OS saves the SSE and AVX register state.
    let xcr0 = unsafe { _xgetbv(0) };
    if xcr0 & 0b110 != 0b110 {
        return false;
    }
    #[allow(unused_unsafe)]
    // SAFETY: leaf 7 exists when leaf 0 reports it; on older CPUs it reads
    // as zeros (no AVX2), which is the right answer.
    let (max, l7) = unsafe { (__cpuid(0).eax, __cpuid_count(7, 0)) };
    max >= 7 && l7.ebx & (1 << 5) != 0
}
