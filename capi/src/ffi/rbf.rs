//! Pose-space drivers: radial-basis-function interpolation of shape
//! weights (or any outputs) over example rotations of a joint.
//!
//! The fit is offline (`sinew_rbf_solve`, into caller weights with caller
//! `double` scratch); the run time follows `shape.rs`: a `_storage_size`
//! query, an `_init` that validates the drivers once and copies them into
//! caller storage behind a handle with a check word, and a per-frame
//! `sinew_rbf_drivers_evaluate` that re-reads that storage in O(1).

use core::mem::{align_of, size_of};

use sinew_core::shape::rbf::{RbfDriver, RbfFit, RbfKernel, RbfSet};
use sinew_core::{Error, Quat};

use super::pose::{poses, sinew_soa_transform};
use super::ptr::{disjoint, handle_check, out_param, read, slice, slice_mut, write, Span};
use super::shape::{add, at, mul, round_up, stored, BadIndex, Fail, STORAGE_ALIGN};
use super::status::sinew_status;

/// RBF kernel: `exp(-x^2)` with `x = r / sigma`.
pub const SINEW_RBF_GAUSSIAN: u32 = 0;
/// RBF kernel: the thin-plate spline `x^2 ln x` (0 at 0).
pub const SINEW_RBF_THIN_PLATE: u32 = 1;
/// RBF kernel: Hardy's multiquadric `sqrt(1 + x^2)`.
pub const SINEW_RBF_MULTIQUADRIC: u32 = 2;

const _: () = {
    assert!(align_of::<RbfSet<'static>>() <= STORAGE_ALIGN);
    assert!(align_of::<RbfDriver<'static>>() <= STORAGE_ALIGN);
    assert!(align_of::<Quat>() <= STORAGE_ALIGN);
    assert!(size_of::<Quat>() == 4 * size_of::<f32>());
    assert!(align_of::<f32>() <= align_of::<f64>());
};

/// One RBF fitting problem for `sinew_rbf_solve`: `n` example rotations
/// of a joint and the `m` outputs wanted at each.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sinew_rbf_fit {
    /// `SINEW_RBF_GAUSSIAN`, `SINEW_RBF_THIN_PLATE` or `SINEW_RBF_MULTIQUADRIC`.
    pub kernel: u32,
    /// The kernel's scale in radians, finite and `> 0`.
    pub sigma: f32,
    /// Regularisation `>= 0` added to the diagonal: 0 reproduces every
    /// example exactly; a small positive value makes duplicate or nearly
    /// coincident examples solvable.
    pub lambda: f32,
    /// `example_count` unit quaternions `(x, y, z, w)` (length within 1e-3
    /// of 1), 4 floats each.
    pub examples: *const f32,
    /// `n >= 1`.
    pub example_count: usize,
    /// The outputs at each example, `n * output_count` floats row-major
    /// (example `i`'s at `[i * output_count]`), finite.
    pub targets: *const f32,
    /// `m >= 1`.
    pub output_count: usize,
}

/// One pose-space driver for `sinew_rbf_drivers_init`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sinew_rbf_driver {
    /// The joint whose local rotation drives it.
    pub joint: u32,
    /// `SINEW_RBF_GAUSSIAN`, `SINEW_RBF_THIN_PLATE` or `SINEW_RBF_MULTIQUADRIC`.
    pub kernel: u32,
    /// The kernel's scale in radians, finite and `> 0` (the fit's).
    pub sigma: f32,
    /// `clamp` 1 clamps every output to `[0, 1]` (outputs that are shape
    /// weights); 0 leaves them as they are.
    pub clamp: u32,
    /// `example_count` unit quaternions `(x, y, z, w)`, 4 floats each.
    pub examples: *const f32,
    /// `n >= 1`.
    pub example_count: usize,
    /// The solved weights, `n * output_count` finite floats row-major (what
    /// `sinew_rbf_solve` writes).
    pub weights: *const f32,
    /// `m >= 1`: the floats this driver writes.
    pub output_count: usize,
}

