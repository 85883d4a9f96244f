//! Kernel launches on arrays ([`Launch`]): arguments in order, each named as the kernel declares it (compared
//! with the kernel's own names in debug builds), the arrays a kernel reads and writes, sizes, and the enqueue
//! through the command bookkeeping of `command.rs`.

use super::command::TrackedCommand;
use super::storage::Storage;
use super::xdata::XData;
use crate::app::{Kernel, ffi};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernel_args::{IndexType, KernelScalar};
use opencl3::error_codes::ClError;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Launches enqueued whose argument names and count were compared with the kernel's (debug builds), so tests can
/// tell the check ran rather than trust that it did.
static CHECKED_LAUNCHES: AtomicU64 = AtomicU64::new(0);

/// How many launches so far had every argument name and the argument count compared with the kernel's own
/// (`clGetKernelArgInfo`) before they were enqueued: all of them in debug builds, none in release builds.
///
/// ```
/// # let app = cliper::ClApp::new()?;
/// let before = cliper::checked_launches();
/// let x = cliper::XData::<f32>::zeros(&app, &[4])?;
/// let mut k = app.build_program("one", "kernel void one(global float* y) { y[get_global_id(0)] = 1.0f; }", "")?
///     .kernel("one")?;
/// k.launch().output("y", &x).global(&[4]).enqueue()?;
/// assert_eq!(cliper::checked_launches() > before, cfg!(debug_assertions));
/// # Ok::<(), cliper::Error>(())
/// ```
pub fn checked_launches() -> u64 {
    CHECKED_LAUNCHES.load(Ordering::Relaxed)
}

impl Kernel {
    /// Starts a launch: set arguments in order (each with its name in the kernel), sizes, then
    /// [`Launch::enqueue`].
    pub fn launch(&mut self) -> Launch<'_> {
        Launch::new(self)
    }
}

