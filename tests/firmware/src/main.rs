//! sinew-core on a Cortex-M4F: the shared frame loop of
//! `sinew-firmware-pipeline`, run on QEMU's `mps2-an386` board, printing the
//! checksum, the peak stack use and the frame loop's SysTick ticks over
//! semihosting and leaving QEMU with the run's status.
//!
//! All buffers are one zero-initialised static (`.bss`), so the RAM the proof
//! needs is the ELF's `.data` + `.bss` plus the peak stack printed here (the
//! kernels' locals; the skeleton and clips are read in place from flash).
#![no_std]
#![no_main]

use core::ptr;

use cortex_m::peripheral::syst::SystClkSource;
use cortex_m::peripheral::SYST;
use cortex_m_rt::entry;
use cortex_m_semihosting::{debug, hprintln};
use panic_semihosting as _;
use sinew_firmware_pipeline::{run, Buffers, FRAMES, JOINTS};

/// Word written over the free stack before the run.
const PAINT: u32 = 0x5EA5_0F5E;

extern "C" {
    /// Top of the stack (end of RAM), from cortex-m-rt's `link.x`.
    static _stack_start: u32;
    /// Lowest address the stack may reach (end of `.bss`/`.uninit`).
    static _stack_end: u32;
}

/// Paints the free stack below the current frame with [`PAINT`].
#[inline(never)]
fn paint_stack() {
    let bottom = ptr::addr_of!(_stack_end) as usize;
    // Leave the words just below this frame alone.
    let top = cortex_m::register::msp::read() as usize - 64;
    let mut p = bottom;
    while p < top {
        // SAFETY: [_stack_end, sp - 64) is RAM that no object occupies (it is
        // below every live frame and above every static), this is the only
        // execution context (no interrupts are enabled), and `p` is 4-aligned
        // because link.x aligns `_stack_end` to 4.
        unsafe { ptr::write_volatile(p as *mut u32, PAINT) };
        p += 4;
    }
}

/// Bytes of stack used since [`paint_stack`]: from the top of RAM down to the
/// lowest word that no longer holds [`PAINT`].
fn stack_used() -> usize {
    let bottom = ptr::addr_of!(_stack_end) as usize;
    let top = ptr::addr_of!(_stack_start) as usize;
    let mut p = bottom;
    // SAFETY: as in `paint_stack`; reads of words below the live frames.
    while p < top && unsafe { ptr::read_volatile(p as *const u32) } == PAINT {
        p += 4;
    }
    top - p
}

/// SysTick ticks `f` took (`None` when the 24-bit counter wrapped), and
/// its result.
fn ticks<T>(syst: &mut SYST, f: impl FnOnce() -> T) -> (Option<u32>, T) {
    // Reading COUNTFLAG clears it: a wrap from here on shows at the end.
    let _ = syst.has_wrapped();
    let start = SYST::get_current();
    let out = f();
    let end = SYST::get_current();
    let wrapped = syst.has_wrapped();
    // The counter counts down.
    ((!wrapped && end <= start).then_some(start - end), out)
}

#[entry]
fn main() -> ! {
    // cortex-m-rt turns a `static mut` declared in the entry function into a
    // `&'static mut` that only this call sees.
    static mut BUFFERS: Buffers = Buffers::ZERO;
    paint_stack();
    let Some(mut core) = cortex_m::Peripherals::take() else {
        hprintln!("error: the core peripherals were already taken");
        debug::exit(debug::EXIT_FAILURE);
        loop {
            cortex_m::asm::wfi();
        }
    };
    // SysTick free-running on the core clock over its 24 bits. The frame
    // loop's cost is a run of `FRAMES` frames less a run of none (which
    // validates the same containers); under `qemu -icount`, where time
    // is proportional to instructions, it is a stable figure.
    core.SYST.set_clock_source(SystClkSource::Core);
    core.SYST.set_reload(0x00FF_FFFF);
    core.SYST.clear_current();
    core.SYST.enable_counter();
    // The counter starts at 0 and loads the reload value on its first tick.
    while SYST::get_current() == 0 {}
    let (setup, _) = ticks(&mut core.SYST, || run(BUFFERS, 0));
    let (whole, result) = ticks(&mut core.SYST, || run(BUFFERS, FRAMES));
    match result {
        Ok(checksum) => {
            let stack = stack_used();
            hprintln!("frames {} joints {}", FRAMES, JOINTS);
            hprintln!("checksum {:016x}", checksum);
            hprintln!("stack {} bytes", stack);
            match (setup, whole) {
                (Some(s), Some(w)) => hprintln!("frame loop {} ticks", w.saturating_sub(s)),
                _ => hprintln!("frame loop: SysTick wrapped, no figure"),
            }
            debug::exit(debug::EXIT_SUCCESS);
        }
        Err(e) => {
            hprintln!("error: {}", e);
            debug::exit(debug::EXIT_FAILURE);
        }
    }
    // Only reached when the host ignores the exit request.
    loop {
        cortex_m::asm::wfi();
    }
}