/// A validated set of RBF drivers, filled by `sinew_rbf_drivers_init`.
///
/// The drivers, their examples and their weights are copied into the
/// caller's storage, which must stay alive and unchanged while the handle
/// is used; the description arrays may be freed. There is nothing to free.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sinew_rbf_drivers {
    /// Joints of the pose `sinew_rbf_drivers_evaluate` reads.
    pub joint_count: usize,
    /// Drivers.
    pub driver_count: usize,
    /// Floats `sinew_rbf_drivers_evaluate` writes: the drivers'
    /// `output_count`s summed, driver after driver.
    pub output_count: usize,
    /// The storage given to `_init`.
    pub storage: *const u8,
    /// Its size in bytes.
    pub storage_size: usize,
    /// Private: lets functions reject a handle that `_init` did not fill.
    pub check: u64,
}

const RBF_TAG: u64 = 0x5349_4E45_5752_4246; // "SINEWRBF"

fn kernel(k: u32) -> Result<RbfKernel, sinew_status> {
    match k {
        SINEW_RBF_GAUSSIAN => Ok(RbfKernel::Gaussian),
        SINEW_RBF_THIN_PLATE => Ok(RbfKernel::ThinPlate),
        SINEW_RBF_MULTIQUADRIC => Ok(RbfKernel::Multiquadric),
        _ => Err(sinew_status::InvalidArgument),
    }
}

/// A core error of a driver or fit as the C status and index.
fn driver_fail(e: Error) -> Fail {
    match e {
        Error::InvalidDriver { driver, .. } => Fail(sinew_status::InvalidArgument, driver),
        e => sinew_status::from(e).into(),
    }
}

/// Scratch (in doubles) and weights (in floats) of a list of fits: the
/// largest augmented matrix `n (n + m)` plus room for every weight, and
/// the weights summed.
fn solve_sizes(fits: &[sinew_rbf_fit]) -> Result<(usize, usize), Fail> {
    let (mut matrix, mut weights) = (0usize, 0usize);
    for (k, f) in fits.iter().enumerate() {
        let n = f.example_count;
        let m = add(n, f.output_count)
            .and_then(|c| mul(n, c))
            .map_err(at(k))?;
        matrix = matrix.max(m);
        weights = mul(n, f.output_count)
            .and_then(|w| add(weights, w))
            .map_err(at(k))?;
    }
    let scratch = add(matrix, weights.div_ceil(2))?;
    if mul(scratch, size_of::<f64>())? > isize::MAX as usize {
        return Err(sinew_status::BadLength.into());
    }
    Ok((scratch, weights))
}

/// Writes into `*scratch_len` the doubles of scratch and into
/// `*weight_count` the floats of weights `sinew_rbf_solve` needs for these
/// `fit_count` fits: the largest `n (n + m)` plus `ceil(W / 2)`, and `W`,
/// the sum of every fit's `n m`. Only `example_count` and `output_count`
/// are read.
///
/// Errors: NULL_PARAMETER, MISALIGNED, BAD_LENGTH (a size that overflows),
/// OVERLAPPING_BUFFERS. The outputs are untouched on error.
///
/// # Safety
/// `fits` has `fit_count` readable entries; `scratch_len` and
/// `weight_count` are writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_rbf_solve_sizes(
    fits: *const sinew_rbf_fit,
    fit_count: usize,
    scratch_len: *mut usize,
    weight_count: *mut usize,
) -> sinew_status {
    boundary! {
        out_param(scratch_len)?;
        out_param(weight_count)?;
        // SAFETY: this function's `# Safety` contract; `slice` checks NULL, alignment and size.
        let f = unsafe { slice(fits, fit_count)? };
        let (ss, ws) = (Span::value(scratch_len.cast_const()), Span::value(weight_count.cast_const()));
        disjoint(ss, &[Span::of(f), ws])?;
        disjoint(ws, &[Span::of(f)])?;
        let (s, w) = solve_sizes(f).map_err(|Fail(s, _)| s)?;
        // SAFETY: `out_param` checked both pointers; the contract makes them writable.
        unsafe {
            write(scratch_len, s);
            write(weight_count, w);
        }
        Ok(())
    }
}

