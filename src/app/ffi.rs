//! Every call into OpenCL that the Rust compiler cannot check lives in this module, and nowhere else in cliper.
//!
//! Each function states why it is sound. The common reasoning:
//! - host memory handed to OpenCL is only used during a *blocking* call, so it outlives the transfer;
//! - OpenCL checks the region of every read/write/copy/fill against the buffer size and returns
//!   `CL_INVALID_VALUE` rather than touching memory outside it;
//! - `Element` types are plain `repr(C)` floats without padding, for which every bit pattern is valid, so viewing
//!   them as bytes (and writing bytes into them) is sound;
//! - kernel arguments are copied by `clSetKernelArg` before it returns.
//!
//! What no host API can check is a kernel's own indexing: cliper trusts its kernel sources (and those of
//! processes users write) to stay within the buffers they are given, as every OpenCL and GPU framework does.
#![allow(unsafe_code)]
#![deny(clippy::undocumented_unsafe_blocks)]

use crate::element::Element;
use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::error_codes::ClError;
use opencl3::event::Event;
use opencl3::kernel::Kernel;
use opencl3::memory::{Buffer, CL_MEM_READ_WRITE, ClMem};
use opencl3::types::{CL_BLOCKING, cl_mem};
use std::ffi::c_void;
use std::ptr;

type ClResult<T> = std::result::Result<T, ClError>;

/// Allocates an uninitialised read-write device buffer of `bytes` bytes (at least 1).
pub(crate) fn create_buffer(context: &Context, bytes: usize) -> ClResult<Buffer<u8>> {
    // SAFETY: no host pointer is given, so OpenCL owns the memory; `Buffer` releases it on drop.
    unsafe { Buffer::<u8>::create(context, CL_MEM_READ_WRITE, bytes.max(1), ptr::null_mut()) }
}

/// Copies `data` from the host into `buffer` at `offset_bytes`, waiting until the copy is done.
pub(crate) fn write_buffer<T: Element>(
    queue: &CommandQueue,
    buffer: &Buffer<u8>,
    offset_bytes: usize,
    data: &[T],
) -> ClResult<Event> {
    // SAFETY: blocking write, so `data` outlives the transfer; OpenCL bounds-checks the region.
    let event = unsafe {
        opencl3::command_queue::enqueue_write_buffer(
            queue.get(),
            buffer.get(),
            CL_BLOCKING,
            offset_bytes,
            std::mem::size_of_val(data),
            data.as_ptr().cast::<c_void>(),
            0,
            ptr::null(),
        )?
    };
    Ok(Event::new(event))
}

/// Copies `out.len()` elements from `buffer` at `offset_bytes` into `out`, waiting until the copy is done.
pub(crate) fn read_buffer<T: Element>(
    queue: &CommandQueue,
    buffer: &Buffer<u8>,
    offset_bytes: usize,
    out: &mut [T],
) -> ClResult<Event> {
    // SAFETY: blocking read into memory we hold mutably; any bit pattern is a valid `Element`.
    let event = unsafe {
        opencl3::command_queue::enqueue_read_buffer(
            queue.get(),
            buffer.get(),
            CL_BLOCKING,
            offset_bytes,
            std::mem::size_of_val(out),
            out.as_mut_ptr().cast::<c_void>(),
            0,
            ptr::null(),
        )?
    };
    Ok(Event::new(event))
}

/// Sets `bytes` bytes of `buffer` from `offset_bytes` to zero, on the device, writing a zero pattern of
/// `pattern_bytes` bytes (1, 2, 4, 8 or 16, dividing both the offset and the size).
pub(crate) fn fill_zero(
    queue: &CommandQueue,
    buffer: &Buffer<u8>,
    offset_bytes: usize,
    bytes: usize,
    pattern_bytes: usize,
) -> ClResult<Event> {
    let zeros = [0u8; 16];
    debug_assert!(pattern_bytes <= zeros.len());
    // SAFETY: the pattern is copied by the call (and is at most 16 bytes, all of them ours); OpenCL
    // bounds-checks the region and the pattern size.
    let event = unsafe {
        opencl3::command_queue::enqueue_fill_buffer(
            queue.get(),
            buffer.get(),
            zeros.as_ptr().cast::<c_void>(),
            pattern_bytes.min(zeros.len()),
            offset_bytes,
            bytes,
            0,
            ptr::null(),
        )?
    };
    Ok(Event::new(event))
}

