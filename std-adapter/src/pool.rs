//! A fixed set of worker threads that run one borrowed job per call, with
//! no allocation per call.
//!
//! A general work-stealing pool queues each call from outside it as a job
//! (rayon's `install` pushes onto a queue that grows in blocks, an
//! allocation every few dozen frames); a crowd needs the same split of the
//! same work every frame. [`Pool::run`] hands the threads a pointer to the
//! caller's job through two barriers (`std`'s `Barrier` is a mutex and a
//! condition variable: it does not allocate), runs the caller's own share,
//! and returns only after every worker has finished, so the borrowed job
//! outlives every use of it.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier, Mutex, PoisonError};
use std::thread::JoinHandle;

/// The job of one [`Pool::run`] call, its lifetime erased (see there).
#[derive(Clone, Copy)]
struct Job(*const (dyn Fn(usize) + Sync));

// SAFETY: the pointee is `Sync`, so calling it from any thread is sound;
// `Pool::run` keeps it alive while any thread can read the pointer.
unsafe impl Send for Job {}

struct Shared {
    start: Barrier,
    done: Barrier,
    job: Mutex<Option<Job>>,
    stop: AtomicBool,
    /// Set by a worker whose share of the job panicked.
    panicked: AtomicBool,
}

/// Worker threads `1..threads`; the calling thread is thread 0.
pub(crate) struct Pool {
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
}

impl Pool {
    /// A pool of `threads` threads in all (at least 1): the caller of
    /// [`Pool::run`] and `threads − 1` workers.
    pub(crate) fn new(threads: usize) -> std::io::Result<Pool> {
        let threads = threads.max(1);
        let shared = Arc::new(Shared {
            start: Barrier::new(threads),
            done: Barrier::new(threads),
            job: Mutex::new(None),
            stop: AtomicBool::new(false),
            panicked: AtomicBool::new(false),
        });
        let mut pool = Pool {
            shared,
            workers: Vec::with_capacity(threads - 1),
        };
        for i in 1..threads {
            let shared = Arc::clone(&pool.shared);
            let spawned = std::thread::Builder::new()
                .name(format!("sinew-crowd-{i}"))
                .spawn(move || worker(&shared, i));
            match spawned {
                Ok(h) => pool.workers.push(h),
                Err(e) => {
                    // The workers started so far wait at a barrier sized for
                    // every thread, which nothing can fill now: detach them
                    // (they hold only the shared state, no borrowed data) so
                    // that `Drop` does not wait with them.
                    pool.workers.clear();
                    return Err(e);
                }
            }
        }
        // One empty run: every worker has started and reached its loop
        // before `new` returns. A starting thread allocates (std copies its
        // name for the stack-overflow handler); done here, that belongs to
        // set-up instead of landing in whichever frame runs first.
        pool.run(&|_| {});
        Ok(pool)
    }

    /// Threads in all, the caller included.
    pub(crate) fn threads(&self) -> usize {
        self.workers.len() + 1
    }

    /// Runs `job(i)` once for every thread index `i` in `0..threads`,
    /// `job(0)` on the calling thread, and returns when all have finished.
    /// A panic in any share is resumed here after every thread is done.
    pub(crate) fn run(&self, job: &(dyn Fn(usize) + Sync)) {
        if self.workers.is_empty() {
            job(0);
            return;
        }
        // SAFETY: only the lifetime is erased. The workers call the job
        // between the `start` and `done` barriers, and this function does
        // not return (nor unwind: the caller's share is caught) before
        // `done`, so `job` outlives every call; the pointer is cleared
        // before the borrow ends.
        let erased: &'static (dyn Fn(usize) + Sync) = unsafe { std::mem::transmute(job) };
        *lock(&self.shared.job) = Some(Job(erased));
        self.shared.start.wait();
        let mine = panic::catch_unwind(AssertUnwindSafe(|| job(0)));
        self.shared.done.wait();
        *lock(&self.shared.job) = None;
        if let Err(p) = mine {
            panic::resume_unwind(p);
        }
        if self.shared.panicked.swap(false, Ordering::AcqRel) {
            panic!("a crowd worker thread panicked");
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        if self.workers.is_empty() {
            return;
        }
        self.shared.stop.store(true, Ordering::Release);
        self.shared.start.wait();
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

fn worker(shared: &Shared, i: usize) {
    loop {
        shared.start.wait();
        if shared.stop.load(Ordering::Acquire) {
            return;
        }
        let job = *lock(&shared.job);
        if let Some(Job(f)) = job {
            // SAFETY: `Pool::run` set the pointer before `start` and keeps
            // the job alive until after `done`, which this thread has not
            // reached yet.
            let f = unsafe { &*f };
            if panic::catch_unwind(AssertUnwindSafe(|| f(i))).is_err() {
                shared.panicked.store(true, Ordering::Release);
            }
        }
        shared.done.wait();
    }
}

/// The lock, also after a panic elsewhere poisoned it (the value is a
/// plain pointer, always valid to overwrite).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