/// Solves `fit_count` RBF fits offline, `(Phi + lambda I) W = Y` each, by
/// Gaussian elimination with partial pivoting in double precision, and
/// writes every fit's weights (`n * output_count` floats, the layout of
/// `sinew_rbf_driver.weights`) into `weights`, fit after fit: fit `k`'s
/// start after the weights of fits `0..k`. `scratch` (`scratch_len`
/// doubles, at least what `sinew_rbf_solve_sizes` gives) holds the
/// matrices and the weights until every fit has solved; its contents on
/// return are unspecified. O(n^3 + n^2 m) per fit; results are those of
/// the Rust `RbfFit::solve`, bit for bit.
///
/// `bad_index` is NULL, or receives the index of the fit at fault when the
/// call fails because of one fit, and `SINEW_NO_INDEX` otherwise (also on
/// success): it is the one out-parameter written on error.
///
/// Errors: NULL_PARAMETER, MISALIGNED, BUFFER_TOO_SMALL (`scratch_len`),
/// BAD_LENGTH (`weight_count` not the sum of `n m`, a size that
/// overflows), INVALID_ARGUMENT with the fit in `bad_index` (an unknown
/// kernel; no examples or outputs; `sigma` not finite and positive;
/// `lambda` negative or not finite; an example that is not a finite unit
/// quaternion; a non-finite target; a singular system, such as a
/// duplicate example or a single thin-plate example with `lambda` 0; an
/// ill-conditioned one, whose float weights would not reproduce the
/// targets within `1e-4 max(1, |Y|)`), OVERLAPPING_BUFFERS. `weights` is
/// untouched on error.
///
/// # Safety
/// `fits` has `fit_count` readable entries whose arrays are valid for
/// their counts; `scratch` has `scratch_len` writable doubles; `weights`
/// has `weight_count` writable floats; `bad_index` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_rbf_solve(
    fits: *const sinew_rbf_fit,
    fit_count: usize,
    scratch: *mut f64,
    scratch_len: usize,
    weights: *mut f32,
    weight_count: usize,
    bad_index: *mut u32,
) -> sinew_status {
    boundary! {
        let report = BadIndex::new(bad_index)?;
        // SAFETY: this function's `# Safety` contract, passed on unchanged (the two calls).
        unsafe {
            let r = solve(fits, fit_count, scratch, scratch_len, weights, weight_count, bad_index);
            report.report(r)
        }
    }
}