/// Copies `bytes` bytes between two device buffers (which may be the same buffer, regions not overlapping).
pub(crate) fn copy_buffer(
    queue: &CommandQueue,
    src: &Buffer<u8>,
    dst: &Buffer<u8>,
    src_offset: usize,
    dst_offset: usize,
    bytes: usize,
) -> ClResult<Event> {
    // SAFETY: device-to-device; OpenCL checks both regions and rejects overlap (CL_MEM_COPY_OVERLAP).
    let event = unsafe {
        opencl3::command_queue::enqueue_copy_buffer(
            queue.get(),
            src.get(),
            dst.get(),
            src_offset,
            dst_offset,
            bytes,
            0,
            ptr::null(),
        )?
    };
    Ok(Event::new(event))
}

/// Sets kernel argument `index` to a by-value argument given as its bytes (a scalar or vector type).
pub(crate) fn set_arg_bytes(kernel: &Kernel, index: u32, bytes: &[u8]) -> ClResult<()> {
    // SAFETY: clSetKernelArg copies `bytes.len()` bytes before returning; a size that does not match the
    // parameter's type is rejected with CL_INVALID_ARG_SIZE.
    unsafe { opencl3::kernel::set_kernel_arg(kernel.get(), index, bytes.len(), bytes.as_ptr().cast::<c_void>()) }
        .map_err(ClError)
}

/// Sets kernel argument `index` to a device buffer.
pub(crate) fn set_arg_buffer(kernel: &Kernel, index: u32, buffer: &Buffer<u8>) -> ClResult<()> {
    let mem: cl_mem = buffer.get();
    // SAFETY: the argument value is the `cl_mem` handle itself, copied by the call; OpenCL retains nothing
    // beyond the launch, and cliper keeps the buffer alive while commands that use it are pending (the
    // array handles a process holds outlive its launches).
    unsafe {
        opencl3::kernel::set_kernel_arg(
            kernel.get(),
            index,
            std::mem::size_of::<cl_mem>(),
            (&raw const mem).cast::<c_void>(),
        )
    }
    .map_err(ClError)
}

/// Sets kernel argument `index` to `bytes` bytes of work-group local memory.
pub(crate) fn set_arg_local(kernel: &Kernel, index: u32, bytes: usize) -> ClResult<()> {
    // SAFETY: a null value with a size asks OpenCL to allocate local memory; nothing on the host is touched.
    unsafe { opencl3::kernel::set_kernel_arg(kernel.get(), index, bytes, ptr::null()) }.map_err(ClError)
}

/// Enqueues `kernel` over `global` work items (1 to 3 dimensions) with an optional work-group size.
pub(crate) fn enqueue_kernel(
    queue: &CommandQueue,
    kernel: &Kernel,
    global: &[usize],
    local: Option<&[usize]>,
) -> ClResult<Event> {
    debug_assert!((1..=3).contains(&global.len()));
    debug_assert!(local.is_none_or(|l| l.len() == global.len()));
    // SAFETY: from the host's side, the size arrays are read during the call; unset arguments are reported
    // as CL_INVALID_KERNEL_ARGS. See the module docs for what the kernel itself must respect.
    let event = unsafe {
        opencl3::command_queue::enqueue_nd_range_kernel(
            queue.get(),
            kernel.get(),
            global.len() as u32,
            ptr::null(),
            global.as_ptr(),
            local.map_or(ptr::null(), <[usize]>::as_ptr),
            0,
            ptr::null(),
        )?
    };
    Ok(Event::new(event))
}

/// Creates a program for `device` from a binary its driver produced before (the on-disk program cache). The driver
/// checks the binary and answers `CL_INVALID_BINARY` for one it cannot use; the cache has verified its checksum.
pub(crate) fn program_from_binary(
    context: &Context,
    device: opencl3::types::cl_device_id,
    binary: &[u8],
) -> ClResult<opencl3::program::Program> {
    // SAFETY: `device` belongs to `context` (the app's one device); `binary` is alive for the call, which copies it.
    unsafe { opencl3::program::Program::create_from_binary(context, &[device], &[binary]) }
}

