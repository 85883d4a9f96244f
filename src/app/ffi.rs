//! Every call into OpenCL that the Rust compiler cannot check lives in this module, and nowhere else in cliper;
//! so do the copies into an output file's memory map ([`mapped_file`], whose notes say why they are sound).
//!
//! Each function states why it is sound. The common reasoning:
//! - host memory handed to OpenCL is only used during a *blocking* call, so it outlives the transfer;
//! - OpenCL checks the region of every read/write/copy/fill against the buffer size and returns
//!   `CL_INVALID_VALUE` rather than touching memory outside it;
//! - `Element` types are plain `repr(C)` floats without padding, for which every bit pattern is valid, so viewing
//!   them as bytes (and writing bytes into them) is sound;
//! - kernel arguments are copied by `clSetKernelArg` before it returns;
//! - host memory a host command maps is touched by no command until it is unmapped: the queue is in order (created
//!   here) and enqueued only through this module, under [`Queue`]'s lock, which a host command holds alone.
//!
//! What no host API can check is a kernel's own indexing: cliper trusts its kernel sources (and those of
//! processes users write) to stay within the buffers they are given, as every OpenCL and GPU framework does.
#![allow(unsafe_code)]
#![deny(clippy::undocumented_unsafe_blocks)]

use crate::element::Element;
use cl3::error_codes::DLOPEN_FUNCTION_NOT_AVAILABLE;
use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::error_codes::ClError;
use opencl3::event::Event;
use opencl3::kernel::Kernel;
use opencl3::memory::{Buffer, CL_MEM_READ_WRITE, ClMem};
use opencl3::types::{CL_BLOCKING, CL_NON_BLOCKING, cl_event, cl_int, cl_mem};
use std::cell::Cell;
use std::ffi::c_void;
use std::ptr;
use std::sync::{Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

mod mapped_file;
pub(crate) use mapped_file::MappedFile;

type ClResult<T> = std::result::Result<T, ClError>;

/// The app's one in-order command queue, with the lock that keeps host commands' mapped memory to themselves.
///
/// A host command ([`host_gemm`], [`with_mapped`]) maps device buffers and reads and writes them from the host, as
/// Rust slices, until it unmaps them. Nothing may be enqueued in between: on the in-order queue a command
/// enqueued then runs as soon as the blocking map has finished, alongside the host — another thread's kernel or
/// transfer could write memory the host holds as a slice, or read an output the host has half written (a data
/// race, and a wrong image). So every function of this module that enqueues takes the lock: ordinary commands
/// share it (threads enqueue as freely as before, the queue orders their commands), a host command holds it
/// alone from its first map to its last unmap.
///
/// The lock is not reentrant, and a thread that holds it asks for it again only by a mistake that would otherwise
/// deadlock (a host command whose closure enqueues): that is refused with `CL_INVALID_OPERATION`. The closures
/// run on rayon's pool while the lock is held, as do a staged transfer's copies into and out of its page-locked
/// chunks; no code of cliper's enqueues from rayon's threads, which could otherwise all wait here for a host
/// command that waits for them.
pub(crate) struct Queue {
    queue: CommandQueue,
    enqueue: RwLock<()>,
    /// Whether a host command's "mappings" are copies read (and written back) by ordinary transfers: on a device
    /// with its own memory, NVIDIA's map allocates and registers host memory each time (about 1 GB/s on an H200,
    /// against several times that for a read into ordinary memory); on a CPU a map is the memory itself.
    staged: bool,
    /// A staged queue's page-locked staging memory (grown to the largest host command's regions, up to
    /// `PINNED_MOST`); used only by a host command, which holds the queue alone.
    pinned: Mutex<Option<Pinned>>,
    /// `PINNED_MOST` (smaller in tests, which cover the copies through ordinary memory).
    pinned_most: usize,
    /// A staged queue's two page-locked chunks for large transfers ([`staged_write`], [`staged_read`]), made at
    /// the first; held by one transfer at a time (another meanwhile goes directly).
    transfer: Mutex<TransferChunks>,
    /// Transfers from this many bytes on are staged, in pieces of `transfer_chunk` bytes (both smaller in tests).
    transfer_from: usize,
    transfer_chunk: usize,
}

/// Host↔device transfers of at least this many bytes go through a staged queue's page-locked chunks.
const STAGED_TRANSFER_FROM: usize = 8 << 20;

/// The size of each of the two page-locked chunks of a staged queue's large transfers.
const TRANSFER_CHUNK: usize = 32 << 20;

/// A staged queue's page-locked chunks for large transfers: not made yet, made, or refused by the driver (the
/// transfers then go directly, as before).
enum TransferChunks {
    NotYet,
    Ready([Pinned; 2]),
    Refused,
}

/// The most page-locked staging memory a queue keeps: larger host commands copy through ordinary memory.
const PINNED_MOST: usize = 256 << 20;

/// Page-locked host memory (a `CL_MEM_ALLOC_HOST_PTR` buffer, mapped once for its whole life, NVIDIA's pinned
/// memory recipe): a staged host command's regions are read into it and written back from it by the DMA engine
/// (48 GB/s on an H200, against 2–7 GB/s into ordinary memory).
struct Pinned {
    buffer: Buffer<u8>,
    pointer: *mut c_void,
    bytes: usize,
}

// SAFETY: `pointer` is the host address of `buffer`'s mapping, valid from any thread until the mapping is undone
// (by `Queue::drop` or when the queue grows it, both holding the queue's `pinned` lock); it is dereferenced only
// by a host command, which holds that lock and the queue alone.
unsafe impl Send for Pinned {}

impl Pinned {
    /// `bytes` of page-locked memory on `queue`'s context, mapped for reading and writing (blocking).
    fn create(queue: &CommandQueue, bytes: usize) -> ClResult<Pinned> {
        use opencl3::memory::{CL_MAP_READ, CL_MAP_WRITE, CL_MEM_ALLOC_HOST_PTR};
        let context = queue.context()?;
        // SAFETY: no host pointer is given, so OpenCL owns the memory; `Buffer` takes the new handle and releases it.
        let buffer = Buffer::<u8>::new(unsafe {
            opencl3::memory::create_buffer(context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, ptr::null_mut())?
        });
        let mut pointer: *mut c_void = ptr::null_mut();
        // SAFETY: a blocking map of the whole new buffer; the pointer is kept with it and unmapped by `release`.
        let event = unsafe {
            opencl3::command_queue::enqueue_map_buffer(
                queue.get(),
                buffer.get(),
                CL_BLOCKING,
                CL_MAP_READ | CL_MAP_WRITE,
                0,
                bytes,
                &mut pointer,
                0,
                ptr::null(),
            )?
        };
        drop(Event::new(event));
        Ok(Pinned { buffer, pointer, bytes })
    }

    /// Undoes the mapping (and waits for it) before the buffer is released.
    fn release(self, queue: &CommandQueue) {
        // Nothing to report to: a failed unmap leaves the memory to the driver's release.
        if let Ok(event) = unmap_one(queue, self.buffer.get(), self.pointer) {
            let _ = event.wait();
        }
    }
}

impl Drop for Queue {
    fn drop(&mut self) {
        let pinned = self.pinned.get_mut().unwrap_or_else(PoisonError::into_inner);
        if let Some(pinned) = pinned.take() {
            pinned.release(&self.queue);
        }
        let transfer = self.transfer.get_mut().unwrap_or_else(PoisonError::into_inner);
        if let TransferChunks::Ready(chunks) = std::mem::replace(transfer, TransferChunks::NotYet) {
            for chunk in chunks {
                chunk.release(&self.queue);
            }
        }
    }
}

thread_local! {
    /// Whether this thread holds a queue's lock now (see [`Queue`]).
    static HOLDS_A_QUEUE: Cell<bool> = const { Cell::new(false) };
}

/// The queue, usable while its lock is held (shared for one command, alone for a host command).
struct Held<'a, G> {
    queue: &'a CommandQueue,
    _guard: G,
    /// A host command's hold on a staged queue ([`Queue::staged`]): its page-locked memory and that memory's
    /// limit; `None` otherwise (a shared hold, or a queue that maps).
    staging: Option<(&'a Mutex<Option<Pinned>>, usize)>,
}

impl<G> Drop for Held<'_, G> {
    fn drop(&mut self) {
        HOLDS_A_QUEUE.set(false);
    }
}

