//! Enqueueing device commands with the bookkeeping every command needs: arguments, the arrays it reads and
//! writes (so a failure marks its outputs and a read of them reports it), and profiling records.

use super::{ClApp, Kernel, ffi};
use crate::data::{Element, Storage, XData};
use crate::error::{Error, Result};
use num_complex::Complex;
use opencl3::error_codes::ClError;
use opencl3::event::Event;
use std::cell::RefCell;
use std::sync::Arc;

/// The integer type a kernel uses for indices, chosen per launch from the extent it must address: 32-bit
/// arithmetic is markedly cheaper on GPUs, 64-bit is needed past 2³¹ elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexType {
    /// `uint`.
    U32,
    /// `ulong`.
    U64,
}

impl IndexType {
    /// `U32` when every index below `max_extent` (elements, with strides applied) fits in an `i32`.
    ///
    /// ```
    /// use cliper::IndexType;
    /// assert_eq!(IndexType::for_extent(1 << 20), IndexType::U32);
    /// assert_eq!(IndexType::for_extent(1 << 31), IndexType::U64);
    /// ```
    pub fn for_extent(max_extent: u64) -> IndexType {
        if max_extent < (1u64 << 31) { IndexType::U32 } else { IndexType::U64 }
    }

    /// The OpenCL C type (`uint`, `ulong`), for a `-DIDX=` build option.
    pub fn cl_type(self) -> &'static str {
        match self {
            IndexType::U32 => "uint",
            IndexType::U64 => "ulong",
        }
    }
}

mod sealed {
    pub trait Sealed {}
}

/// Values that can be passed by value to a kernel: integers, floats, complex numbers, `[u64; 8]` for an
/// OpenCL `ulong8` (how cliper passes up to eight extents or strides in one argument), and `[i32; 4]` /
/// `[i32; 16]` for `int4` / `int16`.
///
/// ```
/// use cliper::KernelScalar;
/// assert_eq!(7u32.to_arg_bytes().len(), 4);
/// assert_eq!(num_complex::Complex64::new(1.0, 2.0).to_arg_bytes().len(), 16);
/// assert_eq!([0u64; 8].to_arg_bytes().len(), 64); // a ulong8
/// ```
pub trait KernelScalar: sealed::Sealed {
    /// The bytes OpenCL expects for this argument.
    fn to_arg_bytes(&self) -> Vec<u8>;
}

macro_rules! scalar {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl KernelScalar for $t {
            fn to_arg_bytes(&self) -> Vec<u8> { self.to_ne_bytes().to_vec() }
        }
    )*};
}
scalar!(u32, i32, u64, i64, f32, f64);

impl<F: KernelScalar + Copy> sealed::Sealed for Complex<F> {}
impl<F: KernelScalar + Copy> KernelScalar for Complex<F> {
    fn to_arg_bytes(&self) -> Vec<u8> {
        let mut b = self.re.to_arg_bytes();
        b.extend(self.im.to_arg_bytes());
        b
    }
}

// OpenCL vectors of integers: ulong8 for extents and strides, int4/int16 for small signed geometry.
macro_rules! vector {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl KernelScalar for $t {
            fn to_arg_bytes(&self) -> Vec<u8> { self.iter().flat_map(|v| v.to_ne_bytes()).collect() }
        }
    )*};
}
vector!([u64; 8], [i32; 4], [i32; 16]);

/// One kernel launch being set up: arguments in order, then sizes, then [`Launch::enqueue`].
///
/// Errors while setting arguments are kept and reported by `enqueue`, so a launch reads as one chain.
/// Declaring arrays with [`Launch::input`] / [`Launch::output`] / [`Launch::in_out`] lets cliper refuse to
/// read from an array whose producer failed, and mark outputs invalid when this launch fails.
///
/// ```
/// use cliper::{ClApp, IndexType, XData};
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[5], &[1.0f32, 2.0, 3.0, 4.0, 5.0])?;
/// let y = XData::<f32>::zeros(&app, &[5])?;
/// let src = "kernel void axpy(global const float* x, global float* y, float a, uint n) {
///     uint i = get_global_id(0); if (i < n) y[i] += a * x[i]; }";
/// let mut k = app.build_program("axpy", src, "")?.kernel("axpy")?;
/// k.launch().input(&x).in_out(&y).scalar(2.0f32).index(IndexType::U32, 5).global(&[64]).local(&[32]).work(60, 10).enqueue()?;
/// assert_eq!(y.to_vec()?, vec![2.0, 4.0, 6.0, 8.0, 10.0]);
/// # Ok::<(), cliper::Error>(())
/// ```
#[must_use = "a launch does nothing until `enqueue` is called"]
pub struct Launch<'k> {
    kernel: &'k mut Kernel,
    next_arg: u32,
    global: Vec<usize>,
    local: Option<Vec<usize>>,
    reads: Vec<Arc<Storage>>,
    writes: Vec<Arc<Storage>>,
    bytes: Option<u64>,
    flops: Option<u64>,
    error: Option<Error>,
}