/// Maps `bytes` bytes (at least 1) of `mem` from `offset` into host memory with `flags`, blocking: on the app's
/// in-order queue every command enqueued before has then finished. `CL_MISALIGNED_SUB_BUFFER_OFFSET` when the
/// pointer is not aligned to `align` (the mapping is undone).
fn map_blocking(
    queue: &CommandQueue,
    mem: cl_mem,
    flags: opencl3::types::cl_map_flags,
    offset: usize,
    bytes: usize,
    align: usize,
) -> ClResult<*mut c_void> {
    let mut pointer: cl_mem = ptr::null_mut();
    // SAFETY: a blocking map of a region OpenCL checks against the buffer's size (CL_INVALID_VALUE when it is
    // outside); the pointer is used only until the matching `unmap_all`.
    let event = unsafe {
        opencl3::command_queue::enqueue_map_buffer(
            queue.get(),
            mem,
            CL_BLOCKING,
            flags,
            offset,
            bytes.max(1),
            &mut pointer,
            0,
            ptr::null(),
        )?
    };
    drop(Event::new(event));
    if (pointer as usize).is_multiple_of(align) {
        Ok(pointer)
    } else {
        let _ = unmap_all(queue, &[(mem, pointer)]);
        Err(ClError(opencl3::error_codes::CL_MISALIGNED_SUB_BUFFER_OFFSET))
    }
}

/// Unmaps every `(buffer, pointer)` that `map_blocking` returned, in order; the unmaps' events, in order.
fn unmap_all(queue: &CommandQueue, mapped: &[(cl_mem, *mut c_void)]) -> ClResult<Vec<Event>> {
    let mut events = Vec::with_capacity(mapped.len());
    for &(mem, pointer) in mapped {
        // SAFETY: `pointer` is what mapping `mem` returned, unmapped once; no slice or pointer made from it is used
        // after this.
        let event =
            unsafe { opencl3::command_queue::enqueue_unmap_mem_object(queue.get(), mem, pointer, 0, ptr::null())? };
        events.push(Event::new(event));
    }
    Ok(events)
}

/// One operand of a [`host_gemm`]: its buffer and the strides of its rows and columns, in elements.
pub(crate) struct HostOperand<'a> {
    pub buffer: &'a Buffer<u8>,
    pub row_stride: usize,
    pub col_stride: usize,
}

/// `C = alpha·op(A)·op(B) + beta·C` for matrices in device buffers, computed on the host (the `gemm` crate) in
/// the buffers' mapped memory: on a CPU device such as PoCL's, device buffers are host memory and mapping them
/// copies nothing.
pub(crate) struct HostGemm<'a, T> {
    /// M, N, K: A is M×K, B is K×N and C is M×N.
    pub dims: [usize; 3],
    pub a: HostOperand<'a>,
    pub b: HostOperand<'a>,
    pub c: HostOperand<'a>,
    /// Per product of the batch, the element offsets of its A, B and C in their buffers.
    pub offsets: &'a [[usize; 3]],
    pub alpha: T,
    pub beta: T,
    /// Whether C is read (`beta` is not zero); when false C is only written, whatever it held.
    pub read_c: bool,
    pub conj_a: bool,
    pub conj_b: bool,
}

/// A buffer to map over elements `[lo, hi)` (one mapping per distinct buffer of a host GEMM).
struct Span {
    mem: cl_mem,
    lo: usize,
    hi: usize,
    write: bool,
}