impl Queue {
    /// Creates the app's queue on the context's device: in order (`host_gemm` and `with_mapped` rely on it), with
    /// event profiling when `profiling` is on, host commands' regions copied rather than mapped when `staged`
    /// (a device whose memory is not the host's).
    pub(crate) fn create(context: &Context, profiling: bool, staged: bool) -> ClResult<Queue> {
        use opencl3::command_queue::CL_QUEUE_PROFILING_ENABLE;
        let properties = if profiling { CL_QUEUE_PROFILING_ENABLE } else { 0 };
        // clCreateCommandQueue is deprecated from OpenCL 2.0 but present everywhere, 1.2 devices included.
        #[allow(deprecated)]
        let queue = CommandQueue::create_default(context, properties)?;
        Ok(Queue {
            queue,
            enqueue: RwLock::new(()),
            staged,
            pinned: Mutex::new(None),
            pinned_most: PINNED_MOST,
            transfer: Mutex::new(TransferChunks::NotYet),
            transfer_from: STAGED_TRANSFER_FROM,
            transfer_chunk: TRANSFER_CHUNK,
        })
    }

    /// The page-locked chunks for a transfer of `bytes` bytes, made at the first such transfer; `None` when it
    /// goes directly: the queue maps (a CPU), the transfer is small, another thread's transfer holds the chunks,
    /// or the driver refused them.
    fn transfer_chunks(&self, held: &CommandQueue, bytes: usize) -> Option<MutexGuard<'_, TransferChunks>> {
        if !self.staged || bytes == 0 || bytes < self.transfer_from {
            return None;
        }
        let mut chunks = match self.transfer.try_lock() {
            Ok(chunks) => chunks,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return None,
        };
        if matches!(*chunks, TransferChunks::NotYet) {
            let made = Pinned::create(held, self.transfer_chunk).and_then(|first| {
                match Pinned::create(held, self.transfer_chunk) {
                    Ok(second) => Ok([first, second]),
                    Err(e) => {
                        first.release(held);
                        Err(e)
                    }
                }
            });
            *chunks = made.map_or(TransferChunks::Refused, TransferChunks::Ready);
        }
        matches!(*chunks, TransferChunks::Ready(_)).then_some(chunks)
    }

    /// Waits until every command enqueued so far has finished (no lock: it enqueues nothing).
    pub(crate) fn finish(&self) -> ClResult<()> {
        self.queue.finish()
    }

    /// The lock for one ordinary command, taken with others'.
    fn shared(&self) -> ClResult<Held<'_, RwLockReadGuard<'_, ()>>> {
        refuse_nested_lock()?;
        // Poisoned only by a host command that panicked; its mappings were undone on the way out (`Mappings`).
        let guard = self.enqueue.read().unwrap_or_else(PoisonError::into_inner);
        HOLDS_A_QUEUE.set(true);
        Ok(Held { queue: &self.queue, _guard: guard, staging: None })
    }

    /// The lock for a host command, taken alone: every command enqueued before has been submitted, and none is
    /// enqueued until it is dropped.
    fn exclusive(&self) -> ClResult<Held<'_, RwLockWriteGuard<'_, ()>>> {
        refuse_nested_lock()?;
        let guard = self.enqueue.write().unwrap_or_else(PoisonError::into_inner);
        HOLDS_A_QUEUE.set(true);
        let staging = self.staged.then_some((&self.pinned, self.pinned_most));
        Ok(Held { queue: &self.queue, _guard: guard, staging })
    }
}

/// `CL_INVALID_OPERATION` when this thread already holds a queue's lock: it could only wait for itself, or for a
/// thread that waits for it.
fn refuse_nested_lock() -> ClResult<()> {
    if HOLDS_A_QUEUE.get() { Err(ClError(opencl3::error_codes::CL_INVALID_OPERATION)) } else { Ok(()) }
}

/// Allocates an uninitialised read-write device buffer of `bytes` bytes (at least 1).
pub(crate) fn create_buffer(context: &Context, bytes: usize) -> ClResult<Buffer<u8>> {
    // SAFETY: no host pointer is given, so OpenCL owns the memory; `Buffer` releases it on drop.
    unsafe { Buffer::<u8>::create(context, CL_MEM_READ_WRITE, bytes.max(1), ptr::null_mut()) }
}

/// Copies `data` from the host into `buffer` at `offset_bytes`, waiting until the copy is done. A large copy to a
/// device with its own memory goes through the queue's page-locked chunks ([`staged_write`]); its event is then
/// the last piece's.
pub(crate) fn write_buffer<T: Element>(
    queue: &Queue,
    buffer: &Buffer<u8>,
    offset_bytes: usize,
    data: &[T],
) -> ClResult<Event> {
    let held = queue.shared()?;
    // SAFETY: `Element` types are plain data without padding (module docs), so their memory reads as bytes.
    let bytes = unsafe { std::slice::from_raw_parts(data.as_ptr().cast::<u8>(), std::mem::size_of_val(data)) };
    if let Some(chunks) = queue.transfer_chunks(held.queue, bytes.len())
        && let TransferChunks::Ready(chunks) = &*chunks
    {
        return staged_write(held.queue, chunks, queue.transfer_chunk, (buffer.get(), offset_bytes), bytes);
    }
    // SAFETY: blocking write, so `data` outlives the transfer; OpenCL bounds-checks the region.
    let event = unsafe {
        opencl3::command_queue::enqueue_write_buffer(
            held.queue.get(),
            buffer.get(),
            CL_BLOCKING,
            offset_bytes,
            bytes.len(),
            bytes.as_ptr().cast::<c_void>(),
            0,
            ptr::null(),
        )?
    };
    Ok(Event::new(event))
}

/// Copies `out.len()` elements from `buffer` at `offset_bytes` into `out`, waiting until the copy is done. A large
/// copy from a device with its own memory goes through the queue's page-locked chunks ([`staged_read`]).
pub(crate) fn read_buffer<T: Element>(
    queue: &Queue,
    buffer: &Buffer<u8>,
    offset_bytes: usize,
    out: &mut [T],
) -> ClResult<Event> {
    let held = queue.shared()?;
    // SAFETY: `Element` types are plain data for which every bit pattern is valid (module docs), so their memory
    // may be written as bytes; the byte slice replaces `out` for the rest of this function.
    let bytes = unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(out)) };
    if let Some(chunks) = queue.transfer_chunks(held.queue, bytes.len())
        && let TransferChunks::Ready(chunks) = &*chunks
    {
        return staged_read(held.queue, chunks, queue.transfer_chunk, (buffer.get(), offset_bytes), bytes);
    }
    // SAFETY: blocking read into memory we hold mutably (`bytes`, all of `out`).
    let event = unsafe {
        opencl3::command_queue::enqueue_read_buffer(
            held.queue.get(),
            buffer.get(),
            CL_BLOCKING,
            offset_bytes,
            bytes.len(),
            bytes.as_mut_ptr().cast::<c_void>(),
            0,
            ptr::null(),
        )?
    };
    Ok(Event::new(event))
}

/// The transfers in flight from or into a staged queue's two page-locked chunks, one per chunk. Whatever way a
/// staged transfer ends, its chunks are not handed on (nor written again) before their transfers have finished:
/// dropping this waits for them.
#[derive(Default)]
struct InFlight([Option<Event>; 2]);

