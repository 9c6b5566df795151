//! The largest single allocation a closure makes, for tests that check
//! that an import refuses a hostile size before allocating it. A binary
//! that uses it registers the allocator:
//! `#[global_allocator] static GLOBAL: PeakAllocator = PeakAllocator;`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Forwards to `System`, noting the size of each allocation made on a
/// thread that is measuring.
pub struct PeakAllocator;

thread_local! {
    static MEASURING: Cell<bool> = const { Cell::new(false) };
    static PEAK: Cell<usize> = const { Cell::new(0) };
}

fn note(size: usize) {
    if MEASURING.try_with(Cell::get).unwrap_or(false) {
        let _ = PEAK.try_with(|p| p.set(p.get().max(size)));
    }
}

// Safety: every method forwards to `System` with the caller's arguments
// unchanged, so `System`'s guarantees are this allocator's guarantees.
unsafe impl GlobalAlloc for PeakAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // Safety: same contract as `GlobalAlloc::alloc`, upheld by our caller.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // Safety: same contract as `GlobalAlloc::alloc_zeroed`, upheld by our caller.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        // Safety: `ptr` was allocated by `System` (through us) with `layout`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // Safety: `ptr` was allocated by `System` (through us) with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Runs `f` and returns its result with the largest single allocation it
/// made on this thread.
pub fn peak_of<R>(f: impl FnOnce() -> R) -> (R, usize) {
    PEAK.with(|p| p.set(0));
    MEASURING.with(|m| m.set(true));
    let r = f();
    MEASURING.with(|m| m.set(false));
    (r, PEAK.with(Cell::get))
}