/// Runs `job` on the host: maps each distinct buffer over the elements its operands reach (blocking, so every
/// command enqueued before has finished, as an in-order queue promises), multiplies there, and unmaps. Returns
/// the event of C's unmap, the command after which the device sees C's new values. `T` must be `f32`, `f64`,
/// `Complex32` or `Complex64` (the element types cliper has); any other answers `CL_INVALID_VALUE`.
pub(crate) fn host_gemm<T: Element + 'static>(queue: &CommandQueue, job: &HostGemm<'_, T>) -> ClResult<Event> {
    use num_complex::{Complex32, Complex64};
    use opencl3::error_codes::CL_INVALID_VALUE;
    use opencl3::memory::{CL_MAP_READ, CL_MAP_WRITE};
    use std::any::TypeId;
    let supported = [TypeId::of::<f32>(), TypeId::of::<f64>(), TypeId::of::<Complex32>(), TypeId::of::<Complex64>()];
    if !supported.contains(&TypeId::of::<T>()) {
        return Err(ClError(CL_INVALID_VALUE));
    }
    let [m, n, k] = job.dims;
    if m == 0 || n == 0 || job.offsets.is_empty() {
        return Err(ClError(CL_INVALID_VALUE));
    }
    let size = std::mem::size_of::<T>();
    // The elements each operand reaches, [lo, hi), over the whole batch: every pointer formed below stays inside.
    let reach = |op: &HostOperand<'_>, rows: usize, cols: usize, which: usize| -> Option<(usize, usize)> {
        let last = if rows == 0 || cols == 0 {
            0
        } else {
            (rows - 1)
                .checked_mul(op.row_stride)?
                .checked_add((cols - 1).checked_mul(op.col_stride)?)?
                .checked_add(1)?
        };
        let lo = job.offsets.iter().filter_map(|o| o.get(which)).min().copied()?;
        let hi = job.offsets.iter().filter_map(|o| o.get(which)).max()?.checked_add(last)?;
        Some((lo, hi.max(lo + 1)))
    };
    let operands = [(&job.a, m, k, false), (&job.b, k, n, false), (&job.c, m, n, true)];
    let mut spans: Vec<Span> = Vec::with_capacity(3);
    for (which, &(op, rows, cols, write)) in operands.iter().enumerate() {
        let (lo, hi) = reach(op, rows, cols, which).ok_or(ClError(CL_INVALID_VALUE))?;
        let mem = op.buffer.get();
        match spans.iter_mut().find(|m| m.mem == mem) {
            Some(span) => {
                span.lo = span.lo.min(lo);
                span.hi = span.hi.max(hi);
                span.write |= write;
            }
            None => spans.push(Span { mem, lo, hi, write }),
        }
    }
    let mut mapped: Vec<(cl_mem, *mut c_void)> = Vec::with_capacity(spans.len());
    for span in &spans {
        let flags = if span.write { CL_MAP_READ | CL_MAP_WRITE } else { CL_MAP_READ };
        let (offset, bytes) = (span.lo * size, (span.hi - span.lo) * size);
        match map_blocking(queue, span.mem, flags, offset, bytes, std::mem::align_of::<T>()) {
            Ok(pointer) => mapped.push((span.mem, pointer)),
            Err(e) => {
                let _ = unmap_all(queue, &mapped);
                return Err(e);
            }
        }
    }
    // The host address of element `index` of the buffer `mem` (inside its mapped range, as `reach` ensured).
    let address = |mem: cl_mem, index: usize| -> *mut T {
        spans
            .iter()
            .zip(&mapped)
            .find(|(span, _)| span.mem == mem)
            .map_or(ptr::null_mut(), |(span, &(_, p))| p.cast::<T>().wrapping_add(index - span.lo))
    };
    let stride = |s: usize| s as isize;
    for &[oa, ob, oc] in job.offsets {
        let (a, b, c) =
            (address(job.a.buffer.get(), oa), address(job.b.buffer.get(), ob), address(job.c.buffer.get(), oc));
        if a.is_null() || b.is_null() || c.is_null() {
            continue;
        }
        // SAFETY: every element the product touches lies in a mapped range (`reach` bounds the batch's offsets
        // and strides; the maps cover those ranges), aligned for `T`, which is one of the four types `gemm`
        // accepts (checked above). C does not overlap A or B element-wise (MatMul refuses that), so the writes
        // never alias the reads even where they share a buffer. The crate's `alpha` scales the old C and its
        // `beta` the product: cliper's beta and alpha.
        unsafe {
            gemm::gemm(
                m,
                n,
                k,
                c,
                stride(job.c.col_stride),
                stride(job.c.row_stride),
                job.read_c,
                a.cast_const(),
                stride(job.a.col_stride),
                stride(job.a.row_stride),
                b.cast_const(),
                stride(job.b.col_stride),
                stride(job.b.row_stride),
                job.beta,
                job.alpha,
                false,
                job.conj_a,
                job.conj_b,
                gemm::Parallelism::Rayon(0),
            );
        }
    }
    let events = unmap_all(queue, &mapped)?;
    // C's unmap: the command after which the device sees C's new values.
    let c_at = spans.iter().position(|span| span.mem == job.c.buffer.get());
    events.into_iter().nth(c_at.unwrap_or(usize::MAX)).ok_or(ClError(CL_INVALID_VALUE))
}