impl InFlight {
    /// Keeps the event of the transfer just enqueued from or into chunk `slot`.
    fn hold(&mut self, slot: usize, event: Event) {
        if let Some(place) = self.0.get_mut(slot) {
            *place = Some(event);
        }
    }

    /// Waits until chunk `slot`'s transfer, if any, has finished.
    fn settle(&mut self, slot: usize) -> ClResult<()> {
        match self.0.get_mut(slot).and_then(Option::take) {
            Some(event) => event.wait(),
            None => Ok(()),
        }
    }

    /// Waits for both chunks; the event of the transfer enqueued last.
    fn finish(mut self, last: usize) -> ClResult<Event> {
        let other = self.settle(1 - last);
        let event =
            self.0.get_mut(last).and_then(Option::take).ok_or(ClError(opencl3::error_codes::CL_INVALID_VALUE))?;
        let done = event.wait();
        other.and(done).map(|()| event)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        for event in self.0.iter_mut().filter_map(Option::take) {
            // On the way out of a failed transfer: the first error is already being returned.
            let _ = event.wait();
        }
    }
}

/// Copies `from` into `to` (same length) on every core: the host's half of a staged transfer, which one thread
/// does at a fraction of the DMA engine's speed.
fn copy_on_every_core(to: &mut [u8], from: &[u8]) {
    use rayon::prelude::*;
    to.par_chunks_mut(1 << 20).zip(from.par_chunks(1 << 20)).for_each(|(t, f)| t.copy_from_slice(f));
}

/// The offset of piece `k` of `chunk` bytes after `offset`, or `CL_INVALID_VALUE` when it overflows.
fn piece_offset(offset: usize, k: usize, chunk: usize) -> ClResult<usize> {
    k.checked_mul(chunk).and_then(|b| b.checked_add(offset)).ok_or(ClError(opencl3::error_codes::CL_INVALID_VALUE))
}

/// A large host→device copy into `mem` at `offset`, in pieces of `chunk` bytes: each piece is copied into one
/// page-locked chunk on every core while the other chunk's piece is on its way. (Ordinary host memory reaches the
/// DMA engine through the driver's own staging, on one thread.) Waits until every piece has arrived; gives the
/// last piece's event.
fn staged_write(
    queue: &CommandQueue,
    chunks: &[Pinned; 2],
    chunk: usize,
    (mem, offset): (cl_mem, usize),
    bytes: &[u8],
) -> ClResult<Event> {
    let chunk = chunk.max(1);
    let mut in_flight = InFlight::default();
    let mut last = 0;
    for (k, piece) in bytes.chunks(chunk).enumerate() {
        let slot = k % 2;
        let pinned = chunks.get(slot).ok_or(ClError(opencl3::error_codes::CL_INVALID_VALUE))?;
        in_flight.settle(slot)?;
        // SAFETY: the chunk's mapping holds `chunk` ≥ `piece.len()` bytes; nothing else reads or writes it now:
        // its last transfer has just finished (`settle`), and the chunks are this transfer's while it holds their
        // lock.
        let staging = unsafe { std::slice::from_raw_parts_mut(pinned.pointer.cast::<u8>(), piece.len()) };
        copy_on_every_core(staging, piece);
        // SAFETY: a write that does not block, from the page-locked chunk, which stays mapped and is not written
        // again before the transfer has finished (`InFlight` waits for it first, and when dropped); OpenCL checks
        // the region against the buffer.
        let event = unsafe {
            opencl3::command_queue::enqueue_write_buffer(
                queue.get(),
                mem,
                CL_NON_BLOCKING,
                piece_offset(offset, k, chunk)?,
                piece.len(),
                pinned.pointer,
                0,
                ptr::null(),
            )?
        };
        in_flight.hold(slot, Event::new(event));
        last = slot;
    }
    in_flight.finish(last)
}

/// A large device→host copy from `mem` at `offset` into `bytes`, in pieces of `chunk` bytes: the device writes a
/// piece into one page-locked chunk while the piece before is copied out of the other on every core. Waits until
/// every piece is in `bytes`; gives the last piece's event.
fn staged_read(
    queue: &CommandQueue,
    chunks: &[Pinned; 2],
    chunk: usize,
    (mem, offset): (cl_mem, usize),
    bytes: &mut [u8],
) -> ClResult<Event> {
    let chunk = chunk.max(1);
    let mut in_flight = InFlight::default();
    let total = bytes.len();
    let pieces = total.div_ceil(chunk);
    let enqueue = |k: usize, in_flight: &mut InFlight| -> ClResult<()> {
        let slot = k % 2;
        let pinned = chunks.get(slot).ok_or(ClError(opencl3::error_codes::CL_INVALID_VALUE))?;
        let length = total.saturating_sub(k * chunk).min(chunk);
        // SAFETY: a read that does not block, into the page-locked chunk (which holds `chunk` ≥ `length` bytes);
        // the host touches the chunk only after the read has finished (`settle`) and before the chunk's next read
        // is enqueued; `InFlight` waits for it on every way out. OpenCL checks the region against the buffer.
        let event = unsafe {
            opencl3::command_queue::enqueue_read_buffer(
                queue.get(),
                mem,
                CL_NON_BLOCKING,
                piece_offset(offset, k, chunk)?,
                length,
                pinned.pointer,
                0,
                ptr::null(),
            )?
        };
        in_flight.hold(slot, Event::new(event));
        Ok(())
    };
    if pieces > 0 {
        enqueue(0, &mut in_flight)?;
    }
    let mut last = None;
    for (k, piece) in bytes.chunks_mut(chunk).enumerate() {
        let slot = k % 2;
        if k + 1 < pieces {
            // The other chunk's piece (k − 1) was copied out in the step before.
            enqueue(k + 1, &mut in_flight)?;
        }
        let event = in_flight.0.get_mut(slot).and_then(Option::take);
        if let Some(event) = &event {
            event.wait()?;
        }
        let pinned = chunks.get(slot).ok_or(ClError(opencl3::error_codes::CL_INVALID_VALUE))?;
        // SAFETY: the chunk's mapping holds `chunk` ≥ `piece.len()` bytes, which its read (finished just above)
        // wrote; the device does not write it again before the next read of this chunk, enqueued after this copy.
        let staging = unsafe { std::slice::from_raw_parts(pinned.pointer.cast::<u8>(), piece.len()) };
        copy_on_every_core(piece, staging);
        last = event.or(last);
    }
    drop(in_flight);
    last.ok_or(ClError(opencl3::error_codes::CL_INVALID_VALUE))
}