/// The body of `sinew_rbf_solve`.
///
/// # Safety
/// As `sinew_rbf_solve`.
unsafe fn solve(
    fits: *const sinew_rbf_fit,
    fit_count: usize,
    scratch: *mut f64,
    scratch_len: usize,
    weights: *mut f32,
    weight_count: usize,
    bad_index: *mut u32,
) -> Result<(), Fail> {
    // SAFETY: this function's `# Safety` contract; the helpers check NULL, alignment and size.
    let (f, s, w) = unsafe {
        (
            slice(fits, fit_count)?,
            slice_mut(scratch, scratch_len)?,
            slice_mut(weights, weight_count)?,
        )
    };
    let (needed, total) = solve_sizes(f)?;
    if s.len() < needed {
        return Err(sinew_status::BufferTooSmall.into());
    }
    if w.len() != total {
        return Err(sinew_status::BadLength.into());
    }
    let (ss, ws, xs) = (
        Span::of(s),
        Span::of(w),
        Span::value(bad_index.cast_const()),
    );
    disjoint(ss, &[Span::of(f), ws, xs])?;
    disjoint(ws, &[Span::of(f), xs])?;
    // The weights gather at the end of the scratch and reach `weights`
    // only once every fit has solved, so a failing fit writes nothing.
    let (matrix, held) = s.split_at_mut(needed - total.div_ceil(2));
    // SAFETY: `held` is `ceil(total / 2)` doubles, so at least `total` floats, exclusively
    // borrowed; a double's alignment is a multiple of a float's (asserted).
    let held: &mut [f32] =
        unsafe { core::slice::from_raw_parts_mut(held.as_mut_ptr().cast::<f32>(), total) };
    let mut rest = &mut held[..];
    for (k, c) in f.iter().enumerate() {
        let fail = at(k);
        let kernel = kernel(c.kernel).map_err(&fail)?;
        let (n, m) = (c.example_count, c.output_count);
        // SAFETY: the contract makes the fit's arrays valid for their counts.
        let (e, t) = unsafe {
            (
                slice(c.examples.cast::<Quat>(), n).map_err(&fail)?,
                slice(c.targets, mul(n, m).map_err(&fail)?).map_err(&fail)?,
            )
        };
        disjoint(ss, &[Span::of(e), Span::of(t)]).map_err(&fail)?;
        disjoint(ws, &[Span::of(e), Span::of(t)]).map_err(&fail)?;
        let fit = RbfFit {
            kernel,
            sigma: c.sigma,
            lambda: c.lambda,
            examples: e,
            targets: t,
            outputs: m,
        };
        let (out, tail) = core::mem::take(&mut rest).split_at_mut(n * m);
        rest = tail;
        let index = u32::try_from(k).unwrap_or(u32::MAX);
        fit.solve(index, matrix, out).map_err(driver_fail)?;
    }
    w.copy_from_slice(held);
    Ok(())
}

/// Where things sit in an RBF storage: the `RbfSet` at 0, the drivers, the
/// examples (16 bytes each), the weights.
#[derive(Clone, Copy)]
struct RbfLayout {
    drivers: usize,
    examples: usize,
    example_count: usize,
    weights: usize,
    weight_count: usize,
    size: usize,
}