/// A region of a device buffer, in elements: `[lo, hi)`.
pub(crate) struct Region<'a> {
    pub buffer: &'a Buffer<u8>,
    pub lo: usize,
    pub hi: usize,
}

/// Maps the `reads` regions (elements of `T`) for reading and the `write` region (elements of `O`) for reading
/// and writing — blocking, so every command enqueued before has finished, as an in-order queue promises — and
/// hands them to `f` as slices (element `lo` of a region is index 0 of its slice). Then unmaps them all and
/// returns what `f` returned with the event of the written region's unmap, after which the device sees the
/// values. `CL_INVALID_MEM_OBJECT` when the written buffer is also read (its slices would alias) and
/// `CL_MISALIGNED_SUB_BUFFER_OFFSET` when a mapping is not aligned for its type.
pub(crate) fn with_mapped<T: Element, O: Element, R>(
    queue: &CommandQueue,
    reads: &[Region<'_>],
    write: &Region<'_>,
    f: impl FnOnce(&[&[T]], &mut [O]) -> R,
) -> ClResult<(R, Event)> {
    use opencl3::error_codes::{CL_INVALID_MEM_OBJECT, CL_INVALID_VALUE};
    use opencl3::memory::{CL_MAP_READ, CL_MAP_WRITE};
    if reads.iter().any(|r| r.buffer.get() == write.buffer.get()) {
        return Err(ClError(CL_INVALID_MEM_OBJECT));
    }
    if reads.iter().chain([write]).any(|r| r.hi < r.lo) {
        return Err(ClError(CL_INVALID_VALUE));
    }
    // Mapped pointers so far, each with its buffer, unmapped on every way out.
    let mut mapped: Vec<(cl_mem, *mut c_void)> = Vec::with_capacity(reads.len() + 1);
    let regions = reads
        .iter()
        .map(|r| (r, std::mem::size_of::<T>(), std::mem::align_of::<T>(), CL_MAP_READ))
        .chain([(write, std::mem::size_of::<O>(), std::mem::align_of::<O>(), CL_MAP_READ | CL_MAP_WRITE)]);
    for (r, size, align, flags) in regions {
        // A region of no elements still maps one byte (mapping nothing is an error), never read.
        match map_blocking(queue, r.buffer.get(), flags, r.lo * size, (r.hi - r.lo) * size, align) {
            Ok(pointer) => mapped.push((r.buffer.get(), pointer)),
            Err(e) => {
                let _ = unmap_all(queue, &mapped);
                return Err(e);
            }
        }
    }
    let answer = {
        let mut read_slices: Vec<&[T]> = Vec::with_capacity(reads.len());
        for (region, &(_, pointer)) in reads.iter().zip(&mapped) {
            // SAFETY: the mapping covers `hi - lo` elements of `T` from `pointer` (aligned, checked above), valid
            // until the unmap below, after this slice is gone; the device runs nothing meanwhile (the map was
            // blocking and nothing is enqueued before the unmap). Any bit pattern is a valid `Element`. Several
            // read slices of one buffer may alias: they are all shared.
            read_slices.push(unsafe { std::slice::from_raw_parts(pointer.cast::<T>(), region.hi - region.lo) });
        }
        let out_pointer = mapped.last().map_or(ptr::null_mut(), |&(_, p)| p);
        // SAFETY: as above, for the written region, whose buffer no read slice comes from (checked first), so
        // this is the only reference to that memory.
        let out = unsafe { std::slice::from_raw_parts_mut(out_pointer.cast::<O>(), write.hi - write.lo) };
        f(&read_slices, out)
    };
    // The written region's unmap (the last): the command after which the device sees the values.
    let event = unmap_all(queue, &mapped)?.pop().ok_or(ClError(CL_INVALID_VALUE))?;
    Ok((answer, event))
}