/// Sets `bytes` bytes of `buffer` from `offset_bytes` to zero, on the device, writing a zero pattern of
/// `pattern_bytes` bytes (1, 2, 4, 8 or 16, dividing both the offset and the size).
pub(crate) fn fill_zero(
    queue: &Queue,
    buffer: &Buffer<u8>,
    offset_bytes: usize,
    bytes: usize,
    pattern_bytes: usize,
) -> ClResult<Event> {
    let queue = queue.shared()?;
    let zeros = [0u8; 16];
    debug_assert!(pattern_bytes <= zeros.len());
    // SAFETY: the pattern is copied by the call (and is at most 16 bytes, all of them ours); OpenCL
    // bounds-checks the region and the pattern size.
    let event = unsafe {
        opencl3::command_queue::enqueue_fill_buffer(
            queue.queue.get(),
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

/// Copies `bytes` bytes between two device buffers (which may be the same buffer, regions not overlapping); with
/// `want_event`, the command's event comes back (see [`event_slot`]).
pub(crate) fn copy_buffer(
    queue: &Queue,
    src: &Buffer<u8>,
    dst: &Buffer<u8>,
    (src_offset, dst_offset, bytes): (usize, usize, usize),
    want_event: bool,
) -> ClResult<Option<Event>> {
    let queue = queue.shared()?;
    let mut event: cl_event = ptr::null_mut();
    // Device-to-device; OpenCL checks both regions and rejects overlap (CL_MEM_COPY_OVERLAP). The event slot is
    // written before the call returns, or left alone when null.
    let status = runtime()?
        .clEnqueueCopyBuffer(
            queue.queue.get(),
            src.get(),
            dst.get(),
            src_offset,
            dst_offset,
            bytes,
            0,
            ptr::null(),
            event_slot(want_event, &mut event),
        )
        .ok_or(ClError(DLOPEN_FUNCTION_NOT_AVAILABLE))?;
    command_event(status, event)
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

/// Enqueues `kernel` over `global` work items (1 to 3 dimensions) with an optional work-group size; with
/// `want_event`, the command's event comes back, else the driver makes none (see [`event_slot`]).
pub(crate) fn enqueue_kernel(
    queue: &Queue,
    kernel: &Kernel,
    global: &[usize],
    local: Option<&[usize]>,
    want_event: bool,
) -> ClResult<Option<Event>> {
    let queue = queue.shared()?;
    debug_assert!((1..=3).contains(&global.len()));
    debug_assert!(local.is_none_or(|l| l.len() == global.len()));
    let mut event: cl_event = ptr::null_mut();
    // From the host's side, the size arrays are read during the call and the event slot is written before it
    // returns (or left alone: a null slot asks for no event); unset arguments are reported as
    // CL_INVALID_KERNEL_ARGS. See the module docs for what the kernel itself must respect.
    let status = runtime()?
        .clEnqueueNDRangeKernel(
            queue.queue.get(),
            kernel.get(),
            global.len() as u32,
            ptr::null(),
            global.as_ptr(),
            local.map_or(ptr::null(), <[usize]>::as_ptr),
            0,
            ptr::null(),
            event_slot(want_event, &mut event),
        )
        .ok_or(ClError(DLOPEN_FUNCTION_NOT_AVAILABLE))?;
    command_event(status, event)
}

/// The OpenCL library cliper's `opencl3` loaded, for the two enqueues that may go without an event (`opencl3`
/// always asks for one).
fn runtime() -> ClResult<&'static cl3::OpenClRuntime> {
    cl3::load_library().as_ref().map_err(|_| ClError(cl3::error_codes::DLOPEN_RUNTIME_LOAD_FAILED))
}

/// Where an enqueue writes its command's event: `slot` when the caller wants one, else null, so the driver makes
/// none. An event is what a profile reads its times from; without one NVIDIA's driver (580, H200) enqueues a
/// kernel in 4.9 µs rather than 6.9, and on a profiling queue in 5.1 rather than 11
/// (`scripts/probes/enqueue_cost.c`).
fn event_slot(want_event: bool, slot: &mut cl_event) -> *mut cl_event {
    if want_event { slot } else { ptr::null_mut() }
}

/// An enqueue's `status`, and the event it wrote (null when none was asked for) taken into ownership.
fn command_event(status: cl_int, event: cl_event) -> ClResult<Option<Event>> {
    if status != opencl3::error_codes::CL_SUCCESS {
        return Err(ClError(status));
    }
    Ok((!event.is_null()).then(|| Event::new(event)))
}

/// Enqueues a marker on `queue`: its event completes once every command enqueued before it has.
pub(crate) fn marker(queue: &Queue) -> ClResult<Event> {
    let queue = queue.shared()?;
    // SAFETY: a marker with no wait list reads no host memory.
    unsafe { queue.queue.enqueue_marker_with_wait_list(&[]) }
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

/// The buffers a host command has mapped, while it holds its queue alone. Unmapped by [`Mappings::unmap`], or
/// when dropped: a command that ends early, by an error or a panic, leaves no mapping behind. On a staged queue
/// (a device with its own memory) a "mapping" is a host copy read by a blocking transfer — into the queue's
/// page-locked memory when the command's regions fit there, else into ordinary memory — and written back by one at
/// the unmap when it was mapped for writing; one dropped early is not written back.
struct Mappings<'q> {
    queue: &'q CommandQueue,
    mapped: Vec<(cl_mem, *mut c_void)>,
    /// The host copies of a staged queue, in the order mapped (empty when mapping).
    copies: Vec<StagedCopy>,
    /// On a staged queue (and only there), its page-locked memory, held for the command; and the bytes of it
    /// handed out so far.
    pinned: Option<MutexGuard<'q, Option<Pinned>>>,
    used: usize,
}

/// A staged mapping: where it came from and where its host copy is.
struct StagedCopy {
    mem: cl_mem,
    offset: usize,
    bytes: usize,
    write: bool,
    copy: HostCopy,
}

/// A staged mapping's host copy: in the page-locked memory (its address), or in an owned block (16-byte units, so
/// that any element type is aligned).
enum HostCopy {
    Pinned(*mut c_void),
    Owned(Vec<u128>),
}

/// Bytes of page-locked memory a staged region takes: its size rounded up to 64 (each region starts aligned).
fn pinned_span(bytes: usize) -> usize {
    bytes.max(1).div_ceil(64).saturating_mul(64)
}

impl<'q> Mappings<'q> {
    /// No mappings yet, on the queue `held` holds alone (only then may buffers be mapped), for a command whose
    /// regions take `bytes` bytes together (each counted by `pinned_span`): a staged queue grows its page-locked
    /// memory to hold them, up to `PINNED_MOST` (when it cannot, the copies go to ordinary memory).
    fn new(held: &'q Held<'_, RwLockWriteGuard<'_, ()>>, bytes: usize) -> Mappings<'q> {
        let pinned = match held.staging {
            Some((lock, most)) => {
                let mut pinned = lock.lock().unwrap_or_else(PoisonError::into_inner);
                let short = pinned.as_ref().is_none_or(|p| p.bytes < bytes);
                if short && bytes <= most {
                    if let Some(old) = pinned.take() {
                        old.release(held.queue);
                    }
                    let size = bytes.max(1 << 20).next_power_of_two().min(most).max(bytes);
                    *pinned = Pinned::create(held.queue, size).ok();
                }
                Some(pinned)
            }
            None => None,
        };
        Mappings { queue: held.queue, mapped: Vec::new(), copies: Vec::new(), pinned, used: 0 }
    }

    /// Maps `bytes` bytes (at least 1) of `mem` from `offset` into host memory with `flags`, blocking when
    /// `last`: on the in-order queue every command enqueued before — the earlier maps of this command too — has
    /// then finished, so every mapping holds its values. One blocking map per command, not one per region: each
    /// is a round trip to the device's threads (PoCL, 2 cores: a command mapping two regions took 115 µs with
    /// both blocking). `CL_MISALIGNED_SUB_BUFFER_OFFSET` when the pointer is not aligned to `align` (the mapping
    /// is undone with the others).
    fn map(
        &mut self,
        mem: cl_mem,
        flags: opencl3::types::cl_map_flags,
        [offset, bytes, align]: [usize; 3],
        last: bool,
    ) -> ClResult<*mut c_void> {
        if self.pinned.is_some() {
            return self.copy_in(mem, flags, offset, bytes);
        }
        let mut pointer: cl_mem = ptr::null_mut();
        // SAFETY: a map of a region OpenCL checks against the buffer's size (CL_INVALID_VALUE when it is outside);
        // the pointer is kept here and unmapped once, by `unmap` or on drop. A map that does not block is only read
        // through after the command's last map, which blocks, has returned.
        let event = unsafe {
            opencl3::command_queue::enqueue_map_buffer(
                self.queue.get(),
                mem,
                if last { CL_BLOCKING } else { CL_NON_BLOCKING },
                flags,
                offset,
                bytes.max(1),
                &mut pointer,
                0,
                ptr::null(),
            )?
        };
        drop(Event::new(event));
        self.mapped.push((mem, pointer));
        if (pointer as usize).is_multiple_of(align) {
            Ok(pointer)
        } else {
            Err(ClError(opencl3::error_codes::CL_MISALIGNED_SUB_BUFFER_OFFSET))
        }
    }

    /// A staged mapping: the region read into a host copy (64-byte aligned in the page-locked memory, 16-byte in
    /// an owned block: enough for every element type); not read when mapped only to be overwritten.
    fn copy_in(
        &mut self,
        mem: cl_mem,
        flags: opencl3::types::cl_map_flags,
        offset: usize,
        bytes: usize,
    ) -> ClResult<*mut c_void> {
        let span = pinned_span(bytes);
        let room = self.pinned.as_ref().and_then(|p| p.as_ref()).filter(|p| self.used.saturating_add(span) <= p.bytes);
        let mut copy = match room {
            // The page-locked memory's address `used` bytes in: inside it, as `room` checked.
            Some(p) => HostCopy::Pinned(p.pointer.cast::<u8>().wrapping_add(self.used).cast::<c_void>()),
            None => HostCopy::Owned(vec![0u128; bytes.div_ceil(16).max(1)]),
        };
        if matches!(copy, HostCopy::Pinned(_)) {
            self.used += span;
        }
        let pointer = match &mut copy {
            HostCopy::Pinned(pointer) => *pointer,
            HostCopy::Owned(block) => block.as_mut_ptr().cast::<c_void>(),
        };
        if bytes > 0 && flags & opencl3::memory::CL_MAP_READ != 0 {
            // SAFETY: a blocking read of `bytes` bytes (OpenCL checks the region against the buffer) into host
            // memory that holds at least that many (a span of the page-locked memory no other region of this
            // command shares, or the owned block) and outlives the call.
            let event = unsafe {
                opencl3::command_queue::enqueue_read_buffer(
                    self.queue.get(),
                    mem,
                    CL_BLOCKING,
                    offset,
                    bytes,
                    pointer,
                    0,
                    ptr::null(),
                )?
            };
            drop(Event::new(event));
        }
        let write = flags & (opencl3::memory::CL_MAP_WRITE | opencl3::memory::CL_MAP_WRITE_INVALIDATE_REGION) != 0;
        // An owned block's heap memory, which `pointer` points into, stays where it is while the copy is kept here.
        self.copies.push(StagedCopy { mem, offset, bytes, write, copy });
        Ok(pointer)
    }

    /// Unmaps every buffer, in the order mapped; the unmaps' events, in that order. Every unmap is tried; the
    /// first failure is returned. A staged copy mapped for writing is written back (blocking); one only read
    /// answers a marker.
    fn unmap(mut self) -> ClResult<Vec<Event>> {
        let mut events = Vec::with_capacity(self.mapped.len() + self.copies.len());
        let mut failure = None;
        for (mem, pointer) in std::mem::take(&mut self.mapped) {
            match unmap_one(self.queue, mem, pointer) {
                Ok(event) => events.push(event),
                Err(e) => failure = failure.or(Some(e)),
            }
        }
        for copy in std::mem::take(&mut self.copies) {
            match copy_out(self.queue, &copy) {
                Ok(event) => events.push(event),
                Err(e) => failure = failure.or(Some(e)),
            }
        }
        failure.map_or(Ok(events), Err)
    }
}

/// Writes a staged copy back when it was mapped for writing (blocking, so its memory may be reused at once); a
/// marker event for one only read.
fn copy_out(queue: &CommandQueue, staged: &StagedCopy) -> ClResult<Event> {
    if staged.write && staged.bytes > 0 {
        let source = match &staged.copy {
            HostCopy::Pinned(pointer) => pointer.cast_const(),
            HostCopy::Owned(block) => block.as_ptr().cast::<c_void>(),
        };
        // SAFETY: a blocking write of `bytes` bytes from the copy, which holds at least that many (read from the
        // same region, which OpenCL checked then and checks again) and outlives the call (the page-locked memory
        // stays mapped while the command holds it).
        let event = unsafe {
            opencl3::command_queue::enqueue_write_buffer(
                queue.get(),
                staged.mem,
                CL_BLOCKING,
                staged.offset,
                staged.bytes,
                source,
                0,
                ptr::null(),
            )?
        };
        Ok(Event::new(event))
    } else {
        // SAFETY: a marker with no wait list reads no host memory.
        unsafe { queue.enqueue_marker_with_wait_list(&[]) }
    }
}

impl Drop for Mappings<'_> {
    fn drop(&mut self) {
        for (mem, pointer) in std::mem::take(&mut self.mapped) {
            // Nothing to report to on this way out; a failed unmap leaves the buffer as it was.
            let _ = unmap_one(self.queue, mem, pointer);
        }
    }
}

/// Unmaps `pointer`, which mapping `mem` returned (through `Mappings`, which calls this once per mapping).
fn unmap_one(queue: &CommandQueue, mem: cl_mem, pointer: *mut c_void) -> ClResult<Event> {
    // SAFETY: `pointer` is what mapping `mem` returned, unmapped once (`Mappings` forgets it here); the slices
    // and pointers made from it are gone: they borrow from inside the host command, which unmaps last.
    let event = unsafe { opencl3::command_queue::enqueue_unmap_mem_object(queue.get(), mem, pointer, 0, ptr::null())? };
    Ok(Event::new(event))
}

/// `[lo, hi)` elements of `size` bytes as a byte offset and length, or `CL_INVALID_VALUE` when `hi < lo` or the
/// bytes overflow (a wrapped length would map less than the slices made over it).
fn byte_range(lo: usize, hi: usize, size: usize) -> ClResult<(usize, usize)> {
    use opencl3::error_codes::CL_INVALID_VALUE;
    let count = hi.checked_sub(lo).ok_or(ClError(CL_INVALID_VALUE))?;
    let offset = lo.checked_mul(size).ok_or(ClError(CL_INVALID_VALUE))?;
    let bytes = count.checked_mul(size).ok_or(ClError(CL_INVALID_VALUE))?;
    Ok((offset, bytes))
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

/// The elements `[lo, hi)` an operand of `rows × cols` reaches over the whole batch (`which` picks its offset
/// in each `[A, B, C]` of `offsets`); `None` on overflow or an empty batch. Every pointer `host_gemm` forms for
/// the operand lies inside.
fn operand_reach(
    op: &HostOperand<'_>,
    rows: usize,
    cols: usize,
    offsets: &[[usize; 3]],
    which: usize,
) -> Option<(usize, usize)> {
    let last = if rows == 0 || cols == 0 {
        0
    } else {
        (rows - 1).checked_mul(op.row_stride)?.checked_add((cols - 1).checked_mul(op.col_stride)?)?.checked_add(1)?
    };
    let lo = offsets.iter().filter_map(|o| o.get(which)).min().copied()?;
    let hi = offsets.iter().filter_map(|o| o.get(which)).max()?.checked_add(last)?;
    Some((lo, hi.max(lo.checked_add(1)?)))
}

/// Whether a `rows × cols` matrix with these strides puts every element at its own address — so the threads
/// `gemm` splits C among never write one element together. Sufficient, and what every view of a dense array
/// satisfies: the larger stride steps over the whole extent of the smaller.
fn elements_distinct(rows: usize, cols: usize, row_stride: usize, col_stride: usize) -> bool {
    let mut axes: Vec<(usize, usize)> =
        [(rows, row_stride), (cols, col_stride)].into_iter().filter(|&(extent, _)| extent > 1).collect();
    axes.sort_by_key(|&(_, stride)| stride);
    match axes[..] {
        [] => true,
        [(_, stride)] => stride > 0,
        [(inner_extent, inner), (_, outer)] => inner > 0 && inner_extent.checked_mul(inner).is_some_and(|s| outer >= s),
        _ => false,
    }
}

/// A stride as `gemm` takes it: 0 along an axis of extent 1 (never stepped), and one that fits `isize`.
fn gemm_stride(extent: usize, stride: usize) -> ClResult<isize> {
    let used = if extent > 1 { stride } else { 0 };
    isize::try_from(used).map_err(|_| ClError(opencl3::error_codes::CL_INVALID_VALUE))
}

/// The buffers `job` maps, each over the elements its operands reach, after the checks the products' soundness
/// rests on: every operand's reach is computable, C's elements are distinct, and C shares no element range with
/// A or B in one buffer (`CL_MEM_COPY_OVERLAP`: the product would read what it writes).
fn gemm_spans<T>(job: &HostGemm<'_, T>) -> ClResult<Vec<Span>> {
    use opencl3::error_codes::{CL_INVALID_VALUE, CL_MEM_COPY_OVERLAP};
    let [m, n, k] = job.dims;
    if m == 0 || n == 0 || job.offsets.is_empty() || !elements_distinct(m, n, job.c.row_stride, job.c.col_stride) {
        return Err(ClError(CL_INVALID_VALUE));
    }
    let operands = [(&job.a, m, k, false), (&job.b, k, n, false), (&job.c, m, n, true)];
    let mut reaches = [(0, 0); 3];
    for ((which, &(op, rows, cols, _)), reach) in operands.iter().enumerate().zip(&mut reaches) {
        *reach = operand_reach(op, rows, cols, job.offsets, which).ok_or(ClError(CL_INVALID_VALUE))?;
    }
    let [a_reach, b_reach, (c_lo, c_hi)] = reaches;
    for (op, (lo, hi)) in [(&job.a, a_reach), (&job.b, b_reach)] {
        if op.buffer.get() == job.c.buffer.get() && lo < c_hi && c_lo < hi {
            return Err(ClError(CL_MEM_COPY_OVERLAP));
        }
    }
    let mut spans: Vec<Span> = Vec::with_capacity(3);
    for (&(op, _, _, write), &(lo, hi)) in operands.iter().zip(&reaches) {
        let mem = op.buffer.get();
        match spans.iter_mut().find(|s| s.mem == mem) {
            Some(span) => {
                span.lo = span.lo.min(lo);
                span.hi = span.hi.max(hi);
                span.write |= write;
            }
            None => spans.push(Span { mem, lo, hi, write }),
        }
    }
    Ok(spans)
}

/// Runs `job` on the host: maps each distinct buffer over the elements its operands reach (blocking, so every
/// command enqueued before has finished, as an in-order queue promises), multiplies there, and unmaps, holding
/// the queue alone throughout (no other thread's command runs on these buffers meanwhile). Returns the event of
/// C's unmap, the command after which the device sees C's new values. `T` must be `f32`, `f64`, `Complex32` or
/// `Complex64` (the element types cliper has); any other answers `CL_INVALID_VALUE`, as do an empty product and
/// a C whose elements are not distinct; `CL_MEM_COPY_OVERLAP` when C overlaps A or B.
pub(crate) fn host_gemm<T: Element + 'static>(queue: &Queue, job: &HostGemm<'_, T>) -> ClResult<Event> {
    use num_complex::{Complex32, Complex64};
    use opencl3::error_codes::CL_INVALID_VALUE;
    use opencl3::memory::{CL_MAP_READ, CL_MAP_WRITE};
    use std::any::TypeId;
    let supported = [TypeId::of::<f32>(), TypeId::of::<f64>(), TypeId::of::<Complex32>(), TypeId::of::<Complex64>()];
    if !supported.contains(&TypeId::of::<T>()) {
        return Err(ClError(CL_INVALID_VALUE));
    }
    let [m, n, k] = job.dims;
    let spans = gemm_spans(job)?;
    let [a_rs, a_cs] = [gemm_stride(m, job.a.row_stride)?, gemm_stride(k, job.a.col_stride)?];
    let [b_rs, b_cs] = [gemm_stride(k, job.b.row_stride)?, gemm_stride(n, job.b.col_stride)?];
    let [c_rs, c_cs] = [gemm_stride(m, job.c.row_stride)?, gemm_stride(n, job.c.col_stride)?];
    let size = std::mem::size_of::<T>();
    let span_bytes: Vec<(usize, usize)> =
        spans.iter().map(|span| byte_range(span.lo, span.hi, size)).collect::<ClResult<_>>()?;
    let held = queue.exclusive()?;
    let mut mappings = Mappings::new(&held, span_bytes.iter().map(|&(_, bytes)| pinned_span(bytes)).sum());
    // Per span, the host address of its element `lo`.
    let mut bases: Vec<*mut T> = Vec::with_capacity(spans.len());
    for (span, &(offset, bytes)) in spans.iter().zip(&span_bytes) {
        let flags = if span.write { CL_MAP_READ | CL_MAP_WRITE } else { CL_MAP_READ };
        let last = bases.len() + 1 == spans.len();
        bases.push(mappings.map(span.mem, flags, [offset, bytes, std::mem::align_of::<T>()], last)?.cast::<T>());
    }
    // The host address of element `index` of the buffer `mem`, inside its mapped span (as `gemm_spans` ensured).
    let address = |mem: cl_mem, index: usize| -> ClResult<*mut T> {
        spans
            .iter()
            .zip(&bases)
            .find(|(span, _)| span.mem == mem && (span.lo..span.hi).contains(&index))
            .map(|(span, &base)| base.wrapping_add(index - span.lo))
            .ok_or(ClError(CL_INVALID_VALUE))
    };
    for &[oa, ob, oc] in job.offsets {
        let (a, b, c) =
            (address(job.a.buffer.get(), oa)?, address(job.b.buffer.get(), ob)?, address(job.c.buffer.get(), oc)?);
        // SAFETY: every element the product touches lies in a mapped span (`operand_reach` bounds the batch's
        // offsets and strides; the maps cover those spans), aligned for `T`, which is one of the four types `gemm`
        // accepts (checked above). No other command runs meanwhile (this thread holds the queue alone, and the
        // last map blocked until the commands before it, the other maps included, had finished). C does not overlap A or B (`gemm_spans`), so the writes
        // never alias the reads even where they share a buffer, and C's elements are distinct, so `gemm`'s
        // threads never write one together. The crate's `alpha` scales the old C and its `beta` the product:
        // cliper's beta and alpha.
        unsafe {
            gemm::gemm(
                m,
                n,
                k,
                c,
                c_cs,
                c_rs,
                job.read_c,
                a.cast_const(),
                a_cs,
                a_rs,
                b.cast_const(),
                b_cs,
                b_rs,
                job.beta,
                job.alpha,
                false,
                job.conj_a,
                job.conj_b,
                gemm::Parallelism::Rayon(0),
            );
        }
    }
    let events = mappings.unmap()?;
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
/// hands them to `f` as slices (element `lo` of a region is index 0 of its slice), holding the queue alone until
/// they are unmapped, so that no other thread's command runs on them meanwhile. Then unmaps them all and returns
/// what `f` returned with the event of the written region's unmap, after which the device sees the values.
/// `CL_INVALID_MEM_OBJECT` when the written buffer is also read (its slices would alias),
/// `CL_MISALIGNED_SUB_BUFFER_OFFSET` when a mapping is not aligned for its type and `CL_INVALID_VALUE` for a region
/// with `hi < lo` or too many bytes to count. A command `f` tries to enqueue is refused with
/// `CL_INVALID_OPERATION` (it would wait for the lock this call holds).
pub(crate) fn with_mapped<T: Element, O: Element, R>(
    queue: &Queue,
    reads: &[Region<'_>],
    write: &Region<'_>,
    f: impl FnOnce(&[&[T]], &mut [O]) -> R,
) -> ClResult<(R, Event)> {
    map_and_run(queue, reads, write, false, f)
}

/// [`with_mapped`] for an `f` that writes every element of the written region: its old values are not fetched
/// (OpenCL's `CL_MAP_WRITE_INVALIDATE_REGION`; no read on a staged queue), so `f` finds unspecified values there.
pub(crate) fn with_mapped_overwriting<T: Element, O: Element, R>(
    queue: &Queue,
    reads: &[Region<'_>],
    write: &Region<'_>,
    f: impl FnOnce(&[&[T]], &mut [O]) -> R,
) -> ClResult<(R, Event)> {
    map_and_run(queue, reads, write, true, f)
}

/// [`with_mapped`], the written region's old values fetched unless `overwritten`.
fn map_and_run<T: Element, O: Element, R>(
    queue: &Queue,
    reads: &[Region<'_>],
    write: &Region<'_>,
    overwritten: bool,
    f: impl FnOnce(&[&[T]], &mut [O]) -> R,
) -> ClResult<(R, Event)> {
    use opencl3::error_codes::{CL_INVALID_MEM_OBJECT, CL_INVALID_VALUE};
    use opencl3::memory::{CL_MAP_READ, CL_MAP_WRITE, CL_MAP_WRITE_INVALIDATE_REGION};
    if reads.iter().any(|r| r.buffer.get() == write.buffer.get()) {
        return Err(ClError(CL_INVALID_MEM_OBJECT));
    }
    let read_bytes: Vec<(usize, usize)> =
        reads.iter().map(|r| byte_range(r.lo, r.hi, std::mem::size_of::<T>())).collect::<ClResult<_>>()?;
    let (write_offset, write_bytes) = byte_range(write.lo, write.hi, std::mem::size_of::<O>())?;
    let total = read_bytes.iter().map(|&(_, bytes)| pinned_span(bytes)).sum::<usize>() + pinned_span(write_bytes);
    let held = queue.exclusive()?;
    let mut mappings = Mappings::new(&held, total);
    // A region of no elements still maps one byte (mapping nothing is an error), never read.
    let mut read_pointers = Vec::with_capacity(reads.len());
    for (region, &(offset, bytes)) in reads.iter().zip(&read_bytes) {
        let pointer =
            mappings.map(region.buffer.get(), CL_MAP_READ, [offset, bytes, std::mem::align_of::<T>()], false)?;
        read_pointers.push(pointer);
    }
    let flags = if overwritten { CL_MAP_WRITE_INVALIDATE_REGION } else { CL_MAP_READ | CL_MAP_WRITE };
    let out_pointer =
        mappings.map(write.buffer.get(), flags, [write_offset, write_bytes, std::mem::align_of::<O>()], true)?;
    let answer = {
        let mut read_slices: Vec<&[T]> = Vec::with_capacity(reads.len());
        for (region, &pointer) in reads.iter().zip(&read_pointers) {
            // SAFETY: the mapping covers `hi - lo` elements of `T` from `pointer` (aligned, checked by `map`; the
            // byte count did not overflow, checked by `byte_range`), valid until the unmap below, after this slice
            // is gone. No command runs on the buffer meanwhile: the last map blocked until those enqueued before
            // it (this command's other maps too) had finished,
            // and this thread holds the queue alone (`Queue::exclusive`) until the unmap, so none is enqueued
            // after. Any bit pattern is a valid `Element`. Several read slices of one buffer may alias: they are
            // all shared.
            read_slices.push(unsafe { std::slice::from_raw_parts(pointer.cast::<T>(), region.hi - region.lo) });
        }
        // SAFETY: as above, for the written region, whose buffer no read slice comes from (checked first), so
        // this is the only reference to that memory.
        let out = unsafe { std::slice::from_raw_parts_mut(out_pointer.cast::<O>(), write.hi - write.lo) };
        f(&read_slices, out)
    };
    // The written region's unmap (the last): the command after which the device sees the values.
    let event = mappings.unmap()?.pop().ok_or(ClError(CL_INVALID_VALUE))?;
    Ok((answer, event))
}

#[cfg(test)]
mod tests {
    use super::*;
    use opencl3::error_codes::{CL_INVALID_OPERATION, CL_INVALID_VALUE, CL_MEM_COPY_OVERLAP};

    /// The first device's context and an in-order queue on it (found the crate's way: PoCL's discovery is not
    /// safe to run from parallel tests).
    fn setup() -> (Queue, Context) {
        let (_, device) = super::super::device::discover().unwrap().remove(0);
        let context = Context::from_device(&device).unwrap();
        (Queue::create(&context, false, false).unwrap(), context)
    }

    fn operand(buffer: &Buffer<u8>, row_stride: usize, col_stride: usize) -> HostOperand<'_> {
        HostOperand { buffer, row_stride, col_stride }
    }

    /// A 2×2 f32 product of A, B and C at `offsets` with these C strides.
    fn gemm_job<'a>(ab: [&'a Buffer<u8>; 2], c: HostOperand<'a>, offsets: &'a [[usize; 3]]) -> HostGemm<'a, f32> {
        HostGemm {
            dims: [2, 2, 2],
            a: operand(ab[0], 2, 1),
            b: operand(ab[1], 2, 1),
            c,
            offsets,
            alpha: 1.0,
            beta: 0.0,
            read_c: false,
            conj_a: false,
            conj_b: false,
        }
    }

    #[test]
    fn host_gemm_refuses_a_c_that_overlaps_a_and_runs_one_beside_it() {
        let (queue, context) = setup();
        let shared = create_buffer(&context, 4 * 8).unwrap();
        let identity = create_buffer(&context, 4 * 4).unwrap();
        write_buffer(&queue, &shared, 0, &[1.0f32, 2.0, 3.0, 4.0, 0.0, 0.0, 0.0, 0.0]).unwrap();
        write_buffer(&queue, &identity, 0, &[1.0f32, 0.0, 0.0, 1.0]).unwrap();
        // A is elements 0..4 of `shared`; C from element 2 would write A's last row while reading it.
        let overlapping = gemm_job([&shared, &identity], operand(&shared, 2, 1), &[[0, 0, 2]]);
        assert_eq!(host_gemm(&queue, &overlapping).map(drop).map_err(|e| e.0), Err(CL_MEM_COPY_OVERLAP));
        // From element 4 it is beside A in the same buffer: allowed, and A·I = A.
        let beside = gemm_job([&shared, &identity], operand(&shared, 2, 1), &[[0, 0, 4]]);
        host_gemm(&queue, &beside).unwrap();
        let mut back = [0.0f32; 8];
        read_buffer(&queue, &shared, 0, &mut back).unwrap();
        assert_eq!(back, [1.0, 2.0, 3.0, 4.0, 1.0, 2.0, 3.0, 4.0]);
    }

    #[test]
    fn host_gemm_refuses_a_c_whose_rows_share_elements() {
        let (queue, context) = setup();
        let [a, b, c] = [(); 3].map(|()| create_buffer(&context, 4 * 4).unwrap());
        // Row stride 0: both rows of C are one row in memory, which gemm's threads would write at once.
        let job = gemm_job([&a, &b], operand(&c, 0, 1), &[[0, 0, 0]]);
        assert_eq!(host_gemm(&queue, &job).map(drop).map_err(|e| e.0), Err(CL_INVALID_VALUE));
    }

    #[test]
    fn with_mapped_refuses_a_region_whose_bytes_overflow() {
        let (queue, context) = setup();
        let [read, written] = [(); 2].map(|()| create_buffer(&context, 16).unwrap());
        // usize::MAX / 2 elements of 4 bytes: the byte count wraps, and would map 16 bytes under a huge slice.
        let huge = Region { buffer: &read, lo: 0, hi: usize::MAX / 2 };
        let out = Region { buffer: &written, lo: 0, hi: 4 };
        let answer = with_mapped::<f32, f32, usize>(&queue, &[huge], &out, |ins, _| ins[0].len());
        assert_eq!(answer.map(|(len, _)| len).map_err(|e| e.0), Err(CL_INVALID_VALUE));
    }

    /// Mapped (a CPU's memory) and staged (copies, as on a device with memory of its own): the closure sees the
    /// regions' values from `lo` on, and what it writes reaches the device at the unmap.
    #[test]
    fn mapped_and_staged_regions_read_and_write_the_same() {
        let (_, context) = setup();
        // Mapped; staged through page-locked memory; staged through ordinary memory (no page-locked memory allowed).
        for (staged, pinned_most) in [(false, PINNED_MOST), (true, PINNED_MOST), (true, 0)] {
            let mut queue = Queue::create(&context, false, staged).unwrap();
            queue.pinned_most = pinned_most;
            let [read, written] = [(); 2].map(|()| create_buffer(&context, 5 * 8).unwrap());
            write_buffer(&queue, &read, 0, &[1.0f64, 2.0, 3.0, 4.0, 5.0]).unwrap();
            write_buffer(&queue, &written, 0, &[9.0f64; 5]).unwrap();
            let ins = [Region { buffer: &read, lo: 1, hi: 4 }];
            let out = Region { buffer: &written, lo: 2, hi: 5 };
            let (seen, _) = with_mapped::<f64, f64, _>(&queue, &ins, &out, |ins, out| {
                let seen = (ins[0].to_vec(), out.to_vec());
                for (o, i) in out.iter_mut().zip(ins[0]) {
                    *o = 10.0 * i;
                }
                seen
            })
            .unwrap();
            assert_eq!(seen, (vec![2.0, 3.0, 4.0], vec![9.0; 3]), "staged {staged}");
            let mut back = [0.0f64; 5];
            read_buffer(&queue, &written, 0, &mut back).unwrap();
            assert_eq!(back, [9.0, 9.0, 20.0, 30.0, 40.0], "staged {staged}");
            let (_, _) = with_mapped_overwriting::<f64, f64, _>(&queue, &ins, &out, |_, out| out.fill(7.0)).unwrap();
            read_buffer(&queue, &written, 0, &mut back).unwrap();
            assert_eq!(back, [9.0, 9.0, 7.0, 7.0, 7.0], "staged {staged}, overwriting");
            // A command larger than the page-locked memory so far (1 MiB at first) grows it.
            let n = 300_000;
            let [big_in, big_out] = [(); 2].map(|()| create_buffer(&context, n * 8).unwrap());
            let values: Vec<f64> = (0..n).map(|i| i as f64).collect();
            write_buffer(&queue, &big_in, 0, &values).unwrap();
            let ins = [Region { buffer: &big_in, lo: 0, hi: n }];
            let out = Region { buffer: &big_out, lo: 0, hi: n };
            with_mapped_overwriting::<f64, f64, _>(&queue, &ins, &out, |ins, out| out.copy_from_slice(ins[0])).unwrap();
            let mut big_back = vec![0.0f64; n];
            read_buffer(&queue, &big_out, 0, &mut big_back).unwrap();
            assert!(big_back == values, "staged {staged} pinned_most {pinned_most}: the large copy differs");
            let held = queue.pinned.lock().unwrap();
            let pinned_bytes = held.as_ref().map_or(0, |p| p.bytes);
            assert_eq!(pinned_bytes >= 2 * n * 8, staged && pinned_most > 0, "page-locked bytes {pinned_bytes}");
        }
    }

    #[test]
    fn staged_transfers_carry_every_byte_in_pieces_through_the_page_locked_chunks() {
        let (direct, context) = setup();
        let mut queue = Queue::create(&context, false, true).unwrap();
        // Pieces of 1000 bytes (not a multiple of 8: elements straddle pieces), from 4 KiB on.
        (queue.transfer_from, queue.transfer_chunk) = (4096, 1000);
        let n = 12_345;
        let values: Vec<f64> = (0..n).map(|i| (i as f64).sqrt() - 7.5).collect();
        let buffer = create_buffer(&context, (n + 3) * 8).unwrap();
        write_buffer(&direct, &buffer, 0, &[-1.0f64; 3]).unwrap();
        // Staged, at an offset; read back directly, whole and with the three values before it untouched.
        write_buffer(&queue, &buffer, 3 * 8, &values).unwrap();
        assert!(matches!(*queue.transfer.lock().unwrap(), TransferChunks::Ready(_)), "the chunks were made");
        let mut back = vec![0.0f64; n + 3];
        read_buffer(&direct, &buffer, 0, &mut back).unwrap();
        assert_eq!(back.get(..3), Some(&[-1.0; 3][..]));
        assert!(back.get(3..) == Some(&values[..]), "a staged write differs");
        // Staged reads: whole pieces, an odd tail, an offset, and one just under the threshold (direct).
        for (at, count) in [(3, n), (0, n + 3), (1000, 2000), (5, 511)] {
            let mut got = vec![0.0f64; count];
            read_buffer(&queue, &buffer, at * 8, &mut got).unwrap();
            assert!(got.get(..) == back.get(at..at + count), "a read of {count} from {at} differs");
        }
        // A region outside the buffer is OpenCL's error, not a partial copy left in flight.
        let mut too_many = vec![0.0f64; n + 4];
        assert!(read_buffer(&queue, &buffer, 0, &mut too_many).is_err());
        assert!(
            write_buffer(&queue, &buffer, 8, &values[..n - 1].iter().chain(&[0.0; 4]).copied().collect::<Vec<_>>())
                .is_err()
        );
        // Two threads at once: one holds the chunks, the other goes directly; both arrive.
        let buffers = [(); 2].map(|()| create_buffer(&context, n * 8).unwrap());
        std::thread::scope(|scope| {
            for (k, b) in buffers.iter().enumerate() {
                let (queue, values) = (&queue, &values);
                scope.spawn(move || {
                    let shifted: Vec<f64> = values.iter().map(|v| v + k as f64).collect();
                    write_buffer(queue, b, 0, &shifted).unwrap();
                    let mut got = vec![0.0f64; n];
                    read_buffer(queue, b, 0, &mut got).unwrap();
                    assert!(got == shifted, "thread {k}");
                });
            }
        });
    }

    #[test]
    fn a_command_enqueued_while_buffers_are_mapped_is_refused_not_run() {
        let (queue, context) = setup();
        let [mapped, other] = [(); 2].map(|()| create_buffer(&context, 16).unwrap());
        let out = Region { buffer: &mapped, lo: 0, hi: 4 };
        let (inside, _) =
            with_mapped::<f32, f32, _>(&queue, &[], &out, |_, _| write_buffer(&queue, &other, 0, &[1.0f32]).map(drop))
                .unwrap();
        assert_eq!(inside.map_err(|e| e.0), Err(CL_INVALID_OPERATION));
        // Once unmapped, the queue takes commands again.
        write_buffer(&queue, &other, 0, &[1.0f32]).unwrap();
    }

    #[test]
    fn a_host_command_that_panics_leaves_the_queue_usable() {
        let (queue, context) = setup();
        let buffer = create_buffer(&context, 16).unwrap();
        let out = Region { buffer: &buffer, lo: 0, hi: 4 };
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            with_mapped::<f32, f32, ()>(&queue, &[], &out, |_, _| panic!("a host command that fails"))
        }));
        assert!(unwound.is_err());
        // The mapping was undone and the lock released: the buffer takes a write and reads it back.
        write_buffer(&queue, &buffer, 0, &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
        let mut back = [0.0f32; 4];
        read_buffer(&queue, &buffer, 0, &mut back).unwrap();
        assert_eq!(back, [1.0, 2.0, 3.0, 4.0]);
    }
}