impl<'k> Launch<'k> {
    pub(super) fn new(kernel: &'k mut Kernel) -> Self {
        Launch {
            kernel,
            next_arg: 0,
            global: Vec::new(),
            local: None,
            reads: Vec::new(),
            writes: Vec::new(),
            bytes: None,
            flops: None,
            error: None,
        }
    }

    fn set(
        mut self,
        what: &str,
        f: impl FnOnce(&opencl3::kernel::Kernel, u32) -> std::result::Result<(), ClError>,
    ) -> Self {
        let index = self.next_arg;
        self.next_arg += 1;
        if self.error.is_none()
            && let Err(e) = f(&self.kernel.kernel, index)
        {
            self.error =
                Some(Error::cl(e.0, format!("setting argument {index} ({what}) of kernel `{}`", self.kernel.name)));
        }
        self
    }

    fn buffer_arg<T: Element>(mut self, x: &XData<T>, read: bool, write: bool) -> Self {
        if self.error.is_none() && !x.app().same_as(&self.kernel.app) {
            self.error = Some(Error::invalid(
                &self.kernel.owner,
                format!("an array passed to kernel `{}` belongs to another ClApp", self.kernel.name),
            ));
        }
        let storage = x.storage().clone();
        if read {
            self.reads.push(storage.clone());
        }
        if write {
            self.writes.push(storage.clone());
        }
        self.set("buffer", |k, i| ffi::set_arg_buffer(k, i, storage.buffer()))
    }

    /// Next argument: the buffer of an array the kernel reads. Pass its offset and strides separately.
    pub fn input<T: Element>(self, x: &XData<T>) -> Self {
        self.buffer_arg(x, true, false)
    }

    /// Next argument: the buffer of an array the kernel writes (and does not read).
    pub fn output<T: Element>(self, x: &XData<T>) -> Self {
        self.buffer_arg(x, false, true)
    }

    /// Next argument: the buffer of an array the kernel reads and writes.
    pub fn in_out<T: Element>(self, x: &XData<T>) -> Self {
        self.buffer_arg(x, true, true)
    }

    /// Next argument: a value (`u32`, `u64`, `f32`, `Complex<f64>`, `[u64; 8]` for a `ulong8`, …).
    pub fn scalar<S: KernelScalar>(self, value: S) -> Self {
        let bytes = value.to_arg_bytes();
        self.set("scalar", |k, i| ffi::set_arg_bytes(k, i, &bytes))
    }

    /// Next argument: an index value in the kernel's index type (`uint` or `ulong`).
    pub fn index(self, ty: IndexType, value: u64) -> Self {
        match ty {
            // Callers pick U32 from `IndexType::for_extent`, so every index they pass fits.
            IndexType::U32 => self.scalar(value as u32),
            IndexType::U64 => self.scalar(value),
        }
    }

    /// Next argument: `bytes` bytes of work-group local memory.
    pub fn local_memory(self, bytes: usize) -> Self {
        self.set("local memory", |k, i| ffi::set_arg_local(k, i, bytes))
    }

    /// The global work size (1 to 3 dimensions). A zero anywhere makes the launch a no-op.
    pub fn global(mut self, sizes: &[usize]) -> Self {
        self.global = sizes.to_vec();
        self
    }

    /// The work-group size (same number of dimensions as the global size, dividing it).
    pub fn local(mut self, sizes: &[usize]) -> Self {
        self.local = Some(sizes.to_vec());
        self
    }

    /// The bytes this launch moves and the floating-point operations it does, for GB/s and GFLOP/s in
    /// profiles.
    pub fn work(mut self, bytes: u64, flops: u64) -> Self {
        self.bytes = Some(bytes);
        self.flops = Some(flops);
        self
    }

    /// Enqueues the kernel. Returns without waiting for it; errors of argument setting, of inputs whose
    /// producer failed, or of the enqueue itself are returned here and mark the outputs invalid.
    pub fn enqueue(self) -> Result<()> {
        let kernel = self.kernel;
        let dims = self.global.len();
        let shape_error = if !(1..=3).contains(&dims) {
            Some(format!("global size {:?} must have 1 to 3 dimensions", self.global))
        } else if self.local.as_ref().is_some_and(|l| l.len() != dims) {
            Some(format!("local size {:?} does not match global size {:?}", self.local, self.global))
        } else {
            None
        };
        let command = TrackedCommand {
            app: &kernel.app,
            owner: &kernel.owner,
            command: &kernel.name,
            global: self.global.clone(),
            local: self.local.clone(),
            reads: &self.reads,
            writes: &self.writes,
            bytes: self.bytes,
            flops: self.flops,
        };
        if let Some(e) = self.error.or_else(|| shape_error.map(|s| Error::invalid(&kernel.owner, s))) {
            return Err(command.fail(e));
        }
        if self.global.contains(&0) {
            return command.check_inputs();
        }
        let (queue, global, local) = (kernel.app.queue(), &self.global, self.local.as_deref());
        command.submit(|| ffi::enqueue_kernel(queue, &kernel.kernel, global, local))
    }
}