/// One kernel launch being set up: arguments in order, then sizes, then [`Launch::enqueue`].
///
/// Every argument carries the name of the kernel parameter it sets. In debug builds (every `cargo test`) each name
/// is compared with the parameter the kernel declares at that position, and the count of arguments with the
/// kernel's, so a reordering of a kernel's parameters or of the calls is an error, not a wrong number
/// ([`checked_launches`] counts the launches checked). Release builds skip the comparison.
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
/// k.launch()
///     .input("x", &x)
///     .in_out("y", &y)
///     .scalar("a", 2.0f32)
///     .index("n", IndexType::U32, 5)
///     .global(&[64])
///     .local(&[32])
///     .work(60, 10)
///     .enqueue()?;
/// assert_eq!(y.to_vec()?, vec![2.0, 4.0, 6.0, 8.0, 10.0]);
/// // In debug builds, arguments in another order than the kernel's are refused by name:
/// let swapped = k.launch().in_out("y", &y).input("x", &x).scalar("a", 2.0f32).index("n", IndexType::U32, 5);
/// let err = swapped.global(&[64]).enqueue();
/// assert_eq!(err.is_err(), cfg!(debug_assertions));
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
    fn new(kernel: &'k mut Kernel) -> Self {
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
        name: &str,
        what: &str,
        f: impl FnOnce(&opencl3::kernel::Kernel, u32) -> std::result::Result<(), ClError>,
    ) -> Self {
        let index = self.next_arg;
        self.next_arg += 1;
        if self.error.is_none() {
            self.error = self.name_mismatch(index, name);
        }
        if self.error.is_none()
            && let Err(e) = f(&self.kernel.kernel, index)
        {
            self.error = Some(Error::cl(
                e.0,
                format!("setting argument {index} `{name}` ({what}) of kernel `{}`", self.kernel.name),
            ));
        }
        self
    }

    /// The error when the kernel declares another name than `given` at `index` (or fewer parameters); `None` when
    /// they agree or names are not checked.
    fn name_mismatch(&self, index: u32, given: &str) -> Option<Error> {
        let declared = self.kernel.arg_names.as_ref()?;
        let kernel = &self.kernel.name;
        match declared.get(index as usize) {
            Some(d) if d == given => None,
            Some(d) => Some(Error::invalid(
                &self.kernel.owner,
                format!("kernel `{kernel}` argument {index} is given as `{given}` but the kernel declares `{d}`"),
            )),
            None => Some(Error::invalid(
                &self.kernel.owner,
                format!(
                    "kernel `{kernel}` argument {index} is given as `{given}` but the kernel declares only {} \
                     arguments",
                    declared.len()
                ),
            )),
        }
    }

    /// The error when fewer arguments were set than the kernel declares; `None` when names are not checked.
    fn count_mismatch(&self) -> Option<Error> {
        let declared = self.kernel.arg_names.as_ref()?;
        (declared.len() != self.next_arg as usize).then(|| {
            let missing = declared.get(self.next_arg as usize).map(String::as_str).unwrap_or_default();
            Error::invalid(
                &self.kernel.owner,
                format!(
                    "kernel `{}` declares {} arguments but the launch sets {} (the next one is `{missing}`)",
                    self.kernel.name,
                    declared.len(),
                    self.next_arg
                ),
            )
        })
    }

    fn buffer_arg<T: Element>(mut self, name: &str, x: &XData<T>, read: bool, write: bool) -> Self {
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
        self.set(name, "buffer", |k, i| ffi::set_arg_buffer(k, i, storage.buffer()))
    }

    /// Next argument, kernel parameter `name`: the buffer of an array the kernel reads. Pass its offset and
    /// strides separately.
    pub fn input<T: Element>(self, name: &str, x: &XData<T>) -> Self {
        self.buffer_arg(name, x, true, false)
    }

    /// Next argument, kernel parameter `name`: the buffer of an array the kernel writes (and does not read).
    pub fn output<T: Element>(self, name: &str, x: &XData<T>) -> Self {
        self.buffer_arg(name, x, false, true)
    }

    /// Next argument, kernel parameter `name`: the buffer of an array the kernel reads and writes.
    pub fn in_out<T: Element>(self, name: &str, x: &XData<T>) -> Self {
        self.buffer_arg(name, x, true, true)
    }

    /// Next argument, kernel parameter `name`: a value (`u32`, `u64`, `f32`, `Complex<f64>`, `[u64; 8]` for a
    /// `ulong8`, …).
    pub fn scalar<S: KernelScalar>(self, name: &str, value: S) -> Self {
        let bytes = value.to_arg_bytes();
        self.set(name, "scalar", |k, i| ffi::set_arg_bytes(k, i, &bytes))
    }

    /// Next argument, kernel parameter `name`: an index value in the kernel's index type (`uint` or `ulong`).
    pub fn index(self, name: &str, ty: IndexType, value: u64) -> Self {
        match ty {
            // Callers pick U32 from `IndexType::for_extent`, so every index they pass fits.
            IndexType::U32 => self.scalar(name, value as u32),
            IndexType::U64 => self.scalar(name, value),
        }
    }

    /// Next argument, kernel parameter `name`: `bytes` bytes of work-group local memory.
    pub fn local_memory(self, name: &str, bytes: usize) -> Self {
        self.set(name, "local memory", |k, i| ffi::set_arg_local(k, i, bytes))
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
        let count_error = if self.error.is_none() { self.count_mismatch() } else { None };
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
        let checked = kernel.arg_names.is_some();
        if let Some(e) = self.error.or(count_error).or_else(|| shape_error.map(|s| Error::invalid(&kernel.owner, s))) {
            return Err(command.fail(e));
        }
        if checked {
            CHECKED_LAUNCHES.fetch_add(1, Ordering::Relaxed);
        }
        if self.global.contains(&0) {
            return command.check_inputs();
        }
        let (queue, global, local) = (kernel.app.queue(), &self.global, self.local.as_deref());
        command.submit_lazy(|want_event| ffi::enqueue_kernel(queue, &kernel.kernel, global, local, want_event))
    }
}