const RBF_DRIVERS_AT: usize = round_up(size_of::<RbfSet<'static>>());

fn rbf_layout(drivers: &[sinew_rbf_driver]) -> Result<RbfLayout, Fail> {
    let (mut example_count, mut weight_count) = (0usize, 0usize);
    for (k, d) in drivers.iter().enumerate() {
        example_count = add(example_count, d.example_count).map_err(at(k))?;
        weight_count = mul(d.example_count, d.output_count)
            .and_then(|w| add(weight_count, w))
            .map_err(at(k))?;
    }
    let sizes = || -> Result<RbfLayout, sinew_status> {
        let d_bytes = round_up(mul(drivers.len(), size_of::<RbfDriver<'static>>())?);
        let examples = add(RBF_DRIVERS_AT, d_bytes)?;
        let weights = add(examples, mul(example_count, size_of::<Quat>())?)?;
        let size = add(weights, mul(weight_count, size_of::<f32>())?)?;
        if size > isize::MAX as usize {
            return Err(sinew_status::BadLength);
        }
        Ok(RbfLayout {
            drivers: RBF_DRIVERS_AT,
            examples,
            example_count,
            weights,
            weight_count,
            size,
        })
    };
    Ok(sizes()?)
}

/// Writes into `*size` the bytes of storage `sinew_rbf_drivers_init` needs
/// for these `driver_count` drivers (the library's layout: the drivers and
/// a copy of their examples and weights). Only `example_count` and
/// `output_count` of each driver are read. Allocate it 16-byte aligned,
/// once per character.
///
/// Errors: NULL_PARAMETER, MISALIGNED, BAD_LENGTH (a size that overflows),
/// OVERLAPPING_BUFFERS. `*size` is untouched on error.
///
/// # Safety
/// `drivers` has `driver_count` readable entries; `size` is writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_rbf_drivers_storage_size(
    drivers: *const sinew_rbf_driver,
    driver_count: usize,
    size: *mut usize,
) -> sinew_status {
    boundary! {
        out_param(size)?;
        // SAFETY: this function's `# Safety` contract; `slice` checks NULL, alignment and size.
        let d = unsafe { slice(drivers, driver_count)? };
        disjoint(Span::value(size.cast_const()), &[Span::of(d)])?;
        let layout = rbf_layout(d).map_err(|Fail(s, _)| s)?;
        // SAFETY: `out_param` checked the pointer; the contract makes it writable.
        unsafe { write(size, layout.size) };
        Ok(())
    }
}

/// Views one C driver's arrays (examples as quaternions, weights).
///
/// # Safety
/// The driver's arrays are valid for their counts.
unsafe fn driver_arrays<'a>(d: &sinew_rbf_driver) -> Result<(&'a [Quat], &'a [f32]), sinew_status> {
    let n = d.example_count;
    // SAFETY: this function's `# Safety` contract; `slice` checks NULL, alignment and size.
    unsafe {
        Ok((
            slice(d.examples.cast::<Quat>(), n)?,
            slice(d.weights, mul(n, d.output_count)?)?,
        ))
    }
}

/// Validates `driver_count` RBF drivers over a skeleton of `joint_count`
/// joints once and fills `*out` with a handle for
/// `sinew_rbf_drivers_evaluate`. The drivers, their examples and their
/// weights are copied into `storage` (`storage_size` bytes, at least what
/// `sinew_rbf_drivers_storage_size` gives, 16-byte aligned), which must
/// stay alive and unchanged while the handle is used; the description
/// arrays may be freed afterwards.
///
/// `bad_index` is NULL, or receives the index of the driver at fault when
/// the call fails because of one driver, and `SINEW_NO_INDEX` otherwise
/// (also on success): it is the one out-parameter written on error.
///
/// Errors: NULL_PARAMETER, MISALIGNED, BUFFER_TOO_SMALL (`storage_size`),
/// OUT_OF_RANGE (a joint not below `joint_count`), INVALID_ARGUMENT (an
/// unknown kernel; `clamp` not 0 or 1; no examples or outputs; `sigma` not
/// finite and positive; an example that is not a finite unit quaternion;
/// a non-finite weight), OVERLAPPING_BUFFERS. `*out` and `storage` are
/// untouched on error.
///
/// # Safety
/// `drivers` has `driver_count` readable entries whose arrays are valid
/// for their counts; `storage` has `storage_size` writable bytes; `out` is
/// writable; `bad_index` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sinew_rbf_drivers_init(
    joint_count: usize,
    drivers: *const sinew_rbf_driver,
    driver_count: usize,
    storage: *mut u8,
    storage_size: usize,
    out: *mut sinew_rbf_drivers,
    bad_index: *mut u32,
) -> sinew_status {
    boundary! {
        let report = BadIndex::new(bad_index)?;
        // SAFETY: this function's `# Safety` contract, passed on unchanged (the two calls).
        unsafe {
            let r = rbf_init(joint_count, (drivers, driver_count), (storage, storage_size), out, bad_index);
            report.report(r)
        }
    }
}