/// A device command with its bookkeeping, for kernels ([`Launch`]) and buffer copies alike.
pub(crate) struct TrackedCommand<'a> {
    pub app: &'a ClApp,
    pub owner: &'a str,
    pub command: &'a str,
    pub global: Vec<usize>,
    pub local: Option<Vec<usize>>,
    pub reads: &'a [Arc<Storage>],
    pub writes: &'a [Arc<Storage>],
    pub bytes: Option<u64>,
    pub flops: Option<u64>,
}

impl TrackedCommand<'_> {
    fn producer(&self) -> String {
        if self.owner == self.command {
            self.owner.to_string()
        } else {
            format!("{} (kernel {})", self.owner, self.command)
        }
    }

    /// Marks every output invalid, naming this command as the producer that failed with `cause`.
    fn poison_outputs(&self, producer: &str, cause: &Arc<Error>) {
        for w in self.writes {
            w.poison(producer, cause.clone());
        }
    }

    /// Marks every output invalid with `error` and returns it.
    pub(crate) fn fail(&self, error: Error) -> Error {
        self.poison_outputs(&self.producer(), &Arc::new(error.clone()));
        error
    }

    /// `Err` when an input's producer failed; the outputs are then marked invalid in turn.
    pub(crate) fn check_inputs(&self) -> Result<()> {
        for r in self.reads {
            if let Err(e) = r.check() {
                let (producer, cause) = (self.producer(), Arc::new(e));
                self.poison_outputs(&producer, &cause);
                return Err(Error::ProducerFailed { producer, cause });
            }
        }
        Ok(())
    }

    /// Runs `enqueue` unless an input is invalid, then records the event on the outputs and in the profile.
    pub(crate) fn submit(self, enqueue: impl FnOnce() -> std::result::Result<Event, ClError>) -> Result<()> {
        self.check_inputs()?;
        match enqueue() {
            Ok(event) => {
                let event = Arc::new(event);
                let producer = self.producer();
                for w in self.writes {
                    w.record_write(event.clone(), &producer);
                }
                if self.app.profiling() {
                    record(LaunchRecord {
                        process: self.owner.to_string(),
                        kernel: self.command.to_string(),
                        global: self.global,
                        local: self.local,
                        event,
                        bytes: self.bytes,
                        flops: self.flops,
                    });
                }
                Ok(())
            }
            Err(e) => {
                let during = format!(
                    "enqueueing `{}` of {} (global {:?}, local {:?})",
                    self.command, self.owner, self.global, self.local
                );
                Err(self.fail(Error::cl(e.0, during)))
            }
        }
    }
}

/// One enqueued command, as a profile sees it.
pub(crate) struct LaunchRecord {
    pub process: String,
    pub kernel: String,
    pub global: Vec<usize>,
    pub local: Option<Vec<usize>>,
    pub event: Arc<Event>,
    pub bytes: Option<u64>,
    pub flops: Option<u64>,
}

thread_local! {
    static RECORDING: RefCell<Option<Vec<LaunchRecord>>> = const { RefCell::new(None) };
}

fn record(rec: LaunchRecord) {
    RECORDING.with(|r| {
        if let Some(log) = r.borrow_mut().as_mut() {
            log.push(rec);
        }
    });
}

/// Collects the commands this thread enqueues while it lives (profiling queues only). Dropping it without
/// `finish` restores whatever recording was active before.
pub(crate) struct Recorder {
    /// `Some` until finished: the recording that was active when this one started.
    previous: Option<Option<Vec<LaunchRecord>>>,
}

impl Recorder {
    pub(crate) fn start() -> Recorder {
        Recorder { previous: Some(RECORDING.with(|r| r.borrow_mut().replace(Vec::new()))) }
    }

    pub(crate) fn finish(mut self) -> Vec<LaunchRecord> {
        let previous = self.previous.take().unwrap_or(None);
        RECORDING.with(|r| std::mem::replace(&mut *r.borrow_mut(), previous)).unwrap_or_default()
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        if let Some(previous) = self.previous.take() {
            RECORDING.with(|r| *r.borrow_mut() = previous);
        }
    }
}