/// The body of `sinew_rbf_drivers_init`.
///
/// # Safety
/// As `sinew_rbf_drivers_init`.
unsafe fn rbf_init(
    joint_count: usize,
    (drivers, driver_count): (*const sinew_rbf_driver, usize),
    (storage, storage_size): (*mut u8, usize),
    out: *mut sinew_rbf_drivers,
    bad_index: *mut u32,
) -> Result<(), Fail> {
    out_param(out)?;
    // SAFETY: this function's `# Safety` contract; the helpers check NULL, alignment and size.
    let (ds, st) = unsafe {
        (
            slice(drivers, driver_count)?,
            slice_mut(storage, storage_size)?,
        )
    };
    let layout = rbf_layout(ds)?;
    if st.len() < layout.size {
        return Err(sinew_status::BufferTooSmall.into());
    }
    if !(st.as_ptr() as usize).is_multiple_of(STORAGE_ALIGN) {
        return Err(sinew_status::Misaligned.into());
    }
    let (ss, os, xs) = (
        Span::of(st),
        Span::value(out.cast_const()),
        Span::value(bad_index.cast_const()),
    );
    disjoint(ss, &[Span::of(ds), os, xs])?;
    disjoint(os, &[Span::of(ds), xs])?;
    // Each driver checked as the core checks it, before anything is written.
    let core_driver = |k: usize, d: &sinew_rbf_driver| -> Result<RbfDriver<'static>, Fail> {
        let fail = at(k);
        if d.joint as usize >= joint_count || d.joint > u32::from(u16::MAX) {
            return Err(fail(sinew_status::OutOfRange));
        }
        let clamp = match d.clamp {
            0 => false,
            1 => true,
            _ => return Err(fail(sinew_status::InvalidArgument)),
        };
        Ok(RbfDriver {
            joint: d.joint as u16,
            kernel: kernel(d.kernel).map_err(&fail)?,
            sigma: d.sigma,
            examples: &[],
            weights: &[],
            outputs: d.output_count,
            clamp,
        })
    };
    for (k, d) in ds.iter().enumerate() {
        let c = core_driver(k, d)?;
        // SAFETY: the contract makes the driver's arrays valid for their counts.
        let (e, w) = unsafe { driver_arrays(d) }.map_err(at(k))?;
        for s in [Span::of(e), Span::of(w)] {
            disjoint(s, &[ss, os, xs]).map_err(at(k))?;
        }
        let one = [RbfDriver {
            examples: e,
            weights: w,
            ..c
        }];
        RbfSet::new(&one, joint_count).map_err(|e| match e {
            Error::InvalidDriver { .. } => at(k)(sinew_status::InvalidArgument),
            e => at(k)(e.into()),
        })?;
    }

    // Everything is checked: lay the drivers out through `base` alone (the
    // handle keeps only the address and size, taken first).
    let (start, size) = (st.as_ptr(), st.len());
    let base = st.as_mut_ptr();
    // SAFETY: `layout` places the examples and weights inside `st` (size checked) at multiples of
    // 16 from a 16-byte aligned start, after the driver region and apart from each other.
    let (examples, weights) = unsafe {
        (
            core::slice::from_raw_parts_mut(
                base.add(layout.examples).cast::<Quat>(),
                layout.example_count,
            ),
            core::slice::from_raw_parts_mut(
                base.add(layout.weights).cast::<f32>(),
                layout.weight_count,
            ),
        )
    };
    let (mut examples, mut weights): (&mut [Quat], &mut [f32]) = (examples, weights);
    let driver_at = |k: usize| {
        // SAFETY: inside the driver region of `st` for `k < driver_count`; 16-byte aligned start,
        // `RbfDriver`'s alignment divides 16 (asserted).
        unsafe { base.add(layout.drivers).cast::<RbfDriver<'_>>().add(k) }
    };
    for (k, d) in ds.iter().enumerate() {
        let c = core_driver(k, d)?;
        // SAFETY: checked above under the same contract.
        let (e, w) = unsafe { driver_arrays(d)? };
        let (de, rest) = core::mem::take(&mut examples).split_at_mut(e.len());
        examples = rest;
        de.copy_from_slice(e);
        let (dw, rest) = core::mem::take(&mut weights).split_at_mut(w.len());
        weights = rest;
        dw.copy_from_slice(w);
        let driver = RbfDriver {
            examples: de,
            weights: dw,
            ..c
        };
        // SAFETY: in bounds and aligned (see `driver_at`); nothing else refers to this slot.
        unsafe { driver_at(k).write(driver) };
    }
    // SAFETY: every slot `0..driver_count` was written just above; the region is not written again.
    let written: &[RbfDriver<'_>] = unsafe { core::slice::from_raw_parts(driver_at(0), ds.len()) };
    let set = RbfSet::new(written, joint_count).map_err(driver_fail)?;
    // SAFETY: offset 0 of `st` is aligned and `RBF_DRIVERS_AT` bytes long, room for the `RbfSet`;
    // it does not overlap the drivers.
    unsafe { base.cast::<RbfSet<'_>>().write(set) };
    let handle = sinew_rbf_drivers {
        joint_count,
        driver_count: ds.len(),
        output_count: set.output_count(),
        storage: start,
        storage_size: size,
        check: rbf_check(start, size, (joint_count, ds.len(), set.output_count())),
    };
    // SAFETY: `out_param` checked the pointer; the contract makes it writable.
    unsafe { write(out, handle) };
    Ok(())
}

fn rbf_check(storage: *const u8, size: usize, h: (usize, usize, usize)) -> u64 {
    let (joints, drivers, outputs) = h;
    let tag = RBF_TAG ^ (joints as u64).rotate_left(23) ^ (outputs as u64).rotate_left(41);
    handle_check(storage, size, drivers as u32, tag) ^ (drivers as u64) << 1
}

/// Re-views a handle's drivers (O(1): `_init` validated them).
///
/// # Safety
/// `h` is NULL or points to a `sinew_rbf_drivers`; if filled by
/// `sinew_rbf_drivers_init`, its storage is still alive and unchanged.
unsafe fn view_rbf<'a>(h: *const sinew_rbf_drivers) -> Result<(RbfSet<'a>, Span), sinew_status> {
    // SAFETY: this function's `# Safety` contract; `read` checks NULL and alignment.
    let h = unsafe { read(h)? };
    let (p, n) = (h.storage, h.storage_size);
    let checked = h.check == rbf_check(p, n, (h.joint_count, h.driver_count, h.output_count));
    // SAFETY: this function's `# Safety` contract: a checked handle's storage holds an `RbfSet`.
    let (set, span) = unsafe { stored::<RbfSet<'a>>(p, n, checked, RBF_DRIVERS_AT)? };
    let at = p.wrapping_add(RBF_DRIVERS_AT).cast::<RbfDriver<'_>>();
    if set.joint_count() != h.joint_count
        || set.output_count() != h.output_count
        || set.drivers().len() != h.driver_count
        || set.drivers().as_ptr() != at
    {
        return Err(sinew_status::InvalidHandle);
    }
    Ok((set, span))
}

/// Writes every driver's outputs into `out` (`out_len` = the handle's
/// `output_count`), driver after driver: driver `d`'s `output_count`
/// floats start after those of drivers `0..d`. Each reads its joint's
/// rotation (normalised first) from the local pose `pose`
/// (`sinew_soa_count(joint_count)` blocks). To drive shape weights, point
/// `out` into the weight array given to `sinew_blend_shapes_apply`.
/// Allocation-free; O(n m) per driver.
///
/// Errors: NULL_PARAMETER, MISALIGNED, INVALID_HANDLE, BAD_LENGTH
/// (`pose_len` or `out_len`), INVALID_ARGUMENT (a driver's joint rotation
/// is zero, NaN or infinite), OVERLAPPING_BUFFERS (`out` overlapping the
/// pose or the storage). `out` is untouched on error.
///
/// # Safety
/// `drivers` points to a handle filled by `sinew_rbf_drivers_init` whose
/// storage is alive; `pose` has `pose_len` readable blocks; `out` has
/// `out_len` writable floats.
#[no_mangle]
pub unsafe extern "C" fn sinew_rbf_drivers_evaluate(
    drivers: *const sinew_rbf_drivers,
    pose: *const sinew_soa_transform,
    pose_len: usize,
    out: *mut f32,
    out_len: usize,
) -> sinew_status {
    boundary! {
        // SAFETY: this function's `# Safety` contract makes each pointer valid for its
        // length during the call; the helpers check NULL, alignment and size.
        let ((set, storage), p, o) =
            unsafe { (view_rbf(drivers)?, slice(pose, pose_len)?, slice_mut(out, out_len)?) };
        disjoint(Span::of(o), &[storage, Span::of(p)])?;
        set.evaluate_pose(poses(p), o)?;
        Ok(())
    }
}
